"""Per-document analysis: debounced, run off the event loop, cached by version, never stale.

An edit schedules an analysis of that document after the debounce delay; a newer edit
replaces the pending one. The analysis runs in a worker process; its result is kept only if the
document still has the version it analyzed. Findings an analysis places in *other* files (a
`.detach()` in a helper module) are kept apart and shown with those files.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import concurrent.futures.process
import multiprocessing
import os
import time
import traceback
from dataclasses import dataclass, field

from gradaudit.analysis.engine import Analyzer, Result

from .convert import path_of


@dataclass
class Analysis:
    version: int
    text: str
    result: Result | None
    error: str | None = None
    config_source: str = ""                # the pyproject.toml that applied ('' for none)
    config_problems: tuple = ()            # schema.Problem: what is wrong in it
    severity: dict = field(default_factory=dict)   # the project's severity, with the client's over it
    seconds: float = 0.0


@dataclass
class DocState:
    uri: str
    version: int = 0
    analysis: Analysis | None = None
    task: asyncio.Task | None = None
    waiters: list = field(default_factory=list)
    foreign: dict = field(default_factory=dict)     # other uri -> findings this document's analysis placed there


class Analyses:
    """Owns the worker thread and the documents' analysis state."""

    def __init__(self, on_result, log):
        self.docs: dict[str, DocState] = {}
        self.on_result = on_result          # callback(uri) on the event loop after a new result
        self.log = log
        self.pool = None
        self._start_pool()

    def _start_pool(self):
        # Analysis runs in a worker process: parsing and interpreting hold the GIL for long
        # stretches, and in a thread that would stall every request behind them. A process also
        # keeps an engine crash away from the server.
        # spawn: the worker is the server's own child (a forkserver would outlive a killed server)
        ctx = multiprocessing.get_context("spawn")
        self.pool = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx,
                                                           initializer=_worker_init, initargs=(os.getpid(),))
        self.pool.submit(_ping).result()   # start it now, not on the first keystroke

    def state(self, uri: str) -> DocState:
        st = self.docs.get(uri)
        if st is None:
            st = self.docs[uri] = DocState(uri)
        return st

    def close(self, uri: str):
        st = self.docs.pop(uri, None)
        if st is not None and st.task is not None:
            st.task.cancel()

    def schedule(self, uri: str, version: int, text_of, settings, workspace_root, open_texts, delay_ms: int):
        """Analyze `uri` at `version` after `delay_ms`, replacing a pending request."""
        st = self.state(uri)
        st.version = version
        if st.task is not None and not st.task.done():
            st.task.cancel()
        st.task = asyncio.ensure_future(self._run_later(st, version, text_of, settings, workspace_root,
                                                        open_texts, delay_ms / 1000.0))
        st.task.add_done_callback(self._report)

    def _report(self, task: asyncio.Task):
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.log("gradaudit: internal error: " + "".join(
                traceback.format_exception(type(exc), exc, exc.__traceback__, limit=8)))

    async def _run_later(self, st: DocState, version, text_of, settings, root, open_texts, delay):
        if delay > 0:
            await asyncio.sleep(delay)
        if st.version != version:
            return
        text = text_of()
        overlays = {path_of(u): t for u, t in open_texts().items() if u != st.uri}
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        try:
            analysis = await loop.run_in_executor(self.pool, _analyze, st.uri, version, text, settings, root,
                                                  overlays)
        except concurrent.futures.process.BrokenProcessPool:
            self.log(f"gradaudit: the analysis process died while analysing {st.uri}; restarting it")
            self._start_pool()
            analysis = Analysis(version, text, None, error="the analysis process died")
        analysis.seconds = time.perf_counter() - started
        if analysis.error:
            self.log(f"gradaudit: analysis of {st.uri} failed:\n{analysis.error}")
        if st.version != version or self.docs.get(st.uri) is not st:
            return  # stale: a newer edit (or a close) came in meanwhile
        if analysis.error and st.analysis is not None:
            return  # keep the last good diagnostics rather than blank them
        st.analysis = analysis
        st.foreign = _foreign(st.uri, analysis)
        for fut in st.waiters:
            if not fut.done():
                fut.set_result(analysis)
        st.waiters.clear()
        self.on_result(st.uri)

    async def current(self, uri: str, timeout=30.0) -> Analysis | None:
        """The analysis of the document's current version, waiting for it if it is under way."""
        st = self.docs.get(uri)
        if st is None:
            return None
        if st.analysis is not None and st.analysis.version == st.version:
            return st.analysis
        fut = asyncio.get_running_loop().create_future()
        st.waiters.append(fut)
        try:
            return await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            return st.analysis

    def latest(self, uri: str) -> Analysis | None:
        st = self.docs.get(uri)
        return st.analysis if st is not None else None

    def foreign_findings(self, uri: str) -> list:
        out = []
        for other, st in self.docs.items():
            if other != uri:
                out.extend(st.foreign.get(uri, ()))
        return out

    def shutdown(self):
        self.pool.shutdown(wait=False, cancel_futures=True)


def _foreign(uri: str, analysis: Analysis) -> dict:
    out: dict = {}
    if analysis.result is None:
        return out
    own = os.path.normpath(path_of(uri))
    from .convert import uri_of
    for f in analysis.result.findings:
        if os.path.normpath(os.path.abspath(f.span.path)) != own:
            out.setdefault(uri_of(f.span.path), []).append(f)
    return out


def _worker_init(server_pid: int):
    # the engine recurses over deeply nested expressions: give the worker's main thread room
    import sys
    import threading
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4000))

    def watch():
        # an editor may kill the server outright: then the worker must not linger
        while True:
            time.sleep(1.0)
            if os.getppid() != server_pid:
                os._exit(0)

    threading.Thread(target=watch, name="gradaudit-parent-watch", daemon=True).start()


def _ping():
    return True


def _analyze(uri, version, text, settings, root, overlays) -> Analysis:
    """Runs in the worker process; what it returns crosses back by pickling (no syntax trees)."""
    path = path_of(uri)
    config, problems = settings.engine_config(path)
    facts = dict(config_source=config.source, config_problems=tuple(problems),
                 severity=dict(config.severity))
    roots = [root] if root else []
    roots += list(settings.extra_paths)
    try:
        result = Analyzer(config, extra_roots=roots, overlays=overlays).analyze_source(path, text)
    except Exception:
        return Analysis(version, text, None, error=traceback.format_exc(limit=8), **facts)
    result.files = {}
    if config.excluded(path):
        result.findings = []      # `exclude` in [tool.gradaudit]: as `gradaudit check` skips it
    return Analysis(version, text, result, **facts)
