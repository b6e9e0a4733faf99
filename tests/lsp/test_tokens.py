"""Semantic tokens (full and range) and inlay hints."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types as lsp

from tile_lsp.features.tokens import LEGEND

from .test_completion import DOC
from .util import change_document, open_document, position_of


def _decode(text: str, data: list[int]) -> list[tuple[int, int, str, str, set[str]]]:
    """(line, column, text, type, modifiers) of each token, checking the encoding on the way."""
    lines = text.split("\n")
    out = []
    line = column = 0
    for i in range(0, len(data), 5):
        d_line, d_col, length, kind, bits = data[i : i + 5]
        line += d_line
        column = d_col if d_line else column + d_col
        assert length > 0 and column + length <= len(lines[line]), "a token leaves its line"
        modifiers = {m for b, m in enumerate(LEGEND.token_modifiers) if bits >> b & 1}
        out.append((line, column, lines[line][column : column + length], LEGEND.token_types[kind], modifiers))
    for a, b in zip(out, out[1:]):  # sorted, not overlapping
        assert (a[0], a[1] + len(a[2])) <= (b[0], b[1]) or a[0] < b[0]
    return out


async def _tokens(client, uri: str) -> list[int]:
    result = await client.text_document_semantic_tokens_full_async(
        lsp.SemanticTokensParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    return list(result.data) if result is not None else []


def _kind_of(tokens, line_text_needle: str, word: str, text: str):
    line = position_of(text, line_text_needle).line
    found = [t for t in tokens if t[0] == line and t[2] == word]
    assert found, (line_text_needle, word)
    return found[0][3], found[0][4]


@pytest.mark.asyncio(loop_scope="module")
async def test_semantic_tokens_full(client):
    uri, _ = await open_document(client, DOC)
    tokens = _decode(DOC, await _tokens(client, uri))
    expect = [
        ("// A small", "// A small kernel for editor tests.", "comment", set()),
        ("%tv = make_tensor_view", "%tv", "variable", {"definition"}),
        ("%tv = make_tensor_view", "make_tensor_view", "function", set()),
        ("%tv = make_tensor_view", "%base", "parameter", set()),
        ("%tv = make_tensor_view", "128", "number", set()),
        ("%tv = make_tensor_view", "f32", "type", set()),
        ("%pv = make_partition_view", "%tv", "variable", set()),
        ("%cmp = cmpi", "less_than", "enumMember", set()),
        ("%cmp = cmpi", "signed", "enumMember", set()),
        ("entry @k", "@k", "function", {"definition"}),
        ("entry @k", "entry", "keyword", set()),
        ("%gp = get_global", "@g", "variable", set()),
        ("global @g", "@g", "variable", {"definition"}),
        ("    return", "return", "keyword", set()),
    ]
    for needle, word, kind, modifiers in expect:
        assert _kind_of(tokens, needle, word, DOC) == (kind, modifiers), (needle, word)
    # `tile<2xf32>`: the extent is a number, the element type a type.
    assert _kind_of(tokens, "global @g", "2", DOC)[0] == "number"


@pytest.mark.asyncio(loop_scope="module")
async def test_semantic_tokens_range_and_after_edit(client):
    uri, _ = await open_document(client, DOC)
    await change_document(
        client,
        uri,
        2,
        [
            lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=position_of(DOC, "    return"), end=position_of(DOC, "    return")),
                text='    %z = addi %y, %y : tile<i32>\n    // "note"\n',
            )
        ],
    )
    text = DOC.replace("    return", '    %z = addi %y, %y : tile<i32>\n    // "note"\n    return', 1)
    full = _decode(text, await _tokens(client, uri))
    assert _kind_of(full, "%cmp = cmpi", "cmpi", text) == ("function", set())
    assert _kind_of(full, "%cmp = cmpi", "%cmp", text) == ("variable", {"definition"})
    assert _kind_of(full, '// "note"', '// "note"', text) == ("comment", set())
    line = position_of(text, "%pv = make_partition_view").line
    result = await client.text_document_semantic_tokens_range_async(
        lsp.SemanticTokensRangeParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(line=line, character=0), end=lsp.Position(line=line + 1, character=0)),
        )
    )
    ranged = _decode(text, list(result.data))
    assert ranged and {t[0] for t in ranged} == {line}
    assert ranged == [t for t in full if t[0] == line]


def _apply(data: list[int], edits: list[lsp.SemanticTokensEdit]) -> list[int]:
    """A client's application of a delta: each edit on the previous array (in order, as the
    protocol says, the later ones not before the earlier)."""
    out = list(data)
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        out[edit.start : edit.start + edit.delete_count] = list(edit.data or [])
    return out


@pytest.mark.asyncio(loop_scope="module")
async def test_semantic_tokens_delta_after_edits(client):
    caps = client.initialize_result.capabilities.semantic_tokens_provider
    assert caps.full == lsp.SemanticTokensFullDelta(delta=True)
    text = DOC + "\n".join(DOC.split("\n")[1:]).replace("@k", "@k2").replace("@m", "@m2")  # two kernels
    uri, _ = await open_document(client, text)
    ident = lsp.TextDocumentIdentifier(uri=uri)
    first = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=ident))
    assert first.result_id
    data, result_id, version = list(first.data), first.result_id, 1
    edits_seen = []
    for needle, new_text in (("%cmp = cmpi", "%c2 = addi %y, %y : tile<i32>\n    "), ("    return", "// note\n")):
        at = position_of(text, needle, occurrence=1)
        version += 1
        await change_document(client, uri, version, [lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=at, end=at), text=new_text)])  # fmt: skip
        offset = len("\n".join(text.split("\n")[: at.line])) + (1 if at.line else 0) + at.character
        text = text[:offset] + new_text + text[offset:]
        delta = await client.text_document_semantic_tokens_full_delta_async(
            lsp.SemanticTokensDeltaParams(text_document=ident, previous_result_id=result_id)
        )
        assert isinstance(delta, lsp.SemanticTokensDelta) and delta.result_id != result_id
        data, result_id = _apply(data, delta.edits), delta.result_id
        edits_seen.append(delta.edits)
        _decode(text, data)
        # The delta gives what a whole request gives (which then is the one the next delta
        # names: the server keeps its last answer per document).
        fresh = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=ident))
        assert data == list(fresh.data)
        result_id = fresh.result_id
    # Each edit touched one kernel of two: the delta is a small part of the whole.
    assert all(len(e) == 1 and len(e[0].data) < len(data) // 2 for e in edits_seen)
    # An id the server no longer knows (or never gave): the whole document again.
    again = await client.text_document_semantic_tokens_full_delta_async(
        lsp.SemanticTokensDeltaParams(text_document=ident, previous_result_id="no-such-id")
    )
    assert isinstance(again, lsp.SemanticTokens) and list(again.data) == data


def test_delta_edits_is_the_difference() -> None:
    from tile_lsp.features.tokens import delta_edits

    old = list(range(10_000))
    for new in (old[:5000] + [7, 7] + old[5003:], old + [1], [1] + old, old[:10], [], old[::-1]):
        assert _apply(old, delta_edits(old, new)) == new
    assert delta_edits(old, list(old)) == []
    (edit,) = delta_edits(old, old[:5000] + [7, 7] + old[5003:])
    assert (edit.start, edit.delete_count, edit.data) == (5000, 3, [7, 7])


@pytest.mark.asyncio(loop_scope="module")
async def test_semantic_tokens_on_garbage(client):
    for text in ("", '\x00\x01 }}} %% @@ <<< "open', "cuda_tile.module @m {\n  entry @k( {\n    %x = \n"):
        uri, _ = await open_document(client, text)
        _decode(text, await _tokens(client, uri))


async def _hints(client, uri: str, text: str) -> list[lsp.InlayHint]:
    end = lsp.Position(line=text.count("\n") + 5, character=0)
    result = await client.text_document_inlay_hint_async(
        lsp.InlayHintParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(line=0, character=0), end=end),
        )
    )
    return list(result or [])


@pytest.mark.asyncio(loop_scope="module")
async def test_inlay_hint_index_space(client):
    uri, _ = await open_document(client, DOC)
    hints = await _hints(client, uri, DOC)
    # 128x64 elements in 8x8 tiles: ceil(128/8) x ceil(64/8) = 16 x 8 tiles.
    line_text = next(t for t in DOC.split("\n") if "make_partition_view" in t)
    where = position_of(DOC, line_text, offset_in_needle=len(line_text))
    assert [(h.position, h.label) for h in hints] == [(where, ": 16x8 tiles")]
    # Lines added above the kernel move the hint with it.
    added = "    %z = addi %y, %y : tile<i32>\n" * 2
    at = position_of(DOC, "    return")
    await change_document(
        client, uri, 2, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text=added)]
    )
    text = DOC.replace("    return", added + "    return", 1)
    hints = await _hints(client, uri, text)
    assert [(h.position, h.label) for h in hints] == [
        (position_of(text, line_text, offset_in_needle=len(line_text)), ": 16x8 tiles")
    ]
    # A range that leaves the op out has no hint.
    result = await client.text_document_inlay_hint_async(
        lsp.InlayHintParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=3, character=0)),
        )
    )
    assert list(result or []) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_inlay_hints_setting_and_garbage(client):
    for text in ("", "\x00\x01 }}} %% @@", "cuda_tile.module @m {\n  entry @k( {\n    %x = make_partition_view \n"):
        uri, _ = await open_document(client, text)
        await _hints(client, uri, text)
    uri, _ = await open_document(client, DOC)
    # A settings change makes the server ask the client to refresh what it shows between
    # edits, where the client says it can be asked.
    refreshes = {"inlay": 0, "tokens": 0}

    @client.feature(lsp.WORKSPACE_INLAY_HINT_REFRESH)
    def _inlay_refresh(params: None) -> None:
        refreshes["inlay"] += 1

    @client.feature(lsp.WORKSPACE_SEMANTIC_TOKENS_REFRESH)
    def _tokens_refresh(params: None) -> None:
        refreshes["tokens"] += 1

    client.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(
            settings={"tileir": {"inlayHints": {"enabled": False}, "diagnostics": {"debounceMs": 0}}}
        )
    )
    workspace = client.capabilities.workspace
    want = {
        "inlay": bool(workspace.inlay_hint and workspace.inlay_hint.refresh_support),
        "tokens": bool(workspace.semantic_tokens and workspace.semantic_tokens.refresh_support),
    }
    try:
        for _ in range(50):  # the notification is handled before the request that follows it
            if await _hints(client, uri, DOC) == []:
                break
        assert await _hints(client, uri, DOC) == []
        for _ in range(100):
            if all(refreshes[k] > 0 for k in want if want[k]):
                break
            await asyncio.sleep(0.02)
        assert {k: n > 0 for k, n in refreshes.items()} == want, (refreshes, want)
    finally:
        client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(
                settings={"tileir": {"inlayHints": {"enabled": True}, "diagnostics": {"debounceMs": 0}}}
            )
        )
    assert len(await _hints(client, uri, DOC)) == 1
