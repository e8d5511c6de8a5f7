"""What `gradaudit check` found in each file, kept between runs (like ruff's cache).

A second check of an unchanged project reads its findings back instead of analysing it again.
An entry is used only when all of these are what they were:

- the file's content (its size and modification time, else its sha256);
- the content of every project file its analysis read (the modules it imports, and theirs), and
  of the library sources the library models were built from;
- where each of its imports led, or that it led nowhere (a module added since may be found now);
- the configuration, the folders given, the working folder (paths are shown relative to it);
- the environment its libraries were read from (its site folders, which installing or removing a
  package changes);
- gradaudit itself: its version and its engine's source files.

An analysis stopped by the time budget, or that failed, is not kept. One file per project (the
configuration's root) in the user's cache folder (`GRADAUDIT_CACHE_DIR`), next to the library
summaries; written whole to a temporary file and renamed, so that concurrent runs never read half
of one. `--no-cache` neither reads nor writes it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from typing import Any

from .. import __version__

FORMAT = 2  # 2: the functions an analysis ran are kept with its result
_ENGINE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the analysis package


def engine_stamp() -> str:
    """The engine's version and source files (names, sizes, modification times): an editable install
    changed in place is another engine."""
    h = hashlib.sha256(f"{__version__}|{FORMAT}".encode())
    for dirpath, dirs, files in os.walk(_ENGINE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(path, _ENGINE)}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def env_text(env) -> str:
    """What of an environment a check's result depends on: which it is, why (the output says), and
    the state of its site folders."""
    return f"{env.key}\n{env.how}\n{env.interpreter}\n{env.why}\n{env_stamp(env)}"


def env_stamp(env) -> str:
    """An environment's site folders and their modification times (a package installed or removed)."""
    parts = []
    for d in env.site_dirs:
        try:
            parts.append(f"{d}|{os.stat(d).st_mtime_ns}")
        except OSError:
            parts.append(f"{d}|-")
    return "\n".join(parts)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Files:
    """Stamps of files, each taken once per run: (size, mtime) and, when asked, the sha256."""

    def __init__(self):
        self._stat: dict = {}
        self._sha: dict = {}

    def stat(self, path: str):
        if path not in self._stat:
            try:
                st = os.stat(path)
                self._stat[path] = (st.st_size, st.st_mtime_ns)
            except OSError:
                self._stat[path] = None
        return self._stat[path]

    def sha(self, path: str) -> str | None:
        if path not in self._sha:
            try:
                with open(path, "rb") as fh:
                    self._sha[path] = _digest(fh.read())
            except OSError:
                self._sha[path] = None
        return self._sha[path]

    def same(self, dep) -> bool:
        """`dep` is (path, size, mtime, sha256): the file still holds that content."""
        path, size, mtime, sha = dep
        st = self.stat(path)
        if st is None:
            return False
        if st == (size, mtime):
            return True
        return self.sha(path) == sha


class ResultCache:
    """The kept results of one project, for one configuration and working folder."""

    def __init__(self, config, roots, python=None, folder: str | None = None):
        from ..libraries.summary_cache import default_dir

        self.folder = os.path.join(folder or default_dir(), f"results-v{FORMAT}")
        self.python = python
        self.roots = list(roots)
        space = repr((os.getcwd(), tuple(roots), config, python))
        self.path = os.path.join(self.folder, _digest(space.encode())[:40] + ".pickle")
        self.engine = engine_stamp()
        self.entries: dict = {}
        self.new: dict = {}
        self.supersedes: dict | None = None  # the rules' (overlaps.py), kept with the results
        self.files = _Files()
        self._envs: dict = {}
        self._program: Any = None
        self._resolved: dict = {}
        self.hits = 0
        self.misses = 0
        try:
            with open(self.path, "rb") as fh:
                data = pickle.load(fh)
            if data.get("engine") == self.engine:
                self.entries = data.get("entries", {})
                self.supersedes = data.get("supersedes")
        except Exception:  # absent, unreadable, written by another version: start empty
            self.entries = {}
        self._read_supersedes = self.supersedes

    # ------------------------------------------------------------ reading

    def env_of(self, path: str, config) -> str:
        """The stamp of the environment the file's libraries are read from (environment.py)."""
        from ..libraries.environment import EnvError, find_env

        start = os.path.dirname(os.path.abspath(path))
        if start not in self._envs:
            # as the Analyzer finds it (engine.py): --python, else the configuration's, else discovery
            origin = "--python" if self.python else config.python_origin
            try:
                env = find_env(self.python or config.python or None, start=start, origin=origin)
                self._envs[start] = env_text(env)
            except EnvError as exc:
                self._envs[start] = f"error: {exc}"
        return self._envs[start]

    def lookup(self, path: str, config):
        """The kept result of `path` when nothing it depends on changed, else None."""
        e = self.entries.get(path)
        if e is None:
            self.misses += 1
            return None
        ap = os.path.abspath(path)
        ok = (
            self.files.same((ap, *e["file"]))
            and e["env"] == self.env_of(path, config)
            and all(self.files.same(d) for d in e["deps"])
            and all(self._still(k, r) for k, r in e["imports"])
        )
        if not ok:
            self.misses += 1
            return None
        self.hits += 1
        return e["result"]

    def _still(self, key, result) -> bool:
        """An import recorded by the analysis still leads where it did."""
        if key not in self._resolved:
            if self._program is None:
                from ..source.program import Program

                self._program = Program(self.roots)
            self._resolved[key] = self._program.resolve_again(key)
        return self._resolved[key] == result

    # ------------------------------------------------------------ writing

    def save(self):
        """Write the entries of this run (and the kept ones still valid) back, if anything changed."""
        if not self.new and self.supersedes == self._read_supersedes:
            return
        merged = dict(self.entries)
        merged.update(self.new)
        # the files most analyses read (a project's common modules) are listed by each: one object
        # each, which pickle writes once
        shared: dict = {}
        for e in merged.values():
            e["deps"] = [shared.setdefault(d, d) for d in e["deps"]]
            e["imports"] = [shared.setdefault(i, i) for i in e["imports"]]
        data = {"engine": self.engine, "entries": merged, "supersedes": self.supersedes}
        try:
            import tempfile

            os.makedirs(self.folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".pickle")
            try:
                with os.fdopen(fd, "wb") as fh:
                    pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            pass  # a read-only or full disk only costs the next run the time to analyse again


def file_stamp(path: str):
    """(size, mtime, sha256) of a file about to be analysed, or None."""
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            return (st.st_size, st.st_mtime_ns, _digest(fh.read()))
    except OSError:
        return None


_SHAS: dict = {}  # id(SourceFile) -> (the SourceFile, the sha256 of its text): shared by a run's entries


def _sha_of(sf) -> str:
    hit = _SHAS.get(id(sf))
    if hit is None or hit[0] is not sf:
        hit = _SHAS[id(sf)] = (sf, _digest(sf.source.encode("utf-8", "surrogatepass")))
    return hit[1]


def entry(path: str, result, kept, problems, program, env, source_stamp) -> dict | None:
    """What to keep of one file's analysis (`kept`: what the check keeps of it), or None when it
    must not be kept: stopped by the time budget, or the file changed while it was analysed."""
    if result.timed_out or source_stamp is None:
        return None
    files = _Files()
    ap = os.path.abspath(path)
    if files.stat(ap) != source_stamp[:2]:
        return None
    read = {sf.abspath: sf for sf in result.files.values() if getattr(sf, "abspath", None)}
    deps = []
    for abspath, sf in sorted(read.items()):
        if abspath == ap:
            continue
        st = files.stat(abspath)
        if st is None:
            return None
        deps.append((abspath, st[0], st[1], _sha_of(sf)))
    for other in sorted(getattr(program, "_texts", {})):
        if other not in read and other != ap:
            st, sha = files.stat(other), files.sha(other)
            if st is None or sha is None:
                return None
            deps.append((other, st[0], st[1], sha))
    libs = program._libraries
    touched = libs.cache.touched if libs is not None and getattr(libs, "cache", None) is not None else ()
    for lib in sorted(touched):
        st, sha = files.stat(lib), files.sha(lib)
        if st is None or sha is None:
            continue  # a file the library summary lists but that is gone: its summary is stale too
        deps.append((lib, st[0], st[1], sha))
    imports = program.resolutions(set(read) | {ap})
    return {
        "file": source_stamp,
        "env": env,
        "deps": deps,
        "imports": imports,
        "result": (
            kept,
            problems,
            result.error is None,
            result.notebook,
            result.libraries,
            result.coverage,
            result.model.ran if result.model is not None else frozenset(),
        ),
    }
