"""The table of op emitters: one function per op, registered by op name, as the
interpreter's semantics (`compiler/interp/registry.py`) and the verifier's rules are.

    @emitter("addf")
    def _addf(e: OpEmit) -> None:
        a, b = e.operands
        e.assign(f"{a} + {b}")

An emitter receives an `OpEmit` (see `codegen.py`) and writes Triton statements for its op.
Ops that the lowering cannot express say why in `UNSUPPORTED`; a test fails if an op of
the table is in neither.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .codegen import OpEmit

Emitter = Callable[["OpEmit"], Any]
EMITTERS: dict[str, Emitter] = {}

# Ops with no emitter, each with the reason (shown as the diagnostic's text).
UNSUPPORTED: dict[str, str] = {
    "cuda_tile.testing$func": "a test-only op of NVIDIA's conformance suite, not a kernel",
    "cuda_tile.testing$bytecode_test_evolution": "a test-only op of NVIDIA's bytecode tests",
    "cuda_tile.testing$bytecode_test_new_attribute": "a test-only op of NVIDIA's bytecode tests",
}


def emitter(*mnemonics: str) -> Callable[[Emitter], Emitter]:
    """Register the decorated function as the emitter of the named ops."""

    def register(fn: Emitter) -> Emitter:
        for m in mnemonics:
            name = m if "." in m else "cuda_tile." + m
            if name in EMITTERS:
                raise ValueError(f"emitter of {name} registered twice")
            EMITTERS[name] = fn
        return fn

    return register
