# runtime: stale-grads
# confidence: suspicious
"""A task class (after LAVIS' `BaseTask`): the runner of another module calls `train_epoch`, which
hands its optional scaler on to the shared inner loop; nothing in this file calls `train_epoch`,
so the scaler the inner loop gets may be given. With one, the AMP arm steps through the scaler
and never clears the gradients: every backward() adds to what the previous steps applied."""
import os

import torch
import torch.nn as nn


class BaseTask:
    def train_step(self, model, samples):
        x, y = samples
        return nn.functional.cross_entropy(model(x), y)

    def train_epoch(self, model, loader, optimizer, scaler=None):
        return self._train_inner_loop(model=model, loader=loader, optimizer=optimizer, scaler=scaler)

    def _train_inner_loop(self, model, loader, optimizer, scaler=None):
        use_amp = scaler is not None
        for samples in loader:
            with torch.autocast("cpu", enabled=use_amp):
                loss = self.train_step(model, samples)
            if use_amp:
                scaler.scale(loss).backward()
                scaler.step(optimizer)  # <- GA201
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]
    task = globals()[os.environ.get("PICKED", "BaseTask")]()  # the runner picks it by name
    task.train_epoch(model, loader, optimizer, scaler=torch.amp.GradScaler("cpu"))
