# reduction-of: uva-dl1@d81d3994f2f9 assignment_2/part2/dpt_model.py:72 GA402
# false: GA402
# quiet: GA402
"""Prompt learning on a frozen encoder that the engine cannot see (it is rebuilt from a pickled
copy, as a checkpoint loader would): class text features are encoded once in `__init__` under
`torch.no_grad()` by a method of that encoder, then normalised by their norm outside the `with`.

False finding: GA402 at the normalisation ("division by a value that can be exactly 0"): the
features were made under no_grad, so the division is a constant made once before the training loop
(one-time preparation, out of the numerical rules' scope), and its result carries no gradient. The
engine took the encoder for a tensor (after `.float()`) and let the result of its unknown method
`encode` keep gradient although it ran under no_grad.

Verified with torch 2.13 (CPU): the text features do not require grad, are finite, and the prompt
trains. Prints OK.
"""
import pickle

import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.text = nn.Embedding(10, 8)
        self.image = nn.Linear(8, 8)

    def encode(self, tokens):
        return self.text(tokens).mean(1)

    def encode_image(self, x):
        return self.image(x)


class PromptModel(nn.Module):
    def __init__(self, encoder, tokens):
        super().__init__()
        encoder = encoder.float()
        with torch.no_grad():
            feats = encoder.encode(tokens)
        feats /= feats.norm(dim=-1, keepdim=True)
        self.feats = feats
        self.encoder = encoder
        self.prompt = nn.Parameter(torch.zeros(8))

    def forward(self, x):
        return self.encoder.encode_image(x + self.prompt) @ self.feats.T


torch.manual_seed(0)
encoder = pickle.loads(pickle.dumps(Encoder()))
for p in encoder.parameters():
    p.requires_grad_(False)
model = PromptModel(encoder, torch.randint(0, 10, (3, 5)))
assert not model.feats.requires_grad and torch.isfinite(model.feats).all()
opt = torch.optim.SGD([model.prompt], lr=0.5)
x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
for step in range(5):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
assert model.prompt.abs().sum() > 0
print("OK")
