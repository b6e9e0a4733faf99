"""The math ops' verifiers and rounding-mode parsing: MLIR's messages, codes, lines, fixes."""

from __future__ import annotations

import pytest

from compiler.ir.diagnostics import Diagnostic
from compiler.verify import VerifyOptions, check_text


def run(body: str, arg: str = "tile<4xf32>", keep_going: bool = False) -> tuple[str, list[Diagnostic]]:
    """Verify `body` (one or more lines) inside a function taking `%x: arg`; the body
    starts on line 3."""
    text = f"cuda_tile.module @m {{\n  testing$func @f(%x: {arg}) {{\n{body}\n  }}\n}}\n"
    _, diags = check_text(text, "t.mlir", VerifyOptions(keep_going=keep_going))
    return text, diags


def only(body: str, arg: str = "tile<4xf32>") -> tuple[str, Diagnostic]:
    text, diags = run(body, arg)
    assert len(diags) == 1, [d.format() for d in diags]
    return text, diags[0]


def apply_fix(text: str, d: Diagnostic) -> str:
    (fix,) = d.fixes
    return fix.apply(text)


VALID = [
    ("%0 = exp %x : tile<4xf32>", "tile<4xf32>"),
    ("%0 = exp %x rounding<approx> : tile<4xf32>", "tile<4xf32>"),
    ("%0 = exp %x rounding<full> : tile<4xf16>", "tile<4xf16>"),
    ("%0 = exp2 %x flush_to_zero : tile<4xf32>", "tile<4xf32>"),
    ("%0 = exp2 %x : tile<4xf64>", "tile<4xf64>"),
    ("%0 = rsqrt %x flush_to_zero : tile<4xf32>", "tile<4xf32>"),
    ("%0 = sqrt %x rounding<approx> flush_to_zero : tile<4xf32>", "tile<4xf32>"),
    ("%0 = sqrt %x rounding<zero> : tile<4xf64>", "tile<4xf64>"),
    ("%0 = sqrt %x : tile<4xbf16>", "tile<4xbf16>"),
    ("%0 = tanh %x rounding<approx> : tile<4xf32>", "tile<4xf32>"),
    ("%0 = tanh %x : tile<4xf16>", "tile<4xf16>"),
    ("%0 = log %x : tile<4xf16>", "tile<4xf16>"),
    ("%0 = atan2 %x, %x : tile<4xf32>", "tile<4xf32>"),
    ("%0 = pow %x, %x : tile<4xf64>", "tile<4xf64>"),
]


@pytest.mark.parametrize(("body", "arg"), VALID)
def test_valid_ops_give_no_diagnostics(body: str, arg: str) -> None:
    _, diags = run("    " + body, arg)
    assert diags == []


@pytest.mark.parametrize(
    ("body", "arg", "got"),
    [
        ("%0 = exp2 %x flush_to_zero : tile<4xf16>", "tile<4xf16>", "f16"),
        ("%0 = rsqrt %x flush_to_zero : tile<4xf64>", "tile<4xf64>", "f64"),
        ("%0 = sqrt %x flush_to_zero : tile<4xbf16>", "tile<4xbf16>", "bf16"),
    ],
)
def test_flush_to_zero_is_f32_only(body: str, arg: str, got: str) -> None:
    text, d = only("    " + body, arg)
    op = body.split()[2]
    assert d.message == f"'cuda_tile.{op}' op flush_to_zero modifier only supported for f32 data type, but got: '{got}'"
    assert d.code == "flush-to-zero"
    _, line, col = d.location()
    assert line == 3
    assert text[d.span.start : d.span.end] == "flush_to_zero"
    fixed = apply_fix(text, d)
    assert "flush_to_zero" not in fixed
    assert check_text(fixed.replace(arg, "tile<4xf32>"))[1] == []


@pytest.mark.parametrize("op", ["exp", "tanh", "sqrt"])
@pytest.mark.parametrize("element", ["f16", "bf16", "f64"])
def test_approx_is_f32_only(op: str, element: str) -> None:
    text, d = only(f"    %0 = {op} %x rounding<approx> : tile<4x{element}>", f"tile<4x{element}>")
    assert d.message == f"'cuda_tile.{op}' op approx modifier only supported for f32 data type, but got: '{element}'"
    assert d.location()[1] == 3
    assert text[d.span.start : d.span.end] == "rounding<approx>"
    fixed = apply_fix(text, d)
    assert check_text(fixed, "fixed.mlir")[1] == []


def test_sqrt_checks_flush_to_zero_before_approx() -> None:
    _, d = only("    %0 = sqrt %x rounding<approx> flush_to_zero : tile<4xf16>", "tile<4xf16>")
    assert "flush_to_zero modifier only supported for f32 data type, but got: 'f16'" in d.message


def test_tanh_wrong_rounding_is_reported_by_the_verifier() -> None:
    # Any rounding mode parses for tanh; the verifier reports the wrong one.
    text, d = only("    %0 = tanh %x rounding<nearest_even> : tile<4xf32>")
    assert d.message == "'cuda_tile.tanh' op invalid rounding mode specified, expect one of [approx, full]"
    assert d.code == "rounding-mode"
    assert text[d.span.start : d.span.end] == "rounding<nearest_even>"
    assert check_text(apply_fix(text, d))[1] == []


def test_tanh_goes_on_after_a_wrong_rounding_mode() -> None:
    # cuda-tile-opt reports the mode without stopping, then the ops after it are verified.
    body = "    %0 = tanh %x rounding<zero> : tile<4xf16>\n    %1 = exp2 %x flush_to_zero : tile<4xf16>"
    _, diags = run(body, "tile<4xf16>")
    assert [d.location()[1] for d in diags] == [3, 4]
    assert "invalid rounding mode specified" in diags[0].message


def test_exp_wrong_rounding_mode() -> None:
    _, d = only("    %0 = exp %x rounding<zero> : tile<4xf32>")
    assert d.message == "'cuda_tile.exp' op invalid rounding mode specified, expect one of [approx, full]"


def test_sqrt_full_rounding_in_generic_form() -> None:
    body = (
        '    %0 = "cuda_tile.sqrt"(%x) <{rounding_mode = #cuda_tile.rounding<full>}> '
        ": (!cuda_tile.tile<4xf32>) -> !cuda_tile.tile<4xf32>"
    )
    text, d = only(body)
    assert d.message == (
        "'cuda_tile.sqrt' op invalid rounding mode specified, expect one of "
        "[nearest_even, zero, negative_inf, positive_inf, approx]"
    )
    assert d.location()[1] == 3
    assert d.fixes == []


def test_unknown_rounding_mode_is_a_parse_error() -> None:
    _, d = only("    %0 = sqrt %x rounding<pippo> : tile<4xf16>", "tile<4xf16>")
    assert d.message == (
        "custom op 'cuda_tile.sqrt' expected rounding mode to be one of: "
        "'nearest_even', 'zero', 'negative_inf', 'positive_inf', 'approx'"
    )
    assert d.location()[1:] == (3, 27)  # at the word


def test_ieee_rounding_names_the_mode_it_got() -> None:
    _, d = only("    %0 = itof %x signed rounding<approx> : tile<4xi32> -> tile<4xf32>", "tile<4xi32>")
    assert d.message == (
        "custom op 'cuda_tile.itof' expected rounding mode to be one of: "
        "'nearest_even', 'zero', 'negative_inf', 'positive_inf', got: 'approx'"
    )


def test_rounding_mode_must_be_a_keyword() -> None:
    _, d = only("    %0 = exp %x rounding<1> : tile<4xf32>")
    assert d.message == "custom op 'cuda_tile.exp' expected valid keyword"


def test_operand_type_comes_first() -> None:
    _, d = only("    %0 = exp %x rounding<approx> : tile<4xi32>", "tile<4xi32>")
    assert d.message == (
        "'cuda_tile.exp' op operand #0 must be tile of f16 or bf16 or f32 or f64 values, "
        "but got '!cuda_tile.tile<4xi32>'"
    )


def test_keep_going_reports_every_op() -> None:
    body = "    %0 = exp2 %x flush_to_zero : tile<4xf16>\n    %1 = tanh %x rounding<approx> : tile<4xf16>"
    _, diags = run(body, "tile<4xf16>", keep_going=True)
    assert [(d.location()[1], d.code) for d in diags] == [(3, "flush-to-zero"), (4, "approx-f32")]


def test_generic_form_without_attributes_does_not_raise() -> None:
    body = '    %0 = "cuda_tile.tanh"(%x) : (!cuda_tile.tile<4xf16>) -> !cuda_tile.tile<4xf16>'
    _, diags = run(body, "tile<4xf16>")
    assert diags == []
    body = (
        '    %0 = "cuda_tile.exp"(%x) <{rounding_mode = 3 : i32}> : (!cuda_tile.tile<4xf16>) -> !cuda_tile.tile<4xf16>'
    )
    run(body, "tile<4xf16>")  # whatever it reports, it must not raise
