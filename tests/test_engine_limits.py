"""The engine never goes silent: budgets, deadlines, deep nesting and broken statements are
either handled or reported with their position (issue: never crash, never hang, never go silent)."""

from __future__ import annotations

import ast
import time

import pytest
from helpers import analyze

from gradaudit.analysis.check.config import Config
from gradaudit.analysis.check.engine import Analyzer
from gradaudit.analysis.interp.budget import Budgets
from gradaudit.analysis.source.program import ParseError, decode_source, parse_source

TRAIN = """
model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    out = model(torch.randn(8, 4)).detach()
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
TRAIN_OK = TRAIN.replace(").detach()", ")")
HEAD = "import torch\nimport torch.nn as nn\n"


def codes(result):
    return sorted((f.code, f.span.line) for f in result.findings)


def line_of(source: str, text: str) -> int:
    return source.splitlines().index(text) + 1


# ------------------------------------------------------------------ budgets


def test_training_loop_after_20000_top_level_statements_is_analysed():
    # before: more than ~15,000 statements ahead of the loop used up the budget: silently no findings
    src = HEAD + "".join(f"X{i} = {i}\n" for i in range(20000)) + TRAIN
    r = analyze(src)
    assert codes(r) == [("GA101", line_of(src, "    out = model(torch.randn(8, 4)).detach()"))]
    assert r.gap is None


def test_training_loop_after_20000_top_level_statements_valid_look_alike():
    r = analyze(HEAD + "".join(f"X{i} = {i}\n" for i in range(20000)) + TRAIN_OK)
    assert codes(r) == [] and r.gap is None


def _filler_loops(n):
    body = "".join(f"    v = v + {k}\n" for k in range(60))
    return "v = 0\n" + "".join(f"for i in range(2):\n{body}" for _ in range(n))


def test_filler_loops_do_not_starve_the_training_loop_and_what_they_cut_is_reported():
    # more filler than the script budget (each loop's 60 statements run once: no training in them)
    src = HEAD + _filler_loops(Budgets().script // 60 + 100) + TRAIN
    r = analyze(src)
    # the training loop runs from the reserve kept for loops with training code in them
    assert [c for c, _ in codes(r)] == ["GA101"]
    # the filler loops the budget cut are not silent
    assert r.gap is not None and r.gap.count > 1000
    assert r.gap.first.line > 3 and "budget" in r.gap.reason
    assert r.model.incomplete and r.model.not_reached == r.gap.first
    assert r.gap.message().startswith("analysis incomplete: ") and "statements not reached)" in r.gap.message()


# an evaluation pass under no_grad whose loop carries a total: 33 statements per run of its body
EVALUATED_FIRST = """\
import torch
import torch.nn as nn


@torch.no_grad()
def evaluate(model, batches):
    model.eval()
    total = 0.0
    for x in batches:
        out = model(x)
        total = total + x.sum().item() * 0
        total = total + x.sum().item() * 1
        total = total + x.sum().item() * 2
        total = total + x.sum().item() * 3
        total = total + x.sum().item() * 4
        total = total + x.sum().item() * 5
        total = total + x.sum().item() * 6
        total = total + x.sum().item() * 7
        total = total + x.sum().item() * 8
        total = total + x.sum().item() * 9
        total = total + x.sum().item() * 10
        total = total + x.sum().item() * 11
        total = total + x.sum().item() * 12
        total = total + x.sum().item() * 13
        total = total + x.sum().item() * 14
        total = total + x.sum().item() * 15
        total = total + x.sum().item() * 16
        total = total + x.sum().item() * 17
        total = total + x.sum().item() * 18
        total = total + x.sum().item() * 19
        total = total + x.sum().item() * 20
        total = total + x.sum().item() * 21
        total = total + x.sum().item() * 22
        total = total + x.sum().item() * 23
        total = total + x.sum().item() * 24
        total = total + x.sum().item() * 25
        total = total + x.sum().item() * 26
        total = total + x.sum().item() * 27
        total = total + x.sum().item() * 28
        total = total + x.sum().item() * 29
    model.train()
    return total


model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [torch.randn(8, 4)]
evaluate(model, batches)
for x in batches:
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
"""


def test_an_evaluation_loop_runs_once_and_leaves_the_budget_to_training():
    """A loop run with grad mode off and no training call in it builds no graph, so no iteration
    hands one to the next: it runs once, not twice, and the budget it leaves reaches the training
    loop (before: the evaluation's second run spent it, and the training step was not understood)."""
    r = Analyzer(Config(budgets=Budgets(statements=45, loop_reserve=0))).analyze_source("e.py", EVALUATED_FIRST)
    assert r.gap is None and r.error is None
    assert [s.understood for s in r.model.steps] == [True]


def test_a_lambda_cut_by_the_budget_is_reported_not_a_crash():
    # a lambda's body is one expression, not a list of statements: the gap report used to raise
    # TypeError on it (open_clip's training main.py)
    src = HEAD + "scale = lambda x: x * 2\n" + _filler_loops(Budgets().script // 60 + 100) + "y = scale(3)\n" + TRAIN
    r = analyze(src)
    assert r.error is None
    assert [c for c, _ in codes(r)] == ["GA101"]
    assert r.gap is not None and "budget" in r.gap.reason


def test_few_filler_loops_leave_no_gap():
    r = analyze(HEAD + _filler_loops(20) + TRAIN)
    assert [c for c, _ in codes(r)] == ["GA101"] and r.gap is None


def test_time_budget_stops_the_analysis_and_says_where():
    # 20,000 top-level loops: each joins the whole module's names, slow on purpose
    src = HEAD + "".join(f"for i{k} in range(2):\n    v{k} = i{k}\n" for k in range(20000)) + TRAIN
    started = time.monotonic()
    r = Analyzer(time_budget=0.5).analyze_source("big.py", src)
    elapsed = time.monotonic() - started
    assert r.gap is not None and "time budget of 0.5 s" in r.gap.reason
    assert r.gap.first is not None and r.gap.first.line > 2 and r.gap.count > 1000
    assert elapsed < 15, elapsed  # bounded (parsing and the report come on top of the budget)


def test_no_time_budget_and_short_file_no_gap():
    r = Analyzer(time_budget=30).analyze_source("t.py", HEAD + TRAIN)
    assert [c for c, _ in codes(r)] == ["GA101"] and r.gap is None


# ------------------------------------------------------------------ depth

DEEP = {
    "not": "flag = " + "not " * 2000 + "True\n",
    "subscript": "x = [[0]]\ny = x" + "[0]" * 2000 + "\n",
    "add": "a = 1\nz = " + "+".join(["a"] * 2000) + "\n",
}


@pytest.mark.parametrize("kind", sorted(DEEP))
def test_deep_valid_python_is_skipped_with_its_position_and_the_rest_analysed(kind):
    src = HEAD + DEEP[kind] + TRAIN
    deep_line = 3 if kind == "not" else 4
    r = analyze(src)  # before: RecursionError ("internal error ... recursion too deep")
    assert r.error is None
    assert [c for c, _ in codes(r)] == ["GA101"]
    assert r.gap is not None and r.gap.first.line == deep_line
    assert "nested more than 100 levels deep" in r.gap.reason


def test_moderately_nested_expression_is_followed_without_a_gap():
    src = HEAD + "flag = " + "not " * 60 + "True\n" + TRAIN
    r = analyze(src)
    assert [c for c, _ in codes(r)] == ["GA101"] and r.gap is None


def test_deep_expression_in_the_loss_gives_no_confirmed_claim_about_it():
    # the cut expression is unknown: it may carry gradient from the model, so no GA101
    deep = "(" * 0 + " + ".join(["out"] * 1500)
    src = HEAD + TRAIN.replace("    loss = out.pow(2).mean()", f"    loss = ({deep} + model(torch.randn(8, 4))).sum()")
    r = analyze(src)
    assert r.error is None
    assert not any(c == "GA101" for c, _ in codes(r))


def test_parser_depth_limit_is_a_parse_error_at_its_statement_and_the_rest_is_analysed():
    # ast.parse itself gives up ("recursion ... during ast construction" / "too complex")
    deep = "z = " + "+".join(["a"] * 100000) + "\n"
    src = HEAD + deep + TRAIN
    r = analyze(src)
    assert r.error is None
    assert [c for c, _ in codes(r)] == ["GA101"]
    try:
        ast.parse(deep)
    except (RecursionError, MemoryError):  # Python 3.11+ gives up on it
        assert [(e.line, e.msg) for e in r.broken] == [(3, "too deeply nested for Python's parser")]
    else:  # 3.10 parses it: the engine cuts it instead
        assert r.broken == () and r.gap is not None and r.gap.first.line == 3


# ------------------------------------------------------------------ broken statements

BROKEN_HELPER = (
    """import torch
import torch.nn as nn


def helper(x):
    y = (x +
    return y


"""
    + TRAIN
)


def test_syntax_error_in_one_function_still_gives_findings_for_the_rest():
    r = analyze(BROKEN_HELPER)
    assert r.error is None
    assert [c for c, _ in codes(r)] == ["GA101"]
    assert len(r.broken) == 1
    e = r.broken[0]
    assert e.line == 6 and e.region == (5, 7)  # Python's own error, the function left out
    assert "never closed" in e.msg


HALF_TYPED = """import torch
import torch.nn as nn

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def train(batches):
    for x in batches:
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        running =
    return loss


loss = torch.zeros(())
train([torch.randn(8, 4)])
"""


def test_a_half_typed_line_in_a_loop_leaves_out_that_line_only():
    # the loop's missing zero_grad() is still found while `running =` is being typed
    r = analyze(HALF_TYPED)
    assert r.error is None
    assert [c for c, _ in codes(r)] == ["GA201"]
    assert [(e.line, e.region) for e in r.broken] == [(13, (13, 13))]


def test_a_half_typed_assignment_keeps_its_name_local():
    # `loss =` half typed: `loss` stays the function's own, never the module's `loss` below
    source = HALF_TYPED.replace("        loss = model(x).pow(2).mean()\n", "        loss =\n").replace(
        "        running =\n", "        opt.zero_grad()\n"
    )
    r = analyze(source)
    assert r.error is None
    assert [e.region for e in r.broken] == [(10, 10)]
    assert all(f.code != "GA301" and f.confidence != "confirmed" for f in r.findings)


def test_syntax_error_only_valid_look_alike():
    r = analyze(BROKEN_HELPER.replace(").detach()", ")"))
    assert codes(r) == [] and len(r.broken) == 1


def test_two_broken_functions_two_errors():
    src = BROKEN_HELPER + "\n\ndef other(:\n    pass\n"
    r = analyze(src)
    assert [c for c, _ in codes(r)] == ["GA101"]
    other = src.splitlines().index("def other(:") + 1
    assert [e.region for e in r.broken] == [(5, 7), (other, other + 1)]


def test_broken_training_loop_is_left_out_and_reported():
    src = HEAD + TRAIN.replace("    opt.step()", "    opt.step(")
    r = analyze(src)
    assert r.error is None and codes(r) == []
    assert len(r.broken) == 1 and r.broken[0].region[0] == line_of(src, "for _ in range(3):")


def test_unterminated_string_and_unclosed_bracket():
    src = "def f(:\n  pass\n'''\nabc\nfoo(\n"
    sf = parse_source("x.py", src)
    # Python's first error is the string (line 3); the statement holding it starts at line 1
    assert [(b.line, b.region) for b in sf.broken] == [(3, (1, 3)), (5, (5, 5))]
    assert all(b.region is not None for b in sf.broken)


def test_nothing_parses_is_a_parse_error():
    with pytest.raises(ParseError):
        parse_source("x.py", "(((\n")


# ------------------------------------------------------------------ bytes


def test_nul_byte_is_reported_at_its_line():
    src = HEAD + "a = 1\nb = 'x\x00y'\n" + TRAIN
    r = analyze(src)
    assert [(e.line, e.col) for e in r.broken] == [(4, 7)]  # before: 1:1
    assert "null bytes" in r.broken[0].msg
    assert [c for c, _ in codes(r)] == ["GA101"]


def test_latin1_without_cookie_is_refused_like_python_refuses_it():
    data = b"import torch\nx = 1\nname = 'caf\xe9'\n"
    with pytest.raises(ParseError) as info:
        decode_source("x.py", data)
    assert (info.value.line, info.value.col) == (3, 12)
    assert "Non-UTF-8 code starting with '\\xe9' on line 3" in info.value.msg
    with pytest.raises(SyntaxError):
        compile(data, "x.py", "exec")  # what Python itself says about it


def test_latin1_with_cookie_is_read():
    data = b"# -*- coding: latin-1 -*-\nname = 'caf\xe9'\n"
    text, encoding = decode_source("x.py", data)
    assert "café" in text and encoding == "iso-8859-1"


def test_unknown_encoding_cookie_is_refused():
    with pytest.raises(ParseError) as info:
        decode_source("x.py", b"# coding: no-such-codec\nx = 1\n")
    assert info.value.line == 1


def test_many_broken_statements_and_a_docstring_between_them():
    # found by the fuzz tests: 200 broken statements (their open brackets add up to "too many
    # nested parentheses" far away), then a module docstring whose lines start at column 0
    doc = '"""A module docstring.\n\nIts lines start at column 0; they are not statements.\n"""\n'
    for n in (3, 200):
        src = "".join(f"def f{k}(:\n    pass\n" for k in range(n)) + doc + HEAD + TRAIN
        r = analyze(src)
        assert len(r.broken) == n, [(e.line, e.msg) for e in r.broken][:5]
        assert [c for c, _ in codes(r)] == ["GA101"]


def test_a_decorated_broken_function_is_one_region():
    r = analyze(HEAD + "@decorator\ndef f(:\n    pass\n" + TRAIN)
    assert [e.region for e in r.broken] == [(3, 5)]
    assert [c for c, _ in codes(r)] == ["GA101"]


def test_a_string_being_typed_leaves_the_code_after_it_analysed():
    src = HEAD + 'NOTE = """started, not closed yet\n' + TRAIN
    r = analyze(src)
    assert [c for c, _ in codes(r)] == ["GA101"]
    assert [e.region for e in r.broken] == [(3, 3)]


def test_a_bom_left_in_the_text_is_ignored():
    r = analyze("\ufeff" + HEAD + TRAIN)
    assert r.broken == () and [c for c, _ in codes(r)] == ["GA101"]


def test_recovery_is_bounded_on_a_big_file_full_of_errors():
    filler = "".join(f"V{k} = {k}\n" for k in range(20000))
    src = "".join(f"def f{k}(:\n    pass\n" for k in range(300)) + filler + HEAD + TRAIN
    started = time.monotonic()
    r = analyze(src)
    assert time.monotonic() - started < 30  # rounds stop after a second, then one pass
    assert len(r.broken) == 300 and [c for c, _ in codes(r)] == ["GA101"]


# ------------------------------------------------------------------ joined writes

JOINED_WRITES = """
import torch
import torch.nn as nn
from unseen_blocks import make_block

model = nn.Sequential(*[make_block(i) for i in range(40)])
for m in model.modules():
    if hasattr(m, "prepare"):
        m.original_dtype = m.weight.dtype
        m.alias = m.weight
"""


def test_a_write_through_every_module_registers_a_bounded_number_of_candidates(monkeypatch):
    # `for m in model.modules(): m.a = m.weight`: m stands for every module at once, and so does the
    # value; registering each candidate on each module made n * n children (open_clip's int8
    # conversion: 1,300 modules, 27 s). A tensor's metadata is no submodule at all.
    from gradaudit.analysis.interp.objects import ModuleObj

    made: list[str] = []
    real = ModuleObj.register
    monkeypatch.setattr(ModuleObj, "register", lambda self, k, x: made.append(k) or real(self, k, x))
    analyze(JOINED_WRITES)
    assert not [k for k in made if k.startswith("original_dtype")]
    per_module: dict[str, int] = {}
    for k in made:
        if k.startswith("alias"):
            per_module[k] = per_module.get(k, 0) + 1
    assert made.count("alias") >= 1 and len(per_module) <= 16


def _trainer(init_statements: int) -> str:
    """A class checked on its own (nothing in the file makes it) whose __init__ does a lot of work
    before a method that feeds softmax probabilities to cross_entropy (PyCIL's BiC, GA407)."""
    work = "".join(f"        self.a{k} = {k}\n" for k in range(init_statements))
    return (
        "import torch\nimport torch.nn.functional as F\n\n\nclass Trainer:\n"
        "    def __init__(self, network):\n        self.network = network\n" + work + "\n"
        "    def bias_correction(self, inputs, targets):\n"
        "        logits = self.network(inputs)\n"
        "        loss = F.cross_entropy(torch.softmax(logits, dim=1), targets)\n"
        "        loss.backward()\n"
    )


def test_an_objects_construction_is_not_charged_to_the_method_checked_on_it():
    # the construction ran within the method's own function budget: the more of a network's
    # __init__ the init budget let run, the less of the method was reached
    budgets = Budgets(init=10000, function=2000)
    r = Analyzer(Config(budgets=budgets)).analyze_source("t.py", _trainer(2500))
    assert [(f.span.line, f.code) for f in r.findings] == [(2511, "GA407")]


# ------------------------------------------------------------------ growth across calls

# A method called under a condition that rebuilds its containers on `self` (PyG's
# GraphMaskExplainer._set_masks, called for each explained node): each earlier call's list and
# ModuleList stayed a candidate of the attribute, every append or extend went to all of them, and
# they grew with each call (19,000 layers in one ModuleList, 18 s for one file).
REBUILT = (
    HEAD
    + """
class Explainer(nn.Module):
    def __init__(self):
        super().__init__()
        self.gates = nn.ModuleList()

    def set_masks(self, dims):
        self.gates = nn.ModuleList()
        for d in dims:
            self.parts = []
            self.parts.append(nn.Linear(d, d))
            self.parts.append(nn.LayerNorm(d))
            self.blocks = nn.ModuleList(self.parts)
            self.gates.extend([self.blocks, nn.ReLU()])


explainer = Explainer()
"""
)


def _largest_container(monkeypatch, calls: int) -> int:
    from gradaudit.analysis.interp.objects import ModuleObj

    largest = [0]
    register = ModuleObj.register

    def counting(self, key, child):
        old = register(self, key, child)
        largest[0] = max(largest[0], len(self.children))
        return old

    monkeypatch.setattr(ModuleObj, "register", counting)
    analyze(REBUILT + "".join(f"if flag{i}:\n    explainer.set_masks(dims)\n" for i in range(calls)))
    return largest[0]


def test_containers_rebuilt_by_each_call_do_not_accumulate_earlier_calls(monkeypatch):
    # the engine used to hold 20 layers after 2 calls, 156 after 6 and 600 after 12; what is left
    # is the attribute's value before the first call, kept by each call's conditional store
    sizes = [_largest_container(monkeypatch, n) for n in (2, 6, 12)]
    assert sizes[2] <= 4 * 12 and sizes[2] - sizes[1] <= 4 * 6, sizes
