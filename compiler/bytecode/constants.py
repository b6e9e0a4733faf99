"""Constant-section payloads: MLIR's `DenseElementsAttr` raw buffer.

Each element takes its bit width rounded up to whole bytes (i4 and f4E2M1FN one byte, tf32
three), little-endian; i1 is packed eight to a byte, low bit first. A buffer holding a single
element is a splat; for i1 a single byte 0x00 or 0xFF is (MLIR stores a true splat as 0xFF).
"""

from __future__ import annotations

import struct

from ..ir import attributes as A
from ..ir import types as T

_STRUCT = {1: "B", 2: "H", 4: "I", 8: "Q"}


def element_bits(element: T.Type) -> int | None:
    """The element's bit width as MLIR's dense storage counts it, or None when the element
    type cannot be stored (pointers and other non-scalars)."""
    if isinstance(element, T.IntegerType):
        return element.width
    if isinstance(element, T.FloatType):
        return element.format.width
    return None


def dense_raw_data(attr: A.DenseElementsAttr) -> bytes:
    """The raw buffer NVIDIA's writer stores for a dense constant (preceded by its length)."""
    t = attr.type
    assert isinstance(t, T.TileType)
    bits = element_bits(t.element)
    if bits is None:
        raise ValueError(f"unsupported DenseElementsAttr element type: {t.element}")
    values = attr.values
    if bits == 1:
        if attr.splat:
            data = b"\xff" if values and values[0] else b"\x00"
        else:
            packed = bytearray((len(values) + 7) // 8)
            for i, v in enumerate(values):
                if v:
                    packed[i >> 3] |= 1 << (i & 7)
            data = bytes(packed)
    else:
        size = (bits + 7) // 8
        mask = (1 << bits) - 1
        if size in _STRUCT:
            data = struct.pack(f"<{len(values)}{_STRUCT[size]}", *(v & mask for v in values))
        else:
            data = b"".join((v & mask).to_bytes(size, "little") for v in values)
    return _varint(len(data)) + data


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def decode_dense(raw: bytes, t: T.TileType) -> A.DenseElementsAttr | None:
    """A dense constant of type `t` from its raw buffer; None when the buffer's size does not
    fit the type (neither one element nor all of them)."""
    bits = element_bits(t.element)
    if bits is None:
        return None
    n = t.num_elements
    if bits == 1:
        if len(raw) == 1 and raw[0] in (0x00, 0xFF):
            return A.DenseElementsAttr(t, (1 if raw[0] else 0,), splat=True)
        if len(raw) * 8 != ((n + 7) // 8) * 8:
            return None
        values = tuple((raw[i >> 3] >> (i & 7)) & 1 for i in range(n))
        return A.DenseElementsAttr(t, values, splat=False)
    size = (bits + 7) // 8
    if len(raw) == size:
        count, splat = 1, True
    elif len(raw) == size * n:
        count, splat = n, False
    else:
        return None
    if size in _STRUCT:
        raw_values = struct.unpack(f"<{count}{_STRUCT[size]}", raw)
    else:
        raw_values = tuple(int.from_bytes(raw[i * size : (i + 1) * size], "little") for i in range(count))
    mask = (1 << bits) - 1
    if isinstance(t.element, T.IntegerType):
        sign = 1 << (bits - 1)
        values = tuple(((v & mask) ^ sign) - sign for v in raw_values)
    else:
        values = tuple(v & mask for v in raw_values)
    return A.DenseElementsAttr(t, values, splat=splat)
