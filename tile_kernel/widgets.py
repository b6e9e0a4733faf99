"""Notebook widgets: the layout explorer (how a view tiles its tensor) and the result view
(an output array beside its reference).

Everything about layouts comes from `compiler.layout` (index spaces, tile extents, the SVG
picture and its description); this module only lays out controls and draws the element grid
of the selected tile from `tile_extent`'s ranges.

The tile picture is clickable. Two pickers draw it:

- `SvgPicker` (anywidget): the core's SVG with a click handler on each tile, in one widget
  model and ~25 lines of JavaScript that ship inside the Python package (no CDN, no build:
  it renders offline through anywidget's prebuilt JupyterLab extension);
- `ButtonPicker` (ipywidgets alone): the same SVG as HTML, plus a grid of buttons, one per
  tile drawn, since an ipywidgets HTML widget cannot report clicks.

`picker="auto"` takes anywidget when it is installed (the `kernel` extra installs it); the
README's Notebooks section gives the measurements behind that choice.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler.layout import ViewLayout, describe, is_view_type, layout_of_type, svg_picture, tile_extent
from compiler.layout.index_space import dim_name, known_extents

# The element grid shows at most this many elements per axis around the selected tile.
ELEMENT_CELLS = 40
# Elements shown beyond the selected tile on each side, for context.
MARGIN = 2
_TILE_TITLE = re.compile(r'<rect class="tile[^"]*"[^>]*><title>\(([-\d,]*)\)</title>')


def _ipywidgets():
    try:
        import ipywidgets
    except ImportError:
        raise ImportError("the layout explorer needs ipywidgets: pip install 'tileir-tools[kernel]'") from None
    return ipywidgets


# --------------------------------------------------------------------------------------------
# Pickers: the clickable tile picture


def shown_tiles(svg: str) -> list[tuple[int, ...]]:
    """The index of every tile the core's SVG draws (from each tile's `<title>`)."""
    return [tuple(int(c) for c in m.group(1).split(",") if c) for m in _TILE_TITLE.finditer(svg)]


_ESM = """
function render({ model, el }) {
  const draw = () => {
    el.innerHTML = model.get("svg");
    el.classList.add("tileir-picture");
    // Labels lie over their tiles: let a click on one reach the tile under it.
    for (const text of el.querySelectorAll("text")) text.style.pointerEvents = "none";
    for (const rect of el.querySelectorAll("rect.tile")) {
      rect.style.cursor = "pointer";
      rect.addEventListener("click", () => {
        const title = rect.querySelector("title");
        if (!title) return;
        const index = title.textContent.replace(/[()]/g, "").split(",").filter((s) => s !== "").map(Number);
        model.set("picked", index);
        model.set("clicks", model.get("clicks") + 1);
        model.save_changes();
      });
    }
  };
  draw();
  model.on("change:svg", draw);
}
export default { render };
"""


def _svg_picker_class():
    """The anywidget class, made on first use (anywidget is optional)."""
    global _SVG_PICKER
    if _SVG_PICKER is None:
        import anywidget
        import traitlets

        class SvgPicker(anywidget.AnyWidget):
            """The core's SVG; a click on a tile sets `picked` to its index."""

            _esm = _ESM
            svg = traitlets.Unicode("").tag(sync=True)
            picked = traitlets.List(traitlets.Int()).tag(sync=True)
            # Counts clicks, so that picking the same tile again is still an event.
            clicks = traitlets.Int(0).tag(sync=True)

        _SVG_PICKER = SvgPicker
    return _SVG_PICKER


_SVG_PICKER: Any = None


class AnyWidgetPicker:
    kind = "anywidget"

    def __init__(self, on_pick) -> None:
        self.view = _svg_picker_class()()
        self.view.observe(lambda change: on_pick(tuple(self.view.picked)), names="clicks")
        self.widget = self.view

    def draw(self, svg: str) -> None:
        self.view.svg = svg


class ButtonPicker:
    kind = "ipywidgets"

    def __init__(self, on_pick) -> None:
        w = _ipywidgets()
        self.on_pick = on_pick
        self.picture = w.HTML(layout=w.Layout(overflow="auto"))
        self.picture.add_class("tileir-picture")
        self.buttons = w.GridBox(layout=w.Layout(grid_gap="2px"))
        self.widget = w.VBox([self.picture, self.buttons])
        self._tiles: list[tuple[int, ...]] = []

    def draw(self, svg: str) -> None:
        w = _ipywidgets()
        self.picture.value = svg
        tiles = shown_tiles(svg)
        if tiles == self._tiles:
            return  # same tiles: keep the buttons (rebuilding them costs one model each)
        self._tiles = tiles
        columns = len({t[-1] for t in tiles}) if tiles else 1
        buttons = []
        for index in tiles:
            b = w.Button(description=str(index), layout=w.Layout(width="auto", padding="0 2px"))
            b.on_click(lambda _b, index=index: self.on_pick(index))
            buttons.append(b)
        self.buttons.layout.grid_template_columns = f"repeat({columns}, auto)"
        self.buttons.children = buttons


def _make_picker(kind: str, on_pick):
    if kind == "auto":
        try:
            import anywidget  # noqa: F401
        except ImportError:
            kind = "ipywidgets"
        else:
            kind = "anywidget"
    if kind == "anywidget":
        return AnyWidgetPicker(on_pick)
    if kind == "ipywidgets":
        return ButtonPicker(on_pick)
    raise ValueError(f"picker must be 'auto', 'anywidget' or 'ipywidgets', not {kind!r}")


# --------------------------------------------------------------------------------------------
# The layout explorer


@dataclass(frozen=True, slots=True)
class ViewChoice:
    """A view to explore: its label in the list, its type, and the SSA value it comes from
    (whose definition may fix dynamic extents), if any."""

    label: str
    type: Any
    value: Any = None


def view_choices(module: Any) -> list[ViewChoice]:
    """Every partition, strided and gather/scatter view value of a module, in source order.
    (Bare tensor_views have no tiles to pick.)"""
    found = []
    source = getattr(module, "source", None)
    for op in module.walk():
        values = list(op.results)
        for region in op.regions:
            for block in region.blocks:
                values.extend(block.arguments)
        for v in values:
            if is_view_type(v.type) and type(v.type).__name__ != "TensorViewType":
                found.append(v)
    found.sort(key=lambda v: v.span.start if v.span is not None else -1)
    choices = []
    for v in found:
        where = ""
        if v.span is not None and source is not None:
            where = f" (line {source.line_col(v.span.start)[0] + 1})"
        choices.append(ViewChoice(f"%{v.name}{where}: {v.type}", v.type, v))
    return choices


def default_extent(layout: ViewLayout, dim: int) -> int:
    """An extent for a dynamic dimension nobody chose: three and a half tiles (so that the
    picture has a partial tile), under the `assume bounded` bound when there is one."""
    index_dim = layout.dim_map.index(dim)
    tile = max(layout.tile_extent(index_dim) if index_dim != layout.sparse_dim else 1, 1)
    step = max(layout.steps[index_dim], 1)
    extent = max(step * 3 + max(tile // 2, 1), 8)
    bound = layout.extent_bounds[dim] if layout.extent_bounds else None
    return min(extent, bound) if bound is not None and bound > 0 else extent


class LayoutExplorer:
    """Choose a view, the tensor's extents (dynamic dimensions included), and a tile (by the
    sliders or by clicking it); see its elements highlighted in the tensor, the index-space
    shape, padded elements, overlaps of strided views and the rows a gather/scatter view
    gathers.

        LayoutExplorer.of_module(module)          # every view of a module (what --layout shows)
        LayoutExplorer.of_type("partition_view<tile=(4x8), tensor_view<10x20xf32, strides=[20,1]>>")
    """

    def __init__(self, views: Sequence[ViewChoice], *, picker: str = "auto", extents: dict[int, int] | None = None):
        if not views:
            raise ValueError("no partition, strided or gather/scatter view to explore")
        w = _ipywidgets()
        self.views = list(views)
        self.current = 0
        self.chosen_extents: dict[int, int] = {d: _extent(d, n) for d, n in (extents or {}).items()}
        self.index: tuple[int, ...] = ()
        self.rows: tuple[int, ...] = ()  # gather/scatter: the rows the sparse index picks
        self._busy = False

        self.view_menu = w.Dropdown(
            options=[(c.label if len(c.label) < 110 else c.label[:107] + "...", i) for i, c in enumerate(self.views)],
            value=0,
            description="view",
            layout=w.Layout(width="98%", display="" if len(self.views) > 1 else "none"),
        )
        self.view_menu.observe(lambda _: self._choose_view(self.view_menu.value), names="value")
        self.extent_box = w.HBox()
        self.index_box = w.HBox()
        self.picker = _make_picker(picker, self.pick)
        self.elements = w.HTML()
        self.elements.add_class("tileir-elements")
        self.info = w.HTML()
        self.info.add_class("tileir-info")
        self.widget = w.VBox(
            [
                self.view_menu,
                self.extent_box,
                self.index_box,
                w.HBox([self.picker.widget, self.elements], layout=w.Layout(flex_flow="row wrap")),
                self.info,
            ]
        )
        self.widget.add_class("tileir-layout")
        self._choose_view(0)

    # -- constructors ----------------------------------------------------------------------

    @classmethod
    def of_module(cls, module: Any, **kwargs: Any) -> LayoutExplorer:
        from .module import TileModule

        if isinstance(module, TileModule):
            module = module.module
        return cls(view_choices(module), **kwargs)

    @classmethod
    def of_type(cls, view_type: Any, **kwargs: Any) -> LayoutExplorer:
        """From a view type or its text (`partition_view<...>`, with or without `!cuda_tile.`)."""
        if isinstance(view_type, str):
            view_type = _parse_type(view_type)
        return cls([ViewChoice(str(view_type), view_type)], **kwargs)

    # -- state -----------------------------------------------------------------------------

    @property
    def choice(self) -> ViewChoice:
        return self.views[self.current]

    @property
    def layout(self) -> ViewLayout:
        """The layout of the current view with the extents chosen."""
        return self._layout(self.chosen_extents)

    def _layout(self, extents: dict[int, int]) -> ViewLayout:
        known: dict[int, int] = {}
        bounds: dict[int, int] = {}
        if self.choice.value is not None:
            known, bounds = known_extents(self.choice.value)
        known.update(extents)
        return layout_of_type(self.choice.type, known, bounds)

    def _choose_view(self, i: int) -> None:
        self.current = i
        bare = self._layout({})
        # Fill every extent nobody gave with a default, so that the picture is concrete.
        self.chosen_extents = {
            d: self.chosen_extents.get(d, default_extent(bare, d))
            for d in bare.dynamic_dims
            if bare.tensor_shape[d] is None
        }
        layout = self.layout
        self.index = tuple(0 for _ in range(layout.rank))
        if layout.sparse_dim is not None:
            count = layout.tile_shape[layout.sparse_dim]
            extent = layout.tensor_shape[layout.sparse_dim] or count
            # Rows spread over the tensor in a shuffled order, like the spec's picture.
            self.rows = tuple((i * 5 + 1) % max(extent, 1) for i in range(count))
        self._build_controls()
        self._redraw()

    def set_extent(self, dim: int, extent: int) -> None:
        """The extent of tensor dimension `dim` (a dynamic one)."""
        if dim not in self.chosen_extents:
            raise ValueError(f"tensor dimension {dim} is not dynamic; its extent is fixed by the type")
        self.chosen_extents[dim] = _extent(dim, extent)
        layout = self.layout
        self.index = tuple(min(c, max((n or 1) - 1, 0)) for c, n in zip(self.index, layout.index_shape))
        # The box shows the value (when set from Python); it is not rebuilt under the cursor.
        box = self.extent_box.children[1 + dim] if len(self.extent_box.children) > 1 + dim else None
        if box is not None and box.value != self.chosen_extents[dim]:
            self._busy = True
            try:
                box.value = self.chosen_extents[dim]
            finally:
                self._busy = False
        self._build_controls(extents=False)
        self._redraw()

    def select(self, index: Sequence[int]) -> None:
        """Select the tile at `index` (for a gather/scatter view the coordinate at the sparse
        dimension is the first row gathered). Indices outside the index space are clamped."""
        layout = self.layout
        coords = []
        for i, c in enumerate(index):
            n = layout.index_shape[i] if i < layout.rank else None
            coords.append(int(c) if n is None or i == layout.sparse_dim else min(max(int(c), 0), max(n - 1, 0)))
        if len(coords) != layout.rank:
            raise ValueError(f"index {tuple(index)} has {len(coords)} coordinates; the index space has {layout.rank}")
        if layout.sparse_dim is not None:
            row = coords[layout.sparse_dim]
            rows = [r for r in self.rows if r != row]
            self.rows = tuple([row, *rows][: len(self.rows)])
        self.index = tuple(coords)
        self._sync_sliders()
        self._redraw()

    def pick(self, index: Sequence[int]) -> None:
        """A click on a tile of the picture."""
        self.select(index)

    def set_rows(self, rows: Sequence[int]) -> None:
        """Gather/scatter: the rows the sparse index picks (as many as the tile has)."""
        self.rows = tuple(int(r) for r in rows)
        self._redraw()

    # -- what is highlighted ---------------------------------------------------------------

    def selected_extents(self) -> list[Any]:
        """`TileExtent`s of what the selection touches: the tile, or one per gathered row."""
        layout = self.layout
        if layout.sparse_dim is None:
            return [tile_extent(layout, self.index)]
        found = []
        for row in self.rows:
            coords = list(self.index)
            coords[layout.sparse_dim] = row
            found.append(tile_extent(layout, coords))
        return found

    def highlighted(self) -> set[tuple[int, ...]]:
        """The tensor elements (in the drawn dimensions; the others at the selection's start)
        highlighted now; elements outside the tensor (padding) included."""
        return {cell for cell, kind in self._element_cells().items() if kind[0] in ("tile", "pad", "overlap")}

    # -- controls --------------------------------------------------------------------------

    def _build_controls(self, extents: bool = True) -> None:
        """The extent boxes (when `extents`: not while one of them is being typed in) and the
        index controls, whose ranges follow the extents. Replaced widgets are closed, so that
        their models do not pile up in the frontend."""
        w = _ipywidgets()
        layout = self.layout
        if extents:
            self._build_extent_boxes(w, layout)
        for old in self.index_box.children:
            old.close()
        self.sliders: list[Any] = []
        index_widgets: list[Any] = []
        for i in range(layout.rank):
            if i == layout.sparse_dim:
                text = w.Text(
                    value=",".join(map(str, self.rows)),
                    description=f"rows (dim {i})",
                    layout=w.Layout(width="260px"),
                    style={"description_width": "80px"},
                )
                text.observe(lambda change: self._rows_changed(change["new"]), names="value")
                index_widgets.append(text)
                self.sliders.append(None)
                continue
            n = layout.index_shape[i] or 1
            slider = w.IntSlider(
                value=min(self.index[i], n - 1),
                min=0,
                max=max(n - 1, 0),
                description=f"index {i}",
                continuous_update=False,
                layout=w.Layout(width="300px"),
            )
            slider.observe(lambda change, i=i: self._slider_moved(i, change["new"]), names="value")
            index_widgets.append(slider)
            self.sliders.append(slider)
        self.index_box.children = [w.Label("tile:"), *index_widgets]

    def _build_extent_boxes(self, w: Any, layout: ViewLayout) -> None:
        for old in self.extent_box.children:
            old.close()
        extent_widgets = []
        for d in range(layout.tensor_rank):
            dynamic = d in self.chosen_extents
            box = w.BoundedIntText(
                value=layout.tensor_shape[d] or 0,
                # A dynamic extent of 0 has no tile to pick: the box stops at 1 (`_extent`).
                min=1 if dynamic else 0,
                max=1 << 31,
                description=dim_name(d) if dynamic else f"dim {d}",
                disabled=not dynamic,
                layout=w.Layout(width="170px"),
                style={"description_width": "50px"},
            )
            if dynamic:
                box.observe(lambda change, d=d: self._extent_changed(d, change["new"]), names="value")
            extent_widgets.append(box)
        self.extent_box.children = [w.Label("tensor extents:"), *extent_widgets]

    def _sync_sliders(self) -> None:
        self._busy = True
        try:
            for i, slider in enumerate(self.sliders):
                if slider is not None and slider.value != self.index[i]:
                    slider.value = self.index[i]
        finally:
            self._busy = False

    def _extent_changed(self, dim: int, value: int) -> None:
        if not self._busy:
            self.set_extent(dim, value)

    def _slider_moved(self, i: int, value: int) -> None:
        if self._busy:
            return
        coords = list(self.index)
        coords[i] = value
        self.select(coords)

    def _rows_changed(self, text: str) -> None:
        try:
            rows = [int(s) for s in re.split(r"[,\s]+", text.strip()) if s]
        except ValueError:
            return  # still typing
        if rows:
            self.set_rows(rows)

    # -- drawing ---------------------------------------------------------------------------

    def _redraw(self) -> None:
        layout = self.layout
        highlight = list(self.index)
        if layout.sparse_dim is not None and self.rows:
            highlight[layout.sparse_dim] = self.rows[0]
        try:
            svg = svg_picture(layout, highlight=highlight)
        except ValueError:  # an index the extents no longer allow: draw without a highlight
            svg = svg_picture(layout)
        self.picker.draw(svg)
        self.elements.value = self._elements_svg(layout)
        self.info.value = self._info_html(layout)

    def _axes(self, layout: ViewLayout) -> tuple[int | None, int]:
        rank = layout.tensor_rank
        return (rank - 2 if rank >= 2 else None), rank - 1

    def _positions(self, layout: ViewLayout, dim: int | None, wanted: list[tuple[int, int]]) -> list[int | None]:
        """Element positions drawn along `dim`: the requested ranges with a margin, cut in
        the middle (None) where that is more than ELEMENT_CELLS."""
        if dim is None:
            return [0]
        lo = max(min(a for a, _ in wanted) - MARGIN, 0)
        hi = max(b for _, b in wanted) + MARGIN
        extent = layout.tensor_shape[dim]
        hi = min(hi, max(extent if extent is not None else hi, max(b for _, b in wanted)))
        keep = sorted({p for a, b in wanted for p in range(max(a - MARGIN, lo), min(b + MARGIN, hi))})
        if len(keep) <= ELEMENT_CELLS:
            out: list[int | None] = []
            for p in keep:
                if out and out[-1] is not None and p != out[-1] + 1:
                    out.append(None)
                out.append(p)
            return out
        half = ELEMENT_CELLS // 2
        return [*keep[:half], None, *keep[-half:]]

    def _element_cells(self) -> dict[tuple[int, ...], tuple[str, str]]:
        """(row, column) -> (kind, label) of the elements drawn: kind "tile" (in the selected
        tile), "pad" (the tile's part outside the tensor), "overlap" (also in a neighbouring
        tile of a strided view), "outside" or "plain"; label the gathered result row."""
        layout = self.layout
        row_dim, col_dim = self._axes(layout)
        extents = self.selected_extents()
        rows_wanted = [e.requested[row_dim] for e in extents] if row_dim is not None else [(0, 1)]
        cols_wanted = [e.requested[col_dim] for e in extents]
        rows = self._positions(layout, row_dim, rows_wanted)
        cols = self._positions(layout, col_dim, cols_wanted)
        neighbours = self._neighbour_extents(layout) if layout.kind == "strided_view" else []
        cells: dict[tuple[int, ...], tuple[str, str]] = {}
        for r in rows:
            for c in cols:
                if r is None or c is None:
                    continue
                inside = all(
                    layout.tensor_shape[d] is None or p < layout.tensor_shape[d]  # type: ignore[operator]
                    for d, p in ((row_dim, r), (col_dim, c))
                    if d is not None
                )
                kind, label = ("plain" if inside else "outside"), ""
                for k, e in enumerate(extents):
                    if _contains(e.requested, row_dim, r) and _contains(e.requested, col_dim, c):
                        kind = "tile" if inside else "pad"
                        if layout.sparse_dim is not None:
                            label = str(k)
                        break
                if kind == "tile" and any(
                    _contains(n.requested, row_dim, r) and _contains(n.requested, col_dim, c) for n in neighbours
                ):
                    kind = "overlap"
                cells[(r, c)] = (kind, label)
        return cells

    def _neighbour_extents(self, layout: ViewLayout) -> list[Any]:
        """The tiles next to the selected one (along each index dimension, as far as tiles can
        reach back and forth), whose elements a strided view's tiles may share."""
        found = []
        for i in range(layout.rank):
            reach = math.ceil(layout.tile_shape[i] / max(layout.steps[i], 1))
            for delta in range(-reach + 1, reach):
                if delta == 0:
                    continue
                coords = list(self.index)
                coords[i] += delta
                try:
                    found.append(tile_extent(layout, coords))
                except ValueError:
                    continue  # outside the index space
        return found

    def _elements_svg(self, layout: ViewLayout) -> str:
        row_dim, col_dim = self._axes(layout)
        cells = self._element_cells()
        extents = self.selected_extents()
        rows = self._positions(layout, row_dim, [e.requested[row_dim] for e in extents] if row_dim is not None else [])
        cols = self._positions(layout, col_dim, [e.requested[col_dim] for e in extents])
        size = 14 if max(len(rows), len(cols)) <= 24 else 10
        dims = f" {col_dim}" if row_dim is None else f"s {row_dim} x {col_dim}"
        left, top = 44, 30
        width = left + len(cols) * size + 10
        height = top + len(rows) * size + 40
        fills = {"tile": "#4f83cc", "pad": "#f5a623", "overlap": "#7b3fa0", "plain": "#eef1f7", "outside": "#ffffff"}
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" '
            'font-size="9">',
            f'<text x="{left}" y="12">elements of the tensor around the selected tile (dim{dims})</text>',
        ]
        for y, r in enumerate(rows):
            ry = top + y * size
            if r is None:
                out.append(f'<text x="{left - 30}" y="{ry + size - 3}">⋮</text>')
                continue
            if row_dim is not None and (y == 0 or rows[y - 1] is None or r % 4 == 0):
                out.append(f'<text x="{left - 30}" y="{ry + size - 3}">{r}</text>')
            for x, c in enumerate(cols):
                cx = left + x * size
                if c is None:
                    out.append(f'<text x="{cx + 2}" y="{ry + size - 3}">…</text>')
                    continue
                kind, label = cells.get((r, c), ("plain", ""))
                stroke = "#bbb" if kind != "outside" else "#ddd"
                dash = ' stroke-dasharray="2,2"' if kind in ("pad", "outside") else ""
                out.append(
                    f'<rect class="el {kind}" data-r="{r}" data-c="{c}" x="{cx}" y="{ry}" width="{size - 1}" '
                    f'height="{size - 1}" fill="{fills[kind]}" stroke="{stroke}"{dash}/>'
                )
                if label and size >= 14:
                    out.append(f'<text x="{cx + 3}" y="{ry + size - 4}" fill="#fff">{label}</text>')
        free_from = 0.0  # column labels: where the next one may start without overlapping
        for x, c in enumerate(cols):
            cx = left + x * size
            if c is not None and cx >= free_from and (x == 0 or cols[x - 1] is None or c % 8 == 0):
                out.append(f'<text x="{cx}" y="{top - 4}">{c}</text>')
                free_from = cx + len(str(c)) * 6 + 4
        legend_y = top + len(rows) * size + 14
        legend = [("tile", "selected tile"), ("pad", "padding (outside the tensor)")]
        if layout.kind == "strided_view":
            legend.append(("overlap", "shared with another tile"))
        x = left
        for kind, text in legend:
            out.append(f'<rect x="{x}" y="{legend_y - 8}" width="9" height="9" fill="{fills[kind]}"/>')
            out.append(f'<text x="{x + 12}" y="{legend_y}">{text}</text>')
            x += 12 + len(text) * 6 + 14
        out.append("</svg>")
        return "\n".join(out)

    def _info_html(self, layout: ViewLayout) -> str:
        lines = [describe(layout), ""]
        extents = self.selected_extents()
        if layout.sparse_dim is None:
            e = extents[0]
            span = " x ".join(f"[{a}, {b})" for a, b in e.ranges)
            total = math.prod(b - a for a, b in e.requested)
            inside = math.prod(b - a for a, b in e.ranges)
            label = "(" + ",".join(map(str, e.index)) + ")"  # as the picture labels it
            lines.append(f"tile {label}: elements {span} of the tensor")
            if e.padded:
                lines.append(f"  {total - inside} of its {total} elements lie outside the tensor (padding)")
            elif e.padded is None:
                lines.append("  whether it is padded depends on an unknown extent")
            if layout.kind == "strided_view":
                shared = sum(1 for kind, _ in self._element_cells().values() if kind == "overlap")
                if shared:
                    lines.append(f"  {shared} of the elements drawn are shared with neighbouring tiles (overlap)")
        else:
            extent = layout.tensor_shape[layout.sparse_dim]
            lines.append(
                f"gathered rows (dim {layout.sparse_dim}): {list(self.rows)} -> result rows 0..{len(self.rows) - 1}"
            )
            outside = [r for r in self.rows if extent is not None and not 0 <= r < extent]
            if outside:
                lines.append(f"  rows {outside} lie outside the tensor: each gives a row of padding")
        return f'<pre style="margin:4px 0">{html.escape(chr(10).join(lines))}</pre>'

    # -- display ---------------------------------------------------------------------------

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        # A frontend without widgets (a terminal, nbconvert to text) reads this instead.
        bundle["text/plain"] = self.text()
        return bundle

    def text(self) -> str:
        from compiler.layout import text_picture

        layout = self.layout
        return f"{self.choice.label}\n{describe(layout)}\n\n{text_picture(layout)}"

    def __repr__(self) -> str:
        return self.text()


def _extent(dim: int, extent: Any) -> int:
    """A chosen extent of dynamic dimension `dim`: an int, at least 1 (an empty tensor has no
    tile to picture or pick)."""
    if isinstance(extent, bool) or not isinstance(extent, (int, np.integer)) or extent < 1:
        raise ValueError(f"the extent of tensor dimension {dim} must be an int of 1 or more, not {extent!r}")
    return int(extent)


def _contains(ranges: Sequence[tuple[int, int]], dim: int | None, p: int) -> bool:
    if dim is None:
        return True
    a, b = ranges[dim]
    return a <= p < b


def _parse_type(text: str) -> Any:
    """A view type from its text, through the parser (as the type of a type alias)."""
    from compiler.text import parse

    text = text.strip().removeprefix("!cuda_tile.").removeprefix("!")
    result = parse(f"!t = !cuda_tile.{text}\n", "<type>")
    errors = [d.message for d in result.diagnostics if d.is_error]
    view = result.module.type_aliases.get("t")
    if errors or not is_view_type(view):
        raise ValueError(f"not a view type: {text}" + (f" ({errors[0]})" if errors else ""))
    return view


# --------------------------------------------------------------------------------------------
# Result view


class ResultView:
    """An output array beside its reference: both as heat maps, the map of where they differ,
    and the verdict of the same comparison as `tileir run --check` (its tolerances by dtype).

        compare(c, a + b)
    """

    MAX_CELLS = (24, 96)  # rows, columns of each heat map; larger arrays are pooled

    def __init__(
        self,
        actual: np.ndarray,
        expected: Any,
        *,
        title: str | None = None,
        rtol: float | None = None,
        atol: float | None = None,
    ) -> None:
        from compiler.runtime.argspec import Check, SpecError, run_check

        self.actual = np.asarray(actual)
        if self.actual.dtype.kind == "c" or np.asarray(expected).dtype.kind == "c":
            # Tile IR has no complex types, and a float comparison would drop the imaginary parts.
            raise ValueError("complex arrays are not compared: compare their .real and .imag apart")
        self.title = title
        # The reference through the CLI's own check: "arg1 = arg0" with arg0 the reference.
        try:
            outcome = run_check(
                Check("result = reference", 1, "arg0"), [expected, None], [None, self.actual], rtol, atol
            )
        except SpecError as e:
            raise ValueError(str(e).replace("--check 'result = reference': ", "")) from None
        self.ok = outcome.ok
        # "ok (4000 elements, ...)" or "FAILED: 3 of 12 elements differ ...", in our words; a
        # failure's largest error is in `details()`, with where it is and the NaN mismatches it
        # leaves out.
        verdict = outcome.message.replace("check arg1 = arg0: ", "").replace("arg1[", "result[")
        self.verdict = verdict if self.ok else re.sub(r"; max abs error [^;]*$", "", verdict)
        self.expected = (
            outcome.expected if outcome.expected is not None else np.broadcast_to(expected, self.actual.shape)
        )
        a = self.actual.astype(np.float64)
        e = np.asarray(self.expected).astype(np.float64)
        with np.errstate(all="ignore"):
            same = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & (a == e))
            # np.where, not item assignment: 0-d arrays (a scalar result) too.
            diff = np.where(same, 0.0, np.abs(a - e))
            rel = np.where(e != 0, diff / np.abs(e), np.nan)  # relative to a zero: undefined, left out
        self.diff = diff
        finite = np.isfinite(diff)
        self.max_abs = float(diff[finite].max()) if finite.any() else 0.0
        finite_rel = rel[np.isfinite(rel)]
        self.max_rel = float(finite_rel.max()) if finite_rel.any() else 0.0
        # The largest finite error; NaN on one side only and infinities are counted apart
        # (`details`), since no number measures them.
        worst = np.where(finite, diff, -1.0)
        self.worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(worst)), diff.shape))
        self.unmeasured = [
            (what, mask)
            for what, mask in (
                ("NaN where a number was expected", np.isnan(a) & ~np.isnan(e)),
                ("a number where NaN was expected", ~np.isnan(a) & np.isnan(e)),
                ("an infinity against another value", ~same & np.isinf(diff)),
            )
            if mask.any()
        ]

    def details(self) -> str:
        """The largest errors, and the mismatches no error measures (NaN on one side only,
        infinities), each with its first index."""
        parts = []
        if self.max_abs or not self.unmeasured:
            parts.append(f"max abs error {self.max_abs:.3g} at {self.worst}, max rel error {self.max_rel:.3g}")
        for what, mask in self.unmeasured:
            count = int(mask.sum())
            first = tuple(int(i) for i in np.argwhere(mask)[0]) if mask.ndim else ()
            parts.append(f"{what} at {count} element{'s' if count != 1 else ''} (first at {first})")
        return "; ".join(parts)

    def text(self) -> str:
        head = f"{self.title}: " if self.title else ""
        shape = "x".join(map(str, self.actual.shape)) or "scalar"
        return f"{head}{self.verdict}\n  {shape} {self.actual.dtype}; {self.details()}"

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        colour = "#2e7d32" if self.ok else "#d32f2f"
        verdict_word, verdict_rest = re.match(r"(\w+)(.*)", self.verdict, re.DOTALL).groups()  # type: ignore[union-attr]
        maps = [
            _heat_svg(self.actual, "result", diverging=True),
            _heat_svg(np.asarray(self.expected), "reference", diverging=True),
            # NaN on one side only is drawn as the worst difference (black), not as no data.
            _heat_svg(np.where(np.isnan(self.diff), np.inf, self.diff), "|result - reference|", diverging=False),
        ]
        title = f"<b>{html.escape(self.title)}</b> " if self.title else ""
        html_text = (
            f'<div class="tileir-result" style="font-family: monospace">'
            f'<div>{title}<b style="color:{colour}">{html.escape(verdict_word)}</b>{html.escape(verdict_rest)}</div>'
            f"<div>{html.escape(self.details())}</div>"
            f'<div style="display:flex; flex-wrap:wrap; gap:12px">{"".join(maps)}</div></div>'
        )
        return {"text/html": html_text, "text/plain": self.text()}


def compare(actual: np.ndarray, expected: Any, *, rtol: float | None = None, atol: float | None = None) -> ResultView:
    """`actual` beside `expected` (an array, or anything NumPy broadcasts to its shape)."""
    return ResultView(actual, expected, rtol=rtol, atol=atol)


def _pool(values: np.ndarray, cells: tuple[int, int], how: str) -> np.ndarray:
    """`values` as 2-D (leading dimensions folded into rows), pooled down to `cells`."""
    v = values.astype(np.float64)
    if v.ndim == 0:
        v = v.reshape(1, 1)
    elif v.ndim == 1:
        v = v.reshape(1, -1)
    else:
        v = v.reshape(-1, v.shape[-1])
    rows, cols = v.shape
    fr, fc = math.ceil(rows / cells[0]), math.ceil(cols / cells[1])
    pr, pc = math.ceil(rows / fr) * fr, math.ceil(cols / fc) * fc
    padded = np.full((pr, pc), np.nan)
    padded[:rows, :cols] = v
    blocks = padded.reshape(pr // fr, fr, pc // fc, fc)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN blocks are drawn empty
            return np.nanmax(blocks, axis=(1, 3)) if how == "max" else np.nanmean(blocks, axis=(1, 3))


def _heat_svg(values: np.ndarray, title: str, diverging: bool) -> str:
    if values.size == 0:
        return f"<div>{html.escape(title)}: empty</div>"
    grid = _pool(values, ResultView.MAX_CELLS, "mean" if diverging else "max")
    rows, cols = grid.shape
    size = max(3, min(12, 300 // max(cols, 1)))
    height = size if rows > 1 else 12  # a 1-D array is one strip: keep it visible
    finite = grid[np.isfinite(grid)]
    scale = float(np.abs(finite).max()) if finite.size else 1.0
    scale = scale or 1.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * size + 2}" height="{rows * height + 18}">',
        f'<text x="0" y="11" font-size="11" font-family="monospace">{html.escape(title)}</text>',
    ]
    for r in range(rows):
        for c in range(cols):
            v = grid[r, c]
            if not np.isfinite(v):
                fill = "#000" if np.isinf(v) else "#fff"  # infinities black; NaN (no data) blank
            elif diverging:
                t = max(-1.0, min(1.0, v / scale))
                fill = _mix((255, 255, 255), (178, 24, 43) if t > 0 else (33, 102, 172), abs(t))
            else:
                t = v / scale
                fill = _mix((255, 255, 255), (200, 0, 0), min(t, 1.0)) if v > 0 else "#f3f3f3"
            parts.append(f'<rect x="{c * size}" y="{14 + r * height}" width="{size}" height="{height}" fill="{fill}"/>')
    parts.append("</svg>")
    return "".join(parts)


def _mix(a: tuple[int, int, int], b: tuple[int, int, int], t: float) -> str:
    r, g, bl = (round(x + (y - x) * t) for x, y in zip(a, b))
    return f"#{r:02x}{g:02x}{bl:02x}"
