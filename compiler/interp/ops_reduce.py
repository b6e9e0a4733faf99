"""Semantics of `reduce` and `scan`: combiner regions applied along one tile dimension.

Argument order. The body takes `2N` arguments for N operands, in pairs; one of a pair is
the newer value along the dimension (the element), the other the value accumulated from
the older ones (in a reverse scan, "older" means higher indices).

* `reduce`: `(element_i, accumulator_i)`, as cuda-tile's Ops.td says for `reduce` ("The
  first argument of each pair is an element of the input tile; the second is the
  accumulator").
* `scan`: `(accumulator_i, element_i)`. Ops.td's `scan` contradicts itself: its formula
  `result[j] = f(result[j-1], X[j])` and its example `(%acc, %elem)` put the accumulator
  first, its prose (`[op_0_current_iter, op_0_prev_iter, ...]`) the element. NVIDIA's
  tileiras 13.5 follows the formula (its sm_90 code for a scan of affine maps combines
  the lane below, the older run, as the body's first argument), and NVIDIA's tools win.

Every evaluation below keeps the order: a combiner step only ever joins two *adjacent*
runs of elements, in the argument slots above, so any associative body, commutative or
not, gives the fold the op reference defines:

    reduce: f(x[n-1], f(x[n-2], ... f(x[0], identity)))
    scan:   result[j] = f(result[j-1], x[j]),  result[-1] = identity

Evaluation order (the reference leaves it to the implementation; floating-point
results depend on it):

* General body: the region runs on whole arrays (`Machine.run_combiner`), O(log n)
  times, not n times. `reduce` is a pairwise tree: level by level, elements
  (2k, 2k+1) are combined as f(x[2k+1], x[2k]); an odd element at the end is carried
  to the next level unchanged. `scan` is Hillis–Steele: at step s = 1, 2, 4, ...,
  y[i] = f(y[i-s], y[i]) for i >= s. The identity enters once, at the end:
  f(result, identity) (scan: f(identity, result)), which by associativity equals the
  fold that starts from it.
* Fast paths, when the body is one recognised op with default attributes applied to
  its two arguments and yielded: `addf`/`mulf` reduce with the same pairwise tree as
  above (so results are bit-identical to running the body; every step rounds to the
  element type, f16/bf16 included, never accumulating in a wider type); `addf`/`mulf`
  scan accumulate sequentially, exactly result[j] = f(result[j-1], x[j]) (one rounding
  per step, again in the element type). Integer `addi`/`muli` (wrap-around, any order
  gives the same bits), `andi`/`ori`/`xori`, `maxi`/`mini` (signed or unsigned) and
  `maxf`/`minf` use NumPy's `ufunc.reduce`/`accumulate`, whose order does not matter
  for these ops; `maxf`/`minf` then apply the reference's rules exactly: +0.0 is greater
  than -0.0, `propagate_nan` gives a NaN if any input is NaN (IEEE maximum/minimum),
  without it NaN only if all inputs are (maximumNumber/minimumNumber), and a NaN result
  is the canonical NaN that the elementwise ops give (`rounding.canonical_nan`). Every
  fast path gives the same bits as running its body through the general path.

Float sums and products therefore differ from a sequential loop only by rounding: for
a sum of n terms the pairwise tree's error is at most about ceil(log2 n) units of
roundoff times the sum of magnitudes, the sequential scan's about (n - 1) units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..ir.attributes import BoolAttr, FloatAttr, IntegerAttr
from ..ir.core import Region
from ..ir.types import IntegerType
from . import dtypes, rounding
from .registry import Ctx, semantics

Combine = Callable[[list[np.ndarray], list[np.ndarray]], list[np.ndarray]]


def _along(axis: int, index: slice | int) -> tuple[slice | int, ...]:
    return (slice(None),) * axis + (index,)


def _identities(ctx: Ctx, operands: list[np.ndarray]) -> list[np.ndarray]:
    """The identity of each operand as a 0-d array of its storage dtype."""
    attr = ctx.attr("identities")
    elements = getattr(attr, "elements", ())
    out = []
    for i, value in enumerate(operands):
        element = dtypes.element_of(ctx.operand_type(i))
        a = elements[i] if i < len(elements) else None
        if isinstance(a, FloatAttr):
            out.append(dtypes.array_from_bits([a.bits], a.type))
        elif isinstance(a, (IntegerAttr, BoolAttr)) and isinstance(element, IntegerType):
            width = element.width
            v = int(a.value) & ((1 << width) - 1)
            if width > 1 and v >= 1 << (width - 1):
                v -= 1 << width
            out.append(dtypes.array_from_bits([v], element))
        else:
            raise ctx.error(f"identity {i} ({a}) is not a value of the operand's element type {element}")
        if out[-1].dtype != value.dtype:
            out[-1] = out[-1].astype(value.dtype)
    return out


def _body_combine(ctx: Ctx, region: Region, accumulator_first: bool = False) -> Combine:
    """Run the region on arrays: newer and older values of each operand, interleaved as
    (newer, older) pairs, or (older, newer) with `accumulator_first` (scan; module doc)."""
    machine = ctx.machine

    def combine(newer: list[np.ndarray], older: list[np.ndarray]) -> list[np.ndarray]:
        args: list[np.ndarray] = []
        for n, o in zip(newer, older, strict=True):
            args += [o, n] if accumulator_first else [n, o]
        with np.errstate(all="ignore"):
            return machine.run_combiner(region, args, ctx.frame)

    return combine


def _common_group(arrays: list[np.ndarray]) -> list[np.ndarray]:
    g = max(a.shape[0] for a in arrays)
    return [a if a.shape[0] == g else np.broadcast_to(a, (g, *a.shape[1:])) for a in arrays]


def tree_reduce(combine: Combine, xs: list[np.ndarray], axis: int) -> list[np.ndarray]:
    """Reduce along `axis` by combining adjacent pairs level by level (see module doc)."""
    n = xs[0].shape[axis]
    while n > 1:
        even = n - n % 2
        older = [x[_along(axis, slice(0, even, 2))] for x in xs]
        newer = [x[_along(axis, slice(1, even, 2))] for x in xs]
        pairs = combine(newer, older)
        if n % 2:
            pairs = [np.concatenate((p, x[_along(axis, slice(even, n))]), axis=axis) for p, x in zip(pairs, xs)]
        xs = pairs
        n = (n + 1) // 2
    return [x[_along(axis, 0)] for x in xs]


def hillis_steele_scan(combine: Combine, xs: list[np.ndarray], axis: int) -> list[np.ndarray]:
    """Inclusive scan along `axis` in ceil(log2 n) combiner steps (see module doc)."""
    n = xs[0].shape[axis]
    s = 1
    while s < n:
        newer = [x[_along(axis, slice(s, n))] for x in xs]
        older = [x[_along(axis, slice(0, n - s))] for x in xs]
        out = combine(newer, older)
        xs = [np.concatenate((x[_along(axis, slice(0, s))], o), axis=axis) for x, o in zip(xs, out)]
        s *= 2
    return xs


# -- fast paths ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Fast:
    """A body that is one recognised elementwise op on its two arguments."""

    kind: str  # "float_tree" (addf/mulf), "exact" (ufunc with an order-free result), "fminmax"
    ufunc: np.ufunc
    unsigned: bool = False
    is_max: bool = False
    propagate_nan: bool = False
    element: str = ""  # the IR name of a float element type (for its canonical NaN)


def _fast_body(region: Region, dtype: np.dtype) -> _Fast | None:
    block = region.blocks[0] if region.blocks else None
    if block is None or len(block.arguments) != 2 or len(block.ops) != 2:
        return None
    op, term = block.ops
    if term.name != "cuda_tile.yield" or len(op.results) != 1 or list(term.operands) != [op.results[0]]:
        return None
    a, b = block.arguments
    if len(op.operands) != 2 or {id(v) for v in op.operands} != {id(a), id(b)}:
        return None
    name = op.name.removeprefix("cuda_tile.")
    present = {k for k in (*op.properties, *op.attributes)}

    def keyword(attr: str, default: str) -> str:
        value = op.attr(attr)
        return getattr(value, "keyword", default) if value is not None else default

    if name in ("addf", "mulf", "maxf", "minf"):
        # Only where NumPy's arithmetic in the storage dtype is the op's (not tf32, held in
        # float32, nor the f8 formats).
        element = getattr(dtypes.element_of(op.results[0].type), "name", "")
        if element not in ("f16", "bf16", "f32", "f64") or "flush_to_zero" in present:
            return None
        if name in ("addf", "mulf"):
            if keyword("rounding_mode", "nearest_even") != "nearest_even":
                return None
            return _Fast("float_tree", np.add if name == "addf" else np.multiply)
        is_max = name == "maxf"
        if "propagate_nan" in present:
            return _Fast(
                "fminmax", np.maximum if is_max else np.minimum, is_max=is_max, propagate_nan=True, element=element
            )
        return _Fast("fminmax", np.fmax if is_max else np.fmin, is_max=is_max, element=element)
    if dtype.kind not in "iub":
        return None
    if name in ("andi", "ori", "xori"):
        return _Fast("exact", {"andi": np.bitwise_and, "ori": np.bitwise_or, "xori": np.bitwise_xor}[name])
    if dtype == np.bool_:
        return None  # i1 sums, products and signed max/min: let the body decide
    if name in ("addi", "muli"):
        if keyword("overflow", "none") != "none":
            return None  # no-wrap flags make overflow undefined: the body checks
        return _Fast("exact", np.add if name == "addi" else np.multiply)
    if name in ("maxi", "mini"):
        unsigned = keyword("signedness", "signed") == "unsigned"
        return _Fast("exact", np.maximum if name == "maxi" else np.minimum, unsigned=unsigned)
    return None


def _fix_float_minmax(
    fast: _Fast, result: np.ndarray, x: np.ndarray, identity: np.ndarray, axis: int, scan: bool
) -> np.ndarray:
    """Apply the reference's signed-zero and canonical-NaN rules to a max/min result."""
    nan = np.isnan(result)
    if nan.any():
        result = np.where(nan, rounding.canonical_nan(fast.element), result)
    zero = result == 0
    if zero.any():
        # max: +0 if any +0 took part; min: -0 if any -0 did.
        wanted_sign = not fast.is_max
        hit = (x == 0) & (np.signbit(x) == wanted_sign)
        seen = np.logical_or.accumulate(hit, axis=axis) if scan else hit.any(axis=axis)
        id_hit = bool(identity == 0) and bool(np.signbit(identity)) == wanted_sign
        if id_hit:
            seen = np.ones_like(seen)
        if wanted_sign:  # min
            signed_zero = np.where(seen, -0.0, 0.0)
        else:
            signed_zero = np.where(seen, 0.0, -0.0)
        result = np.where(zero, signed_zero.astype(result.dtype), result)
    return result


def _fast_reduce(fast: _Fast, x: np.ndarray, identity: np.ndarray, axis: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        if fast.kind == "float_tree":
            ufunc = fast.ufunc
            (r,) = tree_reduce(lambda n, o: [ufunc(n[0], o[0])], [x], axis)
            return ufunc(r, identity)
        if fast.kind == "exact":
            if fast.unsigned:
                ux, uid = dtypes.as_unsigned(x), dtypes.as_unsigned(identity)
                r = fast.ufunc(fast.ufunc.reduce(ux, axis=axis, dtype=ux.dtype), uid)
                return r.astype(ux.dtype, copy=False).view(x.dtype)
            r = fast.ufunc.reduce(x, axis=axis, dtype=x.dtype)
            return fast.ufunc(r, identity).astype(x.dtype, copy=False)
        x, identity = rounding.quiet_nans(x), rounding.quiet_nans(identity)
        r = fast.ufunc(fast.ufunc.reduce(x, axis=axis), identity)
        return _fix_float_minmax(fast, r, x, identity, axis, scan=False)


def _fast_scan(fast: _Fast, x: np.ndarray, identity: np.ndarray, axis: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        if fast.kind == "float_tree":
            # The literal fold: result[0] = f(identity, x[0]), result[j] = f(result[j-1], x[j])
            # (`accumulate` applies the ufunc as (accumulated, next)).
            y = np.array(x, copy=True)
            first = _along(axis, slice(0, 1))
            y[first] = fast.ufunc(identity, x[first])
            return fast.ufunc.accumulate(y, axis=axis, dtype=y.dtype)
        if fast.kind == "exact":
            if fast.unsigned:
                ux, uid = dtypes.as_unsigned(x), dtypes.as_unsigned(identity)
                r = fast.ufunc(fast.ufunc.accumulate(ux, axis=axis, dtype=ux.dtype), uid)
                return r.astype(ux.dtype, copy=False).view(x.dtype)
            r = fast.ufunc.accumulate(x, axis=axis, dtype=x.dtype)
            return fast.ufunc(r, identity).astype(x.dtype, copy=False)
        x, identity = rounding.quiet_nans(x), rounding.quiet_nans(identity)
        r = fast.ufunc(fast.ufunc.accumulate(x, axis=axis), identity)
        return _fix_float_minmax(fast, r, x, identity, axis, scan=True)


# -- the ops ---------------------------------------------------------------------------------


def _setup(ctx: Ctx) -> tuple[list[np.ndarray], list[np.ndarray], int, Region]:
    operands = _common_group(list(ctx.args))
    identities = _identities(ctx, operands)
    axis = int(ctx.int_attr("dim", 0) or 0) + 1
    return operands, identities, axis, ctx.op.regions[0]


@semantics("reduce")
def _reduce(ctx: Ctx):
    operands, identities, axis, region = _setup(ctx)
    if len(operands) == 1:
        fast = _fast_body(region, operands[0].dtype)
        if fast is not None:
            return _fast_reduce(fast, operands[0], identities[0], axis)
    combine = _body_combine(ctx, region)
    results = tree_reduce(combine, operands, axis)
    results = combine(results, identities)
    return tuple(np.asarray(r, dtype=x.dtype) for r, x in zip(results, operands, strict=True))


@semantics("scan")
def _scan(ctx: Ctx):
    operands, identities, axis, region = _setup(ctx)
    reverse = ctx.flag("reverse")
    if reverse:
        operands = [np.flip(x, axis=axis) for x in operands]
    fast = _fast_body(region, operands[0].dtype) if len(operands) == 1 else None
    if fast is not None:
        results = [_fast_scan(fast, operands[0], identities[0], axis)]
    else:
        combine = _body_combine(ctx, region, accumulator_first=True)
        results = hillis_steele_scan(combine, operands, axis)
        results = combine(results, identities)
        results = [np.asarray(r, dtype=x.dtype) for r, x in zip(results, operands, strict=True)]
    if reverse:
        results = [np.flip(r, axis=axis) for r in results]
    return tuple(results)
