#!/usr/bin/env python
"""Instructions, not seconds: what `gradaudit check` executes, counted by valgrind (callgrind).

    python benchmarks/instructions.py TARGET [TARGET ...] [--gradaudit BIN ...] [--json OUT]

For each gradaudit executable (default: the one beside this interpreter) and each TARGET (a file
or folder), one whole `gradaudit check TARGET -j 1 --no-cache --time-budget 0` process is run
under `valgrind --tool=callgrind` and its instruction count read. A run on an empty file gives the
start-up (imports, argument parsing, the run over one trivial file); the engine's work on TARGET
is the difference. Counts are the same from run to run whatever else the machine does, which
wall time on a shared 2-core machine is not: use them to compare two versions of the engine.

Bytecode is cached (a warm-up run writes the .pyc files), as on a user's machine; valgrind must be
installed (Debian: `apt-get install valgrind`). Each run takes about 50x the plain run's time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FLAGS = ["--format", "json", "--exit-zero", "--no-progress", "-j", "1", "--no-cache", "--time-budget", "0"]


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # cached bytecode, as users run it
    return env


def count(gradaudit: str, target: str) -> int:
    """Instructions of one whole `gradaudit check TARGET` process."""
    cmd = [gradaudit, "check", target, *FLAGS]
    subprocess.run(cmd, capture_output=True, env=_env(), timeout=600)  # warm-up: writes .pyc
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=7200,
    )
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise SystemExit(f"valgrind gave no count for {target}:\n{out.stderr[-2000:]}")
    return int(m.group(1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="+", metavar="TARGET")
    ap.add_argument("--gradaudit", action="append", metavar="BIN", help="executables to compare (repeatable)")
    ap.add_argument("--json", metavar="OUT", help="write the counts here")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    bins = args.gradaudit or [os.path.join(os.path.dirname(sys.executable), "gradaudit")]
    with tempfile.TemporaryDirectory() as tmp:
        empty = os.path.join(tmp, "empty.py")
        with open(empty, "w") as fh:
            fh.write("x = 1\n")
        results = {}
        for b in bins:
            start = count(b, empty)
            rows = {"start-up": start}
            for t in args.targets:
                rows[t] = count(b, t) - start
            results[b] = rows
    names = ["start-up", *args.targets]
    width = max(len(n) for n in names)
    print(
        f"{'millions of instructions':<{width}} "
        + " ".join(f"{os.path.basename(os.path.dirname(b)) or b:>16}" for b in bins)
    )
    for n in names:
        cells = [f"{results[b][n] / 1e6:16.1f}" for b in bins]
        if len(bins) == 2 and results[bins[0]][n]:
            cells.append(f"  {100 * (results[bins[1]][n] / results[bins[0]][n] - 1):+.1f} %")
        print(f"{n if n == 'start-up' else n + ' (engine)':<{width}} " + " ".join(cells))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
