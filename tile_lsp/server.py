"""The language server: the document store, settings, and debounced diagnostics.

Each feature lives in a module of `tile_lsp.features` and registers itself with `@feature`,
which answers a request that fails inside with the feature's empty result (after logging the
error to the client), so that no input can take the server down.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
import traceback
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

import compiler

from .documents import Analysis, Settings, analyze
from .incremental import reanalyze

log = logging.getLogger("tile_lsp")

F = TypeVar("F", bound=Callable[..., Any])


class TileLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tile-lsp", compiler.__version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.settings = Settings()
        self._analyses: dict[str, Analysis] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        # Time each publish took from the change that caused it (for benchmarks/lsp.py).
        self.last_analysis_seconds = 0.0

    # ---------------------------------------------------------------- documents

    def analysis(self, uri: str) -> Analysis | None:
        """The analysis of the document's current text (made now if a change is pending)."""
        document = self._document(uri)
        if document is None:
            return None
        current = self._analyses.get(uri)
        # Versions tell changes apart; only a document without one needs its text compared.
        stale = current is None or current.version != document.version
        if stale or (document.version is None and current.text != document.source):
            current = self._analyze(uri)
        return current

    def _document(self, uri: str):
        # pygls keys open documents by the percent-decoded URI, while requests carry the URI as
        # the client wrote it (`my%20dir`, or VS Code's `tileir-bytecode:` documents whose query
        # is an encoded file URI): look it up as pygls stored it.
        try:
            return self.workspace.text_documents.get(unquote(uri))
        except Exception:  # noqa: BLE001 - a closed or unknown document
            return None

    def open_uris(self) -> list[str]:
        """The URIs of the open documents as the client sent them (the store's keys are decoded,
        and diagnostics published under a decoded URI would not reach the client's document)."""
        return [document.uri for document in list(self.workspace.text_documents.values())]

    def _analyze(self, uri: str) -> Analysis | None:
        document = self._document(uri)
        if document is None:
            return None
        start = time.perf_counter()
        previous = self._analyses.get(uri)
        text = document.source
        if previous is not None and previous.settings == self.settings:
            analysis = reanalyze(previous, text, document.version)
        else:
            analysis = analyze(uri, text, document.version, self.settings, name=_name_of(uri))
        analysis.positions.encoding = _encoding(self.workspace.position_encoding)
        self._analyses[uri] = analysis
        self.last_analysis_seconds = time.perf_counter() - start
        return analysis

    def publish(self, uri: str) -> None:
        self._cancel_pending(uri)
        analysis = self.analysis(uri)
        if analysis is None:
            return
        from .convert import diagnostic

        items = [diagnostic(d, analysis.positions, uri) for d in analysis.diagnostics]
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=analysis.version)
        )

    def schedule(self, uri: str) -> None:
        """Publish diagnostics once the user pauses typing for `debounce_ms`."""
        self._cancel_pending(uri)
        delay = self.settings.debounce_ms / 1000
        if delay <= 0:
            self._safely(self.publish, uri)
            return
        loop = asyncio.get_event_loop()
        self._pending[uri] = loop.call_later(delay, self._safely, self.publish, uri)

    def _cancel_pending(self, uri: str) -> None:
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()

    def forget(self, uri: str) -> None:
        self._cancel_pending(uri)
        self._analyses.pop(uri, None)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def reanalyze_all(self) -> None:
        """Settings changed: analyze and publish every open document again."""
        self._analyses.clear()
        for uri in self.open_uris():
            self._safely(self.publish, uri)

    # ---------------------------------------------------------------- errors

    def report_failure(self, what: str, error: BaseException) -> None:
        """An exception inside a feature: log it to the client (it is a bug in the server)."""
        detail = "".join(traceback.format_exception(error)).rstrip()
        log.error("%s failed: %s", what, detail)
        try:
            self.window_log_message(
                lsp.LogMessageParams(type=lsp.MessageType.Error, message=f"tile-lsp: {what} failed (a bug): {detail}")
            )
        except Exception:  # noqa: BLE001 - the connection itself may be gone
            pass

    def _safely(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as error:  # noqa: BLE001 - see report_failure
            self.report_failure(getattr(fn, "__name__", "task"), error)
            return None


def _name_of(uri: str) -> str:
    """The file name diagnostics carry (only used in messages)."""
    return uri.rsplit("/", 1)[-1] or uri


def _encoding(kind: object) -> str:
    value = getattr(kind, "value", kind)
    return value if value in ("utf-8", "utf-16", "utf-32") else "utf-16"


def feature(server: TileLanguageServer, method: str, options: object = None, empty: Any = None) -> Callable[[F], F]:
    """Register `fn` as the handler of `method`; an exception inside it is reported and the
    request answered with `empty`, except a `JsonRpcException`, which the handler raises on
    purpose to answer with that error."""

    def register(fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            async def handler(*args: Any) -> Any:
                try:
                    return await fn(*args)
                except JsonRpcException:
                    raise  # a deliberate error answer (bad params, a file that cannot be read)
                except Exception as error:  # noqa: BLE001 - see report_failure
                    server.report_failure(method, error)
                    return empty

        else:

            def handler(*args: Any) -> Any:
                try:
                    return fn(*args)
                except JsonRpcException:
                    raise  # a deliberate error answer (bad params, a file that cannot be read)
                except Exception as error:  # noqa: BLE001 - see report_failure
                    server.report_failure(method, error)
                    return empty

        handler.__name__ = fn.__name__
        handler.__doc__ = fn.__doc__
        if options is None:
            server.feature(method)(handler)
        else:
            server.feature(method, options)(handler)
        return fn

    return register


def create_server() -> TileLanguageServer:
    server = TileLanguageServer()
    from .features import register_all

    register_all(server)
    return server
