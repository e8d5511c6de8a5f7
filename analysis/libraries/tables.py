"""What the engine knows about the libraries users build models with, when their source is not
installed: a small table of facts, each checked against one release of that library.

The source in the analysed environment, when there is one, comes first (library_models.py reads
it); this table answers for the rest, and for names whose source cannot settle the question
(`AutoModel.from_pretrained` picks its class from a downloaded config).
"""

from __future__ import annotations

import re
import sys

from ..ops import torch_api as T
from ..source.prebuilt import dataclass

_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__", "typing_extensions"}
# Packages whose calls never build a model and that the engine knows by name already.
_NEVER = frozenset(
    {
        "torch",
        "numpy",
        "np",
        "math",
        "builtins",
        "scipy",
        "pandas",
        "matplotlib",
        "tqdm",
        "wandb",
        "tensorboard",
        "PIL",
        "cv2",
        "sklearn",
        "yaml",
        "omegaconf",
        "hydra",
        "rich",
        "datasets",
        "evaluate",
        "tokenizers",
        "safetensors",
        "huggingface_hub",
        "einops",
    }
)


def worth_asking(qual: str) -> bool:
    """Whether a dotted name may be a library's model: asked before the environment is looked for,
    so that a script calling only the standard library, torch and the like never looks."""
    top = qual.split(".", 1)[0]
    return bool(top) and "." in qual and top not in _STDLIB and top not in _NEVER and not top.startswith("<")


# kinds of facts
MODULE = "module"  # calling it gives an nn.Module (a class or a factory)
MODULE_BASE = "module_base"  # a base class: subclasses are nn.Modules; it registers no parameters itself
NOT_MODULE = "not_module"  # a class or function that never gives a module (a tokenizer, a config)
OPTIMIZER = "optimizer"  # builds a torch optimizer over the parameters of the model it is given


@dataclass(frozen=True)
class LibraryFact:
    pattern: str  # a dotted name; `*` matches one name part, `**` any tail
    kind: str
    library: str
    checked: str  # the release this was checked against
    note: str = ""

    def matches(self, qual: str) -> bool:
        # the package first: a pattern is compiled only when a name of its package is asked about
        # (compiling all of them cost a start-up ~1 % of a one-file check)
        head = self.pattern.split(".", 1)[0]
        if head.isidentifier() and qual != head and not qual.startswith(head + "."):
            return False
        return _compiled(self.pattern).fullmatch(qual) is not None


_TV = "torchvision 0.28.0, 0.29.1"
_TIMM = "timm 1.0.31"
_HF = "transformers 4.57.6, 5.24.0"
_PL = "lightning 2.6, pytorch-lightning 2.6"

# Model builders are lowercase functions of torchvision.models and its task subpackages; the
# capitalised names there are model classes, except the *_Weights enums and the helpers below.
FACTS: tuple[LibraryFact, ...] = (
    LibraryFact(
        "timm.optim.create_optimizer_v2",
        OPTIMIZER,
        "timm",
        _TIMM,
        "create_optimizer_v2(model_or_params, opt, ...): param groups of the model (weight decay split)",
    ),
    LibraryFact("timm.optim.create_optimizer", OPTIMIZER, "timm", _TIMM, "create_optimizer(args, model, ...)"),
    LibraryFact("timm.optim._optim_factory.create_optimizer_v2", OPTIMIZER, "timm", _TIMM),
    LibraryFact("torchvision.models.get_model", MODULE, "torchvision", _TV, "builds the named model"),
    LibraryFact("torchvision.models.get_model_builder", NOT_MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.get_model_weights", NOT_MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.get_weight", NOT_MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.list_models", NOT_MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.**_Weights", NOT_MODULE, "torchvision", _TV, "weight enums"),
    LibraryFact("torchvision.models.**_Weights.**", NOT_MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.utils.*", NOT_MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.feature_extraction.get_graph_node_names", NOT_MODULE, "torchvision", _TV),
    LibraryFact(
        "torchvision.models.*",
        MODULE,
        "torchvision",
        _TV,
        "model builders (resnet18, vit_b_16 ...) and model classes (ResNet ...)",
    ),
    LibraryFact("torchvision.models.detection.*", MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.segmentation.*", MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.video.*", MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.optical_flow.*", MODULE, "torchvision", _TV),
    LibraryFact("torchvision.models.quantization.*", MODULE, "torchvision", _TV),
    LibraryFact(
        "torchvision.models.*.*", MODULE, "torchvision", _TV, "torchvision.models.resnet.resnet18 and the like"
    ),
    LibraryFact("timm.create_model", MODULE, "timm", _TIMM, "builds the registered model named by its first argument"),
    LibraryFact("timm.models.create_model", MODULE, "timm", _TIMM),
    LibraryFact(
        "transformers.PreTrainedModel",
        MODULE_BASE,
        "transformers",
        _HF,
        "nn.Module subclass; its __init__ registers no parameters",
    ),
    LibraryFact("transformers.modeling_utils.PreTrainedModel", MODULE_BASE, "transformers", _HF),
    LibraryFact(
        "transformers.*PreTrainedModel",
        MODULE_BASE,
        "transformers",
        _HF,
        "per-architecture bases (BertPreTrainedModel ...)",
    ),
    LibraryFact("transformers.models.**.*PreTrainedModel", MODULE_BASE, "transformers", _HF),
    LibraryFact(
        "transformers.AutoModel*.from_pretrained",
        MODULE,
        "transformers",
        _HF,
        "the class comes from the checkpoint's config",
    ),
    LibraryFact("transformers.AutoModel*.from_config", MODULE, "transformers", _HF),
    LibraryFact("transformers.models.auto.**.AutoModel*.from_pretrained", MODULE, "transformers", _HF),
    LibraryFact("transformers.models.auto.**.AutoModel*.from_config", MODULE, "transformers", _HF),
    # model classes: BertModel, BertForSequenceClassification, GPT2LMHeadModel ... (not TF/Flax)
    LibraryFact(
        "transformers.<model>",
        MODULE,
        "transformers",
        _HF,
        "model classes: names ending in Model or with For<Task>; TF*/Flax* are not torch",
    ),
    LibraryFact("transformers.<model>.from_pretrained", MODULE, "transformers", _HF),
    LibraryFact("transformers.<model>.from_config", MODULE, "transformers", _HF),
    LibraryFact("transformers.models.**.<model>", MODULE, "transformers", _HF),
    LibraryFact("transformers.models.**.<model>.from_pretrained", MODULE, "transformers", _HF),
    LibraryFact("lightning.LightningModule", MODULE_BASE, "lightning", _PL),
    LibraryFact("lightning.pytorch.LightningModule", MODULE_BASE, "lightning", _PL),
    LibraryFact("lightning.pytorch.core.LightningModule", MODULE_BASE, "lightning", _PL),
    LibraryFact("lightning.pytorch.core.module.LightningModule", MODULE_BASE, "lightning", _PL),
    LibraryFact("pytorch_lightning.LightningModule", MODULE_BASE, "pytorch-lightning", _PL),
    LibraryFact("pytorch_lightning.core.LightningModule", MODULE_BASE, "pytorch-lightning", _PL),
    LibraryFact("pytorch_lightning.core.module.LightningModule", MODULE_BASE, "pytorch-lightning", _PL),
)

_MODEL_NAME = r"(?!TF|Flax)[A-Z]\w*(?:Model|For[A-Z]\w*)"
_cache: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    rx = _cache.get(pattern)
    if rx is None:
        out = []
        for part in pattern.split("."):
            if part == "**":
                out.append(r"(?:[\w]+(?:\.[\w]+)*)")
            elif part == "<model>":
                out.append(_MODEL_NAME)
            elif "**" in part:
                out.append(r"[\w.]*" + re.escape(part.replace("**", "")))
            else:
                out.append(re.escape(part).replace(r"\*", r"\w*"))
        rx = _cache[pattern] = re.compile(r"\.".join(out))
    return rx


_facts_of: dict[str, LibraryFact | None] = {}  # qualified name -> its fact (FACTS never changes)


def table_fact(qual: str) -> LibraryFact | None:
    """The first fact whose pattern matches a dotted name (as imported or canonical)."""
    try:
        return _facts_of[qual]  # asked for every library call: 40 patterns each time cost ~5% of an analysis
    except KeyError:
        pass
    found = next((fact for fact in FACTS if fact.matches(qual)), None)
    _facts_of[qual] = found
    return found


def optimizer_params_arg(qual: str) -> tuple[int, str] | None:
    """(position, keyword) of the model or parameters an optimizer factory is given, or None."""
    f = table_fact(qual)
    if f is None or f.kind != OPTIMIZER:
        return None
    if qual.endswith(".create_optimizer"):
        return 1, "model"
    return 0, "model_or_params"


def is_module_base(qual: str) -> bool:
    f = table_fact(qual)
    return f is not None and f.kind == MODULE_BASE


def makes_module(qual: str) -> bool:
    f = table_fact(qual)
    return f is not None and f.kind in (MODULE, MODULE_BASE)


# Optimizers of other libraries called like torch's, `Opt(params, lr=...)`: what the engine
# models of them is torch.optim's Optimizer (param groups, step(), zero_grad()). Known by their
# class name, however imported: timm.optim (Lamb, Lars, AdaBelief, MADGRAD, AdamP, SGDP, Lookahead
# wraps one), apex.optimizers (FusedAdam, FusedLAMB, FusedSGD), bitsandbytes.optim (Adam8bit,
# AdamW8bit, PagedAdamW, PagedAdamW8bit), lion-pytorch (Lion), torch-optimizer (Ranger, NovoGrad,
# Adan, Shampoo), Sophia.
THIRD_PARTY_OPTIMIZERS = frozenset(
    {
        "Lamb",
        "LAMB",
        "Lion",
        "FusedAdam",
        "FusedLAMB",
        "FusedSGD",
        "AdamW8bit",
        "Adam8bit",
        "PagedAdamW",
        "PagedAdamW8bit",
        "AdaBelief",
        "Ranger",
        "NovoGrad",
        "Adan",
        "Sophia",
        "MADGRAD",
        "Shampoo",
        "AdamP",
        "SGDP",
        "LARS",
        "Lookahead",
    }
)

# Loss scalers of other libraries that hold a torch GradScaler (timm.utils' NativeScaler, whose call
# scales, backpropagates, steps and updates; its ApexScaler, over apex's own loss scaling): made, a
# scaler is in use (GA409's float16 autocast check), though the engine does not follow their call
THIRD_PARTY_SCALERS = frozenset({"NativeScaler", "ApexScaler"})

# Data-parallel wrappers of other libraries that give back the module they wrap
# (fairscale.nn.data_parallel.ShardedDataParallel), like torch's own (ops/hand_facts.WRAPPERS).
THIRD_PARTY_WRAPPERS = frozenset({"ShardedDataParallel"})


def is_optimizer_name(short: str) -> bool:
    """A class name that builds an optimizer: torch.optim's or another library's."""
    return short in T.OPTIMIZERS or short in THIRD_PARTY_OPTIMIZERS


# a name ending in one of theirs (Lookahead is a wrapper, not an optimizer of its own)
_OPTIMIZER_ENDINGS = sorted(T.OPTIMIZERS | THIRD_PARTY_OPTIMIZERS - {"Lookahead"}, key=lambda n: (-len(n), n))
_NAMED_OPTIMIZER = re.compile(rf"[A-Z][A-Za-z0-9]*(?:{'|'.join(_OPTIMIZER_ENDINGS)})")


def named_as_optimizer(short: str) -> bool:
    """Another library's optimizer named for the torch one it varies (`AnalogSGD`, `FusedAdamW`,
    `DeepSpeedCPUAdam`, `DistributedFusedLAMB`), called like it: `Opt(params, lr=...)`."""
    return short in THIRD_PARTY_OPTIMIZERS or _NAMED_OPTIMIZER.fullmatch(short) is not None


# Attributes of a model that are plain values, not submodules: reading them from a model whose
# structure is unseen must not invent a submodule (`model.fc.in_features`, `model.config`).
PLAIN_ATTRS = frozenset(
    {
        "in_features",
        "out_features",
        "num_features",
        "in_channels",
        "out_channels",
        "kernel_size",
        "stride",
        "padding",
        "num_classes",
        "num_labels",
        "config",
        "dtype",
        "device",
        "training",
        "embed_dim",
        "hidden_size",
        "num_embeddings",
        "embedding_dim",
        "name_or_path",
        "base_model_prefix",
        "main_input_name",
        "default_cfg",
        "pretrained_cfg",
        "generation_config",
        "is_gradient_checkpointing",
        "shape",
        "data",
        "grad",
        "requires_grad",
        "T",
        "hparams",
        "global_step",
        "current_epoch",
        "trainer",
        "automatic_optimization",
        "num_heads",
        "normalized_shape",
        "eps",
        "p",
        "inplace",
        "bias_",
    }
)
