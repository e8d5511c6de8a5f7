"""The language server across modules and into installed libraries: an edit of an imported module
re-analyses the open documents that read it; a library model's findings point into its source."""

import asyncio
import os
import textwrap

import pytest
import pytest_lsp
from helpers import strip_markers
from libenv import make_env
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from .conftest import PULL_CLIENT, client_capabilities, pulls, server_command

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLIENTS = ["neovim@v0.7.0", PULL_CLIENT]


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=server_command()), scope="module", params=CLIENTS, ids=CLIENTS
)
async def client(lsp_client: LanguageClient, request, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    env = make_env(tmp_path_factory.mktemp("env"))
    lsp_client.root = str(root)
    lsp_client.env = env
    lsp_client.published = {}

    def on_publish(params: types.PublishDiagnosticsParams):
        lsp_client.published.setdefault(params.uri, []).append(params.diagnostics)

    lsp_client.protocol.fm._features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=f"file://{root}",
            workspace_folders=[types.WorkspaceFolder(uri=f"file://{root}", name="ws")],
            initialization_options={"gradaudit": {"debounce": 0}, "interpreter": os.path.join(env, "bin", "python")},
        )
    )
    lsp_client.pulls = pulls(result)
    yield
    await lsp_client.shutdown_session()


def write(client, rel, text):
    path = os.path.join(client.root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(textwrap.dedent(text).lstrip())
    return path, f"file://{path}"


def open_doc(client, uri, text, version=1):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )


async def diagnostics_until(client, uri, predicate, timeout=60.0):
    """Diagnostics of `uri` (pulled or pushed) once `predicate` holds for them."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last = None
    while loop.time() < deadline:
        if client.pulls:
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            last = list(report.items)
        else:
            got = client.published.get(uri)
            last = list(got[-1]) if got else None
        if last is not None and predicate(last):
            return last
        await asyncio.sleep(0.1)
    raise AssertionError(f"diagnostics of {uri} never matched: {[(d.code, d.range.start.line) for d in last or []]}")


NET_LIST = """
import torch.nn as nn


def prepare(module):
    for p in module.parameters():
        p.requires_grad = False


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(8, 8) for _ in range(2)]
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x).relu()
        return self.out(x)
"""

TRAIN = """
import torch
import torch.nn.functional as F
from models.net import Net, prepare

model = Net()
prepare(model.out)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


async def test_editing_an_imported_module_updates_the_open_training_script(client):
    write(client, "models/__init__.py", "")
    net_path, net_uri = write(client, "models/net.py", NET_LIST)
    _, train_uri = write(client, "train.py", TRAIN)
    open_doc(client, net_uri, open(net_path).read())
    open_doc(client, train_uri, textwrap.dedent(TRAIN).lstrip())
    # the freeze happens in net.py's helper and is reported at its call in train.py; the plain
    # list hiding the layers' parameters is reported in net.py, from train.py's analysis
    train = await diagnostics_until(client, train_uri, lambda ds: any(d.code == "GA107" for d in ds))
    assert [(d.code, d.range.start.line) for d in train] == [("GA107", 5)]
    net = await diagnostics_until(client, net_uri, lambda ds: any(d.code == "GA109" for d in ds))
    assert [(d.code, d.range.start.line) for d in net] == [("GA109", 11)]
    # an unsaved edit of net.py: the helper stops freezing, the list becomes an nn.ModuleList
    fixed = (
        textwrap.dedent(NET_LIST)
        .lstrip()
        .replace("p.requires_grad = False", "p.requires_grad = True")
        .replace("[nn.Linear(8, 8) for _ in range(2)]", "nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])")
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=net_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    assert await diagnostics_until(client, train_uri, lambda ds: ds == []) == []
    assert await diagnostics_until(client, net_uri, lambda ds: ds == []) == []
    for uri in (net_uri, train_uri):
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )


async def test_a_change_on_disk_reaches_the_open_documents(client):
    write(client, "pkg/__init__.py", "")
    helper_path, _ = write(
        client,
        "pkg/helpers.py",
        """
        def freeze(module):
            for p in module.parameters():
                p.requires_grad = False
    """,
    )
    src = """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from pkg.helpers import freeze

        encoder, head = nn.Linear(8, 8), nn.Linear(8, 2)
        freeze(encoder)
        optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
        for step in range(3):
            x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
            loss = F.cross_entropy(head(encoder(x)), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    _, uri = write(client, "run.py", src)
    open_doc(client, uri, textwrap.dedent(src).lstrip())
    diags = await diagnostics_until(client, uri, lambda ds: bool(ds))
    assert ("GA107", 6) in [(d.code, d.range.start.line) for d in diags]
    # the helper (not open in the editor) changes on disk: the client's file watcher says so
    with open(helper_path, "w") as fh:
        fh.write("def freeze(module):\n    return module\n")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=f"file://{helper_path}", type=types.FileChangeType.Changed)]
        )
    )
    after = await diagnostics_until(client, uri, lambda ds: not any(d.code == "GA107" for d in ds))
    assert not any(d.code == "GA107" for d in after)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


LIB_SCRIPT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from fakevision import TinyNet

model = TinyNet(num_classes=10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.fc = nn.Linear(8, 3)  # <- GA108
for step in range(2):
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


async def test_library_model_diagnostic_points_into_site_packages(client):
    text, expected = strip_markers(LIB_SCRIPT.lstrip())
    _, uri = write(client, "finetune.py", text)
    open_doc(client, uri, text)
    diags = await diagnostics_until(client, uri, lambda ds: bool(ds))
    assert [(d.range.start.line + 1, d.code) for d in diags] == expected
    related = [r.location.uri for r in diags[0].related_information or []]
    assert any("site-packages/fakevision/models/tiny.py" in u for u in related), related
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


FEATURE_LOSS = """
import torch.nn.functional as F


def feature_loss(pred, target):
    return F.mse_loss(pred.detach(), target)
"""

FEATURE_TRAIN = """
import torch
import torch.nn as nn
from lossmods.features import feature_loss

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    opt.zero_grad()
    loss = feature_loss(model(x), y)
    loss.backward()
    opt.step()
"""


async def test_a_loss_module_shows_what_the_training_step_in_another_file_proves(client):
    write(client, "lossmods/__init__.py", "")
    loss_path, loss_uri = write(client, "lossmods/features.py", FEATURE_LOSS)
    train_path, _ = write(client, "fit_features.py", FEATURE_TRAIN)
    text = open(loss_path).read()
    open_doc(client, loss_uri, text)
    # only the loss module is open: the detach is proven by fit_features.py's step, named beside it
    diags = await diagnostics_until(client, loss_uri, lambda ds: any(d.code == "GA101" for d in ds))
    assert [(d.code, d.range.start.line) for d in diags] == [("GA101", 4)]
    related = [r.location.uri for r in diags[0].related_information or []]
    assert any(u.endswith("/fit_features.py") for u in related), related
    # the edit that fixes it, unsaved: the step reads the editor's text
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=loss_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text.replace("pred.detach()", "pred"))],
        )
    )
    assert await diagnostics_until(client, loss_uri, lambda ds: ds == []) == []
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=loss_uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    await diagnostics_until(client, loss_uri, lambda ds: any(d.code == "GA101" for d in ds))
    # the training script changes on disk (it no longer uses the loss): the module is analysed again
    with open(train_path, "w") as fh:
        fh.write(
            textwrap.dedent(FEATURE_TRAIN).lstrip().replace("feature_loss(model(x), y)", "(model(x) - y).pow(2).mean()")
        )
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=f"file://{train_path}", type=types.FileChangeType.Changed)]
        )
    )
    assert not any(
        d.code == "GA101"
        for d in await diagnostics_until(client, loss_uri, lambda ds: not any(d.code == "GA101" for d in ds))
    )
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=loss_uri))
    )
