"""The training-step model (what rules, reports and the language server read), checked directly."""

import ast
import os
import subprocess
import sys

from helpers import analyze

from gradaudit.analysis.check.engine import Analyzer

DATA = os.path.join(os.path.dirname(__file__), "data")


def steps_of(source):
    result = analyze(source)
    assert result.error is None
    return result.model


GAN = """import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for _ in range(3):
    fake = G(torch.randn(4, 3))
    opt_d.zero_grad()
    d_loss = bce(D(torch.randn(4, 2)), torch.ones(4, 1)) + bce(D(fake.detach()), torch.zeros(4, 1))
    d_loss.backward()
    opt_d.step()
    opt_g.zero_grad()
    g_loss = bce(D(fake), torch.ones(4, 1))
    g_loss.backward()
    opt_g.step()
"""


def test_each_backward_is_a_step_with_its_own_optimizer():
    model = steps_of(GAN)
    by_loss = {}
    for s in model.steps:
        by_loss.setdefault(s.loss, s)
    d, g = by_loss["d_loss"], by_loss["g_loss"]
    names = {o.key: o.name for o in model.optimizers}
    assert [names[k] for k in d.stepped] == ["opt_d"]
    assert [names[k] for k in g.stepped] == ["opt_g"]
    assert {p.module for p in d.reached} == {"D.0", "D.2"}  # fake.detach() cut G off
    assert {p.module for p in g.reached} == {"D.0", "D.2", "G.0", "G.2"}
    assert {p.module for c in d.cuts for p in c.removed} == {"G.0", "G.2"}
    kinds = [(e.kind, e.target) for e in d.events if e.kind in ("zero_grad", "backward", "step")]
    assert kinds == [
        ("zero_grad", "opt_d"),
        ("backward", ""),
        ("step", "opt_d"),
        ("zero_grad", "opt_g"),
        ("backward", ""),
        ("step", "opt_g"),
    ]


GROUPS = """import itertools
import torch
import torch.nn as nn

enc, head, extra = nn.Linear(4, 4), nn.Linear(4, 2), nn.Linear(4, 4)
opt = torch.optim.SGD([
    {"params": enc.parameters(), "lr": 1e-3, "weight_decay": 0.0},
    {"params": filter(lambda p: p.requires_grad, head.parameters())},
], lr=0.1)
opt.add_param_group({"params": itertools.chain(extra.parameters())})
loss = head(extra(enc(torch.randn(2, 4)))).sum()
loss.backward()
opt.step()
"""


def test_param_groups_options_filters_and_added_groups():
    model = steps_of(GROUPS)
    (opt,) = model.optimizers
    assert opt.name == "opt" and opt.type == "SGD" and opt.complete
    g0, g1, g2 = opt.groups
    assert {p.name for p in g0.params} == {"enc.weight", "enc.bias"} and g0.options == ("lr", "weight_decay")
    assert {p.name for p in g1.params} == {"head.weight", "head.bias"} and g1.filtered
    assert {p.name for p in g2.params} == {"extra.weight", "extra.bias"}
    (step,) = model.steps
    assert step.trained == step.reached and len(step.reached) == 6


TRAINER = """import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, 1)

    def train_step(self, x, y):
        self.opt.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return loss.item()


trainer = Trainer(nn.Linear(3, 1))
for epoch in range(2):
    for _ in range(4):
        trainer.train_step(torch.randn(5, 3), torch.randn(5, 1))
    trainer.sched.step()
"""


def test_events_inside_methods_belong_to_the_callers_iteration():
    model = steps_of(TRAINER)
    step = model.steps[0]
    assert step.function == "Trainer.train_step"
    kinds = [e.kind for e in step.events]
    assert kinds == ["zero_grad", "backward", "clip", "step"]
    assert all(e.via for e in step.events)  # each happened inside trainer.train_step(...)
    assert step.loop is not None and step.loop.line == 23  # the inner loop
    # the module was built inline (`Trainer(nn.Linear(3, 1))`): it is named where it was first stored
    assert {p.name for p in step.trained} == {"self.model.weight", "self.model.bias"}


FROZEN = """import torch
import torch.nn as nn

backbone, head = nn.Linear(4, 4), nn.Linear(4, 2)
backbone.requires_grad_(False)
opt = torch.optim.Adam([p for p in [*backbone.parameters(), *head.parameters()] if p.requires_grad])
loss = head(backbone(torch.randn(3, 4))).sum()
loss.backward()
opt.step()
"""


def test_frozen_parameters_and_filtered_optimizer():
    model = steps_of(FROZEN)
    (step,) = model.steps
    assert {p.name for p in step.frozen} == {"backbone.weight", "backbone.bias"}
    assert {p.name for p in model.optimizers[0].params} == {"head.weight", "head.bias"}
    assert model.optimizers[0].groups[0].filtered
    assert [f.value for f in model.freezes] == [False]


UNCALLED = """import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
"""


def test_a_training_function_nobody_calls_is_still_modelled():
    model = steps_of(UNCALLED)
    (step,) = {s.span.line: s for s in model.steps}.values()
    assert step.function == "train" and step.loss == "loss"
    assert step.reached_weak and not step.reached  # `model` is unknown: its parameters only may be reached
    assert [e.kind for e in step.events] == ["zero_grad", "backward", "step"]


def test_findings_across_modules_point_into_the_helper_module():
    root = os.path.join(DATA, "projects", "helper_detach")
    p = subprocess.run(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", "check", ".", "--format", "json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    import json

    findings = json.loads(p.stdout)["findings"]
    assert [(f["path"], f["line"], f["code"]) for f in findings] == [("pkg/features.py", 6, "GA101")]
    assert "backbone" in findings[0]["message"]
    assert {r["path"] for r in findings[0]["related"]} == {"train.py"}


def test_one_file_check_follows_its_imports():
    root = os.path.join(DATA, "projects", "helper_detach")
    result = Analyzer().analyze_file(os.path.join(root, "train.py"))
    assert [(os.path.basename(f.span.path), f.span.line) for f in result.findings] == [("features.py", 6)]


# a training function nothing in its file calls: its models are arguments the engine never saw made
REBUILT_FROM_ARGS = """import torch
import torch.optim as optim


def train(encoder, classifier, loader, criterion):
    for images, labels in loader:
        optimizer = optim.SGD(list(encoder.parameters()) + list(classifier.parameters()), lr=0.01, momentum=0.9)
        optimizer.zero_grad()
        loss = criterion(classifier(encoder(images)), labels)
        loss.backward()
        optimizer.step()
"""


def test_an_optimizer_over_the_arguments_parameters_rebuilt_per_batch_is_ga206():
    """The parameters of the function's own arguments are not known one by one, but they were made
    before the call: an optimizer with momentum built over them in every batch restarts its state
    each step (DANN's first release), whatever those parameters are."""
    model = steps_of(REBUILT_FROM_ARGS)
    [opt] = model.optimizers
    assert not opt.complete and opt.args_only
    result = analyze(REBUILT_FROM_ARGS)
    assert [(f.code, f.span.line, f.confidence) for f in result.findings] == [("GA206", 7, "confirmed")]
    # a model made by a factory argument in each batch is made anew with its optimizer: not known
    # to be the arguments' own parameters, so nothing is claimed
    fresh = REBUILT_FROM_ARGS.replace("def train(encoder, classifier,", "def train(make_encoder, classifier,").replace(
        "    for images, labels in loader:\n", "    for images, labels in loader:\n        encoder = make_encoder()\n"
    )
    [opt] = steps_of(fresh).optimizers
    assert not opt.args_only
    assert [f.code for f in analyze(fresh).findings] == []


REPEATED_LAYERS = """import torch
import torch.nn as nn
import torch.nn.functional as F

hidden = [16] * 2
dims = list(zip([8] + hidden, hidden + [2]))
blocks = [nn.Linear(n, k) for n, k in dims]
model = nn.Sequential(*([nn.Linear(8, 8), nn.ReLU()] * 2 + [nn.Linear(8, 8)]))
for p in model[4].parameters():
    p.requires_grad = False
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_lists_repeated_and_concatenated_are_known_element_by_element():
    # `[a, b] * 2 + [c]` is five layers in order: `model[4]` is the last Linear, the one frozen
    model = steps_of(REPEATED_LAYERS)
    (step,) = model.steps
    assert {p.name for p in step.frozen} == {"model.4.weight", "model.4.bias"}
    # the same Linear at positions 0 and 2, then the last one
    assert {p.name for p in step.reached} == {"model.0.weight", "model.0.bias", "model.4.weight", "model.4.bias"}


KEPT_PARAMETERS = """import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, loss_device, scale=None):
        super().__init__()
        self.linear = nn.Linear(8, 4)
        self.alpha = nn.Parameter(torch.rand(1, 4)).squeeze()
        self.weight = nn.Parameter(torch.tensor([10.0])).to(loss_device)
        if scale is None:
            self.scale = nn.Parameter(torch.ones(1, 4)).view(4)
        # running statistics updated by hand: requires no grad, so the copy loses nothing
        self.mean = nn.Parameter(torch.zeros(4), requires_grad=False).to(loss_device)
"""


def test_a_parameter_kept_by_a_module_only_as_an_ops_result():
    result = analyze(KEPT_PARAMETERS, path="model.py")
    got = {(f.span.line, f.code, f.confidence) for f in result.findings}
    # squeezed: never the parameter; moved: the parameter itself where no copy is needed (the CPU);
    # under a condition on a made-up argument: maybe
    assert got == {(9, "GA113", "confirmed"), (10, "GA113", "suspicious"), (12, "GA113", "suspicious")}


STAGED = """import sys
import torch
import torch.nn as nn
from ignite.engine import Engine

prep = nn.Embedding(10, 4)
head = nn.Linear(4, 10)
if len(sys.argv) > 1:
    prep.load_state_dict(torch.load(sys.argv[1]))
else:
    optimizer = torch.optim.RMSprop(list(prep.parameters()) + list(head.parameters()), lr=1e-2)

    def process_batch(engine, x):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(head(prep(x)), x)
        loss.backward()
        optimizer.step()

    Engine(process_batch).run(range(3))
net = nn.Linear(4, 1)
optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-2)
for _ in range(3):
    optimizer.zero_grad()
    loss = net(prep(torch.randint(0, 10, (8,)))).pow(2).mean()
    loss.backward()
    optimizer.step()

if len(sys.argv) > 2:
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def train():
        for _ in range(3):
            opt.zero_grad()
            model(torch.randn(2, 4)).sum().backward()
            opt.step()

    train()
"""


def test_a_handler_given_to_unseen_code_takes_the_optimizers_it_reads():
    # stage one's optimizer is read only by a handler handed to a library's engine: it may step
    # there, so stage two's backward into `prep` does not prove it never steps (GA204); and a
    # function called inside a module-level `if` arm reads what the arm bound (`model`, `opt`)
    model = steps_of(STAGED)
    assert not [f for f in analyze(STAGED).findings if f.code == "GA204"]
    trains = [s for s in model.steps if s.function == "train"]
    assert trains and {p.name for p in trains[0].reached} == {"model.weight", "model.bias"}
    assert any(o.name == "opt" for o in trains[0].optimizers)


NOISY = """import torch
import torch.nn as nn
import torch.nn.functional as F


class NoisyLinear(nn.Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias=bias)
        self.sigma_weight = nn.Parameter(torch.full((out_features, in_features), 0.017))

    def forward(self, x):
        return F.linear(x, self.weight + self.sigma_weight * torch.randn_like(self.weight), self.bias)


net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), NoisyLinear(8, 3), NoisyLinear(3, 1, bias=False))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for _ in range(3):
    opt.zero_grad()
    net(torch.randn(4, 2)).sum().backward()
    opt.step()
"""


def test_a_subclass_of_a_torch_layer_registers_the_layers_parameters():
    # `super().__init__(in, out)` of nn.Linear registers weight and bias as nn.Linear(in, out) does:
    # the layer holds nothing unknown
    (step,) = steps_of(NOISY).steps
    assert {p.name for p in step.reached} == {
        "net.0.weight",
        "net.0.bias",
        "net.2.weight",
        "net.2.bias",
        "net.2.sigma_weight",
        "net.3.weight",
        "net.3.sigma_weight",
    }
    assert not step.top


FOCAL = """import torch
import torch.nn as nn


class FocalLoss(nn.Module):
    def __init__(self, alpha=1, gamma=2):
        super().__init__()
        self.alpha, self.gamma = alpha, gamma

    def forward(self, x, target):
        p_t = torch.where(target == 1, x, 1 - x)
        fl = -1 * (1 - p_t) ** self.gamma * torch.log(p_t{eps})
        return torch.where(target == 1, fl * self.alpha, fl * (1 - self.alpha)).mean()
"""


def test_the_complement_of_a_loss_input_is_a_probability():
    # `1 - x` treats x as a probability: where a sigmoid saturates, x or 1 - x is exactly 0 and its
    # log is -inf (focal_loss_torch's bug); `+ eps` guards it
    found = [(f.span.line, f.code, f.confidence) for f in analyze(FOCAL.format(eps="")).findings]
    assert found == [(12, "GA401", "suspicious")]
    assert not analyze(FOCAL.format(eps=" + 1e-6")).findings


REPLACED = """import torch
import torch.nn as nn

layers = [nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1)]
layers[0] = nn.Linear(2, 4, bias=False)
model = nn.Sequential(*layers)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(3, 2)).sum().backward()
    opt.step()
"""


def test_an_element_replaced_at_a_known_position_keeps_the_lists_order():
    # `layers[0] = ...` replaces the first layer: three layers, the new one first (not a fourth at the end)
    (step,) = steps_of(REPLACED).steps
    assert {p.name for p in step.reached} == {"model.0.weight", "model.2.weight", "model.2.bias"}


SKIPPED_UPDATE = """import torch
import torch.nn as nn

model = nn.Linear(4, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")
for step in range(100):
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(torch.randn(8, 4)).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    {tail}
"""
SKIP = """if norm < 5.0:
        scaler.step(optimizer)
        scaler.update()"""
ALWAYS = """if norm < 5.0:
        scaler.step(optimizer)
    scaler.update()"""


def test_an_unscale_followed_by_an_update_on_some_paths_only():
    # unscale_() every iteration, update() only when the step is not skipped: the next unscale_()
    # raises (LVSM's bug); an update on every path is fine
    found = [(f.span.line, f.code, f.confidence) for f in analyze(SKIPPED_UPDATE.format(tail=SKIP)).findings]
    assert (12, "GA409", "suspicious") in found
    assert not [f for f in analyze(SKIPPED_UPDATE.format(tail=ALWAYS)).findings if f.code == "GA409"]


EXIT_STACK = """from contextlib import ExitStack
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    with ExitStack() as stack:
        stack.enter_context(torch.no_grad())
        features = model(torch.randn(2, 4))
    loss = model(torch.randn(2, 4)).sum() + features.sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_no_grad_entered_on_an_exit_stack_lasts_to_the_end_of_its_with():
    # `stack.enter_context(torch.no_grad())`: `features` carries no gradient; after the `with`,
    # grad mode is back and the loss reaches the model
    (step,) = steps_of(EXIT_STACK).steps
    assert {p.name for p in step.reached} == {"model.weight", "model.bias"}
    assert [c.kind for c in step.cuts] == ["nograd"]


GRAD_PENALTY = """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

net = nn.Linear(4, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    loss = F.cross_entropy(net(x), y)
    grads = autograd.grad(loss, net.parameters(), retain_graph=True{create})
    penalty = 0
    for g in grads:
        penalty += g.pow(2).sum()
    xin = x.clone().requires_grad_()
    saliency = autograd.grad(F.cross_entropy(net(xin), y), xin)[0]
    x_adv = (x + 0.1 * saliency.sign()).detach()
    adv = F.cross_entropy(net(x_adv), y)
    opt.zero_grad()
    (loss + 0.1 * penalty + adv).backward()
    opt.step()
"""


def test_gradients_taken_without_create_graph_train_nothing_through_a_penalty():
    # IGA's bug (DomainBed): the gradient penalty is a constant without create_graph=True; the
    # adversarial example made from an input gradient is fine either way
    found = [(f.span.line, f.code, f.confidence) for f in analyze(GRAD_PENALTY.format(create="")).findings]
    assert found == [(11, "GA112", "confirmed")]
    assert not analyze(GRAD_PENALTY.format(create=", create_graph=True")).findings


def test_a_backward_with_no_update_anywhere_confirms_no_hidden_parameter():
    # gromo: a plain list of neighbour layers, and a test that only runs backward() (no optimizer)
    root = os.path.join(DATA, "projects", "neighbour_modules_gradients_only")
    result = Analyzer().analyze_file(os.path.join(root, "train.py"))
    assert [(os.path.basename(f.span.path), f.code, f.confidence) for f in result.findings] == [
        ("mods.py", "GA109", "suspicious")
    ]


def test_a_namespace_folder_imports_from_the_folder_of_the_script_that_runs_it(tmp_path):
    # no project marker and no __init__.py (a copied-out folder of scripts): `python trainer.py`
    # puts the script's folder on sys.path, so `utils/train.py` imports `model.net` from there
    (tmp_path / "model").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "trainer.py").write_text("from utils.train import train\n\nif __name__ == '__main__':\n    train(3)\n")
    (tmp_path / "model" / "net.py").write_text(
        "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(4, 1)\n\n    def forward(self, x):\n        return self.fc(x)\n"
    )
    (tmp_path / "utils" / "train.py").write_text(
        "import torch\nfrom model.net import Net\n\n\ndef train(n):\n    net = Net()\n"
        "    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n    for _ in range(n):\n"
        "        loss = net(torch.randn(8, 4)).detach().mean()\n        loss.requires_grad_(True)\n"
        "        opt.zero_grad()\n        loss.backward()\n        opt.step()\n"
    )
    result = Analyzer().analyze_file(str(tmp_path / "trainer.py"))
    assert [(os.path.basename(f.span.path), f.span.line, f.code) for f in result.findings] == [
        ("train.py", 10, "GA106")
    ]


SPLIT_PARAMS = """import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.dec = nn.Linear(4, 4)
        self.discr = nn.Linear(4, 1)


vae = VAE()
discr = set(vae.discr.parameters())
a = torch.optim.Adam(set(vae.parameters()) - discr)
b = torch.optim.Adam([p for p in vae.parameters() if p not in discr])
c = torch.optim.Adam(set(vae.enc.parameters()) | set(vae.dec.parameters()))
d = torch.optim.Adam(set(vae.parameters()) & discr)
e = torch.optim.Adam([p for p in vae.parameters() if p is not vae.dec.bias])
"""


def test_parameter_sets_split_by_difference_membership_and_identity():
    model = steps_of(SPLIT_PARAMS)
    held = {o.name: {p.name for p in o.params} for o in model.optimizers}
    rest = {"vae.enc.weight", "vae.enc.bias", "vae.dec.weight", "vae.dec.bias"}
    assert held["a"] == held["b"] == held["c"] == rest
    assert held["d"] == {"vae.discr.weight", "vae.discr.bias"}
    assert held["e"] == rest - {"vae.dec.bias"} | {"vae.discr.weight", "vae.discr.bias"}
    assert all(o.groups[0].exact for o in model.optimizers)


def test_modules_imported_from_a_namespace_package(tmp_path):
    # `from proj.algos.ddpg import core` and `from . import core` where `ddpg/` has no __init__.py:
    # Python imports it as a namespace package, and the model class is the project's
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "proj" / "algos" / "ddpg"
    pkg.mkdir(parents=True)
    (tmp_path / "proj" / "__init__.py").write_text("")
    (pkg / "core.py").write_text(
        "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = [nn.Linear(4, 1)]\n\n    def forward(self, x):\n        return self.layers[0](x)\n"
    )
    train = (
        "import torch\n{imp}\n\nnet = core.Net()\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "for _ in range(3):\n    loss = net(torch.randn(8, 4)).mean()\n"
        "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    )
    for name, imp in (("train.py", "from proj.algos.ddpg import core"), ("train_rel.py", "from . import core")):
        (pkg / name).write_text(train.format(imp=imp))
        result = Analyzer().analyze_file(str(pkg / name))
        # the layer kept in a plain list, seen only if `core.Net` is
        assert [(os.path.basename(f.span.path), f.code) for f in result.findings] == [("core.py", "GA109")], name


def test_submodules_a_package_imports_into_its_own_init(tmp_path):
    # auraloss's `from . import freq, time` in its __init__ (held22): `pkg.losses.Net` is the project's
    # class, not an unknown library name
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "netlib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import losses\nfrom . import layers as blocks\n")
    (pkg / "layers.py").write_text(
        "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = [nn.Linear(4, 1)]\n\n    def forward(self, x):\n        return self.layers[0](x)\n"
    )
    (pkg / "losses.py").write_text("def ratio(a, b):\n    return ((a * b).sum(-1) / (b**2).sum(-1)).mean()\n")
    (tmp_path / "train.py").write_text(
        "import torch\nimport netlib\n\nnet = netlib.blocks.Net()\nopt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "for _ in range(3):\n    loss = netlib.losses.ratio(net(torch.randn(8, 4)), torch.randn(8, 1))\n"
        "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
    )
    result = Analyzer().analyze_file(str(tmp_path / "train.py"))
    # the plain list and the division by the target's energy, seen only if both submodules are
    assert sorted((os.path.basename(f.span.path), f.code) for f in result.findings) == [
        ("layers.py", "GA109"),
        ("losses.py", "GA402"),
    ]


ACCUMULATED = """import torch
import torch.nn as nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
total = 0
for _ in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += loss{tail}
"""


def test_a_method_no_tensor_has_ends_the_path_on_a_tensor_an_op_made():
    # `loss.items()` (a typo of item()) raises AttributeError: nothing is accumulated on that path,
    # so the history rule (GA303) has no claim there; the tensor itself is
    def codes(tail):
        return {f.code for f in analyze(ACCUMULATED.format(tail=tail)).findings}

    assert "GA303" in codes("")
    assert "GA303" not in codes(".items()")
    assert "GA303" not in codes(".item()")
    # an argument of unknown type may be anything that has the method: its path goes on
    source = "def log(stats, total):\n    for k, v in stats.items():\n        total += v\n    return total\n"
    assert analyze(source).error is None


def test_what_parameters_yields_is_no_history():
    # `seen |= set(group["params"])` over modules some of whose layers the engine cannot see: what
    # `.parameters()` yields is parameter leaves, whatever is known of them; gathering them keeps no
    # graph alive (a false GA303 on audiocraft's optimizer-group builder)
    from types import SimpleNamespace

    from gradaudit.analysis.interp import recording
    from gradaudit.analysis.interp.objects import PIter, Unit
    from gradaudit.analysis.interp.values import Kind, V

    unseen = Unit(Unit.OPAQUE, "layers.0.<params>", None, 1)
    known = Unit(Unit.PARAM, "proj.weight", None, 2)
    gathered = V(Kind.TENSOR, frozenset((PIter(frozenset((known,)), exact=False),)), org=frozenset((known,)))
    gathered = gathered.replace(weak=frozenset((unseen,)))
    st = SimpleNamespace(ctx=(("loop", None, 0, None, 0, 0),), sf=None, trace=SimpleNamespace(accums=[]))
    ip = SimpleNamespace(st=st)
    assert recording.note_accumulation(ip, gathered, ast.parse("seen |= set(params)").body[0]) is gathered
    assert ip.st.trace.accums == []
