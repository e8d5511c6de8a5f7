"""`gradaudit server` starts the same server as `python -m gradaudit.server` (stdio and TCP)."""

import json
import os
import socket
import subprocess
import sys
import time

import pytest


def _frame(obj) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(stream) -> dict:
    length = None
    while True:
        line = stream.readline()
        if not line:
            raise EOFError("the server closed the stream")
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
        elif line in (b"\r\n", b"\n") and length is not None:
            return json.loads(stream.read(length))


def _init(capabilities) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"capabilities": capabilities, "rootUri": None},
    }


# pulls diagnostics and takes refreshes, as vscode-languageclient does
PULL = {
    "textDocument": {"diagnostic": {"dynamicRegistration": True}},
    "workspace": {"diagnostics": {"refreshSupport": True}},
}
INIT = _init(PULL)


@pytest.mark.parametrize(
    "command",
    [
        ["-m", "gradaudit.analysis.app.cli", "server"],
        ["-m", "gradaudit.analysis.app.cli", "server", "--stdio"],  # as vscode-languageclient starts it
        ["-m", "gradaudit.server", "--stdio"],
    ],
)
def test_server_over_stdio(command):
    p = subprocess.Popen(
        [sys.executable, *command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        p.stdin.write(_frame(INIT))
        p.stdin.flush()
        reply = _read(p.stdout)
        assert reply["id"] == 1
        assert reply["result"]["serverInfo"]["name"] == "gradaudit"
        caps = reply["result"]["capabilities"]
        assert caps["textDocumentSync"]["change"] == 2  # incremental
        assert caps["codeActionProvider"]["resolveProvider"] is True
        assert "gradaudit.showTrainingGraph" in caps["executeCommandProvider"]["commands"]
        assert caps["diagnosticProvider"]["identifier"] == "gradaudit"
        p.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        p.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        p.stdin.flush()
        assert p.wait(timeout=20) == 0
    finally:
        if p.poll() is None:
            p.kill()


@pytest.mark.parametrize(
    "capabilities",
    [{}, {"textDocument": {"diagnostic": {}, "publishDiagnostics": {}}}],  # Neovim 0.10 to 0.12 pull, take no refresh
    ids=["push-only", "pull-without-refresh"],
)
def test_no_pull_offered_to_a_client_that_takes_no_refresh(capabilities):
    # its diagnostics are pushed: offered pull as well, it would show them twice (issue 23)
    p = subprocess.Popen(
        [sys.executable, "-m", "gradaudit.server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        p.stdin.write(_frame(_init(capabilities)))
        p.stdin.flush()
        caps = _read(p.stdout)["result"]["capabilities"]
        assert "diagnosticProvider" not in caps
        assert caps["codeActionProvider"]["resolveProvider"] is True
    finally:
        p.kill()
        p.wait(timeout=10)


def test_server_over_tcp():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen(
        [sys.executable, "-m", "gradaudit.analysis.app.cli", "server", "--tcp", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        deadline = time.time() + 30
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=5)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        with conn:
            conn.sendall(_frame(INIT))
            reply = _read(conn.makefile("rb"))
            assert reply["result"]["serverInfo"]["name"] == "gradaudit"
    finally:
        p.kill()
        p.wait(timeout=10)
