"""Semantic tokens (what each word is, from the analysis's occurrences and the lexer) and
inlay hints (index-space shapes of views, result types the text leaves out)."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import unquote

from lsprotocol import types as lsp

from compiler.ir.core import BlockArgument, Operation
from compiler.ir.enums import ENUM_BY_MNEMONIC
from compiler.layout import view_layout_of
from compiler.text import lexer as L
from compiler.text.asmformat import Custom, TypeOf, compile_format, flatten
from compiler.text.index import Kind, Occurrence

from ..server import ContentModified, feature
from ..store import units

if TYPE_CHECKING:
    from ..documents import Analysis, Unit
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
    # The last whole-document answer per document (its resultId and data): a delta request
    # names it, and gets only what changed since (an edit inside one kernel of 50,000 lines
    # is a few hundred numbers instead of megabytes).
    sent: dict[str, tuple[str, list[int]]] = {}
    ids = itertools.count(1)

    async def whole(uri: str) -> tuple[str, list[int]] | None:
        analysis = server.analysis(uri)
        if analysis is None:
            return None

        def check() -> None:
            if not server.is_current(uri, analysis):
                raise ContentModified(f"{uri} changed while its semantic tokens were being found")

        data = await full_data(analysis, check)
        result = (str(next(ids)), data)
        for closed in [k for k in sent if k not in server.documents]:
            del sent[closed]
        sent[unquote(uri)] = result
        return result

    @feature(
        server,
        lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
        LEGEND,
        empty=lsp.SemanticTokens(data=[]),
    )
    async def semantic_tokens_full(params: lsp.SemanticTokensParams) -> lsp.SemanticTokens:
        result = await whole(params.text_document.uri)
        if result is None:
            return lsp.SemanticTokens(data=[])
        return lsp.SemanticTokens(result_id=result[0], data=result[1])

    @feature(server, lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, LEGEND, empty=lsp.SemanticTokens(data=[]))
    async def semantic_tokens_delta(
        params: lsp.SemanticTokensDeltaParams,
    ) -> lsp.SemanticTokens | lsp.SemanticTokensDelta:
        uri = params.text_document.uri
        previous = sent.get(unquote(uri))
        result = await whole(uri)
        if result is None:
            return lsp.SemanticTokens(data=[])
        if previous is None or previous[0] != params.previous_result_id:
            return lsp.SemanticTokens(result_id=result[0], data=result[1])  # unknown: all of it
        return lsp.SemanticTokensDelta(result_id=result[0], edits=delta_edits(previous[1], result[1]))

    @feature(server, lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, LEGEND, empty=lsp.SemanticTokens(data=[]))
    def semantic_tokens_range(params: lsp.SemanticTokensRangeParams) -> lsp.SemanticTokens:
        analysis = server.analysis(params.text_document.uri)
        if analysis is None:
            return lsp.SemanticTokens(data=[])
        span = analysis.positions.span(params.range)
        return lsp.SemanticTokens(data=range_data(analysis, span.start, span.end))

    @feature(server, lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False), empty=None)
    def inlay_hints(params: lsp.InlayHintParams) -> list[lsp.InlayHint] | None:
        analysis = server.analysis(params.text_document.uri)
        if analysis is None or not analysis.settings.inlay_hints:
            return []
        span = analysis.positions.span(params.range)
        return inlay_hints_in(analysis, span.start, span.end)


# ------------------------------------------------------------------ semantic tokens
#
# The document is tokenized in parts: each unit's text up to the next unit (see
# tile_lsp.documents), cut at line starts into pieces of at most _PART_LINES lines. A part's
# tokens are encoded as the protocol wants them (line delta, start delta, length, type,
# modifiers), relative to the part's start, and kept on the unit: after an edit inside one
# kernel only that kernel's part is tokenized again, and the whole document's answer is the
# parts' lists joined, with each part's first token re-based on the previous part's last.
# Between parts the request gives way to the server's other messages, so a hover or an edit
# is answered meanwhile, and a `$/cancelRequest` or a change to the document ends it.

# (start, end, type index, modifier bits), relative to the start of the text tokenized.
Token = tuple[int, int, int, int]

_PART_LINES = 2000
# Give way to other messages after this much work. pygls reads each message in three turns
# of the event loop (header, blank line, body, on its reader thread), so a hover waits a few
# slices.
_SLICE_SECONDS = 0.01


class _Part:
    """The encoded tokens of [start, end) of a unit's text (offsets relative to the unit's
    start). `first`/`last`: the (line, column) of the first and last token, the line relative
    to the part's first line, the column relative to the part's start on that line and
    absolute on the others."""

    __slots__ = ("start", "end", "data", "first", "last", "_json")

    def __init__(self, start: int, end: int, data: list[int], first: tuple[int, int], last: tuple[int, int]) -> None:
        self.start = start
        self.end = end
        self.data = data
        self.first = first
        self.last = last
        self._json: str | None = None

    @property
    def json(self) -> str:
        """`data` in JSON without its first two numbers (re-based each time), made once."""
        if self._json is None:
            # The C encoder: twice as fast as ",".join(map(str, ...)) on the first request.
            self._json = _INTS.encode(self.data[2:])[1:-1]
        return self._json


_INTS = json.JSONEncoder(separators=(",", ":"))


class EncodedTokens(list):
    """The whole document's encoded tokens, and the same as JSON text (`json`), joined from
    the parts' (kept with them): a large document's answer is megabytes of numbers, which
    pygls's json.dumps would write out again on every request, holding up the server."""

    json: str = "[]"

    def __repr__(self) -> str:  # asyncio may show the task's result: not megabytes of it
        return f"<{len(self) // 5} semantic tokens>"


async def full_data(analysis: Analysis, check: Callable[[], None] | None = None) -> list[int]:
    """The whole document's tokens, encoded. Gives way to the event loop between parts and
    then calls `check`, which raises to end the request (the document changed)."""
    data = EncodedTokens()
    pieces: list[str] = []
    previous = (0, 0)
    units = analysis.units
    text_length = len(analysis.text)
    encoding = analysis.positions.encoding
    deadline = time.perf_counter() + _SLICE_SECONDS
    for i, unit in enumerate(units):
        start = unit.start + unit.shift
        end = units[i + 1].start + units[i + 1].shift if i + 1 < len(units) else text_length
        cached = unit.tokens
        if isinstance(cached, tuple) and cached[0] == encoding:
            parts = cached[1]
        else:
            parts = []
            for a, b in _line_pieces(analysis, start, end):
                part = _tokenize(analysis, unit, start + a, start + b)
                part.start, part.end = a, b  # kept relative to the unit, which may move
                parts.append(part)
                if time.perf_counter() > deadline:
                    await asyncio.sleep(0)
                    if check is not None:
                        check()
                    deadline = time.perf_counter() + _SLICE_SECONDS
            unit.tokens = (encoding, parts)
        for part in parts:
            begin = len(data)
            previous = _append(analysis, data, part, start + part.start, previous)
            if len(data) > begin:
                pieces.append(f"{data[begin]},{data[begin + 1]},{part.json}")
        if time.perf_counter() > deadline:
            await asyncio.sleep(0)
            if check is not None:
                check()
            deadline = time.perf_counter() + _SLICE_SECONDS
    data.json = "[" + ",".join(pieces) + "]"
    return data


def delta_edits(old: list[int], new: list[int]) -> list[lsp.SemanticTokensEdit]:
    """The one edit of `old` that gives `new` (the protocol's arrays of numbers): what lies
    between their common prefix and common suffix. Compared a block at a time, so that the
    equal stretches (almost all of a large document) go at C speed."""
    if old == new:
        return []
    limit = min(len(old), len(new))
    prefix = _common_run(old, new, limit, forward=True)
    suffix = _common_run(old, new, limit - prefix, forward=False)
    return [lsp.SemanticTokensEdit(start=prefix, delete_count=len(old) - prefix - suffix,
                                   data=new[prefix : len(new) - suffix])]  # fmt: skip


_BLOCK = 4096


def _common_run(old: list[int], new: list[int], limit: int, forward: bool) -> int:
    """How many numbers `old` and `new` share at their start (or, `forward` False, at their
    ends), at most `limit`."""
    n = 0
    while n < limit:
        step = min(_BLOCK, limit - n)
        if forward:
            a, b = old[n : n + step], new[n : n + step]
        else:
            a = old[len(old) - n - step : len(old) - n]
            b = new[len(new) - n - step : len(new) - n]
        if a == b:
            n += step
            continue
        pairs = zip(a, b) if forward else zip(reversed(a), reversed(b))
        return n + next(i for i, (x, y) in enumerate(pairs) if x != y)
    return limit


def range_data(analysis: Analysis, start: int, end: int) -> list[int]:
    """The encoded tokens of the lines [start, end) touches (not kept)."""
    text = analysis.text
    start = max(0, min(start, len(text)))
    end = max(start, min(end, len(text)))
    begin = text.rfind("\n", 0, start) + 1  # the lexer starts at a line start, not inside a token
    data: list[int] = []
    previous = (0, 0)
    units = analysis.units
    for i, unit in enumerate(units):
        unit_start = unit.start + unit.shift
        unit_end = units[i + 1].start + units[i + 1].shift if i + 1 < len(units) else len(text)
        a, b = max(begin, unit_start), min(end, unit_end)
        if a >= b:
            continue
        part = _tokenize(analysis, unit, a, b, keep_after=start)
        previous = _append(analysis, data, part, a, previous)
    return data


def _line_pieces(analysis: Analysis, start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) cut at line starts into pieces of at most _PART_LINES lines, as offsets
    relative to `start`."""
    source = analysis.source
    first, last = source.line_col(start)[0], source.line_col(end)[0]
    cuts = [start]
    for line in range(first + _PART_LINES, last, _PART_LINES):
        cuts.append(source.line_start(line))
    cuts.append(end)
    return [(a - start, b - start) for a, b in zip(cuts, cuts[1:])]


def _append(analysis: Analysis, data: list[int], part: _Part, at: int, previous: tuple[int, int]) -> tuple[int, int]:
    """Add `part` (which starts at document offset `at`) to `data`, re-basing its first
    token on `previous` (the last token's line and column); the new last token's."""
    if not part.data:
        return previous
    position = analysis.positions.position(at)
    line0, column0 = position.line, position.character
    first_line, first_column = part.first
    line = line0 + first_line
    column = first_column + (column0 if first_line == 0 else 0)
    begin = len(data)
    data.extend(part.data)
    delta_line = line - previous[0]
    data[begin] = delta_line
    data[begin + 1] = column - previous[1] if delta_line == 0 else column
    last_line, last_column = part.last
    return line0 + last_line, last_column + (column0 if last_line == 0 else 0)


def _occurrence_token(occ: Occurrence) -> tuple[int, int] | None:
    kind = occ.kind
    target = occ.target
    if kind is Kind.OP:
        op: Operation = target  # type: ignore[assignment]
        found = _OP_TOKENS.get(op.name)
        if found is None:
            structural = op.mnemonic in _STRUCTURAL_OPS or (
                op.opdef is not None and op.opdef.group in _STRUCTURAL_GROUPS
            )
            found = _OP_TOKENS[op.name] = (_TYPE["keyword" if structural else "function"], 0)
        return found
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


# An op name's token (the same for every op of that name: the op table decides).
_OP_TOKENS: dict[str, tuple[int, int]] = {}

_TYPE_WORD = re.compile(r"(?P<num>\d+)|(?P<q>\?)|(?P<word>[A-Za-z_][\w.]*|![\w.$\-]+)|(?P<other>[^\s\w?!]+|\s+)")


def _type_words(text: str) -> tuple[tuple[int, int, int], ...]:
    """Words of a written type, (start, end, type index) relative to its start: type names and
    element types as `type`, extents as `number`, parameter names (`strides=`, `tile=`) as
    `property`; a dimension list `64x32xf16` splits at its `x`es. The same types are written
    over and over: each is worked out once."""
    found = _TYPE_WORDS.get(text)
    if found is not None:
        return found
    words: list[tuple[int, int, int]] = []
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
            words.append((m.start(), m.end(), _TYPE["number"]))
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
            words.append((m.start(), m.end(), kind_index))
        after_extent = kind in ("num", "q")
        pos = m.end()
    if len(_TYPE_WORDS) > 20_000:
        _TYPE_WORDS.clear()
    found = _TYPE_WORDS[text] = tuple(words)
    return found


_TYPE_WORDS: dict[str, tuple[tuple[int, int, int], ...]] = {}


def _tokenize(analysis: Analysis, unit: Unit, start: int, end: int, keep_after: int | None = None) -> _Part:
    """The encoded tokens of the document's [start, end) (within `unit`'s text), relative
    to `start`. `keep_after`: drop the tokens that end at or before this document offset."""
    shift = unit.shift - start  # unit coordinates -> offsets relative to `start`
    text = analysis.text[start:end]
    occurrences = []
    index = unit.get_index(analysis.module)
    if index is not None:
        occurrences = index.starting_in(start - unit.shift, end - unit.shift)
    # The occurrences say what most words are (values, ops, symbols, labels, types): they
    # are taken as they are, and only the text between them is lexed (numbers, keywords,
    # strings, comments), unless it is all punctuation and spaces, as it mostly is.
    # A type and a word starting at the same place: the type is taken.
    # (The loop runs once per word of the document on the first request: names are bound
    # locally, and a value's token, the most frequent, is made inline.)
    type_kind, value_kind = Kind.TYPE, Kind.VALUE
    type_starts = {occ.span.start for occ in occurrences if occ.kind is type_kind}
    found: list[Token] = []
    add = found.append
    plain = _PLAIN.fullmatch
    value_name = _VALUE_NAME.match
    parameter, variable = _TYPE["parameter"], _TYPE["variable"]
    length = len(text)
    pos = 0
    for occ in occurrences:
        span = occ.span
        occ_start = span.start + shift
        if occ_start < pos:
            continue  # inside a type or word already taken
        kind = occ.kind
        if kind is not type_kind and span.start in type_starts:
            continue
        if occ_start > pos and plain(text, pos, occ_start) is None:
            for t_start, t_end, t_kind, t_modifiers in _gap_tokens(text[pos : occ_start + 3], occ_start - pos):
                add((pos + t_start, pos + t_end, t_kind, t_modifiers))
        occ_end = span.end + shift
        if occ_end > length:
            occ_end = length
        if kind is value_kind:
            if occ_end <= occ_start:
                continue
            # `%r:2` and `%r#1` name a group's results: the word is `%r`, the rest is lexed
            # (the count is a number).
            cut = value_name(text, occ_start, occ_end)
            if cut is not None:
                occ_end = cut.end()
            token_type = parameter if isinstance(occ.target, BlockArgument) else variable
            add((occ_start, occ_end, token_type, _DEFINITION if occ.is_definition else 0))
        elif kind is type_kind:
            for w_start, w_end, w_kind in _type_words(text[occ_start:occ_end]):
                add((occ_start + w_start, occ_start + w_end, w_kind, 0))
        else:
            classified = _occurrence_token(occ)
            if classified is None or occ_end <= occ_start:
                continue
            add((occ_start, occ_end, *classified))
        pos = occ_end
    if pos < length and plain(text, pos, length) is None:
        for t_start, t_end, t_kind, t_modifiers in _gap_tokens(text[pos:], length - pos):
            add((pos + t_start, pos + t_end, t_kind, t_modifiers))
    found.sort()
    if keep_after is not None:
        found = [t for t in found if t[1] + start > keep_after]
    return _encode_part(text, _without_overlaps(found), analysis.positions.encoding, start, end)


_VALUE_NAME = re.compile(r"%[^:#]+")
# Text with no token worth a colour: spaces and punctuation.
_PLAIN = re.compile(r"[\s(){}\[\]<>,:=?*+|\-]*")


def _gap_tokens(text: str, end: int) -> tuple[Token, ...]:
    """The tokens (comments included) of text[:end], the text between two occurrences, with
    what follows it up to len(text) (a word followed by `=` is an attribute name). The same
    few texts (`, shape = [`, ` bounded<0, ?>, `) come back many times: each is lexed once."""
    found = _GAP_TOKENS.get((text, end))
    if found is not None:
        return found
    lexer = L.Lexer(text)
    tokens: list[Token] = []
    pos = 0
    while pos < end:
        tok = lexer.token_at(pos)
        if tok.kind == L.EOF or tok.start >= end:
            break
        pos = tok.end
        classified = _lexical_token(tok, text, pos)
        if classified is not None:
            tokens.append((tok.start, pos, *classified))
    comment = _TYPE["comment"]
    tokens.extend((c.span.start, c.span.end, comment, 0) for c in lexer.comments if c.span.start < end)
    if len(_GAP_TOKENS) > 50_000:
        _GAP_TOKENS.clear()
    found = _GAP_TOKENS[(text, end)] = tuple(tokens)
    return found


_GAP_TOKENS: dict[tuple[str, int], tuple[Token, ...]] = {}


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


def _encode_part(text: str, tokens: list[Token], encoding: str, start: int, end: int) -> _Part:
    """`tokens` of `text` in the protocol's relative encoding, lengths and columns in the
    negotiated position encoding; the first token's line and column are relative to the
    text's start (see `_Part`). Tokens never span lines (comments, strings and words end at a
    newline; a longer one is cut at its line's end), so clients without
    multilineTokenSupport are served as they are."""
    data: list[int] = []
    extend = data.extend
    line = 0
    line_start = 0
    line_end = text.find("\n")
    if line_end < 0:
        line_end = len(text)
    ascii_line = text[:line_end].isascii()
    previous_line = previous_column = 0
    first = last = (0, 0)
    for t_start, t_end, kind, modifiers in tokens:
        if t_start > line_end:  # on a later line
            while t_start > line_end:
                line += 1
                line_start = line_end + 1
                line_end = text.find("\n", line_start)
                if line_end < 0:
                    line_end = len(text)
            ascii_line = text[line_start:line_end].isascii()
        if t_end > line_end:
            t_end = line_end
        if ascii_line or encoding == "utf-32":
            column = t_start - line_start
            size = t_end - t_start
        else:
            column = units(text[line_start:t_start], encoding)
            size = units(text[t_start:t_end], encoding)
        if size <= 0:
            continue
        if not data:
            first = (line, column)
            extend((0, 0, size, kind, modifiers))
        elif line == previous_line:
            extend((0, column - previous_column, size, kind, modifiers))
        else:
            extend((line - previous_line, column, size, kind, modifiers))
        previous_line, previous_column = line, column
    if data:
        last = (previous_line, previous_column)
    return _Part(start, end, data, first, last)


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
