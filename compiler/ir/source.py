"""Source text and character ranges.

Every parsed entity keeps a `Span` of offsets into its `SourceFile`; line and
column are computed on demand, so the hot parsing path only stores two ints.
"""

from __future__ import annotations

import bisect

from .frozen import Frozen, _set


def shown(text: str) -> str:
    """Text as a message or a generated comment quotes it: each character that does not print
    (a control character, a line break, a file name's undecodable byte held as a surrogate)
    as its Python escape, so that a NUL is not shown as a space nor a line break ends a line."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


class Span(Frozen):
    """Half-open range [start, end) of character offsets in one source file."""

    __slots__ = ("start", "end")
    start: int
    end: int

    def __init__(self, start: int, end: int) -> None:
        _set(self, "start", start)
        _set(self, "end", end)

    def cover(self, other: Span | None) -> Span:
        if other is None:
            return self
        return Span(min(self.start, other.start), max(self.end, other.end))

    def contains(self, offset: int) -> bool:
        return self.start <= offset < self.end or (self.start == self.end == offset)


class SourceFile:
    """The text of one document plus a line index for offset -> (line, column)."""

    __slots__ = ("name", "text", "_line_starts")

    def __init__(self, text: str, name: str = "<input>") -> None:
        self.name = name
        self.text = text
        self._line_starts: list[int] | None = None

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            pos = find("\n")
            while pos >= 0:
                starts.append(pos + 1)
                pos = find("\n", pos + 1)
            self._line_starts = starts
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """0-based (line, column) of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return line, offset - self.line_starts[line]

    def offset(self, line: int, column: int) -> int:
        """Character offset of a 0-based (line, column), clamped to the text."""
        starts = self.line_starts
        if line < 0:
            return 0
        if line >= len(starts):
            return len(self.text)
        line_end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self.text)
        return min(starts[line] + max(column, 0), line_end)

    def line_text(self, line: int) -> str:
        starts = self.line_starts
        if not 0 <= line < len(starts):
            return ""
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self.text)
        return self.text[starts[line] : end]
