"""Hand-written gradient descent on a one-hidden-layer MLP (no nn.Module, no torch.optim).

Regresses y = sin(2x) on [-1, 1] with sigmoid hidden units and dropout applied by hand.

    python manual_sgd.py

Runs on CPU in a few seconds (no downloads, nothing written to disk).
"""

import torch


def init_params(hidden, generator):
    w1 = (torch.randn(1, hidden, generator=generator) * 2.0).requires_grad_()
    b1 = torch.zeros(hidden, requires_grad=True)
    w2 = (torch.randn(hidden, 1, generator=generator) / hidden**0.5).requires_grad_()
    b2 = torch.zeros(1, requires_grad=True)
    return [w1, b1, w2, b2]


def forward(params, x, drop_p=0.1, generator=None):
    w1, b1, w2, b2 = params
    h = torch.sigmoid(x @ w1 + b1)
    if drop_p > 0:
        keep = (torch.rand(h.shape, generator=generator) >= drop_p).float()
        h *= keep / (1 - drop_p)
    return h @ w2 + b2


def sgd_step(params, lr):
    for p in params:
        p -= lr * p.grad
        p.grad = None


def main():
    g = torch.Generator().manual_seed(0)
    x = torch.linspace(-1, 1, 128).unsqueeze(1)
    y = torch.sin(2 * x)

    params = init_params(hidden=32, generator=g)
    lr = 0.5
    for it in range(300):
        pred = forward(params, x, drop_p=0.1, generator=g)
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        sgd_step(params, lr)
        if it % 100 == 0:
            print(f"iter {it:3d}  mse {loss.item():.4f}")

    with torch.no_grad():
        mse = ((forward(params, x, drop_p=0.0) - y) ** 2).mean()
    print(f"final mse {mse.item():.4f}")


if __name__ == "__main__":
    main()
