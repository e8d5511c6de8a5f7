"""Jupyter notebooks (.ipynb) as one Python source, with the way back to cells.

The code cells, in document order, are joined into one virtual source that the engine analyses
as an ordinary file: a notebook's kernel runs them as one program, and a training step is often
spread over several cells (the model in one, the optimizer in another, the loop in a third).
Execution counts are not followed: the notebook is read as it would run from the top.

Every code cell contributes exactly its own lines, line i of the cell being one line of the
virtual source, so a position maps back to (cell, line) by an offset; a column maps back by the
width of what was taken out in front of a `%time` statement (usually nothing).

IPython's own syntax is neutralised, never guessed at as Python:
- a cell magic (`%%capture`, `%%time`...) whose body is Python keeps its body, the `%%` line
  blank; any other cell magic (`%%bash`, `%%writefile`, `%%html`...) leaves the cell blank;
- a line magic or shell line (`%matplotlib inline`, `!pip install x`, `files = !ls`, `obj?`)
  becomes `pass` (or `files = None`) at its indentation, so the block around it stays valid;
- `%time stmt`, `%timeit stmt`, `%prun stmt` keep their statement, shifted left.
Only lines that start a logical line count: a `%` continuing an expression inside brackets, or a
line of a triple-quoted string, is left alone.

A cell that does not parse is reported where it is wrong (`ParseError`, in virtual lines) and
left out, statement by statement where the rest of it parses (recovery.py): the other cells are
still analysed.

The file is read with the standard json module, not nbformat: nbformat validates, upgrades minor
versions and re-serialises with its own key order and indentation, while a fix written back must
leave every byte of the file but the changed cells' sources as it was. `write_back` therefore edits
the JSON text itself, replacing only the `source` values of the cells that changed.
"""

from __future__ import annotations

import json

from .patterns import Lazy
from .prebuilt import dataclass
from .program import ParseError, parse_source, split_lines

SUFFIX = ".ipynb"
# cell magics whose body is Python that runs (timed, captured, profiled)
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
# line magics followed by a statement that runs
_STATEMENT_MAGICS = frozenset({"time", "timeit", "prun"})
_TIMEIT_VALUE_OPTIONS = frozenset("nrp")  # `%timeit -n 10 -r 3 stmt`: options with a value


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


@dataclass(frozen=True)
class Cell:
    """One cell of the notebook. `index`: its position among all the notebook's cells (0-based,
    markdown cells included: the index in the file's `cells` list); `number` is index + 1."""

    index: int
    id: str  # nbformat 4.5 cell id ('' before 4.5)
    kind: str  # 'code' | 'markdown' | 'raw'
    source: str
    json_lines: tuple = ()  # the line of the .ipynb file holding each source line (GitHub output)

    @property
    def number(self) -> int:
        return self.index + 1


@dataclass(frozen=True)
class CellPlace:
    """A position inside a cell: 1-based line, 0-based character column of the cell's text."""

    cell: Cell
    line: int
    col: int


@dataclass(frozen=True)
class _Line:
    cell: int  # position in Notebook.cells
    line: int  # 1-based line of the cell
    indent: int  # columns before the statement
    shift: int  # columns taken out after `indent` (`%time ` in front of a statement)
    dedent: int = 0  # columns taken out in front (a cell indented as a whole, which IPython dedents)


@dataclass(frozen=True)
class Notebook:
    path: str
    cells: tuple  # every Cell, in document order
    source: str  # the virtual Python source of the code cells
    lines: tuple  # _Line per virtual line
    starts: tuple  # (cell position, first virtual line) of each code cell analysed
    problems: tuple = ()  # ParseErrors of cells (or statements of them) left out, in virtual lines
    language: str = "python"

    # ------------------------------------------------------------ virtual -> cell

    def place(self, line: int, col: int) -> CellPlace | None:
        """The cell position of a virtual (line, col); None outside every code cell."""
        if not self.lines:
            return None
        if line > len(self.lines):  # the end of the source: the end of the last code cell
            last = self.lines[-1]
            cell = self.cells[last.cell]
            return CellPlace(cell, last.line + 1, 0)
        entry = self.lines[max(line, 1) - 1]
        if col >= entry.indent:
            col += entry.shift
        return CellPlace(self.cells[entry.cell], entry.line, col + entry.dedent)

    def end_place(self, line: int, col: int, start: CellPlace) -> CellPlace:
        """The end of a span that starts at `start`: a span ending at column 0 of the next cell's
        first line (a whole-line edit of the cell's last line) ends at the end of `start`'s cell."""
        end = self.place(line, col)
        if end is None or end.cell.index != start.cell.index:
            lines = split_lines(start.cell.source, keepends=True)
            return CellPlace(start.cell, len(lines) + 1, 0)
        return end

    # ------------------------------------------------------------ cell -> virtual

    def virtual(self, cell_index: int, line: int, col: int) -> tuple[int, int] | None:
        """The virtual (line, col) of a position in the cell at `cell_index` (0-based, among all
        cells); None if the cell is not analysed."""
        for pos, first in self.starts:
            if self.cells[pos].index == cell_index:
                n = first + line - 1
                if 0 < n <= len(self.lines) and self.lines[n - 1].cell == pos:
                    entry = self.lines[n - 1]
                    col = max(col - entry.dedent, 0)
                    if col >= entry.indent + entry.shift:
                        col -= entry.shift
                    elif col > entry.indent:  # inside the `%time ` taken out
                        col = entry.indent
                return (n, col)
        return None

    def code_cells(self) -> list[Cell]:
        return [self.cells[pos] for pos, _ in self.starts]


# ---------------------------------------------------------------- reading


class NotebookError(ValueError):
    """The file is not a notebook gradaudit can read."""


def read_notebook(path: str) -> tuple[Notebook, str]:
    """(notebook, the file's text). Raises OSError, or ParseError (kind 'read') for a file that
    is not an nbformat 4 notebook."""
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(path, 1, 1, f"not a notebook: not UTF-8 ({exc.reason})", kind="read") from None
    try:
        return notebook_from_json(path, text.removeprefix("\ufeff")), text
    except NotebookError as exc:
        raise ParseError(path, 1, 1, str(exc), kind="read") from None


def notebook_from_json(path: str, text: str) -> Notebook:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not a notebook: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        if isinstance(data, dict) and isinstance(data.get("worksheets"), list):
            raise NotebookError("nbformat 3 notebooks are not read: convert it with `jupyter nbconvert --to notebook`")
        raise NotebookError("not a notebook: no `cells` list")
    spans = _source_spans(text)
    cells = []
    for i, raw in enumerate(data["cells"]):
        if not isinstance(raw, dict):
            raise NotebookError(f"not a notebook: cell {i + 1} is not an object")
        source = raw.get("source", "")
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        elif not isinstance(source, str):
            source = ""
        kind = raw.get("cell_type")
        if not isinstance(kind, str):
            kind = "code"
        json_lines = _json_lines(text, spans.get(i), source)
        cells.append(Cell(i, str(raw.get("id") or ""), kind, source, json_lines))
    return build(path, cells, _language(data.get("metadata")))


def notebook_from_cells(path: str, cells, language: str = "python") -> Notebook:
    """A notebook from (kind, source, id) triples: an editor's notebook document."""
    return build(path, [Cell(i, cid or "", kind, src) for i, (kind, src, cid) in enumerate(cells)], language)


def _language(meta) -> str:
    if not isinstance(meta, dict):
        return "python"
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        value = meta.get(key)
        if isinstance(value, dict) and isinstance(value.get(field), str) and value[field]:
            return value[field].lower()
    return "python"


# ---------------------------------------------------------------- the virtual source


def build(path: str, cells, language: str = "python") -> Notebook:
    out: list[str] = []
    lines: list[_Line] = []
    starts: list[tuple] = []
    problems: list[ParseError] = []
    python = language == "python"
    for pos, cell in enumerate(cells):
        if cell.kind != "code" or not python:
            continue
        raw = split_lines(cell.source, keepends=True)
        if not raw:
            continue
        first = len(lines) + 1
        starts.append((pos, first))
        texts, entries = neutralise([line.rstrip("\r\n") for line in raw])
        endings = [line[len(line.rstrip("\r\n")) :] or "\n" for line in raw]
        body = "".join(t + e for t, e in zip(texts, endings))
        body, broken = _parse_cell(path, body, first)
        problems += broken
        out.append(body)
        for n, (indent, shift, dedent) in enumerate(entries, 1):
            lines.append(_Line(pos, n, indent, shift, dedent))
    return Notebook(path, tuple(cells), "".join(out), tuple(lines), tuple(starts), tuple(problems), language)


def _parse_cell(path: str, body: str, first: int) -> tuple[str, list]:
    """The cell's text as analysed (statements that do not parse blanked), and its ParseErrors in
    virtual lines."""
    # not the notebook's path: for a file that exists, Python reads the error's line from the file
    # (here a line of JSON) to compute the column it reports
    try:
        sf = parse_source(_CELL_FILENAME, body)
    except ParseError as exc:
        n = len(split_lines(body, keepends=True))
        blank = "".join("\n" for _ in range(n))
        return blank, [_shifted(exc, path, first, (1, n))]
    if not sf.broken:
        return body, []
    return sf.source, [_shifted(e, path, first, e.region) for e in sf.broken]


def _shifted(e: ParseError, path: str, first: int, region) -> ParseError:
    off = first - 1
    region = (region[0] + off, region[1] + off) if region else None
    return ParseError(path, e.line + off, e.col, e.msg, region=region)


_CELL_FILENAME = "<notebook cell>"
_CELL_MAGIC = Lazy(r"%%(\w+)")
_SHELL_OR_MAGIC = Lazy(r"(\s*)(?:!|%)")
_ASSIGN_FROM = Lazy(r"(\s*)([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)\s*=\s*[!%]")
_HELP = Lazy(r"(\s*)(?:\?{1,2}[\w.*\[\]]+|[\w.*\[\]()]+\?{1,2})\s*$")
_LINE_MAGIC = Lazy(r"%(\w+)")


def neutralise(lines: list[str]) -> tuple[list[str], list[tuple]]:
    """The cell's lines (without line breaks) as Python, and (indent, shift, dedent) per line."""
    out, entries = _neutralise(lines)
    first = next((i for i, t in enumerate(lines) if t.strip()), None)
    prefix = lines[first][: len(lines[first]) - len(lines[first].lstrip(" \t"))] if first is not None else ""
    if not prefix:
        return out, [(indent, shift, 0) for indent, shift in entries]
    # IPython takes the first line's indentation off every line that has it: a cell pasted indented runs
    dedented = [t[len(prefix) :] if t.startswith(prefix) else t for t in lines]
    cut = [len(prefix) if t.startswith(prefix) else 0 for t in lines]
    out, entries = _neutralise(dedented)
    return out, [(indent, shift, c) for (indent, shift), c in zip(entries, cut)]


def _neutralise(lines: list[str]) -> tuple[list[str], list[tuple]]:
    entries = [(0, 0)] * len(lines)
    out = list(lines)
    first = next((i for i, t in enumerate(lines) if t.strip()), None)
    if first is not None and lines[first].startswith("%%"):
        m = _CELL_MAGIC.match(lines[first])
        if m is None or m.group(1) not in PYTHON_CELL_MAGICS:
            return [""] * len(lines), entries  # not Python (`%%bash`, `%%writefile`, ...)
        out[first] = ""
        start = first + 1
    else:
        start = 0
    scan = _Scanner()
    i = start
    while i < len(lines):
        text = lines[i]
        if scan.at_statement_start():
            magic = _magic_line(text)
            if magic is not None:
                replacement, indent, shift = magic
                out[i] = replacement
                entries[i] = (indent, shift)
                if shift and replacement.strip():
                    scan.feed(replacement)  # the statement kept runs: its brackets and strings count
                    i += 1
                    continue
                # the magic continues over lines ending with a backslash
                while lines[i].rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    out[i] = ""
                i += 1
                continue
        scan.feed(text)
        i += 1
    return out, entries


def _magic_line(text: str):
    """(replacement, indent, shift) for a line of IPython syntax; None for a Python line."""
    stripped = text.lstrip()
    indent = len(text) - len(stripped)
    pad = text[:indent]
    if not stripped:
        return None
    if stripped[0] in "!%":
        m = _LINE_MAGIC.match(stripped)
        if stripped[0] == "%" and m is not None and m.group(1) in _STATEMENT_MAGICS:
            rest_at = _statement_start(stripped, m)
            if rest_at is not None:
                return pad + stripped[rest_at:], indent, rest_at
        return pad + "pass", indent, 0
    m = _ASSIGN_FROM.match(text)
    if m is not None:
        return f"{pad}{m.group(2)} = None", indent, 0
    if "?" in stripped and _HELP.match(text):
        return pad + "pass", indent, 0
    return None


def _statement_start(stripped: str, m) -> int | None:
    """Where the statement of `%time stmt` / `%timeit -n 10 stmt` starts; None if there is none."""
    pos = m.end()
    words = stripped[pos:]
    at = pos
    while True:
        lead = len(words) - len(words.lstrip())
        at += lead
        words = words[lead:]
        if not words.startswith("-"):
            break
        opt = words.split(None, 1)[0]
        at += len(opt)
        words = words[len(opt) :]
        if len(opt) == 2 and opt[1] in _TIMEIT_VALUE_OPTIONS and m.group(1) == "timeit":
            lead = len(words) - len(words.lstrip())
            value = words[lead:].split(None, 1)[0] if words.strip() else ""
            at += lead + len(value)
            words = words[lead + len(value) :]
    return at if words.strip() else None


class _Scanner:
    """Enough of Python's tokenizer to know whether the next line starts a logical line: open
    brackets, an open (triple-quoted) string, a backslash continuation."""

    def __init__(self):
        self.depth = 0
        self.quote = ""  # the open string's quote ('"""', "'''"; a one-line string never stays open)
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and not self.quote and not self.continued

    def feed(self, line: str):
        i, n = 0, len(line)
        self.continued = False
        while i < n:
            if self.quote:
                end = _find_close(line, i, self.quote)
                if end < 0:
                    return
                self.quote, i = "", end
                continue
            c = line[i]
            if c == "#":
                return
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c in "'\"":
                q = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else c
                end = _find_close(line, i + len(q), q)
                if end < 0:
                    if len(q) == 3:
                        self.quote = q
                    return  # an unclosed one-line string: the line is broken anyway
                i = end
                continue
            elif c == "\\" and i == n - 1:
                self.continued = True
            i += 1


def _find_close(line: str, i: int, quote: str) -> int:
    """The index after the closing `quote` from `i` on (escapes skipped), or -1."""
    n = len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if line.startswith(quote, i):
            return i + len(quote)
        i += 1
    return -1


# ---------------------------------------------------------------- positions in the JSON text


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


_DECODER = json.JSONDecoder()


def _members(text: str, i: int):
    """(key, value start, value end) of the JSON object starting at `i`."""
    i = _skip_ws(text, i)
    if i >= len(text) or text[i] != "{":
        return
    i = _skip_ws(text, i + 1)
    if i < len(text) and text[i] == "}":
        return
    while i < len(text):
        key, i = _DECODER.raw_decode(text, i)  # the key: a JSON string (json.loads accepted the text)
        i = _skip_ws(text, i)
        i = _skip_ws(text, i + 1)  # ':'
        _, end = _DECODER.raw_decode(text, i)
        yield key, i, end
        i = _skip_ws(text, end)
        if i >= len(text) or text[i] == "}":
            return
        i = _skip_ws(text, i + 1)  # ','


def _elements(text: str, i: int):
    """(start, end) of each element of the JSON array starting at `i`."""
    i = _skip_ws(text, i)
    if i >= len(text) or text[i] != "[":
        return
    i = _skip_ws(text, i + 1)
    if i < len(text) and text[i] == "]":
        return
    while i < len(text):
        _, end = _DECODER.raw_decode(text, i)
        yield i, end
        i = _skip_ws(text, end)
        if i >= len(text) or text[i] == "]":
            return
        i = _skip_ws(text, i + 1)


def _source_spans(text: str) -> dict:
    """{cell index: (start, end) of its `source` value in the JSON text}."""
    text = text.lstrip("\ufeff")
    out = {}
    try:
        for key, start, _end in _members(text, 0):
            if key != "cells":
                continue
            for n, (cs, _ce) in enumerate(_elements(text, start)):
                for k, vs, ve in _members(text, cs):
                    if k == "source":
                        out[n] = (vs, ve)
    except (ValueError, IndexError):  # json.loads accepted it: only a scanner bug lands here
        return {}
    return out


def _json_lines(text: str, span, source: str) -> tuple:
    if span is None:
        return ()
    start, end = span
    line = text.count("\n", 0, start) + 1
    if text[start] != "[":
        return tuple(line for _ in split_lines(source, keepends=True))
    out = []
    for es, _ee in _elements(text, start):
        out.append(text.count("\n", 0, es) + 1)
    # a string element may hold several lines (hand-written notebooks): repeat its line
    lines = []
    try:
        elements = json.loads(text[start:end])
    except ValueError:
        return ()
    for value, at in zip(elements, out):
        if isinstance(value, str):
            lines += [at] * max(1, len(split_lines(value, keepends=True)))
    return tuple(lines)


# ---------------------------------------------------------------- writing cells back


def write_back(text: str, new_sources: dict) -> str:
    """The notebook's JSON text with the `source` of the cells in `new_sources` ({cell index: new
    text}) replaced, every other byte as it was. Unchanged lines keep their exact JSON spelling;
    a list stays a list of lines, a string stays a string."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    spans = _source_spans(body)
    ascii_only = body.isascii()
    pieces, last = [], 0
    for index in sorted(new_sources):
        if index not in spans:
            raise NotebookError(f"cell {index + 1} has no source to write")
        start, end = spans[index]
        pieces.append(body[last:start])
        pieces.append(_render_source(body[start:end], new_sources[index], ascii_only))
        last = end
    pieces.append(body[last:])
    return bom + "".join(pieces)


def _render_source(old: str, new: str, ascii_only: bool) -> str:
    def dump(s: str) -> str:
        return json.dumps(s, ensure_ascii=ascii_only)

    if not old.startswith("["):
        return dump(new)
    elements = list(_elements(old, 0))
    new_lines = split_lines(new, keepends=True)
    if not elements:
        return "[" + ", ".join(dump(s) for s in new_lines) + "]" if new_lines else old
    raws = [old[s:e] for s, e in elements]
    values = [json.loads(r) for r in raws]
    head = old[: elements[0][0]]
    tail = old[elements[-1][1] :]
    sep = old[elements[0][1] : elements[1][0]] if len(elements) > 1 else ",\n" + _indent_of(old, elements[0][0])
    out = []
    import difflib  # only when fixes are written back into a notebook

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=values, b=new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            out += raws[i1:i2]
        else:
            out += [dump(s) for s in new_lines[j1:j2]]
    if not out:
        return "[]"
    return head + sep.join(out) + tail


def _indent_of(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    return text[line_start:at] if not text[line_start:at].strip() else ""


# ---------------------------------------------------------------- positions as the user sees them


@dataclass(frozen=True)
class Where:
    """A place in a file as shown to the user: in a notebook, `cell` is set and the line and
    columns are the cell's (1-based line, 0-based character column)."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    cell: Cell | None = None

    def label(self) -> str:
        """`train.py:12:5`, `lesson.ipynb:cell 4:2:5`."""
        cell = f"cell {self.cell.number}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.col + 1}"

    def cell_json(self) -> dict | None:
        return None if self.cell is None else {"index": self.cell.index, "id": self.cell.id or None}


class Locator:
    """Maps the engine's positions (a notebook's virtual lines) to the user's (cell, line). Every
    output goes through it; a plain file's positions pass unchanged."""

    def __init__(self, notebooks: dict | None = None):
        self.notebooks = dict(notebooks or {})

    def notebook(self, path: str) -> Notebook | None:
        return self.notebooks.get(path)

    def span(self, span) -> Where:
        return self.range(span.path, span.line, span.col, span.end_line, span.end_col)

    def range(self, path: str, line: int, col: int, end_line: int, end_col: int) -> Where:
        nb = self.notebooks.get(path)
        if nb is None or line <= 0:
            return Where(path, line, col, end_line, end_col)
        start = nb.place(line, col)
        if start is None:
            return Where(path, line, col, end_line, end_col)
        end = nb.end_place(end_line, end_col, start)
        return Where(path, start.line, start.col, end.line, end.col, start.cell)

    def at(self, path: str, line: int, col: int) -> Where:
        """A point (0-based column); line 0 (the file as a whole) passes unchanged."""
        return self.range(path, line, col, line, col)


IDENTITY = Locator()
