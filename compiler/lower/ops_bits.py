"""Ops that make, move or reinterpret bits: constant, iota, select, bitcast, exti, trunci, the
pointer casts, pack and unpack. All exact (bitwise equal to `compiler/interp/ops_bits.py`) in
Triton's compiler and in Triton 3.6's interpreter.

    constant    A splat is `tl.full(shape, v, dtype)`. Integers (and f8 and f4 formats, which travel
                as tl.uint8 bits) use their value. Floats that are finite, not -0.0 and whose
                shortest decimal converts back to the same bits in their format are written as
                that decimal (readable; Triton converts a Python float with round-to-nearest,
                which is exact for a representable value). Every other float (NaN payloads,
                ±inf, -0.0 — Triton turns a `0` value into a null constant, dropping the sign —,
                bf16, which Triton 3.6's interpreter cannot make from a float) is built from its
                bit pattern: `tl.full(shape, bits, tl.intN).to(float, bitcast=True)`.
                Non-splat constants, in this order:
                - integers that are an affine function of the row-major flat index (0, 1, 2 …;
                  64, 128, …): arithmetic on tl.arange, any size, no memory access;
                - at most 16 elements: a chain of `tl.where(index == k, v_k, …)` over the flat
                  index, starting from the most frequent value (no memory access, no extra
                  kernel parameter; fine for so few elements);
                - anything else: a hidden read-only device buffer holding the exact bytes
                  (`OpEmit.buffer`, shared by equal constants) read with `tl.load(buf + index)`.
                  That is exact for every bit pattern and costs one cached load per element,
                  where arithmetic would need a select per distinct element.
    iota        tl.arange (int32), converted to the element type by truncation (i8: 128..255
                become the patterns of -128..-1, as the interpreter holds them); i1: bit 0.
    select      tl.where(cond, a, b).
    bitcast     `.to(dtype, bitcast=True)` between same-width types; no code where both types
                have the same Triton representation (f8 formats are all tl.uint8 bits).
    exti        signed: Triton's integer cast (sign-extends a signed source); from i1 signed,
                0 - x (true is -1). Unsigned: zero-extend the uint reinterpretation.
    trunci      Triton's integer cast truncates; to i1, `(x & 1) != 0` (Triton's cast to int1
                means "nonzero").
    int_to_ptr / ptr_to_int / ptr_to_ptr  `.to(tl.pointer_type(T))`, `.to(tl.int64)`,
                pointer to pointer `.to(...)` (no code when the Triton pointer types agree).
    pack        A rank-1 tile of N-byte elements becomes its little-endian bytes: the uint
                reinterpretation is split in halves (low, high) log2(N) times with `tl.join`,
                each time on a new minor axis, so that row-major order is byte order; then
                reshaped to one axis. i1: 8 bits per byte, lowest index in the lowest bit: the
                bits are reshaped to (n/8, 2, 2, 2) and merged pairwise with `tl.split`
                (low | high << 1, << 2, << 4).
    unpack      The inverse: bytes reshaped to (m/N, 2, …, 2) and merged pairwise with
                `tl.split` (low | high << 8, << 16, << 32) into the uint of the element width,
                then bitcast; i1: each byte split into bits with `tl.join` and reshaped.
    4-bit elements  i4 is held sign-extended in an int8, f4E2M1FN as its code in a uint8
                (tltypes). trunci to i4 sign-extends the low 4 bits (`(x << 4) >> 4` in
                int8); exti from i4 unsigned masks them (`& 0xF`). pack takes each pair's
                codes as one byte (low | high << 4), unpack splits a byte into its nibbles
                (i4: sign-extended). (No op but these, the shape ops and, for f4E2M1FN,
                constant and ftof takes them.)
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter

from ..ir import floats
from ..ir.types import FloatType, IntegerType, PointerType, Type
from . import tltypes
from .codegen import OpEmit
from .registry import emitter

_SIGNED_OF_WIDTH = {8: "tl.int8", 16: "tl.int16", 32: "tl.int32", 64: "tl.int64"}
_UNSIGNED_OF_WIDTH = {8: "tl.uint8", 16: "tl.uint16", 32: "tl.uint32", 64: "tl.uint64"}
# Up to this many elements, a non-splat constant is a chain of selects instead of a buffer.
_SELECT_CHAIN_MAX = 16


def _shape_text(shape: tuple[int, ...]) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"


def _name(e: OpEmit, suffix: str) -> str:
    return e.tmp(f"{e.op.results[0].name or 'v'}_{suffix}")


def _sign_extended_nibble(x: str) -> str:
    """An int8 tensor holding the low 4 bits of `x` (an 8-bit tensor) sign-extended: an i4."""
    return f"(({x}.to(tl.int8, bitcast=True) << 4) >> 4)"


def _nibble_code(x: str, t: Type) -> str:
    """The 4-bit codes (uint8, 0..15) of `x`, a tile of `t` (i4 or f4E2M1FN)."""
    if isinstance(tltypes.element_of(t), IntegerType):
        return f"({x}.to(tl.uint8, bitcast=True) & 0xF)"
    return x


def _bit_width(t: Type) -> int:
    """Width in bits of the Triton representation of the elements of `t` (4-bit elements: 4)."""
    el = tltypes.element_of(t)
    if tltypes.is_nibble(el):
        return 4
    if isinstance(el, IntegerType):
        return el.width
    if isinstance(el, FloatType):
        if tltypes.is_bits_float(el):
            return 8
        return 32 if el.name == "tf32" else el.format.storage_width
    raise tltypes.LoweringTypeError(f"the Triton lowering cannot hold {el} values")


# -- constant --------------------------------------------------------------------------------


def _float_literal(name: str, bits: int) -> str | None:
    """A decimal that Triton turns into exactly `bits` in format `name`, or None: the
    shortest that does, else the exact double. (Through `ir.floats`, not NumPy: a compile
    that needs nothing else of NumPy does not import it.)"""
    if name not in ("f16", "f32", "tf32", "f64"):
        return None
    if name == "tf32":  # held as an f32 by Triton: the literal is rounded to f32
        name, bits = "f32", bits << 13
    value = floats.bits_to_float(bits, name)
    if not math.isfinite(value) or (value == 0 and math.copysign(1.0, value) < 0):
        return None

    def exact(text: str) -> bool:
        # Triton's interpreter rounds the Python float (a double) to the format directly; its
        # compiler passes f16 through a C++ float first. Both roundings must land on our bits.
        d = float(text)
        if floats.float_to_bits(d, name) != bits:
            return False
        via_f32 = floats.bits_to_float(floats.float_to_bits(d, "f32"), "f32")
        return name == "f64" or floats.float_to_bits(via_f32, name) == bits

    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        if floats.float_to_bits(float(text), name) == bits:
            break
    if not any(c in text for c in ".en"):
        text += ".0"  # a float literal, not an int
    for candidate in (text, repr(value)):
        if exact(candidate):
            return candidate
    return None


def _scalar_splat(t: Type, value: int, shape: tuple[int, ...]) -> str:
    """`tl.full` of one element given as DenseElementsAttr stores it (signed value or bits)."""
    el = tltypes.element_of(t)
    st = _shape_text(shape)
    if isinstance(el, IntegerType):
        if el.width == 1:
            return f"tl.full({st}, {value & 1}, tl.int1)"
        if el.width == 4:
            return f"tl.full({st}, {((value & 0xF) ^ 8) - 8}, tl.int8)"  # held sign-extended
        return f"tl.full({st}, {value}, {tltypes.dtype(el)})"
    assert isinstance(el, FloatType)
    if tltypes.is_bits_float(el):
        return f"tl.full({st}, {value & (0xF if tltypes.is_nibble(el) else 0xFF)}, tl.uint8)"
    literal = _float_literal(el.name, value)
    dt = tltypes.dtype(el)
    if literal is not None:
        return f"tl.full({st}, {literal}, {dt})"
    width = _bit_width(el)
    bits = value << 13 if el.name == "tf32" else value
    signed = bits - (1 << width) if bits >> (width - 1) else bits
    return f"tl.full({st}, {signed}, {_SIGNED_OF_WIDTH[width]}).to({dt}, bitcast=True)"


def flat_index(e: OpEmit, shape: tuple[int, ...], hint: str = "index") -> str:
    """A name holding the row-major flat index (int32) of each element of a tile of `shape`."""
    rank = len(shape)
    terms = []
    stride = 1
    for d in reversed(range(rank)):
        sl = "" if rank == 1 else "[" + ", ".join(":" if j == d else "None" for j in range(rank)) + "]"
        term = f"tl.arange(0, {shape[d]}){sl}"
        terms.append(term if stride == 1 else f"{term} * {stride}")
        stride *= shape[d]
    name = _name(e, hint)
    e.line(f"{name} = {' + '.join(reversed(terms))}")
    return name


def _affine(values: list[int], width: int) -> tuple[int, int] | None:
    """(start, step) when values[i] = start + step * i modulo 2**width (signed values)."""
    if len(values) < 2:
        return None
    mask = (1 << width) - 1
    start = values[0]
    step = (values[1] - values[0]) & mask
    if all((v - start - step * i) & mask == 0 for i, v in enumerate(values)):
        step = step - (1 << width) if step >> (width - 1) else step
        return start, step
    return None


@emitter("constant")
def _constant(e: OpEmit) -> None:
    attr = e.attr("value")
    t = e.result_types[0]
    shape = e.shape(t)
    values = list(attr.values)  # type: ignore[union-attr]
    el = tltypes.element_of(t)
    if isinstance(el, IntegerType) and el.width not in (1, 4, 8, 16, 32, 64):
        raise e.error(f"{el} tiles have no representation in Triton")
    if attr.splat or len(set(values)) == 1:  # type: ignore[union-attr]
        e.assign(_scalar_splat(t, values[0], shape))
        return
    n = math.prod(shape)
    assert len(values) == n, "the verifier checks the element count"
    dt = e.dtype(t)
    if isinstance(el, IntegerType) and el.width > 4:  # (i4 would wrap at 8 bits)
        affine = _affine(values, el.width)
        if affine is not None:
            start, step = affine
            index = flat_index(e, shape)
            # In int64 so that the product cannot wrap before the final truncation.
            expr = f"{index}.to(tl.int64)"
            if step != 1:
                expr = f"{expr} * {step}"
            if start:
                # (2**63 would be a uint64 literal to Triton: keep MIN as an addend)
                expr = f"{expr} - {-start}" if -(1 << 62) <= start < 0 else f"{expr} + {start}"
            if dt != "tl.int64":
                expr = f"({expr}).to({dt})" if " " in expr else f"{expr}.to({dt})"
            e.assign(expr)
            return
    if n <= _SELECT_CHAIN_MAX:
        index = flat_index(e, shape)
        common = Counter(values).most_common(1)[0][0]
        acc = _name(e, "acc")
        e.line(f"{acc} = {_scalar_splat(t, common, shape)}")
        for k, v in enumerate(values):
            if v != common:
                e.line(f"{acc} = tl.where({index} == {k}, {_scalar_splat(t, v, ())}, {acc})")
        e.alias(acc)
        return
    # A read-only table of the exact bytes.
    import numpy as np

    from ..interp import dtypes as idtypes

    if tltypes.is_nibble(el):
        # One byte each, as held: i4 sign-extended, f4E2M1FN its code.
        codes = np.array([v & 0xF for v in values], dtype=np.uint8)
        integer = isinstance(el, IntegerType)
        data = (((codes ^ 8).astype(np.int8) - 8) if integer else codes).tobytes()
        signature = "*i8" if integer else "*u8"
    else:
        arr = idtypes.array_from_bits(values, el, shape)
        if isinstance(el, IntegerType) and el.width == 1:
            data = arr.astype(np.uint8).tobytes()
        else:
            data = np.ascontiguousarray(arr).tobytes()
        signature = tltypes.memory_signature(t)
    digest = hashlib.sha256(signature.encode() + data).hexdigest()[:16]
    buf = e.cg.buffer(f"constant:{signature}:{digest}", signature, data, True, "constant_table")
    index = flat_index(e, shape)
    if isinstance(el, IntegerType) and el.width == 1:
        e.assign(f"tl.load({buf} + {index}) != 0")
    else:
        e.assign(f"tl.load({buf} + {index})")


# -- iota, select ----------------------------------------------------------------------------


@emitter("iota")
def _iota(e: OpEmit) -> None:
    t = e.result_types[0]
    (n,) = e.shape(t)
    dt = e.dtype(t)
    r = f"tl.arange(0, {n})"
    if dt == "tl.int1":
        e.assign(f"({r} & 1) != 0")
    elif dt == "tl.int32":
        e.assign(r)
    else:
        e.assign(f"{r}.to({dt})")


@emitter("select")
def _select(e: OpEmit) -> None:
    c, a, b = e.operands
    e.assign(f"tl.where({c}, {a}, {b})")


# -- reinterpretation ------------------------------------------------------------------------


@emitter("bitcast")
def _bitcast(e: OpEmit) -> None:
    (x,) = e.operands
    src_t, dst_t = e.operand_types[0], e.result_types[0]
    src, dst = e.dtype(src_t), e.dtype(dst_t)
    if _bit_width(src_t) != _bit_width(dst_t):
        raise e.error(f"cannot reinterpret {src_t} as {dst_t} (different widths)")
    if src == dst:
        e.alias(x)
    else:
        e.assign(f"{x}.to({dst}, bitcast=True)")


# Bit 62 of a pointer to 4-bit elements marks the upper nibble of its byte (the interpreter's
# pointers, compiler/interp/memory.py); the lowering holds them as nibble addresses (tltypes).
_NIBBLE_TAG = 1 << 62


def _from_nibble_address(n: str) -> str:
    return f"(({n} >> 1) | (({n} & 1) << 62))"


def _to_nibble_address(a: str) -> str:
    return f"(({a} & {_NIBBLE_TAG - 1:#x}) * 2 + (({a} >> 62) & 1))"


@emitter("int_to_ptr", "ptr_to_ptr")
def _to_pointer(e: OpEmit) -> None:
    (x,) = e.operands
    src_t, dst_t = e.operand_types[0], e.result_types[0]
    src, dst = e.dtype(src_t), e.dtype(dst_t)
    from_nibbles, to_nibbles = tltypes.is_nibble_pointer(src_t), tltypes.is_nibble_pointer(dst_t)
    if from_nibbles == to_nibbles and src == dst:
        e.alias(x)
    elif to_nibbles:
        e.assign(_to_nibble_address(x if src == "tl.int64" else f"{x}.to(tl.int64)"))
    elif from_nibbles:
        e.assign(f"{_from_nibble_address(x)}.to({dst})")
    else:
        e.assign(f"{x}.to({dst})")


@emitter("ptr_to_int")
def _ptr_to_int(e: OpEmit) -> None:
    (x,) = e.operands
    t = e.operand_types[0]
    assert isinstance(tltypes.element_of(t), PointerType)
    e.assign(_from_nibble_address(x) if tltypes.is_nibble_pointer(t) else f"{x}.to(tl.int64)")


# -- width changes ---------------------------------------------------------------------------


@emitter("exti")
def _exti(e: OpEmit) -> None:
    (x,) = e.operands
    src_t, dst_t = e.operand_types[0], e.result_types[0]
    dt = e.dtype(dst_t)
    w = tltypes.int_width(src_t)
    signed = e.keyword("signedness") == "signed"
    if w == 4:  # held sign-extended in an int8
        e.assign(f"{x}.to({dt})" if signed else f"{_nibble_code(x, src_t)}.to({dt})")
    elif w == 1:
        # Triton's cast of an int1 zero-extends: 0 / 1; signed, true is -1.
        e.assign(f"-({x}.to({dt}))" if signed else f"{x}.to({dt})")
    elif signed:
        e.assign(f"{x}.to({dt})")
    else:
        e.assign(f"{x}.to({tltypes.unsigned_dtype(src_t)}, bitcast=True).to({dt})")


@emitter("trunci")
def _trunci(e: OpEmit) -> None:
    (x,) = e.operands
    dst_t = e.result_types[0]
    if tltypes.int_width(dst_t) == 1:
        e.assign(f"({x} & 1) != 0")
    elif tltypes.int_width(dst_t) == 4:
        e.assign(_sign_extended_nibble(f"{x}.to(tl.int8)"))
    else:
        e.assign(f"{x}.to({e.dtype(dst_t)})")


# -- pack / unpack ---------------------------------------------------------------------------


def _merge_pairs(e: OpEmit, x: str, groups: int, count: int, bits: int, udt: str) -> str:
    """`x` (a rank-1 tensor of `udt` values, each `bits` wide, groups * count of them) with every
    run of `count` consecutive elements merged into one value, the first in the lowest bits.
    Returns a name of shape (groups,)."""
    levels = int(math.log2(count))
    t = _name(e, "parts")
    e.line(f"{t} = tl.reshape({x}, {_shape_text((groups,) + (2,) * levels)}, can_reorder=False)")
    for _ in range(levels):
        lo, hi = _name(e, "lo"), _name(e, "hi")
        e.line(f"{lo}, {hi} = tl.split({t})")
        e.line(f"{t} = {lo} | ({hi} << {bits})")
        bits *= 2
    return t


def _split_halves(e: OpEmit, x: str, n: int, bits: int, parts: int, narrow: bool) -> str:
    """`x` (rank-1, `n` uint values of `bits` bits) with each value split into `parts` pieces
    (lowest first) along a flattened axis: a name of shape (n * parts,). With `narrow`, each
    level converts to the uint of the halved width (sizes ≥ 8 bits)."""
    levels = int(math.log2(parts))
    t = x
    for _ in range(levels):
        half = bits // 2
        lo, hi = (f"{t}", f"({t} >> {half})")
        if narrow:
            udt = _UNSIGNED_OF_WIDTH[half]
            lo, hi = f"{lo}.to({udt})", f"{hi}.to({udt})"
        else:
            lo, hi = f"({lo} & {(1 << half) - 1})", hi
        name = _name(e, "halves")
        e.line(f"{name} = tl.join({lo}, {hi})")
        t = name
        bits = half
    out = _name(e, "pieces")
    e.line(f"{out} = tl.reshape({t}, ({n * parts},), can_reorder=False)")
    return out


@emitter("pack")
def _pack(e: OpEmit) -> None:
    (x,) = e.operands
    src_t = e.operand_types[0]
    (n,) = e.shape(src_t)
    (m,) = e.shape(e.result_types[0])
    w = _bit_width(src_t)
    if w == 4:
        assert n == 2 * m
        merged = _merge_pairs(e, _nibble_code(x, src_t), m, 2, 4, "tl.uint8")
        e.assign(f"{merged}.to(tl.int8, bitcast=True)")
        return
    if w == 1:
        assert n == 8 * m
        bits = _name(e, "bits")
        e.line(f"{bits} = {x}.to(tl.uint8)")
        merged = _merge_pairs(e, bits, m, 8, 1, "tl.uint8")
        e.assign(f"{merged}.to(tl.int8, bitcast=True)")
        return
    if w == 8:
        raise e.error("pack of 8-bit elements is not defined (the verifier rejects it)")
    k = w // 8
    assert n * k == m
    u = _name(e, "bits")
    e.line(f"{u} = {x}.to({_UNSIGNED_OF_WIDTH[w]}, bitcast=True)")
    pieces = _split_halves(e, u, n, w, k, narrow=True)
    e.assign(f"{pieces}.to(tl.int8, bitcast=True)")


@emitter("unpack")
def _unpack(e: OpEmit) -> None:
    (x,) = e.operands
    dst_t = e.result_types[0]
    (m,) = e.shape(e.operand_types[0])
    (n,) = e.shape(dst_t)
    w = _bit_width(dst_t)
    if w == 4:
        assert n == 2 * m
        pieces = _split_halves(e, f"{x}.to(tl.uint8, bitcast=True)", m, 8, 2, narrow=False)
        e.assign(pieces if tltypes.is_bits_float(dst_t) else _sign_extended_nibble(pieces))
        return
    if w == 1:
        assert n == 8 * m
        pieces = _split_halves(e, f"{x}.to(tl.uint8, bitcast=True)", m, 8, 8, narrow=False)
        e.assign(f"{pieces} != 0")
        return
    if w == 8:
        raise e.error("unpack to 8-bit elements is not defined (the verifier rejects it)")
    k = w // 8
    assert n * k == m
    udt = _UNSIGNED_OF_WIDTH[w]
    wide = _name(e, "bytes")
    e.line(f"{wide} = {x}.to(tl.uint8, bitcast=True).to({udt})")
    merged = _merge_pairs(e, wide, n, k, 8, udt)
    dt = e.dtype(dst_t)
    e.assign(merged if dt == udt else f"{merged}.to({dt}, bitcast=True)")
