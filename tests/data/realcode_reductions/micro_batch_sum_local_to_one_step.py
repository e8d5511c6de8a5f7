# reduction-of: lightweight-gan@efbec4570b7c lightweight_gan/lightweight_gan.py:1300 GA303
# false: GA303
"""A train step that accumulates gradients over a few micro-batches and also sums their losses
for a log line: the sum is a local of the step, over a counted loop that never steps the
optimizer, and the step comes after the loop.

The real code (lightweight-gan's Trainer.train): `total_disc_loss = torch.zeros([])`, then
`for i in gradient_accumulate_contexts(...): ... (divergence / accumulate).backward();
total_disc_loss += divergence.detach()`-less sum, then `D_opt.step()` and `del total_disc_loss`;
the trainer's driver calls it once per training step.

False finding: GA303 confirmed at `total_disc_loss += divergence` ("every iteration's graph stays
alive ... memory grows until the loop ends"): the sum holds the graphs of one step's micro-batches
only (their saved tensors already freed by each backward()) and dies when the call returns.

Verified with torch 2.13 (CPU): after each step, reading a saved tensor of the last micro-batch's
graph raises "already been freed", and the number of live autograd nodes reachable from the sum
is the same after the third step as after the first. Prints OK.
"""
import torch
import torch.nn as nn

D = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
D_opt = torch.optim.Adam(D.parameters(), lr=1e-4)


def nodes(fn):
    seen, work = set(), [fn]
    while work:
        f = work.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        work.extend(n for n, _ in f.next_functions)
    return len(seen)


def accumulate_contexts(n):
    # lightweight-gan yields a DDP no_sync context for each micro-batch but the last
    for i in range(n):
        yield i


def train_step(accumulate_every=4):
    total_disc_loss = torch.zeros([])
    D_opt.zero_grad()
    for _ in accumulate_contexts(accumulate_every):
        divergence = nn.functional.relu(1 + D(torch.randn(8, 16))).mean()
        (divergence / accumulate_every).backward()
        total_disc_loss += divergence
    D_opt.step()
    size = nodes(total_disc_loss.grad_fn)
    try:
        divergence.grad_fn.next_functions[0][0]._saved_result
        freed = False
    except RuntimeError as e:
        freed = "freed" in str(e)
    loss = float(total_disc_loss.item() / accumulate_every)
    del total_disc_loss
    return loss, size, freed


sizes = []
for step in range(3):
    _, size, freed = train_step()
    assert freed
    sizes.append(size)
assert sizes[0] == sizes[-1], sizes
print("OK")
