"""A call that left nothing behind stands for the same call made again (interp/summaries.py): an
evaluation run from the training loop and after it is analysed once; a call that builds a model,
records a training event or is cheap is followed every time."""

from __future__ import annotations

from helpers import analyze, found

# thirty-odd statements of bookkeeping around the work each test is about: a call cheaper than
# summaries.MIN_STATEMENTS is followed again anyway
PADDING = "".join(f"    note_{i} = len(str({i}))\n" for i in range(32))


EVALUATE = f"""\
import torch
import torch.nn as nn


def evaluate(model, data):
    model.eval()
    correct, seen = 0, 0
    with torch.no_grad():
        for x, y in data:
            correct += int((model(x).argmax(dim=1) == y).sum())
            seen += y.numel()
{PADDING}    model.train()
    return {{"accuracy": correct / max(seen, 1)}}


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)]
for epoch in range(3):
    for x, y in data:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    evaluate(model, data)
final = evaluate(model, data)
"""


def test_an_evaluation_run_in_the_loop_and_after_it_is_analysed_once(runs):
    r = analyze(EVALUATE)
    assert runs["evaluate"] == 1
    assert found(r) == [] and r.gap is None


def test_a_summary_needs_the_same_arguments(runs):
    # another model: its own run (what the call reads is not the same)
    src = EVALUATE.replace("final = evaluate(model, data)", "other = nn.Linear(4, 3)\nfinal = evaluate(other, data)")
    analyze(src)
    assert runs["evaluate"] == 2


BUILDERS = f"""\
import torch
import torch.nn as nn


def build(width):
{PADDING}    return nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Linear(width, 2))


teacher = build(8)
student = build(8)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(16, 4)
    loss = (student(x) - teacher(x)).pow(2).mean()  # <- GA108
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_builder_called_twice_makes_two_models(runs):
    # a call that made modules (or parameters, optimizers, a graph) is followed again: one model
    # standing for both would hide the teacher's parameters that the loss reaches and no optimizer holds
    r = analyze(BUILDERS)
    assert runs["build"] == 2
    assert "GA108" in {c for _, c in found(r)}


CLEARS = f"""\
import torch
import torch.nn as nn


def clear(optimizer):
{PADDING}    optimizer.zero_grad()


model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    clear(optimizer)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    clear(optimizer)
    optimizer.step()
"""


def test_a_call_that_records_a_training_event_is_followed_each_time(runs):
    r = analyze(CLEARS)
    assert runs["clear"] >= 2
    assert "GA202" in {c for _, c in found(r)}


GETTER = """\
import torch
import torch.nn as nn


class Holder:
    def __init__(self):
        self.net = nn.Linear(4, 2)

    def current(self):
        return self.net


h = Holder()
optimizer = torch.optim.SGD(h.current().parameters(), lr=0.1)
h.net = nn.Linear(4, 2)
for _ in range(3):
    loss = h.current()(torch.randn(8, 4)).sum()  # <- GA108
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_cheap_call_reads_the_state_of_the_moment(runs):
    # a getter is followed again: the attribute it reads was replaced between the two calls
    r = analyze(GETTER)
    assert runs["Holder.current"] == 2
    assert "GA108" in {c for _, c in found(r)}
