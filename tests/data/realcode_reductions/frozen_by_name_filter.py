# reduction-of: mammoth@e75a491c69fd models/dap_utils/dap_model.py:223 GA101
# false: GA101
# quiet: GA101
"""DAP: the model keeps a pretrained encoder beside the prompted one and freezes, by name, every
parameter whose name lacks "dap" (`for k, p in self.named_parameters(): if "dap" not in k:
p.requires_grad = False`); the optimizer takes the parameters that still require grad, and
`forward` detaches the pretrained encoder's output, which only selects prompts.

False finding: GA101 confirmed at `.detach()`: "cuts gradient to the parameters of
`pretrained_enc`, so `opt` never changes them". Those parameters are frozen and in no optimizer:
the detach is the stop-gradient that goes with the freeze. The engine ran the naming loop once
for all parameters joined (a name it did not know), so the freeze was only a maybe, and then
took the cut parameters as trained. A loop over `named_parameters()` in a function that does not
train now visits each parameter with its name; a cut of parameters frozen on some runs only is
never confirmed (mammoth's own encoder comes from an argument the engine cannot see into: there
the finding is suspicious and says the parameters are frozen under a condition).

Verified with torch 2.13 (CPU): the pretrained encoder is frozen and held by no optimizer, the
prompt parameters and the head train. Prints OK.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, with_prompt):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.dap_downsample = nn.Linear(dim, 2) if with_prompt else None

    def forward(self, x):
        return F.relu(self.fc(x))


class Encoder(nn.Module):
    def __init__(self, dim, with_prompt):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim, with_prompt) for _ in range(2)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


class Model(nn.Module):
    def __init__(self, dim=8, n_cls=3):
        super().__init__()
        self.pretrained_enc = Encoder(dim, with_prompt=False)
        self.enc = Encoder(dim, with_prompt=True)
        self.dap_key = nn.Parameter(torch.randn(dim) * 0.1)
        for k, p in self.named_parameters():
            if "dap" not in k:
                p.requires_grad = False
        self.head = nn.Linear(dim, n_cls)

    def forward(self, x):
        query = self.pretrained_enc(x).detach()
        return self.head(query * self.dap_key)


model = Model()
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
for _ in range(3):
    loss = F.cross_entropy(model(torch.randn(4, 8)), torch.randint(0, 3, (4,)))

frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
assert frozen and all("dap" not in n for n in frozen) and any(n.startswith("pretrained_enc") for n in frozen)
held = {id(p) for g in opt.param_groups for p in g["params"]}
assert not any(id(p) in held for p in model.pretrained_enc.parameters())
before = model.dap_key.detach().clone()
loss = F.cross_entropy(model(torch.randn(4, 8)), torch.randint(0, 3, (4,)))
opt.zero_grad()
loss.backward()
opt.step()
assert not torch.equal(before, model.dap_key)
print("OK")
