"""The probe: hooks around real training steps that record where gradient goes.

    with probe(model, optimizer) as p:
        for batch in loader:
            train_step(batch)
    p.report()
    p.assert_flows(into=model, updates=optimizer, finite=True)

Recorded while it is open: every backward pass (its call site, whether the loss was finite),
every gradient that reached a tracked parameter (before it is added to `.grad`, so that stale
gradients a missing `zero_grad()` leaves behind are seen), every optimizer step (gradient norms
total and per module, the parameters it changed), `zero_grad()` calls, and where a non-finite
value first appeared, by module. Nothing in the training step changes: hooks only read.
"""

from __future__ import annotations

import math

from . import hub
from ._torch import require_torch
from .checks import Checks
from .records import ParamRecord, PassRecord, StepRecord
from .tensors import Several, _finite, _graph_size, _nonzero, _norm, _parts, _tensors_in, module_tensors


class StopTraining(BaseException):
    """Raised by a probe with `stop_after` steps: enough has been seen. A BaseException, so that a
    training loop's `except Exception` does not swallow it."""


class Probe(Checks):
    """Records gradient flow around real training steps (see the module docstring)."""

    def __init__(
        self,
        model_or_params=None,
        optimizer=None,
        *,
        name: str | None = None,
        stop_after: int | None = None,
        forward_checks: bool = True,
    ):
        self.torch = require_torch()
        self.params = {}  # id(tensor) -> ParamRecord
        self.objects = {}  # label -> module / tensor / list, for names in assert_flows
        self.optimizers = {}  # id -> (label, optimizer)
        self.passes = []
        self.steps = []
        self.zero_grads: list = []  # (optimizer label, pass index, step count)
        self.forward_nonfinite = None  # (module, pass index) of the first non-finite output
        self.backward_nonfinite = None  # (where, pass index)
        self.stop_after = stop_after
        self.forward_checks = forward_checks
        self._handles: list = []
        self._module_ids: set = set()
        self._events = 0
        self._last_step_event = 0
        self._in_grad = False
        self._pass = 0
        self._pending_steps: dict = {}
        self._foreign_steps: list = []  # events of steps of optimizers not watched
        self._clips: list = []  # (event, max_norm, norm it found, parameter ids)
        self.clip_mismatch = []  # (optimizer, step, applied norm, norm the clipping left, max_norm)
        self.graph_sizes = {}  # (path, line) of a backward() -> autograd nodes behind each loss
        self._patched_zero_grad: list = []
        self._open = False
        self._closed = False
        if model_or_params is not None:
            self.watch(model_or_params, name)
        if optimizer is not None:
            for i, opt in enumerate(optimizer if isinstance(optimizer, (list, tuple)) else [optimizer]):
                self.watch_optimizer(
                    opt, None if i == 0 and not isinstance(optimizer, (list, tuple)) else f"optimizer[{i}]"
                )

    # ------------------------------------------------------------ what to watch

    def watch(self, obj, name: str | None = None):
        """Track a module (all its parameters), a tensor, a list/dict of those, an optimizer, or an
        object holding modules (a trainer: its module attributes), under `name`. Watching another
        object under a name already used (a loop variable bound to each member in turn) adds it."""
        torch = self.torch
        if isinstance(obj, dict):
            for k, v in obj.items():
                self.watch(v, f"{name}.{k}" if name else str(k))
            return
        if isinstance(obj, torch.optim.Optimizer):
            self.watch_optimizer(obj, name)
            return
        label = name if name is not None else ("model" if isinstance(obj, torch.nn.Module) else "params")
        prefix = self._bind(label, obj)
        if isinstance(obj, torch.nn.Module):
            for pname, p, hidden in module_tensors(torch, obj, prefix):
                self._track(p, pname, hidden)
            if self.forward_checks:
                for mname, m in obj.named_modules(prefix=prefix):
                    self._hook_module(m, mname)
        elif isinstance(obj, torch.Tensor):
            self._track(obj, prefix)
        elif isinstance(obj, (list, tuple)):
            for i, item in enumerate(obj):
                if isinstance(item, (torch.nn.Module, torch.Tensor)):
                    self.watch(item, f"{prefix}.{i}")
        else:
            parts = _parts(torch, obj)
            if parts is None:
                raise TypeError(f"probe: cannot watch a {type(obj).__name__}: give a module, tensors or an optimizer")
            for key, item in parts:
                self.watch(item, f"{prefix}.{key}")
        if self._open:
            self._hook_all()

    def _bind(self, label, obj) -> str:
        """Record `obj` under `label`; the prefix its parameters are named with (`m`, then `m#2`...)."""
        prev = self.objects.get(label)
        if prev is None or prev is obj:
            self.objects[label] = obj
            return label
        group = prev if isinstance(prev, Several) else Several([prev])
        if any(x is obj for x in group):
            return label if group[0] is obj else f"{label}#{[id(x) for x in group].index(id(obj)) + 1}"
        group.append(obj)
        self.objects[label] = group
        return f"{label}#{len(group)}"

    def watch_optimizer(self, opt, name: str | None = None):
        if id(opt) in self.optimizers:
            return
        wanted = name or "optimizer"
        label = self._bind(wanted, opt)
        self.optimizers[id(opt)] = (label, opt)
        names = {id(r.tensor): r.name for r in self.params.values()}
        for gi, g in enumerate(opt.param_groups):
            for i, p in enumerate(g["params"]):
                known = names.get(id(p))
                rec = self._track(p, known or f"{label}.param_groups[{gi}][{i}]", owned=known is not None)
                if label not in rec.optimizers:
                    rec.optimizers.append(label)
        if self._open:
            self._hook_optimizer(opt, label)
            self._hook_all()

    def _track(self, p, name, hidden=False, owned=True) -> ParamRecord:
        rec = self.params.get(id(p))
        module = name.rsplit(".", 1)[0] if "." in name else name
        if rec is not None:
            if owned and not rec.owned:  # an optimizer slot that a watched module turns out to hold
                rec.name, rec.module, rec.owned, rec.hidden = name, module, True, hidden
            return rec
        with self.torch.no_grad():
            initial = p.detach().clone()
        rec = ParamRecord(name, module, p, initial, hidden, bool(p.requires_grad), owned=owned)
        self.params[id(p)] = rec
        if self._open:
            self._hook_param(rec)
        return rec

    # ------------------------------------------------------------ hooks

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    def start(self):
        if self._open:
            return self
        self._open = True
        hub.listen(self)
        for label, opt in list(self.optimizers.values()):
            self._hook_optimizer(opt, label)
        self._hook_all()
        # steps of optimizers nobody asked to watch still mark which gradients were already applied
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self._handles.append(register_optimizer_step_post_hook(self._any_step))
        self._patch_clip()
        return self

    def _patch_clip(self):
        """Record clip_grad_norm_ calls: the step after one must apply what the clipping left. The
        patch is on the helper clip_grad_norm_ looks up at each call, so that a clip_grad_norm_
        imported before the probe opened (`from torch.nn.utils import clip_grad_norm_`) is seen."""
        mod = self.torch.nn.utils.clip_grad
        original = getattr(mod, "_clip_grads_with_norm_", None)
        if original is None:
            return

        def _clip_grads_with_norm_(parameters, max_norm, total_norm, *args, **kwargs):
            params = [parameters] if isinstance(parameters, self.torch.Tensor) else list(parameters)
            found = float(total_norm)
            two = math.sqrt(sum(_norm(self.torch, p.grad) ** 2 for p in params if p.grad is not None))
            out = original(params, max_norm, total_norm, *args, **kwargs)
            # only 2-norm clipping is compared with the 2-norm of what step() applies
            if math.isfinite(found) and abs(two - found) <= 1e-4 * max(two, found) + 1e-6:
                self._clips.append((self._event(), float(max_norm), found, {id(p) for p in params}))
            return out

        _clip_grads_with_norm_.__wrapped__ = original  # type: ignore[attr-defined]  # a function's own attribute
        self._clip_original = original
        mod._clip_grads_with_norm_ = _clip_grads_with_norm_

    def _unpatch_clip(self):
        original = getattr(self, "_clip_original", None)
        if original is not None:
            self.torch.nn.utils.clip_grad._clip_grads_with_norm_ = original
            self._clip_original = None

    def _any_step(self, opt, args, kwargs):
        if id(opt) not in self.optimizers:
            self._foreign_steps.append(self._event())

    def stop(self):
        if not self._open:
            return
        self._open = False
        hub.leave(self)
        self._unpatch_clip()
        for h in self._handles:
            h.remove()
        self._handles.clear()
        for opt in self._patched_zero_grad:
            try:
                del opt.zero_grad
            except AttributeError:
                pass
        self._patched_zero_grad.clear()
        torch = self.torch
        for rec in self.params.values():
            with torch.no_grad():
                now = rec.tensor.detach()
                rec.changed = not (now.shape == rec.initial.shape and torch.equal(now, rec.initial))
                rec.end_finite = _finite(torch, now)
            rec.requires_grad_end = bool(rec.tensor.requires_grad)
        self._closed = True

    def _hook_all(self):
        for rec in list(self.params.values()):
            self._hook_param(rec)

    def _hook_param(self, rec: ParamRecord):
        if rec.hooked or not rec.tensor.requires_grad:
            return
        rec.hooked = True
        self._handles.append(rec.tensor.register_hook(lambda g, rec=rec: self._on_grad(rec, g)))

    def _hook_module(self, m, name):
        if id(m) in self._module_ids:
            return
        self._module_ids.add(id(m))
        self._handles.append(m.register_forward_hook(lambda mod, inp, out, name=name: self._on_forward(name, out)))

    def _hook_optimizer(self, opt, label):
        if getattr(opt, "_gradaudit_probe", None) is self:
            return
        opt._gradaudit_probe = self
        self._handles.append(opt.register_step_pre_hook(lambda o, a, k: self._before_step(o)))
        self._handles.append(opt.register_step_post_hook(lambda o, a, k: self._after_step(o)))
        original = opt.zero_grad

        def zero_grad(*args, **kwargs):
            self.zero_grads.append((label, self._pass, sum(1 for s in self.steps if s.optimizer == label)))
            return original(*args, **kwargs)

        opt.zero_grad = zero_grad
        self._patched_zero_grad.append(opt)

    def _event(self) -> int:
        self._events += 1
        return self._events

    # hub listener
    def before(self, kind, tensors, site, inputs=None):
        torch = self.torch
        self._hook_all()  # parameters unfrozen since the last pass
        self._pass += 1
        finite = all(_finite(torch, t.detach()) for t in tensors)
        value = None
        if len(tensors) == 1 and tensors[0].numel() == 1:
            value = float(tensors[0].detach())
        self.passes.append(PassRecord(self._pass, kind, site, finite, value, self._event()))
        self._in_grad = kind == "grad"
        self.graph_sizes.setdefault((site.path, site.line), []).append(_graph_size(tensors))

    def after(self, kind, site):
        self._in_grad = False

    def _on_forward(self, name, out):
        torch = self.torch
        upcoming = self._pass + 1
        for t in _tensors_in(torch, out):
            if not (t.is_floating_point() or t.is_complex()):
                continue
            if self.forward_nonfinite is None and not _finite(torch, t.detach()):
                self.forward_nonfinite = (name, upcoming)
            if t.requires_grad and t.grad_fn is not None:
                t.register_hook(lambda g, name=name: self._on_output_grad(name, g))

    def _on_output_grad(self, name, g):
        if self.backward_nonfinite is None and not _finite(self.torch, g):
            self.backward_nonfinite = (f"the output of `{name}`", self._pass)

    def _on_grad(self, rec: ParamRecord, g):
        torch = self.torch
        n = self._pass
        rec.grads.add(n)
        if _nonzero(g):
            rec.nonzero.add(n)
            site = self.passes[-1].site if self.passes else None
            if site is not None:
                rec.sites.add((site.path, site.line))
        if not _finite(torch, g):
            if not rec.nonfinite:
                rec.nonfinite = n
            if self.backward_nonfinite is None:
                self.backward_nonfinite = (f"the parameters of `{rec.module}`", n)
        rec.norm = _norm(torch, g)
        if not self._in_grad:
            current = rec.tensor.grad
            if current is None or not _nonzero(current):
                rec.pending = []
            if not rec.pending or rec.pending[-1] != n:
                rec.pending.append(n)

    def _before_step(self, opt):
        if id(opt) in self._pending_steps:  # already taken (an optimizer adopted in a global hook)
            return
        torch = self.torch
        label = self.optimizers.get(id(opt), ("optimizer", opt))[0]
        params = [p for g in opt.param_groups for p in g["params"]]
        names = []
        for p in params:
            rec = self._track(p, f"{label}.param", owned=False)
            if label not in rec.optimizers:
                rec.optimizers.append(label)
            names.append(rec)
        with torch.no_grad():
            before = [p.detach().clone() for p in params]
        # gradients added to .grad before the last optimizer step that preceded the latest pass
        # were already there for that step: this step applies them a second time
        last_pass = self.passes[-1] if self.passes else None
        boundary = 0
        if last_pass is not None:
            boundary = max(
                [s.event for s in self.steps if s.event < last_pass.event]
                + [e for e in self._foreign_steps if e < last_pass.event],
                default=0,
            )
        by_index = {p.index: p for p in self.passes}
        no_grad, stale, nonfinite = [], [], []
        module_sq: dict = {}
        total_sq = 0.0
        for rec in names:
            p = rec.tensor
            if p.grad is None:
                if p.requires_grad:
                    no_grad.append(rec.name)
                continue
            norm = _norm(torch, p.grad)
            if not math.isfinite(norm):
                nonfinite.append(rec.name)
            module_sq[rec.module] = module_sq.get(rec.module, 0.0) + norm * norm
            total_sq += norm * norm
            for k in rec.pending:
                pr = by_index.get(k)
                if pr is not None and pr.event < boundary:
                    own = any(s.optimizer == label and pr.event < s.event <= boundary for s in self.steps)
                    stale.append((rec.name, pr, "own" if own else "other"))
                    break
        self._check_clip(opt, label, params)
        self._pending_steps[id(opt)] = (
            params,
            before,
            names,
            no_grad,
            stale,
            nonfinite,
            {m: math.sqrt(v) for m, v in module_sq.items()},
            math.sqrt(total_sq),
        )

    def _check_clip(self, opt, label, params):
        """The gradients this step applies must be what the last clip_grad_norm_ since the previous
        step left: the clipped norm (or the norm it found, when below max_norm)."""
        last = max((s.event for s in self.steps if s.optimizer == label), default=0)
        ids = {id(p) for p in params}
        clips = [c for c in self._clips if c[0] > last and c[3] & ids]
        if not clips:
            return
        event, max_norm, found, clipped = clips[-1]
        grads = [p.grad for p in params if id(p) in clipped and p.grad is not None]
        applied = math.sqrt(sum(_norm(self.torch, g) ** 2 for g in grads)) if grads else 0.0
        expected = min(found, max_norm)
        if math.isfinite(applied) and abs(applied - expected) > 1e-3 * max(expected, applied) + 1e-6:
            index = sum(1 for s in self.steps if s.optimizer == label) + 1
            self.clip_mismatch.append((label, index, applied, expected, max_norm))

    def _after_step(self, opt):
        torch = self.torch
        label = self.optimizers.get(id(opt), ("optimizer", opt))[0]
        pending = self._pending_steps.pop(id(opt), None)
        if pending is None:
            return
        params, before, recs, no_grad, stale, nonfinite, module_norms, total = pending
        changed, unchanged = [], []
        with torch.no_grad():
            for p, b, rec in zip(params, before, recs):
                rec.stepped += 1
                if torch.equal(p.detach(), b):
                    unchanged.append(rec.name)
                else:
                    changed.append(rec.name)
                    rec.changed_in_step = True
        index = sum(1 for s in self.steps if s.optimizer == label) + 1
        self.steps.append(
            StepRecord(
                label,
                index,
                self._pass,
                total,
                module_norms,
                no_grad,
                changed,
                unchanged,
                stale,
                nonfinite,
                self._event(),
            )
        )
        if self.stop_after is not None and index >= self.stop_after:
            raise StopTraining(f"{label} stepped {index} times")

    # ------------------------------------------------------------ results
    def report(self, file=None) -> str:
        from .table import render

        text = render(self)
        print(text, file=file)
        return text

    # what the report prints, as plain data
    def outside_optimizers(self) -> list:
        if not self.optimizers:
            return []
        return [r for r in self.params.values() if r.requires_grad and not r.optimizers]

    def never_changed(self) -> list:
        return [
            r for r in self.params.values() if r.optimizers and r.requires_grad and r.stepped and not r.changed_in_step
        ]


def probe(model_or_params=None, optimizer=None, **kwargs) -> Probe:
    """`with probe(model, optimizer) as p:` around real training steps; see Probe."""
    return Probe(model_or_params, optimizer, **kwargs)
