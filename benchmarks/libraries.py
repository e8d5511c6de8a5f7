"""What library models cost: a transformers fine-tuning script checked with the library's source
read from the environment, cold and warm cache; the language server's first diagnostics on it;
jedi's share; the cache's size; and a script importing no library, which must not pay anything.

    python benchmarks/libraries.py [--repeat N] [--json OUT]

Needs transformers (and torch) installed in the interpreter running it: the `test` extra.
Each cold run uses a fresh, empty cache folder (GRADAUDIT_CACHE_DIR); warm runs reuse the folder
the previous run filled. Whole processes, best of --repeat; CPU time (user+sys of the child) is
printed beside the wall time, since a busy machine inflates wall time.
Targets: warm <= 0.3 s, cold <= 3 s (whole process); no-library check as fast as before (jedi not
imported, no site index read).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from common import engine_stamp

FINETUNE = """import torch
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup

config = BertConfig(vocab_size=30522, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                    intermediate_size=1024, num_labels=3)
model = BertForSequenceClassification(config)
tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
no_decay = ["bias", "LayerNorm.weight"]
groups = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
optimizer = torch.optim.AdamW(groups, lr=2e-5)
scheduler = get_linear_schedule_with_warmup(optimizer, 100, 1000)


def train(loader: DataLoader, epochs: int = 3):
    model.train()
    for epoch in range(epochs):
        for batch in loader:
            out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                        labels=batch["labels"])
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()


@torch.no_grad()
def evaluate(loader: DataLoader):
    model.eval()
    correct = 0
    for batch in loader:
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        correct += (logits.argmax(-1) == batch["labels"]).sum().item()
    return correct
"""

PLAIN = """import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(100):
    x, y = torch.randn(32, 16), torch.randint(0, 4, (32,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def run(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p


def best(rows):
    return min(r[0] for r in rows), min(r[1] for r in rows)


def in_process(path: str, cache_dir: str) -> dict:
    """One analysis in this process, for the split: resolve / summarise / jedi, and modules loaded."""
    os.environ["GRADAUDIT_CACHE_DIR"] = cache_dir
    from gradaudit.analysis.check.engine import Analyzer
    from gradaudit.analysis.libraries import jedi_resolver

    a = Analyzer(python=sys.executable)
    t0 = time.perf_counter()
    r = a.analyze_file(path)
    total = time.perf_counter() - t0
    libs = a.libraries
    return {
        "total_s": round(total, 3),
        **{k + "_s": round(v, 3) for k, v in libs.timings.items()},
        "jedi_calls": jedi_resolver.stats["calls"],
        "jedi_imported": "jedi" in sys.modules,
        "cache_hits": libs.cache.hits,
        "cache_misses": libs.cache.misses,
        "findings": [f"{f.code}@{f.span.line}" for f in r.findings],
    }


async def first_diagnostics(path: str, text: str, cache_dir: str) -> float:
    from lsprotocol import types
    from pytest_lsp import client_capabilities
    from pytest_lsp.client import make_test_lsp_client

    os.environ["GRADAUDIT_CACHE_DIR"] = cache_dir
    client = make_test_lsp_client()
    got = asyncio.get_running_loop().create_future()

    def on_publish(params):
        if not got.done():
            got.set_result(time.perf_counter())

    client.protocol.fm._features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
    await client.start_io(sys.executable, "-m", "gradaudit.server")
    root = os.path.dirname(path)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim@v0.7.0"),
            root_uri=f"file://{root}",
            initialization_options={"gradaudit": {"debounce": 0}, "interpreter": sys.executable},
        )
    )
    sent = time.perf_counter()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=f"file://{path}", language_id="python", version=1, text=text)
        )
    )
    arrived = await asyncio.wait_for(got, 120)
    await client.shutdown_session()
    await client.stop()
    return arrived - sent


def size(folder: str) -> tuple[int, int]:
    total = files = 0
    for root, _, names in os.walk(folder):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
            files += 1
    return total, files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gradaudit-lib-bench-")
    finetune = os.path.join(work, "finetune.py")
    plain = os.path.join(work, "plain.py")
    with open(finetune, "w") as fh:
        fh.write(FINETUNE)
    with open(plain, "w") as fh:
        fh.write(PLAIN)
    exe = [sys.executable, "-m", "gradaudit.analysis.app.cli", "check", "--no-progress"]
    base_env = dict(os.environ)
    base_env.pop("VIRTUAL_ENV", None)
    base_env.pop("CONDA_PREFIX", None)
    print(f"engine {engine_stamp()}  load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs  python {sys.executable}")
    out: dict = {"engine": engine_stamp(), "load": os.getloadavg()[0]}

    cold, warm = [], []
    for i in range(args.repeat):
        cache = os.path.join(work, f"cache{i}")
        env = dict(base_env, GRADAUDIT_CACHE_DIR=cache)
        cold.append(run(exe + [finetune], env))
        warm.append(run(exe + [finetune], env))
    cache_bytes, cache_files = size(os.path.join(work, "cache0"))
    no_cache = [
        run(exe + ["--no-cache", finetune], dict(base_env, GRADAUDIT_CACHE_DIR=os.path.join(work, "x")))
        for _ in range(args.repeat)
    ]
    plain_rows = [
        run(exe + [plain], dict(base_env, GRADAUDIT_CACHE_DIR=os.path.join(work, "p"))) for _ in range(args.repeat + 1)
    ][1:]
    start = [
        run([sys.executable, "-c", "import gradaudit.analysis.app.cli, gradaudit.analysis.check.engine"], base_env)
        for _ in range(args.repeat)
    ]
    for name, rows in (
        ("cold cache", cold),
        ("warm cache", warm),
        ("--no-cache", no_cache),
        ("no library imported", plain_rows),
        ("python + gradaudit imports", start),
    ):
        w, c = best(rows)
        out[name] = {"wall_s": round(w, 3), "cpu_s": round(c, 3)}
        print(f"{name:<28} wall {w:6.3f} s   cpu {c:6.3f} s")
    print(cold[0][2].stdout.strip().splitlines()[-1] if cold[0][2].stdout.strip() else cold[0][2].stderr[-300:])
    out["cache"] = {"bytes": cache_bytes, "files": cache_files}
    print(f"cache on disk after one script: {cache_bytes / 1024:.1f} KiB in {cache_files} files")

    # in-process splits: cold and warm
    split_cache = os.path.join(work, "split")
    code = "import json, sys; sys.path.insert(0, %r); import libraries as L; print(json.dumps(L.in_process(%r, %r)))"
    here = os.path.dirname(os.path.abspath(__file__))
    for label in ("cold", "warm"):
        p = subprocess.run(
            [sys.executable, "-c", code % (here, finetune, split_cache)],
            env=base_env,
            capture_output=True,
            text=True,
        )
        d = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {"error": p.stderr[-500:]}
        out[f"split_{label}"] = d
        print(f"in process, {label}: {d}")
    p = subprocess.run(
        [sys.executable, "-c", code % (here, plain, split_cache)],
        env=base_env,
        capture_output=True,
        text=True,
    )
    d = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {"error": p.stderr[-500:]}
    out["split_no_library"] = d
    print(f"in process, no library: {d}")

    try:
        lsp_cold = asyncio.run(first_diagnostics(finetune, FINETUNE, os.path.join(work, "lsp")))
        lsp_warm = asyncio.run(first_diagnostics(finetune, FINETUNE, os.path.join(work, "lsp")))
        out["server_first_diagnostics"] = {"cold_s": round(lsp_cold, 3), "warm_s": round(lsp_warm, 3)}
        print(f"server, open -> first diagnostics: cold cache {lsp_cold:.3f} s, warm cache {lsp_warm:.3f} s")
    except Exception as exc:  # pytest-lsp missing, or the server failed: say so, keep the rest
        out["server_first_diagnostics"] = {"error": repr(exc)}
        print(f"server timing skipped: {exc!r}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
