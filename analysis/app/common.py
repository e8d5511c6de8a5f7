"""What the commands share: the engine's flags, loading the configuration, reporting problems,
writing the report and the exit status (`check` in cli.py, `audit` in audit.py)."""

from __future__ import annotations

import os
import sys

from ..check.budgets import TIME_BUDGET, add_budget_arguments, with_budget_flags

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def add_engine_arguments(c):
    """How files are analysed: the same flags for `check` and `audit`."""
    add_budget_arguments(c)
    c.add_argument(
        "--python",
        metavar="PATH",
        help="the interpreter (or environment folder) whose installed libraries are read for their "
        "models (default: [tool.gradaudit] python, else the active virtualenv, the project's .venv or "
        "venv, the active conda env, else the interpreter running gradaudit)",
    )
    c.add_argument(
        "--no-cache",
        action="store_true",
        help="do not read or write the caches (library summaries, the results of earlier checks)",
    )


def time_budget(args, config=None) -> float | None:
    """Seconds per file: --time-budget, else `time-budget` in [tool.gradaudit], else 60 (0: no limit)."""
    given = args.time_budget
    if given is None:
        given = getattr(config, "time_budget", None) or TIME_BUDGET
    return given if given > 0 else None


def load_config(args):
    from ..check.config import Config, ConfigError, load_config

    if args.isolated:
        cfg = Config(root=os.getcwd())
    else:
        start = args.paths[0] if args.paths else "."
        try:
            cfg = load_config(start, args.config)
        except ConfigError as exc:
            for problem in exc.problems:
                print(f"gradaudit: {problem}", file=sys.stderr)
            return None
    if getattr(args, "python", None):
        from ..libraries.environment import check_python

        why = check_python(args.python)
        if why is not None:
            print(f"gradaudit: --python {why}", file=sys.stderr)
            return None
    from ..check.config import _norm, unknown_selectors
    from ..check.schema import no_rule_matches

    given = _norm(args.select) + _norm(args.ignore) + _norm(args.extend_select)
    bad = unknown_selectors(given)
    if bad:
        print(f"gradaudit: {no_rule_matches(bad)}", file=sys.stderr)
        return None
    cfg = cfg.merged(select=args.select, ignore=args.ignore, extend_select=args.extend_select)
    if args.no_respect_gitignore:
        from ..source.prebuilt import replace

        cfg = replace(cfg, respect_gitignore=False)
    return with_budget_flags(cfg, args)


def report_problems(problems):
    for p in problems:
        print(p.line_text(), file=sys.stderr)
        if p.detail:
            print(p.detail.rstrip(), file=sys.stderr)


def status(args, findings, problems) -> int:
    from ..check.problems import exit_error

    if None in problems or exit_error(p for p in problems if p is not None):
        return EXIT_ERROR
    if getattr(args, "exit_zero", False):  # `audit` has no --exit-zero
        return EXIT_CLEAN
    parse = any(p.kind == "parse" for p in problems)
    return EXIT_FINDINGS if (findings or parse) else EXIT_CLEAN


def emit(text, output_file) -> bool:
    """Write the report; False (after one line on stderr) when it could not be written."""
    if output_file:
        try:
            with open(output_file, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            print(f"gradaudit: could not write {output_file}: {exc.strerror or exc}", file=sys.stderr)
            return False
        return True
    sys.stdout.write(text)
    sys.stdout.flush()
    return True
