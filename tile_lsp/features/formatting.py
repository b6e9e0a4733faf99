"""Document and range formatting: the canonical form `tileir fmt` prints, comments kept.

The whole module is printed (with `keep_comments`, as `tileir fmt` does) and compared with the
document line by line; each differing run of lines becomes one edit, so the client gets the
smallest set of line edits rather than the whole document (cursor, folds and marks elsewhere
stay put). Range formatting keeps the edits that touch the requested lines or a top-level item
(entry, global) that overlaps them. A document with errors the parser finds is left alone (the
printer would drop what the parser could not read), saying why in the log. The edits keep the
document's line endings (\r\n or \n).

The module printed is the analysis's, when the text parses without errors: kernels parsed
again on their own after an edit were spliced into it, and the kernels after them moved; their
spans (by which the printer places comments) are moved back into document coordinates first
(`Analysis.align`, a unit at a time), and the comments are the units' (a re-parsed kernel's
are not in the module's list). When the analysis does not know whether the whole text parses,
the text is parsed afresh, as `tileir fmt` does.

Printing (and parsing) a large document takes a while, so it runs on a worker thread: the
server keeps answering meanwhile. A fresh parse is the thread's alone; the analysis's module
may be changed by an edit while it is printed, so an answer is only given if the document did
not change in the meantime (else the request fails with ContentModified, and the client asks
again).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import difflib
import functools
import re
import time
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from compiler.ir.core import Module, Operation
from compiler.ir.diagnostics import Diagnostic
from compiler.ir.source import Span
from compiler.text import PrintOptions, parse, print_module

from ..server import ContentModified, feature

if TYPE_CHECKING:
    from ..documents import Analysis
    from ..server import TileLanguageServer


def register(server: TileLanguageServer) -> None:
    @feature(server, lsp.TEXT_DOCUMENT_FORMATTING, empty=None)
    async def formatting(params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
        done = await _formatted(server, params.text_document.uri)
        if done is None:
            return None
        analysis, _, hunks = done
        return [_text_edit(analysis, hunk) for hunk in hunks]

    @feature(server, lsp.TEXT_DOCUMENT_RANGE_FORMATTING, empty=None)
    async def range_formatting(params: lsp.DocumentRangeFormattingParams) -> list[lsp.TextEdit] | None:
        done = await _formatted(server, params.text_document.uri)
        if done is None:
            return None
        analysis, module, hunks = done
        first, last = _selected_lines(analysis, module, analysis.positions.span(params.range))
        return [_text_edit(analysis, hunk) for hunk in hunks if _touches(hunk, first, last)]


async def _formatted(server: TileLanguageServer, uri: str) -> tuple[Analysis, Module, list[_Hunk]] | None:
    """The document's analysis, the module printed and the hunks that make the document
    `tileir fmt`'s output; None if the document is not open, or (after telling the user why)
    has syntax errors."""
    analysis = server.analysis(uri)
    if analysis is None:
        return None
    module = None
    if analysis.parse_errors:
        _tell_errors(server, analysis, analysis.parse_errors)
        return None
    if analysis.parse_errors == []:
        # The text parses without errors and the analysis's module holds all of it: put the
        # kernels that moved since they were parsed back in place (a unit at a time, giving
        # way between units), then print that module.
        deadline = time.perf_counter() + _SLICE_SECONDS
        for unit in analysis.units:
            analysis.align(unit)
            if time.perf_counter() > deadline:
                await asyncio.sleep(0)
                if not server.is_current(uri, analysis):
                    raise ContentModified(f"{uri} changed while it was being formatted")
                deadline = time.perf_counter() + _SLICE_SECONDS
        module = module_of(analysis)
    loop = asyncio.get_running_loop()
    try:
        module, hunks, errors = await loop.run_in_executor(
            _worker(), format_text, analysis.text, analysis.source.name, module
        )
    except Exception:
        if not server.is_current(uri, analysis):  # the module changed under the printer
            raise ContentModified(f"{uri} changed while it was being formatted") from None
        raise
    if not server.is_current(uri, analysis):
        raise ContentModified(f"{uri} changed while it was being formatted")
    if errors:
        _tell_errors(server, analysis, errors)
        return None
    return analysis, module, hunks


def module_of(analysis: Analysis) -> Module:
    """The analysis's module in document coordinates and with all its comments, as printing
    wants it (the feature aligns the units a few at a time before; the rest are done here)."""
    for unit in analysis.units:
        analysis.align(unit)
    module = analysis.module
    module.source = analysis.source
    module.comments = analysis.comments()  # a re-parsed kernel's are only in its unit
    return module


def format_text(text: str, name: str, module: Module | None = None) -> tuple[Module, list[_Hunk], list[Diagnostic]]:
    """(module printed, hunks, []) for `text`, printing `module` (a parse of `text`) or
    else a fresh parse; (module, [], syntax errors) when the fresh parse has errors."""
    if module is None:
        result = parse(text, name)
        errors = [d for d in result.diagnostics if d.is_error]
        if errors:
            return result.module, [], errors
        module = result.module
    formatted = print_module(module, PrintOptions(keep_comments=True))
    if _line_ending(text) == "\r\n":  # the printer writes \n: keep the document's endings
        # (A comment's text keeps the \r before its line's \n: that line has its ending.)
        formatted = _BARE_LF.sub("\r\n", formatted)
    return module, _hunks(text, formatted), []


_BARE_LF = re.compile(r"(?<!\r)\n")


def _line_ending(text: str) -> str:
    """The document's line ending: that of its first line."""
    end = text.find("\n")
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


_SLICE_SECONDS = 0.01


@functools.cache  # made on first use: the server starts no thread it does not need
def _worker() -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="tileir-format")


def _tell_errors(server: TileLanguageServer, analysis: Analysis, errors: list[Diagnostic]) -> None:
    """Why the document was not formatted, in the log: a message window would pop up on
    every save of a document being edited (format on save), and the errors show already."""
    first = errors[0]
    line = analysis.source.line_col(first.span.start)[0] + 1
    what = f"{len(errors)} error" + ("" if len(errors) == 1 else "s")
    server.window_log_message(
        lsp.LogMessageParams(
            type=lsp.MessageType.Warning,
            message=f"Tile IR: not formatted: the document has {what} (line {line}: {first.message})",
        )
    )


# A run of lines to replace: old lines [old_start, old_end) by `new_text`.
_Hunk = tuple[int, int, str]


def _hunks(text: str, formatted: str) -> list[_Hunk]:
    old = text.splitlines(keepends=True)
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
    source = analysis.source
    return source.line_start(line) if line < source.line_count else len(source.text)


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
