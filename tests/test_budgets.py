"""Every budget of the analysis is a setting: a `[tool.gradaudit]` key, a flag of `check`, `audit`
and `probe`, an editor setting; carried to the interpreter as one value (`Budgets`); when one runs
out, the advice names the flag (or the setting) that raises it."""

from __future__ import annotations

from dataclasses import fields

import pytest
from clitools import run_main, write

from gradaudit.analysis.check.budgets import SETTINGS, budgets_from, setting
from gradaudit.analysis.check.config import table_config
from gradaudit.analysis.interp.budget import Budgets

PLAIN = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(8, 4)]:
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
"""

# a helper spends statements before the training loop
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


def test_every_budget_is_a_setting_with_a_flag():
    assert {s.name for s in SETTINGS} == {f.name for f in fields(Budgets)}
    assert setting("time").flag == "--time-budget"
    assert setting("script").flag == "--script-budget" and setting("script").editor == "scriptBudget"
    assert budgets_from({"statement-budget": 7, "callDepth": 3}) == Budgets(statements=7, call_depth=3)


def test_budget_keys_in_the_configuration(tmp_path):
    cfg, problems = table_config({"statement-budget": 20000, "script-budget": 100, "time-budget": 5}, str(tmp_path))
    assert problems == [] and cfg.budgets.statements == 20000 and cfg.budgets.script == 100
    assert cfg.time_budget == 5.0
    cfg, problems = table_config({"statement-budget": -1}, str(tmp_path))
    assert [p.key for p in problems] == ["statement-budget"] and cfg.budgets == Budgets()


def test_a_negative_budget_flag_is_a_usage_error(tmp_path, capsys, monkeypatch):
    write(tmp_path / "t.py", PLAIN)
    code, _, err = run_main(["check", "t.py", "--script-budget", "-1"], tmp_path, capsys, monkeypatch)
    assert code == 2 and "expected a whole number >= 0" in err


@pytest.mark.parametrize("editor", [False, True])
def test_the_editor_advice_names_its_setting(editor):
    from gradaudit.analysis.check.budgets import advice
    from gradaudit.analysis.interp.budget import Gap

    gap = Gap("the budget of 3 statements followed ran out", None, 4, budget="statements")
    expected = (
        "raise it with the `statementBudget` setting or `statement-budget` in [tool.gradaudit]"
        if editor
        else "raise it with `--statement-budget`"
    )
    assert advice(gap, editor=editor) == expected


def test_editor_budget_settings_reach_the_engine(tmp_path):
    from gradaudit.server.settings import Settings

    settings, problems = Settings.from_client({"gradaudit": {"statementBudget": 3, "scriptBudget": -2}})
    assert [p.key for p in problems] == ["scriptBudget"]
    cfg, _ = settings.engine_config(str(tmp_path / "t.py"))
    assert cfg.budgets == Budgets(statements=3)
    settings, _ = Settings.from_client({"gradaudit": {"loopReserve": 0}}, base=settings)
    cfg, _ = settings.engine_config(str(tmp_path / "t.py"))
    assert cfg.budgets == Budgets(statements=3, loop_reserve=0)


def test_the_warning_names_the_budget_that_ran_out_and_its_flag(tmp_path, capsys, monkeypatch):
    write(tmp_path / "t.py", BUDGETED)
    code, _, err = run_main(
        ["check", "t.py", "--statement-budget", "3", "--loop-reserve", "0"], tmp_path, capsys, monkeypatch
    )
    assert code == 0
    assert err == (
        "t.py:16:5: warning: analysis incomplete: the budget of 3 statements followed ran out (4 statements not "
        "reached); raise it with `--statement-budget`\n"
    )
    # the same from [tool.gradaudit]; the flag wins over it
    write(tmp_path / "pyproject.toml", "[tool.gradaudit]\nstatement-budget = 3\nloop-reserve = 0\n")
    _, _, err = run_main(["check", "t.py"], tmp_path, capsys, monkeypatch)
    assert "raise it with `--statement-budget`" in err
    _, _, err = run_main(["check", "t.py", "--statement-budget", "15000"], tmp_path, capsys, monkeypatch)
    assert err == ""


# D's step freezes G with a helper, G's step unfreezes it after filler that spends the budget
UNFROZEN_LATER = """\
import torch
import torch.nn as nn


def set_requires_grad(model, flag):
    for p in model.parameters():
        p.requires_grad = flag


def busy(n):
    total = n
    total = total + 0
    total = total + 1
    total = total + 2
    total = total + 3
    total = total + 4
    total = total + 5
    total = total + 6
    total = total + 7
    total = total + 8
    total = total + 9
    total = total + 10
    total = total + 11
    total = total + 12
    total = total + 13
    total = total + 14
    total = total + 15
    total = total + 16
    total = total + 17
    total = total + 18
    total = total + 19
    total = total + 20
    total = total + 21
    total = total + 22
    total = total + 23
    total = total + 24
    total = total + 25
    total = total + 26
    total = total + 27
    total = total + 28
    total = total + 29
    return total


G = nn.Linear(4, 4)
D = nn.Linear(4, 1)
g_opt = torch.optim.Adam(G.parameters())
d_opt = torch.optim.Adam(D.parameters())
for x in [torch.randn(8, 4)]:
    set_requires_grad(G, False)
    d_loss = D(G(x)).mean()
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()
    busy(40)
    set_requires_grad(G, True)  # UNFREEZE
    g_loss = -D(G(x)).mean()
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()
"""


def test_a_call_the_budget_cut_is_no_evidence_of_absence(tmp_path, capsys, monkeypatch):
    """With the budget spent before `set_requires_grad(G, True)`, that call is not followed; what it
    was given (G) is then unknown, and "frozen and never unfrozen" is not reported, not even as
    suspicious: the engine knows it did not look (it was, as a false alarm on stylegan2's train.py)."""
    write(tmp_path / "t.py", UNFROZEN_LATER)
    small = ["--script-budget", "30", "--loop-reserve", "0"]
    for flags in ([], small):
        code, out, err = run_main(["check", "t.py", *flags], tmp_path, capsys, monkeypatch)
        assert code == 0 and "GA107" not in out, (flags, out)
    # every statement ran at least once (the helper froze G earlier), yet the output says the
    # analysis is incomplete, and where: the call it did not follow
    line = UNFROZEN_LATER.splitlines().index("    set_requires_grad(G, True)  # UNFREEZE") + 1
    assert err == (
        f"t.py:{line}:5: warning: analysis incomplete: the budget of 30 statements for the script's own run ran "
        "out (1 call not followed); raise it with `--script-budget`\n"
    )
    # the same script without the unfreeze: GA107, confirmed, whether or not the filler was cut
    write(tmp_path / "t.py", "\n".join(ln for ln in UNFROZEN_LATER.splitlines() if "UNFREEZE" not in ln) + "\n")
    for flags in ([], small):
        code, out, _ = run_main(["check", "t.py", *flags], tmp_path, capsys, monkeypatch)
        assert code == 1 and "GA107 [confirmed]" in out, (flags, out)


# the unfreeze is a loop of the iteration itself, cut by the statement budget (and a name the loop
# carries, so that it runs twice)
UNFROZEN_INLINE = UNFROZEN_LATER.replace(
    "    set_requires_grad(G, True)  # UNFREEZE\n", "    for p in G.parameters():\n        p.requires_grad = True\n"
).replace("for x in [torch.randn(8, 4)]:\n", "step = 0\nfor x in [torch.randn(8, 4)]:\n    step = step + 1\n")


def test_a_claim_about_the_rest_of_the_run_is_not_confirmed_when_a_budget_cut_it(tmp_path, capsys, monkeypatch):
    """The statement budget cuts the loop that unfreezes G: the engine cannot tell that loop from
    no unfreeze at all, so "never unfrozen" is at most suspicious, and says the analysis stopped early
    (before: confirmed, a false alarm the incomplete-analysis warning did not excuse)."""
    write(tmp_path / "t.py", UNFROZEN_INLINE)
    code, out, err = run_main(
        ["check", "t.py", "--statement-budget", "30", "--loop-reserve", "0"], tmp_path, capsys, monkeypatch
    )
    assert "analysis incomplete" in err
    assert "GA107 [suspicious]" in out and "not proven: the analysis stopped early" in out
    code, out, err = run_main(["check", "t.py"], tmp_path, capsys, monkeypatch)
    assert code == 0 and err == "" and "GA107" not in out


ACCUMULATING = """\
import torch
import torch.nn as nn


def log_metrics(values):
    total = 0.0
    for v in values:
        total += v
    return total


def train(model, optimizer, loader):
    iter_num = 0
    for x in loader:
        iter_num += 1
        is_accumulating = iter_num % 4 != 0
        loss = model(x).sum() / 4
        loss.backward()
        if not is_accumulating:
            optimizer.step()
            optimizer.zero_grad()
        log_metrics([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])


model = nn.Linear(4, 2)
train(model, torch.optim.SGD(model.parameters(), lr=0.1), [torch.randn(8, 4) for _ in range(8)])
"""


def test_a_step_behind_a_counter_is_seen_when_one_iteration_is_all_the_budget_pays(tmp_path, capsys, monkeypatch):
    """The first iteration's `iter_num` is 1, so `not is_accumulating` is False there; with no budget
    for a second run (litgpt's fit loop), the step looked unreachable: a false confirmed GA204. A
    test that reads what the loop changes, guarding a lifecycle call, takes both arms."""
    write(tmp_path / "t.py", ACCUMULATING)
    for flags in ([], ["--script-budget", "30", "--loop-reserve", "0"]):
        code, out, _ = run_main(["check", "t.py", *flags], tmp_path, capsys, monkeypatch)
        assert code == 0 and "GA204" not in out, (flags, out)
