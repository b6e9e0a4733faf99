"""Language-server latency, through a real client talking to `python -m tile_lsp` over stdio.

    python benchmarks/lsp.py [--sizes 1000,10000,50000] [--edits 15] [--queries 30]

For documents of each size (one `cuda_tile.module` of the project's example kernels, repeated
under new names) it measures, in the same run:

- open -> publishDiagnostics, against the anchor: the core's own parse+verify of the same
  text in this process (`compiler.verify.check_text`). `open/core` is the server's overhead on
  a whole-document analysis (parse with references recorded, index, verify).
- didChange (a comment typed at the end of the same line of the same kernel in the middle of
  each document, then taken out) -> publishDiagnostics, median of --edits, against the same
  anchor; the documents are all open and the edits go round them (one per document per
  round), so that the sizes are compared on the same minutes of this machine. `change/core` is the
  issue's "server overhead" ratio (target <= 1.5); since only the edited kernel is parsed and
  verified again, it falls as the document grows.
- the same edit's time per kernel size: `change` should stay flat across document sizes (it
  grows with the kernel, not the file).
- hover and completion latency (median of --queries requests at positions inside kernels).
- whole-document requests: `textDocument/semanticTokens/full` the first time (every kernel
  tokenized) and again after an edit (only the edited kernel tokenized again), then
  `semanticTokens/full/delta` after another edit (what an editor asks: only the change is sent), and
  `textDocument/formatting` (target: each <= 1 s at 50,000 lines).

The last lines compare the edit -> diagnostics time of the largest document with the
smallest's: it should not grow with the document (no work in proportion to its size per
keystroke); then, in this process, the server's work per keystroke while a whole kernel is
typed between two others and after the last (brackets closed by the editor as typed, and
not: typed last, a `{` takes the module's `}` until the kernel's own is typed), at the smallest
and the largest size. The whole-document times above are round trips through pygls's client, whose
decoding of megabytes of numbers is part of them; the server's own work on the largest
document is timed in this process too (best of --repeat): semantic tokens the first time and
after an edit, formatting as opened and after edits inside kernels.

Diagnostics are published without the debounce delay (setting `diagnostics.debounceMs` = 0),
so the times are the server's work plus the protocol round trip.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from text import build_module  # noqa: E402  (benchmarks/text.py builds the big module)

from compiler.verify import check_text  # noqa: E402


class Client(LanguageClient):
    def __init__(self) -> None:
        super().__init__("tile-lsp-bench", "1")
        self.published: dict[str, asyncio.Event] = {}
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}


def _make_client() -> Client:
    client = Client()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        event = client.published.get(params.uri)
        if event is not None:
            event.set()

    @client.feature(lsp.WORKSPACE_CONFIGURATION)
    def configuration(params: lsp.ConfigurationParams) -> list[object]:
        return [{"diagnostics": {"debounceMs": 0}} for _ in params.items]

    return client


async def _await_publish(client: Client, uri: str, send) -> float:
    event = client.published.setdefault(uri, asyncio.Event())
    event.clear()
    start = time.perf_counter()
    send()
    await asyncio.wait_for(event.wait(), 600)
    return time.perf_counter() - start


def _core_seconds(text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        check_text(text, "bench.tileir")
        best = min(best, time.perf_counter() - start)
    return best


def _kernel_lines(text: str) -> list[int]:
    """0-based lines inside kernels (indented op lines), in order."""
    return [i for i, line in enumerate(text.split("\n")) if line.startswith("    %")]


class _Doc:
    """One open benchmark document and what was measured on it."""

    def __init__(self, size: int) -> None:
        files = sorted((ROOT / "examples").glob("*.tileir"))
        self.text, _, self.lines = build_module(files, size)
        self.uri = f"file:///bench/doc_{size}.tileir"
        self.core = _core_seconds(self.text, 2 if size > 5000 else 3)
        self.candidates = _kernel_lines(self.text)
        # The same line of the same kernel at every size (the module is grouped by kernel: the
        # middle kernel is a copy of the same one): the edit's own cost does not change with size.
        lines = self.text.split("\n")
        entries = [i for i, line in enumerate(lines) if line.startswith("  entry @")]
        self.middle = next(i for i in self.candidates if i > entries[len(entries) // 2]) + 4
        self.line_length = len(lines[self.middle])
        self.version = 1
        self.opened = 0.0
        self.change_times: list[float] = []


async def _open(client: Client, doc: _Doc) -> None:
    doc.opened = await _await_publish(
        client,
        doc.uri,
        lambda: client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=doc.uri, language_id="tileir", version=1, text=doc.text)
            )
        ),
    )
    if client.diagnostics.get(doc.uri):
        raise SystemExit(
            f"benchmarks/lsp.py: the {doc.lines}-line document has diagnostics: {client.diagnostics[doc.uri][:2]}"
        )


async def _edit(client: Client, doc: _Doc, n: int) -> None:
    """Type a comment at the end of a line in the middle kernel (n even), or take it out."""
    at = lsp.Position(line=doc.middle, character=doc.line_length)
    after = lsp.Position(line=doc.middle, character=doc.line_length + 3)
    insert = n % 2 == 0
    rng = lsp.Range(start=at, end=at) if insert else lsp.Range(start=at, end=after)
    doc.version += 1
    change = lsp.TextDocumentContentChangePartial(range=rng, text=" //" if insert else "")
    params = lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
        content_changes=[change],
    )
    doc.change_times.append(await _await_publish(client, doc.uri, lambda: client.text_document_did_change(params)))


async def _queries(client: Client, doc: _Doc, queries: int) -> dict[str, float]:
    """Hover, completion and the whole-document requests on `doc` (as opened), then close it."""
    doc_lines = doc.text.split("\n")
    hover_times, completion_times = [], []
    step = max(1, len(doc.candidates) // queries)
    ident = lsp.TextDocumentIdentifier(uri=doc.uri)
    for i in doc.candidates[::step][:queries]:
        column = doc_lines[i].index("%") + 1  # on the first value of the line
        position = lsp.Position(line=i, character=column)
        start = time.perf_counter()
        await client.text_document_hover_async(lsp.HoverParams(text_document=ident, position=position))
        hover_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        await client.text_document_completion_async(lsp.CompletionParams(text_document=ident, position=position))
        completion_times.append(time.perf_counter() - start)
    whole = await _whole_document(client, ident, doc.middle, doc.version)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=ident))
    return {
        **whole,
        "lines": doc.lines,
        "core": doc.core,
        "open": doc.opened,
        "change": statistics.median(doc.change_times),
        "hover": statistics.median(hover_times) if hover_times else float("nan"),
        "completion": statistics.median(completion_times) if completion_times else float("nan"),
    }


async def _whole_document(client: Client, ident: lsp.TextDocumentIdentifier, line: int, version: int) -> dict:
    """Semantic tokens of the whole document (first, and after an edit) and formatting."""
    start = time.perf_counter()
    first = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=ident))
    tokens = time.perf_counter() - start
    at = lsp.Position(line=line, character=0)
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=ident.uri, version=version + 1),
            content_changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text=" ")],
        )
    )
    start = time.perf_counter()
    again = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=ident))
    tokens_again = time.perf_counter() - start
    # What an editor asks after an edit: the delta since the last answer.
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=ident.uri, version=version + 2),
            content_changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text=" ")],
        )
    )
    start = time.perf_counter()
    delta = await client.text_document_semantic_tokens_full_delta_async(
        lsp.SemanticTokensDeltaParams(text_document=ident, previous_result_id=again.result_id or "")
    )
    tokens_delta = time.perf_counter() - start
    if not isinstance(delta, lsp.SemanticTokensDelta):
        raise SystemExit("benchmarks/lsp.py: the server answered a delta request with all the tokens")
    options = lsp.FormattingOptions(tab_size=2, insert_spaces=True)
    # Formatting of the text as opened (the edits above are taken out again first).
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=ident.uri, version=version + 3),
            content_changes=[
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(start=at, end=lsp.Position(line=line, character=2)), text=""
                )
            ],
        )
    )
    start = time.perf_counter()
    await client.text_document_formatting_async(lsp.DocumentFormattingParams(text_document=ident, options=options))
    formatting = time.perf_counter() - start
    if not first.data or len(again.data) != len(first.data):
        raise SystemExit("benchmarks/lsp.py: semantic tokens changed across an edit of one space")
    return {"tokens": tokens, "tokens_again": tokens_again, "tokens_delta": tokens_delta, "format": formatting}


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


# A kernel typed between two others, one character at a time, brackets closed as they are
# typed (as VS Code does).
_TYPED_KERNEL = """  entry @typed(%a: tile<ptr<f32>>, %n: tile<i32>) {
    %c = constant <f32: 1.0> : tile<f32>
    return
  }
"""


def _typing_a_kernel(size: int, auto_close: bool, last: bool) -> tuple[float, float, int, int]:
    """Per keystroke, the server's work (in this process) while a kernel is typed between the
    two middle kernels of a `size`-line document (`last`: after the last kernel, before the
    module's `}`), brackets closed as typed (as VS Code does) or not (as a plain editor): the
    edit applied to the document as the server's store applies a didChange (text, line index,
    changed region), then the re-analysis. (median s, worst s, keystrokes analysed from
    scratch, keystrokes)."""
    from tile_lsp.documents import Settings, analyze
    from tile_lsp.incremental import reanalyze
    from tile_lsp.store import DocumentSource, merge_change

    files = sorted((ROOT / "examples").glob("*.tileir"))
    text, _, _ = build_module(files, size)
    lines = text.split("\n")
    entries = [i for i, line in enumerate(lines) if line.startswith("  entry @")]
    after = len(lines) - 2 if last else entries[len(entries) // 2]  # the module's `}`, or a kernel
    at = sum(len(x) + 1 for x in lines[:after]) - 1  # after a kernel's `}`
    from tile_lsp.server import SETTLE_CHARS, _settle_memory

    gc.collect()  # what this process made before is not the server's
    source = DocumentSource(text, "bench.tileir")
    analysis = analyze("file:///bench.tileir", text, 1, Settings(), source=source)
    if len(text) >= SETTLE_CHARS:
        _settle_memory()  # as the server does after a whole analysis
    closers = {"(": ")", "{": "}", "[": "]"}
    pending: list[str] = []
    cursor = at
    times: list[float] = []
    fresh = 0
    # A new line after the kernel's `}` (Enter), then the kernel.
    for version, ch in enumerate("\n" + _TYPED_KERNEL.rstrip("\n"), start=2):
        start = time.perf_counter()
        if auto_close and pending and ch == pending[-1]:  # typed over the closer the editor put there
            pending.pop()
            cursor += 1
            continue
        inserted = ch + closers.get(ch, "") if auto_close else ch
        if auto_close and ch in closers:
            pending.append(closers[ch])
        source = source.edited(cursor, cursor, inserted)
        region = merge_change(None, cursor, cursor, len(inserted))
        cursor += 1
        result = reanalyze(analysis, source.text, version, region, source)
        times.append(time.perf_counter() - start)
        fresh += result.module is not analysis.module
        analysis = result
    return statistics.median(times), max(times), fresh, len(times)


def _print_server_work(size: int, repeat: int) -> None:
    """The server's own work for whole-document requests, in this process."""
    from tile_lsp.documents import Settings, analyze
    from tile_lsp.features.formatting import format_text, module_of
    from tile_lsp.features.tokens import full_data
    from tile_lsp.incremental import reanalyze

    files = sorted((ROOT / "examples").glob("*.tileir"))
    text, _, lines = build_module(files, size)
    analysis = analyze("file:///bench.tileir", text, 1, Settings())

    def tokens_afresh() -> None:
        for unit in analysis.units:
            unit.tokens = None
        asyncio.run(full_data(analysis))

    first = _best(tokens_afresh, repeat)
    # What the round trip above spends in this benchmark's own client (pygls: json.loads, then
    # cattrs building lsprotocol's SemanticTokens) on the same payload: an editor decodes JSON
    # natively, so the server's part of the round trip is the difference.
    import json

    from pygls.protocol import default_converter

    payload = '{"jsonrpc":"2.0","id":1,"result":{"data":' + asyncio.run(full_data(analysis)).json + "}}"
    converter = default_converter()
    decode = _best(lambda: converter.structure(json.loads(payload)["result"], lsp.SemanticTokens), repeat)
    format_opened = _best(lambda: format_text(text, "bench.tileir", module_of(analysis)), repeat)
    # Edits inside kernels spread over the document (one space at the start of a line each).
    candidates = _kernel_lines(text)
    doc = text.split("\n")
    for version, i in enumerate(candidates[:: max(1, len(candidates) // 5)][:5], start=2):
        doc[i] = " " + doc[i]
        analysis = reanalyze(analysis, "\n".join(doc), version)
    edited = "\n".join(doc)
    again = _best(lambda: asyncio.run(full_data(analysis)), repeat)
    format_edited = _best(lambda: format_text(edited, "bench.tileir", module_of(analysis)), repeat)
    print(
        f"server work at {lines:,} lines (in this process): semantic tokens {first:.2f} s, after edits {again:.3f} s; "
        f"formatting {format_opened:.2f} s as opened, {format_edited:.2f} s after edits (target <= 1 s each)"
    )
    print(
        f"the benchmark client's own decoding of those tokens ({len(payload) / 1e6:.1f} MB of JSON into "
        f"lsprotocol objects): {decode:.2f} s of the round trip"
    )


async def _main(sizes: list[int], edits: int, queries: int) -> int:
    client = _make_client()
    await client.start_io(sys.executable, "-m", "tile_lsp")
    capabilities = lsp.ClientCapabilities(
        workspace=lsp.WorkspaceClientCapabilities(configuration=True),
        text_document=lsp.TextDocumentClientCapabilities(
            hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
        ),
    )
    await client.initialize_async(
        lsp.InitializeParams(
            capabilities=capabilities,
            process_id=None,
            root_uri=None,
            initialization_options={"tileir": {"diagnostics": {"debounceMs": 0}}},
        )
    )
    client.initialized(lsp.InitializedParams())
    print(f"server: {sys.executable} -m tile_lsp (stdio); anchor `core` = check_text (parse+verify) in this process")
    header = (
        f"{'lines':>7} {'core ms':>9} {'open ms':>9} {'open/core':>9} {'change ms':>10} "
        f"{'change/core':>11} {'hover ms':>9} {'compl ms':>9} {'tokens ms':>10} {'tokens2 ms':>10} {'delta ms':>9} "
        f"{'format ms':>10}"
    )
    print(header)
    # Every document is opened first; then the edits go round them (one edit of each document
    # per round: this machine's speed drifts within minutes, and the sizes are compared).
    docs = [_Doc(size) for size in sizes]
    for doc in docs:
        await _open(client, doc)
    for n in range(edits + edits % 2):  # (an even number: each document is left as opened)
        for doc in docs:
            await _edit(client, doc, n)
    results = []
    for doc in docs:
        r = await _queries(client, doc, queries)
        results.append(r)
        print(
            f"{r['lines']:>7,} {r['core'] * 1e3:9.1f} {r['open'] * 1e3:9.1f} {r['open'] / r['core']:9.2f} "
            f"{r['change'] * 1e3:10.1f} {r['change'] / r['core']:11.3f} {r['hover'] * 1e3:9.1f} "
            f"{r['completion'] * 1e3:9.1f} {r['tokens'] * 1e3:10.1f} {r['tokens_again'] * 1e3:10.1f} "
            f"{r['tokens_delta'] * 1e3:9.1f} "
            f"{r['format'] * 1e3:10.1f}",
            flush=True,
        )
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    if len(results) > 1:
        first, last = results[0], results[-1]
        rounds = [b / a for a, b in zip(docs[0].change_times, docs[-1].change_times)]
        print(
            f"edit -> diagnostics, {last['lines']:,} vs {first['lines']:,} lines: "
            f"{statistics.median(rounds):.2f}x (median of the rounds' ratios; {min(rounds):.2f}-{max(rounds):.2f}) "
            f"for a {last['lines'] / first['lines']:.0f}x larger document (the same line of the same kernel "
            "edited; target: about 1x)"
        )
    big = results[-1]
    print(
        f"whole document at {big['lines']:,} lines: semantic tokens {big['tokens']:.2f} s "
        f"(after an edit {big['tokens_again']:.2f} s; "
        f"as a delta {big['tokens_delta']:.3f} s), formatting {big['format']:.2f} s (target <= 1 s each)"
    )
    worst = max(r["change"] / r["core"] for r in results)
    print(f"server overhead (change -> diagnostics / core parse+verify), worst: {worst:.3f} (target <= 1.5)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))  # the first paragraph
    ap.add_argument("--sizes", default="1000,10000,50000", help="document sizes in lines, comma-separated")
    ap.add_argument("--edits", type=int, default=15, help="didChange edits per size (median reported)")
    ap.add_argument("--queries", type=int, default=30, help="hover and completion requests per size")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each in-process timing (best reported)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    status = asyncio.run(_main(sizes, args.edits, args.queries))
    _print_server_work(sizes[-1], args.repeat)
    for last in (False, True):
        for auto_close in (True, False):
            for size in (sizes[0], sizes[-1]):
                median, worst, fresh, count = _typing_a_kernel(size, auto_close, last)
                print(
                    f"typing a kernel {'after the last' if last else 'between two'} at {size:,} lines (in this "
                    f"process, {count} keystrokes, brackets {'closed as typed' if auto_close else 'typed by hand'}): "
                    f"{median * 1e3:.1f} ms median, {worst * 1e3:.1f} ms worst per keystroke; "
                    f"{fresh} analysed from scratch"
                )
    return status


if __name__ == "__main__":
    sys.exit(main())
