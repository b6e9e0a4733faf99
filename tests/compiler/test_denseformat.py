"""compiler.text.denseformat: dense constant bodies printed as cuda-tile-opt prints them,
and read (with cuda-tile-opt's error messages) from nested literal lists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compiler.ir import floats
from compiler.ir.attributes import DenseElementsAttr
from compiler.ir.types import FLOAT_TYPES, IntegerType, TileType, Type
from compiler.text.denseformat import (
    DenseLiteralResult,
    dense_values_from_literals,
    element_byte_width,
    format_dense_body,
    parse_dense_literal,
    raw_bytes,
    values_from_raw_bytes,
)
from tests.corpus import CONFORMANCE_DIR, SHARED_MISSING, conformance_files

try:
    from hypothesis import given
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None  # type: ignore[assignment]

I1, I8, I16, I32, I64 = (IntegerType(w) for w in (1, 8, 16, 32, 64))
F16, BF16, F32, F64, TF32 = (FLOAT_TYPES[n] for n in ("f16", "bf16", "f32", "f64", "tf32"))
F4 = FLOAT_TYPES["f4E2M1FN"]
E4M3, E5M2, E8M0 = (FLOAT_TYPES[n] for n in ("f8E4M3FN", "f8E5M2", "f8E8M0FNU"))
ALL_ELEMENTS: list[Type] = [I1, I8, I16, I32, I64, *FLOAT_TYPES.values()]


def _tokens(body: str) -> object:
    """A literal body (`[[1, 2], [3, 4]]`) as nested lists of literal strings, the shape
    the parser hands to dense_values_from_literals."""
    toks = re.findall(r'\[|\]|,|"[^"]*"|[^\s\[\],]+', body)
    pos = 0

    def item() -> object:
        nonlocal pos
        tok = toks[pos]
        pos += 1
        if tok != "[":
            return tok
        out: list[object] = []
        if toks[pos] == "]":
            pos += 1
            return out
        while True:
            out.append(item())
            tok = toks[pos]
            pos += 1
            if tok == "]":
                return out
            assert tok == ","

    result = item()
    assert pos == len(toks), body
    return result


def _element(name: str) -> Type:
    return FLOAT_TYPES[name] if name in FLOAT_TYPES else IntegerType(int(name[1:]))


def _tile(spec: str) -> TileType:
    """`2x2xf32` -> TileType((2, 2), f32)."""
    *dims, elt = spec.split("x")
    return TileType(tuple(int(d) for d in dims), _element(elt))


def _print(body: str, element: Type, shape: tuple[int, ...]) -> str:
    r = parse_dense_literal(_tokens(body), element, shape)
    assert r.error is None, (body, r.error)
    assert r.values is not None
    return format_dense_body(DenseElementsAttr(TileType(shape, element), r.values, r.splat))


# ---- printing what the conformance files show -----------------------------------------

PRINTED = [
    # dense_attr.mlir
    ("0xFFFF", I16, (), "-1"),
    ("0x12345678", I32, (), "305419896"),
    ("0x10AB", I16, (), "4267"),
    ("42", I32, (4, 4), "42"),
    ("1.5", F32, (2, 4, 4), "1.500000e+00"),
    ("true", I1, (8,), "true"),
    ("[[1, 2], [3, 4]]", I32, (2, 2), "[[1, 2], [3, 4]]"),
    ("[1.0, 2.0, 3.0, 4.0]", F32, (4,), "[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]"),
    ("[[[true, false]], [[false, true]]]", I1, (2, 1, 2), "[[[true, false]], [[false, true]]]"),
    ("0xFF", I8, (), "-1"),
    ("0x123456789ABCDEF0", I64, (), "1311768467463790320"),
    ("9223372036854775807", I64, (), "9223372036854775807"),
    ("-9223372036854775808", I64, (), "-9223372036854775808"),
    ("0x3C00", F16, (), "1.000000e+00"),
    ("[0x2, 0x4]", F4, (2,), "[1.000000e+00, 2.000000e+00]"),
    ("0xCDEF", I16, (), "-12817"),
    ("0x87654321", I32, (), "-2023406815"),
    ("70000.0", F16, (), "0x7C00"),
    ("-70000.0", F16, (), "0xFC00"),
    # syntax_omit_dialect_prefix.mlir, ops.mlir, arith.mlir
    ("[0, -1, 42, 0x7F, 0xA, 1000, -500, 255]", I32, (8,), "[0, -1, 42, 127, 10, 1000, -500, 255]"),
    ("[10, 0xA, 12, 0xC]", I32, (4,), "[10, 10, 12, 12]"),
    ("[1.0, 1.0]", F32, (2,), "1.000000e+00"),
    ("[3.14]", F32, (1,), "3.140000e+00"),
    ("[2.718]", F64, (1,), "2.718000e+00"),
    ("[1.0, 2.5, -3.14159, 0.0]", F16, (4,), "[1.000000e+00, 2.500000e+00, -3.140630e+00, 0.000000e+00]"),
    ("[0.0, -0.0, 1.0, -1.0]", F32, (4,), "[0.000000e+00, -0.000000e+00, 1.000000e+00, -1.000000e+00]"),
    ("[2.718281828459045, 3.141592653589793]", F64, (2,), "[2.7182818284590451, 3.1415926535897931]"),
    (
        "[0x00000000, 0x7FC00000, 0x7F800000, 0x3F800000]",
        F32,
        (4,),
        "[0.000000e+00, 0x7FC00000, 0x7F800000, 1.000000e+00]",
    ),
    (
        "[[0.0, 1.0, -1.0, 2.0], [0x7F800000, 0xFF800000, 0x7FC00000, 0x3F800000]]",
        F32,
        (2, 4),
        "[[0.000000e+00, 1.000000e+00, -1.000000e+00, 2.000000e+00], "
        "[0x7F800000, 0xFF800000, 0x7FC00000, 1.000000e+00]]",
    ),
    ("[1.0, 0x3F800000, 2.0, 0x40000000]", F32, (4,), "[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]"),
    ("[1000000000000, -1000000000000]", I64, (2,), "[1000000000000, -1000000000000]"),
    ("[[1.0, 2.0], [4.0, 6.0]]", F4, (2, 2), "[[1.000000e+00, 2.000000e+00], [4.000000e+00, 6.000000e+00]]"),
    ("[1.0, 2.0]", E4M3, (2,), "[1.000000e+00, 2.000000e+00]"),
    ("[1.0, 2.0]", E5M2, (2,), "[1.000000e+00, 2.000000e+00]"),
    ("[1.0, 2.0]", E8M0, (2,), "[1.000000e+00, 2.000000e+00]"),
    ("42.000000e+00", BF16, (), "4.200000e+01"),
    ("[[1, 2, 3, 4], [5, 6, 7, 8]]", I32, (2, 4), "[[1, 2, 3, 4], [5, 6, 7, 8]]"),
    ("[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]", I32, (2, 2, 2), "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]"),
]


@pytest.mark.parametrize(("body", "element", "shape", "expected"), PRINTED)
def test_prints_like_cuda_tile_opt(body: str, element: Type, shape: tuple[int, ...], expected: str) -> None:
    assert _print(body, element, shape) == expected


def test_attribute_str_uses_the_body() -> None:
    attr = DenseElementsAttr(TileType((2,), F32), (0x3F800000, 0x40000000))
    assert str(attr) == "dense<[1.000000e+00, 2.000000e+00]> : !cuda_tile.tile<2xf32>"


def test_splat_detection_when_printing() -> None:
    # a non-splat attribute whose elements are all equal prints as one value, as in MLIR
    attr = DenseElementsAttr(TileType((2, 2), I32), (7, 7, 7, 7), splat=False)
    assert format_dense_body(attr) == "7"
    # the same bits only: 0.0 and -0.0 differ
    attr = DenseElementsAttr(TileType((2,), F32), (0, 0x80000000))
    assert format_dense_body(attr) == "[0.000000e+00, -0.000000e+00]"
    # values are normalised to the element width before comparing
    attr = DenseElementsAttr(TileType((2,), I8), (255, -1))
    assert format_dense_body(attr) == "-1"
    attr = DenseElementsAttr(TileType((2,), I1), (1, 0))
    assert format_dense_body(attr) == "[true, false]"


def test_large_constants_print_as_hex() -> None:
    values = tuple(range(101))
    attr = DenseElementsAttr(TileType((101,), I32), values)
    text = format_dense_body(attr)
    assert text == '"0x' + "".join(f"{v:02X}000000" for v in values) + '"'
    # at the limit itself the list form is kept
    attr = DenseElementsAttr(TileType((100,), I32), tuple(range(100)))
    assert format_dense_body(attr).startswith("[0, 1, 2")
    # a splat never uses hex
    attr = DenseElementsAttr(TileType((64, 64), F32), (0x3F800000,), splat=True)
    assert format_dense_body(attr) == "1.000000e+00"
    # floats: raw little-endian bits; f16 two bytes
    attr = DenseElementsAttr(TileType((2, 64), F16), tuple([0x3C00, 0x4000] * 64))
    assert format_dense_body(attr) == '"0x' + "003C0040" * 64 + '"'
    assert format_dense_body(attr, hex_limit=None).startswith("[[1.000000e+00, 2.000000e+00, ")
    # i1: one byte per element
    attr = DenseElementsAttr(TileType((128,), I1), tuple([1, 0] * 64))
    assert format_dense_body(attr) == '"0x' + "0100" * 64 + '"'


def test_hex_string_reads_back() -> None:
    attr = DenseElementsAttr(TileType((101,), I16), tuple(range(-50, 51)))
    text = format_dense_body(attr)
    r = parse_dense_literal(text, I16, (101,))
    assert r == DenseLiteralResult(attr.values, False)
    assert parse_dense_literal('"0x0000803F"', F32, (4, 4)) == DenseLiteralResult((0x3F800000,), True)
    assert parse_dense_literal('"0x0000803F00"', F32, (4, 4)).error == (
        "elements hex data size is invalid for provided type"
    )
    assert parse_dense_literal('"hello"', F32, (1,)).error == (
        "expected string containing hex digits starting with `0x`"
    )
    assert parse_dense_literal('"0xZZ"', I8, (1,)).error is not None


def test_malformed_attributes_do_not_raise() -> None:
    attr = DenseElementsAttr(TileType((2, 2), I32), (1, 2, 3))  # too few values
    assert format_dense_body(attr) == "[1, 2, 3]"
    assert format_dense_body(DenseElementsAttr(TileType((0,), I32), ())) == ""


# ---- raw data ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("element", "nbytes"),
    [
        (I1, 1),
        (I8, 1),
        (I16, 2),
        (I32, 4),
        (I64, 8),
        (F16, 2),
        (BF16, 2),
        (F32, 4),
        (F64, 8),
        (TF32, 3),
        (E4M3, 1),
        (E5M2, 1),
        (E8M0, 1),
        (F4, 1),
    ],
)
def test_raw_bytes_roundtrip(element: Type, nbytes: int) -> None:
    assert element_byte_width(element) == nbytes
    width = 1 if element == I1 else (element.width if isinstance(element, IntegerType) else None)
    if width is not None and element != I1:
        values = (0, 1, -1, wrap(1 << (width - 1), width))
    elif element == I1:
        values = (0, 1, 1, 0)
    else:
        fmt = element.name  # type: ignore[attr-defined]
        values = tuple(floats.float_to_bits(x, fmt) for x in (0.0, 1.0, -2.0, 0.5))
    data = raw_bytes(values, element)
    assert len(data) == nbytes * len(values)
    assert values_from_raw_bytes(data, element, len(values)) == (values, False)
    assert values_from_raw_bytes(data[:nbytes], element, 4) == ((values[0],), True)
    assert values_from_raw_bytes(data[:-1], element, 4) is None


def wrap(value: int, width: int) -> int:
    return floats.wrap_signed(value, width)


# ---- reading literals: values and cuda-tile-opt's errors ------------------------------


def test_values_and_splats() -> None:
    assert dense_values_from_literals("0xFFFF", I16, ()) == ((-1,), True, None)
    assert dense_values_from_literals("42", I32, (4, 4)) == ((42,), True, None)
    assert dense_values_from_literals(["1", "2"], I32, (2,)) == ((1, 2), False, None)
    assert dense_values_from_literals(["7", "7", "7"], I32, (3,)) == ((7,), True, None)
    assert dense_values_from_literals(["-1", "1"], I1, (2,)) == ((1,), True, None)
    assert dense_values_from_literals(["true", "0"], I1, (2,)) == ((1, 0), False, None)
    assert dense_values_from_literals(["255", "-1"], I8, (2,)) == ((-1,), True, None)
    assert dense_values_from_literals(("1.0", "0x40000000"), F32, (2,)) == ((0x3F800000, 0x40000000), False, None)
    assert dense_values_from_literals("-0", I32, ()) == ((0,), True, None)
    assert dense_values_from_literals("4294967295", I32, ()) == ((-1,), True, None)
    assert dense_values_from_literals(["0xFFFFFFFFFFFFFFFF", "9223372036854775808"], I64, (2,)) == (
        (-1, -(1 << 63)),
        False,
        None,
    )  # as narrower types: either reading of the bits
    assert dense_values_from_literals(["007", "-0x0A"], I8, (2,)) == ((7, -10), False, None)


@pytest.mark.parametrize(
    ("literal", "element", "shape", "error", "path"),
    [
        (
            [["true", "true"], ["true", "true"]],
            I1,
            (4, 2),
            "inferred shape of elements literal ([2, 2]) does not match type ([4, 2])",
            (),
        ),
        (
            [[[["1", "2", "3", "4"], ["5", "6", "7", "8"]], [["9", "10", "11", "12"], ["13", "14", "15", "16"]]]],
            I32,
            (2, 2, 2, 4),
            "inferred shape of elements literal ([1, 2, 2, 4]) does not match type ([2, 2, 2, 4])",
            (),
        ),
        (
            ["0.0", "2.0", "2147483647", "9.0"],
            F32,
            (32,),
            "unexpected decimal integer literal for a floating point value",
            (2,),
        ),
        (
            [["true", "true"], ["true"]],
            I1,
            (2, 2),
            "tensor literal is invalid; ranks are not consistent between elements",
            (1,),
        ),
        (
            [[["1", "2"]], [["3", "4"], ["5", "6"]]],
            I32,
            (2, 2, 2),
            "tensor literal is invalid; ranks are not consistent between elements",
            (1,),
        ),
        (
            [["1.0", "2.0", "3.0"], ["4.0", "5.0"]],
            F32,
            (2, 3),
            "tensor literal is invalid; ranks are not consistent between elements",
            (1,),
        ),
        (["1", ["2", "3"]], I32, (2, 2), "tensor literal is invalid; ranks are not consistent between elements", (1,)),
        (["1", "2", "3"], I32, (8,), "inferred shape of elements literal ([3]) does not match type ([8])", ()),
        (["1.0"], F32, (), "inferred shape of elements literal ([1]) does not match type ([])", ()),
        ("ABC", I16, (), "expected integer value", ()),
        ("1.5", I32, (), "expected integer value", ()),
        ("true", I32, (), "expected integer value", ()),
        ([], I32, (1,), "expected integer value", (0,)),
        ([], F32, (1,), "expected floating point literal", (0,)),
        ("0x10AB", I8, (), "integer constant out of range for type", ()),
        ("256", I8, (), "integer constant out of range for type", ()),
        ("-129", I8, (), "integer constant out of range for type", ()),
        ("65536", I16, (), "integer constant out of range for type", ()),
        ("-32769", I16, (), "integer constant out of range for type", ()),
        ("2", I1, (), "integer constant out of range for type", ()),
        # MLIR reads an int64_t and refuses only what does not come back out of it: 2^64 - 1
        # is taken (as -1), 2^64 is not.
        ("0x10000000000000000", I64, (), "integer value too large", ()),
        ("18446744073709551616", I64, (), "integer value too large", ()),
        ("0x12345678", F16, (), "hexadecimal float constant out of range for type", ()),
        ("-0x3C00", F16, (), "hexadecimal float literal should not have a leading minus", ()),
        ("inf", F32, (), "expected floating point literal", ()),
        ([["1", "x"], ["2", "3"]], I32, (2, 2), "expected integer value", (0, 1)),
    ],
)
def test_errors(literal: object, element: Type, shape: tuple[int, ...], error: str, path: tuple) -> None:
    r = parse_dense_literal(literal, element, shape)
    assert r.values is None
    assert r.error == error
    assert r.path == path
    assert dense_values_from_literals(literal, element, shape) == (None, False, error)


def test_decimal_integer_note() -> None:
    r = parse_dense_literal(["1.0", "2"], F32, (2,))
    assert r.note == "add a trailing dot to make the literal a float"
    assert parse_dense_literal(["1.0", "0x1"], I8, (2,)).note is None


def test_unsupported_element_type() -> None:
    from compiler.ir.types import PointerType

    r = parse_dense_literal("1", PointerType(F32), ())
    assert r.values is None and r.error is not None and "ptr<f32>" in r.error


# ---- against the conformance files -------------------------------------------------

_CONST = re.compile(r"<(\w+): (.*?)> : (?:!cuda_tile\.)?tile<([^>]*)>")


def _filecheck_regex(pattern: str) -> re.Pattern[str]:
    """FileCheck's pattern language, enough for these lines: `{{re}}` is a regex, the
    rest is literal."""
    parts = re.split(r"\{\{(.*?)\}\}", pattern)
    return re.compile("".join(p if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def _check_pairs() -> list[tuple[str, str, str, str]]:
    """(where, source body, tile spec, CHECK pattern) for each CHECK'd dense constant."""
    pairs = []
    for path in conformance_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            # CHECK-DAG groups come out of order: pair only a CHECK with the line below
            if not re.search(r"CHECK(-NEXT)?:", line) or not (m := _CONST.search(line)):
                continue
            for nxt in lines[i + 1 : i + 4]:
                if nxt.strip().startswith("//") or not (s := _CONST.search(nxt)):
                    continue
                if (s.group(1), s.group(3)) == (m.group(1), m.group(3)):
                    pairs.append((f"{path.name}:{i + 2}", s.group(2), s.group(3), m.group(2)))
                break
    return pairs


def test_conformance_check_lines() -> None:
    if not CONFORMANCE_DIR.is_dir():
        pytest.skip(SHARED_MISSING)
    pairs = _check_pairs()
    assert len(pairs) > 100
    for where, body, spec, pattern in pairs:
        tile = _tile(spec)
        printed = _print(body, tile.element, tile.shape)
        assert _filecheck_regex(pattern).fullmatch(printed), (where, body, pattern, printed)


_DENSE_ERRORS = (
    "inferred shape of elements literal",
    "tensor literal is invalid",
    "expected integer value",
    "integer constant out of range for type",
    "float constant out of range for type",
    "unexpected decimal integer literal for a floating point value",
)


def test_conformance_expected_errors() -> None:
    if not CONFORMANCE_DIR.is_dir():
        pytest.skip(SHARED_MISSING)
    checked = 0
    for path in conformance_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = re.search(r"expected-error\s*@(?:\+1|below)\s*\{\{(.*)\}\}", line)
            if not m or not m.group(1).startswith(_DENSE_ERRORS):
                continue
            code = next(x for x in lines[i + 1 :] if not x.strip().startswith("//"))
            s = _CONST.search(code)
            if s is None:
                continue
            tile = _tile(s.group(3))
            r = parse_dense_literal(_tokens(s.group(2)), _element(s.group(1)), tile.shape)
            assert r.error is not None and m.group(1) in r.error, (path.name, i + 1, r)
            checked += 1
    assert checked >= 10


def test_shared_samples_constants() -> None:
    from tests.corpus import sample_files

    files = sample_files()
    if not files:
        pytest.skip(SHARED_MISSING)
    for path in files:
        for s in _CONST.finditer(path.read_text(encoding="utf-8")):
            tile = _tile(s.group(3))
            assert _print(s.group(2), tile.element, tile.shape) == s.group(2), (path.name, s.group(0))


# ---- properties -------------------------------------------------------------------

if given is not None:

    @st.composite
    def _dense(draw: st.DrawFn) -> tuple[Type, tuple[int, ...], tuple[int, ...]]:
        element = draw(st.sampled_from(ALL_ELEMENTS))
        shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
        n = 1
        for d in shape:
            n *= d
        if isinstance(element, IntegerType):
            w = element.width
            value = st.integers(0, 1) if w == 1 else st.integers(-(1 << (w - 1)), (1 << (w - 1)) - 1)
        else:
            value = st.integers(0, (1 << floats._spec(element.name).width) - 1)
        values = tuple(draw(st.lists(value, min_size=n, max_size=n)))
        return element, shape, values

    @given(_dense())
    def test_print_then_read_roundtrip(case: tuple[Type, tuple[int, ...], tuple[int, ...]]) -> None:
        element, shape, values = case
        attr = DenseElementsAttr(TileType(shape, element), values)
        text = format_dense_body(attr)
        r = parse_dense_literal(_tokens(text), element, shape)
        assert r.error is None, (text, r.error)
        expected = values if len(set(values)) > 1 else (values[0],)
        assert r.values == expected and r.splat == (len(expected) == 1)


def test_module_has_no_heavy_imports() -> None:
    src = Path(__file__).resolve().parents[2] / "compiler" / "text" / "denseformat.py"
    text = src.read_text(encoding="utf-8")
    assert "import numpy" not in text and "ml_dtypes" not in text
