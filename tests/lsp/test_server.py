"""The language server end to end, over stdio, under captured capabilities of real clients."""

import asyncio
import os
import shutil
import signal

import pytest
import pytest_lsp
from helpers import strip_markers
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from .conftest import PULL_CLIENT, client_capabilities, pulls, server_command

# the server is shared per module: the tests must run on the fixture's event loop
pytestmark = pytest.mark.asyncio(loop_scope="module")

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
# clients that take pushed diagnostics only; Neovim 0.11, which pulls but takes no refresh (so it is
# pushed to); and one that pulls and takes refreshes (VS Code's vscode-languageclient)
CLIENTS = ["neovim@v0.7.0", "emacs", "visual-studio-code", "neovim@v0.11.0", PULL_CLIENT]

GATE = strip_markers(open(os.path.join(DATA, "bugs", "relu_inplace_sigmoid.py")).read())[0]
CLEAN = open(os.path.join(DATA, "valid", "trainer_class.py")).read()
HIDDEN = """import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.hidden = [nn.Linear(8, 8) for _ in range(2)]
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        x = torch.relu(self.inp(x))
        for layer in self.hidden:
            x = torch.relu(layer(x))
        return self.out(x)


model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = model(torch.randn(3, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=server_command()), scope="module", params=CLIENTS, ids=CLIENTS
)
async def client(lsp_client: LanguageClient, request, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    lsp_client.root = str(root)
    lsp_client.published = {}  # uri -> list of (version, diagnostics), in arrival order
    lsp_client.applied = []
    lsp_client.lens_refreshes = 0
    lsp_client.client_name = request.param

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def on_lens_refresh(params):
        lsp_client.lens_refreshes += 1

    def on_publish(params: types.PublishDiagnosticsParams):
        lsp_client.published.setdefault(params.uri, []).append((params.version, params.diagnostics))
        lsp_client.diagnostics[params.uri] = params.diagnostics

    # pytest-lsp records only the latest diagnostics; these tests also need their versions
    lsp_client.protocol.fm._features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply(params: types.ApplyWorkspaceEditParams):
        lsp_client.applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=f"file://{root}",
            workspace_folders=[types.WorkspaceFolder(uri=f"file://{root}", name="ws")],
            initialization_options={"gradaudit": {"debounce": 0}},
        )
    )
    lsp_client.pulls = pulls(result)
    yield
    await lsp_client.shutdown_session()


class Doc:
    def __init__(self, client, name, text):
        self.client = client
        self.path = os.path.join(client.root, name)
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

    def replace(self, text):
        self.version += 1
        self.text = text
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def apply(self, edits):
        self.replace(apply_text_edits(self.text, edits))

    def close(self):
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=self.uri))
        )

    async def diagnostics(self, timeout=30.0):
        """The diagnostics of the current version: pulled, or waited for."""
        if self.client.pulls:
            report = await self.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=self.uri))
            )
            return list(report.items)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            got = self.client.published.get(self.uri, [])
            if got and got[-1][0] == self.version:
                return list(got[-1][1])
            await asyncio.sleep(0.05)
        raise AssertionError(
            f"no diagnostics for version {self.version} of {self.uri}: {got[-1:]} "
            f"{list(self.client.published)} {list(self.client.diagnostics)} "
            f"{[m.message[:300] for m in self.client.log_messages]}"
        )


def apply_text_edits(text, edits):
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(pos):  # the test texts are ASCII: UTF-16 units == characters
        return starts[pos.line] + pos.character if pos.line < len(lines) else len(text)

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a, b = offset(e.range.start), offset(e.range.end)
        text = text[:a] + e.new_text + text[b:]
    return text


def edits_of(edit: types.WorkspaceEdit, uri: str):
    if edit.document_changes:
        return [e for dc in edit.document_changes if dc.text_document.uri == uri for e in dc.edits]
    return list((edit.changes or {}).get(uri, []))


async def actions(client, doc, rng, only=None):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )


async def test_diagnostics_on_open(client):
    doc = Doc(client, "gate_open.py", GATE)
    diags = await doc.diagnostics()
    assert [(d.code, d.range.start.line) for d in diags] == [("GA110", 15)]
    d = diags[0]
    assert d.source == "gradaudit" and d.severity == types.DiagnosticSeverity.Error
    assert d.range.start.character == 8 and d.range.end.character == 28
    assert d.code_description is not None and d.code_description.href.endswith("GA110.md")
    assert os.path.exists(d.code_description.href[len("file://") :])
    lines = {r.location.range.start.line for r in d.related_information}
    assert 14 in lines  # sigmoid saved the tensor here
    assert 25 in lines  # loss.backward()
    assert "sigmoid" in d.message
    doc.close()


async def test_every_open_document_gets_its_diagnostics_unasked(client):
    # Issue 23: Neovim 0.11/0.12 (`nvim -O a.py b.py c.py`, a restored session) pulls for the buffer
    # in view only and takes no workspace/diagnostic/refresh: the other buffers stayed empty until
    # edited. A client that takes no refresh is pushed every document's diagnostics (and not offered
    # pull: it would show them twice); one that takes refreshes is told to pull again.
    assert client.pulls == (client.client_name == PULL_CLIENT)
    before = client.diagnostic_refresh_count
    docs = [Doc(client, f"every_{i}.py", GATE) for i in range(3)]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    if client.pulls:
        while client.diagnostic_refresh_count < before + len(docs) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        assert client.diagnostic_refresh_count >= before + len(docs)
        assert not any(doc.uri in client.published for doc in docs)
    else:
        while not all(client.published.get(doc.uri) for doc in docs) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        assert client.diagnostic_refresh_count == before
    for doc in docs:
        assert [d.code for d in await doc.diagnostics()] == ["GA110"]
        doc.close()


# the optimizer comes from a factory of a library that is not installed: the step is not understood
UNKNOWN_OPTIMIZER = """import torch
import torch.nn as nn
from mylib_not_installed import make_optimizer

model = nn.Linear(4, 2)
optimizer = make_optimizer(model)
for x in [torch.randn(8, 4)]:
    optimizer.zero_grad()
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
"""


async def test_a_step_not_understood_gets_an_information_diagnostic(client):
    doc = Doc(client, "not_understood.py", UNKNOWN_OPTIMIZER)
    [d] = await doc.diagnostics()
    assert (d.code, d.severity, d.source) == ("not-understood", types.DiagnosticSeverity.Information, "gradaudit")
    assert (d.range.start.line, d.range.start.character, d.range.end.character) == (9, 4, 19)  # loss.backward()
    head, why = d.message.splitlines()
    assert head == "training step not understood: backward() of `loss` in `<module>`"
    assert why.startswith("- optimizer unknown (unknown library): `optimizer.step()` (line 11)")
    assert "`mylib_not_installed`, which is not installed in the environment read" in why
    # with an optimizer the engine knows, the step is understood and the diagnostic goes
    doc.replace(UNKNOWN_OPTIMIZER.replace("make_optimizer(model)", "torch.optim.SGD(model.parameters(), lr=0.1)"))
    assert await doc.diagnostics() == []
    doc.close()


async def test_a_budget_from_the_project_names_its_setting(client):
    # a subfolder's pyproject.toml with a tiny statement budget: the training loop is not reached
    folder = os.path.join(client.root, "budgeted")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "pyproject.toml"), "w") as fh:
        fh.write("[tool.gradaudit]\nstatement-budget = 3\nloop-reserve = 0\n")
    source = (
        "import torch\nimport torch.nn as nn\n\n\ndef prepare(n):\n    total = 0\n    for i in range(n):\n"
        "        total += i\n    return total\n\n\nmodel = nn.Linear(4, 2)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nprepare(10)\nfor x in [torch.randn(8, 4)]:\n"
        "    optimizer.zero_grad()\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n"
    )
    doc = Doc(client, os.path.join("budgeted", "train.py"), source)
    diags = {d.code: d for d in await doc.diagnostics()}
    assert set(diags) == {"incomplete", "not-understood"}
    advice = "raise it with the `statementBudget` setting or `statement-budget` in [tool.gradaudit]"
    assert diags["incomplete"].message.endswith(advice)
    assert diags["not-understood"].range.start.line == 17
    assert diags["not-understood"].message.splitlines()[1] == (
        f"- not reached (budget): the budget of 3 statements followed ran out before it; {advice}"
    )
    doc.close()


async def test_quick_fix_applies_and_the_diagnostic_goes_away(client):
    doc = Doc(client, "gate_fix.py", GATE)
    (diag,) = await doc.diagnostics()
    acts = await actions(client, doc, diag.range)
    fix = next(a for a in acts if a.kind == types.CodeActionKind.QuickFix and a.title.endswith("(GA110)"))
    if fix.edit is None:
        fix = await client.code_action_resolve_async(fix)
    assert "g = g.clamp(0.05, 0.95)" in apply_text_edits(doc.text, edits_of(fix.edit, doc.uri))
    doc.apply(edits_of(fix.edit, doc.uri))
    assert await doc.diagnostics() == []
    doc.close()


async def test_ignore_action_silences_the_line(client):
    doc = Doc(client, "gate_ignore.py", GATE)
    (diag,) = await doc.diagnostics()
    acts = await actions(client, doc, diag.range)
    ignore = next(a for a in acts if a.title == "Ignore GA110 on this line")
    doc.apply(edits_of(ignore.edit, doc.uri))
    assert "g.clamp_(0.05, 0.95)  # gradaudit: ignore[GA110]" in doc.text
    assert await doc.diagnostics() == []
    doc.close()


async def test_fix_all_applies_safe_fixes(client):
    doc = Doc(client, "hidden.py", HIDDEN)
    diags = await doc.diagnostics()
    assert [d.code for d in diags] == ["GA109"]
    acts = await actions(
        client,
        doc,
        types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
        only=["source.fixAll.gradaudit"],
    )
    (fix_all,) = [a for a in acts if a.kind == "source.fixAll.gradaudit"]
    doc.apply(edits_of(fix_all.edit, doc.uri))
    assert "self.hidden = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])" in doc.text
    assert await doc.diagnostics() == []
    doc.close()


async def test_fix_all_command(client):
    doc = Doc(client, "hidden_cmd.py", HIDDEN)
    await doc.diagnostics()
    before = len(client.applied)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="gradaudit.fixAll", arguments=[doc.uri])
    )
    assert result["applied"] is True
    (params,) = client.applied[before:]
    assert "nn.ModuleList" in apply_text_edits(doc.text, edits_of(params.edit, doc.uri))
    doc.close()


async def test_code_lens_summarises_the_training_step(client):
    doc = Doc(client, "trainer.py", CLEAN)
    assert await doc.diagnostics() == []
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
    )
    (lens,) = lenses
    assert lens.range.start.line == 34  # loss.backward() in Trainer.fit
    title = lens.command.title
    assert title.startswith("loss <- F.cross_entropy(logits, y)")  # computed in training_step
    assert "4 params in 2 modules" in title and "SGD (1 group)" in title
    assert title.endswith("zero_grad -> backward -> step")
    assert lens.command.command == "gradaudit.showTrainingGraph"
    graph = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=lens.command.command, arguments=lens.command.arguments)
    )
    (step,) = graph["steps"]
    assert step["loss"] == "loss" and step["function"] == "Trainer.fit"
    assert [o["type"] for o in step["optimizers"]] == ["SGD"]
    assert [e["kind"] for e in step["events"]][:3] == ["zero_grad", "backward", "step"]
    doc.close()


async def test_code_lens_setting_turns_lenses_off_and_asks_for_a_refresh(client):
    doc = Doc(client, "trainer_lens.py", CLEAN)
    assert await doc.diagnostics() == []
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc.uri))
    assert len(await client.text_document_code_lens_async(params)) == 1
    before = client.lens_refreshes
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"gradaudit": {"codeLens": False, "debounce": 0}})
    )
    await asyncio.sleep(0.3)
    assert not await client.text_document_code_lens_async(params)
    caps = client.capabilities  # VS Code and Neovim 0.11 accept workspace/codeLens/refresh
    supports = bool(caps.workspace and caps.workspace.code_lens and caps.workspace.code_lens.refresh_support)
    assert (client.lens_refreshes > before) == supports
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"gradaudit": {"codeLens": True, "debounce": 0}})
    )
    await asyncio.sleep(0.3)
    assert len(await client.text_document_code_lens_async(params)) == 1
    doc.close()


async def test_hover_on_backward_and_on_the_optimizer(client):
    doc = Doc(client, "trainer_hover.py", CLEAN)
    await doc.diagnostics()
    h = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri), position=types.Position(line=34, character=20)
        )
    )
    assert h is not None and "reaches 4 parameters" in h.contents.value
    assert "`self.optimizer` (SGD" in h.contents.value
    assert "reached but not optimized: none" in h.contents.value
    h2 = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri), position=types.Position(line=12, character=30)
        )
    )
    assert h2 is not None and "group 0" in h2.contents.value
    h3 = await client.text_document_hover_async(
        types.HoverParams(  # on self.optimizer.zero_grad()
            text_document=types.TextDocumentIdentifier(uri=doc.uri), position=types.Position(line=33, character=22)
        )
    )
    assert h3 is not None and "**`self.optimizer`** (SGD)" in h3.contents.value
    assert "held but not reached: none" in h3.contents.value
    doc.close()


async def test_configuration_change_republishes(client):
    doc = Doc(client, "gate_config.py", GATE)
    assert [d.code for d in await doc.diagnostics()] == ["GA110"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"gradaudit": {"ignore": ["GA110"], "debounce": 0}})
    )
    await asyncio.sleep(0.2)
    assert await _settled(doc, lambda ds: ds == [])
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"gradaudit": {"ignore": [], "severity": {"GA110": "hint"}, "debounce": 0}}
        )
    )
    assert await _settled(doc, lambda ds: [d.severity for d in ds] == [types.DiagnosticSeverity.Hint])
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"gradaudit": {"severity": {}, "debounce": 0}})
    )
    doc.close()


async def _settled(doc, predicate, timeout=20.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if doc.client.pulls:
            ds = await doc.diagnostics()
        else:
            got = doc.client.published.get(doc.uri, [])
            ds = list(got[-1][1]) if got else None
        if ds is not None and predicate(ds):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_rapid_edits_never_publish_stale_results(client):
    doc = Doc(client, "rapid.py", GATE)
    await doc.diagnostics()
    fixed = GATE.replace("g.clamp_(0.05, 0.95)", "g = g.clamp(0.05, 0.95)")
    for i in range(12):
        doc.replace(GATE if i % 2 == 0 else fixed)
    doc.replace(fixed + "\n")
    assert await doc.diagnostics() == []
    if not client.pulls:
        versions = [v for v, _ in client.published[doc.uri]]
        assert versions == sorted(versions)  # never an older version after a newer one
        assert versions[-1] == doc.version
    doc.close()


async def test_findings_in_an_imported_module_show_in_that_module(client):
    src = os.path.join(DATA, "projects", "helper_detach")
    dst = os.path.join(client.root, "proj")
    shutil.copytree(src, dst, dirs_exist_ok=True)
    train = Doc(client, "proj/train.py", open(os.path.join(src, "train.py")).read())
    features = Doc(
        client, "proj/pkg/features.py", strip_markers(open(os.path.join(src, "pkg", "features.py")).read())[0]
    )
    assert await train.diagnostics() == []
    ok = await _settled(features, lambda ds: [(d.code, d.range.start.line) for d in ds] == [("GA101", 5)])
    assert ok, client.published.get(features.uri)
    train.close()
    features.close()


async def test_closing_clears_diagnostics(client):
    if client.pulls:
        pytest.skip("a pull client drops diagnostics of closed documents itself")
    doc = Doc(client, "gate_close.py", GATE)
    await doc.diagnostics()
    doc.close()
    for _ in range(100):
        got = client.published.get(doc.uri, [])
        if got and not got[-1][1] and got[-1][0] is None:  # a list or a tuple, as decoded
            break
        await asyncio.sleep(0.05)
    assert list(client.published[doc.uri][-1][1]) == [] and client.published[doc.uri][-1][0] is None


async def test_deep_nesting_is_analysed_around_and_reported(client):
    # a chain of 60,000 additions nests deeper than the engine (or Python's parser) follows:
    # before, the analysis failed and the document showed nothing
    deep = "x = " + " + ".join(["1"] * 60000) + "\n"
    doc = Doc(client, "deep.py", GATE + deep)
    diags = await doc.diagnostics()
    line = GATE.count("\n")
    assert "GA110" in [d.code for d in diags]
    [problem] = [d for d in diags if d.code in ("incomplete", "parse-error")]
    assert problem.range.start.line == line
    doc.close()


async def test_a_crashed_worker_is_replaced_and_the_server_carries_on(client):
    first = Doc(client, "before_crash.py", GATE)
    assert [d.code for d in await first.diagnostics()] == ["GA110"]
    for pid in _descendants(client._server.pid):
        os.kill(pid, signal.SIGKILL)
    for _ in range(200):
        if any("stopped unexpectedly" in m.message for m in client.log_messages):
            break
        await asyncio.sleep(0.05)
    assert any("stopped unexpectedly" in m.message for m in client.log_messages)
    other = Doc(client, "after_crash.py", GATE)
    assert [d.code for d in await other.diagnostics()] == ["GA110"]
    first.close()
    other.close()


def _descendants(pid: int) -> list[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    return [c for c, p in parents.items() if p == pid]
