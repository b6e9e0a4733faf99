"""Matrix multiply-accumulate: `mmaf`, `mmai`, `mmaf_scaled`, all through `tl.dot` (mma.sync on
sm_80, wgmma on sm_90, tcgen05 on sm_100; a batch is Triton's batched dot, or 2-D dots where
those are better: `per_batch`).

Common: Triton refuses a dot whose K is below 16 (below 32 for 8-bit operands), and its dots
of operands padded with zeros up to that came out wrong on a GPU for some small shapes, so a
product with K below 16 is no dot: a chain of fused multiply-adds (`small_k`, below). 8-bit
operands with a K of 16 (tiles are powers of two) are widened to f16 (exactly: every f8 and
8-bit integer value is an f16 value) and multiplied by an f16 dot, on the tensor cores.

mmaf   tl.dot(lhs, rhs, acc, out_dtype=..., input_precision=...), per input type:
       f16, bf16  products exact in f32, summed in f32 (the tensor core's accumulator);
                  Triton's interpreter (3.6) multiplies bf16 operands as their raw uint16
                  bits, so there (INTERPRETED) they are widened to f32 first, exactly: the
                  same exact products and f32 sums (the GPU keeps bf16 tensor cores);
       tf32       held as f32 values that are already tf32: input_precision="tf32" feeds
                  them to the tensor core unchanged, products exact, f32 sums;
       f32        input_precision="ieee": f32 fused multiply-adds (no tensor core, no tf32
                  truncation);
       f64        f64 fused multiply-adds (mma.sync f64 on sm_80/sm_90, FMA on sm_100,
                  where a 2-D dot is written as a batched dot of one: Triton 3.6 would hand
                  it to tcgen05, which has no f64 form, and abort);
                  on sm_80/sm_90 an operand not loaded straight from memory passes a
                  register move Triton cannot see through (`_f64_operands`, below);
       f8E4M3FN, f8E5M2 (held as uint8 bits) are bitcast to tl.float8e4nv / tl.float8e5
                  on sm_89 and newer where K >= 32 (native fp8 MMA, products exact, f32
                  sums); sm_80 has no fp8e4nv (and a K of 16 no fp8 dot), so there both
                  formats are converted to f16 by integer code
                  (exact: every f8 value is an f16 value) and multiplied as f16, as
                  f8E4M3FN is under Triton's interpreter too (which reads its NaN code
                  0x7F as 480).
                  Accumulation: Hopper's fp8 wgmma sums in a narrower-than-f32 accumulator.
                  Without `fast_acc` the dot gets max_num_imprecise_acc=0, for which Triton
                  (3.6, sm_90) converts the fp8 operands to f16 itself and uses mma.sync
                  with f32 accumulators (precise, about half wgmma's fp8 speed); with
                  `fast_acc` Triton's default applies (fp8 wgmma, imprecise accumulation
                  allowed, as Tile IR permits). sm_100 uses tcgen05 fp8 MMA either way.
       An f16 accumulator is widened to f32, the dot accumulates in f32, and the result is
       rounded once to f16 (as the CPU interpreter does; no f16 partial sums).
       Exactness: the CPU interpreter sums the exact products in f32 (f64 for f32 inputs)
       in BLAS's order and rounds once. The lowering computes the same exact products and
       sums them in the accumulator type in the tensor core's (or FMA chain's) order, so
       results agree up to reassociation of the sum: |r - exact| <= (K + 1) u (sum_k
       |a_ik b_kj| + |c_ij|) for each of them, u = 2^-24 (f32 sums) or 2^-53 (f64), plus
       the final rounding to f16. Where all partial sums are exact (e.g. small integers),
       results are bitwise equal (tests check both).
mmai   signed x signed: one int8 dot with an int32 accumulator (exact, wraps mod 2^32 as
       Tile IR's result does). Triton has no u8 dot and refuses mixed signedness, so an
       unsigned operand U is written U = U' + 128 with U' = U ^ 0x80 read as signed:
           A_u B   = A' B + 128 colsum(B)
           A B_u   = A B' + 128 rowsum(A)
           A_u B_u = A' B' + 128 rowsum(A') + 128 colsum(B') + 16384 K
       one int8 dot plus row/column sums (tl.sum in int32), all mod 2^32: bit-exact.
       A K of 16 (no int8 dot): both operands widened to f16, signed or unsigned alike
       (exact: |x| <= 255), one f16 dot with f32 sums, then int32 and the accumulator added
       (wrapping). Bit-exact: every product and partial sum is an integer below
       16 * 255^2 < 2^24 in magnitude, exact in f32 in any order (the tensor core aligns a
       step's products to the largest, which keeps every bit of integers below 2^24).
       16x16x16 i8 on sm_90: 554 SASS instructions with 47 barriers (small_k's 32 sums)
       became 171 with one HMMA (tileiras 13.5: about 300, no tensor core).
mmaf_scaled  Triton 3.6's `dot_scaled` is not used (its emulation upcasts through bf16 and
       the interpreter cannot run it); instead both operands are dequantized exactly to f32:
       the f8 or f4E2M1FN value times its block's scale, 2^(s - 127) for an f8E8M0FNU
       scale s (s = 0xFF: NaN) or an f8E4M3FN one (NVFP4's scales, f4E2M1FN only), each
       decoded exactly by ops_conversion's `to_f32`.
       Every dequantized value has at most 4 significant bits (f4 x e4m3: 2 + 4 bits, at
       least 2^-10), so it is exact in f32 (also as a subnormal) and in tf32; the dot then runs with
       input_precision="tf32" on the tensor cores, products exact, f32 sums: the bound of
       mmaf with u = 2^-24 (the interpreter sums in f64, then rounds once). Differences:
       a dequantized value above f32's range (448 * 2^127) is already infinite here, and
       tensor cores may treat subnormal tf32 inputs (|value| < 2^-126, scales below about
       2^-117) as zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..ir.types import Type
from . import tltypes
from .codegen import LOADS, OpEmit
from .fold import fold
from .ops_conversion import to_f32
from .ops_float import fence
from .ops_shape import add_combine, concat, permute, reshape, unanchored
from .registry import emitter

_F8_TO_F16 = """@triton.jit
def {name}(bits, e4m3: tl.constexpr):
    # f8 bits (uint8) -> f16, exact. E5M2 is the top byte of an f16. E4M3FN: the 7 low bits
    # shifted into an f16 (exponent field e, mantissa m << 7) are the value times 2^-8 for
    # normal and subnormal e4m3 alike; 0x7F/0xFF are NaN.
    b = bits.to(tl.uint16)
    if e4m3:
        mag = ((b & 0x7F) << 7).to(tl.float16, bitcast=True) * tl.full((), 256.0, tl.float16)
        out = mag.to(tl.uint16, bitcast=True) | ((b & 0x80) << 8)
        out = tl.where((b & 0x7F) == 0x7F, tl.full((), 0x7E00, tl.uint16), out)
    else:
        out = b << 8
    return out.to(tl.float16, bitcast=True)
"""

# bf16 x bf16 + f32 (module doc): under Triton's interpreter, whose dot multiplies the
# uint16 bits it holds bf16 in, the operands widened to f32 (exact; products exact in f32).
_DOT_BF16 = """@triton.jit
def {name}(a, b, acc):
    if INTERPRETED:
        # By the bits (bf16 is the top half of an f32): the interpreter's own conversion
        # flushes bf16 subnormals to zero.
        a32 = (a.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
        b32 = (b.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
        out = tl.dot(a32, b32, acc=acc, input_precision="ieee", out_dtype=tl.float32)
    else:
        out = tl.dot(a, b, acc=acc, input_precision="ieee", out_dtype=tl.float32)
    return out
"""

# f8E4M3FN x f8E4M3FN + f32 on sm_89+ (module doc): Triton 3.6's interpreter converts
# float8e4nv as if it had infinities (its 0x7F/0xFF, NaN in e4m3fn, read as 480), so there
# (INTERPRETED) the operands take sm_80's exact f16 route. `F8` is _f8_to_f16's name.
_DOT_E4M3 = """@triton.jit
def {name}(a, b, acc, fast: tl.constexpr):
    if INTERPRETED:
        out = tl.dot(F8(a, True), F8(b, True), acc=acc, input_precision="ieee", out_dtype=tl.float32)
    elif fast:
        out = tl.dot(a.to(tl.float8e4nv, bitcast=True), b.to(tl.float8e4nv, bitcast=True), acc=acc,
                     out_dtype=tl.float32)
    else:
        out = tl.dot(a.to(tl.float8e4nv, bitcast=True), b.to(tl.float8e4nv, bitcast=True), acc=acc,
                     out_dtype=tl.float32, max_num_imprecise_acc=0)
    return out
"""


def f8_to_f16(e: OpEmit, x: str, name: str) -> str:
    fn = e.helper("_f8_to_f16", _F8_TO_F16)
    return f"{fn}({x}, {name == 'f8E4M3FN'})"


def _el(t: Type) -> str:
    return tltypes.float_name(t) if tltypes.is_float(t) else str(tltypes.element_of(t))


# Triton gives a batched (3-D) dot all of a CTA's warps along the batch axis
# (AccelerateMatmul's warpsPerTileV2 for rank 3, 3.6 and 3.9) and only mma.sync: in a batch
# smaller than the warps, several warps compute the same item, each holding all of it. So a
# batch of one is reshaped to a 2-D dot, and a batch smaller than the warps whose items have
# at least UNROLLED_ITEM elements is that many 2-D dots (taken apart by tl.split, put back
# together by concat), which Triton spreads over all the warps and gives wgmma and tcgen05.
# Measured (tileir compile, Triton 3.6, f16, 8 warps, sm_90; sm_80 alike):
#   2x128x32x128  batched: 256 mma.sync a thread, 32 registers, 6.8 KB of spills, 1.8 s;
#                 2-D: 10 wgmma, 205 registers, no spills, 0.7 s
#   1x128x64x128  batched: 512 mma.sync, 11.6 KB of spills, 2.7 s; 2-D: 7 wgmma, 0.5 s
#   2x64x16x32    batched: 16 mma.sync, 96 registers; 2-D: 8 wgmma, 46 registers
#   4x32x32x32    batched: 16 mma.sync, 78 registers; 2-D: 32 wgmma, 150 registers (items
#                 too small to spread over 8 warps: stays batched, as do batches of 8 warps)
UNROLLED_ITEM = 2048

Product = Callable[[OpEmit, list[str], list[tuple[int, ...]]], str]


def per_batch(e: OpEmit, count: int, product: Product) -> str:
    """The expression of the op's result: `product` (of the first `count` operands, given
    with their shapes, each (..., rows, columns)) for the whole batch, or per batch item as
    2-D products where that is better (see UNROLLED_ITEM)."""
    operands = e.operands[:count]
    shapes = [tltypes.shape_of(t) for t in e.operand_types[:count]]
    out = tltypes.shape_of(e.result_types[0])
    batch = math.prod(out[:-2])
    planes = [s[-2:] for s in shapes]
    if batch == 1:
        flat = [reshape(e, x, s, p) for x, s, p in zip(operands, shapes, planes, strict=True)]
        return reshape(e, product(e, flat, planes), out[-2:], out)
    if batch >= int(e.cg.options.get("num_warps", 4)) or math.prod(out[-2:]) < UNROLLED_ITEM:
        return product(e, operands, shapes)
    items = [_batch_items(e, x, s, batch) for x, s in zip(operands, shapes, strict=True)]
    signed_bytes = _el(e.operand_types[1]) == "i8" and e.keyword("signedness_rhs", "signed") == "signed"
    if e.target.cc == 90 and out[-2] >= 64 and signed_bytes and shapes[0][-1] >= 32:  # (K of 16: f16 operands)
        # wgmma (sm_90, 64 rows or more) takes 8-bit operands K-major only, and Triton (3.6
        # and 3.9) fails on a signed i8 right-hand side taken out by the permute and splits
        # as loaded ("Illegal shared layout" in TritonGPUOptimizeDotOperands; an unsigned one
        # is computed, ^ 0x80, and compiles). Its items pass through a register move Triton
        # cannot look through (2x64x32x64: 80 registers; the unsigned one's 96).
        items[1] = [fence(e, x, "tl.int8", 8) for x in items[1]]
    results = []
    for i in range(batch):
        r = e.tmp("item")
        e.line(f"{r} = {product(e, [x[i] for x in items], planes)}")
        results.append((reshape(e, r, out[-2:], (1, *out[-2:])), (1, *out[-2:])))
    while len(results) > 1:  # pairs concatenated along the batch axis, in order
        pairs = zip(results[::2], results[1::2], strict=True)
        results = [concat(e, lower, upper, shape, 0) for (lower, shape), (upper, _) in pairs]
    whole, shape = results[0]
    return reshape(e, whole, shape, out)


def _batch_items(e: OpEmit, x: str, shape: tuple[int, ...], batch: int) -> list[str]:
    """The (rows, columns) tiles of `x` (of shape (..., rows, columns)), one per batch item
    in row-major order: the batch axis moved last and taken apart by `_slices`."""
    flat = (batch, *shape[-2:])
    moved = permute(reshape(e, x, shape, flat), [1, 2, 0])
    return _slices(e, moved, (*shape[-2:], batch))


def small_k(e: OpEmit, a: str, b: str, acc: str, sa: tuple[int, ...], sb: tuple[int, ...], integer: bool) -> str:
    """acc + a @ b for a K below 16, which no tl.dot takes (module doc): a chain of
    fused multiply-adds over k, in the accumulator's type (a and b already in it), as Triton's
    FMA dot would run. On an H200, Triton 3.6 computed wrong dots from operands padded to K = 16
    (with zero columns made by join/permute/reshape, or by broadcast/reshape/where) for K of
    1 to 8 with M or N of 1, or 64x1 @ 1x64 at 4 or 8 warps (tests/lower/fuzz.py seeds 11,
    60068, 62011, 62164, 62261, 63479, 74133, 75040; Triton's interpreter was right): no dot at
    all here. Column and row k of an operand loaded straight from memory are taken out by a
    sum in which every other element is -0.0 (0 for integers), which gives that element
    exactly, its sign of zero and NaNs included; those of a computed operand by a tree of
    tl.split (`_slices`), a data move. Each was measured the better for its kind, in LLVM IR
    instructions (`tileir compile --emit ops`, sm_90, 8 warps): a 64x8 @ 8x64 f32 product of
    operands broadcast from a 64x1 tile took 2,186 by sums, 366 split (128x8 @ 8x128: 8,195
    and 1,422; fuzz seed 111174: 21,930 with 6 KB of spills, 3,529 without), where loaded
    operands took 846 by sums and 532 split but 170 registers instead of 64 (128x8 @ 8x128:
    no spills by sums, 3.7 KB split)."""
    k = sa[-1]
    rank = len(sa)
    out = "(" + ", ".join(map(str, (*sa[:-1], sb[-1]))) + ")"
    zero = "0" if integer else "-0.0"
    add = add_combine(e)
    total = f"tl.broadcast_to({acc}, {out})"
    split_a, split_b = k > 1 and not _loaded(e, 0), k > 1 and not _loaded(e, 1)
    if split_a:
        cols = [f"tl.expand_dims({c}, {rank - 1})" for c in _slices(e, a, sa)]
    if split_b:
        swapped = [*range(rank - 2), rank - 1, rank - 2]
        bt = permute(b, swapped)
        rows = [f"tl.expand_dims({r}, {rank - 2})" for r in _slices(e, bt, (*sb[:-2], sb[-1], sb[-2]))]
    for j in range(k):
        col, row = a, b
        pick = f"tl.arange(0, {k}) == {j}"
        if split_a:
            col = cols[j]
        elif k > 1:
            masked = e.tmp("masked")
            e.line(f"{masked} = tl.where({pick}, {a}, {zero})")
            col = fold(e, masked, rank - 1, add, keep_dims=True)
        if split_b:
            row = rows[j]
        elif k > 1:
            masked = e.tmp("masked")
            e.line(f"{masked} = tl.where(({pick})[:, None], {b}, {zero})")
            row = fold(e, masked, rank - 2, add, keep_dims=True)
        step = e.tmp("partial")
        if integer:  # (int32 products and sums wrap, as mmai's do)
            e.line(f"{step} = {total} + tl.broadcast_to({col}, {out}) * tl.broadcast_to({row}, {out})")
        else:
            e.line(f"{step} = tl.fma(tl.broadcast_to({col}, {out}), tl.broadcast_to({row}, {out}), {total})")
        total = step
    return total


def _loaded(e: OpEmit, i: int) -> bool:
    """Whether operand `i` of the op is a tile loaded straight from memory."""
    producer = e.op.operands[i].defining_op
    return producer is not None and producer.name in LOADS


def _loaded_as_given(e: OpEmit, i: int, shape: tuple[int, ...]) -> bool:
    """Whether operand `i`, given to a product as a tile of `shape`, is as loaded straight
    from memory: not where per_batch took it apart into batch items by splits (a 2x64x128x64
    mmaf_scaled of loaded f8E4M3FN operands and scales, the split scales kept as loaded: 255
    registers and 1,752 B of spills for sm_80; unanchored, 209 and none)."""
    whole = tltypes.shape_of(e.operand_types[i])
    return _loaded(e, i) and (len(shape) == len(whole) or math.prod(whole[:-2]) == 1)


def _slices(e: OpEmit, x: str, shape: tuple[int, ...]) -> list[str]:
    """The slices of `x` (of `shape`) along its last axis, in order, each without that axis:
    (..., k) is split into the even and the odd slices (..., k/2), and so on down to one."""
    k = shape[-1]
    if k == 1:
        return [reshape(e, x, shape, shape[:-1])]
    even, odd = e.tmp("even"), e.tmp("odd")
    e.line(f"{even}, {odd} = tl.split({reshape(e, x, shape, (*shape[:-1], k // 2, 2))})")
    half = (*shape[:-1], k // 2)
    return [s for pair in zip(_slices(e, even, half), _slices(e, odd, half), strict=True) for s in pair]


# Triton 3.6 moves an operand's conversion to the dot layout (mma.sync on sm_80/sm_90) above
# the ops computing it, down to a narrower type where there is one (an i8, i32, f16 or f32
# converted to f64), and then cannot lower the f64 mma ("Currently fp64 don't support largeK
# MMA", an assertion in MMAv2.cpp; found by tests/lower/fuzz.py). A register move with side
# effects (is_pure=False: inline PTX Triton does not look through) stops that; an operand
# loaded straight from memory skips it, keeping the load -> shared memory path.
def _f64_operands(e: OpEmit, a: str, b: str) -> tuple[str, str]:
    out = []
    for i, x in enumerate((a, b)):
        if e.op.operands[i].defining_op is not None and not _loaded(e, i):
            x = fence(e, x, "tl.float64", 64)
        out.append(x)
    return out[0], out[1]


@emitter("mmaf")
def _mmaf(e: OpEmit) -> None:
    e.assign(per_batch(e, 3, _mmaf_product))


def _mmaf_product(e: OpEmit, operands: list[str], shapes: list[tuple[int, ...]]) -> str:
    a, b, c = operands
    ta, tc = e.operand_types[0], e.operand_types[2]
    el, acc_el = _el(ta), _el(tc)
    sa, sb = shapes[:2]
    precision = "ieee"
    extra = ""
    e4m3_dot = None
    if acc_el not in ("f16", "f32", "tf32", "f64"):
        raise e.error(f"mmaf with a {acc_el} accumulator is not supported by the Triton lowering")
    f8 = el in ("f8E4M3FN", "f8E5M2")
    if sa[-1] < 16:
        # Exactly as the dot: products exact in f32 (every f8, f16, bf16 and tf32 product is),
        # summed by fused multiply-adds in f32 (f64 for f64).
        if el not in ("f8E4M3FN", "f8E5M2", "f16", "bf16", "f32", "tf32", "f64"):
            raise e.error(f"mmaf of {el} operands is not supported by the Triton lowering")
        if el != "f64":
            wide = []
            for x in (a, b):
                w = e.tmp("wide")
                e.line(f"{w} = {to_f32(e, x, el)}")
                wide.append(w)
            a, b = wide
        acc = f"{c}.to(tl.float32)" if acc_el == "f16" else c
        expr = small_k(e, a, b, acc, sa, sb, integer=False)
        return f"{expr}.to(tl.float16)" if acc_el == "f16" else expr
    if f8:
        if e.target.cc >= 89 and sa[-1] >= 32:  # (Triton's fp8 dots take K >= 32)
            # Read as Triton's fp8.
            if el == "f8E4M3FN":  # the helper reads the bits (_DOT_E4M3)
                f8 = e.helper("_f8_to_f16", _F8_TO_F16)
                e4m3_dot = e.helper("_dot_e4m3", _DOT_E4M3.replace("F8(", f8 + "("))
            else:
                fp8 = tltypes.TRITON_FP8[el]
                a, b = f"{a}.to({fp8}, bitcast=True)", f"{b}.to({fp8}, bitcast=True)"
                if not e.flag("fast_acc"):
                    extra = ", max_num_imprecise_acc=0"
        else:
            la, lb = e.tmp("lhs_f16"), e.tmp("rhs_f16")
            e.line(f"{la} = {f8_to_f16(e, a, el)}")
            e.line(f"{lb} = {f8_to_f16(e, b, el)}")
            a, b = la, lb
    elif el in ("f16", "bf16", "f32", "tf32", "f64"):
        precision = "tf32" if el == "tf32" else "ieee"
        if el == "f64" and e.target.cc < 100:
            a, b = _f64_operands(e, a, b)
    else:
        raise e.error(f"mmaf of {el} operands is not supported by the Triton lowering")
    if el == "f64":
        out, acc = "tl.float64", c
    else:
        out = "tl.float32"
        acc = f"{c}.to(tl.float32)" if acc_el == "f16" else c
    if el == "bf16":  # (the verifier allows only an f32 accumulator)
        expr = f"{e.helper('_dot_bf16', _DOT_BF16)}({a}, {b}, {acc})"
    elif e4m3_dot is not None:
        expr = f"{e4m3_dot}({a}, {b}, {acc}, {bool(e.flag('fast_acc'))})"
    elif el == "f64" and e.target.cc >= 100 and len(sa) == 2:
        # Triton 3.6 gives a 2-D f64 dot of 64 rows or more to tcgen05 on sm_100,
        # which has no f64 form, and aborts ("colStride must be 1, 2, or 4 but got 0", in
        # TritonGPUAccelerateMatmul). A batched dot of one is not offered to tcgen05: it runs
        # as the FMA loop the 2-D one should (found by tests/lower/fuzz.py).
        m, n = sa[0], sb[1]
        batched = f"tl.dot({a}[None, :, :], {b}[None, :, :], acc={acc}[None, :, :], "
        batched += f"input_precision='ieee', out_dtype={out})"
        expr = f"tl.reshape({batched}, ({m}, {n}), can_reorder=False)"
    else:
        expr = f"tl.dot({a}, {b}, acc={acc}, input_precision={precision!r}, out_dtype={out}{extra})"
    return f"{expr}.to(tl.float16)" if acc_el == "f16" else expr


@emitter("mmai")
def _mmai(e: OpEmit) -> None:
    e.assign(per_batch(e, 3, _mmai_product))


def _mmai_product(e: OpEmit, operands: list[str], shapes: list[tuple[int, ...]]) -> str:
    a, b, c = operands
    sa, sb = shapes[:2]
    k = sa[-1]
    ua = e.keyword("signedness_lhs", "signed") == "unsigned"
    ub = e.keyword("signedness_rhs", "signed") == "unsigned"
    if k < 32:
        # Below Triton's int8 dot (K >= 32; module doc). A K of 16: an f16 dot, exact.
        to = "float16" if k >= 16 else "int32"
        wide = []
        for x, unsigned in ((a, ua), (b, ub)):
            w = e.tmp("wide")
            e.line(f"{w} = {x}.to(tl.uint8, bitcast=True).to(tl.{to})" if unsigned else f"{w} = {x}.to(tl.{to})")
            wide.append(w)
        if k < 16:
            return small_k(e, wide[0], wide[1], c, sa, sb, integer=True)
        product = e.tmp("product")
        e.line(f"{product} = tl.dot({wide[0]}, {wide[1]}, input_precision='ieee', out_dtype=tl.float32).to(tl.int32)")
        return f"{product} + {c}"  # (int32: wraps)
    # U' = U ^ 0x80 read as signed int8: U = U' + 128 (module doc).
    if ua:
        flipped = e.tmp("lhs_shifted")
        e.line(f"{flipped} = ({a}.to(tl.uint8, bitcast=True) ^ 0x80).to(tl.int8, bitcast=True)")
        a = flipped
    if ub:
        flipped = e.tmp("rhs_shifted")
        e.line(f"{flipped} = ({b}.to(tl.uint8, bitcast=True) ^ 0x80).to(tl.int8, bitcast=True)")
        b = flipped
    da, db = a, b
    # The product alone (|sum| <= 2^14 K: no overflow), then the accumulator added with a
    # wrapping 32-bit add, written through i64 so that Triton does not fold it into the dot's
    # accumulator: mma.sync's integer form (sm_80, sm_100) saturates (.satfinite), where
    # Tile IR wraps. (LLVM turns the i64 add back into a 32-bit one.)
    product = e.tmp("product")
    e.line(f"{product} = tl.dot({da}, {db}, out_dtype=tl.int32)")
    terms = [f"{product}.to(tl.int64)", f"{c}.to(tl.int64)"]
    add = add_combine(e)
    if ua:
        # + 128 * (sum over k of B[k, j]): a row of column sums.
        wide = e.tmp("rhs_wide")
        e.line(f"{wide} = {b}.to(tl.int32)")
        terms.append(f"({fold(e, wide, len(sb) - 2, add, keep_dims=True)} << 7).to(tl.int64)")
    if ub:
        wide = e.tmp("lhs_wide")
        e.line(f"{wide} = {a}.to(tl.int32)")
        terms.append(f"({fold(e, wide, len(sa) - 1, add, keep_dims=True)} << 7).to(tl.int64)")
    if ua and ub:
        terms.append(str(128 * 128 * k))
    return f"({' + '.join(terms)}).to(tl.int32)"


@emitter("mmaf_scaled")
def _mmaf_scaled(e: OpEmit) -> None:
    e.assign(per_batch(e, 5, _mmaf_scaled_product))


def _mmaf_scaled_product(e: OpEmit, operands: list[str], shapes: list[tuple[int, ...]]) -> str:
    a, b, c, sa_, sb_ = operands
    ta, tc, tsa = e.operand_types[0], e.operand_types[2], e.operand_types[3]
    el, scale_el = _el(ta), _el(tsa)
    if el not in ("f8E4M3FN", "f8E5M2", "f4E2M1FN"):
        raise e.error(f"mmaf_scaled of {el} operands is not supported by the Triton lowering")
    if scale_el not in ("f8E8M0FNU", "f8E4M3FN"):
        raise e.error(f"mmaf_scaled with {scale_el} scales is not supported by the Triton lowering")
    if _el(tc) != "f32":
        raise e.error("mmaf_scaled needs an f32 accumulator")
    shape_a, shape_b, _, shape_sa, shape_sb = shapes
    k = shape_a[-1]
    block = k // shape_sa[-1]
    if block * shape_sa[-1] != k or block * shape_sb[-2] != k:
        raise e.error(f"scale tiles {shape_sa} and {shape_sb} do not divide K = {k}")
    lead = shape_a[:-2]
    m, n = shape_a[-2], shape_b[-1]
    nb = shape_sa[-1]

    def shape(*dims: int) -> str:
        return "(" + ", ".join(map(str, (*lead, *dims))) + ")"

    # A computed scale tile reaches Triton's layout propagation from the op it is computed
    # from. Where that op also feeds the operand (an extract of the same tile, say), the
    # scale's layout can reach the dequantizing multiplication first, and Triton keeps the
    # first layout to arrive (RemoveLayoutConversions: depth first from each anchor): a
    # reduction's slice layout, every lane holding the same elements, broadcast to the whole
    # operand. A 64x64 mmaf_scaled with scales extracted from its operand's source tile: 18 s
    # and 9 KB of spills for sm_80, 80 s and 6 KB for sm_90. A gather of the tile by an
    # identity index propagates only its index's layout (none), so the multiplication takes
    # the operand's: 0.9 s, no spills, for both; flattened first (unanchored's measures),
    # 80-92 registers instead of 170-176. Scales loaded straight from memory keep
    # their load's layout (unanchored there, 128x128x128 staged 160 KB in shared memory for
    # sm_80, where it had 33 KB).
    if not _loaded_as_given(e, 3, shape_sa):
        sa_ = unanchored(e, sa_, shape_sa)
    if not _loaded_as_given(e, 4, shape_sb):
        sb_ = unanchored(e, sb_, shape_sb)
    # Each scale repeated over its block of K: (.., M, nb) -> (.., M, nb, V) -> (.., M, K).
    xa, sa = e.tmp("scale_a"), to_f32(e, sa_, scale_el)
    e.line(
        f"{xa} = tl.reshape(tl.broadcast_to(tl.reshape({sa}, {shape(m, nb, 1)}, can_reorder=False), "
        f"{shape(m, nb, block)}), {shape(m, k)}, can_reorder=False)"
    )
    xb, sb = e.tmp("scale_b"), to_f32(e, sb_, scale_el)
    e.line(
        f"{xb} = tl.reshape(tl.broadcast_to(tl.reshape({sb}, {shape(nb, 1, n)}, can_reorder=False), "
        f"{shape(nb, block, n)}), {shape(k, n)}, can_reorder=False)"
    )
    da, db = e.tmp("lhs_scaled"), e.tmp("rhs_scaled")
    e.line(f"{da} = {to_f32(e, a, el)} * {xa}")
    e.line(f"{db} = {to_f32(e, b, el)} * {xb}")
    if k < 16:  # (the products of scaled f8 and f4 values are exact in f32)
        return small_k(e, da, db, c, shape_a, shape_b, integer=False)
    return f"tl.dot({da}, {db}, acc={c}, input_precision='tf32', out_dtype=tl.float32)"
