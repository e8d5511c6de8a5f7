"""A Hugging Face accelerate loop where accelerate is not installed in the environment read, and
`Accelerator(...)` is given settings the engine cannot see (`mixed_precision=args.precision` of a
`train(args)` nothing in the file calls):
`accelerator.backward(loss)` backpropagates the loss. The unknown accelerator was taken for a
tensor whose own backward() got the loss as its gradient argument, and the loss for one never
backpropagated (GA209, confirmed, false). Given a loss that carries gradient, `x.backward(loss)` of
an object not known as a tensor is a framework's backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator


def train(args):
    accelerator = Accelerator(mixed_precision=args.precision)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer = accelerator.prepare(model, optimizer)
    for _ in range(args.steps):
        x, target = torch.randn(4, 8), torch.randn(4, 8)
        loss = F.mse_loss(model(x), target)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
