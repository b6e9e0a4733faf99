"""Semantics of the view ops: building views, querying their shapes, and loading,
storing and atomically reducing tiles through them.

How an access runs (`load_view_tko`, `store_view_tko`, `atomic_red_view_tko`):

1. The indices (unsigned) are checked against the view's index space for every block
   of the group; an index outside it is undefined behaviour and reported, and so is a
   tile that runs past the tensor along a dimension its op marks `inbounds` (13.4).
2. Fast path (partition and strided views). When the tensor view is the same for the
   whole group and lies, aligned, inside one allocation, it is a zero-copy NumPy
   strided array over the allocation's bytes (`TensorView.array`), and its full tiles
   one more strided array of shape (F_0, ..., F_n, T_0, ..., T_n) (`TiledView.grid`).
   The group's tiles are then picked on the leading axes only: one slice when the
   indices are a contiguous run (block ids 0..G-1), otherwise fancy indexing with
   index arrays of length G. A load is one copy, a store one assignment, an atomic
   reduction one `ufunc.at`.
3. General path: blocks whose tile runs past the tensor's edge (only those), gather/
   scatter views, views that differ between blocks or are not inside one allocation,
   and sub-byte elements. Per-element addresses are computed with the tile's
   out-of-bounds elements masked (padding on load, dropped on store) and go through
   `Memory.read`/`write`, which check every address, so an access outside memory
   names the exact address, the tile element and the block.

Loads return arrays of their own (memory may change later; values never do). A big
load reuses the array it returned the previous time when nothing references it any
more (checked with CPython's reference count), which spares allocating and
page-faulting megabytes per group of tile blocks. Elements a load
finds outside the tensor take the view's padding value, or zero without one (the spec
leaves them unspecified; see `views.padding_scalar`). tf32 elements are loaded with the
low 13 mantissa bits cleared (what tf32 ignores), NaNs kept NaN, so that tf32 tiles
hold tf32 values only. Sub-byte elements (f4E2M1FN, i4) are packed two to a byte,
the lower-indexed element (offset from the base pointer) in the low nibble.

Atomic reductions apply each element's update one after the other (`ufunc.at`), so
duplicate addresses across blocks accumulate exactly as some sequential order of the
atomics would (for `addf`, every partial sum rounded to the element type).
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir.attributes import DenseArrayAttr
from ..ir.types import GatherScatterViewType, IntegerType, PartitionViewType, StridedViewType, TileType
from . import dtypes
from .machine import TOKEN
from .memory import MemoryFault
from .registry import Ctx, semantics
from .views import (
    LARGE,
    GatherScatterView,
    PartitionView,
    StridedView,
    TensorView,
    TiledView,
    padding_scalar,
    unsigned64,
)

# --------------------------------------------------------------------------------------
# building views


@semantics("make_tensor_view")
def _make_tensor_view(ctx: Ctx) -> TensorView:
    t = ctx.result_type()
    base = np.asarray(ctx.arg("base"), dtype=np.int64).reshape(-1)
    if all(a.shape[0] == 1 for a in ctx.args):  # the usual case: one view for the group
        dynamic = iter(ctx.args[1:])
        sizes = [int(unsigned64(next(dynamic))[0]) if d is None else d for d in (*t.shape, *t.strides)]
        rank = len(t.shape)
        shape = np.array([sizes[:rank]], dtype=np.uint64).reshape(1, rank)
        strides = np.array([sizes[rank:]], dtype=np.uint64).reshape(1, rank)
        return TensorView(t.element, base, shape, strides)
    dynamic_shape = iter(ctx.args_of("dynamicShape"))
    dynamic_strides = iter(ctx.args_of("dynamicStrides"))
    columns: list[list[np.ndarray]] = []
    for static, dynamic in ((t.shape, dynamic_shape), (t.strides, dynamic_strides)):
        cols = []
        for d in static:
            cols.append(unsigned64(next(dynamic)).reshape(-1) if d is None else np.array([d], dtype=np.uint64))
        columns.append(cols)
    rows = max([base.shape[0], *(c.shape[0] for cols in columns for c in cols)])
    rank = len(t.shape)
    shape = np.empty((rows, rank), dtype=np.uint64)
    strides = np.empty((rows, rank), dtype=np.uint64)
    for i in range(rank):
        shape[:, i] = columns[0][i]
        strides[:, i] = columns[1][i]
    if base.shape[0] != rows:
        base = np.broadcast_to(base, (rows,)).copy()
    return TensorView(t.element, base, shape, strides).collapse()


@semantics("make_partition_view")
def _make_partition_view(ctx: Ctx) -> PartitionView:
    t = ctx.result_type()
    assert isinstance(t, PartitionViewType)
    tile = tuple(t.tile_shape)
    return PartitionView(ctx.args[0], tile, tile, tuple(t.dim_map), t.padding)


@semantics("make_strided_view")
def _make_strided_view(ctx: Ctx) -> StridedView:
    t = ctx.result_type()
    assert isinstance(t, StridedViewType)
    return StridedView(ctx.args[0], tuple(t.tile_shape), tuple(t.traversal_strides), tuple(t.dim_map), t.padding)


@semantics("make_gather_scatter_view")
def _make_gather_scatter_view(ctx: Ctx) -> GatherScatterView:
    t = ctx.result_type()
    assert isinstance(t, GatherScatterViewType)
    return GatherScatterView(ctx.args[0], tuple(t.tile_shape), t.sparse_dim, t.padding)


# --------------------------------------------------------------------------------------
# shape queries


def _sizes(ctx: Ctx, values: np.ndarray, what: str) -> tuple[np.ndarray, ...]:
    """One scalar tile per column of `values` ((Gv, rank), non-negative), in each
    result's integer type; a size that does not fit (read as unsigned) is reported."""
    out = []
    for i in range(values.shape[1]):
        t = ctx.result_type(i)
        element = t.element if isinstance(t, TileType) else t
        width = element.width if isinstance(element, IntegerType) else 64
        column = values[:, i].astype(np.uint64)
        if width < 64:
            too_big = column >= np.uint64(1 << width)
            if too_big.any():
                p = int(np.flatnonzero(too_big)[0])
                raise ctx.error(
                    f"{what} {i} is {int(column[p])}, which does not fit in the result type i{width}",
                    blocks=np.array([p]),
                )
        dtype = dtypes.storage_dtype(element)
        out.append(column != 0 if dtype == np.bool_ else column.astype(dtype))
    return tuple(out)


@semantics("get_tensor_shape")
def _get_tensor_shape(ctx: Ctx) -> tuple[np.ndarray, ...]:
    tensor: TensorView = ctx.args[0]
    return _sizes(ctx, tensor.shape, "dimension")


@semantics("get_index_space_shape")
def _get_index_space_shape(ctx: Ctx) -> tuple[np.ndarray, ...]:
    view = ctx.args[0]
    return _sizes(ctx, view.index_space(), "index space dimension")


# --------------------------------------------------------------------------------------
# accesses


_WHAT = {"load_view_tko": "load", "store_view_tko": "store", "atomic_red_view_tko": "atomic access"}


def _fmt(values: list[int | str]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


class _Access:
    """One view access by a group (or, for the blocks with partial tiles, part of one):
    the view, the checked indices, and where its rows sit in the group."""

    __slots__ = ("ctx", "view", "tensor", "idx", "rows", "positions")

    def __init__(
        self, ctx: Ctx, view: TiledView | GatherScatterView, idx: list[np.ndarray], positions: np.ndarray | None
    ) -> None:
        self.ctx = ctx
        self.view = view
        self.tensor: TensorView = view.tensor
        # Tiled views: int64 (n_i,) tile indices. Gather/scatter: int64 (n_i,) element
        # offsets, and at the sparse dimension the uint64 (n, T) row indices.
        self.idx = idx
        self.rows = max(self.tensor.size, *(a.shape[0] for a in idx))
        # Group positions of the rows (None: row i is position i, or all when rows == 1).
        self.positions = positions

    @classmethod
    def start(cls, ctx: Ctx, view: TiledView | GatherScatterView, raw: list[np.ndarray]) -> _Access:
        """Check the indices against the view's index space (undefined behaviour
        outside it) and set up the access."""
        sparse = view.sparse_dim if isinstance(view, GatherScatterView) else -1
        idx = [unsigned64(a) for a in raw]
        idx = [a.reshape(a.shape[0], -1) if i == sparse else a.reshape(-1) for i, a in enumerate(idx)]
        space = view.index_space()
        bad: np.ndarray | None = None
        for i, a in enumerate(idx):
            if i == sparse:
                continue
            out = a >= space[:, i].astype(np.uint64)
            bad = out if bad is None else np.logical_or(bad, out)
        if bad is not None and bad.any():
            p = int(np.flatnonzero(bad)[0])
            index = ["*" if i == sparse else int(a[min(p, a.shape[0] - 1)]) for i, a in enumerate(idx)]
            dims = [int(n) for n in space[min(p, space.shape[0] - 1)]]
            raise ctx.error(
                f"index {_fmt(index)} is outside the index space {_fmt(dims)} of the {view.kind}",
                blocks=np.array([p if bad.shape[0] > 1 else 0]),
            )
        checked = [a if i == sparse else a.astype(np.int64) for i, a in enumerate(idx)]
        return cls(ctx, view, checked, None)

    def check_inbounds(self, flags: tuple[int, ...]) -> None:
        """13.4's `inbounds` (cuTile's check_bounds=False): the op promised that the tile lies
        inside the tensor along the flagged indices' dimensions; one that does not is
        undefined behaviour (the compiled code drops those masks), reported. A gather/scatter
        view's sparse rows keep their masks (the lowering's too): not checked."""
        view = self.view
        sparse = view.sparse_dim if isinstance(view, GatherScatterView) else -1
        coordinates = self.coordinates()
        for i, flag in enumerate(flags):
            if not flag or i == sparse:
                continue
            d = view.dim_map[i] if isinstance(view, TiledView) else i
            coord, extent = coordinates[d]
            past = coord >= extent
            rows = past.reshape(past.shape[0], -1).any(axis=1)
            if rows.any():
                p = int(np.flatnonzero(rows)[0])
                index = ["*" if j == sparse else int(a[min(p, a.shape[0] - 1)]) for j, a in enumerate(self.idx)]
                size = int(extent.reshape(-1)[min(p, extent.size - 1)])
                raise self.ctx.error(
                    f"the tile at index {_fmt(index)} reaches past the tensor's extent {size} along dimension "
                    f"{d}, though the op says it stays inside (inbounds; undefined behaviour)",
                    blocks=np.array([p if rows.shape[0] > 1 else 0]),
                )

    def subset(self, local: np.ndarray) -> _Access:
        """The access of rows `local` only."""
        idx = [a if a.shape[0] == 1 else a[local] for a in self.idx]
        positions = local if self.positions is None else self.positions[local]
        return _Access(self.ctx, self.view.restrict(local), idx, positions)

    def position(self, row: int) -> int:
        return row if self.positions is None else int(self.positions[row])

    # -- element coordinates --------------------------------------------------------------

    def coordinates(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each tensor dimension: the coordinates of the tile's elements along it,
        shaped to broadcast against (rows, *tile), and the tensor's extent (as (Gv, 1, ...))."""
        view, tensor = self.view, self.tensor
        rank = view.rank
        ones = (1,) * rank
        out: list[tuple[np.ndarray, np.ndarray]] = [None] * rank  # type: ignore[list-item]
        for i in range(rank):
            d = view.dim_map[i] if isinstance(view, TiledView) else i
            shape = [1] * rank
            shape[i] = view.tile[i]
            extent = tensor.dims[:, d].reshape((-1, *ones))
            if isinstance(view, GatherScatterView) and i == view.sparse_dim:
                rows = self.idx[i]
                coord = np.minimum(rows, np.uint64(LARGE)).astype(np.int64).reshape((rows.shape[0], *shape))
            else:
                step = view.steps[i] if isinstance(view, TiledView) else 1
                start = (self.idx[i] * step).reshape((-1, *ones))
                coord = start + np.arange(view.tile[i], dtype=np.int64).reshape((1, *shape))
            out[d] = (coord, extent)
        return out

    def elements(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(base (Gv, 1, ...), element offsets from the base (rows', *tile), in-bounds
        mask or None when every element is inside the tensor). Out-of-bounds elements
        get the offset of an element inside the tensor (masked anyway), so offsets stay
        small."""
        tensor = self.tensor
        rank = self.view.rank
        ones = (1,) * rank
        offset: np.ndarray | int = 0
        mask: np.ndarray | None = None
        for d, (coord, extent) in enumerate(self.coordinates()):
            inside = coord < extent
            if not inside.all():
                mask = inside if mask is None else mask & inside
                coord = np.minimum(coord, np.maximum(extent - 1, 0))
            offset = offset + coord * tensor.steps[:, d].reshape((-1, *ones))
        offsets = np.asarray(offset, dtype=np.int64)
        shape = (max(self.rows, offsets.shape[0]), *self.view.tile)
        offsets = np.broadcast_to(offsets, shape)
        if mask is not None:
            mask = np.broadcast_to(mask, shape)
        return tensor.base.reshape((-1, *ones)), offsets, mask

    def ranges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Per row, the lowest and highest in-bounds coordinate along each tensor
        dimension ((rows, rank) int64 each), and which rows touch no element at all
        (None: every row touches some)."""
        view = self.view
        rank = view.rank
        n = self.rows
        lo = np.empty((n, rank), dtype=np.int64)
        hi = np.empty((n, rank), dtype=np.int64)
        empty = None
        for i in range(rank):
            d = view.dim_map[i] if isinstance(view, TiledView) else i
            extent = self.tensor.dims[:, d]
            if isinstance(view, GatherScatterView) and i == view.sparse_dim:
                rows = self.idx[i]
                inside = rows < self.tensor.shape[:, d].reshape(-1, 1)
                signed = np.minimum(rows, np.uint64(LARGE)).astype(np.int64)
                lo[:, d] = np.where(inside, signed, LARGE).min(axis=1)
                hi[:, d] = np.where(inside, signed, -1).max(axis=1)
                none = ~inside.any(axis=1)
                if none.any():
                    empty = np.broadcast_to(none, (n,))
            else:
                step = view.steps[i] if isinstance(view, TiledView) else 1
                start = self.idx[i] * step
                lo[:, d] = start
                hi[:, d] = np.minimum(start + (view.tile[i] - 1), extent - 1)
        return lo, hi, empty

    def byte_ranges(
        self, lo_c: np.ndarray, hi_c: np.ndarray, empty: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per row, [lo, hi): the bytes the access touches lie inside (empty rows: lo == hi),
        from `ranges()`."""
        tensor = self.tensor
        first = (lo_c * tensor.steps).sum(axis=1)
        last = (hi_c * tensor.steps).sum(axis=1)
        if tensor.packed:
            lo = (tensor.nibble_base() + first) >> 1
            hi = ((tensor.nibble_base() + last) >> 1) + 1
        else:
            lo = tensor.base + first * tensor.itemsize
            hi = tensor.base + (last + 1) * tensor.itemsize
        if empty is not None:
            lo = np.where(empty, 0, lo)
            hi = np.where(empty, 0, hi)
        return lo, hi

    # -- errors ------------------------------------------------------------------------------

    def fault(self, f: MemoryFault, flat: int) -> Exception:
        """The error for a fault at flat element `flat` of the (rows, *tile) access."""
        size = int(np.prod(self.view.tile))
        row, element = divmod(flat, size)
        where = tuple(int(e) for e in np.unravel_index(element, self.view.tile))
        return self.ctx.error(
            f"{f.message} at element {_fmt(list(where))} of the tile",
            blocks=np.array([self.position(row)]),
            address=f.address,
        )

    def guard_large(self) -> None:
        """For views whose addresses may pass LARGE (absurd shapes or strides): fail on
        the first row whose in-bounds elements reach beyond it (no allocation does),
        naming the first element outside memory at its exact address."""
        tensor = self.tensor
        if not tensor.is_large():
            return
        lo_c, hi_c, empty = self.ranges()
        with np.errstate(over="ignore"):
            top = np.broadcast_to(tensor.base, (self.rows,)).astype(np.float64) + (
                hi_c.astype(np.float64) * tensor.strides.astype(np.float64)
            ).sum(axis=1) * max(tensor.itemsize, 1)
        over = top >= LARGE
        if empty is not None:
            over &= ~empty
        if not over.any():
            return
        row = int(np.flatnonzero(over)[0])
        memory = self.ctx.machine.memory
        one = self.subset(np.array([row]))
        coords = [np.broadcast_to(c, (1, *self.view.tile)).reshape(-1) for c, _ in one.coordinates()]
        extents = [int(e.reshape(-1)[0]) for _, e in one.coordinates()]
        base = int(one.tensor.nibble_base()[0] if tensor.packed else one.tensor.base[0])
        strides = [int(s) for s in one.tensor.strides[0]]
        itemsize = tensor.itemsize
        for k in range(coords[0].shape[0]):
            c = [int(a[k]) for a in coords]
            if any(x >= e for x, e in zip(c, extents, strict=True)):
                continue
            offset = sum(x * s for x, s in zip(c, strides, strict=True))
            address = (base + offset) // 2 if tensor.packed else base + offset * itemsize
            alloc = memory.find(address) if 0 <= address < LARGE else None
            if alloc is None or address + max(itemsize, 1) > alloc.end:
                what = _WHAT.get(self.ctx.op.mnemonic, "access")
                fault = MemoryFault(f"{what} outside every allocation", address)
                raise self.fault(fault, row * coords[0].shape[0] + k)


def _memory_call(acc: _Access, where: np.ndarray | None, call: Callable[[], Any]) -> Any:
    """Run a Memory access of the flat in-bounds elements of `acc` (at positions `where`
    of the flattened (rows, *tile) access; None: all, in order), turning a MemoryFault
    into the op's error."""
    try:
        return call()
    except MemoryFault as f:
        raise acc.fault(f, f.position if where is None else int(where[f.position])) from None


# -- element type conversions between memory and tiles ---------------------------------------

# -- the general path ----------------------------------------------------------------------------


def _flat_access(acc: _Access, rows: int | None = None) -> tuple[tuple[int, ...], np.ndarray, np.ndarray | None]:
    """The in-bounds elements of the access, flat: (shape of the whole access (rows,
    *tile), their addresses (4-bit elements: nibble-tagged, see `memory.py`), their
    positions in the flattened access (None: all elements, in order))."""
    acc.guard_large()
    tensor = acc.tensor
    base, offsets, mask = acc.elements()
    shape = (max(offsets.shape[0], rows or 0), *offsets.shape[1:])
    if tensor.packed:
        nibble = tensor.nibble_base().reshape(base.shape) + offsets
        addresses = (nibble >> 1) | ((nibble & 1) << 62)
    else:
        addresses = base + offsets * tensor.itemsize
    addresses = np.broadcast_to(addresses, shape).reshape(-1)
    where = None
    if mask is not None:
        where = np.flatnonzero(np.broadcast_to(mask, shape))
        addresses = addresses[where]
    return shape, addresses, where


def _flat_values(values: np.ndarray, shape: tuple[int, ...], where: np.ndarray | None) -> np.ndarray:
    flat = np.broadcast_to(values, shape).reshape(-1)
    return flat if where is None else flat[where]


def _bits(acc: _Access) -> int | None:
    return 4 if acc.tensor.packed else None


def _general_load(acc: _Access) -> np.ndarray:
    tensor = acc.tensor
    element = tensor.element
    shape, addresses, where = _flat_access(acc)
    memory = acc.ctx.machine.memory
    dtype = dtypes.storage_dtype(element) if tensor.packed else tensor.dtype
    raw = _memory_call(acc, where, lambda: memory.read(addresses, dtype, bits=_bits(acc), what="load"))
    got = raw if tensor.packed else dtypes.from_memory(raw, element)
    if where is None:
        return got.reshape(shape)
    pad = padding_scalar(acc.view.padding, element)
    out = np.full(shape, pad, dtype=pad.dtype)
    out.reshape(-1)[where] = got
    return out


def _general_store(acc: _Access, values: np.ndarray) -> None:
    tensor = acc.tensor
    shape, addresses, where = _flat_access(acc, values.shape[0])
    flat = _flat_values(values, shape, where)
    memory = acc.ctx.machine.memory
    dtype = dtypes.storage_dtype(tensor.element) if tensor.packed else tensor.dtype
    _memory_call(acc, where, lambda: memory.write(addresses, flat, dtype, bits=_bits(acc), what="store"))


# -- atomic reductions -------------------------------------------------------------------------------

_RMW: dict[str, tuple[np.ufunc, bool]] = {
    "add": (np.add, False),
    "addf": (np.add, False),
    "and": (np.bitwise_and, False),
    "or": (np.bitwise_or, False),
    "xor": (np.bitwise_xor, False),
    "max": (np.maximum, False),
    "min": (np.minimum, False),
    "umax": (np.maximum, True),
    "umin": (np.minimum, True),
}


def _general_reduce(acc: _Access, mode: str, values: np.ndarray) -> None:
    """Every element's update in turn (block order, then row-major within a tile), by
    `Memory.atomic_rmw`, which applies duplicates sequentially."""
    tensor = acc.tensor
    shape, addresses, where = _flat_access(acc, values.shape[0])
    flat = _flat_values(values, shape, where)
    memory = acc.ctx.machine.memory
    _memory_call(acc, where, lambda: memory.atomic_rmw(addresses, flat, mode, tensor.dtype, what="atomic access"))


# -- the fast path -------------------------------------------------------------------------------------


def _fast_grid(acc: _Access, writing: bool) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The full-tile grid array and which rows index a full tile (None: all do), when
    the fast path applies."""
    view = acc.view
    if not isinstance(view, TiledView):
        return None
    made = view.grid(acc.ctx.machine.memory)
    if made is None:
        return None
    alloc, grid = made
    if writing and alloc.read_only:
        return None
    full = None
    counts = grid.shape[: view.rank]
    for i, a in enumerate(acc.idx):
        inside = a < counts[i]
        if not inside.all():
            part = np.broadcast_to(inside, (acc.rows,))
            full = part if full is None else full & part
    return grid, full


def _tile_key(idx: list[np.ndarray]) -> tuple:
    """An index for the grid's leading axes: an int where the index is uniform, and
    for the others one slice when a single index is a contiguous run, else index
    arrays (fancy indexing, which copies)."""
    varying = [i for i, a in enumerate(idx) if a.shape[0] > 1]
    if not varying:
        return tuple(int(a[0]) for a in idx)
    if len(varying) == 1:
        a = idx[varying[0]]
        first = int(a[0])
        if int(a[-1]) - first == a.shape[0] - 1 and (a.shape[0] == 2 or (np.diff(a) == 1).all()):
            return tuple(slice(first, first + a.shape[0]) if i == varying[0] else int(b[0]) for i, b in enumerate(idx))
    return tuple(a if a.shape[0] > 1 else int(a[0]) for a in idx)


# Per machine, per load op: the array its fast path returned last time.
_BUFFERS: weakref.WeakKeyDictionary[Any, dict[Any, np.ndarray]] = weakref.WeakKeyDictionary()


def _output(ctx: Ctx, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A fresh array for a load's result: the one this op returned before when nothing
    references it any more (CPython's reference count: the previous group's value, or a
    loop's previous iteration's, is dead), else a new one. Reusing it spares allocating
    and page-faulting megabytes per group, which otherwise dominates big streaming loads."""
    per_machine = _BUFFERS.get(ctx.machine)
    if per_machine is None:
        per_machine = _BUFFERS[ctx.machine] = {}
    old = per_machine.get(ctx.op)
    # References to `old`: the dict, the local name and getrefcount's argument.
    if old is not None and old.shape == shape and old.dtype == dtype and sys.getrefcount(old) == 3:
        return old
    out = np.empty(shape, dtype=dtype)
    if out.nbytes >= _REUSE_BYTES:
        per_machine[ctx.op] = out
    return out


_REUSE_BYTES = 1 << 18  # smaller arrays come from malloc's pools cheaply


def _fast_load(ctx: Ctx, grid: np.ndarray, idx: list[np.ndarray]) -> np.ndarray:
    """The tiles at `idx` (full tiles only) as a fresh (rows, *tile) array."""
    key = _tile_key(idx)
    rank = grid.ndim // 2
    if all(isinstance(k, int) for k in key):
        return grid[key][None].copy()
    arrays = [i for i, k in enumerate(key) if isinstance(k, np.ndarray)]
    if len(arrays) > 1:
        return grid[key]  # fancy indexing on several axes: a new array already
    if not arrays:  # one contiguous run
        picked = grid[key]
        out = _output(ctx, picked.shape, picked.dtype)
        np.copyto(out, picked)
        return out
    # One index array: the other (uniform) indices pick a view, then one `take`.
    k = arrays[0]
    part = grid[tuple(slice(None) if i == k else v for i, v in enumerate(key))]
    rows = idx[k]
    out = _output(ctx, (rows.shape[0], *grid.shape[rank:]), grid.dtype)
    np.take(part, rows, axis=0, out=out)
    return out


def _fast_store(grid: np.ndarray, idx: list[np.ndarray], values: np.ndarray) -> None:
    key = _tile_key(idx)
    if all(isinstance(k, int) for k in key):
        grid[key] = values[-1]  # several blocks storing one tile: the last one wins
    else:
        grid[key] = values


def _load(acc: _Access) -> np.ndarray:
    tensor = acc.tensor
    fast = _fast_grid(acc, writing=False)
    if fast is None:
        return _general_load(acc)
    grid, full = fast
    if full is None:
        return dtypes.from_memory(_fast_load(acc.ctx, grid, acc.idx), tensor.element)
    if not full.any():
        return _general_load(acc)
    inner = np.flatnonzero(full)
    edge = np.flatnonzero(~full)
    first = dtypes.from_memory(_fast_load(acc.ctx, grid, acc.subset(inner).idx), tensor.element)
    out = np.empty((acc.rows, *acc.view.tile), dtype=first.dtype)
    out[inner] = first
    out[edge] = _general_load(acc.subset(edge))
    return out


def _store(acc: _Access, values: np.ndarray) -> None:
    tensor = acc.tensor
    fast = _fast_grid(acc, writing=True)
    if fast is None:
        _general_store(acc, values)
        return
    grid, full = fast
    values = values.astype(tensor.dtype, copy=False)
    if full is None:
        _fast_store(grid, acc.idx, values)
        return
    if not full.any():
        _general_store(acc, values)
        return
    inner = np.flatnonzero(full)
    edge = np.flatnonzero(~full)
    _fast_store(grid, acc.subset(inner).idx, values if values.shape[0] == 1 else values[inner])
    _general_store(acc.subset(edge), values if values.shape[0] == 1 else values[edge])


def _reduce(acc: _Access, mode: str, values: np.ndarray) -> None:
    ufunc, unsigned = _RMW[mode]
    tensor = acc.tensor
    values = values.astype(tensor.dtype, copy=False)
    # The fast path needs distinct addresses for distinct tensor elements: `ufunc.at`
    # updates one tile's elements as one vector operation.
    fast = _fast_grid(acc, writing=True) if tensor.uniform and tensor.disjoint() else None
    if fast is None or (fast[1] is not None and not fast[1].any()):
        _general_reduce(acc, mode, values)
        return
    grid, full = fast
    inner = acc
    if full is not None:
        edge = np.flatnonzero(~full)
        _general_reduce(acc.subset(edge), mode, values if values.shape[0] == 1 else values[edge])
        keep = np.flatnonzero(full)
        inner = acc.subset(keep)
        values = values if values.shape[0] == 1 else values[keep]
    if unsigned:
        grid = grid.view(dtypes.as_unsigned(values[:0]).dtype)
        values = dtypes.as_unsigned(values)
    n = max(inner.rows, values.shape[0])
    key = tuple(np.broadcast_to(a, (n,)) for a in inner.idx)
    ufunc.at(grid, key, np.broadcast_to(values, (n, *values.shape[1:])))


# -- race recording ------------------------------------------------------------------------------


_NAMES: weakref.WeakKeyDictionary[Any, dict[Any, str]] = weakref.WeakKeyDictionary()


def _describe(ctx: Ctx) -> str:
    """How a race report names this op (`load_view_tko at file:line:col`), per machine
    and op computed once (finding the line and column is not free)."""
    names = _NAMES.get(ctx.machine)
    if names is None:
        names = _NAMES[ctx.machine] = {}
    name = names.get(ctx.op)
    if name is None:
        where = ctx.machine.where(ctx.op)
        name = names[ctx.op] = f"{ctx.op.mnemonic} at {where}" if where else ctx.op.mnemonic
    return name


def _record(ctx: Ctx, acc: _Access, store: bool, atomic: bool, instance: int) -> None:
    """Tell the memory which bytes each block touched (for race detection): per block the
    byte range of the tile's in-bounds elements, from the tile's coordinates (cheap), and
    the exact addresses only if the memory asks (overlapping ranges)."""
    machine = ctx.machine
    memory = machine.memory
    if not memory.race_checking:
        return
    tensor = acc.tensor
    lo_c, hi_c, empty = acc.ranges()
    lo, hi = acc.byte_ranges(lo_c, hi_c, empty)
    itemsize = 1 if tensor.packed else tensor.itemsize
    # Dense: the in-bounds elements of every tile fill their byte range (distinct tensor
    # elements at distinct addresses, as many elements as the range holds).
    dense = (
        not tensor.packed
        and isinstance(acc.view, TiledView)
        and tensor.uniform
        and tensor.disjoint()
        and bool(np.all(hi - lo == np.prod(hi_c - lo_c + 1, axis=1) * itemsize))
    )
    g = ctx.group

    def addresses() -> np.ndarray:
        base, offsets, mask = acc.elements()
        if tensor.packed:
            out = (tensor.nibble_base().reshape(base.shape) + offsets) >> 1
        else:
            out = base + offsets * itemsize
        if mask is not None:
            out = np.where(mask, out, -1)
        return out.reshape(out.shape[0], -1)

    try:
        memory.check_access(
            instance=instance,
            deps=ctx.input_deps(),
            store=store,
            block_ids=g.linear(machine.grid),
            lo=lo,
            hi=hi,
            addresses=None if dense else addresses,
            atomic=atomic,
            dense=dense,
            itemsize=itemsize,
            op=_describe(ctx),
        )
    except MemoryFault as f:
        raise ctx.error(f.message, blocks=np.array([f.block or 0]), address=f.address) from None


# --------------------------------------------------------------------------------------
# the ops


def _is_ordered(ctx: Ctx) -> bool:
    """A non-weak access (relaxed, acquire, release): such accesses never race with each other."""
    return ctx.keyword("memory_ordering_semantics", "weak") != "weak"


def _view_access(ctx: Ctx) -> _Access:
    """The access of a view load or store, its `inbounds` promise checked."""
    acc = _Access.start(ctx, ctx.arg("view"), ctx.args_of("index"))
    inbounds = ctx.attr("inbounds")
    if isinstance(inbounds, DenseArrayAttr) and any(inbounds.values):
        acc.check_inbounds(inbounds.values)
    return acc


@semantics("load_view_tko")
def _load_view(ctx: Ctx):
    acc = _view_access(ctx)
    instance = ctx.memory_instance()
    tile = _load(acc)
    _record(ctx, acc, False, _is_ordered(ctx), instance)
    return tile, TOKEN


@semantics("store_view_tko")
def _store_view(ctx: Ctx):
    acc = _view_access(ctx)
    instance = ctx.memory_instance()
    _record(ctx, acc, True, _is_ordered(ctx), instance)
    _store(acc, np.asarray(ctx.arg("tile")))
    return TOKEN


@semantics("atomic_red_view_tko")
def _atomic_red_view(ctx: Ctx):
    acc = _Access.start(ctx, ctx.arg("view"), ctx.args_of("index"))
    instance = ctx.memory_instance()
    mode = ctx.keyword("mode")
    if mode not in _RMW:
        raise ctx.error(f"the atomic mode {mode} is not supported by atomic_red_view_tko")
    _record(ctx, acc, True, True, instance)
    # Every block applies its update, even where the view, index and value are the same
    # for the whole group (unlike a load or a store, an update is not idempotent).
    value = np.asarray(ctx.arg("value"))
    value = np.broadcast_to(value, (ctx.group.size, *value.shape[1:]))
    with np.errstate(all="ignore"):
        _reduce(acc, mode, value)
    return TOKEN
