"""Library models: which library names give an `nn.Module`, and what structure it has.

In order (issue: "Knowing what is a module"):
1. the library's source in the analysed environment: the name is followed to its definition
   (site_index.py, then jedi for what that cannot follow), class bases or a factory's body and
   return annotation are followed to `torch.nn.Module`, and the class's `__init__`/`forward` are
   interpreted with the same interpreter on symbolic arguments into a `Shape` (library_shapes.py),
   cached on disk per file content;
2. the table of libraries.py, for libraries that are not installed;
3. evidence in the user's code: the value's `.parameters()` handed to a torch optimizer.
What none of these establishes stays unknown. Library code is read, never imported or run.
"""

from __future__ import annotations

import ast
import time

from .. import __version__
from ..interp.frames import Frame
from ..interp.interpreter import Interpreter
from ..interp.objects import (
    ClassObj,
    DictObj,
    FuncObj,
    ModuleObj,
    Site,
    SymObj,
    TensorObj,
    Unit,
    module_value,
    summary_ids,
)
from ..interp.state import LibraryMode
from ..interp.values import NONE, Kind, V, const, join
from ..ops import torch_api as T
from ..source.program import Program, SourceFile
from . import tables as L
from .environment import PythonEnv
from .register import semantics
from .shapes import OPAQUE_KEY, LibModel, MethodEffect, Shape
from .site_index import Definition, SiteIndex
from .summary_cache import SummaryCache, file_digest

SUMMARY_BUDGET = 30000  # statements to summarise one class (init, forward, methods)
_MAX_FOLLOW = 12  # bases / factory hops when deciding "is it a module"
_STRUCTURAL_METHODS = ("reset_classifier", "get_classifier", "get_output_embeddings", "get_input_embeddings")
_TORCH_MODULE = ("torch.nn.Module", "torch.nn.modules.module.Module")


class LibraryProgram(Program):
    """A Program over library files: imports inside the same top-level package are followed to its
    files (lazily, like project imports); names the table knows and other packages stay dotted."""

    def __init__(self, index: SiteIndex):
        super().__init__()
        self.index = index

    def _top(self, sf: SourceFile) -> str:
        return (sf.modname or self.index.module_name(sf.abspath) or "").split(".")[0]

    def absolute_module(self, sf: SourceFile, module: str, level: int) -> str:
        return self.index.absolute(sf.abspath, module, level) if level else module

    def resolve(self, sf: SourceFile, module: str, level: int = 0) -> str | None:
        key = (sf.abspath, module, level)
        if key in self._resolved:
            return self._resolved[key]
        absolute = self.absolute_module(sf, module, level)
        out = None
        if absolute and absolute.split(".")[0] == self._top(sf) and not L.makes_module(absolute):
            out = self.index.module_file(absolute)
            if out is not None and out.endswith(".pyi"):
                out = None
        self._resolved[key] = out
        return out

    def qualified_import(self, sf: SourceFile, module: str, level: int, name: str) -> str | None:
        absolute = self.absolute_module(sf, module, level)
        q = f"{absolute}.{name}" if absolute else name
        if absolute.split(".")[0] != self._top(sf) or L.table_fact(q) is not None:
            return q
        return None

    def load(self, abspath: str) -> SourceFile | None:
        sf = super().load(abspath)
        if sf is not None and not sf.modname:
            sf.modname = self.index.module_name(abspath) or ""
            sf.path = abspath
        return sf


def _own_ids(method):
    """Run a summary with object ids of the summaries' own range (objects.summary_ids)."""

    def run(*args, **kwargs):
        with summary_ids():
            return method(*args, **kwargs)

    run.__name__, run.__doc__ = method.__name__, method.__doc__
    return run


class Summarizer:
    """Interprets library classes and factories on symbolic arguments into Shapes."""

    def __init__(self, index: SiteIndex):
        self.index = index
        self.program = LibraryProgram(index)
        self.steps = 0

    def _interp(self, path: str):

        sf = self.program.load(path)
        if sf is None:
            return None, None
        interp = Interpreter(self.program, sf, semantics(), budget=SUMMARY_BUDGET, library=LibraryMode())
        st = interp.st
        st.root_budget = SUMMARY_BUDGET
        scope = interp.module_scope(sf, sf.modname or "<library>")
        st.root_index = 1
        st.ctx = (("root", 1),)
        interp.exec_module(scope)
        st.sf = sf
        st.stack = [Frame(None, scope, (), None, frozenset(), label="<library>")]
        st.root_start = st.steps
        return interp, scope

    def _defined(self, defn: Definition, kind) -> tuple:
        """(interpreter of defn's file, the objects of `kind` its top-level name holds); ([]: none)."""
        interp, scope = self._interp(defn.path)
        if interp is None:
            return None, []
        v = scope.globals.get(defn.qual.rsplit(".", 1)[-1])
        if v is not None and v.k & _lazy_kind():
            v = interp.force(v)
        return interp, [o for o in (v.objs if v is not None else ()) if isinstance(o, kind)]

    @_own_ids
    def class_shape(self, defn: Definition) -> Shape | None:

        interp, classes = self._defined(defn, ClassObj)
        if not classes or not classes[0].is_module:
            return None
        cls = classes[0]
        node = cls.node
        args, kwargs = _symbolic_args(interp, cls.lookup("__init__"), node)
        try:
            mv = interp.instantiate(cls, args, kwargs, _call_node(node), label="model")
        except RecursionError:
            return None
        return self._extract(interp, mv, defn)

    @_own_ids
    def factory_shape(self, defn: Definition, args=(), kwargs=None) -> Shape | None:

        interp, fns = self._defined(defn, FuncObj)
        if not fns:
            return None
        fn = fns[0]
        sargs, skw = _symbolic_args(interp, fn, fn.node, self_arg=False)
        for k, c in (kwargs or {}).items():
            skw[k] = _const(c)
        try:
            mv = interp.call_function(fn, list(sargs), skw, _call_node(fn.node))
        except RecursionError:
            return None
        return self._extract(interp, mv, defn)

    def _extract(self, interp, mv, defn: Definition) -> Shape | None:

        mods = [o for o in mv.objs if isinstance(o, ModuleObj)]
        self.steps += interp.st.steps
        if len(mods) != 1:
            return None
        m = mods[0]
        cond = interp.library.conditional
        paths = {oid: _norm_path(p) for oid, p in _unit_paths(m).items()}
        forward = None
        weak: tuple = ()
        out = self._run(interp, m, "forward")
        if out is not None:
            maybe_there = {p for oid, p in paths.items() if _under_conditional(m, p, cond)}
            org = {paths[u.oid] for u in out.org if u.oid in paths}
            forward = tuple(sorted(org - maybe_there))
            weak = tuple(
                sorted(({paths[u.oid] for u in out.weak if u.oid in paths} | (org & maybe_there)) - set(forward))
            )
        root = _shape(m, {}, "", cond)
        methods = []
        for name in _STRUCTURAL_METHODS:
            if m.cls is None or m.cls.lookup(name) is None:
                continue
            methods.append((name, self._effect(interp, m, name, None, None)))
        source = (defn.path, defn.line)
        ties = _ties(m)
        return Shape(
            root.type,
            defn.qual,
            root.spec,
            root.inplace,
            root.params,
            root.children,
            root.aliases,
            root.opaque,
            root.maybe,
            root.repeated,
            forward,
            weak,
            tuple(methods),
            source,
            ties,
        )

    def _effect(self, interp, m, name, args, kwargs) -> MethodEffect:
        """What a structural method does to the module: children set anew, the child it returns."""

        before = {id(c) for c in m.children.values()}
        res = self._run(interp, m, name, args, kwargs)
        replaced = []
        for base, group in _candidates(m).items():
            if base is None or not any(id(c) not in before for _, c in group if isinstance(c, ModuleObj)):
                continue
            if len(group) == 1:
                replaced.append((base, _shape(group[0][1], {}, "", interp.library.conditional)))
            else:
                replaced.append((base, Shape("module", opaque=True)))  # one of several: structure unknown
        returns = None
        if res is not None:
            rm = [o for o in res.objs if isinstance(o, ModuleObj)]
            if len(rm) == 1:
                returns = _module_path(m, rm[0])
        return MethodEffect(tuple(replaced), returns, res is None)

    @_own_ids
    def call_effect(self, cls_defn: Definition, name: str, args=(), kwargs=None) -> MethodEffect | None:
        """A structural method called with constant arguments (`reset_classifier(3)`), on a fresh
        symbolic instance of the class."""

        interp, classes = self._defined(cls_defn, ClassObj)
        if not classes or not classes[0].is_module or classes[0].lookup(name) is None:
            return None
        cls = classes[0]
        sargs, skw = _symbolic_args(interp, cls.lookup("__init__"), cls.node)
        mv = interp.instantiate(cls, sargs, skw, _call_node(cls.node), label="model")
        mods = [o for o in mv.objs if isinstance(o, ModuleObj)]
        if len(mods) != 1:
            return None
        return self._effect(
            interp, mods[0], name, [_const(a) for a in args], {k: _const(c) for k, c in (kwargs or {}).items()}
        )

    def _run(self, interp, m, name, args=None, kwargs=None):
        """Run a method of the summarised module on symbolic arguments; None when it cannot be."""

        fn = m.cls.lookup(name) if m.cls is not None else None
        if fn is None:
            return None
        if args is None:
            args, kwargs = _symbolic_args(interp, fn, fn.node, tensors=True)
        start = interp.st.steps
        interp.st.root_start = interp.st.steps
        try:
            out = interp.call_function(fn, args, kwargs, _call_node(fn.node), self_v=module_value(m))
        except RecursionError:
            return None
        if interp.st.steps - start > SUMMARY_BUDGET or (interp.st.trace.incomplete and not (out.org or out.objs)):
            return None
        return out


def _lazy_kind():

    return Kind.LAZY


def _const(c):

    return const(c)


def _call_node(node):
    call = ast.Call(func=ast.Name(id="<library>", ctx=ast.Load()), args=[], keywords=[])
    ast.copy_location(call, node)
    call.end_lineno, call.end_col_offset = node.lineno, node.col_offset
    return call


def _symbolic_args(interp, fn, node, self_arg=True, tensors=False):
    """Arguments for a symbolic run: parameters without defaults are unknown values (symbolic
    objects, or data tensors that may be None for a forward); defaults are kept."""

    if fn is None:
        return [], {}
    p = fn.node.args
    names = [a.arg for a in p.posonlyargs + p.args]
    if (self_arg and names and fn.cls is not None and not fn.is_static) or (
        names and fn.cls is not None and not fn.is_static
    ):
        names = names[1:]
    site = Site(fn.scope.sf, fn.node)
    nd = len(p.defaults)
    args, kwargs = [], {}
    defaults, kw_defaults = interp.defaults_of(fn)

    def data():
        return join(NONE, V(Kind.TENSOR, frozenset((TensorObj(site),)), site=fn.node))

    for i, name in enumerate(names):
        j = i - (len(names) - nd)
        if tensors:
            args.append(data() if j < 0 or defaults[j].k == Kind.NONE else defaults[j])
        elif j < 0:
            args.append(interp.sym_value(name, site))
        else:
            break
    for a, d in zip(p.kwonlyargs, kw_defaults):
        if tensors and (d is None or d.k == Kind.NONE):
            kwargs[a.arg] = data()
        elif d is None:
            kwargs[a.arg] = interp.sym_value(a.arg, site)
    return args, kwargs


def _unit_paths(m) -> dict:
    """oid of every parameter leaf (and opaque stand-in) under `m` -> its dotted path."""

    out: dict = {}
    stack = [(m, "")]
    seen = set()
    while stack:
        mod, prefix = stack.pop()
        if mod.oid in seen:
            continue
        seen.add(mod.oid)
        if mod.opaque_unit is not None:
            out.setdefault(mod.opaque_unit.oid, prefix + OPAQUE_KEY)
        for k, c in mod.children.items():
            if isinstance(c, Unit):
                out.setdefault(c.oid, prefix + k)
            elif isinstance(c, ModuleObj):
                stack.append((c, prefix + k + "."))
    return out


def _module_path(root, target) -> str | None:

    stack = [(root, "")]
    seen = set()
    while stack:
        m, p = stack.pop()
        if m is target:
            return p
        if m.oid in seen:
            continue
        seen.add(m.oid)
        for k, c in m.children.items():
            if isinstance(c, ModuleObj):
                stack.append((c, f"{p}.{k}" if p else k))
    return None


def _maybe_module(v) -> bool:
    """A value stored on a module that may be a module the engine did not see being made."""

    if not (v.k & Kind.UNKNOWN) or v.k & (Kind.NUMBER | Kind.STR | Kind.NONE | Kind.TENSOR):
        return False
    if any(isinstance(o, SymObj) for o in v.objs):
        return False  # an argument stored as is (a config), not something built here
    return not v.objs


def _norm_path(path: str) -> str:
    """A unit path as the Shape names it: under a candidate slot (`fc<1>.weight`) or a key the
    engine could not read (`<3>.weight`), the opaque part of the slot or of the parent."""
    parts = path.split(".")
    for i, part in enumerate(parts[:-1]):
        if part.startswith("<"):
            return ".".join(parts[:i] + [OPAQUE_KEY])
        if "<" in part:
            return ".".join(parts[:i] + [part.split("<", 1)[0], OPAQUE_KEY])
    return path


def _under_conditional(root, path: str, cond) -> bool:
    """The unit at `path` hangs under an attribute set under an undecided condition."""

    cur = root
    for part in path.split(".")[:-1]:
        if (cur.oid, part) in cond:
            return True
        nxt = cur.children.get(part)
        if not isinstance(nxt, ModuleObj):
            return False
        cur = nxt
    return False


def _candidates(m):
    """Children grouped by attribute: `bn1`, `bn1<1>`... are candidates for one slot (the value was
    one of several classes); keys the engine could not read (`<3>`) are grouped under None."""
    groups: dict = {}
    for k, c in m.children.items():
        base = k.split("<", 1)[0] if not k.startswith("<") else None
        groups.setdefault(base, []).append((k, c))
    return groups


def _shape(m, seen: dict, path: str, cond=frozenset()) -> Shape:

    seen[m.oid] = path
    params, children, aliases, maybe = [], [], [], []
    folded = False
    items = []
    for base, group in _candidates(m).items():
        if base is None or len(group) > 1:
            if base is not None:
                # one of several modules: a part whose structure is not known
                children.append((base, Shape("module", opaque=True)))
            else:
                folded = True
            continue
        items.extend(group)
    for k, c in items:
        here = f"{path}.{k}" if path else k
        if isinstance(c, Unit):
            if c.kind == Unit.OPAQUE:
                continue
            if c.oid in seen:
                aliases.append((k, seen[c.oid]))
                continue
            seen[c.oid] = here
            params.append((k, c.frozen == 1))
        elif isinstance(c, ModuleObj):
            if c.oid in seen:
                aliases.append((k, seen[c.oid]))
                continue
            children.append((k, _shape(c, seen, here, cond)))
    for k, v in m.attrs.items():
        if k not in m.children and _maybe_module(v):
            maybe.append(k)
    spec = m.spec or ""
    qual = m.qual or (f"{m.cls.scope.sf.modname}.{m.cls.name}" if m.cls is not None else "")
    repeated = (spec in T.CONTAINERS and spec != "Sequential") or (
        spec == "Sequential" and any(isinstance(c, ModuleObj) and c.cls is not None for c in m.children.values())
    )
    opaque = bool(m.opaque or m.opaque_unit is not None or maybe or folded)
    source: tuple = ()
    if m.cls is not None:
        source = (m.cls.scope.sf.abspath, m.cls.node.lineno)
    if (spec and spec in T.PARAM_MODULES) or spec in T.RECURRENT:
        opaque = opaque and not params
    return Shape(
        m.type_name(),
        T.strip_torch_alias(qual) if qual.startswith("torch.") else qual,
        spec,
        m.inplace,
        tuple(params),
        tuple(children),
        tuple(aliases),
        opaque,
        tuple(maybe),
        repeated,
        source=source,
    )


def _ties(m) -> tuple:
    """`_tied_weights_keys = {"lm_head.weight": "transformer.wte.weight"}` (transformers 5)."""

    if m.cls is None:
        return ()
    v = m.cls.lookup_attr("_tied_weights_keys")
    if v is None:
        return ()
    out = []
    for d in v.of(DictObj):
        for k, val in d.keys.items():
            if isinstance(k, str) and isinstance(val.const, str):
                out.append((k, val.const))
    return tuple(out)


class LibraryModels:
    """Per analysed environment: answers "does calling this library name give a module, and with
    what structure?" for the interpreter, with a disk cache of the answers."""

    def __init__(self, env: PythonEnv, cache: SummaryCache | None = None, use_jedi: bool = True):
        self.env = env
        self.cache = cache or SummaryCache(enabled=False)
        self.use_jedi = use_jedi
        self._index: SiteIndex | None = None
        self._summarizer: Summarizer | None = None
        self._resolved: dict = {}
        self.timings = {"resolve": 0.0, "summarize": 0.0, "jedi": 0.0}

    @property
    def index(self) -> SiteIndex:
        if self._index is None:
            self._index = SiteIndex(self.env)
        return self._index

    def summarizer(self) -> Summarizer:
        if self._summarizer is None:
            self._summarizer = Summarizer(self.index)
        return self._summarizer

    # ------------------------------------------------------------ names

    worth_asking = staticmethod(L.worth_asking)

    def define(self, qual: str) -> Definition | None:
        """Where a dotted name is defined in the environment (own index first, then jedi)."""
        key = f"define|{self.env.key}|{qual}"
        hit = self.cache.get(key)
        if hit is not None:
            if not hit:
                return None
            qual_, path, line, kind = hit[0]
            return Definition(qual_, path, line, kind, rest=tuple(hit[1]))
        t0 = time.perf_counter()
        top = qual.split(".", 1)[0]
        defn = None
        if self.index.has_package(top):
            defn = self.index.define(qual)
            if defn is None and self.use_jedi and not self.index.absent(qual):
                from . import jedi_resolver

                t1 = time.perf_counter()
                defn = jedi_resolver.define(self.env, qual)
                self.timings["jedi"] += time.perf_counter() - t1
        self.timings["resolve"] += time.perf_counter() - t0
        deps = sorted(self.index.visited)
        if defn is not None:
            self.cache.put(key, [[defn.qual, defn.path, defn.line, defn.kind], list(defn.rest)], deps)
        elif deps:
            # not found in the package's files (jedi asked too, or timed out after 3 s: transformers'
            # lazy `GemmaTokenizerFast`): remembered until those files change, so that each check
            # of a file naming it does not wait for jedi again
            self.cache.put(key, [], deps)
        return defn

    # ------------------------------------------------------------ is it a module?

    def class_is_module(self, defn: Definition, depth=0) -> bool | None:
        """True: its bases lead to torch.nn.Module; False: they all resolve and none does; None: unknown."""
        if L.makes_module(defn.qual):
            return True
        if defn.qual in _TORCH_MODULE or (defn.qual.startswith("torch.nn.modules.") and defn.kind == "class"):
            return True
        if depth > _MAX_FOLLOW or defn.kind != "class":
            return None
        b = self.index.bindings(defn.path)
        node = b.node_of(defn.qual) if b is not None else None
        if node is None:
            return None
        answers: list[bool | None] = []
        for base in node.bases:
            q = self.index.resolve_expr(defn.path, base)
            if q is None:
                answers.append(None)
                continue
            q = T.strip_torch_alias(q)
            if q in _TORCH_MODULE or (
                q.startswith("torch.nn.")
                and q.rsplit(".", 1)[-1][:1].isupper()
                and not q.startswith("torch.nn.parameter")
            ):
                return True
            if L.makes_module(q):
                return True
            if q.startswith("builtins.") or q in ("typing.Generic", "abc.ABC", "object"):
                answers.append(False)
                continue
            sub = self.define(q)
            answers.append(self.class_is_module(sub, depth + 1) if sub is not None else None)
        if any(a is True for a in answers):
            return True
        if answers and all(a is False for a in answers):
            return False
        if not node.bases:
            return False
        return None

    def factory_class(self, defn: Definition, depth=0) -> Definition | None:
        """The module class a factory function returns: its return annotation, or `return Cls(...)`."""
        if depth > 3:
            return None
        b = self.index.bindings(defn.path)
        node = b.node_of(defn.qual) if b is not None else None
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if node.returns is not None:
            q = self.index.resolve_expr(defn.path, node.returns)
            if q is not None:
                sub = self.define(q)
                if sub is not None and sub.kind == "class" and self.class_is_module(sub):
                    return sub
        for n in ast.walk(node):
            if isinstance(n, ast.Return) and isinstance(n.value, ast.Call):
                q = self.index.resolve_expr(defn.path, n.value.func)
                if q is None:
                    continue
                sub = self.define(q)
                if sub is None:
                    continue
                if sub.kind == "class" and self.class_is_module(sub):
                    return sub
                if sub.kind == "function":
                    found = self.factory_class(sub, depth + 1)
                    if found is not None:
                        return found
        return None

    def scheduler_factory(self, qual: str):
        """A function of the environment that builds a torch LR scheduler over one of its
        parameters (library_schedulers.py), read from its source once; None otherwise."""
        key = ("scheduler", qual)
        if key not in self._resolved:
            from .schedulers import source_factory

            try:
                self._resolved[key] = source_factory(self, qual) if self.worth_asking(qual) else None
            except (RecursionError, OSError, ValueError, SyntaxError):
                self._resolved[key] = None
        return self._resolved[key]

    # ------------------------------------------------------------ the question

    def resolve(self, qual: str, const_args=(), const_kwargs=None) -> LibModel | None:
        """A module from calling `qual` (with these constant arguments), or None."""
        const_kwargs = dict(const_kwargs or {})
        key = (qual, tuple(const_args[:1]), _json_args((), const_kwargs))
        if key in self._resolved:
            return self._resolved[key]
        if not self.worth_asking(qual):
            self._resolved[key] = None
            return None
        # the answer, kept on disk while the files it was read from are unchanged: a warm run
        # neither parses the library's __init__ nor follows class bases again
        disk = f"model|{__version__}|{self.env.key}|{qual}|{_json_args(const_args[:1], const_kwargs)}"
        hit = self.cache.get(disk)
        if hit is not None:
            out = _model_from_json(hit)
            self._resolved[key] = out
            return out
        out = None
        try:
            out = self._resolve(qual, const_args, const_kwargs)
        except (RecursionError, OSError, ValueError, SyntaxError):
            out = None
        self._resolved[key] = out
        deps = set(self.index.visited) if self._index is not None else set()
        if self._summarizer is not None:
            deps |= {sf.abspath for sf in self._summarizer.program._files.values() if sf is not None}
        self.cache.put(disk, _model_to_json(out), sorted(deps))
        return out

    def _resolve(self, qual: str, const_args, const_kwargs) -> LibModel | None:
        if not self.worth_asking(qual):
            return None
        defn = self.define(qual)
        if defn is not None:
            found = self._from_source(qual, defn, const_args, const_kwargs)
            if found is not None:
                return found if found.how != "not" else None
        fact = L.table_fact(qual) or (
            L.table_fact(defn.qual + "".join("." + r for r in defn.rest)) if defn is not None else None
        )
        if fact is not None and fact.kind == L.MODULE:
            return LibModel(
                qual,
                defn.qual if defn else qual,
                "table",
                note=f"{fact.library}: {fact.note or 'gives a module'} (checked: {fact.checked})",
                source=(defn.path, defn.line) if defn else (),
            )
        return None

    def _from_source(self, qual: str, defn: Definition, const_args, const_kwargs) -> LibModel | None:
        rest = defn.rest
        if defn.kind == "class":
            is_mod = self.class_is_module(defn)
            if is_mod is False:
                return LibModel(qual, defn.qual, "not")
            if not is_mod:
                return None
            if rest and rest[-1] not in ("from_pretrained", "from_config", "_from_config"):
                return None
            if L.table_fact(defn.qual + ".from_pretrained") is not None and "Auto" in defn.qual.rsplit(".", 1)[-1]:
                return None
            shape = self.class_shape(defn)
            return LibModel(
                qual, defn.qual, "source", shape, "its class derives from torch.nn.Module", (defn.path, defn.line)
            )
        if defn.kind == "function" and not rest:
            if defn.qual in ("timm.models._factory.create_model",) and const_args and isinstance(const_args[0], str):
                entry = self.define(f"timm.models.{const_args[0].split('.')[0].split(':')[-1]}")
                if entry is not None and entry.kind == "function":
                    shape = self.factory_shape(
                        entry, {k: v for k, v in const_kwargs.items() if k not in ("pretrained", "pretrained_cfg")}
                    )
                    if shape is not None:
                        return LibModel(qual, entry.qual, "source", shape, "timm entrypoint", (entry.path, entry.line))
                    cls = self.factory_class(entry)
                    if cls is not None:
                        return LibModel(
                            qual, cls.qual, "source", self.class_shape(cls), "timm entrypoint", (cls.path, cls.line)
                        )
                return None
            cls = self.factory_class(defn)
            if cls is None:
                return None
            shape = self.factory_shape(defn) or self.class_shape(cls)
            return LibModel(
                qual, cls.qual, "source", shape, "the factory returns a torch.nn.Module", (defn.path, defn.line)
            )
        return None

    def method_effect(self, lm: LibModel, name: str, args=(), kwargs=None) -> MethodEffect | None:
        """A structural method's effect for these constant arguments (cached like shapes)."""
        if not lm.source or lm.how != "source":
            return None
        path, line = lm.source
        defn = Definition(lm.canonical, path, line, "class")
        try:
            digest = file_digest(path)
        except OSError:
            return None
        key = f"effect|{__version__}|{lm.canonical}|{name}|{_json_args(args, kwargs)}|{digest}"
        hit = self.cache.get(key)
        if hit is not None:
            return MethodEffect.from_json(hit) if hit else None
        t0 = time.perf_counter()
        try:
            eff = self.summarizer().call_effect(defn, name, args, kwargs)
        except RecursionError:
            eff = None
        self.timings["summarize"] += time.perf_counter() - t0
        self.cache.put(key, eff.to_json() if eff is not None else {}, self._deps(defn))
        return eff

    def _deps(self, defn):
        s = self._summarizer
        return [defn.path] + (
            sorted(sf.abspath for sf in s.program._files.values() if sf is not None) if s is not None else []
        )

    # ------------------------------------------------------------ summaries (cached)

    def class_shape(self, defn: Definition) -> Shape | None:
        return self._shape("class", defn, lambda: self.summarizer().class_shape(defn))

    def factory_shape(self, defn: Definition, kwargs=None) -> Shape | None:
        return self._shape(
            "factory",
            defn,
            lambda: self.summarizer().factory_shape(defn, (), kwargs),
            _json_args((), kwargs) if kwargs else "",
        )

    def _shape(self, kind, defn: Definition, compute, args_key="") -> Shape | None:
        try:
            digest = file_digest(defn.path)
        except OSError:
            return None
        key = f"shape|{__version__}|{kind}|{defn.qual}|{args_key}|{digest}"
        hit = self.cache.get(key)
        if hit is not None:
            return Shape.from_json(hit) if hit else None
        t0 = time.perf_counter()
        shape = None
        try:
            shape = compute()
        except RecursionError:
            shape = None
        self.timings["summarize"] += time.perf_counter() - t0
        self.cache.put(key, shape.to_json() if shape is not None else {}, self._deps(defn))
        return shape


def _model_to_json(lm: LibModel | None) -> dict:
    if lm is None:
        return {"none": True}
    return {
        "qual": lm.qual,
        "canonical": lm.canonical,
        "how": lm.how,
        "note": lm.note,
        "source": list(lm.source),
        "shape": lm.shape.to_json() if lm.shape is not None else None,
    }


def _model_from_json(d: dict) -> LibModel | None:
    if d.get("none"):
        return None
    shape = Shape.from_json(d["shape"]) if d.get("shape") else None
    return LibModel(d["qual"], d["canonical"], d["how"], shape, d.get("note", ""), tuple(d.get("source", ())))


def _json_args(args, kwargs) -> str:
    import json

    try:
        return json.dumps([list(args), sorted((kwargs or {}).items())], sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr((args, kwargs))
