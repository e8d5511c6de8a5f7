# runtime: head changed: True (features under no_grad, only the head is optimized); verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
import torch.nn as nn
from transformers import AutoConfig, AutoModel

config = AutoConfig.for_model("bert", vocab_size=100, hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=64)
backbone = AutoModel.from_config(config).eval()
head = nn.Linear(config.hidden_size, 3)
optimizer = torch.optim.Adam(head.parameters(), lr=1e-2)
before = head.weight.detach().clone()
for step in range(5):
    x = torch.randint(0, 100, (4, 10))
    y = torch.randint(0, 3, (4,))
    with torch.no_grad():
        feats = backbone(input_ids=x).last_hidden_state.mean(dim=1)
    loss = nn.functional.cross_entropy(head(feats), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("head changed:", not torch.equal(before, head.weight))
