"""Do the gradient-flow tests `gradaudit probe` writes agree with what really happens?

    .venv/bin/python benchmarks/probe_corpus.py CORPUS_DIR [CASE ...] [-j N] [--json OUT] [-v]

For every case of an acceptance corpus laid out like gradaudit's own (subfolders of `*.py` cases,
`repos/` of multi-file projects with a `train.py`, the first line of each case
`# runtime: SYMPTOM`): copy the case to a scratch folder (a file case as `train.py`) with every
`# expect:` and `# runtime:` comment removed, run `gradaudit probe train.py --emit
test_gradflow.py`, then run that test with pytest under the venv's torch. Nothing of the corpus is
kept: it is read at run time.

- *locatable*: the engine located the training step's pieces and a test was written (exit 0);
- the verdict agrees when the test **passes** on a `# runtime: clean` case and **fails** on any
  other (`error`, `no-update`, `nonfinite`, and the `warning`/`custom` symptoms, which describe a
  defect too);
- a case whose script needs a library this environment lacks (`ModuleNotFoundError`) is counted
  apart, as not runnable here.

Prints one line per case (`-v`: the failing test's first assertion line too), then the
agreement rate over the locatable, runnable cases, per header kind. Target: >= 0.9.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from common import engine_stamp

HERE = os.path.dirname(os.path.abspath(__file__))
COMMENT = re.compile(r"[ \t]*#\s*(?:expect|runtime):.*$")
HEADER = re.compile(r"#\s*runtime:\s*(\S+)")
MISSING_LIB = re.compile(r"No module named '([^']+)'")


def discover(root: str) -> list[tuple[str, str]]:
    """(kind, path): 'file' for each top-level *.py of a subfolder (not *.check.py, not _*),
    'project' for each folder under repos/."""
    root = os.path.abspath(root)
    if os.path.isfile(root):
        return [("file", root)]
    if os.path.isfile(os.path.join(root, "train.py")) and os.path.basename(os.path.dirname(root)) == "repos":
        return [("project", root)]
    out = []
    folders = (
        [root]
        if any(n.endswith(".py") for n in os.listdir(root) if n not in ("score.py", "verify_runtime.py"))
        or os.path.basename(root) == "repos"
        else [os.path.join(root, d) for d in sorted(os.listdir(root))]
    )
    for folder in folders:
        if not os.path.isdir(folder) or os.path.basename(folder).startswith((".", "_")):
            continue
        for name in sorted(os.listdir(folder)):
            p = os.path.join(folder, name)
            if os.path.basename(folder) == "repos":
                if os.path.isdir(p) and not name.startswith((".", "_")):
                    out.append(("project", p))
            elif (
                os.path.isfile(p)
                and name.endswith(".py")
                and not name.endswith(".check.py")
                and not name.startswith("_")
                and name not in ("score.py", "verify_runtime.py")
            ):
                out.append(("file", p))
    return out


def header(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.startswith("#"):
                break
            m = HEADER.search(line)
            if m:
                return m.group(1)
    return "?"


def _strip(src: str, dst: str):
    with open(src, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    with open(dst, "w", encoding="utf-8") as fh:
        fh.write("\n".join(COMMENT.sub("", line) for line in text.split("\n")))


def stage(kind: str, path: str, work: str) -> str:
    """The case in `work`, annotations removed, and the script to run there."""
    if kind == "file":
        _strip(path, os.path.join(work, "train.py"))
        return os.path.join(work, "train.py")
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
        rel = os.path.relpath(dirpath, path)
        os.makedirs(os.path.join(work, rel), exist_ok=True)
        for name in filenames:
            src = os.path.join(dirpath, name)
            if name.endswith(".py"):
                _strip(src, os.path.join(work, rel, name))
            elif not name.endswith(".pyc"):
                shutil.copy(src, os.path.join(work, rel, name))
    return os.path.join(work, "train.py")


def run_case(case, timeout: int) -> dict:
    kind, path = case
    truth = header(path if kind == "file" else os.path.join(path, "train.py"))
    name = os.path.relpath(path, os.path.dirname(os.path.dirname(path)))
    out = {"case": name, "truth": truth, "expect": "pass" if truth == "clean" else "fail"}
    gradaudit = os.path.join(os.path.dirname(sys.executable), "gradaudit")
    with tempfile.TemporaryDirectory(prefix="probe-case-") as tmp:
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        script = stage(kind, path, work)
        t0 = time.perf_counter()
        p = subprocess.run(
            [gradaudit, "probe", "train.py", "--emit", "test_gradflow.py"],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        out["emit_seconds"] = round(time.perf_counter() - t0, 2)
        if p.returncode != 0:
            out.update(verdict="not locatable", detail=(p.stderr.strip().splitlines() or [""])[-1])
            return out
        with open(os.path.join(work, "test_gradflow.py")) as fh:
            out["tests"] = fh.read().count("\ndef test_")
        t0 = time.perf_counter()
        try:
            t = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "test_gradflow.py"],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            code, text = t.returncode, t.stdout + t.stderr
        except subprocess.TimeoutExpired:
            code, text = -1, "timed out"
        out["test_seconds"] = round(time.perf_counter() - t0, 2)
        del script
    if code == 0:
        out["verdict"] = "pass"
    elif code == 1:
        out["verdict"] = "fail"
        lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
        out["detail"] = " | ".join(lines[1:3] if len(lines) > 1 else lines)[:300]
        m = MISSING_LIB.search(text)
        if m and "raised ModuleNotFoundError" in text:
            out["verdict"] = "not runnable"
            out["detail"] = f"needs {m.group(1)}"
    else:
        out["verdict"] = "error"
        out["detail"] = text.strip().splitlines()[-1][:300] if text.strip() else f"exit {code}"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus")
    ap.add_argument("cases", nargs="*", help="only these cases (paths under the corpus)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    cases = []
    for target in args.cases or [args.corpus]:
        cases += discover(target if os.path.exists(target) else os.path.join(args.corpus, target))
    print(f"gradaudit probe vs runtime truth: {len(cases)} cases, engine {engine_stamp()}, -j {args.jobs}")
    t0 = time.perf_counter()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for r in pool.map(lambda c: run_case(c, args.timeout), cases):
            results.append(r)
            agree = r["verdict"] == r["expect"]
            mark = "ok  " if agree else ("--  " if r["verdict"] in ("not locatable", "not runnable") else "DIFF")
            line = f"{mark} {r['case']:<44} {r['truth']:<10} test {r['verdict']}"
            if args.verbose and r.get("detail") and not agree:
                line += f"  ({r['detail']})"
            print(line, flush=True)
    located = [r for r in results if r["verdict"] not in ("not locatable", "not runnable")]
    agreed = [r for r in located if r["verdict"] == r["expect"]]
    print()
    by_kind: dict = {}
    for r in located:
        k = by_kind.setdefault(r["truth"], [0, 0])
        k[0] += r["verdict"] == r["expect"]
        k[1] += 1
    for kind, (a, n) in sorted(by_kind.items()):
        print(f"  {kind:<10} {a}/{n} agree")
    not_loc = sum(1 for r in results if r["verdict"] == "not locatable")
    not_run = sum(1 for r in results if r["verdict"] == "not runnable")
    rate = len(agreed) / len(located) if located else 0.0
    print(
        f"agreement {rate:.3f} ({len(agreed)}/{len(located)} locatable cases); not locatable {not_loc}, "
        f"not runnable here {not_run}, of {len(results)} cases; {time.perf_counter() - t0:.0f} s"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rate": rate, "results": results}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
