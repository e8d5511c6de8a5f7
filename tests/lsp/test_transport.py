"""The server's transport under bad input and at exit: raw bytes on stdio, a TCP client, signals.

Each case starts `python -m gradaudit.server` and speaks to it directly."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time

import pytest
from lspwire import notify, read_messages, request

from .conftest import server_command

TIMEOUT = 60


INIT = request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
INITIALIZED = notify("initialized", {})


def start(*args, env=None):
    return subprocess.Popen(
        server_command() + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )


def finish(proc, data: bytes, close=True):
    """Send `data` (then end the input), wait for the server: (exit code, stdout, stderr)."""
    if close:
        out, err = proc.communicate(data, timeout=TIMEOUT)
    else:
        proc.stdin.write(data)
        proc.stdin.flush()
        proc.wait(timeout=TIMEOUT)  # the server must end by itself: the input stays open
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.stdin.close()
    return proc.returncode, out, err.decode(errors="replace")


def no_noise(err: str):
    assert "Traceback" not in err, err
    assert "SystemExit" not in err, err
    assert "leaked semaphore" not in err, err


# ------------------------------------------------------------------ malformed framing


def test_random_bytes_end_the_server_with_a_clear_message():
    # before: the server stayed alive and mute forever
    proc = start()
    code, out, err = finish(proc, random.Random(7).randbytes(4096), close=False)
    assert code == 1
    assert "gradaudit: malformed message from the client: not a message header" in err
    no_noise(err)


def test_content_length_not_a_number():
    proc = start()
    code, out, err = finish(proc, b"Content-Length: abc\r\n\r\n{}", close=False)
    assert code == 1
    assert "Content-Length is not a number: b'abc'" in err
    no_noise(err)


def test_content_length_larger_than_the_data_then_eof():
    # before: exit 0 with a traceback
    proc = start()
    code, out, err = finish(proc, b'Content-Length: 500\r\n\r\n{"jsonrpc": "2.0"')
    assert code == 1
    assert "the input ended 17 bytes into a message of 500" in err
    no_noise(err)


def test_endless_header_line():
    proc = start()
    code, out, err = finish(proc, b"X" * 20000, close=False)
    assert code == 1 and "header line longer than" in err
    no_noise(err)


def test_a_body_that_is_not_json_gets_a_parse_error_and_the_server_goes_on():
    proc = start()
    bad = b"Content-Length: 9\r\n\r\nnot json!"
    code, out, err = finish(proc, bad + INIT + INITIALIZED + request(2, "shutdown") + notify("exit"))
    messages = read_messages(out)
    assert messages[0]["error"]["code"] == -32700 and messages[0]["id"] is None
    assert any(m.get("id") == 1 and "capabilities" in m.get("result", {}) for m in messages)
    assert code == 0
    assert "is not JSON" in err
    no_noise(err)


def test_headers_are_case_insensitive_and_content_type_is_accepted():
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        }
    ).encode()
    msg = b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" % len(body) + body
    proc = start()
    code, out, err = finish(proc, msg + request(2, "shutdown") + notify("exit"))
    assert [m.get("id") for m in read_messages(out)] == [1, 2]
    assert code == 0
    no_noise(err)


# ------------------------------------------------------------------ clean exits


def _workers(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except OSError:
                continue
    return out


def _gone(pids, timeout=10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(
            os.path.exists(f"/proc/{p}") and "Z" not in open(f"/proc/{p}/stat").read().rsplit(")", 1)[1][:3]
            for p in pids
            if os.path.exists(f"/proc/{p}")
        ):
            return True
        time.sleep(0.05)
    return False


def test_stdio_shutdown_and_exit_is_clean():
    proc = start()
    code, out, err = finish(proc, INIT + INITIALIZED + request(2, "shutdown") + notify("exit"), close=False)
    assert code == 0
    assert err.strip() == ""


def test_exit_without_shutdown_exits_1():
    proc = start()
    code, out, err = finish(proc, INIT + INITIALIZED + notify("exit"), close=False)
    assert code == 1
    no_noise(err)


def test_eof_between_messages_ends_the_server_and_its_workers():
    proc = start()
    proc.stdin.write(INIT + INITIALIZED)
    proc.stdin.flush()
    deadline = time.monotonic() + TIMEOUT
    while len(_workers(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _workers(proc.pid)
    assert len(workers) >= 2  # the small-lane worker and its spare
    code, out, err = finish(proc, b"")
    no_noise(err)
    assert _gone(workers)


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32", reason="POSIX signals")
def test_sigterm_is_clean_no_leaked_semaphores():
    proc = start()
    proc.stdin.write(INIT + INITIALIZED)
    proc.stdin.flush()
    deadline = time.monotonic() + TIMEOUT
    while len(_workers(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _workers(proc.pid)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=TIMEOUT)
    err = proc.stderr.read().decode(errors="replace")
    proc.stdin.close()
    assert proc.returncode == 0
    no_noise(err)
    assert _gone(workers)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_tcp_exit_is_clean():
    # before: `exit` logged an unhandled SystemExit in client_connected_cb
    port = _free_port()
    proc = subprocess.Popen(
        server_command() + ["--tcp", f"127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + TIMEOUT
    sock = None
    while time.monotonic() < deadline:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    assert sock is not None
    with sock:
        sock.sendall(INIT + INITIALIZED + request(2, "shutdown"))
        got = b""
        while b'"id": 2' not in got and b'"id":2' not in got:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
        sock.sendall(notify("exit"))
        out, err = proc.communicate(timeout=TIMEOUT)
    err = err.decode(errors="replace")
    assert proc.returncode == 0, err
    assert [m.get("id") for m in read_messages(got)] == [1, 2]
    no_noise(err)
    assert f"listening on 127.0.0.1:{port}" in err


def test_tcp_malformed_framing_is_a_clear_message():
    port = _free_port()
    proc = subprocess.Popen(
        server_command() + ["--tcp", f"127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    with sock:
        sock.sendall(b"Content-Length: abc\r\n\r\n")
        out, err = proc.communicate(timeout=TIMEOUT)
    err = err.decode(errors="replace")
    assert proc.returncode == 1
    assert "Content-Length is not a number" in err
    no_noise(err)


# ------------------------------------------------------------------ memory per message


def test_notifications_leave_nothing_behind():
    """pygls keeps the future of every notification's handler forever (a memory leak per
    keystroke, found by benchmarks/lsp_load.py); the transport forgets them once done."""
    import asyncio

    from gradaudit.server.server import GradauditServer
    from gradaudit.server.transport import Session, _stdin_reader

    async def main():
        ls = GradauditServer()
        r, w = os.pipe()
        sent = []

        class Sink:
            def write(self, data):
                sent.append(data)

            def close(self):
                pass

        ls.protocol.set_writer(Sink())
        session = Session(ls)
        serving = asyncio.ensure_future(session.serve(_stdin_reader(asyncio.get_running_loop(), r)))
        uri = "file:///tmp/gradaudit-notification-leak.py"
        data = INIT + INITIALIZED + notify("workspace/didChangeConfiguration", {"settings": {"debounce": 5000}})
        data += notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}},
        )
        for v in range(2, 1002):
            data += notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": v},
                    "contentChanges": [
                        {
                            "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}},
                            "text": str(v % 10),
                        }
                    ],
                },
            )
        data += request(
            2, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}
        )
        os.write(w, data)
        for _ in range(400):
            if any(b'"id": 2' in s for s in sent):
                break
            await asyncio.sleep(0.05)
        assert any(b'"id": 2' in s for s in sent)
        assert ls.workspace.get_text_document(uri).source == "x = 1\n"  # 1001 % 10 == 1: applied in order
        leftover = len(ls.protocol._request_futures)
        ls.analyses.shutdown()
        serving.cancel()
        os.close(w)
        return leftover

    assert asyncio.run(main()) < 5  # before: one per notification (1,000+)
