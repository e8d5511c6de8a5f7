"""The project files whose training steps run a given file's code: its drivers.

`gradaudit check losses.py` is asked about a loss module whose training loop lives in `train.py`.
Alone, the module's forwards and loss functions only run on made-up inputs (interpreter.run_units);
what the loop does with them (which parameters reach the loss, what is detached, what is stepped)
is in the driver. So a check of single files also analyses the project files that import them,
directly or through a package or an importer without a loop of its own, and that have training
code or are scripts (`if __name__ == "__main__"`, a loop at the top level), and keeps what those
analyses find in the files asked about.

Files are chosen by their text (an import naming the module or its package, and a training word),
read once; the analyses themselves follow the imports exactly, so a file chosen in excess costs
time, never a finding elsewhere.
"""

from __future__ import annotations

import os
import re

from ..interp.frames import DRIVES_TRAINING, pytest_module
from ..source.program import PROJECT_MARKERS, ParseError, read_text

MAX_DRIVERS = 4  # analyses added per checked file, the nearest importers first
MAX_FILES = 5_000  # a project larger than this is not searched (a check of one file stays fast)
MAX_ENTRIES = 100_000  # files and folders of a working folder with no project marker, at most
MAX_ALONE = 16  # files given by name beyond this (a pre-commit run over a large change) get no drivers
LEVELS = 3  # importers of importers followed, when an importer has no training code itself
# a training step's calls (not `def backward(ctx, ...)` of a custom autograd Function)
STEP_WORDS = re.compile(r"\.backward\(|autograd\.grad\(|\.step\(|zero_grad\(")
# a script: a `__main__` guard, or a loop at its top level
MAIN = re.compile(r"""^if[ \t]+__name__[ \t]*==[ \t]*['"]__main__['"]|^(?:for|while|async[ \t]+for)\b""", re.MULTILINE)


def project_root(path: str, cwd: str | None = None) -> str | None:
    """The folder of the project holding `path`: the nearest with a marker (pyproject.toml, setup.py,
    setup.cfg, .git), else the working folder when `path` is inside it."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if any(os.path.exists(os.path.join(d, m)) for m in PROJECT_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    cwd = os.path.abspath(cwd or os.getcwd())
    if os.path.abspath(path).startswith(cwd + os.sep) and _small(cwd):
        return cwd
    return None


def project_files(root: str, config) -> list[str]:
    """The Python files of the project at `root` a check would see (discovery.py, `config`'s
    excludes), none when there are more than MAX_FILES. A checkout inside it (a folder with its own
    `.git`, as in a working folder of several clones) is another project: its files import nothing
    of this one, and reading them made a one-file check in such a folder cost twice its analysis."""
    from .discovery import discover

    found, _ = discover([root], config, nested_repos=False)
    return found if len(found) <= MAX_FILES else []


def _small(root: str) -> bool:
    """At most MAX_FILES Python files and MAX_ENTRIES entries under `root` (hidden folders not
    counted): a working folder that is a project, not a home folder. Entries are counted as they
    are listed, so a folder of a million images (a dataset beside the scripts) ends the count early
    instead of being listed whole on every check."""
    py = seen = 0
    stack = [root]
    while stack:
        try:
            listing = os.scandir(stack.pop())
        except OSError:
            continue
        with listing:
            for e in listing:
                seen += 1
                if seen > MAX_ENTRIES:
                    return False
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if not e.name.startswith(".") and e.name not in ("node_modules", "site-packages"):
                        stack.append(e.path)
                elif e.name.endswith(".py"):
                    py += 1
                    if py > MAX_FILES:
                        return False
    return True


def _names(path: str, root: str) -> set[str]:
    """The last components by which `path` may be imported: its module name, and the names of the
    packages holding it (`from kd_losses import *` runs kd_losses/pkt.py)."""
    rel = os.path.relpath(os.path.abspath(path), root)
    parts = rel[:-3].split(os.sep) if rel.endswith(".py") else rel.split(os.sep)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return {p for p in parts if p.isidentifier() and p != "src"}


def _import_pattern(names: set[str]) -> re.Pattern:
    alt = "|".join(sorted(re.escape(n) for n in names))
    # `import a.b.c`, `from a.b import c`, `from .c import x`, `from . import c`
    return re.compile(
        rf"^[ \t]*(?:from[ \t]+[\w.]*\b(?:{alt})\b[\w.]*[ \t]+import\b|from[ \t]+[\w.]+[ \t]+import[^\n]*\b(?:{alt})\b"
        rf"|import[ \t]+[^\n]*\b(?:{alt})\b)",
        re.MULTILINE,
    )


def _shared(a: str, b: str) -> int:
    """How many leading folders two paths share: the nearer importer first."""
    return len(os.path.commonpath([os.path.dirname(a), os.path.dirname(b)]).split(os.sep))


_DEFINED = re.compile(r"^(?:class|def|async[ \t]+def)[ \t]+(\w+)|^(\w+)[ \t]*(?::[^=\n]*)?=[^=]", re.MULTILINE)


def defined_names(text: str) -> set[str]:
    """The names a module defines at its top level (classes, functions, assignments)."""
    return {a or b for a, b in _DEFINED.findall(text)} - {"_", "__all__"}


def _mentions(text: str, names: set[str]) -> int:
    """How many of `names` the text mentions (as whole words)."""
    if not names:
        return 0
    return len(set(_words_of(frozenset(names)).findall(text)))


_WORDS: dict[frozenset, re.Pattern] = {}


def _words_of(names: frozenset) -> re.Pattern:
    """One pattern for all of `names` (a file was searched once per name: most of a one-file check
    in a large project)."""
    p = _WORDS.get(names)
    if p is None:
        if len(_WORDS) > 64:
            _WORDS.clear()
        alt = "|".join(sorted((re.escape(n) for n in names), key=lambda n: (-len(n), n)))
        p = _WORDS[names] = re.compile(rf"\b(?:{alt})\b")
    return p


def find_drivers(path: str, files: list[str], texts: dict[str, str], root: str, text: str | None = None) -> list[str]:
    """The files among `files` (the project's) that import `path` (or a package holding it),
    directly or through importers with no training code, and that have training code themselves;
    nearest first, at most MAX_DRIVERS. `texts` caches the files' texts between calls; `text` is
    `path`'s own (an editor's unsaved version), else it is read."""
    ap = os.path.abspath(path)
    try:
        own = defined_names(text if text is not None else read_text(ap))
    except (OSError, ValueError, ParseError):
        own = set()
    found: list[str] = []
    seen = {ap}
    frontier = [ap]
    for _ in range(LEVELS):
        nxt: list[str] = []
        level: list[str] = []
        # one pattern for the level's targets (an importer of any of them), one search per file
        names: set[str] = set()
        for t in frontier:
            names |= _names(t, root)
        pattern = _import_pattern(names)
        checked_itself = frontier == [ap]
        for f in files:
            if f in seen:
                continue
            text = texts.get(f)
            if text is None:
                try:
                    text = read_text(f)
                except (OSError, ValueError, ParseError):
                    text = ""
                texts[f] = text
            # the regex scans every line; a file naming none of the targets is most of a project
            if not any(n in text for n in names) or not pattern.search(text):
                continue
            seen.add(f)
            if checked_itself and own and not _mentions(text, own):
                continue  # imports the package, never names what the module defines
            if STEP_WORDS.search(text) or MAIN.search(text) or _drives_as_test(f, text):
                # a loop of its own, or a script that hands the module to a trainer elsewhere
                # (train_student.py building CRDLoss for helper/loops.py) or calls it in a loop
                level.append(f)
            else:
                nxt.append(f)  # a trainer module, a package's __init__: its importers may train
        found += sorted(
            level, key=lambda f: (-_mentions(texts[f], own), not STEP_WORDS.search(texts[f]), -_shared(f, ap), f)
        )
        if len(found) >= MAX_DRIVERS or not nxt:
            break
        frontier = nxt
    return found[:MAX_DRIVERS]


_TEST_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+test\w*[ \t]*\(", re.MULTILINE)


def _drives_as_test(path: str, text: str) -> bool:
    """A pytest module with tests that run a training loop (`att.train_student(epochs=1)`): pytest
    runs them (interp's run_roots does too)."""
    return pytest_module(path) and bool(_TEST_DEF.search(text)) and bool(DRIVES_TRAINING.search(text))


def needs_drivers(result) -> bool:
    """The file's own run does not show how its code trains: no step, or a step reached only by
    running a function on unknown arguments (an agent's `learn()`, a `train(model, loader,
    optimizer)` whose model and optimizer its importer makes), or a step not understood. How they
    are iterated, and on what, is its importers' to say. (`result`: an engine.Result.)"""
    if result.error is not None:
        return False
    steps = result.coverage
    return not steps or any(s.entry != "script" or not s.understood for s in steps)


def driven_findings(analyzer, program, path: str, drivers: list[str]) -> tuple[list, dict, frozenset, list]:
    """What the analyses of `drivers` (by `analyzer`, an engine.Analyzer, through `program`, which
    holds `path`'s text) find in `path`, named as the check names `path`; the files those analyses
    read (display path -> SourceFile), on which the findings depend; the functions they ran
    ((file, qualified name), for `with_drivers`); and a problems.Problem for each driver whose
    analysis failed (an engine bug: what it would have found in `path` is missing, and the user hears
    so rather than reading the file's findings as complete)."""
    from ..source.prebuilt import replace
    from .problems import Problem

    target = os.path.abspath(path)
    out: list = []
    read: dict = {}
    ran: set = set()
    failed: list = []
    for d in drivers:
        try:
            rd = analyzer.analyze_file(d, program)
        except Exception as exc:
            import traceback

            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            why = f"{last} (analysing {d}, whose training steps run this file)"
            failed.append(Problem.internal(path, why, traceback.format_exc(limit=6)))
            continue
        read.update(rd.files)
        if rd.model is not None and rd.model.steps:
            # what a training step of the driver could reach: a driver that only runs a loss for a
            # demonstration (ASL's infer.py, no backward) says nothing of how it trains
            ran |= rd.model.ran
        for f in rd.findings:
            if os.path.abspath(f.span.path) == target:
                out.append(replace(f, span=replace(f.span, path=path)) if f.span.path != path else f)
    return out, read, frozenset(ran), failed


def with_drivers(own: list, driven: list, ran: frozenset) -> list:
    """The file's own findings and what its drivers find in it. A finding seen only running a
    function alone on made-up inputs (`data["unit"]`) gives way when a driver ran that function, and
    the one holding the finding (`data["within"]`), with values it knew: there it met what the
    training code gives it (a sigmoid clamped before a hand-written focal loss), and the drivers'
    findings say what follows. (`ran` holds only runs given something known: lightning-pose's
    driver handed the criterion's helper predictions it could not follow, and found nothing there.)"""
    kept = [f for f in own if not _driven(f, ran)]
    return kept + driven


def _driven(f, ran: frozenset) -> bool:
    unit = f.data.get("unit")
    if not unit:
        return False
    path = os.path.abspath(f.span.path)
    return (path, unit) in ran and (path, f.data.get("within") or unit) in ran
