# reduction-of: tabnet@2c0c4ebd2bb1 pytorch_tabnet/metrics.py:47 GA402
# false: GA402
# quiet: GA402
"""A self-supervised reconstruction loss that weights each feature's error by the inverse of its
batch variance, replacing the zeros first: `batch_means[batch_means == 0] = 1`, then
`batch_stds[batch_stds == 0] = batch_means[batch_stds == 0]`, then `1 / batch_stds`.

False finding: GA402 suspicious: "division by a value that can be exactly 0 (a standard
deviation)". Every zero variance is replaced by its feature's mean, itself made non-zero the line
before, so no element of the divisor is 0. Verified with torch 2.13 (CPU): with constant and
all-zero feature columns the loss and the gradients are finite. Prints OK.
"""
import torch
import torch.nn as nn


def unsupervised_loss(y_pred, embedded_x, obf_vars, eps=1e-9):
    errors = y_pred - embedded_x
    reconstruction_errors = torch.mul(errors, obf_vars) ** 2
    batch_means = torch.mean(embedded_x, dim=0)
    batch_means[batch_means == 0] = 1
    batch_stds = torch.std(embedded_x, dim=0) ** 2
    batch_stds[batch_stds == 0] = batch_means[batch_stds == 0]
    features_loss = torch.matmul(reconstruction_errors, 1 / batch_stds)
    nb_reconstructed_variables = torch.sum(obf_vars, dim=1)
    features_loss = features_loss / (nb_reconstructed_variables + eps)
    return torch.mean(features_loss)


torch.manual_seed(0)
decoder = nn.Linear(6, 6)
optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-2)
for step in range(3):
    x = torch.randn(16, 6)
    x[:, 0] = 3.0  # a constant column: variance 0, mean 3
    x[:, 1] = 0.0  # an all-zero column: variance 0, mean 0 -> 1
    obf = (torch.rand(16, 6) > 0.5).float()
    loss = unsupervised_loss(decoder(x * (1 - obf)), x, obf)
    optimizer.zero_grad()
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(p.grad).all() for p in decoder.parameters())
    optimizer.step()
print("OK")
