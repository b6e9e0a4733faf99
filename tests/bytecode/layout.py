"""The container of a bytecode file, decoded by a small decoder written from the ground-truth
doc (/work/shared/spec/bytecode-ground-truth.md §1-§5) alone, not from our reader: the round
trip tests compare NVIDIA's files and ours section by section with it, and the fuzzer finds
the length and count fields it corrupts with it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

STRING, FUNC, DEBUG, CONSTANT, TYPE, GLOBAL, PRODUCER = 1, 2, 3, 4, 5, 6, 7
SECTION_NAMES = {0: "End", 1: "String", 2: "Func", 3: "Debug", 4: "Constant", 5: "Type", 6: "Global", 7: "Producer"}


class _Cursor:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    def byte(self) -> int:
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        value = shift = 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value

    def fixed(self, size: int) -> bytes:
        self.pos += size
        return self.data[self.pos - size : self.pos]

    def align(self, alignment: int) -> None:
        self.pos += -self.pos % alignment


@dataclass
class Decoded:
    version: tuple[int, int]
    order: list[int] = field(default_factory=list)
    payloads: dict[int, bytes] = field(default_factory=dict)
    strings: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)  # canonical forms, indices resolved
    constants: list[bytes] = field(default_factory=list)
    debug_indices: list[int] = field(default_factory=list)
    debug_attr_tags: list[int] = field(default_factory=list)
    functions: list[dict] = field(default_factory=list)


def _table(payload: bytes, width: int) -> list[bytes]:
    """`count, pad to width, count offsets (width bytes LE), blob` -> the blob's items."""
    c = _Cursor(payload)
    n = c.varint()
    if n == 0:
        return []
    c.align(width)
    offsets = [int.from_bytes(c.fixed(width), "little") for _ in range(n)]
    blob = payload[c.pos :]
    return [blob[start : offsets[i + 1] if i + 1 < n else len(blob)] for i, start in enumerate(offsets)]


_SCALARS = {
    0: "i1", 1: "i8", 2: "i16", 3: "i32", 4: "i64", 5: "f16", 6: "bf16", 7: "f32", 8: "tf32", 9: "f64",
    10: "f8E4M3FN", 11: "f8E5M2", 0x11: "token", 0x12: "f8E8M0FNU", 0x13: "f4E2M1FN", 0x16: "i4",
}  # fmt: skip


def _canonical_type(entries: list[bytes], index: int, version: tuple[int, int]) -> str:
    c = _Cursor(entries[index])
    tag = c.varint()

    def ref() -> str:
        return _canonical_type(entries, c.varint(), version)

    def array(size: int) -> list[int]:
        return [int.from_bytes(c.fixed(size), "little", signed=True) for _ in range(c.varint())]

    if tag in _SCALARS:
        return _SCALARS[tag]
    if tag == 0x0C:
        return f"ptr<{ref()}>"
    if tag == 0x0D:
        element = ref()
        return f"tile<{array(8)}x{element}>"
    if tag == 0x0E:
        element = ref()
        return f"tensor_view<{array(8)}x{element}, strides={array(8)}>"
    if tag == 0x0F:
        flags = c.varint() if version >= (13, 3) else None
        tile, view, dims = array(4), ref(), array(4)
        present = flags & 1 if flags is not None else c.byte()
        padding = c.varint() if present else None
        return f"partition_view<{tile}, {view}, {dims}, padding={padding}>"
    if tag == 0x10:
        inputs = [ref() for _ in range(c.varint())]
        results = [ref() for _ in range(c.varint())]
        return f"({', '.join(inputs)}) -> ({', '.join(results)})"
    raise AssertionError(f"type tag {tag:#x} is not used by the samples; extend this decoder")


def _tagged(c: _Cursor, d: Decoded) -> object:
    """A self-contained attribute, canonical: strings and types resolved, and a Bool (tag 3,
    cuTile) equal to an i1 Integer (tag 1, NVIDIA's C++ writer)."""
    tag = c.varint()
    if tag == 1:
        t = d.types[c.varint()]
        return ("bool", c.byte()) if t == "i1" else ("int", t, c.varint())
    if tag == 3:
        return ("bool", c.byte())
    if tag == 5:
        return ("str", d.strings[c.varint()])
    if tag in (10, 11):
        return (tag, tuple((d.strings[c.varint()], _tagged(c, d)) for _ in range(c.varint())))
    raise AssertionError(f"attribute tag {tag} is not used by the samples' hints; extend this decoder")


def decode(data: bytes) -> Decoded:
    assert data[:8] == b"\x7fTileIR\x00"
    d = Decoded(version=(data[8], data[9]))
    c = _Cursor(data, 12)
    while True:
        head = c.byte()
        section = head & 0x7F
        d.order.append(section)
        if section == 0:
            assert c.pos == len(data), "the End marker is the last byte"
            break
        length = c.varint()
        if head & 0x80:
            c.align(c.varint())
        d.payloads[section] = c.fixed(length)
    d.strings = [s.decode() for s in _table(d.payloads[STRING], 4)]
    entries = _table(d.payloads[TYPE], 4)
    d.types = [_canonical_type(entries, i, d.version) for i in range(len(entries))]
    if CONSTANT in d.payloads:
        for entry in _table(d.payloads[CONSTANT], 8):
            e = _Cursor(entry)
            d.constants.append(e.fixed(e.varint()))
    if DEBUG in d.payloads:
        p = _Cursor(d.payloads[DEBUG])
        scopes = p.varint()
        p.align(4)
        p.fixed(4 * scopes)
        count = p.varint()
        p.align(8)
        d.debug_indices = [struct.unpack("<Q", p.fixed(8))[0] for _ in range(count)]
        attrs = _table(d.payloads[DEBUG][p.pos :], 4) if p.pos < len(d.payloads[DEBUG]) else []
        d.debug_attr_tags = [_Cursor(a).varint() for a in attrs]
    f = _Cursor(d.payloads[FUNC])
    for _ in range(f.varint()):
        fn: dict = {"name": d.strings[f.varint()], "signature": d.types[f.varint()]}
        fn["flags"] = f.byte()
        fn["location"] = f.varint()
        fn["hints"] = _tagged(f, d) if fn["flags"] & 6 == 6 else None
        fn["body"] = f.fixed(f.varint())
        d.functions.append(fn)
    fn_end = f.pos
    d.payloads[FUNC + 100] = d.payloads[FUNC][fn_end:]  # what follows the last body
    return d


# ------------------------------------------------------------------------------------------------
# The length and count fields of a file (for the fuzzer)


@dataclass(frozen=True, slots=True)
class Field:
    pos: int  # offset in the file
    size: int  # bytes it takes now
    fixed: bool  # a fixed-width little-endian offset, else a varint
    what: str


def fields(data: bytes) -> list[Field]:
    """The fields of a well-formed file that say how much follows or where something is:
    section lengths and alignments, table counts and offsets, the function table's indices
    and body lengths, the debug section's counts and offsets."""
    found: list[Field] = []
    c = _Cursor(data, 12)

    def varint(base: int, cursor: _Cursor, what: str) -> int:
        start = cursor.pos
        value = cursor.varint()
        found.append(Field(base + start, cursor.pos - start, False, what))
        return value

    def table(base: int, payload: bytes, width: int, what: str) -> _Cursor:
        t = _Cursor(payload)
        n = varint(base, t, f"{what} count")
        if n:
            t.align(width)
            for i in range(n):
                found.append(Field(base + t.pos, width, True, f"{what} offset {i}"))
                t.pos += width
        return t

    while True:
        head = c.byte()
        if head & 0x7F == 0:
            break
        section = head & 0x7F
        length = varint(0, c, f"section {section} length")
        if head & 0x80:
            c.align(varint(0, c, f"section {section} alignment"))
        base, payload = c.pos, c.fixed(length)
        if section in (STRING, TYPE):
            table(base, payload, 4, SECTION_NAMES[section])
        elif section == CONSTANT:
            table(base, payload, 8, "constants")
        elif section == DEBUG:
            p = table(base, payload, 4, "debug scopes")
            count = varint(base, p, "debug index count")
            p.align(8)
            p.pos += 8 * count
            if p.pos < len(payload):
                table(base + p.pos, payload[p.pos :], 4, "debug attributes")
        elif section == FUNC:
            f = _Cursor(payload)
            for i in range(varint(base, f, "function count")):
                varint(base, f, f"function {i} name")
                varint(base, f, f"function {i} signature")
                flags = f.byte()
                varint(base, f, f"function {i} location")
                if flags & 6 == 6:
                    _skip_hints(f)
                body = varint(base, f, f"function {i} body length")
                f.pos += body
        elif section == GLOBAL:
            g = _Cursor(payload)
            varint(base, g, "global count")
    return found


def _skip_hints(c: _Cursor) -> None:
    """Step over a tagged hints attribute (Dictionary/OptimizationHints of Integer, Bool,
    String values: what the samples and our writer put there)."""
    tag = c.varint()
    if tag == 1:
        c.varint()
        c.varint()  # an i1 value is one byte < 0x80: the same as a one-byte varint
    elif tag == 3:
        c.byte()
    elif tag == 5:
        c.varint()
    elif tag in (10, 11):
        for _ in range(c.varint()):
            c.varint()
            _skip_hints(c)
    else:
        raise AssertionError(f"attribute tag {tag} in hints; extend _skip_hints")


@dataclass(frozen=True, slots=True)
class SectionSpan:
    section: int
    head: int  # the id byte, with the alignment flag
    alignment: int
    length_field: tuple[int, int]  # (offset, size) of the length varint
    payload: tuple[int, int]  # [start, end) in the file


def section_spans(data: bytes) -> list[SectionSpan]:
    spans = []
    c = _Cursor(data, 12)
    while True:
        head = c.byte()
        if head & 0x7F == 0:
            return spans
        at = c.pos
        length = c.varint()
        field_size = c.pos - at
        alignment = 1
        if head & 0x80:
            alignment = c.varint()
            c.align(alignment)
        spans.append(SectionSpan(head & 0x7F, head, alignment, (at, field_size), (c.pos, c.pos + length)))
        c.pos += length


def rebuild(data: bytes, payloads: list[bytes]) -> bytes:
    """The file with each section's payload replaced (in file order), lengths and alignment
    padding recomputed as a writer would."""
    out = bytearray(data[:12])
    for span, payload in zip(section_spans(data), payloads):
        out.append(span.head)
        out += encode_varint(len(payload))
        if span.head & 0x80:
            out += encode_varint(span.alignment)
            out += b"\xcb" * (-len(out) % span.alignment)
        out += payload
    out.append(0)
    return bytes(out)


def splice(data: bytes, pos: int, remove: int, insert: bytes) -> bytes:
    """Replace `remove` bytes at `pos` (inside a section payload) by `insert`, fixing up the
    section's length and, inside a function body, the body's length, so that the reader
    meets the change where it is rather than failing the section scan."""
    spans = section_spans(data)
    payloads = [data[s.payload[0] : s.payload[1]] for s in spans]
    for i, span in enumerate(spans):
        start, end = span.payload
        if not start <= pos < end:
            continue
        remove = min(remove, end - pos)
        rel = pos - start
        payload = payloads[i][:rel] + insert + payloads[i][rel + remove :]
        if span.section == FUNC:
            for f in fields(data):
                if not (f.what.endswith("body length") and start <= f.pos < end):
                    continue
                length = _Cursor(data, f.pos).varint()
                body = f.pos + f.size
                if body <= pos < body + length:
                    at = f.pos - start
                    new_length = encode_varint(length - remove + len(insert))
                    payload = payload[:at] + new_length + payload[at + f.size :]
        payloads[i] = payload
        return rebuild(data, payloads)
    raise ValueError(f"offset {pos} is in no section payload")


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if not value:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)
