# runtime: trains
"""AMP with a GradScaler and gradient clipping: the clip runs on the scaled gradients (no
unscale_ first), so with a scale of 65536 every step is clipped to a tiny update."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def train_epoch(model, optimizer, scaler, loader, max_norm=1.0):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # <- GA208
        scaler.step(optimizer)
        scaler.update()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
loader = [(torch.randn(8, 10), torch.randint(0, 4, (8,))) for _ in range(3)]
for epoch in range(2):
    train_epoch(model, optimizer, scaler, loader)
