"""The verifier on the arithmetic, comparison and select ops: MLIR's messages, codes,
locations and fixes, at parse time (custom directives) and at verification time."""

from __future__ import annotations

import pytest

from compiler.ir.diagnostics import Diagnostic
from compiler.verify import VerifyOptions, check_text

MLIR = VerifyOptions(keep_going=False)


def _func(args: str, body: str) -> str:
    return f"cuda_tile.module @m {{\n  cuda_tile.testing$func @f({args}) {{\n{body}\n  }}\n}}\n"


def _diags(text: str, options: VerifyOptions = MLIR) -> list[Diagnostic]:
    return check_text(text, "t.mlir", options)[1]


def _one(text: str) -> Diagnostic:
    diags = _diags(text)
    assert len(diags) == 1, [d.format() for d in diags]
    return diags[0]


def _at(text: str, d: Diagnostic) -> str:
    return text[d.span.start : d.span.end]


def _apply(text: str, d: Diagnostic) -> str:
    (fix,) = d.fixes
    return fix.apply(text)


F16 = "%a: !cuda_tile.tile<4xf16>"
F32 = "%a: !cuda_tile.tile<4xf32>"
BF16 = "%a: !cuda_tile.tile<4xbf16>"
I32 = "%a: !cuda_tile.tile<4xi32>"


# ------------------------------------------------------------------ valid


VALID = [
    (F32, "    %0 = cuda_tile.addf %a, %a rounding<zero> flush_to_zero : !cuda_tile.tile<4xf32>"),
    (F16, "    %0 = cuda_tile.subf %a, %a rounding<positive_inf> : !cuda_tile.tile<4xf16>"),
    (F32, "    %0 = cuda_tile.mulf %a, %a flush_to_zero : !cuda_tile.tile<4xf32>"),
    (F32, "    %0 = cuda_tile.fma %a, %a, %a rounding<negative_inf> flush_to_zero : !cuda_tile.tile<4xf32>"),
    (F32, "    %0 = cuda_tile.divf %a, %a rounding<approx> flush_to_zero : !cuda_tile.tile<4xf32>"),
    (F32, "    %0 = cuda_tile.divf %a, %a rounding<full> : !cuda_tile.tile<4xf32>"),
    (F16, "    %0 = cuda_tile.divf %a, %a rounding<zero> : !cuda_tile.tile<4xf16>"),
    (F32, "    %0 = cuda_tile.maxf %a, %a flush_to_zero propagate_nan : !cuda_tile.tile<4xf32>"),
    (BF16, "    %0 = cuda_tile.minf %a, %a propagate_nan : !cuda_tile.tile<4xbf16>"),
    (I32, "    %0 = cuda_tile.divi %a, %a signed rounding<negative_inf> : !cuda_tile.tile<4xi32>"),
    (I32, "    %0 = cuda_tile.divi %a, %a unsigned rounding<positive_inf> : !cuda_tile.tile<4xi32>"),
    (I32, "    %0 = cuda_tile.negi %a overflow<no_signed_wrap> : !cuda_tile.tile<4xi32>"),
    (I32, "    %0 = cuda_tile.addi %a, %a overflow<no_wrap> : !cuda_tile.tile<4xi32>"),
    (I32, "    %0 = cuda_tile.cmpi less_than %a, %a, unsigned : !cuda_tile.tile<4xi32> -> !cuda_tile.tile<4xi1>"),
    (F32, "    %0 = cuda_tile.cmpf equal unordered %a, %a : !cuda_tile.tile<4xf32> -> !cuda_tile.tile<4xi1>"),
    (
        "%c: !cuda_tile.tile<4xi1>, " + F32,
        "    %0 = cuda_tile.select %c, %a, %a : !cuda_tile.tile<4xi1>, !cuda_tile.tile<4xf32>",
    ),
]


@pytest.mark.parametrize("args,body", VALID)
def test_valid_ops_give_no_diagnostics(args: str, body: str) -> None:
    assert _diags(_func(args, body)) == []
    assert _diags(_func(args, body), VerifyOptions()) == []


# ------------------------------------------------------------------ flush_to_zero / approx / full


@pytest.mark.parametrize("op", ["addf", "subf", "mulf", "divf", "maxf", "minf"])
def test_flush_to_zero_needs_f32(op: str) -> None:
    text = _func(F16, f"    %0 = cuda_tile.{op} %a, %a flush_to_zero : !cuda_tile.tile<4xf16>")
    d = _one(text)
    assert d.message == (f"'cuda_tile.{op}' op flush_to_zero modifier only supported for f32 data type, but got: 'f16'")
    assert d.code == "flush-to-zero"
    assert d.location()[1:] == (3, text.splitlines()[2].index("flush_to_zero") + 1)
    assert _at(text, d) == "flush_to_zero"
    fixed = _apply(text, d)
    assert "flush_to_zero" not in fixed
    assert _diags(fixed) == []


def test_flush_to_zero_on_fma_names_bf16() -> None:
    text = _func(BF16, "    %0 = cuda_tile.fma %a, %a, %a flush_to_zero : !cuda_tile.tile<4xbf16>")
    assert _one(text).message.endswith("flush_to_zero modifier only supported for f32 data type, but got: 'bf16'")


@pytest.mark.parametrize("mode", ["approx", "full"])
def test_divf_approx_and_full_need_f32(mode: str) -> None:
    text = _func(F16, f"    %0 = cuda_tile.divf %a, %a rounding<{mode}> : !cuda_tile.tile<4xf16>")
    d = _one(text)
    assert d.message == f"'cuda_tile.divf' op {mode} modifier only supported for f32 data type, but got: 'f16'"
    assert d.code == f"{mode}-f32"
    assert _at(text, d) == f"rounding<{mode}>"
    assert _diags(_apply(text, d)) == []


def test_divf_flush_to_zero_is_checked_before_approx() -> None:
    text = _func(F16, "    %0 = cuda_tile.divf %a, %a rounding<approx> flush_to_zero : !cuda_tile.tile<4xf16>")
    assert "flush_to_zero modifier" in _one(text).message


# ------------------------------------------------------------------ rounding modes


def _generic(op: str, mode: str, elem: str = "f32", extra: str = "") -> str:
    t = f"!cuda_tile.tile<4x{elem}>"
    return (
        f'"cuda_tile.module"() <{{sym_name = "m"}}> ({{\n'
        f'  "cuda_tile.testing$func"() <{{arg_attrs = [{{}}], function_type = ({t}) -> (), sym_name = "f"}}> ({{\n'
        f"  ^bb0(%a: {t}):\n"
        f'    %0 = "cuda_tile.{op}"(%a, %a) <{{{extra}rounding_mode = #cuda_tile.rounding<{mode}>}}> '
        f": ({t}, {t}) -> {t}\n"
        f'    "cuda_tile.return"() : () -> ()\n'
        f"  }}) : () -> ()\n"
        f"}}) : () -> ()\n"
    )


@pytest.mark.parametrize("op", ["addf", "subf", "mulf"])
@pytest.mark.parametrize("mode", ["approx", "full", "nearest_int_to_zero"])
def test_ieee_ops_reject_other_rounding_modes(op: str, mode: str) -> None:
    text = _generic(op, mode)
    d = _one(text)
    assert d.message == (
        f"'cuda_tile.{op}' op invalid rounding mode specified, expect one of "
        "[nearest_even, zero, negative_inf, positive_inf]"
    )
    assert d.code == "rounding-mode"
    assert d.location()[1] == 4
    assert _at(text, d) == f"#cuda_tile.rounding<{mode}>"
    assert d.fixes == []  # the generic form gets no edits


def test_rounding_mode_is_checked_before_flush_to_zero() -> None:
    d = _one(_generic("addf", "full", "f16", "flush_to_zero, "))
    assert "invalid rounding mode specified" in d.message


def test_divf_rejects_integer_rounding() -> None:
    text = _func(F32, "    %0 = cuda_tile.divf %a, %a rounding<nearest_int_to_zero> : !cuda_tile.tile<4xf32>")
    d = _one(text)
    assert d.message == (
        "'cuda_tile.divf' op invalid rounding mode specified, expect one of "
        "[nearest_even, zero, negative_inf, positive_inf, approx, full]"
    )
    assert _at(text, d) == "rounding<nearest_int_to_zero>"


def test_divi_negative_inf_is_signed_only() -> None:
    text = _func(I32, "    %0 = cuda_tile.divi %a, %a unsigned rounding<negative_inf> : !cuda_tile.tile<4xi32>")
    d = _one(text)
    assert d.message == "'cuda_tile.divi' op rounding mode 'negative_inf' is not allowed with 'unsigned' flag"
    assert d.code == "rounding-mode"
    assert _at(text, d) == "rounding<negative_inf>"


def test_divi_rejects_nearest_even() -> None:
    text = _func(I32, "    %0 = cuda_tile.divi %a, %a signed rounding<nearest_even> : !cuda_tile.tile<4xi32>")
    d = _one(text)
    assert d.message == (
        "'cuda_tile.divi' op invalid rounding mode specified, expect one of [zero, negative_inf, positive_inf]"
    )


# ------------------------------------------------------------------ overflow, select


def test_negi_rejects_no_unsigned_wrap() -> None:
    text = _func(I32, "    %0 = cuda_tile.negi %a overflow<no_unsigned_wrap> : !cuda_tile.tile<4xi32>")
    d = _one(text)
    assert d.message == "'cuda_tile.negi' op 'no_unsigned_wrap' overflow flag is not supported"
    assert d.code == "overflow-flag"
    assert _at(text, d) == "overflow<no_unsigned_wrap>"
    fixed = _apply(text, d)
    assert "%0 = cuda_tile.negi %a : " in fixed
    assert _diags(fixed) == []


def test_select_rejects_f4() -> None:
    text = _func(
        "%c: !cuda_tile.tile<4xi1>, %a: !cuda_tile.tile<4xf4E2M1FN>",
        "    %0 = cuda_tile.select %c, %a, %a : !cuda_tile.tile<4xi1>, !cuda_tile.tile<4xf4E2M1FN>",
    )
    d = _one(text)
    assert d.message == "'cuda_tile.select' op cannot operate on sub-byte type F4E2M1FN"
    assert d.location()[1] == 3


def test_generic_checks_come_first() -> None:
    text = _func(
        "%a: !cuda_tile.tile<4xi32>",
        "    %0 = cuda_tile.addf %a, %a flush_to_zero : !cuda_tile.tile<4xi32>",
    )
    assert _one(text).message.startswith("'cuda_tile.addf' op operand #0 must be tile of f16 or bf16 or f32 or f64")


# ------------------------------------------------------------------ parse-time messages

PREDICATES = "{'equal', 'not_equal', 'less_than', 'less_than_or_equal', 'greater_than', 'greater_than_or_equal'}"


def test_cmpi_unknown_predicate() -> None:
    text = _func(I32, "    %0 = cuda_tile.cmpi bogus %a, %a, signed : !cuda_tile.tile<4xi32> -> !cuda_tile.tile<4xi1>")
    d = _one(text)
    assert d.message == f"custom op 'cuda_tile.cmpi' expected 'comparison_predicate' to be one of: {PREDICATES}"
    assert _at(text, d) == "bogus"


def test_cmpi_missing_predicate_gives_two_errors() -> None:
    text = _func(I32, "    %0 = cuda_tile.cmpi %a, %a, signed : !cuda_tile.tile<4xi32> -> !cuda_tile.tile<4xi1>")
    first, second = _diags(text)
    assert first.message == "custom op 'cuda_tile.cmpi' expected valid keyword"
    assert second.message == f"custom op 'cuda_tile.cmpi' expected 'comparison_predicate' to be one of: {PREDICATES}"
    assert first.span == second.span
    assert _at(text, first) == "%a"


def test_cmpf_bad_ordering() -> None:
    text = _func(F32, "    %0 = cuda_tile.cmpf equal signed %a, %a : !cuda_tile.tile<4xf32> -> !cuda_tile.tile<4xi1>")
    d = _one(text)
    assert d.message == (
        "custom op 'cuda_tile.cmpf' expected 'comparison_ordering' to be one of: {'ordered', 'unordered'}"
    )


def test_missing_signedness_gives_two_errors() -> None:
    text = _func(I32, "    %0 = cuda_tile.maxi %a, %a : !cuda_tile.tile<4xi32>")
    messages = [d.message for d in _diags(text)]
    assert messages == [
        "custom op 'cuda_tile.maxi' expected valid keyword",
        "custom op 'cuda_tile.maxi' expected signedness to be one of: {'signed', 'unsigned'}",
    ]


@pytest.mark.parametrize("mode", ["approx", "full", "bogus"])
def test_ieee_rounding_directive_names_the_mode(mode: str) -> None:
    text = _func(F32, f"    %0 = cuda_tile.mulf %a, %a rounding<{mode}> : !cuda_tile.tile<4xf32>")
    d = _one(text)
    assert d.message == (
        "custom op 'cuda_tile.mulf' expected rounding mode to be one of: "
        f"'nearest_even', 'zero', 'negative_inf', 'positive_inf', got: '{mode}'"
    )
    assert d.location()[1] == 3


def test_select_missing_result_type() -> None:
    text = _func(
        "%c: !cuda_tile.tile<4xi1>, " + F32,
        "    %0 = cuda_tile.select %c, %a, %a : !cuda_tile.tile<4xi1>,",
    )
    d = _one(text)
    assert d.message.startswith("custom op 'cuda_tile.select' expected valid keyword")
    assert d.location()[1] == 4  # at the `}` that follows


# ------------------------------------------------------------------ malformed IR


@pytest.mark.parametrize("name", ["addf", "subf", "mulf", "fma", "divf", "maxf", "minf", "divi", "negi", "select"])
def test_malformed_ops_never_raise(name: str) -> None:
    """Hand-built ops with missing results, opaque types, attributes of the wrong kind and no
    source text: the verifiers report or skip, never crash."""
    from compiler.dialect import lookup_op
    from compiler.ir import attributes as A
    from compiler.ir import types as T
    from compiler.ir.core import Module, Operation
    from compiler.verify import OpFailed, Verifier
    from compiler.verify.registry import OP_VERIFIERS

    check_text("", "t.mlir")  # loads the verifier modules
    opdef = lookup_op(name)
    wrong = {a.name: A.StringAttr("x") for a in opdef.attributes}
    rounding = {"rounding_mode": A.enum_attr("rounding", "full"), "rounding": A.enum_attr("rounding", "approx")}
    cases = [
        Operation(opdef.name, opdef),
        Operation(opdef.name, opdef, result_types=[T.OpaqueType("index")], properties=wrong),
        Operation(
            opdef.name, opdef, result_types=[T.OpaqueType("index")], properties={**rounding, "flush_to_zero": A.UNIT}
        ),
        Operation(opdef.name, opdef, result_types=[T.FLOAT_TYPES["f4E2M1FN"]], properties={"flush_to_zero": A.UNIT}),
    ]
    for op in cases:
        v = Verifier(Module(None))
        for fn in OP_VERIFIERS[opdef.name]:
            try:
                fn(v, op)
            except OpFailed:
                pass
        for d in v.diagnostics:
            d.format(with_snippet=True)
