"""Which analysis runs where, and when one is stopped.

Analyses run in worker processes (worker.py), in two lanes:

- the small lane: one worker for ordinary documents, taken newest edit first, so that the
  document being typed in is analysed next;
- the big lane: a worker started when a big document (large, or slow to analyse) needs one, so
  that it never holds up the others.

A job in the small lane that runs longer than SMALL_LIMIT while another waits is moved to the big
lane when that is free (its worker becomes the big worker) and a spare worker, started ahead,
takes over the small lane at once; a document found slow goes to the big lane from then on. A big
document never delays another document's diagnostics by more than one small analysis.

Budgets: the engine stops itself at the time budget (and says what it did not reach); a worker
still busy well after it, or using more memory than the memory budget, is killed and the
document gets "analysis incomplete" instead of results. A running job whose document changed or
closed is stopped in the big lane (there it may run for seconds) and left to finish in the small
lane (where it is short); its result is dropped. A worker whose memory grew past its start-up
size is replaced when idle, and the big worker stops when no big document is open, so memory
returns to its baseline.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from .worker import receive, rss_bytes, send

SMALL_LIMIT = 0.5  # seconds a small-lane job may run while another waits
SLOW_SECONDS = 2.0  # a document whose analysis took this long goes to the big lane
BIG_BYTES = 512 * 1024  # documents this large go to the big lane from the start
RECYCLE_GROWTH = 1.5  # a worker this many times its start-up memory (+ RECYCLE_SLACK) is replaced
RECYCLE_SLACK = 40 << 20
TICK = 0.05
START_FAILURES = 3  # workers that die before they are ready, in a row: stop starting them


def worker_command() -> list[str]:
    return [sys.executable, "-m", "gradaudit.server.worker", str(os.getpid())]


@dataclass
class Budgets:
    time: float = 10.0  # seconds the engine interprets one document
    memory_mb: int = 1536  # resident memory of a worker during one analysis

    @property
    def hard_time(self) -> float:
        """When a worker still busy is killed: parsing is not interruptible, so well after."""
        return self.time * 2 + 5


@dataclass
class Job:
    uri: str
    version: int
    payload: dict[str, Any]  # what the worker gets (worker.analyze)
    priority: tuple[bool, int]  # smaller first: (background, -edit sequence)
    big: bool
    size: int
    future: asyncio.Future[Outcome] | None = field(repr=False, default=None)
    id: int = 0
    started: float = 0.0
    lane: str = ""
    retried: bool = False


@dataclass
class Outcome:
    reply: dict[str, Any] | None = None  # the worker's answer (worker.analyze)
    stopped: str = ""  # why the server stopped it: 'time' | 'memory' | 'died' | 'cancelled'
    seconds: float = 0.0
    peak_rss: int = 0


class Worker:
    """One worker process and the thread that talks to it."""

    _ids = itertools.count(1)

    def __init__(
        self, loop: asyncio.AbstractEventLoop, on_event: Callable[[Worker, str, Any], None], lane: str
    ) -> None:
        self.loop = loop
        self.on_event = on_event
        self.lane = lane
        self.name = f"worker-{next(self._ids)}"
        self.proc = subprocess.Popen(worker_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
        self.pid = self.proc.pid
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None  # both are pipes (PIPE above)
        self.stdin: IO[bytes] = stdin
        self.stdout: IO[bytes] = stdout
        self.inbox: queue.Queue[Job | None] = queue.Queue()
        self.job: Job | None = None
        self.ready = False
        self.baseline = 0
        self.rss = 0
        self.peak = 0
        self.dead = False
        self.thread = threading.Thread(target=self._run, name=f"gradaudit-{self.name}", daemon=True)
        self.thread.start()

    # the worker's own thread: pickling and pipe I/O stay off the event loop
    def _run(self) -> None:
        try:
            hello = receive(self.stdout)
            if hello is None:
                self._post("died", None)
                return
            self._post("ready", hello)
            while True:
                job = self.inbox.get()
                if job is None:
                    return
                send(self.stdin, job.payload)
                reply = receive(self.stdout)
                if reply is None:
                    self._post("died", job)
                    return
                self._post("done", (job, reply))
                job = reply = None  # not kept alive while waiting (a 20 MB text)
        except (OSError, EOFError, ValueError):
            self._post("died", self.job)
        except Exception as exc:  # an unpicklable reply, ...: the job fails, the worker is replaced
            self._post("broken", (self.job, repr(exc)))

    def _post(self, kind: str, data: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(self.on_event, self, kind, data)
        except RuntimeError:  # the loop is closed: the server is exiting
            pass

    def start(self, job: Job) -> None:
        self.job = job
        job.started = time.monotonic()
        job.lane = self.lane
        self.peak = self.rss
        self.inbox.put(job)

    @property
    def idle(self) -> bool:
        return self.job is None and not self.dead

    def kill(self, reason: str) -> None:
        if self.dead:
            return
        self.dead = True
        try:
            self.proc.kill()
        except OSError:
            pass
        self.inbox.put(None)
        # reap it (off the event loop) so that no zombie stays behind
        threading.Thread(target=self._reap, daemon=True).start()

    def _reap(self) -> None:
        try:
            self.proc.wait(timeout=10)
        except Exception:
            pass
        for stream in (self.stdin, self.stdout):
            try:
                stream.close()
            except Exception:
                pass

    def stop(self) -> None:
        """Ask it to exit (end of its input), then make sure."""
        if self.dead:
            return
        self.dead = True
        self.inbox.put(None)
        try:
            self.stdin.close()
        except OSError:
            pass
        threading.Thread(target=self._reap_or_kill, daemon=True).start()

    def _reap_or_kill(self) -> None:
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self._reap()


class Scheduler:
    def __init__(self, log: Callable[[str], None] | None = None) -> None:
        self.log: Callable[[str], None] = log or (lambda message: None)
        self.budgets = Budgets()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.small: Worker | None = None
        self.spare: Worker | None = None
        self.big: Worker | None = None
        self.pending: dict[str, Job] = {}
        self._ids = itertools.count(1)
        self._ticker: asyncio.Task[None] | None = None
        self.big_needed: Callable[[], bool] = lambda: False  # set by the owner: is a big document open?
        self.closed = False
        self.start_failures = 0
        self.unavailable = False  # workers cannot even start (a broken installation)

    # ------------------------------------------------------------ workers

    def start(self) -> None:
        """Start the small-lane worker and its spare (on the running loop)."""
        if self.loop is not None:
            return
        self.loop = asyncio.get_running_loop()
        self.small = self._spawn("small")
        self.spare = self._spawn("spare")
        self._ticker = self.loop.create_task(self._tick_forever())

    def _spawn(self, lane: str) -> Worker | None:
        if self.unavailable or self.closed or self.loop is None:  # the loop: start() sets it first
            return None
        return Worker(self.loop, self._on_event, lane)

    def workers(self) -> list[Worker]:
        return [w for w in (self.small, self.spare, self.big) if w is not None]

    def _promote_spare(self) -> None:
        """The spare takes over the small lane; a new spare is started."""
        self.small, self.spare = self.spare, None
        if self.small is None or self.small.dead:
            self.small = self._spawn("small")
        if self.small is not None:
            self.small.lane = "small"
        self.spare = self._spawn("spare")

    # ------------------------------------------------------------ jobs

    def submit(
        self, uri: str, version: int, payload: dict[str, Any], priority: tuple[bool, int], big: bool, size: int
    ) -> asyncio.Future[Outcome]:
        """Queue an analysis; a pending one of the same document is replaced (its future: cancelled)."""
        if self.loop is None:
            self.start()
        assert self.loop is not None  # start() set it
        future: asyncio.Future[Outcome] = self.loop.create_future()
        job = Job(uri, version, payload, priority, big, size, future, next(self._ids))
        job.payload["id"] = job.id
        old = self.pending.pop(uri, None)
        if old is not None:
            self._finish(old, Outcome(stopped="cancelled"))
        self.pending[uri] = job
        self._stop_stale()
        self._pump()
        return future

    def _stop_stale(self) -> None:
        """A running analysis of a version already replaced is stopped when it is long (the big
        lane, or past SMALL_LIMIT); a short one finishes, its result dropped."""
        now = time.monotonic()
        for w in self.workers():
            job = w.job
            if job is None or w.dead:
                continue
            newer = self.pending.get(job.uri)
            if (
                newer is not None
                and newer.version != job.version
                and (w.lane == "big" or now - job.started > SMALL_LIMIT)
            ):
                self._kill_busy(w, "cancelled")

    def cancel(self, uri: str) -> None:
        """The document closed: drop its pending job, stop its running one if that is long."""
        old = self.pending.pop(uri, None)
        if old is not None:
            self._finish(old, Outcome(stopped="cancelled"))
        now = time.monotonic()
        for w in self.workers():
            if w.job is not None and w.job.uri == uri and (w.lane == "big" or now - w.job.started > SMALL_LIMIT):
                self._kill_busy(w, "cancelled")
        self._pump()

    def _pump(self) -> None:
        if self.closed or self.loop is None:
            return
        if self.unavailable:
            for job in list(self.pending.values()):
                self._finish(job, Outcome(stopped="unavailable"))
            self.pending.clear()
            return
        for job in sorted(self.pending.values(), key=lambda j: j.priority):
            if job.big:
                if self.big is None or self.big.dead:
                    self.big = self._spawn("big")
                target = self.big
                if (
                    (target is None or not target.idle)
                    and job.size <= BIG_BYTES
                    and self.small is not None
                    and self.small.idle
                    and not any(not j.big for j in self.pending.values())
                ):
                    target = self.small  # slow, not large, and nothing small waits: no reason to queue
            else:
                target = self.small
            if target is not None and target.idle:
                del self.pending[job.uri]
                target.start(job)

    def _finish(self, job: Job, outcome: Outcome) -> None:
        if job.future is not None and not job.future.done():
            job.future.set_result(outcome)

    def _kill_busy(self, w: Worker, reason: str) -> None:
        job = w.job
        w.kill(reason)
        if w is self.small:
            self._promote_spare()
        elif w is self.big:
            self.big = None
        elif w is self.spare:
            self.spare = None
        if job is not None:
            self._finish(job, Outcome(stopped=reason, seconds=time.monotonic() - job.started, peak_rss=w.peak))
            w.job = None

    # ------------------------------------------------------------ events from the worker threads

    def _on_event(self, w: Worker, kind: str, data: Any) -> None:
        """What a worker's thread posted: 'ready' (its hello), 'done' ((job, reply)), 'died' or 'broken'."""
        if kind == "ready":
            w.ready = True
            self.start_failures = 0
            w.baseline = w.rss = data.get("rss", 0)
            return
        if kind == "done":
            job: Job
            reply: dict[str, Any]
            job, reply = data
            w.rss = reply.get("rss", 0)
            w.peak = max(w.peak, w.rss)
            if w.job is job:
                w.job = None
                self._finish(job, Outcome(reply, seconds=time.monotonic() - job.started, peak_rss=w.peak))
            self._after_job(w)
            self._pump()
            return
        self._crashed(w)
        self._pump()

    def _crashed(self, w: Worker) -> None:
        """A worker we did not stop is gone: replace it; its job is tried once more."""
        if w.dead:
            return
        job = w.job
        w.dead = True
        w.inbox.put(None)
        if not w.ready:
            self.start_failures += 1
            if self.start_failures >= START_FAILURES and not self.unavailable:
                self.unavailable = True
                self.log(
                    f"gradaudit: the analysis process cannot start ({START_FAILURES} attempts, exit status "
                    f"{w.proc.returncode}); see the server's stderr. Documents are not analysed."
                )
        else:
            self.log(f"gradaudit: the analysis process {w.pid} stopped unexpectedly; starting another")
        if w is self.small:
            self._promote_spare()
        elif w is self.big:
            self.big = None
        elif w is self.spare:
            self.spare = self._spawn("spare")
        if job is not None:
            w.job = None
            # tried once more; a job that never reached a ready worker did not run at all
            if (not job.retried or not w.ready) and job.uri not in self.pending and not self.closed:
                job.retried = job.retried or w.ready
                self.pending[job.uri] = job
            else:
                self._finish(job, Outcome(stopped="died", seconds=time.monotonic() - job.started))

    def _after_job(self, w: Worker) -> None:
        """Give memory back: a grown worker is replaced, the big worker goes when no big document needs it."""
        if self.closed or w.dead:
            return
        grown = w.baseline and w.rss > w.baseline * RECYCLE_GROWTH + RECYCLE_SLACK
        if w is self.big and (grown or not self.big_needed()):
            w.stop()
            self.big = None
        elif w is self.small and grown:
            w.stop()
            self._promote_spare()

    # ------------------------------------------------------------ budgets and preemption

    async def _tick_forever(self) -> None:
        while not self.closed:
            await asyncio.sleep(TICK)
            try:
                self._tick()
            except Exception as exc:  # never let the watchdog die
                self.log(f"gradaudit: scheduler: {exc!r}")

    def _tick(self) -> None:
        now = time.monotonic()
        for w in self.workers():
            if not w.dead and w.proc.poll() is not None:
                self._crashed(w)
        for w in self.workers():
            job = w.job
            if job is None or w.dead:
                continue
            elapsed = now - job.started
            rss = rss_bytes(w.pid)
            if rss:
                w.rss = rss
                w.peak = max(w.peak, rss)
            if rss > self.budgets.memory_mb << 20:
                self._kill_busy(w, "memory")
            elif elapsed > self.budgets.hard_time:
                self._kill_busy(w, "time")
            elif (
                w is self.small
                and elapsed > SMALL_LIMIT
                and any(not j.big for j in self.pending.values())
                and job.uri not in self.pending
            ):
                self._move_to_big_lane(w)
        self._stop_stale()
        if self.big is not None and self.big.idle and not self.big_needed():
            self.big.stop()
            self.big = None
        self._pump()

    def _move_to_big_lane(self, w: Worker) -> None:
        """A small-lane job is slow and others wait: its worker becomes the big lane's (when that
        is free) and the spare takes the small lane. With the big lane busy it runs on: stopping
        it would not make it wait less, and when every analysis is slow (a loaded machine) it
        would only thrash; its document goes to the big lane from its next version on."""
        job = w.job
        if job is None or (self.big is not None and not self.big.dead and not self.big.idle):
            return
        job.big = True
        if self.big is not None and not self.big.dead:
            self.big.stop()
        self.big = w
        w.lane = "big"
        job.lane = "big"
        self._promote_spare()
        self.log(f"gradaudit: {job.uri} is slow to analyse: moved to its own worker")

    # ------------------------------------------------------------ shutdown

    def shutdown(self) -> None:
        self.closed = True
        for job in list(self.pending.values()):
            self._finish(job, Outcome(stopped="cancelled"))
        self.pending.clear()
        for w in self.workers():
            if w.job is not None:
                self._finish(w.job, Outcome(stopped="cancelled"))
            w.kill("shutdown")
        self.small = self.spare = self.big = None
        if self._ticker is not None:
            self._ticker.cancel()
