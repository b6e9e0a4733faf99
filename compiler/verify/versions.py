"""Version gating: does the module fit the bytecode version it is meant for?

With `VerifyOptions.target_version` set (`tileir check --target-version 13.1`), everything
the module uses that a later bytecode version introduced is an error, as NVIDIA's bytecode
writer (`cuda-tile-translate --bytecode-version`) refuses to encode it, in that writer's
words (the conformance tests check them):

* an op (`operation 'cuda_tile.atan2' is not available in bytecode version 13.1`);
* an operand, attribute or result added to an op later than the op itself: an optional
  operand or attribute that is present, a required attribute that is not its default
  value, a result that is used;
* an enum case introduced later;
* a type: the element types f8E8M0FNU (13.2), f4E2M1FN and i4 (13.3), the strided and
  gather/scatter views (13.3), wherever they occur inside a type; reported where the
  value (or attribute) of that type is defined, with the type's name as NVIDIA's messages
  spell it (`Float8E8M0FNU`).

The bytecode writer (`compiler.bytecode`) runs these checks through `version_diagnostics`
before it encodes anything. A target version we do not know is itself an error.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..bytecode.format import SCALAR_TAGS
from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation
from ..ir.enums import EnumDef
from ..ir.source import Span
from .engine import OpFailed, Verifier
from .registry import module_check

SUPPORTED_VERSIONS = ("13.1", "13.2", "13.3", "13.4")

# cuda_tile types (other than element types) that a later version introduced, by the name
# NVIDIA's writer uses for them.
_TYPE_SINCE: dict[type, tuple[str, str]] = {
    T.StridedViewType: ("StridedViewType", "13.3"),
    T.GatherScatterViewType: ("GatherScatterViewType", "13.3"),
}


def version_key(version: str) -> tuple[int, ...]:
    """`"13.2"` -> (13, 2); unparsable parts count as 0."""
    out = []
    for part in version.split("."):
        out.append(int(part) if part.isdigit() else 0)
    return tuple(out)


def newer(since: str, target: str) -> bool:
    return version_key(since) > version_key(target)


def _requires(what: str, since: str, target: str) -> str:
    return f"{what} requires bytecode version {since}+, but targeting {target}"


def type_requirements(t: T.Type) -> Iterator[tuple[str, str]]:
    """(name, version) of each part of `t` introduced after 13.1, outermost first."""
    entry = _TYPE_SINCE.get(type(t))
    if entry is not None:
        yield entry
    if isinstance(t, (T.IntegerType, T.FloatType)):
        since = T.ELEMENT_TYPE_SINCE.get(str(t))
        if since is not None:
            yield SCALAR_TAGS[str(t)][1], since
        return
    if isinstance(t, T.TileType):
        yield from type_requirements(t.element)
    elif isinstance(t, T.PointerType):
        yield from type_requirements(t.pointee)
    elif isinstance(t, T.TensorViewType):
        yield from type_requirements(t.element)
    elif isinstance(t, (T.PartitionViewType, T.StridedViewType, T.GatherScatterViewType)):
        yield from type_requirements(t.tensor_view)
    elif isinstance(t, T.FunctionType):
        for part in (*t.inputs, *t.results):
            yield from type_requirements(part)


def _first_too_new(t: T.Type, target: str) -> tuple[str, str] | None:
    for name, since in type_requirements(t):
        if newer(since, target):
            return name, since
    return None


def _is_default(attr: A.Attribute, default: str | None) -> bool:
    if default is None:
        return False
    if isinstance(attr, A.EnumAttr):
        return attr.keyword == default
    if isinstance(attr, A.IntegerAttr):
        return str(attr.value) == default
    return str(attr) == default


def _enum_of(attr: A.Attribute) -> EnumDef | None:
    enum = getattr(attr, "enum", None)
    return enum if isinstance(enum, EnumDef) else None


def version_diagnostics(module, target: str) -> list:
    """Every version problem of `module` for bytecode version `target` (any MAJOR.MINOR,
    including the test-only 250.x versions), as the bytecode writer reports them."""
    from .engine import VerifyOptions

    v = Verifier(module, VerifyOptions(target_version=target))
    _check_module(v, target)
    return v.diagnostics


@module_check
def check_versions(v: Verifier) -> None:
    target = v.options.target_version
    if target is None:
        return
    if target not in SUPPORTED_VERSIONS:
        v.emit(
            None,
            f"unsupported target bytecode version '{target}'; supported versions: {', '.join(SUPPORTED_VERSIONS)}",
            code="target-version",
        )
        return
    _check_module(v, target)


def _check_module(v: Verifier, target: str) -> None:
    for op in v.walk():
        try:
            _check_op(v, op, target)
        except OpFailed:
            pass


def _check_op(v: Verifier, op: Operation, target: str) -> None:
    opdef = op.opdef
    if opdef is not None:
        if newer(opdef.since, target):
            v.fail(
                op,
                f"operation '{op.name}' is not available in bytecode version {target}",
                at=op.name_span,
                code="version-op",
                prefix=False,
            )
    reported = _check_types(v, op, target)
    if opdef is not None:
        _check_members(v, op, target, reported)


def _check_members(v: Verifier, op: Operation, target: str, reported: set[str]) -> None:
    opdef = op.opdef
    assert opdef is not None
    for odef in opdef.operands:
        if not (newer(odef.since, target) and newer(odef.since, opdef.since)):
            continue
        start, length = opdef.operand_range(odef.name, op.operand_segments)
        if length and start < len(op.operands):
            v.emit(
                op,
                f"optional operand '{odef.name}' is provided but requires bytecode version {odef.since}, "
                f"targeting {target}",
                at=start,
                code="version-operand",
            )
    for adef in opdef.attributes:
        attr = op.properties.get(adef.name)
        if attr is None:
            continue
        if op.name == "cuda_tile.module" and adef.name == "producer":
            # Not a problem: NVIDIA's writer silently leaves the producer out of older versions
            # (test/Bytecode/versioning/producer_attr_backward_compat.mlir).
            continue
        if newer(adef.since, target) and newer(adef.since, opdef.since) and not _is_default(attr, adef.default):
            special = _global_message(op, adef.name, target)
            if special is None and (adef.optional or adef.kind == "unit"):
                special = (
                    f"optional attribute '{adef.name}' is provided but requires bytecode version {adef.since}, "
                    f"targeting {target}"
                )
                v.emit(op, special, code="version-attribute")
                continue
            v.emit(
                op,
                special or _requires(f"attribute '{adef.name}'", adef.since, target),
                code="version-attribute",
                prefix=special is None,
            )
            continue
        enum = _enum_of(attr)
        if enum is not None and isinstance(attr, A.EnumAttr):
            case = enum.by_keyword(attr.keyword)
            if case is not None and newer(case.since, target):
                v.emit(
                    op,
                    f"enum value for attribute '{adef.name}' is not available in bytecode version {target} "
                    f"('{attr.keyword}' requires {case.since})",
                    code="version-enum",
                )
        type_attr_type = _attr_type(attr)
        if type_attr_type is not None:
            found = _first_too_new(type_attr_type, target)
            if found is not None and found[0] not in reported:  # not already shown on a value
                v.emit(
                    op,
                    _type_message(found, target) + f" (in attribute '{adef.name}')",
                    code="version-type",
                )
    for rdef in opdef.results:
        if newer(rdef.since, target) and newer(rdef.since, opdef.since):
            for result in op.result_group(rdef.name):
                if result.uses:
                    v.emit(
                        op,
                        f"result '{rdef.name}' requires bytecode version {rdef.since} but is being used and "
                        f"targeting {target}",
                        at=result,
                        code="version-result",
                    )
                    break


def _type_message(found: tuple[str, str], target: str) -> str:
    return f"type '{found[0]}' requires bytecode version {found[1]}+, targeting {target}"


def _global_message(op: Operation, name: str, target: str) -> str | None:
    """NVIDIA's own wording for the global fields 13.3 added."""
    if op.name != "cuda_tile.global":
        return None
    sym = op.properties.get("sym_name")
    sym_text = sym.value if isinstance(sym, A.StringAttr) else "?"
    if name == "symbol_visibility":
        return (
            f"global `{sym_text}` uses non-public symbol visibility, which cannot be encoded in bytecode version "
            f"{target} (requires bytecode 13.3+)"
        )
    if name == "constant":
        return (
            f"constant global `{sym_text}` cannot be encoded in bytecode version {target} "
            "(the `constant` attribute requires bytecode 13.3+)"
        )
    return None


def _attr_type(attr: A.Attribute) -> T.Type | None:
    if isinstance(attr, A.TypeAttr):
        return attr.value if isinstance(attr.value, T.Type) else None
    if isinstance(attr, A.DenseElementsAttr):
        return attr.type if isinstance(attr.type, T.Type) else None
    return None


def _check_types(v: Verifier, op: Operation, target: str) -> set[str]:
    """Types introduced after the target, where values of them are defined: the op's
    results and the arguments of its regions' blocks (the first such value of each type).
    Returns the names of the types reported."""
    reported: set[str] = set()
    values = [*op.results, *(arg for region in op.regions for block in region.blocks for arg in block.arguments)]
    for value in values:
        found = _first_too_new(value.type, target)
        if found is None or found[0] in reported:
            continue
        reported.add(found[0])
        v.emit(
            op,
            _type_message(found, target),
            at=_value_span(v, op, value),
            code="version-type",
            prefix=False,
        )
    return reported


def _value_span(v: Verifier, op: Operation, value) -> Span:
    return value.span if value.span is not None else v.op_span(op)
