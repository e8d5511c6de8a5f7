"""Parsing a file that is broken in one place: the rest of it is still analysed.

A file being edited fails to parse half the time. Python reports one error at a time, so the
top-level statement holding the error is blanked out (its lines kept empty, so that every other
position stays where it was) and the file parsed again, until it parses or nothing is left worth
trying. What was blanked is reported, once per statement, with the first error Python gave for it.

Top-level statements are found by their first line: a line starting at column 0 that does not
continue a compound statement (`else:`, `except`, ...) or close a bracket. Inside a broken region
that guess can be wrong (a column-0 line inside a string); the next parse then reports another
error and the region grows. Each round blanks at least one more line, so it ends. Each round is
a parse of the whole file: past ROUNDS_SECONDS (a big file with many errors), the remaining
statements are parsed one by one instead, which costs about one more parse.
"""

from __future__ import annotations

import time

from .patterns import Lazy

MAX_ROUNDS = 40
ROUNDS_SECONDS = 1.0  # then each top-level statement is parsed alone: one pass, whatever the errors

_STARTS_STATEMENT = Lazy(r"[^\s#)\]}]")
# continues a compound statement, or most likely closes a string a docstring opened
_CONTINUES = Lazy(r"(?:else|elif|except|finally)\b|(?:\"\"\"|\'\'\')\s*[)\],]*\s*$")


class Broken:
    """One blanked region: lines [first, last] (1-based, inclusive) and the error found there."""

    __slots__ = ("col", "first", "last", "line", "msg")

    def __init__(self, first, last, line, col, msg):
        self.first, self.last, self.line, self.col, self.msg = first, last, line, col, msg


def is_statement_start(line: str) -> bool:
    return bool(line) and _STARTS_STATEMENT.match(line) is not None and _CONTINUES.match(line) is None


_STRING_PARTS = Lazy(r'"""|\'\'\'|#|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')


def in_strings(lines: list[str]) -> list[bool]:
    """For each line: does it start inside a triple-quoted string? (A docstring's lines at column
    0 are not statements.) A string that never closes (one being typed) is taken to end on its
    own line: what follows it is still code."""
    out: list[bool] = []
    while len(out) < len(lines):
        start = len(out)
        flags, opened_at = _scan_strings(lines, start)
        if opened_at is None:
            out.extend(flags)
        else:
            out.extend(flags[: opened_at - start + 1])
    return out


def _scan_strings(lines: list[str], start: int):
    """Flags from line `start` on, and the line whose triple quote is still open at the end."""
    out, open_with, opened_at = [], None, None
    for i in range(start, len(lines)):
        line = lines[i]
        out.append(open_with is not None)
        pos = 0
        while True:
            if open_with is not None:
                end = line.find(open_with, pos)
                if end < 0:
                    break
                open_with, pos = None, end + 3
                continue
            m = _STRING_PARTS.search(line, pos)
            if m is None or m.group() == "#":
                break
            if m.group() in ('"""', "'''"):
                open_with, opened_at = m.group(), i
            pos = m.end()
    return out, (opened_at if open_with is not None else None)


def starts(lines: list[str]) -> list[bool]:
    """For each line: does a top-level statement start there?"""
    inside = in_strings(lines)
    return [not inside[i] and is_statement_start(lines[i]) for i in range(len(lines))]


def region_around(lines: list[str], index: int, begins: list[bool] | None = None) -> tuple[int, int]:
    """0-based [first, last] of the top-level statement that holds line `index`."""
    begins = begins if begins is not None else starts(lines)
    first = index
    while first > 0 and not begins[first]:
        first -= 1
    while first > 0 and lines[first - 1].startswith("@"):
        first -= 1  # its decorators belong to it
    last = index
    n = len(lines)
    while True:
        while last + 1 < n and not begins[last + 1]:
            last += 1
        # decorators so far: the statement they decorate belongs to them
        if last + 1 < n and all(ln.startswith("@") or not ln.strip() for ln in lines[first : last + 1]):
            last += 1
            continue
        break
    while last > index and not lines[last].strip():
        last -= 1  # the blank lines after it are nobody's
    return first, last


def blank(lines: list[str], first: int, last: int):
    for i in range(first, last + 1):
        text = lines[i]
        lines[i] = text[len(text.rstrip("\r\n")) :]  # keep the line break: positions after stay put


def parse_error_position(exc: SyntaxError, lines: list[str]) -> tuple[int, int]:
    """(1-based line, 1-based column) of a SyntaxError, clamped into the file."""
    line = exc.lineno or 1
    if line > len(lines):
        line = len(lines)
        while line > 1 and not lines[line - 1].strip():
            line -= 1  # "unexpected EOF": the last line with text
    return max(line, 1), max(exc.offset or 1, 1)


def recover(lines: list[str], first_error: SyntaxError | None, parse, deep: bool = False):
    """Blank the statements Python cannot parse, one region per round.

    `lines` are the source's lines with their line breaks; `parse(text)` is ast.parse. Returns
    (tree, text, [Broken]) or None when no usable part remains. `deep`: the first failure was the
    parser's own limit (RecursionError / stack overflow), which carries no position.
    """
    lines = list(lines)
    if not lines:
        return None
    started = time.monotonic()
    broken: list[Broken] = []
    done = [False] * len(lines)
    exc: SyntaxError | None = first_error
    if deep:
        regions = _too_deep_regions(lines, parse)
        if not regions:
            return None
        for first, last in regions:
            blank(lines, first, last)
            for i in range(first, last + 1):
                done[i] = True
            broken.append(Broken(first + 1, last + 1, first + 1, 1, "too deeply nested for Python's parser"))
        exc = None
    for _ in range(MAX_ROUNDS):
        if all(done[i] or not lines[i].strip() for i in range(len(lines))):
            return None  # nothing of the file is left to analyse
        if time.monotonic() - started > ROUNDS_SECONDS:
            return _one_by_one(lines, done, broken, parse)
        text = "".join(lines)
        if exc is None:
            try:
                return parse(text), text, broken
            except SyntaxError as e:
                exc = e
            except (RecursionError, MemoryError):
                return None
        if "too many nested parentheses" in str(getattr(exc, "msg", "")):
            # brackets left open by several statements add up: Python's position is not theirs
            return _one_by_one(lines, done, broken, parse)
        line, col = parse_error_position(exc, lines)
        index = line - 1
        if done[index]:
            # the error sits in what is blank already: grow to the next unblanked statement
            found = next((i for i in range(index, len(lines)) if not done[i] and lines[i].strip()), None)
            if found is None:
                found = next((i for i in range(line - 1, -1, -1) if not done[i] and lines[i].strip()), None)
            if found is None:
                return None
            index = found
        msg = exc.msg if isinstance(exc, SyntaxError) and exc.msg else "invalid syntax"
        if index == line - 1 and not in_strings(lines)[index]:
            # a simple statement inside a block (`d_loss = ` half typed in a training loop): that
            # line alone is left out, not the whole function around it, when the rest then parses
            # or fails only further on
            tried = _without_line(lines, index, parse)
            if tried is not None:
                lines, tree, exc = tried
                done[index] = True
                broken = sorted([*broken, Broken(line, line, line, col, msg)], key=lambda b: b.first)
                if tree is not None:
                    return tree, "".join(lines), broken
                continue
        first, last = region_around(lines, index)
        blank(lines, first, last)
        for i in range(first, last + 1):
            done[i] = True
        msg = exc.msg if isinstance(exc, SyntaxError) and exc.msg else "invalid syntax"
        # one report per region; a region that grew keeps the error found first
        lo, hi = first + 1, last + 1  # Broken counts lines from 1
        merged = [b for b in broken if b.last < lo or b.first > hi]
        inside = [b for b in broken if not (b.last < lo or b.first > hi)]
        if inside:
            keep = min(inside, key=lambda b: (b.line, b.col))
            merged.append(Broken(min(first + 1, keep.first), max(last + 1, keep.last), keep.line, keep.col, keep.msg))
        else:
            merged.append(Broken(first + 1, last + 1, line, col, msg))
        broken = sorted(merged, key=lambda b: b.first)
        exc = None
    return _one_by_one(lines, done, broken, parse)


_ASSIGNED = Lazy(r"([^=]*?)\s*((?:[-+*/%&|^@]|//|\*\*|<<|>>)?=)(?!=)")


def _targets(text: str, parse) -> bool:
    """`text` is an assignment's target list (`loss`, `self.total`, `a, b`)."""
    try:
        parse(f"{text} = 0\n")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


_CONTINUED = (":", "\\", "(", "[", "{", ",")


def _without_line(lines: list[str], index: int, parse):
    """(lines, tree or None, next SyntaxError or None) with the indented simple statement on line
    `index` replaced by `pass` (an assignment by `targets = ...`) at its indentation, when the file
    then parses or its next error is on a later line and not one of indentation (which the
    replacement may have caused); else None."""
    text = lines[index]
    body = text.rstrip("\r\n")
    code = body.lstrip()
    if not code or code == body or code.startswith(("#", "@")) or code.rstrip().endswith(_CONTINUED):
        return None  # top level (its statement is the region), a compound header, or a line that continues
    bare = _STRING_PARTS.sub("", code)
    if sum(bare.count(c) for c in "([{") > sum(bare.count(c) for c in ")]}"):
        return None  # a bracket left open: where the statement ends is not known
    trial = list(lines)
    # an assignment keeps its targets (`loss = ...`): the name stays local to its function, so a
    # global of that name is not read in its place
    m = _ASSIGNED.match(code)
    kept = f"{m.group(1)}{m.group(2)} ..." if m is not None and _targets(m.group(1), parse) else "pass"
    trial[index] = body[: len(body) - len(code)] + kept + text[len(body) :]
    try:
        return trial, parse("".join(trial)), None
    except SyntaxError as e:
        later = (e.lineno or 0) > index + 1 and "indent" not in (e.msg or "")
        return (trial, None, e) if later else None
    except (ValueError, RecursionError, MemoryError):
        return None


def _one_by_one(lines: list[str], done: list, broken: list, parse):
    """Blank every top-level statement that does not parse alone, then parse what is left."""
    i, n = 0, len(lines)
    begins = starts(lines)
    while i < n:
        if done[i] or not begins[i]:
            i += 1
            continue
        first, last = region_around(lines, i, begins)
        try:
            parse("".join(lines[first : last + 1]))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            line = first + (getattr(exc, "lineno", None) or 1)
            col = getattr(exc, "offset", None) or 1
            msg = getattr(exc, "msg", None) or "too deeply nested for Python's parser"
            blank(lines, first, last)
            for k in range(first, last + 1):
                done[k] = True
            broken.append(Broken(first + 1, last + 1, min(line, last + 1), col, msg))
        i = max(i, last) + 1
    if all(done[k] or not lines[k].strip() for k in range(n)):
        return None
    text = "".join(lines)
    try:
        return parse(text), text, sorted(broken, key=lambda b: b.first)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _too_deep_regions(lines: list[str], parse) -> list[tuple[int, int]]:
    """The top-level statements the parser gives up on by depth, each parsed alone to find them."""
    out = []
    i, n = 0, len(lines)
    begins = starts(lines)
    while i < n:
        if not begins[i]:
            i += 1
            continue
        first, last = region_around(lines, i, begins)
        chunk = "".join(lines[first : last + 1])
        try:
            parse(chunk)
        except (RecursionError, MemoryError):
            out.append((first, last))
        except SyntaxError:
            pass  # a wrong guess of the statement's extent: the normal rounds deal with it
        i = max(i, last) + 1
    return out
