"""cuTile Python's calling convention (`compiler.runtime.cutile`): how arguments expand into
entry parameters, checked against the kernels cuTile itself exports (when `cuda-tile` and
`tileirdisasm` are installed) and against the signatures of the shared samples."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest

from compiler.ir.types import IntegerType, PointerType
from compiler.runtime import ArrayTable, LaunchError, StridedArray, find_kernel, find_tileirdisasm, launch_cutile
from compiler.runtime import load_module as load
from compiler.runtime.cutile import cutile_args
from tests.corpus import SAMPLES_DIR, SHARED_MISSING

# -- the expansion ------------------------------------------------------------------------------


def test_a_contiguous_array_is_pointer_extents_strides() -> None:
    a = np.zeros((3, 5, 7), np.float16)
    out = cutile_args(a)
    assert out[0] is a
    assert out[1:] == [3, 5, 7, 35, 7, 1]
    v = np.zeros(10, np.int8)
    assert cutile_args(v)[1:] == [10, 1]


def test_strided_views_keep_their_strides_in_elements() -> None:
    base = np.zeros((6, 8), np.float32)
    out = cutile_args(base[1:, ::2], base.T, np.broadcast_to(np.float32(1), (4, 4)))
    assert isinstance(out[0], StridedArray) and out[1:5] == [5, 4, 8, 2]
    assert isinstance(out[5], StridedArray) and out[5].array.base is not None and out[6:10] == [8, 6, 1, 8]
    assert isinstance(out[10], StridedArray) and out[11:15] == [4, 4, 0, 0]


def test_negative_strides_are_passed_as_a_contiguous_copy() -> None:
    a = np.arange(10, dtype=np.float32)[::-1]
    out = cutile_args(a)
    assert out[0] is a and out[1:] == [10, 1]  # launch copies it (and back); strides of the copy


def test_scalars_tuples_dataclasses_zero_d_and_lists() -> None:
    @dataclasses.dataclass(frozen=True)
    class Pair:
        lo: int
        hi: float

    a = np.zeros(4, np.float32)
    b = np.zeros((2, 2), np.float32)
    out = cutile_args(1, 2.5, True, (a, 3), Pair(4, 5.0), np.array(7.0, np.float32))
    assert out[:3] == [1, 2.5, True]
    assert out[3] is a and out[4:7] == [4, 1, 3]
    assert out[7:9] == [4, 5.0]
    assert len(out) == 10 and out[9].shape == ()  # a 0-d array is its pointer alone
    table, n = cutile_args([b, b.T])
    assert isinstance(table, ArrayTable) and n == 2
    assert table.arrays[0] is b and isinstance(table.arrays[1], StridedArray)
    with pytest.raises(LaunchError, match="a list argument must hold only arrays"):
        cutile_args([a, 1])


@pytest.mark.skipif(not SAMPLES_DIR.is_dir(), reason=SHARED_MISSING)
@pytest.mark.parametrize(
    ("name", "arrays"),
    [
        ("vadd", [np.zeros(8, np.float32)] * 3),
        ("softmax", [np.zeros((2, 8), np.float32)] * 2),
        ("matmul", [np.zeros((4, 4), np.float16)] * 3),
    ],
)
def test_expansion_matches_the_shared_samples_signatures(name: str, arrays: list[np.ndarray]) -> None:
    entry = find_kernel(load(SAMPLES_DIR / f"{name}.tileir"), None)
    params = [p.type.element for p in entry.regions[0].blocks[0].arguments]
    expanded = cutile_args(*arrays)
    assert len(expanded) == len(params)
    for value, t in zip(expanded, params, strict=True):
        if isinstance(value, np.ndarray):
            assert isinstance(t, PointerType)
        else:
            assert t == IntegerType(32)


# -- kernels exported by cuTile Python ------------------------------------------------------------


def _exporter():
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    if find_tileirdisasm() is None:
        pytest.skip("tileirdisasm is not installed (pip install nvidia-cuda-tileiras)")
    from cuda.tile.compilation import ArrayConstraint, CallingConvention, KernelSignature, export_kernel

    def array(ndim: int, dtype=None, index=None):
        return ArrayConstraint(
            dtype or ct.float32,
            ndim,
            index_dtype=index or ct.int32,
            stride_lower_bound_incl=0,
            alias_groups=(),
            may_alias_internally=False,
        )

    def export(kernel, params, path: Path, symbol: str, convention: str = "v1") -> Path:
        cc = getattr(CallingConvention, f"cutile_python_{convention}")()
        buf = io.BytesIO()
        sig = KernelSignature(params, cc, symbol=symbol)
        export_kernel(kernel, [sig], buf, output_format="tileir_bytecode", bytecode_version="13.3")
        path.write_bytes(buf.getvalue())
        return path

    return ct, array, export


@pytest.mark.parametrize("convention", ["v1", "v2"])
def test_cutile_exported_vector_kernel(tmp_path: Path, convention: str) -> None:
    ct, array, export = _exporter()
    from cuda.tile.compilation import ScalarConstraint

    @ct.kernel
    def axpy(x, y, out, alpha: float):
        bid = ct.bid(0)
        a = ct.load(x, index=(bid,), shape=(16,))
        b = ct.load(y, index=(bid,), shape=(16,))
        ct.store(out, index=(bid,), tile=a * alpha + b)

    f = export(
        axpy,
        [array(1), array(1), array(1), ScalarConstraint(ct.float32)],
        tmp_path / "axpy.tileirbc",
        "axpy",
        convention,
    )
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(50).astype(np.float32), rng.standard_normal(50).astype(np.float32)
    out = np.zeros(50, np.float32)
    launch_cutile(f, grid=(4,), args=[x, y, out, 0.5])
    np.testing.assert_allclose(out, x * np.float32(0.5) + y, rtol=1e-6, atol=1e-6)


def test_cutile_exported_2d_kernel_with_i64_index_and_strided_input(tmp_path: Path) -> None:
    ct, array, export = _exporter()
    from cuda.tile.compilation import ScalarConstraint

    @ct.kernel
    def scale2d(a, b, alpha: float, k: int):
        bx, by = ct.bid(0), ct.bid(1)
        t = ct.load(a, index=(bx, by), shape=(4, 8))
        ct.store(b, index=(bx, by), tile=t * alpha + k)

    params = [array(2, index=ct.int64), array(2), ScalarConstraint(ct.float32), ScalarConstraint(ct.int64)]
    f = export(scale2d, params, tmp_path / "scale2d.tileirbc", "scale2d")
    entry = find_kernel(load(f), None)
    types = [str(p.type) for p in entry.regions[0].blocks[0].arguments]
    assert types[:5] == ["tile<ptr<f32>>"] + ["tile<i64>"] * 4  # IndexedWithInt64: i64 extents/strides
    assert types[-1] == "tile<i64>"  # ScalarConstraint(int64)
    rng = np.random.default_rng(2)
    src = rng.standard_normal((12, 10)).astype(np.float32)
    a = src.T  # a strided view: 10 x 12, strides (1, 10)
    b = np.zeros((10, 12), np.float32)
    launch_cutile(f, grid=(3, 2), args=[a, b, 2.0, 2**33])
    np.testing.assert_allclose(b, a * np.float32(2.0) + np.float32(2.0**33), rtol=1e-6)


def test_cutile_exported_list_of_arrays(tmp_path: Path) -> None:
    ct, array, export = _exporter()
    from cuda.tile.compilation import ListConstraint, ScalarConstraint

    @ct.kernel
    def list_sum(xs, out, n: int):
        bid = ct.bid(0)
        acc = ct.zeros((16,), dtype=ct.float32)
        for i in range(n):
            acc = acc + ct.load(xs[i], index=(bid,), shape=(16,))
        ct.store(out, index=(bid,), tile=acc)

    params = [ListConstraint(array(1), alias_groups=(), elements_may_alias=False), array(1), ScalarConstraint(ct.int32)]
    f = export(list_sum, params, tmp_path / "list_sum.tileirbc", "list_sum")
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(32).astype(np.float32) for _ in range(3)]
    xs[1] = rng.standard_normal(64).astype(np.float32)[::2]  # a strided item
    out = np.zeros(32, np.float32)
    launch_cutile(f, grid=(2,), args=[xs, out, 3])
    np.testing.assert_allclose(out, xs[0] + xs[1] + xs[2], rtol=1e-6, atol=1e-6)


def test_cutile_constants_are_not_parameters_but_constant_shapes_are(tmp_path: Path) -> None:
    ct, array, export = _exporter()

    def body(x, y, s):
        bid = ct.bid(0)
        ct.store(y, index=(bid,), tile=ct.load(x, index=(bid,), shape=(16,)) * s)

    body.__annotations__ = {"s": ct.Constant[int]}  # an object, not a string: `ct` is local here
    scale = ct.kernel(body)

    from cuda.tile.compilation import ArrayConstraint

    fixed = ArrayConstraint(
        ct.float32,
        1,
        index_dtype=ct.int32,
        stride_lower_bound_incl=0,
        alias_groups=(),
        may_alias_internally=False,
        shape_constant=(64,),
        stride_constant=(1,),
    )
    f = export(scale, [fixed, array(1), 3], tmp_path / "scale.tileirbc", "scale", "v2")
    entry = find_kernel(load(f), None)
    # x's extent and stride are compile-time constants, yet still parameters; s is folded in
    assert [str(p.type) for p in entry.regions[0].blocks[0].arguments] == [
        "tile<ptr<f32>>",
        "tile<i32>",
        "tile<i32>",
        "tile<ptr<f32>>",
        "tile<i32>",
        "tile<i32>",
    ]
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    launch_cutile(f, grid=(4,), args=[x, y])
    np.testing.assert_array_equal(y, x * 3)
