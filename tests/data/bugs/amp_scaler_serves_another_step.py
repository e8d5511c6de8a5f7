# runtime: skip (checked by hand: float16 gradients underflow to 0)
# confidence: suspicious
"""After rl_games' central value critic: its GradScaler serves `train_on_batch`, but `train_net`
runs `calc_gradients` under float16 autocast, and that backward() is not scaled. With small
inputs and a small loss the float16 gradients underflow. Checked with torch 2.13 (CPU float16
autocast): every weight gradient of the first layer is exactly 0 in calc_gradients, none with
bfloat16 (valid/amp_bfloat16_for_the_unscaled_step.py)."""
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
            with torch.autocast(device, dtype=torch.float16):  # <- GA409
                self.calc_gradients(x, y)


torch.manual_seed(0)
cv = CentralValue()
cv.train_net([(torch.randn(256, 16, device=device) * 1e-3, torch.randn(256, 1, device=device)) for _ in range(2)])
