"""Gradient-flow tests from the training-step model: what a probe must see for each step.

For every training step the engine located, a `ProbePlan` says how a test reaches the real step
(run the script for a few steps, or call the step's function with fixtures) and what it
asserts: which modules this loss must send gradient to, what must change, that values stay
finite and gradients are cleared between steps. The plan is derived from what correct wiring
means for that step, not from the findings: a test written from it fails on the defect and
passes once the defect is fixed. The audit report's Verification section and `gradaudit probe
--emit` both read these plans.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
from typing import Any

from .. import __version__
from ..check.budgets import add_budget_arguments, with_budget_flags
from ..model.model import EventKind, ProgramModel, Step
from ..ops import torch_api as T
from ..output.coverage import text_lines
from ..report.summary import unique_steps
from ..source.notebook import Locator, is_notebook
from ..source.prebuilt import dataclass, replace

LOSS_LEAVES = "<loss leaves>"  # run_script: the leaf tensors of the loss's own graph
_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_0-9]\w*)*$")


@dataclass(frozen=True)
class ProbePlan:
    script: str  # the file the test runs or imports (absolute)
    path: str  # the file holding the backward() (absolute)
    line: int
    end_line: int
    function: str
    loss: str
    mode: str  # 'script' | 'function' | 'none'
    reason: str = ""  # mode 'none': why no test can be written
    watch: tuple = ()  # names the probe follows (into, plus what the optimizers hold, for naming)
    into: tuple = ()  # names that must get gradient from this backward()
    updates: tuple = ()  # optimizer and module names that must change
    optimizers: tuple = ()
    schedulers: tuple = ()
    manual: bool = False  # updated by hand, no optimizer
    call_text: str = ""  # the backward() call's first line, to find it again after edits
    unchecked: tuple = ()  # parameters the engine saw but cannot name for a test (`<tensor>`)
    fixtures: tuple = ()  # function mode: fixtures the test asks for
    call: str = ""  # function mode: the call of the step function
    batch: tuple = ()  # function mode: (names, target kind) built by batch_for
    model_arg: str = ""
    optimizer_arg: str = ""
    where: str = ""  # where the backward() is, as shown (`lesson.ipynb:cell 7:5` in a notebook)

    @property
    def locatable(self) -> bool:
        return self.mode != "none"

    def assertions(self) -> list[str]:
        """What the test checks, in words (the report's Verification section)."""
        out = []
        if self.mode == "function":
            out.append(f"gradient from this loss reaches every trainable parameter of `{self.model_arg}`")
            out.append(
                f"`{self.optimizer_arg}` changes every trainable parameter it holds"
                if self.optimizer_arg
                else f"every trainable parameter of `{self.model_arg}` changes"
            )
        else:
            if self.into == (LOSS_LEAVES,):
                out.append(
                    "every leaf tensor of this loss's graph gets a gradient from it and is changed by the manual update"
                )
            elif self.into:
                out.append(
                    "gradient from this loss reaches every trainable parameter of "
                    + ", ".join(f"`{n}`" for n in self.into)
                )
            opts = [n for n in self.updates if n in self.optimizers]
            mods = [n for n in self.updates if n not in self.optimizers and n != LOSS_LEAVES]
            if opts:
                out.append(
                    ", ".join(f"`{n}`" for n in opts) + " changes every trainable parameter it holds, and "
                    "no param group holds only frozen parameters"
                )
            if mods:
                out.append("every trainable parameter of " + ", ".join(f"`{n}`" for n in mods) + " changes")
        if self.unchecked:
            out.append(
                "(not checked by name: "
                + ", ".join(f"`{n}`" for n in self.unchecked)
                + ", which the script binds to no name the test can look up)"
            )
        out.append("losses, gradients and updated parameters stay finite")
        if self.optimizers or self.optimizer_arg:
            out.append(
                "gradients are cleared between steps (no stale or other losses' gradients applied), and "
                "a step after clip_grad_norm_ applies the clipped gradients"
            )
        out.append("the graph behind the loss does not grow from one backward() to the next")
        if self.mode == "script" and (self.optimizers or self.schedulers):
            built = self.optimizers + self.schedulers
            out.append(
                ", ".join(f"`{n}`" for n in built)
                + (" stay the same objects" if len(built) > 1 else " stays the same object")
                + " across iterations (built once, outside the loop)"
            )
        if self.mode == "script":
            out.append("the script runs without raising, and torch does not warn about the step's order")
        return out


def _clean(name: str) -> str:
    return name.replace("[]", "")


def _known(model: ProgramModel, step: Step) -> set:
    out: set = set()
    for s in model.steps:
        out |= s.reached | s.reached_weak
        for c in s.cuts:
            out |= c.removed | c.removed_weak
    for o in model.optimizers:
        out |= o.params
    for o in step.optimizers:
        out |= o.params
    return out


def cover(names: set, known: set) -> tuple:
    """The fewest module paths whose known parameters are all in `names` (parameter names)."""
    if not names:
        return ()
    prefixes = set()
    for n in names:
        parts = n.split(".")
        for i in range(1, len(parts) + 1):
            prefixes.add(".".join(parts[:i]))
    ok = {p for p in prefixes if all(k in names for k in known if k == p or k.startswith(p + "."))}
    chosen = []
    for n in sorted(names):
        parts = n.split(".")
        best = n
        for i in range(1, len(parts) + 1):
            p = ".".join(parts[:i])
            if p in ok:
                best = p
                break
        if best not in chosen:
            chosen.append(best)
    # drop names another chosen one already contains
    out = [c for c in chosen if not any(c != o and c.startswith(o + ".") for o in chosen)]
    return tuple(sorted(set(out)))


def plan_step(model: ProgramModel, step: Step, script: str, files: dict | None = None) -> ProbePlan:
    path = os.path.abspath(step.span.path)
    sf = (files or {}).get(step.span.path)
    call = ""
    if sf is not None:
        text = sf.line_text(step.span.line)
        call = " ".join(
            (
                text[step.span.col : step.span.end_col]
                if step.span.line == step.span.end_line
                else text[step.span.col :]
            ).split()
        )
    tree = sf.tree if sf is not None else None
    base: dict[str, Any] = {
        "script": os.path.abspath(script),
        "path": path,
        "line": step.span.line,
        "end_line": step.span.end_line,
        "function": step.function,
        "loss": step.loss,
        "call_text": call,
    }
    if step.kind != EventKind.BACKWARD:
        return ProbePlan(**base, mode="none", reason="torch.autograd.grad steps are not probed (no .grad to watch)")
    if step.entry == "function":
        return _plan_function(model, step, base, tree)
    stepped = [o for o in step.optimizers if o.key in step.stepped]
    held: set = set()
    for o in stepped:
        held |= o.params
    any_held: set = set()
    for o in model.optimizers:
        any_held |= o.params
    for o in step.optimizers:
        any_held |= o.params
    reach = step.reached | step.reached_weak
    cut: set = set()
    for c in step.cuts:
        cut |= c.removed | c.removed_weak
    frozen = step.frozen | step.maybe_frozen
    # an optimizer that holds parameters this loss reaches but is stepped for no loss at all
    # (backward() without step()): those parameters should train too
    stepped_any = {k for s in model.steps for k in s.stepped}
    idle: set = set()
    for o in step.optimizers:
        if o.key not in stepped_any:
            idle |= o.params
    # a cut of parameters another loss of the same step() trains (an actor-critic's detached
    # advantage) is a stop-gradient, not a defect: this loss is not asked to reach them
    want = {p for p in ((reach | (cut - step.co_reached)) & held) | (reach & idle) if p not in frozen}
    orphan = {
        p
        for p in reach
        if p not in any_held
        and p not in frozen
        and p not in model.manual
        and p.kind in ("param", "leaf", "opaque")
        and not p.origin
    }
    manual = not stepped and bool((reach | cut) & model.manual)
    names = {_clean(p.name if not p.opaque else p.module) for p in want | orphan}
    opt_names = list(dict.fromkeys(o.name for o in stepped))
    unnamed = [n for n in opt_names if not _NAME.match(n)]
    if unnamed:
        return ProbePlan(**base, mode="none", reason=f"the optimizer {unnamed[0]} has no name the test can look up")
    # schedulers are not asked to stay the same objects: rebuilding a chainable one each epoch is valid
    if manual:
        return ProbePlan(
            **base, mode="script", watch=(LOSS_LEAVES,), into=(LOSS_LEAVES,), updates=(LOSS_LEAVES,), manual=True
        )
    known = {_clean(p.name if not p.opaque else p.module) for p in _known(model, step)}
    into = cover(names, known)
    seen = {_clean(p.name if not p.opaque else p.module) for p in held | cut | want | orphan}
    unchecked = tuple(n for n in into if not _NAME.match(n))
    into = tuple(n for n in into if _NAME.match(n))
    watch = tuple(sorted(set(into) | {n for n in cover(seen, known) if _NAME.match(n)}))
    if not into and not opt_names:
        return ProbePlan(**base, mode="none", reason="the engine found no parameter or optimizer for this loss")
    return ProbePlan(
        **base,
        mode="script",
        watch=watch,
        into=into,
        updates=tuple(opt_names) + into,
        optimizers=tuple(opt_names),
        unchecked=unchecked,
    )


def _function_node(tree, name: str, line: int):
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if node.name == name.rsplit(".", 1)[-1]:
                return node
    return None


def _plan_function(model, step, base, tree) -> ProbePlan:
    fn = _function_node(tree, step.function, step.span.line)
    if fn is None or "." in step.function or fn not in getattr(tree, "body", ()):
        return ProbePlan(
            **base,
            mode="none",
            reason=f"`{step.function}` is not a module-level function the test "
            "can call (methods need an instance: probe it by hand)",
        )
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    required = params[: len(params) - len(fn.args.defaults)] if fn.args.defaults else params
    called, on_opt, inputs, loss_kind = set(), set(), [], ""
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in params:
            called.add(f.id)
            inputs += [a.id for a in node.args if isinstance(a, ast.Name) and a.id in params]
        if (
            isinstance(f, ast.Attribute)
            and f.attr in ("step", "zero_grad")
            and isinstance(f.value, ast.Name)
            and f.value.id in params
        ):
            on_opt.add(f.value.id)
        callee = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if callee in T.LOSS_TARGETS:
            loss_kind = T.LOSS_TARGETS[callee]
    models = sorted(called - on_opt)
    opts = sorted(on_opt)
    if len(models) != 1:
        return ProbePlan(**base, mode="none", reason=f"cannot tell which argument of `{step.function}` is the model")
    model_arg = models[0]
    rest = [p for p in required if p not in (model_arg, *opts)]
    batch: tuple = ()
    fixtures = [model_arg] + opts
    uniq_inputs = list(dict.fromkeys(inputs))
    if len(uniq_inputs) == 1 and len(rest) in (1, 2) and rest[0] == uniq_inputs[0] and (len(rest) == 1 or loss_kind):
        batch = (tuple(rest), loss_kind if len(rest) == 2 else "")
    else:
        fixtures += rest
    args = ", ".join(params[: len(required)])
    return ProbePlan(
        **base,
        mode="function",
        into=(model_arg,),
        updates=tuple(opts) + (model_arg,),
        optimizers=(),
        fixtures=tuple(fixtures),
        call=f"{fn.name}({args})",
        batch=batch,
        model_arg=model_arg,
        optimizer_arg=opts[0] if opts else "",
    )


def plan(model: ProgramModel, script: str, files: dict | None = None) -> list[ProbePlan]:
    """A plan per training step of `model`, the analysis of `script`; `files` (display path ->
    SourceFile, an analysis Result's) give the backward() calls' text and the functions' trees."""
    return [plan_step(model, s, script, files) for s in unique_steps(model)]


def located(plans, locator: Locator, path: str) -> list[ProbePlan]:
    """The plans of a notebook with each backward() named by its cell (`lesson.ipynb:cell 7:5`)."""
    out = []
    for p in plans:
        w = locator.at(path, p.line, 0)
        label = f"{path}:cell {w.cell.number}:{w.line}" if w.cell is not None else ""
        out.append(replace(p, where=label))
    return out


# ------------------------------------------------------------------ the test file


def _test_name(p: ProbePlan, taken: set) -> str:
    func = re.sub(r"\W+", "_", p.function.replace("<module>", "module")).strip("_").lower() or "step"
    loss = re.sub(r"\W+", "_", p.loss).strip("_").lower()[:24] or "loss"
    name = f"test_gradflow_{func}_{loss}_line{p.line}"
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _lst(names) -> str:
    return "[" + ", ".join(repr(n) for n in names) + "]"


def emit(plans, test_path: str, source_label: str = "", steps: int = 3) -> str:
    """The text of a pytest file with one test per locatable plan (raises ValueError if none)."""
    ok = [p for p in plans if p.locatable]
    if not ok:
        reasons = "; ".join(f"line {p.line}: {p.reason}" for p in plans) or "no backward() found in what was analysed"
        raise ValueError(f"no training step to probe ({reasons})")
    here = os.path.dirname(os.path.abspath(test_path))
    script = ok[0].script
    rel = os.path.relpath(script, here)
    label = source_label or os.path.basename(script)
    lines = [
        f'"""Gradient-flow tests for {os.path.basename(script)}, written by `gradaudit probe {label} --emit '
        f"{os.path.basename(test_path)}` (gradaudit {__version__}).",
        "",
    ]
    if any(p.mode == "script" for p in ok) and is_notebook(script):
        lines += [
            "The notebook's code cells run for real, in order, as one program (in its folder; IPython magics",
            "and shell lines left out), under gradaudit.probe, and stop after STEPS optimizer steps; each test",
            "checks what gradient flow must look like for one training step. Needs the project's torch.",
        ]
    elif any(p.mode == "script" for p in ok):
        lines += [
            "The script runs for real, as `python " + os.path.basename(script) + "` would (in its folder), under",
            "gradaudit.probe, and stops after STEPS optimizer steps; each test checks what gradient flow must",
            "look like for one training step.",
        ]
    if any(p.mode == "function" for p in ok):
        lines += [
            "The training-step functions are imported and called on a batch built for the model's first layer;",
            "the fixtures a test names but this file does not define are yours to provide (conftest.py).",
        ]
    lines += [
        "",
        "Run them with the Python that runs the script (the one with torch): `python -m pytest "
        + os.path.basename(test_path)
        + "`",
        "(pytest installed there), or `python "
        + os.path.basename(test_path)
        + "` without pytest"
        + (" (the tests that need fixtures are then skipped)." if any(p.mode == "function" for p in ok) else "."),
        "They need torch and gradaudit's runtime probe, gradaudit.probe: when gradaudit is not installed in",
        "that environment, the probe of the gradaudit that wrote this file is used (PROBE; pure Python).",
        '"""',
    ]
    imports = set()
    if any(p.mode == "script" for p in ok):
        imports.add("run_script")
    if any(p.mode == "function" for p in ok):
        imports |= {"batch_for", "probe"}
    folder = probe_folder()
    lines += [
        "import importlib.util",
        "import os",
        "import sys",
        "",
        "HERE = os.path.dirname(os.path.abspath(__file__))",
        f"SCRIPT = os.path.join(HERE, {rel!r})",
        f"STEPS = {steps}",
        f"PROBE = {folder!r}",
        "",
        "",
        *_LOADER.format(install=install_hint(folder)).splitlines(),
        "",
        "",
        "_runtime = _probe()",
        *(f"{name} = _runtime.{name}" for name in sorted(imports)),
    ]
    if any(p.mode == "function" for p in ok):
        lines += [
            "",
            "def _module():",
            '    """The module under test, imported from its file (its folder first on sys.path)."""',
            "    folder = os.path.dirname(SCRIPT)",
            "    if folder not in sys.path:",
            "        sys.path.insert(0, folder)",
            "    name = os.path.splitext(os.path.basename(SCRIPT))[0]",
            "    spec = importlib.util.spec_from_file_location(name, SCRIPT)",
            "    module = importlib.util.module_from_spec(spec)",
            "    spec.loader.exec_module(module)",
            "    return module",
        ]
    taken: set = set()
    for p in ok:
        lines += ["", "", *test_source(p, taken)]
    skipped = [p for p in plans if not p.locatable]
    if skipped:
        lines += ["", "# Not probed:"] + [
            f"# - {os.path.basename(p.where) if p.where else f'line {p.line}'} ({p.function}): {p.reason}"
            for p in skipped
        ]
    lines += ["", "", *_MAIN.splitlines()]
    return "\n".join(lines).rstrip() + "\n"


# The emitted file finds the runtime probe itself: gradaudit installed where the tests run, else
# the probe package of the gradaudit that wrote the file (it needs only torch), else it says what
# to install. Kept as text: it is copied into the test file.
_LOADER = """\
def _probe():
    \"\"\"gradaudit.probe: installed in this environment, else the copy at PROBE.\"\"\"
    try:
        import gradaudit.probe

        return gradaudit.probe
    except ImportError:
        pass
    init = os.path.join(PROBE, "__init__.py")
    if not os.path.isfile(init):
        raise ImportError(
            "these tests need gradaudit's runtime probe (gradaudit.probe) in the environment that runs them, "
            "the one with torch: install it there with `{install}`"
        )
    spec = importlib.util.spec_from_file_location("_gradaudit_probe", init, submodule_search_locations=[PROBE])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module"""

# `python test_gradflow.py` without pytest: each test that needs no fixture, PASS or FAIL
_MAIN = """\
if __name__ == "__main__":
    import inspect
    import traceback

    failed = 0
    for name, test in list(globals().items()):
        if not name.startswith("test_") or not callable(test):
            continue
        if inspect.signature(test).parameters:
            print(f"SKIP {name}: it needs pytest fixtures (conftest.py): run it with pytest")
            continue
        try:
            test()
        except Exception:
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
        else:
            print(f"PASS {name}")
    sys.exit(1 if failed else 0)"""


def probe_folder() -> str:
    """The folder of the runtime probe package installed with this gradaudit (found, not imported)."""
    spec = importlib.util.find_spec("gradaudit.probe")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("gradaudit.probe is not installed beside gradaudit")
    return os.path.abspath(next(iter(spec.submodule_search_locations)))


def install_hint(folder: str) -> str:
    """How to install gradaudit (and so its probe) in another environment: from the clone this one
    runs from, else from a clone or wheel (gradaudit is not on a package index)."""
    repo = os.path.dirname(os.path.dirname(folder))
    if os.path.basename(os.path.dirname(folder)) == "analysis" and os.path.isfile(os.path.join(repo, "pyproject.toml")):
        return f"python -m pip install {repo}"
    return "python -m pip install PATH (a clone of gradaudit, or the wheel built from one)"


def test_source(p: ProbePlan, taken: set | None = None) -> list[str]:
    """The lines of the pytest function `emit` writes for this plan."""
    taken = set() if taken is None else taken
    return _script_test(p, taken) if p.mode == "script" else _function_test(p, taken)


def _doc(p: ProbePlan) -> list[str]:
    where = os.path.basename(p.where) if p.where else f"{os.path.basename(p.path)}:{p.line}"
    head = f'    """`{p.loss}.backward()` in `{p.function}` ({where}).'
    body = ["", "    Asserts:"] + [f"    - {a}" for a in p.assertions()] + ['    """']
    return [head] + body


def _script_test(p: ProbePlan, taken: set) -> list[str]:
    at = (os.path.relpath(p.path, os.path.dirname(p.script)), p.line, p.end_line)
    kw = [f"at={at!r}"]
    if p.watch:
        kw.append(f"modules={_lst(p.watch)}")
    if p.optimizers:
        kw.append(f"optimizers={_lst(p.optimizers)}")
    if p.schedulers:
        kw.append(f"schedulers={_lst(p.schedulers)}")
    if p.call_text:
        kw.append(f"call={p.call_text!r}, function={p.function.rsplit('.', 1)[-1]!r}")
    kw.append("steps=STEPS")
    out = [f"def {_test_name(p, taken)}():"] + _doc(p)
    out.append("    run = run_script(SCRIPT, " + ", ".join(kw) + ")")
    out.append("    run.report()")
    out.append(f"    run.assert_flows(into={_lst(p.into)}, updates={_lst(p.updates)}, finite=True, cleared=True)")
    return out


def _function_test(p: ProbePlan, taken: set) -> list[str]:
    out = [f"def {_test_name(p, taken)}({', '.join(p.fixtures)}):"] + _doc(p)
    out.append("    module = _module()")
    if p.batch:
        names, kind = p.batch
        target = f", target={kind!r}" if kind else ""
        out.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = batch_for({p.model_arg}{target})")
    watch = f"{p.model_arg}, {p.optimizer_arg}" if p.optimizer_arg else p.model_arg
    out.append(f"    with probe({watch}) as p:")
    out.append("        for _ in range(STEPS):")
    out.append(f"            module.{p.call}")
    out.append("    p.report()")
    updates = f"[{p.optimizer_arg}, {p.model_arg}]" if p.optimizer_arg else f"[{p.model_arg}]"
    out.append(
        f"    p.assert_flows(into={p.model_arg}, updates={updates}, finite=True, cleared={bool(p.optimizer_arg)})"
    )
    return out


# ------------------------------------------------------------------ `gradaudit probe`


def add_arguments(ap):
    ap.add_argument("path", metavar="PATH", help="the training script (the file you run)")
    ap.add_argument("--emit", metavar="TEST_FILE", help="write the pytest file here (default: print it)")
    ap.add_argument("--steps", type=int, default=3, metavar="N", help="optimizer steps each test runs (default 3)")
    ap.add_argument("--config", metavar="PYPROJECT", help="read [tool.gradaudit] from this file")
    ap.add_argument("--isolated", action="store_true", help="ignore configuration files")
    add_budget_arguments(ap, default_time=None)


def run_command(args) -> int:
    import sys

    from ..check.config import Config, ConfigError, load_config
    from ..check.engine import Analyzer
    from ..check.problems import problems_of

    if not os.path.isfile(args.path):
        print(f"gradaudit: {args.path}: not a file (give the training script you run)", file=sys.stderr)
        return 2
    if args.steps < 1:
        print("gradaudit: --steps must be at least 1", file=sys.stderr)
        return 2
    try:
        config = Config(root=os.getcwd()) if args.isolated else load_config(args.path, args.config)
    except ConfigError as exc:
        print(f"gradaudit: {exc}", file=sys.stderr)
        return 2
    config = with_budget_flags(config, args)
    seconds = args.time_budget if args.time_budget is not None else config.time_budget
    result = Analyzer(config, time_budget=seconds or None).analyze_file(args.path)
    if result.error is not None:
        e = result.error
        print(f"{e.path}:{e.line}:{e.col}: error: could not parse: {e.msg}", file=sys.stderr)
        return 1
    # what the analysis did not reach or understand: a probe is written only for what it understood
    for p in problems_of(result):
        if p.kind == "incomplete":
            print(p.line_text(), file=sys.stderr)
    for line in text_lines([r for r in result.coverage if not r.understood]):
        print(line, file=sys.stderr)
    plans = plan(result.model, args.path, result.files) if result.model is not None else []
    if result.notebook is not None:
        plans = located(plans, Locator({args.path: result.notebook}), args.path)
    target = args.emit or os.path.join(os.path.dirname(os.path.abspath(args.path)), "test_gradflow.py")
    try:
        text = emit(plans, target, args.path, args.steps)
    except ValueError as exc:
        print(f"gradaudit: {args.path}: {exc}", file=sys.stderr)
        return 1
    if args.emit:
        try:
            with open(args.emit, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            print(f"gradaudit: cannot write {args.emit}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        n = sum(1 for p in plans if p.locatable)
        print(
            f"wrote {args.emit}: {n} test{'s' if n != 1 else ''}; run {'them' if n != 1 else 'it'} with the Python "
            f"that runs {os.path.basename(args.path)} (the one with torch): `python -m pytest {args.emit}` "
            f"(with pytest installed there) or `python {args.emit}`",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0
