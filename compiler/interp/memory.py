"""The simulated global address space.

Allocations are NumPy byte arrays placed at aligned, non-overlapping addresses (the
first at 0x10000, so that small integers are never valid pointers), with a gap after
each so that running off the end of one never lands in the next. A contiguous argument
array is placed without a copy: the kernel writes straight into the caller's array.
`alloca` gets one *slab* per group of tile blocks: a single byte array holding the
blocks' allocations at a fixed stride, gaps between them, freed when the group ends.

Every access is checked: an address outside every allocation, an address not aligned
to the element size, or a write to a constant global raises `MemoryFault`, which the op
turns into an error naming the op, the tile block and the address.

Sub-byte elements (i4, f4E2M1FN) are packed two per byte in *little-endian nibble
order*, as the spec prescribes: of elements 2k and 2k+1, element 2k occupies bits 3..0
of byte k and element 2k+1 bits 7..4. A pointer is a byte address, so a pointer to the
upper nibble of a byte carries `NIBBLE_TAG` (bit 62) on top of the byte address:
`element_address(base, i, 4)` of a byte-aligned `base` is `base + i // 2`, tagged when
`i` is odd. Pointers to whole-byte types never carry the tag (addresses stay below
2**62); `read`/`write` with `bits=4` take such tagged addresses.

Races. `check_access` records, per group of tile blocks, which bytes each memory-op
instance touched in each block, and reports a store and another access of one block
to the same address that no token or data dependence orders (see its docstring).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import dtypes
from .rounding import flush_subnormals

BASE_ADDRESS = 0x10000
ALLOCATION_ALIGNMENT = 256  # like cudaMalloc's guarantee
GAP = 256  # bytes left unallocated after every allocation (and between alloca blocks)
NIBBLE_TAG = 1 << 62  # set on a pointer to the upper nibble of a byte (4-bit elements)
_BYTE_MASK = ~NIBBLE_TAG

_MAX = np.iinfo(np.int64).max
_MIN = np.iinfo(np.int64).min


class MemoryFault(Exception):
    """An access outside every allocation, a misaligned or read-only one, or a race.

    `position`: flat index of the first faulting element in the access (in the order of
    the addresses passed); `block`: for races, the index into the `block_ids` of the
    access at fault; `kind`: "bounds", "alignment", "read_only" or "race"."""

    def __init__(
        self, message: str, address: int, position: int = 0, *, block: int | None = None, kind: str = "bounds"
    ) -> None:
        super().__init__(message)
        self.message = message
        self.address = address
        self.position = position
        self.block = block
        self.kind = kind


@dataclass(slots=True)
class Allocation:
    """`count` allocations of `extent` bytes each, `stride` bytes apart, in one byte
    array `data` starting at address `base` (count 1 for everything but alloca slabs)."""

    base: int
    data: np.ndarray  # uint8, contiguous
    name: str
    read_only: bool = False
    count: int = 1
    stride: int = 0
    extent: int = -1  # bytes of each allocation (-1: all of `data`)
    scoped: bool = False  # freed when the group of tile blocks that made it ends

    def __post_init__(self) -> None:
        if self.extent < 0:
            self.extent = self.data.nbytes
        if self.stride <= 0:
            self.stride = self.data.nbytes

    @property
    def size(self) -> int:
        return self.data.nbytes

    @property
    def end(self) -> int:
        return self.base + self.data.nbytes

    def part(self, address: int) -> Allocation | None:
        """The single allocation of this slab holding `address`, or None (a gap)."""
        if self.count == 1:
            return self if self.base <= address < self.base + self.extent else None
        k, off = divmod(address - self.base, self.stride)
        if not 0 <= k < self.count or off >= self.extent:
            return None
        start = k * self.stride
        return Allocation(
            self.base + start, self.data[start : start + self.extent], f"{self.name} #{k}", self.read_only
        )


# -- sub-byte packing ---------------------------------------------------------------------


def nibble_codes(values: np.ndarray) -> np.ndarray:
    """The 4-bit codes (uint8, 0..15) of i4 values (int8 storage) or f4E2M1FN values."""
    values = np.asarray(values)
    if values.dtype.kind in "iub":
        return (values.astype(np.int64) & 0xF).astype(np.uint8)
    return values.view(np.uint8) & np.uint8(0xF)


def from_nibble_codes(codes: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Values of `dtype` (int8 for i4, sign-extended; float4_e2m1fn; uint8: the raw
    codes) from 4-bit codes."""
    dtype = np.dtype(dtype)
    codes = codes.astype(np.uint8, copy=False)
    if dtype == np.uint8:
        return codes
    if dtype.kind == "i":
        return ((codes.astype(np.int16) ^ 8) - 8).astype(dtype)
    return codes.view(dtype)


def memory_image(value: Any) -> np.ndarray:
    """The bytes a dense elements attribute (a `global`'s initial value) occupies in memory,
    as a flat array: i1 as 0/1 bytes, i4 and f4E2M1FN two per byte, the rest as stored."""
    data = dtypes.array_from_bits(value.values, value.element, value.type.shape)
    if data.dtype == np.bool_:
        data = data.astype(np.uint8)
    elif getattr(value.element, "bitwidth", 8) == 4:
        data = pack_nibbles(data)
    return np.ascontiguousarray(data).reshape(-1)


def pack_nibbles(values: np.ndarray, words: bool = False) -> np.ndarray:
    """The bytes holding `values` (1-D, i4 as int8 or f4E2M1FN) packed in little-endian
    nibble order: element 2k in bits 3..0 of byte k, element 2k+1 in bits 7..4. `words`:
    zero bytes added up to a whole number of 32-bit words (the Triton lowering stores a
    nibble by swapping the word around it)."""
    codes = nibble_codes(np.asarray(values).reshape(-1))
    packed = -(-codes.size // 2)
    size = -(-packed // 4) * 4 if words else packed
    if codes.size < 2 * size:
        codes = np.concatenate([codes, np.zeros(2 * size - codes.size, np.uint8)])
    return (codes[0::2] | (codes[1::2] << np.uint8(4))).astype(np.uint8)


def unpack_nibbles_into(original: np.ndarray, data: np.ndarray) -> None:
    """Write the packed bytes `data` back into the array of 4-bit elements they were packed
    from (a launcher's copy, after the run)."""
    original[...] = unpack_nibbles(data, original.dtype, original.size).reshape(original.shape)


def unpack_nibbles(data: np.ndarray, dtype: np.dtype, count: int | None = None) -> np.ndarray:
    """The inverse of `pack_nibbles`: `count` elements of `dtype` from packed bytes."""
    data = np.asarray(data, dtype=np.uint8).reshape(-1)
    codes = np.empty(data.size * 2, dtype=np.uint8)
    codes[0::2] = data & np.uint8(0xF)
    codes[1::2] = data >> np.uint8(4)
    return from_nibble_codes(codes[: data.size * 2 if count is None else count], dtype)


def element_address(pointers: np.ndarray, offsets: np.ndarray, bits: int) -> np.ndarray:
    """`pointers` advanced by `offsets` elements of `bits` bits each (broadcast; int64).

    Whole-byte elements: `pointer + offset * bits / 8`. 4-bit elements: the pointer's
    nibble position (byte * 2, +1 when tagged) plus the offset, split back into a byte
    address and the `NIBBLE_TAG` for an odd nibble. Offsets are signed; wrap-around is
    undefined behaviour in the spec and wraps here (an access then faults)."""
    pointers = np.asarray(pointers, dtype=np.int64)
    offsets = np.asarray(offsets)
    if offsets.dtype == np.bool_:  # i1 read as a signed integer: true is -1
        off = -offsets.astype(np.int64)
    else:
        off = offsets.astype(np.int64, copy=False)
    with np.errstate(over="ignore"):
        if bits % 8 == 0:
            size = bits // 8
            if off.shape == np.broadcast_shapes(off.shape, pointers.shape):
                out = np.multiply(off, size) if off is offsets else off
                if out is off and size != 1:
                    out *= size
                out += pointers  # in place: one temporary the size of the result
                return out
            return pointers + off * size
        if bits != 4:
            raise ValueError(f"no addressing for {bits}-bit elements")
        nibble = (pointers & _BYTE_MASK) * 2 + ((pointers >> 62) & 1) + off
        return (nibble >> 1) | ((nibble & 1) << 62)


def byte_address(addresses: np.ndarray) -> np.ndarray:
    """Addresses without the nibble tag."""
    return addresses & _BYTE_MASK


# -- the address space --------------------------------------------------------------------


class Memory:
    def __init__(self) -> None:
        self.allocations: list[Allocation] = []
        self._bases: list[int] = []
        self._next = BASE_ADDRESS
        self._table: tuple[np.ndarray, np.ndarray] | None = None  # bases, ends (numpy)
        self.race_checking = True
        # f32 atomic `addf` as NVIDIA GPUs do it (RunOptions.gpu_f32_atomic_add).
        self.f32_atomic_add_ftz = False
        self._races = _RaceLog()
        self._keyed: dict[object, Allocation] = {}  # the live allocation of each alloca op

    # -- allocations ---------------------------------------------------------------------

    def _add(self, alloc: Allocation) -> None:
        i = bisect.bisect_right(self._bases, alloc.base)
        self.allocations.insert(i, alloc)
        self._bases.insert(i, alloc.base)
        self._table = None

    def _reserve(self, nbytes: int, align: int) -> int:
        base = -(-self._next // align) * align
        self._next = base + max(nbytes, 1) + GAP
        return base

    def place(self, array: np.ndarray, *, alignment: int = 1, name: str = "", read_only: bool = False) -> int:
        """Put `array` (C-contiguous, any dtype) in the address space without copying it;
        returns its address."""
        if not array.flags.c_contiguous:
            raise ValueError("only C-contiguous arrays can be placed in memory")
        align = max(alignment, ALLOCATION_ALIGNMENT, array.dtype.itemsize)
        data = array.reshape(-1).view(np.uint8)
        base = self._reserve(data.nbytes, align)
        self._add(Allocation(base, data, name or f"allocation {len(self.allocations)}", read_only))
        return base

    def allocate_blocks(
        self, count: int, nbytes: int, *, alignment: int = 1, name: str = "alloca", key: object = None
    ) -> np.ndarray:
        """`count` zero-filled allocations of `nbytes` each (one per tile block of a group),
        aligned to `alignment`; freed at the next `begin_group`, or when an allocation with
        the same `key` is made (an `alloca` run again: the previous one's lifetime is over).
        Returns their addresses. Addresses are never reused, so a pointer kept past the
        lifetime faults."""
        if key is not None:
            old = self._keyed.pop(key, None)
            if old is not None:
                self._remove(old)
        align = max(alignment, ALLOCATION_ALIGNMENT)
        stride = -(-(max(nbytes, 1) + GAP) // align) * align
        data = np.zeros(stride * count, dtype=np.uint8)
        base = self._reserve(data.nbytes, align)
        alloc = Allocation(base, data, name, count=count, stride=stride, extent=nbytes, scoped=True)
        self._add(alloc)
        if key is not None:
            self._keyed[key] = alloc
        return base + stride * np.arange(count, dtype=np.int64)

    def _remove(self, alloc: Allocation) -> None:
        i = bisect.bisect_left(self._bases, alloc.base)
        if i < len(self.allocations) and self.allocations[i] is alloc:
            del self.allocations[i]
            del self._bases[i]
            self._table = None

    def find(self, address: int) -> Allocation | None:
        """The allocation holding byte `address` (tag ignored), or None."""
        address = int(address) & _BYTE_MASK
        i = bisect.bisect_right(self._bases, address) - 1
        if i >= 0:
            return self.allocations[i].part(address)
        return None

    def begin_group(self, first_block: int = 0, num_blocks: int = 0) -> None:
        """Called before each group of tile blocks runs: access records are per group, and
        the allocas of the previous group die."""
        self._races.reset(first_block, num_blocks)
        self._keyed.clear()
        if any(a.scoped for a in self.allocations):
            keep = [a for a in self.allocations if not a.scoped]
            self.allocations = keep
            self._bases = [a.base for a in keep]
            self._table = None

    # -- race detection ------------------------------------------------------------------

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
        atomic: bool = False,
        dense: bool | Callable[[], bool] = False,
        itemsize: int = 1,
        op: str = "",
    ) -> None:
        """Record that memory-op `instance` (ordered after the instances in `deps`) read or
        (`store`) wrote, for each block of the group (`block_ids`: linear tile-block ids,
        shape (G,), increasing), bytes within [lo, hi) (shape (G,) or (1,); lo >= hi:
        nothing); `addresses()` gives the exact element addresses, shape (G, N) or (1, N),
        -1 for masked-off elements, and is only called when ranges overlap (None: every
        byte of [lo, hi) counts as accessed). Raises `MemoryFault("race: ...",
        kind="race", block=index into block_ids)` when a store and another access of one
        block touch the same address without a token (or data) order between them.

        `atomic`: the access is atomic or has a non-weak ordering (relaxed, acquire,
        release, acq_rel); two such accesses never race with each other. `dense`: every
        byte of [lo, hi) is accessed in every block (then `addresses` is not needed); a
        callable is asked only when knowing it would let older records be dropped.
        `itemsize`: bytes per element of `addresses` (4-bit elements: pass 1 and untagged
        addresses; races are found at byte granularity). `op`: how to name this access in
        a later race report (e.g. "store_ptr_tko at k.tileir:7:5").

        Accesses must be recorded in execution order: the later of two ordered accesses
        has the earlier one's instance in its `deps`."""
        if not self.race_checking:
            return
        self._races.check(
            instance, deps, store, atomic, np.asarray(block_ids), lo, hi, addresses, dense, itemsize, op, self
        )

    def bucket_of(self, lo: int, hi: int) -> int | None:
        """The base of the single allocation (slab) holding [lo, hi), or None."""
        i = bisect.bisect_right(self._bases, lo) - 1
        if i >= 0 and hi <= self.allocations[i].end:
            return self.allocations[i].base
        return None

    # -- element access ------------------------------------------------------------------

    def _numpy_table(self) -> tuple[np.ndarray, np.ndarray]:
        if self._table is None:
            self._table = (
                np.array(self._bases, dtype=np.int64),
                np.array([a.end for a in self.allocations], dtype=np.int64),
            )
        return self._table

    def _inside(self, flat: np.ndarray, nbytes: int) -> np.ndarray:
        """Whether each of the byte ranges [a, a + nbytes) lies inside one allocation."""
        if not self.allocations:
            return np.zeros(flat.shape, dtype=bool)
        bases, _ = self._numpy_table()
        i = np.searchsorted(bases, flat, side="right") - 1
        ok = (i >= 0) & (flat >= 0)
        i = np.maximum(i, 0)
        for j in np.unique(i[ok]).tolist():
            a = self.allocations[j]
            sel = ok & (i == j)
            off = flat[sel] - a.base
            if a.count > 1:
                inside = (off + nbytes <= a.size) & ((off % a.stride) + nbytes <= a.extent)
            else:
                inside = off + nbytes <= a.extent
            ok[sel] = inside
        return ok

    def _resolve(
        self, flat: np.ndarray, nbytes: int, writing: bool, what: str
    ) -> list[tuple[np.ndarray | None, Allocation, np.ndarray]]:
        """Check the byte addresses `flat` (1-D, each accessing `nbytes` bytes) and split
        them by allocation: a list of (positions in `flat`, or None for all; allocation;
        byte offsets into its `data`)."""
        if flat.size == 0:
            return []
        lo, hi = int(flat.min()), int(flat.max())
        i = bisect.bisect_right(self._bases, lo) - 1
        alloc = self.allocations[i] if i >= 0 else None
        if alloc is not None and lo >= 0 and hi + nbytes <= alloc.end:
            offsets = flat - alloc.base
            if alloc.count > 1 or alloc.extent < alloc.size:
                inside = (offsets % alloc.stride) + nbytes <= alloc.extent
                if not inside.all():
                    bad = int(np.flatnonzero(~inside)[0])
                    raise MemoryFault(f"{what} outside every allocation", int(flat[bad]), bad)
            parts: list[tuple[np.ndarray | None, Allocation, np.ndarray]] = [(None, alloc, offsets)]
        else:
            ok = self._inside(flat, nbytes)
            if not ok.all():
                bad = int(np.flatnonzero(~ok)[0])
                raise MemoryFault(f"{what} outside every allocation", int(flat[bad]), bad)
            bases, _ = self._numpy_table()
            idx = np.searchsorted(bases, flat, side="right") - 1
            parts = []
            for j in np.unique(idx).tolist():
                sel = np.flatnonzero(idx == j)
                a = self.allocations[j]
                parts.append((sel, a, flat[sel] - a.base))
        if nbytes > 1 and _any_misaligned(flat, nbytes):
            misaligned = (flat & (nbytes - 1)) != 0
            if misaligned.any():
                bad = int(np.flatnonzero(misaligned)[0])
                raise MemoryFault(
                    f"{what} at an address not aligned to {nbytes} bytes (the element size)",
                    int(flat[bad]),
                    bad,
                    kind="alignment",
                )
        if writing:
            for sel, a, _ in parts:
                if a.read_only:
                    bad = 0 if sel is None else int(sel[0])
                    raise MemoryFault(f"{what} to the constant {a.name}", int(flat[bad]), bad, kind="read_only")
        return parts

    @staticmethod
    def _typed(alloc: Allocation, dtype: np.dtype) -> np.ndarray:
        data = alloc.data
        return data[: data.size - data.size % dtype.itemsize].view(dtype)

    def read(
        self, addresses: np.ndarray, dtype: np.dtype, *, bits: int | None = None, what: str = "access"
    ) -> np.ndarray:
        """The elements of `dtype` at `addresses` (any shape), in that shape. `bool` reads
        bytes (nonzero is true). `bits=4`: packed 4-bit elements at nibble-tagged
        addresses, `dtype` int8 (i4, sign-extended), float4_e2m1fn, or uint8 (the codes).
        `what` names the access in fault messages ("load outside every allocation")."""
        dtype = np.dtype(dtype)
        addresses = np.asarray(addresses, dtype=np.int64)
        if bits == 4:
            return self._read_nibbles(addresses, dtype, what)
        if dtype == np.bool_:
            return self.read(addresses, np.dtype(np.uint8), what=what) != 0
        flat = addresses.reshape(-1)
        parts = self._resolve(flat, dtype.itemsize, False, what)
        shift = dtype.itemsize.bit_length() - 1
        if len(parts) == 1 and parts[0][0] is None:
            _, alloc, offsets = parts[0]
            if shift:
                offsets >>= shift
            return self._typed(alloc, dtype)[offsets].reshape(addresses.shape)
        out = np.empty(flat.shape, dtype=dtype)
        for sel, alloc, offsets in parts:
            out[sel] = self._typed(alloc, dtype)[offsets >> shift]
        return out.reshape(addresses.shape)

    def write(
        self,
        addresses: np.ndarray,
        values: np.ndarray,
        dtype: np.dtype,
        *,
        bits: int | None = None,
        what: str = "access",
    ) -> None:
        """Store `values` (broadcast to the addresses' shape) as `dtype` at `addresses`.
        Where addresses repeat, the last value (in C order) is the one left. `bits=4`:
        packed 4-bit elements at nibble-tagged addresses (see `read`)."""
        dtype = np.dtype(dtype)
        addresses = np.asarray(addresses, dtype=np.int64)
        values = np.broadcast_to(values, addresses.shape).reshape(-1)
        if bits == 4:
            self._write_nibbles(addresses.reshape(-1), values, what)
            return
        if dtype == np.bool_:
            dtype = np.dtype(np.uint8)
        values = values.astype(dtype, copy=False)
        flat = addresses.reshape(-1)
        parts = self._resolve(flat, dtype.itemsize, True, what)
        shift = dtype.itemsize.bit_length() - 1
        for sel, alloc, offsets in parts:
            if shift:
                offsets = offsets >> shift
            self._typed(alloc, dtype)[offsets] = values if sel is None else values[sel]

    def _read_nibbles(self, addresses: np.ndarray, dtype: np.dtype, what: str) -> np.ndarray:
        flat = addresses.reshape(-1)
        raw = self.read(flat & _BYTE_MASK, np.dtype(np.uint8), what=what)
        shift = (((flat >> 62) & 1) * 4).astype(np.uint8)
        codes = (raw >> shift) & np.uint8(0xF)
        return from_nibble_codes(codes, dtype).reshape(addresses.shape)

    def _write_nibbles(self, flat: np.ndarray, values: np.ndarray, what: str) -> None:
        codes = nibble_codes(values)
        byte = flat & _BYTE_MASK
        self._resolve(byte, 1, True, what)  # fault before any effect
        upper = ((flat >> 62) & 1).astype(bool)
        # Lower nibbles first, then upper ones: two lanes writing the two halves of one
        # byte both land.
        for half, keep, shift in ((~upper, 0xF0, 0), (upper, 0x0F, 4)):
            if not half.any():
                continue
            b = byte[half]
            old = self.read(b, np.dtype(np.uint8), what=what)
            new = (old & np.uint8(keep)) | (codes[half] << np.uint8(shift))
            self.write(b, new, np.dtype(np.uint8), what=what)

    # -- atomics -------------------------------------------------------------------------

    def atomic_rmw(
        self, addresses: np.ndarray, args: np.ndarray, mode: str, dtype: np.dtype, *, what: str = "atomic access"
    ) -> np.ndarray:
        """Apply `mode` (and, or, xor, add, addf, max, min, umax, umin, xchg) with `args`
        at `addresses` (1-D), one element after another in the given order; returns the
        value each element found. Duplicate addresses see each other's effects exactly as
        in that sequential order (segmented scans in the element type: `addf` rounds
        after every single addition, as a sequential loop would)."""
        dtype = np.dtype(dtype)
        addresses = np.asarray(addresses, dtype=np.int64).reshape(-1)
        n = addresses.size
        if n == 0:
            return np.zeros(0, dtype=dtype)
        args = np.asarray(args, dtype=dtype).reshape(-1)
        self._resolve(addresses, dtype.itemsize, True, what)  # fault before any effect
        seg = _segments(addresses)
        init = self.read(seg.unique, dtype, what=what)
        if mode == "addf" and dtype == np.float32 and self.f32_atomic_add_ftz:
            old_sorted, final = _sequential_add_ftz(init, args[seg.order], seg)
        else:
            old_sorted, final = _sequential_rmw(mode, init, args[seg.order], seg)
        self.write(seg.unique, final, dtype, what=what)
        old = np.empty(n, dtype=dtype)
        old[seg.order] = old_sorted
        return old

    def atomic_cas(
        self,
        addresses: np.ndarray,
        cmp: np.ndarray,
        val: np.ndarray,
        dtype: np.dtype,
        *,
        what: str = "atomic access",
    ) -> np.ndarray:
        """Compare-and-swap at `addresses` (1-D) one element after another in the given
        order (the comparison is of the bits, so NaNs and signed zeros compare by their
        encoding); returns the value each element found."""
        dtype = np.dtype(dtype)
        addresses = np.asarray(addresses, dtype=np.int64).reshape(-1)
        n = addresses.size
        if n == 0:
            return np.zeros(0, dtype=dtype)
        self._resolve(addresses, dtype.itemsize, True, what)
        bits_dtype = np.dtype(f"u{dtype.itemsize}")
        seg = _segments(addresses)
        cmp_s = np.asarray(cmp, dtype=dtype).reshape(-1)[seg.order].view(bits_dtype)
        val_s = np.asarray(val, dtype=dtype).reshape(-1)[seg.order].view(bits_dtype)
        cur = self.read(seg.unique, dtype, what=what).view(bits_dtype).copy()
        old_s = np.empty(n, dtype=bits_dtype)
        if seg.longest == 1:
            old_s[:] = cur
            cur = np.where(cur == cmp_s, val_s, cur)
        else:
            # Level r holds the r-th access of every address: distinct addresses, so a
            # level is one vectorized step.
            rank_order = np.argsort(seg.rank, kind="stable")
            counts = np.bincount(seg.rank)
            widest_after = np.maximum.accumulate(counts[::-1])[::-1]
            start = 0
            for r, k in enumerate(counts.tolist()):
                if widest_after[r] == 1:
                    # A single address is left, with a long tail of accesses: plain Python.
                    tail = rank_order[start:]
                    s = int(seg.seg_of[tail[0]])
                    x = int(cur[s])
                    cs, vs = cmp_s[tail].tolist(), val_s[tail].tolist()
                    found = []
                    for c, v in zip(cs, vs, strict=True):
                        found.append(x)
                        if x == c:
                            x = v
                    old_s[tail] = found
                    cur[s] = x
                    break
                e = rank_order[start : start + k]
                s = seg.seg_of[e]
                x = cur[s]
                old_s[e] = x
                cur[s] = np.where(x == cmp_s[e], val_s[e], x)
                start += k
        self.write(seg.unique, cur.view(dtype), dtype, what=what)
        old = np.empty(n, dtype=dtype)
        old[seg.order] = old_s.view(dtype)
        return old


def _any_misaligned(flat: np.ndarray, nbytes: int) -> bool:
    """Whether an address of `flat` (int64) is not a multiple of `nbytes` (a power of two
    up to 8): looks at the low byte of each address only."""
    if flat.dtype == np.int64 and flat.flags.c_contiguous and np.little_endian:
        low = flat.view(np.uint8)[::8]
    else:
        low = flat.astype(np.int64, copy=False) & 0xFF
    return bool(np.bitwise_and(low, nbytes - 1).any())


# -- atomics: sequential semantics, vectorized ------------------------------------------


@dataclass(slots=True)
class _Segments:
    """Accesses sorted by address (stably, so each address keeps its accesses' order)."""

    order: np.ndarray  # sorted position → original index
    starts: np.ndarray  # first sorted position of each distinct address
    lengths: np.ndarray
    unique: np.ndarray  # the distinct addresses
    seg_of: np.ndarray  # sorted position → segment
    rank: np.ndarray  # sorted position → index within its segment
    longest: int


def _segments(addresses: np.ndarray) -> _Segments:
    n = addresses.size
    if n == 1 or bool(np.all(addresses[1:] > addresses[:-1])):
        order = np.arange(n)
        return _Segments(order, order, np.ones(n, np.int64), addresses, order, np.zeros(n, np.int64), 1)
    order = np.argsort(addresses, kind="stable")
    s = addresses[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    lengths = np.diff(np.append(starts, n))
    seg_of = np.cumsum(new) - 1
    rank = np.arange(n) - starts[seg_of]
    return _Segments(order, starts, lengths, s[starts], seg_of, rank, int(lengths.max()))


_SCANS: dict[str, np.ufunc] = {
    "add": np.add,
    "addf": np.add,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "max": np.maximum,
    "min": np.minimum,
}


def _sequential_rmw(mode: str, init: np.ndarray, args: np.ndarray, seg: _Segments) -> tuple[np.ndarray, np.ndarray]:
    """For accesses sorted by address: the value each one finds, and each address's
    final value, when they apply one after another."""
    dtype = init.dtype
    if mode in ("umax", "umin"):
        udt = np.dtype(f"u{dtype.itemsize}")
        old, final = _sequential_rmw(mode[1:], init.view(udt), args.view(udt), seg)
        return old.view(dtype), final.view(dtype)
    n = args.size
    if mode == "xchg":
        old = np.empty(n, dtype=dtype)
        old[1:] = args[:-1]
        old[seg.starts] = init
        return old, args[seg.starts + seg.lengths - 1]
    ufunc = _SCANS.get(mode)
    if ufunc is None:
        raise ValueError(f"unknown atomic mode {mode!r}")
    with np.errstate(all="ignore"):
        if seg.longest == 1:
            return init.copy(), ufunc(init, args).astype(dtype, copy=False)
        # Addresses with about as many accesses (within a power of two) form the rows of
        # one matrix [init, a0, a1, ...]; `accumulate` along a row applies the operation
        # left to right, one element at a time, in the element type. Padding is at most
        # twice the accesses.
        old = np.empty(n, dtype=dtype)
        final = np.empty(seg.unique.size, dtype=dtype)
        length_class = np.ceil(np.log2(seg.lengths)).astype(np.int64)
        elem_class = length_class[seg.seg_of]
        row_of_seg = np.empty(seg.unique.size, dtype=np.int64)
        for c in np.unique(length_class).tolist():
            segs = np.flatnonzero(length_class == c)
            row_of_seg[segs] = np.arange(segs.size)
            m = np.zeros((segs.size, (1 << c) + 1), dtype=dtype)
            m[:, 0] = init[segs]
            elems = np.flatnonzero(elem_class == c)
            rows = row_of_seg[seg.seg_of[elems]]
            cols = seg.rank[elems]
            m[rows, cols + 1] = args[elems]
            acc = ufunc.accumulate(m, axis=1, dtype=dtype)
            old[elems] = acc[rows, cols]
            final[segs] = acc[np.arange(segs.size), seg.lengths[segs]]
        return old, final


def _sequential_add_ftz(init: np.ndarray, args: np.ndarray, seg: _Segments) -> tuple[np.ndarray, np.ndarray]:
    """`_sequential_rmw("addf", ...)` for f32 as `atom.add.f32` does it (PTX: subnormal inputs
    and results flushed to zeros of their sign; the value returned is the one found, not
    flushed), measured on an H200 for Triton's code and tileiras' alike. Applied one rank
    of the duplicates at a time, so the loop runs as often as one address repeats."""
    old = np.empty(args.size, dtype=np.float32)
    cur = init.copy()
    with np.errstate(all="ignore"):
        for r in range(int(seg.longest)):
            elems = np.flatnonzero(seg.rank == r)
            segs = seg.seg_of[elems]
            old[elems] = cur[segs]
            total = flush_subnormals(cur[segs], "f32") + flush_subnormals(args[elems], "f32")
            cur[segs] = flush_subnormals(total, "f32")
    return old, cur


# -- race detection ------------------------------------------------------------------------

_STORE = 1
_ATOMIC = 2
# How many accesses keep their exact address sets (the arrays their `addresses()`
# closures hold) for later race checks; beyond it the oldest keep only their byte
# ranges, which stay exact when the access turns out dense and are otherwise given up
# (a race with such an old access can then go unreported, never a false one).
RETAINED_ADDRESS_SETS = 64


@dataclass(slots=True, eq=False)
class _Access:
    instance: int
    flags: int
    op: str
    positions: np.ndarray  # sorted block positions in the group
    addresses: Callable[[], np.ndarray] | None
    itemsize: int
    exact: bool  # [lo, hi) per block is precisely what was touched
    lo: np.ndarray  # per block of `positions`; lo >= hi: nothing touched
    hi: np.ndarray
    cached: np.ndarray | None = None

    @property
    def known(self) -> bool:
        return self.exact or self.addresses is not None

    def address_rows(self) -> np.ndarray:
        if self.cached is None:
            assert self.addresses is not None
            a = np.asarray(self.addresses(), dtype=np.int64)
            self.cached = a.reshape(a.shape[0], -1) if a.ndim else a.reshape(1, 1)
        return self.cached

    def forget(self) -> None:
        self.addresses = None
        self.cached = None


@dataclass(slots=True, eq=False)
class _Bucket:
    """The access records of one allocation (or, key None, of accesses spanning several):
    per record its byte range in every block of the group (rows of `lo`/`hi`, empty
    where lo >= hi) and over all blocks (`env_lo`/`env_hi`)."""

    width: int
    records: list[_Access | None] = field(default_factory=list)
    lo: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    hi: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    env_lo: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    env_hi: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    flags: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))
    count: int = 0
    dead: int = 0

    def widen(self, width: int) -> None:
        if width <= self.width:
            return
        for name, fill in (("lo", _MAX), ("hi", _MIN)):
            old = getattr(self, name)
            new = np.full((old.shape[0], width), fill, dtype=np.int64)
            new[:, : old.shape[1]] = old
            setattr(self, name, new)
        self.width = width

    def add(self, rec: _Access, lo: np.ndarray, hi: np.ndarray, env: tuple[int, int]) -> None:
        if self.count == self.lo.shape[0]:
            cap = max(8, 2 * self.count)
            for name, fill, shape in (
                ("lo", _MAX, (cap, self.width)),
                ("hi", _MIN, (cap, self.width)),
                ("env_lo", _MAX, (cap,)),
                ("env_hi", _MIN, (cap,)),
                ("flags", 0, (cap,)),
            ):
                old = getattr(self, name)
                new = np.full(shape, fill, dtype=old.dtype)
                new[: old.shape[0], ...] = old
                setattr(self, name, new)
        i = self.count
        self.lo[i] = _MAX
        self.hi[i] = _MIN
        self.lo[i, rec.positions] = lo
        self.hi[i, rec.positions] = hi
        self.env_lo[i], self.env_hi[i] = env
        self.flags[i] = rec.flags
        self.records.append(rec)
        self.count += 1

    def drop(self, i: int) -> None:
        self.records[i] = None
        self.env_lo[i] = _MAX
        self.env_hi[i] = _MIN
        self.dead += 1

    def compact(self) -> None:
        """Close the gaps dropped records left, once they are many."""
        if self.dead < max(16, self.count // 2):
            return
        keep = np.array([i for i, r in enumerate(self.records) if r is not None], dtype=np.int64)
        self.records = [self.records[i] for i in keep.tolist()]
        n = len(self.records)
        for name in ("lo", "hi", "env_lo", "env_hi", "flags"):
            old = getattr(self, name)
            new = np.empty((max(8, 2 * n), *old.shape[1:]), dtype=old.dtype)
            new[:n] = old[keep]
            setattr(self, name, new)
        self.count = n
        self.dead = 0


class _RaceLog:
    """The memory accesses of the current group of tile blocks, by allocation."""

    def __init__(self) -> None:
        self.reset(0, 0)

    def reset(self, first_block: int, num_blocks: int) -> None:
        self.first = first_block
        self.width = max(num_blocks, 1)
        self.buckets: dict[int | None, _Bucket] = {}
        self.retained: list[_Access] = []
        self._ids: np.ndarray | None = None  # the last block_ids seen, and their positions
        self._positions = np.zeros(0, np.int64)

    def check(
        self,
        instance: int,
        deps: frozenset[int],
        store: bool,
        atomic: bool,
        block_ids: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        addresses: Callable[[], np.ndarray] | None,
        dense: bool | Callable[[], bool],
        itemsize: int,
        op: str,
        memory: Memory,
    ) -> None:
        if block_ids.size == 0:
            return
        if block_ids is self._ids:
            positions = self._positions
        else:
            positions = block_ids.astype(np.int64).reshape(-1) - self.first
            if positions[0] < 0 or (positions.size > 1 and not bool(np.all(positions[1:] > positions[:-1]))):
                raise ValueError("block_ids must be strictly increasing ids of blocks of the current group")
            self._ids, self._positions = block_ids, positions
        need = int(positions[-1]) + 1
        if need > self.width:
            self.width = max(need, 2 * self.width)
            for b in self.buckets.values():
                b.widen(self.width)
        lo = np.broadcast_to(np.asarray(lo, dtype=np.int64).reshape(-1), positions.shape)
        hi = np.broadcast_to(np.asarray(hi, dtype=np.int64).reshape(-1), positions.shape)
        touched = lo < hi
        if not touched.any():
            return
        if not touched.all():
            lo = np.where(touched, lo, _MAX)
            hi = np.where(touched, hi, _MIN)
        env = (int(lo.min()), int(hi.max()))
        flags = (_STORE if store else 0) | (_ATOMIC if atomic else 0)
        exact = dense is True or addresses is None
        rec = _Access(instance, flags, op, positions, None if exact else addresses, max(itemsize, 1), exact, lo, hi)
        key = memory.bucket_of(*env)
        for k, bucket in self.buckets.items():
            if key is None or k is None or k == key:
                self._against(bucket, rec, lo, hi, env, deps)
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = _Bucket(self.width)
            bucket.lo = np.zeros((0, self.width), np.int64)
            bucket.hi = np.zeros((0, self.width), np.int64)
        if store and not atomic and deps:
            self._prune(bucket, rec, lo, hi, deps, dense if callable(dense) else None)
        bucket.add(rec, lo, hi, env)
        if not rec.exact:
            self.retained.append(rec)
            if len(self.retained) > RETAINED_ADDRESS_SETS:
                self._evict()

    def _against(
        self,
        bucket: _Bucket,
        rec: _Access,
        lo: np.ndarray,
        hi: np.ndarray,
        env: tuple[int, int],
        deps: frozenset[int],
    ) -> None:
        n = bucket.count
        if n == 0:
            return
        flags = bucket.flags[:n]
        cand = (bucket.env_lo[:n] < env[1]) & (env[0] < bucket.env_hi[:n])
        if not rec.flags & _STORE:
            cand &= (flags & _STORE) != 0
        if rec.flags & _ATOMIC:
            cand &= (flags & _ATOMIC) == 0
        for i in np.flatnonzero(cand).tolist():
            other = bucket.records[i]
            if other is None or other.instance in deps or other.instance == rec.instance:
                continue
            olo = bucket.lo[i, rec.positions]
            ohi = bucket.hi[i, rec.positions]
            overlap = np.maximum(olo, lo) < np.minimum(ohi, hi)
            if not overlap.any() or not other.known:
                continue
            hit = _first_common_byte(rec, other, np.flatnonzero(overlap), lo, hi, olo, ohi)
            if hit is not None:
                block, address = hit
                raise MemoryFault(
                    f"race: {rec.op or 'this access'} and {other.op or 'another memory operation'} access the "
                    "same address with no token order between them",
                    address,
                    0,
                    block=block,
                    kind="race",
                )

    def _prune(
        self,
        bucket: _Bucket,
        rec: _Access,
        lo: np.ndarray,
        hi: np.ndarray,
        deps: frozenset[int],
        is_dense: Callable[[], bool] | None,
    ) -> None:
        """Forget the accesses this dense, weak store is ordered after and covers in every
        block: an access racing with one of them would also race with this store (it
        cannot be ordered after the store without being ordered after them)."""
        n = bucket.count
        ordered = [i for i in range(n) if (r := bucket.records[i]) is not None and r.instance in deps]
        if not ordered:
            return
        if not rec.exact:
            if is_dense is None or not is_dense():
                return
            rec.exact = True
            rec.forget()
        full_lo = np.full(bucket.width, _MAX, np.int64)
        full_hi = np.full(bucket.width, _MIN, np.int64)
        full_lo[rec.positions] = lo
        full_hi[rec.positions] = hi
        idx = np.array(ordered)
        rlo = bucket.lo[idx]
        rhi = bucket.hi[idx]
        covered = ((rlo >= rhi) | ((full_lo <= rlo) & (rhi <= full_hi))).all(axis=1)
        for i in idx[covered].tolist():
            r = bucket.records[i]
            bucket.drop(i)
            if r is not None:
                r.forget()
        if covered.any():
            self.retained = [r for r in self.retained if r.addresses is not None]
            bucket.compact()

    def _evict(self) -> None:
        """The oldest retained access gives up its address set: it stays exact if every
        block touched each byte of its range, and becomes unknown otherwise."""
        r = self.retained.pop(0)
        if r.addresses is None:
            return
        span = r.hi - r.lo
        if np.any(span > 0):
            rows = r.address_rows()
            valid = (rows >= 0).sum(axis=1)
            if rows.shape[0] == 1 and span.size > 1:
                valid = np.broadcast_to(valid, span.shape)
            # cheap necessary condition first: as many elements as the range has room for
            r.exact = bool(np.all((span <= 0) | (span == valid * r.itemsize))) and _dense_rows(rows, r.itemsize)
        r.forget()


def _dense_rows(rows: np.ndarray, itemsize: int) -> bool:
    """Whether each row's valid addresses cover, without gaps, the bytes from its lowest
    to its highest element."""
    if rows.shape[1] < 2 or (rows >= 0).all() and bool(np.all(np.diff(rows, axis=1) == itemsize)):
        return True
    valid = rows >= 0
    b = np.where(valid, rows & _BYTE_MASK, _MAX)
    s = np.sort(b, axis=1)
    n = valid.sum(axis=1)
    if (n == 0).all():
        return True
    distinct = np.ones(s.shape, dtype=bool)
    distinct[:, 1:] = s[:, 1:] != s[:, :-1]
    distinct &= s != _MAX
    count = distinct.sum(axis=1)
    low = s[:, 0]
    high = np.where(n > 0, np.take_along_axis(s, np.maximum(n - 1, 0)[:, None], axis=1)[:, 0], low)
    return bool(np.all((n == 0) | (high - low + itemsize == count * itemsize)))


def _byte_keys(acc: _Access, rows: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Keys (row << 48 | byte address) of the bytes `acc` touched in its address rows
    `local` (labelled `rows`)."""
    a = acc.address_rows()
    sel = a[local] if a.shape[0] > 1 else np.broadcast_to(a, (local.size, a.shape[1]))
    valid = sel >= 0
    byte = sel & _BYTE_MASK
    if acc.itemsize > 1:
        byte = (byte[..., None] + np.arange(acc.itemsize)).reshape(sel.shape[0], -1)
        valid = np.repeat(valid, acc.itemsize, axis=1)
    key_rows = np.broadcast_to(rows.astype(np.int64)[:, None], byte.shape)
    return (key_rows[valid] << 48) | byte[valid]


def _first_common_byte(
    rec: _Access,
    other: _Access,
    where: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    olo: np.ndarray,
    ohi: np.ndarray,
) -> tuple[int, int] | None:
    """(index into rec's blocks, address) of the first byte that both accesses touched, in
    the blocks at `where` (indices into rec.positions where their ranges overlap)."""
    if rec.exact and other.exact:
        first = int(where[0])
        return first, int(max(lo[first], olo[first]))
    keys_r = None if rec.exact else _byte_keys(rec, where, where)
    keys_o = None
    if not other.exact:
        keys_o = _byte_keys(other, where, np.searchsorted(other.positions, rec.positions[where]))
    if keys_r is None or keys_o is None:
        keys = keys_o if keys_r is None else keys_r
        r_lo, r_hi = (lo, hi) if keys_r is None else (olo, ohi)
        row = keys >> 48
        byte = keys & ((1 << 48) - 1)
        inside = (byte >= r_lo[row]) & (byte < r_hi[row])
        if not inside.any():
            return None
        k = int(keys[inside].min())
    else:
        both = np.intersect1d(keys_r, keys_o)
        if both.size == 0:
            return None
        k = int(both[0])
    return k >> 48, k & ((1 << 48) - 1)


__all__ = [
    "ALLOCATION_ALIGNMENT",
    "BASE_ADDRESS",
    "NIBBLE_TAG",
    "Allocation",
    "Memory",
    "MemoryFault",
    "byte_address",
    "element_address",
    "from_nibble_codes",
    "nibble_codes",
    "pack_nibbles",
    "unpack_nibbles",
]
