"""Documents opening, changing and closing; settings; publishing diagnostics."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..documents import Settings
from ..server import feature

if TYPE_CHECKING:
    from ..server import TileLanguageServer


def register(server: TileLanguageServer) -> None:
    @feature(server, lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        # Clients may pass settings up front (neovim's `init_options`), before configuration exists.
        options = params.initialization_options
        if isinstance(options, dict):
            _apply(server, options.get("tileir", options))

    @feature(server, lsp.INITIALIZED)
    async def initialized(params: lsp.InitializedParams) -> None:
        await _pull_configuration(server)

    @feature(server, lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: lsp.DidChangeConfigurationParams) -> None:
        # Clients that support workspace/configuration send an empty notification and expect a pull.
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("tileir"), dict):
            changed = _apply(server, settings["tileir"])
        else:
            changed = await _pull_configuration(server)
        if changed:
            server.reanalyze_all()

    @feature(server, lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        server.publish(params.text_document.uri)

    @feature(server, lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        server.schedule(params.text_document.uri)

    @feature(server, lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: lsp.DidSaveTextDocumentParams) -> None:
        server.publish(params.text_document.uri)

    @feature(server, lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        server.forget(params.text_document.uri)


async def _pull_configuration(server: TileLanguageServer) -> bool:
    """Ask the client for the `tileir` section, if it can answer; True if settings changed."""
    workspace = server.client_capabilities.workspace
    if workspace is None or not workspace.configuration:
        return False
    try:
        values = await server.workspace_configuration_async(
            lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="tileir")])
        )
    except Exception as error:  # noqa: BLE001 - a client that fails the request keeps the defaults
        server.report_failure("workspace/configuration", error)
        return False
    return _apply(server, values[0] if values else None)


def _apply(server: TileLanguageServer, value: object) -> bool:
    settings, problems = Settings.from_client(value, server.settings)
    for problem in problems:
        server.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Warning, message=problem))
    if settings == server.settings:
        return False
    server.settings = settings
    return True
