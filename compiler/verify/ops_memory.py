"""Verifiers of the memory ops: tokens, pointer and view loads and stores, views, atomics,
shape queries and `alloca`.

The op table drives the operand/result constraints and the type relations (a pointer tile
of the loaded type, the mask's shape, ...); this module adds the rules of the ops' own
`verify()`:

- join_tokens: at least two tokens;
- load_ptr_tko / load_view_tko: weak, relaxed or acquire ordering, a scope unless weak;
  store_ptr_tko / store_view_tko: weak, relaxed or release, the same scope rule;
- load_view_tko / store_view_tko: one index per view dimension, the view's tile type,
  index types as the view wants them (scalar tiles of one type; a 1-D tile of row indices
  at a gather/scatter view's sparse dimension); an f4E2M1FN view packs along its one static
  unit stride, which is not a gather/scatter view's sparse dimension (NVIDIA's 13.5 tools);
- make_tensor_view: the base points to the view's element type, one value per `?`, all
  dynamic values of one type; make_*_view: the operand is the view's tensor_view;
- get_tensor_shape / get_index_space_shape: one result per dimension;
- atomic_rmw_tko / atomic_cas_tko / atomic_red_view_tko: element types per mode, masks
  of the value's shape, the orderings and scopes atomics allow;
- alloca: a non-negative element count, a power-of-two alignment at least the element size.
"""

from __future__ import annotations

import re

from ..ir import attributes as A
from ..ir import types as T
from ..ir.diagnostics import Fix, TextEdit
from ..ir.source import Span
from .common import bit_width, deletion_fix, enum_keyword, quoted, shape_text, tile_shape
from .registry import op_verifier
from .types import is_f4, is_power_of_two

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from ..ir.core import Operation, Value
    from .engine import Verifier


# ---------------------------------------------------------------------------------------------
# helpers


def _int(op: Operation, name: str) -> int | None:
    attr = op.properties.get(name)
    return attr.value if isinstance(attr, A.IntegerAttr) else None


def _word_span(v: Verifier, op: Operation, word: str) -> Span | None:
    """Where `word` is written in the op's own text (after its name), if it is."""
    if v.source is None or op.span is None or op.name_span is None:
        return None
    text = v.source.text
    start = op.name_span.end
    end = op.span.end
    for region in op.regions:
        if region.span is not None and region.span.start >= start:
            end = min(end, region.span.start)
    m = re.compile(rf"(?<![\w$.%#@]){re.escape(word)}(?![\w$.])").search(text, start, end)
    return Span(m.start(), m.end()) if m else None


def _value_span(v: Verifier, op: Operation, name: str) -> Span | None:
    """Where the value of `name = value` is written in the op's own text, if it is."""
    key = _word_span(v, op, name)
    if key is None or v.source is None:
        return None
    m = re.compile(r"\s*=\s*(-?\w+)").match(v.source.text, key.end)
    return Span(m.start(1), m.end(1)) if m else None


def _element(t: T.Type) -> T.Type | None:
    return t.element if isinstance(t, T.TileType) else None


# ---------------------------------------------------------------------------------------------
# tokens


@op_verifier("join_tokens")
def _join_tokens(v: Verifier, op: Operation) -> None:
    if len(op.operands) < 2:
        v.fail(op, "expect two or more tokens", code="token-count")


# ---------------------------------------------------------------------------------------------
# memory model of loads and stores

_LOAD_ORDERINGS = ("weak", "relaxed", "acquire")
_STORE_ORDERINGS = ("weak", "relaxed", "release")


def _check_memory_model(v: Verifier, op: Operation, access: str) -> None:
    """`access` is "load" or "store": the orderings it allows, and a scope exactly when
    the ordering is not weak."""
    ordering = enum_keyword(op, "memory_ordering_semantics")
    if ordering is None:
        return
    scope = enum_keyword(op, "memory_scope")
    allowed = _LOAD_ORDERINGS if access == "load" else _STORE_ORDERINGS
    if ordering not in allowed:
        v.fail(
            op,
            f"expect one of: {allowed[0]}, {allowed[1]}, or {allowed[2]}, but got: {ordering}",
            at=_word_span(v, op, ordering),
            code="memory-ordering",
        )
    if ordering == "weak":
        if scope is not None:
            span = _word_span(v, op, scope)
            v.fail(
                op,
                f"weak {access} must not have memory scope",
                at=span,
                code="memory-scope",
                fixes=deletion_fix(v, span, f"Remove the '{scope}' scope"),
            )
    elif scope is None:
        span = _word_span(v, op, ordering)
        fixes = []
        if span is not None:
            fixes = [Fix("Add the 'device' scope", (TextEdit(Span(span.end, span.end), " device"),))]
        v.fail(op, f"memory scope is required for {ordering} {access}", at=span, code="memory-scope", fixes=fixes)


@op_verifier("load_ptr_tko")
def _load_ptr(v: Verifier, op: Operation) -> None:
    _check_memory_model(v, op, "load")


@op_verifier("store_ptr_tko")
def _store_ptr(v: Verifier, op: Operation) -> None:
    _check_memory_model(v, op, "store")


# ---------------------------------------------------------------------------------------------
# view loads and stores


def view_tile_type(view: T.Type) -> T.TileType | None:
    """The tile a view's load/store moves: the view's tile shape, the tensor's elements."""
    if isinstance(view, T.VIEW_TYPES) and isinstance(view.tensor_view, T.TensorViewType):
        return T.TileType(tuple(view.tile_shape), view.tensor_view.element)
    return None


def _first_index(op: Operation) -> int:
    opdef = op.opdef
    assert opdef is not None
    return opdef.operand_range("index", op.operand_segments)[0]


def _check_indices(v: Verifier, op: Operation, view: T.Type, indices: list[Value]) -> None:
    """The index types the view accepts (its `verifyIndices`)."""
    if not indices:
        return
    base_at = _first_index(op)
    if isinstance(view, T.GatherScatterViewType):
        _check_gather_indices(v, op, view, indices, base_at)
        return
    for i, index in enumerate(indices):
        t = index.type
        if not isinstance(t, T.TileType):
            v.fail(op, f"expected index type to be a tile type, got {quoted(t)}", at=base_at + i, code="index-type")
        if t.rank != 0:
            v.fail(op, f"expected index type to be a scalar tile, got {quoted(t)}", at=base_at + i, code="index-type")
    first = indices[0].type
    for i, index in enumerate(indices):
        if index.type != first:
            v.fail(
                op,
                f"expected index type {i} to be the same as other index types ({quoted(first)}), "
                f"got {quoted(index.type)}",
                at=base_at + i,
                code="index-type",
            )


def _check_gather_indices(
    v: Verifier, op: Operation, view: T.GatherScatterViewType, indices: list[Value], base_at: int
) -> None:
    sparse = view.sparse_dim
    if sparse >= len(indices):
        v.fail(
            op, f"gather/scatter dimension {sparse} is out of range for index count {len(indices)}", code="index-count"
        )
    rows = indices[sparse].type
    if not isinstance(rows, T.TileType):
        v.fail(
            op,
            f"expected index at sparse_dim position {sparse} to be a tile type for GatherScatterView",
            at=base_at + sparse,
            code="index-type",
        )
    if rows.rank != 1:
        v.fail(
            op,
            f"expected index at sparse_dim position {sparse} to be a 1D tensor for GatherScatterView, "
            f"got rank {rows.rank}",
            at=base_at + sparse,
            code="index-type",
        )
    tile_size = view.tile_shape[sparse] if sparse < len(view.tile_shape) else None
    if rows.shape[0] != tile_size:
        v.fail(
            op,
            f"expected gather/scatter index size ({rows.shape[0]}) to match tile shape at gather/scatter "
            f"dimension {sparse} ({tile_size})",
            at=base_at + sparse,
            code="index-type",
        )
    base: T.Type | None = None
    for i, index in enumerate(indices):
        if i == sparse:
            continue
        t = index.type
        if not isinstance(t, T.TileType) or t.rank != 0:
            v.fail(
                op, f"expected index {i} to be a scalar tile for GatherScatterView", at=base_at + i, code="index-type"
            )
        if base is None:
            base = t
        elif t != base:
            v.fail(
                op,
                f"expected scalar index {i} to have the same type as other scalar indices ({quoted(base)}), "
                f"got {quoted(t)}",
                at=base_at + i,
                code="index-type",
            )


def _check_view_access(v: Verifier, op: Operation, tile: Value | None, tile_at: int | None) -> None:
    """What load_view_tko and store_view_tko share: index count, tile type, index types."""
    view_value = op.operand("view")
    if view_value is None:
        return
    view = view_value.type
    if not isinstance(view, T.VIEW_TYPES):
        return
    indices = op.operand_group("index")
    rank = len(view.tile_shape)
    if len(indices) != rank:
        v.fail(
            op,
            f"expected {rank} index operands (based on view type), got {len(indices)}",
            code="index-count",
        )
    expected = view_tile_type(view)
    if tile is not None and expected is not None and tile.type != expected:
        v.fail(
            op,
            f"expected tile type to be {quoted(expected)} (based on view type), got {quoted(tile.type)}",
            at=tile_at,
            code="view-tile-type",
        )
    _check_indices(v, op, view, indices)
    _check_f4_view(v, op, view)


def _check_f4_view(v: Verifier, op: Operation, view: T.Type) -> None:
    """NVIDIA's 13.5 tools: an f4E2M1FN view is packed along its one static unit stride (two
    elements to a byte), so that stride must exist and be the only one, and a gather/scatter
    view cannot pick single elements along it."""
    tensor = view.tensor_view
    if not isinstance(tensor, T.TensorViewType) or not is_f4(tensor.element):
        return
    units = [d for d, stride in enumerate(tensor.strides) if stride == 1]
    if len(units) != 1:
        v.fail(
            op,
            "an f4 view access requires exactly one statically encoded unit stride to identify the packing "
            f"dimension; got {len(units)} in {quoted(tensor)}",
            code="f4-view",
        )
    if isinstance(view, T.GatherScatterViewType) and view.sparse_dim == units[0]:
        v.fail(
            op,
            f"an f4 gather/scatter view cannot use packing dimension {units[0]} as its sparse dimension",
            code="f4-view",
        )


@op_verifier("load_view_tko")
def _load_view(v: Verifier, op: Operation) -> None:
    _check_view_access(v, op, op.result("tile"), None)
    _check_memory_model(v, op, "load")
    _check_inbounds(v, op)


@op_verifier("store_view_tko")
def _store_view(v: Verifier, op: Operation) -> None:
    _check_view_access(v, op, op.operand("tile"), 0)
    _check_memory_model(v, op, "store")
    _check_inbounds(v, op)


def _check_inbounds(v: Verifier, op: Operation) -> None:
    """13.4's `inbounds`: one flag per index (tileirdisasm reports the same mismatch)."""
    inbounds = op.properties.get("inbounds")
    if isinstance(inbounds, A.DenseArrayAttr):
        count = len(op.operand_group("index"))
        if len(inbounds.values) != count:
            v.fail(
                op,
                f"inbounds size ({len(inbounds.values)}) must match the number of index dimensions ({count})",
                code="inbounds",
            )


# ---------------------------------------------------------------------------------------------
# building views


@op_verifier("make_tensor_view")
def _make_tensor_view(v: Verifier, op: Operation) -> None:
    if not op.results or not op.operands:
        return
    view = op.results[0].type
    base = op.operands[0].type
    if not isinstance(view, T.TensorViewType):
        return
    pointer = _element(base)
    if isinstance(pointer, T.PointerType) and pointer.pointee != view.element:
        v.fail(
            op,
            f"expected pointer to {quoted(view.element)} to build tensor_view of this type, "
            f"got {quoted(pointer.pointee)}",
            at=0,
            code="tensor-view-element",
        )
    dyn_shape = op.operand_group("dynamicShape")
    dyn_strides = op.operand_group("dynamicStrides")
    for what, values, declared in (("shape", dyn_shape, view.shape), ("stride", dyn_strides, view.strides)):
        wanted = sum(1 for d in declared if d is None)
        if wanted != len(values):
            v.fail(op, f"expected {wanted} dynamic {what} operands, got {len(values)}", code="dynamic-operands")
    common: T.Type | None = None
    first_index = 1
    for what, values in (("shape", dyn_shape), ("stride", dyn_strides)):
        if values and common is None:
            common = values[0].type
        for i, value in enumerate(values):
            if value.type != common:
                v.fail(
                    op,
                    f"expected dynamic {what} index {i} to be of the same type as the other dynamic values "
                    f"({quoted(common)}), got {quoted(value.type)}",  # type: ignore[arg-type]
                    at=first_index + i,
                    code="dynamic-operands",
                )
        first_index += len(values)


@op_verifier("make_partition_view", "make_strided_view", "make_gather_scatter_view")
def _make_view(v: Verifier, op: Operation) -> None:
    if not op.results or not op.operands:
        return
    view = op.results[0].type
    given = op.operands[0].type
    if not isinstance(view, T.VIEW_TYPES):
        return
    if given != view.tensor_view:
        v.fail(
            op,
            f"expected the type of the provided tensor_view value ({quoted(given)}) to be the same as the "
            f"view's tensor_view type ({quoted(view.tensor_view)})",
            at=0,
            code="view-tensor-view",
        )


# ---------------------------------------------------------------------------------------------
# shape queries


@op_verifier("get_tensor_shape")
def _get_tensor_shape(v: Verifier, op: Operation) -> None:
    src = op.operands[0].type if op.operands else None
    if isinstance(src, T.TensorViewType) and len(op.results) != src.rank:
        v.fail(op, f"expected {src.rank} results due to tensor rank, but got {len(op.results)}", code="result-count")


@op_verifier("get_index_space_shape")
def _get_index_space_shape(v: Verifier, op: Operation) -> None:
    src = op.operands[0].type if op.operands else None
    if isinstance(src, T.VIEW_TYPES) and len(op.results) != len(src.tile_shape):
        v.fail(
            op,
            f"expected {len(src.tile_shape)} results due to view index space rank, but got {len(op.results)}",
            code="result-count",
        )


# ---------------------------------------------------------------------------------------------
# atomics

_INTEGER_MODES = ("and", "or", "xor", "add", "max", "min", "umax", "umin")
_ATOMIC_ORDERINGS = ("relaxed", "acquire", "release", "acq_rel")


def _check_rmw_mode(v: Verifier, op: Operation, mode: str, element: T.Type | None) -> None:
    """Which element types each read-modify-write mode works on."""
    at = _word_span(v, op, mode)
    if mode in _INTEGER_MODES:
        if not (isinstance(element, T.IntegerType) and element.width in (32, 64)):
            v.fail(op, f"'{mode}' works only with integers i32 and i64", at=at, code="atomic-mode")
    elif mode == "addf":
        if not (isinstance(element, T.FloatType) and element.name in ("f16", "bf16", "f32", "f64")):
            v.fail(op, "'addf' works only with floats f16, bf16, f32, and f64", at=at, code="atomic-mode")
    elif mode == "xchg":
        if bit_width(element) not in (32, 64):
            v.fail(op, "'xchg' works only with integers or float of 32 or 64 bitwidth", at=at, code="atomic-mode")


def _check_atomic_ordering(v: Verifier, op: Operation) -> None:
    ordering = enum_keyword(op, "memory_ordering_semantics")
    if ordering is not None and ordering not in _ATOMIC_ORDERINGS:
        v.fail(
            op,
            "memory ordering semantics must be one of: relaxed, acquire, release, acq_rel",
            at=_word_span(v, op, ordering),
            code="memory-ordering",
        )


def _pointee(op: Operation) -> T.Type | None:
    pointers = op.operand("pointers")
    element = _element(pointers.type) if pointers is not None else None
    return element.pointee if isinstance(element, T.PointerType) else None


def _atomic_value(v: Verifier, op: Operation, name: str) -> tuple[Value, T.Type] | None:
    """Operand `name` (the value an atomic stores) and its element type, which must be the
    pointers' pointee; None when either is missing or the operand is not a tile."""
    value = op.operand(name)
    pointee = _pointee(op)
    if value is None or pointee is None or not isinstance(value.type, T.TileType):
        return None
    element = value.type.element
    if pointee != element:
        v.fail(
            op,
            f"expected pointee type ({quoted(pointee)}) to match element type of '{name}' ({quoted(element)})",
            at=op.operands.index(value),
            code="atomic-element-type",
        )
    return value, element


@op_verifier("atomic_rmw_tko")
def _atomic_rmw(v: Verifier, op: Operation) -> None:
    found = _atomic_value(v, op, "arg")
    if found is None:
        return
    arg, element = found
    mask = op.operand("mask")
    if mask is not None and tile_shape(mask.type) != arg.type.shape:
        v.fail(op, "failed to verify that all of {pointers, arg, mask} have same shape", code="type-rule")
    mode = enum_keyword(op, "mode")
    if mode is not None:
        _check_rmw_mode(v, op, mode, element)
    _check_atomic_ordering(v, op)


@op_verifier("atomic_cas_tko")
def _atomic_cas(v: Verifier, op: Operation) -> None:
    found = _atomic_value(v, op, "val")
    if found is None:
        return
    val, element = found
    if bit_width(element) not in (32, 64):
        v.fail(op, "expect only float or integer types with 32 or 64 bit", code="atomic-element-type")
    mask = op.operand("mask")
    if mask is not None and tile_shape(mask.type) != val.type.shape:
        v.fail(op, "failed to verify that all of {pointers, val, cmp and mask} have same shape", code="type-rule")
    _check_atomic_ordering(v, op)


@op_verifier("atomic_red_view_tko")
def _atomic_red_view(v: Verifier, op: Operation) -> None:
    view_value = op.operand("view")
    value = op.operand("value")
    if view_value is None or value is None:
        return
    view = view_value.type
    if not isinstance(view, T.VIEW_TYPES):
        v.fail(op, "view operand must be a TileView type", at=0, code="view-type")
    if isinstance(view, T.GatherScatterViewType):
        v.fail(op, "gather_scatter_view is not supported; use partition_view instead", at=0, code="view-type")
    if view.padding is not None:
        v.fail(op, "views with padding_value are not supported for atomic reductions", at=0, code="view-type")
    tile = view_tile_type(view)
    if tile is None or not isinstance(value.type, T.TileType):
        return
    at_value = op.operands.index(value)
    if tile.element != value.type.element:
        v.fail(
            op,
            f"view element type ({quoted(tile.element)}) must match value element type ({quoted(value.type.element)})",
            at=at_value,
            code="atomic-element-type",
        )
    if tile.shape != value.type.shape:
        v.fail(
            op,
            f"view tile shape {shape_text(tile.shape)} must match value shape {shape_text(value.type.shape)} "
            "for element-wise atomic operations",
            at=at_value,
            code="view-tile-type",
        )
    mode = enum_keyword(op, "mode")
    if mode == "xchg":
        v.fail(op, "atomic_red_view_tko op cannot use xchg operation", at=_word_span(v, op, mode), code="atomic-mode")
    if mode is not None:
        _check_rmw_mode(v, op, mode, value.type.element)
    ordering = enum_keyword(op, "memory_ordering_semantics")
    if ordering is not None and ordering != "relaxed":
        span = _word_span(v, op, ordering)
        fixes = [Fix("Use 'relaxed'", (TextEdit(span, "relaxed"),))] if span is not None else []
        v.fail(
            op,
            "only 'relaxed' memory ordering is supported for view-based atomic reductions",
            at=span,
            code="memory-ordering",
            fixes=fixes,
        )
    if enum_keyword(op, "memory_scope") == "sys":
        span = _word_span(v, op, "sys")
        fixes = [Fix("Use 'device'", (TextEdit(span, "device"),))] if span is not None else []
        v.fail(
            op,
            "memory scope 'sys' is not supported for view-based atomic reductions; use 'tl_blk' or 'device' "
            "for TMA compatibility",
            at=span,
            code="memory-scope",
            fixes=fixes,
        )
    indices = op.operand_group("index")
    rank = len(tile.shape)
    if len(indices) != rank:
        v.fail(
            op,
            f"expected {rank} index operand(s) for view with tile rank {rank}, got {len(indices)}",
            code="index-count",
        )
    base_at = _first_index(op)
    for i, index in enumerate(indices):
        t = index.type
        if not isinstance(t, T.TileType):
            continue
        if t.rank != 0:
            v.fail(
                op,
                f"index operand {i} must be a scalar tile (rank 0), got shape {shape_text(t.shape)}",
                at=base_at + i,
                code="index-type",
            )
        if not isinstance(t.element, T.IntegerType):
            v.fail(
                op,
                f"index operand {i} must be a scalar integer tile, got element type {quoted(t.element)}",
                at=base_at + i,
                code="index-type",
            )


# ---------------------------------------------------------------------------------------------
# alloca


def _natural_size(t: T.Type) -> int:
    """Bytes MLIR counts for one element when checking an alloca's alignment."""
    if isinstance(t, T.IntegerType):
        return 1 if t.width == 1 else t.width // 8
    if isinstance(t, T.FloatType):
        return t.format.width // 8
    return 0


@op_verifier("alloca")
def _alloca(v: Verifier, op: Operation) -> None:
    for name in ("num_elem", "alignment"):
        value = _int(op, name)
        if value is not None and value < 0:
            v.fail(
                op,
                f"attribute '{name}' failed to satisfy constraint: 64-bit signless integer attribute whose "
                "minimum value is 0",
                at=_value_span(v, op, name),
                code="attribute-constraint",
            )
    alignment = _int(op, "alignment")
    if alignment is None:
        return
    span = _value_span(v, op, "alignment")
    if not is_power_of_two(alignment):
        fixes = []
        if span is not None and alignment > 0:
            rounded = 1 << (alignment - 1).bit_length()
            fixes = [Fix(f"Round the alignment up to {rounded}", (TextEdit(span, str(rounded)),))]
        v.fail(op, "'alignment' must be power of two", at=span, code="alignment", fixes=fixes)
    pointer = _element(op.results[0].type) if op.results else None
    if not isinstance(pointer, T.PointerType):
        return
    size = _natural_size(pointer.pointee)
    if alignment < size:
        fixes = [Fix(f"Use alignment {size}", (TextEdit(span, str(size)),))] if span is not None else []
        v.fail(
            op,
            f"'alignment' ({alignment}) must be at least the natural size ({size} bytes) for element type "
            f"{quoted(pointer.pointee)}",
            at=span,
            code="alignment",
            fixes=fixes,
        )
