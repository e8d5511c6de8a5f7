"""Real notebooks: does `gradaudit check` read published course notebooks without a crash, what
IPython syntax do they hold, and what does it report there?

    .venv/bin/python benchmarks/notebooks.py FOLDER [FOLDER ...] [--json OUT]

FOLDER: a checkout of a repository of notebooks, fetched by hand into a scratch folder (never into
this repository), e.g. a course's public repository. For each folder: the notebooks found (as
`gradaudit check` walks folders), their code cells, the lines of IPython syntax neutralised (magics,
shell lines, help), the cells (or statements) that do not parse, internal errors (target: 0), the
findings by code and confidence, and the time taken. Every finding is printed with its cell and
line, for review by hand.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time

from common import engine_stamp

from gradaudit.analysis.app.cli import check_paths
from gradaudit.analysis.check.config import Config
from gradaudit.analysis.source.notebook import read_notebook
from gradaudit.analysis.source.program import ParseError, split_lines


def ipython_lines(nb) -> int:
    """Lines of the code cells in IPython's syntax: magics, shell lines, help (`obj?`)."""
    n = 0
    for cell in nb.code_cells():
        for line in split_lines(cell.source):
            if line.lstrip().startswith(("%", "!", "?")) or line.rstrip().endswith("?"):
                n += 1
    return n


def measure(folder: str) -> dict:
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        started = time.perf_counter()
        checked = check_paths(["."], Config(root=os.getcwd()), jobs=1)
        seconds = time.perf_counter() - started
        notebooks = [f for f in checked.files if f.endswith(".ipynb")]
        cells = magics = 0
        for path in notebooks:
            try:
                nb, _ = read_notebook(path)
            except (OSError, ParseError):
                continue
            cells += len(nb.code_cells())
            magics += ipython_lines(nb)
        locator = checked.locator
        findings = []
        for f in checked.findings:
            if not f.span.path.endswith(".ipynb"):
                continue
            w = locator.span(f.span)
            findings.append(
                {
                    "code": f.code,
                    "confidence": f.confidence,
                    "where": w.label(),
                    "message": f.message,
                }
            )
        problems = collections.Counter(p.kind for p in checked.problems if p.path.endswith(".ipynb"))
        internal = [p.line_text() for p in checked.problems if p.kind == "internal"]
        return {
            "folder": folder,
            "notebooks": len(notebooks),
            "code_cells": cells,
            "ipython_lines": magics,
            "problems": dict(problems),
            "internal_errors": internal,
            "findings": findings,
            "by_code": dict(collections.Counter(f"{f['code']} {f['confidence']}" for f in findings)),
            "seconds": round(seconds, 2),
        }
    finally:
        os.chdir(cwd)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args(argv)
    print(f"gradaudit {engine_stamp()}; load average {os.getloadavg()[0]:.1f}")
    rows = [measure(os.path.abspath(f)) for f in args.folders]
    total = collections.Counter()
    for r in rows:
        print(
            f"\n{os.path.basename(r['folder'])}: {r['notebooks']} notebooks, {r['code_cells']} code cells, "
            f"{r['ipython_lines']} IPython lines, problems {r['problems'] or 'none'}, "
            f"{len(r['internal_errors'])} internal errors, {len(r['findings'])} findings {r['by_code']}, "
            f"{r['seconds']} s"
        )
        for f in r["findings"]:
            print(f"  {f['where']}: {f['code']} [{f['confidence']}] {f['message'][:100]}")
        for e in r["internal_errors"]:
            print(f"  INTERNAL {e}")
        for key in ("notebooks", "code_cells", "ipython_lines"):
            total[key] += r[key]
        total["findings"] += len(r["findings"])
        total["internal"] += len(r["internal_errors"])
    print(
        f"\ntotal: {total['notebooks']} notebooks, {total['code_cells']} code cells, "
        f"{total['ipython_lines']} IPython lines, {total['internal']} internal errors, {total['findings']} findings"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 1 if total["internal"] else 0


if __name__ == "__main__":
    sys.exit(main())
