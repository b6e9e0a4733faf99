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

SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.NOTE: lsp.DiagnosticSeverity.Information,
    Severity.REMARK: lsp.DiagnosticSeverity.Hint,
}


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    return len(text)


class Positions:
    """Offset <-> Position for one version of one document."""

    __slots__ = ("source", "encoding")

    def __init__(self, source: SourceFile, encoding: str = "utf-16") -> None:
        self.source = source
        self.encoding = encoding

    def position(self, offset: int) -> lsp.Position:
        line, column = self.source.line_col(offset)
        if self.encoding != "utf-32":
            prefix = self.source.line_text(line)[:column]
            if not prefix.isascii():
                column = _units(prefix, self.encoding)
        return lsp.Position(line=line, character=column)

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(start=self.position(span.start), end=self.position(max(span.end, span.start)))

    def offset(self, position: lsp.Position) -> int:
        """The offset of a client position, clamped to the document (a position past the end of
        a line is the line's end, as the protocol says)."""
        line = position.line
        starts = self.source.line_starts
        if line >= len(starts):
            return len(self.source.text)
        text = self.source.line_text(line)
        column = position.character
        if self.encoding != "utf-32" and not text.isascii():
            column = _column_of_units(text, column, self.encoding)
        return starts[line] + min(max(column, 0), len(text))

    def span(self, rng: lsp.Range) -> Span:
        start, end = self.offset(rng.start), self.offset(rng.end)
        return Span(min(start, end), max(start, end))

    def whole(self) -> lsp.Range:
        return self.range(Span(0, len(self.source.text)))


def _column_of_units(text: str, units: int, encoding: str) -> int:
    """The code-point column at which `units` code units of `text` have passed."""
    count = 0
    for column, char in enumerate(text):
        if count >= units:
            return column
        count += _units(char, encoding)
    return len(text)


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
