# runtime: trains
"""Semi-supervised training with pseudo-labels: the labels for unlabelled data come from argmax of
the model's own confident predictions under no_grad, and the loss on them trains the model through
the strongly augmented view."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
for step in range(4):
    x_l, y_l = torch.randn(8, 8), torch.randint(0, 3, (8,))
    x_u = torch.randn(16, 8)
    with torch.no_grad():
        probs = torch.softmax(model(x_u + 0.01 * torch.randn_like(x_u)), dim=1)
        conf, pseudo = probs.max(dim=1)
        keep = (conf > 0.0).float()
    strong = x_u + 0.5 * torch.randn_like(x_u)
    unsup = (F.cross_entropy(model(strong), pseudo, reduction="none") * keep).mean()
    loss = F.cross_entropy(model(x_l), y_l) + unsup
    opt.zero_grad()
    loss.backward()
    opt.step()
