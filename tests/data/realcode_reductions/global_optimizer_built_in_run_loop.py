# reduction-of: ogb@61e9784ca76e examples/nodeproppred/mag/sampler.py:278 GA204
# false: GA204
"""A module-level training script: `train()` reads the global `optimizer` and does
`optimizer.zero_grad(); loss.backward(); optimizer.step()`; the module-level run loop below it
resets the model, builds `optimizer = Adam(model.parameters())` and then calls `train()` once
per epoch. The model holds a ParameterDict of learned embeddings (xavier-initialised in
`reset_parameters`) that are scattered into the input features by a boolean mask.

The real code (OGB's R-GCN on ogbn-mag with neighbour sampling) loops over mini-batches in
`train()` and evaluates after each epoch; its convolutions are defined in the same file.

False finding: GA204 confirmed at `loss.backward()` in `train()`: "computes gradients for 3
parameters of `model`, but `optimizer`, which holds them, never steps: they never change". The
very next line steps it; the global the function reads is the optimizer the run loop built from
`model.parameters()`, embeddings included. The engine did not connect the function to the
module-level loop that defines its global.

Verified with torch 2.13 (CPU): in each run, `optimizer.step()` in `train()` changes the
embeddings and the linear layer. Prints OK.
"""
import torch
import torch.nn.functional as F
from torch.nn import Linear, ModuleList, Parameter, ParameterDict


class RGCN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb_dict = ParameterDict({f"{k}": Parameter(torch.empty(10, 4)) for k in (0, 1)})
        self.convs = ModuleList([Linear(4, 3)])
        self.reset_parameters()

    def reset_parameters(self):
        for emb in self.emb_dict.values():
            torch.nn.init.xavier_uniform_(emb)
        for conv in self.convs:
            conv.reset_parameters()

    def forward(self, idx):
        h = torch.zeros(idx.size(0), 4)
        for key, emb in self.emb_dict.items():
            mask = idx % 2 == int(key)
            h[mask] = emb[idx[mask]]
        return self.convs[0](h).log_softmax(dim=-1)


torch.manual_seed(0)
model = RGCN()
y_global = torch.randint(0, 3, (10,))


def train(epoch):
    model.train()
    idx = torch.randperm(10)[:8]
    optimizer.zero_grad()
    loss = F.nll_loss(model(idx), y_global[idx])
    loss.backward()
    optimizer.step()
    return loss.item()


for run in range(2):
    model.reset_parameters()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    before = [p.detach().clone() for p in model.parameters()]
    for epoch in range(1, 4):
        loss = train(epoch)
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
print("OK")
