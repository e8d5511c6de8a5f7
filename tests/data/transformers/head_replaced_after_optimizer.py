# runtime: classifier unchanged: True (the new head gets gradients, AdamW never holds it); verified with torch 2.13.0 + transformers 5.24.0 (CPU, no torchvision)
import torch
import torch.nn as nn
from transformers import AutoConfig, AutoModelForSequenceClassification


def build(num_labels):
    config = AutoConfig.for_model("bert", vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=64, num_labels=2)
    model = AutoModelForSequenceClassification.from_config(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    # the task turned out to have more classes: swap the head
    model.classifier = nn.Linear(config.hidden_size, num_labels)  # <- GA108
    return model, optimizer


def train(model, optimizer, steps=5):
    model.train()
    before = model.classifier.weight.detach().clone()
    for _ in range(steps):
        input_ids = torch.randint(0, 100, (4, 12))
        labels = torch.randint(0, 5, (4,))
        logits = model(input_ids=input_ids).logits
        loss = nn.functional.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return torch.equal(before, model.classifier.weight)


if __name__ == "__main__":
    model, optimizer = build(5)
    print("classifier unchanged:", train(model, optimizer))
