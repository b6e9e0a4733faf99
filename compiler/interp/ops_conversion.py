"""Semantics of the numeric conversions `ftof`, `ftoi` and `itof`.

* `ftof`: exact rounding into the result format (`rounding.to_float_type`), with the
  spec's conversion table (5.1.3): overflow to +-inf for f16/bf16/f32/tf32/f64, saturation
  to +-MAX_NORM for the f8 and f4 formats (infinities included); NaN to NaN (f8E4M3FN:
  0x7F, as tileiras and the hardware give, where the table says +MAX_NORM; see
  `rounding`), and to +MAX_NORM for f4E2M1FN, which has no NaN; f8E8M0FNU takes the
  magnitude rounded toward zero or +inf to a power of two in [2^-127, 2^127].
* `ftoi` (`nearest_int_to_zero`): truncation toward zero. A NaN, an infinity or a value
  out of the integer type's range gives a result the spec leaves undefined to use; we
  return what PTX's `cvt.rzi` to a 32- or 64-bit integer does (it saturates): the nearest end
  of the range, and 0 for NaN. (tileiras 13.5 converts to i8 through 16 bits and keeps the
  low byte: on an H200, tests/lower checks it as it finds it.) `signed` / `unsigned` pick
  the range. To i1, signed or unsigned, the result is `x != 0` (NaN: true), not the
  truncation the op's description gives (0.5 would be false): NVIDIA's tools agree on it
  and the tools win. tileiras compiles it so (FSETP.NEU, on an H200 too), and cuTile Python
  exports `astype(bool)` of a float as `ftoi unsigned` to i1, its own tests expecting NumPy's
  `x != 0`.
* `itof`: the integer read as signed or unsigned (i1 signed: true is -1), rounded exactly
  (64-bit integers too) in the op's rounding mode; out of range as for `ftof` (the op's
  own description says NaN for types without infinity; the spec's table, which we
  follow, saturates f8E4M3FN, f8E5M2 and f4E2M1FN).
"""

from __future__ import annotations

import numpy as np

from ..ir.types import FloatType, IntegerType
from . import dtypes, rounding
from .registry import Ctx, semantics

_LOW32 = np.int64(0xFFFFFFFF)


def _float_name(t) -> str:
    e = dtypes.element_of(t)
    assert isinstance(e, FloatType)
    return e.name


def _int_width(t) -> int:
    e = dtypes.element_of(t)
    assert isinstance(e, IntegerType)
    return e.width


def _float_mode(ctx: Ctx) -> str:
    """The op's rounding mode for a float result (the verifier admits only those)."""
    mode = ctx.keyword("rounding_mode", rounding.NEAREST) or rounding.NEAREST
    if mode not in rounding.ROUNDINGS:
        raise ctx.error(f"rounding mode '{mode}' does not apply to a float result")
    return mode


@semantics("ftof")
def _ftof(ctx: Ctx) -> np.ndarray:
    src, dst = _float_name(ctx.operand_type()), _float_name(ctx.result_type())
    (x,) = ctx.args
    if src == dst:
        return x
    return rounding.to_float_type(x, src, dst, _float_mode(ctx))


@semantics("ftoi")
def _ftoi(ctx: Ctx) -> np.ndarray:
    (x,) = ctx.args
    width = _int_width(ctx.result_type())
    if width == 1:
        return rounding.to_f64(x) != 0  # (see the module's doc)
    signed = ctx.keyword("signedness", "signed") == "signed"
    return float_to_int(rounding.to_f64(x), width, signed)


def float_to_int(x: np.ndarray, width: int, signed: bool) -> np.ndarray:
    """float64 values truncated toward zero into iW storage (W >= 8), saturating; NaN gives 0."""
    with np.errstate(invalid="ignore"):
        t = np.trunc(x)
        t = np.where(np.isnan(t), 0.0, t)
    if signed:
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    else:
        lo, hi = 0, (1 << width) - 1
    if width < 64:
        wide = np.clip(t, lo, hi).astype(np.int64)
        if signed:
            return wide.astype(np.dtype(f"i{width // 8}"))
        return wide.astype(np.dtype(f"u{width // 8}")).view(np.dtype(f"i{width // 8}"))
    # 64 bits: 2^63 (2^64 unsigned) and beyond do not fit the cast; the largest float64
    # below them is 2^63 - 1024 (2^64 - 2048).
    if signed:
        inside = np.clip(t, -(2.0**63), 2.0**63 - 1024).astype(np.int64)
        return np.where(t >= 2.0**63, np.int64(hi), inside)
    inside = np.clip(t, 0.0, 2.0**64 - 2048).astype(np.uint64)
    return np.where(t >= 2.0**64, np.uint64(hi), inside).view(np.int64)


@semantics("itof")
def _itof(ctx: Ctx) -> np.ndarray:
    (x,) = ctx.args
    dst = _float_name(ctx.result_type())
    signed = ctx.keyword("signedness", "signed") == "signed"
    value, residual = int_to_f64(x, signed)
    return rounding.round_to(value, dst, _float_mode(ctx), residual)


def int_to_f64(x: np.ndarray, signed: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """Integer storage read as signed or unsigned, as the nearest float64 and the residual
    (exact value - float64; None when exact, which it is below 54 bits)."""
    if x.dtype == np.bool_:
        return (np.where(x, -1.0, 0.0) if signed else x.astype(np.float64)), None
    if x.dtype.itemsize < 8:
        return (x if signed else dtypes.as_unsigned(x)).astype(np.float64), None
    # 64 bits: the high and low 32-bit halves are exact in float64; TwoSum adds them.
    if signed:
        high = (x & ~_LOW32).astype(np.float64)
    else:
        high = (dtypes.as_unsigned(x) & ~np.uint64(0xFFFFFFFF)).astype(np.float64)
    low = (x & _LOW32).astype(np.float64)
    return rounding.two_sum(high, low)
