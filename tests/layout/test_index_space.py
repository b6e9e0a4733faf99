"""Index spaces against the spec's worked examples (shared/spec/000_*), NumPy slicing, and
the extents a module knows."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

from compiler.layout import layout_of_type, tile_elements, tile_extent
from compiler.text import parse
from tests.conformance.harness import shared_dir

# The spec's example types (000_*, sections partition_view, strided_view, gather_scatter_view),
# copied so that the tests run without ../shared, with the index-space shapes its text states.
SPEC_TYPES = {
    "pv_2d": ("!cuda_tile.partition_view<tile=(4x2), tensor_view<64x16xf32, strides=[16, 1]>>", (16, 8)),
    "pv_2d_transposed": (
        "!cuda_tile.partition_view<tile=(4x2), tensor_view<64x16xf32, strides=[16, 1]>, dim_map=[1, 0]>",
        (4, 32),
    ),
    "sv_1d_tra2": ("!cuda_tile.strided_view<tile=(2), traversal_strides=[2], tensor_view<16xf32, strides=[1]>>", (8,)),
    "sv_1d_tra3": ("!cuda_tile.strided_view<tile=(2), traversal_strides=[3], tensor_view<16xf32, strides=[1]>>", (6,)),
    "sv_2d": (
        "!cuda_tile.strided_view<tile=(4x2), traversal_strides=[4,3], tensor_view<64x16xf32, strides=[16, 1]>>",
        (16, 6),
    ),
    "sv_2d_transposed": (
        "!cuda_tile.strided_view<tile=(4x2), traversal_strides=[4,3], tensor_view<64x16xf32, strides=[16, 1]>, "
        "dim_map=[1, 0]>",
        (4, 22),
    ),
    "gsv_1d": ("!cuda_tile.gather_scatter_view<tile=(4), tensor_view<8xf32, strides=[1]>, sparse_dim=0>", (8,)),
    "gsv_2d": (
        "!cuda_tile.gather_scatter_view<tile=(4x4), tensor_view<8x8xf32, strides=[8, 1]>, sparse_dim=0>",
        (8, 8),
    ),
    "gsv_2d_padded": (
        "!cuda_tile.gather_scatter_view<tile=(8x16), padding_value = zero, tensor_view<128x256xf32, "
        "strides=[256, 1]>, sparse_dim=0>",
        (128, 256),
    ),
}


def parse_type(text: str):
    result = parse(f"!t = {text}\n")
    assert result.ok, [d.message for d in result.diagnostics]
    return result.module.type_aliases["t"]


@pytest.mark.parametrize("name", sorted(SPEC_TYPES))
def test_spec_index_space_shapes(name):
    text, expected = SPEC_TYPES[name]
    layout = layout_of_type(parse_type(text))
    assert layout.index_shape == expected


def test_spec_text_types_when_shared_is_present():
    files = sorted((shared_dir() / "spec").glob("000_*.txt"))
    if not files:
        pytest.skip("shared/spec is absent")
    spec = files[0].read_text(encoding="utf-8")
    # Two typos of the spec's examples: sv_2d lacks a comma, the *_padded ones end with one.
    spec = spec.replace("traversal_strides=[4,3]\n", "traversal_strides=[4,3],\n").replace(",\n>", "\n>")
    found = dict(re.findall(r"^!([a-z0-9_]+)= (!cuda_tile\.[a-z_]+<.*?^>)", spec, re.S | re.M))
    for name, (_, expected) in SPEC_TYPES.items():
        assert layout_of_type(parse_type(found[name])).index_shape == expected, name


def test_spec_out_of_range_examples():
    # "loading the tile at index (0, 8) from !pv_2d is invalid" / "(0, 6) from !sv_2d".
    with pytest.raises(ValueError, match="coordinate 1 must be < 8"):
        tile_elements(layout_of_type(parse_type(SPEC_TYPES["pv_2d"][0])), (0, 8))
    with pytest.raises(ValueError, match="coordinate 1 must be < 6"):
        tile_elements(layout_of_type(parse_type(SPEC_TYPES["sv_2d"][0])), (0, 6))
    with pytest.raises(ValueError, match="3 coordinates"):
        tile_elements(layout_of_type(parse_type(SPEC_TYPES["pv_2d"][0])), (0, 0, 0))


def test_partial_tiles_of_spec_examples():
    # sv_1d_tra3: "tile 5 is partially out of bounds"; pv_2d tiles are all whole.
    tra3 = layout_of_type(parse_type(SPEC_TYPES["sv_1d_tra3"][0]))
    assert list(tra3.partial_indices(0)) == [5]
    assert tile_extent(tra3, (5,)).requested == ((15, 17),)
    assert tile_elements(tra3, (5,)) == [(15, 16)]
    assert tile_extent(tra3, (5,)).padded is True
    pv = layout_of_type(parse_type(SPEC_TYPES["pv_2d"][0]))
    assert pv.has_partial_tiles() is False
    # The spec's first example: a (64, 256) tensor in (128, 128) tiles has index space (1, 2).
    big = layout_of_type(
        parse_type("!cuda_tile.partition_view<tile=(128x128), tensor_view<64x256xf32, strides=[256,1]>>")
    )
    assert big.index_shape == (1, 2)
    assert list(big.partial_indices(0)) == [0]


@pytest.mark.parametrize("name", ["pv_2d", "pv_2d_transposed", "sv_1d_tra3", "sv_2d", "sv_2d_transposed"])
def test_tile_elements_match_numpy_slicing(name):
    view_type = parse_type(SPEC_TYPES[name][0])
    layout = layout_of_type(view_type)
    shape = tuple(view_type.tensor_view.shape)
    tensor = np.arange(int(np.prod(shape))).reshape(shape)
    tile_dims = view_type.tile_shape
    dim_map = view_type.dim_map
    steps = getattr(view_type, "traversal_strides", tile_dims)  # a partition view steps by its tile
    for index in itertools.product(*(range(n) for n in layout.index_shape)):
        slices = [slice(0)] * len(shape)
        for i, d in enumerate(dim_map):
            slices[d] = slice(index[i] * steps[i], index[i] * steps[i] + tile_dims[i])
        expected = tensor[tuple(slices)]  # NumPy clips to the tensor on its own
        ranges = tile_elements(layout, index)
        got = tensor[tuple(slice(a, b) for a, b in ranges)]
        assert np.array_equal(got, expected), index
        whole = tuple(tile_dims[list(dim_map).index(d)] for d in range(len(shape)))
        assert tile_extent(layout, index).padded == (expected.shape != whole), index


def test_gather_scatter_rows_and_offsets():
    layout = layout_of_type(parse_type(SPEC_TYPES["gsv_2d_padded"][0]))
    # Index (3, 248): row 3, columns 248..263 of which 248..255 exist (the spec: offsets in
    # [241, 255] read padding).
    extent = tile_extent(layout, (3, 248))
    assert extent.ranges == ((3, 4), (248, 256))
    assert extent.padded is True
    assert tile_extent(layout, (3, 240)).padded is False
    # Rows at the sparse dimension may lie outside the tensor (padded on load).
    assert tile_extent(layout, (500, 0)).ranges == ((128, 128), (0, 16))
    with pytest.raises(ValueError, match="coordinate 1 must be < 256"):
        tile_extent(layout, (0, 256))


def test_dynamic_extents_symbolic_and_resolved():
    t = parse_type("!cuda_tile.partition_view<tile=(64x32), tensor_view<?x100xf32, strides=[?,1]>, dim_map=[1, 0]>")
    symbolic = layout_of_type(t)
    # Index 0 runs along tensor dim 1 (100) in tiles of 64, index 1 along the dynamic dim 0 in 32s.
    assert symbolic.index_shape == (2, None)
    assert symbolic.index_exprs == ("2", "ceildiv(S0, 32)")
    bounded = layout_of_type(t, bounds={0: 1000})
    assert bounded.index_bounds[1] == 32  # ceil(1000 / 32)
    resolved = layout_of_type(t, extents={0: 65})
    assert resolved.index_shape[1] == 3
    assert tile_elements(resolved, (0, 2)) == [(64, 65), (0, 64)]
    with pytest.raises(ValueError):
        tile_elements(bounded, (0, 32))
    # With no extent and no bound, ranges are not clipped and padding is unknown.
    assert tile_extent(symbolic, (0, 5)).padded is None
    assert tile_extent(symbolic, (1, 5)).padded is True  # dim 1: 64..128 passes 100
