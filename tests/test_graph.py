"""The training-step graph the editor draws (analysis/report/editor_graph.py), from the model and the findings
of one analysis (issue 14: internal event names, "0 params" on cut modules, a GAN's valid
fake.detach() drawn like a bug, a replaced head drawn as held by the optimizer, GA109 invisible)."""

from __future__ import annotations

import os

import pytest
from helpers import strip_markers

from gradaudit.analysis.check.engine import Analyzer
from gradaudit.analysis.report.editor_graph import call_label, graph
from gradaudit.analysis.rules import BY_CODE
from gradaudit.analysis.source.program import read_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def example_graph(name):
    path = os.path.join(ROOT, "examples", f"{name}.py")
    result = Analyzer().analyze_file(path)
    return graph(result.model, result.findings, read_text)


def nodes(step):
    return {n["name"]: n for n in step["nodes"]}


@pytest.mark.parametrize(
    "text, label",
    [
        ("scheduler.step()", "scheduler.step()"),
        ("torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", "clip_grad_norm_()"),
        ("nn.utils.clip_grad_value_(params, 0.5)", "clip_grad_value_()"),
        ("self.optimizer.zero_grad(set_to_none=True)", "self.optimizer.zero_grad()"),
        ("scaler.scale(loss).backward()", "scaler.scale(loss).backward()"),
        ("torch.autograd.grad(loss, [w])", "grad()"),
        ("not a call", ""),
    ],
)
def test_call_label(text, label):
    assert call_label(text) == label


def test_replaced_head_is_not_held_and_its_old_parameters_are():
    [step] = example_graph("finetune_classifier")["steps"]
    n = nodes(step)
    assert (n["model.fc"]["state"], n["model.fc"]["held_by"], n["model.fc"]["optimized"]) == ("reached", [], False)
    assert n["model.fc"]["findings"] == ["GA108"]
    old = n["model.fc (earlier parameters)"]
    assert (old["state"], old["held_by"], old["count"]) == ("unreached", [0], 2)
    # the center loss, cut by .item() (GA103): a defect, with its real parameter count
    assert (n["center_loss"]["state"], n["center_loss"]["count"], n["center_loss"]["findings"]) == ("cut", 1, ["GA103"])
    assert [e["label"] for e in step["events"]] == [
        "optimizer.zero_grad()",
        "loss.backward()",
        "optimizer.step()",
        "scheduler.step()",
    ]
    assert sorted(f["code"] for f in step["findings"]) == ["GA103", "GA108"]


def test_gan_detach_is_a_valid_stop_gradient():
    g = example_graph("gan_training")
    d_step = next(s for s in g["steps"] if s["loss"] == "d_loss")
    gen = [n for n in d_step["nodes"] if n["module"].startswith("generator")]
    assert gen and all(n["state"] == "stopped" and n["findings"] == [] for n in gen)
    assert all(n["cuts"] == [".detach() (line 66)"] for n in gen)
    assert g["findings"] == [] and all(s["findings"] == [] for s in g["steps"])


def test_unregistered_layers_and_the_detached_encoder_are_on_the_graph():
    [step] = example_graph("text_trainer")["steps"]
    n = nodes(step)
    proj = next(v for k, v in n.items() if k.startswith("model.layer_proj"))
    assert (proj["state"], proj["optimized"], proj["findings"]) == ("reached", False, ["GA109"])
    cut = [v for v in n.values() if "GA101" in v["findings"]]
    assert {v["module"] for v in cut} == {"model.embedding", "model.gru"} and all(v["state"] == "cut" for v in cut)
    assert "clip_grad_norm_()" in [e["label"] for e in step["events"]]


@pytest.mark.parametrize(
    "code, label",
    [
        ("GA201", "optimizer.step()"),
        ("GA202", "optimizer.zero_grad()"),
        ("GA207", "scheduler.step()"),
        ("GA208", "clip_grad_norm_()"),
    ],
)
def test_findings_about_a_call_sit_on_that_call(code, label):
    if code not in BY_CODE:
        pytest.skip(f"{code} is not implemented")
    source = strip_markers(BY_CODE[code].invalid[0].source)[0]
    result = Analyzer().analyze_source("ex.py", source)
    g = graph(result.model, result.findings, lambda path: source)
    flagged = [(e["label"], e["findings"]) for s in g["steps"] for e in s["events"] if code in e["findings"]]
    assert flagged and all(lbl == label for lbl, _ in flagged)
    assert all(f["on"] == "event" for s in g["steps"] for f in s["findings"] if f["code"] == code)


def test_every_finding_is_on_the_graph():
    # each finding of every example with steps is placed in a step or listed for the file
    for name in ("finetune_classifier", "text_trainer", "manual_sgd", "gan_training"):
        path = os.path.join(ROOT, "examples", f"{name}.py")
        result = Analyzer().analyze_file(path)
        g = graph(result.model, result.findings, read_text)
        shown = {(f["code"], f["line"]) for s in g["steps"] for f in s["findings"]} | {
            (f["code"], f["line"]) for f in g["findings"]
        }
        assert shown == {(f.code, f.span.line) for f in result.findings}, name


def test_without_source_text_the_calls_still_have_names():
    result = Analyzer().analyze_file(os.path.join(ROOT, "examples", "finetune_classifier.py"))
    [step] = graph(result.model, result.findings)["steps"]
    assert [e["label"] for e in step["events"]] == [
        "optimizer.zero_grad()",
        "backward()",
        "optimizer.step()",
        "scheduler.step()",
    ]
