"""How Tile IR types are represented in the generated Triton source.

Element types of tile values:

    i1 → tl.int1    i8/i16/i32/i64 → tl.int8 ... tl.int64 (signless values held signed;
                    unsigned ops reinterpret with `.to(tl.uintN, bitcast=True)`)
    i4 → tl.int8 holding the value sign-extended, as the interpreter holds it (no arithmetic
                    takes i4: only conversions, `pack`/`unpack` and the shape ops)
    f16/bf16/f32/f64 → tl.float16/bfloat16/float32/float64
    tf32 → tl.float32 holding only tf32 values (as the interpreter holds them)
    f8E4M3FN, f8E5M2, f8E8M0FNU → tl.uint8 bit patterns. Triton lacks fp8e4nv on sm_80 and
        has no e8m0 at all, and its own conversions do not saturate as Tile IR's do, so the
        small formats travel as bits and are converted with integer code (exact everywhere);
        `mmaf` bitcasts them to Triton's fp8 types where the target has them.
    f4E2M1FN → tl.uint8 holding the 4-bit code (sign in bit 3), for the same reasons (Triton
        has no 4-bit type).
    ptr<T> → a Triton pointer to `memory_dtype(T)`. f4E2M1FN elements lie two to a byte
        (lower index in the low nibble), which no Triton pointer addresses: a pointer to them
        is a tl.int64 *nibble address* (2 x the byte address, + 1 for the upper nibble),
        so that element offsets add to it; a kernel parameter is a byte pointer made into one
        in the prologue. As an integer (`ptr_to_int`) it is the interpreter's pointer: the
        byte address, bit 62 set for an upper nibble.

Scalar kernel parameters of float type are passed as their bits (an integer of the same
width) and bitcast in the kernel's prologue: Triton's interpreter types a Python float as
fp32, which would round f64 and misread f16/bf16 parameters.
"""

from __future__ import annotations

from ..ir.types import FloatType, IntegerType, PointerType, TileType, Type

_INT = {1: "tl.int1", 4: "tl.int8", 8: "tl.int8", 16: "tl.int16", 32: "tl.int32", 64: "tl.int64"}
_UINT = {1: "tl.int1", 8: "tl.uint8", 16: "tl.uint16", 32: "tl.uint32", 64: "tl.uint64"}
_FLOAT = {"f16": "tl.float16", "bf16": "tl.bfloat16", "f32": "tl.float32", "tf32": "tl.float32", "f64": "tl.float64"}
BITS_FORMATS = ("f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")
# Formats whose elements lie two to a byte in memory.
PACKED_FORMATS = ("f4E2M1FN",)
# Triton's own fp8 types, for mmaf operands (sm_89 and newer).
TRITON_FP8 = {"f8E4M3FN": "tl.float8e4nv", "f8E5M2": "tl.float8e5"}
# Signature strings of `triton.compile` for memory element types.
_SIG_INT = {1: "i1", 8: "i8", 16: "i16", 32: "i32", 64: "i64"}
_SIG_FLOAT = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "tf32": "fp32", "f64": "fp64"}


class LoweringTypeError(TypeError):
    """A type the Triton lowering has no representation for."""


def element_of(t: Type) -> Type:
    return t.element if isinstance(t, TileType) else t


def shape_of(t: Type) -> tuple[int, ...]:
    return t.shape if isinstance(t, TileType) else ()


def dtype(t: Type) -> str:
    """The Triton dtype expression (`tl.float32`) of the elements of a tile type or element type."""
    e = element_of(t)
    if isinstance(e, IntegerType) and e.width in _INT:
        return _INT[e.width]
    if isinstance(e, FloatType):
        if e.name in _FLOAT:
            return _FLOAT[e.name]
        if e.name in BITS_FORMATS:
            return "tl.uint8"
    if isinstance(e, PointerType):
        if is_nibble(e.pointee):
            return "tl.int64"  # a nibble address
        return f"tl.pointer_type({memory_dtype(e.pointee)})"
    raise LoweringTypeError(f"the Triton lowering cannot hold {e} values")


def unsigned_dtype(t: Type) -> str:
    e = element_of(t)
    assert isinstance(e, IntegerType)
    return _UINT[e.width]


def memory_dtype(t: Type) -> str:
    """The Triton dtype of elements of type `t` as they lie in memory (i1: a byte)."""
    e = element_of(t)
    if isinstance(e, IntegerType) and e.width == 1:
        return "tl.int8"
    _refuse_packed(e)
    return dtype(e)


def is_nibble(t: Type) -> bool:
    """Whether `t`'s elements are 4 bits wide (i4, f4E2M1FN): two to a byte in memory."""
    e = element_of(t)
    return (isinstance(e, IntegerType) and e.width == 4) or (isinstance(e, FloatType) and e.name in PACKED_FORMATS)


def _refuse_packed(e: Type) -> None:
    # Memory of 4-bit elements is read through nibble addresses (ops_memory), never typed.
    if is_nibble(e):
        raise LoweringTypeError(f"the Triton lowering has no memory type for {e} (two elements to a byte)")


def is_nibble_pointer(t: Type) -> bool:
    """Whether `t` (a tile of) pointers to 4-bit elements: nibble addresses."""
    e = element_of(t)
    return isinstance(e, PointerType) and is_nibble(e.pointee)


def memory_signature(t: Type) -> str:
    """The `triton.compile` signature string of a pointer to `t` elements (`*fp32`)."""
    e = element_of(t)
    _refuse_packed(e)
    if isinstance(e, IntegerType) and e.width in _SIG_INT:
        return "*i8" if e.width == 1 else "*" + _SIG_INT[e.width]
    if isinstance(e, FloatType):
        if e.name in _SIG_FLOAT:
            return "*" + _SIG_FLOAT[e.name]
        if e.name in BITS_FORMATS:
            return "*u8"
    if isinstance(e, PointerType):
        return "*i64"  # a table of addresses
    raise LoweringTypeError(f"the Triton lowering cannot pass pointers to {e}")


def scalar_signature(t: Type) -> str:
    """The signature string of a scalar parameter: integers as themselves, floats as their bits."""
    e = element_of(t)
    if isinstance(e, IntegerType) and e.width in _SIG_INT:
        return _SIG_INT[e.width]
    if isinstance(e, FloatType):
        width = e.format.storage_width
        if e.name in _SIG_FLOAT or e.name in BITS_FORMATS:
            return _SIG_INT[max(width, 8)]
    if isinstance(e, PointerType):
        return "*u8" if is_nibble(e.pointee) else memory_signature(e.pointee)
    raise LoweringTypeError(f"the Triton lowering cannot pass a {e} parameter")


def is_bits_float(t: Type) -> bool:
    e = element_of(t)
    return isinstance(e, FloatType) and e.name in BITS_FORMATS


def is_float(t: Type) -> bool:
    return isinstance(element_of(t), FloatType)


def is_int(t: Type) -> bool:
    return isinstance(element_of(t), IntegerType)


def int_width(t: Type) -> int:
    e = element_of(t)
    assert isinstance(e, IntegerType)
    return e.width


def float_name(t: Type) -> str:
    e = element_of(t)
    assert isinstance(e, FloatType)
    return e.name
