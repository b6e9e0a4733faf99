"""The shape of a parsed document, for editors: its outline (the symbols it defines), the parts
of it that fold, and the nested spans around a cursor.

Everything here reads the IR only. Spans come out in document coordinates through `locate`,
which gets each IR span with the IR object it was taken from (its anchor): a caller whose IR
spans can be shifted from the current text (the language server re-parses one kernel at a
time) converts them there; anyone else keeps the default, which returns the span unchanged.

    items = outline(module)                      # module -> globals and entries
    for fold in folds(module, source): ...       # regions and comment blocks, by line
    spans = enclosing_spans(op, offset)          # operand list, op, block, region, ..., outward
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..ir import attributes as A
from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.source import SourceFile, Span
from ..ir.symbols import symbol_name
from .printer import Printer, PrintOptions

Anchor = Operation | Value | Block | Region | None
Locate = Callable[[Span, Anchor], Span]


def _as_written(span: Span, anchor: Anchor) -> Span:
    return span


# ---------------------------------------------------------------------------------- outline


@dataclass(slots=True)
class OutlineItem:
    """A symbol the document defines. `kind`: "module", "entry", "function" (a test
    function), "global" or "symbol" (any other op with a `sym_name`)."""

    name: str
    kind: str
    detail: str
    op: Operation
    span: Span  # the whole op, in document coordinates
    constant: bool = False  # a `global constant`
    children: list[OutlineItem] = field(default_factory=list)


_KINDS = {
    "cuda_tile.module": "module",
    "cuda_tile.entry": "entry",
    "cuda_tile.testing$func": "function",
    "cuda_tile.global": "global",
}


def outline(module: Module, locate: Locate = _as_written) -> list[OutlineItem]:
    """The symbols of the document, nested as written: modules hold their globals and entries.
    Unnamed wrappers (`module attributes {...} { ... }`) are looked through."""
    return _outline_of(module.ops, locate)


def _outline_of(ops: list[Operation], locate: Locate) -> list[OutlineItem]:
    items: list[OutlineItem] = []
    for op in ops:
        if op.span is None:
            continue
        name = symbol_name(op)
        # Only module-like ops hold symbols; the bodies of kernels are not searched (a 20,000
        # line kernel has nothing to show here).
        holds_symbols = op.name.endswith("module")
        inner = [o for r in op.regions for b in r.blocks for o in b.ops] if holds_symbols else []
        if name is None:
            items.extend(_outline_of(inner, locate))
            continue
        kind = _KINDS.get(op.name, "module" if holds_symbols else "symbol")
        items.append(
            OutlineItem(
                name=name,
                kind=kind,
                detail=_detail(op, kind),
                op=op,
                span=locate(op.span, op),
                constant=isinstance(op.properties.get("constant"), A.UnitAttr),
                children=_outline_of(inner, locate),
            )
        )
    return items


def _detail(op: Operation, kind: str) -> str:
    """What an editor shows next to the name: an entry's signature, a global's type."""
    if kind in ("entry", "function"):
        fn = op.properties.get("function_type")
        results = tuple(getattr(getattr(fn, "value", None), "results", ()) or ())
        printer = Printer(None, PrintOptions(keep_comments=False))
        return printer.signature(op.regions[0] if op.regions else None, results)
    if kind == "global":
        value = op.properties.get("value")
        written = getattr(value, "type", None)
        words = [w for w in ("constant",) if isinstance(op.properties.get(w), A.UnitAttr)]
        return " ".join([*words, str(written)] if written is not None else words)
    if kind == "module":
        return op.name
    return op.name


def walk_outline(
    items: list[OutlineItem], container: OutlineItem | None = None
) -> Iterator[tuple[OutlineItem, OutlineItem | None]]:
    """Every item with the item that contains it, outer items first."""
    for item in items:
        yield item, container
        yield from walk_outline(item.children, item)


def matches_query(name: str, query: str) -> bool:
    """Workspace-symbol matching: the query's characters appear in `name` in order, ignoring
    case (`mml` finds `matmul`); an empty query matches everything."""
    remaining = iter(name.lower())
    return all(char in remaining for char in query.lower())


# ---------------------------------------------------------------------------------- folding


@dataclass(frozen=True, slots=True)
class Fold:
    """Lines `start_line`..`end_line` (0-based, inclusive) that fold; `kind` is "region" (the
    body of an op, its closing brace left visible) or "comment" (a block of `//` lines).
    `start` and `end` are the offsets the fold runs between (after `{`, before `}`)."""

    start_line: int
    end_line: int
    kind: str
    start: int
    end: int


def folds(module: Module, source: SourceFile, locate: Locate = _as_written) -> list[Fold]:
    """The foldable parts of the document (`source` is its current text), in document order."""
    found: list[Fold] = []
    for op in module.walk():
        for region in op.regions:
            if region.span is None:
                continue
            span = locate(region.span, region)
            first, _ = source.line_col(span.start)
            last, _ = source.line_col(max(span.start, span.end - 1))  # the line of `}`
            if last - 1 > first:
                found.append(Fold(first, last - 1, "region", span.start + 1, max(span.start + 1, span.end - 1)))
    found.extend(_comment_folds(module, source, locate))
    found.sort(key=lambda f: (f.start_line, -f.end_line))
    return found


def _comment_folds(module: Module, source: SourceFile, locate: Locate) -> list[Fold]:
    """Runs of two or more lines that hold nothing but a `//` comment."""
    lines: list[tuple[int, Span]] = []
    for comment in module.comments:
        span = locate(comment.span, _owner_of(module, comment.span))
        line, column = source.line_col(span.start)
        if source.line_text(line)[:column].strip():
            continue  # a comment after code on its line
        lines.append((line, span))
    lines.sort(key=lambda item: item[0])
    found: list[Fold] = []
    run_start = 0
    for i in range(1, len(lines) + 1):
        if i < len(lines) and lines[i][0] == lines[i - 1][0] + 1:
            continue
        if i - run_start >= 2:
            first, last = lines[run_start], lines[i - 1]
            found.append(Fold(first[0], last[0], "comment", first[1].start, last[1].end))
        run_start = i
    return found


def _owner_of(module: Module, span: Span) -> Operation | None:
    """The kernel or global whose text holds a comment (comments carry no anchor of their own:
    they are placed by the top-level op around them, whose coordinates they share)."""
    for op in module.ops:
        if op.span is None or not (op.span.start <= span.start and span.end <= op.span.end):
            continue
        for child in (o for r in op.regions for b in r.blocks for o in b.ops):
            if child.span is not None and child.span.start <= span.start and span.end <= child.span.end:
                return child
        return op
    return None


# ---------------------------------------------------------------------------------- selection


def enclosing_spans(op: Operation, offset: int, locate: Locate = _as_written) -> list[Span]:
    """The spans around `offset` from `op` outward, each containing the previous: the op's
    operand list or result list (when `offset` is in it), the op, then its block, region and
    parent op, up to the top level. `offset` is in document coordinates."""
    spans: list[Span] = []
    operand_spans = [locate(s, op) for s in op.operand_spans or ()]
    for group in (operand_spans, [locate(v.span, op) for v in op.results if v.span is not None]):
        if group:
            cover = Span(min(s.start for s in group), max(s.end for s in group))
            if cover.start <= offset <= cover.end:
                spans.append(cover)
    current: Operation | None = op
    while current is not None:
        if current.span is not None:
            spans.append(locate(current.span, current))
        block = current.parent
        if block is None:
            break
        if block.span is not None:
            spans.append(locate(block.span, block))
        region = block.parent
        if region is not None and region.span is not None:
            spans.append(locate(region.span, region))
        current = current.parent_op
    return spans


__all__ = [
    "Fold",
    "OutlineItem",
    "enclosing_spans",
    "folds",
    "matches_query",
    "outline",
    "walk_outline",
]
