"""What goes wrong while a kernel runs under triton-interpret is reported as the CPU backend
reports it (compiler/runtime/interpret.py): a failed `assert` and a broken `assume` with the
op's Tile IR line and the tile block, a store to a read-only array with the argument (and
the array is never written)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.interp import InterpError
from compiler.runtime import StridedArray, launch, launch_cutile, load_module
from tests.corpus import REPO

from .harness import run_both

VECTOR_ADD = REPO / "examples" / "vector_add.tileir"

# Tile block bx asserts iota + bx < limit (false from element limit - bx on), then stores
# iota + bx + 2^31 - 1 (wrapping: the assert must not turn on Triton's overflow checks).
ASSERT = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<i32>>, %limit: tile<i32>) {
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %r = iota : tile<8xi32>
    %b = reshape %bx : tile<i32> -> tile<1xi32>
    %bb = broadcast %b : tile<1xi32> -> tile<8xi32>
    %s = addi %r, %bb : tile<8xi32>
    %l1 = reshape %limit : tile<i32> -> tile<1xi32>
    %l = broadcast %l1 : tile<1xi32> -> tile<8xi32>
    %c = cmpi less_than %s, %l, signed : tile<8xi32> -> tile<8xi1>
    assert %c, "s \\"small\\"" : tile<8xi1>
    %big = constant <i32: 2147483647> : tile<8xi32>
    %w = addi %s, %big : tile<8xi32>
    %tv = make_tensor_view %p, shape = [32], strides = [1] : tensor_view<32xi32, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(8), tensor_view<32xi32, strides=[1]>>
    %t = store_view_tko weak %w, %pv[%bx] : tile<8xi32>, partition_view<tile=(8), tensor_view<32xi32, strides=[1]>>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


def test_assert_that_holds_runs_and_integers_still_wrap() -> None:
    run_both(ASSERT, "k", 4, [np.zeros(32, np.int32), np.int32(100)])


def test_failed_assert_reports_like_the_cpu_backend() -> None:
    module = load_module(ASSERT)
    with pytest.raises(InterpError) as cpu:
        launch(module, "k", 4, [np.zeros(32, np.int32), np.int32(9)], backend="cpu")
    with pytest.raises(InterpError) as tri:  # the same type as the cpu backend's
        launch(module, "k", 4, [np.zeros(32, np.int32), np.int32(9)], backend="triton-interpret")
    expected = '<input>:11:5: error: assert: assertion failed: "s \\"small\\"" at element (7,) (tile block (2, 0, 0))'
    assert str(cpu.value).startswith(expected)
    assert str(tri.value) == expected


def test_broken_assume_names_its_line() -> None:
    # A negative length breaks vector_add's `assume bounded<0, ?>` (undefined behaviour,
    # which Triton's interpreter checks): not a raw InterpreterError.
    a = np.ones(4000, np.float32)
    with pytest.raises(InterpError, match=r"vector_add.tileir:8:5: error: assume: assumed bounded<0, \?> does not hold "
                       r"\(tile block \(0, 0, 0\)\)"):  # fmt: skip
        launch(VECTOR_ADD, None, 4, [a, -1, 1, a, 4000, 1, a.copy(), 4000, 1], backend="triton-interpret")


def _vector_add_arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.arange(8192, dtype=np.float32)
    b = np.ones(8192, np.float32)
    out = np.zeros(8192, np.float32)
    out.flags.writeable = False
    return a, b, out


@pytest.mark.parametrize("strided", [True, False])
def test_store_to_a_read_only_array_is_refused(strided: bool) -> None:
    a, b, out = _vector_add_arrays()
    c = out[::2] if strided else out[:4096]
    for backend in ("cpu", "triton-interpret"):
        with pytest.raises(InterpError, match=r"store to the constant argument 6"):
            launch_cutile(VECTOR_ADD, grid=4, args=[a[::2], b[::2], c], backend=backend)
        assert not out.any(), backend
    with pytest.raises(InterpError, match=r"\(a read-only array\)"):
        launch_cutile(VECTOR_ADD, grid=4, args=[a[::2], b[::2], c], backend="triton-interpret")


def test_read_only_inputs_run() -> None:
    a, b, _ = _vector_add_arrays()
    a.flags.writeable = False
    b.flags.writeable = False
    for x, y, s in ((a[:4000], b[:4000], 1), (StridedArray(a[:8000:2]), StridedArray(b[:8000:2]), 2)):
        out = {}
        for backend in ("cpu", "triton-interpret"):
            out[backend] = np.zeros(4000, np.float32)
            launch(VECTOR_ADD, None, 4, [x, 4000, s, y, 4000, s, out[backend], 4000, 1], backend=backend)
        assert np.array_equal(out["cpu"], out["triton-interpret"])


SQRT_OF_ALL = """cuda_tile.module @m {
  entry @k(%x: tile<ptr<f32>>, %o: tile<ptr<f32>>) {
    %tok = make_token : token
    %c0 = constant <i32: 0> : tile<i32>
    %xt = make_tensor_view %x, shape = [8], strides = [1] : tensor_view<8xf32, strides=[1]>
    %xp = make_partition_view %xt : partition_view<tile=(8), tensor_view<8xf32, strides=[1]>>
    %v, %t = load_view_tko weak %xp[%c0] token = %tok : partition_view<tile=(8), tensor_view<8xf32, strides=[1]>>, tile<i32> -> tile<8xf32>, token
    %s = sqrt %v : tile<8xf32>
    %big = constant <f32: 3.0e38> : tile<8xf32>
    %m = mulf %s, %big : tile<8xf32>
    %i = ftoi %m signed : tile<8xf32> -> tile<8xi32>
    %f = itof %i signed : tile<8xi32> -> tile<8xf32>
    %r = addf %m, %f : tile<8xf32>
    %ot = make_tensor_view %o, shape = [8], strides = [1] : tensor_view<8xf32, strides=[1]>
    %op = make_partition_view %ot : partition_view<tile=(8), tensor_view<8xf32, strides=[1]>>
    %d = store_view_tko weak %r, %op[%c0] token = %tok : tile<8xf32>, partition_view<tile=(8), tensor_view<8xf32, strides=[1]>>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


def test_no_numpy_warnings_from_nans_and_overflows() -> None:
    """sqrt(-1), NaN to integer, overflow to inf: results the ops define. Triton's interpreter
    computes them with NumPy, whose RuntimeWarnings reached the user's terminal on the
    triton-interpret backend (the cpu backend prints none)."""
    import warnings

    x = np.array([-1.0, np.nan, -np.inf, np.inf, 4.0, 0.0, -0.0, 1e30], np.float32)
    cpu, tri = run_both(SQRT_OF_ALL, "k", 1, [x, np.zeros(8, np.float32)])
    assert np.isnan(cpu[1][:3]).all() and cpu[1][4] == np.inf  # 2 * 3e38 overflows
    for backend in ("cpu", "triton-interpret"):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            launch(SQRT_OF_ALL, "k", 1, [x, np.zeros(8, np.float32)], backend=backend)
        assert [str(w.message) for w in seen] == [], backend
