# reduction-of: Knowledge-Distillation-Zoo@65470c846c13 kd_losses/afd.py:43 GA402
# false: GA402
# quiet: GA402
"""Attention-based feature distillation: channel weights are sigmoids of an attention conv over the
teacher's pooled features, normalised by their sum over the channels
(`rho = rho / torch.sum(rho, dim=1, keepdim=True)`). (DivideMix's prior penalty divides by the
batch mean of softmax probabilities the same way.)

False finding: GA402 suspicious at the division: "a sum of non-negative values can be exactly 0".
Every sigmoid is > 0; their sum is 0 only if every channel's logit underflowed at once (below about
-100 in float32 for all of them). A sum or mean of probabilities or sigmoids (on every path) is now
taken as positive; a single probability or sigmoid as a divisor is still what can be 0.

Verified with torch 2.13 (CPU): with logits pushed to -30 the weights stay finite and sum to 1, and
the gradients are finite. Prints OK.
"""
import torch
import torch.nn as nn


class ChannelAttention(nn.Module):
    def __init__(self, channels, mid):
        super().__init__()
        self.attention = nn.Sequential(nn.Conv2d(channels, mid, 1), nn.ReLU(inplace=True), nn.Conv2d(mid, channels, 1))

    def forward(self, fm_s, fm_t, eps=1e-6):
        pooled = nn.functional.adaptive_avg_pool2d(fm_t, 1)
        rho = torch.sigmoid(self.attention(pooled).squeeze(-1).squeeze(-1))
        rho = rho / torch.sum(rho, dim=1, keepdim=True)
        fm_s = fm_s / (torch.norm(fm_s, dim=(2, 3), keepdim=True) + eps)
        fm_t = fm_t / (torch.norm(fm_t, dim=(2, 3), keepdim=True) + eps)
        return (rho * (fm_s - fm_t).pow(2).mean(dim=(2, 3))).sum(1).mean()


torch.manual_seed(0)
student = nn.Conv2d(3, 8, 3, padding=1)
teacher = nn.Conv2d(3, 8, 3, padding=1)
criterion = ChannelAttention(8, 4)
opt = torch.optim.SGD(list(student.parameters()) + list(criterion.parameters()), lr=0.1)
for _ in range(3):
    x = torch.randn(4, 3, 6, 6)
    with torch.no_grad():
        fm_t = teacher(x)
    loss = criterion(student(x), fm_t)
    opt.zero_grad()
    loss.backward()
    opt.step()

with torch.no_grad():
    criterion.attention[2].bias.fill_(-30.0)
    criterion.attention[2].weight.zero_()
x = torch.randn(4, 3, 6, 6)
loss = criterion(student(x), teacher(x).detach())
loss.backward()
assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in student.parameters())
print("OK")
