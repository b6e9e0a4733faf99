"""Hover: ops (from the op table), values, blocks, types and views, in Markdown; answers on
broken text; positions right after an edit that moved the kernel being asked about."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from lsprotocol import types as lsp

from compiler.dialect import lookup_op
from compiler.ir.enums import ENUM_BY_MNEMONIC
from compiler.text.describe import Description, format_bytes

from .util import change_document, open_document, position_of

ROOT = Path(__file__).resolve().parents[2]
MATMUL = (ROOT / "examples" / "matmul.tileir").read_text()

# Two kernels; the second has a view with one constant extent (100) and one bounded by
# `assume` (<= 256), and loads at a constant and at a run-time index.
VIEWS = """cuda_tile.module @m {
  entry @first(%x: tile<f32>) {
    %y = addf %x, %x : tile<f32>
    return
  }
  entry @k(%p: tile<ptr<f32>>, %n: tile<i32>) {
    %c100 = constant <i32: 100> : tile<i32>
    %nb = assume bounded<0, 256>, %n : tile<i32>
    %tv = make_tensor_view %p, shape = [%c100, %nb], strides = [%nb, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %pv = make_partition_view %tv : partition_view<tile=(64x64), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
    %i1 = constant <i32: 1> : tile<i32>
    %i0 = constant <i32: 0> : tile<i32>
    %t, %tok = load_view_tko weak %pv[%i1, %i0] : partition_view<tile=(64x64), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<64x64xf32>, token
    %u, %tok2 = load_view_tko weak %pv[%i1, %n] : partition_view<tile=(64x64), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<64x64xf32>, token
    return
  }
}
"""  # noqa: E501


def text_at(text: str, rng: lsp.Range) -> str:
    lines = text.split("\n")
    assert rng.start.line == rng.end.line
    return lines[rng.start.line][rng.start.character : rng.end.character]


def line_of(text: str, needle: str) -> int:
    """1-based line of the first `needle`."""
    return text[: text.index(needle)].count("\n") + 1


async def hover(client, uri: str, position: lsp.Position) -> lsp.Hover | None:
    return await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=position)
    )


def no_failures_logged(client) -> bool:
    return not any("failed" in m.message for m in client.log_messages if m.type == lsp.MessageType.Error)


@pytest.mark.asyncio(loop_scope="module")
async def test_op_hover_shows_the_op_table(client):
    uri, _ = await open_document(client, MATMUL)
    result = await hover(client, uri, position_of(MATMUL, "load_view_tko", offset_in_needle=3))
    assert result is not None
    assert result.contents.kind == lsp.MarkupKind.Markdown
    assert text_at(MATMUL, result.range) == "load_view_tko"
    value = result.contents.value
    opdef = lookup_op("load_view_tko")
    assert opdef.summary in value and opdef.description in value
    assert "since 13.1" in value
    for operand in ("view", "index", "token"):
        assert f"`{operand}`" in value
    # The enum attribute lists every keyword of its enum.
    for case in ENUM_BY_MNEMONIC["memory_ordering_semantics"].cases:
        assert f"`{case.keyword}`" in value
    # Which elements this load touches: [%bx*64, ...) rows, [%kk*32, ...) columns.
    assert "[%bx*64, %bx*64+64)" in value
    assert "[%kk*32, %kk*32+32)" in value


@pytest.mark.asyncio(loop_scope="module")
async def test_later_operand_version_is_named(client):
    # `for`'s `unsignedCmp` came in 13.2, after the op itself (13.1).
    text = MATMUL
    uri, _ = await open_document(client, text)
    result = await hover(client, uri, position_of(text, "= for ", offset_in_needle=3))
    assert text_at(text, result.range) == "for"
    assert "`unsignedCmp`" in result.contents.value
    assert "added in 13.2" in result.contents.value


@pytest.mark.asyncio(loop_scope="module")
async def test_value_hover_type_definition_uses(client):
    uri, _ = await open_document(client, MATMUL)
    # `%sum` used by mmaf: a loop-carried block argument of `for`.
    result = await hover(client, uri, position_of(MATMUL, "%sum :", offset_in_needle=2))
    assert text_at(MATMUL, result.range) == "%sum"
    value = result.contents.value
    assert "%sum : tile<64x64xf32>" in value
    assert f"line {line_of(MATMUL, '%acc = for')}" in value
    assert "`for`" in value and "%zero" in value
    assert "1 use " in value
    # An op result with three uses (two loads and a store).
    result = await hover(client, uri, position_of(MATMUL, "%tok = make_token", offset_in_needle=1))
    assert text_at(MATMUL, result.range) == "%tok"
    assert "3 uses" in result.contents.value
    assert "make_token" in result.contents.value
    assert f"line {line_of(MATMUL, '%tok = make_token')}" in result.contents.value


@pytest.mark.asyncio(loop_scope="module")
async def test_type_hover_sizes(client):
    uri, _ = await open_document(client, MATMUL)
    result = await hover(client, uri, position_of(MATMUL, "tile<64x64xf32>", offset_in_needle=2))
    assert text_at(MATMUL, result.range) == "tile<64x64xf32>"
    value = result.contents.value
    assert "4,096 elements" in value  # 64 * 64
    assert "16 KiB" in value and "16,384 bytes" in value  # 4096 * 4 bytes
    assert "32-bit float" in value
    # The nested element type is an occurrence of its own.
    result = await hover(client, uri, position_of(MATMUL, "tile<ptr<f16>>", offset_in_needle=9))
    assert text_at(MATMUL, result.range) == "f16"
    assert "16-bit float" in result.contents.value
    # A tensor_view with dynamic shape and strides keeps its `?`.
    result = await hover(client, uri, position_of(MATMUL, "tensor_view<?x?xf16", offset_in_needle=1))
    assert text_at(MATMUL, result.range) == "tensor_view<?x?xf16, strides=[?,?]>"
    assert "shape ?x?" in result.contents.value and "strides [?, ?]" in result.contents.value


@pytest.mark.asyncio(loop_scope="module")
async def test_view_hover_resolves_extents(client):
    uri, _ = await open_document(client, VIEWS)
    result = await hover(client, uri, position_of(VIEWS, "make_partition_view", offset_in_needle=5))
    value = result.contents.value
    # ceildiv(100, 64) = 2 tiles down; the other extent is only known to be <= 256: <= 4 tiles.
    assert "index space: 2 x ceildiv(S1, 64)" in value
    assert "<= 4" in value
    assert "`%nb`" in value and "assume" in value
    assert "zero" in value  # the padding value
    assert "(1,0)*" in value  # the picture marks the partial second row of tiles
    # The same facts on the result value and on the written view type.
    result = await hover(client, uri, position_of(VIEWS, "%pv = ", offset_in_needle=1))
    assert "index space: 2 x ceildiv(S1, 64)" in result.contents.value
    result = await hover(client, uri, position_of(VIEWS, "partition_view<tile=(64x64)", offset_in_needle=3))
    assert text_at(VIEWS, result.range).startswith("partition_view<tile=(64x64)")
    assert "index space: 2 x ceildiv(S1, 64)" in result.contents.value
    # Written on a load of the view: the operand's definition gives the extents too.
    result = await hover(client, uri, position_of(VIEWS, "partition_view<tile=(64x64)", 2, offset_in_needle=3))
    assert "index space: 2 x ceildiv(S1, 64)" in result.contents.value


@pytest.mark.asyncio(loop_scope="module")
async def test_view_load_elements(client):
    uri, _ = await open_document(client, VIEWS)
    # Constant index (1, 0) of 64x64 tiles: rows [64, 128), of which only [64, 100) exist.
    result = await hover(client, uri, position_of(VIEWS, "load_view_tko weak %pv[%i1, %i0]"))
    value = result.contents.value
    assert "tensor dim 0: [64, 128)" in value
    assert "tensor dim 1: [0, 64)" in value
    assert "dim 0 only [64, 100)" in value
    # A run-time index stays symbolic.
    result = await hover(client, uri, position_of(VIEWS, "load_view_tko weak %pv[%i1, %n]"))
    assert "tensor dim 1: [%n*64, %n*64+64)" in result.contents.value


@pytest.mark.asyncio(loop_scope="module")
async def test_symbol_and_block_argument(client):
    uri, _ = await open_document(client, VIEWS)
    result = await hover(client, uri, position_of(VIEWS, "@k(", offset_in_needle=1))
    assert text_at(VIEWS, result.range) == "@k"
    assert f"line {line_of(VIEWS, 'entry @k')}" in result.contents.value
    result = await hover(client, uri, position_of(VIEWS, "%n: tile<i32>", offset_in_needle=1))
    assert text_at(VIEWS, result.range) == "%n"
    value = result.contents.value
    assert "kernel argument 1" in value and "`entry @k`" in value
    assert "2 uses" in value  # the assume and the second load


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_after_edit_above(client):
    """An edit inside the first kernel moves the second: its hover must follow."""
    uri, _ = await open_document(client, VIEWS)
    where = position_of(VIEWS, "    return", 0)  # inside @first
    inserted = "    %z = addf %y, %y : tile<f32>\n    %w = addf %z, %z : tile<f32>\n"
    await change_document(
        client, uri, 2, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=where, end=where), text=inserted)]
    )
    edited = VIEWS.replace("    return", inserted + "    return", 1)
    result = await hover(client, uri, position_of(edited, "%i1, %i0]", offset_in_needle=1))
    assert text_at(edited, result.range) == "%i1"
    value = result.contents.value
    assert f"line {line_of(edited, '%i1 = constant')}" in value
    assert "%i1 = constant <i32: 1> : tile<i32>" in value  # the definition's text, not a shifted slice
    assert f"lines {line_of(edited, '%t, %tok')}, {line_of(edited, '%u, %tok2')}" in value
    result = await hover(client, uri, position_of(edited, "make_partition_view", offset_in_needle=2))
    assert text_at(edited, result.range) == "make_partition_view"
    # The edited kernel itself.
    result = await hover(client, uri, position_of(edited, "%z, %z", offset_in_needle=1))
    assert text_at(edited, result.range) == "%z"
    assert f"line {line_of(edited, '%z = addf')}" in result.contents.value


BROKEN = [
    "",
    "\x00\x01\x02 garbage }}}} %%% @@@",
    "cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    %b = addi %a,\n",
    "cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    %b = frobnicate %a : tile<i32>\n    return\n  }\n}\n",
    "cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    %b = addi %undef, %a : tile<i32>\n    return\n  }\n}\n",
]


@pytest.mark.asyncio(loop_scope="module")
async def test_broken_text_gets_an_answer(client):
    for text in BROKEN:
        uri, _ = await open_document(client, text)
        lines = text.split("\n")
        positions = [lsp.Position(line=0, character=0), lsp.Position(line=len(lines) + 5, character=80)]
        positions += [
            lsp.Position(line=n, character=c) for n, line in enumerate(lines) for c in range(0, len(line) + 2, 3)
        ]
        for position in positions:
            result = await hover(client, uri, position)
            if result is not None:
                assert result.contents.value
    assert no_failures_logged(client)
    # An unknown op says so.
    text = BROKEN[3]
    uri, _ = await open_document(client, text)
    result = await hover(client, uri, position_of(text, "frobnicate"))
    if result is not None:
        assert "frobnicate" in result.contents.value


# ---------------------------------------------------------------- without a client


def test_plaintext_rendering_has_no_markup():
    doc = Description().text("**a** `b`").code("%x = addi %y, %y : tile<i32>").items(["one"], "List:").rule()
    assert doc.markdown() == "**a** `b`\n\n```tileir\n%x = addi %y, %y : tile<i32>\n```\n\nList:\n\n- one"
    assert "```" not in doc.plaintext() and "%x = addi %y, %y : tile<i32>" in doc.plaintext()


def test_markup_kind_follows_client():
    from tile_lsp.features.hover import markup_kind

    def server(formats):
        hover_caps = lsp.HoverClientCapabilities(content_format=formats)
        caps = lsp.ClientCapabilities(text_document=lsp.TextDocumentClientCapabilities(hover=hover_caps))
        return SimpleNamespace(client_capabilities=caps)

    assert markup_kind(server([lsp.MarkupKind.PlainText, lsp.MarkupKind.Markdown])) == lsp.MarkupKind.PlainText
    assert markup_kind(server([lsp.MarkupKind.Markdown])) == lsp.MarkupKind.Markdown
    assert markup_kind(server(None)) == lsp.MarkupKind.PlainText


def test_byte_sizes():
    assert format_bytes(4) == "4 bytes"
    assert format_bytes(64 * 64 * 2) == "8 KiB (8,192 bytes)"
    assert format_bytes(3 << 20) == "3 MiB (3,145,728 bytes)"
