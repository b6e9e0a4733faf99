"""Parameter packing for both compilers' cubins, checked against what the cubins declare
(EIATTR_KPARAM_INFO read by compiler.lower.cubin), with no GPU: the sizes and offsets the
launcher packs are the ones Triton and tileiras compiled the kernel for. Also the launch-time
specialisation (divisibility, unit strides) and the argument checks that need no device."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compiler.lower.cubin import read_cubin
from compiler.runtime import LaunchError, abi, find_kernel, find_tileiras, load_module
from compiler.runtime.gpu import Bound, specialise
from tests.corpus import SAMPLES_DIR, example_files

pytest.importorskip("triton", reason="the Triton ABI check compiles with Triton (pip install 'triton>=3.6')")

# Every scalar width and float format a parameter can have, between pointers (so that
# alignment padding is exercised), and a global (a hidden buffer parameter under Triton).
MIXED = """cuda_tile.module @m {
  global @g <i32: [7]> : tile<1xi32>
  entry @k(%p: tile<ptr<f32>>, %b: tile<i1>, %c: tile<i8>, %q: tile<ptr<i8>>, %s: tile<i16>, %h: tile<f16>,
           %bf: tile<bf16>, %w: tile<i64>, %f: tile<f32>, %d: tile<f64>, %i: tile<i32>, %r: tile<ptr<f64>>) {
    %v = ftof %d : tile<f64> -> tile<f32>
    %x = ftof %h : tile<f16> -> tile<f32>
    %y = ftof %bf : tile<bf16> -> tile<f32>
    %s1 = addf %v, %x : tile<f32>
    %s2 = addf %s1, %y : tile<f32>
    %s3 = addf %s2, %f : tile<f32>
    %t = store_ptr_tko weak %p, %s3 : tile<ptr<f32>>, tile<f32> -> token
    %ci = exti %c signed : tile<i8> -> tile<i32>
    %si = exti %s signed : tile<i16> -> tile<i32>
    %bi = exti %b unsigned : tile<i1> -> tile<i32>
    %wi = trunci %w : tile<i64> -> tile<i32>
    %gp = get_global @g : tile<ptr<i32>>
    %gv, %t2 = load_ptr_tko weak %gp : tile<ptr<i32>> -> tile<i32>, token
    %a1 = addi %ci, %si : tile<i32>
    %a2 = addi %a1, %bi : tile<i32>
    %a3 = addi %a2, %wi : tile<i32>
    %a4 = addi %a3, %i : tile<i32>
    %a5 = addi %a4, %gv : tile<i32>
    %a6 = trunci %a5 : tile<i32> -> tile<i8>
    %t3 = store_ptr_tko weak %q, %a6 : tile<ptr<i8>>, tile<i8> -> token
    %t4 = store_ptr_tko weak %r, %d : tile<ptr<f64>>, tile<f64> -> token
    return
  }
}
"""


def _kernels() -> list:
    cases = [pytest.param(MIXED, id="mixed-parameters")]
    cases += [pytest.param(p, id=p.stem) for p in example_files()]
    if SAMPLES_DIR.is_dir():
        cases += [pytest.param(p, id=f"sample-{p.stem}") for p in sorted(SAMPLES_DIR.glob("*.tileir"))]
    return cases


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "abi-cache"))


@pytest.mark.parametrize("source", _kernels())
@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100"])
def test_triton_packing_matches_the_cubin(source: str | Path, arch: str) -> None:
    from compiler.lower import compile as lower_compile

    module = load_module(source)
    k = lower_compile(module, None, arch)
    declared = read_cubin(k.cubin).kernels[k.name].params
    slots = abi.slots_triton(k.params)
    abi.check_layout(slots, declared, k.name, "Triton")  # raises on any difference
    assert slots[-2:] == [abi.Slot(8, "scratch global_scratch (*i8)"), abi.Slot(8, "scratch profile_scratch (*i8)")]


@pytest.mark.parametrize("source", _kernels())
@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100"])
def test_tileiras_packing_matches_the_cubin(source: str | Path, arch: str) -> None:
    if find_tileiras() is None:
        pytest.skip("tileiras is not installed (pip install nvidia-cuda-tileiras)")
    from compiler.runtime.tileiras import compile_tileiras

    module = load_module(source)
    entry = find_kernel(module, None)
    built = compile_tileiras(module, arch)
    name = entry.attr("sym_name").value
    info = built.info.kernels[name]
    abi.check_layout(abi.slots_tileiras(entry), info.params, name, "tileiras")
    assert info.tile_kernel and info.reqntid is not None


def test_a_layout_that_differs_is_refused() -> None:
    from compiler.lower.cubin import KernelParam

    slots = [abi.Slot(8, "p"), abi.Slot(4, "n")]
    abi.check_layout(slots, [KernelParam(0, 0, 8), KernelParam(1, 8, 4)], "k", "x")
    with pytest.raises(ValueError, match="parameter 1 \\(n\\) is 8 bytes at offset 8, the launcher packs 4 bytes"):
        abi.check_layout(slots, [KernelParam(0, 0, 8), KernelParam(1, 8, 8)], "k", "x")
    with pytest.raises(ValueError, match="declares 1 parameters, the launcher packs 2"):
        abi.check_layout(slots, [KernelParam(0, 0, 8)], "k", "x")


def test_offsets_follow_c_alignment_and_values_have_exact_sizes() -> None:
    slots = [abi.Slot(1, "b"), abi.Slot(8, "p"), abi.Slot(2, "h"), abi.Slot(4, "i")]
    assert abi.offsets(slots) == [0, 8, 16, 20]
    values = abi.c_values(slots, [1, 0xDEADBEEF00, -1, 0x3F800000])
    assert [type(v).__name__ for v in values] == ["c_ubyte", "c_ulong", "c_ushort", "c_uint"]
    assert values[2].value == 0xFFFF and values[3].value == 0x3F800000


def test_specialisation_sees_unit_strides_and_multiples_of_16() -> None:
    module = load_module(example_path("vector_add"))
    entry = find_kernel(module, None)
    values = [Bound(0x7F0000000000, True), Bound(4096, False, 4096), Bound(1, False, 1),
              Bound(0x7F0000000008, True), Bound(100, False, 100), Bound(2, False, 2),
              Bound(0x7F0000000100, True), Bound(4096, False, 4096), Bound(1, False, 1)]  # fmt: skip
    ones, divisible = specialise(entry, values)
    assert ones == {2, 8} and divisible == (0, 1, 6, 7)


def test_specialised_source_keeps_the_parameters() -> None:
    from compiler.lower.codegen import lower_entry

    module = load_module(example_path("vector_add"))
    entry = find_kernel(module, None)
    plain = lower_entry(module, entry, "sm_90")
    special = lower_entry(module, entry, "sm_90", frozenset({2, 5, 8}))
    assert [p.name for p in plain.params] == [p.name for p in special.params]
    assert special.text.count("# specialised: 1 at launch") == 3


def example_path(stem: str) -> Path:
    return next(p for p in example_files() if p.stem == stem)


def test_gpu_backends_without_a_driver_say_so_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher itself (past the cheap GPU check): on this machine either cuda.core is
    missing or there is no driver; both are one-line LaunchErrors of kind "device"."""
    import compiler.runtime.gpu as gpu_mod
    from compiler.runtime import launch_cutile

    if gpu_mod._GPU is not None or Path("/dev/nvidia0").exists():
        pytest.skip("a GPU is present: the no-driver path cannot be provoked here")
    import compiler.runtime.backends as backends

    monkeypatch.setattr(backends, "gpu_present", lambda: True)
    monkeypatch.setattr(backends, "gpu_launcher_missing", lambda: None)
    a = np.ones(8, np.float32)
    with pytest.raises(LaunchError) as info:
        launch_cutile(example_path("vector_add"), grid=(1,), args=[a, a, a.copy()], backend="triton")
    assert info.value.kind == "device" and "\n" not in info.value.message
    assert "no NVIDIA driver" in info.value.message or "cuda.core" in info.value.message


def test_cpu_arrays_of_other_libraries_are_used_like_numpy() -> None:
    """A CPU torch tensor (DLPack on the CPU) is a NumPy view of the same memory: the CPU
    backend updates it in place, through cuTile's convention too (its strides are its own)."""
    torch = pytest.importorskip("torch")
    from compiler.runtime import launch_cutile
    from compiler.runtime.devarray import host_array, is_device_array

    a, b = torch.arange(3000, dtype=torch.float32), torch.ones(3000, dtype=torch.float32)
    c = torch.zeros(3000, dtype=torch.float32)
    assert not is_device_array(c) and host_array(c).ctypes.data == c.data_ptr()
    launch_cutile(example_path("vector_add"), grid=(3,), args=[a, b, c], backend="cpu")
    assert torch.equal(c, a + b)
    bf = torch.ones(4, dtype=torch.bfloat16)
    assert str(host_array(bf).dtype) == "bfloat16"


def test_device_arrays_are_recognised_without_a_gpu_library() -> None:
    """An object with a CUDA Array Interface is a GPU array, used in place; found inside an
    array list too (what decides whether a CPU launch must copy GPU arrays over)."""
    from compiler.runtime import ArrayTable
    from compiler.runtime.devarray import device_array, holds_device_array

    class FakeGpuArray:
        @property
        def __cuda_array_interface__(self) -> dict:
            return {"shape": (2, 3), "typestr": "<f4", "data": (0x7F0000000000, False), "strides": None, "version": 3}

    fake = FakeGpuArray()
    d = device_array(fake)
    assert (d.ptr, d.shape, d.strides, d.dtype, d.nbytes) == (0x7F0000000000, (2, 3), (3, 1), np.float32, 24)
    assert holds_device_array([np.ones(2), 3, ArrayTable((np.ones(1), fake))])
    assert not holds_device_array([np.ones(2), 3, ArrayTable((np.ones(1),))])
