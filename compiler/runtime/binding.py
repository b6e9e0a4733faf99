"""Launch arguments against a kernel's parameters, for every backend: the grid, the argument
list, the checks of each argument (`ArgumentChecks`: an array's element type, a scalar's
value), cuTile's tables of arrays, and the placing of arrays in the CPU interpreter's memory
(`MachineBinder`). The GPU launcher (`gpu.bind`) and Triton's interpreter
(`interpret.run`) place arrays their own way with the same checks and messages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..interp import Machine, dtypes, rounding
from ..interp.machine import MAX_GRID_EXTENT
from ..interp.memory import pack_nibbles
from ..ir.core import Operation, Value
from ..ir.types import FloatType, IntegerType, PointerType, TileType, Type
from ..modules import LaunchError, _param_text, kernel_name, signature


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


def grid_dims(grid: int | Sequence[int]) -> tuple[int, int, int]:
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
    Triton launchers and `tileir run`'s early signature check use these; `MachineBinder` adds the
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


class MachineBinder(ArgumentChecks):
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
        data = array_table(
            table,
            element,
            where,
            lambda array, dev, strided, j, at: self.place(array, f"argument {i}[{j}]", strided, at),
        )
        return self.memory.place(data, alignment=8, name=f"argument {i} (array list)", read_only=True)


def array_table(table: ArrayTable, element: PointerType, where: str, place: Any) -> np.ndarray:
    """The rows of a cuTile array list, `[address, *extents, *strides]` in i64 (strides in
    elements), for a parameter pointing to `element`s (LaunchError unless i64).
    `place(array, device_array_or_None, strided, index, where)` gives item `index`'s address
    (placing it where the backend needs it)."""
    from .devarray import device_array

    if not (isinstance(element.pointee, IntegerType) and element.pointee.width == 64):
        raise LaunchError(f"{where}: a table of arrays goes to a tile<ptr<i64>> parameter")

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
        strides = [s // array.itemsize for s in array.strides] if strided else c_strides(array.shape)
        rows.append([address, *array.shape, *strides])
    width = max((len(r) for r in rows), default=1)
    if any(len(r) != width for r in rows):
        raise LaunchError(f"{where}: the arrays of a list must all have the same number of dimensions")
    return np.array(rows, dtype=np.int64).reshape(len(rows), width)


def c_strides(shape: tuple[int, ...]) -> list[int]:
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


def argument_list(args: Any) -> list[Any]:
    """`args` as a list (any iterable: a generator is taken once), refusing what cannot be
    passed as it is."""
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise LaunchError(f"args must be a sequence of the kernel's arguments, got {type(args).__name__}", kind="count")
    args = list(args)
    for i, arg in enumerate(args):
        if isinstance(arg, np.ma.MaskedArray):  # its mask would be ignored: the data is what a kernel reads
            raise LaunchError(f"argument {i} is a masked array: pass its .filled(value) or .data", kind="argument")
    return args


def check_count(entry: Operation, args: Sequence[Any], given: int, cutile: bool) -> None:
    """Refuse `args` (after expanding `given` cuTile arguments where `cutile`) unless there
    is one per parameter of `entry`, with the kernel's signature in the message."""
    params = entry.regions[0].blocks[0].arguments
    if len(args) != len(params):
        how = f"{given} cuTile arguments expanded to {len(args)}" if cutile else f"got {len(args)}"
        raise LaunchError(
            f"kernel @{kernel_name(entry)} takes {len(params)} arguments, {how}: {signature(entry)}", kind="count"
        )
