# runtime: no-update: model
"""A training step made by a factory (`train_step = make_train_step(model, loss_fn, optimizer)`),
the style of many tutorials, called by a loop in a function that a launcher starts by name (nothing
in the file calls it as written). The step clears the gradients after backward() and before
step(): every step applies zero gradients and the model never changes."""
import torch
import torch.nn as nn


def make_train_step(model, loss_fn, optimizer):
    def train_step(x, y):
        model.train()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.zero_grad()  # <- GA202
        optimizer.step()
        return loss.item()

    return train_step


model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))


def train(epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step = make_train_step(model, nn.MSELoss(), optimizer)
    for epoch in range(epochs):
        x, y = torch.randn(16, 3), torch.randn(16, 1)
        train_step(x, y)


torch.manual_seed(0)
globals()["train"](3)  # started by name, as a launcher would
