"""Reductions of false alarms found on real code (tests/data/realcode_reductions/).

Each script rewrites, minimally and in our own words, a pattern of published training code on which
gradaudit reported a confirmed finding that review judged false. Its header names the finding
(`# reduction-of: SOURCE PATH:LINE CODE`), the codes it must not draw confirmed (`# false: GA104`) and,
for a false suspicious finding, optionally codes it must not draw at all (`# quiet: GA205`); its
docstring says why, verified with torch. The static test analyzes each script RUNS times in a row
in one fresh process and asserts that no run draws a confirmed finding of those codes and that every run
finds the same: some false alarms on real code came and went with what the process had analyzed before.
The runtime test runs the script under torch, where its own asserts check the claim.

STILL_WRONG lists the reductions the engine gets wrong today: they are strict xfails, so a fix turns
them into failures until the entry is removed here.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest
from clitools import clean_env
from runtime.forkrun import run_scripts

HERE = os.path.join(os.path.dirname(__file__), "data", "realcode_reductions")
SCRIPTS = sorted(glob.glob(os.path.join(HERE, "*.py")))

RUNS = 16

# the engine's open false alarms
STILL_WRONG: set = set()
# criterion_chosen_by_option_twice.py: two choices of one option made in two functions are still
# joined, but the input of the other branch is a biased layer's output, whose norm is not 0 (Mark.DENSE)

# One fresh process per script: what it analyzed before is then the same on every machine and in any test order.
_PROBE = """
import json, os, sys
from gradaudit.analysis.check.engine import Analyzer
path, runs = sys.argv[1], int(sys.argv[2])
with open(path, encoding="utf-8") as fh:
    source = fh.read()
out = []
for _ in range(runs):
    r = Analyzer().analyze_source(os.path.basename(path), source)
    assert r.error is None, r.error
    out.append(sorted([f.span.line, f.code, f.confidence, f.message] for f in r.findings))
print(json.dumps(out))
"""


def header(path: str) -> dict:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"#\s*(reduction-of|false|quiet):\s*(.+?)\s*$", line)
            if not m:
                break
            out[m.group(1)] = m.group(2)
    return out


def _cases():
    for path in SCRIPTS:
        name = os.path.basename(path)
        marks = (
            [pytest.mark.xfail(strict=True, reason="the engine still reports this false alarm")]
            if name in STILL_WRONG
            else []
        )
        yield pytest.param(path, id=name, marks=marks)


def test_every_reduction_names_its_finding():
    assert SCRIPTS, "no reductions"
    assert {os.path.basename(p) for p in SCRIPTS} >= STILL_WRONG, "STILL_WRONG names a missing script"
    for path in SCRIPTS:
        h = header(path)
        assert re.fullmatch(r"\S+ \S.*:\d+ GA\d{3}", h.get("reduction-of", "")), (path, h)
        assert re.fullmatch(r"GA\d{3}(, *GA\d{3})*", h.get("false", "")), (path, h)
        assert re.fullmatch(r"(GA\d{3}(, *GA\d{3})*)?", h.get("quiet", "")), (path, h)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        assert "Verified with torch" in text or "Not verifiable with torch" in text, path


@pytest.mark.parametrize("path", list(_cases()))
def test_reduction_draws_no_confirmed_false_alarm(path):
    h = header(path)
    codes = {c.strip() for c in h["false"].split(",")}
    quiet = {c.strip() for c in h.get("quiet", "").split(",") if c.strip()}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, path, str(RUNS)], capture_output=True, text=True, env=clean_env(), timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = json.loads(proc.stdout)

    def bad(code, conf):
        return code in quiet or (code in codes and conf == "confirmed")

    wrong = sorted(
        {f"{line}: {code} [{conf}] {msg}" for run in runs for line, code, conf, msg in run if bad(code, conf)}
    )
    hits = sum(1 for run in runs if any(bad(code, conf) for _, code, conf, _ in run))
    assert not wrong, f"in {hits} of {RUNS} consecutive analyses:\n" + "\n".join(wrong)
    assert all(run == runs[0] for run in runs), "the findings change from one analysis of the same file to the next"


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Each script run as `python SCRIPT` in a folder of its own, torch imported once for all (forkrun.py)."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (the `test` extra)")
    jobs = [{"id": p, "script": p, "cwd": str(tmp_path_factory.mktemp("run"))} for p in SCRIPTS]
    return run_scripts(jobs)


@pytest.mark.runtime
@pytest.mark.slow
@pytest.mark.parametrize("path", SCRIPTS, ids=os.path.basename)
def test_reduction_runs_as_its_header_says(path, ran):
    proc = ran[path]
    assert proc["returncode"] == 0, proc["stderr"][-3000:]
    assert proc["stdout"].strip().endswith("OK"), proc["stdout"][-2000:]
