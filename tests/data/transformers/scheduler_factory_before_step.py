# runtime: torch warns "Detected call of `lr_scheduler.step()` before `optimizer.step()`": the warmup's first value is skipped; verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
from transformers import AutoConfig, AutoModelForCausalLM, get_linear_schedule_with_warmup

config = AutoConfig.for_model("gpt2", vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=32)
model = AutoModelForCausalLM.from_config(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=2, num_training_steps=10)
for step in range(10):
    ids = torch.randint(0, 100, (2, 16))
    loss = model(input_ids=ids, labels=ids).loss
    optimizer.zero_grad()
    loss.backward()
    scheduler.step()  # <- GA207
    optimizer.step()
