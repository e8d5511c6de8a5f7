"""End to end with real torch: `gradaudit audit` on a training script, then the probe its report
shows, run with pytest. The probe must fail with the problems the report's runtime checks name for
the findings (and with nothing the report does not explain), and pass once the report's
corrections for those findings are applied, while the findings no probe observes stay reported."""

import json
import os
import re
import shutil
import subprocess

import pytest
from clitools import run_cli
from test_audit_report import LIFECYCLE_AND_NUMERICS, UNSAFE_LOG
from test_gradflow_emit import pytest_run

pytestmark = [pytest.mark.runtime, pytest.mark.slow]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIND = re.compile(r"^E\s+- \[([\w-]+)\]", re.M)  # a failing probe's lines: `- [stale] step 2 of ...`


def audit(folder, script):
    p = run_cli("audit", script, "--format", "json", "-o", "report.json", cwd=folder)
    assert p.returncode in (0, 1), p.stderr
    return json.loads((folder / "report.json").read_text())


def emit_and_run(folder, script, report):
    p = run_cli("probe", script, "--emit", "test_gradflow.py", cwd=folder)
    assert p.returncode == 0, p.stderr
    emitted = (folder / "test_gradflow.py").read_text()
    # the report's Verification shows the very tests gradaudit probe writes
    for check in report["verification"]["checks"]:
        assert check["locatable"] and check["test"] in emitted
    return pytest_run(folder, "test_gradflow.py")


@pytest.mark.parametrize("script", ["text_trainer.py", "lifecycle_numerics.py"])
def test_report_probe_fails_as_its_runtime_checks_say_and_passes_after_its_corrections(tmp_path, script):
    pytest.importorskip("torch")
    if script == "text_trainer.py":
        shutil.copy(os.path.join(ROOT, "examples", script), tmp_path)
    else:
        (tmp_path / script).write_text(LIFECYCLE_AND_NUMERICS)
    report = audit(tmp_path, script)
    found = report["findings"]
    observed = [f for f in found if f["runtime_check"]["check"] is not None]
    assert observed and not any(f["runtime_check"]["data_dependent"] for f in found)

    before = emit_and_run(tmp_path, script, report)
    assert before.returncode == 1, before.stdout[-3000:]
    kinds = set(KIND.findall(before.stdout))
    for f in observed:  # each finding a probe observes shows as one of the problems its check names
        assert kinds & set(f["runtime_check"]["problems"]), (f["code"], kinds, before.stdout[-3000:])
    explained = {k for f in observed for k in f["runtime_check"]["problems"]}
    assert kinds <= explained, (kinds - explained, before.stdout[-3000:])

    # the report's corrections of those findings, applied as the diffs it shows (each against the file as audited)
    for f in observed:
        assert f["correction"] is not None, f["code"]
        diff = report["corrections"][f["correction"]]["diff"]
        # git apply outside a repository works as patch(1), which a fresh machine may lack
        p = subprocess.run(["git", "apply", "-"], input=diff, cwd=tmp_path, capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr
    after = pytest_run(tmp_path, "test_gradflow.py")
    assert after.returncode == 0, after.stdout[-3000:]
    # what no probe observes is still reported, and only that
    left = audit(tmp_path, script)["findings"]
    assert sorted(f["code"] for f in left) == sorted(f["code"] for f in found if f not in observed)


def test_numerical_hazard_the_probe_batches_do_not_reach(tmp_path):
    """GA401 on log(sigmoid): the report marks its runtime check as depending on the data, and
    indeed the probe passes on batches that never underflow the sigmoid."""
    pytest.importorskip("torch")
    (tmp_path / "train.py").write_text(UNSAFE_LOG)
    report = audit(tmp_path, "train.py")
    assert {f["code"] for f in report["findings"]} == {"GA401"}
    assert all(
        f["runtime_check"]["check"] == "finite" and f["runtime_check"]["data_dependent"] for f in report["findings"]
    )
    run = emit_and_run(tmp_path, "train.py", report)
    assert run.returncode == 0, run.stdout[-3000:]
