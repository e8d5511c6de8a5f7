"""Models from installed libraries: found in the analysed environment, summarised from their
source, or known from the table when the library is not installed (issue 11)."""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap

import pytest
from helpers import found, strip_markers
from libenv import analyzer, make_env

HEAD = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from fakevision import TinyNet

torch.manual_seed(0)
model = TinyNet(num_classes=10)
"""

LOOP = """
for step in range(2):
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return make_env(tmp_path_factory.mktemp("fakeenv"))


@pytest.fixture(scope="module")
def empty_env(tmp_path_factory):
    return make_env(tmp_path_factory.mktemp("emptyenv"), files={})


def check(env, body, cache_dir=None):
    src, expected = strip_markers(textwrap.dedent(body))
    result = analyzer(env, cache_dir).analyze_source("train.py", src)
    return result, expected


CASES_WITH_SOURCE = {
    "head replaced after the optimizer": HEAD
    + """
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.fc = nn.Linear(8, 3)  # <- GA108
"""
    + LOOP,
    "reset_classifier after the optimizer": HEAD
    + """
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.reset_classifier(3)  # <- GA108
"""
    + LOOP,
    "optimizer over the head only": HEAD
    + """
optimizer = torch.optim.SGD(model.get_classifier().parameters(), lr=0.1)  # <- GA108
"""
    + LOOP,
    "everything frozen, then optimized": HEAD
    + """
for p in model.parameters():
    p.requires_grad = False  # <- GA107
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    + LOOP,
    "forward under no_grad": HEAD
    + """
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 3, (4,))
    with torch.no_grad():  # <- GA102
        logits = model(x)
    loss = F.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
    "a factory annotated with its class": """
import torch
import torch.nn as nn
import torch.nn.functional as F
from fakevision.models.tiny import tiny_net

model = tiny_net(num_classes=5)
optimizer = torch.optim.Adam(model.parameters())
model.fc = nn.Linear(8, 3)  # <- GA108
"""
    + LOOP,
    "a factory returning another factory's model": """
import torch
import torch.nn as nn
import torch.nn.functional as F
import fakevision.models.tiny as zoo

model = zoo.build("tiny")
optimizer = torch.optim.Adam(model.parameters())
model.fc = nn.Linear(8, 3)  # <- GA108
"""
    + LOOP,
}

VALID_WITH_SOURCE = {
    "head replaced before the optimizer": HEAD
    + """
model.fc = nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    + LOOP,
    "linear probe: frozen body, new head, optimizer over what requires grad": HEAD
    + """
for p in model.parameters():
    p.requires_grad = False
model.fc = nn.Linear(8, 3)
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
"""
    + LOOP,
    "an auxiliary head the forward does not use is left out of the optimizer": HEAD
    + """
optimizer = torch.optim.SGD([*model.stem.parameters(), *model.blocks.parameters(), *model.fc.parameters()], lr=0.1)
"""
    + LOOP,
    "reset_classifier before the optimizer": HEAD
    + """
model.reset_classifier(3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    + LOOP,
    "new head added to the optimizer": HEAD
    + """
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.fc = nn.Linear(8, 3)
optimizer.add_param_group({"params": model.fc.parameters()})
"""
    + LOOP,
    "a config object is not a module": """
import torch
import torch.nn as nn
import torch.nn.functional as F
from fakevision import TinyNet, VisionConfig

cfg = VisionConfig(num_classes=3)
model = TinyNet(num_classes=3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    + LOOP,
}


@pytest.mark.parametrize("name", sorted(CASES_WITH_SOURCE))
def test_library_source_makes_rules_fire(env, name):
    result, expected = check(env, CASES_WITH_SOURCE[name])
    assert found(result) == expected
    assert all(f.confidence == "confirmed" for f in result.findings)


@pytest.mark.parametrize("name", sorted(VALID_WITH_SOURCE))
def test_library_source_valid_lookalikes(env, name):
    result, _ = check(env, VALID_WITH_SOURCE[name])
    assert found(result) == []


def test_without_the_library_only_evidence_remains(empty_env):
    # fakevision is neither installed nor in the table: a model only where the code shows it
    # (its parameters handed to a torch optimizer), with an unseen structure
    evident = {
        "head replaced after the optimizer",
        "everything frozen, then optimized",
        "forward under no_grad",
        "a factory annotated with its class",
        "a factory returning another factory's model",
    }
    for name, body in CASES_WITH_SOURCE.items():
        result, expected = check(empty_env, body)
        assert found(result) == (expected if name in evident else []), name
    for name, body in VALID_WITH_SOURCE.items():
        result, _ = check(empty_env, body)
        assert found(result) == [], name


def test_related_location_points_into_site_packages(env):
    result, _ = check(env, CASES_WITH_SOURCE["optimizer over the head only"])
    (f,) = result.findings
    assert "feed" in f.message
    assert "model.stem" in f.message or "model.blocks" in f.message or "parameters" in f.message
    # the model whose parameters the finding names is defined in the library's source
    assert any("site-packages" in r.span.path for r in f.related), [r.span.path for r in f.related]


TV = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

model = torchvision.models.resnet18(weights=None)
"""

CASES_FROM_TABLE = {
    "torchvision head after the optimizer": TV
    + """
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.fc = nn.Linear(model.fc.in_features, 3)  # <- GA108
"""
    + LOOP,
    "torchvision all frozen": TV
    + """
model.fc = nn.Linear(model.fc.in_features, 3)
for p in model.parameters():
    p.requires_grad = False  # <- GA107
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    + LOOP,
    "transformers forward under no_grad": """
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(2):
    batch = torch.randint(0, 100, (2, 8))
    with torch.no_grad():  # <- GA102
        out = model(input_ids=batch, labels=batch)
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
    "transformers scheduler factory stepped first": """
import torch
from transformers import AutoModelForCausalLM, get_cosine_schedule_with_warmup

model = AutoModelForCausalLM.from_pretrained("gpt2")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scheduler = get_cosine_schedule_with_warmup(optimizer, 10, 100)
for step in range(2):
    batch = torch.randint(0, 100, (2, 8))
    loss = model(input_ids=batch, labels=batch).loss
    optimizer.zero_grad()
    loss.backward()
    scheduler.step()  # <- GA207
    optimizer.step()
""",
    "transformers get_scheduler by a constant name, no zero_grad": """
import torch
from transformers import AutoModelForCausalLM, get_scheduler

model = AutoModelForCausalLM.from_pretrained("gpt2")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0, num_training_steps=100)
for step in range(2):
    batch = torch.randint(0, 100, (2, 8))
    loss = model(input_ids=batch, labels=batch).loss
    loss.backward()
    optimizer.step()  # <- GA201
    lr_scheduler.step()
""",
    "transformers output backpropagated twice": """
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(2):
    batch = torch.randint(0, 100, (2, 8))
    out = model(input_ids=batch, labels=batch)
    optimizer.zero_grad()
    out.loss.backward()
    (out.loss + 0.01 * out.logits.pow(2).mean()).backward()  # <- GA301
    optimizer.step()
""",
    "transformers running loss keeps every graph": """
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
running = 0.0
for step in range(2):
    batch = torch.randint(0, 100, (2, 8))
    out = model(input_ids=batch, labels=batch)
    optimizer.zero_grad()
    out.loss.backward()
    optimizer.step()
    running += out.loss  # <- GA303
""",
    "timm head after the optimizer": """
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F

model = timm.create_model("resnet18", num_classes=10)
optimizer = torch.optim.AdamW(model.parameters())
model.fc = nn.Linear(model.fc.in_features, 3)  # <- GA108
"""
    + LOOP,
}

VALID_FROM_TABLE = {
    "torchvision linear probe": TV
    + """
for p in model.parameters():
    p.requires_grad = False
model.fc = nn.Linear(model.fc.in_features, 3)
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
"""
    + LOOP,
    "a library method that may unfreeze": TV
    + """
for p in model.parameters():
    p.requires_grad = False
model.unfreeze_last_layers(2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    + LOOP,
    "torchvision fine-tuning, head first": TV
    + """
model.fc = nn.Linear(model.fc.in_features, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
    + LOOP,
    "transformers frozen embeddings": """
import torch
from transformers import BertForSequenceClassification

model = BertForSequenceClassification.from_pretrained("bert-base-uncased")
model.bert.embeddings.requires_grad_(False)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
for step in range(2):
    out = model(input_ids=torch.randint(0, 100, (2, 8)), labels=torch.tensor([0, 1]))
    optimizer.zero_grad()
    out.loss.backward()
    optimizer.step()
""",
    "transformers plateau schedule stepped on the validation loss first": """
import torch
from transformers import AutoModelForCausalLM, get_scheduler

model = AutoModelForCausalLM.from_pretrained("gpt2")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
plateau = get_scheduler(args.scheduler, optimizer)
for step in range(2):
    batch = torch.randint(0, 100, (2, 8))
    loss = model(input_ids=batch, labels=batch).loss
    optimizer.zero_grad()
    loss.backward()
    plateau.step(loss.item())
    optimizer.step()
""",
    "transformers running loss as a number, frozen model twice": """
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("gpt2")
teacher = AutoModelForCausalLM.from_pretrained("gpt2")
teacher.requires_grad_(False)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
running = 0.0
for step in range(2):
    batch = torch.randint(0, 100, (2, 8))
    target = teacher(input_ids=batch).logits
    out = model(input_ids=batch, labels=batch)
    optimizer.zero_grad()
    out.loss.backward()
    kl = (out.logits.detach() - target).pow(2).mean()
    optimizer.step()
    running += out.loss.item()
""",
    "a tokenizer is not a model": """
import torch
from transformers import AutoTokenizer, AutoModel

tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(2):
    out = model(**tok(["a b"], return_tensors="pt"))
    loss = out.last_hidden_state.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
}


@pytest.mark.parametrize("name", sorted(CASES_FROM_TABLE))
def test_table_without_the_source(empty_env, name):
    result, expected = check(empty_env, CASES_FROM_TABLE[name])
    assert found(result) == expected
    assert all(f.confidence == "confirmed" for f in result.findings)


@pytest.mark.parametrize("name", sorted(VALID_FROM_TABLE))
def test_table_valid_lookalikes(empty_env, name):
    result, _ = check(empty_env, VALID_FROM_TABLE[name])
    assert found(result) == []


def test_evidence_an_unknown_factory_whose_parameters_are_optimized(empty_env):
    body = (
        """
import torch
import torch.nn as nn
import torch.nn.functional as F
import somezoo

model = somezoo.build_model("x")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.head = nn.Linear(8, 3)  # <- GA108
"""
        + LOOP
    )
    result, expected = check(empty_env, body)
    assert found(result) == expected
    # without the optimizer's evidence the value stays unknown
    result, _ = check(
        empty_env,
        body.replace(
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)", "optimizer = torch.optim.SGD(list(), lr=0.1)"
        ),
    )
    assert found(result) == []


def test_summaries_are_cached_on_disk(env, tmp_path):
    cache = str(tmp_path / "cache")
    body = CASES_WITH_SOURCE["head replaced after the optimizer"]
    a1 = analyzer(env, cache)
    src, expected = strip_markers(textwrap.dedent(body))
    assert found(a1.analyze_source("train.py", src)) == expected
    assert a1.libraries.cache.misses and not a1.libraries.cache.hits
    assert os.listdir(cache)
    a2 = analyzer(env, cache)
    assert found(a2.analyze_source("train.py", src)) == expected
    assert a2.libraries.cache.hits and a2.libraries.timings["summarize"] == 0.0
    # a changed library file is summarised anew
    site = os.path.join(env, "lib", "python3.11", "site-packages", "fakevision", "models", "tiny.py")
    text = open(site).read()
    try:
        with open(site, "w") as fh:
            fh.write(text.replace("self.aux = nn.Linear(8, 2)", "self.aux = nn.Linear(8, 4)"))
        a3 = analyzer(env, cache)
        assert found(a3.analyze_source("train.py", src)) == expected
        assert a3.libraries.timings["summarize"] > 0.0
    finally:
        with open(site, "w") as fh:
            fh.write(text)


def test_an_analysis_numbers_its_objects_alike_with_summaries_computed_or_read(env, tmp_path):
    """Summarising a library runs its code and makes objects; they take ids of their own range, so
    the analysis numbers its own objects (and orders the sets of them it iterates) the same way
    whether a summary is computed on the way or read from the cache. RepDistiller's train_student
    drew a false confirmed GA101 from an empty cache and four suspicious findings from a warm one."""
    from gradaudit.analysis.interp import objects

    cache = str(tmp_path / "cache")
    src, expected = strip_markers(textwrap.dedent(CASES_WITH_SOURCE["head replaced after the optimizer"]))
    made = []
    for _ in range(2):  # the first computes the summaries, the second reads them
        a = analyzer(env, cache)
        assert found(a.analyze_source("train.py", src)) == expected
        made.append(objects.next_oid() % (1 << 20))  # the objects the analysis made (its own base)
        with objects.summary_ids():
            objects.next_oid()  # the summaries' range is not the analysis's
    assert a.libraries.cache.hits
    assert made[0] == made[1]


def test_each_analysis_numbers_its_objects_from_a_fresh_base():
    """Files analysed before in the process (a batch, the editor's earlier versions) do not shift
    how an analysis numbers its objects: ids are hashes, and sets iterate by hash modulo their table
    size, so each analysis starts at a multiple of 2**20. RepDistiller drew 4 findings in one file
    order only (`real_code.py --order-check`) before."""
    from gradaudit.analysis.check.engine import Analyzer
    from gradaudit.analysis.interp import objects

    src = textwrap.dedent(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

            def forward(self, x):
                return self.body(x)

        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            model(torch.randn(2, 4)).sum().backward()
            opt.step()
        """
    )
    ends = []
    for _ in range(2):
        Analyzer(cache=False).analyze_source("train.py", src)
        ends.append(objects.next_oid() % (1 << 20))
    assert ends[0] == ends[1] > 1


def test_no_cache_writes_nothing(env, tmp_path):
    from gradaudit.analysis.libraries.summary_cache import SummaryCache

    c = SummaryCache(str(tmp_path / "c"), enabled=False)
    c.put("k", {"a": 1})
    assert c.get("k") == {"a": 1}  # kept in memory for the run
    assert not os.path.exists(tmp_path / "c")


def test_cache_survives_concurrent_writers(tmp_path):
    import concurrent.futures

    folder = str(tmp_path / "c")
    with concurrent.futures.ProcessPoolExecutor(4) as pool:
        list(pool.map(_write_many, [folder] * 4))
    from gradaudit.analysis.libraries.summary_cache import SummaryCache

    c = SummaryCache(folder)
    for i in range(50):
        assert c.get(f"key{i}") == {"value": i, "payload": "x" * 2000}
    leftovers = [n for _, _, files in os.walk(folder) for n in files if n.startswith(".tmp-")]
    assert leftovers == []


def _write_many(folder):
    from gradaudit.analysis.libraries.summary_cache import SummaryCache

    c = SummaryCache(folder)
    for i in range(50):
        c.put(f"key{i}", {"value": i, "payload": "x" * 2000})


def test_cache_folder_is_the_platform_one(monkeypatch):
    from gradaudit.analysis.libraries import summary_cache as sc

    monkeypatch.delenv("GRADAUDIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    monkeypatch.setattr(sc.sys, "platform", "linux")
    assert sc.default_dir() == "/x/cache/gradaudit"
    monkeypatch.setattr(sc.sys, "platform", "darwin")
    assert sc.default_dir().endswith("Library/Caches/gradaudit")
    monkeypatch.setattr(sc.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", r"C:\Users\u\AppData\Local")
    assert sc.default_dir().endswith(os.path.join("gradaudit", "Cache"))
    monkeypatch.setenv("GRADAUDIT_CACHE_DIR", "/elsewhere")
    assert sc.default_dir() == "/elsewhere"


# ---------------------------------------------------------------- the environment analysed


def test_environment_order(tmp_path, monkeypatch):
    """--python, then VIRTUAL_ENV, then the project's .venv, then CONDA_PREFIX, then gradaudit's own."""
    from gradaudit.analysis.libraries import environment as E

    a = make_env(tmp_path / "a", files={"liba/__init__.py": "X = 1\n"})
    b = make_env(tmp_path / "b", files={"libb/__init__.py": "X = 1\n"})
    proj = tmp_path / "proj"
    (proj / "src" / "pkg").mkdir(parents=True)
    (proj / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    venv = make_env(proj, files={"libv/__init__.py": "X = 1\n"}, name=".venv")
    start = str(proj / "src" / "pkg")
    monkeypatch.setattr(E, "_cache", {})
    monkeypatch.setenv("VIRTUAL_ENV", b)
    monkeypatch.setenv("CONDA_PREFIX", a)
    explicit = E.find_env(os.path.join(a, "bin", "python"), start=start)
    assert explicit.how == "explicit" and explicit.why == "named by --python" and explicit.provides("liba")
    active = E.find_env(None, start=start)
    assert active.how == "virtualenv" and active.provides("libb") and not active.provides("liba")
    monkeypatch.delenv("VIRTUAL_ENV")
    found = E.find_env(None, start=start)
    assert (found.how, found.prefix, found.why) == ("project", venv, "the project's .venv")
    assert found.provides("libv") and found.interpreter == os.path.join(venv, "bin", "python")
    # outside the project: the active conda env, then the running interpreter
    assert E.find_env(None, start=str(tmp_path)).how == "conda"
    monkeypatch.delenv("CONDA_PREFIX")
    assert E.find_env(None, start=str(tmp_path)).how == "running"
    assert E.find_env(None).how == "running"
    # an active virtualenv that is gradaudit's own (installed as the README says) gives way to the
    # project's .venv: that is where the project's libraries are
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    assert E.find_env(None, start=start).prefix == venv


def test_project_venv_is_looked_for_up_to_the_project_root(tmp_path):
    from gradaudit.analysis.libraries import environment as E

    outer = make_env(tmp_path, files={}, name="venv")  # above the project: not the project's
    proj = tmp_path / "proj"
    (proj / "a" / "b").mkdir(parents=True)
    (proj / ".git").mkdir()
    assert E.project_venv(str(proj / "a" / "b")) is None
    assert E.project_venv(str(proj / "a" / "b" / "train.py")) is None
    # the workspace folder bounds the search instead of the markers
    assert E.project_venv(str(proj / "a" / "b"), root=str(tmp_path)) == outer
    assert E.project_venv(str(proj / "a" / "b"), root=str(proj / "a")) is None
    inner = make_env(proj / "a", files={}, name=".venv")
    assert E.project_venv(str(proj / "a" / "b")) == inner
    # a folder named .venv that is no environment (no pyvenv.cfg) is not one
    (proj / "a" / "b" / ".venv").mkdir()
    assert E.project_venv(str(proj / "a" / "b")) == inner


def test_an_environment_named_that_cannot_be_read_is_an_error(tmp_path):
    from gradaudit.analysis.libraries import environment as E

    with pytest.raises(E.EnvError, match="no such file or folder"):
        E.find_env(str(tmp_path / "nothing" / "bin" / "python"))
    (tmp_path / "notenv" / "bin").mkdir(parents=True)
    (tmp_path / "notenv" / "bin" / "python").write_text("")
    with pytest.raises(E.EnvError, match="not a Python environment"):
        E.find_env(str(tmp_path / "notenv" / "bin" / "python"))
    assert E.check_python(str(tmp_path / "nothing")).endswith(
        "no such file or folder (give a Python interpreter or the folder of an environment)"
    )
    env = make_env(tmp_path, files={})
    assert E.check_python(env) is None and E.check_python(os.path.join(env, "bin", "python")) is None


def test_provides_reads_what_is_installed(tmp_path):
    from gradaudit.analysis.libraries import environment as E

    env = make_env(
        tmp_path,
        files={
            "pkg/__init__.py": "",
            "mod.py": "",
            "stubbed.pyi": "",
            "native.cpython-311-x86_64-linux-gnu.so": "",
            "__editable___proj_0_1_finder.py": "MAPPING: dict[str, str] = {'edited': '/src/edited'}\n",
        },
    )
    e = E.find_env(env)
    for name in ("pkg", "mod", "stubbed", "native", "edited"):
        assert e.provides(name), name
    assert not e.provides("timm") and not e.provides("pk")


def test_pth_files_add_editable_installs(tmp_path):
    from gradaudit.analysis.libraries import environment as E

    env = make_env(tmp_path, files={})
    src = tmp_path / "proj" / "src"
    src.mkdir(parents=True)
    site = os.path.join(env, "lib", "python3.11", "site-packages")
    with open(os.path.join(site, "proj.pth"), "w") as fh:
        fh.write(f"{src}\nimport _virtualenv\n")
    assert str(src) in E.site_dirs_of(env)


def test_python_setting_in_pyproject(tmp_path):
    from gradaudit.analysis.check.config import ConfigError, load_config

    make_env(tmp_path, files={}, name=".venv")
    (tmp_path / "pyproject.toml").write_text('[tool.gradaudit]\npython = ".venv/bin/python"\n')
    cfg = load_config(str(tmp_path))
    assert cfg.python == os.path.join(str(tmp_path), ".venv/bin/python")
    (tmp_path / "pyproject.toml").write_text("[tool.gradaudit]\npython = 3\n")
    with pytest.raises(ConfigError):
        load_config(str(tmp_path))
    # an interpreter that is not there is an error naming the file, the key and the path
    (tmp_path / "pyproject.toml").write_text('[tool.gradaudit]\npython = "env/bin/python"\n')
    with pytest.raises(ConfigError) as err:
        load_config(str(tmp_path))
    assert str(err.value) == (
        f"{tmp_path / 'pyproject.toml'}: [tool.gradaudit] python: {tmp_path / 'env/bin/python'}: no such file or "
        "folder (give a Python interpreter or the folder of an environment)"
    )


def _cli_env() -> dict:
    """The CLI's environment with no virtualenv or conda env active: the project's .venv is found."""
    from clitools import clean_env

    env = clean_env()
    env.pop("VIRTUAL_ENV", None)
    env.pop("CONDA_PREFIX", None)
    return env


def _run(*args, cwd, env=None):
    import subprocess

    return subprocess.run(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", *map(str, args)],
        cwd=str(cwd),
        env=env or _cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_python_option(env, empty_env, tmp_path):
    import json

    body, expected = strip_markers(textwrap.dedent(CASES_WITH_SOURCE["head replaced after the optimizer"]))
    script = tmp_path / "train.py"
    script.write_text(body)
    r = _run(
        "check", script, "--python", os.path.join(env, "bin", "python"), "--no-cache", "--format", "json", cwd=tmp_path
    )
    out = json.loads(r.stdout)
    got = sorted((f["line"], f["code"]) for f in out["findings"])
    assert r.returncode == 1 and got == expected
    assert [(e["path"], e["how"], e["why"], e["missing"]) for e in out["environments"]] == [
        (env, "explicit", "named by --python", ["torch"])
    ]
    assert "fakevision" in out["environments"][0]["libraries"]
    # another environment, without the library: the model is known by the optimizer's evidence only,
    # and the related location into the library's source is gone
    r = _run("check", script, "--python", empty_env, "--no-cache", "--format", "json", cwd=tmp_path)
    out = json.loads(r.stdout)
    (f,) = out["findings"]
    assert not any("site-packages" in rel["path"] for rel in f.get("related", []))
    assert out["environments"][0]["missing"] == ["fakevision", "torch"]
    # torch, which gradaudit never reads, is data only: its absence alone is not worth a line
    (tmp_path / "plain.py").write_text("import torch\nx = torch.ones(2)\n")
    r = _run("check", "plain.py", "--python", empty_env, "--no-cache", cwd=tmp_path)
    assert r.stdout == "No findings in 1 file checked.\n"
    r = _run("check", "plain.py", "--python", empty_env, "--no-cache", "--format", "json", cwd=tmp_path)
    assert json.loads(r.stdout)["environments"][0]["missing"] == ["torch"]


def test_a_bad_python_is_exit_2_with_a_clear_message(tmp_path):
    """Issue 23: `--python /nonexistent/python` was accepted silently."""
    (tmp_path / "train.py").write_text("import torch\n")
    for cmd in ("check", "audit"):
        r = _run(cmd, "train.py", "--python", "/nonexistent/python", cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr == (
            "gradaudit: --python /nonexistent/python: no such file or folder (give a Python interpreter or "
            "the folder of an environment)\n"
        )
        assert r.stdout == ""
    (tmp_path / "pyproject.toml").write_text('[tool.gradaudit]\npython = "/nonexistent/python"\n')
    r = _run("check", "train.py", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith(
        f"gradaudit: {tmp_path / 'pyproject.toml'}: [tool.gradaudit] python: /nonexistent/python: no such file"
    )
    (tmp_path / "pyproject.toml").unlink()
    r = _run("check", "train.py", "--python", tmp_path, cwd=tmp_path)  # a folder, but no environment
    assert r.returncode == 2 and "not a Python environment (no site-packages folder under" in r.stderr


TIMM_SCRIPT = """
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from fakevision import TinyNet

model = TinyNet(num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.fc = nn.Linear(8, 3)  # <- GA108
for step in range(2):
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_the_project_venv_is_read_without_python(tmp_path):
    """Issue 23, acceptance: gradaudit in its own environment, the libraries in the project's
    .venv; `gradaudit check` without --python reads them there and says so, and names the imported
    library the environment does not have."""
    import json

    proj = tmp_path / "proj"
    (proj / "scripts").mkdir(parents=True)
    (proj / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    venv = make_env(proj, name=".venv")
    body, expected = strip_markers(textwrap.dedent(TIMM_SCRIPT))
    (proj / "scripts" / "train.py").write_text(body)
    r = _run("check", "scripts/train.py", "--no-cache", "--format", "json", cwd=proj)
    out = json.loads(r.stdout)
    assert sorted((f["line"], f["code"]) for f in out["findings"]) == expected
    # the model's structure was read from the library's source in the project's .venv
    (f,) = out["findings"]
    assert any(rel["path"].startswith(os.path.join(venv, "lib")) for rel in f["related"])
    (e,) = out["environments"]
    assert (e["path"], e["how"], e["why"], e["interpreter"]) == (
        venv,
        "project",
        "the project's .venv",
        os.path.join(venv, "bin", "python"),
    )
    assert e["libraries"] == ["fakevision"] and e["missing"] == ["timm", "torch"]
    r = _run("check", "scripts/train.py", "--no-cache", cwd=proj)
    assert r.stdout.splitlines()[-2:] == [
        "Libraries read from .venv (the project's .venv); not installed there: timm.",
        "Found 1 finding (1 confirmed, 0 suspicious) in 1 file checked.",
    ]
    r = _run("check", "train.py", "--no-cache", "--format", "sarif", cwd=proj / "scripts")
    (run,) = json.loads(r.stdout)["runs"]
    assert run["properties"]["environments"][0]["path"] == venv
    r = _run("check", "train.py", "--no-cache", "--format", "github", cwd=proj / "scripts")
    assert r.stdout.splitlines()[-1] == (
        f"::notice title=gradaudit::Libraries read from {venv} (the project's .venv); not installed there: timm."
    )
    # the audit says it too, at the top of the report and in its JSON
    r = _run("audit", "scripts/train.py", "--no-cache", cwd=proj)
    assert (
        "Libraries were read from `.venv` (the project's .venv): `fakevision`; not installed there: `timm` "
        "(the models of those are known only from gradaudit's table" in r.stdout
    )
    r = _run("audit", "scripts/train.py", "--no-cache", "--format", "json", cwd=proj)
    assert json.loads(r.stdout)["environments"] == [e]
    # an active virtualenv wins over the project's .venv (it is what the user runs with)
    other = make_env(tmp_path / "other", files={})
    r = _run(
        "check", "scripts/train.py", "--no-cache", "--format", "json", cwd=proj, env=dict(_cli_env(), VIRTUAL_ENV=other)
    )
    (e,) = json.loads(r.stdout)["environments"]
    assert (e["path"], e["how"], e["missing"]) == (other, "virtualenv", ["fakevision", "timm", "torch"])


def test_imports_the_output_lists(tmp_path):
    """What counts as an imported library: not the standard library, not the project's own
    modules or namespace folders, not relative imports, not an optional import that is absent."""
    from gradaudit.analysis.libraries.environment import find_env
    from gradaudit.analysis.libraries.imported import library_use
    from gradaudit.analysis.source.program import Program, parse_source

    env = find_env(make_env(tmp_path, files={"pkg/__init__.py": "", "opt_here.py": ""}))
    proj = tmp_path / "proj"
    (proj / "mine").mkdir(parents=True)
    (proj / "mine" / "util.py").write_text("X = 1\n")  # a namespace package of the project
    (proj / "helpers.py").write_text("Y = 2\n")
    (proj / "wandb").mkdir()  # a run-log folder, not a package: wandb is still a library
    src = textwrap.dedent(
        """
        import os, json
        import pkg.sub
        from mine.util import X
        from helpers import Y
        from . import sibling
        import wandb
        try:
            import apex
        except ImportError:
            apex = None
        try:
            import opt_here
        except (ImportError, OSError):
            pass
        def f():
            import lazy_missing
        """
    )
    sf = parse_source(str(proj / "train.py"), src)
    use = library_use(env, [sf], Program())
    assert use.found == ("opt_here", "pkg") and use.missing == ("lazy_missing", "wandb")


# ---------------------------------------------------------------- the site index


def test_site_index_follows_lazy_packages(env):
    from gradaudit.analysis.libraries.environment import find_env
    from gradaudit.analysis.libraries.site_index import SiteIndex

    idx = SiteIndex(find_env(env))
    d = idx.define("fakevision.TinyNet")
    assert d.kind == "class" and d.qual == "fakevision.models.tiny.TinyNet" and d.path.endswith("tiny.py")
    d = idx.define("fakevision.TinyNet.from_pretrained")
    assert d.rest == ("from_pretrained",)
    assert idx.define("fakevision.models.blocks.Block").line == 6
    assert idx.define("fakevision.Nothing") is None
    assert idx.define("notinstalled.X") is None


def test_site_index_reads_stubs_and_knows_absent_names(tmp_path):
    """A compiled package described by `__init__.pyi` (torch._C) is read from its stub, and a name
    its module never mentions (nor star-imports, nor makes at run time) is known absent, so that
    jedi, reading the same files, is not asked."""
    from gradaudit.analysis.libraries.environment import find_env
    from gradaudit.analysis.libraries.site_index import SiteIndex

    files = {
        "cext/__init__.py": "from cext._C import Base\n",
        "cext/_C/__init__.pyi": "class Base:\n    def go(self) -> None: ...\n",
        "cext/ops/__init__.py": "from .misc import *\n",
        "cext/ops/misc.py": "def kept(x):\n    return x\n",
        "lazy/__init__.py": "def __getattr__(name):\n    return name\n",
    }
    idx = SiteIndex(find_env(make_env(tmp_path, files=files)))
    d = idx.define("cext._C.Base")
    assert d is not None and d.kind == "class" and d.path.endswith("__init__.pyi") and d.qual == "cext._C.Base"
    assert idx.define("cext.Base").path.endswith("__init__.pyi")
    assert idx.absent("cext.ops.misc._gone") and idx.absent("cext.ops._gone")
    assert not idx.absent("cext.ops.kept") and not idx.absent("cext.ops.misc")
    assert not idx.absent("lazy.made_at_run_time") and not idx.absent("notinstalled.X")


def test_no_jedi_for_an_uninstalled_library_in_a_project_editing_sys_path(tmp_path):
    """A project file that edits sys.path makes its imports worth asking jedi about, but a name no
    file or folder of the project carries is an uninstalled library: jedi is not started for it."""
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "common.py").write_text("X = 1\n")
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nsys.path.append('models')\ntry:\n    import comet_ml\nexcept ImportError:\n"
        "    comet_ml = None\nimport torch\nm = torch.nn.Linear(2, 2)\n"
        "opt = torch.optim.SGD(m.parameters(), lr=0.1)\nm(torch.randn(1, 2)).sum().backward()\nopt.step()\n"
    )
    code = (
        "import sys; from gradaudit.analysis.check.engine import Analyzer; "
        f"Analyzer(cache=False).analyze_file({str(script)!r}); "
        "print('gradaudit.analysis.libraries.jedi_resolver' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.stdout.split() == ["False"], out.stderr


def test_project_names_are_listed_once_and_again_when_a_folder_changes(tmp_path, monkeypatch):
    """The names a project's files and folders carry (which imports may be the project's) are kept
    across Programs, as the language server makes one per edit, and listed again once a folder
    changed."""
    from gradaudit.analysis.source import program

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "common.py").write_text("")
    walks = []
    real_walk = program.os.walk
    monkeypatch.setattr(program.os, "walk", lambda root: walks.append(root) or real_walk(root))
    root = str(tmp_path)
    names = program._names_under(root)
    assert "common" in names and "models" in names and "comet_ml" not in names
    assert program._names_under(root) is names and len(walks) == 1
    (tmp_path / "models" / "comet_ml.py").write_text("")
    os.utime(tmp_path / "models", ns=(1, 1))  # a coarse clock may not move the folder's mtime
    assert "comet_ml" in program._names_under(root) and len(walks) == 2


# ---------------------------------------------------------------- the real libraries, when installed


def _installed(*names):
    return all(importlib.util.find_spec(n) is not None for n in names)


REAL = """
import torch
from transformers import BertConfig, BertForSequenceClassification

config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
optimizer = torch.optim.AdamW(model.bert.parameters(), lr=5e-4)  # <- GA108
for step in range(2):
    ids = torch.randint(0, 64, (4, 8))
    out = model(input_ids=ids, labels=torch.randint(0, 3, (4,)))
    optimizer.zero_grad()
    out.loss.backward()
    optimizer.step()
"""


@pytest.mark.skipif(not _installed("transformers"), reason="transformers is not installed")
def test_transformers_source_names_the_head():
    import sys

    from gradaudit.analysis.check.config import Config
    from gradaudit.analysis.check.engine import Analyzer

    src, expected = strip_markers(REAL)
    result = Analyzer(Config(), python=sys.executable, cache=False).analyze_source("train.py", src)
    assert found(result) == expected
    (f,) = result.findings
    assert f.confidence == "confirmed" and "model.classifier" in f.message
    # optimizing the whole model is fine
    ok = src.replace("model.bert.parameters()", "model.parameters()")
    assert found(Analyzer(Config(), python=sys.executable, cache=False).analyze_source("train.py", ok)) == []


TRANSFORMERS_SCRIPTS = sorted(
    os.path.join(os.path.dirname(__file__), "data", "transformers", n)
    for n in os.listdir(os.path.join(os.path.dirname(__file__), "data", "transformers"))
)


@pytest.mark.skipif(not _installed("transformers"), reason="transformers is not installed")
@pytest.mark.parametrize("path", TRANSFORMERS_SCRIPTS, ids=os.path.basename)
def test_transformers_training_scripts(path):
    """Fine-tuning scripts on models the installed transformers builds (tests/data/transformers: each
    checked with torch and transformers, its outcome in its first line): the marked defects, confirmed,
    and nothing on the look-alikes (valid_*)."""
    import sys

    from gradaudit.analysis.check.config import Config
    from gradaudit.analysis.check.engine import Analyzer

    with open(path, encoding="utf-8") as fh:
        src, expected = strip_markers(fh.read())
    assert bool(expected) != os.path.basename(path).startswith("valid_")
    result = Analyzer(Config(), python=sys.executable, cache=False).analyze_source("train.py", src)
    assert found(result) == expected
    assert all(f.confidence == "confirmed" for f in result.findings)


@pytest.mark.skipif(not _installed("torchvision"), reason="torchvision is not installed")
def test_torchvision_source_structure():
    import sys

    from gradaudit.analysis.libraries.environment import find_env
    from gradaudit.analysis.libraries.models import LibraryModels

    lm = LibraryModels(find_env(sys.executable)).resolve("torchvision.models.resnet18")
    assert lm.how == "source" and lm.shape is not None
    assert lm.shape.count() == 62  # resnet18's 62 parameter tensors
    names = [n for n, _ in lm.shape.children]
    assert names[:2] == ["conv1", "bn1"] and "fc" in names
    assert "fc.weight" in (lm.shape.forward or ())


# ---------------------------------------------------------------- the project's own modules, with jedi


def test_jedi_resolves_a_module_added_to_sys_path(tmp_path, monkeypatch):
    from gradaudit.analysis.libraries import jedi_resolver

    monkeypatch.setattr(jedi_resolver, "IMPORT_TIMEOUT", 300.0)  # jedi's first start on a busy machine
    (tmp_path / "lib").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "lib" / "mynet.py").write_text(
        textwrap.dedent("""
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = [nn.Linear(8, 8), nn.Linear(8, 8)]
                self.out = nn.Linear(8, 2)

            def forward(self, x):
                for b in self.blocks:
                    x = b(x).relu()
                return self.out(x)
    """)
    )
    train = tmp_path / "scripts" / "train.py"
    train.write_text(
        textwrap.dedent("""
        import os
        import sys

        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

        import torch
        import torch.nn.functional as F
        from mynet import Net

        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    )
    from gradaudit.analysis.check.engine import Analyzer

    result = Analyzer(cache=False).analyze_file(str(train))
    assert [(os.path.basename(f.span.path), f.span.line, f.code) for f in result.findings] == [("mynet.py", 8, "GA109")]


def test_no_library_no_jedi(tmp_path):
    """A script importing no library model neither imports jedi nor parses any library file; one
    calling only the standard library and torch does not even load the library models (the
    environment is looked up, by a few file tests, to say which imported libraries it has)."""
    import subprocess
    import sys

    script = tmp_path / "t.py"
    script.write_text(
        "import argparse\nimport torch\nimport wandb\nimport torch.nn as nn\n"
        "args = argparse.ArgumentParser().parse_args([])\nm = nn.Linear(2, 2)\n"
        "data = torch.utils.data.TensorDataset(torch.randn(4, 2))\n"
        "opt = torch.optim.SGD(m.parameters(), lr=0.1)\nm(torch.randn(1, 2)).sum().backward()\n"
    )
    code = (
        "import sys; from gradaudit.analysis.check.engine import Analyzer; a = Analyzer(cache=False); "
        f"a.analyze_file({str(script)!r}); "
        "looked = any(m in sys.modules for m in ('gradaudit.analysis.libraries.models', "
        "'gradaudit.analysis.libraries.site_index')); "
        "idx = a.libraries._index; "
        "print('jedi' in sys.modules, bool(idx and idx._files), looked)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    # no jedi, no library file parsed, no library model loaded
    assert out.stdout.split() == ["False", "False", "False"], out.stderr


@pytest.mark.skipif(not _installed("transformers"), reason="transformers is not installed")
def test_scheduler_factories_read_from_the_source():
    """A function each of whose returns builds a torch scheduler over one of its parameters is
    read from the installed source; `get_scheduler` picks its function from a dict by name, which
    the source does not settle: the table answers (a constant name decides the class)."""
    import sys

    from gradaudit.analysis.interp.values import const
    from gradaudit.analysis.libraries.environment import find_env
    from gradaudit.analysis.libraries.models import LibraryModels
    from gradaudit.analysis.libraries.schedulers import PLATEAU, UNKNOWN, source_factory, table_factory

    libs = LibraryModels(find_env(sys.executable))
    linear = source_factory(libs, "transformers.get_linear_schedule_with_warmup")
    assert (linear.position, linear.keyword, linear.cls, linear.how) == (0, "optimizer", "LambdaLR", "source")
    assert source_factory(libs, "transformers.optimization.get_reduce_on_plateau_schedule").cls == PLATEAU
    assert source_factory(libs, "transformers.get_scheduler") is None
    by_name = table_factory("transformers.get_scheduler")
    assert by_name.torch_class([const("reduce_lr_on_plateau")], {}) == PLATEAU
    assert by_name.torch_class([], {"name": const("cosine")}) == "LambdaLR"
    assert by_name.torch_class([], {}) == UNKNOWN
    # not a scheduler factory: a model class
    assert source_factory(libs, "transformers.BertModel") is None


def test_peft_adapters_fix_adds_only_what_the_optimizer_lacks():
    """The GA108 fix for adapters must not add the model's parameters again: the optimizer already
    holds them (frozen now) and torch refuses a parameter in two groups. Applied to the LoRA
    script and run with torch + peft, the adapters then train (checked by hand)."""
    from gradaudit.analysis.check.config import Config
    from gradaudit.analysis.check.engine import Analyzer
    from gradaudit.analysis.rules.fixes import fix_source

    path = os.path.join(
        os.path.dirname(__file__), "data", "transformers", "lora_custom_module_optimizer_built_before.py"
    )
    with open(path, encoding="utf-8") as fh:
        src, _ = strip_markers(fh.read())
    result = Analyzer(Config(), cache=False).analyze_source("train.py", src)
    (f,) = result.findings
    assert f.code == "GA108" and f.message.startswith("the adapters PEFT adds to `model` are created")
    new, applied = fix_source(src, [f], only_safe=False)
    assert applied
    added = [line for line in new.splitlines() if "add_param_group" in line]
    assert added == [
        'optimizer.add_param_group({"params": [p for p in model.parameters() if p.requires_grad '
        "and all(p is not q for g in optimizer.param_groups for q in g['params'])]})"
    ]
    assert Analyzer(Config(), cache=False).analyze_source("train.py", new).findings == []


def test_add_module_of_an_uninstalled_library_is_a_module(empty_env):
    # `Convolution(...)` of a library that is not installed (MONAI's blocks): add_module takes only
    # modules, so the layer is one of unseen parameters, and the discriminator's optimizer is known
    body = """
    import torch
    import torch.nn as nn
    from fakeblocks import Convolution

    class Discriminator(nn.Sequential):
        def __init__(self):
            super().__init__()
            self.add_module("initial_conv", Convolution(spatial_dims=2, in_channels=1, out_channels=8))
            for i in range(2):
                layer = Convolution(spatial_dims=2, in_channels=8, out_channels=8)
                self.add_module("%d" % i, layer)

        def forward(self, x):
            for submodel in self.children():
                x = submodel(x)
            return x

    disc = Discriminator()
    optimizer_d = torch.optim.Adam(disc.parameters(), lr=5e-4)
    for step in range(3):
        loss_d = disc(torch.randn(4, 1, 16, 16)).pow(2).mean()
        loss_d.backward()
        optimizer_d.step()  # <- GA201
    """
    result, expected = check(empty_env, body)
    assert found(result) == expected
    assert all(not s.not_understood for s in result.model.steps)


def test_sequential_of_an_uninstalled_librarys_layers_is_known(empty_env):
    body = """
    import torch
    import torch.nn as nn
    from fakeblocks import Convolution

    disc = nn.Sequential(
        Convolution(in_channels=1, out_channels=8), nn.ReLU(), Convolution(in_channels=8, out_channels=1)
    )
    optimizer = torch.optim.Adam(disc.parameters(), lr=1e-3)
    for step in range(3):
        loss = disc(torch.randn(2, 1, 8, 8)).mean()
        loss.backward()
        optimizer.step()  # <- GA201
    """
    result, expected = check(empty_env, body)
    assert found(result) == expected
    assert all(not s.not_understood for s in result.model.steps)


def test_pytorch_transformers_schedule_classes_are_lambda_schedules(empty_env):
    # pytorch_transformers 1.x / transformers 2.x: WarmupLinearSchedule(optimizer, ...) is a LambdaLR
    # over that optimizer (vilbert-multi-task's train_tasks.py), known without the package installed
    body = """
    import torch
    import torch.nn as nn
    from pytorch_transformers.optimization import WarmupLinearSchedule

    model = nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = WarmupLinearSchedule(optimizer, warmup_steps=2, t_total=10)
    for step in range(10):
        loss = model(torch.randn(3, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        scheduler.step()  # <- GA207
        optimizer.step()
    """
    result, expected = check(empty_env, body)
    assert found(result) == expected


def test_module_list_of_an_uninstalled_librarys_layers_is_known(empty_env):
    body = """
    import torch
    import torch.nn as nn
    from fakeblocks import Convolution

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList()
            for i in range(3):
                self.blocks.append(Convolution(in_channels=4, out_channels=4))

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    net = Net()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step in range(3):
        loss = net(torch.randn(2, 4, 8, 8)).mean()
        loss.backward()
        optimizer.step()  # <- GA201
    """
    result, expected = check(empty_env, body)
    assert found(result) == expected
    assert all(not s.not_understood for s in result.model.steps)


def test_a_fresh_optimizer_per_run_after_resetting_layers_of_an_uninstalled_library(empty_env):
    # ogb's examples: `model.reset_parameters()` (each GCNConv's, torch_geometric not installed),
    # then a new Adam per run. A part of a layer carved out after the reset (the evaluation reads
    # `conv.lin.weight`) was reset with the layer: no optimizer is rebuilt in the
    # middle of a training
    body = """
    import torch
    import torch.nn.functional as F
    from torch_geometric.nn import GCNConv

    class GCN(torch.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.convs = torch.nn.ModuleList()
            for _ in range(n):
                self.convs.append(GCNConv(16, 16))

        def reset_parameters(self):
            for conv in self.convs:
                conv.reset_parameters()

        def forward(self, x, edge_index):
            for conv in self.convs:
                x = F.relu(conv(x, edge_index))
            return x

    def train(model, optimizer, data):
        optimizer.zero_grad()
        loss = model(data.x, data.edge_index).sum()
        loss.backward()
        optimizer.step()

    @torch.no_grad()
    def test(model):
        return [conv.lin.weight.t().cpu().numpy() for conv in model.convs]

    def main(args, data):
        model = GCN(args.layers)
        for run in range(args.runs):
            model.reset_parameters()
            optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
            for epoch in range(args.epochs):
                train(model, optimizer, data)
                test(model)

    if __name__ == "__main__":
        main(None, None)
    """
    result, _ = check(empty_env, body)
    assert found(result) == []
    assert all(not s.not_understood for s in result.model.steps)
