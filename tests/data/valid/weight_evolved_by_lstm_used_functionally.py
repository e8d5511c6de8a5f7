# runtime: trains
"""EvolveGCN-O's layer as its fix writes it: the weight evolved by the LSTM is used as it is
(`F.linear(x, W)`), so the gradient reaches the LSTM and the initial weight. A parameter copied
from another layer while the model is built is initialisation, not a cut."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class EvolveLinear(nn.Module):
    def __init__(self, dim, template):
        super().__init__()
        self.recurrent_layer = nn.LSTM(input_size=dim, hidden_size=dim, num_layers=1)
        self.initial_weight = nn.Parameter(template.weight.detach().clone())

    def forward(self, x):
        W, _ = self.recurrent_layer(self.initial_weight[:, None, :])  # its rows as a sequence
        return F.linear(x, W.squeeze(1))


torch.manual_seed(0)
model = nn.Sequential(EvolveLinear(4, nn.Linear(4, 4)), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    x, y = torch.randn(10, 4), torch.randn(10, 1)
    cost = torch.mean((model(x) - y) ** 2)
    cost.backward()
    optimizer.step()
    optimizer.zero_grad()
