"""Process launchers: `torch.multiprocessing.spawn(main_worker, nprocs=n, args=(cfg,))` runs
`main_worker(rank, cfg)` in each worker. The engine runs it once, on the arguments the launcher is
given and an unknown rank, so the worker's training step sees the script's configuration and
models instead of running alone on unknown arguments."""

from __future__ import annotations

from ..interp.core import Core
from ..interp.values import NONE, Kind, Star, V


def spawn(ip: Core, qual, args, kwargs, node, env) -> V | None:
    fn = args[0] if args else kwargs.get("fn")
    if not isinstance(fn, V) or not fn.objs or any(isinstance(a, Star) for a in args):
        return None
    given = kwargs.get("args", args[1] if len(args) > 1 else None)
    if given is None:
        extra: list = []
    elif isinstance(given, V) and given.items is not None:
        extra = list(given.items)
    else:
        return None  # arguments the engine cannot split: the worker runs on its own, as before
    ip.call_value(fn, [V(Kind.NUMBER, site=node), *extra], {}, node, env)
    return NONE
