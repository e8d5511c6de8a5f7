"""Source files and how imports between them resolve.

Project-local imports (`from models.net import Net`, `from .utils import freeze`) are resolved
against the importing file's folder, the folders above its package, the project root and any
extra roots; anything else (torch, numpy, transformers, ...) is left as a dotted name.
"""

from __future__ import annotations

import ast
import errno
import gc
import io
import os
import re
import warnings
from typing import Any

from .path_edits import folder_edits
from .prebuilt import dataclass, field
from .recovery import parse_error_position, recover

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_SKIP_PARTS = ("site-packages", "dist-packages")


def installed(path: str) -> bool:
    """A file of an installed package (a library's own code, not the project's)."""
    return any(p in path for p in _SKIP_PARTS)


class ParseError(Exception):
    """A file that could not be parsed (or read). `region`: the lines (first, last) left out of the
    analysis when the rest of the file was still analysed; None when nothing of it was."""

    def __init__(self, path, line, col, msg, region=None, kind="parse"):
        super().__init__(path, line, col, msg, region, kind)  # args round-trip through pickle (workers)
        self.path, self.line, self.col, self.msg = path, line, col, msg
        self.region = region
        self.kind = kind  # 'parse' | 'read'

    def __str__(self):
        return f"{self.path}:{self.line}:{self.col}: {self.msg}"


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(source: str, keepends=False) -> list[str]:
    """Lines as Python sees them: only LF, CRLF and CR end a line (str.splitlines also breaks at
    form feeds and other separators, which would shift every position after them)."""
    if not keepends:
        return _LINE_BREAK.split(source) if source else []
    out, start = [], 0
    for m in _LINE_BREAK.finditer(source):
        out.append(source[start : m.end()])
        start = m.end()
    if start < len(source):
        out.append(source[start:])
    return out


@dataclass(eq=False)
class SourceFile:
    path: str  # as given by the caller (shown in output)
    abspath: str
    source: str
    tree: ast.Module
    modname: str = ""
    broken: tuple = ()  # ParseErrors of the statements left out (the rest still parsed)
    deep: tuple = ()  # depth.DeepCut: expressions too deeply nested to follow, cut out
    depth_limited: bool = False
    _line_starts: list | None = field(default=None, repr=False)
    _lines: list | None = field(default=None, repr=False)
    _declares_globals: bool | None = field(default=None, repr=False)

    @property
    def declares_globals(self) -> bool:
        """Some function may hold a `global` statement (the word is in the text): most files have
        none, and then no function's body needs a walk to find them."""
        if self._declares_globals is None:
            self._declares_globals = "global" in self.source
        return self._declares_globals

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.source)
        return self._lines

    def line_text(self, lineno: int) -> str:
        lines = self.lines
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""

    def segment(self, node) -> str:
        """Source text of a node (ast.get_source_segment without re-splitting every call)."""
        try:
            l0, c0, l1, c1 = node.lineno, node.col_offset, node.end_lineno, node.end_col_offset
        except AttributeError:
            return ""
        if l0 == l1:
            return self.line_text(l0).encode("utf-8")[c0:c1].decode("utf-8", "replace")
        first = self.line_text(l0).encode("utf-8")[c0:].decode("utf-8", "replace")
        middle = self.lines[l0 : l1 - 1]
        last = self.line_text(l1).encode("utf-8")[:c1].decode("utf-8", "replace")
        return "\n".join([first, *middle, last])

    def char_col(self, lineno: int, byte_col: int) -> int:
        """ast columns are UTF-8 byte offsets; the output wants characters."""
        text = self.line_text(lineno)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def parse_source(path: str, source: str, abspath: str | None = None) -> SourceFile:
    """Parse a file. A file broken in some top-level statements is still parsed without them
    (they are listed in `broken`); a ParseError is raised only when nothing usable is left."""
    if source.startswith("\ufeff"):
        source = source[1:]  # a BOM left in the text (decoded files have none): Python ignores it
    nul = source.find("\x00")
    if nul >= 0:
        line = source.count("\n", 0, nul) + 1
        col = nul - (source.rfind("\n", 0, nul) + 1) + 1
        first = ParseError(path, line, col, "source code string cannot contain null bytes")
        # the statement holding it is left out like a syntax error there
        exc = SyntaxError(first.msg)
        exc.lineno, exc.offset = line, col
        masked = source.replace("\x00", " ")
        return _recovered(path, split_lines(masked, keepends=True), exc, abspath, first=first)
    try:
        with warnings.catch_warnings():
            # "invalid escape sequence" and the like are Python's to say at run time, not ours
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        return _recovered(path, split_lines(source, keepends=True), exc, abspath)
    except (RecursionError, MemoryError) as exc:
        # the parser's own limits ("too complex", "recursion during ast construction"): find the
        # statements it gives up on and parse the rest
        why = "too deeply nested for Python's parser"
        if isinstance(exc, MemoryError) and str(exc) and "too complex" not in str(exc):
            why = "the file is too large to parse"
        return _recovered(path, split_lines(source, keepends=True), None, abspath, deep=True, why=why)
    except ValueError as exc:  # null bytes on Pythons that raise ValueError for them
        raise ParseError(path, 1, 1, str(exc)) from None
    return SourceFile(path, abspath or os.path.abspath(path), source, tree)


def _recovered(path, lines, exc, abspath, deep=False, first=None, why="") -> SourceFile:
    """The file without the top-level statements that do not parse (recovery.py)."""
    if exc is not None and first is None:
        line, col = parse_error_position(exc, lines)
        first = ParseError(path, line, col, exc.msg or "invalid syntax")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = recover(lines, exc, lambda t: ast.parse(t, filename=path), deep=deep)
    if out is None:
        if first is None:
            first = ParseError(path, 1, 1, why or "invalid syntax")
        raise first from None
    tree, used, regions = out
    broken = []
    for b in regions:
        if first is not None and b.first <= first.line <= b.last:
            line, col, msg = first.line, first.col, first.msg  # Python's own first error, where it said
        else:
            line, col, msg = b.line, b.col, b.msg
        broken.append(ParseError(path, line, col, msg, region=(b.first, b.last)))
    return SourceFile(path, abspath or os.path.abspath(path), used, tree, broken=tuple(broken))


def read_source(path: str) -> tuple[str, str]:
    """(text, encoding) of a Python file, by its PEP 263 cookie or BOM (utf-8 by default).

    Bytes that do not decode are refused as Python refuses them (a ParseError at their line):
    a latin-1 file without a coding cookie is not Python source."""
    with open(path, "rb") as fh:
        data = fh.read()
    return decode_source(path, data)


def decode_source(path: str, data: bytes) -> tuple[str, str]:
    try:
        encoding = _encoding(data)
    except SyntaxError as exc:  # an unknown encoding in the cookie, or a cookie contradicting the BOM
        head = data.split(b"\n", 2)[:2]
        line = next((i + 1 for i, text in enumerate(head) if b"coding" in text), 1)
        raise ParseError(path, line, 1, str(exc.msg or exc)) from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = data[exc.start]
        if encoding in ("utf-8", "utf-8-sig"):
            msg = f"Non-UTF-8 code starting with '\\x{byte:02x}' on line {line}, but no encoding declared"
        else:
            msg = f"'{encoding}' codec can't decode byte 0x{byte:02x} on line {line}"
        raise ParseError(path, line, col, msg) from None
    except LookupError:
        raise ParseError(path, 1, 1, f"unknown encoding: {encoding}") from None


def _encoding(data: bytes) -> str:
    """The encoding `tokenize.detect_encoding` finds; without a BOM or a coding cookie in the first
    two lines that is utf-8, known without importing tokenize (most files)."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    head = data[: second if second >= 0 else len(data)]
    if head.isascii() and b"coding" not in head:
        return "utf-8"
    import tokenize

    return tokenize.detect_encoding(io.BytesIO(data).readline)[0]


def read_text(path: str) -> str:
    return read_source(path)[0]


def write_source(path: str, text: str, encoding: str):
    """Write a file atomically: a temporary file beside it, then os.replace, keeping its mode.
    A crash or a full disk mid-write leaves the old file whole."""
    target = os.path.realpath(path)  # a symlink stays a symlink: write where it points
    folder = os.path.dirname(target) or "."
    data = text.encode(encoding)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not st.st_mode & 0o222:
        # replacing the file would succeed (the folder is writable) but ignore what its mode says
        raise PermissionError(errno.EACCES, "Permission denied (the file is read-only)", path)
    import tempfile  # only when fixes are written

    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".gradaudit", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None:
            os.chmod(tmp, st.st_mode & 0o7777)
            if hasattr(os, "chown") and (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(tmp, st.st_uid, st.st_gid)  # root fixing a user's file: it stays theirs
                except OSError:
                    pass
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Program:
    """Loads and caches parsed files; resolves project-local imports."""

    def __init__(self, extra_roots=(), overlays=None, freeze_trees=False, parsed=None, edited=None):
        self.extra_roots = [os.path.abspath(r) for r in extra_roots]
        # batch runs keep every parsed tree for the whole run: freezing each one out of the cyclic
        # collector's reach right after parsing saves walking it again in every later collection
        self.freeze_trees = freeze_trees
        self.overlays = dict(overlays or {})  # abspath -> source (unsaved editor buffers)
        self._files: dict[str, SourceFile | None] = {}
        self._resolved: dict[tuple, str | None] = {}
        self._namespaces: dict[tuple, bool] = {}
        self._importers: dict[str, list] = {}  # importing file -> its keys in _resolved (own resolver)
        self._roots: dict[str, list] = {}
        self._edited: dict[str, tuple[str, ...]] = {}
        self._texts: dict[str, str] = {}
        self._names: dict[str, frozenset | None] = {}  # root -> module names found under it
        # parsed modules shared between analyses (the language server's worker): reused while the
        # text is the same
        self.parsed = parsed
        # the last analysed version of each document being edited (the language server's worker):
        # the next version is parsed by its changed statements (incremental.py)
        self.edited = edited

    # library_models.LibraryModels of the analysed environment, made by `library_source` (set by
    # the Analyzer) when the first library name is met: a script that meets none neither imports
    # nor looks for them
    _libraries: Any = None
    library_source: Any = None
    # what finds an import the own resolver cannot (libraries/jedi_resolver.py, set by the Analyzer
    # with library_source): None, no fallback
    import_finder: Any = None

    @property
    def libraries(self):
        if self._libraries is None and self.library_source is not None:
            self._libraries = self.library_source()
        return self._libraries

    @libraries.setter
    def libraries(self, value):
        self._libraries = value

    def add(self, sf: SourceFile):
        self._files[sf.abspath] = sf

    def qualified_import(self, sf: SourceFile, module: str, level: int, name: str) -> str | None:
        """A name to keep as a dotted name rather than follow to a file (LibraryProgram)."""
        return None

    def absolute_module(self, sf: SourceFile, module: str, level: int) -> str:
        return "." * level + module

    def resolve_fallback(self, sf: SourceFile, module: str, level: int, stmt) -> str | None:
        """What the own resolver could not find, asked of jedi: only for a name that may be the
        project's (not installed, not the standard library) and where the project gives a reason
        to look further (the file edits sys.path, a folder of that name without __init__.py): other
        unresolved imports (an uninstalled library) cost nothing."""
        import sys

        top = module.split(".")[0] if module else ""
        if level or not top or top in getattr(sys, "stdlib_module_names", ()):
            return None
        key = ("jedi", sf.abspath, module)
        if key in self._resolved:
            return self._resolved[key]
        self._resolved[key] = None
        roots = self.roots_for(sf)
        hint = "sys.path" in sf.source or any(holds_python(os.path.join(r, top)) for r in roots)
        if not hint:
            return None
        if roots and not self._may_hold(roots[-1], top):
            # jedi finds files, and a path a file adds to sys.path points into its project: a name no
            # file or folder of the project (nor the folder around it) carries is an uninstalled
            # library (`import comet_ml`), and jedi's answer would be None after a costly start
            return None
        finder = self.import_finder
        if finder is None:
            return None
        libs = self.libraries
        if libs is not None and libs.index.has_package(top):
            return None
        line = sf.line_text(stmt.lineno)
        col = line.find(module, stmt.col_offset)
        if col < 0:
            return None
        # jedi's first answer in a process costs seconds (its own start): answers are kept on disk,
        # per importing file's text, until the file found changes
        cache = libs.cache if libs is not None else None
        import hashlib

        digest = hashlib.sha256(sf.source.encode("utf-8", "replace")).hexdigest()[:24]
        ckey = f"jedi-import|{sf.abspath}|{module}|{digest}|{'|'.join(self.extra_roots)}"
        hit = cache.get(ckey) if cache is not None else None
        if hit is not None:
            target = hit.get("path")
        else:
            target = finder.import_target(
                sf.abspath,
                sf.source,
                stmt.lineno,
                col + len(module) - 1,
                roots[-1] if roots else os.path.dirname(sf.abspath),
                libs.env if libs is not None else None,
                tuple(self.extra_roots),
                timeout=finder.IMPORT_TIMEOUT,
            )
            if cache is not None and finder.stats.get("last_timed_out") is False:
                cache.put(ckey, {"path": target}, [target] if target else [])
        target = os.path.normpath(target) if target else target
        if (
            target
            and target.endswith(".py")
            and not any(p in target for p in _SKIP_PARTS)
            and os.path.isfile(target)
            and target != sf.abspath
        ):
            self._resolved[key] = target
            return target
        return None

    def _may_hold(self, root: str, top: str) -> bool:
        """Whether a module or package named `top` may be found from `root`: a `top.py`, `top.pyi`
        or a folder `top` anywhere under it, or beside it; True when the tree is too large to list."""
        names = self._names.get(root)
        if names is None:
            names = self._names[root] = _names_under(root)
        return names is None or top in names

    def may_define(self, abspath: str, name: str) -> bool:
        """Cheap text test before running a module for a name: it must mention the name, or
        re-export another module's names with `import *`."""
        text = self._texts.get(abspath)
        if text is None:
            sf = self._files.get(abspath)
            if sf is not None:
                text = sf.source
            else:
                try:
                    text = self.overlays.get(abspath) or read_text(abspath)
                except (OSError, ParseError):
                    text = ""
            self._texts[abspath] = text
        return name in text or "import *" in text

    def load(self, abspath: str) -> SourceFile | None:
        if abspath in self._files:
            return self._files[abspath]
        sf = None
        try:
            source = self.overlays.get(abspath)
            if source is None:
                source = read_text(abspath)
            kept = self.parsed.get(abspath) if self.parsed is not None else None
            if kept is not None and kept.source == source:
                self._files[abspath] = kept
                return kept
            sf = self.parse(abspath, source, abspath)
            if self.parsed is not None:
                self.parsed[abspath] = sf
            sf.path = os.path.relpath(abspath) if not os.path.isabs(abspath) else _display(abspath)
        except (OSError, ParseError, UnicodeDecodeError):
            sf = None
        self._files[abspath] = sf
        return sf

    def parse(self, path: str, source: str, abspath: str | None = None) -> SourceFile:
        if not self.freeze_trees:
            return parse_source(path, source, abspath)
        gc.collect(0)  # the garbage made since the last freeze: small, and it must not be frozen
        sf = parse_source(path, source, abspath)
        gc.freeze()
        return sf

    def cached(self, abspath: str, source: str) -> SourceFile | None:
        sf = self._files.get(abspath)
        return sf if sf is not None and sf.source == source else None

    def roots_for(self, sf: SourceFile) -> list[str]:
        here = os.path.dirname(sf.abspath)
        roots = self._roots.get(here)
        if roots is None:
            roots = self._roots[here] = self._compute_roots(here)
        return roots

    def edited_roots(self, sf: SourceFile) -> tuple[str, ...]:
        """The folders the files of `sf`'s folder add to sys.path (path_edits), once per Program."""
        here = os.path.dirname(sf.abspath)
        found = self._edited.get(here)
        if found is None:
            root = next((r for r in reversed(self.roots_for(sf)) if _marked(r)), None)
            found = self._edited[here] = folder_edits(here, root)
        return found

    def _compute_roots(self, here: str) -> list[str]:
        # the file's folder (a script run from it imports its siblings) and the folder holding its
        # top package; never a package folder between them: in a module of `rlkit/torch/`, `import
        # torch` is the library, not that folder
        roots = [here]
        d = here
        while os.path.isfile(os.path.join(d, "__init__.py")):
            d = os.path.dirname(d)
        roots.append(d)
        top = d
        namespace = d == here and os.path.dirname(here) != here
        d = here
        for _ in range(8):
            if _marked(d):
                roots.append(d)
                if os.path.isdir(os.path.join(d, "src")):
                    roots.append(os.path.join(d, "src"))  # src layout: src/<package>
                break
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        roots.extend(self.extra_roots)
        if top != here and not _marked(top) and os.path.dirname(top) != top:
            # a package inside a folder without `__init__.py` (`lib/models/` in `lib/`), imported as
            # `lib.models` by the scripts of the folder above: that folder is on sys.path. Last, so
            # that nothing the file's own roots find is shadowed
            roots.append(os.path.dirname(top))
        if namespace and not _marked(here):
            # a folder without __init__.py is imported as a namespace package by a script of the
            # folder above (`trainer.py` runs `from utils.train import train`, and `utils/train.py`
            # imports `from model.net import Net`): that script's folder is on sys.path. Last, so
            # that nothing the file's own roots find is shadowed
            roots.append(os.path.dirname(here))
        out, seen = [], set()
        for r in roots:
            if r not in seen:
                seen.add(r)
                out.append(r)
        return out

    def resolve(self, sf: SourceFile, module: str, level: int = 0) -> str | None:
        """The file a `from module import ...` in `sf` refers to, if it is part of the project."""
        key = (sf.abspath, module, level)
        if key in self._resolved:
            return self._resolved[key]
        result = None
        parts = module.split(".") if module else []
        if level:
            base = os.path.dirname(sf.abspath)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            result = _find(base, parts)
        else:
            for root in self.roots_for(sf):
                result = _find(root, parts)
                if result:
                    break
            else:
                # last, the folders the scripts of this folder put on sys.path (`import _init_paths`)
                for root in self.edited_roots(sf):
                    result = _find(root, parts)
                    if result:
                        break
        if result and any(p in result for p in _SKIP_PARTS):
            result = None
        if result == sf.abspath:
            result = None
        self._resolved[key] = result
        self._importers.setdefault(key[0], []).append(key)
        return result

    def namespace_package(self, sf: SourceFile, module: str, level: int = 0) -> bool:
        """`module` (as `sf` imports it) is a folder of the project without `__init__.py`, which
        Python imports as a namespace package: its modules are imported from it by name. Asked per
        imported name of an import the project does not hold (`from numpy import a, b`): once."""
        key = (sf.abspath, module, level)
        known = self._namespaces.get(key)
        if known is None:
            known = self._namespaces[key] = self._namespace_package(sf, module, level)
        return known

    def _namespace_package(self, sf: SourceFile, module: str, level: int) -> bool:
        parts = module.split(".") if module else []
        if level:
            base = os.path.dirname(sf.abspath)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            bases = [*self.roots_for(sf), *self.edited_roots(sf)]
        for b in bases:
            path = os.path.join(b, *parts)
            if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "__init__.py")):
                return not any(p in path for p in _SKIP_PARTS)
        return False

    def submodule(self, package_file: str, name: str) -> str | None:
        """`from pkg import mod` where mod is a module of the package."""
        if not package_file.endswith("__init__.py"):
            return None
        key = ("sub", package_file, name)
        if key not in self._resolved:  # kept, like imports, for the result cache to check again
            self._resolved[key] = _find(os.path.dirname(package_file), [name])
            self._importers.setdefault(package_file, []).append(key)
        return self._resolved[key]

    def resolutions(self, importers) -> list:
        """The imports resolved for files of `importers` (absolute paths), as (key, result): what an
        analysis of them found, or did not find, among the project's files."""
        return [(k, self._resolved[k]) for a in sorted(importers) for k in self._importers.get(a, ())]

    def resolve_again(self, key) -> str | None:
        """The answer `resolutions` recorded for `key`, looked up again now (nothing cached)."""
        if key[0] == "sub":
            return _find(os.path.dirname(key[1]), [key[2]])
        abspath, module, level = key
        self._resolved.pop(key, None)
        # an importer stand-in: `resolve` reads only its path
        return self.resolve(_Importer(abspath), module, level)  # type: ignore[arg-type]


class _Importer:
    """What `Program.resolve` reads of an importing file: its path."""

    __slots__ = ("abspath",)

    def __init__(self, abspath: str):
        self.abspath = abspath


def _marked(folder: str) -> bool:
    return any(os.path.exists(os.path.join(folder, m)) for m in PROJECT_MARKERS)


def _find(base: str, parts: list[str]) -> str | None:
    if not parts:
        init = os.path.join(base, "__init__.py")
        return init if os.path.isfile(init) else None
    path = os.path.join(base, *parts)
    if os.path.isfile(path + ".py"):
        return path + ".py"
    init = os.path.join(path, "__init__.py")
    if os.path.isfile(init):
        return init
    return None


_MAX_LISTED = 50_000
# root -> (each folder listed with its mtime, the names found): kept across Programs (the language
# server makes one per edit) and listed again when a folder changed (a file added or removed)
_LISTINGS: dict[str, tuple[tuple[tuple[str, int], ...], frozenset | None]] = {}


def _names_under(root: str) -> frozenset | None:
    """The module names (file stems, folders) under `root` and beside it; None past _MAX_LISTED.
    A root that is no project (no marker: a folder of scripts) may reach a sibling folder
    (`sys.path.insert(0, "../lib")`): the folder around it is listed whole."""
    held = _LISTINGS.get(root)
    if held is not None and all(_mtime(d) == m for d, m in held[0]):
        return held[1]
    folders, names = _list_names(root)
    _LISTINGS[root] = (folders, names)
    return names


def _mtime(folder: str) -> int:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return -1


def _list_names(root: str) -> tuple[tuple[tuple[str, int], ...], frozenset | None]:
    names: set = set()
    seen = 0
    parent = os.path.dirname(root) or root
    folders = [(parent, _mtime(parent))]
    try:
        beside = os.listdir(parent)
    except OSError:
        beside = []
    for n in beside:
        names.add(n.split(".", 1)[0])
    if not _marked(root):
        root = parent
    for here, dirs, files in os.walk(root):
        folders.append((here, _mtime(here)))
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
        seen += len(dirs) + len(files)
        if seen > _MAX_LISTED:
            return tuple(folders), None
        names.update(dirs)
        names.update(f.split(".", 1)[0] for f in files if f.endswith((".py", ".pyi")))
    return tuple(folders), frozenset(names)


def holds_python(folder: str) -> bool:
    """A folder holding Python files or packages (a namespace package: `lib/` holding only
    `lib/models/__init__.py` is one too), not a run-log folder of the same name."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(n.endswith(".py") for n in names) or any(
        os.path.isfile(os.path.join(folder, n, "__init__.py")) for n in names if not n.startswith(".")
    )


def _display(abspath: str) -> str:
    rel = os.path.relpath(abspath)
    return abspath if rel.startswith("..") else rel
