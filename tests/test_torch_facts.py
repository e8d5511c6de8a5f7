"""Torch facts come from one place: the generated tables (analysis/ops/_engine_sets.py, from torch's
YAML and classes) and the declared hand facts (analysis/ops/hand_facts.py), read through
analysis/ops/torch_api.py.

The first test fails when an engine module spells a *set* of torch names outside analysis/ops: a
set, frozenset, tuple or list literal, or the keys of a dict literal, holding two or more names
that are torch op names (Tensor methods, torch.*, F.*, torch.linalg/special/fft) or torch.nn
classes. Such a set is a fact about torch (which ops are views, which losses take class indices)
and belongs to the generator or to hand_facts.py with its reason. A single name in dispatch code
(`if name == "detach"`, `op == "cross_entropy"`) is behaviour, not a fact, and is allowed; so is a
table of handlers keyed by name (a dict whose values are all functions: `{"zero_grad": _zero_grad}`),
which is how semantics are registered.

The other tests check the facts themselves: the generated ones against what the hand lists used
to say where the hand list was wrong (ConvTranspose's bias position, nn.PoissonNLLLoss's
functional), the hand ones against the table (each names a real torch op, none repeats what the
table now says), and torch's own classes where torch is installed.
"""

from __future__ import annotations

import ast
import os

import pytest
from helpers import analyze

from gradaudit.analysis import ops
from gradaudit.analysis.libraries import tables as L
from gradaudit.analysis.ops import _engine_sets as E
from gradaudit.analysis.ops import hand_facts as H
from gradaudit.analysis.ops import torch_api as T
from gradaudit.analysis.report import gradflow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANALYSIS = os.path.join(ROOT, "analysis")
ENGINE_LAYERS = ("interp", "torch", "libraries", "model", "rules", "check", "report")
OP_NAMESPACES = ("Tensor", "torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft")
# Python's own names that coincide with torch op names (abs, max, round, float, pow...): the
# builtins the interpreter models are Python facts, not torch's.
NOT_TORCH = {
    "interp/builtins.py": "Python's builtins (abs, max, round, float...), modelled by the interpreter",
    "interp/expressions.py": "Python's builtins and operators as the expression evaluator names them",
    "libraries/einops_ops.py": "einops' own function and reduction names, mapped onto torch's ops",
}


def torch_names() -> frozenset[str]:
    names = set(E.NN_MODULES) | set(ops.names("torch.nn"))
    for ns in OP_NAMESPACES:
        names |= ops.names(ns)
    return frozenset(names)


def _sets_of_torch_names(tree: ast.AST, names: frozenset[str]):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            elts = node.elts
        elif isinstance(node, ast.Dict):
            named = [v for k, v in zip(node.keys, node.values) if k is not None]
            if named and all(isinstance(v, (ast.Name, ast.Attribute)) for v in named):
                continue  # handlers registered by name: behaviour, not facts
            elts = [k for k in node.keys if k is not None]
        else:
            continue
        hit = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value in names]
        if len(hit) >= 2:
            yield node.lineno, hit


def engine_modules():
    for layer in ENGINE_LAYERS:
        for folder, _, files in os.walk(os.path.join(ANALYSIS, layer)):
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(folder, f)
                    yield os.path.relpath(path, ANALYSIS).replace(os.sep, "/"), path


def test_no_engine_module_spells_a_set_of_torch_names():
    names = torch_names()
    found = []
    for rel, path in engine_modules():
        if rel in NOT_TORCH:
            continue
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for line, hit in _sets_of_torch_names(tree, names):
            found.append(f"analysis/{rel}:{line}: {hit[:6]}")
    where = "move them to ops/hand_facts.py or derive them in the generator"
    assert not found, f"torch facts outside analysis/ops ({where}):\n" + "\n".join(found)


def test_the_check_sees_a_set_of_torch_names():
    """The scan itself: a tuple in dispatch code and a dict's keys are found, one name is not."""
    names = torch_names()
    tree = ast.parse(
        "if name in ('view', 'reshape'):\n    pass\nM = {'ReLU': 1, 'Tanh': 2}\nif name == 'detach':\n    pass\n"
        "X = ('parameters', 'view')\nH = {'zero_grad': _zero_grad, 'parameters': mod.params}\n"
    )
    assert sorted(line for line, _ in _sets_of_torch_names(tree, names)) == [1, 3]  # not 6: handlers
    assert {"softmax", "Linear", "CrossEntropyLoss", "vector_norm", "rfft"} <= names


# --- generated facts where the hand lists were wrong ------------------------------------------------


def params_of(source: str) -> set[str]:
    result = analyze(source)
    assert result.error is None
    (opt,) = result.model.optimizers
    return {p.name for g in opt.groups for p in g.params}


def test_conv_transpose_bias_is_its_eighth_argument():
    """ConvTranspose2d(in, out, kernel, stride, padding, output_padding, groups, bias, dilation):
    bias is argument 7; the hand table said 8 (dilation) and kept a bias given as False."""
    assert T.PARAM_MODULES["ConvTranspose2d"][1]["bias"] == (7, "bias", True)
    src = (
        "import torch\nimport torch.nn as nn\n"
        "up = nn.ConvTranspose2d(4, 8, 3, 1, 0, 0, 1, False)\n"
        "opt = torch.optim.SGD(up.parameters(), lr=0.1)\n"
        "up(torch.randn(1, 4, 5, 5)).sum().backward()\nopt.step()\n"
    )
    assert params_of(src) == {"up.weight"}


def test_norm_layers_take_a_bias_flag_by_keyword():
    """torch 2.13's BatchNorm/GroupNorm/InstanceNorm take `bias` by keyword only (position None)."""
    assert T.PARAM_MODULES["BatchNorm1d"][1]["bias"] == (None, "bias", True)
    src = (
        "import torch\nimport torch.nn as nn\n"
        "bn = nn.BatchNorm1d(8, bias=False)\n"
        "opt = torch.optim.SGD(bn.parameters(), lr=0.1)\n"
        "bn(torch.randn(4, 8)).sum().backward()\nopt.step()\n"
    )
    assert params_of(src) == {"bn.weight"}


def test_loss_modules_run_the_functional_their_forward_calls():
    """nn.XLoss -> F.x from forward() itself: the old CamelCase split gave `poisson_n_l_l_loss`,
    `c_t_c_loss`, `multi_label_margin_loss`, names no table knows (no save recorded)."""
    wrong = {
        "PoissonNLLLoss": "poisson_nll_loss",
        "GaussianNLLLoss": "gaussian_nll_loss",
        "CTCLoss": "ctc_loss",
        "MultiLabelMarginLoss": "multilabel_margin_loss",
        "MultiLabelSoftMarginLoss": "multilabel_soft_margin_loss",
    }
    assert {m: T.MODULE_FUNCTIONS[m] for m in wrong} == wrong
    for m in T.LOSS_MODULES:
        fn = T.MODULE_FUNCTIONS[m]
        assert fn in T.LOSS_FUNCTIONS or fn.endswith("_loss"), m  # what tensors.functional treats as a loss
    assert "poisson_nll_loss" in T.PRODUCTS  # its backward keeps input and target


def test_forward_functions_agree_with_the_decompositions():
    """What forward() calls (read from torch's source) and the F call surface.py decomposes each
    module into name the same function, but where the decomposition names an equivalent:
    F.relu6 is hardtanh(x, 0, 6), the one nn.ReLU6.forward calls."""
    from gradaudit.analysis.ops import surface

    for m, text in surface.MODULES.items():
        target = text.partition("(")[0]
        forward = T.MODULE_FORWARD.get(m)
        if not target.startswith("F.") or forward is None or m == "ReLU6":
            continue
        assert forward == target, (m, forward, target)
    assert T.MODULE_FORWARD["ReLU6"] == "F.hardtanh"


def test_module_saves_are_those_of_the_functional_it_runs():
    """modules.py records a free module's saves under its functional's name: that name must save
    what the module saves (the hand code used `gelu` for every input-saving module)."""
    for m in T.FREE_MODULES:
        save = T.MODULE_SAVES.get(m)
        if save is None or m in T.LOSS_MODULES:
            continue
        fn = T.MODULE_FUNCTIONS[m]
        assert fn in (T.SAVES_OUTPUT if save == "output" else T.SAVES_INPUT), (m, save, fn)


def test_binary_cross_entropy_with_logits_is_a_binary_loss():
    """The probe's batch for F.binary_cross_entropy_with_logits: binary labels, like its module
    (the hand list had nn.BCEWithLogitsLoss but not the functional)."""
    assert T.LOSS_TARGETS["BCEWithLogitsLoss"] == "binary"
    assert T.LOSS_TARGETS["binary_cross_entropy_with_logits"] == "binary"
    assert {"cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"} <= T.CLASS_LOSSES


def test_function_plan_batch_for_logits_loss(tmp_path):
    lib = tmp_path / "lib.py"
    lib.write_text(
        "import torch.nn.functional as F\n\n\n"
        "def train_step(model, optimizer, x, y):\n    optimizer.zero_grad()\n"
        "    loss = F.binary_cross_entropy_with_logits(model(x), y)\n    loss.backward()\n"
        "    optimizer.step()\n"
    )
    from gradaudit.analysis.check.engine import Analyzer

    r = Analyzer().analyze_file(str(lib))
    plans = [p for p in gradflow.plan(r.model, str(lib), r.files) if p.mode == "function"]
    assert plans and plans[0].batch == (("x", "y"), "binary")


def test_norm_reductions_read_dim_where_it_is():
    """x.norm(p, dim): dim is the second argument (the table's signature); the old code read p."""
    assert T.DIM_ARGS["norm"] == (1, 2) and T.DIM_ARGS["sum"] == (0, 1) and T.DIM_ARGS["std"] == (0, None)
    src = (
        "import torch\nimport torch.nn as nn\n"
        "m = nn.Linear(3, 3)\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "y = m(torch.randn(5, 3))\nloss = y.norm(2, 1)\nloss.backward()\nopt.step()\n"
    )
    assert "GA305" in {f.code for f in analyze(src).findings}  # a (5,) result: backward() of a non-scalar


# --- third-party optimizers are library facts ------------------------------------------------------


def test_third_party_optimizers_are_library_facts():
    assert not L.THIRD_PARTY_OPTIMIZERS & T.OPTIMIZERS
    assert {"Lion", "FusedAdam", "AdamW8bit", "Lamb"} <= L.THIRD_PARTY_OPTIMIZERS
    assert L.is_optimizer_name("Lion") and L.is_optimizer_name("AdamW") and not L.is_optimizer_name("Linear")


def test_a_third_party_optimizer_is_recognised():
    src = (
        "import torch\nimport torch.nn as nn\nfrom lion_pytorch import Lion\n"
        "m = nn.Linear(3, 1)\nopt = Lion(m.parameters(), lr=1e-4)\n"
        "for x in [torch.randn(2, 3)]:\n    opt.zero_grad()\n    m(x).sum().backward()\n    opt.step()\n"
    )
    result = analyze(src)
    (opt,) = result.model.optimizers
    assert opt.name == "opt" and {p.name for g in opt.groups for p in g.params} == {"m.weight", "m.bias"}


def test_another_librarys_optimizer_named_for_a_torch_one_is_one():
    # aihwkit's AnalogSGD, apex's FusedAdamW, DeepSpeed's DeepSpeedCPUAdam: named for the torch optimizer
    # they vary, called like it
    for name in ("AnalogSGD", "FusedAdamW", "DeepSpeedCPUAdam", "DistributedFusedLAMB", "Lion"):
        assert L.named_as_optimizer(name), name
    for name in ("SGD", "Adamant", "Linear", "sgd", "MySGDWrapper", "EMA"):
        assert not L.named_as_optimizer(name) or name == "SGD", name


ANALOG = """import torch.nn as nn
from torch.nn.functional import mse_loss
from analogkit.nn import AnalogLinear
from analogkit.optim import AnalogSGD

model = nn.Sequential(AnalogLinear(4, 2), AnalogLinear(2, 1))
opt = AnalogSGD(model.parameters(), lr=0.5)
for epoch in range(3):
{clear}    loss = mse_loss(model(x), y)
    loss.backward()
    opt.step()
"""


def test_a_step_of_an_optimizer_taken_by_its_name_is_judged_and_rests_on_that():
    # aihwkit's example 2 (held22): the library is not installed, its optimizer is named like torch's
    result = analyze(ANALOG.format(clear=""))
    (opt,) = result.model.optimizers
    assert opt.name == "opt" and opt.type == "AnalogSGD"
    (f,) = [f for f in result.findings if f.code == "GA201"]
    assert f.confidence == "suspicious" and f.span.line == 11
    assert "taken for an optimizer because it is named like one" in f.message
    assert [p.text for p in f.premises if not p.holds] == [
        "`opt.step()` leaves the gradients in place, as torch's optimizers do"
    ]
    assert analyze(ANALOG.format(clear="    opt.zero_grad()\n")).findings == []


SUBCLASSED = """import torch
import torch.nn as nn
from torch.optim import SGD


class NoisySGD(SGD):
    def __init__(self, params, lr=0.1):
        super().__init__(params, lr=lr)
{step}

model = nn.Linear(4, 1)
opt = NoisySGD(model.parameters(), lr=0.5)
for epoch in range(3):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    opt.step()
"""


def test_a_project_optimizer_derived_from_a_torch_one_is_that_optimizer():
    # aihwkit's `AnalogSGD(AnalogOptimizerMixin, SGD)` read from its own repository (held22)
    result = analyze(SUBCLASSED.format(step=""))
    (opt,) = result.model.optimizers
    assert opt.type == "NoisySGD" and {p.name for p in opt.params} == {"model.weight", "model.bias"}
    (f,) = result.findings
    assert (f.code, f.confidence, f.span.line) == ("GA201", "confirmed", 16)
    # a step() of its own that only adds to torch's keeps the finding; one that writes the gradients
    # (clearing them after the update) is code the engine models as torch's: the finding rests on that
    adds = "\n    def step(self, closure=None):\n        return super().step(closure)\n"
    (f,) = analyze(SUBCLASSED.format(step=adds)).findings
    assert f.confidence == "confirmed"
    clears = adds.replace("return super().step(closure)", "super().step(closure)\n        self.zero_grad()")
    (f,) = analyze(SUBCLASSED.format(step=clears)).findings
    assert f.confidence == "suspicious" and "`NoisySGD` defines its own `step()`, which writes `.grad`" in f.message


# --- the hand facts against the table ---------------------------------------------------------------

# names in hand op groups that are no op of the table, each with its reason
NOT_OPS = {
    "getitem": "the engine's name for x[i]",
    "elu_plus_one": "a common helper's name (elu(x) + 1, linear attention)",
    "_softmax": "the ATen op softmax dispatches to (the table keeps private names out of the surfaces)",
    "upsample": "F.upsample, deprecated, which the table does not map",
    "resize": "Tensor.resize, deprecated and written in Python (torch/_tensor.py), which the table does not map",
}
# hand groups of Tensor methods and attributes (several are Python-level: checked against torch)
METHOD_GROUPS = (
    "CONVERSIONS",
    "METADATA_METHODS",
    "TO_PYTHON",
    "TENSOR_ONLY_METHODS",
    "VIEW_ATTRIBUTES",
    "NOT_INPLACE",
)


def test_hand_op_names_are_torch_ops():
    names = torch_names()
    groups = {
        g: getattr(H, g)
        for g in (
            "SAME_SHAPE",
            "UNTAGGED_REDUCTIONS",
            "RESHAPES",
            "MATRIX_PRODUCTS",
            "F_PLAIN_FLOW",
            "PROBABILITIES",
            "SIGMOIDS",
            "MAGNITUDES",
            "POSITIVE_OPS",
            "BOUNDED",
            "LINEAR",
            "KEEP",
            "LOGS",
            "ROOTS",
            "MASK_BUILDERS",
            "SUMS",
            "ORDER_STATISTICS",
            "UPPER_BOUNDS",
            "SOFTMAXES",
            "LOWER_CLAMPS",
            "ELEMENT_MAXIMA",
            "WHERE_GUARDS",
            "SAME_ZEROS",
            "ONES_FACTORIES",
            "LOSS_TARGETS",
        )
    }
    unknown = {
        (g, n)
        for g, group in groups.items()
        for n in group
        if n not in names and n not in NOT_OPS and n not in T.FACTORIES and n not in E.NN_MODULES
    }
    assert not unknown, sorted(unknown)
    for name in list(H.MATH_TO_TORCH.values()) + list(H.NUMPY_TO_TORCH.values()):
        assert name in T.ELEMENTWISE, name  # an elementwise namesake: the fix keeps shapes


def test_hand_facts_do_not_repeat_the_table():
    """A hand entry the generated tables now give is a second place for one fact."""
    assert not set(H.SAME_SHAPE) & E.POINTWISE_OPS
    assert not set(H.UNTAGGED_REDUCTIONS) & E.REDUCTION_OPS
    assert not set(H.CONVERSIONS) & E.MAY_RETURN_SELF
    assert not set(H.PY_FACTORIES) & E.FACTORIES
    assert not set(H.SAVES_INPUT_MODULES) & set(E.MODULE_SAVES)


def test_modelled_modules_have_the_parameters_they_are_modelled_with():
    for m in H.PARAM_MODULES:
        assert E.MODULE_PARAMS.get(m), m
    for m in H.FREE_MODULES:
        assert m in E.NN_MODULES and m not in E.MODULE_PARAMS, m
    for m in (*H.RECURRENT, *H.CONTAINERS, *H.SAVES_INPUT_MODULES):
        assert m in E.NN_MODULES, m


def test_values_indices_fields_are_the_tables_output_names():
    for name in T.VALUES_INDICES:
        for ns in ("Tensor", "torch"):
            info = ops.op_for(ns, name)
            if info is None:
                continue
            # torch.return_types name an index output `indices` and its values `values` (frexp's
            # mantissa and exponent, max_pool1d_with_indices' plain tuple are no such pair)
            for ov in info.overloads:
                pair = tuple(o.name for o in ov.outputs)
                if len(pair) == 2 and pair[1] == "indices":
                    assert pair == T.VALUES_INDICES_FIELDS, (ns, name, pair)


# --- against torch itself ---------------------------------------------------------------------------


@pytest.mark.runtime
def test_hand_module_facts_against_torch():
    torch = pytest.importorskip("torch", reason="checked against torch's own classes")
    import inspect

    nn = torch.nn
    for m, args in H.MODULE_DIM_ARGS.items():
        params = list(inspect.signature(getattr(nn, m).__init__).parameters)[1:]
        assert tuple(params[: len(args)]) == args, m
    assert hasattr(torch.amp, "GradScaler") and hasattr(torch.optim.lr_scheduler, H.CHAINABLE_SCHEDULERS[0])
    for q in (*H.NOGRAD_CTX, *H.GRAD_CTX, *H.SET_GRAD_CTX, *H.AUTOCAST_CTX, *H.IS_GRAD_ENABLED, *H.PARAMETER_CLASSES):
        obj = torch
        for part in q.split(".")[1:]:
            obj = getattr(obj, part)
        assert callable(obj), q
    for name in H.CLIP_FUNCTIONS:
        assert hasattr(torch.nn.utils, name) or hasattr(torch.nn.utils.clip_grad, name), name
    for name in H.MODULE_ATTRIBUTES:
        assert hasattr(nn.Module(), name)
    for group in METHOD_GROUPS:
        for name in getattr(H, group):
            assert hasattr(torch.Tensor, name) or name in NOT_OPS, (group, name)


@pytest.mark.runtime
def test_generated_optimizers_are_torch_optims():
    torch = pytest.importorskip("torch", reason="checked against torch.optim")
    for name in T.OPTIMIZERS:
        assert issubclass(getattr(torch.optim, name), torch.optim.Optimizer)
    for name in L.THIRD_PARTY_OPTIMIZERS:
        assert not hasattr(torch.optim, name), name
