"""The GPU launcher: one path for the cubins of both compilers, through `cuda.core`.

    from compiler.runtime import launch
    launch("examples/vector_add.tileir", None, grid=(4,), args=[a, n, 1, b, n, 1, c, n, 1], backend="triton")

- `triton`: the kernel lowered to Triton source (`compiler.lower`), specialised on what the
  arguments show at launch as Triton's own JIT does (pointers and integers that are
  multiples of 16 → `tt.divisibility`; integers equal to 1, typically unit strides, compiled
  as constants — the parameter stays, so the ABI does not change), compiled by Triton
  (cached on disk), loaded and launched with Triton's launch rules: block = 32 × num_warps
  threads, dynamic shared memory = the compiler's `shared` (the per-kernel limit raised
  past 48 KB when needed), a cluster of num_ctas CTAs, and two trailing scratch pointers
  (global scratch allocated when the kernel asks for it).
- `tileiras`: the module's bytecode compiled by NVIDIA's `tileiras` (cached on disk, so a
  cubin built on a machine with tileiras runs on one without), launched as NVIDIA's cuTile
  Python launches such cubins: grid = the tile grid, block (1, 1, 1) and no dynamic shared
  memory — a tile kernel carries its launch metadata (thread count: EIATTR_REQNTID) and the
  driver applies it.

Arguments (one binding layer for both): NumPy arrays are copied to the device and back
(updated in place, as on the CPU backend); GPU arrays (torch, CuPy, JAX: DLPack or the CUDA
Array Interface) are used in place; `StridedArray`, `ArrayTable` and 4-bit arrays as on the
CPU; scalars are converted by the kernel's parameter types exactly as on the CPU;
`DevicePointer(address)` passes a raw device address. Parameter sizes are checked against
what the cubin declares before every first launch of a kernel.

Globals (spec 003, 6.2.1: initialized exactly once) live as long as the `Module` object
launched: on `triton` a device buffer per global, kept per Module and shared by its kernels;
on `tileiras` the cubin's own globals, the cubin being loaded once per Module object.

Failures are `LaunchError`s of one line (kind "device"): no driver, no GPU, a cubin the
driver cannot load, out of device memory, a kernel fault. Out of memory and load failures
leave the GPU usable; after a fault (a sticky CUDA error, from which CUDA allows no recovery
in the same process) later GPU launches say so at once, and the CPU backends work on.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..interp import dtypes
from ..interp.memory import unpack_nibbles_into
from ..ir.core import Module, Operation, Value
from ..ir.types import IntegerType, PointerType, TileType
from ..modules import LaunchError, _param_text, kernel_name
from . import abi
from .binding import ArgumentChecks, ArrayTable, StridedArray, array_table, c_strides
from .devarray import DeviceArray, DevicePointer, device_array, host_array

# CUDA errors after which the process can do no more GPU work (sticky errors).
_STICKY = {
    "CUDA_ERROR_ILLEGAL_ADDRESS": "an illegal memory access (an address outside every allocation)",
    "CUDA_ERROR_MISALIGNED_ADDRESS": "a misaligned memory access",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION": "an illegal instruction",
    "CUDA_ERROR_INVALID_PC": "an invalid program counter",
    "CUDA_ERROR_HARDWARE_STACK_ERROR": "a hardware stack error (stack overflow)",
    "CUDA_ERROR_LAUNCH_FAILED": "an unspecified launch failure",
    "CUDA_ERROR_ASSERT": "a device-side assertion",
    "CUDA_ERROR_LAUNCH_TIMEOUT": "a timeout (the kernel ran too long)",
}
# CUDA errors that mean the driver cannot use this cubin.
_IMAGE = (
    "NO_BINARY_FOR_GPU",
    "INVALID_IMAGE",
    "UNSUPPORTED_PTX_VERSION",
    "INVALID_SOURCE",
    "SHARED_OBJECT_INIT_FAILED",
    "UNSUPPORTED_DEVSIDE_SYNC",
    "JIT_COMPILER_NOT_FOUND",
)
_SHARED_STATIC_LIMIT = 48 * 1024


def _error_code(exc: BaseException) -> str | None:
    m = re.search(r"CUDA_ERROR_[A-Z_]+", str(exc))
    return m.group(0) if m else None


def _launch_error(message: str) -> Exception:
    return LaunchError(message, kind="device")


def _cuda() -> tuple[Any, Any]:
    """(cuda.core, cuda.bindings.driver), or a LaunchError saying what to install."""
    try:
        try:
            import cuda.core as core

            core.Device  # noqa: B018 - cuda.core < 0.4 keeps its API in cuda.core.experimental
        except (ImportError, AttributeError):
            import cuda.core.experimental as core  # type: ignore[no-redef]
        from cuda.bindings import driver
    except ImportError:
        raise _launch_error(
            "the GPU backends launch through cuda.core, which is not installed "
            "(pip install cuda-core cuda-bindings); use --backend cpu"
        ) from None
    return core, driver


def _cluster_grid_in_clusters(core: Any) -> bool:
    """cuda.core ≥ 0.4 counts LaunchConfig.grid in clusters when a cluster is given (before,
    in blocks)."""
    version = getattr(core, "__version__", None)
    if version is None:
        import cuda.core

        version = getattr(cuda.core, "__version__", "0.4")
    major, minor = (int(x) for x in re.findall(r"\d+", version)[:2])
    return (major, minor) >= (0, 4)


class Gpu:
    """The process's GPU: device 0 through cuda.core, one blocking stream (it orders with
    the legacy default stream that torch and CuPy use by default), loaded cubins."""

    def __init__(self) -> None:
        core, driver = _cuda()
        self.core, self.driver = core, driver
        try:
            self.device = core.Device(0)
            self.device.set_current()
            cc = self.device.compute_capability
            self.cc = int(cc[0]) * 10 + int(cc[1])
            self.name = str(self.device.name)
            try:
                options = core.StreamOptions(nonblocking=False)
                self.stream = self.device.create_stream(options=options)
            except (AttributeError, TypeError):
                self.stream = self.device.create_stream()
            err, version = driver.cuDriverGetVersion()
            self.driver_version = int(version)
            # Event options with timing (cuda.core 1.x names the field `timing_enabled`, 0.x
            # `enable_timing`), made once: every launch records two events.
            try:
                self.timing = core.EventOptions(timing_enabled=True)
            except TypeError:
                self.timing = core.EventOptions(enable_timing=True)
        except Exception as exc:  # noqa: BLE001 - every way of having no GPU becomes one line
            raise _launch_error(_no_gpu_message(exc)) from None
        self.loaded = Loaded()  # cubins loaded once per process (Triton's: they hold no globals)
        self.grid_in_clusters = _cluster_grid_in_clusters(core)

    @property
    def arch(self) -> str:
        return f"sm_{self.cc}"

    @property
    def cuda_version(self) -> str:
        return f"{self.driver_version // 1000}.{self.driver_version % 1000 // 10}"

    # -- code ------------------------------------------------------------------------------

    def kernel(
        self,
        cubin: bytes,
        name: str,
        compiler: str,
        slots: list[abi.Slot],
        shared: int = 0,
        owner: Module | None = None,
    ) -> Any:
        """Kernel `name` of `cubin`, loaded once: on first use its parameters are checked
        against what the cubin declares (`slots` being what the launcher packs) and its
        dynamic shared-memory limit is raised to `shared` where that is past 48 KB.

        The cubin is loaded (a CUDA module) once per process, or with `owner` once per that
        Module object, kept while it lives: a tileiras cubin holds the module's globals, which
        the driver initializes when it loads the cubin and which live as long as the loaded
        CUDA module, so each Module object needs a load of its own. All kernels of one cubin
        come from one load, sharing its globals."""
        digest = hashlib.sha256(cubin).hexdigest()
        loaded = self.loaded if owner is None else loaded_on_gpu(owner, compiler.lower())
        key = (digest, name)
        k = loaded.kernels.get(key)
        if k is None:
            _check_abi(cubin, name, slots, compiler)
            try:
                code = loaded.codes.get(digest)
                if code is None:
                    code = self.core.ObjectCode.from_cubin(cubin)
                k = code.get_kernel(name)  # loads the cubin on its first kernel
            except Exception as exc:  # noqa: BLE001
                raise self.error(exc, f"loading the {compiler} cubin of kernel {name}", compiler=compiler) from None
            self.allow_shared(k, shared)
            loaded.codes[digest] = code
            loaded.kernels[key] = k
        return k

    def allow_shared(self, kernel: Any, nbytes: int) -> None:
        """Raise the kernel's dynamic shared-memory limit to `nbytes` (needed past 48 KB)."""
        if nbytes <= _SHARED_STATIC_LIMIT:
            return
        handle = getattr(kernel, "handle", None) or kernel._handle
        attr = self.driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        err, dev = self.driver.cuDeviceGet(0)
        (err,) = self.driver.cuKernelSetAttribute(attr, nbytes, handle, dev)
        if int(err) != 0:
            raise _launch_error(
                f"the kernel needs {nbytes} bytes of shared memory, more than this GPU ({self.name}) allows "
                f"per block ({_name(self.driver, err)})"
            )

    # -- memory ----------------------------------------------------------------------------

    def alloc(self, nbytes: int, what: str) -> Any:
        try:
            return self.device.allocate(max(int(nbytes), 1), stream=self.stream)
        except Exception as exc:  # noqa: BLE001
            if _error_code(exc) == "CUDA_ERROR_OUT_OF_MEMORY" or "out of memory" in str(exc).lower():
                free, total = self.memory_info()
                raise _launch_error(
                    f"out of device memory allocating {_bytes(nbytes)} for {what} ({_bytes(free)} free of "
                    f"{_bytes(total)} on {self.name}); pass smaller arrays or free device memory"
                ) from None
            raise self.error(exc, f"allocating {_bytes(nbytes)} for {what}") from None

    def memory_info(self) -> tuple[int, int]:
        try:
            err, free, total = self.driver.cuMemGetInfo()
            return int(free), int(total)
        except Exception:  # noqa: BLE001
            return 0, 0

    def upload(self, dst: int, src: np.ndarray) -> None:
        if src.nbytes:
            src = np.ascontiguousarray(src)
            self.check(self.driver.cuMemcpyHtoD(dst, int(src.ctypes.data), src.nbytes), "copying to the GPU")

    def download(self, dst: np.ndarray, src: int) -> None:
        if dst.nbytes:
            assert dst.flags.c_contiguous
            self.check(self.driver.cuMemcpyDtoH(int(dst.ctypes.data), src, dst.nbytes), "copying from the GPU")

    def check(self, result: Any, doing: str) -> Any:
        err = result[0] if isinstance(result, tuple) else result
        if int(err) != 0:
            raise self.error(RuntimeError(_name(self.driver, err)), doing)
        return result

    # -- launching -------------------------------------------------------------------------

    def launch(
        self,
        kernel: Any,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared: int,
        cluster: tuple[int, int, int] | None,
        values: list[Any],
        what: str,
    ) -> float:
        """Launch and wait; the kernel's time in seconds, measured with CUDA events."""
        core = self.core
        kwargs: dict[str, Any] = {"grid": grid, "block": block, "shmem_size": shared}
        if cluster is not None and cluster != (1, 1, 1):
            kwargs["cluster"] = cluster
            if not self.grid_in_clusters:
                kwargs["grid"] = tuple(g * c for g, c in zip(grid, cluster, strict=True))
        try:
            config = core.LaunchConfig(**kwargs)
            start = self.stream.record(options=self.timing)
            core.launch(self.stream, config, kernel, *values)
            end = self.stream.record(options=self.timing)
            end.sync()
            return float(end - start) / 1e3
        except Exception as exc:  # noqa: BLE001
            raise self.error(exc, what) from None

    def sync(self) -> None:
        try:
            self.stream.sync()
        except Exception as exc:  # noqa: BLE001
            raise self.error(exc, "waiting for the GPU") from None

    def error(self, exc: BaseException, doing: str, compiler: str | None = None) -> Exception:
        """The LaunchError for a CUDA failure while `doing` (after a fault, the GPU is given up: `poison`)."""
        code = _error_code(exc) or ""
        if code in _STICKY:
            poison(code, doing)
            return _launch_error(
                f"{doing}: the kernel faulted on the GPU with {code} ({_STICKY[code]}); CUDA allows no further GPU "
                "work in this process (restart it); run the kernel with --backend cpu to find the op and tile block "
                "at fault"
            )
        if any(code.endswith(s) for s in _IMAGE):
            made_by = f"{compiler} " if compiler else ""
            return _launch_error(
                f"{doing}: the driver (CUDA {self.cuda_version}) cannot load this {made_by}cubin for {self.arch} "
                f"({code}); update the NVIDIA driver, or compile with a toolkit no newer than the driver"
            )
        if code == "CUDA_ERROR_OUT_OF_MEMORY":
            return _launch_error(f"{doing}: out of device memory on {self.name}")
        return _launch_error(f"{doing}: {str(exc).strip().splitlines()[0] if str(exc).strip() else code}")


def _name(driver: Any, err: Any) -> str:
    try:
        e, s = driver.cuGetErrorName(err)
        return s.decode() if isinstance(s, bytes) else str(s)
    except Exception:  # noqa: BLE001
        return str(err)


def _no_gpu_message(exc: BaseException) -> str:
    text = str(exc)
    code = _error_code(exc)
    if "driver library" in text or "libcuda" in text or type(exc).__name__ == "DynamicLibNotFoundError":
        return "no NVIDIA driver is installed here (libcuda.so.1 not found); use --backend cpu or triton-interpret"
    if code == "CUDA_ERROR_NO_DEVICE":
        return "the NVIDIA driver sees no GPU (CUDA_ERROR_NO_DEVICE); check CUDA_VISIBLE_DEVICES, or use --backend cpu"
    if code == "CUDA_ERROR_INSUFFICIENT_DRIVER":
        return "the NVIDIA driver is too old for this cuda-bindings (CUDA_ERROR_INSUFFICIENT_DRIVER); update it"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return f"cannot open the GPU: {first}; use --backend cpu"


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


_GPU: Gpu | None = None
_POISONED: str | None = None  # why the GPU is unusable in this process (see `poison`)


def gpu() -> Gpu:
    """The process's Gpu, opened on first use (a LaunchError when there is none)."""
    global _GPU
    if _POISONED is not None:
        raise _launch_error(_POISONED + "; the cpu backend still works")
    if _GPU is None:
        _GPU = Gpu()
    return _GPU


def poison(code: str, doing: str) -> None:
    """After a sticky error CUDA refuses every further call in this process (its rule: "the
    process must be terminated and relaunched"; resetting the primary context does not
    help: measured on driver 580, cuDevicePrimaryCtxRetain then fails with the same error).
    Later GPU launches fail at once with that reason; the CPU backends are unaffected."""
    global _POISONED
    _POISONED = f"the GPU cannot be used again in this process after {code} ({doing}); restart Python"


def keep_forever(obj: Any) -> None:
    """Never free `obj` (buffers of a context CUDA gave up on): freeing them would only
    fail again, or crash at exit."""
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


class Loaded:
    """What the GPU holds for one loaded module: its cubins as loaded by the driver
    (cuda.core ObjectCode, by the cubin's sha256), their kernels (by hash and name), and
    on the triton backend the device storage of the module's globals (by symbol), shared
    by all its kernels. Freed when dropped with its Module, except after a fault (see
    `keep_forever`)."""

    def __init__(self) -> None:
        self.codes: dict[str, Any] = {}
        self.kernels: dict[tuple[str, str], Any] = {}
        self.globals: dict[str, Any] = {}  # cuda.core Buffers

    def global_address(self, g: Gpu, symbol: str, initial: bytes | None) -> int:
        """The device address of global `symbol`'s storage, allocated and given its initial
        bytes on first use (at least 8 bytes, like every hidden buffer)."""
        buf = self.globals.get(symbol)
        if buf is None:
            data = np.frombuffer(initial, dtype=np.uint8) if initial else np.zeros(8, np.uint8)
            buf = g.alloc(data.nbytes, f"global @{symbol}")
            g.upload(int(buf.handle), data)  # on failure the buffer is dropped, so freed
            self.globals[symbol] = buf
        return int(buf.handle)

    def __del__(self) -> None:
        try:
            if _POISONED is not None:
                keep_forever((self.codes, self.kernels, self.globals))
        except Exception:  # noqa: BLE001, S110 - at interpreter exit the module's names may be gone
            pass


def loaded_on_gpu(module: Module, backend: str) -> Loaded:
    """What the GPU holds for `module` on `backend` ("triton" or "tileiras"), kept while
    the Module object lives (`compiler.interp.machine.loaded_state`)."""
    from ..interp.machine import loaded_state

    state = loaded_state(module, backend)
    found = state.get("gpu")
    if found is None:
        found = state["gpu"] = Loaded()
    return found


# --------------------------------------------------------------------------------------------
# Arguments


@dataclass(slots=True)
class Bound:
    """One entry parameter's value as the kernel gets it: an address or scalar bits, and
    for integer scalars the value (specialisation looks at it)."""

    bits: int
    pointer: bool
    value: int | None = None


@dataclass(slots=True)
class Binding:
    """Arguments placed on the GPU: parameter values, and what to copy back and free."""

    gpu: Gpu
    values: list[Bound] = field(default_factory=list)
    buffers: list[Any] = field(default_factory=list)
    copy_back: list[tuple[np.ndarray, int, Any]] = field(default_factory=list)  # (host, device ptr, finish)
    moved: int = 0  # bytes of array arguments (for GB/s)

    def alloc(self, nbytes: int, what: str) -> int:
        buf = self.gpu.alloc(nbytes, what)
        self.buffers.append(buf)
        return int(buf.handle)

    def place(self, host: np.ndarray, what: str, read_only: bool, finish: Any = None) -> int:
        """Copy a C-contiguous host array to a new device allocation; copied back after the
        run unless read-only (`finish(host)` then runs, e.g. to scatter into a view)."""
        ptr = self.alloc(host.nbytes, what)
        self.gpu.upload(ptr, host)
        if not read_only:
            self.copy_back.append((host, ptr, finish))
        return ptr

    def finish(self) -> None:
        self.gpu.sync()
        for host, ptr, then in self.copy_back:
            self.gpu.download(host, ptr)
            if then is not None:
                then(host)
        self.release()

    def release(self) -> None:
        for buf in self.buffers:
            try:
                buf.close()
            except Exception:  # noqa: BLE001 - freeing after a fault is moot
                pass
        self.buffers.clear()


def bind(gpu_: Gpu, entry: Operation, args: Sequence[Any]) -> Binding:
    """Place `args` (one per entry parameter) for a GPU launch."""
    checks = ArgumentChecks()
    binding = Binding(gpu_)
    params = entry.regions[0].blocks[0].arguments
    try:
        for i, (param, arg) in enumerate(zip(params, args, strict=True)):
            where = f"argument {i} ({_param_text(param)})"
            t = param.type
            element = t.element if isinstance(t, TileType) else t
            if isinstance(element, PointerType):
                binding.values.append(
                    Bound(_pointer(binding, checks, where, element, arg, ArrayTable, StridedArray), True)
                )
                continue
            value = checks.scalar(i, param, element, arg)
            raw = np.asarray(value).reshape(-1)[:1]
            bits = (
                int(raw.view(np.dtype(f"u{max(raw.dtype.itemsize, 1)}"))[0]) if raw.dtype != np.bool_ else int(raw[0])
            )
            number = _signed(bits, element.width) if isinstance(element, IntegerType) else None
            binding.values.append(Bound(bits, False, number))
    except (LaunchError, Exception):
        binding.release()
        raise
    return binding


def _signed(bits: int, width: int) -> int:
    return bits - (1 << width) if width > 1 and bits >> (width - 1) & 1 else bits


def _pointer(
    b: Binding, checks: Any, where: str, element: PointerType, arg: Any, table_t: type, strided_t: type
) -> int:
    if isinstance(arg, DevicePointer):
        return int(arg.address)
    if isinstance(arg, (bool, int, np.integer)):
        raise LaunchError(
            f"{where}: a bare integer is not a pointer on the GPU; pass an array, or DevicePointer(address) for a "
            "raw device address"
        )
    if isinstance(arg, table_t):
        return _table(b, where, element, arg, strided_t)
    strided = isinstance(arg, strided_t)
    array = arg.array if strided else arg
    dev = device_array(array)
    if dev is not None:
        checks.check_dtype(where, element, dev.dtype)
        b.moved += dev.nbytes
        return dev.ptr
    host = host_array(array)  # a CPU array of another library: its memory, as NumPy
    if host is not None:
        array = host
    if not isinstance(array, np.ndarray):
        raise LaunchError(
            f"{where}: expected an array (NumPy, or a GPU array from torch, CuPy, JAX), got {type(arg).__name__}"
        )
    checks.check_dtype(where, element, array.dtype)
    if dtypes.memory_bits(element.pointee) == 4:
        packed = checks.packed(where, array, words=True)
        b.moved += array.nbytes
        return b.place(packed, where, not array.flags.writeable, functools.partial(unpack_nibbles_into, array))
    return _place_host(b, array, strided, where, strided_t)


def _place_host(b: Binding, array: np.ndarray, strided: bool, where: str, strided_t: type) -> int:
    """A NumPy array copied to the GPU (and back): C-contiguous as is, a `StridedArray` as
    the bytes it spans (the pointer is its first element's), anything else as a contiguous
    copy scattered back into the original after the run."""
    b.moved += array.nbytes
    read_only = not array.flags.writeable
    if strided:
        window = strided_t.window(array)
        if window is None:
            raise LaunchError(f"{where}: this strided array is not a view of one contiguous NumPy buffer")
        data, offset = window
        return b.place(np.ascontiguousarray(data), where, read_only, _scatter(data)) + offset
    if array.flags.c_contiguous:
        return b.place(array, where, read_only)
    return b.place(np.ascontiguousarray(array), where, read_only, _scatter(array))


def _scatter(original: np.ndarray) -> Any:
    def then(copy: np.ndarray) -> None:
        original[...] = copy.reshape(original.shape)

    return then


def _table(b: Binding, where: str, element: PointerType, table: Any, strided_t: type) -> int:
    """cuTile's list of arrays: a device table of [address, extents, strides] rows."""

    def place(array: Any, dev: DeviceArray | None, strided: bool, _index: int, at: str) -> int:
        if dev is not None:
            b.moved += dev.nbytes
            return dev.ptr
        return _place_host(b, array, strided, at, strided_t)

    return b.place(array_table(table, element, where, place), f"{where} (array list)", read_only=True)


# --------------------------------------------------------------------------------------------
# The two compilers


@dataclass(slots=True)
class Prepared:
    """A kernel ready to launch: its cubin's kernel, launch shape and parameter values."""

    kernel: Any
    block: tuple[int, int, int]
    shared: int
    cluster: tuple[int, int, int] | None
    values: list[Any]


def specialise(entry: Operation, binding_values: Sequence[Bound]) -> tuple[frozenset[int], tuple[int, ...]]:
    """(integer entry parameters equal to 1, entry parameters that are multiples of 16),
    from the values bound for a launch: what Triton's JIT would specialise on.
    TILEIR_SPECIALISE=0 turns it off (to tell a specialisation's effect from the kernel's)."""
    if os.environ.get("TILEIR_SPECIALISE") == "0":
        return frozenset(), ()
    params = entry.regions[0].blocks[0].arguments
    ones, divisible = set(), []
    for i, (p, b) in enumerate(zip(params, binding_values, strict=True)):
        if b.pointer:
            if b.bits % 16 == 0:
                divisible.append(i)
            continue
        if b.value is None or _int_width(p) <= 1:
            continue
        if b.value == 1:
            ones.add(i)
        elif b.value % 16 == 0:
            divisible.append(i)
    return frozenset(ones), tuple(divisible)


def _int_width(p: Value) -> int:
    e = p.type.element if isinstance(p.type, TileType) else p.type
    return e.width if isinstance(e, IntegerType) else 0


def prepare_triton(
    g: Gpu, module: Module, entry: Operation, dims: tuple[int, int, int], binding: Binding, arch: str | None = None
) -> Prepared:
    """Lower, specialise, compile (cached) and load `entry` for this launch; allocate its
    hidden buffers and Triton's scratch."""
    from ..lower import LowerError
    from ..lower.build import compile_source
    from ..lower.codegen import lower_entry

    ones, divisible_entry = specialise(entry, binding.values)
    try:
        tuning = _tuning()
        src = lower_entry(module, entry, arch or g.arch, ones, tuning)
        jit_params = [p for p in src.params if p.kind != "scratch"]
        divisible = [j for j, p in enumerate(jit_params) if p.kind == "buffer" or p.index in divisible_entry]
        compiled = compile_source(src, divisible=divisible, **tuning)
    except LowerError as e:
        raise LaunchError(e.report(), kind="backend") from None
    for note in compiled.notes:  # a hint not applied (clusters Triton could not compile)
        warnings.warn(note, stacklevel=3)
    slots = abi.slots_triton(compiled.params)
    blocks = dims[0] * dims[1] * dims[2]
    values: list[int] = []
    # The module's globals live on the device as long as the Module object (spec 003, 6.2.1:
    # initialized exactly once), one buffer each, shared by all its kernels and variants.
    module_globals = set(src.global_symbols())
    loaded = loaded_on_gpu(module, "triton") if module_globals else None
    for p in compiled.params:
        if p.kind in ("pointer", "scalar"):
            values.append(binding.values[p.index].bits)
        elif p.kind == "buffer" and loaded is not None and p.symbol in module_globals:
            values.append(loaded.global_address(g, p.symbol, p.data))
        elif p.kind == "buffer":
            data = np.frombuffer(p.data or b"", dtype=np.uint8)
            if p.per_block:
                data = np.tile(data, blocks)
            # Constant tables (read-only) and alloca slabs (scoped to a tile block) start
            # from their initial bytes at every launch; nothing is read back.
            values.append(binding.place(np.ascontiguousarray(data), f"buffer {p.symbol or p.name}", read_only=True))
        elif p.name == "global_scratch":
            values.append(_scratch(binding, compiled.metadata, "global", blocks * compiled.num_ctas))
        else:
            values.append(_scratch(binding, compiled.metadata, "profile", blocks * compiled.num_ctas))
    kernel = g.kernel(compiled.cubin, compiled.name, "Triton", slots, compiled.shared)
    cluster = (compiled.num_ctas, 1, 1) if compiled.num_ctas > 1 else None
    return Prepared(kernel, (32 * compiled.num_warps, 1, 1), compiled.shared, cluster, abi.c_values(slots, values))


def _tuning() -> dict[str, Any]:
    """Triton options forced for every compile (num_warps, num_stages, ...) from the JSON
    object in TILEIR_TRITON_OPTIONS: how benchmarks/gpu.py measures the alternatives to the
    lowering's own choice (`compiler.lower.codegen.launch_options`)."""
    text = os.environ.get("TILEIR_TRITON_OPTIONS", "").strip()
    if not text:
        return {}
    import json

    try:
        options = json.loads(text)
    except ValueError as exc:
        raise _launch_error(f"TILEIR_TRITON_OPTIONS is not a JSON object: {exc}") from None
    if not isinstance(options, dict):
        raise _launch_error('TILEIR_TRITON_OPTIONS must be a JSON object, e.g. {"num_warps": 8}')
    return options


def _scratch(binding: Binding, metadata: dict[str, Any], kind: str, count: int) -> int:
    size = int(metadata.get(f"{kind}_scratch_size", 0) or 0)
    if size <= 0:
        return 0
    return binding.alloc(size * count, f"Triton's {kind} scratch")


def prepare_tileiras(
    g: Gpu, module: Module, entry: Operation, dims: tuple[int, int, int], binding: Binding, arch: str | None = None
) -> Prepared:
    """Compile `module` with tileiras (cached) and load `entry`'s kernel."""
    from .tileiras import compile_tileiras

    name = kernel_name(entry)
    built = compile_tileiras(module, arch or g.arch)
    info = built.info.kernels.get(name)
    if info is None:
        found = ", ".join(sorted(built.info.kernels)) or "none"
        raise _launch_error(f"the tileiras cubin has no kernel {name} (it has: {found})")
    slots = abi.slots_tileiras(entry)
    # Loaded once per Module object: the cubin holds the module's globals (see Gpu.kernel).
    kernel = g.kernel(built.cubin, name, "tileiras", slots, owner=module)
    # As cuTile launches them: the driver takes a tile kernel's thread count from its launch
    # metadata. Measured on an H200 (driver 580): block (1, 1, 1) and block = REQNTID give the
    # same results and times; TILEIR_TILEIRAS_BLOCK=reqntid selects the latter.
    block = (1, 1, 1)
    if not info.tile_kernel or os.environ.get("TILEIR_TILEIRAS_BLOCK") == "reqntid":
        block = info.reqntid or info.max_threads or (128, 1, 1)
    values = [v.bits for v in binding.values]
    return Prepared(kernel, block, 0, None, abi.c_values(slots, values))


def _check_abi(cubin: bytes, name: str, slots: list[abi.Slot], compiler: str) -> None:
    from ..lower.cubin import CubinError, read_cubin

    try:
        info = read_cubin(cubin).kernels.get(name)
        if info is None:
            raise LaunchError(f"the {compiler} cubin has no kernel {name}", kind="device")
        abi.check_layout(slots, info.params, name, compiler)
    except (CubinError, ValueError) as e:
        raise LaunchError(f"internal error: {e}", kind="device") from None


def run(
    module: Module,
    entry: Operation,
    dims: tuple[int, int, int],
    args: Sequence[Any],
    backend: str,
    *,
    arch: str | None = None,
    warmup: int = 0,
    repeat: int = 1,
) -> tuple[list[float], int]:
    """Bind `args`, prepare the kernel for `backend` ("triton" or "tileiras"), launch it
    `warmup + repeat` times, copy results back; (kernel seconds of the timed launches, bytes
    of array arguments)."""
    g = gpu()
    binding = bind(g, entry, args)
    try:
        prep = (prepare_triton if backend == "triton" else prepare_tileiras)(g, module, entry, dims, binding, arch)
        what = f"running kernel @{kernel_name(entry)} on {backend}"
        times = []
        if dims[0] * dims[1] * dims[2] > 0:
            for i in range(warmup + repeat):
                t = g.launch(prep.kernel, dims, prep.block, prep.shared, prep.cluster, prep.values, what)
                if i >= warmup:
                    times.append(t)
        binding.finish()
    except BaseException:
        if _POISONED is None:
            binding.release()
        else:  # CUDA gave up on the context: these buffers cannot be freed
            keep_forever(binding.buffers)
        raise
    return times, binding.moved


# --------------------------------------------------------------------------------------------
# GPU arrays on the CPU backends


def host_copies(args: Sequence[Any]) -> tuple[list[Any], Any]:
    """`args` (which hold a GPU array: `devarray.holds_device_array`) with every GPU array
    replaced by a NumPy copy, for the CPU backends, and a function that copies the results
    back into the GPU arrays."""
    g = gpu()
    back: list[tuple[DeviceArray, np.ndarray]] = []

    def to_host(a: Any) -> Any:
        dev = device_array(a.array if isinstance(a, StridedArray) else a)
        if dev is None:
            return a
        g.sync()
        lo, count = dev.span()
        raw = np.empty(count, dtype=dev.dtype)
        g.download(raw, dev.ptr + lo * dev.dtype.itemsize)
        view = np.lib.stride_tricks.as_strided(
            raw[-lo:] if lo else raw, dev.shape, [s * dev.dtype.itemsize for s in dev.strides]
        )
        if not dev.readonly:
            back.append((dev, raw))
        return StridedArray(view) if dev.strides != tuple(c_strides(dev.shape)) else view

    out = []
    for a in args:
        if isinstance(a, ArrayTable):
            out.append(ArrayTable(tuple(to_host(x) for x in a.arrays)))
        else:
            out.append(to_host(a))

    def restore() -> None:
        for dev, raw in back:
            lo, _ = dev.span()
            g.upload(dev.ptr + lo * dev.dtype.itemsize, raw)

    return out, restore
