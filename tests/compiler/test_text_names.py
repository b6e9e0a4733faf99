# ruff: noqa: E501, W291  (expected outputs are verbatim printer output: long lines, MLIR's trailing space)
"""Default SSA names of unnamed values (as a bytecode reader leaves them): the printer names
them as MLIR's printer with the cuda_tile dialect's naming hooks does (`tileirdisasm`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main
from compiler.ir.core import Module
from compiler.text import parse, print_module

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO.parent / "shared" / "samples"
EXAMPLES = REPO / "examples"


def _unnamed(text: str) -> Module:
    result = parse(text, "t.tileir")
    assert not [d for d in result.diagnostics if d.is_error], [d.format() for d in result.diagnostics]
    module = result.module
    for op in module.walk():
        for v in op.results:
            v.name = None
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    a.name = None
    return module


@pytest.mark.parametrize("name", ["vadd", "softmax", "matmul"])
def test_samples_print_as_tileirdisasm(name: str) -> None:
    path = SAMPLES / f"{name}.tileir"
    if not path.exists():
        pytest.skip("../shared/samples is absent")
    text = path.read_text(encoding="utf-8")
    assert print_module(_unnamed(text)) == text


SOURCE = """\
cuda_tile.module @m {
  entry @k(%a: tile<ptr<f32>>, %n: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c0b = constant <i32: 0> : tile<i32>
    %t = constant <f32: 0.000000e+00> : tile<4xf32>
    %h = constant <f32: 1.500000e+00> : tile<f32>
    %b = constant <i1: true> : tile<i1>
    %m1 = constant <i32: -1> : tile<i32>
    %x = assume bounded<0, ?>, %n : tile<i32>
    %y = assume div_by<4>, %c1 : tile<i32>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %r:2 = for %i in (%c0 to %x, step %c1) : tile<i32> iter_values(%acc = %t, %k = %c0b) -> (tile<4xf32>, tile<i32>) {
      %s = addi %k, %i : tile<i32>
      %c5 = constant <i32: 5> : tile<i32>
      %red = reduce %acc dim=0 identities=[0.000000e+00 : f32] : tile<4xf32> -> tile<f32>
      (%l: tile<f32>, %rr: tile<f32>) {
        %m = addf %l, %rr : tile<f32>
        yield %m : tile<f32>
      }
      continue %acc, %s : tile<4xf32>, tile<i32>
    }
    %z = if %b -> (tile<i32>) {
      %q = addi %c0, %c1 : tile<i32>
      %c0c = constant <i32: 0> : tile<i32>
      yield %q : tile<i32>
    } else {
      yield %c0 : tile<i32>
    }
    %lp:2 = loop iter_values(%u = %c0, %v = %c1) : tile<i32>, tile<i32> -> tile<i32>, tile<i32> {
      %w = addi %u, %v : tile<i32>
      break %w, %u : tile<i32>, tile<i32>
    }
    %e = addi %lp#0, %z : tile<i32>
    %bx2, %by2, %bz2 = get_tile_block_id : tile<i32>
    return
  }
}
"""

# Derived by MLIR's rules: a region is numbered before the regions nested in it, which start
# from the counters their parent left (so `%3` in each of them, `%arg2` for the loop) and see
# only their ancestors' names (the `if`'s `cst_0_i32` collides with the entry's and gets
# `_4`: the conflict counter goes on from where the entry's region left it). 1.5 is not an integer, so `%cst_f32`.
EXPECTED = """\
cuda_tile.module @m {
  entry @k(%arg0: tile<ptr<f32>>, %arg1: tile<i32>) {
    %cst_0_i32 = constant <i32: 0> : tile<i32>
    %cst_1_i32 = constant <i32: 1> : tile<i32>
    %cst_0_i32_0 = constant <i32: 0> : tile<i32>
    %cst_0_f32 = constant <f32: 0.000000e+00> : tile<4xf32>
    %cst_f32 = constant <f32: 1.500000e+00> : tile<f32>
    %true = constant <i1: true> : tile<i1>
    %cst_-1_i32 = constant <i32: -1> : tile<i32>
    %assume = assume bounded<0, ?>, %arg1 : tile<i32>
    %assume_cst_1_i32 = assume div_by<4>, %cst_1_i32 : tile<i32>
    %blockId_x, %blockId_y, %blockId_z = get_tile_block_id : tile<i32>
    %for:2 = for %loopIdx in (%cst_0_i32 to %assume, step %cst_1_i32) : tile<i32> iter_values(%iterArg0 = %cst_0_f32, %iterArg1 = %cst_0_i32_0) -> (tile<4xf32>, tile<i32>) {
      %3 = addi %iterArg1, %loopIdx : tile<i32>
      %cst_5_i32 = constant <i32: 5> : tile<i32>
      %reduce = reduce %iterArg0 dim=0 identities=[0.000000e+00 : f32] : tile<4xf32> -> tile<f32> 
      (%reduce_lhs: tile<f32>, %reduce_rhs: tile<f32>) {
        %4 = addf %reduce_lhs, %reduce_rhs  : tile<f32>
        yield %4 : tile<f32>
      }
      continue %iterArg0, %3 : tile<4xf32>, tile<i32>
    }
    %0 = if %true -> (tile<i32>) {
      %3 = addi %cst_0_i32, %cst_1_i32 : tile<i32>
      %cst_0_i32_4 = constant <i32: 0> : tile<i32>
      yield %3 : tile<i32>
    } else {
      yield %cst_0_i32 : tile<i32>
    }
    %1:2 = loop iter_values(%arg2 = %cst_0_i32, %arg3 = %cst_1_i32) : tile<i32>, tile<i32> -> tile<i32>, tile<i32> {
      %3 = addi %arg2, %arg3 : tile<i32>
      break %3, %arg2 : tile<i32>, tile<i32>
    }
    %2 = addi %1#0, %0 : tile<i32>
    %blockId_x_1, %blockId_y_2, %blockId_z_3 = get_tile_block_id : tile<i32>
    return
  }
}
"""


def test_project_kernel_names_by_mlir_rules() -> None:
    assert print_module(_unnamed(SOURCE)) == EXPECTED


def test_printing_twice_gives_the_same_names() -> None:
    module = _unnamed(SOURCE)
    assert print_module(module) == print_module(module)


def test_named_values_keep_their_names_and_new_ones_avoid_them() -> None:
    text = """\
entry @k(%a: tile<i32>) {
  %0 = constant <i32: 0> : tile<i32>
  %tview = constant <i32: 1> : tile<i32>
  return
}
"""
    module = parse(text).module
    entry = module.body.ops[0]
    const0, const1 = entry.regions[0].blocks[0].ops[:2]
    const1.results[0].name = None  # a new value: its suggested name is taken by no one
    out = print_module(module)
    assert "%0 = constant <i32: 0>" in out and "%cst_1_i32 = constant <i32: 1>" in out
    const0.results[0].name = "cst_1_i32"  # now the user's name wins and ours is suffixed
    out = print_module(module)
    assert "%cst_1_i32 = constant <i32: 0>" in out and "%cst_1_i32_0 = constant <i32: 1>" in out


def test_unnamed_multi_result_op_prints_as_a_group() -> None:
    text = """\
entry @k(%v: partition_view<tile=(4x4), tensor_view<8x8xf32, strides=[8,1]>>) {
  %s:2 = get_index_space_shape %v : partition_view<tile=(4x4), tensor_view<8x8xf32, strides=[8,1]>> -> tile<i32>
  %t = addi %s#0, %s#1 : tile<i32>
  return
}
"""
    out = print_module(_unnamed(text))
    assert "%0:2 = get_index_space_shape" in out and "%1 = addi %0#0, %0#1" in out


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.tileir")), ids=lambda p: p.name)
def test_fmt_keeps_examples_unchanged(path: Path, capsys) -> None:
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == path.read_text(encoding="utf-8")
