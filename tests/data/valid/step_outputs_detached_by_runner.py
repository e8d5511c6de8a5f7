# runtime: trains
"""The twin of bugs/step_outputs_kept_by_runner.py: the runner replaces the backpropagated 'loss'
with its detached value before keeping the step's dict, so no graph outlives its step."""
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
        output["loss"] = output["loss"].detach()
        outputs.append(output)
    return outputs


torch.manual_seed(0)
module = globals()["Regressor"]()
optimizer = torch.optim.SGD(module.parameters(), lr=0.05)
loader = [(torch.randn(8, 5), torch.randn(8, 1)) for _ in range(4)]
history = run_epoch(module, optimizer, loader)
print(module.epoch_end(history))
