"""Semantics of the pointer ops: `offset`, `load_ptr_tko`, `store_ptr_tko`,
`atomic_rmw_tko`, `atomic_cas_tko`, `alloca` and `get_global`.

Pointers are int64 byte addresses into `Memory` (pointers to 4-bit elements carry
`NIBBLE_TAG` for the upper nibble of a byte; see `memory.py`). Masked-off lanes never
touch memory, so they never fault. A load or store whose pointer tile is the same for
every block of a group is done once for the group (every block would read the same
values; for a store, the last block's values are the ones left), but is recorded for
race detection as the access of every block. Atomics are done by every block, in
block order, then element order (row-major) within a block; duplicate addresses see
each other's effects in that order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ir.attributes import SymbolRefAttr
from ..ir.types import IntegerType, PointerType, TileType, Type
from . import dtypes
from .machine import TOKEN
from .memory import Memory, MemoryFault, byte_address, element_address
from .registry import Ctx, semantics

_MAX = np.iinfo(np.int64).max
_MIN = np.iinfo(np.int64).min


def pointee_bits(t: Type) -> int:
    """Bits an element of the pointee of `t` (a pointer tile or pointer type) occupies in
    memory: i1 takes a byte, i4 and f4E2M1FN half of one."""
    e = dtypes.element_of(t)
    return dtypes.memory_bits(e.pointee if isinstance(e, PointerType) else e)


def describe(ctx: Ctx) -> str:
    """How a race report names this op: `store_ptr_tko at file:line:col`."""
    where = ctx.machine.where(ctx.op)
    return f"{ctx.op.mnemonic} at {where}" if where else ctx.op.mnemonic


def fault_error(ctx: Ctx, fault: MemoryFault, per_block: int, active: np.ndarray | None = None) -> Exception:
    """The op's error for a fault of an access of `per_block` elements per block
    (`active`: flat positions of the elements accessed, when a mask compressed them)."""
    if fault.block is not None:
        block = fault.block
    else:
        position = int(active[fault.position]) if active is not None else fault.position
        block = position // max(per_block, 1)
    return ctx.error(fault.message, blocks=np.array([block]), address=fault.address)


def _is_weak(ctx: Ctx) -> bool:
    return ctx.keyword("memory_ordering_semantics", "weak") == "weak"


def _mask_of(ctx: Ctx) -> np.ndarray | None:
    mask = ctx.arg("mask")
    if mask is None:
        return None
    mask = np.asarray(mask, dtype=bool)
    return None if mask.all() else mask


def _lead(*arrays: np.ndarray | None) -> int:
    return max(a.shape[0] for a in arrays if a is not None)


def _record(
    ctx: Ctx,
    memory: Memory,
    instance: int,
    rows: np.ndarray,
    mask: np.ndarray | None,
    itemsize: int,
    *,
    store: bool,
    atomic: bool,
    check_dense: bool,
) -> None:
    """Race bookkeeping for an access of the element addresses `rows` ((L, N), L the
    group size or 1 when the same for every block) with `itemsize` bytes each."""
    if not memory.race_checking:
        return
    if rows.size == 0:
        return
    tagged = itemsize == 0  # 4-bit elements: byte granularity
    if tagged:
        rows = byte_address(rows)
        itemsize = 1
    if mask is not None:
        lo = np.where(mask, rows, _MAX).T.min(axis=0)
        hi = np.where(mask, rows, _MIN).T.max(axis=0)
        hi = np.where(lo <= hi, hi + itemsize, _MIN)
    else:
        lo = rows.T.min(axis=0)
        hi = rows.T.max(axis=0) + itemsize
    dense: bool | Callable[[], bool] = False
    if check_dense and mask is None:
        n = rows.shape[1]
        span, size = hi - lo, itemsize

        def dense() -> bool:  # asked only when it lets older records go
            return bool(np.all(span == n * size)) and (n == 1 or bool(np.all(np.diff(rows, axis=1) == size)))

    if mask is None:
        addresses = lambda: rows  # noqa: E731
    else:
        addresses = lambda: np.where(mask, rows, -1)  # noqa: E731
    blocks = ctx.group.linear(ctx.machine.grid)
    try:
        memory.check_access(
            instance=instance,
            deps=ctx.input_deps(),
            store=store,
            block_ids=blocks,
            lo=lo,
            hi=hi,
            addresses=addresses,
            atomic=atomic,
            dense=dense,
            itemsize=itemsize,
            op=describe(ctx),
        )
    except MemoryFault as fault:
        raise fault_error(ctx, fault, 1) from None


def _result_tile(ctx: Ctx, i: int = 0) -> TileType:
    t = ctx.result_type(i)
    assert isinstance(t, TileType)
    return t


# -- offset --------------------------------------------------------------------------------


@semantics("offset")
def _offset(ctx: Ctx) -> np.ndarray:
    ptr, off = ctx.args
    return element_address(ptr, off, pointee_bits(ctx.result_type()))


# -- loads and stores -------------------------------------------------------------------------


@semantics("load_ptr_tko")
def _load_ptr(ctx: Ctx):
    source = ctx.arg("source")
    padding = ctx.arg("paddingValue")
    mask = _mask_of(ctx)
    rt = _result_tile(ctx)
    shape = rt.shape
    per_block = int(np.prod(shape, dtype=np.int64))
    storage = dtypes.storage_dtype(rt)
    bits = pointee_bits(ctx.operand_type(0))
    memory = ctx.machine.memory
    instance = ctx.memory_instance()
    packed = bits == 4
    read_dtype = storage if packed else dtypes.memory_dtype(rt)
    lead = _lead(source, mask, padding if mask is not None else None)
    rows = np.broadcast_to(source, (lead, *shape)).reshape(lead, per_block)
    try:
        if mask is None:
            raw = memory.read(rows, read_dtype, bits=bits if packed else None, what="load")
            out = dtypes.from_memory(raw, rt).reshape(lead, *shape)
        else:
            m = np.broadcast_to(mask, (lead, *shape)).reshape(lead, per_block)
            active = np.flatnonzero(m)
            try:
                raw = memory.read(rows.reshape(-1)[active], read_dtype, bits=bits if packed else None, what="load")
            except MemoryFault as fault:
                raise fault_error(ctx, fault, per_block, active) from None
            if padding is not None:
                # order="C": a copy of a broadcast keeps its layout by default, and the
                # reshape(-1) below must be a view of `out`, not a copy
                out = np.array(np.broadcast_to(padding, (lead, *shape)), dtype=storage, order="C")
            else:  # the spec leaves masked-off lanes undefined: zero bits here
                out = np.zeros((lead, *shape), dtype=storage)
            out.reshape(-1)[active] = dtypes.from_memory(raw, rt)
            mask = m
    except MemoryFault as fault:
        raise fault_error(ctx, fault, per_block) from None
    _record(
        ctx,
        memory,
        instance,
        rows,
        mask,
        0 if packed else bits // 8,
        store=False,
        atomic=not _is_weak(ctx),
        check_dense=True,
    )
    return out, TOKEN


@semantics("store_ptr_tko")
def _store_ptr(ctx: Ctx):
    dest = ctx.arg("destination")
    value = ctx.arg("value")
    mask = _mask_of(ctx)
    vt = ctx.operand_type(1)
    assert isinstance(vt, TileType)
    shape = vt.shape
    per_block = int(np.prod(shape, dtype=np.int64))
    bits = pointee_bits(ctx.operand_type(0))
    packed = bits == 4
    memory = ctx.machine.memory
    instance = ctx.memory_instance()
    lead = _lead(dest, value, mask)
    rows = np.broadcast_to(dest, (lead, *shape)).reshape(lead, per_block)
    values = np.broadcast_to(value, (lead, *shape)).reshape(lead, per_block)
    if isinstance(vt.element, IntegerType) and vt.element.width == 1:
        values = values.astype(np.uint8)
    write_dtype = dtypes.storage_dtype(vt) if packed else dtypes.memory_dtype(vt)
    m = None
    try:
        if mask is None:
            memory.write(rows, values, write_dtype, bits=bits if packed else None, what="store")
        else:
            m = np.broadcast_to(mask, (lead, *shape)).reshape(lead, per_block)
            active = np.flatnonzero(m)
            try:
                memory.write(
                    rows.reshape(-1)[active],
                    values.reshape(-1)[active],
                    write_dtype,
                    bits=bits if packed else None,
                    what="store",
                )
            except MemoryFault as fault:
                raise fault_error(ctx, fault, per_block, active) from None
    except MemoryFault as fault:
        raise fault_error(ctx, fault, per_block) from None
    _record(
        ctx,
        memory,
        instance,
        rows,
        m,
        0 if packed else bits // 8,
        store=True,
        atomic=not _is_weak(ctx),
        check_dense=True,
    )
    return TOKEN


# -- atomics -----------------------------------------------------------------------------------

# Element types each atomic_rmw_tko mode supports (the op reference).
_RMW_TYPES = {
    **{m: ("i32", "i64") for m in ("add", "and", "or", "xor", "max", "min", "umax", "umin")},
    "addf": ("f16", "bf16", "f32", "f64"),
    "xchg": ("i32", "i64", "f32", "f64"),
}
_CAS_TYPES = ("i32", "i64", "f32", "f64")


def _atomic_operands(ctx: Ctx, name: str, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray | None, int]:
    """The pointers of an atomic broadcast to every block of the frame (G, N), the mask
    likewise (None: all lanes), and the group size."""
    size = ctx.group.size
    per_block = int(np.prod(shape, dtype=np.int64))
    rows = np.broadcast_to(ctx.arg(name), (size, *shape)).reshape(size, per_block)
    mask = _mask_of(ctx)
    m = None if mask is None else np.broadcast_to(mask, (size, *shape)).reshape(size, per_block)
    return rows, m, size


@semantics("atomic_rmw_tko")
def _atomic_rmw(ctx: Ctx):
    rt = _result_tile(ctx)
    shape = rt.shape
    mode = ctx.keyword("mode", "add") or "add"
    element = str(rt.element)
    if element not in _RMW_TYPES.get(mode, ()):
        raise ctx.error(f"atomic_rmw_tko {mode} does not support element type {element}")
    dtype = dtypes.storage_dtype(rt)
    memory = ctx.machine.memory
    instance = ctx.memory_instance()
    rows, m, size = _atomic_operands(ctx, "pointers", shape)
    per_block = rows.shape[1]
    args = np.broadcast_to(ctx.arg("arg"), (size, *shape)).reshape(-1)
    active = None if m is None else np.flatnonzero(m)
    flat = rows.reshape(-1) if active is None else rows.reshape(-1)[active]
    try:
        old = memory.atomic_rmw(flat, args if active is None else args[active], mode, dtype, what="atomic access")
    except MemoryFault as fault:
        raise fault_error(ctx, fault, per_block, active) from None
    if active is None:
        out = old.reshape(size, *shape)
    else:  # masked-off lanes: the value is implementation-defined; zero here
        out = np.zeros((size, *shape), dtype=dtype)
        out.reshape(-1)[active] = old
    _record(ctx, memory, instance, rows, m, dtype.itemsize, store=True, atomic=True, check_dense=False)
    return out, TOKEN


@semantics("atomic_cas_tko")
def _atomic_cas(ctx: Ctx):
    rt = _result_tile(ctx)
    shape = rt.shape
    element = str(rt.element)
    if element not in _CAS_TYPES:
        raise ctx.error(f"atomic_cas_tko does not support element type {element}")
    dtype = dtypes.storage_dtype(rt)
    memory = ctx.machine.memory
    instance = ctx.memory_instance()
    rows, m, size = _atomic_operands(ctx, "pointers", shape)
    per_block = rows.shape[1]
    cmp = np.broadcast_to(ctx.arg("cmp"), (size, *shape)).reshape(-1)
    val = np.broadcast_to(ctx.arg("val"), (size, *shape)).reshape(-1)
    active = None if m is None else np.flatnonzero(m)
    flat = rows.reshape(-1) if active is None else rows.reshape(-1)[active]
    try:
        old = memory.atomic_cas(
            flat,
            cmp if active is None else cmp[active],
            val if active is None else val[active],
            dtype,
            what="atomic access",
        )
    except MemoryFault as fault:
        raise fault_error(ctx, fault, per_block, active) from None
    if active is None:
        out = old.reshape(size, *shape)
    else:  # masked-off lanes return their `cmp`
        out = np.array(cmp, dtype=dtype).reshape(size, *shape)
        out.reshape(-1)[active] = old
    _record(ctx, memory, instance, rows, m, dtype.itemsize, store=True, atomic=True, check_dense=False)
    return out, TOKEN


# -- allocation and globals ------------------------------------------------------------------


@semantics("alloca")
def _alloca(ctx: Ctx) -> np.ndarray:
    count = ctx.int_attr("num_elem", 0) or 0
    alignment = ctx.int_attr("alignment", 1) or 1
    if count < 0:
        raise ctx.error(f"alloca of a negative number of elements ({count})")
    if alignment <= 0 or alignment & (alignment - 1):
        raise ctx.error(f"alloca alignment must be a positive power of two, got {alignment}")
    nbytes = (count * pointee_bits(ctx.result_type()) + 7) // 8
    return ctx.machine.memory.allocate_blocks(
        ctx.group.size, nbytes, alignment=alignment, name=f"alloca ({describe(ctx)})", key=ctx.op
    )


@semantics("get_global")
def _get_global(ctx: Ctx) -> np.ndarray:
    attr = ctx.attr("name")
    name = attr.name if isinstance(attr, SymbolRefAttr) else str(getattr(attr, "value", attr))
    address = ctx.machine.globals.get(name)
    if address is None:
        raise ctx.error(f"no global named @{name}")
    return np.array([address], dtype=dtypes.POINTER_DTYPE)
