"""The folders a script's folder puts on sys.path before it imports: read, never run.

Research repositories keep their packages in a folder no script is in (`lib/`, `src/`) and make it
importable at run time: `import _init_paths` first (a helper module of the scripts' folder doing
`sys.path.insert(0, osp.join(this_dir, '..', 'lib'))`, often through its own `add_path`), or the
same edit at the top of the script. Without those folders `from models.net import Net` names no
file of the project, and every training step built on it is a step on unknown values.

The edits are evaluated from the text: string constants, `__file__`, names assigned at the top
level, `os.path` joins and dirnames, `pathlib.Path` parents and `/`, and calls of a top-level
function whose body inserts its parameter. Anything else (an environment variable, the working
folder, a value computed by a call) adds nothing. A relative folder is taken from the script's
folder and from the project's root (how such scripts are run); only folders that exist count.
"""

from __future__ import annotations

import ast
import os

# a folder's scripts and what they add, valid while the folder and those files keep their mtimes
_CACHE: dict[str, tuple[tuple, tuple[str, ...]]] = {}
_MAX_SCRIPTS = 200  # a folder of more scripts than this is not read (a dump of notebooks' exports)
_MAX_BYTES = 200_000
_PATH_WORDS = ("sys.path", "addsitedir")


def folder_edits(folder: str, root: str | None) -> tuple[str, ...]:
    """The folders the Python files of `folder` add to sys.path, in the order they add them
    (`root`: the project's folder, for relative ones)."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
    except OSError:
        return ()
    if len(names) > _MAX_SCRIPTS:
        return ()
    stamps = []
    for n in names:
        try:
            stamps.append((n, os.stat(os.path.join(folder, n)).st_mtime_ns))
        except OSError:
            continue
    key = (root or "", *stamps)
    held = _CACHE.get(folder)
    if held is not None and held[0] == key:
        return held[1]
    out: list[str] = []
    for n, _ in stamps:
        path = os.path.join(folder, n)
        try:
            if os.path.getsize(path) > _MAX_BYTES:
                continue
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        if not any(w in text for w in _PATH_WORDS):
            continue
        for d in edited_folders(path, text, root):
            if d not in out and d != folder:
                out.append(d)
    _CACHE[folder] = (key, tuple(out))
    return tuple(out)


def edited_folders(path: str, source: str, root: str | None = None) -> list[str]:
    """The existing folders the module at `path` puts on sys.path at its top level."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    ev = _Evaluator(os.path.abspath(path), tree)
    ev.block(tree.body)
    here = os.path.dirname(os.path.abspath(path))
    bases = [here]
    if root is not None and root != here:
        bases.append(root)
    out: list[str] = []
    for p in ev.added:
        for candidate in [p] if os.path.isabs(p) else [os.path.join(b, p) for b in bases]:
            d = os.path.normpath(candidate)
            if os.path.isdir(d) and d not in out:
                out.append(d)
                break
    return out


def _is_sys_path(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def _inserted_param(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int | None:
    """The position of the parameter a function puts on sys.path (`def add_path(p): sys.path.insert(0, p)`)."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _is_sys_path(n.func.value):
            arg = _edit_argument(n)
            if isinstance(arg, ast.Name) and arg.id in params:
                return params.index(arg.id)
    return None


def _edit_argument(call: ast.Call) -> ast.expr | None:
    """The folder argument of `sys.path.insert(i, X)` / `sys.path.append(X)`."""
    assert isinstance(call.func, ast.Attribute)
    if call.func.attr == "insert" and len(call.args) == 2:
        return call.args[1]
    if call.func.attr == "append" and len(call.args) == 1:
        return call.args[0]
    return None


class _Evaluator:
    """Top-level statements in order, with the string value of each name they assign (or None)."""

    def __init__(self, path: str, tree: ast.Module):
        self.path = path
        self.env: dict[str, str | None] = {}
        self.added: list[str] = []
        self.helpers = {
            s.name: i
            for s in tree.body
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and (i := _inserted_param(s)) is not None
        }

    def block(self, body: list[ast.stmt]) -> None:
        for s in body:
            self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign):
            value = self.eval(s.value)
            for t in s.targets:
                if isinstance(t, ast.Name):
                    self.env[t.id] = value
                elif _is_sys_path(t) or (isinstance(t, ast.Subscript) and _is_sys_path(t.value)):
                    # `sys.path = [lib] + sys.path`, `sys.path[0:0] = [lib]`
                    for n in ast.walk(s.value):
                        if isinstance(n, (ast.List, ast.Tuple)):
                            self._add_all(n.elts)
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None:
            self.env[s.target.id] = self.eval(s.value)
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            self.call(s.value)
        elif isinstance(s, ast.If):
            self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, ast.Try):
            self.block(s.body)
            for h in s.handlers:
                self.block(h.body)
            self.block(s.orelse)
            self.block(s.finalbody)
        elif isinstance(s, ast.With):
            self.block(s.body)
        elif isinstance(s, ast.For) and isinstance(s.target, ast.Name) and isinstance(s.iter, (ast.List, ast.Tuple)):
            for e in s.iter.elts:
                self.env[s.target.id] = self.eval(e)
                self.block(s.body)

    def call(self, c: ast.Call) -> None:
        f = c.func
        if isinstance(f, ast.Attribute) and _is_sys_path(f.value):
            if f.attr == "extend" and len(c.args) == 1 and isinstance(c.args[0], (ast.List, ast.Tuple)):
                self._add_all(c.args[0].elts)
            else:
                arg = _edit_argument(c)
                if arg is not None:
                    self._add(arg)
        elif isinstance(f, ast.Attribute) and f.attr == "addsitedir" and len(c.args) == 1:
            self._add(c.args[0])
        elif isinstance(f, ast.Name) and f.id in self.helpers:
            i = self.helpers[f.id]
            if i < len(c.args):
                self._add(c.args[i])

    def _add_all(self, elts: list[ast.expr]) -> None:
        for e in elts:
            if not (isinstance(e, ast.Starred) or _is_sys_path(e)):
                self._add(e)

    def _add(self, node: ast.expr) -> None:
        value = self.eval(node)
        if value:
            self.added.append(value)

    def eval(self, node: ast.expr, depth: int = 0) -> str | None:
        if depth > 20:
            return None
        ev = lambda n: self.eval(n, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.Name):
            return self.path if node.id == "__file__" else self.env.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            inner = ev(node.value)
            return os.path.dirname(inner) if inner else None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
            inner = ev(node.value.value)
            k = node.slice
            if inner and isinstance(k, ast.Constant) and isinstance(k.value, int) and k.value >= 0:
                for _ in range(k.value + 1):
                    inner = os.path.dirname(inner)
                return inner
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
            left, right = ev(node.left), ev(node.right)
            if left is None or right is None:
                return None
            return os.path.join(left, right) if isinstance(node.op, ast.Div) else left + right
        if isinstance(node, ast.Call):
            return self._eval_call(node, ev)
        return None

    def _eval_call(self, node: ast.Call, ev) -> str | None:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        args = [ev(a) for a in node.args]
        if name in ("join", "joinpath"):
            parts = ([ev(f.value)] if name == "joinpath" and isinstance(f, ast.Attribute) else []) + args
            known = [p for p in parts if p is not None]
            return os.path.join(*known) if known and len(known) == len(parts) else None
        if name in ("resolve", "absolute", "expanduser") and isinstance(f, ast.Attribute) and not node.args:
            return ev(f.value)  # `Path(...).resolve()`
        if len(args) != 1 or args[0] is None:
            return None
        if name == "dirname":
            return os.path.dirname(args[0])
        if name in ("abspath", "realpath", "normpath", "str", "Path", "PurePath", "fspath", "expanduser"):
            return args[0]
        return None
