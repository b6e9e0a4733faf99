"""`tileir compile --emit ops` (compiler/lower/cost.py): the kernel's LLVM IR instructions
counted per Tile IR op, jitted helpers at the op that calls them."""

from __future__ import annotations

import pytest

from compiler.lower import compile_source, lower
from compiler.lower.cost import NO_LOCATION, cost_table, op_costs
from compiler.runtime import load_module

from .test_shape import io_kernel, tile

pytest.importorskip("triton")


def test_helpers_are_counted_at_the_op_that_calls_them() -> None:
    # ftof to f8E4M3FN is, for sm_80 (later targets have cvt.rn.satfinite), a jitted rounding
    # helper of some 20 operations an element, addf one.
    t = tile((64, 64), "f32")
    body = f"""%y = ftof %x : {t} -> {tile((64, 64), "f8E4M3FN")}
    %z = addf %x, %x : {t}"""
    text = io_kernel([("x", (64, 64), "f32")], [("y", (64, 64), "f8E4M3FN"), ("z", (64, 64), "f32")], body)
    module = load_module(text)
    src = lower(module, "k", "sm_80")
    assert "def _fc_round_f32_f8E4M3FN_rn" in src.text  # (the helper this test is about)
    llir = compile_source(src, use_cache=False).asm["llir"]
    costs = op_costs(src, llir)
    count = {name: n for n, _, name in costs}
    assert set(count) <= {op.mnemonic for op in module.entries()[0].walk()}  # every row an op of the kernel
    assert not any(where.startswith("generated line") or where == NO_LOCATION for _, where, _ in costs)
    assert count["ftof"] > 10 * count["addf"] > 0
    assert [n for n, _, _ in costs] == sorted((n for n, _, _ in costs), reverse=True)
    table = cost_table(src, llir).splitlines()
    total = sum(n for n, _, _ in costs)
    assert table[0] == f"# LLVM IR instructions of @k for sm_80 by Tile IR op, {total} in all"
    assert table[3].split()[-1] == "ftof" and len(table) == 3 + len(costs)


def test_lines_outside_the_kernel_function_are_not_counted() -> None:
    text = io_kernel([("x", (16,), "f32")], [("y", (16,), "f32")], "%y = negf %x : tile<16xf32>")
    src = lower(load_module(text), "k")
    llir = """define void @other() {
  %1 = fadd float 0.0, 0.0, !dbg !9
  ret void
}
define ptx_kernel void @k(ptr %0) !dbg !3 {
  %2 = fadd float 0.0, 0.0, !dbg !10
  %3 = fmul float 0.0, 0.0
  ret void, !dbg !11
}
!9 = !DILocation(line: 2, column: 1, scope: !3)
!10 = !DILocation(line: 3, column: 7, scope: !4, inlinedAt: !11)
!11 = !DILocation(line: 999999, column: 1, scope: !3)
"""
    assert op_costs(src, llir) == [(2, "generated line 999999", ""), (1, NO_LOCATION, "")]
