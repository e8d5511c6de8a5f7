# runtime: skip (needs accelerate)
"""A Hugging Face accelerate loop (after DiffSynth-Studio's runner before its fix) clears the
gradients at the top of `with accelerator.accumulate(model):`. accelerate's prepared optimizer
clears (and steps) only on the micro-batch that syncs: there the clear runs before that
micro-batch's backward and drops what the earlier micro-batches accumulated, so every step applies
the last micro-batch's gradient only (checked with torch 2.13 and accelerate 1.16: the synced
gradient differs from the accumulated one)."""
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
        optimizer.zero_grad()  # <- GA202
        loss = F.cross_entropy(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
