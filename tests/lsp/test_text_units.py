"""The server's document text and moving diagnostics, against plain string models."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from gradaudit.analysis.source.program import split_lines
from gradaudit.server import text as text_module
from gradaudit.server.diagnostics import move
from gradaudit.server.text import Lines

PIECES = st.sampled_from(["a", "bc", "\n", "\r", "\r\n", "é", "𝒳", " ", "xyz\n"])
TEXTS = st.lists(PIECES, max_size=40).map("".join)


def _offset(src, line, char):
    lines = split_lines(src, keepends=True)
    if line >= len(lines):
        return len(src)
    return sum(len(x) for x in lines[:line]) + min(char, len(lines[line]))


@st.composite
def edits(draw, src):
    lines = split_lines(src, keepends=True)
    n = len(lines)
    sl = draw(st.integers(0, n))
    el = draw(st.integers(sl, n))
    sc = draw(st.integers(0, len(lines[sl].rstrip("\r\n")) if sl < n else 0))
    ec = draw(st.integers(0, len(lines[el].rstrip("\r\n")) if el < n else 0))
    if sl == el and ec < sc:
        sc, ec = ec, sc
    return sl, sc, el, ec, draw(TEXTS.filter(lambda t: len(t) < 8))


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    monkeypatch.setattr(text_module, "BLOCK", 3)  # many blocks even in small texts
    monkeypatch.setattr(text_module, "CHUNK", 4)  # ... and many unsplit ones when opened


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.data())
def test_lines_follow_edits_like_a_string(data):
    src = data.draw(TEXTS)
    lines = Lines(src)
    assert len(lines) == len(split_lines(src, keepends=True)) and lines.chars == len(src)
    for _ in range(data.draw(st.integers(1, 6))):
        sl, sc, el, ec, new = data.draw(edits(src))
        src = src[: _offset(src, sl, sc)] + new + src[_offset(src, el, ec) :]
        lines.replace(sl, sc, el, ec, new)
        assert list(lines) == split_lines(src, keepends=True)
        assert lines.source == src
        assert lines.chars == len(src)
        assert len(lines) == len(split_lines(src, keepends=True))


def _diag(line, char, end_line, end_char):
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=line, character=char), end=types.Position(line=end_line, character=end_char)
        ),
        message="m",
        data={"kind": "finding"},
    )


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.data())
def test_a_diagnostic_moves_with_the_text_around_it(data):
    # a marker word stays in the text outside the edited range: the diagnostic must still cover it
    before = data.draw(st.lists(st.sampled_from(["ab\n", "c", "\n", "dé"]), max_size=8).map("".join))
    after = data.draw(st.lists(st.sampled_from(["ab\n", "c", "\n", "dé"]), max_size=8).map("".join))
    src = before + "MARK" + after
    start = len(before)
    pre = split_lines(src[:start], keepends=True)
    line, char = (len(pre) - 1, len(pre[-1])) if pre and not pre[-1].endswith(("\n", "\r")) else (len(pre), 0)
    d = _diag(line, char, line, char + 4)
    # an edit entirely before or entirely after the marker
    where = data.draw(st.sampled_from(["before", "after"]))
    lo, hi = (0, start) if where == "before" else (start + 4, len(src))
    a = data.draw(st.integers(lo, hi))
    b = data.draw(st.integers(a, hi))
    if where == "before" and b == start and a < b:
        b = start  # the edit may end right where the marker starts
    new = data.draw(st.sampled_from(["", "x", "\n", "yy\nz", "\r\n"]))
    if where == "before" and new.endswith("\r") and src[start : start + 1] == "\n":
        return
    edited = src[:a] + new + src[b:]

    def pos(text, offset):
        head = split_lines(text[:offset], keepends=True)
        if not head:
            return 0, 0
        if head[-1].endswith(("\n", "\r")):
            return len(head), 0
        return len(head) - 1, len(head[-1])

    sa, sb = pos(src, a), pos(src, b)
    codec = PositionCodec(types.PositionEncodingKind.Utf32)
    change = types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=sa[0], character=sa[1]), end=types.Position(line=sb[0], character=sb[1])
        ),
        text=new,
    )
    [moved] = move([d], change, codec)
    new_start = start if where == "after" else start - (b - a) + len(new)
    expect = pos(edited, new_start)
    assert (moved.range.start.line, moved.range.start.character) == expect, (src, a, b, new, edited)
    expect_end = pos(edited, new_start + 4)
    assert (moved.range.end.line, moved.range.end.character) == expect_end
