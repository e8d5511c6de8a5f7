# runtime: trains
"""The valid look-alike of running_loss_tensor_summed_in_place: the running sums take the detached
loss and error, so the tensors they are kept in hold no graph."""
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
        self.running_loss.add_(loss.detach() * x.size(0))
        self.running_error += (out.detach() - y).abs().sum()


torch.manual_seed(0)
model = nn.Linear(4, 1)
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(5)]
learner = Learner(model, nn.MSELoss(), torch.optim.SGD(model.parameters(), lr=0.01))
learner.train(data)
