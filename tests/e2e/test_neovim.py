"""Headless Neovim 0.7 (Debian's package) as a real LSP client: diagnostics, then a quick fix
applied through vim.lsp.buf.code_action(), then the diagnostic gone."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from helpers import strip_markers

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data")
NVIM = shutil.which("nvim")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(NVIM is None, reason="neovim is not installed (apt-get install neovim)"),
]


def run_nvim(tmp_path, name, source, code):
    target = tmp_path / name
    target.write_text(source)
    out = tmp_path / "result.json"
    env = dict(
        os.environ,
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        GRADAUDIT_E2E_OUT=str(out),
        GRADAUDIT_E2E_SERVER=f"{sys.executable} -m gradaudit.server",
        GRADAUDIT_E2E_CODE=code,
    )
    p = subprocess.run(
        [NVIM, "--headless", "-n", "-i", "NONE", "-u", os.path.join(HERE, "init.lua"), str(target)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.exists(), f"neovim wrote no result (exit {p.returncode}): {p.stderr[-2000:]}"
    return p.returncode, json.loads(out.read_text()), target


def test_quick_fix_in_neovim(tmp_path):
    source = strip_markers(open(os.path.join(DATA, "bugs", "relu_inplace_sigmoid.py")).read())[0]
    code, result, _ = run_nvim(tmp_path, "train.py", source, "GA110")
    assert result.get("error") is None, result
    assert [(d["code"], d["lnum"], d["col"]) for d in result["initial"]] == [("GA110", 15, 8)]
    assert result["initial"][0]["source"] == "gradaudit"
    assert result["initial"][0]["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert result["chosen"] == "Use `clamp` out of place (GA110)"
    assert "        g = g.clamp(0.05, 0.95)" in result["lines"]
    assert result["final"] == [] and result["ok"] is True and code == 0


def test_module_list_fix_in_neovim(tmp_path):
    source = """import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.hidden = [nn.Linear(8, 8) for _ in range(2)]
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        x = torch.relu(self.inp(x))
        for layer in self.hidden:
            x = torch.relu(layer(x))
        return self.out(x)


model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = model(torch.randn(3, 4)).pow(2).mean()
loss.backward()
opt.step()
"""
    code, result, _ = run_nvim(tmp_path, "mlp.py", source, "GA109")
    assert result.get("error") is None, result
    assert [(d["code"], d["lnum"]) for d in result["initial"]] == [("GA109", 8)]
    assert "        self.hidden = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])" in result["lines"]
    assert result["ok"] is True and code == 0
