"""JSON-RPC over stdio or TCP, strict about framing, clean on the way out.

pygls' own reader skips lines it does not understand: random bytes or `Content-Length: abc` on
stdin leave a server that answers nothing, forever. Here a malformed header ends the server
with one clear line on stderr (the client restarts it); a message cut short by the end of the
input says so; a body that is not JSON gets the JSON-RPC parse error. The `exit` notification,
the end of the input, SIGTERM and SIGINT all stop the analysis workers and return an exit status,
without a traceback.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:  # for annotations only: importing server.py makes the server
    from .server import GradauditServer

MAX_HEADER_LINE = 8192
MAX_HEADERS = 32
MAX_BODY = 1 << 30
_HEADER = re.compile(rb"^([A-Za-z0-9][A-Za-z0-9_.-]*)[ \t]*:[ \t]*(.*?)[ \t]*\r?\n$")


class FramingError(Exception):
    pass


def _shown(data: bytes) -> str:
    text = repr(data[:60])
    return text + ("..." if len(data) > 60 else "")


async def read_message(reader: asyncio.StreamReader) -> bytes | None:
    """The next message body; None at the end of the input between messages."""
    length = None
    for count in range(MAX_HEADERS + 1):
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if not exc.partial and count == 0:
                return None
            raise FramingError(f"the input ended inside a message header ({_shown(exc.partial)})") from None
        except asyncio.LimitOverrunError:
            raise FramingError(f"a header line longer than {MAX_HEADER_LINE} bytes") from None
        if line in (b"\r\n", b"\n"):
            if count == 0:
                raise FramingError("an empty line where a message header was expected")
            break
        m = _HEADER.match(line)
        if m is None:
            raise FramingError(f"not a message header: {_shown(line)}")
        if m.group(1).lower() == b"content-length":
            value = m.group(2)
            if not value.isdigit():
                raise FramingError(f"Content-Length is not a number: {_shown(value)}")
            length = int(value)
            if length > MAX_BODY:
                raise FramingError(f"Content-Length {length} is larger than {MAX_BODY}")
    else:
        raise FramingError(f"more than {MAX_HEADERS} header lines")
    if length is None:
        raise FramingError("a message without Content-Length")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise FramingError(f"the input ended {len(exc.partial)} bytes into a message of {length}") from None


class Session:
    """Feeds one connection's messages to the language server's protocol."""

    def __init__(self, ls: GradauditServer) -> None:
        self.ls = ls
        self.done: asyncio.Future[int] = asyncio.get_running_loop().create_future()  # the exit status

    def finish(self, code: int, message: str = "") -> None:
        if message:
            print(f"gradaudit: {message}", file=sys.stderr, flush=True)
        if not self.done.done():
            self.done.set_result(code)

    async def serve(self, reader: asyncio.StreamReader) -> None:
        protocol = self.ls.protocol
        while not self.done.done():
            try:
                body = await read_message(reader)
            except FramingError as exc:
                self.finish(1, f"malformed message from the client: {exc}; stopping")
                return
            except (ConnectionError, OSError) as exc:
                self.finish(1, f"the connection to the client failed: {exc}; stopping")
                return
            if body is None:
                self.finish(0 if protocol._shutdown else 1)  # the client went away
                return
            try:
                message = json.loads(body, object_hook=protocol.structure_message)
            except (ValueError, UnicodeDecodeError) as exc:
                print(f"gradaudit: a message from the client is not JSON ({exc}); ignored", file=sys.stderr, flush=True)
                self._send_raw(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"Parse error: {exc}"}}
                )
                continue
            except Exception as exc:  # JSON, but not a JSON-RPC message pygls can read
                print(
                    f"gradaudit: a message from the client could not be read ({exc!r}); ignored",
                    file=sys.stderr,
                    flush=True,
                )
                continue
            futures = getattr(protocol, "_request_futures", None)
            notification = hasattr(message, "method") and getattr(message, "id", None) is None
            before = set(futures) if notification and futures is not None else None
            try:
                protocol.handle_message(message)
            except SystemExit as exc:  # the `exit` notification
                self.finish(exc.code if isinstance(exc.code, int) else 0)
                return
            except Exception as exc:
                print(f"gradaudit: internal error handling a message: {exc!r}", file=sys.stderr, flush=True)
            if before is not None and futures is not None:
                _forget_when_done(futures, set(futures) - before)

    def _send_raw(self, obj: dict[str, Any]) -> None:
        try:
            self.ls.protocol._send_data(obj)
        except Exception:
            pass


def _forget_when_done(futures: dict[Any, asyncio.Future[Any]], keys: Iterable[Any]) -> None:
    """pygls files the future of every notification's handler under a fresh id and never removes
    it (one per keystroke: 10,000 didChange kept 7 MB alive). Ours go once their handler is done."""
    for key in keys:
        fut = futures.get(key)
        if fut is None:
            continue
        if fut.done():
            futures.pop(key, None)
        else:

            def forget(_: asyncio.Future[Any], key: Any = key) -> None:
                futures.pop(key, None)

            fut.add_done_callback(forget)


def _stdin_reader(loop: asyncio.AbstractEventLoop, fd: int) -> asyncio.StreamReader:
    """A StreamReader fed from `fd` by a daemon thread (portable: no add_reader on pipes)."""
    reader = asyncio.StreamReader(limit=MAX_HEADER_LINE, loop=loop)

    def pump() -> None:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            try:
                if chunk:
                    loop.call_soon_threadsafe(reader.feed_data, chunk)
                else:
                    loop.call_soon_threadsafe(reader.feed_eof)
                    return
            except RuntimeError:  # the loop is closed: the server stopped
                return

    threading.Thread(target=pump, name="gradaudit-stdin", daemon=True).start()
    return reader


def _on_signals(session_done: asyncio.Future[int], stop: Callable[[], None]) -> None:
    loop = asyncio.get_running_loop()
    for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGINT", None)):
        if sig is None:
            continue
        try:
            loop.add_signal_handler(sig, stop)
        except (NotImplementedError, RuntimeError, ValueError):  # Windows, or not the main thread
            pass


def _close(ls: GradauditServer) -> None:
    try:
        ls.analyses.shutdown()
    except Exception:
        pass


def run_stdio(ls: GradauditServer, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    from pygls.io_ import StdoutWriter

    async def main() -> int:
        loop = asyncio.get_running_loop()
        out = stdout or sys.stdout.buffer
        ls.protocol.set_writer(StdoutWriter(out))
        session = Session(ls)
        _on_signals(session.done, lambda: session.finish(0))
        reader = _stdin_reader(loop, (stdin or sys.stdin.buffer).fileno())
        serving = loop.create_task(session.serve(reader))
        code = await session.done
        serving.cancel()
        _close(ls)
        return code

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        _close(ls)
        return 0
    except BrokenPipeError:
        _close(ls)
        print("gradaudit: the client closed the connection; stopping", file=sys.stderr)
        return 1


def run_tcp(ls: GradauditServer, host: str, port: int) -> int:
    async def main() -> int:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[int] = loop.create_future()
        busy: list[asyncio.StreamWriter] = []

        async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if busy:  # one client at a time, like stdio
                writer.close()
                return
            busy.append(writer)
            ls.protocol.set_writer(writer)
            session = Session(ls)
            code = 1
            try:
                serving = loop.create_task(session.serve(reader))
                code = await session.done
                serving.cancel()
            finally:
                try:
                    writer.close()
                except Exception:
                    pass
                if not done.done():
                    done.set_result(code)

        server = await asyncio.start_server(connected, host, port, limit=MAX_HEADER_LINE)
        where = ", ".join(f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in server.sockets)
        print(f"gradaudit: listening on {where}", file=sys.stderr, flush=True)

        def stop() -> None:
            if not done.done():
                done.set_result(0)

        _on_signals(done, stop)
        code = await done
        server.close()
        _close(ls)
        return code

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        _close(ls)
        return 0
