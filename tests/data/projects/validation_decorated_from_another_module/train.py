# runtime: trains
"""A validation pass in val.py (after yolov5's) decorated with `@smart_inference_mode()` from
torch_utils.py, a project decorator that returns `torch.inference_mode()(fn)`: the losses it keeps
in a list that outlives the epochs were computed with grad off and hold no graph. val.py is imported
by this file, and the decorator's module by val.py (whose top level leaves imports alone)."""
import torch
import torch.nn as nn
import val

torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)]
history = []
for epoch in range(3):
    for x, y in data:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    print(float(val.run(model, data, history)))
