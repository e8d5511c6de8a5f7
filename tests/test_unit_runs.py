"""Units without a training step (tests/data/units): a module's `forward` that nothing in the
checked code runs is run on its own, on inputs that require grad, so that its numerical hazards show
(suspicious, with the reason in the message). Each file's marked lines are exactly what is reported;
a file without markers reports nothing. The runtime tests show each hazard under torch."""

import glob
import importlib.util
import os
import sys
import types

import pytest
from helpers import analyze, found, strip_markers

HERE = os.path.join(os.path.dirname(__file__), "data", "units")
UNITS = sorted(glob.glob(os.path.join(HERE, "*.py")))
ALONE = "on its own with inputs that require grad"


@pytest.mark.parametrize("path", UNITS, ids=os.path.basename)
def test_unit_alone(path):
    with open(path) as fh:
        source, expected = strip_markers(fh.read())
    result = analyze(source, path="model.py")
    assert result.error is None
    assert found(result) == expected
    for f in result.findings:
        assert f.confidence == "suspicious"
        assert ALONE in f.message


def test_a_step_that_reaches_the_unit_reports_it_plainly():
    with open(os.path.join(HERE, "hand_norm_division.py")) as fh:
        source, expected = strip_markers(fh.read())
    source += """

model = nn.Sequential(nn.Conv2d(4, 4, 1, bias=False), VectorBatchNorm(4))  # with a bias its output is dense
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(2, 4, 3, 5)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    result = analyze(source, path="train.py")
    assert found(result) == expected
    assert all(ALONE not in f.message for f in result.findings)


def _load(name):
    # the project helper the template stacks import (their blocks are what is run here)
    helper = types.ModuleType("checkpointing")
    helper.checkpoint_blocks = lambda blocks, args, blocks_per_ckpt: args  # type: ignore[attr-defined]
    sys.modules.setdefault("checkpointing", helper)
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _grad_finite(module_name, build, inputs):
    torch = pytest.importorskip("torch")
    m = build(_load(module_name))
    xs = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs(torch)]
    m(*xs).sum().backward()
    params = list(m.parameters()) if hasattr(m, "parameters") else []
    grads = [x.grad for x in xs if x.grad is not None] + [p.grad for p in params if p.grad is not None]
    return all(bool(torch.isfinite(g).all()) for g in grads)


def _vectors(torch):
    torch.manual_seed(0)
    x = torch.randn(2, 4, 3, 5)
    x[0, 1, :, 2] = 0  # one zero vector
    return [x]


def _logits(torch):
    return [torch.tensor([[0.0, 200.0, 1.0]]), torch.tensor([[0.2, 0.5, 0.3]])]


def _stems(torch, estimate=True):
    """[batch, source, channel, time] with source 1 silent in both the estimate and the target."""
    torch.manual_seed(0 if estimate else 1)
    x = torch.randn(2, 3, 2, 64)
    x[:, 1] = 0
    return x


def _keypoints(torch):
    torch.manual_seed(0)
    targets = torch.randn(4, 3, 2)
    targets[1, 2] = float("nan")  # a keypoint missing from the labels
    return [targets, torch.randn(4, 3, 2)]


# (file, how to build its unit, its inputs, whether every gradient stays finite)
RUNTIME = [
    ("criterion_drops_nan_after_the_norm", lambda m: m.KeypointDistanceLoss(), _keypoints, False),
    ("hand_norm_division", lambda m: m.VectorBatchNorm(4), _vectors, False),
    ("hand_norm_with_eps", lambda m: m.VectorBatchNorm(4), _vectors, True),
    ("log_of_softmax_loss", lambda m: m.SoftCrossEntropy(), _logits, False),
    ("log_softmax_loss", lambda m: m.SoftCrossEntropy(), _logits, True),
    (
        "log_of_softmax_loss_fn",
        lambda m: m.distill_loss,
        lambda t: [t.tensor([[0.0, 400.0, 1.0]]), t.zeros(1, 3)],
        False,
    ),
    ("hazard_only_logged", lambda m: m.Projector(4), lambda t: [t.zeros(3, 4)], True),
    (
        "masked_attention",
        lambda m: m.MaskedAttention(4),
        lambda t: [t.randn(2, 5, 4), t.ones(5, 5).triu(1).bool()],
        True,
    ),
    ("constant_normalised", lambda m: m.OrthoPenalty(), lambda t: [t.softmax(t.randn(2, 6, 3), dim=-1)], True),
    (
        "softmax_by_hand_into_slots",
        lambda m: m.CandidateScorer(4),
        lambda t: [t.full((3, 4), 1000.0), t.tensor([[0, 1], [1, 2]])],
        False,
    ),
    # a silent target clip: its magnitude through abs() is all zeros
    ("component_of_owner", lambda m: m.STFTLoss(), lambda t: [t.randn(2, 256), t.zeros(2, 256)], False),
    # a silent source, estimated as exactly 0: its error is 0
    ("per_source_rmse", lambda m: m.per_source_rmse_loss, lambda t: [_stems(t), _stems(t, estimate=False)], False),
    ("per_source_rmse_with_eps", lambda m: m.PerSourceRMSE(), lambda t: [_stems(t), _stems(t, estimate=False)], True),
    # a silent target: its magnitude is clamped before the root, so the norm divided by is > 0
    (
        "stft_losses_run_inside_their_owner",
        lambda m: lambda x, y: sum(m.STFTLoss(64, 16, 32)(x, y)),
        lambda t: [t.randn(2, 256), t.zeros(2, 256)],
        True,
    ),
]


@pytest.mark.slow
@pytest.mark.runtime
@pytest.mark.parametrize("name,build,inputs,finite", RUNTIME, ids=[c[0] for c in RUNTIME])
def test_unit_hazard_under_torch(name, build, inputs, finite):
    assert _grad_finite(name, build, inputs) is finite


# (file, how to build its unit, its inputs, whether backward through its result raises)
INPLACE = [
    ("chained_pool_inplace", lambda m: m.ChainedResidualPool(3), lambda t: [t.randn(2, 3, 8, 8)], True),
    ("residual_after_norm", lambda m: m.BasicBlock(3), lambda t: [t.randn(2, 3, 8, 8)], False),
    ("inplace_layer_after_saved_output", lambda m: m.Encoder(2), lambda t: [t.randn(2, 2, 32)], True),
    ("dropout_made_inplace_by_owner", lambda m: m.Net(4), lambda t: [t.randn(3, 4)], True),
    ("relu_made_inplace_by_owner", lambda m: m.Net(4), lambda t: [t.randn(3, 4)], False),
    ("residual_after_zero_rate_dropout", lambda m: m.ConvBlock(4), lambda t: [t.randn(2, 4, 16)], True),
    ("residual_after_dropout", lambda m: m.ConvBlock(4), lambda t: [t.randn(2, 4, 16)], False),
    ("fused_branches_relu_in_place", lambda m: m.Stage(3), lambda t: [t.randn(2, 3, 8, 8)], False),
    ("template_block_written_back", lambda m: m.TemplatePairStackBlock(4), lambda t: [t.randn(1, 2, 3, 3, 4)], True),
    ("template_block_concatenated", lambda m: m.TemplatePairStackBlock(4), lambda t: [t.randn(1, 2, 3, 3, 4)], False),
    (
        "lstm_output_masked_by_base_forward",
        lambda m: m.LSTM(4, 6),
        lambda t: [t.randn(3, 5, 4), t.tensor([5.0, 2, 3])],
        True,
    ),
]
# the same file's GRU, whose output torch keeps for backward only under cuDNN: quiet, and runs on CPU
INPLACE_QUIET = [
    ("lstm_output_masked_by_base_forward", lambda m: m.GRU(4, 6), lambda t: [t.randn(3, 5, 4), t.tensor([5.0, 2, 3])]),
]


@pytest.mark.slow
@pytest.mark.runtime
@pytest.mark.parametrize("name,build,inputs,raises", INPLACE, ids=[c[0] for c in INPLACE])
def test_unit_inplace_under_torch(name, build, inputs, raises):
    torch = pytest.importorskip("torch")
    m = build(_load(name))
    # the unit's input as a training step gives it: an activation computed from a leaf
    xs = [(x.clone().requires_grad_() * 1.0) for x in inputs(torch)]
    try:
        m(*xs).sum().backward()
    except RuntimeError as exc:
        assert raises and "modified by an inplace operation" in str(exc)
    else:
        assert not raises
    if name == "residual_after_norm":
        out = _load(name).FusePaths(4)(torch.randn(3, 4, requires_grad=True))
        out.sum().backward()  # the in-place writes change a fresh sum no op saved


@pytest.mark.slow
@pytest.mark.runtime
@pytest.mark.parametrize("name,build,inputs", INPLACE_QUIET, ids=[c[0] for c in INPLACE_QUIET])
def test_unit_quiet_under_torch(name, build, inputs):
    torch = pytest.importorskip("torch")
    m = build(_load(name))
    xs = [(x.clone().requires_grad_() * 1.0) for x in inputs(torch)]
    m(*xs).sum().backward()


@pytest.mark.slow
@pytest.mark.runtime
def test_layers_built_in_forward_under_torch():
    # each call builds new layers: the output changes between two calls on the same input, and the
    # parameters the module holds are the encoder's alone
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    head = _load("layers_built_in_forward").NaiveHead(4, 2)
    x = torch.randn(1, 3, 8, 8)
    assert not torch.allclose(head(x), head(x))
    assert len(list(head.parameters())) == 2
    # built once and kept: the same output on the second call
    lazy = _load("layers_built_once_lazily")
    for m, inp in ((lazy.LazyHeads(), torch.randn(1, 3, 8, 8)), (lazy.LazyProjection(2), torch.randn(4, 5))):
        assert torch.allclose(m(inp), m(inp))


@pytest.mark.slow
@pytest.mark.runtime
def test_detector_loss_method_under_torch():
    # the targets a training caller gives; the loss dict's backward raises
    torch = pytest.importorskip("torch")
    m = _load("detector_loss_method_in_place").Detector()
    losses = m(torch.randn(3, 4), torch.rand(3, 2, 4))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        losses["bbox_loss"].backward()


@pytest.mark.slow
@pytest.mark.runtime
def test_weight_rewrapped_as_a_parameter_under_torch():
    # the LSTM that makes the weight gets no gradient through `nn.Parameter(W)`; used as it is, it does
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    cut = _load("weight_evolved_and_rewrapped").EvolveLinear(4)
    cut(torch.randn(3, 4, requires_grad=True)).sum().backward()
    assert all(p.grad is None for p in cut.recurrent_layer.parameters())
    kept = _load("weight_made_by_a_layer_used_functionally").EvolveLinear(4)
    kept(torch.randn(3, 4, requires_grad=True)).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in kept.parameters())


@pytest.mark.slow
@pytest.mark.runtime
def test_own_parameter_detached_under_torch():
    # the detached position embedding gets no gradient; the kept module's parameters and the codebook's
    # moving average do change
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    units = _load("own_parameter_detached")
    tokens = units.Tokens()
    tokens(torch.randn(3, 5, 4)).sum().backward()
    assert tokens.pos_embed.grad is None and tokens.proj.weight.grad is not None
    kept = units.Kept()
    kept(torch.randn(3, 5, 4)).sum().backward()
    assert kept.scale.grad is not None and kept.scale.grad.abs().sum() > 0
    book = units.EmaCodebook()
    before = book.embed.detach().clone()
    book(torch.randn(6, 8))
    assert not torch.equal(before, book.embed.detach())


def test_every_unit_is_checked_under_torch():
    names = {case[0] for case in RUNTIME + INPLACE} | {
        "own_parameter_detached",
        "layers_built_in_forward",
        "layers_built_once_lazily",
        "detector_loss_method_in_place",
        "weight_evolved_and_rewrapped",
        "weight_made_by_a_layer_used_functionally",
        "residual_quantizer_output_projection_detached",
        "module_of_the_file_built_in_forward",
    }
    assert names == {os.path.basename(p)[:-3] for p in UNITS}


def _decomposition(block_layer: str) -> str:
    """A class checked on its own that keeps project blocks in a plain list (Autoformer's multi-kernel
    decomposition); `block_layer` is what each block holds."""
    return f"""
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size
        self.inner = {block_layer}

    def forward(self, x):
        return self.inner(x.permute(0, 2, 1)).permute(0, 2, 1)


class Decomp(nn.Module):
    def __init__(self, kernels):
        super().__init__()
        self.blocks = [Block(k) for k in kernels]
        self.layer = nn.Linear(1, len(kernels))

    def forward(self, x):
        means = torch.cat([b(x).unsqueeze(-1) for b in self.blocks], dim=-1)
        return torch.sum(means * torch.softmax(self.layer(x.unsqueeze(-1)), dim=-1), dim=-1)
"""


def test_a_plain_list_of_blocks_that_hold_nothing_hides_nothing():
    result = analyze(_decomposition("nn.AvgPool1d(kernel_size, stride=1)"), path="layers.py")
    assert [f.code for f in result.findings] == []


@pytest.mark.parametrize(
    "layer",
    ["nn.Conv1d(4, 4, kernel_size, padding='same')", "make_layer(kernel_size)", "nn.BatchNorm1d(4)"],
)
def test_a_plain_list_of_blocks_that_may_hold_state_is_found(layer):
    # a layer with parameters or buffers, or one a helper returns (it may have them)
    source = _decomposition(layer).replace(
        "class Block", "def make_layer(k):\n    return nn.Conv1d(4, 4, k)\n\n\nclass Block"
    )
    result = analyze(source, path="layers.py")
    assert [(f.code, f.confidence) for f in result.findings] == [("GA109", "suspicious")]


# A class checked alone builds the blocks it holds from another file of its project, one level deep:
# PSPNet's in-place dropout after another file's conv-BN-ReLU block, whose in-place ReLU saved its
# output for backward (the dropout overwrites it).
_BLOCKS = """import torch.nn as nn


class ConvBNReLU(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.unit = nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.unit(x)
"""

_SEGMENTER = """import torch.nn as nn
from blocks import ConvBNReLU


class Segmenter(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.stem = ConvBNReLU(3, 8)
        self.dropout = nn.Dropout2d(p=0.1, inplace={inplace})
        self.classify = nn.Conv2d(8, n_classes, 1)

    def forward(self, x):
        x = self.stem(x)
        x = self.dropout(x)
        return self.classify(x)
"""


def _segmenter_project(tmp_path, inplace: bool):
    (tmp_path / "blocks.py").write_text(_BLOCKS)
    (tmp_path / "segmenter.py").write_text(_SEGMENTER.format(inplace=inplace))
    return tmp_path


@pytest.mark.parametrize("inplace", [True, False])
def test_a_block_from_another_project_file_is_run_inside_the_class(tmp_path, inplace):
    from gradaudit.analysis.check.engine import Analyzer

    root = _segmenter_project(tmp_path, inplace)
    result = Analyzer().analyze_file(str(root / "segmenter.py"))
    assert result.error is None
    assert [(f.span.line, f.code, f.confidence) for f in result.findings] == (
        [(14, "GA110", "suspicious")] if inplace else []
    )
    assert all(ALONE in f.message for f in result.findings)


@pytest.mark.slow
@pytest.mark.runtime
@pytest.mark.parametrize("inplace", [True, False])
def test_a_block_from_another_project_file_under_torch(tmp_path, inplace, monkeypatch):
    torch = pytest.importorskip("torch")
    root = _segmenter_project(tmp_path, inplace)
    monkeypatch.syspath_prepend(str(root))
    spec = importlib.util.spec_from_file_location("segmenter", root / "segmenter.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = torch.randn(2, 3, 8, 8, requires_grad=True) * 1.0
    try:
        module.Segmenter(2)(x).sum().backward()
    except RuntimeError as exc:
        assert inplace and "modified by an inplace operation" in str(exc)
    else:
        assert not inplace


def test_a_models_own_input_normalised_in_place_in_a_helper_is_no_claim():
    # Time-Series-Library's forecast(): the series is centred, its variance taken, then divided in
    # place. var saved the series, but it requires grad only if the model's input does, and a
    # model's input is data: in a method the forward calls, only a save a parameter needs counts
    source = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.proj = nn.Linear(n, n)

    def forecast(self, x_enc):
        means = x_enc.mean(1, keepdim=True).detach()
        x_enc = x_enc - means
        stdev = torch.sqrt(torch.var(x_enc, dim=1, keepdim=True, unbiased=False) + 1e-5)
        x_enc /= stdev
        return self.proj(x_enc) * stdev + means

    def forward(self, x_enc):
        return self.forecast(x_enc)
"""
    result = analyze(source, path="model.py")
    assert [f.code for f in result.findings] == []


def test_a_unit_gives_optional_inputs_used_as_tensors_not_option_objects():
    # `lens=None` used as a tensor runs its branch; `inference_params=None`, an option object whose
    # attributes no tensor has (a generation cache: Time-Series-Library's Mamba block), does not
    import ast

    from gradaudit.analysis.interp.interpreter import _optional_tensors

    fn = ast.parse(
        """
def forward(self, x, lens=None, inference_params=None, mask=None, h=None):
    if inference_params is not None:
        state = self._cache(inference_params, x.size(0))
        if inference_params.seqlen_offset > 0:
            return self.step(x, state)
    if mask is not None:
        x = x * mask
    if lens is not None:
        x = pack(x, lens)
    if h:
        x = x + 1
    return x
"""
    ).body[0]
    assert _optional_tensors(fn) == ["lens", "mask"]


def test_a_cut_term_names_only_what_reaches_the_result_by_no_other_path():
    # the input projections reach the returned commitment losses: not cut off, not named
    path = os.path.join(HERE, "residual_quantizer_output_projection_detached.py")
    with open(path) as fh:
        source, _ = strip_markers(fh.read())
    (finding,) = analyze(source, path="model.py").findings
    assert "project_out" in finding.message and "project_in" not in finding.message


@pytest.mark.slow
@pytest.mark.runtime
def test_residual_quantizer_projections_under_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    rvq = _load("residual_quantizer_output_projection_detached").ResidualQuantizer()
    out, commit = rvq(torch.randn(6, 8, requires_grad=True))
    (out.sum() + commit).backward()
    for stage in rvq.stages:
        assert stage.project_out.weight.grad is None
        assert stage.project_in.weight.grad is not None and stage.project_in.weight.grad.abs().sum() > 0


@pytest.mark.slow
@pytest.mark.runtime
def test_module_of_the_file_built_in_forward_under_torch():
    # built at each call: two calls on the same input differ, and the readout holds no parameter
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    units = _load("module_of_the_file_built_in_forward")
    feats = torch.randn(5, 4)
    readout = units.Readout()
    assert not torch.allclose(readout(feats), readout(feats))
    assert list(readout.parameters()) == []
    kept = units.KeptReadout(4)
    assert torch.allclose(kept(feats), kept(feats)) and len(list(kept.parameters())) == 4


def test_a_module_of_another_project_file_built_in_forward(tmp_path):
    # the pooling module lives in another file and imports its LSTM from torch.nn by name (matgl's
    # EdgeSet2Set): built inside the readout's forward, it is flagged at the construction
    from gradaudit.analysis.check.engine import Analyzer

    with open(os.path.join(HERE, "module_of_the_file_built_in_forward.py")) as fh:
        source, _ = strip_markers(fh.read())
    pool, readouts = source.split("class Readout(nn.Module):")
    (tmp_path / "pools.py").write_text(
        pool.replace("import torch.nn as nn\n", "import torch.nn as nn\nfrom torch.nn import LSTM\n").replace(
            "nn.LSTM(", "LSTM("
        )
    )
    (tmp_path / "readout.py").write_text(
        "import torch.nn as nn\n\nfrom pools import AttentionPool\n\n\nclass Readout(nn.Module):" + readouts
    )
    result = Analyzer().analyze_file(str(tmp_path / "readout.py"))
    assert result.error is None
    assert [(f.span.line, f.code, f.confidence) for f in result.findings] == [(12, "GA108", "suspicious")]
    assert all(ALONE in f.message for f in result.findings)


def test_reading_imported_classes_tolerates_names_bound_meanwhile(tmp_path):
    # reading a class of another file may bind more of the importer's names (a star import resolved
    # lazily): pytorch-vae's models/__init__.py crashed the reading with "dictionary changed size"
    from gradaudit.analysis.interp.frames import ModuleScope
    from gradaudit.analysis.interp.interpreter import _layered_classes
    from gradaudit.analysis.interp.objects import LazyImport
    from gradaudit.analysis.interp.values import Kind, V
    from gradaudit.analysis.source.program import Program

    (tmp_path / "pools.py").write_text(
        "import torch.nn as nn\n\n\nclass Pool(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.lin = nn.Linear(4, 4)\n"
    )
    program = Program()
    scope = ModuleScope(program.parse("readout.py", "from pools import Pool\n"), "readout")

    class Binding(Program):
        def load(self, abspath):
            scope.globals.setdefault("Later", V(Kind.NUMBER))
            return program.load(abspath)

    lazy = LazyImport(str(tmp_path / "pools.py"), "pools", "Pool")
    scope.globals["Pool"] = V(Kind.LAZY, frozenset((lazy,)))
    pattern = _layered_classes(scope, Binding())
    assert pattern is not None and pattern.search("pool = Pool(4)")
