"""constant, iota, select, bitcast, exti/trunci, the pointer casts, pack/unpack.

Expectations come from `struct`, hand-written bit patterns (the spec's nibble example)
and NumPy/ml_dtypes arrays built directly, never from the interpreter's helpers.
"""

from __future__ import annotations

import struct

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.interp import InterpError

from .util import eval_kernel, kernel


def run(body: str, **kw) -> dict[str, np.ndarray]:
    return eval_kernel(kernel(body), **kw)


def as_signed(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


# -- constant ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "dtype", "expected"),
    [
        ("<i1: [true, false]> : tile<2xi1>", np.bool_, [True, False]),
        ("<i8: [-128, 127, 255, 1]> : tile<4xi8>", np.int8, [-128, 127, -1, 1]),
        ("<i16: [[1, -2], [3, -4]]> : tile<2x2xi16>", np.int16, [[1, -2], [3, -4]]),
        ("<i32: 2147483648> : tile<i32>", np.int32, -(1 << 31)),
        ("<i64: [-9223372036854775808, 9223372036854775807]> : tile<2xi64>", np.int64, [-(1 << 63), (1 << 63) - 1]),
        ("<f16: [1.5, -2.0]> : tile<2xf16>", np.float16, [1.5, -2.0]),
        ("<bf16: 5.5> : tile<2xbf16>", ml_dtypes.bfloat16, [5.5, 5.5]),
        ("<f32: [[1.0, 2.0], [4.0, 5.0]]> : tile<2x2xf32>", np.float32, [[1.0, 2.0], [4.0, 5.0]]),
        ("<f64: 2.718> : tile<f64>", np.float64, 2.718),
        ("<f8E4M3FN: [448.0, -0.5]> : tile<2xf8E4M3FN>", ml_dtypes.float8_e4m3fn, [448.0, -0.5]),
        ("<f8E5M2: [57344.0, 0.25]> : tile<2xf8E5M2>", ml_dtypes.float8_e5m2, [57344.0, 0.25]),
        ("<f4E2M1FN: [[1.0, 2.0], [4.0, 6.0]]> : tile<2x2xf4E2M1FN>", ml_dtypes.float4_e2m1fn, [[1, 2], [4, 6]]),
        ("<tf32: 1.5> : tile<2xtf32>", np.float32, [1.5, 1.5]),
    ],
)
def test_constant(text: str, dtype: type, expected) -> None:
    c = run(f"%c = constant {text}")["c"]
    want = np.array(expected, dtype=dtype)
    assert c.dtype == np.dtype(dtype)
    assert c.shape == (1, *want.shape)  # uniform: a group axis of length 1
    assert np.array_equal(c[0].astype(np.float64), want.astype(np.float64))


def test_constant_nan_bits() -> None:
    out = run("""
        %c = constant <f32: 0x7FC00001> : tile<f32>
        %i = bitcast %c : tile<f32> -> tile<i32>
    """)
    assert out["i"].tolist() == [0x7FC00001]


# -- iota ----------------------------------------------------------------------------------------


def test_iota() -> None:
    out = run("""
        %a = iota : tile<8xi32>
        %b = iota : tile<256xi8>
        %c = iota : tile<2xi1>
        %d = iota : tile<4xi64>
    """)
    assert out["a"].tolist() == [list(range(8))]
    assert out["a"].dtype == np.int32
    # Unsigned values: 128..255 are held with the bit patterns of -128..-1.
    assert out["b"].tolist() == [[as_signed(i, 8) for i in range(256)]]
    assert out["c"].tolist() == [[False, True]]
    assert out["d"].dtype == np.int64 and out["d"].tolist() == [[0, 1, 2, 3]]


# -- select --------------------------------------------------------------------------------------


def test_select() -> None:
    out = run("""
        %c = constant <i1: [true, false, false, true]> : tile<4xi1>
        %x = constant <f32: [1.0, 2.0, 3.0, 4.0]> : tile<4xf32>
        %y = constant <f32: [-1.0, -2.0, -3.0, -4.0]> : tile<4xf32>
        %s = select %c, %x, %y : tile<4xi1>, tile<4xf32>
        %i = constant <i8: [1, 2, 3, 4]> : tile<4xi8>
        %j = constant <i8: [-1, -2, -3, -4]> : tile<4xi8>
        %t = select %c, %i, %j : tile<4xi1>, tile<4xi8>
        %h = constant <bf16: [0.5, 0.5, 0.5, 0.5]> : tile<4xbf16>
        %k = constant <bf16: [8.0, 8.0, 8.0, 8.0]> : tile<4xbf16>
        %u = select %c, %h, %k : tile<4xi1>, tile<4xbf16>
    """)
    assert out["s"].dtype == np.float32 and out["s"].tolist() == [[1.0, -2.0, -3.0, 4.0]]
    assert out["t"].dtype == np.int8 and out["t"].tolist() == [[1, -2, -3, 4]]
    assert out["u"].dtype == ml_dtypes.bfloat16 and out["u"].astype(np.float32).tolist() == [[0.5, 8.0, 8.0, 0.5]]


def test_select_per_block() -> None:
    # The condition differs between the blocks of the group.
    out = run(
        """
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %one = constant <i32: 1> : tile<i32>
        %odd = andi %bx, %one : tile<i32>
        %c = cmpi equal %odd, %one, signed : tile<i32> -> tile<i1>
        %x = constant <i64: 100> : tile<i64>
        %y = constant <i64: -100> : tile<i64>
        %s = select %c, %x, %y : tile<i1>, tile<i64>
        """,
        grid_positions=[0, 1, 2, 3, 5],
    )
    assert out["s"].tolist() == [-100, 100, -100, 100, 100]


# -- bitcast and pointer casts -------------------------------------------------------------------


def test_bitcast_float_int() -> None:
    out = run("""
        %f = constant <f32: [1.0, -2.5, 0.0, -0.0]> : tile<4xf32>
        %i = bitcast %f : tile<4xf32> -> tile<4xi32>
        %g = bitcast %i : tile<4xi32> -> tile<4xf32>
        %h = constant <f16: [1.0, -65504.0]> : tile<2xf16>
        %j = bitcast %h : tile<2xf16> -> tile<2xi16>
        %b = bitcast %h : tile<2xf16> -> tile<2xbf16>
        %d = constant <i64: 4607182418800017408> : tile<i64>
        %e = bitcast %d : tile<i64> -> tile<f64>
        %p = constant <i8: [56, -1, 127, 0]> : tile<4xi8>
        %q = bitcast %p : tile<4xi8> -> tile<4xf8E4M3FN>
    """)
    want = [struct.unpack("<i", struct.pack("<f", v))[0] for v in (1.0, -2.5, 0.0, -0.0)]
    assert out["i"].tolist() == [want]
    assert out["g"].view(np.uint32).tolist() == out["f"].view(np.uint32).tolist()
    assert out["j"].tolist() == [[struct.unpack("<h", struct.pack("<e", v))[0] for v in (1.0, -65504.0)]]
    # f16 1.0 is 0x3C00; as bf16 that is 2**-7 * 1.0 = 0.0078125.
    assert out["b"].astype(np.float64)[0, 0] == 0.0078125
    assert out["e"].tolist() == [1.0]
    # e4m3: 0x38 = 1.0; 0xFF and 0x7F are NaN; 0 is 0.
    q = out["q"].astype(np.float64)[0]
    assert q[0] == 1.0 and np.isnan(q[1]) and np.isnan(q[2]) and q[3] == 0.0


def test_pointer_casts() -> None:
    out = run("""
        %a = constant <i64: [4096, 8192]> : tile<2xi64>
        %p = int_to_ptr %a : tile<2xi64> -> tile<2xptr<f32>>
        %q = ptr_to_ptr %p : tile<2xptr<f32>> -> tile<2xptr<i8>>
        %c = constant <i1: [false, true]> : tile<2xi1>
        %s = select %c, %q, %q : tile<2xi1>, tile<2xptr<i8>>
        %i = ptr_to_int %s : tile<2xptr<i8>> -> tile<2xi64>
    """)
    assert out["i"].dtype == np.int64 and out["i"].tolist() == [[4096, 8192]]


# -- exti / trunci -------------------------------------------------------------------------------


def test_exti_from_i1() -> None:
    out = run("""
        %b = constant <i1: [false, true]> : tile<2xi1>
        %s = exti %b signed : tile<2xi1> -> tile<2xi32>
        %u = exti %b unsigned : tile<2xi1> -> tile<2xi64>
    """)
    assert out["s"].tolist() == [[0, -1]] and out["s"].dtype == np.int32
    assert out["u"].tolist() == [[0, 1]] and out["u"].dtype == np.int64


def test_trunci_exti_i4_round_trip() -> None:
    out = run("""
        %a = constant <i16: [42, -1, 7, 8]> : tile<4xi16>
        %t = trunci %a : tile<4xi16> -> tile<4xi4>
        %s = exti %t signed : tile<4xi4> -> tile<4xi8>
        %u = exti %t unsigned : tile<4xi4> -> tile<4xi16>
        %w = exti %t signed : tile<4xi4> -> tile<4xi32>
        %b = trunci %t : tile<4xi4> -> tile<4xi1>
    """)
    nibbles = [v & 0xF for v in (42, -1, 7, 8)]  # 10, 15, 7, 8
    assert out["s"].tolist() == [[as_signed(n, 4) for n in nibbles]]
    assert out["u"].tolist() == [nibbles]
    assert out["w"].tolist() == [[as_signed(n, 4) for n in nibbles]]
    assert out["b"].tolist() == [[bool(n & 1) for n in nibbles]]


WIDTHS = [1, 8, 16, 32, 64]
PAIRS = [(a, b) for a in WIDTHS for b in WIDTHS if a < b]


@settings(max_examples=30)
@given(st.sampled_from(PAIRS), st.lists(st.integers(0, (1 << 64) - 1), min_size=4, max_size=4))
def test_exti_trunci_round_trips(pair: tuple[int, int], raw: list[int]) -> None:
    narrow, wide = pair
    values = [v & ((1 << wide) - 1) for v in raw]
    lit = ", ".join(str(as_signed(v, wide)) for v in values)
    out = run(f"""
        %a = constant <i{wide}: [{lit}]> : tile<4xi{wide}>
        %t = trunci %a : tile<4xi{wide}> -> tile<4xi{narrow}>
        %s = exti %t signed : tile<4xi{narrow}> -> tile<4xi{wide}>
        %u = exti %t unsigned : tile<4xi{narrow}> -> tile<4xi{wide}>
    """)
    low = [v & ((1 << narrow) - 1) for v in values]
    t = out["t"][0].tolist()
    if narrow == 1:
        assert t == [bool(v) for v in low]
    else:
        assert t == [as_signed(v, narrow) for v in low]
    assert out["s"][0].tolist() == [as_signed(as_signed(v, narrow), wide) for v in low]
    assert out["u"][0].tolist() == [as_signed(v, wide) for v in low]


@pytest.mark.parametrize(
    ("flag", "value", "src", "dst", "broken"),
    [
        ("no_signed_wrap", 127, 16, 8, None),
        ("no_signed_wrap", 128, 16, 8, "signed"),
        ("no_signed_wrap", -128, 16, 8, None),
        ("no_signed_wrap", -129, 16, 8, "signed"),
        ("no_unsigned_wrap", 255, 16, 8, None),
        ("no_unsigned_wrap", 256, 16, 8, "unsigned"),
        ("no_unsigned_wrap", -1, 16, 8, "unsigned"),
        ("no_wrap", 128, 32, 8, "signed"),
        ("no_wrap", -1, 64, 32, "unsigned"),
        ("no_wrap", 5, 64, 32, None),
        ("no_signed_wrap", -1, 32, 1, None),  # all ones: sign-extends back
        ("no_signed_wrap", 1, 32, 1, "signed"),
        ("no_unsigned_wrap", 1, 32, 1, None),
        ("no_wrap", 7, 16, 4, None),
        ("no_wrap", 8, 16, 4, "signed"),
    ],
)
def test_trunci_overflow_flags(flag: str, value: int, src: int, dst: int, broken: str | None) -> None:
    text = f"""
        %a = constant <i{src}: {value}> : tile<i{src}>
        %t = trunci %a overflow<{flag}> : tile<i{src}> -> tile<i{dst}>
    """
    if broken is None:
        run(text)
        return
    with pytest.raises(InterpError) as e:
        run(text)
    assert str(e.value) == (
        f"<test>:4:5: error: trunci: {broken} wrap-around despite overflow<{flag}> (tile block (0, 0, 0))"
    )


# -- pack / unpack -------------------------------------------------------------------------------


def test_pack_f4_nibble_order() -> None:
    # The spec's example: [0.5, 1.5] is the byte 0b0011_0001 (element 0 in bits 3..0).
    out = run("""
        %f = constant <f4E2M1FN: [0.5, 1.5, -6.0, 0.0]> : tile<4xf4E2M1FN>
        %p = pack %f : tile<4xf4E2M1FN> -> tile<2xi8>
        %u = unpack %p : tile<2xi8> -> tile<4xf4E2M1FN>
    """)
    assert out["p"].view(np.uint8).tolist() == [[0x31, 0x0F]]  # -6.0 is 0b1111
    assert out["u"].astype(np.float32).tolist() == [[0.5, 1.5, -6.0, 0.0]]


def test_pack_i4_nibble_order() -> None:
    out = run("""
        %a = constant <i8: [1, -2, 7, -8]> : tile<4xi8>
        %t = trunci %a : tile<4xi8> -> tile<4xi4>
        %p = pack %t : tile<4xi4> -> tile<2xi8>
        %u = unpack %p : tile<2xi8> -> tile<4xi4>
        %e = exti %u signed : tile<4xi4> -> tile<4xi16>
    """)
    assert out["p"].view(np.uint8).tolist() == [[0xE1, 0x87]]
    assert out["e"].tolist() == [[1, -2, 7, -8]]


def test_pack_i1_bits() -> None:
    out = run("""
        %b = constant <i1: [true, false, false, false, false, false, true, true]> : tile<8xi1>
        %p = pack %b : tile<8xi1> -> tile<1xi8>
        %u = unpack %p : tile<1xi8> -> tile<8xi1>
    """)
    assert out["p"].view(np.uint8).tolist() == [[0b1100_0001]]
    assert out["u"].tolist() == out["b"].tolist()


def test_pack_wide_types_little_endian() -> None:
    out = run("""
        %h = constant <f16: [1.0, -2.0]> : tile<2xf16>
        %p = pack %h : tile<2xf16> -> tile<4xi8>
        %i = constant <i32: [305419896, -1]> : tile<2xi32>
        %q = pack %i : tile<2xi32> -> tile<8xi8>
        %d = constant <f64: 1.0> : tile<1xf64>
        %r = pack %d : tile<1xf64> -> tile<8xi8>
        %u = unpack %q : tile<8xi8> -> tile<2xi32>
        %v = unpack %p : tile<4xi8> -> tile<2xbf16>
    """)
    assert bytes(out["p"].view(np.uint8)[0].tolist()) == struct.pack("<ee", 1.0, -2.0)
    assert bytes(out["q"].view(np.uint8)[0].tolist()) == struct.pack("<ii", 0x12345678, -1)
    assert bytes(out["r"].view(np.uint8)[0].tolist()) == struct.pack("<d", 1.0)
    assert out["u"].tolist() == [[0x12345678, -1]]
    assert out["v"].dtype == ml_dtypes.bfloat16


def test_pack_per_block() -> None:
    # A group of blocks with different values packs block by block.
    out = run(
        """
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %r = reshape %bx : tile<i32> -> tile<1xi32>
        %b = broadcast %r : tile<1xi32> -> tile<2xi32>
        %t = trunci %b : tile<2xi32> -> tile<2xi16>
        %p = pack %t : tile<2xi16> -> tile<4xi8>
        """,
        grid_positions=[1, 258],
    )
    assert out["p"].view(np.uint8).tolist() == [[1, 0, 1, 0], [2, 1, 2, 1]]


@settings(max_examples=20)
@given(
    st.sampled_from(["i16", "i32", "i64", "f16", "bf16", "f32", "f64", "i4", "f4E2M1FN", "i1"]),
    st.lists(st.integers(-128, 127), min_size=8, max_size=8),
)
def test_unpack_pack_round_trip(element: str, raw: list[int]) -> None:
    # Any bytes unpack and pack back unchanged (every pattern of these types is kept).
    bits = {"i4": 4, "f4E2M1FN": 4, "i1": 1, "bf16": 16}.get(element) or int(element[1:])
    count = 64 // bits
    out = run(f"""
        %b = constant <i8: [{", ".join(map(str, raw))}]> : tile<8xi8>
        %u = unpack %b : tile<8xi8> -> tile<{count}x{element}>
        %p = pack %u : tile<{count}x{element}> -> tile<8xi8>
    """)
    assert out["p"].tolist() == [raw]
