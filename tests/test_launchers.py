"""Functions a process launcher runs: `torch.multiprocessing.spawn(main_worker, args=(...))` calls
`main_worker(rank, ...)`, Lightning Fabric's `fabric.launch(main, ...)` calls `main(fabric, ...)`.
The engine runs them from the launcher, on the script's arguments, not alone on unknown ones."""

from __future__ import annotations

import textwrap

from helpers import analyze, found, strip_markers

SPAWN = """
import argparse

import torch
import torch.multiprocessing as mp
import torch.nn as nn


def main_worker(rank, world_size, model, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(10):
        loss = model(torch.randn(3, 4)).pow(2).mean()
        loss.backward()
        optimizer.step()  # <- GA201


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    model = nn.Linear(4, 2)
    world_size = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=world_size, args=(world_size, model, args.lr))


if __name__ == "__main__":
    main()
"""

FABRIC = """
import lightning as L
import torch
import torch.nn as nn


def setup(optimizer: str = "AdamW", devices: int = 1):
    fabric = L.Fabric(devices=devices)
    fabric.launch(main, devices, optimizer)


def main(fabric: L.Fabric, devices: int, optimizer: str):
    model = fabric.setup_module(nn.Linear(4, 2))
    module = __import__("torch.optim", fromlist=[optimizer])
    optimizer = fabric.setup_optimizers(getattr(module, optimizer)(model.parameters(), lr=1e-3))
    fit(fabric, model, optimizer)


def fit(fabric, model, optimizer):
    for step in range(10):
        loss = model(torch.randn(3, 4)).pow(2).mean()
        fabric.backward(loss)
        optimizer.step()  # <- GA201
"""


PROCESS = """
import torch
import torch.multiprocessing as mp
import torch.nn as nn


def run(rank, world_size, model, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(10):
        loss = model(torch.randn(3, 4)).pow(2).mean()
        loss.backward()
        optimizer.step()  # <- GA201


def main():
    model = nn.Linear(4, 2)
    world_size = torch.cuda.device_count()
    children = []
    for rank in range(world_size):
        child = mp.Process(target=run, args=(rank, world_size, model, 0.1))
        children.append(child)
        child.start()
    for child in children:
        child.join()


if __name__ == "__main__":
    main()
"""


def _check(source: str):
    clean, expected = strip_markers(textwrap.dedent(source))
    result = analyze(clean, path="train.py")
    assert result.error is None
    return result, expected


def test_spawn_runs_the_worker_on_the_launchers_arguments():
    result, expected = _check(SPAWN)
    assert found(result) == expected
    (step,) = result.model.steps
    assert not step.not_understood  # the model and lr come from main(), not unknown arguments


def test_a_process_runs_its_target_on_the_given_arguments():
    result, expected = _check(PROCESS)
    assert found(result) == expected
    # one process per rank: the loop's runs each start one
    assert result.model.steps
    assert not any(step.not_understood for step in result.model.steps)  # model and lr come from main()


def test_a_thread_with_keyword_arguments_is_left_to_run_alone():
    source = PROCESS.replace(
        "mp.Process(target=run, args=(rank, world_size, model, 0.1))", "threading.Thread(target=run, kwargs={})"
    )
    source = source.replace("import torch\n", "import threading\n\nimport torch\n", 1)
    result, _ = _check(source)
    # the target then runs alone, on unknown arguments: its step is still found, not understood
    assert result.model.steps
    assert all(step.not_understood for step in result.model.steps)


def test_fabric_launch_runs_main_with_the_setup_arguments():
    result, expected = _check(FABRIC)
    assert found(result) == expected
    (step,) = result.model.steps
    assert not step.not_understood  # the optimizer named by setup()'s default is torch's AdamW


def test_launch_of_a_function_that_takes_no_fabric_is_not_a_call():
    source = FABRIC.replace("def main(fabric: L.Fabric,", "def main(trainer,").replace("# <- GA201", "")
    result, _ = _check(source)
    # main() then runs alone, on an unknown optimizer name: the optimizer is one of torch's picked by
    # that name (still never cleared), not the AdamW that setup()'s default names
    assert [o.type for o in result.model.optimizers] == ["<one picked by name>"]
