"""Semantics of the ops that make, move or reinterpret bits: constant, iota, select,
bitcast, exti, trunci, the pointer casts, and pack / unpack.

Bit patterns in memory and in `pack`/`unpack` are little-endian (the byte order of
the GPU; the interpreter assumes a little-endian host). Sub-byte elements (i4,
f4E2M1FN) pack two per byte, the lower-indexed element in bits 3..0 and the next in
bits 7..4 (spec 5.2, "Sub-Byte Types"). i1 counts as one bit in `pack`/`unpack` (the
op verifier sizes it so): eight per byte, the lowest index in the lowest bit, the same
order as for nibbles.
"""

from __future__ import annotations

import numpy as np

from ..ir.types import FloatType, IntegerType, TileType
from . import dtypes
from .registry import Ctx, semantics

_BOOL = np.dtype(np.bool_)


def _is_nibble(t) -> bool:
    e = dtypes.element_of(t)
    return (isinstance(e, IntegerType) and e.width == 4) or (isinstance(e, FloatType) and e.name == "f4E2M1FN")


def _shape(t) -> tuple[int, ...]:
    return tuple(t.shape) if isinstance(t, TileType) else ()


# -- values from nothing -------------------------------------------------------------------


@semantics("constant")
def _constant(ctx: Ctx) -> np.ndarray:
    attr = ctx.attr("value")
    t = ctx.result_type()
    shape = _shape(t)
    values = dtypes.array_from_bits(attr.values, t, shape)  # type: ignore[union-attr]
    # The same for every tile block: a group axis of length 1.
    return np.ascontiguousarray(values).reshape((1, *shape))


@semantics("iota")
def _iota(ctx: Ctx) -> np.ndarray:
    t = ctx.result_type()
    (n,) = _shape(t)
    dtype = dtypes.storage_dtype(t)
    values = np.arange(n, dtype=np.int64)
    # The values are unsigned: in i8, 128..255 have the bit patterns of -128..-1.
    out = (values & 1).astype(np.bool_) if dtype == _BOOL else values.astype(dtype)
    return out.reshape(1, n)


@semantics("select")
def _select(ctx: Ctx) -> np.ndarray:
    cond, if_true, if_false = ctx.args
    return np.where(cond, if_true, if_false)


# -- reinterpretation ----------------------------------------------------------------------


@semantics("bitcast")
def _bitcast(ctx: Ctx) -> np.ndarray:
    (x,) = ctx.args
    dtype = dtypes.storage_dtype(ctx.result_type())
    if x.dtype == dtype:
        return x
    if x.dtype.itemsize != dtype.itemsize:  # the verifier admits only equal widths
        raise ctx.error(f"cannot reinterpret {ctx.operand_type()} as {ctx.result_type()}")
    return x.view(dtype)


@semantics("int_to_ptr", "ptr_to_int", "ptr_to_ptr")
def _pointer_cast(ctx: Ctx) -> np.ndarray:
    # Pointers are int64 addresses, and the integers are i64: only the type changes.
    return ctx.args[0]


# -- width changes -------------------------------------------------------------------------


def _unsigned_value(x: np.ndarray, width: int) -> np.ndarray:
    """The value of iN `x` read as unsigned (i4 is held sign-extended in int8)."""
    if x.dtype == _BOOL:
        return x.view(np.uint8)
    if width == 4:
        return dtypes.as_unsigned(x) & np.uint8(0xF)
    return dtypes.as_unsigned(x)


@semantics("exti")
def _exti(ctx: Ctx) -> np.ndarray:
    (x,) = ctx.args
    src = dtypes.element_of(ctx.operand_type())
    dtype = dtypes.storage_dtype(ctx.result_type())
    if ctx.keyword("signedness") == "signed":
        values = np.negative(x.view(np.int8)) if x.dtype == _BOOL else x  # i1 true is -1
    else:
        values = _unsigned_value(x, src.width)  # type: ignore[union-attr]
    return values.astype(dtype)


@semantics("trunci")
def _trunci(ctx: Ctx) -> np.ndarray:
    (x,) = ctx.args
    src = dtypes.element_of(ctx.operand_type())
    width = dtypes.element_of(ctx.result_type()).width  # type: ignore[union-attr]
    keyword = ctx.keyword("overflow", "none") or "none"
    if keyword != "none":
        # The flags promise that no bit is lost: the value read as signed (or unsigned)
        # fits the narrower type. A broken promise is undefined behaviour.
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        if keyword in ("no_signed_wrap", "no_wrap"):
            bad = (x < lo) | (x > hi)
            if bad.any():
                raise ctx.error(f"signed wrap-around despite overflow<{keyword}>", blocks=bad)
        if keyword in ("no_unsigned_wrap", "no_wrap"):
            bad = _unsigned_value(x, src.width) >= (1 << width)  # type: ignore[union-attr]
            if bad.any():
                raise ctx.error(f"unsigned wrap-around despite overflow<{keyword}>", blocks=bad)
    if width == 1:
        return (x & 1).astype(np.bool_)
    if width == 4:
        low = x.astype(np.int8) & np.int8(0xF)
        return (low ^ np.int8(8)) - np.int8(8)  # sign-extended, as i4 is held
    return x.astype(dtypes.storage_dtype(ctx.result_type()))


# -- pack / unpack -------------------------------------------------------------------------


@semantics("pack")
def _pack(ctx: Ctx) -> np.ndarray:
    (x,) = ctx.args
    t = ctx.operand_type()
    g = x.shape[0]
    if x.dtype == _BOOL:
        packed = np.packbits(x, axis=-1, bitorder="little")
    elif _is_nibble(t):
        nibbles = x.view(np.uint8) & np.uint8(0xF)
        packed = nibbles[:, 0::2] | (nibbles[:, 1::2] << np.uint8(4))
    else:
        packed = np.ascontiguousarray(x).view(np.uint8).reshape(g, -1)
    return packed.view(np.int8)


@semantics("unpack")
def _unpack(ctx: Ctx) -> np.ndarray:
    (x,) = ctx.args
    t = ctx.result_type()
    dtype = dtypes.storage_dtype(t)
    raw = np.ascontiguousarray(x).view(np.uint8)
    g, m = raw.shape
    if dtype == _BOOL:
        return np.unpackbits(raw, axis=-1, bitorder="little").astype(np.bool_)
    if _is_nibble(t):
        nibbles = np.empty((g, 2 * m), dtype=np.uint8)
        nibbles[:, 0::2] = raw & np.uint8(0xF)
        nibbles[:, 1::2] = raw >> np.uint8(4)
        if isinstance(dtypes.element_of(t), IntegerType):  # i4: sign-extend into int8
            return (nibbles.view(np.int8) ^ np.int8(8)) - np.int8(8)
        return nibbles.view(dtype)
    return raw.view(dtype)
