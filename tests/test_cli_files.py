"""The command line and the file system: every file it cannot read or write is one clear line,
the rest of the run goes on, and the exit status says 2 when something could not be done."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import jsonschema
import pytest
from clitools import REPO, clean_env, codes_in, example, nonempty_lines, run_cli, run_main, write, write_example

from gradaudit.analysis.source import program

SAFE_FIX = "GA109"  # a rule whose first example has a safe fix
HEAD = "import torch\nimport torch.nn as nn\n"


def _fixable(tmp_path, name):
    path = write_example(tmp_path / name, SAFE_FIX)
    assert example(SAFE_FIX)[2].fixed, "the example must have a fix"
    return path


# ------------------------------------------------------------------ --fix and -o


def test_fix_on_a_read_only_file_is_one_line_and_the_other_file_is_fixed(tmp_path):
    ro = _fixable(tmp_path, "a_readonly.py")
    rw = _fixable(tmp_path, "b_writable.py")
    before = ro.read_text()
    ro.chmod(0o444)
    try:
        r = run_cli("check", "--fix", "a_readonly.py", "b_writable.py", cwd=tmp_path)
    finally:
        ro.chmod(0o644)
    assert "Traceback" not in r.stderr
    assert "a_readonly.py: error: could not write fixes: Permission denied" in r.stderr
    assert r.returncode == 2  # before: 1 ("findings") after a traceback
    assert ro.read_text() == before
    assert rw.read_text() == example(SAFE_FIX)[2].fixed
    assert "Fixed 1 finding in 1 file." in r.stderr


def test_fix_write_failure_is_in_the_json_report(tmp_path, capsys, monkeypatch):
    _fixable(tmp_path, "a.py")

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(program.os, "replace", refuse)
    code, out, err = run_main(["check", "--fix", "--format", "json", "a.py"], tmp_path, capsys, monkeypatch)
    assert code == 2
    report = json.loads(out)
    assert [(e["kind"], e["path"]) for e in report["errors"]] == [("write", "a.py")]
    assert "No space left on device" in report["errors"][0]["message"]


def test_fix_is_atomic_a_failed_write_leaves_the_file_whole(tmp_path, capsys, monkeypatch):
    path = _fixable(tmp_path, "train.py")
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise KeyboardInterrupt  # killed between writing the new text and putting it in place

    monkeypatch.setattr(program.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        program.write_source(str(path), "x = 1\n", "utf-8")
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["train.py"]  # no temporary file left behind


def test_fix_keeps_the_mode_and_symlinks(tmp_path):
    real = _fixable(tmp_path, "real.py")
    real.chmod(0o751)
    link = tmp_path / "link.py"
    link.symlink_to("real.py")
    r = run_cli("check", "--fix", "link.py", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert link.is_symlink() and os.readlink(link) == "real.py"
    assert real.read_text() == example(SAFE_FIX)[2].fixed
    assert stat.S_IMODE(real.stat().st_mode) == 0o751


def test_fix_keeps_a_bom_and_crlf(tmp_path):
    src = example(SAFE_FIX)[0]
    path = tmp_path / "train.py"
    path.write_bytes(b"\xef\xbb\xbf" + src.replace("\n", "\r\n").encode())
    r = run_cli("check", "--fix", "train.py", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data[3:].decode() == example(SAFE_FIX)[2].fixed.replace("\n", "\r\n")


def test_output_into_a_missing_folder_is_one_line_exit_2(tmp_path):
    write_example(tmp_path / "train.py", "GA101")
    r = run_cli("check", "-o", "no/such/folder/report.txt", "train.py", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    assert nonempty_lines(r.stderr) == [
        "gradaudit: could not write no/such/folder/report.txt: No such file or directory"
    ]
    assert r.returncode == 2  # before: 1 after a traceback


def test_output_file_written_exit_as_usual(tmp_path):
    write_example(tmp_path / "train.py", "GA101")
    r = run_cli("check", "-o", "report.txt", "train.py", cwd=tmp_path)
    assert r.returncode == 1 and "GA101" in (tmp_path / "report.txt").read_text()


# ------------------------------------------------------------------ reading


def test_explicit_symlink_loop_says_so(tmp_path):
    (tmp_path / "loop.py").symlink_to("loop.py")
    r = run_cli("check", "loop.py", cwd=tmp_path)
    assert "too many levels of symbolic links" in r.stderr.lower()  # before: "no such file"
    assert "no such file" not in r.stderr
    assert r.returncode == 2


def test_symlink_loop_inside_a_folder_is_a_read_error(tmp_path):
    write_example(tmp_path / "src" / "train.py", "GA101")
    (tmp_path / "src" / "loop.py").symlink_to("loop.py")
    r = run_cli("check", "src", cwd=tmp_path)
    assert codes_in(r.stdout) == {"GA101"}
    assert "src/loop.py: error: could not read: Too many levels of symbolic links" in r.stderr
    assert r.returncode == 2


def test_unreadable_folder_is_reported_in_process(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "src" / "train.py", "GA101")
    (tmp_path / "src" / "secret").mkdir()
    write_example(tmp_path / "src" / "secret" / "hidden.py", "GA101")
    real_scandir = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "secret":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = run_main(["check", "src"], tmp_path, capsys, monkeypatch)
    assert "src/secret: error: could not read folder: Permission denied" in err  # before: skipped silently
    assert codes_in(out) == {"GA101"}
    assert code == 2


def _as_nobody():
    """A command prefix that drops root (root reads folders whatever their mode)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv")
    return [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def test_unreadable_folder_for_real(tmp_path):
    work = tmp_path / "w"
    write_example(work / "train.py", "GA101")
    write_example(work / "secret" / "hidden.py", "GA101")
    for p in [tmp_path, work, work / "train.py", work / "secret" / "hidden.py"]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    prefix = _as_nobody()
    probe = subprocess.run(
        prefix + [sys.executable, "-c", "import gradaudit.analysis.app.cli"],
        cwd=work,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        pytest.skip(f"the unprivileged user cannot run the project's interpreter here: {probe.stderr[-200:]}")
    (work / "secret").chmod(0o000)
    try:
        r = subprocess.run(
            prefix + [sys.executable, "-m", "gradaudit.analysis.app.cli", "check", "."],
            cwd=work,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        (work / "secret").chmod(0o755)
    assert "secret: error: could not read folder: Permission denied" in r.stderr, r.stderr
    assert codes_in(r.stdout) == {"GA101"}
    assert r.returncode == 2


def test_nul_byte_is_reported_at_its_real_line(tmp_path):
    (tmp_path / "nul.py").write_bytes(b"import torch\n\nx = 1\ny = 'a\x00b'\n")
    r = run_cli("check", "nul.py", cwd=tmp_path)
    assert nonempty_lines(r.stderr) == [
        "nul.py:4:7: error: could not parse: source code string cannot contain null bytes"
    ]  # before: nul.py:1:1
    assert r.returncode == 1


def test_latin1_without_cookie_is_refused(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"import torch\nname = 'caf\xe9'\n")
    r = run_cli("check", "latin.py", cwd=tmp_path)
    assert nonempty_lines(r.stderr) == [
        "latin.py:2:12: error: could not parse: Non-UTF-8 code starting with "
        "'\\xe9' on line 2, but no encoding declared"
    ]
    assert r.returncode == 1
    (tmp_path / "ok.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n")
    ok = run_cli("check", "ok.py", cwd=tmp_path)
    assert ok.returncode == 0 and ok.stderr == ""


# ------------------------------------------------------------------ errors as data


def test_json_carries_parse_read_and_missing_errors(tmp_path):
    write(tmp_path / "broken.py", "import torch\n\ndef f(:\n    pass\n")
    write_example(tmp_path / "train.py", "GA101")
    (tmp_path / "loop.py").symlink_to("loop.py")
    r = run_cli("check", "--format", "json", "broken.py", "train.py", "loop.py", "gone.py", cwd=tmp_path)
    report = json.loads(r.stdout)
    assert report["version"] == 1 and [f["code"] for f in report["findings"]] == ["GA101"]
    errors = {(e["kind"], e["path"], e["line"]) for e in report["errors"]}
    assert errors == {("parse", "broken.py", 3), ("missing", "loop.py", None), ("missing", "gone.py", None)}
    assert r.returncode == 2


def test_json_carries_an_incomplete_analysis(tmp_path):
    write(tmp_path / "deep.py", HEAD + "flag = " + "not " * 2000 + "True\n")
    r = run_cli("check", "--format", "json", "deep.py", cwd=tmp_path)
    report = json.loads(r.stdout)
    assert report["errors"] == []
    [gap] = report["incomplete"]
    assert (gap["path"], gap["line"]) == ("deep.py", 3)
    assert gap["message"].startswith("analysis incomplete: ")
    assert r.returncode == 0


@pytest.fixture(scope="module")
def sarif_schema():
    return json.loads((REPO / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def test_sarif_carries_read_and_internal_errors_and_validates(tmp_path, sarif_schema):
    write_example(tmp_path / "train.py", "GA101")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")
    write(tmp_path / "deep.py", HEAD + "flag = " + "not " * 2000 + "True\n")
    r = run_cli("check", "--format", "sarif", "train.py", "latin.py", "deep.py", "gone.py", cwd=tmp_path)
    log = json.loads(r.stdout)
    jsonschema.validate(log, sarif_schema)
    inv = log["runs"][0]["invocations"][0]
    notes = {
        (n["descriptor"]["id"], n["level"], n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for n in inv["toolExecutionNotifications"]
    }
    assert notes == {
        ("gradaudit/parse", "error", "latin.py"),
        ("gradaudit/incomplete", "warning", "deep.py"),
        ("gradaudit/missing", "error", "gone.py"),
    }
    assert inv["executionSuccessful"] is False
    assert r.returncode == 2


# ------------------------------------------------------------------ the summary never contradicts


def test_deep_nesting_is_not_an_internal_error_and_the_summary_says_incomplete(tmp_path):
    write(tmp_path / "deep.py", HEAD + "x = " + "+".join(["a"] * 2000) + "\n")
    r = run_cli("check", "deep.py", cwd=tmp_path)
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert nonempty_lines(r.stderr)[0].startswith("deep.py:3:")
    assert "analysis incomplete" in r.stderr
    assert r.stdout.strip() == "No findings in 1 file checked; analysis incomplete in 1 file."
    assert r.returncode == 0


def test_internal_error_summary_does_not_say_no_findings_in_the_file(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "train.py", "GA101")
    from gradaudit.analysis.check import engine

    def boom(self, *a, **k):
        raise ValueError("engine bug")

    monkeypatch.setattr(engine.Analyzer, "_analyze", boom)
    code, out, err = run_main(["check", "train.py"], tmp_path, capsys, monkeypatch)
    assert code == 2
    assert "train.py: error: internal error: ValueError: engine bug" in err
    assert out.strip() == "No findings in 0 files checked; 1 internal error."  # before: "No findings in 1 file"


def test_time_budget_option(tmp_path):
    src = HEAD + "".join(f"for i{k} in range(2):\n    v{k} = i{k}\n" for k in range(6000))
    write(tmp_path / "slow.py", src)
    r = run_cli("check", "--time-budget", "0.2", "slow.py", cwd=tmp_path)
    assert "analysis incomplete: the time budget of 0.2 s ran out" in r.stderr
    assert r.returncode == 0
