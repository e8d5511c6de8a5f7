"""Analysing the files under some paths: discovery, worker processes, what could not be done.

One loop for `gradaudit check` and `gradaudit audit`: the same files, the same time budget and
library environment, the same problems (problems.py). What each keeps of an analysis differs (the
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


def analyze_chunk(paths, config, roots, bar=None, time_budget=None, python=None, cache=True, keep=keep_findings):
    """Analyze files (in a worker or in-process): ([(path, kept)], problems, files analysed,
    notebooks, the environments read as imported.LibraryUse), picklable."""
    from ..libraries.imported import merge
    from ..source.program import Program
    from .engine import Analyzer
    from .problems import Problem, problems_of

    analyzer = Analyzer(config, extra_roots=roots, batch=True, time_budget=time_budget, python=python, cache=cache)
    program = analyzer.attach(Program(roots, freeze_trees=True))
    kept, problems, analysed, notebooks, uses = [], [], 0, {}, []
    for path in paths:
        try:
            r = analyzer.analyze_file(path, program)
            if r.notebook is not None:
                notebooks[path] = r.notebook
            problems.extend(problems_of(r))
            if r.libraries is not None:
                uses.append(r.libraries)
            if r.error is None:
                analysed += 1
                kept.append((path, keep(path, r)))
        except Exception as exc:  # an engine bug must not hide the other files' results
            import traceback

            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            problems.append(Problem.internal(path, last, traceback.format_exc(limit=6)))
        if bar is not None:
            bar.step()
    analyzer.collect()
    return kept, problems, analysed, notebooks, merge(uses)


def analyze_paths(
    paths, config, jobs=0, progress=False, time_budget=None, python=None, cache=True, keep=keep_findings
) -> Analysed:
    from ..libraries.imported import merge
    from .discovery import discover

    files, problems = discover(paths, config)
    roots = sorted({os.path.abspath(p) for p in paths if os.path.isdir(p)})
    bar = Progress(len(files), progress)
    workers = jobs or min(os.cpu_count() or 1, 8)
    kept, analysed, notebooks, uses = [], 0, {}, []
    if workers > 1 and len(files) >= 16:
        import concurrent.futures  # worker processes: not loaded by a check of a few files

        chunks = [c for c in (files[i :: workers * 4] for i in range(workers * 4)) if c]
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {
                pool.submit(analyze_chunk, c, config, roots, None, time_budget, python, cache, keep): len(c)
                for c in chunks
            }
            for fut in concurrent.futures.as_completed(futures):
                k, p, n, nbs, u = fut.result()
                kept += k
                notebooks.update(nbs)
                uses += u
                problems += p
                analysed += n
                bar.step(futures[fut])
        order = {p: i for i, p in enumerate(files)}
        kept.sort(key=lambda item: order.get(item[0], 0))
    else:
        kept, more, analysed, notebooks, uses = analyze_chunk(
            files, config, roots, bar, time_budget, python, cache, keep
        )
        problems += more
    bar.close()
    locator = Locator(notebooks)
    problems = [p.located(locator) for p in problems]
    problems.sort(key=lambda p: (p.path, p.cell.index if p.cell is not None else -1, p.line, p.col, p.kind))
    return Analysed(files, [k for _, k in kept], problems, analysed, notebooks, merge(uses))
