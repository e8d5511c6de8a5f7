"""A call repeated at once on the other arm of a branch is analysed once (interp/repeats.py): the
launcher's `if n > 1: spawn(worker, args=(main, ...))` / `else: main(*args)` ran a whole training
script twice."""

from __future__ import annotations

from helpers import analyze, found

LAUNCHER = """\
import sys

import torch
import torch.multiprocessing as mp
import torch.nn as nn


def main(data):
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in data:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()


def worker(rank, fn, args):
    torch.manual_seed(rank)
    fn(*args)


def launch(fn, n, args=()):
    if n > 1:
        mp.spawn(worker, nprocs=n, args=(fn, args))
    else:
        {other_arm}


launch(main, int(sys.argv[1]), args=([torch.randn(8, 4)],))
"""


def test_the_same_call_on_the_other_arm_is_analysed_once(runs):
    result = analyze(LAUNCHER.format(other_arm="fn(*args)"))
    assert runs["main"] == 1 and runs["worker"] == 1
    # what the one analysis found stands for both arms: the gradients are never cleared
    assert found(result) == [(14, "GA201")]


def test_other_arguments_are_analysed_again(runs):
    result = analyze(LAUNCHER.format(other_arm="fn([torch.randn(8, 4), torch.randn(8, 4)])"))
    assert runs["main"] == 2
    assert found(result) == [(14, "GA201")]


def test_a_statement_between_the_calls_is_analysed_again(runs):
    # the other arm changed something first: its call may see another program state
    analyze(LAUNCHER.format(other_arm="torch.manual_seed(0)\n        fn(*args)"))
    assert runs["main"] == 2


def test_the_same_call_twice_in_a_row_is_analysed_twice(runs):
    # not exclusive: the second call runs after the first (a second epoch of training)
    src = LAUNCHER.replace("launch(main, int(sys.argv[1])", "data = [torch.randn(8, 4)]\nmain(data)\nmain(data)\n#")
    analyze(src.format(other_arm="fn(*args)"))
    assert runs["main"] == 2
