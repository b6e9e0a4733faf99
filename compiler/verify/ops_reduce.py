"""Rules of `reduce` and `scan`: the aggregate ops with a combiner region.

Both take N tiles of one shape, a dimension, one identity per operand and a single-block
body whose arguments are N pairs of rank-0 tiles (`reduce`: element, accumulator; `scan`:
accumulator, element, as tileiras binds them) and whose `yield`
returns N rank-0 tiles. `reduce` drops the dimension from each result; `scan` keeps the
operand types.

Order, as cuda-tile-opt checks: the single block is not empty, the inherent attributes
(`dim` non-negative), the body holds exactly one block; then (after the generic
SameOperandsShape check) the op's own rules: operand/result counts, identities, the
dimension's range and, for `scan`, result types; then the inferred result types of
InferTypeOpInterface. Once the body's ops are verified: the body ends with `yield`, and the
combiner's block arguments, terminator and purity are checked.
"""

from __future__ import annotations

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation
from .common import quoted, type_list
from .engine import Verifier
from .registry import op_verifier, region_verifier


def _identity_type(attr: A.Attribute) -> T.Type | None:
    """The type of a typed attribute (`0.0 : f32`, `0 : i32`; an untyped integer is i64)."""
    if isinstance(attr, A.FloatAttr):
        return attr.type
    if isinstance(attr, A.IntegerAttr):
        return attr.type if attr.type is not None else T.I64
    if isinstance(attr, A.BoolAttr):
        return T.I1
    return None


def _check_structure(v: Verifier, op: Operation) -> None:
    """OneRegion / SingleBlock (structural traits, before everything else)."""
    if len(op.regions) != 1:
        v.fail(op, "requires one region", code="region-count")
    blocks = op.regions[0].blocks
    if len(blocks) > 1:
        v.fail(op, "expects region #0 to have 0 or 1 blocks", code="region-blocks")
    if blocks and not blocks[0].ops:
        v.fail(op, "expects a non-empty block", code="empty-block")


def _check_attributes(v: Verifier, op: Operation) -> None:
    """The inherent attributes' ODS constraints, then the region's (`SizedRegion<1>`)."""
    names = ["dim", "identities"] + (["reverse"] if op.name == "cuda_tile.scan" else [])
    for name in ("dim", "identities", "reverse"):
        if name in names and op.properties.get(name) is None:
            v.fail(op, f"requires attribute '{name}'", code="missing-attribute")
    dim = op.properties.get("dim")
    if not (isinstance(dim, A.IntegerAttr) and dim.type == T.I32 and dim.value >= 0):
        v.fail(
            op,
            "attribute 'dim' failed to satisfy constraint: 32-bit signless integer attribute whose value is "
            "non-negative",
            code="attribute-constraint",
        )
    if not isinstance(op.properties.get("identities"), A.ArrayAttr):
        v.fail(
            op,
            "attribute 'identities' failed to satisfy constraint: array attribute",
            code="attribute-constraint",
        )
    if "reverse" in names and not isinstance(op.properties.get("reverse"), A.BoolAttr):
        v.fail(op, "attribute 'reverse' failed to satisfy constraint: bool attribute", code="attribute-constraint")
    if len(op.regions[0].blocks) != 1:
        v.fail(op, "region #0 ('body') failed to verify constraint: region with 1 blocks", code="region-blocks")


def _inferred_types(op: Operation, dim: int) -> list[T.Type]:
    out: list[T.Type] = []
    for value in op.operands:
        t = value.type
        if not isinstance(t, T.TileType):
            return []
        if op.name == "cuda_tile.reduce":
            t = T.TileType(tuple(d for i, d in enumerate(t.shape) if i != dim), t.element)
        out.append(t)
    return out


@op_verifier("reduce", "scan")
def _aggregate(v: Verifier, op: Operation) -> None:
    _check_structure(v, op)
    _check_attributes(v, op)
    operands = op.operands
    results = op.results
    dim_attr = op.properties["dim"]
    assert isinstance(dim_attr, A.IntegerAttr)
    dim = dim_attr.value
    if not operands:
        v.fail(op, "expect at least 1 operand", code="operand-count")
    if len(operands) != len(results):
        v.fail(op, "expect same number of operands and results", code="result-count")

    identities = op.properties["identities"]
    assert isinstance(identities, A.ArrayAttr)
    if len(identities.elements) != len(operands):
        v.fail(
            op,
            "expect identities to match the number of operands but got: "
            f"{len(operands)} operands and {len(identities.elements)} identities",
            code="identities",
        )
    for index, (value, identity) in enumerate(zip(operands, identities.elements, strict=True)):
        operand_type = value.type
        if not isinstance(operand_type, T.TileType):
            v.fail(
                op,
                f"expected TileType for operand at index {index} but got: {quoted(operand_type)}",
                at=index,
                code="operand-type",
            )
        identity_type = _identity_type(identity)
        if identity_type is None:
            v.fail(op, f"expected a typed attribute as identity at index {index}", code="identities")
        element = operand_type.element
        # f16 and bf16 identities are interchangeable.
        if {str(element), str(identity_type)} == {"f16", "bf16"}:
            continue
        if element != identity_type:
            v.fail(
                op,
                f"expect same type for operand at index: {index} and identity at index: {index} but got: "
                f"{quoted(element)} and {quoted(identity_type)}",
                at=index,
                code="identities",
            )

    first = operands[0].type
    if not isinstance(first, T.TileType):
        v.fail(op, f"expected TileType for first operand but got: {quoted(first)}", at=0, code="operand-type")
    rank = first.rank
    if dim < 0 or dim >= rank:
        v.fail(op, f"dimension ({dim}) is out of bound [0, {rank})", code="dim-range")

    if op.name == "cuda_tile.scan":
        for index, (value, result) in enumerate(zip(operands, results, strict=True)):
            if value.type != result.type:
                v.fail(
                    op,
                    f"expect same type for operand at index: {index} and result at index: {index}",
                    code="result-type",
                )

    # InferTypeOpInterface: the result types must be the ones the op implies.
    inferred = _inferred_types(op, dim)
    actual = [r.type for r in results]
    if inferred and inferred != actual:
        v.emit(
            op,
            f"inferred type(s) {type_list(inferred)} are incompatible with return type(s) of operation "
            f"{type_list(actual)}",
            code="result-type",
        )
        v.fail(op, "failed to infer returned types", code="result-type")


@region_verifier("reduce", "scan")
def _combiner(v: Verifier, op: Operation) -> None:
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return  # reported on entrance
    block = op.regions[0].blocks[0]
    if not block.ops:
        v.fail(op, "expect non-empty block", code="empty-block")
    last = block.ops[-1]
    # SingleBlockImplicitTerminator<YieldOp>
    if last.name != "cuda_tile.yield":
        v.fail(
            op,
            f"expects regions to end with 'cuda_tile.yield', found '{last.name}'",
            code="terminator",
            related=[
                _related_op(v, op, "in custom textual format, the absence of terminator implies 'cuda_tile.yield'")
            ],
        )
    n = len(op.operands)
    args = block.arguments
    if len(args) != 2 * n:
        v.fail(op, f"expect {2 * n} block arguments but got: {len(args)}", code="block-arguments")
    for index, arg in enumerate(args):
        t = arg.type
        if not (isinstance(t, T.TileType) and t.rank == 0):
            v.fail(
                op,
                f"expect 0-rank tile type at index: {index} but got: {quoted(t)}",
                code="block-arguments",
            )
    for index in range(0, 2 * n - 1, 2):
        a, b = args[index].type, args[index + 1].type
        assert isinstance(a, T.TileType) and isinstance(b, T.TileType)
        if a.element != b.element:
            v.fail(
                op,
                f"expect same element type for block argument at index: {index} and {index + 1} but got: "
                f"{quoted(a.element)} and {quoted(b.element)}",
                code="block-arguments",
            )
    for index, value in enumerate(op.operands):
        t = value.type
        arg_type = args[2 * index].type
        assert isinstance(arg_type, T.TileType)
        if not isinstance(t, T.TileType):
            v.fail(
                op,
                f"expected TileType for operand and block argument but got types: {quoted(t)} and {quoted(arg_type)}",
                at=index,
                code="block-arguments",
            )
        if t.element != arg_type.element:
            v.fail(
                op,
                f"expect same type for operand at index: {index} and block argument at index: {2 * index} but got: "
                f"{quoted(t.element)} and {quoted(arg_type.element)}",
                code="block-arguments",
            )
    yielded = last.operands
    if len(yielded) != n:
        v.fail(
            op,
            f"expect number of terminators operands ({len(yielded)}) to match number of operands ({n})",
            code="yield-count",
        )
    for index, (value, out) in enumerate(zip(op.operands, yielded, strict=True)):
        t, y = value.type, out.type
        if not (isinstance(t, T.TileType) and isinstance(y, T.TileType)):
            v.fail(
                op,
                f"expected TileType for operand and terminator types but got: {quoted(t)} and {quoted(y)}",
                code="yield-type",
            )
        if t.element != y.element:
            v.fail(
                op,
                f"expect same type for operand at index: {index} and terminator argument at index: {index} but "
                f"got: {quoted(t.element)} and {quoted(y.element)}",
                code="yield-type",
            )
    for inner in block.ops[:-1]:
        if not _is_pure(inner):
            v.fail(inner, f"only pure operations are allowed inside '{op.name}'", code="impure-combiner")


def _related_op(v: Verifier, op: Operation, message: str):
    from ..ir.diagnostics import Related

    return Related(message, v.op_span(op), v.source)


def _is_pure(op: Operation) -> bool:
    """MLIR's isPure: speculatable and free of memory effects, which among cuda_tile ops is
    exactly those with the `Pure` trait (ops with regions and unregistered ops are not)."""
    return op.opdef is not None and "Pure" in op.opdef.traits
