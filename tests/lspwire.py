"""LSP on the wire, for tests that talk to the server without a client library."""

from __future__ import annotations

import json


def frame(obj) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(id_, method, params=None) -> bytes:
    return frame({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})


def notify(method, params=None) -> bytes:
    return frame({"jsonrpc": "2.0", "method": method, "params": params})


def read_messages(data: bytes) -> list:
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1])
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


class Reader:
    """Messages from a server's stdout as they come (blocking)."""

    def __init__(self, stream):
        self.stream = stream

    def next(self):
        length = None
        while True:
            line = self.stream.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length"):
                length = int(line.split(b":")[1])
        return json.loads(self.stream.read(length))

    def until(self, predicate):
        """Messages until one matches `predicate` (returned last); None if the stream ends first."""
        seen = []
        while True:
            m = self.next()
            if m is None:
                return seen, None
            seen.append(m)
            if predicate(m):
                return seen, m
