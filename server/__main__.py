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
    # the analysis thread and the event loop share the GIL: hand it over often, so that requests
    # (hover, code actions) are answered while a long analysis runs
    sys.setswitchinterval(0.0005)
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            print("gradaudit: --tcp wants HOST:PORT", file=sys.stderr)
            return 2
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


# everything the server imports, checked by --check without starting a server
_NEEDS = ("lsprotocol.types", "pygls.lsp.server", "gradaudit.analysis.engine", "gradaudit.analysis.fixes",
          "gradaudit.analysis.summary", "gradaudit.server.convert", "gradaudit.server.documents",
          "gradaudit.server.settings")


def check() -> int:
    """Import what the server needs and print one JSON line: editors test an installation (the
    VS Code extension's bundle with the user's interpreter) before starting the server with it."""
    import importlib
    import json
    import platform
    try:
        for name in _NEEDS:
            importlib.import_module(name)
    except Exception as exc:   # any import failure: say which, in one line
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
    ap.add_argument("--check", action="store_true", help="check that the server can start here, print one "
                    "JSON line and exit (0: it can)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="gradaudit server")
    add_arguments(ap)
    args = ap.parse_args(argv)
    return check() if args.check else run(args.tcp)


if __name__ == "__main__":
    sys.exit(main())
