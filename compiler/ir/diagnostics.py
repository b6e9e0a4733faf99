"""Diagnostics as data.

The core never prints and never exits: parser, verifier and bytecode reader all
produce `Diagnostic` values that the CLI, the language server and the notebook
render in their own way.
"""

from __future__ import annotations

import enum

from .frozen import Frozen, Record, _set
from .source import SourceFile, Span


class Severity(enum.IntEnum):
    ERROR = 1
    WARNING = 2
    NOTE = 3
    REMARK = 4

    @property
    def label(self) -> str:
        return self.name.lower()


# Frozen/Record classes rather than dataclasses: `dataclasses` (with `inspect`) costs every
# command's start-up more than the rest of the parser's imports (compiler/ir/frozen.py).


class TextEdit(Frozen):
    __slots__ = ("span", "new_text")
    span: Span
    new_text: str

    def __init__(self, span: Span, new_text: str) -> None:
        _set(self, "span", span)
        _set(self, "new_text", new_text)


class Fix(Frozen):
    """A quick fix: a title and the edits that apply it."""

    __slots__ = ("title", "edits")
    title: str
    edits: tuple[TextEdit, ...]

    def __init__(self, title: str, edits: tuple[TextEdit, ...]) -> None:
        _set(self, "title", title)
        _set(self, "edits", edits)

    def apply(self, text: str) -> str:
        """`text` with the fix's edits made (they must not overlap), last one first so that
        the earlier offsets stay valid."""
        for edit in sorted(self.edits, key=lambda e: e.span.start, reverse=True):
            text = text[: edit.span.start] + edit.new_text + text[edit.span.end :]
        return text


class Related(Frozen):
    __slots__ = ("message", "span", "source")
    message: str
    span: Span
    source: SourceFile | None

    def __init__(self, message: str, span: Span, source: SourceFile | None = None) -> None:
        _set(self, "message", message)
        _set(self, "span", span)
        _set(self, "source", source)


class Diagnostic(Record):
    """One message of the core (mutable: passes may add related notes and fixes).

    `origin`: for a module without text (read from bytecode), (file, line, column) of the op's
    debug-info location, e.g. the line of the cuTile Python kernel that made the op."""

    __slots__ = ("severity", "code", "message", "span", "source", "related", "fixes", "origin")

    def __init__(
        self,
        severity: Severity,
        code: str,
        message: str,
        span: Span,
        source: SourceFile | None = None,
        related: list[Related] | None = None,
        fixes: list[Fix] | None = None,
        origin: tuple[str, int, int] | None = None,
    ) -> None:
        self.severity = severity
        self.code = code
        self.message = message
        self.span = span
        self.source = source
        self.related = [] if related is None else related
        self.fixes = [] if fixes is None else fixes
        self.origin = origin

    @property
    def is_error(self) -> bool:
        return self.severity == Severity.ERROR

    def moved(self, shift: int, source: SourceFile | None = None) -> Diagnostic:
        """This diagnostic about a chunk of text that starts `shift` characters into a larger
        one, as a diagnostic about the larger text: its span, its notes' and its fixes' edits
        moved by `shift`; with `source`, what had a source file now has `source` (what had
        none keeps none: it is printed without a place either way)."""
        if not shift and source is None:
            return self

        def move(span: Span) -> Span:
            return Span(span.start + shift, span.end + shift)

        def file(old: SourceFile | None) -> SourceFile | None:
            return source if source is not None and old is not None else old

        return self.replace(
            span=move(self.span),
            source=file(self.source),
            related=[r.replace(span=move(r.span), source=file(r.source)) for r in self.related],
            fixes=[f.replace(edits=tuple(e.replace(span=move(e.span)) for e in f.edits)) for f in self.fixes],
        )

    def location(self) -> tuple[str, int, int]:
        """(file name, 1-based line, 1-based column) of the start of the range (without text:
        of the origin, if any)."""
        if self.source is None:
            return self.origin or ("<unknown>", 0, 0)
        line, col = self.source.line_col(self.span.start)
        return (self.source.name, line + 1, col + 1)

    def format(self, with_snippet: bool = False) -> str:
        """`path:line:col: error: message`, the format compilers and editors understand."""
        name, line, col = self.location()
        text = f"{name}:{line}:{col}: {self.severity.label}: {self.message}"
        if with_snippet and self.source is not None:
            text += "\n" + _snippet(self.source, self.span)
            for fix in self.fixes:  # the quick fixes an editor would offer, named
                text += f"\n  help: {fix.title}"
        for rel in self.related:
            src = rel.source or self.source
            if src is None:
                continue
            rl, rc = src.line_col(rel.span.start)
            text += f"\n{src.name}:{rl + 1}:{rc + 1}: note: {rel.message}"
        return text


# A line longer than this is shown as the part around the column (a generated file may
# hold a megabyte on one line).
_SNIPPET_WIDTH = 200


def _snippet(source: SourceFile, span: Span) -> str:
    line, col = source.line_col(span.start)
    text = source.line_text(line).expandtabs(1)
    end_line, end_col = source.line_col(span.end)
    width = (end_col - col) if end_line == line else len(text) - col
    if len(text) > _SNIPPET_WIDTH:
        first = max(0, col - _SNIPPET_WIDTH // 2)
        last = min(len(text), first + _SNIPPET_WIDTH)
        head = "..." if first else ""
        text = head + text[first:last] + ("..." if last < len(text) else "")
        col = col - first + len(head)
        width = min(width, last - (col - len(head) + first))
    return f"  {text}\n  {' ' * col}^{'~' * max(width - 1, 0)}"


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity == Severity.ERROR for d in diagnostics)
