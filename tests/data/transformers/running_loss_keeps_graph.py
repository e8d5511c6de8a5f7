# runtime: `total` keeps every iteration's graph (total.grad_fn is not None after the loop); verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
from transformers import GPT2Config, GPT2LMHeadModel


model = GPT2LMHeadModel(GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 5)
total = 0.0
for step in range(10):
    ids = torch.randint(0, 100, (2, 16))
    outputs = model(input_ids=ids, labels=ids)
    optimizer.zero_grad()
    outputs.loss.backward()
    optimizer.step()
    scheduler.step()
    total += outputs.loss  # <- GA303
print(total / 10)
