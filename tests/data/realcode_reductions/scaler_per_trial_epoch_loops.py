# reduction-of: yolov5@5081342f04fb train.py:344 GA206
# false: GA206
"""A whole training run in a function with its own epoch and batch loops, called once on its own and
once per generation of a hyperparameter search.

The real code (YOLOv5 train.py): `train()` builds the model, `smart_optimizer(...)` and
`scaler = torch.cuda.amp.GradScaler(enabled=amp)`, then loops over epochs and batches and steps
through `scaler.step(optimizer)`; `main()` calls it once, or with `--evolve` once per generation in
a loop. Seen only when the analysis reached the search loop.

False finding: GA206 confirmed at the GradScaler, "built anew in every iteration of the training
loop: its loss scale restarts from the initial value and never adapts". Every step of the scaler
runs in the batch loop inside the iteration that builds it, so within one run the scale adapts over
all of that run's steps; the loop around the construction is the search.

Verified with torch 2.13 (CPU, float16 autocast with torch.amp.GradScaler("cpu")): each run's
scaler steps and updates over eight steps in two epochs, and each run's model trains. Prints OK.
"""
import torch
import torch.nn as nn


def train(lr, epochs=2, steps=4):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu", init_scale=256.0)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    first = None
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        for i in range(steps):
            with torch.autocast("cpu", dtype=torch.float16):
                loss = nn.functional.mse_loss(model(x).float(), y)
            first = loss.item() if first is None else first
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    return first, nn.functional.mse_loss(model(x), y).item()


start, end = train(0.01)  # the plain run
assert end < start, (start, end)
for generation in range(2):  # the search: a fresh run per generation
    start, end = train(0.01 * (generation + 2))
    assert end < start, (generation, start, end)
print("OK")
