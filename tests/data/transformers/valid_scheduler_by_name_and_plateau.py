# runtime: trains; no scheduler warning (run with -W error::UserWarning); verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import argparse

import torch
from transformers import AutoConfig, AutoModelForCausalLM, get_scheduler

parser = argparse.ArgumentParser()
parser.add_argument("--lr_scheduler_type", default="cosine")
parser.add_argument("--plateau", action="store_true")
args = parser.parse_args([])

config = AutoConfig.for_model("gpt2", vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=32)
model = AutoModelForCausalLM.from_config(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
lr_scheduler = get_scheduler(name=args.lr_scheduler_type, optimizer=optimizer, num_warmup_steps=2,
                             num_training_steps=10)
plateau = get_scheduler("reduce_lr_on_plateau", optimizer)
for epoch in range(2):
    model.train()
    for step in range(5):
        ids = torch.randint(0, 100, (2, 16))
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
    model.eval()
    with torch.no_grad():
        ids = torch.randint(0, 100, (2, 16))
        val_loss = model(input_ids=ids, labels=ids).loss
    plateau.step(val_loss)
print("lr", optimizer.param_groups[0]["lr"])
