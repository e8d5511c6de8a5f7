"""`gradaudit check | rule | rules` from the command line: as a subprocess
(`python -m gradaudit.analysis.app.cli`) and in-process (`cli.main([...])`)."""

from __future__ import annotations

import importlib.metadata
import json
import re

import pytest
from clitools import (
    ALL_CODES,
    TEXT_LINE,
    codes_in,
    example,
    finding_lines,
    nonempty_lines,
    run_cli,
    run_main,
    valid_example,
    write,
    write_all_first_examples,
    write_example,
)

from gradaudit.analysis.rules import RULES

BROKEN = "import torch\n\ndef f(:\n    pass\n"  # a syntax error on line 3


# ------------------------------------------------------------------ text format, exit codes


def test_text_format_subprocess(tmp_path):
    write_example(tmp_path / "train.py", "GA101")
    r = run_cli("check", "train.py", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    # the anchor `encoder(x).detach()` starts at 0-based column 12 of line 12: 1-based column 13
    assert lines[0].startswith("train.py:12:13: GA101 [confirmed] `.detach()` cuts gradient")
    assert TEXT_LINE.match(lines[0])
    assert lines[-1].startswith("Found 1 finding (1 confirmed, 0 suspicious) in 1 file checked.")
    # how many training steps were understood: every one
    assert lines[1] == "1 of 1 training step understood."
    assert len(lines) == 3
    assert r.stderr == ""


def test_text_format_in_process(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "train.py", "GA101")
    code, out, err = run_main(["check", "train.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert finding_lines(out) == [("train.py", 12, 13, "GA101", "confirmed")]
    # the same report as the subprocess gives
    assert out == run_cli("check", "train.py", cwd=tmp_path).stdout


def test_every_example_reports_its_marked_lines(tmp_path, capsys, monkeypatch):
    expected = set()
    for rule in RULES:
        for i in range(len(rule.invalid)):
            name = f"{rule.code.lower()}_{i}.py"
            write_example(tmp_path / name, rule.code, i)
            expected |= {(name, line, c) for line, c in example(rule.code, i)[1]}
    code, out, err = run_main(["check", "-j", "1", "."], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert {(p, line, c) for p, line, _, c, _ in finding_lines(out)} == expected
    n = sum(len(r.invalid) for r in RULES)
    assert f"in {n} files checked." in out.splitlines()[-1]


def test_no_findings_exit_zero(tmp_path, capsys, monkeypatch):
    write(tmp_path / "ok.py", valid_example("GA101"))
    code, out, err = run_main(["check", "ok.py"], tmp_path, capsys, monkeypatch)
    assert code == 0
    assert finding_lines(out) == []
    said = "1 of 1 training step understood.\nNo findings in 1 file checked."
    assert out.strip() == said
    r = run_cli("check", "ok.py", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == said


def test_exit_zero_flag(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "train.py", "GA101")
    code, out, _ = run_main(["check", "--exit-zero", "train.py"], tmp_path, capsys, monkeypatch)
    assert code == 0
    assert codes_in(out) == {"GA101"}


def test_output_file(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "train.py", "GA101")
    code, out, _ = run_main(
        ["check", "--format", "json", "-o", "report.json", "train.py"], tmp_path, capsys, monkeypatch
    )
    assert code == 1
    assert out == ""
    report = json.loads((tmp_path / "report.json").read_text())
    assert [f["code"] for f in report["findings"]] == ["GA101"]


@pytest.mark.parametrize(
    "args, stderr_has",
    [
        (["check", "--bogus", "."], "unrecognized arguments: --bogus"),
        (["check", "--format", "xml", "."], "invalid choice"),
        (["check", "missing.py"], "missing.py"),
        (["check", "missing_dir"], "missing_dir"),
        (["rule", "GA999"], "GA999"),
        (["rule", "no-such-rule"], "no-such-rule"),
        (["frobnicate"], "invalid choice"),
        ([], ""),
    ],
    ids=[
        "unknown-option",
        "unknown-format",
        "missing-file",
        "missing-dir",
        "unknown-rule-code",
        "unknown-rule-name",
        "unknown-command",
        "no-arguments",
    ],
)
def test_usage_errors_exit_2(tmp_path, args, stderr_has):
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert stderr_has in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("args", [["check", "--bogus", "."], ["check", "missing.py"], ["rule", "GA999"], []])
def test_usage_errors_exit_2_in_process(tmp_path, capsys, monkeypatch, args):
    code, out, err = run_main(args, tmp_path, capsys, monkeypatch)
    assert code == 2


def test_missing_path_beside_real_file_still_reports_and_exits_2(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "train.py", "GA101")
    code, out, err = run_main(["check", "train.py", "nope.py"], tmp_path, capsys, monkeypatch)
    assert code == 2
    assert codes_in(out) == {"GA101"}
    assert "nope.py: no such file or directory" in err


def test_version(tmp_path):
    r = run_cli("--version", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.strip() == f"gradaudit {importlib.metadata.version('gradaudit')}"


# ------------------------------------------------------------------ folders


def test_folder_recursion_and_skipped_folders(tmp_path):
    proj = tmp_path / "proj"
    write_example(proj / "a.py", "GA101")
    write_example(proj / "pkg" / "deep" / "b.py", "GA102")
    write_example(proj / "environments" / "c.py", "GA104")  # a plain folder: checked
    write(proj / "notes.txt", example("GA101")[0])  # not a Python file
    for venv in (".venv", "venv", "tools_env"):  # virtualenvs, whatever their name
        write(proj / venv / "pyvenv.cfg", "home = /usr/bin\n")
        write_example(proj / venv / "lib" / "site.py", "GA101")
    for skipped in ("build", ".git", "__pycache__"):
        write_example(proj / skipped / "x.py", "GA101")
    write_example(proj / "pkg" / "__pycache__" / "y.py", "GA101")

    r = run_cli("check", "proj", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    got = sorted((p, c) for p, _, _, c, _ in finding_lines(r.stdout))
    assert got == [("proj/a.py", "GA101"), ("proj/environments/c.py", "GA104"), ("proj/pkg/deep/b.py", "GA102")]
    assert "in 3 files checked." in r.stdout


def test_explicit_file_inside_skipped_folder_is_checked(tmp_path, capsys, monkeypatch):
    write(tmp_path / "build" / "pyvenv.cfg", "")
    write_example(tmp_path / "build" / "gen.py", "GA101")
    code, out, _ = run_main(["check", "build/gen.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert finding_lines(out)[0][:1] == ("build/gen.py",)


def test_several_paths_and_duplicates_checked_once(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "a" / "x.py", "GA101")
    write_example(tmp_path / "b" / "y.py", "GA102")
    code, out, _ = run_main(["check", "a", "b/y.py", "a/x.py", "./a"], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert sorted((p, c) for p, _, _, c, _ in finding_lines(out)) == [("a/x.py", "GA101"), ("b/y.py", "GA102")]
    assert "in 2 files checked." in out


# ------------------------------------------------------------------ files that do not parse


def test_unparseable_file_one_line_on_stderr_others_still_checked(tmp_path):
    write(tmp_path / "src" / "broken.py", BROKEN)
    write_example(tmp_path / "src" / "train.py", "GA101")
    r = run_cli("check", "src", cwd=tmp_path)
    err = nonempty_lines(r.stderr)
    assert len(err) == 1, r.stderr
    assert re.match(r"^src/broken\.py:3:\d+: .*could not parse.*\S", err[0]), err[0]
    assert [(p, c) for p, _, _, c, _ in finding_lines(r.stdout)] == [("src/train.py", "GA101")]
    assert r.returncode == 1


def test_unparseable_file_in_process(tmp_path, capsys, monkeypatch):
    write(tmp_path / "broken.py", BROKEN)
    write_example(tmp_path / "train.py", "GA102")
    code, out, err = run_main(["check", "broken.py", "train.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert codes_in(out) == {"GA102"}
    assert len(nonempty_lines(err)) == 1 and err.startswith("broken.py:3:")


def test_only_unparseable_file_is_not_clean(tmp_path):
    write(tmp_path / "broken.py", BROKEN)
    r = run_cli("check", "broken.py", cwd=tmp_path)
    assert r.returncode != 0
    assert nonempty_lines(r.stderr)[0].startswith("broken.py:3:")


def test_unparseable_file_among_many_files_with_workers(tmp_path):
    for i in range(20):
        write_example(tmp_path / "src" / f"t{i:02d}.py", "GA101")
    write(tmp_path / "src" / "broken.py", BROKEN)
    r = run_cli("check", "-j", "2", "src", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    err = nonempty_lines(r.stderr)
    assert len(err) == 1 and err[0].startswith("src/broken.py:3:")
    assert len(finding_lines(r.stdout)) == 20
    assert r.returncode == 1


def test_many_files_with_workers_same_as_one_process(tmp_path):
    files = write_all_first_examples(tmp_path / "src")
    for i in range(8):
        write_example(tmp_path / "src" / f"extra{i}.py", "GA101", i % 4)
    assert len(files) + 8 >= 16  # enough files for the process pool
    par = run_cli("check", "-j", "2", "src", cwd=tmp_path)
    seq = run_cli("check", "-j", "1", "src", cwd=tmp_path)
    assert par.returncode == seq.returncode == 1
    assert par.stdout == seq.stdout
    assert len(finding_lines(par.stdout)) >= 19


def test_utf8_bom_file_is_analyzed(tmp_path):
    (tmp_path / "train.py").write_bytes(b"\xef\xbb\xbf" + example("GA101")[0].encode())
    r = run_cli("check", "train.py", cwd=tmp_path)
    assert r.stderr == ""
    assert finding_lines(r.stdout) == [("train.py", 12, 13, "GA101", "confirmed")]


# ------------------------------------------------------------------ --select / --ignore

EVERY = set(ALL_CODES)
GA1XX = {c for c in ALL_CODES if c.startswith("GA1")}
GA10X = {c for c in ALL_CODES if c.startswith("GA10")}
GA11X = {c for c in ALL_CODES if c.startswith("GA11")}


@pytest.mark.parametrize(
    "args, expected",
    [
        ([], EVERY),
        (["--select", "GA101"], {"GA101"}),
        (["--select", "ga101"], {"GA101"}),
        (["--select", "detach-cuts-loss"], {"GA101"}),
        (["--select", "GA1"], GA1XX),
        (["--select", "GA10"], GA10X),
        (["--select", "GA11"], GA11X),
        (["--select", "GA101,no-grad-loss"], {"GA101", "GA102"}),
        (["--select", "GA101", "--select", "GA109"], {"GA101", "GA109"}),
        (["--select", "GA101", "--extend-select", "inplace-leaf-update"], {"GA101", "GA111"}),
        (["--ignore", "GA101"], EVERY - {"GA101"}),
        (["--ignore", "detach-cuts-loss,GA102"], EVERY - {"GA101", "GA102"}),
        (["--ignore", "GA11"], EVERY - GA11X),
        (["--ignore", "GA1"], EVERY - GA1XX),
        (["--select", "GA10", "--ignore", "GA101", "--ignore", "tensor-rewrap"], GA10X - {"GA101", "GA104"}),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_select_ignore(tmp_path, capsys, monkeypatch, args, expected):
    write_all_first_examples(tmp_path)
    code, out, err = run_main(["check", *args, "."], tmp_path, capsys, monkeypatch)
    assert codes_in(out) == expected
    assert code == (1 if expected else 0)


def test_select_by_name_subprocess(tmp_path):
    write_all_first_examples(tmp_path)
    r = run_cli("check", "--select", "no-grad-loss,GA11", "--ignore", "GA110", ".", cwd=tmp_path)
    assert r.returncode == 1
    assert codes_in(r.stdout) == {"GA102", "GA111", "GA112", "GA113"}


def test_select_all(tmp_path, capsys, monkeypatch):
    write_all_first_examples(tmp_path)
    code, out, _ = run_main(["check", "--select", "ALL", "."], tmp_path, capsys, monkeypatch)
    assert codes_in(out) == EVERY


@pytest.mark.parametrize("selector", ["detach-cut-loss", "GA199"])
def test_unknown_selector_is_a_usage_error(tmp_path, selector):
    write_example(tmp_path / "train.py", "GA101")
    r = run_cli("check", "--select", selector, "train.py", cwd=tmp_path)
    assert r.returncode == 2
    assert selector in r.stderr


# ------------------------------------------------------------------ rule documentation

SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead"]


@pytest.mark.parametrize("code", ALL_CODES)
def test_rule_documentation(tmp_path, capsys, monkeypatch, code):
    rc, out, _ = run_main(["rule", code], tmp_path, capsys, monkeypatch)
    assert rc == 0
    rule = next(r for r in RULES if r.code == code)
    assert out.splitlines()[0] == f"{code} {rule.name} ({rule.family})"
    positions = [out.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    # each section has content, and the examples are fenced Python
    for a, b in zip(SECTIONS, SECTIONS[1:] + [None]):
        body = out[out.index(a) + len(a) : out.index(b) if b else None]
        assert body.strip(), f"{code}: empty section {a}"
    assert out.count("```python") == 2
    # the same text by name, and the rule's name and code in any case
    assert run_main(["rule", rule.name], tmp_path, capsys, monkeypatch)[1] == out
    assert run_main(["rule", code.lower()], tmp_path, capsys, monkeypatch)[1] == out


def test_rule_subprocess(tmp_path):
    r = run_cli("rule", "GA101", cwd=tmp_path)
    assert r.returncode == 0
    for s in ("What it does", "Why is this bad?", "Example", "Use instead"):
        assert s in r.stdout
    assert ".detach()" in r.stdout


def test_rules_lists_every_rule(tmp_path):
    r = run_cli("rules", cwd=tmp_path)
    assert r.returncode == 0
    lines = nonempty_lines(r.stdout)
    assert len(lines) == len(RULES) >= 12
    assert [line.split()[0] for line in lines] == sorted(r.code for r in RULES)
    for line, rule in zip(lines, RULES):
        assert line.split()[1] == rule.name
        assert rule.family in line and rule.summary in line


def test_rules_json(tmp_path, capsys, monkeypatch):
    rc, out, _ = run_main(["rules", "--format", "json"], tmp_path, capsys, monkeypatch)
    assert rc == 0
    data = json.loads(out)
    assert [d["code"] for d in data] == ALL_CODES
    assert all(set(d) == {"code", "name", "family", "summary", "fix"} for d in data)
    assert {d["name"] for d in data} == {r.name for r in RULES}
