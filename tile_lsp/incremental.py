"""Re-analysis after an edit: parse and verify again only the kernel the edit is inside.

A kernel (`entry`) is isolated from above: nothing outside it can see its values, so an edit
strictly inside one changes only its own diagnostics and index, as long as its name stays
the same. The kernel is parsed again where it starts (`parse_item`), spliced into the module
in place of the old one, and verified on its own (`verify_isolated`); the units after it just
move by the edit's length (`Unit.shift`). Anything else — an edit between kernels, in the
header, in a `global` (other kernels check their `get_global` against it), one that renames a
kernel or makes it end elsewhere — analyses the document from scratch.
"""

from __future__ import annotations

from compiler.ir.source import SourceFile, Span
from compiler.text.parser import ParseOptions, parse_item
from compiler.verify.engine import verify_isolated

from .documents import Analysis, Unit, analyze

# Compare texts this many characters at a time when looking for the edit (C-speed slices).
_BLOCK = 4096


def reanalyze(previous: Analysis, text: str, version: int | None) -> Analysis:
    reused = _reparse_one_kernel(previous, text, version)
    if reused is not None:
        return reused
    return analyze(previous.uri, text, version, previous.settings, name=previous.source.name)


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


def _reparse_one_kernel(previous: Analysis, text: str, version: int | None) -> Analysis | None:
    units = previous.units
    if len(units) < 3:  # not cut into kernels
        return None
    start, old_end, new_end = changed_region(previous.text, text)
    delta = new_end - old_end
    unit_index = _kernel_around(units, start, old_end)
    if unit_index is None:
        return None
    unit = units[unit_index]
    old_op = unit.op
    assert old_op is not None
    if old_op.name != "cuda_tile.entry":
        return None
    kernel_start = unit.start + unit.shift
    kernel_end = unit.end + unit.shift  # type: ignore[operator]
    source = SourceFile(text, previous.source.name)
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
    new_units[unit_index] = Unit(op, op.span.start, op.span.end, 0, diagnostics, item=item)
    if delta:
        for later in new_units[unit_index + 1 :]:
            later.shift += delta
    return Analysis(previous.uri, version, source, module, previous.settings, new_units)


def _kernel_around(units: list[Unit], start: int, end: int) -> int | None:
    """The kernel unit whose text strictly contains [start, end): its first character and
    its closing `}` unchanged."""
    for i, unit in enumerate(units):
        if unit.op is None or unit.end is None:
            continue
        first = unit.start + unit.shift
        last = unit.end + unit.shift  # exclusive end of the kernel's text
        if first < start and end < last:
            return i
        if first > start:
            return None
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
