"""The analysis worker: a child process of the language server that runs the engine.

    python -m gradaudit.server.worker SERVER_PID

It reads jobs from stdin and writes results to stdout, each a pickle behind an 8-byte length.
A plain subprocess (not multiprocessing): the server can kill it at any moment (a newer version
of the document, a budget spent) without semaphores or a resource tracker left behind, and it
exits by itself when the server is gone.
"""

from __future__ import annotations

import gc
import os
import pickle
import struct
import sys
import threading
import time
import traceback
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # for annotations only: the engine is imported when a job needs it
    from gradaudit.analysis.check.config import Config
    from gradaudit.analysis.check.engine import Analyzer, Result
    from gradaudit.analysis.check.schema import Problem
    from gradaudit.analysis.libraries.environment import PythonEnv
    from gradaudit.analysis.libraries.models import LibraryModels
    from gradaudit.analysis.source.program import Program, SourceFile

    from .settings import Settings

HEADER = struct.Struct(">Q")


def send(stream: IO[bytes], obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    """The next object, or None at the end of the stream (whatever the other end sent: a job, a reply)."""
    head = _read_exactly(stream, HEADER.size)
    if head is None:
        return None
    data = _read_exactly(stream, HEADER.unpack(head)[0])
    if data is None:
        return None
    return pickle.loads(data)


def _read_exactly(stream: IO[bytes], n: int) -> bytes | None:
    chunks: list[bytes] = []
    left = n
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def rss_bytes(pid: int | str = "self") -> int:
    """Resident memory of a process (0 where /proc is not available)."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


# What a worker keeps between analyses: the library models of each analysed environment (their
# summaries in memory, jedi's Project inside), and the project's parsed modules, reused while
# their text is unchanged and dropped when the server says a file changed on disk.
_LIBRARIES: dict[str, LibraryModels] = {}  # by PythonEnv.key
_PARSED: dict[str, SourceFile] = {}  # by absolute path
_EDITED: dict[str, SourceFile] = {}  # the last analysed version of each document, by absolute path
_SEEN = 0  # the sequence number of the last change on disk applied
# For a document whose own analysis shows no training step: the project files whose steps run it
# (gradaudit.analysis.check.drivers), found from the project's file list and the files' texts. The
# list and each document's drivers are kept until a file changes on disk or the open documents
# change; the texts are not kept (a large project's would weigh on the worker).
_PROJECTS: dict[str, set[str]] = {}  # project root -> its Python files (absolute paths)
# (a document's folder, the workspace root) -> its project root: without a marker file the answer
# counts the workspace's files, not a walk to repeat at every keystroke
_ROOTS: dict[tuple[str, str], str | None] = {}
# document -> (the names it defines, the open documents, its drivers)
_DRIVERS: dict[str, tuple[frozenset[str], frozenset[str], list[str]]] = {}


def _environment(settings: Settings, config: Config, path: str, root: str) -> tuple[PythonEnv, list[Problem]]:
    """(PythonEnv, problems) for a document: the editor's `interpreter`, else the project's `python`,
    else the one discovered from the document's folder up to the workspace root (environment.py).
    An interpreter setting that cannot be read is a problem shown once; discovery takes over."""
    from gradaudit.analysis.check.schema import Problem
    from gradaudit.analysis.libraries.environment import EnvError, find_env

    from .settings import SECTION, SOURCE

    problems: list[Problem] = []
    if settings.interpreter:
        try:
            return find_env(settings.interpreter, origin="the editor's `interpreter` setting"), problems
        except EnvError as exc:
            problems.append(Problem(SOURCE, SECTION, "interpreter", str(exc)))
    start = os.path.dirname(os.path.abspath(path))
    return find_env(config.python or None, start=start, root=root or None, origin=config.python_origin), problems


def _libraries(env: PythonEnv) -> LibraryModels:
    from gradaudit.analysis.libraries.models import LibraryModels
    from gradaudit.analysis.libraries.summary_cache import SummaryCache

    libs = _LIBRARIES.get(env.key)
    if libs is None:
        libs = _LIBRARIES[env.key] = LibraryModels(env, SummaryCache())
    libs.env = env  # the same folders; how it was found may differ (what the output says)
    return libs


def apply_changes(seq: int, changes: tuple[tuple[int, str], ...]) -> None:
    """Forget what changed on disk since the last job: `changes` are the server's recent
    (sequence number, path); if some this worker has not seen are no longer among them, forget all."""
    global _SEEN
    if seq <= _SEEN:
        return
    if not changes or changes[0][0] > _SEEN + 1:
        _PARSED.clear()
        _LIBRARIES.clear()
        _PROJECTS.clear()
        _DRIVERS.clear()
        _ROOTS.clear()
        gc.unfreeze()  # library models hold cycles: the full collection must see them to free them
    else:
        paths = [p for n, p in changes if n > _SEEN]
        if paths:
            _DRIVERS.clear()  # an importer may have come or gone
            _ROOTS.clear()  # ... or a pyproject.toml, or files enough to make the workspace no project
        for p in paths:
            _PARSED.pop(p, None)
            for root, files in list(_PROJECTS.items()):
                if os.path.abspath(p) not in files and os.path.abspath(p).startswith(root + os.sep):
                    del _PROJECTS[root]  # a new file (or folder): list the project again
        for key, libs in list(_LIBRARIES.items()):
            if any(libs.env.is_library_path(p) for p in paths):
                del _LIBRARIES[key]  # a library changed (an upgrade): resolve its names anew
                gc.unfreeze()
    _SEEN = seq


def analyze(job: dict[str, Any]) -> dict[str, Any]:
    """One analysis; what crosses back is pickled findings and the model (no syntax trees)."""
    from gradaudit.analysis.check.engine import Analyzer
    from gradaudit.analysis.source.program import Program

    apply_changes(*job.get("changes", (0, ())))
    path = job["path"]
    settings = job["settings"]
    config, problems = settings.engine_config(path)
    env, env_problems = _environment(settings, config, path, job["root"])
    problems = list(problems) + env_problems
    facts = {"config_source": config.source, "config_problems": tuple(problems), "severity": dict(config.severity)}
    # the last trees of documents still open (the overlays are the other open documents' texts)
    open_now = {os.path.abspath(p) for p in job["overlays"]} | {os.path.abspath(path)}
    for kept in [p for p in _EDITED if p not in open_now]:
        del _EDITED[kept]
    for kept in [p for p in _DRIVERS if p not in open_now]:
        del _DRIVERS[kept]
    from gradaudit.analysis.check.drivers import project_root

    roots = [job["root"]] if job["root"] else []
    roots += list(settings.extra_paths)
    # the document's project (its nearest pyproject.toml, setup.py, .git): where the files that
    # import it are found, and what their imports are relative to (_add_drivers)
    where = (os.path.dirname(os.path.abspath(path)), job["root"] or "")
    if where not in _ROOTS:
        _ROOTS[where] = project_root(path, cwd=job["root"] or None)
    project = _ROOTS[where]
    if project is not None and project not in roots:
        roots.append(project)
    started = time.perf_counter()
    try:
        analyzer = Analyzer(
            config,
            extra_roots=roots,
            overlays=job["overlays"],
            time_budget=job.get("time_budget"),
            libraries=_libraries(env),
        )
        program = analyzer.attach(Program(roots, job["overlays"], parsed=_PARSED, edited=_EDITED))
        notebook = job.get("notebook")
        if notebook is not None:  # an open notebook's cells (gradaudit.analysis.source.notebook)
            result = analyzer.analyze_notebook(path, notebook, program)
        else:
            result = analyzer.analyze_source(path, job["text"], program)
            if project is not None:
                _add_drivers(analyzer, program, result, job, config, project)
    except Exception:
        return dict(facts, error=traceback.format_exc(limit=8), seconds=time.perf_counter() - started)
    # the files the analysis read (its imports): an edit or a change on disk there analyses it again
    deps = frozenset(os.path.normcase(os.path.abspath(sf.abspath)) for sf in result.files.values())
    result.files = {}
    if config.excluded(path):
        result.findings = []  # `exclude` in [tool.gradaudit]: as `gradaudit check` skips it
    return dict(facts, result=result, deps=deps, seconds=time.perf_counter() - started)


def _add_drivers(
    analyzer: Analyzer, program: Program, result: Result, job: dict[str, Any], config: Config, root: str
) -> None:
    """What the training steps of the project files that run the document find in it, added to
    its findings, when its own analysis shows none it understands (drivers.needs_drivers): a loss
    module, a model, a trainer whose loop is in train.py. The drivers read the document's text as
    the editor has it; the files they read join the document's (an edit there analyses it again)."""
    from gradaudit.analysis.check.drivers import (
        defined_names,
        driven_findings,
        find_drivers,
        needs_drivers,
        project_files,
        with_drivers,
    )
    from gradaudit.analysis.check.engine import merge_findings

    path = job["path"]
    if not path.endswith(".py") or not needs_drivers(result):
        return
    files = _PROJECTS.get(root)
    if files is None:
        files = _PROJECTS[root] = {os.path.abspath(f) for f in project_files(root, config)}
    me = os.path.abspath(path)
    # open documents are read as the editor has them
    overlays = {os.path.abspath(p): t for p, t in job["overlays"].items()}
    key = (frozenset(defined_names(job["text"])), frozenset(overlays))
    kept = _DRIVERS.get(me)
    if kept is not None and kept[:2] == key:
        drivers = kept[2]
    else:
        drivers = find_drivers(me, sorted(files - {me}), dict(overlays), root, text=job["text"])
        _DRIVERS[me] = (*key, drivers)
    if not drivers:
        return
    found_there, read, ran, failed = driven_findings(analyzer, program, path, drivers)
    for p in failed:  # an engine bug: the server's log says so (the document's findings stand)
        print(f"{p.message}\n{p.detail}", file=sys.stderr)
    result.files.update(read)
    findings = with_drivers(result.findings, found_there, ran)
    if findings != result.findings:
        result.findings = merge_findings(findings)


# A training step for the worker to analyse before it says it is ready (nothing is read from disk)
WARM_UP = """\
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x, y = torch.randn(3, 4), torch.randint(0, 2, (3,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def warm_up() -> None:
    """What the first job would load, loaded before the worker says it is ready: the default
    environment's library models, the engine's tables and code paths. The first document is then
    not analysed by a cold worker, and the memory a worker keeps from its first job on is part of
    the size it reports at start-up (the baseline it is recycled against)."""
    from gradaudit.analysis.check.config import Config
    from gradaudit.analysis.check.engine import Analyzer
    from gradaudit.analysis.libraries.environment import find_env
    from gradaudit.analysis.source.program import Program

    try:
        # the environment of the folder the server started in (the workspace, usually)
        analyzer = Analyzer(Config(), libraries=_libraries(find_env(None, start=os.getcwd())))
        program = analyzer.attach(Program([], {}, parsed={}))
        analyzer.analyze_source(os.path.join(os.sep, "gradaudit-warm-up", "train.py"), WARM_UP, program)
    except Exception:  # a broken environment shows in the first real job, with its message
        traceback.print_exc(limit=4)


IDLE_COLLECT = 1.0  # seconds without a job before the worker runs a full collection
FULL_COLLECT_JOBS = 25  # ... or this many jobs in a row without such a pause


def _job_waiting(stream: IO[bytes], seconds: float) -> bool:
    """Whether the server sends a job within `seconds` (the server sends one only after the previous
    answer, so nothing is left in the stream's buffer meanwhile). Where pipes cannot be polled
    (Windows), False: the worker collects after every job, as before."""
    import select

    try:
        ready, _, _ = select.select([stream], [], [], seconds)
    except (OSError, ValueError):  # Windows: select takes sockets only
        return False
    return bool(ready)


def _watch_parent(server_pid: int) -> None:
    # an editor may kill the server outright: then the worker must not linger
    while True:
        time.sleep(0.5)
        if os.getppid() != server_pid:
            os._exit(0)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    server_pid = int(argv[0]) if argv else os.getppid()
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # nothing else may write into the channel
    stdin = sys.stdin.buffer
    threading.Thread(target=_watch_parent, args=(server_pid,), name="gradaudit-parent-watch", daemon=True).start()
    # the engine recurses over nested code: room for it
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4000))
    warm_up()
    # What warm-up loaded (the engine's tables, the default environment's library models) lives as
    # long as the worker: frozen, no collection walks it again. The cyclic collector then runs only
    # between jobs, after the answer is sent. Enabled, its first pass after an analysis (which runs
    # with it off) walked every object the analysis made, a tenth of each keystroke's latency, and
    # its full passes walked every library model read since, three quarters of an analysis. After
    # each job only the young generations are collected (the job's own objects); a full collection
    # waits until no job has come for IDLE_COLLECT seconds, or FULL_COLLECT_JOBS jobs went by.
    gc.collect()
    gc.freeze()
    gc.disable()
    send(out, {"ready": True, "rss": rss_bytes()})
    collected, since_full = True, 0
    while True:
        if not collected and (since_full >= FULL_COLLECT_JOBS or not _job_waiting(stdin, IDLE_COLLECT)):
            # a pause (or a long run of jobs): only the document analysed last keeps its tree (typing
            # resumes there); the others' go, since closing documents sends the worker nothing
            while len(_EDITED) > 1:
                del _EDITED[next(iter(_EDITED))]
            from gradaudit.analysis.check.engine import EDITED_SMALL_CHARS

            # a small document's tree is kept while it is typed in, not across a pause: parsed again
            # in a few milliseconds, and trees kept across pauses fragment the heap
            for path in [p for p, sf in _EDITED.items() if len(sf.source) < EDITED_SMALL_CHARS]:
                del _EDITED[path]
            from .memory import give_back

            give_back()  # a full collection, and what the allocator can return goes back
            collected, since_full = True, 0
        job = receive(stdin)
        if job is None:
            return 0
        reply = analyze(job)
        reply["id"] = job["id"]
        reply["rss"] = rss_bytes()
        send(out, reply)
        del job, reply
        gc.collect(1)
        collected, since_full = False, since_full + 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (KeyboardInterrupt, BrokenPipeError):
        os._exit(0)
