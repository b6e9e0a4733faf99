"""Views: `make_tensor_view`, the tiled views over it, and loads/stores through them.

A view is not a Triton value: its parts are kept by the generator (`ViewInfo`) and each
load or store computes the addresses of its tile from them. Shapes and strides are read
as unsigned (as the spec reads the dynamic operands) and held as int64 scalars.

Partition and strided views: element t of the tile at index I lies at tensor coordinate
c[dim_map[i]] = I_i * step_i + t_i; the load is a masked pointer load (`other=` the
view's padding value), the store a masked store.
"""

from __future__ import annotations

from ..ir.types import IntegerType, PartitionViewType, StridedViewType, TensorViewType
from . import tltypes
from .codegen import OpEmit, ViewInfo
from .registry import emitter


def as_index(e: OpEmit, expr: str, t) -> str:
    """An unsigned integer scalar as int64."""
    el = tltypes.element_of(t)
    if isinstance(el, IntegerType) and el.width < 64:
        return f"{expr}.to({tltypes.unsigned_dtype(t)}, bitcast=True).to(tl.int64)"
    return f"{expr}.to(tl.int64)"


@emitter("make_tensor_view")
def _make_tensor_view(e: OpEmit) -> None:
    t = e.result_types[0]
    assert isinstance(t, TensorViewType)
    base = e.operand("base")
    dyn_shape = list(zip(e.operands_of("dynamicShape"), [v.type for v in e.op.operand_group("dynamicShape")]))
    dyn_strides = list(zip(e.operands_of("dynamicStrides"), [v.type for v in e.op.operand_group("dynamicStrides")]))
    hint = e.op.results[0].name or "view"
    shape: list[str] = []
    for d, extent in enumerate(t.shape):
        if extent is None:
            expr, et = dyn_shape.pop(0)
            name = e.tmp(f"{hint}_size{d}")
            e.line(f"{name} = {as_index(e, expr, et)}")
            shape.append(name)
        else:
            shape.append(str(extent))
    strides: list[str] = []
    for d, stride in enumerate(t.strides):
        if stride is None:
            expr, et = dyn_strides.pop(0)
            name = e.tmp(f"{hint}_stride{d}")
            e.line(f"{name} = {as_index(e, expr, et)}")
            strides.append(name)
        else:
            strides.append(str(stride))
    e.set_view(ViewInfo("tensor", t, base, shape, strides, t.element))


@emitter("make_partition_view", "make_strided_view")
def _make_tiled_view(e: OpEmit) -> None:
    t = e.result_types[0]
    tv = e.view(0)
    assert isinstance(t, PartitionViewType | StridedViewType)
    steps = t.traversal_strides if isinstance(t, StridedViewType) else t.tile_shape
    kind = "strided" if isinstance(t, StridedViewType) else "partition"
    e.set_view(
        ViewInfo(
            kind, t, tv.base, tv.shape, tv.strides, tv.element, t.tile_shape, tuple(steps), t.dim_map, t.padding
        )
    )


_PAD_FLOAT = {"zero": "0.0", "neg_zero": "-0.0", "nan": "float('nan')", "pos_inf": "float('inf')",
              "neg_inf": "float('-inf')"}  # fmt: skip


def tile_addresses(e: OpEmit, v: ViewInfo, index: list[str], index_types: list) -> tuple[str, str | None]:
    """Statements computing the pointers and the in-bounds mask of the tile at `index` of a
    partition or strided view; returns (pointer name, mask name or None)."""
    rank = len(v.tile)
    if rank == 0:
        return v.base, None
    offsets = []
    masks = []
    for i, (size, step) in enumerate(zip(v.tile, v.steps, strict=True)):
        d = v.dim_map[i]
        idx = as_index(e, index[i], index_types[i])
        sl = ", ".join(":" if j == i else "None" for j in range(rank))
        o = e.tmp(f"off{i}")
        e.line(f"{o} = ({idx} * {step} + tl.arange(0, {size}).to(tl.int64))[{sl}]")
        offsets.append(f"{o} * {v.strides[d]}")
        masks.append(f"({o} < {v.shape[d]})")
    ptr = e.tmp("ptr")
    e.line(f"{ptr} = {v.base} + ({' + '.join(offsets)})")
    mask = e.tmp("mask")
    e.line(f"{mask} = {' & '.join(masks)}")
    return ptr, mask


def padding_value(v: ViewInfo) -> str | None:
    if v.padding is None:
        return None
    if tltypes.is_float(v.element) and not tltypes.is_bits_float(v.element):
        return _PAD_FLOAT[v.padding]
    return "0"


@emitter("load_view_tko")
def _load_view(e: OpEmit) -> None:
    v = e.view(0)
    if v.kind not in ("partition", "strided"):
        raise e.error(f"loads from {v.kind} views are not lowered yet")
    e.order_after_tokens()
    index_values = e.op.operand_group("index")
    ptr, mask = tile_addresses(e, v, e.operands_of("index"), [x.type for x in index_values])
    if mask is None:
        expr = f"tl.load({ptr})"
    else:
        pad = padding_value(v)
        other = f", other={pad}" if pad is not None else ", other=0"
        expr = f"tl.load({ptr}, mask={mask}{other})"
    if tltypes.element_of(v.element) == IntegerType(1):
        expr += ".to(tl.int1)"
    e.assign(expr)
    e.token(1, memory=True)


@emitter("store_view_tko")
def _store_view(e: OpEmit) -> None:
    v = e.view(1)
    if v.kind not in ("partition", "strided"):
        raise e.error(f"stores to {v.kind} views are not lowered yet")
    e.order_after_tokens()
    value = e.operands[0]
    index_values = e.op.operand_group("index")
    ptr, mask = tile_addresses(e, v, e.operands_of("index"), [x.type for x in index_values])
    if tltypes.element_of(v.element) == IntegerType(1):
        value = f"{value}.to(tl.int8)"
    m = f", mask={mask}" if mask is not None else ""
    e.line(f"tl.store({ptr}, {value}{m})")
    e.token(0, memory=True)
