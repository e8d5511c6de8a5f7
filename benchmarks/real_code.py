#!/usr/bin/env python
"""Run the gradaudit engine over real, published PyTorch code and report speed, crashes and findings.

    python benchmarks/real_code.py [FOLDER ...] [--packages NAME[==VERSION] ...] [--pinned]
                                   [--jobs N] [--json OUT] [--timeout SEC] [--update] [--quiet]

Sources: PyPI packages (`--packages`; default transformers lightning accelerate timm when nothing else
is given), the pinned packages of the real-code regression test (`--pinned`: tests/realcode/sources.toml,
with its file subsets), and source folders (a checkout of a repository; named by the folder's name,
e.g. nanoGPT@3adf61e154c3). Packages are fetched by tests/realcode/realcode.py (`pip download
--no-deps` into benchmarks/.cache/wheels, unpacked to benchmarks/.cache/src). Every .py file that
`gradaudit check` would check is analyzed in process with one shared Program per source (as
`gradaudit check` does per worker). Exceptions are caught per file and counted as crashes.

Every confirmed and suspicious finding is printed with its source line and its verdict from the
reviewed list (tests/realcode/reviewed.txt), for review by hand; `--update` prints the unreviewed ones in
the list's format.

Needs only the standard library and the installed gradaudit (run it with the project's venv python).
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import gc
import json
import os
import signal
import sys
import time
import traceback

from common import display, engine_stamp, read_text

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "realcode"))
import realcode  # noqa: E402  (fetching and the reviewed list, shared with the regression test)

DEFAULT_PACKAGES = ["transformers", "lightning", "accelerate", "timm"]


# ---------------------------------------------------------------- sources


def python_files(root: str) -> list[str]:
    """The files `gradaudit check root` would check."""
    from gradaudit.analysis.check.discovery import discover

    return discover([root])[0]


# ---------------------------------------------------------------- analysis


class FileTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise FileTimeout("file took longer than the --timeout")


def _finding_dict(f) -> dict:
    return {
        "path": f.span.path,
        "line": f.span.line,
        "col": getattr(f.span, "col", 0),
        "code": f.code,
        "name": f.name,
        "confidence": f.confidence,
        "message": f.message,
        # the function run alone on made-up inputs (drivers.with_drivers), as [abspath, qualname]
        "unit": [os.path.abspath(f.span.path), f.data["unit"]] if f.data.get("unit") else None,
    }


def analyze_chunk(paths: list[str], root: str, timeout: float, log=None) -> dict:
    """Analyze `paths` with one shared Program; only findings and small facts are kept."""
    from gradaudit.analysis.check.engine import Analyzer
    from gradaudit.analysis.source.program import Program

    analyzer = Analyzer(extra_roots=[root], batch=True)
    program = Program([root], freeze_trees=True)
    use_alarm = timeout > 0 and hasattr(signal, "setitimer")
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _on_alarm)
    findings, crashes, parse_errors, per_file = [], [], [], []
    ran: set = set()  # functions the analyses with training steps ran (the runner's cross-file rule)
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
                crashes.append(
                    {"path": path, "error": f"RecursionError: {exc}", "traceback": traceback.format_exc(limit=-8)}
                )
                result = None
            except Exception as exc:  # an engine bug: count it, keep going
                last = traceback.format_exception_only(type(exc), exc)[-1].strip()
                crashes.append(
                    {"path": path, "error": last, "where": _where(exc), "traceback": traceback.format_exc(limit=-8)}
                )
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
                if result.coverage and result.model is not None:
                    ran |= result.model.ran
            del result  # the model and the files dict go now; only findings stay
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    per_file.sort(reverse=True)
    return {
        "seconds": seconds,
        "cpu": cpu,
        "findings": findings,
        "crashes": crashes,
        "parse_errors": parse_errors,
        "slowest": per_file[:10],
        "files": len(paths),
        "ran": ran,
    }


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
    out["ran"] = set()
    for p in parts:
        out["ran"] |= p["ran"]
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


def _analyze_all(files: list[str], droot: str, jobs: int, timeout: float, log) -> dict:
    if jobs > 1 and len(files) >= 2 * jobs:
        import concurrent.futures

        chunks = [files[i::jobs] for i in range(jobs)]
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
            parts = list(pool.map(analyze_chunk, chunks, [droot] * jobs, [timeout] * jobs))
        return _merge(parts)
    return analyze_chunk(files, droot, timeout, log)


def _place(f: dict) -> tuple:
    return (f["path"], f["line"], f["col"], f["code"], f["confidence"])


def run_source(name: str, root: str, jobs: int, timeout: float, log, entries: dict, order_check=False) -> dict:
    """Analyze the folder `root` (source `name` of the reviewed list) and time ast.parse over it.
    order_check: analyze it a second time in the reverse order; a finding of one pass only depends on
    what the process analyzed before (the engine's state leaking between files) and is marked unstable."""
    files = [display(p) for p in python_files(root)]
    droot = display(root)
    lines = 0
    for p in files:
        with open(p, "rb") as fh:
            lines += fh.read().count(b"\n")
    log(f"{name}: {len(files)} files, {lines} lines; analyzing ...")

    gc.collect()
    wall0 = time.perf_counter()
    res = _analyze_all(files, droot, jobs, timeout, log)
    wall = time.perf_counter() - wall0
    unstable: set = set()
    if order_check:
        log(f"{name}: analyzing again in the reverse order ...")
        again = _analyze_all(files[::-1], droot, jobs, timeout, None)
        first, second = {_place(f) for f in res["findings"]}, {_place(f) for f in again["findings"]}
        unstable = first ^ second
        res["findings"] = res["findings"] + [f for f in again["findings"] if _place(f) in second - first]

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

    # as `gradaudit check FOLDER` reports (check/runner.py): what a file's analysis saw only running a
    # function alone gives way when another file's analysis with training steps ran that function
    ran = res["ran"]
    findings = _dedupe([f for f in res["findings"] if not (f["unit"] and tuple(f["unit"]) in ran)])
    for f in findings:
        del f["unit"]
    for f in findings:  # keyed like the reviewed list: relative to the source's folder
        f["unstable"] = _place(f) in unstable
        f["path"] = os.path.relpath(f["path"], droot).replace(os.sep, "/")
    rv = realcode.review(name, findings, entries)
    for f in findings:
        e = entries.get(realcode.key_of(name, f))
        f["verdict"] = None if e is None else e.verdict
        f["reason"] = None if e is None else e.reason
        f["source_line"] = realcode.source_line(root, f["path"], f["line"])
    by_code = collections.Counter((f["code"], f["confidence"]) for f in findings)
    return {
        "package": name,
        "root": root,
        "files": len(files),
        "lines": lines,
        "jobs": jobs,
        "analysis_seconds": res["seconds"],
        "analysis_wall_seconds": wall,
        "parse_seconds": parse_s,
        "ratio": res["seconds"] / parse_s if parse_s else None,
        "analysis_cpu_seconds": res["cpu"],
        "parse_cpu_seconds": parse_cpu,
        "cpu_ratio": res["cpu"] / parse_cpu if parse_cpu else None,
        "crashes": res["crashes"],
        "parse_errors": res["parse_errors"],
        "findings_by_code": {f"{c}/{conf}": n for (c, conf), n in sorted(by_code.items())},
        "findings": findings,
        "verdicts": rv.counts(),
        "order_checked": order_check,
        "unstable": sum(1 for f in findings if f["unstable"]),
        "gone": [e.format() for e in rv.gone],
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
    print(f"\n=== {r['package']}  ({display(r['root'])})")
    ratio = f"{r['ratio']:.1f}x" if r["ratio"] is not None else "n/a"
    cpu = f" (cpu {r['cpu_ratio']:.1f}x)" if r.get("cpu_ratio") else ""
    wall = ""
    if r["jobs"] > 1:
        wall = f"  (wall {r['analysis_wall_seconds']:.2f} s with {r['jobs']} jobs)"
    print(
        f"files {r['files']}   lines {r['lines']}   analysis {r['analysis_seconds']:.2f} s{wall}   "
        f"ast.parse {r['parse_seconds']:.2f} s   ratio {ratio}{cpu}   crashes {len(r['crashes'])}   "
        f"parse errors {len(r['parse_errors'])}"
    )
    if r["findings_by_code"]:
        cells = collections.defaultdict(dict)
        for key, n in r["findings_by_code"].items():
            code, conf = key.split("/")
            cells[code][conf] = n
        print(
            "findings:  "
            + "   ".join(
                f"{code} {c.get('confirmed', 0)} confirmed / {c.get('suspicious', 0)} suspicious"
                for code, c in sorted(cells.items())
            )
        )
    else:
        print("findings:  none")
    if r["order_checked"]:
        print(f"order check: {r['unstable']} finding(s) reported in one file order only")
    v = r["verdicts"]
    print(
        "verdicts:  "
        + "   ".join(
            f"{conf}: true {v[conf]['true']}, false {v[conf]['false']}, unreviewed {v[conf]['unreviewed']}"
            for conf in ("confirmed", "suspicious")
        )
    )
    if r["slowest_files"]:
        print(
            "slowest files: "
            + ", ".join(f"{s['path'].rsplit('/', 1)[-1]} {s['seconds']:.2f}s" for s in r["slowest_files"][:5])
        )
    for c in r["crashes"]:
        where = f"  [{c['where']}]" if c.get("where") else ""
        print(f"CRASH {c['path']}: {c['error']}{where}")
    for e in r["parse_errors"]:
        print(f"PARSE ERROR {e['path']}:{e['line']}: {e['error']}")
    for conf in ("confirmed", "suspicious"):
        these = [f for f in r["findings"] if f["confidence"] == conf]
        print(f"{conf} findings ({len(these)}):")
        for f in these:
            verdict = (
                "unreviewed"
                if f["verdict"] is None
                else f"reviewed {'TRUE' if f['verdict'] else 'FALSE'}: {f['reason']}"
            )
            flag = "UNSTABLE (one order only) " if f["unstable"] else ""
            print(
                f"  {f['path']}:{f['line']}: {flag}{f['code']} {f['message']}\n"
                f"      {f['line']:>5} | {f['source_line'].strip()}\n      {verdict}"
            )
    for line in r["gone"]:
        print(f"  no longer reported: {line}")


def print_update(reports: list[dict]) -> None:
    todo = [(r, f) for r in reports for f in r["findings"] if f["verdict"] is None]
    print(
        f"\n# ---- {len(todo)} unreviewed finding(s) in the format of tests/realcode/reviewed.txt: "
        "give each a verdict (true/false) and a reason, then paste"
    )
    for r, f in todo:
        print(realcode.proposal(r["package"], f, r["root"]))
    for line in realcode.gone_report([realcode.parse_entry(g) for r in reports for g in r["gone"]]):
        print(("\n" if line.startswith("# ----") else "") + line)


def sources(args, log) -> list[tuple[str, str]]:
    """(name in the reviewed list, folder) of every source the arguments name, fetched as needed."""
    packages = [realcode.parse_spec(p) for p in (args.packages or [])]  # main() moved folders away
    if args.pinned:
        packages += realcode.load_sources()
    if not packages and not args.folders:
        packages = [realcode.Package(n) for n in DEFAULT_PACKAGES]
    out = []
    for p in packages:
        try:
            root, version = realcode.fetch(p, log)
        except realcode.FetchError as exc:
            out.append((p.label, exc))
            continue
        out.append((dataclasses.replace(p, version=version).label, root))
    for folder in args.folders:
        folder = os.path.abspath(folder)
        out.append(
            (
                os.path.basename(folder.rstrip(os.sep)),
                folder if os.path.isdir(folder) else FileNotFoundError(f"no folder {folder}"),
            )
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*", metavar="FOLDER", help="source folders (a repository's checkout)")
    ap.add_argument(
        "--packages",
        nargs="+",
        metavar="NAME[==VERSION]",
        help="PyPI packages (default: " + " ".join(DEFAULT_PACKAGES) + " when nothing else is given)",
    )
    ap.add_argument(
        "--pinned",
        action="store_true",
        help="the pinned packages of the real-code regression test (tests/realcode/sources.toml)",
    )
    ap.add_argument(
        "--order-check",
        action="store_true",
        help="analyze each source again in the reverse file order and flag findings of one order only",
    )
    ap.add_argument(
        "--update",
        action="store_true",
        help="print the unreviewed findings in the format of tests/realcode/reviewed.txt",
    )
    ap.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        metavar="N",
        help="worker processes per package, each with its own Program (default 1: in-process)",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SEC",
        help="count a file that takes longer as a crash (0: no limit; default 120)",
    )
    ap.add_argument("--json", metavar="OUT", help="write all numbers, crashes and findings to OUT")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)
    # `--packages a b FOLDER`: argparse gives the folder to --packages; it is a folder all the same
    args.folders += [p for p in args.packages or [] if os.path.isdir(p)]
    args.packages = [p for p in args.packages or [] if not os.path.isdir(p)]
    for p in args.packages:
        try:
            realcode.parse_spec(p)
        except ValueError as exc:
            ap.error(str(exc))

    def log(msg):
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    import gradaudit.analysis as ga

    load = " load average {:.2f} {:.2f} {:.2f},".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""
    print(
        f"gradaudit real-code run (python {sys.version.split()[0]},{load} {os.cpu_count()} cpus, "
        f"jobs {max(1, args.jobs)}, gradaudit {engine_stamp()} from {os.path.dirname(ga.__file__)})"
    )
    print(
        "times: time.perf_counter wall seconds summed over files (cpu: time.process_time); "
        "ast.parse timed with gc disabled, as the engine interprets"
    )
    entries = realcode.load_reviewed()
    reports, failures = [], {}
    for name, root in sources(args, log):
        try:
            if isinstance(root, Exception):
                raise root
            r = run_source(name, root, max(1, args.jobs), args.timeout, log, entries, args.order_check)
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
    verdicts = {
        conf: {k: sum(r["verdicts"][conf][k] for r in reports) for k in ("true", "false", "unreviewed")}
        for conf in ("confirmed", "suspicious")
    }
    if args.update:
        print_update(reports)
    unstable = sum(r["unstable"] for r in reports)
    print(
        f"\nSUMMARY: {len(reports)} sources, {tot_files} files, {tot_lines} lines, analysis {tot_a:.2f} s, "
        f"ast.parse {tot_p:.2f} s, ratio {ratio}, crashes {tot_crash}, findings {tot_conf} confirmed / "
        f"{tot_susp} suspicious"
        + (f", peak RSS {rss:.0f} MiB" if rss else "")
        + "".join(
            f"; {conf} true {v['true']} / false {v['false']} / unreviewed {v['unreviewed']}"
            for conf, v in verdicts.items()
        )
        + (f"; unstable (one file order only) {unstable}" if args.order_check else "")
        + (f", failed: {', '.join(failures)}" if failures else "")
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "python": sys.version.split()[0],
                    "engine": engine_stamp(),
                    "packages": reports,
                    "failures": failures,
                    "summary": {
                        "files": tot_files,
                        "lines": tot_lines,
                        "analysis_seconds": tot_a,
                        "parse_seconds": tot_p,
                        "crashes": tot_crash,
                        "confirmed": tot_conf,
                        "suspicious": tot_susp,
                        "verdicts": verdicts,
                        "peak_rss_mib": rss,
                    },
                },
                fh,
                indent=2,
            )
        log(f"wrote {args.json}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
