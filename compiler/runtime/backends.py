"""Where a kernel can run, and which backend `auto` picks: `triton` where a usable NVIDIA GPU
is present, else `cpu`. Cheap: nothing here imports a GPU library."""

from __future__ import annotations

import os
import shutil
import subprocess

from ..modules import LaunchError, visible_gpu

# Where a kernel can run: `auto` (see `resolve_backend`), the CPU interpreter, the Triton lowering
# run by Triton's interpreter on the CPU (compiler.runtime.interpret), and, on an NVIDIA GPU, the
# Triton lowering compiled by Triton (`triton`) or the bytecode compiled by NVIDIA's `tileiras`.
BACKENDS = ("auto", "cpu", "triton-interpret", "triton", "tileiras")
GPU_BACKENDS = ("triton", "tileiras")


def gpu_present() -> bool:
    """Whether an NVIDIA GPU looks usable, checked cheaply (no GPU library is imported): not
    hidden by TILEIR_NO_GPU=1 or CUDA_VISIBLE_DEVICES, and a device node /dev/nvidia0 or an
    `nvidia-smi -L` that lists a GPU."""
    if os.environ.get("TILEIR_NO_GPU") or visible_gpu() is None:
        return False
    if os.path.exists("/dev/nvidia0"):
        return True
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        done = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and "GPU" in done.stdout


def gpu_launcher_missing() -> str | None:
    """Why the GPU launcher cannot run in this Python (cuda.core not installed), or None."""
    from importlib.util import find_spec

    try:
        if find_spec("cuda") is None or find_spec("cuda.core") is None:
            return "cuda.core is not installed (pip install cuda-core cuda-bindings)"
    except (ImportError, ValueError):
        return "cuda.core is not installed (pip install cuda-core cuda-bindings)"
    return None


def resolve_backend(backend: str) -> tuple[str, str]:
    """(the backend to run on, a note saying why when `backend` is "auto", else "").

    `auto` is `triton` where a usable NVIDIA GPU is present (a GPU, and cuda.core to launch
    through), else `cpu`. An unknown backend, or a GPU backend that cannot run here, is a
    LaunchError (kind "backend") of one line."""
    if backend not in BACKENDS:
        raise LaunchError(f"unknown backend {backend!r}; available: {', '.join(BACKENDS)}", kind="backend")
    if backend == "auto":
        if not gpu_present():
            return "cpu", "auto: no GPU, ran on the CPU interpreter"
        missing = gpu_launcher_missing()
        if missing:
            return "cpu", f"auto: a GPU is present but {missing}; ran on the CPU interpreter"
        return "triton", "auto: a GPU is present, ran on triton"
    if backend in GPU_BACKENDS:
        if not gpu_present():
            raise LaunchError(
                f"the {backend} backend runs on an NVIDIA GPU and none was found (no /dev/nvidia0, no GPU "
                "listed by nvidia-smi); use backend cpu or triton-interpret",
                kind="backend",
            )
        missing = gpu_launcher_missing()
        if missing:
            raise LaunchError(f"the {backend} backend launches through cuda.core: {missing}", kind="backend")
    return backend, ""
