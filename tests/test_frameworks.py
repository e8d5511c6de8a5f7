"""Training steps run by a framework: Lightning (automatic and manual optimization), a HuggingFace
Trainer subclass's compute_loss, DeepSpeed engines. Every rule applies inside them."""

from __future__ import annotations

import textwrap

import pytest
from helpers import analyze, found, strip_markers

LIT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning.pytorch as pl


class Lit(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.encoder(x))
"""

STEP_DETACH = """
    def training_step(self, batch, batch_idx):
        x, y = batch
        feats = self.encoder(x).detach()  # <- GA101
        loss = F.cross_entropy(self.head(feats), y)
        self.log("train_loss", loss)
        return loss
"""

STEP_OK = """
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss.item())
        return {"loss": loss, "acc": (self(x).argmax(1) == y).float().mean().detach()}
"""

CONFIGS = {
    "one optimizer": """
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
""",
    "a dict with a scheduler": """
    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=1e-3)
        sched = torch.optim.lr_scheduler.StepLR(opt, 10)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "epoch"}}
""",
    "a tuple of lists": """
    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        return [opt], [torch.optim.lr_scheduler.CosineAnnealingLR(opt, 100)]
""",
    "a list": """
    def configure_optimizers(self):
        return [torch.optim.AdamW(self.parameters(), lr=1e-3)]
""",
}


def run(src):
    source, expected = strip_markers(textwrap.dedent(src))
    return analyze(source, "lit.py"), expected


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_lightning_automatic_detach_in_training_step(config):
    result, expected = run(LIT + STEP_DETACH + CONFIGS[config])
    assert found(result) == expected
    (f,) = result.findings
    assert f.confidence == "confirmed"
    # the backward Lightning runs is placed on training_step's return
    assert any("backward" in r.message and r.span.line == expected[0][0] + 3 for r in f.related)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_lightning_automatic_valid(config):
    result, _ = run(LIT + STEP_OK + CONFIGS[config])
    assert found(result) == []


def test_lightning_lifecycle_order_is_correct():
    """Lightning runs zero_grad, training_step, backward, step: no lifecycle rule fires."""
    result, _ = run(LIT + STEP_OK + CONFIGS["a dict with a scheduler"])
    steps = result.model.steps
    assert len(steps) == 1
    kinds = [e.kind for e in steps[0].events]
    assert kinds.index("zero_grad") < kinds.index("backward") < kinds.index("step")
    assert "sched_step" in kinds


def test_lightning_optimizer_over_a_frozen_module():
    src = (
        LIT
        + """
    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        self.encoder.requires_grad_(False)  # <- GA107
        return torch.optim.Adam([
            {"params": self.encoder.parameters(), "lr": 1e-4},
            {"params": self.head.parameters(), "lr": 1e-3},
        ])
"""
    )
    result, expected = run(src)
    assert found(result) == expected


def test_lightning_fit_runs_the_step_on_the_instance():
    src = (
        LIT
        + """
    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.head.parameters(), lr=1e-3)  # <- GA108


model = Lit()
trainer = pl.Trainer(max_epochs=1)
trainer.fit(model, train_dataloaders=None)
"""
    )
    result, expected = run(src)
    assert found(result) == expected


HOOKS = """
    def {hook}(self{arg}):
        self.guidance = {made}

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y) + self.guidance(self.encoder(x)).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
"""

GUIDANCE = """

_GUIDES = {}


def register(name):
    def deco(cls):
        _GUIDES[name] = cls
        return cls

    return deco


@register("embedding")
class Guidance(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Parameter(torch.zeros(32, 1))  # <- GA108

    def forward(self, h):
        return h @ self.embedding
"""


@pytest.mark.parametrize("made", ["Guidance()", '_GUIDES["embedding"]()'])
def test_lightning_hooks_run_in_the_trainers_order(made):
    # threestudio's systems (LODS, held22): a module built in on_fit_start, which Trainer.fit calls after
    # configure_optimizers, is in no param group; one built in setup(), called before, is
    late = LIT + HOOKS.format(hook="on_fit_start", arg="", made=made) + GUIDANCE
    result, expected = run(late)
    assert found(result) == expected and expected
    early = LIT + HOOKS.format(hook="setup", arg=", stage=None", made=made) + GUIDANCE
    result, _ = run(early.replace("  # <- GA108", ""))
    assert found(result) == []


MANUAL = """
import torch
import torch.nn as nn
import lightning.pytorch as pl


class GAN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.gen = nn.Linear(8, 16)
        self.disc = nn.Linear(16, 1)

    def training_step(self, batch, batch_idx):
        g_opt, d_opt = self.optimizers()
        z = torch.randn(4, 8)
{gen}
        g_loss = -self.disc(fake).mean()
        g_opt.zero_grad()
        self.manual_backward(g_loss)
        g_opt.step()
        d_loss = self.disc(fake.detach()).mean() - self.disc(batch).mean()
        d_opt.zero_grad()
        self.manual_backward(d_loss)
        d_opt.step()

    def configure_optimizers(self):
        return [torch.optim.Adam(self.gen.parameters()), torch.optim.Adam(self.disc.parameters())], []
"""


def test_lightning_manual_optimization():
    result, expected = run(
        MANUAL.replace("{gen}", "        with torch.no_grad():  # <- GA102\n            fake = self.gen(z)")
    )
    assert found(result) == expected
    result, _ = run(MANUAL.replace("{gen}", "        fake = self.gen(z)"))
    assert found(result) == []


HF = """
import torch
import torch.nn.functional as F
from transformers import Trainer, AutoModelForSequenceClassification


class MyTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
{logits}
        loss = F.cross_entropy(logits, labels)
        return (loss, outputs) if return_outputs else loss


model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
trainer = MyTrainer(model=model, args=None, train_dataset=None)
trainer.train()
"""


def test_hf_trainer_compute_loss():
    result, expected = run(HF.replace("{logits}", "        logits = outputs.logits.detach()  # <- GA101"))
    assert found(result) == expected
    result, _ = run(HF.replace("{logits}", "        logits = outputs.logits"))
    assert found(result) == []


def test_hf_trainer_compute_loss_without_train_call():
    src = HF.replace("{logits}", "        logits = outputs.logits.detach()  # <- GA101")
    src = src[: src.index("model = AutoModel")]
    result, expected = run(src)
    # no model in sight: the Trainer's model is unknown, the detach still cuts whatever it carries
    assert [c for _, c in found(result)] in ([], ["GA101"])


DS = """
import deepspeed
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model[2].parameters())  # <- GA108
for step in range(3):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    loss = F.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()
"""


def test_deepspeed_engine():
    result, expected = run(DS)
    assert found(result) == expected
    result, _ = run(DS.replace("model[2].parameters()", "model.parameters()").replace("  # <- GA108", ""))
    assert found(result) == []


def test_accelerate_and_fabric_backward():
    src = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator

accelerator = Accelerator()
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = accelerator.prepare(model, optimizer)
for step in range(3):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    with torch.no_grad():  # <- GA102
        logits = model(x)
    loss = F.cross_entropy(logits, y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
"""
    result, expected = run(src)
    assert found(result) == expected
    result, _ = run(
        src.replace("from accelerate import Accelerator", "import lightning as L")
        .replace("accelerator = Accelerator()", "fabric = L.Fabric()")
        .replace("accelerator.prepare", "fabric.setup")
        .replace("accelerator.backward", "fabric.backward")
    )
    assert found(result) == expected


APEX = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp

model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for step in range(3):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
    scheduler.step()  # <- GA207
    optimizer.step()
"""


def test_apex_amp_gives_back_the_optimizer():
    # apex not installed: amp.initialize hands back the same model and optimizer (patched in
    # place), so the scheduler and the step are known to act on one optimizer
    result, expected = run(APEX)
    assert found(result) == expected
    assert [o.name for o in result.model.optimizers] == ["optimizer"]
    result, _ = run(
        APEX.replace(
            "    scheduler.step()  # <- GA207\n    optimizer.step()", "    optimizer.step()\n    scheduler.step()"
        )
    )
    assert found(result) == []


APEX_ACCUMULATION = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp


def train(model, optimizer, loader, accumulation):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for step, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        if accumulation > 1:
            loss = loss / accumulation
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if (step + 1) % accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
"""


def test_apex_scaled_loss_of_a_divided_loss_is_divided():
    # what apex's scale_loss gives back is not seen; made from a loss divided by the micro-batch
    # count, it is not taken for an undivided one (GA205)
    result, _ = run(APEX_ACCUMULATION)
    assert found(result) == []
    source = APEX_ACCUMULATION.replace("        if accumulation > 1:\n            loss = loss / accumulation\n", "")
    result, _ = run(source)
    assert [code for _, code in found(result)] == ["GA205"]


def test_fabric_backward_on_an_unknown_object_takes_its_argument_as_the_loss():
    # Lightning not installed, `fit` run on unknown arguments: `fabric.backward(loss)` was read as a
    # tensor's backward() on `fabric`: a loss named "fabric", no modules, no optimizer stepped for it
    src = """
import torch
import torch.nn as nn


def fit(fabric, loader):
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in loader:
        loss = model(x).sum()
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
"""
    result = analyze(src)
    [step] = {s.span: s for s in result.model.steps}.values()
    assert step.loss == "loss" and step.loss_span.line == 10
    assert sorted(p.name for p in step.reached) == ["model.bias", "model.weight"]
    assert [o.name for o in step.optimizers if o.key in step.stepped] == ["optimizer"]


def test_a_tensor_backward_with_a_gradient_keeps_its_receiver_as_the_loss():
    # valid look-alike: `x.backward(gradient)` on an unknown tensor; the gradient carries no gradient
    result = analyze("import torch\n\n\ndef f(x):\n    x.backward(torch.ones_like(x))\n")
    [step] = {s.span: s for s in result.model.steps}.values()
    assert step.loss == "x"


EPOCH_END = """
    def training_epoch_end(self, outputs):
        self.log("acc", torch.stack([o["acc"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
"""

STEP_KEEPS_GRAPH = """
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        return {"loss": loss, "acc": (logits.softmax(-1).max(1).values).mean()}  # <- GA303
"""


def test_lightning_keeps_step_outputs_with_their_graphs_for_epoch_end():
    # Lightning 1.x keeps every training_step output for training_epoch_end and detaches only "loss":
    # another tensor of the dict holds its step's graph until the epoch ends (pdearena's fix)
    result, expected = run(LIT + STEP_KEEPS_GRAPH + EPOCH_END)
    assert found(result) == expected
    assert result.findings[0].confidence == "suspicious"  # Lightning's documented keeping, not code seen
    # detached, or with no training_epoch_end to keep them, nothing is kept
    assert found(run(LIT + STEP_OK + EPOCH_END)[0]) == []
    assert found(run(LIT + STEP_KEEPS_GRAPH.replace("  # <- GA303", "") + CONFIGS["one optimizer"])[0]) == []
