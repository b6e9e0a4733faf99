"""Code actions: quick fixes from the diagnostics' fixes, and the "add expected-* checks"
actions, whose result `tileir opt -verify-diagnostics` (the real CLI) must accept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from .util import change_document, open_document, position_of

ROOT = Path(__file__).resolve().parents[2]

NAMED_RETURN = """cuda_tile.module @m {
  entry @k(%a: tile<i32>) {
    %r = return
  }
}
"""

# Two bad ops in one kernel: the editor shows both, `tileir opt` stops the kernel at the first.
TWO_BAD_OPS = """cuda_tile.module @m {
  entry @k(%a: tile<i32>) {
    %b = addi %a, %a : tile<i32>
    %c = addf %b, %b : tile<i32>
    %d = addf %b, %b : tile<i32>
    return
  }
}
"""

# A symbol defined twice: an error with a related note on another line.
TWICE = """cuda_tile.module @m {
  entry @twice() {
    return
  }
  entry @twice() {
    return
  }
}
"""

ADDF_MESSAGE = (
    "'cuda_tile.addf' op operand #0 must be tile of f16 or bf16 or f32 or f64 values, but got '!cuda_tile.tile<i32>'"
)


def apply_workspace_edit(text: str, uri: str, edit: lsp.WorkspaceEdit) -> str:
    """`text` with the edits of `edit` for `uri` applied (ASCII documents: characters are columns)."""
    edits: list[lsp.TextEdit] = []
    for change in edit.document_changes or []:
        assert isinstance(change, lsp.TextDocumentEdit)
        if change.text_document.uri == uri:
            edits += change.edits
    edits += (edit.changes or {}).get(uri, [])
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: lsp.Position) -> int:
        return min(starts[min(position.line, len(lines))] + position.character, len(text))

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


def verify_diagnostics(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    """`tileir opt -verify-diagnostics` on `text`."""
    path = tmp_path / "checked.tileir"
    path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "compiler", "opt", "-verify-diagnostics", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


async def code_actions(client, uri: str, diagnostics: list[lsp.Diagnostic], only=None, at=None):
    rng = at or (diagnostics[0].range if diagnostics else lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)))
    return await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=lsp.CodeActionContext(
                diagnostics=diagnostics, only=only, trigger_kind=lsp.CodeActionTriggerKind.Invoked
            ),
        )
    )


async def resolved(client, action: lsp.CodeAction) -> lsp.CodeAction:
    if action.edit is None:
        action = await client.code_action_resolve_async(action)
    assert action.edit is not None
    return action


@pytest.mark.asyncio(loop_scope="module")
async def test_quick_fix_from_the_diagnostic(client):
    uri, diagnostics = await open_document(client, NAMED_RETURN)
    assert [d.message for d in diagnostics] == ["cannot name an operation with no results"]
    actions = await code_actions(client, uri, diagnostics)
    fix = next(a for a in actions if a.title == "Remove the result names")
    assert fix.kind == lsp.CodeActionKind.QuickFix
    assert fix.is_preferred is True  # the diagnostic's only fix
    assert list(fix.diagnostics) == diagnostics
    assert apply_workspace_edit(NAMED_RETURN, uri, fix.edit) == NAMED_RETURN.replace("%r = return", "return")
    # An `only` filter for other kinds leaves the fixes out.
    assert not [a for a in await code_actions(client, uri, diagnostics, only=["refactor"]) if a.title == fix.title]


@pytest.mark.asyncio(loop_scope="module")
async def test_quick_fix_after_lines_inserted_above(client):
    text = NAMED_RETURN.replace("  entry @k", "  entry @other() {\n    return\n  }\n  entry @k")
    uri, _ = await open_document(client, text)
    where = position_of(text, "  entry @k")
    inserted = "  // a comment\n  // and another\n"
    diagnostics = await change_document(
        client,
        uri,
        2,
        [lsp.TextDocumentContentChangePartial(range=lsp.Range(start=where, end=where), text=inserted)],
    )
    current = text.replace("  entry @k", inserted + "  entry @k")
    assert diagnostics[0].range.start == position_of(current, "%r")
    actions = await code_actions(client, uri, diagnostics)
    fix = next(a for a in actions if a.title == "Remove the result names")
    assert apply_workspace_edit(current, uri, fix.edit) == current.replace("%r = return", "return")


@pytest.mark.asyncio(loop_scope="module")
async def test_stale_client_diagnostic_gets_no_fix(client):
    uri, diagnostics = await open_document(client, NAMED_RETURN)
    stale = lsp.Diagnostic(range=diagnostics[0].range, message="something the server never said")
    actions = await code_actions(client, uri, [stale], only=["quickfix"])
    assert not actions


@pytest.mark.asyncio(loop_scope="module")
async def test_add_expected_check_for_one_diagnostic(client, tmp_path):
    uri, diagnostics = await open_document(client, NAMED_RETURN)
    actions = await code_actions(client, uri, diagnostics, only=["quickfix"])
    check = next(a for a in actions if a.title == "Add expected-error check")
    assert check.kind == lsp.CodeActionKind.QuickFix and not check.is_preferred
    edited = apply_workspace_edit(NAMED_RETURN, uri, check.edit)
    assert edited == NAMED_RETURN.replace(
        "    %r = return",
        "    // expected-error@+1 {{cannot name an operation with no results}}\n    %r = return",
    )
    assert verify_diagnostics(tmp_path, NAMED_RETURN).returncode == 1
    result = verify_diagnostics(tmp_path, edited)
    assert result.returncode == 0, result.stderr


async def add_document_checks(client, text: str) -> str:
    uri, _ = await open_document(client, text)
    actions = await code_actions(client, uri, [], only=["source"])
    assert [a.kind for a in actions] == ["source.addExpectedChecks"]
    action = await resolved(client, actions[0])
    return apply_workspace_edit(text, uri, action.edit)


@pytest.mark.asyncio(loop_scope="module")
async def test_add_expected_checks_for_the_document(client, tmp_path):
    _, diagnostics = await open_document(client, TWO_BAD_OPS)
    assert len(diagnostics) == 2
    edited = await add_document_checks(client, TWO_BAD_OPS)
    # Only the first: `tileir opt` never reports the second, and would complain about its check.
    assert edited == TWO_BAD_OPS.replace(
        "    %c = addf", "    // expected-error@+1 {{" + ADDF_MESSAGE + "}}\n    %c = addf"
    )
    assert verify_diagnostics(tmp_path, TWO_BAD_OPS).returncode == 1
    result = verify_diagnostics(tmp_path, edited)
    assert result.returncode == 0, result.stderr
    # Once every diagnostic is checked, the action has nothing left to add.
    assert await add_document_checks(client, edited) == edited


@pytest.mark.asyncio(loop_scope="module")
async def test_expected_checks_include_related_notes(client, tmp_path):
    edited = await add_document_checks(client, TWICE)
    lines = TWICE.splitlines(keepends=True)
    assert edited == "".join(
        lines[:1]
        + ["  // expected-note@+1 {{see existing symbol definition here}}\n"]
        + lines[1:4]
        + ["  // expected-error@+1 {{redefinition of symbol named 'twice'}}\n"]
        + lines[4:]
    )
    assert verify_diagnostics(tmp_path, TWICE).returncode == 1
    result = verify_diagnostics(tmp_path, edited)
    assert result.returncode == 0, result.stderr


@pytest.mark.asyncio(loop_scope="module")
async def test_expected_checks_on_split_input_file(client, tmp_path):
    chunk = NAMED_RETURN
    text = chunk + "\n// -----\n\n" + chunk.replace("@m", "@n")
    uri, _ = await open_document(client, text)
    action = await resolved(client, (await code_actions(client, uri, [], only=["source"]))[0])
    edited = apply_workspace_edit(text, uri, action.edit)
    assert edited.count("// expected-error@+1 {{cannot name an operation with no results}}") == 2
    path = tmp_path / "split.tileir"
    path.write_text(edited)
    result = subprocess.run(
        [sys.executable, "-m", "compiler", "opt", "-split-input-file", "-verify-diagnostics", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.asyncio(loop_scope="module")
async def test_clean_document_has_no_actions(client):
    uri, diagnostics = await open_document(client, (ROOT / "examples" / "vector_add.tileir").read_text())
    assert diagnostics == []
    assert not await code_actions(client, uri, [])


@pytest.mark.asyncio(loop_scope="module")
async def test_bad_documents_get_an_answer(client):
    far = lsp.Range(start=lsp.Position(500, 3), end=lsp.Position(900, 0))
    for text in ("", "\x00\x01\xff garbage {{{", "cuda_tile.module @m {\n  entry @k() {\n    %x = add"):
        uri, diagnostics = await open_document(client, text)
        for rng in (None, far):
            actions = await code_actions(client, uri, diagnostics, at=rng)
            assert isinstance(actions, (list, tuple))
            for action in actions:
                if action.kind == "source.addExpectedChecks":
                    await resolved(client, action)
