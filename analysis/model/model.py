"""The training-step model: what the engine learned about a program, as frozen data.

One structure for every consumer: the rules, the CLI and audit report, the language server's
code lens and hover, and the probe generator. Built from the interpreter's trace by build.py.
Lines are 1-based; columns are 0-based character offsets.
"""

from __future__ import annotations

from ..interp.trace import EventKind
from ..source.prebuilt import dataclass, field
from ..source.span import Span

__all__ = ["EventKind", "Span"]  # re-exported: the model's positions and event kinds


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter leaf, or an opaque stand-in for the parameters of an unseen module."""

    # the key alone is hashed: one Param per leaf in a model (build.py keys them by it), and the
    # rules put millions of them in sets on large programs, where hashing every field was a tenth
    # of the time
    key: int
    name: str = field(hash=False)  # model.encoder.0.weight
    module: str = field(hash=False)  # model.encoder.0
    kind: str = field(hash=False)  # 'param' | 'leaf' | 'input' | 'fresh' | 'opaque'
    span: Span | None = field(hash=False)  # where it was created
    origin: str = field(default="", hash=False)  # 'copy' (deepcopy of a module), 'loaded' (load_state_dict target), ''
    repeated: bool = field(default=False, hash=False)  # made in a loop the engine ran once: there may be more like it
    closed: bool = field(default=False, hash=False)  # opaque, for a library model's unseen parameters and no known one
    in_loop: bool = field(default=False, hash=False)  # made inside a loop (a leaf made each iteration is an input)

    @property
    def opaque(self) -> bool:
        return self.kind == "opaque"


@dataclass(frozen=True, slots=True)
class Cut:
    """A place where gradient was dropped on the way to a loss."""

    kind: str  # detach | data | nograd | scalar | rewrap | numpy | nondiff
    span: Span  # the cutting expression (or the no_grad item / decorator)
    detail: str  # '.detach()', '.item()', 'torch.no_grad()', ...
    removed: frozenset[Param]  # whose path through here was cut
    removed_weak: frozenset[Param]  # that may have been cut (seen through unknown calls)
    top: bool  # it also cut origins the engine could not name
    receiver: Span | None = None  # the expression the cut applied to (for fixes)
    note: str = ""  # 'list': the cut value was a list of tensors
    role: str = ""  # 'target' | 'weight': where it met the loss, a stop-gradient idiom


@dataclass(frozen=True, slots=True)
class Group:
    params: frozenset[Param]
    exact: bool  # False: the engine could not tell exactly which parameters
    filtered: bool  # built with a requires_grad filter
    span: Span
    options: tuple[str, ...] = ()  # the group's option names ('lr', 'momentum', ...)
    from_arg: bool = False
    sources: tuple[str, ...] = ()  # module paths the group's .parameters() came from


@dataclass(frozen=True, slots=True)
class Optimizer:
    key: int
    name: str
    type: str
    span: Span
    seq: int
    groups: tuple[Group, ...]
    complete: bool  # every group is known exactly
    in_loop: bool = False
    escaped: bool = False  # handed to code the engine does not see (it may step or clear it there)
    fresh_params: bool = False  # built in a loop iteration that also built all of its parameters
    loops: tuple[int, ...] = ()  # iteration keys of the loops around its construction, outermost first
    stateless: bool = False  # keeps no state between steps (plain SGD without momentum)
    # not complete only for the parameters of arguments of the function that builds it: those were
    # made before the call, so never anew with it in a loop there
    args_only: bool = False
    # a value the engine did not see made, taken for an optimizer because both its zero_grad() and
    # step() are called (a trainer's argument): of parameters it cannot name
    duck: bool = False
    # why it is taken for an optimizer like torch's though its own step() was not read ('' if it was
    # torch's or one the engine models): the premises of what it steps or clears say so
    assumed: str = ""

    @property
    def params(self) -> frozenset[Param]:
        out: frozenset[Param] = frozenset()
        for g in self.groups:
            out |= g.params
        return out


@dataclass(frozen=True, slots=True)
class Event:
    kind: str  # zero_grad | backward | grad | step | sched_step | clip | scaler_* | opt_new ...
    span: Span
    seq: int
    target: str = ""  # the optimizer / scheduler / module name
    target_key: int = 0
    guarded: bool = False  # under a condition inside the iteration it is listed for (a Step's events)
    via: tuple[Span, ...] = ()  # call sites of helpers the event happened in, outermost first
    detail: str = ""  # 'closure' (a step running a closure), 'scaler', 'grad=None', the clip function
    params: frozenset[Param] = frozenset()  # the parameters it clears, steps or clips
    loops: tuple[int, ...] = ()  # iteration keys of the enclosing loop iterations, outermost first
    conds: tuple[tuple[int, int, int], ...] = ()  # (branch key, arm, loop level) of the conditions it ran under
    # (setting, truth) its conditions hold, with what a setting's truth implies (interp/settings.py)
    literals: frozenset[tuple[int, bool]] = frozenset()
    # branch keys among conds whose two arms both make this call (`if single: run(a) else: run(b)`):
    # they do not condition it, though each arm's run stays apart from the other's (exclusive)
    shared: frozenset[int] = frozenset()

    def guards_in(self, level: int) -> tuple[tuple[int, int], ...]:
        """The conditions inside the iteration of the loop at nesting `level` (1: outermost)."""
        return tuple((k, a) for k, a, lvl in self.conds if lvl >= level and k not in self.shared)

    def exclusive(self, other: Event) -> bool:
        """The two run on different arms of one condition: never in the same pass."""
        mine = {k: a for k, a, _ in self.conds}
        if any(k in mine and mine[k] != a for k, a, _ in other.conds):
            return True
        # or on settings that cannot hold together (`use_amp` is set only when `deepspeed` is not)
        return bool(self.literals) and any((s, not t) in self.literals for s, t in other.literals)


@dataclass(frozen=True, slots=True)
class Stale:
    """Graph an earlier backward() already went through, reached again by this one's loss."""

    kind: str  # 'freed' (torch raises) | 'retained' (kept alive by retain_graph=True)
    by: int  # seq of the earlier backward
    by_span: Span
    earlier_iteration: bool  # built in an earlier iteration (carried state), not shared in this one
    modified: bool  # a tensor it saved was changed in place since (a step() of the parameter)
    op_span: Span | None  # an op whose saved tensors are reached again
    carry: Span | None  # the assignment that carried the graph into this iteration
    by_stepped: tuple[int, ...] = ()  # optimizer keys the earlier backward was stepped for
    # made before a loop, and reached again by the backward of each of its iterations (retained)
    before_loop: bool = False
    # reached only through a name a loop keeps from before it when it runs no iteration (`for s in
    # scores: loss = f(s)`, then `loss` used): torch raises only if that loop is ever empty
    empty_loop: bool = False


@dataclass(frozen=True, slots=True)
class Scheduler:
    key: int
    name: str
    type: str
    span: Span
    optimizer: int  # key of its optimizer (0: unknown)
    counter: bool  # its schedule depends on how many times step() ran


@dataclass(frozen=True, slots=True)
class Accumulation:
    """A tensor with history accumulated into state that outlives the loop iteration."""

    span: Span
    params: frozenset[Param]
    backpropagated: bool
    loops: tuple[int, ...]
    tensor: bool = True  # the value is known to be a tensor (`.detach()` applies to it)
    # (iteration key, the loop statement) of the enclosing loop iterations the state predates (None:
    # not known; the innermost)
    outlives: tuple[tuple[int, Span], ...] | None = None
    # the call by which the training code handed the value to the helper keeping it (`meter.update(loss)`)
    handed: Span | None = None
    keeper: str = ""  # the framework that keeps it, by its documented behaviour (Lightning)
    reset: Span | None = None  # where the state is reset under a condition (kept between resets)


@dataclass(frozen=True, slots=True)
class Crossing:
    """A module applied to a tensor carrying gradient from parameters it does not own."""

    seq: int
    span: Span | None
    own: frozenset[Param]
    foreign: frozenset[Param]
    loops: tuple[int, ...]
    arg: Span | None = None  # the argument that brought the foreign gradient


@dataclass(frozen=True, slots=True)
class ScoreWeight:
    """A log-probability times a weight that carries gradient from parameters the log-probability
    does not reach (`-log_prob * (ret - value)`): the policy-gradient term trains them (GA304)."""

    span: Span  # the weight
    params: frozenset[Param]
    backwards: tuple[int, ...]  # Step.seq of the backward()s whose loss holds the term


@dataclass(frozen=True, slots=True)
class Risk:
    """A numerical hazard at an op (GA401-GA408)."""

    code: str
    span: Span
    detail: str
    confidence: str
    reached: bool  # the hazard flows into a loss given to backward()
    loops: tuple[int, ...] = ()
    # the forward it was seen in, run on its own because no training step reached it ('' when one did)
    unit: str = ""
    within: str = ""  # with `unit`: the function holding the op, when the unit called it


@dataclass(frozen=True, slots=True)
class NonLeaf:
    """A requires_grad tensor passed through an op, then used as a trainable weight (GA113)."""

    span: Span  # the op that made it a non-leaf
    stmt: Span  # where it is used as a weight
    params: frozenset[Param]  # the leaf it was made from
    use: str  # 'optimizer' | 'update' | 'module' (kept on a module; '-maybe': under a condition; '-convert': a .to())


@dataclass(frozen=True, slots=True)
class GradRead:
    """`.grad` read on a non-leaf tensor with no retain_grad()."""

    span: Span
    stmt: Span
    params: frozenset[Param]
    loops: tuple[int, ...]
    made: frozenset[Span] = frozenset()  # where the tensor read was computed


@dataclass(frozen=True, slots=True)
class InplaceHit:
    """An in-place change to a tensor that a differentiable op saved before the backward."""

    span: Span  # the in-place statement or call
    op_span: Span  # the op that saved the tensor
    op: str


@dataclass(frozen=True, slots=True)
class SteppedSave:
    """A parameter the loss's graph saved, changed in place after the save and before the backward
    (by an optimizer's step(), or a write to the parameter): torch raises at that backward."""

    span: Span  # the change (the `.step()` call)
    op_span: Span  # the op that saved the parameter
    param: Param


@dataclass(frozen=True, slots=True)
class Reason:
    """Something of a training step the engine did not understand, and why (coverage.py)."""

    what: str  # 'step' (never reached) | 'parameters' (of the loss) | 'optimizer'
    why: str  # 'budget' | 'unresolved call' | 'unknown library' | 'unknown arguments'
    detail: str  # one sentence naming the code: what was not understood and what stopped the engine
    span: Span | None = None  # where: the call not followed, the `.step()` of an unknown optimizer
    budget: str = ""  # why == 'budget': the budget that ran out (a Budgets field, or 'time')


@dataclass(frozen=True, slots=True)
class MissedStep:
    """A `backward()` in code a budget kept the analysis from reaching: found, not understood."""

    span: Span
    function: str  # qualified name of the function holding the call ('<module>' at top level)
    loss: str  # source text of the loss expression
    reasons: tuple  # Reason


@dataclass(frozen=True, slots=True)
class Step:
    """One `backward()` (or `torch.autograd.grad`) and everything around it."""

    span: Span
    kind: str  # 'backward' | 'grad'
    function: str  # qualified name of the function holding the call
    loss: str  # source text of the loss expression
    loss_span: Span | None  # where the loss value was computed
    reached: frozenset[Param]  # the loss certainly reaches
    reached_weak: frozenset[Param]  # it may reach (through calls the engine did not follow)
    top: bool  # it may reach parameters the engine cannot name
    cuts: tuple[Cut, ...]  # merged per (kind, place)
    optimizers: tuple[Optimizer, ...]  # all live at the call
    stepped: tuple[int, ...]  # keys of the optimizers stepped for this loss
    trained: frozenset[Param]  # an optimizer or a manual update changes them for this loss
    trained_known: bool  # every stepped optimizer's groups are known
    frozen: frozenset[Param]  # certainly frozen at the call
    maybe_frozen: frozenset[Param]
    unfrozen_later: frozenset[Param]  # frozen here but unfrozen somewhere later
    inputs: frozenset[Param]  # autograd.grad inputs
    inplace: tuple[InplaceHit, ...]
    events: tuple[Event, ...]  # of one iteration, in order
    loop: Span | None
    fresh: tuple[tuple[Param, tuple[Cut, ...]], ...] = ()  # leaves made from computed values (GA106)
    nograd: Span | None = None
    seq: int = 0  # program order, comparable with Freeze.seq and Optimizer.seq
    iteration: int = 0  # identifies the loop iteration (or run) holding the call
    co_reached: frozenset[Param] = frozenset()  # reached by other losses backpropagated for the same step()
    unseen: str = ""  # the loss is partly built by code the engine did not see (that code, or "?")
    requires_no_grad: bool = False  # the loss certainly does not require grad: backward() raises
    retain: bool = False  # retain_graph=True (or create_graph=True)
    retain_span: Span | None = None
    gradient: bool = False  # gradient= / grad_tensors= given
    nonscalar: bool = False  # the loss is certainly not a single element (shape or reduction='none')
    scaled: bool = False  # the loss is divided by a count or scaled by a constant on some path
    stale: tuple[Stale, ...] = ()
    stepped_saves: tuple[SteppedSave, ...] = ()
    loops: tuple[int, ...] = ()  # iteration keys of the enclosing loop iterations, outermost first
    # 'script': reached when the file runs as a script (top level or from `__main__`);
    # 'function': only in a function nothing in the file calls (run on unknown arguments)
    entry: str = "script"
    # what a function run on unknown arguments took from annotations (`policy` made a `Student`):
    # a finding proven through the step rests on them and is not confirmed
    assumed: tuple[str, ...] = ()
    # the enclosing loop statements, outermost first (one key for every iteration of one loop)
    loop_stmts: tuple[int, ...] = ()
    # Params the loss reaches inside modules held in eval() mode at the call (a perceptual-loss network, a
    # teacher): fixed networks the loss is measured through, not ones meant to train
    in_eval: frozenset[Param] = frozenset()
    unseen_span: Span | None = None  # where `unseen` is
    # what of the step the engine did not understand, and why (coverage.py): empty when it understood
    # the parameters the loss reaches and the optimizer stepped for it
    not_understood: tuple = ()

    @property
    def understood(self) -> bool:
        return not self.not_understood


@dataclass(frozen=True, slots=True)
class LossTerm:
    """A loss computed in the program (a loss function's result, or a value named as a loss)."""

    span: Span  # the statement computing it
    label: str  # 'F.mse_loss', '`criterion`', '`value_loss`'
    function: str
    params: frozenset[Param]  # it certainly carries gradient from
    backpropagated: bool  # some evaluation of it reached a backward() / autograd.grad
    iteration: int = 0  # the loop iteration (or run) computing it, as Step.iteration


@dataclass(frozen=True, slots=True)
class Freeze:
    params: frozenset[Param]
    span: Span  # the statement changing requires_grad
    anchor: Span  # where to report (the call of a helper, when it froze what it was given)
    value: bool  # True: unfreeze
    strong: bool
    seq: int
    targets: tuple[str, ...]  # module paths


@dataclass(frozen=True, slots=True)
class LeafUpdate:
    """A change of a leaf that requires grad: in place outside no_grad, or by rebinding."""

    span: Span
    kind: str  # 'leaf' | 'rebind'
    params: frozenset[Param]
    nograd: bool
    name: str
    op: str
    in_loop: bool = False
    through: str = ""  # a conversion that may return the leaf itself (`.to(device)` on the CPU)


@dataclass(frozen=True, slots=True)
class Unregistered:
    span: Span
    owner: str  # module path
    owner_type: str
    attr: str
    kind: str  # list | dict | tuple | tensor
    params: frozenset[Param]
    fresh: bool
    value_span: Span | None


@dataclass(frozen=True, slots=True)
class NewParams:
    """Parameters created while an optimizer already existed."""

    span: Span
    params: frozenset[Param]
    seq: int
    in_loop: bool


@dataclass(frozen=True, slots=True)
class Unseen:
    """Code the engine could not see that was handed parameters, modules or optimizers (a call into
    a library it has no model of, a method it cannot resolve, a call it did not follow, a dynamic
    attribute, `exec`): what it did to them is not known."""

    kind: str  # 'call' | 'method' | 'not-followed' | 'budget' | 'dynamic' | 'exec'
    span: Span  # the call
    detail: str  # its source text
    seq: int
    params: frozenset[Param]  # the parameters it could reach (through the modules, leaves and iterators given)
    optimizers: frozenset[int]  # keys of the optimizers it was given
    loops: tuple[int, ...] = ()  # iteration keys of the enclosing loop iterations, outermost first
    everything: bool = False  # exec/eval: it may reach any object of the program


@dataclass(frozen=True)
class ProgramModel:
    path: str
    steps: tuple[Step, ...] = ()
    optimizers: tuple[Optimizer, ...] = ()
    freezes: tuple[Freeze, ...] = ()
    leaf_updates: tuple[LeafUpdate, ...] = ()
    unregistered: tuple[Unregistered, ...] = ()
    new_params: tuple[NewParams, ...] = ()
    manual: frozenset[Param] = frozenset()  # updated by hand from their .grad
    incomplete: bool = False
    losses: tuple[LossTerm, ...] = ()  # one per statement
    events: tuple[Event, ...] = ()  # every event of the run, in order
    schedulers: tuple[Scheduler, ...] = ()
    accumulations: tuple[Accumulation, ...] = ()
    crossings: tuple[Crossing, ...] = ()
    scores: tuple[ScoreWeight, ...] = ()
    regressed: frozenset[Param] = frozenset()  # a regression loss (a critic's value loss) is taken of them
    grad_reads: tuple[GradRead, ...] = ()
    counters: frozenset[int] = frozenset()  # branch keys (Event.conds) of conditions that vary between iterations
    # branch key -> what a counter's condition lets through on its true arm: "first" (every iteration
    # but the first: `step > 0`), "bound" (a threshold or period written as a number), "unknown" (one
    # read from a setting: `steps > config.disc_start`), "" otherwise
    counter_kinds: tuple[tuple[int, str], ...] = ()
    # branch key -> (the condition as written, its line): the configuration conditions (not counters)
    # events ran under, so that a finding can say which settings it needs together
    flags: tuple[tuple[int, str, int], ...] = ()
    risks: tuple[Risk, ...] = ()
    # in-place changes of saved tensors inside a forward or loss function run on its own (no step
    # reached it), with the unit's name: any backward through its result would raise
    unit_inplace: tuple[tuple[InplaceHit, str], ...] = ()
    # layers a forward run alone builds and applies (their parameters reach its result): the
    # statement, the parameters, the forward's qualified name
    unit_new: tuple[tuple[Span, frozenset[Param], str], ...] = ()
    # terms of the result of a forward or loss function run alone made constants (`float(t)`,
    # `torch.tensor(t.item())`) and added to terms that carry gradient, with the unit's name
    unit_cuts: tuple[tuple[Cut, str], ...] = ()
    nonleaf: tuple[NonLeaf, ...] = ()
    # in-place changes of a view `split`/`chunk`/`unbind` returned, while it requires grad: (the
    # statement, certain: a parameter flows in and grad mode is known to be on)
    split_writes: tuple[tuple[Span, bool], ...] = ()
    # when a budget cut the analysis short (budget.py): why, the first statement not reached, how many
    incomplete_reason: str = ""
    not_reached: Span | None = None
    not_reached_count: int = 0
    libraries: tuple[LibraryModule, ...] = ()  # the library models the program builds
    missed: tuple = ()  # MissedStep: backward() calls in code a budget kept the analysis from reaching
    unseen: tuple[Unseen, ...] = ()  # code not seen that was handed parameters, modules or optimizers
    written: frozenset[Param] = frozenset()  # changed in place (an update: .data, copy_, lerp_, EMA, _foreach_)
    grad_fed: frozenset[Param] = frozenset()  # given a gradient by hand (`p.grad.add_(g)`, `p.grad = g`)
    # whose .grad a loop replaces by assignment (`p.grad = g`, `p.grad = torch.zeros_like(p)`): what an
    # earlier iteration left in it is gone
    grad_set: frozenset[Param] = frozenset()
    grad_read: frozenset[Param] = frozenset()  # plain leaves whose .grad the code reads (a saliency map)
    # the parameters code the engine could not see may hold: reachable from what any such call was
    # given (through modules, objects' attributes, lists, dicts, optimizers); None: not known, when
    # `exec`/`eval` ran (it may reach any of them), and not computed when every optimizer's param
    # groups are known (the one question it answers, GA108's)
    handed: frozenset[Param] | None = None
    # (file, qualified name) of the functions the run followed (interp Trace.ran)
    ran: frozenset[tuple[str, str]] = frozenset()

    def unseen_reaching(
        self, params: frozenset[Param] = frozenset(), optimizers: frozenset = frozenset(), after: int = 0
    ) -> tuple[Unseen, ...]:
        """The unseen code handed any of these parameters or optimizers (or everything), from `after` on."""
        return tuple(
            u
            for u in self.unseen
            if u.seq >= after and (u.everything or u.params & params or u.optimizers & optimizers)
        )


@dataclass(frozen=True, slots=True)
class LibraryModule:
    """A model built by an installed library (or known from the table): where its structure comes from."""

    path: str  # the module path in the program: 'model'
    type: str  # 'BertForSequenceClassification'
    qual: str  # where it is defined: 'transformers.models.bert.modeling_bert.BertForSequenceClassification'
    how: str  # 'source' | 'table' | 'evidence'
    source: Span | None  # the class (or factory) definition, in site-packages
    note: str = ""
