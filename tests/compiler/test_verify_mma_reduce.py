"""The verifier's rules for mmaf / mmai / mmaf_scaled and for reduce / scan, as cuda-tile-opt
words them."""

# ruff: noqa: E501  (tables of cuda-tile-opt messages)

from __future__ import annotations

import pytest

from compiler.verify import VerifyOptions, check_text


def diagnose(body: str, args: str = "") -> list[tuple[int, str, str, str]]:
    """(1-based line, severity, code, message) of every diagnostic (notes flattened in after
    their error) of `body` placed in a testing function; the body starts on line 3."""
    text = f"cuda_tile.module @m {{\n  testing$func @f({args}) {{\n{body}\n  }}\n}}\n"
    result, diagnostics = check_text(text, "t.mlir", VerifyOptions(keep_going=False), allow_unregistered=True)
    source = result.module.source
    assert source is not None
    out = []
    for d in diagnostics:
        out.append((source.line_col(d.span.start)[0] + 1, d.severity.label, d.code, d.message))
        out.extend((source.line_col(r.span.start)[0] + 1, "note", "", r.message) for r in d.related)
    return out


def only(body: str, args: str = "") -> tuple[int, str, str, str]:
    found = diagnose(body, args)
    assert len(found) == 1, found
    return found[0]


# ------------------------------------------------------------------ mma


def mmaf(lhs: str, rhs: str, acc: str) -> tuple[int, str, str, str]:
    body = f"    %0 = mmaf %a, %b, %c : tile<{lhs}>, tile<{rhs}>, tile<{acc}>"
    return only(body, f"%a: tile<{lhs}>, %b: tile<{rhs}>, %c: tile<{acc}>")


def test_valid_mma_ops() -> None:
    body = """    %0 = mmaf %a, %b, %c : tile<4x8xf16>, tile<8x2xf16>, tile<4x2xf32>
    %1 = mmai %i, %j, %k signed unsigned : tile<2x4x8xi8>, tile<2x8x2xi8>, tile<2x4x2xi32>
    %2 = mmaf_scaled %x, %y, %z, %s, %t : tile<128x128xf4E2M1FN>, tile<128x128xf4E2M1FN>, tile<128x128xf32>, tile<128x8xf8E8M0FNU>, tile<8x128xf8E8M0FNU>"""
    args = (
        "%a: tile<4x8xf16>, %b: tile<8x2xf16>, %c: tile<4x2xf32>, %i: tile<2x4x8xi8>, %j: tile<2x8x2xi8>, "
        "%k: tile<2x4x2xi32>, %x: tile<128x128xf4E2M1FN>, %y: tile<128x128xf4E2M1FN>, %z: tile<128x128xf32>, "
        "%s: tile<128x8xf8E8M0FNU>, %t: tile<8x128xf8E8M0FNU>"
    )
    assert diagnose(body, args) == []


@pytest.mark.parametrize(
    ("lhs", "rhs", "acc", "message"),
    [
        ("4x16xf32", "8x16xf32", "4x16xf32", "dim 1 of lhs (16) and dim 0 of rhs (8) must match, but got lhs shape (4, 16) and rhs shape (8, 16)"),
        ("16x8xf32", "8x16xf32", "4x16xf32", "dim 0 of lhs (16) and dim 0 of acc (4) must match, but got lhs shape (16, 8) and acc shape (4, 16)"),
        ("4x8xf32", "8x16xf32", "4x32xf32", "dim 1 of rhs (16) and dim 1 of acc (32) must match, but got rhs shape (8, 16) and acc shape (4, 32)"),
        ("2x4x8xf32", "2x8x16xf32", "4x4x16xf32", "dim 0 of lhs (2) and dim 0 of acc (4) must match, but got lhs shape (2, 4, 8) and acc shape (4, 4, 16)"),
    ],
)  # fmt: skip
def test_mma_shapes(lhs: str, rhs: str, acc: str, message: str) -> None:
    line, severity, code, got = mmaf(lhs, rhs, acc)
    assert (line, severity, code) == (3, "error", "mma-shape")
    assert got.startswith("'cuda_tile.mmaf' op ") and got.endswith("shape error: " + message)


def test_mma_rank_and_element_type_rules() -> None:
    assert mmaf("4xf32", "8x16xf32", "4x16xf32")[3] == (
        "'cuda_tile.mmaf' op failed to verify that all of {lhs, rhs, acc} have same rank"
    )
    assert mmaf("4x8xf32", "8x16xf64", "4x16xf32")[3] == (
        "'cuda_tile.mmaf' op failed to verify that all of {lhs, rhs} have the same element type"
    )
    assert mmaf("2x2xf8E4M3FN", "2x2xf8E4M3FN", "2x2xf8E4M3FN")[3] == (
        "'cuda_tile.mmaf' op operand #2 must be mmaf acc/result tile type of f16 or f32 or f64 values, but got "
        "'!cuda_tile.tile<2x2xf8E4M3FN>'"
    )


@pytest.mark.parametrize(
    ("input_type", "acc", "allowed"),
    [("f8E4M3FN", "f64", "'f16', 'f32'"), ("bf16", "f16", "'f32'"), ("tf32", "f16", "'f32'"), ("f64", "f32", "'f64'")],
)
def test_mmaf_accumulator_types(input_type: str, acc: str, allowed: str) -> None:
    line, _, code, message = mmaf(f"2x2x{input_type}", f"2x2x{input_type}", f"2x2x{acc}")
    assert (line, code) == (3, "mma-element-type")
    assert message == (
        f"'cuda_tile.mmaf' op unsupported combination of element types. Input type '{input_type}' expects "
        f"accumulator/result type to be one of {{{allowed}}}, but got '{acc}'"
    )


def test_mmai_operand_constraint_uses_the_ods_summary() -> None:
    body = "    %0 = mmai %a, %a, %c signed signed : tile<2x2xi16>, tile<2x2xi16>, tile<2x2xi32>"
    assert only(body, "%a: tile<2x2xi16>, %c: tile<2x2xi32>")[3] == (
        "'cuda_tile.mmai' op operand #0 must be mmai operand tile type of i8 values, but got '!cuda_tile.tile<2x2xi16>'"
    )


def scaled(lhs: str, acc: str, ls: str, rs: str, rhs: str | None = None) -> tuple[int, str, str, str]:
    rhs = rhs or lhs
    body = f"    %0 = mmaf_scaled %a, %b, %c, %s, %t : tile<{lhs}>, tile<{rhs}>, tile<{acc}>, tile<{ls}>, tile<{rs}>"
    return only(body, f"%a: tile<{lhs}>, %b: tile<{rhs}>, %c: tile<{acc}>, %s: tile<{ls}>, %t: tile<{rs}>")


@pytest.mark.parametrize(
    ("lhs", "ls", "rs", "message"),
    [
        ("128x128xf4E2M1FN", "64x4xf8E8M0FNU", "4x128xf8E8M0FNU", "shape error: dim 0 of lhs (128) and dim 0 of lhs_scale (64) must match"),
        ("128x128xf4E2M1FN", "128x4xf8E8M0FNU", "4x64xf8E8M0FNU", "shape error: dim 1 of rhs (128) and dim 1 of rhs_scale (64) must match"),
        ("128x128xf4E2M1FN", "128x8xf8E8M0FNU", "4x128xf8E8M0FNU", "shape error: dim 1 of lhs_scale (8) and dim 0 of rhs_scale (4) must match, but got lhs_scale shape (128, 8) and rhs_scale shape (4, 128)"),
        ("128x128xf8E4M3FN", "128x8xf8E8M0FNU", "8x128xf8E8M0FNU", "shape error: f8 element type requires block scale factor of lhs_scale and rhs_scale to be 32, but got 16"),
        ("128x128xf4E2M1FN", "128x16xf8E8M0FNU", "16x128xf8E8M0FNU", "shape error: f4E2M1FN element type with f8E8M0FNU scales requires block scale factor of lhs_scale and rhs_scale to be 16 or 32, but got 8"),
        ("128x128xf4E2M1FN", "128x16xf8E4M3FN", "16x128xf8E4M3FN", "shape error: f4E2M1FN element type with f8E4M3FN scales requires block scale factor of lhs_scale and rhs_scale to be 16, but got 8"),
        ("128x128xf8E5M2", "128x4xf8E4M3FN", "4x128xf8E4M3FN", "unsupported combination of element types. Scale type 'f8E4M3FN' expects lhs and rhs element types to be 'f4E2M1FN', but got 'f8E5M2'"),
    ],
)  # fmt: skip
def test_mmaf_scaled(lhs: str, ls: str, rs: str, message: str) -> None:
    line, severity, _, got = scaled(lhs, "128x128xf32", ls, rs)
    assert (line, severity) == (3, "error")
    assert got.startswith("'cuda_tile.mmaf_scaled' op ") and message in got


def test_mmaf_scaled_accumulator_constraint() -> None:
    got = scaled("128x128xf8E5M2", "128x128xf16", "128x4xf8E8M0FNU", "4x128xf8E8M0FNU")[3]
    assert got.endswith(
        "operand #2 must be mmaf_scaled result tile type of f32 values, but got '!cuda_tile.tile<128x128xf16>'"
    )


# ------------------------------------------------------------------ reduce / scan


def reduce_op(
    operands: str, types: str, results: str, args: str, body: str, dim: str = "0", ids: str = "0.0 : f32"
) -> str:
    return (
        f"    %0 = reduce {operands} dim={dim} identities=[{ids}] : {types} -> {results}\n"
        f"    ({args}) {{\n{body}\n    }}"
    )


def test_valid_reduce_and_scan() -> None:
    body = """    %0 = reduce %a dim=1 identities=[0.0 : f32] : tile<2x8xf32> -> tile<2xf32>
    (%x: tile<f32>, %y: tile<f32>) {
      %s = addf %x, %y : tile<f32>
      yield %s : tile<f32>
    }
    %1 = scan %a dim=0 reverse=true identities=[1.0 : f32] : tile<2x8xf32> -> tile<2x8xf32>
    (%x: tile<f32>, %y: tile<f32>) {
      %p = mulf %x, %y : tile<f32>
      yield %p : tile<f32>
    }"""
    assert diagnose(body, "%a: tile<2x8xf32>") == []


def test_reduce_counts_and_identities() -> None:
    text = reduce_op(
        "%a", "tile<8xf32>", "tile<f32>, tile<f32>", "%x: tile<f32>, %y: tile<f32>", "      yield %x : tile<f32>"
    ).replace("%0 =", "%0:2 =")
    assert only(text, "%a: tile<8xf32>") == (
        3,
        "error",
        "result-count",
        "'cuda_tile.reduce' op expect same number of operands and results",
    )
    text = reduce_op(
        "%a",
        "tile<8xf32>",
        "tile<f32>",
        "%x: tile<f32>, %y: tile<f32>",
        "      yield %x : tile<f32>",
        ids="0.0 : f32, 0.0 : f32",
    )
    assert only(text, "%a: tile<8xf32>")[2:] == (
        "identities",
        "'cuda_tile.reduce' op expect identities to match the number of operands but got: 1 operands and 2 identities",
    )
    text = reduce_op(
        "%a", "tile<8xi32>", "tile<i32>", "%x: tile<i32>, %y: tile<i32>", "      yield %x : tile<i32>", ids="0.0 : f32"
    )
    assert only(text, "%a: tile<8xi32>")[3] == (
        "'cuda_tile.reduce' op expect same type for operand at index: 0 and identity at index: 0 but got: 'i32' and "
        "'f32'"
    )


def test_reduce_f16_and_bf16_identities_are_interchangeable() -> None:
    text = reduce_op(
        "%a",
        "tile<8xbf16>",
        "tile<bf16>",
        "%x: tile<bf16>, %y: tile<bf16>",
        "      yield %x : tile<bf16>",
        ids="0.0 : f16",
    )
    assert diagnose(text, "%a: tile<8xbf16>") == []


def test_reduce_dim() -> None:
    common = ("%a", "tile<8xf32>", "tile<f32>", "%x: tile<f32>, %y: tile<f32>", "      yield %x : tile<f32>")
    assert only(reduce_op(*common, dim="-10"), "%a: tile<8xf32>")[2:] == (
        "attribute-constraint",
        "'cuda_tile.reduce' op attribute 'dim' failed to satisfy constraint: 32-bit signless integer attribute "
        "whose value is non-negative",
    )
    assert only(reduce_op(*common, dim="10"), "%a: tile<8xf32>")[2:] == (
        "dim-range",
        "'cuda_tile.reduce' op dimension (10) is out of bound [0, 1)",
    )


def test_reduce_result_type_is_inferred() -> None:
    text = reduce_op("%a", "tile<8xf32>", "tile<1xf32>", "%x: tile<f32>, %y: tile<f32>", "      yield %x : tile<f32>")
    assert diagnose(text, "%a: tile<8xf32>") == [
        (
            3,
            "error",
            "result-type",
            "'cuda_tile.reduce' op inferred type(s) '!cuda_tile.tile<f32>' are incompatible with return type(s) of "
            "operation '!cuda_tile.tile<1xf32>'",
        ),
        (3, "error", "result-type", "'cuda_tile.reduce' op failed to infer returned types"),
    ]


def test_scan_result_types_must_be_the_operand_types() -> None:
    body = """    %0 = scan %a dim=0 reverse=false identities=[0.0 : f32] : tile<8xf32> -> tile<16xf32>
    (%x: tile<f32>, %y: tile<f32>) {
      yield %x : tile<f32>
    }"""
    assert only(body, "%a: tile<8xf32>")[3] == (
        "'cuda_tile.scan' op expect same type for operand at index: 0 and result at index: 0"
    )


def test_reduce_empty_region() -> None:
    body = "    %0 = reduce %a dim=0 identities=[0.0 : f32] : tile<8xf32> -> tile<f32>\n    () {}"
    assert only(body, "%a: tile<8xf32>") == (
        3,
        "error",
        "region-blocks",
        "'cuda_tile.reduce' op region #0 ('body') failed to verify constraint: region with 1 blocks",
    )


def test_reduce_operands_must_have_one_shape() -> None:
    text = reduce_op(
        "%a, %b",
        "tile<8xf32>, tile<16xf32>",
        "tile<f32>, tile<f32>",
        "%x: tile<f32>, %y: tile<f32>, %z: tile<f32>, %w: tile<f32>",
        "      yield %x, %z : tile<f32>, tile<f32>",
        ids="0.0 : f32, 0.0 : f32",
    ).replace("%0 =", "%0:2 =")
    assert only(text, "%a: tile<8xf32>, %b: tile<16xf32>")[3] == (
        "'cuda_tile.reduce' op requires the same shape for all operands"
    )


@pytest.mark.parametrize(
    ("args", "body", "message"),
    [
        ("", "      yield", "expect 2 block arguments but got: 0"),
        ("%x: tile<1xf32>, %y: tile<f32>", "      yield", "expect 0-rank tile type at index: 0 but got: '!cuda_tile.tile<1xf32>'"),
        ("%x: f32, %y: tile<f32>", "      yield", "expect 0-rank tile type at index: 0 but got: 'f32'"),
        ("%x: tile<f32>, %y: tile<i32>", "      yield", "expect same element type for block argument at index: 0 and 1 but got: 'f32' and 'i32'"),
        ("%x: tile<i32>, %y: tile<i32>", "      yield %x : tile<i32>", "expect same type for operand at index: 0 and block argument at index: 0 but got: 'f32' and 'i32'"),
        ("%x: tile<f32>, %y: tile<f32>", "      yield", "expect number of terminators operands (0) to match number of operands (1)"),
    ],
)  # fmt: skip
def test_combiner_region(args: str, body: str, message: str) -> None:
    text = reduce_op("%a", "tile<8xf32>", "tile<f32>", args, body)
    code = "yield-count" if "terminators" in message else "block-arguments"
    assert only(text, "%a: tile<8xf32>") == (3, "error", code, f"'cuda_tile.reduce' op {message}")


def test_combiner_yield_types() -> None:
    body = """    %0 = scan %a dim=0 reverse=false identities=[0.0 : f32] : tile<8xf32> -> tile<8xf32>
    (%x: tile<f32>, %y: tile<f32>) {
      %c = constant <i32: 0> : tile<i32>
      yield %c : tile<i32>
    }"""
    assert only(body, "%a: tile<8xf32>") == (
        3,
        "error",
        "yield-type",
        "'cuda_tile.scan' op expect same type for operand at index: 0 and terminator argument at index: 0 but "
        "got: 'f32' and 'i32'",
    )


def test_combiner_must_be_pure() -> None:
    body = """    %0 = reduce %a dim=0 identities=[0.0 : f32] : tile<8xf32> -> tile<f32>
    (%x: tile<f32>, %y: tile<f32>) {
      %t = print_tko "step" -> token
      yield %x : tile<f32>
    }"""
    assert only(body, "%a: tile<8xf32>") == (
        5,
        "error",
        "impure-combiner",
        "'cuda_tile.print_tko' op only pure operations are allowed inside 'cuda_tile.reduce'",
    )


def test_missing_operands_are_a_parse_error() -> None:
    body = """    %0 = scan dim=0 reverse=false identities=[0.0 : f32] : tile<8xf32> -> tile<8xf32>
    (%x: tile<f32>) {
      yield
    }"""
    assert only(body, "%a: tile<8xf32>")[3] == (
        "custom op 'cuda_tile.scan' number of operands and types do not match: got 0 operands and 1 types "
        "(types per operand group: operands 1)"  # (MLIR's words, which NVIDIA's tests match, and which got what)
    )
    # cmp and val share one type: a type for each is one too many, and the mask takes it.
    body = "    %o, %t = atomic_cas_tko relaxed device %p, %c, %v : tile<ptr<i32>>, tile<i32>, tile<i32> -> tile<i32>, token"
    assert only(body, "%p: tile<ptr<i32>>, %c: tile<i32>, %v: tile<i32>")[3].endswith(
        "got 0 operands and 1 types (types per operand group: pointers 1, cmp 1, val 1, mask 1)"
    )


def test_combiner_ending_in_an_unregistered_op() -> None:
    body = """    %0 = reduce %a dim=0 identities=[0.0 : f32] : tile<8xf32> -> tile<f32>
    (%x: tile<f32>, %y: tile<f32>) {
      "test.op"() : () -> ()
    }"""
    assert diagnose(body, "%a: tile<8xf32>") == [
        (
            3,
            "error",
            "terminator",
            "'cuda_tile.reduce' op expects regions to end with 'cuda_tile.yield', found 'test.op'",
        ),
        (3, "note", "", "in custom textual format, the absence of terminator implies 'cuda_tile.yield'"),
    ]
