"""The conversion ops' verifiers (and iota's, from ops_shape): MLIR's messages, codes, lines, fixes."""

from __future__ import annotations

import pytest

from compiler.ir.diagnostics import Diagnostic
from compiler.verify import VerifyOptions, check_text


def run(body: str, arg: str) -> tuple[str, list[Diagnostic]]:
    """Verify `body` inside a function taking `%x: arg`; the body starts on line 3."""
    text = f"cuda_tile.module @m {{\n  testing$func @f(%x: {arg}) {{\n{body}\n  }}\n}}\n"
    _, diags = check_text(text, "t.mlir", VerifyOptions(keep_going=False))
    return text, diags


def only(body: str, arg: str) -> tuple[str, Diagnostic]:
    text, diags = run("    " + body, arg)
    assert len(diags) == 1, [d.format() for d in diags]
    assert diags[0].location()[1] == 3
    return text, diags[0]


VALID = [
    ("%0 = bitcast %x : tile<4xi32> -> tile<4xf32>", "tile<4xi32>"),
    ("%0 = bitcast %x : tile<4xf16> -> tile<4xbf16>", "tile<4xf16>"),
    ("%0 = bitcast %x : tile<4xi8> -> tile<4xf8E4M3FN>", "tile<4xi8>"),
    ("%0 = exti %x signed : tile<4xi8> -> tile<4xi32>", "tile<4xi8>"),
    ("%0 = exti %x unsigned : tile<4xi1> -> tile<4xi8>", "tile<4xi1>"),
    ("%0 = trunci %x : tile<4xi64> -> tile<4xi16>", "tile<4xi64>"),
    ("%0 = ftof %x : tile<4xf32> -> tile<4xf16>", "tile<4xf32>"),
    ("%0 = ftof %x rounding<zero> : tile<4xf32> -> tile<4xf8E8M0FNU>", "tile<4xf32>"),
    ("%0 = ftof %x rounding<positive_inf> : tile<4xf32> -> tile<4xf8E8M0FNU>", "tile<4xf32>"),
    ("%0 = ftoi %x signed : tile<4xf32> -> tile<4xi32>", "tile<4xf32>"),
    ("%0 = itof %x unsigned : tile<4xi16> -> tile<4xf32>", "tile<4xi16>"),
    ("%0 = ptr_to_int %x : tile<4xptr<f32>> -> tile<4xi64>", "tile<4xptr<f32>>"),
    ("%0 = int_to_ptr %x : tile<4xi64> -> tile<4xptr<f32>>", "tile<4xi64>"),
    ("%0 = ptr_to_ptr %x : tile<4xptr<f32>> -> tile<4xptr<i8>>", "tile<4xptr<f32>>"),
    ("%0 = iota : tile<256xi8>", "tile<i32>"),
    ("%0 = iota : tile<2xi1>", "tile<i32>"),
    ("%0 = iota : tile<1024xi64>", "tile<i32>"),
]


@pytest.mark.parametrize(("body", "arg"), VALID)
def test_valid_ops_give_no_diagnostics(body: str, arg: str) -> None:
    _, diags = run("    " + body, arg)
    assert diags == []


@pytest.mark.parametrize(
    ("src", "dst", "src_bits", "dst_bits"),
    [("i32", "i16", 32, 16), ("f32", "tf32", 32, 19), ("i8", "f4E2M1FN", 8, 4), ("f64", "i32", 64, 32)],
)
def test_bitcast_needs_equal_widths(src: str, dst: str, src_bits: int, dst_bits: int) -> None:
    _, d = only(f"%0 = bitcast %x : tile<4x{src}> -> tile<4x{dst}>", f"tile<4x{src}>")
    assert d.message == (
        f"'cuda_tile.bitcast' op types must be equal width, cannot convert '!cuda_tile.tile<4x{src}>' "
        f"of width {src_bits} to type '!cuda_tile.tile<4x{dst}>' of width {dst_bits}"
    )
    assert d.code == "bitcast-width"


def test_bitcast_shape_is_checked_first() -> None:
    _, d = only("%0 = bitcast %x : tile<4xi16> -> tile<2xi32>", "tile<4xi16>")
    assert d.message == "'cuda_tile.bitcast' op failed to verify that all of {source, result} have same shape"


@pytest.mark.parametrize(("src", "dst"), [("i8", "i8"), ("i16", "i8"), ("i64", "i1")])
def test_exti_must_widen(src: str, dst: str) -> None:
    _, d = only(f"%0 = exti %x signed : tile<4x{src}> -> tile<4x{dst}>", f"tile<4x{src}>")
    assert d.message == "'cuda_tile.exti' op extending to smaller or identical integer"
    assert d.code == "integer-width"


@pytest.mark.parametrize(("src", "dst"), [("i8", "i8"), ("i8", "i16"), ("i1", "i64")])
def test_trunci_must_narrow(src: str, dst: str) -> None:
    _, d = only(f"%0 = trunci %x : tile<4x{src}> -> tile<4x{dst}>", f"tile<4x{src}>")
    assert d.message == "'cuda_tile.trunci' op truncating to larger or identical integer"


@pytest.mark.parametrize("op", ["exti", "ftoi", "itof"])
def test_missing_signedness_gives_both_parse_errors(op: str) -> None:
    src = "tile<4xf16>" if op == "ftoi" else "tile<4xi8>"
    dst = {"exti": "tile<4xi16>", "ftoi": "tile<4xi32>", "itof": "tile<4xf16>"}[op]
    text, diags = run(f"    %0 = {op} %x : {src} -> {dst}", src)
    assert [d.message for d in diags] == [
        f"custom op 'cuda_tile.{op}' expected valid keyword",
        f"custom op 'cuda_tile.{op}' expected signedness to be one of: {{'signed', 'unsigned'}}",
    ]
    assert all(d.location()[1:] == (3, 14 + len(op)) for d in diags)
    assert text[diags[0].span.start] == ":"


def test_wrong_signedness_word_gives_one_error() -> None:
    _, d = only("%0 = exti %x sign : tile<4xi8> -> tile<4xi16>", "tile<4xi8>")
    assert d.message == "custom op 'cuda_tile.exti' expected signedness to be one of: {'signed', 'unsigned'}"


def test_ftof_no_op() -> None:
    _, d = only("%0 = ftof %x : tile<2xf16> -> tile<2xf16>", "tile<2xf16>")
    assert d.message == "'cuda_tile.ftof' op converting tiles must not be a no-op"
    assert d.code == "no-op-conversion"


def test_ftof_rounding_mode() -> None:
    """tileiras 13.5's rules (tests/bytecode/test_ftof_rounding.py checks them against it)."""
    text, d = only("%0 = ftof %x rounding<negative_inf> : tile<4xf32> -> tile<4xf16>", "tile<4xf32>")
    assert d.message == (
        "'cuda_tile.ftof' op invalid rounding mode specified. Only 'nearest_even' and 'zero' are supported for "
        "narrowing conversions to standard types"
    )
    assert d.code == "rounding-mode"
    assert text[d.span.start : d.span.end] == "rounding<negative_inf>"
    assert [f.title for f in d.fixes] == ["Use rounding<nearest_even>", "Use rounding<zero>"]
    for fix in d.fixes:
        assert check_text(fix.apply(text))[1] == []
    _, d = only("%0 = ftof %x rounding<zero> : tile<4xf32> -> tile<4xf8E4M3FN>", "tile<4xf32>")
    assert "for conversion to low-precision type. Only 'nearest_even' is supported" in d.message
    _, d = only("%0 = ftof %x rounding<nearest_away> : tile<4xf64> -> tile<4xf32>", "tile<4xf64>")
    assert d.message.endswith(
        "for conversion from f64 to f32. Only 'nearest_even', 'zero', 'negative_inf', and 'positive_inf' are supported"
    )
    assert len(d.fixes) == 4
    for ok in (
        "rounding<zero> : tile<4xf32> -> tile<4xf16>",
        "rounding<positive_inf> : tile<4xf32> -> tile<4xf64>",
        "rounding<nearest_away> : tile<4xf32> -> tile<4xtf32>",
        "rounding<nearest_away> : tile<4xf32> -> tile<4xf64>",
    ):
        assert run(f"    %0 = ftof %x {ok}", "tile<4xf32>")[1] == [], ok


@pytest.mark.parametrize("written", ["", " rounding<negative_inf>"])
def test_ftof_to_e8m0_needs_zero_or_positive_inf(written: str) -> None:
    text, d = only(f"%0 = ftof %x{written} : tile<4xf32> -> tile<4xf8E8M0FNU>", "tile<4xf32>")
    assert d.message == (
        "'cuda_tile.ftof' op invalid rounding mode specified for conversion to f8E8M0FNU. "
        "Only 'zero' and 'positive_inf' are supported"
    )
    assert [f.title for f in d.fixes] == ["Use rounding<zero>", "Use rounding<positive_inf>"]
    for fix in d.fixes:
        fixed = fix.apply(text)
        assert "%0 = ftof %x rounding<" in fixed
        assert check_text(fixed)[1] == []


def test_itof_to_e8m0() -> None:
    _, d = only("%0 = itof %x signed : tile<2xi8> -> tile<2xf8E8M0FNU>", "tile<2xi8>")
    assert d.message == (
        "'cuda_tile.itof' op integer to f8E8M0FNU conversion is not supported, please first convert to another "
        "float type"
    )


def test_itof_rounding_mode() -> None:
    _, d = only("%0 = itof %x signed rounding<zero> : tile<2xi8> -> tile<2xf32>", "tile<2xi8>")
    assert d.message == "'cuda_tile.itof' op invalid rounding mode specified. Only 'nearest_even' is supported"


def test_ftoi_rounding_mode_in_generic_form() -> None:
    body = (
        '%0 = "cuda_tile.ftoi"(%x) <{rounding_mode = #cuda_tile.rounding<zero>, '
        "signedness = #cuda_tile.signedness<signed>}> : (!cuda_tile.tile<4xf32>) -> !cuda_tile.tile<4xi32>"
    )
    _, d = only(body, "tile<4xf32>")
    assert d.message == "'cuda_tile.ftoi' op invalid rounding mode specified. Only 'nearest_int_to_zero' is supported"
    assert d.fixes == []


def test_ftoi_unknown_integer_rounding_is_a_parse_error() -> None:
    _, d = only("%0 = ftoi %x signed rounding<zero> : tile<4xf32> -> tile<4xi32>", "tile<4xf32>")
    assert d.message == (
        "custom op 'cuda_tile.ftoi' expected rounding mode to be one of: 'nearest_int_to_zero', got: 'zero'"
    )


@pytest.mark.parametrize("ty", ["tile<i64>", "tile<32x64xi32>"])
def test_iota_is_rank_one(ty: str) -> None:
    _, d = only(f"%0 = iota : {ty}", "tile<i32>")
    assert d.message == "'cuda_tile.iota' op expects result type to be 1-d tile"
    assert d.code == "iota-shape"


@pytest.mark.parametrize(("count", "element"), [(512, "i8"), (4, "i1"), (65536 * 2, "i16")])
def test_iota_length_fits_the_element_type(count: int, element: str) -> None:
    _, d = only(f"%0 = iota : tile<{count}x{element}>", "tile<i32>")
    assert d.message == (
        f"'cuda_tile.iota' op the number of elements {count} exceeds the maximum value of element type '{element}'"
    )
    assert d.code == "iota-range"


def test_pointer_conversions_use_the_op_table() -> None:
    _, d = only("%0 = int_to_ptr %x : tile<i32> -> tile<ptr<i8>>", "tile<i32>")
    assert d.message.endswith("op operand #0 must be tile of i64 values, but got '!cuda_tile.tile<i32>'")
    _, d = only("%0 = ptr_to_int %x : tile<ptr<i8>> -> tile<i32>", "tile<ptr<i8>>")
    assert d.message.endswith("op result #0 must be tile of i64 values, but got '!cuda_tile.tile<i32>'")


def test_malformed_generic_ops_do_not_raise() -> None:
    for body in (
        '%0 = "cuda_tile.bitcast"(%x) : (!cuda_tile.tile<4xi32>) -> !cuda_tile.token',
        '%0 = "cuda_tile.exti"(%x) : (!cuda_tile.tile<4xi32>) -> !cuda_tile.tile<4xf32>',
        '%0 = "cuda_tile.ftof"(%x) <{rounding_mode = 1 : i32}> : (!cuda_tile.tile<4xi32>) -> !cuda_tile.tile<4xf32>',
        '%0 = "cuda_tile.iota"() : () -> !cuda_tile.token',
        '"cuda_tile.iota"() : () -> ()',
        '"cuda_tile.trunci"() : () -> ()',
    ):
        run("    " + body, "tile<4xi32>")
