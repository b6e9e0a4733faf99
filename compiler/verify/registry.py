"""Where op-specific verifiers register themselves.

    @op_verifier("cuda_tile.cat")
    def _cat(v: Verifier, op: Operation) -> None:
        ...
        v.fail(op, "...")

An *op* verifier runs when the op itself is verified (MLIR's `verify()`), after the generic
checks that the op table drives (operand/result constraints, type rules). A *region*
verifier runs after every op nested in the op's regions has been verified (MLIR's
`verifyRegions()`), so it may rely on those ops being well-formed.

The modules that hold verifiers (`ops_*.py`, `hints.py`, ...) are imported by
`compiler.verify.engine`, which is what fills these tables.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from ..ir.core import Operation
    from .engine import Verifier

OpVerifier = Callable[["Verifier", "Operation"], None]

OP_VERIFIERS: dict[str, list[OpVerifier]] = {}
REGION_VERIFIERS: dict[str, list[OpVerifier]] = {}


def _register(table: dict[str, list[OpVerifier]], names: tuple[str, ...]) -> Callable[[OpVerifier], OpVerifier]:
    def decorate(fn: OpVerifier) -> OpVerifier:
        for name in names:
            full = name if "." in name else f"cuda_tile.{name}"
            table.setdefault(full, []).append(fn)
        return fn

    return decorate


def op_verifier(*names: str) -> Callable[[OpVerifier], OpVerifier]:
    """Register a verifier of the op itself for the named ops (`cat` or `cuda_tile.cat`)."""
    return _register(OP_VERIFIERS, names)


def region_verifier(*names: str) -> Callable[[OpVerifier], OpVerifier]:
    """Register a verifier that runs once the op's regions have been verified."""
    return _register(REGION_VERIFIERS, names)


ModuleCheck = Callable[["Verifier"], None]

# Rules about the module as a whole, run once the walk is done (`Verifier.module`).
MODULE_CHECKS: list[ModuleCheck] = []


def module_check(fn: ModuleCheck) -> ModuleCheck:
    """Register a check of the whole module, run after every op has been verified."""
    MODULE_CHECKS.append(fn)
    return fn
