"""Semantics of the integer arithmetic, bitwise, shift and comparison ops.

Integers are signless: a tile of iN holds two's-complement bit patterns in its storage
dtype (`dtypes.py`), and an op's `signedness` decides how they are read. Results wrap
around modulo 2**N, as the hardware's integer instructions do.

i1 is stored as bool. Read as signed, `true` is -1; read as unsigned, it is 1. Every op
here treats i1 as the 1-bit integer it is (`addi` is xor, `muli` is and, signed
`maxi` is and, ...), by computing on an int8/uint8 view of the bools and keeping the
lowest bit of the result.

Undefined behaviour reported (`InterpError`):
- `divi`/`remi` by zero: "integer division by zero";
- signed `divi` of the minimum value by -1 (the op reference makes it undefined);
- an `overflow<...>` flag broken at run time: the flags are promises to the compiler,
  and the op reference makes a wrap-around that a flag rules out undefined. Without
  flags, results simply wrap.

Shift amounts (`rhs` of `shli`/`shri`, always read as unsigned) of at least the bit
width are not covered by the op reference; the interpreter follows the hardware's
native shifts, which clamp the amount to the width: `shli` and unsigned `shri` give
0, signed `shri` gives 0 or -1 (the sign filled in). No undefined behaviour is
reported for them.
"""

from __future__ import annotations

import numpy as np

from ..ir.types import IntegerType
from . import dtypes
from .registry import Ctx, semantics

_BOOL = np.dtype(np.bool_)


def _width(t) -> int:
    e = dtypes.element_of(t)
    assert isinstance(e, IntegerType)
    return e.width


def _signed(x: np.ndarray) -> np.ndarray:
    """The values read as signed integers (i1: 0 / -1 in int8)."""
    if x.dtype == _BOOL:
        return np.negative(x.view(np.int8))
    return x


def _unsigned(x: np.ndarray) -> np.ndarray:
    """The values read as unsigned integers (i1: 0 / 1 in uint8); no copy."""
    if x.dtype == _BOOL:
        return x.view(np.uint8)
    return dtypes.as_unsigned(x)


def _wrapping(x: np.ndarray) -> np.ndarray:
    """A view of `x` on which NumPy's integer arithmetic wraps like the op (i1: int8 0/1)."""
    return x.view(np.int8) if x.dtype == _BOOL else x


def _store(r: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`r` (any integer dtype) back in the storage dtype, keeping the low bits."""
    if dtype == _BOOL:
        return (r & 1).astype(np.bool_)
    if r.dtype == dtype:
        return r
    if r.dtype.itemsize == dtype.itemsize:
        return r.view(dtype)
    return r.astype(dtype)


def _bounds(width: int) -> tuple[int, int, int]:
    """(signed minimum, signed maximum, unsigned maximum) of an iN."""
    return -(1 << (width - 1)), (1 << (width - 1)) - 1, (1 << width) - 1


# -- overflow flags ------------------------------------------------------------------------


def _overflow_flags(ctx: Ctx) -> tuple[str, bool, bool]:
    """(flag keyword, no signed wrap promised, no unsigned wrap promised)."""
    kw = ctx.keyword("overflow", "none") or "none"
    return kw, kw in ("no_signed_wrap", "no_wrap"), kw in ("no_unsigned_wrap", "no_wrap")


def _check_wrap(ctx: Ctx, keyword: str, bad: np.ndarray, kind: str) -> None:
    if bad.any():
        raise ctx.error(f"{kind} wrap-around despite overflow<{keyword}>", blocks=bad)


def _exact_signed(x: np.ndarray) -> np.ndarray:
    return _signed(x).astype(np.int64)


def _exact_unsigned(x: np.ndarray) -> np.ndarray:
    return _unsigned(x).astype(np.uint64)


# -- add, sub, mul -------------------------------------------------------------------------


@semantics("addi")
def _addi(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    with np.errstate(all="ignore"):
        r = np.add(_wrapping(a), _wrapping(b))
        keyword, nsw, nuw = _overflow_flags(ctx)
        if nsw or nuw:
            w = _width(ctx.result_type())
            lo, hi, umax = _bounds(w)
            if nsw:
                if w < 64:
                    s = np.add(_exact_signed(a), _exact_signed(b))
                    bad = (s < lo) | (s > hi)
                else:
                    bad = ((a ^ r) & (b ^ r)) < 0
                _check_wrap(ctx, keyword, bad, "signed")
            if nuw:
                if w < 64:
                    bad = np.add(_exact_unsigned(a), _exact_unsigned(b)) > np.uint64(umax)
                else:
                    bad = _unsigned(r) < _unsigned(a)
                _check_wrap(ctx, keyword, bad, "unsigned")
    return _store(r, a.dtype)


@semantics("subi")
def _subi(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    with np.errstate(all="ignore"):
        r = np.subtract(_wrapping(a), _wrapping(b))
        keyword, nsw, nuw = _overflow_flags(ctx)
        if nsw:
            w = _width(ctx.result_type())
            lo, hi, _ = _bounds(w)
            if w < 64:
                d = np.subtract(_exact_signed(a), _exact_signed(b))
                bad = (d < lo) | (d > hi)
            else:
                bad = ((a ^ b) & (a ^ r)) < 0
            _check_wrap(ctx, keyword, bad, "signed")
        if nuw:
            _check_wrap(ctx, keyword, _unsigned(a) < _unsigned(b), "unsigned")
    return _store(r, a.dtype)


@semantics("muli")
def _muli(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    with np.errstate(all="ignore"):
        r = np.multiply(_wrapping(a), _wrapping(b))
        keyword, nsw, nuw = _overflow_flags(ctx)
        if nsw or nuw:
            w = _width(ctx.result_type())
            lo, hi, umax = _bounds(w)
            if nsw:
                if w < 64:
                    p = np.multiply(_exact_signed(a), _exact_signed(b))
                    bad = (p < lo) | (p > hi)
                else:
                    # r wrapped iff dividing it back by a does not give b (a != 0); the
                    # one quotient that itself wraps, MIN / -1, is MIN * -1.
                    safe = np.where(a == 0, np.int64(1), a)
                    bad = ((a != 0) & (np.floor_divide(r, safe) != b)) | ((a == -1) & (b == lo))
                _check_wrap(ctx, keyword, bad, "signed")
            if nuw:
                if w < 64:
                    bad = np.multiply(_exact_unsigned(a), _exact_unsigned(b)) > np.uint64(umax)
                else:
                    ua, ub = _unsigned(a), _unsigned(b)
                    safe = np.where(ua == 0, np.uint64(1), ua)
                    bad = (ua != 0) & (np.floor_divide(_unsigned(r), safe) != ub)
                _check_wrap(ctx, keyword, bad, "unsigned")
    return _store(r, a.dtype)


def _mulhi_u64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The high 64 bits of the 128-bit product of uint64 arrays, from 32-bit halves."""
    m = np.uint64(0xFFFFFFFF)
    s = np.uint64(32)
    al, ah = a & m, a >> s
    bl, bh = b & m, b >> s
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> s) + (lh & m) + (hl & m)  # < 3 * 2**32: no wrap
    return hh + (lh >> s) + (hl >> s) + (mid >> s)


@semantics("mulhii")
def _mulhii(ctx: Ctx) -> np.ndarray:
    # The op reference defines mulhii for unsigned operands only.
    a, b = ctx.args
    w = _width(ctx.result_type())
    with np.errstate(all="ignore"):
        if w < 64:
            r = np.multiply(_exact_unsigned(a), _exact_unsigned(b)) >> np.uint64(w)
        else:
            r = _mulhi_u64(_unsigned(a), _unsigned(b))
    return _store(r, a.dtype)


# -- division ------------------------------------------------------------------------------


def _check_divisor(ctx: Ctx, y: np.ndarray) -> None:
    zero = y == 0
    if zero.any():
        raise ctx.error("integer division by zero", blocks=zero)


@semantics("divi")
def _divi(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    signed = ctx.keyword("signedness") == "signed"
    mode = ctx.keyword("rounding", "zero") or "zero"
    x, y = (_signed(a), _signed(b)) if signed else (_unsigned(a), _unsigned(b))
    _check_divisor(ctx, y)
    with np.errstate(all="ignore"):
        if signed:
            lo = _bounds(_width(ctx.result_type()))[0]
            overflow = (x == lo) & (y == -1)
            if overflow.any():
                raise ctx.error("signed integer division overflow (minimum value divided by -1)", blocks=overflow)
        q = np.floor_divide(x, y)
        if mode != "negative_inf":
            inexact = np.subtract(x, np.multiply(q, y)) != 0
            if mode == "positive_inf":
                q = q + inexact
            elif signed:  # toward zero: floor and trunc differ when the signs differ
                q = q + (inexact & ((x < 0) != (y < 0)))
    return _store(q, a.dtype)


@semantics("remi")
def _remi(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    signed = ctx.keyword("signedness") == "signed"
    x, y = (_signed(a), _signed(b)) if signed else (_unsigned(a), _unsigned(b))
    _check_divisor(ctx, y)
    with np.errstate(all="ignore"):
        if signed:
            # Truncated remainder (the sign of the dividend). Any x rem -1 is 0, as is
            # x rem 1; dividing by 1 instead keeps MIN rem -1 away from the hardware trap.
            r = np.fmod(x, np.where(y == -1, np.ones((), dtype=y.dtype), y))
        else:
            r = np.remainder(x, y)
    return _store(r, a.dtype)


# -- bitwise and shifts --------------------------------------------------------------------


@semantics("andi")
def _andi(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    return np.bitwise_and(a, b)


@semantics("ori")
def _ori(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    return np.bitwise_or(a, b)


@semantics("xori")
def _xori(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    return np.bitwise_xor(a, b)


def _shift_amount(b: np.ndarray, w: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """(amounts at least the width, amounts clamped to width - 1 in `dtype`)."""
    s = _unsigned(b)
    big = s >= w
    clamped = np.minimum(s, s.dtype.type(w - 1)).astype(dtype)
    return big, clamped


@semantics("shli")
def _shli(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    w = _width(ctx.result_type())
    u = _unsigned(a)
    big, amount = _shift_amount(b, w, u.dtype)
    with np.errstate(all="ignore"):
        r = np.where(big, u.dtype.type(0), np.left_shift(u, amount))
        keyword, nsw, nuw = _overflow_flags(ctx)
        if nsw or nuw:
            lost = big & (u != 0)  # a nonzero value shifted out entirely
            if nsw:
                if a.dtype == _BOOL:
                    bad = lost
                else:
                    bad = lost | (np.right_shift(r.view(a.dtype), amount.view(a.dtype)) != a)
                _check_wrap(ctx, keyword, bad, "signed")
            if nuw:
                _check_wrap(ctx, keyword, lost | (np.right_shift(r, amount) != u), "unsigned")
    return _store(r, a.dtype)


@semantics("shri")
def _shri(ctx: Ctx) -> np.ndarray:
    a, b = ctx.args
    w = _width(ctx.result_type())
    with np.errstate(all="ignore"):
        if ctx.keyword("signedness") == "signed":
            x = _signed(a)
            # An arithmetic shift by width - 1 already fills every bit with the sign.
            _, amount = _shift_amount(b, w, x.dtype)
            r = np.right_shift(x, amount)
        else:
            u = _unsigned(a)
            big, amount = _shift_amount(b, w, u.dtype)
            r = np.where(big, u.dtype.type(0), np.right_shift(u, amount))
    return _store(r, a.dtype)


# -- max, min, neg, abs, cmp ---------------------------------------------------------------


def _views(ctx: Ctx) -> tuple[np.ndarray, np.ndarray]:
    a, b = ctx.args
    if ctx.keyword("signedness") == "signed":
        return _signed(a), _signed(b)
    return _unsigned(a), _unsigned(b)


@semantics("maxi")
def _maxi(ctx: Ctx) -> np.ndarray:
    x, y = _views(ctx)
    return _store(np.maximum(x, y), ctx.args[0].dtype)


@semantics("mini")
def _mini(ctx: Ctx) -> np.ndarray:
    x, y = _views(ctx)
    return _store(np.minimum(x, y), ctx.args[0].dtype)


@semantics("negi")
def _negi(ctx: Ctx) -> np.ndarray:
    (a,) = ctx.args
    keyword, nsw, _ = _overflow_flags(ctx)  # the verifier rejects no_unsigned_wrap
    if nsw:
        lo = _bounds(_width(ctx.result_type()))[0]
        _check_wrap(ctx, keyword, _signed(a) == lo, "signed")
    if a.dtype == _BOOL:
        return a  # -x == x modulo 2
    with np.errstate(all="ignore"):
        return np.negative(a)


@semantics("absi")
def _absi(ctx: Ctx) -> np.ndarray:
    # Signed input, unsigned result: |MIN| = 2**(N-1) has MIN's bit pattern, which is
    # what NumPy's wrapping abs gives.
    (a,) = ctx.args
    if a.dtype == _BOOL:
        return a
    with np.errstate(all="ignore"):
        return np.abs(a)


_PREDICATES = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less_than": np.less,
    "less_than_or_equal": np.less_equal,
    "greater_than": np.greater,
    "greater_than_or_equal": np.greater_equal,
}


@semantics("cmpi")
def _cmpi(ctx: Ctx) -> np.ndarray:
    predicate = ctx.keyword("comparison_predicate")
    fn = _PREDICATES.get(predicate or "")
    if fn is None:
        raise ctx.error(f"unknown comparison predicate {predicate!r}")
    if fn is np.equal or fn is np.not_equal:
        a, b = ctx.args
        return fn(a, b)
    x, y = _views(ctx)
    return fn(x, y)
