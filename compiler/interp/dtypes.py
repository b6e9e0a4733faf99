"""How Tile IR element types live in NumPy arrays.

Every tile value in the interpreter is an ndarray of the element type's *storage*
dtype:

    i1 → bool          i8/i16/i32/i64 → int8/int16/int32/int64 (signless, two's complement;
                       unsigned ops reinterpret with `as_unsigned`)
    f16/f32/f64 → float16/float32/float64     bf16 and the f8/f4 formats → ml_dtypes
    tf32 → float32 holding only values representable in tf32 (10 mantissa bits)
    ptr<T> → int64 (the address; the simulated address space stays below 2**63)

i4 tiles (13.3) hold their values sign-extended in int8.
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np

from ..ir.types import FloatType, IntegerType, PointerType, TileType, Type, memory_bits  # noqa: F401 - re-exported

_FLOAT_DTYPES: dict[str, np.dtype] = {
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "tf32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "f4E2M1FN": np.dtype(ml_dtypes.float4_e2m1fn),
}
_INT_DTYPES: dict[int, np.dtype] = {
    1: np.dtype(np.bool_),
    4: np.dtype(np.int8),
    8: np.dtype(np.int8),
    16: np.dtype(np.int16),
    32: np.dtype(np.int32),
    64: np.dtype(np.int64),
}
_UNSIGNED: dict[np.dtype, np.dtype] = {
    np.dtype(np.int8): np.dtype(np.uint8),
    np.dtype(np.int16): np.dtype(np.uint16),
    np.dtype(np.int32): np.dtype(np.uint32),
    np.dtype(np.int64): np.dtype(np.uint64),
    np.dtype(np.bool_): np.dtype(np.bool_),
}
POINTER_DTYPE = np.dtype(np.int64)

# Element types by the names the IR spells them (`f32`, `bf16`, `i32`, ...), for the CLI.
DTYPE_BY_NAME: dict[str, np.dtype] = {**_FLOAT_DTYPES, **{f"i{w}": d for w, d in _INT_DTYPES.items() if w != 4}}
del DTYPE_BY_NAME["tf32"]


def element_of(t: Type) -> Type:
    return t.element if isinstance(t, TileType) else t


def storage_dtype(t: Type) -> np.dtype:
    """The NumPy dtype that holds elements of `t` (a tile type or an element type)."""
    e = element_of(t)
    if isinstance(e, IntegerType):
        return _INT_DTYPES[e.width]
    if isinstance(e, FloatType):
        return _FLOAT_DTYPES[e.name]
    if isinstance(e, PointerType):
        return POINTER_DTYPE
    raise TypeError(f"no NumPy storage for {t}")


def memory_dtype(t: Type) -> np.dtype:
    """The dtype of elements of `t` as they lie in memory (i1 occupies one byte, as uint8)."""
    e = element_of(t)
    if isinstance(e, IntegerType) and e.width == 1:
        return np.dtype(np.uint8)
    return storage_dtype(e)


_TF32_MASK = np.uint32(0xFFFFE000)  # sign, exponent and the 10 mantissa bits tf32 keeps


def from_memory(values: np.ndarray, t: Type) -> np.ndarray:
    """Tile values of element type `t` from the `memory_dtype` values a load read: any
    nonzero i1 byte is true; a tf32 load ignores the low 13 mantissa bits (NaNs stay NaN)."""
    e = element_of(t)
    if isinstance(e, IntegerType) and e.width == 1:
        return values != 0
    if isinstance(e, FloatType) and e.name == "tf32":
        cut = (values.view(np.uint32) & _TF32_MASK).view(np.float32)
        nan = np.isnan(values)
        return np.where(nan, np.float32(np.nan), cut) if nan.any() else cut
    return values


def as_unsigned(a: np.ndarray) -> np.ndarray:
    """The same bits read as unsigned integers (no copy)."""
    return a.view(_UNSIGNED[a.dtype])


def ir_name_of_dtype(dtype: np.dtype) -> str | None:
    """The IR's name for a NumPy dtype (`float32` → `f32`), or None."""
    dtype = np.dtype(dtype)
    for name, d in DTYPE_BY_NAME.items():
        if d == dtype:
            return name
    return {
        np.dtype(np.uint8): "i8",
        np.dtype(np.uint16): "i16",
        np.dtype(np.uint32): "i32",
        np.dtype(np.uint64): "i64",
    }.get(dtype)


def array_from_bits(bits: Sequence[int], t: Type, shape: tuple[int, ...] = ()) -> np.ndarray:
    """An array of element type `t` from the bit patterns (floats) or signed values (integers)
    that `DenseElementsAttr` and `FloatAttr` store; a single value is broadcast to `shape`."""
    e = element_of(t)
    if isinstance(e, FloatType):
        fmt = e.format
        if e.name == "tf32":  # 19-bit patterns: the top 19 bits of an f32
            raw = np.array([b << 13 for b in bits], dtype=np.uint32)
        else:
            raw = np.array(bits, dtype=np.dtype(f"u{max(fmt.storage_width, 8) // 8}"))
        values = raw.view(_FLOAT_DTYPES[e.name])
    elif isinstance(e, IntegerType) and e.width == 1:
        values = np.array([b & 1 for b in bits], dtype=np.bool_)
    else:
        values = np.array(bits, dtype=storage_dtype(e))
    if values.size == 1:
        return np.broadcast_to(values.reshape(()), shape).copy() if shape else values.reshape(())
    return values.reshape(shape)
