"""`compiler.runtime.launch`: loading modules, finding kernels, typing and placing arguments,
the errors a launch gives before it runs, and arrays updated in place."""

from __future__ import annotations

import io
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from compiler.interp import InterpError, RunOptions
from compiler.runtime import (
    BYTECODE_MAGIC,
    ArrayTable,
    LaunchError,
    LaunchResult,
    StridedArray,
    benchmark,
    find_kernel,
    launch,
    load_module,
    resolve_backend,
    signature,
)

# Prints its scalar parameters and the address of its pointer: needs no memory ops.
PRINTS = """cuda_tile.module @m {
  entry @show(%n: tile<i32>, %x: tile<f16>, %b: tile<i1>, %w: tile<i8>, %d: tile<f64>, %p: tile<ptr<f32>>) {
    %a = ptr_to_int %p : tile<ptr<f32>> -> tile<i64>
    %t = print_tko "n=%d x=%f b=%d w=%d d=%f p=%lld\\n", %n, %x, %b, %w, %d, %a : tile<i32>, tile<f16>, tile<i1>, tile<i8>, tile<f64>, tile<i64> -> token
    return
  }
}
"""  # noqa: E501

# out[i] = x[i] + k for the 16 elements of tile block i's slice (partial tiles padded/dropped).
ADD_K = """cuda_tile.module @m {
  entry @add_k(%x: tile<ptr<i32>>, %out: tile<ptr<i32>>, %n: tile<i32>, %k: tile<i32>) {
    %one = constant <i32: 1> : tile<i32>
    %vx = make_tensor_view %x, shape = [%n], strides = [%one] : tile<i32> -> tensor_view<?xi32, strides=[?]>
    %vo = make_tensor_view %out, shape = [%n], strides = [%one] : tile<i32> -> tensor_view<?xi32, strides=[?]>
    %px = make_partition_view %vx : partition_view<tile=(16), padding_value = zero, tensor_view<?xi32, strides=[?]>>
    %po = make_partition_view %vo : partition_view<tile=(16), tensor_view<?xi32, strides=[?]>>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %t, %tok = load_view_tko weak %px[%bx] : partition_view<tile=(16), padding_value = zero, tensor_view<?xi32, strides=[?]>>, tile<i32> -> tile<16xi32>, token
    %k1 = reshape %k : tile<i32> -> tile<1xi32>
    %kk = broadcast %k1 : tile<1xi32> -> tile<16xi32>
    %s = addi %t, %kk : tile<16xi32>
    %done = store_view_tko weak %s, %po[%bx] : tile<16xi32>, partition_view<tile=(16), tensor_view<?xi32, strides=[?]>>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501

TWO = """cuda_tile.module @m {
  entry @first() {
    return
  }
  entry @second() {
    return
  }
}
"""


def _show(*args, grid=(1,)) -> str:
    out = io.StringIO()
    launch(PRINTS, grid=grid, args=list(args), options=RunOptions(stdout=out))
    return out.getvalue()


def _error(text: str, args, **kw) -> LaunchError:
    with pytest.raises(LaunchError) as info:
        launch(text, args=args, **kw)
    return info.value


F32 = np.zeros(4, np.float32)


# -- scalars ----------------------------------------------------------------------------------


def test_scalars_are_typed_by_their_parameters() -> None:
    out = _show(-5, 1.5, True, -128, 0.25, F32)
    assert out.startswith("[block (0, 0, 0)] n=-5 x=1.500000 b=1 w=-128 d=0.250000 p=")


def test_numpy_scalars_and_zero_d_arrays() -> None:
    out = _show(np.int64(7), np.float32(2.0), np.bool_(False), np.uint8(255), np.array(3.5), F32)
    # 255 fits i8 read as unsigned; the kernel's signless i8 holds the bits of -1
    assert "n=7 x=2.000000 b=0 w=-1 d=3.500000" in out


def test_integer_range_is_the_signless_width() -> None:
    assert "n=-2147483648" in _show(-(2**31), 0, 0, 0, 0, F32)
    assert "n=-1" in _show(2**32 - 1, 0, 0, 0, 0, F32)
    e = _error(PRINTS, [2**32, 0, 0, 0, 0, F32])
    assert str(e) == "argument 0 (%n: tile<i32>): 4294967296 does not fit in i32 (accepted: -2147483648 to 4294967295)"
    assert e.kind == "argument"
    e = _error(PRINTS, [0, 0, 0, -129, 0, F32])
    assert str(e) == "argument 3 (%w: tile<i8>): -129 does not fit in i8 (accepted: -128 to 255)"


def test_bad_scalars_are_explained() -> None:
    assert str(_error(PRINTS, [1.5, 0, 0, 0, 0, F32])) == (
        "argument 0 (%n: tile<i32>): expected an integer, got float 1.5"
    )
    assert str(_error(PRINTS, [0, 0, 2, 0, 0, F32])) == (
        "argument 2 (%b: tile<i1>): 2 is not a value of i1 (0, 1, False or True)"
    )
    assert str(_error(PRINTS, [0, "x", 0, 0, 0, F32])) == "argument 1 (%x: tile<f16>): expected a number, got str 'x'"
    assert str(_error(PRINTS, [0, 1e6, 0, 0, 0, F32])) == (
        "argument 1 (%x: tile<f16>): 1000000.0 is out of the range of f16 (largest finite value 65504)"
    )
    assert str(_error(PRINTS, [np.arange(3), 0, 0, 0, 0, F32])) == (
        "argument 0 (%n: tile<i32>): got an array of shape (3,) for a scalar parameter"
    )


def test_float_specials_pass_and_round() -> None:
    out = _show(0, float("inf"), 0, 0, float("nan"), F32)
    assert "x=inf" in out and "d=nan" in out
    assert "x=0.099976" in _show(0, 0.1, 0, 0, 0, F32)  # rounded to the nearest f16


# -- pointers ---------------------------------------------------------------------------------


def test_arrays_are_placed_aligned_and_an_int_is_an_address() -> None:
    result = launch(PRINTS, args=[0, 0, 0, 0, 0, F32], options=RunOptions(stdout=io.StringIO()))
    address = result.addresses[5]
    assert address is not None and address % 256 == 0
    assert result.addresses[:5] == [None] * 5
    assert "p=4096\n" in _show(0, 0, 0, 0, 0, 4096)


def test_array_dtype_mismatch_is_explained() -> None:
    e = _error(PRINTS, [0, 0, 0, 0, 0, np.zeros(4)])
    assert str(e) == (
        "argument 5 (%p: tile<ptr<f32>>): the kernel reads f32 elements, which live in np.float32 arrays; "
        "got an array of float64 (convert it with .astype(np.float32))"
    )
    bf16 = PRINTS.replace("ptr<f32>", "ptr<bf16>")
    e = _error(bf16, [0, 0, 0, 0, 0, F32])
    assert "which live in ml_dtypes.bfloat16 arrays; got an array of float32" in str(e)
    launch(bf16, args=[0, 0, 0, 0, 0, np.zeros(2, ml_dtypes.bfloat16)], options=RunOptions(stdout=io.StringIO()))
    e = _error(PRINTS, [0, 0, 0, 0, 0, "x"])
    assert str(e) == "argument 5 (%p: tile<ptr<f32>>): expected a NumPy array of np.float32 (or an address), got str"


def test_signed_and_unsigned_arrays_both_fit_a_signless_pointer() -> None:
    i32 = PRINTS.replace("ptr<f32>", "ptr<i32>")
    for dtype in (np.int32, np.uint32):
        launch(i32, args=[0, 0, 0, 0, 0, np.zeros(2, dtype)], options=RunOptions(stdout=io.StringIO()))
    with pytest.raises(LaunchError, match="got an array of int64"):
        launch(i32, args=[0, 0, 0, 0, 0, np.zeros(2, np.int64)])


def test_array_table_rows_hold_address_shape_strides() -> None:
    text = """cuda_tile.module @m {
  entry @k(%list: tile<ptr<i64>>, %len: tile<i32>) {
    return
  }
}
"""
    a = np.zeros((3, 4), np.float32)
    b = np.zeros((2, 6), np.float32)
    view = np.zeros((4, 8), np.float32)[:, ::2]
    result = launch(text, args=[ArrayTable((a, b, StridedArray(view))), 3])
    memory = result.machine.memory
    table = result.addresses[0]
    rows = memory.read(table + 8 * np.arange(15, dtype=np.int64), np.dtype(np.int64)).reshape(3, 5)
    assert rows[:, 1:].tolist() == [[3, 4, 4, 1], [2, 6, 6, 1], [4, 4, 8, 2]]
    assert len({int(r) for r in rows[:, 0]}) == 3
    # each address is the array's own memory: reading element [1, 1] of each gives it
    a[1, 1], b[1, 1], view[1, 1] = 1.5, 2.5, 3.5
    got = [
        memory.read(np.array([rows[i, 0] + 4 * (rows[i, 3] + rows[i, 4])]), np.dtype(np.float32))[0] for i in range(3)
    ]
    assert got == [1.5, 2.5, 3.5]


def test_strided_array_is_placed_as_it_lies() -> None:
    base = np.arange(32, dtype=np.float32).reshape(4, 8)
    view = base[1:, 2::3]  # strides (8, 3) elements, first element base[1, 2]
    result = launch(PRINTS, args=[0, 0, 0, 0, 0, StridedArray(view)], options=RunOptions(stdout=io.StringIO()))
    memory = result.machine.memory
    p = result.addresses[5]
    addresses = p + 4 * (8 * np.arange(3)[:, None] + 3 * np.arange(2)[None, :])
    assert memory.read(addresses, np.dtype(np.float32)).tolist() == view.tolist()
    # only the bytes the view spans are placed: one element before it is outside memory
    assert memory.find(p - 4) is None


# -- modules and kernels ----------------------------------------------------------------------


def test_module_from_path_text_and_module(tmp_path: Path) -> None:
    f = tmp_path / "k.tileir"
    f.write_text(TWO)
    for source in (f, str(f), TWO, load_module(TWO)):
        assert [op.properties["sym_name"].value for op in load_module(source).entries()] == ["first", "second"]


def test_unreadable_and_invalid_modules(tmp_path: Path) -> None:
    with pytest.raises(LaunchError) as info:
        load_module(str(tmp_path / "missing.tileir"))
    assert str(info.value) == f"cannot read '{tmp_path / 'missing.tileir'}': No such file or directory"
    assert info.value.kind == "module"
    with pytest.raises(LaunchError, match="is a directory"):
        load_module(tmp_path)
    bad = TWO.replace("@second() {", "@second(%x: tile<4xi32>) {")
    with pytest.raises(LaunchError) as info:
        load_module(bad)
    assert info.value.kind == "module" and info.value.diagnostics
    assert str(info.value).startswith("<input>:5:")
    assert "entry op must have scalar types" in str(info.value)


def test_finding_kernels() -> None:
    module = load_module(TWO)
    assert find_kernel(module, "second").properties["sym_name"].value == "second"
    assert find_kernel(module, "@first").properties["sym_name"].value == "first"
    with pytest.raises(LaunchError) as info:
        find_kernel(module, None)
    assert str(info.value) == "the module has 2 kernels (first, second); name one"
    with pytest.raises(LaunchError) as info:
        launch(TWO, "third")
    assert str(info.value) == "no kernel named 'third'; the module has: first, second"
    assert info.value.kind == "kernel"


def test_cutile_mangled_names_are_found_by_function_name() -> None:
    text = TWO.replace("@first", "@vadd_Kt1_A1f32_1l0").replace("@second", "@softmax_Kt2_A2f16")
    module = load_module(text)
    assert find_kernel(module, "vadd").properties["sym_name"].value == "vadd_Kt1_A1f32_1l0"
    assert find_kernel(module, "softmax").properties["sym_name"].value == "softmax_Kt2_A2f16"
    with pytest.raises(LaunchError, match="no kernel named 'vad'"):
        find_kernel(module, "vad")


def test_wrong_argument_count_shows_the_signature() -> None:
    e = _error(PRINTS, [1, 2])
    assert str(e) == (
        "kernel @show takes 6 arguments, got 2: @show(%n: tile<i32>, %x: tile<f16>, %b: tile<i1>, "
        "%w: tile<i8>, %d: tile<f64>, %p: tile<ptr<f32>>)"
    )
    assert e.kind == "count"
    e = _error(PRINTS, [F32, 1], cutile=True)
    assert str(e).startswith("kernel @show takes 6 arguments, 2 cuTile arguments expanded to 4: @show(")
    assert signature(find_kernel(load_module(TWO), "first")) == "@first()"


def test_bad_grids_and_backends() -> None:
    for grid, why in [((0,), "0"), ((1, 2, 3, 4), "1,2,3,4"), ((-1, 2), "-1,2")]:  # as --grid writes it
        with pytest.raises(LaunchError) as info:
            launch(TWO, "first", grid=grid)
        assert str(info.value) == f"grid must be 1 to 3 positive extents, got {why}"
    with pytest.raises(LaunchError, match="grid must be 1 to 3 positive integers"):
        launch(TWO, "first", grid="x")
    with pytest.raises(LaunchError, match="unknown backend 'gpu'; available: auto, cpu, triton-interpret, triton"):
        launch(TWO, "first", backend="gpu")


def test_auto_without_a_gpu_runs_on_the_cpu_and_gpu_backends_say_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert resolve_backend("auto") == ("cpu", "auto: no GPU, ran on the CPU interpreter")
    assert resolve_backend("cpu") == ("cpu", "")
    for backend in ("triton", "tileiras"):
        with pytest.raises(LaunchError) as info:
            launch(TWO, "first", backend=backend)
        assert info.value.kind == "backend" and "\n" not in info.value.message
        assert info.value.message.startswith(f"the {backend} backend runs on an NVIDIA GPU and none was found")


@pytest.mark.parametrize(
    ("visible", "first"),
    [(None, ""), ("", None), ("-1", None), ("-1,0", None), (" 1, 0", "1"), ("GPU-8f2c", "GPU-8f2c"), (",0", None)],
)
def test_visible_gpu_reads_cuda_visible_devices_as_cuda_does(
    monkeypatch: pytest.MonkeyPatch, visible: str | None, first: str | None
) -> None:
    # CUDA stops at the first invalid entry: an empty or negative first entry hides every GPU.
    from compiler.runtime import gpu_present, visible_gpu

    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert visible_gpu() == first
    if first is None:
        assert not gpu_present()


def test_with_a_gpu_auto_picks_triton_unless_cuda_core_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import compiler.runtime.backends as backends

    monkeypatch.setattr(backends, "gpu_present", lambda: True)
    monkeypatch.setattr(backends, "gpu_launcher_missing", lambda: None)
    assert resolve_backend("auto") == ("triton", "auto: a GPU is present, ran on triton")
    assert resolve_backend("tileiras") == ("tileiras", "")
    monkeypatch.setattr(backends, "gpu_launcher_missing", lambda: "cuda.core is not installed (pip install cuda-core)")
    backend, note = resolve_backend("auto")
    assert backend == "cpu" and "cuda.core is not installed" in note
    with pytest.raises(LaunchError, match="the triton backend launches through cuda.core: cuda.core is not installed"):
        resolve_backend("triton")


def test_launch_result() -> None:
    result = launch(TWO, "second", grid=(2, 3))
    assert isinstance(result, LaunchResult)
    assert (result.kernel, result.grid, result.backend, result.num_blocks) == ("second", (2, 3, 1), "cpu", 6)
    assert result.time >= 0


# @tick adds 1 to @count and copies it out (how many ticks of its loaded module have run),
# @peek copies it out.
COUNT = """cuda_tile.module @m {
  global @count <i32: [0]> : tile<1xi32>
  entry @tick(%out: tile<ptr<i32>>) {
    %g = get_global @count : tile<ptr<i32>>
    %one = constant <i32: 1> : tile<i32>
    %v, %t0 = load_ptr_tko weak %g : tile<ptr<i32>> -> tile<i32>, token
    %v1 = addi %v, %one : tile<i32>
    %t1 = store_ptr_tko weak %g, %v1 token = %t0 : tile<ptr<i32>>, tile<i32> -> token
    %t2 = store_ptr_tko weak %out, %v1 : tile<ptr<i32>>, tile<i32> -> token
    return
  }
  entry @peek(%out: tile<ptr<i32>>) {
    %g = get_global @count : tile<ptr<i32>>
    %v, %t0 = load_ptr_tko weak %g : tile<ptr<i32>> -> tile<i32>, token
    %t1 = store_ptr_tko weak %out, %v : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""


def _tick(source, kernel: str = "tick") -> int:
    out = np.zeros(1, np.int32)
    launch(source, kernel, 1, [out], backend="cpu")
    return int(out[0])


def test_globals_live_as_long_as_the_module_object(tmp_path: Path) -> None:
    """Spec 003 (6.2.1): a global "will be initialized exactly once"; our loaded module is
    the Module object: its launches count on, while a path or IR text is loaded afresh at
    each call, and `benchmark`'s launches are all of one loaded module. Its kernels share
    its globals."""
    m = load_module(COUNT)
    assert [_tick(m) for _ in range(3)] == [1, 2, 3] and _tick(m, "peek") == 3
    assert _tick(load_module(COUNT)) == 1 and _tick(m) == 4
    f = tmp_path / "count.tileir"
    f.write_text(COUNT)
    assert [_tick(f), _tick(str(f)), _tick(COUNT), _tick(COUNT)] == [1, 1, 1, 1]
    fresh = load_module(COUNT)
    benchmark(fresh, "tick", 1, [np.zeros(1, np.int32)], "cpu", warmup=1, repeat=2)
    assert _tick(fresh) == 4


def test_errors_while_running_are_interp_errors() -> None:
    text = """cuda_tile.module @m {
  entry @k(%n: tile<i32>) {
    %zero = constant <i32: 0> : tile<i32>
    %ok = cmpi greater_than %n, %zero, signed : tile<i32> -> tile<i1>
    assert %ok, "n must be positive" : tile<i1>
    return
  }
}
"""
    launch(text, grid=(2,), args=[1])
    with pytest.raises(InterpError) as info:
        launch(text, grid=(2,), args=[0])
    assert str(info.value).startswith("<input>:5:5: error: assert: ")
    assert "n must be positive" in str(info.value)
    assert "tile block (0, 0, 0)" in str(info.value)


# -- bytecode ---------------------------------------------------------------------------------


def test_bytecode_is_read_by_our_reader(tmp_path: Path) -> None:
    from compiler.bytecode import write_bytecode
    from compiler.text import parse

    f = tmp_path / "k.tileirbc"
    f.write_bytes(write_bytecode(parse(TWO).module))
    assert len(load_module(f).entries()) == 2
    assert len(load_module(f.read_bytes()).entries()) == 2
    assert launch(f, "second").kernel == "second"


def test_unreadable_bytecode_is_a_module_error(tmp_path: Path) -> None:
    f = tmp_path / "k.tileirbc"
    f.write_bytes(BYTECODE_MAGIC + b"\x0d\x01\x00")
    with pytest.raises(LaunchError) as info:
        load_module(f)
    assert info.value.kind == "module"
    assert "cannot read Tile IR bytecode" in str(info.value)


# -- running: arrays updated in place -----------------------------------------------------------


def test_arrays_are_updated_in_place() -> None:
    x = np.arange(40, dtype=np.int32)
    out = np.zeros(40, np.int32)
    result = launch(ADD_K, grid=(3,), args=[x, out, 40, 5])
    assert result.kernel == "add_k"
    np.testing.assert_array_equal(out, np.arange(40) + 5)
    np.testing.assert_array_equal(x, np.arange(40))


def test_non_contiguous_arrays_are_copied_and_written_back() -> None:
    x = np.arange(80, dtype=np.int32)[::2]
    buffer = np.zeros(80, np.int32)
    out = buffer[::2]
    launch(ADD_K, grid=(3,), args=[x, out, 40, -1])
    np.testing.assert_array_equal(out, np.arange(0, 80, 2) - 1)
    np.testing.assert_array_equal(buffer[1::2], 0)


def test_a_store_to_a_read_only_array_is_an_error() -> None:
    x = np.arange(16, dtype=np.int32)
    out = np.zeros(16, np.int32)
    out.flags.writeable = False
    with pytest.raises(InterpError) as info:
        launch(ADD_K, grid=(1,), args=[x, out, 16, 1])
    assert "store_view_tko" in str(info.value) and "read-only" in str(info.value)
    x.flags.writeable = False  # a read-only input is fine
    out2 = np.zeros(16, np.int32)
    launch(ADD_K, grid=(1,), args=[x, out2, 16, 1])
    np.testing.assert_array_equal(out2, np.arange(16) + 1)


def test_tf32_scalars_are_rounded_to_tf32() -> None:
    from compiler.ir.types import FloatType
    from compiler.runtime.binding import _float

    tf32 = FloatType("tf32")
    ulp = 2.0**-10  # tf32 keeps 10 fraction bits
    cases = {1 + ulp / 2: 1.0, 1 + 3 * ulp / 2: 1 + 2 * ulp, 1 + 0.6 * ulp: 1 + ulp, -(1 + 0.4 * ulp): -1.0}
    for given, expected in cases.items():
        got = _float("x", tf32, given)
        assert got.dtype == np.float32 and float(got[0]) == expected, given
    assert np.isnan(_float("x", tf32, float("nan"))[0])
    with pytest.raises(LaunchError, match="out of the range of tf32"):
        _float("x", tf32, float(np.finfo(np.float32).max))  # rounds up past the largest tf32


def test_a_store_past_a_too_short_array_names_block_and_address() -> None:
    from tests.corpus import EXAMPLES_DIR

    a = np.ones(4000, np.float32)
    c = np.zeros(3000, np.float32)  # the kernel is told 4000
    with pytest.raises(InterpError) as info:
        launch(EXAMPLES_DIR / "vector_add.tileir", grid=(4,), args=[a, 4000, 1, a, 4000, 1, c, 4000, 1])
    report = str(info.value)
    assert report.startswith(f"{EXAMPLES_DIR / 'vector_add.tileir'}:24:5: error: store_view_tko: ")
    assert "tile block (2, 0, 0)" in report and "address 0x" in report


def test_grids_args_and_options_that_are_not_what_they_should_be_are_launch_errors() -> None:
    """int() took "12" as a 1x2 grid, a float's whole part, a dict's keys, True as 1; other
    mistakes ended in TypeError or AttributeError deep inside (found by a QA pass)."""
    a = np.ones(8, np.float32)
    for grid in ["12", (4.7,), [2.9, 1], {3: 1}, True, b"\x02"]:
        with pytest.raises(LaunchError, match="grid must be 1 to 3 positive integers") as e:
            launch(TWO, "first", grid=grid, backend="cpu")
        assert e.value.kind == "grid"
    for grid in (np.int64(2), np.array(2), np.array([2, 1]), [2]):
        assert launch(TWO, "first", grid=grid, backend="cpu").grid[0] == 2
    assert launch(TWO, "first", 1, (x for x in []), backend="cpu").backend == "cpu"  # any iterable
    for args, message in ((None, "args must be a sequence"), ([np.ma.masked_array(a)], "argument 0 is a masked array")):
        with pytest.raises(LaunchError, match=message):
            launch(TWO, "first", 1, args, backend="cpu")
    with pytest.raises(LaunchError, match="options must be a compiler.interp.RunOptions, got dict"):
        launch(TWO, "first", 1, backend="cpu", options={"timeout": 1})
    with pytest.raises(LaunchError, match=r"RunOptions\(timeout=-1\): give 0"):
        launch(TWO, "first", 1, backend="cpu", options=RunOptions(timeout=-1))
    for module in (42, None):
        with pytest.raises(LaunchError, match="expected a module: a Module, a .tileir/.tileirbc path, IR text") as e:
            launch(module, backend="cpu")
        assert e.value.kind == "module"


def test_the_lowering_api_takes_what_launch_takes_and_checks_compile_options() -> None:
    from compiler.lower import LowerError, compile, to_triton

    path = Path(__file__).resolve().parents[2] / "examples" / "vector_add.tileir"
    assert to_triton(str(path)) == to_triton(load_module(path))  # a path, as launch takes
    with pytest.raises(LowerError, match="expected a module"):
        to_triton(42)
    pytest.importorskip("triton")
    # Triton's own refusal read as "a bug in the lowering"; an unknown name was ignored.
    for options, message in (
        ({"num_warps": 3}, "num_warps=3: must be a power of two from 1 to 32"),
        ({"num_stages": 0}, "num_stages=0: must be from 1 to 64"),
        ({"bogus": 3}, "bogus: not a compile option of Triton"),
    ):
        with pytest.raises(LowerError, match=message):
            compile(str(path), None, "sm_90", use_cache=False, **options)
