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
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..interp import InterpError, Machine, RunOptions, dtypes, rounding
from ..interp.machine import MAX_GRID_EXTENT, op_where
from ..interp.memory import pack_nibbles, unpack_nibbles_into
from ..ir.core import Module, Operation, Value
from ..ir.types import FloatType, IntegerType, PointerType, TileType, Type
from ..modules import (  # noqa: F401 - loading modules and finding kernels: part of this API
    BYTECODE_MAGIC,
    INSTALL_DISASSEMBLER,
    LaunchError,
    _param_text,
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

# Where a kernel can run: `auto` (see `resolve_backend`), the CPU interpreter, the Triton lowering
# run by Triton's interpreter on the CPU (compiler.runtime.interpret), and, on an NVIDIA GPU, the
# Triton lowering compiled by Triton (`triton`) or the bytecode compiled by NVIDIA's `tileiras`.
BACKENDS = ("auto", "cpu", "triton-interpret", "triton", "tileiras")
GPU_BACKENDS = ("triton", "tileiras")


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


@dataclass(frozen=True, slots=True)
class StridedArray:
    """An array argument placed as it lies in memory, strides and all: the kernel's pointer
    is the address of `array`'s first element and the bytes between its elements are
    there too (not a copy), so a kernel told the strides sees exactly this view."""

    array: np.ndarray

    @staticmethod
    def window(a: np.ndarray) -> tuple[np.ndarray, int] | None:
        """The bytes spanned by `a` as a contiguous uint8 view of the memory it lives in,
        and the offset of `a`'s first element in them; None when `a` is not a view of
        one contiguous NumPy buffer."""
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        if not (root.flags.c_contiguous or root.flags.f_contiguous):
            return None
        first = a.__array_interface__["data"][0]
        lo = hi = first
        if a.size:
            for n, s in zip(a.shape, a.strides):
                if s >= 0:
                    hi += (n - 1) * s
                else:
                    lo += (n - 1) * s
            hi += a.itemsize
        start = root.__array_interface__["data"][0]
        if lo < start or hi > start + root.nbytes:
            return None
        data = np.ravel(root, order="K").view(np.uint8)
        return data[lo - start : hi - start], first - lo


@dataclass(frozen=True, slots=True)
class ArrayTable:
    """A table of array descriptors for a `tile<ptr<i64>>` parameter, as cuTile passes a
    list of arrays: one row of i64 words per array, `[address, *shape, *strides]`
    (strides in elements). Each array is placed like an array argument."""

    arrays: tuple[np.ndarray | StridedArray, ...]


def _grid(grid: int | Sequence[int]) -> tuple[int, int, int]:
    # Integers only, as written: int() would take "12" as the digits 1, 2, a float's whole
    # part, a dict's keys, True as 1.
    def whole(d: Any) -> bool:
        return isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_))

    if isinstance(grid, np.ndarray) and grid.ndim <= 1:
        grid = grid.tolist()
    items = [grid] if whole(grid) else list(grid) if isinstance(grid, (tuple, list)) else None
    if items is None or not all(whole(d) for d in items):
        raise LaunchError(f"grid must be 1 to 3 positive integers, got {grid!r}", kind="grid")
    dims = [int(d) for d in items]
    shown = ",".join(map(str, dims))  # as --grid and the run summary write a grid
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise LaunchError(f"grid must be 1 to 3 positive extents, got {shown}", kind="grid")
    if any(d > MAX_GRID_EXTENT for d in dims):
        raise LaunchError(
            f"grid {shown} exceeds the limit of {MAX_GRID_EXTENT} (2^24-1) tile blocks per axis", kind="grid"
        )
    dims += [1] * (3 - len(dims))
    return dims[0], dims[1], dims[2]


# --------------------------------------------------------------------------------------------
# Arguments


def _numpy_name(dtype: np.dtype) -> str:
    """How Python code spells the dtype: `np.float32`, `ml_dtypes.bfloat16`."""
    module = "ml_dtypes" if dtype.type.__module__.startswith("ml_dtypes") else "np"
    return f"{module}.{dtype.name}"


def _dtype_fits(have: np.dtype, want: np.dtype) -> bool:
    if have == want:
        return True
    if have.itemsize != want.itemsize:
        return False
    if have.kind in "iu" and want.kind in "iu":
        return True  # signless integers: either reading of the bits
    return have == np.bool_ and want == np.uint8  # i1 is one byte, 0 or 1


class ArgumentChecks:
    """The checks every backend makes of a launch argument against its parameter (an array's
    element type, a scalar's value), with the launch's messages; places nothing. The GPU and
    Triton launchers and `tileir run`'s early signature check use these; `_Binder` adds the
    CPU interpreter's placing."""

    def where(self, i: int, param: Value) -> str:
        return f"argument {i} ({_param_text(param)})"

    def check_dtype(self, where: str, element: PointerType, have: np.dtype) -> None:
        try:
            want = dtypes.memory_dtype(element.pointee)
        except TypeError:
            raise LaunchError(f"{where}: arrays of {element.pointee} cannot be passed") from None
        if not _dtype_fits(have, want):
            raise LaunchError(
                f"{where}: the kernel reads {element.pointee} elements, which live in {_numpy_name(want)} "
                f"arrays; got an array of {have} ({self.conversion_advice(element.pointee, want)})"
            )

    def packed(self, where: str, array: np.ndarray, words: bool = False) -> np.ndarray:
        """The bytes of an array of 4-bit elements as memory holds them, two to a byte (spec
        5.2.2); `words`: up to whole 32-bit words (the Triton lowering stores a nibble by
        swapping the word around it)."""
        if array.size % 2:
            raise LaunchError(f"{where}: 4-bit elements are stored in pairs; the array has an odd size {array.size}")
        return pack_nibbles(array, words)

    def conversion_advice(self, element: Type, want: np.dtype) -> str:
        """How to give an array of the right element type: Python's way here (`tileir run`'s
        checks say it with an --arg)."""
        return f"convert it with .astype({_numpy_name(want)})"

    def scalar(self, i: int, param: Value, element: Type, arg: Any) -> np.ndarray:
        where = self.where(i, param)
        if isinstance(arg, np.ndarray):
            if arg.size != 1 or arg.ndim > 1:
                raise LaunchError(f"{where}: got an array of shape {arg.shape} for a scalar parameter")
            arg = arg.reshape(())[()]
        if isinstance(element, IntegerType):
            return _integer(where, element, arg)
        if isinstance(element, FloatType):
            return _float(where, element, arg)
        raise LaunchError(f"{where}: parameters of type {param.type} cannot be passed")


class _Binder(ArgumentChecks):
    """Turns launch arguments into the machine's parameter values, placing arrays."""

    def __init__(self, machine: Machine) -> None:
        self.memory = machine.memory
        self.write_back: list[tuple[np.ndarray, np.ndarray]] = []
        self.unpack_back: list[tuple[np.ndarray, np.ndarray]] = []

    def bind(self, i: int, param: Value, arg: Any) -> tuple[np.ndarray, int | None]:
        t = param.type
        element = t.element if isinstance(t, TileType) else t
        if isinstance(element, PointerType):
            address = self.pointer(i, param, element, arg)
            return np.array([address], dtype=dtypes.POINTER_DTYPE), address
        return self.scalar(i, param, element, arg), None

    # -- pointers --------------------------------------------------------------------------

    def pointer(self, i: int, param: Value, element: PointerType, arg: Any) -> int:
        where = self.where(i, param)
        if isinstance(arg, (bool, np.bool_)):
            raise LaunchError(f"{where}: expected an array (or an address), got {arg!r}")
        if isinstance(arg, (int, np.integer)):
            if not 0 <= int(arg) < 1 << 63:
                raise LaunchError(f"{where}: address {int(arg)} is outside 0 to 2^63-1")
            return int(arg)
        if isinstance(arg, ArrayTable):
            return self.table(i, param, element, arg)
        strided = isinstance(arg, StridedArray)
        array = arg.array if strided else arg
        if not isinstance(array, np.ndarray):
            raise LaunchError(
                f"{where}: expected a NumPy array of {_numpy_name(dtypes.memory_dtype(element.pointee))} "
                f"(or an address), got {type(arg).__name__}"
            )
        self.check_dtype(where, element, array.dtype)
        if dtypes.memory_bits(element.pointee) == 4:
            return self.place_packed(array, f"argument {i}", where)
        return self.place(array, f"argument {i}", strided, where)

    def place_packed(self, array: np.ndarray, name: str, where: str) -> int:
        """4-bit elements lie two per byte in memory (spec 5.2.2): place a packed copy and
        unpack it into the caller's array after the run."""
        packed = self.packed(where, array)
        if array.flags.writeable:
            self.unpack_back.append((array, packed))
        read_only = not array.flags.writeable
        return self.memory.place(packed, alignment=1, name=name + " (packed 4-bit)", read_only=read_only)

    def place(self, array: np.ndarray, name: str, strided: bool, where: str) -> int:
        if strided:
            window = StridedArray.window(array)
            if window is None:
                raise LaunchError(f"{where}: this strided array is not a view of one contiguous NumPy buffer")
            data, offset = window
            read_only = not data.flags.writeable
            base = self.memory.place(data, alignment=array.itemsize, name=name, read_only=read_only)
            return base + offset
        if array.flags.c_contiguous:
            placed = array
        else:
            placed = np.ascontiguousarray(array)
            if array.flags.writeable:
                self.write_back.append((array, placed))
            else:
                placed.flags.writeable = False
        read_only = not placed.flags.writeable
        if read_only:
            name += " (a read-only array)"
        return self.memory.place(placed, alignment=max(array.itemsize, 1), name=name, read_only=read_only)

    def table(self, i: int, param: Value, element: PointerType, table: ArrayTable) -> int:
        where = self.where(i, param)
        if not (isinstance(element.pointee, IntegerType) and element.pointee.width == 64):
            raise LaunchError(f"{where}: a table of arrays goes to a tile<ptr<i64>> parameter")
        data = array_table(
            table, where, lambda array, dev, strided, j, at: self.place(array, f"argument {i}[{j}]", strided, at)
        )
        return self.memory.place(data, alignment=8, name=f"argument {i} (array list)", read_only=True)


def array_table(table: ArrayTable, where: str, place: Any) -> np.ndarray:
    """The rows of a cuTile array list, `[address, *extents, *strides]` in i64 (strides in
    elements). `place(array, device_array_or_None, strided, index, where)` gives item
    `index`'s address (placing it where the backend needs it)."""
    from .devarray import device_array

    rows: list[list[int]] = []
    for j, item in enumerate(table.arrays):
        strided = isinstance(item, StridedArray)
        array = item.array if strided else item
        dev = device_array(array)
        if dev is None and not isinstance(array, np.ndarray):
            raise LaunchError(f"{where}: item {j} of the array list is {type(array).__name__}, not an array")
        address = place(array, dev, strided, j, f"{where}, item {j}")
        if dev is not None:
            rows.append([address, *dev.shape, *dev.strides])
            continue
        # A copied (non-contiguous) array lies C-contiguously where it was placed.
        strides = [s // array.itemsize for s in array.strides] if strided else _c_strides(array.shape)
        rows.append([address, *array.shape, *strides])
    width = max((len(r) for r in rows), default=1)
    if any(len(r) != width for r in rows):
        raise LaunchError(f"{where}: the arrays of a list must all have the same number of dimensions")
    return np.array(rows, dtype=np.int64).reshape(len(rows), width)


def _c_strides(shape: tuple[int, ...]) -> list[int]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * max(shape[d + 1], 1)
    return strides


def _integer(where: str, element: IntegerType, arg: Any) -> np.ndarray:
    width = element.width
    if isinstance(arg, (bool, np.bool_)):
        v = int(bool(arg))
    elif isinstance(arg, (int, np.integer)):
        v = int(arg)
    else:
        raise LaunchError(f"{where}: expected an integer, got {type(arg).__name__} {arg!r}")
    if width == 1:
        if v not in (0, 1):
            raise LaunchError(f"{where}: {v} is not a value of i1 (0, 1, False or True)")
        return np.array([bool(v)])
    lo, hi = -(1 << (width - 1)), (1 << width) - 1
    if not lo <= v <= hi:
        raise LaunchError(f"{where}: {v} does not fit in i{width} (accepted: {lo} to {hi})")
    dtype = dtypes.storage_dtype(element)
    return np.array([v & ((1 << width) - 1)], dtype=np.uint64).astype(dtype)


def _is_number(arg: Any) -> bool:
    if isinstance(arg, (bool, np.bool_)):
        return False
    if isinstance(arg, (int, float, np.integer, np.floating)):
        return True
    return isinstance(arg, np.generic) and type(arg).__module__.startswith("ml_dtypes")  # bf16, f8, ...


def _float(where: str, element: FloatType, arg: Any) -> np.ndarray:
    if not _is_number(arg):
        raise LaunchError(f"{where}: expected a number, got {type(arg).__name__} {arg!r}")
    dtype = dtypes.storage_dtype(element)
    try:
        source = np.array([arg])
        if source.dtype.kind in "iu" or source.dtype == object:
            source = np.array([float(int(arg))], dtype=np.float64)
    except (OverflowError, TypeError, ValueError) as e:
        raise LaunchError(f"{where}: {arg!r} is not a value of {element}: {e}") from None
    with np.errstate(all="ignore"):
        # tf32 from the exact value: a cast to f32 first would round twice.
        value = rounding.round_to(source, "tf32") if element.name == "tf32" else source.astype(dtype)
        finite_in = np.isfinite(source.astype(np.float64))[0]
        finite_out = np.isfinite(value.astype(np.float64))[0]
    if finite_in and not finite_out:
        import ml_dtypes

        largest = float(ml_dtypes.finfo(dtype).max)
        if element.name == "tf32":
            largest = float(np.array([0x7F7FE000], dtype=np.uint32).view(np.float32)[0])
        raise LaunchError(f"{where}: {arg!r} is out of the range of {element} (largest finite value {largest:g})")
    return value


# --------------------------------------------------------------------------------------------
# Backends


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


# --------------------------------------------------------------------------------------------
# Launching


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
    dims = _grid(grid)
    args = _arguments(args)
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
        result = _launch_triton_interpret(module, entry, dims, args, options)
        result.note = note
        copy_back()
        return result
    machine = Machine(module, options=options)
    binder = _Binder(machine)
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
    args = _arguments(args)
    if cutile:
        args = cutile_args(*args)
    if backend in GPU_BACKENDS:
        dims = _grid(grid)
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


def check_count(entry: Operation, args: Sequence[Any], given: int, cutile: bool) -> None:
    """Refuse `args` (after expanding `given` cuTile arguments where `cutile`) unless there
    is one per parameter of `entry`, with the kernel's signature in the message."""
    params = entry.regions[0].blocks[0].arguments
    if len(args) != len(params):
        how = f"{given} cuTile arguments expanded to {len(args)}" if cutile else f"got {len(args)}"
        raise LaunchError(
            f"kernel @{kernel_name(entry)} takes {len(params)} arguments, {how}: {signature(entry)}", kind="count"
        )


def _launch_triton_interpret(
    module: Module, entry: Operation, dims: tuple[int, int, int], args: Sequence[Any], options: RunOptions | None
) -> LaunchResult:
    """The kernel lowered to Triton and run by Triton's interpreter (compiler.runtime.interpret)."""
    from ..lower import LowerError
    from .interpret import run

    stdout = options.stdout if options else None
    timeout = options.timeout if options else None
    try:
        if timeout and _can_alarm():
            assert options is not None
            elapsed = _interpret_with_timeout(module, entry, dims, args, stdout, options)
        else:
            elapsed = run(module, entry, dims, args, stdout=stdout)
    except LowerError as e:
        raise LaunchError(e.report(), kind="backend") from None
    return LaunchResult(kernel_name(entry), dims, "triton-interpret", elapsed)


class _Alarm(BaseException):
    """Raised by the SIGALRM handler inside Triton's interpreter: a BaseException, so that
    the interpreter's `except Exception` (which rewraps errors) lets it through."""

    def __init__(self, frame: Any) -> None:
        super().__init__()
        self.frame = frame


def _can_alarm() -> bool:
    """Whether a SIGALRM timer can interrupt a launch: signal handlers run only in the main
    thread, and Windows has no SIGALRM."""
    import signal
    import threading

    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def interrupted_loop(frame: Any, code_file: str, src: Any) -> Operation | None:
    """The Tile IR loop (`for` or `loop`) around the op whose generated line `frame` (or the
    nearest frame it was called from) runs, or None. The innermost frame of the generated
    file may be a helper of it (`_predicate`, a combiner), whose lines are no op's: the
    frame that called it is."""
    op = None
    while frame is not None and op is None:
        if frame.f_code.co_filename == code_file:
            op = src.op_at(frame.f_lineno)
        frame = frame.f_back
    while op is not None and op.name not in ("cuda_tile.for", "cuda_tile.loop"):
        op = op.parent_op
    return op


def _interpret_with_timeout(
    module: Module, entry: Operation, dims: tuple[int, int, int], args: Sequence[Any], stdout: Any, options: RunOptions
) -> float:
    """`interpret.run` stopped after `options.timeout` seconds. Triton's interpreter runs the
    generated Python, whose loops the CPU interpreter's step budget cannot count, so a timer
    interrupts it; the report names the Tile IR loop the generated line came from."""
    import signal

    from ..lower.build import import_kernel, require_triton
    from ..lower.codegen import Target, lower_entry
    from .interpret import run

    require_triton()
    try:
        # Imported (seconds, the first time) and the kernel lowered before the timer starts:
        # the limit is on the kernel's run, and an import must never be interrupted.
        import torch  # noqa: F401
        import triton.runtime.interpreter as interpreter
    except ImportError:
        return run(module, entry, dims, args, stdout=stdout)  # which says what is missing
    timeout = options.timeout or 0.0
    src = lower_entry(module, entry, Target.parse(None))
    if src.not_interpretable():
        return run(module, entry, dims, args, source=src, stdout=stdout)  # which refuses it
    code_file = import_kernel(src, interpret=True).fn.__code__.co_filename

    def on_alarm(signum: int, frame: Any) -> None:
        raise _Alarm(frame)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            return run(module, entry, dims, args, source=src, stdout=stdout)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Alarm as alarm:
        op = interrupted_loop(alarm.frame, code_file, src) or entry
        block = getattr(interpreter.interpreter_builder, "grid_idx", None)
        t = f"{timeout:g}"
        raise InterpError(
            f"the kernel ran past its time limit of {t} s ({options.spell('timeout', t)}) under Triton's interpreter",
            op=op.mnemonic,
            where=op_where(module, op),
            block=tuple(block) if block is not None else None,
            note=f"raise or lift the limit with {options.spell('timeout', 'SECONDS')} (0: no limit)",
        ) from None
    finally:
        signal.signal(signal.SIGALRM, previous)


def _arguments(args: Any) -> list[Any]:
    """`args` as a list (any iterable: a generator is taken once), refusing what cannot be
    passed as it is."""
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise LaunchError(f"args must be a sequence of the kernel's arguments, got {type(args).__name__}", kind="count")
    args = list(args)
    for i, arg in enumerate(args):
        if isinstance(arg, np.ma.MaskedArray):  # its mask would be ignored: the data is what a kernel reads
            raise LaunchError(f"argument {i} is a masked array: pass its .filled(value) or .data", kind="argument")
    return args


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
    from .cutile import export_cutile, is_cutile_kernel

    if is_cutile_kernel(module_or_path):
        resolve_backend(backend)  # refuse an unknown or unavailable backend before exporting
        bytecode, args = export_cutile(module_or_path, args)
        module_or_path = load_module(bytecode, name=f"<cuTile kernel {module_or_path._pyfunc.__name__}>")
    return launch(module_or_path, kernel, grid, args, backend, cutile=True, options=options)


from .cutile import cutile_args  # noqa: E402  (it uses StridedArray and ArrayTable, defined above)
from .devarray import DevicePointer, holds_device_array  # noqa: E402

__all__ = [
    "BYTECODE_MAGIC",
    "ArrayTable",
    "BenchResult",
    "DevicePointer",
    "InterpError",
    "LaunchError",
    "LaunchResult",
    "StridedArray",
    "benchmark",
    "cutile_args",
    "disassemble",
    "find_kernel",
    "find_nvidia_tool",
    "find_tileiras",
    "find_tileirdisasm",
    "gpu_present",
    "launch",
    "launch_cutile",
    "load_module",
    "resolve_backend",
    "signature",
]
