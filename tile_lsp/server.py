"""The language server: the document store, settings, and debounced diagnostics.

Each feature lives in a module of `tile_lsp.features` and registers itself with `@feature`,
which answers a request that fails inside with the feature's empty result (after logging the
error to the client), so that no input can take the server down.

The server keeps the open documents itself (`tile_lsp.store`): `TileProtocol` replaces
pygls's handling of didOpen/didChange/didClose, whose cost per keystroke grows with the
document. Every change also records where the text changed, so that re-analysis need not
compare the old and new texts to find out.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import logging
import time
import traceback
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import unquote

import cattrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcContentModified, JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

import compiler

from .documents import Analysis, Settings, analyze
from .incremental import reanalyze
from .store import Document, DocumentSource

log = logging.getLogger("tile_lsp")


class _DeliberateErrorsInOneLine(logging.Filter):
    """pygls logs every error answer with `logger.exception`: a traceback in the editor's
    output panel. A JsonRpcException a feature raises on purpose (a refused rename, a failed
    conversion, ContentModified) is an answer, not a fault: it becomes one INFO line (shown
    where INFO is); anything else keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == _UNSTRUCTURED:
            return False  # TileProtocol.structure_message says what was wrong, in one line
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, JsonRpcException):
            return True
        record.msg, record.args = f"answered with error {error.code}: {error.message}", ()
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.INFO, "INFO"
        return logging.getLogger().isEnabledFor(logging.INFO)


# What pygls logs (with cattrs's traceback, some 80 lines) for a message whose params break the
# protocol's rules.
_UNSTRUCTURED = "Unable to deserialize message\n%s"

logging.getLogger("pygls.protocol.json_rpc").addFilter(_DeliberateErrorsInOneLine())

# What `TileProtocol.structure_message` makes of a message it answered or dropped itself.
_REFUSED = object()

F = TypeVar("F", bound=Callable[..., Any])

# The largest file tileir/convertFromBytecode (and convertToBytecode of a closed file) reads.
MAX_FILE_BYTES = 64 * 1024 * 1024


# The answer to a long request during which the document changed: it would be for text the
# client no longer has (the client asks again).
ContentModified = JsonRpcContentModified


class TileProtocol(LanguageServerProtocol):
    """pygls's protocol, with the open documents kept by `TileLanguageServer`."""

    _server: TileLanguageServer

    def structure_message(self, data: dict[str, Any]) -> Any:
        """A message whose params break the protocol's rules (a request without its
        `position`, a line of -1) is answered with InvalidParams when it is a request, and
        dropped when it is a notification, with one log line: pygls would log a traceback
        and never answer."""
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as error:
            method = data.get("method")
            if not isinstance(method, str):
                raise  # a response from the client: pygls's own handling
            detail = _structure_problem(error.__cause__)
            if "id" in data:
                log.warning("tile-lsp: %s request with invalid params: %s", method, detail)
                answer = JsonRpcInvalidParams(f"invalid params for {method}: {detail}")
                self._send_response(data["id"], error=answer.to_response_error())
            else:
                log.warning("tile-lsp: dropped a %s notification with invalid params: %s", method, detail)
                if method == lsp.TEXT_DOCUMENT_DID_CHANGE:
                    self._server.lost_change(data.get("params"))
            return _REFUSED

    def handle_message(self, message: Any) -> None:
        if message is not _REFUSED:
            super().handle_message(message)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams):
        self._server.open_document(params.text_document)
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams):
        self._server.change_document(params)
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    def _send_data(self, data: Any) -> None:
        """Semantic tokens whose JSON the feature made already (`EncodedTokens.json`) are
        written as they are; everything else as pygls writes it."""
        result = getattr(data, "result", None)
        raw = getattr(getattr(result, "data", None), "json", None)
        if not isinstance(result, lsp.SemanticTokens) or not isinstance(raw, str) or self.writer is None:
            super()._send_data(data)
            return
        tokens = f'"data": {raw}'
        if result.result_id is not None:
            tokens += f', "resultId": {json.dumps(result.result_id)}'
        body = f'{{"jsonrpc": "2.0", "id": {json.dumps(data.id)}, "result": {{{tokens}}}}}'

        header = (
            f"Content-Length: {len(body.encode(self.CHARSET))}\r\n"
            f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        )
        written = self.writer.write(((header if self._include_headers else "") + body).encode(self.CHARSET))
        if inspect.isawaitable(written):
            asyncio.ensure_future(written)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams):
        self._server.documents.pop(unquote(params.text_document.uri), None)
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None


# A whole analysis of a document this long (about 10,000 lines) is left out of the garbage
# collector's full collections (`_settle_memory`).
SETTLE_CHARS = 500_000


def _settle_memory() -> None:
    """After a whole analysis of a big document: its objects (1.4 million at 50,000 lines) are
    moved out of the garbage collector's reach (`gc.freeze`). Otherwise a full collection,
    which the edits' new objects set off every few hundred keystrokes, walks them all: a 0.67 s
    pause at 50,000 lines, in the middle of typing. What was frozen before (the previous
    analysis, garbage now) is collected first, once per whole analysis. Frozen objects that
    become garbage meanwhile (a kernel's IR replaced by an edit: its ops and blocks hold each
    other) wait for that, or for the document's close: at most one copy of the analysis."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


class TileLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "tile-lsp",
            compiler.__version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=TileProtocol,
        )
        self.settings = Settings()
        self.max_file_bytes = MAX_FILE_BYTES
        # The open documents and their analyses, by percent-decoded URI: requests may carry a
        # URI encoded otherwise than the didOpen that opened it (VS Code's `tileir-bytecode:`
        # documents, whose query is an encoded file URI).
        self.documents: dict[str, Document] = {}
        self._analyses: dict[str, Analysis] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        # Time each publish took from the change that caused it (for benchmarks/lsp.py).
        self.last_analysis_seconds = 0.0

    # ---------------------------------------------------------------- documents

    def open_document(self, item: lsp.TextDocumentItem) -> None:
        key = unquote(item.uri)
        self._analyses.pop(key, None)
        self.documents[key] = Document(item.uri, item.version, DocumentSource(item.text, _name_of(item.uri)))

    def change_document(self, params: lsp.DidChangeTextDocumentParams) -> None:
        document = self._document(params.text_document.uri)
        if document is None:
            log.warning("tile-lsp: a change to %s, which is not open", params.text_document.uri)
            return
        encoding = self.encoding
        for change in params.content_changes:
            document.apply(change, encoding)
        document.version = params.text_document.version

    def lost_change(self, params: object) -> None:
        """A didChange that could not be read was dropped: the document's text here may no
        longer be the editor's. It is analysed as it is until the editor opens it again (or
        sends the whole text); diagnostics say so."""
        uri = params.get("textDocument", {}).get("uri") if isinstance(params, dict) else None
        document = self._document(uri) if isinstance(uri, str) else None
        if document is None:
            return
        log.warning("tile-lsp: %s may now differ from the editor's text; reopen it to resynchronise", uri)
        document.stale = True
        self.schedule(document.uri)

    @property
    def encoding(self) -> str:
        """The position encoding the client and server agreed on."""
        try:
            return _encoding(self.workspace.position_encoding)
        except RuntimeError:  # not initialised yet
            return "utf-16"

    def analysis(self, uri: str) -> Analysis | None:
        """The analysis of the document's current text (made now if a change is pending)."""
        document = self._document(uri)
        if document is None:
            return None
        current = self._analyses.get(unquote(uri))
        # Versions tell changes apart; only a document without one needs its text compared.
        if current is None or current.version != document.version or current.text is not document.text:
            current = self._analyze(uri)
        return current

    def is_current(self, uri: str, analysis: Analysis) -> bool:
        """Whether `analysis` is still of the document's text (long requests check between
        steps, and answer ContentModified when it is not)."""
        document = self._document(uri)
        return document is not None and document.version == analysis.version and document.text is analysis.text

    def _document(self, uri: str) -> Document | None:
        return self.documents.get(unquote(uri))

    def open_uris(self) -> list[str]:
        """The URIs of the open documents as the client sent them (diagnostics published
        under a decoded URI would not reach the client's document)."""
        return [document.uri for document in list(self.documents.values())]

    def _analyze(self, uri: str) -> Analysis | None:
        document = self._document(uri)
        if document is None:
            return None
        key = unquote(uri)
        start = time.perf_counter()
        previous = self._analyses.get(key)
        if previous is not None and previous.settings == self.settings:
            analysis = reanalyze(previous, document.text, document.version, document.changed, document.source)
        else:
            analysis = analyze(
                uri, document.text, document.version, self.settings, name=document.source.name, source=document.source
            )
        document.analysed()
        analysis.positions.encoding = self.encoding
        self._analyses[key] = analysis
        whole = previous is None or analysis.module is not previous.module
        del previous  # (garbage now, for `_settle_memory`)
        if whole and len(document.text) >= SETTLE_CHARS:
            _settle_memory()
        self.last_analysis_seconds = time.perf_counter() - start
        return analysis

    def publish(self, uri: str) -> None:
        self._cancel_pending(uri)
        analysis = self.analysis(uri)
        if analysis is None:
            return
        from .convert import diagnostic

        items = [diagnostic(d, analysis.positions, uri) for d in analysis.diagnostics]
        document = self._document(uri)
        if document is not None and document.stale:
            start = lsp.Position(line=0, character=0)
            message = "tile-lsp lost an edit of this document (the editor sent one it could not read): reopen it"
            items.insert(
                0,
                lsp.Diagnostic(
                    range=lsp.Range(start=start, end=start),
                    message=message,
                    severity=lsp.DiagnosticSeverity.Warning,
                    source="tileir",
                ),
            )
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
        if self._analyses.pop(unquote(uri), None) is not None and gc.get_freeze_count():
            gc.unfreeze()  # its analysis may be frozen: the collector may take it back
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def reanalyze_all(self) -> None:
        """Settings changed: analyze and publish every open document again, and ask the client
        to ask again for what it shows between edits (inlay hints, semantic tokens) where it
        can be asked: the settings may change those too (`tileir.inlayHints.enabled`)."""
        self._analyses.clear()
        for uri in self.open_uris():
            self._safely(self.publish, uri)
        workspace = self.client_capabilities.workspace
        if workspace is None:
            return
        if workspace.inlay_hint is not None and workspace.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)  # the answer (or an error) is of no use
        if workspace.semantic_tokens is not None and workspace.semantic_tokens.refresh_support:
            self.workspace_semantic_tokens_refresh(None)

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
    """The file name diagnostics carry (only used in messages), as the user sees it
    (`my file.tileir`, not `my%20file.tileir`)."""
    return unquote(uri.rsplit("/", 1)[-1]) or uri


def _structure_problem(error: BaseException | None) -> str:
    """What cattrs found wrong with a message, in one line ("required field missing @
    $.params.position")."""
    if isinstance(error, cattrs.ClassValidationError):
        return "; ".join(cattrs.transform_error(error))
    return str(error) or type(error).__name__


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
