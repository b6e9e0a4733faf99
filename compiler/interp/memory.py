"""The simulated global address space.

Allocations are NumPy byte arrays placed at aligned, non-overlapping addresses (the
first at 0x10000, so that small integers are never valid pointers). A contiguous
argument array is placed without a copy: the kernel writes straight into the caller's
array. Every access is checked: an address outside every allocation raises
`MemoryFault`, which the op turns into an error naming the op, block and address.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

BASE_ADDRESS = 0x10000
ALLOCATION_ALIGNMENT = 256  # like cudaMalloc's guarantee


class MemoryFault(Exception):
    """An access outside every allocation (or a misaligned or read-only one)."""

    def __init__(self, message: str, address: int, position: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.address = address
        self.position = position  # flat index of the first faulting element in the access


@dataclass(slots=True)
class Allocation:
    base: int
    data: np.ndarray  # uint8, contiguous
    name: str
    read_only: bool = False

    @property
    def size(self) -> int:
        return self.data.nbytes

    @property
    def end(self) -> int:
        return self.base + self.data.nbytes


class Memory:
    def __init__(self) -> None:
        self.allocations: list[Allocation] = []
        self._bases: list[int] = []
        self._next = BASE_ADDRESS

    # -- allocations ---------------------------------------------------------------------

    def place(self, array: np.ndarray, *, alignment: int = 1, name: str = "", read_only: bool = False) -> int:
        """Put `array` (C-contiguous, any dtype) in the address space without copying it;
        returns its address."""
        if not array.flags.c_contiguous:
            raise ValueError("only C-contiguous arrays can be placed in memory")
        align = max(alignment, ALLOCATION_ALIGNMENT, array.dtype.itemsize)
        base = -(-self._next // align) * align
        data = array.reshape(-1).view(np.uint8)
        alloc = Allocation(base, data, name or f"allocation {len(self.allocations)}", read_only)
        self.allocations.append(alloc)
        self._bases.append(base)
        # Leave a gap after each allocation so that running off its end never lands in
        # the next one.
        self._next = base + max(data.nbytes, 1) + ALLOCATION_ALIGNMENT
        return base

    def allocate(self, nbytes: int, *, alignment: int = 1, name: str = "") -> int:
        return self.place(np.zeros(nbytes, dtype=np.uint8), alignment=alignment, name=name)

    def find(self, address: int) -> Allocation | None:
        i = bisect.bisect_right(self._bases, address) - 1
        if i >= 0:
            alloc = self.allocations[i]
            if address < alloc.end:
                return alloc
        return None

    def begin_group(self) -> None:
        """Called before each group of tile blocks runs (access records are per block)."""

    def check_access(
        self,
        *,
        instance: int,
        deps: frozenset[int],
        store: bool,
        block_ids: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        addresses: Callable[[], np.ndarray] | None = None,
    ) -> None:
        """Record that memory-op `instance` (ordered after the instances in `deps`) read or
        (`store`) wrote, for each block of the group (`block_ids`: linear tile-block ids,
        shape (G,)), bytes within [lo, hi) (shape (G,) or (1,)); `addresses()` gives the
        exact element addresses, shape (G, N) with -1 for masked-off elements, when the
        ranges overlap. Raises `MemoryFault("race: ...")` when a store and another access
        of one block touch the same address without a token (or data) order between them."""

    # -- element access ------------------------------------------------------------------

    def _locate(self, addresses: np.ndarray, itemsize: int, writing: bool) -> tuple[Allocation, np.ndarray]:
        """The single allocation holding every address, and the element indices in it."""
        flat = addresses.reshape(-1)
        if flat.size == 0:
            return (self.allocations[0] if self.allocations else Allocation(0, np.zeros(0, np.uint8), "")), flat
        lo, hi = int(flat.min()), int(flat.max())
        alloc = self.find(lo)
        if alloc is None or hi + itemsize > alloc.end:
            bad = self._first_outside(flat, itemsize)
            raise MemoryFault("access outside every allocation", int(flat[bad]), bad)
        offsets = flat - alloc.base
        if itemsize > 1:
            misaligned = offsets % itemsize != 0
            if misaligned.any():
                bad = int(np.flatnonzero(misaligned)[0])
                raise MemoryFault(f"address not aligned to {itemsize} bytes", int(flat[bad]), bad)
        if writing and alloc.read_only:
            raise MemoryFault(f"write to the constant {alloc.name}", lo, 0)
        return alloc, offsets // itemsize

    def _first_outside(self, flat: np.ndarray, itemsize: int) -> int:
        for i, a in enumerate(flat.tolist()):
            alloc = self.find(a)
            if alloc is None or a + itemsize > alloc.end:
                return i
        return 0

    def read(self, addresses: np.ndarray, dtype: np.dtype) -> np.ndarray:
        """The elements of `dtype` at `addresses` (any shape), in that shape."""
        dtype = np.dtype(dtype)
        alloc, index = self._locate(addresses, dtype.itemsize, writing=False)
        usable = alloc.data[: alloc.size - alloc.size % dtype.itemsize].view(dtype)
        return usable[index].reshape(addresses.shape)

    def write(self, addresses: np.ndarray, values: np.ndarray, dtype: np.dtype) -> None:
        """Store `values` (broadcast to the addresses' shape) as `dtype` at `addresses`."""
        dtype = np.dtype(dtype)
        alloc, index = self._locate(addresses, dtype.itemsize, writing=True)
        usable = alloc.data[: alloc.size - alloc.size % dtype.itemsize].view(dtype)
        usable[index] = np.broadcast_to(values, addresses.shape).reshape(-1).astype(dtype, copy=False)
