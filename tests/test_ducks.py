"""Duck-typed optimizers (interp/ducks.py): a value the engine did not see made, on which the code
calls both `zero_grad()` and `step()`, is taken for an optimizer of parameters it cannot name, so
the order of a trainer's calls is judged even when its optimizer is handed in; findings on it are
suspicious, with the premise that does not hold."""

from __future__ import annotations

from helpers import analyze, found

from gradaudit.analysis.model.findings import SUSPICIOUS

HANDED_IN = """\
def train_epoch(model, optimizer, loader, criterion):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
"""

# pytorch-rl-il's Approximation.reinforce: the optimizer kept on the object, cleared in one
# method and stepped in another that it calls; the loss an optional argument (a root is run on it
# given and not given), scaled by a number
KEPT = """\
class Approximation:
    def __init__(self, model, optimizer, lr_scheduler=None, loss_scaling=1):
        self.model = model
        self._loss_scaling = loss_scaling
        self._optimizer = optimizer
        self._lr_scheduler = lr_scheduler

    def reinforce(self, loss=None):
        if loss is not None:
            loss = self._loss_scaling * loss
            loss.backward()
        self._optimizer.zero_grad()
        self.step()

    def step(self):
        self._optimizer.step()
        if self._lr_scheduler:
            self._lr_scheduler.step()
"""


def test_a_handed_in_optimizer_cleared_between_backward_and_step():
    r = analyze(HANDED_IN)
    assert found(r) == [(5, "GA202")]
    (f,) = r.findings
    assert f.confidence == SUSPICIOUS
    assert any(not p.holds and "taken for an optimizer" in p.unseen for p in f.premises)


def test_an_optimizer_kept_on_the_object_and_stepped_by_another_method():
    assert found(analyze(KEPT)) == [(12, "GA202")]


def test_in_the_right_order_nothing_is_reported():
    wrong = "        loss.backward()\n        optimizer.zero_grad()\n"
    fixed = HANDED_IN.replace(wrong, "        optimizer.zero_grad()\n        loss.backward()\n")
    assert fixed != HANDED_IN
    assert found(analyze(fixed)) == []


def test_neither_call_alone_makes_an_optimizer():
    # a module's zero_grad() and a scheduler's step() between backward() and nothing else
    source = """\
def train_epoch(model, scheduler, loader, criterion):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        model.zero_grad()
        scheduler.step()
"""
    assert found(analyze(source)) == []


def test_one_backward_of_an_unknown_loss_is_one_backward():
    # a loss from a criterion of unknown origin was backpropagated twice in the engine's record
    # (as a tensor, then as an unknown value): the second hid the clear between them and the step
    source = """\
import torch


def train_epoch(model, optimizer, loader, criterion):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()


def main():
    model = torch.nn.Linear(3, 2)
    train_epoch(model, torch.optim.SGD(model.parameters(), lr=0.1), get_loader(), get_criterion())
"""
    assert found(analyze(source)) == [(8, "GA202")]


# a trainer handed its optimizer and its GradScaler (miles-credit's Trainer.train_one_epoch): the
# optimizer is cleared with zero_grad() and stepped through the scaler, never `.step()` itself
SCALED = """\
import torch


class Trainer:
    def __init__(self, model):
        self.model = model

    def train_one_epoch(self, loader, optimizer, criterion, scaler, scheduler, grad_max_norm=1.0):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(self.model(x), y)
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=grad_max_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            scheduler.step()
"""


def test_a_handed_in_scaler_and_the_optimizer_it_steps():
    r = analyze(SCALED)
    # the clip of still-scaled gradients; not "float16 autocast with no GradScaler" (one is used),
    # nor "scaled loss, plain step" at `scheduler.step()` (a schedule's step, not an optimizer's)
    assert found(r) == [(13, "GA208")]
    (f,) = r.findings
    assert f.confidence == SUSPICIOUS
    assert any(not p.holds and "taken for an optimizer" in p.unseen for p in f.premises)


def test_a_handed_in_scaler_unscaled_before_the_clip():
    clip = "            torch.nn.utils.clip_grad_norm_("
    fixed = SCALED.replace(clip, "            scaler.unscale_(optimizer)\n" + clip)
    assert fixed != SCALED
    assert found(analyze(fixed)) == []


def test_a_value_with_a_step_alone_is_no_scaler():
    # `runner.step(optimizer)` with no `scale()`: nothing is taken for a scaler or an optimizer
    source = SCALED.replace("scaler.scale(loss).backward()", "loss.backward()").replace("scaler.", "runner.")
    assert "scale(" not in source
    assert found(analyze(source)) == [(10, "GA409")]


# DN-DETR's train_one_epoch: the optimizer handed in, cleared only on the AMP arm (`args=None`, then
# `args.amp`: the caller gives args, so the root runs with it given too)
ARMS = """\
import torch


def train_one_epoch(model, criterion, data_loader, optimizer, max_norm=0, args=None):
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    for samples, targets in data_loader:
        losses = criterion(model(samples), targets)
        if args.amp:
            optimizer.zero_grad()
            scaler.scale(losses).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            losses.backward()
            optimizer.step()
"""


def test_a_handed_in_optimizer_cleared_on_one_setting_only():
    r = analyze(ARMS)
    assert found(r) == [(15, "GA201")]
    assert r.findings[0].confidence == SUSPICIOUS


def test_cleared_on_both_settings_nothing_is_reported():
    fixed = ARMS.replace("        else:\n", "        else:\n            optimizer.zero_grad()\n")
    assert fixed != ARMS
    assert found(analyze(fixed)) == []
