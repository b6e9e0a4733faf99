"""cuTile Python's calling convention, so that kernels exported by cuTile run unchanged.

    from compiler.runtime import launch_cutile
    launch_cutile("vadd.tileirbc", grid=(4,), args=[a, b, c])      # as ct.launch(..., vadd, (a, b, c))

cuTile Python (pip `cuda-tile`, checked against 1.7, calling conventions `cutile_python_v1`
and `v2`, which lay out parameters alike) turns each Python argument of a `@ct.kernel` into
entry parameters, in argument order:

- an array of rank N (any object with a shape and strides: here a NumPy array) becomes
  1 + 2N parameters: its base pointer (`tile<ptr<T>>`), its N extents, then its N strides
  counted in elements, not bytes. Extents and strides have the array's index type: `i32`,
  or `i64` for an array annotated `ct.IndexedWithInt64`. Every extent and stride is passed
  even when the signature makes it a compile-time constant (`shape_constant`,
  `stride_constant`); the kernel then ignores the parameter. A 0-d array is its pointer alone.
- a scalar is one parameter: a Python int is `i32` (`i64` when annotated `ct.ScalarInt64`),
  a float `f32`, a bool `i32`.
- a compile-time constant (`ct.Constant[...]`, or a `ConstantConstraint` in an exported
  signature) is folded into the kernel and is not a parameter: leave it out here.
- a tuple (or a frozen dataclass) is its items (fields), flattened in order.
- a list of arrays is two parameters: a `tile<ptr<i64>>` to a table with one row per array
  of 1 + 2N i64 words (address, extents, strides) and the number of arrays (`i32`).

Since `launch` types every scalar by the kernel's parameter (and range-checks it), the
expansion here does not need to know which index type the kernel was compiled with.

Strides come from the array itself: a C-contiguous array is placed as is (strides of a
row-major layout); a strided view (a slice, a transpose, `np.broadcast_to`) is placed as
it lies in its buffer, with its real strides (`StridedArray`), so the kernel's view
arithmetic is exercised as on the GPU. An array with a negative stride (which cuTile
refuses: its arrays promise `stride >= 0`) or one whose strides are not whole elements is
passed as a C-contiguous copy with that copy's strides, copied back after the run.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from . import ArrayTable, LaunchError, StridedArray, _c_strides


def array_layout(a: np.ndarray) -> tuple[np.ndarray | StridedArray, list[int]]:
    """What to pass for `a`'s pointer, and its strides in elements as the kernel will see them."""
    if a.flags.c_contiguous:
        return a, _c_strides(a.shape)
    itemsize = a.itemsize
    strides = list(a.strides)
    if itemsize and all(s >= 0 and s % itemsize == 0 for s in strides) and StridedArray.window(a) is not None:
        return StridedArray(a), [s // itemsize for s in strides]
    return a, _c_strides(a.shape)  # `launch` passes a contiguous copy and copies it back


def array_params(a: np.ndarray) -> list[Any]:
    """The 1 + 2N parameters of a rank-N array: pointer, extents, strides (in elements)."""
    pointer, strides = array_layout(a)
    return [pointer, *(int(n) for n in a.shape), *strides]


def cutile_args(*args: Any) -> list[Any]:
    """The entry-parameter arguments for cuTile kernel arguments `args` (see the module doc)."""
    out: list[Any] = []
    for arg in args:
        _expand(arg, out)
    return out


def _expand(arg: Any, out: list[Any]) -> None:
    if isinstance(arg, StridedArray):
        a = arg.array
        out.extend([arg, *(int(n) for n in a.shape), *(s // a.itemsize for s in a.strides)])
    elif isinstance(arg, np.ndarray):
        out.extend(array_params(arg))
    elif isinstance(arg, tuple):
        for item in arg:
            _expand(item, out)
    elif isinstance(arg, list):
        if not all(isinstance(a, np.ndarray) for a in arg):
            kinds = sorted({type(a).__name__ for a in arg if not isinstance(a, np.ndarray)})
            raise LaunchError(f"a list argument must hold only arrays (cuTile's list of arrays), found {kinds}")
        out.extend([ArrayTable(tuple(array_layout(a)[0] for a in arg)), len(arg)])
    elif dataclasses.is_dataclass(arg) and not isinstance(arg, type):
        for f in dataclasses.fields(arg):
            _expand(getattr(arg, f.name), out)
    else:
        out.append(arg)  # a scalar: typed by its parameter at launch


__all__ = ["array_layout", "array_params", "cutile_args"]
