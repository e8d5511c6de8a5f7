"""`path:line:col: GA101 [confirmed] message` lines, then a summary."""
from __future__ import annotations


def render(findings, errors, files_checked: int, show_fixes=False, color=False) -> str:
    lines = []
    for f in findings:
        s = f.span
        code = f"\033[1;31m{f.code}\033[0m" if color and f.confidence == "confirmed" else (
            f"\033[1;33m{f.code}\033[0m" if color else f.code)
        lines.append(f"{s.path}:{s.line}:{s.col + 1}: {code} [{f.confidence}] {f.message}")
        if show_fixes and f.fix is not None:
            lines.append(f"    fix ({f.fix.applicability}): {f.fix.message}")
    n = len(findings)
    confirmed = sum(1 for f in findings if f.confidence == "confirmed")
    fixable = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe" and f.fix.edits)
    if n:
        summary = (f"Found {n} finding{'s' if n != 1 else ''} ({confirmed} confirmed, {n - confirmed} suspicious) "
                   f"in {files_checked} file{'s' if files_checked != 1 else ''} checked.")
        if fixable:
            summary += f" {fixable} fixable with --fix."
        lines.append(summary)
    else:
        lines.append(f"No findings in {files_checked} file{'s' if files_checked != 1 else ''} checked.")
    return "\n".join(lines) + "\n"
