"""The element list of a dense constant, `<f32: [[1.0, 2.0], [3.0, 4.0]]>`, both ways.

Printing follows what `cuda-tile-opt` prints: the cuda_tile printer prints the builtin
`DenseElementsAttr` and strips `dense<` and ` : type` around it, so the body is MLIR's
`printDenseIntOrFPElementsAttr`:

* A splat prints as its one value.  MLIR detects splats when it builds the attribute
  (all elements with the same bits, or a single-element tile), so `[1.0, 1.0]` prints
  `1.000000e+00`, and so does `[3.14]` for a `tile<1xf32>`.
* More than 100 elements that are not a splat print as a hex string of the raw
  little-endian data, `"0x0000803F..."` (MLIR's default for
  `--mlir-print-elementsattrs-with-hex-if-larger`).  Each element takes whole bytes:
  i1 one byte (0 or 1; LLVM from February 2026 on, before that i1 was bit-packed),
  tf32 three bytes, f4E2M1FN one byte.
* Otherwise nested brackets by shape, `[[1, 2], [4, 5]]`; integers as signed decimals,
  i1 as `true`/`false`, floats via `compiler.ir.floats.format_float`.

Parsing follows the cuda_tile dialect's `parseDenseTypedElementsAttr`
(lib/Dialect/CudaTile/IR/CudaTile.cpp) and reports its error texts:

* an element is an integer (decimal or `0x` hex, optional `-`; i1 also `true`/`false`)
  within the union of the signed and unsigned ranges of the width, or a float literal
  as `compiler.ir.floats.parse_float_token` reads it;
* every element of a list must have the same shape ("tensor literal is invalid; ranks
  are not consistent between elements");
* a scalar is a splat of any shape; a list must have exactly the tile's shape
  ("inferred shape of elements literal ([3]) does not match type ([8])").

As an extension (cuda-tile-opt cannot read it back) the whole literal may be the hex
string the printer writes for large constants.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import floats
from ..ir.attributes import DenseElementsAttr
from ..ir.frozen import Frozen, _set
from ..ir.types import FLOAT_FORMATS, FloatType, IntegerType, Type

__all__ = [
    "HEX_ELEMENT_LIMIT",
    "DenseLiteralResult",
    "check_element",
    "dense_values_from_literals",
    "element_byte_width",
    "format_dense_body",
    "format_element",
    "parse_dense_literal",
    "raw_bytes",
    "values_from_raw_bytes",
]

# Non-splat constants with more elements than this print as a hex string.
HEX_ELEMENT_LIMIT = 100

RANKS_INCONSISTENT = "tensor literal is invalid; ranks are not consistent between elements"
EXPECTED_INTEGER = "expected integer value"
INTEGER_TOO_LARGE = "integer value too large"
INTEGER_OUT_OF_RANGE = "integer constant out of range for type"
HEX_STRING_EXPECTED = "expected string containing hex digits starting with `0x`"
HEX_SIZE_INVALID = "elements hex data size is invalid for provided type"
BAD_ELEMENT_TYPE = (
    "expect element type to be one of i1 or i8 or i16 or i32 or i64 or f16 or bf16 or f32 "
    "or f64 or tf32 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN values"
)

_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1


# ---- elements ---------------------------------------------------------------------


def _bit_width(element: Type) -> int | None:
    if isinstance(element, IntegerType):
        return element.width
    if isinstance(element, FloatType) and element.name in FLOAT_FORMATS:
        return FLOAT_FORMATS[element.name].width
    return None


def element_byte_width(element: Type) -> int:
    """Bytes one element takes in a dense attribute's raw data (whole bytes each)."""
    width = _bit_width(element)
    return 8 if width is None else (width + 7) // 8


def _canonical(value: int, element: Type) -> int:
    """The stored form of a value: i1 as 0/1, other integers signed, floats as bits."""
    if isinstance(element, IntegerType):
        if element.width == 1:
            return 1 if value & 1 else 0
        return floats.wrap_signed(value, element.width)
    width = _bit_width(element)
    return value & ((1 << width) - 1) if width else value


def format_element(value: int, element: Type) -> str:
    """One element as MLIR prints it."""
    if isinstance(element, IntegerType):
        if element.width == 1:
            return "true" if value & 1 else "false"
        return str(floats.wrap_signed(value, element.width))
    if isinstance(element, FloatType) and element.name in FLOAT_FORMATS:
        return floats.format_float(value, element.name)
    return str(value)


# ---- raw data ---------------------------------------------------------------------


def raw_bytes(values: Sequence[int], element: Type) -> bytes:
    """The little-endian raw data of the values (one element's worth for a splat),
    as MLIR's `DenseElementsAttr::getRawData` has it."""
    nbytes = element_byte_width(element)
    width = _bit_width(element) or nbytes * 8
    mask = (1 << width) - 1
    if isinstance(element, IntegerType) and element.width == 1:
        return bytes(1 if v & 1 else 0 for v in values)
    if nbytes == 1:
        return bytes(v & mask for v in values)
    return b"".join((v & mask).to_bytes(nbytes, "little") for v in values)


def values_from_raw_bytes(data: bytes, element: Type, num_elements: int) -> tuple[tuple[int, ...], bool] | None:
    """Values and splat flag from raw data holding `num_elements` elements or one
    (a splat); None if the size fits neither."""
    nbytes = element_byte_width(element)
    if len(data) == nbytes:
        count = 1
    elif len(data) == nbytes * num_elements:
        count = num_elements
    else:
        return None
    width = _bit_width(element) or nbytes * 8
    mask = (1 << width) - 1
    values = tuple(
        _canonical(int.from_bytes(data[i * nbytes : (i + 1) * nbytes], "little") & mask, element) for i in range(count)
    )
    return _collapse(values)


def _collapse(values: tuple[int, ...]) -> tuple[tuple[int, ...], bool]:
    """MLIR's splat detection: all elements the same bits -> one value."""
    if values and all(v == values[0] for v in values):
        return (values[0],), True
    return values, False


# ---- printing ---------------------------------------------------------------------


def _nested(items: list[str], shape: Sequence[int]) -> str:
    if len(shape) <= 1:
        return "[" + ", ".join(items) + "]"
    step = len(items) // shape[0] if shape[0] else 0
    parts = [_nested(items[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def format_dense_body(attr: DenseElementsAttr, *, hex_limit: int | None = HEX_ELEMENT_LIMIT) -> str:
    """What MLIR prints between `<elt: ` and `>` (or inside `dense<...>`).

    `hex_limit=None` never uses the hex string form.
    """
    element = attr.element
    values = tuple(_canonical(v, element) for v in attr.values)
    if not values:
        return ""
    if attr.splat or len(values) == 1 or all(v == values[0] for v in values):
        return format_element(values[0], element)
    shape = getattr(attr.type, "shape", None)
    count = 1
    for d in shape or (len(values),):
        count *= d if isinstance(d, int) else 0
    if shape is None or count != len(values):
        shape = (len(values),)  # malformed or unshaped: print what there is, flat
    if hex_limit is not None and len(values) > hex_limit:
        return '"0x' + raw_bytes(values, element).hex().upper() + '"'
    items = [format_element(v, element) for v in values]
    return _nested(items, shape)


# ---- parsing ----------------------------------------------------------------------


class DenseLiteralResult(Frozen):
    """The outcome of reading a dense literal.

    `values` is None on error.  `error` is cuda-tile-opt's message; `note` the note MLIR
    attaches (for a decimal integer where a float is expected); `path` the indices into
    the nested literal of the element the error is about (`()` for the whole literal),
    so a caller can point at its span.
    """

    __slots__ = ("values", "splat", "error", "note", "path")
    values: tuple[int, ...] | None
    splat: bool
    error: str | None
    note: str | None
    path: tuple[int, ...]

    def __init__(
        self,
        values: tuple[int, ...] | None,
        splat: bool = False,
        error: str | None = None,
        note: str | None = None,
        path: tuple[int, ...] = (),
    ) -> None:
        _set(self, "values", values)
        _set(self, "splat", splat)
        _set(self, "error", error)
        _set(self, "note", note)
        _set(self, "path", path)


class _LiteralError(Exception):
    def __init__(self, message: str, path: tuple[int, ...], note: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.note = note


def _int_element(text: str, width: int, path: tuple[int, ...]) -> int:
    text = text.strip()
    if text in ("true", "false"):
        if width != 1:
            raise _LiteralError(EXPECTED_INTEGER, path)
        return 1 if text == "true" else 0
    value = floats.parse_integer_literal(text)
    if value is None:
        raise _LiteralError(EXPECTED_INTEGER, path)
    # MLIR's parseInteger reads into an int64_t and refuses only what does not come back out
    # of it: 2^63 .. 2^64-1 are taken, as their 64 bits (2^64-1 is -1), as for narrower types.
    if not _INT64_MIN <= value <= _UINT64_MAX:
        raise _LiteralError(INTEGER_TOO_LARGE, path)
    if not floats.integer_in_range(value, width):
        raise _LiteralError(INTEGER_OUT_OF_RANGE, path)
    if width == 1:
        return 1 if value else 0
    return floats.wrap_signed(value, width)


def _float_element(text: str, name: str, path: tuple[int, ...]) -> int:
    bits, error = floats.parse_float_token(text, name)
    if bits is None:
        note = floats.DECIMAL_INT_FOR_FLOAT_NOTE if error == floats.DECIMAL_INT_FOR_FLOAT else None
        raise _LiteralError(error or floats.EXPECTED_FLOAT_LITERAL, path, note)
    return bits


def check_element(text: str, element: Type) -> tuple[str | None, str | None]:
    """(error, note) for one element literal of a dense constant of `element` values, as
    cuda-tile-opt reports it while reading the literal; (None, None) when it is valid."""
    try:
        if isinstance(element, IntegerType):
            _int_element(text, element.width, ())
        elif isinstance(element, FloatType) and element.name in FLOAT_FORMATS:
            _float_element(text, element.name, ())
    except _LiteralError as e:
        return e.message, e.note
    return None, None


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _from_hex_string(text: str, element: Type, shape: tuple[int, ...]) -> DenseLiteralResult:
    body = text[1:-1] if len(text) >= 2 and text.endswith('"') else text[1:]
    if not body.startswith("0x"):
        return DenseLiteralResult(None, error=HEX_STRING_EXPECTED)
    try:
        data = bytes.fromhex(body[2:])
    except ValueError:
        return DenseLiteralResult(None, error=HEX_STRING_EXPECTED)
    count = 1
    for d in shape:
        count *= d
    decoded = values_from_raw_bytes(data, element, count)
    if decoded is None:
        return DenseLiteralResult(None, error=HEX_SIZE_INVALID)
    values, splat = decoded
    return DenseLiteralResult(values, splat)


def parse_dense_literal(nested: object, element: Type, shape: tuple[int, ...]) -> DenseLiteralResult:
    """Read a dense literal already split into nested lists of literal strings.

    `nested` is a string (a scalar: a splat of the whole tile), a list/tuple of nested
    literals, or a quoted hex string `'"0x0000803F"'`.  Values come back stored as
    `DenseElementsAttr` wants them, collapsed to one value with `splat=True` when all
    elements are equal (as MLIR does).
    """
    if isinstance(element, IntegerType):
        width = element.width

        def leaf(text: str, path: tuple[int, ...]) -> int:
            return _int_element(text, width, path)

        empty_error = EXPECTED_INTEGER
    elif isinstance(element, FloatType) and element.name in FLOAT_FORMATS:
        name = element.name

        def leaf(text: str, path: tuple[int, ...]) -> int:
            return _float_element(text, name, path)

        empty_error = floats.EXPECTED_FLOAT_LITERAL
    else:
        return DenseLiteralResult(None, error=f"{BAD_ELEMENT_TYPE}, but got '{element}'")

    if isinstance(nested, str) and nested.lstrip().startswith('"'):
        return _from_hex_string(nested.strip(), element, shape)

    values: list[int] = []

    def walk(node: object, path: tuple[int, ...]) -> tuple[int, ...]:
        if isinstance(node, (list, tuple)):
            if not node:  # `[]`: the parser wants an element where `]` is
                raise _LiteralError(empty_error, (*path, 0))
            first: tuple[int, ...] | None = None
            for i, child in enumerate(node):
                child_shape = walk(child, (*path, i))
                if first is None:
                    first = child_shape
                elif child_shape != first:
                    raise _LiteralError(RANKS_INCONSISTENT, (*path, i))
            assert first is not None
            return (len(node), *first)
        values.append(leaf(node if isinstance(node, str) else str(node), path))
        return ()

    try:
        inferred = walk(nested, ())
    except _LiteralError as e:
        return DenseLiteralResult(None, error=e.message, note=e.note, path=e.path)

    shape = tuple(shape)
    if inferred and inferred != shape:
        return DenseLiteralResult(
            None,
            error=f"inferred shape of elements literal ({_shape_text(inferred)}) "
            f"does not match type ({_shape_text(shape)})",
        )
    collapsed, splat = _collapse(tuple(values))
    return DenseLiteralResult(collapsed, splat)


def dense_values_from_literals(
    nested: object, element: Type, shape: tuple[int, ...]
) -> tuple[tuple[int, ...] | None, bool, str | None]:
    """(values, splat, error message) for a nested literal; see `parse_dense_literal`."""
    r = parse_dense_literal(nested, element, shape)
    return r.values, r.splat, r.error
