"""`gradaudit audit PATH... [-o FILE] [--format md|json|html]`."""

from __future__ import annotations

import os
import sys

from .common import EXIT_ERROR, add_engine_arguments, emit, load_config, report_problems, status, time_budget

FORMATS = ("md", "json", "html")


def add_arguments(ap):
    ap.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    ap.add_argument("-o", "--output-file", metavar="FILE", help="write the report here (default: stdout)")
    ap.add_argument(
        "--format", choices=FORMATS, default=None, help="md (default; .json/.html output files pick their format)"
    )
    ap.add_argument("--select", action="append", metavar="CODES", help="only these rules")
    ap.add_argument("--extend-select", action="append", metavar="CODES", help="add rules to the selection")
    ap.add_argument("--ignore", action="append", metavar="CODES", help="skip these rules")
    ap.add_argument("--config", metavar="PYPROJECT", help="read [tool.gradaudit] from this file")
    ap.add_argument("--isolated", action="store_true", help="ignore configuration files")
    # folders are walked as `gradaudit check` walks them (the configuration reads this flag too)
    ap.add_argument(
        "--no-respect-gitignore",
        action="store_true",
        help="also audit what .gitignore files ignore when walking folders",
    )
    ap.add_argument("-j", "--jobs", type=int, default=0, metavar="N", help="worker processes (default: auto)")
    add_engine_arguments(ap)


def run_command(args) -> int:
    from ..report import collect

    fmt = args.format
    if fmt is None:
        ext = os.path.splitext(args.output_file or "")[1].lower()
        fmt = {".json": "json", ".html": "html", ".htm": "html"}.get(ext, "md")
    config = load_config(args)
    if config is None:
        return EXIT_ERROR
    run = collect.analyze(args.paths, config, args.jobs, time_budget(args, config), args.python, not args.no_cache)
    report_problems(run.problems)
    audit = collect.build(
        args.paths, len(run.files), run.kept, run.problems, run.notebooks, run.libraries, run.coverage
    )
    if fmt == "json":
        from ..report.jsonout import render
    elif fmt == "html":
        from ..report.html import render
    else:
        from ..report.markdown import render
    written = emit(render(audit), args.output_file)
    if written and args.output_file:
        print(f"gradaudit: wrote {args.output_file}", file=sys.stderr)
    return status(args, audit.entries, list(run.problems) + ([] if written else [None]))
