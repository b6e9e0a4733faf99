"""Bytecode -> Module, as NVIDIA's reader reads it.

The reader finds every section first (order in the file is free), then reads them in the
order their contents depend on: strings, producer, types (lazily), constants, globals,
functions (with the debug section at hand for locations). Every length and count is
checked against the bytes that remain before it is used, types and debug attributes are
decoded at most once (a cycle between them is an error), and nesting depth is bounded, so
no input can make the reader overrun, loop, recurse without end or allocate much more than
the file's size. Failures raise `BytecodeError` naming what was being read and the byte
offset.

The module comes back as NVIDIA's reader builds it: a `cuda_tile.module @kernels` (the name
is not stored) holding the globals, then the entries; argument and result attributes are
not stored either.
"""

from __future__ import annotations

import gc

from ..dialect import OPS, enum_for_kind
from ..dialect.opdef import AttrDef, OpDef
from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Block, Module, Operation, Region, Value
from ..verify.types import type_problem
from . import newer
from .constants import decode_dense
from .format import (
    FUNC_HAS_HINTS,
    FUNC_KERNEL,
    INT64_MIN,
    MAGIC,
    MLIR_MAGIC,
    PADDING_VALUES,
    READ_ONLY,
    SCALAR_BY_TAG,
    SECTION_ALIGNMENT,
    SUPPORTED,
    TEST_VERSIONS,
    AttrTag,
    BytecodeError,
    DebugTag,
    Reader,
    Section,
    TypeTag,
    Version,
    has,
    since,
    supported_range,
    version_text,
)
from .schema import NOT_INSTRUCTIONS, default_attr, layout, max_opcode, op_for_opcode

MAX_NESTING = 512  # regions inside regions; deeper input is refused, not recursed into
_UNKNOWN = A.UnknownLoc()
_I32_LIMITS = (-(1 << 31), (1 << 31) - 1)


def read_version(data: bytes) -> tuple[Version, int]:
    """The (major, minor) version and tag of a bytecode file, checking its magic."""
    r = Reader(data)
    if data[: len(MLIR_MAGIC)] == MLIR_MAGIC:
        raise BytecodeError("input does not correspond to Tile IR bytecode (it looks like MLIR bytecode instead)", 0)
    for i, expected in enumerate(MAGIC):
        got = r.byte("the magic number")
        if got != expected:
            raise BytecodeError(f"invalid magic number at position {i}, got {got} expected {expected}", i)
    major = r.byte("the version")
    minor = r.byte("the version")
    tag = r.le(2, "the version tag")
    return (major, minor), tag


def read_bytecode(
    data: bytes, part: tuple[int, int] | None = None, versions: tuple[Version, ...] | None = None
) -> Module:
    """Decode a Tile IR bytecode file. Raises `BytecodeError` when it is not valid bytecode
    of a version we read (of `versions` and the test-only ones, when given: `tileir
    translate` reads as NVIDIA's 13.3 tool does).

    `part=(i, n)`: only the functions of the i-th of n runs of similar size are decoded (the
    others are left out of the module, their bodies unread), for a disassembly in n processes;
    its errors are not necessarily the first the whole file has."""
    # Everything the reader builds stays reachable, so the cyclic collector has nothing to find;
    # left on, it scans the growing module again and again (about a third of decoding time).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _read(bytes(data), part, versions)
    finally:
        if enabled:
            gc.enable()


def _read(data: bytes, part: tuple[int, int] | None, versions: tuple[Version, ...] | None) -> Module:
    version, tag = read_version(data)
    accepted = (*SUPPORTED, *READ_ONLY) if versions is None else versions
    if version not in accepted and version not in TEST_VERSIONS:
        also = " (and reads 13.5 as far as its encodings are known)" if versions is None else ""
        raise BytecodeError(
            f"unsupported Tile version {version[0]}.{version[1]}.{tag}, this reader supports versions "
            f"{supported_range(versions or SUPPORTED)}{also}",
            8,
        )
    if has(version, newer.V13_4):
        newer.check_header(version, tag)
    return _FileReader(data, version, part).read()


# ------------------------------------------------------------------------------------------------


class _FileReader:
    def __init__(self, data: bytes, version: Version, part: tuple[int, int] | None = None) -> None:
        self.data = data
        self.version = version
        self.sections: dict[int, tuple[int, int]] = {}
        self.string_offsets: list[tuple[int, int]] = []
        self.strings: dict[int, str] = {}
        self.type_offsets: list[tuple[int, int]] = []
        self.types: dict[int, T.Type] = {}
        self.types_in_progress: set[int] = set()
        self.constant_offsets: list[tuple[int, int]] = []
        self.debug_scopes: list[int] = []
        self.debug_indices: tuple[int, int] = (0, 0)  # (start, count) of the u64 index array
        self.debug_offsets: list[tuple[int, int]] = []
        self.debug_attrs: dict[int, A.Attribute] = {}
        self.debug_in_progress: set[int] = set()
        self.part = part  # see `read_bytecode`
        if version in SUPPORTED:
            self.max_opcode = max_opcode(version)
        else:
            self.max_opcode = newer.MAX_OPCODE.get(version, 0x3FFF)

    # -------------------------------------------------------------------------- sections

    def read(self) -> Module:
        self._scan_sections()
        if Section.STRING not in self.sections:
            raise BytecodeError("string section is mandatory")
        self._read_string_section()
        producer = self._read_producer()
        if Section.TYPE in self.sections:
            self.type_offsets = self._offset_table(Section.TYPE, 4, "types")
        if Section.CONSTANT in self.sections:
            self._read_constant_section()
        globals_ = self._read_globals()
        if Section.FUNC not in self.sections:
            raise BytecodeError("function section is mandatory")
        if Section.DEBUG in self.sections:
            self._read_debug_section()
        functions = self._read_functions()

        module = Module()
        properties: dict[str, A.Attribute] = {"sym_name": A.StringAttr("kernels")}
        if producer is not None:
            properties["producer"] = A.StringAttr(producer)
        module_op = Operation("cuda_tile.module", OPS["cuda_tile.module"], properties=properties)
        body = Block()
        for op in (*globals_, *functions):
            body.append(op)
        module_op.add_region(Region([body]))
        module.body.append(module_op)
        return module

    def _scan_sections(self) -> None:
        r = Reader(self.data, 12)
        while True:
            if r.at_end():
                raise r.fail("unexpected end of data while reading section header (the file has no end marker)")
            start = r.pos
            id_byte = r.byte("a section header")
            section, aligned = id_byte & 0x7F, bool(id_byte & 0x80)
            if section == Section.END:
                if aligned:
                    raise BytecodeError("end section should not have alignment flag set", start)
                if not r.at_end():
                    raise BytecodeError("end section is not the last section", start)
                return
            if section > Section.PRODUCER:
                raise BytecodeError(f"unknown section ID: {section}", start)
            length_at = r.pos
            length = r.varint("a section length")
            if length > r.remaining():
                raise BytecodeError(f"section length {length} exceeds remaining data size {r.remaining()}", length_at)
            alignment = 1
            if aligned:
                alignment = r.varint("a section alignment")
                if alignment == 0 or alignment & (alignment - 1):
                    raise r.fail(f"invalid alignment value: {alignment}")
                r.pad(alignment, f"section {section}")
            if length > r.remaining():
                raise BytecodeError(
                    f"section length {length} exceeds remaining bytecode data ({r.remaining()} bytes)", length_at
                )
            required = SECTION_ALIGNMENT.get(Section(section), 1)
            if required > 1 and (not aligned or alignment % required):
                what = "has no alignment flag set" if not aligned else f"has alignment {alignment}"
                raise BytecodeError(
                    f"section {section} must have alignment that is a multiple of {required} bytes, but {what}", start
                )
            # A second copy of a section replaces the first, as NVIDIA's reader does.
            self.sections[section] = (r.pos, r.pos + length)
            r.pos += length

    def _section(self, section: Section) -> Reader:
        start, end = self.sections[section]
        return Reader(self.data, start, end)

    def _offset_table(self, section: Section, width: int, what: str, clamp: bool = False) -> list[tuple[int, int]]:
        """`count, pad, width-byte offsets, blob`: the (start, end) file range of each item.
        With `clamp`, a bad range is cut to the blob as NVIDIA's reader cuts strings
        (`StringRef::substr(start, end - start)` in 32-bit arithmetic) instead of refused:
        test/Bytecode/invalid/invalid_attribute_name.bc relies on it (an out-of-range string
        reads as empty, refused later as an empty attribute name)."""
        r = self._section(section)
        n = r.count(f"number of {what}", width)
        if n == 0:
            return []
        r.pad(width, f"the {what} offsets")
        if n * width > r.remaining():
            raise r.fail(f"number of {what} ({n}) cannot fit in the remaining {r.remaining()} bytes")
        table_at = r.pos
        offsets = [r.le(width, f"{what} offsets") for _ in range(n)]
        blob = r.pos
        size = r.end - blob
        ranges = []
        for i, start in enumerate(offsets):
            end = offsets[i + 1] if i + 1 < n else size
            if clamp:
                first = min(start, size)
                ranges.append((blob + first, blob + first + min((end - start) & 0xFFFFFFFF, size - first)))
                continue
            if not 0 <= start <= end <= size:
                raise BytecodeError(
                    f"{what} {i} has an invalid range [{start}, {end}) in a blob of {size} bytes",
                    table_at + i * width,
                )
            ranges.append((blob + start, blob + end))
        return ranges

    def _read_string_section(self) -> None:
        self.string_offsets = self._offset_table(Section.STRING, 4, "strings", clamp=True)

    def string(self, index: int, at: Reader) -> str:
        text = self.strings.get(index)
        if text is None:
            if index >= len(self.string_offsets):
                raise at.fail(f"string index {index} out of bounds (the file has {len(self.string_offsets)} strings)")
            start, end = self.string_offsets[index]
            # Bytes that are not UTF-8 kept as surrogates (lexer.unescape_string): printed as \XX.
            text = self.strings[index] = self.data[start:end].decode("utf-8", errors="surrogateescape")
        return text

    def _read_producer(self) -> str | None:
        if Section.PRODUCER not in self.sections:
            return None
        r = self._section(Section.PRODUCER)
        return self.string(r.varint("the producer string index"), r)

    # -------------------------------------------------------------------------- types

    def type(self, index: int, at: Reader) -> T.Type:
        t = self.types.get(index)
        if t is not None:
            return t
        if index >= len(self.type_offsets):
            raise at.fail(f"type index {index} out of bounds (the file has {len(self.type_offsets)} types)")
        if index in self.types_in_progress:
            raise at.fail(f"type {index} refers to itself")
        self.types_in_progress.add(index)
        start, end = self.type_offsets[index]
        r = Reader(self.data, start, end)
        t = self._decode_type(r)
        # NVIDIA's reader builds each type checked (`getChecked`): a type that breaks a rule
        # of its own is an error of the type table, before any op is read.
        problem = type_problem(t)
        if problem is not None:
            raise BytecodeError(problem.message, start)
        self.types_in_progress.discard(index)
        self.types[index] = t
        return t

    def _check_type_version(self, name: str, since_version: Version, r: Reader, at: int) -> None:
        if self.version < since_version and self.version not in TEST_VERSIONS:
            raise BytecodeError(
                f"type '{name}' requires bytecode version {version_text(since_version)}+, "
                f"file version is {version_text(self.version)}",
                at,
            )

    def _decode_type(self, r: Reader) -> T.Type:
        at = r.pos
        tag = r.varint("a type tag")
        scalar = SCALAR_BY_TAG.get(tag)
        if scalar is not None:
            from .format import SCALAR_TAGS

            type_since = T.ELEMENT_TYPE_SINCE.get(scalar)
            if type_since is not None:
                self._check_type_version(SCALAR_TAGS[scalar][1], since(type_since), r, at)
            return T.SCALAR_TYPES[scalar]
        if tag == TypeTag.POINTER:
            self._type_flags(r, "ptr")
            return T.PointerType(self.type(r.varint("a pointee type"), r))
        if tag == TypeTag.TILE:
            element = self.type(r.varint("a tile element type"), r)
            shape = r.array(8, "tile shape")
            return T.TileType(tuple(shape), element)
        if tag == TypeTag.TENSOR_VIEW:
            self._type_flags(r, "tensor_view")
            element = self.type(r.varint("a tensor_view element type"), r)
            shape = r.array(8, "tensor_view shape")
            strides = r.array(8, "tensor_view strides")
            return T.TensorViewType(
                element,
                tuple(None if d == INT64_MIN else d for d in shape),
                tuple(None if d == INT64_MIN else d for d in strides),
            )
        if tag == TypeTag.PARTITION_VIEW:
            if self.version >= (13, 3):
                flags = r.varint("partition_view flags")
                tile_shape = r.array(4, "partition_view tile shape")
                view = self.type(r.varint("a partition_view tensor_view"), r)
                dim_map = r.array(4, "partition_view dim_map")
                padding = self._padding(r) if flags & 1 else None
            else:
                tile_shape = r.array(4, "partition_view tile shape")
                view = self.type(r.varint("a partition_view tensor_view"), r)
                dim_map = r.array(4, "partition_view dim_map")
                present = r.byte("the partition_view padding presence byte")
                if present > 1:
                    raise r.fail(f"invalid presence byte for optional attribute: {present}")
                padding = self._padding(r) if present else None
            return T.PartitionViewType(tuple(tile_shape), view, tuple(dim_map), padding)
        if tag == TypeTag.GATHER_SCATTER_VIEW:
            self._check_type_version("GatherScatterViewType", (13, 3), r, at)
            flags = r.varint("gather_scatter_view flags")
            tile_shape = r.array(4, "gather_scatter_view tile shape")
            view = self.type(r.varint("a gather_scatter_view tensor_view"), r)
            sparse_dim = r.varint("gather_scatter_view sparse_dim")
            if sparse_dim > 0xFFFFFFFF:
                raise r.fail(f"gather_scatter_view sparse_dim {sparse_dim} does not fit in 32 bits")
            padding = self._padding(r) if flags & 1 else None
            return T.GatherScatterViewType(tuple(tile_shape), view, sparse_dim, padding)
        if tag == TypeTag.STRIDED_VIEW:
            self._check_type_version("StridedViewType", (13, 3), r, at)
            flags = r.varint("strided_view flags")
            tile_shape = r.array(4, "strided_view tile shape")
            strides = r.array(4, "strided_view traversal strides")
            view = self.type(r.varint("a strided_view tensor_view"), r)
            dim_map = r.array(4, "strided_view dim_map")
            padding = self._padding(r) if flags & 1 else None
            return T.StridedViewType(tuple(tile_shape), tuple(strides), view, tuple(dim_map), padding)
        if tag == TypeTag.FUNCTION:
            n = r.count("number of function inputs")
            inputs = tuple(self.type(r.varint("a function input type"), r) for _ in range(n))
            m = r.count("number of function results")
            results = tuple(self.type(r.varint("a function result type"), r) for _ in range(m))
            return T.FunctionType(inputs, results)
        if tag == TypeTag.TOKEN:
            return T.TOKEN
        if tag == newer.FNV8E5M3FNU_TAG and has(self.version, newer.V13_4):
            raise newer.unrepresentable("the element type fnv8E5M3FNU (bytecode 13.4)", self.version, at)
        raise BytecodeError(f"unknown type tag: {tag}", at)

    def _type_flags(self, r: Reader, name: str) -> None:
        """From 13.4, ptr and tensor_view start with option flags: bit 0 says a ptr_attr follows
        (which 13.3 types cannot carry)."""
        if not has(self.version, newer.V13_4):
            return
        at = r.pos
        flags = r.varint(f"{name} option flags")
        if flags & 1:
            raise newer.unrepresentable(f"a {name} type with a ptr_attr (bytecode 13.4+)", self.version, at)
        if flags:
            raise BytecodeError(f"unused bits set in the option flags of a {name} type (0x{flags:x})", at)

    def _padding(self, r: Reader) -> str:
        code = r.varint("a padding value")
        if code >= len(PADDING_VALUES):
            raise r.fail(f"invalid padding value {code} (expected 0 to {len(PADDING_VALUES) - 1})")
        return PADDING_VALUES[code]

    # -------------------------------------------------------------------------- constants

    def _read_constant_section(self) -> None:
        self.constant_offsets = self._offset_table(Section.CONSTANT, 8, "constants")

    def constant(self, index: int, t: T.Type, r: Reader) -> A.DenseElementsAttr:
        if index >= len(self.constant_offsets):
            raise r.fail(f"constant index {index} out of bounds (the file has {len(self.constant_offsets)} constants)")
        if not isinstance(t, T.TileType) or not isinstance(t.element, (T.IntegerType, T.FloatType)):
            raise r.fail(f"expect Cuda Tile integer or float type but got: {t}")
        start, end = self.constant_offsets[index]
        c = Reader(self.data, start, end)
        size = c.varint("the size of the data buffer")
        raw = c.take(size, f"constant {index}")
        attr = decode_dense(raw, t)
        if attr is None:
            raise r.fail(f"constant {index} has {size} bytes, which fits neither one element nor all of {t}")
        return attr

    # -------------------------------------------------------------------------- globals

    def _read_globals(self) -> list[Operation]:
        if Section.GLOBAL not in self.sections:
            return []
        r = self._section(Section.GLOBAL)
        extended = self.version >= (13, 3)
        n = r.count("number of globals", 6 if extended else 4)
        out = []
        opdef = OPS["cuda_tile.global"]
        for _ in range(n):
            name = self.string(r.varint("a global symbol name"), r)
            if not name:
                raise r.fail("global symbol name is empty")
            value_type = self.type(r.varint("a global value type"), r)
            value = self.constant(r.varint("a global value constant index"), value_type, r)
            alignment = r.varint("a global alignment")
            props: dict[str, A.Attribute] = {
                "sym_name": A.StringAttr(name),
                "value": value,
                "alignment": A.IntegerAttr(_signed(alignment, 64)),
            }
            if extended:
                visibility = r.varint("a global symbol visibility")
                enum = enum_for_kind("enum:symbol_visibility")
                case = enum.by_value(visibility) if enum is not None else None
                if case is None:
                    raise r.fail(f"invalid symbol visibility value: {visibility}")
                props["symbol_visibility"] = A.EnumAttr(enum, case.keyword)  # type: ignore[arg-type]
                if r.varint("a global constant flag"):
                    props["constant"] = A.UNIT
            out.append(Operation(opdef.name, opdef, properties=props, location=None))
        return out

    # -------------------------------------------------------------------------- debug info

    def _read_debug_section(self) -> None:
        r = self._section(Section.DEBUG)
        n = r.count("number of functions with debug info", 4)
        if n:
            r.pad(4, "the debug info index offsets")
            if n * 4 > r.remaining():
                raise r.fail("debug info index offsets run past the section")
            self.debug_scopes = [r.le(4, "a debug info index offset") for _ in range(n)]
        count = r.count("number of debug info indices")
        r.pad(8, "the debug info indices")
        if count * 8 > r.remaining():
            raise r.fail(f"number of debug info indices ({count}) cannot fit in the remaining {r.remaining()} bytes")
        self.debug_indices = (r.pos, count)
        r.pos += count * 8
        attrs = r.count("number of debug info attributes", 4)
        r.pad(4, "the debug info attribute offsets")
        if attrs * 4 > r.remaining():
            raise r.fail("debug info attribute offsets run past the section")
        offsets = [r.le(4, "a debug info attribute offset") for _ in range(attrs)]
        blob, size = r.pos, r.end - r.pos
        for i, start in enumerate(offsets):
            end = offsets[i + 1] if i + 1 < attrs else size
            if not 0 <= start <= end <= size:
                raise BytecodeError(f"debug info attribute {i + 1} has an invalid range [{start}, {end})", blob)
            self.debug_offsets.append((blob + start, blob + end))

    def debug_index_at(self, position: int, r: Reader) -> int:
        start, count = self.debug_indices
        if position >= count:
            raise r.fail(f"debug info index {position} out of bounds (the section has {count})")
        offset = start + 8 * position
        return int.from_bytes(self.data[offset : offset + 8], "little")

    def debug_attr(self, index: int, r: Reader) -> A.Attribute:
        if index == 0:
            return _UNKNOWN
        attr = self.debug_attrs.get(index)
        if attr is not None:
            return attr
        if index > len(self.debug_offsets):
            raise r.fail(f"debug info attribute {index} out of bounds (the section has {len(self.debug_offsets)})")
        if index in self.debug_in_progress:
            raise r.fail(f"debug info attribute {index} refers to itself")
        self.debug_in_progress.add(index)
        start, end = self.debug_offsets[index - 1]
        attr = self._decode_debug(Reader(self.data, start, end))
        self.debug_in_progress.discard(index)
        self.debug_attrs[index] = attr
        return attr

    def _decode_debug(self, r: Reader) -> A.Attribute:
        tag = r.varint("a debug info tag")
        if tag == DebugTag.FILE:
            name = self.string(r.varint("DIFile name"), r)
            directory = self.string(r.varint("DIFile directory"), r)
            return A.DIAttr("di_file", (("name", A.StringAttr(name)), ("directory", A.StringAttr(directory))))
        if tag == DebugTag.COMPILE_UNIT:
            file = self._debug_ref(r, "DICompileUnit file", "di_file")
            return A.DIAttr("di_compile_unit", (("file", file),))
        if tag == DebugTag.LEXICAL_BLOCK:
            scope = self._debug_ref(r, "DILexicalBlock scope", "di_subprogram", "di_lexical_block")
            file = self._debug_ref(r, "DILexicalBlock file", "di_file")
            line = r.varint("DILexicalBlock line")
            column = r.varint("DILexicalBlock column")
            return A.DIAttr(
                "di_lexical_block",
                (("scope", scope), ("file", file), ("line", A.IntegerAttr(line)), ("column", A.IntegerAttr(column))),
            )
        if tag == DebugTag.LOC:
            scope = self._debug_ref(r, "DILoc scope", "di_subprogram", "di_lexical_block")
            filename = self.string(r.varint("DILoc file name"), r)
            line = r.varint("DILoc line")
            column = r.varint("DILoc column")
            return A.DILocAttr(A.FileLineColLoc(filename, _u32(line), _u32(column)), scope)
        if tag == DebugTag.SUBPROGRAM:
            file = self._debug_ref(r, "DISubprogram file", "di_file")
            line = r.varint("DISubprogram line")
            name = self.string(r.varint("DISubprogram name"), r)
            linkage = self.string(r.varint("DISubprogram linkage name"), r)
            unit = self._debug_ref(r, "DISubprogram compile unit", "di_compile_unit")
            scope_line = r.varint("DISubprogram scope line")
            if has(self.version, newer.SUBPROGRAM_FLAGS_SINCE):
                at = r.pos
                sp_flags = r.varint("DISubprogram flags")
                if sp_flags == 1:
                    raise newer.unrepresentable(
                        "a DISubprogram marked as a declaration (bytecode 13.5)", self.version, at
                    )
                if sp_flags:
                    raise BytecodeError(f"unrecognized flag bits (0x{sp_flags:x}) when parsing DISubprogramAttr", at)
            return A.DIAttr(
                "di_subprogram",
                (
                    ("file", file),
                    ("line", A.IntegerAttr(_u32(line))),
                    ("name", A.StringAttr(name)),
                    ("linkageName", A.StringAttr(linkage)),
                    ("compileUnit", unit),
                    ("scopeLine", A.IntegerAttr(_u32(scope_line))),
                ),
            )
        if tag == DebugTag.CALL_SITE:
            callee = self._location(self.debug_attr(r.varint("CallSite callee"), r), r)
            caller = self._location(self.debug_attr(r.varint("CallSite caller"), r), r)
            return A.CallSiteLoc(callee, caller)
        return _UNKNOWN  # NVIDIA's reader takes any other tag as an unknown location

    def _debug_ref(self, r: Reader, what: str, *kinds: str) -> A.Attribute:
        at = r.pos
        attr = self.debug_attr(r.varint(what), r)
        if not (isinstance(attr, A.DIAttr) and attr.kind in kinds):
            raise BytecodeError(f"{what} must be a {' or '.join(kinds)} attribute, got {attr}", at)
        return attr

    def _location(self, attr: A.Attribute, r: Reader) -> A.LocationAttr:
        if not isinstance(attr, A.LocationAttr):
            raise r.fail(f"expected a location, got debug info attribute {attr}")
        return attr

    # -------------------------------------------------------------------------- functions

    def _read_functions(self) -> list[Operation]:
        r = self._section(Section.FUNC)
        n = r.count("number of functions", 5)
        out = []
        headers = []  # with `part`: each function's header, its body read afterwards (or not)
        for _ in range(n):
            name_at = r.pos
            name = self.string(r.varint("a function name"), r)
            sig_at = r.pos
            sig_index = r.varint("a function signature index")
            if sig_index >= len(self.type_offsets):
                raise BytecodeError(f"function signature index {sig_index} out of bounds for function '{name}'", sig_at)
            signature = self.type(sig_index, r)
            if not isinstance(signature, T.FunctionType):
                raise BytecodeError(
                    f"function signature index {sig_index} does not refer to a function type for function "
                    f"'{name}', got type: {signature}",
                    sig_at,
                )
            flags_at = r.pos
            flags = r.byte("a function flag byte")
            loc_index = r.varint("a function location index")
            # 13.5: bit 2 means "extern implementation" and kernels always carry hints, then
            # their argument attributes.
            v135 = has(self.version, newer.FUNCTION_ARG_ATTRS_SINCE)
            if v135 and flags & ~(FUNC_KERNEL | 0x01):
                what = "an extern implementation entry" if flags & FUNC_HAS_HINTS else f"function flags 0x{flags:x}"
                raise newer.unrepresentable(f"{what} ('{name}')", self.version, flags_at)
            hints = None
            if flags & FUNC_KERNEL and (v135 or flags & FUNC_HAS_HINTS):
                at = r.pos
                hints = self.tagged_attr(r, 0)
                if not isinstance(hints, A.OptimizationHintsAttr):
                    raise BytecodeError(f"invalid optimization hints attribute for function '{name}'", at)
                if v135 and not hints.entries:
                    hints = None  # 13.5 writes empty hints for a kernel that has none
            if not flags & FUNC_KERNEL:
                raise r.fail(f"un-expected non-entry function '{name}'")
            if v135:
                at = r.pos
                arg_attrs = self.tagged_attr(r, 0)
                if not isinstance(arg_attrs, A.ArrayAttr) or any(
                    not isinstance(a, A.DictionaryAttr) or a.entries for a in arg_attrs.elements
                ):
                    raise newer.unrepresentable(f"argument attributes {arg_attrs} on '{name}'", self.version, at)
            if not name:
                # Checked after the hints: NVIDIA's reader has no such check and reports a bad
                # hints dictionary first (test/Bytecode/invalid/invalid_attribute_name.bc).
                raise BytecodeError("function name is empty", name_at)
            length = r.varint("a function body length")
            if length > r.remaining():
                raise r.fail(f"function body length {length} exceeds remaining bytecode data ({r.remaining()} bytes)")
            body = Reader(self.data, r.pos, r.pos + length)
            r.pos += length
            if self.part is None:
                out.append(self._function(name, signature, hints, loc_index, body))
            else:
                headers.append((name, signature, hints, loc_index, body))
        if self.part is not None:
            index, count = self.part
            first = headers[0][4].pos if headers else 0
            total = max(1, r.pos - first)
            for name, signature, hints, loc_index, body in headers:
                if (body.pos - first) * count // total == index:
                    out.append(self._function(name, signature, hints, loc_index, body))
        return out

    def _function(
        self, name: str, signature: T.FunctionType, hints: A.Attribute | None, loc_index: int, body: Reader
    ) -> Operation:
        locations = None
        location: A.LocationAttr | None = None
        if loc_index:
            if loc_index > len(self.debug_scopes):
                raise body.fail(f"failed to read function location for '{name}' (debug scope {loc_index} is missing)")
            locations = _Locations(self, self.debug_scopes[loc_index - 1])
            location = locations.next(body)
        props: dict[str, A.Attribute] = {"sym_name": A.StringAttr(name), "function_type": A.TypeAttr(signature)}
        if hints is not None:
            props["optimization_hints"] = hints
        entry = Operation("cuda_tile.entry", OPS["cuda_tile.entry"], properties=props, location=location)
        block = Block(list(signature.inputs))
        values: list[Value] = list(block.arguments)
        body_reader = _BodyReader(self, values, locations)
        while not body.at_end():
            block.append(body_reader.operation(body, 0))
        entry.add_region(Region([block]))
        return entry

    # -------------------------------------------------------------------------- attributes

    def tagged_attr(self, r: Reader, depth: int) -> A.Attribute:
        """A self-contained attribute: tag, then payload."""
        if depth > MAX_NESTING:
            raise r.fail("attributes are nested too deeply")
        at = r.pos
        tag = r.varint("an attribute tag")
        if tag == AttrTag.INTEGER:
            itype = self.type(r.varint("an IntegerAttr type"), r)
            if not isinstance(itype, T.IntegerType):
                raise r.fail(f"failed to read valid IntegerType for IntegerAttr (got {itype})")
            return self._integer(r, itype)
        if tag == AttrTag.FLOAT:
            ftype = self.type(r.varint("a FloatAttr type"), r)
            if not isinstance(ftype, T.FloatType):
                raise r.fail(f"failed to read valid FloatType for FloatAttr (got {ftype})")
            return A.FloatAttr(self._float_bits(r, ftype), ftype)
        if tag == AttrTag.BOOL:
            return A.BoolAttr(r.byte("a bool attribute") != 0)
        if tag == AttrTag.TYPE:
            return A.TypeAttr(self.type(r.varint("a TypeAttr type"), r))
        if tag == AttrTag.STRING:
            return A.StringAttr(self.string(r.varint("a string attribute"), r))
        if tag == AttrTag.ARRAY:
            return self._array(r, depth)
        if tag == AttrTag.DENSE_ELEMENTS:
            t = self.type(r.varint("a DenseElementsAttr type"), r)
            return self.constant(r.varint("a constant index"), t, r)
        if tag in (AttrTag.DIV_BY, AttrTag.SAME_ELEMENTS, AttrTag.BOUNDED):
            r.pos = at
            return self._predicate(r)
        if tag == AttrTag.DICTIONARY:
            return A.DictionaryAttr(self._dict_entries(r, depth))
        if tag == AttrTag.OPTIMIZATION_HINTS:
            return self._hints(r, depth)
        if tag == AttrTag.BYTECODE_TEST_VALUE and self.version in TEST_VERSIONS:
            return A.OpaqueAttr(f"#cuda_tile.bytecode_test_value<{r.svarint('a test value')}>")
        raise BytecodeError(f"unsupported AttributeTag {tag} for self-contained attribute", at)

    def _integer(self, r: Reader, itype: T.IntegerType) -> A.Attribute:
        if itype.width == 1:
            return A.BoolAttr(r.byte("an i1 value") != 0)
        value = r.varint("an integer value")
        if value >> itype.width:
            raise r.fail(f"value {value} does not fit in {itype.width} bits")
        return A.IntegerAttr(_signed(value, itype.width), None if itype.width == 64 else itype)

    def _float_bits(self, r: Reader, ftype: T.FloatType) -> int:
        width = ftype.format.width
        if width <= 8:
            value = r.byte("a float value")
        else:
            value = r.svarint("a float value") & ((1 << 64) - 1)
        if value >> width:
            raise r.fail(f"value {value} does not fit in {width} bits")
        return value

    def _array(self, r: Reader, depth: int) -> A.ArrayAttr:
        n = r.count("size for ArrayAttr")
        return A.ArrayAttr(tuple(self.tagged_attr(r, depth + 1) for _ in range(n)))

    def _dict_entries(self, r: Reader, depth: int) -> tuple[tuple[str, A.Attribute], ...]:
        n = r.count("size for DictionaryAttr", 2)
        entries = []
        seen = set()
        for i in range(n):
            key = self.string(r.varint("a DictionaryAttr key"), r)
            if not key:
                raise r.fail(f"invalid empty attribute name for DictionaryAttr element {i}")
            if key in seen:
                raise r.fail(f"failed to parse DictionaryAttr, duplicate key found: {key}")
            seen.add(key)
            entries.append((key, self.tagged_attr(r, depth + 1)))
        return tuple(entries)

    def _hints(self, r: Reader, depth: int) -> A.OptimizationHintsAttr:
        at = r.pos
        entries = self._dict_entries(r, depth)
        for key, value in entries:
            if not isinstance(value, A.DictionaryAttr):
                raise BytecodeError(f"optimization hints for '{key}' must be a dictionary, got {value}", at)
        return A.OptimizationHintsAttr(entries)  # type: ignore[arg-type]

    def _predicate(self, r: Reader) -> A.Attribute:
        at = r.pos
        tag = r.varint("an assume predicate tag")
        if tag == AttrTag.DIV_BY:
            divisor = r.varint("the divisor of DivByAttr")
            flags = r.byte("the flags byte of DivByAttr")
            every = r.svarint("'every' of DivByAttr") if flags & 1 else None
            along = r.svarint("'along' of DivByAttr") if flags & 2 else None
            return A.DivByAttr(divisor, every, along)
        if tag == AttrTag.SAME_ELEMENTS:
            return A.SameElementsAttr(tuple(r.array(8, "SameElementsAttr values")))
        if tag == AttrTag.BOUNDED:
            flags = r.byte("the flags byte of BoundedAttr")
            lb = r.svarint("the lower bound of BoundedAttr") if flags & 1 else None
            ub = r.svarint("the upper bound of BoundedAttr") if flags & 2 else None
            return A.BoundedAttr(lb, ub)
        raise BytecodeError(f"attribute tag {tag} is not an assume predicate (div_by, same_elements or bounded)", at)

    def inline_attr(self, adef: AttrDef, r: Reader, result_types: list[T.Type]) -> A.Attribute:
        kind = adef.kind
        if kind.startswith("enum:"):
            enum = enum_for_kind(kind)
            at = r.pos
            value = r.varint(f"enum attribute '{adef.name}'")
            case = enum.by_value(value) if enum is not None else None
            if case is None:
                raise BytecodeError(f"invalid integer value for enum type: {value} (attribute '{adef.name}')", at)
            if since(case.since) > self.version and self.version not in TEST_VERSIONS:
                raise BytecodeError(
                    f"enum value '{case.keyword}' of attribute '{adef.name}' requires bytecode version "
                    f"{case.since}, file version is {version_text(self.version)}",
                    at,
                )
            return A.EnumAttr(enum, case.keyword)  # type: ignore[arg-type]
        if kind in ("i32", "i64"):
            width = 32 if kind == "i32" else 64
            value = _signed(r.varint(f"attribute '{adef.name}'"), 64)
            if width == 32 and not _I32_LIMITS[0] <= value <= (1 << 32) - 1:
                raise r.fail(f"value {value} of attribute '{adef.name}' does not fit in 32 bits")
            return A.IntegerAttr(_signed(value, width), T.I32 if width == 32 else None)
        if kind == "bool":
            return A.BoolAttr(r.byte(f"attribute '{adef.name}'") != 0)
        if kind in ("string", "symbol"):
            return A.StringAttr(self.string(r.varint(f"attribute '{adef.name}'"), r))
        if kind == "symbol_ref":
            name = self.string(r.varint(f"attribute '{adef.name}'"), r)
            if not name:
                raise r.fail("empty symbol reference is invalid")
            return A.SymbolRefAttr(name)
        if kind == "dense_bool_array":  # a count, then one byte per element
            flags = r.take(r.count(f"attribute '{adef.name}'"), f"attribute '{adef.name}'")
            return A.DenseArrayAttr(T.I1, tuple(int(b != 0) for b in flags))
        if kind in ("dense_i32_array", "dense_i64_array"):
            size = 4 if kind == "dense_i32_array" else 8
            values = r.array(size, f"attribute '{adef.name}'")
            if size == 4:
                for v in values:
                    if v in (_I32_LIMITS[0], _I32_LIMITS[1]):
                        raise r.fail(f"array contains unsupported value {v}")
            return A.DenseArrayAttr(T.I32 if size == 4 else T.I64, tuple(values))
        if kind == "dense_elements":
            if not result_types:
                raise r.fail(f"attribute '{adef.name}' needs a result type")
            return self.constant(r.varint("a constant index"), result_types[0], r)
        if kind == "array":
            return self._array(r, 0)
        if kind == "optimization_hints":
            return self._hints(r, 0)
        if kind == "assume_predicate":
            return self._predicate(r)
        if kind == "bytecode_test_value":
            return A.OpaqueAttr(f"#cuda_tile.bytecode_test_value<{r.svarint('a test value')}>")
        if kind == "type":
            return A.TypeAttr(self.type(r.varint(f"attribute '{adef.name}'"), r))
        raise r.fail(f"attribute deserialization not implemented for '{adef.name}' ({kind})")


class _Locations:
    """The debug index slice of one function, consumed one entry per op in pre-order."""

    def __init__(self, reader: _FileReader, start: int) -> None:
        self.reader = reader
        self.position = start

    def next(self, r: Reader) -> A.LocationAttr:
        index = self.reader.debug_index_at(self.position, r)
        self.position += 1
        attr = self.reader.debug_attr(index, r)
        if not isinstance(attr, A.LocationAttr):
            raise r.fail(f"debug info attribute {index} is used as a location but is {attr}")
        return attr


def _default_type(constraint: str) -> T.Type:
    """A result newer than the file gets the one type its constraint allows (tokens only)."""
    return T.TOKEN


class _BodyReader:
    def __init__(self, reader: _FileReader, values: list[Value], locations: _Locations | None) -> None:
        self.reader = reader
        self.values = values
        self.locations = locations

    def operation(self, r: Reader, depth: int) -> Operation:
        reader = self.reader
        at = r.pos
        opcode = r.varint("an opcode")
        opdef = op_for_opcode(opcode)
        if opdef is None and opcode in newer.NEW_OPCODES and reader.version in READ_ONLY:
            name, since_version = newer.NEW_OPCODES[opcode]
            if since_version <= reader.version:
                raise newer.unrepresentable(
                    f"the op '{name}' (opcode 0x{opcode:x}, bytecode {version_text(since_version)})", reader.version, at
                )
        if opdef is None or opdef.name in NOT_INSTRUCTIONS:
            if opdef is None and opcode > reader.max_opcode:
                raise BytecodeError(
                    f"unsupported opcode {opcode} for bytecode version {version_text(reader.version)}", at
                )
            raise BytecodeError(f"unknown or unimplemented opcode {opcode}", at)
        if since(opdef.since) > reader.version:
            raise BytecodeError(
                f"unsupported opcode {opcode} ('{opdef.name}', introduced in {opdef.since}) for bytecode version "
                f"{version_text(reader.version)}",
                at,
            )
        location = self.locations.next(r) if self.locations is not None else None
        lay = layout(opdef, reader.version)

        # 1. results
        fixed = sum(1 for d in lay.results if d.arity == "single")
        if lay.variadic:
            n = r.count(f"the number of results of {opdef.name}")
            if n < fixed or (n > fixed and not any(d.arity == "variadic" for d in lay.results)):
                raise r.fail(f"result count mismatch for {opdef.name}: {n} results")
        else:
            n = fixed
        result_types = [reader.type(r.varint("a result type"), r) for _ in range(n)]

        # 2. flags
        flags = r.varint(f"the flags of {opdef.name}") if lay.has_flags else 0

        # 3. attributes
        props: dict[str, A.Attribute] = {}
        inbounds_at = 0
        for adef in opdef.attributes:
            bit = lay.flag_bits.get(adef.name)
            if bit is not None:
                present = bool(flags >> bit & 1)
                if present and not lay.stored(adef) and reader.version not in TEST_VERSIONS:
                    raise r.fail(
                        f"malformed bytecode: flag set for attribute '{adef.name}' which requires {adef.since} "
                        f"but reading {version_text(reader.version)} bytecode"
                    )
                if not present:
                    continue
                if adef.kind == "unit":
                    props[adef.name] = A.UNIT
                    continue
            elif not lay.stored(adef):
                default = default_attr(adef)
                if default is not None:
                    props[adef.name] = default
                continue
            if adef.name == "inbounds":
                inbounds_at = r.pos
            props[adef.name] = reader.inline_attr(adef, r, result_types)

        inbounds = None
        inbounds_since = newer.INBOUNDS_SINCE.get(opdef.name)  # 13.5's, which the op table lacks
        if inbounds_since is not None and has(reader.version, inbounds_since):
            inbounds_at = r.pos
            inbounds = r.take(r.count("the inbounds array"), "the inbounds array")
            if any(inbounds):
                raise newer.unrepresentable(f"{opdef.name} with 'inbounds' set", reader.version, inbounds_at)

        # 4. operands
        values = self.values
        segments: list[int] = []
        if lay.attr_sized:  # per group: an optional one's presence is a flag, a variadic one's size a count
            operands = []
            for odef in opdef.operands:
                if odef.arity == "single":
                    size = 1
                elif odef.arity == "optional":
                    size = flags >> lay.flag_bits[odef.name] & 1
                    if size and not lay.stored(odef):
                        raise r.fail(
                            f"malformed bytecode: flag set for operand '{odef.name}' which requires {odef.since} "
                            f"but reading {version_text(reader.version)} bytecode"
                        )
                else:
                    size = r.count(f"the size of operand group '{odef.name}'")
                segments.append(size)
                self._operands(r, size, operands)
        else:
            if lay.operand_count:
                total = r.count(f"the number of operands of {opdef.name}")
                rest = total - sum(1 for o in opdef.operands if o.arity == "single")
                variable = [o for o in opdef.operands if o.arity != "single"]
                if rest < 0 or (variable and variable[0].arity == "optional" and rest > 1):
                    raise r.fail(f"{opdef.name} cannot take {total} operands")
                segments = [1 if o.arity == "single" else rest for o in opdef.operands]
            else:
                total = len(opdef.operands)
            operands = []
            self._operands(r, total, operands)

        if inbounds is None and isinstance(props.get("inbounds"), A.DenseArrayAttr):  # 13.4's, in the op table
            inbounds = props["inbounds"].values
            if not any(inbounds):
                del props["inbounds"]  # all false is the default: the same IR as a 13.3 file's
        if inbounds is not None and len(inbounds) != len(op_index := _index_group(opdef, segments)):
            raise BytecodeError(
                f"inbounds size ({len(inbounds)}) must match the number of index dimensions ({len(op_index)})",
                inbounds_at,
            )

        # results newer than the file exist (with their one possible type) but are not numbered
        all_types = list(result_types)
        stored = set(id(d) for d in lay.results)
        for d in opdef.results:
            if id(d) not in stored:
                all_types.append(_default_type(d.constraint))
        op = Operation(opdef.name, opdef, operands, all_types, props, location=location)
        if opdef.has_segments:
            op.operand_segments = tuple(segments)

        # 5. regions
        if opdef.regions:
            count = r.varint(f"the number of regions of {opdef.name}")
            if count != len(opdef.regions):
                raise r.fail(f"{opdef.name} has {len(opdef.regions)} regions, the file gives {count}")
            if depth >= MAX_NESTING:
                raise r.fail(f"regions are nested more than {MAX_NESTING} deep")
            for _ in range(count):
                op.add_region(self.region(r, depth + 1))
        values.extend(op.results[: len(result_types)])
        return op

    def _operands(self, r: Reader, count: int, out: list[Value]) -> None:
        values = self.values
        for _ in range(count):
            index = r.varint("an operand index")
            if index >= len(values):
                raise r.fail(f"operand index {index} out of bounds (size={len(values)}) for operand {len(out)}")
            out.append(values[index])

    def region(self, r: Reader, depth: int) -> Region:
        region = Region()
        for _ in range(r.count("the number of blocks of a region", 2)):
            region.add_block(self.block(r, depth))
        return region

    def block(self, r: Reader, depth: int) -> Block:
        reader = self.reader
        values = self.values
        mark = len(values)
        n = r.count("the number of block arguments")
        block = Block([reader.type(r.varint("a block argument type"), r) for _ in range(n)])
        values.extend(block.arguments)
        count = r.count("the number of operations of a block")
        if count == 0:
            raise r.fail("invalid block structure: block is expected to have a terminator operation, but it is empty")
        for _ in range(count):
            block.append(self.operation(r, depth))
        last = block.ops[-1]
        if last.opdef is not None and "Terminator" not in last.opdef.traits:
            raise r.fail(
                "invalid block structure: block is expected to have a terminator operation, but the last operation "
                f"'{last.name}' is not a terminator"
            )
        del values[mark:]
        return block


def _index_group(opdef: OpDef, segments: list[int]) -> range:
    """The positions of the `index` operands (the view ops that carry `inbounds`)."""
    start = 0
    for odef, size in zip(opdef.operands, segments, strict=False):
        if odef.name == "index":
            return range(start, start + size)
        start += size
    return range(0)


def _signed(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def _u32(value: int) -> int:
    return value & 0xFFFFFFFF


__all__ = ["BytecodeError", "read_bytecode", "read_version"]
