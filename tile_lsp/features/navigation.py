"""Navigation: definition, references, highlight, rename, document and workspace symbols,
folding ranges and selection ranges.

Everything is answered from the document's `Analysis` (its index of occurrences) and
`compiler.text.outline`; IR spans go through `Analysis.span` with their anchor, so kernels
that were not re-parsed after an edit still answer at the right place.

Symbols are matched by name across the document (a reference in one kernel may have been
resolved by a parse that did not see the definer), except where several ops define the same
name (a module and its entry are both `@matmul`): then each keeps its own references.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from compiler.ir.core import Block, BlockArgument, Module, Operation, OpResult, Value
from compiler.ir.source import Span
from compiler.text.index import Kind, Occurrence
from compiler.text.outline import OutlineItem, enclosing_spans, folds, matches_query, outline, walk_outline

from ..server import feature

if TYPE_CHECKING:
    from ..documents import Analysis
    from ..server import TileLanguageServer

# MLIR's `suffix-id`: the part of `%name` / `^name` / `@name` after the sigil.
_SUFFIX_ID = re.compile(r"(?:[0-9]+|[A-Za-z_$.\-][A-Za-z0-9_$.\-]*)")
_NAVIGABLE = (Kind.VALUE, Kind.BLOCK, Kind.SYMBOL)


class RenameRefused(JsonRpcException):
    """A rename the server will not make; the client shows the message."""

    CODE = lsp.LSPErrorCodes.RequestFailed.value


def register(server: TileLanguageServer) -> None:
    @feature(server, lsp.TEXT_DOCUMENT_DEFINITION, empty=None)
    def definition(params: lsp.DefinitionParams):
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return None
        return find_definition(analysis, params.position, _definition_links(server))

    @feature(server, lsp.TEXT_DOCUMENT_REFERENCES, empty=None)
    def references(params: lsp.ReferenceParams):
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return None
        include = params.context.include_declaration if params.context is not None else True
        return find_references(analysis, params.position, include)

    @feature(server, lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, empty=None)
    def highlight(params: lsp.DocumentHighlightParams):
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return None
        return document_highlights(analysis, params.position)

    # A refused rename (`RenameRefused`, a JSON-RPC error) reaches the client as an error response.
    @feature(server, lsp.TEXT_DOCUMENT_PREPARE_RENAME, empty=None)
    def prepare(params: lsp.PrepareRenameParams):
        return _with_analysis(server, params, lambda a: prepare_rename(a, params.position))

    @feature(server, lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True), empty=None)
    def rename_symbol(params: lsp.RenameParams):
        return _with_analysis(
            server, params, lambda a: rename(a, params.position, params.new_name, _uses_document_changes(server))
        )

    @feature(server, lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, empty=None)
    def document_symbols(params: lsp.DocumentSymbolParams):
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return None
        caps = server.client_capabilities.text_document
        symbol_caps = caps.document_symbol if caps is not None else None
        hierarchical = bool(symbol_caps and symbol_caps.hierarchical_document_symbol_support)
        return document_symbol_list(analysis, hierarchical, _symbol_kinds(symbol_caps))

    @feature(server, lsp.WORKSPACE_SYMBOL, empty=None)
    def workspace_symbols(params: lsp.WorkspaceSymbolParams):
        workspace = server.client_capabilities.workspace
        kinds = _symbol_kinds(workspace.symbol if workspace is not None else None)
        found: list[lsp.SymbolInformation] = []
        for uri in server.open_uris():
            analysis = server.analysis(uri)
            if analysis is not None:
                found.extend(workspace_symbol_list(analysis, params.query, kinds))
        return found

    @feature(server, lsp.TEXT_DOCUMENT_FOLDING_RANGE, empty=None)
    def folding_ranges(params: lsp.FoldingRangeParams):
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return None
        caps = server.client_capabilities.text_document
        return folding_range_list(analysis, caps.folding_range if caps is not None else None)

    @feature(server, lsp.TEXT_DOCUMENT_SELECTION_RANGE, empty=None)
    def selection_ranges(params: lsp.SelectionRangeParams):
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return None
        return [selection_range(analysis, position) for position in params.positions]


# ---------------------------------------------------------------------------------- registration


def _with_analysis(server: TileLanguageServer, params: Any, answer: Callable[[Analysis], Any]) -> Any:
    analysis = server.analysis(params.text_document.uri)
    return answer(analysis) if analysis is not None else None


def _definition_links(server: TileLanguageServer) -> bool:
    caps = server.client_capabilities.text_document
    return bool(caps is not None and caps.definition is not None and caps.definition.link_support)


def _uses_document_changes(server: TileLanguageServer) -> bool:
    workspace = server.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace is not None else None
    return bool(edit is not None and edit.document_changes)


def _symbol_kinds(caps: object) -> frozenset[lsp.SymbolKind] | None:
    """The symbol kinds a client declared (None: only the protocol's original File..Array)."""
    kinds = getattr(caps, "symbol_kind", None)
    value_set = getattr(kinds, "value_set", None)
    return frozenset(value_set) if value_set else None


# ---------------------------------------------------------------------------------- entities


def _occurrence_at(analysis: Analysis, position: lsp.Position) -> Occurrence | None:
    """The value, block label or symbol under the cursor (a value inside a type still counts
    as the type: op names and types are not navigable)."""
    offset = analysis.offset(position)
    occ = analysis.at(offset)
    return occ if occ is not None and occ.kind in _NAVIGABLE else None


def _same_entity(analysis: Analysis, occ: Occurrence) -> list[Occurrence]:
    """Every occurrence of the entity `occ` stands for, definitions first."""
    found = analysis.references(occ)
    if occ.kind is not Kind.SYMBOL:
        return found
    definers = {_definer_key(analysis, o) for o in found if o.is_definition}
    if len(definers) <= 1:
        return found

    def key(o: Occurrence) -> int | None:
        found_key = _definer_key(analysis, o)
        return found_key if found_key in definers else None  # unresolved ones go together

    mine = key(occ)
    return [o for o in found if key(o) == mine]


def _definer_key(analysis: Analysis, occ: Occurrence) -> int | None:
    """Where the op a symbol occurrence resolved to starts in the document (None: unresolved).
    Parses of different kernels hold different objects for one op; its place identifies it."""
    op = occ.target
    if not isinstance(op, Operation) or op.span is None:
        return None
    return analysis.span(op.span, op).start


def _location_of(analysis: Analysis, occ: Occurrence) -> lsp.Location:
    return lsp.Location(uri=analysis.uri, range=analysis.positions.range(occ.span))


# ---------------------------------------------------------------------------------- definition, references


def find_definition(analysis: Analysis, position: lsp.Position, links: bool):
    occ = _occurrence_at(analysis, position)
    if occ is None:
        return None
    target = next((o for o in _same_entity(analysis, occ) if o.is_definition), None)
    if target is None:
        return None
    if not links:
        return [_location_of(analysis, target)]
    whole = _defining_span(analysis, target)
    return [
        lsp.LocationLink(
            target_uri=analysis.uri,
            target_range=analysis.positions.range(whole),
            target_selection_range=analysis.positions.range(target.span),
            origin_selection_range=analysis.positions.range(occ.span),
        )
    ]


def _defining_span(analysis: Analysis, definition: Occurrence) -> Span:
    """What a definition link spans: the op that defines a symbol or a result (a block
    argument and a block label span just themselves); it always holds the name."""
    target = definition.target
    op: Operation | None = None
    if definition.kind is Kind.SYMBOL and isinstance(target, Operation):
        op = target
    elif isinstance(target, OpResult):
        op = target.owner
    if op is None or op.span is None:
        return definition.span
    span = analysis.span(op.span, op)
    if not (span.start <= definition.span.start and definition.span.end <= span.end):
        return definition.span
    return span


def find_references(analysis: Analysis, position: lsp.Position, include_declaration: bool):
    occ = _occurrence_at(analysis, position)
    if occ is None:
        return None
    found = [o for o in _same_entity(analysis, occ) if include_declaration or not o.is_definition]
    return [_location_of(analysis, o) for o in sorted(found, key=lambda o: o.span.start)]


def document_highlights(analysis: Analysis, position: lsp.Position):
    occ = _occurrence_at(analysis, position)
    if occ is None:
        return None
    write, read = lsp.DocumentHighlightKind.Write, lsp.DocumentHighlightKind.Read
    return [
        lsp.DocumentHighlight(range=analysis.positions.range(o.span), kind=write if o.is_definition else read)
        for o in sorted(_same_entity(analysis, occ), key=lambda o: o.span.start)
    ]


# ---------------------------------------------------------------------------------- rename


def _renamable_at(analysis: Analysis, position: lsp.Position) -> Occurrence | None:
    """The occurrence to rename, None when the cursor is on nothing; refuses op names and types."""
    offset = analysis.offset(position)
    occ = analysis.at(offset)
    if occ is None:
        return None
    if occ.kind is Kind.OP:
        raise RenameRefused(
            message=f"'{analysis.text[occ.span.start : occ.span.end]}' is an op name: it cannot be renamed"
        )
    if occ.kind is Kind.TYPE:
        raise RenameRefused(message="types cannot be renamed (only SSA values, block labels and @symbols)")
    return occ


def _name_span(analysis: Analysis, occ: Occurrence) -> tuple[Span, str]:
    """The part of an occurrence a rename replaces — the name after the sigil, without a
    result group's `:2` or `#1` — and the name there now."""
    written = analysis.text[occ.span.start : occ.span.end]
    if occ.kind is Kind.VALUE:
        name = _base_name(occ.target) or ""
    elif occ.kind is Kind.BLOCK:
        name = getattr(occ.target, "label", None) or written[1:]
    else:
        name = occ.symbol_name or written[1:]
    if written[1 : 1 + len(name)] != name:  # e.g. a quoted `@"name"`: replace all after the sigil
        return Span(occ.span.start + 1, occ.span.end), written[1:]
    return Span(occ.span.start + 1, occ.span.start + 1 + len(name)), name


def _base_name(value: object) -> str | None:
    """A value's name as written after `%`: members of a group `%x:2` are named `x#0`, `x#1`."""
    name = getattr(value, "name", None)
    return name.split("#", 1)[0] if isinstance(name, str) else None


def prepare_rename(analysis: Analysis, position: lsp.Position):
    occ = _renamable_at(analysis, position)
    if occ is None:
        return None
    span, name = _name_span(analysis, occ)
    return lsp.PrepareRenamePlaceholder(range=analysis.positions.range(span), placeholder=name)


def rename(analysis: Analysis, position: lsp.Position, new_name: str, document_changes: bool):
    occ = _renamable_at(analysis, position)
    if occ is None:
        raise RenameRefused(message="nothing to rename here: put the cursor on a %value, a ^block or an @symbol")
    sigil = {Kind.VALUE: "%", Kind.BLOCK: "^", Kind.SYMBOL: "@"}[occ.kind]
    name = new_name[1:] if new_name.startswith(sigil) else new_name
    if not _SUFFIX_ID.fullmatch(name):
        raise RenameRefused(
            message=f"'{new_name}' is not a valid name: use letters, digits, '_', '$', '.' and '-' "
            f"(not starting with a digit unless all digits), e.g. {sigil}x_1"
        )
    occurrences = _rename_targets(analysis, occ, name)
    edits: dict[Span, str] = {}
    for o in occurrences:
        span, _ = _name_span(analysis, o)
        edits[span] = name
    text_edits = [
        lsp.TextEdit(range=analysis.positions.range(span), new_text=text)
        for span, text in sorted(edits.items(), key=lambda item: item[0].start)
    ]
    if document_changes:
        identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=analysis.uri, version=analysis.version)
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=identifier, edits=text_edits)])
    return lsp.WorkspaceEdit(changes={analysis.uri: text_edits})


def _rename_targets(analysis: Analysis, occ: Occurrence, name: str) -> list[Occurrence]:
    """The occurrences to rename to `name`, after checking that nothing else is called that."""
    if occ.kind is Kind.VALUE:
        value = occ.target
        assert isinstance(value, Value)
        if _base_name(value) != name and name in _value_names_in_scope(value):
            raise RenameRefused(message=f"%{name} is already defined in this kernel")
        found: list[Occurrence] = []
        for member in _group_of(value):  # `%x:2` renames `%x#0` and `%x#1` together
            found.extend(analysis.references(dataclasses.replace(occ, target=member)))
        return found
    if occ.kind is Kind.BLOCK:
        block = occ.target
        assert isinstance(block, Block)
        region = block.parent
        siblings = region.blocks if region is not None else []
        if any(b is not block and b.label == name for b in siblings):
            raise RenameRefused(message=f"^{name} is already a block of this region")
        if region is not None and any(block in op.successors for b in siblings for op in b.ops):
            raise RenameRefused(message="this block is a branch target; renaming its uses is not supported")
        return analysis.references(occ)
    same = _same_entity(analysis, occ)
    definition = next((o for o in same if o.is_definition), None)
    if occ.symbol_name != name:
        table = _symbol_table_key(analysis, definition)
        for other in analysis.occurrences():
            if (
                other.kind is Kind.SYMBOL
                and other.is_definition
                and other.symbol_name == name
                and _symbol_table_key(analysis, other) == table
            ):
                raise RenameRefused(message=f"@{name} is already defined in the same module")
    return same


def _symbol_table_key(analysis: Analysis, definition: Occurrence | None) -> int | None:
    """Where the symbol table around a definition starts (-1 at the document's top level)."""
    if definition is None or not isinstance(definition.target, Operation):
        return -1
    parent = definition.target.parent_op
    if parent is None or parent.span is None:
        return -1
    return analysis.span(parent.span, parent).start


def _group_of(value: Value) -> list[Value]:
    """The results written together as `%x:N` (just `value` for any other value)."""
    if isinstance(value, OpResult) and value.name and "#" in value.name:
        base = _base_name(value)
        return [r for r in value.owner.results if r.name and _base_name(r) == base and "#" in r.name]
    return [value]


def _value_names_in_scope(value: Value) -> set[str]:
    """The names of the values of the isolated op (kernel) `value` is defined in: a new name
    must not be one of them (the parser keeps one name table per isolated region)."""
    scope = _isolated_scope(value)
    names: set[str] = set()
    if scope is None:
        return names

    def collect(op: Operation) -> None:  # `op`'s results and what its regions define
        for result in op.results:
            if result.name:
                names.add(result.name.split("#", 1)[0])
        for region in op.regions:
            for block in region.blocks:
                names.update(arg.name for arg in block.arguments if arg.name)
                for inner in block.ops:
                    if not inner.is_isolated_from_above:
                        collect(inner)

    names.update(arg.name for region in scope.regions for block in region.blocks for arg in block.arguments if arg.name)
    for region in scope.regions:
        for block in region.blocks:
            for inner in block.ops:
                if not inner.is_isolated_from_above:
                    collect(inner)
    return names


def _isolated_scope(value: Value) -> Operation | None:
    if isinstance(value, OpResult):
        op: Operation | None = value.owner.parent_op
    elif isinstance(value, BlockArgument):
        region = value.owner.parent
        op = region.parent if region is not None else None
    else:
        return None
    while op is not None and not op.is_isolated_from_above:
        op = op.parent_op
    return op


# ---------------------------------------------------------------------------------- symbols

_SYMBOL_KIND = {
    "module": lsp.SymbolKind.Module,
    "entry": lsp.SymbolKind.Function,
    "function": lsp.SymbolKind.Function,
    "global": lsp.SymbolKind.Variable,
    "symbol": lsp.SymbolKind.Object,
}


def _kind_of(item: OutlineItem, allowed: frozenset[lsp.SymbolKind] | None) -> lsp.SymbolKind:
    kind = lsp.SymbolKind.Constant if item.kind == "global" and item.constant else _SYMBOL_KIND[item.kind]
    if allowed is None or kind in allowed:
        return kind  # every kind used here is among the protocol's original ones
    return lsp.SymbolKind.Variable if kind in (lsp.SymbolKind.Constant, lsp.SymbolKind.Object) else lsp.SymbolKind.File


def _outline(analysis: Analysis) -> list[OutlineItem]:
    return outline(analysis.module, analysis.span)


def _name_occurrence(analysis: Analysis, item: OutlineItem) -> Span:
    """Where the item's `@name` is written (its whole span if not found)."""
    op = item.op
    head_end = item.span.end
    for region in op.regions:
        if region.span is not None:
            head_end = analysis.span(region.span, region).start
            break
    for occ in analysis.occurrences(item.span.start, head_end):
        if occ.kind is Kind.SYMBOL and occ.is_definition and occ.symbol_name == item.name:
            return occ.span
    return item.span


def document_symbol_list(analysis: Analysis, hierarchical: bool, kinds: frozenset[lsp.SymbolKind] | None):
    items = _outline(analysis)
    if hierarchical:

        def convert(item: OutlineItem) -> lsp.DocumentSymbol:
            return lsp.DocumentSymbol(
                name=item.name,
                detail=item.detail or None,
                kind=_kind_of(item, kinds),
                range=analysis.positions.range(item.span),
                selection_range=analysis.positions.range(_name_occurrence(analysis, item)),
                children=[convert(child) for child in item.children],
            )

        return [convert(item) for item in items]
    return [
        lsp.SymbolInformation(
            name=item.name,
            kind=_kind_of(item, kinds),
            location=lsp.Location(uri=analysis.uri, range=analysis.positions.range(item.span)),
            container_name=container.name if container is not None else None,
        )
        for item, container in walk_outline(items)
    ]


def workspace_symbol_list(analysis: Analysis, query: str, kinds: frozenset[lsp.SymbolKind] | None):
    return [
        lsp.SymbolInformation(
            name=item.name,
            kind=_kind_of(item, kinds),
            location=lsp.Location(uri=analysis.uri, range=analysis.positions.range(_name_occurrence(analysis, item))),
            container_name=container.name if container is not None else None,
        )
        for item, container in walk_outline(_outline(analysis))
        if matches_query(item.name, query)
    ]


# ---------------------------------------------------------------------------------- folding, selection


def folding_range_list(analysis: Analysis, caps: lsp.FoldingRangeClientCapabilities | None):
    line_only = bool(caps is not None and caps.line_folding_only)
    limit = caps.range_limit if caps is not None and caps.range_limit else None
    collapsed = bool(caps is not None and caps.folding_range is not None and caps.folding_range.collapsed_text)
    found: list[lsp.FoldingRange] = []
    for fold in _folds(analysis):
        start_character = end_character = None
        if not line_only:
            start_character = analysis.positions.position(fold.start).character
            end_character = analysis.positions.position(fold.end).character
        comment = fold.kind == "comment"
        found.append(
            lsp.FoldingRange(
                start_line=fold.start_line,
                end_line=fold.end_line,
                start_character=start_character,
                end_character=end_character,
                kind=lsp.FoldingRangeKind.Comment if comment else None,
                collapsed_text=("// ..." if comment else "{...}") if collapsed else None,
            )
        )
    return found[:limit] if limit is not None else found


def _folds(analysis: Analysis) -> list:
    """The regions' folds, and the comments' from the units' comments (after a kernel was
    parsed again, `analysis.module.comments` is the first parse's: the comments as they were
    then, where they were then)."""
    if analysis.pristine:
        return folds(analysis.module, analysis.source, analysis.span)
    regions = [f for f in folds(analysis.module, analysis.source, analysis.span) if f.kind != "comment"]
    only_comments = Module(analysis.source)  # a module of nothing but the document's comments
    only_comments.comments = analysis.comments()
    found = regions + folds(only_comments, analysis.source)
    found.sort(key=lambda f: (f.start_line, -f.end_line))
    return found


def selection_range(analysis: Analysis, position: lsp.Position) -> lsp.SelectionRange:
    """From the word under the cursor outward to the whole document, each range strictly
    containing the one before."""
    offset = analysis.offset(position)
    spans: list[Span] = []
    op = analysis.op_at(offset)
    if op is not None and op.span is not None:
        head = analysis.span(op.span, op)
        for region in op.regions:  # inside an op's header only: its body has ops of its own
            if region.span is not None:
                head = Span(head.start, analysis.span(region.span, region).start)
                break
        if head.start <= offset <= head.end:
            around = [o for o in analysis.occurrences(head.start, offset + 1) if o.span.start <= offset <= o.span.end]
            spans.extend(sorted((o.span for o in around), key=lambda s: s.end - s.start))
        spans.extend(enclosing_spans(op, offset, analysis.span))
    spans.append(Span(0, len(analysis.text)))
    chain: list[Span] = []
    for span in spans:
        if not chain:
            if span.start <= offset <= span.end:
                chain.append(span)
            continue
        last = chain[-1]
        if span.start <= last.start and last.end <= span.end and span != last:
            chain.append(span)
    if not chain:  # an empty document
        chain.append(Span(offset, offset))
    selection: lsp.SelectionRange | None = None
    for span in reversed(chain):
        selection = lsp.SelectionRange(range=analysis.positions.range(span), parent=selection)
    assert selection is not None
    return selection
