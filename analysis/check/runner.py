"""Analysing the files under some paths: discovery, worker processes, what could not be done.

One loop for `gradaudit check` and `gradaudit audit`: the same files, the same time budget and
library environment, the same problems (problems.py), the same coverage of the training steps
(model/coverage.py). What each keeps of an analysis differs (the
check keeps findings, the audit the training-step model and the texts too), so the caller passes
`keep`, a module-level function (it crosses into worker processes).
"""

from __future__ import annotations

import os
import sys

from ..source.notebook import Locator
from ..source.prebuilt import dataclass, field


def keep_findings(path: str, result):
    return result.findings


@dataclass
class Analysed:
    files: list  # every file discovered, in order
    kept: list  # keep(path, result) of each file analysed, in the order of `files`
    problems: list  # problems.Problem: discovery, parse, read, internal, incomplete
    analysed: int  # files whose analysis ran (parse errors of single statements included)
    notebooks: dict = field(default_factory=dict)  # path -> notebook.Notebook: the way back to cells
    libraries: list = field(default_factory=list)  # imported.LibraryUse, one per environment read
    coverage: list = field(default_factory=list)  # coverage.StepCoverage, one per training step found
    supersedes: dict = field(default_factory=dict)  # the rules' `supersedes` (overlaps.py)

    @property
    def locator(self) -> Locator:
        return Locator(self.notebooks)


class Progress:
    def __init__(self, total, enabled):
        self.total, self.done = total, 0
        self.enabled = enabled and total > 1

    def step(self, n=1):
        if not self.enabled:
            return
        self.done += n
        width = 30
        filled = int(width * self.done / max(1, self.total))
        sys.stderr.write(f"\r[{'#' * filled}{' ' * (width - filled)}] {self.done}/{self.total} files")
        sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()


def analyze_chunk(
    paths,
    config,
    roots,
    bar=None,
    time_budget=None,
    python=None,
    cache=True,
    keep=keep_findings,
    results=False,
    driven=None,
):
    """Analyze files (in a worker or in-process): per file, in order, (path, kept or None, problems,
    analysed, notebook, imported.LibraryUse, coverage.StepCoverage records, the functions the analysis
    ran, result-cache entry), picklable. `results`: make the
    result cache's entries (result_cache.py), for `keep_findings` only. `driven`: path -> the
    project files whose training steps run it (drivers.py), analysed after it; what they find in
    it is added to its result (and the result is not cached: it depends on files it does not import)."""
    from ..source.program import Program
    from .drivers import driven_findings, needs_drivers, with_drivers
    from .engine import Analyzer
    from .problems import Problem, problems_of

    if results:
        from . import result_cache

    analyzer = Analyzer(config, extra_roots=roots, batch=True, time_budget=time_budget, python=python, cache=cache)
    program = analyzer.attach(Program(roots, freeze_trees=True))
    out = []
    for path in paths:
        stamp = result_cache.file_stamp(path) if results else None
        try:
            r = analyzer.analyze_file(path, program)
            failed: list = []
            if driven and path in driven:
                stamp = None  # not kept: what the drivers find depends on their text too
                if needs_drivers(r):
                    found_there, _, driven_ran, failed = driven_findings(analyzer, program, path, driven[path])
                    r.findings = with_drivers(r.findings, found_there, driven_ran)
            probs = problems_of(r) + failed
            item = keep(path, r) if r.error is None else None
            fresh = None
            if results:
                env = result_cache.env_text(analyzer.environment(path))
                fresh = result_cache.entry(path, r, item, probs, program, env, stamp)
            ran = r.model.ran if r.model is not None else frozenset()
            out.append((path, item, probs, r.error is None, r.notebook, r.libraries, r.coverage, ran, fresh))
        except Exception as exc:  # an engine bug must not hide the other files' results
            import traceback

            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            crash = Problem.internal(path, last, traceback.format_exc(limit=6))
            out.append((path, None, [crash], False, None, None, [], frozenset(), None))
        if bar is not None:
            bar.step()
    analyzer.collect()
    return out


def _drivers(paths, files, config) -> tuple[dict, set]:
    """For each file given by name (a few of them), the project files whose training steps may run
    it (drivers.py), those not checked anyway; whether they are analysed is decided by the file's
    own analysis (drivers.needs_drivers). And the projects' roots, where the drivers' imports are found
    (`from kws.utils.executor import Executor` in kws/bin/train.py)."""
    from .drivers import MAX_ALONE, find_drivers, project_files, project_root

    named = [p for p in paths if os.path.isfile(p) and p.endswith(".py")]
    roots: set[str] = set()
    if not named or len(named) > MAX_ALONE or any(os.path.isdir(p) for p in paths):
        return {}, roots
    checked = {os.path.abspath(f) for f in files}
    out: dict = {}
    listed: dict = {}  # project root -> its files
    texts: dict = {}
    for p in named:
        root = project_root(p)
        if root is None:
            continue
        if root not in listed:
            listed[root] = project_files(root, config)
        drivers = [d for d in find_drivers(p, listed[root], texts, root) if os.path.abspath(d) not in checked]
        if drivers:
            match = [f for f in files if os.path.abspath(f) == os.path.abspath(p)]
            if match:
                out[match[0]] = drivers
                roots.add(root)
    return out, roots


def analyze_paths(
    paths, config, jobs=0, progress=False, time_budget=None, python=None, cache=True, keep=keep_findings
) -> Analysed:
    from ..libraries.imported import merge
    from ..model import coverage
    from .discovery import discover
    from .drivers import with_drivers

    files, problems = discover(paths, config)
    roots = sorted({os.path.abspath(p) for p in paths if os.path.isdir(p)})
    driven, projects = _drivers(paths, files, config) if keep is keep_findings else ({}, set())
    roots = sorted(set(roots) | projects)
    bar = Progress(len(files), progress)
    workers = jobs or min(os.cpu_count() or 1, 8)
    # a check's findings are kept between runs (result_cache.py); the audit keeps more than findings
    kept_cache = None
    done: dict = {}  # path -> (path, kept, problems, analysed, notebook, LibraryUse, entry)
    if cache and keep is keep_findings and files:
        from .result_cache import ResultCache

        kept_cache = ResultCache(config, roots, python)
        for f in files:
            if f in driven:
                continue  # analysed again with its drivers, whose text the cache does not follow
            hit = kept_cache.lookup(f, config)
            if hit is not None:
                done[f] = (f, *hit, None)
                bar.step()
    todo = [f for f in files if f not in done]
    results = kept_cache is not None
    if workers > 1 and len(todo) >= 16:
        import concurrent.futures  # worker processes: not loaded by a check of a few files

        chunks = [c for c in (todo[i :: workers * 4] for i in range(workers * 4)) if c]
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {
                pool.submit(
                    analyze_chunk, c, config, roots, None, time_budget, python, cache, keep, results, driven
                ): len(c)
                for c in chunks
            }
            for fut in concurrent.futures.as_completed(futures):
                for row in fut.result():
                    done[row[0]] = row
                bar.step(futures[fut])
    elif todo:
        for row in analyze_chunk(todo, config, roots, bar, time_budget, python, cache, keep, results, driven):
            done[row[0]] = row
    bar.close()
    kept, analysed, notebooks, uses, steps = [], 0, {}, [], []
    ran: set = set()
    for f in files:
        path, item, probs, ok, nb, use, covered, did, fresh = done[f]
        if covered:
            ran |= did  # from an analysis with training steps (drivers.driven_findings says why)
        steps += covered
        problems += probs
        if nb is not None:
            notebooks[path] = nb
        if use is not None:
            uses.append(use)
        if ok:
            analysed += 1
            kept.append(item)
        if fresh is not None and kept_cache is not None:
            kept_cache.new[path] = fresh
    if keep is keep_findings and ran:
        # what a file's own analysis saw only running a function alone gives way when another file's
        # analysis ran that function with real arguments (drivers.with_drivers)
        everything_ran = frozenset(ran)
        kept = [with_drivers(fs, [], everything_ran) for fs in kept]
    from .overlaps import rule_supersedes

    if todo or kept_cache is None or kept_cache.supersedes is None:
        supersedes = rule_supersedes()  # the rules are loaded: files were analysed (or nothing kept it)
    else:
        supersedes = kept_cache.supersedes  # every file came from the cache: the rules are not loaded
    if kept_cache is not None:
        kept_cache.supersedes = supersedes
        kept_cache.save()
    locator = Locator(notebooks)
    problems = [p.located(locator) for p in problems]
    problems.sort(key=lambda p: (p.path, p.cell.index if p.cell is not None else -1, p.line, p.col, p.kind))
    return Analysed(files, kept, problems, analysed, notebooks, merge(uses), coverage.merge(steps), supersedes)
