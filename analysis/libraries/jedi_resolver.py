"""jedi, for the imports and names the engine's own resolvers cannot follow.

The own resolvers stay the fast path (program.py for the project, site_index.py for installed
libraries). jedi is imported only when one of them gives up on a name that may exist: a module
added to `sys.path` by the script itself, a namespace package spread over several roots, a name
a library re-exports through code the index does not read. Every question runs under a time
limit: jedi can spend minutes inferring through a package of hundreds of star imports, and an
answer that late is worth less than no answer.

jedi reads files; it is given the analysed environment's folders as its `sys_path`, so nothing
of that environment is run either. Left to itself jedi would start an interpreter: the active
virtualenv's (`VIRTUAL_ENV`, possibly the workspace's `.venv/bin/python`) or its own, and import
a compiled module there to look into it, which runs the module's code. Every question is asked
in this process instead (`_environment`), where only compiled modules of the standard library
or already imported can be looked into.
"""

from __future__ import annotations

import os
import sys
import threading

from .environment import PythonEnv, is_stdlib_path
from .site_index import Definition

TIMEOUT = 3.0  # a library name the site index could not follow
IMPORT_TIMEOUT = 15.0  # a project import: jedi's first answer in a process includes its own start

_projects: dict = {}
_environments: list = []
_lock = threading.Lock()
_busy = threading.Lock()
stats = {"calls": 0, "timeouts": 0, "seconds": 0.0}


def available() -> bool:
    try:
        import jedi  # noqa: F401
    except ImportError:
        return False
    return True


def project(root: str, env: PythonEnv | None, extra=(), smart=True):
    """One jedi Project per (root, environment, extra paths): it keeps jedi's caches warm (the
    language server keeps it for the workspace's life)."""
    import jedi

    key = (root, env.key if env is not None else "", tuple(extra), smart)
    with _lock:
        p = _projects.get(key)
        if p is None:
            sys_path = list(extra) + ([root] if smart else []) + (list(env.site_dirs) if env is not None else [])
            p = jedi.Project(root, sys_path=sys_path, smart_sys_path=smart)
            _projects[key] = p
        return p


def _environment():
    """jedi's environment for every question: this process, without importing anything new but
    the standard library's compiled modules (from this interpreter's own folders)."""
    with _lock:
        if _environments:
            return _environments[0]
        from jedi.api.environment import InterpreterEnvironment
        from jedi.inference.compiled.subprocess import InferenceStateSameProcess

        stdlib = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(sys.builtin_module_names)

        class ReadOnlyAccess(InferenceStateSameProcess):
            def load_module(self, dotted_name, sys_path=None, **kwargs):
                if dotted_name not in sys.modules and dotted_name.split(".")[0] not in stdlib:
                    return None  # a compiled module of the analysed environment: its code would run
                own = [p for p in sys.path if is_stdlib_path(p)]
                return InferenceStateSameProcess.__getattr__(self, "load_module")(
                    dotted_name=dotted_name, sys_path=own, **kwargs
                )

        class ReadOnlyEnvironment(InterpreterEnvironment):
            def get_inference_state_subprocess(self, inference_state):
                return ReadOnlyAccess(inference_state)

        _environments.append(ReadOnlyEnvironment())
        return _environments[0]


def _run(fn, timeout: float):
    """fn() in a daemon thread; None when it does not answer in time (it is left to finish alone)."""
    import time

    box: dict = {}

    def target():
        # jedi is not thread-safe: a question left running by an earlier timeout finishes first
        with _busy:
            try:
                box["value"] = fn()
            except Exception as exc:  # jedi raises on code it cannot parse or infer; that is "no answer"
                box["error"] = exc

    t0 = time.perf_counter()
    th = threading.Thread(target=target, name="gradaudit-jedi", daemon=True)
    th.start()
    th.join(timeout)
    stats["calls"] += 1
    stats["seconds"] += time.perf_counter() - t0
    stats["last_timed_out"] = th.is_alive()
    if th.is_alive():
        stats["timeouts"] += 1
        return None
    return box.get("value")


def define(env: PythonEnv, qual: str, timeout: float = TIMEOUT) -> Definition | None:
    """Where an installed library's dotted name is defined, by jedi's `goto`."""
    if not available():
        return None
    parts = qual.split(".")
    code = f"import {parts[0]}\n{qual}"
    # a library name: only the environment's folders are searched, not the working folder
    root = env.site_dirs[0] if env.site_dirs else os.getcwd()

    def ask():
        import jedi

        script = jedi.Script(
            code,
            path=os.path.join(root, "<gradaudit>.py"),
            project=project(root, env, smart=False),
            environment=_environment(),
        )
        names = script.goto(2, len(qual), follow_imports=True)
        for n in names:
            path = n.module_path
            if path is None or n.type not in ("class", "function", "module", "instance", "statement"):
                continue
            kind = {"class": "class", "function": "function", "module": "module"}.get(n.type, "value")
            return Definition(n.full_name or qual, str(path), n.line or 1, kind)
        return None

    return _run(ask, timeout)


def import_target(
    path: str, source: str, line: int, column: int, root: str, env: PythonEnv | None, extra=(), timeout: float = TIMEOUT
) -> str | None:
    """The file an import in a project file refers to (the name at line/column), by jedi."""
    if not available():
        return None

    def ask():
        import jedi

        script = jedi.Script(source, path=path, project=project(root, env, extra), environment=_environment())
        for n in script.goto(line, column, follow_imports=True):
            if n.module_path is not None:
                return str(n.module_path)
        return None

    return _run(ask, timeout)
