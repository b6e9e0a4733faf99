"""The error-tolerant Tile IR parser.

It reads the canonical syntax (what `cuda-tile-opt` and `tileirdisasm` print), the
`cuda_tile.`/`!cuda_tile.` prefixed spellings, bare `entry` items, the
`module attributes {...} { ... }` wrapper, MLIR's generic op form, aliases and
`loc(...)` locations. It never raises: a syntax error becomes a diagnostic with an
exact range, the parser skips to the next operation, and the caller gets the
partial module. Ops with a declarative assembly format are parsed by
`asmformat`; the hand-written syntaxes live in `custom_ops`.
"""

from __future__ import annotations

import bisect
import re

from ..dialect import enum_for_kind, lookup_op
from ..dialect.opdef import OpDef
from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from ..ir.enums import ENUM_BY_MNEMONIC
from ..ir.frozen import Record
from ..ir.source import SourceFile, Span, shown
from ..verify.types import TypeProblem, power_of_two_roundings, type_problem, view_tile_dim_problem
from . import asmformat, custom_ops
from . import lexer as L
from .lexer import Token, TokenStream, unescape_string

# Token kinds are the lexer's string constants, compared by identity on the hot paths.
_PUNCT = L.PUNCT
_IDENT = L.IDENT
_END = float("inf")  # sorts after any position (for bisect in `Parser._skip`)


class ParseError(Exception):
    """Internal control flow: abandons the current operation after a diagnostic."""


class ParseOptions(Record):
    __slots__ = ("allow_unregistered", "record_references")

    def __init__(self, allow_unregistered: bool = False, record_references: bool = False) -> None:
        self.allow_unregistered = allow_unregistered
        # Record where each type and symbol reference was written (`ParseResult.references`),
        # for the language server; off by default since the CLI has no use for it.
        self.record_references = record_references


class References(Record):
    """Where types and symbol references (`@name`) were written, in source order of their ends
    (a type nested in another comes before it)."""

    __slots__ = ("types", "symbols")

    def __init__(
        self, types: list[tuple[Span, T.Type]] | None = None, symbols: list[tuple[Span, str]] | None = None
    ) -> None:
        self.types: list[tuple[Span, T.Type]] = types if types is not None else []
        self.symbols: list[tuple[Span, str]] = symbols if symbols is not None else []


class ParseResult(Record):
    __slots__ = ("module", "diagnostics", "source", "references")

    def __init__(
        self,
        module: Module,
        diagnostics: list[Diagnostic],
        source: SourceFile,
        references: References | None = None,
    ) -> None:
        self.module = module
        self.diagnostics = diagnostics
        self.source = source
        self.references = references

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def parse(text: str, filename: str = "<input>", options: ParseOptions | None = None) -> ParseResult:
    """Parse Tile IR text. Never raises; syntax errors come back as diagnostics."""
    source = SourceFile(text, filename)
    parser = Parser(source, options or ParseOptions())
    try:
        module = parser.parse_module()
    except RecursionError:
        # Where the parser had got to (deep inside the nesting), not the file's start.
        at = parser.tok.span if parser.tok.kind != L.EOF else Span(0, 0)
        parser.diagnostics.append(
            Diagnostic(Severity.ERROR, "syntax", "input is nested too deeply to parse", at, source)
        )
        module = parser.module
    return ParseResult(module, parser.diagnostics, source, parser.references)


class ItemResult(Record):
    """One top-level item parsed on its own (`parse_item`)."""

    __slots__ = ("op", "end", "diagnostics", "references")

    def __init__(
        self, op: Operation | None, end: int, diagnostics: list[Diagnostic], references: References | None
    ) -> None:
        self.op = op  # None when no op could be parsed there
        self.end = end  # where its text ends
        self.diagnostics = diagnostics
        self.references = references


def parse_item(
    source: SourceFile, start: int, context: Module, options: ParseOptions | None = None, recover: bool = False
) -> ItemResult:
    """Parse the one operation whose text starts at `start` in `source`, with the aliases of
    `context` (the module the rest of the document parsed into) in scope. The op is not
    attached anywhere. Spans are offsets into `source`, like `parse`'s. `recover`: as one step
    of the loop over a block's ops (`Parser.parse_block_item`): after an error the item ends
    where that loop would go on (the op is None); otherwise it ends at the error.

    The language server uses it to parse again only the kernel an edit falls in, or the text
    between two kernels."""
    parser = Parser(source, options or ParseOptions())
    parser.module.type_aliases = dict(context.type_aliases)
    parser.module.attribute_aliases = dict(context.attribute_aliases)
    parser.reset_to(start)
    parser.prev_end = start
    op = None
    try:
        op = parser.parse_block_item() if recover else parser.parse_operation()
    except ParseError:
        pass
    except RecursionError:
        parser.error("input is nested too deeply to parse", Span(start, start))
    parser._finish_isolated_scope(parser.scopes[0])
    return ItemResult(op, parser.prev_end, parser.diagnostics, parser.references)


# The error at a region's `{` when its `}` is missing (taken by a kernel left open inside it,
# or skipped after an error): the language server adds and removes it as an edit opens and
# closes a module.
UNCLOSED_REGION = "expected '}' to close the region opened here"

_SPLIT_RE = re.compile(r"^// -----.*$", re.M)


def split_input(text: str) -> list[tuple[str, int]]:
    """Chunks of a `--split-input-file` document and the 0-based line each starts on."""
    chunks: list[tuple[str, int]] = []
    start = 0
    line = 0
    for m in _SPLIT_RE.finditer(text):
        chunk = text[start : m.start()]
        chunks.append((chunk, line))
        line += chunk.count("\n") + 1
        start = m.end() + 1 if m.end() < len(text) and text[m.end()] == "\n" else m.end()
    chunks.append((text[start:], line))
    return chunks


class ForwardRef(Value):
    """A value used before its definition; replaced when the definition is parsed."""

    __slots__ = ()


# One dimension of a list and its `x`; MLIR's lexer skips whitespace around the `x` (`2 x f32`).
_DIM_RE = re.compile(r"(\d+|\?)[ \t\r\n]*x[ \t\r\n]*")
_INT_RE = re.compile(r"-?(?:0x[0-9A-Fa-f]+|\d+)$")
_RESULT_SUFFIX_RE = re.compile(r"#(\d+)")
_CUDA_TILE_TYPE_NAMES = L.PARAMETRIC_TYPE_NAMES
# Types nested deeper than this are refused (a `tile<tile<...>>` 80,000 deep used to take
# seconds to reach Python's recursion limit); real types nest a few levels.
MAX_TYPE_NESTING = 100
_BUILTIN_OPAQUE_TYPES = {"index", "none"}
# The `struct(params)` debug-info attributes: (required, optional) parameter names.
_DI_STRUCT_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "di_compile_unit": (("file",), ()),
    "di_lexical_block": (("scope", "file", "line"), ("column",)),
    "di_subprogram": (("file", "line", "name", "linkageName", "compileUnit"), ("scopeLine",)),
}
_BIT_TYPES = {"b8", "b16", "b32", "b64"}  # the spec grammar's untyped bit types
_ALIAS_DEFINITION = re.compile(r"^[ \t]*([#!][A-Za-z_][\w$.-]*)[ \t]*=", re.M)
_BALANCED_OPEN = {"<": ">", "(": ")", "[": "]", "{": "}"}
# The items of a module (`Parser.next_item_here`).
_ITEM_KEYWORDS = frozenset({"entry", "cuda_tile.entry", "global", "cuda_tile.global"})


class _Scope:
    __slots__ = ("values", "isolated", "forward")

    def __init__(self, isolated: bool = False, forward: dict[str, ForwardRef] | None = None) -> None:
        self.values: dict[str, Value] = {}
        self.isolated = isolated
        self.forward = forward  # on isolated scopes only


_SIGNED_INTEGER = re.compile(r"([su]?)i(\d+)")


def _integer_range_problem(value: int, ty: T.Type | None) -> str | None:
    """Why `value` cannot be an integer attribute of type `ty`, as MLIR's parser says it: a
    signless integer takes either reading of its bits, `si`/`ui` one each."""
    if isinstance(ty, T.IntegerType):
        sign, width = "", ty.width
    else:
        m = _SIGNED_INTEGER.fullmatch(str(ty)) if ty is not None else None
        if m is None:
            return None
        sign, width = m.group(1), int(m.group(2))
    if sign == "u" and value < 0:
        return "negative integer literal not valid for unsigned integer type"
    low = 0 if sign == "u" else -(1 << (width - 1)) if width else 0
    high = (1 << (width - 1)) if sign == "s" else (1 << width)
    if not low <= value < high:
        return "integer constant out of range for attribute"
    return None


class Parser:
    def __init__(self, source: SourceFile, options: ParseOptions) -> None:
        self.source = source
        self.text = source.text
        self.options = options
        self.lexer = TokenStream(source.text)
        self.diagnostics: list[Diagnostic] = []
        self.module = Module(source)
        self.tok: Token = self.lexer.token_at(0)
        self.prev_end = 0
        self.scopes: list[_Scope] = [_Scope(isolated=True, forward={})]
        self._type_cache: dict[str, T.Type] = {}
        self._type_depth = 0  # of the types being parsed
        self.references = References() if options.record_references else None
        self._nested_types: dict[str, list[tuple[int, int, T.Type]]] = {}  # for cached types
        # Spans of the operands resolved for each op being parsed (innermost last).
        self._operand_spans: list[list[Span]] = []
        # Forward references to aliases: where each definition starts (scanned on first
        # need), the ones being parsed, and where the ones parsed early end.
        self._alias_defs: dict[str, int] | None = None
        self._alias_busy: set[int] = set()
        self._alias_ends: dict[int, int] = {}
        # Text ranges of ops that another process parses (`text.parts`): an op of any block
        # that starts in one is not parsed here; the parser goes on where the range ends.
        self.skips: list[tuple[int, int]] | None = None
        self.skipped: list[tuple[int, int]] = []  # (where each skip happened, where it went)
        # The column of the `entry` whose body is being parsed (`next_item_here`).
        self.kernel_column: int | None = None

    # ---------------------------------------------------------------- token helpers

    # The helpers below run for every token: they look the next token up in the lexer's
    # window themselves (`TokenStream.token_at` only when it is not there).

    def advance(self) -> Token:
        tok = self.tok
        end = self.prev_end = tok.end
        nxt = self.lexer.at.get(end)
        self.tok = nxt if nxt is not None else self.lexer.token_at(end)
        return tok

    def reset_to(self, pos: int) -> None:
        """Continue lexing from a raw character position."""
        self.tok = self.lexer.token_at(pos)

    def at(self, text: str) -> bool:
        tok = self.tok
        return tok.text == text and (tok.kind is _PUNCT or tok.kind is _IDENT)

    def accept(self, text: str) -> Token | None:
        tok = self.tok
        if tok.text == text and (tok.kind is _PUNCT or tok.kind is _IDENT):
            end = self.prev_end = tok.end
            nxt = self.lexer.at.get(end)
            self.tok = nxt if nxt is not None else self.lexer.token_at(end)
            return tok
        return None

    def expect(self, text: str, what: str | None = None) -> Token:
        tok = self.tok
        if tok.text == text and (tok.kind is _PUNCT or tok.kind is _IDENT):
            end = self.prev_end = tok.end
            nxt = self.lexer.at.get(end)
            self.tok = nxt if nxt is not None else self.lexer.token_at(end)
            return tok
        self.fail(f"expected '{text}'" if what is None else f"expected {what}", self._at_line_end())
        raise AssertionError  # unreachable

    def _at_line_end(self) -> Span | None:
        """Like MLIR: what is missing at the end of a line is reported where that line ends,
        not at the start of the next one (None: the current token is on the same line)."""
        if "\n" in self.text[self.prev_end : self.tok.start]:
            return Span(self.prev_end, self.prev_end)
        return None

    def expect_kind(self, kind: str, what: str) -> Token:
        if self.tok.kind == kind:
            return self.advance()
        self.fail(f"expected {what}")
        raise AssertionError

    def here(self) -> Span:
        return self.tok.span

    def error(self, message: str, span: Span, code: str = "syntax") -> None:
        self.diagnostics.append(Diagnostic(Severity.ERROR, code, message, span, self.source))

    def warning(self, message: str, span: Span, code: str = "syntax") -> None:
        self.diagnostics.append(Diagnostic(Severity.WARNING, code, message, span, self.source))

    def simplified_syntax(self, what: str, span: Span, canonical: str) -> None:
        """A construct of the simplified grammar of the spec's syntax chapter: accepted,
        with a warning and a quick fix that rewrites it in canonical syntax."""
        self.diagnostics.append(
            Diagnostic(
                Severity.WARNING,
                "simplified-syntax",
                f"{what} is the spec's simplified syntax; the canonical form is `{canonical}`",
                span,
                self.source,
                fixes=[Fix(f"Rewrite as `{canonical}`", (TextEdit(span, canonical),))],
            )
        )

    def fail(self, message: str, span: Span | None = None) -> None:
        """Report an error at `span` (default: the current token) and abandon the op."""
        if span is None:
            span = self.here()
            if self.tok.kind == L.ERROR:
                message += f", found '{shown(self.tok.text[:20])}'"
            elif self.tok.kind == L.EOF:
                message += ", found end of input"
            else:
                message += f", found '{shown(self.tok.text[:40])}'"
        self.error(message, span)
        raise ParseError(message)

    # ---------------------------------------------------------------- module level

    def parse_module(self) -> Module:
        body = self.module.body
        while self.tok.kind != L.EOF:
            start = self.tok.start
            try:
                if self._alias_ends and start in self._alias_ends:
                    # Already parsed when something before it referred to it.
                    end = self._alias_ends[start]
                    self.reset_to(end)
                    self.prev_end = end
                    continue
                if self.tok.kind == L.HASH and self._is_alias_definition():
                    self.parse_attribute_alias()
                elif self.tok.kind == L.BANG and self._is_alias_definition():
                    self.parse_type_alias()
                else:
                    op = self.parse_operation()
                    if op is not None:
                        body.append(op)
            except ParseError:
                self.recover(start, top_level=True)
            if self.tok.start == start and self.tok.kind != L.EOF:
                # No progress: skip one token so the loop always ends.
                self.error(f"unexpected '{shown(self.tok.text[:40])}'", self.here())
                self.advance()
        self._finish_isolated_scope(self.scopes[0])
        self.module.comments = self.lexer.sorted_comments()
        return self.module

    def _is_alias_definition(self) -> bool:
        nxt = self.lexer.token_at(self.tok.end)
        return nxt.text == "=" and "." not in self.tok.text

    def _forward_alias(self, sigil: str, name: str) -> A.Attribute | T.Type | None:
        """An alias used before its definition: parse the definition now.

        MLIR allows this for locations (`loc(#loc5)` with `#loc5 = ...` at the end of the
        file, as --mlir-print-debuginfo prints it); we also allow it for the aliases such a
        definition refers to. Definitions are found on first need by scanning the text for
        `#name =` / `!name =` at the start of a line."""
        if self._alias_defs is None:
            self._alias_defs = {}
            for m in _ALIAS_DEFINITION.finditer(self.text):
                self._alias_defs.setdefault(m.group(1), m.start(1))
        pos = self._alias_defs.get(sigil + name)
        if pos is None or pos in self._alias_busy or pos in self._alias_ends:
            return None
        saved_tok, saved_end = self.tok, self.prev_end
        saved_diags = len(self.diagnostics)
        self._alias_busy.add(pos)
        try:
            self.reset_to(pos)
            if not self._is_alias_definition():
                return None
            if sigil == "#":
                self.parse_attribute_alias()
            else:
                self.parse_type_alias()
            self._alias_ends[pos] = self.prev_end
        except ParseError:
            # The definition's own error is reported when the main loop reaches it.
            del self.diagnostics[saved_diags:]
            return None
        finally:
            self._alias_busy.discard(pos)
            self.tok, self.prev_end = saved_tok, saved_end
        table = self.module.attribute_aliases if sigil == "#" else self.module.type_aliases
        return table.get(name)

    def parse_attribute_alias(self) -> None:
        name_tok = self.advance()
        self.expect("=")
        attr = self.parse_attribute()
        self.module.attribute_aliases[name_tok.text[1:]] = attr

    def parse_type_alias(self) -> None:
        name_tok = self.advance()
        self.expect("=")
        ty = self.parse_type()
        self.module.type_aliases[name_tok.text[1:]] = ty

    def recover(self, op_start: int, top_level: bool = False) -> None:
        """Skip to where the next operation (or the end of the enclosing block) starts: a
        value, string or word first on a line after the line where the failed one started
        (`op_start`), at bracket depth 0. The token the error was found at may be that start
        (`bogus1` then `bogus2` on the next line: the first fails at the second's name)."""
        start_line, column = self.source.line_col(op_start)
        # The brackets the failed op opened before the error are still open: an error inside
        # `{foo = 2.5 : i64}` must not take that dictionary's `}` for its block's end.
        # Whatever is open, the next kernel or global of the module (no further right than the
        # failed op) is where skipping ends (`next_item_here`), even one the failed op read
        # into (an unclosed `<` is looked for as far as it takes).
        error_at = self.tok.start
        depth = 0
        if op_start < error_at:
            self.reset_to(op_start)
            while self.tok.kind != L.EOF and self.tok.start < error_at:
                if self._next_item_after(column, start_line):
                    return
                if self.tok.kind == L.PUNCT and self.tok.text in "({[":
                    depth += 1
                elif self.tok.kind == L.PUNCT and self.tok.text in ")]}":
                    depth = max(depth - 1, 0)
                self.advance()
        while self.tok.kind != L.EOF:
            tok = self.tok
            if self._next_item_after(column, start_line):
                return
            if tok.kind == L.PUNCT:
                if tok.text in "({[":
                    depth += 1
                elif tok.text in ")]":
                    depth = max(depth - 1, 0)
                elif tok.text == "}":
                    if depth == 0:
                        if top_level:
                            self.advance()
                            continue
                        return
                    depth -= 1
            if depth == 0 and self._starts_line(tok) and self.source.line_col(tok.start)[0] > start_line:
                if tok.kind in (L.VALUE, L.STRING) or (tok.kind == L.IDENT and not tok.text[0].isdigit()):
                    return
                if tok.kind in (L.HASH, L.BANG) and top_level:
                    return
            self.advance()

    def next_item_here(self, column: int | None = None) -> bool:
        """Whether the current token is an `entry` or `global` first on its line at or left of
        `column` (default: the column of the kernel being parsed): the next item of the module,
        taken as the end of a kernel (or of an op after an error) that left a bracket open.
        Without this, a `{` not closed while typing makes its kernel take in every kernel after
        it, and the only error is at the module's `{`. (Recovery only: a kernel nested in a
        kernel, which MLIR's parser takes and no tool can compile or write as bytecode, is
        read as such when it is indented deeper than the kernel around it.)"""
        tok = self.tok
        if tok.kind is not _IDENT or tok.text not in _ITEM_KEYWORDS:
            return False
        if column is None:
            column = self.kernel_column
            if column is None:
                return False
        return self._starts_line(tok) and self.source.line_col(tok.start)[1] <= column

    def _next_item_after(self, column: int, line: int) -> bool:
        return self.next_item_here(column) and self.source.line_col(self.tok.start)[0] > line

    def _starts_line(self, tok: Token) -> bool:
        i = tok.start - 1
        text = self.text
        while i >= 0 and text[i] in " \t":
            i -= 1
        return i < 0 or text[i] == "\n"

    # ---------------------------------------------------------------- values and scopes

    def push_scope(self, isolated: bool = False) -> _Scope:
        scope = _Scope(isolated=isolated, forward={} if isolated else None)
        self.scopes.append(scope)
        return scope

    def pop_scope(self) -> None:
        scope = self.scopes.pop()
        if scope.isolated:
            self._finish_isolated_scope(scope)

    def _finish_isolated_scope(self, scope: _Scope) -> None:
        for name, ref in (scope.forward or {}).items():
            span = ref.span or Span(0, 0)
            self.error(f"use of undeclared SSA value name '%{name}'", span, code="undefined-value")
        if scope.forward:
            scope.forward.clear()

    def lookup_value(self, name: str) -> Value | None:
        for scope in reversed(self.scopes):
            value = scope.values.get(name)
            if value is not None:
                return value
            if scope.isolated:
                return None
        return None

    def _isolated_scope(self) -> _Scope:
        for scope in reversed(self.scopes):
            if scope.isolated:
                return scope
        return self.scopes[0]

    def define_value(self, name: str, value: Value, span: Span) -> None:
        value.name = name
        value.span = span
        if self.lookup_value(name) is not None:
            self.error(f"redefinition of SSA value '%{name}'", span, code="redefinition")
            return
        self.scopes[-1].values[name] = value
        iso = self._isolated_scope()
        ref = iso.forward.pop(name, None) if iso.forward is not None else None
        if ref is not None:
            for op, index in list(ref.uses):
                operands = list(op.operands)
                operands[index] = value
                op.set_operands(operands)
            if ref.type != value.type and not isinstance(ref.type, T.OpaqueType):
                self.error(
                    f"definition of SSA value '%{name}' has type {value.type} but was used as {ref.type}",
                    span,
                    code="type-mismatch",
                )

    def resolve_operand(self, name: str, span: Span, expected: T.Type | None) -> Value:
        """The value named `name`; a forward reference if it is not defined yet."""
        value = self.lookup_value(name)
        if value is None and "#" not in name:
            value = self.lookup_value(name + "#0")
        if value is None:
            iso = self._isolated_scope()
            assert iso.forward is not None
            ref = iso.forward.get(name)
            if ref is None:
                ref = ForwardRef(expected if expected is not None else T.OpaqueType("<unknown>"), name, span)
                iso.forward[name] = ref
            if self._operand_spans:
                self._operand_spans[-1].append(span)
            return ref
        if expected is not None and value.type != expected and not isinstance(value.type, T.OpaqueType):
            related = [Related("prior use here", value.span, self.source)] if value.span is not None else []
            self.diagnostics.append(
                Diagnostic(
                    Severity.ERROR,
                    "type-mismatch",
                    f"use of value '%{name}' expects different type than prior uses: "
                    f"'{expected.full()}' vs '{value.type.full()}'",
                    span,
                    self.source,
                    related,
                )
            )
        if self._operand_spans:
            self._operand_spans[-1].append(span)
        return value

    def parse_value_ref(self) -> tuple[str, Span]:
        """`%name` or `%name#3`: the name and its span."""
        tok = self.tok
        if tok.kind != L.VALUE:
            self.fail("expected SSA operand")
        self.advance()
        name = tok.text[1:]
        end = tok.end
        m = _RESULT_SUFFIX_RE.match(self.text, end) if self.text[end : end + 1] == "#" else None
        if m:
            name += m.group()
            end = m.end()
            self.reset_to(end)
            self.prev_end = end
        return name, Span(tok.start, end)

    # ---------------------------------------------------------------- operations

    def parse_operation(self) -> Operation | None:
        start = self.tok.start
        results: list[tuple[str, int, Span]] = []  # (name, count, span)
        if self.tok.kind == L.VALUE:
            while True:
                tok = self.tok
                if tok.kind != L.VALUE:
                    self.fail("expected SSA result name")
                self.advance()
                count = 1
                if self.accept(":"):
                    count_tok = self.expect_kind(L.INT, "result count")
                    count = L.int_literal(count_tok.text)
                    if count < 1:
                        self.fail("expected a positive result count", count_tok.span)
                results.append((tok.text[1:], count, tok.span if count == 1 else Span(tok.start, count_tok.end)))
                if not self.accept(","):
                    break
            self.expect("=")
        num_results = sum([c for _, c, _ in results]) if results else 0

        spans: list[Span] = []
        self._operand_spans.append(spans)
        try:
            if self.tok.kind == L.STRING:
                op = self.parse_generic_operation(num_results)
            elif self.tok.kind == L.IDENT and not (results and self.next_item_here()):
                op = self.parse_custom_operation(num_results)
            else:
                # (`%c =` typed last in a kernel left open: the next kernel is not its op; the
                # error goes where the `=` is, as for a missing token.)
                self.fail("expected operation name", self._at_line_end() if self.tok.kind == L.IDENT else None)
                return None
        finally:
            self._operand_spans.pop()
        self.finish_operation(op, start, results, spans)
        return op

    def finish_operation(
        self, op: Operation, start: int, results: list[tuple[str, int, Span]], spans: list[Span]
    ) -> None:
        """After an op's own syntax: its span, trailing location, and the names of its results."""
        if len(spans) == len(op.operands):
            op.operand_spans = spans
        tok = self.tok
        if tok.text == "loc" and tok.kind is _IDENT:
            op.span = Span(start, self.prev_end)
            self.parse_trailing_location(op)
        op.span = Span(start, self.prev_end)

        num_results = sum([c for _, c, _ in results]) if results else 0
        if num_results and not op.results:
            names = Span(start, op.name_span.start if op.name_span else start)
            self.diagnostics.append(
                Diagnostic(
                    Severity.ERROR,
                    "result-count",
                    "cannot name an operation with no results",
                    names,
                    self.source,
                    fixes=[Fix("Remove the result names", (TextEdit(names, ""),))],
                )
            )
        elif num_results and num_results != len(op.results):
            self.error(
                f"operation defines {len(op.results)} results but was provided {num_results} to bind",
                Span(start, op.name_span.start if op.name_span else start),
                code="result-count",
            )
        else:
            i = 0
            for name, count, span in results:
                for k in range(count):
                    member = name if count == 1 else f"{name}#{k}"
                    self.define_value(member, op.results[i], span)
                    i += 1

    def parse_trailing_location(self, op: Operation) -> None:
        if self.at("loc"):
            op.location = self.parse_location()

    def resolve_op_name(self, text: str) -> tuple[str, OpDef | None]:
        opdef = lookup_op(text)
        if opdef is not None:
            return opdef.name, opdef
        return text, None

    def parse_custom_operation(self, num_results: int) -> Operation:
        name_tok = self.advance()
        text = name_tok.text
        if text == "module" and not self.at("@") and self.tok.kind != L.SYMBOL:
            return self.parse_builtin_module(name_tok)
        if text == "builtin.module":
            return self.parse_builtin_module(name_tok)
        if text == "func" and self.tok.kind == L.SYMBOL:
            self.simplified_syntax("`func`", name_tok.span, "entry")
            text = "entry"
        elif text in ("global", "cuda_tile.global") and self.tok.kind == L.SYMBOL:
            after = self.lexer.token_at(self.tok.end)
            if after.text == ":":
                return self.parse_simplified_global(name_tok)
        name, opdef = self.resolve_op_name(text)
        if opdef is None:
            if "." in text and self.options.allow_unregistered:
                self.fail(f"custom op '{text}' is unknown (unregistered ops must use the generic form)", name_tok.span)
            suffix = "" if "." in text else f" (tried 'cuda_tile.{text}' as well)"
            self.fail(f"custom op '{text}' is unknown{suffix}", name_tok.span)
        assert opdef is not None
        op = Operation(name, opdef)
        op.name_span = name_tok.span
        handler = custom_ops.PARSERS.get(opdef.mnemonic)
        if handler is not None:
            handler(self, op)
        elif opdef.assembly is not None:
            asmformat.parse_op(self, op, opdef, num_results)
        else:
            self.fail(f"no assembly syntax known for '{name}'", name_tok.span)
        return op

    def parse_simplified_global(self, name_tok: Token) -> Operation:
        """`global @g : tile<2xf32> = [1.0, 2.0]` (spec grammar) as a canonical `global`."""
        from .denseformat import format_dense_body

        opdef = lookup_op("global")
        assert opdef is not None
        op = Operation(opdef.name, opdef)
        op.name_span = name_tok.span
        sym = self.advance()
        self.expect(":")
        ty_start = self.tok.start
        ty = self.parse_type()
        ty_span = Span(ty_start, self.prev_end)
        self.expect("=")
        literal = self.parse_dense_literal()
        value = self.build_dense(literal, ty, Span(name_tok.start, self.prev_end), ty_span)
        op.properties["sym_name"] = A.StringAttr(self._symbol_name(sym))
        op.properties["value"] = value
        op.properties["symbol_visibility"] = A.EnumAttr(ENUM_BY_MNEMONIC["symbol_visibility"], "public")
        canonical = f"global {sym.text} <{value.element}: {format_dense_body(value)}> : {ty}"
        self.simplified_syntax("`global @name : type = value`", Span(name_tok.start, self.prev_end), canonical)
        return op

    def parse_builtin_module(self, name_tok: Token) -> Operation:
        op = Operation("builtin.module")
        op.name_span = name_tok.span
        if self.tok.kind == L.SYMBOL:
            op.properties["sym_name"] = A.StringAttr(self._symbol_name(self.advance()))
        if self.accept("attributes"):
            op.attributes.update(self.parse_attr_dict_body())
        op.add_region(self.parse_region(isolated=True))
        return op

    def parse_generic_operation(self, num_results: int) -> Operation:
        name_tok = self.advance()
        name = self.string_value(name_tok)
        canonical, opdef = self.resolve_op_name(name)
        # builtin.module (the frontend contract's wrapper) is always known, as in MLIR.
        if opdef is None and canonical != "builtin.module" and not self.options.allow_unregistered:
            self.error(
                f"operation '{name}' is not registered; pass --allow-unregistered-dialect to accept it",
                name_tok.span,
                code="unregistered-op",
            )
        op = Operation(canonical, opdef)
        op.name_span = name_tok.span
        self.expect("(")
        refs: list[tuple[str, Span]] = []
        if not self.at(")"):
            while True:
                refs.append(self.parse_value_ref())
                if not self.accept(","):
                    break
        self.expect(")")
        if self.at("["):  # successors
            self.advance()
            while not self.at("]"):
                self.expect_kind(L.CARET, "successor block")
                if not self.accept(","):
                    break
            self.expect("]")
        if self.at("<"):
            self.advance()
            self.expect("{")
            props = self.parse_attr_dict_entries()
            self.expect(">")
            for key, value in props.items():
                if key == "operandSegmentSizes" and isinstance(value, A.DenseArrayAttr):
                    op.operand_segments = tuple(value.values)
                else:
                    op.properties[key] = self.coerce_property(opdef, key, value)
        if self.at("(") and self._peek_is_region():
            self.advance()
            while True:
                isolated = canonical == "builtin.module" or (opdef is not None and "IsolatedFromAbove" in opdef.traits)
                op.add_region(self.parse_region(isolated=isolated))
                if not self.accept(","):
                    break
            self.expect(")")
        if self.at("{"):
            for key, value in self.parse_attr_dict_body().items():
                if opdef is not None and opdef.attribute(key) is not None:
                    op.properties[key] = self.coerce_property(opdef, key, value)
                elif key == "operandSegmentSizes" and isinstance(value, A.DenseArrayAttr):
                    op.operand_segments = tuple(value.values)
                else:
                    op.attributes[key] = value
        self.expect(":")
        type_start = self.tok.start
        fn = self.parse_type()
        if not isinstance(fn, T.FunctionType):
            self.fail("expected function type for generic operation", Span(type_start, self.prev_end))
        assert isinstance(fn, T.FunctionType)
        if len(fn.inputs) != len(refs):
            self.fail(f"expected {len(refs)} operand types but had {len(fn.inputs)}", Span(type_start, self.prev_end))
        op.set_operands([self.resolve_operand(n, s, t) for (n, s), t in zip(refs, fn.inputs)])
        op.results = []
        from ..ir.core import OpResult

        op.results = [OpResult(op, i, t) for i, t in enumerate(fn.results)]
        if opdef is not None and opdef.has_segments and op.operand_segments is None:
            op.operand_segments = _infer_segments(opdef, len(op.operands))
        return op

    def coerce_property(self, opdef: OpDef | None, key: str, value: A.Attribute) -> A.Attribute:
        """Generic-form properties may spell enums as integers; store them as EnumAttr."""
        if opdef is None:
            return value
        adef = opdef.attribute(key)
        enum = enum_for_kind(adef.kind) if adef is not None else None
        if enum is None:
            return value
        if isinstance(value, A.IntegerAttr):
            case = enum.by_value(value.value)
            if case is not None:
                return A.EnumAttr(enum, case.keyword)
        return value

    def _peek_is_region(self) -> bool:
        nxt = self.lexer.token_at(self.tok.end)
        return nxt.text == "{"

    # ---------------------------------------------------------------- regions

    def parse_region(
        self,
        arguments: list[tuple[str, Span, T.Type, A.LocationAttr | None]] | None = None,
        isolated: bool = False,
    ) -> Region:
        """`{ ops }` or `{ ^bb0(...): ops ^bb1: ... }`; `arguments` are the entry block's."""
        region = Region()
        open_tok = self.expect("{")
        self.push_scope(isolated=isolated)
        try:
            block = Block()
            region.add_block(block)
            block.span = Span(open_tok.end, open_tok.end)
            for name, span, ty, loc in arguments or ():
                arg = block.add_argument(ty)
                arg.location = loc
                self.define_value(name, arg, span)
            if self.tok.kind == L.CARET:
                if arguments:
                    self.error("entry block arguments were already defined", self.here())
                self.parse_block_label(block)
            self.parse_block_body(block)
            while self.tok.kind == L.CARET:
                block = Block()
                region.add_block(block)
                self.parse_block_label(block)
                self.parse_block_body(block)
            if self.tok.kind == L.EOF or self.next_item_here():
                self.error(UNCLOSED_REGION, open_tok.span)
            else:
                close = self.expect("}")
                region.span = Span(open_tok.start, close.end)
                first = region.blocks[0]
                if len(region.blocks) == 1 and not first.ops and not first.arguments and first.label is None:
                    region.blocks.clear()  # `{ }` is a region with no blocks, as in MLIR
                return region
        finally:
            self.pop_scope()
        region.span = Span(open_tok.start, self.prev_end)
        return region

    def parse_block_label(self, block: Block) -> None:
        tok = self.advance()
        block.label = tok.text[1:]
        block.label_span = tok.span
        if self.accept("("):
            if not self.at(")"):
                while True:
                    name, span = self.parse_value_ref()
                    self.expect(":")
                    ty = self.parse_type()
                    loc = self.parse_location() if self.at("loc") else None
                    arg = block.add_argument(ty)
                    arg.location = loc
                    self.define_value(name, arg, span)
                    if not self.accept(","):
                        break
            self.expect(")")
        self.expect(":")

    def parse_block_body(self, block: Block) -> None:
        while self.tok.kind not in (L.EOF, L.CARET) and not self.at("}") and not self.next_item_here():
            if self.skips is not None and self._skip(self.tok.start):
                continue
            op = self.parse_block_item()
            if op is not None:
                block.append(op)
        if block.span is not None:
            block.span = Span(block.span.start, self.tok.start)

    def parse_block_item(self) -> Operation | None:
        """One step of a block's loop: the op that starts at the current token, or None after
        an error, the parser then standing where the next op (or the block's end) starts."""
        start = self.tok.start
        op = None
        try:
            op = self.parse_operation()
        except ParseError:
            self.recover(start)
        if self.tok.start == start and self.tok.kind != L.EOF and not self.at("}"):
            self.error(f"unexpected '{shown(self.tok.text[:40])}'", self.here())
            self.advance()
        return op

    def _skip(self, start: int) -> bool:
        skips = self.skips
        assert skips is not None  # sorted, not overlapping
        i = bisect.bisect_right(skips, (start, _END)) - 1
        if i < 0 or start >= skips[i][1]:
            return False
        hi = skips[i][1]
        self.skipped.append((start, hi))
        self.reset_to(hi)
        self.prev_end = hi
        return True

    def parse_function_arguments(
        self, attrs: list[A.DictionaryAttr] | None = None
    ) -> list[tuple[str, Span, T.Type, A.LocationAttr | None]]:
        """`(%a: type {attrs}? loc(...)?, ...)` of entry-like ops; each argument's attribute
        dictionary is appended to `attrs` when given."""
        args: list[tuple[str, Span, T.Type, A.LocationAttr | None]] = []
        self.expect("(")
        if not self.at(")"):
            while True:
                name, span = self.parse_value_ref()
                self.expect(":")
                ty = self.parse_type()
                entries = self.parse_attr_dict_body() if self.at("{") else {}
                if attrs is not None:
                    attrs.append(A.DictionaryAttr(tuple(entries.items())))
                loc = self.parse_location() if self.at("loc") else None
                args.append((name, span, ty, loc))
                if not self.accept(","):
                    break
        self.expect(")")
        return args

    # ---------------------------------------------------------------- types

    def parse_type(self) -> T.Type:
        depth = self._type_depth
        if depth >= MAX_TYPE_NESTING:
            self.fail(f"type nested more than {MAX_TYPE_NESTING} levels deep", self.here())
        self._type_depth = depth + 1
        try:
            if self.references is None:
                return self._parse_type()
            start = self.tok.start
            parsed = self._parse_type()
            self.references.types.append((Span(start, self.prev_end), parsed))
            return parsed
        finally:
            self._type_depth = depth

    def _parse_type(self) -> T.Type:
        tok = self.tok
        if tok.kind == L.IDENT:
            text = tok.text
            scalar = T.SCALAR_TYPES.get(text)
            if scalar is not None:
                self.advance()
                return scalar
            if text in _BIT_TYPES:
                self.advance()
                canonical = "i" + text[1:]
                self.simplified_syntax(f"`{text}`", tok.span, canonical)
                return T.INTEGER_TYPES[canonical]
            if text in _CUDA_TILE_TYPE_NAMES:
                return self._parse_cached_type(text, tok)
            if text.startswith("cuda_tile.") and text[10:] in _CUDA_TILE_TYPE_NAMES:
                self.advance()
                return self.parse_cuda_type_body(text[10:], tok)
            if text in _BUILTIN_OPAQUE_TYPES or re.fullmatch(r"[su]?i\d+|f\d+|bf16", text):
                self.advance()
                return T.OpaqueType(text)
            if text in ("tensor", "vector", "memref", "complex", "tuple"):
                self.advance()
                return T.OpaqueType(text + self.skip_balanced())
            self.fail("expected valid keyword for a type")
        if tok.kind == L.BANG:
            self.advance()
            name = tok.text[1:]
            if name.startswith("cuda_tile."):
                return self.parse_cuda_type_body(name[10:], tok)
            if "." in name:
                body = self.skip_balanced() if self.at("<") else ""
                return T.OpaqueType(tok.text + body)
            alias = self.module.type_aliases.get(name)
            if alias is None:
                alias = self._forward_alias("!", name)  # type: ignore[assignment]
            if alias is None:
                self.fail(f"undefined symbol alias id '{name}'", tok.span)
            assert alias is not None
            return alias
        if self.at("("):
            return self.parse_function_type()
        self.fail("expected valid keyword for a type")
        raise AssertionError

    def _parse_cached_type(self, name: str, tok: Token) -> T.Type:
        """Parse `name<...>`, reusing the result for identical text: kernels repeat
        the same long view types many times, and this halves parsing time. Only types not
        nested in another are looked up (the outer one's entry covers the rest)."""
        text = self.text
        end = tok.end
        if self._type_depth == 1 and end < len(text) and text[end] == "<":
            lexer = self.lexer
            stop = lexer.type_end(tok.start)
            if stop is None:
                stop = lexer.angle_close(end)
            if stop is not None:  # a one-line type
                key = text[tok.start : stop]
                cached = self._type_cache.get(key)
                references = self.references
                if cached is not None:
                    self.reset_to(stop)
                    self.prev_end = stop
                    if references is not None:  # the types nested in it, as if parsed here
                        for start, nested_stop, nested in self._nested_types[key]:
                            references.types.append((Span(tok.start + start, tok.start + nested_stop), nested))
                    return cached
                self.advance()
                reported = len(self.diagnostics)
                recorded = len(references.types) if references is not None else 0
                ty = self.parse_cuda_type_body(name, tok)
                # Types that drew a warning are not cached: every use must get it.
                if self.prev_end == stop and len(self.diagnostics) == reported:
                    self._type_cache[key] = ty
                    if references is not None:
                        self._nested_types[key] = [
                            (span.start - tok.start, span.end - tok.start, nested)
                            for span, nested in references.types[recorded:]
                        ]
                return ty
        self.advance()
        return self.parse_cuda_type_body(name, tok)

    def parse_function_type(self) -> T.FunctionType:
        self.expect("(")
        inputs: list[T.Type] = []
        if not self.at(")"):
            while True:
                inputs.append(self.parse_type())
                if not self.accept(","):
                    break
        self.expect(")")
        self.expect("->")
        results: list[T.Type] = []
        if self.at("(") and not self._paren_starts_function_type():
            self.advance()
            if not self.at(")"):
                while True:
                    results.append(self.parse_type())
                    if not self.accept(","):
                        break
            self.expect(")")
        else:
            results.append(self.parse_type())
        return T.FunctionType(tuple(inputs), tuple(results))

    def _paren_starts_function_type(self) -> bool:
        # `() -> (a, b)` vs `() -> (a) -> b`: find the matching ')' and look for '->'.
        depth = 0
        tok = self.tok
        while tok.kind != L.EOF:
            if tok.text in ("(", "[", "<", "{"):
                depth += 1
            elif tok.text in (")", "]", ">", "}"):
                depth -= 1
                if depth == 0:
                    nxt = self.lexer.token_at(tok.end)
                    return nxt.text == "->"
            tok = self.lexer.token_at(tok.end)
        return False

    def parse_dims(self) -> list[int | None]:
        """A dimension list `4x?x8x` read from the raw text (MLIR lexes it specially)."""
        return [value for value, _ in self.parse_dims_with_spans()]

    def parse_dims_with_spans(self) -> list[tuple[int | None, Span]]:
        """`parse_dims`, with where each dimension is written."""
        pos = end = self.tok.start
        dims: list[tuple[int | None, Span]] = []
        while (m := _DIM_RE.match(self.text, end)) is not None:
            part = m.group(1)
            dims.append((None if part == "?" else int(part), Span(m.start(1), m.end(1))))
            end = m.end()
        if end > pos:
            self.reset_to(end)
            self.prev_end = end
        return dims

    # Type rules (compiler.verify.types) are checked as each cuda_tile type is built, as MLIR's
    # `getChecked` does: the error is reported at the part of the type at fault.

    def check_type(self, ty: T.Type, whole: Span, parts: dict[str, Span | list[Span] | None]) -> None:
        problem = type_problem(ty)
        if problem is not None:
            self.report_type_problem(ty, problem, whole, parts)

    def report_type_problem(
        self, ty: T.Type, problem: TypeProblem, whole: Span, parts: dict[str, Span | list[Span] | None]
    ) -> None:
        where = parts.get(problem.part)
        span = whole
        if isinstance(where, Span):
            span = where
        elif where:
            chosen = [where[i] for i in problem.dims if i < len(where)] or where
            span = Span(chosen[0].start, chosen[-1].end)
        fixes: list[Fix] = []
        roundings = power_of_two_roundings(ty, problem)
        if isinstance(where, list) and roundings and all(i < len(where) for i, _ in roundings):
            edits = tuple(TextEdit(where[i], str(value)) for i, value in roundings)
            if len(roundings) == 1:
                i, value = roundings[0]
                title = f"Round {self.text[where[i].start : where[i].end]} up to {value}"
            else:
                title = "Round the dimensions up to the next power of two"
            fixes.append(Fix(title, edits))
        self.diagnostics.append(
            Diagnostic(Severity.ERROR, problem.code, problem.message, span, self.source, fixes=fixes)
        )

    def parse_cuda_type_body(self, name: str, tok: Token) -> T.Type:
        if name == "token":
            return T.TOKEN
        self.expect("<")
        if name == "ptr":
            start = self.tok.start
            pointee = self.parse_type()
            pointee_span = Span(start, self.prev_end)
            self.expect(">")
            ptr = T.PointerType(pointee)
            self.check_type(ptr, Span(tok.start, self.prev_end), {"element": pointee_span})
            return ptr
        if name == "tile":
            if self.at("["):
                return self.parse_simplified_tile(tok)
            dims = self.parse_dims_with_spans()
            for value, span in dims:
                if value is None:
                    self.fail("expected static shape", span)
            start = self.tok.start
            element = self.parse_type()
            element_span = Span(start, self.prev_end)
            self.expect(">")
            tile = T.TileType(tuple(d for d, _ in dims if d is not None), element)
            parts: dict[str, Span | list[Span] | None] = {"shape": [s for _, s in dims], "element": element_span}
            self.check_type(tile, Span(tok.start, self.prev_end), parts)
            return tile
        if name == "tensor_view":
            return self.parse_tensor_view_body(tok)
        return self.parse_view_body(name, tok)

    def parse_tensor_view_body(self, tok: Token) -> T.TensorViewType:
        dims = self.parse_dims_with_spans()
        start = self.tok.start
        element = self.parse_type()
        element_span = Span(start, self.prev_end)
        strides: list[tuple[int | None, Span]] = []
        if not dims:
            if self.accept(","):
                if self.accept("strides"):
                    self.fail("strides must not be provided for 0-d tiles", self.here())
                self.fail("unexpected token after element type in 0-d tensor_view", self.here())
        else:
            if not self.accept(","):
                self.fail("expected 'strides'", self.here())
            self.expect("strides")
            self.expect("=")
            self.expect("[")
            if not self.at("]"):
                while True:
                    start = self.tok.start
                    if self.accept("?"):
                        strides.append((None, Span(start, self.prev_end)))
                    elif self.tok.kind == L.INT or self.at("-"):
                        value = self.parse_integer()
                        if value <= 0:
                            self.fail(f"expected strictly positive integer, got {value}", Span(start, self.prev_end))
                        strides.append((value, Span(start, self.prev_end)))
                    else:
                        self.fail("expected either 64-bit integer or question mark", self.here())
                    if not self.accept(","):
                        break
            self.expect("]")
        self.expect(">")
        view = T.TensorViewType(element, tuple(d for d, _ in dims), tuple(s for s, _ in strides))
        parts: dict[str, Span | list[Span] | None] = {
            "shape": [s for _, s in dims],
            "strides": [s for _, s in strides],
            "element": element_span,
        }
        self.check_type(view, Span(tok.start, self.prev_end), parts)
        return view

    def parse_view_body(self, name: str, tok: Token) -> T.Type:
        """partition_view / strided_view / gather_scatter_view, after the `<`."""
        self.expect("tile")
        self.expect("=")
        self.expect("(")
        tile_dims = self.parse_tile_shape_with_spans()
        self.expect(")")
        tile_shape = tuple(v for v, _ in tile_dims)
        parts: dict[str, Span | list[Span] | None] = {"tile_shape": [s for _, s in tile_dims]}
        if name != "gather_scatter_view":
            self._check_view_tile_dims(tile_shape, tok, parts)
        self.expect(",")
        traversal: tuple[int, ...] = ()
        if name == "strided_view":
            self.expect("traversal_strides")
            self.expect("=")
            items = self.parse_int_list_with_spans()
            traversal = tuple(v for v, _ in items)
            parts["traversal_strides"] = [s for _, s in items]
            self.expect(",")
        padding = None
        if self.accept("padding_value"):
            self.expect("=")
            ptok = self.expect_kind(L.IDENT, "padding value")
            if ENUM_BY_MNEMONIC["padding_value"].by_keyword(ptok.text) is None:
                self.fail(
                    f'invalid padding_value attribute specification. Got "{ptok.text}" but expect one of: '
                    "zero, neg_zero, nan, pos_inf, neg_inf",
                    ptok.span,
                )
            padding = ptok.text
            parts["padding"] = ptok.span
            self.expect(",")
        tv_start = self.tok.start
        tensor_view = self.parse_type()
        tv_span = Span(tv_start, self.prev_end)
        parts["tensor_view"] = tv_span
        if not isinstance(tensor_view, T.TensorViewType):
            self.fail(f"expected 'tensor_view' type, but got '{tensor_view.full()}'", tv_span)
        view: T.Type
        if name == "gather_scatter_view":
            self.expect(",")
            self.expect("sparse_dim")
            self.expect("=")
            start = self.tok.start
            sparse_dim = self.parse_integer()
            parts["sparse_dim"] = Span(start, self.prev_end)
            self.expect(">")
            self._check_view_tile_dims(tile_shape, tok, parts)
            view = T.GatherScatterViewType(tile_shape, tensor_view, sparse_dim, padding)
        else:
            dim_map: tuple[int, ...] = tuple(range(len(tile_shape)))
            if self.accept(","):
                self.expect("dim_map")
                self.expect("=")
                items = self.parse_int_list_with_spans()
                dim_map = tuple(v for v, _ in items)
                parts["dim_map"] = [s for _, s in items]
            self.expect(">")
            if name == "strided_view":
                view = T.StridedViewType(tile_shape, traversal, tensor_view, dim_map, padding)
            else:
                view = T.PartitionViewType(tile_shape, tensor_view, dim_map, padding)
        self.check_type(view, Span(tok.start, self.prev_end), parts)
        return view

    def _check_view_tile_dims(self, tile_shape: tuple[int, ...], tok: Token, parts) -> None:
        """A view's tile dimensions must fit in i32; MLIR's parser stops there."""
        problem = view_tile_dim_problem(tile_shape)
        if problem is not None:
            self.report_type_problem(T.TileType(tile_shape, T.I1), problem, Span(tok.start, self.prev_end), parts)
            raise ParseError(problem.message)

    def parse_simplified_tile(self, tok: Token) -> T.TileType:
        """`tile<[4x8]xf32>`: the spec grammar's bracketed shape."""
        self.expect("[")
        dims = [self.parse_integer()]
        dims.extend(self.parse_tile_shape_rest())
        self.expect("]")
        if self.tok.kind == L.IDENT and self.tok.text.startswith("x") and len(self.tok.text) > 1:
            # `]xf32` lexes as one identifier: split off the `x`.
            self.reset_to(self.tok.start + 1)
        else:
            self.expect("x")
        element = self.parse_type()
        self.expect(">")
        ty = T.TileType(tuple(dims), element)
        self.check_type(ty, Span(tok.start, self.prev_end), {})
        self.simplified_syntax("a bracketed tile shape", Span(tok.start, self.prev_end), str(ty))
        return ty

    def parse_tile_shape_rest(self) -> list[int]:
        values: list[int] = []
        while self.tok.kind == L.IDENT and re.fullmatch(r"(x\d+)+", self.tok.text):
            tok = self.advance()
            values.extend(int(p) for p in tok.text.split("x")[1:])
        return values

    def parse_tile_shape(self) -> tuple[int, ...]:
        """`4x8` inside `tile=(...)` (no trailing element type)."""
        return tuple(v for v, _ in self.parse_tile_shape_with_spans())

    def parse_tile_shape_with_spans(self) -> list[tuple[int, Span]]:
        """`parse_tile_shape`, with where each dimension is written."""
        if self.at(")"):
            return []
        start = self.tok.start
        dims = [(self.parse_integer(), Span(start, self.prev_end))]
        # `x8x16` after the first, or with spaces (`16 x 64`, `16 x64`, `16x 64`) as MLIR's
        # lexer allows: a word of x-separated numbers that ends in `x` is followed by a number.
        while self.tok.kind == L.IDENT and re.fullmatch(r"x(?:\d+x)*\d*", self.tok.text):
            tok = self.advance()
            at = tok.start + 1
            for part in tok.text[1:].split("x"):
                if part:
                    dims.append((int(part), Span(at, at + len(part))))
                at += len(part) + 1
            if tok.text.endswith("x"):
                start = self.tok.start
                dims.append((self.parse_integer(), Span(start, self.prev_end)))
        return dims

    def parse_int_list_with_spans(self) -> list[tuple[int, Span]]:
        """`[1, -2, 3]`, with where each integer is written."""
        self.expect("[")
        values: list[tuple[int, Span]] = []
        if not self.at("]"):
            while True:
                start = self.tok.start
                values.append((self.parse_integer(), Span(start, self.prev_end)))
                if not self.accept(","):
                    break
        self.expect("]")
        return values

    def parse_int_list(self) -> list[int]:
        self.expect("[")
        values: list[int] = []
        if not self.at("]"):
            while True:
                values.append(self.parse_integer())
                if not self.accept(","):
                    break
        self.expect("]")
        return values

    def parse_integer(self) -> int:
        negative = self.accept("-") is not None
        tok = self.tok
        if tok.kind != L.INT:
            self.fail("expected integer value")
        self.advance()
        value = L.int_literal(tok.text)
        return -value if negative else value

    # ---------------------------------------------------------------- attributes

    def parse_attr_dict_body(self) -> dict[str, A.Attribute]:
        self.expect("{")
        entries = self.parse_attr_dict_entries()
        return entries

    def parse_attr_dict_entries(self) -> dict[str, A.Attribute]:
        """Entries up to and including the closing '}' (the '{' is already consumed)."""
        entries: dict[str, A.Attribute] = {}
        if self.accept("}"):
            return entries
        while True:
            tok = self.tok
            if tok.kind in (L.IDENT,):
                key = tok.text
            elif tok.kind == L.STRING:
                key = self.string_value(tok)
            else:
                self.fail("expected attribute name")
            self.advance()
            if key in entries:
                self.error(f"duplicate key '{key}' in dictionary attribute", tok.span)
            if self.accept("="):
                entries[key] = self.parse_attribute()
            else:
                entries[key] = A.UNIT
            if not self.accept(","):
                break
        self.expect("}")
        return entries

    def parse_attribute(self) -> A.Attribute:
        tok = self.tok
        kind = tok.kind
        if kind == L.IDENT:
            text = tok.text
            if text in ("true", "false"):
                self.advance()
                return A.BoolAttr(text == "true")
            if text == "unit":
                self.advance()
                return A.UNIT
            if text == "array":
                return self.parse_dense_array()
            if text == "dense":
                return self.parse_dense_elements()
            if text == "loc":
                return self.parse_location()
            if text in ("affine_map", "affine_set", "dense_resource", "sparse", "strided", "distinct"):
                self.advance()
                return A.OpaqueAttr(text + self.skip_balanced())
            return A.TypeAttr(self.parse_type())
        if kind == L.INT or kind == L.FLOAT or self.at("-"):
            return self.parse_number_attribute()
        if kind == L.STRING:
            self.advance()
            value = A.StringAttr(self.string_value(tok))
            if self.at(":"):
                self.advance()
                self.parse_type()
            return value
        if kind == L.SYMBOL:
            self.advance()
            name = self._symbol_name(tok)
            nested: list[str] = []
            while self.at("::"):
                self.advance()
                nested.append(self._symbol_name(self.expect_kind(L.SYMBOL, "symbol reference")))
            return A.SymbolRefAttr(name, tuple(nested))
        if self.at("["):
            self.advance()
            elements: list[A.Attribute] = []
            if not self.at("]"):
                while True:
                    elements.append(self.parse_attribute())
                    if not self.accept(","):
                        break
            self.expect("]")
            return A.ArrayAttr(tuple(elements))
        if self.at("{"):
            self.advance()
            return A.DictionaryAttr(tuple(self.parse_attr_dict_entries().items()))
        if kind == L.HASH:
            return self.parse_hash_attribute()
        if kind == L.BANG or self.at("("):
            return A.TypeAttr(self.parse_type())
        self.fail("expected attribute value")
        raise AssertionError

    def string_value(self, tok: Token, offset: int = 0) -> str:
        """The value of the string literal `tok.text[offset:]`; an escape MLIR does not know
        (`\\q`, `\\0`) is reported where it is and taken as the character after it."""
        literal = tok.text[offset:] if offset else tok.text
        bad = L.bad_escape(literal)
        if bad is not None:
            at = tok.start + offset + bad
            self.error("unknown escape in string literal", Span(at, at + 2))
        return unescape_string(literal)

    def _symbol_name(self, tok: Token) -> str:
        text = tok.text[1:]
        name = self.string_value(tok, 1) if text.startswith('"') else text
        if self.references is not None:
            self.references.symbols.append((tok.span, name))
        return name

    def parse_number_attribute(self) -> A.Attribute:
        start = self.tok.start
        negative = self.accept("-") is not None
        tok = self.tok
        if tok.kind not in (L.INT, L.FLOAT):
            self.fail("expected integer or float literal")
        self.advance()
        literal = ("-" if negative else "") + tok.text
        ty: T.Type | None = None
        if self.at(":"):
            self.advance()
            ty = self.parse_type()
        if isinstance(ty, T.FloatType) or (ty is None and tok.kind == L.FLOAT):
            from ..ir import floats

            fty = ty if isinstance(ty, T.FloatType) else T.FLOAT_TYPES["f64"]
            bits = floats.parse_float_literal(literal, fty.name)
            if bits is None:
                self.fail(f"invalid float literal for {fty}", Span(start, self.prev_end))
            return A.FloatAttr(bits, fty)  # type: ignore[arg-type]
        span = Span(start, self.prev_end)
        if tok.kind == L.FLOAT:
            self.fail("floating point value not valid for specified type", span)
        value = L.int_literal(tok.text)
        if negative:
            value = -value
        problem = _integer_range_problem(value, ty)
        if problem is not None:
            self.fail(problem, span)
        if ty == T.IntegerType(64):
            ty = None
        return A.IntegerAttr(value, ty)

    def parse_dense_array(self) -> A.DenseArrayAttr:
        self.advance()
        self.expect("<")
        element = self.parse_type()
        values: list[int] = []
        if self.accept(":"):
            while True:
                if isinstance(element, T.IntegerType) and element.width == 1 and self.tok.text in ("true", "false"):
                    values.append(1 if self.advance().text == "true" else 0)
                else:
                    values.append(self.parse_integer())
                if not self.accept(","):
                    break
        self.expect(">")
        return A.DenseArrayAttr(element, tuple(values))

    def parse_dense_elements(self) -> A.Attribute:
        start = self.advance().start
        self.expect("<")
        literal = self.parse_dense_literal()
        self.expect(">")
        self.expect(":")
        ty_start = self.tok.start
        ty = self.parse_type()
        return self.build_dense(literal, ty, Span(start, self.prev_end), Span(ty_start, self.prev_end))

    def parse_dense_literal(self, element: T.Type | None = None, prefix: str = "") -> object:
        """Nested lists of literal strings (`-1`, `2.5`, `true`, `0x7C00`, a hex string).

        With the element type known before the literal (cuda_tile's `<f32: ...>`), each
        element and the nesting are checked while reading, as cuda-tile-opt does, so the
        first bad element is the one reported; `prefix` goes in front of the messages the
        dialect's parser emits itself (`custom op 'cuda_tile.constant' `).
        """
        return self._dense_node(element, prefix)[0]

    def _dense_node(self, element: T.Type | None, prefix: str) -> tuple[object, tuple[int, ...]]:
        if self.at("["):
            self.advance()
            items: list[object] = []
            first: tuple[int, ...] | None = None
            if not self.at("]"):
                while True:
                    item, shape = self._dense_node(element, prefix)
                    items.append(item)
                    if first is None:
                        first = shape
                    elif element is not None and shape != first:
                        from .denseformat import RANKS_INCONSISTENT

                        self.fail(prefix + RANKS_INCONSISTENT, Span(self.prev_end, self.prev_end))
                    if not self.accept(","):
                        break
            self.expect("]")
            return items, (len(items), *(first or ()))
        start = self.tok.start
        negative = self.accept("-") is not None
        tok = self.tok
        text: str | None = None
        if tok.kind in (L.INT, L.FLOAT) or (tok.kind == L.IDENT and tok.text in ("true", "false", "inf", "nan")):
            text = ("-" if negative else "") + tok.text
        elif tok.kind == L.STRING and not negative:
            self.advance()
            return tok.text, ()
        if element is not None and (text is not None or isinstance(element, (T.IntegerType, T.FloatType))):
            from ..ir import floats
            from .denseformat import EXPECTED_INTEGER, check_element

            span = Span(start, tok.end)
            error, note = check_element(text, element) if text is not None else (None, None)
            if text is None:
                error = EXPECTED_INTEGER if isinstance(element, T.IntegerType) else floats.EXPECTED_FLOAT_LITERAL
            if error is not None:
                if isinstance(element, T.IntegerType):
                    error = prefix + error  # the dialect's own checks, through the op's parser
                related = [Related(note, span, self.source)] if note else []
                self.diagnostics.append(Diagnostic(Severity.ERROR, "dense-literal", error, span, self.source, related))
                raise ParseError(error)
        if text is None:
            self.fail("expected integer or float literal in dense elements", Span(start, self.tok.end))
        self.advance()
        return text, ()

    def build_dense(
        self, literal: object, ty: T.Type, span: Span, type_span: Span, prefix: str = ""
    ) -> A.DenseElementsAttr:
        from .denseformat import dense_values_from_literals

        if not isinstance(ty, T.TileType):
            if isinstance(ty, T.OpaqueType):
                return A.DenseElementsAttr(ty, (), False)
            self.fail(f"expected a tile type for dense elements, got {ty}", type_span)
        assert isinstance(ty, T.TileType)
        values, splat, error = dense_values_from_literals(literal, ty.element, ty.shape)
        if error is not None or values is None:
            self.fail(prefix + (error or "invalid dense elements"), span)
        return A.DenseElementsAttr(ty, values, splat)  # type: ignore[arg-type]

    def parse_hash_attribute(self) -> A.Attribute:
        tok = self.advance()
        name = tok.text[1:]
        if name.startswith("cuda_tile."):
            return self.parse_cuda_tile_attribute(name[10:], tok)
        if "." in name:
            body = self.skip_balanced() if self.at("<") else ""
            return A.OpaqueAttr(tok.text + body)
        alias = self.module.attribute_aliases.get(name)
        if alias is None:
            alias = self._forward_alias("#", name)
        if alias is None:
            self.fail(f"undefined symbol alias id '{name}'", tok.span)
        assert alias is not None
        return alias  # type: ignore[return-value]

    def parse_cuda_tile_attribute(self, mnemonic: str, tok: Token) -> A.Attribute:
        enum = enum_for_kind("enum:" + mnemonic)
        if enum is not None:
            self.expect("<")
            kw = self.expect_kind(L.IDENT, f"{mnemonic} keyword")
            if enum.by_keyword(kw.text) is None:
                self.fail(f"invalid {mnemonic} '{kw.text}'; expected one of: {', '.join(enum.keywords)}", kw.span)
            self.expect(">")
            return A.EnumAttr(enum, kw.text)
        if mnemonic == "optimization_hints":
            return self.parse_optimization_hints_body()
        if mnemonic in ("div_by", "same_elements", "bounded"):
            return self.parse_assume_predicate_body(mnemonic)
        if mnemonic in ("di_file", "di_compile_unit", "di_subprogram", "di_lexical_block"):
            return self.parse_di_attr_body(mnemonic)
        if mnemonic == "di_loc":
            self.expect("<")
            src = self.parse_location_body() if self.tok.kind == L.HASH else self.parse_location()
            self.expect("in")
            scope = self.parse_attribute()
            self.expect(">")
            return A.DILocAttr(src, scope)
        self.fail(f"unknown cuda_tile attribute '{mnemonic}'", tok.span)
        raise AssertionError

    def parse_optimization_hints_body(self, op_name: str | None = None) -> A.OptimizationHintsAttr:
        """`<sm_100 = {num_cta_in_cga = 2}, default = {...}>`, with the messages of cuda_tile's
        `OptimizationHintsAttr::parse`; inside an op's own syntax (`op_name`) they carry
        MLIR's `custom op '...' ` prefix."""
        prefix = f"custom op '{op_name}' " if op_name else ""
        self.expect("<")
        entries: list[tuple[str, A.DictionaryAttr]] = []
        if not self.at(">"):
            while True:
                key_tok = self.tok
                if key_tok.kind == L.IDENT:
                    key = key_tok.text
                elif key_tok.kind == L.STRING:
                    key = self.string_value(key_tok)
                else:
                    self.fail(prefix + "expected valid keyword or string", key_tok.span)
                self.advance()
                self.expect("=")
                value = self.parse_attribute()
                here = self.tok.span
                if any(k == key for k, _ in entries):
                    self.fail(prefix + f"duplicate optimization_hints key `{key}`", here)
                if not isinstance(value, A.DictionaryAttr):
                    self.fail(
                        prefix + f"expected dictionary attribute for optimization_hints entry `{key}` "
                        f"got value={_attr_with_type(value)}",
                        here,
                    )
                entries.append((key, value))
                if not self.accept(","):
                    break
        self.expect(">")
        return A.OptimizationHintsAttr(tuple(entries))

    def parse_assume_predicate_body(self, mnemonic: str) -> A.Attribute:
        self.expect("<")
        if mnemonic == "div_by":
            divisor = self.parse_integer()
            every = along = None
            if self.accept(","):
                self.expect("every")
                every = self.parse_integer()
                self.expect("along")
                along = self.parse_integer()
            self.expect(">")
            return A.DivByAttr(divisor, every, along)
        if mnemonic == "same_elements":
            values = self.parse_int_list()
            self.expect(">")
            return A.SameElementsAttr(tuple(values))
        lb = None if self.accept("?") else self.parse_integer()
        self.expect(",")
        ub = None if self.accept("?") else self.parse_integer()
        self.expect(">")
        return A.BoundedAttr(lb, ub)

    def parse_di_attr_body(self, mnemonic: str) -> A.DIAttr:
        self.expect("<")
        if mnemonic == "di_file":
            name = self.expect_kind(L.STRING, "file name string")
            self.expect("in")
            directory = self.expect_kind(L.STRING, "directory string")
            self.expect(">")
            return A.DIAttr(
                "di_file",
                (
                    ("name", A.StringAttr(self.string_value(name))),
                    ("directory", A.StringAttr(self.string_value(directory))),
                ),
            )
        # `struct(params)`: `name = value` pairs in any order, with MLIR's messages.
        required, optional = _DI_STRUCT_PARAMS.get(mnemonic, ((), ()))
        params: list[tuple[str, A.Attribute]] = []
        if required or not self.at(">"):
            while True:
                key = self.tok
                if key.kind != L.IDENT:
                    self.fail("expected a parameter name in struct", key.span)
                if (required or optional) and (
                    key.text not in (*required, *optional) or any(k == key.text for k, _ in params)
                ):
                    self.fail(f"duplicate or unknown struct parameter name: {key.text}", key.span)
                self.advance()
                self.expect("=")
                params.append((key.text, self.parse_attribute()))
                if not self.accept(","):
                    break
        for name in required:
            if not any(k == name for k, _ in params):
                self.fail(f"struct is missing required parameter: {name}", self.tok.span)
        self.expect(">")
        return A.DIAttr(mnemonic, tuple(params))

    def parse_location(self) -> A.LocationAttr:
        self.expect("loc")
        self.expect("(")
        loc = self.parse_location_body()
        self.expect(")")
        return loc

    def parse_location_body(self) -> A.LocationAttr:
        tok = self.tok
        if tok.kind == L.IDENT and tok.text == "unknown":
            self.advance()
            return A.UnknownLoc()
        if tok.kind == L.IDENT and tok.text == "callsite":
            self.advance()
            self.expect("(")
            callee = self.parse_location_body()
            self.expect("at")
            caller = self.parse_location_body()
            self.expect(")")
            return A.CallSiteLoc(callee, caller)
        if tok.kind == L.IDENT and tok.text == "fused":
            self.advance()
            metadata = None
            if self.accept("<"):
                metadata = self.parse_attribute()
                self.expect(">")
            self.expect("[")
            locs: list[A.LocationAttr] = []
            if not self.at("]"):
                while True:
                    locs.append(self.parse_location_body())
                    if not self.accept(","):
                        break
            self.expect("]")
            return A.FusedLoc(tuple(locs), metadata)
        if tok.kind == L.STRING:
            self.advance()
            text = self.string_value(tok)
            if self.at(":"):
                self.advance()
                line = self.parse_integer()
                self.expect(":")
                col = self.parse_integer()
                if self.accept("to"):
                    end_line = line
                    first = self.parse_integer()
                    if self.accept(":"):
                        end_line, end_col = first, self.parse_integer()
                    else:
                        end_col = first
                    return A.FileLineColLoc(text, line, col, end_line, end_col)
                return A.FileLineColLoc(text, line, col)
            child = None
            if self.accept("("):
                child = self.parse_location_body()
                self.expect(")")
            return A.NameLoc(text, child)
        if tok.kind == L.HASH:
            attr = self.parse_hash_attribute()
            if isinstance(attr, A.LocationAttr):
                return attr
            self.fail("expected location attribute", tok.span)
        self.fail("expected location")
        raise AssertionError

    def skip_balanced(self) -> str:
        """Raw text of a bracketed group starting at the current token (for opaque constructs)."""
        start = self.tok.start
        if self.tok.text not in _BALANCED_OPEN:
            return ""
        opened = self.tok.span
        stack = []
        while True:
            tok = self.tok
            if tok.kind == L.EOF:
                # At the bracket never closed (not up to the end of the text, which would
                # mark all of it and move with every edit after it).
                self.fail("unbalanced brackets", opened)
            if tok.text in _BALANCED_OPEN and tok.kind == L.PUNCT:
                stack.append(_BALANCED_OPEN[tok.text])
            elif tok.kind == L.PUNCT and stack and tok.text == stack[-1]:
                stack.pop()
            elif tok.kind == L.PUNCT and tok.text == "->":
                pass
            self.advance()
            if not stack:
                return self.text[start : self.prev_end]


def _attr_with_type(attr: A.Attribute) -> str:
    """An attribute as MLIR prints it in a diagnostic: integers with their type (`2 : i64`)."""
    if isinstance(attr, A.IntegerAttr) and attr.type is None:
        return f"{attr.value} : i64"
    return str(attr)


def _infer_segments(opdef: OpDef, count: int) -> tuple[int, ...]:
    """Operand group sizes when only one group can absorb the extra operands."""
    fixed = sum(1 for o in opdef.operands if o.arity == "single")
    flexible = [i for i, o in enumerate(opdef.operands) if o.arity != "single"]
    sizes = [1 if o.arity == "single" else 0 for o in opdef.operands]
    if len(flexible) == 1:
        sizes[flexible[0]] = max(count - fixed, 0)
    return tuple(sizes)
