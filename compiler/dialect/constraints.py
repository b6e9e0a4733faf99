"""The type constraints that op operands and results name.

Each `OperandDef.constraint` / `ResultDef.constraint` in `ops.py` is a key of
`TYPE_CONSTRAINTS`. A `Constraint` pairs a description written for people (used in
diagnostics and hovers, e.g. "tile of f16, bf16, f32 or f64") with a predicate over
the types of `compiler.ir.types`.

The keys mirror the type constraints of the dialect's definition (`CudaTile_IntTileType`
becomes `int_tile`, `CudaTile_ScalarTileOf<CudaTile_Int32>` becomes `scalar_i32_tile`, ...).
A constraint only checks the shape of a type; relations between operands (same type,
same shape, ...) are the op's `type_rules`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir.frozen import Frozen, _set
from ..ir.types import (
    FloatType,
    GatherScatterViewType,
    IntegerType,
    PartitionViewType,
    PointerType,
    StridedViewType,
    TensorViewType,
    TileType,
    TokenType,
    Type,
)


class Constraint(Frozen):
    """A named set of types: a description for people and a membership test.

    `elements` lists the element types a tile constraint admits (`"ptr"` for any pointer),
    or is None when the constraint is not "a tile of one of these".
    `rank` is the only rank admitted (0 for scalar tiles), or None for any rank.
    """

    __slots__ = ("description", "predicate", "elements", "rank", "ods")
    description: str
    predicate: Callable[[Type], bool]
    elements: frozenset[str] | None
    rank: int | None
    # The constraint's summary as MLIR's generated verifier words it ("tile of f16 or bf16
    # or f32 or f64 values"), used in diagnostics so that they read as NVIDIA's tools' do.
    ods: str | None

    def __init__(
        self,
        description: str,
        predicate: Callable[[Type], bool],
        elements: frozenset[str] | None = None,
        rank: int | None = None,
        ods: str | None = None,
    ) -> None:
        _set(self, "description", description)
        _set(self, "predicate", predicate)
        _set(self, "elements", elements)
        _set(self, "rank", rank)
        _set(self, "ods", ods)

    def accepts(self, t: Type) -> bool:
        return self.predicate(t)

    @property
    def summary(self) -> str:
        return self.ods or self.description


# Element type names, as `str()` of the element type spells them.
ANY_INT = ("i1", "i8", "i16", "i32", "i64")  # CudaTile_AnyInt: i4 is a tile element, not an AnyInt
BASE_FLOAT = ("f16", "bf16", "f32", "f64")
ANY_FLOAT = ("f16", "bf16", "f32", "tf32", "f64", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")
NUMBER = ANY_INT + ANY_FLOAT
POINTER = "ptr"
# The orders in which the dialect's definition lists element types (its messages follow them).
ANY_FLOAT_EXTRA = ("tf32", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")
ODS_NUMBER = ANY_INT + BASE_FLOAT + ANY_FLOAT_EXTRA


def _element_name(t: Type) -> str | None:
    if isinstance(t, IntegerType):
        return f"i{t.width}"
    if isinstance(t, FloatType):
        return t.name
    if isinstance(t, PointerType):
        return POINTER
    return None


def _join(names: tuple[str, ...]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _tile_of(
    names: tuple[str, ...],
    rank: int | None = None,
    description: str | None = None,
    ods: str | None = None,
    ods_order: tuple[str, ...] | None = None,
) -> Constraint:
    allowed = frozenset(names)

    def predicate(t: Type) -> bool:
        if not isinstance(t, TileType):
            return False
        if rank is not None and t.rank != rank:
            return False
        return _element_name(t.element) in allowed

    if description is None:
        what = "pointers" if names == (POINTER,) else _join(names)
        description = f"{'scalar (rank-0) ' if rank == 0 else ''}tile of {what}"
    if ods is None:
        # ODS: "<container> of <t1> or <t2> ... values", in the definition's order.
        listed = " or ".join("Pointer type" if n == POINTER else n for n in (ods_order or names))
        ods = f"{'0D tile' if rank == 0 else 'tile'} of {listed} values"
    return Constraint(description, predicate, allowed, rank, ods)


_VIEWS = (PartitionViewType, StridedViewType, GatherScatterViewType)


def _is_any_tile(t: Type) -> bool:
    return isinstance(t, TileType)


def _is_cuda_tile_type(t: Type) -> bool:
    # CudaTile_AnyType: a number type, or any type of the cuda_tile dialect.
    if isinstance(t, IntegerType):
        return t.width in (1, 8, 16, 32, 64)
    return isinstance(t, (FloatType, PointerType, TileType, TokenType, TensorViewType, *_VIEWS))


def _is_tile_view(t: Type) -> bool:
    return isinstance(t, _VIEWS)


def _isa(cls: type) -> Callable[[Type], bool]:
    return lambda t: isinstance(t, cls)


TYPE_CONSTRAINTS: dict[str, Constraint] = {
    # --- any type
    "any": Constraint("any type", lambda t: True),
    "cuda_tile_any": Constraint("any cuda_tile type (a tile, token, view or number type)", _is_cuda_tile_type),
    # --- tiles by element type
    "tile": Constraint("tile of any element type", _is_any_tile, ods="Tile type"),
    "number_tile": _tile_of(NUMBER, description="tile of integers or floats", ods_order=ODS_NUMBER),
    "number_or_i4_tile": _tile_of(
        NUMBER + ("i4",), description="tile of integers (i4 included) or floats", ods_order=ODS_NUMBER + ("i4",)
    ),
    "int_tile": _tile_of(ANY_INT),
    "int_or_i4_tile": _tile_of(("i1", "i4", "i8", "i16", "i32", "i64"), ods_order=ANY_INT + ("i4",)),
    "i1_tile": _tile_of(("i1",)),
    "fpowi_exponent_tile": _tile_of(("i1", "i8", "i16", "i32")),  # tileiras 13.5: no i64
    "i8_tile": _tile_of(("i8",)),
    "i32_tile": _tile_of(("i32",)),
    "i64_tile": _tile_of(("i64",)),
    "f32_tile": _tile_of(("f32",)),
    "base_float_tile": _tile_of(BASE_FLOAT),
    "float_tile": _tile_of(ANY_FLOAT, ods_order=BASE_FLOAT + ANY_FLOAT_EXTRA),
    "pointer_tile": _tile_of((POINTER,)),
    # --- tiles used by the matrix-multiply ops
    "mmaf_operand_tile": _tile_of(
        ("f8E4M3FN", "f8E5M2", "f16", "bf16", "tf32", "f32", "f64"),
        ods="mmaf operand tile type of f16 or bf16 or f32 or f64 or tf32 or f8E4M3FN or f8E5M2 values",
    ),
    "mmaf_acc_tile": _tile_of(("f16", "f32", "f64"), ods="mmaf acc/result tile type of f16 or f32 or f64 values"),
    "mmaf_scaled_operand_tile": _tile_of(
        ("f8E4M3FN", "f8E5M2", "f4E2M1FN"),
        ods="mmaf_scaled operand tile type of f8E4M3FN or f8E5M2 or f4E2M1FN values",
    ),
    "mmaf_scaled_scale_tile": _tile_of(
        ("f8E4M3FN", "f8E8M0FNU"), ods="mmaf_scaled scale tile type of f8E4M3FN or f8E8M0FNU values"
    ),
    "mmaf_scaled_result_tile": _tile_of(("f32",), ods="mmaf_scaled result tile type of f32 values"),
    "mmai_operand_tile": _tile_of(("i8",), ods="mmai operand tile type of i8 values"),
    "mmai_acc_tile": _tile_of(("i32",), ods="mmai acc tile type of i32 values"),
    "mmai_result_tile": _tile_of(("i32",), ods="mmai result tile type of i32 values"),
    # --- scalar (rank-0) tiles
    "scalar_i1_tile": _tile_of(("i1",), rank=0),
    "scalar_i32_tile": _tile_of(("i32",), rank=0),
    "scalar_int_tile": _tile_of(ANY_INT, rank=0),
    "scalar_pointer_tile": _tile_of((POINTER,), rank=0),
    # --- tokens and views
    "token": Constraint("token", _isa(TokenType), ods="cuda tile token type"),
    "tensor_view": Constraint("tensor_view", _isa(TensorViewType), ods="tensor view type"),
    "partition_view": Constraint("partition_view", _isa(PartitionViewType), ods="partition view type"),
    "strided_view": Constraint("strided_view", _isa(StridedViewType), ods="strided view type"),
    "gather_scatter_view": Constraint(
        "gather_scatter_view", _isa(GatherScatterViewType), ods="gather/scatter view type"
    ),
    "tile_view": Constraint(
        "tile view (partition_view, strided_view or gather_scatter_view)", _is_tile_view, ods="TileView instance"
    ),
}
