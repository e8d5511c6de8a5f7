"""Settings that exclude each other (analysis/interp/settings.py): a call under `if self.use_amp:`
and one under `if self.engine:` never run together when the constructor sets `use_amp` only where
the engine is off. Each variant below writes the trainer's constructor one way; the scaled backward
and the engine's plain step are paired (GA409, suspicious: two settings) only when some run can set
both."""

import textwrap

import pytest
from helpers import analyze

TRAINER = """
import torch
import torch.nn as nn


class Engine:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()


class Trainer:
    def __init__(self, model, fp16, engine):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.use_amp = False
        self.engine = None
{init}

    def train(self):
        for _ in range(3):
            x, y = torch.randn(4, 3), torch.randn(4, 1)
            if self.use_amp:
                with torch.autocast("cpu", dtype=torch.float16):
                    out = self.model(x)
                loss = nn.functional.mse_loss(out.float(), y)
                self.scaler.scale(loss).backward()
            else:
                loss = nn.functional.mse_loss(self.model(x), y)
                loss.backward()
            if self.engine:
                self.engine.step()
            elif self.use_amp:
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.optimizer.zero_grad()
            else:
                self.optimizer.step()
                self.optimizer.zero_grad()


def main(fp16, engine):
    Trainer(nn.Linear(3, 1), fp16, engine).train()
"""

SCALER = "self.scaler = torch.amp.GradScaler('cpu')"

EXCLUSIVE = {
    "and-not": f"""
        if engine:
            self.engine = Engine(self.optimizer)
        if fp16 and not engine:
            self.use_amp = True
            {SCALER}""",
    "or-else": f"""
        if engine:
            self.engine = Engine(self.optimizer)
        if not fp16 or engine:
            pass
        else:
            self.use_amp = True
            {SCALER}""",
    "conditional-expression": f"""
        self.engine = Engine(self.optimizer) if engine else None
        if fp16 and not engine:
            self.use_amp = True
            {SCALER}""",
    "boolean-value": f"""
        self.engine = Engine(self.optimizer) if engine else None
        self.use_amp = fp16 and not engine
        {SCALER}""",
    "early-return": f"""
        {SCALER}
        if engine:
            self.engine = Engine(self.optimizer)
            return
        self.use_amp = fp16""",
}

# name -> (constructor, confidence): with the engine always made, only `use_amp` decides (confirmed)
TOGETHER = {
    "independent": (
        f"""
        if engine:
            self.engine = Engine(self.optimizer)
        if fp16:
            self.use_amp = True
            {SCALER}""",
        "suspicious",
    ),
    "either-setting": (
        f"""
        if engine or fp16:
            self.engine = Engine(self.optimizer)
        if fp16:
            self.use_amp = True
            {SCALER}""",
        "suspicious",
    ),
    "unconditional-engine": (
        f"""
        self.engine = Engine(self.optimizer)
        self.use_amp = fp16 and not engine
        {SCALER}""",
        "confirmed",
    ),
}


def _ga409(init: str) -> list:
    source = TRAINER.format(init=textwrap.indent(textwrap.dedent(init).strip("\n"), " " * 8))
    result = analyze(source, path="trainer.py")
    assert result.error is None
    return [f for f in result.findings if f.code == "GA409"]


@pytest.mark.parametrize("name", sorted(EXCLUSIVE))
def test_settings_that_exclude_each_other_are_not_paired(name):
    assert _ga409(EXCLUSIVE[name]) == []


@pytest.mark.parametrize("name", sorted(TOGETHER))
def test_settings_one_run_can_set_both_are_paired(name):
    init, confidence = TOGETHER[name]
    found = _ga409(init)
    assert [f.confidence for f in found] == [confidence]
    assert found[0].span.line == TRAINER.splitlines().index("        self.optimizer.step()") + 1  # the engine's


def _loops_of(source: str) -> list[dict]:
    import ast

    tree = ast.parse(textwrap.dedent(source))
    return [{"node": n} for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))]


def test_a_key_of_the_loops_batch_is_tested_like_a_setting():
    # one collate function makes every batch of a loader: `"k" in batch` keeps its truth from one
    # batch to the next, so the arm that skips an assignment holds what the loop found, not the
    # previous iteration's value (aMUSEd's text embeddings, re-encoded when batches carry prompts)
    import ast

    from gradaudit.analysis.interp.statements import _item_keyed

    loops = _loops_of(
        """
        for epoch in range(3):
            for batch in loader:
                if "prompt_input_ids" in batch:
                    h = encode(batch["prompt_input_ids"])
        """
    )
    test = next(n.test for n in ast.walk(loops[0]["node"]) if isinstance(n, ast.If))
    assert _item_keyed(test, loops) == 1  # the batch loop
    assert _item_keyed(ast.parse("'k' not in batch", mode="eval").body, loops) == 1
    # not a key of a loop's item, or a batch the loop writes keys into: no setting
    assert _item_keyed(ast.parse("'k' in other", mode="eval").body, loops) is None
    assert _item_keyed(ast.parse("k in batch", mode="eval").body, loops) is None
    written = _loops_of(
        """
        for batch in loader:
            batch["k"] = 1
        """
    )
    assert _item_keyed(ast.parse("'k' in batch", mode="eval").body, written) is None
