"""Rules of the shape-manipulating ops: broadcast, reshape, cat, extract, insert, permute, iota,
pack and unpack (the op-specific part; ranks and element types that the op table relates
are checked by the engine first).

Messages are cuda-tile-opt's, word for word; shapes are written as MLIR streams them
(`4, 4`), types quoted with their dialect prefix (`'f32'`, `'!cuda_tile.tile<4xf32>'`).
"""

from __future__ import annotations

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation, Value
from ..ir.diagnostics import Fix, TextEdit
from ..ir.source import Span
from .common import bit_width, quoted, shape_text, source_and_result, tile_of
from .engine import Verifier
from .registry import op_verifier


def mlir_bitwidth(t: T.Type) -> int:
    """`getIntOrFloatBitWidth()`: the format's width (tf32 is 19 bits, f4E2M1FN 4); 64 for
    a pointer, 0 for anything else."""
    width = bit_width(t)
    if width is not None:
        return width
    return 64 if isinstance(t, T.PointerType) else 0


def result_type_span(v: Verifier, op: Operation) -> tuple[Span, bool] | None:
    """Where the op's text spells its result type (the type after the last `->`), and
    whether it is written with the `!cuda_tile.` prefix; None when not found."""
    if v.source is None or op.span is None:
        return None
    text = v.source.text
    arrow = text.rfind("->", op.span.start, op.span.end)
    if arrow < 0:
        return None
    i = arrow + 2
    while i < op.span.end and text[i] in " \t\r\n":
        i += 1
    start, depth = i, 0
    while i < op.span.end:
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                i += 1
                break
        elif depth == 0 and c in " \t\r\n,{(":
            break
        i += 1
    if i <= start or depth != 0:
        return None
    return Span(start, i), text.startswith("!", start)


def fix_result_type(v: Verifier, op: Operation, new: T.Type) -> list[Fix]:
    """A quick fix that rewrites the op's result type to `new`, when its text is found."""
    found = result_type_span(v, op)
    if found is None:
        return []
    span, prefixed = found
    spelled = new.full() if prefixed else str(new)
    return [Fix(f"Change the result type to {spelled}", (TextEdit(span, spelled),))]


# ------------------------------------------------------------------ broadcast / reshape


@op_verifier("broadcast")
def _broadcast(v: Verifier, op: Operation) -> None:
    types = source_and_result(op)
    if types is None:
        return
    src, res = types
    for s, r in zip(src.shape, res.shape, strict=False):
        if s != r and s != 1:
            v.fail(
                op,
                "expects the shape of source tile to be compatible with that of the result tile, but got: "
                f"{shape_text(src.shape)} and {shape_text(res.shape)}",
                code="broadcast-shape",
            )


@op_verifier("reshape")
def _reshape(v: Verifier, op: Operation) -> None:
    types = source_and_result(op)
    if types is None:
        return
    src, res = types
    if src.num_elements != res.num_elements:
        v.fail(
            op,
            "expected source tile and result tile to have the same number of elements",
            code="reshape-elements",
        )


# ------------------------------------------------------------------ cat


@op_verifier("cat")
def _cat(v: Verifier, op: Operation) -> None:
    dim_attr = op.properties.get("dim")
    if dim_attr is None:
        v.fail(op, "requires attribute 'dim'", code="missing-attribute")
    if not (isinstance(dim_attr, A.IntegerAttr) and dim_attr.type in (None, T.I64)):
        v.fail(op, "attribute 'dim' failed to satisfy constraint: 64-bit signless integer attribute", code="attribute")
    if len(op.operands) != 2 or len(op.results) != 1:
        return
    lhs, rhs, res = tile_of(op.operands[0]), tile_of(op.operands[1]), tile_of(op.results[0])
    if lhs is None or rhs is None or res is None:
        return
    dim, rank = dim_attr.value, lhs.rank
    if dim < 0 or dim >= rank:
        v.fail(op, f"expect dim to be [0, {rank}), but got: {dim}", code="dim-range")
    if rhs.rank != rank or res.rank != rank:
        return  # reported by the rank rule
    total = lhs.shape[dim] + rhs.shape[dim]
    if total != res.shape[dim]:
        fixed = [*res.shape]
        fixed[dim] = total
        v.fail(
            op,
            f"invalid concat at position {dim}, expected: {total} but got: {res.shape[dim]}",
            code="cat-shape",
            fixes=fix_result_type(v, op, T.TileType(tuple(fixed), res.element)),
        )
    for idx in range(rank):
        if idx == dim:
            continue
        if lhs.shape[idx] != rhs.shape[idx]:
            v.fail(
                op,
                f"expect lhs and rhs shapes to match at non-concat position {idx}, expected: {lhs.shape[idx]} "
                f"but got: {rhs.shape[idx]}",
                at=1,
                code="cat-shape",
            )
        if lhs.shape[idx] != res.shape[idx]:
            fixed = [*lhs.shape]
            fixed[dim] = total
            v.fail(
                op,
                f"expect lhs and result shapes to match at non-concat position {idx}, expected: {lhs.shape[idx]} "
                f"but got: {res.shape[idx]}",
                code="cat-shape",
                fixes=fix_result_type(v, op, T.TileType(tuple(fixed), res.element)),
            )


# ------------------------------------------------------------------ extract


def _constant_splat(value: Value) -> int | None:
    """The integer a `constant` op gives every element of `value`, if it is one."""
    op = value.defining_op
    if op is None or op.name != "cuda_tile.constant":
        return None
    attr = op.properties.get("value")
    if not isinstance(attr, A.DenseElementsAttr) or not isinstance(attr.element, T.IntegerType):
        return None
    if not attr.values or len(set(attr.values)) != 1:
        return None
    return attr.values[0]


@op_verifier("extract")
def _extract(v: Verifier, op: Operation) -> None:
    types = source_and_result(op)
    if types is None:
        return
    src, res = types
    if src.element != res.element:
        v.fail(op, "source and result element type do not match", code="element-type")
    if src.rank != res.rank:
        v.fail(op, "source and result must have the same rank", code="rank")
    _slice_rules(v, op, src, res, ("source", "result"), 1)


@op_verifier("insert")
def _insert(v: Verifier, op: Operation) -> None:
    src, dst = op.operands[0].type, op.operands[1].type
    if not isinstance(src, T.TileType) or not isinstance(dst, T.TileType):
        return  # the operand constraints said so
    _slice_rules(v, op, dst, src, ("destination", "source"), 2)


def _slice_rules(
    v: Verifier, op: Operation, whole: T.TileType, part: T.TileType, names: tuple[str, str], first: int
) -> None:
    """`extract` and `insert`: `part`'s shape divides `whole`'s, and the operands from `first`
    on are one scalar i32 slice number per dimension (a constant out of range is warned of)."""
    kind = op.name.rsplit(".", 1)[-1]
    for i, (s, r) in enumerate(zip(whole.shape, part.shape, strict=False)):
        if r == 0 or s % r != 0:
            v.fail(
                op,
                f"{names[0]} dimension {i} size ({s}) must be evenly divisible by {names[1]} dimension {i} size ({r})",
                code="extract-shape",
            )
    indices = op.operands[first:]
    if len(indices) != whole.rank:
        v.fail(op, f"expected {whole.rank} indices, but got {len(indices)}", code="index-count")
    for i, index in enumerate(indices):
        t = index.type
        if not isinstance(t, T.TileType):
            v.fail(op, f"index {i} must be a Tile type", at=i + first, code="index-type")
        if t.rank != 0:
            v.fail(op, f"index {i} must be a scalar tile, got rank {t.rank}", at=i + first, code="index-type")
        if t.element != T.I32:
            v.fail(op, f"index {i} must have i32 element type", at=i + first, code="index-type")
        value = _constant_splat(index)
        if value is None:
            continue
        highest = whole.shape[i] // part.shape[i] - 1
        if value < 0:
            v.warn(
                op,
                f"{kind} index {i} has negative value {value}, which may cause undefined behavior",
                prefix=False,
                at=i + first,
                code="extract-index",
            )
        if value > highest:
            v.warn(
                op,
                f"{kind} index {i} value {value} may be out of bounds (max valid index: {highest})",
                prefix=False,
                at=i + first,
                code="extract-index",
            )


# ------------------------------------------------------------------ permute


@op_verifier("permute")
def _permute(v: Verifier, op: Operation) -> None:
    perm_attr = op.properties.get("permutation")
    if perm_attr is None:
        v.fail(op, "requires attribute 'permutation'", code="missing-attribute")
    if not (isinstance(perm_attr, A.DenseArrayAttr) and perm_attr.element == T.I32):
        v.fail(
            op,
            "attribute 'permutation' failed to satisfy constraint: i32 dense array attribute",
            code="attribute",
        )
    types = source_and_result(op)
    if types is None:
        return
    src, res = types
    rank = src.rank
    perm = list(perm_attr.values)
    if rank < 2:
        v.fail(op, f"expects at least rank 2, but got: {rank}", code="permute-rank")
    if len(perm) != rank:
        v.fail(
            op,
            f"expect permutation size ({len(perm)}) to equal the rank of the source ({rank})",
            code="permutation",
        )
    if len(set(perm)) != len(perm):
        v.fail(op, "expect permutation elements to be unique", code="permutation")
    for idx, p in enumerate(perm):
        if p < 0 or p >= rank:
            v.fail(op, f"permutation element at index {idx} ({p}) is out of bound [0, {rank})", code="permutation")
    if res.rank != rank:
        return  # reported by the rank rule
    for idx, p in enumerate(perm):
        if res.shape[idx] != src.shape[p]:
            expected = T.TileType(tuple(src.shape[q] for q in perm), res.element)
            v.fail(
                op,
                f"result shape invalid at index {idx}, expected: {src.shape[p]}, but got: {res.shape[idx]}",
                code="permute-shape",
                fixes=fix_result_type(v, op, expected),
            )


# ------------------------------------------------------------------ iota


@op_verifier("iota")
def _iota(v: Verifier, op: Operation) -> None:
    if len(op.results) != 1:
        return
    res = tile_of(op.results[0])
    if res is None:
        return
    if res.rank != 1:
        v.fail(op, "expects result type to be 1-d tile", code="iota-shape")
    count = res.shape[0]
    width = mlir_bitwidth(res.element)
    if width < 64 and count > (1 << width):
        v.fail(
            op,
            f"the number of elements {count} exceeds the maximum value of element type {quoted(res.element)}",
            code="iota-range",
        )


# ------------------------------------------------------------------ pack / unpack


def _size_in_bits(t: T.TileType) -> int:
    element = t.element
    if element == T.I1:
        width = 1
    elif isinstance(element, T.FloatType) and element.name == "tf32":
        width = 32
    else:
        width = mlir_bitwidth(element)
    return width * t.num_elements


@op_verifier("pack", "unpack")
def _pack(v: Verifier, op: Operation) -> None:
    types = source_and_result(op)
    if types is None:
        return
    src, res = types
    if src.rank != 1:
        v.fail(op, "expects source and result to be rank-1 tiles", code="pack-shape")
    if mlir_bitwidth(src.element) == mlir_bitwidth(res.element):
        v.fail(op, "expects source and result to have different element type widths", code="pack-element-type")
    src_bits, res_bits = _size_in_bits(src), _size_in_bits(res)
    if src_bits % 8:
        v.fail(op, "expects source tile to be byte-aligned", code="pack-size")
    if res_bits % 8:
        v.fail(op, "expects result tile to be byte-aligned", code="pack-size")
    if src_bits != res_bits:
        v.fail(
            op,
            "expects source and result to have the same size in bytes, but got source tile size "
            f"{src_bits // 8} bytes and result tile size {res_bits // 8} bytes",
            code="pack-size",
        )
