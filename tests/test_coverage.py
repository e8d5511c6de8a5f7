"""Coverage in every verdict: each training step is understood or named as not understood, with
why (a budget, an unresolved call, a library not installed, a function run on unknown arguments),
in the text, JSON, SARIF and GitHub outputs and the audit; no "wired correctly" over a step not
understood; every budget a setting with a flag, and the advice names the one that ran out."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
from clitools import run_main, write

from gradaudit.analysis.check.config import Config
from gradaudit.analysis.check.engine import Analyzer
from gradaudit.analysis.interp.budget import Budgets
from gradaudit.analysis.report import collect

REPO = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = REPO / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json"
AUDIT_SCHEMA = REPO / "docs" / "audit-report.schema.json"

PLAIN = """\
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(8, 4), torch.randn(8, 2))]:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""

# the optimizer comes from a factory of a library that is not installed
FACTORY = """\
import torch
import torch.nn as nn
from mylib_not_installed import make_optimizer

model = nn.Linear(4, 2)
optimizer = make_optimizer(model)
for x, y in [(torch.randn(8, 4), torch.randn(8, 2))]:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""

# the model comes from a call the engine cannot follow
UNRESOLVED = """\
import torch
import torch.nn as nn

model = torch.load("model.pt")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(8, 4), torch.randn(8, 2))]:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
"""

# a helper spends statements before the training loop: a tiny statement budget cuts the loop
BUDGETED = """\
import torch
import torch.nn as nn


def prepare(n):
    total = 0
    for i in range(n):
        total += i
    return total


model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
prepare(10)
for x in [torch.randn(8, 4)]:
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
"""

# nothing calls `fit`: it runs on unknown arguments, its model and optimizer unknown
ARGUMENTS = """\
import torch.nn as nn


def fit(fabric, model, optimizer, loader):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
"""


def analyse(tmp_path, name, source, config=None):
    path = write(tmp_path / name, textwrap.dedent(source))
    return Analyzer(config).analyze_file(str(path))


def only(result):
    [rec] = result.coverage
    return rec


# ------------------------------------------------------------------ the decision


def test_a_step_understood_says_what_was_understood(tmp_path):
    rec = only(analyse(tmp_path, "plain.py", PLAIN))
    assert rec.understood and rec.entry == "script" and rec.reasons == ()
    assert rec.parts() == [
        "model `model` (4 parameters)",
        "optimizer `optimizer` (SGD, 1 group)",
        "loss `loss` (line 8)",
        "loop at line 6",
    ]


def test_an_optimizer_built_by_an_unknown_factory_is_not_understood(tmp_path):
    rec = only(analyse(tmp_path, "factory.py", FACTORY))
    assert not rec.understood
    [reason] = rec.reasons
    assert (reason.what, reason.why) == ("optimizer", "unknown library")
    assert reason.span.line == 11  # the `optimizer.step()` that stepped an unknown object
    assert "`optimizer` is `make_optimizer(model)` (line 6)" in reason.detail
    assert "`mylib_not_installed`, which is not installed in the environment read" in reason.detail
    # what it did understand is still said
    assert "model `model` (2 parameters)" in rec.parts()


def test_a_model_from_a_call_not_followed_is_not_understood(tmp_path):
    rec = only(analyse(tmp_path, "unresolved.py", UNRESOLVED))
    [reason] = rec.reasons  # the optimizer over those unknown parameters is not said twice
    assert (reason.what, reason.why) == ("parameters", "unresolved call")
    assert '`model` is `torch.load("model.pt")` (line 4)' in reason.detail


def test_a_function_run_on_unknown_arguments_is_not_understood(tmp_path):
    rec = only(analyse(tmp_path, "fit.py", ARGUMENTS))
    assert rec.entry == "function"
    assert [(r.what, r.why) for r in rec.reasons] == [
        ("parameters", "unknown arguments"),
        ("optimizer", "unknown arguments"),
    ]
    assert "`model` is an argument of `fit`, which ran on unknown arguments" in rec.reasons[0].detail


def test_a_tiny_budget_leaves_the_step_found_but_not_reached(tmp_path):
    tiny = Config(budgets=Budgets(statements=3, loop_reserve=0))
    result = analyse(tmp_path, "budgeted.py", BUDGETED, tiny)
    assert result.model.steps == ()
    rec = only(result)
    assert rec.entry == "missed" and rec.span.line == 18 and rec.loss == "loss"
    [reason] = rec.reasons
    assert (reason.what, reason.why, reason.budget) == ("step", "budget", "statements")
    assert reason.detail == "the budget of 3 statements followed ran out before it"
    assert result.gap.budget == "statements"
    # the default budgets reach it and understand it
    assert only(analyse(tmp_path, "budgeted.py", BUDGETED)).understood


# ------------------------------------------------------------------ budgets as settings


def test_the_flag_cuts_the_loop_and_the_advice_names_it(tmp_path, capsys, monkeypatch):
    write(tmp_path / "t.py", BUDGETED)
    code, out, err = run_main(
        ["check", "t.py", "--statement-budget", "3", "--loop-reserve", "0"], tmp_path, capsys, monkeypatch
    )
    assert code == 0
    assert "warning: analysis incomplete: the budget of 3 statements followed ran out" in err
    assert err.rstrip().endswith("raise it with `--statement-budget`")
    lines = out.splitlines()
    assert lines[0] == "t.py:18:5: note: training step not understood: backward() of `loss` in `<module>`"
    assert lines[1] == (
        "    not reached (budget): the budget of 3 statements followed ran out before it; "
        "raise it with `--statement-budget`"
    )
    assert "0 of 1 training step understood." in lines
    assert lines[-1] == "No findings in 1 file checked; 1 training step not understood, analysis incomplete in 1 file."
    # the same from [tool.gradaudit]; the flag wins over it
    write(tmp_path / "pyproject.toml", "[tool.gradaudit]\nstatement-budget = 3\nloop-reserve = 0\n")
    code, out, _ = run_main(["check", "t.py"], tmp_path, capsys, monkeypatch)
    assert "0 of 1 training step understood." in out
    code, out, _ = run_main(["check", "t.py", "--statement-budget", "15000"], tmp_path, capsys, monkeypatch)
    assert "1 of 1 training step understood." in out


def test_the_script_budget_is_named_when_it_runs_out(tmp_path, capsys, monkeypatch):
    # DETR's case: the script's own run spends its budget before the training function is called
    train = BUDGETED.split("for x in")[0] + (
        "\n\ndef train(model, optimizer):\n"
        "    for x in [torch.randn(8, 4)]:\n"
        "        optimizer.zero_grad()\n"
        "        loss = model(x).sum()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n\n\n"
        "train(model, optimizer)\n"
    )
    write(tmp_path / "t.py", train)
    code, out, err = run_main(["check", "t.py", "--script-budget", "2"], tmp_path, capsys, monkeypatch)
    # `train` then runs alone, on unknown arguments: what the call would have given it is unknown
    lines = out.splitlines()
    assert lines[1] == (
        "    parameters unknown (budget): `model` is an argument of `train`, whose call was not followed (the "
        "budget of 2 statements for the script's own run ran out): it ran on unknown arguments instead; "
        "raise it with `--script-budget`"
    )
    assert "0 of 1 training step understood." in lines
    code, out, err = run_main(["check", "t.py"], tmp_path, capsys, monkeypatch)
    assert "1 of 1 training step understood." in out


# ------------------------------------------------------------------ outputs


def test_json_names_each_step_and_why(tmp_path, capsys, monkeypatch):
    write(tmp_path / "plain.py", PLAIN)
    write(tmp_path / "factory.py", FACTORY)
    write(tmp_path / "budgeted.py", BUDGETED)
    code, out, _ = run_main(
        ["check", "-j", "1", ".", "--format", "json", "--statement-budget", "3", "--loop-reserve", "0"],
        tmp_path,
        capsys,
        monkeypatch,
    )
    cov = json.loads(out)["coverage"]
    assert (cov["steps"], cov["understood"]) == (3, 1)
    by = {s["path"]: s for s in cov["training_steps"]}
    assert by["plain.py"]["understood"] and by["plain.py"]["reasons"] == []
    assert by["plain.py"]["models"] == [{"name": "model", "params": 4, "library": None}]
    assert by["plain.py"]["optimizers"] == [{"name": "optimizer", "type": "SGD", "groups": 1}]
    [why] = by["factory.py"]["reasons"]
    assert (why["what"], why["why"], why["line"]) == ("optimizer", "unknown library", 11)
    [why] = by["budgeted.py"]["reasons"]
    assert why["budget"] == {"name": "statement-budget", "flag": "--statement-budget"}
    assert by["budgeted.py"]["reached"] is False


def test_sarif_and_github_say_which_steps_were_not_understood(tmp_path, capsys, monkeypatch):
    write(tmp_path / "factory.py", FACTORY)
    code, out, _ = run_main(["check", "factory.py", "--format", "sarif"], tmp_path, capsys, monkeypatch)
    sarif = json.loads(out)
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()))
    [run] = sarif["runs"]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    [step] = [n for n in notes if n["descriptor"]["id"] == "gradaudit/not-understood"]
    assert step["level"] == "note" and step["locations"][0]["physicalLocation"]["region"]["startLine"] == 10
    assert "optimizer unknown (unknown library)" in step["message"]["text"]
    assert run["invocations"][0]["executionSuccessful"] is True
    assert run["properties"]["coverage"]["understood"] == 0
    code, out, _ = run_main(["check", "factory.py", "--format", "github"], tmp_path, capsys, monkeypatch)
    assert "::notice file=factory.py,line=10,title=gradaudit::training step not understood" in out
    assert "::notice title=gradaudit::0 of 1 training step understood." in out


def test_the_audit_makes_no_verdict_over_a_step_not_understood(tmp_path):
    write(tmp_path / "plain.py", PLAIN)
    write(tmp_path / "factory.py", FACTORY)
    run = collect.analyze([str(tmp_path)], Config(), jobs=1)
    audit = collect.build([str(tmp_path)], len(run.files), run.kept, run.problems, run.notebooks, (), run.coverage)
    assert audit.clean and audit.no_defect is None
    assert audit.partial.startswith("No defect was found in the 1 training step understood; 1 was not understood")
    from gradaudit.analysis.report import jsonout, markdown

    md = markdown.render(audit)
    assert "wired correctly" not in md and "1 of 2 training steps understood in 2 files" in md
    assert "- **not understood**: no verdict is made on this step" in md
    assert "- understood: model `model` (4 parameters), optimizer `optimizer` (SGD, 1 group)" in md
    report = jsonout.data(audit)
    jsonschema.validate(report, json.loads(AUDIT_SCHEMA.read_text()))
    assert report["verification"]["statement"] is None
    assert (report["summary"]["found"], report["summary"]["understood"]) == (2, 1)
    by = {s["path"].rsplit("/", 1)[-1]: s for s in report["steps"]}
    assert by["plain.py"]["understood"] and not by["factory.py"]["understood"]
    # understood everywhere: the verdict is made
    only_plain = collect.build(
        [str(tmp_path)],
        1,
        [k for k in run.kept if k[0].endswith("plain.py")],
        (),
        None,
        (),
        [r for r in run.coverage if r.span.path.endswith("plain.py")],
    )
    assert only_plain.no_defect == collect.NO_DEFECT


def test_a_step_never_reached_is_merged_with_its_run_on_unknown_arguments(tmp_path, capsys, monkeypatch):
    """DETR's layout: main.py spends its budget before calling engine.py's training function; the
    folder's check also runs that function alone, on unknown arguments."""
    write(
        tmp_path / "engine.py",
        "def train_one_epoch(model, optimizer, loader):\n"
        "    for x in loader:\n"
        "        optimizer.zero_grad()\n"
        "        loss = model(x).sum()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n",
    )
    write(
        tmp_path / "main.py",
        "import torch\nimport torch.nn as nn\nfrom engine import train_one_epoch\n\n\n"
        "def prepare(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n\n\n"
        "model = nn.Linear(4, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nprepare(10)\n"
        "train_one_epoch(model, optimizer, [torch.randn(8, 4)])\n",
    )
    code, out, err = run_main(["check", "-j", "1", ".", "--script-budget", "4"], tmp_path, capsys, monkeypatch)
    assert "raise it with `--script-budget`" in err
    lines = out.splitlines()
    assert lines[0] == "engine.py:5:9: note: training step not understood: backward() of `loss` in `train_one_epoch`"
    assert lines[1].startswith("    not reached (budget): the budget of 4 statements for the script's own run ran out")
    assert lines[2].startswith(
        "    parameters unknown (unknown arguments): `model` is an argument of `train_one_epoch`"
    )
    assert "0 of 1 training step understood." in lines
    code, out, _ = run_main(["check", "-j", "1", "."], tmp_path, capsys, monkeypatch)
    assert "1 of 1 training step understood." in out.splitlines()


def test_the_probe_says_which_step_was_not_reached_and_the_flag(tmp_path, capsys, monkeypatch):
    # the probe said only "no backward() found" when a budget had kept it from the training loop
    write(tmp_path / "t.py", BUDGETED)
    code, _, err = run_main(
        ["probe", "t.py", "--statement-budget", "3", "--loop-reserve", "0"], tmp_path, capsys, monkeypatch
    )
    assert code == 1
    lines = err.splitlines()
    assert lines[0].endswith("raise it with `--statement-budget`")
    assert lines[1] == "t.py:18:5: note: training step not understood: backward() of `loss` in `<module>`"
    assert lines[-1] == "gradaudit: t.py: no training step to probe (no backward() found in what was analysed)"
    code, out, err = run_main(["probe", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 0 and err == "" and "def test_" in out
