"""How diagnostics reach a client: pulled (textDocument/diagnostic) or pushed (publishDiagnostics).

Pull works only with a client that also takes workspace/diagnostic/refresh: the server tells it
when an analysis lands, and it asks again for each document it shows (VS Code). A client that
pulls but takes no refresh (Neovim 0.10 to 0.12) asks once, when a document is opened, and only
for some documents: Neovim pulls for the buffer in view, and not for buffers opened together with
it (`nvim -O a.py b.py c.py`, a restored session), whose diagnostics then never came. Such a
client gets every document's diagnostics pushed, and is not offered the diagnostic provider at
all: a client that both pulls and takes pushes keeps the two apart (Neovim: two namespaces) and
would show every diagnostic twice.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, lsp_method


def pulls(caps: types.ClientCapabilities) -> bool:
    """The client pulls diagnostics and takes workspace/diagnostic/refresh."""
    td, ws = caps.text_document, caps.workspace
    return bool(td and td.diagnostic and ws and ws.diagnostics and ws.diagnostics.refresh_support)


class Protocol(LanguageServerProtocol):
    """pygls' protocol, with the diagnostic provider offered only to clients that pull (above)."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        if not pulls(params.capabilities):
            result.capabilities.diagnostic_provider = None
        return result
