"""Notebook documents in the language server: notebookDocument/didOpen, didChange, didClose; the
cells analysed as one program; diagnostics, quick fixes, code lenses and hover in the cells; an
edit republishes only the cells whose diagnostics changed."""

import sys
import time

import pytest
from lspclient import Session, apply, edits_of

NB = "file:///ws/lesson.ipynb"
CELLS = [
    ("markdown", "# A training step over four cells"),
    ("code", "%matplotlib inline\nimport torch\nimport torch.nn as nn"),
    ("code", "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))\nx = torch.randn(16, 4)"),
    ("code", "opt = torch.optim.SGD(model.parameters(), lr=0.1)"),
    ("code", "for step in range(3)\n    pass"),
    (
        "code",
        "%%time\nfor step in range(3):\n    opt.zero_grad()\n    loss = model(x).detach().pow(2).mean()\n"
        "    loss.backward()\n    opt.step()",
    ),
]


def cell_uri(i):
    return f"vscode-notebook-cell:/ws/lesson.ipynb#W{i}sZmlsZQ%3D%3D"


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    s = Session([sys.executable, "-m", "gradaudit.server"], cwd=str(root))
    result = s.request(
        "initialize",
        {
            "processId": None,
            "rootUri": f"file://{root}",
            "capabilities": {
                "textDocument": {"publishDiagnostics": {"relatedInformation": True}, "codeAction": {}},
                "notebookDocument": {"synchronization": {"dynamicRegistration": False}},
            },
            "initializationOptions": {"gradaudit": {"debounce": 0}},
        },
        timeout=120,
    )
    s.capabilities = result["capabilities"]
    s.notify("initialized", {})
    s.notify(
        "notebookDocument/didOpen",
        {
            "notebookDocument": {
                "uri": NB,
                "notebookType": "jupyter-notebook",
                "version": 1,
                "cells": [
                    {"kind": 2 if kind == "code" else 1, "document": cell_uri(i)} for i, (kind, _) in enumerate(CELLS)
                ],
            },
            "cellTextDocuments": [
                {
                    "uri": cell_uri(i),
                    "languageId": "python" if kind == "code" else "markdown",
                    "version": 1,
                    "text": text,
                }
                for i, (kind, text) in enumerate(CELLS)
            ],
        },
    )
    yield s
    s.close()


def published(session, uri, after=0, timeout=90.0):
    """The last diagnostics published for `uri` after the `after`-th notification."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [
            m["params"]["diagnostics"]
            for m in session.notifications[after:]
            if m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        ]
        if found:
            return found[-1]
        try:
            session.request("gradaudit/noSuchRequest", {}, timeout=1.0)  # pumps the inbox
        except AssertionError:
            pass
    raise AssertionError(f"no diagnostics for {uri}")


def test_notebook_sync_is_advertised(session):
    sync = session.capabilities["notebookDocumentSync"]
    assert sync["notebookSelector"] == [{"cells": [{"language": "python"}, {"language": "markdown"}]}]


def test_diagnostics_land_in_their_cells(session):
    [d] = published(session, cell_uri(5))
    assert d["code"] == "GA101"
    assert d["range"] == {"start": {"line": 3, "character": 11}, "end": {"line": 3, "character": 28}}
    # the optimizer the cut starves is in another cell: related information points into it
    related = {(r["location"]["uri"], r["location"]["range"]["start"]["line"]) for r in d["relatedInformation"]}
    assert (cell_uri(3), 0) in related
    [p] = published(session, cell_uri(4))
    assert p["message"].startswith("could not parse: expected ':'")
    assert p["range"]["start"] == {"line": 0, "character": 20}
    assert published(session, cell_uri(2)) == []


def test_code_lens_and_hover_in_a_cell(session):
    published(session, cell_uri(5))
    lenses = session.request("textDocument/codeLens", {"textDocument": {"uri": cell_uri(5)}})
    [lens] = lenses
    assert lens["range"]["start"]["line"] == 4
    assert "SGD" in lens["command"]["title"]
    assert lens["command"]["arguments"][0] == NB
    hover = session.request(
        "textDocument/hover", {"textDocument": {"uri": cell_uri(5)}, "position": {"line": 4, "character": 10}}
    )
    assert hover is not None and "backward" in hover["contents"]["value"]
    graph = session.request(
        "workspace/executeCommand", {"command": "gradaudit.showTrainingGraph", "arguments": [cell_uri(5)]}
    )
    assert graph["uri"] == NB and graph["notebook"] is True
    [step] = graph["steps"]
    assert (step["cell"], step["cellLine"], step["cellUri"]) == (6, 5, cell_uri(5))


def test_fix_all_in_a_notebook_edits_the_cells_the_fixes_fall_in(session):
    """source.fixAll (an editor's 'fix all on save') and the gradaudit.fixAll command work on a
    notebook as on a file: every safe fix of the notebook, each as an edit of its own cell."""
    [d] = published(session, cell_uri(5))
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    for cell in (cell_uri(5), cell_uri(2)):  # asked from any cell of the notebook
        [action] = session.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": cell}, "range": whole, "context": {"diagnostics": [], "only": ["source.fixAll"]}},
        )
        assert action["kind"] == "source.fixAll.gradaudit"
        [change] = action["edit"]["documentChanges"]
        assert change["textDocument"]["uri"] == cell_uri(5)
        fixed = apply(CELLS[5][1], change["edits"])
        assert "loss = model(x).pow(2).mean()" in fixed and fixed.startswith("%%time\n")
    # the command, given the notebook or one of its cells
    for target in (NB, cell_uri(3)):
        before = len(session.server_requests)
        result = session.request("workspace/executeCommand", {"command": "gradaudit.fixAll", "arguments": [target]})
        assert result == {"applied": True}
        [sent] = [m for m in session.server_requests[before:] if m["method"] == "workspace/applyEdit"]
        [change] = sent["params"]["edit"]["documentChanges"]
        assert change["textDocument"]["uri"] == cell_uri(5)
        assert "loss = model(x).pow(2).mean()" in apply(CELLS[5][1], change["edits"])
    # with the quick fixes of the cell that has a safe one, as in a text document
    actions = session.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": cell_uri(5)}, "range": d["range"], "context": {"diagnostics": [d]}},
    )
    assert [a["title"] for a in actions] == [
        "Drop `.detach()` (GA101)",
        "Ignore GA101 on this line",
        "gradaudit: fix all safe fixes",
    ]


def test_quick_fix_in_a_cell_then_only_that_cell_is_republished(session):
    [d] = published(session, cell_uri(5))
    actions = session.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": cell_uri(5)}, "range": d["range"], "context": {"diagnostics": [d]}},
    )
    titles = [a["title"] for a in actions]
    assert titles[:2] == ["Drop `.detach()` (GA101)", "Ignore GA101 on this line"]
    edits = edits_of(actions[0], cell_uri(5))
    fixed = apply(CELLS[5][1], edits)
    assert "loss = model(x).pow(2).mean()" in fixed
    mark = len(session.notifications)
    session.notify(
        "notebookDocument/didChange",
        {
            "notebookDocument": {"uri": NB, "version": 2},
            "change": {
                "cells": {"textContent": [{"document": {"uri": cell_uri(5), "version": 2}, "changes": edits_to(edits)}]}
            },
        },
    )
    assert published(session, cell_uri(5), after=mark) == []
    # the other cells' diagnostics did not change: nothing was published for them
    time.sleep(1.0)
    others = [
        m["params"]["uri"]
        for m in session.notifications[mark:]
        if m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] != cell_uri(5)
    ]
    assert others == []


def edits_to(edits):
    return [{"range": e["range"], "text": e["newText"]} for e in edits]


def test_close_clears_the_cells(session):
    mark = len(session.notifications)
    session.notify(
        "notebookDocument/didClose",
        {"notebookDocument": {"uri": NB}, "cellTextDocuments": [{"uri": cell_uri(i)} for i in range(len(CELLS))]},
    )
    assert published(session, cell_uri(4), after=mark) == []
