#!/usr/bin/env python
"""Real, published training code under `gradaudit check`, compared with a list of findings reviewed by hand.

    python tests/realcode/realcode.py [--update] [--only NAME ...] [-j N]

The sources are pinned PyPI packages (`sources.toml` beside this file), fetched with
`pip download --no-deps` into a cache folder (benchmarks/.cache, git-ignored; GRADAUDIT_REALCODE_CACHE
moves it) and unpacked (only their .py files, optionally a subset). Each is checked by the CLI, as a
user would run it: `gradaudit check . --format json -j N --isolated` in the unpacked folder.

Every finding is looked up in `reviewed.txt` by (source, path, line, code): the source carries the
pinned version, so a line number means one line of one release. A reviewed finding has a verdict
(true: a real defect; false: a false alarm) and one line of reasoning. What fails the regression
test (tests/realcode/test_realcode.py): a crash, a confirmed finding nobody reviewed, a confirmed
finding reviewed as false. Suspicious findings are listed and counted, never fatal.

`--update` prints every finding not in the list (and every entry no longer reported) in the
list's format, each with its message and source line, for a reviewer to give a verdict and paste.
benchmarks/real_code.py uses the same fetching and the same list for its review output.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SOURCES_TOML = os.path.join(HERE, "sources.toml")
REVIEWED_TXT = os.path.join(HERE, "reviewed.txt")


def cache_dir() -> str:
    return os.environ.get("GRADAUDIT_REALCODE_CACHE") or os.path.join(REPO, "benchmarks", ".cache")


# ---------------------------------------------------------------- sources


@dataclass(frozen=True)
class Package:
    """A PyPI package to check: `version` None means the newest (benchmarks only, never the test)."""

    name: str
    version: str | None = None
    # gitignore-like globs on the wheel's paths, the last match wins ("!" excludes); () keeps every file
    files: tuple = ()
    note: str = ""

    @property
    def label(self) -> str:
        return f"{self.name}=={self.version}" if self.version else self.name


def parse_spec(spec: str) -> Package:
    """`name` or `name==version`; anything else (a path, a URL, a range) is refused, so that pip is
    never asked to build a local project."""
    m = re.fullmatch(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?:==([A-Za-z0-9.+!-]+))?", spec.strip())
    if m is None:
        raise ValueError(f"not a package name or name==version: {spec!r}")
    return Package(m.group(1), m.group(2))


def load_sources(path: str = SOURCES_TOML) -> list[Package]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    out = []
    for i, entry in enumerate(data.get("package", [])):
        unknown = set(entry) - {"name", "version", "files", "note"}
        if unknown or "name" not in entry or "version" not in entry:
            raise ValueError(
                f"{path}: package #{i + 1}: needs name and version, knows files and note (unknown: {sorted(unknown)})"
            )
        out.append(Package(entry["name"], entry["version"], tuple(entry.get("files", ())), entry.get("note", "")))
    return out


def _glob(pattern: str) -> re.Pattern:
    """`*` and `?` stay within one path segment, `**` crosses them."""
    out = []
    for part in re.split(r"(\*\*|\*|\?)", pattern):
        out.append({"**": ".*", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part)))
    return re.compile("".join(out) + r"\Z")


def keeps(package: Package, path: str) -> bool:
    if not package.files:
        return True
    keep = False
    for pattern in package.files:
        neg = pattern.startswith("!")
        if _glob(pattern[1:] if neg else pattern).match(path):
            keep = not neg
    return keep


class FetchError(Exception):
    """A package could not be downloaded (offline, unknown version, no wheel) or unpacked."""


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _wheel_parts(path: str) -> tuple[str, str]:
    name, version = os.path.basename(path).split("-")[:2]
    return _norm(name), version


def find_wheel(package: Package, wheels: str) -> str | None:
    """The cached wheel of `package` (of its version, or the newest file when unpinned)."""
    hits = [
        p
        for p in glob.glob(os.path.join(wheels, "*.whl"))
        if _wheel_parts(p)[0] == _norm(package.name)
        and (package.version is None or _wheel_parts(p)[1] == package.version)
    ]
    return max(hits, key=os.path.getmtime) if hits else None


def download(packages: list[Package], log=lambda msg: None) -> None:
    """Download the wheels of `packages` not in the cache yet, with one pip call."""
    wheels = os.path.join(cache_dir(), "wheels")
    missing = [p for p in packages if find_wheel(p, wheels) is None]
    if not missing:
        return
    os.makedirs(wheels, exist_ok=True)
    log(f"downloading {', '.join(p.label for p in missing)} ...")
    # --only-binary: a wheel is plain files to unzip, an sdist would need a build; --ignore-requires-python:
    # the code is read, never run, so a release made for other Pythons (cleanrl: < 3.11) is fine
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--ignore-requires-python",
        "--disable-pip-version-check",
        "--dest",
        wheels,
    ] + [p.label for p in missing]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchError(f"pip download failed: {exc}") from exc
    if proc.returncode != 0:
        # pip's own errors only, not its notes on where it looked
        tail = "\n".join(
            line
            for line in proc.stdout.strip().splitlines()
            if not line.startswith(("WARNING: Location", "Looking in"))
        )
        raise FetchError("pip download failed:\n" + "\n".join(tail.splitlines()[-6:]))
    for p in missing:
        if find_wheel(p, wheels) is None:
            raise FetchError(f"pip download of {p.label} left no wheel in {wheels}")


def unpack(package: Package) -> tuple[str, str]:
    """(folder of the unpacked .py files, version) of a downloaded package."""
    wheel = find_wheel(package, os.path.join(cache_dir(), "wheels"))
    if wheel is None:
        raise FetchError(f"no wheel of {package.label} in the cache")
    version = _wheel_parts(wheel)[1]
    tag = f"{_norm(package.name)}-{version}" + ("-subset" if package.files else "")
    dest = os.path.join(cache_dir(), "src", tag)
    stamp = json.dumps({"wheel": os.path.basename(wheel), "files": list(package.files)})
    marker = os.path.join(dest, ".unpacked-from")
    try:
        with open(marker, encoding="utf-8") as fh:
            if fh.read() == stamp:
                return dest, version
    except OSError:
        pass
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    try:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                if info.filename.endswith(".py") and keeps(package, info.filename):
                    zf.extract(info, dest)
    except (OSError, zipfile.BadZipFile) as exc:
        raise FetchError(f"cannot unpack {wheel}: {exc}") from exc
    with open(marker, "w", encoding="utf-8") as fh:
        fh.write(stamp)
    return dest, version


def fetch(package: Package, log=lambda msg: None) -> tuple[str, str]:
    download([package], log)
    return unpack(package)


# ---------------------------------------------------------------- checking


@dataclass(frozen=True)
class CheckRun:
    source: str  # the key of the reviewed list: name==version, or a folder's name
    root: str
    files: int
    lines: int
    seconds: float  # wall
    cpu: float  # user + system of the CLI and its workers: the figure a loaded machine leaves fair
    findings: tuple  # JSON findings of the CLI, paths relative to root
    crashes: str  # the CLI's stderr when it reported internal errors, else ""
    parse_errors: tuple  # "path:line:col: error: could not parse: ..." lines


def coverage(root: str) -> tuple[int, int]:
    """(files, lines) that `gradaudit check root` covers: the CLI's own discovery."""
    from gradaudit.analysis.check.discovery import discover

    files, _ = discover([root])
    lines = 0
    for p in files:
        with open(p, "rb") as fh:
            lines += fh.read().count(b"\n")
    return len(files), lines


def check(source: str, root: str, jobs: int = 0, timeout: float = 1200) -> CheckRun:
    """`gradaudit check . --format json` in `root`, through the CLI's entry point."""
    cmd = [
        sys.executable,
        "-m",
        "gradaudit.analysis.app.cli",
        "check",
        ".",
        "--format",
        "json",
        "--isolated",
        "--exit-zero",
        "--no-progress",
        "-j",
        str(jobs),
    ]
    t0, c0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout)
    seconds, cpu = time.perf_counter() - t0, _children_cpu() - c0
    parse_errors = tuple(line for line in proc.stderr.splitlines() if ": error: could not parse:" in line)
    crashes = ""
    if proc.returncode != 0:
        crashes = proc.stderr.strip() or f"gradaudit exited {proc.returncode} with no message"
    try:
        findings = tuple(json.loads(proc.stdout)["findings"]) if proc.stdout.strip() else ()
    except (ValueError, KeyError) as exc:
        findings = ()
        crashes = (crashes + "\n" if crashes else "") + f"unreadable JSON output: {exc}"
    files, lines = coverage(root)
    return CheckRun(source, root, files, lines, seconds, cpu, findings, crashes, parse_errors)


def _children_cpu() -> float:
    try:
        import resource
    except ImportError:  # not on Windows: no CPU figure
        return 0.0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def source_line(root: str, path: str, line: int) -> str:
    try:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            for n, text in enumerate(fh, 1):
                if n == line:
                    return text.rstrip("\r\n")
    except OSError:
        pass
    return ""


# ---------------------------------------------------------------- the reviewed list

FIELDS = "source | path:line | code | confidence | verdict | reason"


@dataclass(frozen=True)
class Entry:
    source: str
    path: str
    line: int
    code: str
    confidence: str  # as reviewed; a change is shown, the verdict still applies
    verdict: bool  # True: a real defect
    reason: str

    @property
    def key(self) -> tuple:
        return (self.source, self.path, self.line, self.code)

    def format(self) -> str:
        return " | ".join(
            [
                self.source,
                f"{self.path}:{self.line}",
                self.code,
                self.confidence,
                "true" if self.verdict else "false",
                self.reason,
            ]
        )


class ListError(ValueError):
    pass


def parse_entry(text: str, where: str = "") -> Entry:
    parts = [p.strip() for p in text.split("|", 5)]
    if len(parts) != 6:
        raise ListError(f"{where}: expected `{FIELDS}`")
    source, place, code, confidence, verdict, reason = parts
    path, _, line = place.rpartition(":")
    if not path or not line.isdigit():
        raise ListError(f"{where}: `{place}` is not path:line")
    if not re.fullmatch(r"GA\d{3}", code):
        raise ListError(f"{where}: `{code}` is not a rule code")
    if confidence not in ("confirmed", "suspicious"):
        raise ListError(f"{where}: confidence must be confirmed or suspicious, not `{confidence}`")
    if verdict not in ("true", "false"):
        raise ListError(f"{where}: verdict must be true or false, not `{verdict}`")
    if not reason or reason.startswith("TODO"):
        raise ListError(f"{where}: a verdict needs one line of reasoning")
    return Entry(source, path, int(line), code, confidence, verdict == "true", reason)


def load_reviewed(path: str = REVIEWED_TXT) -> dict:
    """{key: Entry}; blank lines and `#` comments are skipped."""
    out: dict = {}
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            entry = parse_entry(text, f"{os.path.basename(path)}:{n}")
            if entry.key in out:
                raise ListError(
                    f"{os.path.basename(path)}:{n}: {entry.source} {entry.path}:{entry.line} "
                    f"{entry.code} is listed twice"
                )
            out[entry.key] = entry
    return out


@dataclass(frozen=True)
class Review:
    """The findings of one source against the list."""

    source: str
    reviewed: tuple  # (finding, Entry)
    unreviewed: tuple  # findings with no entry
    gone: tuple  # entries of this source that were not reported

    def _pick(self, confidence, verdict=None):
        return [
            (f, e)
            for f, e in self.reviewed
            if f["confidence"] == confidence and (verdict is None or e.verdict is verdict)
        ]

    @property
    def false_confirmed(self) -> list:
        return self._pick("confirmed", False)

    @property
    def unreviewed_confirmed(self) -> list:
        return [f for f in self.unreviewed if f["confidence"] == "confirmed"]

    def counts(self) -> dict:
        c = {}
        for conf in ("confirmed", "suspicious"):
            c[conf] = {
                "true": len(self._pick(conf, True)),
                "false": len(self._pick(conf, False)),
                "unreviewed": sum(1 for f in self.unreviewed if f["confidence"] == conf),
            }
        return c


def key_of(source: str, finding: dict) -> tuple:
    return (source, finding["path"], finding["line"], finding["code"])


def review(source: str, findings, entries: dict) -> Review:
    done, todo, seen = [], [], set()
    for f in sorted(findings, key=lambda f: (f["path"], f["line"], f["code"])):
        k = key_of(source, f)
        if k in seen:  # two columns on one line: one entry covers them
            continue
        seen.add(k)
        if k in entries:
            done.append((f, entries[k]))
        else:
            todo.append(f)
    gone = tuple(e for k, e in sorted(entries.items()) if e.source == source and k not in seen)
    return Review(source, tuple(done), tuple(todo), gone)


def proposal(source: str, finding: dict, root: str | None) -> str:
    """An unreviewed finding in the list's format, verdict left to the reviewer, with its evidence."""
    text = source_line(root, finding["path"], finding["line"]) if root else ""
    head = f"# {finding['code']} {finding['confidence']}: {finding['message']}"
    if text:
        head += f"\n#   {finding['line']:>5} | {text.strip()}"
    return (
        head
        + "\n"
        + " | ".join(
            [source, f"{finding['path']}:{finding['line']}", finding["code"], finding["confidence"], "?", "TODO"]
        )
    )


def gone_report(entries) -> list[str]:
    """The entries no longer reported, in the list's format, with what their absence means."""
    fixed = [e for e in entries if not e.verdict]
    lost = [e for e in entries if e.verdict]
    out = []
    if fixed:
        out.append(
            f"# ---- {len(fixed)} false alarm(s) not reported this time (fixed, the line moved, or it "
            "comes and goes with what the process analyzed before: benchmarks/real_code.py --order-check "
            "shows that): delete these lines once gone for good; their reductions stay as tests"
        )
        out += [e.format() for e in fixed]
    if lost:
        out.append(
            f"# ---- {len(lost)} real defect(s) no longer reported: a lost detection unless the "
            "engine now anchors it elsewhere; check why before deleting"
        )
        out += [e.format() for e in lost]
    return out


def failures(reviews: list, runs: list) -> list[str]:
    """What makes the regression test fail, one paragraph each."""
    out = []
    for r in runs:
        if r.crashes:
            out.append(f"{r.source}: gradaudit crashed:\n{r.crashes}")
    unrev = [(rv.source, f) for rv in reviews for f in rv.unreviewed_confirmed]
    if unrev:
        out.append(
            f"{len(unrev)} confirmed finding(s) not in {os.path.relpath(REVIEWED_TXT, REPO)}: review "
            "each (open the code; false ones get a reduction under tests/data/realcode_reductions/), "
            "then add it with a verdict. `python tests/realcode/realcode.py --update` prints them "
            "with their source lines:\n"
            + "\n".join(
                f"  {s} | {f['path']}:{f['line']} | {f['code']} | confirmed | ? | {f['message']}" for s, f in unrev
            )
        )
    false = [(rv.source, f, e) for rv in reviews for f, e in rv.false_confirmed]
    if false:
        out.append(
            f"{len(false)} confirmed finding(s) reviewed as false alarms (confirmed means proven):\n"
            + "\n".join(f"  {e.format()}\n    now: {f['message']}" for s, f, e in false)
        )
    return out


# ---------------------------------------------------------------- report


def summary_lines(runs: list, reviews: list) -> list[str]:
    out = []
    for r, rv in zip(runs, reviews):
        c = rv.counts()
        out.append(
            f"{r.source:<26} {r.files:>5} files {r.lines:>8} lines {r.seconds:>6.1f} s (cpu {r.cpu:>5.1f} s)  "
            + "   ".join(
                f"{conf} {sum(c[conf].values())} (true {c[conf]['true']}, false {c[conf]['false']}, "
                f"unreviewed {c[conf]['unreviewed']})"
                for conf in ("confirmed", "suspicious")
            )
            + (f"   parse errors {len(r.parse_errors)}" if r.parse_errors else "")
            + ("   CRASHED" if r.crashes else "")
        )
    files = sum(r.files for r in runs)
    lines = sum(r.lines for r in runs)
    secs = sum(r.seconds for r in runs)
    cpu = sum(r.cpu for r in runs)
    tot = {
        conf: {k: sum(rv.counts()[conf][k] for rv in reviews) for k in ("true", "false", "unreviewed")}
        for conf in ("confirmed", "suspicious")
    }
    out.append(
        f"real code: {len(runs)} sources, {files} files, {lines} lines, {secs:.1f} s (cpu {cpu:.1f} s); "
        + "; ".join(
            f"{conf} {sum(t.values())} (true {t['true']}, false {t['false']}, unreviewed {t['unreviewed']})"
            for conf, t in tot.items()
        )
        + f"; crashes {sum(1 for r in runs if r.crashes)}"
    )
    return out


def run_all(packages: list[Package], jobs: int = 0, log=lambda msg: None) -> tuple[list, list]:
    """Fetch, check and review every package: (runs, reviews). Raises FetchError when offline."""
    entries = load_reviewed()
    download(packages, log)
    runs, reviews = [], []
    for p in packages:
        root, version = unpack(p)
        source = dataclasses.replace(p, version=version).label
        log(f"checking {source} ...")
        run = check(source, root, jobs)
        runs.append(run)
        reviews.append(review(source, run.findings, entries))
    return runs, reviews


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--update", action="store_true", help="print unreviewed findings and stale entries in the list's format"
    )
    ap.add_argument("--only", nargs="+", metavar="NAME", help="only these packages of sources.toml")
    ap.add_argument("-j", "--jobs", type=int, default=0, metavar="N", help="gradaudit check -j N (default: auto)")
    args = ap.parse_args(argv)
    packages = [p for p in load_sources() if not args.only or p.name in args.only]

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    try:
        runs, reviews = run_all(packages, args.jobs, log)
    except FetchError as exc:
        print(f"cannot fetch the pinned packages: {exc}", file=sys.stderr)
        return 2
    for r, rv in zip(runs, reviews):
        for f, e in rv.reviewed:
            flag = "" if f["confidence"] == e.confidence else f" (reviewed as {e.confidence})"
            print(
                f"{r.source} {f['path']}:{f['line']}: {f['code']} [{f['confidence']}]{flag} "
                f"{'TRUE' if e.verdict else 'FALSE'}: {e.reason}"
            )
    if args.update:
        todo = [(r, f) for r, rv in zip(runs, reviews) for f in rv.unreviewed]
        print(
            f"\n# ---- {len(todo)} unreviewed finding(s): give each a verdict (true/false) and a reason, "
            f"then paste into {os.path.relpath(REVIEWED_TXT, REPO)}"
        )
        for r, f in todo:
            print(proposal(r.source, f, r.root))
        for line in gone_report([e for rv in reviews for e in rv.gone]):
            print(("\n" if line.startswith("# ----") else "") + line)
    print()
    for line in summary_lines(runs, reviews):
        print(line)
    problems = failures(reviews, runs)
    for p in problems:
        print("\nFAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
