# runtime: head 0 unchanged: True (the heads are not in model.parameters()); verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
import torch.nn as nn
from transformers import AutoConfig, AutoModel


class MultiTask(nn.Module):
    def __init__(self, config, task_sizes):
        super().__init__()
        self.encoder = AutoModel.from_config(config)
        self.heads = [nn.Linear(config.hidden_size, n) for n in task_sizes]  # <- GA109

    def forward(self, input_ids, task):
        h = self.encoder(input_ids=input_ids).last_hidden_state[:, 0]
        return self.heads[task](h)


config = AutoConfig.for_model("bert", vocab_size=100, hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=64)
model = MultiTask(config, [3, 5])
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
before = model.heads[0].weight.detach().clone()
for step in range(4):
    task = step % 2
    x = torch.randint(0, 100, (4, 10))
    y = torch.randint(0, [3, 5][task], (4,))
    loss = nn.functional.cross_entropy(model(x, task), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("head 0 unchanged:", torch.equal(before, model.heads[0].weight))
