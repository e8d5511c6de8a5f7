# runtime: trains
"""The valid form of bugs/amp_scaler_serves_another_step.py: the step that does not go through the
scaler runs under bfloat16 autocast, whose range needs no loss scaling (checked with torch 2.13:
the first layer's gradients are nonzero)."""
import torch
import torch.nn as nn

device = "cpu"


class CentralValue:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 1)).to(device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.scaler = torch.amp.GradScaler(device)

    def calc_gradients(self, x, y):
        loss = 1e-4 * (self.model(x) - y).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def train_on_batch(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast(device, dtype=torch.float16):
            loss = (self.model(x) - y).pow(2).mean()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def train_net(self, batches):
        for x, y in batches:
            with torch.autocast(device, dtype=torch.bfloat16):
                self.calc_gradients(x, y)


torch.manual_seed(0)
cv = CentralValue()
cv.train_net([(torch.randn(256, 16, device=device) * 1e-3, torch.randn(256, 1, device=device)) for _ in range(2)])
