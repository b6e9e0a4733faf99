"""IR-to-IR rewrites: `canonicalize` (cuda-tile-opt's `--canonicalize`).

    from compiler.transform import canonicalize
    canonicalize(module)          # in place; returns the number of edits

The rewrites are registered per op (`registry.pattern`) in `ops_arith`, `ops_control` and
`ops_misc`; `driver` applies them to a fixed point and erases unused pure ops.
"""

from __future__ import annotations

from . import ops_arith, ops_control, ops_misc  # noqa: F401 - they register the rewrites
from .driver import canonicalize, is_trivially_dead
from .registry import PATTERNS, pattern
from .rewriter import Rewriter

__all__ = ["PATTERNS", "Rewriter", "canonicalize", "is_trivially_dead", "pattern"]
