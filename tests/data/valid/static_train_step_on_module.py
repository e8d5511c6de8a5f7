# runtime: trains
"""A knowledge-graph embedding model whose training step is a @staticmethod of the model class,
called on the instance with the model and the optimizer as arguments
(`kge_model.train_step(kge_model, optimizer, batch)`, as in OGB's link-prediction examples). A
static method gets no `self`: `optimizer` is the optimizer, and it steps every iteration. (Bound
like a method, `model` was taken for self and the optimizer for `model`, and GA204 said it never
steps.) A @classmethod called on the instance gets the class."""
import torch
import torch.nn as nn


class KGE(nn.Module):
    def __init__(self, n, dim):
        super().__init__()
        self.emb = nn.Embedding(n, dim)

    def forward(self, head, tail):
        return (self.emb(head) * self.emb(tail)).sum(-1)

    @classmethod
    def build(cls, n):
        return cls(n, 8)

    @staticmethod
    def train_step(model, optimizer, head, tail, label):
        model.train()
        optimizer.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(model(head, tail), label)
        loss.backward()
        optimizer.step()
        return loss.item()


torch.manual_seed(0)
kge_model = KGE.build(20)
optimizer = torch.optim.Adam(kge_model.parameters(), lr=1e-2)
for step in range(5):
    head, tail = torch.randint(0, 20, (16,)), torch.randint(0, 20, (16,))
    kge_model.train_step(kge_model, optimizer, head, tail, (head < tail).float())
