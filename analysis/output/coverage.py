"""Coverage in every output: 'N of M training steps understood', and each step not understood
with why (model/coverage.py decides; this says it). One wording for text, JSON, SARIF, GitHub, the
audit and the editor's information diagnostic.
"""

from __future__ import annotations

from ..check.budgets import advice, setting
from ..interp.budget import Gap
from ..model.coverage import StepCoverage, headline
from ..source.notebook import IDENTITY, Locator

__all__ = ["coverage_json", "headline", "reason_text", "step_message", "text_lines"]


# what of the step a Reason concerns, as said
_WHAT = {"step": "not reached", "parameters": "parameters unknown", "optimizer": "optimizer unknown"}


def reason_text(r, editor: bool = False) -> str:
    """'not reached (budget): the budget of 20,000 statements ... ran out before it; raise it with --script-budget'"""
    out = f"{_WHAT.get(r.what, r.what)} ({r.why}): {r.detail}"
    if r.budget:
        tip = advice(Gap("", None, 0, budget=r.budget), editor=editor)
        if tip:
            out += f"; {tip}"
    return out


def step_head(rec: StepCoverage) -> str:
    what = f"`{_short(rec.loss)}`" if rec.loss else "a loss"
    return f"training step not understood: backward() of {what} in `{rec.function}`"


def step_message(rec: StepCoverage, editor: bool = False) -> str:
    """The step not understood and each reason on a line of its own (the editor's information
    diagnostic, a SARIF notification)."""
    return "\n".join([step_head(rec)] + [f"- {reason_text(r, editor)}" for r in rec.reasons])


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def text_lines(recs, locator: Locator = IDENTITY) -> list[str]:
    """`path:line:col: note: training step not understood: ...` per step not understood, then the headline."""
    out = []
    for r in recs:
        if not r.understood:
            out.append(f"{locator.span(r.span).label()}: note: {step_head(r)}")
            out += [f"    {reason_text(x)}" for x in r.reasons]
    if recs:
        out.append(headline(recs) + ".")
    return out


def reason_json(r, locator: Locator = IDENTITY) -> dict:
    out = {"what": r.what, "why": r.why, "message": r.detail}
    if r.budget:
        s = setting(r.budget)
        out["budget"] = {"name": s.key if s is not None else r.budget, "flag": s.flag if s is not None else None}
    if r.span is not None:
        w = locator.span(r.span)
        out.update(path=w.path, line=w.line, column=w.col + 1)
        if w.cell is not None:
            out["cell"] = w.cell_json()
    return out


def step_json(rec: StepCoverage, locator: Locator = IDENTITY) -> dict:
    w = locator.span(rec.span)
    out = {
        "path": w.path,
        "line": w.line,
        "column": w.col + 1,
        "function": rec.function,
        "loss": rec.loss,
        "reached": rec.entry != "missed",
        "understood": rec.understood,
        "models": [{"name": n, "params": k, "library": kind or None} for n, k, kind in rec.models],
        "optimizers": [{"name": n, "type": t, "groups": g} for n, t, g in rec.optimizers],
        "loop": rec.loop or None,
        "reasons": [reason_json(r, locator) for r in rec.reasons],
    }
    if w.cell is not None:
        out["cell"] = w.cell_json()
    return out


def coverage_json(recs, locator: Locator = IDENTITY) -> dict:
    """{"steps": M, "understood": N, "training_steps": [...]}: every step found, understood or not."""
    return {
        "steps": len(recs),
        "understood": sum(1 for r in recs if r.understood),
        "training_steps": [step_json(r, locator) for r in recs],
    }
