# runtime: no-update: model.attn.in_proj_weight
"""Parameter groups built the yolov5 way, by walking `named_modules()` and taking each module's `.weight`
and `.bias`: nn.MultiheadAttention keeps its input projection as `in_proj_weight` and `in_proj_bias`,
which no group picks, so the attention's input projection never trains (its output projection, a
Linear child, does)."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.BatchNorm2d(8))
        self.attn = nn.MultiheadAttention(8, 2)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        f = self.backbone(x).flatten(2).permute(2, 0, 1)
        f, _ = self.attn(f, f, f)
        return self.head(f.mean(0))


model = Net()
pg0, pg1, pg2 = [], [], []
for k, v in model.named_modules():
    if hasattr(v, "bias") and isinstance(v.bias, nn.Parameter):
        pg2.append(v.bias)
    if isinstance(v, nn.BatchNorm2d) or "bn" in k:
        pg0.append(v.weight)
    elif hasattr(v, "weight") and isinstance(v.weight, nn.Parameter):
        pg1.append(v.weight)
optimizer = torch.optim.SGD(pg0, lr=0.01, momentum=0.9)  # <- GA108
optimizer.add_param_group({"params": pg1, "weight_decay": 5e-4})
optimizer.add_param_group({"params": pg2})
for step in range(3):
    loss = model(torch.randn(2, 3, 8, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
