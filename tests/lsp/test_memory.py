"""The server keeps a big document's analysis out of the garbage collector's full collections
(a 0.67 s pause at 50,000 lines, set off every few hundred keystrokes), and lets go of it once it
is replaced or the document is closed."""

from __future__ import annotations

import gc
import weakref

import pytest

pytest.importorskip("pygls", reason="the `test` extra (pygls) is not installed")

from lsprotocol import types as lsp  # noqa: E402

from tile_lsp import server as server_module  # noqa: E402

from .test_incremental import _multi_kernel_text  # noqa: E402


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setattr(server_module, "SETTLE_CHARS", 1000)  # the test's document counts as big
    yield server_module.TileLanguageServer()
    gc.unfreeze()


def _tracked(obj) -> bool:
    return any(o is obj for o in gc.get_objects())


def test_a_whole_analysis_is_frozen_and_let_go_when_replaced(server):
    uri = "file:///big.tileir"
    text = _multi_kernel_text()
    server.open_document(lsp.TextDocumentItem(uri=uri, language_id="tileir", version=1, text=text))
    first = server.analysis(uri)
    assert first is not None and gc.get_freeze_count() > 0
    assert not _tracked(first.module)  # frozen: full collections do not walk it
    # An edit inside a kernel: re-analysed in place, nothing frozen again (what it replaced
    # leaves the frozen objects).
    frozen = gc.get_freeze_count()
    at = text.index("    %", text.index("entry @"))
    server.change_document(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(start=_position(text, at), end=_position(text, at)), text="// x\n"
                )
            ],
        )
    )
    second = server.analysis(uri)
    assert second is not None and second.module is first.module and gc.get_freeze_count() <= frozen
    # Opened again: a whole analysis; the first one's module (cycles: ops and their blocks) is
    # collected before the new one is frozen, not kept frozen for ever.
    old = weakref.ref(first.module)
    del first, second
    server.open_document(lsp.TextDocumentItem(uri=uri, language_id="tileir", version=3, text=text))
    third = server.analysis(uri)
    assert third is not None and old() is None and not _tracked(third.module)
    # Closed: the collector may take it back.
    server.forget(uri)
    assert gc.get_freeze_count() == 0


def _position(text: str, offset: int) -> lsp.Position:
    line = text.count("\n", 0, offset)
    return lsp.Position(line=line, character=offset - (text.rfind("\n", 0, offset) + 1))
