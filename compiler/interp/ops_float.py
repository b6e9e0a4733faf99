"""Semantics of the floating-point ops: arithmetic, comparison, min/max and math functions.

Element types: f16, bf16, f32 and f64 (the ops' `BaseFloatTileType`); tile values are
arrays of the storage dtype (bf16 through ml_dtypes).

Arithmetic (`addf`, `subf`, `mulf`, `divf`, `fma`, `sqrt`) is correctly rounded in every
rounding mode and type: see `rounding` (nearest-even goes through NumPy where that is
already exact, directed modes through error-free transformations). `divf` and `sqrt`
with `approx` / `full`, which ask for a faster implementation with up to 2 ulp of error
on the GPU, give the correctly rounded result, except where the op reference fixes another:
f32 `divf` `approx` with 2^126 < |rhs| gives 0 (NaN for an infinite lhs). `flush_to_zero` flushes subnormal inputs
and (after rounding, spec 5.1.3) subnormal results to zeros of the same sign; the op
verifier admits it on f32 only.

`absf`, `negf`, `ceil`, `floor`, `remf` (C's fmod, truncated division), `maxf`, `minf`
and `cmpf` are exact.

Math functions (`exp`, `exp2`, `log`, `log2`, `sin`, `cos`, `tan`, `sinh`, `cosh`,
`tanh`, `pow`, `atan2`, `rsqrt`) are evaluated with NumPy in float64 and rounded once to
the result type, nearest-even:

* f16, bf16 and f32 results: within 1 ulp; the float64 value carries at most a couple
  of f64 ulps of error (NumPy / libm), so the result is the correctly rounded one except
  when the exact value lies within ~2^-50 relative of a midpoint. (The GPU emulates
  f16/bf16 in f32, whose own error can make it differ from this result by 1 ulp.)
* f64 results: NumPy's float64 routines, within 4 ulp (glibc documents <= 2 ulp for
  these functions; rsqrt is 1/sqrt, two roundings, within 2 ulp).

`exp` and `tanh` with `rounding<approx>` give the same (more accurate) result as `full`.
`atan2(x, y)` is atan(x / y) with the quadrant taken from the signs of both operands:
the first operand is the numerator, as in C's atan2 (atan2(1, 0) = pi/2, atan2(0, -1) = pi).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ir.types import FloatType
from . import dtypes, rounding
from .registry import Ctx, semantics

_NATIVE = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _name(ctx: Ctx) -> str:
    """The result's element type name ("f32", "bf16", ...)."""
    t = dtypes.element_of(ctx.result_type())
    assert isinstance(t, FloatType)
    return t.name


_FLOAT_MODES = (rounding.NEAREST, *rounding.DIRECTED, "approx", "full")


def _mode(ctx: Ctx) -> str:
    """The op's rounding mode (the verifier admits only float modes; checked all the same)."""
    mode = ctx.keyword("rounding_mode", rounding.NEAREST) or rounding.NEAREST
    if mode not in _FLOAT_MODES:
        raise ctx.error(f"rounding mode '{mode}' does not apply to a float result")
    return mode


# -- arithmetic ----------------------------------------------------------------------------


def _arith(ctx: Ctx) -> tuple[str, str, bool, bool]:
    """(format, rounding mode, flush_to_zero, plain): plain where NumPy's own operation is the
    result (`rounding.plain`; the machine runs ops under errstate(all="ignore")). Once per op
    (`Ctx.static`): in a loop of small tiles, deriving these took as long as the arithmetic."""
    name, mode, ftz = _name(ctx), _mode(ctx), ctx.flag("flush_to_zero")
    return name, mode, ftz, rounding.plain(name, mode, ftz)


@semantics("addf")
def _addf(ctx: Ctx) -> np.ndarray:
    name, mode, ftz, plain = ctx.static(_arith)
    lhs, rhs = ctx.args
    return np.add(lhs, rhs) if plain else rounding.add(lhs, rhs, name, mode, ftz)


@semantics("subf")
def _subf(ctx: Ctx) -> np.ndarray:
    name, mode, ftz, plain = ctx.static(_arith)
    lhs, rhs = ctx.args
    # (as rounding.sub: lhs + -rhs, which keeps the NaN sign rounding.sub gives)
    return np.add(lhs, np.negative(rhs)) if plain else rounding.sub(lhs, rhs, name, mode, ftz)


@semantics("mulf")
def _mulf(ctx: Ctx) -> np.ndarray:
    name, mode, ftz, plain = ctx.static(_arith)
    lhs, rhs = ctx.args
    return np.multiply(lhs, rhs) if plain else rounding.mul(lhs, rhs, name, mode, ftz)


@semantics("divf")
def _divf(ctx: Ctx) -> np.ndarray:
    lhs, rhs = ctx.args
    name, mode, ftz, plain = ctx.static(_arith)
    out = np.divide(lhs, rhs) if plain else rounding.div(lhs, rhs, name, mode, ftz)
    if mode == "approx" and name == "f32":
        out = approx_beyond_2_126(lhs, rhs, out)
    return out


# 2^126 < |rhs| <= FLT_MAX: where `approx` (a multiplication by the reciprocal) is documented
# to give 0 (NaN for an infinite lhs), not a quotient: cuda-tile Ops.td, DivFOp ("For
# 2^(126) < |rhs| < 2^(128), if lhs is infinity the operation returns NaN, otherwise 0"), and
# tileiras' code does so (the reciprocal is subnormal and flushed).
_TWO_126 = np.float32(2.0**126)


def approx_beyond_2_126(lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray) -> np.ndarray:
    """`out` with the documented result of f32 `divf rounding<approx>` where |rhs| > 2^126:
    lhs times a zero of rhs's sign (0 with the product's sign; NaN for an infinite or NaN
    lhs)."""
    beyond = (np.abs(rhs) > _TWO_126) & np.isfinite(rhs)
    if not beyond.any():
        return out
    with np.errstate(invalid="ignore"):
        zeroed = lhs * np.copysign(np.float32(0), rhs)
    return np.where(beyond, zeroed, out).astype(out.dtype, copy=False)


@semantics("sqrt")
def _sqrt(ctx: Ctx) -> np.ndarray:
    return rounding.sqrt(ctx.args[0], _name(ctx), _mode(ctx), ctx.flag("flush_to_zero"))


@semantics("fma")
def _fma(ctx: Ctx) -> np.ndarray:
    lhs, rhs, acc = ctx.args
    return rounding.fma(lhs, rhs, acc, _name(ctx), _mode(ctx), ctx.flag("flush_to_zero"))


# -- exact ops -----------------------------------------------------------------------------


def _in_native(x: np.ndarray) -> np.ndarray:
    """`x` in a dtype NumPy computes with natively (bf16 goes to float64, exactly)."""
    if x.dtype in _NATIVE:
        return x
    with np.errstate(invalid="ignore"):  # a signaling NaN becomes a quiet one
        return x.astype(np.float64)


def _back(values: np.ndarray, ctx: Ctx) -> np.ndarray:
    dtype = dtypes.storage_dtype(ctx.result_type())
    if values.dtype == dtype:
        return values
    with np.errstate(invalid="ignore"):  # NaNs
        return values.astype(dtype)  # exact: the values fit


@semantics("absf")
def _absf(ctx: Ctx) -> np.ndarray:
    return np.abs(ctx.args[0])


@semantics("negf")
def _negf(ctx: Ctx) -> np.ndarray:
    return np.negative(ctx.args[0])


@semantics("ceil")
def _ceil(ctx: Ctx) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # a signaling NaN
        return _back(np.ceil(_in_native(ctx.args[0])), ctx)


@semantics("floor")
def _floor(ctx: Ctx) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # a signaling NaN
        return _back(np.floor(_in_native(ctx.args[0])), ctx)


@semantics("remf")
def _remf(ctx: Ctx) -> np.ndarray:
    lhs, rhs = ctx.args
    with np.errstate(invalid="ignore", divide="ignore"):
        # fmod is exact: x - trunc(x/y)*y is representable; NaN for y = 0 or x = inf, x for y = inf.
        return _back(np.fmod(_in_native(lhs), _in_native(rhs)), ctx)


_PREDICATES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less_than": np.less,
    "less_than_or_equal": np.less_equal,
    "greater_than": np.greater,
    "greater_than_or_equal": np.greater_equal,
}


@semantics("cmpf")
def _cmpf(ctx: Ctx) -> np.ndarray:
    lhs, rhs = (_in_native(a) for a in ctx.args)
    predicate = _PREDICATES[ctx.keyword("comparison_predicate", "equal") or "equal"]
    ordered = (ctx.keyword("comparison_ordering", "ordered") or "ordered") == "ordered"
    with np.errstate(invalid="ignore"):
        result = predicate(lhs, rhs)
        unordered = np.isnan(lhs) | np.isnan(rhs)
    # IEEE comparisons are false with a NaN, except not_equal (true): fix both up.
    return result & ~unordered if ordered else result | unordered


def _min_max(ctx: Ctx, is_max: bool) -> np.ndarray:
    name = _name(ctx)
    ftz = ctx.flag("flush_to_zero")
    lhs, rhs = ctx.args
    if ftz:
        lhs, rhs = rounding.flush_subnormals(lhs, name), rounding.flush_subnormals(rhs, name)
    a, b = rounding.quiet_nans(_in_native(lhs)), rounding.quiet_nans(_in_native(rhs))
    with np.errstate(invalid="ignore"):
        # fmax/fmin: the non-NaN operand where one is NaN (IEEE maximumNumber/minimumNumber).
        out = np.fmax(a, b) if is_max else np.fmin(a, b)
        # Signed zeros: +0 is greater than -0.
        zeros = (a == 0) & (b == 0)
        if zeros.any():
            either_neg = np.signbit(a) | np.signbit(b)
            both_neg = np.signbit(a) & np.signbit(b)
            neg = both_neg if is_max else either_neg
            out = np.where(zeros, np.where(neg, -0.0, 0.0).astype(out.dtype), out)
        nan = (np.isnan(a) | np.isnan(b)) if ctx.flag("propagate_nan") else np.isnan(out)
    out = _back(out, ctx)
    if nan.any():  # NaN results are the canonical NaN
        out = np.where(nan, rounding.canonical_nan(name), out)
    return rounding.flush_subnormals(out, name) if ftz else out


@semantics("maxf")
def _maxf(ctx: Ctx) -> np.ndarray:
    return _min_max(ctx, True)


@semantics("minf")
def _minf(ctx: Ctx) -> np.ndarray:
    return _min_max(ctx, False)


# -- math functions ------------------------------------------------------------------------


def _math(ctx: Ctx, fn: Callable[..., np.ndarray], ftz: bool = False) -> np.ndarray:
    """fn evaluated in float64 on the operands, rounded once to the result type."""
    name = _name(ctx)
    args = ctx.args
    if ftz:
        args = [rounding.flush_subnormals(a, name) for a in args]
    with np.errstate(all="ignore"):
        if name == "f32" and not ftz and isinstance(fn, np.ufunc):
            # The same float64 evaluation and single rounding, without float64 temporaries:
            # the ufunc loop widens each element, and the cast to the f32 output rounds to
            # nearest-even (halves the time of softmax's `exp`).
            shape = np.broadcast_shapes(*(a.shape for a in args))
            out = np.empty(shape, dtype=np.float32)
            return fn(*args, out=out, dtype=np.float64, casting="unsafe")
        values = fn(*(rounding.to_f64(a) for a in args))
    return rounding.round_to(values, name, rounding.NEAREST, ftz=ftz)


def _register_math(mnemonic: str, fn: Callable[..., np.ndarray], has_ftz: bool = False) -> None:
    def run(ctx: Ctx) -> np.ndarray:
        return _math(ctx, fn, has_ftz and ctx.flag("flush_to_zero"))

    run.__name__ = f"_{mnemonic}"
    semantics(mnemonic)(run)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


for _mnemonic, _fn in (
    ("exp", np.exp),
    ("log", np.log),
    ("log2", np.log2),
    ("sin", np.sin),
    ("cos", np.cos),
    ("tan", np.tan),
    ("sinh", np.sinh),
    ("cosh", np.cosh),
    ("tanh", np.tanh),
    ("pow", np.power),
    ("atan2", np.arctan2),
):
    _register_math(_mnemonic, _fn)
_register_math("exp2", np.exp2, has_ftz=True)
_register_math("rsqrt", _rsqrt, has_ftz=True)


@semantics("fpowi")
def _fpowi(ctx: Ctx) -> np.ndarray:
    """x ** n as tileiras computes it (seen in its SASS): in f32 (f64 for f64; f16 and bf16
    widened, rounded once at the end), the product over the set bits of |n| from the lowest
    of the repeated squares of x, each multiply rounded to nearest; for n < 0 the correctly
    rounded reciprocal of that product. An i1 exponent is signed: true is -1."""
    x, n = ctx.args
    work = np.float64 if x.dtype == np.float64 else np.float32
    one = work(1)
    e = -n.astype(np.int64) if n.dtype == np.bool_ else n.astype(np.int64)
    m = np.abs(e)
    a = np.asarray(x).astype(work)
    with np.errstate(all="ignore"):
        r = np.where(m & 1, a * one, one)
        m = m >> 1
        while m.any():
            a = a * a
            r = np.where(m & 1, r * a, r)
            m = m >> 1
        r = np.where(e < 0, one / r, r)
        return np.broadcast_to(r, np.broadcast_shapes(np.shape(x), np.shape(n))).astype(x.dtype)
