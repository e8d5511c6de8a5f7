"""Process launchers: `torch.multiprocessing.spawn(main_worker, nprocs=n, args=(cfg,))` runs
`main_worker(rank, cfg)` in each worker. The engine runs it once, on the arguments the launcher is
given and an unknown rank, so the worker's training step sees the script's configuration and
models instead of running alone on unknown arguments. `mp.Process(target=run, args=(...))` (and a
thread) runs `run(*args, **kwargs)` the same way; it is run where the process is made, as its
`start()` follows it."""

from __future__ import annotations

from ..interp.core import Core
from ..interp.values import NONE, Kind, Star, V


def _launch_args(fn, args, given) -> list | None:
    """The positional arguments a launcher hands its function (`args=(cfg, model)`): [] when none are
    given, None when the function or the arguments cannot be told apart (it then runs on its own)."""
    if not isinstance(fn, V) or not fn.objs or any(isinstance(a, Star) for a in args):
        return None
    if given is None:
        return []
    if isinstance(given, V) and given.items is not None:
        return list(given.items)
    return None


def spawn(ip: Core, qual, args, kwargs, node, env) -> V | None:
    fn = args[0] if args else kwargs.get("fn")
    extra = _launch_args(fn, args, kwargs.get("args", args[1] if len(args) > 1 else None))
    if extra is None:
        return None
    ip.call_value(fn, [V(Kind.NUMBER, site=node), *extra], {}, node, env)
    return NONE


def process(ip: Core, qual, args, kwargs, node, env) -> V | None:
    """`Process(group, target, name, args, kwargs)`: the target runs once on the given arguments;
    the process object itself stays unknown (its `start()` and `join()` do nothing here)."""
    fn = kwargs.get("target", args[1] if len(args) > 1 else None)
    extra = _launch_args(fn, args, kwargs.get("args", args[3] if len(args) > 3 else None))
    if extra is None or kwargs.get("kwargs", args[4] if len(args) > 4 else None) is not None:
        return None  # a dict of keyword arguments is not split here
    if id(node) in ip.st.launched:
        return None  # `for rank in range(n): Process(target=train, ...)`: each process runs the same code
    ip.st.launched.add(id(node))
    # a process runs its target once, on its own: the loop that starts the processes is none of
    # its iterations (an optimizer the target builds is one per process, not one per iteration)
    saved = ip.st.ctx
    ip.st.ctx = tuple(c for c in saved if c[0] != "loop")
    try:
        ip.call_value(fn, extra, {}, node, env)
    finally:
        ip.st.ctx = saved
    return None  # the process object: the call's ordinary (unknown) value
