"""`gradaudit audit PATH... [-o FILE] [--format md|json|html]`."""
from __future__ import annotations

import os
import sys

FORMATS = ("md", "json", "html")


def add_arguments(ap):
    ap.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    ap.add_argument("-o", "--output-file", metavar="FILE", help="write the report here (default: stdout)")
    ap.add_argument("--format", choices=FORMATS, default=None,
                    help="md (default; .json/.html output files pick their format)")
    ap.add_argument("--select", action="append", metavar="CODES", help="only these rules")
    ap.add_argument("--extend-select", action="append", metavar="CODES", help="add rules to the selection")
    ap.add_argument("--ignore", action="append", metavar="CODES", help="skip these rules")
    ap.add_argument("--config", metavar="PYPROJECT", help="read [tool.gradaudit] from this file")
    ap.add_argument("--isolated", action="store_true", help="ignore configuration files")
    ap.add_argument("-j", "--jobs", type=int, default=0, metavar="N", help="worker processes (default: auto)")
