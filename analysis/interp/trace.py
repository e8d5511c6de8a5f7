"""What the interpreter records while it replays a program: cuts, backward calls, events.

Records hold live heap objects plus snapshots of the state the rules need (which leaves were
frozen, what each optimizer held) taken at the moment the event happened.
"""

from __future__ import annotations

import ast
import itertools
from enum import Enum
from typing import Any

from .objects import Made, Obj, Site, next_oid
from .values import V


class EventKind(str, Enum):
    """What a recorded event of a training step is (Event.kind, and a step's kind: backward or grad).
    Members are strings too: they compare, hash and print as their value."""

    ZERO_GRAD = "zero_grad"
    BACKWARD = "backward"
    GRAD = "grad"
    STEP = "step"
    CLIP = "clip"
    OPT_NEW = "opt_new"
    SCHED_NEW = "sched_new"
    SCHED_STEP = "sched_step"
    SCALER_NEW = "scaler_new"
    SCALER_SCALE = "scaler_scale"
    SCALER_STEP = "scaler_step"
    SCALER_UPDATE = "scaler_update"
    UNSCALE = "unscale"
    ADD_PARAM_GROUP = "add_param_group"
    AUTOCAST = "autocast"
    # a leaf changed in place by an amount read from its own .grad (`w.data.sub_(lr * w.grad)`): an
    # update written by hand, an optimizer's step without the optimizer
    BY_HAND = "by_hand"

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


# how sure a record is: what the rules report as a finding's confidence
CONFIRMED, SUSPICIOUS = "confirmed", "suspicious"

_cut_ids = itertools.count(1)


class Cut:
    """Gradient dropped at one place: `kind` says how, `removed` which leaves lost their path."""

    __slots__ = ("cid", "detail", "kind", "note", "receiver", "removed", "removed_weak", "role", "site", "terms", "top")

    # kinds and the rule that owns them
    DETACH, DATA, NOGRAD, SCALAR, REWRAP, NUMPY, NONDIFF, ZEROGRAD = (
        "detach",
        "data",
        "nograd",
        "scalar",
        "rewrap",
        "numpy",
        "nondiff",
        "zerograd",
    )
    # a draw from a torch distribution (`dist.sample()`): GA112's when it is the only path to a loss,
    # unless made an action (note 'action': a Python number or an array handed to an environment)
    SAMPLE = "sample"

    def __init__(self, kind, site: Site, removed, removed_weak, detail="", receiver=None):
        self.cid = next(_cut_ids)
        self.kind = kind
        self.site = site
        self.removed = removed
        self.removed_weak = removed_weak
        self.detail = detail  # the spelling: '.detach()', '.item()', 'torch.no_grad()'
        self.receiver = receiver  # ast node of the cut expression's receiver (for fixes)
        self.top = False  # it also removed origins the engine could not name
        self.note = ""  # 'list': the cut value was a list of tensors; 'action': a draw acted on
        # where the cut value met the rest of the loss: 'target' (a loss function's target), 'weight'
        # (a factor scaling a term that carries gradient of its own), '' (anything else): a
        # stop-gradient in such a place is the usual idiom, not the break (see cut_findings);
        # 'dead': a whole term added to one that carries gradient, cut from all it carried (a
        # constant in the loss: it trains nothing, whatever else reaches the same parameters)
        self.role = ""
        self.terms: frozenset = frozenset()  # loss terms whose way to the loss went through here

    def __hash__(self):
        return self.cid

    def __eq__(self, other):
        return self is other

    def __repr__(self):
        return f"Cut({self.kind}@{self.site!r} {sorted(u.name for u in self.removed)})"

    def narrowed(self, removed: frozenset) -> Cut:
        """The same cut, claiming only `removed` (those of its leaves that reach nothing else)."""
        c = Cut(self.kind, self.site, removed, frozenset(), self.detail, self.receiver)
        c.top, c.note, c.role, c.terms = self.top, self.note, self.role, self.terms
        return c


class LossRec:
    """A loss computed in the program: a loss function's or criterion's result, or a value bound to
    a name that says it is a loss. Whether it reaches a backward() is read off BackwardRec.terms."""

    __slots__ = ("ctx", "func", "label", "org", "seq", "site", "weak")

    def __init__(self, seq, site, ctx, org, weak, label, func):
        self.seq = seq
        self.site = site  # the statement computing it
        self.ctx = ctx
        self.org = org  # leaves it certainly carries gradient from
        self.weak = weak
        self.label = label  # 'F.mse_loss', 'criterion', 'value_loss'
        self.func = func  # qualified name of the function computing it

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class CarryRec:
    """An assignment, in a loop's later run, of a value whose graph reaches into an earlier
    iteration (`h = rnn(x, h)` without a detach)."""

    __slots__ = ("ctx", "held", "site", "stale")

    def __init__(self, site, stale, ctx, held=frozenset()):
        self.site = site  # the assignment statement
        self.stale = stale  # SaveRecs of earlier iterations the value still holds
        self.ctx = ctx
        self.held = held  # every SaveRec the value holds, this iteration's included


class AccRec:
    """A tensor with history accumulated into state that outlives the iteration. Used as a loss
    term token: when it reaches a backward(), the accumulation is a loss, not a log."""

    __slots__ = ("ctx", "handed", "held", "keeper", "org", "outlived", "reset", "site", "tensor")

    def __init__(self, site, ctx, org, tensor=True, outlived=None, held=False, handed=None, keeper="", reset=None):
        self.site = site
        # the statement that resets the state under a condition (`if i % n == 0: total = 0`): the
        # graphs of the iterations between two resets stay alive; None: never reset in the loop
        self.reset = reset
        self.keeper = keeper  # the framework that keeps the value (Lightning's epoch outputs), or ""
        # the call by which the training code handed the value to the helper that keeps it (an
        # AverageMeter's update), or None
        self.handed = handed
        self.ctx = ctx
        self.org = org
        self.tensor = tensor  # known to be a tensor (not a dict or an object holding one)
        # a part of a tuple, dict or list stored (`data.append((r, prob))`): a loss of it counts as
        # backpropagating the history only from another iteration (the kept transitions of an
        # episode), not the step's own loss appended and backpropagated in the same one
        self.held = held
        # (key, Site of the loop) of the enclosing loop iterations the state predates (None: not
        # known, the innermost)
        self.outlived = outlived

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class CrossRec:
    """A module applied to a tensor carrying gradient from parameters it does not own."""

    __slots__ = ("arg", "ctx", "foreign", "own", "seq", "site")

    def __init__(self, seq, site, own, foreign, ctx):
        self.seq = seq
        self.site = site  # the statement applying it
        self.own = own
        self.foreign = foreign
        self.ctx = ctx
        self.arg: Site | None = None  # the argument that brought the foreign gradient


class ScoreRec:
    """A log-probability times a weight that carries gradient from parameters the log-probability
    does not reach (`-log_prob * (ret - value)`): the policy-gradient term trains what made the
    weight (GA304). `token` travels in the product's risks: the backward()s whose loss holds it."""

    __slots__ = ("seq", "site", "token", "units")

    def __init__(self, seq, site, units, token):
        self.seq = seq
        self.site = site  # the weight operand
        self.units = units
        self.token = token


class GradReadRec:
    """`.grad` read on a computed tensor that has no retain_grad()."""

    __slots__ = ("ctx", "org", "site", "stmt", "storages")

    def __init__(self, site, stmt, org, ctx, storages=frozenset()):
        self.site = site  # the `.grad` attribute expression
        self.stmt = stmt
        self.org = org
        self.ctx = ctx
        self.storages = storages


_RISK_SEQ = itertools.count()


class RiskRec:
    """A numerical hazard at an op (GA401-GA408): NaN or inf appears there for some inputs. Latent
    ones (`kind` 'exp', 'neginf') become a hazard only through a later use (see numerics.py)."""

    __slots__ = ("code", "confidence", "constant", "ctx", "detail", "inf_sign", "latent", "seq", "site")

    def __init__(self, code, site, detail, confidence, ctx, latent=False, constant=False, inf_sign=0):
        self.seq = next(_RISK_SEQ)  # the order hazards were met in: the latest exp of a value is its last
        self.code = code  # 'GA401'..'GA408', or the latent kind
        self.site = site
        self.detail = detail
        self.confidence = confidence
        self.ctx = ctx
        self.latent = latent
        self.constant = constant  # its operands carry no gradient (data, statistics, weights from counts)
        # a division `c / d` with c a nonzero number and d >= 0: where d is 0 the quotient is inf
        # of this sign (+1 / -1), never NaN; 0 when not known
        self.inf_sign = inf_sign

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class NonLeafRec:
    """A tensor made with requires_grad=True, passed through an op, then used as a trainable weight
    (given to an optimizer, or updated from its own .grad): GA113."""

    __slots__ = ("ctx", "site", "stmt", "unit", "use")

    def __init__(self, site, stmt, unit, use, ctx):
        self.site = site  # the op that made the non-leaf
        self.stmt = stmt  # where it is used as a weight
        self.unit = unit  # the leaf it came from
        # 'optimizer' | 'update' | 'module' (kept on a module; '-maybe': under a condition; '-convert': a .to())
        self.use = use
        self.ctx = ctx


class SaveRec:
    """A differentiable op saved `storage` (a computed tensor or a parameter leaf, at `version`)
    for its backward: a node of the graph that a backward() frees."""

    __slots__ = ("born", "certain", "ctx", "op", "path", "site", "storage", "version")

    def __init__(self, storage, version, site, op, ctx=(), certain=True, path=()):
        # when the op ran, on the objects' clock: an op that ran before a tensor existed is not on
        # any path from it (torch.autograd.grad(out, [x_adv]) frees only the graph down to x_adv)
        self.born = next_oid()
        Made.stateful += 1
        self.storage = storage
        self.version = version
        self.site = site
        self.op = op
        self.ctx = ctx
        self.certain = certain  # the op certainly saved it (what required grad is known, not guessed)
        self.path = path  # (branch key, arm, len(ctx)) of the conditions the op ran under

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


class Event:
    """One lifecycle call in program order: zero_grad, backward, step, ..."""

    __slots__ = ("ctx", "detail", "guarded", "kind", "obj", "path", "seq", "site", "units")

    def __init__(self, seq, kind, site, ctx, obj=None, detail=None, guarded=False, path=(), units=None):
        self.seq = seq
        self.kind = kind
        self.site = site
        self.ctx = ctx
        self.obj: Any = obj  # what it concerns: an OptimObj, a BackwardRec, a RiskRec, a scheduler, ...
        self.detail = detail
        self.guarded = guarded
        self.path = path  # (branch key, arm, len(ctx)) of the conditions it happened under
        self.units = units  # the leaves it concerns (cleared, stepped, clipped), when known

    def __repr__(self):
        return f"Event({self.kind} {self.obj!r} @{self.site!r})"


class BackwardRec:
    """A `backward()` (or `autograd.grad`) and the state around it."""

    __slots__ = (
        "ctx",
        "event",
        "frozen",
        "func",
        "gradient",
        "in_eval",
        "inputs",
        "kind",
        "loss",
        "loss_expr",
        "nograd",
        "optimizers",
        "retain",
        "retain_node",
        "seq",
        "site",
        "stepped_objs",
        "versions",
    )

    def __init__(self, seq, site, ctx, loss, kind, loss_expr, func):
        self.seq = seq
        self.site = site
        self.ctx = ctx
        self.loss = loss
        self.kind = kind  # 'backward' | 'grad'
        self.inputs: V | None = None  # autograd.grad inputs
        self.frozen = {}  # Unit -> frozen state at this moment
        self.optimizers = []  # (OptimObj, frozenset units) live at this moment
        self.versions = {}  # SaveRec -> storage version now
        self.loss_expr = loss_expr  # source text of the loss
        self.func = func  # qualified name of the function holding the call
        # set by recording.do_backward right after: the event refers back to this record
        self.event: Event = None  # type: ignore[assignment]
        self.nograd: Site | None = None
        self.retain = False  # retain_graph=True (or create_graph): the graph is not freed
        self.retain_node: ast.expr | None = None  # the retain_graph= keyword's value node
        self.gradient = False  # gradient= given (a non-scalar loss may be meant)
        self.stepped_objs: tuple[Obj, ...] = ()  # the optimizers stepped for it (set by the model builder)
        self.in_eval: frozenset = frozenset()  # reached Units whose module is certainly in eval() mode at the call


class FreezeRec:
    __slots__ = ("anchor", "ctx", "seq", "site", "strong", "targets", "units", "value")

    def __init__(self, seq, units, site, anchor, value, strong, ctx, targets):
        self.seq = seq
        self.units = units
        self.site = site  # the statement that changed requires_grad
        self.anchor = anchor  # where to report it (a helper's call site, see Interpreter)
        self.value = value  # False: freeze, True: unfreeze
        self.strong = strong
        self.ctx = ctx
        self.targets = targets


class InplaceRec:
    """An in-place change or rebinding of a tensor."""

    __slots__ = (
        "ctx",
        "cuts",
        "detail",
        "kind",
        "nograd",
        "releafed",
        "seq",
        "site",
        "stmt",
        "storage",
        "through",
        "units",
        "version",
    )

    LEAF, REBIND = "leaf", "rebind"

    def __init__(self, seq, kind, site, units, nograd, storage=None, version=0, detail="", ctx=(), stmt=None):
        self.seq = seq
        self.kind = kind
        self.site = site
        self.units = units
        self.nograd = nograd
        self.storage = storage
        self.version = version
        self.detail = detail
        self.ctx = ctx
        self.stmt = stmt
        self.cuts: frozenset = frozenset()  # REBIND: the cuts of the new value that dropped the leaves
        self.releafed = False  # REBIND: requires_grad was set again on the new value (a re-leaf)
        # LEAF: the conversion (`to`) whose result the target is, which returns the leaf itself when
        # nothing needs converting (on the CPU, already that dtype); "" for the leaf itself
        self.through = ""


class UnregRec:
    """A module attribute that hides modules or trainable tensors from `.parameters()`."""

    __slots__ = ("attr", "container", "fresh", "kind", "owner", "site", "units", "value_node")

    def __init__(self, site, owner, attr, kind, container, fresh, value_node=None):
        self.site = site
        self.owner = owner
        self.attr = attr
        self.kind = kind  # 'list' | 'dict' | 'tuple' | 'tensor'
        self.container = container
        self.units = []
        self.fresh = fresh  # its contents were created in __init__ itself
        self.value_node = value_node


class UnitNew:
    """A module or parameter created while an optimizer already existed."""

    __slots__ = ("ctx", "in_loop", "seq", "site", "units")

    def __init__(self, seq, site, units, ctx, in_loop):
        self.seq = seq
        self.site = site
        self.units = units
        self.ctx = ctx
        self.in_loop = in_loop


class UnseenRec:
    """Code the engine could not see that was handed parameters, modules or optimizers: a call into
    outside code, a library method it has no model of, a call not followed (budget, recursion), a
    dynamic attribute (`getattr`/`setattr` with a computed name), `exec`/`eval`. Whatever it got it
    may have changed; the premises of findings about those objects lean on it (model/premises)."""

    __slots__ = ("ctx", "detail", "everything", "kind", "objs", "path", "seq", "site")

    CALL, METHOD, NOT_FOLLOWED, DYNAMIC, EXEC = "call", "method", "not-followed", "dynamic", "exec"
    BUDGET = "budget"  # not followed because a budget ran out: the engine's own analysis stopped there

    def __init__(self, seq, kind, site, ctx, objs, detail="", path=(), everything=False):
        self.seq = seq
        self.kind = kind
        self.site = site  # the call (or the builtin call) the engine could not see into
        self.ctx = ctx
        self.objs = objs  # heap objects it was handed: modules, leaves, optimizers, parameter iterators
        self.detail = detail  # its source text
        self.path = path  # (branch key, arm, len(ctx)) of the conditions it ran under
        self.everything = everything  # exec/eval: it may reach any object of the program


class Trace:
    def __init__(self):
        self.events: list[Event] = []
        self.backwards: list[BackwardRec] = []
        self.optimizers: list = []  # OptimObj, every one built
        self.freezes: list[FreezeRec] = []
        self.inplace: list[InplaceRec] = []
        self.unregs: list[UnregRec] = []
        self.new_units: list[UnitNew] = []
        self.manual_updates: list = []  # (Unit, Site, seq)
        self.resets: list = []  # (unit oids, seq): reset_parameters() on a module
        self.maybe_cleared: set = set()  # SaveRecs held by a list cleared under a condition
        # SaveRecs a name kept after a loop only for the case it runs no iteration (every iteration
        # assigns it afresh): a graph reached through them is reached only if the loop is empty
        self.empty_loop_saves: set = set()
        self.element_saves: set = set()  # SaveRecs of elements a loop takes one by one from a container of several
        self.writes: list = []  # (Unit, Site, ctx): changed in place by any means (`.data`, copy_, lerp_...)
        self.grad_writes: list = []  # Units whose .grad is given a value by hand (`p.grad.add_(g)`, `p.grad = g`)
        self.grad_sets: list = []  # Units whose .grad a loop replaces by assignment (`p.grad = g`)
        self.leaf_grad_reads: list = []  # plain leaves (not module parameters) whose .grad the code reads
        self.losses: list[LossRec] = []
        self.carries: list[CarryRec] = []
        self.accums: list[AccRec] = []
        self.crossings: list[CrossRec] = []
        # (first, end, branch keys): the events[first:end] of a call that also stands for the same call
        # on the other arm of those branches (repeats.py)
        self.shared_arms: list[tuple[int, int, frozenset]] = []
        # (root index, what a run on unknown arguments took from an annotation): the training steps
        # of that root rest on it
        self.assumed: list[tuple[int, str]] = []
        self.scores: list[ScoreRec] = []
        # the parameters a regression loss (mse, smooth L1, a square) is taken of: a critic's value loss
        self.regressed: set = set()
        self.grad_reads: list[GradReadRec] = []
        self.branch_tests: dict = {}  # branch key -> (test node, innermost loop node of its frame)
        self.branch_literals: dict = {}  # branch key -> (literals of its true arm, of its false arm) (settings.py)
        self.implies: dict = {}  # attribute atom -> [literals each store of a value that may be true ran under]
        self.risks: list = []  # RiskRec, every one made
        self.nonleaf: list = []  # NonLeafRec
        # in-place changes of a view a multi-output op returned (Mark.SPLIT_VIEW): (Site, certain)
        self.split_writes: list = []
        self.incomplete = False  # a budget was hit: some calls were not followed
        self.libraries: list = []  # the library models built (ModuleObj with `lib`), in order
        self.unseen: list[UnseenRec] = []  # code not seen that was handed parameters, modules or optimizers
        # (result V, qualified name, SaveRec -> storage version at its end, the function's Site): forwards
        # nothing ran, run alone (Interpreter.run_units)
        self.units: list = []
        # (file, qualified name) of every function the run followed, not counting units run alone: a
        # function another file's analysis runs with real arguments (check/drivers.py)
        self.ran: set[tuple[str, str]] = set()
        # (Site, parameter Units) of layers built while a forward runs alone (interpreter.run_units),
        # and, kept from those runs, (Site, Units, the unit's qualified name) of the ones whose
        # parameters reach the unit's result: new weights at every call (GA108)
        self.forward_new: list = []
        self.unit_new: list = []
        # (Cut, the unit's qualified name): a term of a unit's result made a constant (`float(t)`,
        # `torch.tensor(t.item())`) and added to terms that carry gradient (role 'dead')
        self.unit_cuts: list = []
        self.dead_cuts: list = []  # Cuts tagged 'dead' while a unit runs alone, not yet given to it
        self.rewrapped: list = []  # parameters made from values with gradient while a unit runs alone
