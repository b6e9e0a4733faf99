"""The table of canonicalization rewrites: pattern functions registered by op name.

    @pattern("select")
    def _select_same(op: Operation, rw: Rewriter) -> bool:
        ...  # rewrite through `rw` and return True, or leave the IR alone and return False

This mirrors `compiler.interp.registry` (semantics per op) and `compiler.verify.registry`
(checks per op): one module per op group registers its rewrites, and the driver
(`compiler.transform.driver`) applies them until none matches. A pattern must only
change the IR through the `Rewriter`, so that the driver learns which ops to revisit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..ir.core import Operation
    from .rewriter import Rewriter

Pattern = Callable[["Operation", "Rewriter"], bool]
PATTERNS: dict[str, list[Pattern]] = {}


def pattern(*mnemonics: str) -> Callable[[Pattern], Pattern]:
    """Register the decorated function as a rewrite of the named ops (tried in
    registration order: the first one that returns True wins the visit)."""

    def register(fn: Pattern) -> Pattern:
        for m in mnemonics:
            name = m if "." in m else "cuda_tile." + m
            PATTERNS.setdefault(name, []).append(fn)
        return fn

    return register


def patterns_for(name: str) -> list[Pattern]:
    return PATTERNS.get(name, [])
