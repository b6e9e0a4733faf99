"""Type rules (compiler.verify.types), reported while parsing at the part of the type at fault."""

from __future__ import annotations

import pytest

from compiler.ir import types as T
from compiler.ir.diagnostics import Diagnostic
from compiler.verify import VerifyOptions, check_text
from compiler.verify.types import (
    MAX_TILE_ELEMENTS,
    NUMBER_SUMMARY,
    next_power_of_two,
    type_problem,
    type_problems_deep,
)

MLIR = VerifyOptions(keep_going=False)


def errors(text: str) -> list[Diagnostic]:
    _, diagnostics = check_text(text, "t.mlir", MLIR, allow_unregistered=True)
    return [d for d in diagnostics if d.is_error]


def use_type(ty: str) -> str:
    return f'%0 = "use_type"() : () -> {ty}\n'


def only_error(text: str) -> Diagnostic:
    found = errors(text)
    assert len(found) == 1, [d.message for d in found]
    return found[0]


def at(text: str, d: Diagnostic) -> str:
    return text[d.span.start : d.span.end]


# ------------------------------------------------------------------ tile


def test_non_power_of_two_dimension_with_fix() -> None:
    text = "cuda_tile.module @m {\n  testing$func @k(%a: !cuda_tile.tile<4x3xf32>) {\n  }\n}\n"
    d = only_error(text)
    assert d.message == "all dimensions must be powers of two, got 4, 3"
    assert d.code == "tile-shape"
    assert d.location()[1:] == (2, 41)
    assert at(text, d) == "3"
    (fix,) = d.fixes
    assert fix.title == "Round 3 up to 4"
    fixed = fix.apply(text)
    assert "tile<4x4xf32>" in fixed
    assert errors(fixed) == []


def test_several_non_power_of_two_dimensions_one_fix() -> None:
    text = use_type("!cuda_tile.tile<3x5x9xf32>")
    d = only_error(text)
    assert d.message == "all dimensions must be powers of two, got 3, 5, 9"
    assert at(text, d) == "3x5x9"
    (fix,) = d.fixes
    assert [e.new_text for e in fix.edits] == ["4", "8", "16"]
    assert "tile<4x8x16xf32>" in fix.apply(text)


def test_unprefixed_tile_in_op_gets_fix() -> None:
    text = "%c = cuda_tile.constant <f32: 1.0> : tile<3xf32>\n"
    d = only_error(text)
    assert d.message == "all dimensions must be powers of two, got 3"
    assert d.location()[1:] == (1, 43)
    assert d.fixes[0].apply(text).endswith("tile<4xf32>\n")


def test_non_positive_dimension() -> None:
    d = only_error(use_type("!cuda_tile.tile<1x0x2xf32>"))
    assert d.message == "all dimensions must be positive constants, got 1, 0, 2"
    assert d.fixes == []


def test_too_many_elements() -> None:
    d = only_error(use_type("!cuda_tile.tile<1024x1024x1024xf32>"))
    assert d.message == f"tile would exceed the maximum of {MAX_TILE_ELEMENTS} elements"
    assert d.code == "tile-size"


def test_dynamic_tile_dimension() -> None:
    text = use_type("!cuda_tile.tile<5x?xf32>")
    d = only_error(text)
    assert d.message == "expected static shape"
    assert at(text, d) == "?"


def test_bad_element_type() -> None:
    text = use_type("!cuda_tile.tile<8x4xi28>")
    d = only_error(text)
    assert d.message.startswith(f"failed to verify 'elementType': {NUMBER_SUMMARY} or Pointer type")
    assert d.code == "element-type"
    assert at(text, d) == "i28"


def test_bad_pointee() -> None:
    text = use_type("!cuda_tile.tile<ptr<tile<2x2xf32>>>")
    d = only_error(text)
    assert d.message == f"failed to verify 'pointeeType': {NUMBER_SUMMARY}"
    assert at(text, d) == "tile<2x2xf32>"


@pytest.mark.parametrize("ty", ["!cuda_tile.tile<f4E2M1FN>", "!cuda_tile.tile<3x3x3xf4E2M1FN>"])
def test_f4_tiles_need_an_even_count(ty: str) -> None:
    assert only_error(use_type(ty)).message == "F4E2M1FN tiles must have an even number of elements"


def test_valid_tiles() -> None:
    for ty in ("tile<f32>", "tile<2x8x4xf32>", "tile<4xptr<f16>>", "tile<2xf4E2M1FN>", "tile<8xi4>"):
        assert errors(use_type("!cuda_tile." + ty)) == [], ty


# ------------------------------------------------------------------ tensor_view


@pytest.mark.parametrize(
    ("ty", "message"),
    [
        ("tensor_view<f32, strides=[]>", "strides must not be provided for 0-d tiles"),
        ("tensor_view<f16,>", "unexpected token after element type in 0-d tensor_view"),
        ("tensor_view<2xf32>", "expected 'strides'"),
        ("tensor_view<?xf32, strides=[-5]>", "expected strictly positive integer, got -5"),
        ("tensor_view<?xf32, strides=[0]>", "expected strictly positive integer, got 0"),
        ("tensor_view<?x32xf32, strides=[, 32]>", "expected either 64-bit integer or question mark"),
        (
            "tensor_view<?xf32, strides=[4, 1]>",
            "expected shape and stride to be of same rank but got shape of rank 1 and stride of rank 2",
        ),
        ("tensor_view<0x?xf32, strides=[1,1]>", "dimensions must have strictly positive constant sizes but got [0, ?]"),
        ("tensor_view<4xptr<f32>, strides=[1]>", f"failed to verify 'elementType': {NUMBER_SUMMARY}"),
    ],
)
def test_tensor_view_rules(ty: str, message: str) -> None:
    assert only_error(use_type("!cuda_tile." + ty)).message == message


def test_tensor_view_zero_dimension_points_at_it() -> None:
    text = use_type("!cuda_tile.tensor_view<8x0xf32, strides=[1,1]>")
    d = only_error(text)
    assert d.code == "tensor-view-shape"
    assert at(text, d) == "0"


# ------------------------------------------------------------------ views

_TV = "!cuda_tile.tensor_view<4096x4096xf32, strides=[4096,1]>"


@pytest.mark.parametrize(
    ("ty", "message"),
    [
        (
            f"partition_view<tile=(1024x1024), {_TV}, dim_map=[0]>",
            "expected dim_map to map exactly all 2 dimensions of the tile, got 1 mappings",
        ),
        (
            f"partition_view<tile=(1024x1024), {_TV}, dim_map=[2, 1]>",
            "target dimension is outside of tensor view dimensions, expected strictly less than 2, got 2",
        ),
        (
            f"partition_view<tile=(1024x1024), {_TV}, dim_map=[0, 0]>",
            "target dimension 0 mapped at least twice (for tile dimensions 0 and 1)",
        ),
        (f"partition_view<tile=(1024x1024), {_TV}, dim_map=[-1, 1]>", "target dimension must not be negative, got -1"),
        (
            f"partition_view<tile=(1099511627776x1024), {_TV}>",
            "tile dimension 0 exceeds i32 limitations (got 1099511627776, expected strictly positive and less than "
            "or equal to 2147483647)",
        ),
        (
            "partition_view<tile=(1x1), !cuda_tile.tensor_view<8x8x64xf32, strides=[512,64,1]>>",
            "expected tensor_view rank and tile rank to match, got tensor_view of rank 3 and tiles of rank 2",
        ),
        ("partition_view<tile=(), !cuda_tile.tensor_view<f32>>", "0-dimension tile shape is not supported"),
        (
            "partition_view<tile=(2), padding_value = nan, !cuda_tile.tensor_view<8xi32, strides=[1]>>",
            "padding_value nan can only be used with floating point element types, got 'i32'",
        ),
        (
            "partition_view<tile=(2), padding_value = bogus, !cuda_tile.tensor_view<8xi32, strides=[1]>>",
            'invalid padding_value attribute specification. Got "bogus" but expect one of: zero, neg_zero, nan, '
            "pos_inf, neg_inf",
        ),
        (f"strided_view<tile=(1024x1024), traversal_strides=[1], {_TV}>", "expected 2 traversal strides, got 1"),
        (
            f"strided_view<tile=(1024x1024), traversal_strides=[1,-1], {_TV}>",
            "traversal strides must be strictly positive but got [1, -1]",
        ),
        (
            f"gather_scatter_view<tile=(16x16), {_TV}, sparse_dim=2>",
            "gather dimension is outside of tensor view dimensions, expected strictly less than 2, got 2",
        ),
        (
            "partition_view<tile=(4x4), !cuda_tile.tile<4x4xf32>>",
            "expected 'tensor_view' type, but got '!cuda_tile.tile<4x4xf32>'",
        ),
    ],
)
def test_view_rules(ty: str, message: str) -> None:
    assert only_error(use_type("!cuda_tile." + ty)).message == message


def test_view_tile_power_of_two_with_fix() -> None:
    text = use_type(f"!cuda_tile.partition_view<tile=(5x1024), {_TV}>")
    d = only_error(text)
    assert d.message == "tile shape dimensions must have power of two length but got [5, 1024]"
    assert at(text, d) == "5"
    fixed = d.fixes[0].apply(text)
    assert "tile=(8x1024)" in fixed
    assert errors(fixed) == []


def test_view_tile_too_large_for_a_tile() -> None:
    d = only_error(use_type(f"!cuda_tile.partition_view<tile=(8192x4096), {_TV}>"))
    assert d.message == f"tile would exceed the maximum of {MAX_TILE_ELEMENTS} elements"


def test_valid_views() -> None:
    for ty in (
        f"partition_view<tile=(64x64), padding_value = nan, {_TV}, dim_map=[1, 0]>",
        f"strided_view<tile=(64x64), traversal_strides=[32,64], {_TV}>",
        f"gather_scatter_view<tile=(16x16), padding_value = zero, {_TV}, sparse_dim=1>",
    ):
        assert errors(use_type("!cuda_tile." + ty)) == [], ty


# ------------------------------------------------------------------ the rules on their own (bytecode readers)


def test_type_problem_without_text() -> None:
    assert type_problem(T.TileType((4, 4), T.FLOAT_TYPES["f32"])) is None
    problem = type_problem(T.TileType((6,), T.FLOAT_TYPES["f32"]))
    assert problem is not None and problem.part == "shape" and problem.dims == (0,)
    bad_pointer = T.PointerType(T.I4)
    nested = T.TileType((2,), bad_pointer)
    assert type_problem(nested) is None  # only the type itself
    assert [p.code for _, p in type_problems_deep(nested)] == ["pointee-type"]


def test_next_power_of_two() -> None:
    assert [next_power_of_two(n) for n in (0, 1, 2, 3, 5, 1024, 1025)] == [1, 1, 2, 4, 8, 1024, 2048]
