"""`fold`: a commutative fold (a sum, an any, a max) written for both of the generated module's
runners: `tl.reduce` for the GPU, and for Triton's interpreter a tree in the CPU interpreter's
order, which that interpreter runs in log2(n) combiner calls instead of n (the emitters of
reduce, extract, small permutes, small-K products and nibble stores use it)."""

from __future__ import annotations

from .codegen import OpEmit

# fold's path under Triton's interpreter: one helper for any tile, axis and combiner. It runs
# there as Python (shapes are Python values, the loop a Python loop), which compiled Triton
# could not. A GPU compile never runs it (the other side of `... if INTERPRETED else ...`) but
# still reads it (Triton parses and hashes every function a kernel names): the whole cold
# compile of examples/softmax, two reductions, took 0.5% more instructions (callgrind),
# against 1.9% with the tree written out in the kernel per fold, as ops_reduce._tree_reduce
# writes it.
_FOLD_TREE = """@triton.jit
def {name}(x, axis: tl.constexpr, combine: tl.constexpr, keep_dims: tl.constexpr):
    # Triton's interpreter only (compiler/lower/fold.py): x folded along `axis` by `combine` in the CPU
    # interpreter's pairwise tree (ops_reduce._tree_reduce), one call per level on whole tiles.
    # (The interpreter makes every value assigned to a name a tensor: the extents stay in lists.)
    shape = [int(s) for s in x.shape]
    rest = [s for d, s in enumerate(shape) if d != axis]
    run = tl.permute(x, [d for d in range(len(shape)) if d != axis] + [axis])
    for half in [shape[axis] >> level for level in range(1, shape[axis].bit_length())]:
        older, newer = tl.split(tl.reshape(run, rest + [half, 2], can_reorder=False))
        run = combine(older, newer)
    kept = [1 if d == axis else s for d, s in enumerate(shape)] if keep_dims else rest
    return tl.reshape(run, kept, can_reorder=False)
"""


def fold(e: OpEmit, x: str, dim: int | None, combine: str, keep_dims: bool = False) -> str:
    """An expression: the tile `x` folded along `dim` (None: all of it) by the jitted
    `combine`, a commutative and associative op (the order is free): `tl.reduce` on the GPU.
    Under Triton's interpreter the pairwise tree (_FOLD_TREE): that interpreter calls a
    tl.reduce's combiner once per element, a Python call of ~0.5 ms (3.6 and 3.9:
    examples/softmax's two reductions of a 4x1024 tile took 5 s), where the tree calls it
    log2(n) times on whole tiles; and it is the CPU interpreter's order, so a float sum there
    is bitwise equal to the CPU interpreter's. (A conditional expression on the constexpr:
    Triton compiles only the side it takes. `x` is written twice: pass a name.)"""
    kept = ", keep_dims=True" if keep_dims else ""
    tree = e.helper("_fold_tree", _FOLD_TREE)
    whole = f"tl.reshape({x}, [{x}.numel])" if dim is None else x
    gpu = f"tl.reduce({x}, {dim}, {combine}{kept})"
    return f"({tree}({whole}, {dim or 0}, {combine}, {keep_dims}) if INTERPRETED else {gpu})"
