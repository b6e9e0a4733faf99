"""The GPU backends on a real GPU (`gpu` marker: skipped without one): every example and
shared sample on `triton` (our lowering) and `tileiras` (NVIDIA's compiler) equals the CPU
interpreter; NumPy, torch and CuPy arguments; GPU arrays on the CPU backend; the failure
paths (a kernel fault: one line, then the CPU backend still works; out of device memory,
then a working launch; a cubin the GPU cannot load); timing; blocks that wait for each other
(acquire and release).

A machine without tileiras (the project's GPU machines) finds tileiras cubins in the compile
cache when it was filled elsewhere: see .ci/gpu-prepare and .ci/gpu.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from compiler.ir.core import Module
from compiler.runtime import (
    LaunchError,
    benchmark,
    launch,
    launch_cutile,
    load_module,
)
from tests.corpus import MATMUL_CLUSTER_NAME, SAMPLES_DIR, example_files, matmul_cluster_text
from tests.runtime.test_samples_run import EXAMPLE_RECIPES, SAMPLE_RECIPES, Recipe

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "examples" / "vector_add.tileir"
BACKENDS = ("triton", "tileiras")


def _cases() -> list:
    cases = []
    for p in example_files():
        for label, r in EXAMPLE_RECIPES.get(p.stem, []):
            cases.append(pytest.param(p, r, id=f"{p.stem}-{label}"))
    for name, r in SAMPLE_RECIPES.items():
        cases.append(pytest.param(SAMPLES_DIR / f"{name}.tileir", r, id=f"sample-{name}"))
    return cases


def _same_as_cpu(path: Path | Module, recipe: Recipe, backend: str, seed: int = 0) -> None:
    if isinstance(path, Path) and not path.exists():
        pytest.skip(f"{path} is absent (../shared not beside the checkout)")
    rng = np.random.default_rng(seed)
    cpu_args = recipe.make(rng)
    gpu_args = [a.copy() for a in cpu_args]
    launch_cutile(path, grid=recipe.grid(cpu_args), args=cpu_args, backend="cpu")
    result = launch_cutile(path, grid=recipe.grid(gpu_args), args=gpu_args, backend=backend)
    assert result.backend == backend and result.time > 0
    want, got = cpu_args[recipe.out], gpu_args[recipe.out]
    if recipe.rtol == 0 and recipe.atol == 0:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=recipe.rtol, atol=recipe.atol)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("path", "recipe"), _cases())
def test_examples_and_samples_equal_the_cpu_interpreter(path: Path, recipe: Recipe, backend: str) -> None:
    _same_as_cpu(path, recipe, backend)


def _vadd_args(make, n: int = 5000):
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, n).astype(np.float32)
    b = rng.uniform(-1, 1, n).astype(np.float32)
    return a, b, [make(a), make(b), make(np.zeros(n, np.float32))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_torch_arrays_are_used_in_place(backend: str) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    a, b, args = _vadd_args(lambda x: torch.from_numpy(x).cuda())
    launch_cutile(VADD, grid=(5,), args=args, backend=backend)
    np.testing.assert_array_equal(args[2].cpu().numpy(), a + b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cupy_arrays_are_used_in_place(backend: str) -> None:
    cupy = pytest.importorskip("cupy")
    a, b, args = _vadd_args(cupy.asarray)
    launch_cutile(VADD, grid=(5,), args=args, backend=backend)
    np.testing.assert_array_equal(cupy.asnumpy(args[2]), a + b)


def test_numpy_arrays_and_cpu_torch_tensors_are_copied_and_back() -> None:
    torch = pytest.importorskip("torch")
    a, b, args = _vadd_args(lambda x: x)
    launch_cutile(VADD, grid=(5,), args=args, backend="triton")
    np.testing.assert_array_equal(args[2], a + b)
    a, b, args = _vadd_args(torch.from_numpy)
    launch_cutile(VADD, grid=(5,), args=args, backend="tileiras")
    np.testing.assert_array_equal(args[2].numpy(), a + b)


def test_gpu_arrays_run_on_the_cpu_backend() -> None:
    torch = pytest.importorskip("torch")
    a, b, args = _vadd_args(lambda x: torch.from_numpy(x).cuda())
    result = launch_cutile(VADD, grid=(5,), args=args, backend="cpu")
    assert result.backend == "cpu"
    np.testing.assert_array_equal(args[2].cpu().numpy(), a + b)


def test_a_bare_int_is_not_a_pointer() -> None:
    a, b, args = _vadd_args(lambda x: x)
    with pytest.raises(LaunchError, match="a bare integer is not a pointer on the GPU"):
        launch(VADD, None, (5,), [12345, 5000, 1, b, 5000, 1, args[2], 5000, 1], backend="triton")


FAULT = """
import sys
import numpy as np
from compiler.runtime import DevicePointer, LaunchError, launch, launch_cutile
backend, path = sys.argv[1], sys.argv[2]
a = np.arange(4096, dtype=np.float32)
c = np.zeros(4096, np.float32)
try:
    launch(path, None, (4,), [DevicePointer(0x10), 4096, 1, a, 4096, 1, c, 4096, 1], backend=backend)
    print("no fault")
except LaunchError as e:
    print("error:", e.kind, e.message)
try:
    launch_cutile(path, grid=(4,), args=[a, a, c], backend=backend)
    print("then: ran")
except LaunchError as e:
    print("then:", e.kind, e.message)
launch_cutile(path, grid=(4,), args=[a, a, c], backend="cpu")
print("cpu:", bool(np.array_equal(c, a + a)))
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fault_is_one_line_and_the_cpu_backend_stays_usable(backend: str) -> None:
    # In a process of its own: after a fault CUDA allows no more GPU work in the process
    # (measured: even a primary-context reset fails with the same error).
    done = subprocess.run(
        [sys.executable, "-c", FAULT, backend, str(VADD)], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert lines[0].startswith("error: device ") and "faulted on the GPU with CUDA_ERROR_" in lines[0], lines
    assert "restart" in lines[0]
    assert lines[1].startswith("then: device the GPU cannot be used again in this process after CUDA_ERROR_"), lines
    assert "the cpu backend still works" in lines[1]
    assert lines[2] == "cpu: True"


def test_out_of_memory_leaves_the_gpu_usable() -> None:
    from compiler.runtime.gpu import gpu

    with pytest.raises(LaunchError, match=r"out of device memory allocating .* free of"):
        gpu().alloc(1 << 50, "a test allocation")
    a, b, args = _vadd_args(lambda x: x)
    launch_cutile(VADD, grid=(5,), args=args, backend="triton")
    np.testing.assert_array_equal(args[2], a + b)


def test_a_cubin_for_another_gpu_is_refused_with_the_reason() -> None:
    from compiler.lower import compile as lower_compile
    from compiler.runtime import abi, load_module
    from compiler.runtime.gpu import gpu

    g = gpu()
    other = "sm_100" if g.cc < 100 else "sm_80"
    k = lower_compile(load_module(VADD), None, other)
    with pytest.raises(LaunchError, match=r"cannot load this Triton cubin|loading the Triton cubin"):
        g.kernel(k.cubin, k.name, "Triton", abi.slots_triton(k.params))


@pytest.mark.parametrize("backend", BACKENDS)
def test_benchmark_times_each_launch(backend: str) -> None:
    a, b, args = _vadd_args(lambda x: x, 1 << 20)
    r = benchmark(VADD, None, (1024,), args, backend, warmup=1, repeat=5, cutile=True)
    assert len(r.times) == 5 and all(t > 0 for t in r.times) and r.moved == 3 * 4 * (1 << 20)
    np.testing.assert_array_equal(args[2], a + b)


def test_cli_auto_runs_on_the_gpu_and_says_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "run", str(VADD), "--grid", "3", "--cutile-args",
         "--arg", "rand:3000:f32", "--arg", "rand:3000:f32", "--arg", "zeros:3000:f32",
         "--check", "arg2 = arg0 + arg1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "backend triton" in done.stdout and "auto: a GPU is present" in done.stdout
    assert "check arg2 = arg0 + arg1: ok" in done.stdout


def test_cli_bench_rows_for_both_gpu_backends_and_the_cpu() -> None:
    n = 1 << 16
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "bench", str(VADD), "--grid", str(n // 1024), "--cutile-args",
         "--arg", f"rand:{n}:f32", "--arg", f"rand:{n}:f32", "--arg", f"zeros:{n}:f32",
         "--backend", "triton,tileiras,cpu", "--repeat", "3", "--warmup", "1", "--rounds", "2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[1].split() == ["backend", "median", "min", "GB/s", "ratio"], done.stdout
    table = [line.split() for line in lines[2:]]
    assert [r[0] for r in table] == ["triton", "tileiras", "cpu"], done.stdout
    # The GPU rows' bandwidth: 3 arrays of n f32 in the median time, far above the interpreter's.
    gbs = {r[0]: float(r[5]) for r in table}
    assert gbs["triton"] > 10 * gbs["cpu"] and gbs["tileiras"] > 10 * gbs["cpu"], done.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_cluster_launches_equal_the_cpu_interpreter(backend: str) -> None:
    # num_cta_in_cga = 2: tileiras' cubin declares clusters of 2 (the driver applies them); the
    # Triton lowering compiles num_ctas = 2 and launches clusters of 2 itself.
    from compiler.lower.codegen import Target, launch_options

    module = load_module(matmul_cluster_text(), MATMUL_CLUSTER_NAME)
    (entry,) = module.entries()
    assert launch_options(entry, Target.parse("sm_90")).get("num_ctas") == 2
    for _label, recipe in EXAMPLE_RECIPES["matmul"]:
        _same_as_cpu(module, recipe, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_blocks_that_wait_for_each_other(backend: str) -> None:
    """Tile blocks synchronizing through memory, as tests/interp/test_waiting_blocks runs them
    on the interpreters (one block at a time), here all at once: a spin lock (an acquire
    compare-and-swap, a release exchange) around a count, and a chain of flags (acquire loads,
    release stores; 200 blocks, all resident at once on the GPUs of this project). The
    lowering writes PTX's acquire and release patterns (compiler/lower/ops_memory.ordered):
    a lost count or a sum read before its flag shows here."""
    from tests.interp.test_waiting_blocks import CHAIN, LOCKED_COUNT

    count, lock = np.zeros(1, np.int32), np.zeros(1, np.int32)
    launch(load_module(LOCKED_COUNT), grid=(300,), args=[count, lock], backend=backend)
    assert (int(count[0]), int(lock[0])) == (300, 0)
    n = 200
    out, flags = np.full(n, -1, np.int32), np.zeros(n, np.int32)
    launch(load_module(CHAIN), grid=(n,), args=[out, flags], backend=backend)
    np.testing.assert_array_equal(out, np.cumsum(np.arange(n)))
    assert flags.all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_arrays_are_used_in_place(backend: str) -> None:
    # Last in the file: JAX takes 75 % of the GPU's memory at its first use unless told not to.
    import os

    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    devices = [d for d in jax.devices() if d.platform == "gpu"] if jax.default_backend() == "gpu" else []
    if not devices:
        pytest.skip("JAX has no GPU here")
    a, b, args = _vadd_args(lambda x: jax.device_put(x, devices[0]))
    launch_cutile(VADD, grid=(5,), args=args, backend=backend)
    np.testing.assert_array_equal(np.asarray(args[2]), a + b)
