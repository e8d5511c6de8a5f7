# runtime: graph-kept: history
# confidence: suspicious
"""An epoch runner in the style of Lightning-like wrappers: the module's `training_step` returns a
dict whose 'loss' is backpropagated, and the runner keeps every step's dict for the epoch-end hook.
The module is picked by name at run time, so nothing about it is visible here but its use: the
backpropagated 'loss' still has its graph when the dict is appended, so every step's graph stays
alive until the epoch ends."""
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))

    def training_step(self, batch):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        return {"loss": loss, "size": len(x)}

    def epoch_end(self, outputs):
        return sum(o["loss"].item() * o["size"] for o in outputs) / sum(o["size"] for o in outputs)


def run_epoch(module, optimizer, loader):
    outputs = []
    for batch in loader:
        optimizer.zero_grad()
        output = module.training_step(batch)
        output["loss"].backward()
        optimizer.step()
        outputs.append(output)  # <- GA303
    return outputs


torch.manual_seed(0)
module = globals()["Regressor"]()
optimizer = torch.optim.SGD(module.parameters(), lr=0.05)
loader = [(torch.randn(8, 5), torch.randn(8, 1)) for _ in range(4)]
history = run_epoch(module, optimizer, loader)
print(module.epoch_end(history))
