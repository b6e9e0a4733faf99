"""Semantic tokens (what each word is, from the analysis's occurrences and the lexer) and
inlay hints (index-space shapes of views, result types the text leaves out)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from compiler.ir.core import BlockArgument, Operation
from compiler.ir.enums import ENUM_BY_MNEMONIC
from compiler.ir.source import Span
from compiler.layout import view_layout_of
from compiler.text import lexer as L
from compiler.text.asmformat import Custom, TypeOf, compile_format, flatten
from compiler.text.index import Kind, Occurrence

from ..server import feature

if TYPE_CHECKING:
    from ..documents import Analysis
    from ..server import TileLanguageServer

TOKEN_TYPES = [
    "function",  # 0 op names
    "keyword",  # 1 structural ops (module, entry, for, ...) and syntax words (to, step, iter_values)
    "variable",  # 2 SSA values, globals
    "parameter",  # 3 block arguments
    "label",  # 4 block labels
    "type",  # 5
    "enumMember",  # 6 enum keywords
    "property",  # 7 attribute names (`dim=`), attribute aliases
    "number",  # 8
    "string",  # 9
    "comment",  # 10
    "namespace",  # 11 module symbols
]
TOKEN_MODIFIERS = ["definition", "declaration", "readonly"]
_TYPE = {name: i for i, name in enumerate(TOKEN_TYPES)}
_DEFINITION = 1 << TOKEN_MODIFIERS.index("definition")
_READONLY = 1 << TOKEN_MODIFIERS.index("readonly")
LEGEND = lsp.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS)

_STRUCTURAL_GROUPS = ("control-flow",)
_STRUCTURAL_OPS = ("module", "entry", "global")
_ENUM_KEYWORDS = frozenset(k for enum in ENUM_BY_MNEMONIC.values() for k in enum.keywords)
VIEW_MAKERS = ("make_partition_view", "make_strided_view", "make_gather_scatter_view")


def register(server: TileLanguageServer) -> None:
    @feature(
        server,
        lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
        LEGEND,
        empty=lsp.SemanticTokens(data=[]),
    )
    def semantic_tokens_full(params: lsp.SemanticTokensParams) -> lsp.SemanticTokens:
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return lsp.SemanticTokens(data=[])
        return lsp.SemanticTokens(data=encode(analysis, semantic_tokens(analysis, 0, len(analysis.text))))

    @feature(server, lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND, empty=lsp.SemanticTokens(data=[]))
    def semantic_tokens_range(params: lsp.SemanticTokensRangeParams) -> lsp.SemanticTokens:
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return lsp.SemanticTokens(data=[])
        span = analysis.positions.span(params.range)
        return lsp.SemanticTokens(data=encode(analysis, semantic_tokens(analysis, span.start, span.end)))

    @feature(server, lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False), empty=None)
    def inlay_hints(params: lsp.InlayHintParams) -> list[lsp.InlayHint] | None:
        analysis = server.analysis(params.text_document.uri)
        if analysis is None or not analysis.settings.inlay_hints:
            return []
        span = analysis.positions.span(params.range)
        return inlay_hints_in(analysis, span.start, span.end)


# ------------------------------------------------------------------ semantic tokens

# (start, end, type index, modifier bits), in document coordinates.
Token = tuple[int, int, int, int]


def _occurrence_token(occ: Occurrence) -> tuple[int, int] | None:
    kind = occ.kind
    target = occ.target
    if kind is Kind.OP:
        op: Operation = target  # type: ignore[assignment]
        structural = op.mnemonic in _STRUCTURAL_OPS or (op.opdef is not None and op.opdef.group in _STRUCTURAL_GROUPS)
        return _TYPE["keyword" if structural else "function"], 0
    if kind is Kind.VALUE:
        is_arg = isinstance(target, BlockArgument)
        return _TYPE["parameter" if is_arg else "variable"], _DEFINITION if occ.is_definition else 0
    if kind is Kind.BLOCK:
        return _TYPE["label"], _DEFINITION if occ.is_definition else 0
    if kind is Kind.SYMBOL:
        definer = target if isinstance(target, Operation) else None
        mnemonic = definer.mnemonic if definer is not None else ""
        if mnemonic == "module":
            kind_index = _TYPE["namespace"]
        elif mnemonic == "global":
            kind_index = _TYPE["variable"]
        else:
            kind_index = _TYPE["function"]
        return kind_index, _DEFINITION if occ.is_definition else 0
    return None


_TYPE_WORD = re.compile(r"(?P<num>\d+)|(?P<q>\?)|(?P<word>[A-Za-z_][\w.]*|![\w.$\-]+)|(?P<other>[^\s\w?!]+|\s+)")


def _type_tokens(text: str, base: int) -> list[Token]:
    """Words of a written type: type names and element types as `type`, extents as
    `number`, parameter names (`strides=`, `tile=`) as `property`; a dimension list
    `64x32xf16` splits at its `x`es."""
    found: list[Token] = []
    pos = 0
    after_extent = False
    while pos < len(text):
        if after_extent and text[pos] == "x":
            pos += 1  # the separator in 4x8xf32
            after_extent = False
            continue
        m = _TYPE_WORD.match(text, pos)
        if m is None:
            break
        kind = m.lastgroup
        if kind == "num":
            found.append((base + m.start(), base + m.end(), _TYPE["number"], 0))
        elif kind == "word":
            word = m.group()
            # x-separated words after an extent: `x32xf16` is handled by the loop above, so a
            # word here is a name: `tile`, `f32`, `strides`, `zero`, ...
            following = text[m.end() : m.end() + 3].lstrip()
            if following.startswith("="):
                kind_index = _TYPE["property"]
            elif word in _ENUM_KEYWORDS and word not in ("none",):
                kind_index = _TYPE["enumMember"]
            else:
                kind_index = _TYPE["type"]
            found.append((base + m.start(), base + m.end(), kind_index, 0))
        after_extent = kind in ("num", "q")
        pos = m.end()
    return found


def semantic_tokens(analysis: Analysis, start: int, end: int) -> list[Token]:
    """The tokens of [start, end): sorted, none overlapping, none spanning lines."""
    text = analysis.text
    start = max(0, min(start, len(text)))
    end = max(start, min(end, len(text)))
    # Start from the beginning of the line so that the lexer is not started inside a token.
    begin = text.rfind("\n", 0, start) + 1
    occurrences = analysis.occurrences(begin, end)
    named: dict[int, Occurrence] = {}
    type_spans: list[Span] = []
    for occ in occurrences:
        if occ.kind is Kind.TYPE:
            if type_spans and occ.span.start < type_spans[-1].end:
                continue  # a type nested in one already taken
            type_spans.append(occ.span)
        else:
            named.setdefault(occ.span.start, occ)

    found: list[Token] = []
    lexer = L.Lexer(text[begin:end])
    pos = 0
    type_index = 0
    local_end = end - begin
    while pos < local_end:
        tok = lexer.token_at(pos)
        if tok.kind == L.EOF:
            break
        t_start, t_end = tok.start + begin, tok.end + begin
        pos = tok.end
        while type_index < len(type_spans) and type_spans[type_index].end <= t_start:
            type_index += 1
        if type_index < len(type_spans) and type_spans[type_index].start <= t_start:
            type_span = type_spans[type_index]
            stop = min(type_span.end, end)
            found.extend(_type_tokens(text[t_start:stop], t_start))
            pos = max(pos, stop - begin)
            continue
        occ = named.get(t_start)
        if occ is not None:
            classified = _occurrence_token(occ)
            if classified is not None:
                found.append((t_start, min(occ.span.end, t_end) if tok.kind != L.IDENT else t_end, *classified))
                continue
        classified = _lexical_token(tok, text, t_end)
        if classified is not None:
            found.append((t_start, t_end, *classified))
    for comment in lexer.comments:
        found.append((comment.span.start + begin, comment.span.end + begin, _TYPE["comment"], 0))
    found = [t for t in found if t[1] > t[0] and t[1] > start and t[0] < end]
    found.sort()
    return _without_overlaps(found)


def _lexical_token(tok: L.Token, text: str, end: int) -> tuple[int, int] | None:
    kind = tok.kind
    if kind in (L.INT, L.FLOAT):
        return _TYPE["number"], 0
    if kind == L.STRING:
        return _TYPE["string"], 0
    if kind == L.BANG:
        return _TYPE["type"], 0
    if kind == L.HASH:
        return _TYPE["property"], 0
    if kind == L.VALUE:
        return _TYPE["variable"], 0
    if kind == L.IDENT:
        following = text[end : end + 3].lstrip()
        if following.startswith("=") and not following.startswith("=="):
            return _TYPE["property"], 0
        if tok.text in ("true", "false"):
            return _TYPE["number"], _READONLY
        if tok.text in _ENUM_KEYWORDS:
            return _TYPE["enumMember"], 0
        return _TYPE["keyword"], 0
    return None


def _without_overlaps(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    last_end = -1
    for token in tokens:
        if token[0] < last_end:
            continue
        out.append(token)
        last_end = token[1]
    return out


def encode(analysis: Analysis, tokens: list[Token]) -> list[int]:
    """The protocol's relative encoding (line delta, start delta, length, type, modifiers),
    lengths and columns in the negotiated position encoding. Tokens never span lines
    here (comments, strings and words end at a newline), so clients without
    multilineTokenSupport are served as they are."""
    data: list[int] = []
    previous_line = 0
    previous_start = 0
    positions = analysis.positions
    for start, end, kind, modifiers in tokens:
        begin = positions.position(start)
        finish = positions.position(end)
        if finish.line != begin.line:  # defensive: cut at the end of the line
            line_text = analysis.source.line_text(begin.line)
            finish = positions.position(analysis.source.line_starts[begin.line] + len(line_text))
        length = finish.character - begin.character
        if length <= 0:
            continue
        delta_line = begin.line - previous_line
        delta_start = begin.character - previous_start if delta_line == 0 else begin.character
        data.extend((delta_line, delta_start, length, kind, modifiers))
        previous_line, previous_start = begin.line, begin.character
    return data


# ------------------------------------------------------------------ inlay hints


def _unspelled_results(op: Operation) -> list[int]:
    """Indices of the results whose type the op's assembly does not print (inferred)."""
    opdef = op.opdef
    if opdef is None or opdef.assembly is None or not op.results:
        return []
    printed: set[str] = set()
    for element in flatten(compile_format(opdef)):
        if isinstance(element, TypeOf):
            printed.add(element.name)
        elif isinstance(element, Custom):  # `custom<DenseTypedElementsAttr>($value, type($result))`
            printed.update(arg.name for arg in element.args if isinstance(arg, TypeOf))
    # A result tied by `same_type` to a printed type is spelled too (mmaf's result is its acc's type).
    for rule in opdef.type_rules:
        if rule[0] == "same_type" and printed.intersection(rule[1]):
            printed.update(rule[1])
    indices = []
    for result_def in opdef.results:
        if result_def.name in printed:
            continue
        try:
            first, length = opdef.result_range(result_def.name, len(op.results))
        except KeyError:
            continue
        indices.extend(range(first, first + length))
    return indices


def inlay_hints_in(analysis: Analysis, start: int, end: int) -> list[lsp.InlayHint]:
    hints: list[lsp.InlayHint] = []
    for occ in analysis.occurrences(start, end):
        if occ.kind is not Kind.OP:
            continue
        op: Operation = occ.target  # type: ignore[assignment]
        if op.mnemonic in VIEW_MAKERS and op.results and op.span is not None:
            layout = view_layout_of(op.results[0])
            if layout is not None:
                where = analysis.span(op.span, op).end
                hints.append(
                    lsp.InlayHint(
                        position=analysis.positions.position(where),
                        label=f": {layout.index_shape_text()} tiles",
                        padding_left=True,
                        tooltip=f"index space of {op.results[0].name and '%' + op.results[0].name}",
                    )
                )
        for index in _unspelled_results(op):
            result = op.results[index]
            if result.span is None:
                continue
            where = analysis.span(result.span, result).end
            hints.append(
                lsp.InlayHint(
                    position=analysis.positions.position(where),
                    label=f": {result.type}",
                    kind=lsp.InlayHintKind.Type,
                )
            )
    hints.sort(key=lambda h: (h.position.line, h.position.character))
    return hints
