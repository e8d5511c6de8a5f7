#!/usr/bin/env python
"""Run the gradaudit engine over real, published PyTorch code and report speed, crashes and findings.

    python benchmarks/real_code.py [--packages transformers lightning accelerate timm] [--jobs N]
                                   [--json OUT] [--timeout SEC] [--keep-going]

For each package: `pip download --no-deps` its wheel into benchmarks/.cache/wheels (skipped when a
wheel is already there), unpack it to benchmarks/.cache/src/NAME, then analyze every .py file in
process with one shared Program per package (as `gradaudit check` does per worker). Exceptions are
caught per file and counted as crashes. Every *confirmed* finding is printed, for review by hand.

Needs only the standard library and the installed gradaudit (run it with the project's venv python).
"""
from __future__ import annotations

import argparse
import ast
import collections
import gc
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
import zipfile

from common import display, engine_stamp, read_text

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")
WHEELS = os.path.join(CACHE, "wheels")
SRC = os.path.join(CACHE, "src")
DEFAULT_PACKAGES = ["transformers", "lightning", "accelerate", "timm"]


# ---------------------------------------------------------------- fetching

def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def find_wheel(name: str) -> str | None:
    """The newest cached wheel of `name` (by file time), if any."""
    want = _norm(name)
    hits = [p for p in glob.glob(os.path.join(WHEELS, "*.whl"))
            if _norm(os.path.basename(p).split("-", 1)[0]) == want]
    return max(hits, key=os.path.getmtime) if hits else None


def _pip_command() -> list[str] | None:
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    if probe.returncode == 0:
        return [sys.executable, "-m", "pip"]
    for exe in ("pip3", "pip"):
        path = shutil.which(exe)
        if path:
            return [path]
    return None


def fetch(name: str, log) -> str:
    """Path of the unpacked sources of `name` (downloading and unpacking as needed)."""
    wheel = find_wheel(name)
    if wheel is None:
        pip = _pip_command()
        if pip is None:
            raise RuntimeError("pip is not available (neither `python -m pip` nor pip on PATH)")
        os.makedirs(WHEELS, exist_ok=True)
        log(f"downloading {name} ...")
        # --only-binary: a wheel is plain files to unzip; an sdist would need a build step
        proc = subprocess.run(pip + ["download", "--no-deps", "--only-binary=:all:", "--dest", WHEELS, name],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.strip().splitlines()[-5:])
            raise RuntimeError(f"pip download {name} failed:\n{tail}")
        wheel = find_wheel(name)
        if wheel is None:
            raise RuntimeError(f"pip download {name} produced no wheel in {WHEELS}")
    dest = os.path.join(SRC, name)
    marker = os.path.join(dest, ".unpacked-from")
    stamp = os.path.basename(wheel)
    try:
        with open(marker, encoding="utf-8") as fh:
            if fh.read().strip() == stamp:
                return dest
    except OSError:
        pass
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    log(f"unpacking {stamp} ...")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(dest)
    with open(marker, "w", encoding="utf-8") as fh:
        fh.write(stamp + "\n")
    return dest


def python_files(root: str) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                out.append(os.path.join(dirpath, fn))
    return out


# ---------------------------------------------------------------- analysis

class FileTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise FileTimeout("file took longer than the --timeout")


def _finding_dict(f) -> dict:
    return {"path": f.span.path, "line": f.span.line, "col": getattr(f.span, "col", 0), "code": f.code,
            "name": f.name, "confidence": f.confidence, "message": f.message}


def analyze_chunk(paths: list[str], root: str, timeout: float, log=None) -> dict:
    """Analyze `paths` with one shared Program; only findings and small facts are kept."""
    from gradaudit.analysis.engine import Analyzer
    from gradaudit.analysis.program import Program

    analyzer = Analyzer(extra_roots=[root], batch=True)
    program = Program([root], freeze_trees=True)
    use_alarm = timeout > 0 and hasattr(signal, "setitimer")
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _on_alarm)
    findings, crashes, parse_errors, per_file = [], [], [], []
    seconds = cpu = 0.0
    try:
        for path in paths:
            source = read_text(path)
            c0, t0 = time.process_time(), time.perf_counter()
            try:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, timeout)
                try:
                    result = analyzer.analyze_source(path, source, program)
                finally:
                    if use_alarm:
                        signal.setitimer(signal.ITIMER_REAL, 0)
            except FileTimeout:
                crashes.append({"path": path, "error": f"timeout: more than {timeout:g} s"})
                result = None
            except RecursionError as exc:
                crashes.append({"path": path, "error": f"RecursionError: {exc}",
                                "traceback": traceback.format_exc(limit=-8)})
                result = None
            except Exception as exc:  # an engine bug: count it, keep going
                last = traceback.format_exception_only(type(exc), exc)[-1].strip()
                crashes.append({"path": path, "error": last, "where": _where(exc),
                                "traceback": traceback.format_exc(limit=-8)})
                result = None
            dt = time.perf_counter() - t0
            seconds += dt
            cpu += time.process_time() - c0
            per_file.append((dt, path))
            if log is not None and len(per_file) % 250 == 0:
                log(f"  {len(per_file)}/{len(paths)} files, {seconds:.0f} s")
            if result is not None:
                if result.error is not None:
                    e = result.error
                    parse_errors.append({"path": e.path, "line": e.line, "error": e.msg})
                findings.extend(_finding_dict(f) for f in result.findings)
            del result   # the model and the files dict go now; only findings stay
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    per_file.sort(reverse=True)
    return {"seconds": seconds, "cpu": cpu, "findings": findings, "crashes": crashes, "parse_errors": parse_errors,
            "slowest": per_file[:10], "files": len(paths)}


def _where(exc) -> str:
    """file:line of the innermost frame of the traceback (inside the engine, usually)."""
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return ""
    fr = tb[-1]
    return f"{fr.filename}:{fr.lineno} in {fr.name}"


def time_parse(sources: list[tuple[str, str]]) -> tuple[float, float]:
    """(wall, cpu) seconds of ast.parse over `sources`, gc disabled as the engine's interpreter runs."""
    gc.collect()
    gc.disable()
    try:
        total = cpu = 0.0
        for path, src in sources:
            c0, t0 = time.process_time(), time.perf_counter()
            try:
                ast.parse(src, filename=path)
            except (SyntaxError, ValueError):
                pass
            total += time.perf_counter() - t0
            cpu += time.process_time() - c0
    finally:
        gc.enable()
    return total, cpu


def _merge(parts: list[dict]) -> dict:
    out = {"seconds": 0.0, "cpu": 0.0, "findings": [], "crashes": [], "parse_errors": [], "slowest": [], "files": 0}
    for p in parts:
        out["seconds"] += p["seconds"]
        out["cpu"] += p["cpu"]
        out["files"] += p["files"]
        for k in ("findings", "crashes", "parse_errors", "slowest"):
            out[k].extend(p[k])
    out["slowest"] = sorted(out["slowest"], reverse=True)[:10]
    return out


def _dedupe(findings: list[dict]) -> list[dict]:
    """One finding per (code, place): an imported file analyzed from two entries reports once."""
    best: dict = {}
    for f in findings:
        key = (f["code"], f["path"], f["line"], f["col"])
        prev = best.get(key)
        if prev is None or (prev["confidence"] != "confirmed" and f["confidence"] == "confirmed"):
            best[key] = f
    return sorted(best.values(), key=lambda f: (f["path"], f["line"], f["col"], f["code"]))


def run_package(name: str, jobs: int, timeout: float, log) -> dict:
    root = fetch(name, log)
    files = [display(p) for p in python_files(root)]
    droot = display(root)
    lines = 0
    for p in files:
        with open(p, "rb") as fh:
            lines += fh.read().count(b"\n")
    log(f"{name}: {len(files)} files, {lines} lines; analyzing ...")

    gc.collect()
    wall0 = time.perf_counter()
    if jobs > 1 and len(files) >= 2 * jobs:
        import concurrent.futures
        chunks = [files[i::jobs] for i in range(jobs)]
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
            parts = list(pool.map(analyze_chunk, chunks, [droot] * jobs, [timeout] * jobs))
        res = _merge(parts)
    else:
        res = analyze_chunk(files, droot, timeout, log)
    wall = time.perf_counter() - wall0

    # ast.parse over the same files, one at a time so that no tree outlives its timing
    parse_s = parse_cpu = 0.0
    batch: list = []
    size = 0
    for p in files:
        src = read_text(p)
        batch.append((p, src))
        size += len(src)
        if size > 20_000_000:
            w, c = time_parse(batch)
            parse_s, parse_cpu = parse_s + w, parse_cpu + c
            batch, size = [], 0
    w, c = time_parse(batch)
    parse_s, parse_cpu = parse_s + w, parse_cpu + c

    findings = _dedupe(res["findings"])
    by_code = collections.Counter((f["code"], f["confidence"]) for f in findings)
    wheel = find_wheel(name)
    return {
        "package": name, "wheel": os.path.basename(wheel) if wheel else None,
        "files": len(files), "lines": lines, "jobs": jobs,
        "analysis_seconds": res["seconds"], "analysis_wall_seconds": wall, "parse_seconds": parse_s,
        "ratio": res["seconds"] / parse_s if parse_s else None,
        "analysis_cpu_seconds": res["cpu"], "parse_cpu_seconds": parse_cpu,
        "cpu_ratio": res["cpu"] / parse_cpu if parse_cpu else None,
        "crashes": res["crashes"], "parse_errors": res["parse_errors"],
        "findings_by_code": {f"{c}/{conf}": n for (c, conf), n in sorted(by_code.items())},
        "findings": findings,
        "slowest_files": [{"path": p, "seconds": round(s, 4)} for s, p in res["slowest"]],
    }


# ---------------------------------------------------------------- report

def _max_rss_mib() -> float | None:
    try:
        import resource
    except ImportError:
        return None
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(kb, kids) / (1024 * 1024 if sys.platform == "darwin" else 1024)


def print_package(r: dict) -> None:
    print(f"\n=== {r['package']}  ({r['wheel']})")
    ratio = f"{r['ratio']:.1f}x" if r["ratio"] is not None else "n/a"
    cpu = f" (cpu {r['cpu_ratio']:.1f}x)" if r.get("cpu_ratio") else ""
    wall = ""
    if r["jobs"] > 1:
        wall = f"  (wall {r['analysis_wall_seconds']:.2f} s with {r['jobs']} jobs)"
    print(f"files {r['files']}   lines {r['lines']}   analysis {r['analysis_seconds']:.2f} s{wall}   "
          f"ast.parse {r['parse_seconds']:.2f} s   ratio {ratio}{cpu}   crashes {len(r['crashes'])}   "
          f"parse errors {len(r['parse_errors'])}")
    if r["findings_by_code"]:
        cells = collections.defaultdict(dict)
        for key, n in r["findings_by_code"].items():
            code, conf = key.split("/")
            cells[code][conf] = n
        print("findings:  " + "   ".join(f"{code} {c.get('confirmed', 0)} confirmed / {c.get('suspicious', 0)} "
                                        f"suspicious" for code, c in sorted(cells.items())))
    else:
        print("findings:  none")
    if r["slowest_files"]:
        print("slowest files: " + ", ".join(f"{s['path'].rsplit('/', 1)[-1]} {s['seconds']:.2f}s"
                                            for s in r["slowest_files"][:5]))
    for c in r["crashes"]:
        where = f"  [{c['where']}]" if c.get("where") else ""
        print(f"CRASH {c['path']}: {c['error']}{where}")
    for e in r["parse_errors"]:
        print(f"PARSE ERROR {e['path']}:{e['line']}: {e['error']}")
    confirmed = [f for f in r["findings"] if f["confidence"] == "confirmed"]
    print(f"confirmed findings ({len(confirmed)}):")
    for f in confirmed:
        print(f"{f['path']}:{f['line']}: {f['code']} {f['message']}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", nargs="+", default=DEFAULT_PACKAGES, metavar="NAME")
    ap.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                    help="worker processes per package, each with its own Program (default 1: in-process)")
    ap.add_argument("--timeout", type=float, default=120.0, metavar="SEC",
                    help="count a file that takes longer as a crash (0: no limit; default 120)")
    ap.add_argument("--json", metavar="OUT", help="write all numbers, crashes and findings to OUT")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)

    def log(msg):
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    import gradaudit.analysis as ga
    load = " load average %.2f %.2f %.2f," % os.getloadavg() if hasattr(os, "getloadavg") else ""
    print(f"gradaudit real-code run (python {sys.version.split()[0]},{load} {os.cpu_count()} cpus, "
          f"jobs {max(1, args.jobs)}, gradaudit {engine_stamp()} from {os.path.dirname(ga.__file__)})")
    print("times: time.perf_counter wall seconds summed over files (cpu: time.process_time); "
          "ast.parse timed with gc disabled, as the engine interprets")
    reports, failures = [], {}
    for name in args.packages:
        try:
            r = run_package(name, max(1, args.jobs), args.timeout, log)
        except Exception as exc:
            failures[name] = f"{type(exc).__name__}: {exc}"
            print(f"\n=== {name}: skipped: {failures[name]}")
            continue
        reports.append(r)
        print_package(r)
        sys.stdout.flush()

    tot_files = sum(r["files"] for r in reports)
    tot_lines = sum(r["lines"] for r in reports)
    tot_a = sum(r["analysis_seconds"] for r in reports)
    tot_p = sum(r["parse_seconds"] for r in reports)
    tot_crash = sum(len(r["crashes"]) for r in reports)
    tot_conf = sum(1 for r in reports for f in r["findings"] if f["confidence"] == "confirmed")
    tot_susp = sum(1 for r in reports for f in r["findings"] if f["confidence"] == "suspicious")
    rss = _max_rss_mib()
    ratio = f"{tot_a / tot_p:.1f}x" if tot_p else "n/a"
    print(f"\nSUMMARY: {len(reports)} packages, {tot_files} files, {tot_lines} lines, analysis {tot_a:.2f} s, "
          f"ast.parse {tot_p:.2f} s, ratio {ratio}, crashes {tot_crash}, findings {tot_conf} confirmed / "
          f"{tot_susp} suspicious" + (f", peak RSS {rss:.0f} MiB" if rss else "")
          + (f", failed: {', '.join(failures)}" if failures else ""))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"python": sys.version.split()[0], "engine": engine_stamp(), "packages": reports, "failures": failures,
                       "summary": {"files": tot_files, "lines": tot_lines, "analysis_seconds": tot_a,
                                   "parse_seconds": tot_p, "crashes": tot_crash, "confirmed": tot_conf,
                                   "suspicious": tot_susp, "peak_rss_mib": rss}}, fh, indent=2)
        log(f"wrote {args.json}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
