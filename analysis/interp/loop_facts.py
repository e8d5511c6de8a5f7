"""What a loop's source says about its iterations, read once per loop node and cached on it (the
parsed trees are reused across runs): the state one iteration hands to the next, what it resets,
and which conditions change from one iteration to the next."""

from __future__ import annotations

import ast
import re

_MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "push"}


def attr_key(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return attr_key(node.value) + "." + node.attr
    return f"<{type(node).__name__}>"


def carried(loop) -> tuple[frozenset, bool]:
    """What a loop may hand from one iteration to the next, read off its body once: names read
    before they are written (and written), and whether state lives in attributes or containers
    (`self.h = f(self.h)`, `history.append(loss)`), which always takes a second run."""
    hit = getattr(loop, "_gradaudit_carried", None)  # cached on the node: trees are reused
    if hit is not None:
        return hit
    written: set = set()  # certainly written by this point of the body
    ever: set = set()  # written somewhere in the body
    exposed: set = set()
    attrs_loaded: set = set()
    attrs_stored: set = set()
    always = False

    def arms(bodies):
        # what each arm writes is certain after the statement only when every arm writes it (an
        # assignment under `if step % 2 == 0:` leaves the previous iteration's value on the others)
        nonlocal written
        before = set(written)
        after = None
        for body in bodies:
            written = set(before)
            for b in body:
                visit(b)
            after = set(written) if after is None else after & written
        written = before | (after or set())

    def visit(node):
        nonlocal always
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        if isinstance(node, ast.If):
            visit(node.test)
            arms([node.body, node.orelse])
            return
        if isinstance(node, ast.While):
            visit(node.test)
            arms([node.body + node.orelse, []])  # it may run no iteration
            return
        if isinstance(node, ast.AugAssign):
            visit(node.value)
            t = node.target
            if isinstance(t, ast.Name):
                if t.id not in written:
                    exposed.add(t.id)
                written.add(t.id)
                ever.add(t.id)
            else:
                always = True
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is not None:
                visit(node.value)
            for tgt in node.targets if isinstance(node, ast.Assign) else [node.target]:
                visit(tgt)
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            visit(node.iter)
            arms([[node.target, *node.body, *node.orelse], []])  # it may run no iteration  # type: ignore[list-item]
            return
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                if node.id not in written:
                    exposed.add(node.id)
            else:
                written.add(node.id)
                ever.add(node.id)
            return
        if isinstance(node, ast.Attribute):
            (attrs_stored if isinstance(node.ctx, ast.Store) else attrs_loaded).add(attr_key(node))
        elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)) or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS
        ):
            always = True
        for child in ast.iter_child_nodes(node):
            visit(child)

    for b in loop.body:
        visit(b)
    if isinstance(loop, ast.While):
        visit(loop.test)
    if attrs_loaded & attrs_stored:
        always = True
    result = (frozenset(exposed & ever), always)
    loop._gradaudit_carried = result
    return result


# (`accelerator.sync_gradients` holds on the micro-batch that ends an accumulation)
_COUNTER_WORDS = re.compile(r"step|iter|count|batch|accum|idx|index|epoch|sync_gradients", re.I)


def counter_like(test, loop) -> bool:
    """A condition that changes from one iteration to the next (`(i + 1) % accum == 0`,
    `step % k == 0`, `self.global_step > warmup`), unlike a configuration flag (`if args.amp:`)."""
    facts = getattr(test, "_gradaudit_test", None)  # cached on the node: trees are reused
    if facts is None:
        nodes = list(ast.walk(test))
        facts = (
            any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in nodes)
            or any(isinstance(n, ast.Attribute) and _COUNTER_WORDS.search(n.attr) for n in nodes),
            frozenset(n.id for n in nodes if isinstance(n, ast.Name)),
        )
        test._gradaudit_test = facts
    counter, names = facts
    if counter:
        return True
    if loop is None:
        return any(_COUNTER_WORDS.search(n) for n in names)
    return bool(names & stored_names(loop))


def stored_names(loop) -> frozenset:
    """The names the loop assigns anywhere (its target, `x = ...`, a counter `step += 1`)."""
    stored = getattr(loop, "_gradaudit_stored", None)
    if stored is None:
        stored = frozenset(n.id for n in ast.walk(loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        loop._gradaudit_stored = stored
    return stored


def varies(expr, loop) -> bool:
    """`expr` reads a name the loop assigns: its value differs between iterations (`log[step]`)."""
    return any(isinstance(n, ast.Name) and n.id in stored_names(loop) for n in ast.walk(expr))


def rebound(loop) -> frozenset:
    """Names and attributes (`self.history`) the loop body assigns afresh somewhere (`running = 0`
    after each optimizer step, `history = []`), or empties (`.clear()`, `del x[:]`): an accumulation
    into them is bounded, not kept for the whole loop."""
    hit = getattr(loop, "_gradaudit_rebound", None)
    if hit is not None:
        return hit
    out: set = set()
    for node in ast.walk(loop):
        out |= _reset_keys(node)
    hit = frozenset(out)
    loop._gradaudit_rebound = hit
    return hit


def _reset_keys(node) -> set:
    """What one node rebinds (an assignment's names and attributes) or empties (`x.clear()`,
    `del x[:]`), as `rebound` names them."""
    out = set()
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        # `avg = avg + score`, `ema = 0.99 * ema + 0.01 * loss`: arithmetic on the old value keeps
        # it (a running sum, as `avg += score`), not a reset (`h = h.detach()` is one: a call)
        kept_in = (
            {attr_key(n) for n in ast.walk(node.value) if isinstance(n, (ast.Name, ast.Attribute))}
            if isinstance(node.value, ast.BinOp)
            else set()
        )
        for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
            for sub in t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                if isinstance(sub, (ast.Name, ast.Attribute)) and attr_key(sub) not in kept_in:
                    out.add(attr_key(sub))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "clear":
        out.add(attr_key(node.func.value))
    elif isinstance(node, ast.Delete):
        for t in node.targets:
            if isinstance(t, ast.Subscript):
                out.add(attr_key(t.value))
    return out


def reset_now_and_then(loop) -> dict:
    """Names and attributes the loop body resets (as `rebound` reads them) only under a condition
    (`if step % log_every == 0: running = 0`), each with its first such statement: an accumulation
    into them keeps the graphs of the iterations between two resets alive. One reset on the body's
    own path, on every iteration, leaves the name out."""
    hit = getattr(loop, "_gradaudit_reset_now_and_then", None)
    if hit is not None:
        return hit
    always: set = set()
    sometimes: dict = {}

    def visit(stmts, conditional: bool):
        for st in stmts:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            keys = _resets(st)
            for k in keys:
                if conditional:
                    sometimes.setdefault(k, st)
                else:
                    always.add(k)
            if isinstance(st, ast.If):
                visit(st.body, True)
                visit(st.orelse, True)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                visit(st.body, conditional)
            elif isinstance(st, ast.Try):
                visit(st.body, conditional)
                for h in st.handlers:
                    visit(h.body, True)
                visit(st.orelse, True)
                visit(st.finalbody, conditional)
            elif isinstance(st, (ast.For, ast.AsyncFor, ast.While)):
                # an inner loop may run any number of times: neither every iteration nor a window
                for k in rebound(st):
                    always.add(k)

    visit(loop.body, False)
    hit = {k: st for k, st in sometimes.items() if k not in always}
    loop._gradaudit_reset_now_and_then = hit
    return hit


def _resets(st) -> set:
    """What one statement itself (not its nested blocks) rebinds or empties, as `rebound` names it."""
    if isinstance(st, ast.Expr):
        return _reset_keys(st.value)  # `history.clear()`
    return _reset_keys(st)


def kept(loop, key: str) -> bool:
    """State the loop never resets, or resets only under a condition (`reset_now_and_then`): what is
    accumulated into it outlives the iteration."""
    return key not in rebound(loop) or key in reset_now_and_then(loop)


def reset_at(loop, key: str):
    """The statement that resets `key` only under a condition, or None."""
    return reset_now_and_then(loop).get(key)
