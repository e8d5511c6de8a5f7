"""The engine's entry points: source -> training-step model -> findings.

    from gradaudit.analysis.check.engine import analyze_source
    result = analyze_source("train.py", text)
    result.findings, result.model

The language server, the CLI and the audit report all go through `Analyzer`.
"""

from __future__ import annotations

import ast
import gc
import os
import sys
import time

from ..interp.budget import Gap, Gaps
from ..interp.interpreter import Interpreter
from ..interp.objects import new_analysis_ids
from ..libraries.environment import PythonEnv, find_env
from ..libraries.imported import LibraryUse, library_use
from ..libraries.register import semantics
from ..model import coverage
from ..model.build import Builder
from ..model.findings import Finding, Related
from ..model.model import ProgramModel, Span
from ..rules import RULES
from ..rules.base import RuleContext
from ..rules.premises import establish
from ..source.depth import MAX_EXPR_DEPTH, limit_depth
from ..source.incremental import reparse
from ..source.notebook import Notebook, is_notebook, read_notebook
from ..source.prebuilt import dataclass, field, replace
from ..source.program import ParseError, Program, SourceFile, read_text
from .config import Config
from .overlaps import resolve_overlaps, rule_supersedes
from .suppression import suppressed

RECURSION_LIMIT = 4000
BATCH_COLLECT = 64

# When two rules report one defect, the more specific one stays (each rule's `supersedes`).
_SUPERSEDES = rule_supersedes()


class _JediImports:
    """libraries/jedi_resolver.py for Program.import_finder, imported when an import first needs it:
    a script whose imports all resolve never loads it (nor jedi)."""

    def __getattr__(self, name):
        from ..libraries import jedi_resolver

        return getattr(jedi_resolver, name)


_JEDI = _JediImports()


@dataclass
class Result:
    path: str
    findings: list = field(default_factory=list)
    model: ProgramModel | None = None
    error: ParseError | None = None  # nothing could be analysed (no parse, no read)
    files: dict = field(default_factory=dict)  # display path -> SourceFile, for fixes and reports
    broken: tuple = ()  # ParseErrors of statements left out; the rest was analysed
    gap: Gap | None = None  # the analysis was cut short (budget.py)
    # a Jupyter notebook: the findings' lines are lines of its virtual source (notebook.py), which
    # maps them back to cells
    notebook: Notebook | None = None
    libraries: LibraryUse | None = None  # the environment read, the imported libraries found there or not
    timed_out: bool = False  # the time budget stopped it (what was reached depends on the machine's speed)

    @property
    def coverage(self) -> list:
        """coverage.StepCoverage of each training step found, understood or not (and why)."""
        return coverage.records(self.model)

    @property
    def problems(self) -> list:
        """Everything the user must hear about besides findings: parse errors, a cut-short analysis."""
        out = [self.error] if self.error is not None else []
        return out + list(self.broken)


class Analyzer:
    def __init__(
        self,
        config: Config | None = None,
        extra_roots=(),
        overlays=None,
        batch=False,
        time_budget: float | None = None,
        python: str | None = None,
        cache: bool = True,
        libraries=None,
        root: str | None = None,
    ):
        self.config = config or Config()
        self.time_budget = time_budget  # seconds per file for the interpretation (None: no limit)
        # the environment whose installed libraries are read: --python, [tool.gradaudit] python,
        # else the one discovered for each file (environment.py): the active virtualenv, the
        # project's .venv, the active conda env, the running interpreter
        self.python = python or self.config.python or None
        self.python_origin = "--python" if python else self.config.python_origin
        self.root = root  # the project's root (the workspace folder), bounding the search for a .venv
        self.cache = cache
        self._given = libraries  # the caller's LibraryModels (the language server's worker keeps them)
        self._models: dict = {}  # PythonEnv.key -> LibraryModels
        self._last_env: PythonEnv | None = None
        self.extra_roots = tuple(extra_roots)
        self.overlays = dict(overlays or {})
        # batch: many files through one shared Program (the CLI), which freezes its parsed trees
        # out of the collector's reach; the collector stays off between files and runs every
        # BATCH_COLLECT files over what the analyses left.
        self.batch = batch
        self._since_collect = 0

    def analyze_file(self, path: str, program: Program | None = None) -> Result:
        if is_notebook(path):
            try:
                nb, _ = read_notebook(path)
            except OSError as exc:
                return Result(path, error=ParseError(path, 1, 1, f"could not read: {exc.strerror or exc}", kind="read"))
            except ParseError as exc:  # not JSON, not nbformat 4
                return Result(path, error=exc)
            return self.analyze_notebook(path, nb, program)
        try:
            source = self.overlays.get(os.path.abspath(path))
            if source is None:
                source = read_text(path)
        except OSError as exc:
            return Result(path, error=ParseError(path, 1, 1, f"could not read: {exc.strerror or exc}", kind="read"))
        except ParseError as exc:  # bytes Python would refuse (no coding cookie, unknown encoding)
            return Result(path, error=exc)
        return self.analyze_source(path, source, program)

    def analyze_notebook(self, path: str, nb: Notebook, program: Program | None = None) -> Result:
        """A notebook's code cells, in document order, as one program (notebook.py): the cells
        that do not parse are left out and reported, the rest analysed."""
        result = self.analyze_source(path, nb.source, program)
        result.notebook = nb
        if result.error is not None:
            return result
        result.broken = tuple(sorted(nb.problems + tuple(result.broken), key=lambda e: (e.line, e.col)))
        return result

    def analyze_source(self, path: str, source: str, program: Program | None = None) -> Result:
        # Parsing and interpreting allocate many small objects and create no cycles worth
        # collecting mid-run: the cyclic collector stays off meanwhile (it costs ast.parse
        # alone a third of its time), and runs as usual afterwards.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT))  # long `a + b + ...` chains nest deeply
        try:
            return self._analyze(path, source, program)
        finally:
            sys.setrecursionlimit(limit)
            if self.batch:
                self._since_collect += 1
                if self._since_collect >= BATCH_COLLECT:
                    self.collect()
            elif gc_was_enabled:
                gc.enable()

    def environment(self, path: str) -> PythonEnv:
        """The environment whose libraries are read for the file at `path` (EnvError when the one
        named explicitly cannot be read)."""
        if self._given is not None:
            return self._given.env
        start = os.path.dirname(os.path.abspath(path))
        return find_env(self.python, start=start, root=self.root, origin=self.python_origin)

    def models(self, env: PythonEnv):
        """The library models of an environment (nothing is read until a library name is met)."""
        if self._given is not None:
            return self._given
        libs = self._models.get(env.key)
        if libs is None:
            from ..libraries.models import LibraryModels
            from ..libraries.summary_cache import SummaryCache

            libs = self._models[env.key] = LibraryModels(env, SummaryCache(enabled=self.cache))
        return libs

    @property
    def libraries(self):
        """The library models of the last file's environment (of the working folder's before any)."""
        return self.models(self._last_env or self.environment(os.path.join(os.getcwd(), "-")))

    def attach(self, program: Program) -> Program:
        if program._libraries is None and program.library_source is None:
            program.library_source = lambda: self.libraries
        if program.import_finder is None:
            program.import_finder = _JEDI
        return program

    def _use_environment(self, program: Program, env: PythonEnv):
        """The program reads this file's environment: another file of the batch may have had another."""
        self._last_env = env
        if self._given is not None:
            return
        if program._libraries is not None and program._libraries.env.key != env.key:
            program._libraries = None
        program.library_source = lambda: self.models(env)

    def collect(self):
        """Batch mode: collect what the last files left, freeze what survives, turn gc back on."""
        self._since_collect = 0
        gc.collect()
        gc.freeze()
        gc.enable()

    def _analyze(self, path: str, source: str, program: Program | None) -> Result:
        if program is None:
            program = Program(self.extra_roots, self.overlays)
        env = self.environment(path)
        self.attach(program)
        self._use_environment(program, env)
        sf = program.cached(os.path.abspath(path), source)
        if sf is not None and sf.path != path:
            sf = None
        if sf is None:
            try:
                sf = _parse_entry(program, path, source)
            except ParseError as exc:
                return Result(path, error=exc)
            program.add(sf)
        deadline = time.monotonic() + self.time_budget if self.time_budget is not None else None
        try:
            return self._run(path, program, sf, deadline, env)
        except RecursionError:
            pass
        # Valid Python can nest expressions thousands deep. Rather than walk every tree for it
        # (a third of a parse), the trees are cut to a depth the engine follows only when the
        # recursion limit was hit, and the file analysed again.
        for other in list(program._files.values()) + [sf]:
            if other is not None and not other.depth_limited:
                other.deep = tuple(limit_depth(other.tree))
                other.depth_limited = True
        try:
            return self._run(path, program, sf, deadline, env)
        except RecursionError as exc:
            # a backstop: what ran is not a program state worth judging; say where it stopped
            interp = getattr(exc, "interp", None)
            return Result(path, [], None, None, {sf.path: sf}, sf.broken, _too_deep(sf, interp))

    def _run(self, path: str, program: Program, sf: SourceFile, deadline, env: PythonEnv) -> Result:
        budgets = self.config.budgets
        gaps = Gaps(deadline, self.time_budget, budgets)
        new_analysis_ids()
        interp = Interpreter(program, sf, semantics(), budgets=budgets, gaps=gaps)
        try:
            trace = interp.run()
        except RecursionError as exc:
            exc.interp = interp  # type: ignore[attr-defined]  # where it stopped, for the report (_too_deep)
            raise
        gap = gaps.summary(sf) or _deep_gap(sf)
        model = Builder(path).build(trace)
        if gap is not None:
            model = replace(
                model, incomplete=True, incomplete_reason=gap.reason, not_reached=gap.first, not_reached_count=gap.count
            )
        files = {s.sf.path: s.sf for s in interp.st.scopes.values()}
        files[sf.path] = sf
        libraries = library_use(env, files.values(), program)
        # what of each training step was understood, and why not (for every output; the rules do not read it)
        model = coverage.judge(model, files, gaps, libraries)
        findings = run_rules(model, files, self.config)
        return Result(
            path, findings, model, None, files, sf.broken, gap, libraries=libraries, timed_out=interp.st.gaps.stopped
        )


EDITED_KEPT = 8  # documents whose last version is kept for the next one's parse
# a document's tree is kept between versions where a whole parse costs more than the memory: from
# about 60 lines (a 300-line document's parse, and what the interpreter caches on its nodes, were a
# third of its analysis at each keystroke); above 2 MB the tree is hundreds of MB
EDITED_MIN_CHARS = 2_000
EDITED_MAX_CHARS = 2_000_000
EDITED_SMALL_CHARS = 30_000  # below it, only the last document's tree is kept


def _parse_entry(program: Program, path: str, source: str) -> SourceFile:
    """The analysed file's tree. In the editor (`program.edited` holds the last version of each
    document) only the statements an edit touched are parsed again."""
    edited = program.edited
    if edited is None:
        return program.parse(path, source)
    abspath = os.path.abspath(path)
    prev = edited.pop(abspath, None)
    if prev is not None and prev.source == source and prev.path == path:
        sf: SourceFile | None = prev  # the same text again (a save, a setting changed): the same tree
    else:
        sf = reparse(prev, path, source, abspath) if prev is not None else None
    if sf is None:
        sf = program.parse(path, source)
    if EDITED_MIN_CHARS <= len(source) <= EDITED_MAX_CHARS:
        if len(source) < EDITED_SMALL_CHARS:
            # a small tree is worth keeping for the document being typed in only: kept for several,
            # their churn fragments the heap (a worker stayed 5 MB larger after 50 were edited)
            for other in [p for p, kept in edited.items() if len(kept.source) < EDITED_SMALL_CHARS]:
                del edited[other]
        edited[abspath] = sf
    while len(edited) > EDITED_KEPT:
        del edited[next(iter(edited))]
    return sf


def _too_deep(sf: SourceFile, interp) -> Gap:
    node = interp.st.cur_stmt if interp is not None and interp.st.sf is sf else None
    line = getattr(node, "lineno", 1) if node is not None else 1
    col = sf.char_col(line, getattr(node, "col_offset", 0)) if node is not None else 0
    total = sum(1 for n in ast.walk(sf.tree) if isinstance(n, ast.stmt))
    return Gap("the code nests too deeply to follow", Span(sf.path, line, col, line, col), total)


def _deep_gap(sf: SourceFile) -> Gap | None:
    """Expressions cut out for their depth (depth.py): the statements holding them were followed
    without them."""
    if not sf.deep:
        return None
    d = min(sf.deep, key=lambda d: (d.line, d.col))
    col = sf.char_col(d.line, d.col)
    n = len({c.line for c in sf.deep})
    what = "an expression nested" if len(sf.deep) == 1 else f"{len(sf.deep)} expressions nested"
    return Gap(
        f"{what} more than {MAX_EXPR_DEPTH} levels deep {'was' if len(sf.deep) == 1 else 'were'} skipped",
        Span(sf.path, d.line, col, d.line, col),
        n,
        "analysed without it",
    )


def run_rules(model: ProgramModel, files: dict, config: Config) -> list[Finding]:
    ctx = RuleContext(model, files)
    found: list[Finding] = []
    for rule in RULES:
        if not config.enabled(rule.code, rule.name):
            continue
        # each finding with the premises it rests on (confirmed only when no unseen code undermines them)
        found.extend(e for f in rule.check(ctx) if (e := establish(ctx, rule, f)) is not None)
    found = _resolve_overlaps(found)
    if model.libraries:
        found = [_library_related(f, model.libraries) for f in found]
    out = []
    for f in found:
        if config.ignored_for_path(f.span.path, f.code, _rule_name(f.code)):
            continue
        sf = files.get(f.span.path)
        if sf is not None and suppressed(sf.line_text(f.span.line), f.code, f.name):
            continue
        out.append(f)
    out.sort(key=Finding.sort_key)
    return out


def _library_related(f: Finding, libraries) -> Finding:
    """A finding about parameters of a library model points to where the library defines it."""
    extra = []
    for lib in libraries:
        if lib.source is None or any(r.span.path == lib.source.path for r in f.related):
            continue
        if any(p == lib.path or p.startswith(lib.path + ".") for p in f.params):
            extra.append(
                Related(
                    lib.source,
                    f"`{lib.path}` is a `{lib.type}`, defined here ({lib.how}: its structure is read from this source)"
                    if lib.how == "source"
                    else f"`{lib.path}` is a `{lib.type}`, defined here",
                )
            )
    return replace(f, related=f.related + tuple(extra)) if extra else f


def _rule_name(code):
    for r in RULES:
        if r.code == code:
            return r.name
    return ""


def _resolve_overlaps(found: list[Finding]) -> list[Finding]:
    return resolve_overlaps(found, _SUPERSEDES)


def merge_findings(found: list[Finding]) -> list[Finding]:
    """Findings of several analyses of one file (its own, its drivers': drivers.py) as one list:
    one finding per defect, in order."""
    return sorted(_resolve_overlaps(found), key=Finding.sort_key)
