# runtime: encoder unchanged: True (the encoder's param group never trains); verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
from transformers import AutoConfig, AutoModelForSequenceClassification

config = AutoConfig.for_model("bert", vocab_size=100, hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=64, num_labels=3)
model = AutoModelForSequenceClassification.from_config(config)
for p in model.bert.parameters():
    p.requires_grad = False  # <- GA107
optimizer = torch.optim.AdamW([
    {"params": model.bert.parameters(), "lr": 2e-5},
    {"params": model.classifier.parameters(), "lr": 1e-3},
])
before = model.bert.pooler.dense.weight.detach().clone()
for step in range(5):
    input_ids = torch.randint(0, 100, (4, 12))
    labels = torch.randint(0, 3, (4,))
    loss = model(input_ids=input_ids, labels=labels).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print("encoder unchanged:", torch.equal(before, model.bert.pooler.dense.weight))
