# reduction-of: litgpt@26857050 litgpt/pretrain.py:355 GA204
# false: GA204
# quiet: GA204
"""A training loop as litgpt's `fit` writes it: the iteration counter lives in the `state` dict
(`state["iter_num"] += 1`) and the optimizer steps only when it reaches a multiple of the
accumulation count; the optimizer class is picked by name with `__import__`.

False finding: GA204 confirmed, "`optimizer`, which holds them, never steps". The engine ran one or
two iterations with the counter as a constant (1, then 2), so `not state["iter_num"] % 4 != 0` was
decided False and the step looked unreachable. The counter differs from one iteration to the next.

Verified with torch 2.13 (CPU): the weights change after the fourth iteration. Prints OK.
"""
import torch
import torch.nn as nn


def make_optimizer(name, params, **kwargs):
    module = __import__("torch.optim", fromlist=[name])
    cls = getattr(module, name)
    return cls(params, **{k: v for k, v in kwargs.items() if k in ("lr",)})


def accumulation_iters():
    return 4


def fit(state, batches):
    model = state["model"]
    optimizer = state["optimizer"]
    for x, y in batches:
        state["iter_num"] += 1
        is_accumulating = state["iter_num"] % accumulation_iters() != 0
        loss = nn.functional.mse_loss(model(x), y) / accumulation_iters()
        loss.backward()
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()
            state["step_count"] += 1


def main(optimizer="AdamW"):
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = make_optimizer(optimizer, model.parameters(), lr=0.1, fused=False)
    state = {"model": model, "optimizer": optimizer, "iter_num": 0, "step_count": 0}
    before = model.weight.detach().clone()
    fit(state, [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(8)])
    assert state["step_count"] == 2
    assert not torch.equal(before, model.weight)
    print("OK")


if __name__ == "__main__":
    main()
