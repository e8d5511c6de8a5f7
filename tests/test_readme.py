"""The README's two opening commands stay true: CI runs the second, the first checks examples/."""

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def readme_commands():
    with open(os.path.join(ROOT, "README.md")) as fh:
        text = fh.read()
    return re.findall(r"```sh\n(.*?)\n```", text, re.S)[:2]


def test_ci_runs_the_readme_test_command():
    main_cmd, test_cmd = readme_commands()
    with open(os.path.join(ROOT, ".ci", "run")) as fh:
        ci = fh.read()
    m = re.search(r'^TEST_COMMAND="(.*)"$', ci, re.M)
    assert m is not None
    assert m.group(1) == test_cmd
    assert "pytest" in test_cmd and "[test]" in test_cmd
    assert os.access(os.path.join(ROOT, ".ci", "run"), os.X_OK)


def test_main_command_checks_the_examples():
    main_cmd, _ = readme_commands()
    assert main_cmd.startswith("python3 -m venv .venv") and main_cmd.endswith("gradaudit check examples/")
    # the part after the set-up, with this interpreter's gradaudit
    p = subprocess.run(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", "check", "examples/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1, p.stderr
    codes = set(re.findall(r": (GA\d{3}) \[confirmed\]", p.stdout))
    assert {"GA101", "GA103", "GA107", "GA108", "GA109", "GA110", "GA111", "GA202", "GA301", "GA303", "GA408"} <= codes
    assert "gan_training.py" not in p.stdout  # the clean look-alike stays clean


def test_the_sample_output_is_what_check_prints():
    """Issue 23: the README showed the examples' findings in another order than `gradaudit check
    examples/` prints them (files in path order, findings by line): the sample is the real output."""
    with open(os.path.join(ROOT, "README.md")) as fh:
        text = fh.read()
    shown = re.search(r"```console\n\$ gradaudit check examples/\n(.*?)\n```", text, re.S).group(1)
    p = subprocess.run(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", "check", "examples/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.splitlines() == p.stdout.splitlines()


def fresh_clone(where):
    """What `git clone` of this working tree gives: the files git tracks (and new ones it would)."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for rel in filter(None, files):
        src = os.path.join(ROOT, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.join(where, os.path.dirname(rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(where, rel))
    return where


@pytest.mark.slow
def test_readme_commands_on_a_fresh_clone(tmp_path):
    """Issue 14: the README's commands, as written, in a fresh clone: the first checks the
    examples; the second installs the test extra and runs pytest (here on the docs' tests, which
    walk every link and command of README.md and docs/)."""
    clone = fresh_clone(str(tmp_path / "gradaudit"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    main_cmd, test_cmd = readme_commands()
    p = subprocess.run(["bash", "-c", main_cmd], cwd=clone, capture_output=True, text=True, timeout=900, env=env)
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]  # 1: the examples have findings
    codes = set(re.findall(r": (GA\d{3}) \[confirmed\]", p.stdout))
    assert {
        "GA101",
        "GA103",
        "GA107",
        "GA108",
        "GA109",
        "GA110",
        "GA111",
        "GA202",
        "GA301",
        "GA303",
        "GA408",
    } <= codes, p.stdout
    assert "Traceback" not in p.stderr
    install, _, pytest_part = test_cmd.rpartition(" && ")
    assert pytest_part == ".venv/bin/python -m pytest -q"
    p = subprocess.run(
        ["bash", "-c", f"{install} && {pytest_part} tests/test_docs.py tests/test_readme.py -m 'not slow'"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert " passed" in p.stdout.splitlines()[-1]
