"""`tileir/layout`: a picture (SVG) and the data of the view under the cursor.

Params `{textDocument: {uri}, position, extents?: {"S0": 4096, ...}, index?: [i, j]}`; the
result is null where there is no view, else `{title, svg, text, data, dynamicDims}`. The
drawing is the core's (`compiler.layout`), which the notebook uses too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from compiler.ir.core import Operation, Value
from compiler.layout import (
    describe,
    is_view_type,
    layout_data,
    layout_of_type,
    svg_picture,
    text_picture,
    view_layout_of,
)
from compiler.layout.index_space import dim_name
from compiler.text.index import Kind

from ..convert import param
from ..server import feature

if TYPE_CHECKING:
    from ..documents import Analysis
    from ..server import TileLanguageServer

METHOD = "tileir/layout"


def register(server: TileLanguageServer) -> None:
    @feature(server, METHOD)
    def layout(params: Any) -> dict[str, Any] | None:
        uri = param(param(params, "textDocument"), "uri")
        position = param(params, "position")
        if not isinstance(uri, str) or position is None:
            return None
        analysis = server.analysis(uri)
        if analysis is None:
            return None
        line, character = param(position, "line"), param(position, "character")
        if not isinstance(line, int) or not isinstance(character, int):
            return None
        offset = analysis.offset(lsp.Position(line=line, character=character))
        return view_at(analysis, offset, _extents(param(params, "extents")), _index(param(params, "index")))


def view_at(
    analysis: Analysis, offset: int, extents: dict[int, int], index: tuple[int, ...] | None
) -> dict[str, Any] | None:
    """The layout answer for the view under `offset`: a view-typed value, a written view type,
    or the view an op under the cursor makes or reads."""
    occ = analysis.at(offset, (Kind.VALUE, Kind.TYPE, Kind.OP))
    title = ""
    layout = None
    if occ is not None and occ.kind is Kind.VALUE and isinstance(occ.target, Value) and is_view_type(occ.target.type):
        layout = view_layout_of(occ.target, extents=extents)
        title = f"%{occ.target.name}" if occ.target.name else "view"
    elif occ is not None and occ.kind is Kind.TYPE and is_view_type(occ.target):
        layout = layout_of_type(occ.target, extents)  # type: ignore[arg-type]
        title = str(occ.target).split("<", 1)[0]
    else:
        op = analysis.op_at(offset)
        value = _view_of_op(op) if op is not None else None
        if value is not None:
            layout = view_layout_of(value, extents=extents)
            title = f"%{value.name}" if value.name else op.mnemonic  # type: ignore[union-attr]
    if layout is None:
        return None
    highlight = None
    if index is not None and len(index) == layout.rank:
        highlight = index
    return {
        "title": f"{title}: {layout.kind}",
        "svg": svg_picture(layout, highlight),
        "text": describe(layout) + "\n\n" + text_picture(layout),
        "data": layout_data(layout),
        "dynamicDims": [dim_name(d) for d in layout.dynamic_dims if layout.tensor_shape[d] is None],
    }


def _view_of_op(op: Operation) -> Value | None:
    """The view a `make_*_view` op makes, or the view operand of an op that reads one."""
    for result in op.results:
        if is_view_type(result.type):
            return result
    for operand in op.operands:
        if is_view_type(operand.type):
            return operand
    return None


def _extents(value: Any) -> dict[int, int]:
    """`{"S0": 4096}` or `{"0": 4096}` -> {0: 4096}; anything unusable is ignored."""
    found: dict[int, int] = {}
    if hasattr(value, "_asdict"):  # pygls hands custom params over as named tuples
        value = value._asdict()
    if not isinstance(value, dict):
        return found
    for key, extent in value.items():
        name = str(key).lstrip("S")
        if name.isdigit() and isinstance(extent, int | float) and 0 <= extent < 1 << 40:
            found[int(name)] = int(extent)
    return found


def _index(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list | tuple) and all(isinstance(i, int) for i in value):
        return tuple(value)
    return None
