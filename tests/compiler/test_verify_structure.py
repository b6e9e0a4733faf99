"""Modules, kernels, symbols, regions, and the misc ops: assume, print_tko, global."""

from __future__ import annotations

import pytest

from compiler.ir.diagnostics import Diagnostic, Severity
from compiler.verify import VerifyOptions, check_text
from compiler.verify.ops_misc import count_conversions


def diags(text: str, keep_going: bool = False) -> list[Diagnostic]:
    return check_text(text, "t.mlir", VerifyOptions(keep_going=keep_going), allow_unregistered=True)[1]


def only_error(text: str) -> Diagnostic:
    found = [d for d in diags(text) if d.severity == Severity.ERROR]
    assert len(found) == 1, [d.format() for d in found]
    return found[0]


def module(body: str) -> str:
    return f"cuda_tile.module @m {{\n{body}\n}}\n"


def func(body: str, args: str = "") -> str:
    return module(f"  testing$func @f({args}) {{\n{body}\n  }}")


# ------------------------------------------------------------------ valid


def test_valid_module_has_no_diagnostics() -> None:
    text = module(
        "  global @g <f32: [1.0, 2.0]> : tile<2xf32>\n"
        "  entry @k(%p: tile<ptr<f32>>, %n: tile<i32>) {\n"
        "    %q = get_global @g : tile<ptr<f32>>\n"
        "    %a = assume div_by<16>, %n : tile<i32>\n"
        "    %b = assume bounded<0, ?>, %a : tile<i32>\n"
        '    %t = print_tko "n = %d, 100%%\\n", %b : tile<i32> -> token\n'
        "    %x, %y, %z = get_tile_block_id : tile<i32>\n"
        "  }"
    )
    assert diags(text) == []


# ------------------------------------------------------------------ regions and kernels


def test_function_region_needs_a_block() -> None:
    text = module('  "cuda_tile.testing$func"() ({ }) {function_type = () -> (), sym_name = "foo"} : () -> ()')
    d = only_error(text)
    assert d.message == (
        "'cuda_tile.testing$func' op region #0 ('body') failed to verify constraint: region with 1 blocks"
    )
    assert d.code == "region-blocks" and d.location()[1] == 2


def test_entry_block_arguments_match_signature() -> None:
    text = '"cuda_tile.testing$func"() ({ ^bb0(%x: !cuda_tile.tile<i32>): cuda_tile.return })'
    text += ' {function_type = () -> (), sym_name = "f"} : () -> ()\n'
    assert only_error(text).message == (
        "'cuda_tile.testing$func' op entry block must have 0 arguments to match function signature"
    )


def test_body_must_end_with_return() -> None:
    text = '"cuda_tile.testing$func"() ({ "foo"() : () -> () })'
    text += ' {function_type = () -> (), sym_name = "f"} : () -> ()\n'
    d = only_error(text)
    assert d.message == "'cuda_tile.testing$func' op expects regions to end with 'cuda_tile.return', found 'foo'"
    assert [r.message for r in d.related] == [
        "in custom textual format, the absence of terminator implies 'cuda_tile.return'"
    ]


def test_entry_must_not_return_values() -> None:
    text = module("  entry @k(%a: tile<f32>) -> tile<f32> {\n    return %a : tile<f32>\n  }")
    d = only_error(text)
    assert d.message == "'cuda_tile.entry' op entry op must not return values"
    assert d.code == "entry-results" and d.location()[1] == 2


def test_entry_arguments_are_scalar() -> None:
    d = only_error(module("  entry @k(%a: tile<2x2xf32>) {}"))
    assert d.message == "'cuda_tile.entry' op entry op must have scalar types (rank 0 !cuda_tile.tile)"
    assert d.code == "entry-arguments" and d.location()[1:] == (2, 12)  # the argument


@pytest.mark.parametrize(
    "line",
    [
        "  entry pluto @k() {}",
        "  global invalid @g <i32: [42]> : tile<1xi32>",
        '  global "x" @g <i32: [1]> : tile<1xi32>',
    ],
)
def test_symbol_name_expected(line: str) -> None:
    d = only_error(module(line))
    assert d.message == "expected valid '@'-identifier for symbol name" and d.location()[1] == 2


def test_symbol_redefinition() -> None:
    text = module("  global @g <f32: [1.0]> : tile<1xf32>\n  entry @g() {}")
    d = only_error(text)
    assert d.message == "redefinition of symbol named 'g'" and d.code == "symbol-redefinition"
    assert d.location()[1] == 3
    assert [r.message for r in d.related] == ["see existing symbol definition here"]
    assert d.source is not None and d.source.line_col(d.related[0].span.start)[0] == 1


# ------------------------------------------------------------------ globals


def test_get_global_unknown_and_mismatched() -> None:
    unknown = module("  entry @k() {\n    %0 = get_global @g1 : tile<ptr<f32>>\n  }")
    d = only_error(unknown)
    assert d.message == "'cuda_tile.get_global' op 'g1' does not reference a valid global"
    assert d.code == "unknown-global" and d.location()[1] == 3
    not_global = module("  entry @g1() {}\n  entry @k() {\n    %0 = get_global @g1 : tile<ptr<f32>>\n  }")
    assert "'g1' does not reference a valid global" in only_error(not_global).message
    mismatch = module(
        "  global @g1 <f16: [1.0, 2.0]> : tile<2xf16>\n  entry @k() {\n    %0 = get_global @g1 : tile<ptr<f32>>\n  }"
    )
    assert only_error(mismatch).message == (
        "'cuda_tile.get_global' op pointee type of result type '!cuda_tile.ptr<f32>' does not match type 'f16' "
        "of the global @g1"
    )


def test_global_rank() -> None:
    d = only_error(module("  global @g <f16: [[1.0, 2.0]]> : tile<1x2xf16>"))
    assert d.message == "'cuda_tile.global' op type must have rank 1" and d.code == "global-rank"


# ------------------------------------------------------------------ assume


@pytest.mark.parametrize(
    ("arg", "pred", "message"),
    [
        (
            "tile<f32>",
            "div_by<16>",
            "'cuda_tile.div_by' is valid only for tile of integer/pointer or tensor_view values",
        ),
        ("tile<i8>", "div_by<9223372036854775808>", "'cuda_tile.div_by' divisor is too large"),
        ("tile<16xi32>", "div_by<7>", "'cuda_tile.div_by' divisor must be a power of 2"),
        (
            "tile<ptr<f16>>",
            "div_by<1, every 8 along 0>",
            "'cuda_tile.div_by' 'every'/'along' cannot be used if the constrained value is a 0D tile",
        ),
        (
            "tensor_view<64x64xf16, strides=[1,1]>",
            "div_by<1, every 8 along 0>",
            "'cuda_tile.div_by' 'every'/'along' cannot be used if the constrained value is a tensor_view",
        ),
        (
            "tile<16xi32>",
            "div_by<1, every 24 along 0>",
            "expected 'cuda_tile.div_by' every_dim to be within 0 and the size of the respective dimension (16)",
        ),
        (
            "tile<16xi32>",
            "div_by<1, every 2 along 1>",
            "'cuda_tile.div_by' every_dim (1) must be >= 0 and < tile rank (1)",
        ),
        (
            "tile<ptr<f16>>",
            "same_elements<[8]>",
            "expected number of values in 'cuda_tile.same_elements' (1) to match rank of constrained tile (0)",
        ),
        (
            "tile<16xf32>",
            "same_elements<[8]>",
            "'cuda_tile.same_elements' is valid only for tile of integer/pointer values",
        ),
        (
            "tile<16xi32>",
            "same_elements<[24]>",
            "expected 'cuda_tile.same_elements' value 0 to be within 0 and the size of the respective dimension (16)",
        ),
        ("tile<16xf32>", "bounded<0, 0>", "'cuda_tile.bounded' is valid only for tile of integer values"),
        ("tile<16xi8>", "bounded<0, 128>", "'cuda_tile.bounded' expects upper bound to be within [-128, 127]"),
        ("tile<16xi8>", "bounded<-129, 6>", "'cuda_tile.bounded' expects lower bound to be within [-128, 127]"),
        (
            "tile<16xi8>",
            "bounded<8, 6>",
            "'cuda_tile.bounded' expects lower bound to be less than or equal to upper bound",
        ),
    ],
)
def test_assume_predicates(arg: str, pred: str, message: str) -> None:
    d = only_error(func(f"    %r = assume {pred}, %a : {arg}", args=f"%a: {arg}"))
    assert d.message == f"'cuda_tile.assume' op {message}"
    assert d.code == "assume-predicate" and d.location()[1] == 3


def test_assume_needs_a_predicate_attribute() -> None:
    d = only_error(func("    %r = assume 32 : i32, %a : tile<f32>", args="%a: tile<f32>"))
    assert d.message == "expected assume predicate attribute" and d.location()[1:] == (3, 17)


# ------------------------------------------------------------------ print_tko


def test_format_conversions() -> None:
    assert count_conversions("a %d b %5.2f c %%") == 2
    assert count_conversions("100%") is None
    assert count_conversions("% %") is None  # NVIDIA's scan: the second `%` opens a new conversion


def test_print_operand_count() -> None:
    body = '    %t = print_tko "x = %f, %f", %a : tile<2xf16> -> token'
    d = only_error(func(body, args="%a: tile<2xf16>"))
    assert d.message == "'cuda_tile.print_tko' op incorrect number of operands: expected 2, found 1"
    assert d.code == "print-format" and d.location()[1] == 3
    body = '    %t = print_tko "x = %", %a : tile<2xf16> -> token'
    assert only_error(func(body, args="%a: tile<2xf16>")).message == (
        "'cuda_tile.print_tko' op found unterminated format expression"
    )


def test_print_needs_a_string() -> None:
    d = only_error(func("    %t = print_tko : tile<2xf16> -> token"))
    assert d.message == "expected attribute value" and d.location()[1:] == (3, 20)


def test_keep_going_reports_each_kernel() -> None:
    text = module("  entry @a(%x: tile<2xf32>) {}\n  entry @b(%x: tile<4xf32>) {}")
    assert len(diags(text, keep_going=True)) == 2
    assert len(diags(text)) == 2  # isolated kernels are verified independently, as in MLIR


def test_argument_and_result_attributes() -> None:
    d = only_error(module("  testing$func @f(%a: tile<f32> {foo = 1}) {}"))
    assert d.message == "'cuda_tile.testing$func' op arguments may only have dialect attributes"
    assert d.code == "function-attrs"
    text = module(
        "  testing$func @f(%a: tile<f32> {cuda_tile.x = 1}) -> (tile<f32> {bar}) {\n    return %a : tile<f32>\n  }"
    )
    assert only_error(text).message == "'cuda_tile.testing$func' op results may only have dialect attributes"
    assert diags(module("  testing$func @f(%a: tile<f32> {cuda_tile.x = 1}) {}")) == []
