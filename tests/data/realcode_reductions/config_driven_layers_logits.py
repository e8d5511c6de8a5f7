# reduction-of: MAML-Pytorch@98a00d41724c meta.py:85 GA407
# false: GA407
# quiet: GA407
"""MAML's Learner: `forward` walks a configuration list of `(name, args)` entries and runs the op
each name selects (`if name == "linear": ... elif name == "sigmoid": x = torch.sigmoid(x)`); the
meta-learner feeds its output to `F.cross_entropy`. The configuration is data handed in by the
caller, and every configuration given ends in a linear layer: cross_entropy gets logits.

False finding: GA407 "sigmoid outputs into cross_entropy" (confirmed, then suspicious when only
some paths gave probabilities). The engine joined every arm of the dispatch, so the result was
"sigmoid or logits". A path the engine saw giving logits next to the sigmoid one is no evidence
that the probabilities reach the loss: GA407/GA408 now need probabilities on every known path
(paths through calls it could not follow may stay unknown: then suspicious).

Verified with torch 2.13 (CPU): the loss falls and the final layer's outputs are not in [0, 1].
Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.vars = nn.ParameterList()
        for name, param in self.config:
            if name == "linear":
                w = nn.Parameter(torch.ones(*param))
                nn.init.kaiming_normal_(w)
                self.vars.append(w)
                self.vars.append(nn.Parameter(torch.zeros(param[0])))

    def forward(self, x, vars=None):
        if vars is None:
            vars = self.vars
        idx = 0
        for name, param in self.config:
            if name == "linear":
                w, b = vars[idx], vars[idx + 1]
                x = F.linear(x, w, b)
                idx += 2
            elif name == "relu":
                x = F.relu(x)
            elif name == "tanh":
                x = torch.tanh(x)
            elif name == "sigmoid":
                x = torch.sigmoid(x)
            else:
                raise NotImplementedError(name)
        return x


def main(config):
    torch.manual_seed(0)
    net = Learner(config)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    x = torch.randn(32, 8)
    y = torch.randint(0, 4, (32,))
    first = None
    for _ in range(50):
        logits = net(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < first
    out = net(x)
    assert out.min() < 0 or out.max() > 1  # logits, not probabilities


if __name__ == "__main__":
    main([("linear", [16, 8]), ("relu", [True]), ("linear", [4, 16])])
    print("OK")
