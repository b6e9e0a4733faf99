"""Helpers for the end-to-end tests: open documents, find positions by text."""

from __future__ import annotations

import asyncio
import itertools

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

_counter = itertools.count()


def new_uri(stem: str = "doc") -> str:
    """A fresh document URI (tests share one server per module)."""
    return f"file:///tmp/tile_lsp_tests/{stem}_{next(_counter)}.tileir"


async def open_document(client: LanguageClient, text: str, uri: str | None = None) -> tuple[str, list[lsp.Diagnostic]]:
    """Open `text` and wait for its diagnostics."""
    uri = uri or new_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="tileir", version=1, text=text)
        )
    )
    return uri, await wait_for_diagnostics(client, uri)


async def change_document(
    client: LanguageClient, uri: str, version: int, changes: list[lsp.TextDocumentContentChangeEvent]
) -> list[lsp.Diagnostic]:
    """Send a didChange and wait for the diagnostics it causes."""
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=changes
        )
    )
    return await wait_for_diagnostics(client, uri)


async def wait_for_diagnostics(client: LanguageClient, uri: str) -> list[lsp.Diagnostic]:
    """The next diagnostics published for `uri` (the caller removed the previous ones)."""
    while uri not in client.diagnostics:
        await asyncio.wait_for(client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 30)
    return list(client.diagnostics[uri])


def position_of(text: str, needle: str, occurrence: int = 0, offset_in_needle: int = 0) -> lsp.Position:
    """The position of the `occurrence`-th `needle` in `text` (plus `offset_in_needle`)."""
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(needle, start + 1)
    offset = start + offset_in_needle
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    return lsp.Position(line=line, character=column)


def close_document(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
