# runtime: no-update: trainer.model.classifier
"""A Trainer builds its optimizer in __init__; `adapt_to(num_labels)` swaps in a new classifier
afterwards, so the new head is in no param group."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TextClassifier(nn.Module):
    def __init__(self, vocab=50, dim=16, num_labels=2):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.classifier = nn.Linear(dim, num_labels)

    def forward(self, tokens):
        return self.classifier(self.embed(tokens))


class Trainer:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.step_count = 0

    def adapt_to(self, num_labels):
        dim = self.model.classifier.in_features
        self.model.classifier = nn.Linear(dim, num_labels)  # <- GA108

    def train_step(self, tokens, labels):
        self.model.train()
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(tokens), labels)
        loss.backward()
        self.optimizer.step()
        self.step_count += 1
        return loss.item()

    def train_epoch(self, batches):
        return [self.train_step(t, y) for t, y in batches]


torch.manual_seed(0)
trainer = Trainer(TextClassifier())
trainer.adapt_to(5)
batches = [(torch.randint(0, 50, (8, 6)), torch.randint(0, 5, (8,))) for _ in range(4)]
for epoch in range(2):
    print(epoch, trainer.train_epoch(batches))
