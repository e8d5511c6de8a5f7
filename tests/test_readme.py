"""The README's two opening commands stay true: CI runs the second, the first checks examples/."""
import os
import re
import subprocess
import sys

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
    p = subprocess.run([sys.executable, "-m", "gradaudit.analysis.cli", "check", "examples/"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    codes = set(re.findall(r": (GA\d{3}) \[confirmed\]", p.stdout))
    assert {"GA101", "GA103", "GA107", "GA108", "GA109", "GA110", "GA111"} <= codes
    assert "gan_training.py" not in p.stdout   # the clean look-alike stays clean
