"""The GPU benchmark's kernels (benchmarks/kernels/gpu_*.tileir) and script, checked without a GPU:
each file parses and verifies, runs on the CPU interpreter at small sizes and matches NumPy, is
what cuTile exports from benchmarks/kernels/cutile_kernels.py today, and compiles with our Triton
lowering for sm_90; benchmarks/gpu.py without a GPU says why and exits 0."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from compiler.runtime import launch_cutile, load_module

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "benchmarks" / "kernels"
SCRIPT = REPO / "benchmarks" / "gpu.py"


def _export_module():
    spec = importlib.util.spec_from_file_location("export_gpu_kernels", KERNELS / "export_gpu_kernels.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("export_gpu_kernels", module)
    spec.loader.exec_module(module)
    return module


EG = _export_module()
NAMES = [s.name for s in EG.SPECS]


def test_every_spec_has_its_file_and_no_file_is_orphaned() -> None:
    files = {p.stem.removeprefix("gpu_") for p in KERNELS.glob("gpu_*.tileir")}
    assert files == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_file_parses_verifies_and_says_where_it_came_from(name: str) -> None:
    spec = EG.find(name)
    text = spec.path.read_text(encoding="utf-8")
    module = load_module(str(spec.path))  # raises LaunchError with the diagnostics on any error
    assert len(module.entries()) == 1
    head = "".join(line for line in text.splitlines(keepends=True) if line.startswith("//"))
    assert f"@ct.kernel {spec.function}," in head
    assert f"Launch grid: {spec.grid}." in head
    for a in spec.args:
        if isinstance(a, EG.Const):
            assert f"{a.name}={a.value}" in head


# --------------------------------------------------------------------------------------------
# The CPU interpreter against NumPy (sizes: multiples of 16, as the kernels assume)

RNG = np.random.default_rng(14)
BF16 = ml_dtypes.bfloat16


def _run(name: str, grid, args) -> None:
    launch_cutile(str(EG.find(name).path), None, grid, args, backend="cpu")


def _close(out: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> None:
    out = out.astype(np.float32)
    assert not np.isnan(out).any(), "the kernel left elements unwritten (NaN)"
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)


@pytest.mark.parametrize(
    "name, m, n, k",
    [
        ("matmul_f16", 144, 272, 80),  # partial tiles along M, N and K
        ("matmul_f16", 1040, 272, 32),  # 9 tile rows: a second, partial group of the grouped order
        ("matmul_bf16", 256, 512, 128),
        ("matmul_f16_t128", 144, 272, 80),
        ("matmul_bf16_t128", 256, 384, 128),
        ("matmul_skinny_f16", 64, 192, 384),
        ("matmul_skinny_bf16", 64, 192, 384),
    ],
)
def test_matmul(name: str, m: int, n: int, k: int) -> None:
    spec = EG.find(name)
    dtype = BF16 if "bf16" in name else np.float16
    a = RNG.uniform(-1, 1, (m, k)).astype(dtype)
    b = RNG.uniform(-1, 1, (k, n)).astype(dtype)
    c = np.full((m, n), np.nan, dtype=dtype)
    _run(name, (math.ceil(m / spec.const("TM")) * math.ceil(n / spec.const("TN")),), [a, b, c])
    ref = a.astype(np.float32) @ b.astype(np.float32)
    eps = 2.0**-8 if dtype is BF16 else 2.0**-11  # half an ulp of the output type, relative
    _close(c, ref, rtol=2 * eps, atol=1e-4)


@pytest.mark.parametrize("cols", [4096, 1008])  # the tile's width, and fewer (padded with -inf)
def test_softmax(cols: int) -> None:
    x = RNG.standard_normal((16, cols)).astype(np.float16)
    y = np.full_like(x, np.nan)
    _run("softmax", (16 // EG.find("softmax").const("TM"),), [x, y])
    xf = x.astype(np.float32)
    e = np.exp(xf - xf.max(axis=1, keepdims=True))
    _close(y, e / e.sum(axis=1, keepdims=True), rtol=2e-3, atol=1e-6)


@pytest.mark.parametrize("cols", [4096, 1008])  # padded columns must not enter the variance
def test_layer_norm(cols: int) -> None:
    x = (RNG.standard_normal((16, cols)) * 3 + 1).astype(np.float16)
    w = RNG.standard_normal(cols).astype(np.float16)
    b = RNG.standard_normal(cols).astype(np.float16)
    y = np.full_like(x, np.nan)
    eps = 1e-5
    _run("layer_norm", (16 // EG.find("layer_norm").const("TM"),), [x, w, b, y, eps])
    xf = x.astype(np.float32)
    mean = xf.mean(axis=1, keepdims=True)
    var = ((xf - mean) ** 2).mean(axis=1, keepdims=True)
    ref = (xf - mean) / np.sqrt(var + eps) * w.astype(np.float32) + b.astype(np.float32)
    _close(y, ref, rtol=2e-3, atol=2e-3)


def test_vector_add() -> None:
    n = 3008  # not a multiple of the 1024-element tile
    a = RNG.standard_normal(n).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    c = np.full_like(a, np.nan)
    _run("vector_add", (math.ceil(n / EG.find("vector_add").const("T")),), [a, b, c])
    np.testing.assert_array_equal(c, a + b)


def test_silu() -> None:
    """On the CPU interpreter against NumPy, then under Triton's interpreter, whose generated
    code computes the 128x128 tiles in slices (compiler/lower/stripmine.py), partial tiles
    along both dimensions included, against the CPU's result (exp within a few f32 ulps: the
    f16 results at most one f16 ulp apart)."""
    spec = EG.find("silu")
    m, n = 144, 272
    x = (RNG.standard_normal((m, n)) * 4).astype(np.float16)
    y = np.full_like(x, np.nan)
    grid = (math.ceil(m / spec.const("TM")), math.ceil(n / spec.const("TN")))
    _run("silu", grid, [x, y])
    xf = x.astype(np.float32)
    _close(y, xf / (1 + np.exp(-xf)), rtol=2e-3, atol=1e-3)
    sliced = np.full_like(x, np.nan)
    launch_cutile(str(spec.path), None, grid, [x, sliced], backend="triton-interpret")
    apart = np.abs(sliced.view(np.int16).astype(np.int32) - y.view(np.int16).astype(np.int32))
    assert apart.max() <= 1, apart.max()


def test_attention() -> None:
    spec = EG.find("attention")
    batch, heads, lq, lk, d = 2, spec.const("H"), 128, 256, spec.const("D")
    q = RNG.standard_normal((batch, heads, lq, d)).astype(np.float16)
    k = RNG.standard_normal((batch, heads, lk, d)).astype(np.float16)
    v = RNG.standard_normal((batch, heads, lk, d)).astype(np.float16)
    o = np.full_like(q, np.nan)
    scale = 1 / math.sqrt(d)
    _run("attention", (math.ceil(lq / spec.const("TM")), batch * heads), [q, k, v, o, scale])
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float32), k.astype(np.float32)) * scale
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    ref = np.einsum("bhqk,bhkd->bhqd", p, v.astype(np.float32))
    # P is rounded to f16 before P @ V, as in flash attention.
    _close(o, ref, rtol=1e-2, atol=2e-3)


# --------------------------------------------------------------------------------------------
# The export and the compile


def test_variants_take_their_rows_arguments() -> None:
    """benchmarks/gpu.py launches a row's variants with the row's arguments: same function,
    same non-constant parameters, and the row exists."""
    for v in (s for s in EG.SPECS if s.variant_of):
        row = EG.find(v.variant_of)
        assert v.function == row.function and not row.variant_of

        def params(spec):
            return [a for a in spec.args if not isinstance(a, EG.Const)]

        assert params(v) == params(row)


def test_committed_files_are_what_cutile_exports() -> None:
    pytest.importorskip("cuda.tile", reason="re-exporting needs cuTile Python (pip install cuda-tile)")
    for spec in EG.SPECS:
        assert EG.export(spec) == spec.path.read_text(encoding="utf-8"), (
            f"{spec.path.name} is stale: run python benchmarks/kernels/export_gpu_kernels.py"
        )


def test_each_kernel_compiles_with_triton_for_sm90(tmp_path, monkeypatch) -> None:
    pytest.importorskip("triton", reason="the lowering compiles through Triton (pip install -e '.[bench]')")
    from compiler.lower import compile

    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path))
    for name in NAMES:
        k = compile(load_module(str(EG.find(name).path)), None, "sm_90", use_cache=False)
        assert k.cubin[:4] == b"\x7fELF", name
        assert k.registers > 0, name


# --------------------------------------------------------------------------------------------
# benchmarks/gpu.py without a GPU


def test_script_without_gpu_says_why_and_exits_0(tmp_path) -> None:
    out = tmp_path / "gpu.json"
    env = {**os.environ, "TILEIR_NO_GPU": "1"}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and "TILEIR_NO_GPU" in lines[0] and "nothing to measure" in lines[0], proc.stdout
    assert "TILEIR_NO_GPU" in json.loads(out.read_text())["skipped"]


def test_script_refuses_an_unknown_kernel() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "matmul_f32"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "TILEIR_NO_GPU": "1"},
        timeout=120,
    )
    assert proc.returncode == 2
    assert "unknown matmul_f32" in proc.stderr and "Traceback" not in proc.stderr


def test_a_backend_is_judged_at_its_fastest_variant_and_failures_stay_reported() -> None:
    spec = importlib.util.spec_from_file_location("gpu_bench", REPO / "benchmarks" / "gpu.py")
    gpu = importlib.util.module_from_spec(spec)
    sys.modules["gpu_bench"] = gpu  # dataclasses look their module up
    spec.loader.exec_module(gpu)
    best = None
    for cell in (gpu.Cell(0.3, tiles="a"), gpu.Cell(0.2, tiles="b"), gpu.Cell(0.25, tiles="c")):
        best = cell if gpu._better(cell, best) else best
    assert best.tiles == "b"
    failed = gpu.Cell(error="FAILED: x", tiles="d")
    assert gpu._better(failed, best)
    assert not gpu._better(gpu.Cell(0.1, tiles="e"), failed)
