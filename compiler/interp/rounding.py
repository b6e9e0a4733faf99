"""Correct rounding into every float format of Tile IR, and exactly rounded arithmetic.

Everything is vectorized NumPy on float64: every value of every element format is exactly
a float64, so a result is represented by `x`, the float64 nearest to the exact real
result (ties to even), plus the *sign of the residual* `exact - x` (zero when `x` is
exact). From those two, rounding into any narrower format in any mode is exact:

* Away from a rounding boundary of the target, `x` and the exact value round alike
  (the residual is smaller than half an f64 ulp, every target grid point is an f64).
* Where `x` lies exactly on a target grid point or on a midpoint between two, the sign
  of the residual says on which side the exact value lies.

The residual comes from error-free transformations: TwoSum (Knuth) for sums, Dekker's
product (Veltkamp splitting) for products, and a Shewchuk expansion of a few terms
for the sign of `a - q*b` (division), `a - q*q` (square root) and `a*b + c - x` (fma).
f64 fma itself is emulated with Boldo and Melquiond's round-to-odd algorithm
(uh+ul = a*b, th+tl = c+uh, v = RO(tl+ul), x = RN(th+v)). Where these transformations
could overflow or lose bits to underflow (operands beyond 2^995, products below
2^-960), the few affected elements are computed with Python `fractions.Fraction`.

What is exact and what is bounded:

=====================================  =====================================================
result                                 accuracy
=====================================  =====================================================
round_to / to_float_type, every        exact in every mode (nearest_even, zero,
format                                 negative_inf, positive_inf), subnormals, overflow,
                                       saturation
add, sub, mul, div, sqrt, fma:         exact (correctly rounded) in every mode, with ftz
f16, bf16, f32 (and tf32)
add, sub, mul, div, sqrt, fma: f64     exact in every mode (Fraction fallback near the
                                       ends of the exponent range)
math functions (see ops_float)         not here: evaluated in f64, rounded once; f16,
                                       bf16, f32 within 1 ulp, f64 within 4 ulp
=====================================  =====================================================

How: nearest-even + - * / sqrt on f16, bf16, f32 and f64 use NumPy / ml_dtypes directly.
For f32 and f64 that is IEEE arithmetic in the format itself. f16 and bf16 are computed
in f32 and rounded to the format: a second rounding, which is innocuous because f32 has
at least 2p+2 significant bits for both (24 >= 2*11+2 = 24, 24 >= 2*8+2 = 18): for + - * /
and sqrt, rounding first to p' >= 2p+2 bits and then to p bits gives the correctly
rounded p-bit result (S. Figueroa, "When is double rounding innocuous?", 1995). fma is
not covered by that theorem (f32 fma in f64 can double-round), and directed modes need
the residual, so both go through `round_to` with the residual of an error-free
transformation: the value rounded is then the exact result, rounded once.

Flush-to-zero (`ftz=True`) is applied after rounding, as the spec (5.1.3) orders: a
result whose rounded magnitude is below the smallest normal becomes a zero of the
same sign. Inputs are flushed by the caller with `flush_subnormals`.

Conversions follow the spec's table (5.1.3): f16, bf16, f32, tf32, f64 overflow to
+-inf as the rounding mode says; f8E4M3FN and f8E5M2 saturate to +-MAX_NORM (inf
too); NaN stays NaN, as the format's canonical positive NaN (f8E4M3FN: 0x7F, whatever
the source NaN's sign). The table says NaN -> +MAX_NORM for f8E4M3FN, but NVIDIA's tools
give NaN and they win: tileiras 13.5 compiles ftof of every NaN to NaN on an H200, as
PTX's `cvt.rn.satfinite.e4m3x2` does ("if the input value is NaN, then the result is NaN
in the specified destination format"); CUDA's cuda_fp8.hpp emulates that instruction by
making the NaN positive first, so a negative NaN gives 0x7F too. For the formats the
table does not list we follow NVIDIA's conversion instructions: f4E2M1FN, which has no
NaN encoding, saturates and turns NaN into +MAX_NORM (6.0); f8E8M0FNU (unsigned powers
of two, 2^-127 .. 2^127, no zero) takes the magnitude, clamps to [2^-127, 2^127] (zero
gives 2^-127, the encoding 0x00) and keeps NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import ml_dtypes
import numpy as np

NEAREST = "nearest_even"
DIRECTED = ("zero", "negative_inf", "positive_inf")
# Round to nearest, ties away from zero (bytecode 13.4; `ftof` only, see `round_to`).
NEAREST_AWAY = "nearest_away"
ROUNDINGS = (NEAREST, NEAREST_AWAY, *DIRECTED)  # the modes `round_to` rounds in
# `approx` and `full` ask for a fast or a full-range implementation of the correctly
# rounded (nearest) result; we always give the correctly rounded one.
_MODE_ALIASES = {"approx": NEAREST, "full": NEAREST, None: NEAREST}

_F64 = np.dtype(np.float64)


@dataclass(frozen=True, slots=True)
class Format:
    """What rounding needs to know about an element format."""

    name: str
    dtype: np.dtype  # storage dtype
    precision: int  # significand bits, the implicit one included
    emin: int  # exponent of the smallest normal number
    max_finite: float
    has_inf: bool
    has_nan: bool
    signed: bool = True
    has_zero: bool = True
    saturates: bool = False  # conversions clamp to +-max_finite (and inf too)
    nan_to_max: bool = False  # NaN converts to +max_finite (a format without NaN: f4E2M1FN)

    @property
    def min_normal(self) -> float:
        return math.ldexp(1.0, self.emin)


def _max(precision: int, emax: int) -> float:
    """(2 - 2^(1-p)) * 2^emax: every significand bit set in the top binade."""
    return math.ldexp((1 << precision) - 1, emax - precision + 1)


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("f64", _F64, 53, -1022, float(np.finfo(np.float64).max), True, True),
        Format("f32", np.dtype(np.float32), 24, -126, _max(24, 127), True, True),
        Format("tf32", np.dtype(np.float32), 11, -126, _max(11, 127), True, True),
        Format("bf16", np.dtype(ml_dtypes.bfloat16), 8, -126, _max(8, 127), True, True),
        Format("f16", np.dtype(np.float16), 11, -14, 65504.0, True, True),
        Format("f8E5M2", np.dtype(ml_dtypes.float8_e5m2), 3, -14, 57344.0, True, True, saturates=True),
        Format("f8E4M3FN", np.dtype(ml_dtypes.float8_e4m3fn), 4, -6, 448.0, False, True, saturates=True),
        Format("f4E2M1FN", np.dtype(ml_dtypes.float4_e2m1fn), 2, 0, 6.0, False, False, saturates=True, nan_to_max=True),
        Format(
            "f8E8M0FNU",
            np.dtype(ml_dtypes.float8_e8m0fnu),
            1,
            -127,
            math.ldexp(1.0, 127),
            False,
            True,
            signed=False,
            has_zero=False,
            saturates=True,
        ),
    )
}


def format_of(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"not a float element type: {name!r}") from None


def _mode(mode: str | None) -> str:
    mode = _MODE_ALIASES.get(mode, mode)  # type: ignore[arg-type]
    if mode not in ROUNDINGS:
        raise ValueError(f"unsupported rounding mode for a float result: {mode!r}")
    return mode  # type: ignore[return-value]


# -- helpers on float64 --------------------------------------------------------------------


def to_f64(values: np.ndarray) -> np.ndarray:
    """Values of any float storage dtype as float64 (exact: every format fits in f64)."""
    values = np.asarray(values)
    if values.dtype == _F64:
        return values
    with np.errstate(invalid="ignore"):  # signaling NaNs become quiet NaNs
        return values.astype(_F64)


def _sign(a: np.ndarray) -> np.ndarray:
    """-1, 0 or 1 as int8; NaN gives 0."""
    return ((a > 0).astype(np.int8) - (a < 0).astype(np.int8)).astype(np.int8)


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s = RN(a + b) and e with a + b = s + e exactly (when s does not overflow)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


_SPLITTER = float((1 << 27) + 1)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p = RN(a * b) and e with a * b = p + e exactly, for |a|, |b| < 2^995 and
    |a*b| >= 2^-960 (see `_product_safe`)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


_BIG = math.ldexp(1.0, 995)
_HUGE = math.ldexp(1.0, 1020)
_TINY = math.ldexp(1.0, -960)


def _product_safe(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Where `two_prod(a, b)` is exact: no overflow while splitting, no bits lost to underflow."""
    ap = np.abs(p)
    return (np.abs(a) < _BIG) & (np.abs(b) < _BIG) & (ap < _HUGE) & ((ap >= _TINY) | (a == 0) | (b == 0))


def sum_sign(terms: list[np.ndarray]) -> np.ndarray:
    """The sign (int8) of the exact sum of a few float64 arrays (no overflow assumed).

    Shewchuk's Grow-Expansion keeps a non-overlapping expansion of the running sum, of
    increasing magnitude; the sign of such an expansion is that of its largest non-zero
    component."""
    comps: list[np.ndarray] = []
    for b in terms:
        q = b
        grown = []
        for h in comps:
            q, err = two_sum(q, h)
            grown.append(err)
        grown.append(q)
        comps = grown
    sign = np.zeros(np.broadcast_shapes(*(t.shape for t in terms)), dtype=np.int8)
    for h in reversed(comps):
        sign = np.where(sign == 0, _sign(h), sign)
    return sign


def _round_to_odd_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b rounded to odd: the exact sum if representable, else whichever neighbour has
    an odd last significand bit."""
    s, e = two_sum(a, b)
    bits = s.view(np.int64)
    even = (bits & 1) == 0
    toward = np.where(e > 0, np.inf, -np.inf)
    return np.where((e != 0) & even, np.nextafter(s, toward), s)


# -- rounding -----------------------------------------------------------------------------


def _residual_sign(residual: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    if residual is None:
        return None
    r = np.asarray(residual)
    if r.dtype != np.int8:
        r = _sign(r.astype(_F64, copy=False))
    return np.broadcast_to(r, shape)


def round_to(
    x: np.ndarray,
    name: str,
    mode: str | None = NEAREST,
    residual: np.ndarray | None = None,
    ftz: bool = False,
    saturate: bool | None = None,
) -> np.ndarray:
    """Round real values into the float format `name` ("f32", "bf16", "f8E4M3FN", ...).

    `x` holds the values, or for inexact results the float64 nearest to the exact value
    (ties to even); `residual` then has the sign of `exact - x` (any float array, or an
    int8 array of -1/0/1; None: `x` is exact). An infinite `x` with a residual of the
    opposite sign stands for a finite value beyond the f64 range.

    `mode`: nearest_even, zero, negative_inf, positive_inf (approx/full: nearest) or
    nearest_away. nearest_away into f64 needs an exact `x` (no residual): a tie between two
    f64 values cannot be told from the sign of the residual alone (only `ftof`, which is
    exact into f64, rounds so).
    `ftz`: flush results below the smallest normal to a zero of the same sign.
    `saturate`: clamp overflow and infinities to +-max_finite; default: the format's
    conversion rule (f8 and f4 formats saturate, the others overflow to inf).

    Returns an array of the format's storage dtype."""
    fmt = format_of(name)
    mode = _mode(mode)
    x = to_f64(x)
    if saturate is None:
        saturate = fmt.saturates
    rsign = _residual_sign(residual, x.shape)
    if not fmt.signed:  # f8E8M0FNU holds magnitudes: round |x|
        if rsign is not None:
            rsign = np.where(np.signbit(x), -rsign, rsign).astype(np.int8)
        x = np.abs(x)
    if fmt.name == "f64":
        return _round_f64(x, mode, rsign, ftz, saturate)
    if mode == NEAREST and rsign is None and not ftz and not saturate and fmt.name in ("f32", "f16"):
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(fmt.dtype)  # NumPy's casts round correctly, to nearest even
    with np.errstate(invalid="ignore", over="ignore"):
        neg = np.signbit(x)
        if rsign is not None:  # a zero x standing for a tiny non-zero value takes its sign
            zero_tiny = (x == 0) & (rsign != 0)
            if zero_tiny.any():
                neg = np.where(zero_tiny, rsign < 0, neg)
        mag = _round_magnitude(x, neg, fmt, mode, rsign)
        over = mag > fmt.max_finite
        if over.any():
            if saturate or not fmt.has_inf:
                mag = np.where(over, fmt.max_finite, mag)
            else:
                toward_zero = _toward_zero(mode, neg)
                mag = np.where(over, np.where(toward_zero, fmt.max_finite, np.inf), mag)
        finite = np.isfinite(x)
        if not finite.all():
            nan = np.isnan(x)
            inf = ~finite & ~nan
            limit = fmt.max_finite if saturate or not fmt.has_inf else np.inf
            if rsign is not None:
                # +-inf with a residual toward zero: a finite value beyond f64's range.
                beyond = inf & (rsign != 0) & ((rsign < 0) != neg)
                inf = inf & ~beyond
                toward_zero = _toward_zero(mode, neg)
                mag = np.where(beyond, np.where(toward_zero, fmt.max_finite, limit), mag)
            mag = np.where(inf, limit, mag)
        if ftz:
            mag = np.where(mag < fmt.min_normal, 0.0, mag)
        if not fmt.has_zero:
            mag = np.maximum(mag, fmt.min_normal)
        out = np.where(neg, -mag, mag) if fmt.signed else mag
        if not finite.all():
            out = np.where(nan, fmt.max_finite if fmt.nan_to_max else np.nan, out)
        return out.astype(fmt.dtype)


def _toward_zero(mode: str, neg: np.ndarray) -> np.ndarray | bool:
    if mode == "zero":
        return True
    if mode == "positive_inf":
        return neg
    if mode == "negative_inf":
        return ~neg
    return False


def _pow2(k: np.ndarray) -> np.ndarray:
    """2.0**k for integer arrays k in [-1022, 1023], built from the exponent bits."""
    return ((k.astype(np.int64) + 1023) << 52).view(np.float64)


def _round_magnitude(x: np.ndarray, neg: np.ndarray, fmt: Format, mode: str, rsign: np.ndarray | None) -> np.ndarray:
    """|round(exact)| for finite x: the format's subnormals below, an exponent range
    unbounded above (results beyond max_finite are for the caller to clamp). Values for
    non-finite x are meaningless.

    The magnitude is scaled by a power of two so that one quantum (ulp) of the target at
    its binade is 1: m = |x| / 2^shift, exact, below 2^p; rounding is then floor / ceil /
    rint of m, with the residual deciding on grid points and midpoints."""
    a = np.abs(x)
    p = fmt.precision
    top = math.frexp(fmt.max_finite)[1] + 1  # binades this far above max overflow anyway
    with np.errstate(invalid="ignore"):
        e = (a.view(np.int64) >> 52) - 1023  # f64 binade (f64 subnormals: far below emin)
    e = np.clip(e, fmt.emin, top)
    shift = e - (p - 1)
    m = a * _pow2(-shift)
    m = np.where(np.isfinite(m), m, 0.0) if not np.isfinite(a).all() else m
    if mode == NEAREST:
        chosen = np.rint(m)  # ties to even
    elif mode == NEAREST_AWAY:
        chosen = np.floor(m + 0.5)  # exact: m < 2^p <= 2^24 here
    elif mode == "zero":
        chosen = np.floor(m)
    else:
        chosen = np.where(_away(mode, neg), np.ceil(m), np.floor(m))
    if rsign is not None:
        # The residual matters only where m lies on a grid point (directed modes: the
        # exact value is just above or below it) or on a midpoint (nearest: the tie is
        # no tie).
        r = np.where(neg, -rsign, rsign)  # residual relative to the magnitude
        t = np.floor(m)
        if mode in (NEAREST, NEAREST_AWAY):
            tie = (r != 0) & (m - t == 0.5)
            if tie.any():
                chosen = np.where(tie, t + (r > 0), chosen)
        else:
            on_grid = (r != 0) & (m == t)
            if on_grid.any():
                away = _away(mode, neg)
                step_up = on_grid & (r > 0) & away
                step_down = on_grid & (r < 0) & ~away
                # Just below a grid point at the bottom of a binade the spacing halves.
                bottom = (t == float(1 << (p - 1))) & (e > fmt.emin)
                chosen = np.where(step_up, t + 1.0, np.where(step_down, t - np.where(bottom, 0.5, 1.0), chosen))
    return chosen * _pow2(shift)


def _away(mode: str, neg: np.ndarray) -> np.ndarray:
    """Whether the mode rounds each magnitude up (away from zero)."""
    if mode == "positive_inf":
        return ~neg
    if mode == "negative_inf":
        return neg
    return np.zeros(neg.shape, dtype=bool)


def _round_f64(x: np.ndarray, mode: str, rsign: np.ndarray | None, ftz: bool, saturate: bool) -> np.ndarray:
    if mode == NEAREST_AWAY and rsign is not None and (rsign != 0).any():
        raise ValueError("nearest_away rounding into f64 needs the exact value")
    out = x.copy() if rsign is None or mode in (NEAREST, NEAREST_AWAY) else x
    if rsign is not None and mode not in (NEAREST, NEAREST_AWAY):
        with np.errstate(invalid="ignore", over="ignore"):
            if mode == "zero":
                step = (rsign != 0) & ((rsign < 0) != np.signbit(x)) & (x != 0)
                out = np.where(step, np.nextafter(x, 0.0), x)
            elif mode == "positive_inf":
                out = np.where(rsign > 0, np.nextafter(x, np.inf), x)
            else:
                out = np.where(rsign < 0, np.nextafter(x, -np.inf), x)
    if saturate:
        out = np.clip(out, -FORMATS["f64"].max_finite, FORMATS["f64"].max_finite)
    if ftz:
        out = flush_subnormals(out, "f64")
    return out


def flush_subnormals(values: np.ndarray, name: str) -> np.ndarray:
    """Subnormal values of format `name` replaced by a zero of the same sign (same dtype)."""
    fmt = format_of(name)
    values = np.asarray(values)
    wide = to_f64(values)
    with np.errstate(invalid="ignore"):
        sub = (np.abs(wide) < fmt.min_normal) & (wide != 0)
    if not sub.any():
        return values
    zeros = np.where(np.signbit(wide), -0.0, 0.0).astype(values.dtype)
    return np.where(sub, zeros, values)


def to_float_type(values: np.ndarray, src_name: str, dst_name: str, mode: str | None = NEAREST) -> np.ndarray:
    """`ftof`: values of format `src_name` (its storage dtype) converted to `dst_name`,
    rounded as `mode` says, with the spec's saturation and NaN rules."""
    format_of(src_name)
    return round_to(to_f64(values), dst_name, mode)


def quiet_nans(x: np.ndarray) -> np.ndarray:
    """`x` with its signaling NaNs made quiet, for NumPy's fmax/fmin: given a signaling NaN they
    return NaN (and their reductions drop what came before it), where maxf/minf, like PTX's
    max/min, give the other operand (IEEE maximumNumber treats both NaNs alike)."""
    with np.errstate(invalid="ignore"):
        nan = np.isnan(x)
        return np.where(nan, np.array(np.nan, dtype=x.dtype), x) if nan.any() else x


def canonical_nan(name: str) -> np.ndarray:
    """The positive quiet NaN with every payload bit set, NVIDIA's canonical NaN, as a 0-d array."""
    fmt = format_of(name)
    bits = {
        "f64": (np.uint64, 0x7FFFFFFFFFFFFFFF),
        "f32": (np.uint32, 0x7FFFFFFF),
        "tf32": (np.uint32, 0x7FFFE000),
        "f16": (np.uint16, 0x7FFF),
        "bf16": (np.uint16, 0x7FFF),
    }
    if name in bits:
        kind, value = bits[name]
        return np.array(value, dtype=kind).view(fmt.dtype)
    return np.array(np.nan).astype(fmt.dtype) if fmt.has_nan else np.array(fmt.max_finite).astype(fmt.dtype)


# -- exactly rounded arithmetic ------------------------------------------------------------

# Formats whose NumPy (ml_dtypes) arithmetic rounds correctly to nearest for + - * / sqrt:
# f32 and f64 natively; f16 and bf16 in f32, then rounded: innocuous double rounding, as
# f32 has at least 2p+2 bits for both (see the module docstring).
_NATIVE = ("f16", "f32", "f64", "bf16")


def _native(name: str, mode: str) -> bool:
    return mode == NEAREST and name in _NATIVE


def plain(name: str, mode: str | None, ftz: bool) -> bool:
    """Whether NumPy's own + - * / sqrt in the storage dtype of `name` are what `add`, `sub`,
    `mul`, `div` and `sqrt` return for this mode (then callers may skip them: the interpreter
    does in its loops, under an errstate of its own)."""
    return not ftz and _native(name, _mode(mode))


def _ftz_in(name: str, ftz: bool, *arrays: np.ndarray) -> list[np.ndarray]:
    return [flush_subnormals(a, name) if ftz else np.asarray(a) for a in arrays]


def _finish(values: np.ndarray, name: str, ftz: bool) -> np.ndarray:
    return flush_subnormals(values, name) if ftz else values


def add(a: np.ndarray, b: np.ndarray, name: str, mode: str | None = NEAREST, ftz: bool = False) -> np.ndarray:
    """a + b in format `name`, rounded as `mode` says (IEEE 754 signed zeros)."""
    mode = _mode(mode)
    a, b = _ftz_in(name, ftz, a, b)
    with np.errstate(all="ignore"):
        if _native(name, mode):
            return _finish(np.add(a, b), name, ftz)
        a64, b64 = to_f64(a), to_f64(b)
        s, e = two_sum(a64, b64)
        rsign = _sign(e)
        overflow = np.isinf(s) & np.isfinite(a64) & np.isfinite(b64)
        rsign = np.where(overflow, -_sign(s), rsign).astype(np.int8)
        out = round_to(s, name, mode, rsign, ftz)
        return _zero_sum_sign(out, s, rsign, a64, b64, mode, name)


def sub(a: np.ndarray, b: np.ndarray, name: str, mode: str | None = NEAREST, ftz: bool = False) -> np.ndarray:
    """a - b in format `name`."""
    return add(a, np.negative(np.asarray(b)), name, mode, ftz)


def _zero_sum_sign(
    out: np.ndarray, s: np.ndarray, rsign: np.ndarray, p: np.ndarray, c: np.ndarray, mode: str, name: str
) -> np.ndarray:
    """IEEE 754: an exactly zero sum is +0 except toward negative infinity, where it is -0,
    unless both addends are zeros of one sign (then that zero)."""
    if mode != "negative_inf":
        return out
    exact_zero = (s == 0) & (rsign == 0)
    both_plus_zero = (p == 0) & (c == 0) & ~np.signbit(p) & ~np.signbit(c)
    fix = exact_zero & ~both_plus_zero
    if not fix.any():
        return out
    return np.where(fix, np.array(-0.0).astype(format_of(name).dtype), out)


def mul(a: np.ndarray, b: np.ndarray, name: str, mode: str | None = NEAREST, ftz: bool = False) -> np.ndarray:
    """a * b in format `name`, rounded as `mode` says."""
    mode = _mode(mode)
    a, b = _ftz_in(name, ftz, a, b)
    with np.errstate(all="ignore"):
        if _native(name, mode):
            return _finish(np.multiply(a, b), name, ftz)
        a64, b64 = to_f64(a), to_f64(b)
        if name != "f64":  # p <= 24 bits: the product is exact in float64
            return round_to(a64 * b64, name, mode, None, ftz)
        p, e = two_prod(a64, b64)
        rsign = _sign(e)
        finite = np.isfinite(a64) & np.isfinite(b64)
        rsign = np.where(finite & np.isfinite(p), rsign, np.where(finite, -_sign(p), 0)).astype(np.int8)
        slow = finite & np.isfinite(p) & ~_product_safe(a64, b64, p)
        p, rsign = _fallback(slow, p, rsign, lambda u, v: u * v, a64, b64)
        return round_to(p, name, mode, rsign, ftz)


def div(a: np.ndarray, b: np.ndarray, name: str, mode: str | None = NEAREST, ftz: bool = False) -> np.ndarray:
    """a / b in format `name`, rounded as `mode` says."""
    mode = _mode(mode)
    a, b = _ftz_in(name, ftz, a, b)
    with np.errstate(all="ignore"):
        if _native(name, mode):
            return _finish(np.divide(a, b), name, ftz)
        a64, b64 = to_f64(a), to_f64(b)
        q = a64 / b64
        regular = np.isfinite(a64) & np.isfinite(b64) & (a64 != 0) & (b64 != 0)
        p, pe = two_prod(q, b64)
        rsign = (sum_sign([a64, -p, -pe]) * _sign(b64)).astype(np.int8)
        safe = regular & np.isfinite(q) & _product_safe(q, b64, p) & (np.abs(a64) >= _TINY) & (np.abs(a64) < _HUGE)
        rsign = np.where(safe, rsign, 0).astype(np.int8)
        overflow = regular & np.isinf(q)
        rsign = np.where(overflow, -_sign(q), rsign).astype(np.int8)
        slow = regular & ~safe & ~overflow
        q, rsign = _fallback(slow, q, rsign, lambda u, v: u / v, a64, b64)
        return round_to(q, name, mode, rsign, ftz)


def sqrt(a: np.ndarray, name: str, mode: str | None = NEAREST, ftz: bool = False) -> np.ndarray:
    """sqrt(a) in format `name`, rounded as `mode` says (sqrt(-0) = -0, negative: NaN)."""
    mode = _mode(mode)
    (a,) = _ftz_in(name, ftz, a)
    with np.errstate(all="ignore"):
        if _native(name, mode):
            return _finish(np.sqrt(a), name, ftz)
        a64 = to_f64(a)
        q = np.sqrt(a64)
        regular = np.isfinite(a64) & (a64 > 0)
        p, pe = two_prod(q, q)
        rsign = sum_sign([a64, -p, -pe])
        safe = regular & (a64 >= _TINY)
        rsign = np.where(safe, rsign, 0).astype(np.int8)
        slow = regular & ~safe
        if slow.any():
            idx = np.flatnonzero(slow)
            flat_r = rsign.reshape(-1)
            flat_a = a64.reshape(-1)
            for i in idx:
                root = float(math.sqrt(flat_a[i]))
                diff = Fraction(float(flat_a[i])) - Fraction(root) ** 2
                flat_r[i] = (diff > 0) - (diff < 0)
        return round_to(q, name, mode, rsign, ftz)


def fma(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, name: str, mode: str | None = NEAREST, ftz: bool = False
) -> np.ndarray:
    """a * b + c with a single rounding, in format `name`, rounded as `mode` says."""
    mode = _mode(mode)
    a, b, c = _ftz_in(name, ftz, a, b, c)
    with np.errstate(all="ignore"):
        a64, b64, c64 = to_f64(a), to_f64(b), to_f64(c)
        finite = np.isfinite(a64) & np.isfinite(b64) & np.isfinite(c64)
        if name != "f64":
            prod = a64 * b64  # exact in float64
            s, e = two_sum(prod, c64)
            rsign = np.where(finite, _sign(e), 0).astype(np.int8)
            out = round_to(s, name, mode, rsign, ftz)
            return _zero_sum_sign(out, s, rsign, prod, c64, mode, name)
        uh, ul = two_prod(a64, b64)
        th, tl = two_sum(c64, uh)
        v = _round_to_odd_add(tl, ul)
        x = th + v
        naive = a64 * b64 + c64  # right for the non-finite cases (inf, NaN)
        x = np.where(finite, x, naive)
        rsign = np.where(finite, sum_sign([ul, c64, uh, -x]), 0).astype(np.int8)
        safe = (
            finite
            & _product_safe(a64, b64, uh)
            & (np.abs(c64) < _HUGE)
            & np.isfinite(x)
            & ((np.abs(c64) >= _TINY) | (c64 == 0))
            & ((np.abs(x) >= _TINY) | (x == 0))
        )
        slow = finite & ~safe
        x, rsign = _fallback(slow, x, rsign, lambda u, v, w: u * v + w, a64, b64, c64)
        out = round_to(x, name, mode, rsign, ftz)
        return _zero_sum_sign(out, x, rsign, a64 * b64, c64, mode, name)


def _fallback(
    mask: np.ndarray, x: np.ndarray, rsign: np.ndarray, fn: Callable[..., Fraction], *operands: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Recompute (x, residual sign) exactly with Fractions where `mask` is set (rare: operands
    or results near the ends of the f64 range)."""
    if not mask.any():
        return x, rsign
    shape = np.broadcast_shapes(mask.shape, x.shape, *(o.shape for o in operands))
    # order="C": the flat views below must be views (a copy keeps a strided or transposed
    # operand's layout by default, and reshape(-1) of that copies)
    x = np.array(np.broadcast_to(x, shape), order="C")
    rsign = np.array(np.broadcast_to(rsign, shape), dtype=np.int8, order="C")
    flat_ops = [np.broadcast_to(o, shape).reshape(-1) for o in operands]
    flat_x, flat_r = x.reshape(-1), rsign.reshape(-1)
    for i in np.flatnonzero(np.broadcast_to(mask, shape)):
        exact = fn(*(Fraction(float(o[i])) for o in flat_ops))
        if exact == 0:
            flat_r[i] = 0
            continue
        try:
            near = float(exact)  # correctly rounded to nearest even, subnormals included
        except OverflowError:
            near = math.inf if exact > 0 else -math.inf
            flat_x[i], flat_r[i] = near, (-1 if exact > 0 else 1)
            continue
        diff = exact - Fraction(near)
        flat_x[i], flat_r[i] = near, (diff > 0) - (diff < 0)
    return x, rsign


__all__ = [
    "DIRECTED",
    "FORMATS",
    "NEAREST",
    "NEAREST_AWAY",
    "ROUNDINGS",
    "plain",
    "Format",
    "add",
    "canonical_nan",
    "div",
    "flush_subnormals",
    "fma",
    "format_of",
    "mul",
    "round_to",
    "sqrt",
    "sub",
    "sum_sign",
    "to_f64",
    "to_float_type",
    "two_prod",
    "two_sum",
]
