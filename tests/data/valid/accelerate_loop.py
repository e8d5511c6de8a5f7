# runtime: skip (needs accelerate)
"""A Hugging Face accelerate loop: prepare(), accelerator.backward(), accumulate()."""
import torch
import torch.nn as nn
from accelerate import Accelerator

accelerator = Accelerator(gradient_accumulation_steps=4)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=10)
data = torch.utils.data.TensorDataset(torch.randn(64, 10), torch.randint(0, 2, (64,)))
loader = torch.utils.data.DataLoader(data, batch_size=8)
model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
for epoch in range(2):
    model.train()
    for x, y in loader:
        with accelerator.accumulate(model):
            loss = nn.functional.cross_entropy(model(x), y)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
