"""Launching kernels: `launch(module_or_path, kernel, grid, args, backend="cpu")`.

    from compiler.runtime import launch, launch_cutile
    launch("examples/vector_add.tileir", "vector_add", grid=(4,), args=[a, n, 1, b, n, 1, c, n, 1])
    launch_cutile("examples/vector_add.tileir", grid=(4,), args=[a, b, c])   # cuTile's convention

The module is a `Module`, a path to a `.tileir` text file or to a `.tileirbc` bytecode file,
or IR text (a string holding a newline or a `{`). Bytecode is read by `compiler.bytecode`.

The `Module` object is the loaded module: its globals are initialized once (spec 003, 6.2.1)
and keep what each launch of that object writes for its next launches, on each backend
separately; a path, text or bytes is loaded afresh at every call, so its globals start from
their initial values each time.

Arguments follow the kernel's parameters, one each:

- a `tile<ptr<T>>` parameter takes a NumPy array whose dtype holds T (`float32` for f32,
  `ml_dtypes.bfloat16` for bf16, `int32` or `uint32` for i32, `bool` or `uint8` for i1, ...).
  It is placed in the simulated memory without a copy when it is C-contiguous and writeable,
  so the kernel updates it in place; any other array is copied to a contiguous one and copied
  back after the run (a read-only array is placed read-only: a store to it is an error).
  `StridedArray(a)` places a strided view as it lies in memory (the pointer is the address
  of its first element); `ArrayTable(...)` is a table of array descriptors (cuTile's lists).
  A Python int is taken as a raw address.
- a scalar parameter takes a Python or NumPy scalar (or a 0-d array), converted to the
  parameter's type: integers must fit the width (either signed or unsigned reading of the
  signless type), floats must be finite in the type when they were finite to begin with.

`LaunchError` says why a launch cannot start (module errors, unknown kernel, arguments that
do not fit); errors while the kernel runs are `InterpError`, already formatted as
`file:line:col: error: <op>: message (tile block (x, y, z), address 0x...)`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..interp import InterpError, Machine, RunOptions
from ..interp.memory import unpack_nibbles_into
from ..ir.core import Module, Operation
from ..modules import (  # noqa: F401 - loading modules and finding kernels: part of this API
    BYTECODE_MAGIC,
    INSTALL_DISASSEMBLER,
    LaunchError,
    disassemble,
    find_kernel,
    find_nvidia_tool,
    find_tileiras,
    find_tileirdisasm,
    kernel_name,
    load_module,
    signature,
    visible_gpu,
)
from .backends import BACKENDS, GPU_BACKENDS, gpu_launcher_missing, gpu_present, resolve_backend
from .binding import (
    ArgumentChecks,
    ArrayTable,
    MachineBinder,
    StridedArray,
    argument_list,
    check_count,
    grid_dims,
)
from .cutile import cutile_args
from .devarray import DevicePointer, holds_device_array


@dataclass(slots=True)
class LaunchResult:
    """What a launch did: the kernel's name, the grid (x, y, z), the backend and the wall
    time of the run in seconds (placing arguments and verifying excluded). `note` says why
    `auto` chose the backend it did ("" when the backend was named)."""

    kernel: str
    grid: tuple[int, int, int]
    backend: str
    time: float = 0.0
    machine: Machine | None = None
    addresses: list[int | None] = field(default_factory=list)
    note: str = ""
    times: list[float] = field(default_factory=list)  # each timed launch (GPU backends)
    moved: int = 0  # bytes of the array arguments (GPU backends)

    @property
    def num_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


def launch(
    module_or_path: Module | str | os.PathLike | bytes,
    kernel: str | None = None,
    grid: int | Sequence[int] = 1,
    args: Sequence[Any] = (),
    backend: str = "auto",
    *,
    cutile: bool = False,
    options: RunOptions | None = None,
) -> LaunchResult:
    """Run `kernel` (None: the module's only one) over `grid` ((x[, y[, z]]) tile blocks)
    with `args`, one per kernel parameter; arrays passed for pointers are updated in place.
    With `cutile=True`, `args` are the Python arguments of a cuTile kernel and are expanded
    by cuTile's calling convention first (see `compiler.runtime.cutile`).

    `backend`: one of BACKENDS; `auto` (the default) picks one (see `resolve_backend`), and
    the result's `backend` and `note` say which and why.

    Globals live as long as the loaded module: launches of one `Module` object on one backend
    see what the launches before them wrote to its globals; a path, text or bytes is loaded
    afresh at each call, so its globals start from their initial values.

    Raises `LaunchError` when the launch cannot start and `InterpError` for what goes wrong
    while the kernel runs.

    `options` (RunOptions) bounds a runaway kernel: on the cpu backend, `max_steps` loop
    iterations (default `compiler.interp.DEFAULT_MAX_STEPS`) and `timeout` seconds (default none); on
    triton-interpret only `timeout`, enforced with a SIGALRM timer, so only where `launch`
    is called from the main thread on a POSIX system. The GPU backends take neither."""
    backend, note = resolve_backend(backend)
    module = load_module(module_or_path)
    entry = find_kernel(module, kernel)
    dims = grid_dims(grid)
    args = argument_list(args)
    _check_options(options)
    given = len(args)
    if cutile:
        args = cutile_args(*args)
    params = entry.regions[0].blocks[0].arguments
    check_count(entry, args, given, cutile)
    if backend in GPU_BACKENDS:
        return _launch_gpu(module, entry, dims, args, backend, note)
    copy_back = _nothing
    if holds_device_array(args):  # GPU arrays given to a CPU backend: copied, and back after
        from .gpu import host_copies

        args, copy_back = host_copies(args)
    if backend == "triton-interpret":
        from .interpret import run_launch  # imports the lowering: only for this backend

        elapsed = run_launch(module, entry, dims, args, options)
        copy_back()
        return LaunchResult(kernel_name(entry), dims, backend, elapsed, note=note)
    machine = Machine(module, options=options)
    binder = MachineBinder(machine)
    values: list[Any] = []
    addresses: list[int | None] = []
    for i, (param, arg) in enumerate(zip(params, args, strict=True)):
        value, address = binder.bind(i, param, arg)
        values.append(value)
        addresses.append(address)
    start = time.perf_counter()
    try:
        machine.run(entry, dims, values)
    finally:
        for original, placed in binder.write_back:
            original[...] = placed
        for original, packed in binder.unpack_back:
            unpack_nibbles_into(original, packed)
    elapsed = time.perf_counter() - start
    copy_back()
    return LaunchResult(kernel_name(entry), dims, backend, elapsed, machine, addresses, note)


def _launch_gpu(
    module: Module, entry: Operation, dims: tuple[int, int, int], args: Sequence[Any], backend: str, note: str,
    *, warmup: int = 0, repeat: int = 1,
) -> LaunchResult:  # fmt: skip
    """The kernel compiled by Triton or tileiras and launched on the GPU (compiler.runtime.gpu)."""
    from .gpu import run

    times, moved = run(module, entry, dims, args, backend, warmup=warmup, repeat=repeat)
    result = LaunchResult(kernel_name(entry), dims, backend, times[-1] if times else 0.0, None, [], note)
    result.times = times
    result.moved = moved
    return result


@dataclass(slots=True)
class BenchResult:
    """Timed launches of one kernel on one backend: `times` in seconds (on the GPU backends
    the kernel's time measured with CUDA events; on the CPU ones the run's wall time), and
    `moved`, the bytes of the array arguments."""

    kernel: str
    backend: str
    times: list[float]
    moved: int = 0
    note: str = ""

    @property
    def median(self) -> float:
        import statistics

        return statistics.median(self.times) if self.times else 0.0

    @property
    def min(self) -> float:
        return min(self.times) if self.times else 0.0


def benchmark(
    module_or_path: Module | str | os.PathLike | bytes,
    kernel: str | None = None,
    grid: int | Sequence[int] = 1,
    args: Sequence[Any] = (),
    backend: str = "auto",
    *,
    warmup: int = 2,
    repeat: int = 10,
    cutile: bool = False,
    options: RunOptions | None = None,
) -> BenchResult:
    """`warmup` untimed then `repeat` timed launches of `kernel` with the same arguments (on
    a GPU bound once: NumPy arrays are copied in before the first launch and back after the
    last). Arguments as `launch` (`cutile=True`: cuTile's convention). Every launch is of
    one loaded module, so what a launch writes to a global, the next one sees."""
    if repeat < 1 or warmup < 0:
        raise LaunchError("repeat must be at least 1 and warmup at least 0", kind="argument")
    backend, note = resolve_backend(backend)
    module = load_module(module_or_path)
    entry = find_kernel(module, kernel)
    args = argument_list(args)
    if cutile:
        args = cutile_args(*args)
    if backend in GPU_BACKENDS:
        dims = grid_dims(grid)
        check_count(entry, args, len(args), False)
        r = _launch_gpu(module, entry, dims, args, backend, note, warmup=warmup, repeat=repeat)
        return BenchResult(r.kernel, backend, r.times, r.moved, note)
    times = []
    for i in range(warmup + repeat):
        r = launch(module, kernel_name(entry), grid, args, backend, options=options)
        if i >= warmup:
            times.append(r.time)
    moved = sum(a.nbytes for a in args if isinstance(a, np.ndarray))
    return BenchResult(kernel_name(entry), backend, times, moved, note)


def _nothing() -> None:
    pass


def _check_options(options: Any) -> None:
    if options is None:
        return
    if not isinstance(options, RunOptions):
        raise LaunchError(
            f"options must be a compiler.interp.RunOptions, got {type(options).__name__}", kind="argument"
        )
    for name in ("max_steps", "timeout"):
        value = getattr(options, name)
        if value is not None and not value >= 0:
            raise LaunchError(f"RunOptions({name}={value!r}): give 0 or None (no limit) or more", kind="argument")


def launch_cutile(
    module_or_path: Any,
    kernel: str | None = None,
    grid: int | Sequence[int] = 1,
    args: Sequence[Any] = (),
    backend: str = "auto",
    *,
    options: RunOptions | None = None,
) -> LaunchResult:
    """`launch` with the arguments of a cuTile kernel (arrays, scalars, tuples, lists of
    arrays), expanded by cuTile Python's calling convention.

    `module_or_path` may also be a cuTile Python `@ct.kernel` function: it is exported by
    cuTile for these arguments (no GPU needed; see `compiler.runtime.cutile.export_cutile`)
    and the bytecode is run on `backend`, so a cuTile kernel can run on the CPU interpreter.
    Globals as `launch`: kept per `Module` object; a path, text or cuTile kernel is loaded
    (exported) afresh at each call, its globals from their initial values."""
    from .cutile import is_cutile_kernel, load_cutile

    if is_cutile_kernel(module_or_path):
        resolve_backend(backend)  # refuse an unknown or unavailable backend before exporting
        module_or_path, args = load_cutile(module_or_path, args)
    return launch(module_or_path, kernel, grid, args, backend, cutile=True, options=options)


__all__ = [
    "BACKENDS",
    "BYTECODE_MAGIC",
    "GPU_BACKENDS",
    "ArgumentChecks",
    "ArrayTable",
    "BenchResult",
    "DevicePointer",
    "InterpError",
    "LaunchError",
    "LaunchResult",
    "StridedArray",
    "benchmark",
    "check_count",
    "cutile_args",
    "disassemble",
    "find_kernel",
    "find_nvidia_tool",
    "find_tileiras",
    "find_tileirdisasm",
    "gpu_launcher_missing",
    "gpu_present",
    "launch",
    "launch_cutile",
    "load_module",
    "resolve_backend",
    "signature",
]
