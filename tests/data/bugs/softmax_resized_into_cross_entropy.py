# runtime: trains
"""A semantic-similarity model scores one positive and J negatives, takes their softmax and hands
the probabilities, reshaped with the deprecated `Tensor.resize`, to CrossEntropyLoss, which applies
log_softmax again: the gradients shrink as the scores separate."""
import torch
import torch.nn as nn

torch.manual_seed(0)
J = 4
scorer = nn.Linear(8, 1, bias=False)  # a bias shifts every score alike: softmax ignores it
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
for step in range(3):
    scores = scorer(torch.randn(J + 1, 8)).view(-1)
    probs = torch.softmax(scores, dim=0)
    loss = criterion(probs.resize(1, J + 1), torch.tensor([0]))  # <- GA407
    opt.zero_grad()
    loss.backward()
    opt.step()
