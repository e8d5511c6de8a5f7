# runtime: error: does not require grad
# confidence: confirmed
"""deepdow's `Resample` allocation layer: portfolios are optimised on draws from a normal
distribution whose mean and covariance the network predicts, but the draws are taken with
`.sample()`, which carries no gradient: the network reaches the loss only through the draws, so
`backward()` raises. `rsample()` is the differentiable draw."""
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
            draws = dist.sample((self.n_draws,))  # <- GA112
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
    rets = features(x)
    covmat = (chol @ chol.T + 0.1 * torch.eye(n_assets)).expand(8, n_assets, n_assets)
    weights = alloc(covmat, rets)
    loss = -(weights * y).sum(dim=1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
