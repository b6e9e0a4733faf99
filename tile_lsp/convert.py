"""Between the core's character offsets and the protocol's positions.

The core counts Unicode code points from the start of the document (`Span`); LSP counts lines
and, within a line, UTF-16 code units (or UTF-8 bytes / code points when the client says so in
`general.positionEncodings`). Every range the server sends goes through here, clamped to the
document, so none can point outside it.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from compiler.ir.diagnostics import Diagnostic, Severity
from compiler.ir.source import SourceFile, Span

from .store import DocumentSource, column_of_units, units

SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.NOTE: lsp.DiagnosticSeverity.Information,
    Severity.REMARK: lsp.DiagnosticSeverity.Hint,
}


class Positions:
    """Offset <-> Position for one version of one document."""

    __slots__ = ("source", "encoding")

    def __init__(self, source: SourceFile, encoding: str = "utf-16") -> None:
        self.source = DocumentSource.of(source)
        self.encoding = encoding

    def position(self, offset: int) -> lsp.Position:
        line, column = self.source.line_col(offset)
        if self.encoding != "utf-32" and column:
            start = self.source.line_start(line)
            prefix = self.source.text[start : start + column]
            if not prefix.isascii():
                column = units(prefix, self.encoding)
        return lsp.Position(line=line, character=column)

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(start=self.position(span.start), end=self.position(max(span.end, span.start)))

    def offset(self, position: lsp.Position) -> int:
        """The offset of a client position, clamped to the document (a position past the end of
        a line is the line's end, as the protocol says)."""
        line = position.line
        source = self.source
        if line >= source.line_count:
            return len(source.text)
        text = source.line_text(line)
        column = position.character
        if self.encoding != "utf-32" and not text.isascii():
            column = column_of_units(text, column, self.encoding)
        return source.line_start(line) + min(max(column, 0), len(text))

    def span(self, rng: lsp.Range) -> Span:
        start, end = self.offset(rng.start), self.offset(rng.end)
        return Span(min(start, end), max(start, end))

    def whole(self) -> lsp.Range:
        return self.range(Span(0, len(self.source.text)))


def diagnostic(d: Diagnostic, positions: Positions, uri: str) -> lsp.Diagnostic:
    related = [
        lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=uri, range=positions.range(r.span)),
            message=r.message,
        )
        for r in d.related
        if r.source is None or r.source is d.source or r.source.name == positions.source.name
    ]
    return lsp.Diagnostic(
        range=positions.range(d.span),
        message=d.message,
        severity=SEVERITY[d.severity],
        code=d.code or None,
        source="tileir",
        related_information=related or None,
    )


def param(params: object, key: str) -> object:
    """A field of a custom request's params: pygls hands them over as a dict or as an object
    with attributes (a named tuple), depending on the request."""
    if params is None:
        return None
    if isinstance(params, dict):
        return params.get(key)
    return getattr(params, key, None)
