"""Launching kernels: `launch(module_or_path, kernel, grid, args, backend="cpu")`.

Arguments follow the kernel's parameters: a `tile<ptr<T>>` parameter takes a NumPy
array of T's storage dtype (placed in the simulated memory and updated in place) or
a raw address; a scalar parameter takes a Python or NumPy scalar, converted to the
parameter's type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..interp import InterpError, Machine, RunOptions
from ..interp import dtypes
from ..ir.core import Module, Operation
from ..ir.types import PointerType, TileType


class LaunchError(Exception):
    """A launch that cannot start: bad module, unknown kernel, arguments that do not fit."""


@dataclass(slots=True)
class LaunchResult:
    kernel: str
    grid: tuple[int, int, int]
    backend: str
    machine: Machine | None = None
    addresses: list[int | None] = field(default_factory=list)


def load_module(source: Module | str | Path) -> Module:
    """A verified module from a Module, a path to a `.tileir` file, or IR text."""
    if isinstance(source, Module):
        return source
    from ..ir.diagnostics import has_errors
    from ..verify import check_text

    if isinstance(source, Path) or ("\n" not in source and "{" not in source):
        path = Path(source)
        try:
            text = path.read_text()
        except OSError as e:
            raise LaunchError(f"{path}: cannot read: {e.strerror}") from None
        name = str(path)
    else:
        text, name = source, "<input>"
    result, diagnostics = check_text(text, name)
    if has_errors(diagnostics):
        first = next(d for d in diagnostics if d.severity.name == "ERROR")
        raise LaunchError(first.format(result.module.source) if hasattr(first, "format") else str(first))
    return result.module


def find_kernel(module: Module, kernel: str | None) -> Operation:
    entries = module.entries()
    names = [e.properties["sym_name"].value for e in entries]  # type: ignore[attr-defined]
    if kernel is None:
        if len(entries) == 1:
            return entries[0]
        raise LaunchError(f"the module has {len(entries)} kernels ({', '.join(names) or 'none'}); name one")
    for e, n in zip(entries, names, strict=True):
        if n == kernel:
            return e
    raise LaunchError(f"no kernel named {kernel!r}; the module has: {', '.join(names) or 'none'}")


def _grid(grid: int | Sequence[int]) -> tuple[int, int, int]:
    dims = [grid] if isinstance(grid, int) else list(grid)
    if not 1 <= len(dims) <= 3 or any(int(d) < 1 for d in dims):
        raise LaunchError(f"grid must be 1 to 3 positive extents, got {tuple(dims)}")
    dims += [1] * (3 - len(dims))
    return int(dims[0]), int(dims[1]), int(dims[2])


def launch(
    module_or_path: Module | str | Path,
    kernel: str | None = None,
    grid: int | Sequence[int] = 1,
    args: Sequence[Any] = (),
    backend: str = "cpu",
    *,
    options: RunOptions | None = None,
) -> LaunchResult:
    """Run `kernel` over `grid` with `args`; arrays passed for pointers are updated in place.
    Raises `LaunchError` when the launch cannot start and `InterpError` for what goes
    wrong while the kernel runs."""
    if backend != "cpu":
        raise LaunchError(f"unknown backend {backend!r}; available: cpu")
    module = load_module(module_or_path)
    entry = find_kernel(module, kernel)
    dims = _grid(grid)
    machine = Machine(module, options=options)
    params = entry.regions[0].blocks[0].arguments
    if len(args) != len(params):
        raise LaunchError(f"kernel {kernel or ''} takes {len(params)} arguments, got {len(args)}".replace("  ", " "))
    values: list[Any] = []
    write_back: list[tuple[np.ndarray, np.ndarray]] = []
    addresses: list[int | None] = []
    for i, (param, arg) in enumerate(zip(params, args, strict=True)):
        t = param.type
        element = t.element if isinstance(t, TileType) else t
        if isinstance(element, PointerType) and isinstance(arg, np.ndarray):
            want = dtypes.memory_dtype(element.pointee)
            if arg.dtype != want and not (arg.dtype.kind in "iu" and arg.dtype.itemsize == want.itemsize
                                          and want.kind in "iu"):
                raise LaunchError(f"argument {i}: array of {arg.dtype} for a parameter of type {t}")
            placed = arg if arg.flags.c_contiguous and arg.flags.writeable else np.ascontiguousarray(arg)
            if placed is not arg:
                write_back.append((arg, placed))
            address = machine.memory.place(placed, name=f"argument {i}")
            addresses.append(address)
            values.append(np.array([address], dtype=dtypes.POINTER_DTYPE))
        else:
            dtype = dtypes.storage_dtype(t)
            try:
                scalar = np.array([arg]).astype(dtype) if dtype.kind == "f" or dtype.kind == "V" else None
                if scalar is None:
                    v = int(arg)
                    bits = dtype.itemsize * 8
                    if dtype == np.bool_:
                        scalar = np.array([bool(v)])
                    elif not -(1 << (bits - 1)) <= v < (1 << bits):
                        raise LaunchError(f"argument {i}: {v} does not fit parameter type {t}")
                    else:
                        scalar = np.array([v & ((1 << bits) - 1)], dtype=np.uint64).astype(dtype)
            except (TypeError, ValueError) as e:
                raise LaunchError(f"argument {i}: {arg!r} is not a value of type {t}: {e}") from None
            addresses.append(None)
            values.append(scalar)
    try:
        machine.run(entry, dims, values)
    finally:
        for original, placed in write_back:
            original[...] = placed
    name = entry.properties["sym_name"].value  # type: ignore[attr-defined]
    return LaunchResult(name, dims, backend, machine, addresses)


__all__ = ["InterpError", "LaunchError", "LaunchResult", "find_kernel", "launch", "load_module"]
