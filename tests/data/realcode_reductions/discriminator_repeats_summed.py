# reduction-of: melgan@aca59909f6dd utils/train.py:99 GA303
# false: GA303
"""A GAN that takes k discriminator steps per batch and sums their losses for logging:
`loss_d_sum = 0.0` for each batch, `loss_d_sum += loss_d` in `for _ in range(k)`, then
`(loss_d_sum / k).item()`.

False finding: GA303 confirmed at the sum: "every iteration's graph stays alive with it (memory
grows until the loop ends)". The sum starts afresh for every batch and becomes a float right after
the k repetitions: it holds at most k graphs, all released with the batch, not the graphs of the
whole run. An accumulation in a `range(k)` loop into a name the enclosing loop over the data resets
is not reported.

Verified with torch 2.13 (CPU): a weak reference to each repetition's loss shows that every
earlier batch's graphs are freed. Prints OK.
"""
import gc
import weakref

import torch
import torch.nn as nn

torch.manual_seed(0)
disc = nn.Linear(4, 1)
opt_d = torch.optim.Adam(disc.parameters(), lr=1e-3)
batches = [(torch.randn(8, 4), torch.randn(8, 4)) for _ in range(5)]
k = 2
refs = []
for fake, real in batches:
    loss_d_sum = 0.0
    for _ in range(k):
        opt_d.zero_grad()
        loss_d = torch.mean((disc(real) - 1.0) ** 2) + torch.mean(disc(fake) ** 2)
        refs.append(weakref.ref(loss_d))
        loss_d.backward()
        opt_d.step()
        loss_d_sum += loss_d
    loss_d_avg = (loss_d_sum / k).item()
gc.collect()
alive = [r() is not None for r in refs]
assert not any(alive[:-k]), alive  # only the last batch's repetitions are still referenced
print("OK")
