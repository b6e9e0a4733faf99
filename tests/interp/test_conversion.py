"""`ftof`, `ftoi` and `itof` run through small kernels.

Expectations: the exact value as a `Fraction` rounded by the independent reference of
`test_rounding` (enumerated grids of the small formats, integer arithmetic for the
wide ones), Python integer arithmetic for `ftoi`, and exact bit patterns for the
special values of the spec's conversion table (5.1.3).
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from .test_rounding import STORAGE, f64, random_values, ref_round, same
from .util import eval_kernel, kernel

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

FLOATS = sorted(STORAGE)
RNG = np.random.default_rng(11)


def run(body: str, params: str, *args: np.ndarray) -> dict[str, np.ndarray]:
    return eval_kernel(kernel(body, params), grid_positions=range(len(args[0])), args=list(args))


def pair(src: str) -> tuple[str, str, str]:
    """(parameter declaration, op lines, parameter type) making `%v: tile<2x{src}>` hold the
    scalar parameter `%a` twice. f4E2M1FN tiles need an even number of elements and so
    cannot be parameters: their values come as f32 (exactly) and are converted."""
    t = "f32" if src == "f4E2M1FN" else src
    lines = [f"%a1 = reshape %a : tile<{t}> -> tile<1x{t}>", f"%a2 = broadcast %a1 : tile<1x{t}> -> tile<2x{t}>"]
    if src == "f4E2M1FN":
        lines.append("%v = ftof %a2 : tile<2xf32> -> tile<2xf4E2M1FN>")
    else:
        lines.append(f"%v = reshape %a2 : tile<2x{t}> -> tile<2x{t}>")
    return f"%a: tile<{t}>", "\n".join(lines), t


def param_values(src: str, x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if src == "f4E2M1FN" else x


def first(a: np.ndarray) -> np.ndarray:
    """Element 0 of each block's 2-element tile."""
    return a[:, 0]


def bits(a: np.ndarray) -> list[int]:
    a = np.asarray(a)
    if a.dtype == ml_dtypes.float4_e2m1fn:
        return [int(v) & 0xF for v in a.view(np.uint8).reshape(-1)]
    return [int(v) for v in a.view(f"u{a.dtype.itemsize}").reshape(-1)]


def values_of(name: str, n: int) -> np.ndarray:
    """Random bit patterns of `name` plus ordinary values, zeros and specials."""
    out = random_values(name, n)
    extra = [0.0, -0.0, 1.0, -1.5, 3.0, 0.75, np.inf, -np.inf, np.nan, 1e30, -1e-30, 300.0, 65519.0, 7.0]
    with np.errstate(all="ignore"):
        if name == "f4E2M1FN":
            extra = [v for v in extra if not (math.isinf(v) or math.isnan(v))]
        cast = np.array(extra).astype(STORAGE[name])
    if name == "tf32":
        cast = (cast.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    out[: len(cast)] = cast
    return out


@pytest.mark.parametrize("src", FLOATS)
def test_ftof_every_pair(src: str) -> None:
    x = values_of(src, 96)
    param, prologue, _ = pair(src)
    lines, cases = [prologue], []
    for dst in FLOATS:
        if dst == src:
            continue
        modes = ("zero", "positive_inf") if dst == "f8E8M0FNU" else ("nearest_even",)
        for mode in modes:
            rounding = "" if mode == "nearest_even" else f" rounding<{mode}>"
            lines.append(f"%to_{dst}_{mode} = ftof %v{rounding} : tile<2x{src}> -> tile<2x{dst}>")
            cases.append((dst, mode))
    out = run("\n".join(lines), param, param_values(src, x))
    exact = f64(x).tolist()
    for dst, mode in cases:
        got = first(out[f"to_{dst}_{mode}"])
        assert got.dtype == np.dtype(STORAGE[dst]), dst
        same(got, [ref_round(v if not math.isfinite(v) or v == 0 else Fraction(v), dst, mode) for v in exact])


@pytest.mark.parametrize(
    ("src", "dst", "values", "expected"),
    [
        # e4m3: inf and overflow saturate to +-MAX_NORM (0x7E / 0xFE). NaN, of either sign,
        # gives the canonical NaN 0x7F: spec 000's table (5.1.3) says +MAX_NORM, but tileiras
        # 13.5 (on an H200) and the hardware's cvt.rn.satfinite.e4m3x2 give NaN, and the tools
        # win; CUDA's cuda_fp8.hpp emulation of that instruction makes a NaN positive first.
        (
            "f32",
            "f8E4M3FN",
            [np.nan, -np.nan, np.inf, -np.inf, 1e6, -464.0, 2.0**-10],
            [0x7F, 0x7F, 0x7E, 0xFE, 0x7E, 0xFE, 0x00],
        ),
        ("f16", "f8E4M3FN", [np.nan, -np.nan, 448.0, 480.0, -0.0], [0x7F, 0x7F, 0x7E, 0x7E, 0x80]),
        ("f64", "f8E4M3FN", [-np.nan, np.nan], [0x7F, 0x7F]),
        ("bf16", "f8E4M3FN", [-np.nan, np.nan], [0x7F, 0x7F]),
        ("f8E5M2", "f8E4M3FN", [-np.nan, np.nan], [0x7F, 0x7F]),
        # e5m2: NaN stays NaN; inf saturates to +-57344 (0x7B)
        ("f32", "f8E5M2", [np.inf, -np.inf, 1e9, 57344.0, 2.0**-17], [0x7B, 0xFB, 0x7B, 0x7B, 0x00]),
        ("bf16", "f8E5M2", [np.nan], None),
        # f4E2M1FN: no NaN, no inf: NaN -> +6 (0x7), inf -> +-6
        ("f32", "f4E2M1FN", [np.nan, np.inf, -np.inf, 100.0, 0.25, 0.75, -2.5], [0x7, 0x7, 0xF, 0x7, 0x0, 0x2, 0xC]),
        # the IEEE-like types overflow to inf and keep NaN
        ("f32", "f16", [70000.0, -65520.0, 65519.0, np.nan], [0x7C00, 0xFC00, 0x7BFF, None]),
        ("f64", "bf16", [1e39, 1 + 2.0**-8 + 2.0**-40, 3.0e38], [0x7F80, 0x3F81, 0x7F62]),
        ("f64", "f32", [1e39, 2.0**-150 * 1.5, 2.0**-150], [0x7F800000, 0x00000001, 0x00000000]),
        ("f32", "tf32", [1 + 2.0**-11, 1 + 2.0**-11 + 2.0**-23, np.inf], [0x3F800000, 0x3F802000, 0x7F800000]),
        # f8 sources: every value is exact in the wider types
        ("f8E4M3FN", "f16", [448.0, -(2.0**-9)], [0x5F00, 0x9800]),
        ("f8E8M0FNU", "f32", [2.0**-127, 2.0**127, np.nan], [0x00400000, 0x7F000000, None]),
        ("f8E8M0FNU", "f8E4M3FN", [np.nan, 2.0**127, 2.0**-127], [0x7F, 0x7E, 0x00]),  # NaN: as above
    ],
)
def test_ftof_special_bits(src: str, dst: str, values: list[float], expected: list[int | None] | None) -> None:
    with np.errstate(all="ignore"):
        x = np.array(values).astype(STORAGE[src])
    if src != "f8E8M0FNU":  # a -NaN case must reach the op as a negative NaN (E8M0 has no sign)
        nan = np.isnan(np.array(values))
        assert np.array_equal(np.signbit(x.astype(np.float64))[nan], np.signbit(np.array(values))[nan])
    param, prologue, _ = pair(src)
    got = first(run(f"{prologue}\n%r = ftof %v : tile<2x{src}> -> tile<2x{dst}>", param, param_values(src, x))["r"])
    if expected is None:
        assert np.isnan(got.astype(np.float64)).all()
        return
    for g, e, v in zip(bits(got), expected, got.astype(np.float64).tolist()):
        if e is None:
            assert math.isnan(v)
        else:
            assert g == e, (values, bits(got), expected)


def test_ftof_to_e8m0_rounding() -> None:
    x = np.float32([1.0, 1.5, 3.0, -3.0, 0.0, 2.0**-130, np.inf, np.nan, 3e38])
    out = run(
        """
        %z = ftof %a rounding<zero> : tile<f32> -> tile<f8E8M0FNU>
        %p = ftof %a rounding<positive_inf> : tile<f32> -> tile<f8E8M0FNU>
    """,
        "%a: tile<f32>",
        x,
    )
    # magnitude, rounded to a power of two; 0 and tiny -> 2^-127 (0x00); inf -> 2^127; NaN stays NaN
    assert bits(out["z"]) == [127, 127, 128, 128, 0, 0, 254, 255, 254]
    assert bits(out["p"]) == [127, 128, 129, 129, 0, 0, 254, 255, 254]


# -- ftoi ------------------------------------------------------------------------------------

INT_WIDTHS = [1, 8, 16, 32, 64]


def _ftoi_expected(v: float, width: int, signed: bool) -> int:
    if width == 1:
        return int(v != 0)  # NVIDIA's tools' `x != 0`, NaN true (compiler/interp/ops_conversion.py)
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    if math.isnan(v):
        n = 0
    elif math.isinf(v):
        n = hi if v > 0 else lo
    else:
        n = min(max(math.trunc(v), lo), hi)
    return n & ((1 << width) - 1)


def _int_bits(a: np.ndarray, width: int) -> list[int]:
    if a.dtype == np.bool_:
        return [int(v) for v in a.reshape(-1)]
    return [int(v) & ((1 << width) - 1) for v in a.reshape(-1).tolist()]


@pytest.mark.parametrize("src", ["f16", "bf16", "f32", "f64", "tf32", "f8E4M3FN", "f8E5M2", "f4E2M1FN"])
def test_ftoi_truncates_and_saturates(src: str) -> None:
    x = values_of(src, 64)
    edges = [
        2.0**63,
        -(2.0**63),
        2.0**64,
        2.0**63 - 1024,
        -(2.0**63) - 2048,
        2.0**31,
        -(2.0**31) - 1,
        255.9,
        -0.9,
        128.0,
        -129.5,
        65535.5,
        1e20,
        -1e20,
        0.5,
        -0.5,
    ]
    if src in ("f32", "f64"):
        with np.errstate(all="ignore"):
            x = np.concatenate([x, np.array(edges).astype(STORAGE[src])])
    param, prologue, _ = pair(src)
    lines = [prologue] + [
        f"%{s}{w} = ftoi %v {s} : tile<2x{src}> -> tile<2xi{w}>" for w in INT_WIDTHS for s in ("signed", "unsigned")
    ]
    out = run("\n".join(lines), param, param_values(src, x))
    values = f64(x).tolist()
    for w in INT_WIDTHS:
        for s in ("signed", "unsigned"):
            got = first(out[f"{s}{w}"])
            assert got.dtype == (np.dtype(np.bool_) if w == 1 else np.dtype(f"i{w // 8}"))
            assert _int_bits(got, w) == [_ftoi_expected(v, w, s == "signed") for v in values], (s, w)


def test_ftoi_large_f64_values_exactly() -> None:
    x = np.array([9007199254740993.0, -9223372036854774784.0, 18446744073709549568.0, 4294967295.0])
    out = run(
        """
        %s = ftoi %a signed : tile<f64> -> tile<i64>
        %u = ftoi %a unsigned : tile<f64> -> tile<i64>
        %w = ftoi %a unsigned : tile<f64> -> tile<i32>
    """,
        "%a: tile<f64>",
        x,
    )
    assert out["s"].tolist() == [9007199254740992, -9223372036854774784, (1 << 63) - 1, 4294967295]
    assert _int_bits(out["u"], 64) == [9007199254740992, 0, 18446744073709549568, 4294967295]
    assert _int_bits(out["w"], 32) == [(1 << 32) - 1, 0, (1 << 32) - 1, 4294967295]


# -- itof ------------------------------------------------------------------------------------

ITOF_TARGETS = [n for n in FLOATS if n != "f8E8M0FNU"]


def _random_ints(width: int, n: int) -> np.ndarray:
    if width == 1:
        return RNG.integers(0, 2, n).astype(np.bool_)
    dtype = np.dtype(f"i{width // 8}")
    raw = RNG.integers(0, 1 << 63, n, dtype=np.uint64) | (RNG.integers(0, 2, n, dtype=np.uint64) << np.uint64(63))
    # also small magnitudes and values near the edges of f16/f32 precision
    raw[: n // 4] = RNG.integers(0, 70000, n // 4).astype(np.uint64)
    raw[n // 4 : n // 2] >>= np.uint64(RNG.integers(0, 63))
    values = raw.astype(np.dtype(f"u{width // 8}")).view(dtype)
    values[:4] = np.array([0, -1, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype=dtype)
    return values


@pytest.mark.parametrize("width", INT_WIDTHS)
def test_itof_every_target(width: int) -> None:
    x = _random_ints(width, 64)
    param, prologue, _ = pair(f"i{width}")
    lines, cases = [prologue], []
    for dst in ITOF_TARGETS:
        for s in ("signed", "unsigned"):
            lines.append(f"%{s}_{dst} = itof %v {s} : tile<2xi{width}> -> tile<2x{dst}>")
            cases.append((dst, s))
    out = run("\n".join(lines), param, x)
    for dst, s in cases:
        got = first(out[f"{s}_{dst}"])
        assert got.dtype == np.dtype(STORAGE[dst])
        if width == 1:
            ints = [(-1 if s == "signed" else 1) if v else 0 for v in x.tolist()]
        else:
            ints = [v if s == "signed" else v & ((1 << width) - 1) for v in x.tolist()]
        same(got, [ref_round(Fraction(i), dst, "nearest_even") if i else 0.0 for i in ints])


def test_itof_unsigned_large_values() -> None:
    # 2^64 - 1 rounds to 2^64 in f64 and f32; 2^63 + 2^10 is a tie in f64 (to even: 2^63),
    # one more is above it
    x = np.array(
        [-1, (1 << 63) + (1 << 10) + 1 - (1 << 64), (1 << 63) + (1 << 10) - (1 << 64), 1 << 62], dtype=np.int64
    )
    out = run(
        """
        %d = itof %a unsigned : tile<i64> -> tile<f64>
        %f = itof %a unsigned : tile<i64> -> tile<f32>
        %s = itof %a signed : tile<i64> -> tile<f64>
        %h = itof %a unsigned : tile<i64> -> tile<f16>
        %e = itof %a unsigned : tile<i64> -> tile<f8E4M3FN>
    """,
        "%a: tile<i64>",
        x,
    )
    assert out["d"].tolist() == [2.0**64, 2.0**63 + 2.0**11, 2.0**63, 2.0**62]
    assert out["f"].tolist() == [2.0**64, 2.0**63, 2.0**63, 2.0**62]
    assert out["s"].tolist() == [-1.0, float(int(x[1])), float(int(x[2])), 2.0**62]
    assert out["h"].astype(np.float64).tolist() == [np.inf] * 4
    assert bits(out["e"]) == [0x7E] * 4  # saturated to +MAX_NORM (spec 5.1.3)
