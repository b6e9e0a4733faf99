"""What is written where: an index of a parsed document for editors.

The language server answers "what is under the cursor", "where is it defined" and "where
is it used" from this index, built once per parse from the spans the parser keeps (ops,
values, blocks) and the references it records with `ParseOptions(record_references=True)`
(types and `@symbols`). Nothing here parses text again.

    result = parse(text, name, ParseOptions(record_references=True))
    index = SourceIndex.build(result)
    occ = index.at(offset)             # the innermost occurrence under a cursor
    index.references_to(occ)           # every occurrence of the same entity, definition first
"""

from __future__ import annotations

import bisect
import enum
from dataclasses import dataclass

from ..ir.core import Module, Operation, Value
from ..ir.source import Span

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from .parser import ParseResult, References


class Kind(enum.Enum):
    VALUE = "value"  # an SSA value: an op result or a block argument
    BLOCK = "block"  # a block label `^bb0`
    SYMBOL = "symbol"  # `@name`: a symbol definition or reference
    OP = "op"  # an op's name
    TYPE = "type"  # a written type (nested types are occurrences of their own)


@dataclass(frozen=True, slots=True)
class Occurrence:
    span: Span
    kind: Kind
    # The entity: a Value, a Block, an Operation (for OP), a Type; for SYMBOL the op that
    # defines the symbol, or its name (str) when no op defines it.
    target: object
    is_definition: bool = False
    # For SYMBOL occurrences, the op written around it (the definer or the user).
    op: Operation | None = None

    @property
    def key(self) -> object:
        """What two occurrences of the same entity share."""
        if self.kind is Kind.TYPE or isinstance(self.target, str):
            return (self.kind, self.target)
        return (self.kind, id(self.target))

    @property
    def symbol_name(self) -> str | None:
        if self.kind is not Kind.SYMBOL:
            return None
        return self.target if isinstance(self.target, str) else _defines_symbol(self.target)  # type: ignore[arg-type]


# Ops that define a symbol with their `sym_name` attribute.
def _defines_symbol(op: Operation) -> str | None:
    sym = op.properties.get("sym_name")
    value = getattr(sym, "value", None)
    return value if isinstance(value, str) else None


class SourceIndex:
    """Occurrences sorted by start offset, plus the ops in source order."""

    __slots__ = ("module", "occurrences", "_starts", "ops", "_op_starts", "_by_key")

    def __init__(self, module: Module, occurrences: list[Occurrence], ops: list[Operation]) -> None:
        self.module = module
        occurrences.sort(key=lambda o: (o.span.start, -o.span.end))
        self.occurrences = occurrences
        self._starts = [o.span.start for o in occurrences]
        self.ops = ops
        self._op_starts = [op.span.start for op in ops]  # ops come in pre-order: sorted by start
        self._by_key: dict[object, list[Occurrence]] | None = None

    @classmethod
    def build(cls, result: ParseResult) -> SourceIndex:
        return cls.of(result.module, result.module.ops, result.references)

    @classmethod
    def of(cls, module: Module, roots: list[Operation], references: References | None) -> SourceIndex:
        """The index of the ops `roots` (and all nested in them) of `module`, with the
        references the parser recorded while parsing them."""
        occurrences: list[Occurrence] = []
        add = occurrences.append
        ops: list[Operation] = []
        for op in (nested for root in roots for nested in root.walk()):
            if op.span is None:
                continue
            ops.append(op)
            if op.name_span is not None:
                add(Occurrence(op.name_span, Kind.OP, op))
            for result_value in op.results:
                if result_value.span is not None:
                    add(Occurrence(result_value.span, Kind.VALUE, result_value, True))
            spans = op.operand_spans
            if spans is not None:
                for value, span in zip(op.operands, spans):
                    add(Occurrence(span, Kind.VALUE, value))
            for region in op.regions:
                for block in region.blocks:
                    if block.label_span is not None:
                        add(Occurrence(block.label_span, Kind.BLOCK, block, True))
                    for arg in block.arguments:
                        if arg.span is not None:
                            add(Occurrence(arg.span, Kind.VALUE, arg, True))
        if references is not None:
            for span, written in references.types:
                add(Occurrence(span, Kind.TYPE, written))
            starts = [op.span.start for op in ops]
            named: set[int] = set()  # ops whose own name was seen: it is the first `@x` in them
            tables: dict[int, dict[str, Operation]] = {}
            for span, name in references.symbols:
                around = _innermost_op(ops, starts, span.start, span.end)
                is_def = around is not None and id(around) not in named and _defines_symbol(around) == name
                if is_def:
                    named.add(id(around))
                    target: object = around
                else:
                    target = _resolve_symbol(module, around, name, tables) or name
                add(Occurrence(span, Kind.SYMBOL, target, is_def, around))
        return cls(module, occurrences, ops)

    # ------------------------------------------------------------------ queries

    def at(self, offset: int, kinds: tuple[Kind, ...] | None = None) -> Occurrence | None:
        """The innermost occurrence under `offset`; a cursor just after a word (`%x|`)
        counts as on it, as editors expect."""
        best: Occurrence | None = None
        # Occurrences that start at or before the offset; scan back while they may cover it.
        i = bisect.bisect_right(self._starts, offset)
        scanned = 0
        while i > 0 and scanned < 256:
            i -= 1
            scanned += 1
            occ = self.occurrences[i]
            if occ.span.start <= offset <= occ.span.end and (kinds is None or occ.kind in kinds):
                width = occ.span.end - occ.span.start
                if best is None or width < best.span.end - best.span.start:
                    best = occ
        return best

    def starting_in(self, start: int, end: int) -> list[Occurrence]:
        """The occurrences that start in [start, end), in order."""
        return self.occurrences[bisect.bisect_left(self._starts, start) : bisect.bisect_left(self._starts, end)]

    def op_at(self, offset: int) -> Operation | None:
        """The innermost op whose text covers `offset`."""
        return _innermost_op(self.ops, self._op_starts, offset, offset)

    def references_to(self, occ: Occurrence) -> list[Occurrence]:
        """Every occurrence of `occ`'s entity, definitions first, then in source order."""
        if self._by_key is None:
            by_key: dict[object, list[Occurrence]] = {}
            for o in self.occurrences:
                by_key.setdefault(o.key, []).append(o)
            self._by_key = by_key
        found = self._by_key.get(occ.key, [])
        return sorted(found, key=lambda o: (not o.is_definition, o.span.start))

    def definition_of(self, occ: Occurrence) -> Occurrence | None:
        for other in self.references_to(occ):
            if other.is_definition:
                return other
        return None

    def symbol_definitions(self) -> list[Occurrence]:
        return [o for o in self.occurrences if o.kind is Kind.SYMBOL and o.is_definition]


def _innermost_op(ops: list[Operation], starts: list[int], start: int, end: int) -> Operation | None:
    """The innermost op covering [start, end]: ops are in pre-order, so scanning back from the
    last one that starts before `start`, the first that covers is the innermost."""
    i = bisect.bisect_right(starts, start)
    while i > 0:
        i -= 1
        op = ops[i]
        if op.span.start <= start and end <= op.span.end:
            return op
    return None


def _resolve_symbol(
    module: Module, user: Operation | None, name: str, tables: dict[int, dict[str, Operation]]
) -> Operation | None:
    """The op defining `name` in the nearest enclosing symbol table of `user` that has it
    (the body of an enclosing op, then the document's top level)."""
    op = user.parent_op if user is not None else None
    while True:
        ops = module.ops if op is None else [o for r in op.regions for b in r.blocks for o in b.ops]
        key = id(op)
        table = tables.get(key)
        if table is None:
            table = {}
            for child in ops:
                child_name = _defines_symbol(child)
                if child_name is not None:
                    table.setdefault(child_name, child)
            tables[key] = table
        found = table.get(name)
        if found is not None or op is None:
            return found
        op = op.parent_op


def value_label(value: Value) -> str:
    """`%name` as written (or `%<unnamed>`)."""
    return f"%{value.name}" if value.name else "%<unnamed>"


__all__ = ["Kind", "Occurrence", "SourceIndex", "value_label"]
