"""Broken, odd and huge Python for the fuzz tests: seeds and the hypothesis strategies that mangle them.

Seeds are the project's own examples and test data, the rules' examples, and PyTorch's own
source read from the installed package at test time (never copied into the project). Mutations
are what an editor produces mid-edit and what generated code looks like: truncations, deleted,
swapped and duplicated lines and tokens, stray tokens, re-indentation, deep nesting, huge
literals, unicode identifiers, tabs, CRLF/CR line ends, a BOM, NUL bytes.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re

from helpers import strip_markers
from hypothesis import strategies as st

from gradaudit.analysis.rules import RULES

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_FILES = (
    "nn/modules/linear.py",
    "optim/sgd.py",
    "optim/adam.py",
    "nn/modules/container.py",
    "utils/data/sampler.py",
    "nn/utils/clip_grad.py",
    "nn/modules/dropout.py",
    "optim/lr_scheduler.py",
)


def _project_seeds() -> list[str]:
    out = []
    for pattern in ("examples/**/*.py", "tests/data/**/*.py"):
        for path in sorted(glob.glob(os.path.join(REPO, pattern), recursive=True)):
            with open(path, encoding="utf-8") as fh:
                out.append(fh.read())
    for rule in RULES:
        for ex in list(rule.invalid) + list(rule.valid):
            out.append(strip_markers(ex.source)[0])
    return out


def _torch_seeds() -> list[str]:
    spec = importlib.util.find_spec("torch")  # located, not imported
    if spec is None or spec.origin is None:
        return []
    root = os.path.dirname(spec.origin)
    out = []
    for rel in TORCH_FILES:
        path = os.path.join(root, rel)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                out.append(fh.read())
    return out


SEEDS = _project_seeds() + _torch_seeds()
_TOKEN = re.compile(r"\w+|[^\w\s]")
_STRAY = [
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "=",
    "def",
    "class",
    "lambda",
    "not",
    "yield",
    "await",
    "'",
    '"',
    '"""',
    "\\",
    "@",
    ".",
    "*",
    "**",
    "->",
    "if",
    "else",
    "for",
    "in",
    "return",
    "\t",
    ";",
    "async",
    "with",
    "global x",
    "nonlocal y",
    "del",
    "import",
    "from",
    "match",
    "case",
    "\x00",
    "\u2028",
]
_UNICODE = ["é", "ñ", "ß", "Ω", "ﬁ", "名前", "ｘ", "ǅ", "_\u0301", "\U0001d4b3"]  # some NFKC-normalise


def _lines(src):
    return src.splitlines(keepends=True)


def _at(n, frac):
    return min(int(frac * n), max(n - 1, 0))


def truncate(src, frac):
    return src[: int(len(src) * frac)]


def delete_lines(src, frac, count):
    lines = _lines(src)
    i = _at(len(lines), frac)
    return "".join(lines[:i] + lines[i + count :])


def swap_lines(src, a, b):
    lines = _lines(src)
    if len(lines) < 2:
        return src
    i, j = _at(len(lines), a), _at(len(lines), b)
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def duplicate_lines(src, frac, count):
    lines = _lines(src)
    i = _at(len(lines), frac)
    return "".join(lines[: i + count] + lines[i : i + count] + lines[i + count :])


def reindent(src, frac, count, delta):
    lines = _lines(src)
    i = _at(len(lines), frac)
    for k in range(i, min(i + count, len(lines))):
        lines[k] = (
            (" " * delta + lines[k]) if delta > 0 else lines[k][min(-delta, len(lines[k]) - len(lines[k].lstrip())) :]
        )
    return "".join(lines)


def _tokens(src):
    return list(_TOKEN.finditer(src))


def delete_token(src, frac):
    toks = _tokens(src)
    if not toks:
        return src
    m = toks[_at(len(toks), frac)]
    return src[: m.start()] + src[m.end() :]


def swap_tokens(src, a, b):
    toks = _tokens(src)
    if len(toks) < 2:
        return src
    m1, m2 = sorted((toks[_at(len(toks), a)], toks[_at(len(toks), b)]), key=lambda m: m.start())
    if m1.start() == m2.start():
        return src
    return src[: m1.start()] + m2.group() + src[m1.end() : m2.start()] + m1.group() + src[m2.end() :]


def insert_token(src, frac, token):
    at = int(len(src) * frac)
    return src[:at] + token + src[at:]


def _indent_at(lines, i):
    if not lines:
        return ""
    line = lines[min(i, len(lines) - 1)]
    return line[: len(line) - len(line.lstrip())] if line.strip() else ""


DEEP = {
    "not": lambda n: "x = " + "not " * n + "True",
    "subscript": lambda n: "x = y" + "[0]" * n,
    "add": lambda n: "x = " + "+".join(["a"] * n),
    "neg": lambda n: "x = " + "-" * n + "1",
    "attr": lambda n: "x = y" + ".a" * n,
    "call": lambda n: "x = " + "f(" * min(n, 190) + ")" * min(n, 190),
    "paren": lambda n: "x = " + "(" * min(n, 190) + "1" + ")" * min(n, 190),
    "list": lambda n: "x = " + "[" * min(n, 190) + "]" * min(n, 190),
    "lambda": lambda n: "x = " + "lambda: " * n + "1",
    "ifexp": lambda n: "x = " + "1 if c else " * n + "1",
    "cmp": lambda n: "x = " + " < ".join(["a"] * n),
    "boolop": lambda n: "x = " + " and ".join(["a"] * n),
    "strcat": lambda n: "x = " + " + ".join(['"s"'] * n),
    "blocks": lambda n: "".join("    " * k + "if x:\n" for k in range(min(n, 99))) + "    " * min(n, 99) + "pass",
}


def deep(src, kind, depth, frac):
    lines = _lines(src)
    i = _at(len(lines), frac)
    indent = _indent_at(lines, i)
    text = "\n".join(indent + part for part in DEEP[kind](depth).split("\n"))
    return "".join(lines[:i]) + text + "\n" + "".join(lines[i:])


HUGE = {
    "list": lambda n: "DATA = [" + ", ".join(str(k % 97) for k in range(n)) + "]",
    "string": lambda n: "TEXT = '" + "ab" * n + "'",
    "dict": lambda n: "TABLE = {" + ", ".join(f"{k}: {k}.5" for k in range(n // 4)) + "}",
    "int": lambda n: "BIG = " + "9" * min(n, 4000),
    "bytes": lambda n: "RAW = b'" + "\\x00" * (n // 4) + "'",
    "repeat": lambda n: "FILL = 'a' * 10 ** 10",
    "assigns": lambda n: "".join(f"V{k} = {k}\n" for k in range(n // 20)).rstrip("\n"),
}


def huge(src, kind, size, frac):
    lines = _lines(src)
    i = _at(len(lines), frac)
    while i > 0 and _indent_at(lines, i):
        i -= 1  # at the top level
    return "".join(lines[:i]) + HUGE[kind](size) + "\n" + "".join(lines[i:])


def unicode_names(src, frac, suffix):
    names = sorted({m.group() for m in re.finditer(r"\b[a-z_][a-z_0-9]*\b", src)} - {"def", "class", "import"})
    if not names:
        return src
    name = names[_at(len(names), frac)]
    return re.sub(rf"\b{re.escape(name)}\b", name + suffix, src)


def tabs(src, everywhere):
    if everywhere:
        return src.replace("    ", "\t")
    lines = _lines(src)
    return "".join(l.replace("    ", "\t", 1) if k % 3 == 0 else l for k, l in enumerate(lines))


def line_ends(src, end):
    return re.sub(r"\r\n|\r|\n", end, src)


def bom(src):
    return "\ufeff" + src


MUTATIONS = st.one_of(
    st.tuples(st.just(truncate), st.floats(0, 1)),
    st.tuples(st.just(delete_lines), st.floats(0, 1), st.integers(1, 12)),
    st.tuples(st.just(swap_lines), st.floats(0, 1), st.floats(0, 1)),
    st.tuples(st.just(duplicate_lines), st.floats(0, 1), st.integers(1, 8)),
    st.tuples(st.just(reindent), st.floats(0, 1), st.integers(1, 6), st.sampled_from([-4, -2, -1, 1, 2, 4])),
    st.tuples(st.just(delete_token), st.floats(0, 1)),
    st.tuples(st.just(swap_tokens), st.floats(0, 1), st.floats(0, 1)),
    st.tuples(st.just(insert_token), st.floats(0, 1), st.sampled_from(_STRAY)),
    st.tuples(
        st.just(deep), st.sampled_from(sorted(DEEP)), st.sampled_from([50, 120, 400, 2000, 3000]), st.floats(0, 1)
    ),
    st.tuples(st.just(huge), st.sampled_from(sorted(HUGE)), st.sampled_from([1000, 20000, 200000]), st.floats(0, 1)),
    st.tuples(st.just(unicode_names), st.floats(0, 1), st.sampled_from(_UNICODE)),
    st.tuples(st.just(tabs), st.booleans()),
    st.tuples(st.just(line_ends), st.sampled_from(["\r\n", "\r", "\n"])),
    st.tuples(st.just(bom)),
)


@st.composite
def sources(draw, max_mutations=3):
    """A seed and what was done to it, and the result."""
    src = draw(st.sampled_from(SEEDS))
    steps = draw(st.lists(MUTATIONS, min_size=1, max_size=max_mutations))
    for fn, *args in steps:
        src = fn(src, *args)
    return src


def describe(src: str) -> str:
    return f"{len(src)} chars, {src.count(chr(10)) + 1} lines, starts {src[:80]!r}"
