"""cuTile Python kernels as a cuTile user writes them, each with the arguments to run it on and
the result NumPy computes: what `launch_cutile` must run on every backend.

The kernels cover cuTile's API rather than Tile IR's (tests/lower/fuzz.py draws the IR): the
IR cuTile's own front end emits for row-wise norms, an online-softmax attention, a persistent
grid-stride loop, custom reduce/scan combiners, gathers and scatters with masks, atomics,
unsigned and signed integer division, conversions down to fp8, loads in Fortran order, and
the views a non-contiguous NumPy array becomes. Importing this module needs cuTile Python
(pip cuda-tile): tests import it after `pytest.importorskip("cuda.tile")`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any

import cuda.tile as ct
import ml_dtypes
import numpy as np

ConstInt = ct.Constant[int]


@ct.kernel
def layernorm(x, w, b, y, eps: float, N: ConstInt):
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, N))
    mean = ct.sum(t, axis=1, keepdims=True) / N
    d = t - mean
    var = ct.sum(d * d, axis=1, keepdims=True) / N
    wt = ct.reshape(ct.load(w, index=(0,), shape=(N,)), (1, N))
    bt = ct.reshape(ct.load(b, index=(0,), shape=(N,)), (1, N))
    ct.store(y, index=(row, 0), tile=d * ct.rsqrt(var + eps) * wt + bt)


@ct.kernel
def softmax_rows(x, y, N: ConstInt):
    # Rows shorter than the tile: the padding must not win the max nor add to the sum.
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, N), padding_mode=ct.PaddingMode.NEG_INF)
    e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
    ct.store(y, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))


@ct.kernel
def matmul(a, b, c, TM: ConstInt, TN: ConstInt, TK: ConstInt):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((TM, TN), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(a, axis=1, shape=(TM, TK))):
        x = ct.load(a, index=(bm, k), shape=(TM, TK), padding_mode=ct.PaddingMode.ZERO)
        y = ct.load(b, index=(k, bn), shape=(TK, TN), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(x, y, acc)
    ct.store(c, index=(bm, bn), tile=ct.astype(acc, c.dtype))


@ct.kernel
def matmul_i8(a, b, c, T: ConstInt):
    x = ct.load(a, index=(ct.bid(0), 0), shape=(T, T))
    y = ct.load(b, index=(0, ct.bid(1)), shape=(T, T))
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=ct.mma(x, y, ct.zeros((T, T), dtype=ct.int32)))


@ct.kernel
def attention(q, k, v, o, scale: float, TQ: ConstInt, TK: ConstInt, D: ConstInt):
    qt = ct.load(q, index=(ct.bid(0), 0), shape=(TQ, D))
    m = ct.full((TQ, 1), -math.inf, dtype=ct.float32)
    s_sum = ct.zeros((TQ, 1), dtype=ct.float32)
    acc = ct.zeros((TQ, D), dtype=ct.float32)
    for j in range(ct.num_tiles(k, axis=0, shape=(TK, D))):
        kt = ct.load(k, index=(j, 0), shape=(TK, D))
        s = ct.mma(qt, ct.transpose(kt), ct.zeros((TQ, TK), dtype=ct.float32)) * scale
        m_new = ct.maximum(m, ct.max(s, axis=1, keepdims=True))
        p = ct.exp(s - m_new)
        alpha = ct.exp(m - m_new)
        s_sum = s_sum * alpha + ct.sum(p, axis=1, keepdims=True)
        vt = ct.load(v, index=(j, 0), shape=(TK, D))
        acc = acc * alpha + ct.mma(ct.astype(p, ct.float16), vt, ct.zeros((TQ, D), dtype=ct.float32))
        m = m_new
    ct.store(o, index=(ct.bid(0), 0), tile=ct.astype(acc / s_sum, o.dtype))


@ct.kernel
def transpose(x, y, T: ConstInt):
    i, j = ct.bid(0), ct.bid(1)
    ct.store(y, index=(j, i), tile=ct.transpose(ct.load(x, index=(i, j), shape=(T, T))))


@ct.kernel
def fortran_order(x, y, TM: ConstInt, TN: ConstInt):
    # t[c, r] = x[i*TM + r, j*TN + c]: the tile of the transposed array.
    i, j = ct.bid(0), ct.bid(1)
    t = ct.load(x, index=(j, i), shape=(TN, TM), order="F")
    ct.store(y, index=(j, i), tile=t)


@ct.kernel
def permute3(x, y, A: ConstInt, B: ConstInt, C: ConstInt):
    t = ct.load(x, index=(0, 0, 0), shape=(A, B, C))
    ct.store(y, index=(0, 0, 0), tile=ct.permute(t, (2, 0, 1)))


@ct.kernel
def persistent_scale(x, y, a: float, T: ConstInt):
    for i in range(ct.bid(0), ct.num_tiles(x, axis=0, shape=(T,)), ct.num_blocks(0)):
        ct.store(y, index=(i,), tile=ct.load(x, index=(i,), shape=(T,)) * a)


@ct.kernel
def loop_branches(x, y, n: int, T: ConstInt):
    acc = ct.zeros((T,), dtype=ct.float32)
    for k in range(n):
        t = ct.load(x, index=(k,), shape=(T,))
        if k % 2 == 0:
            acc = acc + t
        else:
            acc = acc - t * 0.5
    ct.store(y, index=(0,), tile=acc)


@ct.kernel
def cumsum_rows(x, y, N: ConstInt, REVERSE: ct.Constant[bool]):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(1, N))
    ct.store(y, index=(ct.bid(0), 0), tile=ct.cumsum(t, axis=1, reverse=REVERSE))


def _times(a, b):
    return a * b


@ct.kernel
def custom_reduce_scan(x, p, s, N: ConstInt):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(1, N))
    ct.store(p, index=(ct.bid(0),), tile=ct.reduce(t, 1, _times, 1.0))
    ct.store(s, index=(ct.bid(0), 0), tile=ct.scan(t, 1, _times, 1.0))


@ct.kernel
def column_stats(x, mx, mn, am, N: ConstInt):
    t = ct.load(x, index=(0, ct.bid(0)), shape=(N, 16))
    ct.store(mx, index=(ct.bid(0),), tile=ct.max(t, axis=0))
    ct.store(mn, index=(ct.bid(0),), tile=ct.min(t, axis=0))
    ct.store(am, index=(ct.bid(0),), tile=ct.argmax(t, axis=0))


@ct.kernel
def gather_permuted(x, p, out, T: ConstInt):
    idx = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T
    ct.scatter(out, idx, ct.gather(x, ct.gather(p, idx)))


@ct.kernel
def reverse_masked(x, out, n: int, T: ConstInt):
    idx = ct.arange(T, dtype=ct.int32) + ct.bid(0) * T
    inside = idx < n
    v = ct.gather(x, idx, mask=inside, padding_value=0)
    ct.scatter(out, n - 1 - idx, v, mask=inside)


@ct.kernel
def histogram(data, hist, T: ConstInt):
    ct.atomic_add(hist, ct.load(data, index=(ct.bid(0),), shape=(T,)), 1)


@ct.kernel
def atomic_max_slots(vals, slots, best, T: ConstInt):
    v = ct.load(vals, index=(ct.bid(0),), shape=(T,))
    ct.atomic_max(best, ct.load(slots, index=(ct.bid(0),), shape=(T,)), v)


@ct.kernel
def claim_once(owner, seen, T: ConstInt):
    # Every block tries to claim every slot and keeps what it found there: one block per slot
    # finds it free (-1), whatever order the blocks run in, and the others find that one.
    old = ct.atomic_cas(owner, ct.arange(T, dtype=ct.int32), -1, ct.bid(0))
    ct.store(seen, index=(ct.bid(0), 0), tile=ct.reshape(old, (1, T)))


@ct.kernel
def signed_ints(a, b, q, r, bits, T: ConstInt):
    i = ct.bid(0)
    x = ct.load(a, index=(i,), shape=(T,))
    y = ct.load(b, index=(i,), shape=(T,))
    ct.store(q, index=(i,), tile=x // y)
    ct.store(r, index=(i,), tile=x % y)
    ct.store(bits, index=(i,), tile=(x << 3) ^ (y >> 1) | (x & 0xF0))


@ct.kernel
def unsigned_floordiv(a, b, q, T: ConstInt):
    i = ct.bid(0)
    ct.store(q, index=(i,), tile=ct.load(a, index=(i,), shape=(T,)) // ct.load(b, index=(i,), shape=(T,)))


@ct.kernel
def unsigned_ints(a, b, out, T: ConstInt):
    i = ct.bid(0)
    x = ct.load(a, index=(i,), shape=(T,))
    y = ct.load(b, index=(i,), shape=(T,))
    ct.store(out, index=(i,), tile=ct.where(x > y, (x >> 5) ^ y, x % y + (y >> 3)))


@ct.kernel
def conversions(x, h, bf, i8, f8, T: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(T,))
    ct.store(h, index=(i,), tile=ct.astype(t, ct.float16))
    ct.store(bf, index=(i,), tile=ct.astype(ct.astype(t, ct.bfloat16), ct.float32))
    ct.store(i8, index=(i,), tile=ct.astype(t * 10, ct.int8))
    ct.store(f8, index=(i,), tile=ct.astype(ct.astype(t, ct.float8_e4m3fn), ct.float32))


@ct.kernel
def float_bits(x, bits, nan, fl, ce, T: ConstInt):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(T,))
    ct.store(bits, index=(i,), tile=ct.bitcast(t, ct.int32))
    ct.store(nan, index=(i,), tile=ct.isnan(t))
    ct.store(fl, index=(i,), tile=ct.floor(t))
    ct.store(ce, index=(i,), tile=ct.ceil(t))


@ct.kernel
def clamp_leaky(x, y, alpha: float, T: ConstInt):
    t = ct.load(x, index=(ct.bid(0),), shape=(T,), padding_mode=ct.PaddingMode.ZERO)
    ct.store(y, index=(ct.bid(0),), tile=ct.minimum(ct.maximum(ct.where(t > 0, t, alpha * t), -1.0), 1.5))


@ct.kernel
def reshapes(x, y, T: ConstInt):
    t = ct.load(x, index=(ct.bid(0), 0), shape=(2, T))
    swapped = ct.cat((ct.extract(t, (1, 0), (1, T)), ct.extract(t, (0, 0), (1, T))), axis=1)
    row = ct.expand_dims(ct.reshape(swapped, (2 * T,)), 0)
    ramp = ct.reshape(ct.arange(2, dtype=ct.float32), (2, 1))
    ct.store(y, index=(ct.bid(0), 0), tile=ct.broadcast_to(row, (2, 2 * T)) + ramp)


@ct.kernel
def math_exact(x, y, T: ConstInt):
    # Functions Triton's interpreter runs as it compiles them (no libdevice, no inline PTX).
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    a = ct.abs(t)
    ct.store(y, index=(ct.bid(0),), tile=ct.exp(t) + ct.log(a + 1) + ct.sin(t) - ct.cos(t) + ct.sqrt(a) + ct.exp2(t))


@ct.kernel
def math_libdevice(x, y, T: ConstInt):
    # What the GPU computes with libdevice (Triton's interpreter cannot run it).
    t = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0),), tile=ct.tanh(t) + ct.pow(ct.abs(t), 1.5) + ct.atan2(t, t + 2.0) + ct.sinh(t))


@ct.kernel
def batched_mma_f64(a, b, c, B: ConstInt, T: ConstInt):
    x = ct.load(a, index=(0, 0, 0), shape=(B, T, T))
    y = ct.load(b, index=(0, 0, 0), shape=(B, T, T))
    ct.store(c, index=(0, 0, 0), tile=ct.mma(x, y, ct.zeros((B, T, T), dtype=ct.float64)))


@ct.kernel
def matmul_tf32(a, b, c, T: ConstInt):
    x = ct.astype(ct.load(a, index=(0, 0), shape=(T, T)), ct.tfloat32)
    y = ct.astype(ct.load(b, index=(0, 0), shape=(T, T)), ct.tfloat32)
    ct.store(c, index=(0, 0), tile=ct.mma(x, y, ct.zeros((T, T), dtype=ct.float32)))


@ct.kernel
def wide_indices(x: ct.IndexedWithInt64, y, n: ct.ScalarInt64, T: ConstInt):
    # i64 extents and strides, an i64 scalar, and load hints (latency, no TMA).
    t = ct.load(x, index=(ct.bid(0),), shape=(T,), latency=3, allow_tma=False)
    ct.store(y, index=(ct.bid(0),), tile=t + ct.astype(n, ct.float32))


@ct.kernel
def while_break(x, y, T: ConstInt):
    i = 0
    acc = ct.zeros((T,), dtype=ct.float32)
    while i < 10:
        t = ct.load(x, index=(i,), shape=(T,))
        if ct.sum(t) > 3.0:
            break
        acc = acc + t
        i += 1
    ct.store(y, index=(0,), tile=acc)


@ct.function
def _shrink(t, s):
    return ct.where(t > s, t - s, ct.where(t < -s, t + s, t * 0))


@ct.kernel
def soft_threshold(x, y, s: float, T: ConstInt):
    ct.store(y, index=(ct.bid(0),), tile=_shrink(ct.load(x, index=(ct.bid(0),), shape=(T,)), s))


@ct.kernel
def gather_rows(x, rows, y, R: ConstInt, N: ConstInt):
    r = ct.reshape(ct.load(rows, index=(0,), shape=(R,)), (R, 1))
    ct.store(y, index=(0, 0), tile=ct.gather(x, (r, ct.reshape(ct.arange(N, dtype=ct.int32), (1, N)))))


@ct.kernel
def unrolled_weights(x, y, T: ConstInt):
    acc = ct.zeros((T,), dtype=ct.float32)
    for k in ct.static_iter(range(3)):
        acc = acc + ct.load(x, index=(k,), shape=(T,)) * (k + 1)
    ct.store(y, index=(0,), tile=acc)


@ct.kernel
def not_and_negate(a, o, T: ConstInt):
    t = ct.load(a, index=(0,), shape=(T,))
    ct.store(o, index=(0,), tile=ct.bitwise_not(t) + (-t))


@ct.kernel
def matmul_fp8(a, b, c, T: ConstInt):
    x = ct.load(a, index=(0, 0), shape=(T, T))
    y = ct.load(b, index=(0, 0), shape=(T, T))
    ct.store(c, index=(0, 0), tile=ct.mma(x, y, ct.zeros((T, T), dtype=ct.float32)))


@ct.kernel
def matmul_scaled(a, a_scale, b, b_scale, c, T: ConstInt, K: ConstInt):
    # fp8 operands with an e8m0 scale per 32 elements along K (MX formats).
    x = ct.load(a, index=(0, 0), shape=(T, K))
    y = ct.load(b, index=(0, 0), shape=(K, T))
    xs = ct.load(a_scale, index=(0, 0), shape=(T, K // 32))
    ys = ct.load(b_scale, index=(0, 0), shape=(K // 32, T))
    ct.store(c, index=(0, 0), tile=ct.mma_scaled(x, xs, y, ys, ct.zeros((T, T), dtype=ct.float32)))


@ct.kernel
def bitwise_atomics(vals, slots, all_of, any_of, parity, least, last, T: ConstInt):
    i = ct.load(slots, index=(0,), shape=(T,))
    v = ct.load(vals, index=(0,), shape=(T,))
    ct.atomic_and(all_of, i, v)
    ct.atomic_or(any_of, i, v)
    ct.atomic_xor(parity, i, v)
    ct.atomic_min(least, i, v)
    ct.atomic_xchg(last, i, v)


@ct.kernel
def products_and_minima(x, p, am, cp, T: ConstInt):
    t = ct.load(x, index=(0, 0), shape=(4, T))
    ct.store(p, index=(0,), tile=ct.prod(t, axis=1))
    ct.store(am, index=(0,), tile=ct.argmin(t, axis=1))
    ct.store(cp, index=(0, 0), tile=ct.cumprod(t, axis=1))


@ct.kernel
def acquire_release(x, y, T: ConstInt):
    t = ct.load(x, index=(0,), shape=(T,), memory_order=ct.MemoryOrder.ACQUIRE, memory_scope=ct.MemoryScope.DEVICE)
    ct.store(y, index=(0,), tile=t, memory_order=ct.MemoryOrder.RELEASE, memory_scope=ct.MemoryScope.DEVICE)


@ct.kernel
def positive_sum(x, T: ConstInt):
    ct.assert_(ct.sum(ct.load(x, index=(0,), shape=(T,))) > 0, "the sum must be positive")


@ct.kernel
def slice_and_count(x, y, count, start: int, stop: int, T: ConstInt):
    # `count` is a 0-d array. (A tile of an empty slice, start == stop, would lie wholly
    # outside it: undefined behaviour, as cuTile's docs say of `ct.load`.)
    t = ct.load(x.slice(0, start, stop), index=(0,), shape=(T,))
    ct.store(y.slice(0, start, stop), index=(0,), tile=t + 1)
    ct.scatter(count, (), ct.gather(count, ()) + 1)


@ct.kernel
def static_dims(
    x: Annotated[ct.Array, ct.ArrayAnnotation(static_shape_dims=(0,), static_stride_dims=(0, 1))],
    y,
    TN: ConstInt,
):
    # Compile-time extents and strides, the annotated ones (y's unit stride is one too, for
    # the code cuTile's launch and launch_cutile's export make, but not one a kernel can see).
    ct.static_assert(x.shape[0] == 4)
    ct.static_assert(x.strides[1] == 1)
    t = ct.load(x, index=(0, 0), shape=(4, TN))
    ct.store(y, index=(0, 0), tile=t * 2)


class Case:
    """A kernel and how to run it: `make(rng)` gives (grid, args, expected), `expected` a dict
    from an argument's position to the array it must hold afterwards, compared within `rtol`
    and `atol` (0, 0: equal, NaNs included), or a function of the arguments that asserts
    what must hold in whatever order the tile blocks ran. `interpretable`: whether Triton's
    interpreter can run it (not where the lowering needs libdevice or inline PTX).
    `tileiras_refuses`: the targets NVIDIA's tileiras refuses it for, with what it says
    (where our lowering takes an exact slower path)."""

    def __init__(
        self,
        name: str,
        kernel: Any,
        make: Callable[[np.random.Generator], tuple[Any, list[Any], Any]],
        rtol: float = 0.0,
        atol: float = 0.0,
        interpretable: bool = True,
        tileiras_refuses: dict[str, str] | None = None,
    ) -> None:
        self.name, self.kernel, self.make = name, kernel, make
        self.rtol, self.atol, self.interpretable = rtol, atol, interpretable
        self.tileiras_refuses = tileiras_refuses or {}

    def __repr__(self) -> str:
        return self.name

    def run(self, backend: str, host: Callable[[np.ndarray], Any] = lambda a: a) -> Any:
        """Run the kernel on `backend` with fresh arguments (`host` maps each array to what is
        passed, a torch GPU tensor say) and check its results; the launch's result."""
        from compiler.runtime import launch_cutile

        grid, args, expected = self.make(np.random.default_rng(0))
        passed = [host(a) if isinstance(a, np.ndarray) else a for a in args]
        result = launch_cutile(self.kernel, grid=grid, args=passed, backend=backend)
        back = [_to_numpy(p) if isinstance(a, np.ndarray) else a for a, p in zip(args, passed)]
        if callable(expected):
            expected(back)
            return result
        for i, want in expected.items():
            got = back[i]
            if self.rtol or self.atol:
                np.testing.assert_allclose(got.astype(np.float64), want, self.rtol, self.atol, err_msg=f"argument {i}")
            else:
                np.testing.assert_array_equal(got, np.asarray(want).astype(got.dtype), err_msg=f"argument {i}")
        return result


def _to_numpy(a: Any) -> np.ndarray:
    return a if isinstance(a, np.ndarray) else a.cpu().numpy()


def _f32(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _layernorm(rng):
    x, w, b = _f32(rng, 8, 64), _f32(rng, 64), _f32(rng, 64)
    m = x.mean(1, keepdims=True, dtype=np.float64)
    ref = (x - m) / np.sqrt(x.var(1, keepdims=True, dtype=np.float64) + 1e-5) * w + b
    return (8,), [x, w, b, np.zeros_like(x), 1e-5, 64], {3: ref}


def _softmax(rng):
    x = _f32(rng, 6, 50, scale=4)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    return (6,), [x, np.zeros_like(x), 64], {1: e / e.sum(1, keepdims=True)}


def _matmul(rng):
    a, b = _f32(rng, 96, 80).astype(np.float16), _f32(rng, 80, 64).astype(np.float16)
    return (3, 2), [a, b, np.zeros((96, 64), np.float32), 32, 32, 32], {2: a.astype(np.float64) @ b}


def _matmul_i8(rng):
    a, b = rng.integers(-128, 128, (32, 16), dtype=np.int8), rng.integers(-128, 128, (16, 48), dtype=np.int8)
    return (2, 3), [a, b, np.zeros((32, 48), np.int32), 16], {2: a.astype(np.int32) @ b.astype(np.int32)}


def _attention(rng):
    q, k, v = (_f32(rng, 64, 32).astype(np.float16) for _ in range(3))
    scale = 1 / math.sqrt(32)
    s = q.astype(np.float64) @ k.astype(np.float64).T * scale
    p = np.exp(s - s.max(1, keepdims=True))
    ref = p / p.sum(1, keepdims=True) @ v.astype(np.float64)
    return (4,), [q, k, v, np.zeros((64, 32), np.float32), scale, 16, 16, 32], {3: ref}


def _transpose(rng):
    x = _f32(rng, 64, 32)
    return (4, 2), [x, np.zeros((32, 64), np.float32), 16], {1: x.T.copy()}


def _transpose_of_a_view(rng):
    # A transposed and a strided NumPy view: arrays whose strides are not C order's.
    base = _f32(rng, 64, 64)
    x = base.T[:, ::2]  # (64, 32), strides (4, 512)
    return (4, 2), [x, np.zeros((32, 64), np.float32), 16], {1: x.T.copy()}


def _fortran_order(rng):
    x = _f32(rng, 32, 48)
    return (2, 3), [x, np.zeros((48, 32), np.float32), 16, 16], {1: x.T.copy()}


def _permute3(rng):
    x = _f32(rng, 2, 4, 8)
    return (1,), [x, np.zeros((8, 2, 4), np.float32), 2, 4, 8], {1: x.transpose(2, 0, 1).copy()}


def _persistent(rng):
    x = _f32(rng, 10 * 32)
    return (3,), [x, np.zeros_like(x), 2.5, 32], {1: x * np.float32(2.5)}


def _loop_branches(rng):
    x = _f32(rng, 5 * 16)
    ref = np.zeros(16, np.float32)
    for k in range(5):
        t = x[16 * k : 16 * k + 16]
        ref = ref + t if k % 2 == 0 else ref - t * np.float32(0.5)
    return (1,), [x, np.zeros(16, np.float32), 5, 16], {1: ref}


def _cumsum(rng):
    x = _f32(rng, 4, 32)
    return (4,), [x, np.zeros_like(x), 32, True], {1: np.cumsum(x[:, ::-1].astype(np.float64), 1)[:, ::-1]}


def _reduce_scan(rng):
    x = (1 + _f32(rng, 4, 16) * 0.1).astype(np.float32)
    p, s = np.zeros(4, np.float32), np.zeros_like(x)
    return (4,), [x, p, s, 16], {1: x.astype(np.float64).prod(1), 2: np.cumprod(x.astype(np.float64), 1)}


def _column_stats(rng):
    x = _f32(rng, 32, 48)
    outs = [np.zeros(48, np.float32), np.zeros(48, np.float32), np.zeros(48, np.int32)]
    return (3,), [x, *outs, 32], {1: x.max(0), 2: x.min(0), 3: x.argmax(0).astype(np.int32)}


def _gather(rng):
    x, p = _f32(rng, 128), rng.permutation(128).astype(np.int32)
    return (4,), [x, p, np.zeros_like(x), 32], {2: x[p]}


def _reverse(rng):
    x = _f32(rng, 100)
    return (4,), [x, np.zeros_like(x), 100, 32], {1: x[::-1].copy()}


def _histogram(rng):
    d = rng.integers(0, 16, 256).astype(np.int32)
    return (4,), [d, np.zeros(16, np.int32), 64], {1: np.bincount(d, minlength=16).astype(np.int32)}


def _atomic_max(rng):
    vals, slots = rng.integers(-1000, 1000, 128).astype(np.int32), rng.integers(0, 8, 128).astype(np.int32)
    best = np.full(8, -(2**31), np.int32)
    ref = best.copy()
    np.maximum.at(ref, slots, vals)
    return (4,), [vals, slots, best, 32], {2: ref}


def _claim_once(rng):
    def check(args: list[Any]) -> None:
        owner, seen = args[0], args[1]
        for slot in range(16):
            assert 0 <= owner[slot] < 3, (slot, owner[slot])
            found = sorted(seen[:, slot].tolist())
            assert found == sorted([-1] + [int(owner[slot])] * 2), (slot, found)  # one free, two taken

    return (3,), [np.full(16, -1, np.int32), np.zeros((3, 16), np.int32), 16], check


def _signed_ints(rng):
    a = rng.integers(-1000, 1000, 64).astype(np.int32)
    b = (rng.integers(1, 50, 64) * rng.choice([-1, 1], 64)).astype(np.int32)
    outs = [np.zeros(64, np.int32) for _ in range(3)]
    return (2,), [a, b, *outs, 32], {2: a // b, 3: a % b, 4: (a << 3) ^ (b >> 1) | (a & 0xF0)}


def _unsigned_floordiv(rng):
    a = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(1, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    return (2,), [a, b, np.zeros(64, np.uint32), 32], {2: a // b}


def _unsigned_ints(rng):
    a = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(1, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    return (2,), [a, b, np.zeros(64, np.uint32), 32], {2: np.where(a > b, (a >> 5) ^ b, a % b + (b >> 3))}


def _conversions(rng):
    x = _f32(rng, 64, scale=5)
    x[:4] = [0.5, -2.5, 12.7, -12.75]  # halfway cases and truncation toward zero
    outs = [np.zeros(64, np.float16), np.zeros(64, np.float32), np.zeros(64, np.int8), np.zeros(64, np.float32)]
    return (
        (2,),
        [x, *outs, 32],
        {
            1: x.astype(np.float16),
            2: x.astype(ml_dtypes.bfloat16).astype(np.float32),
            3: np.trunc(x * np.float32(10)).astype(np.int8),
            4: x.astype(ml_dtypes.float8_e4m3fn).astype(np.float32),
        },
    )


def _float_bits(rng):
    x = _f32(rng, 64, scale=3)
    x[:4] = [np.nan, -np.inf, -0.0, 2.5]
    outs = [np.zeros(64, np.int32), np.zeros(64, np.bool_), np.zeros(64, np.float32), np.zeros(64, np.float32)]
    return (2,), [x, *outs, 32], {1: x.view(np.int32), 2: np.isnan(x), 3: np.floor(x), 4: np.ceil(x)}


def _clamp_leaky(rng):
    x = _f32(rng, 50, scale=3)
    return (2,), [x, np.zeros_like(x), 0.1, 32], {1: np.clip(np.where(x > 0, x, np.float32(0.1) * x), -1, 1.5)}


def _reshapes(rng):
    x = _f32(rng, 4, 16)
    ref = np.zeros((4, 32), np.float32)
    for i in range(2):
        row = np.concatenate([x[2 * i + 1], x[2 * i]])
        ref[2 * i : 2 * i + 2] = row[None, :] + np.arange(2, dtype=np.float32)[:, None]
    return (2,), [x, np.zeros((4, 32), np.float32), 16], {1: ref}


def _math_exact(rng):
    x = _f32(rng, 64).astype(np.float64)
    a = np.abs(x)
    ref = np.exp(x) + np.log(a + 1) + np.sin(x) - np.cos(x) + np.sqrt(a) + np.exp2(x)
    return (2,), [x.astype(np.float32), np.zeros(64, np.float32), 32], {1: ref}


def _math_libdevice(rng):
    x = _f32(rng, 64).astype(np.float64)
    ref = np.tanh(x) + np.abs(x) ** 1.5 + np.arctan2(x, x + 2) + np.sinh(x)
    return (2,), [x.astype(np.float32), np.zeros(64, np.float32), 32], {1: ref}


def _batched_mma_f64(rng):
    a, b = rng.standard_normal((2, 16, 16)), rng.standard_normal((2, 16, 16))
    return (1,), [a, b, np.zeros((2, 16, 16)), 2, 16], {2: a @ b}


def _matmul_tf32(rng):
    a, b = _f32(rng, 16, 16), _f32(rng, 16, 16)
    return (1,), [a, b, np.zeros((16, 16), np.float32), 16], {2: a.astype(np.float64) @ b}


def _wide_indices(rng):
    x = _f32(rng, 64)
    n = 2**40 + 3
    return (2,), [x, np.zeros_like(x), n, 32], {1: x + np.float32(n)}


def _while_break(rng):
    x = (rng.random(80) * 0.2).astype(np.float32)
    x[40:48] = 1.0  # the sixth tile sums past 3: the loop leaves before adding it
    return (1,), [x, np.zeros(8, np.float32), 8], {1: x[:40].reshape(5, 8).sum(0, dtype=np.float64)}


def _soft_threshold(rng):
    x = _f32(rng, 64)
    s = np.float32(0.5)
    return (2,), [x, np.zeros_like(x), 0.5, 32], {1: np.where(x > s, x - s, np.where(x < -s, x + s, x * 0))}


def _gather_rows(rng):
    x, rows = _f32(rng, 20, 8), rng.integers(0, 20, 4).astype(np.int32)
    return (1,), [x, rows, np.zeros((4, 8), np.float32), 4, 8], {2: x[rows]}


def _unrolled(rng):
    x = _f32(rng, 24)
    return (1,), [x, np.zeros(8, np.float32), 8], {1: x[:8] + 2 * x[8:16].astype(np.float64) + 3 * x[16:]}


def _not_and_negate(rng):
    a = rng.integers(0, 2**32, 16, dtype=np.uint64).astype(np.uint32)
    return (1,), [a, np.zeros(16, np.uint32), 16], {1: ~a + (np.uint32(0) - a)}


def _matmul_fp8(rng):
    a = rng.uniform(-2, 2, (16, 16)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.uniform(-2, 2, (16, 16)).astype(ml_dtypes.float8_e4m3fn)
    return (1,), [a, b, np.zeros((16, 16), np.float32), 16], {2: a.astype(np.float64) @ b.astype(np.float64)}


def _matmul_scaled(rng):
    a = rng.uniform(-2, 2, (16, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.uniform(-2, 2, (64, 16)).astype(ml_dtypes.float8_e4m3fn)
    ea, eb = rng.integers(125, 130, (16, 2)), rng.integers(125, 130, (2, 16))  # 2^(e - 127)
    a_scale, b_scale = (e.astype(np.uint8).view(ml_dtypes.float8_e8m0fnu) for e in (ea, eb))
    xa = a.astype(np.float64) * np.repeat(2.0 ** (ea - 127), 32, axis=1)  # (exact products and sums)
    xb = b.astype(np.float64) * np.repeat(2.0 ** (eb - 127), 32, axis=0)
    exact, mag = xa @ xb, np.abs(xa) @ np.abs(xb)

    def check(args: list[Any]) -> None:
        # The products span more bits than an f32 holds, so their f32 sums depend on the order,
        # which is the executor's (Triton's interpreter: numpy's matmul, whose order follows the
        # CPU): within ops_mma's bound, (K + 1) u sum |a b| past the final rounding.
        error = np.abs(args[4].astype(np.float64) - exact)
        assert np.all(error <= 2.0**-24 * np.abs(exact) + 65 * 2.0**-24 * mag), error.max()

    return (1,), [a, a_scale, b, b_scale, np.zeros((16, 16), np.float32), 16, 64], check


def _bitwise_atomics(rng):
    vals, slots = rng.integers(0, 1000, 32).astype(np.int32), rng.integers(0, 4, 32).astype(np.int32)
    starts = (-1, 0, 0, 10**6, -1)
    outs = [np.full(4, v, np.int32) for v in starts]

    def check(args: list[Any]) -> None:
        want = [np.full(4, v, np.int32) for v in starts[:4]]
        for ufunc, w in zip((np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.minimum), want, strict=True):
            ufunc.at(w, slots, vals)
        for got, w in zip(args[2:6], want, strict=True):
            np.testing.assert_array_equal(got, w)
        for slot in range(4):  # xchg: the lanes' order is unspecified, so one of the values sent there
            assert args[6][slot] in vals[slots == slot], (slot, args[6][slot])

    return (1,), [vals, slots, *outs, 32], check


def _products_and_minima(rng):
    x = (1 + _f32(rng, 4, 8) * 0.1).astype(np.float32)
    outs = [np.zeros(4, np.float32), np.zeros(4, np.int32), np.zeros_like(x)]
    wide = x.astype(np.float64)
    return (1,), [x, *outs, 8], {1: wide.prod(1), 2: x.argmin(1), 3: np.cumprod(wide, 1)}


def _acquire_release(rng):
    x = _f32(rng, 16)
    return (1,), [x, np.zeros_like(x), 16], {1: x}


def _slice(rng):
    x = _f32(rng, 16)
    y = np.zeros_like(x)
    y[2:7] = x[2:7] + 1
    return (1,), [x, np.zeros_like(x), np.array(41, np.int32), 2, 7, 8], {1: y, 2: np.array(42)}


def _static_dims(rng):
    x = _f32(rng, 4, 10)[:, :8]  # strides (10, 1)
    return (1,), [x, np.zeros((4, 8), np.float32), 8], {1: x * 2}


CASES = [
    Case("layernorm", layernorm, _layernorm, rtol=1e-5, atol=1e-5),
    Case("softmax_rows", softmax_rows, _softmax, rtol=1e-5, atol=1e-7),
    Case("matmul_f16", matmul, _matmul, rtol=1e-5, atol=1e-4),
    Case("matmul_i8", matmul_i8, _matmul_i8),
    Case("attention", attention, _attention, rtol=1e-2, atol=1e-2),  # p rounded to f16, as on a GPU
    Case("transpose", transpose, _transpose),
    Case("transpose_of_a_view", transpose, _transpose_of_a_view),
    Case("fortran_order", fortran_order, _fortran_order),
    Case("permute3", permute3, _permute3),
    Case("persistent_scale", persistent_scale, _persistent),
    Case("loop_branches", loop_branches, _loop_branches),
    Case("cumsum_reverse", cumsum_rows, _cumsum, rtol=1e-5, atol=1e-5),
    Case("custom_reduce_scan", custom_reduce_scan, _reduce_scan, rtol=1e-5),
    Case("column_stats", column_stats, _column_stats),
    Case("gather_permuted", gather_permuted, _gather),
    Case("reverse_masked", reverse_masked, _reverse),
    Case("histogram", histogram, _histogram),
    Case("atomic_max", atomic_max_slots, _atomic_max),
    Case("claim_once", claim_once, _claim_once),
    Case("signed_ints", signed_ints, _signed_ints),
    Case("unsigned_ints", unsigned_ints, _unsigned_ints),
    Case("conversions", conversions, _conversions, tileiras_refuses={"sm_80": "unsupported type 'f8E4M3FN'"}),
    Case("float_bits", float_bits, _float_bits),
    Case("clamp_leaky", clamp_leaky, _clamp_leaky),
    Case("reshapes", reshapes, _reshapes),
    Case("math_exact", math_exact, _math_exact, rtol=1e-5, atol=1e-5),
    Case("math_libdevice", math_libdevice, _math_libdevice, rtol=1e-5, atol=1e-5, interpretable=False),
    Case("batched_mma_f64", batched_mma_f64, _batched_mma_f64, rtol=1e-12, atol=1e-12),
    Case("matmul_tf32", matmul_tf32, _matmul_tf32, rtol=1e-2, atol=2e-2),  # operands rounded to tf32
    Case("wide_indices", wide_indices, _wide_indices),
    Case("while_break", while_break, _while_break, rtol=1e-6),
    Case("soft_threshold", soft_threshold, _soft_threshold),
    Case("gather_rows", gather_rows, _gather_rows),
    Case("unrolled_weights", unrolled_weights, _unrolled, rtol=1e-6, atol=1e-6),
    Case("not_and_negate", not_and_negate, _not_and_negate),
    Case("matmul_fp8", matmul_fp8, _matmul_fp8, tileiras_refuses={"sm_80": "unsupported type 'f8E4M3FN'"}),
    Case(
        "matmul_scaled",
        matmul_scaled,
        _matmul_scaled,
        tileiras_refuses={"sm_80": "unsupported type 'f8E", "sm_90": "unsupported type 'f8E8M0FNU'"},
    ),
    Case("bitwise_atomics", bitwise_atomics, _bitwise_atomics),
    Case("products_and_minima", products_and_minima, _products_and_minima, rtol=1e-6),
    Case("acquire_release", acquire_release, _acquire_release),
    Case("slice", slice_and_count, _slice),
    Case("static_dims", static_dims, _static_dims),
]

# cuTile Python 1.7 exports `x // y` of unsigned integers as `divi unsigned rounding<negative_inf>`,
# which NVIDIA's verifier refuses (tileiras too): kept apart, tests/runtime/test_cutile_zoo.py
# checks that the refusal names the kernel's line, or, once cuTile exports it validly, the result.
UNSIGNED_FLOORDIV = Case("unsigned_floordiv", unsigned_floordiv, _unsigned_floordiv)
