# runtime: trains
"""A trainer object that builds its model and updater in `init_train()`, after `__init__` left them
as None; the updater unscales the gradients before clipping them, then steps through the scaler."""
import torch
import torch.nn as nn


class Updater:
    def __init__(self, model, grad_clip):
        self.model = model
        self.grad_clip = grad_clip
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(self, grad_scaler=None):
        if grad_scaler is not None:
            grad_scaler.unscale_(self.optimizer)
        if self.grad_clip:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        if grad_scaler is not None:
            grad_scaler.step(self.optimizer)
            grad_scaler.update()
        else:
            self.optimizer.step()


class Engine:
    def __init__(self):
        self.model = None
        self._updater = None
        self._grad_scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)

    def init_train(self):
        self.model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        self._updater = Updater(self.model, grad_clip=1.0)

    def train_epoch(self, batches):
        for x, y in batches:
            self._updater.optimizer.zero_grad()
            loss = nn.functional.mse_loss(self.model(x), y)
            self._grad_scaler.scale(loss).backward()
            self._updater.step(grad_scaler=self._grad_scaler)



if __name__ == "__main__":
    # looked up by name: the driver lives in another module of the project, so the engine checks
    # the class on its own and runs `init_train()` because `train_epoch()` needs what it builds
    torch.manual_seed(0)
    engine = globals()["Engine"]()
    engine.init_train()
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    before = nn.functional.mse_loss(engine.model(x), y).item()
    engine.train_epoch([(x, y)] * 20)
    assert nn.functional.mse_loss(engine.model(x), y).item() < before
