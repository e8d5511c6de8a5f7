# runtime: no-update: model.0.recurrent_layer
# confidence: confirmed
"""EvolveGCN-O's layer: an LSTM evolves the layer's weight at every forward, and the result is
wrapped in `nn.Parameter(...)`, a new leaf without the LSTM's history: the LSTM never gets a
gradient (and the optimizer's weight is replaced by one it does not hold)."""
import torch
import torch.nn as nn


class EvolveLinear(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.recurrent_layer = nn.LSTM(input_size=dim, hidden_size=dim, num_layers=1)
        self.conv_layer = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        W = self.conv_layer.weight[None, :, :]
        W, _ = self.recurrent_layer(W)
        self.conv_layer.weight = nn.Parameter(W.squeeze(0))  # <- GA104, GA108
        return self.conv_layer(x)


torch.manual_seed(0)
model = nn.Sequential(EvolveLinear(4), nn.ReLU(), nn.Linear(4, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    x, y = torch.randn(10, 4), torch.randn(10, 1)
    cost = torch.mean((model(x) - y) ** 2)
    cost.backward()
    optimizer.step()
    optimizer.zero_grad()
