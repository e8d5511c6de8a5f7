"""PyTorch semantics for the interpreter: modules, parameters, optimizers, tensor ops.

A mixin of Interpreter (interpreter.py): it reads and writes the same state (the current
file, the no_grad region, the trace). Tables of what ops do live in torch_api.py.
"""
from __future__ import annotations

import ast
import re

from . import torch_api as T
from .objects import (
    FROZEN, MAYBE, TRAINABLE, BoundMethod, ClassObj, CtxObj, DictObj, FuncObj, Group, InstanceObj,
    ListObj, ModuleObj, OptimObj, PIter, ScalerObj, SchedObj, Site, SuperObj, SymObj, TensorObj, Unit,
    merge_state, module_value, unit_value,
)
from .trace import BackwardRec, Cut, Event, FreezeRec, InplaceRec, SaveRec, UnitNew, UnregRec
from .values import EMPTY, NONE, NOCONST, UNKNOWN, Flow, Kind, Star, V, const, flow_of, join, join_all

_STORAGE = (TensorObj, Unit)
_ALIAS_METHODS = {"to", "cpu", "cuda", "float", "double", "half", "bfloat16", "contiguous", "type",
                  "type_as", "pin_memory", "requires_grad_", "cfloat", "coalesce", "as_subclass"}
_SHAPE_METHODS = {"size", "dim", "numel", "nelement", "element_size", "stride", "is_contiguous",
                  "data_ptr", "get_device", "ndimension", "storage_offset", "is_floating_point",
                  "is_complex", "__len__", "tolist_shape", "nbytes", "itemsize", "equal"}
_TUPLE_REDUCTIONS = {"max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin",
                     "nanmedian", "aminmax"}
_CLEARS = {"zero_grad"}


def _storages(v: V):
    return [o for o in v.objs if isinstance(o, _STORAGE)]


def _is_factory_call(node) -> bool:
    return isinstance(node, ast.Call)


class TorchCalls:
    # ------------------------------------------------------------ values

    def tensor_result(self, f: Flow, node, op=None, inputs=(), alias=None, k=Kind.TENSOR) -> V:
        site = Site(self.sf, node)
        if alias is not None:
            objs = frozenset(_storages(alias))
            storage = None
            if not objs:
                storage = TensorObj(site)
                objs = frozenset((storage,))
        else:
            storage = TensorObj(site)
            objs = frozenset((storage,))
        saves = f.saves
        if op is not None and self.nograd is None and f.carries:
            saves = self._record_saves(op, f, inputs, storage, site, saves)
        v = V(k, objs, f.org, f.weak, f.top, f.cuts, saves, f.grads, site=node)
        if self.nograd is not None and v.carries:
            v = self.cut_nograd(v, self.nograd)
        return v

    def _record_saves(self, op, f, inputs, out_storage, site, saves):
        new = []
        if op in T.SAVES_OUTPUT and out_storage is not None:
            new.append(SaveRec(out_storage, 0, site, op))
        if op in T.PRODUCTS and len(inputs) >= 2:
            a, b = inputs[0], inputs[1]
            if isinstance(a, V) and isinstance(b, V):
                if b.carries:
                    new.extend(SaveRec(s, s.version, site, op) for s in _storages(a) if isinstance(s, TensorObj))
                if a.carries:
                    new.extend(SaveRec(s, s.version, site, op) for s in _storages(b) if isinstance(s, TensorObj))
        elif op in T.DIVISIONS and len(inputs) >= 2:
            a, b = inputs[0], inputs[1]
            if isinstance(a, V) and isinstance(b, V):
                if a.carries or b.carries:
                    new.extend(SaveRec(s, s.version, site, op) for s in _storages(b) if isinstance(s, TensorObj))
                if b.carries:
                    new.extend(SaveRec(s, s.version, site, op) for s in _storages(a) if isinstance(s, TensorObj))
        elif op in T.SAVES_INPUT and op not in T.SAVE_NOTHING and inputs:
            a = inputs[0]
            if isinstance(a, V):
                new.extend(SaveRec(s, s.version, site, op) for s in _storages(a) if isinstance(s, TensorObj))
        if new:
            saves = saves | frozenset(new)
        return saves

    def make_cut(self, kind, v: V, node, detail, receiver=None, site=None, result_k=None) -> V:
        """Drop `v`'s gradient at `node`; the cut remembers which leaves lost their path."""
        k = result_k if result_k is not None else v.k
        if not v.carries:
            return v.replace(k=k, site=node, items=None, const=NOCONST)
        cut = Cut(kind, site or Site(self.sf, node), v.org, v.weak, detail, receiver)
        cut.top = v.top
        return v.replace(k=k, org=EMPTY, weak=EMPTY, top=False, cuts=v.cuts | {cut}, site=node, items=None,
                         const=NOCONST)

    def cut_nograd(self, v: V, site: Site) -> V:
        return self.make_cut(Cut.NOGRAD, v, site.node, "no_grad", site=site)

    def nondiff(self, f: Flow, node, detail) -> V:
        v = f.value(Kind.TENSOR, site=node)
        out = self.make_cut(Cut.NONDIFF, v, node, detail)
        storage = TensorObj(Site(self.sf, node))
        return out.replace(objs=frozenset((storage,)))

    def scalar_cut(self, v: V, node, detail, k=Kind.NUMBER, receiver=None) -> V:
        out = self.make_cut(Cut.SCALAR, v, node, detail, receiver=receiver, result_k=k)
        return out.replace(objs=EMPTY, saves=EMPTY)

    # ------------------------------------------------------------ events and backward

    def event(self, kind, node, obj=None, detail=None):
        ev = Event(self.seq(), kind, Site(self.sf, node), self.ctx, obj, detail, guarded=self.cond > 0)
        self.trace.events.append(ev)
        return ev

    def do_backward(self, loss: V, node, kind="backward", inputs=None, loss_node=None):
        site = Site(self.sf, node)
        frame = self.stack[-1]
        rec = BackwardRec(self.seq(), site, self.ctx, loss, kind,
                          self.sf.segment(loss_node) if loss_node is not None else "", frame.label)
        rec.inputs = inputs
        rec.nograd = self.nograd
        interesting = set(loss.org) | set(loss.weak)
        for c in loss.cuts:
            interesting |= c.removed
            interesting |= c.removed_weak
        for o in self.trace.optimizers:
            rec.optimizers.append((o, o.units(), o.complete))
            interesting |= o.units()
        rec.frozen = {u: u.frozen for u in interesting}
        rec.versions = {s: s.storage.version for s in loss.saves}
        rec.event = self.event(kind, node, rec)
        self.trace.backwards.append(rec)
        return rec

    # ------------------------------------------------------------ attributes

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
            elif isinstance(o, _STORAGE):
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
            results.append(V(Kind.UNKNOWN, EMPTY, recv.org, recv.weak, recv.top, recv.cuts, recv.saves, site=node))
        if not results:
            if recv.k & (Kind.NUMBER | Kind.STR | Kind.NONE) and not recv.carries:
                return UNKNOWN
            # unknown object: keep what it carried (outputs.loss, outputs.logits)
            return V(Kind.UNKNOWN | (recv.k & Kind.TENSOR), EMPTY, recv.org, recv.weak, recv.top, recv.cuts,
                     recv.saves, site=node)
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

    def module_attr(self, m: ModuleObj, attr, node) -> V:
        child = m.children.get(attr)
        if child is not None:
            return module_value(child) if isinstance(child, ModuleObj) else unit_value(child, node)
        if attr in m.attrs:
            return m.attrs[attr]
        if m.cls is not None:
            v = self.class_attr(m.cls, attr, module_value(m), node)
            if v is not UNKNOWN:
                return v
        if attr in ("training",):
            return V(Kind.NUMBER)
        if attr in ("module", "_orig_mod") and m.cls is None:
            return module_value(m)  # DDP(model).module, torch.compile(model)._orig_mod
        if m.opaque and not attr.startswith("_") and attr not in _MODULE_METHODS:
            sub = ModuleObj(f"<{attr}>", m.site, m.seq, qual=None)
            sub.opaque = True
            sub.opaque_unit = Unit(Unit.OPAQUE, "<params>", m.site, m.seq, count=None)
            sub.opaque_unit.owner, sub.opaque_unit.attr = sub, "<params>"
            m.children[attr] = sub
            sub.parent, sub.key = m, attr
            return module_value(sub)
        if m.qual and attr in ("weight", "bias") and m.spec is not None:
            return NONE
        return V(Kind.UNKNOWN)

    def tensor_attr(self, recv: V, attr, node) -> V:
        if attr == "grad":
            units = frozenset(o for o in recv.objs if isinstance(o, Unit))
            base = frozenset(o.base for o in recv.objs if isinstance(o, TensorObj) and getattr(o, "base", None))
            return V(Kind.TENSOR, frozenset((TensorObj(Site(self.sf, node)),)), grads=units | base, site=node)
        if attr == "data":
            out = self.make_cut(Cut.DATA, recv, node, ".data", receiver=node.value if hasattr(node, "value") else None)
            storage = TensorObj(Site(self.sf, node))
            storage.base = next((o for o in recv.objs if isinstance(o, Unit)), None)
            return out.replace(objs=frozenset((storage,)), saves=EMPTY, grads=EMPTY)
        if attr == "requires_grad":
            units = [o for o in recv.objs if isinstance(o, Unit)]
            if units and len(recv.objs - {o for o in recv.objs if isinstance(o, PIter)}) == len(units):
                states = {u.frozen for u in units}
                if states == {FROZEN}:
                    return const(False)
                if states == {TRAINABLE} and all(u.kind != Unit.OPAQUE for u in units):
                    return const(True)
                return V(Kind.NUMBER)
            if recv.org and not recv.weak:
                return const(True)
            return V(Kind.NUMBER)
        if attr in ("T", "mT", "H", "mH", "real", "imag"):
            return self.tensor_result(flow_of(recv), node, alias=recv)
        if attr in ("shape", "dtype", "device", "ndim", "is_leaf", "grad_fn", "is_cuda", "layout", "names"):
            return V(Kind.NUMBER | Kind.UNKNOWN, site=node)
        return V(Kind.UNKNOWN, site=node)

    def set_attr(self, recv: V, attr: str, value: V, stmt, target, env):
        for o in recv.objs:
            if isinstance(o, ModuleObj):
                self.module_setattr(o, attr, value, stmt, target)
            elif isinstance(o, InstanceObj):
                o.attrs[attr] = value if len(recv.objs) == 1 else join(o.attrs.get(attr), value)
                self.name_objects(value, self.sf.segment(target) or attr)   # `self.optimizer`
            elif isinstance(o, SymObj):
                o.attrs[attr] = value
            elif isinstance(o, ClassObj):
                o.class_attrs[attr] = value
            elif hasattr(o, "globals"):
                o.globals[attr] = value
        if attr == "requires_grad" and (recv.k & Kind.TENSOR or any(isinstance(o, _STORAGE) for o in recv.objs)):
            flag = value.const if isinstance(value.const, bool) else None
            self.set_requires_grad(recv, flag, stmt, target.value, env, stmt)
        elif attr == "grad" and value.k == Kind.NONE:
            units = [o for o in recv.objs if isinstance(o, Unit)]
            self.event("zero_grad", stmt, frozenset(units), detail="grad=None")

    def module_setattr(self, m: ModuleObj, attr, value: V, stmt, target):
        mods = [o for o in value.objs if isinstance(o, ModuleObj)]
        params = [o for o in value.objs if isinstance(o, Unit) and o.kind == Unit.PARAM]
        if mods and not (value.k & (Kind.LIST | Kind.DICT | Kind.TUPLE)):
            self.register_all(m, attr, mods)
            return
        if params and not (value.k & (Kind.LIST | Kind.DICT | Kind.TUPLE)):
            self.register_all(m, attr, params)
            return
        if attr in m.children and value.k == Kind.NONE:
            m.children.pop(attr, None)
        m.attrs[attr] = value
        # plain containers and tensors that hide parameters from .parameters() (GA109): only what a
        # module class's own code stores on `self`, and only values that surely are such containers
        frame = self.stack[-1]
        if m.cls is None or frame.self_v is None or m not in frame.self_v.objs:
            return
        if value.k & ~(Kind.LIST | Kind.DICT | Kind.TUPLE | Kind.TENSOR | Kind.PARAMS) or value.top:
            return
        leaves = [o for o in value.objs if isinstance(o, Unit) and o.kind == Unit.LEAF]
        containers = [o for o in value.objs if isinstance(o, (ListObj, DictObj))]
        kind = None
        if value.k & Kind.TUPLE and value.items is not None:
            kind = "tuple"
            lst = ListObj(join_all(value.items) if value.items else None, Site(self.sf, stmt))
            containers = [lst]
        elif containers:
            kind = "dict" if isinstance(containers[0], DictObj) else "list"
        elif leaves and not (value.k & ~(Kind.TENSOR | Kind.PARAMS)):
            kind = "tensor"
        if kind is None:
            return
        rec = UnregRec(Site(self.sf, stmt), m, attr, kind, containers[0] if containers else None,
                       fresh=True, value_node=getattr(stmt, "value", None))
        if kind == "tensor":
            rec.units = leaves
            for u in leaves:
                if u.owner is None:
                    u.owner, u.attr = m, attr
        m.unregs.append(rec)
        if not m.in_init:
            self.after_init(m, only=rec)

    def register_all(self, m: ModuleObj, key, objs):
        """Register what a value may be under `key`: several candidates (a loop variable, a branch)
        each get a slot, since any of them may be the registered one."""
        for i, x in enumerate(sorted(objs, key=lambda o: o.oid)):
            if key is None:
                m.register(f"<{len(m.children)}>", x)
            else:
                m.register(key if i == 0 else f"{key}<{i}>", x)

    def after_init(self, m: ModuleObj, only=None):
        """Settle GA109 candidates once __init__ is done: drop what is registered after all."""
        recs = [only] if only is not None else list(m.unregs)
        if not recs:
            return
        registered_mods = {x.oid for x in m.submodules()}
        registered_units = {u.oid for u in m.units()}
        for rec in recs:
            if rec.kind == "tensor":
                units = [u for u in rec.units if u.oid not in registered_units]
                fresh = all(u.seq > m.seq for u in units)
            else:
                content = []
                c = rec.container
                if c is not None:
                    content = list(c.content_value())
                mods, units = [], []
                for v in content:
                    for o in v.objs:
                        if isinstance(o, ModuleObj) and o.oid not in registered_mods:
                            mods.append(o)
                        elif isinstance(o, Unit) and o.kind in (Unit.PARAM, Unit.LEAF) and o.oid not in registered_units:
                            units.append(o)
                fresh = bool(mods or units) and all(x.seq > m.seq for x in mods + units)
                for mod in mods:
                    if mod.parent is None:
                        mod.parent, mod.key = m, f"{rec.attr}[]"
                    units.extend(u for u in mod.units() if u.oid not in registered_units)
            if not units:
                continue
            rec.units = units
            rec.fresh = fresh
            for u in units:
                if u.unreg is None:
                    u.unreg = rec
            if rec not in self.trace.unregs:
                self.trace.unregs.append(rec)

    # ------------------------------------------------------------ items

    def get_item(self, recv: V, index: V, node, env) -> V:
        if recv.items is not None:
            c = index.const
            if isinstance(c, int) and not isinstance(c, bool) and -len(recv.items) <= c < len(recv.items):
                return recv.items[c]
            if index.k & Kind.NUMBER and c is NOCONST or isinstance(c, int):
                return join_all(recv.items) if recv.items else UNKNOWN
            return join_all(recv.items) if recv.items else UNKNOWN
        results = []
        tensorish = False
        for o in recv.objs:
            if isinstance(o, ListObj):
                results.append(o.content if o.content is not None else UNKNOWN)
            elif isinstance(o, DictObj):
                key = index.const if isinstance(index.const, (str, int)) else None
                v = o.get(key)
                results.append(v if v is not None else UNKNOWN)
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
                results.append(join_all([module_value(c) if isinstance(c, ModuleObj) else unit_value(c) for c in kids])
                               if kids else UNKNOWN)
            elif isinstance(o, _STORAGE):
                tensorish = True
            elif isinstance(o, PIter):
                results.append(V(Kind.TENSOR, frozenset(o.units), org=frozenset(o.units)))
        if tensorish or (recv.k & Kind.TENSOR and not results):
            results.append(self.tensor_result(flow_of(recv), node, alias=recv))
        if recv.k & Kind.ARRAY and not results:
            results.append(recv.replace(site=node, items=None))
        if not results:
            return V(Kind.UNKNOWN | (recv.k & Kind.TENSOR), EMPTY, recv.org, recv.weak, recv.top, recv.cuts,
                     recv.saves, site=node)
        return join_all(results)

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
        if recv.k & Kind.TENSOR or any(isinstance(o, _STORAGE) for o in recv.objs):
            self.inplace_update(recv, value, stmt, stmt, op="setitem", target_node=target.value)

    # ------------------------------------------------------------ arithmetic

    def binop(self, op, left: V, right: V, node) -> V:
        if left.k & Kind.TENSOR or right.k & Kind.TENSOR:
            opname = {ast.Mult: "mul", ast.MatMult: "matmul", ast.Div: "div", ast.Pow: "pow",
                      ast.FloorDiv: "floor_divide"}.get(type(op))
            f = flow_of(left, right)
            return self.tensor_result(f, node, op=opname, inputs=(left, right))
        lc, rc = left.const, right.const
        if lc is not NOCONST and rc is not NOCONST:
            try:
                return const(_BINOPS[type(op)](lc, rc), node)
            except Exception:
                pass
        if left.k & (Kind.LIST | Kind.TUPLE) and isinstance(op, ast.Add):
            if left.items is not None and right.items is not None:
                from .interpreter import make_tuple
                return make_tuple(list(left.items) + list(right.items), node)
            lst = ListObj(None, Site(self.sf, node))
            for side in (left, right):
                if side.items is not None:
                    for it in side.items:
                        lst.add(it)
                else:
                    lst.add(self.iter_value(side))
            return V(Kind.LIST, frozenset((lst,)), site=node)
        f = flow_of(left, right)
        k = Kind.ARRAY if (left.k & Kind.ARRAY or right.k & Kind.ARRAY) else (
            Kind.STR if left.k == Kind.STR else Kind.NUMBER if left.k & Kind.NUMBER or right.k & Kind.NUMBER
            else Kind.UNKNOWN)
        return V(k, EMPTY, f.org, f.weak, f.top, f.cuts, f.saves, f.grads, site=node)

    # ------------------------------------------------------------ in-place changes

    def inplace_update(self, target: V, rhs: V | None, node, stmt, op, target_node=None) -> V:
        site = Site(self.sf, node)
        storages = _storages(target)
        for s in storages:
            if isinstance(s, Unit):
                # `w[0].detach().zero_()` is allowed: the detached alias does not require grad
                if s.kind in (Unit.PARAM, Unit.LEAF, Unit.INPUT) and s.frozen != FROZEN and s in target.org:
                    if self.nograd is None:
                        self.trace.inplace.append(InplaceRec(self.seq(), InplaceRec.LEAF, site, frozenset((s,)),
                                                             False, s, s.version, op, self.ctx, stmt))
                    if rhs is not None and s in rhs.grads:
                        self.trace.manual_updates.append((s, site))
                s.version += 1
                s.bumps.append((s.version, site))
            else:
                base = getattr(s, "base", None)
                if base is not None and rhs is not None and base in rhs.grads:
                    self.trace.manual_updates.append((base, site))
                if base is None:
                    s.version += 1
                    s.bumps.append((s.version, site))
        f = flow_of(target) if rhs is None else flow_of(target, rhs)
        new_saves = f.saves
        if self.nograd is None and f.carries and op in T.SAVES_OUTPUT:
            new_saves = new_saves | frozenset(SaveRec(s, s.version, site, op) for s in storages
                                              if isinstance(s, TensorObj))
        if self.nograd is None and f.carries and op in ("mul", "Mult", "imul") and rhs is not None:
            # x *= y saves y (and x's old value is consumed before the change)
            new_saves = new_saves | frozenset(SaveRec(s, s.version, site, "mul") for s in _storages(rhs)
                                              if isinstance(s, TensorObj))
        out = V(Kind.TENSOR, frozenset(storages) if storages else frozenset((TensorObj(site),)),
                f.org, f.weak, f.top, f.cuts, new_saves, target.grads, site=node)
        if self.nograd is not None and rhs is not None and rhs.carries:
            out = self.cut_nograd(out, self.nograd)
        return out

    def set_requires_grad(self, recv: V, flag, node, target_node, env, stmt) -> V:
        units = [o for o in recv.objs if isinstance(o, Unit) and o.kind != Unit.OPAQUE]
        site = Site(self.sf, stmt if stmt is not None else node)
        if units:
            self.freeze(units, flag, node, recv)
            return recv
        if flag is False or not (recv.k & Kind.TENSOR):
            return recv
        if recv.org or recv.weak or recv.top:
            return recv  # a non-leaf: torch refuses the change; nothing new to track
        # a fresh leaf: requires_grad set on a tensor with no history (GA106)
        u = Unit(Unit.FRESH, _target_label(target_node), Site(self.sf, node), self.seq())
        u.source_cuts = frozenset(c for c in recv.cuts if c.removed or c.removed_weak)
        u.computed = bool(u.source_cuts)
        if not u.computed:
            u.kind = Unit.INPUT   # made from data: a leaf that requires grad, not necessarily a weight
        u.created_in_loop = any(c[0] == "loop" for c in self.ctx)
        new = V(Kind.TENSOR, frozenset((u,)), org=frozenset((u,)), cuts=recv.cuts, site=node)
        if isinstance(target_node, ast.Name) and env is not None:
            env[target_node.id] = new
        return new

    def freeze(self, units, flag, node, recv: V):
        strong = self.cond == 0
        site = Site(self.sf, node)
        targets = set()
        for o in recv.objs:
            if isinstance(o, PIter):
                targets |= set(o.sources)
            elif isinstance(o, ModuleObj):
                targets.add(o)
        if not targets:
            targets = set(units)
        anchor = self.rise(site, targets)
        for u in units:
            new = TRAINABLE if flag else FROZEN
            if flag is None:
                u.frozen = MAYBE
            elif strong:
                u.frozen = new
            else:
                u.frozen = merge_state(u.frozen, new)
        if flag is not None:
            self.trace.freezes.append(FreezeRec(self.seq(), frozenset(units), site, anchor, bool(flag), strong,
                                                self.ctx, frozenset(targets)))

    def rise(self, site: Site, targets) -> Site:
        """Report a change made by a helper at the call that handed it the object it changed."""
        anchor = site
        for frame in reversed(self.stack):
            if frame.call_site is None or not frame.arg_objs:
                break
            if any(t in frame.arg_objs for t in targets):
                anchor = frame.call_site
            else:
                break
        return anchor

    # ------------------------------------------------------------ calls by qualified name

    def call_qualified(self, qual: str, args, kwargs, node, env) -> V:
        qual = T.strip_torch_alias(qual)
        head, _, short = qual.rpartition(".")
        if head == "builtins":
            return self.builtin_call(short, args, kwargs, node, env)
        if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.UninitializedParameter"):
            return self.make_parameter(args, kwargs, node)
        if head == "torch.nn" and short[:1].isupper():
            return self.make_module(short, qual, args, kwargs, node)
        if head == "torch.optim.lr_scheduler" or short in T.SCHEDULERS:
            return self.make_scheduler(qual, args, kwargs, node)
        if short in T.OPTIMIZERS or (head == "torch.optim" and short[:1].isupper() and short != "Optimizer"):
            return self.make_optimizer(qual, args, kwargs, node, env)
        if short in T.SCALERS:
            s = ScalerObj(qual, "<scaler>", Site(self.sf, node), self.seq())
            self.event("scaler_new", node, s)
            return V(Kind.SCALER, frozenset((s,)))
        if qual in T.NOGRAD_CTX:
            return V(Kind.CTX, frozenset((CtxObj("nograd", Site(self.sf, node)),)))
        if qual in T.GRAD_CTX:
            return V(Kind.CTX, frozenset((CtxObj("grad", Site(self.sf, node)),)))
        if qual in T.SET_GRAD_CTX:
            flag = args[0].const if args and isinstance(args[0], V) else kwargs.get("mode", UNKNOWN).const
            kind = "nograd" if flag is False else "grad" if flag is True else "other"
            return V(Kind.CTX, frozenset((CtxObj(kind, Site(self.sf, node)),)))
        if qual in T.AUTOCAST_CTX:
            return V(Kind.CTX, frozenset((CtxObj("autocast", Site(self.sf, node), kwargs.get("dtype")),)))
        if qual in ("torch.autograd.grad",):
            outputs = args[0] if args else kwargs.get("outputs", UNKNOWN)
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs", UNKNOWN)
            loss_node = node.args[0] if node.args else None
            self.do_backward(flow_of(outputs).value(), node, kind="grad", inputs=inputs, loss_node=loss_node)
            create = kwargs.get("create_graph")
            if create is not None and create.const is not False:
                f = flow_of(outputs)
                return V(Kind.TUPLE | Kind.TENSOR, EMPTY, f.org, f.weak, f.top, f.cuts, EMPTY, site=node)
            return V(Kind.TUPLE | Kind.TENSOR, frozenset((TensorObj(Site(self.sf, node)),)), site=node)
        if qual in ("torch.autograd.backward",):
            loss = args[0] if args else kwargs.get("tensors", UNKNOWN)
            self.do_backward(flow_of(loss).value(), node, loss_node=node.args[0] if node.args else None)
            return NONE
        if short in ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_grads_with_norm_") and (
                "torch.nn.utils" in head or head.endswith("utils") or head.endswith("clip_grad")):
            self.event("clip", node, args[0] if args else None, detail=short)
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
            from .interpreter import make_tuple
            lst = ListObj(make_tuple([V(Kind.NUMBER), elem], None), Site(self.sf, node))
            return V(Kind.LIST, frozenset((lst,)), site=node)
        if name == "zip":
            from .interpreter import make_tuple
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
                if name in ("sum", "max", "min", "any", "all") and len(args) <= 2 and a is a0 and (
                        a.objs or a.items is not None) and not (a.k & Kind.TENSOR and not a.objs - set(_storages(a))):
                    vals.append(self.iter_value(a))
                else:
                    vals.append(a)
            if name in ("any", "all"):
                return V(Kind.NUMBER, site=node)
            if any(v.k & Kind.TENSOR for v in vals):
                return self.tensor_result(flow_of(*vals), node, op="abs" if name == "abs" else None,
                                          inputs=tuple(vals))
            f = flow_of(*vals)
            consts = [v.const for v in vals]
            if vals and all(c is not NOCONST for c in consts) and name in ("abs", "round", "pow"):
                try:
                    return const({"abs": abs, "round": round, "pow": pow}[name](*consts), node)
                except Exception:
                    pass
            return V(Kind.NUMBER, EMPTY, f.org, f.weak, f.top, f.cuts, f.saves, f.grads, site=node)
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
        return V(Kind.NUMBER)

    def filter_call(self, fn: V, it: V, node, env) -> V:
        from .interpreter import _param_elements
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
            pi = PIter(frozenset(keep), exact=exact, filtered=filtered,
                       sources=frozenset(s for o in it.objs if isinstance(o, PIter) for s in o.sources),
                       site=Site(self.sf, node))
            return V(Kind.PARAMS, frozenset((pi,)), site=node)
        elem = self.iter_value(it)
        self.call_value(fn, [elem], {}, node, env)
        return V(Kind.LIST, frozenset((ListObj(elem, Site(self.sf, node)),)), site=node)

    # ------------------------------------------------------------ modules

    def make_module(self, short, qual, args, kwargs, node) -> V:
        site = Site(self.sf, node)
        m = ModuleObj(f"<{short}>", site, self.seq(), qual=qual)
        consts = [a.const if isinstance(a, V) else NOCONST for a in args]
        kw = {k: v.const for k, v in kwargs.items() if k != "**"}
        created = []
        if short in T.PARAM_MODULES:
            names, flags = T.PARAM_MODULES[short]
            m.spec = short
            enabled = set(names)
            for flag, (pos, key, default) in flags.items():
                val = kw.get(key, consts[pos] if pos < len(consts) else default)
                if val is False:
                    if flag == "bias":
                        enabled -= {n for n in names if "bias" in n}
                    else:
                        enabled = set()
            for n in names:
                if n in enabled:
                    u = Unit(Unit.PARAM, n, site, m.seq, count=1)
                    m.register(n, u)
                    created.append(u)
        elif short in T.RECURRENT:
            m.spec = short
            names = T.recurrent_params([c if c is not NOCONST else None for c in consts], kw)
            if names is None:
                names = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
                m.opaque = True
            for n in names:
                u = Unit(Unit.PARAM, n, site, m.seq, count=1)
                m.register(n, u)
                created.append(u)
        elif short in T.FREE_MODULES:
            m.spec = short
            pos = T.FREE_MODULES[short]
            val = kw.get("inplace", consts[pos] if pos is not None and pos < len(consts) else False)
            m.inplace = val is True
        elif short in T.CONTAINERS:
            m.spec = short
            if short == "Sequential":
                for a in args:
                    v = a.value if isinstance(a, Star) else a
                    items = [v]
                    if isinstance(a, Star):
                        lists = v.of(ListObj)
                        if len(lists) == 1 and lists[0].elems is not None:
                            items = list(lists[0].elems)      # nn.Sequential(*layers), in order
                        else:
                            items = [self.iter_value(v)]
                    for item in items:
                        for o in item.objs:
                            if isinstance(o, ModuleObj):
                                m.register(str(len(m.children)), o)
                            elif isinstance(o, DictObj):
                                for k2, v2 in o.keys.items():
                                    for x in v2.objs:
                                        if isinstance(x, ModuleObj):
                                            m.register(str(k2), x)
            else:
                src = args[0] if args else kwargs.get("modules", kwargs.get("parameters"))
                if isinstance(src, V):
                    self.container_extend(m, src)
        else:
            # a torch module the engine has no table for: it may own parameters
            m.opaque = True
            m.opaque_unit = Unit(Unit.OPAQUE, "<params>", site, m.seq, count=None)
            m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"
            created.append(m.opaque_unit)
        self.note_new_units(created, node)
        return module_value(m)

    def container_extend(self, m: ModuleObj, src: V):
        if src.items is not None:
            elems = list(src.items)
        else:
            elems = []
            for o in src.objs:
                if isinstance(o, ListObj) and o.content is not None:
                    elems.append(o.content)
                elif isinstance(o, DictObj):
                    for k, v in o.keys.items():
                        for x in v.objs:
                            if isinstance(x, (ModuleObj, Unit)):
                                m.register(str(k), x)
                    if o.rest is not None:
                        elems.append(o.rest)
                elif isinstance(o, ModuleObj):
                    elems.extend(module_value(c) if isinstance(c, ModuleObj) else unit_value(c)
                                 for c in o.children.values())
                elif isinstance(o, PIter):
                    elems.append(V(Kind.TENSOR, frozenset(o.units)))
        for e in elems:
            for x in e.objs:
                if isinstance(x, (ModuleObj, Unit)) and not (isinstance(x, Unit) and x.kind == Unit.OPAQUE):
                    m.register(str(len(m.children)), x)
            if any(isinstance(x, SymObj) for x in e.objs) or (e.k & Kind.UNKNOWN and not e.objs):
                m.opaque = True
                if m.opaque_unit is None:
                    m.opaque_unit = Unit(Unit.OPAQUE, "<params>", m.site, m.seq, count=None)
                    m.opaque_unit.owner, m.opaque_unit.attr = m, "<params>"

    def make_parameter(self, args, kwargs, node) -> V:
        data = args[0] if args else kwargs.get("data", UNKNOWN)
        rg = args[1] if len(args) > 1 else kwargs.get("requires_grad")
        u = Unit(Unit.PARAM, "<param>", Site(self.sf, node), self.seq(), count=1)
        if rg is not None and rg.const is False:
            u.frozen = FROZEN
        self.note_new_units([u], node)
        return V(Kind.TENSOR, frozenset((u,)), org=frozenset((u,)), cuts=EMPTY, site=node)

    def note_new_units(self, units, node):
        if not units:
            return
        in_loop = any(c[0] == "loop" for c in self.ctx)
        for u in units:
            u.created_in_loop = in_loop
            u.in_init = bool(self.init_stack)
        root = self.ctx[:1]
        if any(o.ctx[:1] == root for o in self.trace.optimizers):
            stmt = self.cur_stmt if getattr(self, "cur_stmt", None) is not None else node
            self.trace.new_units.append(UnitNew(self.seq(), Site(self.sf, stmt), frozenset(units), self.ctx, in_loop))

    def deepcopy(self, v: V, node) -> V:
        mods = v.of(ModuleObj)
        if not mods:
            return v
        out = []
        for m in mods:
            out.append(module_value(self._clone(m, node, {})))
        return join_all(out)

    def _clone(self, m: ModuleObj, node, memo) -> ModuleObj:
        if m.oid in memo:
            return memo[m.oid]
        site = Site(self.sf, node)
        c = ModuleObj(f"<copy of {m.label}>", site, self.seq(), cls=m.cls, qual=m.qual)
        memo[m.oid] = c
        c.spec, c.inplace, c.opaque, c.copy_of = m.spec, m.inplace, m.opaque, m
        if m.opaque_unit is not None:
            c.opaque_unit = Unit(Unit.OPAQUE, "<params>", site, c.seq, count=None)
            c.opaque_unit.owner, c.opaque_unit.attr = c, "<params>"
        for k, child in m.children.items():
            if isinstance(child, ModuleObj):
                c.register(k, self._clone(child, node, memo))
            elif isinstance(child, Unit):
                u = Unit(child.kind, child.label, site, c.seq, count=child.count)
                u.frozen = child.frozen
                c.register(k, u)
        c.attrs = dict(m.attrs)
        return c

    def module_call(self, m: ModuleObj, args, kwargs, node, env) -> V:
        if m.cls is not None:
            fwd = m.cls.lookup("forward")
            if fwd is not None:
                return self.call_function(fwd, args, kwargs, node, self_v=module_value(m))
            call = m.cls.lookup("__call__")
            if call is not None:
                return self.call_function(call, args, kwargs, node, self_v=module_value(m))
            return self.opaque_call(None, args, kwargs, node, extra=module_value(m))
        spec = m.spec
        x = args[0] if args and isinstance(args[0], V) else UNKNOWN
        if spec == "Sequential":
            out = x
            for child in list(m.children.values()):
                if isinstance(child, ModuleObj):
                    out = self.module_call(child, [out], {}, node, env)
            return out
        if spec in T.PARAM_MODULES or spec in T.RECURRENT:
            units = [u for u in m.children.values() if isinstance(u, Unit)]
            pv = V(Kind.TENSOR, frozenset(units), org=frozenset(u for u in units if u.frozen != FROZEN or True))
            f = flow_of(*[a for a in args if isinstance(a, V)], pv)
            saves_in = T.MODULE_SAVES.get(spec) == "input"
            out = self.tensor_result(f, node, op="linear" if saves_in else None, inputs=(x, pv))
            if spec in T.RECURRENT or spec == "MultiheadAttention":
                from .interpreter import make_tuple
                h = self.tensor_result(f, node)
                if spec == "LSTM":
                    c = self.tensor_result(f, node)
                    return make_tuple([out, make_tuple([h, c], node)], node)
                return make_tuple([out, h], node)
            if spec.endswith("Cell") and spec.startswith("LSTM"):
                from .interpreter import make_tuple
                return make_tuple([out, self.tensor_result(f, node)], node)
            return out
        if spec in T.FREE_MODULES:
            f = flow_of(*[a for a in args if isinstance(a, V)])
            if m.inplace and spec != "Dropout" or (m.inplace and spec.startswith("Dropout")):
                return self.inplace_update(x, None, node, node, op=_INPLACE_OP.get(spec, spec.lower()))
            if spec in ("Identity",):
                return x
            if spec in ("Flatten", "Unflatten"):
                return self.tensor_result(f, node, alias=x)
            save = T.MODULE_SAVES.get(spec)
            op = {"ReLU": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Softmax": "softmax",
                  "LogSoftmax": "log_softmax", "ELU": "elu", "Softmin": "softmin"}.get(spec) if save == "output" \
                else ("gelu" if save == "input" else None)
            return self.tensor_result(f, node, op=op, inputs=(x,))
        if spec in ("ModuleList", "ModuleDict", "ParameterList", "ParameterDict"):
            return UNKNOWN
        # opaque torch module, or a module from a factory the engine could not follow
        return self.opaque_call(None, args, kwargs, node, extra=module_value(m))

    # ------------------------------------------------------------ optimizers

    def make_optimizer(self, qual, args, kwargs, node, env) -> V:
        site = Site(self.sf, node)
        o = OptimObj(qual, "<optimizer>", site, self.seq(), self.ctx)
        params = args[0] if args else kwargs.get("params", UNKNOWN)
        pnode = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "params"), node)
        if isinstance(params, V):
            self.parse_groups(o, params, pnode)
        else:
            o.complete = False
        self.trace.optimizers.append(o)
        self.event("opt_new", node, o)
        return V(Kind.OPTIM, frozenset((o,)), site=node)

    def parse_groups(self, o: OptimObj, params: V, node):
        dicts = []
        for x in params.objs:
            if isinstance(x, ListObj) and x.content is not None:
                dicts.extend(d for d in x.content.objs if isinstance(d, DictObj))
            elif isinstance(x, DictObj):
                dicts.append(x)
        if params.items is not None:
            for it in params.items:
                dicts.extend(d for d in it.objs if isinstance(d, DictObj))
        if dicts:
            for d in sorted(dicts, key=lambda z: z.oid):
                pv = d.keys.get("params")
                if pv is None:
                    o.complete = False
                    continue
                self.add_group(o, pv, d.site or Site(self.sf, node), tuple(k for k in d.keys if k != "params"))
            return
        self.add_group(o, params, Site(self.sf, node), ())

    def add_group(self, o: OptimObj, pv: V, site, options):
        units, exact, filtered, sources = self.param_set(pv)
        frame = self.stack[-1]
        from_arg = any(x in frame.arg_objs for x in pv.objs) if frame.arg_objs else False
        g = Group(frozenset(units), exact, filtered, site, options, frozenset(sources), from_arg)
        if not exact or any(u.kind == Unit.OPAQUE for u in units):
            o.complete = False
        o.groups.append(g)

    def param_set(self, v: V, depth=0):
        units, exact, filtered, sources = set(), True, False, set()
        if v.top or (not v.objs and v.items is None):
            return units, False, filtered, sources
        if v.items is not None:
            for it in v.items:
                u2, e2, f2, s2 = self.param_set(it, depth + 1)
                units |= u2
                exact &= e2
                filtered |= f2
                sources |= s2
            return units, exact, filtered, sources
        for o in v.objs:
            if isinstance(o, Unit):
                units.add(o)
                if o.kind == Unit.OPAQUE:
                    exact = False
            elif isinstance(o, PIter):
                units |= o.units
                exact &= o.exact
                filtered |= o.filtered
                sources |= o.sources
            elif isinstance(o, ListObj) and depth < 6:
                if o.content is None:
                    continue
                u2, e2, f2, s2 = self.param_set(o.content, depth + 1)
                units |= u2
                exact &= e2
                filtered |= f2
                sources |= s2
            elif isinstance(o, SymObj):
                units.add(self.sym_unit(o))
                exact = False
            elif isinstance(o, DictObj):
                pv = o.keys.get("params")
                if pv is not None:
                    u2, e2, f2, s2 = self.param_set(pv, depth + 1)
                    units |= u2
                    exact &= e2
                else:
                    exact = False
            elif isinstance(o, TensorObj):
                pass
            else:
                exact = False
        return units, exact, filtered, sources

    def make_scheduler(self, qual, args, kwargs, node) -> V:
        opt = args[0] if args else kwargs.get("optimizer")
        o = next(iter(opt.of(OptimObj)), None) if isinstance(opt, V) else None
        s = SchedObj(qual, "<scheduler>", Site(self.sf, node), self.seq(), o)
        self.event("sched_new", node, s)
        return V(Kind.SCHED, frozenset((s,)))

    # ------------------------------------------------------------ methods

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
                    self.event("sched_step", node, o)
                results.append(V(Kind.NUMBER) if name in ("get_last_lr", "get_lr") else NONE)
            elif isinstance(o, ScalerObj):
                results.append(self.scaler_method(o, name, args, kwargs, node))
            elif isinstance(o, InstanceObj):
                m = o.cls.lookup(name)
                if m is not None:
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
            elif isinstance(o, _STORAGE):
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
        if name in _TENSORISH_METHODS and not recv.objs:
            # `x.to(device)`, `batch.view(...)` on data the engine did not see being made
            return self.tensor_method(recv.replace(k=recv.k | Kind.TENSOR), name, args, kwargs, node, None)
        # a method of an object the engine cannot see may run a model of its own
        return self.opaque_call(None, args, kwargs, node, extra=recv).replace(top=True)

    def passthrough(self, args):
        """Wrappers that hand back what they were given (accelerator.prepare, DDP, torch.compile...)."""
        vals = [a for a in args if isinstance(a, V)]
        if not vals or not any(v.objs for v in vals):
            return None
        if len(vals) == 1:
            return vals[0]
        from .interpreter import make_tuple
        return make_tuple(vals, None)

    def super_method(self, o: SuperObj, name, args, kwargs, node, env) -> V:
        mro = o.cls.mro()
        for c in mro[1:]:
            if name in c.methods:
                return self.call_function(c.methods[name], args, kwargs, node, self_v=o.recv)
        if name == "__init__":
            return NONE
        # a torch base method: forward to the object itself
        return self.call_method(o.recv, name, args, kwargs, node, env) if name not in ("forward",) else UNKNOWN

    def sym_method(self, o: SymObj, name, args, kwargs, node, recv: V) -> V:
        if name in ("parameters", "named_parameters"):
            return V(Kind.PARAMS, frozenset((PIter(frozenset((self.sym_unit(o),)), exact=False,
                                                   named=name == "named_parameters"),)))
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
        if name in ("append", "add") and a0 is not None:
            o.add(a0)
            return NONE
        if name == "insert" and len(args) > 1:
            o.add(args[1])
            return NONE
        if name in ("extend", "update") and a0 is not None:
            o.add(self.iter_value(a0))
            return NONE
        if name in ("pop", "copy", "__getitem__"):
            if name == "copy":
                return V(Kind.LIST, frozenset((ListObj(o.content, o.site),)))
            return o.content if o.content is not None else UNKNOWN
        if name in ("index", "count"):
            return V(Kind.NUMBER)
        return NONE

    def dict_method(self, o: DictObj, name, args, kwargs, node) -> V:
        from .interpreter import make_tuple
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

    def optimizer_method(self, o: OptimObj, name, args, kwargs, node, env) -> V:
        if name == "zero_grad":
            self.event("zero_grad", node, o)
            return NONE
        if name == "step":
            self.event("step", node, o)
            if args and isinstance(args[0], V) and args[0].of(FuncObj):
                return self.call_value(args[0], [], {}, node, env)
            return NONE
        if name == "add_param_group" and args:
            g = args[0]
            for d in g.of(DictObj):
                pv = d.keys.get("params")
                if pv is not None:
                    self.add_group(o, pv, d.site or Site(self.sf, node), tuple(k for k in d.keys if k != "params"))
            self.event("add_param_group", node, o)
            return NONE
        if name in ("state_dict",):
            return V(Kind.DICT, frozenset((DictObj(None),)))
        return NONE

    def scaler_method(self, s: ScalerObj, name, args, kwargs, node) -> V:
        if name == "scale":
            self.event("scaler_scale", node, s)
            return args[0] if args else UNKNOWN
        if name == "step":
            opt = args[0] if args else UNKNOWN
            for o in opt.of(OptimObj):
                self.event("step", node, o, detail="scaler")
            for o in opt.of(SymObj):
                self.event("step", node, o, detail="scaler")
            self.event("scaler_step", node, s)
            return NONE
        if name == "update":
            self.event("scaler_update", node, s)
            return NONE
        if name == "unscale_":
            self.event("unscale", node, args[0] if args else None)
            return NONE
        return UNKNOWN

    def module_method(self, m: ModuleObj, name, args, kwargs, node, env, recv: V) -> V:
        if m.cls is not None:
            fn = m.cls.lookup(name)
            if fn is not None:
                return self.call_function(fn, args, kwargs, node, self_v=module_value(m))
        if name in m.children or name in m.attrs:
            return self.call_value(self.module_attr(m, name, node), args, kwargs, node, env)
        if name in ("parameters", "named_parameters"):
            units = m.units()
            exact = not any(u.kind == Unit.OPAQUE for u in units)
            return V(Kind.PARAMS, frozenset((PIter(frozenset(units), exact=exact, sources=frozenset((m,)),
                                                   named=name == "named_parameters", site=Site(self.sf, node)),)),
                     site=node)
        if name in ("children", "modules", "named_children", "named_modules"):
            kids = m.submodules() if "modules" in name else [c for c in m.children.values() if isinstance(c, ModuleObj)]
            content = join_all([module_value(c) for c in kids]) if kids else None
            if content is not None and name.startswith("named"):
                from .interpreter import make_tuple
                content = make_tuple([V(Kind.STR), content], None)
            return V(Kind.LIST, frozenset((ListObj(content, Site(self.sf, node)),)))
        if name == "zero_grad":
            self.event("zero_grad", node, m)
            return NONE
        if name == "requires_grad_":
            flag = args[0].const if args and isinstance(args[0], V) else kwargs.get("requires_grad", const(True)).const
            flag = flag if isinstance(flag, bool) else None
            units = [u for u in m.units() if u.kind != Unit.OPAQUE]
            if units:
                self.freeze(units, flag, node, module_value(m))
            return recv
        if name in ("train", "eval", "to", "cuda", "cpu", "float", "double", "half", "bfloat16", "share_memory",
                    "type", "requires_grad", "xpu", "mps"):
            return recv
        if name == "apply" and args:
            fn = args[0]
            for sub in m.submodules()[:64]:
                self.call_value(fn, [module_value(sub)], {}, node, env)
            return recv
        if name in ("forward", "__call__"):
            return self.module_call(m, args, kwargs, node, env)
        if name == "load_state_dict":
            m.loaded_from = True
            return NONE
        if name in ("state_dict",):
            return V(Kind.DICT, frozenset((DictObj(None),)))
        if name in ("register_parameter",) and len(args) > 1:
            key = args[0].const if isinstance(args[0].const, str) else None
            self.register_all(m, key, [u for u in args[1].objs if isinstance(u, Unit)])
            return NONE
        if name in ("add_module", "register_module") and len(args) > 1:
            key = args[0].const if isinstance(args[0].const, str) else None
            self.register_all(m, key, [x for x in args[1].objs if isinstance(x, ModuleObj)])
            return NONE
        if name == "register_buffer" and args:
            key = args[0].const if isinstance(args[0].const, str) else None
            if key:
                m.attrs[key] = V(Kind.TENSOR, frozenset((TensorObj(Site(self.sf, node)),)))
            return NONE
        if name in ("append", "extend", "insert", "update") and m.spec in T.CONTAINERS:
            src = args[-1] if args else UNKNOWN
            if name == "append":
                for x in src.objs:
                    if isinstance(x, (ModuleObj, Unit)):
                        m.register(str(len(m.children)), x)
            else:
                self.container_extend(m, src)
            return recv if name == "append" else NONE
        if name in ("get_submodule",) and args and isinstance(args[0].const, str):
            cur = m
            for part in args[0].const.split("."):
                nxt = cur.children.get(part)
                if not isinstance(nxt, ModuleObj):
                    return UNKNOWN
                cur = nxt
            return module_value(cur)
        if name in ("items", "values", "keys") and m.spec in ("ModuleDict", "ParameterDict"):
            kids = list(m.children.values())
            content = join_all([module_value(c) if isinstance(c, ModuleObj) else unit_value(c) for c in kids]) if kids else None
            if name == "items" and content is not None:
                from .interpreter import make_tuple
                content = make_tuple([V(Kind.STR), content], None)
            if name == "keys":
                content = V(Kind.STR)
            return V(Kind.LIST, frozenset((ListObj(content, None),)))
        if name in ("buffers", "named_buffers"):
            return V(Kind.LIST, frozenset((ListObj(V(Kind.TENSOR), None),)))
        if m.opaque or m.cls is not None:
            return self.opaque_call(None, args, kwargs, node, extra=recv)
        return UNKNOWN

    # ------------------------------------------------------------ tensor methods

    def tensor_method(self, recv: V, name, args, kwargs, node, env) -> V:
        recv_node = node.func.value if isinstance(node.func, ast.Attribute) else None
        argv = [a for a in args if isinstance(a, V)]
        if name == "backward":
            self.do_backward(recv, node, loss_node=recv_node)
            return NONE
        if name == "detach":
            out = self.make_cut(Cut.DETACH, recv, node, ".detach()", receiver=recv_node)
            return out.replace(saves=EMPTY)
        if name == "detach_":
            out = self.make_cut(Cut.DETACH, recv, node, ".detach_()", receiver=recv_node).replace(saves=EMPTY)
            if isinstance(recv_node, ast.Name) and env is not None:
                env[recv_node.id] = out
            return out
        if name in ("item", "tolist"):
            if recv.carries:
                return self.scalar_cut(recv, node, f".{name}()", k=Kind.NUMBER if name == "item" else Kind.LIST,
                                       receiver=recv_node)
            return V(Kind.NUMBER if name == "item" else Kind.LIST, cuts=recv.cuts, site=node)
        if name == "numpy":
            return self.numpy_of(recv, node, recv_node)
        if name == "requires_grad_":
            flag = argv[0].const if argv else kwargs.get("requires_grad", const(True)).const
            flag = flag if isinstance(flag, bool) else None
            return self.set_requires_grad(recv, flag, node, recv_node, env, None)
        if name in ("retain_grad", "register_hook", "register_post_accumulate_grad_hook"):
            return NONE
        if name in _SHAPE_METHODS:
            return V(Kind.NUMBER, site=node)
        if name in _ALIAS_METHODS:
            dtype = argv[0].const if argv and isinstance(argv[0].const, str) else None
            kw_dtype = kwargs.get("dtype")
            for d in (dtype, kw_dtype.const if kw_dtype is not None else None):
                if isinstance(d, str) and any(t in d for t in ("long", "int", "bool", "uint8")):
                    return self.nondiff(flow_of(recv), node, f".{name}({d})")
            return self.tensor_result(flow_of(recv, *[a for a in argv if a.k & Kind.TENSOR]), node, alias=recv)
        if name == "clone":
            return self.tensor_result(flow_of(recv), node)
        if name in T.VIEW_OPS:
            return self.tensor_result(flow_of(recv), node, alias=recv)
        if name in T.SPLIT_OPS:
            out = self.tensor_result(flow_of(recv), node, alias=recv)
            return out.replace(k=Kind.TENSOR | Kind.TUPLE)
        if name in T.NONDIFF_OPS:
            return self.nondiff(flow_of(recv, *argv), node, f".{name}()")
        if name in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "zero_like"):
            return V(Kind.TENSOR, frozenset((TensorObj(Site(self.sf, node)),)), site=node)
        if name.endswith("_") and not name.startswith("_") and name not in T.NOT_INPLACE:
            rhs = flow_of(*argv).value() if argv else None
            if name in ("copy_",) and argv:
                rhs = argv[0]
            return self.inplace_update(recv, rhs, node, node, op=name[:-1], target_node=recv_node)
        if name in _TUPLE_REDUCTIONS and (argv or "dim" in kwargs) and not (
                name in ("max", "min") and argv and argv[0].k & Kind.TENSOR):
            from .interpreter import make_tuple
            values = self.tensor_result(flow_of(recv), node, op=name, inputs=(recv,))
            indices = self.nondiff(flow_of(recv), node, f".{name}().indices")
            t = make_tuple([values, indices], node)
            return t.replace(k=Kind.TUPLE | Kind.TENSOR)
        return self.tensor_result(flow_of(recv, *argv), node, op=name, inputs=(recv, *argv))

    def numpy_of(self, recv: V, node, recv_node) -> V:
        """`.numpy()`: one GA105 cut, absorbing a `.detach()`/`.data` in the same chain."""
        chain = set()
        n = recv_node
        while isinstance(n, (ast.Call, ast.Attribute)):
            chain.add(id(n))
            n = n.func.value if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) else (
                n.value if isinstance(n, ast.Attribute) else None)
        absorbed = [c for c in recv.cuts if c.kind in (Cut.DETACH, Cut.DATA) and id(c.site.node) in chain]
        org, weak = set(recv.org), set(recv.weak)
        for c in absorbed:
            org |= c.removed
            weak |= c.removed_weak
        base = recv.replace(cuts=recv.cuts - frozenset(absorbed), org=frozenset(org), weak=frozenset(weak))
        out = self.make_cut(Cut.NUMPY, base, node, ".numpy()", receiver=recv_node, result_k=Kind.ARRAY)
        return out.replace(objs=EMPTY, saves=EMPTY)

    def numpy_call(self, short, args, kwargs, node) -> V:
        vals = [a for a in args if isinstance(a, V)] + [v for k, v in kwargs.items() if k != "**"]
        tensors = [v for v in vals if v.k & Kind.TENSOR and v.carries]
        if tensors:
            f = flow_of(*vals)
            return self.make_cut(Cut.NUMPY, f.value(Kind.ARRAY), node, f"np.{short}()", result_k=Kind.ARRAY)
        f = flow_of(*vals)
        return V(Kind.ARRAY | Kind.NUMBER, cuts=f.cuts, site=node)

    # ------------------------------------------------------------ torch.* and F.*

    def torch_function(self, short, args, kwargs, node, env) -> V:
        argv = [a.value if isinstance(a, Star) else a for a in args]
        argv = [a for a in argv if isinstance(a, V)]
        if short in T.FACTORIES:
            return self.factory(short, argv, kwargs, node)
        if short in ("stack", "cat", "concat", "concatenate", "hstack", "vstack", "dstack", "column_stack",
                     "block_diag", "cartesian_prod", "broadcast_tensors", "atleast_1d", "atleast_2d"):
            elems = [self.iter_value(a) if not (a.k & Kind.TENSOR and not a.objs - set(_storages(a))) or a.items is not None
                     else a for a in argv[:1]] + argv[1:]
            return self.tensor_result(flow_of(*[e for e in elems if e is not None]), node)
        if short in ("no_grad", "inference_mode", "enable_grad", "set_grad_enabled"):
            return self.call_qualified(f"torch.{short}", args, kwargs, node, env)
        if short in ("manual_seed", "set_printoptions", "set_num_threads", "save", "load", "compile",
                     "set_default_dtype", "use_deterministic_algorithms", "set_float32_matmul_precision"):
            if short == "compile" and argv:
                return argv[0]
            return NONE
        if short in T.VIEW_OPS and argv:
            return self.tensor_result(flow_of(*argv), node, alias=argv[0])
        if short in T.SPLIT_OPS and argv:
            return self.tensor_result(flow_of(argv[0]), node, alias=argv[0]).replace(k=Kind.TENSOR | Kind.TUPLE)
        if short in T.NONDIFF_OPS:
            return self.nondiff(flow_of(*argv), node, f"torch.{short}()")
        if short in _TUPLE_REDUCTIONS and len(argv) >= 2 and not argv[1].k & Kind.TENSOR:
            from .interpreter import make_tuple
            values = self.tensor_result(flow_of(argv[0]), node, op=short, inputs=(argv[0],))
            return make_tuple([values, self.nondiff(flow_of(argv[0]), node, f"torch.{short}().indices")],
                              node).replace(k=Kind.TUPLE | Kind.TENSOR)
        if short.endswith("_") and argv and short not in T.NOT_INPLACE:
            return self.inplace_update(argv[0], flow_of(*argv[1:]).value() if len(argv) > 1 else None, node, node,
                                       op=short[:-1], target_node=node.args[0] if node.args else None)
        out_kw = kwargs.get("out")
        if short == "where" and len(argv) == 3:
            return self.tensor_result(flow_of(argv[1], argv[2]), node, op="where", inputs=(argv[1], argv[2]))
        res = self.tensor_result(flow_of(*argv), node, op=short, inputs=tuple(argv))
        if out_kw is not None:
            self.inplace_update(out_kw, res, node, node, op=short, target_node=None)
        return res

    def factory(self, short, argv, kwargs, node) -> V:
        site = Site(self.sf, node)
        rg = kwargs.get("requires_grad")
        wants_grad = rg is not None and rg.const is True
        data = argv[0] if argv else kwargs.get("data")
        cuts = EMPTY
        if short in T.REWRAP and data is not None:
            f = flow_of(data)
            if f.carries:
                v = self.make_cut(Cut.REWRAP, f.value(), node, f"torch.{short}()",
                                  receiver=node.args[0] if node.args else None)
                if data.k & (Kind.LIST | Kind.TUPLE) or data.items is not None:
                    for c in v.cuts - f.cuts:
                        c.note = "list"
                cuts = v.cuts
            else:
                cuts = f.cuts
        elif short in ("from_numpy", "as_tensor", "frombuffer") and data is not None:
            if short == "as_tensor" and data.k & Kind.TENSOR and data.carries:
                return data
            cuts = flow_of(data).cuts
        elif short in ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                       "randint_like"):
            cuts = EMPTY
        if wants_grad:
            u = Unit(Unit.LEAF, "<tensor>", site, self.seq(), count=1)
            u.source_cuts = frozenset(c for c in cuts if c.removed or c.removed_weak)
            u.computed = bool(u.source_cuts)
            if u.computed:
                u.kind = Unit.FRESH
            self.note_new_units([u], node)
            return V(Kind.TENSOR, frozenset((u,)), org=frozenset((u,)), cuts=cuts, site=node)
        return V(Kind.TENSOR, frozenset((TensorObj(site),)), cuts=cuts, site=node)

    def functional(self, short, args, kwargs, node, env) -> V:
        argv = [a for a in args if isinstance(a, V)]
        inplace = kwargs.get("inplace")
        if (inplace is not None and inplace.const is True) or short.endswith("_"):
            x = argv[0] if argv else UNKNOWN
            return self.inplace_update(x, None, node, node, op=short.rstrip("_"),
                                       target_node=node.args[0] if node.args else None)
        if short in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "pad", "interpolate",
                     "upsample", "embedding", "one_hot", "grid_sample", "pixel_shuffle", "unfold", "fold"):
            if short == "one_hot":
                return V(Kind.TENSOR, frozenset((TensorObj(Site(self.sf, node)),)), site=node)
            if short == "embedding" and len(argv) > 1:
                return self.tensor_result(flow_of(argv[1]), node)
            return self.tensor_result(flow_of(*argv), node)
        return self.tensor_result(flow_of(*argv, *[v for k, v in kwargs.items() if k not in ("**",) and
                                                   isinstance(v, V) and v.k & Kind.TENSOR]),
                                  node, op=short, inputs=tuple(argv))


def _lambda_mentions(fn: V, word) -> bool:
    for o in fn.objs:
        if isinstance(o, FuncObj):
            for n in ast.walk(o.node):
                if isinstance(n, ast.Attribute) and n.attr == word:
                    return True
    return False


_TENSORISH_METHODS = (_ALIAS_METHODS | _SHAPE_METHODS | T.VIEW_OPS | T.SPLIT_OPS | T.NONDIFF_OPS | T.SAVES_INPUT
                      | T.SAVES_OUTPUT | {"clone", "sum", "mean", "numpy", "item", "tolist", "detach", "abs",
                                          "flatten", "softmax", "log_softmax", "square", "neg"}) - {"backward"}

# Calls that return the module/optimizer they wrap (or a tuple of what they were given).
_PASSTHROUGH_CALLS = {"DistributedDataParallel", "DataParallel", "FullyShardedDataParallel", "FSDP", "DDP",
                      "compile", "checkpoint_wrapper", "convert_sync_batchnorm", "ShardedDataParallel"}
_PASSTHROUGH_METHODS = {"prepare", "prepare_model", "prepare_optimizer", "prepare_scheduler", "setup",
                        "setup_module", "setup_optimizers", "wrap", "to_device"}

_MODULE_METHODS = {
    "parameters", "named_parameters", "children", "modules", "named_children", "named_modules", "zero_grad",
    "requires_grad_", "train", "eval", "to", "cuda", "cpu", "float", "double", "half", "bfloat16", "apply",
    "forward", "load_state_dict", "state_dict", "register_parameter", "add_module", "register_module",
    "register_buffer", "buffers", "named_buffers", "get_submodule", "training", "share_memory",
}

_INPLACE_OP = {"ReLU": "relu", "ReLU6": "hardtanh", "LeakyReLU": "leaky_relu", "ELU": "elu", "SiLU": "silu",
               "Hardtanh": "hardtanh", "Threshold": "threshold", "CELU": "celu", "SELU": "selu"}

_FOLD_MAX = 100_000     # a constant longer than this is not built (`"a" * 10**10` would take 10 GB)


def _fold_mult(a, b):
    seq, n = (a, b) if isinstance(a, (str, bytes, tuple, list)) else (b, a)
    if isinstance(seq, (str, bytes, tuple, list)) and isinstance(n, int) and n * len(seq) > _FOLD_MAX:
        raise OverflowError("not folded: too long")
    return a * b


def _fold_mod(a, b):
    if isinstance(a, (str, bytes)) and re.search(rb"\d{5,}|\*" if isinstance(a, bytes) else r"\d{5,}|\*", a):
        raise OverflowError("not folded: a format that may be huge")
    return a % b


_BINOPS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: _fold_mult,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: _fold_mod,
    ast.Pow: lambda a, b: a ** b if abs(b) < 64 else None,
}


def _target_label(node) -> str:
    """A name for a leaf made by `requires_grad`: the variable or attribute it was set on."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return "<tensor>"
