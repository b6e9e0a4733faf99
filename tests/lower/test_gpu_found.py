"""Kernels an NVIDIA GPU computed differently from the CPU interpreter (tests/lower/gpu_found:
each kernel, cut down where it could be, with the arguments it failed on and its grid). On the
CPU they run on both interpreters; with TILEIR_GPU_BACKENDS=triton they run on the GPU, which is
what they are for: the fixes for them (README, Random kernels on a GPU) were made after the
GPU time of the session that found them was spent."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from . import harness
from .harness import run_both

FOUND = sorted(Path(__file__).with_name("gpu_found").glob("*.tileir"))


def load(path: Path) -> tuple[str, tuple[int, ...], list]:
    """The kernel's text, grid and arguments."""
    z = np.load(path.with_suffix(".npz"), allow_pickle=False)
    args: list = []
    for i, name in enumerate(z["dtypes"].tolist()):
        a = z[f"a{i}"]
        if name == "int":
            args.append(int(a))
        else:
            dt = np.dtype(getattr(ml_dtypes, name, None) or name)
            args.append(a.view(dt) if a.dtype != dt else a)
    return path.read_text(), tuple(int(g) for g in z["grid"]), args


def test_every_kernel_has_its_arguments() -> None:
    assert len(FOUND) >= 11
    for path in FOUND:
        assert path.with_suffix(".npz").exists(), path


@pytest.mark.parametrize("path", FOUND, ids=[p.stem for p in FOUND])
def test_kernels_a_gpu_got_wrong(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (on a GPU run: the triton backend; tileiras refuses some of their types before sm_100)
    monkeypatch.setattr(harness, "GPU_BACKENDS", [b for b in harness.GPU_BACKENDS if b != "tileiras"])
    if harness.GPU_PREPARE:
        pytest.skip("these kernels need no tileiras cubins (they run on the triton backend only)")
    text, grid, args = load(path)
    run_both(text, "k", grid, args)
