"""Which GPU architecture to compile for: the local GPU's, and whether Triton can target one.

Every face picks its default target here (`tileir compile`, the notebook's `--show ptx`), and
the command line and the language server ask `arch_problem` before compiling, so that a name
no ptxas knows (sm_95) is a usage error rather than a failed compile. Nothing here imports a
GPU library on a machine without an NVIDIA device.
"""

from __future__ import annotations

import os

from ..modules import visible_gpu
from .codegen import DEFAULT_ARCH, KNOWN_ARCHES


def default_arch() -> str:
    """The local GPU's architecture, else DEFAULT_ARCH (sm_90)."""
    return local_arch() or DEFAULT_ARCH


# local_arch's answers in this process, by (visible GPU, nvidia-smi's path): a GPU's compute
# capability does not change under a running process, and `nvidia-smi` takes tens of
# milliseconds (more where no persistence daemon keeps the driver loaded), paid by every
# compile without --arch; the compile server asks at its warm-up, so that its workers inherit
# the answer. Only found architectures are kept: a failed or timed-out query is asked again.
_FOUND: dict[tuple[str, str | None], str] = {}


def local_arch() -> str | None:
    """`sm_XY` of the first visible GPU, or None: `nvidia-smi`'s compute capability, else (a
    device node without nvidia-smi, as in some containers) cuda.core or torch when installed.
    Never fails and never imports a GPU library on a machine without an NVIDIA device."""
    import shutil

    first = visible_gpu()
    if first is None:
        return None  # CUDA_VISIBLE_DEVICES hides every GPU
    smi = shutil.which("nvidia-smi")
    key = (first, smi)
    if key not in _FOUND:
        found = _query(first, smi)
        if found is None:
            return None
        _FOUND[key] = found
    return _FOUND[key]


def _query(first: str, smi: str | None) -> str | None:
    """local_arch's answer found afresh (`nvidia-smi` at `smi`, else the device's libraries)."""
    import subprocess

    if smi is not None:
        command = [smi, "--query-gpu=compute_cap", "--format=csv,noheader"]
        if first:
            command.append(f"--id={first}")  # an index or a GPU-UUID, as CUDA reads it
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        for line in done.stdout.splitlines() if done.returncode == 0 else ():
            major, dot, minor = line.strip().partition(".")
            if dot and major.isdigit() and minor.isdigit():
                return _arch_of(int(major), int(minor))
        return None
    if not os.path.exists("/dev/nvidia0"):
        return None
    return _arch_from_libraries()


def _arch_of(major: int, minor: int) -> str | None:
    cc = major * 10 + minor
    return f"sm_{cc}" if cc >= 80 else None  # older GPUs: Triton cannot target them


def _arch_from_libraries() -> str | None:
    import importlib.util

    try:
        if importlib.util.find_spec("cuda.core") is not None:
            try:
                from cuda.core import Device  # type: ignore[import-not-found]
            except ImportError:
                from cuda.core.experimental import Device  # type: ignore[import-not-found]
            major, minor = Device(0).compute_capability
            return _arch_of(int(major), int(minor))
    except Exception:  # noqa: BLE001 - no GPU, no driver, an API that moved: fall back
        pass
    try:
        if importlib.util.find_spec("torch") is not None:
            import torch

            if torch.cuda.is_available():
                major, minor = torch.cuda.get_device_capability(0)
                return _arch_of(int(major), int(minor))
    except Exception:  # noqa: BLE001 - as above
        pass
    return None


def arch_problem(cc: int) -> str | None:
    """Why Triton cannot compile for `sm_<cc>` (its ptxas does not know it), or None. Only an
    architecture outside KNOWN_ARCHES costs a ptxas run."""
    if cc in KNOWN_ARCHES or not _ptxas_refuses(cc):
        return None
    from .build import triton_version

    known = ", ".join(f"sm_{k}" for k in KNOWN_ARCHES)
    return f"Triton {triton_version()}'s ptxas cannot compile for sm_{cc}; use one of {known}"


def _ptxas_refuses(cc: int) -> bool:
    """Whether the ptxas Triton would run for `cc` says it does not know the architecture
    (False when that cannot be found out: the compile will tell)."""
    import subprocess

    try:
        from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability

        command = [get_ptxas(cc).path, f"--gpu-name={sm_arch_from_capability(cc)}", os.devnull]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except Exception:  # noqa: BLE001 - Triton's internals moved, no ptxas: let the compile decide
        return False
    return "is not defined for option 'gpu-name'" in done.stderr
