"""Document and range formatting: `tileir fmt`'s output, every comment kept, minimal edits."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.conformance.harness import shared_dir

from .test_actions import apply_workspace_edit
from .util import change_document, open_document, position_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.tileir"))
OPTIONS = lsp.FormattingOptions(tab_size=2, insert_spaces=True)

MESSY = """// leading comment
cuda_tile.module @m {
  // before the first entry
  entry @first(%a: tile<i32>) {
      %b = addi %a,   %a : tile<i32>   // trailing comment
    return
  }
  entry @second(%a: tile<i32>) {
    // inside the second entry
        %c = addi %a,%a : tile<i32>
    return
  }
}
"""


def apply(text: str, edits) -> str:
    return apply_workspace_edit(text, "x", lsp.WorkspaceEdit(changes={"x": list(edits or [])}))


def comments(text: str) -> list[str]:
    """Every `//` comment of `text` (none of these files has `//` inside a string)."""
    return sorted(m.group(0).rstrip() for m in re.finditer(r"//.*", text))


async def format_document(client, uri: str):
    return await client.text_document_formatting_async(
        lsp.DocumentFormattingParams(text_document=lsp.TextDocumentIdentifier(uri=uri), options=OPTIONS)
    )


async def format_range(client, uri: str, rng: lsp.Range):
    return await client.text_document_range_formatting_async(
        lsp.DocumentRangeFormattingParams(text_document=lsp.TextDocumentIdentifier(uri=uri), range=rng, options=OPTIONS)
    )


def tileir_fmt(path: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "compiler", "fmt", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.asyncio(loop_scope="module")
async def test_examples_format_like_tileir_fmt(client, tmp_path):
    # One of them needs changes, so the comparison is not only "nothing to do".
    messy_path = tmp_path / "messy.tileir"
    messy_path.write_text(MESSY)
    for path in [*EXAMPLES, messy_path]:
        text = path.read_text()
        uri, _ = await open_document(client, text)
        edits = await format_document(client, uri)
        assert apply(text, edits) == tileir_fmt(path), path.name


@pytest.mark.asyncio(loop_scope="module")
async def test_edits_are_minimal_and_idempotent(client):
    uri, _ = await open_document(client, MESSY)
    edits = await format_document(client, uri)
    # Only the two badly spaced lines change, each by an edit of its own line.
    assert sorted((e.range.start.line, e.range.end.line) for e in edits) == [(4, 5), (9, 10)]
    formatted = apply(MESSY, edits)
    assert "%b = addi %a, %a : tile<i32>" in formatted and "%c = addi %a, %a : tile<i32>" in formatted
    assert comments(formatted) == comments(MESSY)
    uri2, _ = await open_document(client, formatted)
    assert not await format_document(client, uri2)


@pytest.mark.asyncio(loop_scope="module")
async def test_range_formatting_formats_the_items_it_touches(client, tmp_path):
    uri, _ = await open_document(client, MESSY)
    # A cursor-sized range on the `return` of the second entry formats that whole entry.
    at = position_of(MESSY, "return", occurrence=1)
    edits = await format_range(client, uri, lsp.Range(start=at, end=at))
    formatted = apply(MESSY, edits)
    assert "      %b = addi %a,   %a" in formatted  # the first entry is left alone
    assert "    %c = addi %a, %a : tile<i32>\n" in formatted
    # After lines are inserted above the second entry, the range still finds it.
    where = position_of(MESSY, "  entry @second")
    inserted = "  // one more\n  // and another\n"
    await change_document(
        client, uri, 2, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=where, end=where), text=inserted)]
    )
    current = MESSY.replace("  entry @second", inserted + "  entry @second")
    at = position_of(current, "return", occurrence=1)
    formatted = apply(current, await format_range(client, uri, lsp.Range(start=at, end=at)))
    assert "      %b = addi %a,   %a" in formatted
    assert "    %c = addi %a, %a : tile<i32>\n" in formatted
    assert comments(formatted) == comments(current)
    # An edit inside the first entry (re-analysed on its own) that adds lines and a comment:
    # the whole document still formats as `tileir fmt` formats the current text.
    where = position_of(current, "    return")
    added = "    // a new comment\n    %z = addi %a, %a : tile<i32>\n"
    await change_document(
        client, uri, 3, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=where, end=where), text=added)]
    )
    current = current.replace("    return", added + "    return", 1)
    path = tmp_path / "current.tileir"
    path.write_text(current)
    whole = apply(current, await format_document(client, uri))
    assert whole == tileir_fmt(path)
    assert comments(whole) == comments(current)


@pytest.mark.asyncio(loop_scope="module")
async def test_every_comment_survives(client):
    shared = shared_dir()
    files = list(EXAMPLES)
    if shared is not None:
        files += sorted((shared / "conformance" / "cuda-tile" / "test" / "Dialect" / "CudaTile").glob("*.mlir"))
        files += sorted((shared / "samples").glob("*.tileir"))
    formatted_any = 0
    for path in files:
        text = path.read_text()
        uri, _ = await open_document(client, text)
        edits = await format_document(client, uri)
        if edits is None:  # syntax errors (some conformance files test the parser): left alone
            continue
        formatted_any += 1
        assert comments(apply(text, edits)) == comments(text), path.name
    assert formatted_any >= len(EXAMPLES)


@pytest.mark.asyncio(loop_scope="module")
async def test_syntax_errors_leave_the_document_alone(client):
    text = MESSY.replace("return\n  }\n}", "%x = addi %a,\n  }\n}")
    uri, diagnostics = await open_document(client, text)
    assert diagnostics and diagnostics[0].severity == lsp.DiagnosticSeverity.Error
    client.messages.clear()
    client.log_messages.clear()
    assert not await format_document(client, uri)
    # Said in the log, not in a window (format on save would pop one up at every save).
    assert not client.messages
    assert any("not formatted: the document has 1 error (line" in m.message for m in client.log_messages)


@pytest.mark.asyncio(loop_scope="module")
async def test_formatting_keeps_crlf_line_endings(client):
    """A CRLF document is formatted into CRLF lines, and its canonical form needs no edit."""
    text = MESSY.replace("\n", "\r\n")
    uri, _ = await open_document(client, text)
    formatted = apply(text, await format_document(client, uri))
    assert formatted.count("\r\n") == formatted.count("\n") > 10
    canonical_uri, _ = await open_document(client, formatted)
    assert list(await format_document(client, canonical_uri)) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_bad_documents_get_an_answer(client):
    far = lsp.Range(start=lsp.Position(700, 0), end=lsp.Position(900, 4))
    for text in ("", "\x00\x01\xff garbage {{{", "cuda_tile.module @m {\n  entry @k() {\n    %x = add"):
        uri, _ = await open_document(client, text)
        assert not await format_document(client, uri)
        assert not await format_range(client, uri, far)
    uri, _ = await open_document(client, MESSY)
    assert not await format_range(client, uri, far)  # past the end: no item there


@pytest.mark.asyncio(loop_scope="module")
async def test_formatting_after_edits_is_formatting_of_a_fresh_parse(client):
    """After edits inside kernels (each re-analysed on its own, the module spliced), the
    edits the server gives are the ones it gives for the same text opened afresh."""
    text = MESSY
    uri, _ = await open_document(client, text)
    changes = [
        ("      %b = addi", "      // about b\n"),  # a comment inside the first entry
        ("    return\n  }\n  entry @second", "    %q = addi %a,%a : tile<i32> // q\n"),
        ("        %c = addi", "    // about c\n    // more\n"),
    ]
    for version, (needle, inserted) in enumerate(changes, start=2):
        where = position_of(text, needle)
        change = lsp.TextDocumentContentChangePartial(range=lsp.Range(start=where, end=where), text=inserted)
        await change_document(client, uri, version, [change])
        text = text.replace(needle, inserted + needle, 1)
        edited = await format_document(client, uri)
        fresh_uri, _ = await open_document(client, text)
        assert edited == await format_document(client, fresh_uri)
        assert comments(apply(text, edited)) == comments(text)
