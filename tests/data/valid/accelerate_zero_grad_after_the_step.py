# runtime: skip (needs accelerate)
"""As bugs/accelerate_zero_grad_at_the_top_of_accumulate.py, with the clear after the step, as
accelerate's documentation writes it: on the synced micro-batch the step applies the accumulated
gradients, then they are cleared."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator

torch.manual_seed(0)
accelerator = Accelerator(gradient_accumulation_steps=4)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, optimizer = accelerator.prepare(model, optimizer)
for i in range(16):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    with accelerator.accumulate(model):
        loss = F.cross_entropy(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
