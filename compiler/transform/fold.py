"""Constant folding through the interpreter: an op whose operands are all constants is
evaluated by its semantics function in `compiler.interp`, so that a folded constant is
exactly what running the op would have produced."""

from __future__ import annotations

import numpy as np

from ..ir.core import Operation
from ..ir.types import TileType
from .rewriter import Rewriter, constant_array


def evaluate(op: Operation) -> np.ndarray | None:
    """The value of `op`'s single tile result when every operand is a constant, computed
    by the interpreter's semantics of the op; None when it cannot be folded."""
    from ..interp.registry import SEMANTICS, Ctx

    t = op.results[0].type if len(op.results) == 1 else None
    fn = SEMANTICS.get(op.name)
    if fn is None or not isinstance(t, TileType) or op.regions:
        return None
    args = [constant_array(v) for v in op.operands]
    if any(a is None for a in args):
        return None
    # Interpreter values carry a leading tile-block axis; a constant is the same in every
    # block, so that axis has length 1. No machine: semantics that need one (memory,
    # block ids) raise, and such ops are not folded.
    ctx = Ctx(None, None, op, [np.asarray(a).reshape((1, *a.shape)) for a in args])  # type: ignore[arg-type]
    try:
        out = fn(ctx)
    except Exception:  # noqa: BLE001 - whatever the interpreter rejects is simply not folded
        return None
    out = np.asarray(out)
    if out.size != t.num_elements:
        return None
    return out.reshape(t.shape)


def fold_to_constant(op: Operation, rw: Rewriter) -> bool:
    """Replace `op` by the constant it evaluates to, if it does."""
    value = evaluate(op)
    if value is None:
        return False
    rw.replace(op, [rw.constant(value, op.results[0].type, op)])  # type: ignore[arg-type]
    return True
