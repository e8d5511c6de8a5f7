#!/usr/bin/env python
"""How fast gradaudit is, against ast.parse, the bare interpreter and (optionally) TorchFix.

    python benchmarks/speed.py [FOLDER ...] [--repeat N] [--json OUT] [--one-file FILE] [--peers]

Per folder (the repo's examples/ plus any given): the engine over all its .py files, one shared
Program per folder as `gradaudit check` does, as a multiple of ast.parse over the same files.
Then whole-process wall time of `gradaudit check ONE_FILE` against `python -c "import ast"`.
With --peers, TorchFix (installed into benchmarks/.cache/peer-venv) is timed on the same inputs.
Every figure is the best of --repeat runs (time.perf_counter).
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import os
import shutil
import subprocess
import sys
import time

from common import display, engine_stamp, read_text

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache")
PEER_VENV = os.path.join(CACHE, "peer-venv")

TARGET_RATIO = 3.0  # analysis <= 3x ast.parse
TARGET_ONE_FILE = 0.3  # seconds, whole process


def folder_files(folder: str) -> list[str]:
    """The files `gradaudit check FOLDER` would check."""
    from gradaudit.analysis.check.discovery import discover

    files, _ = discover([folder])
    return files


def _bin(venv_bin: str, name: str) -> str:
    exe = os.path.join(venv_bin, name + (".exe" if os.name == "nt" else ""))
    return exe


def gradaudit_cmd() -> list[str]:
    exe = _bin(os.path.dirname(sys.executable), "gradaudit")
    if os.path.isfile(exe):
        return [exe]
    found = shutil.which("gradaudit")
    return [found] if found else [sys.executable, "-m", "gradaudit.analysis.app.cli"]


# ---------------------------------------------------------------- in-process timing


def best_of(n: int, fn):
    """(best wall seconds, cpu seconds of that run, value of the first run)."""
    best, cpu, first = None, None, None
    for i in range(n):
        wall, c, value = fn()
        if i == 0:
            first = value
        if best is None or wall < best:
            best, cpu = wall, c
    return best, cpu, first


def time_parse(sources, disable_gc: bool):
    def run():
        gc.collect()
        if disable_gc:
            gc.disable()
        try:
            c0, t0 = time.process_time(), time.perf_counter()
            for path, src in sources:
                try:
                    ast.parse(src, filename=path)
                except (SyntaxError, ValueError):
                    pass
            t1, c1 = time.perf_counter(), time.process_time()
        finally:
            gc.enable()
        return t1 - t0, c1 - c0, None

    return run


def time_engine(folder: str, sources):
    from gradaudit.analysis.check.engine import Analyzer
    from gradaudit.analysis.source.program import Program

    def run():
        gc.collect()
        counts = {"confirmed": 0, "suspicious": 0, "crashes": 0, "parse_errors": 0}
        c0, t0 = time.process_time(), time.perf_counter()
        program = Program([folder], freeze_trees=True)
        analyzer = Analyzer(extra_roots=[folder], batch=True)
        for path, src in sources:
            try:
                r = analyzer.analyze_source(path, src, program)
            except Exception:
                counts["crashes"] += 1
                continue
            if r.error is not None:
                counts["parse_errors"] += 1
            for f in r.findings:
                counts[f.confidence] = counts.get(f.confidence, 0) + 1
            del r
        t1, c1 = time.perf_counter(), time.process_time()
        return t1 - t0, c1 - c0, counts

    return run


def bench_folder(folder: str, repeat: int, log) -> dict:
    files = folder_files(folder)
    out = {"folder": folder, "files": len(files)}
    if not files:
        return out
    sources = [(p, read_text(p)) for p in files]
    out["lines"] = sum(s.count("\n") for _, s in sources)
    out["bytes"] = sum(len(s.encode("utf-8", "replace")) for _, s in sources)
    log(f"{folder}: {len(files)} files, {out['lines']} lines: ast.parse ...")
    out["parse_s"], out["parse_cpu_s"], _ = best_of(repeat, time_parse(sources, disable_gc=True))
    out["parse_gc_on_s"], _, _ = best_of(repeat, time_parse(sources, disable_gc=False))
    log(f"{folder}: engine ...")
    out["engine_s"], out["engine_cpu_s"], counts = best_of(repeat, time_engine(folder, sources))
    out.update(counts)
    out["ratio"] = out["engine_s"] / out["parse_s"] if out["parse_s"] else None
    out["ratio_cpu"] = out["engine_cpu_s"] / out["parse_cpu_s"] if out["parse_cpu_s"] else None
    return out


# ---------------------------------------------------------------- whole-process timing


def bytecode_env(warm: bool) -> dict:
    """The environment for timed subprocesses.

    warm: .pyc files are written and read, as on a user's machine after the first run; they are kept
    under benchmarks/.cache/pycache (PYTHONPYCACHEPREFIX) so that no folder outside benchmarks/ gets a
    __pycache__. cold: PYTHONDONTWRITEBYTECODE=1 and the usual __pycache__ folders: the standard library
    and installed packages come precompiled, but an editable gradaudit without __pycache__ is compiled
    from source at every start (as in sandboxes that set that variable)."""
    env = dict(os.environ)
    if warm:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(CACHE, "pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def time_process(cmd: list[str], repeat: int, warm: bool = True, ok_codes=(0, 1)) -> dict:
    """Best-of-`repeat` wall time of a whole process, after one untimed warm-up run."""
    env = bytecode_env(warm)
    best, code, err = None, None, ""
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
        dt = time.perf_counter() - t0
        code = p.returncode
        if code not in ok_codes:
            err = (p.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
        if i and (best is None or dt < best):
            best = dt
    return {
        "cmd": " ".join(display(c) if os.path.isabs(c) else c for c in cmd),
        "seconds": best,
        "exit": code,
        "error": err,
        "bytecode_cache": warm,
    }


def ensure_peer(log) -> tuple[str | None, str]:
    """(torchfix executable or None, why not)."""
    vbin = os.path.join(PEER_VENV, "Scripts" if os.name == "nt" else "bin")
    tf = _bin(vbin, "torchfix")
    if os.path.isfile(tf):
        return tf, ""
    py = _bin(vbin, "python")
    if not os.path.isfile(py):
        log(f"creating {display(PEER_VENV)} ...")
        p = subprocess.run(
            [sys.executable, "-m", "venv", PEER_VENV], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if p.returncode != 0 or not os.path.isfile(py):
            return None, "could not create the venv: " + (p.stdout.strip().splitlines() or ["?"])[-1]
    log("pip install torchfix ...")
    p = subprocess.run(
        [py, "-m", "pip", "install", "--quiet", "torchfix"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    if p.returncode != 0 or not os.path.isfile(tf):
        return None, "pip install torchfix failed: " + (p.stdout.strip().splitlines() or ["?"])[-1]
    return tf, ""


def peer_version(tf: str) -> str:
    try:
        p = subprocess.run([tf, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return p.stdout.strip()
    except OSError:
        return "?"


# ---------------------------------------------------------------- report


def _fmt(x, unit="s", digits=3):
    return "-" if x is None else f"{x:.{digits}f}{unit}"


def _mark(ok):
    return "ok" if ok else "MISSED"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*", metavar="FOLDER", help="more folders of Python files")
    ap.add_argument("--repeat", type=int, default=5, metavar="N", help="best of N (default 5)")
    ap.add_argument("--json", metavar="OUT", help="write the numbers to OUT")
    ap.add_argument(
        "--one-file",
        metavar="FILE",
        help="the file for the whole-process timing (default: the largest .py in examples/)",
    )
    ap.add_argument(
        "--peers",
        action="store_true",
        help="also time TorchFix (installed into benchmarks/.cache/peer-venv if missing)",
    )
    ap.add_argument("--no-examples", action="store_true", help="leave the repo's examples/ out")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)
    repeat = max(1, args.repeat)

    def log(msg):
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    notes = []
    examples = display(os.path.join(REPO, "examples"))
    folders = [] if args.no_examples else [examples]
    for f in args.folders:
        if not os.path.isdir(f):
            print(f"speed.py: {f}: not a folder", file=sys.stderr)
            return 2
        if os.path.abspath(f) not in {os.path.abspath(x) for x in folders}:
            folders.append(f)

    # ---- engine vs ast.parse, per folder
    rows = []
    for folder in folders:
        if not os.path.isdir(folder):
            notes.append(f"{folder}: missing, skipped")
            continue
        row = bench_folder(folder, repeat, log)
        if not row["files"]:
            notes.append(f"{folder}: no Python files, skipped")
            continue
        rows.append(row)

    # ---- the one file
    one = args.one_file
    if one is None:
        ex_files = folder_files(examples) if os.path.isdir(examples) else []
        pool = ex_files or [p for f in folders[1:] for p in folder_files(f)]
        if pool:
            one = max(pool, key=os.path.getsize)
            if not ex_files:
                notes.append(
                    f"examples/ has no .py files: the one-file timing uses the largest file of the "
                    f"given folders ({one})"
                )
    proc = {}
    if one is not None:
        if not os.path.isfile(one):
            print(f"speed.py: {one}: no such file", file=sys.stderr)
            return 2
        log(f"whole process on {one} ...")
        with open(one, "rb") as fh:
            proc["one_file"] = {"path": one, "lines": fh.read().count(b"\n")}
        proc["check"] = time_process(gradaudit_cmd() + ["check", one, "--no-progress"], repeat)
        proc["check_cold"] = time_process(gradaudit_cmd() + ["check", one, "--no-progress"], repeat, warm=False)
        proc["python"] = time_process([sys.executable, "-c", "import ast"], repeat)
        proc["import"] = time_process(
            [sys.executable, "-c", "import gradaudit.analysis.app.cli, gradaudit.analysis.check.engine"], repeat
        )
    else:
        notes.append(
            "no file for the whole-process timing (examples/ is empty and no folder was given; use --one-file)"
        )

    # ---- peer
    peer = {"requested": args.peers}
    if args.peers:
        tf, why = ensure_peer(log)
        if tf is None:
            peer["error"] = why
            print(f"TorchFix: not available: {why}; continuing without it", file=sys.stderr)
        else:
            peer["version"] = peer_version(tf)
            if one is not None:
                log(f"torchfix on {one} ...")
                peer["one_file"] = time_process([tf, one], repeat)
            peer["folders"] = []
            for row in rows:
                log(f"whole process on {row['folder']}: gradaudit check -j 1 vs torchfix -j 1 ...")
                g = time_process(gradaudit_cmd() + ["check", row["folder"], "--no-progress", "-j", "1"], repeat)
                t = time_process([tf, "-j", "1", row["folder"]], repeat)
                peer["folders"].append({"folder": row["folder"], "gradaudit": g, "torchfix": t})

    # ---- print
    load = ""
    if hasattr(os, "getloadavg"):
        load = " load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    print(
        f"gradaudit speed  (gradaudit {engine_stamp()}, python {sys.version.split()[0]}, best of {repeat},{load}, "
        f"{os.cpu_count()} cpus)"
    )
    print(
        "The engine disables gc while it interprets; ast.parse is timed with gc disabled too "
        "(gc.collect() before every timed phase)."
    )
    print(
        "Whole-process times: one untimed warm-up run, then best of N; .pyc files cached under "
        "benchmarks/.cache/pycache unless said otherwise."
    )
    print()
    hdr = (
        f"{'folder':<40} {'files':>6} {'lines':>8} {'ast.parse':>10} {'(gc on)':>9} {'engine':>9} "
        f"{'ratio':>7} {'cpu ratio':>9}  target <= {TARGET_RATIO:g}x"
    )
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        ratio = r["ratio"]
        print(
            f"{r['folder'][-40:]:<40} {r['files']:>6} {r['lines']:>8} {_fmt(r['parse_s']):>10} "
            f"{_fmt(r['parse_gc_on_s']):>9} {_fmt(r['engine_s']):>9} {_fmt(ratio, 'x', 1):>7} "
            f"{_fmt(r['ratio_cpu'], 'x', 1):>9}  {_mark(ratio is not None and ratio <= TARGET_RATIO)}"
        )
        extra = f"{r['confirmed']} confirmed / {r['suspicious']} suspicious findings"
        if r["crashes"] or r["parse_errors"]:
            extra += f", {r['crashes']} crashes, {r['parse_errors']} parse errors"
        print(f"{'':<40} {extra}")
    if proc:
        print()
        of = proc["one_file"]
        print(f"whole process, one file: {of['path']} ({of['lines']} lines)")
        c, p, i = proc["check"], proc["python"], proc["import"]
        print(
            f"  {'gradaudit check FILE':<34} {_fmt(c['seconds']):>9}   target < {TARGET_ONE_FILE:g}s: "
            f"{_mark(c['seconds'] < TARGET_ONE_FILE)}   ({c['seconds'] / p['seconds']:.1f}x bare python)"
            + (f"   exit {c['exit']}: {c['error']}" if c["error"] else "")
        )
        lp, li = 'python -c "import ast"', 'python -c "import gradaudit..."'
        k = proc["check_cold"]
        print(
            f"  {'  ... PYTHONDONTWRITEBYTECODE=1':<34} {_fmt(k['seconds']):>9}   (no .pyc written: gradaudit "
            f"compiled at every start unless it has a __pycache__)"
        )
        print(f"  {lp:<34} {_fmt(p['seconds']):>9}   (interpreter baseline)")
        print(f"  {li:<34} {_fmt(i['seconds']):>9}   (start-up + imports, no analysis)")
    if args.peers:
        print()
        if "error" in peer:
            print(f"TorchFix: not available: {peer['error']}")
        else:
            print(f"peer: TorchFix {peer['version']} (whole process, best of {repeat})")
            if "one_file" in peer and proc:
                t, c = peer["one_file"], proc["check"]
                print(
                    f"  one file: gradaudit {_fmt(c['seconds'])}  torchfix {_fmt(t['seconds'])}  "
                    f"gradaudit/torchfix {c['seconds'] / t['seconds']:.2f}x"
                    + (f"   torchfix exit {t['exit']}: {t['error']}" if t["error"] else "")
                )
            for pf in peer["folders"]:
                g, t = pf["gradaudit"], pf["torchfix"]
                print(
                    f"  {pf['folder']} (-j 1): gradaudit {_fmt(g['seconds'])}  torchfix {_fmt(t['seconds'])}  "
                    f"gradaudit/torchfix {g['seconds'] / t['seconds']:.2f}x"
                    + (f"   gradaudit exit {g['exit']}: {g['error']}" if g["error"] else "")
                    + (f"   torchfix exit {t['exit']}: {t['error']}" if t["error"] else "")
                )
    for n in notes:
        print(f"note: {n}")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "python": sys.version.split()[0],
                    "engine": engine_stamp(),
                    "repeat": repeat,
                    "cpus": os.cpu_count(),
                    "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None,
                    "targets": {"ratio": TARGET_RATIO, "one_file_seconds": TARGET_ONE_FILE},
                    "folders": rows,
                    "process": proc,
                    "peer": peer,
                    "notes": notes,
                },
                fh,
                indent=2,
            )
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
