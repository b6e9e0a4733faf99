"""Running the generated Triton source under Triton's interpreter (`TRITON_INTERPRET=1`),
on the CPU: a third-party executor of our translation, for machines without a GPU.

    from compiler.runtime.interpret import run
    run(module, "vector_add", grid=(4,), args=[a, n, 1, b, n, 1, c, n, 1])

Arguments are checked and converted exactly as the CPU backend does (`compiler.runtime`):
NumPy arrays for pointers (updated in place; Triton's interpreter works on CPU torch
tensors, which share the arrays' memory), scalars typed by the kernel's parameters (floats
passed as their bits, see `codegen`). A `global`'s storage is an array kept per Module
object (`compiler.interp.machine.loaded_state`): initialized at the Module's first launch on
this backend, it keeps what each launch wrote for the next (spec 003, 6.2.1: initialized
exactly once). Constant tables and `alloca` slabs are fresh per launch.

What Triton's interpreter cannot run: inline PTX (`tl.inline_asm_elementwise`), libdevice,
bf16 atomic adds — kernels whose exact path needs them are refused with the op's name
(`KernelSource.not_interpretable`).
Undefined behaviour (an access outside every array) is not caught: the interpreter reads
and writes host memory directly.

Failures are reported as the CPU backend reports them, as an InterpError naming the Tile IR
line: a failed `assert` (`tl.device_assert`, which Triton runs only with its `debug` option,
set here as the GPU build sets it), a broken `assume` (`tl.assume`, which the interpreter
checks), and a store to a read-only array. The kernel cannot tell cheaply which of its stores
hit which array, so a read-only array (and the memory a read-only strided view spans) is
passed as a copy and compared with the original after the run: any change is such a store
(reported with the argument, not the op), and the caller's array is never written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..interp import InterpError, RunOptions, dtypes
from ..interp.machine import op_where
from ..interp.memory import unpack_nibbles_into
from ..ir.core import Module, Operation
from ..ir.types import IntegerType, PointerType, TileType
from ..lower.build import import_kernel, require_triton
from ..lower.codegen import KernelSource, LowerError, Target, lower_entry
from ..modules import LaunchError
from .binding import ArgumentChecks, ArrayTable, StridedArray, array_table

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


def _strided_span(array: np.ndarray, where: str) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """A strided array as it lies in memory: the bytes it spans, from its first element on
    (the kernel is told the strides). Where that memory is read-only (the CPU backend's test:
    the buffer's flag, not the view's), the bytes of a copy: (the bytes, the copy) come back
    too, for `_read_only_error`."""
    window = StridedArray.window(array)
    if window is None:
        raise LaunchError(f"{where}: this strided array is not a view of one contiguous NumPy buffer")
    data, offset = window
    copy = None
    if not data.flags.writeable:
        copy = (data, data.copy())
        data = copy[1]
    return data[offset:], copy


def _strided_view(array: np.ndarray, signature: str, where: str) -> tuple[Any, tuple[np.ndarray, np.ndarray] | None]:
    """`_strided_span` as a tensor of the parameter's `signature`."""
    span, copy = _strided_span(array, where)
    size = max(array.itemsize, 1)
    return _torch_view(span[: len(span) // size * size], signature), copy


def _placed(
    arg: np.ndarray,
    index: int,
    write_back: list[tuple[np.ndarray, np.ndarray]],
    read_only: list[tuple[int, np.ndarray, np.ndarray, bool]],
) -> np.ndarray:
    """Argument `index`, an array, as the kernel gets it: itself, or, where it is not
    C-contiguous or not writeable, a contiguous copy, written back after the run (or, read
    only, checked for stores)."""
    if arg.flags.c_contiguous and arg.flags.writeable:
        return arg
    placed = np.ascontiguousarray(arg).copy()
    if arg.flags.writeable:
        write_back.append((arg, placed))
    else:
        read_only.append((index, arg, placed, True))
    return placed


def _array_table(
    table: ArrayTable,
    element: PointerType,
    where: str,
    write_back: list[tuple[np.ndarray, np.ndarray]],
    read_only: list[tuple[int, np.ndarray, np.ndarray, bool]],
    index: int,
    keep: list[np.ndarray],
) -> np.ndarray:
    """The i64 rows of a cuTile array list (`binding.array_table`) with host addresses: Triton's
    interpreter reads and writes host memory at the addresses the kernel loads from the table.
    Each array is placed as an array argument is (`_placed`, `_strided_span`); what is placed
    is kept alive in `keep` until the run has ended: the kernel reads it by address only."""

    def place(array: np.ndarray, dev: Any, strided: bool, j: int, at: str) -> int:
        if dev is not None:
            raise LaunchError(f"{at}: a GPU array, which the triton-interpret backend cannot read")
        if array.dtype.name in ("float4_e2m1fn", "int4", "uint4"):
            raise LaunchError(f"{at}: 4-bit elements in an array list run on the cpu backend")
        if strided:
            placed, copy = _strided_span(array, at)
            if copy is not None:
                read_only.append((index, *copy, False))
        else:
            placed = _placed(array, index, write_back, read_only)
        keep.append(placed)
        return int(placed.__array_interface__["data"][0])

    return array_table(table, element, where, place)


def _read_only_error(src: KernelSource, checks: list[tuple[int, np.ndarray, np.ndarray, bool]]) -> InterpError | None:
    """The CPU backend's error for a store to a read-only array, for the first argument whose
    copy the run changed (`checks`: index, original, the copy the kernel got, whether they
    are the array itself rather than the bytes a strided view spans); None if none changed.
    Compared as bytes (a NaN is not equal to itself as a float); a store of the bytes already
    there changes nothing and goes unnoticed."""
    for i, original, copy, whole in checks:
        before = np.ascontiguousarray(original).reshape(-1).view(np.uint8)
        after = copy.reshape(-1).view(np.uint8)
        if np.array_equal(before, after):
            continue
        what = f"store to the constant argument {i} (a read-only array)"
        if whole and original.size:
            changed = (before.reshape(original.size, -1) != after.reshape(original.size, -1)).any(axis=1)
            first = np.unravel_index(int(np.argmax(changed)), original.shape)
            what += f" at element {tuple(int(k) for k in first)} of the array"
        return InterpError(f"kernel @{src.kernel}: {what} under Triton's interpreter; the array was not changed")
    return None


def _failure(module: Module, src: KernelSource, code_file: str, exc: BaseException) -> InterpError:
    """A failure inside Triton's interpreter (which wraps the exception raised in the kernel,
    once per jitted call it unwinds through, in `InterpreterError`) as the CPU backend reports
    it: with the op of the innermost generated line the failure passed through (the lines map
    to their ops: `KernelSource.op_at`) and the tile block."""
    import triton.runtime.interpreter as interpreter

    from ..interp.machine import op_where, quote_message

    # Each exception's traceback runs from where it was caught to where it was raised: the
    # frames innermost first are the root cause's, newest first, then each wrapper's.
    chain = [exc]
    while chain[-1].__cause__ is not None:
        chain.append(chain[-1].__cause__)
    root = chain[-1]
    frames = []
    for e in reversed(chain):
        tb, mine = e.__traceback__, []
        while tb is not None:
            mine.append((tb.tb_frame, tb.tb_lineno))
            tb = tb.tb_next
        frames += reversed(mine)
    op = next(
        (o for f, line in frames if f.f_code.co_filename == code_file and (o := src.op_at(line)) is not None), None
    )
    grid_idx = getattr(interpreter.interpreter_builder, "grid_idx", None)
    block = f" (tile block ({', '.join(map(str, grid_idx))}))" if grid_idx is not None else ""
    name = op.name if op is not None else ""
    if name == "cuda_tile.assert":
        message = getattr(op.attr("message"), "value", "")  # type: ignore[union-attr]
        text = f"assertion failed: {quote_message(message)}{_failed_element(frames)}{block}"
    elif name == "cuda_tile.assume":
        pred = op.attr("predicate")  # type: ignore[union-attr]
        what = pred.body() if hasattr(pred, "body") else "the predicate"
        # (Tile IR leaves a broken promise undefined; Triton's interpreter checks tl.assume.)
        text = f"assumed {what} does not hold{block}: undefined behaviour, caught by Triton's interpreter"
    elif isinstance(root, OverflowError):  # its f16 atomics convert through a checked half type
        text = (
            f"Triton's interpreter cannot compute this result{block}: {root} (a value past the type's "
            "range, e.g. an f16 atomic add reaching inf; IEEE gives inf, and the cpu backend computes it)"
        )
    else:
        text = f"Triton's interpreter failed{block}: {root!r}"
    if op is None:
        return InterpError(f"kernel @{src.kernel}: {text}")
    return InterpError(text, op=op.mnemonic, where=op_where(module, op))


def _failed_element(frames: list[tuple[Any, int]]) -> str:
    """` at element (i, ...)`: the first element of a tile whose condition is false, read from
    the interpreter's `create_assert` frame (`condition`, a handle over a NumPy array), as
    the CPU backend names it; empty for a 0-d condition or where that frame is not found."""
    for f, _ in frames:
        if f.f_code.co_name == "create_assert":
            data = getattr(f.f_locals.get("condition"), "data", None)
            if isinstance(data, np.ndarray) and data.ndim and not data.all():
                first = np.unravel_index(int(np.argmin(data.astype(bool))), data.shape)
                return f" at element {tuple(int(k) for k in first)}"
    return ""


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
    LowerError for what cannot be lowered or interpreted, InterpError for what fails in the
    run (a failed assert, a broken assume, a store to a read-only array: module doc), as the
    CPU backend raises it, and LaunchError for bad arguments."""

    require_triton()
    try:
        import torch  # noqa: F401
    except ImportError:
        raise LowerError("Triton's interpreter needs PyTorch (pip install torch; the CPU build is enough)") from None
    src = source or lower_entry(module, entry, Target.parse(None))
    blockers = src.not_interpretable()
    if blockers:
        asm = [b for b in blockers if b not in src.interpreter_lacks]
        needs = ([f"inline PTX or libdevice for {', '.join(asm)}"] if asm else []) + src.interpreter_lacks
        raise LowerError(
            f"kernel @{src.kernel} needs {' and '.join(needs)}, which Triton's "
            "interpreter cannot run; use the cpu backend, or compile it (tileir compile) and run it on a GPU"
        )
    patch_interpreter()
    fn = import_kernel(src, interpret=True)
    params = entry.regions[0].blocks[0].arguments
    storage = global_storage(module, src, "triton-interpret")
    binder = ArgumentChecks()
    call: list[Any] = []
    write_back: list[tuple[np.ndarray, np.ndarray]] = []
    unpack_back: list[tuple[np.ndarray, np.ndarray]] = []  # 4-bit arrays: (the caller's, packed)
    # (argument index, the read-only array or the bytes of a read-only strided view, the copy
    # the kernel gets, which of the two): checked after the run (module doc).
    read_only: list[tuple[int, np.ndarray, np.ndarray, bool]] = []
    keep: list[np.ndarray] = []  # copies an array table points into
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
        where = binder.where(i, param)
        if isinstance(element, PointerType):
            if isinstance(arg, ArrayTable):
                table = _array_table(arg, element, where, write_back, read_only, i, keep)
                call.append(_torch_view(table, p.signature))
                continue
            if isinstance(arg, StridedArray):
                binder.check_dtype(where, element, arg.array.dtype)
                view, copy = _strided_view(arg.array, p.signature, where)
                if copy is not None:
                    read_only.append((i, *copy, False))
                call.append(view)
                continue
            if not isinstance(arg, np.ndarray):
                raise LaunchError(
                    f"{where}: the triton-interpret backend takes NumPy arrays, StridedArray or ArrayTable for "
                    f"pointers, got {type(arg).__name__} (raw addresses run on the cpu backend)"
                )
            binder.check_dtype(where, element, arg.dtype)
            if dtypes.memory_bits(element.pointee) == 4:
                # Two to a byte in memory, as on every backend: a packed copy (unpacked back).
                placed = binder.packed(where, arg, words=True)
                if arg.flags.writeable:
                    unpack_back.append((arg, placed))
                call.append(_torch_view(placed, p.signature))
                continue
            call.append(_torch_view(_placed(arg, i, write_back, read_only), p.signature))
        else:
            value = binder.scalar(i, param, element, arg)
            call.append(_scalar_bits(value, element))
    import triton.runtime.interpreter as interpreter
    from triton.runtime.errors import InterpreterError

    builder = interpreter.interpreter_builder
    options = getattr(builder, "options", None)
    out = io.StringIO() if stdout is not None else None
    start = time.perf_counter()
    try:
        if src.options.get("debug") and dataclasses.is_dataclass(options):
            # `tl.device_assert` is a no-op unless `debug` is set (the GPU build sets it for
            # kernels with `assert`, see build.py); its overflow checks stay off (integers wrap).
            builder.options = dataclasses.replace(options, debug=True, sanitize_overflow=False)  # type: ignore[type-var]
        # NumPy's floating-point warnings (a NaN from sqrt(-1), an overflow to inf) say nothing:
        # the ops define those results, and the cpu backend prints none either.
        printed = contextlib.redirect_stdout(out) if out is not None else contextlib.nullcontext()
        with printed, np.errstate(all="ignore"):
            fn[grid](*call)
    except (InterpreterError, AssertionError) as exc:
        # (A bare AssertionError where Triton's front_end_debugging knob turns the wrapping off.)
        raise _failure(module, src, fn.fn.__code__.co_filename, exc) from None
    finally:
        if options is not None:
            builder.options = options
        for original, placed in write_back:
            original[...] = placed
        for original, placed in unpack_back:
            unpack_nibbles_into(original, placed)
        if out is not None:
            stdout.write(out.getvalue())
    elapsed = time.perf_counter() - start
    error = _read_only_error(src, read_only)
    if error is not None:
        raise error
    return elapsed


def run_launch(
    module: Module, entry: Operation, dims: tuple[int, int, int], args: Sequence[Any], options: RunOptions | None
) -> float:
    """`run` as `compiler.runtime.launch`'s triton-interpret backend: with `options`' stdout
    and time limit, and what cannot be lowered or interpreted a LaunchError (kind "backend");
    returns the wall time in seconds."""
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
    return elapsed


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
