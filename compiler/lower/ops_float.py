"""Floating-point arithmetic."""

from __future__ import annotations

from .codegen import OpEmit
from .registry import emitter


@emitter("addf")
def _addf(e: OpEmit) -> None:
    a, b = e.operands
    e.assign(f"{a} + {b}")
