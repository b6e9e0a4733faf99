"""Document and range formatting: the canonical form `tileir fmt` prints, comments kept.

The whole module is printed (with `keep_comments`, as `tileir fmt` does) and compared with the
document line by line; each differing run of lines becomes one edit, so the client gets the
smallest set of line edits rather than the whole document (cursor, folds and marks elsewhere
stay put). Range formatting keeps the edits that touch the requested lines or a top-level item
(entry, global) that overlaps them. A document with syntax errors is left alone: the printer
would drop what the parser could not read.

Unlike other features this one parses the current text itself, as `tileir fmt` does, rather
than printing `analysis.module`: after an edit inside one kernel the analysis splices the
re-parsed kernel into the old module, whose comments and other kernels keep the spans of the
old text, and the printer places comments by those spans (it would move or drop them). It
also needs the parser's errors apart from the verifier's. Formatting is asked for rarely, so
one parse per request is cheap.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from compiler.ir.core import Module, Operation
from compiler.ir.source import Span
from compiler.text import PrintOptions, parse, print_module

from ..server import feature

if TYPE_CHECKING:
    from ..documents import Analysis
    from ..server import TileLanguageServer


def register(server: TileLanguageServer) -> None:
    @feature(server, lsp.TEXT_DOCUMENT_FORMATTING, empty=None)
    def formatting(params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
        analysis = server.analysis(params.text_document.uri)
        parsed = _parsed(server, analysis) if analysis is not None else None
        if analysis is None or parsed is None:
            return None
        return [_text_edit(analysis, hunk) for hunk in _hunks(analysis, parsed)]

    @feature(server, lsp.TEXT_DOCUMENT_RANGE_FORMATTING, empty=None)
    def range_formatting(params: lsp.DocumentRangeFormattingParams) -> list[lsp.TextEdit] | None:
        analysis = server.analysis(params.text_document.uri)
        parsed = _parsed(server, analysis) if analysis is not None else None
        if analysis is None or parsed is None:
            return None
        first, last = _selected_lines(analysis, parsed, analysis.positions.span(params.range))
        hunks = _hunks(analysis, parsed)
        return [_text_edit(analysis, hunk) for hunk in hunks if _touches(hunk, first, last)]


def _parsed(server: TileLanguageServer, analysis: Analysis) -> Module | None:
    """The current text's module, or None (after telling the user why) if it has syntax errors."""
    result = parse(analysis.text, analysis.source.name)
    errors = [d for d in result.diagnostics if d.is_error]
    if not errors:
        return result.module
    first = errors[0]
    line = analysis.source.line_col(first.span.start)[0] + 1
    count = f"{len(errors)} syntax error" + ("" if len(errors) == 1 else "s")
    server.window_show_message(
        lsp.ShowMessageParams(
            type=lsp.MessageType.Warning,
            message=f"Tile IR: not formatted: the document has {count} (line {line}: {first.message})",
        )
    )
    return None


# A run of lines to replace: old lines [old_start, old_end) by `new_text`.
_Hunk = tuple[int, int, str]


def _hunks(analysis: Analysis, module: Module) -> list[_Hunk]:
    formatted = print_module(module, PrintOptions(keep_comments=True))
    old = analysis.text.splitlines(keepends=True)
    new = formatted.splitlines(keepends=True)
    # Diff only what lies between the common first and last lines; difflib is quadratic on
    # documents of many similar lines, so a large middle becomes one edit.
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_mid, new_mid = old[head : len(old) - tail], new[head : len(new) - tail]
    if not old_mid and not new_mid:
        return []
    if len(old_mid) + len(new_mid) > _MAX_DIFF_LINES:
        return [(head, len(old) - tail, "".join(new_mid))]
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    return [
        (head + i1, head + i2, "".join(new_mid[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


_MAX_DIFF_LINES = 4000


def _text_edit(analysis: Analysis, hunk: _Hunk) -> lsp.TextEdit:
    old_start, old_end, new_text = hunk
    span = Span(_line_offset(analysis, old_start), _line_offset(analysis, old_end))
    return lsp.TextEdit(range=analysis.positions.range(span), new_text=new_text)


def _line_offset(analysis: Analysis, line: int) -> int:
    """Where line `line` starts; the end of the document for the line past the last."""
    starts = analysis.source.line_starts
    return starts[line] if line < len(starts) else len(analysis.text)


def _selected_lines(analysis: Analysis, module: Module, selection: Span) -> tuple[int, int]:
    """The lines (first, last inclusive) of the selection widened to the top-level items it
    overlaps."""
    line_of = analysis.source.line_col
    first, last = line_of(selection.start)[0], line_of(selection.end)[0]
    for item in _top_level_items(module):
        span = item.span
        if span is not None and span.start <= selection.end and selection.start <= span.end:
            first, last = min(first, line_of(span.start)[0]), max(last, line_of(span.end)[0])
    return first, last


def _top_level_items(module: Module) -> list[Operation]:
    """Entries, globals and the other ops at the top of the document or of its
    `cuda_tile.module`."""
    items = []
    for op in module.ops:
        block = op.regions[0].entry_block if op.name == "cuda_tile.module" and op.regions else None
        items += list(block.ops) if block is not None else [op]
    return items


def _touches(hunk: _Hunk, first: int, last: int) -> bool:
    old_start, old_end, _ = hunk
    if old_start == old_end:  # an insertion before line old_start
        return first <= old_start <= last + 1
    return old_start <= last and first < old_end
