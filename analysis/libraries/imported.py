"""Which libraries the analysed files import, and whether the analysed environment has them.

The output says which environment's libraries were read and which imported ones are not
installed there (`timm: not installed in /proj/.venv`): a model from a library that is not found
is known only from gradaudit's table or from the code's own evidence, and a wrong environment
shows at once. What the project itself provides and the standard library are not libraries here;
an import guarded by `try: ... except ImportError` is optional and not missed when absent.
"""

from __future__ import annotations

import ast
import os
import sys

from ..source.prebuilt import dataclass
from ..source.program import holds_python
from .environment import PythonEnv

# gradaudit models these itself and never reads them: whether the environment has them changes nothing
NEVER_READ = frozenset({"torch"})
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(sys.builtin_module_names) | {"__future__"}
_OPTIONAL = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")


@dataclass(frozen=True)
class LibraryUse:
    """The environment an analysis read installed libraries from, and the imported libraries."""

    prefix: str
    interpreter: str
    how: str  # PythonEnv.how
    why: str  # PythonEnv.why: 'the project's .venv', 'named by --python', ...
    found: tuple = ()  # top-level names imported and installed there
    missing: tuple = ()  # imported, not installed there (nor the project's, nor the standard library's)

    @property
    def lacking(self) -> tuple:
        """The missing libraries that matter: torch's absence changes nothing (gradaudit knows it)."""
        return tuple(n for n in self.missing if n not in NEVER_READ)

    @property
    def worth_saying(self) -> bool:
        """Whether the environment made a difference: a library other than torch was imported, found
        there or not."""
        return any(name not in NEVER_READ for name in self.found + self.missing)

    def where(self) -> str:
        """The environment's folder as the output shows paths: relative to the working folder when
        inside it."""
        try:
            rel = os.path.relpath(self.prefix)
        except ValueError:  # another drive (Windows)
            return self.prefix
        return self.prefix if rel.startswith("..") else rel

    def sentence(self, relative: bool = True) -> str:
        """'Libraries read from .venv (the project's .venv); not installed there: timm.'"""
        out = f"Libraries read from {self.where() if relative else self.prefix} ({self.why})"
        if self.lacking:
            out += "; not installed there: " + ", ".join(self.lacking)
        return out + "."

    def to_json(self) -> dict:
        return {
            "path": self.prefix,
            "interpreter": self.interpreter or None,
            "how": self.how,
            "why": self.why,
            "libraries": list(self.found),
            "missing": list(self.missing),
        }


def library_use(env: PythonEnv, files, program) -> LibraryUse:
    """The libraries `files` (SourceFiles the analysis read) import, against `env`."""
    found, missing = set(), set()
    for sf in files:
        for top, optional in imported_tops(sf.tree):
            if top in found or top in missing or _is_project(program, sf, top):
                continue
            if env.provides(top):
                found.add(top)
            elif not optional:
                missing.add(top)
    return LibraryUse(env.prefix, env.interpreter, env.how, env.why, tuple(sorted(found)), tuple(sorted(missing)))


def merge(uses) -> list[LibraryUse]:
    """One LibraryUse per environment, over several analyses (in the order first met)."""
    by_env: dict = {}
    for u in uses:
        prev = by_env.get(u.prefix)
        if prev is None:
            by_env[u.prefix] = u
        else:
            found = set(prev.found) | set(u.found)
            by_env[u.prefix] = LibraryUse(
                prev.prefix,
                prev.interpreter,
                prev.how,
                prev.why,
                tuple(sorted(found)),
                tuple(sorted((set(prev.missing) | set(u.missing)) - found)),
            )
    return list(by_env.values())


def imported_tops(tree) -> list[tuple[str, bool]]:
    """(top-level module, optional) of each absolute import, in any block (statements only).
    Kept on the tree: every analysis that reads a file asks again (a project's common modules are
    read by most of its files' analyses)."""
    out = getattr(tree, "_gradaudit_tops", None)
    if out is None:
        out = []
        _walk(getattr(tree, "body", ()), False, out)
        try:
            tree._gradaudit_tops = out
        except AttributeError:  # not an ast node
            pass
    return out


# `try` statements, with `except*` on 3.11+
_TRIES: tuple[type[ast.Try], ...] = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)


def _walk(body, optional: bool, out: list):
    for st in body:
        if isinstance(st, ast.Import):
            out.extend((a.name.split(".")[0], optional) for a in st.names)
        elif isinstance(st, ast.ImportFrom):
            if not st.level and st.module:
                out.append((st.module.split(".")[0], optional))
        elif isinstance(st, _TRIES):
            guarded = optional or any(_catches_import_error(h.type) for h in st.handlers)
            _walk(st.body, guarded, out)
            for h in st.handlers:
                _walk(h.body, optional, out)
            _walk(st.orelse, optional, out)
            _walk(st.finalbody, optional, out)
        else:
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(st, name, None)
                if isinstance(inner, list):
                    _walk(inner, optional, out)
            for case in getattr(st, "cases", ()):  # match statements
                _walk(case.body, optional, out)


def _catches_import_error(t) -> bool:
    if t is None:
        return True  # a bare except
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(
        (isinstance(n, ast.Name) and n.id in _OPTIONAL) or (isinstance(n, ast.Attribute) and n.attr in _OPTIONAL)
        for n in names
    )


def _is_project(program, sf, top: str) -> bool:
    if top in _STDLIB:
        return True
    if program is None:
        return False
    if program.resolve(sf, top) is not None:
        return True
    # a namespace package of the project (a folder of modules without __init__.py)
    return any(holds_python(os.path.join(r, top)) for r in (*program.roots_for(sf), *program.edited_roots(sf)))
