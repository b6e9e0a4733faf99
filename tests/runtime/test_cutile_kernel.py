"""`launch_cutile` given a cuTile Python `@ct.kernel` function: exported by cuTile for the
arguments (no GPU needed) and run on the CPU interpreter and under Triton's interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.runtime import LaunchError, launch_cutile


def _vadd():
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")

    def vadd(a, b, c, tile):
        bid = ct.bid(0)
        x = ct.load(a, index=(bid,), shape=(tile,))
        y = ct.load(b, index=(bid,), shape=(tile,))
        ct.store(c, index=(bid,), tile=x + y)

    vadd.__annotations__ = {"tile": ct.Constant[int]}  # an object, not a string: `ct` is local here
    return ct.kernel(vadd)


def _backend_available(backend: str) -> None:
    if backend == "triton-interpret":
        pytest.importorskip("triton", reason="triton is not installed")
        pytest.importorskip("torch", reason="Triton's interpreter needs torch")


@pytest.mark.parametrize("backend", ["cpu", "triton-interpret"])
def test_a_cutile_kernel_function_runs_and_matches_numpy(backend: str) -> None:
    vadd = _vadd()
    _backend_available(backend)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(100).astype(np.float32), rng.standard_normal(100).astype(np.float32)
    c = np.zeros(100, np.float32)
    try:
        result = launch_cutile(vadd, grid=(4,), args=[a, b, c, 32], backend=backend)
    except LaunchError as e:
        if "could not export" in e.message:
            pytest.skip(f"cuTile cannot export here: {e.message}")
        raise
    assert result.backend == backend
    np.testing.assert_array_equal(c, a + b)


def test_auto_runs_a_cutile_kernel_on_the_cpu_without_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    vadd = _vadd()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    a = np.arange(64, dtype=np.float32)
    c = np.zeros(64, np.float32)
    try:
        result = launch_cutile(vadd, grid=(2,), args=[a, a, c, 32])
    except LaunchError as e:
        if "could not export" in e.message:
            pytest.skip(f"cuTile cannot export here: {e.message}")
        raise
    assert (result.backend, result.note) == ("cpu", "auto: no GPU, ran on the CPU interpreter")
    np.testing.assert_array_equal(c, 2 * a)


def test_a_wrong_argument_count_or_type_is_one_line() -> None:
    vadd = _vadd()
    a = np.zeros(8, np.float32)
    with pytest.raises(LaunchError, match="takes 4 arguments, got 2") as e:
        launch_cutile(vadd, grid=1, args=[a, a], backend="cpu")
    assert "\n" not in e.value.message
    with pytest.raises(LaunchError, match="argument 1 of cuTile kernel vadd: cannot export") as e:
        launch_cutile(vadd, grid=1, args=[a, "x", a, 8], backend="cpu")


def _views(module) -> list[str]:
    """The tensor_view types of a module's text, in order."""
    import re

    from compiler.text.printer import print_module

    return re.findall(r"tensor_view<[^>]*>", print_module(module))


def test_the_export_is_specialised_as_cutiles_launch_specialises() -> None:
    """An array's unit strides and extents of 1 are compile-time constants of the export (as
    cuTile's own launch makes them: what lets a contiguous load vectorise), the notebook's
    reusable export (`specialise=False`) keeps them dynamic, and a 0-d array is an array."""
    from compiler.runtime import load_module
    from compiler.runtime.cutile import export_cutile

    vadd = _vadd()
    a = np.zeros(64, np.float32)
    assert set(_views(load_module(export_cutile(vadd, [a, a, a, 16])[0]))) == {"tensor_view<?xf32, strides=[1]>"}
    general = load_module(export_cutile(vadd, [a, a, a, 16], specialise=False)[0])
    assert set(_views(general)) == {"tensor_view<?xf32, strides=[?]>"}
    strided = a[::2]  # a stride of 2 stays dynamic
    mixed = load_module(export_cutile(vadd, [strided, a[:32], a[:32], 16])[0])
    assert "tensor_view<?xf32, strides=[?]>" in _views(mixed)


def _assumed(module) -> dict[int, int]:
    """Entry parameter position -> the N of the `assume div_by<N>` on it."""
    import re

    from compiler.text.printer import print_module

    return {int(k): int(n) for n, k in re.findall(r"assume div_by<(\d+)>, %arg(\d+)\b", print_module(module))}


class _FakeGpuArray:
    """A GPU array as the CUDA Array Interface describes one: at `ptr`, never read (an export
    needs no GPU)."""

    def __init__(self, ptr: int, shape: tuple[int, ...]) -> None:
        self.ptr, self.shape = ptr, shape

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": "<f4", "data": (self.ptr, False), "version": 3}


def test_the_export_knows_what_cutiles_launch_knows_of_alignment() -> None:
    """As cuTile's launch, the export says what the arrays' base addresses (16 bytes: a NumPy
    array is copied to an allocation of its own), strides (in 16 bytes' elements) and extents
    (16) are multiples of, so that loads and stores vectorise on both GPU backends; a GPU
    array used in place, by its address; the notebook's reusable export says nothing."""
    from compiler.runtime import load_module
    from compiler.runtime.cutile import export_cutile

    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")

    def rows(x, y, n):
        ct.store(y, index=(0, 0), tile=ct.load(x, index=(0, 0), shape=(4, n)))

    rows.__annotations__ = {"n": ct.Constant[int]}
    kernel = ct.kernel(rows)
    # parameters: x (0: pointer, 1-2: extents, 3-4: strides), y (5-9); unit strides are constants
    x, y = np.zeros((32, 64), np.float32), np.zeros((8, 16), np.float32)
    want = {0: 16, 1: 16, 2: 16, 3: 4, 5: 16, 7: 16, 8: 4}
    assert _assumed(load_module(export_cutile(kernel, [x, y, 16])[0])) == want
    odd = np.zeros((6, 10), np.float32)  # a row stride of 10: 40 bytes; extents 6 and 10
    assert _assumed(load_module(export_cutile(kernel, [odd, odd, 4])[0])) == {0: 16, 5: 16}
    assert _assumed(load_module(export_cutile(kernel, [x, y, 16], specialise=False)[0])) == {}
    in_place = _FakeGpuArray(0x7F0000001004, (32, 64))  # 4 bytes past a 16-byte boundary
    assert _assumed(load_module(export_cutile(kernel, [in_place, y, 16])[0]))[0] == 4


def test_array_annotations_of_static_dimensions_are_honoured() -> None:
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    from typing import Annotated

    def rows(x, y):
        ct.static_assert(x.shape[0] == 4)
        ct.static_assert(x.strides[0] == 10)
        ct.store(y, index=(0, 0), tile=ct.load(x, index=(0, 0), shape=(4, 8)) + 1)

    static = ct.ArrayAnnotation(static_shape_dims=(0,), static_stride_dims=(0,))
    rows.__annotations__ = {"x": Annotated[ct.Array, static]}
    kernel = ct.kernel(rows)
    x = np.arange(40, dtype=np.float32).reshape(4, 10)[:, :8]
    y = np.zeros((4, 8), np.float32)
    launch_cutile(kernel, grid=1, args=[x, y], backend="cpu")
    np.testing.assert_array_equal(y, x + 1)
    with pytest.raises(LaunchError, match="argument 0 of cuTile kernel rows: static_shape_dims names axis 2, but"):

        def bad(x, y):
            ct.store(y, index=(0, 0), tile=ct.load(x, index=(0, 0), shape=(4, 8)))

        bad.__annotations__ = {"x": Annotated[ct.Array, ct.ArrayAnnotation(static_shape_dims=(2,))]}
        bad.__name__ = "rows"
        launch_cutile(ct.kernel(bad), grid=1, args=[x, y], backend="cpu")


def test_tuple_items_annotated_constant_are_compiled_in() -> None:
    """`tuple[tuple[ct.Constant[int], int], int]`: the constant item is folded into the kernel
    (a tile shape here) and left out of the launch's parameters; the others are passed."""
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")

    def shifted(a, out, cfg):
        t = ct.load(a, (0,), (cfg[0][0],))
        ct.store(out, (0,), t + cfg[0][1] + cfg[1])

    shifted.__annotations__ = {"cfg": tuple[tuple[ct.Constant[int], int], int]}
    kernel = ct.kernel(shifted)
    a, out = np.arange(8, dtype=np.int32), np.zeros(8, np.int32)
    launch_cutile(kernel, grid=1, args=[a, out, ((8, 3), 5)], backend="cpu")
    np.testing.assert_array_equal(out, a + 8)
    with pytest.raises(LaunchError, match=r"argument 2 of cuTile kernel shifted\[0\]: a tuple of 3 items, but its"):
        launch_cutile(kernel, grid=1, args=[a, out, ((8, 3, 1), 5)], backend="cpu")


def test_strided_torch_cpu_tensors_keep_their_strides() -> None:
    """A column slice of a CPU torch tensor reaches the kernel with its real strides, in place
    (as a GPU tensor does), not as a contiguous copy: the kernel's static stride is 10."""
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    torch = pytest.importorskip("torch")
    from typing import Annotated

    def doubled(x, y):
        ct.static_assert(x.strides[0] == 10)
        ct.store(y, index=(0, 0), tile=ct.load(x, index=(0, 0), shape=(4, 8)) * 2)

    doubled.__annotations__ = {"x": Annotated[ct.Array, ct.ArrayAnnotation(static_stride_dims=(0,))]}
    buf = torch.arange(40, dtype=torch.float32).reshape(4, 10)
    out = torch.full((4, 10), -1.0)
    launch_cutile(ct.kernel(doubled), grid=1, args=[buf[:, :8], out[:, 1:9]], backend="cpu")
    assert torch.equal(out[:, 1:9], buf[:, :8] * 2)
    assert bool((out[:, 0] == -1).all()) and bool((out[:, 9] == -1).all())  # the rest untouched


def test_a_stride_too_wide_for_i32_is_one_line() -> None:
    vadd = _vadd()

    class Wide:  # a GPU array's description (its memory is never touched: refused first)
        __cuda_array_interface__ = {"shape": (2,), "strides": (4 << 32,), "typestr": "<f4", "data": (0, False)}

    wide = Wide()
    with pytest.raises(LaunchError) as e:
        launch_cutile(vadd, grid=1, args=[wide, wide, wide, 4], backend="cpu")
    assert e.value.message == (
        "argument 0 of cuTile kernel vadd: its stride 4294967296 (axis 0) does not fit its i32 index type; "
        "annotate the parameter ct.IndexedWithInt64"
    )


def test_gpu_backends_are_refused_in_one_line_before_exporting(monkeypatch: pytest.MonkeyPatch) -> None:
    vadd = _vadd()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    a = np.zeros(8, np.float32)
    for backend in ("triton", "tileiras"):
        with pytest.raises(LaunchError) as e:
            launch_cutile(vadd, grid=1, args=[a, a, a, 8], backend=backend)
        assert e.value.kind == "backend" and "none was found" in e.value.message and "\n" not in e.value.message


def _pair_and_list_kernels():
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")

    def tupadd(pair, out, tile):
        bid = ct.bid(0)
        x = ct.load(pair[0], index=(bid,), shape=(tile,))
        y = ct.load(pair[1], index=(bid,), shape=(tile,))
        ct.store(out, index=(bid,), tile=x + y)

    def listsum(arrays, out, tile):
        bid = ct.bid(0)
        acc = ct.zeros((tile,), dtype=ct.float32)
        for k in range(len(arrays)):
            acc = acc + ct.load(arrays[k], index=(bid,), shape=(tile,))
        ct.store(out, index=(bid,), tile=acc)

    tupadd.__annotations__ = {"tile": ct.Constant[int]}
    listsum.__annotations__ = {"tile": ct.Constant[int]}
    return ct.kernel(tupadd), ct.kernel(listsum)


def test_tuples_lists_and_torch_tensors_reach_the_kernel() -> None:
    """A tuple argument needs cuTile's v2 calling convention (v1 refused it); the arrays of a
    list must share a dtype (an int32 array read as f32 bits, silently, before); a torch CPU
    tensor is an array (it was "cannot export ... type Tensor")."""
    tupadd, listsum = _pair_and_list_kernels()
    rng = np.random.default_rng(1)
    a, b = rng.random(64, dtype=np.float32), rng.random(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    launch_cutile(tupadd, grid=4, args=[(a, b), out, 16], backend="cpu")
    np.testing.assert_array_equal(out, a + b)
    out[:] = 0
    launch_cutile(listsum, grid=4, args=[[a, b, a], out, 16], backend="cpu")
    np.testing.assert_allclose(out, a + b + a, rtol=1e-6)
    with pytest.raises(
        LaunchError, match=r"the arrays of a list must share one dtype and rank; got float32\[\?\], int32"
    ):
        launch_cutile(listsum, grid=4, args=[[a, np.arange(64, dtype=np.int32)], out, 16], backend="cpu")
    torch = pytest.importorskip("torch")
    ta, tb, tout = torch.from_numpy(a), torch.from_numpy(b), torch.zeros(64)
    launch_cutile(tupadd, grid=4, args=[(ta, tb), tout, 16], backend="cpu")
    np.testing.assert_array_equal(tout.numpy(), a + b)


@pytest.mark.parametrize("backend", ["cpu", "triton-interpret"])
def test_a_list_of_arrays_read_and_written_in_place(backend: str) -> None:
    """A list of arrays (cuTile's table of descriptors) on both interpreters, Triton's reading
    the host addresses in the table: a strided view is used in place, with its strides; a
    non-contiguous array that is no view of one buffer goes as a copy, written back; stores
    through the list land in the caller's arrays."""
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    _backend_available(backend)

    def bump(arrays, tile):
        bid = ct.bid(0)
        for k in range(len(arrays)):
            ct.store(arrays[k], index=(bid,), tile=ct.load(arrays[k], index=(bid,), shape=(tile,)) + (k + 1))

    bump.__annotations__ = {"tile": ct.Constant[int]}
    base = np.zeros(128, np.float32)
    items = [np.arange(64, dtype=np.float32), base[::2], np.full(64, 10, np.float32)]
    before = [a.copy() for a in items]
    launch_cutile(ct.kernel(bump), grid=4, args=[items, 16], backend=backend)
    for k, (got, was) in enumerate(zip(items, before, strict=True)):
        np.testing.assert_array_equal(got, was + k + 1)
    assert not base[1::2].any()  # between the strided view's elements: untouched


# On a GPU (marker `gpu`; the tileiras cubins of these kernels come from .ci/gpu-prepare where
# tileiras is not installed): a cuTile kernel function with the arrays cuTile users hold,
# torch GPU tensors (in place) and NumPy arrays (copied over and back), and with a tuple and a
# list of arrays (cuTile's v2 convention), on both GPU backends.
GPU_CASES = [(4, 32), (8, 16)]  # (grid, tile) of the vadd kernel; .ci/gpu-prepare builds these


def gpu_prepare_modules():
    """(label, module) of each module the GPU tests below export (.ci/gpu-prepare builds
    them with tileiras)."""
    from compiler.runtime import load_module
    from compiler.runtime.cutile import export_cutile

    vadd = _vadd()
    tupadd, listsum = _pair_and_list_kernels()
    a = np.zeros(128, np.float32)
    calls = [(vadd, [a, a, a, tile]) for _, tile in GPU_CASES]
    calls += [(tupadd, [(a, a), a, 16]), (listsum, [[a, a, a], a, 16])]
    return [
        (f"cuTile kernel {k._pyfunc.__name__} for {len(args)} arguments", load_module(export_cutile(k, args)[0]))
        for k, args in calls
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ["triton", "tileiras"])
@pytest.mark.parametrize(("grid", "tile"), GPU_CASES)
def test_a_cutile_kernel_function_runs_on_the_gpu(backend: str, grid: int, tile: int) -> None:
    torch = pytest.importorskip("torch")
    vadd = _vadd()
    n = grid * tile
    a, b, c = torch.rand(n, device="cuda"), torch.rand(n, device="cuda"), torch.zeros(n, device="cuda")
    result = launch_cutile(vadd, grid=(grid,), args=[a, b, c, tile], backend=backend)
    assert result.backend == backend
    assert torch.equal(c, a + b)
    ha, hb, hc = a.cpu().numpy(), b.cpu().numpy(), np.zeros(n, np.float32)
    launch_cutile(vadd, grid=(grid,), args=[ha, hb, hc, tile], backend=backend)
    np.testing.assert_array_equal(hc, ha + hb)


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ["triton", "tileiras"])
def test_tuple_and_list_arguments_of_a_cutile_kernel_on_the_gpu(backend: str) -> None:
    torch = pytest.importorskip("torch")
    tupadd, listsum = _pair_and_list_kernels()
    a, b, out = torch.rand(64, device="cuda"), torch.rand(64, device="cuda"), torch.zeros(64, device="cuda")
    launch_cutile(tupadd, grid=4, args=[(a, b), out, 16], backend=backend)
    assert torch.equal(out, a + b)
    launch_cutile(listsum, grid=4, args=[[a, b, a], out, 16], backend=backend)
    torch.testing.assert_close(out, a + b + a)


def test_cutiles_own_refusal_names_the_kernels_line() -> None:
    """cuTile's errors (`TileError.loc`) lead the one-line message with the kernel's
    file:line:col, as a compiler's do (columns from 0, as cuTile counts them)."""
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")

    def uses_hasattr(x, y, tile):
        t = ct.load(x, index=(ct.bid(0),), shape=(tile,))
        ct.store(y, index=(ct.bid(0),), tile=t if hasattr(t, "shape") else t)

    uses_hasattr.__annotations__ = {"tile": ct.Constant[int]}
    a = np.zeros(8, np.float32)
    with pytest.raises(LaunchError) as e:
        launch_cutile(ct.kernel(uses_hasattr), grid=1, args=[a, a, 8], backend="cpu")
    line = uses_hasattr.__code__.co_firstlineno + 2
    assert e.value.message.startswith(f"{__file__}:{line}:"), e.value.message
    assert "cuTile could not export kernel uses_hasattr: hasattr() is not supported" in e.value.message
    assert "\n" not in e.value.message
