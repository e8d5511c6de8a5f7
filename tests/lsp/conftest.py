import sys

import pytest_lsp
from lsprotocol import types

# pulls diagnostics and takes workspace/diagnostic/refresh: the VS Code extension's client
PULL_CLIENT = "vscode-languageclient"


def server_command():
    return [sys.executable, "-m", "gradaudit.server"]


def client_capabilities(name: str) -> types.ClientCapabilities:
    """pytest-lsp's capabilities captured from a real client (neovim@v0.11.0, emacs, ...), or
    PULL_CLIENT: VS Code 1.65's with what vscode-languageclient 8+ adds to them (the diagnostic
    pull with dynamic registration, and refreshSupport; vscode-languageclient's diagnostic.js)."""
    if name != PULL_CLIENT:
        return pytest_lsp.client_capabilities(name)
    caps = pytest_lsp.client_capabilities("visual-studio-code")
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(
        dynamic_registration=True,
        related_document_support=False,
        related_information=True,
        code_description_support=True,
        data_support=True,
    )
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps


def pulls(result: types.InitializeResult) -> bool:
    """The server offered the client pull diagnostics (else it pushes them)."""
    return result.capabilities.diagnostic_provider is not None
