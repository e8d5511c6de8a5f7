"""Suppression comments on the anchor line: `# gradaudit: ignore[...]`, `# noqa: ...`."""

from __future__ import annotations

import pytest
from clitools import codes_in, example, finding_lines, run_cli, write
from helpers import analyze, found

from gradaudit.analysis.check.suppression import suppressed

ANCHOR = "    feats = encoder(x).detach()"  # line 12 of GA101's first example


def ga101_with(comment: str, line: int = 12) -> str:
    source = example("GA101")[0]
    lines = source.splitlines(keepends=True)
    assert lines[11].rstrip("\n") == ANCHOR
    lines[line - 1] = lines[line - 1].rstrip("\n") + "  " + comment + "\n"
    return "".join(lines)


def test_unsuppressed_baseline():
    assert found(analyze(example("GA101")[0])) == [(12, "GA101")]


@pytest.mark.parametrize(
    "comment",
    [
        "# gradaudit: ignore[GA101]",
        "# gradaudit: ignore[detach-cuts-loss]",
        "# gradaudit: ignore[GA102, GA101]",
        "# gradaudit: ignore",
        "#gradaudit:ignore[GA101]",
        "# noqa: GA101",
        "# noqa:GA101",
        "# NOQA: ga101",
        "# noqa: E501, GA101",
        "# noqa",
        "# explained  # gradaudit: ignore[GA101]",
    ],
)
def test_suppressed(comment):
    assert found(analyze(ga101_with(comment))) == []


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: E501",
        "# noqa: F401, E501",
        "# gradaudit: ignore[GA102]",
        "# gradaudit: ignore[no-grad-loss]",
        "# type: ignore",
        "# pylint: disable=all",
    ],
)
def test_not_suppressed(comment):
    assert found(analyze(ga101_with(comment))) == [(12, "GA101")]


@pytest.mark.parametrize("comment", ["# gradaudit: ignored, GA101 is expected here", "# gradaudit: ignorex"])
def test_ignore_needs_a_word_boundary(comment):
    assert found(analyze(ga101_with(comment))) == [(12, "GA101")]


@pytest.mark.parametrize("line", [11, 13])
def test_only_the_anchor_line_counts(line):
    assert found(analyze(ga101_with("# gradaudit: ignore[GA101]", line=line))) == [(12, "GA101")]


def test_each_anchor_line_separately():
    source, expected, _ = example("GA111")
    assert expected == [(11, "GA111"), (12, "GA111")]
    lines = source.splitlines(keepends=True)
    lines[10] = lines[10].rstrip("\n") + "  # noqa: GA111\n"
    assert found(analyze("".join(lines))) == [(12, "GA111")]


def test_suppression_through_the_cli(tmp_path):
    write(tmp_path / "a.py", ga101_with("# gradaudit: ignore[detach-cuts-loss]"))
    write(tmp_path / "b.py", ga101_with("# noqa: E501"))
    r = run_cli("check", ".", cwd=tmp_path)
    assert r.returncode == 1
    assert [(p, line, code) for p, line, _, code, _ in finding_lines(r.stdout)] == [("b.py", 12, "GA101")]
    only_a = run_cli("check", "a.py", cwd=tmp_path)
    assert only_a.returncode == 0 and codes_in(only_a.stdout) == set()


@pytest.mark.parametrize(
    "line, expected",
    [
        ("x = 1  # gradaudit: ignore[GA101]", True),
        ("x = 1  # gradaudit: ignore[detach-cuts-loss]", True),
        ("x = 1  # gradaudit: ignore", True),
        ("x = 1  # noqa: GA101", True),
        ("x = 1  # noqa", True),
        ("x = 1  # noqa: E501", False),
        ("x = 1  # gradaudit: ignore[GA111]", False),
        ("x = 1", False),
    ],
)
def test_suppressed_function(line, expected):
    assert suppressed(line, "GA101", "detach-cuts-loss") is expected


def test_suppression_after_a_form_feed_line():
    source = ga101_with("# noqa: GA101").replace("\nfor step", "\n\x0c\nfor step")
    result = analyze(source)
    assert result.error is None
    assert found(result) == []
