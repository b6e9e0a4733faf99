"""Small helpers the op verifiers share: reading an op's types and properties, and writing
types and shapes as MLIR streams them into a diagnostic."""

from __future__ import annotations

from collections.abc import Iterable

from ..ir import attributes as A
from ..ir import types as T
from ..ir.diagnostics import Fix, TextEdit
from ..ir.source import Span

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from ..ir.core import Operation, Value
    from .engine import Verifier


# ------------------------------------------------------------------ writing types and shapes


def type_text(t: T.Type) -> str:
    """A type as MLIR prints it inside a diagnostic, without the quotes."""
    return t.full() if hasattr(t, "full") else str(t)


def quoted(t: T.Type) -> str:
    """A type as MLIR writes it inside a diagnostic: `'!cuda_tile.tile<4xf32>'`."""
    return f"'{t.full()}'"


def type_list(types: Iterable[T.Type]) -> str:
    """Types as MLIR streams a type range into a diagnostic: `'a', 'b'`."""
    return ", ".join(quoted(t) for t in types)


def shape_text(shape: tuple[int, ...]) -> str:
    """A shape as MLIR prints an `ArrayRef<int64_t>` in a diagnostic: `4, 16`."""
    return ", ".join(str(d) for d in shape)


# ------------------------------------------------------------------ reading types


def bit_width(t: T.Type | None) -> int | None:
    """The width MLIR's `getIntOrFloatBitWidth` gives an integer or float type: the format's
    own bits (19 for tf32, 4 for f4E2M1FN), not its storage size; None for other types."""
    if isinstance(t, T.IntegerType):
        return t.width
    if isinstance(t, T.FloatType):
        fmt = T.FLOAT_FORMATS.get(t.name)
        return fmt.width if fmt is not None else None
    return None


def tile_shape(t: T.Type) -> tuple[int, ...] | None:
    """The shape of a tile type; None for other types."""
    return t.shape if isinstance(t, T.TileType) else None


def tile_of(value: Value) -> T.TileType | None:
    """The value's type when it is a tile."""
    t = value.type
    return t if isinstance(t, T.TileType) else None


def source_and_result(op: Operation) -> tuple[T.TileType, T.TileType] | None:
    """The tile types of the op's first operand and its one result; None unless both are tiles."""
    if len(op.operands) < 1 or len(op.results) != 1:
        return None
    src, res = tile_of(op.operands[0]), tile_of(op.results[0])
    if src is None or res is None:
        return None
    return src, res


# ------------------------------------------------------------------ reading properties


def enum_keyword(op: Operation, name: str) -> str | None:
    """The keyword of enum property `name`, or None when absent or not an enum."""
    attr = op.properties.get(name)
    return attr.keyword if isinstance(attr, A.EnumAttr) else None


# ------------------------------------------------------------------ fixes


def deletion_fix(v: Verifier, span: Span | None, title: str) -> list[Fix]:
    """A fix deleting `span` and the blanks before it (none when there is no span)."""
    if span is None or v.source is None:
        return []
    text = v.source.text
    start = span.start
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return [Fix(title, (TextEdit(Span(start, span.end), ""),))]
