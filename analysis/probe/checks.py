"""What the probe's records contradict: the checks behind `assert_flows` and their messages."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from typing import Any

from .records import GradFlowError, ParamRecord, PassRecord, Problem, StepRecord
from .tensors import _parts, module_tensors


class Checks:
    """The checks of a Probe (mixed into it): names resolved, expectations compared."""

    # what they read of the Probe (recorder.py sets it)
    torch: Any  # the torch module, imported when a probe starts
    params: dict[int, ParamRecord]  # by id(tensor)
    objects: dict[str, Any]  # label -> module / tensor / list, for names in assert_flows
    optimizers: dict[int, tuple[str, Any]]  # id -> (label, optimizer)
    passes: list[PassRecord]
    steps: list[StepRecord]
    clip_mismatch: list[tuple[str, int, float, float, float]]  # (optimizer, step, applied norm, left, max_norm)
    graph_sizes: dict[tuple[str, int], list[int]]  # (path, line) of a backward() -> graph size at each call
    forward_nonfinite: tuple[str, int] | None  # (module, pass index) of the first non-finite output
    backward_nonfinite: tuple[str, int] | None  # (where, pass index)
    _open: bool
    _closed: bool
    watch_optimizer: Callable[..., None]

    def _resolve(self, target, what) -> list:
        """ParamRecords for a name, module, tensor, optimizer or a list of those."""
        torch = self.torch
        if target is None:
            return []
        if isinstance(target, (list, tuple, set)) and not isinstance(target, torch.Tensor):
            out = []
            for t in target:
                out += self._resolve(t, what)
            return out
        if isinstance(target, str):
            obj = self._lookup(target)
            if obj is None:
                raise GradFlowError(
                    f"{what}: no watched object is called `{target}` (watched: "
                    f"{', '.join(sorted(self.objects)) or 'nothing'})"
                )
            if isinstance(obj, ParamRecord):
                return [obj]
            if isinstance(obj, list) and obj and isinstance(obj[0], ParamRecord):
                return obj
            return self._resolve(obj, what)
        if isinstance(target, torch.optim.Optimizer):
            if id(target) not in self.optimizers:
                self.watch_optimizer(target)
            return [self.params[id(p)] for g in target.param_groups for p in g["params"]]
        if isinstance(target, torch.nn.Module):
            label = next((k for k, v in self.objects.items() if v is target), None)
            out = []
            for name, p, hidden in module_tensors(torch, target, label or ""):
                rec = self.params.get(id(p))
                out.append(rec if rec is not None else self._untracked(p, name, hidden))
            return out
        if isinstance(target, torch.Tensor):
            rec = self.params.get(id(target))
            return [rec if rec is not None else self._untracked(target, "tensor", False)]
        parts = _parts(torch, target)
        if parts is not None:
            return self._resolve([v for _, v in parts], what)
        raise TypeError(f"{what}: cannot check a {type(target).__name__}")

    def _untracked(self, p, name, hidden):
        # created after the probe started watching: its initial value is unknown, but whether it
        # ever got a gradient is still decided (it did not, as far as the probe saw)
        rec = ParamRecord(name, name.rsplit(".", 1)[0], p, p.detach().clone(), hidden, bool(p.requires_grad))
        rec.changed = None
        return rec

    def _lookup(self, name):
        if name in self.objects:
            return self.objects[name]
        for _label, obj in self.objects.items():  # `encoder` of a probe(model): model.encoder
            if isinstance(obj, self.torch.nn.Module):
                try:
                    target = obj
                    for part in name.split("."):
                        target = target[int(part)] if part.isdigit() else getattr(target, part)
                except (AttributeError, IndexError, TypeError):
                    continue
                if isinstance(target, (self.torch.nn.Module, self.torch.Tensor)):
                    self.objects.setdefault(name, target)
                    return target
        by_name = [r for r in self.params.values() if r.name == name]
        if by_name:
            return by_name[0]
        under = [r for r in self.params.values() if r.name.startswith(name + ".")]
        return under or None

    def problems(self, into=None, updates=None, finite=True, cleared=True, site=None, bounded=True) -> list:
        """What the recorded steps contradict, as Problems (empty: everything held). `site`, a
        predicate on (path, line), restricts `into` to gradient from the backward() calls there."""
        out = []
        if not self.passes:
            out.append(Problem("no-backward", "no backward() ran while the probe was open"))
        if into is not None:
            recs = _unique(self._resolve(into, "into"))
            trainable = [r for r in recs if r.requires_grad or r.tensor.requires_grad]
            frozen = [r for r in recs if not (r.requires_grad or r.tensor.requires_grad)]
            if recs and not trainable:
                out.append(
                    Problem(
                        "frozen",
                        f"every parameter of {_what(into, self.objects)} is frozen (requires_grad=False): "
                        "it cannot receive gradient",
                        _names(frozen),
                    )
                )
            if site is not None:
                none = [r for r in trainable if not r.grads or (r.nonzero and not any(site(*s) for s in r.sites))]
                where = "from this backward()"
            else:
                none = [r for r in trainable if not r.grads]
                where = "from any backward()"
            zero = [r for r in trainable if r.grads and not r.nonzero]
            if none:
                out.append(
                    Problem("no-gradient", f"{_count(none)} got no gradient {where}{_hidden_note(none)}", _names(none))
                )
            if zero:
                out.append(Problem("zero-gradient", f"{_count(zero)} only ever got an all-zero gradient", _names(zero)))
        if updates is not None:
            targets = updates if isinstance(updates, (list, tuple, set)) else [updates]
            told: set = set()  # each parameter that never changed is named once
            for t in targets:
                obj = self._lookup(t) if isinstance(t, str) else t
                opts = [
                    o for o in (obj if isinstance(obj, list) else [obj]) if isinstance(o, self.torch.optim.Optimizer)
                ]
                unstepped = False
                for o in opts:
                    label = self.optimizers.get(id(o), (str(t),))[0]
                    for gi, g in enumerate(o.param_groups):
                        ps = g["params"]
                        if ps and not any(p.requires_grad for p in ps):
                            recs = [self.params[id(p)] for p in ps if id(p) in self.params]
                            out.append(
                                Problem(
                                    "frozen-group",
                                    f"param group {gi} of `{label}` holds only frozen "
                                    f"parameters: that group never trains",
                                    _names(recs),
                                )
                            )
                    if not any(s.optimizer == label for s in self.steps):
                        out.append(Problem("no-step", f"`{label}` never stepped while the probe was open"))
                        unstepped = True
                if unstepped:
                    continue
                recs = _unique(self._resolve(t, "updates"))
                # an optimizer slot no watched module holds and no loss reaches (the old parameters of a
                # module replaced since) is reported, not required to change
                still = [
                    r
                    for r in recs
                    if (r.requires_grad or r.tensor.requires_grad)
                    and not _changed(r)
                    and (r.owned or r.grads)
                    and id(r.tensor) not in told
                ]
                told |= {id(r.tensor) for r in still}
                if still:
                    why = []
                    outside = [r for r in still if not r.optimizers]
                    if outside:
                        why.append(f"{len(outside)} in no optimizer")
                    nograd = [r for r in still if r.optimizers and not r.nonzero]
                    if nograd:
                        why.append(f"{len(nograd)} without gradient")
                    out.append(
                        Problem(
                            "never-changes",
                            f"{_count(still)} of {_what(t, self.objects)} never changed"
                            + (f" ({', '.join(why)})" if why else ""),
                            _names(still),
                        )
                    )
        if finite:
            bad = [p for p in self.passes if not p.loss_finite]
            if bad:
                out.append(
                    Problem(
                        "nonfinite-loss",
                        f"the loss was not finite in backward pass {bad[0].index} "
                        f"({bad[0].site.label()})" + self._where(),
                    )
                )
            grads = [r for r in self.params.values() if r.nonfinite]
            if grads:
                first = min(r.nonfinite for r in grads)
                out.append(
                    Problem(
                        "nonfinite-gradient",
                        f"{_count(grads)} got a non-finite gradient, first in backward pass {first}" + self._where(),
                        _names(grads),
                    )
                )
            values = [r for r in self.params.values() if r.changed is not None and not r.end_finite]
            if values:
                out.append(
                    Problem(
                        "nonfinite-parameter",
                        f"{_count(values)} hold non-finite values after the steps",
                        _names(values),
                    )
                )
        if bounded:
            for (path, line), sizes in self._growing():
                out.append(
                    Problem(
                        "growing-graph",
                        f"the graph behind the loss at {os.path.basename(path)}:{line} "
                        f"grows at every backward() ({' -> '.join(map(str, sizes[:5]))} "
                        "nodes): history from earlier iterations stays attached",
                    )
                )
        if cleared and self.clip_mismatch:
            label, index, applied, expected, max_norm = self.clip_mismatch[0]
            out.append(
                Problem(
                    "clip",
                    f"step {index} of `{label}` applied gradients of norm {applied:.4g}, not the "
                    f"{expected:.4g} that clip_grad_norm_(max_norm={max_norm:g}) left: the clipping "
                    "ran before backward(), after step(), or on gradients scaled afterwards",
                )
            )
        if cleared:
            for s in self.steps:
                if s.stale:
                    own = [x for x in s.stale if x[2] == "own"]
                    other = [x for x in s.stale if x[2] == "other"]
                    if own:
                        out.append(
                            Problem(
                                "stale",
                                f"step {s.index} of `{s.optimizer}` applied gradients still left in "
                                f".grad from before its previous step (no zero_grad() between "
                                f"steps)",
                                tuple(sorted({x[0] for x in own})),
                            )
                        )
                    if other:
                        pr = other[0][1]
                        out.append(
                            Problem(
                                "cross-talk",
                                f"step {s.index} of `{s.optimizer}` applied gradients of the "
                                f"backward at {pr.site.label()}, which another optimizer had "
                                f"already stepped on (they were not cleared)",
                                tuple(sorted({x[0] for x in other})),
                            )
                        )
                    break
        return out

    def _growing(self) -> list:
        """Call sites whose loss graph grew at every backward() (at least three of them)."""
        out = []
        for where, sizes in self.graph_sizes.items():
            if len(sizes) >= 3 and all(b > a for a, b in itertools.pairwise(sizes)):
                out.append((where, sizes))
        return out

    def _where(self) -> str:
        """Where the first non-finite value appeared: a module's forward output, or (when every
        module's output was still finite then) the operations between the modules and the loss."""
        bad_loss = next((p.index for p in self.passes if not p.loss_finite), None)
        grads = [r.nonfinite for r in self.params.values() if r.nonfinite]
        first = min([x for x in (bad_loss, min(grads) if grads else None) if x is not None], default=None)
        parts = []
        fwd = self.forward_nonfinite
        if fwd is not None and (first is None or fwd[1] <= first):
            parts.append(f"it first appeared in the forward output of `{fwd[0]}` (pass {fwd[1]})")
        elif bad_loss is not None and bad_loss == first:
            parts.append(
                f"every watched module's output was finite in pass {bad_loss}: it came from the operations "
                "between them and the loss"
            )
        bwd = self.backward_nonfinite
        if bwd is not None and (first is None or bwd[1] <= first):
            parts.append(f"in backward pass {bwd[1]} it first reached {bwd[0]}")
        return ("; " + "; ".join(parts)) if parts else ""

    def assert_flows(self, into=None, updates=None, finite=True, cleared=True, bounded=True):
        """Fail (GradFlowError, an AssertionError) naming the parameters when the recorded steps show
        that gradient did not reach `into`, that `updates` (optimizers, modules, tensors) did not
        change, that a loss or gradient was not finite, that gradients were not cleared between
        steps, or (`bounded`) that the graph behind a loss grew at every backward()."""
        if not self._closed and self._open:
            raise GradFlowError("assert_flows() reads what the probe recorded: call it after the `with` block")
        problems = self.problems(into, updates, finite, cleared, bounded=bounded)
        if problems:
            raise GradFlowError(format_problems(problems))


def _changed(r: ParamRecord) -> bool:
    return bool(r.changed_in_step or r.changed)


def _unique(recs):
    seen, out = set(), []
    for r in recs:
        if id(r.tensor) not in seen:
            seen.add(id(r.tensor))
            out.append(r)
    return out


def _names(recs) -> tuple:
    return tuple(sorted(r.name for r in recs))


def _count(recs) -> str:
    return f"{len(recs)} parameter{'s' if len(recs) != 1 else ''}"


def _what(target, objects=None) -> str:
    if isinstance(target, str):
        return f"`{target}`"
    if isinstance(target, (list, tuple)):
        return ", ".join(_what(t, objects) for t in target)
    label = next((k for k, v in (objects or {}).items() if v is target), None)
    return f"`{label}`" if label else type(target).__name__


def _hidden_note(recs) -> str:
    hidden = [r for r in recs if r.hidden]
    if not hidden:
        return ""
    return f" ({len(hidden)} of them kept in a plain list/dict, which .parameters() does not yield)"


def format_problems(problems, limit=12) -> str:
    lines = ["gradient flow check failed:"]
    for p in problems:
        lines.append(f"- [{p.kind}] {p.message}")
        if p.names:
            shown = list(p.names[:limit])
            more = f" ... ({len(p.names) - limit} more)" if len(p.names) > limit else ""
            lines.append("    " + ", ".join(shown) + more)
    return "\n".join(lines)
