"""Structured control flow: if / for / loop and their terminators, dominance, SSA names."""

from __future__ import annotations

from compiler.ir.diagnostics import Diagnostic, Severity
from compiler.verify import VerifyOptions, check_text


def diags(text: str) -> list[Diagnostic]:
    """The diagnostics cuda-tile-opt would print (stop at the first error)."""
    return check_text(text, "t.mlir", VerifyOptions(keep_going=False), allow_unregistered=True)[1]


def only_error(text: str) -> Diagnostic:
    found = [d for d in diags(text) if d.severity == Severity.ERROR]
    assert len(found) == 1, [d.format() for d in found]
    return found[0]


def line_of(d: Diagnostic) -> int:
    return d.location()[1]


def func(body: str, args: str = "", results: str = "") -> str:
    arrow = f" -> {results}" if results else ""
    return f"cuda_tile.module @m {{\n  testing$func @f({args}){arrow} {{\n{body}\n  }}\n}}\n"


C = "    %c = constant <i1: true> : tile<i1>\n    %i = constant <i32: 1> : tile<i32>\n"


# ------------------------------------------------------------------ valid


def test_valid_control_flow_has_no_diagnostics() -> None:
    body = (
        C
        + "    %r = if %c -> (tile<i32>) {\n      yield %i : tile<i32>\n"
        + "    } else {\n      yield %i : tile<i32>\n    }\n"
        + "    %s = for %iv in (%i to %i, step %i) : tile<i32> iter_values(%acc = %r) -> (tile<i32>) {\n"
        + "      if %c { continue %acc : tile<i32> }\n      continue %iv : tile<i32>\n    }\n"
        + "    %l = loop iter_values(%v = %s) : tile<i32> -> tile<i32> {\n"
        + "      if %c { break %v : tile<i32> }\n      continue %v : tile<i32>\n    }\n"
        + "    if %c { return }"
    )
    assert diags(func(body)) == []


def test_top_level_values_used_in_nested_regions() -> None:
    # Top-level ops share one block (MLIR's builtin.module): no false dominance errors.
    text = (
        "%c0 = cuda_tile.constant <i32: 0> : !cuda_tile.tile<i32>\n"
        "%c1 = cuda_tile.constant <i32: 1> : !cuda_tile.tile<i32>\n"
        "cuda_tile.for %iv in (%c0 to %c1, step %c1) : !cuda_tile.tile<i32> {\n"
        "  %x = cuda_tile.addi %iv, %c1 : !cuda_tile.tile<i32>\n"
        "}\n"
    )
    assert diags(text) == []


# ------------------------------------------------------------------ continue / break


def test_continue_outside_loop_chain_has_note_at_ancestor() -> None:
    text = func("    %c = constant <i1: true> : tile<i1>\n    if %c {\n      continue\n    }")
    d = only_error(text)
    assert d.message == (
        "'cuda_tile.continue' op can only be nested within a ancestor chain of "
        "'cuda_tile.for', 'cuda_tile.loop', 'cuda_tile.if' operations"
    )
    assert d.code == "early-exit-nesting" and line_of(d) == 5
    assert [r.message for r in d.related] == ["see unexpected ancestor operation"]
    assert d.source is not None and d.source.line_col(d.related[0].span.start)[0] + 1 == 2


def test_break_inside_for_is_not_in_a_loop() -> None:
    body = C + "    for %iv in (%i to %i, step %i) : tile<i32> {\n      if %c {\n        break\n      }\n    }"
    d = only_error(func(body))
    assert "op can only be nested within a ancestor chain of 'cuda_tile.loop', 'cuda_tile.if' operations" in d.message
    assert line_of(d) == 7
    assert d.source is not None and d.source.line_col(d.related[0].span.start)[0] + 1 == 5  # the `for`


def test_continue_types_in_for() -> None:
    body = C + "    for %iv in (%i to %i, step %i) : tile<i32> {\n      continue %i : tile<i32>\n    }"
    d = only_error(func(body))
    assert d.message == (
        "`for` is missing a valid terminator. `continue` op should have operand types that match the "
        "parent loop return types: (), but found: ('!cuda_tile.tile<i32>')"
    )
    assert d.code == "continue-types" and line_of(d) == 6


def test_continue_types_in_loop() -> None:
    body = C + "    loop iter_values(%v = %i) : tile<i32> {\n      continue\n    }"
    d = only_error(func(body))
    assert d.message == (
        "`loop` is missing a valid terminator. `continue` op should have operand types that match the "
        "parent loop iter_values: ('!cuda_tile.tile<i32>'), but found: ()"
    )


def test_break_types() -> None:
    body = C + "    loop {\n      break %i : tile<i32>\n    }"
    d = only_error(func(body))
    assert d.message == (
        "'cuda_tile.break' op operand types must correspond to the parent loop result types: "
        "('!cuda_tile.tile<i32>') vs ()"
    )
    assert d.code == "break-types"


# ------------------------------------------------------------------ return


def test_return_count_in_function() -> None:
    d = only_error(func("", args="%a: tile<2xi16>", results="tile<2xi16>"))
    assert d.message == "'cuda_tile.return' op has 0 operands, but enclosing function (@f) returns 1"
    assert line_of(d) == 2  # the implicit return stands where the function does


def test_return_type_in_function() -> None:
    body = "    return %b : tile<2xf32>"
    d = only_error(func(body, args="%a: tile<2xi16>, %b: tile<2xf32>", results="tile<2xi16>"))
    assert d.message == (
        "type of return operand 0 ('!cuda_tile.tile<2xf32>') doesn't match function result type "
        "('!cuda_tile.tile<2xi16>') in function @f"
    )
    assert d.code == "return-type" and d.location()[1:] == (3, 12)


def test_return_inside_loop() -> None:
    body = C + "    loop {\n      if %c { return }\n    }"
    d = only_error(func(body))
    assert d.message == (
        "'cuda_tile.return' op must be used within a cuda_tile.testing$func, cuda_tile.entry, or cuda_tile.if operation"
    )


# ------------------------------------------------------------------ if


def test_if_results_need_else() -> None:
    body = C + "    %r = if %c -> (tile<i32>) {\n      yield %i : tile<i32>\n    }"
    d = only_error(func(body))
    assert d.message == "'cuda_tile.if' op has non-empty return type, must define else branch"
    assert d.code == "if-branches" and line_of(d) == 5


def test_if_branch_yields() -> None:
    then = (
        "    %r = if %c -> (tile<i64>) {\n      yield %i : tile<i32>\n    } else {\n      yield %i : tile<i32>\n    }"
    )
    assert only_error(func(C + then)).message == (
        "'cuda_tile.if' op type does not match yield type, then branch yields '!cuda_tile.tile<i32>' "
        "but op result type is '!cuda_tile.tile<i64>'"
    )
    no_yield = "    %r = if %c -> (tile<i32>) {\n      yield %i : tile<i32>\n    } else {\n    }"
    assert only_error(func(C + no_yield)).message == (
        "'cuda_tile.if' op has return type of '!cuda_tile.tile<i32>' but else branch does not yield anything"
    )
    extra = "    if %c {\n    } else {\n      yield %i : tile<i32>\n    }"
    assert only_error(func(C + extra)).message == (
        "'cuda_tile.if' op does not return a value, but else branch yields '!cuda_tile.tile<i32>'"
    )


def test_if_view_result() -> None:
    args = "%c: tile<i1>, %v: tensor_view<2xf32, strides=[1]>"
    body = (
        "    %r = if %c -> (tensor_view<2xf32, strides=[1]>) {\n      yield %v : tensor_view<2xf32, strides=[1]>\n    }"
    )
    body += " else {\n      yield %v : tensor_view<2xf32, strides=[1]>\n    }"
    d = only_error(func(body, args=args))
    assert d.message == "'cuda_tile.if' op result type 0 is a tensor_view, which is not supported"
    assert d.code == "view-result"


# ------------------------------------------------------------------ for / loop


def test_for_induction_variable_type() -> None:
    text = (
        "%c = cuda_tile.constant <i32: 0> : !cuda_tile.tile<i32>\n"
        '"cuda_tile.for"(%c, %c, %c) ({\n'
        "  ^bb0(%iv : !cuda_tile.tile<f32>):\n"
        "    cuda_tile.continue\n"
        "}) : (!cuda_tile.tile<i32>, !cuda_tile.tile<i32>, !cuda_tile.tile<i32>) -> ()\n"
    )
    d = only_error(text)
    assert d.message == (
        "'cuda_tile.for' op expected induction variable to be same type as bounds and step: "
        "'!cuda_tile.tile<f32>' vs '!cuda_tile.tile<i32>'"
    )
    assert line_of(d) == 2 and d.code == "induction-variable"


def test_loop_iter_values() -> None:
    text = (
        "%init = cuda_tile.constant <f32: 0.0> : !cuda_tile.tile<f32>\n"
        '"cuda_tile.loop"(%init) ({\n'
        "  ^bb0(%iter: !cuda_tile.tile<f64>):\n"
        "    cuda_tile.continue %init : !cuda_tile.tile<f32>\n"
        "}) : (!cuda_tile.tile<f32>) -> (!cuda_tile.tile<f32>)\n"
    )
    assert only_error(text).message == (
        "'cuda_tile.loop' op init value 0 and region iter_value 0 have different type: "
        "'!cuda_tile.tile<f32>' != '!cuda_tile.tile<f64>'"
    )
    count = text.replace("%iter: !cuda_tile.tile<f64>", "%a: !cuda_tile.tile<f32>, %b: !cuda_tile.tile<f32>")
    assert only_error(count).message == (
        "'cuda_tile.loop' op mismatch in number of region iterator values and loop iterator inits: 2 vs 1"
    )


def test_loop_carried_views() -> None:
    view = "partition_view<tile=(2x2), tensor_view<2x2xf32, strides=[1,1]>>"
    body = f"    loop iter_values(%x = %v) : {view} {{\n      continue %x : {view}\n    }}"
    d = only_error(func(body, args=f"%v: {view}"))
    assert d.message == "'cuda_tile.loop' op loop-carried value 0 is a tile view, which is not supported"
    result = f"    %0 = loop : {view} {{\n      break %v : {view}\n    }}"
    assert only_error(func(result, args=f"%v: {view}")).message == (
        "'cuda_tile.loop' op result type 0 is a tile view, which is not supported"
    )


def test_terminator_must_be_last() -> None:
    body = C + '    loop {\n      break\n      assert %c, "m" : tile<i1>\n    }'
    d = only_error(func(body))
    assert d.message == "'cuda_tile.break' op must be the last operation in the parent block"


# ------------------------------------------------------------------ SSA


def test_dominance() -> None:
    body = "    %a = addi %b, %b : tile<i32>\n    %b = constant <i32: 1> : tile<i32>"
    ds = diags(func(body))
    assert len(ds) == 1
    d = ds[0]
    assert d.message == "operand #0 does not dominate this use" and d.code == "dominance"
    assert d.location()[1:] == (3, 15)
    assert [r.message for r in d.related] == ["operand defined here (op in the same block)"]


def test_value_defined_in_body_is_undeclared_outside() -> None:
    text = (
        "%c0 = cuda_tile.constant <i32: 0> : !cuda_tile.tile<i32>\n"
        "%r = cuda_tile.for %iv in (%c0 to %c1, step %c0) : !cuda_tile.tile<i32>\n"
        "    iter_values(%v = %c0) -> (!cuda_tile.tile<i32>) {\n"
        "  %c1 = cuda_tile.constant <i32: 1> : !cuda_tile.tile<i32>\n"
        "}\n"
    )
    d = only_error(text)
    assert d.message.startswith("use of undeclared SSA value name") and d.location()[1:] == (2, 35)
    loop = "%r = cuda_tile.loop iter_values(%v = %foo) : !cuda_tile.tile<i32> -> !cuda_tile.tile<i32> {\n"
    loop += "  %foo = cuda_tile.constant <i32: 10> : !cuda_tile.tile<i32>\n}\n"
    assert only_error(loop).message.startswith("use of undeclared SSA value name")


def test_cannot_name_op_without_results() -> None:
    d = only_error("%r = cuda_tile.loop {}\n")
    assert d.message == "cannot name an operation with no results" and d.location()[1:] == (1, 1)
    assert d.fixes and d.fixes[0].edits[0].new_text == ""
    assert d.source is not None and d.source.text[d.fixes[0].edits[0].span.start : d.fixes[0].edits[0].span.end] == (
        "%r = "
    )
