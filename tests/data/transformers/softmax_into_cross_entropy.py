# runtime: the loss cannot go below log(4) - 1 and its gradients vanish as the softmax saturates; verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoModelForSequenceClassification

config = AutoConfig.for_model("bert", vocab_size=100, hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=64, num_labels=4)
model = AutoModelForSequenceClassification.from_config(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    input_ids = torch.randint(0, 100, (4, 12))
    labels = torch.randint(0, 4, (4,))
    logits = model(input_ids=input_ids).logits
    probs = logits.softmax(dim=-1)
    loss = F.cross_entropy(probs, labels)  # <- GA407
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item(), "bounded below by", float(torch.log(torch.tensor(4.0)) - 1 + 0.0))
