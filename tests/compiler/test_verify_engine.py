"""The verifier's driver: generic checks from the op table, MLIR's stop-at-first-error mode
against keep-going, and diagnostics as data (code, range, related, message prefix)."""

from __future__ import annotations

from compiler.verify import VerifyOptions, check_text

GENERIC = """cuda_tile.module @m {
  entry @k() {
    %a = constant <f32: 1.0> : tile<4xf32>
    %b = "cuda_tile.addf"(%a) : (!cuda_tile.tile<4xf32>) -> !cuda_tile.tile<4xf32>
    "cuda_tile.negf"(%a) : (!cuda_tile.tile<4xf32>) -> ()
    %d = "cuda_tile.constant"() : () -> !cuda_tile.tile<4xf32>
    return
  }
}
"""


def _found(text: str, keep_going: bool = True) -> list[tuple[int, str, str]]:
    _, diagnostics = check_text(text, "t.tileir", VerifyOptions(keep_going=keep_going))
    return [(d.location()[1], d.code, d.message) for d in diagnostics]


def test_operand_result_and_attribute_counts() -> None:
    assert _found(GENERIC) == [
        (4, "operand-count", "'cuda_tile.addf' op expected 2 operands, but found 1"),
        (5, "result-count", "'cuda_tile.negf' op requires one result"),
        (6, "missing-attribute", "'cuda_tile.constant' op requires attribute 'value'"),
    ]


def test_mlir_mode_stops_each_kernel_at_its_first_error() -> None:
    assert [line for line, _, _ in _found(GENERIC, keep_going=False)] == [4]


def test_kernels_are_verified_independently() -> None:
    two = GENERIC.replace("entry @k()", "entry @k2()", 1).replace("cuda_tile.module @m {\n", "", 1)
    text = GENERIC.replace("  }\n}\n", "  }\n" + two)
    # One error per kernel in MLIR's mode: the second kernel is verified although the first failed.
    assert [line for line, _, _ in _found(text, keep_going=False)] == [4, 11]


def test_operand_constraint_points_at_the_operand() -> None:
    text = """cuda_tile.module @m {
  entry @k() {
    %a = constant <f32: 1.0> : tile<4xf32>
    %b = addi %a, %a : tile<4xf32>
    return
  }
}
"""
    _, diagnostics = check_text(text, "t.tileir")
    (d,) = diagnostics
    assert d.code == "operand-type"
    assert d.message == (
        "'cuda_tile.addi' op operand #0 must be tile of i1 or i8 or i16 or i32 or i64 values, "
        "but got '!cuda_tile.tile<4xf32>'"
    )
    assert text[d.span.start : d.span.end] == "%a" and d.location()[1:] == (4, 15)


def test_dominance_names_the_definition() -> None:
    text = """cuda_tile.module @m {
  entry @k() {
    %b = addf %a, %a : tile<4xf32>
    %a = constant <f32: 1.0> : tile<4xf32>
    return
  }
}
"""
    _, diagnostics = check_text(text, "t.tileir")
    (d,) = diagnostics
    assert d.code == "dominance" and d.message == "operand #0 does not dominate this use"
    assert d.location()[1] == 3 and d.related[0].message.startswith("operand defined here")
    assert d.source.line_col(d.related[0].span.start)[0] + 1 == 4


def test_valid_module_has_no_diagnostics() -> None:
    text = GENERIC.split("    %b =")[0] + "    return\n  }\n}\n"
    assert _found(text) == []


REPEATED = """cuda_tile.module @m {
  entry @k() {
    %a = constant <i32: 1> : tile<i32>
    %b = constant <i32: 2> : tile<i32>
    %c = "cuda_tile.constant"() <{value = dense<3> : tile<i64>}> : () -> tile<i32>
    %d = addi %a, %b : tile<i32>
    %e = "cuda_tile.addi"(%a, %b) : (tile<i32>, tile<i32>) -> tile<i32>
    %f = "cuda_tile.addi"(%a, %b) : (tile<i32>, tile<i32>) -> tile<i64>
    %g = "cuda_tile.addi"(%a) : (tile<i32>) -> tile<i32>
    %h = "cuda_tile.constant"() : () -> tile<i32>
    return
  }
}
"""


def test_ops_like_one_that_passed_are_checked_where_they_differ() -> None:
    # The checks of an op's signature are skipped for a signature that passed before
    # (engine._signature): a property's type, a result type, the operand count and a
    # property's presence each make another signature.
    assert _found(REPEATED) == [
        (5, "type-rule", "'cuda_tile.constant' op failed to verify that all of {value, result} have same type"),
        (8, "type-rule", "'cuda_tile.addi' op failed to verify that all of {lhs, rhs, result} have same type"),
        (9, "operand-count", "'cuda_tile.addi' op expected 2 operands, but found 1"),
        (10, "missing-attribute", "'cuda_tile.constant' op requires attribute 'value'"),
    ]
