# runtime: graph-kept: running_loss
# confidence: suspicious
"""A label model's base class trains whatever forward its subclasses define, and sums the epoch's
loss as a tensor for logging (`running_loss += loss`): every batch's graph stays alive until the
epoch ends. The forward the engine sees is abstract, but backward() runs on the loss: it is a
tensor with a graph."""
import torch
import torch.nn as nn


class LabelModel(nn.Module):
    def forward(self, *inputs):
        raise NotImplementedError

    def estimate(self, batches, epochs=2):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        for epoch in range(epochs):
            running_loss = 0.0
            for inputs in batches:
                optimizer.zero_grad()
                loss = -1 * torch.mean(self(*inputs))
                loss.backward()
                optimizer.step()
                running_loss += loss  # <- GA303
            print(epoch, running_loss.item() / len(batches))
        self.running_loss = running_loss


if __name__ == "__main__":
    torch.manual_seed(0)
    Concrete = type(
        "Concrete",
        (LabelModel,),
        {"forward": lambda self, x: torch.log_softmax(self.w(x), dim=1).max(1)[0]},
    )
    model = Concrete()
    model.w = nn.Linear(3, 2)
    model.estimate([(torch.randn(4, 3),) for _ in range(3)])
    running_loss = model.running_loss
