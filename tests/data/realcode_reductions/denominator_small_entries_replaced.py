# reduction-of: nerf_pl@52aeb387da64 models/rendering.py:54 GA402
# false: GA402
# quiet: GA402
"""NeRF's hierarchical sampling (`sample_pdf`) as nerf_pl writes it: the width of each sampled CDF
bin is `denom = cdf_g[..., 1] - cdf_g[..., 0]`, which is 0 for a bin of weight 0, and
`denom[denom < eps] = 1` replaces every such entry before the division.

False finding: GA402 suspicious at the division, "division by a value that can be exactly 0". After
the masked assignment every entry of `denom` is at least eps or exactly 1.

Verified with torch 2.13 (CPU): with bins of weight exactly 0, the samples and every gradient are
finite. Prints OK.
"""
import torch


def sample_pdf(bins, weights, n_importance, eps=1e-5):
    n_rays, n_samples = weights.shape
    weights = weights + eps
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[:, :1]), cdf], -1)
    u = torch.rand(n_rays, n_importance)
    inds = torch.searchsorted(cdf.detach(), u, right=True)
    below = torch.clamp_min(inds - 1, 0)
    above = torch.clamp_max(inds, n_samples)
    inds_sampled = torch.stack([below, above], -1).view(n_rays, 2 * n_importance)
    cdf_g = torch.gather(cdf, 1, inds_sampled).view(n_rays, n_importance, 2)
    bins_g = torch.gather(bins, 1, inds_sampled).view(n_rays, n_importance, 2)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom[denom < eps] = 1
    return bins_g[..., 0] + (u - cdf_g[..., 0]) / denom * (bins_g[..., 1] - bins_g[..., 0])


torch.manual_seed(0)
net = torch.nn.Linear(4, 8)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    weights = torch.relu(net(torch.randn(5, 4)))  # some weights exactly 0
    bins = torch.linspace(0, 1, 9).expand(5, 9)
    samples = sample_pdf(bins, weights, 16)
    loss = samples.sum() + weights.sum()
    optimizer.zero_grad()
    loss.backward()
    assert torch.isfinite(samples).all()
    assert all(torch.isfinite(p.grad).all() for p in net.parameters())
    optimizer.step()
print("OK")
