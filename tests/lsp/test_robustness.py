"""Any document gets answers: binary garbage, a half-typed op, 50,000 lines; random edit
sequences on real files never crash the server or publish a range outside the document."""

from __future__ import annotations

import asyncio
import os
import random
import re
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.conformance.harness import shared_dir

from .test_actions import apply_workspace_edit
from .util import change_document, close_document, open_document, position_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.tileir"))


def _fuzz_files() -> list[Path]:
    files = list(EXAMPLES)
    shared = shared_dir()
    if shared is not None:  # a few of NVIDIA's conformance files too, when they are beside us
        dialect = shared / "conformance" / "cuda-tile" / "test" / "Dialect" / "CudaTile"
        files += sorted(dialect.glob("*.mlir"))[::6]
    return files


def _utf16_length(line: str) -> int:
    return len(line.encode("utf-16-le")) // 2


def _assert_inside(text: str, rng: lsp.Range, what: str) -> None:
    lines = text.split("\n")
    for pos in (rng.start, rng.end):
        assert 0 <= pos.line < len(lines), f"{what}: line {pos.line} outside the document ({len(lines)} lines)"
        assert 0 <= pos.character <= _utf16_length(lines[pos.line]), f"{what}: column outside line {pos.line}"
    assert (rng.start.line, rng.start.character) <= (rng.end.line, rng.end.character), what


def _failures(client) -> list[str]:
    return [m.message for m in client.log_messages if "failed (a bug)" in m.message]


async def _ask_everything(client, uri: str, position: lsp.Position, whole_document: bool = True) -> None:
    """Every request the server declares, at one position: each must answer (no error).
    `whole_document` False leaves out the requests about the whole text (formatting, all
    semantic tokens), which on 50,000 lines take seconds each."""
    ident = lsp.TextDocumentIdentifier(uri=uri)
    await client.text_document_hover_async(lsp.HoverParams(text_document=ident, position=position))
    await client.text_document_completion_async(lsp.CompletionParams(text_document=ident, position=position))
    await client.text_document_definition_async(lsp.DefinitionParams(text_document=ident, position=position))
    await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=ident))
    await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=ident))
    if whole_document:
        await client.text_document_formatting_async(
            lsp.DocumentFormattingParams(
                text_document=ident, options=lsp.FormattingOptions(tab_size=2, insert_spaces=True)
            )
        )
        await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=ident))
    await client.text_document_inlay_hint_async(
        lsp.InlayHintParams(text_document=ident, range=lsp.Range(start=lsp.Position(line=0, character=0), end=position))
    )


GARBAGE = bytes(random.Random(7).randrange(256) for _ in range(4000)).decode("latin-1")


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(
    "text",
    [
        GARBAGE,
        "",
        "cuda_tile.module @m {\n  entry @k() {\n    %x = addi %",
        "cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    %x = mmaf %a,\n    return\n  }\n}\n",
        "}}}}{{{{ entry @ ( %%% : tile<<<>>> \u00e9\u4e2d\U0001f600\n" * 20,
    ],
    ids=["binary", "empty", "half-typed", "wrong-arity", "brackets-unicode"],
)
async def test_bad_documents_get_answers(client, text):
    before = len(_failures(client))
    uri, diagnostics = await open_document(client, text)
    for d in diagnostics:
        _assert_inside(text, d.range, "diagnostic")
    lines = text.split("\n")
    for position in (
        lsp.Position(line=0, character=0),
        lsp.Position(line=len(lines) - 1, character=_utf16_length(lines[-1])),
        lsp.Position(line=len(lines) + 10, character=400),  # past the end
    ):
        await _ask_everything(client, uri, position)
    close_document(client, uri)
    assert _failures(client)[before:] == []


@pytest.mark.asyncio(loop_scope="module")
async def test_lone_surrogates_get_diagnostics_and_hovers(client):
    """JSON lets a client send a lone UTF-16 surrogate ("\\ud800"); it counts as one UTF-16
    unit and the document is analysed like any other (issue 18: every feature answered empty)."""
    body = (ROOT / "examples" / "vector_add.tileir").read_text()
    text = body.replace("entry @vector_add", "// \ud800 in a comment\n  entry @vector_add", 1) + "\ud800\udfff %x\n"
    before = len(_failures(client))
    uri, diagnostics = await open_document(client, text)
    assert diagnostics and all(d.severity == lsp.DiagnosticSeverity.Error for d in diagnostics)
    last = text.split("\n")[-2]
    assert diagnostics[0].range.start == lsp.Position(line=text.count("\n") - 1, character=0), last
    ident = lsp.TextDocumentIdentifier(uri=uri)
    # A value after the surrogate's line: its hover is found at the right column.
    position = position_of(text, "%a_len", occurrence=1)
    hover = await client.text_document_hover_async(lsp.HoverParams(text_document=ident, position=position))
    assert hover is not None and "a_len" in str(hover.contents)
    tokens = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=ident))
    assert tokens is not None and tokens.data
    # A line break typed after "// \ud800 " (5 UTF-16 units): "in a comment" becomes code on
    # a line of its own, with an error at its first column.
    line = position_of(text, "\ud800 in a comment").line
    at = lsp.Position(line=line, character=5)
    after = await change_document(
        client, uri, 2, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text="\n")]
    )
    assert lsp.Position(line=line + 1, character=0) in [d.range.start for d in after]
    await _ask_everything(client, uri, position)
    assert _failures(client)[before:] == []
    close_document(client, uri)


def _big_text(lines: int) -> str:
    """A module of copies of the vector_add kernel (renamed apart), of at least `lines` lines."""
    body = (ROOT / "examples" / "vector_add.tileir").read_text()
    entry = body[body.index("entry @") : body.rindex("}")].rstrip()
    copies = lines // entry.count("\n") + 1
    kernels = [entry.replace("entry @vector_add(", f"entry @k{i}(", 1) for i in range(copies)]
    text = "cuda_tile.module @big {\n" + "\n".join(kernels) + "\n}\n"
    assert text.count("\n") >= lines
    return text


@pytest.mark.asyncio(loop_scope="module")
async def test_long_requests_give_way_and_can_be_cancelled(client):
    """Whole-document semantic tokens and formatting of a large document do not hold up the
    requests after them (issue 18: 19 s and 16 s during which nothing else was answered):
    tokens are found a part at a time, giving way between parts, and end on $/cancelRequest;
    formatting prints on a worker thread. (12,000 lines: the mechanism, not the limit.)"""
    text = _big_text(12_000)
    uri, diagnostics = await open_document(client, text)
    assert diagnostics == []
    ident = lsp.TextDocumentIdentifier(uri=uri)
    hover_at = position_of(text, "%a_len", occurrence=200)

    def send(method: str, params: object, msg_id: str) -> asyncio.Future:
        # pygls's plain send_request writes the message now (pytest-lsp's wrappers send it
        # when their coroutine first runs).
        return asyncio.wrap_future(client.protocol.send_request(method, params, msg_id=msg_id))

    tokens_params = lsp.SemanticTokensParams(text_document=ident)
    cancelled = send(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, tokens_params, f"tokens-cancelled-{uri}")
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=f"tokens-cancelled-{uri}"))
    with pytest.raises(JsonRpcException) as caught:
        await cancelled
    assert caught.value.code == lsp.LSPErrorCodes.RequestCancelled.value

    for method, params in (
        (lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, tokens_params),
        (
            lsp.TEXT_DOCUMENT_FORMATTING,
            lsp.DocumentFormattingParams(
                text_document=ident, options=lsp.FormattingOptions(tab_size=2, insert_spaces=True)
            ),
        ),
    ):
        long_request = send(method, params, f"{method}-{uri}")
        hover = await client.text_document_hover_async(lsp.HoverParams(text_document=ident, position=hover_at))
        assert hover is not None and "a_len" in str(hover.contents)
        assert not long_request.done(), f"{method} was answered before the hover sent after it"
        result = await long_request
        if method == lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL:
            data = result["data"] if isinstance(result, dict) else result.data
            assert len(data) % 5 == 0 and len(data) // 5 > text.count("\n")
        else:
            assert result and result[0].new_text.startswith("  entry @k0(")  # the copies' indentation
    close_document(client, uri)


@pytest.mark.asyncio(loop_scope="module")
async def test_fifty_thousand_lines(client):
    text = _big_text(50_000)
    uri, diagnostics = await open_document(client, text)
    assert diagnostics == []
    middle = text.count("\n") // 2
    await _ask_everything(client, uri, lsp.Position(line=middle, character=6), whole_document=False)
    # An edit in the middle is answered from the one kernel it is in.
    at = lsp.Position(line=middle, character=0)
    after = await change_document(
        client, uri, 2, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text="%bad = \n")]
    )
    assert len(after) >= 1 and all(d.range.start.line >= middle - 1 for d in after)
    close_document(client, uri)


SNIPPETS = ["%", "@", "{", "}", "(", ")", ":", "tile<", ">", "\n", "  ", "addi", "// c\n", "\u00e9", "^bb0", '"', "#"]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("seed", range(2))
async def test_random_edit_sequences(client, seed):
    rng = random.Random(seed)
    before = len(_failures(client))
    for path in _fuzz_files():
        text = path.read_text()
        uri, _ = await open_document(client, text)
        for version in range(2, 12):
            lines = text.split("\n")
            line = rng.randrange(len(lines))
            col = rng.randrange(len(lines[line]) + 1)
            if rng.random() < 0.5:  # insert
                new = rng.choice(SNIPPETS)
                end_line, end_col = line, col
            else:  # delete up to a few lines
                end_line = min(len(lines) - 1, line + rng.randrange(3))
                end_col = (
                    rng.randrange(len(lines[end_line]) + 1)
                    if end_line > line
                    else rng.randrange(col, len(lines[line]) + 1)
                )
                new = ""
            start = lsp.Position(line=line, character=_utf16_length(lines[line][:col]))
            end = lsp.Position(line=end_line, character=_utf16_length(lines[end_line][:end_col]))
            offset_start = sum(len(x) + 1 for x in lines[:line]) + col
            offset_end = sum(len(x) + 1 for x in lines[:end_line]) + end_col
            text = text[:offset_start] + new + text[offset_end:]
            diagnostics = await change_document(
                client,
                uri,
                version,
                [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=start, end=end), text=new)],
            )
            for d in diagnostics:
                _assert_inside(text, d.range, f"{path.name} v{version}")
                for info in d.related_information or ():
                    _assert_inside(text, info.location.range, f"{path.name} v{version} related")
        await _ask_everything(client, uri, lsp.Position(line=line, character=0))
        close_document(client, uri)
    assert _failures(client)[before:] == []


def _token_starts(text: str) -> list[lsp.Position]:
    """The start of every word, value, symbol and attribute name of `text`."""
    return [
        lsp.Position(line=number, character=m.start())
        for number, line in enumerate(text.split("\n"))
        for m in re.finditer(r"[%@]?[A-Za-z_][\w$.]*|\d+", line)
    ]


# How many random kernels (seeds from 0) the test below takes: $TILEIR_LSP_KERNELS, for
# longer local runs (each takes the server some 12 s a client).
LSP_KERNELS = int(os.environ.get("TILEIR_LSP_KERNELS", "1"))


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("seed", range(LSP_KERNELS))
async def test_random_kernels_answer_every_request_everywhere(client, seed):
    """The random kernels of tests/lower/fuzz.py (with hints and what only compiles: every op
    of the dialect among them, views of every kind) verify in the server too, and every
    request at every token of them is answered without a failure, its ranges inside the
    document: hover, definition, references, highlight, completion, signature help, layout;
    the formatted text verifies and prints as the original does. (40 kernels, 2026-11-30:
    all answered, with both clients.)"""
    from tests.lower.fuzz import kernel

    await _every_request_everywhere(client, kernel(seed, asm=True, hints=True).text)


# The cuTile kernels of tests/runtime/cutile_zoo.py the test below takes ($TILEIR_LSP_CUTILE:
# names, or "all"): as `tileir disasm -g` prints their bytecode, debug info and all.
LSP_CUTILE = os.environ.get("TILEIR_LSP_CUTILE", "attention")


def _cutile_names() -> list[str]:
    if LSP_CUTILE != "all":
        return LSP_CUTILE.split(",")
    try:
        from tests.runtime.cutile_zoo import CASES
    except ImportError:
        return ["attention"]
    return [c.name for c in CASES]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("name", _cutile_names())
async def test_cutile_kernels_answer_every_request_everywhere(client, name):
    """Kernels as cuTile Python exports them, with their debug info (`#loc` aliases,
    `di_subprogram`s, `loc(...)` on every op), as the random kernels above. (All 35 of the
    zoo, 2026-11-30: all answered, with both clients.)"""
    pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    import numpy as np

    from compiler.bytecode import read_bytecode
    from compiler.bytecode.disasm import disassembly
    from compiler.runtime.cutile import export_cutile
    from tests.runtime.cutile_zoo import CASES

    (case,) = [c for c in CASES if c.name == name]
    _, args, _ = case.make(np.random.default_rng(0))
    module = read_bytecode(export_cutile(case.kernel, args)[0])
    await _every_request_everywhere(client, disassembly(module, debuginfo=True))


async def _every_request_everywhere(client, text: str) -> None:
    from compiler.text import print_module
    from compiler.verify import check_text

    before = len(_failures(client))
    uri, diagnostics = await open_document(client, text)
    assert diagnostics == []
    ident = lsp.TextDocumentIdentifier(uri=uri)
    for position in _token_starts(text):
        hover = await client.text_document_hover_async(lsp.HoverParams(text_document=ident, position=position))
        if hover is not None and hover.range is not None:
            _assert_inside(text, hover.range, f"hover at {position}")
        for found in (
            await client.text_document_definition_async(lsp.DefinitionParams(text_document=ident, position=position))
            or []
        ):
            _assert_inside(text, getattr(found, "target_range", None) or found.range, f"definition at {position}")
        for found in (
            await client.text_document_references_async(
                lsp.ReferenceParams(
                    text_document=ident, position=position, context=lsp.ReferenceContext(include_declaration=True)
                )
            )
            or []
        ):
            _assert_inside(text, found.range, f"references at {position}")
        for found in (
            await client.text_document_document_highlight_async(
                lsp.DocumentHighlightParams(text_document=ident, position=position)
            )
            or []
        ):
            _assert_inside(text, found.range, f"highlight at {position}")
        await client.text_document_completion_async(lsp.CompletionParams(text_document=ident, position=position))
        await client.text_document_signature_help_async(lsp.SignatureHelpParams(text_document=ident, position=position))
        params = {"textDocument": {"uri": uri}, "position": {"line": position.line, "character": position.character}}
        await client.protocol.send_request_async("tileir/layout", params)
    await _ask_everything(client, uri, lsp.Position(line=text.count("\n"), character=0))
    edits = await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(text_document=ident, options=lsp.FormattingOptions(tab_size=2, insert_spaces=True))
    )
    formatted = apply_workspace_edit(text, "x", lsp.WorkspaceEdit(changes={"x": list(edits or [])}))
    result, problems = check_text(formatted, "formatted.tileir")
    assert not problems, problems
    assert print_module(result.module) == print_module(check_text(text, "k.tileir")[0].module)
    close_document(client, uri)
    assert _failures(client)[before:] == []
