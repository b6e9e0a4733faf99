"""The bytecode container as NVIDIA's tools write and read it: constants, versions, and the
primitive encoders and a bounds-checked decoder.

Facts come from NVIDIA's `lib/Bytecode/` (13.3) and from real files; where the spec text
(`001_*`, `002_*`) disagrees, the implementation wins (see `shared/spec/bytecode-ground-truth.md`):

* the version is 4 fixed bytes (u8 major, u8 minor, u16 little-endian tag), not varints;
* varints are plain unsigned LEB128 (1-10 bytes; over-long forms are accepted, as NVIDIA's
  reader accepts them); signed varints are ZigZag + LEB128;
* padding bytes are 0xCB, and section alignment is measured from the start of the file;
* a file ends with a single 0x00 byte that must be its last byte.
"""

from __future__ import annotations

import struct
from enum import IntEnum

MAGIC = b"\x7fTileIR\x00"
MLIR_MAGIC = b"ML\xefR"
PAD_BYTE = 0xCB

Version = tuple[int, int]

# Versions this project reads and writes in full, and the test-only versions that
# `cuda-tile-translate` knows in builds with TILE_IR_INCLUDE_TESTS (used by the conformance
# tests of op evolution; never written by `tileir asm`).
SUPPORTED: tuple[Version, ...] = ((13, 1), (13, 2), (13, 3), (13, 4))
TEST_VERSIONS: tuple[Version, ...] = ((250, 0), (250, 1))
# Newer versions that are read as far as their encodings are known (compiler.bytecode.newer).
READ_ONLY: tuple[Version, ...] = ((13, 5),)
# The versions NVIDIA's public `cuda-tile-translate` (13.3) reads and writes. `tileir translate`
# stands in for that tool, which the conformance suite checks (its version list and messages
# included), so it keeps to them; our other commands take every SUPPORTED version.
TRANSLATE_VERSIONS: tuple[Version, ...] = ((13, 1), (13, 2), (13, 3))
CURRENT: Version = (13, 3)
# What `cuda-tile-translate` writes when no version is asked for.
DEFAULT_WRITE: Version = CURRENT
# Where no version is asked for and none is fixed (`tileir asm`, the tileiras backend): the
# oldest of these that expresses the module (`writer.oldest_version`), 13.4 for its ops only.
AUTO_WRITE: tuple[Version, ...] = tuple(v for v in SUPPORTED if v >= DEFAULT_WRITE)


def parse_version(text: str) -> Version | None:
    """`"13.1"` -> (13, 1); None when it is not MAJOR.MINOR (a third `.0` part is allowed)."""
    parts = text.strip().split(".")
    if len(parts) == 3 and parts[2] == "0":
        parts = parts[:2]
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    major, minor = int(parts[0]), int(parts[1])
    if major > 255 or minor > 255:
        return None
    return major, minor


def version_text(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


_SINCE: dict[str, Version] = {}  # the few `since` strings of the op table, read once each


def since(text: str) -> Version:
    """An op-table `since` string as a Version."""
    version = _SINCE.get(text)
    if version is None:
        major, _, minor = text.partition(".")
        version = _SINCE[text] = (int(major), int(minor or 0))
    return version


def branched(introduced: Version, version: Version) -> bool:
    """Whether `version` is one of the test-only 250.x versions and `introduced` 13.4 or later:
    those versions branch from 13.3 (NVIDIA's 13.3 sources), so they lack what 13.4 added,
    though they number higher."""
    return version >= (250, 0) and (13, 4) <= introduced < (250, 0)


def has(version: Version, introduced: Version) -> bool:
    """Whether a file of `version` holds what version `introduced` added."""
    return introduced <= version and not branched(introduced, version)


def supported_range(versions: tuple[Version, ...] = SUPPORTED) -> str:
    return f"[{version_text(versions[0])} - {version_text(versions[-1])}]"


class Section(IntEnum):
    END = 0
    STRING = 1
    FUNC = 2
    DEBUG = 3
    CONSTANT = 4
    TYPE = 5
    GLOBAL = 6
    PRODUCER = 7  # 13.3


# The alignment a reader demands of each section (the flag must be set, value a multiple).
SECTION_ALIGNMENT = {Section.STRING: 4, Section.FUNC: 8, Section.DEBUG: 8, Section.CONSTANT: 8, Section.TYPE: 4}


class TypeTag(IntEnum):
    I1 = 0
    I8 = 1
    I16 = 2
    I32 = 3
    I64 = 4
    F16 = 5
    BF16 = 6
    F32 = 7
    TF32 = 8
    F64 = 9
    F8E4M3FN = 10
    F8E5M2 = 11
    POINTER = 12
    TILE = 13
    TENSOR_VIEW = 14
    PARTITION_VIEW = 15
    FUNCTION = 16
    TOKEN = 17
    F8E8M0FNU = 18  # 13.2
    F4E2M1FN = 19  # 13.3
    GATHER_SCATTER_VIEW = 20  # 13.3
    STRIDED_VIEW = 21  # 13.3
    I4 = 22  # 13.3


# Scalar type tags by the IR's spelling, with the name NVIDIA's messages use. (The version
# that introduced each is `compiler.ir.types.ELEMENT_TYPE_SINCE`.)
SCALAR_TAGS: dict[str, tuple[TypeTag, str]] = {
    "i1": (TypeTag.I1, "Int1"),
    "i4": (TypeTag.I4, "Int4"),
    "i8": (TypeTag.I8, "Int8"),
    "i16": (TypeTag.I16, "Int16"),
    "i32": (TypeTag.I32, "Int32"),
    "i64": (TypeTag.I64, "Int64"),
    "f16": (TypeTag.F16, "Float16"),
    "bf16": (TypeTag.BF16, "BFloat16"),
    "f32": (TypeTag.F32, "Float32"),
    "tf32": (TypeTag.TF32, "TFloat32"),
    "f64": (TypeTag.F64, "Float64"),
    "f8E4M3FN": (TypeTag.F8E4M3FN, "Float8E4M3FN"),
    "f8E5M2": (TypeTag.F8E5M2, "Float8E5M2"),
    "f8E8M0FNU": (TypeTag.F8E8M0FNU, "Float8E8M0FNU"),
    "f4E2M1FN": (TypeTag.F4E2M1FN, "Float4E2M1FN"),
}
SCALAR_BY_TAG: dict[int, str] = {tag: name for name, (tag, _) in SCALAR_TAGS.items()}
VIEW_TAG_SINCE = {TypeTag.GATHER_SCATTER_VIEW: (13, 3), TypeTag.STRIDED_VIEW: (13, 3)}
PADDING_VALUES = ("zero", "neg_zero", "nan", "pos_inf", "neg_inf")


class AttrTag(IntEnum):
    INTEGER = 1
    FLOAT = 2
    BOOL = 3
    TYPE = 4
    STRING = 5
    ARRAY = 6
    DENSE_ELEMENTS = 7
    DIV_BY = 8
    SAME_ELEMENTS = 9
    DICTIONARY = 10
    OPTIMIZATION_HINTS = 11
    BOUNDED = 12
    BYTECODE_TEST_VALUE = 200  # test builds only


class DebugTag(IntEnum):
    UNKNOWN = 0
    COMPILE_UNIT = 1
    FILE = 2
    LEXICAL_BLOCK = 3
    LOC = 4
    SUBPROGRAM = 5
    CALL_SITE = 6


# Function-table entry flags.
FUNC_PRIVATE = 0x01  # never written; ignored on read
FUNC_KERNEL = 0x02
FUNC_HAS_HINTS = 0x04

INT64_MIN = -(1 << 63)
MASK64 = (1 << 64) - 1


# ------------------------------------------------------------------------------------------------
# Encoding


class Writer:
    """An append-only byte buffer with the format's primitive encodings."""

    __slots__ = ("buf", "alignment")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.alignment = 1  # the largest alignment used inside (becomes the section's)

    def __len__(self) -> int:
        return len(self.buf)

    def byte(self, value: int) -> None:
        self.buf.append(value & 0xFF)

    def varint(self, value: int) -> None:
        value &= MASK64
        if value < 0x80:
            self.buf.append(value)
            return
        out = self.buf
        while True:
            low = value & 0x7F
            value >>= 7
            if value:
                out.append(low | 0x80)
            else:
                out.append(low)
                return

    def svarint(self, value: int) -> None:
        """ZigZag: the sign goes to the low bit (value is taken as a 64-bit two's complement)."""
        value &= MASK64
        signed = value - (1 << 64) if value >> 63 else value
        self.varint(((value << 1) ^ (MASK64 if signed < 0 else 0)) & MASK64)

    def le(self, value: int, size: int) -> None:
        self.buf += (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def raw(self, data: bytes | bytearray | memoryview) -> None:
        self.buf += data

    def array(self, values, size: int) -> None:
        """A varint count, then fixed-width little-endian elements (i32 or i64 arrays)."""
        self.varint(len(values))
        fmt = f"<{len(values)}{'q' if size == 8 else 'i'}"
        self.buf += struct.pack(fmt, *values)

    def align(self, alignment: int) -> None:
        if alignment < 2:
            return
        self.buf += bytes([PAD_BYTE]) * (-len(self.buf) % alignment)
        self.alignment = max(self.alignment, alignment)


def append_section(out: Writer, section: Section, payload: Writer) -> None:
    """Section header (id with the alignment bit, length, alignment, padding) and payload.
    The padding aligns the payload within the whole file, as NVIDIA's writer does."""
    alignment = payload.alignment
    out.byte((section & 0x7F) | (0x80 if alignment > 1 else 0))
    out.varint(len(payload.buf))
    if alignment > 1:
        out.varint(alignment)
        out.buf += bytes([PAD_BYTE]) * (-len(out.buf) % alignment)
    out.buf += payload.buf


# ------------------------------------------------------------------------------------------------
# Decoding


class BytecodeError(Exception):
    """The bytes are not valid Tile IR bytecode. `offset` is the byte offset in the file where
    decoding failed (None when the problem is not at one place)."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        if self.offset is None:
            return self.message
        return f"at byte {self.offset} (0x{self.offset:x}): {self.message}"


class Reader:
    """Reads one slice `[start, end)` of the file. Every read is checked against the bytes
    that remain, and counts are checked against what the remaining bytes could hold before
    anything is allocated for them, so a corrupt length can neither overrun nor explode."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, start: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = start
        self.end = len(data) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def fail(self, message: str, offset: int | None = None) -> BytecodeError:
        return BytecodeError(message, self.pos if offset is None else offset)

    def byte(self, what: str) -> int:
        pos = self.pos
        if pos >= self.end:
            raise self.fail(f"unexpected end of data while reading {what}")
        self.pos = pos + 1
        return self.data[pos]

    def varint(self, what: str) -> int:
        data = self.data
        pos = self.pos
        if pos < self.end:
            b = data[pos]
            if b < 0x80:
                self.pos = pos + 1
                return b
        start = pos
        result = 0
        shift = 0
        while True:
            if pos >= self.end:
                raise self.fail(f"unexpected end of data while reading {what}", start)
            if shift > 63:
                raise self.fail(f"varint of {what} is longer than 10 bytes", start)
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        self.pos = pos
        return result & MASK64

    def svarint(self, what: str) -> int:
        """A ZigZag varint as a signed 64-bit value."""
        u = self.varint(what)
        value = (u >> 1) ^ -(u & 1)
        return value

    def count(self, what: str, item_size: int = 1) -> int:
        """A varint count of items that take at least `item_size` bytes each."""
        start = self.pos
        n = self.varint(what)
        if n * item_size > self.end - self.pos:
            raise self.fail(
                f"{what} ({n}) cannot fit in the {self.end - self.pos} bytes that remain",
                start,
            )
        return n

    def le(self, size: int, what: str) -> int:
        pos = self.pos
        if pos + size > self.end:
            raise self.fail(f"unexpected end of data while reading {what}")
        self.pos = pos + size
        return int.from_bytes(self.data[pos : pos + size], "little")

    def take(self, size: int, what: str) -> bytes:
        pos = self.pos
        if size < 0 or pos + size > self.end:
            raise self.fail(f"{what} needs {size} bytes but only {self.end - pos} remain")
        self.pos = pos + size
        return self.data[pos : pos + size]

    def array(self, size: int, what: str) -> tuple[int, ...]:
        """A varint count, then that many little-endian i32 (size 4) or i64 (size 8) values."""
        n = self.count(what, size)
        raw = self.take(n * size, what)
        return struct.unpack(f"<{n}{'q' if size == 8 else 'i'}", raw)

    def pad(self, alignment: int, what: str) -> None:
        """Skip the padding to `alignment` (measured from the file start; any byte value is
        accepted, as NVIDIA's reader accepts any)."""
        skip = -self.pos % alignment
        if self.pos + skip > self.end:
            raise self.fail(f"unexpected end of data in the padding before {what}")
        self.pos += skip
