# runtime: trains
"""Param groups as detectron2's `get_default_optimizer_params` makes them: one group per
parameter with its hyperparameters (no weight decay for norm layers), then regrouped by equal
hyperparameters through `defaultdict`s keyed by parameters and by tuples of settings. Every
parameter of the model is in exactly one group."""
import copy
import itertools
from collections import defaultdict

import torch
import torch.nn as nn


def default_params(model, base_lr=None, weight_decay_norm=None):
    defaults = {}
    if base_lr is not None:
        defaults["lr"] = base_lr
    params = []
    memo = set()
    for module in model.modules():
        for value in module.parameters(recurse=False):
            if not value.requires_grad or value in memo:
                continue
            memo.add(value)
            hyperparams = copy.copy(defaults)
            if isinstance(module, nn.LayerNorm) and weight_decay_norm is not None:
                hyperparams["weight_decay"] = weight_decay_norm
            params.append({"params": [value], **hyperparams})
    return reduce_param_groups(params)


def reduce_param_groups(params):
    expanded = defaultdict(dict)
    for item in params:
        cur_params = {x: y for x, y in item.items() if x != "params"}
        for param in item["params"]:
            expanded[param].update({"params": [param], **cur_params})
    groups = defaultdict(list)
    for item in expanded.values():
        cur_params = tuple((x, y) for x, y in item.items() if x != "params")
        groups[cur_params].append({"params": item["params"]})
    ret = []
    for param_keys, param_values in groups.items():
        cur = {kv[0]: kv[1] for kv in param_keys}
        cur["params"] = list(itertools.chain.from_iterable([p["params"] for p in param_values]))
        ret.append(cur)
    return ret


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 2))
optimizer = torch.optim.SGD(default_params(model, base_lr=0.1, weight_decay_norm=0.0), lr=0.1, weight_decay=1e-4)
for it in range(3):
    loss = model(torch.randn(5, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
