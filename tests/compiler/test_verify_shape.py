"""The verifier's rules for the shape ops: broadcast, reshape, cat, extract, permute, iota,
pack, unpack and offset, as cuda-tile-opt words them."""

from __future__ import annotations

import pytest

from compiler.ir.diagnostics import Severity
from compiler.verify import VerifyOptions, check_text


def diagnose(body: str, args: str = "") -> list[tuple[int, str, str, str]]:
    """(1-based line, severity, code, message) of every diagnostic of `body` placed in a
    testing function with arguments `args`; the body starts on line 3."""
    text = f"cuda_tile.module @m {{\n  testing$func @f({args}) {{\n{body}\n  }}\n}}\n"
    result, diagnostics = check_text(text, "t.mlir", VerifyOptions(keep_going=False), allow_unregistered=True)
    source = result.module.source
    out = []
    for d in diagnostics:
        line = source.line_col(d.span.start)[0] + 1 if source is not None else -1
        out.append((line, d.severity.label, d.code, d.message))
    return out


def only(body: str, args: str = "") -> tuple[int, str, str, str]:
    found = diagnose(body, args)
    assert len(found) == 1, found
    return found[0]


def test_valid_shape_ops_give_no_diagnostics() -> None:
    body = """    %r = reshape %a : tile<2x4xf32> -> tile<8xf32>
    %b = broadcast %c : tile<1x4xf32> -> tile<8x4xf32>
    %k = cat %a, %a dim = 1 : tile<2x4xf32>, tile<2x4xf32> -> tile<2x8xf32>
    %i = constant <i32: 1> : tile<i32>
    %e = extract %a[%i, %i] : tile<2x4xf32> -> tile<1x2xf32>
    %p = permute %a [1, 0] : tile<2x4xf32> -> tile<4x2xf32>
    %io = iota : tile<256xi8>
    %pk = pack %h : tile<64xf16> -> tile<128xi8>
    %up = unpack %pk : tile<128xi8> -> tile<64xf16>
    %o = offset %ptr, %off : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>"""
    args = "%a: tile<2x4xf32>, %c: tile<1x4xf32>, %h: tile<64xf16>, %ptr: tile<8xptr<f32>>, %off: tile<8xi32>"
    assert diagnose(body, args) == []


def test_broadcast_rank_then_element_type_then_shape() -> None:
    assert only("    %0 = broadcast %a : tile<2xf32> -> tile<2x2xf32>", "%a: tile<2xf32>") == (
        3,
        "error",
        "type-rule",
        "'cuda_tile.broadcast' op failed to verify that all of {source, result} have same rank",
    )
    assert only("    %0 = broadcast %a : tile<2x2xf32> -> tile<2x2xf64>", "%a: tile<2x2xf32>")[3] == (
        "'cuda_tile.broadcast' op requires the same element type for all operands and results"
    )
    assert only("    %0 = broadcast %a : tile<4x4xf32> -> tile<2x4xf32>", "%a: tile<4x4xf32>") == (
        3,
        "error",
        "broadcast-shape",
        "'cuda_tile.broadcast' op expects the shape of source tile to be compatible with that of the result "
        "tile, but got: 4, 4 and 2, 4",
    )


def test_reshape() -> None:
    assert only("    %0 = reshape %a : tile<2x2xf32> -> tile<8xf32>", "%a: tile<2x2xf32>") == (
        3,
        "error",
        "reshape-elements",
        "'cuda_tile.reshape' op expected source tile and result tile to have the same number of elements",
    )
    assert only("    %0 = reshape %a : tile<1xf32> -> tile<i32>", "%a: tile<1xf32>")[2:] == (
        "type-rule",
        "'cuda_tile.reshape' op requires the same element type for all operands and results",
    )


@pytest.mark.parametrize(
    ("dim", "result", "code", "message"),
    [
        ("-1", "2x4", "dim-range", "expect dim to be [0, 2), but got: -1"),
        ("2", "2x4", "dim-range", "expect dim to be [0, 2), but got: 2"),
        ("1", "2x16", "cat-shape", "invalid concat at position 1, expected: 4 but got: 16"),
        (
            "1",
            "4x4",
            "cat-shape",
            "expect lhs and result shapes to match at non-concat position 0, expected: 2 but got: 4",
        ),
    ],
)
def test_cat(dim: str, result: str, code: str, message: str) -> None:
    body = f"    %0 = cat %a, %a dim = {dim} : tile<2x2xf32>, tile<2x2xf32> -> tile<{result}xf32>"
    assert only(body, "%a: tile<2x2xf32>") == (3, "error", code, f"'cuda_tile.cat' op {message}")


def test_cat_lhs_rhs_mismatch_points_at_rhs() -> None:
    line, _, code, message = only(
        "    %0 = cat %a, %b dim = 1 : tile<2x2xf32>, tile<4x2xf32> -> tile<2x4xf32>",
        "%a: tile<2x2xf32>, %b: tile<4x2xf32>",
    )
    assert (line, code) == (3, "cat-shape")
    assert message.endswith("expect lhs and rhs shapes to match at non-concat position 0, expected: 2 but got: 4")


def test_cat_offers_the_right_result_type() -> None:
    text = (
        "cuda_tile.module @m {\n  testing$func @f(%a: tile<2x2xf32>) {\n"
        "    %0 = cat %a, %a dim = 1 : tile<2x2xf32>, tile<2x2xf32> -> tile<2x16xf32>\n  }\n}\n"
    )
    _, diagnostics = check_text(text, "t.mlir", VerifyOptions(keep_going=False))
    (d,) = diagnostics
    (fix,) = d.fixes
    (edit,) = fix.edits
    assert text[edit.span.start : edit.span.end] == "tile<2x16xf32>"
    assert edit.new_text == "tile<2x4xf32>"


def test_extract_rules_in_order() -> None:
    args = "%t: tile<8xf32>, %i: tile<i32>"
    assert only("    %0 = extract %t[%i] : tile<8xf32> -> tile<2xi32>", args)[3] == (
        "'cuda_tile.extract' op source and result element type do not match"
    )
    assert only("    %0 = extract %t[%i, %i] : tile<8xf32> -> tile<2xf32>", args)[2:] == (
        "index-count",
        "'cuda_tile.extract' op expected 1 indices, but got 2",
    )
    assert only("    %0 = extract %u[%i, %i] : tile<8x4xf32> -> tile<4x8xf32>", "%u: tile<8x4xf32>, %i: tile<i32>")[
        3
    ] == ("'cuda_tile.extract' op source dimension 1 size (4) must be evenly divisible by result dimension 1 size (8)")


def test_extract_index_of_wrong_type_is_a_parse_error() -> None:
    found = diagnose("    %0 = extract %t[%i] : tile<8x8xf32> -> tile<4x4xf32>", "%t: tile<8x8xf32>, %i: tile<2xi32>")
    assert found == [
        (
            3,
            "error",
            "type-mismatch",
            "use of value '%i' expects different type than prior uses: '!cuda_tile.tile<i32>' vs "
            "'!cuda_tile.tile<2xi32>'",
        )
    ]


def test_extract_constant_index_out_of_range_warns() -> None:
    body = """    %c = constant <i32: 5> : tile<i32>
    %n = constant <i32: -1> : tile<i32>
    %0 = extract %t[%c] : tile<8xf32> -> tile<2xf32>
    %1 = extract %t[%n] : tile<8xf32> -> tile<2xf32>"""
    assert diagnose(body, "%t: tile<8xf32>") == [
        (5, "warning", "extract-index", "extract index 0 value 5 may be out of bounds (max valid index: 3)"),
        (6, "warning", "extract-index", "extract index 0 has negative value -1, which may cause undefined behavior"),
    ]


@pytest.mark.parametrize(
    ("source", "perm", "result", "message"),
    [
        ("2", "[0]", "2", "expects at least rank 2, but got: 1"),
        ("1x2", "[0, 1, 100]", "1x2", "expect permutation size (3) to equal the rank of the source (2)"),
        ("1x2", "[0, 0]", "1x2", "expect permutation elements to be unique"),
        ("1x2", "[0, 100]", "1x2", "permutation element at index 1 (100) is out of bound [0, 2)"),
        ("1x2", "[-1, 1]", "1x2", "permutation element at index 0 (-1) is out of bound [0, 2)"),
        ("1x2", "[1, 0]", "1x1", "result shape invalid at index 0, expected: 2, but got: 1"),
    ],
)
def test_permute(source: str, perm: str, result: str, message: str) -> None:
    body = f"    %0 = permute %a {perm} : tile<{source}xf32> -> tile<{result}xf32>"
    line, severity, _, got = only(body, f"%a: tile<{source}xf32>")
    assert (line, severity, got) == (3, "error", f"'cuda_tile.permute' op {message}")


def test_permute_type_rules_and_fix() -> None:
    assert only("    %0 = permute %a [0, 1] : tile<1x2xf32> -> tile<1x2xf64>", "%a: tile<1x2xf32>")[3].endswith(
        "failed to verify that all of {source, result} have the same element type"
    )
    text = (
        "cuda_tile.module @m {\n  testing$func @f(%a: !cuda_tile.tile<2x4xf32>) {\n"
        "    %0 = permute %a [1, 0] : !cuda_tile.tile<2x4xf32> -> !cuda_tile.tile<2x4xf32>\n  }\n}\n"
    )
    _, (d,) = check_text(text, "t.mlir", VerifyOptions(keep_going=False))
    assert d.code == "permute-shape"
    assert d.fixes[0].edits[0].new_text == "!cuda_tile.tile<4x2xf32>"


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("i64", "expects result type to be 1-d tile"),
        ("32x64xi64", "expects result type to be 1-d tile"),
        ("512xi8", "the number of elements 512 exceeds the maximum value of element type 'i8'"),
        ("4xi1", "the number of elements 4 exceeds the maximum value of element type 'i1'"),
    ],
)
def test_iota(result: str, message: str) -> None:
    assert only(f"    %0 = iota : tile<{result}>")[2:] == (
        "iota-shape" if "1-d" in message else "iota-range",
        f"'cuda_tile.iota' op {message}",
    )


@pytest.mark.parametrize(
    ("op", "source", "result", "message"),
    [
        ("pack", "32xf16", "32x2xi8", "failed to verify that all of {source, result} have same rank"),
        ("pack", "32x32xf16", "32x64xi8", "expects source and result to be rank-1 tiles"),
        (
            "pack",
            "32xf16",
            "32xi8",
            "expects source and result to have the same size in bytes, but got source tile size 64 bytes and "
            "result tile size 32 bytes",
        ),
        ("pack", "32xf8E4M3FN", "32xi8", "expects source and result to have different element type widths"),
        ("pack", "32xi8", "32xi8", "expects source and result to have different element type widths"),
        (
            "unpack",
            "64xi8",
            "64xf16",
            "expects source and result to have the same size in bytes, but got source tile size 64 bytes and "
            "result tile size 128 bytes",
        ),
        ("unpack", "32xi8", "32xf8E8M0FNU", "expects source and result to have different element type widths"),
    ],
)
def test_pack_unpack(op: str, source: str, result: str, message: str) -> None:
    body = f"    %0 = {op} %a : tile<{source}> -> tile<{result}>"
    assert only(body, f"%a: tile<{source}>")[3] == f"'cuda_tile.{op}' op {message}"


def test_pack_tf32_counts_32_bits_per_element() -> None:
    assert diagnose("    %0 = pack %a : tile<4xtf32> -> tile<16xi8>", "%a: tile<4xtf32>") == []


def test_offset_type_rule_comes_before_the_shape_trait() -> None:
    body = "    %0 = offset %p, %o : tile<8xptr<f32>>, tile<8xi32> -> tile<16xptr<f32>>"
    assert only(body, "%p: tile<8xptr<f32>>, %o: tile<8xi32>")[3] == (
        "'cuda_tile.offset' op failed to verify that all of {result, ptr} have same type"
    )
    body = "    %0 = offset %p, %o : tile<8xptr<f32>>, tile<4xi32> -> tile<8xptr<f32>>"
    assert only(body, "%p: tile<8xptr<f32>>, %o: tile<4xi32>")[3] == (
        "'cuda_tile.offset' op requires the same shape for all operands and results"
    )


def test_generic_form_without_attributes_does_not_raise() -> None:
    body = """    %0 = "cuda_tile.cat"(%a, %a) : (tile<2xf32>, tile<2xf32>) -> tile<4xf32>
    %1 = "cuda_tile.permute"(%a) : (!cuda_tile.tile<2xf32>) -> !cuda_tile.tile<2xf32>"""
    found = diagnose(body, "%a: tile<2xf32>")
    assert found and found[0][1] == Severity.ERROR.label
    assert found[0][3] == "'cuda_tile.cat' op requires attribute 'dim'"


def test_extract_index_mismatch_notes_the_prior_use() -> None:
    text = (
        "cuda_tile.module @m {\n  testing$func @f(%t: tile<8x8xf32>, %i: tile<2xi32>) {\n"
        "    %0 = extract %t[%i] : tile<8x8xf32> -> tile<4x4xf32>\n  }\n}\n"
    )
    result, (d,) = check_text(text, "t.mlir", VerifyOptions(keep_going=False))
    (note,) = d.related
    assert note.message == "prior use here"
    assert result.module.source is not None
    assert result.module.source.line_col(note.span.start)[0] == 1
