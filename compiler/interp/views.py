"""Runtime values of the view types: `tensor_view` and the tiled views over it.

A view value describes memory; it holds no data. Like every value in the machine it
covers a *group* of tile blocks: its dynamic parts (base address, shape, strides) are
arrays with one row per block, or a single row when every block has the same view (the
usual case: views are built from kernel arguments). `restrict(index)` gives the view
seen by a sub-group, as the machine needs when control flow splits a group.

    TensorView           base address, shape and strides in elements (unsigned, as the
                         spec reads the dynamic operands), element type
    PartitionView        tiles of `tile` laid edge to edge over a tensor view, tile
                         dimension i running along tensor dimension `dim_map[i]`
    StridedView          the same with tile i+1 starting `traversal_strides` elements
                         after tile i (gaps or overlaps between tiles)
    GatherScatterView    rows along `sparse_dim` picked one by one by an index tile;
                         the other dimensions are runs of tile-size elements starting
                         at an element offset

Index spaces (the indices a load or store may use; anything else is undefined
behaviour, reported by `ops_view`):

    partition/strided:  N[i] = ceildiv(S[dim_map[i]], step[i])
                        (step = the tile size, or the traversal stride)
    gather/scatter:     N[d] = S[d]  (the sparse dimension is not checked: rows outside
                        the tensor are padded on load and dropped on store)

Element (t_0, ..., t_n) of the tile at index (I_0, ..., I_n) of a partition or strided
view is the tensor element c with c[dim_map[i]] = I_i * step[i] + t_i; its address is
base + sum_d c[d] * strides[d] * itemsize.

Padding (what a load yields for tile elements outside the tensor): the keyword's value
in the element type when the type can encode it. Where it cannot, the value the spec's
conversion table gives (saturation to the largest finite value), namely
f8E4M3FN: pos_inf/neg_inf -> +/-448; f4E2M1FN: nan/pos_inf -> +6, neg_inf -> -6;
f8E8M0FNU (powers of two, no zero, no sign): zero/neg_zero/neg_inf -> 2**-127 (the
smallest), pos_inf -> 2**127. Without a padding value the spec leaves those elements
unspecified; the interpreter loads zero (all bits clear) there, deterministically.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..ir.floats import padding_bits
from ..ir.types import FloatType, IntegerType, Type
from ..layout.index_space import ceildiv, full_tiles
from . import dtypes
from .memory import NIBBLE_TAG, Allocation, Memory

# Shapes and strides are unsigned 64-bit values; arithmetic on them is done in int64
# with values clamped to this bound (no allocation comes near it), so that products
# never wrap silently. A view whose extent exceeds `LARGE` is flagged and its accesses
# are checked separately (see `ops_view`).
HUGE = 1 << 62
LARGE = 1 << 60


def unsigned64(a: np.ndarray) -> np.ndarray:
    """An integer (or i1) array's values read as unsigned, widened to uint64."""
    a = np.asarray(a)
    if a.dtype.kind == "u":
        return a.astype(np.uint64)
    return dtypes.as_unsigned(a).astype(np.uint64)


def clamp64(u: np.ndarray) -> np.ndarray:
    """uint64 values as int64, values above `HUGE` replaced by `HUGE`."""
    return np.minimum(u, np.uint64(HUGE)).astype(np.int64)


def is_packed(element: Type) -> bool:
    """Whether elements of this type take less than a byte in memory (two per byte)."""
    if isinstance(element, IntegerType):
        return element.width == 4
    return isinstance(element, FloatType) and element.name == "f4E2M1FN"


def padding_scalar(keyword: str | None, element: Type) -> np.ndarray:
    """The value (0-d array of the element's storage dtype) a load yields outside the
    tensor: the padding keyword's value, or zero when the view has none (the bits of
    `ir.floats.padding_bits`, which the Triton lowering uses too)."""
    dtype = dtypes.storage_dtype(element)
    fmt = element.name if isinstance(element, FloatType) else None
    bits = padding_bits(keyword, fmt)
    return np.array(bits, dtype=np.dtype(f"u{dtype.itemsize}")).view(dtype).reshape(())


def strided(a: np.ndarray, shape, strides) -> np.ndarray:
    """`as_strided` that keeps dtypes NumPy's array interface cannot describe (ml_dtypes'
    bfloat16, float8, ...), by going through unsigned integers of the same size."""
    if a.dtype.isbuiltin == 1:
        return as_strided(a, shape=shape, strides=strides)
    raw = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return as_strided(raw, shape=shape, strides=strides).view(a.dtype)


_CACHES: weakref.WeakKeyDictionary[Memory, dict[Any, Any]] = weakref.WeakKeyDictionary()


def memory_cache(memory: Memory) -> dict[Any, Any]:
    """Zero-copy arrays over a memory's allocations, kept across groups of tile blocks
    (every group builds its views anew from the same arguments). An entry holds the
    allocation it was made from and is used only while `find` still returns that very
    allocation (addresses are never reused, so a freed one never comes back)."""
    cache = _CACHES.get(memory)
    if cache is None:
        cache = _CACHES[memory] = {}
    elif len(cache) > 1024:
        cache.clear()
    return cache


@dataclass(slots=True, eq=False)
class TensorView:
    """A tensor in memory, for a group: `base` (Gv,) int64 addresses, `shape` and
    `strides` (Gv, rank) uint64 in elements; Gv is the group size or 1 (uniform)."""

    element: Type
    base: np.ndarray
    shape: np.ndarray
    strides: np.ndarray
    dims: np.ndarray = field(init=False, repr=False)  # shape as int64, clamped
    steps: np.ndarray = field(init=False, repr=False)  # strides as int64, clamped
    dtype: np.dtype = field(init=False, repr=False)  # of one element in memory
    packed: bool = field(init=False, repr=False)
    _large: bool | None = field(default=None, init=False, repr=False)
    _array: Any = field(default=None, init=False, repr=False)
    _disjoint: bool | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.dims = clamp64(self.shape)
        self.steps = clamp64(self.strides)
        self.dtype = dtypes.memory_dtype(self.element)
        self.packed = is_packed(self.element)

    def is_large(self) -> bool:
        """Whether some element's address may exceed `LARGE` (absurd shapes or strides),
        so that int64 address arithmetic needs a guard."""
        if self._large is None:
            if self.rank:
                with np.errstate(over="ignore"):
                    extent = self.base.astype(np.float64) + (
                        np.maximum(self.dims - 1, 0).astype(np.float64) * self.steps.astype(np.float64)
                    ).sum(axis=1) * max(self.dtype.itemsize, 1)
                self._large = bool((extent >= LARGE).any())
            else:
                self._large = False
        return self._large

    @property
    def rank(self) -> int:
        return self.shape.shape[1]

    @property
    def size(self) -> int:
        """Rows: the group size, or 1 when the view is the same for every block."""
        return self.base.shape[0]

    @property
    def uniform(self) -> bool:
        return self.base.shape[0] == 1

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def restrict(self, index: np.ndarray) -> TensorView:
        if self.uniform:
            return self
        return TensorView(self.element, self.base[index], self.shape[index], self.strides[index])

    def collapse(self) -> TensorView:
        """The same view with one row when all rows are equal (a cheap O(G) check)."""
        if self.uniform:
            return self
        b, s, t = self.base, self.shape, self.strides
        if (b == b[0]).all() and (s == s[0]).all() and (t == t[0]).all():
            return TensorView(self.element, b[:1], s[:1], t[:1])
        return self

    def array(self, memory: Memory) -> tuple[Allocation, np.ndarray] | None:
        """The whole tensor as a zero-copy NumPy view of the allocation holding it (and
        that allocation), when the view is uniform, of whole-byte elements, aligned, and
        every element lies inside one allocation; None otherwise."""
        if self._array is None:
            self._array = self._make_array(memory) or False
        return self._array or None

    def key(self) -> tuple | None:
        """What identifies a uniform view across groups (for `memory_cache`)."""
        if not self.uniform:
            return None
        return (self.dtype, int(self.base[0]), *self.shape[0].tolist(), -1, *self.strides[0].tolist())

    def _make_array(self, memory: Memory) -> tuple[Allocation, np.ndarray] | None:
        if not self.uniform or self.packed or self.rank == 0:
            return None
        base = int(self.base[0])
        cache = memory_cache(memory)
        key = self.key()
        hit = cache.get(key)
        if hit is not None and memory.find(base) is hit[0]:
            return hit
        dims = [int(d) for d in self.shape[0]]
        steps = [int(s) for s in self.strides[0]]
        if min(dims) == 0:
            return None
        itemsize = self.itemsize
        if not 0 <= base < LARGE:
            return None
        span = (sum((d - 1) * s for d, s in zip(dims, steps, strict=True)) + 1) * itemsize
        alloc = memory.find(base)
        if alloc is None or base + span > alloc.end or (base - alloc.base) % itemsize:
            return None
        start = base - alloc.base
        flat = alloc.data[start : start + span].view(self.dtype)
        made = alloc, strided(flat, dims, [s * itemsize for s in steps])
        cache[key] = made
        return made

    def nibble_base(self) -> np.ndarray:
        """For 4-bit elements: the base as a nibble index (byte address * 2, + 1 for a
        pointer to an upper nibble, which carries `NIBBLE_TAG`)."""
        return (self.base & ~NIBBLE_TAG) * 2 + ((self.base >> 62) & 1)

    def disjoint(self) -> bool:
        """Whether distinct elements of the (uniform) tensor have distinct addresses."""
        if self._disjoint is None:
            dims = [int(d) for d in self.shape[0]]
            steps = [int(s) for s in self.strides[0]]
            reach = 1
            ok = True
            for s, d in sorted((s, d) for d, s in zip(dims, steps, strict=True) if d > 1):
                if s < reach:
                    ok = False
                    break
                reach = s * d
            self._disjoint = ok
        return self._disjoint


@dataclass(slots=True, eq=False)
class TiledView:
    """A partition or strided view: tiles of `tile` elements, tile I starting at element
    I * `steps` along each tile dimension (`steps` is the tile for a partition view)."""

    tensor: TensorView
    tile: tuple[int, ...]
    steps: tuple[int, ...]
    dim_map: tuple[int, ...]
    padding: str | None = None
    _grid: Any = field(default=None, init=False, repr=False)

    kind: ClassVar[str] = "tiled view"

    @property
    def rank(self) -> int:
        return len(self.tile)

    def restrict(self, index: np.ndarray) -> TiledView:
        tensor = self.tensor.restrict(index)
        if tensor is self.tensor:
            return self
        return type(self)(tensor, self.tile, self.steps, self.dim_map, self.padding)

    def with_tensor(self, tensor: TensorView) -> TiledView:
        return type(self)(tensor, self.tile, self.steps, self.dim_map, self.padding)

    def index_space(self) -> np.ndarray:
        """(Gv, rank) int64: N[i] = ceildiv(S[dim_map[i]], steps[i])."""
        dims = self.tensor.dims[:, list(self.dim_map)]
        steps = np.array(self.steps, dtype=np.int64)
        return ceildiv(dims, steps)

    def grid(self, memory: Memory) -> tuple[Allocation, np.ndarray] | None:
        """The full tiles as one zero-copy array of shape (F_0, ..., F_n, T_0, ..., T_n):
        F_i full tiles along tile dimension i (tiles that lie entirely inside the tensor)."""
        if self._grid is None:
            made = self.tensor.array(memory)
            if made is None:
                self._grid = False
                return None
            cache = memory_cache(memory)
            key = (self.tensor.key(), self.tile, self.steps, self.dim_map)
            hit = cache.get(key)
            if hit is not None and hit[0] is made[0]:
                self._grid = hit
            else:
                alloc, whole = made
                a = whole.transpose(self.dim_map)
                counts = [full_tiles(n, t, s) for n, t, s in zip(a.shape, self.tile, self.steps, strict=True)]
                strides = [s * st for s, st in zip(self.steps, a.strides, strict=True)]
                self._grid = (alloc, strided(a, (*counts, *self.tile), (*strides, *a.strides)))
                cache[key] = self._grid
        return self._grid or None


@dataclass(slots=True, eq=False)
class PartitionView(TiledView):
    kind: ClassVar[str] = "partition_view"


@dataclass(slots=True, eq=False)
class StridedView(TiledView):
    kind: ClassVar[str] = "strided_view"


@dataclass(slots=True, eq=False)
class GatherScatterView:
    """Tiles whose `sparse_dim` rows are picked by a 1-D index tile; along the other
    dimensions a tile covers `tile[d]` elements from an element offset."""

    tensor: TensorView
    tile: tuple[int, ...]
    sparse_dim: int
    padding: str | None = None

    kind: ClassVar[str] = "gather_scatter_view"

    @property
    def rank(self) -> int:
        return len(self.tile)

    def restrict(self, index: np.ndarray) -> GatherScatterView:
        tensor = self.tensor.restrict(index)
        if tensor is self.tensor:
            return self
        return GatherScatterView(tensor, self.tile, self.sparse_dim, self.padding)

    def with_tensor(self, tensor: TensorView) -> GatherScatterView:
        return GatherScatterView(tensor, self.tile, self.sparse_dim, self.padding)

    def index_space(self) -> np.ndarray:
        """(Gv, rank) int64: the tensor's shape."""
        return self.tensor.dims


__all__ = [
    "GatherScatterView",
    "PartitionView",
    "StridedView",
    "TensorView",
    "TiledView",
    "padding_scalar",
    "unsigned64",
]
