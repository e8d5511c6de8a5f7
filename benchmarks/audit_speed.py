"""Does `gradaudit audit` cost about what `gradaudit check` costs on the same folder?

    .venv/bin/python benchmarks/audit_speed.py [FOLDER ...] [--repeat N] [--format md|json|html]

For the repo's `examples/` (and every FOLDER given): `gradaudit check FOLDER --no-progress` and
`gradaudit audit FOLDER -o OUT` as whole processes, one untimed warm-up of each, then the best of
N (default 5) wall and child-CPU seconds, and the ratio audit / check. Target: <= 2x.
The audit analyses the same files (keeping the training-step models instead of dropping them),
then builds the report: graphs, ranked findings, a diff per fix, a probe plan per step.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

from common import display, engine_stamp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _run(cmd, cwd) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(cmd, cwd, repeat) -> tuple[float, float]:
    _run(cmd, cwd)  # warm-up: file cache, .pyc
    runs = [_run(cmd, cwd) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--format", choices=("md", "json", "html"), default="md")
    args = ap.parse_args(argv)
    exe = os.path.join(os.path.dirname(sys.executable), "gradaudit")
    folders = [os.path.join(ROOT, "examples")] + [os.path.abspath(f) for f in args.folders]
    print(
        f"gradaudit audit vs check, engine {engine_stamp()}, load {os.getloadavg()[0]:.2f} on "
        f"{os.cpu_count()} CPUs, best of {args.repeat}"
    )
    print(
        f"{'folder':<40} {'check s':>8} {'audit s':>8} {'ratio':>6} {'check cpu':>10} {'audit cpu':>10} {'cpu ratio':>9}"  # noqa: E501
    )
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, f"report.{args.format}")
        for folder in folders:
            check = best([exe, "check", folder, "--no-progress"], ROOT, args.repeat)
            audit = best([exe, "audit", folder, "-o", out, "--format", args.format], ROOT, args.repeat)
            ratio, cpu_ratio = audit[0] / check[0], audit[1] / check[1]
            worst = max(worst, ratio)
            print(
                f"{display(folder):<40} {check[0]:>8.3f} {audit[0]:>8.3f} {ratio:>6.2f} {check[1]:>10.3f} "
                f"{audit[1]:>10.3f} {cpu_ratio:>9.2f}"
            )
    print(f"worst wall ratio {worst:.2f} (target <= 2.00)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
