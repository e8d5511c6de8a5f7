"""Configuration problems in the language server (issue 14): a wrong `[tool.gradaudit]` key or a
wrong editor setting is shown once with window/showMessage, that key takes its default, and the
documents still get their diagnostics."""

import asyncio
import os

import pytest
import pytest_lsp
from helpers import strip_markers
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from .conftest import server_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
GATE = strip_markers(open(os.path.join(DATA, "bugs", "relu_inplace_sigmoid.py")).read())[0]  # GA110


@pytest_lsp.fixture(config=ClientServerConfig(server_command=server_command()), scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    lsp_client.root = root

    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def on_lens_refresh(params):
        return None

    # a project whose select is wrong (it threw in the worker: no diagnostics ever) and whose exclude is a string
    (root / "pyproject.toml").write_text('[tool.gradaudit]\nselect = true\nexclude = "legacy/**"\n')
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=f"file://{root}",
            initialization_options={"gradaudit": {"debounce": "soon", "codeLens": False}},
        )
    )
    yield
    await lsp_client.shutdown_session()


def open_doc(client, rel, text):
    path = client.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    uri = f"file://{path}"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    return uri


async def pulled(client, uri):
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return list(report.items)


def shown(client, needle):
    return [m for m in client.messages if needle in m.message]


async def test_bad_setting_is_shown_once_and_takes_its_default(client):
    await asyncio.sleep(0.5)
    [m] = shown(client, "debounce")
    assert m.type == types.MessageType.Warning
    assert m.message.startswith(
        'gradaudit: client settings: gradaudit debounce: expected a whole number >= 0, got "soon" (a string)'
    )
    # codeLens, which was right, applies; debounce keeps its default
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=open_doc(client, "lens.py", GATE)))
    )
    assert not lenses


async def test_bad_pyproject_key_is_shown_once_and_diagnostics_still_come(client):
    uris = [open_doc(client, f"train{i}.py", GATE) for i in range(3)]
    for uri in uris:
        diags = await pulled(client, uri)
        assert [d.code for d in diags] == ["GA110"]  # select took its default: every rule
    for uri in uris:  # edits analyse again: still one message
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=GATE + "\n")],
            )
        )
        await pulled(client, uri)
    [m] = shown(client, "[tool.gradaudit] select")
    pyproject = client.root / "pyproject.toml"
    assert m.message == (
        f"gradaudit: {pyproject}: [tool.gradaudit] select: expected a list of rule codes, prefixes "
        "or names (`GA101`, `GA1`, `detach-cuts-loss`), got true (a boolean) (using the default for it)"
    )
    assert m.type == types.MessageType.Warning


async def test_exclude_as_a_string_applies_in_the_editor_too(client):
    # as `gradaudit check` skips legacy/**, the editor reports nothing there, and the rest as usual
    assert await pulled(client, open_doc(client, "legacy/old.py", GATE)) == []
    assert [d.code for d in await pulled(client, open_doc(client, "current.py", GATE))] == ["GA110"]


async def test_fixed_then_broken_again_is_shown_again(client):
    pyproject = client.root / "pyproject.toml"
    pyproject.write_text('[tool.gradaudit]\nexclude = ["legacy/**"]\n')
    uri = open_doc(client, "again.py", GATE)
    await pulled(client, uri)
    await asyncio.sleep(0.2)
    assert len(shown(client, "[tool.gradaudit] select")) == 1
    pyproject.write_text("[tool.gradaudit]\nselect = 5\n")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=GATE + "\n")],
        )
    )
    assert [d.code for d in await pulled(client, uri)] == ["GA110"]
    await asyncio.sleep(0.2)
    assert len(shown(client, "[tool.gradaudit] select")) == 2
    assert "got 5 (a number)" in shown(client, "[tool.gradaudit] select")[-1].message


async def test_did_change_configuration_problems_are_shown(client):
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"gradaudit": {"select": ["GA110"], "severity": {"GA110": "loud"}, "colour": "red"}}
        )
    )
    await asyncio.sleep(0.5)
    assert len(shown(client, "gradaudit severity: 'GA110': expected one of error, warning")) == 1
    [unknown] = shown(client, "gradaudit colour: unknown key")
    assert unknown.message.endswith("(ignored)")
    uri = open_doc(client, "sev.py", GATE)
    [d] = await pulled(client, uri)
    assert d.code == "GA110" and d.severity == types.DiagnosticSeverity.Error  # severity kept its default
