"""Running the generated Triton source under Triton's interpreter (`TRITON_INTERPRET=1`),
on the CPU: a third-party executor of our translation, for machines without a GPU.

    from compiler.lower.interpret import run
    run(module, "vector_add", grid=(4,), args=[a, n, 1, b, n, 1, c, n, 1])

Arguments are checked and converted exactly as the CPU backend does (`compiler.runtime`):
NumPy arrays for pointers (updated in place; Triton's interpreter works on CPU torch
tensors, which share the arrays' memory), scalars typed by the kernel's parameters (floats
passed as their bits, see `codegen`). A `global`'s storage is an array kept per Module
object (`compiler.interp.machine.loaded_state`): initialized at the Module's first launch on
this backend, it keeps what each launch wrote for the next (spec 003, 6.2.1: initialized
exactly once). Constant tables and `alloca` slabs are fresh per launch.

What Triton's interpreter cannot run: inline PTX (`tl.inline_asm_elementwise`) — kernels
whose exact path needs it are refused with the op's name (`KernelSource.inline_asm`).
Undefined behaviour (an access outside every array) is not caught: the interpreter reads
and writes host memory directly.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..interp import dtypes
from ..ir.core import Module, Operation
from ..ir.types import IntegerType, PointerType, TileType
from .codegen import KernelSource, LowerError, Target

_SIGNED = {1: np.int8, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_TORCH_BY_SIG = {
    "*i8": "int8", "*i16": "int16", "*i32": "int32", "*i64": "int64", "*u8": "uint8",
    "*fp16": "float16", "*bf16": "bfloat16", "*fp32": "float32", "*fp64": "float64",
}  # fmt: skip


def patch_interpreter() -> None:
    """Compatibility with NumPy ≥ 2.4 (Triton 3.6's interpreter): a 0-d tensor used as a
    `range` bound is converted by `__index__ = int(handle.data)`, and NumPy 2.4 no longer
    converts a 1-element 1-d array to int. Read the element instead."""
    import triton.runtime.interpreter as ti

    if getattr(ti._patch_lang_tensor, "_tileir_patched", False):
        return
    original = ti._patch_lang_tensor

    def patched(tensor: Any, scope: Any) -> None:
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).reshape(-1)[0]))

    patched._tileir_patched = True  # type: ignore[attr-defined]
    ti._patch_lang_tensor = patched


def _torch_view(array: np.ndarray, signature: str) -> Any:
    """A CPU torch tensor over `array`'s bytes (C-contiguous), of the element type the
    kernel's pointer has: Triton's interpreter reads only its address and dtype."""
    import torch

    raw = torch.from_numpy(array.reshape(-1).view(np.uint8))
    return raw.view(getattr(torch, _TORCH_BY_SIG[signature]))


def _strided_view(array: np.ndarray, signature: str, where: str) -> Any:
    """A strided array as it lies in memory: a tensor over the bytes it spans, starting at
    its first element (the kernel is told the strides)."""
    from ..runtime import LaunchError, StridedArray

    window = StridedArray.window(array)
    if window is None:
        raise LaunchError(f"{where}: this strided array is not a view of one contiguous NumPy buffer")
    data, offset = window
    size = max(array.itemsize, 1)
    span = data[offset:]
    return _torch_view(span[: len(span) // size * size], signature)


def _scalar_bits(value: np.ndarray, element: Any) -> int:
    """The Python int Triton's interpreter receives for a converted scalar: its value for
    integers (signed reading), its bits for floats."""
    v = np.asarray(value).reshape(-1)[:1]
    if isinstance(element, IntegerType):
        if element.width == 1:
            return int(bool(v[0]))
        return int(v.view(_SIGNED[element.width])[0]) if v.dtype.itemsize * 8 == element.width else int(v[0])
    width = max(v.dtype.itemsize, 1)
    return int(v.view(np.dtype(f"i{width}"))[0])


def global_storage(module: Module, src: KernelSource, backend: str) -> dict[str, np.ndarray]:
    """The storage (contiguous bytes) of the globals `src` uses, kept per Module object for
    `backend` and shared by all its kernels: each is made from the global's initial bytes
    the first time a kernel of the Module uses it, then kept."""
    from ..interp.machine import loaded_state

    state = loaded_state(module, backend)
    initial = {p.symbol: p.data for p in src.params if p.kind == "buffer"}
    out = {}
    for symbol in src.global_symbols():
        data = state.get(symbol)
        if data is None:
            # At least 8 bytes, as for every hidden buffer here (a view needs an element).
            raw = initial[symbol]
            data = state[symbol] = np.frombuffer(raw, dtype=np.uint8).copy() if raw else np.zeros(8, np.uint8)
        out[symbol] = data
    return out


def run(
    module: Module,
    entry: Operation,
    grid: tuple[int, int, int],
    args: Sequence[Any],
    *,
    source: KernelSource | None = None,
    stdout: Any = None,
) -> float:
    """Run `entry` under Triton's interpreter; returns the wall time in seconds. Raises
    LowerError for what cannot be lowered or interpreted, LaunchError for bad arguments."""
    from ..runtime import ArgumentChecks, LaunchError, StridedArray, _param_text
    from .build import import_kernel, require_triton
    from .codegen import lower_entry

    require_triton()
    try:
        import torch  # noqa: F401
    except ImportError:
        raise LowerError("Triton's interpreter needs PyTorch (pip install torch; the CPU build is enough)") from None
    src = source or lower_entry(module, entry, Target.parse(None))
    blockers = src.not_interpretable()
    if blockers:
        raise LowerError(
            f"kernel @{src.kernel} needs inline PTX or libdevice for {', '.join(blockers)}, which Triton's "
            "interpreter cannot run; use the cpu backend, or compile it (tileir compile) and run it on a GPU"
        )
    patch_interpreter()
    fn = import_kernel(src, interpret=True)
    params = entry.regions[0].blocks[0].arguments
    storage = global_storage(module, src, "triton-interpret")
    binder = ArgumentChecks()
    call: list[Any] = []
    write_back: list[tuple[np.ndarray, np.ndarray]] = []
    for p in src.params:
        if p.kind == "scratch":
            continue
        if p.kind == "buffer":
            if p.symbol in storage:
                call.append(_torch_view(storage[p.symbol], p.signature))
                continue
            data = np.frombuffer(p.data or b"", dtype=np.uint8)
            if p.per_block:
                data = np.tile(data, grid[0] * grid[1] * grid[2])
            data = data.copy() if data.size else np.zeros(8, dtype=np.uint8)
            call.append(_torch_view(data, p.signature))
            continue
        i = p.index
        assert i is not None
        param, arg = params[i], args[i]
        t = param.type
        element = t.element if isinstance(t, TileType) else t
        where = f"argument {i} ({_param_text(param)})"
        if isinstance(element, PointerType):
            if isinstance(arg, StridedArray):
                binder.check_dtype(where, element, arg.array.dtype)
                call.append(_strided_view(arg.array, p.signature, where))
                continue
            if not isinstance(arg, np.ndarray):
                raise LaunchError(
                    f"{where}: the triton-interpret backend takes NumPy arrays or StridedArray for pointers, "
                    f"got {type(arg).__name__} (raw addresses and array tables run on the cpu backend)"
                )
            binder.check_dtype(where, element, arg.dtype)
            if dtypes.memory_bits(element.pointee) == 4:
                raise LaunchError(f"{where}: 4-bit element arrays are not supported by the triton-interpret backend")
            placed = arg
            if not arg.flags.c_contiguous or not arg.flags.writeable:
                placed = np.ascontiguousarray(arg).copy()
                if arg.flags.writeable:
                    write_back.append((arg, placed))
            call.append(_torch_view(placed, p.signature))
        else:
            value = binder.scalar(i, param, element, arg)
            call.append(_scalar_bits(value, element))
    out = io.StringIO() if stdout is not None else None
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out) if out is not None else contextlib.nullcontext():
            fn[grid](*call)
    except AssertionError as exc:
        raise LowerError(f"kernel @{src.kernel}: a device assertion failed under Triton's interpreter: {exc}") from None
    finally:
        for original, placed in write_back:
            original[...] = placed
        if out is not None:
            stdout.write(out.getvalue())
    return time.perf_counter() - start
