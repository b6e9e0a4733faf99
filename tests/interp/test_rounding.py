"""`compiler.interp.rounding` against exact references.

The references here never call the module under test:

* formats of at most 16 bits: every finite value of the format is enumerated (from its
  bit patterns through ml_dtypes/NumPy), and an exact value (a `Fraction`) is rounded by
  bisecting that sorted list;
* f32, tf32 and f64: integer arithmetic on `Fraction`s (quantum 2^(e-p+1), floor, remainder);
* arithmetic: the exact result computed with `Fraction`s, then rounded as above.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from compiler.interp import rounding as R

# The module must silence the warnings of the NaNs and overflows it means to produce.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

MODES = ["nearest_even", "zero", "negative_inf", "positive_inf"]
RNG = np.random.default_rng(20240611)

SMALL = {
    "f16": (np.float16, np.uint16, 16),
    "bf16": (ml_dtypes.bfloat16, np.uint16, 16),
    "f8E4M3FN": (ml_dtypes.float8_e4m3fn, np.uint8, 8),
    "f8E5M2": (ml_dtypes.float8_e5m2, np.uint8, 8),
    "f8E8M0FNU": (ml_dtypes.float8_e8m0fnu, np.uint8, 8),
    "f4E2M1FN": (ml_dtypes.float4_e2m1fn, np.uint8, 4),
}
# precision (with the implicit bit), smallest normal exponent, largest finite value
WIDE = {
    "f32": (24, -126, float(np.finfo(np.float32).max)),
    "tf32": (11, -126, (2 - 2.0**-10) * 2.0**127),
    "f64": (53, -1022, float(np.finfo(np.float64).max)),
}
HAS_INF = {"f16", "bf16", "f32", "tf32", "f64", "f8E5M2"}
SATURATES = {"f8E4M3FN", "f8E5M2", "f4E2M1FN", "f8E8M0FNU"}
STORAGE = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "tf32": np.float32,
    "f64": np.float64,
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
    "f4E2M1FN": ml_dtypes.float4_e2m1fn,
}


# -- references ---------------------------------------------------------------------------

_GRIDS: dict[str, tuple[list[float], list[bool]]] = {}


def grid(name: str) -> tuple[list[float], list[bool]]:
    """Sorted non-negative finite values of a small format, and whether each is 'even'
    (last bit of its encoding 0)."""
    if name not in _GRIDS:
        dtype, bits_dtype, width = SMALL[name]
        codes = np.arange(1 << width, dtype=np.uint32).astype(bits_dtype)
        values = codes.view(dtype) if width >= 8 else codes.astype(np.uint8).view(dtype)
        with np.errstate(invalid="ignore"):
            as64 = values.astype(np.float64)
        pairs = sorted(
            {
                (float(v), int(c) & 1 == 0)
                for v, c in zip(as64, codes)
                if np.isfinite(v) and v >= 0 and not (v == 0 and np.signbit(v))
            }
        )
        _GRIDS[name] = ([v for v, _ in pairs], [e for _, e in pairs])
    return _GRIDS[name]


def _wide_round(mag: Fraction, name: str, mode: str) -> Fraction:
    p, emin, _ = WIDE[name]
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    while Fraction(2) ** e > mag:
        e -= 1
    while Fraction(2) ** (e + 1) <= mag:
        e += 1
    q = Fraction(2) ** (max(e, emin) - p + 1)
    k = mag / q
    n = k.numerator // k.denominator
    rem = k - n
    if rem == 0:
        return n * q
    if mode == "zero":
        return n * q
    if mode == "away":
        return (n + 1) * q
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        return (n + 1) * q
    return n * q


def _small_round(mag: Fraction, name: str, mode: str) -> Fraction | float:
    values, even = grid(name)
    i = bisect.bisect_left(values, mag)
    if i < len(values) and values[i] == mag:
        return Fraction(values[i])
    if i == 0:  # below the smallest value of a format without zero (f8E8M0FNU)
        lo, hi, lo_even = Fraction(0), Fraction(values[0]), True
    elif i == len(values):  # beyond max: the next grid point would be max + its spacing
        lo, hi = Fraction(values[-1]), Fraction(values[-1]) * 2 - Fraction(values[-2])
        lo_even = even[-1]
    else:
        lo, hi, lo_even = Fraction(values[i - 1]), Fraction(values[i]), even[i - 1]
    if mode == "zero":
        return lo
    if mode == "away":
        return hi
    if mag - lo < hi - mag or (mag - lo == hi - mag and lo_even):
        return lo
    return hi


def ref_round(exact: Fraction | float, name: str, mode: str, saturate: bool | None = None, ftz: bool = False) -> float:
    """The expected value (a Python float; NaN/inf/-0.0 included) of rounding `exact`."""
    if saturate is None:
        saturate = name in SATURATES
    if isinstance(exact, float) and math.isnan(exact):
        # NaN stays NaN, f8E4M3FN included (tileiras and the hardware give NaN where spec 000's
        # table says +MAX_NORM: the tools win); f4E2M1FN has no NaN and saturates to +6.
        return 6.0 if name == "f4E2M1FN" else math.nan
    if isinstance(exact, float) and math.isinf(exact):
        big = WIDE[name][2] if name in WIDE else grid(name)[0][-1]
        mag_out = big if (saturate or name not in HAS_INF) else math.inf
        return mag_out if (exact > 0 or name == "f8E8M0FNU") else -mag_out
    if isinstance(exact, float) and exact == 0:
        return 2.0**-127 if name == "f8E8M0FNU" else exact
    exact = Fraction(exact)
    neg = exact < 0 if name != "f8E8M0FNU" else False
    mag = abs(exact)
    away = (mode == "positive_inf" and not neg) or (mode == "negative_inf" and neg)
    rmode = "nearest_even" if mode == "nearest_even" else ("away" if away else "zero")
    if mag == 0:
        out: Fraction | float = Fraction(0)
    elif name in WIDE:
        out = _wide_round(mag, name, rmode)
    else:
        out = _small_round(mag, name, rmode)
    big = WIDE[name][2] if name in WIDE else grid(name)[0][-1]
    if out > big:
        if saturate or name not in HAS_INF:
            out = big
        else:
            out = big if rmode == "zero" else math.inf
    if name == "f8E8M0FNU":
        out = max(out, Fraction(2) ** -127)
    value = float(out)
    tiny = 2.0 ** (
        WIDE[name][1]
        if name in WIDE
        else {"f16": -14, "bf16": -126, "f8E4M3FN": -6, "f8E5M2": -14, "f4E2M1FN": 0, "f8E8M0FNU": -127}[name]
    )
    if ftz and value < tiny:
        value = 0.0
    return -value if neg else value


def same(got: np.ndarray, expected: list[float]) -> None:
    """Elementwise equality with NaN == NaN and the sign of zero checked."""
    got64 = np.asarray(got).astype(np.float64).reshape(-1)
    exp64 = np.array(expected, dtype=np.float64).reshape(-1)
    assert got64.shape == exp64.shape
    bad = ~((got64 == exp64) & (np.signbit(got64) == np.signbit(exp64)) | (np.isnan(got64) & np.isnan(exp64)))
    if bad.any():
        i = np.flatnonzero(bad)[:5]
        raise AssertionError(f"mismatch at {i.tolist()}: got {got64[i].tolist()}, expected {exp64[i].tolist()}")


def f64(values: np.ndarray) -> np.ndarray:
    """float64 of any float array (signaling NaNs quietly become NaN)."""
    with np.errstate(invalid="ignore"):
        return np.asarray(values).astype(np.float64)


def random_values(name: str, n: int) -> np.ndarray:
    """Random bit patterns of a format (all exponents, NaN/inf/zero/subnormal included)."""
    if name == "f64":
        return RNG.integers(0, 1 << 64, n, dtype=np.uint64).view(np.float64)
    if name in ("f32", "tf32"):
        bits = RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
        if name == "tf32":
            bits &= np.uint32(0xFFFFE000)
        return bits.view(np.float32)
    dtype, bits_dtype, width = SMALL[name]
    codes = RNG.integers(0, 1 << width, n).astype(bits_dtype)
    return codes.view(dtype)


def random_reals(n: int) -> np.ndarray:
    """float64 values spread over the f32 range and beyond, of both signs, with some
    exact small-format values, midpoints and specials."""
    mant = RNG.uniform(1, 2, n)
    exp = RNG.integers(-160, 140, n)
    out = np.ldexp(mant, exp) * RNG.choice([-1.0, 1.0], n)
    k = n // 4
    out[:k] = np.round(out[:k] * 8) / 8  # short significands: ties and exact hits
    out[k : k + 8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0**-149, -(2.0**-1074), 1e300]
    return out


# -- round_to -------------------------------------------------------------------------------


# f8E8M0FNU conversions take only the zero and positive_inf modes.
ROUND_CASES = [(n, m) for n in sorted(STORAGE) for m in MODES if n != "f8E8M0FNU" or m in ("zero", "positive_inf")]


@pytest.mark.parametrize(("name", "mode"), ROUND_CASES)
def test_round_to_matches_reference(name: str, mode: str) -> None:
    xs = random_reals(800)
    got = R.round_to(xs, name, mode)
    assert got.dtype == np.dtype(STORAGE[name])
    same(got, [ref_round(float(x), name, mode) for x in xs])


def _grid_points_and_midpoints(name: str, n: int) -> np.ndarray:
    """Non-zero finite grid points of a format and midpoints between neighbours, both signs."""
    if name in WIDE:
        base = f64(random_values(name, n))
        base = np.abs(base[np.isfinite(base) & (base != 0) & (np.abs(base) < 3e38)])
        step = 2.0 ** (np.floor(np.log2(base)) - (WIDE[name][0] - 1))
        step = np.maximum(step, 2.0 ** (WIDE[name][1] - WIDE[name][0] + 1))
        upper = base + step
    else:
        values = np.array(grid(name)[0])
        i = RNG.integers(1, len(values) - 1, n)
        base, upper = values[i], values[i + 1]
    points = np.concatenate([base, (base + upper) / 2])
    return points * RNG.choice([-1.0, 1.0], len(points))


@pytest.mark.parametrize("name", ["f16", "bf16", "f32", "tf32", "f8E4M3FN", "f8E5M2", "f4E2M1FN"])
@pytest.mark.parametrize("mode", MODES)
def test_round_to_uses_the_residual_sign(name: str, mode: str) -> None:
    # x is a grid point or a midpoint of the target; the exact value lies a quarter of an
    # f64 ulp above or below it (or on it).
    xs = _grid_points_and_midpoints(name, 150)
    for direction in (-1, 0, 1):
        residual = np.full(xs.shape, direction, dtype=np.int8)
        got = R.round_to(xs, name, mode, residual)
        expected = [ref_round(Fraction(x) + direction * Fraction(math.ulp(x)) / 4, name, mode) for x in xs.tolist()]
        same(got, expected)


def test_round_to_f64_directed_with_residual() -> None:
    xs = random_values("f64", 1500)
    xs = np.concatenate([xs[np.isfinite(xs) & (xs != 0)], [5e-324, -5e-324, np.finfo(np.float64).max]])
    for direction in (-1, 1):
        residual = np.full(xs.shape, direction, dtype=np.int8)
        for mode in MODES:
            got = R.round_to(xs, "f64", mode, residual)
            exact = [Fraction(x) + direction * Fraction(math.ulp(x)) / 4 for x in xs.tolist()]
            same(got, [ref_round(e, "f64", mode) for e in exact])


def test_round_to_zero_with_residual_is_a_tiny_value() -> None:
    x = np.array([0.0, -0.0, 0.0, -0.0])
    residual = np.array([1, 1, -1, -1], dtype=np.int8)
    same(R.round_to(x, "f32", "positive_inf", residual), [2.0**-149, 2.0**-149, -0.0, -0.0])
    same(R.round_to(x, "f32", "negative_inf", residual), [0.0, 0.0, -(2.0**-149), -(2.0**-149)])
    same(R.round_to(x, "f64", "positive_inf", residual), [5e-324, 5e-324, 0.0, -0.0])
    same(R.round_to(x, "f16", "nearest_even", residual), [0.0, 0.0, -0.0, -0.0])


def test_round_to_infinity_with_residual_toward_zero_is_a_finite_overflow() -> None:
    x = np.array([np.inf, -np.inf, np.inf, -np.inf])
    residual = np.array([-1, 1, -1, 1], dtype=np.int8)
    big = np.finfo(np.float64).max
    same(R.round_to(x, "f64", "zero", residual), [big, -big, big, -big])
    same(R.round_to(x, "f64", "positive_inf", residual), [np.inf, -big, np.inf, -big])
    same(R.round_to(x, "f64", "negative_inf", residual), [big, -np.inf, big, -np.inf])
    same(R.round_to(x, "f64", "nearest_even", residual), [np.inf, -np.inf, np.inf, -np.inf])
    f32max = float(np.finfo(np.float32).max)
    same(R.round_to(x, "f32", "zero", residual), [f32max, -f32max, f32max, -f32max])


def test_ftz_applies_after_rounding() -> None:
    tiny = 2.0**-126
    xs = np.array([tiny * 0.75, -tiny * 0.75, tiny * (1 - 2.0**-30), tiny, -(2.0**-149), 0.0])
    # 1 - 2^-30 of the smallest normal rounds up to it (nearest), so it is not flushed.
    same(R.round_to(xs, "f32", "nearest_even", ftz=True), [0.0, -0.0, tiny, tiny, -0.0, 0.0])
    same(R.round_to(xs, "f32", "zero", ftz=True), [0.0, -0.0, 0.0, tiny, -0.0, 0.0])
    same(R.flush_subnormals(xs.astype(np.float32), "f32"), [0.0, -0.0, tiny, tiny, -0.0, 0.0])


# -- the conversion table (spec 5.1.3), exact bit patterns --------------------------------


def _bits(values: np.ndarray) -> list[int]:
    a = np.asarray(values)
    if a.dtype == ml_dtypes.float4_e2m1fn:
        return [int(b) & 0xF for b in a.view(np.uint8).reshape(-1)]
    return [int(b) for b in a.view(f"u{a.dtype.itemsize}").reshape(-1)]


@pytest.mark.parametrize(
    ("name", "values", "expected_bits"),
    [
        # e4m3: max 448 (0x7E); out of range, inf saturate. NaN of either sign -> the canonical
        # NaN 0x7F: spec 000's table (5.1.3) says +MAX_NORM, but tileiras 13.5 (H200) and
        # cvt.rn.satfinite.e4m3x2 give NaN, and the tools win; CUDA's cuda_fp8.hpp emulation of
        # that instruction makes the NaN positive first, hence 0x7F for -NaN too.
        (
            "f8E4M3FN",
            [448.0, 464.0, 465.0, 1e9, np.inf, -np.inf, np.nan, -np.nan, -500.0],
            [0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F, 0x7F, 0xFE],
        ),
        # smallest subnormal 2^-9 (0x01); half of it ties to zero, a bit more rounds up
        (
            "f8E4M3FN",
            [2.0**-9, 2.0**-10, 2.0**-10 * 1.01, -(2.0**-10), 0.0, -0.0],
            [0x01, 0x00, 0x01, 0x80, 0x00, 0x80],
        ),
        # e5m2: max 57344 (0x7B); inf and overflow saturate; NaN stays NaN
        (
            "f8E5M2",
            [57344.0, 61439.0, 61440.0, np.inf, -np.inf, 2.0**-16, 2.0**-17],
            [0x7B, 0x7B, 0x7B, 0x7B, 0xFB, 0x01, 0x00],
        ),
        # f4: values 0, .5, 1, 1.5, 2, 3, 4, 6; NaN -> +6 (0x7); inf -> +-6
        (
            "f4E2M1FN",
            [0.25, 0.26, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.1, 7.0, np.inf, -np.inf, np.nan, -0.0],
            [0x0, 0x1, 0x2, 0x2, 0x4, 0x4, 0x6, 0x6, 0x7, 0x7, 0x7, 0xF, 0x7, 0x8],
        ),
        # bf16: 1 + 2^-8 + 2^-30 is just above a tie (no double rounding through f32)
        (
            "bf16",
            [1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-8, 1 + 3 * 2.0**-8, 3.4e38, np.inf],
            [0x3F81, 0x3F80, 0x3F82, 0x7F80, 0x7F80],
        ),
        # f16 overflows to inf
        (
            "f16",
            [65504.0, 65519.99, 65520.0, -1e6, 2.0**-24, 2.0**-25, 2.0**-25 * 1.5],
            [0x7BFF, 0x7BFF, 0x7C00, 0xFC00, 0x0001, 0x0000, 0x0001],
        ),
        # tf32: 10 mantissa bits kept, ties to even, in float32 storage
        (
            "tf32",
            [1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-11 + 2.0**-20, 3.4025e38],
            [0x3F800000, 0x3F804000, 0x3F802000, 0x7F800000],
        ),
    ],
)
def test_conversion_table_bits(name: str, values: list[float], expected_bits: list[int]) -> None:
    got = R.round_to(np.array(values), name, "nearest_even")
    assert _bits(got) == expected_bits


def test_e8m0_rounding() -> None:
    xs = np.array([1.0, 1.5, 3.0, 4.0, -3.0, 0.0, 2.0**-130, np.inf, 2.0**127 * 1.5, np.nan, 2.0**-127])
    assert _bits(R.round_to(xs, "f8E8M0FNU", "zero")) == [127, 127, 128, 129, 128, 0, 0, 254, 254, 255, 0]
    assert _bits(R.round_to(xs, "f8E8M0FNU", "positive_inf")) == [127, 128, 129, 129, 129, 0, 0, 254, 254, 255, 0]


def test_to_float_type_all_pairs() -> None:
    names = sorted(STORAGE)
    for src in names:
        values = random_values(src, 200)
        for dst in names:
            if dst == src:
                continue
            mode = "zero" if dst == "f8E8M0FNU" else "nearest_even"
            got = R.to_float_type(values, src, dst, mode)
            assert got.dtype == np.dtype(STORAGE[dst])
            same(got, [ref_round(float(v), dst, mode) for v in f64(values)])


def test_canonical_nan_bits() -> None:
    assert _bits(R.canonical_nan("f32")) == [0x7FFFFFFF]
    assert _bits(R.canonical_nan("f16")) == [0x7FFF]
    assert _bits(R.canonical_nan("bf16")) == [0x7FFF]
    assert _bits(R.canonical_nan("f64")) == [0x7FFFFFFFFFFFFFFF]


def test_bad_mode_and_type() -> None:
    with pytest.raises(ValueError, match="rounding mode"):
        R.round_to(np.array([1.0]), "f32", "nearest_int_to_zero")
    with pytest.raises(ValueError, match="float element type"):
        R.round_to(np.array([1.0]), "i32")


# -- exactly rounded arithmetic -------------------------------------------------------------

OPS = {
    "add": (2, lambda a, b: a + b),
    "sub": (2, lambda a, b: a - b),
    "mul": (2, lambda a, b: a * b),
    "div": (2, lambda a, b: a / b),
    "fma": (3, lambda a, b, c: a * b + c),
    "sqrt": (1, None),
}


def _operands(name: str, arity: int, n: int) -> list[np.ndarray]:
    """Random operands: bit patterns, plus values close to each other (cancellation)."""
    ops = [random_values(name, n) for _ in range(arity)]
    with np.errstate(all="ignore"):
        if arity >= 2:
            k = n // 3
            ops[1][:k] = (f64(ops[0][:k]) * RNG.uniform(-1.01, -0.99, k)).astype(ops[0].dtype)
        if arity == 3:
            k = n // 3
            prod = f64(ops[0][k : 2 * k]) * f64(ops[1][k : 2 * k])
            ops[2][k : 2 * k] = (-prod * RNG.uniform(0.999, 1.001, k)).astype(ops[0].dtype)
    return ops


def _expected(op: str, operands: list[float], name: str, mode: str, ftz: bool) -> float:
    tiny = 2.0 ** {"f16": -14, "bf16": -126, "f32": -126, "f64": -1022}[name]
    if ftz:
        operands = [math.copysign(0.0, v) if abs(v) < tiny else v for v in operands]
    if any(math.isnan(v) or math.isinf(v) for v in operands):
        with np.errstate(all="ignore"):
            a = [np.float64(v) for v in operands]
            value = {
                "add": lambda: a[0] + a[1],
                "sub": lambda: a[0] - a[1],
                "mul": lambda: a[0] * a[1],
                "div": lambda: a[0] / a[1],
                "fma": lambda: a[0] * a[1] + a[2],
                "sqrt": lambda: np.sqrt(a[0]),
            }[op]()
        return float(value)
    if op == "div" and operands[1] == 0:
        with np.errstate(all="ignore"):
            return float(np.float64(operands[0]) / np.float64(operands[1]))
    if op == "sqrt":
        v = operands[0]
        if v < 0:
            return math.nan
        if v == 0:
            return v
        exact_root = _sqrt_round(Fraction(v), name, mode)
        return ref_round(exact_root, name, mode, ftz=ftz)
    exact = OPS[op][1](*(Fraction(v) for v in operands))  # type: ignore[misc]
    if exact == 0:
        # IEEE signed zero of an exact zero sum / product
        if op == "mul" or op == "div":
            return math.copysign(0.0, operands[0]) * math.copysign(1.0, operands[1])
        terms = [operands[0], -operands[1] if op == "sub" else operands[1]]
        if op == "fma":
            terms = [
                math.copysign(0.0, operands[0]) * math.copysign(1.0, operands[1])
                if operands[0] * operands[1] == 0
                else operands[0] * operands[1],
                operands[2],
            ]
        if all(t == 0 for t in terms) and all(math.copysign(1.0, t) < 0 for t in terms):
            return -0.0
        if all(t == 0 for t in terms) and all(math.copysign(1.0, t) > 0 for t in terms):
            return 0.0
        return -0.0 if mode == "negative_inf" else 0.0
    return ref_round(exact, name, mode, ftz=ftz)


def _sqrt_round(v: Fraction, name: str, mode: str) -> Fraction:
    """sqrt(v) to within far less than any rounding boundary of the format: exact when v
    is a square, else a value strictly between two consecutive multiples of 2^-s bracketing
    the root, at about 230 significant bits (the root of a float is never that close to a
    grid point or midpoint without being one)."""
    e = v.numerator.bit_length() - v.denominator.bit_length()
    s = (460 - e) // 2
    scaled = v * Fraction(4) ** s
    root = math.isqrt(scaled.numerator // scaled.denominator)
    if Fraction(root) ** 2 == scaled:
        return Fraction(root) / Fraction(2) ** s
    return Fraction(2 * root + 1, 2) / Fraction(2) ** s


@pytest.mark.parametrize("name", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_arithmetic_is_correctly_rounded(name: str, op: str) -> None:
    arity = OPS[op][0]
    fn = getattr(R, op)
    n = 160
    operands = _operands(name, arity, n)
    for mode in MODES:
        for ftz in (False, True) if name == "f32" else (False,):
            got = fn(*operands, name, mode, ftz)
            assert got.dtype == np.dtype(STORAGE[name])
            cols = [f64(o).tolist() for o in operands]
            expected = [_expected(op, list(vals), name, mode, ftz) for vals in zip(*cols)]
            same(got, expected)


def test_f64_extreme_exponents_use_exact_fallback() -> None:
    big, tiny = 2.0**1000, 2.0**-1000
    a = np.array([big, tiny, 3 * tiny, 1e-310, 2.0**-1074, 1.5 * big, 7e-320])
    b = np.array([1.5 * big, tiny * 3, 1e-20, 0.3, 0.7, 1e-300, 3.0])
    c = np.array([1.0, -(2.0**-1074), 5e-324, -1e-310, 1e-320, 1.0, -7e-320])
    for mode in MODES:
        for op, operands in (("mul", (a, b)), ("div", (a, b)), ("fma", (a, b, c)), ("sqrt", (a,))):
            got = getattr(R, op)(*operands, "f64", mode)
            cols = [o.tolist() for o in operands]
            same(got, [_expected(op, list(v), "f64", mode, False) for v in zip(*cols)])


def test_exact_zero_sums_follow_ieee_signs() -> None:
    a = np.array([1.0, 0.0, -0.0, 0.0, -0.0], dtype=np.float32)
    b = np.array([-1.0, 0.0, -0.0, -0.0, 0.0], dtype=np.float32)
    same(R.add(a, b, "f32", "negative_inf"), [-0.0, 0.0, -0.0, -0.0, -0.0])
    same(R.add(a, b, "f32", "zero"), [0.0, 0.0, -0.0, 0.0, 0.0])
    same(R.fma(np.float32([2.0]), np.float32([3.0]), np.float32([-6.0]), "f32", "negative_inf"), [-0.0])
    same(R.fma(np.float32([2.0]), np.float32([3.0]), np.float32([-6.0]), "f32", "positive_inf"), [0.0])


def test_double_rounding_is_avoided_in_fma() -> None:
    # a*b + c = 1 + 2^-24 + 2^-60 in f32: f64 rounding then f32 rounding would give 1.0.
    a = np.float32([1 + 2.0**-12])
    b = np.float32([1 + 2.0**-12])
    c = np.float32([-(2.0**-24) + 2.0**-48])  # exact product 1 + 2^-11 + 2^-24
    exact = Fraction(float(a[0])) * Fraction(float(b[0])) + Fraction(float(c[0]))
    assert float(R.fma(a, b, c, "f32")[0]) == ref_round(exact, "f32", "nearest_even")


def test_int64_inputs_broadcast() -> None:
    a = np.float32([[1.0, 2.0]])
    b = np.float32([[3.0], [4.0]])
    assert R.add(a, b, "f32", "zero").shape == (2, 2)
    assert R.fma(a, b, np.float32(1.0), "f32", "positive_inf").shape == (2, 2)


def test_exact_fallback_keeps_its_results_for_strided_operands() -> None:
    """The same as test_f64_extreme_exponents_use_exact_fallback on transposed (Fortran-order)
    operands, as a permuted tile is: the fallback's flat writes must land in its result."""
    big, tiny = 2.0**1000, 2.0**-1000
    a = np.array([[big, tiny, 3 * tiny], [1e-310, 2.0**-1074, 1.5 * big]]).T
    b = np.array([[1.5 * big, tiny * 3, 1e-20], [0.3, 0.7, 1e-300]]).T
    c = np.array([[1.0, -(2.0**-1074), 5e-324], [-1e-310, 1e-320, 1.0]]).T
    assert not a.flags["C_CONTIGUOUS"]
    for mode in MODES:
        for op, operands in (("mul", (a, b)), ("div", (a, b)), ("fma", (a, b, c)), ("sqrt", (a,))):
            got = getattr(R, op)(*operands, "f64", mode)
            want = getattr(R, op)(*(np.ascontiguousarray(o) for o in operands), "f64", mode)
            assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), (op, mode)
