"""How each op is laid out in bytecode, derived from the op table.

NVIDIA generates the per-op reader and writer from `Ops.td` with fixed rules
(`cuda-tile-tblgen -gen-cuda-tile-bytecode`); `OpLayout` applies the same rules to our op
table, so no op needs hand-written encoding code. In field order:

1. result types: a count first when the op has a `variadic` operand or result (a count of
   the results the target version has); one type index per result either way. A result added
   after the op exists only from its version on.
2. a flags varint, when the op has optional attributes (unit attributes included) or, for
   ops with `AttrSizedOperandSegments`, optional operands. Bits go to those fields grouped by
   the version that introduced them, oldest first; within a version, attributes then
   operands, each in declaration order. When even the oldest of them is newer than the op,
   the flags exist only from that version on.
3. attributes in declaration order: unit attributes live only in the flags; optional ones are
   written when their bit is set; a required attribute added after the op is written from its
   version on (older versions imply its default).
4. operands: per group (optional: an index when its bit is set; variadic: count + indices) for
   `AttrSizedOperandSegments` ops; otherwise one total count when any group is optional or
   variadic, else bare indices.
5. regions: a count, then each region.
"""

from __future__ import annotations

from functools import cache

from ..dialect import ALL_OPS, OPS_BY_OPCODE, enum_for_kind
from ..dialect.opdef import AttrDef, OpDef, OperandDef, ResultDef
from ..ir import attributes as A
from ..ir import types as T
from ..ir.frozen import Frozen, _set
from .format import Version, branched, has, since


class OpLayout(Frozen):
    __slots__ = (
        "opdef",
        "version",
        "variadic",  # a result count precedes the result types
        "results",  # the results this version stores (ResultDefs)
        "flag_bits",  # optional attribute / operand name -> bit
        "has_flags",  # whether this version writes the flags varint
        "attributes",  # AttrDefs stored inline, in order (unit attributes excluded)
        "attr_sized",
        "operand_count",  # (not attr_sized) one total operand count is written
    )

    def __init__(
        self,
        opdef: OpDef,
        version: Version,
        variadic: bool,
        results: tuple[ResultDef, ...],
        flag_bits: dict[str, int],
        has_flags: bool,
        attributes: tuple[AttrDef, ...],
        attr_sized: bool,
        operand_count: bool,
    ) -> None:
        _set(self, "opdef", opdef)
        _set(self, "version", version)
        _set(self, "variadic", variadic)
        _set(self, "results", results)
        _set(self, "flag_bits", flag_bits)
        _set(self, "has_flags", has_flags)
        _set(self, "attributes", attributes)
        _set(self, "attr_sized", attr_sized)
        _set(self, "operand_count", operand_count)

    @property
    def op_since(self) -> Version:
        return since(self.opdef.since)

    def stored(self, field: AttrDef | OperandDef | ResultDef) -> bool:
        """Whether a field exists in this version's encoding."""
        return has(self.version, since(field.since))


@cache
def layout(opdef: OpDef, version: Version) -> OpLayout:
    op_since = opdef.since
    variadic = any(o.arity == "variadic" for o in opdef.operands) or any(r.arity == "variadic" for r in opdef.results)
    attr_sized = "AttrSizedOperandSegments" in opdef.traits
    optional: list[tuple[Version, int, int, str]] = []
    for i, a in enumerate(opdef.attributes):
        if (a.optional or a.kind == "unit") and not branched(since(a.since), version):
            optional.append((since(a.since), 0, i, a.name))
    if attr_sized:
        for i, o in enumerate(opdef.operands):
            if o.arity == "optional" and not branched(since(o.since), version):
                optional.append((since(o.since), 1, i, o.name))
    optional.sort()
    flag_bits = {name: bit for bit, (_, _, _, name) in enumerate(optional)}
    if optional:
        first = optional[0][0]
        has_flags = first == since(op_since) or version >= first
    else:
        has_flags = False
    results = tuple(r for r in opdef.results if has(version, since(r.since)))
    attributes = tuple(
        a
        for a in opdef.attributes
        if a.kind != "unit" and (a.optional or has(version, since(a.since)) or a.since == op_since)
    )
    operand_count = not attr_sized and any(o.arity != "single" for o in opdef.operands)
    return OpLayout(opdef, version, variadic, results, flag_bits, has_flags, attributes, attr_sized, operand_count)


def default_attr(adef: AttrDef) -> A.Attribute | None:
    """The attribute a required attribute with a default stands for when the op omits it (or
    the file's version predates it); None where the default is no single attribute (`inbounds`:
    all false, as many as the op has indices)."""
    if adef.default is None:
        return None
    if adef.kind.startswith("enum:"):
        enum = enum_for_kind(adef.kind)
        return A.EnumAttr(enum, adef.default) if enum is not None else None
    if adef.kind in ("i32", "i64"):
        return A.IntegerAttr(int(adef.default), T.I32 if adef.kind == "i32" else None)
    if adef.kind == "bool":
        return A.BoolAttr(adef.default == "true")
    return None


def max_opcode(version: Version) -> int:
    """The largest public opcode a version has (0x6D for 13.1, 0x6E for 13.2, 0x75 for 13.3)."""
    return max(
        op.opcode for op in ALL_OPS if op.opcode is not None and op.opcode < 0x3000 and since(op.since) <= version
    )


def op_for_opcode(opcode: int) -> OpDef | None:
    return OPS_BY_OPCODE.get(opcode)


# Ops that have opcodes but are never instructions: entries live in the function table,
# globals in the global section, and the module is the file itself.
NOT_INSTRUCTIONS = frozenset({"cuda_tile.entry", "cuda_tile.global", "cuda_tile.module", "cuda_tile.testing$func"})
