"""Pictures of a view's tiling: monospace text for hovers, SVG for webviews and notebooks,
and the JSON-able data under both.

Both pictures show the last two tensor dimensions (rows: the second to last, columns: the
last; the spec's convention) with the others fixed, one cell per position of the index
space laid where its tile starts: for partition and strided views a cell is a tile, for
gather/scatter views and bare tensor views an element (their index space is the tensor's
shape). A cell's label is its index-space coordinate, so a dim_map shows as swapped
coordinates. Large index spaces are cut (`...`) so that a hover stays small.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from .index_space import ViewLayout, dim_name, tile_extent

# A hover shows at most this many cells per axis; the SVG a few more.
TEXT_CELLS = 8
SVG_CELLS = 16
# The thinnest a tile is drawn in the SVG, in pixels.
MIN_TILE_PX = 6.0


def _inverse(dim_map: tuple[int, ...]) -> list[int]:
    inverse = [0] * len(dim_map)
    for i, d in enumerate(dim_map):
        inverse[d] = i
    return inverse


def _shown(count: int | None, bound: int | None, cap: int) -> list[int | None]:
    """Index positions drawn along one axis; None stands for the ones left out (`...`)."""
    if count is not None:
        if count <= cap:
            return list(range(count))
        return [*range(cap - 2), None, count - 1]
    known = cap - 1 if bound is None else min(cap - 1, bound)
    return [*range(known), None]


def _extent_text(layout: ViewLayout, d: int) -> str:
    extent = layout.tensor_shape[d]
    if extent is not None:
        return str(extent)
    bound = layout.extent_bounds[d] if layout.extent_bounds else None
    return dim_name(d) if bound is None else f"{dim_name(d)}<={bound}"


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) if shape else "()"


def _padding_text(layout: ViewLayout) -> str:
    if layout.kind == "tensor_view":
        return "no tiles: a tensor_view is not loaded from directly"
    load = f"loads yield {layout.padding}" if layout.padding else "loads yield unspecified values (no padding_value)"
    return f"outside the tensor: {load}; stores are masked"


def describe(layout: ViewLayout) -> str:
    """A few lines: tile and tensor shapes, the index space with its arithmetic, padding."""
    tensor = "x".join(_extent_text(layout, d) for d in range(layout.tensor_rank)) or "()"
    strides = ",".join("?" if s is None else str(s) for s in layout.tensor_strides)
    head = f"tile {_shape_text(layout.tile_shape)} over " if layout.kind != "tensor_view" else ""
    lines = [
        f"{layout.kind}: {head}tensor {tensor} of {layout.element}, strides [{strides}]",
        f"index space: {layout.index_shape_text()}",
    ]
    for i in range(layout.rank):
        d = layout.dim_map[i]
        if layout.kind == "gather_scatter_view":
            role = "gathered rows" if i == layout.sparse_dim else f"offsets, runs of {layout.tile_shape[i]}"
            lines.append(f"  index {i} -> tensor dim {d} ({role}): {layout.explain(i)}")
        elif layout.kind == "tensor_view":
            lines.append(f"  index {i} -> tensor dim {d}: {layout.explain(i)}")
        else:
            step = f"step {layout.steps[i]}, tile {layout.tile_shape[i]}"
            partial = layout.partial_indices(i)
            note = ""
            if partial is not None and len(partial):
                first = partial.start
                note = f"; partial from index {first}" if len(partial) > 1 else f"; index {first} partial"
            lines.append(f"  index {i} -> tensor dim {d} ({step}): {layout.explain(i)}{note}")
    if layout.dim_map != tuple(range(layout.rank)):
        lines.append(f"dim_map={list(layout.dim_map)}: index dimension i runs along tensor dimension dim_map[i]")
    if layout.kind == "strided_view":
        for i in range(layout.rank):
            gap = layout.steps[i] - layout.tile_shape[i]
            if gap:
                what = f"gap of {gap}" if gap > 0 else f"overlap of {-gap}"
                lines.append(f"  tiles along index {i}: {what} element{'s' if abs(gap) != 1 else ''}")
    lines.append(_padding_text(layout))
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Text


def _label(coords: list[int]) -> str:
    return "(" + ",".join(map(str, coords)) + ")"


def _axes(layout: ViewLayout) -> tuple[int | None, int | None]:
    """(row tensor dim, column tensor dim) drawn; None where the rank has no such axis."""
    rank = layout.tensor_rank
    if rank == 0:
        return None, None
    if rank == 1:
        return None, 0
    return rank - 2, rank - 1


def _cell_coords(layout: ViewLayout, fixed: list[int], row_pos: int | None, col_pos: int | None) -> list[int]:
    inverse = _inverse(layout.dim_map)
    coords = list(fixed)
    row_dim, col_dim = _axes(layout)
    if row_dim is not None and row_pos is not None:
        coords[inverse[row_dim]] = row_pos
    if col_dim is not None and col_pos is not None:
        coords[inverse[col_dim]] = col_pos
    return coords


def _is_partial(layout: ViewLayout, coords: list[int]) -> bool:
    for i, c in enumerate(coords):
        start = layout.partial_from(i)
        if start is not None and c >= start:
            return True
    return False


def _axis_count(layout: ViewLayout, d: int | None) -> tuple[int | None, int | None]:
    if d is None:
        return 1, 1
    i = _inverse(layout.dim_map)[d]
    return layout.index_shape[i], layout.index_bounds[i]


def text_picture(layout: ViewLayout, max_width: int = 80) -> str:
    """The tiling as a small monospace grid in the spec's style; at most `TEXT_CELLS` cells
    per axis (fewer if `max_width` columns cannot hold them)."""
    if layout.tensor_rank == 0:
        return "rank-0 tensor: a single element, index space ()"
    if 0 in layout.index_shape:
        empty = ", ".join(str(d) for d, n in enumerate(layout.tensor_shape) if n == 0)
        shape = "x".join(str(n) for n in layout.index_shape)
        return f"no tiles: the tensor is empty (extent 0 in dim {empty}), index space {shape}"
    row_dim, col_dim = _axes(layout)
    assert col_dim is not None
    fixed = [0] * layout.rank
    rows = _shown(*_axis_count(layout, row_dim), TEXT_CELLS) if row_dim is not None else [None]

    def label(r: int | None, c: int | None) -> str:
        if c is None and col_dim is not None:
            return "..."
        coords = _cell_coords(layout, fixed, r, c)
        return _label(coords) + ("*" if _is_partial(layout, coords) else "")

    side_width = max(len(_extent_text(layout, row_dim)), len(f"dim {row_dim}")) if row_dim is not None else 0
    margin = side_width + 4 if row_dim is not None else 0
    col_count, col_bound = _axis_count(layout, col_dim)
    cap = TEXT_CELLS
    while True:
        cols = _shown(col_count, col_bound, cap)
        width = max(len(label(r, c)) for r in rows if r is not None or row_dim is None for c in cols) if rows else 3
        width = max(width, 3)
        line_width = margin + len(cols) * (width + 1)
        if line_width <= max_width or cap <= 3:
            break
        cap -= 1

    def row_text(r: int | None) -> str:
        return " ".join(label(r, c).ljust(width) for c in cols).rstrip()

    grid_width = len(cols) * (width + 1) - 1
    out: list[str] = []
    step_text = _cell_meaning(layout, row_dim, col_dim)
    out.append(step_text)
    if layout.tensor_rank > 2:
        others = ", ".join(str(d) for d in range(layout.tensor_rank - 2))
        out.append(f"showing tensor dims {row_dim} (rows) and {col_dim} (columns); dims {others} fixed at index 0")
    col_label = f"dim {col_dim}: {_extent_text(layout, col_dim)}"
    arrow = "←" + "─" * max(grid_width - 2, 1) + "→"
    out.append(" " * margin + col_label.center(grid_width).rstrip())
    out.append(" " * margin + arrow)
    if row_dim is None:
        out.append(row_text(None))
    else:
        row_label = _extent_text(layout, row_dim)
        middle = len(rows) // 2
        for k, r in enumerate(rows):
            bar = "↑" if k == 0 else "↓" if k == len(rows) - 1 else "│"
            side = row_label if k == middle else (f"dim {row_dim}" if k == middle - 1 else "")
            if r is None:
                out.append(f"{side:>{side_width + 1}} {bar} ...")
            else:
                out.append(f"{side:>{side_width + 1}} {bar} {row_text(r)}")
    if layout.has_partial_tiles() is not False and layout.kind != "tensor_view":
        out.append("* partial: the tile sticks out of the tensor (" + _padding_text(layout).split(": ", 1)[1] + ")")
    return "\n".join(out)


def _cell_meaning(layout: ViewLayout, row_dim: int | None, col_dim: int | None) -> str:
    if layout.kind == "tensor_view":
        return "cells: elements, labelled with their coordinates"
    if layout.kind == "gather_scatter_view":
        return (
            f"cells: elements, labelled with the index whose tile starts there (sparse dim {layout.sparse_dim}: "
            "each index picks one row)"
        )
    inverse = _inverse(layout.dim_map)
    parts = []
    for name, d in (("rows", row_dim), ("columns", col_dim)):
        if d is not None:
            i = inverse[d]
            parts.append(f"{name} every {layout.steps[i]} of dim {d}")
    return "cells: tiles, labelled with their index (" + ", ".join(parts) + ")"


# --------------------------------------------------------------------------------------------
# SVG


def _num(x: float) -> str:
    """Coordinates with at most two decimals and no trailing zeros (deterministic text)."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _axis_geometry(layout: ViewLayout, d: int | None, cap: int, pixels: float) -> dict[str, Any]:
    """Which positions are drawn along tensor dim `d`, and the scale (pixels per element)."""
    if d is None:
        return {"shown": [None], "step": 1, "size": 1, "domain": 1, "scale": min(pixels, 32.0), "cut": False}
    i = _inverse(layout.dim_map)[d]
    count, bound = layout.index_shape[i], layout.index_bounds[i]
    tiled = layout.kind in ("partition_view", "strided_view")
    size = layout.tile_shape[i] if tiled else 1
    step = layout.steps[i]
    cut = count is None or count > cap
    shown = list(range(count)) if not cut else list(range(cap if bound is None else min(cap, bound)))
    last_end = (shown[-1] * step + size) if shown else 0
    extent = layout.tensor_shape[d]
    domain = max(last_end, extent if extent is not None and not cut else 0, 1)
    if cut:
        domain = last_end + step  # room for the ellipsis
    return {"shown": shown, "step": step, "size": size, "domain": domain, "scale": pixels / domain, "cut": cut}


def svg_picture(layout: ViewLayout, highlight: tuple[int, ...] | list[int] | None = None) -> str:
    """A standalone SVG of the tiling: the tensor's extent, the tiles (one `rect` of class
    `tile` each, `partial` ones filled differently), index labels, the `highlight`ed tile,
    and axis labels with extents. Raises ValueError for a highlight outside the index space."""
    marked = tile_extent(layout, highlight) if highlight is not None else None
    row_dim, col_dim = _axes(layout)
    left, top, pixels = 70.0, 50.0, 480.0
    cols = _axis_geometry(layout, col_dim, SVG_CELLS, pixels)
    rows = _axis_geometry(layout, row_dim, SVG_CELLS, pixels if row_dim is not None else 32.0)
    # Square elements where the shapes allow it, so that the picture is not distorted; but not
    # where that would leave tiles too thin to see or click (4x1024 tiles of a 14x3584 tensor
    # would be half a pixel high): then each axis keeps its own scale, and the note says so.
    to_scale = True
    if row_dim is not None:
        scale = min(cols["scale"], rows["scale"])
        if min(cols["size"], rows["size"]) * scale >= MIN_TILE_PX:
            cols["scale"] = rows["scale"] = scale
        else:
            to_scale = False
    width_px = cols["domain"] * cols["scale"]
    height_px = rows["domain"] * rows["scale"]
    total_w = left + width_px + 30
    total_h = top + height_px + 60
    parts: list[str] = [
        '<svg xmlns="http://www.w3.org/2000/svg" '
        f'width="{_num(total_w)}" height="{_num(total_h)}" viewBox="0 0 {_num(total_w)} {_num(total_h)}" '
        'font-family="monospace" font-size="11">',
        "<style>.tensor{fill:#f4f6fb;stroke:#223;stroke-width:2}.tile{fill:#cfe0ff;fill-opacity:0.7;"
        "stroke:#3a5a99;stroke-width:1}.tile.partial{fill:#ffd9a8}.highlight{fill:none;stroke:#d0021b;"
        "stroke-width:3}.label{fill:#111;text-anchor:middle;dominant-baseline:central}"
        ".axis{fill:#333;text-anchor:middle}.note{fill:#555}</style>",
        f"<title>{escape(layout.kind)} {escape(_shape_text(layout.tile_shape))} tiles, index space "
        f"{escape(layout.index_shape_text())}</title>",
    ]
    if layout.tensor_rank == 0:
        parts.append(f'<text class="note" x="10" y="20">{escape("rank-0 tensor: one element")}</text></svg>')
        return "\n".join(parts)

    def extent_px(d: int | None, geometry: dict[str, Any]) -> float:
        if d is None:
            return geometry["domain"] * geometry["scale"]
        extent = layout.tensor_shape[d]
        if extent is None or geometry["cut"]:
            return geometry["domain"] * geometry["scale"]  # runs on past the drawing
        return extent * geometry["scale"]

    parts.append(
        f'<rect class="tensor" x="{_num(left)}" y="{_num(top)}" width="{_num(extent_px(col_dim, cols))}" '
        f'height="{_num(extent_px(row_dim, rows))}"/>'
    )
    fixed = list(marked.index) if marked is not None else [0] * layout.rank
    font = 11.0
    for r in rows["shown"]:
        for c in cols["shown"]:
            coords = _cell_coords(layout, fixed, r, c)
            x = left + (c * cols["step"] if c is not None else 0) * cols["scale"]
            y = top + (r * rows["step"] if r is not None else 0) * rows["scale"]
            w = cols["size"] * cols["scale"]
            h = rows["size"] * rows["scale"]
            kind = "tile partial" if _is_partial(layout, coords) else "tile"
            text = _label(coords)
            parts.append(
                f'<rect class="{kind}" x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}">'
                f"<title>{escape(text)}</title></rect>"
            )
            if w >= len(text) * font * 0.62 and h >= font:
                parts.append(f'<text class="label" x="{_num(x + w / 2)}" y="{_num(y + h / 2)}">{escape(text)}</text>')
    if cols["cut"]:
        x = left + (cols["domain"] - cols["step"] / 2) * cols["scale"]
        parts.append(f'<text class="axis" x="{_num(x)}" y="{_num(top + 14)}">…</text>')
    if rows["cut"]:
        y = top + (rows["domain"] - rows["step"] / 2) * rows["scale"]
        parts.append(f'<text class="axis" x="{_num(left + 12)}" y="{_num(y)}">⋮</text>')
    if marked is not None:
        (r0, r1) = marked.requested[row_dim] if row_dim is not None else (0, 1)
        (c0, c1) = marked.requested[col_dim]
        parts.append(
            f'<rect class="highlight" x="{_num(left + c0 * cols["scale"])}" y="{_num(top + r0 * rows["scale"])}" '
            f'width="{_num((c1 - c0) * cols["scale"])}" height="{_num((r1 - r0) * rows["scale"])}">'
            f"<title>{escape('tile ' + _label(list(marked.index)))}</title></rect>"
        )
    col_text = f"dim {col_dim}: {_extent_text(layout, col_dim)}"
    parts.append(f'<text class="axis" x="{_num(left + width_px / 2)}" y="{_num(top - 12)}">{escape(col_text)}</text>')
    if row_dim is not None:
        row_text = f"dim {row_dim}: {_extent_text(layout, row_dim)}"
        cy = top + height_px / 2
        parts.append(
            f'<text class="axis" x="{_num(left - 30)}" y="{_num(cy)}" '
            f'transform="rotate(-90 {_num(left - 30)} {_num(cy)})">{escape(row_text)}</text>'
        )
    note = f"{layout.kind}: tile {_shape_text(layout.tile_shape)}, index space {layout.index_shape_text()}"
    if not to_scale:
        note += " (not to scale)"
    if layout.tensor_rank > 2:
        note += f"; dims 0..{layout.tensor_rank - 3} fixed at {_label(fixed)}"
    parts.append(f'<text class="note" x="{_num(left)}" y="{_num(top + height_px + 24)}">{escape(note)}</text>')
    if layout.padding:
        parts.append(
            f'<text class="note" x="{_num(left)}" y="{_num(top + height_px + 40)}">'
            f"{escape('padding_value = ' + layout.padding)}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# Data


def layout_data(layout: ViewLayout, max_tiles: int = 64) -> dict[str, Any]:
    """Everything in the layout as JSON-able data, plus the element ranges of the first
    `max_tiles` tiles in row-major index order (all of them when the space is smaller)."""
    tiles: list[dict[str, Any]] = []
    counts = [n if n is not None else b for n, b in zip(layout.index_shape, layout.index_bounds, strict=True)]
    if all(c is not None for c in counts):
        index = [0] * layout.rank
        total = 1
        for c in counts:
            total *= c  # type: ignore[operator]
        for _ in range(min(total, max_tiles)):
            extent = tile_extent(layout, index)
            tiles.append(
                {
                    "index": list(extent.index),
                    "elements": [list(r) for r in extent.ranges],
                    "requested": [list(r) for r in extent.requested],
                    "padded": extent.padded,
                }
            )
            for i in reversed(range(layout.rank)):  # next index, row-major
                index[i] += 1
                if index[i] < counts[i]:  # type: ignore[operator]
                    break
                index[i] = 0
    return {
        "kind": layout.kind,
        "type": str(layout.view_type) if layout.view_type is not None else None,
        "element": str(layout.element),
        "tile_shape": list(layout.tile_shape),
        "tensor_shape": list(layout.tensor_shape),
        "tensor_strides": list(layout.tensor_strides),
        "dynamic_dims": list(layout.dynamic_dims),
        "extent_bounds": list(layout.extent_bounds),
        "dim_map": list(layout.dim_map),
        "steps": list(layout.steps),
        "sparse_dim": layout.sparse_dim,
        "padding": layout.padding,
        "index_shape": list(layout.index_shape),
        "index_bounds": list(layout.index_bounds),
        "index_exprs": list(layout.index_exprs),
        "partial_from": [layout.partial_from(i) for i in range(layout.rank)],
        "tiles": tiles,
        "tiles_total": None if any(c is None for c in counts) else _product(counts),
    }


def _product(values: list[int | None]) -> int:
    total = 1
    for v in values:
        total *= v or 0
    return total


__all__ = ["describe", "layout_data", "svg_picture", "text_picture"]
