"""Per-document analysis state: debounced, prioritised, never stale.

An edit schedules an analysis of that document after the debounce delay; a newer edit replaces
the pending one. The scheduler (scheduler.py) runs it in a worker process, the document being
edited first. A result is kept only if the document still has the version it analysed. Findings
an analysis places in *other* files (a `.detach()` in a helper module) are kept apart and shown
with those files. What the client was last shown (`shown`) moves with the edits, so that what a
new analysis could not recompute (a statement that does not parse yet) stays where it was.
"""

from __future__ import annotations

import asyncio
import os
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lsprotocol import types

from gradaudit.analysis.check.engine import Result
from gradaudit.analysis.check.schema import Problem
from gradaudit.analysis.model.findings import Finding
from gradaudit.analysis.source.notebook import Notebook

from .convert import path_of
from .memory import give_back
from .scheduler import BIG_BYTES, SLOW_SECONDS, Scheduler
from .settings import Settings

OVERLAY_BYTES = BIG_BYTES  # other open documents larger than this are read from disk by an analysis
CHANGES_KEPT = 1000  # files changed on disk told to the workers; one that missed more forgets all


@dataclass
class Analysis:
    version: int
    text: str
    result: Result | None
    error: str | None = None  # the engine failed (a traceback)
    config_source: str = ""  # the pyproject.toml that applied ('' for none)
    config_problems: tuple[Problem, ...] = ()  # what is wrong in it
    severity: dict[str, str] = field(default_factory=dict)  # the project's severity, with the client's over it
    seconds: float = 0.0
    stopped: str = ""  # the server stopped it: 'time' | 'memory' | 'died'
    budget: str = ""  # the budget that was spent, for the message
    deps: frozenset[str] = frozenset()  # normalised paths of the files the analysis read (its imports)


@dataclass
class DocState:
    uri: str
    version: int = 0
    analysis: Analysis | None = None
    task: asyncio.Task[None] | None = None
    waiters: list[asyncio.Future[Analysis | None]] = field(default_factory=list)
    # other uri -> findings this document's analysis placed there
    foreign: dict[str, list[Finding]] = field(default_factory=dict)
    shown: list[types.Diagnostic] = field(default_factory=list)  # the diagnostics last published, moved with the edits
    edited: int = 0  # sequence number of its last edit: newest first
    size: int = 0
    slow: bool = False  # its last analysis was long: the big lane
    memory_refused: int = 0  # size at which it ran out of memory (0: never)


class Analyses:
    """The documents' analysis state, and the scheduler that runs their analyses."""

    def __init__(self, on_result: Callable[[str], None], log: Callable[[str], None]) -> None:
        self.docs: dict[str, DocState] = {}
        self.on_result = on_result  # callback(uri) on the event loop after a new result
        self.log = log
        self.scheduler = Scheduler(log)
        self.scheduler.big_needed = self._big_open
        self._edits = 0
        self._give_back: list[asyncio.TimerHandle] = []
        self._change_seq = 0
        self._changes: list[tuple[int, str]] = []  # (sequence number, path) of the files changed on disk, the last ones

    def start(self) -> None:
        self.scheduler.start()

    def _big_open(self) -> bool:
        return any(st.slow or st.size > BIG_BYTES for st in self.docs.values())

    def state(self, uri: str) -> DocState:
        st = self.docs.get(uri)
        if st is None:
            st = self.docs[uri] = DocState(uri)
        return st

    def close(self, uri: str) -> None:
        st = self.docs.pop(uri, None)
        if st is not None:
            if st.task is not None:
                st.task.cancel()
            for fut in st.waiters:
                if not fut.done():
                    fut.set_result(None)
        self.scheduler.cancel(uri)
        # what the document held goes back to the system once the event loop and the workers'
        # threads let go of it (once for a burst of closes; again a little later, for what an
        # analysis being stopped still held)
        for handle in self._give_back:
            handle.cancel()
        loop = asyncio.get_running_loop()
        self._give_back = [loop.call_later(0.5, give_back), loop.call_later(5.0, give_back)]

    def schedule(
        self,
        uri: str,
        version: int,
        text_of: Callable[[], str | Notebook],
        settings: Settings,
        workspace_root: str,
        open_texts: Callable[[int], dict[str, str]],
        delay_ms: int,
        background: bool = False,
    ) -> None:
        """Analyze `uri` at `version` after `delay_ms`, replacing a pending request. `background`:
        not an edit of this document (a save elsewhere, new settings): after the edited ones."""
        st = self.state(uri)
        st.version = version
        if not background:
            self._edits += 1
            st.edited = self._edits
        if st.task is not None and not st.task.done():
            st.task.cancel()
        st.task = asyncio.ensure_future(
            self._run_later(st, version, text_of, settings, workspace_root, open_texts, delay_ms / 1000.0, background)
        )
        st.task.add_done_callback(self._report)

    def _report(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.log(
                "gradaudit: internal error: "
                + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=8))
            )

    async def _run_later(
        self,
        st: DocState,
        version: int,
        text_of: Callable[[], str | Notebook],
        settings: Settings,
        root: str,
        open_texts: Callable[[int], dict[str, str]],
        delay: float,
        background: bool,
    ) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        if st.version != version or self.docs.get(st.uri) is not st:
            return
        text = text_of()
        notebook = None
        if isinstance(text, Notebook):  # a notebook document: its cells as one source
            notebook, text = text, text.source
        st.size = len(text)
        budgets = self.scheduler.budgets
        if st.memory_refused and st.size >= st.memory_refused * 0.9:
            # it ran out of memory at about this size: do not spend the budget again on every keystroke
            self._land(st, Analysis(version, text, None, stopped="memory", budget=f"{budgets.memory_mb} MB"))
            return
        overlays = {path_of(u): t for u, t in open_texts(OVERLAY_BYTES).items() if u != st.uri}
        payload = {
            "path": path_of(st.uri),
            "text": text,
            "settings": settings,
            "root": root,
            "overlays": overlays,
            "time_budget": budgets.time,
            "changes": (self._change_seq, tuple(self._changes)),
            "notebook": notebook,
        }
        big = st.slow or st.size > BIG_BYTES
        started = time.perf_counter()
        outcome = await self.scheduler.submit(st.uri, version, payload, (background, -st.edited), big, st.size)
        if outcome.stopped == "cancelled":
            return  # a newer version (or a close) took its place
        if outcome.reply is not None:
            reply = outcome.reply
            analysis = Analysis(
                version,
                text,
                reply.get("result"),
                reply.get("error"),
                reply.get("config_source", ""),
                tuple(reply.get("config_problems", ())),
                dict(reply.get("severity", {})),
                reply.get("seconds", 0.0),
                deps=reply.get("deps", frozenset()),
            )
        else:
            budget = {"time": f"{budgets.hard_time:g} s", "memory": f"{budgets.memory_mb} MB"}.get(outcome.stopped, "")
            analysis = Analysis(version, text, None, stopped=outcome.stopped, budget=budget)
            if outcome.stopped == "memory":
                st.memory_refused = st.size
        analysis.seconds = analysis.seconds or (time.perf_counter() - started)
        # the big lane from now on if it was slow; back to the small one when it is quick again
        st.slow = outcome.stopped in ("time", "memory") or outcome.seconds > SLOW_SECONDS
        if analysis.error:
            self.log(f"gradaudit: analysis of {st.uri} failed:\n{analysis.error}")
        elif analysis.stopped:
            self.log(f"gradaudit: analysis of {st.uri} stopped ({analysis.stopped} budget)")
        self._land(st, analysis)

    def _land(self, st: DocState, analysis: Analysis) -> None:
        if st.version != analysis.version or self.docs.get(st.uri) is not st:
            return  # stale: a newer edit (or a close) came in meanwhile
        st.analysis = analysis
        st.foreign = _foreign(st.uri, analysis)
        for fut in st.waiters:
            if not fut.done():
                fut.set_result(analysis)
        st.waiters.clear()
        self.on_result(st.uri)

    async def current(self, uri: str, timeout: float = 30.0) -> Analysis | None:
        """The analysis of the document's current version, waiting for it if it is under way."""
        st = self.docs.get(uri)
        if st is None:
            return None
        if st.analysis is not None and st.analysis.version == st.version:
            return st.analysis
        fut: asyncio.Future[Analysis | None] = asyncio.get_running_loop().create_future()
        st.waiters.append(fut)
        try:
            return await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            return st.analysis

    def latest(self, uri: str) -> Analysis | None:
        st = self.docs.get(uri)
        return st.analysis if st is not None else None

    def dependents(self, changed: set[str]) -> list[str]:
        """Documents whose last analysis read one of the changed files."""
        return [uri for uri, st in self.docs.items() if st.analysis is not None and st.analysis.deps & changed]

    def invalidate(self, paths: Iterable[str]) -> None:
        """Files changed on disk: the workers drop what they keep of them (parsed modules, library
        summaries when a library changed). Each job carries the recent changes; a worker applies
        those it has not seen (worker.py), whichever lane it serves and whenever it started."""
        for p in paths:
            self._change_seq += 1
            self._changes.append((self._change_seq, os.path.abspath(p)))
        del self._changes[:-CHANGES_KEPT]

    def foreign_findings(self, uri: str) -> list[Finding]:
        out: list[Finding] = []
        for other, st in self.docs.items():
            if other != uri:
                out.extend(st.foreign.get(uri, ()))
        return out

    def shutdown(self) -> None:
        for st in self.docs.values():
            if st.task is not None:
                st.task.cancel()
        self.scheduler.shutdown()


def _foreign(uri: str, analysis: Analysis) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    if analysis.result is None:
        return out
    own = os.path.normpath(path_of(uri))
    from .convert import uri_of

    for f in analysis.result.findings:
        if os.path.normpath(os.path.abspath(f.span.path)) != own:
            out.setdefault(uri_of(f.span.path), []).append(f)
    return out
