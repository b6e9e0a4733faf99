"""Rules of the matrix-multiply ops: mmaf, mmai and mmaf_scaled.

The op table already checks the element types each operand admits, that `acc` and the
result have one type, that `lhs`/`rhs` (and the two scales) share an element type and
that all ranks agree. Here: 2-D (MxK, KxN, MxN) or batched 3-D shapes that fit together,
which accumulator each input type may use, and for `mmaf_scaled` the shapes of the scale
tiles and the block size they imply.
"""

from __future__ import annotations

from ..ir import types as T
from ..ir.core import Operation
from .common import quoted, shape_text
from .engine import Verifier
from .registry import op_verifier

# Input element type -> accumulator/result element types mmaf accepts, in the order
# cuda-tile-opt lists them.
_MMAF_ACCUMULATORS: dict[str, tuple[str, ...]] = {
    "f4E2M1FN": ("f16", "f32"),
    "f8E4M3FN": ("f16", "f32"),
    "f8E5M2": ("f16", "f32"),
    "f16": ("f16", "f32"),
    "bf16": ("f32",),
    "tf32": ("f32",),
    "f32": ("f32",),
    "f64": ("f64",),
}


def _tiles(op: Operation, count: int) -> list[T.TileType] | None:
    if len(op.operands) < count:
        return None
    out = [v.type for v in op.operands[:count]]
    if not all(isinstance(t, T.TileType) for t in out):
        return None
    return out  # type: ignore[return-value]


def _mismatch(a: str, da: int, sa: tuple[int, ...], b: str, db: int, sb: tuple[int, ...]) -> str:
    return (
        f"dim {da} of {a} ({sa[da]}) and dim {db} of {b} ({sb[db]}) must match, but got {a} shape "
        f"({shape_text(sa)}) and {b} shape ({shape_text(sb)})"
    )


def _verify_shapes(v: Verifier, op: Operation, lhs: T.TileType, rhs: T.TileType, acc: T.TileType) -> int:
    """The shapes of lhs, rhs and acc (same rank, by the op table); returns 1 when batched."""
    if lhs.rank not in (2, 3):
        v.fail(op, "operands must be 2D or 3D tiles", code="mma-rank")
    if rhs.rank != lhs.rank or acc.rank != lhs.rank:
        v.fail(op, "failed to verify that all of {lhs, rhs, acc} have same rank", code="type-rule")
    batched = int(lhs.rank == 3)
    sl, sr, sa = lhs.shape, rhs.shape, acc.shape
    if batched:
        if sl[0] != sr[0]:
            v.fail(op, "shape error: " + _mismatch("lhs", 0, sl, "rhs", 0, sr), code="mma-shape")
        if sl[0] != sa[0]:
            v.fail(op, "shape error: " + _mismatch("lhs", 0, sl, "acc", 0, sa), code="mma-shape")
    row, col = batched, batched + 1
    # cuda-tile-opt writes these three with a leading space (`op  shape error: ...`).
    if sl[col] != sr[row]:
        v.fail(op, " shape error: " + _mismatch("lhs", col, sl, "rhs", row, sr), code="mma-shape")
    if sl[row] != sa[row]:
        v.fail(op, " shape error: " + _mismatch("lhs", row, sl, "acc", row, sa), code="mma-shape")
    if sr[col] != sa[col]:
        v.fail(op, " shape error: " + _mismatch("rhs", col, sr, "acc", col, sa), code="mma-shape")
    return batched


@op_verifier("mmai")
def _mmai(v: Verifier, op: Operation) -> None:
    tiles = _tiles(op, 3)
    if tiles is not None:
        _verify_shapes(v, op, *tiles)


@op_verifier("mmaf")
def _mmaf(v: Verifier, op: Operation) -> None:
    tiles = _tiles(op, 3)
    if tiles is None:
        return
    lhs, _, acc = tiles
    _verify_shapes(v, op, *tiles)
    allowed = _MMAF_ACCUMULATORS.get(str(lhs.element))
    if allowed is None:
        v.fail(op, f"unsupported input element type: {quoted(lhs.element)}", at=0, code="mma-element-type")
    if str(acc.element) not in allowed:
        v.fail(
            op,
            f"unsupported combination of element types. Input type {quoted(lhs.element)} expects "
            "accumulator/result type to be one of {" + ", ".join(f"'{t}'" for t in allowed) + "}, but got "
            f"{quoted(acc.element)}",
            at=2,
            code="mma-element-type",
        )


@op_verifier("mmaf_scaled")
def _mmaf_scaled(v: Verifier, op: Operation) -> None:
    tiles = _tiles(op, 5)
    if tiles is None:
        return
    lhs, rhs, acc, lhs_scale, rhs_scale = tiles
    batched = _verify_shapes(v, op, lhs, rhs, acc)
    if lhs_scale.rank != lhs.rank or rhs_scale.rank != lhs.rank:
        return  # reported by the rank rule
    sl, sr, ls, rs = lhs.shape, rhs.shape, lhs_scale.shape, rhs_scale.shape
    row, col = batched, batched + 1
    if batched:
        if sl[0] != ls[0]:
            v.fail(op, "shape error: " + _mismatch("lhs", 0, sl, "lhs_scale", 0, ls), at=3, code="mma-shape")
        if sr[0] != rs[0]:
            v.fail(op, "shape error: " + _mismatch("rhs", 0, sr, "rhs_scale", 0, rs), at=4, code="mma-shape")
    if sl[row] != ls[row]:
        v.fail(op, "shape error: " + _mismatch("lhs", row, sl, "lhs_scale", row, ls), at=3, code="mma-shape")
    if sr[col] != rs[col]:
        v.fail(op, "shape error: " + _mismatch("rhs", col, sr, "rhs_scale", col, rs), at=4, code="mma-shape")
    if ls[col] != rs[row]:
        v.fail(op, "shape error: " + _mismatch("lhs_scale", col, ls, "rhs_scale", row, rs), at=4, code="mma-shape")

    element, scale = str(lhs.element), str(lhs_scale.element)
    if scale == "f8E4M3FN" and element != "f4E2M1FN":
        v.fail(
            op,
            f"unsupported combination of element types. Scale type 'f8E4M3FN' expects lhs and rhs element "
            f"types to be 'f4E2M1FN', but got {quoted(lhs.element)}",
            at=0,
            code="mma-element-type",
        )
    if scale == "f8E8M0FNU" and element not in ("f8E4M3FN", "f8E5M2", "f4E2M1FN"):
        v.fail(
            op,
            "unsupported combination of element types. Scale type 'f8E8M0FNU' expects lhs and rhs element "
            f"types to be one of {{'f8E4M3FN', 'f8E5M2', 'f4E2M1FN'}}, but got {quoted(lhs.element)}",
            at=0,
            code="mma-element-type",
        )

    k, scale_k = sl[col], ls[col]
    if scale_k == 0 or k % scale_k:
        v.fail(
            op,
            f"shape error: dim {col} of lhs_scale ({scale_k}) must be a divisor of dim {col} of lhs ({k}), but got "
            f"lhs_scale shape ({shape_text(ls)}) and lhs shape ({shape_text(sl)})",
            at=3,
            code="mma-shape",
        )
    block = k // scale_k
    if element in ("f8E4M3FN", "f8E5M2") and block != 32:
        v.fail(
            op,
            "shape error: f8 element type requires block scale factor of lhs_scale and rhs_scale to be 32, "
            f"but got {block}",
            at=3,
            code="mma-block-size",
        )
    if element == "f4E2M1FN":
        if scale == "f8E4M3FN" and block != 16:
            v.fail(
                op,
                "shape error: f4E2M1FN element type with f8E4M3FN scales requires block scale factor of "
                f"lhs_scale and rhs_scale to be 16, but got {block}",
                at=3,
                code="mma-block-size",
            )
        if scale == "f8E8M0FNU" and block not in (16, 32):
            v.fail(
                op,
                "shape error: f4E2M1FN element type with f8E8M0FNU scales requires block scale factor of "
                f"lhs_scale and rhs_scale to be 16 or 32, but got {block}",
                at=3,
                code="mma-block-size",
            )
