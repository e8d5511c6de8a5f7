"""The engine's layers, held: which package may import which, and no import cycle anywhere.

Every import counts, at module level or inside a function (an import inside a function that
closes a cycle is still a cycle). Layers, bottom to top (see CONTRIBUTING.md): a module imports
its own layer and the layers below it, never one above.
"""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = {"analysis": "gradaudit.analysis", "server": "gradaudit.server"}

LAYERS = [
    "source",  # reading and parsing files, import resolution, positions
    "ops",  # torch facts: generated op tables, declared hand facts
    "interp",  # the abstract interpreter core: Python over abstract values
    "torch",  # torch semantics, as handlers of the interpreter's tables
    "libraries",  # environments, installed libraries' models, frameworks
    "model",  # the training-step model built from a run's trace
    "rules",  # one module per rule
    "check",  # configuration, discovery, the analyzer, the run over many files
    "output",  # check's output formats
    "report",  # the written audit, editor views (graph, lens, hover), probe plans
    "server",  # the language server (a package of its own)
    "app",  # the command line
]


def _modules() -> dict[str, str]:
    out = {}
    for top, dotted in PACKAGES.items():
        base = os.path.join(ROOT, top)
        for dirpath, _, files in os.walk(base):
            if "__pycache__" in dirpath:
                continue
            for f in files:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, f), base)[:-3].replace(os.sep, ".")
                    name = dotted if rel == "__init__" else f"{dotted}.{rel.removesuffix('.__init__')}"
                    out[name] = os.path.join(dirpath, f)
    return out


MODULES = _modules()


def _imports(name: str, path: str) -> set[str]:
    """The project modules `name` imports, anywhere in it."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    is_pkg = path.endswith("__init__.py")
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = [f"{target}.{a.name}" for a in node.names]
            found.update(s for s in subs if s in MODULES)
            if any(s not in MODULES for s in subs) and target in MODULES:
                found.add(target)  # names from the module itself
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
    found.discard(name)
    return found


EDGES = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(name: str) -> str:
    parts = name.split(".")
    if parts[1] == "server":
        return "server"
    return parts[2] if len(parts) > 2 else "<version>"


def test_every_engine_package_has_a_layer():
    packages = {_layer(m) for m in MODULES} - {"<version>", "probe"}
    assert packages <= set(LAYERS), sorted(packages - set(LAYERS))


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_only_downward(layer):
    rank = {name: i for i, name in enumerate(LAYERS)}
    wrong = []
    for src, targets in EDGES.items():
        if _layer(src) != layer:
            continue
        for dst in targets:
            other = _layer(dst)
            if other == "<version>":
                continue  # gradaudit.analysis itself holds only __version__
            if other == "probe" or rank[other] > rank[layer]:
                wrong.append(f"{src} -> {dst}")
    assert not wrong, "imports of a higher layer:\n" + "\n".join(sorted(wrong))


# the one import out of the probe: running a notebook reads it as the analysis did (its IPython
# lines neutralised the same way), inside the notebook branch only, so that a script's probe
# still loads beside torch alone (an emitted test falls back to the probe package's own folder)
PROBE_READS_NOTEBOOKS = ("gradaudit.analysis.probe.script", "gradaudit.analysis.source.notebook")


def test_the_probe_package_stands_alone():
    # it is installed as gradaudit.probe and imported by users' tests, beside torch only
    wrong = [
        f"{src} -> {dst}"
        for src, targets in EDGES.items()
        if _layer(src) == "probe"
        for dst in targets
        if _layer(dst) != "probe" and (src, dst) != PROBE_READS_NOTEBOOKS
    ]
    assert not wrong, wrong


def test_no_import_cycle():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    counter = [0]

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in EDGES.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_the_interpreter_core_knows_no_torch_semantics():
    # the core reaches torch, libraries and frameworks only through the semantics tables it is given
    for name in MODULES:
        if _layer(name) == "interp":
            assert not {_layer(d) for d in EDGES[name]} - {"interp", "source", "ops", "<version>"}, name
