"""Where a name imported from an installed library is defined, read off the files of the analysed
environment (never imported, never run).

`SiteIndex.define("transformers.BertForSequenceClassification")` follows the package's
`__init__` re-exports (explicit `from .x import Name`, `import *` narrowed by a text test, names
under `if TYPE_CHECKING:` as lazily loading packages declare them) down to the `class` or `def`.
This is the fast path; what it cannot follow is left to jedi (jedi_resolver.py).
"""

from __future__ import annotations

import ast
import os
import re

from ..source.prebuilt import dataclass
from .environment import PythonEnv

_MAX_HOPS = 24
_STAR_RE = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\*", re.M)


@dataclass(frozen=True)
class Definition:
    qual: str  # canonical dotted name: 'transformers.models.bert.modeling_bert.BertForSequenceClassification'
    path: str  # the file holding it
    line: int
    kind: str  # 'class' | 'function' | 'module' | 'value'
    rest: tuple = ()  # attributes after the definition: ('from_pretrained',)


class _Bindings:
    """Top-level names of one file: definitions and imports (also those inside if/try blocks)."""

    __slots__ = ("defs", "imports", "stars", "text", "tree")

    def __init__(self, text: str, tree: ast.Module):
        self.text = text
        self.tree = tree
        self.defs: dict = {}  # name -> (kind, node)
        self.imports: dict = {}  # name -> (module, level, attr or None)
        self.stars: list = []  # (module, level)
        self._walk(tree.body)

    def _walk(self, body):
        for st in body:
            if isinstance(st, ast.ClassDef):
                self.defs.setdefault(st.name, ("class", st))
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.defs.setdefault(st.name, ("function", st))
            elif isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.defs.setdefault(t.id, ("value", st))
            elif isinstance(st, ast.ImportFrom):
                for a in st.names:
                    if a.name == "*":
                        self.stars.append((st.module or "", st.level or 0))
                    else:
                        self.imports.setdefault(a.asname or a.name, (st.module or "", st.level or 0, a.name))
            elif isinstance(st, ast.Import):
                for a in st.names:
                    if a.asname:
                        self.imports.setdefault(a.asname, (a.name, 0, None))
                    else:
                        top = a.name.split(".")[0]
                        self.imports.setdefault(top, (top, 0, None))
            elif isinstance(st, ast.If):
                self._walk(st.body)
                self._walk(st.orelse)
            elif isinstance(st, ast.Try) or (hasattr(ast, "TryStar") and isinstance(st, ast.TryStar)):
                self._walk(st.body)
                for h in st.handlers:
                    self._walk(h.body)
                self._walk(st.orelse)

    def node_of(self, qual: str):
        """The ast node of the top-level definition a qualified name ends in, or None."""
        d = self.defs.get(qual.rsplit(".", 1)[-1])
        return d[1] if d is not None else None


class SiteIndex:
    def __init__(self, env: PythonEnv):
        self.env = env
        self._files: dict = {}
        self._modules: dict = {}
        self._defs: dict = {}
        self.visited: set = set()  # files read (for cache validation)

    # ------------------------------------------------------------ modules

    def module_file(self, dotted: str) -> str | None:
        """The file of an importable module or package (`__init__.py`), searched in site order."""
        if dotted in self._modules:
            return self._modules[dotted]
        parts = dotted.split(".")
        out = None
        for d in self.env.site_dirs:
            base = os.path.join(d, *parts)
            if os.path.isfile(base + ".py"):
                out = base + ".py"
                break
            init = os.path.join(base, "__init__.py")
            if os.path.isfile(init):
                out = init
                break
            if os.path.isfile(init + "i"):  # a compiled package described by its stub (torch._C)
                out = init + "i"
                break
            if os.path.isfile(base + ".pyi") and not os.path.isdir(base):
                out = base + ".pyi"
                break
        self._modules[dotted] = out
        return out

    def has_package(self, top: str) -> bool:
        return self.module_file(top) is not None or any(os.path.isdir(os.path.join(d, top)) for d in self.env.site_dirs)

    def module_name(self, path: str) -> str | None:
        """The dotted name of a file under one of the site folders."""
        ap = os.path.abspath(path)
        for d in self.env.site_dirs:
            if ap.startswith(d + os.sep):
                rel = ap[len(d) + 1 :]
                rel = rel[:-3] if rel.endswith(".py") else rel[:-4] if rel.endswith(".pyi") else rel
                parts = rel.split(os.sep)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                return ".".join(parts)
        return None

    def bindings(self, path: str) -> _Bindings | None:
        if path in self._files:
            return self._files[path]
        b = None
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            text = data.decode("utf-8", "replace")
            b = _Bindings(text, ast.parse(text))
            self.visited.add(path)
        except (OSError, SyntaxError, ValueError, RecursionError):
            b = None
        self._files[path] = b
        return b

    def text(self, path: str) -> str:
        try:
            with open(path, "rb") as fh:
                self.visited.add(path)
                return fh.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def absolute(self, path: str, module: str, level: int) -> str:
        """`from ..x import y` in `path`, as an absolute dotted module name."""
        if not level:
            return module
        own = self.module_name(path) or ""
        parts = own.split(".") if own else []
        if not path.endswith("__init__.py") and not path.endswith("__init__.pyi"):
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
        return ".".join(parts + ([module] if module else []))

    # ------------------------------------------------------------ names

    def define(self, dotted: str) -> Definition | None:
        """The definition a dotted name refers to, with the attributes left after it."""
        if dotted in self._defs:
            return self._defs[dotted]
        parts = dotted.split(".")
        out = None
        for i in range(len(parts), 0, -1):
            mod = ".".join(parts[:i])
            path = self.module_file(mod)
            if path is None:
                continue
            if i == len(parts):
                out = Definition(mod, path, 1, "module")
                break
            out = self._lookup(path, mod, parts[i], tuple(parts[i + 1 :]), 0)
            if out is None:
                # `pkg.sub` where sub is a module of the package not imported by its __init__
                sub = self.module_file(f"{mod}.{parts[i]}")
                if sub is not None:
                    continue
            break
        self._defs[dotted] = out
        return out

    def absent(self, dotted: str) -> bool:
        """True when no module can define `dotted`: its deepest importable module never names the
        next part, star-imports nothing that may, and makes no names at run time (a module
        `__getattr__`, `globals()`); jedi, which reads the same files, would not find it either."""
        parts = dotted.split(".")
        for i in range(len(parts) - 1, 0, -1):
            path = self.module_file(".".join(parts[:i]))
            if path is None:
                continue
            name = parts[i]
            if self.module_file(".".join(parts[: i + 1])) is not None:
                return False
            text = self.text(path)
            return "__getattr__" not in text and "globals()" not in text and not self._may_define(path, name)
        return False

    def _lookup(self, path: str, mod: str, name: str, rest: tuple, hops: int) -> Definition | None:
        if hops > _MAX_HOPS:
            return None
        b = self.bindings(path)
        if b is None:
            return None
        d = b.defs.get(name)
        if d is not None:
            kind, node = d
            if kind == "value" and name in b.imports:
                pass  # `X = X` style re-binding after an import: follow the import
            else:
                return Definition(f"{mod}.{name}", path, node.lineno, kind, rest)
        imp = b.imports.get(name)
        if imp is not None:
            module, level, attr = imp
            target = self.absolute(path, module, level)
            if attr is None:
                return self._in_module(target, rest, hops + 1)
            found = self._from_module(target, attr, rest, hops + 1)
            if found is not None:
                return found
        for module, level in _likely_first(b.stars, name):
            target = self.absolute(path, module, level)
            tpath = self.module_file(target)
            if tpath is None:
                continue
            if not self._may_define(tpath, name):
                continue
            found = self._lookup(tpath, target, name, rest, hops + 1)
            if found is not None:
                return found
        sub = self.module_file(f"{mod}.{name}")
        if sub is not None:
            return self._in_module(f"{mod}.{name}", rest, hops + 1)
        return None

    def _from_module(self, module: str, attr: str, rest: tuple, hops: int) -> Definition | None:
        tpath = self.module_file(module)
        if tpath is None:
            return None
        found = self._lookup(tpath, module, attr, rest, hops)
        if found is None and self.module_file(f"{module}.{attr}") is not None:
            return self._in_module(f"{module}.{attr}", rest, hops)
        return found

    def _in_module(self, module: str, rest: tuple, hops: int) -> Definition | None:
        path = self.module_file(module)
        if path is None:
            return None
        if not rest:
            return Definition(module, path, 1, "module")
        return self._lookup(path, module, rest[0], rest[1:], hops)

    def _may_define(self, path: str, name: str, depth=0) -> bool:
        """Cheap text test before parsing a star-imported module: it names `name`, or star-imports
        further modules that may."""
        text = self.text(path)
        if re.search(rf"\b{re.escape(name)}\b", text):
            return True
        if depth > 3:
            return False
        for m in _STAR_RE.finditer(text):
            spec = m.group(1)
            level = len(spec) - len(spec.lstrip("."))
            target = self.absolute(path, spec.lstrip("."), level)
            tpath = self.module_file(target)
            if tpath is not None and self._may_define(tpath, name, depth + 1):
                return True
        return False

    # ------------------------------------------------------------ expressions in a library file

    def resolve_expr(self, path: str, node) -> str | None:
        """The absolute dotted name an expression (a base class, an annotation) refers to in `path`."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(node, ast.Subscript):
            return None
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        chain.append(node.id)
        chain.reverse()
        b = self.bindings(path)
        mod = self.module_name(path) or ""
        if b is None:
            return None
        head = chain[0]
        if head in b.defs:
            return ".".join([mod] + chain)
        imp = b.imports.get(head)
        if imp is not None:
            module, level, attr = imp
            base = self.absolute(path, module, level)
            parts = [base] + ([attr] if attr else []) + chain[1:]
            return ".".join(p for p in parts if p)
        for module, level in b.stars:
            target = self.absolute(path, module, level)
            tpath = self.module_file(target)
            if tpath is not None and self._may_define(tpath, head):
                found = self._lookup(tpath, target, head, tuple(chain[1:]), 1)
                if found is not None:
                    return ".".join((found.qual,) + found.rest)
        if head in ("object", "type", "dict", "list", "tuple", "Exception"):
            return f"builtins.{head}"
        return None


def _likely_first(stars, name: str):
    """Star imports in the order to try: a module whose name is part of the name first
    (`from .gpt2 import *` for GPT2LMHeadModel): a package re-exporting hundreds of modules
    (transformers.models) is then read only where the name is."""
    low = name.lower()

    def score(item):
        last = item[0].rsplit(".", 1)[-1].lower().replace("_", "")
        return -len(last) if last and last in low else 0

    return sorted(stars, key=score)
