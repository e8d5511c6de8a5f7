# reduction-of: Knowledge-Distillation-Zoo@65470c846c13 network.py:232 GA110
# false: GA110
# quiet: GA110
"""A paraphraser's encoder: conv, then `nn.BatchNorm2d(c) if use_bn else nn.Sequential()`, then an
in-place LeakyReLU, twice, with `use_bn` from the command line.

False finding: GA110 confirmed at the encoder's call, "in-place change of a tensor that `linear`
saved for backward". The position holding the norm or the empty Sequential was run as one joined
module: the norm saved the conv output as its input, the identity arm passed that same conv output
on, and the in-place activation after the join changed it. On either arm alone nothing saved is
changed (the norm's arm changes the norm's output; the identity arm has no norm). A Sequential
whose positions hold alternatives now runs each combination as its own chain (up to 8).

Verified with torch 2.13 (CPU): both settings train three steps, every backward succeeding.
Prints OK.
"""
import torch
import torch.nn as nn


class Paraphraser(nn.Module):
    def __init__(self, c, use_bn=True):
        super().__init__()
        self.encoder = nn.Sequential(
            *[
                nn.Conv2d(c, c, 3, 1, 1, bias=not use_bn),
                nn.BatchNorm2d(c) if use_bn else nn.Sequential(),
                nn.LeakyReLU(0.1, inplace=True),
                nn.Conv2d(c, c, 3, 1, 1, bias=not use_bn),
                nn.BatchNorm2d(c) if use_bn else nn.Sequential(),
                nn.LeakyReLU(0.1, inplace=True),
            ]
        )

    def forward(self, x):
        return self.encoder(x)


def train(use_bn):
    torch.manual_seed(0)
    net = Paraphraser(4, use_bn)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(3):
        loss = net(torch.randn(2, 4, 6, 6)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    import sys

    for flag in (sys.argv[1:] or ["0", "1"]):
        train(bool(int(flag)))
    print("OK")
