#!/usr/bin/env python
"""Run gradaudit over real gradient bugs that public projects fixed (benchmarks/real_bugs.toml).

    python benchmarks/real_bugs.py [--split dev|test|held|held2|...|held28|all] [--mode file|project|both]
                                   [--mirrors DIR] [--gradaudit BIN] [--only ID ...]
                                   [--tolerance N] [--timeout SEC] [--jobs N] [--python PY]
                                   [--json OUT] [--verbose]

For each bug of the manifest, the buggy version (`parent`) and the fixed version (`fix`) are read
from a git mirror of the repository (`MIRRORS/owner+name/repo`, a bare git directory or a checkout
with .git, the layout of the search tool's `fetch`) and written into a temporary folder: the Python
files and notebooks of the commit with the files that configure a project (pyproject.toml,
setup.cfg, setup.py, .gitignore). Nothing fetched is written under this repository, and the
temporary folders are removed after each bug.

Two modes, each on both versions:
  file     `gradaudit check SPOT_FILE...` in the checkout: only the bug's files are given.
  project  `gradaudit check .` at the checkout's root: the whole repository.

A bug is *found* in a mode when a finding of the buggy version is in a spot's file, carries one of
the spot's codes and lies within --tolerance lines (default 2) of one of the spot's lines. Its
confidence (confirmed / suspicious) is reported. The fixed version is *quiet* at the spot when no
finding with a spot code lies within the tolerance of the spot's lines as they map into the fixed
file (unchanged lines follow the diff; a changed line maps to the lines that replaced it); a
confirmed finding there is counted as a *false confirmed* finding.

The summary gives, per split, mode and family: bugs run, found (recall), found confirmed, fixed
versions quiet, and false confirmed findings at the spot in the fixed version. Bugs whose mirror
or commits are missing are listed and left out of the figures.

Needs only the standard library, git, and a gradaudit executable (default: the one installed
beside this Python, else `gradaudit` on PATH).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "real_bugs.toml")
FAMILIES = ("graph-break", "lifecycle", "backward", "numerical")
# dev: for development; test: the first held-out half (run once, spent);
# held, held2, held3, held4: mined later, run once each
SPLITS = (
    "dev",
    "test",
    "held",
    "held2",
    "held3",
    "held4",
    "held5",
    "held6",
    "held7",
    "held8",
    "held9",
    "held10",
    "held11",
    "held12",
    "held13",
    "held14",
    "held15",
    "held16",
    "held17",
    "held18",
    "held19",
    "held20",
    "held21",
    "held22",
    "held23",
    "held24",
    "held25",
    "held26",
    "held27",
    "held28",
)
# What a checkout keeps: the analysed sources and what makes a folder a project.
KEEP_SUFFIXES = (".py", ".pyi", ".ipynb")
KEEP_NAMES = ("pyproject.toml", "setup.cfg", "setup.py", ".gitignore")


# ---------------------------------------------------------------- manifest


@dataclasses.dataclass(frozen=True)
class Spot:
    path: str
    lines: tuple[int, ...]
    codes: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Bug:
    id: str
    repo: str
    fix: str
    parent: str
    family: str
    codes: tuple[str, ...]
    split: str
    thread: str
    summary: str
    spots: tuple[Spot, ...]
    # a real, fixed defect that no rule of the catalog covers (`outside_catalog = true`): run and
    # listed, not counted in recall
    outside: bool = False


def load_manifest(path: str) -> list[Bug]:
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    bugs = []
    for entry in data["bug"]:
        spots = tuple(Spot(s["path"], tuple(s["lines"]), tuple(s["codes"])) for s in entry["spot"])
        bugs.append(
            Bug(
                id=entry["id"],
                repo=entry["repo"],
                fix=entry["fix"],
                parent=entry["parent"],
                family=entry["family"],
                codes=tuple(entry["codes"]),
                split=entry["split"],
                thread=entry.get("thread", ""),
                summary=entry["summary"],
                spots=spots,
                outside=bool(entry.get("outside_catalog", False)),
            )
        )
    problems = validate(bugs)
    if problems:
        raise SystemExit("manifest problems:\n  " + "\n  ".join(problems))
    return bugs


def validate(bugs: list[Bug]) -> list[str]:
    problems = []
    seen = set()
    for b in bugs:
        if b.id in seen:
            problems.append(f"{b.id}: duplicate id")
        seen.add(b.id)
        if b.family not in FAMILIES:
            problems.append(f"{b.id}: unknown family {b.family!r}")
        if b.split not in SPLITS:
            problems.append(f"{b.id}: split must be one of {', '.join(SPLITS)}")
        for sha in (b.fix, b.parent):
            if not re.fullmatch(r"[0-9a-f]{40}", sha):
                problems.append(f"{b.id}: commit {sha!r} is not a full sha")
        if not b.spots:
            problems.append(f"{b.id}: no spot")
        for s in b.spots:
            if not s.lines or not s.codes:
                problems.append(f"{b.id}: spot {s.path} needs lines and codes")
            if not set(s.codes) <= set(b.codes):
                problems.append(f"{b.id}: spot codes {s.codes} not in {b.codes}")
    return problems


# ---------------------------------------------------------------- git


def mirror_dir(mirrors: str, repo: str) -> str:
    path = os.path.join(mirrors, repo.replace("/", "+", 1), "repo")
    # the fetch tool gives a bare repository there, or, for some snapshots, a checkout's .git
    return os.path.join(path, ".git") if os.path.isdir(os.path.join(path, ".git")) else path


def git(gitdir: str, *args: str, data: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", "-C", gitdir, *args],
        input=data,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:2])}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def has_commit(gitdir: str, sha: str) -> bool:
    proc = subprocess.run(
        ["git", "-C", gitdir, "cat-file", "-e", sha + "^{commit}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return proc.returncode == 0


def kept(path: str) -> bool:
    return path.endswith(KEEP_SUFFIXES) or os.path.basename(path) in KEEP_NAMES


def checkout(gitdir: str, sha: str, dest: str) -> list[str]:
    """Write the kept files of commit `sha` under `dest`; returns the paths whose blobs the mirror
    lacks (a snapshot may leave out its largest files)."""
    listing = git(gitdir, "ls-tree", "-r", "-z", sha)
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, path = record.split(b"\t", 1)
        mode, kind, oid = meta.split()
        name = path.decode("utf-8", errors="surrogateescape")
        if kind == b"blob" and mode != b"120000" and kept(name):
            entries.append((oid.decode(), name))
    missing = []
    if not entries:
        return missing
    batch = git(gitdir, "cat-file", "--batch", data="".join(o + "\n" for o, _ in entries).encode())
    pos = 0
    for _oid, name in entries:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] == b"missing":
            missing.append(name)
            continue
        size = int(header[2])
        content = batch[pos : pos + size]
        pos += size + 1  # the blob is followed by a newline
        target = os.path.join(dest, name)
        if os.path.relpath(target, dest).startswith(".."):
            continue  # a path that would escape the checkout
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(content)
    return missing


def line_map(gitdir: str, parent: str, fix: str, path: str) -> list[tuple[int, int, int, int]]:
    """The hunks of `git diff -U0 parent fix -- path` as (old_start, old_len, new_start, new_len)."""
    out = git(gitdir, "diff", "-U0", "--no-color", parent, fix, "--", path).decode(errors="replace")
    hunks = []
    for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", out, re.M):
        a, n, b, k = m.groups()
        hunks.append((int(a), int(n if n is not None else 1), int(b), int(k if k is not None else 1)))
    return hunks


def map_line(hunks: list[tuple[int, int, int, int]], line: int) -> list[int]:
    """Where a line of the buggy file is in the fixed file: its new number when unchanged, else
    the lines that replaced it (or the line where the removed text was)."""
    shift = 0
    for a, n, b, k in hunks:
        old_end = a + n - 1 if n else a
        if n and a <= line <= old_end:
            return list(range(b, b + k)) if k else [max(b, 1)]
        if (n and line > old_end) or (not n and line > a):
            shift += k - n
    return [line + shift]


# ---------------------------------------------------------------- gradaudit


@dataclasses.dataclass(frozen=True)
class Run:
    findings: tuple[dict, ...]
    error: str  # '' when the run completed
    seconds: float


def run_gradaudit(
    binary: str, root: str, targets: list[str], timeout: float, jobs: int, python: str | None = None
) -> Run:
    cmd = [binary, "check", *targets, "--format", "json", "--no-progress", "--exit-zero", "--no-cache"]
    cmd += ["-j", str(jobs)]
    if python:
        cmd += ["--python", python]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=root, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Run((), f"timeout after {timeout:.0f}s", time.monotonic() - start)
    seconds = time.monotonic() - start
    try:
        report = json.loads(proc.stdout.decode("utf-8", errors="replace"))
    except json.JSONDecodeError:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
        return Run((), f"exit {proc.returncode}, no JSON: {' | '.join(tail)}", seconds)
    return Run(tuple(file_lines(f, root) for f in report.get("findings", ())), "", seconds)


# a cell's source list opening (one line per source line follows), or an empty one on its line
_SOURCE_KEY = re.compile(r'^\s*"source":\s*\[\s*(?:\],?\s*)?$')


def source_starts(text: str) -> list[int] | None:
    """The 1-based line of a notebook's JSON text where each cell's first source line is, in cell
    order: nbformat writes a cell's `"source"` as a list, one line of the cell per line of the file.
    None when the file is written otherwise (the count of lists differs from the count of cells)."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return None
    starts = [i + 2 for i, line in enumerate(text.splitlines()) if _SOURCE_KEY.match(line)]
    return starts if len(starts) == len(cells) else None


def file_lines(f: dict, root: str) -> dict:
    """A finding in a notebook carries the cell's index and a line of that cell; the manifest's
    spots are lines of the notebook file (what its diff maps): the finding's line in the file."""
    cell = f.get("cell")
    path = f.get("path", "")
    if not isinstance(cell, dict) or not path.endswith(".ipynb") or not isinstance(f.get("line"), int):
        return f
    try:
        with open(os.path.join(root, path), encoding="utf-8") as fh:
            starts = source_starts(fh.read())
    except OSError:
        return f
    index = cell.get("index")
    if starts is None or not isinstance(index, int) or not 0 <= index < len(starts):
        return f
    return {**f, "line": starts[index] + f["line"] - 1, "cell_line": f["line"]}


def norm(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def at_spot(findings, spot: Spot, lines, tolerance: int) -> list[dict]:
    want = norm(spot.path)
    return [
        f
        for f in findings
        if norm(f.get("path", "")) == want
        and f.get("code") in spot.codes
        and any(abs(f.get("line", -(10**9)) - ln) <= tolerance for ln in lines)
    ]


# ---------------------------------------------------------------- one bug


@dataclasses.dataclass
class ModeResult:
    found: bool = False
    confidence: str = ""  # of the best match in the buggy version
    match: str = ""  # code:path:line of that match
    fixed_quiet: bool = True
    fixed_confirmed: int = 0  # confirmed findings at the spot in the fixed version
    fixed_match: str = ""
    error: str = ""
    seconds: float = 0.0
    spot_file_findings: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class BugResult:
    bug: Bug
    status: str  # 'ran' or why not
    missing_blobs: list[str] = dataclasses.field(default_factory=list)
    modes: dict[str, ModeResult] = dataclasses.field(default_factory=dict)


def describe(f: dict) -> str:
    return f"{f.get('code')}:{f.get('path')}:{f.get('line')} ({f.get('confidence')})"


def evaluate(bug: Bug, args) -> BugResult:
    gitdir = mirror_dir(args.mirrors, bug.repo)
    if not os.path.isdir(gitdir):
        return BugResult(bug, f"no mirror at {gitdir}")
    for sha in (bug.parent, bug.fix):
        if not has_commit(gitdir, sha):
            return BugResult(bug, f"mirror lacks commit {sha[:12]}")
    result = BugResult(bug, "ran")
    spot_files = sorted({s.path for s in bug.spots})
    maps = {p: line_map(gitdir, bug.parent, bug.fix, p) for p in spot_files}
    with tempfile.TemporaryDirectory(prefix=f"realbug-{bug.id}-") as tmp:
        roots = {}
        for version, sha in (("buggy", bug.parent), ("fixed", bug.fix)):
            root = os.path.join(tmp, version)
            os.makedirs(root)
            missing = checkout(gitdir, sha, root)
            result.missing_blobs += [f"{version}:{m}" for m in missing]
            roots[version] = root
        for p in spot_files:
            if not os.path.isfile(os.path.join(roots["buggy"], p)):
                result.status = f"spot file {p} absent from the buggy checkout"
                return result
        for mode in args.modes:
            mr = ModeResult()
            for version in ("buggy", "fixed"):
                root = roots[version]
                if mode == "file":
                    targets = [p for p in spot_files if os.path.isfile(os.path.join(root, p))]
                else:
                    targets = ["."]
                run = run_gradaudit(args.gradaudit, root, targets, args.timeout, args.jobs, args.python)
                mr.seconds += run.seconds
                if run.error:
                    mr.error = (mr.error + f"; {version}: " if mr.error else f"{version}: ") + run.error
                    continue
                if version == "buggy":
                    hits = [f for s in bug.spots for f in at_spot(run.findings, s, s.lines, args.tolerance)]
                    if hits:
                        best = sorted(hits, key=lambda f: f.get("confidence") != "confirmed")[0]
                        mr.found, mr.confidence, mr.match = True, best.get("confidence", ""), describe(best)
                    mr.spot_file_findings = [describe(f) for f in run.findings if norm(f.get("path", "")) in spot_files]
                else:
                    hits = []
                    for s in bug.spots:
                        mapped = sorted({m for ln in s.lines for m in map_line(maps[s.path], ln)})
                        hits += at_spot(run.findings, s, mapped, args.tolerance)
                    mr.fixed_quiet = not hits
                    mr.fixed_confirmed = sum(1 for f in hits if f.get("confidence") == "confirmed")
                    mr.fixed_match = ", ".join(describe(f) for f in hits)
            result.modes[mode] = mr
    return result


# ---------------------------------------------------------------- report


def print_bug(r: BugResult, verbose: bool) -> None:
    b = r.bug
    head = f"{b.id:24} {b.split:4} {b.family:11} {','.join(b.codes):13}"
    if r.status != "ran":
        print(f"{head} NOT RUN: {r.status}")
        return
    parts = []
    for mode, mr in r.modes.items():
        if mr.error and not mr.found:
            state = "error"
        else:
            state = f"found({mr.confidence})" if mr.found else "missed"
        fixed = "fixed-quiet" if mr.fixed_quiet else f"fixed-NOT-quiet({mr.fixed_confirmed} confirmed)"
        parts.append(f"{mode}: {state:20} {fixed}")
    print(f"{head} " + " | ".join(parts))
    if verbose:
        for s in b.spots:
            print(f"    spot {s.path}:{','.join(map(str, s.lines))} expects {','.join(s.codes)}")
        for mode, mr in r.modes.items():
            if mr.match:
                print(f"    {mode} match: {mr.match}")
            if mr.fixed_match:
                print(f"    {mode} in fixed version at the spot: {mr.fixed_match}")
            if mr.error:
                print(f"    {mode} error: {mr.error}")
            print(
                f"    {mode} findings in the spot files ({len(mr.spot_file_findings)}): "
                + ("; ".join(mr.spot_file_findings[:12]) or "none")
            )
        if r.missing_blobs:
            print(f"    blobs absent from the mirror: {len(r.missing_blobs)} (e.g. {r.missing_blobs[0]})")


def summary(results: list[BugResult], modes: list[str]) -> list[dict]:
    rows = []
    ran = [r for r in results if r.status == "ran"]
    for split in sorted({r.bug.split for r in ran}):
        for mode in modes:
            for fam in (*FAMILIES, "all"):
                group = [
                    r
                    for r in ran
                    if r.bug.split == split and not r.bug.outside and (fam == "all" or r.bug.family == fam)
                ]
                if not group:
                    continue
                mrs = [r.modes[mode] for r in group]
                rows.append(
                    {
                        "split": split,
                        "mode": mode,
                        "family": fam,
                        "bugs": len(group),
                        "found": sum(m.found for m in mrs),
                        "found_confirmed": sum(m.found and m.confidence == "confirmed" for m in mrs),
                        "fixed_quiet": sum(m.fixed_quiet for m in mrs),
                        "false_confirmed": sum(m.fixed_confirmed for m in mrs),
                        "errors": sum(bool(m.error) for m in mrs),
                    }
                )
    return rows


def print_summary(rows: list[dict]) -> None:
    print()
    print(
        f"{'split':5} {'mode':7} {'family':11} {'bugs':>4} {'found':>5} {'recall':>6} "
        f"{'confirmed':>9} {'fixed quiet':>11} {'false conf.':>11} {'errors':>6}"
    )
    for r in rows:
        recall = r["found"] / r["bugs"]
        print(
            f"{r['split']:5} {r['mode']:7} {r['family']:11} {r['bugs']:4d} {r['found']:5d} {recall:6.2f} "
            f"{r['found_confirmed']:9d} {r['fixed_quiet']:7d}/{r['bugs']:<3d} {r['false_confirmed']:11d} "
            f"{r['errors']:6d}"
        )


def default_gradaudit() -> str:
    beside = os.path.join(os.path.dirname(sys.executable), "gradaudit")
    return beside if os.path.exists(beside) else (shutil.which("gradaudit") or "gradaudit")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", default=MANIFEST)
    ap.add_argument("--mirrors", default="/work/.mirror", help="folder of owner+name/repo git mirrors")
    ap.add_argument("--split", choices=(*SPLITS, "all"), default="dev")
    ap.add_argument("--mode", choices=("file", "project", "both"), default="both")
    ap.add_argument("--gradaudit", default=default_gradaudit(), help="the gradaudit executable")
    ap.add_argument("--only", action="append", default=[], metavar="ID", help="run only these bugs")
    ap.add_argument("--tolerance", type=int, default=2, help="lines either side of a spot (default 2)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per gradaudit run")
    ap.add_argument("--jobs", type=int, default=1, help="gradaudit worker processes per run")
    ap.add_argument(
        "--python",
        metavar="PY",
        help="an interpreter whose environment holds the projects' libraries (gradaudit reads them from "
        "there, as for a user who installed them); default: gradaudit's own environment",
    )
    ap.add_argument("--json", metavar="OUT", help="write the per-bug results and the summary as JSON")
    ap.add_argument("--verbose", action="store_true", help="print matches and findings in the spot files")
    ap.add_argument("--list", action="store_true", help="list the selected bugs and exit")
    args = ap.parse_args(argv)
    args.modes = ["file", "project"] if args.mode == "both" else [args.mode]

    bugs = load_manifest(args.manifest)
    chosen = [b for b in bugs if args.split == "all" or b.split == args.split]
    if args.only:
        unknown = set(args.only) - {b.id for b in bugs}
        if unknown:
            ap.error(f"unknown ids: {', '.join(sorted(unknown))}")
        chosen = [b for b in chosen if b.id in args.only]
    if args.list:
        for b in chosen:
            print(f"{b.id:24} {b.split:4} {b.family:11} {','.join(b.codes):13} {b.repo}@{b.fix[:12]}")
        return 0
    libs = args.python or "gradaudit's own environment"
    print(
        f"gradaudit: {args.gradaudit}; {len(chosen)} bugs ({args.split}); modes: {', '.join(args.modes)}; "
        f"tolerance ±{args.tolerance} lines; libraries from {libs}",
        flush=True,
    )
    results = []
    for b in chosen:
        r = evaluate(b, args)
        results.append(r)
        print_bug(r, args.verbose)
        sys.stdout.flush()
    rows = summary(results, args.modes)
    print_summary(rows)
    outside = [r.bug.id for r in results if r.bug.outside]
    if outside:
        print(f"\nnot counted, no catalog rule covers them ({len(outside)}): " + ", ".join(outside))
    not_run = [r for r in results if r.status != "ran"]
    if not_run:
        print(f"\nnot run ({len(not_run)}): " + ", ".join(f"{r.bug.id} ({r.status})" for r in not_run))
    if args.json:
        payload = {
            "gradaudit": args.gradaudit,
            "tolerance": args.tolerance,
            "bugs": [
                {
                    "id": r.bug.id,
                    "split": r.bug.split,
                    "family": r.bug.family,
                    "codes": list(r.bug.codes),
                    "outside_catalog": r.bug.outside,
                    "status": r.status,
                    "missing_blobs": r.missing_blobs,
                    "modes": {m: dataclasses.asdict(mr) for m, mr in r.modes.items()},
                }
                for r in results
            ],
            "summary": rows,
        }
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
