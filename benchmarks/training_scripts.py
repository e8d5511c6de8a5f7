"""The main training scripts of large repositories, each checked inside its repository: is the
analysis complete (no budget ran out), are its training steps understood, and what does a whole
`gradaudit check SCRIPT` process cost next to a process that only parses the same script?

    .venv/bin/python benchmarks/training_scripts.py ROOT [--gradaudit BIN] [--repeat N] [--json OUT]
                                                    [-- EXTRA FLAGS FOR gradaudit check]

ROOT holds one checkout per repository, named as in SCRIPTS below (only the `.py` files are
needed: `git archive HEAD | tar -x -C ROOT/timm`); a repository that is missing is listed and
skipped. No project code is stored here. Times are the best of `--repeat` runs (wall and the
children's CPU seconds); the result cache is off (`--no-cache`), so each run analyses.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (checkout folder under ROOT, its repository, the script, relative to the checkout)
SCRIPTS = (
    ("dit", "facebookresearch/DiT", "train.py"),
    ("detr", "facebookresearch/detr", "main.py"),
    ("d2", "facebookresearch/detectron2", "tools/train_net.py"),
    ("d2", "facebookresearch/detectron2", "tools/plain_train_net.py"),
    ("timm", "huggingface/pytorch-image-models", "train.py"),
    ("yolov5", "ultralytics/yolov5", "train.py"),
    ("litgpt", "Lightning-AI/litgpt", "litgpt/pretrain.py"),
    ("litgpt", "Lightning-AI/litgpt", "litgpt/finetune/lora.py"),
    ("nanogpt", "karpathy/nanoGPT", "train.py"),
)


def _timed(cmd: list[str], cwd: str, env: dict) -> tuple[float, float, str]:
    """Wall and CPU seconds of one child process, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    ap.add_argument("--gradaudit", default=os.path.join(os.path.dirname(HERE), ".venv", "bin", "gradaudit"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("extra", nargs="*", help="flags for gradaudit check (after --)")
    args = ap.parse_args(argv)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="0")
    rows = []
    print(f"{'script':42} {'complete':>8} {'steps':>7} {'wall s':>7} {'cpu s':>6} {'parse s':>7} {'ratio':>6}")
    for folder, repo, script in SCRIPTS:
        cwd = os.path.join(args.root, folder)
        if not os.path.isfile(os.path.join(cwd, script)):
            print(f"{folder}/{script:36} missing (check out {repo} into {cwd})")
            continue
        best = None
        for _ in range(max(args.repeat, 1)):
            cmd = [args.gradaudit, "check", script, "--no-cache", "--format", "json", *args.extra]
            wall, cpu, out = _timed(cmd, cwd, env)
            if best is None or cpu < best[1]:
                best = (wall, cpu, out)
        assert best is not None
        parse = min(
            _timed([sys.executable, "-c", f"import ast; ast.parse(open({script!r}).read())"], cwd, env)[1]
            for _ in range(max(args.repeat, 1))
        )
        result = json.loads(best[2])
        incomplete = [i["message"] for i in result.get("incomplete", [])]
        cov = result.get("coverage", {})
        row = {
            "repository": repo,
            "script": script,
            "complete": not incomplete,
            "incomplete": incomplete,
            "steps": cov.get("steps", 0),
            "understood": cov.get("understood", 0),
            "findings": len(result.get("findings", [])),
            "wall": best[0],
            "cpu": best[1],
            "parse_cpu": parse,
        }
        rows.append(row)
        name = f"{folder}/{script}"
        print(
            f"{name:42} {'yes' if row['complete'] else 'NO':>8} {row['understood']:>3}/{row['steps']:<3} "
            f"{row['wall']:7.2f} {row['cpu']:6.2f} {parse:7.3f} {row['cpu'] / max(parse, 1e-9):5.1f}x"
        )
        for msg in incomplete:
            print(f"    {msg}")
    done = sum(r["complete"] for r in rows)
    print(
        f"complete: {done} of {len(rows)}; steps understood: {sum(r['understood'] for r in rows)} of "
        f"{sum(r['steps'] for r in rows)}"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
