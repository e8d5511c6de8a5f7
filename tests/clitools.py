"""Helpers for the command-line tests: rule examples written to disk, the CLI run as a
subprocess or in-process, the text output parsed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers import strip_markers

from gradaudit.analysis.app import cli
from gradaudit.analysis.rules import BY_CODE, RULES

REPO = Path(__file__).resolve().parents[1]
ALL_CODES = [r.code for r in RULES]

# `path:line:col: GA101 [confirmed] message`
TEXT_LINE = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>GA\d{3}) "
    r"\[(?P<confidence>confirmed|suspicious)\] (?P<message>\S.*)$"
)


def example(code: str, index: int = 0):
    """(source without markers, [(line, code)...], the Example) of a rule's invalid example."""
    ex = BY_CODE[code].invalid[index]
    source, expected = strip_markers(ex.source)
    return source, expected, ex


def valid_example(code: str, index: int = 0) -> str:
    return strip_markers(BY_CODE[code].valid[index].source)[0]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


def write_example(path: Path, code: str, index: int = 0) -> Path:
    return write(path, example(code, index)[0])


def write_all_first_examples(folder: Path) -> dict:
    """One file per rule (its first invalid example): {code: path}."""
    return {code: write_example(folder / f"{code.lower()}.py", code) for code in ALL_CODES}


def clean_env() -> dict:
    env = dict(os.environ)
    for var in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP"):
        env.pop(var, None)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def run_cli(*args, cwd, timeout=300) -> subprocess.CompletedProcess:
    """`python -m gradaudit.analysis.app.cli ARGS` in `cwd`."""
    return subprocess.run(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", *map(str, args)],
        cwd=str(cwd),
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_main(args, cwd, capsys, monkeypatch):
    """`gradaudit.analysis.app.cli.main(ARGS)` in-process in `cwd`: (exit code, stdout, stderr)."""
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def finding_lines(stdout: str) -> list:
    """The finding lines of the text output, parsed: [(path, line, col, code, confidence)]."""
    out = []
    for line in stdout.splitlines():
        m = TEXT_LINE.match(line)
        if m:
            out.append((m["path"], int(m["line"]), int(m["col"]), m["code"], m["confidence"]))
    return out


def codes_in(stdout: str) -> set:
    return {f[3] for f in finding_lines(stdout)}


def nonempty_lines(text: str) -> list:
    return [line for line in text.splitlines() if line.strip()]
