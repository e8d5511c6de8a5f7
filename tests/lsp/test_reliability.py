"""The server under an editor's conditions: documents that do not parse, documents never opened,
budgets spent, a big document beside small ones, edits faster than analyses."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from .conftest import PULL_CLIENT, client_capabilities, server_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

MIXED = """import torch
import torch.nn as nn


class Hidden(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(4, 4) for _ in range(2)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    out = model(torch.randn(8, 4)).detach()
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
TRAIN = MIXED[MIXED.index("model = nn.Linear") :]
HEAD = "import torch\nimport torch.nn as nn\n"


async def _session(lsp_client: LanguageClient, tmp_path_factory, client_name: str):
    root = tmp_path_factory.mktemp("ws")
    lsp_client.root = str(root)
    lsp_client.published = {}  # uri -> [(version, diagnostics, time received)]

    def on_publish(params: types.PublishDiagnosticsParams):
        lsp_client.published.setdefault(params.uri, []).append((params.version, params.diagnostics, time.monotonic()))

    lsp_client.protocol.fm._features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def on_lens_refresh(params):
        return None

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(client_name),
            root_uri=f"file://{root}",
            initialization_options={"gradaudit": {"debounce": 0}},
        )
    )


@pytest_lsp.fixture(config=ClientServerConfig(server_command=server_command()), scope="module")
async def push(lsp_client: LanguageClient, tmp_path_factory):
    await _session(lsp_client, tmp_path_factory, "visual-studio-code")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=server_command()), scope="module")
async def pull(lsp_client: LanguageClient, tmp_path_factory):
    await _session(lsp_client, tmp_path_factory, PULL_CLIENT)
    yield
    await lsp_client.shutdown_session()


class Doc:
    def __init__(self, client, name, text, write=True):
        self.client = client
        self.path = os.path.join(client.root, name)
        if write:
            with open(self.path, "w") as fh:
                fh.write(text)
        self.uri = f"file://{self.path}"
        self.text = text
        self.version = 1
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=text)
            )
        )

    def edit(self, line, char, end_line, end_char, text):
        self.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=line, character=char),
                            end=types.Position(line=end_line, character=end_char),
                        ),
                        text=text,
                    )
                ],
            )
        )
        lines = self.text.split("\n")
        before = (
            "\n".join(lines[:line]) + ("\n" if line else "") + lines[line][:char] if line < len(lines) else self.text
        )
        after = (
            lines[end_line][end_char:] + ("\n" if end_line + 1 < len(lines) else "") + "\n".join(lines[end_line + 1 :])
        )
        self.text = before + text + after
        return self.version

    def close(self):
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=self.uri))
        )

    async def published(self, version=None, timeout=60.0):
        version = self.version if version is None else version
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for v, diags, _ in self.client.published.get(self.uri, []):
                if v == version:
                    return list(diags)
            await asyncio.sleep(0.02)
        raise AssertionError(
            f"no diagnostics for v{version} of {self.uri}: "
            f"{[(v, [d.code for d in ds]) for v, ds, _ in self.client.published.get(self.uri, [])]}"
        )


def summary(diags):
    return sorted((str(d.code), d.range.start.line) for d in diags)


def line_of(text, needle):
    return next(i for i, line in enumerate(text.split("\n")) if needle in line)


def no_errors_logged(client):
    bad = [
        m.message
        for m in client.log_messages
        if "Traceback" in m.message or ("Error" in m.message and "internal" in m.message)
    ]
    assert not bad, bad


# ------------------------------------------------------------------ documents never opened


async def test_requests_on_documents_never_opened_answer_empty(pull):
    client = pull
    uri = f"file://{client.root}/nowhere/never_opened.py"  # does not exist either
    ident = types.TextDocumentIdentifier(uri=uri)
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=ident))
    assert list(report.items) == []  # before: JsonRpcInternalError: FileNotFoundError
    rng = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=1))
    assert (
        await client.text_document_hover_async(
            types.HoverParams(text_document=ident, position=types.Position(line=0, character=0))
        )
        is None
    )
    assert not await client.text_document_code_action_async(
        types.CodeActionParams(text_document=ident, range=rng, context=types.CodeActionContext(diagnostics=[]))
    )
    assert not await client.text_document_code_lens_async(types.CodeLensParams(text_document=ident))
    graph = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="gradaudit.showTrainingGraph", arguments=[uri])
    )
    assert graph["steps"] == []
    fixed = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="gradaudit.fixAll", arguments=[uri])
    )
    assert fixed["applied"] is False
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="x = 1\n")],
        )
    )
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=ident))
    # and the server still works
    doc = Doc(client, "after_unknown.py", MIXED)
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
    )
    assert [str(d.code) for d in report.items] == ["GA109", "GA101"]
    assert not [m for m in client.log_messages if "FileNotFoundError" in m.message or "KeyError" in m.message]
    doc.close()


async def test_pull_after_close_answers_empty(pull):
    doc = Doc(pull, "closed_then_pulled.py", MIXED)
    report = await pull.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
    )
    assert len(report.items) == 2
    doc.close()
    report = await pull.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
    )
    assert list(report.items) == []


# ------------------------------------------------------------------ mid-edit


async def test_a_broken_statement_keeps_its_findings_moved_and_the_rest_is_analysed(push):
    doc = Doc(push, "mid_edit.py", MIXED)
    first = await doc.published()
    ga109_line, ga101_line = line_of(MIXED, "self.layers = ["), line_of(MIXED, ".detach()")
    assert summary(first) == [("GA101", ga101_line), ("GA109", ga109_line)]
    # two lines inserted at the top: everything moves down by two
    doc.edit(0, 0, 0, 0, "# a comment\n# another\n")
    moved = await doc.published()
    assert summary(moved) == [("GA101", ga101_line + 2), ("GA109", ga109_line + 2)]
    # the class stops parsing while it is typed in
    line = line_of(doc.text, "self.layers = [")
    col = doc.text.split("\n")[line].index("[") + 1
    doc.edit(line, col, line, col, "(")
    broken = await doc.published()
    codes = summary(broken)
    assert ("GA101", ga101_line + 2) in codes  # the intact loop: analysed afresh
    assert ("GA109", ga109_line + 2) in codes  # the class: kept, not flickering off
    [parse] = [d for d in broken if d.code == "parse-error"]
    assert parse.severity == types.DiagnosticSeverity.Error and parse.range.start.line == line
    assert "could not parse" in parse.message
    # typing goes on above the broken class: the kept finding moves with it
    doc.edit(2, 0, 2, 0, "\n")
    still = await doc.published()
    assert ("GA109", ga109_line + 3) in summary(still) and ("GA101", ga101_line + 3) in summary(still)
    # fixed: everything fresh, no parse error
    line = line_of(doc.text, "self.layers = [(")
    col = doc.text.split("\n")[line].index("[(") + 1
    doc.edit(line, col, line, col + 1, "")
    fixed = await doc.published()
    assert summary(fixed) == [("GA101", ga101_line + 3), ("GA109", ga109_line + 3)]
    # every publish of this document carried GA109: no flicker
    assert all(any(d.code == "GA109" for d in ds) for _, ds, _ in push.published[doc.uri])
    doc.close()


# ------------------------------------------------------------------ budgets


async def _configure(client, **settings):
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"gradaudit": settings}))
    await asyncio.sleep(0.2)


async def test_time_budget_says_what_was_not_reached(push):
    await _configure(push, timeBudget=0.3)
    try:
        slow = HEAD + "".join(f"for i{k} in range(2):\n    v{k} = i{k}\n" for k in range(12000)) + TRAIN
        doc = Doc(push, "slow.py", slow)
        diags = await doc.published(timeout=120)
        [gap] = [d for d in diags if d.code == "incomplete"]
        assert gap.message.startswith("analysis incomplete: the time budget of 0.3 s ran out (")
        assert "statements not reached)" in gap.message
        assert gap.range.start.line > 2 and gap.severity == types.DiagnosticSeverity.Information
        doc.close()
    finally:
        await _configure(push, timeBudget=10)


async def test_memory_budget_stops_the_worker_and_says_so(push):
    await _configure(push, memoryBudget=150)
    try:
        huge = HEAD + "".join(f"X{i} = [{i}, {i}, {i}, {i}]\n" for i in range(150000)) + TRAIN
        doc = Doc(push, "huge.py", huge, write=False)
        diags = await doc.published(timeout=120)
        assert [d.code for d in diags] == ["incomplete"]
        assert "memory budget of 150 MB" in diags[0].message
        doc.close()
        # the server carries on, with a fresh worker
        small = Doc(push, "after_memory.py", MIXED)
        assert summary(await small.published()) == summary(await _fresh(push, MIXED))
        small.close()
    finally:
        await _configure(push, memoryBudget=1536)


async def _fresh(client, text):
    doc = Doc(client, f"fresh_{time.monotonic_ns()}.py", text)
    out = await doc.published()
    doc.close()
    return out


# ------------------------------------------------------------------ scheduling


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "R"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    rest = fh.read().rsplit(")", 1)[1].split()
                if int(rest[1]) == pid and rest[0] != "Z":
                    out.append(int(entry))
            except OSError:
                continue
    return out


async def test_a_big_document_does_not_hold_up_a_small_one_and_its_worker_goes_after_close(push):
    await _configure(push, timeBudget=120)  # a loaded machine must not turn this into a budget test
    base = len(_children(push._server.pid))
    big_text = HEAD + "".join(f"X{i} = {i} + {i}\n" for i in range(60000)) + TRAIN  # ~1 MB: the big lane
    big = Doc(push, "big.py", big_text, write=False)
    await asyncio.sleep(0.3)
    small = Doc(push, "small_beside_big.py", MIXED)
    small_diags = await small.published()
    assert summary(small_diags)[0][0] == "GA101"
    most = base
    while not any(v == big.version for v, _, _ in push.published.get(big.uri, [])):
        most = max(most, len(_children(push._server.pid)))
        await asyncio.sleep(0.02)
    assert most == base + 1  # the big lane had a worker of its own
    big_diags = await big.published(timeout=120)
    small_at = next(t for v, _, t in push.published[small.uri] if v == small.version)
    big_at = next(t for v, _, t in push.published[big.uri] if v == big.version)
    assert small_at < big_at  # it did not wait behind the big document
    assert [d.code for d in big_diags] == ["GA101"]  # and the big one's training loop was reached
    big.close()
    deadline = time.monotonic() + 20
    while len(_children(push._server.pid)) > base and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert len(_children(push._server.pid)) == base  # memory back: its worker is gone
    small.close()
    await _configure(push, timeBudget=10)


async def test_only_the_newest_version_is_published(push):
    doc = Doc(push, "typing.py", MIXED)
    await doc.published()
    line = line_of(MIXED, "lr=0.1")
    for k in range(30):
        doc.edit(line, 0, line, len(doc.text.split("\n")[line]), f"opt = torch.optim.SGD(model.parameters(), lr=0.{k})")
    last = await doc.published()
    assert summary(last)[0][0] == "GA101"
    versions = [v for v, _, _ in push.published[doc.uri]]
    assert versions == sorted(versions)  # never an older version after a newer one
    assert versions[-1] == doc.version
    doc.close()


async def test_the_document_being_edited_goes_first(push):
    # each takes a while to analyse (10,000 statements), so that the queue is still long at the edit
    filler = "".join(f"X{k} = {k} * 2\n" for k in range(10000))
    docs = [
        Doc(push, f"queue_{i:02d}.py", filler + MIXED.replace("lr=0.1", f"lr=0.{i + 1}"), write=False)
        for i in range(12)
    ]
    first = docs[0]
    await first.published()  # its first analysis is done; many others wait
    first.edit(0, 0, 0, 0, "# edited\n")
    await first.published()
    edited_at = next(t for v, _, t in push.published[first.uri] if v == first.version)
    # newest first: the documents opened earliest wait longest, and the edit went before them
    earliest = docs[1]
    await earliest.published(timeout=120)
    earliest_at = next(t for v, _, t in push.published[earliest.uri] if v == 1)
    order = sorted((t, os.path.basename(u), v) for u, ps in push.published.items() for v, _, t in ps if "queue_" in u)
    assert edited_at < earliest_at, [(round(t - order[0][0], 3), n, v) for t, n, v in order]
    for d in docs:
        d.close()


async def test_a_long_analysis_of_a_replaced_version_is_stopped(push):
    # slow but small (12,000 top-level loops): before, every version was analysed to the end,
    # one after the other, and the last edit's diagnostics came tens of seconds late
    slow = HEAD + "".join(f"for i{k} in range(2):\n    v{k} = i{k}\n" for k in range(12000)) + TRAIN
    # the workers are idle first (a spare still warming up, or collecting after its last job, runs
    # too, and is not the one that takes the analysis)
    quiet, deadline = 0, time.monotonic() + 60
    while quiet < 5 and time.monotonic() < deadline:
        quiet = quiet + 1 if not any(_running(p) for p in _children(push._server.pid)) else 0
        await asyncio.sleep(0.1)
    before = set(_children(push._server.pid))
    doc = Doc(push, "slow_then_edited.py", slow, write=False)
    busy = None
    deadline = time.monotonic() + 60
    while busy is None and time.monotonic() < deadline:
        # the one running the analysis runs for seconds: still running a moment later
        running = {p for p in set(_children(push._server.pid)) & before if _running(p)}
        await asyncio.sleep(0.3)
        still = {p for p in running if _running(p)}
        busy = min(still) if still else None
    assert busy is not None, "no worker took the analysis"
    await asyncio.sleep(1.0)  # well past a small analysis
    doc.version += 1
    push.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=MIXED)],
        )
    )
    diags = await doc.published()
    assert summary(diags) == [("GA101", line_of(MIXED, ".detach()")), ("GA109", line_of(MIXED, "self.layers"))]
    assert [v for v, _, _ in push.published[doc.uri]] == [doc.version]  # version 1 never shown
    assert not os.path.exists(f"/proc/{busy}") or busy not in _children(push._server.pid)  # stopped
    doc.close()
