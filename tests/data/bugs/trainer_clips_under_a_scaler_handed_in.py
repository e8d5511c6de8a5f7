# runtime: trains
"""A trainer method handed its optimizer and its GradScaler: it clips the gradients of the scaled
loss without `scaler.unscale_(optimizer)` first, so the threshold applies to gradients 65536 times
too large, and once unscaled every step is that much smaller than the clip meant: training all but
stops. The script's own run hands both in, so the finding is proven; checked alone, the class is
judged on what the calls say its arguments are (tests/test_ducks.py)."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.model = model

    def train_one_epoch(self, loader, optimizer, criterion, scaler, grad_max_norm=1.0):
        self.model.train()
        for x, y in loader:
            loss = criterion(self.model(x), y)
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=grad_max_norm)  # <- GA208
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**16)
    data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(20)]
    Trainer(model).train_one_epoch(data, opt, nn.MSELoss(), scaler, grad_max_norm=1.0)
    print(model.weight)
