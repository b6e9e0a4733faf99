"""Re-analysis after an edit: parse and verify again only the kernel the edit is inside.

A kernel (`entry`) is isolated from above: nothing outside it can see its values, so an edit
strictly inside one changes only its own diagnostics and index, as long as its name stays
the same. The kernel is parsed again where it starts (`parse_item`), spliced into the module
in place of the old one, and verified on its own (`verify_isolated`); the units after it just
move by the edit's length (`Unit.shift`). Anything else — an edit between kernels, in the
header, in a `global` (other kernels check their `get_global` against it), one that renames a
kernel or makes it end elsewhere, or one in a kernel whose name another item defines too (its
"redefinition" error comes from the whole symbol table) — analyses the document from scratch.

Nothing here is in proportion to the document's size: the server says where the text changed
(`region`, from the didChange ranges) and hands over the new text's `DocumentSource` with
its line index already updated; the units are found by bisection. What remains per unit is
moving the units after the edit (one addition each).
"""

from __future__ import annotations

import dataclasses

from compiler.ir.core import Comment
from compiler.ir.source import Span
from compiler.text import lexer as L
from compiler.text.parser import ItemResult, ParseOptions, parse_item
from compiler.verify.engine import verify_isolated

from .documents import Analysis, Unit, analyze
from .store import DocumentSource

# Compare texts this many characters at a time when looking for the edit (C-speed slices).
_BLOCK = 4096


def reanalyze(
    previous: Analysis,
    text: str,
    version: int | None,
    region: tuple[int, int, int] | None = None,
    source: DocumentSource | None = None,
) -> Analysis:
    """The analysis of `text`, which differs from `previous.text` in `region` ((start, old
    end, new end); found by comparing the texts when not given). `source`: `text`'s
    DocumentSource, when the caller has one."""
    if source is None or source.text is not text:
        source = DocumentSource(text, previous.source.name)
    if region is None:
        region = changed_region(previous.text, text)
    else:
        region = _narrowed(previous.text, text, region)
    if region[0] == region[1] == region[2]:  # the same text (a change undone, or none)
        return dataclasses.replace(previous, version=version, source=source)
    reused = _reparse_one_kernel(previous, source, version, region)
    if reused is not None:
        return reused
    return analyze(previous.uri, text, version, previous.settings, name=previous.source.name, source=source)


def _narrowed(old: str, new: str, region: tuple[int, int, int], limit: int = 256) -> tuple[int, int, int]:
    """`region` without the characters at its ends that did not change (a client may send a
    whole line where one character changed); looks at most `limit` characters each way."""
    start, old_end, new_end = region
    stop = min(start + limit, old_end, new_end)
    while start < stop and old[start] == new[start]:
        start += 1
    count = 0
    while count < limit and old_end > start and new_end > start and old[old_end - 1] == new[new_end - 1]:
        old_end -= 1
        new_end -= 1
        count += 1
    return start, old_end, new_end


def changed_region(old: str, new: str) -> tuple[int, int, int]:
    """(start, old end, new end) of the smallest region in which the texts differ."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start : start + _BLOCK] == new[start : start + _BLOCK]:
        start += _BLOCK
    while start < limit and old[start] == new[start]:
        start += 1
    start = min(start, limit)
    # The common suffix, not overlapping the common prefix.
    room = limit - start
    suffix = 0
    while (
        suffix + _BLOCK <= room
        and old[len(old) - suffix - _BLOCK : len(old) - suffix] == new[len(new) - suffix - _BLOCK : len(new) - suffix]
    ):
        suffix += _BLOCK
    while suffix < room and old[len(old) - suffix - 1] == new[len(new) - suffix - 1]:
        suffix += 1
    return start, len(old) - suffix, len(new) - suffix


def _reparse_one_kernel(
    previous: Analysis, source: DocumentSource, version: int | None, region: tuple[int, int, int]
) -> Analysis | None:
    units = previous.units
    if len(units) < 3:  # not cut into kernels
        return None
    start, old_end, new_end = region
    delta = new_end - old_end
    unit_index = _kernel_around(units, start, old_end)
    if unit_index is None:
        return None
    unit = units[unit_index]
    old_op = unit.op
    assert old_op is not None
    if old_op.name != "cuda_tile.entry":
        return None
    if previous.duplicates and _symbol(old_op) in previous.duplicates:
        return None
    kernel_start = unit.start + unit.shift
    kernel_end = unit.end + unit.shift  # type: ignore[operator]
    module = previous.module
    item = parse_item(source, kernel_start, module, ParseOptions(record_references=True))
    op = item.op
    if (
        op is None
        or item.end != kernel_end + delta
        or op.name != old_op.name
        or op.properties.get("sym_name") != old_op.properties.get("sym_name")
        or op.span is None
    ):
        return None
    # Splice the new kernel in place of the old one.
    block = old_op.parent
    if block is None:
        return None
    block.ops[block.ops.index(old_op)] = op
    op.parent = block
    module.source = source  # the verifier reads the text the new kernel was parsed from
    _stretch_ancestors(op, delta)
    diagnostics = list(item.diagnostics)
    if not any(d.is_error for d in diagnostics):
        diagnostics += verify_isolated(module, op, previous.settings.verify_options())
    # The units after it move in place: the previous analysis is being replaced (and shares
    # the module, which changed under it already).
    new_units = list(units)
    comments = _kernel_comments(item, source.text, op.span.start, op.span.end)
    # The comments after the kernel, up to the next unit, did not change; they moved by delta.
    comments += [
        Comment(c.text, Span(c.span.start + unit.shift + delta, c.span.end + unit.shift + delta))
        for c in unit.comments
        if c.span.start >= unit.end  # type: ignore[operator]
    ]
    new_units[unit_index] = Unit(op, op.span.start, op.span.end, 0, diagnostics, item=item, comments=comments)
    if delta:
        for later in new_units[unit_index + 1 :]:
            later.shift += delta
    # The whole text still parses without errors if it did and the kernel does (the rest of
    # the text did not change); otherwise which errors remain is left unknown (None).
    parse_errors = None
    if previous.parse_errors == [] and not any(d.is_error for d in item.diagnostics):
        parse_errors = []
    return Analysis(
        previous.uri, version, source, module, previous.settings, new_units, previous.duplicates, parse_errors
    )


def _symbol(op) -> str | None:
    value = getattr(op.properties.get("sym_name"), "value", None)
    return value if isinstance(value, str) else None


def _kernel_comments(item: ItemResult, text: str, start: int, end: int) -> list[Comment]:
    """The comments inside a re-parsed kernel's text: the parser's, when `parse_item` hands
    them over, else the lexer's (a second pass over the kernel's tokens only)."""
    found = getattr(item, "comments", None)
    if found is not None:
        return [c for c in found if start <= c.span.start < end]
    lexer = L.Lexer(text)
    pos = start
    while pos < end:
        token = lexer.token_at(pos)
        if token.kind == L.EOF or token.start >= end:
            break
        pos = token.end
    return [c for c in lexer.comments if c.span.start < end]


def _kernel_around(units: list[Unit], start: int, end: int) -> int | None:
    """The kernel unit whose text strictly contains [start, end): its first character and
    its closing `}` unchanged."""
    # The last unit starting at or before `start` (units are in document order).
    lo, hi = 0, len(units)
    while lo < hi:
        mid = (lo + hi) // 2
        if units[mid].start + units[mid].shift <= start:
            lo = mid + 1
        else:
            hi = mid
    for i in (lo - 1, lo - 2):  # the edit may begin where the previous unit ends
        if i < 0:
            continue
        unit = units[i]
        if unit.op is None or unit.end is None:
            continue
        first = unit.start + unit.shift
        last = unit.end + unit.shift  # exclusive end of the kernel's text
        if first < start and end < last:
            return i
    return None


def _stretch_ancestors(op, delta: int) -> None:
    """The `cuda_tile.module` around the kernel now ends `delta` characters later."""
    if not delta:
        return
    parent = op.parent_op
    while parent is not None:
        if parent.span is not None:
            parent.span = Span(parent.span.start, parent.span.end + delta)
        for region in parent.regions:
            if region.span is not None:
                region.span = Span(region.span.start, region.span.end + delta)
            for block in region.blocks:
                if block.span is not None:
                    block.span = Span(block.span.start, block.span.end + delta)
        parent = parent.parent_op
