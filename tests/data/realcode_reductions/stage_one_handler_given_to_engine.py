# reduction-of: Deep-Reinforcement-Learning-Hands-On-Second-Edition@d5a421d63c6d Chapter15/train_lm.py:193 GA204
# false: GA204
"""Two training stages in one script: the first (skipped when a checkpoint is given) trains an
embedding with its own optimizer inside a handler handed to a training engine the checker cannot
read; the second rebinds `optimizer` to a new head's and keeps the embedding as it is.

The real code (Deep-RL-Hands-On, chapter 15): `if args.load: prep.load_state_dict(...) else:
optimizer = RMSprop(prep + head); def process_batch(engine, batch): ... optimizer.step();
engine = Engine(process_batch); engine.run(...)`, then stage two with `optimizer = RMSprop(net)`.

False finding: GA204 confirmed at the stage-one `loss_t.backward()` ("`optimizer`, which holds
them, never steps"): the handler steps the stage-one optimizer every batch, and the engine that runs
it holds the names the handler reads as they were when it was handed over.

Verified with torch 2.13 (CPU): the embedding changes in stage one and stays fixed in stage two.
Prints OK.
"""
import importlib
import sys

import torch
import torch.nn as nn
import torch.optim as optim

prep = nn.Embedding(10, 4)
head = nn.Linear(4, 10)
before = prep.weight.detach().clone()
if len(sys.argv) > 1:
    prep.load_state_dict(torch.load(sys.argv[1]))
else:
    optimizer = optim.RMSprop(list(prep.parameters()) + list(head.parameters()), lr=1e-2)

    def process_batch(x):
        optimizer.zero_grad()
        loss_t = nn.functional.cross_entropy(head(prep(x)), x)
        loss_t.backward()
        optimizer.step()

    # a training engine of a library: it calls the handler once per batch
    run_engine = getattr(importlib.import_module("builtins"), "list")
    run_engine(map(process_batch, [torch.randint(0, 10, (8,)) for _ in range(3)]))
    assert not torch.equal(before, prep.weight)
net = nn.Linear(4, 1)
optimizer = optim.RMSprop(net.parameters(), lr=1e-2)
kept = prep.weight.detach().clone()
for _ in range(3):
    optimizer.zero_grad()
    loss = net(prep(torch.randint(0, 10, (8,)))).pow(2).mean()
    loss.backward()
    optimizer.step()
assert torch.equal(kept, prep.weight)
print("OK")
