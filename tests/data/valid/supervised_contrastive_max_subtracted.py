# runtime: trains
"""A supervised contrastive loss as SupContrast writes it: the row maximum, taken with
`logits_max, _ = torch.max(...)` and detached, is subtracted before exp, so every exp is at most
1 and the log of their sum cannot overflow; and wavenet_vocoder's `log_sum_exp`, which subtracts
`m2, _ = torch.max(x, dim, keepdim=True)`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def log_sum_exp(x):
    axis = len(x.size()) - 1
    m, _ = torch.max(x, dim=axis)
    m2, _ = torch.max(x, dim=axis, keepdim=True)
    return m + torch.log(torch.sum(torch.exp(x - m2), dim=axis))


class SupConLoss(nn.Module):
    def __init__(self, temperature=0.07):
        super().__init__()
        self.temperature = temperature

    def forward(self, features, labels):
        mask = torch.eq(labels[:, None], labels[None, :]).float()
        anchor_dot_contrast = features @ features.T / self.temperature
        logits_max, _ = torch.max(anchor_dot_contrast, dim=1, keepdim=True)
        logits = anchor_dot_contrast - logits_max.detach()
        logits_mask = 1.0 - torch.eye(len(labels))
        mask = mask * logits_mask
        exp_logits = torch.exp(logits) * logits_mask
        log_prob = logits - torch.log(exp_logits.sum(1, keepdim=True))
        return -((mask * log_prob).sum(1) / mask.sum(1).clamp_min(1.0)).mean()


torch.manual_seed(0)
encoder, head = nn.Linear(8, 16), nn.Linear(16, 4)
criterion = SupConLoss()
optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
for step in range(3):
    x, labels = 100 * torch.randn(32, 8), torch.randint(0, 4, (32,))
    features = F.normalize(encoder(x), dim=1)
    loss = criterion(features, labels) - log_sum_exp(head(features)).mean() * 0.01
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
