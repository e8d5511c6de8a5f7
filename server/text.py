"""Open documents whose edits cost the size of the edit, not the size of the document.

pygls rebuilds a document's whole text, line by line in Python, for every incremental change and
splits it again for every position it converts: on a 20 MB document that is most of a second per
keystroke, on the event loop, in front of every hover. Here a document keeps its lines in blocks
of a few hundred: an edit re-splits the lines it touches and the block holding them, the text is
joined only when an analysis asks for it. Lines end at LF, CRLF or CR only, as LSP counts them.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any, overload
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from gradaudit.analysis.source.program import split_lines

BLOCK = 256


CHUNK = 1 << 16  # characters of unsplit text per block when a document is opened


def _breaks(text: str) -> int:
    return text.count("\r") + text.count("\n") - text.count("\r\n")


class Lines(Sequence[str]):
    """A document's lines, each with its line break, in blocks. A block is split into lines only
    when an edit or a position needs it: opening a 20 MB document costs a few C-level counts."""

    def __init__(self, source: str) -> None:
        self._blocks: list[str | list[str]] = []  # str (not split yet) or list of lines
        self._counts: list[int] = []
        start, n = 0, len(source)
        while start < n:
            end = source.find("\n", min(start + CHUNK, n) - 1)
            end = n if end < 0 else end + 1
            chunk = source[start:end]
            self._blocks.append(chunk)
            self._counts.append(_breaks(chunk) + (0 if chunk.endswith(("\n", "\r")) else 1))
            start = end
        if not self._blocks:
            self._blocks, self._counts = [[]], [0]
        self._reindex()
        self._source: str | None = source
        self.chars = len(source)

    def _reindex(self) -> None:
        self._starts, n = [], 0
        for c in self._counts:
            self._starts.append(n)
            n += c
        self._len = n

    def _block(self, b: int) -> list[str]:
        block = self._blocks[b]
        if isinstance(block, str):
            block = self._blocks[b] = split_lines(block, keepends=True)
        return block

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._len))]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError(index)
        b = bisect.bisect_right(self._starts, index) - 1
        return self._block(b)[index - self._starts[b]]

    @property
    def source(self) -> str:
        if self._source is None:
            self._source = "".join(b if isinstance(b, str) else "".join(b) for b in self._blocks)
        return self._source

    def replace(self, start_line: int, start_char: int, end_line: int, end_char: int, text: str) -> None:
        """Replace the text from (start_line, start_char) to (end_line, end_char), code points."""
        n = self._len
        # past the last line: the end of the text (on the last line when it has no line break)
        end_of_text = (n, 0) if n == 0 or self[n - 1].endswith(("\n", "\r")) else (n - 1, len(self[n - 1]))
        if start_line >= n:
            start_line, start_char = end_of_text
        if end_line >= n:
            end_line, end_char = end_of_text
        first, last = start_line, end_line
        prefix = self[first][:start_char] if first < n else ""
        suffix = self[last][end_char:] if last < n else ""
        new = prefix + text + suffix
        # a CR and an LF brought together by the edit are one line break
        if first > 0 and new.startswith("\n") and self[first - 1].endswith("\r"):
            first -= 1
            new = self[first] + new
        if new.endswith("\r") and last + 1 < n and self[last + 1].startswith("\n"):
            last += 1
            new += self[last]
        last = min(last, n - 1)
        self.chars += len(new) - sum(len(self[i]) for i in range(first, last + 1))
        self._splice(first, last, split_lines(new, keepends=True))
        self._source = None

    def _splice(self, first: int, last: int, lines: list[str]) -> None:
        """Lines [first, last] (inclusive; last < first: insert before `first`) become `lines`."""
        n = self._len
        if n == 0:
            self._blocks = [lines[i : i + BLOCK] for i in range(0, len(lines), BLOCK)] or [[]]
            self._counts = [len(b) for b in self._blocks]
            self._reindex()
            return
        b0 = bisect.bisect_right(self._starts, min(first, n - 1)) - 1
        b1 = max(b0, bisect.bisect_right(self._starts, min(max(last, first), n - 1)) - 1)
        base = self._starts[b0]
        merged = [line for b in range(b0, b1 + 1) for line in self._block(b)]
        lo, hi = first - base, last - base + 1
        merged[lo : max(lo, hi)] = lines
        blocks = [merged[i : i + BLOCK] for i in range(0, len(merged), BLOCK)]
        self._blocks[b0 : b1 + 1] = blocks
        self._counts[b0 : b1 + 1] = [len(b) for b in blocks]
        if not self._blocks:
            self._blocks, self._counts = [[]], [0]
        self._reindex()


class FastDocument(TextDocument):
    """A pygls TextDocument whose text lives in Lines."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # TextDocument's parameters
        super().__init__(*args, **kwargs)
        self._lines: Lines | None = None

    @property
    def lines(self) -> Lines:
        if self._lines is None:
            self._lines = Lines(self._source or "")
            self._source = None  # the lines hold the text now (one copy of a 20 MB document)
        return self._lines

    @property
    def source(self) -> str:
        if self._lines is not None:
            return self._lines.source
        return self._source or ""

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        lines = self.lines
        r = self._position_codec.range_from_client_units(lines, change.range)
        lines.replace(r.start.line, r.start.character, r.end.line, r.end.character, change.text)

    @property
    def size(self) -> int:
        """Characters in the document, without joining its lines."""
        return self._lines.chars if self._lines is not None else len(self._source or "")

    def _apply_full_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        self._source = change.text
        self._lines = None


class FastWorkspace(Workspace):
    """The server's workspace: FastDocuments, and changes to documents never opened ignored
    (pygls raises KeyError for them)."""

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> FastDocument:
        return FastDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )

    def update_text_document(
        self, text_doc: types.VersionedTextDocumentIdentifier, change: types.TextDocumentContentChangeEvent
    ) -> None:
        if not self.is_open(text_doc.uri):
            return
        super().update_text_document(text_doc, change)

    def is_open(self, uri: str) -> bool:
        return unquote(uri) in self._text_documents
