# runtime: error: modified by an inplace operation
"""The same DAG cell whose nodes apply tanh last: the state the cell returns is a tanh output,
which tanh saved for its backward; clipping it in place breaks the backward of the loss."""
import collections

import torch
import torch.nn as nn
import torch.nn.functional as F


class Node:
    def __init__(self, id, name):
        self.id = id
        self.name = name


class Cell(nn.Module):
    def __init__(self, n, num_blocks):
        super().__init__()
        self.num_blocks = num_blocks
        self.w_xh = nn.Linear(n, n)
        self.w_hh = nn.Parameter(torch.randn(n, n) * 0.1)
        self.w_h = nn.ModuleList([nn.Linear(n, n) for _ in range(num_blocks)])
        self.dec = nn.Linear(n, 3)

    def cell(self, x, h_prev, dag):
        h = {}
        h[0] = torch.tanh(self.w_xh(x) + F.linear(h_prev, self.w_hh))
        leaf_node_ids = []
        q = collections.deque()
        q.append(0)
        while True:
            if len(q) == 0:
                break
            node_id = q.popleft()
            for next_node in dag[node_id]:
                next_id = next_node.id
                if next_id == self.num_blocks:
                    leaf_node_ids.append(node_id)
                    continue
                h[next_id] = torch.tanh(self.w_h[next_id](h[node_id]))
                q.append(next_id)
        output = torch.mean(torch.stack([h[i] for i in leaf_node_ids], 2), -1)
        return output, h[self.num_blocks - 1]

    def forward(self, xs, dag):
        hidden = torch.zeros(xs.size(1), xs.size(2))
        logits = []
        for t in range(xs.size(0)):
            logit, hidden = self.cell(xs[t], hidden, dag)
            norms = hidden.norm(dim=-1)
            if norms.data.max() > 0.5:
                norm = hidden[norms > 0.5].norm(dim=-1).unsqueeze(-1)
                hidden[norms > 0.5] *= 0.5 / norm.detach()  # <- GA110
            logits.append(logit)
        return self.dec(torch.stack(logits))


torch.manual_seed(0)
dag = {0: [Node(1, "tanh")], 1: [Node(2, "tanh")], 2: [Node(3, "tanh")]}
model = Cell(8, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    xs = torch.randn(5, 4, 8) * 10
    y = torch.randint(0, 3, (5, 4))
    loss = F.cross_entropy(model(xs, dag).reshape(-1, 3), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
