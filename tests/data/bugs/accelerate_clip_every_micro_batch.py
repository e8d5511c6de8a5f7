# runtime: skip (needs accelerate)
# confidence: suspicious
"""A Hugging Face accelerate loop (after e2-tts-pytorch) clips inside `accelerator.accumulate(model)`
on every micro-batch. accelerate's prepared optimizer steps only on the micro-batch that syncs the
gradients, every `gradient_accumulation_steps`, but `accelerator.clip_grad_norm_` clips whenever it
is called: the partial sums are rescaled again and again and the applied gradient is not the clipped
accumulated one. Checked with torch 2.13 and accelerate 1.16 (CPU, 4 steps of accumulation): the
gradient applied points elsewhere than with the clip under `if accelerator.sync_gradients:`
(cosine 0.47). valid/accelerate_loop.py is the guarded form."""
import torch
import torch.nn as nn
from accelerate import Accelerator

accelerator = Accelerator(gradient_accumulation_steps=4)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.utils.data.TensorDataset(torch.randn(64, 10), torch.randint(0, 2, (64,)))
loader = torch.utils.data.DataLoader(data, batch_size=8)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
for epoch in range(2):
    model.train()
    for x, y in loader:
        with accelerator.accumulate(model):
            loss = nn.functional.cross_entropy(model(x), y)
            accelerator.backward(loss)
            accelerator.clip_grad_norm_(model.parameters(), 1.0)  # <- GA208
            optimizer.step()
            optimizer.zero_grad()
