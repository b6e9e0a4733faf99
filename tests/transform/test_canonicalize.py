"""`compiler.transform.canonicalize`: each rewrite does what it claims, the result still
verifies, a second run changes nothing, and kernels compute the same on the interpreter
before and after."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from compiler.cli import main
from compiler.ir.diagnostics import has_errors
from compiler.runtime import launch
from compiler.text import PrintOptions, parse, print_module, split_input
from compiler.transform import PATTERNS, canonicalize
from compiler.verify import check_text

SHARED = Path(__file__).resolve().parents[3] / "shared"
CANONICALIZE_MLIR = SHARED / "conformance/cuda-tile/test/Dialect/CudaTile/canonicalize.mlir"


def canon(text: str) -> str:
    """`text` verified, canonicalized, printed with MLIR's names; the output must verify."""
    result, diagnostics = check_text(text, "<test>")
    assert not has_errors(diagnostics), [str(d) for d in diagnostics]
    canonicalize(result.module)
    out = print_module(result.module, PrintOptions(source_names=False, keep_comments=False))
    _, again = check_text(out, "<canonical>")
    assert not has_errors(again), out + "\n".join(str(d) for d in again)
    return out


def func(body: str, params: str = "%x: tile<i32>, %y: tile<i32>", result: str = "tile<i32>") -> str:
    lines = "\n".join("    " + line.strip() for line in body.strip().splitlines())
    return f"cuda_tile.module @m {{\n  testing$func @f({params}) -> {result} {{\n{lines}\n  }}\n}}\n"


def ops_of(text: str) -> list[str]:
    """The op names of the printed text, in order (`%0 = addi ...` -> addi)."""
    names = []
    for line in text.splitlines():
        m = re.match(r"\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?([a-z_$]+)\b", line)
        if m and m.group(1) not in ("cuda_tile", "testing$func", "entry", "module"):
            names.append(m.group(1))
    return names


# ------------------------------------------------------------------------------ registry


def test_patterns_are_registered_per_op():
    for op in ("cuda_tile.select", "cuda_tile.if", "cuda_tile.addf", "cuda_tile.assume"):
        assert PATTERNS.get(op), f"no rewrite registered for {op}"


# ---------------------------------------------------------------------- select and addf


def test_select_of_equal_values_and_constant_condition():
    out = canon(
        func("""
        %t = constant <i1: true> : tile<i1>
        %c = cmpi less_than %x, %y, signed : tile<i32> -> tile<i1>
        %a = select %c, %x, %x : tile<i1>, tile<i32>
        %b = select %t, %a, %y : tile<i1>, tile<i32>
        return %b : tile<i32>
    """)
    )
    assert "select" not in out and "cmpi" not in out  # the compare became dead
    assert "return %arg0 : tile<i32>" in out


def test_select_of_constants_folds_elementwise():
    out = canon(
        func(
            """
        %c = constant <i1: [0, 1, 1, 0]> : tile<4xi1>
        %a = constant <i32: [10, 20, 30, 40]> : tile<4xi32>
        %b = constant <i32: [-1, -2, -3, -4]> : tile<4xi32>
        %s = select %c, %a, %b : tile<4xi1>, tile<4xi32>
        return %s : tile<4xi32>
    """,
            params="",
            result="tile<4xi32>",
        )
    )
    assert "constant <i32: [-1, 20, 30, -4]> : tile<4xi32>" in out
    assert ops_of(out) == ["constant", "return"]


def test_select_zero_one_becomes_exti_of_negation():
    out = canon(
        func(
            """
        %z = constant <i32: 0> : tile<i32>
        %o = constant <i32: 1> : tile<i32>
        %s = select %c, %z, %o : tile<i1>, tile<i32>
        return %s : tile<i32>
    """,
            params="%c: tile<i1>",
        )
    )
    assert ops_of(out) == ["constant", "xori", "exti", "return"]
    assert "exti %0 unsigned : tile<i1> -> tile<i32>" in out


def test_select_of_negated_condition_swaps_values():
    out = canon(
        func(
            """
        %t = constant <i1: true> : tile<i1>
        %n = xori %c, %t : tile<i1>
        %s = select %n, %x, %y : tile<i1>, tile<i32>
        return %s : tile<i32>
    """,
            params="%c: tile<i1>, %x: tile<i32>, %y: tile<i32>",
        )
    )
    assert "select %arg0, %arg2, %arg1" in out
    assert "xori" not in out


def test_select_on_cmpi_equal_of_its_values():
    out = canon(
        func("""
        %c = cmpi equal %x, %y, signed : tile<i32> -> tile<i1>
        %s = select %c, %y, %x : tile<i1>, tile<i32>
        return %s : tile<i32>
    """)
    )
    assert "return %arg0 : tile<i32>" in out  # where x == y both are the same; otherwise x


def test_select_on_cmpi_less_is_kept():
    out = canon(
        func("""
        %c = cmpi less_than %x, %y, signed : tile<i32> -> tile<i1>
        %s = select %c, %x, %y : tile<i1>, tile<i32>
        return %s : tile<i32>
    """)
    )
    assert "select" in out


def test_addf_puts_the_product_first_and_leaves_other_sums_alone():
    body = """
        %m = mulf %a, %b : tile<f32>
        %s = addf %c, %m : tile<f32>
        %t = addf %c, %a : tile<f32>
        %u = addf %s, %t : tile<f32>
        return %u : tile<f32>
    """
    out = canon(func(body, params="%a: tile<f32>, %b: tile<f32>, %c: tile<f32>", result="tile<f32>"))
    assert re.search(r"%1 = addf %0, %arg2 ", out), out
    assert re.search(r"%2 = addf %arg2, %arg0 ", out), out


def test_repeated_assume_is_dropped_but_a_different_one_kept():
    out = canon(
        func(
            """
        %a = assume bounded<0, 42>, %x : tile<i32>
        %b = assume bounded<0, 42>, %a : tile<i32>
        %c = assume bounded<?, 42>, %b : tile<i32>
        return %c : tile<i32>
    """,
            params="%x: tile<i32>",
        )
    )
    assert out.count("assume bounded<0, 42>") == 1
    assert out.count("assume bounded<?, 42>") == 1


# ------------------------------------------------------------------------------------ if


def test_if_with_outside_values_becomes_selects_with_broadcast_condition():
    out = canon(
        func(
            """
        %a = constant <i32: 5> : tile<2xi32>
        %b = constant <i32: 7> : tile<2xi32>
        %r = if %c -> (tile<2xi32>) {
          yield %a : tile<2xi32>
        } else {
          yield %b : tile<2xi32>
        }
        return %r : tile<2xi32>
    """,
            params="%c: tile<i1>",
            result="tile<2xi32>",
        )
    )
    assert "if" not in ops_of(out)
    assert "reshape %arg0 : tile<i1> -> tile<1xi1>" in out
    shaped = re.search(r"(%\w+) = broadcast %\w+ : tile<1xi1> -> tile<2xi1>", out)
    assert shaped, out
    assert f"select {shaped.group(1)}, %cst_5_i32, %cst_7_i32 : tile<2xi1>, tile<2xi32>" in out


def test_if_yielding_tokens_is_not_a_select():
    out = canon(
        func(
            """
        %t0 = make_token : token
        %t1 = make_token : token
        %r = if %c -> (token) {
          yield %t0 : token
        } else {
          yield %t1 : token
        }
        %j = join_tokens %r, %r : token
        return %x : tile<i32>
    """,
            params="%c: tile<i1>, %x: tile<i32>",
        )
    )
    assert "select" not in out


def test_static_if_inlines_the_taken_branch_and_drops_unreachable_code():
    out = canon(
        func("""
        %t = constant <i1: true> : tile<i1>
        %r = if %t -> (tile<i32>) {
          %s = addi %x, %y : tile<i32>
          return %s : tile<i32>
        } else {
          yield %y : tile<i32>
        }
        %u = muli %r, %r : tile<i32>
        return %u : tile<i32>
    """)
    )
    assert ops_of(out) == ["addi", "return"]


def test_adjacent_ifs_on_one_condition_merge():
    out = canon(
        func("""
        %c = cmpi less_than %x, %y, signed : tile<i32> -> tile<i1>
        %r = if %c -> (tile<i32>) {
          %a = addi %x, %y : tile<i32>
          yield %a : tile<i32>
        } else {
          %a = subi %x, %y : tile<i32>
          yield %a : tile<i32>
        }
        %s = if %c -> (tile<i32>) {
          %b = muli %r, %x : tile<i32>
          yield %b : tile<i32>
        } else {
          %b = muli %r, %y : tile<i32>
          yield %b : tile<i32>
        }
        %t = addi %r, %s : tile<i32>
        return %t : tile<i32>
    """)
    )
    assert ops_of(out).count("if") == 1
    assert "%1:2 = if %0 -> (tile<i32>, tile<i32>)" in out
    # The second `if` read the first's result: now the value each branch yielded.
    then_sum = re.search(r"(%\w+) = addi %arg0, %arg1", out)
    else_diff = re.search(r"(%\w+) = subi %arg0, %arg1", out)
    assert then_sum and else_diff, out
    assert f"muli {then_sum.group(1)}, %arg0" in out and f"muli {else_diff.group(1)}, %arg1" in out


def test_nested_ifs_become_one_on_the_conjunction():
    out = canon(
        func("""
        %c = cmpi less_than %x, %y, signed : tile<i32> -> tile<i1>
        %d = cmpi equal %x, %y, signed : tile<i32> -> tile<i1>
        if %c {
          if %d {
            print_tko "%d", %x : tile<i32> -> token
          }
        }
        return %x : tile<i32>
    """)
    )
    assert "%2 = andi %0, %1 : tile<i1>" in out
    assert ops_of(out).count("if") == 1


def test_if_whose_branches_both_return_keeps_the_else_after_it():
    out = canon(
        func("""
        %c = cmpi less_than %x, %y, signed : tile<i32> -> tile<i1>
        if %c {
          return %x : tile<i32>
        } else {
          return %y : tile<i32>
        }
        %z = addi %x, %y : tile<i32>
        return %z : tile<i32>
    """)
    )
    assert "else" not in out and "addi" not in out
    assert ops_of(out) == ["cmpi", "if", "return", "return"]


def test_dead_pure_ops_go_but_effects_stay():
    out = canon(
        func("""
        %a = addi %x, %y : tile<i32>
        %b = muli %a, %a : tile<i32>
        %p = print_tko "%d", %x : tile<i32> -> token
        return %x : tile<i32>
    """)
    )
    assert ops_of(out) == ["print_tko", "return"]


def test_constants_are_pooled_at_the_top_of_the_function():
    out = canon(
        func("""
        %c = cmpi less_than %x, %y, signed : tile<i32> -> tile<i1>
        %r = if %c -> (tile<i32>) {
          %k = constant <i32: 3> : tile<i32>
          %a = addi %x, %k : tile<i32>
          yield %a : tile<i32>
        } else {
          %k = constant <i32: 3> : tile<i32>
          %a = subi %x, %k : tile<i32>
          yield %a : tile<i32>
        }
        return %r : tile<i32>
    """)
    )
    assert out.count("constant <i32: 3>") == 1
    assert ops_of(out)[0] == "constant"


def test_reduce_body_keeps_its_own_constant():
    out = canon(
        func(
            """
        %k = constant <f32: 2.0> : tile<f32>
        %0 = reduce %a dim=0 identities=[0.000000e+0 : f32] : tile<8xf32> -> tile<f32>
        (%x_in: tile<f32>, %x_id: tile<f32>) {
          %c = constant <f32: 2.0> : tile<f32>
          %m = mulf %x_in, %c : tile<f32>
          %add = addf %x_id, %m : tile<f32>
          yield %add : tile<f32>
        }
        %r = mulf %0, %k : tile<f32>
        return %r : tile<f32>
    """,
            params="%a: tile<8xf32>",
            result="tile<f32>",
        )
    )
    body = out[out.index("(%reduce_lhs") : out.index("yield")]
    assert "constant <f32: 2.000000e+00>" in body, out


# ------------------------------------------------------------------ semantics preserved

KERNELS = [
    """
    %c = cmpi less_than %x, %y, signed : tile<i32> -> tile<i1>
    %k = constant <i32: 3> : tile<i32>
    %r, %s = if %c -> (tile<i32>, tile<i32>) {
      %a = addi %x, %k : tile<i32>
      yield %a, %k : tile<i32>, tile<i32>
    } else {
      yield %y, %x : tile<i32>, tile<i32>
    }
    %u = if %c -> (tile<i32>) {
      %b = muli %r, %s : tile<i32>
      yield %b : tile<i32>
    } else {
      %b = subi %r, %s : tile<i32>
      yield %b : tile<i32>
    }
    %out = addi %u, %r : tile<i32>
    """,
    """
    %t = constant <i1: true> : tile<i1>
    %c = cmpi equal %x, %y, signed : tile<i32> -> tile<i1>
    %n = xori %c, %t : tile<i1>
    %z = constant <i32: 0> : tile<i32>
    %o = constant <i32: 1> : tile<i32>
    %e = select %n, %z, %o : tile<i1>, tile<i32>
    %f = select %c, %x, %y : tile<i1>, tile<i32>
    %g = select %n, %f, %e : tile<i1>, tile<i32>
    %out = addi %g, %e : tile<i32>
    """,
    """
    %c = cmpi greater_than %x, %y, signed : tile<i32> -> tile<i1>
    %d = cmpi not_equal %x, %y, signed : tile<i32> -> tile<i1>
    %t = constant <i1: true> : tile<i1>
    %f = constant <i1: false> : tile<i1>
    %b = if %c -> (tile<i1>) {
      yield %f : tile<i1>
    } else {
      yield %t : tile<i1>
    }
    %v = select %b, %x, %y : tile<i1>, tile<i32>
    %w = select %d, %v, %x : tile<i1>, tile<i32>
    %out = muli %w, %v : tile<i32>
    """,
]


def _store_kernel(body: str) -> str:
    lines = "\n".join("    " + line.strip() for line in body.strip().splitlines())
    return (
        "cuda_tile.module @m {\n  entry @k(%p: tile<ptr<i32>>, %x: tile<i32>, %y: tile<i32>) {\n"
        f"{lines}\n    %tok = store_ptr_tko weak %p, %out : tile<ptr<i32>>, tile<i32> -> token\n    return\n  }}\n}}\n"
    )


def _run(text: str, x: int, y: int) -> int:
    out = np.zeros(1, dtype=np.int32)
    launch(text, grid=1, args=[out, x, y], backend="cpu")
    return int(out[0])


@pytest.mark.parametrize("index", range(len(KERNELS)))
def test_canonicalized_kernel_computes_the_same(index):
    text = _store_kernel(KERNELS[index])
    after = canon(text)
    assert after != print_module(parse(text, "<t>").module, PrintOptions(source_names=False, keep_comments=False))
    for x, y in [(0, 0), (1, 2), (2, 1), (-5, 7), (7, 7), (3, -3)]:
        assert _run(after, x, y) == _run(text, x, y), (x, y, after)


@pytest.mark.parametrize(("seed", "how"), [(0, {}), (1, {}), (2, {"hints": True}), (3, {"asm": True})])
def test_canonicalized_random_kernels_compute_the_same(seed, how):
    """tests/lower/fuzz.py's random kernels (every op among them; `asm` ones too), canonicalized:
    they verify, change, and give the interpreter's results bit for bit (NaN payloads too).
    A longer run (400 seeds of four kinds each, 2026-11-30) found no difference."""
    import io

    from compiler.interp.machine import RunOptions
    from tests.lower.fuzz import arguments, kernel
    from tests.lower.harness import assert_same

    case = kernel(seed, **how)
    after = canon(case.text)
    assert after != print_module(parse(case.text, "<t>").module, PrintOptions(source_names=False, keep_comments=False))
    before_args, after_args = arguments(case), arguments(case)
    quiet = RunOptions(stdout=io.StringIO())  # (an `asm` kernel's prints)
    launch(case.text, "k", case.grid, before_args, backend="cpu", options=quiet)
    launch(after, "k", case.grid, after_args, backend="cpu", options=quiet)
    for i, (x, y) in enumerate(zip(before_args, after_args, strict=True)):
        if isinstance(x, np.ndarray):
            assert_same(x, y, 0, f"argument {i}", True, "the canonicalized kernel")


# ------------------------------------------------------------------ driver and front end


def test_second_run_changes_nothing():
    result, _ = check_text(_store_kernel(KERNELS[0]), "<t>")
    assert canonicalize(result.module) > 0
    first = print_module(result.module)
    assert canonicalize(result.module) == 0
    assert print_module(result.module) == first


def test_clashing_source_names_are_renumbered():
    # Both `if`s define %a in their then-branch; merged into one block, %a would print twice.
    text = func("""
        %c = cmpi less_than %x, %y, signed : tile<i32> -> tile<i1>
        %r = if %c -> (tile<i32>) {
          %a = addi %x, %y : tile<i32>
          yield %a : tile<i32>
        } else {
          yield %y : tile<i32>
        }
        %s = if %c -> (tile<i32>) {
          %a = muli %r, %x : tile<i32>
          yield %a : tile<i32>
        } else {
          yield %x : tile<i32>
        }
        %t = addi %r, %s : tile<i32>
        return %t : tile<i32>
    """)
    result, _ = check_text(text, "<t>")
    canonicalize(result.module)
    out = print_module(result.module)  # source names kept, as `tileir opt` does by default
    assert out.count("%a = ") == 1, out
    assert not has_errors(check_text(out, "<again>")[1]), out


def test_opt_canonicalize_flag(tmp_path, capsys):
    src = tmp_path / "k.mlir"
    src.write_text(func("%a = addi %x, %y : tile<i32>\nreturn %x : tile<i32>"), encoding="utf-8")
    assert main(["opt", str(src)]) == 0
    assert "addi" in capsys.readouterr().out
    assert main(["opt", "--canonicalize", str(src)]) == 0
    assert "addi" not in capsys.readouterr().out


def test_conformance_file_canonicalizes_to_verifying_modules():
    if not CANONICALIZE_MLIR.is_file():
        pytest.skip("../shared/conformance is absent")
    text = CANONICALIZE_MLIR.read_text(encoding="utf-8")
    chunks = split_input(text)
    assert len(chunks) > 40
    for chunk, offset in chunks:
        canon("\n" * offset + chunk)
