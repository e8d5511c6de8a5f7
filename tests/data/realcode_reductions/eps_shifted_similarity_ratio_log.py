# reduction-of: Knowledge-Distillation-Zoo@65470c846c13 kd_losses/pkt.py:43 GA401
# false: GA401
# quiet: GA401
"""Probabilistic knowledge transfer: cosine similarities of normalised features, rescaled to [0, 1]
and normalised per row into conditional probabilities, compared by a hand-written KL divergence
`t * log((t + eps) / (s + eps))`.

False finding: GA401 suspicious, "log of raw activations (a layer's unbounded output)". The log's
argument is a ratio of two eps-shifted similarity distributions, a value the code derived from two
tensors, not a layer's output: (cos + 1) / 2 is in [0, 1], so both sides are >= eps. Only a layer's
output as it is (views, means, scalings or shifts by a number of it: `-log(critic(x))`,
`log(critic(x) + eps)`) is "raw activations" now (Mark.RAW); a ratio of two tensors is not.

Verified with torch 2.13 (CPU): the log's argument is positive on random features and after 50
steps, and the gradients are finite. Prints OK.
"""
import torch
import torch.nn as nn


def pkt_loss(output_net, target_net, eps=0.0000001):
    output_net = output_net / (torch.sqrt(torch.sum(output_net**2, dim=1, keepdim=True)) + eps)
    target_net = target_net / (torch.sqrt(torch.sum(target_net**2, dim=1, keepdim=True)) + eps)
    model_similarity = torch.mm(output_net, output_net.transpose(0, 1))
    target_similarity = torch.mm(target_net, target_net.transpose(0, 1))
    model_similarity = (model_similarity + 1.0) / 2.0
    target_similarity = (target_similarity + 1.0) / 2.0
    model_similarity = model_similarity / torch.sum(model_similarity, dim=1, keepdim=True)
    target_similarity = target_similarity / torch.sum(target_similarity, dim=1, keepdim=True)
    ratio = (target_similarity + eps) / (model_similarity + eps)
    assert (ratio > 0).all()
    return torch.mean(target_similarity * torch.log(ratio))


torch.manual_seed(0)
student = nn.Linear(8, 4)
teacher = nn.Linear(8, 4)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
for _ in range(50):
    x = torch.randn(16, 8)
    with torch.no_grad():
        ft = teacher(x)
    loss = pkt_loss(student(x), ft)
    opt.zero_grad()
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in student.parameters())
    opt.step()
print("OK")
