"""Index spaces of view types: which tiles a view has and which elements each touches.

The arithmetic of spec 000 (partition_view, strided_view, gather_scatter_view):

    partition/strided:  N[i] = ceildiv(S[dim_map[i]], step[i])
                        step = the tile size (partition) or the traversal stride (strided)
    gather/scatter:     N[d] = S[d]   (one index per element; the sparse dimension's index
                        is a row, the others are element offsets)

The tile at index I covers, along tensor dimension dim_map[i], the elements
[I_i * step_i, I_i * step_i + T_i); the part beyond S is padded on loads and dropped on
stores. A `tensor_view` on its own is described as a view of single elements: its index
space is its own shape.

Nothing here knows about NumPy or the editor: the interpreter (`compiler.interp.views`)
shares `ceildiv` and `full_tiles`, the language server and the notebook draw what
`ViewLayout` says (see `compiler.layout.picture`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..ir.attributes import BoundedAttr, DenseElementsAttr
from ..ir.types import GatherScatterViewType, PartitionViewType, StridedViewType, TensorViewType, Type

VIEW_KINDS = ("partition_view", "strided_view", "gather_scatter_view", "tensor_view")


def ceildiv(a: Any, b: Any) -> Any:
    """ceil(a / b) for non-negative integers, or element-wise for NumPy integer arrays."""
    return -(-a // b)


def full_tiles(extent: int, tile: int, step: int) -> int:
    """How many tiles (tile i starting at element i * step) lie entirely inside `extent`
    elements; the tiles from this index on are partial (they stick out of the tensor)."""
    return (extent - tile) // step + 1 if extent >= tile else 0


def dim_name(dim: int) -> str:
    """The symbol of a dynamic tensor extent in index-space expressions."""
    return f"S{dim}"


@dataclass(frozen=True, slots=True)
class ViewLayout:
    """The index space of a view type, with the tensor extents that were known.

    `tensor_shape` holds the extents used for the arithmetic: the type's static ones, and
    for `?` dimensions the value given in `extents` (None when unknown). `dynamic_dims`
    lists the dimensions the type leaves dynamic. `index_shape[i]` is N_i (None when it
    depends on an unknown extent), `index_bounds[i]` an upper bound on N_i where only an
    upper bound of the extent is known (from `assume bounded`), and `index_exprs[i]`
    N_i as text: a number, or `ceildiv(S0, 64)` for an unknown extent.
    """

    kind: str
    element: Type
    tile_shape: tuple[int, ...]
    tensor_shape: tuple[int | None, ...]
    tensor_strides: tuple[int | None, ...]
    dim_map: tuple[int, ...]
    steps: tuple[int, ...]
    padding: str | None
    index_shape: tuple[int | None, ...]
    index_bounds: tuple[int | None, ...]
    index_exprs: tuple[str, ...]
    dynamic_dims: tuple[int, ...] = ()
    extent_bounds: tuple[int | None, ...] = ()
    sparse_dim: int | None = None
    view_type: Type | None = None

    @property
    def rank(self) -> int:
        """Rank of the index space (that of the tensor as well)."""
        return len(self.index_shape)

    @property
    def tensor_rank(self) -> int:
        return len(self.tensor_shape)

    def tile_extent(self, i: int) -> int:
        """Elements one tile covers along index dimension i (one row at the sparse dim)."""
        return 1 if i == self.sparse_dim else self.tile_shape[i]

    def partial_from(self, i: int) -> int | None:
        """The first index along index dimension i whose tile is partial (sticks out of the
        tensor); `index_shape[i]` when none is; None when the extent is unknown."""
        extent = self.tensor_shape[self.dim_map[i]]
        count = self.index_shape[i]
        if extent is None or count is None:
            return None
        return min(full_tiles(extent, self.tile_extent(i), self.steps[i]), count)

    def partial_indices(self, i: int) -> range | None:
        """The indices along index dimension i whose tiles are partial (a suffix)."""
        start = self.partial_from(i)
        count = self.index_shape[i]
        return None if start is None or count is None else range(start, count)

    def has_partial_tiles(self) -> bool | None:
        """Whether some tile is partial; None when an unknown extent decides it."""
        answers = [self.partial_indices(i) for i in range(self.rank)]
        if any(r is not None and len(r) for r in answers):
            return True
        return None if any(r is None for r in answers) else False

    def explain(self, i: int) -> str:
        """N_i spelled out: `ceildiv(S[1]=16, 4) = 4`, `S[0]=8` for gather/scatter."""
        d = self.dim_map[i]
        extent = self.tensor_shape[d]
        s = f"S[{d}]" if extent is None else f"S[{d}]={extent}"
        if d in self.dynamic_dims and extent is None:
            s = dim_name(d)
        if self.steps[i] == 1:
            text = s if extent is None else f"S[{d}]"
        else:
            text = f"ceildiv({s}, {self.steps[i]})"
        n = self.index_shape[i]
        if n is not None:
            return f"{text} = {n}"
        bound = self.index_bounds[i]
        return text if bound is None else f"{text} <= {bound}"

    def index_shape_text(self) -> str:
        """The index-space shape as `16x8`, `ceildiv(S0, 1024)`, `?` parts symbolic."""
        if not self.index_exprs:
            return "()"
        if all(n is not None for n in self.index_shape):
            return "x".join(self.index_exprs)
        return " x ".join(self.index_exprs)


@dataclass(frozen=True, slots=True)
class TileExtent:
    """What the tile at `index` touches, per tensor dimension: `requested` the half-open
    element ranges of the whole tile, `ranges` those clipped to the tensor (an unknown
    extent clips nothing), `padded` whether part of the tile lies outside (None: unknown)."""

    index: tuple[int, ...]
    requested: tuple[tuple[int, int], ...]
    ranges: tuple[tuple[int, int], ...]
    padded: bool | None


def layout_of_type(
    view_type: Type,
    extents: Mapping[int, int] | None = None,
    bounds: Mapping[int, int] | None = None,
) -> ViewLayout:
    """The layout of a view type. `extents` gives values for the type's dynamic (`?`)
    tensor dimensions, `bounds` upper bounds (inclusive) for those without a value.
    Raises TypeError for a type that is not a view, ValueError for a malformed one."""
    extents = dict(extents or {})
    bounds = dict(bounds or {})
    if isinstance(view_type, TensorViewType):
        tensor = view_type
        rank = tensor.rank
        kind = "tensor_view"
        tile: tuple[int, ...] = (1,) * rank
        steps: tuple[int, ...] = (1,) * rank
        dim_map: tuple[int, ...] = tuple(range(rank))
        padding = None
        sparse_dim = None
    elif isinstance(view_type, (PartitionViewType, StridedViewType, GatherScatterViewType)):
        tensor = view_type.tensor_view
        if not isinstance(tensor, TensorViewType):
            raise ValueError(f"the view's tensor_view is not a tensor_view type: {tensor}")
        rank = tensor.rank
        tile = tuple(view_type.tile_shape)
        padding = view_type.padding
        sparse_dim = None
        if isinstance(view_type, GatherScatterViewType):
            kind = "gather_scatter_view"
            steps = (1,) * rank
            dim_map = tuple(range(rank))
            sparse_dim = view_type.sparse_dim
            if not 0 <= sparse_dim < rank:
                raise ValueError(f"sparse_dim={sparse_dim} is not a dimension of a rank-{rank} tensor_view")
        elif isinstance(view_type, StridedViewType):
            kind = "strided_view"
            steps = tuple(view_type.traversal_strides)
            dim_map = tuple(view_type.dim_map)
        else:
            kind = "partition_view"
            steps = tile
            dim_map = tuple(view_type.dim_map)
    else:
        raise TypeError(f"not a view type: {view_type}")

    if len(tile) != rank or len(steps) != rank:
        raise ValueError(f"{kind}: tile shape {tile} and strides {steps} do not match tensor rank {rank}")
    if sorted(dim_map) != list(range(rank)):
        raise ValueError(f"{kind}: dim_map {list(dim_map)} is not a permutation of the tensor's {rank} dimensions")
    if any(t <= 0 for t in tile) or any(s <= 0 for s in steps):
        raise ValueError(f"{kind}: tile sizes and traversal strides must be positive")

    if any(s is not None and s < 0 for s in tensor.shape):
        # Only a damaged bytecode file gets here (the text syntax has no negative extent).
        raise ValueError(f"{kind}: tensor extents {list(tensor.shape)} must be non-negative")
    dynamic_dims = tuple(d for d, s in enumerate(tensor.shape) if s is None)
    shape: list[int | None] = list(tensor.shape)
    extent_bounds: list[int | None] = [None] * rank
    for d in dynamic_dims:
        if d in extents:
            if extents[d] < 0:
                raise ValueError(f"extent of dimension {d} must be non-negative, got {extents[d]}")
            shape[d] = int(extents[d])
        elif d in bounds and bounds[d] >= 0:
            extent_bounds[d] = int(bounds[d])
    index_shape: list[int | None] = []
    index_bounds: list[int | None] = []
    exprs: list[str] = []
    for i in range(rank):
        d = dim_map[i]
        extent, step = shape[d], steps[i]
        if extent is not None:
            n = ceildiv(extent, step)
            index_shape.append(n)
            index_bounds.append(n)
            exprs.append(str(n))
            continue
        index_shape.append(None)
        bound = extent_bounds[d]
        index_bounds.append(None if bound is None else ceildiv(bound, step))
        exprs.append(dim_name(d) if step == 1 else f"ceildiv({dim_name(d)}, {step})")
    return ViewLayout(
        kind=kind,
        element=tensor.element,
        tile_shape=tile,
        tensor_shape=tuple(shape),
        tensor_strides=tuple(tensor.strides),
        dim_map=dim_map,
        steps=steps,
        padding=padding,
        index_shape=tuple(index_shape),
        index_bounds=tuple(index_bounds),
        index_exprs=tuple(exprs),
        dynamic_dims=dynamic_dims,
        extent_bounds=tuple(extent_bounds),
        sparse_dim=sparse_dim,
        view_type=view_type,
    )


def _check_index(layout: ViewLayout, index: Sequence[int]) -> tuple[int, ...]:
    if len(index) != layout.rank:
        raise ValueError(
            f"index {tuple(index)} has {len(index)} coordinates; the {layout.kind}'s index space has {layout.rank}"
        )
    coords = tuple(int(c) for c in index)
    for i, c in enumerate(coords):
        if i == layout.sparse_dim:
            continue  # gathered rows may lie anywhere: outside ones are padded or dropped
        limit = layout.index_shape[i]
        what = "index space"
        if limit is None:
            limit, what = layout.index_bounds[i], "bound on the index space"
        if c < 0 or (limit is not None and c >= limit):
            shown = "x".join(layout.index_exprs) if layout.index_exprs else "()"
            rule = "must be >= 0" if c < 0 else f"must be < {limit} ({what})"
            raise ValueError(
                f"index {coords} is outside the index space {shown} of this {layout.kind}: coordinate {i} {rule}"
            )
    return coords


def tile_extent(layout: ViewLayout, index: Sequence[int]) -> TileExtent:
    """The elements the tile at `index` touches; ValueError for an index outside the index
    space (or its bound). At a gather/scatter view's sparse dimension the coordinate is one
    gathered row."""
    coords = _check_index(layout, index)
    requested: list[tuple[int, int]] = [(0, 0)] * layout.tensor_rank
    ranges: list[tuple[int, int]] = [(0, 0)] * layout.tensor_rank
    padded: bool | None = False
    for i, c in enumerate(coords):
        d = layout.dim_map[i]
        start = c * layout.steps[i]
        stop = start + layout.tile_extent(i)
        requested[d] = (start, stop)
        extent = layout.tensor_shape[d]
        if extent is None:
            ranges[d] = (start, stop)
            if padded is False:
                padded = None
            continue
        ranges[d] = (min(start, extent), min(stop, extent))
        if stop > extent:
            padded = True
    return TileExtent(coords, tuple(requested), tuple(ranges), padded)


def tile_elements(layout: ViewLayout, index: Sequence[int]) -> list[tuple[int, int]]:
    """Per tensor dimension, the half-open range of elements the tile at `index` touches,
    clipped to the tensor (`tile_extent` also says whether part of it would be padded)."""
    return list(tile_extent(layout, index).ranges)


# --------------------------------------------------------------------------------------------
# From SSA values: the extents a module knows


def through_assumes(value: Any) -> tuple[Any, int | None]:
    """The value behind a chain of `assume` ops, and the tightest `bounded` upper bound met."""
    bound: int | None = None
    seen = 0
    while seen < 1000:  # a malformed (cyclic) chain must not hang a hover
        seen += 1
        op = getattr(value, "defining_op", None)
        if op is None or op.mnemonic != "assume" or not op.operands:
            break
        predicate = op.attr("predicate")
        if isinstance(predicate, BoundedAttr) and predicate.ub is not None:
            bound = predicate.ub if bound is None else min(bound, predicate.ub)
        value = op.operands[0]
    return value, bound


def constant_int(value: Any) -> int | None:
    op = getattr(value, "defining_op", None)
    if op is None or op.mnemonic != "constant":
        return None
    attr = op.attr("value")
    if isinstance(attr, DenseElementsAttr) and len(attr.values) == 1:
        return int(attr.values[0])
    return None


def known_extents(value: Any) -> tuple[dict[int, int], dict[int, int]]:
    """(extents, bounds) of the dynamic dimensions of the tensor behind a view value: values
    of `constant` shape operands of its `make_tensor_view`, and `assume bounded` upper bounds
    on the others. Empty where the tensor comes from a block argument."""
    extents: dict[int, int] = {}
    bounds: dict[int, int] = {}
    value, _ = through_assumes(value)
    op = getattr(value, "defining_op", None)
    if op is not None and op.mnemonic in ("make_partition_view", "make_strided_view", "make_gather_scatter_view"):
        if not op.operands:
            return extents, bounds
        value, _ = through_assumes(op.operands[0])
        op = getattr(value, "defining_op", None)
    if op is None or op.mnemonic != "make_tensor_view" or op.opdef is None:
        return extents, bounds
    tensor = value.type
    if not isinstance(tensor, TensorViewType):
        return extents, bounds
    try:
        shape_operands = op.operand_group("dynamicShape")
    except (KeyError, ValueError, IndexError):
        return extents, bounds
    dynamic_dims = [d for d, s in enumerate(tensor.shape) if s is None]
    for d, operand in zip(dynamic_dims, shape_operands, strict=False):
        source, bound = through_assumes(operand)
        constant = constant_int(source)
        if constant is not None and constant >= 0:
            extents[d] = constant if bound is None else min(constant, bound)
        elif bound is not None and bound >= 0:
            bounds[d] = bound
    return extents, bounds


def is_view_type(t: Any) -> bool:
    return isinstance(t, (TensorViewType, PartitionViewType, StridedViewType, GatherScatterViewType))


def view_layout_of(
    value: Any,
    extents: Mapping[int, int] | None = None,
) -> ViewLayout | None:
    """The layout of an SSA value whose type is a view (None for other values), with the
    extents the IR knows (`known_extents`); `extents` (user-chosen values for dynamic
    dimensions) take precedence; the facts are found through the value's definition chain."""
    view_type = getattr(value, "type", None)
    if not is_view_type(view_type):
        return None
    known, bounds = known_extents(value)
    known.update(extents or {})
    try:
        return layout_of_type(view_type, known, bounds)
    except (TypeError, ValueError):
        return None


__all__ = [
    "VIEW_KINDS",
    "TileExtent",
    "ViewLayout",
    "ceildiv",
    "dim_name",
    "full_tiles",
    "is_view_type",
    "known_extents",
    "layout_of_type",
    "tile_elements",
    "tile_extent",
    "view_layout_of",
]
