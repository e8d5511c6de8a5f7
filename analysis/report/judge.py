"""How the audit ranks and explains a finding: severity, class, and why it is no valid look-alike.

Severity says what the defect does to training, independent of how sure the engine is:
`critical` torch raises (the step cannot run), `high` parameters never train or values go
non-finite, `medium` training runs with wrong or stale gradients, `low` it costs memory or reads
a gradient that is not there.
"""

from __future__ import annotations

SEVERITIES = ("critical", "high", "medium", "low")

_SEVERITY = {
    "GA102": "critical",
    "GA110": "critical",
    "GA111": "critical",
    "GA113": "critical",
    "GA301": "critical",
    "GA305": "critical",
    "GA101": "high",
    "GA103": "high",
    "GA104": "high",
    "GA105": "high",
    "GA106": "high",
    "GA107": "high",
    "GA108": "high",
    "GA109": "high",
    "GA112": "high",
    "GA202": "high",
    "GA203": "high",
    "GA204": "high",
    "GA209": "high",
    "GA401": "high",
    "GA402": "high",
    "GA403": "high",
    "GA404": "high",
    "GA405": "high",
    "GA406": "high",
    "GA201": "medium",
    "GA205": "medium",
    "GA206": "medium",
    "GA207": "medium",
    "GA208": "medium",
    "GA302": "medium",
    "GA304": "medium",
    "GA407": "medium",
    "GA408": "medium",
    "GA409": "medium",
    "GA303": "low",
    "GA306": "low",
}
_FAMILY_SEVERITY = {"graph-break": "high", "lifecycle": "medium", "backward": "high", "numerical": "high"}

CLASSES = (
    "confirmed graph break",
    "confirmed lifecycle defect",
    "confirmed numerical instability",
    "suspicious but unproven",
)


def severity(f) -> str:
    if "raises" in f.message and f.confidence == "confirmed":
        return "critical"
    return _SEVERITY.get(f.code, _FAMILY_SEVERITY.get(f.family, "medium"))


def classify(f) -> str:
    if f.confidence != "confirmed":
        return CLASSES[3]
    if f.family == "graph-break":
        return CLASSES[0]
    if f.family == "numerical":
        return CLASSES[2]
    return CLASSES[1]  # lifecycle, and backward semantics (the order and reuse of backward passes)


def rank_key(f):
    return (
        SEVERITIES.index(severity(f)),
        0 if f.confidence == "confirmed" else 1,
        f.span.path,
        f.span.line,
        f.span.col,
        f.code,
    )


# Why the finding is not one of the valid patterns the rule was written to leave alone: each
# sentence names the look-alike and the fact of the training-step model that rules it out.
_WHY = {
    "GA101": "The parameters behind the cut are ones {opt} changes for this loss, and they reach it by no other "
    "path: not a target or EMA network (no optimizer would hold them), not a stop-gradient branch "
    "(SimSiam/BYOL keep a second path), not a GAN sample detached for the other player's step (their "
    "optimizer is the one stepped here), not logging (the value feeds the loss).",
    "GA102": "backward() is called on the value computed under the no-grad context: evaluation under "
    "`no_grad` is valid only when no backward() follows.",
    "GA103": "The Python number feeds the loss that backward() runs on: `.item()` for logging or metrics, "
    "after the loss, is the valid use; a mask count used as a constant divisor carries no parameter.",
    "GA104": "The tensor rebuilt with `torch.tensor(...)` carries gradient from optimized parameters into the "
    "loss; rebuilding labels or data, which carry none, is the valid use.",
    "GA105": "The array comes from a tensor that carries gradient from optimized parameters and goes back "
    "into the loss; NumPy on labels, data or logged values is the valid use.",
    "GA106": "`requires_grad` is set on a fresh tensor with no history from parameters that stands in for "
    "the loss; hand-made weights given to an optimizer are the valid use.",
    "GA107": "The frozen parameters are what the optimizer is given to train (all of them, or a group of "
    "their own); a frozen backbone beside an optimizer over what still requires grad is the valid use.",
    "GA108": "The parameters receive gradient from the loss and no param group holds them; frozen parameters, "
    "target networks and groups added with `add_param_group` are the valid cases.",
    "GA109": "The container holds modules or trainable tensors on an `nn.Module`, so `.parameters()` never "
    "yields them; buffers and constants kept in lists hold nothing trainable.",
    "GA110": "An earlier op saved the tensor for its backward and it changes in place before backward(); "
    "in-place changes of tensors no op saved, or after backward(), are valid.",
    "GA111": "The leaf is changed outside `torch.no_grad()`; the same update inside `no_grad` is the valid "
    "manual step.",
    "GA112": "The non-differentiable result is the only path from the parameters to the loss; metrics, "
    "straight-through estimators and indices used to gather from a differentiable tensor are valid.",
    "GA113": "The tensor handed on as a weight is the result of an op, not the leaf created with `requires_grad=True`.",
    "GA201": "Nothing clears the gradients in the loop that steps every iteration; deliberate accumulation "
    "steps and clears under a counter condition.",
    "GA202": "Gradients are cleared between backward() and step() of the same iteration.",
    "GA203": "step() runs before the iteration's first backward().",
    "GA204": "No step() of the optimizer is reached after this backward().",
    "GA205": "The loss is not divided by the number of micro-batches accumulated; summing may be intended, "
    "hence suspicious.",
    "GA206": "The optimizer, scheduler or scaler is constructed inside the loop, so its state restarts.",
    "GA207": "scheduler.step() runs before optimizer.step() in the iteration.",
    "GA208": "The clipping call is outside the window between backward() and step() (or before unscale_()).",
    "GA209": "The dropped loss is the only source of gradient for parameters an optimizer holds; logged "
    "losses whose parameters also get gradient from the backpropagated loss are valid.",
    "GA301": "A second backward() reaches a graph already freed: carried state is not detached at the "
    "iteration boundary.",
    "GA302": "`retain_graph=True` keeps a graph no later backward() of the iteration needs.",
    "GA303": "Tensors with history are accumulated across iterations; `.item()`/`.detach()` values are valid.",
    "GA304": "One optimizer's loss writes into gradients another optimizer then applies, with no detach or "
    "clearing in between; a GAN's `fake.detach()` in the discriminator step is the valid form.",
    "GA305": "backward() without `gradient=` on a tensor that is not a scalar.",
    "GA306": "`.grad` of a non-leaf tensor is read without `retain_grad()`.",
    "GA401": "The log's argument can be exactly 0 and no eps or clamp guards it.",
    "GA402": "The divisor can be 0 and no eps or clamp guards it.",
    "GA403": "The square root's argument can be 0, where its gradient is infinite.",
    "GA404": "exp of unbounded activations in a normalisation; exp of log-probability differences or "
    "log-variances is valid.",
    "GA405": "The branch `torch.where` does not select is non-finite for some elements, so the gradient is NaN.",
    "GA406": "A fully masked row makes softmax non-finite.",
    "GA407": "The loss that expects logits is given probabilities.",
    "GA408": "`BCELoss` on `sigmoid(logits)` saturates; `BCEWithLogitsLoss` does not.",
    "GA409": "float16 autocast without a working GradScaler step/update sequence.",
}


def why_not_lookalike(f, opt_name: str = "") -> str:
    text = _WHY.get(f.code)
    if text is None:
        return f"The conditions of {f.code} held on the training-step model: {f.name}."
    return text.format(opt=f"`{opt_name}`" if opt_name else "the optimizer")
