"""The audit as Markdown: five sections, Mermaid graphs in ```mermaid fences."""

from __future__ import annotations

from .. import __version__
from ..output.coverage import headline, reason_text
from . import graph as G
from .collect import Audit, observed

SECTIONS = (
    "1. Training-step graph",
    "2. Findings",
    "3. Minimal corrections",
    "4. Verification",
    "5. Valid look-alikes checked",
)


def _fence(text: str, lang: str = "") -> list[str]:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return [ticks + lang, text.rstrip("\n"), ticks]


def premise_text(p) -> str:
    """`✓ premise`, or `✗ premise: not proven, <what could not be seen>`."""
    return f"✓ {p.text}" if p.holds else f"✗ {p.text}: not proven, {p.unseen}"


def summary_line(a: Audit) -> str:
    n = len(a.entries)
    confirmed = sum(1 for e in a.entries if e.finding.confidence == "confirmed")
    steps = (
        headline(a.coverage)
        if a.coverage
        else (f"{len(a.graphs)} training step{'s' if len(a.graphs) != 1 else ''}" if a.graphs else headline(()))
    )
    return (
        f"{steps} in {a.files_checked} "
        f"file{'s' if a.files_checked != 1 else ''}; {n} finding{'s' if n != 1 else ''} ({confirmed} confirmed, "
        f"{n - confirmed} suspicious); {len(a.corrections)} correction{'s' if len(a.corrections) != 1 else ''}; "
        f"{len(a.lookalikes)} valid look-alike{'s' if len(a.lookalikes) != 1 else ''}"
    )


def problem_text(p) -> str:
    """What could not be done, and what it means for the report (Markdown)."""
    if p.kind == "incomplete":
        # the message names the budget's flag
        return f"`{p.where()}`: {p.message}; what it did not reach is not part of this report"
    if p.kind == "parse":
        return f"`{p.where()}`: could not parse: {p.message}"
    if p.kind == "internal":
        return f"`{p.path}`: internal error while checking it; it is not part of this report"
    return f"`{p.where()}`: {p.message}"


def environment_text(u) -> str:
    """Whose libraries the models were read from, and what that means for the imported ones that
    are not there (Markdown)."""
    text = f"Libraries were read from `{u.where()}` ({u.why})"
    if u.found:
        text += ": " + ", ".join(f"`{n}`" for n in u.found)
    if u.lacking:
        text += "; not installed there: " + ", ".join(f"`{n}`" for n in u.lacking)
        text += (
            " (the models of those are known only from gradaudit's table and from what the code does with "
            "them; if they are installed in another environment, name it with `--python`)"
        )
    return text + "."


def missed_lines(a: Audit) -> list[str]:
    """The steps found in code a budget kept the analysis from reaching (Markdown)."""
    out = []
    for r in a.missed:
        out.append(f"### Not reached: backward() of `{r.loss}` in `{r.function}` ({a.where(r.span.path, r.span.line)})")
        out.append("")
        out.append("- **not understood**: no verdict is made on this step")
        out += [f"  - {reason_text(x)}" for x in r.reasons]
        out.append("")
    return out


def render(a: Audit) -> str:
    out = [
        f"# gradaudit audit: {', '.join(f'`{p}`' for p in a.paths)}",
        "",
        f"gradaudit {__version__} · {summary_line(a)}.",
        "",
    ]
    for p in a.problems:
        out.append(f"> {problem_text(p)}")
    if a.problems:
        out.append("")
    for u in a.libraries:
        out += [environment_text(u), ""]

    out += [f"## {SECTIONS[0]}", ""]
    if not a.graphs:
        out += [a.no_step, ""]
    for g in a.graphs:
        out.append(f"### Step {g.id[1:]}: `{g.loss}.backward()` in `{g.function}` ({a.where(g.path, g.line)})")
        out.append("")
        out += G.text(g)[1:]
        out.append("")
        out += _fence(G.mermaid(g), "mermaid")
        out.append("")
    out += missed_lines(a)

    out += [f"## {SECTIONS[1]}", ""]
    if not a.entries:
        out += ["None: no rule's conditions held on the training steps above.", ""]
    else:
        out += [
            "Ranked by severity (critical: torch raises; high: parameters never train or values go "
            "non-finite; medium: training runs on wrong gradients; low: memory), then confidence.",
            "",
        ]
    for i, e in enumerate(a.entries, 1):
        f = e.finding
        out.append(f"### {i}. {f.code} {f.name} — {e.classification} ({e.severity})")
        out.append("")
        out.append(f"- **where**: `{a.where(f.span.path, f.span.line, f.span.col)}` in `{e.function}`")
        out.append(f"- **break**: {f.message}")
        if f.params:
            shown = ", ".join(f"`{p}`" for p in f.params[:12]) + (
                f", … ({len(f.params) - 12} more)" if len(f.params) > 12 else ""
            )
            out.append(f"- **parameters**: {shown}")
        out.append(f"- **why it is not a valid look-alike**: {e.why}")
        if f.premises:
            out.append("- **rests on**:")
            out += [f"  - {premise_text(p)}" for p in f.premises]
        if e.runtime is not None:
            out.append(f"- **runtime check**: {e.runtime.observes}")
        if e.correction is not None:
            out.append(f"- **correction**: [{e.correction + 1}](#correction-{e.correction + 1}) in section 3")
        out.append("- **evidence**:")
        out.append("")
        for x in e.evidence:
            numbers = [a.where(x.path, n).rsplit(":", 1)[1] for n, _ in x.lines]
            width = max((len(n) for n in numbers), default=1)
            body = "\n".join(f"{n:>{width}} | {t}" for n, (_, t) in zip(numbers, x.lines))
            out.append(f"  {x.label} ({a.where(x.path, x.line)}):")
            out.append("")
            out += ["  " + ln for block in _fence(body, "text") for ln in block.split("\n")]
            out.append("")

    out += [f"## {SECTIONS[2]}", ""]
    if not a.corrections:
        out += ["None needed." if not a.entries else "No finding above has an automatic correction.", ""]
    for c in a.corrections:
        mark = "safe" if c.applicability == "safe" else "**unsafe**: check it changes what you meant"
        out.append(f'<a id="correction-{c.index + 1}"></a>')
        out.append(f"### Correction {c.index + 1}: {c.code} at {a.where(c.path, c.line)} ({mark})")
        out.append("")
        out.append(c.message + ("" if c.parses else " — not shown: the edited file would not parse."))
        out.append("")
        if c.parses:
            out += _fence(c.diff, "diff")
            out.append("")

    out += [f"## {SECTIONS[3]}", ""]
    if a.no_defect:
        out += [
            f"No defect found: {a.no_defect}. The gradient assumptions below held statically and deserve a test:",
            "",
        ]
    elif a.partial:
        out += [f"{a.partial}.", ""]
    if not a.no_defect and a.graphs:
        out += [
            "Each training step's probe: `gradaudit probe PATH --emit test_gradflow.py` writes these tests. "
            "They run the real step under `gradaudit.probe`, fail on the defects above that a probe can "
            "observe (each finding's runtime check) and pass once the corrections are applied.",
            "",
        ]
    for c in a.checks:
        g = next(x for x in a.graphs if x.id == c.step)
        out.append(f"### Step {g.id[1:]}: `{g.loss}.backward()` ({a.where(g.path, g.line)})")
        out.append("")
        if c.plan.locatable:
            out.append("The probe asserts:")
            out += [f"- {s}" for s in c.plan.assertions()]
            out.append("")
            out += _fence(c.test, "python")
        else:
            out.append(f"No probe: {c.plan.reason}.")
        out.append("")
        seen_at_runtime = observed(a, c)
        if seen_at_runtime:
            out.append("Findings on this step, at runtime:")
            out += [f"- {s}" for s in seen_at_runtime]
            out.append("")
        out.append("Gradient assumptions that deserve a test:")
        out += [f"- {s}" for s in c.assumptions]
        out.append("")

    out += [f"## {SECTIONS[4]}", ""]
    if not a.lookalikes:
        out += ["Nothing on the training steps' way looked like a defect without being one.", ""]
    for la in a.lookalikes:
        out.append(f"- **{la.kind}** at `{a.where(la.path, la.line)}`: `{la.code}` — {la.judgement}")
    return "\n".join(out).rstrip() + "\n"
