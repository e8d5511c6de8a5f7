# runtime: graph-kept: learner.running_loss
"""A learner (after TorchFusion) that keeps the epoch's running loss in a tensor attribute made with
`torch.Tensor([0.0])` and sums each step's loss into it in place, with `.add_()` and `+=`: the tensor
takes the loss's autograd history, so every step's graph stays alive until the epoch ends."""
import torch
import torch.nn as nn


class Learner:
    def __init__(self, model, loss_fn, optimizer):
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer

    def train(self, loader, epochs=2):
        for _ in range(epochs):
            self.running_loss = torch.Tensor([0.0])
            self.running_error = torch.zeros(1)
            for x, y in loader:
                self.train_step(x, y)
            print(self.running_loss.item(), self.running_error.item())

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        out = self.model(x)
        loss = self.loss_fn(out, y)
        loss.backward()
        self.optimizer.step()
        self.running_loss.add_(loss * x.size(0))  # <- GA303
        self.running_error += (out - y).abs().sum()  # <- GA303


torch.manual_seed(0)
model = nn.Linear(4, 1)
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(5)]
learner = Learner(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.01))
learner.train(data)
