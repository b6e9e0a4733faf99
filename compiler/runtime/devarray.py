"""Arrays that live on a GPU (torch, CuPy, JAX, anything speaking DLPack or the CUDA Array
Interface), recognised without importing any GPU library: a launch uses them in place.

`device_array(obj)` is None for anything else (NumPy arrays included); `host_array(obj)`
turns a CPU array of another library (a CPU torch tensor, ...) into a NumPy view of the
same memory, so that it is treated like a NumPy argument.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

# DLPack device types: CUDA memory, pinned host memory, managed memory (all addressable
# by a kernel), and the CPU.
_DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED, _DL_CPU = 2, 3, 13, 1


@dataclass(frozen=True, slots=True)
class DevicePointer:
    """A raw device address for a pointer parameter (a bare Python int is not taken as a
    pointer by the GPU backends: it is too easy to pass a length by mistake)."""

    address: int


@dataclass(slots=True)
class DeviceArray:
    """A GPU array used in place: address of its first element, extents, strides in
    elements, element dtype (NumPy / ml_dtypes), and the object that owns the memory."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: np.dtype
    readonly: bool
    owner: Any

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * self.dtype.itemsize

    def span(self) -> tuple[int, int]:
        """(offset of the lowest addressed element from `ptr` in elements, number of
        elements from there to the highest one + 1): the memory the array covers."""
        if any(d == 0 for d in self.shape):
            return 0, 0
        lo = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s > 0)
        return lo, hi - lo + 1


def _dlpack_device(obj: Any) -> int | None:
    f = getattr(type(obj), "__dlpack_device__", None)
    if f is None:
        return None
    try:
        return int(obj.__dlpack_device__()[0])
    except Exception:  # noqa: BLE001 - an object that cannot say is not one of ours
        return None


def is_device_array(obj: Any) -> bool:
    """Whether `obj` is a GPU array (cheap: attribute checks only)."""
    if isinstance(obj, np.ndarray):
        return False
    if hasattr(type(obj), "__cuda_array_interface__"):
        try:
            obj.__cuda_array_interface__  # noqa: B018 - a CPU torch tensor raises here
            return True
        except Exception:  # noqa: BLE001
            return False
    return _dlpack_device(obj) in (_DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED)


def holds_device_array(args: Any) -> bool:
    """Whether any of launch arguments `args` is (or, as a StridedArray or an ArrayTable,
    holds) a GPU array."""
    for a in args:
        inner = getattr(a, "arrays", None)  # an ArrayTable
        if inner is not None:
            if holds_device_array(inner):
                return True
            continue
        if is_device_array(getattr(a, "array", a)):  # a StridedArray's array, or the argument
            return True
    return False


def _torch_dtype(obj: Any) -> np.dtype | None:
    name = str(getattr(obj, "dtype", "")).removeprefix("torch.")
    if not str(type(obj).__module__).startswith("torch"):
        return None
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"):
        import ml_dtypes  # NumPy has no such dtypes; ml_dtypes does, as the CPU backend uses

        return np.dtype(getattr(ml_dtypes, name))
    try:
        return np.dtype(name)
    except TypeError:
        return None


def _torch_strided(t: Any) -> np.ndarray | None:
    """A NumPy view of the strided CPU torch tensor `t` that lies in a NumPy view of its whole
    storage, so that the launch finds the buffer (`StridedArray.window`) and passes `t` with
    its own strides, in place, as a GPU tensor is passed (DLPack's view of `t` alone hides
    the buffer: `t` would be copied and copied back, its kernel seeing other strides). None
    where the storage cannot be seen so (a dtype NumPy has not, a negative stride)."""
    dtype = _torch_dtype(t)
    if dtype is None or dtype.itemsize != t.element_size() or any(s < 0 for s in t.stride()):
        return None
    try:
        import torch

        whole = np.from_dlpack(torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage()))
        typed = whole[: whole.size - whole.size % dtype.itemsize].view(dtype)
        strides = tuple(s * dtype.itemsize for s in t.stride())
        offset = t.storage_offset() * dtype.itemsize
        return np.ndarray(tuple(t.shape), dtype, buffer=typed, offset=offset, strides=strides)
    except (TypeError, ValueError, BufferError, RuntimeError):
        return None


def device_array(obj: Any) -> DeviceArray | None:
    """A DeviceArray view of GPU array `obj`, or None when `obj` is not one."""
    if not is_device_array(obj):
        return None
    from .binding import c_strides  # row-major strides of an array that gives none

    dtype = _torch_dtype(obj) if hasattr(obj, "data_ptr") and hasattr(obj, "stride") else None
    if dtype is not None:
        # torch: read directly (its CUDA Array Interface refuses bf16 and float8).
        shape = tuple(int(d) for d in obj.shape)
        return DeviceArray(int(obj.data_ptr()), shape, tuple(int(s) for s in obj.stride()), dtype, False, obj)
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        dtype = np.dtype(cai["typestr"])
        shape = tuple(int(d) for d in cai["shape"])
        if cai.get("strides") is None:
            strides = c_strides(shape)
        else:
            strides = [int(s) // dtype.itemsize for s in cai["strides"]]
        ptr, readonly = cai["data"]
        return DeviceArray(int(ptr or 0), shape, tuple(strides), dtype, bool(readonly), obj)
    from cuda.core.utils import StridedMemoryView  # DLPack only: let cuda.core read it

    view = StridedMemoryView(obj, stream_ptr=-1)
    shape = tuple(int(d) for d in view.shape)
    if view.strides is None:
        strides = c_strides(shape)
    else:
        strides = [int(s) for s in view.strides]
    return DeviceArray(int(view.ptr), shape, tuple(strides), np.dtype(view.dtype), bool(view.readonly), obj)


def host_array(obj: Any) -> np.ndarray | None:
    """A NumPy view of a CPU array of another library (DLPack on the CPU), else None."""
    if isinstance(obj, np.ndarray) or _dlpack_device(obj) != _DL_CPU:
        return None
    if hasattr(obj, "untyped_storage") and not obj.is_contiguous():
        strided = _torch_strided(obj)
        if strided is not None:
            return strided
    try:
        return np.from_dlpack(obj)
    except (TypeError, BufferError, RuntimeError):
        if str(type(obj).__module__).startswith("torch") and hasattr(obj, "numpy"):
            import ml_dtypes  # noqa: F401

            dtype = _torch_dtype(obj)
            if dtype is not None and dtype.itemsize == obj.element_size():
                raw = obj.view(getattr(__import__("torch"), f"int{8 * dtype.itemsize}")).numpy()
                return raw.view(dtype)
        return None
