"""Completion and signature help: op mnemonics with snippets, types, enum keywords, SSA
values in scope and symbols, on half-typed lines and after edits above the kernel."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from compiler.dialect import OPS

from .util import change_document, open_document, position_of

DOC = """// A small kernel for editor tests.
cuda_tile.module @m {
  global @g <f32: [1.0, 2.0]> : tile<2xf32>
  entry @first(%x: tile<i32>) {
    %y = addi %x, %x : tile<i32>
    return
  }
  entry @k(%base: tile<ptr<f32>>, %n: tile<i32>) {
    %tv = make_tensor_view %base, shape = [128, 64], strides = [64, 1] : tensor_view<128x64xf32, strides=[64,1]>
    %pv = make_partition_view %tv : partition_view<tile=(8x8), tensor_view<128x64xf32, strides=[64,1]>>
    %c1 = constant <i32: 1> : tile<i32>
    %s = addi %n, %c1 : tile<i32>
    %cmp = cmpi less_than %n, %s, signed : tile<i32> -> tile<i1>
    %gp = get_global @g : tile<ptr<f32>>
    return
  }
}
"""

# Facts written down from the spec / the dialect's documentation, not from the server's code.
COMPARISON_PREDICATES = {
    "equal",
    "not_equal",
    "less_than",
    "less_than_or_equal",
    "greater_than",
    "greater_than_or_equal",
}
SIGNEDNESS = {"signed", "unsigned"}
MEMORY_ORDERINGS = {"weak", "relaxed", "acquire", "release", "acq_rel"}
IN_SCOPE_AFTER_S = {"%base", "%n", "%tv", "%pv", "%c1", "%s"}


async def _complete(client, uri: str, position: lsp.Position) -> list[lsp.CompletionItem]:
    result = await client.text_document_completion_async(
        lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=position)
    )
    if result is None:
        return []
    return result.items if isinstance(result, lsp.CompletionList) else list(result)


def _with_line(after: str, line: str) -> tuple[str, lsp.Position]:
    """DOC with `line` inserted after the line containing `after`; the cursor at its end."""
    at = DOC.index("\n", DOC.index(after)) + 1
    text = DOC[:at] + line + "\n" + DOC[at:]
    return text, position_of(text, line, offset_in_needle=len(line))


async def _items_for(client, after: str, line: str) -> list[lsp.CompletionItem]:
    text, where = _with_line(after, line)
    uri, _ = await open_document(client, text)
    return await _complete(client, uri, where)


@pytest.mark.asyncio(loop_scope="module")
async def test_op_mnemonics_with_snippets_and_versions(client):
    items = await _items_for(client, "%s = addi", "    %x = ")
    labels = {i.label for i in items}
    expected = {
        op.mnemonic for op in OPS.values() if op.group != "testing" and op.mnemonic not in ("module", "entry", "global")
    }
    assert labels == expected
    by_label = {i.label: i for i in items}
    addf = by_label["addf"]
    assert addf.insert_text_format == lsp.InsertTextFormat.Snippet  # both clients support snippets
    assert addf.text_edit.new_text.startswith("addf ${1:%lhs}, ${2:%rhs}")
    assert "13.1" in addf.detail
    assert "13.2" in by_label["atan2"].detail and "13.3" in by_label["pack"].detail
    doc = addf.documentation
    assert isinstance(doc, lsp.MarkupContent) and OPS["cuda_tile.addf"].summary in doc.value
    cmpi = by_label["cmpi"].text_edit.new_text
    assert "equal,not_equal,less_than" in cmpi and "unsigned,signed" in cmpi  # choices from the enums
    # Only the words being typed are replaced.
    text, where = _with_line("%s = addi", "    %x = ad")
    uri, _ = await open_document(client, text)
    edit = next(i for i in await _complete(client, uri, where) if i.label == "addf").text_edit
    assert edit.range.end == where and edit.range.start.character == where.character - 2


@pytest.mark.asyncio(loop_scope="module")
async def test_module_level_ops(client):
    items = await _items_for(client, "global @g", "  ")
    assert {i.label for i in items} == {"entry", "global"}


@pytest.mark.asyncio(loop_scope="module")
async def test_types_after_colon_and_inside_tile(client):
    items = await _items_for(client, "%s = addi", "    %x = addi %n, %s : ")
    labels = {i.label for i in items}
    assert {"f32", "bf16", "i32", "tile<", "ptr<", "tensor_view<", "partition_view<", "token"} <= labels
    # Shown in sortText order: where a whole type goes, `tile<` first, bare element types last.
    shown = [i.label for i in sorted(items, key=lambda i: i.sort_text or i.label)]
    assert shown[0] == "tile<" and shown.index("partition_view<") < shown.index("f32") and shown[-1] != "tile<"
    assert all(shown.index(t) > shown.index("token") for t in ("f32", "i1", "bf16"))
    items = await _items_for(client, "%s = addi", "    %x = addi %n, %s : tile<4x8x")
    labels = {i.label for i in items}
    assert {"f32", "bf16", "i32", "f16", "ptr<"} <= labels and "partition_view<" not in labels
    shown = [i.label for i in sorted(items, key=lambda i: i.sort_text or i.label)]
    assert shown[-1] == "ptr<"  # inside `tile<`, the element types come first


@pytest.mark.asyncio(loop_scope="module")
async def test_enum_keywords_where_the_format_takes_them(client):
    labels = {i.label for i in await _items_for(client, "%s = addi", "    %x = cmpi ")}
    assert labels == COMPARISON_PREDICATES
    labels = {i.label for i in await _items_for(client, "%s = addi", "    %x = cmpi less_than %n, %s, ")}
    assert labels == SIGNEDNESS
    labels = {i.label for i in await _items_for(client, "%s = addi", "    %t, %tok = load_view_tko ")}
    assert labels == MEMORY_ORDERINGS
    labels = {i.label for i in await _items_for(client, "%s = addi", "    %x = addi %n, %s overflow<")}
    assert labels == {"none", "no_signed_wrap", "no_unsigned_wrap", "no_wrap"}


@pytest.mark.asyncio(loop_scope="module")
async def test_values_in_scope_with_types(client):
    items = await _items_for(client, "%s = addi", "    %x = addi %")
    assert {i.label for i in items} == IN_SCOPE_AFTER_S  # not %cmp / %gp (later), not %x/%y (other entry)
    assert {i.label: i.detail for i in items}["%n"] == "tile<i32>"
    assert {i.label: i.detail for i in items}["%tv"] == "tensor_view<128x64xf32, strides=[64,1]>"


@pytest.mark.asyncio(loop_scope="module")
async def test_symbols(client):
    labels = {i.label for i in await _items_for(client, "%s = addi", "    %h = get_global @")}
    assert labels == {"@g"}
    labels = {i.label for i in await _items_for(client, "%s = addi", "    %h = foo @")}
    assert {"@g", "@k", "@first"} <= labels


@pytest.mark.asyncio(loop_scope="module")
async def test_after_edit_above_the_kernel(client):
    uri, _ = await open_document(client, DOC)
    # Grow the first kernel by three lines: everything of @k moves down.
    at = position_of(DOC, "    return")
    await change_document(
        client,
        uri,
        2,
        [
            lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=at, end=at), text="    %z = addi %y, %y : tile<i32>\n" * 3
            )
        ],
    )
    text = DOC.replace("    return", "    %z = addi %y, %y : tile<i32>\n" * 3 + "    return", 1)
    line = "    %w = addi %"
    anchor = text.index("\n", text.index("%s = addi")) + 1
    await change_document(
        client,
        uri,
        3,
        [
            lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=position_of(text, "    %cmp"), end=position_of(text, "    %cmp")),
                text=line + "\n",
            )
        ],
    )
    text = text[:anchor] + line + "\n" + text[anchor:]
    where = position_of(text, line, offset_in_needle=len(line))
    items = await _complete(client, uri, where)
    assert {i.label for i in items} == IN_SCOPE_AFTER_S
    help_ = await client.text_document_signature_help_async(
        lsp.SignatureHelpParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=where)
    )
    assert help_ is not None and help_.active_parameter == 0  # typing the first operand


@pytest.mark.asyncio(loop_scope="module")
async def test_signature_help_active_operand(client):
    for line, active in (
        ("    %x = cmpi less_than ", 0),
        ("    %x = cmpi less_than %n, ", 1),
        ("    %x = fma %n, %s, %", 2),
    ):
        text, where = _with_line("%s = addi", line)
        uri, _ = await open_document(client, text)
        help_ = await client.text_document_signature_help_async(
            lsp.SignatureHelpParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=where)
        )
        assert help_ is not None, line
        signature = help_.signatures[0]
        mnemonic = line.split("= ")[1].split()[0]
        assert signature.label.startswith(mnemonic)
        assert help_.active_parameter == active, line
        names = ["%lhs", "%rhs"] if mnemonic == "cmpi" else ["%lhs", "%rhs", "%acc"]
        for parameter, name in zip(signature.parameters, names):
            label = parameter.label
            written = signature.label[label[0] : label[1]] if isinstance(label, tuple) else label
            assert written.startswith(name)
    # Past the operands (in the types) there is no signature.
    text, where = _with_line("%s = addi", "    %x = addi %n, %s : tile")
    uri, _ = await open_document(client, text)
    assert (
        await client.text_document_signature_help_async(
            lsp.SignatureHelpParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=where)
        )
        is None
    )


@pytest.mark.asyncio(loop_scope="module")
async def test_garbage_empty_and_past_the_end(client):
    for text in ("", "\x00\x01 }}} %% @@ <<<", "cuda_tile.module @m {\n  entry @k( {\n    %x = \n", DOC):
        uri, _ = await open_document(client, text)
        for position in (
            lsp.Position(line=0, character=0),
            lsp.Position(line=999, character=5),
            lsp.Position(line=2, character=400),
        ):
            await _complete(client, uri, position)  # answers (possibly nothing), never fails
            await client.text_document_signature_help_async(
                lsp.SignatureHelpParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=position)
            )
    # Inside a comment nothing is offered.
    uri, _ = await open_document(client, DOC)
    assert list(await _complete(client, uri, position_of(DOC, "small kernel"))) == []


def test_plain_text_for_clients_without_snippets():
    from tile_lsp.documents import Settings, analyze
    from tile_lsp.features.completion import completion_items

    text, where = _with_line("%s = addi", "    %x = ")
    analysis = analyze("file:///plain.tileir", text, 1, Settings())
    capabilities = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            completion=lsp.CompletionClientCapabilities(
                completion_item=lsp.ClientCompletionItemOptions(
                    snippet_support=False, documentation_format=[lsp.MarkupKind.PlainText]
                )
            )
        )
    )
    items = completion_items(analysis, analysis.offset(where), capabilities)
    addf = next(i for i in items if i.label == "addf")
    assert addf.insert_text_format == lsp.InsertTextFormat.PlainText
    assert addf.text_edit.new_text == "addf"
    assert isinstance(addf.documentation, str)
