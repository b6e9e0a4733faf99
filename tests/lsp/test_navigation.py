"""Navigation: definition, references, highlight, rename, document/workspace symbols, folding
and selection ranges, end to end. Expectations are written by hand from the documents below
(the text at each returned range, line numbers counted in the source)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from .util import change_document, open_document, position_of

ROOT = Path(__file__).resolve().parents[2]

KERNELS = """// Two kernels and a global.
// The second kernel uses the global.
cuda_tile.module @kernels {
  global @table <i32: [1, 2, 3, 4]> : tile<4xi32>
  entry @first(%a: tile<i32>) {
    %b = addi %a, %a : tile<i32>
    return
  }
  entry @second(%x: tile<i32>, %y: tile<i32>) {
    %p = get_global @table : tile<ptr<i32>>
    %s = addi %x, %y : tile<i32>
    %r = for %i in (%x to %y, step %s) : tile<i32> iter_values(%acc = %s) -> (tile<i32>) {
      %n = addi %acc, %i : tile<i32>
      continue %n : tile<i32>
    }
    %q:3 = get_tile_block_id : tile<i32>
    %t = addi %q#1, %r : tile<i32>
    return
  }
}
"""

# A module and its entry share a name: each keeps its own references.
SAME_NAME = """cuda_tile.module @k {
  entry @k(%a: tile<i32>) {
    return
  }
}
"""


def text_at(text: str, rng: lsp.Range) -> str:
    """The text a range covers (the documents here are ASCII, so characters are code units)."""
    lines = text.split("\n")

    def offset(position: lsp.Position) -> int:
        return sum(len(line) + 1 for line in lines[: position.line]) + position.character

    return text[offset(rng.start) : offset(rng.end)]


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = text_at(text, lsp.Range(start=lsp.Position(line=0, character=0), end=edit.range.start))
        end = len(start) + len(text_at(text, edit.range))
        text = start + edit.new_text + text[end:]
    return text


def document_edits(client, edit: lsp.WorkspaceEdit, uri: str) -> list[lsp.TextEdit]:
    """The edits of `uri`, in the form the client asked for (documentChanges or changes)."""
    caps = client.capabilities.workspace
    if caps is not None and caps.workspace_edit is not None and caps.workspace_edit.document_changes:
        assert edit.changes is None and edit.document_changes is not None
        (change,) = edit.document_changes
        assert change.text_document.uri == uri
        return list(change.edits)
    assert edit.document_changes is None and edit.changes is not None
    return list(edit.changes[uri])


def at(uri: str, position: lsp.Position) -> dict:
    return {"text_document": lsp.TextDocumentIdentifier(uri=uri), "position": position}


async def definition(client, uri: str, position: lsp.Position) -> list[lsp.Range]:
    result = await client.text_document_definition_async(lsp.DefinitionParams(**at(uri, position)))
    if result is None:
        return []
    items = result if isinstance(result, list) else [result]
    ranges = []
    for item in items:
        if isinstance(item, lsp.LocationLink):
            assert item.target_uri == uri
            # The selection (the name) lies inside the whole target.
            assert item.target_range.start <= item.target_selection_range.start
            assert item.target_selection_range.end <= item.target_range.end
            ranges.append(item.target_selection_range)
        else:
            assert item.uri == uri
            ranges.append(item.range)
    return ranges


# ---------------------------------------------------------------------------------- definition


@pytest.mark.asyncio(loop_scope="module")
async def test_definition_of_values_block_arguments_and_symbols(client):
    uri, diagnostics = await open_document(client, KERNELS)
    assert diagnostics == []
    # A use of an op result -> its definition.
    (target,) = await definition(client, uri, position_of(KERNELS, "addi %x, %y", offset_in_needle=10))
    assert text_at(KERNELS, target) == "%y" and target.start == position_of(KERNELS, "%y: tile")
    # A loop-carried block argument.
    (target,) = await definition(client, uri, position_of(KERNELS, "addi %acc", offset_in_needle=7))
    assert target.start == position_of(KERNELS, "%acc = %s")
    # A member of a result group: `%q#1` -> `%q:3`.
    (target,) = await definition(client, uri, position_of(KERNELS, "%q#1", offset_in_needle=1))
    assert target.start.line == 15 and text_at(KERNELS, target) == "%q:3"
    # A symbol reference -> the global defining it.
    (target,) = await definition(client, uri, position_of(KERNELS, "@table :", offset_in_needle=3))
    assert target.start.line == 3 and text_at(KERNELS, target) == "@table"
    # Op names, types and whitespace lead nowhere.
    for needle in ("get_global", "tile<ptr", "    return"):
        assert await definition(client, uri, position_of(KERNELS, needle, offset_in_needle=1)) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_definition_link_spans_the_defining_op(client):
    uri, _ = await open_document(client, KERNELS)
    result = await client.text_document_definition_async(
        lsp.DefinitionParams(**at(uri, position_of(KERNELS, "%s)", offset_in_needle=1)))
    )
    (item,) = result
    if isinstance(item, lsp.LocationLink):  # both test clients support links
        assert text_at(KERNELS, item.target_range) == "%s = addi %x, %y : tile<i32>"
        assert text_at(KERNELS, item.origin_selection_range) == "%s"


# ---------------------------------------------------------------------------------- references, highlight


@pytest.mark.asyncio(loop_scope="module")
async def test_references_honour_include_declaration(client):
    uri, _ = await open_document(client, KERNELS)
    where = position_of(KERNELS, "%s = addi", offset_in_needle=1)
    expected = [
        position_of(KERNELS, "%s = addi"),
        position_of(KERNELS, "%s) :"),
        position_of(KERNELS, "%s) ->"),
    ]
    for include in (True, False):
        found = await client.text_document_references_async(
            lsp.ReferenceParams(**at(uri, where), context=lsp.ReferenceContext(include_declaration=include))
        )
        assert [loc.range.start for loc in found] == (expected if include else expected[1:])
        assert all(text_at(KERNELS, loc.range) == "%s" for loc in found)
    found = await client.text_document_references_async(
        lsp.ReferenceParams(
            **at(uri, position_of(KERNELS, "@table <", offset_in_needle=2)),
            context=lsp.ReferenceContext(include_declaration=True),
        )
    )
    assert [loc.range.start.line for loc in found] == [3, 9]


@pytest.mark.asyncio(loop_scope="module")
async def test_document_highlight_reads_and_writes(client):
    uri, _ = await open_document(client, KERNELS)
    found = await client.text_document_document_highlight_async(
        lsp.DocumentHighlightParams(**at(uri, position_of(KERNELS, "%n :", offset_in_needle=1)))
    )
    assert [(h.range.start.line, h.kind) for h in found] == [
        (12, lsp.DocumentHighlightKind.Write),
        (13, lsp.DocumentHighlightKind.Read),
    ]
    assert all(text_at(KERNELS, h.range) == "%n" for h in found)


@pytest.mark.asyncio(loop_scope="module")
async def test_same_name_symbols_stay_apart(client):
    uri, _ = await open_document(client, SAME_NAME)
    found = await client.text_document_references_async(
        lsp.ReferenceParams(
            **at(uri, position_of(SAME_NAME, "@k(", offset_in_needle=1)),
            context=lsp.ReferenceContext(include_declaration=True),
        )
    )
    assert [loc.range.start for loc in found] == [position_of(SAME_NAME, "@k(")]
    edit = await client.text_document_rename_async(
        lsp.RenameParams(**at(uri, position_of(SAME_NAME, "@k(", offset_in_needle=1)), new_name="kernel")
    )
    assert apply_edits(SAME_NAME, document_edits(client, edit, uri)) == SAME_NAME.replace("@k(", "@kernel(")


# ---------------------------------------------------------------------------------- rename


@pytest.mark.asyncio(loop_scope="module")
async def test_prepare_rename_gives_the_bare_name(client):
    uri, _ = await open_document(client, KERNELS)
    result = await client.text_document_prepare_rename_async(
        lsp.PrepareRenameParams(**at(uri, position_of(KERNELS, "%q#1", offset_in_needle=2)))
    )
    assert isinstance(result, lsp.PrepareRenamePlaceholder)
    assert result.placeholder == "q" and text_at(KERNELS, result.range) == "q"
    result = await client.text_document_prepare_rename_async(
        lsp.PrepareRenameParams(**at(uri, position_of(KERNELS, "@table :", offset_in_needle=1)))
    )
    assert result.placeholder == "table" and text_at(KERNELS, result.range) == "table"
    with pytest.raises(JsonRpcException, match="op name"):
        await client.text_document_prepare_rename_async(
            lsp.PrepareRenameParams(**at(uri, position_of(KERNELS, "get_global", offset_in_needle=2)))
        )


@pytest.mark.asyncio(loop_scope="module")
async def test_rename_value_group_and_block_argument(client):
    uri, _ = await open_document(client, KERNELS)
    edit = await client.text_document_rename_async(
        lsp.RenameParams(**at(uri, position_of(KERNELS, "%q#1", offset_in_needle=1)), new_name="%ids")
    )
    renamed = apply_edits(KERNELS, document_edits(client, edit, uri))
    assert renamed == KERNELS.replace("%q:3", "%ids:3").replace("%q#1", "%ids#1")
    edit = await client.text_document_rename_async(
        lsp.RenameParams(**at(uri, position_of(KERNELS, "%acc =", offset_in_needle=2)), new_name="sum.1")
    )
    renamed = apply_edits(KERNELS, document_edits(client, edit, uri))
    assert renamed == KERNELS.replace("%acc", "%sum.1")


@pytest.mark.asyncio(loop_scope="module")
async def test_rename_symbol_everywhere(client):
    uri, _ = await open_document(client, KERNELS)
    edit = await client.text_document_rename_async(
        lsp.RenameParams(**at(uri, position_of(KERNELS, "@table :", offset_in_needle=4)), new_name="lut")
    )
    assert apply_edits(KERNELS, document_edits(client, edit, uri)) == KERNELS.replace("@table", "@lut")


@pytest.mark.asyncio(loop_scope="module")
async def test_rename_refusals(client):
    uri, _ = await open_document(client, KERNELS)
    value = position_of(KERNELS, "%s = addi", offset_in_needle=1)
    cases = [
        (value, "two words", "not a valid name"),
        (value, "%x#1", "not a valid name"),
        (value, "", "not a valid name"),
        (value, "%y", "already defined"),  # a block argument of the same kernel
        (value, "acc", "already defined"),  # defined in a nested region of the same kernel
        (position_of(KERNELS, "@first"), "second", "already defined"),
        (position_of(KERNELS, "addi %x", offset_in_needle=1), "plus", "op name"),
        (position_of(KERNELS, "tile<ptr", offset_in_needle=6), "q", "types"),
        (position_of(KERNELS, "  return"), "z", "nothing to rename"),
    ]
    for position, new_name, message in cases:
        with pytest.raises(JsonRpcException, match=message):
            await client.text_document_rename_async(lsp.RenameParams(**at(uri, position), new_name=new_name))
    # A name used only in the other kernel is free here.
    edit = await client.text_document_rename_async(lsp.RenameParams(**at(uri, value), new_name="b"))
    assert apply_edits(KERNELS, document_edits(client, edit, uri)).count("%b") == 1 + 3


# ---------------------------------------------------------------------------------- symbols


@pytest.mark.asyncio(loop_scope="module")
async def test_document_symbols(client):
    uri, _ = await open_document(client, KERNELS)
    symbols = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    (module,) = symbols  # both test clients ask for the hierarchy
    assert isinstance(module, lsp.DocumentSymbol)
    assert (module.name, module.kind) == ("kernels", lsp.SymbolKind.Module)
    assert (module.range.start.line, module.range.end.line) == (2, 19)
    assert [(s.name, s.kind) for s in module.children] == [
        ("table", lsp.SymbolKind.Variable),
        ("first", lsp.SymbolKind.Function),
        ("second", lsp.SymbolKind.Function),
    ]
    table, first, second = module.children
    assert text_at(KERNELS, table.selection_range) == "@table"
    assert table.detail == "tile<4xi32>"
    assert second.detail == "(%x: tile<i32>, %y: tile<i32>)"
    assert text_at(KERNELS, second.selection_range) == "@second"
    assert (second.range.start.line, second.range.end.line) == (8, 18)
    assert text_at(KERNELS, first.range).startswith("entry @first(") and text_at(KERNELS, first.range).endswith("}")


@pytest.mark.asyncio(loop_scope="module")
async def test_workspace_symbols_match_subsequences(client):
    uris = []
    for path in sorted((ROOT / "examples").glob("*.tileir")):
        uri, _ = await open_document(client, path.read_text())
        uris.append(uri)
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="MtMl"))
    matmul = [s for s in found if s.location.uri in uris]
    # The module and its entry are both `@matmul`; nothing else has m..t..m..l in order.
    assert sorted((s.name, s.kind) for s in matmul) == [
        ("matmul", lsp.SymbolKind.Module),
        ("matmul", lsp.SymbolKind.Function),
    ]
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="vctadd"))
    assert {s.name for s in found if s.location.uri in uris} == {"vector_add"}
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="zzz"))
    assert [s for s in found if s.location.uri in uris] == []


# ---------------------------------------------------------------------------------- folding, selection


@pytest.mark.asyncio(loop_scope="module")
async def test_folding_ranges(client):
    uri, _ = await open_document(client, KERNELS)
    found = await client.text_document_folding_range_async(
        lsp.FoldingRangeParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    got = sorted((f.start_line, f.end_line, f.kind) for f in found)
    # The comment block, the module, each kernel's body (closing brace left visible), the loop.
    assert got == [
        (0, 1, lsp.FoldingRangeKind.Comment),
        (2, 18, None),
        (4, 6, None),
        (8, 17, None),
        (11, 13, None),
    ]
    caps = client.capabilities.text_document.folding_range
    if caps is not None and caps.line_folding_only:
        assert all(f.start_character is None and f.end_character is None for f in found)


@pytest.mark.asyncio(loop_scope="module")
async def test_comment_folds_follow_edits_inside_a_kernel(client):
    """A run of comments typed inside a kernel (re-analysed on its own) folds; one deleted
    no longer does; the folds are those of the same text opened afresh."""
    uri, _ = await open_document(client, KERNELS)
    ident = lsp.TextDocumentIdentifier(uri=uri)
    where = position_of(KERNELS, "    return")
    block = "    // first\n    // second\n    // third\n"
    await change_document(
        client, uri, 2, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=where, end=where), text=block)]
    )
    text = KERNELS.replace("    return", block + "    return", 1)
    found = await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=ident))
    comment_folds = {(f.start_line, f.end_line) for f in found if f.kind == lsp.FoldingRangeKind.Comment}
    assert (where.line, where.line + 2) in comment_folds
    fresh_uri, _ = await open_document(client, text)
    fresh = await client.text_document_folding_range_async(
        lsp.FoldingRangeParams(text_document=lsp.TextDocumentIdentifier(uri=fresh_uri))
    )
    assert sorted(found, key=repr) == sorted(fresh, key=repr)
    # Take the comments out again: their fold goes.
    end = lsp.Position(line=where.line + 3, character=0)
    await change_document(
        client, uri, 3, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=where, end=end), text="")]
    )
    found = await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=ident))
    assert (where.line, where.line + 2) not in {(f.start_line, f.end_line) for f in found}


@pytest.mark.asyncio(loop_scope="module")
async def test_selection_ranges_grow_to_the_document(client):
    uri, _ = await open_document(client, KERNELS)
    (selection,) = await client.text_document_selection_range_async(
        lsp.SelectionRangeParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            positions=[position_of(KERNELS, "%acc, %i", offset_in_needle=7)],
        )
    )
    texts = []
    while selection is not None:
        texts.append(text_at(KERNELS, selection.range))
        selection = selection.parent
    assert texts[:3] == ["%i", "%acc, %i", "%n = addi %acc, %i : tile<i32>"]
    assert texts[-1] == KERNELS
    assert any(t.startswith("%r = for %i") for t in texts)
    assert any(t.startswith("entry @second(") for t in texts)
    for inner, outer in zip(texts, texts[1:]):  # each strictly inside the next
        assert inner in outer and len(inner) < len(outer)


# ---------------------------------------------------------------------------------- after an edit


@pytest.mark.asyncio(loop_scope="module")
async def test_answers_follow_an_edit_above_the_kernel(client):
    """Lines inserted into the first kernel move the second one down: every answer about the
    second kernel must be in the new text's coordinates."""
    uri, _ = await open_document(client, KERNELS)
    where = position_of(KERNELS, "    return")
    inserted = "    %c = addi %b, %b : tile<i32>\n    %d = addi %c, %c : tile<i32>\n"
    assert (
        await change_document(
            client,
            uri,
            2,
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=where, end=where), text=inserted)],
        )
        == []
    )
    text = KERNELS.replace("    return\n", inserted + "    return\n", 1)

    (target,) = await definition(client, uri, position_of(text, "addi %acc", offset_in_needle=7))
    assert target.start == position_of(text, "%acc = %s")
    found = await client.text_document_references_async(
        lsp.ReferenceParams(
            **at(uri, position_of(text, "%s = addi", offset_in_needle=1)),
            context=lsp.ReferenceContext(include_declaration=True),
        )
    )
    assert [loc.range.start for loc in found] == [
        position_of(text, "%s = addi"),
        position_of(text, "%s) :"),
        position_of(text, "%s) ->"),
    ]
    edit = await client.text_document_rename_async(
        lsp.RenameParams(**at(uri, position_of(text, "%n :", offset_in_needle=1)), new_name="next")
    )
    assert apply_edits(text, document_edits(client, edit, uri)) == text.replace("%n ", "%next ")
    symbols = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    second = symbols[0].children[2]
    assert text_at(text, second.selection_range) == "@second"
    assert (second.range.start.line, second.range.end.line) == (10, 20)
    folding = await client.text_document_folding_range_async(
        lsp.FoldingRangeParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert (13, 15) in {(f.start_line, f.end_line) for f in folding}  # the loop body
    (selection,) = await client.text_document_selection_range_async(
        lsp.SelectionRangeParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), positions=[position_of(text, "%acc, %i", 0, 7)]
        )
    )
    assert text_at(text, selection.range) == "%i" and text_at(text, selection.parent.range) == "%acc, %i"


# ---------------------------------------------------------------------------------- bad input


GARBAGE = [
    "",
    "\x00\x01\x02 binary {{{ garbage ]]] %%% @@@ ^^^",
    "cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    %b = addi %a, %a : tile<i32>\n    %c = addi %b,\n",
    "}}}}\n%x = \n@",
]


@pytest.mark.asyncio(loop_scope="module")
async def test_bad_documents_get_empty_answers(client):
    for text in GARBAGE:
        uri, _ = await open_document(client, text)
        doc = lsp.TextDocumentIdentifier(uri=uri)
        for position in (
            lsp.Position(line=0, character=0),
            lsp.Position(line=2, character=6),
            lsp.Position(line=500, character=3),
        ):
            await client.text_document_definition_async(lsp.DefinitionParams(**at(uri, position)))
            await client.text_document_references_async(
                lsp.ReferenceParams(**at(uri, position), context=lsp.ReferenceContext(include_declaration=True))
            )
            await client.text_document_document_highlight_async(lsp.DocumentHighlightParams(**at(uri, position)))
            try:
                await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(**at(uri, position)))
            except JsonRpcException as refusal:  # on an op name: a refusal the user reads, not a failure
                assert "cannot be renamed" in str(refusal)
            (selection,) = await client.text_document_selection_range_async(
                lsp.SelectionRangeParams(text_document=doc, positions=[position])
            )
            assert selection.range.end.line <= text.count("\n")
        await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc))
        found = await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc))
        assert all(0 <= f.start_line < f.end_line <= text.count("\n") for f in found or [])
    await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=""))
    # In the half-typed kernel, the complete op before the cursor still resolves.
    uri, _ = await open_document(client, GARBAGE[2])
    (target,) = await definition(client, uri, position_of(GARBAGE[2], "%a : tile", offset_in_needle=1))
    assert target.start == position_of(GARBAGE[2], "%a:")
    # No feature failed inside: a failure would have been logged as a bug.
    assert not [m for m in client.log_messages if "failed (a bug)" in m.message]


# ---------------------------------------------------------------------------------- other clients


def test_flat_symbols_and_character_folds_for_simpler_clients():
    """Clients without hierarchical symbols get SymbolInformation with containers; clients
    without `lineFoldingOnly` get the characters a fold runs between."""
    from tile_lsp.documents import Settings, analyze
    from tile_lsp.features.navigation import document_symbol_list, folding_range_list

    analysis = analyze("file:///flat.tileir", KERNELS, 1, Settings())
    flat = document_symbol_list(analysis, hierarchical=False, kinds=None)
    assert [(s.name, s.kind, s.container_name) for s in flat] == [
        ("kernels", lsp.SymbolKind.Module, None),
        ("table", lsp.SymbolKind.Variable, "kernels"),
        ("first", lsp.SymbolKind.Function, "kernels"),
        ("second", lsp.SymbolKind.Function, "kernels"),
    ]
    assert text_at(KERNELS, flat[2].location.range).startswith("entry @first(%a: tile<i32>) {")
    folds = folding_range_list(analysis, lsp.FoldingRangeClientCapabilities(line_folding_only=False))
    loop = next(f for f in folds if f.start_line == 11)
    # From just after the loop's `{` to just before its `}`.
    assert loop.start_character == KERNELS.split("\n")[11].index("{") + 1
    assert loop.end_character == KERNELS.split("\n")[14].index("}")
    limited = folding_range_list(analysis, lsp.FoldingRangeClientCapabilities(line_folding_only=True, range_limit=2))
    assert len(limited) == 2
