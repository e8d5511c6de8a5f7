"""What the probe records, as plain data: parameters, backward passes, optimizer steps, problems."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .hub import Site


class GradFlowError(AssertionError):
    """A gradient-flow expectation that the recorded steps contradict."""


@dataclass
class Problem:
    kind: str  # no-gradient | never-changes | frozen-group | outside-optimizer | nonfinite | stale | ...
    message: str
    names: tuple = ()


@dataclass
class ParamRecord:
    name: str
    module: str
    tensor: Any  # a torch.Tensor (torch is imported only when a probe runs)
    initial: Any  # a copy taken when tracking began
    hidden: bool = False  # held in a plain list/dict of a module: .parameters() misses it
    requires_grad: bool = True  # at the start
    grads: set = field(default_factory=set)  # passes that delivered a gradient
    nonzero: set = field(default_factory=set)  # ... a gradient with a non-zero entry
    sites: set = field(default_factory=set)  # call sites (path, line) of passes that delivered a non-zero one
    nonfinite: int = 0  # first pass with a non-finite gradient (0: none)
    norm: float = 0.0  # norm of the last gradient
    pending: list = field(default_factory=list)  # passes added to .grad since it was last cleared
    stepped: int = 0  # optimizer steps that held it
    changed_in_step: bool = False  # some step() changed it
    changed: bool | None = None  # it differs from `initial` when the probe closed
    end_finite: bool = True
    requires_grad_end: bool = True
    optimizers: list = field(default_factory=list)
    hooked: bool = False
    owned: bool = True  # named after a watched module or tensor (not only an optimizer slot)


@dataclass
class PassRecord:
    index: int
    kind: str  # backward | grad
    site: Site
    loss_finite: bool
    loss: float | None
    event: int


@dataclass
class StepRecord:
    optimizer: str
    index: int  # this optimizer's step count (1-based)
    after_pass: int  # the last backward pass before it
    total_norm: float
    module_norms: dict  # module -> gradient norm
    no_grad: list  # names of params that require grad and had .grad None
    changed: list
    unchanged: list
    stale: list  # (name, pass index, how) gradients left over from an earlier step
    nonfinite: list
    event: int
