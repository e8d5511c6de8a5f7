"""Reading tensors and modules for the probe: finiteness, norms, what a module holds."""

from __future__ import annotations


def _graph_size(tensors, cap=200_000) -> int:
    """Autograd nodes behind the loss: a graph that grows every iteration carries old history."""
    seen: set[int] = set()
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None]
    while stack and len(seen) < cap:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        stack.extend(n for n, _ in fn.next_functions if n is not None)
    return len(seen)


def _finite(torch, t) -> bool:
    if t.is_sparse:
        t = t.coalesce().values()
    if not (t.is_floating_point() or t.is_complex()):
        return True
    return bool(torch.isfinite(t).all())


def _nonzero(t) -> bool:
    if t.is_sparse:
        t = t.coalesce().values()
    return bool(t.any())


def _norm(torch, t) -> float:
    if t.is_sparse:
        t = t.coalesce().values()
    with torch.no_grad():
        v = float(t.detach().double().norm()) if t.numel() else 0.0
    return v


def _tensors_in(torch, value, depth=0):
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 2 and isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors_in(torch, v, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for v in value.values():
            yield from _tensors_in(torch, v, depth + 1)
    elif depth < 2 and hasattr(value, "data") and type(value).__name__ == "PackedSequence":
        yield value.data


def module_tensors(torch, module, label: str):
    """(name, tensor, hidden) for a module's parameters, then the modules and tensors that require
    grad kept in plain lists, tuples and dicts of its submodules (which .parameters() never yields)."""
    seen = set()
    for name, p in module.named_parameters(remove_duplicate=True):
        seen.add(id(p))
        yield (f"{label}.{name}" if label else name), p, False
    for mname, m in module.named_modules():
        for attr, value in vars(m).items():
            if attr.startswith("_"):
                continue
            prefix = ".".join(x for x in (label, mname, attr) if x)
            if isinstance(value, torch.Tensor):
                # a plain tensor attribute that requires grad: a weight .parameters() never yields
                if value.requires_grad and id(value) not in seen:
                    seen.add(id(value))
                    yield prefix, value, True
                continue
            if not isinstance(value, (list, tuple, dict)):
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(item, torch.nn.Module):
                    for n, p in item.named_parameters():
                        if id(p) not in seen:
                            seen.add(id(p))
                            yield f"{prefix}.{key}.{n}", p, True
                elif isinstance(item, torch.Tensor) and item.requires_grad and id(item) not in seen:
                    seen.add(id(item))
                    yield f"{prefix}.{key}", item, True


class Several(list):
    """Objects watched under one name in turn (a loop variable bound to each ensemble member)."""


def _parts(torch, obj):
    """(attribute, value) of an object's modules and trainable tensors (a trainer holding the model),
    or None when it holds none, or a generator's modules and tensors (`model.parameters()`)."""
    if isinstance(obj, (str, bytes, int, float, bool)) or obj is None:
        return None
    found = []
    for k, v in getattr(obj, "__dict__", {}).items():
        if k.startswith("_"):
            continue
        if isinstance(v, torch.nn.Module) or (isinstance(v, torch.Tensor) and v.requires_grad):
            found.append((k, v))
    if found:
        return found
    if (hasattr(obj, "__iter__") and not hasattr(obj, "__dict__")) or type(obj).__name__ == "generator":
        try:
            items = [x for x in obj if isinstance(x, (torch.nn.Module, torch.Tensor))]
        except TypeError:
            return None
        return list(enumerate(items)) or None
    return None
