"""Re-analysis after an edit: parse and verify again only the kernel the edit is inside.

A kernel (`entry`) is isolated from above: nothing outside it can see its values, so an edit
strictly inside one changes only its own diagnostics and index, as long as its name stays
the same. The kernel is parsed again where it starts (`parse_item`), spliced into the module
in place of the old one, and verified on its own (`verify_isolated`); the units after it just
move by the edit's length (`Unit.shift`).

An edit between the kernels of a `cuda_tile.module` (or between its braces and the first or
last, or inside a `global`) parses again only the text between the kernels around it, as the
module's loop over its items does (`_reparse_between_kernels`): comments and blank lines,
kernels pasted, deleted or renamed as a whole, a kernel half typed (text that is no item: its
errors go to the unit before it). One in the comments before or after the module finds those
comments again (`_edit_around_module`). A kernel typed last without its `}` takes the
module's `}`: the module's loop then runs to the end of the text (an error at its `{`), and
that state is re-parsed in place too until the kernel's `}` gives the module's back. Anything
else — an edit that changes the module's own text, or its `}` with text after it — analyses
the document from scratch.

The module's symbol table (names defined twice, what `get_global`s name) is no unit's: each
analysis checks it again from the kernels' names and `get_global`s (`Analysis._symbol_table`),
so adding, renaming or removing a kernel or a global needs nothing more here.

Nothing here is in proportion to the document's size: the server says where the text changed
(`region`, from the didChange ranges) and hands over the new text's `DocumentSource` with
its line index already updated; the units are found by bisection. What remains per unit is
moving the units after the edit (one addition each).
"""

from __future__ import annotations

import bisect
import dataclasses

from compiler.ir.core import Comment, Operation
from compiler.ir.diagnostics import Diagnostic, Severity
from compiler.ir.source import Span
from compiler.text import lexer as L
from compiler.text.index import Occurrence, SourceIndex
from compiler.text.parser import UNCLOSED_REGION, ItemResult, ParseOptions, parse_item
from compiler.verify.engine import verify_isolated

from .documents import UNIT_OPS, Analysis, Unit, analyze, shift_occurrence
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
    for attempt in (_reparse_one_kernel, _reparse_between_kernels, _edit_around_module):
        reused = attempt(previous, source, version, region)
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
    kernel_start = unit.start + unit.shift
    kernel_end = unit.end + unit.shift  # type: ignore[operator]
    # A diagnostic from its end to the next token's start may be its own (`expected ':',
    # found end of input`: at the token after its text) or the text's after it (`eturn` after
    # `r}`): which is not known, so that text is parsed again with it (`_reparse_between_kernels`).
    following = units[unit_index + 1]
    next_token = L.Lexer(previous.text).token_at(kernel_end).start
    if any(kernel_end <= d.span.start + u.shift <= next_token for u in (unit, following) for d in u.diagnostics):
        return None
    module = previous.module
    gap = unit.gap_occurrences(module)  # what is indexed after the kernel did not change either
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
    _stretch_ancestors(op.parent_op, delta)
    diagnostics = list(item.diagnostics)
    if not any(d.is_error for d in diagnostics):
        diagnostics += verify_isolated(module, op, previous.settings.verify_options())
    # The diagnostics of the text after the kernel, up to the next unit, did not change.
    diagnostics += [d.moved(unit.shift + delta) for d in unit.diagnostics if d.span.start > unit.end]  # type: ignore[operator]
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
    loose = [shift_occurrence(occ, unit.shift + delta) for occ in gap]
    new_units[unit_index] = Unit(
        op, op.span.start, op.span.end, 0, diagnostics, item=item, comments=comments, loose=loose
    )
    if delta:
        for later in new_units[unit_index + 1 :]:
            later.shift += delta
    # The whole text still parses without errors if it did and the kernel does (the rest of
    # the text did not change); otherwise which errors remain is left unknown (None).
    parse_errors = None
    if previous.parse_errors == [] and not any(d.is_error for d in item.diagnostics):
        parse_errors = []
    analysis = Analysis(previous.uri, version, source, module, previous.settings, new_units, parse_errors)
    # The symbol table's errors stay none when the kernel (its name the same) neither uses a
    # global nor has an error, before or after: nothing it checks changed.
    new_unit = new_units[unit_index]
    if previous.symbol_errors == [] and not (unit.users or new_unit.users or unit.has_error or new_unit.has_error):
        analysis.symbol_errors = []
    return analysis


def _reparse_between_kernels(
    previous: Analysis, source: DocumentSource, version: int | None, region: tuple[int, int, int]
) -> Analysis | None:
    """An edit between the kernels of a `cuda_tile.module` (or between its `{` and the first,
    or the last and its `}`, or inside a `global`): the text from the end of the unit before
    the edit to the start of the one after it is parsed again as the module's loop over its
    items parses it (`parse_item(recover=True)`); its whole items replace the ones it held and
    are verified on their own, text that is no item gives its errors to the unit before it;
    the units after it move. None when the parse runs into the module's `}` (a bracket left
    open): what the whole parse makes of that is its own."""
    units = previous.units
    module_op = _module_op(previous)
    if module_op is None:
        return None
    body = module_op.regions[0]
    block = body.blocks[0]
    old_text = previous.text
    start, old_end, new_end = region
    delta = new_end - old_end
    # a: the last unit that ends at or before the edit (0: the header); b: the first kernel
    # that starts at or after it (the trailer when none does). The kernels between go.
    lo, hi = 1, len(units) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if units[mid].end + units[mid].shift <= start:  # type: ignore[operator]
            lo = mid + 1
        else:
            hi = mid
    a = lo - 1
    if a and units[a].has_error:
        # A kernel left open ends where the next item starts, if no further right
        # (`Parser.next_item_here`): the edit may change where it ends. It is parsed again.
        a -= 1
    b = a + 1
    while b < len(units) - 1 and units[b].start + units[b].shift < old_end:
        b += 1
    # The module's braces. Its `}` may be missing (taken by the last kernel, typed without
    # its own `}`, or skipped after an error): its loop over its items then goes on to the
    # end of the text, and the only sign is the error at its `{`.
    if body.span is None or block.span is None or old_text[body.span.start] != "{":
        return None
    was_open = _is_open(body)
    header = units[0]
    if was_open != any(d.span.start + header.shift == body.span.start for d in header.diagnostics):
        return None
    if not was_open and old_text[body.span.end - 1] != "}":
        return None
    left = units[a].end + units[a].shift if a else body.span.start + 1  # type: ignore[operator]
    close = len(old_text) if was_open else body.span.end - 1  # where the module's items end

    def bound(b: int) -> tuple[bool, int]:
        """Whether unit `b` is the trailer, and where the text parsed again ends: where `b`
        starts, or where the module's items end (in the old text's offsets)."""
        trailer = b == len(units) - 1
        return trailer, close if trailer else units[b].start + units[b].shift

    trailer, right = bound(b)
    if start < left or old_end > right:
        return None  # the edit reaches into the module's own text
    # Parse what lies in between again, as the module's loop over its items does: whole items
    # become units; text that is no item (a kernel half typed) is skipped as that loop skips
    # it, and its errors, types and symbols go to the unit before it, as `_cut` gives them.
    text = source.text
    new_right = right + delta
    lexer = L.Lexer(text)
    items: list[ItemResult] = []
    loose: list[tuple[int, ItemResult]] = []
    is_open = was_open  # the module's `}` missing in the new text
    token = lexer.token_at(left)
    while True:
        while token.start < new_right:
            if token.kind == L.CARET:
                return None  # a block label: the module's region gets a second block
            item = parse_item(source, token.start, previous.module, ParseOptions(record_references=True), recover=True)
            op = item.op
            if item.end <= token.start:  # a `}`: the module's loop ends here
                if not (trailer and is_open) or lexer.token_at(token.end).kind != L.EOF:
                    return None  # text after it is parsed again at the top level
                # The module's `}` typed, or a kernel closed that had taken it.
                is_open = False
                new_right = token.start
                break
            while item.end > new_right:
                # It ran into the kernel after it (`e` typed before `entry` on its line:
                # skipping to the next line skips that kernel): the kernel goes, the parse goes on.
                if not trailer:
                    b += 1
                    trailer, right = bound(b)
                    new_right = right + delta
                    continue
                # It took the module's `}` (a kernel's `{` typed before its `}`): the module's
                # loop goes on to the end of the text, if only comments come after.
                if is_open or L.Lexer(old_text).token_at(close + 1).kind != L.EOF:
                    return None
                is_open = True
                new_right = len(text)
            if op is None:
                loose.append((token.start, item))
            elif op.span is None or op.name not in UNIT_OPS:
                return None  # not an item of a module
            else:
                items.append(item)
            token = lexer.token_at(item.end)
        if token.start != new_right:
            return None
        # An error of the text before a kernel may point at its first token ("expected valid
        # '@'-identifier" for `entry` alone on a line), or may have pointed there: the kernel
        # holds it (`_cut`), and one holding a parse error is not verified: it is parsed again.
        if trailer:
            break
        after_start = units[b].start
        if not any(d.span.start >= new_right for _, piece in loose for d in piece.diagnostics) and not any(
            d.span.start == after_start for d in units[b].diagnostics
        ):
            break
        b += 1
        trailer, right = bound(b)
        new_right = right + delta
    # The text parsed again ends at `new_right` (the kernel after it, the module's `}`), or at
    # the end of the text when the module's `}` was or is missing.
    reparsed_to = len(text) if trailer and (was_open or is_open) else new_right
    removed = [unit.op for unit in units[a + 1 : b]]
    if len(block.ops[a : b - 1]) != len(removed) or any(x is not y for x, y in zip(block.ops[a : b - 1], removed)):
        return None
    added = [item.op for item in items]
    if not added and a == 0 and trailer:
        return None  # no item left: the document is no longer cut into kernels
    # Splice the new items in place of the old ones.
    module = previous.module
    block.ops[a : b - 1] = added
    for op in added:
        op.parent = block  # type: ignore[union-attr]
    module.source = source
    if trailer and (was_open or is_open):
        # The module's region ends at its `}`, or where its last item does, its block at the
        # end of the text (as the whole parse leaves them).
        if is_open:
            item_end = max([item.end for item in items] + [piece.end for _, piece in loose] + [left])
            _set_module_end(module_op, item_end, len(text))
        else:
            _set_module_end(module_op, new_right + 1, new_right)
    else:
        _stretch_ancestors(module_op, delta)
    options = previous.settings.verify_options()
    comments = [c for c in lexer.comments if left <= c.span.start < reparsed_to]
    if loose:  # the comments in text skipped after an error
        comments += [c for start, piece in loose for c in _kernel_comments(piece, text, start, piece.end)]
        comments.sort(key=lambda c: c.span.start)
    # Where each new unit's text starts (the last kernel's ends where it does: the trailer's
    # text begins there).
    starts = [op.span.start for op in added] + [new_right]  # type: ignore[union-attr]
    # Who owns what the text that is no item holds: the unit before it (0: `before`, i + 1: the
    # i-th new one), or the trailer (len(items) + 1) after the last kernel's end.
    last_end = added[-1].span.end if added else units[a].end + units[a].shift if a else -1  # type: ignore[union-attr, operator]
    owned_diagnostics: list[list[Diagnostic]] = [[] for _ in range(len(items) + 2)]
    owned_occurrences: list[list[Occurrence]] = [[] for _ in range(len(items) + 2)]

    def owner(offset: int) -> int:
        if trailer and offset > last_end:
            return len(items) + 1
        return bisect.bisect_right(starts, offset, 0, len(items))

    for _, piece in loose:
        for d in piece.diagnostics:
            owned_diagnostics[owner(d.span.start)].append(d)
        for occ in SourceIndex.of(module, [], piece.references).occurrences:
            owned_occurrences[owner(occ.span.start)].append(occ)
    new_units: list[Unit] = []
    for i, item in enumerate(items):
        op = item.op
        diagnostics = list(item.diagnostics)
        held = owned_diagnostics[i + 1]  # an error before it may point at its first token
        end = op.span.end  # type: ignore[union-attr]
        if not any(d.is_error for d in diagnostics) and not any(d.is_error and d.span.start < end for d in held):
            diagnostics += verify_isolated(module, op, options)
        diagnostics += held
        owned_end = op.span.end if trailer and i == len(items) - 1 else starts[i + 1]  # type: ignore[union-attr]
        owned = _kernel_comments(item, text, op.span.start, op.span.end)  # type: ignore[union-attr]
        owned += [c for c in comments if op.span.end <= c.span.start < owned_end]  # type: ignore[union-attr]
        new_units.append(
            Unit(
                op,
                op.span.start,  # type: ignore[union-attr]
                op.span.end,  # type: ignore[union-attr]
                0,
                diagnostics,
                item=item,
                comments=owned,
                loose=owned_occurrences[i + 1],
            )
        )
    # The unit before: its own text did not change; what followed it up to `left` did.
    before = units[a]
    shift = before.shift
    before_end = left if trailer and not items else starts[0]
    owned_here = 1 if a else 0  # a kernel's diagnostics may point at its end
    before = dataclasses.replace(
        before,
        diagnostics=[d for d in before.diagnostics if d.span.start + shift < left + owned_here]
        + [d.moved(-shift) for d in owned_diagnostics[0]],
        comments=[c for c in before.comments if c.span.start + shift < left]
        + [_moved(c, -shift) for c in comments if c.span.start < before_end],
        end=before.end if a else starts[0],
        tokens=None,
        **_occurrences_replaced(before, left, 1 << 62, owned_occurrences[0]),
    )
    after = units[b:]
    for later in after:
        later.shift += delta
    if trailer:
        # The trailer's text now starts where the last kernel ends.
        end = added[-1].span.end if added else units[a].end + units[a].shift  # type: ignore[union-attr, operator]
        last = after[0]
        after[0] = dataclasses.replace(
            last,
            start=end - last.shift,
            # (An error at the module's `}` came from the text before it: "expected ...".)
            diagnostics=[d for d in last.diagnostics if d.span.start + last.shift > reparsed_to]
            + [d.moved(-last.shift) for d in owned_diagnostics[-1]],
            comments=[_moved(c, -last.shift) for c in comments if c.span.start >= end]
            + [c for c in last.comments if c.span.start + last.shift >= reparsed_to],
            tokens=None,
            **_occurrences_replaced(last, -(1 << 62), reparsed_to, owned_occurrences[-1]),
        )
    new_units = units[:a] + [before] + new_units + after
    if is_open != was_open:  # the error at the module's `{` comes or goes
        first = new_units[0]
        kept = [d for d in first.diagnostics if d.span.start + first.shift != body.span.start]
        if is_open:
            opened = Span(body.span.start, body.span.start + 1)
            kept.append(Diagnostic(Severity.ERROR, "syntax", UNCLOSED_REGION, opened, source).moved(-first.shift))
            kept.sort(key=lambda d: d.span.start)
        new_units[0] = dataclasses.replace(first, diagnostics=kept, tokens=None)
    parse_errors = None
    if (
        previous.parse_errors == []
        and not is_open
        and not any(d.is_error for item in items for d in item.diagnostics)
        and not loose
    ):
        parse_errors = []
    return Analysis(previous.uri, version, source, module, previous.settings, new_units, parse_errors)


def _occurrences_replaced(unit: Unit, lo: int, hi: int, found: list[Occurrence]) -> dict[str, object]:
    """The fields of `unit` that change when the occurrences in [lo, hi) of the document are
    replaced by `found` (document offsets): its loose ones (a re-parsed unit), else its index."""
    shift = unit.shift
    moved = [shift_occurrence(occ, -shift) for occ in found]
    if unit.item is not None:
        kept = [occ for occ in unit.loose if not lo <= occ.span.start + shift < hi]
        return {"loose": kept + moved, "index": None} if moved or len(kept) < len(unit.loose) else {}
    index = unit.index
    if index is None or (not moved and not index.starting_in(lo - shift, hi - shift)):
        return {}
    kept = [occ for occ in index.occurrences if not lo <= occ.span.start + shift < hi]
    return {"index": SourceIndex(index.module, kept + moved, index.ops)}


def _edit_around_module(
    previous: Analysis, source: DocumentSource, version: int | None, region: tuple[int, int, int]
) -> Analysis | None:
    """An edit of the comments and blank lines before a `cuda_tile.module` (the file's header
    comment) or after it: the comments there are found again; after an edit before it,
    everything after them moves (the module's own spans, in place; the units, by their shift)."""
    module_op = _module_op(previous)
    start, old_end, new_end = region
    if module_op is None or module_op.span is None:
        return None
    delta = new_end - old_end
    module_start, module_end = module_op.span.start, module_op.span.end
    units = previous.units
    if start >= module_end:
        # Only comments after the module, then and now.
        if L.Lexer(previous.text).token_at(module_end).kind != L.EOF:
            return None
        lexer = L.Lexer(source.text)
        if lexer.token_at(module_end).kind != L.EOF:
            return None
        body = module_op.regions[0]
        if body.span is not None and _is_open(body):  # its block ends at the end of the text
            block = body.blocks[0]
            block.span = Span(block.span.start, block.span.end + delta)  # type: ignore[union-attr]
        trailer = units[-1]
        shift = trailer.shift
        trailer = dataclasses.replace(
            trailer,
            comments=[c for c in trailer.comments if c.span.start + shift < module_end]
            + [_moved(c, -shift) for c in lexer.comments],
            tokens=None,
        )
        new_units = [*units[:-1], trailer]
    elif old_end <= module_start:
        # Only comments before the module, then and now (not an alias definition).
        if L.Lexer(previous.text).token_at(0).start != module_start:
            return None
        lexer = L.Lexer(source.text)
        if lexer.token_at(0).start != module_start + delta:
            return None
        header = units[0]
        index = header.index
        if header.shift or header.item is not None or index is None:
            return None
        _move_own_spans(module_op, delta)
        header = dataclasses.replace(
            header,
            end=header.end + delta,  # type: ignore[operator]
            diagnostics=[d.moved(delta) if d.span.start >= old_end else d for d in header.diagnostics],
            index=SourceIndex(
                index.module,
                [shift_occurrence(o, delta) if o.span.start >= old_end else o for o in index.occurrences],
                index.ops,
            ),
            comments=lexer.comments + [_moved(c, delta) for c in header.comments if c.span.start >= module_start],
            tokens=None,
        )
        for unit in units[1:]:
            unit.shift += delta
        new_units = [header, *units[1:]]
    else:
        return None
    previous.module.source = source
    return Analysis(
        previous.uri,
        version,
        source,
        previous.module,
        previous.settings,
        new_units,
        previous.parse_errors,
    )


def _module_op(analysis: Analysis) -> Operation | None:
    """The `cuda_tile.module` the document's kernels are the items of (None: the document is
    not cut into kernels, or they are at its top level)."""
    units = analysis.units
    if len(units) < 3 or units[1].op is None:
        return None
    parent = units[1].op.parent_op
    if parent is None or parent.name != "cuda_tile.module" or parent.parent_op is not None:
        return None
    if not parent.regions or not parent.regions[0].blocks:
        return None
    return parent


def _is_open(body) -> bool:
    """Whether a module's region `body` has no `}`: its span then ends where its last item does
    and its block's at the end of the text (with a `}`, the block ends where the `}` starts)."""
    return body.span.end != body.blocks[0].span.end + 1


def _set_module_end(module_op: Operation, end: int, block_end: int) -> None:
    """The module `module_op` (and its region) now ends at `end`, its block at `block_end`."""
    module_op.span = Span(module_op.span.start, end)  # type: ignore[union-attr]
    body = module_op.regions[0]
    body.span = Span(body.span.start, end)  # type: ignore[union-attr]
    block = body.blocks[0]
    block.span = Span(block.span.start, block_end)  # type: ignore[union-attr]


def _move_own_spans(op: Operation, delta: int) -> None:
    """Move `op`'s own spans (not those of the ops inside it) by `delta`."""
    op.span = Span(op.span.start + delta, op.span.end + delta)  # type: ignore[union-attr]
    if op.name_span is not None:
        op.name_span = Span(op.name_span.start + delta, op.name_span.end + delta)
    for body in op.regions:
        if body.span is not None:
            body.span = Span(body.span.start + delta, body.span.end + delta)
        for block in body.blocks:
            if block.span is not None:
                block.span = Span(block.span.start + delta, block.span.end + delta)


def _moved(comment: Comment, delta: int) -> Comment:
    return Comment(comment.text, Span(comment.span.start + delta, comment.span.end + delta))


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


def _stretch_ancestors(parent, delta: int) -> None:
    """The `cuda_tile.module` `parent` (around the edited kernels) now ends `delta` characters
    later."""
    if not delta:
        return
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
