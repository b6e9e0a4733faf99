"""Triton equivalents of the Tile IR benchmark kernels in this folder, with the same tiling.

Imported only by the Triton worker of `benchmarks/interp.py`, in a subprocess started with
`TRITON_INTERPRET=1` (Triton's CPU interpreter), so that importing Triton and torch never
touches the process that times our interpreter. Needs `triton` and torch
(`pip install -e '.[bench]'`).

Each kernel is written the way a Triton user would write the same computation:
- `vector_add`: one program per BLOCK (1024) elements, masked at the end;
- `softmax`: one program per BLOCK_M (4) rows of BLOCK_N (1024) columns, masked columns read
  as -inf, like the Tile IR kernel's 4 x 1024 tiles;
- `matmul`: one program per BM x BN (128 x 128) tile of C, walking K in BK (32) steps with
  `tl.dot` on f16 inputs into an f32 accumulator;
- `loop_sum`: one program adding a BLOCK (32) element vector into a sum `steps` times.
"""

from __future__ import annotations

import triton
import triton.language as tl

from compiler.runtime.interpret import patch_interpreter

# Triton 3.6's interpreter with NumPy >= 2.4 fails on tensor loop bounds; the same
# compatibility patch as the project's triton-interpret backend.
patch_interpreter()


@triton.jit
def vector_add(a, b, c, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(a + offs, mask=mask, other=0.0)
    y = tl.load(b + offs, mask=mask, other=0.0)
    tl.store(c + offs, x + y, mask=mask)


@triton.jit
def softmax(x, y, rows, cols, x_rs, y_rs, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    r = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    k = tl.arange(0, BLOCK_N)
    mask = (r[:, None] < rows) & (k[None, :] < cols)
    v = tl.load(x + r[:, None] * x_rs + k[None, :], mask=mask, other=-float("inf"))
    m = tl.max(v, axis=1)
    e = tl.exp(v - m[:, None])
    s = tl.sum(e, axis=1)
    tl.store(y + r[:, None] * y_rs + k[None, :], e / s[:, None], mask=mask)


@triton.jit
def matmul(a, b, c, M, N, K, a_rs, b_rs, c_rs, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BK)):
        kk = k0 * BK + rk
        ta = tl.load(a + rm[:, None] * a_rs + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        tb = tl.load(b + kk[:, None] * b_rs + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(ta, tb, acc)
    tl.store(c + rm[:, None] * c_rs + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def loop_sum(x, y, steps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(steps):
        acc += v
    tl.store(y + offs, acc)
