"""A fix is `safe` only when, in its context, it restores the flow of gradient and changes nothing
else (`--fix` applies it unasked); otherwise it is offered as `unsafe`."""

import textwrap

import pytest
from helpers import analyze


def _fixes(source, code):
    result = analyze(textwrap.dedent(source))
    return [f.fix.applicability for f in result.findings if f.code == code and f.fix is not None]


HEAD = """
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""


def test_no_grad_around_only_the_loss_is_safe():
    src = (
        HEAD
        + """
for _ in range(2):
    x, y = torch.randn(4, 4), torch.randint(0, 2, (4,))
    with torch.no_grad():
        logits = model(x)
        loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    )
    assert _fixes(src, "GA102") == ["safe"]


def test_no_grad_that_also_wraps_evaluation_is_unsafe():
    src = (
        HEAD
        + """
for _ in range(2):
    x, y = torch.randn(4, 4), torch.randint(0, 2, (4,))
    with torch.no_grad():
        loss = F.cross_entropy(model(x), y)
        val_acc = (model(torch.randn(4, 4)).argmax(1) == y).float().mean()
        print(val_acc)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    )
    assert _fixes(src, "GA102") == ["unsafe"]


def test_no_grad_around_a_shared_helper_call_is_unsafe():
    src = (
        HEAD
        + """
def step(x, y):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


for _ in range(2):
    step(torch.randn(4, 4), torch.randint(0, 2, (4,)))
    with torch.no_grad():
        step(torch.randn(4, 4), torch.randint(0, 2, (4,)))
"""
    )
    assert _fixes(src, "GA102") == ["unsafe"]


@pytest.mark.parametrize("callers, expected", [(1, "safe"), (2, "unsafe")])
def test_no_grad_decorator_removal_depends_on_the_callers(callers, expected):
    src = (
        HEAD
        + """
@torch.no_grad()
def compute_loss(x, y):
    return F.cross_entropy(model(x), y)


for _ in range(2):
    loss = compute_loss(torch.randn(4, 4), torch.randint(0, 2, (4,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        + ("val = compute_loss(torch.randn(4, 4), torch.randint(0, 2, (4,)))\n" if callers == 2 else "")
    )
    assert _fixes(src, "GA102") == [expected]


@pytest.mark.parametrize("mutated, expected", [(False, "safe"), (True, "unsafe")])
def test_dropping_detach_is_unsafe_when_the_copy_is_changed_in_place(mutated, expected):
    src = (
        HEAD
        + """
for _ in range(2):
    x, y = torch.randn(4, 4), torch.randint(0, 2, (4,))
    logits = model(x).detach()
"""
        + ("    logits.clamp_(-5, 5)\n" if mutated else "")
        + """
    loss = F.cross_entropy(logits * 2, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    )
    assert _fixes(src, "GA101") == [expected]


def test_rewrap_with_a_dtype_is_unsafe():
    src = (
        HEAD
        + """
for _ in range(2):
    x, y = torch.randn(4, 4), torch.randint(0, 2, (4,))
    logits = torch.tensor(model(x), dtype=torch.float64)
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    )
    assert _fixes(src, "GA104") == ["unsafe"]


def test_registering_a_plain_tensor_is_unsafe_a_plain_list_safe():
    src = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.ones(3, requires_grad=True)
        self.layers = [nn.Linear(3, 3), nn.Linear(3, 3)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scale


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = model(torch.randn(2, 3)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    result = analyze(textwrap.dedent(src))
    by_line = {f.span.line: f.fix.applicability for f in result.findings if f.code == "GA109"}
    assert by_line == {9: "unsafe", 10: "safe"}


def test_layers_with_their_own_optimizers_are_reported_for_what_they_miss():
    src = """
import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(3, 3), nn.Linear(3, 3)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


net = Stack()
optimizers = [torch.optim.SGD(layer.parameters(), lr=0.1) for layer in net.layers]
for _ in range(2):
    loss = net(torch.randn(2, 3)).pow(2).mean()
    for opt in optimizers:
        opt.zero_grad()
    loss.backward()
    for opt in optimizers:
        opt.step()
"""
    result = analyze(textwrap.dedent(src))
    [f] = [f for f in result.findings if f.code == "GA109"]
    assert f.confidence == "suspicious"
    assert "still trains" in f.message and "state_dict()" in f.message and ".to(device)" in f.message
    assert "no optimizer updates them" not in f.message
    assert f.fix.applicability == "unsafe"


NUMPY_HEAD = "import numpy as np\n" + HEAD


def _ga105(line):
    src = (
        NUMPY_HEAD
        + f"""
weights = np.ones(2, dtype=np.float32)
for _ in range(2):
    x, y = torch.randn(4, 4), torch.randint(0, 2, (4,))
    probs = torch.softmax(model(x), dim=1)
    {line}
    loss = F.nll_loss(lp, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    )
    result = analyze(textwrap.dedent(src))
    return [f.fix for f in result.findings if f.code == "GA105"]


def test_numpy_roundtrip_rewritten_in_torch():
    (fix,) = _ga105("lp = torch.tensor(np.log(np.clip(probs.detach().cpu().numpy(), 1e-8, 1.0)), dtype=torch.float32)")
    assert fix.applicability == "safe"
    assert [e.content for e in fix.edits] == ["torch.log(torch.clamp(probs, 1e-8, 1.0)).to(torch.float32)"]


def test_numpy_roundtrip_with_an_array_beside_is_unsafe():
    # `weights` may be an ndarray: torch.log(probs) * weights is not known to work unchanged
    (fix,) = _ga105("lp = torch.from_numpy(np.log(probs.detach().numpy()) * weights)")
    assert fix.applicability == "unsafe"
    assert fix.edits[0].content == "torch.log(probs) * weights"


def test_numpy_reduction_has_no_torch_rewrite():
    # np.mean's axis/float64 accumulation differ from torch.mean: no mechanical fix
    assert _ga105("lp = torch.from_numpy(np.log(probs.detach().numpy()) - np.mean(probs.detach().numpy()))") in (
        [None],
        [None, None],
    )
