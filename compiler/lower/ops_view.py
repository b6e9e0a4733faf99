"""Views: `make_tensor_view`, the partition, strided and gather/scatter views over it,
their shape queries, and `load_view_tko`, `store_view_tko`, `atomic_red_view_tko`.

A view is not a Triton value: its parts are kept by the generator (`ViewInfo`) and each
access computes its tile's addresses from them. Shapes and strides are read as unsigned
(as the spec reads the dynamic operands) and held as int64 scalars, or as Python int
literals when they are static (in the type, or a `constant` operand), which lets Triton
see unit strides and fold the arithmetic. What the IR promises about them through
`assume` (`div_by<k>` on the base pointer, shapes and strides; `bounded`) is collected
here as facts (`ViewInfo.extra`) and passed on to Triton (`tl.multiple_of`).

Element (t_0, ..., t_n) of the tile at index (I_0, ..., I_n) of a partition or strided
view is tensor element c with c[dim_map[i]] = I_i * step_i + t_i (step: the tile size or
the traversal stride). Two lowerings of loads and stores, chosen per access:

Pointers (every target, every view). The tile's origin is a scalar pointer
`base + sum(I_i * step_i * stride)` (int64), the element offsets `sum(t_i * stride)` are
int32 when the strides are static and the tile's span fits, else int64. Elements outside
the tensor are masked (`t_i < min(S - origin_i, T_i)`), only along dimensions where a
tile can be partial (dynamic extents, or static ones the steps do not divide); a load
gives them the view's padding value — the exact bit pattern of `ir.floats.padding_bits`
(f8 formats: their special patterns as uint8 bits) — or zero without one, a store drops
them. Vector accesses (up to 128 bits) need a tile dimension of static unit stride, a
base and row strides the IR proves aligned (`assume div_by`), and a mask that changes no
more often than a vector along that dimension. When the first two hold but the extent
along the vector dimension is not proven a multiple of the vector width, the access is
versioned: `if <tile is full along that dimension>: access masked by the other dimensions
only, else: fully masked access`, so that full tiles get 128-bit accesses (Triton's
loop pipelining does not apply to accesses inside that `if`; the other dimensions'
masks are uniform along the vector and do not hinder it). A masked store that is not
versioned is written, with its address arithmetic, inside `if <the tile reaches into the
tensor>:` (always so for a valid index): a block of its own costs LLVM less (see
`tiled_addresses`). Exact.

Tensor descriptors (TMA: `cp.async.bulk.tensor` on sm_90+). `tl.make_tensor_descriptor` over
the tensor, made once where the view is made; a load is `desc.load(origin)` (then
`tl.permute` for a dim_map), a store `desc.store`; the hardware pads and clips. Legal when
the innermost tensor stride is the literal 1, the base is proven 16-byte aligned (`assume
div_by<16>`), the other strides are proven multiples of 16 bytes, for a store the innermost
extent too (on an H200 a descriptor store past an innermost extent that is not wrote on to
the next 16-byte boundary), every extent is below 2^31 (static, or an i32 with `bounded<0,
?>` ...), the padding is none, zero or NaN (floats; not the f8 formats), the box is at most
256 per dimension with an innermost run of 16 bytes or more, the tile at most 64 KiB, the
access weak and not ordered after another memory access by a token (nor a store whose token
is used): TMA runs in the async proxy, and Triton fences it only against shared memory.
Profitable (our heuristic): elements of 16 bits or fewer on sm_90+, for a matrix product's
data only: a load whose tile becomes an operand of a product of more than 64x64
(codegen.product_operand_of), a store of a tile computed from a product's result
(codegen.from_product: the epilogue). tileiras decides alike (its cubins use TMA for
products and none for elementwise kernels), and for a tile that only passes through, a
descriptor made on the device (a 128-byte write to global scratch and a proxy fence per
program), the staging in shared memory and its barriers cost more than its 128-bit accesses:
the cuTile zoo's conversions kernel, 32-element tiles, on sm_90, 248 SASS instructions with 20
barriers against 108 with none; no GPU has timed an elementwise kernel both ways. f32 and
wider use pointers (their 128-bit vector loads already fill a memory transaction), and so do
the operands of a product of at most 64x64 (a streaming loop, where Triton's cp.async
pipeline measured 5-10 % faster than its TMA one). Override with the environment variable
TILEIR_TMA=auto|on|off (on: any access where legal) or the op's optimization hint
`allow_tma = false` for the target. Device-side descriptors need Triton's
global scratch (128 bytes per descriptor per program): the compiled kernel's
`metadata["global_scratch_size"]`, which the launcher must allocate. NaN padding: TMA writes
its canonical NaN (payload may differ from the interpreter's 0x7FC00000 / 0x7E00; both are
quiet NaNs); everything else exact.

Gather/scatter views: c[d] = I_d + t_d for d != sparse_dim (I_d an element offset), and
c[sparse_dim] = rows[t] from the 1-D index tile (read as unsigned); rows outside the
tensor are padded on load and dropped on store. Pointers with a mask; exact. (TMA
gather4 would need sm_100.)

`atomic_red_view_tko`: `tl.atomic_<mode>` per element over the tile's pointers, masked
to the tensor, sem="relaxed" and the op's scope (see ops_memory for the modes).

Memory ordering of view loads/stores: as for pointer loads/stores (ops_memory).
Shape queries: `get_tensor_shape` gives S[d], `get_index_space_shape` ceil(S[dim_map[i]] /
step_i) (gather/scatter: S[d]), converted to the result's integer type (values that do
not fit are truncated: undefined in the spec).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

from ..ir.attributes import (
    BoundedAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    DictionaryAttr,
    DivByAttr,
    OptimizationHintsAttr,
)
from ..ir.core import Value
from ..ir.floats import padding_bits
from ..ir.types import (
    FloatType,
    GatherScatterViewType,
    IntegerType,
    PartitionViewType,
    StridedViewType,
    TensorViewType,
    TokenType,
    Type,
)
from . import tltypes
from .codegen import OpEmit, ViewInfo, from_product, product_operand_of, small_product
from .ops_memory import (
    atomic_update,
    bits_literal,
    from_memory,
    is_i1,
    is_tf32,
    load_memory,
    memory_bits,
    ordering,
    store_memory,
    store_nibble_pairs,
    to_memory,
)
from .registry import emitter
from .stripmine import WHOLE

TMA_ENV = "TILEIR_TMA"
INT32_MAX = (1 << 31) - 1
_TMA_MAX_TILE_BYTES = 64 * 1024


# -- what the IR says about a value -------------------------------------------------------------


def _through_assumes(v: Value):
    """`v` and the values it was assumed from (assume's result is its operand)."""
    seen = 0
    while True:
        yield v
        op = v.defining_op
        if op is None or op.name != "cuda_tile.assume" or not op.operands or seen > 32:
            return
        v = op.operands[0]
        seen += 1


def _assume_preds(v: Value):
    for w in _through_assumes(v):
        op = w.defining_op
        if op is not None and op.name == "cuda_tile.assume":
            yield op.attr("predicate"), w


def const_int(v: Value) -> int | None:
    """The value of a scalar integer constant, read as unsigned; None if not constant."""
    for w in _through_assumes(v):
        op = w.defining_op
        if op is not None and op.name == "cuda_tile.constant":
            a = op.attr("value")
            e = tltypes.element_of(w.type)
            if isinstance(a, DenseElementsAttr) and len(a.values) == 1 and isinstance(e, IntegerType):
                return a.values[0] & ((1 << e.width) - 1)
    return None


def _pow2_part(n: int) -> int:
    return (n & -n) if n else 1 << 30


def known_divisor(v: Value) -> int:
    """A power of two dividing the value (an address: in bytes) that the IR promises."""
    c = const_int(v)
    if c is not None:
        return _pow2_part(c)
    d = 1
    for pred, _ in _assume_preds(v):
        if isinstance(pred, DivByAttr) and pred.every is None:
            d = max(d, _pow2_part(pred.divisor))
    return d


def known_max(v: Value) -> int | None:
    """An upper bound of the value read as unsigned, if the IR gives one."""
    c = const_int(v)
    if c is not None:
        return c
    e = tltypes.element_of(v.type)
    if not isinstance(e, IntegerType):
        return None
    best = (1 << e.width) - 1
    for pred, _ in _assume_preds(v):
        if isinstance(pred, BoundedAttr):
            lb = pred.lb
            if lb is not None and lb >= 0:
                # Non-negative as signed: the unsigned reading is the same value.
                best = min(best, pred.ub if pred.ub is not None else (1 << (e.width - 1)) - 1)
    return best


def as_index(e: OpEmit, expr: str, t, divisor: int = 1) -> str:
    """An integer scalar read as unsigned, as int64 (with its known divisor for Triton)."""
    el = tltypes.element_of(t)
    if isinstance(el, IntegerType) and el.width == 1:
        return f"{expr}.to(tl.int64)"
    if isinstance(el, IntegerType) and el.width < 64:
        out = f"{expr}.to({tltypes.unsigned_dtype(t)}, bitcast=True).to(tl.int64)"
        return f"tl.multiple_of({out}, {divisor})" if divisor > 1 else out
    if divisor > 1:
        # A kernel parameter carries no attribute Triton reads: give the hint an op to sit on.
        return f"tl.multiple_of({expr}.to(tl.float64, bitcast=True).to(tl.int64, bitcast=True), {divisor})"
    return f"{expr}.to(tl.int64)"


def _is_literal(x: str) -> bool:
    return x.lstrip("-").isdigit()


# -- make_tensor_view ---------------------------------------------------------------------------


@emitter("make_tensor_view")
def _make_tensor_view(e: OpEmit) -> None:
    t = e.result_types[0]
    assert isinstance(t, TensorViewType)
    base_v = e.op.operand("base")
    base = e.operand("base")
    itemsize = max(memory_bits(t.element) // 8, 1)
    align = max(known_divisor(base_v), itemsize)  # pointers are aligned to their element
    dyn_shape = list(e.op.operand_group("dynamicShape"))
    dyn_strides = list(e.op.operand_group("dynamicStrides"))
    hint = e.op.results[0].name or "view"
    shape: list[str] = []
    dim_max: list[int | None] = []
    dim_div: list[int] = []
    for d, extent in enumerate(t.shape):
        if extent is None:
            v = dyn_shape.pop(0)
            c = const_int(v)
            if c is not None:
                shape.append(str(c))
                dim_max.append(c)
                dim_div.append(_pow2_part(c))
                continue
            div = known_divisor(v)
            name = e.tmp(f"{hint}_size{d}")
            e.line(f"{name} = {as_index(e, e.cg.expr(v), v.type, div)}")
            shape.append(name)
            dim_max.append(known_max(v))
            dim_div.append(div)
        else:
            shape.append(str(extent))
            dim_max.append(extent)
            dim_div.append(_pow2_part(extent))
    strides: list[str] = []
    stride_div: list[int] = []
    stride_max: list[int | None] = []
    for d, stride in enumerate(t.strides):
        if stride is None:
            v = dyn_strides.pop(0)
            c = const_int(v)
            if c is not None:
                strides.append(str(c))
                stride_div.append(_pow2_part(c))
                stride_max.append(c)
                continue
            div = known_divisor(v)
            name = e.tmp(f"{hint}_stride{d}")
            e.line(f"{name} = {as_index(e, e.cg.expr(v), v.type, div)}")
            strides.append(name)
            stride_div.append(div)
            stride_max.append(known_max(v))
        else:
            strides.append(str(stride))
            stride_div.append(_pow2_part(stride))
            stride_max.append(stride)
    extra = {"align": align, "itemsize": itemsize, "dim_max": dim_max, "dim_div": dim_div,
             "stride_div": stride_div, "stride_max": stride_max}  # fmt: skip
    e.set_view(ViewInfo("tensor", t, base, shape, strides, t.element, extra=extra))


# -- tiled and gather/scatter views -----------------------------------------------------------


@emitter("make_partition_view", "make_strided_view")
def _make_tiled_view(e: OpEmit) -> None:
    t = e.result_types[0]
    tv = e.view(0)
    assert isinstance(t, PartitionViewType | StridedViewType)
    steps = t.traversal_strides if isinstance(t, StridedViewType) else t.tile_shape
    kind = "strided" if isinstance(t, StridedViewType) else "partition"
    v = ViewInfo(kind, t, tv.base, tv.shape, tv.strides, tv.element, tuple(t.tile_shape), tuple(steps),
                 tuple(t.dim_map), t.padding, extra=dict(tv.extra))  # fmt: skip
    whole = e.op.attributes.get(WHOLE)
    if isinstance(whole, DenseArrayAttr):  # a slice view (stripmine.py): valid indices are the whole tile's
        v.extra["whole"] = tuple(whole.values)
    e.set_view(v)
    # A tensor descriptor, made once here, when some access through the view will use it.
    users = [op for op, _ in e.op.results[0].uses]
    if any(_tma_reason(e, v, op) is None for op in users if op.name in _TMA_OPS):
        desc = e.tmp(f"{e.op.results[0].name or 'view'}_desc")
        rank = len(v.tile)
        box = [0] * rank
        for i, d in enumerate(v.dim_map):
            box[d] = v.tile[i]
        strides = [*v.strides[:-1], "1"]
        pad = "nan" if v.padding == "nan" else "zero"
        e.line(
            f"{desc} = tl.make_tensor_descriptor({v.base}, shape=[{', '.join(v.shape)}], "
            f"strides=[{', '.join(strides)}], block_shape={box}, padding_option={pad!r})"
        )
        v.extra["desc"] = desc


@emitter("make_gather_scatter_view")
def _make_gather_view(e: OpEmit) -> None:
    t = e.result_types[0]
    tv = e.view(0)
    assert isinstance(t, GatherScatterViewType)
    rank = len(t.tile_shape)
    e.set_view(
        ViewInfo(
            "gather_scatter",
            t,
            tv.base,
            tv.shape,
            tv.strides,
            tv.element,
            tuple(t.tile_shape),
            (1,) * rank,
            tuple(range(rank)),
            t.padding,
            t.sparse_dim,
            extra=dict(tv.extra),
        )  # fmt: skip
    )


# -- the TMA decision --------------------------------------------------------------------------

_TMA_OPS = ("cuda_tile.load_view_tko", "cuda_tile.store_view_tko")


def tma_mode() -> str:
    mode = os.environ.get(TMA_ENV, "auto").strip().lower() or "auto"
    return mode if mode in ("auto", "on", "off") else "auto"


def _hint_allows_tma(e: OpEmit, op) -> bool:
    hints = op.attr("optimization_hints")
    if not isinstance(hints, OptimizationHintsAttr):
        return True
    for arch, entries in hints.entries:
        if arch != e.target.arch or not isinstance(entries, DictionaryAttr):
            continue
        for key, value in entries.entries:
            if key == "allow_tma" and getattr(value, "value", True) in (False, 0):
                return False
    return True


def _tma_reason(e: OpEmit, v: ViewInfo, op) -> str | None:
    """Why the access `op` through tiled view `v` does not use a tensor descriptor
    (None: it does)."""
    mode = tma_mode()
    if mode == "off":
        return "TILEIR_TMA=off"
    if e.target.cc < 90:
        return "no TMA before sm_90"
    if v.kind not in ("partition", "strided"):
        return "not a tiled view"
    rank = len(v.tile)
    if not 1 <= rank <= 5:
        return "rank"
    itemsize = v.extra["itemsize"]
    element = tltypes.element_of(v.element)
    if tltypes.is_nibble(element):
        return "4-bit elements are read a byte at a time"
    if mode == "auto" and itemsize > 2:
        return "elements wider than 16 bits use pointers (heuristic)"
    if mode == "auto" and op.name == "cuda_tile.load_view_tko":
        products = product_operand_of(op.results[0])
        if not products:
            return "not an operand of a matrix product: pointers (heuristic)"
        if any(small_product(p) for p in products):
            return "an operand of a product of at most 64x64: cp.async pipelines measured faster (heuristic)"
    if mode == "auto" and op.name == "cuda_tile.store_view_tko" and not from_product(op.operands[0]):
        return "not a matrix product's result: pointers (heuristic)"
    if v.padding not in (None, "zero", "nan"):
        return f"padding {v.padding}"
    if v.padding == "nan" and not (isinstance(element, FloatType) and not tltypes.is_bits_float(element)):
        return "NaN padding of a non-float or f8 format"
    if v.strides[-1] != "1":
        return "innermost stride is not the literal 1"
    if v.extra["align"] < 16:
        return "base not proven 16-byte aligned"
    for d in range(rank - 1):
        if (v.extra["stride_div"][d] * itemsize) % 16:
            return f"stride {d} not proven a multiple of 16 bytes"
    for m in v.extra["dim_max"]:
        if m is None or m > INT32_MAX:
            return "an extent may not fit int32"
    if op.name == "cuda_tile.store_view_tko" and (v.extra["dim_div"][-1] * itemsize) % 16:
        # Measured on an H200 (Triton 3.6): a descriptor store to a tensor whose innermost
        # extent is not a multiple of 16 bytes writes on up to the next 16-byte boundary
        # (loads through such descriptors pad correctly).
        return "a store whose innermost extent is not proven a multiple of 16 bytes"
    box = [0] * rank
    for i, d in enumerate(v.dim_map):
        box[d] = v.tile[i]
    if any(b > 256 for b in box) or box[-1] * itemsize < 16 or (box[-1] * itemsize) % 16:
        return "box shape"
    if (v.steps[v.dim_map.index(rank - 1)] * itemsize) % 16:
        # A tile must start on 16 bytes along the innermost dimension (Triton's interpreter
        # asserts it; a partition's tiles do by the box check above, a strided view's may not).
        return "a step along the innermost dimension that is not a multiple of 16 bytes"
    size = itemsize
    for b in box:
        size *= b
    if size > _TMA_MAX_TILE_BYTES:
        return "tile too large for shared memory staging"
    sem = op.attr("memory_ordering_semantics")
    if getattr(sem, "keyword", "weak") != "weak":
        return "ordered access"
    if not _hint_allows_tma(e, op):
        return "allow_tma = false"
    # Async-proxy accesses are not ordered against the generic proxy by Triton.
    tokens = [x for x in op.operands if isinstance(x.type, TokenType)]
    if tokens and OpEmit(e.cg, op).tokens_from_memory():
        return "ordered after a memory access"
    if op.name == "cuda_tile.store_view_tko" and any(r.uses for r in op.results):
        return "a store whose token orders later accesses"
    return None


# -- tile addresses ------------------------------------------------------------------------------


@dataclass(slots=True)
class Tile:
    """The addresses of one tile access: pointer tensor, in-bounds mask (None: all),
    the scalar condition that the tile is full along its vector dimension (None: no
    versioning) and the mask that then remains (None: none), origins per tile dimension
    (int64 expressions), and the condition of the `if <the tile reaches into the tensor>:`
    that tiled_addresses opened for the access (None: none opened; see _written_tile)."""

    ptr: str
    mask: str | None
    full: str | None
    origins: list[str]
    shape: tuple[int, ...]
    fast_mask: str | None = None
    inside: str | None = None


def _slice(i: int, rank: int) -> str:
    if rank <= 1:
        return ""
    return "[" + ", ".join(":" if j == i else "None" for j in range(rank)) + "]"


def _origins(e: OpEmit, v: ViewInfo, index_values: list[Value]) -> list[str]:
    out = []
    for i, x in enumerate(index_values):
        c = const_int(x)
        step = v.steps[i]
        if c is not None:
            out.append(str(c * step))
            continue
        o = e.tmp(f"org{i}")
        e.line(f"{o} = {as_index(e, e.cg.expr(x), x.type)} * {step}")
        out.append(o)
    return out


def _may_be_partial(v: ViewInfo, i: int, origin: str) -> bool:
    d = v.dim_map[i]
    size = v.shape[d]
    if not _is_literal(size):
        return True
    s = int(size)
    if _is_literal(origin):
        return int(origin) + v.tile[i] > s
    n = -(-s // v.steps[i])  # the index space: valid origins are (n - 1) * step at most
    whole = v.extra.get("whole")
    if whole is not None:  # a slice of a whole tile in the whole tiles' index space
        n = -(-s // whole[i]) * (whole[i] // v.tile[i])
    return (n - 1) * v.steps[i] + v.tile[i] > s


def _vector_dim(v: ViewInfo) -> tuple[int | None, int]:
    """The tile dimension a vector access runs along (static unit stride) and how many
    elements a vector may hold by what the IR proves of the alignment (1: none)."""
    itemsize = v.extra["itemsize"]
    unit = [i for i, d in enumerate(v.dim_map) if v.strides[d] == "1" and v.tile[i] > 1]
    if not unit:
        return None, 1
    u = unit[0]
    align = min(v.extra["align"], 16, _pow2_part(v.steps[u]) * itemsize)  # where tiles start
    for i, d in enumerate(v.dim_map):
        if i != u and v.tile[i] > 1:
            align = min(align, v.extra["stride_div"][d] * itemsize)  # where rows start
    return u, max(align // itemsize, 1)


def _conj(terms: list[str]) -> str:
    return terms[0] if len(terms) == 1 else "(" + " & ".join(terms) + ")"


def tiled_addresses(
    e: OpEmit, v: ViewInfo, index_values: list[Value], version: bool = True, guard: bool = False
) -> Tile:
    """Statements computing the pointers (and mask) of the tile at `index` of a
    partition or strided view. `guard` (stores): where the tile may be partial and is not
    versioned, the pointers are computed inside `if <the tile reaches into the tensor>:`,
    opened here for the caller's access (`Tile.inside`; `_written_tile` closes it)."""
    rank = len(v.tile)
    shape = tuple(v.tile)
    if rank == 0:
        return Tile(v.base, None, None, [], shape)
    origins = _origins(e, v, index_values)
    ptr, pointer_lines = _tile_pointers(e, v, origins)
    if not guard:
        for line in pointer_lines:
            e.line(line)
    # The mask, along dimensions where a tile may run past the tensor: none along those the
    # op says it stays inside (13.4's `inbounds`, cuTile's check_bounds=False; a tile that
    # does not is undefined behaviour, which the CPU interpreter reports).
    inbounds = e.op.properties.get("inbounds")
    promised = inbounds.values if isinstance(inbounds, DenseArrayAttr) else ()
    masks: dict[int, str] = {}
    rems: dict[int, str] = {}
    for i, o in enumerate(origins):
        if not _may_be_partial(v, i, o) or (i < len(promised) and promised[i]):
            continue
        size = v.shape[v.dim_map[i]]
        if _is_literal(size) and _is_literal(o):
            # A static partial tile: its mask is a constant.
            masks[i] = f"(tl.arange(0, {v.tile[i]}) < {max(int(size) - int(o), 0)}){_slice(i, rank)}"
            continue
        rem = e.tmp(f"rem{i}")
        e.line(f"{rem} = tl.minimum({size} - {o}, {v.tile[i]}).to(tl.int32)")
        masks[i] = f"(tl.arange(0, {v.tile[i]}) < {rem}){_slice(i, rank)}"
        rems[i] = rem
    mask = full = fast_mask = None
    if masks:
        # Mask expressions are written out where used: a mask computed before the `if` of
        # a versioned access and used inside it keeps Triton 3.6 from vectorising the
        # full-tile version (seen in the PTX).
        mask = _conj(list(masks.values()))
        u, vec = _vector_dim(v)
        if version and u is not None and u in rems and vec >= 2:
            # The mask along the vector dimension changes every `granule` elements at most
            # (extent and tile starts are multiples of it): finer than a vector, it keeps
            # Triton from vectorising, so full tiles (along that dimension) get a version
            # without it. The other dimensions' masks are uniform along it: they stay.
            d = v.dim_map[u]
            granule = min(v.extra["dim_div"][d], _pow2_part(v.steps[u]), v.tile[u])
            if granule < vec:
                full = e.tmp("full")
                e.line(f"{full} = {rems[u]} == {v.tile[u]}")
                others = [m for i, m in masks.items() if i != u]
                if others:
                    fast_mask = _conj(others)
    inside = None
    if guard:
        if rems and full is None:
            # A masked store in a block of its own, with its addresses: in the block of
            # the index arithmetic at the kernel's top, LLVM's SLP vectorizer schedules the
            # mask's compares together with it over every instruction in between (20-30 ms
            # of examples/softmax's compile, for no vector in the end), and the addresses
            # computed before a branch live across it (90 registers instead of 80).
            inside = " & ".join(f"({r} > 0)" for r in rems.values())
            e.line(f"if {inside}:")
            e.cg.indent += 1
        for line in pointer_lines:
            e.line(line)
    return Tile(ptr, mask, full, origins, shape, fast_mask, inside)


def _tile_pointers(e: OpEmit, v: ViewInfo, origins: list[str]) -> tuple[str, list[str]]:
    """The pointer tensor of a tile at `origins` and the statements computing it (written
    by the caller)."""
    rank = len(v.tile)
    lines = []
    # The tile's origin as one scalar pointer.
    terms = []
    for i, o in enumerate(origins):
        s = v.strides[v.dim_map[i]]
        if o == "0" or s == "0":
            continue
        terms.append(o if s == "1" else (str(int(o) * int(s)) if _is_literal(o) and _is_literal(s) else f"{o} * {s}"))
    origin_ptr = v.base
    if terms:
        origin_ptr = e.tmp("tile_base")
        lines.append(f"{origin_ptr} = {v.base} + ({' + '.join(terms)})")
    # Element offsets within the tile: int32 where the span provably fits.
    span = 0
    small = True
    for i, d in enumerate(v.dim_map):
        smax = v.extra["stride_max"][d]
        if smax is None:
            small = False
        else:
            span += (v.tile[i] - 1) * smax
    small = small and span <= INT32_MAX
    parts = []
    for i, d in enumerate(v.dim_map):
        if v.tile[i] == 1:
            continue
        s = v.strides[d]
        ar = f"tl.arange(0, {v.tile[i]})"
        if s == "1":
            term = ar
        elif small:
            term = f"({ar} * {s})" if _is_literal(s) else f"({ar} * {s}.to(tl.int32))"
        else:
            term = f"({ar}.to(tl.int64) * {s})"
        parts.append(term + _slice(i, rank))
    if parts:
        off = e.tmp("offs")
        lines.append(f"{off} = {' + '.join(parts)}")
        ptr = e.tmp("ptr")
        lines.append(f"{ptr} = {origin_ptr} + {off}")
    else:
        ptr = e.tmp("ptr")
        lines.append(f"{ptr} = tl.broadcast_to({origin_ptr}, {list(v.tile)})" if rank else f"{ptr} = {origin_ptr}")
    return ptr, lines


def gather_addresses(e: OpEmit, v: ViewInfo, index_values: list[Value]) -> Tile:
    """Pointers and mask of a gather/scatter access: rows picked by the index tile along
    the sparse dimension, runs from element offsets along the others."""
    rank = len(v.tile)
    shape = tuple(v.tile)
    parts, masks = [], []
    for d, x in enumerate(index_values):
        sl = _slice(d, rank)
        s = v.strides[d]
        size = v.shape[d]
        if d == v.sparse_dim:
            rows = e.tmp("rows")
            width = tltypes.int_width(x.type)
            expr = e.cg.expr(x)
            if width == 64:
                e.line(f"{rows} = {expr}.to(tl.int64)")
                # Read as unsigned: a row index of 2^63 or more is outside any tensor.
                masks.append(f"({rows}.to(tl.uint64, bitcast=True) < {size}){sl}")
            else:
                e.line(f"{rows} = {as_index(e, expr, x.type)}")
                masks.append(f"({rows} < {size}){sl}")
            parts.append(f"({rows} * {s}){sl}" if s != "1" else f"{rows}{sl}")
            continue
        c = const_int(x)
        o = str(c) if c is not None else e.tmp(f"org{d}")
        if c is None:
            e.line(f"{o} = {as_index(e, e.cg.expr(x), x.type)}")
        coord = f"({o} + tl.arange(0, {v.tile[d]}).to(tl.int64))"
        parts.append(f"({coord} * {s}){sl}" if s != "1" else f"{coord}{sl}")
        masks.append(f"({coord} < {size}){sl}")
    off = e.tmp("offs")
    e.line(f"{off} = {' + '.join(parts)}")
    ptr = e.tmp("ptr")
    e.line(f"{ptr} = {v.base} + {off}")
    mask = e.tmp("mask")
    e.line(f"{mask} = {' & '.join(masks)}")
    return Tile(ptr, mask, None, [], shape)


@contextlib.contextmanager
def _written_tile(e: OpEmit, v: ViewInfo, version: bool, guard: bool = True) -> Iterator[Tile]:
    """The addresses of a tile a store or atomic writes; the statements written inside the
    `with` are the access, inside the `if` a guarded tile opens (closed here)."""
    tile = _addresses(e, v, version, guard)
    yield tile
    if tile.inside is not None:
        e.cg.indent -= 1


def _addresses(e: OpEmit, v: ViewInfo, version: bool = True, guard: bool = False) -> Tile:
    index_values = list(e.op.operand_group("index"))
    if v.kind == "gather_scatter":
        return gather_addresses(e, v, index_values)
    if v.kind in ("partition", "strided"):
        return tiled_addresses(e, v, index_values, version, guard)
    raise e.error(f"a {v.kind} view has no tiles to access")


def padding_expr(v: ViewInfo) -> str:
    """The value (memory dtype) a load yields outside the tensor: the padding keyword's
    bits in the element type, or zero."""
    element = tltypes.element_of(v.element)
    if v.padding is None or not isinstance(element, FloatType):
        return "0"
    bits = padding_bits(v.padding, element.name)
    if bits == 0:
        return "0"
    if tltypes.is_bits_float(element):  # (f8 bits, f4E2M1FN codes)
        return bits_literal(bits, 8, "tl.uint8")
    return bits_literal(bits, memory_bits(element), tltypes.memory_dtype(element))


def _origin32(o: str) -> str:
    return o if _is_literal(o) else f"{o}.to(tl.int32)"


# -- accesses ----------------------------------------------------------------------------------------


@emitter("load_view_tko")
def _load_view(e: OpEmit) -> None:
    v = e.view(0)
    e.order_after_tokens()
    element = tltypes.element_of(v.element)
    sem, scope = ordering(e)
    result = e.result_name(0)
    desc = v.extra.get("desc")
    if desc is not None and _tma_reason(e, v, e.op) is None:
        # Triton 3.6's interpreter fills a bf16 descriptor's NaN padding with zeros (NumPy
        # holds bf16 as integers there): it runs the pointer loads instead.
        both = v.padding == "nan" and getattr(element, "name", "") == "bf16"
        if both:
            e.line("if INTERPRETED:")
            e.cg.indent += 1
            _load_by_pointers(e, v, element, result, sem, scope)
            e.cg.indent -= 1
            e.line("else:")
            e.cg.indent += 1
        origins = _origins(e, v, list(e.op.operand_group("index")))
        by_dim = [""] * len(origins)
        for i, d in enumerate(v.dim_map):
            by_dim[d] = _origin32(origins[i])
        raw = e.tmp("raw")
        e.line(f"{raw} = {desc}.load([{', '.join(by_dim)}])")
        if list(v.dim_map) != sorted(v.dim_map):
            e.line(f"{raw} = tl.permute({raw}, {list(v.dim_map)})")
        e.line(f"{result} = {from_memory(e, raw, element)}")
        if both:
            e.cg.indent -= 1
    else:
        _load_by_pointers(e, v, element, result, sem, scope)
    e.token(1, memory=True)


def _load_by_pointers(e: OpEmit, v: ViewInfo, element: Type, result: str, sem: str, scope: str) -> None:
    tile = _addresses(e, v, version=sem == "weak" and not tltypes.is_nibble(element))
    pad = padding_expr(v)
    if tile.full is not None:
        # The loaded elements are the result itself unless they need a conversion.
        plain = not (is_i1(element) or is_tf32(element))
        raw = result if plain else e.tmp("raw")
        fast = load_memory(
            e, tile.ptr, tile.fast_mask, pad if tile.fast_mask else None, element, tile.shape, sem, scope
        )
        e.line(f"if {tile.full}:")
        e.line(f"    {raw} = {fast}")
        e.line("else:")
        e.line(f"    {raw} = {load_memory(e, tile.ptr, tile.mask, pad, element, tile.shape, sem, scope)}")
        if plain:
            return
        expr = raw
    else:
        expr = load_memory(e, tile.ptr, tile.mask, pad if tile.mask else None, element, tile.shape, sem, scope)
    e.line(f"{result} = {from_memory(e, expr, element)}")


@emitter("store_view_tko")
def _store_view(e: OpEmit) -> None:
    v = e.view(1)
    e.order_after_tokens()
    element = tltypes.element_of(v.element)
    value = to_memory(e.operands[0], element)
    sem, scope = ordering(e)
    desc = v.extra.get("desc")
    if desc is not None and _tma_reason(e, v, e.op) is None:
        origins = _origins(e, v, list(e.op.operand_group("index")))
        by_dim = [""] * len(origins)
        for i, d in enumerate(v.dim_map):
            by_dim[d] = _origin32(origins[i])
        if list(v.dim_map) != sorted(v.dim_map):
            inverse = [0] * len(v.dim_map)
            for i, d in enumerate(v.dim_map):
                inverse[d] = i
            value = f"tl.permute({value}, {inverse})"
        e.line(f"{desc}.store([{', '.join(by_dim)}], {value})")
        e.token(0, memory=True)
        return
    # (4-bit elements: not guarded, their stores' loops spilled registers inside the `if`)
    nibble = tltypes.is_nibble(element)
    with _written_tile(e, v, version=sem == "weak" and not nibble, guard=not nibble) as tile:
        if nibble and _pairs_along_last(v):
            store_nibble_pairs(e, tile.ptr, value, tile.mask, tile.shape, sem, scope)
        elif tile.full is not None:
            e.line(f"if {tile.full}:")
            e.cg.indent += 1
            store_memory(e, tile.ptr, value, tile.fast_mask, element, tile.shape, sem, scope)
            e.cg.indent -= 1
            e.line("else:")
            e.cg.indent += 1
            store_memory(e, tile.ptr, value, tile.mask, element, tile.shape, sem, scope)
            e.cg.indent -= 1
        else:
            store_memory(e, tile.ptr, value, tile.mask, element, tile.shape, sem, scope)
    e.token(0, memory=True)


def _pairs_along_last(v: ViewInfo) -> bool:
    """Whether the tiles of `v` run over consecutive elements along their last dimension, an
    even number of them (4-bit elements may then be stored a byte at a time)."""
    return (
        v.kind in ("partition", "strided") and bool(v.tile) and v.tile[-1] % 2 == 0 and v.strides[v.dim_map[-1]] == "1"
    )


@emitter("atomic_red_view_tko")
def _atomic_red_view(e: OpEmit) -> None:
    v = e.view(0)
    e.order_after_tokens()
    element = tltypes.element_of(v.element)
    sem, scope = ordering(e)
    if sem == "weak":
        sem = "relaxed"
    mode = e.keyword("mode", "add") or "add"
    if mode == "xchg":
        raise e.error("atomic_red_view_tko cannot exchange")
    with _written_tile(e, v, version=False) as tile:
        value = e.operand("value")
        e.line(atomic_update(e, mode, tile.ptr, value, tile.mask, element, tile.shape, sem, scope))
    e.token(0, memory=True)


# -- shape queries ----------------------------------------------------------------------------------


def _sized(e: OpEmit, expr: str, i: int) -> None:
    rt = e.result_types[i]
    dt = tltypes.dtype(rt)
    if _is_literal(expr):
        width = tltypes.int_width(rt)
        n = int(expr) & ((1 << width) - 1)
        if width > 1 and n >> (width - 1):
            n -= 1 << width
        e.assign(f"tl.full((), {n}, {dt})", i)
    else:
        e.assign(f"{expr}.to({dt})", i)


@emitter("get_tensor_shape")
def _get_tensor_shape(e: OpEmit) -> None:
    v = e.view(0)
    for i, size in enumerate(v.shape):
        _sized(e, size, i)


@emitter("get_index_space_shape")
def _get_index_space_shape(e: OpEmit) -> None:
    v = e.view(0)
    for i in range(len(e.op.results)):
        if v.kind == "gather_scatter":
            _sized(e, v.shape[i], i)
            continue
        size = v.shape[v.dim_map[i]]
        step = v.steps[i]
        if _is_literal(size):
            _sized(e, str(-(-int(size) // step)), i)
        else:
            _sized(e, f"(({size} + {step - 1}) // {step})", i)
