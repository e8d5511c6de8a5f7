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

from . import torch_api as T
from .objects import (
    FROZEN, BoundMethod, ClassObj, CtxObj, DictObj, FuncObj, InstanceObj, LazyImport, ListObj, ModuleObj,
    OptimObj, PIter, ScalerObj, SchedObj, Site, SuperObj, SymObj, TensorObj, Unit, module_value,
)
from .budget import TICK, Gaps
from .program import Program, SourceFile
from .torch_calls import TorchCalls
from .trace import Cut, InplaceRec, Trace
from .values import EMPTY, NONE, NOCONST, UNKNOWN, Flow, Kind, Star, V, const, flow_of, join, join_all

MAX_DEPTH = 12
BUDGET = 15000           # statements per entry file; beyond it calls are not followed
ROOT_BUDGET = 5000       # statements for the module body's run (training scripts use a few hundred)
SYMBOLIC_BUDGET = 2000   # statements per other root (an uncalled function, one class checked alone)
INIT_BUDGET = 800        # statements for the __init__ of an object that is not a module
MODULE_INIT_BUDGET = 4000
MAX_LOADED_LINES = 80000  # lines of imported project modules run for one file
_LOOP_RUNS = 2

# `self.x = [...]`, `= {}`, `= (a, b)`, `= list(...)`, `... requires_grad=True`: what GA109 looks for
_HIDING_ATTR = re.compile(r"self\.\w+\s*=\s*(?:\[|\{|list\(|dict\(|tuple\(|\(\s*(?:nn\.|[A-Z]\w*\())"
                          r"|requires_grad\s*=\s*True|requires_grad_\(")
_STAR = "<import *>"   # env key: modules whose names `from m import *` brought in
_CALLED = re.compile(r"(?<![\w])([A-Za-z_]\w*)\s*\(")
_DEFINED = re.compile(r"def\s+([A-Za-z_]\w*)\s*\(")
# what makes an uncalled function worth running on unknown arguments: a training step happens in it
_TRAINING_WORDS = re.compile(r"\bbackward\(|autograd\.grad\(|\.step\(|zero_grad\(")

_BUILTIN_NAMES = {
    "len", "range", "enumerate", "zip", "list", "tuple", "dict", "set", "frozenset", "sum", "min", "max",
    "abs", "round", "float", "int", "bool", "str", "print", "isinstance", "issubclass", "getattr",
    "setattr", "hasattr", "super", "iter", "next", "map", "filter", "sorted", "reversed", "any",
    "all", "type", "id", "repr", "format", "open", "callable", "vars", "divmod", "pow", "hash",
    "object", "property", "staticmethod", "classmethod", "NotImplementedError", "ValueError",
    "RuntimeError", "TypeError", "KeyError", "Exception", "AssertionError", "StopIteration",
    "delattr", "slice", "chr", "ord", "hex", "bin", "globals", "locals", "exit", "quit", "input",
}
BUILTINS = {n: V(Kind.MODREF, const=f"builtins.{n}") for n in _BUILTIN_NAMES}
BUILTINS["__name__"] = const("__main__")
BUILTINS["True"] = const(True)
BUILTINS["False"] = const(False)
BUILTINS["None"] = NONE
BUILTINS["__file__"] = V(Kind.STR)


class ModuleScope:
    __slots__ = ("sf", "globals", "done", "running", "name")

    def __init__(self, sf: SourceFile, name: str):
        self.sf = sf
        self.globals: dict[str, V] = {}
        self.done = False
        self.running = False
        self.name = name


class Frame:
    __slots__ = ("func", "scope", "closure", "returns", "yields", "call_site", "arg_objs", "loops", "cls",
                 "self_v", "label")

    def __init__(self, func, scope, closure, call_site, arg_objs, cls=None, self_v=None, label=""):
        self.func = func
        self.scope = scope
        self.closure = closure
        self.returns: list[V] = []
        self.yields: list[V] = []
        self.call_site = call_site
        self.arg_objs = arg_objs
        self.loops: list[dict] = []
        self.cls = cls
        self.self_v = self_v
        self.label = label


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


class Interpreter(TorchCalls):
    """Replays one entry file (and what it imports) and fills a Trace."""

    def __init__(self, program: Program, entry: SourceFile, budget: int = BUDGET):
        self.program = program
        self.entry = entry
        self.trace = Trace()
        self._seq = itertools.count(1)
        self._iter_ids = itertools.count(1)
        self.ctx: tuple = ()
        self.nograd: Site | None = None      # Site of the active no_grad region, if any
        self.cond = 0                         # depth of conditional execution
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
        self.shallow = False   # checking one class: nested modules are built without running __init__
        self.no_force = False  # running an imported module's top level: leave lazy imports alone
        self.loaded_lines = 0
        self.star_misses: set = set()
        self.gaps = Gaps()     # what the budgets cut, and the deadline (budget.py)
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
        prev = (self.sf, self.stack, self.no_force, self.ctx, self.nograd, self.cond)
        self.sf = scope.sf
        self.stack = [Frame(None, scope, (), None, frozenset(), label="<module>")]
        # An imported module's top level binds names; it must not pull in the modules it
        # imports itself (that cascades through a whole package), so its lazy names stay lazy.
        self.no_force = scope.sf is not self.entry
        self.nograd, self.cond = None, 0
        try:
            self.exec_block(scope.sf.tree.body, g)
        finally:
            self.sf, self.stack, self.no_force, self.ctx, self.nograd, self.cond = prev
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
                if isinstance(o, ClassObj) and o.scope is scope and o.is_module and o.sym_instance is None \
                        and not o.instantiated:
                    text = "\n".join(sf.lines[o.node.lineno - 1:o.node.end_lineno])
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
        for stmt in stmts:
            if env is None:
                return None
            if self.gaps.stopped:
                self.gaps.rest(stmts, stmt, self.sf)
                return env
            env = self.exec_stmt(stmt, env)
        return env

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
        try:
            a = self.exec_block(stmt.body, dict(env))
            b = self.exec_block(stmt.orelse, dict(env)) if stmt.orelse else dict(env)
        finally:
            self.cond -= 1
        merged = _join_envs(a, b)
        if merged is None:
            return None
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
        carried, always = _carried(stmt) if runs > 1 else (frozenset(), False)
        if not carried and not always:
            runs = 1   # nothing one iteration hands to the next: one run shows it all
        watched = {n: head.get(n) for n in carried}
        exits = []
        try:
            for run in range(runs):
                if self.steps > self.budget and (run or not self.gaps.reserve(stmt, self, _TRAINING_WORDS)):
                    if not run:
                        self.gaps.loop_cut(stmt, self.sf)
                    break
                self.gaps.loop_ran(stmt)
                if run and not always and all(head.get(n) is v for n, v in watched.items()):
                    break   # the carried names came back unchanged: a second run would repeat the first
                self.ctx = outer_ctx + (("loop", stmt, next(self._iter_ids), self.sf),)
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
        self.stack[-1].returns.append(value)
        return None

    def _s_raise(self, stmt, env):
        if stmt.exc is not None:
            self.eval(stmt.exc, env)
        return None

    def _s_with(self, stmt, env):
        saved_nograd = self.nograd
        try:
            for item in stmt.items:
                cm = self.eval(item.context_expr, env)
                for o in cm.of(CtxObj):
                    if o.kind == "nograd":
                        self.nograd = Site(self.sf, item.context_expr) if self.nograd is None else self.nograd
                    elif o.kind == "grad":
                        self.nograd = None
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, cm if not cm.of(CtxObj) else UNKNOWN, env, stmt)
            return self.exec_block(stmt.body, env)
        finally:
            self.nograd = saved_nograd

    def _s_try(self, stmt, env):
        start = dict(env)
        body = self.exec_block(stmt.body, env)
        if body is not None and stmt.orelse:
            body = self.exec_block(stmt.orelse, body)
        outs = [body]
        if stmt.handlers:
            self.cond += 1
            try:
                for h in stmt.handlers:
                    henv = _join_envs(start, body) if body is not None else dict(start)
                    if h.name:
                        henv[h.name] = UNKNOWN
                    outs.append(self.exec_block(h.body, henv))
            finally:
                self.cond -= 1
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
        fn.def_env = env   # defaults are evaluated at the first call: most functions are never called
        return fn

    def defaults_of(self, fn: FuncObj):
        if fn.defaults is None:
            args = fn.node.args
            env = fn.def_env if fn.def_env is not None else {}
            saved = (self.sf, self.stack)
            self.sf = fn.scope.sf
            self.stack = self.stack + [Frame(None, fn.scope, fn.closure[1:] if fn.closure else (), None, frozenset())]
            try:
                fn.defaults = ([self.eval(d, env) for d in args.defaults],
                               [self.eval(d, env) if d is not None else None for d in args.kw_defaults])
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
                if q == "torch.nn.Module" or short == "LightningModule":
                    cls.is_module = True
                elif q.startswith("torch.nn.") and (short in T.PARAM_MODULES or short in T.FREE_MODULES
                                                    or short in T.CONTAINERS or short in T.RECURRENT):
                    cls.is_module = True
                    cls.opaque_base = True
                elif q in ("torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"):
                    cls.is_optimizer = True
                elif q.startswith("torch.utils.data"):
                    cls.is_dataset = True
                elif q.startswith("builtins.") or q in ("abc.ABC", "typing.Generic", "enum.Enum",
                                                        "typing.NamedTuple", "object"):
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
        for alias in stmt.names:
            name = alias.asname or alias.name
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
                base = module if not level else ("." * level + module)
                env[name] = V(Kind.MODREF, const=T.strip_torch_alias(f"{base}.{alias.name}" if base else alias.name))
        return env

    def import_module(self, dotted: str, level: int, stmt) -> V:
        path = self.program.resolve(self.sf, dotted, level)
        if path is not None:
            return V(Kind.LAZY, frozenset((LazyImport(path, dotted, None),)))
        return V(Kind.MODREF, const=dotted)

    def scope_of(self, path: str, dotted: str):
        if path not in self.scopes and self.loaded_lines > MAX_LOADED_LINES:
            self.trace.incomplete = True   # enough of the project is loaded for one file
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
                saved = (self.sf, self.stack, self.ctx, self.nograd, self.cond)
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
                    self.sf, self.stack, self.ctx, self.nograd, self.cond = saved
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
        return env

    def _s_pass(self, stmt, env):
        return env

    def _s_match(self, stmt, env):
        self.eval(stmt.subject, env)
        outs = []
        self.cond += 1
        try:
            for case in stmt.cases:
                outs.append(self.exec_block(case.body, dict(env)))
        finally:
            self.cond -= 1
        outs.append(dict(env))
        merged = None
        for o in outs:
            merged = _join_envs(merged, o) if merged is not None else (dict(o) if o is not None else None)
        if merged is None:
            return None
        _assign_env(env, merged)
        return env

    _stmt_handlers = {
        ast.Expr: _s_expr, ast.Assign: _s_assign, ast.AnnAssign: _s_annassign,
        ast.AugAssign: _s_augassign, ast.If: _s_if, ast.For: _s_for, ast.AsyncFor: _s_for,
        ast.While: _s_while, ast.Break: _s_break, ast.Continue: _s_continue, ast.Return: _s_return,
        ast.Raise: _s_raise, ast.With: _s_with, ast.AsyncWith: _s_with, ast.Try: _s_try,
        ast.FunctionDef: _s_funcdef, ast.AsyncFunctionDef: _s_funcdef, ast.ClassDef: _s_classdef,
        ast.Import: _s_import, ast.ImportFrom: _s_importfrom, ast.Delete: _s_delete, ast.Pass: _s_pass,
        ast.Match: _s_match,
    }
    if hasattr(ast, "TryStar"):
        _stmt_handlers[ast.TryStar] = _s_try

    # ---------------------------------------------------------------- assignment

    def assign(self, target, value: V, env: dict, stmt):
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
        leaves = [u for u in old.objs if isinstance(u, Unit) and u.kind in (Unit.PARAM, Unit.LEAF, Unit.INPUT)
                  and u.frozen != FROZEN]
        hit = [u for u in leaves if u in new.grads and (u in new.org or self.nograd is not None)]
        if hit:
            self.trace.inplace.append(InplaceRec(self.seq(), InplaceRec.REBIND, Site(self.sf, stmt),
                                                 frozenset(hit), self.nograd is not None,
                                                 detail=name, ctx=self.ctx, stmt=stmt))
            self.trace.manual_updates.extend((u, Site(self.sf, stmt)) for u in hit)

    # ---------------------------------------------------------------- expressions

    def eval(self, node, env) -> V:
        if node is None:
            return NONE
        handler = self._expr_handlers.get(type(node))
        if handler is None:
            return UNKNOWN
        return handler(self, node, env)

    def _e_const(self, node, env):
        return const(node.value, node)

    def _e_name(self, node, env):
        name = node.id
        v = env.get(name)
        if v is not None:
            if v.k & Kind.LAZY:
                v = env[name] = self.force(v)
            return v
        frame = self.stack[-1]
        for scope_env in frame.closure:
            v = scope_env.get(name)
            if v is not None:
                if v.k & Kind.LAZY:
                    v = scope_env[name] = self.force(v)
                return v
        v = self.lookup_global(frame.scope.globals, name)
        if v is not None:
            return v
        v = BUILTINS.get(name)
        return v if v is not None else UNKNOWN

    def lookup_global(self, g: dict, name: str, depth=0):
        """A module-level name, forcing lazy imports and following `from x import *`."""
        v = g.get(name)
        if v is not None:
            if v.k & Kind.LAZY:
                v = g[name] = self.force(v)
            return v
        stars = g.get(_STAR)
        if stars is None or depth > 8 or name.startswith("_") or self.no_force:
            return None
        key = (id(g), name)
        if key in self.star_misses:
            return None
        for o in sorted(stars.objs, key=lambda x: x.oid):
            if not self.program.may_define(o.path, name):
                continue
            scope = self.scope_of(o.path, o.dotted)
            if scope is not None:
                v = self.lookup_global(scope.globals, name, depth + 1)
                if v is not None:
                    g[name] = v
                    return v
        self.star_misses.add(key)
        return None

    def _e_attr(self, node, env):
        recv = self.eval(node.value, env)
        return self.get_attr(recv, node.attr, node, env)

    def _e_call(self, node, env):
        if self.steps > self.budget:
            self.trace.incomplete = True
        func = node.func
        args, kwargs = self.eval_args(node, env)
        if isinstance(func, ast.Attribute):
            recv = self.eval(func.value, env)
            if recv.k & Kind.MODREF and isinstance(recv.const, str) and not recv.objs:
                return self.call_qualified(f"{recv.const}.{func.attr}", args, kwargs, node, env)
            return self.call_method(recv, func.attr, args, kwargs, node, env)
        fv = self.eval(func, env)
        return self.call_value(fv, args, kwargs, node, env)

    def eval_args(self, node, env):
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value, env)
                if v.items is not None:
                    args.extend(v.items)
                else:
                    args.append(Star(v))
            else:
                args.append(self.eval(a, env))
        kwargs = {}
        for kw in node.keywords:
            v = self.eval(kw.value, env)
            if kw.arg is None:
                for o in v.of(DictObj):
                    for k, kv in o.keys.items():
                        if isinstance(k, str):
                            kwargs[k] = kv
                kwargs.setdefault("**", v)
            else:
                kwargs[kw.arg] = v
        return args, kwargs

    def _e_binop(self, node, env):
        left = self.eval(node.left, env)
        right = self.eval(node.right, env)
        return self.binop(node.op, left, right, node)

    def _e_unary(self, node, env):
        v = self.eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            t = _truth(v)
            return const(not t) if t is not None else V(Kind.NUMBER)
        if v.const is not NOCONST and isinstance(v.const, (int, float)) and not isinstance(v.const, bool):
            if isinstance(node.op, ast.USub):
                return const(-v.const, node)
            return v
        if v.k & Kind.TENSOR:
            return self.tensor_result(flow_of(v), node, op="neg")
        return V(v.k & (Kind.NUMBER | Kind.ARRAY | Kind.UNKNOWN) or Kind.UNKNOWN, org=v.org, weak=v.weak,
                 top=v.top, cuts=v.cuts, saves=v.saves, grads=v.grads, site=node)

    def _e_boolop(self, node, env):
        vals = [self.eval(v, env) for v in node.values]
        truths = [_truth(v) for v in vals]
        if isinstance(node.op, ast.And):
            for v, t in zip(vals, truths):
                if t is False:
                    return v
            if all(t is True for t in truths):
                return vals[-1]
        else:
            for v, t in zip(vals, truths):
                if t is True:
                    return v
            if all(t is False for t in truths):
                return vals[-1]
        out = join_all(vals)
        return out.replace(const=NOCONST)

    def _e_compare(self, node, env):
        left = self.eval(node.left, env)
        rights = [self.eval(c, env) for c in node.comparators]
        if len(node.ops) == 1:
            op, right = node.ops[0], rights[0]
            if isinstance(op, (ast.Is, ast.IsNot)):
                t = _is_none(left) if _is_none_node(node.comparators[0]) else None
                if t is not None:
                    return const(t if isinstance(op, ast.Is) else not t)
                return V(Kind.NUMBER)
            if left.const is not NOCONST and right.const is not NOCONST:
                try:
                    r = _COMPARE[type(op)](left.const, right.const)
                    return const(bool(r))
                except Exception:
                    return V(Kind.NUMBER)
        vals = [left] + rights
        if any(v.k & Kind.TENSOR for v in vals):
            return self.nondiff(flow_of(*vals), node, "comparison")
        f = flow_of(*vals)
        return V(Kind.NUMBER | (Kind.ARRAY if any(v.k & Kind.ARRAY for v in vals) else 0),
                 cuts=f.cuts, site=node)

    def _e_ifexp(self, node, env):
        t = _truth(self.eval(node.test, env))
        if t is True:
            return self.eval(node.body, env)
        if t is False:
            return self.eval(node.orelse, env)
        return join(self.eval(node.body, env), self.eval(node.orelse, env))

    def _e_subscript(self, node, env):
        recv = self.eval(node.value, env)
        index = self.eval(node.slice, env)
        return self.get_item(recv, index, node, env)

    def _e_tuple(self, node, env):
        items = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                v = self.eval(e.value, env)
                if v.items is not None:
                    items.extend(v.items)
                else:
                    return self.make_list(node, env, kind=Kind.TUPLE)
            else:
                items.append(self.eval(e, env))
        return make_tuple(items, node)

    def _e_list(self, node, env):
        return self.make_list(node, env)

    def make_list(self, node, env, kind=Kind.LIST):
        lst = ListObj(None, Site(self.sf, node))
        for e in node.elts:
            if isinstance(e, ast.Starred):
                lst.add(self.iter_value(self.eval(e.value, env)))
            else:
                lst.add(self.eval(e, env))
        return V(kind, frozenset((lst,)), site=node)

    def _e_dict(self, node, env):
        d = DictObj(Site(self.sf, node))
        for k, v in zip(node.keys, node.values):
            if k is None:
                src = self.eval(v, env)
                for o in src.of(DictObj):
                    for kk, vv in o.keys.items():
                        d.set(kk, vv)
                    if o.rest is not None:
                        d.set(None, o.rest)
                continue
            kv = self.eval(k, env)
            vv = self.eval(v, env)
            key = kv.const if kv.const is not NOCONST and isinstance(kv.const, (str, int)) else None
            d.set(key, vv)
        return V(Kind.DICT, frozenset((d,)), site=node)

    def _e_set(self, node, env):
        return self.make_list(node, env)

    def _e_comp(self, node, env):
        return self.comprehension(node, env)

    def _e_lambda(self, node, env):
        frame = self.stack[-1]
        closure = (env,) + frame.closure
        fn = FuncObj(node, frame.scope, closure, "<lambda>")
        fn.defaults = ([self.eval(d, env) for d in node.args.defaults],
                       [self.eval(d, env) if d is not None else None for d in node.args.kw_defaults])
        return V(Kind.FUNC, frozenset((fn,)))

    def _e_joined(self, node, env):
        return V(Kind.STR, site=node)

    def _e_named(self, node, env):
        v = self.eval(node.value, env)
        self.assign(node.target, v, env, node)
        return v

    def _e_starred(self, node, env):
        return self.eval(node.value, env)

    def _e_await(self, node, env):
        return self.eval(node.value, env)

    def _e_yield(self, node, env):
        v = self.eval(node.value, env) if node.value is not None else NONE
        self.stack[-1].yields.append(v)
        return UNKNOWN

    def _e_yieldfrom(self, node, env):
        v = self.eval(node.value, env)
        self.stack[-1].yields.append(self.iter_value(v))
        return UNKNOWN

    def _e_slice(self, node, env):
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                self.eval(part, env)
        return V(Kind.NUMBER, site=node)

    _expr_handlers = {
        ast.Constant: _e_const, ast.Name: _e_name, ast.Attribute: _e_attr, ast.Call: _e_call,
        ast.BinOp: _e_binop, ast.UnaryOp: _e_unary, ast.BoolOp: _e_boolop, ast.Compare: _e_compare,
        ast.IfExp: _e_ifexp, ast.Subscript: _e_subscript, ast.Tuple: _e_tuple, ast.List: _e_list,
        ast.Dict: _e_dict, ast.Set: _e_set, ast.ListComp: _e_comp, ast.SetComp: _e_comp,
        ast.GeneratorExp: _e_comp, ast.DictComp: _e_comp, ast.Lambda: _e_lambda,
        ast.JoinedStr: _e_joined, ast.NamedExpr: _e_named, ast.Starred: _e_starred,
        ast.Await: _e_await, ast.Yield: _e_yield, ast.YieldFrom: _e_yieldfrom, ast.Slice: _e_slice,
    }

    # ---------------------------------------------------------------- comprehensions and iteration

    def comprehension(self, node, env) -> V:
        cenv = dict(env)
        gens = node.generators
        results: list[V] = []
        keys: list[V] = []
        exact = [True]
        filtered = [False]

        def run(i, e):
            if i == len(gens):
                if isinstance(node, ast.DictComp):
                    keys.append(self.eval(node.key, e))
                    results.append(self.eval(node.value, e))
                else:
                    results.append(self.eval(node.elt, e))
                return
            gen = gens[i]
            it = self.eval(gen.iter, e)
            units = _param_elements(it)
            if units is not None and gen.ifs and len(units) <= 512:
                # filter parameters one by one: `[p for p in m.parameters() if p.requires_grad]`
                for u, uv in units:
                    e2 = dict(e)
                    self.assign(gen.target, uv, e2, node)
                    truths = [_truth(self.eval(c, e2)) for c in gen.ifs]
                    if any(t is False for t in truths):
                        filtered[0] = True
                        continue
                    if any(t is None for t in truths):
                        exact[0] = False
                    if _mentions_requires_grad(gen.ifs):
                        filtered[0] = True
                    run(i + 1, e2)
                return
            elem = self.iter_value(it)
            e2 = dict(e)
            self.assign(gen.target, elem, e2, node)
            for c in gen.ifs:
                if _truth(self.eval(c, e2)) is False:
                    return
            if gen.ifs:
                exact[0] = False
            run(i + 1, e2)

        self.cond += 1
        try:
            run(0, cenv)
        finally:
            self.cond -= 1
        site = Site(self.sf, node)
        if isinstance(node, ast.DictComp):
            d = DictObj(site)
            for k, v in zip(keys, results):
                d.set(k.const if isinstance(k.const, (str, int)) and k.const is not NOCONST and not exact[0] is None else None, v)
            # keys from a loop are not all known: keep values under unknown keys
            d.keys = {}
            d.rest = join_all(results) if results else None
            return V(Kind.DICT, frozenset((d,)), site=node)
        content = join_all(results) if results else None
        units = [u for r in results for u in r.objs if isinstance(u, Unit)]
        if units and all(any(isinstance(o, Unit) for o in r.objs) for r in results):
            sources = frozenset(s for r in results for o in r.objs if isinstance(o, PIter) for s in o.sources)
            pi = PIter(frozenset(units), exact=exact[0], sources=sources, filtered=filtered[0], site=site)
            content = content.replace(objs=content.objs | {pi})
        lst = ListObj(content, site)
        return V(Kind.LIST, frozenset((lst,)), site=node)

    def iter_value(self, v: V, per_iteration=False) -> V:
        """The value of one element when iterating over `v`."""
        if v.items is not None:
            return join_all(v.items) if v.items else UNKNOWN
        out = None
        for o in v.objs:
            if isinstance(o, ListObj):
                out = join(out, o.content if o.content is not None else UNKNOWN)
            elif isinstance(o, DictObj):
                out = join(out, V(Kind.STR))
            elif isinstance(o, PIter):
                if o.named:
                    out = join(out, make_tuple([V(Kind.STR), _units_value(o)], None))
                else:
                    out = join(out, _units_value(o))
            elif isinstance(o, ModuleObj):
                kids = [c for c in o.children.values()]
                if kids:
                    out = join(out, join_all(
                        [module_value(c) if isinstance(c, ModuleObj) else _unit_v(c) for c in kids]))
                else:
                    out = join(out, UNKNOWN)
            elif isinstance(o, (TensorObj, Unit)):
                out = join(out, V(Kind.TENSOR, frozenset((o,)), v.org, v.weak, v.top, v.cuts, v.saves))
            elif isinstance(o, SymObj):
                out = join(out, UNKNOWN)
        if out is None:
            if v.k & Kind.TENSOR:
                return v.replace(items=None, const=NOCONST)
            return V(Kind.UNKNOWN, weak=v.weak | v.org, top=v.top, cuts=v.cuts)
        return out

    # ---------------------------------------------------------------- calls of user code

    def call_value(self, fv: V, args, kwargs, node, env) -> V:
        results = []
        if fv.k & Kind.MODREF and isinstance(fv.const, str) and not fv.objs:
            return self.call_qualified(fv.const, args, kwargs, node, env)
        for o in fv.objs:
            if isinstance(o, FuncObj):
                results.append(self.call_function(o, args, kwargs, node))
            elif isinstance(o, BoundMethod):
                results.append(self.call_function(o.func, args, kwargs, node, self_v=o.recv))
            elif isinstance(o, ClassObj):
                results.append(self.instantiate(o, args, kwargs, node))
            elif isinstance(o, ModuleObj):
                results.append(self.module_call(o, args, kwargs, node, env))
            elif isinstance(o, InstanceObj):
                m = o.cls.lookup("__call__")
                if m is not None:
                    results.append(self.call_function(m, args, kwargs, node, self_v=V(Kind.INST, frozenset((o,)))))
                else:
                    results.append(self.opaque_call(None, args, kwargs, node))
            elif isinstance(o, SymObj):
                results.append(self.sym_call(o, args, kwargs, node))
            elif isinstance(o, PIter):
                results.append(V(Kind.PARAMS, frozenset((o,))))
        if not results:
            # an unknown callable (a model from a factory the engine cannot see, a wrapper...):
            # it may add gradient from parameters the engine cannot name
            return self.opaque_call(fv, args, kwargs, node, extra=fv).replace(top=True)
        return join_all(results)

    def call_function(self, fn: FuncObj, args, kwargs, node, self_v=None, symbolic=False) -> V:
        over = (self.steps > self.budget or self.steps - self.root_start > self.root_budget
                or (self.caps and self.steps > min(self.caps)))
        if self.shallow and fn.scope.sf is not self.entry:
            # checking one class alone: its own __init__ is what matters, not a base class's in a library
            return self.opaque_call(None, args, kwargs, node, extra=self_v).replace(top=True)
        if len(self.stack) > MAX_DEPTH or over or any(f.func is fn for f in self.stack):
            if over:
                self.trace.incomplete = True
                self.gaps.call_cut(fn)
            # not followed: the result is unknown, and may carry anything
            return self.opaque_call(None, args, kwargs, node, extra=self_v).replace(top=True)
        fn.interpreted += 1
        call_site = Site(self.sf, node) if node is not fn.node else None
        env = self.bind_args(fn, args, kwargs, self_v)
        arg_objs = set()
        for v in list(args) + list(kwargs.values()):
            if isinstance(v, V):
                arg_objs.update(v.objs)
        frame = Frame(fn, fn.scope, fn.closure, call_site, frozenset(arg_objs), cls=fn.cls, self_v=self_v,
                      label=fn.qual)
        saved = (self.sf, self.nograd, self.ctx)
        if call_site is not None:
            self.ctx = self.ctx + (("call", node, fn, self.sf),)
        self.sf = fn.scope.sf
        if fn.nograd is not None and self.nograd is None:
            self.nograd = fn.nograd
        self.stack.append(frame)
        try:
            if isinstance(fn.node, ast.Lambda):
                result = self.eval(fn.node.body, env)
                frame.returns.append(result)
            else:
                self.exec_block(fn.node.body, env)
        finally:
            self.stack.pop()
            self.sf, self.nograd, self.ctx = saved
        if frame.yields:
            lst = ListObj(join_all(frame.yields), Site(fn.scope.sf, fn.node))
            return V(Kind.LIST, frozenset((lst,)))
        if not frame.returns:
            return NONE
        out = join_all(frame.returns)
        if fn.nograd is not None and out.carries:
            out = self.cut_nograd(out, fn.nograd)
        return out

    def bind_args(self, fn: FuncObj, args, kwargs, self_v) -> dict:
        node = fn.node
        a = node.args
        env: dict = {}
        positional = [p.arg for p in a.posonlyargs + a.args]
        defaults, kw_defaults = self.defaults_of(fn)
        given = list(args)
        if self_v is not None and positional:
            env[positional[0]] = self_v
            positional = positional[1:]
        star_rest = None
        for i, name in enumerate(positional):
            if i < len(given):
                g = given[i]
                if isinstance(g, Star):
                    env[name] = self.iter_value(g.value)
                    star_rest = g.value
                    for rest in positional[i + 1:]:
                        if rest not in kwargs:
                            env[rest] = self.iter_value(g.value)
                    break
                env[name] = g
            elif name in kwargs:
                env[name] = kwargs[name]
            else:
                j = i - (len(positional) - len(defaults))
                env[name] = defaults[j] if 0 <= j < len(defaults) else UNKNOWN
        for name in positional:
            if name in kwargs:
                env[name] = kwargs[name]
        if a.vararg is not None:
            extra = [g for g in given[len(positional):]]
            if any(isinstance(g, Star) for g in extra) or star_rest is not None:
                elem = join_all([self.iter_value(g.value) if isinstance(g, Star) else g for g in extra]
                                + ([self.iter_value(star_rest)] if star_rest is not None else []))
                lst = ListObj(elem, None)
                env[a.vararg.arg] = V(Kind.TUPLE, frozenset((lst,)))
            else:
                env[a.vararg.arg] = make_tuple(extra, None)
        for p, d in zip(a.kwonlyargs, kw_defaults):
            if p.arg in kwargs:
                env[p.arg] = kwargs[p.arg]
            else:
                env[p.arg] = d if d is not None else UNKNOWN
        if a.kwarg is not None:
            d = DictObj(None)
            known = set(positional) | {p.arg for p in a.kwonlyargs}
            for k, v in kwargs.items():
                if k not in known and k != "**":
                    d.set(k, v)
            env[a.kwarg.arg] = V(Kind.DICT, frozenset((d,)))
        return env

    def instantiate(self, cls: ClassObj, args, kwargs, node, label=None) -> V:
        site = Site(self.sf, node)
        cls.instantiated += 1
        if cls.is_optimizer:
            return self.make_optimizer(cls.name, args, kwargs, node, env=None)
        if cls.is_module:
            m = ModuleObj(label or f"<{cls.name}>", site, self.seq(), cls=cls)
            m.opaque = cls.opaque_base
            if m.opaque:
                m.opaque_unit = Unit(Unit.OPAQUE, f"{m.label}.<params>", site, m.seq, count=None)
                m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"
            recv = module_value(m)
        else:
            inst = InstanceObj(cls, label or f"<{cls.name}>", site)
            recv = V(Kind.INST, frozenset((inst,)))
        init = cls.lookup("__init__")
        if cls.is_module and self.shallow and len(self.init_stack) >= 1:
            # a submodule of the class under check: what it holds does not matter here
            m.opaque = True
            if m.opaque_unit is None:
                m.opaque_unit = Unit(Unit.OPAQUE, "<params>", site, m.seq, count=None)
                m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"
            return recv
        if init is not None:
            if cls.is_module:
                self.init_stack.append(recv.objs and next(iter(recv.objs)))
                m.in_init = True
            # a helper object's set-up (a trainer, an accelerator, a config) may run deep into a
            # library; what the training step needs from it is seldom that deep
            cap = INIT_BUDGET if not cls.is_module else MODULE_INIT_BUDGET
            self.caps.append(self.steps + cap)
            try:
                self.call_function(init, args, kwargs, node, self_v=recv)
            finally:
                self.caps.pop()
                if cls.is_module:
                    m.in_init = False
                    self.init_stack.pop()
                    self.after_init(m)
        elif cls.is_module:
            self.after_init(m)
        return recv

    def opaque_call(self, fv: V | None, args, kwargs, node, extra: V | None = None) -> V:
        """A call the engine does not follow: its result may carry what went in (weakly)."""
        f = Flow()
        for v in list(args) + [v for k, v in kwargs.items() if k != "**"] + ([extra] if extra else []):
            if isinstance(v, Star):
                v = v.value
            if not isinstance(v, V):
                continue
            f.add(v)
            for o in v.objs:
                if isinstance(o, ModuleObj):
                    f.weak = f.weak | frozenset(o.units())
                elif isinstance(o, SymObj):
                    f.weak = f.weak | {self.sym_unit(o)}
                elif isinstance(o, PIter):
                    f.weak = f.weak | o.units
        weak = f.weak | f.org
        k = Kind.UNKNOWN | (Kind.TENSOR if f.tensor else 0)
        out = V(k, org=EMPTY, weak=weak, top=f.top, cuts=f.cuts, saves=f.saves, site=node)
        if self.nograd is not None and out.carries:
            out = self.cut_nograd(out, self.nograd)
        return out

    def sym_unit(self, o: SymObj) -> Unit:
        if o.unit is None:
            o.unit = Unit(Unit.OPAQUE, o.label, o.site, o.seq, count=None)
        return o.unit

    def sym_call(self, o: SymObj, args, kwargs, node) -> V:
        out = self.opaque_call(None, args, kwargs, node)
        u = self.sym_unit(o)
        if self.nograd is not None:
            return out
        return out.replace(weak=out.weak | {u}, k=out.k | Kind.TENSOR)


def make_tuple(items, node) -> V:
    f = flow_of(*items)
    return V(Kind.TUPLE, EMPTY, f.org, f.weak, f.top, f.cuts, f.saves, f.grads, tuple(items), site=node)


def _unit_v(u: Unit) -> V:
    return V(Kind.TENSOR, frozenset((u,)), org=frozenset((u,)))


def _units_value(pi: PIter) -> V:
    units = pi.units
    return V(Kind.TENSOR | Kind.PARAMS, frozenset(units) | {pi}, org=frozenset(u for u in units if u.kind != Unit.OPAQUE),
             weak=frozenset(u for u in units if u.kind == Unit.OPAQUE))


def _param_elements(v: V):
    """(unit, value) pairs when `v` iterates over known parameters one by one."""
    pis = v.of(PIter)
    lists = v.of(ListObj)
    if not pis and lists:
        for lst in lists:
            if lst.content is None:
                continue
            pis.extend(lst.content.of(PIter))
            if any(not isinstance(o, (PIter, Unit)) for o in lst.content.objs):
                return None
    if not pis or v.items is not None:
        return None
    out = []
    for pi in pis:
        if pi.named or any(u.kind == Unit.OPAQUE for u in pi.units):
            return None
        for u in sorted(pi.units, key=lambda x: x.oid):
            out.append((u, V(Kind.TENSOR | Kind.PARAMS, frozenset((u, pi)), org=frozenset((u,)))))
    return out


_MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "appendleft", "push"}


def _attr_key(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _attr_key(node.value) + "." + node.attr
    return f"<{type(node).__name__}>"


def _carried(loop) -> tuple[frozenset, bool]:
    """What a loop may hand from one iteration to the next, read off its body once: names read
    before they are written (and written), and whether state lives in attributes or containers
    (`self.h = f(self.h)`, `history.append(loss)`), which always takes a second run."""
    hit = getattr(loop, "_gradaudit_carried", None)   # cached on the node: trees are reused
    if hit is not None:
        return hit
    written: set = set()
    exposed: set = set()
    attrs_loaded, attrs_stored = set(), set()
    always = False

    def visit(node):
        nonlocal always
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        if isinstance(node, ast.AugAssign):
            visit(node.value)
            t = node.target
            if isinstance(t, ast.Name):
                if t.id not in written:
                    exposed.add(t.id)
                written.add(t.id)
            else:
                always = True
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is not None:
                visit(node.value)
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                visit(t)
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            visit(node.iter)
            visit(node.target)
            for b in node.body + node.orelse:
                visit(b)
            return
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                if node.id not in written:
                    exposed.add(node.id)
            else:
                written.add(node.id)
            return
        if isinstance(node, ast.Attribute):
            (attrs_stored if isinstance(node.ctx, ast.Store) else attrs_loaded).add(_attr_key(node))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            always = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            always = True
        for child in ast.iter_child_nodes(node):
            visit(child)

    for b in loop.body:
        visit(b)
    if isinstance(loop, ast.While):
        visit(loop.test)
    if attrs_loaded & attrs_stored:
        always = True
    result = (frozenset(exposed & written), always)
    loop._gradaudit_carried = result
    return result


def _mentions_requires_grad(ifs) -> bool:
    for c in ifs:
        for n in ast.walk(c):
            if isinstance(n, ast.Attribute) and n.attr == "requires_grad":
                return True
    return False


def _is_property_setter(item) -> bool:
    return any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in item.decorator_list)


def _truth(v: V):
    c = v.const
    if c is NOCONST:
        if v.k == Kind.NONE:
            return False
        if v.objs and not (v.k & (Kind.NONE | Kind.NUMBER | Kind.STR | Kind.UNKNOWN | Kind.TENSOR | Kind.LIST
                                  | Kind.DICT | Kind.TUPLE | Kind.ARRAY)):
            return True
        return None
    try:
        return bool(c)
    except Exception:
        return None


def _is_none(v: V):
    if v.k == Kind.NONE:
        return True
    if v.k & Kind.NONE or v.k & Kind.UNKNOWN and not v.objs:
        return None
    if v.objs or v.k & (Kind.TENSOR | Kind.NUMBER | Kind.STR | Kind.MODULE):
        return False
    return None


def _is_none_node(n) -> bool:
    return isinstance(n, ast.Constant) and n.value is None


_COMPARE = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
