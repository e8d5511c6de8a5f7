# reduction-of: yolov5@5081342f04fb train.py:344 GA206
# false: GA206
"""A whole training run in a function, called once per trial of a hyperparameter search.

The real code (YOLOv5 train.py): `train(hyp, opt, ...)` builds the model, the optimizer and
`scaler = torch.cuda.amp.GradScaler(enabled=amp)` before its epoch loop and steps through
`scaler.step(optimizer)`; with `--evolve`, `main()` calls `train()` once per generation in a loop.

False finding: GA206 confirmed at the GradScaler: "built anew in every iteration of the training loop:
its loss scale restarts from the initial value and never adapts". The loop around it is the search,
not training: each trial builds its own model and optimizer too, and its scaler adapts over that
trial's steps. (The engine already exempts optimizers and schedulers built with their parameters in
the iteration.)

Verified with torch 2.13 (CPU, float16 autocast with torch.amp.GradScaler("cpu")): each trial's scaler
steps and updates over eight steps, and each trial's model trains. Prints OK.
"""
import torch
import torch.nn as nn


def train(lr, steps=8):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=256.0)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    first = None
    for _ in range(steps):
        with torch.autocast("cpu", dtype=torch.float16):
            loss = nn.functional.mse_loss(model(x).float(), y)
        first = loss.item() if first is None else first
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return first, nn.functional.mse_loss(model(x), y).item()


for lr in (0.01, 0.05):
    start, end = train(lr)
    assert end < start, (lr, start, end)
print("OK")
