"""Bytecode 13.4's ops (`insert`, `fpowi`, `gdc_wait_tko`, `gdc_launch_dependents_tko`,
`memory_fence_alias_tko`), `ftoi saturating` and `inbounds`, through every layer:

* cuTile Python's 13.4 exports read, verify and print as NVIDIA's 13.5 tileirdisasm prints
  them, and our 13.4 writer's bytes print the same through tileirdisasm and compile with
  tileiras (sm_80/90/100);
* the interpreter's `insert` and `fpowi` against NumPy references written here (fpowi:
  tileiras' repeated squaring, seen in its SASS);
* the lowering under Triton's interpreter equals the CPU interpreter bit for bit, and the
  sm_90 SASS carries the grid-dependency instructions (ACQBULK, PREEXIT);
* `launch_cutile` runs cuTile kernels that need 13.4 (cuTile refuses them at 13.3).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from compiler.bytecode import read_bytecode, write_bytecode
from compiler.ir.diagnostics import Severity
from compiler.runtime import find_tileirdisasm, launch
from compiler.text import parse
from compiler.text.printer import PrintOptions, print_module
from compiler.verify import verify

from .util import run_tileiras

KERNEL = """cuda_tile.module @m {
  entry @k(%x: tile<ptr<f32>>, %e: tile<ptr<i32>>, %y: tile<ptr<f32>>) {
    %t = make_token : token
    %a = gdc_wait_tko token = %t -> token
    %off = iota : tile<16xi32>
    %xp0 = reshape %x : tile<ptr<f32>> -> tile<1xptr<f32>>
    %xp1 = broadcast %xp0 : tile<1xptr<f32>> -> tile<16xptr<f32>>
    %xp = offset %xp1, %off : tile<16xptr<f32>>, tile<16xi32> -> tile<16xptr<f32>>
    %ep0 = reshape %e : tile<ptr<i32>> -> tile<1xptr<i32>>
    %ep1 = broadcast %ep0 : tile<1xptr<i32>> -> tile<16xptr<i32>>
    %ep = offset %ep1, %off : tile<16xptr<i32>>, tile<16xi32> -> tile<16xptr<i32>>
    %yp0 = reshape %y : tile<ptr<f32>> -> tile<1xptr<f32>>
    %yp1 = broadcast %yp0 : tile<1xptr<f32>> -> tile<16xptr<f32>>
    %yp = offset %yp1, %off : tile<16xptr<f32>>, tile<16xi32> -> tile<16xptr<f32>>
    %xv, %t1 = load_ptr_tko weak %xp token = %a : tile<16xptr<f32>> -> tile<16xf32>, token
    %ev, %t2 = load_ptr_tko weak %ep token = %a : tile<16xptr<i32>> -> tile<16xi32>, token
    %p = fpowi %xv, %ev : tile<16xf32>, tile<16xi32>
    %c = constant <f32: 9.0> : tile<4xf32>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %q = insert %c, %p[%bx] : tile<4xf32>, tile<16xf32>
    %f = memory_fence_alias_tko %t1
    %b = gdc_launch_dependents_tko token = %f -> token
    %t3 = store_ptr_tko weak %yp, %q token = %b : tile<16xptr<f32>>, tile<16xf32> -> token
    return
  }
}
"""

X = np.array([1.5, -2, 3, 0.5, 1.1, 7, -1, 0, 2, 3, 1e-3, 10, 1.0001, -0.5, 65504, 2], np.float32)
N = np.array([3, -3, 0, 10, 100, -2, 7, -1, 31, -31, 5, 38, 10000, 2**31 - 1, 2, -(2**31)], np.int32)


def _module(text: str = KERNEL):
    result = parse(text, "k.tileir")
    assert not result.diagnostics, result.diagnostics
    assert not [d for d in verify(result.module) if d.severity == Severity.ERROR]
    return result.module


def fpowi_reference(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Element by element, in Python floats rounded to f32 after every step."""
    out = []
    for xi, ni in zip(x.tolist(), n.tolist(), strict=True):
        a, m, r = np.float32(xi), abs(int(ni)), np.float32(1)
        with np.errstate(all="ignore"):
            while m:
                if m & 1:
                    r = np.float32(r * a)
                m >>= 1
                if m:
                    a = np.float32(a * a)
            if ni < 0:
                r = np.float32(np.float32(1) / r)
        out.append(r)
    return np.array(out, np.float32)


def _run(backend: str, block: int) -> np.ndarray:
    y = np.zeros(16, np.float32)
    launch(_module(), "k", (block + 1, 1, 1), [X.copy(), N.copy(), y], backend=backend)
    return y


def test_interpreter_fpowi_and_insert() -> None:
    y = _run("cpu", 0)  # one block: block 0 inserts at slice 0
    want = fpowi_reference(X, N)
    want[0:4] = 9.0
    assert y.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    # the repeated squaring is not pow: 1.0001 ** 10000 differs from the correctly rounded value
    assert y[12] != np.float32(1.0001**10000)


def test_interpreter_insert_per_block_slices() -> None:
    module = _module(KERNEL.replace("%q = insert %c, %p[%bx]", "%q = insert %c, %p[%bx]"))
    y = np.zeros(16, np.float32)
    launch(module, "k", (4, 1, 1), [X.copy(), N.copy(), y], backend="cpu")
    # Every block writes all 16 elements; blocks run in order here, so the last block's
    # slice (3) holds 9s and the rest is fpowi's.
    assert (y[12:] == 9.0).all() and (y[:12] == fpowi_reference(X, N)[:12]).all()


def test_insert_out_of_range_is_reported() -> None:
    from compiler.interp.machine import InterpError

    with pytest.raises(InterpError, match="slice index 4 of dimension 0 is out of range"):
        _run("cpu", 4)


def test_triton_interpreter_equals_cpu_bitwise() -> None:
    pytest.importorskip("triton")
    pytest.importorskip("torch")
    for block in (0, 2):
        assert _run("triton-interpret", block).view(np.uint32).tolist() == _run("cpu", block).view(np.uint32).tolist()


@pytest.mark.parametrize("half", ["f16", "bf16"])
@pytest.mark.parametrize(("width", "low", "high"), [(8, -128, 127), (16, -40, 40), (1, 0, 1)])
def test_fpowi_narrow_exponents_and_halves(width: int, low: int, high: int, half: str) -> None:
    """f16 and bf16 compute in f32 and round once (bf16: not by Triton 3.6's interpreter's
    truncating cast, which a fuzz campaign caught); an i1 exponent is signed (true = -1)."""
    import ml_dtypes

    pytest.importorskip("triton")
    text = """cuda_tile.module @m {
  entry @k(%x: tile<ptr<f16>>, %e: tile<ptr<iW>>, %y: tile<ptr<f16>>) {
    %off = iota : tile<64xi32>
    %xp0 = reshape %x : tile<ptr<f16>> -> tile<1xptr<f16>>
    %xp1 = broadcast %xp0 : tile<1xptr<f16>> -> tile<64xptr<f16>>
    %xp = offset %xp1, %off : tile<64xptr<f16>>, tile<64xi32> -> tile<64xptr<f16>>
    %ep0 = reshape %e : tile<ptr<iW>> -> tile<1xptr<iW>>
    %ep1 = broadcast %ep0 : tile<1xptr<iW>> -> tile<64xptr<iW>>
    %ep = offset %ep1, %off : tile<64xptr<iW>>, tile<64xi32> -> tile<64xptr<iW>>
    %yp0 = reshape %y : tile<ptr<f16>> -> tile<1xptr<f16>>
    %yp1 = broadcast %yp0 : tile<1xptr<f16>> -> tile<64xptr<f16>>
    %yp = offset %yp1, %off : tile<64xptr<f16>>, tile<64xi32> -> tile<64xptr<f16>>
    %xv, %t1 = load_ptr_tko weak %xp : tile<64xptr<f16>> -> tile<64xf16>, token
    %ev, %t2 = load_ptr_tko weak %ep : tile<64xptr<iW>> -> tile<64xiW>, token
    %p = fpowi %xv, %ev : tile<64xf16>, tile<64xiW>
    %t3 = store_ptr_tko weak %yp, %p : tile<64xptr<f16>>, tile<64xf16> -> token
    return
  }
}
""".replace("iW", f"i{width}").replace("f16", half)
    module = _module(text)
    rng = np.random.default_rng(width)
    dtype = np.float16 if half == "f16" else ml_dtypes.bfloat16
    x = rng.uniform(-3, 3, 64).astype(dtype)
    n = rng.integers(low, high + 1, 64)
    n = n.astype(np.bool_) if width == 1 else n.astype(f"i{width // 8}")
    signed = -n.astype(np.int64) if width == 1 else n.astype(np.int64)
    with np.errstate(over="ignore"):
        want = fpowi_reference(x.astype(np.float32), signed).astype(dtype)
    for backend in ("cpu", "triton-interpret"):
        y = np.zeros(64, dtype)
        launch(module, "k", (1, 1, 1), [x, n, y], backend=backend)
        assert y.view(np.uint16).tolist() == want.view(np.uint16).tolist(), backend


def test_sass_has_grid_dependency_control_on_sm_90() -> None:
    pytest.importorskip("triton")
    from compiler.lower import compile as lower_compile

    for arch, expected in (("sm_80", 0), ("sm_90", 2), ("sm_100", 2)):
        result = lower_compile(_module(), "k", arch=arch, use_cache=False)
        ptx = result.asm["ptx"]
        assert ptx.count("griddepcontrol.") == expected, arch


def _tool(name: str):
    from compiler.lower.sass import find_tileiras

    if name == "tileirdisasm":
        return find_tileirdisasm()
    return find_tileiras()


def test_our_13_4_bytes_print_and_compile_with_nvidias_tools(tmp_path: Path) -> None:
    disasm, tileiras = _tool("tileirdisasm"), _tool("tileiras")
    if disasm is None or tileiras is None:
        pytest.skip("NVIDIA's tileirdisasm/tileiras are not installed (pip install nvidia-cuda-tileiras)")
    module = _module()
    data = write_bytecode(module, (13, 4))
    assert data[8:10] == bytes([13, 4])
    path = tmp_path / "k.tileirbc"
    path.write_bytes(data)
    printed = subprocess.run([str(disasm), str(path)], capture_output=True, text=True, check=True).stdout
    for line in ("gdc_wait_tko token =", "gdc_launch_dependents_tko token =", "memory_fence_alias_tko %", "insert %"):
        assert line in printed
    assert "fpowi %" in printed and "tile<16xf32>, tile<16xi32>" in printed
    ours = print_module(read_bytecode(data), PrintOptions(keep_comments=False))
    assert ours.count("insert ") == printed.count("insert ") == 1
    for arch in ("sm_80", "sm_90", "sm_100"):
        done = run_tileiras(str(tileiras), path, arch, tmp_path / f"{arch}.cubin")
        assert done.returncode == 0, done.stderr


def test_13_4_ops_are_refused_for_13_3_by_name() -> None:
    from compiler.bytecode import BytecodeWriteError

    with pytest.raises(BytecodeWriteError) as info:
        write_bytecode(_module(), (13, 3))
    text = str(info.value) + "".join(str(d) for d in getattr(info.value, "diagnostics", ()))
    assert "'cuda_tile.insert' is not available in bytecode version 13.3" in text


def test_fpowi_i64_exponent_is_refused_as_tileiras_does() -> None:
    result = parse(
        """cuda_tile.module @m {
  entry @k() {
    %s = constant <f32: 1.5> : tile<4xf32>
    %n = constant <i64: 1> : tile<4xi64>
    %p = fpowi %s, %n : tile<4xf32>, tile<4xi64>
    return
  }
}
""",
        "k.tileir",
    )
    messages = [d.message for d in verify(result.module)]
    assert any("must be tile of i1 or i8 or i16 or i32 values" in m for m in messages), messages


def _cutile_kernels():
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")

    @ct.kernel
    def insert_rows(x, y):
        t = ct.load(x, index=(0, 0), shape=(4, 8))
        t = ct.insert(t, (1, ct.bid(0)), ct.full((2, 4), 7.0, ct.float32))
        ct.store(y, index=(0, 0), tile=t)

    @ct.kernel
    def pdl_copy(x, y):
        ct.grid_dependency_control_wait()
        t = ct.load(x, index=(ct.bid(0),), shape=(16,), check_bounds=False)
        ct.grid_dependency_control_launch_dependents()
        ct.store(y, index=(ct.bid(0),), tile=t * 2, check_bounds=False)

    @ct.kernel
    def to_half_toward_zero(x, y):
        t = ct.load(x, index=(0,), shape=(16,))
        ct.store(y, index=(0,), tile=t.astype(ct.float16, rounding_mode=ct.RoundingMode.RZ))

    @ct.kernel
    def cube(x, y):
        t = ct.load(x, index=(0,), shape=(16,))
        ct.store(y, index=(0,), tile=t**3)

    return insert_rows, pdl_copy, to_half_toward_zero, cube


@pytest.mark.parametrize("backend", ["cpu", "triton-interpret"])
def test_launch_cutile_runs_kernels_that_need_13_4(backend: str) -> None:
    if backend == "triton-interpret":
        pytest.importorskip("triton")
    from compiler.runtime import launch_cutile
    from compiler.runtime.cutile import export_cutile

    insert_rows, pdl_copy, to_half_toward_zero, _ = _cutile_kernels()
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    y = np.zeros_like(x)
    launch_cutile(insert_rows, None, (1,), (x, y), backend=backend)
    want = x.copy()
    want[2:4, 0:4] = 7.0
    assert (y == want).all()

    x1 = np.arange(32, dtype=np.float32)
    y1 = np.zeros_like(x1)
    launch_cutile(pdl_copy, None, (2,), (x1, y1), backend=backend)
    assert (y1 == 2 * x1).all()
    data, _ = export_cutile(pdl_copy, (x1, y1))
    assert data[8:10] == bytes([13, 4])
    assert "inbounds = [true]" in print_module(read_bytecode(data))

    # astype with a rounding mode: cuTile asks for 13.4 (tileiras 13.5 takes ftof rounding<zero>)
    x2 = np.float32(1) + np.arange(16, dtype=np.float32) * np.float32(1e-4)
    y2 = np.zeros(16, np.float16)
    launch_cutile(to_half_toward_zero, None, (1,), (x2, y2), backend=backend)
    assert (y2.astype(np.float32) <= x2).all() and (y2 != x2.astype(np.float16)).any()


@pytest.mark.parametrize("backend", ["cpu", "triton-interpret"])
def test_launch_cutile_runs_what_cutile_runs_x_to_an_integer_power(backend: str) -> None:
    """cuTile's launch writes the newest version tileiras reads (13.4 for tileiras 13.5), where
    `x ** 3` is fpowi, not pow: launch_cutile exports 13.4 too, so the interpreters compute
    what the GPU would, x * (x * x) rounded at each product."""
    if backend == "triton-interpret":
        pytest.importorskip("triton")
    from compiler.runtime import launch_cutile
    from compiler.runtime.cutile import export_cutile

    cube = _cutile_kernels()[3]
    x = np.random.default_rng(5).standard_normal(16).astype(np.float32) * np.float32(3)
    y = np.zeros_like(x)
    launch_cutile(cube, None, (1,), (x, y), backend=backend)
    assert y.tobytes() == (x * (x * x)).tobytes()
    assert "fpowi" in print_module(read_bytecode(export_cutile(cube, (x, y))[0]))


def test_test_only_versions_lack_13_4_fields() -> None:
    """250.x number higher than 13.4 but branch from 13.3: no type option flags (a ptr is tag,
    pointee), so a module with pointers round-trips there as in 13.3."""
    module = parse(
        """cuda_tile.module @m {
  entry @k(%x: tile<ptr<f32>>) {
    return
  }
}
""",
        "k.tileir",
    ).module
    for version in ((13, 3), (250, 0), (13, 4)):
        data = write_bytecode(module, version)
        assert "tile<ptr<f32>>" in print_module(read_bytecode(data))
    after_version = {v: write_bytecode(module, v)[10:] for v in ((13, 3), (250, 0), (13, 4))}
    assert after_version[(250, 0)] == after_version[(13, 3)]
    assert after_version[(13, 4)] != after_version[(13, 3)]  # the ptr's option flags


INBOUNDS = """cuda_tile.module @m {
  entry @k(%x: tile<ptr<f32>>, %n: tile<i32>) {
    %t = make_token : token
    %v = make_tensor_view %x, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %p = make_partition_view %v : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %a, %t1 = load_view_tko weak %p[%bx] token = %t FLAGS : PV, tile<i32> -> tile<16xf32>, token
    %b = addf %a, %a : tile<16xf32>
    %t2 = store_view_tko weak %b, %p[%bx] token = %t1 FLAGS : tile<16xf32>, PV, tile<i32> -> token
    return
  }
}
""".replace("PV", "partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>")


def test_inbounds_tile_past_the_tensor_is_reported() -> None:
    from compiler.interp.machine import InterpError

    module = _module(INBOUNDS.replace("FLAGS", "inbounds = [true]"))
    x = np.arange(32, dtype=np.float32)
    launch(module, "k", (2, 1, 1), [x, np.int32(32)], backend="cpu")  # both tiles inside
    assert (x == 2 * np.arange(32)).all()
    with pytest.raises(InterpError, match=r"reaches past the tensor's extent 20 along dimension 0.*inbounds"):
        launch(module, "k", (2, 1, 1), [np.zeros(32, np.float32), np.int32(20)], backend="cpu")
    # Without the promise, the partial tile is masked.
    y = np.arange(32, dtype=np.float32)
    launch(_module(INBOUNDS.replace(" FLAGS", "")), "k", (2, 1, 1), [y, np.int32(20)], backend="cpu")
    assert (y[:20] == 2 * np.arange(20)).all() and (y[20:] == np.arange(20, 32)).all()


def test_inbounds_drops_the_masks_in_the_lowering() -> None:
    pytest.importorskip("triton")
    from compiler.lower import to_triton

    promised = to_triton(_module(INBOUNDS.replace("FLAGS", "inbounds = [true]")), "k")
    masked = to_triton(_module(INBOUNDS.replace(" FLAGS", "")), "k")
    assert "mask=" in masked and "mask=" not in promised
    x = np.arange(32, dtype=np.float32)
    launch(
        _module(INBOUNDS.replace("FLAGS", "inbounds = [true]")),
        "k",
        (2, 1, 1),
        [x, np.int32(32)],
        backend="triton-interpret",
    )
    assert (x == 2 * np.arange(32)).all()
