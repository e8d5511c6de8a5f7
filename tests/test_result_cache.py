"""The result cache (analysis/check/result_cache.py): a second check of an unchanged project reads
the findings back; anything an analysis depended on that changed analyses the file again."""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout

import pytest

from gradaudit.analysis.app import cli
from gradaudit.analysis.check import engine, result_cache

HELPERS = """\
def features(model, x):
    return model(x).detach()
"""

TRAIN = """\
import torch
import torch.nn as nn
from helpers import features

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(3, 4), torch.randn(3, 2))]:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(features(model, x), y)
    loss.backward()
    optimizer.step()
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "helpers.py").write_text(HELPERS)
    (proj / "train.py").write_text(TRAIN)
    monkeypatch.chdir(proj)
    return proj


class Count:
    """How many files the engine analysed (the others were read from the cache)."""

    def __init__(self, monkeypatch):
        self.n = 0
        real = engine.Analyzer.analyze_file

        def counted(an, path, program=None):
            self.n += 1
            return real(an, path, program)

        monkeypatch.setattr(engine.Analyzer, "analyze_file", counted)


def check(*args) -> tuple[list, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli.main(["check", *args, "--format", "json", "--exit-zero", "--no-progress", "-j", "1"])
    data = json.loads(out.getvalue())
    return [(f["code"], f["path"], f["line"]) for f in data["findings"]], err.getvalue()


def touch(path, text):
    path.write_text(text)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))  # a new mtime whatever the clock


def test_second_run_reads_the_cache(project, monkeypatch):
    count = Count(monkeypatch)
    first = check(".")
    assert first[0] == [("GA101", "helpers.py", 2)]
    assert count.n == 2
    second = check(".")
    assert second == first
    assert count.n == 2  # nothing analysed again


def test_a_changed_import_analyses_its_importers_again(project, monkeypatch):
    count = Count(monkeypatch)
    assert check("train.py")[0] == [("GA101", "helpers.py", 2)]
    touch(project / "helpers.py", HELPERS.replace(".detach()", ""))
    assert check("train.py")[0] == []
    assert count.n == 2


def test_same_content_new_mtime_is_still_a_hit(project, monkeypatch):
    count = Count(monkeypatch)
    check("train.py")
    touch(project / "train.py", TRAIN)
    touch(project / "helpers.py", HELPERS)
    assert check("train.py")[0] == [("GA101", "helpers.py", 2)]
    assert count.n == 1  # the content is the same: the sha256 says so


def test_an_import_that_now_resolves_analyses_again(project, monkeypatch):
    (project / "train.py").write_text(TRAIN.replace("from helpers import", "from extra import"))
    count = Count(monkeypatch)
    assert check("train.py")[0] == []  # `extra` is nowhere: an unknown call
    (project / "extra.py").write_text(HELPERS)
    assert check("train.py")[0] == [("GA101", "extra.py", 2)]
    assert count.n == 2


def test_configuration_and_no_cache(project, monkeypatch, tmp_path):
    count = Count(monkeypatch)
    check("train.py")
    assert check("train.py", "--ignore", "GA101")[0] == []  # another configuration: analysed again
    assert count.n == 2
    assert check("train.py", "--no-cache")[0] == [("GA101", "helpers.py", 2)]
    assert count.n == 3
    (tmp_path / "cache2").mkdir()
    monkeypatch.setenv("GRADAUDIT_CACHE_DIR", str(tmp_path / "cache2"))
    check("train.py", "--no-cache")
    assert not os.listdir(tmp_path / "cache2")  # --no-cache writes nothing


def test_a_timed_out_analysis_is_not_kept(project, monkeypatch):
    real = engine.Analyzer._run

    def stopped(an, *a):
        r = real(an, *a)
        r.timed_out = True
        return r

    monkeypatch.setattr(engine.Analyzer, "_run", stopped)
    count = Count(monkeypatch)
    check("train.py")
    check("train.py")
    assert count.n == 2


def test_engine_stamp_follows_the_sources():
    stamp = result_cache.engine_stamp()
    assert stamp == result_cache.engine_stamp()
    path = result_cache.__file__
    st = os.stat(path)
    try:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert result_cache.engine_stamp() != stamp
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_unreadable_cache_is_ignored(project, monkeypatch):
    check("train.py")
    folder = os.path.join(os.environ["GRADAUDIT_CACHE_DIR"], f"results-v{result_cache.FORMAT}")
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), "wb") as fh:
            fh.write(b"not a pickle")
    count = Count(monkeypatch)
    assert check("train.py")[0] == [("GA101", "helpers.py", 2)]
    assert count.n == 1
