"""Diagnostics: published on open and on (incremental) change, from the parser and verifier."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from compiler.verify import check_text

from .util import change_document, open_document, position_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.tileir"))


@pytest.mark.asyncio(loop_scope="module")
async def test_examples_have_no_diagnostics(client):
    for path in EXAMPLES:
        _, diagnostics = await open_document(client, path.read_text())
        assert diagnostics == [], path.name


BROKEN = """cuda_tile.module @m {
  entry @k(%a: tile<i32>) {
    %b = addi %a, %a : tile<i32>
    %c = addf %b, %b : tile<i32>
    return
  }
}
"""


@pytest.mark.asyncio(loop_scope="module")
async def test_verifier_error_matches_core(client):
    uri, diagnostics = await open_document(client, BROKEN)
    _, expected = check_text(BROKEN, "x.tileir")
    assert [d.message for d in diagnostics] == [d.message for d in expected]
    assert len(diagnostics) == 1
    diag = diagnostics[0]
    assert diag.severity == lsp.DiagnosticSeverity.Error
    assert diag.source == "tileir"
    assert diag.range.start == position_of(BROKEN, "addf %b", offset_in_needle=5)  # the operand at fault


@pytest.mark.asyncio(loop_scope="module")
async def test_percent_encoded_uris(client):
    """A path with a space comes as `my%20dir` (VS Code encodes it); the server stores documents
    under the decoded URI, and must still find them and publish under the client's URI."""
    uri = "file:///tmp/tile_lsp_tests/my%20dir/broken.tileir"
    _, diagnostics = await open_document(client, BROKEN, uri)
    assert len(diagnostics) == 1 and "addf" in diagnostics[0].message, diagnostics
    hover = await client.text_document_hover_async(
        lsp.HoverParams(lsp.TextDocumentIdentifier(uri=uri), position_of(BROKEN, "addi"))
    )
    assert hover is not None and "addi" in str(hover.contents), hover


@pytest.mark.asyncio(loop_scope="module")
async def test_incremental_change_fixes_and_breaks(client):
    uri, diagnostics = await open_document(client, BROKEN)
    assert len(diagnostics) == 1
    start = position_of(BROKEN, "addf")
    end = lsp.Position(line=start.line, character=start.character + 4)
    fixed = await change_document(
        client, uri, 2, [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=start, end=end), text="addi")]
    )
    assert fixed == []
    # Break the syntax: a half-typed op gets a parse error at the right place.
    where = position_of(BROKEN, "    return")
    broken = await change_document(
        client,
        uri,
        3,
        [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=where, end=where), text="    %d = addi %c,\n")],
    )
    assert broken and broken[0].severity == lsp.DiagnosticSeverity.Error
    assert broken[0].range.start.line in (where.line, where.line + 1)


@pytest.mark.asyncio(loop_scope="module")
async def test_full_text_change(client):
    uri, _ = await open_document(client, BROKEN)
    good = BROKEN.replace("addf", "addi")
    assert await change_document(client, uri, 2, [lsp.TextDocumentContentChangeWholeDocument(text=good)]) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_redefinition_goes_when_either_kernel_is_renamed(client):
    """Two kernels of one name: the error stays while either one's body is edited (each is
    then analysed again on its own) and goes when either is renamed."""
    body = EXAMPLES[-1].read_text()
    entry = body[body.index("entry @") : body.rindex("}")].rstrip()
    name = entry[len("entry @") : entry.index("(")]
    text = f"cuda_tile.module @m {{\n  {entry}\n  {entry}\n}}\n"
    for which in (0, 1):
        uri, diagnostics = await open_document(client, text)
        assert [d.message for d in diagnostics] == [f"redefinition of symbol named '{name}'"]
        # A new line inside the body of kernel `which`: the error stays.
        inside = position_of(text, "\n", occurrence=1 + which * entry.count("\n") + which)
        inside = lsp.Position(line=inside.line + 1, character=0)
        change = lsp.TextDocumentContentChangePartial(range=lsp.Range(start=inside, end=inside), text="\n")
        after = await change_document(client, uri, 2, [change])
        assert [d.message for d in after] == [f"redefinition of symbol named '{name}'"]
        # Renaming kernel `which` removes it.
        at = position_of(text, f"entry @{name}(", occurrence=which, offset_in_needle=len(f"entry @{name}"))
        if inside.line <= at.line:
            at = lsp.Position(line=at.line + 1, character=at.character)
        rename = lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text="_renamed")
        assert await change_document(client, uri, 3, [rename]) == []


def test_unknown_target_architectures_are_ignored_with_a_warning():
    from tile_lsp.documents import Settings

    for value in ("sm_bogus", "sm_70", "sm_", 90):
        settings, problems = Settings.from_client({"targetArchitecture": value})
        assert settings.target_architecture == "sm_100" and problems == [
            f"tileir.targetArchitecture: ignoring {value!r}"
        ]
    settings, problems = Settings.from_client({"targetArchitecture": "sm_90a"})
    assert settings.target_architecture == "sm_90a" and problems == []
