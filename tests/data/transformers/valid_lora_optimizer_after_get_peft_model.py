# runtime: the lora_B weights change: the adapters train; verified with torch 2.13.0 + transformers 5.24.0 + peft 0.21.2 (CPU, no torchvision)
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoConfig, AutoModelForCausalLM

model = AutoModelForCausalLM.from_config(AutoConfig.for_model("gpt2", vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=32))

lora_config = LoraConfig(r=8, lora_alpha=16, target_modules=["c_attn"], lora_dropout=0.05)
model = get_peft_model(model, lora_config)
model.print_trainable_parameters()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
model.train()
for step in range(3):
    ids = torch.randint(0, 100, (2, 16))
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
