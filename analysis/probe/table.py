"""`Probe.report()`: what the probe recorded, as a table per module and a list of observations."""

from __future__ import annotations

import math


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if not math.isfinite(x):
        return str(x)
    return f"{x:.3g}"


def observations(p) -> list[str]:
    """What stands out, without any expectation given: the probe's own findings."""
    out = []
    trainable = [r for r in p.params.values() if r.requires_grad]
    none = [r for r in trainable if not r.grads]
    if p.passes and none:
        out.append(f"no gradient: {_list(none)}")
    zero = [r for r in trainable if r.grads and not r.nonzero]
    if zero:
        out.append(f"only all-zero gradients: {_list(zero)}")
    never = p.never_changed()
    if [r for r in never if r.owned or r.grads]:
        out.append(f"held by an optimizer, never changed by step(): {_list([r for r in never if r.owned or r.grads])}")
    stray = [r for r in never if not (r.owned or r.grads)]
    if stray:
        out.append(
            f"held by an optimizer but in no watched module and never given gradient (the old parameters "
            f"of a replaced module?): {_list(stray)}"
        )
    outside = [r for r in p.outside_optimizers() if r.nonzero]
    if outside:
        out.append(f"trainable, given gradient, in no optimizer: {_list(outside)}")
    frozen_held = [r for r in p.params.values() if r.optimizers and not r.requires_grad]
    if frozen_held:
        out.append(f"frozen (requires_grad=False) but held by an optimizer: {_list(frozen_held)}")
    bad = [x for x in p.passes if not x.loss_finite]
    if bad:
        out.append(f"non-finite loss first in backward pass {bad[0].index} ({bad[0].site.label()})")
    nonfinite = [r for r in p.params.values() if r.nonfinite]
    if nonfinite:
        out.append(f"non-finite gradient: {_list(nonfinite)}" + p._where())
    for label, index, applied, expected, max_norm in p.clip_mismatch[:1]:
        out.append(
            f"step {index} of `{label}` applied gradients of norm {applied:.4g}; clip_grad_norm_"
            f"(max_norm={max_norm:g}) had left {expected:.4g}"
        )
    for (_path, line), sizes in p._growing():
        out.append(
            f"the graph behind the loss at line {line} grows at every backward(): "
            f"{' -> '.join(map(str, sizes[:5]))} nodes"
        )
    for s in p.steps:
        if s.stale:
            kinds = {x[2] for x in s.stale}
            how = (
                "no zero_grad() since its previous step"
                if "own" in kinds
                else f"gradients of the backward at {s.stale[0][1].site.label()} that another optimizer stepped on"
            )
            out.append(
                f"step {s.index} of `{s.optimizer}` applied stale gradients ({how}): {len(s.stale)} parameter(s)"
            )
            break
    return out


def _list(recs, limit=6) -> str:
    names = sorted(r.name for r in recs)
    more = f" ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def render(p) -> str:
    rows = []
    by_module: dict = {}
    for r in p.params.values():
        by_module.setdefault(r.module, []).append(r)
    last_norms: dict = {}
    for s in p.steps:
        last_norms.update(s.module_norms)
    for module in sorted(by_module):
        recs = by_module[module]
        trainable = [r for r in recs if r.requires_grad]
        opts = sorted({o for r in recs for o in r.optimizers})
        got = sum(1 for r in trainable if r.nonzero)
        changed = sum(1 for r in recs if r.changed_in_step or r.changed)
        norm = last_norms.get(module)
        if norm is None and any(r.grads for r in recs):
            norm = math.sqrt(sum(r.norm * r.norm for r in recs if r.grads))
        flags = []
        if any(r.hidden for r in recs):
            flags.append("not registered")
        if any(r.nonfinite for r in recs):
            flags.append("non-finite grad")
        rows.append(
            (
                module,
                str(len(recs)),
                f"{len(trainable)}",
                ", ".join(opts) or "-",
                f"{got}/{len(trainable)}",
                _fmt(norm),
                f"{changed}/{len(recs)}",
                "; ".join(flags),
            )
        )
    head = ("module", "tensors", "trainable", "optimizer", "with grad", "|grad|", "changed", "note")
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) if rows else len(head[i]) for i in range(len(head))]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    steps: dict = {}
    for s in p.steps:
        steps.setdefault(s.optimizer, []).append(s)
    title = f"gradaudit probe: {len(p.passes)} backward pass{'es' if len(p.passes) != 1 else ''}, " + (
        ", ".join(f"{len(v)} step{'s' if len(v) != 1 else ''} of `{k}`" for k, v in steps.items())
        or "no optimizer step"
    )
    out = [title, line(head), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    for label, ss in steps.items():
        zg = sum(1 for z in p.zero_grads if z[0] == label)
        out.append(
            f"`{label}`: gradient norm per step {', '.join(_fmt(s.total_norm) for s in ss)}; "
            f"zero_grad() called {zg} time{'s' if zg != 1 else ''}"
        )
    obs = observations(p)
    out.append(
        "observations:"
        if obs
        else "observations: none (every trainable parameter got gradient; optimizer parameters changed; values finite)"
    )
    out += [f"- {o}" for o in obs]
    return "\n".join(out)
