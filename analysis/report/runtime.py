"""Which runtime check of the probe shows a finding, or why none does.

The probe of a step (section 4) asserts what correct wiring means for the step, not the findings
one by one; this says, per rule, which of its assertions fails when the defect happens for real,
so that the report claims no runtime proof where a gradient-flow probe cannot give one (a loss
scale that may be meant, memory growth, a loss that learns slowly but stays finite).
"""

from __future__ import annotations

from dataclasses import dataclass

# the probe's checks (as named in the JSON report) and the kinds of problem each reports (the
# `[kind]` that starts each line of a failing probe's message)
PROBLEMS = {
    "into": ("no-gradient", "zero-gradient", "frozen"),
    "updates": ("never-changes", "frozen-group", "no-step"),
    "finite": ("nonfinite-loss", "nonfinite-gradient", "nonfinite-parameter"),
    "cleared": ("stale", "cross-talk", "clip"),
    "bounded": ("growing-graph",),
    "raises": ("error",),
    "warns": ("warning",),
    "same-objects": ("rebuilt",),
}
CHECKS = tuple(PROBLEMS)


@dataclass(frozen=True)
class RuntimeCheck:
    check: str | None  # one of CHECKS; None: no runtime check observes this defect
    observes: str  # what fails at runtime, or why nothing does
    data_dependent: bool = False  # fails only on batches that reach the hazard

    @property
    def problems(self) -> tuple:
        return PROBLEMS.get(self.check, ())


_NONFINITE = (
    "`finite` fails when a batch reaches the hazard ({hazard}) — the probe's batches may not, "
    "so a passing probe does not clear this finding"
)

_BY_CODE = {
    "GA101": RuntimeCheck("into", "`into` fails: the parameters behind the cut get no gradient from this loss"),
    "GA102": RuntimeCheck(
        "raises",
        "the step raises: backward() on a value computed without a graph (or, with "
        "another path, `into` fails for the parameters only the no-grad part reaches)",
    ),
    "GA103": RuntimeCheck(
        "into",
        "`into` fails for the parameters that reach the loss only through the Python "
        "number (or the step raises when nothing else carries gradient)",
    ),
    "GA104": RuntimeCheck("into", "`into` fails: the rebuilt tensor carries no gradient back to the parameters"),
    "GA105": RuntimeCheck("into", "`into` fails: the NumPy round trip carries no gradient back to the parameters"),
    "GA106": RuntimeCheck(
        "into", "`into` fails: the fresh leaf stands in for the loss, the parameters get no gradient"
    ),
    "GA107": RuntimeCheck("updates", "`updates` fails: a param group holds only frozen parameters, which never change"),
    "GA108": RuntimeCheck(
        "updates", "`updates` fails: the parameters no optimizer holds get gradient but never change"
    ),
    "GA109": RuntimeCheck(
        "updates",
        "`updates` fails naming the parameters kept in a plain list or dict "
        '("not registered"): no optimizer built from `.parameters()` holds them',
    ),
    "GA110": RuntimeCheck("raises", "the step raises: a tensor saved for backward was modified in place"),
    "GA111": RuntimeCheck("raises", "the step raises: a leaf that requires grad changed in place outside `no_grad`"),
    "GA112": RuntimeCheck(
        "into", "`into` fails: the parameters get no gradient, or only zeros, through the non-differentiable op"
    ),
    "GA113": RuntimeCheck(
        "updates",
        "`updates` fails (or building the optimizer raises): the weight is not a "
        "leaf, so it gets no `.grad` and never changes",
    ),
    "GA201": RuntimeCheck("cleared", "`cleared` fails: a step applies gradients left from before the previous step"),
    "GA202": RuntimeCheck("updates", "`updates` fails: the gradients are cleared before step() applies them"),
    "GA203": RuntimeCheck(
        "updates",
        "`updates` or `cleared` fails: step() runs before the iteration's gradient "
        "exists, so it applies none or the previous iteration's",
    ),
    "GA204": RuntimeCheck("updates", "`updates` fails: the optimizer never steps after this backward()"),
    "GA205": RuntimeCheck(
        None,
        "no runtime check: the gradients flow and stay finite either way; whether the "
        "summed micro-batch losses should be divided is a choice of scale",
    ),
    "GA206": RuntimeCheck(
        "same-objects",
        "`same-objects` fails when the rebuilt optimizer or scheduler is one "
        "the probe names: a new object over the same parameters each iteration",
    ),
    "GA207": RuntimeCheck(
        "warns",
        "torch warns that `lr_scheduler.step()` was called before `optimizer.step()`, "
        "which the script test turns into a failure",
    ),
    "GA208": RuntimeCheck("cleared", "`cleared` fails: the step applies gradients other than what the clipping left"),
    "GA209": RuntimeCheck("into", "`into` fails for the parameters that only the dropped loss reaches"),
    "GA301": RuntimeCheck("raises", "the step raises: backward() through a graph already freed"),
    "GA302": RuntimeCheck(
        None,
        "no runtime check: `retain_graph=True` makes the step run; the graphs it keeps "
        "cost memory, which the probe does not measure",
    ),
    "GA303": RuntimeCheck(
        None,
        "no runtime check of gradient flow: tensors kept with their graph grow memory "
        "(the probe's `bounded` fails only when that history also feeds the next loss)",
    ),
    "GA304": RuntimeCheck(
        "cleared", "`cleared` fails: one optimizer applies gradients another loss left in its parameters"
    ),
    "GA305": RuntimeCheck("raises", "the step raises: grad can be implicitly created only for scalar outputs"),
    "GA306": RuntimeCheck(
        "warns",
        "torch warns that `.grad` of a non-leaf tensor is read (it is None), which the "
        "script test turns into a failure",
    ),
    "GA401": RuntimeCheck("finite", _NONFINITE.format(hazard="a log argument of exactly 0"), True),
    "GA402": RuntimeCheck("finite", _NONFINITE.format(hazard="a divisor of exactly 0"), True),
    "GA403": RuntimeCheck("finite", _NONFINITE.format(hazard="a square root at exactly 0"), True),
    "GA404": RuntimeCheck("finite", _NONFINITE.format(hazard="activations large enough that exp overflows"), True),
    "GA405": RuntimeCheck(
        "finite", _NONFINITE.format(hazard="an element where the discarded branch is inf or NaN"), True
    ),
    "GA406": RuntimeCheck("finite", _NONFINITE.format(hazard="a row whose every position is masked"), True),
    "GA407": RuntimeCheck(
        None,
        "no runtime check: gradients flow and stay finite, the loss is only the wrong "
        "function of the model's output (probabilities squashed a second time)",
    ),
    "GA408": RuntimeCheck(
        None,
        "no runtime check: BCE clamps its log, so saturated sigmoids give vanishing gradients, not non-finite ones",
    ),
    "GA409": RuntimeCheck(
        None,
        "no runtime check on CPU: float16 gradients underflow or overflow on the GPU "
        "the script is meant for, which a CPU probe does not run",
    ),
}

_BY_FAMILY = {
    "graph-break": RuntimeCheck("into", "`into` fails for the parameters cut off from the loss"),
    "lifecycle": RuntimeCheck(
        "updates", "`updates` or `cleared` fails: the optimizer does not apply this iteration's gradients"
    ),
    "backward": RuntimeCheck("raises", "the step raises or torch warns, which the script test turns into a failure"),
    "numerical": RuntimeCheck("finite", _NONFINITE.format(hazard="the value the rule names"), True),
}


def runtime_check(f) -> RuntimeCheck:
    """The probe check that shows finding `f` at runtime (by rule, else by family)."""
    found = _BY_CODE.get(f.code)
    if found is not None:
        return found
    return _BY_FAMILY.get(f.family, RuntimeCheck(None, "no runtime check is known for this rule"))
