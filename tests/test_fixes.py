"""`gradaudit check --fix / --diff / --unsafe-fixes`, and properties of the fix edits: applying any
of them, in any subset and order, leaves a file that parses."""

from __future__ import annotations

import ast
import io
import json
import shutil
import subprocess
import tokenize

import pytest
from clitools import codes_in, example, finding_lines, run_cli, run_main, write, write_example
from helpers import analyze, strip_markers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradaudit.analysis.rules import RULES
from gradaudit.analysis.rules.fixes import apply_edits, fix_source

# every embedded example, buggy and valid: (id, source)
EXAMPLES = [
    (f"{r.code}-{kind}-{i}", strip_markers(ex.source)[0])
    for r in RULES
    for kind, exs in (("invalid", r.invalid), ("valid", r.valid))
    for i, ex in enumerate(exs)
]
# buggy examples with their exact fixed source: (rule code, source, fixed)
WITH_FIXED = [
    (r.code, strip_markers(ex.source)[0], ex.fixed) for r in RULES for ex in r.invalid if ex.fixed is not None
]
SAFE_FIX = "GA101"  # example 0: `.detach()` dropped, a safe fix
UNSAFE_FIX = "GA103"  # example 0: `.item()` dropped, an unsafe fix

_cache: dict = {}


def fixable(source: str) -> list:
    """Findings of `source` that carry edits (cached: the analysis is deterministic)."""
    if source not in _cache:
        result = analyze(source)
        assert result.error is None
        _cache[source] = [f for f in result.findings if f.fix is not None and f.fix.edits]
    return _cache[source]


def parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


# ------------------------------------------------------------------ --fix, --diff, --unsafe-fixes


def test_fix_applies_safe_fixes(tmp_path):
    source, _, ex = example(SAFE_FIX)
    path = write_example(tmp_path / "train.py", SAFE_FIX)
    r = run_cli("check", "--fix", "train.py", cwd=tmp_path)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert path.read_text() == ex.fixed
    assert parses(path.read_text())
    assert "Fixed 1 finding in 1 file." in r.stderr
    assert finding_lines(r.stdout) == []


def test_fix_leaves_unsafe_fixes_alone(tmp_path, capsys, monkeypatch):
    source, _, ex = example(UNSAFE_FIX)
    path = write_example(tmp_path / "train.py", UNSAFE_FIX)
    assert fixable(source)[0].fix.applicability == "unsafe"
    code, out, err = run_main(["check", "--fix", "train.py"], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert path.read_text() == source
    assert codes_in(out) == {"GA103"}
    assert "Fixed 0 findings in 0 files." in err


def test_unsafe_fixes(tmp_path, capsys, monkeypatch):
    source, _, ex = example(UNSAFE_FIX)
    path = write_example(tmp_path / "train.py", UNSAFE_FIX)
    code, out, err = run_main(["check", "--fix", "--unsafe-fixes", "train.py"], tmp_path, capsys, monkeypatch)
    assert code == 0
    assert path.read_text() == ex.fixed
    assert "Fixed 1 finding in 1 file." in err


def test_fix_mixed_folder_reports_what_is_left(tmp_path, capsys, monkeypatch):
    safe = write_example(tmp_path / "a.py", SAFE_FIX)
    unsafe = write_example(tmp_path / "b.py", UNSAFE_FIX)
    unfixable = write_example(tmp_path / "c.py", "GA105", 1)  # no mechanical fix at all
    before = unfixable.read_text()
    code, out, err = run_main(["check", "--fix", "--format", "json", "."], tmp_path, capsys, monkeypatch)
    assert code == 1
    assert sorted(f["code"] for f in json.loads(out)["findings"]) == ["GA103", "GA105"]
    assert safe.read_text() == example(SAFE_FIX)[2].fixed
    assert unsafe.read_text() == example(UNSAFE_FIX)[0]
    assert unfixable.read_text() == before


def test_diff_prints_a_unified_diff_and_changes_nothing(tmp_path):
    source, _, ex = example(SAFE_FIX)
    path = write_example(tmp_path / "src" / "train.py", SAFE_FIX)
    mtime = path.stat().st_mtime_ns
    r = run_cli("check", "--diff", "src", cwd=tmp_path)
    assert r.returncode == 1
    assert path.read_text() == source and path.stat().st_mtime_ns == mtime
    lines = r.stdout.splitlines()
    assert lines[0] == "--- a/src/train.py"
    assert lines[1] == "+++ b/src/train.py"
    assert lines[2].startswith("@@ ")
    assert "-    feats = encoder(x).detach()" in lines
    assert "+    feats = encoder(x)" in lines
    assert "Would fix 1 finding." in r.stderr
    # the diff is a real patch: applied, it gives what --fix writes
    if shutil.which("patch"):
        subprocess.run(["patch", "-p1", "-s"], input=r.stdout, text=True, cwd=tmp_path, check=True)
        assert path.read_text() == ex.fixed


def test_diff_without_unsafe_fixes_shows_only_safe_ones(tmp_path, capsys, monkeypatch):
    write_example(tmp_path / "a.py", SAFE_FIX)
    path = write_example(tmp_path / "b.py", UNSAFE_FIX)
    code, out, err = run_main(["check", "--diff", "."], tmp_path, capsys, monkeypatch)
    assert "+++ b/a.py" in out and "b/b.py" not in out
    code, out, err = run_main(["check", "--diff", "--unsafe-fixes", "."], tmp_path, capsys, monkeypatch)
    assert "+++ b/a.py" in out and "+++ b/b.py" in out
    assert "Would fix 2 findings." in err
    assert path.read_text() == example(UNSAFE_FIX)[0]


def test_diff_nothing_to_fix(tmp_path, capsys, monkeypatch):
    write(tmp_path / "ok.py", "x = 1\n")
    code, out, err = run_main(["check", "--diff", "ok.py"], tmp_path, capsys, monkeypatch)
    assert code == 0 and out == ""


def test_fix_every_example(tmp_path, capsys, monkeypatch):
    """--fix --unsafe-fixes over every buggy example: every file parses afterwards and those with a
    stated fixed source match it; plain --fix changes exactly the files whose fix is safe."""
    safe_dir, all_dir = tmp_path / "safe", tmp_path / "all"
    cases = []
    for rule in RULES:
        for i, ex in enumerate(rule.invalid):
            source = strip_markers(ex.source)[0]
            name = f"{rule.code.lower()}_{i}.py"
            write(safe_dir / name, source)
            write(all_dir / name, source)
            cases.append((name, source, ex.fixed, fixable(source)))
    run_main(["check", "--fix", "-j", "1", "."], safe_dir, capsys, monkeypatch)
    run_main(["check", "--fix", "--unsafe-fixes", "-j", "1", "."], all_dir, capsys, monkeypatch)
    for name, source, fixed, fs in cases:
        after_all = (all_dir / name).read_text()
        after_safe = (safe_dir / name).read_text()
        assert parses(after_all) and parses(after_safe), name
        if fixed is not None:
            assert after_all == fixed, name
        if fs and all(f.fix.applicability == "safe" for f in fs):
            assert after_safe == after_all, name
        if not any(f.fix.applicability == "safe" for f in fs):
            assert after_safe == source, name
        if not fs:
            assert after_all == source, name


def test_fix_after_a_form_feed_line(tmp_path):
    source, _, ex = example(SAFE_FIX)
    path = write(tmp_path / "train.py", source.replace("\nfor step", "\n\x0c\nfor step"))
    run_cli("check", "--fix", "train.py", cwd=tmp_path)
    assert path.read_text() == ex.fixed.replace("\nfor step", "\n\x0c\nfor step")


def test_check_with_form_feed_lines_does_not_crash(tmp_path):
    source = example("GA102", 2)[0]
    anchor = "    with torch.set_grad_enabled(False):\n"
    assert source.count(anchor) == 1
    source = "\x0c\n" + source.replace(anchor, "\x0c\n" + anchor)
    write(tmp_path / "train.py", source)
    r = run_cli("check", "train.py", cwd=tmp_path)
    assert "internal error" not in r.stderr
    assert r.returncode == 1
    assert codes_in(r.stdout) == {"GA102"}


def test_fix_keeps_the_file_encoding(tmp_path):
    header = "# -*- coding: latin-1 -*-\n# café\n"
    source, _, ex = example(SAFE_FIX)
    path = tmp_path / "train.py"
    path.write_bytes((header + source).encode("latin-1"))
    r = run_cli("check", "--fix", "train.py", cwd=tmp_path)
    assert "Fixed 1 finding" in r.stderr
    assert path.read_bytes() == (header + ex.fixed).encode("latin-1")


# ------------------------------------------------------------------ properties of the edits


@pytest.mark.parametrize("name, source", EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_every_fix_of_every_example_parses(name, source):
    fs = fixable(source)
    for f in fs:
        assert parses(apply_edits(source, f.fix.edits)), (name, f.code, f.fix)
    everything = [e for f in fs for e in f.fix.edits]
    assert parses(apply_edits(source, everything)), name
    new, applied = fix_source(source, fs, only_safe=False)
    assert len(applied) == len(fs) and parses(new), name


def _check_subset(source: str, chosen: list, data) -> None:
    edits = [e for f in chosen for e in f.fix.edits]
    shuffled = data.draw(st.permutations(edits), label="edit order")
    out = apply_edits(source, shuffled)
    assert parses(out)
    assert out == apply_edits(source, edits), "the result depends on the order of the edits"
    # one fix after another (as --fix does) ends where all the edits at once do
    new, applied = fix_source(source, data.draw(st.permutations(chosen), label="fix order"), only_safe=False)
    assert len(applied) == len(chosen), "a fix was dropped because its result did not parse"
    assert new == out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(EXAMPLES), st.data())
def test_random_subsets_and_orders_of_fixes_parse(case, data):
    name, source = case
    fs = fixable(source)
    order = data.draw(st.permutations(fs), label="fixes")
    chosen = order[: data.draw(st.integers(0, len(fs)), label="how many")]
    _check_subset(source, chosen, data)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(EXAMPLES), min_size=2, max_size=4), st.data())
def test_fixes_of_concatenated_examples_parse(cases, data):
    """Several scripts in one file: more findings per file, fixes that shift each other's lines."""
    source = "\n".join(src for _, src in cases)
    fs = fixable(source)
    order = data.draw(st.permutations(fs), label="fixes")
    chosen = order[: data.draw(st.integers(0, len(fs)), label="how many")]
    _check_subset(source, chosen, data)


# ------------------------------------------------------------------ metamorphic: comment lines, CRLF

MARK = "#~inserted"


def _insertion_points(source: str) -> list:
    """0-based line indexes before which a comment line may go: not inside a multi-line string,
    not after a backslash continuation."""
    lines = source.splitlines(keepends=True)
    inside = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING and tok.start[0] != tok.end[0]:
            inside.update(range(tok.start[0], tok.end[0]))
    return [
        i
        for i in range(len(lines) + 1)
        if i not in inside and not (i > 0 and lines[i - 1].rstrip("\r\n").endswith("\\"))
    ]


def _with_comment_lines(source: str, points: set) -> str:
    lines = source.splitlines(keepends=True)
    out = []
    for i in range(len(lines) + 1):
        if i in points:
            nxt = next((t for t in lines[i:] if t.strip()), "")
            out.append(nxt[: len(nxt) - len(nxt.lstrip())] + MARK + "\n")
        if i < len(lines):
            out.append(lines[i])
    return "".join(out)


def _without_comment_lines(source: str) -> str:
    return "".join(t for t in source.replace("\r\n", "\n").splitlines(keepends=True) if MARK not in t)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(WITH_FIXED), st.data(), st.booleans())
def test_fixes_survive_comment_lines_and_crlf(case, data, crlf):
    code, source, fixed = case
    points = data.draw(st.sets(st.sampled_from(_insertion_points(source)), max_size=6), label="comment lines")
    mutated = _with_comment_lines(source, points)
    if crlf:
        mutated = mutated.replace("\n", "\r\n")
    assert parses(mutated)
    mine = [f for f in fixable(mutated) if f.code == code]
    assert mine, "the finding (or its fix) is lost"
    out = apply_edits(mutated, [e for f in mine for e in f.fix.edits])
    assert parses(out)
    assert _without_comment_lines(out) == fixed
