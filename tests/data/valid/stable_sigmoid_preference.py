# runtime: trains
"""The valid form of bugs/hand_written_sigmoid_preference.py: the preference probability stays
a logit, and binary_cross_entropy_with_logits computes the loss stably (checked with torch 2.13:
every gradient finite)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
reward_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.Adam(reward_net.parameters(), lr=1e-3)
for it in range(3):
    frag1, frag2 = torch.randn(50, 4) * 30, torch.randn(40, 4) * 30
    pref = torch.tensor([1.0])
    returns_diff = reward_net(frag2).sum() - reward_net(frag1).sum()
    loss = nn.functional.binary_cross_entropy_with_logits(-returns_diff.reshape(1), pref)
    opt.zero_grad()
    loss.backward()
    opt.step()
