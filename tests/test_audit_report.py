"""`gradaudit audit`: the five sections on examples with and without defects, the JSON schema, the
self-contained HTML page, corrections that apply and parse, and the valid look-alikes it lists."""

import ast
import json
import os
import re
import textwrap
from dataclasses import replace

import jsonschema
import pytest
from clitools import run_cli as _run_cli

from gradaudit.analysis.check.config import Config
from gradaudit.analysis.report import collect
from gradaudit.analysis.report import graph as G
from gradaudit.analysis.report.markdown import SECTIONS
from gradaudit.analysis.source.notebook import neutralise

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
SCHEMA = os.path.join(ROOT, "docs", "audit-report.schema.json")


def run_cli(args, cwd=ROOT):
    p = _run_cli(*args, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


TRAIN_GA101 = """\
import torch
import torch.nn as nn

encoder = nn.Linear(8, 8)
head = nn.Linear(8, 2)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
for step in range(10):
    x = torch.randn(4, 8)
    y = torch.randint(0, 2, (4,))
    feats = encoder(x).detach()
    loss = nn.functional.cross_entropy(head(feats), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def audit_of(paths, **kw):
    run = collect.analyze(paths, Config(), jobs=1, **kw)
    return collect.build(paths, len(run.files), run.kept, run.problems, run.notebooks)


def write(tmp_path, name, source):
    p = tmp_path / name
    p.write_text(textwrap.dedent(source))
    return str(p)


@pytest.fixture(scope="module")
def examples_md():
    code, out, err = run_cli(["audit", "examples"])
    assert code == 1, err
    return out


def h2(md):
    return re.findall(r"^## (.+)$", md, flags=re.M)


def section(md, title):
    start = md.index(f"## {title}\n")
    nxt = md.find("\n## ", start + 1)
    return md[start : nxt if nxt != -1 else len(md)]


def test_exactly_five_sections_in_order(examples_md):
    assert h2(examples_md) == list(SECTIONS)


def test_graph_section_draws_every_step(examples_md):
    graph = section(examples_md, SECTIONS[0])
    steps = re.findall(r"^### Step \d+: `(\w+)\.backward\(\)` in `([\w.<>]+)` \(([^)]+)\)$", graph, flags=re.M)
    assert {s[2] for s in steps} == {
        "examples/char_lm.py:62",
        "examples/finetune_classifier.py:98",
        "examples/gan_training.py:71",
        "examples/gan_training.py:77",
        "examples/manual_sgd.py:46",
        "examples/multilabel_tagger.py:55",
        "examples/project/train.py:57",
        "examples/sensor_regression.ipynb:cell 8:7",
        "examples/text_trainer.py:87",
    }
    assert graph.count("```mermaid\nflowchart LR") == len(steps)
    # the detach in text_trainer is drawn as a cut, the plain-list projections as not optimized
    assert '-.-x|"cut: .detach() line 77"|' in graph
    assert "model.layer_proj" in graph and "(not optimized)" in graph
    # the frozen encoder of project/train.py is marked frozen in the text and the flowchart
    assert "module `model.encoder` (at least 8 parameters): reached by the loss; frozen" in graph  # 2 blocks
    assert re.search(r"class s\d+_m\d+ frozen", graph)
    # the optimizer's groups and the order of one iteration
    assert "group 0 (lr): the parameters of `model.encoder.body` — all frozen" in graph
    assert "one iteration: zero_grad -> backward -> clip_grad -> step" in graph


def test_findings_ranked_classified_with_evidence(examples_md):
    findings = section(examples_md, SECTIONS[1])
    heads = re.findall(r"^### \d+\. (GA\d+) [\w-]+ — (.+) \((\w+)\)$", findings, flags=re.M)
    assert len(heads) == 14
    order = ["critical", "high", "medium", "low"]
    ranks = [order.index(sev) for _, _, sev in heads]
    assert ranks == sorted(ranks)
    assert heads[0][0] in ("GA110", "GA111", "GA301") and heads[0][2] == "critical"  # torch raises: first
    # the examples hold defects of every family, and one suspicious finding
    cls = {code: c for code, c, _ in heads}
    assert {cls["GA101"], cls["GA110"], cls["GA109"]} == {"confirmed graph break"}
    assert {cls["GA202"], cls["GA301"], cls["GA303"]} == {"confirmed lifecycle defect"}
    assert cls["GA408"] == "confirmed numerical instability" and cls["GA401"] == "suspicious but unproven"
    assert [code for code, _, _ in heads][-2:] == ["GA303", "GA303"]  # memory: last (char_lm, the notebook)
    block = findings[findings.index("GA103 python-scalar-in-loss") :]
    block = block[: block.index("\n### ")]
    assert "- **where**: `examples/finetune_classifier.py:96:18` in `train_one_epoch`" in block
    assert "- **parameters**: `center_loss.centers`" in block
    assert "- **why it is not a valid look-alike**:" in block
    # evidence excerpts with line numbers: the cut, the loss, the backward(), the optimizer
    for line in (
        "96 |         center = center_loss(feats, labels).item()",
        "97 |         loss = ce + center_weight",
        "98 |         loss.backward()",
        "123 |     optimizer = torch.optim.SGD(",
    ):
        assert line in block


def apply_unified_diff(source: str, diff: str) -> str:
    """A strict applier: every context and removed line must match the file."""
    lines = source.splitlines(True)
    out, pos = [], 0
    hunks = re.split(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@.*\n", diff, flags=re.M)
    for start, body in zip(hunks[1::2], hunks[2::2]):
        start = int(start) - 1
        out += lines[pos:start]
        pos = start
        for ln in body.splitlines(True):
            tag, text = ln[:1], ln[1:]
            if tag in (" ", "-"):
                assert lines[pos] == text, f"diff does not apply at line {pos + 1}: {lines[pos]!r} != {text!r}"
                pos += 1
                if tag == " ":
                    out.append(text)
            elif tag == "+":
                out.append(text)
    return "".join(out + lines[pos:])


def test_corrections_are_diffs_that_apply_and_parse(examples_md):
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        a = audit_of(["examples"])
    finally:
        os.chdir(cwd)
    assert len(a.corrections) == 13
    for c in a.corrections:
        assert c.parses and c.diff.startswith(f"--- a/{c.path}")
        with open(os.path.join(ROOT, c.path)) as fh:
            source = fh.read()
        if c.path.endswith(".ipynb"):
            # a notebook's correction is a diff of one cell's source (`a/x.ipynb:cell 6`)
            cell = int(c.diff.split("\n", 1)[0].rsplit(":cell ", 1)[1])
            source = "".join(json.loads(source)["cells"][cell - 1]["source"])
            c = replace(c, diff=c.diff.replace("\n\\ No newline at end of cell\n", "\n"))
            if not source.endswith("\n"):
                source += "\n"
        patched = apply_unified_diff(source, c.diff)
        assert patched != source
        # (a notebook cell's magics are IPython's: parsed as gradaudit reads them)
        ast.parse("\n".join(neutralise(patched.splitlines())[0]))
        # one finding's correction: a single hunk, nothing broader
        assert c.diff.count("\n@@ ") == 1
    unsafe = [c for c in a.corrections if c.applicability == "unsafe"]
    assert unsafe and all(f"### Correction {c.index + 1}: {c.code}" in examples_md for c in unsafe)
    assert examples_md.count("(**unsafe**: check it changes what you meant)") == len(unsafe)


def test_verification_with_defects_lists_probes(examples_md):
    ver = section(examples_md, SECTIONS[3])
    assert "autograd is wired correctly" not in ver
    assert ver.count("```python\ndef test_gradflow_") == 9
    assert "gradient from this loss reaches every trainable parameter of `center_loss`, `model`" in ver
    # under each step, what its probe shows of the findings on it
    tagger = ver[ver.index("(examples/multilabel_tagger.py:55)") :]
    tagger = tagger[: tagger.index("\n### ")]
    shown = re.findall(r"^- #\d+ (GA\d+): (.*)$", tagger, flags=re.M)
    assert [code for code, _ in shown] == ["GA202", "GA401", "GA408"]  # ranked: confirmed first
    said = dict(shown)
    assert said["GA202"].startswith("`updates` fails")
    assert said["GA401"].startswith("`finite` fails when a batch reaches the hazard")
    assert said["GA408"].startswith("no runtime check")


def test_clean_example_states_no_defect_and_assumptions(tmp_path):
    code, out, _ = run_cli(["audit", os.path.join(EXAMPLES, "gan_training.py")])
    assert code == 0
    assert h2(out) == list(SECTIONS)
    assert "None: no rule's conditions held" in section(out, SECTIONS[1])
    ver = section(out, SECTIONS[3])
    assert "No defect found: autograd is wired correctly for what was checked" in ver
    assert (
        "- `generator` trains from step 0: gets gradient from `g_loss` and changes at the first `opt_g.step()`" in ver
    )
    assert "- no parameter of `discriminator` is frozen" in ver
    assert "- `generator` gets no gradient from `d_loss`" in ver
    looks = section(out, SECTIONS[4])
    assert "**detached for another optimizer's step** at" in looks and "fake.detach()" in looks
    assert "**logging** at" in looks


@pytest.mark.parametrize(
    "name,source,kind",
    [
        (
            "target.py",
            """
        import copy
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        target = copy.deepcopy(policy)
        optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
        for it in range(4):
            s, s2 = torch.randn(8, 4), torch.randn(8, 4)
            a, r = torch.randint(0, 2, (8,)), torch.randn(8)
            q = policy(s).gather(1, a.unsqueeze(1)).squeeze(1)
            td_target = r + 0.9 * target(s2).max(dim=1).values.detach()
            loss = F.smooth_l1_loss(q, td_target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        """,
            "target network",
        ),
        (
            "simsiam.py",
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        backbone = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8))
        predictor = nn.Linear(8, 8)
        opt = torch.optim.SGD([*backbone.parameters(), *predictor.parameters()], lr=0.05)
        data = torch.randn(16, 12)
        for _ in range(3):
            z1, z2 = backbone(data), backbone(data + 0.1)
            p1, p2 = predictor(z1), predictor(z2)
            loss = -(F.cosine_similarity(p1, z2.detach()).mean() + F.cosine_similarity(p2, z1.detach()).mean())
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
            "stop-gradient with another path",
        ),
        (
            "frozen.py",
            """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        head = nn.Linear(16, 3)
        for p in backbone.parameters():
            p.requires_grad = False
        params = [p for p in [*backbone.parameters(), *head.parameters()] if p.requires_grad]
        opt = torch.optim.SGD(params, lr=0.1)
        for _ in range(3):
            x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
            loss = F.cross_entropy(head(backbone(x)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(loss.item())
        """,
            "frozen backbone",
        ),
    ],
)
def test_valid_lookalikes_are_listed_not_reported(tmp_path, name, source, kind):
    path = write(tmp_path, name, source)
    a = audit_of([path])
    assert not a.entries, [e.finding.message for e in a.entries]
    assert kind in {la.kind for la in a.lookalikes}, a.lookalikes


def test_lookalike_is_not_listed_when_it_is_the_defect(tmp_path):
    path = write(
        tmp_path,
        "bug.py",
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        head = nn.Linear(16, 3)
        opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-2)
        for step in range(3):
            x, y = torch.randn(4, 8), torch.randint(0, 3, (4,))
            feats = encoder(x).detach()
            loss = F.cross_entropy(head(feats), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    a = audit_of([path])
    assert [e.finding.code for e in a.entries] == ["GA101"]
    assert not [la for la in a.lookalikes if la.line == 11]


def test_json_matches_schema_and_markdown(tmp_path):
    out = tmp_path / "report.json"
    code, _, err = run_cli(["audit", "examples", "-o", str(out)])
    assert code == 1 and "wrote" in err
    data = json.loads(out.read_text())
    with open(SCHEMA) as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    assert data["version"] == 1 and data["summary"]["findings"] == 14 and not data["summary"]["clean"]
    assert [f["rank"] for f in data["findings"]] == list(range(1, 15))
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        a = audit_of(["examples"])
    finally:
        os.chdir(cwd)
    assert [s["mermaid"] for s in data["steps"]] == [G.mermaid(g) for g in a.graphs]
    assert data["verification"]["statement"] is None


def test_clean_json_has_the_statement(tmp_path):
    code, out, _ = run_cli(["audit", os.path.join(EXAMPLES, "gan_training.py"), "--format", "json"])
    data = json.loads(out)
    assert code == 0 and data["summary"]["clean"]
    assert data["verification"]["statement"].startswith("autograd is wired correctly for what was checked")


def test_html_is_one_self_contained_page(tmp_path):
    out = tmp_path / "report.html"
    code, _, _ = run_cli(["audit", EXAMPLES, "-o", str(out)])
    html = out.read_text()
    assert code == 1
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    assert html.count('<svg class="graph"') == 9
    assert "default-src 'none'" in html
    for banned in ("<script", " src=", "<link", "@import", "url(http", 'href="http'):
        assert banned not in html
    assert re.findall(r"<h2 id=\"\w+\">(.+?)</h2>", html) == list(SECTIONS)
    assert html.count("<strong>Runtime check:</strong>") == 14
    assert "<p>Findings on this step, at runtime:</p>" in html


def test_no_training_step(tmp_path):
    path = write(tmp_path, "util.py", "def add(a, b):\n    return a + b\n")
    code, out, _ = run_cli(["audit", path])
    assert code == 0
    assert h2(out) == list(SECTIONS)
    assert "No `backward()` was found" in out


def test_missing_path_is_an_error(tmp_path):
    missing = str(tmp_path / "nope.py")
    code, out, err = run_cli(["audit", missing])
    assert code == 2
    # one line, as `gradaudit check` says it (it once printed the Problem record itself)
    assert err.strip() == f"gradaudit: {missing}: no such file or directory"
    assert f"> `{missing}`: no such file or directory" in out


def test_problems_are_reported_as_check_reports_them(tmp_path):
    """Parse errors, unreadable bytes and missing paths: the same lines on stderr as `check`, and
    data in the JSON report (kind, path, line, column), which still validates."""
    write(tmp_path, "train.py", TRAIN_GA101)
    write(tmp_path, "broken.py", "import torch\n\ndef f(:\n    pass\n")
    (tmp_path / "latin.py").write_bytes(b"x = '\xe9'\n")
    args = ["train.py", "broken.py", "latin.py", "gone.py"]
    _, _, check_err = run_cli(["check", *args], cwd=tmp_path)
    code, out, err = run_cli(["audit", "--format", "json", *args], cwd=tmp_path)
    assert code == 2
    assert err.splitlines() == check_err.splitlines()
    report = json.loads(out)
    with open(SCHEMA, encoding="utf-8") as fh:
        jsonschema.validate(report, json.load(fh))
    assert {(e["kind"], e["path"], e["line"]) for e in report["errors"]} == {
        ("parse", "broken.py", 3),
        ("parse", "latin.py", 1),
        ("missing", "gone.py", None),
    }
    assert report["incomplete"] == []
    assert [f["code"] for f in report["findings"]] == ["GA101"]


def test_time_budget_cuts_the_audit_short_and_says_so(tmp_path):
    """The audit takes the same time budget as `check`: a training loop past it is not reported as
    'no training step', and a clean verdict says what was not checked."""
    slow = "import torch\n" + "".join(f"for i{k} in range(2):\n    v{k} = i{k}\n" for k in range(6000))
    write(tmp_path, "slow.py", slow + TRAIN_GA101)
    code, out, err = run_cli(["audit", "--time-budget", "0.2", "slow.py"], cwd=tmp_path)
    assert code == 0, err
    assert "slow.py:" in err and "warning: analysis incomplete: the time budget of 0.2 s ran out" in err
    # the training step past the budget is found, not reached, and the flag that reaches it is named
    assert "No training step was reached: 1 `backward()` call was found" in out and "raise `--time-budget`" in out
    assert "there is no training step to audit" not in out and "No defect found" not in out
    code, out, _ = run_cli(["audit", "--format", "json", "--time-budget", "0.2", "slow.py"], cwd=tmp_path)
    [gap] = json.loads(out)["incomplete"]
    assert gap["kind"] == "incomplete" and gap["path"] == "slow.py" and gap["not_reached"] > 0
    # without the budget the whole file is audited and the GA101 is found
    code, out, _ = run_cli(["audit", "--format", "json", "--time-budget", "0", "slow.py"], cwd=tmp_path)
    report = json.loads(out)
    assert report["incomplete"] == [] and [f["code"] for f in report["findings"]] == ["GA101"]


def test_clean_verdict_names_what_a_budget_left_unchecked(tmp_path):
    from gradaudit.analysis.check.problems import Problem

    write(tmp_path, "train.py", TRAIN_GA101.replace(".detach()", ""))
    audit = audit_of([str(tmp_path / "train.py")])
    assert audit.clean and audit.graphs and audit.no_defect == collect.NO_DEFECT
    from dataclasses import replace

    cut = replace(audit, problems=(Problem("incomplete", "other.py", "analysis incomplete: ...", 3, 1, 40),))
    assert cut.no_defect.startswith(collect.NO_DEFECT + " (the analysis of 1 file was cut short by a budget")


def test_classification_and_severity_follow_family_and_confidence():
    from gradaudit.analysis.model.findings import Finding
    from gradaudit.analysis.model.model import Span
    from gradaudit.analysis.report.judge import classify, rank_key, severity, why_not_lookalike

    def f(code, family, confidence="confirmed", message="m"):
        return Finding(code, "name", family, confidence, Span("t.py", 1, 0, 1, 1), message)

    assert classify(f("GA101", "graph-break")) == "confirmed graph break"
    assert classify(f("GA201", "lifecycle")) == "confirmed lifecycle defect"
    assert classify(f("GA301", "backward")) == "confirmed lifecycle defect"
    assert classify(f("GA401", "numerical")) == "confirmed numerical instability"
    assert classify(f("GA205", "lifecycle", "suspicious")) == "suspicious but unproven"
    # what the defect does decides severity: torch raising first, memory last
    found = [
        f("GA303", "backward"),
        f("GA201", "lifecycle"),
        f("GA401", "numerical"),
        f("GA101", "graph-break", message="... backward() raises"),
        f("GA205", "lifecycle", "suspicious"),
        f("GA999", "lifecycle"),
    ]
    assert [severity(x) for x in found] == ["low", "medium", "high", "critical", "medium", "medium"]
    ranked = sorted(found, key=rank_key)
    assert [x.code for x in ranked][:2] == ["GA101", "GA401"]
    assert ranked.index(found[4]) > ranked.index(found[1])  # suspicious after confirmed, same severity
    assert "conditions of GA999 held" in why_not_lookalike(found[5])
    assert "`opt`" in why_not_lookalike(f("GA101", "graph-break"), "opt")


# a training loop with two lifecycle defects (no zero_grad, the scheduler stepped first) and a
# numerical one (softmax probabilities into cross_entropy)
LIFECYCLE_AND_NUMERICS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)

for step in range(5):
    x = torch.randn(32, 8)
    y = torch.randint(0, 3, (32,))
    probs = F.softmax(model(x), dim=-1)
    loss = F.cross_entropy(probs, y)
    loss.backward()
    scheduler.step()
    optimizer.step()
"""

# log of a sigmoid output with no clamp: a numerical hazard only some batches reach
UNSAFE_LOG = """\
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(5):
    x = torch.randn(32, 8)
    y = (torch.rand(32, 1) > 0.5).float()
    optimizer.zero_grad()
    p = torch.sigmoid(model(x))
    loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    loss.backward()
    optimizer.step()
"""


def finding_blocks(md):
    """Section 2's findings: {code: the finding's block}."""
    body = section(md, SECTIONS[1])
    parts = re.split(r"^### \d+\. ", body, flags=re.M)[1:]
    return {p.split()[0]: p for p in parts}


def changed(diff):
    return [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]


def test_lifecycle_findings_in_the_report(tmp_path):
    write(tmp_path, "train.py", LIFECYCLE_AND_NUMERICS)
    code, out, _ = run_cli(["audit", "train.py"], cwd=str(tmp_path))
    assert code == 1 and h2(out) == list(SECTIONS)
    blocks = finding_blocks(out)
    assert set(blocks) == {"GA201", "GA207", "GA407"}
    ga201, ga207 = blocks["GA201"], blocks["GA207"]
    assert ga201.startswith("GA201 missing-zero-grad — confirmed lifecycle defect (medium)")
    assert "- **parameters**: `model.0.bias`, `model.0.weight`, `model.2.bias`, `model.2.weight`" in ga201
    assert "- **runtime check**: `cleared` fails" in ga201
    assert "16 |     optimizer.step()" in ga201 and "14 |     loss.backward()" in ga201
    assert "6 | optimizer = torch.optim.SGD(model.parameters(), lr=0.1)" in ga201
    assert ga207.startswith("GA207 scheduler-before-step — confirmed lifecycle defect (medium)")
    assert "- **runtime check**: torch warns that `lr_scheduler.step()` was called before" in ga207
    # each correction is that finding's own edit, applied alone to the file as it is
    corr = section(out, SECTIONS[2])
    zero = re.search(r"### Correction (\d+): GA201 at train.py:16 \(safe\)\n\n.*?```diff\n(.*?)```", corr, re.S)
    assert zero and changed(zero.group(2)) == ["+    optimizer.zero_grad()"]
    sched = re.search(r"### Correction \d+: GA207 at train.py:15 \(safe\)\n\n.*?```diff\n(.*?)```", corr, re.S)
    assert sched and changed(sched.group(1)) == ["+    optimizer.step()", "-    optimizer.step()"]
    # verification: the step's probe, and what it shows of each finding on the step
    ver = section(out, SECTIONS[3])
    assert "autograd is wired correctly" not in ver
    rank = {c: re.search(rf"^### (\d+)\. {c} ", out, re.M).group(1) for c in blocks}
    assert f"- #{rank['GA201']} GA201: `cleared` fails" in ver
    assert f"- #{rank['GA207']} GA207: torch warns" in ver
    assert f"- #{rank['GA407']} GA407: no runtime check" in ver


def test_numerical_findings_in_the_report(tmp_path):
    num = write(tmp_path, "num.py", UNSAFE_LOG)
    life = write(tmp_path, "train.py", LIFECYCLE_AND_NUMERICS)
    code, out, _ = run_cli(["audit", num, life, "--format", "json"], cwd=str(tmp_path))
    data = json.loads(out)
    with open(SCHEMA) as fh:
        jsonschema.Draft202012Validator(json.load(fh)).validate(data)
    found = data["findings"]
    # severity first: the unsafe logs (high, although suspicious) before the confirmed medium ones
    assert [f["code"] for f in found][:2] == ["GA401", "GA401"]
    assert [f["severity"] for f in found] == ["high", "high", "medium", "medium", "medium"]
    log1, log2 = found[0], found[1]
    assert log1["classification"] == "suspicious but unproven" and log1["family"] == "numerical"
    assert log1["runtime_check"] == {
        "check": "finite",
        "data_dependent": True,
        "problems": ["nonfinite-loss", "nonfinite-gradient", "nonfinite-parameter"],
        "observes": log1["runtime_check"]["observes"],
    }
    assert "a passing probe does not clear this finding" in log1["runtime_check"]["observes"]
    ga407 = next(f for f in found if f["code"] == "GA407")
    assert ga407["classification"] == "confirmed numerical instability"
    assert ga407["runtime_check"]["check"] is None and not ga407["runtime_check"]["problems"]
    # two corrections on one line: each clamps its own log, nothing broader
    diffs = [data["corrections"][f["correction"]] for f in (log1, log2)]
    assert [d["applicability"] for d in diffs] == ["unsafe", "unsafe"] and all(d["parses"] for d in diffs)
    assert "+    loss = -(y * torch.log((p).clamp_min(1e-12)) + (1 - y) * torch.log(1 - p)).mean()" in diffs[0]["diff"]
    assert "+    loss = -(y * torch.log(p) + (1 - y) * torch.log((1 - p).clamp_min(1e-12))).mean()" in diffs[1]["diff"]
    # each finding belongs to its file's step; each step lists its findings by rank
    steps = {s["id"]: os.path.basename(s["path"]) for s in data["steps"]}
    assert {steps[f["step"]] for f in found[:2]} == {"num.py"} and {steps[f["step"]] for f in found[2:]} == {"train.py"}
    by_step = {c["step"]: c["findings"] for c in data["verification"]["checks"]}
    assert sorted(r for rs in by_step.values() for r in rs) == [1, 2, 3, 4, 5]
    assert by_step[found[0]["step"]] == [1, 2]


def test_every_rule_is_ranked_explained_and_mapped_to_a_runtime_check():
    """Each rule says its own severity, look-alike explanation and runtime check (fields of RULE:
    a rule without them does not load), and the report reads them from the rule."""
    from gradaudit.analysis.report import judge, runtime
    from gradaudit.analysis.rules import RULES
    from gradaudit.analysis.rules.base import SEVERITIES

    probe_dir = os.path.join(ROOT, "analysis", "probe")
    kinds = set()
    for name in os.listdir(probe_dir):
        if name.endswith(".py"):
            with open(os.path.join(probe_dir, name)) as fh:
                kinds |= set(re.findall(r'Problem\(\s*"([\w-]+)"', fh.read()))
    for r in RULES:
        assert r.severity in SEVERITIES and r.lookalike.strip(), r.code
        f = r.finding(None, "")
        assert judge.severity(f) == r.severity and judge.why_not_lookalike(f).startswith(r.lookalike[:20]), r.code
        rc = runtime.runtime_check(f)
        assert rc is r.runtime, r.code
        assert rc.check is None or rc.check in runtime.CHECKS, r.code
        assert rc.check is not None or rc.observes.startswith("no runtime check"), r.code
        assert not rc.data_dependent or r.family == "numerical", r.code
    # every problem a check names is one the probe reports
    assert {k for ks in runtime.PROBLEMS.values() for k in ks} <= kinds


def test_folders_are_walked_as_check_walks_them(tmp_path):
    """The audit skips what .gitignore ignores, like `gradaudit check`, and takes the same flag to
    keep it (the flag was missing: the audit crashed reading the configuration)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("scratch/\n")
    (tmp_path / "scratch").mkdir()
    write(tmp_path, "scratch/train.py", LIFECYCLE_AND_NUMERICS)
    code, out, err = run_cli(["audit", "."], cwd=str(tmp_path))
    assert code == 0 and "No `backward()` was found" in out, err
    code, out, err = run_cli(["audit", ".", "--no-respect-gitignore"], cwd=str(tmp_path))
    assert code == 1 and set(finding_blocks(out)) == {"GA201", "GA207", "GA407"}, err


# ---------------------------------------------------------------- cuts in the graphs (issue 23, item 7a)


def _boxes_overlap(a, b) -> bool:
    (ax, ay, aw, ah), (bx, by, bw, bh) = a, b
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


def test_a_valid_stop_gradient_is_not_drawn_as_a_break():
    """The GAN's `fake.detach()` in the discriminator step is valid: drawn grey and explained, not
    as the red cut of a real break (text_trainer's `.detach()`, which GA101 reports)."""
    from gradaudit.analysis.report.html import render as html
    from gradaudit.analysis.report.jsonout import data

    a = audit_of([os.path.join(EXAMPLES, "gan_training.py"), os.path.join(EXAMPLES, "text_trainer.py")])
    by_loss = {g.loss: g for g in a.graphs}
    (gen,) = [m for m in by_loss["d_loss"].modules if m.name == "generator"]
    (cut,) = gen.cut
    assert cut.valid and cut.kind == "detached for another optimizer's step"
    breaks = [c for m in by_loss["loss"].modules for c in m.cut]
    assert breaks and not any(c.valid for c in breaks)
    text = G.text(by_loss["d_loss"])
    assert any("stopped by `.detach()` at line 66, a deliberate stop-gradient that is valid" in t for t in text)
    assert any("**cut** by `.detach()` at line 77" in t for t in G.text(by_loss["loss"]))
    mermaid = G.mermaid(by_loss["d_loss"])
    assert '-.-o|"stop-gradient (valid): .detach() line 66"|' in mermaid and "-.-x" not in mermaid
    assert "stroke:#c62828,stroke-width:2px,stroke-dasharray" not in mermaid
    assert '-.-x|"cut: .detach() line 77"|' in G.mermaid(by_loss["loss"])
    page = html(a)
    assert page.count('class="stop">⊣ stop-gradient (valid): .detach() l.66</text>') == 1
    assert page.count('class="cut">✂ cut: .detach() l.77</text>') == 2
    assert "⊣ grey dashed</span>: a deliberate stop-gradient, checked and valid" in page
    steps = {s["loss"]: s for s in data(a)["steps"]}
    (gen_json,) = [m for m in steps["d_loss"]["modules"] if m["name"] == "generator"]
    assert gen_json["cut"] == [{"detail": ".detach()", "path": cut.path, "line": 66, "valid": cut.valid}]
    assert cut.path.endswith("gan_training.py")


def test_cut_labels_cover_no_node():
    """A label sat on the loss node (issue 23): labels now lie beside their module, above their
    edge's straight run, in a band as wide as the widest label; none covers a node or another label."""
    from gradaudit.analysis.report import svg

    def mod(name, cuts=(), reached=True):
        return G.ModuleNode(name, 4, reached, tuple(cuts), False, False, ("opt",), ())

    many = [
        G.CutEdge(".detach()", 10 + i, "valid" if i % 2 else "", "target network" if i % 2 else "") for i in range(3)
    ]
    g = G.StepGraph(
        "s1",
        "t.py",
        40,
        "<module>",
        "a_rather_long_loss_name",
        30,
        "",
        ("x",),
        "",
        (
            mod("model.encoder", many),
            mod("model.decoder"),
            mod("short", [G.CutEdge(".item()", 12)], reached=False),
            mod("model.some_head_with_a_long_name", [G.CutEdge("torch.no_grad()", 20)]),
        ),
        (G.OptimizerNode("opt", "SGD", 5, True, ()),),
        (),
        "",
        False,
    )
    for graph in [g] + list(audit_of([os.path.join(EXAMPLES, "gan_training.py")]).graphs):
        lay = svg.layout(graph)
        nodes = [(n.x, n.y, n.w, n.h) for n in lay.nodes]
        labels = [(lb.x, lb.y, lb.w, lb.h) for lb in lay.labels]
        assert len(labels) == sum(len(m.cut) for m in graph.modules)
        for lb in labels:
            assert not any(_boxes_overlap(lb, n) for n in nodes), (lb, nodes)
            assert lb[1] >= 0 and lb[0] + lb[2] <= lay.width and lb[1] + lb[3] <= lay.height
        for i, a in enumerate(labels):
            assert not any(_boxes_overlap(a, b) for b in labels[i + 1 :])


# ---------------------------------------------------------------- counts and files in the graphs (issue 23, item 7b)

LOOP_BLOCKS = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.blocks = nn.ModuleList()
        for _ in range(n):
            self.blocks.append(Block())
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


model = Net(12)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(2, 4)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_count_that_is_a_lower_bound_says_so(tmp_path):
    """nanoGPT's 12 blocks were drawn as "8 parameters": the engine follows a loop building layers
    once, so what it counts is a lower bound, and the graph says "at least"."""
    from gradaudit.analysis.report.jsonout import data

    a = audit_of([write(tmp_path, "train.py", LOOP_BLOCKS)])
    (g,) = a.graphs
    mods = {m.name: m for m in g.modules}
    assert (mods["model.blocks"].params, mods["model.blocks"].at_least) == (2, True)
    assert (mods["model.head"].params, mods["model.head"].at_least) == (2, False)
    text = G.text(g)
    assert "- module `model.blocks` (at least 2 parameters): reached by the loss; optimized by `optimizer`" in text
    assert "- module `model.head` (2 parameters): reached by the loss; optimized by `optimizer`" in text
    assert '"model.blocks<br/>≥2 params"' in G.mermaid(g) and '"model.head<br/>2 params"' in G.mermaid(g)
    (step,) = data(a)["steps"]
    assert {m["name"]: (m["params"], m["params_at_least"]) for m in step["modules"]} == {
        "model.blocks": (2, True),
        "model.head": (2, False),
    }
    # a module held as one stand-in (its parameters unseen) has no count at all
    opaque = G.ModuleNode("model", 0, True, (), False, False, ("opt",), (), at_least=True)
    assert opaque.count() == "an unknown number of parameters" and opaque.count(short=True) == "? params"


MODEL_PY = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

    def configure_optimizers(self, lr):
        return torch.optim.AdamW(self.parameters(), lr=lr)
"""

BENCH_PY = """\
import torch
from model import Net

model = Net()
optimizer = model.configure_optimizers(1e-3)
for step in range(3):
    loss = model(torch.randn(2, 4)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_location_in_another_file_carries_its_file(tmp_path):
    """bench.py's step cited model.py's line 14 as "line 14", which reads as bench.py's."""
    from gradaudit.analysis.check.engine import Analyzer
    from gradaudit.analysis.report.jsonout import data
    from gradaudit.analysis.report.summary import hover_markdown

    write(tmp_path, "model.py", MODEL_PY)
    bench = write(tmp_path, "bench.py", BENCH_PY)
    a = audit_of([bench])
    (g,) = a.graphs
    model_py = os.path.join(str(tmp_path), "model.py")
    assert any(t.startswith("- optimizer `optimizer` (AdamW, ") and f"{model_py}:14)" in t for t in G.text(g))
    assert "- loss: `loss = model(torch.randn(2, 4)).sum()` (line 7)" in G.text(g)
    (opt,) = data(a)["steps"][0]["optimizers"]
    assert (opt["path"], opt["line"]) == (model_py, 14)
    # the editor's hover on `optimizer.step()` in bench.py, and on the construction in model.py
    r = Analyzer(extra_roots=[str(tmp_path)]).analyze_file(bench)
    on_step = hover_markdown(r.model, r.model.steps[0].span.path, 10, 6)
    assert on_step.startswith(f"**`optimizer`** (AdamW), built at {model_py}:14")
    on_build = hover_markdown(r.model, model_py, 14, 20)
    assert on_build.startswith("**`optimizer`** (AdamW), built at line 14")
