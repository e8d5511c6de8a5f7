"""An abstract interpreter for training scripts, over the standard `ast`.

It replays a program statement by statement on abstract values (see values.py): each
function is run with the abstract arguments of its call site (context-sensitive, depth and
budget bounded), loops run twice so that state carried into the next iteration is seen, and
branches run both ways and join. PyTorch semantics live in torch_calls.py; what happened is
recorded in a Trace (trace.py) that the training-step model is built from.
"""

from __future__ import annotations

import ast
import bisect
import collections
import itertools
import re

from ..libraries.adapters import AdapterOps
from ..libraries.frameworks import FrameworkOps
from ..libraries.semantics import LibraryOps
from ..ops import torch_api as T
from ..source.program import Program, SourceFile
from ..torch.grad_mode import GradModeOps
from ..torch.lifecycle import Lifecycle
from ..torch.modules import ModuleOps
from ..torch.numeric_ops import NumericOps
from ..torch.optimizers import OptimizerOps
from ..torch.tensors import TensorOps
from .budget import TICK, Gaps
from .calls import Calls
from .expressions import _STAR, BUILTINS, Expressions, _truth
from .frames import BUDGET, MAX_LOADED_LINES, ROOT_BUDGET, SYMBOLIC_BUDGET, Frame, ModuleScope, PathRaises
from .loop_facts import attr_key, carried, rebound
from .objects import (
    FROZEN,
    ClassObj,
    CtxObj,
    FuncObj,
    LazyImport,
    ListObj,
    ModuleObj,
    OptimObj,
    ScalerObj,
    SchedObj,
    Site,
    SymObj,
    Unit,
    next_oid,
)
from .trace import InplaceRec, Trace
from .values import EMPTY, NOCONST, NONE, UNKNOWN, Kind, V, const, join, join_all

_LOOP_RUNS = 2

# `self.x = [...]`, `= {}`, `= (a, b)`, `= list(...)`, `... requires_grad=True`: what GA109 looks for
_HIDING_ATTR = re.compile(
    r"self\.\w+\s*=\s*(?:\[|\{|list\(|dict\(|tuple\(|\(\s*(?:nn\.|[A-Z]\w*\())"
    r"|requires_grad\s*=\s*True|requires_grad_\("
)
_CALLED = re.compile(r"(?<![\w])([A-Za-z_]\w*)\s*\(")
_DEFINED = re.compile(r"def\s+([A-Za-z_]\w*)\s*\(")
# what makes an uncalled function worth running on unknown arguments: a training step happens in it
_TRAINING_WORDS = re.compile(r"\bbackward\(|autograd\.grad\(|\.step\(|zero_grad\(")


class _Dead(Exception):
    pass


def _join_envs(a: dict | None, b: dict | None) -> dict | None:
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    out = dict(a)
    for k, v in b.items():
        old = out.get(k)
        out[k] = v if old is None else join(old, v)
    return out


def _assign_env(env: dict, new: dict):
    env.clear()
    env.update(new)


class Interpreter(
    Expressions,
    Calls,
    TensorOps,
    ModuleOps,
    OptimizerOps,
    Lifecycle,
    NumericOps,
    LibraryOps,
    AdapterOps,
    FrameworkOps,
    GradModeOps,
):
    """Replays one entry file (and what it imports) and fills a Trace."""

    def __init__(self, program: Program, entry: SourceFile, budget: int = BUDGET):
        self.program = program
        self.entry = entry
        self.trace = Trace()
        self._seq = itertools.count(1)
        self.ctx: tuple = ()
        self.graph_writes = 0  # graph-carrying values stored into objects older than the iteration
        self.module_depth = 0  # nesting of module forward calls
        self.path: list = []  # (branch key, arm, len(ctx)) of the conditions in force
        self.grad_known = True  # grad mode is known (enabled unless nograd is set)
        self.nograd: Site | None = None  # Site of the active no_grad region, if any
        self.casts: list = []  # CastRegion of the autocast regions being run (grad_mode.py)
        self.cond = 0  # depth of conditional execution
        self.cond_starts: list[int] = []  # seq at which each active condition began (innermost last)
        self.stack: list[Frame] = []
        self.scopes: dict[str, ModuleScope] = {}
        self.steps = 0
        self.budget = budget
        self.root_index = 0
        self.init_stack: list[ModuleObj] = []
        self.sf = entry
        self.cur_stmt = None
        self.root_start = 0
        self.root_budget = ROOT_BUDGET
        self.caps: list[int] = []
        self.shallow = False  # checking one class: nested modules are built without running __init__
        self.no_force = False  # running an imported module's top level: leave lazy imports alone
        self.loaded_lines = 0
        self.star_misses: set = set()
        self.gaps = Gaps()  # what the budgets cut, and the deadline (budget.py)
        self.ticks = 0

    # ---------------------------------------------------------------- driver

    def seq(self) -> int:
        return next(self._seq)

    def site(self, node) -> Site:
        return Site(self.sf, node)

    def run(self):
        scope = self.module_scope(self.entry, "__main__")
        self.root_index = 1
        self.ctx = (("root", 1),)
        self.exec_module(scope)
        self.sf = scope.sf
        self.stack = [Frame(None, scope, (), None, frozenset(), label="<module>")]
        self.run_roots(scope)
        self.run_frameworks(scope)
        self.check_classes(scope)
        return self.trace

    def module_scope(self, sf: SourceFile, name: str) -> ModuleScope:
        scope = self.scopes.get(sf.abspath)
        if scope is None:
            scope = ModuleScope(sf, name)
            self.scopes[sf.abspath] = scope
        return scope

    def exec_module(self, scope: ModuleScope):
        if scope.done or scope.running:
            return
        scope.running = True
        g = scope.globals
        g["__name__"] = const(scope.name)
        prev = (self.sf, self.stack, self.no_force, self.ctx, self.nograd, self.cond, self.grad_known)
        self.sf = scope.sf
        self.stack = [Frame(None, scope, (), None, frozenset(), label="<module>")]
        # An imported module's top level binds names; it must not pull in the modules it
        # imports itself (that cascades through a whole package), so its lazy names stay lazy.
        self.no_force = scope.sf is not self.entry
        self.nograd, self.cond, self.grad_known = None, 0, True
        try:
            self.exec_block(scope.sf.tree.body, g)
        finally:
            self.sf, self.stack, self.no_force, self.ctx, self.nograd, self.cond, self.grad_known = prev
            scope.running = False
            scope.done = True

    def run_roots(self, scope: ModuleScope):
        """Functions with training code that nothing in the file ran: run them on unknown arguments."""
        sf = scope.sf
        src = sf.source
        # lines mentioning training words, found in one pass over the file
        hot, line, pos = [], 1, 0
        for m in _TRAINING_WORDS.finditer(src):
            line += src.count("\n", pos, m.start())
            pos = m.start()
            if not hot or hot[-1] != line:
                hot.append(line)
        if not hot:
            return
        candidates = []
        for fn in self._functions(scope):
            if fn.interpreted:
                continue
            node = fn.node
            i = bisect.bisect_left(hot, node.lineno)
            if i < len(hot) and hot[i] <= node.end_lineno:
                candidates.append(fn)
        if not candidates:
            return
        calls = collections.Counter(m.group(1) for m in _CALLED.finditer(src))
        defs = collections.Counter(m.group(1) for m in _DEFINED.finditer(src))
        # called by name somewhere else in the file: its callers will run it
        called = {fn for fn in candidates if calls[fn.name] - defs[fn.name] > 0}
        ordered = [c for c in candidates if c not in called] + [c for c in candidates if c in called]
        for fn in ordered:
            if fn.interpreted:
                continue
            self.root_index += 1
            self.ctx = (("root", self.root_index),)
            self.nograd = None
            self.grad_known = False  # its callers, not seen, may run it under no_grad
            self.cond = 0
            self.root_start = self.steps
            self.root_budget = SYMBOLIC_BUDGET
            self.run_symbolic(fn)

    def _functions(self, scope: ModuleScope):
        seen = set()
        for v in list(scope.globals.values()):
            for o in v.objs:
                if isinstance(o, FuncObj) and o.scope is scope and o.oid not in seen:
                    seen.add(o.oid)
                    yield o
                elif isinstance(o, ClassObj) and o.scope is scope and o.oid not in seen:
                    seen.add(o.oid)
                    for m in o.methods.values():
                        if m.oid not in seen:
                            seen.add(m.oid)
                            yield m

    def run_symbolic(self, fn: FuncObj):
        site = Site(fn.scope.sf, fn.node)
        args = []
        self_v = None
        if fn.cls is not None and not fn.is_static:
            if fn.is_classmethod:
                self_v = V(Kind.CLASS, frozenset((fn.cls,)))
            else:
                self_v = self.symbolic_instance(fn.cls, site)
        params = fn.node.args
        kwargs = {}
        names = [a.arg for a in params.posonlyargs + params.args]
        if self_v is not None and names:
            names = names[1:]
        ndefaults = len(params.defaults)
        for i, name in enumerate(names):
            if i >= len(names) - ndefaults:
                continue  # keep its default
            args.append(self.sym_value(name, site))
        for a, d in zip(params.kwonlyargs, params.kw_defaults):
            if d is None:
                kwargs[a.arg] = self.sym_value(a.arg, site)
        self.call_function(fn, args, kwargs, fn.node, self_v=self_v, symbolic=True)

    def sym_value(self, name: str, site: Site) -> V:
        return V(Kind.UNKNOWN, frozenset((SymObj(name, site, self.seq()),)))

    def symbolic_instance(self, cls: ClassObj, site: Site) -> V:
        if cls.sym_instance is not None:
            return cls.sym_instance
        cls.sym_instance = V(Kind.UNKNOWN, frozenset((SymObj("self", site, self.seq()),)))  # recursion guard
        init = cls.lookup("__init__")
        args = []
        kwargs = {}
        if init is not None:
            p = init.node.args
            names = [a.arg for a in p.posonlyargs + p.args][1:]
            nd = len(p.defaults)
            for i, name in enumerate(names):
                if i < len(names) - nd:
                    args.append(self.sym_value(name, site))
            for a, d in zip(p.kwonlyargs, p.kw_defaults):
                if d is None:
                    kwargs[a.arg] = self.sym_value(a.arg, site)
        call = ast.Call(func=ast.Name(id=cls.name, ctx=ast.Load()), args=[], keywords=[])
        ast.copy_location(call, cls.node)
        call.end_lineno, call.end_col_offset = cls.node.lineno, cls.node.col_offset
        v = self.instantiate(cls, args, kwargs, call, label="self")
        cls.sym_instance = v
        return v

    def check_classes(self, scope: ModuleScope):
        """Module classes nothing instantiated: build one to see what __init__ registers (GA109)."""
        sf = scope.sf
        for v in list(scope.globals.values()):
            for o in v.objs:
                if (
                    isinstance(o, ClassObj)
                    and o.scope is scope
                    and o.is_module
                    and o.sym_instance is None
                    and not o.instantiated
                ):
                    text = "\n".join(sf.lines[o.node.lineno - 1 : o.node.end_lineno])
                    if not _HIDING_ATTR.search(text):
                        continue  # nothing in it could hide parameters from .parameters()
                    self.root_index += 1
                    self.ctx = (("root", self.root_index),)
                    self.nograd = None
                    self.cond = 0
                    self.root_start = self.steps
                    self.root_budget = SYMBOLIC_BUDGET
                    self.shallow = True
                    try:
                        self.symbolic_instance(o, Site(scope.sf, o.node))
                    finally:
                        self.shallow = False

    # ---------------------------------------------------------------- statements

    def exec_block(self, stmts, env: dict) -> dict | None:
        # path entries an `if` leaves for the rest of its block (one arm returned or continued)
        # end with the block
        mark = len(self.path)
        try:
            for stmt in stmts:
                if env is None:
                    return None
                if self.gaps.stopped:
                    self.gaps.rest(stmts, stmt, self.sf)
                    return env
                env = self.exec_stmt(stmt, env)
            return env
        finally:
            del self.path[mark:]

    def exec_stmt(self, stmt, env: dict) -> dict | None:
        frame = self.stack[-1]
        # a module's straight-line code runs once: it costs no budget, so that thousands of
        # top-level statements do not starve the training loop after them
        if frame.func is not None or frame.loops:
            self.steps += 1
        self.ticks += 1
        if not self.ticks & TICK:
            self.gaps.check_time(self)
        handler = self._stmt_handlers.get(type(stmt))
        if handler is None:
            return env
        prev = self.cur_stmt
        self.cur_stmt = stmt
        try:
            return handler(self, stmt, env)
        except PathRaises:
            return None  # like a `raise`: the path ends here
        finally:
            self.cur_stmt = prev

    def _s_expr(self, stmt, env):
        self.eval(stmt.value, env)
        return env

    def _s_assign(self, stmt, env):
        value = self.eval(stmt.value, env)
        for target in stmt.targets:
            self.assign(target, value, env, stmt)
        return env

    def _s_annassign(self, stmt, env):
        if stmt.value is not None:
            value = self.eval(stmt.value, env)
            self.assign(stmt.target, value, env, stmt)
        return env

    def _s_augassign(self, stmt, env):
        target = stmt.target
        old = self.eval(target, env)
        rhs = self.eval(stmt.value, env)
        loops = self.stack[-1].loops
        if (
            isinstance(target, ast.Name)
            and loops
            and target.id in carried(loops[-1]["node"])[0]
            and target.id not in rebound(loops[-1]["node"])
        ):
            added = isinstance(stmt.op, (ast.Add, ast.Sub)) and bool(old.k & (Kind.NUMBER | Kind.TENSOR))
            rhs = self.note_accumulation(rhs, stmt, added)  # `total += loss` across iterations, never reset
        if old.k & Kind.TENSOR and not (old.k & (Kind.NUMBER | Kind.LIST)):
            new = self.inplace_update(old, rhs, stmt, stmt, op=type(stmt.op).__name__, target_node=target)
            if isinstance(target, ast.Name):
                self.bind_name(target.id, new, env, stmt, rebind_check=False)
            elif isinstance(target, (ast.Attribute, ast.Subscript)):
                pass  # the object itself changed
            return env
        if old.k & Kind.LIST and old.of(ListObj):
            src = rhs.of(ListObj)
            for o in old.of(ListObj):
                if len(src) == 1 and src[0].elems is not None:
                    for e in list(src[0].elems):
                        o.add(e)
                elif rhs.items is not None:
                    for e in rhs.items:
                        o.add(e)
                else:
                    o.add(self.iter_value(rhs))
            return env
        if isinstance(target, ast.Attribute) and self._loops():
            recv = self.eval(target.value, env)
            if any(self.outlives_iteration(o) for o in recv.objs):
                # state on an object older than the iteration (`self.running_loss += loss` in a
                # train_step called from the loop): what is added stays alive unless the loop resets it
                if not (loops and attr_key(target) in rebound(loops[-1]["node"])):
                    rhs = self.note_accumulation(rhs, stmt)
                new = self.binop(stmt.op, old, rhs, stmt)
                if new.k == Kind.NUMBER and new.const is not NOCONST:
                    # a counter (`self.micro += 1`): it differs from one iteration to the next, and
                    # the engine runs an iteration once or twice, so its value there proves nothing
                    # about `if self.micro % accum == 0`
                    new = new.replace(const=NOCONST)
                self.assign(target, new, env, stmt)
                return env
        new = self.binop(stmt.op, old, rhs, stmt)
        self.assign(target, new, env, stmt)
        return env

    def _s_if(self, stmt, env):
        test = self.eval(stmt.test, env)
        truth = _truth(test)
        if truth is True:
            return self.exec_block(stmt.body, env)
        if truth is False:
            return self.exec_block(stmt.orelse, env)
        self.cond += 1
        key = self.seq()
        self.cond_starts.append(key)
        depth = len(self.ctx)
        loops = self.stack[-1].loops
        # whether the condition varies between iterations is decided later, for the few that guard
        # a lifecycle call (GA205)
        self.trace.branch_tests[key] = (stmt.test, loops[-1]["node"] if loops else None)
        try:
            self.path.append((key, 0, depth))
            a = self.exec_block(stmt.body, _refine(stmt.test, env, True))
            self.path[-1] = (key, 1, depth)
            b = (
                self.exec_block(stmt.orelse, _refine(stmt.test, env, False))
                if stmt.orelse
                else _refine(stmt.test, env, False)
            )
        finally:
            self.path.pop()
            self.cond -= 1
            self.cond_starts.pop()
        merged = _join_envs(a, b)
        if merged is None:
            return None
        if (a is None) != (b is None):
            # one arm left the block (return, continue, break, raise): what follows runs only on the other
            self.path.append((key, 1 if a is None else 0, depth))
        _assign_env(env, merged)
        return env

    def _s_for(self, stmt, env):
        it = self.eval(stmt.iter, env)
        elem = self.iter_value(it, per_iteration=True)
        return self.run_loop(stmt, env, lambda e: self.assign(stmt.target, elem, e, stmt))

    def _s_while(self, stmt, env):
        test = self.eval(stmt.test, env)
        if _truth(test) is False:
            return self.exec_block(stmt.orelse, env)
        return self.run_loop(stmt, env, lambda e: self.eval(stmt.test, e))

    def run_loop(self, stmt, env, bind):
        frame = self.stack[-1]
        loop = {"node": stmt, "breaks": [], "continues": []}
        frame.loops.append(loop)
        head = env
        outer_ctx = self.ctx
        # a second run shows what one iteration hands to the next (carried state); building a
        # module's structure in __init__ needs only one
        runs = _LOOP_RUNS if self._loop_depth() < 4 and not self.init_stack else 1
        handed, always = carried(stmt) if runs > 1 else (frozenset(), False)
        watched = {n: head.get(n) for n in handed}
        writes = self.graph_writes
        exits = []
        try:
            for run in range(runs):
                if self.steps > self.budget and (run or not self.gaps.reserve(stmt, self, _TRAINING_WORDS)):
                    if not run:
                        self.gaps.loop_cut(stmt, self.sf)
                    break
                self.gaps.loop_ran(stmt)
                if (
                    run
                    and not always
                    and all(head.get(n) is v for n, v in watched.items())
                    and self.graph_writes == writes
                ):
                    # nothing one iteration hands to the next came back changed (names, or graph kept
                    # in older objects by called code): a second run would repeat the first
                    break
                writes = self.graph_writes
                # the iteration is identified by the sequence number at its start (what is made
                # later, in this iteration or after, has a larger one) and by the object-id mark
                self.ctx = outer_ctx + (("loop", stmt, self.seq(), self.sf, run, next_oid()),)
                body_env = dict(head)
                bind(body_env)
                out = self.exec_block(stmt.body, body_env)
                ends = [e for e in [out] + loop["continues"] if e is not None]
                loop["continues"] = []
                exits.extend(loop["breaks"])
                loop["breaks"] = []
                merged = head
                for e in ends:
                    merged = _join_envs(merged, e)
                if merged is not head:
                    _assign_env(head, merged)
        finally:
            self.ctx = outer_ctx
            frame.loops.pop()
        after = self.exec_block(stmt.orelse, head) if stmt.orelse else head
        for e in exits:
            after = _join_envs(after, e)
        if after is None:
            return None
        if after is not env:
            _assign_env(env, after)
        return env

    def _loop_depth(self) -> int:
        return sum(1 for c in self.ctx if c[0] == "loop")

    def _s_break(self, stmt, env):
        loops = self.stack[-1].loops
        if loops:
            loops[-1]["breaks"].append(dict(env))
        return None

    def _s_continue(self, stmt, env):
        loops = self.stack[-1].loops
        if loops:
            loops[-1]["continues"].append(dict(env))
        return None

    def _s_return(self, stmt, env):
        value = self.eval(stmt.value, env) if stmt.value is not None else NONE
        if self.casts:
            value = self.note_cast(value)
        self.stack[-1].returns.append(value)
        return None

    def _s_raise(self, stmt, env):
        if stmt.exc is not None:
            self.eval(stmt.exc, env)
        return None

    def _s_try(self, stmt, env):
        start = dict(env)
        body = self.exec_block(stmt.body, env)
        if body is not None and stmt.orelse:
            body = self.exec_block(stmt.orelse, body)
        outs = [body]
        if stmt.handlers:
            self.cond += 1
            key = self.seq()
            self.cond_starts.append(key)
            try:
                for i, h in enumerate(stmt.handlers):
                    henv = _join_envs(start, body) if body is not None else dict(start)
                    if h.name:
                        henv[h.name] = UNKNOWN
                    self.path.append((key, i + 1, len(self.ctx)))
                    try:
                        outs.append(self.exec_block(h.body, henv))
                    finally:
                        self.path.pop()
            finally:
                self.cond -= 1
                self.cond_starts.pop()
        merged = None
        for o in outs:
            merged = _join_envs(merged, o) if merged is not None else (dict(o) if o is not None else None)
        if stmt.finalbody:
            fin = merged if merged is not None else dict(start)
            fin = self.exec_block(stmt.finalbody, fin)
            if merged is None or fin is None:
                return None
            merged = fin
        if merged is None:
            return None
        _assign_env(env, merged)
        return env

    def _s_funcdef(self, stmt, env):
        fn = self.make_function(stmt, env)
        if self.apply_decorators(fn, stmt, env):
            env[stmt.name] = V(Kind.FUNC, frozenset((fn,)))
        else:
            env[stmt.name] = UNKNOWN
        return env

    def _binding(self, name: str, env: dict):
        """What a name is bound to, without forcing a lazy import."""
        for scope_env in (env,) + self.stack[-1].closure + (self.stack[-1].scope.globals,):
            v = scope_env.get(name)
            if v is not None:
                return v
        return BUILTINS.get(name)

    def apply_decorators(self, fn: FuncObj, stmt, env) -> bool:
        """Record what decorators mean for the function; False when it is no longer a plain function."""
        for dec in stmt.decorator_list:
            root = dec.func if isinstance(dec, ast.Call) else dec
            while isinstance(root, (ast.Attribute, ast.Call)):
                root = root.value if isinstance(root, ast.Attribute) else root.func
            if isinstance(root, ast.Name):
                bound = self._binding(root.id, env)
                if bound is None or bound.k & Kind.LAZY:
                    # a project decorator not loaded yet (docstring helpers, registries...): taken
                    # to return the function; loading its module for that is not worth it
                    if isinstance(dec, ast.Attribute) and dec.attr in ("setter", "getter", "deleter"):
                        return False
                    continue
            d = self.eval(dec, env)
            dq = d.const if d.k & Kind.MODREF else None
            ctxs = d.of(CtxObj)
            if dq in T.NOGRAD_CTX or (ctxs and ctxs[0].kind == "nograd"):
                fn.nograd = Site(self.sf, dec)
            elif dq in T.GRAD_CTX or (ctxs and ctxs[0].kind == "grad"):
                fn.grad_on = True  # a gradient pass inside a no_grad sampler (guidance, attacks)
            elif ctxs and ctxs[0].kind == "other":
                fn.grad_on = None
            elif dq == "builtins.staticmethod":
                fn.is_static = True
            elif dq == "builtins.classmethod":
                fn.is_classmethod = True
            elif isinstance(dec, ast.Attribute) and dec.attr in ("setter", "getter", "deleter"):
                return False
        return True

    def make_function(self, node, env, cls=None) -> FuncObj:
        frame = self.stack[-1]
        closure = (env,) + frame.closure if frame.func is not None else ()
        qual = node.name if frame.func is None else f"{frame.func.qual}.<locals>.{node.name}"
        if cls is not None:
            qual = f"{cls.name}.{node.name}"
        fn = FuncObj(node, frame.scope, closure, qual, cls)
        fn.defaults = None
        fn.def_env = env  # defaults are evaluated at the first call: most functions are never called
        return fn

    def defaults_of(self, fn: FuncObj):
        if fn.defaults is None:
            args = fn.node.args
            env = fn.def_env if fn.def_env is not None else {}
            saved = (self.sf, self.stack)
            self.sf = fn.scope.sf
            self.stack = self.stack + [Frame(None, fn.scope, fn.closure[1:] if fn.closure else (), None, frozenset())]
            try:
                fn.defaults = (
                    [self.eval(d, env) for d in args.defaults],
                    [self.eval(d, env) if d is not None else None for d in args.kw_defaults],
                )
            finally:
                self.sf, self.stack = saved
        return fn.defaults

    def _s_classdef(self, stmt, env):
        cls = ClassObj(stmt, self.stack[-1].scope, stmt.name)
        cls.base_values = [self.eval(b, env) for b in stmt.bases]
        cls.resolver = self.resolve_class
        cenv: dict = {}
        frame = Frame(None, self.stack[-1].scope, (), None, frozenset(), cls=cls, label=stmt.name)
        self.stack.append(frame)
        try:
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.stack.pop()
                    try:
                        fn = self.make_function(item, env, cls=cls)
                    finally:
                        self.stack.append(frame)
                    if not self.apply_decorators(fn, item, env):
                        fn = None
                    if fn is not None and not _is_property_setter(item):
                        cls.methods[item.name] = fn
                        if any(isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list):
                            cls.class_attrs[item.name] = V(Kind.FUNC, frozenset((fn,)), const="property")
                elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                    value = self.eval(item.value, cenv) if item.value is not None else None
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    if value is not None:
                        for t in targets:
                            if isinstance(t, ast.Name):
                                cls.class_attrs[t.id] = value
                                cenv[t.id] = value
        finally:
            self.stack.pop()
        env[stmt.name] = V(Kind.CLASS, frozenset((cls,)))
        return env

    def resolve_class(self, cls: ClassObj):
        """Settle what a class's bases make it; bases imported lazily are forced now."""
        saved, self.no_force = self.no_force, False
        try:
            self._resolve_bases(cls)
        finally:
            self.no_force = saved

    def _resolve_bases(self, cls: ClassObj):
        for bv in cls.base_values:
            if bv.k & Kind.LAZY:
                bv = self.force(bv)
            for o in bv.of(ClassObj):
                cls.bases.append(o)
                cls.is_module |= o.is_module
                cls.opaque_base |= o.opaque_base
                cls.is_optimizer |= o.is_optimizer
            if bv.k & Kind.MODREF and isinstance(bv.const, str) and not bv.objs:
                q = T.strip_torch_alias(bv.const)
                cls.bases.append(q)
                short = q.rsplit(".", 1)[-1]
                lib = self.library_base(q) if not q.startswith(("torch.", "builtins.")) else None
                if q == "torch.nn.Module" or short == "LightningModule" or lib == "base":
                    cls.is_module = True
                elif lib == "module" or (
                    q.startswith("torch.nn.")
                    and (
                        short in T.PARAM_MODULES
                        or short in T.FREE_MODULES
                        or short in T.CONTAINERS
                        or short in T.RECURRENT
                    )
                ):
                    cls.is_module = True
                    cls.opaque_base = True
                elif q in ("torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"):
                    cls.is_optimizer = True
                elif q.startswith("torch.utils.data"):
                    cls.is_dataset = True
                elif q.startswith("builtins.") or q in (
                    "abc.ABC",
                    "typing.Generic",
                    "enum.Enum",
                    "typing.NamedTuple",
                    "object",
                ):
                    pass
                else:
                    cls.opaque_base = True
            elif not bv.objs and bv.k & Kind.UNKNOWN:
                cls.opaque_base = True
        if not cls._is_module and cls._opaque_base and "forward" in cls.methods:
            cls.is_module = True

    def _s_import(self, stmt, env):
        for alias in stmt.names:
            if alias.asname:
                env[alias.asname] = self.import_module(alias.name, 0, stmt)
            else:
                top = alias.name.split(".")[0]
                env[top] = self.import_module(top, 0, stmt)
        return env

    def _s_importfrom(self, stmt, env):
        module = stmt.module or ""
        level = stmt.level or 0
        path = self.program.resolve(self.sf, module, level) if (level or module) else None
        if path is None and module and not self.library_mode:
            path = self.program.resolve_fallback(self.sf, module, level, stmt)
        for alias in stmt.names:
            name = alias.asname or alias.name
            qualified = self.program.qualified_import(self.sf, module, level, alias.name)
            if qualified is not None:
                env[name] = V(Kind.MODREF, const=T.strip_torch_alias(qualified))
                continue
            if alias.name == "*":
                if path is not None:
                    # names come from the module when first looked up (see lookup_global)
                    lazy = LazyImport(path, module, None)
                    old = env.get(_STAR)
                    env[_STAR] = V(Kind.LAZY, (old.objs if old is not None else EMPTY) | {lazy})
                continue
            if path is not None:
                # project modules run lazily, when the name is first used: most imports never matter
                env[name] = V(Kind.LAZY, frozenset((LazyImport(path, module, alias.name),)))
            else:
                base = module if not level else self.program.absolute_module(self.sf, module, level)
                env[name] = V(Kind.MODREF, const=T.strip_torch_alias(f"{base}.{alias.name}" if base else alias.name))
        return env

    def import_module(self, dotted: str, level: int, stmt) -> V:
        path = self.program.resolve(self.sf, dotted, level)
        if path is None and not self.library_mode:
            path = self.program.resolve_fallback(self.sf, dotted, level, stmt)
        if path is not None:
            return V(Kind.LAZY, frozenset((LazyImport(path, dotted, None),)))
        return V(Kind.MODREF, const=dotted)

    def scope_of(self, path: str, dotted: str):
        if path not in self.scopes and self.loaded_lines > MAX_LOADED_LINES:
            self.trace.incomplete = True  # enough of the project is loaded for one file
            return None
        sf = self.program.load(path)
        if sf is None:
            return None
        if path not in self.scopes:
            self.loaded_lines += sf.source.count("\n")
        scope = self.module_scope(sf, dotted)
        self.exec_module(scope)
        return scope

    def force(self, v: V) -> V:
        """The value behind a lazily imported name (running its module now if needed)."""
        if self.no_force:
            return v
        out = []
        for o in v.objs:
            if not isinstance(o, LazyImport):
                continue
            if o.value is None:
                if o.forcing:
                    return UNKNOWN
                o.forcing = True
                saved = (self.sf, self.stack, self.ctx, self.nograd, self.cond, self.grad_known)
                try:
                    if o.attr is None:
                        o.value = self.scope_value(o.path, o.dotted)
                    else:
                        scope = self.scope_of(o.path, o.dotted)
                        val = self.lookup_global(scope.globals, o.attr) if scope is not None else None
                        if val is None:
                            sub = self.program.submodule(o.path, o.attr)
                            if sub is not None:
                                val = self.scope_value(sub, f"{o.dotted}.{o.attr}")
                        if val is not None and val.k & Kind.LAZY:
                            val = self.force(val)
                        o.value = val if val is not None else UNKNOWN
                finally:
                    self.sf, self.stack, self.ctx, self.nograd, self.cond, self.grad_known = saved
                    o.forcing = False
            out.append(o.value)
        return join_all(out) if out else UNKNOWN

    def scope_value(self, path: str, dotted: str) -> V:
        scope = self.scope_of(path, dotted)
        if scope is None:
            return V(Kind.MODREF, const=dotted)
        return V(Kind.MODREF, frozenset((scope,)), const=f"<project>.{dotted}")

    def _s_delete(self, stmt, env):
        for t in stmt.targets:
            if isinstance(t, ast.Name):
                env.pop(t.id, None)
            elif (
                isinstance(t, ast.Subscript)
                and isinstance(t.slice, ast.Slice)
                and t.slice.lower is None
                and t.slice.upper is None
            ):
                for o in self.eval(t.value, env).of(ListObj):
                    self.clear_list(o)  # `del lst[:]`
        return env

    def _s_pass(self, stmt, env):
        return env

    def _s_match(self, stmt, env):
        self.eval(stmt.subject, env)
        outs = []
        self.cond += 1
        self.cond_starts.append(self.seq())
        try:
            for case in stmt.cases:
                outs.append(self.exec_block(case.body, dict(env)))
        finally:
            self.cond -= 1
            self.cond_starts.pop()
        outs.append(dict(env))
        merged = None
        for o in outs:
            merged = _join_envs(merged, o) if merged is not None else (dict(o) if o is not None else None)
        if merged is None:
            return None
        _assign_env(env, merged)
        return env

    _stmt_handlers = {
        ast.Expr: _s_expr,
        ast.Assign: _s_assign,
        ast.AnnAssign: _s_annassign,
        ast.AugAssign: _s_augassign,
        ast.If: _s_if,
        ast.For: _s_for,
        ast.AsyncFor: _s_for,
        ast.While: _s_while,
        ast.Break: _s_break,
        ast.Continue: _s_continue,
        ast.Return: _s_return,
        ast.Raise: _s_raise,
        ast.With: GradModeOps._s_with,
        ast.AsyncWith: GradModeOps._s_with,
        ast.Try: _s_try,
        ast.FunctionDef: _s_funcdef,
        ast.AsyncFunctionDef: _s_funcdef,
        ast.ClassDef: _s_classdef,
        ast.Import: _s_import,
        ast.ImportFrom: _s_importfrom,
        ast.Delete: _s_delete,
        ast.Pass: _s_pass,
        ast.Match: _s_match,
    }
    if hasattr(ast, "TryStar"):
        _stmt_handlers[ast.TryStar] = _s_try

    # ---------------------------------------------------------------- assignment

    def assign(self, target, value: V, env: dict, stmt):
        if self.casts:
            value = self.note_cast(value)
        if isinstance(target, ast.Name):
            self.bind_name(target.id, value, env, stmt)
        elif isinstance(target, ast.Attribute):
            recv = self.eval(target.value, env)
            self.set_attr(recv, target.attr, value, stmt, target, env)
        elif isinstance(target, ast.Subscript):
            recv = self.eval(target.value, env)
            index = self.eval(target.slice, env)
            self.set_item(recv, index, value, stmt, target, env)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            star = next((i for i, e in enumerate(elts) if isinstance(e, ast.Starred)), None)
            items = value.items
            if items is not None and star is None and len(items) == len(elts):
                for t, v in zip(elts, items):
                    self.assign(t, v, env, stmt)
                return
            elem = self.iter_value(value)
            for i, t in enumerate(elts):
                if isinstance(t, ast.Starred):
                    lst = ListObj(elem, Site(self.sf, t))
                    self.assign(t.value, V(Kind.LIST, frozenset((lst,))), env, stmt)
                elif items is not None and star is not None and len(items) >= len(elts) - 1:
                    idx = i if i < star else len(items) - (len(elts) - i)
                    self.assign(t, items[idx] if 0 <= idx < len(items) else elem, env, stmt)
                else:
                    self.assign(t, elem, env, stmt)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, env, stmt)

    def bind_name(self, name: str, value: V, env: dict, stmt, rebind_check=True):
        if rebind_check and value.grads:
            old = env.get(name)
            if old is not None:
                self.check_rebind(name, old, value, stmt)
        if "loss" in name.lower() and value.k & Kind.TENSOR:
            value = self.note_loss(value, f"`{name}`")
        loops = self.stack[-1].loops
        if value.saves and loops and name in carried(loops[-1]["node"])[0]:
            self.note_carry(value, stmt)  # a name the next iteration reads
        env[name] = value
        self.name_objects(value, name)

    def name_objects(self, value: V, name: str):
        for o in value.objs:
            if isinstance(o, (ModuleObj, OptimObj, SchedObj, ScalerObj)):
                if o.label.startswith("<"):
                    o.label = name
            elif isinstance(o, Unit) and o.owner is None and o.label.startswith("<"):
                o.label = name

    def check_rebind(self, name, old: V, new: V, stmt):
        """`w = w - lr * w.grad`: the leaf `w` is replaced by a non-leaf (GA111)."""
        leaves = [
            u
            for u in old.objs
            if isinstance(u, Unit) and u.kind in (Unit.PARAM, Unit.LEAF, Unit.INPUT) and u.frozen != FROZEN
        ]
        hit = [u for u in leaves if u in new.grads and (u in new.org or self.nograd is not None)]
        if hit:
            rec = InplaceRec(
                self.seq(),
                InplaceRec.REBIND,
                Site(self.sf, stmt),
                frozenset(hit),
                self.nograd is not None,
                detail=name,
                ctx=self.ctx,
                stmt=stmt,
            )
            rec.cuts = frozenset(c for c in new.cuts if (c.removed | c.removed_weak) & rec.units)
            self.trace.inplace.append(rec)
            self.trace.manual_updates.extend((u, Site(self.sf, stmt)) for u in hit)

    # ---------------------------------------------------------------- expressions


def _is_property_setter(item) -> bool:
    return any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in item.decorator_list)


def _refine(test, env: dict, arm: bool) -> dict:
    """A copy of `env` for one arm of `if x is None` / `if x is not None`: there `x` is (or is not)
    None, so what it holds on the other arm does not flow through this one (`h = h.detach()` only
    when `h` is not None)."""
    out = dict(env)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))):
        return out
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant) and left.value is None:
        left, right = right, left
    if not (isinstance(left, ast.Name) and isinstance(right, ast.Constant) and right.value is None):
        return out
    v = env.get(left.id)
    if v is None:
        return out
    is_none = arm if isinstance(test.ops[0], ast.Is) else not arm
    if is_none:
        out[left.id] = NONE
    elif v.k & Kind.NONE and v.k != Kind.NONE:
        out[left.id] = v.replace(k=v.k & ~Kind.NONE, const=NOCONST if v.const is None else v.const)
    return out
