"""Checking the Triton lowering against the CPU interpreter (the oracle).

    out_cpu, out_triton = run_both(TEXT, "k", grid=1, args=[a, b])   # compared; raises on mismatch

Each backend gets its own copies of the array arguments; after both runs every array is
compared bitwise (NaNs compare equal to NaNs of any payload unless `nan_payload`), or
within `ulp` units in the last place for float arrays (one bound for all, or a bound per
argument by its index, the others bitwise).
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from compiler.interp.machine import RunOptions
from compiler.runtime import LaunchError, launch, load_module

triton = pytest.importorskip("triton", reason="the lowering tests need Triton (pip install 'triton>=3.6')")
pytest.importorskip("torch", reason="Triton's interpreter needs CPU torch")

ARCHES = ("sm_80", "sm_90", "sm_100")
# On a GPU machine, `TILEIR_GPU_BACKENDS=triton,tileiras` makes every run_both also run the
# kernel on those backends and compare with the CPU interpreter (instead of Triton's
# interpreter): the per-op suite on real hardware. `TILEIR_GPU_PREPARE=sm_90` only fills the
# tileiras cubin cache (for a GPU machine without tileiras) and runs the CPU side.
GPU_BACKENDS = [b for b in os.environ.get("TILEIR_GPU_BACKENDS", "").split(",") if b]
GPU_PREPARE = os.environ.get("TILEIR_GPU_PREPARE", "")
# Real hardware: where a GPU may legitimately differ from the interpreters' sequential order
# (conflicting atomics, racing stores, parallel scans) or accuracy, tests pass `on_gpu`.
ON_GPU = bool(GPU_BACKENDS) and not GPU_PREPARE
# Whether run_both's second executor is Triton's interpreter (not a GPU, nor a prepare run that
# only compiles): tests of what that interpreter cannot run check the refusal only then.
TRITON_INTERPRETED = not GPU_BACKENDS and not GPU_PREPARE


def _copy(args: Sequence[Any]) -> list[Any]:
    # order="K" keeps a strided or transposed array's layout (what the kernel is told).
    return [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]


def _as_uint(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.itemsize}")) if a.dtype.itemsize in (1, 2, 4, 8) else a


def ulp_distance(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|x - y| in units of the last place of the float type (via the ordered integer map)."""
    bits = x.dtype.itemsize * 8
    ix = _as_uint(x).astype(np.int64) if bits < 64 else _as_uint(x).astype(np.uint64).view(np.int64)
    iy = _as_uint(y).astype(np.int64) if bits < 64 else _as_uint(y).astype(np.uint64).view(np.int64)
    sign = np.int64(1) << np.int64(bits - 1)
    if bits < 64:
        ix = np.where(ix & sign, sign - ix, ix) if False else np.where(ix >= sign, sign - ix, ix)
        iy = np.where(iy >= sign, sign - iy, iy)
    else:
        ix = np.where(ix < 0, np.int64(-(2**63)) - ix, ix)
        iy = np.where(iy < 0, np.int64(-(2**63)) - iy, iy)
    return np.abs(ix - iy)


def assert_same(
    expected: np.ndarray,
    got: np.ndarray,
    ulp: int | np.ndarray = 0,
    what: str = "",
    nan_payload: bool = False,
    name: str = "triton",
):
    """Bitwise equal, or within `ulp` (a bound per element where it is an array of the
    arrays' shape)."""
    assert expected.shape == got.shape and expected.dtype == got.dtype, what
    if expected.dtype.kind == "f" or "float" in expected.dtype.name:
        with np.errstate(invalid="ignore"):  # signaling NaNs become quiet ones
            e64 = expected.astype(np.float64)
            g64 = got.astype(np.float64)
        both_nan = np.isnan(e64) & np.isnan(g64)
        if nan_payload:
            both_nan &= _as_uint(expected) == _as_uint(got)
        if np.all(np.asarray(ulp) == 0):
            same = (_as_uint(expected) == _as_uint(got)) | both_nan
        else:
            same = (ulp_distance(expected, got) <= ulp) | both_nan
    else:
        same = _as_uint(expected) == _as_uint(got) if expected.dtype.itemsize in (1, 2, 4, 8) else expected == got
    if not np.all(same):
        bad = np.flatnonzero(~np.asarray(same).reshape(-1))
        i = int(bad[0])
        raise AssertionError(
            f"{what}: {len(bad)} of {expected.size} elements differ (ulp bound {ulp}); first at flat index {i}: "
            f"cpu {expected.reshape(-1)[i]!r} ({_as_uint(expected).reshape(-1)[i]:#x}) vs {name} "
            f"{got.reshape(-1)[i]!r} ({_as_uint(got).reshape(-1)[i]:#x})"
        )


# What the lowering refuses (an alignment beyond what device allocations guarantee): for the
# tests of the faces that report it.
UNLOWERABLE = """cuda_tile.module @m {
  entry @k() {
    %p = alloca num_elem = 4, alignment = 512 : tile<ptr<f32>>
    return
  }
}
"""


def run_both(
    text: str,
    kernel: str | None = None,
    grid: int | Sequence[int] = 1,
    args: Sequence[Any] = (),
    *,
    ulp: int | np.ndarray | Mapping[int, int | np.ndarray] = 0,
    cutile: bool = False,
    nan_payload: bool = False,
    on_gpu: Callable[[list[Any], list[Any]], None] | None = None,
    on_tileiras: Callable[[list[Any], list[Any]], None] | None = None,
    tileiras_refuses: str | None = None,
) -> tuple[list[Any], list[Any]]:
    """Runs the kernel on the CPU interpreter and under Triton's interpreter; asserts that
    every array argument ends equal. Returns both argument lists.

    `on_gpu(cpu_args, gpu_args)` replaces the comparison on a real GPU backend, for results
    the hardware may legitimately produce differently (it asserts what must still hold).
    `on_tileiras` replaces it (and on_gpu) on the tileiras backend alone: where spec 003
    leaves a result open and NVIDIA's compiler takes another of the allowed results than our
    interpreter. `tileiras_refuses` is a pattern of the reason tileiras gives for refusing the
    kernel for the GPU's target (e.g. a type sm_90 lacks): checked where the cache is filled
    and on the GPU, instead of running it there."""
    module = load_module(text)
    cpu = _copy(args)
    # On a GPU the oracle adds f32 atomically as the GPU does (subnormals flushed: the
    # interpreter's gpu_f32_atomic_add; Triton's interpreter adds exactly, as the CPU's default).
    gpu_model = RunOptions(gpu_f32_atomic_add=True) if GPU_BACKENDS else None
    launch(module, kernel, grid, cpu, backend="cpu", cutile=cutile, options=gpu_model)
    if GPU_PREPARE:
        from compiler.runtime.tileiras import compile_tileiras

        if tileiras_refuses is None:
            try:
                compile_tileiras(module, GPU_PREPARE)
            except LaunchError as e:  # the GPU machine reports it too, from the cache index
                warnings.warn(f"tileiras refused a kernel no test expects it to refuse: {e}", stacklevel=2)
        else:
            with pytest.raises(LaunchError, match=tileiras_refuses):
                compile_tileiras(module, GPU_PREPARE)
        return cpu, _copy(cpu)
    tri: list[Any] = _copy(cpu)  # what a refused-everywhere run returns: the oracle's
    for backend in GPU_BACKENDS or ["triton-interpret"]:
        got = _copy(args)
        if backend == "tileiras" and tileiras_refuses is not None:
            with pytest.raises(LaunchError, match=tileiras_refuses):
                launch(module, kernel, grid, got, backend=backend, cutile=cutile)
            continue
        launch(module, kernel, grid, got, backend=backend, cutile=cutile)
        tri = got
        check = on_tileiras if backend == "tileiras" and on_tileiras is not None else on_gpu
        if check is not None and backend != "triton-interpret":
            check(cpu, got)
            continue
        for i, (x, y) in enumerate(zip(cpu, got, strict=True)):
            if isinstance(x, np.ndarray):
                bound = ulp.get(i, 0) if isinstance(ulp, Mapping) else ulp
                assert_same(x, y, bound, f"argument {i} on {backend}", nan_payload, backend)
    return cpu, tri


def compile_for(
    text: str, kernel: str | None = None, arches: Sequence[str] = ARCHES, isolate: bool = False, **options: Any
) -> list[Any]:
    """The kernel compiled for each architecture (a fresh cache: tests see real compiles);
    `isolate`: each in a forked child (a fuzz campaign's: a compile that never ends is killed
    at its limit instead of spinning on a thread for the rest of the campaign)."""
    from compiler.lower import compile as lower_compile

    module = load_module(text)
    return [lower_compile(module, kernel, arch, isolate=isolate, **options) for arch in arches]


def triton_version() -> tuple[int, int]:
    """(major, minor) of the Triton the lowering compiles with."""
    from compiler.lower import triton_version as version

    major, minor = str(version()).split(".")[:2]
    return int(major), int(minor)


def without_workarounds(src: Any) -> Any:
    """`src` (a KernelSource) with its workarounds of Triton 3.6's defects turned off (the
    generated module's TRITON_BEFORE_3_9 set to False: compiler/lower/ops_control), line
    numbers kept: a kernel Triton 3.6 then really fails on, for the paths a failure takes."""
    from compiler.lower.codegen import BEFORE_3_9

    line = next(ln for ln in src.text.splitlines() if ln.startswith(f"{BEFORE_3_9} = "))
    return dataclasses.replace(src, text=src.text.replace(line, f"{BEFORE_3_9} = tl.constexpr(False)"))


def triton_36_fails_without_workarounds(
    text: str, arch: str, where: str, replace: tuple[str, str] | None = None
) -> None:
    """Triton 3.6 (CI's, and the GPU machines') fails in pass `where` on `text`'s kernel when
    the workarounds are off: the defect they avoid is still there, and they are what makes
    the kernel compile. Triton 3.9 compiles it either way; versions between were not checked.
    `replace`: (old, new) in the generated source first, where a later change of the lowering
    keeps that kernel from meeting the defect at all."""
    from compiler.lower import LowerError, lower
    from compiler.lower.build import compile_source

    version = triton_version()
    src = without_workarounds(lower(load_module(text), "k", arch))
    if replace is not None:
        assert replace[0] in src.text
        src = dataclasses.replace(src, text=src.text.replace(*replace))
    if version >= (3, 9):
        assert compile_source(src, use_cache=False).cubin
    elif version <= (3, 6):
        with pytest.raises(LowerError, match=rf"Triton could not compile the lowered kernel .*; in {where}") as failed:
            compile_source(src, use_cache=False)
        kept = failed.value.kept  # the report the message names, for the user's bug report; not left in /tmp
        assert kept is not None and kept in failed.value.message
        os.remove(kept)
    else:
        pytest.skip(f"whether Triton {version} has the defect was not checked (3.6 has it, 3.9 not)")


def source_of(text: str, kernel: str | None = None, arch: str = "sm_90") -> str:
    from compiler.lower import to_triton

    return to_triton(load_module(text), kernel, arch)


# PTX's acquire and release patterns as ops_memory writes an ordered load or store: strong
# (volatile, relaxed) accesses and one fence.acq_rel at the op's scope after or before them.


def acquires(ptx: str, scope: str, bits: int) -> bool:
    """A volatile load of `bits`-bit elements (vectors of them too), then fence.acq_rel.<scope>
    after it."""
    load = re.search(rf"ld\.volatile\.global(\.v\d)?\.[bus]{bits}\b", ptx)
    return load is not None and ptx.find(f"fence.acq_rel.{scope};", load.start()) >= 0


def releases(ptx: str, scope: str, ptx_type: str) -> bool:
    """fence.acq_rel.<scope>, then a st.relaxed.<scope> of `ptx_type` after it."""
    fence = ptx.find(f"fence.acq_rel.{scope};")
    return fence >= 0 and ptx.find(f"st.relaxed.{scope}.global.{ptx_type}", fence) >= 0


# -- kernels that load their inputs and store their results per tile block ---------------------


def tile_type(shape: tuple[int, ...], elem: str) -> str:
    return f"tile<{'x'.join(map(str, shape))}x{elem}>" if shape else f"tile<{elem}>"


def _view_types(shape: tuple[int, ...], elem: str, blocks: int) -> tuple[str, str, list[int], list[int]]:
    full = [shape[0] * blocks, *shape[1:]]
    strides = [int(np.prod(full[d + 1 :])) for d in range(len(full))]
    tv = f"tensor_view<{'x'.join(map(str, full))}x{elem}, strides=[{','.join(map(str, strides))}]>"
    pv = f"partition_view<tile=({'x'.join(map(str, shape))}), {tv}>"
    return tv, pv, full, strides


def kernel_text(
    ins: list[tuple[str, str]],
    outs: list[tuple[str, str]],
    body: list[str],
    shape: tuple[int, ...],
    blocks: int = 1,
    out_shapes: dict[str, tuple[int, ...]] | None = None,
    in_shapes: dict[str, tuple[int, ...]] | None = None,
    scalars: list[tuple[str, str]] = (),  # type: ignore[assignment]
) -> str:
    """A kernel `@k` whose parameters are the 0-d `scalars` (`%<name>: tile<elem>`), one
    pointer per input, then one per output (in order). Tile block `bx` loads tile `bx` (shape
    `shape`, along dimension 0) of each input as `%<name>`, runs `body`, and stores
    `%<name>_r` into tile `bx` of each output (a 0-d result as a 1-element tile)."""
    out_shapes = out_shapes or {}
    in_shapes = in_shapes or {}
    params = [f"%{name}: tile<{elem}>" for name, elem in scalars]
    lines = ["%tok = make_token : token", "%zero = constant <i32: 0> : tile<i32>"]
    lines.append("%bx, %by, %bz = get_tile_block_id : tile<i32>")
    loads, stores = [], []
    for kind, group in (("in", ins), ("out", outs)):
        for name, elem in group:
            sh = (out_shapes if kind == "out" else in_shapes).get(name, shape)
            value = f"%{name}_r"
            if sh == ():  # stored through a reshape to one element
                sh = (1,)
                stores.append(f"%{name}_r1 = reshape %{name}_r : tile<{elem}> -> tile<1x{elem}>")
                value = f"%{name}_r1"
            tv, pv, full, strides = _view_types(sh, elem, blocks)
            params.append(f"%{name}_ptr: tile<ptr<{elem}>>")
            lines.append(
                f"%{name}_tv = make_tensor_view %{name}_ptr, shape = [{', '.join(map(str, full))}], "
                f"strides = [{', '.join(map(str, strides))}] : {tv}"
            )
            lines.append(f"%{name}_pv = make_partition_view %{name}_tv : {pv}")
            idx = ", ".join(["%bx"] + ["%zero"] * (len(sh) - 1))
            itypes = ", ".join(["tile<i32>"] * len(sh))
            if kind == "in":
                loads.append(
                    f"%{name}, %{name}_t = load_view_tko weak %{name}_pv[{idx}] token = %tok : {pv}, {itypes} -> "
                    f"{tile_type(sh, elem)}, token"
                )
            else:
                stores.append(
                    f"%{name}_st = store_view_tko weak {value}, %{name}_pv[{idx}] token = %tok : "
                    f"{tile_type(sh, elem)}, {pv}, {itypes} -> token"
                )
    text = "\n".join("    " + line for line in lines + loads + body + stores)
    return f"cuda_tile.module @m {{\n  entry @k({', '.join(params)}) {{\n{text}\n    return\n  }}\n}}\n"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    if GPU_BACKENDS or GPU_PREPARE:
        return  # the cache filled for (or by) the GPU run is the one to use
    monkeypatch.setenv("TILEIR_CACHE_DIR", os.fspath(tmp_path_factory.getbasetemp() / "tileir-cache"))
