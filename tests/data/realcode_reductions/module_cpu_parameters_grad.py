# reduction-of: pytorch-examples@77f55b912142 distributed/rpc/batch/parameter_server.py:96 GA306
# false: GA306
"""A trainer that gets its model from a parameter server through a call the engine cannot see, and sends back `[p.grad for p in m.cpu().parameters()]`.

The real code (batch-updating parameter server over RPC): `Trainer.train` fetches
`m = ps_rref.rpc_sync().get_model().cuda()`, backpropagates a loss through `m`, then sends
`[p.grad for p in m.cpu().parameters()]` with `rpc.rpc_sync(...)` and receives the updated model as the
next `m`. Trainers are created on other workers, so the engine analyzes `train` without its callers.

False finding: GA306 confirmed at `p.grad`: "reads the gradient of a non-leaf tensor (computed by an op,
not created as a parameter)". `m` is an nn.Module; `Module.cpu()` (like `.cuda()`, `.float()`) moves
the parameters in place and returns the module itself, so `m.cpu().parameters()` yields its leaf
parameters, whose `.grad` the backward just filled. An object of unknown type is not a tensor.

Verified with torch 2.13 (CPU): every `p` is a leaf with a gradient when it is read; three updates
run and the server's model changes. Prints OK.
"""
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn as nn


class Server:
    def __init__(self):
        self.model = nn.Linear(4, 2)
        for p in self.model.parameters():
            p.grad = torch.zeros_like(p)

    def get_model(self):
        return self.model

    @staticmethod
    def update_and_fetch(server, grads):
        with torch.no_grad():
            for p, g in zip(server.model.parameters(), grads):
                p -= 0.1 * g
        return server.model


class Trainer:
    def __init__(self, server, pool):
        self.server, self.pool = server, pool
        self.loss_fn = nn.MSELoss()

    def train(self):
        m = self.pool.submit(self.server.get_model).result().float()
        for step in range(3):
            self.loss_fn(m(torch.randn(3, 4)), torch.randn(3, 2)).backward()
            assert all(p.is_leaf and p.grad is not None for p in m.cpu().parameters())
            m = self.pool.submit(
                Server.update_and_fetch,
                self.server, [p.grad for p in m.cpu().parameters()],
            ).result().float()


torch.manual_seed(0)
server = Server()
before = [p.detach().clone() for p in server.model.parameters()]
with ThreadPoolExecutor(1) as pool:
    trainer = pool.submit(Trainer, server, pool).result()      # created elsewhere, as over RPC
    trainer.train()
assert all(not torch.equal(b, p) for b, p in zip(before, server.model.parameters()))
print("OK")
