# runtime: unchanged: True (every step applies zero gradients); verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
from transformers import AutoConfig, AutoModelForCausalLM


def train_epoch(model, optimizer, batches):
    model.train()
    for input_ids in batches:
        loss = model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        optimizer.zero_grad()  # <- GA202
        optimizer.step()


config = AutoConfig.for_model("gpt2", vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=32)
model = AutoModelForCausalLM.from_config(config)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
before = model.lm_head.weight.detach().clone()
train_epoch(model, optimizer, [torch.randint(0, 100, (2, 16)) for _ in range(3)])
print("unchanged:", torch.equal(before, model.lm_head.weight))
