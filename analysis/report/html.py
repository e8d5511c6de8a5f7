"""The audit as one self-contained HTML page: inline CSS and SVG, no script, nothing fetched.

A Content-Security-Policy of `default-src 'none'` (inline styles only) makes the page unable to
load anything even if a path or message in it looked like a URL.
"""

from __future__ import annotations

from html import escape

from .. import __version__
from ..output.coverage import reason_text
from . import graph as G
from .collect import Audit, observed
from .markdown import SECTIONS, environment_text, premise_text, problem_text, summary_line
from .svg import draw

CSS = """
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#263238;max-width:1180px;margin:24px auto;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #cfd8dc;padding-bottom:4px;margin-top:32px}h3{font-size:15px}
code,pre{font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f6f8fa;border:1px solid #e0e6ea;border-radius:4px;padding:8px 10px;overflow-x:auto}
.graph{display:block;margin:8px 0 4px;font:12px ui-monospace,Menlo,Consolas,monospace;overflow:visible}
.graph text{fill:#263238}.graph text.mark{font-weight:600}.graph .unoptimized text.mark{fill:#c62828}
.graph .frozen text.mark{fill:#1565c0}.graph text.cut{fill:#c62828;font-size:11px}
.graph text.stop{fill:#546e7a;font-size:11px}.legend{font-size:12px;margin:0 0 6px}
.finding{border-left:4px solid #90a4ae;padding:2px 12px;margin:14px 0}.finding.critical{border-color:#b71c1c}
.finding.high{border-color:#e65100}.finding.medium{border-color:#f9a825}.finding.low{border-color:#90a4ae}
.tag{display:inline-block;font-size:12px;border-radius:3px;padding:0 6px;margin-right:4px;background:#eceff1}
.tag.unsafe{background:#ffebee;color:#b71c1c}.tag.safe{background:#e8f5e9;color:#1b5e20}
.add{color:#1b5e20;background:#e8f5e9;display:block}.del{color:#b71c1c;background:#ffebee;display:block}
.hunk{color:#6a1b9a;display:block}.muted{color:#607d8b}ul{padding-left:22px}
"""


def _code(text: str) -> str:
    return f"<code>{escape(text)}</code>"


def _md_inline(text: str) -> str:
    """Messages use `code` spans and **bold**: render those two, escape the rest."""
    out, parts = [], text.split("`")
    for i, part in enumerate(parts):
        if i % 2:
            out.append(_code(part))
        else:
            bits = escape(part).split("**")
            out.append("".join(f"<strong>{b}</strong>" if j % 2 else b for j, b in enumerate(bits)))
    return "".join(out)


def _diff(text: str) -> str:
    lines = []
    for ln in text.splitlines():
        cls = (
            "add"
            if ln.startswith("+") and not ln.startswith("+++")
            else "del"
            if ln.startswith("-") and not ln.startswith("---")
            else "hunk"
            if ln.startswith("@@")
            else ""
        )
        lines.append(f'<span class="{cls}">{escape(ln)}</span>' if cls else escape(ln))
    return "<pre>" + "\n".join(lines) + "</pre>"


def _legend(g) -> str:
    """What the cut edges of this graph mean, for the kinds it draws."""
    cuts = [c for m in g.modules for c in m.cut]
    out = []
    if any(not c.valid for c in cuts):
        out.append('<span style="color:#c62828">✂ red dashed</span>: a cut that breaks training (see the findings)')
    if any(c.valid for c in cuts):
        out.append(
            '<span style="color:#546e7a">⊣ grey dashed</span>: a deliberate stop-gradient, checked and valid '
            "(see the list below and the look-alikes)"
        )
    return "; ".join(out)


def _items(lines: list[str]) -> str:
    """A step's text lines (graph.text) as list items; an indented line is an item of the one before."""
    out: list[str] = []
    inner: list[str] = []
    for line in lines:
        if line.startswith("  ") and out:
            inner.append(f"<li>{_md_inline(line.strip().lstrip('- ').strip())}</li>")
            continue
        if inner:
            out[-1] = out[-1][: -len("</li>")] + "<ul>" + "".join(inner) + "</ul></li>"
            inner = []
        out.append(f"<li>{_md_inline(line.lstrip('- ').strip())}</li>")
    if inner:
        out[-1] = out[-1][: -len("</li>")] + "<ul>" + "".join(inner) + "</ul></li>"
    return "".join(out)


def render(a: Audit) -> str:
    title = "gradaudit audit: " + ", ".join(a.paths)
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">gradaudit {__version__} · {escape(summary_line(a))}.</p>',
    ]
    for p in a.problems:
        out.append(f"<p>{_md_inline(problem_text(p))}</p>")
    for u in a.libraries:
        out.append(f'<p class="muted">{_md_inline(environment_text(u))}</p>')

    out.append(f'<h2 id="graph">{escape(SECTIONS[0])}</h2>')
    if not a.graphs:
        out.append(f"<p>{_md_inline(a.no_step)}</p>")
    for g in a.graphs:
        head, *rest = G.text(g)
        out.append(f'<section class="step" id="{g.id}"><h3>Step {g.id[1:]}: {_md_inline(head)}</h3>')
        out.append(draw(g))
        legend = _legend(g)
        if legend:
            out.append(f'<p class="legend muted">{legend}</p>')
        out.append("<ul>" + _items(rest) + "</ul></section>")
    for r in a.missed:
        out.append(
            f'<section class="step missed"><h3>Not reached: backward() of {_code(r.loss)} in {_code(r.function)} '
            f"({escape(a.where(r.span.path, r.span.line))})</h3><p><strong>Not understood:</strong> no verdict is made "
            "on this step</p><ul>"
            + "".join(f"<li>{_md_inline(reason_text(x))}</li>" for x in r.reasons)
            + "</ul></section>"
        )

    out.append(f'<h2 id="findings">{escape(SECTIONS[1])}</h2>')
    if not a.entries:
        out.append("<p>None: no rule's conditions held on the training steps above.</p>")
    for i, e in enumerate(a.entries, 1):
        f = e.finding
        out.append(f'<div class="finding {e.severity}"><h3>{i}. {escape(f.code)} {escape(f.name)}</h3>')
        out.append(
            f'<p><span class="tag">{escape(e.classification)}</span><span class="tag">{e.severity}</span> '
            f"{_code(a.where(f.span.path, f.span.line, f.span.col))} in {_code(e.function)}</p>"
        )
        out.append(f"<p>{_md_inline(f.message)}</p>")
        if f.params:
            out.append(
                "<p>Parameters: "
                + ", ".join(_code(p) for p in f.params[:12])
                + (f" … ({len(f.params) - 12} more)" if len(f.params) > 12 else "")
                + "</p>"
            )
        out.append(f"<p><strong>Why it is not a valid look-alike:</strong> {_md_inline(e.why)}</p>")
        if f.premises:
            out.append(
                "<p><strong>Rests on:</strong></p><ul>"
                + "".join(f"<li>{_md_inline(premise_text(p))}</li>" for p in f.premises)
                + "</ul>"
            )
        if e.runtime is not None:
            out.append(f"<p><strong>Runtime check:</strong> {_md_inline(e.runtime.observes)}</p>")
        for x in e.evidence:
            numbers = [a.where(x.path, n).rsplit(":", 1)[1] for n, _ in x.lines]
            width = max((len(n) for n in numbers), default=1)
            body = "\n".join(f"{n:>{width}} | {t}" for n, (_, t) in zip(numbers, x.lines))
            out.append(
                f'<p class="muted">{_md_inline(x.label)} ({escape(a.where(x.path, x.line))})</p><pre>{escape(body)}</pre>'
            )
        if e.correction is not None:
            out.append(f'<p>Correction: <a href="#correction-{e.correction + 1}">{e.correction + 1}</a></p>')
        out.append("</div>")

    out.append(f'<h2 id="corrections">{escape(SECTIONS[2])}</h2>')
    if not a.corrections:
        out.append(
            "<p>" + ("None needed." if not a.entries else "No finding above has an automatic correction.") + "</p>"
        )
    for c in a.corrections:
        out.append(
            f'<h3 id="correction-{c.index + 1}">Correction {c.index + 1}: {escape(c.code)} at '
            f'{escape(a.where(c.path, c.line))} <span class="tag {c.applicability}">{c.applicability}</span></h3>'
        )
        out.append(
            f"<p>{_md_inline(c.message)}"
            + ("" if c.parses else " — not shown: the edited file would not parse.")
            + "</p>"
        )
        if c.parses:
            out.append(_diff(c.diff))

    out.append(f'<h2 id="verification">{escape(SECTIONS[3])}</h2>')
    if a.no_defect:
        out.append(
            f"<p><strong>No defect found:</strong> {escape(a.no_defect)}. The gradient assumptions below held "
            "statically and deserve a test.</p>"
        )
    elif a.partial:
        out.append(f"<p>{_md_inline(a.partial)}.</p>")
    for c in a.checks:
        g = next(x for x in a.graphs if x.id == c.step)
        out.append(f"<h3>Step {g.id[1:]}: {_code(g.loss + '.backward()')} ({escape(a.where(g.path, g.line))})</h3>")
        if c.plan.locatable:
            out.append(
                "<p>The probe asserts:</p><ul>"
                + "".join(f"<li>{_md_inline(s)}</li>" for s in c.plan.assertions())
                + "</ul>"
            )
            out.append(f"<pre>{escape(c.test)}</pre>")
        else:
            out.append(f"<p>No probe: {_md_inline(c.plan.reason)}.</p>")
        shown = observed(a, c)
        if shown:
            out.append(
                "<p>Findings on this step, at runtime:</p><ul>"
                + "".join(f"<li>{_md_inline(s)}</li>" for s in shown)
                + "</ul>"
            )
        out.append(
            "<p>Gradient assumptions that deserve a test:</p><ul>"
            + "".join(f"<li>{_md_inline(s)}</li>" for s in c.assumptions)
            + "</ul>"
        )

    out.append(f'<h2 id="lookalikes">{escape(SECTIONS[4])}</h2>')
    if not a.lookalikes:
        out.append("<p>Nothing on the training steps' way looked like a defect without being one.</p>")
    else:
        out.append(
            "<ul>"
            + "".join(
                f"<li><strong>{escape(la.kind)}</strong> at {_code(a.where(la.path, la.line))}: {_code(la.code)} — "
                f"{_md_inline(la.judgement)}</li>"
                for la in a.lookalikes
            )
            + "</ul>"
        )
    out.append("</body></html>")
    return "\n".join(out) + "\n"
