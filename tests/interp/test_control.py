"""Control flow on the batched machine: `if`, `for`, `loop`, `break`/`continue`/`return`,
with conditions, bounds and exits that differ between the tile blocks of one group.

Each kernel's per-block result is checked against a plain-Python run of that block.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from compiler.interp import InterpError, Machine, RunOptions
from compiler.interp.machine import Frame, Group
from compiler.runtime import launch
from tests.interp.util import eval_kernel, kernel

BLOCKS = list(range(12))


def per_block(text: str, blocks=BLOCKS, params: str = "", args=()) -> dict[str, np.ndarray]:
    """Run the kernel for the blocks (x, 0, 0) of `blocks` as one group; every value
    broadcast to one entry per block."""
    out = eval_kernel(text, grid_positions=list(blocks), args=args, grid=(max(blocks) + 1, 1, 1))
    n = len(blocks)
    return {k: np.broadcast_to(v, (n, *v.shape[1:])) if isinstance(v, np.ndarray) else v for k, v in out.items()}


def printed(text: str, grid, args=(), **options) -> str:
    out = io.StringIO()
    launch(text, grid=grid, args=list(args), options=RunOptions(stdout=out, **options))
    return out.getvalue()


PRELUDE = """
%bx, %by, %bz = get_tile_block_id : tile<i32>
%c0 = constant <i32: 0> : tile<i32>
%c1 = constant <i32: 1> : tile<i32>
%c2 = constant <i32: 2> : tile<i32>
%c3 = constant <i32: 3> : tile<i32>
%c100 = constant <i32: 100> : tile<i32>
"""


# -- if ----------------------------------------------------------------------------------


def test_divergent_if_merges_uniform_and_per_block_yields():
    out = per_block(
        kernel(
            PRELUDE
            + """
        %m = remi %bx, %c3 signed : tile<i32>
        %z = cmpi equal %m, %c0, signed : tile<i32> -> tile<i1>
        %before = muli %bx, %bx : tile<i32>
        %r, %s = if %z -> (tile<i32>, tile<i32>) {
          yield %c100, %before : tile<i32>, tile<i32>
        } else {
          %t = addi %before, %c1 : tile<i32>
          yield %t, %c2 : tile<i32>, tile<i32>
        }
        %after = addi %r, %before : tile<i32>
    """
        )
    )
    r = [100 if b % 3 == 0 else b * b + 1 for b in BLOCKS]
    s = [b * b if b % 3 == 0 else 2 for b in BLOCKS]
    assert out["r"].tolist() == r
    assert out["s"].tolist() == s
    assert out["after"].tolist() == [x + b * b for x, b in zip(r, BLOCKS, strict=True)]


@pytest.mark.parametrize("flag", [True, False])
def test_uniform_if_runs_one_branch_without_splitting(flag):
    out = per_block(
        kernel(
            PRELUDE
            + f"""
        %c = constant <i1: {str(flag).lower()}> : tile<i1>
        %r = if %c -> (tile<i32>) {{
          %t = addi %bx, %c100 : tile<i32>
          yield %t : tile<i32>
        }} else {{
          yield %c3 : tile<i32>
        }}
    """
        )
    )
    assert out["r"].tolist() == [b + 100 if flag else 3 for b in BLOCKS]


def test_uniform_if_keeps_a_uniform_result_uniform():
    out = eval_kernel(
        kernel(
            PRELUDE
            + """
        %c = constant <i1: true> : tile<i1>
        %r = if %c -> (tile<i32>) { yield %c3 : tile<i32> } else { yield %c2 : tile<i32> }
    """
        ),
        grid_positions=[0, 1, 2, 3],
    )
    assert out["r"].shape == (1,)


def test_nested_divergent_ifs():
    # three-way split: b % 2 == 0, else b % 3 == 0, else the rest; inner ifs without else
    out = per_block(
        kernel(
            PRELUDE
            + """
        %m2 = remi %bx, %c2 signed : tile<i32>
        %m3 = remi %bx, %c3 signed : tile<i32>
        %even = cmpi equal %m2, %c0, signed : tile<i32> -> tile<i1>
        %three = cmpi equal %m3, %c0, signed : tile<i32> -> tile<i1>
        %r = if %even -> (tile<i32>) {
          %q = divi %bx, %c2 signed : tile<i32>
          %inner = if %three -> (tile<i32>) {
            yield %c100 : tile<i32>
          } else {
            yield %q : tile<i32>
          }
          yield %inner : tile<i32>
        } else {
          %inner2 = if %three -> (tile<i32>) {
            %n = subi %c0, %bx : tile<i32>
            yield %n : tile<i32>
          } else {
            yield %bx : tile<i32>
          }
          yield %inner2 : tile<i32>
        }
    """
        )
    )

    def sim(b):
        if b % 2 == 0:
            return 100 if b % 3 == 0 else b // 2
        return -b if b % 3 == 0 else b

    assert out["r"].tolist() == [sim(b) for b in BLOCKS]


def test_if_with_a_group_of_one_block():
    out = per_block(
        kernel(
            PRELUDE
            + """
        %z = cmpi equal %bx, %c0, signed : tile<i32> -> tile<i1>
        %r = if %z -> (tile<i32>) { yield %c1 : tile<i32> } else { yield %c2 : tile<i32> }
    """
        ),
        blocks=[5],
    )
    assert out["r"].tolist() == [2]


# -- for ---------------------------------------------------------------------------------


def test_for_with_per_block_upper_bound_and_carried_values():
    out = per_block(
        kernel(
            PRELUDE
            + """
        %s, %p = for %iv in (%c0 to %bx, step %c1) : tile<i32>
            iter_values(%acc = %c0, %prod = %c1) -> (tile<i32>, tile<i32>) {
          %a = addi %acc, %iv : tile<i32>
          %m = muli %prod, %c2 : tile<i32>
          continue %a, %m : tile<i32>, tile<i32>
        }
    """
        )
    )
    assert out["s"].tolist() == [sum(range(b)) for b in BLOCKS]
    assert out["p"].tolist() == [2**b for b in BLOCKS]


def test_for_with_per_block_lower_bound_and_step():
    out = per_block(
        kernel(
            PRELUDE
            + """
        %lo = subi %c0, %bx : tile<i32>
        %step = addi %c1, %bx : tile<i32>
        %ten = constant <i32: 10> : tile<i32>
        %s, %n = for %iv in (%lo to %ten, step %step) : tile<i32>
            iter_values(%acc = %c0, %count = %c0) -> (tile<i32>, tile<i32>) {
          %a = addi %acc, %iv : tile<i32>
          %c = addi %count, %c1 : tile<i32>
          continue %a, %c : tile<i32>, tile<i32>
        }
    """
        )
    )
    assert out["s"].tolist() == [sum(range(-b, 10, b + 1)) for b in BLOCKS]
    assert out["n"].tolist() == [len(range(-b, 10, b + 1)) for b in BLOCKS]


def test_for_with_uniform_bounds_keeps_uniform_carried_values_uniform():
    out = eval_kernel(
        kernel(
            PRELUDE
            + """
        %ten = constant <i32: 10> : tile<i32>
        %s = for %iv in (%c0 to %ten, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
          %a = addi %acc, %iv : tile<i32>
          continue %a : tile<i32>
        }
    """
        ),
        grid_positions=[0, 1, 2],
    )
    assert out["s"].tolist() == [45]


def test_for_signed_and_unsigned_compare():
    body = (
        PRELUDE
        + """
        %lo = constant <i32: -3> : tile<i32>
        %n = for {u}%iv in (%lo to %bx, step %c1) : tile<i32> iter_values(%count = %c0) -> (tile<i32>) {{
          %c = addi %count, %c1 : tile<i32>
          continue %c : tile<i32>
        }}
    """
    )
    signed = per_block(kernel(body.format(u="")))
    unsigned = per_block(kernel(body.format(u="unsigned ")))
    assert signed["n"].tolist() == [b + 3 for b in BLOCKS]
    # as unsigned, -3 is 2^32 - 3: never below a small upper bound
    assert unsigned["n"].tolist() == [0] * len(BLOCKS)


def test_for_unsigned_upper_bound_above_the_signed_range():
    # -4 to -1: 3 iterations either way (2^32-4 to 2^32-1 unsigned); 0 to -1: none signed
    # (as unsigned it would be 2^32-1 iterations)
    body = """
        %c0 = constant <i32: 0> : tile<i32>
        %c1 = constant <i32: 1> : tile<i32>
        %lo = constant <i32: {lo}> : tile<i32>
        %hi = constant <i32: -1> : tile<i32>
        %n = for {u}%iv in (%lo to %hi, step %c1) : tile<i32> iter_values(%count = %c0) -> (tile<i32>) {{
          %c = addi %count, %c1 : tile<i32>
          continue %c : tile<i32>
        }}
    """
    assert eval_kernel(kernel(body.format(u="", lo=0)))["n"].tolist() == [0]
    assert eval_kernel(kernel(body.format(u="", lo=-4)))["n"].tolist() == [3]
    assert eval_kernel(kernel(body.format(u="unsigned ", lo=-4)))["n"].tolist() == [3]


@pytest.mark.parametrize(
    ("unsigned", "lo", "hi", "step", "expected"),
    [
        # the iteration space is {lo + i*step < hi}: a next value past the type's range
        # ends the loop (the hardware adder would wrap around and go on)
        (False, 120, 127, 5, [120, 125]),
        (False, -128, 127, 100, [-128, -28, 72]),
        (True, -6, -1, 3, [250 - 256, 253 - 256]),  # 250, 253 as unsigned i8
    ],
)
def test_for_induction_variable_does_not_wrap(unsigned, lo, hi, step, expected):
    u = "unsigned " if unsigned else ""
    text = kernel(f"""
        %lo = constant <i8: {lo}> : tile<i8>
        %hi = constant <i8: {hi}> : tile<i8>
        %st = constant <i8: {step}> : tile<i8>
        %z = constant <i8: 0> : tile<i8>
        %t0 = make_token : token
        %n, %t = for {u}%iv in (%lo to %hi, step %st) : tile<i8> iter_values(%count = %z, %tok = %t0)
            -> (tile<i8>, token) {{
          %one = constant <i8: 1> : tile<i8>
          %c = addi %count, %one : tile<i8>
          %t1 = print_tko "%d\\n", %iv : tile<i8> -> token
          continue %c, %t1 : tile<i8>, token
        }}
    """)
    assert printed(text, grid=(1,), print_prefix=False) == "".join(f"{v}\n" for v in expected)


def test_for_with_i64_bounds_near_the_top():
    top = 2**63 - 1
    text = kernel(f"""
        %lo = constant <i64: {top - 10}> : tile<i64>
        %hi = constant <i64: {top}> : tile<i64>
        %st = constant <i64: 4> : tile<i64>
        %z = constant <i64: 0> : tile<i64>
        %n = for %iv in (%lo to %hi, step %st) : tile<i64> iter_values(%last = %z) -> (tile<i64>) {{
          continue %iv : tile<i64>
        }}
    """)
    assert eval_kernel(text)["n"].tolist() == [top - 2]


def test_for_step_must_be_positive():
    text = kernel("""
        %c0 = constant <i32: 0> : tile<i32>
        %c4 = constant <i32: 4> : tile<i32>
        for %iv in (%c0 to %c4, step %c0) : tile<i32> {
          continue
        }
    """)
    with pytest.raises(InterpError) as e:
        launch(text, grid=(2,))
    assert str(e.value) == "<input>:5:5: error: for: the step must be positive, got 0 (tile block (0, 0, 0))"


def test_for_with_empty_range_may_have_any_step():
    text = kernel("""
        %c0 = constant <i32: 0> : tile<i32>
        for %iv in (%c0 to %c0, step %c0) : tile<i32> {
          continue
        }
    """)
    launch(text, grid=(1,))


def test_continue_from_nested_if_in_for():
    # sum of the odd iv below 2*bx, skipping iv == 5
    out = per_block(
        kernel(
            PRELUDE
            + """
        %c5 = constant <i32: 5> : tile<i32>
        %ub = muli %bx, %c2 : tile<i32>
        %s = for %iv in (%c0 to %ub, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
          %m = remi %iv, %c2 signed : tile<i32>
          %even = cmpi equal %m, %c0, signed : tile<i32> -> tile<i1>
          if %even {
            continue %acc : tile<i32>
          }
          %five = cmpi equal %iv, %c5, signed : tile<i32> -> tile<i1>
          if %five {
            %neg = subi %acc, %c100 : tile<i32>
            %back = addi %neg, %c100 : tile<i32>
            continue %back : tile<i32>
          }
          %a = addi %acc, %iv : tile<i32>
          continue %a : tile<i32>
        }
    """
        )
    )
    assert out["s"].tolist() == [sum(i for i in range(2 * b) if i % 2 and i != 5) for b in BLOCKS]


def test_nested_for_loops_with_divergent_inner_bounds():
    out = per_block(
        kernel(
            PRELUDE
            + """
        %s = for %i in (%c0 to %bx, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
          %inner = for %j in (%i to %bx, step %c2) : tile<i32> iter_values(%a2 = %acc) -> (tile<i32>) {
            %p = muli %i, %j : tile<i32>
            %n = addi %a2, %p : tile<i32>
            continue %n : tile<i32>
          }
          continue %inner : tile<i32>
        }
    """
        )
    )
    assert out["s"].tolist() == [sum(i * j for i in range(b) for j in range(i, b, 2)) for b in BLOCKS]


# -- loop --------------------------------------------------------------------------------


def collatz_steps(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_loop_breaks_at_different_iterations_per_block():
    out = per_block(
        kernel(
            PRELUDE
            + """
        %n0 = addi %bx, %c1 : tile<i32>
        %steps, %last = loop iter_values(%n = %n0, %k = %c0) : tile<i32>, tile<i32> -> tile<i32>, tile<i32> {
          %done = cmpi equal %n, %c1, signed : tile<i32> -> tile<i1>
          if %done {
            break %k, %n : tile<i32>, tile<i32>
          }
          %k1 = addi %k, %c1 : tile<i32>
          %m = remi %n, %c2 signed : tile<i32>
          %even = cmpi equal %m, %c0, signed : tile<i32> -> tile<i1>
          %next = if %even -> (tile<i32>) {
            %h = divi %n, %c2 signed : tile<i32>
            yield %h : tile<i32>
          } else {
            %t = muli %n, %c3 : tile<i32>
            %t1 = addi %t, %c1 : tile<i32>
            yield %t1 : tile<i32>
          }
          continue %next, %k1 : tile<i32>, tile<i32>
        }
    """
        ),
        blocks=list(range(30)),
    )
    assert out["steps"].tolist() == [collatz_steps(b + 1) for b in range(30)]
    assert out["last"].tolist() == [1] * 30


def test_loop_break_from_doubly_nested_if_with_result_types_unlike_the_carried_ones():
    # carried i32, result f32 (from break) and i1
    out = per_block(
        kernel(
            PRELUDE
            + """
        %r, %flag = loop iter_values(%i = %c0) : tile<i32> -> tile<f32>, tile<i1> {
          %big = cmpi greater_than_or_equal %i, %bx, signed : tile<i32> -> tile<i1>
          if %big {
            %m = remi %bx, %c2 signed : tile<i32>
            %odd = cmpi equal %m, %c1, signed : tile<i32> -> tile<i1>
            if %odd {
              %f = itof %i signed : tile<i32> -> tile<f32>
              %t = constant <i1: true> : tile<i1>
              break %f, %t : tile<f32>, tile<i1>
            }
            %three = constant <i32: 3> : tile<i32>
            %f2 = itof %three signed : tile<i32> -> tile<f32>
            %fl = constant <i1: false> : tile<i1>
            break %f2, %fl : tile<f32>, tile<i1>
          }
          %i1 = addi %i, %c1 : tile<i32>
          continue %i1 : tile<i32>
        }
    """
        )
    )
    assert out["r"].dtype == np.float32
    assert out["r"].tolist() == [float(b) if b % 2 else 3.0 for b in BLOCKS]
    assert out["flag"].tolist() == [b % 2 == 1 for b in BLOCKS]


def test_loop_with_continue_and_break_in_both_branches():
    # count down from bx; odd values are skipped with `continue`; stop at 0 or below
    out = per_block(
        kernel(
            PRELUDE
            + """
        %s = loop iter_values(%n = %bx, %acc = %c0) : tile<i32>, tile<i32> -> tile<i32> {
          %le = cmpi less_than_or_equal %n, %c0, signed : tile<i32> -> tile<i1>
          %m = remi %n, %c2 signed : tile<i32>
          %odd = cmpi equal %m, %c1, signed : tile<i32> -> tile<i1>
          %n1 = subi %n, %c1 : tile<i32>
          if %le {
            break %acc : tile<i32>
          } else {
            if %odd {
              continue %n1, %acc : tile<i32>, tile<i32>
            }
          }
          %a = addi %acc, %n : tile<i32>
          continue %n1, %a : tile<i32>, tile<i32>
        }
    """
        )
    )
    assert out["s"].tolist() == [sum(n for n in range(b, 0, -1) if n % 2 == 0) for b in BLOCKS]


def test_loop_without_break_is_an_error():
    text = kernel("""
        loop {
          continue
        }
    """)
    with pytest.raises(InterpError) as e:
        launch(text, grid=(1,))
    assert str(e.value) == "<input>:3:5: error: loop: this loop has no `break`: it would never end"


def test_loop_carried_tokens_and_join_tokens():
    out = per_block(
        kernel(
            PRELUDE
            + """
        %t0 = make_token : token
        %t, %n = for %iv in (%c0 to %bx, step %c1) : tile<i32> iter_values(%tok = %t0, %k = %c0)
            -> (token, tile<i32>) {
          %t1 = make_token : token
          %j = join_tokens %tok, %t1 : token
          %k1 = addi %k, %c1 : tile<i32>
          continue %j, %k1 : token, tile<i32>
        }
        %z = cmpi equal %bx, %c0, signed : tile<i32> -> tile<i1>
        %u = if %z -> (token) { yield %t : token } else { yield %t0 : token }
    """
        )
    )
    assert out["n"].tolist() == BLOCKS
    assert out["t"] == "token" and out["u"] == "token"


# -- return --------------------------------------------------------------------------------


def test_return_from_divergent_if_stops_those_blocks_only():
    text = kernel(
        PRELUDE
        + """
        %m = remi %bx, %c3 signed : tile<i32>
        %z = cmpi equal %m, %c0, signed : tile<i32> -> tile<i1>
        %t0 = print_tko "start %d\\n", %bx : tile<i32> -> token
        if %z {
          %t1 = print_tko "early %d\\n", %bx : tile<i32> -> token
          return
        }
        %one = cmpi equal %m, %c1, signed : tile<i32> -> tile<i1>
        %v = if %one -> (tile<i32>) {
          if %one { return }
          yield %c0 : tile<i32>
        } else {
          yield %c100 : tile<i32>
        }
        %t2 = print_tko "end %d %d\\n", %bx, %v : tile<i32>, tile<i32> -> token
    """
    )
    expected = ""
    for b in range(7):
        expected += f"start {b}\n"
        if b % 3 == 0:
            expected += f"early {b}\n"
        elif b % 3 == 2:
            expected += f"end {b} 100\n"
    assert printed(text, grid=(7,), print_prefix=False) == expected


def test_blocks_left_after_an_early_return_keep_values_from_before_it():
    out = io.StringIO()
    text = kernel(
        PRELUDE
        + """
        %sq = muli %bx, %bx : tile<i32>
        %odd_m = remi %bx, %c2 signed : tile<i32>
        %odd = cmpi equal %odd_m, %c1, signed : tile<i32> -> tile<i1>
        if %odd { return }
        %r = for %iv in (%c0 to %bx, step %c1) : tile<i32> iter_values(%a = %sq) -> (tile<i32>) {
          %big = cmpi greater_than %iv, %c3, signed : tile<i32> -> tile<i1>
          %a1 = addi %a, %iv : tile<i32>
          continue %a1 : tile<i32>
        }
        %t = print_tko "%d:%d\\n", %bx, %r : tile<i32>, tile<i32> -> token
    """
    )
    launch(text, grid=(9,), options=RunOptions(stdout=out, print_prefix=False))
    assert out.getvalue() == "".join(f"{b}:{b * b + sum(range(b))}\n" for b in range(0, 9, 2))


# -- dependencies through merges ---------------------------------------------------------------


def _frame(machine: Machine, blocks: list[int]) -> Frame:
    xs = np.array(blocks, dtype=np.int32)
    zeros = np.zeros(len(blocks), dtype=np.int32)
    machine.grid = (max(blocks) + 1, 1, 1)
    return Frame(Group(xs, zeros, zeros))


def _values(module, entry) -> dict[str, object]:
    return {r.name: r for op in entry.walk() for r in op.results if r.name}


def test_value_deps_are_merged_through_if_and_loops():
    from compiler.runtime import find_kernel, load_module

    text = kernel(
        PRELUDE
        + """
        %t0 = make_token : token
        %p = print_tko "" -> token
        %z = cmpi equal %bx, %c0, signed : tile<i32> -> tile<i1>
        %u = if %z -> (token) { yield %p : token } else { yield %t0 : token }
        %w = if %z -> (token) { yield %t0 : token } else { yield %t0 : token }
        %l = for %iv in (%c0 to %bx, step %c1) : tile<i32> iter_values(%tok = %t0) -> (token) {
          %q = print_tko "", token = %tok -> token
          continue %q : token
        }
    """
    )
    module = load_module(text)
    entry = find_kernel(module, None)
    machine = Machine(module, options=RunOptions(stdout=io.StringIO()))
    machine.exec_block(entry.regions[0].blocks[0], _frame(machine, [0, 1, 2, 3]))
    v = _values(module, entry)
    deps = machine.value_deps
    (p_instance,) = deps[v["p"]]
    assert deps[v["u"]] == {p_instance}  # a branch taken by some blocks depends on the print
    assert v["w"] not in deps
    # the loop ran 3 times for the last block: the chain of its prints
    assert len(deps[v["l"]]) == 3 and p_instance not in deps[v["l"]]


def test_machine_runs_a_kernel_twice_with_fresh_state():
    from compiler.runtime import find_kernel, load_module

    text = kernel(
        PRELUDE
        + """
        %p = print_tko "%d\\n", %bx : tile<i32> -> token
        %ok = cmpi less_than %bx, %c2, signed : tile<i32> -> tile<i1>
        assert %ok, "small" : tile<i1>
    """
    )
    module = load_module(text)
    entry = find_kernel(module, None)
    out = io.StringIO()
    machine = Machine(module, options=RunOptions(stdout=out, print_prefix=False))
    machine.run(entry, (2,), [])
    assert machine.value_deps == {} and machine.assert_failures == []
    with pytest.raises(InterpError):
        machine.run(entry, (3,), [])
    assert len(machine.assert_failures) == 1
    machine.run(entry, (1,), [])  # the failures of the last run are gone
    assert machine.assert_failures == []
    assert out.getvalue() == "0\n1\n0\n1\n2\n0\n"


# -- random structured programs ------------------------------------------------------------
#
# A small generator of kernels with nested if / for / loop, early break / continue /
# return under conditions that depend on the block id (or not), and a plain-Python
# interpreter of the same programs. Each block prints its final accumulator.


class _Break(Exception):
    def __init__(self, acc: int) -> None:
        self.acc = acc


class _Continue(_Break):
    pass


class _Return(Exception):
    pass


class _Program:
    def __init__(self, rng) -> None:
        self.rng = rng
        self.n = 0
        self.lines: list[str] = []

    # IR helpers
    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def const(self, v: int) -> str:
        name = self.fresh()
        self.emit(f"{name} = constant <i32: {v}> : tile<i32>")
        return name

    def binop(self, op: str, a: str, b: str) -> str:
        name = self.fresh()
        signed = " signed" if op in ("remi", "divi") else ""
        self.emit(f"{name} = {op} {a}, {b}{signed} : tile<i32>")
        return name

    # sources: ("bx",) | ("const", v) | ("iv", depth) | ("mod", source, m)
    def source(self, ivs: list[str], allow_iv: bool = True):
        choices = ["bx", "const", "mod"] + (["iv"] if ivs and allow_iv else [])
        kind = self.rng.choice(choices)
        if kind == "const":
            return ("const", self.rng.randint(0, 6))
        if kind == "iv":
            return ("iv", self.rng.randrange(len(ivs)))
        if kind == "mod":
            return ("mod", ("bx",), self.rng.randint(2, 5))
        return ("bx",)

    def gen_stmts(self, depth: int, ivs: list[str], loop: str | None, top: bool) -> list:
        out = []
        for _ in range(self.rng.randint(1, 3)):
            kinds = ["upd", "upd"]
            if depth < 3:
                kinds += ["if", "for", "loop"]
            if loop is not None:
                kinds += ["cont"] + (["brk"] if loop == "loop" else [])
            if top:
                kinds.append("ret")
            kind = self.rng.choice(kinds)
            cond = (self.source(ivs), self.rng.randint(2, 4), self.rng.randint(0, 2), self.rng.choice(["eq", "lt"]))
            if kind == "upd":
                out.append(("upd", self.rng.randint(1, 3), self.source(ivs), self.rng.choice([97, 1000])))
            elif kind == "if":
                then = self.gen_stmts(depth + 1, ivs, loop, top)
                other = self.gen_stmts(depth + 1, ivs, loop, top) if self.rng.random() < 0.7 else []
                out.append(("if", cond, then, other))
            elif kind == "for":
                lo = self.rng.choice([("const", self.rng.randint(0, 2)), ("mod", ("bx",), 3)])
                hi = self.rng.choice([("const", self.rng.randint(0, 6)), ("mod", ("bx",), 7), ("bx",)])
                step = self.rng.choice([("const", self.rng.randint(1, 3)), ("step",)])
                body = self.gen_stmts(depth + 1, [*ivs, "x"], "for", False)
                out.append(("for", lo, hi, step, body))
            elif kind == "loop":
                bound = self.rng.choice([("const", self.rng.randint(0, 4)), ("mod", ("bx",), 5)])
                body = self.gen_stmts(depth + 1, [*ivs, "x"], "loop", False)
                out.append(("loop", bound, body))
            else:
                out.append((kind, cond))
        return out

    # simulation
    def value(self, src, env) -> int:
        if src[0] == "bx":
            return env["bx"]
        if src[0] == "const":
            return src[1]
        if src[0] == "iv":
            return env["ivs"][src[1]]
        if src[0] == "step":
            return env["bx"] % 2 + 1
        return self.value(src[1], env) % src[2]

    def test(self, cond, env) -> bool:
        src, m, k, how = cond
        v = self.value(src, env) % m
        return v == k if how == "eq" else v < k

    def sim(self, stmts, env, out: list[str]) -> None:
        for s in stmts:
            kind = s[0]
            if kind == "upd":
                env["acc"] = (env["acc"] * s[1] + self.value(s[2], env)) % s[3]
            elif kind == "if":
                self.sim(s[2] if self.test(s[1], env) else s[3], env, out)
            elif kind in ("cont", "brk", "ret"):
                if self.test(s[1], env):
                    if kind == "ret":
                        out.append(f"ret {env['acc']}\n")
                        raise _Return()
                    raise (_Continue if kind == "cont" else _Break)(env["acc"])
            elif kind == "for":
                lo, hi, step = (self.value(x, env) for x in s[1:4])
                for iv in range(lo, hi, step):
                    inner = {**env, "ivs": [*env["ivs"], iv]}
                    try:
                        self.sim(s[4], inner, out)
                    except _Continue as c:
                        inner["acc"] = c.acc
                    env["acc"] = inner["acc"]
            else:  # loop
                bound = self.value(s[1], env)
                k = 0
                while True:
                    if k >= bound:
                        break
                    inner = {**env, "ivs": [*env["ivs"], k]}
                    try:
                        self.sim(s[2], inner, out)
                    except _Continue as c:
                        inner["acc"] = c.acc
                    except _Break as b:
                        env["acc"] = b.acc
                        break
                    env["acc"] = inner["acc"]
                    k += 1

    # IR
    def ir_value(self, src, names: dict) -> str:
        if src[0] == "bx":
            return "%bx"
        if src[0] == "const":
            return self.const(src[1])
        if src[0] == "iv":
            return names["ivs"][src[1]]
        if src[0] == "step":
            return self.binop("addi", self.binop("remi", "%bx", self.const(2)), self.const(1))
        return self.binop("remi", self.ir_value(src[1], names), self.const(src[2]))

    def ir_cond(self, cond, names) -> str:
        src, m, k, how = cond
        v = self.binop("remi", self.ir_value(src, names), self.const(m))
        name = self.fresh()
        pred = "equal" if how == "eq" else "less_than"
        self.emit(f"{name} = cmpi {pred} {v}, {self.const(k)}, signed : tile<i32> -> tile<i1>")
        return name

    def ir(self, stmts, acc: str, names: dict) -> str:
        """Emit `stmts`; returns the name holding the accumulator after them."""
        for s in stmts:
            kind = s[0]
            if kind == "upd":
                acc = self.binop(
                    "remi",
                    self.binop("addi", self.binop("muli", acc, self.const(s[1])), self.ir_value(s[2], names)),
                    self.const(s[3]),
                )
            elif kind == "if":
                c = self.ir_cond(s[1], names)
                name = self.fresh()
                self.emit(f"{name} = if {c} -> (tile<i32>) {{")
                self.emit(f"yield {self.ir(s[2], acc, names)} : tile<i32>")
                self.emit("} else {")
                self.emit(f"yield {self.ir(s[3], acc, names)} : tile<i32>")
                self.emit("}")
                acc = name
            elif kind in ("cont", "brk", "ret"):
                c = self.ir_cond(s[1], names)
                self.emit(f"if {c} {{")
                if kind == "ret":
                    self.emit(f'{self.fresh()} = print_tko "ret %d\\n", {acc} : tile<i32> -> token')
                    self.emit("return")
                elif kind == "brk":
                    self.emit(f"break {acc} : tile<i32>")
                elif names["loop"] == "for":
                    self.emit(f"continue {acc} : tile<i32>")
                else:
                    self.emit(f"continue {acc}, {names['k1']} : tile<i32>, tile<i32>")
                self.emit("}")
            elif kind == "for":
                lo, hi, step = (self.ir_value(x, names) for x in s[1:4])
                iv, a_in, name = self.fresh(), self.fresh(), self.fresh()
                self.emit(
                    f"{name} = for {iv} in ({lo} to {hi}, step {step}) : tile<i32> "
                    f"iter_values({a_in} = {acc}) -> (tile<i32>) {{"
                )
                inner = {**names, "ivs": [*names["ivs"], iv], "loop": "for"}
                self.emit(f"continue {self.ir(s[4], a_in, inner)} : tile<i32>")
                self.emit("}")
                acc = name
            else:  # loop
                bound = self.ir_value(s[1], names)
                a_in, k, name = self.fresh(), self.fresh(), self.fresh()
                self.emit(
                    f"{name} = loop iter_values({a_in} = {acc}, {k} = %c0) : tile<i32>, tile<i32> -> tile<i32> {{"
                )
                done = self.fresh()
                self.emit(f"{done} = cmpi greater_than_or_equal {k}, {bound}, signed : tile<i32> -> tile<i1>")
                self.emit(f"if {done} {{ break {a_in} : tile<i32> }}")
                k1 = self.binop("addi", k, "%c1")
                inner = {**names, "ivs": [*names["ivs"], k], "loop": "loop", "k1": k1}
                out = self.ir(s[2], a_in, inner)
                self.emit(f"continue {out}, {k1} : tile<i32>, tile<i32>")
                self.emit("}")
                acc = name
        return acc


def _random_program(seed: int) -> tuple[str, list]:
    import random

    p = _Program(random.Random(seed))
    stmts = p.gen_stmts(0, [], None, True)
    p.emit("%bx, %by, %bz = get_tile_block_id : tile<i32>")
    p.emit("%c0 = constant <i32: 0> : tile<i32>")
    p.emit("%c1 = constant <i32: 1> : tile<i32>")
    acc = p.ir(stmts, "%c0", {"ivs": [], "loop": None})
    p.emit(f'%final = print_tko "acc %d\\n", {acc} : tile<i32> -> token')
    return kernel("\n".join(p.lines)), stmts, p


@pytest.mark.parametrize("seed", range(40))
def test_random_structured_programs_match_a_python_run_of_each_block(seed):
    text, stmts, program = _random_program(seed)
    blocks = 12
    expected = []
    for b in range(blocks):
        out: list[str] = []
        env = {"bx": b, "acc": 0, "ivs": []}
        try:
            program.sim(stmts, env, out)
            out.append(f"acc {env['acc']}\n")
        except _Return:
            pass
        expected.append("".join(out))
    # small groups too: divergence then also happens between groups
    for budget in (1 << 20, 3):
        got = printed(text, grid=(blocks,), print_prefix=False, group_budget=budget)
        assert got == "".join(expected), text


def test_return_from_inside_a_loop_body_when_the_ir_is_not_verified():
    # The verifier rejects `return` inside loops (the reference forbids it), but the
    # machine still handles it: blocks leave the loop and the kernel at different
    # iterations, the others finish the loop.
    from compiler.runtime import find_kernel
    from compiler.text import parse

    text = kernel(
        PRELUDE
        + """
        %s = for %iv in (%c0 to %c100, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
          %hit = cmpi equal %iv, %bx, signed : tile<i32> -> tile<i1>
          %small = cmpi less_than %bx, %c3, signed : tile<i32> -> tile<i1>
          %both = andi %hit, %small : tile<i1>
          if %both {
            %t = print_tko "left %d at %d\\n", %bx, %acc : tile<i32>, tile<i32> -> token
            return
          }
          %a = addi %acc, %iv : tile<i32>
          continue %a : tile<i32>
        }
        %t2 = print_tko "done %d %d\\n", %bx, %s : tile<i32>, tile<i32> -> token
    """
    )
    module = parse(text).module
    out = io.StringIO()
    Machine(module, options=RunOptions(stdout=out, print_prefix=False)).run(find_kernel(module, None), (5,), [])
    assert out.getvalue() == "".join(
        f"left {b} at {sum(range(b))}\n" if b < 3 else f"done {b} {sum(range(100))}\n" for b in range(5)
    )
