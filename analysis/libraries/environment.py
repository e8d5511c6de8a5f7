"""The Python environment whose installed libraries are analysed: the user's, not gradaudit's.

Which one, in order: an interpreter given explicitly (`--python`, `[tool.gradaudit] python`, the
editor's `interpreter`), else an active virtualenv (`VIRTUAL_ENV`) or conda env (`CONDA_PREFIX`),
else the interpreter running gradaudit. Its site-packages folders are found from the files on
disk (pyvenv.cfg, lib/pythonX.Y/site-packages, .pth files); nothing of the environment is run.
"""

from __future__ import annotations

import glob
import os
import sys
from dataclasses import dataclass

_SITE_NAMES = ("site-packages", "dist-packages")


@dataclass(frozen=True)
class PythonEnv:
    interpreter: str  # what was given or found ('' when only sys.path is known)
    prefix: str
    site_dirs: tuple  # site-packages folders and the paths their .pth files add
    how: str  # 'explicit' | 'virtualenv' | 'conda' | 'running'

    @property
    def key(self) -> str:
        """Identifies the environment in cache keys."""
        return "|".join(self.site_dirs)

    def is_library_path(self, path: str) -> bool:
        ap = os.path.abspath(path)
        return any(ap.startswith(d + os.sep) for d in self.site_dirs if os.path.basename(d) in _SITE_NAMES)


_cache: dict = {}


def find_env(python: str | None = None, environ=None) -> PythonEnv:
    environ = os.environ if environ is None else environ
    if python:
        key = ("explicit", python)
        how = "explicit"
        prefix = _prefix_of(python)
    elif environ.get("VIRTUAL_ENV"):
        prefix = environ["VIRTUAL_ENV"]
        key, how = ("virtualenv", prefix), "virtualenv"
    elif environ.get("CONDA_PREFIX"):
        prefix = environ["CONDA_PREFIX"]
        key, how = ("conda", prefix), "conda"
    else:
        key, how, prefix = ("running", sys.prefix), "running", sys.prefix
    hit = _cache.get(key)
    if hit is not None:
        return hit
    if how == "running":
        # the running interpreter's installed packages, not its sys.path: that starts with the
        # script's folder or the working folder, which is the user's project (or all of /tmp)
        dirs = site_dirs_of(sys.prefix)
        try:
            import site

            user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
        except AttributeError:
            user = None
        if user and os.path.isdir(user):
            dirs = dirs + [os.path.abspath(user)] + _pth_paths(user)
        env = PythonEnv(sys.executable, sys.prefix, tuple(_dedupe(dirs)), how)
    else:
        env = PythonEnv(python or prefix, prefix, tuple(site_dirs_of(prefix)), how)
    _cache[key] = env
    return env


def _prefix_of(python: str) -> str:
    p = os.path.abspath(os.path.expanduser(python))
    if os.path.isdir(p):
        return p
    d = os.path.dirname(p)
    if os.path.basename(d).lower() in ("bin", "scripts"):
        return os.path.dirname(d)
    return d  # a conda env on Windows keeps python.exe at its root


def site_dirs_of(prefix: str) -> list:
    found = []
    for pattern in (
        "lib/python3*/site-packages",
        "lib64/python3*/site-packages",
        "Lib/site-packages",
        "lib/site-packages",
        "lib/python3*/dist-packages",
    ):
        found.extend(sorted(glob.glob(os.path.join(prefix, pattern)), reverse=True))
    cfg = os.path.join(prefix, "pyvenv.cfg")
    if os.path.isfile(cfg) and _system_site(cfg):
        home = _cfg_value(cfg, "home")
        if home:
            found.extend(site_dirs_of(os.path.dirname(home.rstrip("/\\"))))
    out = []
    for d in found:
        out.append(os.path.abspath(d))
        out.extend(_pth_paths(d))
    return _dedupe(out)


def _system_site(cfg: str) -> bool:
    return (_cfg_value(cfg, "include-system-site-packages") or "").lower() == "true"


def _cfg_value(cfg: str, name: str) -> str | None:
    try:
        with open(cfg, encoding="utf-8") as fh:
            for line in fh:
                k, sep, v = line.partition("=")
                if sep and k.strip().lower() == name:
                    return v.strip()
    except OSError:
        return None
    return None


def _pth_paths(site: str) -> list:
    """Folders that .pth files add (editable installs); `import` lines are code and are skipped."""
    out = []
    try:
        names = sorted(n for n in os.listdir(site) if n.endswith(".pth"))
    except OSError:
        return out
    for n in names:
        try:
            with open(os.path.join(site, n), encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    line = line.strip()
                    if not line or line.startswith(("#", "import ", "import\t")):
                        continue
                    p = line if os.path.isabs(line) else os.path.join(site, line)
                    if os.path.isdir(p):
                        out.append(os.path.abspath(p))
        except OSError:
            continue
    return out


def _dedupe(items) -> list:
    seen, out = set(), []
    for i in items:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out
