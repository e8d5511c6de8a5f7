"""Calls of the abstract interpreter: user functions and classes, methods, attributes and items,
builtins, and the dispatch of library calls by qualified name.

A mixin of Interpreter (interpreter.py).
"""

from __future__ import annotations

import ast

from ..ops import torch_api as T
from ..torch.tensors import STORAGE, TENSORISH_METHODS
from . import shapes as S
from .frames import INIT_BUDGET, MAX_DEPTH, MODULE_INIT_BUDGET, Frame
from .loop_facts import attr_key as _attr_key
from .loop_facts import rebound
from .objects import (
    BoundMethod,
    ClassObj,
    CtxObj,
    DictObj,
    FuncObj,
    InstanceObj,
    ListObj,
    ModuleObj,
    OptimObj,
    PartialObj,
    PIter,
    ScalerObj,
    SchedObj,
    Site,
    SuperObj,
    SymObj,
    TensorObj,
    Unit,
    module_value,
    unit_value,
)
from .values import (
    EMPTY,
    NOCONST,
    NONE,
    UNKNOWN,
    Flow,
    Kind,
    Star,
    V,
    const,
    flow_of,
    join,
    join_all,
    make_tuple,
    storages,
)


class Calls:
    def call_value(self, fv: V, args, kwargs, node, env) -> V:
        results = []
        if fv.k & Kind.MODREF and isinstance(fv.const, str) and not fv.objs:
            return self.call_qualified(fv.const, args, kwargs, node, env)
        for o in fv.objs:
            if isinstance(o, FuncObj):
                results.append(self.call_function(o, args, kwargs, node))
            elif isinstance(o, BoundMethod):
                results.append(self.call_function(o.func, args, kwargs, node, self_v=o.recv))
            elif isinstance(o, PartialObj):
                results.append(self.call_value(o.fn, list(o.args) + list(args), {**o.kwargs, **kwargs}, node, env))
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
            return self.opaque_call(fv, args, kwargs, node, extra=fv, outside=True)
        return join_all(results)

    def call_function(self, fn: FuncObj, args, kwargs, node, self_v=None, symbolic=False) -> V:
        over = (
            self.steps > self.budget
            or self.steps - self.root_start > self.root_budget
            or (self.caps and self.steps > min(self.caps))
        )
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
        frame = Frame(
            fn, fn.scope, fn.closure, call_site, frozenset(arg_objs), cls=fn.cls, self_v=self_v, label=fn.qual
        )
        saved = (self.sf, self.nograd, self.ctx, self.grad_known)
        if call_site is not None:
            self.ctx = self.ctx + (("call", node, fn, self.sf),)
        self.sf = fn.scope.sf
        if fn.nograd is not None and self.nograd is None:
            self.nograd = fn.nograd
        elif fn.grad_on:
            self.nograd, self.grad_known = None, True
        elif fn.grad_on is None and self.nograd is None:
            self.grad_known = False
        self.stack.append(frame)
        try:
            if isinstance(fn.node, ast.Lambda):
                result = self.eval(fn.node.body, env)
                frame.returns.append(result)
            else:
                self.exec_block(fn.node.body, env)
        finally:
            self.stack.pop()
            self.sf, self.nograd, self.ctx, self.grad_known = saved
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
                    for rest in positional[i + 1 :]:
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
            extra = list(given[len(positional) :])
            if any(isinstance(g, Star) for g in extra) or star_rest is not None:
                elem = join_all(
                    [self.iter_value(g.value) if isinstance(g, Star) else g for g in extra]
                    + ([self.iter_value(star_rest)] if star_rest is not None else [])
                )
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
            if self.library_mode and _is_record(cls):
                # a record of outputs (a dataclass, ModelOutput): every field is part of the value
                f = flow_of(*[a for a in list(args) + [v for k, v in kwargs.items() if k != "**"] if isinstance(a, V)])
                return f.value(Kind.UNKNOWN, site=node)
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
                if self.library_mode:
                    self.lib_init_cond[m.oid] = self.cond
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
        elif not any(isinstance(a, Star) for a in args) and (names := _dataclass_fields(cls)):
            # the __init__ @dataclass writes: each field from its argument (the defaults stay class
            # attributes), then __post_init__
            for name, value in list(zip(names, args)) + [(k, v) for k, v in kwargs.items() if k in names]:
                if isinstance(value, V):
                    inst.attrs[name] = value
                    self.name_objects(value, name)
            post = cls.lookup("__post_init__")
            if post is not None:
                self.call_function(post, [], {}, node, self_v=recv)
        if not cls.is_module:
            self.framework_init(cls, recv, args, kwargs)
        return recv

    def opaque_call(self, fv: V | None, args, kwargs, node, extra: V | None = None, outside=False) -> V:
        """A call the engine does not follow: its result may carry what went in (weakly), and its
        content is unknown. `outside`: code the engine cannot see at all (a library); it may run a
        model of its own, but only tensors, modules or gradient going in are evidence of that
        (`parser.parse_args()`, `env.step(a)` return values that carry no gradient)."""
        f = Flow()
        evidence = False
        visited: set = set()  # one walk over module trees shared by all arguments (a list of every submodule)
        for v in list(args) + [v for k, v in kwargs.items() if k != "**"] + ([extra] if extra else []):
            if isinstance(v, Star):
                v = v.value
            if not isinstance(v, V):
                continue
            f.add(v)
            for o in v.objs:
                if isinstance(o, OptimObj):
                    o.escaped = True
                elif isinstance(o, ModuleObj):
                    if o.oid not in visited:
                        f.weak = f.weak | frozenset(o.units(visited))
                    evidence = True
                elif isinstance(o, SymObj):
                    f.weak = f.weak | {self.sym_unit(o)}
                elif isinstance(o, PIter):
                    f.weak = f.weak | o.units
                    evidence = True
        weak = f.weak | f.org
        evidence = evidence or f.tensor or f.carries
        k = Kind.UNKNOWN | (Kind.TENSOR if f.tensor else 0)
        # what it saved for backward is not known: no graph identity is claimed for its result
        out = V(
            k,
            org=EMPTY,
            weak=weak,
            top=f.top or (outside and evidence),
            cuts=f.cuts,
            site=node,
            unk=Site(self.sf, node) if node is not None else True,
            terms=f.terms,
        )
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

    def get_attr(self, recv: V, attr: str, node, env) -> V:
        if recv.k & Kind.MODREF and not recv.objs and isinstance(recv.const, str):
            return V(Kind.MODREF, const=T.strip_torch_alias(f"{recv.const}.{attr}"))
        if recv.items is not None and attr in ("values", "indices") and len(recv.items) == 2:
            return recv.items[0 if attr == "values" else 1]
        results = []
        tensorish = False
        for o in recv.objs:
            if isinstance(o, ModuleObj):
                results.append(self.module_attr(o, attr, node))
            elif isinstance(o, InstanceObj):
                if attr in o.attrs:
                    results.append(o.attrs[attr])
                else:
                    results.append(self.class_attr(o.cls, attr, V(Kind.INST, frozenset((o,))), node))
            elif isinstance(o, ClassObj):
                results.append(self.class_attr(o, attr, None, node))
            elif isinstance(o, SymObj):
                child = o.attrs.get(attr)
                if child is None:
                    if attr in ("grad", "data", "shape", "dtype", "device", "requires_grad", "is_leaf", "T"):
                        child = UNKNOWN
                    else:
                        child = V(Kind.UNKNOWN, frozenset((SymObj(f"{o.label}.{attr}", o.site, o.seq),)))
                    o.attrs[attr] = child
                results.append(child)
            elif isinstance(o, OptimObj):
                if attr == "param_groups":
                    d = DictObj(Site(self.sf, node))
                    d.set("params", V(Kind.PARAMS, frozenset((PIter(o.units(), site=o.site),))))
                    lst = ListObj(V(Kind.DICT, frozenset((d,))), Site(self.sf, node))
                    results.append(V(Kind.LIST, frozenset((lst,))))
                else:
                    results.append(UNKNOWN)
            elif isinstance(o, STORAGE):
                tensorish = True
            elif hasattr(o, "globals"):  # an imported project module
                v = self.lookup_global(o.globals, attr)
                if v is None:
                    sub = self.program.submodule(o.sf.abspath, attr)
                    v = self.scope_value(sub, f"{o.name}.{attr}") if sub else UNKNOWN
                results.append(v)
        if tensorish or (recv.k & Kind.TENSOR and not results):
            results.append(self.tensor_attr(recv, attr, node))
        if results and recv.k & Kind.UNKNOWN and (recv.carries or recv.cuts):
            # partly unknown: what the unknown part carried stays with its attributes
            results.append(
                V(
                    Kind.UNKNOWN,
                    EMPTY,
                    recv.org,
                    recv.weak,
                    recv.top,
                    recv.cuts,
                    recv.saves,
                    site=node,
                    risks=recv.risks,
                )
            )
        if not results:
            if recv.k & (Kind.NUMBER | Kind.STR | Kind.NONE) and not recv.carries:
                return UNKNOWN
            if attr in ("shape", "ndim"):
                return V(Kind.NUMBER | Kind.UNKNOWN, site=node, unk=False)  # an unseen tensor's sizes
            # unknown object: keep what it carried (outputs.loss, outputs.logits)
            return V(
                Kind.UNKNOWN | (recv.k & Kind.TENSOR),
                EMPTY,
                recv.org,
                recv.weak,
                recv.top,
                recv.cuts,
                recv.saves,
                site=node,
                risks=recv.risks,
            )
        return join_all(results)

    def class_attr(self, cls: ClassObj, attr, self_v, node) -> V:
        m = cls.lookup(attr)
        if m is not None:
            prop = cls.lookup_attr(attr)
            if prop is not None and prop.const == "property" and self_v is not None:
                return self.call_function(m, [], {}, node, self_v=self_v)
            if self_v is None or m.is_static:
                return V(Kind.FUNC, frozenset((m,)))
            return V(Kind.FUNC, frozenset((BoundMethod(m, self_v),)))
        v = cls.lookup_attr(attr)
        if v is not None:
            return v
        return UNKNOWN

    def set_attr(self, recv: V, attr: str, value: V, stmt, target, env):
        if value.saves and any(self.outlives_iteration(o) for o in recv.objs):
            self.note_carry(value, stmt)  # `self.centers = m * self.centers + ...` across iterations
            for o in recv.objs:
                self.note_graph_write(o, value)
        for o in recv.objs:
            if isinstance(o, ModuleObj):
                self.module_setattr(o, attr, value, stmt, target)
            elif isinstance(o, InstanceObj):
                o.attrs[attr] = value if len(recv.objs) == 1 else join(o.attrs.get(attr), value)
                self.name_objects(value, self.sf.segment(target) or attr)  # `self.optimizer`
            elif isinstance(o, SymObj):
                o.attrs[attr] = value
            elif isinstance(o, ClassObj):
                o.class_attrs[attr] = value
            elif hasattr(o, "globals"):
                o.globals[attr] = value
        if attr == "requires_grad" and (recv.k & Kind.TENSOR or any(isinstance(o, STORAGE) for o in recv.objs)):
            flag = value.const if isinstance(value.const, bool) else None
            self.set_requires_grad(recv, flag, stmt, target.value, env, stmt)
        elif attr == "grad" and value.k == Kind.NONE:
            units = [o for o in recv.objs if isinstance(o, Unit)]
            self.event("zero_grad", stmt, frozenset(units), detail="grad=None", units=frozenset(units))

    def get_item(self, recv: V, index: V, node, env) -> V:
        if recv.items is not None:
            c = index.const
            if isinstance(c, int) and not isinstance(c, bool) and -len(recv.items) <= c < len(recv.items):
                return recv.items[c]
            if (index.k & Kind.NUMBER and c is NOCONST) or isinstance(c, int):
                return join_all(recv.items) if recv.items else UNKNOWN
            return join_all(recv.items) if recv.items else UNKNOWN
        results = []
        tensorish = False
        for o in recv.objs:
            if isinstance(o, ListObj) and isinstance(getattr(node, "slice", None), ast.Slice):
                results.append(self.slice_list(o, node.slice, node, env))  # `layers[:-1]`: a list
            elif isinstance(o, ListObj):
                # a list nothing was seen put in: filled where the engine did not look
                results.append(
                    o.content if o.content is not None else V(Kind.UNKNOWN, site=node, unk=Site(self.sf, node))
                )
            elif isinstance(o, DictObj):
                key = index.const if isinstance(index.const, (str, int)) else None
                v = o.get(key)
                results.append(v if v is not None else V(Kind.UNKNOWN, site=node, unk=Site(self.sf, node)))
            elif isinstance(o, ModuleObj):
                key = index.const
                if isinstance(key, int) and not isinstance(key, bool):
                    kids = list(o.children.values())
                    if -len(kids) <= key < len(kids):
                        child = kids[key]
                        results.append(module_value(child) if isinstance(child, ModuleObj) else unit_value(child))
                        continue
                if isinstance(key, str) and key in o.children:
                    child = o.children[key]
                    results.append(module_value(child) if isinstance(child, ModuleObj) else unit_value(child))
                    continue
                if isinstance(node.slice, ast.Slice):
                    results.append(module_value(o))
                    continue
                kids = list(o.children.values())
                results.append(
                    join_all([module_value(c) if isinstance(c, ModuleObj) else unit_value(c) for c in kids])
                    if kids
                    else UNKNOWN
                )
            elif isinstance(o, STORAGE):
                tensorish = True
            elif isinstance(o, PIter):
                results.append(V(Kind.TENSOR, frozenset(o.units), org=frozenset(o.units)))
        if tensorish or (recv.k & Kind.TENSOR and not results):
            key = "slice" if isinstance(node.slice, ast.Slice) else index.const
            results.append(
                self.numeric(
                    "getitem",
                    (recv,),
                    node,
                    self.tensor_result(flow_of(recv), node, alias=recv, shape=S.index(recv.shape, key)),
                )
            )
        if recv.k & Kind.ARRAY and not results:
            results.append(recv.replace(site=node, items=None))
        if not results:
            # an element of a shape (`x.shape[0]`) is a number too
            number = recv.k & Kind.NUMBER if not recv.k & Kind.TENSOR and not recv.carries else 0
            return V(
                Kind.UNKNOWN | (recv.k & Kind.TENSOR) | number,
                EMPTY,
                recv.org,
                recv.weak,
                recv.top,
                recv.cuts,
                recv.saves,
                site=node,
                risks=recv.risks,
            )
        return join_all(results)

    def slice_list(self, o: ListObj, sl, node, env) -> V:
        """A slice of a list: its elements in order when the list and the bounds are known (what
        `nn.Sequential(*layers[:-1])` needs), else a list of the same content."""
        out = ListObj(None, Site(self.sf, node))
        bounds = [self.eval(p, env).const if p is not None else None for p in (sl.lower, sl.upper, sl.step)]
        if o.elems is not None and all(b is None or (isinstance(b, int) and not isinstance(b, bool)) for b in bounds):
            for e in o.elems[slice(*bounds)]:
                out.add(e)
        elif o.content is not None:
            out.add(o.content)
            out.elems = None  # the order is not known
        return V(Kind.LIST, frozenset((out,)), site=node)

    def set_item(self, recv: V, index: V, value: V, stmt, target, env):
        for o in recv.objs:
            if isinstance(o, ListObj):
                o.add(value)
            elif isinstance(o, DictObj):
                key = index.const if isinstance(index.const, (str, int)) else None
                if key is None or key in o.keys:
                    o.set(key, value if key is None else join(o.keys.get(key), value) if self.cond else value)
                else:
                    o.set(key, value)
            elif isinstance(o, ModuleObj):
                key = index.const
                mods = [x for x in value.objs if isinstance(x, (ModuleObj, Unit))]
                if mods:
                    k = str(key) if isinstance(key, (int, str)) else f"[{len(o.children)}]"
                    if isinstance(key, int) and not isinstance(key, bool):
                        keys = list(o.children.keys())
                        if -len(keys) <= key < len(keys):
                            k = keys[key]
                    self.register_all(o, k, mods)
        if recv.k & Kind.TENSOR or any(isinstance(o, STORAGE) for o in recv.objs):
            self.inplace_update(recv, value, stmt, stmt, op="setitem", target_node=target.value)

    def call_qualified(self, qual: str, args, kwargs, node, env) -> V:
        qual = T.strip_torch_alias(qual)
        head, _, short = qual.rpartition(".")
        if head == "builtins":
            return self.builtin_call(short, args, kwargs, node, env)
        if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.UninitializedParameter"):
            return self.make_parameter(args, kwargs, node)
        if head == "torch.nn" and short[:1].isupper():
            if short in _PASSTHROUGH_CALLS:
                # nn.DataParallel(model) is the model (`.module` gives it back, see module_attr)
                passed = self.passthrough(args[:1])
                if passed is not None:
                    return passed
            return self.make_module(short, qual, args, kwargs, node)
        if head == "torch.optim.lr_scheduler" or short in T.SCHEDULERS:
            return self.make_scheduler(qual, args, kwargs, node)
        if short in T.OPTIMIZERS or (head == "torch.optim" and short[:1].isupper() and short != "Optimizer"):
            return self.make_optimizer(qual, args, kwargs, node, env)
        if short in T.SCALERS:
            s = ScalerObj(qual, "<scaler>", Site(self.sf, node), self.seq())
            self.event("scaler_new", node, s)
            return V(Kind.SCALER, frozenset((s,)))
        if qual in ("torch.is_grad_enabled", "torch.autograd.grad_mode.is_grad_enabled"):
            if self.nograd is not None:
                return const(False)
            return const(True) if self.grad_known else V(Kind.NUMBER, unk=False)
        if qual in T.NOGRAD_CTX:
            return V(Kind.CTX, frozenset((CtxObj("nograd", Site(self.sf, node)),)))
        if qual in T.GRAD_CTX:
            return V(Kind.CTX, frozenset((CtxObj("grad", Site(self.sf, node)),)))
        if qual in T.SET_GRAD_CTX:
            flag = args[0].const if args and isinstance(args[0], V) else kwargs.get("mode", UNKNOWN).const
            kind = "nograd" if flag is False else "grad" if flag is True else "other"
            return V(Kind.CTX, frozenset((CtxObj(kind, Site(self.sf, node)),)))
        if qual in T.AUTOCAST_CTX:
            en = kwargs.get("enabled")
            dtype = kwargs.get("dtype", args[1] if len(args) > 1 and not qual.startswith("torch.cuda") else None)
            device = kwargs.get("device_type", args[0] if args and not qual.startswith("torch.cuda") else None)
            if dtype is None and (
                qual == "torch.cuda.amp.autocast" or (isinstance(device, V) and device.const == "cuda")
            ):
                dtype = V(Kind.MODREF, const="torch.float16")  # the CUDA default
            # `enabled=flag`: a flag known here decides, as the branches on the same flag were decided
            enabled = None
            if isinstance(en, V) and not en.unk and (en.const is None or isinstance(en.const, (bool, int))):
                enabled = bool(en.const)
            return V(Kind.CTX, frozenset((CtxObj("autocast", Site(self.sf, node), dtype, enabled),)))
        if qual in ("torch.autograd.grad",):
            outputs = args[0] if args else kwargs.get("outputs", UNKNOWN)
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs", UNKNOWN)
            loss_node = node.args[0] if node.args else None
            self.do_backward(
                _as_loss(outputs),
                node,
                kind="grad",
                inputs=inputs,
                loss_node=loss_node,
                kwargs=kwargs,
                gradient=len(args) > 2 or "grad_outputs" in kwargs,
            )
            create = kwargs.get("create_graph")
            if create is not None and create.const is not False:
                f = flow_of(outputs)
                return V(Kind.TUPLE | Kind.TENSOR, EMPTY, f.org, f.weak, f.top, f.cuts, EMPTY, site=node, unk=f.unk)
            return V(Kind.TUPLE | Kind.TENSOR, frozenset((TensorObj(Site(self.sf, node)),)), site=node)
        if qual in ("torch.autograd.backward",):
            loss = args[0] if args else kwargs.get("tensors", UNKNOWN)
            self.do_backward(
                _as_loss(loss),
                node,
                loss_node=node.args[0] if node.args else None,
                kwargs=kwargs,
                gradient=len(args) > 1 or "grad_tensors" in kwargs,
            )
            return NONE
        if short in ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_grads_with_norm_") and (
            "torch.nn.utils" in head or head.endswith(("utils", "clip_grad"))
        ):
            units = frozenset(self.param_set(args[0])[0]) if args and isinstance(args[0], V) else None
            self.event("clip", node, None, detail=short, units=units)
            return V(Kind.TENSOR, frozenset((TensorObj(Site(self.sf, node)),)), site=node)
        if qual.startswith(T.INIT_PREFIX):
            return args[0] if args else NONE
        if head in ("torch.nn.functional",):
            return self.functional(short, args, kwargs, node, env)
        if head == "torch" or head in ("torch.linalg", "torch.special", "torch.fft"):
            return self.torch_function(short, args, kwargs, node, env)
        if qual in ("copy.deepcopy", "copy.copy"):
            return self.deepcopy(args[0] if args else UNKNOWN, node)
        if qual in ("itertools.chain",):
            lst = ListObj(None, Site(self.sf, node))
            for a in args:
                lst.add(self.iter_value(a.value if isinstance(a, Star) else a))
            return V(Kind.LIST, frozenset((lst,)), site=node)
        if qual in ("itertools.chain.from_iterable",):
            inner = self.iter_value(args[0]) if args else UNKNOWN
            lst = ListObj(self.iter_value(inner), Site(self.sf, node))
            return V(Kind.LIST, frozenset((lst,)), site=node)
        if qual in ("functools.partial",) and args:
            if isinstance(args[0], V) and not any(isinstance(a, Star) for a in args) and "**" not in kwargs:
                return V(Kind.FUNC, frozenset((PartialObj(args[0], args[1:], kwargs),)), site=node)
            return args[0]
        if short in _PASSTHROUGH_CALLS or qual in ("torch.compile",):
            passed = self.passthrough(args[:1])
            if passed is not None:
                return passed
        if qual in ("collections.OrderedDict", "collections.defaultdict"):
            return self.builtin_call("dict", args[1:] if qual.endswith("defaultdict") else args, kwargs, node, env)
        if head.split(".")[0] in T.NUMPY_MODULES:
            return self.numpy_call(short, args, kwargs, node)
        if head == "math":
            tensors = [a for a in args if isinstance(a, V) and a.k & Kind.TENSOR and a.carries]
            if tensors:
                return self.scalar_cut(flow_of(*tensors).value(), node, f"math.{short}()")
            f = flow_of(*[a for a in args if isinstance(a, V)])
            return V(Kind.NUMBER, cuts=f.cuts, site=node)
        if qual.startswith("torch.") and short[:1].islower():
            return self.torch_function(short, args, kwargs, node, env)
        lib = self.framework_call(qual, args, kwargs, node) or self.library_call(qual, args, kwargs, node)
        if lib is not None:
            return lib
        return self.opaque_call(None, args, kwargs, node)

    def builtin_call(self, name, args, kwargs, node, env) -> V:
        a0 = args[0] if args and isinstance(args[0], V) else None
        if name in ("float", "int", "bool", "complex"):
            if a0 is not None and a0.k & Kind.TENSOR and a0.carries:
                return self.scalar_cut(a0, node, f"{name}()", receiver=node.args[0] if node.args else None)
            if a0 is not None and a0.const is not NOCONST:
                try:
                    return const({"float": float, "int": int, "bool": bool, "complex": complex}[name](a0.const), node)
                except Exception:
                    pass
            return V(Kind.NUMBER, cuts=a0.cuts if a0 else EMPTY, site=node)
        if name in ("len", "id", "hash", "ord", "callable", "isinstance", "issubclass", "hasattr"):
            if name == "isinstance" and a0 is not None and len(args) > 1:
                return self.isinstance_check(a0, args[1])
            return V(Kind.NUMBER, site=node)
        if name in ("str", "repr", "format", "chr", "hex", "bin"):
            return V(Kind.STR, site=node)
        if name == "print":
            return NONE
        if name in ("range",):
            return V(Kind.LIST, frozenset((ListObj(V(Kind.NUMBER), None),)), site=node)
        if name in ("list", "tuple", "set", "frozenset", "sorted", "reversed", "iter"):
            if a0 is None:
                return V(Kind.LIST, frozenset((ListObj(None, Site(self.sf, node)),)), site=node)
            if a0.items is not None and name in ("tuple", "list", "reversed", "sorted"):
                if name == "tuple":
                    return a0
                lst = ListObj(join_all(a0.items) if a0.items else None, Site(self.sf, node))
                return V(Kind.LIST, frozenset((lst,)), site=node)
            content = self.iter_value(a0)
            lst = ListObj(content, Site(self.sf, node))
            k = Kind.TUPLE if name == "tuple" else Kind.LIST
            v = V(k, frozenset((lst,)), site=node)
            return v
        if name == "dict":
            d = DictObj(Site(self.sf, node))
            for k, v in kwargs.items():
                if k != "**":
                    d.set(k, v)
            if a0 is not None:
                for o in a0.objs:
                    if isinstance(o, DictObj):
                        for kk, vv in o.keys.items():
                            d.set(kk, vv)
                        if o.rest is not None:
                            d.set(None, o.rest)
                    elif isinstance(o, ListObj) and o.content is not None:
                        pair = o.content
                        d.set(None, pair.items[1] if pair.items and len(pair.items) == 2 else pair)
            return V(Kind.DICT, frozenset((d,)), site=node)
        if name in ("enumerate",):
            elem = self.iter_value(a0) if a0 is not None else UNKNOWN
            lst = ListObj(make_tuple([V(Kind.NUMBER), elem], None), Site(self.sf, node))
            return V(Kind.LIST, frozenset((lst,)), site=node)
        if name == "zip":
            elems = [self.iter_value(a.value if isinstance(a, Star) else a) for a in args]
            lst = ListObj(make_tuple(elems, None), Site(self.sf, node))
            return V(Kind.LIST, frozenset((lst,)), site=node)
        if name == "map" and len(args) >= 2:
            elems = [self.iter_value(a) for a in args[1:] if isinstance(a, V)]
            r = self.call_value(args[0], elems, {}, node, env)
            return V(Kind.LIST, frozenset((ListObj(r, Site(self.sf, node)),)), site=node)
        if name == "filter" and len(args) >= 2:
            return self.filter_call(args[0], args[1], node, env)
        if name == "next":
            if a0 is None:
                return UNKNOWN
            return self.iter_value(a0)
        if name in ("sum", "max", "min", "abs", "round", "pow", "divmod", "any", "all"):
            vals = []
            for a in args:
                if not isinstance(a, V):
                    continue
                if (
                    name in ("sum", "max", "min", "any", "all")
                    and len(args) <= 2
                    and a is a0
                    and (a.objs or a.items is not None)
                    and not (a.k & Kind.TENSOR and not a.objs - set(storages(a)))
                ):
                    vals.append(self.iter_value(a))
                else:
                    vals.append(a)
            if name in ("any", "all"):
                return V(Kind.NUMBER, site=node)
            if any(v.k & Kind.TENSOR for v in vals):
                return self.tensor_result(flow_of(*vals), node, op="abs" if name == "abs" else None, inputs=tuple(vals))
            f = flow_of(*vals)
            consts = [v.const for v in vals]
            if vals and all(c is not NOCONST for c in consts) and name in ("abs", "round", "pow"):
                try:
                    return const({"abs": abs, "round": round, "pow": pow}[name](*consts), node)
                except Exception:
                    pass
            return V(Kind.NUMBER, EMPTY, f.org, f.weak, f.top, f.cuts, f.saves, f.grads, site=node, unk=f.unk)
        if name == "getattr" and len(args) >= 2 and isinstance(args[1], V) and isinstance(args[1].const, str):
            v = self.get_attr(args[0], args[1].const, node, env)
            if len(args) > 2 and v is UNKNOWN:
                return args[2]
            return v
        if name == "setattr" and len(args) >= 3 and isinstance(args[1], V):
            if isinstance(args[1].const, str):
                tgt = ast.Attribute(value=node.args[0], attr=args[1].const, ctx=ast.Store())
                ast.copy_location(tgt, node)
                self.set_attr(args[0], args[1].const, args[2], node, tgt, env)
            else:
                for o in args[0].objs:
                    if isinstance(o, ModuleObj):
                        for x in args[2].objs:
                            if isinstance(x, (ModuleObj, Unit)):
                                o.register(f"<{len(o.children)}>", x)
            return NONE
        if name == "super":
            frame = self.stack[-1]
            cls = frame.func.cls if frame.func is not None else None
            if cls is not None and frame.self_v is not None:
                return V(Kind.INST, frozenset((SuperObj(cls, frame.self_v),)))
            return UNKNOWN
        if name == "type":
            return UNKNOWN
        if name in ("vars", "globals", "locals"):
            return V(Kind.DICT, frozenset((DictObj(None),)))
        return self.opaque_call(None, args, kwargs, node)

    def isinstance_check(self, value: V, cls: V) -> V:
        q = cls.const if isinstance(cls.const, str) else None
        if q and value.objs and all(isinstance(o, ModuleObj) for o in value.objs):
            short = q.rsplit(".", 1)[-1]
            if q.startswith("torch.nn."):
                if short == "Module":
                    return const(True)
                hits = {o.qual == q for o in value.objs}
                if hits == {True}:
                    return const(True)
                if hits == {False} and all(o.qual for o in value.objs):
                    return const(False)
        if q in ("torch.Tensor", "torch.nn.Parameter") and not value.unk:
            # a tuple of hidden states is not a tensor: `repackage_hidden` recursions follow the data
            if value.k & (Kind.TUPLE | Kind.LIST) and not value.k & Kind.TENSOR:
                return const(False)
            if value.k == Kind.TENSOR and q == "torch.Tensor":
                return const(True)
        return V(Kind.NUMBER, unk=False)

    def filter_call(self, fn: V, it: V, node, env) -> V:
        from .expressions import _param_elements

        units = _param_elements(it)
        if units is not None:
            keep, exact, filtered = [], True, False
            for u, uv in units:
                r = self.call_value(fn, [uv], {}, node, env)
                t = r.const if isinstance(r.const, bool) else None
                if t is False:
                    filtered = True
                    continue
                if t is None:
                    exact = False
                keep.append(u)
            filtered = filtered or _lambda_mentions(fn, "requires_grad")
            pi = PIter(
                frozenset(keep),
                exact=exact,
                filtered=filtered,
                sources=frozenset(s for o in it.objs if isinstance(o, PIter) for s in o.sources),
                site=Site(self.sf, node),
            )
            return V(Kind.PARAMS, frozenset((pi,)), site=node)
        elem = self.iter_value(it)
        self.call_value(fn, [elem], {}, node, env)
        return V(Kind.LIST, frozenset((ListObj(elem, Site(self.sf, node)),)), site=node)

    def call_method(self, recv: V, name, args, kwargs, node, env) -> V:
        results = []
        tensorish = False
        for o in recv.objs:
            if isinstance(o, ModuleObj):
                results.append(self.module_method(o, name, args, kwargs, node, env, recv))
            elif isinstance(o, OptimObj):
                results.append(self.optimizer_method(o, name, args, kwargs, node, env))
            elif isinstance(o, SchedObj):
                if name == "step":
                    # stepped on a value (`scheduler.step(val_loss)`): a plateau schedule's metric
                    self.event("sched_step", node, o, detail="metric" if args or "metrics" in kwargs else None)
                results.append(V(Kind.NUMBER) if name in ("get_last_lr", "get_lr") else NONE)
            elif isinstance(o, ScalerObj):
                results.append(self.scaler_method(o, name, args, kwargs, node))
            elif isinstance(o, InstanceObj):
                m = o.cls.lookup(name)
                fw = self.framework_instance_method(o, name, args, kwargs, node) if m is None else None
                if fw is not None:
                    results.append(fw)
                elif m is not None:
                    results.append(self.call_function(m, args, kwargs, node, self_v=V(Kind.INST, frozenset((o,)))))
                elif name in o.attrs:
                    results.append(self.call_value(o.attrs[name], args, kwargs, node, env))
                else:
                    results.append(self.unknown_method(recv, name, args, kwargs, node))
            elif isinstance(o, ClassObj):
                m = o.lookup(name)
                if m is not None:
                    self_v = V(Kind.CLASS, frozenset((o,))) if m.is_classmethod else None
                    results.append(self.call_function(m, args, kwargs, node, self_v=self_v))
                else:
                    results.append(self.opaque_call(None, args, kwargs, node))
            elif isinstance(o, SuperObj):
                results.append(self.super_method(o, name, args, kwargs, node, env))
            elif isinstance(o, SymObj):
                results.append(self.sym_method(o, name, args, kwargs, node, recv))
            elif isinstance(o, ListObj):
                results.append(self.list_method(o, name, args, kwargs, node))
            elif isinstance(o, DictObj):
                results.append(self.dict_method(o, name, args, kwargs, node))
            elif isinstance(o, (FuncObj, BoundMethod)):
                if name in ("__call__",):
                    results.append(self.call_value(V(Kind.FUNC, frozenset((o,))), args, kwargs, node, env))
                else:
                    results.append(UNKNOWN)
            elif isinstance(o, STORAGE):
                tensorish = True
            elif isinstance(o, PIter):
                pass
            elif hasattr(o, "globals"):
                fv = self.lookup_global(o.globals, name)
                if fv is not None:
                    results.append(self.call_value(fv, args, kwargs, node, env))
                else:
                    results.append(self.opaque_call(None, args, kwargs, node))
        if tensorish or (not results and recv.k & (Kind.TENSOR | Kind.PARAMS)):
            results.append(self.tensor_method(recv, name, args, kwargs, node, env))
        if results and recv.k & Kind.UNKNOWN and not recv.of(SymObj) and (recv.carries or recv.cuts):
            results.append(self.unknown_method(recv.replace(objs=EMPTY), name, args, kwargs, node))
        if not results:
            if recv.k & Kind.ARRAY:
                if name == "item" or name == "tolist":
                    return V(Kind.NUMBER, cuts=recv.cuts, site=node)
                return recv.replace(site=node, items=None, const=NOCONST)
            if recv.k & Kind.STR:
                return V(Kind.STR, site=node)
            return self.unknown_method(recv, name, args, kwargs, node)
        return join_all(results)

    def unknown_method(self, recv: V, name, args, kwargs, node) -> V:
        fw = self.framework_unknown_method(recv, name, args, kwargs, node)
        if fw is not None:
            return fw
        if name == "backward" and args and isinstance(args[0], V) and (args[0].k & Kind.TENSOR or args[0].carries):
            # accelerator.backward(loss), fabric.backward(loss), self.manual_backward(loss)
            self.do_backward(args[0], node, loss_node=node.args[0])
            return NONE
        if name == "manual_backward" and args and isinstance(args[0], V):
            self.do_backward(args[0], node, loss_node=node.args[0])
            return NONE
        if name == "backward" and not args and (recv.k & Kind.TENSOR or recv.carries or recv.cuts):
            return self.tensor_method(recv, name, args, kwargs, node, None)
        if name in ("item", "tolist"):
            return self.scalar_cut(recv, node, f".{name}()") if recv.carries else V(Kind.NUMBER, cuts=recv.cuts)
        if name in ("detach",) and (recv.carries or recv.k & Kind.TENSOR):
            return self.tensor_method(recv, name, args, kwargs, node, None)
        if name in _PASSTHROUGH_METHODS:
            passed = self.passthrough(args)
            if passed is not None:
                return passed
        if name in TENSORISH_METHODS and not recv.objs:
            # `x.to(device)`, `batch.view(...)` on data the engine did not see being made
            return self.tensor_method(recv.replace(k=recv.k | Kind.TENSOR), name, args, kwargs, node, None)
        # a method of an object the engine cannot see may run a model of its own
        return self.opaque_call(None, args, kwargs, node, extra=recv, outside=True)

    def passthrough(self, args):
        """Wrappers that hand back what they were given (accelerator.prepare, DDP, torch.compile...)."""
        vals = [a for a in args if isinstance(a, V)]
        if not vals or not any(v.objs for v in vals):
            return None
        if len(vals) == 1:
            return vals[0]
        return make_tuple(vals, None)

    def super_method(self, o: SuperObj, name, args, kwargs, node, env) -> V:
        mro = o.cls.mro()
        for c in mro[1:]:
            if name in c.methods:
                return self.call_function(c.methods[name], args, kwargs, node, self_v=o.recv)
        if name == "__init__":
            return NONE
        if name == "forward":
            return UNKNOWN
        # a torch base method (nn.Module.train from an override of train...): not the override again
        mods = o.recv.of(ModuleObj)
        if mods and len(mods) == len(o.recv.objs):
            return join_all(
                [self.module_method(m, name, args, kwargs, node, env, module_value(m), base=True) for m in mods]
            )
        return self.call_method(o.recv, name, args, kwargs, node, env)

    def sym_method(self, o: SymObj, name, args, kwargs, node, recv: V) -> V:
        if name in ("parameters", "named_parameters"):
            return V(
                Kind.PARAMS,
                frozenset((PIter(frozenset((self.sym_unit(o),)), exact=False, named=name == "named_parameters"),)),
            )
        if name == "backward":
            self.do_backward(V(Kind.TENSOR, top=True, site=node), node, loss_node=node.func.value)
            return NONE
        if name in ("step", "zero_grad"):
            self.event(name, node, o)
            return NONE
        if name in ("train", "eval", "to", "cuda", "cpu", "float", "half", "requires_grad_"):
            return recv
        if name in ("item", "tolist", "size", "dim", "numel"):
            return V(Kind.NUMBER, site=node)
        return self.opaque_call(None, args, kwargs, node, extra=recv)

    def list_method(self, o: ListObj, name, args, kwargs, node) -> V:
        a0 = args[0] if args and isinstance(args[0], V) else None
        if name in ("append", "add", "appendleft") and a0 is not None:
            loops = self.stack[-1].loops
            recv = node.func.value if isinstance(node.func, ast.Attribute) else None
            reset = recv is not None and loops and _attr_key(recv) in rebound(loops[-1]["node"])
            if self.outlives_iteration(o) and not reset:
                a0 = self.note_accumulation(a0, self.cur_stmt)  # `history.append(loss)`
                self.note_graph_write(o, a0)
            o.add(self.note_cast(a0) if self.casts else a0)  # stored like an assignment
            return NONE
        if name == "insert" and len(args) > 1:
            o.add(self.note_cast(args[1]) if self.casts and isinstance(args[1], V) else args[1])
            return NONE
        if name in ("extend", "update") and a0 is not None:
            lists = a0.of(ListObj)
            if a0.items is not None:
                for e in a0.items:
                    o.add(e)
            elif len(lists) == 1 and lists[0].elems is not None and not a0.objs - {lists[0]}:
                for e in list(lists[0].elems):
                    o.add(e)  # `layers.extend(block(...))`: keep the order nn.Sequential needs
            else:
                o.add(self.iter_value(a0))
            return NONE
        if name in ("pop", "copy", "__getitem__"):
            if name == "copy":
                return V(Kind.LIST, frozenset((ListObj(o.content, o.site),)))
            return o.content if o.content is not None else UNKNOWN
        if name in ("index", "count"):
            return V(Kind.NUMBER)
        if name == "clear":
            self.clear_list(o)
        return NONE

    def clear_list(self, o: ListObj):
        """`lst.clear()`, `del lst[:]`: what was put in before is gone (on every path only)."""
        if not self.cond:
            o.content = None
            o.elems = []

    def dict_method(self, o: DictObj, name, args, kwargs, node) -> V:
        a0 = args[0] if args and isinstance(args[0], V) else None
        if name == "items":
            vals = o.values()
            lst = ListObj(make_tuple([V(Kind.STR), join_all(vals)], None) if vals else None, Site(self.sf, node))
            return V(Kind.LIST, frozenset((lst,)))
        if name == "values":
            vals = o.values()
            return V(Kind.LIST, frozenset((ListObj(join_all(vals) if vals else None, Site(self.sf, node)),)))
        if name == "keys":
            return V(Kind.LIST, frozenset((ListObj(V(Kind.STR), None),)))
        if name in ("get", "pop", "setdefault"):
            key = a0.const if a0 is not None and isinstance(a0.const, (str, int)) else None
            v = o.get(key)
            if name == "setdefault" and len(args) > 1 and v is None:
                o.set(key, args[1])
                return args[1]
            if v is None:
                return args[1] if len(args) > 1 else NONE
            return v
        if name == "update" and a0 is not None:
            for x in a0.objs:
                if isinstance(x, DictObj):
                    for k, v in x.keys.items():
                        o.set(k, v)
            for k, v in kwargs.items():
                if k != "**":
                    o.set(k, v)
            return NONE
        if name == "copy":
            d = DictObj(o.site)
            d.keys, d.rest = dict(o.keys), o.rest
            return V(Kind.DICT, frozenset((d,)))
        return UNKNOWN


def _is_record(cls: ClassObj) -> bool:
    """A dataclass-like record (its fields are given to the constructor): no __init__ of its own."""
    if "__init__" in cls.methods:
        return False
    return _is_dataclass(cls) or cls.lookup("__init__") is None


def _is_dataclass(cls: ClassObj) -> bool:
    return any("dataclass" in ast.dump(d) for d in cls.node.decorator_list)


def _dataclass_fields(cls: ClassObj) -> list:
    """The field names of a @dataclass without an __init__ of its own, bases first; [] otherwise."""
    out = []
    for c in reversed(cls.mro()):
        if not isinstance(c, ClassObj) or c.node is None:
            continue
        if "__init__" in c.methods:
            return []
        if not _is_dataclass(c):
            continue
        for stmt in c.node.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and "ClassVar" not in ast.dump(stmt.annotation)
                and stmt.target.id not in out
            ):
                out.append(stmt.target.id)
    return out


def _lambda_mentions(fn: V, word) -> bool:
    for o in fn.objs:
        if isinstance(o, FuncObj):
            for n in ast.walk(o.node):
                if isinstance(n, ast.Attribute) and n.attr == word:
                    return True
    return False


# Calls that return the module/optimizer they wrap (or a tuple of what they were given).
_PASSTHROUGH_CALLS = {
    "DistributedDataParallel",
    "DataParallel",
    "FullyShardedDataParallel",
    "FSDP",
    "DDP",
    "compile",
    "checkpoint_wrapper",
    "convert_sync_batchnorm",
    "ShardedDataParallel",
}
_PASSTHROUGH_METHODS = {
    "prepare",
    "prepare_model",
    "prepare_optimizer",
    "prepare_scheduler",
    "setup",
    "setup_module",
    "setup_optimizers",
    "wrap",
    "to_device",
}


def _as_loss(v) -> V:
    """What torch.autograd.backward/grad differentiate: a tensor, or the tensors of a sequence."""
    if not isinstance(v, V):
        return UNKNOWN
    if any(isinstance(o, (ListObj, DictObj)) for o in v.objs):
        return flow_of(v).value()
    return v
