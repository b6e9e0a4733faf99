"""Module -> bytecode, laid out as NVIDIA's C++ writer (`cuda-tile-translate`) lays it out.

Section order Global, Func, Constant, Debug, Type, Producer, String, End; strings, types,
constants and debug attributes numbered in first-use order in the order that writer meets
them; the Constant and Debug sections left out when empty; the function table padded to 8.

What cannot be written is reported as diagnostics (`BytecodeWriteError`), worded as
NVIDIA's writer words them where the conformance tests check the words. The version rules
(an op, type, attribute, operand, result or enum value newer than the target) are checked by
`compiler.verify.versions`, the one place that knows them; the encoder then relies on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.diagnostics import Diagnostic, Severity
from ..ir.source import Span
from .constants import dense_raw_data
from .format import (
    AUTO_WRITE,
    FUNC_HAS_HINTS,
    FUNC_KERNEL,
    INT64_MIN,
    MAGIC,
    SCALAR_TAGS,
    AttrTag,
    DebugTag,
    Section,
    TypeTag,
    Version,
    Writer,
    append_section,
    has,
    version_text,
)
from .newer import V13_4
from .schema import default_attr, layout

PADDING_CODE = {"zero": 0, "neg_zero": 1, "nan": 2, "pos_inf": 3, "neg_inf": 4}


class BytecodeWriteError(Exception):
    """The module cannot be written as bytecode; `diagnostics` say why and where."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


class _Unencodable(Exception):
    def __init__(self, message: str, op: Operation | None = None, culprit: Operation | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.op = op
        # NVIDIA's writer reports a misplaced op on the module and marks the op itself with an
        # "invalid op" remark (test/Bytecode/invalid_not_self_contained.mlir expects both).
        self.culprit = culprit


# ------------------------------------------------------------------------------------------------
# Finding the module


def find_module(module: Module) -> tuple[Operation | None, list[Operation]]:
    """The `cuda_tile.module` to write (None for bare top-level entries, as tileirdisasm prints
    them) and the items of its body. A `module attributes {...}` wrapper is looked through."""
    ops = module.ops
    while len(ops) == 1 and ops[0].name == "builtin.module" and ops[0].regions:
        block = ops[0].regions[0].entry_block
        ops = block.ops if block is not None else []
    tile_modules = [op for op in ops if op.name == "cuda_tile.module"]
    if len(tile_modules) > 1:
        raise _Unencodable(
            "a bytecode file holds one cuda_tile.module, this input has "
            f"{len(tile_modules)}; split it (tileir translate -split-input-file writes each chunk)",
            tile_modules[1],
        )
    if tile_modules:
        if len(ops) > 1:
            other = next(op for op in ops if op is not tile_modules[0])
            raise _Unencodable("only a single cuda_tile.module can be written as bytecode", other)
        block = tile_modules[0].regions[0].entry_block if tile_modules[0].regions else None
        return tile_modules[0], list(block.ops) if block is not None else []
    return None, list(ops)


def _check_structure(module_op: Operation | None, items: list[Operation]) -> None:
    """NVIDIA's writer encodes functions and globals of cuda_tile ops only, and reduce/scan
    bodies of pure ops only."""
    for op in items:
        if op.name not in ("cuda_tile.entry", "cuda_tile.global", "cuda_tile.testing$func"):
            raise _Unencodable(
                f"'cuda_tile.module' op only function and global ops are allowed in the body (found '{op.name}')",
                module_op or op,
                op,
            )
    for item in items:
        for op in item.walk():
            if op.opdef is None or op.opdef.dialect != "cuda_tile":
                raise _Unencodable(
                    f"'cuda_tile.module' op only ops from the 'cuda_tile' dialect are allowed (found '{op.name}')",
                    module_op or op,
                    op,
                )
            parent = op.parent_op
            if parent is not None and parent.name in ("cuda_tile.reduce", "cuda_tile.scan"):
                if "Pure" not in op.opdef.traits and op.name != "cuda_tile.yield":
                    raise _Unencodable(f"'{parent.name}' op only pure operations allowed (found '{op.name}')", parent)


# ------------------------------------------------------------------------------------------------
# Tables


@dataclass
class _Tables:
    version: Version
    strings: dict[str, int] = field(default_factory=dict)
    types: dict[T.Type, int] = field(default_factory=dict)
    type_list: list[T.Type] = field(default_factory=list)
    constants: dict[tuple, int] = field(default_factory=dict)
    constant_data: list[bytes] = field(default_factory=list)
    debug: dict[A.Attribute, int] = field(default_factory=dict)
    debug_list: list[A.Attribute] = field(default_factory=list)

    def string(self, text: str) -> int:
        index = self.strings.get(text)
        if index is None:
            index = self.strings[text] = len(self.strings)
        return index

    def type(self, t: T.Type) -> int:
        index = self.types.get(t)
        if index is not None:
            return index
        for dep in _type_dependencies(t):
            self.type(dep)
        index = self.types[t] = len(self.type_list)
        self.type_list.append(t)
        return index

    def constant(self, attr: A.DenseElementsAttr) -> int:
        key = (attr.type, attr.values, attr.splat)
        index = self.constants.get(key)
        if index is None:
            index = self.constants[key] = len(self.constant_data)
            self.constant_data.append(dense_raw_data(attr))
        return index

    # Debug attributes are numbered from 1 (0 is the reserved unknown location); an
    # attribute's dependencies are numbered before it.
    def debug_index(self, attr: A.Attribute) -> int:
        if _is_reserved_location(attr):
            return 0
        index = self.debug.get(attr)
        if index is not None:
            return index
        for dep in _debug_dependencies(attr):
            self.debug_index(dep)
        index = self.debug[attr] = len(self.debug_list) + 1
        self.debug_list.append(attr)
        return index


def _type_dependencies(t: T.Type) -> tuple[T.Type, ...]:
    if isinstance(t, T.PointerType):
        return (t.pointee,)
    if isinstance(t, (T.TileType, T.TensorViewType)):
        return (t.element,)
    if isinstance(t, (T.PartitionViewType, T.StridedViewType, T.GatherScatterViewType)):
        return (t.tensor_view,)
    if isinstance(t, T.FunctionType):
        return (*t.inputs, *t.results)
    return ()


def _is_reserved_location(attr: A.Attribute | None) -> bool:
    return attr is None or isinstance(attr, (A.UnknownLoc, A.FileLineColLoc))


def _debug_dependencies(attr: A.Attribute) -> tuple[A.Attribute, ...]:
    if isinstance(attr, A.DILocAttr):
        return (attr.scope,)
    if isinstance(attr, A.CallSiteLoc):
        return (attr.callee, attr.caller)
    if isinstance(attr, A.DIAttr):
        keys = {
            "di_compile_unit": ("file",),
            "di_lexical_block": ("scope", "file"),
            "di_subprogram": ("file", "compileUnit"),
        }.get(attr.kind, ())
        return tuple(v for k in keys if (v := attr.get(k)) is not None)
    return ()


def _check_location(op: Operation, loc: A.Attribute | None) -> None:
    if loc is None or isinstance(loc, (A.DILocAttr, A.FileLineColLoc, A.UnknownLoc)):
        return
    if isinstance(loc, A.CallSiteLoc):
        _check_location(op, loc.callee)
        _check_location(op, loc.caller)
        return
    kind = {A.NameLoc: "NameLoc", A.FusedLoc: "FusedLoc"}.get(type(loc), type(loc).__name__)
    raise _Unencodable(f"unsupported location, got {kind}, expected DILocAttr or CallSiteLoc", op)


# ------------------------------------------------------------------------------------------------
# Types


def encode_type(t: T.Type, tables: _Tables, out: Writer) -> None:
    if isinstance(t, (T.IntegerType, T.FloatType)):
        entry = SCALAR_TAGS.get(str(t))
        if entry is None:
            raise _Unencodable(f"unsupported type in bytecode writer: {t}")
        out.varint(entry[0])
    elif isinstance(t, T.PointerType):
        out.varint(TypeTag.POINTER)
        if has(tables.version, V13_4):
            out.varint(0)  # option flags: no ptr_attr
        out.varint(tables.type(t.pointee))
    elif isinstance(t, T.TileType):
        out.varint(TypeTag.TILE)
        out.varint(tables.type(t.element))
        out.array(t.shape, 8)
    elif isinstance(t, T.TensorViewType):
        out.varint(TypeTag.TENSOR_VIEW)
        if has(tables.version, V13_4):
            out.varint(0)  # option flags: no ptr_attr
        out.varint(tables.type(t.element))
        out.array([INT64_MIN if d is None else d for d in t.shape], 8)
        out.array([INT64_MIN if d is None else d for d in t.strides], 8)
    elif isinstance(t, T.PartitionViewType):
        out.varint(TypeTag.PARTITION_VIEW)
        if tables.version >= (13, 3):
            out.varint(1 if t.padding else 0)
            out.array(t.tile_shape, 4)
            out.varint(tables.type(t.tensor_view))
            out.array(t.dim_map, 4)
            if t.padding:
                out.varint(PADDING_CODE[t.padding])
        else:  # before 13.3 a presence byte follows instead of leading flags
            out.array(t.tile_shape, 4)
            out.varint(tables.type(t.tensor_view))
            out.array(t.dim_map, 4)
            out.byte(1 if t.padding else 0)
            if t.padding:
                out.varint(PADDING_CODE[t.padding])
    elif isinstance(t, T.GatherScatterViewType):
        out.varint(TypeTag.GATHER_SCATTER_VIEW)
        out.varint(1 if t.padding else 0)
        out.array(t.tile_shape, 4)
        out.varint(tables.type(t.tensor_view))
        out.varint(t.sparse_dim)
        if t.padding:
            out.varint(PADDING_CODE[t.padding])
    elif isinstance(t, T.StridedViewType):
        out.varint(TypeTag.STRIDED_VIEW)
        out.varint(1 if t.padding else 0)
        out.array(t.tile_shape, 4)
        out.array(t.traversal_strides, 4)
        out.varint(tables.type(t.tensor_view))
        out.array(t.dim_map, 4)
        if t.padding:
            out.varint(PADDING_CODE[t.padding])
    elif isinstance(t, T.FunctionType):
        out.varint(TypeTag.FUNCTION)
        out.varint(len(t.inputs))
        for x in t.inputs:
            out.varint(tables.type(x))
        out.varint(len(t.results))
        for x in t.results:
            out.varint(tables.type(x))
    elif isinstance(t, T.TokenType):
        out.varint(TypeTag.TOKEN)
    else:
        raise _Unencodable(f"unsupported type in bytecode writer: {t}")


# ------------------------------------------------------------------------------------------------
# Attributes


def _float_payload(bits: int, ftype: T.FloatType, out: Writer) -> None:
    """An APFloat as its bit pattern: one byte up to 8 bits, else a ZigZag varint."""
    width = ftype.format.width
    if width <= 8:
        out.byte(bits)
    else:
        out.svarint(bits)


def _tagged(attr: A.Attribute, tables: _Tables, out: Writer, op: Operation) -> None:
    """The self-contained form: a tag, then the payload (elements of arrays, values of
    dictionaries, assume predicates, function-table hints)."""
    if isinstance(attr, A.TypeAttr):
        out.varint(AttrTag.TYPE)
        out.varint(tables.type(attr.value))
    elif isinstance(attr, A.StringAttr):
        out.varint(AttrTag.STRING)
        out.varint(tables.string(attr.value))
    elif isinstance(attr, (A.IntegerAttr, A.BoolAttr)):
        # NVIDIA's writer sees a BoolAttr as an i1 IntegerAttr (the Bool tag is read, not written).
        itype = T.I1 if isinstance(attr, A.BoolAttr) else (attr.type or T.I64)
        if not isinstance(itype, T.IntegerType):
            raise _Unencodable(f"unsupported integer attribute type in bytecode writer: {itype}", op)
        out.varint(AttrTag.INTEGER)
        out.varint(tables.type(itype))
        out.varint(int(attr.value) & ((1 << itype.width) - 1))
    elif isinstance(attr, A.FloatAttr):
        out.varint(AttrTag.FLOAT)
        out.varint(tables.type(attr.type))
        _float_payload(attr.bits, attr.type, out)
    elif isinstance(attr, A.DenseElementsAttr):
        if not isinstance(attr.type, T.TileType):
            raise _Unencodable(f"unsupported DenseElementsAttr type in bytecode writer: {attr.type}", op)
        out.varint(AttrTag.DENSE_ELEMENTS)
        out.varint(tables.type(attr.type))
        out.varint(tables.constant(attr))
    elif isinstance(attr, A.ArrayAttr):
        out.varint(AttrTag.ARRAY)
        _array_body(attr, tables, out, op)
    elif isinstance(attr, A.DictionaryAttr):
        out.varint(AttrTag.DICTIONARY)
        _dict_body(attr.entries, tables, out, op)
    elif isinstance(attr, A.OptimizationHintsAttr):
        out.varint(AttrTag.OPTIMIZATION_HINTS)
        _dict_body(attr.entries, tables, out, op)
    elif isinstance(attr, (A.DivByAttr, A.SameElementsAttr, A.BoundedAttr)):
        _predicate(attr, out)
    else:
        test_value = _test_value(attr)
        if test_value is None:
            raise _Unencodable(f"unsupported attribute type in bytecode writer: {attr}", op)
        out.varint(AttrTag.BYTECODE_TEST_VALUE)
        out.svarint(test_value)


def _predicate(attr: A.Attribute, out: Writer) -> None:
    if isinstance(attr, A.DivByAttr):
        out.varint(AttrTag.DIV_BY)
        out.varint(attr.divisor)
        out.byte((1 if attr.every is not None else 0) | (2 if attr.along is not None else 0))
        if attr.every is not None:
            out.svarint(attr.every)
        if attr.along is not None:
            out.svarint(attr.along)
    elif isinstance(attr, A.SameElementsAttr):
        out.varint(AttrTag.SAME_ELEMENTS)
        out.array(attr.values, 8)
    else:
        assert isinstance(attr, A.BoundedAttr)
        out.varint(AttrTag.BOUNDED)
        out.byte((1 if attr.lb is not None else 0) | (2 if attr.ub is not None else 0))
        if attr.lb is not None:
            out.svarint(attr.lb)
        if attr.ub is not None:
            out.svarint(attr.ub)


def _array_body(attr: A.ArrayAttr, tables: _Tables, out: Writer, op: Operation) -> None:
    out.varint(len(attr.elements))
    for element in attr.elements:
        _tagged(element, tables, out, op)


def _dict_body(entries, tables: _Tables, out: Writer, op: Operation) -> None:
    # MLIR keeps dictionary entries sorted by name, so NVIDIA's writer writes them sorted.
    ordered = sorted(entries, key=A.name_order)
    out.varint(len(ordered))
    for key, value in ordered:
        out.varint(tables.string(key))
        _tagged(value, tables, out, op)


def _test_value(attr: A.Attribute) -> int | None:
    text = str(attr)
    prefix = "#cuda_tile.bytecode_test_value<"
    if isinstance(attr, A.OpaqueAttr) and text.startswith(prefix) and text.endswith(">"):
        try:
            return int(text[len(prefix) : -1])
        except ValueError:
            return None
    return None


def _inline(op: Operation, adef, attr: A.Attribute, tables: _Tables, out: Writer) -> None:
    """An op attribute in the encoding its ODS type fixes (no tag)."""
    kind = adef.kind
    if isinstance(attr, A.EnumAttr):
        out.varint(attr.value)
    elif kind in ("i32", "i64", "i8", "i16"):
        if not isinstance(attr, A.IntegerAttr):
            raise _Unencodable(f"attribute '{adef.name}' must be an integer, got {attr}", op)
        out.varint(attr.value)
    elif kind == "bool":
        out.byte(1 if getattr(attr, "value", False) else 0)
    elif kind in ("string", "symbol"):
        out.varint(tables.string(attr.value))  # type: ignore[attr-defined]
    elif kind == "symbol_ref":
        out.varint(tables.string(attr.name))  # type: ignore[attr-defined]
    elif kind == "dense_bool_array":
        out.varint(len(attr.values))  # type: ignore[attr-defined]
        for flag in attr.values:  # type: ignore[attr-defined]
            out.byte(1 if flag else 0)
    elif kind in ("dense_i32_array", "dense_i64_array"):
        out.array(attr.values, 4 if kind == "dense_i32_array" else 8)  # type: ignore[attr-defined]
    elif kind == "dense_elements":
        if not isinstance(attr, A.DenseElementsAttr) or not isinstance(attr.type, T.TileType):
            raise _Unencodable(f"unsupported DenseElementsAttr element type during serialization: {attr}", op)
        out.varint(tables.constant(attr))
    elif kind == "array":
        _array_body(attr, tables, out, op)  # type: ignore[arg-type]
    elif kind == "optimization_hints":
        _dict_body(attr.entries, tables, out, op)  # type: ignore[attr-defined]
    elif kind == "assume_predicate":
        _predicate(attr, out)
    elif kind == "bytecode_test_value":
        value = _test_value(attr)
        if value is None:
            raise _Unencodable(f"attribute '{adef.name}' is not a bytecode test value: {attr}", op)
        out.svarint(value)
    elif kind == "type":
        out.varint(tables.type(attr.value))  # type: ignore[attr-defined]
    else:
        raise _Unencodable(f"unsupported attribute '{adef.name}' in bytecode writer: {attr}", op)


# ------------------------------------------------------------------------------------------------
# Operations


class _FunctionWriter:
    """Encodes one function body; keeps the value numbering of §6.2 (values defined in a
    block are forgotten when the block ends, so their indices are reused)."""

    def __init__(self, tables: _Tables, locations: list[int] | None) -> None:
        self.tables = tables
        self.values: dict[Value, int] = {}
        self.defined: list[Value] = []  # in definition order, so a block can forget its own
        self.locations = locations  # the function's debug slice, or None without debug info

    def define(self, value: Value) -> None:
        self.values[value] = len(self.defined)
        self.defined.append(value)

    def operand(self, value: Value, op: Operation, out: Writer) -> None:
        index = self.values.get(value)
        if index is None:
            raise _Unencodable("operand is not defined in this function (or not before its use)", op)
        out.varint(index)

    def block(self, block: Block, out: Writer) -> None:
        saved = len(self.defined)
        out.varint(len(block.arguments))
        for arg in block.arguments:
            out.varint(self.tables.type(arg.type))
            self.define(arg)
        out.varint(len(block.ops))
        for op in block.ops:
            self.operation(op, out)
        for value in self.defined[saved:]:
            del self.values[value]
        del self.defined[saved:]

    def region(self, region: Region, out: Writer) -> None:
        out.varint(len(region.blocks))
        for block in region.blocks:
            self.block(block, out)

    def operation(self, op: Operation, out: Writer) -> None:
        opdef = op.opdef
        tables = self.tables
        assert opdef is not None and opdef.opcode is not None
        lay = layout(opdef, tables.version)
        out.varint(opdef.opcode)
        _check_location(op, op.location)
        if self.locations is not None:
            self.locations.append(tables.debug_index(op.location))

        # 1. result types
        stored_results = []
        for rdef in opdef.results:
            group = op.result_group(rdef.name)
            if lay.stored(rdef):
                stored_results.extend(group)
        if lay.variadic:
            out.varint(len(stored_results))
        for r in stored_results:
            out.varint(tables.type(r.type))

        # 2. flags
        props = op.properties
        if lay.flag_bits:
            flags = 0
            for name, bit in lay.flag_bits.items():
                if opdef.attribute(name) is not None:
                    present = props.get(name) is not None
                else:
                    present = bool(op.operand_group(name))
                if present:
                    flags |= 1 << bit
            if lay.has_flags:
                out.varint(flags)

        # 3. attributes
        for adef in lay.attributes:
            attr = props.get(adef.name)
            if adef.optional:
                if attr is not None:
                    _inline(op, adef, attr, tables, out)
                continue
            if not lay.stored(adef):
                continue  # a later version's attribute: the version check made sure it is the default
            if attr is None and adef.kind == "dense_bool_array":  # `inbounds`: all false, one per index
                attr = A.DenseArrayAttr(T.I1, (0,) * len(op.operand_group("index")))
            if attr is None:
                attr = default_attr(adef)
                if attr is None:
                    raise _Unencodable(f"requires attribute '{adef.name}'", op)
            _inline(op, adef, attr, tables, out)

        # 4. operands
        if lay.attr_sized:
            for odef in opdef.operands:
                group = op.operand_group(odef.name)
                if odef.arity == "variadic":
                    out.varint(len(group))
                elif odef.arity == "optional" and not group:
                    continue
                for v in group:
                    self.operand(v, op, out)
        else:
            if lay.operand_count:
                out.varint(len(op.operands))
            for v in op.operands:
                self.operand(v, op, out)

        # 5. regions
        if opdef.regions:
            out.varint(len(op.regions))
            for region in op.regions:
                self.region(region, out)

        for r in stored_results:
            self.define(r)


# ------------------------------------------------------------------------------------------------
# The file


def write_bytecode(module: Module, version: Version = (13, 3)) -> bytes:
    """Encode a verified module for `version`. Raises `BytecodeWriteError` with diagnostics
    (version problems, unencodable constructs) when it cannot be written."""
    from ..verify.versions import version_diagnostics

    def diagnostic(severity: Severity, message: str, op: Operation | None) -> Diagnostic:
        span = op.head_span if op is not None and op.span is not None else Span(0, 0)
        source = module.source if op is not None and op.span is not None else None
        return Diagnostic(severity, "bytecode", message, span, source)

    def error(message: str, op: Operation | None) -> BytecodeWriteError:
        return BytecodeWriteError([diagnostic(Severity.ERROR, message, op)])

    try:
        module_op, items = find_module(module)
        _check_structure(module_op, items)
    except _Unencodable as exc:
        found = error(exc.message, exc.op)
        if exc.culprit is not None and exc.culprit is not exc.op:
            found.diagnostics.append(diagnostic(Severity.REMARK, "invalid op", exc.culprit))
        raise found from None
    problems = version_diagnostics(module, version_text(version))
    if problems:
        raise BytecodeWriteError(problems)
    try:
        return _encode(module_op, items, version)
    except _Unencodable as exc:
        raise error(exc.message, exc.op) from None


def oldest_version(module: Module, versions: tuple[Version, ...] = AUTO_WRITE) -> Version:
    """The first of `versions` (oldest first) that expresses everything `module` uses; else the
    last, which writing then names what it lacks for."""
    from ..verify.versions import version_diagnostics

    for version in versions[:-1]:
        if not version_diagnostics(module, version_text(version)):
            return version
    return versions[-1]


def _encode(module_op: Operation | None, items: list[Operation], version: Version) -> bytes:
    tables = _Tables(version)
    functions = [op for op in items if op.name in ("cuda_tile.entry", "cuda_tile.testing$func")]
    globals_ = [op for op in items if op.name == "cuda_tile.global"]

    # Function names and signatures, and each function's own location, come first.
    debug_slices: list[list[int] | None] = []
    for func in functions:
        tables.string(_symbol(func))
        tables.type(_function_type(func))
        _check_location(func, func.location)
        if _is_reserved_location(func.location):
            debug_slices.append(None)
        else:
            debug_slices.append([tables.debug_index(func.location)])

    out = Writer()
    out.raw(MAGIC)
    out.byte(version[0])
    out.byte(version[1])
    out.le(0, 2)

    if globals_:
        section = Writer()
        section.varint(len(globals_))
        for g in globals_:
            value = g.properties.get("value")
            if not isinstance(value, A.DenseElementsAttr) or not isinstance(value.type, T.TileType):
                raise _Unencodable("global value must be a dense tile constant", g)
            section.varint(tables.string(_symbol(g)))
            section.varint(tables.type(value.type))
            section.varint(tables.constant(value))
            alignment = g.properties.get("alignment")
            section.varint(alignment.value if isinstance(alignment, A.IntegerAttr) else 0)
            if version >= (13, 3):
                visibility = g.properties.get("symbol_visibility")
                section.varint(visibility.value if isinstance(visibility, A.EnumAttr) else 0)
                section.varint(1 if g.properties.get("constant") is not None else 0)
        append_section(out, Section.GLOBAL, section)

    section = Writer()
    section.varint(len(functions))
    numbered = 0
    for func, locations in zip(functions, debug_slices, strict=True):
        is_entry = func.name == "cuda_tile.entry"
        hints = func.properties.get("optimization_hints") if is_entry else None
        section.varint(tables.string(_symbol(func)))
        section.varint(tables.type(_function_type(func)))
        flags = (FUNC_KERNEL | (FUNC_HAS_HINTS if hints is not None else 0)) if is_entry else 0
        section.byte(flags)
        if locations is None:
            section.varint(0)
        else:
            numbered += 1
            section.varint(numbered)
        if hints is not None:
            _tagged(hints, tables, section, func)
        body = Writer()
        fw = _FunctionWriter(tables, locations)
        block = func.regions[0].entry_block if func.regions else None
        if block is not None:
            for arg in block.arguments:
                fw.define(arg)
            for op in block.ops:
                fw.operation(op, body)
        section.varint(len(body.buf))
        section.raw(body.buf)
    section.align(8)
    append_section(out, Section.FUNC, section)

    if tables.constant_data:
        section = Writer()
        _table(section, tables.constant_data, 8)
        append_section(out, Section.CONSTANT, section)

    scopes = [s for s in debug_slices if s is not None]
    if scopes or tables.debug_list:
        append_section(out, Section.DEBUG, _debug_section(scopes, tables))

    section = Writer()
    # Encoding a type can register no new types (dependencies come first), so the list is final.
    entries = []
    for t in tables.type_list:
        entry = Writer()
        encode_type(t, tables, entry)
        entries.append(entry.buf)
    _table(section, entries, 4)
    append_section(out, Section.TYPE, section)

    producer = module_op.properties.get("producer") if module_op is not None else None
    if isinstance(producer, A.StringAttr) and version >= (13, 3):
        section = Writer()
        section.varint(tables.string(producer.value))
        append_section(out, Section.PRODUCER, section)

    section = Writer()
    _table(section, [s.encode("utf-8", "surrogateescape") for s in tables.strings], 4)  # bytes kept as read
    append_section(out, Section.STRING, section)

    out.byte(Section.END)
    return bytes(out.buf)


def _table(out: Writer, entries: list, width: int) -> None:
    """`count, padding to width, width-byte offsets, blobs`: the layout shared by the string,
    type, constant and debug-attribute tables."""
    out.varint(len(entries))
    out.align(width)
    offset = 0
    for e in entries:
        out.le(offset, width)
        offset += len(e)
    for e in entries:
        out.raw(e)


def _debug_section(scopes: list[list[int]], tables: _Tables) -> Writer:
    section = Writer()
    section.varint(len(scopes))
    section.align(4)
    offset = 0
    for s in scopes:
        section.le(offset, 4)
        offset += len(s)
    section.varint(offset)
    section.align(8)
    for s in scopes:
        for index in s:
            section.le(index, 8)
    # Serialising an entry may register strings, never new debug attributes (their
    # dependencies were numbered first).
    entries = []
    for attr in tables.debug_list:
        entry = Writer()
        _debug_entry(attr, tables, entry)
        entries.append(entry.buf)
    _table(section, entries, 4)
    return section


def _int_param(attr: A.DIAttr, key: str) -> int:
    value = attr.get(key)
    return int(getattr(value, "value", 0) or 0)


def _str_param(attr: A.DIAttr, key: str) -> str:
    value = attr.get(key)
    return value.value if isinstance(value, A.StringAttr) else ""


def _debug_entry(attr: A.Attribute, tables: _Tables, out: Writer) -> None:
    if isinstance(attr, A.DILocAttr):
        source = attr.source
        out.varint(DebugTag.LOC)
        out.varint(tables.debug_index(attr.scope))
        if isinstance(source, A.FileLineColLoc):
            out.varint(tables.string(source.filename))
            out.varint(source.line)
            out.varint(source.column)
        else:
            out.varint(tables.string(""))
            out.varint(0)
            out.varint(0)
    elif isinstance(attr, A.CallSiteLoc):
        out.varint(DebugTag.CALL_SITE)
        out.varint(tables.debug_index(attr.callee))
        out.varint(tables.debug_index(attr.caller))
    elif isinstance(attr, A.DIAttr) and attr.kind == "di_file":
        out.varint(DebugTag.FILE)
        out.varint(tables.string(_str_param(attr, "name")))
        out.varint(tables.string(_str_param(attr, "directory")))
    elif isinstance(attr, A.DIAttr) and attr.kind == "di_compile_unit":
        out.varint(DebugTag.COMPILE_UNIT)
        out.varint(tables.debug_index(attr.get("file")))  # type: ignore[arg-type]
    elif isinstance(attr, A.DIAttr) and attr.kind == "di_lexical_block":
        out.varint(DebugTag.LEXICAL_BLOCK)
        out.varint(tables.debug_index(attr.get("scope")))  # type: ignore[arg-type]
        out.varint(tables.debug_index(attr.get("file")))  # type: ignore[arg-type]
        out.varint(_int_param(attr, "line"))
        out.varint(_int_param(attr, "column"))
    elif isinstance(attr, A.DIAttr) and attr.kind == "di_subprogram":
        out.varint(DebugTag.SUBPROGRAM)
        out.varint(tables.debug_index(attr.get("file")))  # type: ignore[arg-type]
        out.varint(_int_param(attr, "line"))
        out.varint(tables.string(_str_param(attr, "name")))
        out.varint(tables.string(_str_param(attr, "linkageName")))
        out.varint(tables.debug_index(attr.get("compileUnit")))  # type: ignore[arg-type]
        out.varint(_int_param(attr, "scopeLine"))
    else:
        out.varint(DebugTag.UNKNOWN)


def _symbol(op: Operation) -> str:
    name = op.properties.get("sym_name")
    return name.value if isinstance(name, A.StringAttr) else ""


def _function_type(op: Operation) -> T.FunctionType:
    ft = op.properties.get("function_type")
    value = ft.value if isinstance(ft, A.TypeAttr) else None
    if not isinstance(value, T.FunctionType):
        raise _Unencodable("function has no function_type", op)
    return value
