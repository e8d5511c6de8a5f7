"""Depth (issue 11): parameters made after an optimizer are in none of its groups however the
groups were built, and module factories growing a list of layers give a known module."""

from __future__ import annotations

import textwrap

import pytest
from helpers import analyze, found, strip_markers

NET = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.body(x))
"""

LOOP = """
for step in range(3):
    x, y = torch.randn(4, 16), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

GROUP_HELPERS = {
    "comprehensions and id() filters": """
def param_groups(model, wd):
    head_ids = {id(p) for p in model.head.parameters()}
    decay = [p for n, p in model.named_parameters() if p.ndim > 1 and id(p) not in head_ids]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1 and id(p) not in head_ids]
    return [{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0},
            {"params": [p for p in model.parameters() if id(p) in head_ids], "lr": 1e-2}]


model = Net()
optimizer = torch.optim.AdamW(param_groups(model, 0.01), lr=1e-3)
""",
    "a dict of named parameters split by dimension": """
def build_optimizer(model, weight_decay, lr):
    param_dict = {pn: p for pn, p in model.named_parameters()}
    param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
    decay = [p for n, p in param_dict.items() if p.dim() >= 2]
    nodecay = [p for n, p in param_dict.items() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": nodecay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr)


model = Net()
optimizer = build_optimizer(model, 0.1, 3e-4)
""",
    "groups from an unknown helper": """
import somelib

model = Net()
optimizer = torch.optim.AdamW(somelib.param_groups(model), lr=1e-3)
""",
}


@pytest.mark.parametrize("name", sorted(GROUP_HELPERS))
def test_head_after_the_optimizer_whatever_its_groups(name):
    src, expected = strip_markers(
        textwrap.dedent(
            NET
            + GROUP_HELPERS[name]
            + """
model.head = nn.Linear(32, 3)  # <- GA108
"""
            + LOOP
        )
    )
    result = analyze(src)
    assert found(result) == expected


@pytest.mark.parametrize("name", sorted(GROUP_HELPERS))
def test_head_after_the_optimizer_then_added(name):
    src, _ = strip_markers(
        textwrap.dedent(
            NET
            + GROUP_HELPERS[name]
            + """
model.head = nn.Linear(32, 3)
optimizer.add_param_group({"params": model.head.parameters()})
"""
            + LOOP
        )
    )
    assert found(analyze(src)) == []


FACTORIES = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp(sizes, act=nn.ReLU):
    layers = []
    for i in range(len(sizes) - 1):
        layers += [nn.Linear(sizes[i], sizes[i + 1]), act()]
    return nn.Sequential(*layers[:-1])


def mlp_append(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers.append(nn.Linear(a, b))
        layers.append(nn.ReLU())
    layers.pop()
    return nn.Sequential(*layers)


def mlp_extend(dims):
    layers = []
    for a, b in zip(dims, dims[1:]):
        layers.extend([nn.Linear(a, b), nn.GELU(), nn.Dropout(0.1)])
    return nn.Sequential(*layers[:-2])


encoder = {enc}([16, 32, 8])
decoder = {dec}([8, 32, 16])
optimizer = torch.optim.Adam({params}, lr=1e-3)
for step in range(3):
    x = torch.randn(4, 16)
    loss = F.mse_loss(decoder(encoder(x)), x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize("enc,dec", [("mlp", "mlp_append"), ("mlp_extend", "mlp"), ("mlp_append", "mlp_extend")])
def test_sequential_from_a_grown_list_is_a_known_module(enc, dec):
    src = textwrap.dedent(FACTORIES).replace("{enc}", enc).replace("{dec}", dec)
    only_encoder = analyze(src.replace("{params}", "encoder.parameters()"))
    (f,) = only_encoder.findings
    assert f.code == "GA108" and f.confidence == "confirmed" and "decoder" in f.message
    both = analyze(src.replace("{params}", "[*encoder.parameters(), *decoder.parameters()]"))
    assert found(both) == []


def test_sequential_of_unknown_blocks_may_own_parameters():
    """`nn.Sequential(*[block(c) for ...])` with a block class the engine cannot see: not an empty module."""
    src = textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from somewhere import Block

        body = nn.Sequential(*[Block(8) for _ in range(3)])
        head = nn.Linear(8, 2)
        optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
        for step in range(3):
            x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
            loss = F.cross_entropy(head(body(x)), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    result = analyze(src)
    # the body's parameters are unseen: nothing may claim it has none (no confirmed finding about it)
    assert not [f for f in result.findings if f.confidence == "confirmed" and "body" in f.message]
    # (each block is a module of unseen parameters: nn.Sequential holds only modules)
    step = result.model.steps[0]
    body = [m for m in step.reached | step.reached_weak if m.module == "body" or m.module.startswith("body.")]
    assert body and all(p.opaque for p in body)
