"""The command line: `gradaudit check`, `gradaudit rule`, `gradaudit rules`, `gradaudit server`."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..source.prebuilt import dataclass, field
from .common import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    add_engine_arguments,
    emit,
    load_config,
    report_problems,
    status,
    time_budget,
)

COMMANDS = ("check", "rule", "rules", "probe", "audit", "server")


def _parser(command: str | None = "*") -> argparse.ArgumentParser:
    """The command line's parser. Only `command`'s own arguments are added ("*": every command's):
    the others' would import what that command alone needs (the probe's and the server's)."""
    ap = argparse.ArgumentParser(
        prog="gradaudit", description="Find where gradient flow is broken in PyTorch training code, statically."
    )
    ap.add_argument("--version", action="version", version=f"gradaudit {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    def wanted(name):
        return command == "*" or command == name

    c = sub.add_parser(
        "check",
        help="check files and folders",
        description="Check Python files (folders are "
        "walked recursively, skipping virtualenvs, build folders, .git and what .gitignore "
        "files ignore).",
    )
    if wanted("check"):
        _check_arguments(c)
    r = sub.add_parser("rule", help="print a rule's documentation")
    if wanted("rule"):
        r.add_argument("rule", metavar="CODE_OR_NAME")
    rs = sub.add_parser("rules", help="list all rules")
    if wanted("rules"):
        rs.add_argument("--format", choices=("text", "json"), default="text")
    probe = sub.add_parser(
        "probe",
        help="write a pytest gradient-flow test for a training script",
        description="Write a pytest file that runs each training step of PATH "
        "under gradaudit.probe and checks gradient flow.",
    )
    if wanted("probe"):
        from ..report.gradflow import add_arguments as add_probe_arguments

        add_probe_arguments(probe)
    audit = sub.add_parser(
        "audit",
        help="write the audit report of the training steps under PATH",
        description="One report for the training steps under PATH: the graph, "
        "findings, minimal corrections, verification, valid look-alikes.",
    )
    if wanted("audit"):
        from .audit import add_arguments as add_audit_arguments

        add_audit_arguments(audit)
    server = sub.add_parser("server", help="run the language server (stdio)")
    if wanted("server"):
        from gradaudit.server.__main__ import add_arguments  # argparse only: pygls loads when the server runs

        add_arguments(server)
    return ap


def _check_arguments(c) -> None:
    c.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    c.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    c.add_argument(
        "--select",
        action="append",
        metavar="CODES",
        help="only these rules: codes, prefixes (GA1) or names, comma-separated",
    )
    c.add_argument("--extend-select", action="append", metavar="CODES", help="add rules to the selection")
    c.add_argument("--ignore", action="append", metavar="CODES", help="skip these rules")
    c.add_argument("--fix", action="store_true", help="apply the fixes marked safe")
    c.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff: apply unsafe fixes too")
    c.add_argument("--diff", action="store_true", help="print the fixes as a diff; change nothing")
    c.add_argument("--show-fixes", action="store_true", help="describe the available fix under each finding")
    c.add_argument("--config", metavar="PYPROJECT", help="read [tool.gradaudit] from this file")
    c.add_argument("--isolated", action="store_true", help="ignore configuration files")
    c.add_argument(
        "--no-respect-gitignore",
        action="store_true",
        help="also check what .gitignore files ignore when walking folders",
    )
    c.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    c.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    c.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE")
    c.add_argument("-j", "--jobs", type=int, default=0, metavar="N", help="worker processes (default: auto)")
    add_engine_arguments(c)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = _parser(next((a for a in argv if not a.startswith("-")), None))
    if not argv:
        ap.print_help()
        return EXIT_ERROR
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:
        return EXIT_CLEAN if exc.code == 0 else EXIT_ERROR
    try:
        if args.command == "check":
            return cmd_check(args)
        if args.command == "rule":
            return cmd_rule(args)
        if args.command == "rules":
            return cmd_rules(args)
        if args.command == "server":
            return cmd_server(args)
        if args.command == "probe":
            from ..report.gradflow import run_command

            return run_command(args)
        if args.command == "audit":
            from .audit import run_command

            return run_command(args)
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR
    ap.print_help()
    return EXIT_ERROR


# ---------------------------------------------------------------- rules


def cmd_rule(args) -> int:
    from ..rules import find_rule

    rule = find_rule(args.rule)
    if rule is None:
        from ..check.schema import did_you_mean, rule_choices

        near = did_you_mean(args.rule, rule_choices(args.rule))
        hint = f" (did you mean {near}?)" if near else ""
        print(f"gradaudit: unknown rule {args.rule!r}{hint} (see `gradaudit rules`)", file=sys.stderr)
        return EXIT_ERROR
    print(rule.documentation())
    return EXIT_CLEAN


def cmd_rules(args) -> int:
    from ..rules import RULES

    if args.format == "json":
        import json

        print(
            json.dumps(
                [
                    {"code": r.code, "name": r.name, "family": r.family, "summary": r.summary, "fix": r.fix_available}
                    for r in RULES
                ],
                indent=2,
            )
        )
        return EXIT_CLEAN
    width = max(len(r.name) for r in RULES)
    for r in RULES:
        print(f"{r.code}  {r.name:<{width}}  {r.family:<12}  {r.summary}")
    return EXIT_CLEAN


def cmd_server(args) -> int:
    try:
        from gradaudit.server.__main__ import check, run
    except ImportError as exc:
        print(f"gradaudit: the language server is not available: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return check() if args.check else run(args.tcp)


# ---------------------------------------------------------------- check


@dataclass
class Checked:
    """What a check found: findings, problems (problems.py), the files looked at, how many analysed."""

    findings: list
    problems: list
    files: list
    analysed: int
    notebooks: dict = field(default_factory=dict)  # path -> Notebook (source/notebook.py)
    libraries: list = field(default_factory=list)  # imported.LibraryUse: the environments read
    coverage: list = field(default_factory=list)  # coverage.StepCoverage: each training step, understood or not

    @property
    def locator(self):
        from ..source.notebook import Locator

        return Locator(self.notebooks)


def check_paths(paths, config, jobs=0, progress=False, time_budget=None, python=None, cache=True) -> Checked:
    """The CLI's core, reusable by tools."""
    from ..check.overlaps import resolve_overlaps
    from ..check.runner import analyze_paths
    from ..model.findings import Finding

    run = analyze_paths(paths, config, jobs, progress, time_budget, python, cache)
    findings = sorted(resolve_overlaps([f for fs in run.kept for f in fs], run.supersedes), key=Finding.sort_key)
    return Checked(findings, run.problems, run.files, run.analysed, run.notebooks, run.libraries, run.coverage)


def cmd_check(args) -> int:
    config = load_config(args)
    if config is None:
        return EXIT_ERROR
    show_progress = not args.no_progress and sys.stderr.isatty()
    budget = time_budget(args, config)
    checked = check_paths(args.paths, config, args.jobs, show_progress, budget, args.python, not args.no_cache)
    report_problems(checked.problems)
    if args.diff or args.fix:
        return _do_fixes(args, checked, config, budget)
    return _report(args, checked, checked.problems)


def _report(args, checked: Checked, problems) -> int:
    """Write the report (stdout or -o) and return the exit status."""
    from ..output import FORMATS

    out = FORMATS[args.format](
        checked.findings,
        problems,
        checked.analysed,
        show_fixes=args.show_fixes,
        color=args.format == "text" and sys.stdout.isatty() and not args.output_file,
        locator=checked.locator,
        libraries=checked.libraries,
        coverage=checked.coverage,
    )
    problems = list(problems)
    if not emit(out, args.output_file):
        problems.append(None)
    return status(args, checked.findings, problems)


def _do_fixes(args, checked: Checked, config, budget) -> int:
    import difflib

    from ..check.problems import Problem
    from ..rules.fixes import fix_source
    from ..source.program import ParseError, read_source, write_source

    by_path: dict = {}
    for f in checked.findings:
        if f.fix is None or not f.fix.edits:
            continue
        if f.fix.applicability != "safe" and not args.unsafe_fixes:
            continue
        paths = {e.span.path for e in f.fix.edits}
        if len(paths) != 1:
            continue
        by_path.setdefault(paths.pop(), []).append(f)
    diffs: list[str] = []
    changed: list[str] = []
    failed: list = []
    fixed_count = 0
    for path, fs in sorted(by_path.items()):
        nb = checked.notebooks.get(path)
        if nb is not None:
            outcome = _fix_notebook(args, path, nb, fs, diffs, changed, failed)
            fixed_count += outcome
            continue
        try:
            source, encoding = read_source(path)
        except (OSError, ParseError) as exc:
            failed.append(Problem("write", path, f"could not read for fixing: {_why(exc)}"))
            continue
        new, applied = fix_source(source, fs, only_safe=not args.unsafe_fixes)
        if not applied or new == source:
            continue
        if args.diff:
            fixed_count += len(applied)
            diffs.append(
                "".join(
                    difflib.unified_diff(
                        source.splitlines(True), new.splitlines(True), fromfile=f"a/{path}", tofile=f"b/{path}"
                    )
                )
            )
            continue
        try:
            write_source(path, new, encoding)
        except (OSError, UnicodeError) as exc:
            failed.append(Problem("write", path, f"could not write fixes: {_why(exc)}"))
            continue
        fixed_count += len(applied)
        changed.append(path)
    report_problems(failed)
    if args.diff:
        ok = emit("".join(diffs), args.output_file)
        print(f"Would fix {fixed_count} finding{'s' if fixed_count != 1 else ''}.", file=sys.stderr)
        problems = checked.problems + failed + ([] if ok else [None])
        code = status(args, [], problems)
        if code == EXIT_ERROR:
            return code
        return EXIT_FINDINGS if fixed_count and not args.exit_zero else code
    # after writing: report what is left
    after = check_paths(args.paths, config, args.jobs, False, budget, args.python, not args.no_cache)
    code = _report(args, after, after.problems + failed)
    print(
        f"Fixed {fixed_count} finding{'s' if fixed_count != 1 else ''} in {len(changed)} "
        f"file{'s' if len(changed) != 1 else ''}.",
        file=sys.stderr,
    )
    return code


def _fix_notebook(args, path, nb, findings, diffs, changed, failed) -> int:
    """--fix / --diff on a notebook: the fixed cells written back (notebook_fixes.py), or shown as
    a diff per cell. Returns the number of findings fixed."""
    from ..check.notebook_fixes import cell_diff, fix_notebook
    from ..check.problems import Problem
    from ..source.notebook import read_notebook
    from ..source.program import ParseError, write_source

    try:
        current, text = read_notebook(path)
    except (OSError, ParseError) as exc:
        failed.append(Problem("write", path, f"could not read for fixing: {_why(exc)}"))
        return 0
    if current.source != nb.source:
        failed.append(Problem("write", path, "changed since it was checked: not fixed"))
        return 0
    outcome = fix_notebook(current, text, findings, only_safe=not args.unsafe_fixes)
    if not outcome.applied:
        return 0
    if args.diff:
        diffs += [cell_diff(path, change) for change in outcome.changes]
        return len(outcome.applied)
    assert outcome.text is not None  # fix_notebook was given the text
    try:
        write_source(path, outcome.text, "utf-8")
    except (OSError, UnicodeError) as exc:
        failed.append(Problem("write", path, f"could not write fixes: {_why(exc)}"))
        return 0
    changed.append(path)
    return len(outcome.applied)


def _why(exc) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return getattr(exc, "msg", None) or str(exc)


if __name__ == "__main__":
    sys.exit(main())
