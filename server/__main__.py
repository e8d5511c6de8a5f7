"""`python -m gradaudit.server` / `gradaudit server`: the language server over stdio (or TCP)."""

from __future__ import annotations

import argparse
import logging
import sys


def run(tcp: str | None = None) -> int:
    from .server import server

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # a $/cancelRequest for a request already answered is normal, not worth a warning in the client's log
    logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.ERROR)
    # the workers' threads (pickling, pipes) and the event loop share the GIL: hand it over
    # often, so that requests (hover, code actions) are answered meanwhile
    sys.setswitchinterval(0.0005)
    from .memory import bound_heap

    bound_heap()
    from .transport import run_stdio, run_tcp

    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            print("gradaudit: --tcp wants HOST:PORT", file=sys.stderr)
            return 2
        return run_tcp(server, host or "127.0.0.1", int(port))
    return run_stdio(server)


# what the server and its workers import, checked by --check without starting a server: every
# module of this package (listed, not hand-written, so a new one cannot be forgotten) and the engine
_NEEDS = (
    "lsprotocol.types",
    "pygls.lsp.server",
    "gradaudit.analysis.check.engine",
    "gradaudit.analysis.rules.fixes",
    "gradaudit.analysis.report.summary",
)


def _needed() -> list[str]:
    import pkgutil

    from . import __path__ as here

    return list(_NEEDS) + [f"gradaudit.server.{m.name}" for m in pkgutil.iter_modules(here) if m.name != "__main__"]


def check() -> int:
    """Import what the server needs and print one JSON line: editors test an installation (the
    VS Code extension's bundle with the user's interpreter) before starting the server with it."""
    import importlib
    import json
    import platform

    try:
        for name in _needed():
            importlib.import_module(name)
    except Exception as exc:  # any import failure: say which, in one line
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}))
        return 1
    from gradaudit.analysis import __version__

    print(json.dumps({"ok": True, "version": __version__, "python": platform.python_version()}))
    return 0


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The server's options, shared by `python -m gradaudit.server` and `gradaudit server`."""
    ap.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (for debugging)")
    # LSP clients (vscode-languageclient, ...) pass --stdio for the default transport
    ap.add_argument("--stdio", action="store_true", help="use stdio (the default; LSP clients pass it)")
    ap.add_argument(
        "--check",
        action="store_true",
        help="check that the server can start here, print one JSON line and exit (0: it can)",
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gradaudit server")
    add_arguments(ap)
    args = ap.parse_args(argv)
    return check() if args.check else run(args.tcp)


if __name__ == "__main__":
    sys.exit(main())
