"""Run example scripts under real torch and report what happened.

Usage: python harness.py CASES.json RESULTS.json, where CASES is a list of
{"id", "source", "expect"} and `expect` is 'error: <substring>', 'no-update: <dotted name>'
or 'trains'. Each case runs in a forked child of a process that imported torch once.

What is checked:
- error: the script raises and the exception text contains the substring;
- no-update: the script completes and every tensor of the named object (a module's parameters,
  including modules hidden in plain lists/dicts, or a tensor), looked up in the script's frames
  at the first backward()/step(), ends exactly as it started;
- trains: the script completes, every loss given to backward() is finite, and every
  parameter-like leaf that reached a backward() (an nn.Parameter, an optimizer's parameter, or a
  leaf seen in two backward passes) ends different from how it was when first seen;
- warning: the script completes and torch or Python warned with a message containing the text;
- stale-grads: the script completes and some backward() started while a parameter's .grad still
  held exactly what an earlier step() applied, or what the previous backward() left in a leaf that
  was changed since (an update written by hand): gradients never cleared between updates;
- lost-grads: the script completes and some backward() started with a parameter's .grad cleared
  (None or zeros) although an earlier backward() since the last step() had written to it (an
  accumulation whose micro-batches' gradients are dropped before the step);
- mixed-grads: the script completes and some step() applied a .grad written by backward() passes on
  both sides of another step() with no clear in between (one loss's gradients, left in parameters
  another optimizer trains, applied by that optimizer with its own: GA304);
- graph-kept: the script completes and the named object (looked up in the script's globals at
  the end) holds a tensor that still has an autograd graph (history kept alive after training);
- nonfinite: a NaN or inf appears in a loss given to backward() or in a gradient it computed.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import tempfile
import traceback


def _collect(obj, out, seen):
    import torch

    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, torch.nn.Module):
        for m in obj.modules():
            for p in m.parameters(recurse=False):
                out.append(p)
            for k, v in vars(m).items():
                if k.startswith("_"):
                    continue
                if isinstance(v, torch.Tensor) and v.requires_grad:
                    out.append(v)
                elif isinstance(v, (list, tuple, dict)):
                    _collect(v, out, seen)
    elif isinstance(obj, dict):
        for v in obj.values():
            _collect(v, out, seen)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _collect(v, out, seen)


def _follow(obj, parts):
    for p in parts:
        if isinstance(obj, (list, tuple)) and p.isdigit():
            obj = obj[int(p)]
        elif isinstance(obj, dict) and p in obj:
            obj = obj[p]
        else:
            obj = getattr(obj, p)
    return obj


def _run_case(source: str, expect: str) -> dict:
    import torch

    torch.set_num_threads(1)
    kind, _, arg = expect.partition(":")
    kind, arg = kind.strip(), arg.strip()
    fd, path = tempfile.mkstemp(suffix=".py", prefix="example_")
    with os.fdopen(fd, "w") as fh:
        fh.write(source)
    leaves = {}  # id -> [tensor, snapshot]
    named = {}  # id -> [tensor, snapshot]
    losses = []
    state = {"named_found": False}

    def snapshot(t):
        with torch.no_grad():
            return t.detach().clone()

    def graph_leaves(t):
        out, seen, stack = [], set(), [t.grad_fn] if t.grad_fn is not None else []
        if t.grad_fn is None and t.requires_grad:
            out.append(t)
        while stack:
            fn = stack.pop()
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            var = getattr(fn, "variable", None)
            if isinstance(var, torch.Tensor):
                out.append(var)
            stack.extend(n for n, _ in getattr(fn, "next_functions", ()) if n is not None)
        return out

    def find_named():
        if kind != "no-update" or state["named_found"]:
            return
        head, *rest = arg.split(".")
        f = sys._getframe(1)
        while f is not None:
            if os.path.realpath(f.f_code.co_filename) == os.path.realpath(path):
                for env in (f.f_locals, f.f_globals):
                    if head in env:
                        try:
                            obj = _follow(env[head], rest)
                        except Exception:
                            continue
                        ts = []
                        _collect(obj, ts, set())
                        for t in ts:
                            named.setdefault(id(t), [t, snapshot(t)])
                        state["named_found"] = bool(ts)
                        return
            f = f.f_back

    orig_backward = torch.autograd.backward

    passes = {}  # id -> backward passes a leaf was seen in
    optimized = set()
    applied = {}  # id -> (parameter, the .grad a step() applied)

    pending = {}  # id -> parameter a backward() since the last step() wrote a gradient to
    left = {}  # id -> (leaf, the .grad a backward() left in it, the leaf's value then)
    written = {}  # id -> the step() counts at which backward() passes wrote into the leaf's .grad since it was clear

    def backward(tensors, *a, **k):
        ts = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
        state["passes"] = state.get("passes", 0) + 1
        for p in pending.values():
            if p.grad is None or not bool(p.grad.abs().sum() > 0):
                state["lost"] = True
        for p, g in applied.values():
            if p.grad is not None and bool(g.abs().sum() > 0) and torch.equal(p.grad, g):
                state["stale"] = True
        for p, g, v in left.values():
            # updated by hand (`w.data.sub_(lr * w.grad)`) and its gradient left as it was
            if p.grad is not None and torch.equal(p.grad, g) and not torch.equal(p.detach(), v):
                state["stale"] = True
        for t in ts:
            if isinstance(t, torch.Tensor):
                losses.append(bool(torch.isfinite(t.detach()).all()))
                for leaf in graph_leaves(t):
                    leaves.setdefault(id(leaf), [leaf, snapshot(leaf)])
                    passes.setdefault(id(leaf), set()).add(state["passes"])
        find_named()
        before = {}
        for t in ts:
            if isinstance(t, torch.Tensor):
                for leaf in graph_leaves(t):
                    g = leaf.grad
                    before[id(leaf)] = (leaf, None if g is None or not bool(g.abs().sum() > 0) else g.detach().clone())
        out = orig_backward(tensors, *a, **k)
        for leaf, g in before.values():
            now = leaf.grad
            if now is None or (g is not None and torch.equal(now, g)):
                continue
            if g is None:
                written[id(leaf)] = {state.get("steps", 0)}
            else:
                written.setdefault(id(leaf), set()).add(state.get("steps", 0))
        for t in ts:
            if isinstance(t, torch.Tensor):
                for leaf in graph_leaves(t):
                    g = getattr(leaf, "grad", None)
                    if g is not None and not bool(torch.isfinite(g).all()):
                        state["nonfinite_grad"] = True
                    if g is not None and bool(g.abs().sum() > 0):
                        pending[id(leaf)] = leaf
                        left[id(leaf)] = (leaf, g.detach().clone(), leaf.detach().clone())
        return out

    def on_step(opt, args, kwargs):
        for g in opt.param_groups:
            optimized.update(id(p) for p in g["params"])
            if any(p.grad is not None and len(written.get(id(p), ())) > 1 for p in g["params"]):
                state["mixed"] = True
        find_named()

    def after_step(opt, args, kwargs):
        state["steps"] = state.get("steps", 0) + 1
        pending.clear()
        for g in opt.param_groups:
            for p in g["params"]:
                if p.grad is not None:
                    applied[id(p)] = (p, p.grad.detach().clone())

    torch.autograd.backward = backward
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    register_optimizer_step_pre_hook(on_step)
    register_optimizer_step_post_hook(after_step)
    error = None
    final = {}
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            final = runpy.run_path(path, run_name="__main__")
        except BaseException as exc:  # the script's own failure is the observation
            error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=2)}"
        finally:
            torch.autograd.backward = orig_backward
            os.unlink(path)
    warned = [str(w.message) for w in caught]
    # parameter-like leaves: nn.Parameters, optimizer parameters, leaves reused across passes
    # (a fresh input made a leaf for one pass, like an adversarial example, is not one)
    changed = [
        not torch.equal(t.detach(), s)
        for key, (t, s) in leaves.items()
        if isinstance(t, torch.nn.Parameter) or key in optimized or len(passes.get(key, ())) > 1
    ]
    named_changed = [not torch.equal(t.detach(), s) for t, s in named.values()]
    ok, why = True, ""
    if kind == "error":
        ok = error is not None and arg in error
        why = "no exception" if error is None else f"exception without {arg!r}: {error.splitlines()[0]}"
    elif kind == "no-update":
        if error is not None:
            ok, why = False, f"raised: {error.splitlines()[0]}"
        elif not named:
            ok, why = False, f"{arg} not found at backward()/step()"
        elif any(named_changed):
            ok, why = False, f"{arg} changed"
    elif kind == "trains":
        if error is not None:
            ok, why = False, f"raised: {error.splitlines()[0]}"
        elif not leaves:
            ok, why = False, "no backward() reached a leaf"
        elif not all(losses):
            ok, why = False, "a non-finite loss"
        elif not all(changed):
            ok, why = False, f"{changed.count(False)} of {len(changed)} leaves never changed"
    elif kind == "nonfinite":
        if all(losses) and not state.get("nonfinite_grad"):
            ok, why = (
                False,
                "every loss and gradient stayed finite" + (f" (raised: {error.splitlines()[0]})" if error else ""),
            )
    elif kind == "warning":
        if error is not None:
            ok, why = False, f"raised: {error.splitlines()[0]}"
        elif not any(arg in w for w in warned):
            ok, why = False, f"no warning with {arg!r} (warned: {warned[:3]})"
    elif kind == "stale-grads":
        if error is not None:
            ok, why = False, f"raised: {error.splitlines()[0]}"
        elif not state.get("stale"):
            ok, why = False, "every backward() started from cleared gradients"
    elif kind == "mixed-grads":
        if error is not None:
            ok, why = False, f"raised: {error.splitlines()[0]}"
        elif not state.get("mixed"):
            ok, why = False, "no step() applied gradients written on both sides of another step()"
    elif kind == "lost-grads":
        if error is not None:
            ok, why = False, f"raised: {error.splitlines()[0]}"
        elif not state.get("lost"):
            ok, why = False, "no backward() found a gradient cleared before its step()"
    elif kind == "graph-kept":
        if error is not None:
            ok, why = False, f"raised: {error.splitlines()[0]}"
        else:
            head, *rest = arg.split(".")
            try:
                obj = _follow(final[head], rest)
            except Exception:
                obj = None
            ts = []
            _collect(obj, ts, set()) if obj is not None else None
            if not any(t.grad_fn is not None for t in ts):
                ok, why = False, f"{arg} holds no tensor with an autograd graph"
    else:
        ok, why = False, f"unknown expectation {expect!r}"
    return {"ok": ok, "why": "" if ok else why}


def _warm_up():
    """Pay torch's lazy first-use costs (optimizer machinery, autograd) once, before forking."""
    import torch

    torch.set_num_threads(1)
    layer = torch.nn.Linear(2, 2)
    for opt_cls in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop):
        opt = opt_cls(layer.parameters(), lr=0.1)
        layer(torch.randn(3, 2)).sum().backward()
        opt.step()
        opt.zero_grad()


def main(cases_path, results_path):
    _warm_up()
    with open(cases_path) as fh:
        cases = json.load(fh)
    results = {}
    for case in cases:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            try:
                out = _run_case(case["source"], case["expect"])
            except BaseException as exc:
                out = {"ok": False, "why": f"harness error: {exc}"}
            os.write(w, json.dumps(out).encode())
            os.close(w)
            os._exit(0)
        os.close(w)
        chunks = []
        while True:
            b = os.read(r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(r)
        os.waitpid(pid, 0)
        try:
            results[case["id"]] = json.loads(b"".join(chunks).decode() or "{}")
        except ValueError:
            results[case["id"]] = {"ok": False, "why": "the case crashed the interpreter"}
    with open(results_path, "w") as fh:
        json.dump(results, fh)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
