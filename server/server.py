"""The gradaudit language server: a thin adapter from LSP to the engine.

All analysis lives in gradaudit.analysis; this module maps documents to analyses (documents.py),
findings to diagnostics and actions (convert.py), and settings (settings.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from gradaudit.analysis import __version__
from gradaudit.analysis.check.budgets import advice
from gradaudit.analysis.check.schema import Problem
from gradaudit.analysis.libraries.imported import LibraryUse
from gradaudit.analysis.model.findings import SAFE, Finding
from gradaudit.analysis.model.model import Span
from gradaudit.analysis.report.editor_graph import graph
from gradaudit.analysis.report.summary import hover_markdown, lens_title, unique_steps
from gradaudit.analysis.rules.fixes import fix_source
from gradaudit.analysis.source.notebook import Notebook
from gradaudit.analysis.source.program import ParseError, read_text, split_lines

from . import gradflow_action, notebooks
from .capabilities import Protocol, pulls
from .convert import Positions, diagnostic, finding_key, line_diff, path_of, text_edits, uri_of
from .diagnostics import (
    carried,
    coverage_diagnostics,
    incomplete_diagnostic,
    move,
    parse_diagnostic,
    stopped_message,
)
from .documents import Analyses, Analysis
from .settings import Settings
from .text import FastWorkspace

FIX_ALL_KIND = "source.fixAll.gradaudit"
CMD_GRAPH = "gradaudit.showTrainingGraph"
CMD_FIX_ALL = "gradaudit.fixAll"


class GradauditServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "gradaudit",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            # any notebook's Python cells (Jupyter's in VS Code), synced as notebook documents; its
            # markdown cells too, so that cells are numbered as in the file (the CLI's `cell N`)
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[
                    types.NotebookDocumentFilterWithCells(
                        cells=[types.NotebookCellLanguage(language="python"), types.NotebookCellLanguage("markdown")]
                    )
                ],
                save=True,
            ),
            protocol_cls=Protocol,
        )
        self.settings = Settings()
        self.analyses = Analyses(self._published, self._log)
        self.pull = False  # the client asks for diagnostics itself (textDocument/diagnostic)
        self.refresh = False  # ... and accepts workspace/diagnostic/refresh
        self.lens_refresh = False  # the client accepts workspace/codeLens/refresh
        self.resolve_edits = False  # the client resolves code actions' edits lazily
        self.root = ""
        self.foreign_shown: set[str] = set()  # uris last published with findings of other documents' analyses
        self.shown_problems: dict[str, tuple[str, ...]] = {}  # configuration source -> the problems shown for it
        self.environments: dict[str, str] = {}  # environment folder -> what was last logged about it
        self.pending_problems: list[Problem] = []  # the initialization options' problems, shown once initialized
        # notebook uri -> {cell uri: the diagnostics last published there}
        self.cells_shown: dict[str, dict[str, list[types.Diagnostic]]] = {}

    # ---------------------------------------------------------------- helpers

    def _log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # no client connected (tests calling handlers directly)
            pass

    def document(self, uri: str) -> TextDocument:
        return self.workspace.get_text_document(uri)

    def is_open(self, uri: str) -> bool:
        """An open document or notebook (requests about any other answer empty: nothing is read from disk)."""
        try:
            workspace = self.workspace
        except RuntimeError:  # not initialized
            return False
        return isinstance(workspace, FastWorkspace) and (workspace.is_open(uri) or self.notebook(uri) is not None)

    def notebook(self, uri: str) -> types.NotebookDocument | None:
        """The open notebook document whose uri this is (not one of its cells), else None."""
        nb = notebooks.notebook_of(self.workspace, uri)
        return nb if nb is not None and nb.uri == uri else None

    def notebook_of_cell(self, uri: str) -> types.NotebookDocument | None:
        """The open notebook document holding the cell `uri`, else None."""
        nb = notebooks.notebook_of(self.workspace, uri)
        return nb if nb is not None and nb.uri != uri else None

    def positions(self, uri: str, analysis: Analysis | None = None) -> Positions:
        """Positions in the document as it is now, or as it was when `analysis` ran."""
        doc = self.document(uri)
        if analysis is not None and analysis.version != doc.version:
            return Positions(split_lines(analysis.text), doc.position_codec)
        return Positions(doc.lines, doc.position_codec)

    def positions_for_path(self, path: str) -> Positions | None:
        uri = uri_of(path)
        if self.is_open(uri):
            return self.positions(uri)
        try:
            text = read_text(path)
        except (OSError, ParseError):  # unreadable, or bytes Python refuses
            return None
        return Positions(split_lines(text), self.workspace.position_codec)

    def open_texts(self, limit: int | None = None) -> dict[str, str]:
        return {
            uri: doc.source
            for uri, doc in self.workspace.text_documents.items()
            if limit is None or getattr(doc, "size", 0) <= limit
        }

    def schedule(self, uri: str, delay_ms: int | None = None, background: bool = False) -> None:
        nb = self.notebook(uri)
        if nb is not None:
            # the cells as one program; text_of gives the engine's notebook (its virtual source)
            version = nb.version or 0

            def text_of() -> str | Notebook:
                now = self.notebook(uri)
                assert now is not None  # still open: a closed document's analysis never starts (documents.py)
                return notebooks.virtual(self.workspace, now)
        else:
            version = self.document(uri).version or 0

            def text_of() -> str | Notebook:
                return self.document(uri).source

        delay = self.settings.debounce_ms if delay_ms is None else delay_ms
        self.analyses.schedule(
            uri,
            version,
            text_of,
            self.settings,
            self.root,
            self.open_texts,
            delay,
            background,
        )

    def findings_for(self, uri: str) -> list[Finding]:
        """This document's findings: its own analysis, plus what other documents' analyses placed here."""
        analysis = self.analyses.latest(uri)
        own: list[Finding] = []
        if analysis is not None and analysis.result is not None:
            path = os.path.normpath(path_of(uri))
            own = [f for f in analysis.result.findings if os.path.normpath(os.path.abspath(f.span.path)) == path]
        out: list[Finding] = []
        seen: set[tuple[str, int, int]] = set()
        for f in own + self.analyses.foreign_findings(uri):
            key = (f.code, f.span.line, f.span.col)  # a module's own analysis and an importer's may agree
            if key not in seen:
                seen.add(key)
                out.append(f)
        return out

    def severity_for(self, uri: str) -> dict[str, str]:
        analysis = self.analyses.latest(uri)
        return analysis.severity if analysis is not None else self.settings.severity

    def diagnostics_for(self, uri: str) -> list[types.Diagnostic]:
        """What the client is shown: the document's own diagnostics (moved with the edits since),
        and the findings other documents' analyses placed in it."""
        st = self.analyses.docs.get(uri)
        if st is None or not self.is_open(uri):
            return []
        foreign = self.analyses.foreign_findings(uri)
        out = list(st.shown)
        if not foreign:
            return out
        positions = self.positions(uri)
        severity = self.severity_for(uri)
        seen = {(d.code, d.range.start.line, d.range.start.character) for d in out}
        for f in foreign:
            d = diagnostic(f, positions, self.settings, self.positions_for_path, severity)
            key = (d.code, d.range.start.line, d.range.start.character)
            if key not in seen:  # a module's own analysis and an importer's may agree
                seen.add(key)
                out.append(d)
        return out

    def _own_diagnostics(self, uri: str, analysis: Analysis) -> list[types.Diagnostic]:
        """The diagnostics of a new analysis of the current version, with what it could not recompute."""
        st = self.analyses.docs[uri]
        positions = self.positions(uri)
        result = analysis.result
        fresh = []
        if result is not None:
            path = os.path.normpath(path_of(uri))
            severity = analysis.severity or self.settings.severity
            fresh = [
                diagnostic(f, positions, self.settings, self.positions_for_path, severity)
                for f in result.findings
                if os.path.normpath(os.path.abspath(f.span.path)) == path
            ]
        n_lines = len(positions.lines)
        kept = [d for d in carried(st.shown, result) if d.range.start.line <= n_lines]
        problems = []
        if result is None:
            problems.append(incomplete_diagnostic(stopped_message(analysis), positions))
        else:
            problems += [parse_diagnostic(e, positions) for e in result.problems]
            if result.gap is not None:
                first = result.gap.first
                here = first is not None and os.path.normpath(os.path.abspath(first.path)) == os.path.normpath(
                    path_of(uri)
                )
                message = result.gap.message()
                if first is not None and not here:
                    message += f", first at {first.path}:{first.line}"
                tip = advice(result.gap, editor=True)  # the setting that raises the budget that ran out
                if tip:
                    message += f"; {tip}"
                line, col = (first.line, first.col + 1) if first is not None and here else (1, 1)
                problems.append(incomplete_diagnostic(message, positions, line, col))
            problems += coverage_diagnostics(result, os.path.normpath(path_of(uri)), positions)
        return fresh + kept + problems

    def moved(self, uri: str, changes: Sequence[types.TextDocumentContentChangeEvent]) -> None:
        """The document changed: what it shows moves with the text."""
        st = self.analyses.docs.get(uri)
        if st is None or not st.shown:
            return
        codec = self.workspace.position_codec
        for change in changes:
            if getattr(change, "range", None) is None:
                st.shown = []  # the whole text replaced: nothing to follow, nothing kept
                return
            st.shown = move(st.shown, change, codec)

    def show_problems(self, source: str, problems: Iterable[Problem]) -> None:
        """Each configuration problem (schema.Problem) once, as a message the user sees
        (window/showMessage); again only if it comes back after being fixed."""
        texts = list(dict.fromkeys(f"gradaudit: {p} ({p.consequence})" for p in problems))
        before = self.shown_problems.get(source, ())
        for text in texts:
            if text not in before:
                self._log(text, types.MessageType.Warning)
                try:
                    self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=text))
                except Exception:  # no client connected (tests calling handlers directly)
                    pass
        self.shown_problems[source] = tuple(texts)

    def log_environment(self, use: LibraryUse) -> None:
        """Which environment's libraries were read, and the imported ones it lacks, in the log:
        once per environment, again when that changes."""
        text = f"gradaudit: {use.sentence(relative=False)}"
        if self.environments.get(use.prefix) != text:
            self.environments[use.prefix] = text
            self._log(text, types.MessageType.Info)

    def _published(self, uri: str) -> None:
        """A new analysis landed for `uri`: show it (and what it placed in other open documents)."""
        analysis = self.analyses.latest(uri)
        if analysis is not None and (analysis.config_source or analysis.config_problems):
            self.show_problems(analysis.config_source or "settings", analysis.config_problems)
        if analysis is not None and analysis.result is not None and analysis.result.libraries is not None:
            self.log_environment(analysis.result.libraries)
        if self.notebook(uri) is not None:
            self.publish_notebook(uri)
            return
        st = self.analyses.docs.get(uri)
        if analysis is not None and st is not None and self.is_open(uri):
            st.shown = self._own_diagnostics(uri, analysis)
        # documents showing findings other analyses placed there: now, or until now (they may be gone)
        targets = {uri} | {u for u in self.analyses.docs if self.analyses.foreign_findings(u)} | self.foreign_shown
        if self.pull:
            if self.refresh:
                self.workspace_diagnostic_refresh(None)
            return
        for target in targets:
            if self.is_open(target):
                self.publish(target)

    def publish(self, uri: str) -> None:
        if self.analyses.foreign_findings(uri):
            self.foreign_shown.add(uri)
        else:
            self.foreign_shown.discard(uri)
        doc = self.document(uri)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=self.diagnostics_for(uri), version=doc.version)
        )

    def cell_diagnostics(self, uri: str) -> dict[str, list[types.Diagnostic]]:
        """{cell uri: diagnostics} of the open notebook `uri`'s last analysis (of its current version)."""
        nb = self.notebook(uri)
        analysis = self.analyses.latest(uri)
        if nb is None or analysis is None or analysis.version != (nb.version or 0):
            return dict(self.cells_shown.get(uri, {}))
        return notebooks.diagnostics_by_cell(self.workspace, nb, analysis, self.settings, self.positions_for_path)

    def publish_notebook(self, uri: str) -> None:
        """A notebook's new analysis: publish the cells whose diagnostics changed (and clear the
        cells that are gone)."""
        now = self.cell_diagnostics(uri)
        before = self.cells_shown.get(uri, {})
        self.cells_shown[uri] = now
        if self.pull:
            if self.refresh:
                self.workspace_diagnostic_refresh(None)
            return
        for cell in set(before) - set(now):
            if before[cell]:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell, diagnostics=[]))
        for cell, diagnostics in now.items():
            if cell not in before or _serial(before[cell]) != _serial(diagnostics):
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=cell, diagnostics=diagnostics)
                )

    def reanalyze_dependents(self, paths: Iterable[str], exclude: str | None = None) -> None:
        """Analyze again the open documents whose last analysis read one of these files."""
        changed = {os.path.normcase(os.path.abspath(p)) for p in paths}
        for uri in self.analyses.dependents(changed):
            if uri != exclude and self.is_open(uri):
                self.schedule(uri, background=True)  # after the document being edited

    def reanalyze_all(self) -> None:
        for uri in list(self.analyses.docs):
            if self.is_open(uri):
                self.schedule(uri, 0, background=True)

    def apply_budgets(self) -> None:
        budgets = self.analyses.scheduler.budgets
        budgets.time = self.settings.time_budget
        budgets.memory_mb = self.settings.memory_budget_mb


def _serial(diagnostics: list[types.Diagnostic]) -> list[tuple[object, ...]]:
    return [(d.range, d.message, d.code, d.severity, d.related_information) for d in diagnostics]


server = GradauditServer()


# -------------------------------------------------------------------- lifecycle


@server.feature(types.INITIALIZE)
def initialize(ls: GradauditServer, params: types.InitializeParams) -> None:
    caps = params.capabilities
    td = caps.text_document
    ls.pull = pulls(caps)  # else every document's diagnostics are pushed
    ws = caps.workspace
    ls.refresh = bool(ws and ws.diagnostics and ws.diagnostics.refresh_support)
    ls.lens_refresh = bool(ws and ws.code_lens and ws.code_lens.refresh_support)
    ca = td.code_action if td is not None else None
    ls.resolve_edits = bool(ca and ca.resolve_support and "edit" in (ca.resolve_support.properties or []))
    if params.root_uri:
        ls.root = path_of(params.root_uri)
    elif params.workspace_folders:
        ls.root = path_of(params.workspace_folders[0].uri)
    ls.settings, problems = Settings.from_client(params.initialization_options, ls.settings)
    ls.pending_problems = problems  # shown once the client is initialized
    opts = params.initialization_options
    if isinstance(opts, dict) and isinstance(opts.get("interpreter"), str):
        # the interpreter the editor resolved (the VS Code extension sends the one it runs us with)
        ls.settings = replace(ls.settings, interpreter=opts["interpreter"])
    # pygls made the workspace just before this handler: make it one whose documents take an edit
    # in time proportional to the edit (text.py)
    ls.workspace.__class__ = FastWorkspace
    ls.apply_budgets()
    ls.analyses.start()


@server.feature(types.INITIALIZED)
def initialized(ls: GradauditServer, params: types.InitializedParams) -> None:
    ls.show_problems("client settings", ls.pending_problems)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GradauditServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GradauditServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    if not ls.is_open(uri):
        return  # a change to a document never opened: nothing to analyse
    ls.moved(uri, params.content_changes)
    ls.schedule(uri)
    # open documents whose last analysis read this module see its unsaved text (overlays) again
    ls.reanalyze_dependents([path_of(uri)], exclude=uri)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: GradauditServer, params: types.DidChangeWatchedFilesParams) -> None:
    paths = [path_of(c.uri) for c in params.changes]
    ls.analyses.invalidate(paths)
    ls.reanalyze_dependents(paths)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GradauditServer, params: types.DidSaveTextDocumentParams) -> None:
    # another open document may import this one: analyze them all again
    ls.reanalyze_all()


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GradauditServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    had_foreign = bool(ls.analyses.docs.get(uri) and ls.analyses.docs[uri].foreign)
    ls.analyses.close(uri)
    if not ls.pull:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        if had_foreign:
            for other in ls.analyses.docs:
                if ls.is_open(other):
                    ls.publish(other)


# -------------------------------------------------------------------- notebook documents
# pygls keeps the notebook and its cells' text documents (workspace) before these run


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: GradauditServer, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.schedule(params.notebook_document.uri, 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: GradauditServer, params: types.DidChangeNotebookDocumentParams) -> None:
    # a cell's text, cells added, moved or removed: the notebook is one program, analysed again
    ls.schedule(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: GradauditServer, params: types.DidSaveNotebookDocumentParams) -> None:
    pass  # the cells were analysed as they are: saving changes nothing (nothing imports a notebook)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: GradauditServer, params: types.DidCloseNotebookDocumentParams) -> None:
    uri = params.notebook_document.uri
    ls.analyses.close(uri)
    shown = ls.cells_shown.pop(uri, {})
    if not ls.pull:
        for cell, diagnostics in shown.items():
            if diagnostics:
                ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell, diagnostics=[]))


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: GradauditServer, params: types.DidChangeConfigurationParams) -> None:
    ls.settings, problems = Settings.from_client(params.settings, ls.settings)
    ls.show_problems("client settings", problems)
    ls.apply_budgets()
    ls.reanalyze_all()
    if ls.lens_refresh:
        # codeLens on/off (or select/ignore) changes the lenses: the client must ask again
        ls.workspace_code_lens_refresh(None)


@server.feature(types.SHUTDOWN)
def shutdown(ls: GradauditServer, *args: Any) -> None:
    ls.analyses.shutdown()


# -------------------------------------------------------------------- diagnostics (pull)


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(identifier="gradaudit", inter_file_dependencies=True, workspace_diagnostics=False),
)
async def pull_diagnostics(
    ls: GradauditServer, params: types.DocumentDiagnosticParams
) -> types.RelatedFullDocumentDiagnosticReport:
    uri = params.text_document.uri
    nb = ls.notebook_of_cell(uri)
    if nb is not None:
        if nb.uri not in ls.analyses.docs:
            ls.schedule(nb.uri, 0)
        await ls.analyses.current(nb.uri)
        return types.RelatedFullDocumentDiagnosticReport(items=ls.cell_diagnostics(nb.uri).get(uri, []))
    if not ls.is_open(uri):
        return types.RelatedFullDocumentDiagnosticReport(items=[])  # never opened, closed, or nonexistent
    if uri not in ls.analyses.docs:
        ls.schedule(uri, 0)
    await ls.analyses.current(uri)
    return types.RelatedFullDocumentDiagnosticReport(items=ls.diagnostics_for(uri))


# -------------------------------------------------------------------- code actions


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[
            types.CodeActionKind.QuickFix,
            FIX_ALL_KIND,
            types.CodeActionKind.SourceFixAll,
            gradflow_action.KIND,
        ],
        resolve_provider=True,
    ),
)
def code_action(ls: GradauditServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    uri = params.text_document.uri
    nb = ls.notebook_of_cell(uri)
    if nb is not None:
        return _cell_code_actions(ls, nb, uri, params)
    if not ls.is_open(uri):
        return []
    analysis = ls.analyses.latest(uri)
    doc = ls.document(uri)
    if analysis is None or analysis.version != doc.version:
        return None  # the document moved on; the client asks again after the next analysis
    only = params.context.only
    want_fix_all = _wants_fix_all(only)
    want_quick = not only or any(str(k).startswith("quickfix") for k in only)
    positions = ls.positions(uri)
    actions: list[types.CodeAction] = []
    if want_quick:
        req = params.range
        for f in ls.findings_for(uri):
            r = positions.range(f.span)
            if (r.end.line, r.end.character) < (req.start.line, req.start.character) or (
                r.start.line,
                r.start.character,
            ) > (req.end.line, req.end.character):
                continue
            diag = diagnostic(f, positions, ls.settings, ls.positions_for_path, ls.severity_for(uri))
            if f.fix is not None and f.fix.edits and all(e.span.path == f.span.path for e in f.fix.edits):
                data = {"uri": uri, "version": doc.version, "key": finding_key(f)}
                action = types.CodeAction(
                    title=f"{f.fix.message} ({f.code})",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=f.fix.applicability == SAFE,
                    data=data,
                )
                if not ls.resolve_edits:
                    action.edit = _fix_edit(ls, uri, f)
                actions.append(action)
            actions.append(
                types.CodeAction(
                    title=f"Ignore {f.code} on this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    edit=_ignore_edit(ls, uri, f),
                )
            )
    if not only or any(str(k) == "source" or gradflow_action.KIND.startswith(str(k)) for k in only):
        actions += gradflow_action.code_actions(analysis, uri, params.range.start.line + 1, params.range.end.line + 1)
    if want_fix_all or (
        not only and any(f.fix is not None and f.fix.applicability == SAFE for f in ls.findings_for(uri))
    ):
        edit = fix_all_edit(ls, uri)
        if edit is not None:
            actions.append(_fix_all_action(edit))
    return actions


def _wants_fix_all(only: Sequence[types.CodeActionKind | str] | None) -> bool:
    """The client asked for source actions (`source`, `source.fixAll`...)."""
    return any(str(k).startswith("source") for k in only or ())


def _fix_all_action(edit: types.WorkspaceEdit) -> types.CodeAction:
    return types.CodeAction(title="gradaudit: fix all safe fixes", kind=FIX_ALL_KIND, edit=edit)


def _cell_code_actions(
    ls: GradauditServer, nb: types.NotebookDocument, uri: str, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    """Quick fixes of the findings in one cell of a notebook (and `ignore` comments)."""
    analysis = ls.analyses.latest(nb.uri)
    if analysis is None or analysis.result is None or analysis.version != (nb.version or 0):
        return None  # the notebook moved on; the client asks again after the next analysis
    only = params.context.only
    want_fix_all = _wants_fix_all(only)
    actions: list[types.CodeAction] = []
    if only and not any(str(k).startswith("quickfix") for k in only):
        if want_fix_all:
            edit = notebooks.fix_all_edit(ls.workspace, analysis.result)
            if edit is not None:
                actions.append(_fix_all_action(edit))
        return actions
    diagnostics = {d.data.get("key"): d for d in ls.cell_diagnostics(nb.uri).get(uri, []) if isinstance(d.data, dict)}
    req = params.range
    for cf in notebooks.cell_findings(analysis.result):
        w = cf.where
        if cf.cell.id != uri or (w.end_line - 1, w.end_col) < (req.start.line, 0) or (w.line - 1) > req.end.line:
            continue
        f = cf.finding
        diag = diagnostics.get(finding_key(f))
        found = [diag] if diag is not None else None
        if f.fix is not None and f.fix.edits:
            edit = notebooks.fix_edit(ls.workspace, analysis.result, cf)
            if edit is not None:
                actions.append(
                    types.CodeAction(
                        title=f"{f.fix.message} ({f.code})",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=found,
                        is_preferred=f.fix.applicability == SAFE,
                        edit=edit,
                    )
                )
        actions.append(
            types.CodeAction(
                title=f"Ignore {f.code} on this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=found,
                edit=notebooks.ignore_edit(ls.workspace, cf),
            )
        )
    if not only and any(
        cf.cell.id == uri and cf.finding.fix is not None and cf.finding.fix.applicability == SAFE
        for cf in notebooks.cell_findings(analysis.result)
    ):
        # as in a text document: offered with the quick fixes when this cell has a safe one
        edit = notebooks.fix_all_edit(ls.workspace, analysis.result)
        if edit is not None:
            actions.append(_fix_all_action(edit))
    return actions


@server.feature(types.CODE_ACTION_RESOLVE)
def code_action_resolve(ls: GradauditServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    if not isinstance(uri, str) or action.edit is not None or not ls.is_open(uri):
        return action
    for f in ls.findings_for(uri):
        if finding_key(f) == data.get("key"):
            action.edit = _fix_edit(ls, uri, f)
            break
    return action


def _fix_edit(ls: GradauditServer, uri: str, finding: Finding) -> types.WorkspaceEdit | None:
    """The finding's fix as an edit of its file; None when it has none or the file cannot be read."""
    target = uri_of(finding.span.path)
    positions = ls.positions(target) if ls.is_open(target) else ls.positions_for_path(finding.span.path)
    if positions is None or finding.fix is None:
        return None
    doc = ls.document(target) if ls.is_open(target) else None
    edits = text_edits(finding.fix.edits, positions)
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=target, version=doc.version if doc else None
                ),
                edits=edits,
            )
        ]
    )


def _ignore_edit(ls: GradauditServer, uri: str, finding: Finding) -> types.WorkspaceEdit | None:
    """`# gradaudit: ignore[CODE]` at the end of the finding's line; None when its file cannot be read."""
    target = uri_of(finding.span.path)
    positions = ls.positions(target) if ls.is_open(target) else ls.positions_for_path(finding.span.path)
    if positions is None:
        return None
    line = positions.lines[finding.span.line - 1] if finding.span.line - 1 < len(positions.lines) else ""
    import re

    m = re.search(r"#\s*gradaudit:\s*ignore\[([^\]]*)\]", line)
    if m:
        start = len(line[: m.start(1)])
        pos = positions.position(finding.span.line, start + len(m.group(1)))
        edit = types.TextEdit(range=types.Range(start=pos, end=pos), new_text=f", {finding.code}")
    else:
        pos = positions.position(finding.span.line, len(line.rstrip()))
        end = positions.position(finding.span.line, len(line))
        edit = types.TextEdit(range=types.Range(start=pos, end=end), new_text=f"  # gradaudit: ignore[{finding.code}]")
    return types.WorkspaceEdit(changes={target: [edit]})


def fix_all_edit(ls: GradauditServer, uri: str) -> types.WorkspaceEdit | None:
    """All safe fixes of this document, as line edits (each fix checked to keep the file parsing)."""
    if not ls.is_open(uri):
        return None
    doc = ls.document(uri)
    path = os.path.normpath(path_of(uri))
    mine = [
        f
        for f in ls.findings_for(uri)
        if f.fix is not None
        and f.fix.applicability == SAFE
        and f.fix.edits
        and all(os.path.normpath(os.path.abspath(e.span.path)) == path for e in f.fix.edits)
    ]
    if not mine:
        return None
    source = doc.source
    new, applied = fix_source(source, mine, only_safe=True)
    if not applied or new == source:
        return None
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                edits=line_diff(source, new),
            )
        ]
    )


# -------------------------------------------------------------------- code lens, hover, commands


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
async def code_lens(ls: GradauditServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    uri = params.text_document.uri
    if not ls.settings.code_lens or not ls.is_open(uri):
        return []
    nb = ls.notebook_of_cell(uri)
    if nb is not None:
        return await _cell_code_lenses(ls, nb.uri, uri)
    analysis = await ls.analyses.current(uri, timeout=5.0)
    if analysis is None or analysis.result is None or analysis.result.model is None or not ls.is_open(uri):
        return []
    path = os.path.normpath(path_of(uri))
    positions = ls.positions(uri, analysis)
    lenses = []
    for step in unique_steps(analysis.result.model):
        if os.path.normpath(os.path.abspath(step.span.path)) != path:
            continue
        loss_text = _span_text(positions.lines, step.loss_span) if step.loss_span is not None else ""
        lenses.append(
            types.CodeLens(
                range=positions.range(step.span),
                command=types.Command(
                    title=lens_title(step, loss_text), command=CMD_GRAPH, arguments=[uri, step.span.line]
                ),
            )
        )
    return lenses


async def _cell_code_lenses(ls: GradauditServer, nb_uri: str, uri: str) -> list[types.CodeLens]:
    analysis = await ls.analyses.current(nb_uri, timeout=5.0)
    if analysis is None or analysis.result is None or analysis.result.model is None:
        return []
    nb = analysis.result.notebook
    if nb is None:  # not analysed as a notebook (cannot be: its uri is an open notebook's)
        return []
    locator = notebooks.Locator({nb.path: nb})
    lines = split_lines(analysis.text)
    pos = notebooks.cell_positions(ls.workspace, uri)
    lenses = []
    for step in unique_steps(analysis.result.model):
        if step.span.path != nb.path:
            continue
        w = locator.span(step.span)
        if w.cell is None or w.cell.id != uri:
            continue
        loss_text = _span_text(lines, step.loss_span) if step.loss_span is not None else ""
        lenses.append(
            types.CodeLens(
                range=types.Range(start=pos.position(w.line, w.col), end=pos.position(w.end_line, w.end_col)),
                command=types.Command(
                    title=lens_title(step, loss_text), command=CMD_GRAPH, arguments=[nb_uri, step.span.line]
                ),
            )
        )
    return lenses


def _span_text(lines: Sequence[str], span: Span) -> str:
    if span.line == span.end_line:
        return lines[span.line - 1][span.col : span.end_col] if span.line - 1 < len(lines) else ""
    parts = (
        [lines[span.line - 1][span.col :]]
        + list(lines[span.line : span.end_line - 1])
        + [lines[span.end_line - 1][: span.end_col]]
    )
    return " ".join(p.strip() for p in parts)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: GradauditServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    if not ls.is_open(uri):
        return None
    nb = ls.notebook_of_cell(uri)
    analysis = ls.analyses.latest(nb.uri if nb is not None else uri)
    if analysis is None or analysis.result is None or analysis.result.model is None:
        return None
    doc = ls.document(uri)
    if analysis.version != ((nb.version or 0) if nb is not None else doc.version):
        return None
    pos = doc.position_from_client_units(params.position)
    line, col = pos.line + 1, pos.character
    if nb is not None:
        # the cell's position in the notebook's analysed source
        vnb = analysis.result.notebook
        if vnb is None:  # not analysed as a notebook (cannot be: a cell's analysis is its notebook's)
            return None
        index = next((i for i, c in enumerate(vnb.cells) if c.id == uri), None)
        at = vnb.virtual(index, line, col) if index is not None else None
        if at is None:
            return None
        line, col = at
    text = hover_markdown(analysis.result.model, analysis.result.path, line, col, analysis.result.findings)
    if text is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


@server.command(CMD_GRAPH)
async def show_training_graph(ls: GradauditServer, *args: Any) -> dict[str, Any]:
    """The training-step graph of the document (editor_graph.py), for the client's view."""
    uri = args[0] if args else None
    if not isinstance(uri, str):
        return {"error": "usage: gradaudit.showTrainingGraph(uri[, line])"}
    holder = ls.notebook_of_cell(uri)
    if holder is not None:
        uri = holder.uri  # a cell: the graph of its notebook
    if not ls.is_open(uri):
        return {"uri": uri, "steps": []}
    analysis = await ls.analyses.current(uri)
    if analysis is None or analysis.result is None or analysis.result.model is None:
        return {"uri": uri, "steps": []}
    own = os.path.normpath(path_of(uri))

    def source(path: str) -> str | None:
        if os.path.normpath(os.path.abspath(path)) == own:
            return analysis.text
        try:
            text: str = read_text(path)
        except (OSError, ParseError):
            return None
        return text

    out: dict[str, Any] = graph(analysis.result.model, analysis.result.findings, source)
    if analysis.result.notebook is not None:
        out = notebooks.place_in_graph(out, analysis.result.notebook)
    out["uri"] = uri
    if len(args) > 1 and isinstance(args[1], int):
        out["focus"] = args[1]
    return out


@server.command(gradflow_action.COMMAND)
async def generate_gradflow_test(ls: GradauditServer, *args: Any) -> gradflow_action.Written:
    uri, line = (args + (None, None))[:2]
    if not isinstance(uri, str) or not isinstance(line, int):
        return {"error": "usage: gradaudit.generateGradflowTest(uri, line)"}
    out = gradflow_action.write_test(await ls.analyses.current(uri), uri, line)
    if "uri" in out:
        try:
            await ls.window_show_document_async(types.ShowDocumentParams(uri=out["uri"], take_focus=True))
        except Exception:  # the client cannot show documents: the file is written all the same
            pass
    else:
        ls._log(f"gradaudit: {out['error']}", types.MessageType.Warning)
    return out


@server.command(CMD_FIX_ALL)
async def fix_all_command(ls: GradauditServer, *args: Any) -> dict[str, bool]:
    uri = args[0] if args else None
    if not isinstance(uri, str) or not ls.is_open(uri):
        return {"applied": False}
    nb = ls.notebook(uri) or ls.notebook_of_cell(uri)
    if nb is not None:
        # a notebook, or one of its cells: the safe fixes of the whole notebook, each in its cell
        await ls.analyses.current(nb.uri)
        analysis = ls.analyses.latest(nb.uri)
        edit = None
        if analysis is not None and analysis.result is not None and analysis.version == (nb.version or 0):
            edit = notebooks.fix_all_edit(ls.workspace, analysis.result)
    else:
        await ls.analyses.current(uri)
        edit = fix_all_edit(ls, uri)
    if edit is None:
        return {"applied": False}
    result = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label="gradaudit: fix all"))
    return {"applied": bool(result and result.applied)}
