"""Notebook documents (notebookDocument/*): the cells an editor holds, as the engine's notebook
(gradaudit.analysis.source.notebook), and the engine's positions back to cell ranges.

An open notebook is analysed as one document, under its own uri, from the text of its cells in
order: what the client shows lands in the cells (diagnostics, quick fixes, code lenses, hover).
The cells' uris stand as the cells' ids in the engine's notebook, so that a position maps straight
to the cell document holding it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.workspace import Workspace

from gradaudit.analysis.check.engine import Result
from gradaudit.analysis.check.notebook_fixes import fix_notebook
from gradaudit.analysis.model.findings import Finding
from gradaudit.analysis.source.notebook import Cell, Locator, Notebook, Where, notebook_from_cells
from gradaudit.analysis.source.program import ParseError

from .convert import Positions, docs_href, finding_key, line_diff, path_of, severity_for, uri_of
from .diagnostics import COVERAGE, incomplete_diagnostic, parse_diagnostic, step_message, stopped_message
from .documents import Analysis
from .settings import Settings

PYTHON = "python"


def notebook_of(workspace: Workspace, uri: str) -> types.NotebookDocument | None:
    """The open notebook document `uri` is (or holds as a cell); None if there is none."""
    try:
        nb = workspace.get_notebook_document(notebook_uri=uri)
        return nb if nb is not None else workspace.get_notebook_document(cell_uri=uri)
    except (AttributeError, KeyError):
        return None


def virtual(workspace: Workspace, nb_doc: types.NotebookDocument) -> Notebook:
    """The engine's notebook from the cells as the editor holds them now."""
    cells = []
    for cell in nb_doc.cells:
        doc = workspace.get_text_document(cell.document)
        code = cell.kind == types.NotebookCellKind.Code and (doc.language_id or PYTHON) == PYTHON
        cells.append(("code" if code else "markdown", doc.source, cell.document))
    return notebook_from_cells(path_of(nb_doc.uri), cells)


@dataclass(frozen=True)
class CellFinding:
    finding: Finding
    where: Where  # the finding's place, in the cell `where.cell`
    cell: Cell  # where.cell, never None here; its id is the cell document's uri


def cell_findings(result: Result) -> list[CellFinding]:
    """The analysis's findings that lie in the notebook's cells, with their cell positions."""
    nb = result.notebook
    if nb is None:
        return []
    locator = Locator({nb.path: nb})
    out = []
    for f in result.findings:
        if f.span.path != nb.path:
            continue
        w = locator.span(f.span)
        if w.cell is not None:
            out.append(CellFinding(f, w, w.cell))
    return out


def cell_positions(workspace: Workspace, cell_uri: str) -> Positions:
    doc = workspace.get_text_document(cell_uri)
    return Positions(doc.lines, doc.position_codec)


def _range(positions: Positions, w: Where) -> types.Range:
    return types.Range(start=positions.position(w.line, w.col), end=positions.position(w.end_line, w.end_col))


def diagnostics_by_cell(
    workspace: Workspace,
    nb_doc: types.NotebookDocument,
    analysis: Analysis,
    settings: Settings,
    positions_for: Callable[[str], Positions | None],
) -> dict[str, list[types.Diagnostic]]:
    """{cell uri: [Diagnostic]} for every cell of the notebook (empty lists included)."""
    out: dict[str, list[types.Diagnostic]] = {cell.document: [] for cell in nb_doc.cells}
    result = analysis.result
    if result is None:
        first = next(iter(out), None)
        if first is not None:
            out[first].append(incomplete_diagnostic(stopped_message(analysis), cell_positions(workspace, first)))
        return out
    nb = result.notebook
    locator = Locator({nb.path: nb}) if nb is not None else Locator()
    severity = analysis.severity or settings.severity
    for cf in cell_findings(result):
        uri = cf.cell.id
        if uri in out:
            out[uri].append(_diagnostic(workspace, cf, locator, settings, positions_for, severity))
    for e in result.problems:
        w = locator.at(e.path, e.line, max(e.col - 1, 0))
        if w.cell is None or w.cell.id not in out:
            continue
        in_cell = ParseError(e.path, w.line, w.col + 1, e.msg, region=e.region, kind=e.kind)
        out[w.cell.id].append(parse_diagnostic(in_cell, cell_positions(workspace, w.cell.id)))
    if result.gap is not None and result.gap.first is not None:
        w = locator.span(result.gap.first)
        if w.cell is not None and w.cell.id in out:
            out[w.cell.id].append(
                incomplete_diagnostic(result.gap.message(), cell_positions(workspace, w.cell.id), w.line, w.col + 1)
            )
    for rec in result.coverage:  # a training step not understood: information on its backward()
        w = locator.span(rec.span)
        if rec.understood or w.cell is None or w.cell.id not in out:
            continue
        out[w.cell.id].append(
            types.Diagnostic(
                range=_range(cell_positions(workspace, w.cell.id), w),
                message=step_message(rec, editor=True),
                severity=types.DiagnosticSeverity.Information,
                source="gradaudit",
                code="not-understood",
                data={"kind": COVERAGE},
            )
        )
    return out


def _diagnostic(
    workspace: Workspace,
    cf: CellFinding,
    locator: Locator,
    settings: Settings,
    positions_for: Callable[[str], Positions | None],
    severity: dict[str, str],
) -> types.Diagnostic:
    f, w = cf.finding, cf.where
    related = []
    for r in f.related:
        rw = locator.span(r.span)
        if rw.cell is not None:
            loc = types.Location(uri=rw.cell.id, range=_range(cell_positions(workspace, rw.cell.id), rw))
        else:
            pos = positions_for(r.span.path)
            if pos is None:
                continue
            loc = types.Location(uri=uri_of(r.span.path), range=pos.range(r.span))
        related.append(types.DiagnosticRelatedInformation(location=loc, message=r.message))
    href = docs_href(f.code, settings)
    params = ""
    if f.params and len(f.params) <= 12:
        params = f" [{', '.join(f.params[:6])}{', …' if len(f.params) > 6 else ''}]"
    return types.Diagnostic(
        range=_range(cell_positions(workspace, cf.cell.id), w),
        message=f.message + params,
        severity=severity_for(f, severity),
        code=f.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source="gradaudit",
        related_information=related or None,
        data={"confidence": f.confidence, "name": f.name, "key": finding_key(f)},
    )


def fix_edit(workspace: Workspace, result: Result, cf: CellFinding) -> types.WorkspaceEdit | None:
    """The finding's fix as edits of its cell (None when an edit lies outside that cell)."""
    nb, fix = result.notebook, cf.finding.fix
    if nb is None or fix is None:  # not a notebook's analysis, no fix: nothing to edit
        return None
    locator = Locator({nb.path: nb})
    cell_uri = cf.cell.id
    pos = cell_positions(workspace, cell_uri)
    edits = []
    for e in fix.edits:
        ew = locator.span(e.span)
        if ew.cell is None or ew.cell.id != cell_uri:
            return None
        edits.append(types.TextEdit(range=_range(pos, ew), new_text=e.content))
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=cell_uri, version=None), edits=edits
            )
        ]
    )


def fix_all_edit(workspace: Workspace, result: Result) -> types.WorkspaceEdit | None:
    """Every safe fix of the notebook's analysis, as line edits of the cells they change (a fix
    that leaves its cell, or whose result does not parse, is left out: check/notebook_fixes.py)."""
    nb = result.notebook
    if nb is None:
        return None
    changes = fix_notebook(nb, None, result.findings, only_safe=True).changes
    if not changes:
        return None
    cells = {c.index: c for c in nb.cells}
    out = []
    for change in changes:
        cell_uri = cells[change.index].id
        if workspace.get_text_document(cell_uri).source != change.before:
            return None  # the cell moved on since this analysis: the client asks again after the next
        out.append(
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=cell_uri, version=None),
                edits=line_diff(change.before, change.after),
            )
        )
    return types.WorkspaceEdit(document_changes=out)


def ignore_edit(workspace: Workspace, cf: CellFinding) -> types.WorkspaceEdit:
    """`# gradaudit: ignore[CODE]` at the end of the finding's line in its cell."""
    cell_uri = cf.cell.id
    pos = cell_positions(workspace, cell_uri)
    n = cf.where.line
    line = pos.lines[n - 1].rstrip("\r\n") if n - 1 < len(pos.lines) else ""
    code = cf.finding.code
    m = re.search(r"#\s*gradaudit:\s*ignore\[([^\]]*)\]", line)
    if m:
        at = pos.position(n, m.start(1) + len(m.group(1)))
        edit = types.TextEdit(range=types.Range(start=at, end=at), new_text=f", {code}")
    else:
        start, end = pos.position(n, len(line.rstrip())), pos.position(n, len(line))
        edit = types.TextEdit(range=types.Range(start=start, end=end), new_text=f"  # gradaudit: ignore[{code}]")
    return types.WorkspaceEdit(changes={cell_uri: [edit]})


def place_in_graph(graph: dict[str, Any], nb: Notebook) -> dict[str, Any]:
    """The training-step graph of a notebook: every part in the notebook gets the cell (`cell`,
    1-based) and the line in it (`cellLine`); `line` stays the analysed source's, which the view
    uses as the part's key."""
    locator = Locator({nb.path: nb})

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("line"), int) and node.get("path", nb.path) == nb.path:
                w = locator.at(nb.path, node["line"], 0)
                if w.cell is not None:
                    node["cell"] = w.cell.number
                    node["cellLine"] = w.line
                    node["cellUri"] = w.cell.id
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(graph)
    graph["notebook"] = True
    return graph
