"""The rules every cuda_tile type must satisfy, in one place.

MLIR checks a type as soon as it is built (`TileType::getChecked` while parsing), so an
invalid type is reported where it is written, before any op is verified. The text parser
calls `type_problem` on each cuda_tile type it builds, and a bytecode reader can do the
same on each type it decodes.

`type_problem(t)` returns the first broken rule of `t` itself (the types nested in it were
checked when they were built), in the order NVIDIA's verifiers check them, with MLIR's
message text; `None` when `t` is valid. A `TypeProblem` names the part of the type at
fault (`part`, and `dims` for the dimensions concerned) so that a caller that knows where
each part was written can point at it and offer fixes.
"""

from __future__ import annotations

from ..ir import types as T
from ..ir.frozen import Frozen, _set
from .common import quoted

# The largest number of elements a tile may hold (2**24).
MAX_TILE_ELEMENTS = 16777216
# View tile dimensions are stored as i32.
I32_MAX = 2**31 - 1

# ODS summaries of the constrained type parameters (`failed to verify 'elementType': ...`).
_FLOATS = ("f16", "bf16", "f32", "tf32", "f64", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")
_INTS = ("i1", "i8", "i16", "i32", "i64")
NUMBER_SUMMARY = " or ".join(_FLOATS + _INTS)
TILE_ELEMENT_SUMMARY = NUMBER_SUMMARY + " or Pointer type or i4"

# Padding values that only make sense for floating-point elements.
_FLOAT_ONLY_PADDING = ("neg_zero", "nan", "pos_inf", "neg_inf")


class TypeProblem(Frozen):
    """A rule `t` breaks.

    `part` is what is at fault: "type" (the type as a whole), "shape", "element", "strides"
    (a tensor_view's), "tile_shape", "traversal_strides", "dim_map", "sparse_dim",
    "padding" or "tensor_view" (a view's). `dims` are indices into that part.
    """

    __slots__ = ("message", "code", "part", "dims")
    message: str
    code: str
    part: str
    dims: tuple[int, ...]

    def __init__(self, message: str, code: str, part: str = "type", dims: tuple[int, ...] = ()) -> None:
        _set(self, "message", message)
        _set(self, "code", code)
        _set(self, "part", part)
        _set(self, "dims", dims)


def is_number_type(t: T.Type) -> bool:
    """CudaTile_NumberType: i1/i8/i16/i32/i64 or one of the float types."""
    if isinstance(t, T.IntegerType):
        return t.width in (1, 8, 16, 32, 64)
    return isinstance(t, T.FloatType) and t.name in T.FLOAT_FORMATS


def is_tile_element_type(t: T.Type) -> bool:
    """A number type, a pointer, or i4."""
    return is_number_type(t) or isinstance(t, T.PointerType) or t == T.I4


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def next_power_of_two(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1)."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _dims_text(values: tuple[int | None, ...] | list[int | None]) -> str:
    return ", ".join("?" if v is None else str(v) for v in values)


# ---------------------------------------------------------------------------------------------
# tile


def tile_size_problem(shape: tuple[int, ...], element: T.Type, part: str = "shape") -> TypeProblem | None:
    """TileType's own verifier: f4E2M1FN packing, then each dimension positive, a power of
    two, and the element count within `MAX_TILE_ELEMENTS`."""
    if is_f4(element):
        if not shape or all(d % 2 != 0 for d in shape):
            return TypeProblem("F4E2M1FN tiles must have an even number of elements", "f4-element-count", part)
    count = 1
    for i, d in enumerate(shape):
        if d <= 0:
            bad = tuple(k for k, x in enumerate(shape) if x <= 0)
            return TypeProblem(
                f"all dimensions must be positive constants, got {_dims_text(shape)}", "tile-shape", part, bad
            )
        if not is_power_of_two(d):
            bad = tuple(k for k, x in enumerate(shape) if x > 0 and not is_power_of_two(x))
            return TypeProblem(
                f"all dimensions must be powers of two, got {_dims_text(shape)}", "tile-shape", part, bad
            )
        if count > MAX_TILE_ELEMENTS // d:
            return TypeProblem(
                f"tile would exceed the maximum of {MAX_TILE_ELEMENTS} elements", "tile-size", part, (i,)
            )
        count *= d
    return None


def tile_problem(t: T.TileType) -> TypeProblem | None:
    if not is_tile_element_type(t.element):
        return TypeProblem(f"failed to verify 'elementType': {TILE_ELEMENT_SUMMARY}", "element-type", "element")
    if t.shape and is_f4_pointer(t.element):
        # NVIDIA's 13.5 tools (before the shape's own rules): f4 elements are reached
        # through views only, two to a byte.
        return TypeProblem(
            "tiles of ptr<f4E2M1FN> must have rank 0; use an f4 tile view for memory accesses",
            "f4-pointer-tile",
            "shape",
        )
    return tile_size_problem(t.shape, t.element)


def is_f4(t: T.Type) -> bool:
    return isinstance(t, T.FloatType) and t.name == "f4E2M1FN"


def is_f4_pointer(t: T.Type) -> bool:
    return isinstance(t, T.PointerType) and is_f4(t.pointee)


def pointer_problem(t: T.PointerType) -> TypeProblem | None:
    if not is_number_type(t.pointee):
        return TypeProblem(f"failed to verify 'pointeeType': {NUMBER_SUMMARY}", "pointee-type", "element")
    return None


# ---------------------------------------------------------------------------------------------
# tensor_view


def tensor_view_problem(t: T.TensorViewType) -> TypeProblem | None:
    if not is_number_type(t.element):
        return TypeProblem(f"failed to verify 'elementType': {NUMBER_SUMMARY}", "element-type", "element")
    if len(t.shape) != len(t.strides):
        return TypeProblem(
            "expected shape and stride to be of same rank but got shape of rank "
            f"{len(t.shape)} and stride of rank {len(t.strides)}",
            "tensor-view-rank",
            "strides",
        )
    bad = tuple(i for i, d in enumerate(t.shape) if d is not None and d <= 0)
    if bad:
        return TypeProblem(
            f"dimensions must have strictly positive constant sizes but got [{_dims_text(t.shape)}]",
            "tensor-view-shape",
            "shape",
            bad,
        )
    bad = tuple(i for i, s in enumerate(t.strides) if s is not None and s <= 0)
    if bad:
        return TypeProblem(
            f"dimensions must have strictly positive constant strides but got [{_dims_text(t.strides)}]",
            "tensor-view-strides",
            "strides",
            bad,
        )
    return None


# ---------------------------------------------------------------------------------------------
# partition_view, strided_view, gather_scatter_view


def _view_tile_problem(tile_shape: tuple[int, ...], tensor_view: T.Type) -> TypeProblem | None:
    """Rules shared by the views: a non-empty tile of the tensor_view's rank."""
    if not tile_shape:
        return TypeProblem("0-dimension tile shape is not supported", "view-rank", "tile_shape")
    rank = len(tensor_view.shape) if isinstance(tensor_view, T.TensorViewType) else 0
    if len(tile_shape) != rank:
        return TypeProblem(
            "expected tensor_view rank and tile rank to match, got tensor_view of rank "
            f"{rank} and tiles of rank {len(tile_shape)}",
            "view-rank",
            "tile_shape",
        )
    return None


def _view_shape_problem(tile_shape: tuple[int, ...]) -> TypeProblem | None:
    listed = ", ".join(map(str, tile_shape))
    bad = tuple(i for i, d in enumerate(tile_shape) if d <= 0)
    if bad:
        return TypeProblem(
            f"tile shape dimensions must have positive length but got [{listed}]", "tile-shape", "tile_shape", bad
        )
    bad = tuple(i for i, d in enumerate(tile_shape) if not is_power_of_two(d))
    if bad:
        return TypeProblem(
            f"tile shape dimensions must have power of two length but got [{listed}]",
            "tile-shape",
            "tile_shape",
            bad,
        )
    return None


def _view_element_problems(tile_shape: tuple[int, ...], tensor_view: T.Type, padding: str | None) -> TypeProblem | None:
    """The view's tile must be a valid tile; special padding values need float elements."""
    element = tensor_view.element if isinstance(tensor_view, T.TensorViewType) else None
    if element is not None:
        problem = tile_size_problem(tile_shape, element, part="tile_shape")
        if problem is not None:
            return problem
    if padding in _FLOAT_ONLY_PADDING and element is not None and not isinstance(element, T.FloatType):
        return TypeProblem(
            f"padding_value {padding} can only be used with floating point element types, got {quoted(element)}",
            "padding-value",
            "padding",
        )
    return None


def _partition_like_problem(
    tile_shape: tuple[int, ...], tensor_view: T.Type, dim_map: tuple[int, ...], padding: str | None
) -> TypeProblem | None:
    problem = _view_tile_problem(tile_shape, tensor_view)
    if problem is not None:
        return problem
    if len(dim_map) != len(tile_shape):
        return TypeProblem(
            f"expected dim_map to map exactly all {len(tile_shape)} dimensions of the tile, "
            f"got {len(dim_map)} mappings",
            "dim-map",
            "dim_map",
        )
    problem = _view_shape_problem(tile_shape)
    if problem is not None:
        return problem
    rank = len(tile_shape)
    used: dict[int, int] = {}
    for tile_dim, target in enumerate(dim_map):
        if target < 0:
            return TypeProblem(
                f"target dimension must not be negative, got {target}", "dim-map", "dim_map", (tile_dim,)
            )
        if target >= rank:
            return TypeProblem(
                "target dimension is outside of tensor view dimensions, expected strictly less than "
                f"{rank}, got {target}",
                "dim-map",
                "dim_map",
                (tile_dim,),
            )
        if target in used:
            return TypeProblem(
                f"target dimension {target} mapped at least twice (for tile dimensions {used[target]} and {tile_dim})",
                "dim-map",
                "dim_map",
                (used[target], tile_dim),
            )
        used[target] = tile_dim
    return _view_element_problems(tile_shape, tensor_view, padding)


def partition_view_problem(t: T.PartitionViewType) -> TypeProblem | None:
    return _partition_like_problem(t.tile_shape, t.tensor_view, t.dim_map, t.padding)


def strided_view_problem(t: T.StridedViewType) -> TypeProblem | None:
    problem = _partition_like_problem(t.tile_shape, t.tensor_view, t.dim_map, t.padding)
    if problem is not None:
        return problem
    if len(t.traversal_strides) != len(t.tile_shape):
        return TypeProblem(
            f"expected {len(t.tile_shape)} traversal strides, got {len(t.traversal_strides)}",
            "traversal-strides",
            "traversal_strides",
        )
    bad = tuple(i for i, s in enumerate(t.traversal_strides) if s <= 0)
    if bad:
        listed = ", ".join(map(str, t.traversal_strides))
        return TypeProblem(
            f"traversal strides must be strictly positive but got [{listed}]",
            "traversal-strides",
            "traversal_strides",
            bad,
        )
    return None


def gather_scatter_view_problem(t: T.GatherScatterViewType) -> TypeProblem | None:
    problem = _view_tile_problem(t.tile_shape, t.tensor_view) or _view_shape_problem(t.tile_shape)
    if problem is not None:
        return problem
    rank = len(t.tile_shape)
    if not 0 <= t.sparse_dim < rank:
        return TypeProblem(
            "gather dimension is outside of tensor view dimensions, expected strictly less than "
            f"{rank}, got {t.sparse_dim}",
            "sparse-dim",
            "sparse_dim",
        )
    return _view_element_problems(t.tile_shape, t.tensor_view, t.padding)


def view_tile_dim_problem(tile_shape: tuple[int, ...] | list[int]) -> TypeProblem | None:
    """A view's tile dimensions must fit in i32 (checked while parsing the type)."""
    for i, d in enumerate(tile_shape):
        if d <= 0 or d > I32_MAX:
            return TypeProblem(
                f"tile dimension {i} exceeds i32 limitations (got {d}, expected strictly positive and "
                f"less than or equal to {I32_MAX})",
                "tile-shape",
                "tile_shape",
                (i,),
            )
    return None


def type_problem(t: T.Type) -> TypeProblem | None:
    """The first rule `t` itself breaks, or None (types nested in `t` are not looked at)."""
    if isinstance(t, T.TileType):
        return tile_problem(t)
    if isinstance(t, T.PointerType):
        return pointer_problem(t)
    if isinstance(t, T.TensorViewType):
        return tensor_view_problem(t)
    if isinstance(t, T.PartitionViewType):
        return partition_view_problem(t)
    if isinstance(t, T.StridedViewType):
        return strided_view_problem(t)
    if isinstance(t, T.GatherScatterViewType):
        return gather_scatter_view_problem(t)
    return None


def power_of_two_roundings(t: T.Type, problem: TypeProblem) -> list[tuple[int, int]]:
    """For a problem about dimensions that are not powers of two: (dimension index, the
    dimension rounded up to the next power of two) for each of them; otherwise []."""
    if problem.code != "tile-shape":
        return []
    if isinstance(t, T.TileType):
        shape: tuple[int, ...] = t.shape
    elif isinstance(t, T.VIEW_TYPES):
        shape = t.tile_shape
    else:
        return []
    return [
        (i, next_power_of_two(shape[i]))
        for i in problem.dims
        if i < len(shape) and 0 < shape[i] <= I32_MAX and not is_power_of_two(shape[i])
    ]


def type_problems_deep(t: T.Type) -> list[tuple[T.Type, TypeProblem]]:
    """Every type nested in `t` (itself included) that breaks a rule, with its problem;
    for readers (bytecode) that build types without checking them one by one."""
    out: list[tuple[T.Type, TypeProblem]] = []
    for sub in t.walk():
        problem = type_problem(sub)
        if problem is not None:
            out.append((sub, problem))
    return out
