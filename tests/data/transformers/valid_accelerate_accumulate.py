# runtime: trains with no warning (run with -W error::UserWarning); accelerator.backward divides the loss by gradient_accumulation_steps; verified with torch 2.13.0 + transformers 5.24.0 + accelerate 1.15.0 (CPU, no torchvision)
import torch
from accelerate import Accelerator
from transformers import AutoConfig, AutoModelForCausalLM, get_scheduler

accelerator = Accelerator(gradient_accumulation_steps=4, mixed_precision="no")
config = AutoConfig.for_model("gpt2", vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=32)
model = AutoModelForCausalLM.from_config(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loader = torch.utils.data.DataLoader(torch.randint(0, 100, (32, 16)), batch_size=2)
scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0, num_training_steps=16)
model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
model.train()
for ids in loader:
    with accelerator.accumulate(model):
        loss = model(input_ids=ids, labels=ids).loss
        accelerator.backward(loss)
        if accelerator.sync_gradients:
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
