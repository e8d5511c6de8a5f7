"""Training steps that a framework runs: the user writes the step, the framework writes the loop.

- Lightning, automatic optimization: `configure_optimizers` builds the optimizers (one, a list, a
  dict with `lr_scheduler`, a tuple of lists); for each batch Lightning calls `zero_grad`, then
  `training_step` (which returns the loss, or a dict with "loss"), `backward` and `step`, in that
  order. The engine replays exactly that, with the events placed on the user's code
  (`training_step`'s return is where backward happens).
- Lightning, manual optimization (`self.automatic_optimization = False`): `training_step` is
  plain code; `self.optimizers()` gives the optimizers `configure_optimizers` built,
  `self.manual_backward(loss)` is a backward.
- HuggingFace `Trainer` subclasses overriding `compute_loss`: the Trainer builds AdamW over the
  model's parameters that require grad, and per batch runs compute_loss, backward, step, zero_grad.
- DeepSpeed: `deepspeed.initialize(model=..., model_parameters=...)` gives an engine that wraps
  the model and owns an optimizer; `engine.backward(loss)` and `engine.step()`.
- accelerate, Fabric: `accelerator.backward(loss)`, `fabric.backward(loss)` are backward calls;
  `accelerator.prepare(model, optimizer, ...)` gives back what it was given;
  `accelerator.clip_grad_norm_(params, max_norm)` clips as torch's function. In `with
  accelerator.accumulate(model):` (torch/grad_mode.py) the step and zero_grad take effect only on
  the micro-batch that syncs, and accelerate's backward() divides the loss by the steps.
- NVIDIA apex's amp: `amp.initialize(model, optimizer, ...)` patches and gives back what it was
  given.

Handlers of the semantics tables (libraries/register.py): every rule applies inside these steps
as in a loop.
"""

from __future__ import annotations

import ast

from ..interp import recording
from ..interp.core import Core
from ..interp.objects import (
    FROZEN,
    ClassObj,
    DictObj,
    FuncObj,
    InstanceObj,
    ListObj,
    ModuleObj,
    OptimObj,
    PIter,
    SchedObj,
    Site,
    module_value,
    next_oid,
)
from ..interp.semantics import ModuleExtension
from ..interp.trace import EventKind
from ..interp.values import EMPTY, NONE, UNKNOWN, Kind, Mark, V, make_tuple, passthrough
from ..source.program import installed
from ..torch import modules, optimizers

LIGHTNING = "lightning"
HF_TRAINER = "hf_trainer"

_HF_TRAINERS = ("Trainer", "Seq2SeqTrainer", "SFTTrainer", "DPOTrainer", "RewardTrainer")
_LIGHTNING_BASES = ("LightningModule",)
_OPTIMIZERS_KEY = "<lightning optimizers>"
_SCHEDULERS_KEY = "<lightning schedulers>"


def framework_of(cls: ClassObj) -> str | None:
    """Which framework drives the class's training step, from its bases (through the project's own)."""
    for c in cls.mro():
        for b in c.bases:
            if isinstance(b, str):
                short = b.rsplit(".", 1)[-1]
                if short in _LIGHTNING_BASES:
                    return LIGHTNING
                if short in _HF_TRAINERS and (b.startswith(("transformers", "trl")) or "." not in b):
                    return HF_TRAINER
    return None


def framework_module_method(ip: Core, m: ModuleObj, name, args, kwargs, node) -> V | None:
    """Methods a framework gives a module: LightningModule's, a DeepSpeed engine's."""
    engine = ip.st.ds_engines.get(m.oid)
    if engine is not None:
        if name == "backward" and args:
            recording.do_backward(ip, args[0], node, loss_node=node.args[0] if node.args else None)
            return NONE
        if name == "step":
            _framework_step(ip, engine, node, "deepspeed")
            ip.event(EventKind.ZERO_GRAD, node, engine, detail="deepspeed")
            return NONE
        if name == "zero_grad":
            ip.event(EventKind.ZERO_GRAD, node, engine)
            return NONE
    if m.cls is None or framework_of(m.cls) != LIGHTNING:
        return None
    if name == "optimizers":
        opts = m.attrs.get(_OPTIMIZERS_KEY)
        if opts is None:
            opts = _configure_optimizers(ip, m, node)
        optims = opts[0]
        if not optims:
            return UNKNOWN
        if len(optims) == 1:
            return V(Kind.OPTIM, frozenset(optims))
        return make_tuple([V(Kind.OPTIM, frozenset((o,))) for o in optims], node)
    if name == "lr_schedulers":
        opts = m.attrs.get(_OPTIMIZERS_KEY)
        scheds = opts[1] if opts is not None else []
        if not scheds:
            return NONE
        if len(scheds) == 1:
            return V(Kind.SCHED, frozenset(scheds))
        return make_tuple([V(Kind.SCHED, frozenset((s,))) for s in scheds], node)
    if name == "manual_backward" and args:
        recording.do_backward(ip, args[0], node, loss_node=node.args[0] if node.args else None)
        return NONE
    if name in ("log", "log_dict", "print", "save_hyperparameters", "toggle_optimizer", "untoggle_optimizer"):
        return NONE
    if name in ("clip_gradients",):
        ip.event(EventKind.CLIP, node, args[0] if args else None, detail=name)
        return NONE
    return None


# apex's amp (checked in apex/amp/frontend.py): initialize returns the models and optimizers it was
# given, patched in place. (`with amp.scale_loss(loss, opt) as scaled_loss` stays an unseen value: the
# backward of what it yields is not taken for the loss's own, whose graph the engine may have joined
# with another loss's, as pix2pixHD's list of losses, where it would claim a graph freed twice.)
APEX_INITIALIZE = ("apex.amp.initialize", "apex.amp.frontend.initialize")
# what `amp.scale_loss(loss, opt)` yields is `loss.float() * scale` (apex/amp/handle.py): the loss's
# numerical hazards reach the backward of the scaled loss (a NaN divisor in the loss stays NaN)
APEX_SCALE_LOSS = ("apex.amp.scale_loss", "apex.amp.handle.scale_loss")


def framework_call(ip: Core, qual: str, args, kwargs, node) -> V | None:
    """`deepspeed.initialize(model=..., model_parameters=...)`: (engine, optimizer, loader, scheduler).
    apex's `amp.initialize`."""
    if qual in APEX_INITIALIZE:
        given = [
            kwargs.get("models", args[0] if args else None),
            kwargs.get("optimizers", args[1] if len(args) > 1 else None),
        ]
        return passthrough([v for v in given if v is not None])
    if qual in APEX_SCALE_LOSS and args and isinstance(args[0], V):
        out = ip.opaque_call(None, args, kwargs, node)
        return out.replace(risks=out.risks | args[0].risks)
    if qual not in ("deepspeed.initialize",):
        return None
    model = kwargs.get("model", args[1] if len(args) > 1 else None)
    params = kwargs.get("model_parameters")
    mods = model.of(ModuleObj) if isinstance(model, V) else []
    if not mods:
        return None
    if params is None:
        params = modules.module_method(ip, mods[0], "parameters", [], {}, node, None, model)
    opt = optimizers.make_optimizer(ip, "deepspeed.DeepSpeedOptimizer", [params], {}, node, None)
    for o in opt.of(OptimObj):
        o.label = "optimizer"
        for m in mods:
            ip.st.ds_engines[m.oid] = o
    return make_tuple([model, opt, UNKNOWN, UNKNOWN], node)


def framework_unknown_method(ip: Core, recv: V, name, args, kwargs, node) -> V | None:
    """`trainer.fit(model, ...)` (Lightning) and `trainer.train()` (a HuggingFace Trainer subclass);
    `fabric.launch(main, *args)` (Lightning Fabric)."""
    if name == "launch" and args and isinstance(args[0], V) and _takes_fabric(args[0]):
        # Fabric runs `main(fabric, *args, **kwargs)` in each process (litgpt's finetuning scripts):
        # run once, the function sees the script's arguments instead of running alone on unknown ones
        ip.call_value(args[0], [recv, *args[1:]], dict(kwargs), node, None)
        return NONE
    if name == "fit":
        for a in list(args) + list(kwargs.values()):
            if not isinstance(a, V):
                continue
            for m in a.of(ModuleObj):
                if m.cls is not None and framework_of(m.cls) == LIGHTNING:
                    run_lightning(ip, m, node)
                    return NONE
    return None


def _takes_fabric(fn: V) -> bool:
    """A function whose first parameter is the Fabric object (`def main(fabric: L.Fabric, ...)`)."""
    funcs = fn.of(FuncObj)
    if not funcs or len(funcs) != len(fn.objs):
        return False
    for f in funcs:
        params = f.node.args.posonlyargs + f.node.args.args
        if not params:
            return False
        first = params[0]
        note = ast.unparse(first.annotation) if first.annotation is not None else ""
        if first.arg != "fabric" and not note.endswith("Fabric"):
            return False
    return True


def framework_instance_method(ip: Core, inst: InstanceObj, name, args, kwargs, node) -> V | None:
    if name == "train" and framework_of(inst.cls) == HF_TRAINER and inst.cls.lookup("train") is None:
        run_hf_trainer(ip, inst, node)
        return NONE
    return None


def framework_init(ip: Core, cls: ClassObj, recv: V, args, kwargs):
    """A HuggingFace Trainer subclass keeps the model it is given (Trainer.__init__ is not seen)."""
    if framework_of(cls) != HF_TRAINER:
        return
    model = kwargs.get("model", args[0] if args else None)
    for inst in recv.of(InstanceObj):
        if isinstance(model, V) and "model" not in inst.attrs:
            inst.attrs["model"] = model


def run_frameworks(ip: Core, scope):
    """Framework classes of the file whose step nothing ran: run it on a symbolic instance."""
    for v in list(scope.globals.values()):
        for cls in v.objs:
            if not isinstance(cls, ClassObj) or cls.scope is not scope:
                continue
            kind = framework_of(cls)
            if kind == LIGHTNING and cls.lookup("training_step") is not None:
                fn = cls.lookup("training_step")
                if fn.interpreted:
                    continue
                _framework_root(ip, cls)
                inst = ip.symbolic_instance(cls, Site(scope.sf, cls.node))
                for m in inst.of(ModuleObj):
                    run_lightning(ip, m, cls.node)
            elif kind == HF_TRAINER and cls.lookup("compute_loss") is not None:
                if cls.lookup("compute_loss").interpreted:
                    continue
                _framework_root(ip, cls)
                inst = ip.symbolic_instance(cls, Site(scope.sf, cls.node))
                for o in inst.of(InstanceObj):
                    run_hf_trainer(ip, o, cls.node)


def _framework_step(ip: Core, o: OptimObj, node, detail):
    """The optimizer step the framework runs (as `optimizer.step()` would be recorded)."""
    ip.event(EventKind.STEP, node, o, detail=detail, units=o.units())
    recording.stepped(ip, o, node)


def _framework_root(ip: Core, cls):
    ip.st.root_index += 1
    ip.st.ctx = (("root", ip.st.root_index),)
    ip.st.nograd = None
    ip.st.grad_known = True
    ip.st.cond = 0
    ip.st.root_start = ip.st.steps
    ip.st.root_budget = ip.st.budgets.function


def _configure_optimizers(ip: Core, m: ModuleObj, node):
    fn = m.cls.lookup("configure_optimizers")
    optims: list = []
    scheds: list = []
    if fn is not None:
        out = ip.call_function(fn, [], {}, fn.node, self_v=module_value(m))
        _collect(out, optims, scheds, 0)
    m.attrs[_OPTIMIZERS_KEY] = (optims, scheds)
    return optims, scheds


# the LightningModule hooks `Trainer.fit` calls before the first training_step, in its order: those
# before configure_optimizers build what it can hand to an optimizer; a module those after it build
# (threestudio's guidance made in on_fit_start) is in no optimizer (GA108)
_BEFORE_OPTIMIZERS = (("setup", ("fit",)), ("configure_model", ()), ("configure_sharded_model", ()))
_AFTER_OPTIMIZERS = (("on_fit_start", ()), ("on_train_start", ()), ("on_train_epoch_start", ()))


def _hooks(ip: Core, m: ModuleObj, hooks) -> None:
    for name, args in hooks:
        fn = m.cls.lookup(name)
        if fn is None or installed(fn.scope.sf.abspath):
            continue  # the framework's own (empty) hook
        given = [V(Kind.STR, const=a) for a in args]
        saved_sf = ip.st.sf
        try:
            ip.st.sf = fn.scope.sf
            ip.call_function(fn, given, {}, fn.node, self_v=module_value(m))
        finally:
            ip.st.sf = saved_sf


def run_lightning(ip: Core, m: ModuleObj, node):
    step = m.cls.lookup("training_step")
    if step is None:
        return
    if _OPTIMIZERS_KEY not in m.attrs:
        _hooks(ip, m, _BEFORE_OPTIMIZERS)
    optims, scheds = m.attrs.get(_OPTIMIZERS_KEY) or _configure_optimizers(ip, m, node)
    _hooks(ip, m, _AFTER_OPTIMIZERS)
    flag = m.attrs.get("automatic_optimization") or m.cls.lookup_attr("automatic_optimization")
    manual = flag is not None and flag.const is False
    site = Site(step.scope.sf, step.node)
    batch = ip.sym_value("batch", site)
    idx = V(Kind.NUMBER)
    outer = ip.st.ctx
    # one iteration of Lightning's loop, placed on training_step
    ip.st.ctx = outer + (("loop", step.node, ip.seq(), step.scope.sf, 0, next_oid()),)
    saved_sf = ip.st.sf
    try:
        ip.st.sf = step.scope.sf
        if manual:
            ip.call_function(step, [batch, idx], {}, step.node, self_v=module_value(m))
            return
        targets = optims or [None]
        for o in optims:
            if o.label.startswith("<"):
                o.label = "the optimizer of configure_optimizers"
        for o in targets:
            if o is not None:
                ip.event(EventKind.ZERO_GRAD, step.node, o, detail="lightning")
            out = ip.call_function(step, [batch, idx], {}, step.node, self_v=module_value(m))
            loss = _loss_of(out)
            ret = _return_node(step.node)
            if loss is not None and (loss.k & Kind.TENSOR or loss.carries):
                ip.st.sf = step.scope.sf
                recording.do_backward(ip, loss, ret or step.node, loss_node=ret.value if ret is not None else None)
            if o is not None:
                _framework_step(ip, o, ret or step.node, "lightning")
            if ret is not None and m.cls.lookup("training_epoch_end") is not None:
                _kept_for_the_epoch(ip, out, ret)
            for s in scheds:
                ip.event(EventKind.SCHED_STEP, ret or step.node, s, detail="lightning")
    finally:
        ip.st.ctx = outer
        ip.st.sf = saved_sf


def _kept_for_the_epoch(ip: Core, out: V | None, ret: ast.Return) -> None:
    """Lightning 1.x keeps every `training_step` output of the epoch for `training_epoch_end`: the
    "loss" it detaches itself; any other tensor of the returned dict keeps its graph until the epoch
    ends (GA303, at the return)."""
    if out is None:
        return
    ctx = ip.st.ctx
    outlives = (recording.loop_at(ctx, len(ctx) - 1),)
    for d in out.of(DictObj):
        for key, v in d.keys.items():
            if key != "loss" and isinstance(v, V):
                recording.note_accumulation(ip, v, ret, outlives=outlives, keeper="Lightning")


def run_hf_trainer(ip: Core, inst: InstanceObj, node):
    fn = inst.cls.lookup("compute_loss")
    if fn is None:
        return
    model = inst.attrs.get("model")
    site = Site(fn.scope.sf, fn.node)
    if model is None or not model.of(ModuleObj):
        model = ip.sym_value("model", site)
    saved_sf = ip.st.sf
    opt = None
    mods = model.of(ModuleObj)
    if mods:
        # Trainer.create_optimizer, once before the loop: AdamW over the parameters that require grad
        units = frozenset(u for m in mods for u in m.units() if u.frozen != FROZEN)
        pi = PIter(units, exact=True, sources=frozenset(mods), filtered=True, site=site)
        ip.st.sf = fn.scope.sf
        ov = optimizers.make_optimizer(
            ip, "torch.optim.AdamW", [V(Kind.PARAMS, frozenset((pi,)))], {}, _at(fn.node), None
        )
        opt = next(iter(ov.of(OptimObj)), None)
        if opt is not None:
            opt.label = "Trainer's optimizer"
    outer = ip.st.ctx
    ip.st.ctx = outer + (("loop", fn.node, ip.seq(), fn.scope.sf, 0, next_oid()),)
    try:
        inputs = ip.sym_value("inputs", site)
        out = ip.call_function(fn, [model, inputs], {}, fn.node, self_v=V(Kind.INST, frozenset((inst,))))
        loss = _loss_of(out)
        ret = _return_node(fn.node)
        ip.st.sf = fn.scope.sf
        if loss is not None and (loss.k & Kind.TENSOR or loss.carries):
            recording.do_backward(
                ip, loss, ret or fn.node, loss_node=_loss_expr(ret.value) if ret is not None else None
            )
        if opt is not None:
            _framework_step(ip, opt, ret or fn.node, "hf_trainer")
            ip.event(EventKind.ZERO_GRAD, ret or fn.node, opt, detail="hf_trainer")
    finally:
        ip.st.ctx = outer
        ip.st.sf = saved_sf


# ---------------------------------------------------------------- entries of the semantics tables

# an accelerator's clipping, torch's functions run on what it prepared
CLIP_METHODS = frozenset(("clip_grad_norm_", "clip_grad_value_"))
# methods that give back what they were given (`model, opt = accelerator.prepare(model, opt)`)
WRAPPING_METHODS = {
    "prepare",
    "prepare_model",
    "prepare_optimizer",
    "prepare_scheduler",
    "setup",
    "setup_module",
    "setup_optimizers",
    "wrap",
    "to_device",
}


def framework_fallback(ip: Core, qual, args, kwargs, node, env) -> V | None:
    return framework_call(ip, qual, args, kwargs, node)


def backward_call(ip: Core, recv: V, name, args, kwargs, node) -> V | None:
    """`accelerator.backward(loss)`, `fabric.backward(loss)`, `self.manual_backward(loss)`."""
    # given a loss that carries gradient, an object not known as a tensor is a framework's: an
    # unknown one "carries" only through what it was made from (`Accelerator(mixed_precision=
    # args.precision)` of an uninstalled accelerate), and a tensor's own gradient argument
    # carries none (`act.backward(act.data)`)
    given_loss = bool(args) and isinstance(args[0], V) and bool(args[0].carries) and not recv.k & Kind.TENSOR
    if name == "backward" and (recv.carries or recv.k & Kind.TENSOR) and not given_loss:
        # `out.backward(grad)` of a model output the engine did not see being made: the tensor's own
        # backward, the argument its gradient (`act.backward(act.data)` in deep dream)
        recv_node = node.func.value if isinstance(node.func, ast.Attribute) else None
        recording.do_backward(ip, recv, node, loss_node=recv_node, kwargs=kwargs, gradient=bool(args))
        return NONE
    if name == "backward" and not args and not recv.objs and recv.k & Kind.UNKNOWN:
        # `out["loss"].backward()` of a value the engine did not see made (a model picked at run time):
        # only a tensor with a graph has a backward() that takes no argument and does not raise
        recv_node = node.func.value if isinstance(node.func, ast.Attribute) else None
        loss = recv.replace(k=Kind.TENSOR, top=True, objs=EMPTY, site=node)
        recording.do_backward(ip, loss, node, loss_node=recv_node, kwargs=kwargs, gradient="gradient" in kwargs)
        return NONE
    if name == "backward" and args and isinstance(args[0], V) and (args[0].k & Kind.TENSOR or args[0].carries):
        loss = args[0]
        if ip.st.accumulating:
            # in `accelerator.accumulate(model)`, accelerate's backward() divides the loss by the
            # accumulation steps: the micro-batches' gradients add up to the mean
            loss = loss.replace(marks=loss.marks | Mark.SCALED)
        recording.do_backward(ip, loss, node, loss_node=node.args[0])
        return NONE
    if name in CLIP_METHODS and args and isinstance(args[0], V) and not recv.k & Kind.TENSOR:
        # `accelerator.clip_grad_norm_(model.parameters(), max_norm)`: clips as torch's function does
        units = frozenset(optimizers.param_set(ip, args[0])[0])
        ip.event(EventKind.CLIP, node, None, detail=name, units=units)
        return UNKNOWN
    if name == "manual_backward" and args and isinstance(args[0], V):
        recording.do_backward(ip, args[0], node, loss_node=node.args[0])
        return NONE
    return None


def wrapping_method(ip: Core, recv: V, name, args, kwargs, node) -> V | None:
    return passthrough(args) if name in WRAPPING_METHODS else None


FRAMEWORK_MODULES = ModuleExtension(method=framework_module_method)


def _collect(v: V, optims: list, scheds: list, depth: int):
    """Optimizers and schedulers in what configure_optimizers returns: an optimizer, a list or tuple
    of them, a tuple ([optimizers], [schedulers]), a dict {"optimizer": ..., "lr_scheduler": ...}
    (the scheduler possibly a dict {"scheduler": ...})."""
    if v is None or depth > 4:
        return
    for o in v.objs:
        if isinstance(o, OptimObj) and o not in optims:
            optims.append(o)
        elif isinstance(o, SchedObj) and o not in scheds:
            scheds.append(o)
        elif isinstance(o, ListObj) and o.content is not None:
            for e in o.elems or [o.content]:
                _collect(e, optims, scheds, depth + 1)
        elif isinstance(o, DictObj):
            for k in ("optimizer", "lr_scheduler", "scheduler"):
                if k in o.keys:
                    _collect(o.keys[k], optims, scheds, depth + 1)
    if v.items is not None:
        for it in v.items:
            _collect(it, optims, scheds, depth + 1)


def _loss_of(out: V | None) -> V | None:
    """A training step's result: the loss, or a dict with "loss" (None: skip the batch)."""
    if out is None:
        return None
    for o in out.objs:
        if isinstance(o, DictObj):
            v = o.get("loss")
            if v is not None:
                return v
    if out.k == Kind.NONE:
        return None
    return out


def _at(node) -> ast.Call:
    """A call node standing where the framework acts (the user's method definition)."""
    call = ast.Call(func=ast.Name(id="<framework>", ctx=ast.Load()), args=[], keywords=[])
    ast.copy_location(call, node)
    call.end_lineno, call.end_col_offset = node.lineno, node.col_offset + len("def")
    return call


def _loss_expr(node):
    """The loss in what compute_loss returns: `(loss, outputs) if return_outputs else loss` is
    `loss` in training (Trainer asks for no outputs), `(loss, outputs)` is its first element."""
    if isinstance(node, ast.IfExp):
        arms = [a for a in (node.orelse, node.body) if not isinstance(a, ast.Tuple)]
        node = arms[0] if len(arms) == 1 else node
    if isinstance(node, ast.Tuple) and node.elts:
        node = node.elts[0]
    return node


def _return_node(fn_node):
    """The last `return <value>` of a function (where Lightning's backward is placed)."""
    found = None
    for n in ast.walk(fn_node):
        if isinstance(n, ast.Return) and n.value is not None and (found is None or n.lineno > found.lineno):
            found = n
    return found
