"""Completion and signature help, from the core's reading of the line under the cursor
(`compiler.text.completion`) and the op table."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from compiler.dialect import OPS, OpDef, lookup_op
from compiler.ir.core import Operation
from compiler.ir.enums import EnumDef
from compiler.ir.source import Span
from compiler.text import completion as core
from compiler.text import lexer as L

from ..server import feature

if TYPE_CHECKING:
    from ..documents import Analysis
    from ..server import TileLanguageServer

TRIGGER_CHARACTERS = ["%", "@", "!", "<", ":"]
SIGNATURE_TRIGGERS = [" ", ","]


def register(server: TileLanguageServer) -> None:
    @feature(
        server,
        lsp.TEXT_DOCUMENT_COMPLETION,
        lsp.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=False),
        empty=None,
    )
    def completion(params: lsp.CompletionParams) -> lsp.CompletionList | None:
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return None
        items = completion_items(analysis, analysis.offset(params.position), server.client_capabilities)
        return lsp.CompletionList(is_incomplete=False, items=items)

    @feature(
        server,
        lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
        lsp.SignatureHelpOptions(trigger_characters=SIGNATURE_TRIGGERS),
        empty=None,
    )
    def signature_help(params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return None
        return signature_at(analysis, analysis.offset(params.position), server.client_capabilities)


# ------------------------------------------------------------------ capabilities


class _Caps:
    """The parts of the client's capabilities completion and signature help look at."""

    def __init__(self, capabilities: lsp.ClientCapabilities | None) -> None:
        document = capabilities.text_document if capabilities is not None else None
        completion = document.completion if document is not None else None
        item = completion.completion_item if completion is not None else None
        self.snippets = bool(item and item.snippet_support)
        formats = (item.documentation_format if item is not None else None) or ()
        self.markdown = lsp.MarkupKind.Markdown in formats
        kinds = completion.completion_item_kind if completion is not None else None
        # Without a value set the client knows the kinds of LSP 1.0: Text .. Reference.
        self.kinds = set(kinds.value_set) if kinds is not None and kinds.value_set else set(range(1, 19))
        signature = document.signature_help if document is not None else None
        info = signature.signature_information if signature is not None else None
        self.signature_markdown = bool(
            info and info.documentation_format and lsp.MarkupKind.Markdown in info.documentation_format
        )
        parameter = info.parameter_information if info is not None else None
        self.label_offsets = bool(parameter and parameter.label_offset_support)
        self.active_parameter = bool(info and info.active_parameter_support)

    def kind(self, wanted: lsp.CompletionItemKind, fallback: lsp.CompletionItemKind) -> lsp.CompletionItemKind:
        return wanted if wanted.value in self.kinds else fallback

    def documentation(self, markdown: str, plain: str) -> lsp.MarkupContent | str:
        if self.markdown:
            return lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown)
        return plain


# ------------------------------------------------------------------ completion


def _line_before(analysis: Analysis, offset: int) -> tuple[str, int]:
    text = analysis.text
    start = text.rfind("\n", 0, offset) + 1
    return text[start:offset], start


def _local(analysis: Analysis, op: Operation) -> int:
    """How far `op`'s IR spans are from document offsets (see Analysis.span)."""
    return analysis.span(Span(0, 0), op).start


def _level(analysis: Analysis, offset: int) -> tuple[str, Operation | None]:
    """Where the cursor is: "top", "module" (a cuda_tile.module body) or "body"; and the
    innermost op around it."""
    op = analysis.op_at(offset)
    # The innermost op whose *body* holds the cursor (the op found may end on the cursor's line).
    body = op
    while body is not None and not any(
        r.span is not None and analysis.span(r.span, body).start < offset <= analysis.span(r.span, body).end
        for r in body.regions
    ):
        body = body.parent_op
    if body is None:
        return "top", op
    if body.name == "cuda_tile.module":
        return "module", op
    return "body", op


def completion_items(
    analysis: Analysis, offset: int, capabilities: lsp.ClientCapabilities | None
) -> list[lsp.CompletionItem]:
    offset = max(0, min(offset, len(analysis.text)))
    caps = _Caps(capabilities)
    line, line_start = _line_before(analysis, offset)
    level, around = _level(analysis, offset)
    context = core.cursor_context(line, line_start, level)
    replace = analysis.positions.range(Span(context.start, offset))
    make = _ItemMaker(caps, replace)
    kind = context.kind
    if kind == "op":
        return [make.op(opdef) for opdef in core.ops_for_level(level)]
    if kind in ("type", "element_type"):
        return _type_items(analysis, make, element_only=kind == "element_type")
    if kind == "enum":
        items = []
        for enum, wrap in zip(context.enums, context.wrapped):
            items.extend(make.enum_case(enum, case, wrap) for case in enum.cases)
        items.extend(make.keyword(word) for word in context.keywords)
        return items
    if kind == "value":
        if around is None:
            return []
        shift = _local(analysis, around)
        values = core.values_in_scope(around, offset - shift)
        seen: set[str] = set()
        items = []
        for value in values:
            if value.name in seen:
                continue
            seen.add(value.name)
            items.append(make.value(value))
        return items
    if kind == "symbol":
        symbols = core.module_symbols(analysis.module)
        if context.op_name in ("get_global", "cuda_tile.get_global"):
            symbols = [s for s in symbols if s.kind == "global"]
        return [make.symbol(s) for s in symbols if s.kind != "module" or level == "top"]
    if kind == "type_alias":
        return [make.alias("!" + name, str(t), "type alias") for name, t in analysis.module.type_aliases.items()]
    if kind == "attribute_alias":
        return [
            make.alias("#" + name, str(a), "attribute alias") for name, a in analysis.module.attribute_aliases.items()
        ]
    return []


def _type_items(analysis: Analysis, make: _ItemMaker, element_only: bool) -> list[lsp.CompletionItem]:
    """The types that may come next. Where a whole type goes (after an op's `:`) a bare
    element type (`f32`) is almost never right (ops take tiles): `tile<` comes first, then
    the other types, the element types last (sortText)."""
    if element_only:
        items = [make.element_type(name, "0") for name in core.element_type_names()]
        return items + [make.type_constructor("ptr", "1")]
    items = [make.type_constructor(name, "0" if name == "tile" else "1") for name in core.PARAMETRIC_TYPES]
    items.extend(make.plain_type(name, "1") for name in core.PLAIN_TYPES)
    items.extend(
        make.alias("!" + name, str(t), "type alias", lsp.CompletionItemKind.TypeParameter, sort="1")
        for name, t in analysis.module.type_aliases.items()
    )
    items.extend(make.element_type(name, "2") for name in core.element_type_names())
    return items


_TYPE_HELP = {
    "tile": "A tile: a statically shaped array of elements (`tile<4x8xf32>`, `tile<f32>` for a scalar).",
    "ptr": "A pointer to elements of the given type in global memory (`ptr<f32>`).",
    "tensor_view": "A view of a tensor in global memory: shape and strides, `?` where dynamic.",
    "partition_view": "A tensor view cut into tiles of a static shape: ceildiv(S, T) tiles per dimension.",
    "strided_view": "A tensor view traversed by tiles at given traversal strides.",
    "gather_scatter_view": "A tensor view indexed element by element along a sparse dimension.",
    "token": "A memory token ordering memory operations.",
}
_TYPE_SNIPPETS = {
    "tile": "tile<${1:f32}>",
    "ptr": "ptr<${1:f32}>",
    "tensor_view": "tensor_view<${1:?}x${2:f32}, strides=[${3:1}]>",
    "partition_view": "partition_view<tile=(${1:64}), ${2:tensor_view<?xf32, strides=[1]>}>",
    "strided_view": "strided_view<tile=(${1:64}), traversal_strides=[${2:64}], ${3:tensor_view<?xf32, strides=[1]>}>",
    "gather_scatter_view": (
        "gather_scatter_view<tile=(${1:64}), ${2:tensor_view<?xf32, strides=[1]>}, sparse_dim=${3:0}>"
    ),
}


class _ItemMaker:
    def __init__(self, caps: _Caps, replace: lsp.Range) -> None:
        self.caps = caps
        self.replace = replace

    def _item(
        self,
        label: str,
        kind: lsp.CompletionItemKind,
        text: str | None = None,
        snippet: str | None = None,
        detail: str | None = None,
        documentation: lsp.MarkupContent | str | None = None,
        sort: str | None = None,
    ) -> lsp.CompletionItem:
        use_snippet = snippet is not None and self.caps.snippets
        new_text = snippet if use_snippet else (text if text is not None else label)
        return lsp.CompletionItem(
            label=label,
            kind=kind,
            detail=detail,
            documentation=documentation,
            filter_text=label,
            sort_text=sort,
            text_edit=lsp.TextEdit(range=self.replace, new_text=new_text),
            insert_text_format=lsp.InsertTextFormat.Snippet if use_snippet else lsp.InsertTextFormat.PlainText,
        )

    def op(self, opdef: OpDef) -> lsp.CompletionItem:
        snippet = core.op_snippet(opdef, True)
        plain = core.op_snippet(opdef, False)
        return self._item(
            opdef.mnemonic,
            self.caps.kind(lsp.CompletionItemKind.Function, lsp.CompletionItemKind.Text),
            text=plain,
            snippet=snippet if snippet != plain else None,
            detail=f"{opdef.name} (since {opdef.since})",
            documentation=_op_documentation(opdef, self.caps),
        )

    def enum_case(self, enum: EnumDef, case, wrap: str) -> lsp.CompletionItem:
        label = f"{wrap}<{case.keyword}>" if wrap else case.keyword
        return self._item(
            label,
            self.caps.kind(lsp.CompletionItemKind.EnumMember, lsp.CompletionItemKind.Value),
            detail=f"{enum.mnemonic} (since {case.since})",
            documentation=self.caps.documentation(f"{case.doc}\n\n{enum.doc}", f"{case.doc}\n\n{enum.doc}"),
        )

    def keyword(self, word: str) -> lsp.CompletionItem:
        return self._item(word, lsp.CompletionItemKind.Keyword, detail="optional keyword")

    def value(self, value) -> lsp.CompletionItem:
        return self._item(f"%{value.name}", lsp.CompletionItemKind.Variable, detail=str(value.type))

    def symbol(self, symbol: core.SymbolInfo) -> lsp.CompletionItem:
        kind = lsp.CompletionItemKind.Function if symbol.kind == "entry" else lsp.CompletionItemKind.Variable
        if symbol.kind == "module":
            kind = self.caps.kind(lsp.CompletionItemKind.Module, lsp.CompletionItemKind.Variable)
        name = symbol.name if re.fullmatch(r"[A-Za-z_$.\-][\w$.\-]*", symbol.name) else f'"{symbol.name}"'
        return self._item(f"@{name}", kind, detail=symbol.kind)

    # `sort`: the sortText prefix of the group the item is shown in (the label follows).

    def alias(
        self,
        label: str,
        meaning: str,
        what: str,
        kind: lsp.CompletionItemKind = lsp.CompletionItemKind.Constant,
        sort: str | None = None,
    ) -> lsp.CompletionItem:
        kind = self.caps.kind(kind, lsp.CompletionItemKind.Text)
        return self._item(label, kind, detail=f"{what}: {meaning}", sort=_sort(sort, label))

    def element_type(self, name: str, sort: str | None = None) -> lsp.CompletionItem:
        return self._item(
            name,
            self.caps.kind(lsp.CompletionItemKind.TypeParameter, lsp.CompletionItemKind.Class),
            detail=f"element type (since {core.element_type_since(name)})",
            sort=_sort(sort, name),
        )

    def type_constructor(self, name: str, sort: str | None = None) -> lsp.CompletionItem:
        help_text = _TYPE_HELP.get(name, "")
        return self._item(
            f"{name}<",
            self.caps.kind(lsp.CompletionItemKind.Struct, lsp.CompletionItemKind.Class),
            text=f"{name}<",
            snippet=_TYPE_SNIPPETS.get(name),
            detail="type",
            documentation=self.caps.documentation(help_text, help_text.replace("`", "")),
            sort=_sort(sort, name),
        )

    def plain_type(self, name: str, sort: str | None = None) -> lsp.CompletionItem:
        help_text = _TYPE_HELP.get(name, "")
        return self._item(
            name,
            self.caps.kind(lsp.CompletionItemKind.Struct, lsp.CompletionItemKind.Class),
            detail="type",
            documentation=self.caps.documentation(help_text, help_text.replace("`", "")),
            sort=_sort(sort, name),
        )


def _sort(group: str | None, label: str) -> str | None:
    return None if group is None else f"{group}{label}"


def _op_documentation(opdef: OpDef, caps: _Caps) -> lsp.MarkupContent | str:
    lines = [f"**{opdef.name}** — {opdef.summary}", ""]
    if opdef.description:
        lines += [opdef.description, ""]
    if opdef.examples:
        lines += ["```tileir", opdef.examples[0], "```"]
    markdown = "\n".join(lines).strip()
    plain = "\n".join([f"{opdef.name}: {opdef.summary}", "", opdef.description]).strip()
    return caps.documentation(markdown, plain)


# ------------------------------------------------------------------ signature help


def signature_at(
    analysis: Analysis, offset: int, capabilities: lsp.ClientCapabilities | None
) -> lsp.SignatureHelp | None:
    offset = max(0, min(offset, len(analysis.text)))
    caps = _Caps(capabilities)
    line, _ = _line_before(analysis, offset)
    tokens, inert = core.tokens_of(line)
    if inert:
        return None
    opdef, after_name = _op_on_line(tokens)
    if opdef is None or not opdef.operands:
        return None
    if any(t.text == ":" for t in after_name):
        return None  # past the operands: the types
    if not after_name and not line.endswith((" ", "\t")):
        return None  # still typing the op name
    typing_value = bool(re.search(r"%[\w$.\-]*$", line))
    active = core.active_operand(opdef, after_name, typing_value)
    signature = core.op_signature(opdef)
    parameters = []
    for (start, end), doc in zip(signature.parameters, signature.parameter_docs):
        label: str | tuple[int, int] = (start, end) if caps.label_offsets else signature.label[start:end]
        parameters.append(lsp.ParameterInformation(label=label, documentation=doc or None))
    summary = f"{opdef.summary} (since {opdef.since})"
    documentation: lsp.MarkupContent | str = (
        lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=summary) if caps.signature_markdown else summary
    )
    information = lsp.SignatureInformation(
        label=signature.label,
        documentation=documentation,
        parameters=parameters,
        active_parameter=active if caps.active_parameter else None,
    )
    return lsp.SignatureHelp(signatures=[information], active_signature=0, active_parameter=active)


def _op_on_line(tokens: list[L.Token]) -> tuple[OpDef | None, list[L.Token]]:
    """The op named on the line (after its results) and the tokens after its name."""
    i = 0
    if tokens and tokens[0].kind == L.VALUE:
        while i < len(tokens) and tokens[i].text != "=":
            i += 1
        i += 1
    if i >= len(tokens) or tokens[i].kind != L.IDENT:
        return None, []
    opdef = lookup_op(tokens[i].text)
    if opdef is None or opdef.name not in OPS:
        return None, []
    return opdef, tokens[i + 1 :]
