"""Shared test helpers: examples with `# <- GA101` markers, analysis of in-memory sources."""

from __future__ import annotations

import re

from gradaudit.analysis.check.config import Config
from gradaudit.analysis.check.engine import Analyzer

MARK = re.compile(r"\s*#\s*<-\s*(GA\d{3}(?:\s*,\s*GA\d{3})*)\s*$")


def strip_markers(source: str):
    """The example as the analyzer sees it, and the (line, code) pairs its markers expect."""
    lines, expected = [], []
    for n, line in enumerate(source.splitlines(keepends=True), 1):
        body = line.rstrip("\r\n")
        end = line[len(body) :]
        m = MARK.search(body)
        if m:
            for code in re.split(r"\s*,\s*", m.group(1)):
                expected.append((n, code))
            body = body[: m.start()]
        lines.append(body + end)
    return "".join(lines), sorted(expected)


def analyze(source: str, path: str = "example.py", config: Config | None = None, overlays=None):
    return Analyzer(config or Config(), overlays=overlays).analyze_source(path, source)


def found(result):
    return sorted((f.span.line, f.code) for f in result.findings)
