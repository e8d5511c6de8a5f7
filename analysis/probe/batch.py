"""A batch for a model the test has but whose data it does not: built from the first layer."""

from __future__ import annotations

from ._torch import require_torch

TARGETS = ("class", "regression", "binary")


def first_layer(model):
    """The first module, in registration order, whose type says what input it takes."""
    torch = require_torch()
    nn = torch.nn
    kinds = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Embedding, nn.EmbeddingBag, nn.RNNBase, nn.LazyLinear)
    for m in model.modules():
        if isinstance(m, kinds) and not isinstance(m, nn.LazyLinear):
            return m
    return None


def batch_for(model, target: str | None = None, batch_size: int = 4, generator=None):
    """`(x,)` or `(x, y)`: inputs shaped for the model's first layer (Linear: features; ConvNd:
    channels and a small spatial size; Embedding: token ids; RNN/LSTM/GRU: a short sequence) and,
    for `target` 'class' / 'regression' / 'binary', targets shaped like its output. Raises
    ValueError when the first layer does not say (give the test a `batch` fixture then)."""
    torch = require_torch()
    nn = torch.nn
    layer = first_layer(model)
    g = generator or torch.Generator().manual_seed(0)
    b = batch_size
    if isinstance(layer, nn.Linear):
        x = torch.randn(b, layer.in_features, generator=g)
    elif isinstance(layer, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        dims = 1 if isinstance(layer, nn.Conv1d) else 3 if isinstance(layer, nn.Conv3d) else 2
        x = torch.randn(b, layer.in_channels, *([32] * dims), generator=g)
    elif isinstance(layer, (nn.Embedding, nn.EmbeddingBag)):
        x = torch.randint(0, layer.num_embeddings, (b, 8), generator=g)
    elif isinstance(layer, nn.RNNBase):
        shape = (b, 6, layer.input_size) if layer.batch_first else (6, b, layer.input_size)
        x = torch.randn(*shape, generator=g)
    else:
        raise ValueError(
            f"batch_for: cannot tell what {type(model).__name__} takes as input (no Linear, ConvNd, "
            "Embedding or RNN layer first); give the test a `batch` fixture"
        )
    if target is None:
        return (x,)
    if target not in TARGETS:
        raise ValueError(f"batch_for: target is one of {', '.join(TARGETS)}")
    was = model.training
    with torch.no_grad():
        out = model(x)
    model.train(was)
    if isinstance(out, (tuple, list)):
        out = out[0]
    if target == "class":
        y = torch.randint(0, out.shape[-1], out.shape[:-1], generator=g)
    elif target == "binary":
        y = torch.rand(out.shape, generator=g).round()
    else:
        y = torch.randn(out.shape, generator=g)
    return x, y
