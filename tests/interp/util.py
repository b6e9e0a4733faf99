"""Run a kernel body on the interpreter and read back its SSA values, without memory ops.

    from tests.interp.util import eval_kernel, kernel
    out = eval_kernel(kernel('''
        %c = constant <i32: 7> : tile<i32>
        %s = addi %c, %c : tile<i32>
    '''))
    out["s"]  # array([14], dtype=int32): shape (1,), the leading axis is the group axis

`eval_kernel(text, grid_positions=..., args=...) -> dict[str, np.ndarray]` verifies the
module (an AssertionError with the diagnostics if it does not), runs its single entry
once for a *group* of tile blocks (one block per entry of `grid_positions`, all
executing together) and returns every named SSA value of the entry's frame: block
arguments and op results, keyed by their name without `%`. Values keep the
interpreter's layout: a leading group axis of length G (the number of positions) or 1
where the value is uniform across the group. Values defined inside regions are
included when they were computed in the entry's own frame (no divergence).

`kernel(body, params="")` wraps op lines into a module with one entry `@k`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from compiler.interp import Frame, Group, Machine, dtypes
from compiler.ir.core import Module, Operation
from compiler.ir.diagnostics import has_errors
from compiler.verify import check_text


def kernel(body: str, params: str = "", name: str = "k") -> str:
    """A module text with one entry `@name(params)` whose body is `body` (`return` added)."""
    lines = "\n".join("    " + line.strip() for line in body.strip().splitlines())
    return f"cuda_tile.module @m {{\n  entry @{name}({params}) {{\n{lines}\n    return\n  }}\n}}\n"


def _load(text: str) -> Module:
    result, diagnostics = check_text(text, "<test>")
    if has_errors(diagnostics):
        raise AssertionError("kernel does not verify:\n" + "\n".join(str(d) for d in diagnostics))
    return result.module


def _entry(module: Module, name: str | None) -> Operation:
    entries = module.entries()
    if name is None:
        assert len(entries) == 1, "name the kernel: the module has several"
        return entries[0]
    return next(e for e in entries if e.properties["sym_name"].value == name)  # type: ignore[attr-defined]


def _arg_value(value: Any, param_type: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value
    dtype = dtypes.storage_dtype(param_type)
    if dtype == np.bool_:
        return np.array([bool(value)])
    if dtype.kind == "i":
        bits = dtype.itemsize * 8
        return np.array([int(value) & ((1 << bits) - 1)], dtype=np.uint64).astype(dtype)
    return np.array([value]).astype(dtype)


def eval_kernel(
    text: str,
    grid_positions: Sequence[tuple[int, int, int] | int] = ((0, 0, 0),),
    args: Sequence[Any] = (),
    grid: tuple[int, int, int] | None = None,
    kernel_name: str | None = None,
) -> dict[str, np.ndarray]:
    """Run the entry of `text` once for the group of tile blocks at `grid_positions`
    ((x, y, z) tuples, or ints for x alone) and return its named values (see module doc).

    `args` bind the entry's parameters: an ndarray is used as is (give it the group axis:
    shape (1, *S) or (G, *S)); a Python/NumPy scalar becomes a (1,) array of the
    parameter's storage dtype (integers wrap to its width). `grid` (what
    `get_num_tile_blocks` reports) defaults to the smallest grid holding the positions.
    Errors (`InterpError`) propagate unchanged; failed asserts raise after the body, as
    in `Machine.run`."""
    module = _load(text)
    entry = _entry(module, kernel_name)
    positions = [(p, 0, 0) if isinstance(p, int) else tuple(p) for p in grid_positions]
    xs, ys, zs = (np.array([p[i] for p in positions], dtype=np.int32) for i in range(3))
    machine = Machine(module)
    machine.grid = grid or (int(xs.max()) + 1, int(ys.max()) + 1, int(zs.max()) + 1)
    body = entry.regions[0].blocks[0]
    frame = Frame(Group(xs, ys, zs))
    for param, value in zip(body.arguments, args, strict=True):
        frame.env[param] = _arg_value(value, param.type)
    # Linear ids (x fastest), as the race tracker of the memory ops numbers blocks; give
    # positions in increasing linear order when the kernel accesses memory.
    gx, gy, _ = machine.grid
    linear = xs.astype(np.int64) + gx * (ys.astype(np.int64) + gy * zs.astype(np.int64))
    machine.memory.begin_group(int(linear.min()), int(linear.max() - linear.min()) + 1)
    with np.errstate(all="ignore"):  # as `Machine.run` runs the ops
        machine.exec_block(body, frame)
    if getattr(machine, "assert_failures", None):  # `run` reports failed asserts at the end
        raise machine._assert_error()
    out: dict[str, np.ndarray] = {}
    for param in body.arguments:
        if param.name is not None:
            out[param.name] = frame.env[param]
    for op in entry.walk():
        for r in op.results:
            if r.name is not None and r in frame.env:
                out[r.name] = frame.env[r]
    return out


__all__ = ["eval_kernel", "kernel"]
