"""cuTile Python's calling convention, so that kernels exported by cuTile run unchanged.

    from compiler.runtime import launch_cutile
    launch_cutile("vadd.tileirbc", grid=(4,), args=[a, b, c])      # as ct.launch(..., vadd, (a, b, c))

cuTile Python (pip `cuda-tile`, checked against 1.7, calling conventions `cutile_python_v1`
and `v2`, which lay out parameters alike) turns each Python argument of a `@ct.kernel` into
entry parameters, in argument order:

- an array of rank N (a NumPy array, or a GPU array from torch, CuPy, JAX used in place on
  the GPU backends and copied for the CPU ones) becomes
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

`export_cutile(kernel, args)` exports a cuTile Python `@ct.kernel` function for one set of
arguments (cuTile's own `export_kernel`, which needs no GPU), specialised for them as cuTile's
own launch specialises (unit strides, extents of 1, what `ct.ArrayAnnotation`s name; base
addresses, strides and extents that are multiples of 16 bytes or 16; tuple
items annotated `ct.Constant` folded in): `launch_cutile` takes such a
function directly and runs the bytecode on any backend (`load_cutile`: exported and
verified, for every face that takes such a function). `cutile_kernels_in(path)` finds the
kernels of a Python file (`tileir run kernels.py -k K` runs one).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from typing import Any

import numpy as np

from ..modules import LaunchError, is_cutile_kernel  # is_cutile_kernel: exported here too, the runtime's users ask it
from .binding import ArrayTable, StridedArray, c_strides
from .devarray import device_array, host_array, is_device_array


def array_layout(a: np.ndarray) -> tuple[np.ndarray | StridedArray, list[int]]:
    """What to pass for `a`'s pointer, and its strides in elements as the kernel will see them."""
    if a.flags.c_contiguous:
        return a, c_strides(a.shape)
    itemsize = a.itemsize
    strides = list(a.strides)
    if itemsize and all(s >= 0 and s % itemsize == 0 for s in strides) and StridedArray.window(a) is not None:
        return StridedArray(a), [s // itemsize for s in strides]
    return a, c_strides(a.shape)  # `launch` passes a contiguous copy and copies it back


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
    host = host_array(arg)
    if host is not None:
        arg = host  # a CPU array of another library (torch, ...): its memory, as NumPy sees it
    dev = None if isinstance(arg, (np.ndarray, StridedArray, list, tuple)) else device_array(arg)
    if dev is not None:
        # A GPU array (torch, CuPy, JAX) is used in place: its strides as they are.
        out.extend([arg, *dev.shape, *dev.strides])
    elif isinstance(arg, StridedArray):
        a = arg.array
        out.extend([arg, *(int(n) for n in a.shape), *(s // a.itemsize for s in a.strides)])
    elif isinstance(arg, np.ndarray):
        out.extend(array_params(arg))
    elif isinstance(arg, tuple):
        for item in arg:
            _expand(item, out)
    elif isinstance(arg, list):
        arrays = [host_array(a) if host_array(a) is not None else a for a in arg]
        bad = sorted({type(a).__name__ for a in arrays if not isinstance(a, np.ndarray) and not is_device_array(a)})
        if bad:
            raise LaunchError(f"a list argument must hold only arrays (cuTile's list of arrays), found {bad}")
        items = tuple(array_layout(a)[0] if isinstance(a, np.ndarray) else a for a in arrays)
        out.extend([ArrayTable(items), len(arg)])
    elif dataclasses.is_dataclass(arg) and not isinstance(arg, type):
        for f in dataclasses.fields(arg):
            _expand(getattr(arg, f.name), out)
    else:
        out.append(arg)  # a scalar: typed by its parameter at launch


def _ct_dtype(ct: Any, dtype: np.dtype, where: str) -> Any:
    name = "bool_" if dtype == np.bool_ else dtype.name
    found = getattr(ct, name, None)
    if found is None or not isinstance(found, type(ct.float32)):
        raise LaunchError(f"{where}: cuTile has no element type for NumPy dtype {dtype}")
    return found


def export_cutile(
    kernel: Any, args: Any, *, specialise: bool = True, contiguous: bool = False
) -> tuple[bytes, list[Any]]:
    """(Tile IR bytecode of the cuTile `@ct.kernel` `kernel` exported for `args`, the arguments
    to launch it with: `args` less the compile-time constants).

    Parameter constraints come from the arguments: an array's dtype and rank (index type i32,
    or i64 where annotated `ct.IndexedWithInt64`), a scalar's type (a Python int is i32, or i64
    when annotated `ct.ScalarInt64` or too wide for i32; a float f32; a NumPy scalar its dtype),
    a list of arrays, a tuple of these; a `ct.Constant` parameter is folded in with its value.
    An array's extents and strides are compile-time constants where cuTile's own launch makes
    them so (`_constants`): the dimensions its `ct.ArrayAnnotation` names and, with
    `specialise` (the default: the module is launched with these very arguments), its unit
    strides and extents of 1, and what its base address, strides and extents are multiples
    of (`_divisibility`); without it (a module kept for other arrays, the notebook's
    `TileModule.from_cutile`) only the named ones. `contiguous`: the NumPy arrays stand for
    C-contiguous arrays of their shapes (the command line's placeholders, which take no
    memory). Raises LaunchError (kind "module") when cuTile is missing or refuses the kernel."""
    import io

    try:
        import cuda.tile as ct
        from cuda.tile.compilation import (
            ArrayConstraint,
            CallingConvention,
            KernelSignature,
            ListConstraint,
            ScalarConstraint,
            TupleConstraint,
            export_kernel,
        )
    except ImportError as e:
        raise LaunchError(
            f"running a cuTile kernel needs cuTile Python (pip install cuda-tile): {e}", kind="module"
        ) from None
    name = getattr(kernel._pyfunc, "__name__", "kernel")
    args = list(args)
    annotations = _annotations(kernel)
    if annotations and len(annotations) != len(args):
        raise LaunchError(f"cuTile kernel {name} takes {len(annotations)} arguments, got {len(args)}", kind="count")

    shape_constants = False  # (cuTile's v2 convention carries them; v1 refuses them)

    def array(
        found: tuple[np.dtype, list[tuple[int, ...]], list[tuple[int, ...]]], where: str, note: Any, align: int
    ) -> Any:
        """The constraint of an array (or of a list's arrays, which share it), with the
        compile-time extents and strides cuTile's own launch would give it (`_constants`)
        and, with `specialise`, what it knows they are multiples of (`_divisibility`; `align`:
        of the base address, in bytes)."""
        nonlocal shape_constants
        dtype, shapes, strides = found
        index = getattr(note, "index_dtype", None) or ct.int32
        if index == ct.int32:  # (what cuTile's launch refuses too: "stride is too big")
            for kind, values in (("extent", shapes), ("stride", strides)):
                big = [(d, v[d]) for v in values for d in range(len(v)) if not -(1 << 31) <= v[d] < (1 << 31)]
                if big:
                    raise LaunchError(
                        f"{where}: its {kind} {big[0][1]} (axis {big[0][0]}) does not fit its i32 index type; "
                        "annotate the parameter ct.IndexedWithInt64"
                    )
        shape_constant, stride_constant = _constants(shapes, strides, note, where, specialise)
        shape_constants = shape_constants or shape_constant is not None
        divisible = _divisibility(dtype, shapes, strides, shape_constant, stride_constant, align) if specialise else {}
        return ArrayConstraint(
            _ct_dtype(ct, dtype, where),
            len(shapes[0]),
            index_dtype=index,
            stride_lower_bound_incl=0,
            alias_groups=(),
            may_alias_internally=False,
            shape_constant=shape_constant,
            stride_constant=stride_constant,
            **divisible,
        )

    def layout(arg: Any) -> tuple[np.dtype, tuple[int, ...], tuple[int, ...], int] | None:
        """An array's element type, extents and strides in elements as the kernel will see
        them (`cutile_args`'s), whichever library holds it (NumPy; torch, CuPy or JAX on the
        CPU or the GPU), and what the base address it gets is a multiple of, in bytes (at
        most 16, what vector accesses ask); else None. A NumPy array (a CPU array of another
        library, a command line's placeholder) is copied to an allocation of its own, from
        its first element (a strided view's strides are not negative: `array_layout`), which
        the CUDA allocator aligns to 256 bytes or more; a GPU array is used where it lies. A
        0-d array is an array (cuTile's `ct.gather(x, ())` reads one: its pointer alone); a
        NumPy scalar (np.float32(2)) is a scalar."""
        host = host_array(arg)
        if host is not None:
            arg = host
        if isinstance(arg, StridedArray):
            a = arg.array
            return a.dtype, tuple(a.shape), tuple(s // a.itemsize for s in a.strides), _VECTOR_BYTES
        if isinstance(arg, np.ndarray):
            strides = c_strides(arg.shape) if contiguous else array_layout(arg)[1]
            return arg.dtype, tuple(int(n) for n in arg.shape), tuple(int(s) for s in strides), _VECTOR_BYTES
        dev = device_array(arg)
        if dev is None:
            return None
        align = min(dev.ptr & -dev.ptr, _VECTOR_BYTES) if dev.ptr else _VECTOR_BYTES
        return dev.dtype, tuple(dev.shape), tuple(dev.strides), align

    def constraint(arg: Any, where: str, note: Any) -> Any:
        array_note = getattr(note, "array", None)
        scalar_note = getattr(note, "scalar", None)
        found = layout(arg)
        if found is not None:
            return array((found[0], [found[1]], [found[2]]), where, array_note, found[3])
        if isinstance(arg, np.generic):
            return ScalarConstraint(_ct_dtype(ct, np.asarray(arg).dtype, where))
        if isinstance(arg, bool):
            return ScalarConstraint(ct.bool_)
        if isinstance(arg, int):
            wide = not -(1 << 31) <= arg < (1 << 31)
            return ScalarConstraint(getattr(scalar_note, "dtype", None) or (ct.int64 if wide else ct.int32))
        if isinstance(arg, float):
            return ScalarConstraint(getattr(scalar_note, "dtype", None) or ct.float32)
        if isinstance(arg, list) and arg:
            items = [layout(a) for a in arg]
            if any(item is None for item in items):
                raise LaunchError(f"{where}: a list argument must hold only arrays (cuTile's list of arrays)")
            kinds = list(dict.fromkeys((d, len(shape)) for d, shape, _, _ in items))  # type: ignore[misc]
            if len(kinds) > 1:  # one element type and rank for all: the kernel reads them all as one
                named = ", ".join(f"{d}[{'x'.join('?' * n)}]" for d, n in kinds)
                raise LaunchError(f"{where}: the arrays of a list must share one dtype and rank; got {named}")
            element = getattr(getattr(note, "list", None), "element", None)  # (its ArrayAnnotation)
            shapes, strides = [i[1] for i in items], [i[2] for i in items]  # type: ignore[index]
            align = min(i[3] for i in items)  # type: ignore[index]
            first = array((kinds[0][0], shapes, strides), where, element, align)
            return ListConstraint(first, alias_groups=(), elements_may_alias=False)
        if isinstance(arg, tuple):
            items = zip(arg, _item_notes(note, len(arg), where), strict=True)
            return TupleConstraint(
                tuple(
                    a if getattr(n, "constant", False) else constraint(a, f"{where}[{j}]", n)  # (a constant: as is)
                    for j, (a, n) in enumerate(items)
                )
            )
        raise LaunchError(f"{where}: cannot export a cuTile kernel for an argument of type {type(arg).__name__}")

    params: list[Any] = []
    runtime: list[Any] = []
    for i, arg in enumerate(args):
        note = annotations[i] if annotations else None
        if getattr(note, "constant", False):
            params.append(arg)  # folded into the kernel: not a parameter
            continue
        params.append(constraint(arg, f"argument {i} of cuTile kernel {name}", note))
        runtime.append(_without_constants(arg, note))
    buf = io.BytesIO()
    try:
        # cuTile's v2 convention where a tuple or a constant extent needs it (as cuTile's own
        # JAX support and launch choose; v1 refuses them), else v1, which every cuTile has.
        v2 = shape_constants or any(isinstance(p, (TupleConstraint, tuple)) for p in params)
        convention = CallingConvention.cutile_python_v2() if v2 else CallingConvention.cutile_python_v1()
        signature = KernelSignature(params, convention, symbol=name)
        # 13.4, as cuTile's own launch writes with a current tileiras (it takes the newest
        # version tileiras reads, 13.4 for tileiras 13.5): the same kernel it runs, since the
        # version changes code (`x ** n` of an integer n is fpowi from 13.4 on, pow before).
        # A cuTile too old to know 13.4 writes 13.3.
        try:
            export_kernel(kernel, [signature], buf, output_format="tileir_bytecode", bytecode_version="13.4")
        except ValueError as e:
            if "Unsupported bytecode version" not in str(e):
                raise
            buf = io.BytesIO()
            export_kernel(kernel, [signature], buf, output_format="tileir_bytecode", bytecode_version="13.3")
    except Exception as e:  # cuTile's own errors (a type error in the kernel, ...), as one line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise LaunchError(f"{_cutile_place(e)}cuTile could not export kernel {name}: {first}", kind="module") from None
    return buf.getvalue(), runtime


def _item_notes(note: Any, count: int, where: str) -> list[Any]:
    """The annotations of the items of a tuple argument: a `tuple[A, B]` annotation's items,
    a `tuple[A, ...]`'s one for each, else none. LaunchError for a tuple of another length
    than its annotation's."""
    items = getattr(note, "items", None)
    if items is not None:
        if len(items) != count:
            raise LaunchError(f"{where}: a tuple of {count} items, but its annotation has {len(items)}")
        return list(items)
    each = getattr(note, "each", None)
    return [each] * count


def _without_constants(arg: Any, note: Any) -> Any:
    """`arg` less the items its annotation makes compile-time constants (`tuple[ct.Constant[int],
    int]`): folded into the kernel, they are not parameters."""
    if not isinstance(arg, tuple):
        return arg
    notes = _item_notes(note, len(arg), "")
    return tuple(_without_constants(a, n) for a, n in zip(arg, notes, strict=True) if not getattr(n, "constant", False))


# cuTile's launch infers unit strides and extents of 1 for arrays of at most 5 dimensions
# (its dispatcher's TMA_MAX_NDIM, cuTile Python 1.6-1.7).
_INFERRED_UP_TO_NDIM = 5


def _constants(
    shapes: list[tuple[int, ...]], strides: list[tuple[int, ...]], note: Any, where: str, infer: bool
) -> tuple[list[int | None] | None, list[int | None] | None]:
    """(shape_constant, stride_constant) of an array parameter, each None where no dimension
    is a compile-time constant, as cuTile's own launch specialises a kernel for its arrays
    (several for a list's, which must agree): the dimensions the parameter's
    `ct.ArrayAnnotation(static_shape_dims=..., static_stride_dims=...)` names take the
    arrays' values; with `infer`, and where the annotation names none of that kind, an
    extent of 1 and a stride of 1 are constants too (what lets a unit stride vectorise; a
    kernel's `ct.static_assert` sees only the named ones). LaunchError for an axis the
    array lacks, or list arrays that differ on a named dimension."""
    ndim = len(shapes[0])
    out: list[list[int | None] | None] = []
    for kind, values in (("static_shape_dims", shapes), ("static_stride_dims", strides)):
        named = []
        for d in getattr(note, kind, ()) or ():
            if not -ndim <= d < ndim:
                raise LaunchError(f"{where}: {kind} names axis {d}, but the array has {ndim} dimensions")
            named.append(d % ndim)
        constant: list[int | None] = [None] * ndim
        for d in range(ndim):
            seen = {v[d] for v in values}
            if d in named:
                if len(seen) > 1:
                    raise LaunchError(
                        f"{where}: the arrays of the list differ at axis {d} ({', '.join(map(str, sorted(seen)))}), "
                        f"which {kind} makes a compile-time constant"
                    )
                constant[d] = seen.pop()
            elif infer and not named and ndim <= _INFERRED_UP_TO_NDIM and seen == {1}:
                constant[d] = 1
        out.append(constant if any(c is not None for c in constant) else None)
    return out[0], out[1]


# The bytes of the widest vector access (LDG.E.128): the divisibility cuTile's launch tells
# its compiler of (base address, strides, extents), as its JAX path writes it down.
_VECTOR_BYTES = 16


def _divisibility(
    dtype: np.dtype,
    shapes: list[tuple[int, ...]],
    strides: list[tuple[int, ...]],
    shape_constant: list[int | None] | None,
    stride_constant: list[int | None] | None,
    align: int,
) -> dict[str, Any]:
    """ArrayConstraint's divisibility facts for arrays of these extents and strides (several
    for a list's: what holds for all), as cuTile's own launch specialises a kernel (its C
    launcher computes them; its JAX path writes the rule down): a stride that is a multiple
    of 16 bytes' elements, an extent that is a multiple of 16, the base address's alignment
    `align`. Without them a view's loads and stores cannot be vectorised: no compiler may
    assume a row starts 16-byte aligned (a 64x64 f32 transpose: 32 scalar loads and stores a
    thread against 8 and 8). A dimension whose value is a constant already takes none (cuTile
    checks a constant against its divisor). None for 4-bit elements, packed two to a byte."""
    bits = dtype.itemsize * 8
    if dtype.name in ("float4_e2m1fn", "int4", "uint4") or bits == 0:
        return {}
    per = _VECTOR_BYTES * 8 // bits if (_VECTOR_BYTES * 8) % bits == 0 else 1
    ndim = len(shapes[0])

    def divisor(values: list[tuple[int, ...]], constant: list[int | None] | None, d: int, by: int) -> int:
        free = constant is None or constant[d] is None
        return by if by > 1 and free and all(v[d] % by == 0 for v in values) else 1

    return {
        "stride_divisible_by": tuple(divisor(strides, stride_constant, d, per) for d in range(ndim)),
        "shape_divisible_by": tuple(divisor(shapes, shape_constant, d, 16) for d in range(ndim)),
        "base_addr_divisible_by": align,
    }


def load_cutile(kernel: Any, args: Any, name: str | None = None, **export: bool) -> tuple[Any, list[Any]]:
    """(the verified module cuTile exports for `kernel` and `args`, the arguments to launch it
    with: `export_cutile`'s, which takes `export`). `name` (default `<cuTile kernel NAME>`)
    is what errors call it.
    A module that does not verify is a bug of cuTile's, not the user's (the verifier's rules
    are NVIDIA's: cuda-tile-opt's, which tileiras runs on what it reads): the LaunchError says
    so, after the op's line."""
    from ..modules import load_module

    bytecode, runtime = export_cutile(kernel, args, **export)
    try:
        return load_module(bytecode, name=name or f"<cuTile kernel {kernel._pyfunc.__name__}>"), runtime
    except LaunchError as e:
        if not e.diagnostics:
            raise
        import cuda.tile as ct  # (exported it just now)

        raise LaunchError(
            f"{e.message} (cuTile Python {getattr(ct, '__version__', '')} exported a module that does not "
            "verify, a bug of cuTile's: NVIDIA's tileiras applies the same rules and refuses it too; "
            "write that line another way)",
            kind="module",
            diagnostics=e.diagnostics,
        ) from None


def _cutile_place(error: Exception) -> str:
    """`file:line:col: ` of the kernel line a cuTile error is about (its `TileError.loc`;
    columns counted from 0, as cuTile counts them in its messages and debug info), or ""."""
    loc = getattr(error, "loc", None)
    filename, line, col = (getattr(loc, a, None) for a in ("filename", "line", "col"))
    if not isinstance(filename, str) or not filename or not isinstance(line, int) or line <= 0:
        return ""
    return f"{filename}:{line}:{col if isinstance(col, int) else 0}: "


def _annotations(kernel: Any) -> list[Any]:
    return list(getattr(getattr(kernel, "_annotated_function", None), "parameter_annotations", ()))


def constant_positions(kernel: Any) -> set[int]:
    """The positions of a cuTile kernel's `ct.Constant` parameters: folded into the exported
    kernel, they are not among its launch's arguments."""
    return {i for i, note in enumerate(_annotations(kernel)) if getattr(note, "constant", False)}


def cutile_kernels_in(path: str) -> dict[str, Any]:
    """The cuTile `@ct.kernel` functions the Python file `path` defines, by name, in the order
    it defines them. The file is run as a module of its own name, not `__main__` (so what its
    `if __name__ == "__main__":` does is not done), with its directory first on sys.path for
    its own imports. Raises LaunchError (kind "module") when it cannot be run, with the line
    of the file that failed."""
    import importlib.util
    import sys
    import traceback

    where = os.path.abspath(path)
    if not os.path.isfile(where):
        raise LaunchError(f"cannot read '{path}': no such file", kind="module")
    name = "_tileir_cutile_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(where))[0])
    spec = importlib.util.spec_from_file_location(name, where)
    if spec is None or spec.loader is None:
        raise LaunchError(f"cannot run '{path}' as Python", kind="module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (cuTile reads the kernels' source through their module)
    sys.path.insert(0, os.path.dirname(where))
    try:
        spec.loader.exec_module(module)
    except BaseException as e:  # noqa: BLE001 - the user's code: any failure, SystemExit too, is one line
        sys.modules.pop(name, None)
        frames = [f for f in traceback.extract_tb(e.__traceback__) if os.path.abspath(f.filename) == where]
        place = f"{path}:{frames[-1].lineno}: " if frames else f"{path}: "
        if isinstance(e, SyntaxError) and e.lineno:
            place = f"{path}:{e.lineno}:{e.offset or 0}: "
        why = (str(e.msg if isinstance(e, SyntaxError) else e).strip().splitlines() or [""])[0]
        raise LaunchError(
            f"{place}{type(e).__name__}{': ' + why if why else ''} (running it to find its cuTile kernels)",
            kind="module",
        ) from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(os.path.dirname(where))
    return {k: v for k, v in vars(module).items() if is_cutile_kernel(v)}


__all__ = [
    "array_layout",
    "array_params",
    "constant_positions",
    "cutile_args",
    "cutile_kernels_in",
    "export_cutile",
    "is_cutile_kernel",
    "load_cutile",
]
