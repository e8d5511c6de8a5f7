"""A small synchronous LSP client over stdio (standard library only), for tests that start the
server in ways pytest-lsp cannot: as another user, with another Python, from an unpacked .vsix."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time


class Session:
    def __init__(self, cmd, cwd, env=None, user=None, group=None):
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            user=user,
            group=group,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.inbox: queue.Queue = queue.Queue()
        self.notifications: list = []
        self.server_requests: list = []  # requests the server sent (answered by `request`'s loop)
        self.stderr: list = []
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(
            target=lambda: self.stderr.extend(line.decode("utf-8", "replace") for line in self.proc.stderr), daemon=True
        ).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode("ascii").partition(":")
                headers[k.strip().lower()] = v.strip()
            body = out.read(int(headers["content-length"]))
            self.inbox.put(json.loads(body))

    def _send(self, msg):
        data = json.dumps(msg).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, timeout=60.0):
        self._id += 1
        rid = self._id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self._wait(lambda m: m.get("id") == rid and "method" not in m, timeout, f"the answer to {method}")

    def _wait(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; server stderr:\n{''.join(self.stderr)[-3000:]}")
            try:
                msg = self.inbox.get(timeout=min(left, 0.5))
            except queue.Empty:
                if self.proc.poll() is not None:
                    time.sleep(0.2)
                    raise AssertionError(
                        f"the server exited ({self.proc.returncode}) while waiting for {what}:\n"
                        f"{''.join(self.stderr)[-3000:]}"
                    ) from None
                continue
            if "method" in msg and "id" in msg:  # a request from the server: answer it
                self.server_requests.append(msg)
                # an edit the server asks to apply is taken as applied (the test checks its content)
                result = {"applied": True} if msg["method"] == "workspace/applyEdit" else None
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
                continue
            if "method" in msg:
                self.notifications.append(msg)
            if pred(msg):
                if "error" in msg:
                    raise AssertionError(f"{what}: {msg['error']}")
                return msg.get("result", msg.get("params"))

    def initialize(self, root, options=None):
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": f"file://{root}",
                "capabilities": {
                    "textDocument": {
                        "publishDiagnostics": {"relatedInformation": True},
                        "codeAction": {
                            "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source.fixAll"]}}
                        },
                    }
                },
                "initializationOptions": options or {},
            },
            timeout=120,
        )
        self.notify("initialized", {})
        return result

    def open(self, path, text):
        uri = f"file://{path}"
        self.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
        )
        return uri

    def diagnostics(self, uri, timeout=90.0):
        for msg in self.notifications:
            if msg["method"] == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
                return msg["params"]["diagnostics"]
        return self._wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri,
            timeout,
            f"diagnostics of {uri}",
        )["diagnostics"]

    def code_actions(self, uri, diagnostic):
        return self.request(
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": diagnostic["range"],
                "context": {"diagnostics": [diagnostic], "only": ["quickfix"]},
            },
        )

    def close(self):
        try:
            self.request("shutdown", None, timeout=20)
            self.notify("exit", None)
            self.proc.wait(timeout=20)
        except Exception:
            self.proc.kill()
            self.proc.wait(timeout=20)


def apply(text: str, edits) -> str:
    """Apply LSP TextEdits (ASCII text: UTF-16 units are characters)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(pos):
        return starts[pos["line"]] + pos["character"] if pos["line"] < len(lines) else len(text)

    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        text = text[: offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]) :]
    return text


def edits_of(action, uri):
    edit = action.get("edit") or {}
    for change in edit.get("documentChanges") or ():
        if change["textDocument"]["uri"] == uri:
            return change["edits"]
    return (edit.get("changes") or {}).get(uri, [])
