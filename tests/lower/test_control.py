"""Control flow through the lowering: `if`, `for`, `loop`, `break`/`continue`/`return`
(written with flags, since Triton has none of the three), with conditions and trip counts
that differ between tile blocks; each kernel runs under Triton's interpreter and on the
CPU interpreter, and compiles for every target.

The kernels are those of tests/interp/test_control.py, with their results stored per
tile block (out[bx] = value) so that both backends can be compared.
"""

from __future__ import annotations

import numpy as np
import pytest

from .harness import ON_GPU, compile_for, run_both, source_of, triton_36_fails_without_workarounds

BLOCKS = 12
_NP = {"i32": np.int32, "f32": np.float32, "i1": np.bool_, "i64": np.int64, "i8": np.int8}

PRELUDE = """
%bx, %by, %bz = get_tile_block_id : tile<i32>
%c0 = constant <i32: 0> : tile<i32>
%c1 = constant <i32: 1> : tile<i32>
%c2 = constant <i32: 2> : tile<i32>
%c3 = constant <i32: 3> : tile<i32>
%c100 = constant <i32: 100> : tile<i32>
"""


def storing(body: str, results: list[tuple[str, str]]) -> str:
    """A kernel running `body` then storing each named result at out_k[bx]."""
    params = ", ".join(f"%out_{name}: tile<ptr<{t}>>" for name, t in results)
    stores = []
    for name, t in results:
        stores.append(f"%p_{name} = offset %out_{name}, %bx : tile<ptr<{t}>>, tile<i32> -> tile<ptr<{t}>>")
        stores.append(f"%s_{name} = store_ptr_tko weak %p_{name}, %{name} : tile<ptr<{t}>>, tile<{t}> -> token")
    lines = "\n".join("    " + ln.strip() for ln in (PRELUDE + body).strip().splitlines() + stores)
    return f"cuda_tile.module @m {{\n  entry @k({params}) {{\n{lines}\n    return\n  }}\n}}\n"


def check(body: str, results: list[tuple[str, str]], blocks: int = BLOCKS, on_tileiras=None) -> list[np.ndarray]:
    text = storing(body, results)
    args = [np.zeros(blocks, _NP[t]) for _, t in results]
    _, tri = run_both(text, "k", blocks, args, on_tileiras=on_tileiras)
    return tri


def test_divergent_if_with_two_results():
    r, s, after = check(
        """
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
        """,
        [("r", "i32"), ("s", "i32"), ("after", "i32")],
    )
    assert r.tolist() == [100 if b % 3 == 0 else b * b + 1 for b in range(BLOCKS)]


def test_for_with_continue_from_nested_ifs():
    (s,) = check(
        """
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
        """,
        [("s", "i32")],
    )
    assert s.tolist() == [sum(i for i in range(2 * b) if i % 2 and i != 5) for b in range(BLOCKS)]


def test_nested_for_loops_with_divergent_inner_bounds():
    (s,) = check(
        """
        %s = for %i in (%c0 to %bx, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
          %inner = for %j in (%i to %bx, step %c2) : tile<i32> iter_values(%a2 = %acc) -> (tile<i32>) {
            %p = muli %i, %j : tile<i32>
            %n = addi %a2, %p : tile<i32>
            continue %n : tile<i32>
          }
          continue %inner : tile<i32>
        }
        """,
        [("s", "i32")],
    )
    assert s.tolist() == [sum(i * j for i in range(b) for j in range(i, b, 2)) for b in range(BLOCKS)]


def test_loop_breaks_at_different_iterations():
    steps, last = check(
        """
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
        """,
        [("steps", "i32"), ("last", "i32")],
        blocks=30,
    )

    def collatz(n: int) -> int:
        k = 0
        while n != 1:
            n, k = (n // 2 if n % 2 == 0 else 3 * n + 1), k + 1
        return k

    assert steps.tolist() == [collatz(b + 1) for b in range(30)]
    assert last.tolist() == [1] * 30


def test_break_from_doubly_nested_if_with_other_result_types():
    r, flag = check(
        """
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
        """,
        [("r", "f32"), ("flag", "i1")],
    )
    assert r.tolist() == [float(b) if b % 2 else 3.0 for b in range(BLOCKS)]


def test_loop_with_continue_and_break_in_both_branches():
    (s,) = check(
        """
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
        """,
        [("s", "i32")],
    )
    assert s.tolist() == [sum(n for n in range(b, 0, -1) if n % 2 == 0) for b in range(BLOCKS)]


EARLY_RETURN = """
cuda_tile.module @m {
  entry @k(%out: tile<ptr<i32>>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c3 = constant <i32: 3> : tile<i32>
    %c7 = constant <i32: 7> : tile<i32>
    %p = offset %out, %bx : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %m = remi %bx, %c3 signed : tile<i32>
    %z = cmpi equal %m, %c0, signed : tile<i32> -> tile<i1>
    if %z {
      %t0 = store_ptr_tko weak %p, %c7 : tile<ptr<i32>>, tile<i32> -> token
      return
    }
    %s = for %iv in (%c0 to %bx, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %a = addi %acc, %iv : tile<i32>
      continue %a : tile<i32>
    }
    %big = cmpi greater_than %s, %c7, signed : tile<i32> -> tile<i1>
    if %big {
      %odd = remi %bx, %c3 signed : tile<i32>
      %one = cmpi equal %odd, %c1, signed : tile<i32> -> tile<i1>
      if %one {
        %t1 = store_ptr_tko weak %p, %s : tile<ptr<i32>>, tile<i32> -> token
        return
      }
    }
    %neg = subi %c0, %s : tile<i32>
    %t2 = store_ptr_tko weak %p, %neg : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""


def _early_return_expected(b: int) -> int:
    if b % 3 == 0:
        return 7
    s = sum(range(b))
    return s if s > 7 and b % 3 == 1 else -s


def test_early_return_from_nested_ifs():
    out = np.full(BLOCKS, -999, np.int32)
    _, (tri,) = run_both(EARLY_RETURN, "k", BLOCKS, [out])
    assert tri.tolist() == [_early_return_expected(b) for b in range(BLOCKS)]
    src = source_of(EARLY_RETURN)
    assert "returned" in src  # the rest of the kernel runs under the return flag


def wrapping_trip_count(lo: int, hi: int, step: int, unsigned: bool, bits: int = 8) -> int | None:
    """The iterations of a `for` whose induction variable is advanced with wrap-around iN
    arithmetic and compared with the upper bound each time (tileiras' loop), or None if it
    never reaches the bound."""
    mask, half = (1 << bits) - 1, 1 << (bits - 1)
    read = (lambda v: v & mask) if unsigned else (lambda v: ((v + half) & mask) - half)  # noqa: E731
    iv, n = read(lo), 0
    while iv < read(hi):
        iv, n = read(iv + step), n + 1
        if n > 1 << bits:  # every value seen: it cycles below the bound
            return None
    return n


@pytest.mark.parametrize(("unsigned", "lo", "hi", "step"), [(False, 120, 127, 5), (True, -6, -1, 3)])
def test_i8_and_unsigned_for_loops(unsigned, lo, hi, step):
    u = "unsigned " if unsigned else ""
    # The last value of the range, plus the step, does not fit i8: the iteration space is the
    # range's (cuda-tile Ops.td, `for`: "range(L_b, U_b, S) = { L_b + i * S | ... < U_b }", "the
    # range includes the lowerBound but does not include the upperBound"), 2 iterations, which
    # the interpreter and the triton backend run. tileiras 13.5 wraps the induction variable
    # (125 + 5 -> -126, still below 127) and runs the body on until the wrapped value reaches
    # the bound: 155 iterations (unsigned 250, 253, 0, 3, ...: 87), values outside [lb, ub)
    # included. The op docs are explicit about the range, so this is a tileiras defect; the
    # check pins exactly that count (stored as i8, it wraps too), to fail if tileiras changes.
    span = range(lo % 256 if unsigned else lo, hi % 256 if unsigned else hi, step)
    wrapped = wrapping_trip_count(lo, hi, step, unsigned)
    assert wrapped is not None and wrapped != len(span)  # the case overflows: the deviation shows
    assert wrapping_trip_count(lo - 3 * step, lo, step, unsigned) == 3  # no overflow: the range's count

    stored = ((wrapped + 128) % 256) - 128  # the count as the i8 result holds it

    def tileiras_wraps(cpu: list, gpu: list) -> None:
        assert cpu[0].tolist() == [len(span)] * 2
        assert gpu[0].tolist() == [stored] * 2, (gpu[0], wrapped)

    (n,) = check(
        f"""
        %lo = constant <i8: {lo}> : tile<i8>
        %hi = constant <i8: {hi}> : tile<i8>
        %st = constant <i8: {step}> : tile<i8>
        %z = constant <i8: 0> : tile<i8>
        %n = for {u}%iv in (%lo to %hi, step %st) : tile<i8> iter_values(%count = %z) -> (tile<i8>) {{
          %one = constant <i8: 1> : tile<i8>
          %c = addi %count, %one : tile<i8>
          continue %c : tile<i8>
        }}
        """,
        [("n", "i8")],
        blocks=2,
        on_tileiras=tileiras_wraps,
    )
    if not ON_GPU:  # n is the oracle's: the range's count; the check takes tileiras' count alone
        tileiras_wraps([n], [np.full(2, stored, np.int8)])
        with pytest.raises(AssertionError):
            tileiras_wraps([n], [n])


def test_control_flow_compiles_for_every_target():
    for k in compile_for(EARLY_RETURN, "k"):
        assert k.spills == 0


def test_an_unsigned_i64_loop_ends_where_its_next_value_passes_2_to_the_64():
    """Found by differential testing: a 64-bit counter has no wider type to run in, so its
    step wrapped (0xFF..FE + 4 -> 2, still below the bound) and the loop never ended under
    Triton's interpreter (and in the compiled while loop). The range is {lb + i*step < ub}:
    3 iterations here. Run on the CPU backends only: tileiras wraps such counters (see the i8
    case above), which for 64 bits would not end."""
    from compiler.runtime import launch

    text = storing(
        """
        %lo = constant <i64: -10> : tile<i64>
        %hi = constant <i64: -1> : tile<i64>
        %st = constant <i64: 4> : tile<i64>
        %z = constant <i64: 0> : tile<i64>
        %n = for unsigned %iv in (%lo to %hi, step %st) : tile<i64> iter_values(%count = %z) -> (tile<i64>) {
          %one = constant <i64: 1> : tile<i64>
          %c = addi %count, %one : tile<i64>
          continue %c : tile<i64>
        }
        """,
        [("n", "i64")],
    )
    assert "tl.where(" in source_of(text)  # the wrap check of the while loop
    for backend in ("cpu", "triton-interpret"):
        n = np.zeros(2, np.int64)
        launch(text, "k", 2, [n], backend=backend)
        assert n.tolist() == [3, 3], backend


# A `loop` that always leaves at its first `break`, whose body loads through pointers computed
# from its iter value: Triton 3.6 proves the load dead (range analysis: i starts at 0 and only
# grows past the break) and then failed in its TritonGPUCoalesce pass on it (an `idx < size()`
# assertion inside LLVM's SmallVector). Found by tests/lower/fuzz.py. The `if`'s condition now
# passes through `_branch` (ops_control), which Triton's analysis cannot see into.
DEAD_LOOP_LOAD = """cuda_tile.module @m {
  entry @k(%x: tile<ptr<i64>>, %g: tile<ptr<i64>>, %o: tile<ptr<i64>>) {
    %tv = make_tensor_view %x, shape = [16], strides = [1] : tensor_view<16xi64, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(16), tensor_view<16xi64, strides=[1]>>
    %ov = make_tensor_view %o, shape = [16], strides = [1] : tensor_view<16xi64, strides=[1]>
    %po = make_partition_view %ov : partition_view<tile=(16), tensor_view<16xi64, strides=[1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %x0, %t0 = load_view_tko weak %pv[%c0] : partition_view<tile=(16), tensor_view<16xi64, strides=[1]>>, tile<i32> -> tile<16xi64>, token
    %r = loop iter_values(%i = %c0, %acc = %x0) : tile<i32>, tile<16xi64> -> tile<16xi64> {
      %done = cmpi greater_than_or_equal %i, %c0, signed : tile<i32> -> tile<i1>
      if %done {
        break %acc : tile<16xi64>
      }
      %k = constant <i64: 163> : tile<16xi64>
      %m = remi %acc, %k unsigned : tile<16xi64>
      %g1 = reshape %g : tile<ptr<i64>> -> tile<1xptr<i64>>
      %gb = broadcast %g1 : tile<1xptr<i64>> -> tile<16xptr<i64>>
      %p = offset %gb, %m : tile<16xptr<i64>>, tile<16xi64> -> tile<16xptr<i64>>
      %v, %t1 = load_ptr_tko weak %p : tile<16xptr<i64>> -> tile<16xi64>, token
      %i1 = addi %i, %c1 : tile<i32>
      continue %i1, %v : tile<i32>, tile<16xi64>
    }
    %t2 = store_view_tko weak %r, %po[%c0] : tile<16xi64>, partition_view<tile=(16), tensor_view<16xi64, strides=[1]>>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


def test_a_loop_whose_loads_are_dead() -> None:
    x = np.arange(16, dtype=np.int64)
    cpu, _ = run_both(DEAD_LOOP_LOAD, "k", 1, [x, np.zeros(163, np.int64), np.zeros(16, np.int64)])
    assert np.array_equal(cpu[2], x)
    for k in compile_for(DEAD_LOOP_LOAD, "k"):
        assert k.spills == 0
    triton_36_fails_without_workarounds(DEAD_LOOP_LOAD, "sm_90", "TritonGPUCoalesce")


# A store in the `else` of `x >= x` (unsigned): Triton folds the comparison, its analysis
# marks the branch dead, and Triton 3.6 failed in TritonGPUCoalesce as above (fuzz seed 151085
# of the campaign aimed at control flow, --compile sm_100, cut down).
DEAD_BRANCH_STORE = """cuda_tile.module @m {
  entry @k(%o: tile<ptr<i32>>, %a: tile<i32>) {
    %ot = make_tensor_view %o, shape = [16], strides = [1] : tensor_view<16xi32, strides=[1]>
    %ov = make_partition_view %ot : partition_view<tile=(16), tensor_view<16xi32, strides=[1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %same = cmpi greater_than_or_equal %a, %a, unsigned : tile<i32> -> tile<i1>
    if %same {
      %one = constant <i32: 1> : tile<16xi32>
      %t1 = store_view_tko weak %one, %ov[%c0] : tile<16xi32>, partition_view<tile=(16), tensor_view<16xi32, strides=[1]>>, tile<i32> -> token
      yield
    } else {
      %v = iota : tile<16xi32>
      %t2 = store_view_tko weak %v, %ov[%c0] : tile<16xi32>, partition_view<tile=(16), tensor_view<16xi32, strides=[1]>>, tile<i32> -> token
      yield
    }
    return
  }
}
"""  # noqa: E501


def test_a_branch_that_is_never_taken_stores_nothing() -> None:
    cpu, _ = run_both(DEAD_BRANCH_STORE, "k", 1, [np.zeros(16, np.int32), 7])
    assert cpu[0].tolist() == [1] * 16
    for k in compile_for(DEAD_BRANCH_STORE, "k"):
        assert k.spills == 0
    triton_36_fails_without_workarounds(DEAD_BRANCH_STORE, "sm_90", "TritonGPUCoalesce")


# A `loop` that leaves by `break` with its iter value, whose body reduces a loop-invariant
# tile (a broadcast of the value an atomic exchange returned, which is also the iter value's
# start): Triton 3.6 failed in TritonGPURemoveLayoutConversions ("'ttg.convert_layout' op
# operation destroyed but still has uses") for every target; 3.9 compiles it. Found by an aimed
# fuzz campaign (seed 110202 of --weight mma=10 --weight mma_scaled=5, --compile sm_80; cut
# down by tests/lower/reduce.py --until compile-error, its unused parameters dropped). The
# start value now enters the loop through `_loop_entry` (ops_control), and Triton 3.6 compiles it.
BREAK_WITH_AN_INVARIANT_REDUCE = """cuda_tile.module @m {
  entry @k(%x2_ptr: tile<ptr<f64>>, %o1_ptr: tile<ptr<f64>>, %o1_e0: tile<i32>, %a0_ptr: tile<ptr<f64>>) {
    %tok = make_token : token
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %x2_tv = make_tensor_view %x2_ptr, shape = [4], strides = [1] : tensor_view<4xf64, strides=[1]>
    %x2_pv = make_strided_view %x2_tv : strided_view<tile=(2), traversal_strides=[2], tensor_view<4xf64, strides=[1]>>
    %o1_e0_0 = assume bounded<0, ?>, %o1_e0 : tile<i32>
    %o1_tv = make_tensor_view %o1_ptr, shape = [%o1_e0_0], strides = [1] : tile<i32> -> tensor_view<?xf64, strides=[1]>
    %o1_pv = make_partition_view %o1_tv : partition_view<tile=(2), tensor_view<?xf64, strides=[1]>>
    %x2, %x2_t = load_view_tko weak %x2_pv[%bx] token = %tok : strided_view<tile=(2), traversal_strides=[2], tensor_view<4xf64, strides=[1]>>, tile<i32> -> tile<2xf64>, token
    %v2 = iota : tile<2xi32>
    %c3 = constant <i32: 47> : tile<2xi32>
    %c4 = constant <i32: 1> : tile<2xi32>
    %c5 = constant <i32: 1> : tile<2xi32>
    %c6 = constant <i32: 2> : tile<i32>
    %v7 = muli %v2, %c3 : tile<2xi32>
    %v8 = addi %v7, %c4 : tile<2xi32>
    %v9 = andi %v8, %c5 : tile<2xi32>
    %c11 = constant <i32: 1> : tile<i32>
    %v12 = muli %by, %c11 : tile<i32>
    %v13 = addi %bx, %v12 : tile<i32>
    %v14 = muli %v13, %c6 : tile<i32>
    %v15 = reshape %v14 : tile<i32> -> tile<1xi32>
    %v16 = broadcast %v15 : tile<1xi32> -> tile<2xi32>
    %v10 = addi %v9, %v16 : tile<2xi32>
    %v17 = reshape %v10 : tile<2xi32> -> tile<2xi32>
    %v18 = reshape %a0_ptr : tile<ptr<f64>> -> tile<1xptr<f64>>
    %v19 = broadcast %v18 : tile<1xptr<f64>> -> tile<2xptr<f64>>
    %v20 = offset %v19, %v17 : tile<2xptr<f64>>, tile<2xi32> -> tile<2xptr<f64>>
    %v21, %t21 = atomic_rmw_tko acq_rel device %v20, xchg, %x2 : tile<2xptr<f64>>, tile<2xf64> -> tile<2xf64>, token
    %v48 = reshape %v21 : tile<2xf64> -> tile<2x1xf64>
    %v49 = broadcast %v48 : tile<2x1xf64> -> tile<2x8xf64>
    %c60 = constant <i32: 0> : tile<i32>
    %c61 = constant <i32: 1> : tile<i32>
    %c62 = constant <i32: 1> : tile<i32>
    %v63 = addi %bx, %c62 : tile<i32>
    %v73 = loop iter_values(%i64 = %c60, %acc65 = %v21) : tile<i32>, tile<2xf64> -> tile<2xf64> {
      %v66 = cmpi greater_than_or_equal %i64, %v63, signed : tile<i32> -> tile<i1>
      if %v66 {
        break %acc65 : tile<2xf64>
      }
      %v69 = reduce %v49 dim=1 identities=[0xfff0000000000000 : f64] : tile<2x8xf64> -> tile<2xf64>
            (%e70: tile<f64>, %a71: tile<f64>) {
              %y72 = maxf %e70, %a71 : tile<f64>
              yield %y72 : tile<f64>
            }
      %v67 = addi %i64, %c61 : tile<i32>
      continue %v67, %v69 : tile<i32>, tile<2xf64>
    }
    %o1_r = divf %v21, %v73 : tile<2xf64>
    %o1_st = store_view_tko weak %o1_r, %o1_pv[%bx] token = %tok : tile<2xf64>, partition_view<tile=(2), tensor_view<?xf64, strides=[1]>>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


def test_a_breaking_loop_reducing_an_invariant() -> None:
    x = np.array([5.0, 7.0, 9.0, 11.0])
    a = np.array([1.0, 2.0, 3.0, 4.0])
    cpu, _ = run_both(BREAK_WITH_AN_INVARIANT_REDUCE, "k", 1, [x, np.zeros(2), 2, a])
    # Elements 1 and 0 of a swapped for x[0:2]; the loop breaks with the old values at its
    # second trip, so the output is old / old.
    assert cpu[1].tolist() == [1.0, 1.0] and cpu[3].tolist() == [7.0, 5.0, 3.0, 4.0]
    assert "_loop_entry(v21)" in source_of(BREAK_WITH_AN_INVARIANT_REDUCE)
    for k in compile_for(BREAK_WITH_AN_INVARIANT_REDUCE, "k"):
        assert k.spills == 0
    # The [2] -> [2, 1] reshape is an index since 2026-12-02 (ops_shape), with which this kernel
    # compiles without the workaround too; the defect is shown on the tl.reshape it was.
    as_before = ("v48 = v21[:, None]", "v48 = tl.reshape(v21, (2, 1), can_reorder=False)")
    triton_36_fails_without_workarounds(
        BREAK_WITH_AN_INVARIANT_REDUCE, "sm_80", "TritonGPURemoveLayoutConversions", replace=as_before
    )


def _permuted_into_a_loop(shape: tuple[int, int], start: str) -> str:
    """A `loop` carrying a loaded (or constant) tile that an `if` replaces by the tile
    transposed (made before the loop) on odd trips, or by the minimum of the two, and that
    leaves by `break` after 3 trips: fuzz seed 150068 of --weight loop=5 --weight
    while_loop=5 --weight branch=5 --weight early_return=3, cut down and grown from 1x1x1.
    Triton 3.6 failed on it in TritonGPURemoveLayoutConversions before `_loop_entry`."""
    m, n = shape
    t = f"tile<{m}x{n}xi32>"
    view = f"partition_view<tile=({m}x{n}), tensor_view<{m}x{n}xi32, strides=[{n},1]>>"
    # The loaded tile itself (a computed start, even x + x, did not meet the defect).
    first = {"loaded": f"%acc0 = permute %x [0, 1] : {t} -> {t}", "constant": f"%acc0 = constant <i32: 7> : {t}"}[start]
    return f"""cuda_tile.module @m {{
  entry @k(%xp: tile<ptr<i32>>, %op: tile<ptr<i32>>) {{
    %xt = make_tensor_view %xp, shape = [{m}, {n}], strides = [{n}, 1] : tensor_view<{m}x{n}xi32, strides=[{n},1]>
    %xv = make_partition_view %xt : {view}
    %ot = make_tensor_view %op, shape = [{m}, {n}], strides = [{n}, 1] : tensor_view<{m}x{n}xi32, strides=[{n},1]>
    %ov = make_partition_view %ot : {view}
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c2 = constant <i32: 2> : tile<i32>
    %c3 = constant <i32: 3> : tile<i32>
    %x, %t0 = load_view_tko weak %xv[%c0, %c0] : {view}, tile<i32>, tile<i32> -> {t}, token
    {first}
    %xt2 = permute %x [1, 0] : {t} -> {t}
    %r = loop iter_values(%i = %c0, %acc = %acc0) : tile<i32>, {t} -> {t} {{
      %done = cmpi greater_than_or_equal %i, %c3, signed : tile<i32> -> tile<i1>
      if %done {{
        break %acc : {t}
      }}
      %odd = remi %i, %c2 signed : tile<i32>
      %is_odd = cmpi equal %odd, %c1, signed : tile<i32> -> tile<i1>
      %next = if %is_odd -> ({t}) {{
        yield %xt2 : {t}
      }} else {{
        %low = mini %acc, %xt2 signed : {t}
        yield %low : {t}
      }}
      %i1 = addi %i, %c1 : tile<i32>
      continue %i1, %next : tile<i32>, {t}
    }}
    %t1 = store_view_tko weak %r, %ov[%c0, %c0] : {t}, {view}, tile<i32>, tile<i32> -> token
    return
  }}
}}
"""  # noqa: E501


# A `loop` carrying a tile of pointers made from loaded integers (int_to_ptr of base + 4 x a
# loaded index), given its transpose through an `if` on odd trips: the pointer form of the
# layout defect above (Triton 3.6: "DenseMap::at failed" in TritonGPURemoveLayoutConversions).
LOOP_OF_LOADED_POINTERS = """cuda_tile.module @m {
  entry @k(%xp: tile<ptr<i32>>, %ip: tile<ptr<i64>>, %op: tile<ptr<i32>>) {
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c2 = constant <i32: 2> : tile<i32>
    %c3 = constant <i32: 3> : tile<i32>
    %io = iota : tile<256xi32>
    %ix = reshape %io : tile<256xi32> -> tile<16x16xi32>
    %i0 = reshape %ip : tile<ptr<i64>> -> tile<1x1xptr<i64>>
    %ib = broadcast %i0 : tile<1x1xptr<i64>> -> tile<16x16xptr<i64>>
    %ia = offset %ib, %ix : tile<16x16xptr<i64>>, tile<16x16xi32> -> tile<16x16xptr<i64>>
    %idx, %t0 = load_ptr_tko weak %ia : tile<16x16xptr<i64>> -> tile<16x16xi64>, token
    %base = ptr_to_int %xp : tile<ptr<i32>> -> tile<i64>
    %b1 = reshape %base : tile<i64> -> tile<1x1xi64>
    %bb = broadcast %b1 : tile<1x1xi64> -> tile<16x16xi64>
    %four = constant <i64: 4> : tile<16x16xi64>
    %bytes = muli %idx, %four : tile<16x16xi64>
    %addr = addi %bb, %bytes : tile<16x16xi64>
    %p = int_to_ptr %addr : tile<16x16xi64> -> tile<16x16xptr<i32>>
    %o0 = reshape %op : tile<ptr<i32>> -> tile<1x1xptr<i32>>
    %ob = broadcast %o0 : tile<1x1xptr<i32>> -> tile<16x16xptr<i32>>
    %o = offset %ob, %ix : tile<16x16xptr<i32>>, tile<16x16xi32> -> tile<16x16xptr<i32>>
    %pt = permute %p [1, 0] : tile<16x16xptr<i32>> -> tile<16x16xptr<i32>>
    %r = loop iter_values(%i = %c0, %acc = %p) : tile<i32>, tile<16x16xptr<i32>> -> tile<16x16xptr<i32>> {
      %done = cmpi greater_than_or_equal %i, %c3, signed : tile<i32> -> tile<i1>
      if %done {
        break %acc : tile<16x16xptr<i32>>
      }
      %odd = remi %i, %c2 signed : tile<i32>
      %is_odd = cmpi equal %odd, %c1, signed : tile<i32> -> tile<i1>
      %next = if %is_odd -> (tile<16x16xptr<i32>>) {
        yield %pt : tile<16x16xptr<i32>>
      } else {
        yield %acc : tile<16x16xptr<i32>>
      }
      %i1 = addi %i, %c1 : tile<i32>
      continue %i1, %next : tile<i32>, tile<16x16xptr<i32>>
    }
    %v, %t1 = load_ptr_tko weak %r : tile<16x16xptr<i32>> -> tile<16x16xi32>, token
    %t2 = store_ptr_tko weak %o, %v : tile<16x16xptr<i32>>, tile<16x16xi32> -> token
    return
  }
}
"""  # noqa: E501


def test_a_loop_carrying_pointers_made_from_loaded_integers() -> None:
    rng = np.random.default_rng(9)
    x = rng.integers(-1000, 1000, 256, dtype=np.int32)
    idx = rng.permutation(256).astype(np.int64)
    cpu, _ = run_both(LOOP_OF_LOADED_POINTERS, "k", 1, [x, idx, np.zeros(256, np.int32)])
    # Trips 0, 1, 2: the pointers, then their transpose (kept): loads through idx^T.
    assert np.array_equal(cpu[2], x[idx.reshape(16, 16).T.reshape(-1)])
    source = source_of(LOOP_OF_LOADED_POINTERS)
    assert "acc = _loop_entry(p)" in source
    for k in compile_for(LOOP_OF_LOADED_POINTERS, "k"):
        assert k.spills == 0
    triton_36_fails_without_workarounds(LOOP_OF_LOADED_POINTERS, "sm_90", "TritonGPURemoveLayoutConversions")
    # Pointers made by `offset` from the parameters keep their alignment facts: no gather.
    plain = LOOP_OF_LOADED_POINTERS.replace("%acc = %p)", "%acc = %o)")
    assert "_loop_entry(" not in source_of(plain)


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (16, 16), (64, 64)])
def test_a_loop_carrying_a_tile_transposed_outside_it(shape: tuple[int, int]) -> None:
    text = _permuted_into_a_loop(shape, "loaded")
    x = np.random.default_rng(5).integers(-50, 50, size=shape, dtype=np.int32)
    cpu, _ = run_both(text, "k", 1, [x, np.zeros(shape, np.int32)])
    # Trips 0, 1, 2: min(x, x^T), then x^T, then min(x^T, x^T).
    assert np.array_equal(cpu[1], x.T)
    for k in compile_for(text, "k"):
        assert k.spills == 0
    if shape == (16, 16):
        triton_36_fails_without_workarounds(text, "sm_90", "TritonGPURemoveLayoutConversions")
    # A constant start has no layout to hold: it enters the loop as it is.
    assert "_loop_entry(" not in source_of(_permuted_into_a_loop(shape, "constant"))


# A `for` whose step comes at run time: Tile IR runs {lb + i*step < ub}, none when lb >= ub
# whatever the step; Python's `range` under Triton's interpreter counted a negative step down
# (cuTile's `for v in range(11, 1, -2)`, found by cuTile's own tests).
RUNTIME_STEP_FOR = """
cuda_tile.module @m {
  entry @k(%out: tile<ptr<i32>>, %lb: tile<i32>, %ub: tile<i32>, %step: tile<i32>) {
    %tok = make_token : token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %n = for %i in (%lb to %ub, step %step) : tile<i32> iter_values(%k = %c0) -> (tile<i32>) {
      %p = offset %out, %k : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
      %t = store_ptr_tko weak %p, %i : tile<ptr<i32>>, tile<i32> -> token
      %k1 = addi %k, %c1 : tile<i32>
      continue %k1 : tile<i32>
    }
    return
  }
}
"""


@pytest.mark.parametrize(("lb", "ub", "step"), [(11, 1, -2), (1, 11, 2), (5, 5, -1), (3, 3, 0)])
def test_a_for_with_a_run_time_step(lb: int, ub: int, step: int) -> None:
    cpu, _ = run_both(RUNTIME_STEP_FOR, "k", 1, [np.full(8, -1, np.int32), lb, ub, step])
    want = list(range(lb, ub, step)) if lb < ub else []
    assert cpu[0].tolist() == want + [-1] * (8 - len(want))
