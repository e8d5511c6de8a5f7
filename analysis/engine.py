"""The engine's entry points: source -> training-step model -> findings.

    from gradaudit.analysis.engine import analyze_source
    result = analyze_source("train.py", text)
    result.findings, result.model

The language server, the CLI and the audit report all go through `Analyzer`.
"""
from __future__ import annotations

import gc
import os
import sys
from dataclasses import dataclass, field, replace

from .build import Builder
from .config import Config
from .findings import CONFIRMED, Finding
from .interpreter import Interpreter
from .model import ProgramModel
from .program import ParseError, Program, read_text
from .rules import RULES
from .rules.base import RuleContext
from .suppression import suppressed

RECURSION_LIMIT = 4000
BATCH_COLLECT = 64

# When two rules report one defect, the more specific one stays (rules.md, "Overlaps").
_SUPERSEDES = {"GA104": ("GA106",), "GA109": ("GA108",), "GA105": ("GA101",), "GA405": ("GA402", "GA403", "GA401"),
               "GA404": ("GA402",), "GA113": ("GA108",), "GA112": ("GA101",)}


@dataclass
class Result:
    path: str
    findings: list = field(default_factory=list)
    model: ProgramModel | None = None
    error: ParseError | None = None
    files: dict = field(default_factory=dict)   # display path -> SourceFile, for fixes and reports


class Analyzer:
    def __init__(self, config: Config | None = None, extra_roots=(), overlays=None, batch=False):
        self.config = config or Config()
        self.extra_roots = tuple(extra_roots)
        self.overlays = dict(overlays or {})
        # batch: many files through one shared Program (the CLI), which freezes its parsed trees
        # out of the collector's reach; the collector stays off between files and runs every
        # BATCH_COLLECT files over what the analyses left.
        self.batch = batch
        self._since_collect = 0

    def analyze_file(self, path: str, program: Program | None = None) -> Result:
        try:
            source = self.overlays.get(os.path.abspath(path))
            if source is None:
                source = read_text(path)
        except OSError as exc:
            return Result(path, error=ParseError(path, 1, 1, f"cannot read: {exc.strerror or exc}"))
        return self.analyze_source(path, source, program)

    def analyze_source(self, path: str, source: str, program: Program | None = None) -> Result:
        # Parsing and interpreting allocate many small objects and create no cycles worth
        # collecting mid-run: the cyclic collector stays off meanwhile (it costs ast.parse
        # alone a third of its time), and runs as usual afterwards.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT))   # long `a + b + ...` chains nest deeply
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

    def collect(self):
        """Batch mode: collect what the last files left, freeze what survives, turn gc back on."""
        self._since_collect = 0
        gc.collect()
        gc.freeze()
        gc.enable()

    def _analyze(self, path: str, source: str, program: Program | None) -> Result:
        if program is None:
            program = Program(self.extra_roots, self.overlays)
        sf = program.cached(os.path.abspath(path), source)
        if sf is not None and sf.path != path:
            sf = None
        if sf is None:
            try:
                sf = program.parse(path, source)
            except ParseError as exc:
                return Result(path, error=exc)
            program.add(sf)
        interp = Interpreter(program, sf)
        trace = interp.run()
        model = Builder(path).build(trace)
        files = {s.sf.path: s.sf for s in interp.scopes.values()}
        files[sf.path] = sf
        findings = run_rules(model, files, self.config)
        return Result(path, findings, model, None, files)


def run_rules(model: ProgramModel, files: dict, config: Config) -> list[Finding]:
    ctx = RuleContext(model, files)
    found: list[Finding] = []
    for rule in RULES:
        if not config.enabled(rule.code, rule.name):
            continue
        found.extend(rule.check(ctx))
    found = _resolve_overlaps(found)
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


def _rule_name(code):
    for r in RULES:
        if r.code == code:
            return r.name
    return ""


def _resolve_overlaps(found: list[Finding]) -> list[Finding]:
    # one finding per (code, anchor): keep confirmed over suspicious, merge parameters
    by_key: dict = {}
    for f in found:
        key = (f.code, f.span.path, f.span.line, f.span.col)
        prev = by_key.get(key)
        if prev is None:
            by_key[key] = f
        else:
            best = prev if (prev.confidence == CONFIRMED or f.confidence != CONFIRMED) else f
            params = tuple(sorted(set(prev.params) | set(f.params)))
            by_key[key] = replace(best, params=params)
    found = list(by_key.values())
    lines = {}
    for f in found:
        lines.setdefault((f.span.path, f.span.line), set()).add(f.code)
    out = []
    for f in found:
        codes = lines[(f.span.path, f.span.line)]
        if any(f.code in _SUPERSEDES.get(c, ()) for c in codes if c != f.code):
            continue
        out.append(f)
    return out


def merge_results(results) -> list[Finding]:
    """Findings of several entry files, one per (code, place): a defect seen from two files once."""
    allf = [f for r in results for f in r.findings]
    return sorted(_resolve_overlaps(allf), key=Finding.sort_key)
