# reduction-of: torchtune==0.6.1 recipes/full_finetune_single_device.py:700 GA303
# false: GA303
"""Gradient accumulation that sums the micro-batch losses (with their graphs) for logging, reset at every step.

The real code (the torchtune recipes: full and LoRA fine-tuning, DPO, knowledge distillation, QAT; 15
places): `current_loss = loss_step(batch) * current_num_tokens`, `running_loss += current_loss`,
`current_loss.backward()`; under `if (idx + 1) % grad_accum == 0:` the gradients are scaled by
1 / num_tokens, the optimizer steps, `running_loss.item() / num_tokens` is logged and
`running_loss = 0` resets the sum for the next step.

False finding: GA303 confirmed at `running_loss += current_loss`: "every iteration's graph stays alive
with it (memory grows until the loop ends)". The sum is reset after every optimizer step, so it never
holds more than one accumulation window of micro-batches, and each of their backward() calls has already
freed the saved tensors: nothing grows across the loop. (The engine sees the reset only on the step
path.) The GA205 suspicious this script also draws is about the hand-written grad scaling standing in
for torchtune's `scale_grads`, not part of this reduction.

Verified with torch 2.13 (CPU): the history `running_loss` holds never spans more than `accum`
micro-batches (counted on its autograd graph before each reset) and training changes the model.
Prints OK.
"""
import torch
import torch.nn as nn


def micro_batches_in(loss):
    """How many `* n_tokens` products the autograd history of `loss` reaches."""
    seen, stack, count = set(), [loss.grad_fn], 0
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        count += type(fn).__name__ == "MulBackward0"
        stack.extend(f for f, _ in fn.next_functions)
    return count


torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
before = [p.detach().clone() for p in model.parameters()]
accum = 2
running_loss = 0
num_tokens = 0
optimizer.zero_grad()
for epoch in range(2):
    for idx in range(6):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        n_tokens = torch.tensor(8)
        num_tokens += n_tokens
        current_loss = nn.functional.mse_loss(model(x), y) * n_tokens
        running_loss += current_loss
        current_loss.backward()
        if (idx + 1) % accum == 0:
            for p in model.parameters():
                p.grad /= num_tokens
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            assert micro_batches_in(running_loss) == accum
            loss_to_log = running_loss.item() / num_tokens
            running_loss = 0
            num_tokens = 0
assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
print("OK")
