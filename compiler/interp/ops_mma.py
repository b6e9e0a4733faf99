"""Semantics of the matrix multiply-accumulate ops: `mmaf`, `mmai` and `mmaf_scaled`.

Operands are `M x K`, `K x N` and `M x N` tiles, or `B x M x K`, ... for the batched
form; with the leading group axis that is `(G|1, [B,] M, K)`, and `np.matmul`
broadcasts over the group and batch axes, so a whole group of tile blocks is one call.

Precision (the op reference defines the exact sum `sum_k A[i,k] * B[k,j] + C[i,j]`
and leaves the order and intermediate precision to the hardware):

* `mmaf` with f16, bf16, tf32, f8E4M3FN or f8E5M2 inputs: every input converts
  exactly to f32 and every product of two such values is exact in f32 (at most
  11 + 11 significant bits) unless it underflows below f32's normal range (only
  possible for bf16/tf32, which have f32's exponent range) or overflows (then it is
  infinite, as on the hardware). The K products and the accumulator are summed in
  f32 by `np.matmul` (BLAS: blocked, fused multiply-adds, order unspecified), then
  rounded once to the result type. Bound, with u = 2**-24:
      |result - exact| <= (K + 1) * u * (sum_k |A[i,k] * B[k,j]| + |C[i,j]|)
  plus, for an f16 result, the final rounding to f16 (half an f16 ulp). Hardware
  that keeps f16 partial sums (f16 accumulators) or a narrower intermediate
  (`fast_acc` on f8) may round more often; the interpreter always sums in f32 and
  treats `fast_acc` as a performance hint with no effect on the value.
* `mmaf` with f32 inputs: products and sums in f64 (products exact), then one
  rounding to f32: within one f32 ulp of the exact result except under heavy
  cancellation (absolute error <= (K + 1) * 2**-53 * sum of magnitudes before the
  final rounding).
* `mmaf` with f64 inputs: f64 throughout; the bound above with u = 2**-53.
* `mmai`: exact. The i8 inputs are read as signed or unsigned per `signedness_lhs`/
  `signedness_rhs`; the products and the sum are exact integers (computed in f64:
  |sum| <= K * 255**2 < 2**53 for any tile), the accumulator is added exactly and
  the result wraps to i32 (two's complement), as integer ops do.
* `mmaf_scaled`: each lhs element is multiplied by `lhs_scale[i, k // V]`, each rhs
  element by `rhs_scale[k // V, j]`, V = K / (K extent of the scale tile) (the block
  size: 32 for f8 inputs, 16 or 32 for f4E2M1FN). Scaled values and their products are
  exact in f64 (a few significant bits times powers of two within f64's range), the
  sum is taken in f64 and rounded once to f32, so the result is within one f32 ulp of
  the exact value except under heavy cancellation, and overflows to infinity where the
  exact value exceeds f32's range. A NaN scale (f8E8M0FNU 0xFF) gives NaN; negative
  f8E4M3FN scales, which the reference calls undefined, are used as their values.
"""

from __future__ import annotations

import numpy as np

from ..ir.types import FloatType
from . import dtypes
from .registry import Ctx, semantics

_EXACT_IN_F32 = {"f16", "bf16", "tf32", "f8E4M3FN", "f8E5M2", "f4E2M1FN"}

_F16_TO_F32: np.ndarray | None = None


def _widen(a: np.ndarray, wide: type) -> np.ndarray:
    """`a` converted exactly to `wide` (f32 or f64)."""
    global _F16_TO_F32
    if a.dtype == np.float16 and wide is np.float32:
        # NumPy's f16 → f32 cast is slow; a lookup in the table of all 65536 values is
        # about twice as fast (exact by construction).
        if _F16_TO_F32 is None:
            _F16_TO_F32 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
        return np.take(_F16_TO_F32, a.view(np.uint16))
    return a.astype(wide, copy=False)


def _element_name(ctx: Ctx, i: int) -> str:
    e = dtypes.element_of(ctx.operand_type(i))
    return e.name if isinstance(e, FloatType) else str(e)


def _add_acc(product: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """product + acc, in place where the product already has the result's shape."""
    if np.broadcast_shapes(product.shape, acc.shape) == product.shape:
        return np.add(product, acc, out=product)
    return product + acc


@semantics("mmaf")
def _mmaf(ctx: Ctx) -> np.ndarray:
    lhs, rhs, acc = ctx.args[:3]
    out_dtype = dtypes.storage_dtype(ctx.result_type())
    wide = np.float32 if _element_name(ctx, 0) in _EXACT_IN_F32 else np.float64
    with np.errstate(all="ignore"):
        total = _add_acc(np.matmul(_widen(lhs, wide), _widen(rhs, wide)), _widen(acc, wide))
        return total.astype(out_dtype, copy=False)


@semantics("mmai")
def _mmai(ctx: Ctx) -> np.ndarray:
    lhs, rhs, acc = ctx.args[:3]

    def read(a: np.ndarray, attr: str) -> np.ndarray:
        unsigned = ctx.keyword(attr, "signed") == "unsigned"
        return (dtypes.as_unsigned(a) if unsigned else a).astype(np.float64)

    # Integer sums below 2**53 are exact in f64 whatever BLAS's order.
    product = np.matmul(read(lhs, "signedness_lhs"), read(rhs, "signedness_rhs")).astype(np.int64)
    # int64 → int32 conversion keeps the low 32 bits: the two's-complement wrap.
    return _add_acc(product, acc.astype(np.int64)).astype(np.int32)


@semantics("mmaf_scaled")
def _mmaf_scaled(ctx: Ctx) -> np.ndarray:
    lhs, rhs, acc, lhs_scale, rhs_scale = ctx.args[:5]
    k = lhs.shape[-1]
    block = k // lhs_scale.shape[-1]
    with np.errstate(all="ignore"):
        a = lhs.astype(np.float64) * np.repeat(lhs_scale.astype(np.float64), block, axis=-1)
        b = rhs.astype(np.float64) * np.repeat(rhs_scale.astype(np.float64), block, axis=-2)
        return _add_acc(np.matmul(a, b), acc.astype(np.float64)).astype(np.float32)
