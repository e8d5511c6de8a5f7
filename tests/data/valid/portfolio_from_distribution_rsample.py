# runtime: trains
"""deepdow's `Resample` allocation layer as its fix writes it: the draws from the predicted normal
distribution are taken with `rsample()`, the reparameterised draw, so the gradient reaches the
network's mean and covariance. A noise draw with `.sample()` from a fixed distribution (the
exploration noise added to the returns) has no parameters to cut."""
import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal


class Resample(nn.Module):
    def __init__(self, n_draws=16, n_portfolios=4):
        super().__init__()
        self.n_draws, self.n_portfolios = n_draws, n_portfolios

    def forward(self, covmat, rets):
        dist = MultivariateNormal(loc=rets, covariance_matrix=covmat)
        portfolios = []
        for _ in range(self.n_portfolios):
            draws = dist.rsample((self.n_draws,))
            portfolios.append(torch.softmax(draws.mean(dim=0), dim=-1))
        return torch.stack(portfolios, dim=0).mean(dim=0)


torch.manual_seed(0)
n_assets = 5
features = nn.Linear(10, n_assets)
chol = nn.Parameter(torch.eye(n_assets))
alloc = Resample()
optimizer = torch.optim.Adam([*features.parameters(), chol], lr=1e-2)
for _ in range(3):
    x, y = torch.randn(8, 10), torch.randn(8, n_assets)
    rets = features(x) + 0.01 * torch.distributions.Normal(0.0, 1.0).sample((8, n_assets))
    covmat = (chol @ chol.T + 0.1 * torch.eye(n_assets)).expand(8, n_assets, n_assets)
    weights = alloc(covmat, rets)
    loss = -(weights * y).sum(dim=1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
