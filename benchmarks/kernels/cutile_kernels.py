"""cuTile Python sources of the GPU benchmark kernels (`benchmarks/gpu.py`).

`benchmarks/kernels/export_gpu_kernels.py` exports each kernel with cuTile (no GPU needed) to
`benchmarks/kernels/gpu_<name>.tileir`; the benchmark runs those committed files, since the
GPU machine has no cuTile. Needs `cuda-tile` (pip) to import.

The structure and tile sizes follow NVIDIA's cutile-python samples (samples/MatMul.py,
LayerNorm.py, AttentionFMHA.py, test/test_softmax.py), written anew and cut to what the
benchmark measures: one forward computation, no extra outputs (the layer norm stores
neither mean nor rstd, as `torch.nn.functional.layer_norm` does not without autograd).

Every kernel takes its tile sizes as `ct.Constant` arguments, so the exported file is
specialised to them; array extents and strides stay runtime parameters (cuTile's
convention: pointer, extents, strides per array).
"""

from __future__ import annotations

import math

import cuda.tile as ct

ConstInt = ct.Constant[int]
ZERO = ct.PaddingMode.ZERO
NEG_INF = ct.PaddingMode.NEG_INF
LOG2_E = 1.0 / math.log(2.0)


@ct.kernel
def matmul(A, B, C, TM: ConstInt, TN: ConstInt, TK: ConstInt, GROUP_M: ConstInt):
    """C = A @ B (A: M x K, B: K x N, C: M x N, all the same 16-bit type), accumulated in f32.

    One tile block per TM x TN tile of C on a 1-D grid of ceil(M/TM) * ceil(N/TN) blocks,
    numbered in groups of GROUP_M tile rows ("grouped order"): consecutive blocks share
    the same columns of B and a few rows of A, so those stay in L2 while they are reused."""
    M = A.shape[0]
    N = B.shape[1]
    bid = ct.bid(0)
    tiles_m = ct.cdiv(M, TM)
    tiles_n = ct.cdiv(N, TN)
    per_group = GROUP_M * tiles_n
    first_m = (bid // per_group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    bm = first_m + bid % rows_in_group
    bn = (bid % per_group) // rows_in_group
    acc = ct.full((TM, TN), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(A, axis=1, shape=(TM, TK))):
        a = ct.load(A, index=(bm, k), shape=(TM, TK), padding_mode=ZERO)
        b = ct.load(B, index=(k, bn), shape=(TK, TN), padding_mode=ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(C, index=(bm, bn), tile=acc.astype(C.dtype))


@ct.kernel
def softmax(X, Y, TM: ConstInt, TN: ConstInt):
    """Y = softmax(X) along rows (X, Y: M x N, N <= TN), computed in f32.

    One tile block per TM whole rows: grid ceil(M/TM). Columns past N load as -inf and
    contribute exp(-inf) = 0; rows past M are not stored."""
    bid = ct.bid(0)
    x = ct.load(X, index=(bid, 0), shape=(TM, TN), padding_mode=NEG_INF).astype(ct.float32)
    # exp(x - max) as exp2 of a scaled value, and one division per row, not per element:
    # per-element exp and f32 division made the first version compute-bound (42% of copy
    # bandwidth on an H200).
    e = ct.exp2((x - ct.max(x, axis=1, keepdims=True)) * LOG2_E, flush_to_zero=True)
    inverse = 1.0 / ct.sum(e, axis=1, keepdims=True)
    ct.store(Y, index=(bid, 0), tile=(e * inverse).astype(Y.dtype))


@ct.kernel
def layer_norm(X, W, B, Y, eps: float, TM: ConstInt, TN: ConstInt):
    """Y = (X - mean) / sqrt(var + eps) * W + B over each row (X, Y: M x N; W, B: N;
    N <= TN), statistics in f32 (biased variance, as torch).

    One tile block per TM whole rows: grid ceil(M/TM). A row is read once: columns past N
    load as zero and are masked out of the variance."""
    bid = ct.bid(0)
    n = X.shape[1]
    x = ct.load(X, index=(bid, 0), shape=(TM, TN), padding_mode=ZERO).astype(ct.float32)
    mean = ct.sum(x, axis=1, keepdims=True) / n
    inside = ct.arange(TN, dtype=ct.int32).reshape((1, TN)) < n
    centered = ct.where(inside, x - mean, 0.0)
    var = ct.sum(centered * centered, axis=1, keepdims=True) / n
    rstd = ct.rsqrt(var + eps)
    w = ct.load(W, index=(0,), shape=(TN,), padding_mode=ZERO).astype(ct.float32).reshape((1, TN))
    b = ct.load(B, index=(0,), shape=(TN,), padding_mode=ZERO).astype(ct.float32).reshape((1, TN))
    ct.store(Y, index=(bid, 0), tile=(centered * rstd * w + b).astype(Y.dtype))


@ct.kernel
def vector_add(A, B, C, T: ConstInt):
    """C = A + B elementwise (1-D, one type). One tile block per T elements: grid ceil(n/T)."""
    bid = ct.bid(0)
    a = ct.load(A, index=(bid,), shape=(T,), padding_mode=ZERO)
    b = ct.load(B, index=(bid,), shape=(T,), padding_mode=ZERO)
    ct.store(C, index=(bid,), tile=a + b)


@ct.kernel
def silu(X, Y, TM: ConstInt, TN: ConstInt):
    """Y = X * sigmoid(X) = X / (1 + exp(-X)) elementwise (2-D, one 16-bit type), in f32. One
    TM x TN tile per block of a (ceil(M/TM), ceil(N/TN)) grid."""
    bm = ct.bid(0)
    bn = ct.bid(1)
    x = ct.load(X, index=(bm, bn), shape=(TM, TN), padding_mode=ZERO).astype(ct.float32)
    ct.store(Y, index=(bm, bn), tile=(x / (1.0 + ct.exp(-x))).astype(Y.dtype))


@ct.kernel
def attention(Q, K, V, Out, qk_scale: float, H: ConstInt, TM: ConstInt, TN: ConstInt, D: ConstInt):
    """Out = softmax(Q K^T * qk_scale) V per (batch, head), non-causal (Q, K, V, Out:
    batch x H x L x D, one 16-bit type), with the online softmax of flash attention in f32.

    Grid (ceil(Lq/TM), batch * H): block (x, y) computes query rows [x*TM, x*TM + TM) of
    batch y // H, head y % H, walking the keys TN at a time. The key length must be a
    multiple of TN (no key masking); the head dimension is exactly D."""
    bm = ct.bid(0)
    bh = ct.bid(1)
    batch = bh // H
    head = bh % H
    scale = qk_scale * LOG2_E  # exp(x) = exp2(x * log2(e))
    q = ct.load(Q, index=(batch, head, bm, 0), shape=(1, 1, TM, D)).reshape((TM, D))
    row_max = ct.full((TM, 1), -math.inf, dtype=ct.float32)
    row_sum = ct.full((TM, 1), 0.0, dtype=ct.float32)
    acc = ct.full((TM, D), 0.0, dtype=ct.float32)
    for j in range(ct.cdiv(K.shape[2], TN)):
        # K's tile read transposed (D x TN) by the load's dimension order.
        kt = ct.load(K, index=(batch, head, 0, j), shape=(1, 1, D, TN), order=(0, 1, 3, 2)).reshape((D, TN))
        s = ct.mma(q, kt, ct.full((TM, TN), 0.0, dtype=ct.float32))
        new_max = ct.maximum(row_max, ct.max(s, axis=1, keepdims=True) * scale)
        p = ct.exp2(s * scale - new_max, flush_to_zero=True)
        alpha = ct.exp2(row_max - new_max, flush_to_zero=True)
        row_sum = row_sum * alpha + ct.sum(p, axis=1, keepdims=True)
        v = ct.load(V, index=(batch, head, j, 0), shape=(1, 1, TN, D)).reshape((TN, D))
        acc = ct.mma(p.astype(Q.dtype), v, acc * alpha)
        row_max = new_max
    out = (acc / row_sum).reshape((1, 1, TM, D)).astype(Out.dtype)
    ct.store(Out, index=(batch, head, bm, 0), tile=out)
