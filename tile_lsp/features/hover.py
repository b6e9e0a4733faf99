"""Hover: what the thing under the cursor is (op, value, block, type, symbol).

The text comes from `compiler.text.describe`; this module only finds the occurrence, picks
Markdown or plain text as the client asks, and converts IR spans to document coordinates
(spans of kernels not re-parsed after an edit are shifted; `Analysis.span` knows by how much).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from compiler.ir.core import Block, Operation, Value
from compiler.ir.source import Span
from compiler.ir.types import Type
from compiler.layout import is_view_type
from compiler.text.describe import (
    Description,
    describe_block,
    describe_op,
    describe_symbol,
    describe_type,
    describe_value,
)
from compiler.text.index import Kind, Occurrence

from ..server import feature

if TYPE_CHECKING:
    from ..documents import Analysis
    from ..server import TileLanguageServer


class AnalysisLocator:
    """`compiler.text.describe.Locator` over an analysis: IR spans to current document text."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis

    def line(self, span: Span, anchor: object) -> int:
        start = self.analysis.span(span, anchor).start  # type: ignore[arg-type]
        return self.analysis.source.line_col(min(max(start, 0), len(self.analysis.text)))[0]

    def text(self, span: Span, anchor: object) -> str:
        moved = self.analysis.span(span, anchor)  # type: ignore[arg-type]
        return self.analysis.text[max(moved.start, 0) : max(moved.end, 0)]


def markup_kind(server: TileLanguageServer) -> lsp.MarkupKind:
    """Markdown unless the client's hover capability lists only plain text (the list is in
    the client's order of preference)."""
    document = server.client_capabilities.text_document
    hover = document.hover if document is not None else None
    formats = hover.content_format if hover is not None else None
    if not formats:
        return lsp.MarkupKind.PlainText  # the protocol's default when nothing is said
    for kind in formats:
        if kind in (lsp.MarkupKind.Markdown, lsp.MarkupKind.PlainText):
            return kind
    return lsp.MarkupKind.PlainText


def describe_occurrence(analysis: Analysis, occ: Occurrence) -> Description:
    locator = AnalysisLocator(analysis)
    target = occ.target
    if occ.kind is Kind.OP and isinstance(target, Operation):
        return describe_op(target, locator)
    if occ.kind is Kind.VALUE and isinstance(target, Value):
        return describe_value(target, locator)
    if occ.kind is Kind.BLOCK and isinstance(target, Block):
        return describe_block(target, locator)
    if occ.kind is Kind.SYMBOL:
        op = target if isinstance(target, Operation) else None
        return describe_symbol(op, occ.symbol_name or (target if isinstance(target, str) else None), locator)
    if occ.kind is Kind.TYPE and isinstance(target, Type):
        value = None
        if is_view_type(target):
            # A view type written on an op that makes or uses a value of it: the value's
            # definition may resolve dynamic extents (constants, `assume bounded`).
            op = analysis.op_at(occ.span.start)
            if op is not None:
                value = next((v for v in [*op.results, *op.operands] if v.type == target), None)
        return describe_type(target, value=value)
    return Description()


def hover_at(analysis: Analysis, position: lsp.Position, kind: lsp.MarkupKind) -> lsp.Hover | None:
    occ = analysis.at(analysis.offset(position))
    if occ is None:
        return None
    description = describe_occurrence(analysis, occ)
    if not description:
        return None
    value = description.markdown() if kind == lsp.MarkupKind.Markdown else description.plaintext()
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=kind, value=value),
        range=analysis.positions.range(occ.span),
    )


def register(server: TileLanguageServer) -> None:
    @feature(server, lsp.TEXT_DOCUMENT_HOVER)
    def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return None
        return hover_at(analysis, params.position, markup_kind(server))
