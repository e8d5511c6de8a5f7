"""The name sets torch_api.py has always offered the engine, derived from the op table.

The engine looks ops up by their short name (`exp`, `mul`, `softmax`) whatever the namespace,
and models what backward saves by position: the output; the first input when it requires grad;
each of the first two inputs when the other requires grad (products); the divisor always and
the dividend when the divisor requires grad (divisions). Each set
holds the names that fit one of those models in every namespace where the name is known. An op
the models cannot express (addmm saves its 2nd and 3rd inputs, `where` its condition) is in none
of them: the engine records no save for it, so GA110 stays quiet rather than guess. OpInfo has
the whole truth for callers that can use it (saves(), match()).

The numerical and gradient-break rules' sets (value_sets) are facts of the same table: zero
derivatives (round, floor, sign), (values, indices) results, divisions and fractional powers by
their domain facts, the aliases of + - * / **, and the F losses (those with a `reduction`).

The shape sets (shape_sets) come from native_functions.yaml's tags and signatures: `pointwise`
ops keep their broadcast inputs' shape, `reduction` ops drop the dimensions they reduce (where
their `dim` and `keepdim` are: DIM_ARGS); ops taking a list of tensors first (cat, stack);
factories sized by their arguments or filled with `fill_value`; and the Tensor methods that may
return their input itself (surface.MAY_RETURN_SELF).

INPLACE_NONDIFF_ARGS names, per in-place Tensor method, the arguments that take no gradient (the
index of `scatter_reduce_`, the mask of `masked_fill_`): what flows into the changed tensor, and so
what the op saves, comes from the others.

`generate.py` calls `engine_sets` and writes the result to `_engine_sets.py`, so that importing
the engine does not load the op table.
"""

from __future__ import annotations

from .lookup import COMPOSITE, GRAD, OpInfo
from .records import ZERO, Overload

# where the engine consults each set: saves for every call; views, factories and gradient cuts
# only for Tensor methods and torch.* functions (F.* calls go through its own code)
SAVE_NAMESPACES = ("Tensor", "torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft")
SHAPE_NAMESPACES = ("Tensor", "torch", "torch.linalg", "torch.special", "torch.fft")
SAVE_SETS = ("SAVES_OUTPUT", "SAVES_INPUT", "PRODUCTS", "DIVISIONS", "SAVE_NOTHING")
SHAPE_SETS = ("VIEW_OPS", "SPLIT_OPS", "NONDIFF_OPS", "FACTORIES")
# the numerical and gradient-break rules' sets (value_sets below), for Tensor methods and torch.*
VALUE_SETS = ("ZERO_GRAD_OPS", "VALUES_INDICES", "ZERO_DIVISOR_INF", "FRACTIONAL_POWERS")
# the Python arithmetic the numerical rules model as operators (+ - * / **): ARITH_OPS maps each
# name that reaches one of them (`divide`, `true_divide`, `multiply`: decompositions into div, mul)
ARITH = ("add", "sub", "mul", "div", "pow")

# The engine passes `torch.where(cond, a, b)` as inputs (a, b): classify it on those.
_ENGINE_POSITIONS = {"where": ("self", "other")}
# Cuts the engine models itself (a detach is GA101's, not a non-differentiable op's).
_ENGINE_OWN = {"detach"}


def _positional(ov: Overload) -> list[str]:
    return [a.name for a in ov.args if not a.kw_only]


def _pair(info: OpInfo) -> tuple[str | None, str | None]:
    """The names of the first and second positional inputs, when every overload agrees."""
    if info.name in _ENGINE_POSITIONS:
        return _ENGINE_POSITIONS[info.name]
    firsts = {(_positional(ov) + [None])[0] for ov in info.overloads}
    seconds = {(_positional(ov) + [None, None])[1] for ov in info.overloads}
    return (firsts.pop() if len(firsts) == 1 else None), (seconds.pop() if len(seconds) == 1 else None)


def _factory(ov: Overload) -> bool:
    """A fresh tensor whose values do not depend on any input's values (zeros, randn, zeros_like)."""
    if not ov.outputs or not ov.outputs[0].type.startswith("Tensor") or ov.outputs[0].alias:
        return False
    return not any(a.tensor for a in ov.args) or ov.has("l")


def _no_gradient(ov: Overload) -> bool:
    return ov.no_grad or not any(s in (GRAD, COMPOSITE) for _, s in ov.grads)


def classify(info: OpInfo) -> frozenset[str]:
    """The engine sets one OpInfo belongs to (in-place ops in none: the engine's in-place path
    handles them by their out-of-place name)."""
    ovs = info.overloads
    if not ovs or info.inplace or any(ov.has("u") or ov.has("w") for ov in ovs):
        return frozenset()
    out = set()
    if info.name in _ENGINE_OWN:
        return frozenset()
    if all((ov.view or ov.has("a")) and ov.outputs and not ov.outputs[0].mutated for ov in ovs):
        lists = all(ov.outputs[0].type.endswith("[]") for ov in ovs)
        out.add("SPLIT_OPS" if lists else "VIEW_OPS")
        return frozenset(out)
    # factories: every overload makes a fresh tensor or at least takes no gradient (linspace
    # with tensor ends, normal with a tensor mean), and one takes no tensor at all
    if any(_factory(ov) for ov in ovs) and all(_factory(ov) or _no_gradient(ov) for ov in ovs):
        out.add("FACTORIES")
        return frozenset(out)
    if info.no_gradient and all(ov.outputs and ov.outputs[0].type.rstrip("[]?") in ("Tensor", "bool") for ov in ovs):
        out.add("NONDIFF_OPS")
        return frozenset(out)
    if not info.saves_known:
        return frozenset(out)
    saves = info.saves()
    if not saves:
        if info.differentiable:
            out.add("SAVE_NOTHING")
        return frozenset(out)
    if info.saves_result:
        out.add("SAVES_OUTPUT")
    p0, p1 = _pair(info)
    inputs: dict[str | None, set[str]] = {s.value: set(s.when) for s in saves if not s.output}
    s0, s1 = inputs.get(p0), inputs.get(p1)
    if s0 is not None and s1 is not None and s0 == {p1} and s1 == {p0}:
        out.add("PRODUCTS")
    elif s0 is not None and s1 is not None and s0 == {p1} and {p0, p1} <= s1:
        out.add("DIVISIONS")
    elif s0 is not None and p0 in s0:
        # the engine saves the first input when it requires grad (tensor_ops._record_saves)
        out.add("SAVES_INPUT")
    return frozenset(out)


def _value_votes(info: OpInfo) -> set[str]:
    """The VALUE_SETS one OpInfo belongs to."""
    out: set[str] = set()
    if info.inplace or not info.overloads:
        return out
    # round, floor, sign...: the graph goes on, the gradient is zero (a random sample such as
    # poisson also has a zero derivative, but it is data, not a rounding step: NONDIFF_OPS)
    if info.zero_grad and not info.random:
        out.add("ZERO_GRAD_OPS")
    # (values, indices): sort, topk, max(dim)... the indices carry no gradient
    if any(
        len(ov.outputs) == 2 and ov.outputs[0].grad and not ov.outputs[1].grad and ov.outputs[1].integral
        for ov in info.overloads
    ):
        out.add("VALUES_INDICES")
    # infinite wherever the second input is 0, whatever the first: divisions (xlogy's fact
    # depends on its first input, so it is no division)
    if any(d.at == "zero" and d.effect == "value_inf" and not d.given for d in info.domain_of("other")):
        out.add("ZERO_DIVISOR_INF")
    # an infinite gradient at 0 for 0 < exponent < 1 (pow)
    if any(d.at == "fractional_exponent" and d.effect == "grad_inf" for d in info.domain_of("self")):
        out.add("FRACTIONAL_POWERS")
    return out


def _arith(info: OpInfo) -> str | None:
    """add/sub/mul/div/pow for those ops and their aliases: ops each of whose overloads runs the
    same overload of one of them (divide.Tensor runs div.Tensor; dropout, which runs mul.Tensor
    from its own signature, and square, which runs pow.Tensor_Scalar, are no aliases)."""
    if info.inplace:
        return None
    if info.op in ARITH:
        return info.op
    ops = set()
    for ov in info.overloads:
        if len(ov.steps) != 1 or ov.steps[0].partition(".")[2] != ov.overload:
            return None
        ops.add(ov.steps[0].partition(".")[0])
    return ops.pop() if len(ops) == 1 and ops <= set(ARITH) else None


def value_sets(lookup, names_by_ns: dict[str, frozenset[str]], reductions: dict[str, str]) -> dict:
    """VALUE_SETS, ARITH_OPS {name: add|sub|mul|div|pow} and LOSS_FUNCTIONS (the F functions
    with a default `reduction`: `reductions` {decomposition key: default}, the one being
    generated). A name is in a set when every namespace that knows it agrees."""
    votes: dict[str, list[set[str]]] = {}
    arith: dict[str, set] = {}
    for ns in SHAPE_NAMESPACES:
        for name in names_by_ns.get(ns, ()):
            info = None if name.startswith("_") else lookup(ns, name)
            if info is None:
                continue
            votes.setdefault(name, []).append(_value_votes(info))
            arith.setdefault(name, set()).add(_arith(info))
    sets: dict = {k: frozenset(n for n, v in votes.items() if k in set.intersection(*v)) for k in VALUE_SETS}
    sets["ARITH_OPS"] = {n: ops.pop() for n, ops in arith.items() if len(ops) == 1 and None not in ops}
    losses = set()
    for name in names_by_ns.get("torch.nn.functional", ()):
        info = lookup("torch.nn.functional", name)
        if info is not None and info.decomposed and info.op in reductions:
            losses.add(name)
    sets["LOSS_FUNCTIONS"] = frozenset(losses)
    return sets


def _tagged(ov: Overload, flag: str, aten, depth: int = 0) -> bool:
    """The overload has the tag, or is a decomposition every step of which has it (F.relu runs
    relu, torch.special.erf runs erf)."""
    if ov.has(flag):
        return True
    if not ov.steps or depth > 4:
        return False
    steps = [aten(s) for s in ov.steps]
    return all(s is not None and _tagged(s, flag, aten, depth + 1) for s in steps)


def _one_tensor(ov: Overload) -> bool:
    return len(ov.outputs) == 1 and ov.outputs[0].type.rstrip("?") == "Tensor"


def _shape_votes(info: OpInfo, aten) -> set[str]:
    out: set[str] = set()
    ovs = info.overloads
    if info.inplace or not ovs:
        return out
    # a loss's decomposition is its unreduced elementwise part: `reduction` makes it no pointwise op
    if not any(ov.arg("reduction") for ov in ovs):
        if any(_tagged(ov, "p", aten) and _one_tensor(ov) for ov in ovs):
            out.add("POINTWISE_OPS")
    if any(_tagged(ov, "r", aten) and _one_tensor(ov) for ov in ovs):
        out.add("REDUCTION_OPS")
    firsts = [next((a for a in ov.args if not a.kw_only), None) for ov in ovs]
    if any(a is not None and a.type.startswith("Tensor[]") for a in firsts):
        out.add("TENSOR_LIST_OPS")
    return out


SHAPE_TAGS = ("POINTWISE_OPS", "REDUCTION_OPS", "TENSOR_LIST_OPS")


def shape_sets(lookup, names_by_ns: dict[str, frozenset[str]], aten, factories: frozenset[str]) -> dict:
    """POINTWISE_OPS (some overload is tagged `pointwise`, returns one tensor), REDUCTION_OPS
    (some overload tagged `reduction` returns one tensor: not aminmax, std_mean), TENSOR_LIST_OPS
    (some overload takes a list of tensors first), in every namespace that knows the name; and,
    of the factories, those sized by their only positional argument (`zeros(2, 3)`) and those
    filled with a `fill_value`."""
    votes: dict[str, list[set[str]]] = {}
    sized: dict[str, list[bool]] = {}
    filled: dict[str, list[bool]] = {}
    dims: dict[str, list[tuple]] = {}
    for ns in SAVE_NAMESPACES:
        for name in names_by_ns.get(ns, ()):
            info = None if name.startswith("_") else lookup(ns, name)
            if info is None:
                continue
            votes.setdefault(name, []).append(_shape_votes(info, aten))
            if any(ov.arg("keepdim") for ov in info.overloads):
                dims.setdefault(name, []).extend(_dim_positions(ov) for ov in info.overloads if ov.arg("dim"))
            if name in factories:
                ovs = info.overloads
                sized.setdefault(name, []).append(
                    all([a.name for a in ov.args if not a.kw_only and not a.default] == ["size"] for ov in ovs)
                )
                filled.setdefault(name, []).append(any(ov.arg("fill_value") for ov in ovs))
    out: dict = {k: frozenset(n for n, v in votes.items() if k in set.intersection(*v)) for k in SHAPE_TAGS}
    out["SIZED_FACTORIES"] = frozenset(n for n, v in sized.items() if all(v))
    out["FILLED_FACTORIES"] = frozenset(n for n, v in filled.items() if all(v))
    out["DIM_ARGS"] = {n: _agreed(v) for n, v in dims.items() if v}
    return out


def _dim_positions(ov: Overload) -> tuple[int | None, int | None]:
    """Where `dim` and `keepdim` are among the positional arguments after the tensor (None:
    keyword-only or absent): sum(x, 1, True), norm(x, p, dim, keepdim), std(x, dim, unbiased, keepdim)."""
    rest = _positional(ov)[1:]
    return (rest.index("dim") if "dim" in rest else None, rest.index("keepdim") if "keepdim" in rest else None)


def _agreed(positions: list[tuple]) -> tuple:
    """Each position where every overload with a `dim` agrees, else None (std's `correction`
    overload takes keepdim by keyword only: a second positional argument is no keepdim)."""
    return tuple(p[0] if len(set(p)) == 1 else None for p in zip(*positions))


def engine_sets(
    lookup,
    names_by_ns: dict[str, frozenset[str]],
    modules: frozenset[str],
    reductions: dict[str, str],
    aten,
    may_return_self: dict[str, str],
) -> dict:
    """{set name: frozenset of op names} plus MODULE_SAVES {module: 'input' | 'output'}.

    `lookup(ns, name)` -> OpInfo | None; `names_by_ns` the names of each namespace; `modules`
    the torch.nn module names. A name is in a set when it is in every namespace that knows it
    (a composite the table cannot see into knows nothing, and does not veto)."""
    found: dict[str, dict[str, frozenset[str]]] = {}
    for ns in SAVE_NAMESPACES:
        for name in names_by_ns.get(ns, ()):
            if name.startswith("_"):
                continue
            info = lookup(ns, name)
            if info is None:
                continue
            c = classify(info)
            if info.opaque and not c:
                continue  # a composite the table cannot see into: no vote
            found.setdefault(name, {})[ns] = c
    sets: dict[str, set[str]] = {k: set() for k in SAVE_SETS + SHAPE_SETS}
    for name, by_ns in found.items():
        for keys, spaces in ((SAVE_SETS, SAVE_NAMESPACES), (SHAPE_SETS, SHAPE_NAMESPACES)):
            votes = [c for ns, c in by_ns.items() if ns in spaces]
            if votes:
                for k in frozenset.intersection(*votes) & set(keys):
                    sets[k].add(name)
    module_saves: dict[str, str] = {}
    for name in modules:
        info = lookup("torch.nn", name)
        if info is None or not info.saves_known:
            continue
        ov = info.overloads[0]
        saves = info.saves()
        first = _positional(ov)[0] if _positional(ov) else None
        if info.saves_result:
            module_saves[name] = "output"
        elif any(not s.output and s.value == first for s in saves):
            module_saves[name] = "input"
    frozen = {k: frozenset(v) for k, v in sets.items()}
    out: dict[str, frozenset[str] | dict[str, str] | dict[str, tuple[int, ...]]] = dict(frozen)
    out["MODULE_SAVES"] = module_saves
    out.update(value_sets(lookup, names_by_ns, reductions))  # VALUE_SETS, ARITH_OPS, LOSS_FUNCTIONS
    out.update(shape_sets(lookup, names_by_ns, aten, frozen["FACTORIES"]))
    out["MAY_RETURN_SELF"] = frozenset(may_return_self)
    out["INPLACE_NONDIFF_ARGS"] = inplace_nondiff_args(lookup, names_by_ns.get("Tensor", frozenset()))
    out["RANDOM_FILLS"] = random_fills(lookup, names_by_ns.get("Tensor", frozenset()))
    return out


def random_fills(lookup, names: frozenset[str]) -> frozenset[str]:
    """In-place Tensor methods that draw a new value at random (`uniform_`, `normal_`, `bernoulli_`):
    seeded random ops whose every overload gives the receiver a zero gradient (its old value
    does not matter). Run on a parameter's `.data` they start it over, as `nn.init` does. (`floor_`
    also has a zero gradient but keeps the old value's integer part: the random tag tells them
    apart.)"""
    out = set()
    for name in names:
        if name.startswith("_") or not name.endswith("_"):
            continue
        info = lookup("Tensor", name)
        if info is None or not info.overloads or not info.inplace or info.opaque:
            continue
        if info.random and all(ov.grad("self") == ZERO for ov in info.overloads):
            out.add(name)
    return frozenset(out)


def inplace_nondiff_args(lookup, names: frozenset[str]) -> dict[str, tuple[int, ...]]:
    """{in-place Tensor method: positions of its arguments (after the receiver) that take no
    gradient}, when every overload agrees on the names there: `scatter_reduce_(dim, index, src)`
    -> (0, 1). What flows into the tensor changed in place comes from the others only (an index
    that looks like it may require grad does not make the op save anything)."""
    out: dict[str, tuple[int, ...]] = {}
    for name in sorted(names):
        if name.startswith("_") or not name.endswith("_"):
            continue
        info = lookup("Tensor", name)
        if info is None or not info.overloads or not info.inplace or info.opaque:
            continue
        diff = set(info.differentiable)
        if "self" not in diff or len(diff) < 2:
            continue  # nothing but the receiver takes gradient: no other argument to tell apart
        lists = {tuple(_positional(ov)[1:]) for ov in info.overloads}
        if len(lists) != 1:
            continue
        (args,) = lists
        skip = tuple(i for i, a in enumerate(args) if a not in diff)
        if skip:
            out[name] = skip
    return out
