"""The cuda_tile dialect: its op table and type constraints.

    OPS["cuda_tile.addf"]            # OpDef, keyed by full name
    lookup_op("addf")                # also accepts the full name; None when unknown
    OPS_BY_OPCODE[0x02]              # the op a bytecode opcode stands for

Importing this package is cheap: it only builds the tables of `ops.py`.
"""

from __future__ import annotations

from ..ir.enums import ENUM_BY_MNEMONIC, EnumDef
from .constraints import TYPE_CONSTRAINTS, Constraint
from .opdef import AttrDef, OpDef, OperandDef, RegionDef, ResultDef
from .ops import ALL_OPS, TESTING_ENUMS

DIALECT = "cuda_tile"

OPS: dict[str, OpDef] = {op.name: op for op in ALL_OPS}
OPS_BY_OPCODE: dict[int, OpDef] = {op.opcode: op for op in ALL_OPS if op.opcode is not None}

_PREFIX = DIALECT + "."


# Names newer NVIDIA tools print for ops of this table (tileirdisasm 13.5 prints `pow` as
# `fpowf`): read as the op, printed by its table name (the 13.3 dialect's, which the
# conformance suite checks).
NEWER_NAMES = {"cuda_tile.fpowf": "cuda_tile.pow"}


def lookup_op(name: str) -> OpDef | None:
    """The op named `name`, written with or without the `cuda_tile.` prefix."""
    op = OPS.get(name)
    if op is None and not name.startswith(_PREFIX):
        name = _PREFIX + name
        op = OPS.get(name)
    if op is None and name in NEWER_NAMES:
        op = OPS.get(NEWER_NAMES[name])
    return op


def enum_for_kind(kind: str) -> EnumDef | None:
    """The enum an `enum:<mnemonic>` attribute kind names (test-only enums included)."""
    if not kind.startswith("enum:"):
        return None
    mnemonic = kind[len("enum:") :]
    return ENUM_BY_MNEMONIC.get(mnemonic) or TESTING_ENUMS.get(mnemonic)


__all__ = [
    "DIALECT",
    "OPS",
    "OPS_BY_OPCODE",
    "TYPE_CONSTRAINTS",
    "AttrDef",
    "Constraint",
    "OpDef",
    "OperandDef",
    "RegionDef",
    "ResultDef",
    "enum_for_kind",
    "lookup_op",
]
