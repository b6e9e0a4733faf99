"""compiler.ir.floats: exact encoding, decoding, MLIR-identical printing, literal parsing."""

from __future__ import annotations

import math
import struct

import pytest

from compiler.ir import floats
from compiler.ir.floats import (
    DECIMAL_INT_FOR_FLOAT,
    bits_to_float,
    canonical_nan,
    float_to_bits,
    format_float,
    integer_in_range,
    parse_float_literal,
    parse_float_token,
    parse_integer_literal,
    wrap_signed,
    wrap_unsigned,
)
from compiler.ir.types import FLOAT_FORMATS

try:
    from hypothesis import given
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    given = None  # type: ignore[assignment]

SMALL_FORMATS = ["f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN"]


def _all_bits(fmt: str) -> range:
    return range(1 << FLOAT_FORMATS[fmt].width)


# ---- known values -----------------------------------------------------------------

KNOWN = [
    (1.0, "f32", 0x3F800000),
    (-2.0, "f32", 0xC0000000),
    (1.0, "f16", 0x3C00),
    (65504.0, "f16", 0x7BFF),
    (1.0, "bf16", 0x3F80),
    (1.0, "f64", 0x3FF0000000000000),
    (1.0, "tf32", 0x1FC00),
    (-1.5, "tf32", 0x5FE00),
    (448.0, "f8E4M3FN", 0x7E),
    (-448.0, "f8E4M3FN", 0xFE),
    (2.0**-9, "f8E4M3FN", 0x01),
    (57344.0, "f8E5M2", 0x7B),
    (2.0**-16, "f8E5M2", 0x01),
    (1.0, "f8E8M0FNU", 0x7F),
    (2.0, "f8E8M0FNU", 0x80),
    (2.0**127, "f8E8M0FNU", 0xFE),
    (2.0**-127, "f8E8M0FNU", 0x00),
    (6.0, "f4E2M1FN", 0x7),
    (-6.0, "f4E2M1FN", 0xF),
    (0.5, "f4E2M1FN", 0x1),
    (1.0, "f4E2M1FN", 0x2),
    (2.0, "f4E2M1FN", 0x4),
    (0.0, "f32", 0x0),
    (-0.0, "f32", 0x80000000),
    (-0.0, "f16", 0x8000),
    (-0.0, "f4E2M1FN", 0x8),
]


@pytest.mark.parametrize(("value", "fmt", "bits"), KNOWN)
def test_known_values(value: float, fmt: str, bits: int) -> None:
    assert float_to_bits(value, fmt) == bits
    assert bits_to_float(bits, fmt) == value
    assert math.copysign(1.0, bits_to_float(bits, fmt)) == math.copysign(1.0, value)


@pytest.mark.parametrize(
    ("fmt", "bits"),
    [
        ("f32", 0x7FC00000),
        ("f16", 0x7E00),
        ("bf16", 0x7FC0),
        ("f64", 0x7FF8000000000000),
        ("tf32", 0x3FE00),
        ("f8E4M3FN", 0x7F),
        ("f8E5M2", 0x7E),
        ("f8E8M0FNU", 0xFF),
    ],
)
def test_nan_is_canonical_quiet_nan(fmt: str, bits: int) -> None:
    assert float_to_bits(math.nan, fmt) == bits
    assert float_to_bits(-math.nan, fmt) == bits
    assert canonical_nan(fmt) == bits
    assert math.isnan(bits_to_float(bits, fmt))
    assert floats.is_nan(bits, fmt)


@pytest.mark.parametrize(
    ("value", "fmt", "bits"),
    [
        (math.inf, "f16", 0x7C00),
        (-math.inf, "f16", 0xFC00),
        (math.inf, "f32", 0x7F800000),
        (math.inf, "tf32", 0x3FC00),
        (math.inf, "f8E5M2", 0x7C),
        # no infinity: NaN (sign kept where there is one), or saturation in f4E2M1FN
        (math.inf, "f8E4M3FN", 0x7F),
        (-math.inf, "f8E4M3FN", 0xFF),
        (math.inf, "f8E8M0FNU", 0xFF),
        (math.inf, "f4E2M1FN", 0x7),
        (-math.inf, "f4E2M1FN", 0xF),
    ],
)
def test_infinities(value: float, fmt: str, bits: int) -> None:
    assert float_to_bits(value, fmt) == bits


def test_str_input_reads_like_mlir() -> None:
    assert float_to_bits("1.5", "f32") == 0x3FC00000
    assert float_to_bits("-2.0e-3", "f64") == struct.unpack("<Q", struct.pack("<d", -2.0e-3))[0]
    assert float_to_bits("70000.0", "f16") == 0x7C00
    # ints convert exactly, with a single rounding
    assert float_to_bits(2**24 + 1, "f32") == 0x4B800000
    assert float_to_bits(2**53 + 1, "f64") == 0x4340000000000000
    assert float_to_bits(10**400, "f32") == 0x7F800000
    assert float_to_bits(-(10**400), "f64") == 0xFFF0000000000000
    assert float_to_bits(0, "f16") == 0 and float_to_bits(True, "f16") == 0x3C00
    assert float_to_bits(-3, "f8E8M0FNU") == 0xFF
    with pytest.raises(ValueError):
        float_to_bits("0x7C00", "f16")
    with pytest.raises(ValueError):
        float_to_bits("inf", "f16")
    with pytest.raises(ValueError):
        float_to_bits(1.0, "f7")


# ---- rounding ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fmt", "bits"),
    [
        # ties to even between normals
        (1 + 2.0**-11, "f16", 0x3C00),
        (1 + 3 * 2.0**-11, "f16", 0x3C02),
        (1 + 2.0**-8, "bf16", 0x3F80),
        (1 + 3 * 2.0**-8, "bf16", 0x3F82),
        (1 + 2.0**-11, "tf32", 0x1FC00),
        (1 + 3 * 2.0**-11, "tf32", 0x1FC02),
        (1 + 2.0**-24, "f32", 0x3F800000),
        (1 + 3 * 2.0**-24, "f32", 0x3F800002),
        # subnormals, exact and rounded
        (2.0**-24, "f16", 0x0001),
        (2.0**-25, "f16", 0x0000),  # tie with 0 -> even (0)
        (1.5 * 2.0**-25, "f16", 0x0001),
        (3 * 2.0**-25, "f16", 0x0002),  # tie between 1 and 2 ulps -> 2
        (-(2.0**-26), "f16", 0x8000),  # underflow keeps the sign
        (2.0**-14 - 2.0**-25, "f16", 0x0400),  # rounds up into the smallest normal
        (2.0**-149, "f32", 0x00000001),
        (2.0**-150, "f32", 0x00000000),
        # overflow thresholds
        (65519.99, "f16", 0x7BFF),
        (65520.0, "f16", 0x7C00),  # the tie goes to the even one: infinity
        (61439.0, "f8E5M2", 0x7B),
        (61440.0, "f8E5M2", 0x7C),
        (464.0, "f8E4M3FN", 0x7E),  # tie between 448 and 480: 448 (480 is NaN)
        (465.0, "f8E4M3FN", 0x7F),
        (-1000.0, "f8E4M3FN", 0xFF),
        (7.0, "f4E2M1FN", 0x7),  # no inf, no NaN: saturate
        (1e30, "f4E2M1FN", 0x7),
        (-100.0, "f4E2M1FN", 0xF),
        (5.0, "f4E2M1FN", 0x6),  # tie between 4 (even) and 6
        (0.25, "f4E2M1FN", 0x0),  # tie between 0 and 0.5
        (0.75, "f4E2M1FN", 0x2),  # tie between 0.5 (odd) and 1.0
        (1.25, "f4E2M1FN", 0x2),
        (1.75, "f4E2M1FN", 0x4),
        # f8E8M0FNU: powers of two only; ties go up (the lone significand bit is odd)
        (1.5, "f8E8M0FNU", 0x80),
        (1.4, "f8E8M0FNU", 0x7F),
        (0.75, "f8E8M0FNU", 0x7F),
        (3.0, "f8E8M0FNU", 0x81),
        (2.0**128, "f8E8M0FNU", 0xFF),
        (1.5 * 2.0**127, "f8E8M0FNU", 0xFF),
        (0.0, "f8E8M0FNU", 0x00),  # no zero: the smallest value, as APFloat does
        (-0.0, "f8E8M0FNU", 0x00),
        (2.0**-200, "f8E8M0FNU", 0x00),
        (-2.0, "f8E8M0FNU", 0xFF),  # no sign: NaN
    ],
)
def test_rounding(value: float, fmt: str, bits: int) -> None:
    assert float_to_bits(value, fmt) == bits


@pytest.mark.parametrize("fmt", SMALL_FORMATS)
def test_decode_encode_roundtrip_exhaustive(fmt: str) -> None:
    for bits in _all_bits(fmt):
        x = bits_to_float(bits, fmt)
        if math.isnan(x):
            assert floats.is_nan(bits, fmt)
            continue
        assert float_to_bits(x, fmt) == bits, hex(bits)


def test_tf32_roundtrip_exhaustive() -> None:
    for bits in range(1 << 19):
        x = bits_to_float(bits, "tf32")
        if x == x:
            assert float_to_bits(x, "tf32") == bits


def test_f64_is_bit_exact() -> None:
    for x in (0.1, -1e-310, 5e-324, 1.7976931348623157e308, -0.0, math.inf):
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
        assert float_to_bits(x, "f64") == bits
        assert bits_to_float(bits, "f64") == x or math.isnan(x)


def test_decoding_special_patterns() -> None:
    assert math.isnan(bits_to_float(0xFF, "f8E8M0FNU"))
    assert bits_to_float(0x00, "f8E8M0FNU") == 2.0**-127
    assert math.isnan(bits_to_float(0xFF, "f8E4M3FN"))
    assert bits_to_float(0x7E, "f8E4M3FN") == 448.0
    assert bits_to_float(0x78, "f8E4M3FN") == 256.0  # the top binade is finite
    assert bits_to_float(0x7C, "f8E5M2") == math.inf
    assert bits_to_float(0xF, "f4E2M1FN") == -6.0
    assert bits_to_float(0x3FC00, "tf32") == math.inf
    # high bits outside the format are ignored
    assert bits_to_float(0x13C00, "f16") == 1.0


# ---- printing ---------------------------------------------------------------------

# (literal as written in a conformance .mlir source line, format, the CHECK spelling)
CONFORMANCE_SPELLINGS = [
    ("1.5", "f32", "1.500000e+00"),
    ("1.5", "f16", "1.500000e+00"),
    ("5.5", "bf16", "5.500000e+00"),
    ("0x3C00", "f16", "1.000000e+00"),
    ("0x3F800000", "f32", "1.000000e+00"),
    ("0x3FF0000000000000", "f64", "1.000000e+00"),
    ("0x2", "f4E2M1FN", "1.000000e+00"),
    ("0x4", "f4E2M1FN", "2.000000e+00"),
    ("0x4000", "f16", "2.000000e+00"),
    ("0x40000000", "f32", "2.000000e+00"),
    ("0x4000000000000000", "f64", "2.000000e+00"),
    ("70000.0", "f16", "0x7C00"),
    ("-70000.0", "f16", "0xFC00"),
    ("1" + "0" * 40 + ".0", "f32", "0x7F800000"),
    ("-1" + "0" * 40 + ".0", "f32", "0xFF800000"),
    ("1" + "0" * 400 + ".0", "f64", "0x7FF0000000000000"),
    ("42.000000e+00", "f16", "4.200000e+01"),
    ("42.000000e+00", "bf16", "4.200000e+01"),
    ("42.000000e+00", "f32", "4.200000e+01"),
    ("42.000000e+00", "f64", "4.200000e+01"),
    ("2.5", "f16", "2.500000e+00"),
    ("-3.14159", "f16", "-3.140630e+00"),  # -3.140625, six digits rounded half up
    ("0.0", "f16", "0.000000e+00"),
    ("-0.0", "f32", "-0.000000e+00"),
    ("0.000000e+0", "f32", "0.000000e+00"),
    ("3.14159", "f32", "3.141590e+00"),
    ("3.14", "f32", "3.140000e+00"),
    ("0.1", "f32", "1.000000e-01"),
    ("0.2", "f32", "2.000000e-01"),
    ("0.3", "f32", "3.000000e-01"),
    ("0.4", "f32", "4.000000e-01"),
    ("2.718", "f64", "2.718000e+00"),
    ("2.718281828459045", "f64", "2.7182818284590451"),
    ("3.141592653589793", "f64", "3.1415926535897931"),
    ("-1.4142135623730951", "f64", "-1.4142135623730951"),
    ("0x7F800000", "f32", "0x7F800000"),
    ("0xFF800000", "f32", "0xFF800000"),
    ("0x7FC00000", "f32", "0x7FC00000"),
    ("0x00000000", "f32", "0.000000e+00"),
    ("0x7FF0000000000000", "f64", "0x7FF0000000000000"),
    ("1.0", "f8E4M3FN", "1.000000e+00"),
    ("2.0", "f8E5M2", "2.000000e+00"),
    ("2.0", "f8E8M0FNU", "2.000000e+00"),
    ("6.0", "f4E2M1FN", "6.000000e+00"),
    ("-1.0", "f32", "-1.000000e+00"),
]


@pytest.mark.parametrize(("literal", "fmt", "expected"), CONFORMANCE_SPELLINGS)
def test_conformance_spellings(literal: str, fmt: str, expected: str) -> None:
    bits, error = parse_float_token(literal, fmt)
    assert error is None
    assert bits is not None
    assert format_float(bits, fmt) == expected
    # and what we print reads back to the same bits
    assert parse_float_token(expected, fmt) == (bits, None)


@pytest.mark.parametrize(
    ("bits", "fmt", "expected"),
    [
        # six digits do not round-trip: APFloat's default toString (17 / 9 digits)
        (0x3DCCCCCE, "f32", "0.100000009"),
        (0x7F7FFFFF, "f32", "3.40282347E+38"),
        (0x3DE0F7BFE5DB09EB, "f64", "1.2345678900000001E-10"),
        (0x3FB999999999999A, "f64", "1.000000e-01"),
        # ... and an integer printed without a point falls back to hex bits
        (0x4B7FFFFF, "f32", "0x4B7FFFFF"),  # 16777215.0
        (0x4132D68700000000, "f64", "0x4132D68700000000"),  # 1234567.0
        (0xCB7FFFFF, "f32", "0xCB7FFFFF"),
        # subnormals and extremes (six significant digits, then zero padding)
        (0x0000000000000001, "f64", "4.940660e-324"),
        (0x0001, "f16", "5.960460e-08"),
        (0x00, "f8E8M0FNU", "5.877470e-39"),
        (0xFE, "f8E8M0FNU", "1.701410e+38"),
        # specials: hex, upper case, the format's own width, no zero padding
        (0xFF, "f8E8M0FNU", "0xFF"),
        (0x7F, "f8E4M3FN", "0x7F"),
        (0xFF, "f8E4M3FN", "0xFF"),
        (0x7C, "f8E5M2", "0x7C"),
        (0x7F80, "bf16", "0x7F80"),
        (0x3FC00, "tf32", "0x3FC00"),
        (0x7FC00001, "f32", "0x7FC00001"),  # NaN payloads are kept
        (0x8, "f4E2M1FN", "-0.000000e+00"),
    ],
)
def test_format_float_cases(bits: int, fmt: str, expected: str) -> None:
    assert format_float(bits, fmt) == expected


@pytest.mark.parametrize("fmt", SMALL_FORMATS)
def test_print_then_parse_roundtrip_exhaustive(fmt: str) -> None:
    """What we print, read back the way MLIR reads it, gives the same bits (NaNs too)."""
    for bits in _all_bits(fmt):
        text = format_float(bits, fmt)
        assert parse_float_token(text, fmt) == (bits, None), (hex(bits), text)


def test_apfloat_to_string_defaults() -> None:
    to_string = floats._apfloat_to_string
    # 765 * 10^3 style padding rules with the defaults (precision from the format)
    assert to_string(False, 1, 10, 24, 0, 3, True) == "1024"
    assert to_string(False, 1, 20, 24, 0, 3, True) == "1048576"
    assert to_string(False, 1, 40, 24, 0, 3, True) == "1.09951163E+12"
    assert to_string(False, 1, -1, 24, 0, 3, True) == "0.5"
    assert to_string(False, 1, -10, 24, 0, 3, True) == "9.765625E-4"
    assert to_string(True, 3, -1, 24, 6, 0, False) == "-1.500000e+00"
    assert to_string(False, 999999, 0, 53, 6, 0, False) == "9.999990e+05"
    # APFloat first *truncates* surplus digits off the integer, then rounds half up:
    # 9999995 loses its 5 before the rounding, so it does not carry to 1.000000e+07
    assert to_string(False, 9999995, 0, 53, 6, 0, False) == "9.999990e+06"
    assert to_string(False, 99999951, 0, 53, 6, 0, False) == "9.999990e+07"
    # below 2^20 nothing is truncated first, and the seventh digit rounds half up
    assert to_string(False, 1000005, 0, 53, 6, 0, False) == "1.000010e+06"
    assert to_string(False, 1048575, 0, 53, 6, 0, False) == "1.048580e+06"


# ---- parsing ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fmt", "error"),
    [
        ("2", "f32", DECIMAL_INT_FOR_FLOAT),
        ("-2147483647", "f32", DECIMAL_INT_FOR_FLOAT),
        ("-0x10", "f64", "hexadecimal float literal should not have a leading minus"),
        ("0x12345678", "f16", "hexadecimal float constant out of range for type"),
        ("0x7F800000", "tf32", "hexadecimal float constant out of range for type"),
        ("0x10", "f4E2M1FN", "hexadecimal float constant out of range for type"),
        ("inf", "f32", "expected floating point literal"),
        ("nan", "f32", "expected floating point literal"),
        ("true", "f32", "expected floating point literal"),
        ("1e10", "f32", "expected floating point literal"),
        ("+1.0", "f32", "expected floating point literal"),
        (".5", "f32", "expected floating point literal"),
        ("", "f32", "expected floating point literal"),
    ],
)
def test_parse_float_token_errors(text: str, fmt: str, error: str) -> None:
    assert parse_float_token(text, fmt) == (None, error)


def test_parse_float_token_values() -> None:
    assert parse_float_token("2.", "f32") == (0x40000000, None)
    assert parse_float_token("- 1.0", "f32") == (0xBF800000, None)
    assert parse_float_token("-0.0", "f16") == (0x8000, None)
    assert parse_float_token("0x7FF0000000000001", "f64") == (0x7FF0000000000001, None)
    assert parse_float_token("0xF", "f4E2M1FN") == (0xF, None)
    assert parse_float_token("0x7ffff", "tf32") == (0x7FFFF, None)
    assert parse_float_token("1.0e-400", "f64") == (0, None)  # underflow is not an error


def test_parse_float_literal_is_lenient() -> None:
    assert parse_float_literal("2", "f32") == 0x40000000
    assert parse_float_literal("1e10", "f64") == float_to_bits(1e10, "f64")
    assert parse_float_literal("+1.5", "f16") == 0x3E00
    assert parse_float_literal(".5", "bf16") == 0x3F00
    assert parse_float_literal("-2.0e-3", "f32") == float_to_bits(-2.0e-3, "f32")
    assert parse_float_literal("0x7C00", "f16") == 0x7C00
    assert parse_float_literal("0x12345678", "f16") is None
    assert parse_float_literal("-0x1", "f32") is None
    assert parse_float_literal("abc", "f32") is None
    assert parse_float_literal("inf", "f32") is None
    assert parse_float_literal("--1.0", "f32") is None
    assert parse_float_literal("1.0.0", "f32") is None


def test_integer_helpers() -> None:
    assert parse_integer_literal("0xFFFF") == 0xFFFF
    assert parse_integer_literal("-0x10") == -16
    assert parse_integer_literal("-12") == -12
    assert parse_integer_literal("true") == 1
    assert parse_integer_literal("false") == 0
    assert parse_integer_literal("1.0") is None
    assert parse_integer_literal("ABC") is None
    assert parse_integer_literal("0x") is None
    assert parse_integer_literal("007") == 7
    assert parse_integer_literal("-0x0010") == -16

    assert integer_in_range(0xFFFF, 16) and integer_in_range(-32768, 16)
    assert not integer_in_range(65536, 16) and not integer_in_range(-32769, 16)
    assert integer_in_range(255, 8) and integer_in_range(-128, 8)
    assert not integer_in_range(256, 8) and not integer_in_range(-129, 8)
    assert integer_in_range(-1, 1) and integer_in_range(1, 1) and not integer_in_range(2, 1)
    assert integer_in_range(2**64 - 1, 64) and not integer_in_range(2**64, 64)

    assert wrap_signed(0xFFFF, 16) == -1
    assert wrap_signed(0x12345678, 32) == 305419896
    assert wrap_signed(0x87654321, 32) == -2023406815
    assert wrap_signed(0xCDEF, 16) == -12817
    assert wrap_signed(0x123456789ABCDEF0, 64) == 1311768467463790320
    assert wrap_signed(1, 1) == -1
    assert wrap_signed(-1, 8) == -1
    assert wrap_unsigned(-1, 8) == 255


def test_import_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, compiler.ir.floats;"
        "bad = {'numpy', 'ml_dtypes', 'fractions', 'decimal'} & set(sys.modules);"
        "print(sorted(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- properties -------------------------------------------------------------------

if given is not None:

    @given(st.integers(0, 2**32 - 1))
    def test_f32_print_parse_roundtrip(bits: int) -> None:
        text = format_float(bits, "f32")
        assert parse_float_token(text, "f32") == (bits, None)

    @given(st.integers(0, 2**64 - 1))
    def test_f64_print_parse_roundtrip(bits: int) -> None:
        text = format_float(bits, "f64")
        assert parse_float_token(text, "f64") == (bits, None)
        if not text.startswith("0x"):
            assert float(text) == bits_to_float(bits, "f64")

    @given(st.floats(allow_nan=False, allow_infinity=False, width=64))
    def test_f32_encoding_matches_struct(x: float) -> None:
        try:
            expected = struct.unpack("<I", struct.pack("<f", x))[0]
        except OverflowError:
            expected = 0x7F800000 if x > 0 else 0xFF800000
        assert float_to_bits(x, "f32") == expected

    @given(st.floats(allow_nan=False, width=64))
    def test_tf32_is_f32_with_a_shorter_mantissa(x: float) -> None:
        f32 = float_to_bits(x, "f32")
        if f32 & 0x7F800000 == 0x7F800000:
            return  # overflowed in f32 already
        # rounding an f32 to 10 mantissa bits, ties to even, is tf32 (both have 8 exponent
        # bits); double rounding cannot bite because f32 keeps 13 more bits
        y = bits_to_float(f32, "f32")
        if float_to_bits(y, "tf32") != float_to_bits(x, "tf32"):
            # only possible when the f32 rounding produced an exact tf32 tie
            assert (f32 & 0x1FFF) == 0x1000


# ---- against ml_dtypes (an independent implementation) -------------------------------

ML_TYPES = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f8E4M3FN": "float8_e4m3fn",
    "f8E5M2": "float8_e5m2",
    "f8E8M0FNU": "float8_e8m0fnu",
    "f4E2M1FN": "float4_e2m1fn",
}


def _ml_dtype(fmt: str):
    np = pytest.importorskip("numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    name = ML_TYPES[fmt]
    return np, (np.float16 if name == "float16" else getattr(ml_dtypes, name))


def _as_uint(np, array, fmt: str):
    return array.view(np.uint16 if FLOAT_FORMATS[fmt].width == 16 else np.uint8)


@pytest.mark.parametrize("fmt", SMALL_FORMATS)
def test_decoding_matches_ml_dtypes(fmt: str) -> None:
    np, dtype = _ml_dtype(fmt)
    storage = np.uint16 if FLOAT_FORMATS[fmt].width == 16 else np.uint8
    patterns = np.arange(1 << FLOAT_FORMATS[fmt].width, dtype=np.uint32).astype(storage)
    with np.errstate(all="ignore"):
        decoded = patterns.view(dtype).astype(np.float64)
    for bits, ref in zip(patterns.tolist(), decoded.tolist(), strict=True):
        mine = bits_to_float(bits, fmt)
        assert (math.isnan(mine) and math.isnan(ref)) or mine == ref, hex(bits)


@pytest.mark.parametrize("fmt", SMALL_FORMATS)
def test_encoding_matches_ml_dtypes(fmt: str) -> None:
    np, dtype = _ml_dtype(fmt)
    rng = np.random.default_rng(20240611)
    representable = np.array([x for x in (bits_to_float(b, fmt) for b in _all_bits(fmt)) if math.isfinite(x)])
    representable.sort()
    samples = np.concatenate(
        [
            rng.integers(0, 2**63, 20000, dtype=np.uint64).view(np.float64),
            -rng.integers(0, 2**63, 20000, dtype=np.uint64).view(np.float64),
            rng.standard_normal(20000) * float(np.max(representable)),
            representable,
            np.nextafter(representable, np.inf),
            np.nextafter(representable, -np.inf),
            (representable[:-1] + representable[1:]) / 2,  # the ties
        ]
    )
    with np.errstate(all="ignore"):
        expected = _as_uint(np, samples.astype(dtype), fmt)
    for x, ref in zip(samples.tolist(), expected.tolist(), strict=True):
        if math.isnan(x):
            continue  # we give the canonical NaN, ml_dtypes keeps sign and payload
        if fmt == "f8E8M0FNU" and (x <= 0 or x < 2.0**-126 or x >= 2.0**128):
            # APFloat (and we): zero and underflow -> 0x00, negative -> NaN;
            # ml_dtypes: zero and underflow -> NaN, and it rounds the lowest binade up
            continue
        assert float_to_bits(x, fmt) == ref, (fmt, x)


@pytest.mark.parametrize("fmt", SMALL_FORMATS)
def test_printed_text_reads_back_with_ml_dtypes(fmt: str) -> None:
    np, dtype = _ml_dtype(fmt)
    for bits in _all_bits(fmt):
        text = format_float(bits, fmt)
        if text.startswith("0x"):
            assert floats.is_nan(bits, fmt) or floats.is_inf(bits, fmt)
            continue
        back = _as_uint(np, np.array([float(text)]).astype(dtype), fmt)[0]
        assert int(back) == bits, (hex(bits), text)
