# runtime: nonfinite
# confidence: suspicious
"""After imitation's preference comparisons: the probability that one trajectory fragment is
preferred is written by hand as 1 / (1 + exp(d)) of the difference of the fragments' summed
rewards. Summed over 50 steps the difference passes 88, the exp overflows to inf, and the gradient
of the quotient is inf / inf = NaN. Checked with torch 2.13 (CPU): NaN in the reward net's
gradients at the first backward(); valid/stable_sigmoid_preference.py uses
binary_cross_entropy_with_logits on -d and stays finite."""
import torch
import torch.nn as nn

torch.manual_seed(0)
reward_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(reward_net.parameters(), lr=1e-3)
for it in range(3):
    frag1, frag2 = torch.randn(50, 4) * 30, torch.randn(40, 4) * 30
    pref = torch.tensor([1.0])
    returns_diff = reward_net(frag2).sum() - reward_net(frag1).sum()
    p = 1 / (1 + returns_diff.exp())  # <- GA404
    loss = nn.functional.binary_cross_entropy(p.reshape(1), pref)
    opt.zero_grad()
    loss.backward()
    opt.step()
