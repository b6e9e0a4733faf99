"""`tileir/layout`: the SVG and data of the view under the cursor."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from lsprotocol import types as lsp

from .util import change_document, open_document, position_of

KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>, %n: tile<i32>) {
    %c1024 = constant <i32: 1024> : tile<i32>
    %tv = make_tensor_view %p, shape = [%n, 128], strides = [128, 1] : tile<i32> -> \
tensor_view<?x128xf32, strides=[128,1]>
    %pv = make_partition_view %tv : partition_view<tile=(64x32), tensor_view<?x128xf32, strides=[128,1]>>
    return
  }
}
"""


async def _layout(client, uri, position, **extra):
    params = {"textDocument": {"uri": uri}, "position": {"line": position.line, "character": position.character}}
    params.update(extra)
    return await client.protocol.send_request_async("tileir/layout", params)


def _field(result, name):
    return result[name] if isinstance(result, dict) else getattr(result, name)


@pytest.mark.asyncio(loop_scope="module")
async def test_layout_of_a_partition_view(client):
    uri, diagnostics = await open_document(client, KERNEL)
    assert diagnostics == []
    result = await _layout(client, uri, position_of(KERNEL, "%pv"))
    assert result is not None
    svg = ET.fromstring(_field(result, "svg"))
    assert svg.tag.endswith("svg")
    # 128 columns in tiles of 32: 4 tiles across; the rows are dynamic (S0).
    assert list(_field(result, "dynamicDims")) == ["S0"]
    assert "ceildiv(S0, 64)" in _field(result, "text")
    # With the dynamic extent chosen, the index space is resolved: 1000 rows -> 16 tiles, the last partial.
    sized = await _layout(client, uri, position_of(KERNEL, "%pv"), extents={"S0": 1000}, index=[15, 3])
    assert list(_field(sized, "dynamicDims")) == []
    data = _field(sized, "data")
    shape = data["index_shape"] if isinstance(data, dict) else data.index_shape
    assert list(shape) == [16, 4]


@pytest.mark.asyncio(loop_scope="module")
async def test_layout_after_an_edit_above_and_where_there_is_no_view(client):
    uri, _ = await open_document(client, KERNEL)
    top = lsp.Position(line=0, character=0)
    await change_document(
        client, uri, 2, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=top, end=top), text="// a\n// b\n")]
    )
    text = "// a\n// b\n" + KERNEL
    assert await _layout(client, uri, position_of(text, "%pv = make", offset_in_needle=1)) is not None
    assert await _layout(client, uri, position_of(text, "%c1024")) is None
    assert await _layout(client, uri, lsp.Position(line=500, character=3)) is None
    assert await _layout(client, "file:///nowhere.tileir", top) is None
