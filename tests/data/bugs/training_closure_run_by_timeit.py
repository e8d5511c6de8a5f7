# runtime: no-update: model
"""A supervised training loop written as a closure and handed to a function that runs it (after
MultiBench, which passes it to memory_profiler's `memory_usage(proc=trainprocess)`; here the
standard library's `timeit`): the loop computes the loss, clips and steps, but never calls
backward(), so the step applies no gradient and the model never changes."""
import timeit

import torch
import torch.nn as nn


class Wrapped(nn.Module):
    def __init__(self, encoder, head):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def forward(self, x):
        return self.head(self.encoder(x))


def train(encoder, head, loader, epochs, objective=nn.CrossEntropyLoss()):
    model = Wrapped(encoder, head)

    def trainprocess():
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(epochs):
            for x, y in loader:
                optimizer.zero_grad()
                loss = objective(model(x), y)  # <- GA209
                torch.nn.utils.clip_grad_norm_(model.parameters(), 8)
                optimizer.step()

    print("seconds:", timeit.timeit(trainprocess, number=1))
    return model


torch.manual_seed(0)
data = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]
train(nn.Linear(4, 8), nn.Linear(8, 2), data, 2)
