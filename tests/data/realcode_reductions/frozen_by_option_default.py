# reduction-of: mammoth@e75a491c69fd models/attriclip_utils/model.py:158 GA102
# false: GA102
"""AttriCLIP: a command-line option (`--freeze_clip`, default 1) freezes every CLIP parameter; the
prompt learner holds the CLIP model, the optimizer takes the prompt learner's parameters that still
require grad, and `forward` runs the image encoder under `torch.no_grad()`.

False finding: GA102 confirmed at the `no_grad`: "records no graph for `visual`, so the optimizer
never changes them". With the default option the image encoder is frozen and in no optimizer; only
a run with `--freeze_clip 0` puts it in the optimizer, where the no_grad keeps it untrained. The
engine cannot decide the option (a value of `parse_args()`), so the freeze is a maybe: a cut of
parameters frozen on some runs is now suspicious and says so ("on the runs that leave them
trainable"), never confirmed.

Verified with torch 2.13 (CPU): with the default option the visual encoder is in no param group
and the prompts train; with `--freeze_clip 0` it is in the optimizer and never changes. Prints OK.
"""
import argparse
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Visual(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Linear(8, 8)
        self.proj = nn.Parameter(torch.randn(8, 4) * 0.1)

    def forward(self, x):
        return self.conv(x) @ self.proj


class Clip(nn.Module):
    def __init__(self):
        super().__init__()
        self.visual = Visual()
        self.token_embedding = nn.Embedding(10, 4)


def load():
    return Clip()


class PromptLearner(nn.Module):
    def __init__(self, clip_model, n_cls):
        super().__init__()
        self.clip_model = clip_model
        self.ctx = nn.Parameter(torch.randn(n_cls, 4) * 0.02)

    def forward(self):
        return self.ctx + self.clip_model.token_embedding.weight[: self.ctx.shape[0]]


class Net(nn.Module):
    def __init__(self, clip_model, n_cls):
        super().__init__()
        self.prompt_learner = PromptLearner(clip_model, n_cls)
        self.image_encoder = clip_model.visual

    def forward(self, image):
        with torch.no_grad():
            feats = self.image_encoder(image)
            feats = feats.detach()
        text = self.prompt_learner()
        return feats @ text.t()


class CoOp:
    def __init__(self, args):
        clip_model = load()
        if args.freeze_clip:
            for param in clip_model.parameters():
                param.requires_grad = False
        self.clip_model = clip_model

    def init_model(self, n_cls):
        self.model = Net(deepcopy(self.clip_model), n_cls)

    def get_optimizer(self):
        params = [{"params": [p for p in self.model.prompt_learner.parameters() if p.requires_grad]}]
        return torch.optim.SGD(params, lr=0.1)


class Learner:
    def __init__(self, args):
        self.net = CoOp(args)
        self.net.init_model(3)

    def begin_task(self):
        self.opt = self.net.get_optimizer()

    def observe(self, x, y):
        out = self.net.model(x)
        loss = F.cross_entropy(out, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


parser = argparse.ArgumentParser()
parser.add_argument("--freeze_clip", type=int, default=1)
args = parser.parse_args([])
learner = Learner(args)
learner.begin_task()
for _ in range(3):
    learner.observe(torch.randn(5, 8), torch.randint(0, 3, (5,)))
held = {id(p) for g in learner.opt.param_groups for p in g["params"]}
assert not any(id(p) in held for p in learner.net.model.image_encoder.parameters())

unfrozen = Learner(parser.parse_args(["--freeze_clip", "0"]))
unfrozen.begin_task()
held = {id(p) for g in unfrozen.opt.param_groups for p in g["params"]}
visual = list(unfrozen.net.model.image_encoder.parameters())
assert all(id(p) in held for p in visual)
before = [p.detach().clone() for p in visual]
for _ in range(3):
    unfrozen.observe(torch.randn(5, 8), torch.randint(0, 3, (5,)))
assert all(torch.equal(b, p) for b, p in zip(before, visual))
print("OK")
