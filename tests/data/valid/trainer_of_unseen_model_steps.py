# runtime: trains
"""As bugs/trainer_of_unseen_model_never_steps.py, with nni's fix: each batch's backward() is
followed by the optimizer's step() and the gradients are cleared, so the model it was handed trains."""
import os

import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, optimizer_cls="SGD", optimizer_kwargs=None):
        self.model = model
        self._optimizer = getattr(torch.optim, optimizer_cls)(model.parameters(), **(optimizer_kwargs or {}))
        self._loss = nn.CrossEntropyLoss()

    def training_step(self, batch):
        x, y = batch
        return self._loss(self.model(x), y)

    def _train(self, loader):
        for batch in loader:
            self._optimizer.zero_grad()
            loss = self.training_step(batch)
            loss.backward()
            self._optimizer.step()

    def fit(self, loader, epochs):
        for _ in range(epochs):
            self._train(loader)


def run(layer, loader):
    trainer = Trainer(layer, "SGD", {"lr": 0.1})
    trainer.fit(loader, 3)


# `run` is an entry point a launcher calls by name (as nni calls its trainers): what it is given
# is not in this file
torch.manual_seed(0)
layer = nn.Linear(4, 3)
globals()[os.environ.get("ENTRY", "run")](layer, [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)])
