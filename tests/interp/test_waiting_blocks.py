"""Tile blocks that wait for other tile blocks: a spin lock and a chain of flags (each block
waits for the previous one, as a decoupled look-back scan does). The interpreter runs the
blocks of a group in lockstep, a loop until every block of the group has left it, so such
kernels run one block at a time (compiler/interp/machine.py, `_may_wait_for_other_blocks`);
Triton's interpreter runs its programs one after another too."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.runtime import launch

from .util import kernel

# The lock as cuTile Python 1.7 exports `while ct.atomic_cas(L, (), 0, 1, ACQUIRE) == 1: pass`,
# then a count under the lock and its release.
LOCKED_COUNT = kernel(
    """
    %tok = make_token : token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %t = loop iter_values(%a = %tok) : token -> token {
      %old, %ta = atomic_cas_tko acquire device %lock, %c0, %c1 token=%a : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
      %held = cmpi equal %old, %c1, signed : tile<i32> -> tile<i1>
      if %held {
      } else {
        break %ta : token
      }
      continue %ta : token
    }
    %n, %tn = load_ptr_tko weak %count token=%t : tile<ptr<i32>> -> tile<i32>, token
    %n1 = addi %n, %c1 : tile<i32>
    %ts = store_ptr_tko weak %count, %n1 token=%tn : tile<ptr<i32>>, tile<i32> -> token
    %r, %tr = atomic_rmw_tko release device %lock, xchg, %c0 token=%ts : tile<ptr<i32>>, tile<i32> -> tile<i32>, token
    """,
    "%count: tile<ptr<i32>>, %lock: tile<ptr<i32>>",
)

# Block i waits until flags[i - 1] is set (an acquire load), then writes out[i] = out[i - 1] + i
# and sets flags[i] (a release store): the prefix sums of the block ids, in block order.
CHAIN = kernel(
    """
    %tok = make_token : token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %first = cmpi equal %bx, %c0, signed : tile<i32> -> tile<i1>
    %prev = subi %bx, %c1 : tile<i32>
    %pf = offset %flags, %prev : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %po = offset %out, %prev : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %before = if %first -> (tile<i32>) {
      yield %c0 : tile<i32>
    } else {
      %t = loop iter_values(%a = %tok) : token -> token {
        %f, %tf = load_ptr_tko acquire device %pf token=%a : tile<ptr<i32>> -> tile<i32>, token
        %set = cmpi equal %f, %c1, signed : tile<i32> -> tile<i1>
        if %set {
          break %tf : token
        }
        continue %tf : token
      }
      %v, %tv = load_ptr_tko weak %po token=%t : tile<ptr<i32>> -> tile<i32>, token
      yield %v : tile<i32>
    }
    %sum = addi %before, %bx : tile<i32>
    %mo = offset %out, %bx : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %mf = offset %flags, %bx : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
    %ts = store_ptr_tko weak %mo, %sum token=%tok : tile<ptr<i32>>, tile<i32> -> token
    %tf = store_ptr_tko release device %mf, %c1 token=%ts : tile<ptr<i32>>, tile<i32> -> token
    """,
    "%out: tile<ptr<i32>>, %flags: tile<ptr<i32>>",
)


def _backend(name: str) -> str:
    if name == "triton-interpret":
        pytest.importorskip("triton")
        pytest.importorskip("torch")
    return name


@pytest.mark.parametrize("backend", ["cpu", "triton-interpret"])
def test_a_spin_lock_across_blocks(backend: str) -> None:
    count, lock = np.zeros(1, np.int32), np.zeros(1, np.int32)
    launch(LOCKED_COUNT, grid=(300,), args=[count, lock], backend=_backend(backend))
    assert (int(count[0]), int(lock[0])) == (300, 0)


@pytest.mark.parametrize("backend", ["cpu", "triton-interpret"])
def test_each_block_waits_for_the_one_before(backend: str) -> None:
    n = 200
    out, flags = np.full(n, -1, np.int32), np.zeros(n, np.int32)
    launch(CHAIN, grid=(n,), args=[out, flags], backend=_backend(backend))
    np.testing.assert_array_equal(out, np.cumsum(np.arange(n)))
    assert flags.all()
