"""The scheduler in-process, with real worker processes (or ones that cannot start)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from gradaudit.server import scheduler as sched
from gradaudit.server.settings import Settings

pytestmark = pytest.mark.asyncio

SOURCE = """import torch
import torch.nn as nn

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    out = model(torch.randn(8, 4)).detach()
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def payload(text=SOURCE, path="/tmp/gradaudit-scheduler-test.py"):
    return {"path": path, "text": text, "settings": Settings(), "root": "", "overlays": {}, "time_budget": 5.0}


async def test_an_analysis_runs_and_a_replaced_one_is_cancelled():
    s = sched.Scheduler()
    s.start()
    try:
        first = s.submit("file:///a.py", 1, payload(), (False, -1), False, len(SOURCE))
        second = s.submit("file:///a.py", 2, payload(), (False, -2), False, len(SOURCE))
        one, two = await asyncio.wait_for(asyncio.gather(first, second), 120)
        assert one.stopped == "cancelled" or one.reply is not None  # replaced while pending, or done
        assert two.reply is not None and [f.code for f in two.reply["result"].findings] == ["GA101"]
    finally:
        s.shutdown()


async def test_workers_that_cannot_start_are_not_restarted_forever(monkeypatch):
    monkeypatch.setattr(sched, "worker_command", lambda: [sys.executable, "-c", "import sys; sys.exit(3)"])
    logged = []
    s = sched.Scheduler(log=logged.append)
    s.start()
    try:
        outcome = await asyncio.wait_for(s.submit("file:///b.py", 1, payload(), (False, -1), False, 10), 60)
        assert outcome.stopped == "unavailable"
        # a few may have been starting at once when the limit was reached: bounded, not endless
        assert s.unavailable and sched.START_FAILURES <= s.start_failures <= sched.START_FAILURES + 2
        await asyncio.sleep(1.0)
        assert s.workers() == [] or all(w.dead for w in s.workers())
        assert sum("cannot start" in m for m in logged) == 1
        later = await asyncio.wait_for(s.submit("file:///b.py", 2, payload(), (False, -2), False, 10), 10)
        assert later.stopped == "unavailable"
    finally:
        s.shutdown()


async def test_a_worker_forgets_the_files_changed_on_disk_and_everything_when_it_missed_some(monkeypatch):
    # every job carries the server's recent changes: a worker drops the parsed modules it has not
    # seen change; one that started late or missed changes no longer listed drops all it keeps
    from gradaudit.server import worker

    monkeypatch.setattr(worker, "_SEEN", 0)
    monkeypatch.setattr(worker, "_PARSED", {"/p/a.py": 1, "/p/b.py": 2, "/p/c.py": 3})
    monkeypatch.setattr(worker, "_LIBRARIES", {})
    worker.apply_changes(2, ((1, "/p/a.py"), (2, "/p/b.py")))
    assert worker._PARSED == {"/p/c.py": 3} and worker._SEEN == 2
    worker._PARSED["/p/a.py"] = 4
    worker.apply_changes(2, ((1, "/p/a.py"), (2, "/p/b.py")))  # nothing new: kept
    assert worker._PARSED == {"/p/c.py": 3, "/p/a.py": 4}
    worker.apply_changes(9, ((8, "/p/x.py"), (9, "/p/y.py")))  # 3..7 were missed
    assert worker._PARSED == {} and worker._SEEN == 9


async def test_a_worker_warms_up_on_its_own_snippet_and_keeps_nothing_of_it(monkeypatch, tmp_path):
    """Before it says it is ready, a worker analyses its bundled training step: what a first job
    would load (the default environment's library models, the engine's tables) is loaded, nothing
    is read from disk, and no parsed module or finding of the snippet is kept for the jobs."""
    import builtins

    from gradaudit.server import worker

    monkeypatch.setattr(worker, "_PARSED", {})
    monkeypatch.setattr(worker, "_LIBRARIES", {})
    monkeypatch.chdir(tmp_path)
    opened = []
    real_open = builtins.open

    def spy(file, *a, **k):
        opened.append(str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", spy)
    worker.warm_up()
    assert worker._PARSED == {}
    assert len(worker._LIBRARIES) == 1  # the default environment, as a first job uses it
    assert not [f for f in opened if "warm-up" in f or f.startswith(str(tmp_path))]
    # the snippet is a real training step: the warm-up runs the engine's whole path, rules included
    from gradaudit.analysis.check.engine import Analyzer

    result = Analyzer().analyze_source("/gradaudit-warm-up/train.py", worker.WARM_UP)
    assert result.model.steps and result.findings == []


async def test_a_worker_reads_each_documents_environment(monkeypatch, tmp_path):
    """The server finds the environment per document, as the CLI does (up to the workspace root);
    an `interpreter` setting that cannot be read is a problem shown once, and the search takes over."""
    from libenv import make_env

    from gradaudit.server import worker
    from gradaudit.server.settings import Settings

    monkeypatch.setattr(worker, "_LIBRARIES", {})
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    venv = make_env(ws, name=".venv")
    text = "import torch\nfrom fakevision import TinyNet\nmodel = TinyNet()\n"
    job = {
        "path": str(ws / "pkg" / "train.py"),
        "text": text,
        "settings": Settings(),
        "root": str(ws),
        "overlays": {},
    }
    reply = worker.analyze(job)
    use = reply["result"].libraries
    assert (use.prefix, use.how, use.found, use.missing) == (venv, "project", ("fakevision",), ("torch",))
    assert reply["config_problems"] == ()
    reply = worker.analyze(dict(job, settings=Settings(interpreter=str(tmp_path / "gone" / "python"))))
    (problem,) = reply["config_problems"]
    assert str(problem) == (
        f"client settings: gradaudit interpreter: {tmp_path / 'gone' / 'python'}: no such file or folder "
        "(give a Python interpreter or the folder of an environment)"
    )
    assert reply["result"].libraries.prefix == venv
    reply = worker.analyze(dict(job, settings=Settings(interpreter=venv)))
    use = reply["result"].libraries
    assert (use.how, use.why) == ("explicit", "named by the editor's `interpreter` setting")
