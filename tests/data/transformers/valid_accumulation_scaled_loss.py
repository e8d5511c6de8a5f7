# runtime: changed: True (loss divided by the accumulation count; trains); verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
from transformers import AutoConfig, AutoModelForCausalLM

config = AutoConfig.for_model("gpt2", vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=32)
model = AutoModelForCausalLM.from_config(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accum = 4
model.train()
before = model.transformer.h[0].mlp.c_fc.weight.detach().clone()
for step in range(16):
    input_ids = torch.randint(0, 100, (2, 16))
    loss = model(input_ids=input_ids, labels=input_ids).loss / accum
    loss.backward()
    if (step + 1) % accum == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
print("changed:", not torch.equal(before, model.transformer.h[0].mlp.c_fc.weight))
