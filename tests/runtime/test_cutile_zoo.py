"""cuTile Python kernels written as a cuTile user writes them (tests/runtime/cutile_zoo.py), run
through `launch_cutile`: exported by cuTile (no GPU needed), then run on the CPU interpreter and
under Triton's interpreter against NumPy; compiled by our lowering for sm_80, sm_90 and sm_100
without spills; and our bytecode of each compiled by NVIDIA's tileiras. On a GPU (marker
`gpu`) both GPU backends run them too, with NumPy arrays and with torch tensors."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")

from compiler.runtime import LaunchError, find_tileiras, launch_cutile, load_module  # noqa: E402
from compiler.runtime.cutile import export_cutile  # noqa: E402
from tests.bytecode.util import run_tileiras  # noqa: E402

from .cutile_zoo import CASES, UNSIGNED_FLOORDIV, Case  # noqa: E402

INTERPRETED = [c for c in CASES if c.interpretable]
ARCHES = ("sm_80", "sm_90", "sm_100")


def _exported(case: Case, contiguous: bool = False):
    """The module cuTile exports for the case's arguments (the launch's own export; with
    `contiguous`, for C-contiguous copies of its arrays, as test_on_the_gpu's torch tensors
    are: an export is specialised for the arrays' unit strides)."""
    _, args, _ = case.make(np.random.default_rng(0))
    if contiguous:
        args = [np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in args]
    try:
        return load_module(export_cutile(case.kernel, args)[0])
    except LaunchError as e:
        if "could not export" in e.message:
            pytest.skip(f"cuTile cannot export here: {e.message}")
        raise


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_on_the_cpu_interpreter(case: Case) -> None:
    assert case.run("cpu").backend == "cpu"


@pytest.mark.parametrize("case", INTERPRETED, ids=repr)
def test_under_tritons_interpreter(case: Case) -> None:
    pytest.importorskip("triton", reason="triton is not installed")
    pytest.importorskip("torch", reason="Triton's interpreter needs torch")
    assert case.run("triton-interpret").backend == "triton-interpret"


def test_what_tritons_interpreter_cannot_run_is_refused_by_name() -> None:
    """tanh, pow and atan2 go through libdevice on the GPU, which Triton's interpreter has not:
    refused in one line that names them and says what to do instead."""
    pytest.importorskip("triton", reason="triton is not installed")
    pytest.importorskip("torch", reason="Triton's interpreter needs torch")
    (case,) = [c for c in CASES if not c.interpretable]
    with pytest.raises(LaunchError) as e:
        case.run("triton-interpret")
    message = e.value.message
    assert "tanh" in message and "atan2" in message and "use the cpu backend" in message and "\n" not in message


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_compiles_for_every_target_without_spills(case: Case) -> None:
    pytest.importorskip("triton", reason="triton is not installed")
    from compiler.lower import compile as lower_compile

    module = _exported(case)
    for arch in ARCHES:
        k = lower_compile(module, None, arch)
        assert k.cubin and k.spills == 0, (arch, k.spills)


@pytest.mark.skipif(find_tileiras() is None, reason="NVIDIA's tileiras (pip nvidia-cuda-tileiras) is not installed")
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_tileiras_compiles_our_bytecode_of_it(case: Case, tmp_path: Path) -> None:
    """What `run --backend tileiras` gives tileiras: our writer's bytecode of the module cuTile
    exported (read and written again), for every target (or refused as the case lists)."""
    from compiler.bytecode import write_bytecode

    path = tmp_path / "kernel.tileirbc"
    path.write_bytes(write_bytecode(_exported(case)))
    for arch in ARCHES:
        done = run_tileiras(find_tileiras(), path, arch, tmp_path / f"{arch}.cubin")
        refusal = case.tileiras_refuses.get(arch)
        if refusal is None:
            assert done.returncode == 0, (arch, done.stderr[-2000:])
        else:
            assert done.returncode != 0 and refusal in done.stderr, (arch, done.stderr[-2000:])


def test_cutiles_invalid_unsigned_floor_division_is_reported_at_its_line() -> None:
    """cuTile Python 1.7 exports `x // y` of unsigned integers as `divi unsigned
    rounding<negative_inf>`, which NVIDIA's verifier refuses. The refusal must name the
    kernel's Python line (from the bytecode's debug info) and say whose bug it is, and
    NVIDIA's tileiras must refuse the same bytecode (our verifier is not stricter than it).
    Once a cuTile exports it validly, the kernel must compute NumPy's result."""
    case = UNSIGNED_FLOORDIV
    try:
        case.run("cpu")
    except LaunchError as e:
        source = Path(case.kernel._pyfunc.__code__.co_filename).read_text().splitlines()
        line = next(i for i, text in enumerate(source, 1) if ") // ct.load(b" in text)
        assert re.search(rf"cutile_zoo\.py:{line}:\d+: 'cuda_tile\.divi' op rounding mode", e.message), e
        assert "a bug of cuTile's" in e.message and "\n" not in e.message
        tileiras = find_tileiras()
        if tileiras is None:
            return
        _, args, _ = case.make(np.random.default_rng(0))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "cutile.tileirbc"
            path.write_bytes(export_cutile(case.kernel, args)[0])
            done = run_tileiras(tileiras, path, "sm_90", path.with_suffix(".cubin"))
        assert done.returncode != 0 and "not allowed with 'unsigned' flag" in done.stderr, done.stderr


def test_a_verifier_error_in_bytecode_names_the_ops_source_line(tmp_path: Path) -> None:
    """`tileir check` on bytecode (no text to point into) adds the op's debug-info location
    as a note in the compiler format, which editors and terminals link."""
    _, args, _ = UNSIGNED_FLOORDIV.make(np.random.default_rng(0))
    try:
        data = export_cutile(UNSIGNED_FLOORDIV.kernel, args)[0]
    except LaunchError as e:
        pytest.skip(f"cuTile cannot export here: {e.message}")
    path = tmp_path / "k.tileirbc"
    path.write_bytes(data)
    done = subprocess.run([sys.executable, "-m", "compiler.cli", "check", str(path)], capture_output=True, text=True)
    if done.returncode == 0:  # a cuTile that exports it validly: nothing to report
        return
    lines = done.stderr.splitlines()
    assert (
        lines[0]
        == f"{path}: error: 'cuda_tile.divi' op rounding mode 'negative_inf' is not allowed with 'unsigned' flag"
    )
    assert re.fullmatch(r".*cutile_zoo\.py:\d+:\d+: note: the op's source location \(from the module's debug info\)",
                        lines[1]), lines  # fmt: skip


# -- on a GPU -------------------------------------------------------------------------


def gpu_prepare_modules():
    """(label, module) of each kernel the GPU tests below run (.ci/gpu-prepare compiles them
    with tileiras here, where tileiras is installed, for the GPU machine's cache)."""
    return [(f"cuTile zoo: {c.name}{' (contiguous)' * k}", _exported(c, bool(k))) for c in CASES for k in (0, 1)]


@pytest.mark.gpu
@pytest.mark.parametrize("backend", ["triton", "tileiras"])
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_on_the_gpu(case: Case, backend: str) -> None:
    """NumPy arrays (copied over and back), then torch GPU tensors (used in place); where
    tileiras refuses the kernel for this GPU (the case lists it), the launch says so."""
    if backend == "tileiras":
        from compiler.lower.targets import local_arch

        refusal = case.tileiras_refuses.get(local_arch() or "")
        if refusal is not None:
            with pytest.raises(LaunchError, match=re.escape(refusal)):
                case.run(backend)
            return
    assert case.run(backend).backend == backend
    torch = pytest.importorskip("torch")

    def on_the_gpu(a: np.ndarray):
        try:
            return torch.from_numpy(np.ascontiguousarray(a)).to("cuda")
        except TypeError:  # a dtype torch has not (ml_dtypes' fp8 and e8m0): NumPy's, copied over
            return a

    case.run(backend, host=on_the_gpu)


@pytest.mark.parametrize("backend", ["cpu", "triton-interpret"])
def test_a_failed_ct_assert_names_the_kernels_line(backend: str) -> None:
    from compiler.interp import InterpError

    from .cutile_zoo import positive_sum

    if backend == "triton-interpret":
        pytest.importorskip("triton", reason="triton is not installed")
        pytest.importorskip("torch", reason="Triton's interpreter needs torch")
    launch_cutile(positive_sum, grid=1, args=[np.ones(16, np.float32), 16], backend=backend)
    with pytest.raises(InterpError) as e:
        launch_cutile(positive_sum, grid=1, args=[-np.ones(16, np.float32), 16], backend=backend)
    line = positive_sum._pyfunc.__code__.co_firstlineno + 2  # (the first is the decorator's)
    assert re.match(rf".*cutile_zoo\.py:{line}:\d+: error: assert: assertion failed: \"the sum must be positive\"",
                    str(e.value)), str(e.value)  # fmt: skip
