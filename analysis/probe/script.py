"""Run a training script for real under a probe, for a bounded number of steps.

Training scripts train when they run: there is often nothing to import without starting the
loop. `run_script` runs the script as `python train.py` would (`runpy`, `__name__ == "__main__"`,
its folder as the working directory and first on `sys.path`), waits for the `backward()` at a
given line, attaches a probe there to the objects named (looked up in the script's live frames,
innermost first, then its globals: `model.encoder`, `self.optimizer`), and stops the script
once the watched optimizer has stepped `steps` times. What it checks afterwards:

- the script did not raise, and the backward() it waited for ran;
- the named optimizers and schedulers stay the same objects (not rebuilt every iteration);
- torch did not warn about the training step's order or about `.grad` of non-leaf tensors;
- and whatever `assert_flows` asks of the probe (gradient into modules, updates, finite, cleared).
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
import warnings
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from . import hub
from .checks import format_problems
from .recorder import Probe, StopTraining
from .records import GradFlowError, Problem

# torch warnings that mean the training step itself is wrong (not deprecations or performance)
_DEFECT_WARNINGS = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`",
    "is not a leaf Tensor is being accessed",
    "Using a target size",
    "Using a non-full backward hook",
)


@dataclass
class ScriptRun:
    path: str
    at: tuple
    probe: Probe | None = None
    error: str | None = None
    error_where: str = ""
    stopped: bool = False  # stopped after the bounded number of steps
    backward_calls: int = 0  # backward passes anywhere in the script
    missing: list = field(default_factory=list)  # names not found at the backward()
    rebuilt: list = field(default_factory=list)  # (name, iteration) bound to a new object
    warnings: list = field(default_factory=list)  # torch warnings naming a defect of the step
    sites: set = field(default_factory=set)  # (path, line) where the backward() waited for ran

    def problems(self, into=None, updates=None, finite=True, cleared=True, stable=True, bounded=True) -> list:
        out = []
        where = f"{os.path.basename(self.at[0])}:{self.at[1]}"
        if self.error is not None:
            out.append(
                Problem(
                    "error", f"the script raised {self.error}" + (f" at {self.error_where}" if self.error_where else "")
                )
            )
            return out
        if self.probe is None:
            out.append(
                Problem(
                    "not-reached",
                    f"the backward() at {where} never ran ({self.backward_calls} backward pass(es) elsewhere)",
                )
            )
            return out
        asked = set(into or ()) | set(updates or ())
        missing = [m for m in self.missing if m in asked]  # names watched only to name parameters may go
        if missing:
            out.append(
                Problem(
                    "missing",
                    f"not found in the script's frames at the backward() at {where}: "
                    + ", ".join(f"`{m}`" for m in missing),
                )
            )
        if stable and self.rebuilt:
            name, k = self.rebuilt[0]
            out.append(
                Problem(
                    "rebuilt",
                    f"`{name}` is a new object at iteration {k}: built inside the loop, its "
                    "state (moments, step count, schedule) starts over every time",
                )
            )
        for w in self.warnings:
            out.append(Problem("warning", f"torch warned: {w}"))
        present = lambda names: [n for n in names if n not in self.missing]  # noqa: E731

        def here(p, line):
            return (p, line) in self.sites

        out += self.probe.problems(
            into=present(into) if into is not None else None,
            updates=present(updates) if updates is not None else None,
            finite=finite,
            cleared=cleared,
            site=here,
            bounded=bounded,
        )
        return out

    def assert_flows(self, into=None, updates=None, finite=True, cleared=True, stable=True, bounded=True):
        """Fail naming the parameters (see Probe.assert_flows), or the script's own failure."""
        problems = self.problems(into, updates, finite, cleared, stable, bounded)
        if problems:
            raise GradFlowError(format_problems(problems))

    def report(self, file=None) -> str:
        lines = [f"gradaudit probe run of {self.path} (backward at line {self.at[1]})"]
        if self.error:
            lines.append(f"the script raised {self.error}" + (f" at {self.error_where}" if self.error_where else ""))
        if self.probe is not None:
            from .table import render

            lines.append(render(self.probe))
        elif self.error is None:
            lines.append("the backward() it waited for never ran")
        text = "\n".join(lines)
        print(text, file=file)
        return text


def _run_main(script: str):
    """Run `script` as `python script` would. A Jupyter notebook runs its code cells in document
    order, as one program: the source gradaudit analysed (IPython magics and shell lines left out,
    `%%time` and `%%capture` bodies and `%time` statements kept), compiled under the notebook's
    path so that its lines are the ones the analysis named."""
    if not script.lower().endswith(".ipynb"):
        runpy.run_path(script, run_name="__main__")
        return
    # only a notebook needs gradaudit's notebook reader: a script's probe stands alone (an emitted
    # test loads it, beside torch only, where gradaudit is not installed)
    from gradaudit.analysis.source.notebook import read_notebook

    nb, _ = read_notebook(script)
    code = compile(nb.source, script, "exec")
    # IPython's display() is a builtin of the kernel, not of Python
    namespace = {"__name__": "__main__", "__file__": script, "display": _display}
    exec(code, namespace)


def _display(*objs, **_):
    for obj in objs:
        print(repr(obj))


def _follow(obj, parts):
    for part in parts:
        if isinstance(obj, (list, tuple)) and part.lstrip("-").isdigit():
            obj = obj[int(part)]
        elif isinstance(obj, dict) and part in obj:
            obj = obj[part]
        else:
            obj = getattr(obj, part)
    return obj


_MISSING = object()
LOSS_LEAVES = "<loss leaves>"  # the name gradaudit.analysis.report.gradflow gives a hand-updated step's leaves


class _Session:
    def __init__(self, run: ScriptRun, root, at, modules, optimizers, schedulers, steps, call="", function=""):
        self.root = root
        self.at = at
        self.call, self.function = " ".join(call.split()), function
        self.modules, self.optimizers, self.schedulers = list(modules), list(optimizers), list(schedulers)
        self.steps = steps
        self.run = run
        self.hits = 0
        self.leaves: list[Any] = []  # tensors
        self.leaf_ids: set[int] = set()
        self.auto: list[str] = []
        self.armed = False
        self.bound: dict = {}

    def _frames(self):
        f: FrameType | None = sys._getframe(2)
        envs = []
        while f is not None:
            fn = os.path.realpath(f.f_code.co_filename)
            if _in_project(fn, self.root):
                envs.append(f)
            f = f.f_back
        return envs

    def _resolve(self, name, frames):
        parts = name.replace("[]", "").replace("[", ".").replace("]", "").split(".")
        found = self._lookup(parts, frames)
        # the engine names a module by where it was first registered (`model.backbone`); a helper
        # that trains it before or apart from that owner holds it under the last part (`backbone`)
        for i in range(1, len(parts)):
            if found is not _MISSING:
                break
            found = self._lookup(parts[i:], frames, modules_only=True)
        return found

    def _lookup(self, parts, frames, modules_only=False):
        head, rest = parts[0], parts[1:]
        for scope in [f.f_locals for f in frames] + [f.f_globals for f in frames]:
            if head in scope:
                try:
                    obj = _follow(scope[head], rest)
                except (AttributeError, IndexError, KeyError, TypeError):
                    continue
                if modules_only and not _is_module(obj):
                    continue
                return obj
        return _MISSING

    def _loss_leaves(self, tensors):
        # the leaf tensors of this loss's graph that require grad: what a hand-written update trains
        seen, stack = set(), [t.grad_fn for t in tensors if t.grad_fn is not None]
        for t in tensors:
            if t.grad_fn is None and t.requires_grad and id(t) not in self.leaf_ids:
                self.leaf_ids.add(id(t))
                self.leaves.append(t)
        while stack:
            fn = stack.pop()
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            var = getattr(fn, "variable", None)
            if var is not None and id(var) not in self.leaf_ids:
                self.leaf_ids.add(id(var))
                self.leaves.append(var)
            stack.extend(n for n, _ in fn.next_functions if n is not None)
        return self.leaves

    def _watch(self, probe, name, obj) -> bool:
        """Follow `obj` under `name`; False when it is not there (yet): unbound, None, not a tensor."""
        if obj is _MISSING or obj is None:
            return False
        try:
            probe.watch(obj, name)
        except TypeError:
            return False
        return True

    def _matches(self, site) -> bool:
        """The backward() waited for: at its lines, or (after an edit moved it) the same call in the
        same function."""
        path, first, last = self.at
        if os.path.realpath(site.path) != path:
            return False
        if first <= site.line <= last:
            return True
        if not self.call or site.function != self.function:
            return False
        import linecache

        return self.call in " ".join(linecache.getline(site.path, site.line).split())

    def _watch_leaves(self, probe, frames):
        for i, t in enumerate(self.leaves):
            if id(t) not in probe.params:
                probe._track(t, _name_in(t, frames) or f"leaf{i}")
        probe.objects[LOSS_LEAVES] = list(self.leaves)

    def before(self, kind, tensors, site, inputs=None):
        path, first, last = self.at
        run = self.run
        run.backward_calls += 1
        if not self._matches(site):
            return
        run.sites.add((site.path, site.line))
        self.hits += 1
        frames = self._frames()
        if LOSS_LEAVES in self.modules:
            self._loss_leaves(tensors)
            if run.probe is not None:
                self._watch_leaves(run.probe, frames)
        if run.probe is None:
            probe = Probe(stop_after=self.steps if self.optimizers else None)
            for name in self.modules:
                if name == LOSS_LEAVES:
                    self._watch_leaves(probe, frames)
                    continue
                if not self._watch(probe, name, self._resolve(name, frames)):
                    run.missing.append(name)
            for name in self.optimizers + self.schedulers:
                obj = self._resolve(name, frames)
                if obj is _MISSING or obj is None:
                    run.missing.append(name)
                    if name in self.optimizers:
                        self.auto.append(name)  # taken from the next optimizer that steps
                    continue
                self.bound[name] = obj
                if name in self.optimizers:
                    probe.watch_optimizer(obj, name)
            run.probe = probe
            probe.start()  # the hub calls its before() for this same pass
            self.armed = True
            return
        self.armed = True
        for name in self.optimizers + self.schedulers:
            obj = self._resolve(name, frames)
            old = self.bound.get(name)
            if obj is not _MISSING and obj is not None and old is not None and obj is not old:
                # a new optimizer over the parameters of the last one: built in the loop. (One optimizer
                # per ensemble member, bound to the loop variable in turn, holds other parameters.)
                if _same_params(old, obj) and not any(r[0] == name for r in run.rebuilt):
                    run.rebuilt.append((name, self.hits))
                self.bound[name] = obj
                if name in self.optimizers:
                    run.probe.watch_optimizer(obj, name)
        for name in self.modules:
            if name == LOSS_LEAVES:
                continue
            obj = self._resolve(name, frames)
            if obj is not _MISSING and run.probe.objects.get(name) is not obj:
                # bound since (a parameter made in a later epoch) or replaced: follow the new one too
                if self._watch(run.probe, name, obj) and name in run.missing:
                    run.missing.remove(name)
        if not self.optimizers and self.hits > self.steps:
            raise StopTraining(f"{self.steps} backward passes at line {first}")

    def after(self, kind, site):
        pass

    def on_step(self, opt, args, kwargs):
        """Global optimizer pre-hook: an optimizer named in the plan but not found by name is the
        one that steps after the backward() waited for."""
        probe = self.run.probe
        if not (self.auto and self.armed and probe is not None) or id(opt) in probe.optimizers:
            return
        self.armed = False
        name = self.auto[0]
        probe.watch_optimizer(opt, name)
        probe._before_step(opt)
        if name in self.run.missing:
            self.run.missing.remove(name)


def run_script(
    path, *, at, modules=(), optimizers=(), schedulers=(), steps=5, argv=(), call="", function=""
) -> ScriptRun:
    """Run `path` as `__main__` until the optimizers named have stepped `steps` times after the
    backward() at `at` (a line of `path`, or (file, first_line, last_line) with `file` relative to
    the script's folder) first ran; `modules`, `optimizers`, `schedulers` are names in the script.
    `call` and `function` (the call's text, e.g. `loss.backward()`, and the function holding it)
    find the backward() again when edits have moved it to another line.
    Returns a ScriptRun to report() and assert_flows() on."""
    from ._torch import require_torch

    require_torch()
    script = os.path.realpath(path)
    root = os.path.dirname(script)
    if isinstance(at, int):
        at = (script, at, at)
    else:
        file, first, *last = at
        at = (os.path.realpath(os.path.join(root, file)), first, last[0] if last else first)
    run = ScriptRun(script, at)
    session = _Session(run, root, at, modules, optimizers, schedulers, steps, call, function)
    saved = (os.getcwd(), list(sys.path), list(sys.argv), set(sys.modules))
    os.chdir(root)
    sys.path.insert(0, root)
    sys.argv = [script, *argv]
    hub.listen(session)
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    step_hook = register_optimizer_step_pre_hook(session.on_step)
    caught = []
    original_show = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message)
        if any(p in text for p in _DEFECT_WARNINGS):
            caught.append(text.splitlines()[0])
        return original_show(message, category, filename, lineno, file, line)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = show
            try:
                _run_main(script)
            except StopTraining:
                run.stopped = True
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    run.error = f"SystemExit({exc.code!r})"
            except BaseException as exc:  # the script's own failure is what the test reports
                run.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                run.error_where = _where(exc, root)
    finally:
        hub.leave(session)
        step_hook.remove()
        if run.probe is not None:
            run.probe.stop()
        os.chdir(saved[0])
        sys.path[:] = saved[1]
        sys.argv[:] = saved[2]
        # the script's own modules (models/, utils.py) must not leak into the next script's run
        for name in set(sys.modules) - saved[3]:
            mod = sys.modules.get(name)
            file = getattr(mod, "__file__", None) or ""
            if file and _in_project(os.path.realpath(file), root):
                del sys.modules[name]
    run.warnings = list(dict.fromkeys(caught))
    return run


def _where(exc, root) -> str:
    place = ""
    for fs in traceback.extract_tb(exc.__traceback__):
        if _in_project(os.path.realpath(fs.filename), root):
            place = f"{os.path.relpath(fs.filename, root)}:{fs.lineno}"
    return place


def _in_project(path: str, root: str) -> bool:
    """A file of the user's project (not of a virtualenv that happens to live inside it)."""
    if not path.startswith(root + os.sep):
        return False
    rest = path[len(root) :]
    return "site-packages" not in rest and "dist-packages" not in rest


def _name_in(t, frames) -> str:
    """A name the script gives this tensor in a live frame: `w1`, `params[0]`, `self.w`."""
    for f in frames:
        for k, v in f.f_locals.items():
            if v is t:
                return k
        for k, v in f.f_locals.items():
            if isinstance(v, (list, tuple)):
                for i, x in enumerate(v[:64]):
                    if x is t:
                        return f"{k}[{i}]"
            elif isinstance(v, dict):
                for key, x in list(v.items())[:64]:
                    if x is t:
                        return f"{k}[{key!r}]"
    return ""


def _same_params(a, b) -> bool:
    try:
        ids = {id(p) for g in a.param_groups for p in g["params"]}
        return any(id(p) in ids for g in b.param_groups for p in g["params"])
    except (AttributeError, KeyError, TypeError):
        return False


def _is_module(obj) -> bool:
    import torch

    return isinstance(obj, torch.nn.Module)
