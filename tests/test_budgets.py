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
