"""`path:line:col: GA101 [confirmed] message` lines (`path:cell N:line:col:` in a notebook), the
training steps not understood and how many were, the environment whose libraries were read (when
it mattered), then a summary."""

from __future__ import annotations

from ..source.notebook import IDENTITY
from .coverage import text_lines


def render(
    findings, errors, files_checked: int, show_fixes=False, color=False, locator=IDENTITY, libraries=(), coverage=()
) -> str:
    lines = []
    for f in findings:
        where = locator.span(f.span)
        code = (
            f"\033[1;31m{f.code}\033[0m"
            if color and f.confidence == "confirmed"
            else (f"\033[1;33m{f.code}\033[0m" if color else f.code)
        )
        lines.append(f"{where.label()}: {code} [{f.confidence}] {f.message}")
        if show_fixes and f.fix is not None:
            lines.append(f"    fix ({f.fix.applicability}): {f.fix.message}")
    # which training steps were understood, and why not the others (model/coverage.py)
    lines += text_lines(coverage, locator)
    # which environment's libraries were read, and the imported ones it lacks (imported.py)
    lines += [u.sentence() for u in libraries if u.worth_saying]
    n = len(findings)
    confirmed = sum(1 for f in findings if f.confidence == "confirmed")
    fixable = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe" and f.fix.edits)
    if n:
        summary = (
            f"Found {n} finding{'s' if n != 1 else ''} ({confirmed} confirmed, {n - confirmed} suspicious) "
            f"in {files_checked} file{'s' if files_checked != 1 else ''} checked."
        )
        if fixable:
            summary += f" {fixable} fixable with --fix."
        lines.append(summary)
    else:
        lines.append(f"No findings in {files_checked} file{'s' if files_checked != 1 else ''} checked.")
    tail = problem_counts(errors)
    missed = sum(1 for r in coverage if not r.understood)
    if missed:  # no verdict was made on them: the summary says so
        tail = [_n(missed, "training step") + " not understood"] + tail
    if tail:
        # the summary never contradicts the errors on stderr: it counts them
        lines[-1] = lines[-1][:-1] + "; " + ", ".join(tail) + "."
    return "\n".join(lines) + "\n"


def _n(count, one, many=None):
    return f"{count} {one if count == 1 else (many or one + 's')}"


def problem_counts(problems) -> list[str]:
    """'1 parse error', 'analysis incomplete in 2 files', ...: what the summary line adds."""
    by_kind: dict = {}
    for p in problems:
        by_kind.setdefault(p.kind, set()).add(p.path if p.kind != "parse" else (p.path, p.line))
    out = []
    if "parse" in by_kind:
        out.append(_n(len(by_kind["parse"]), "parse error"))
    unread = len(by_kind.get("read", ())) + len(by_kind.get("missing", ()))
    if unread:
        out.append(_n(unread, "path") + " could not be read")
    if "internal" in by_kind:
        out.append(_n(len(by_kind["internal"]), "internal error"))
    if "write" in by_kind:
        out.append(_n(len(by_kind["write"]), "file") + " could not be written")
    if "incomplete" in by_kind:
        out.append("analysis incomplete in " + _n(len(by_kind["incomplete"]), "file"))
    return out
