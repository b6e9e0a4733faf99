"""The layout explorer and the result view, driven from Python as the frontend drives them
(a click on a tile is the picker's `picked` trait / a button's click)."""

from __future__ import annotations

import html
import warnings

import numpy as np
import pytest

from compiler.layout import tile_extent
from compiler.runtime import load_module
from tile_kernel.widgets import LayoutExplorer, ResultView, compare, shown_tiles, view_choices

from .conftest import EXAMPLES

PICKERS = ["anywidget", "ipywidgets"]


def info(ex: LayoutExplorer) -> str:
    return html.unescape(ex.info.value)


def softmax_explorer(picker: str) -> LayoutExplorer:
    return LayoutExplorer.of_module(load_module(str(EXAMPLES / "softmax.tileir")), picker=picker)


def test_views_of_a_module() -> None:
    choices = view_choices(load_module(str(EXAMPLES / "vector_add.tileir")))
    assert [c.label.split(" ")[0] for c in choices] == ["%pa", "%pb", "%pc"]
    assert choices[0].label.startswith("%pa (line 18): partition_view<tile=(1024), padding_value = zero")


@pytest.mark.parametrize("picker", PICKERS)
def test_click_changes_the_highlight(picker: str) -> None:
    if picker == "anywidget":
        pytest.importorskip("anywidget", reason="anywidget is not installed")
    ex = softmax_explorer(picker)
    assert ex.picker.kind == picker
    # Dynamic extents got defaults with a partial tile: 14 rows of 4-row tiles, 3584 columns.
    assert ex.chosen_extents == {0: 14, 1: 3584}
    assert ex.layout.index_shape == (4, 4)
    before = ex.highlighted()
    # What a click does: the anywidget front-end sets `picked` and bumps `clicks`; the
    # ipywidgets picker has one button per tile.
    if picker == "anywidget":
        ex.picker.view.picked = [2, 1]
        ex.picker.view.clicks += 1
    else:
        button = next(b for b in ex.picker.buttons.children if b.description == "(2, 1)")
        button.click()
    assert ex.index == (2, 1)
    after = ex.highlighted()
    assert after != before
    # The highlighted elements are the tile's, as compiler.layout says.
    extent = tile_extent(ex.layout, (2, 1))
    (r0, r1), (c0, c1) = extent.requested
    assert all(r0 <= r <= r1 and c0 <= c < c1 for r, c in after)
    assert "tile (2,1): elements [8, 12) x [1024, 2048) of the tensor" in info(ex)
    # The sliders follow the click.
    assert [s.value for s in ex.sliders] == [2, 1]


def test_sliders_select_and_the_picture_marks_the_tile() -> None:
    ex = softmax_explorer("ipywidgets")
    ex.sliders[0].value = 3
    assert ex.index == (3, 0)
    svg = ex.picker.picture.value
    assert '<rect class="highlight"' in svg and "tile (3,0)" in svg
    # The last row of tiles is partial: 14 rows, tiles of 4 -> rows 12..15, two of them padding.
    assert "2 of its" not in info(ex)
    assert "lie outside the tensor (padding)" in info(ex)
    cells = ex._element_cells()
    assert any(kind == "pad" for kind, _ in cells.values())


def test_extents_are_chosen_and_dynamic_dims_only() -> None:
    ex = softmax_explorer("ipywidgets")
    ex.set_extent(0, 8)
    assert ex.layout.index_shape[0] == 2
    ex.select((5, 0))  # clamped to the index space
    assert ex.index == (1, 0)
    box = ex.extent_box.children[1]
    assert box.value == 8  # set from Python, shown in the box
    old_slider = ex.sliders[0]
    box.value = 16  # the frontend's text box
    assert ex.layout.tensor_shape[0] == 16
    assert ex.extent_box.children[1] is box  # not rebuilt under the cursor
    assert ex.sliders[0].max == 3 and old_slider.comm is None  # the old slider was closed
    fixed = LayoutExplorer.of_type("partition_view<tile=(4x8), tensor_view<10x20xf32, strides=[20,1]>>")
    with pytest.raises(ValueError, match="not dynamic"):
        fixed.set_extent(0, 3)
    assert all(child.disabled for child in fixed.extent_box.children[1:])


def test_strided_view_overlaps() -> None:
    ex = LayoutExplorer.of_type(
        "strided_view<tile=(4x4), traversal_strides=[2,3], tensor_view<10x11xf32, strides=[11,1]>>", picker="ipywidgets"
    )
    assert ex.layout.index_shape == (5, 4)
    ex.select((1, 1))
    kinds = {kind for kind, _ in ex._element_cells().values()}
    assert "overlap" in kinds
    assert "shared with neighbouring tiles (overlap)" in info(ex)
    assert "overlap of 2 elements" in info(ex)  # compiler.layout's description
    assert len(shown_tiles(ex.picker.picture.value)) == 20


def test_gather_scatter_rows() -> None:
    ex = LayoutExplorer.of_type("gather_scatter_view<tile=(4x4), tensor_view<8x8xf32, strides=[8, 1]>, sparse_dim=0>")
    assert len(ex.rows) == 4
    ex.set_rows([5, 1, 7, 3])
    assert "gathered rows (dim 0): [5, 1, 7, 3] -> result rows 0..3" in info(ex)
    cells = ex._element_cells()
    # Each gathered row is labelled with the result row it becomes (spec 000's picture).
    assert cells[(5, 0)] == ("tile", "0") and cells[(7, 3)] == ("tile", "2")
    assert cells[(0, 0)][0] == "plain"
    ex.set_rows([9, 1, 7, 3])
    assert "rows [9] lie outside the tensor" in info(ex)
    ex.pick((2, 4))  # a click: row 2 gathered first, columns from 4
    assert ex.rows[0] == 2 and ex.index[1] == 4


def test_text_form_for_frontends_without_widgets() -> None:
    ex = softmax_explorer("ipywidgets")
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "index space: 4x4" in bundle["text/plain"]
    assert "cells: tiles, labelled with their index" in bundle["text/plain"]


def test_of_type_rejects_other_types() -> None:
    with pytest.raises(ValueError, match="not a view type"):
        LayoutExplorer.of_type("tile<4xf32>")


def test_result_view_agrees_with_the_cli_check() -> None:
    a = np.linspace(-1, 1, 600, dtype=np.float32).reshape(20, 30)
    view = compare(a, a.astype(np.float64))
    assert view.ok and view.max_abs < 1e-7
    assert view.text().startswith("ok (600 elements, max abs error")
    wrong = a.copy()
    wrong[3, 4] += 1
    view = ResultView(wrong, a, title="y")
    assert not view.ok and view.worst == (3, 4)
    assert "FAILED: 1 of 600 elements differ" in view.text() and "first at result[(3, 4)]" in view.text()
    page = view._repr_mimebundle_()["text/html"]
    assert page.count("<svg") == 3 and "|result - reference|" in page
    # Large arrays are pooled to a bounded picture.
    big = compare(np.zeros((1000, 1000), np.float32), 0.0)
    assert big._repr_mimebundle_()["text/html"].count("<rect") <= 3 * 24 * 96
    with pytest.raises(ValueError, match="cannot evaluate"):
        compare(np.zeros(3), np.zeros(4))


def test_result_view_of_nan_results() -> None:
    # All NaN: no finite error to point at; the verdict and the pictures still come.
    view = compare(np.full(40, np.nan, np.float32), np.zeros(40, np.float32))
    assert not view.ok and "FAILED: 40 of 40 elements differ" in view.text()
    assert "NaN where a number was expected at 40 elements (first at (0,))" in view.text()
    assert view._repr_mimebundle_()["text/html"].count("<svg") == 3
    # A NaN mismatch is named as such, not hidden behind "max abs error 0" elsewhere.
    view = compare(np.array([np.nan, 1.0]), np.array([1.0, 1.0]))
    assert "NaN where a number was expected at 1 element (first at (0,))" in view.text()
    assert "max abs error 0" not in view.text()
    view = compare(np.array([1.0, 1.0]), np.array([np.nan, 1.0]))
    assert "a number where NaN was expected at 1 element (first at (0,))" in view.text()
    view = compare(np.array([np.inf, 1.0]), np.array([1.0, 1.0]))
    assert "an infinity against another value at 1 element (first at (0,))" in view.text()


def test_result_view_of_scalars_and_complex_numbers() -> None:
    view = compare(np.float32(1.0), 1.0)
    assert view.ok and view.text().startswith("ok (1 elements")
    assert "scalar float32" in view.text()
    assert not compare(np.float32(1.0), 2.0).ok
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way
        with pytest.raises(ValueError, match=r"complex arrays are not compared: compare their \.real and \.imag"):
            compare(np.array([1 + 1j, 2]), np.array([1 + 1j, 2]))
        with pytest.raises(ValueError, match="complex arrays are not compared"):
            compare(np.array([1.0, 2.0]), np.array([1 + 1j, 2]))


def test_extents_are_at_least_one() -> None:
    view = "partition_view<tile=(4x8), tensor_view<?x?xf32, strides=[?,1]>>"
    ex = LayoutExplorer.of_type(view, picker="ipywidgets")
    box = ex.extent_box.children[1]
    assert box.min == 1
    box.value = 0  # what typing 0 does: the box stops at 1, the explorer still works
    assert ex.chosen_extents[0] == 1 and ex.layout.index_shape[0] == 1
    assert "index space: 1x" in ex.text()
    box.value = 14
    assert ex.layout.index_shape == (4, 4)
    with pytest.raises(ValueError, match="the extent of tensor dimension 0 must be an int of 1 or more, not 0"):
        ex.set_extent(0, 0)
    assert ex.chosen_extents[0] == 14  # unchanged
    with pytest.raises(ValueError, match="the extent of tensor dimension 0 must be an int of 1 or more, not 0"):
        LayoutExplorer.of_type(view, extents={0: 0})
