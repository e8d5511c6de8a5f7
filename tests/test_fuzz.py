"""Fuzzing: mangled real code through the engine, --fix and the language server.

No exception escapes, every fix leaves a file that parses, every analysis ends within its budget,
and the server answers every version. A fixed-seed slice runs with the test suite (a couple of
minutes); a longer random run by hand:

    GRADAUDIT_FUZZ=2000 .venv/bin/python -m pytest -q tests/test_fuzz.py

(GRADAUDIT_FUZZ: examples per test, with a new random seed each run; hypothesis prints the
failing case and its seed.)
"""

from __future__ import annotations

import ast
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import pytest
from fuzzcases import describe, sources
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lspwire import Reader, notify, request

from gradaudit.analysis.app import cli
from gradaudit.analysis.check.engine import Analyzer, Result
from gradaudit.analysis.check.fixes import fix_source
from gradaudit.analysis.source.program import ParseError, decode_source

LONG = int(os.environ.get("GRADAUDIT_FUZZ", "0"))
BUDGET = 3.0  # seconds of interpretation per analysis


def fuzz_settings(ci_examples: int):
    common = {"deadline": None, "suppress_health_check": list(HealthCheck), "database": None}
    if LONG:
        return settings(max_examples=LONG, derandomize=False, **common)
    return settings(max_examples=ci_examples, derandomize=True, **common)


def _parse_seconds(src: str) -> float:
    t0 = time.monotonic()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(src.lstrip("\ufeff"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    return time.monotonic() - t0


# ------------------------------------------------------------------ the engine


@fuzz_settings(120)
@given(sources())
def test_engine_never_raises_and_ends_within_its_budget(src):
    parse = _parse_seconds(src)
    t0 = time.monotonic()
    result = Analyzer(time_budget=BUDGET).analyze_source("fuzz.py", src)
    elapsed = time.monotonic() - t0
    assert isinstance(result, Result)
    # the budget bounds the interpretation; parsing (and re-parsing what recovery blanks) comes on top
    assert elapsed < BUDGET + 12 * parse + 5, (elapsed, parse, describe(src))
    n = src.count("\n") + src.count("\r") + 1
    for f in result.findings:
        assert 1 <= f.span.line <= n
    for e in result.problems:
        assert 1 <= e.line <= n + 1 and e.msg
    if result.error is None:
        assert result.model is not None


@fuzz_settings(60)
@given(sources())
def test_fixes_always_leave_a_file_that_parses(src):
    result = Analyzer(time_budget=BUDGET).analyze_source("fuzz.py", src)
    for only_safe in (True, False):
        new, applied = fix_source(src, result.findings, only_safe=only_safe)
        if applied:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(new)
        else:
            assert new == src


@fuzz_settings(25)
@given(sources(max_mutations=2), st.sampled_from(["utf-8", "utf-8-sig", "latin-1"]))
def test_cli_fix_on_files_never_raises(src, encoding):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fuzz.py")
        data = src.encode(encoding, errors="replace")
        if encoding == "latin-1" and not data.startswith(b"#"):
            data = b"# -*- coding: latin-1 -*-\n" + data
        with open(path, "wb") as fh:
            fh.write(data)
        out, err = _capture(
            lambda: cli.main(
                [
                    "check",
                    "--fix",
                    "--unsafe-fixes",
                    "--no-progress",
                    "--time-budget",
                    str(BUDGET),
                    "--format",
                    "json",
                    path,
                ]
            )
        )
        code, stdout = out
        assert code in (0, 1, 2), err
        assert "Traceback" not in err, err
        with open(path, "rb") as fh:
            after = fh.read()
        if after != data:
            text, _ = decode_source(path, after)
            ast.parse(text)


def _capture(fn):
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = fn()
    return (code, out.getvalue()), err.getvalue()


@fuzz_settings(200)
@given(
    st.binary(max_size=200),
    st.sampled_from(
        [
            b"",
            b"\xef\xbb\xbf",
            b"# coding: latin-1\n",
            b"# coding: utf-16\n",
            b"# coding: bogus\n",
            b"\xef\xbb\xbf# coding: latin-1\n",
        ]
    ),
)
def test_decoding_any_bytes_is_text_or_a_parse_error(data, head):
    try:
        text, encoding = decode_source("fuzz.py", head + data)
    except ParseError as exc:
        assert exc.line >= 1 and exc.msg
        return
    assert isinstance(text, str)
    Analyzer(time_budget=BUDGET).analyze_source("fuzz.py", text)


# ------------------------------------------------------------------ the language server


class Server:
    """One server for the whole module, fed every case as a new version of one document."""

    def __init__(self, tmp):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gradaudit.server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=tmp,
        )
        self.messages: queue.Queue = queue.Queue()
        self.errors: list = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()
        self.uri = f"file://{tmp}/fuzz.py"
        self.version = 0
        self.next_id = 10
        self.send(
            request(
                1,
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": f"file://{tmp}",
                    "capabilities": {},
                    "initializationOptions": {"gradaudit": {"debounce": 0, "timeBudget": BUDGET}},
                },
            )
        )
        self.wait(lambda m: m.get("id") == 1, 120)
        self.send(notify("initialized", {}))

    def _read(self):
        reader = Reader(self.proc.stdout)
        while True:
            m = reader.next()
            if m is None:
                self.messages.put(None)
                return
            self.messages.put(m)

    def _drain(self):
        for line in self.proc.stderr:
            self.errors.append(line.decode(errors="replace"))

    def send(self, data: bytes):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait(self, predicate, timeout):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "the server did not answer in time"
            m = self.messages.get(timeout=left)
            assert m is not None, "the server exited: " + "".join(self.errors[-20:])
            if m.get("method") == "window/logMessage":
                text = m["params"]["message"]
                assert "Traceback" not in text and "internal error" not in text, text
            if predicate(m):
                return m

    def edit(self, text: str) -> dict:
        self.version += 1
        if self.version == 1:
            self.send(
                notify(
                    "textDocument/didOpen",
                    {"textDocument": {"uri": self.uri, "languageId": "python", "version": 1, "text": text}},
                )
            )
        else:
            self.send(
                notify(
                    "textDocument/didChange",
                    {"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": [{"text": text}]},
                )
            )
        version = self.version
        return self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["version"] == version,
            BUDGET * 2 + 60,
        )

    def ask(self, method, params) -> dict:
        self.next_id += 1
        i = self.next_id
        self.send(request(i, method, params))
        return self.wait(lambda m: m.get("id") == i, 60)

    def close(self):
        try:
            self.send(request(2, "shutdown") + notify("exit"))
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


@pytest.fixture(scope="module")
def fuzz_server():
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp)
        yield server
        server.close()
        assert not [e for e in server.errors if "Traceback" in e], "".join(server.errors)


@fuzz_settings(40)
@given(sources(max_mutations=2))
def test_the_server_answers_every_version(fuzz_server, src):
    published = fuzz_server.edit(src)
    diags = published["params"]["diagnostics"]
    lines = src.count("\n") + src.count("\r") + 2
    assert all(0 <= d["range"]["start"]["line"] <= lines for d in diags)
    hover = fuzz_server.ask(
        "textDocument/hover", {"textDocument": {"uri": fuzz_server.uri}, "position": {"line": 0, "character": 0}}
    )
    assert "error" not in hover
    lens = fuzz_server.ask("textDocument/codeLens", {"textDocument": {"uri": fuzz_server.uri}})
    assert "error" not in lens
    actions = fuzz_server.ask(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": fuzz_server.uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": lines, "character": 0}},
            "context": {"diagnostics": []},
        },
    )
    assert "error" not in actions
