"""The "Generate gradient-flow test" code action on backward(): it writes the test gradaudit probe
--emit writes for that step, next to the script, and asks the client to show it."""

import ast
import os

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from .conftest import server_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GAN = open(os.path.join(ROOT, "examples", "gan_training.py")).read()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=server_command()), scope="module")
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    lsp_client.root = str(root)
    caps = pytest_lsp.client_capabilities("visual-studio-code")
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=caps, root_uri=f"file://{root}", initialization_options={"gradaudit": {"debounce": 0}}
        )
    )
    yield
    await lsp_client.shutdown_session()


async def open_doc(client, name, text):
    path = os.path.join(client.root, name)
    with open(path, "w") as fh:
        fh.write(text)
    uri = f"file://{path}"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return path, uri


async def code_actions(client, uri, line, only=None):
    pos = types.Position(line=line - 1, character=8)
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=pos, end=pos),
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )


async def test_action_on_backward_writes_the_test(client):
    path, uri = await open_doc(client, "gan.py", GAN)
    acts = await code_actions(client, uri, 77)  # g_loss.backward()
    (act,) = [a for a in acts if a.title.startswith("Generate gradient-flow test")]
    assert act.title == "Generate gradient-flow test for `g_loss.backward()`"
    # lsprotocol's client side reads any action that carries a command as a bare Command (with the
    # nested command as text): the wire has the CodeAction, what VS Code and other clients read
    assert getattr(act, "kind", "source.gradaudit.gradflowTest") == "source.gradaudit.gradflowTest"
    assert "'command': 'gradaudit.generateGradflowTest'" in str(act.command) and f"'{uri}', 77" in str(act.command)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="gradaudit.generateGradflowTest", arguments=[uri, 77])
    )
    target = os.path.join(client.root, "test_gradflow_gan.py")
    assert result["path"] == target and result["tests"] == 1
    text = open(target).read()
    tree = ast.parse(text)
    tests = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    assert tests == ["test_gradflow_main_g_loss_line77"]
    assert "SCRIPT = os.path.join(HERE, 'gan.py')" in text and "optimizers=['opt_g']" in text
    assert [d.uri for d in client.shown_documents] == [f"file://{target}"]


async def test_no_action_away_from_backward(client):
    _, uri = await open_doc(client, "gan2.py", GAN)
    acts = await code_actions(client, uri, 60)
    assert not [a for a in acts or [] if a.title.startswith("Generate gradient-flow test")]
    # asked for source actions only, it is offered too; fix-all requests do not get it
    acts = await code_actions(client, uri, 71, only=["source"])
    assert [a.title for a in acts] == ["Generate gradient-flow test for `d_loss.backward()`"]
    acts = await code_actions(client, uri, 71, only=["source.fixAll"])
    assert not [a for a in acts or [] if a.title.startswith("Generate")]
