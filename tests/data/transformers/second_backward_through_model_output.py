# runtime: the second backward() raises "Trying to backward through the graph a second time"; verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
from transformers import GPT2Config, GPT2LMHeadModel


model = GPT2LMHeadModel(GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 5)
for step in range(10):
    ids = torch.randint(0, 100, (2, 16))
    outputs = model(input_ids=ids, labels=ids)
    lm_loss = outputs.loss
    reg = 1e-4 * sum(p.pow(2).sum() for p in model.parameters())
    optimizer.zero_grad()
    lm_loss.backward()
    (lm_loss + reg).backward()  # <- GA301
    optimizer.step()
