"""The Python environment whose installed libraries are analysed: the user's, not gradaudit's.

Which one, in order, the way editors pick a project's interpreter:

1. an interpreter named explicitly: `--python`, `[tool.gradaudit] python`, the editor's
   `interpreter` setting (one that does not exist or is no environment is an `EnvError`);
2. the active virtualenv (`VIRTUAL_ENV`), unless it is the one gradaudit itself runs in;
3. a `.venv` or `venv` of the project: in the checked file's folder or a folder above it, up to
   the project's root (the workspace folder, else the nearest folder with a pyproject.toml,
   setup.py, setup.cfg or .git);
4. the active conda environment (`CONDA_PREFIX`);
5. the environment gradaudit runs in.

An environment is read from its files only (pyvenv.cfg, lib/pythonX.Y/site-packages, .pth files):
its interpreter is never started and nothing of it is imported.
"""

from __future__ import annotations

import ast
import os
import sys

from ..source.prebuilt import dataclass
from ..source.program import PROJECT_MARKERS

_SITE_NAMES = ("site-packages", "dist-packages")
VENV_NAMES = (".venv", "venv")

# why an environment was chosen, as the output says it
_WHY = {
    "explicit": "named by {origin}",
    "virtualenv": "the active virtualenv, VIRTUAL_ENV",
    "project": "the project's {name}",
    "conda": "the active conda environment, CONDA_PREFIX",
    "running": "the environment gradaudit runs in",
}


class EnvError(ValueError):
    """An interpreter or environment named explicitly that cannot be read; the message says why."""


@dataclass(frozen=True)
class PythonEnv:
    interpreter: str  # what was given or found ('' when only the folder is known)
    prefix: str
    site_dirs: tuple  # site-packages folders and the paths their .pth files add
    how: str  # 'explicit' | 'virtualenv' | 'project' | 'conda' | 'running'
    origin: str = ""  # for 'explicit': what named it ('--python', 'python in /p/pyproject.toml')

    @property
    def key(self) -> str:
        """Identifies the environment in cache keys."""
        return "|".join(self.site_dirs)

    @property
    def why(self) -> str:
        """Why this environment was read: 'the project's .venv', 'named by --python', ..."""
        return _WHY[self.how].format(origin=self.origin or "the settings", name=os.path.basename(self.prefix))

    def is_library_path(self, path: str) -> bool:
        ap = os.path.abspath(path)
        return any(ap.startswith(d + os.sep) for d in self.site_dirs if os.path.basename(d) in _SITE_NAMES)

    def provides(self, top: str) -> bool:
        """Whether a top-level module or package of that name is installed here (read off the
        folders: a package, a module, a stub, a compiled module, an editable install's mapping)."""
        return any(top in _top_names(d) for d in self.site_dirs) or any(
            top in _editable_names(d) for d in self.site_dirs if os.path.basename(d) in _SITE_NAMES
        )


_cache: dict = {}


def find_env(
    python: str | None = None, environ=None, start: str | None = None, root: str | None = None, origin: str = ""
) -> PythonEnv:
    """The environment to read. `python` names one explicitly (`origin` says by what, for the
    output: '--python' by default); else it is discovered from `environ` and the folders from
    `start` (the checked file's folder) up to `root` (the project's root, when known)."""
    environ = os.environ if environ is None else environ
    if python:
        prefix, interpreter = explicit_prefix(python)
        return _env(prefix, "explicit", interpreter, origin or "--python")
    venv = environ.get("VIRTUAL_ENV")
    if venv and not _is_running(venv):
        env = _env(os.path.abspath(venv), "virtualenv")
        if env.site_dirs:
            return env
    if start:
        found = project_venv(start, root)
        if found is not None and not _is_running(found):
            return _env(found, "project")
    conda = environ.get("CONDA_PREFIX")
    if conda and not _is_running(conda):
        env = _env(os.path.abspath(conda), "conda")
        if env.site_dirs:
            return env
    return running_env()


def explicit_prefix(python: str) -> tuple[str, str]:
    """(prefix, interpreter) of an interpreter or environment folder named by the user; EnvError
    when it does not exist or holds no site-packages folder. Nothing is run: a command name
    (`python3`) is looked up on PATH, a path is taken as it is (a venv's `bin/python` link is
    not followed to the interpreter it points to)."""
    p = os.path.expanduser(python)
    if os.sep not in p and (os.altsep is None or os.altsep not in p) and not os.path.lexists(p):
        import shutil  # only for an interpreter named by command name (shutil imports compressors)

        p = shutil.which(p) or p
    p = os.path.abspath(p)
    if not os.path.lexists(p):
        raise EnvError(f"{python}: no such file or folder (give a Python interpreter or the folder of an environment)")
    prefix = _prefix_of(p)
    if not site_dirs_of(prefix):
        raise EnvError(
            f"{python}: not a Python environment (no site-packages folder under {prefix}; give a Python "
            "interpreter or the folder of an environment)"
        )
    return prefix, p if not os.path.isdir(p) else _interpreter_in(p)


def check_python(python: str) -> str | None:
    """Why an interpreter setting cannot be used, or None when it can."""
    try:
        explicit_prefix(python)
    except EnvError as exc:
        return str(exc)
    return None


def project_venv(start: str, root: str | None = None) -> str | None:
    """A `.venv` or `venv` (a folder with a pyvenv.cfg) in `start` or a folder above it, up to
    `root` when `start` is inside it, else up to the nearest folder with a project marker."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    stop = os.path.abspath(root) if root else None
    if stop is not None and not (d == stop or d.startswith(stop.rstrip(os.sep) + os.sep)):
        stop = None
    for _ in range(64):
        for name in VENV_NAMES:
            if os.path.isfile(os.path.join(d, name, "pyvenv.cfg")):
                return os.path.join(d, name)
        if d == stop or (stop is None and any(os.path.exists(os.path.join(d, m)) for m in PROJECT_MARKERS)):
            return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    return None


def running_env() -> PythonEnv:
    hit = _cache.get(("running", sys.prefix))
    if hit is not None:
        return hit
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
    env = PythonEnv(sys.executable, sys.prefix, tuple(_dedupe(dirs)), "running")
    _cache[("running", sys.prefix)] = env
    return env


def _env(prefix: str, how: str, interpreter: str = "", origin: str = "") -> PythonEnv:
    key = (how, prefix, interpreter, origin)
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = PythonEnv(
            interpreter or _interpreter_in(prefix), prefix, tuple(site_dirs_of(prefix)), how, origin
        )
    return hit


def _is_running(prefix: str) -> bool:
    """The environment gradaudit itself runs in (its libraries are read as 'running')."""
    return os.path.realpath(prefix) == os.path.realpath(sys.prefix)


def _interpreter_in(prefix: str) -> str:
    for rel in ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe"):
        p = os.path.join(prefix, rel)
        if os.path.lexists(p):
            return p
    return ""


def _prefix_of(p: str) -> str:
    if os.path.isdir(p):
        return p
    d = os.path.dirname(p)
    if os.path.basename(d).lower() in ("bin", "scripts"):
        return os.path.dirname(d)
    return d  # a conda env on Windows keeps python.exe at its root


def site_dirs_of(prefix: str) -> list:
    found = []
    for lib, versioned, leaf in (
        ("lib", True, "site-packages"),
        ("lib64", True, "site-packages"),
        ("Lib", False, "site-packages"),
        ("lib", False, "site-packages"),
        ("lib", True, "dist-packages"),
    ):
        found.extend(sorted(_matching(prefix, lib, versioned, leaf), reverse=True))
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


def _matching(prefix: str, lib: str, versioned: bool, leaf: str) -> list:
    """The folders `prefix/lib/python3*/leaf` (`versioned`) or `prefix/lib/leaf` that exist: what
    glob would list, without glob (its pattern compilation costs start-up time)."""
    base = os.path.join(prefix, lib)
    if not versioned:
        path = os.path.join(base, leaf)
        return [path] if os.path.isdir(path) else []
    try:
        names = os.listdir(base)
    except OSError:
        return []
    out = []
    for name in names:
        if name.startswith("python3") and not name.startswith("."):
            path = os.path.join(base, name, leaf)
            if os.path.isdir(path):
                out.append(path)
    return out


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
    out: list[str] = []
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


_listing: dict = {}  # folder -> (mtime, top-level names importable from it)
_finders: dict = {}  # site folder -> (mtime, its editable installs' finder files)
_editable: dict = {}  # finder file -> (mtime, names)


def _top_names(folder: str) -> frozenset:
    """The top-level modules and packages a site folder holds, listed once per change of the folder
    (installing or removing a package changes its mtime): `provides` is asked per import, per
    analysis, on every edit in the editor."""
    try:
        mtime = os.stat(folder).st_mtime_ns
    except OSError:
        return frozenset()
    hit = _listing.get(folder)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    names = set()
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                stem, dot, ext = e.name.partition(".")
                if not dot:
                    if e.is_dir():
                        names.add(stem)  # a package, or a namespace package's part
                elif ext in ("py", "pyi") or ext.endswith(("so", "pyd")):
                    names.add(stem)  # a module, a stub, a compiled module (name.cpython-311-...so)
    except OSError:
        pass
    out = frozenset(names)
    _listing[folder] = (mtime, out)
    return out


def _editable_names(site: str) -> set:
    """Top-level names that setuptools' editable installs map to their source folders: the
    `MAPPING = {...}` literal of each `__editable___*_finder.py`, read, never imported."""
    out: set = set()
    for path in _finder_files(site):
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            continue
        hit = _editable.get(path)
        if hit is None or hit[0] != mtime:
            hit = _editable[path] = (mtime, _mapped_names(path))
        out |= hit[1]
    return out


def _finder_files(site: str) -> tuple:
    """The `__editable___*_finder.py` files of a site folder, listed again only when the folder
    changed (this is asked per import, per analysis)."""
    try:
        mtime = os.stat(site).st_mtime_ns
    except OSError:
        return ()
    hit = _finders.get(site)
    if hit is None or hit[0] != mtime:
        try:
            names = sorted(os.listdir(site))
        except OSError:
            names = []
        files = tuple(
            os.path.join(site, n) for n in names if n.startswith("__editable___") and n.endswith("_finder.py")
        )
        hit = _finders[site] = (mtime, files)
    return hit[1]


def _mapped_names(path: str) -> set:
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            continue
        target = (
            node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if len(node.targets) == 1 else None)
        )
        if isinstance(target, ast.Name) and target.id == "MAPPING" and node.value is not None:
            try:
                mapping = ast.literal_eval(node.value)
            except ValueError:
                return set()
            return {str(k).split(".")[0] for k in mapping} if isinstance(mapping, dict) else set()
    return set()


def is_stdlib_path(path: str) -> bool:
    """A folder of the running interpreter's standard library (not its site-packages)."""
    ap = os.path.abspath(path)
    if any(part in _SITE_NAMES for part in ap.split(os.sep)):
        return False
    base = os.path.abspath(sys.base_prefix)
    return ap.startswith(base + os.sep) or ap == base or ap.endswith(".zip")


def _dedupe(items) -> list:
    seen, out = set(), []
    for i in items:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out
