"""Summaries of library code kept on disk between runs: computed once per file content and
gradaudit version, so that the second check of a script pays nothing for the library.

Entries are small JSON files in the user's cache folder (`GRADAUDIT_CACHE_DIR` overrides it).
Each entry lists the files it was computed from with their size and modification time, and is
ignored when one of them changed. Writes go to a temporary file that is then renamed over the
entry, so concurrent runs never read half an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

from .. import __version__

_FORMAT = 1


def default_dir() -> str:
    env = os.environ.get("GRADAUDIT_CACHE_DIR")
    if env:
        return env
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
        return os.path.join(base, "gradaudit", "Cache")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/gradaudit")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "gradaudit")


def file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read())
    return h.hexdigest()


def stamp(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [path, st.st_size, st.st_mtime_ns]


class SummaryCache:
    """get/put of JSON-able payloads by key; `enabled=False` (--no-cache) keeps memory only."""

    def __init__(self, folder: str | None = None, enabled: bool = True):
        self.folder = os.path.join(folder or default_dir(), f"v{__version__}-{_FORMAT}")
        self.enabled = enabled
        self._mem: dict = {}  # key -> (value, deps)
        self.hits = 0
        self.misses = 0
        # the files the entries read or written since the last reset were computed from: what a
        # result built on them depends on (the result cache, check/result_cache.py, stamps them)
        self.touched: set = set()

    def _path(self, key: str) -> str:
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]
        return os.path.join(self.folder, digest[:2], digest + ".json")

    def get(self, key: str):
        hit = self._mem.get(key)
        if hit is not None:
            self.touched.update(hit[1])
            return hit[0]
        if not self.enabled:
            self.misses += 1
            return None
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            self.misses += 1
            return None
        if entry.get("key") != key or not _fresh(entry.get("deps", ())):
            self.misses += 1
            return None
        self.hits += 1
        paths = tuple(d[0] for d in entry.get("deps", ()))
        self._mem[key] = (entry.get("value"), paths)
        self.touched.update(paths)
        return entry.get("value")

    def put(self, key: str, value, deps=()):
        paths = tuple(sorted(set(deps)))
        self._mem[key] = (value, paths)
        self.touched.update(paths)
        if not self.enabled:
            return
        path = self._path(key)
        entry = {"key": key, "deps": [d for d in (stamp(p) for p in paths) if d], "value": value}
        try:
            import tempfile

            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(entry, fh, separators=(",", ":"))
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            pass  # a read-only or full disk only costs the next run the time to recompute


def _fresh(deps) -> bool:
    for d in deps:
        try:
            path, size, mtime = d
        except (TypeError, ValueError):
            return False
        cur = stamp(path)
        if cur is None or cur[1] != size or cur[2] != mtime:
            return False
    return True
