"""The open documents' text, kept by the server itself (not by pygls's workspace).

pygls applies an incremental change by splitting the whole document into lines and writing
them all out again, and finds a line by summing the lengths of the lines before it: work in
proportion to the document on every keystroke. Here a change costs two slices of the text
(C copies) and an update of the line index proportional to the lines the change touches plus
the number of index blocks (`LineIndex`), so that a keystroke in a 200,000-line document costs
what it costs in a small one.

Every version of a document has its own `DocumentSource` (a `SourceFile` whose line index is
a `LineIndex`); versions share the index blocks an edit did not touch, so an analysis keeps a
consistent view of the text it was made from while the document moves on.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from lsprotocol import types as lsp

from compiler.ir.source import SourceFile

# Lines per block of a LineIndex: an edit rewrites the blocks it touches and moves the bases
# of the blocks after it (about lines / _BLOCK of them).
_BLOCK = 512


class LineIndex:
    """Where each line starts, in blocks: line `first[b] + j` starts at `base[b] +
    rel[b][j]` (`rel[b][0]` is 0). Immutable: `edit` returns a new index that shares the
    untouched blocks."""

    __slots__ = ("rel", "base", "first", "count")

    def __init__(self, rel: list[list[int]], base: list[int], first: list[int], count: int) -> None:
        self.rel = rel
        self.base = base
        self.first = first
        self.count = count

    @classmethod
    def of(cls, text: str) -> LineIndex:
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        return cls._blocked(starts, [], [], [], 0)

    @classmethod
    def _blocked(
        cls, starts: list[int], rel: list[list[int]], base: list[int], first: list[int], line: int
    ) -> LineIndex:
        """Append the absolute `starts` (of lines `line`, `line + 1`, ...) as blocks."""
        for i in range(0, len(starts), _BLOCK):
            chunk = starts[i : i + _BLOCK]
            b = chunk[0]
            rel.append([s - b for s in chunk])
            base.append(b)
            first.append(line + i)
        return cls(rel, base, first, line + len(starts))

    def line_of(self, offset: int) -> int:
        """The line holding `offset` (the last line whose start is at or before it)."""
        b = bisect.bisect_right(self.base, offset) - 1
        if b < 0:
            return 0
        return self.first[b] + bisect.bisect_right(self.rel[b], offset - self.base[b]) - 1

    def start(self, line: int) -> int:
        """Where line `line` (0 <= line < count) starts."""
        b = bisect.bisect_right(self.first, line) - 1
        return self.base[b] + self.rel[b][line - self.first[b]]

    def starts(self) -> list[int]:
        return [b + r for b, rel in zip(self.base, self.rel) for r in rel]

    def edit(self, start: int, end: int, new_text: str) -> LineIndex:
        """The index after [start, end) is replaced by `new_text`: lines starting in
        (start, end] go, one starts after each newline of `new_text`, later ones move."""
        delta = len(new_text) - (end - start)
        b0 = max(bisect.bisect_right(self.base, start) - 1, 0)
        b1 = max(bisect.bisect_right(self.base, end) - 1, 0)
        # The blocks b0..b1 are rewritten; the ones after only move.
        touched = [self.base[b] + r for b in range(b0, b1 + 1) for r in self.rel[b]]
        keep_before = [s for s in touched if s <= start]
        inserted = []
        pos = new_text.find("\n")
        while pos >= 0:
            inserted.append(start + pos + 1)
            pos = new_text.find("\n", pos + 1)
        keep_after = [s + delta for s in touched if s > end]
        rewritten = keep_before + inserted + keep_after
        rel = self.rel[:b0]
        base = self.base[:b0]
        first = self.first[:b0]
        line = self.first[b0]
        if len(rewritten) <= 2 * _BLOCK:  # one block (the usual keystroke)
            b = rewritten[0]
            rel.append([s - b for s in rewritten])
            base.append(b)
            first.append(line)
            line += len(rewritten)
        else:
            line = LineIndex._blocked(rewritten, rel, base, first, line).count
        shift_lines = line - (self.first[b1] + len(self.rel[b1]))
        rel.extend(self.rel[b1 + 1 :])
        base.extend(b + delta for b in self.base[b1 + 1 :])
        first.extend(f + shift_lines for f in self.first[b1 + 1 :])
        return LineIndex(
            rel, base, first, self.count + len(inserted) - (len(touched) - len(keep_before) - len(keep_after))
        )


class DocumentSource(SourceFile):
    """A `SourceFile` whose lines come from a `LineIndex` (made once per version, cheaply
    from the previous version's)."""

    __slots__ = ("index",)

    def __init__(self, text: str, name: str = "<input>", index: LineIndex | None = None) -> None:
        super().__init__(text, name)
        self.index = index if index is not None else LineIndex.of(text)

    @classmethod
    def of(cls, source: SourceFile) -> DocumentSource:
        return source if isinstance(source, DocumentSource) else cls(source.text, source.name)

    @property
    def line_starts(self) -> list[int]:  # for code that wants the flat list (built once)
        if self._line_starts is None:
            self._line_starts = self.index.starts()
        return self._line_starts

    @property
    def line_count(self) -> int:
        return self.index.count

    def line_start(self, line: int) -> int:
        return self.index.start(line)

    def line_col(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = self.index.line_of(offset)
        return line, offset - self.index.start(line)

    def offset(self, line: int, column: int) -> int:
        if line < 0:
            return 0
        if line >= self.index.count:
            return len(self.text)
        start = self.index.start(line)
        return min(start + max(column, 0), self.line_end(line))

    def line_end(self, line: int) -> int:
        """Where line `line`'s text ends (before its newline)."""
        return self.index.start(line + 1) - 1 if line + 1 < self.index.count else len(self.text)

    def line_text(self, line: int) -> str:
        if not 0 <= line < self.index.count:
            return ""
        return self.text[self.index.start(line) : self.line_end(line)]

    def edited(self, start: int, end: int, new_text: str) -> DocumentSource:
        """This text with [start, end) replaced by `new_text`."""
        text = self.text
        return DocumentSource(text[:start] + new_text + text[end:], self.name, self.index.edit(start, end, new_text))


def units(text: str, encoding: str) -> int:
    """The length of `text` in the protocol's position units. A lone surrogate (JSON lets a
    client send "\\ud800") is one UTF-16 unit, as the client counted it."""
    if encoding == "utf-16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text)


def column_of_units(text: str, count: int, encoding: str) -> int:
    """The code-point column at which `count` units of `text` have passed."""
    if encoding == "utf-32":
        return min(max(count, 0), len(text))
    passed = 0
    for column, char in enumerate(text):
        if passed >= count:
            return column
        passed += units(char, encoding)
    return len(text)


@dataclass(slots=True)
class Document:
    """One open document: its current text (and line index) and version, and the region that
    changed since the server last analysed it (in (start, old end, new end) form: [start, old
    end) of the analysed text became [start, new end) of this one)."""

    uri: str  # as the client sent it
    version: int | None
    source: DocumentSource
    changed: tuple[int, int, int] | None = None
    # A change to it could not be read (and was dropped): the text may differ from the
    # editor's until the editor sends it whole again.
    stale: bool = False

    @property
    def text(self) -> str:
        return self.source.text

    def offset(self, position: lsp.Position, encoding: str) -> int:
        source = self.source
        if position.line >= source.line_count:
            return len(source.text)
        start = source.line_start(max(position.line, 0))
        line = source.text[start : source.line_end(max(position.line, 0))]
        column = position.character
        if encoding != "utf-32" and not line.isascii():
            column = column_of_units(line, column, encoding)
        return start + min(max(column, 0), len(line))

    def apply(self, change: lsp.TextDocumentContentChangeEvent, encoding: str) -> None:
        old_length = len(self.source.text)
        if isinstance(change, lsp.TextDocumentContentChangePartial):
            start = self.offset(change.range.start, encoding)
            end = self.offset(change.range.end, encoding)
            start, end = min(start, end), max(start, end)
            self.source = self.source.edited(start, end, change.text)
        else:  # the whole text
            start, end = 0, old_length
            self.source = DocumentSource(change.text, self.source.name)
            self.stale = False
        self.changed = merge_change(self.changed, start, end, len(change.text))

    def analysed(self) -> None:
        """The server analysed this version: later changes are counted from it."""
        self.changed = None


def merge_change(region: tuple[int, int, int] | None, a: int, b: int, inserted: int) -> tuple[int, int, int]:
    """The changed region after [a, b) of the current text is replaced by `inserted`
    characters, given the region that had changed before (None: nothing)."""
    new_b = a + inserted
    if region is None:
        return a, b, new_b
    start, old_end, new_end = region
    # Beyond the dirty region [start, new_end) the current text is the analysed text moved
    # by (new_end - old_end).
    old_end += max(0, b - new_end)
    new_end = max(new_end, b) + inserted - (b - a)
    return min(start, a), old_end, new_end
