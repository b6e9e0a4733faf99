"""Rewrites of the remaining ops: `assume`."""

from __future__ import annotations

from ..ir.core import Operation
from .registry import pattern
from .rewriter import Rewriter, defining


@pattern("assume")
def _assume_repeated(op: Operation, rw: Rewriter) -> bool:
    """assume(P, assume(P, x)) -> assume(P, x): the second states nothing new."""
    inner = defining(op.operands[0], "assume")
    if inner is None or inner.attr("predicate") != op.attr("predicate"):
        return False
    rw.replace(op, [inner.results[0]])
    return True
