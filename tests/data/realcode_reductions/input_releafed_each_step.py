# reduction-of: diffusers@58eb52c0803e examples/community/dps_pipeline.py:147 GA111
# false: GA111, GA106
# quiet: GA102
"""An input optimised by hand: made a leaf at the top of each step, updated under no_grad at its end.

The real code (diffusion posterior sampling): in the timestep loop of a `@torch.no_grad()` sampler,
`with torch.enable_grad():` `image = image.requires_grad_()`, the U-Net and a measurement operator
give a loss, `loss.backward()`, then `with torch.no_grad(): image_pred = image_pred - zeta * image.grad;
image = image_pred.detach()`. Iterative adversarial attacks (PGD) have the same shape:
`x = x.detach().requires_grad_()`, backward, `x = x + a * x.grad.sign()` under no_grad.

False findings: GA111 confirmed at `image = image_pred.detach()` ("replaces the leaf `image` with a
computed tensor: the new `image` is not a leaf, its .grad stays None"), GA106 confirmed at the
`requires_grad_()` (a "fresh tensor" standing in for the loss) and GA102 suspicious at the inner
no_grad. The rebound tensor is made a leaf that requires grad again at the top of the next step, so its
`.grad` is filled by the next backward; nothing is lost.

Verified with torch 2.13 (CPU): both loops run four steps; at every step the leaf's `.grad` is set and
finite, and the loss falls. Prints OK.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(4, 4)
target = torch.randn(2, 4)


@torch.no_grad()
def posterior_sample(steps=4, zeta=0.1):
    image = torch.randn(2, 4)
    losses = []
    for _ in range(steps):
        with torch.enable_grad():
            image = image.requires_grad_()
            pred = net(image)
            image_pred = image - 0.5 * pred
            loss = (pred - target).pow(2).mean()
            loss.backward()
            assert image.grad is not None and torch.isfinite(image.grad).all()
            losses.append(loss.item())
            with torch.no_grad():
                image_pred = image_pred - zeta * image.grad
                image = image_pred.detach()
    return losses


def attack(x, steps=4, alpha=0.05):
    losses = []
    for _ in range(steps):
        x = x.detach().requires_grad_()
        loss = (net(x) - target).pow(2).mean()
        loss.backward()
        assert x.grad is not None and torch.isfinite(x.grad).all()
        losses.append(loss.item())
        with torch.no_grad():
            x = x - alpha * x.grad.sign()
    return losses


assert len(posterior_sample()) == 4
descent = attack(torch.randn(2, 4))
assert descent[-1] < descent[0], descent
print("OK")
