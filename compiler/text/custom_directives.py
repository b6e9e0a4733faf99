"""The `custom<...>` directives used inside declarative assembly formats.

Each directive is a (parse, print) pair. Parse functions store what they read in
the op (attributes) or in the format state (operands, types, regions); print
functions write text through the printer.
"""

from __future__ import annotations

from collections.abc import Callable

from ..dialect import lookup_op
from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation, Region
from ..ir.enums import COMPARISON_ORDERING, COMPARISON_PREDICATE, ROUNDING_MODE, SIGNEDNESS, SYMBOL_VISIBILITY
from ..ir.source import Span
from . import lexer as L

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from .asmformat import TypeOf, Var, _State
    from .parser import Parser
    from .printer import Printer


# ------------------------------------------------------------------ enums


def _custom_op_error(op: Operation, message: str) -> str:
    """How MLIR words an error raised inside an op's custom parser."""
    return f"custom op '{op.name}' {message}"


def _expect_keyword(parser: Parser, op: Operation, message: str) -> L.Token:
    """The current token as a keyword; otherwise MLIR's two errors, both at the token: the
    generic `expected valid keyword`, then the directive's own `message`."""
    tok = parser.tok
    if tok.kind != L.IDENT:
        parser.error(_custom_op_error(op, "expected valid keyword"), tok.span)
        parser.fail(_custom_op_error(op, message), tok.span)
    return tok


def _keyword_enum(enum, message: str):
    def parse(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
        tok = _expect_keyword(parser, op, message)
        if enum.by_keyword(tok.text) is None:
            parser.fail(_custom_op_error(op, message), tok.span)
        parser.advance()
        op.properties[args[0].name] = A.EnumAttr(enum, tok.text)

    def print_(printer: Printer, op: Operation, args: list[Var | TypeOf]) -> None:
        value = op.properties.get(args[0].name)
        if isinstance(value, A.EnumAttr):
            printer.write(value.keyword)

    return parse, print_


def _rounding(allowed: tuple[str, ...], default: str, validated: bool = True, newer: tuple[str, ...] = ()):
    """`rounding<mode>`, omitted when it is the op's default mode.

    `validated` directives (IEEE and integer rounding) reject at parse time any mode outside
    `allowed` and name it (`..., got: 'x'`). The others (divf, sqrt, exp, tanh) only reject
    words that are no rounding mode at all, without naming them; a real mode outside
    `allowed` is left to the op's verifier. `newer` modes (13.4's `nearest_away`, which `ftof`
    takes and the 13.3 ops sharing its directive do not) pass to the verifier too, without
    changing the 13.3 message.
    """

    def parse(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
        name = args[0].name
        if not parser.accept("rounding"):
            op.properties[name] = A.EnumAttr(ROUNDING_MODE, default)
            return
        parser.expect("<")
        tok = parser.tok
        if tok.kind != L.IDENT:
            parser.fail(_custom_op_error(op, "expected valid keyword"), tok.span)
        parser.advance()
        parser.expect(">")
        known = ROUNDING_MODE.by_keyword(tok.text) is not None
        if not known or (validated and tok.text not in allowed and tok.text not in newer):
            message = "expected rounding mode to be one of: " + ", ".join(f"'{m}'" for m in allowed)
            if validated:
                message += f", got: '{tok.text}'"
            parser.fail(_custom_op_error(op, message), tok.span)
        op.properties[name] = A.EnumAttr(ROUNDING_MODE, tok.text)

    def print_(printer: Printer, op: Operation, args: list[Var | TypeOf]) -> None:
        value = op.properties.get(args[0].name)
        if isinstance(value, A.EnumAttr) and value.keyword != default:
            printer.write(f"rounding<{value.keyword}>")

    return parse, print_


# ------------------------------------------------------------------ dense constants


def _names_a_type(word: str) -> bool:
    """Whether a bare word starts a type the parser knows (builtin or cuda_tile)."""
    import re

    from .parser import _BIT_TYPES, _BUILTIN_OPAQUE_TYPES, _CUDA_TILE_TYPE_NAMES

    return (
        word in T.SCALAR_TYPES
        or word in _CUDA_TILE_TYPE_NAMES
        or word in _BUILTIN_OPAQUE_TYPES
        or word in _BIT_TYPES
        or word in ("tensor", "vector", "memref", "complex", "tuple")
        or re.fullmatch(r"[su]?i\d+|f\d+|bf16", word) is not None
    )


def _parse_dense(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
    """`<f32: [1.0, 2.0]> : tile<2xf32>` — element type, literal, then the tile type, with the
    messages of cuda_tile's `parseDenseTypedElementsAttr`."""
    from .denseformat import BAD_ELEMENT_TYPE

    parser.expect("<")
    tok = parser.tok
    if tok.kind == L.IDENT and not _names_a_type(tok.text):
        # Not a type at all: MLIR's `unknown type`, then the directive's own message
        # about the type it did not get, both where the parser stopped.
        parser.advance()
        here = parser.tok.span
        parser.error(_custom_op_error(op, f"unknown type: {tok.text}"), here)
        parser.fail(_custom_op_error(op, f"{BAD_ELEMENT_TYPE}, but got '<<NULL TYPE>>'"), here)
    element = parser.parse_type()
    if element not in T.SCALAR_TYPES.values() or element == T.I4:
        parser.fail(_custom_op_error(op, f"{BAD_ELEMENT_TYPE}, but got '{element}'"), parser.tok.span)
    parser.expect(":")
    literal = parser.parse_dense_literal(element, _custom_op_error(op, ""))
    parser.expect(">")
    parser.expect(":")
    ty_start = parser.tok.start
    ty = parser.parse_type()
    ty_span = Span(ty_start, parser.prev_end)
    if not isinstance(ty, T.TileType):
        allowed = BAD_ELEMENT_TYPE.removeprefix("expect element type to be one of ")
        parser.fail(_custom_op_error(op, f"result #0 must be tile of {allowed}, but got '{ty}'"), ty_span)
    assert isinstance(ty, T.TileType)
    if ty.element != element:
        mismatch = f"mismatch between the element type: '{element}' and the tile element type '{ty.element}'"
        parser.fail(_custom_op_error(op, mismatch), ty_span)
    op.properties[args[0].name] = parser.build_dense(literal, ty, ty_span, ty_span, _custom_op_error(op, ""))
    if len(args) > 1:
        state.types[args[1].name] = [ty]


def _print_dense(printer: Printer, op: Operation, args: list[Var | TypeOf]) -> None:
    from .denseformat import format_dense_body

    value = op.properties.get(args[0].name)
    if isinstance(value, A.DenseElementsAttr):
        printer.write(f"<{value.element}: {format_dense_body(value)}> : {printer.type(value.type)}")
    elif value is not None:
        printer.write(printer.attr(value))


# ------------------------------------------------------------------ misc


def _parse_visibility(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
    tok = parser.tok
    keyword = "public"
    if tok.kind == L.IDENT and tok.text in ("public", "private"):
        parser.advance()
        keyword = tok.text
    op.properties[args[0].name] = A.EnumAttr(SYMBOL_VISIBILITY, keyword)


def _print_visibility(printer: Printer, op: Operation, args: list[Var | TypeOf]) -> None:
    value = op.properties.get(args[0].name)
    if isinstance(value, A.EnumAttr) and value.keyword != "public":
        printer.write(value.keyword + " ")


# Keywords and builtin type names with which MLIR's attribute parser starts an attribute
# (a type is an attribute too); any other bare word is "expected attribute value".
_ATTRIBUTE_WORDS = frozenset(
    "true false unit dense dense_resource array affine_map affine_set distinct loc sparse strided "
    "index none tensor vector memref complex tuple bf16 tf32".split()
)


def starts_attribute(tok) -> bool:
    """Whether MLIR's `parseOptionalAttribute` would take `tok` as the start of an attribute."""
    if tok.kind in (L.INT, L.FLOAT, L.STRING, L.HASH, L.SYMBOL, L.BANG):
        return True
    if tok.kind == L.PUNCT:
        return tok.text in ("[", "{", "-", "(")
    if tok.kind == L.IDENT:
        text = tok.text
        return text in _ATTRIBUTE_WORDS or (text[:1] in "iusf" and text[1:2].isdigit())
    return False


def _parse_assume_predicate(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
    tok = parser.tok
    if starts_attribute(tok):
        # A full attribute (`#cuda_tile.div_by<...>`); any other attribute is rejected whole.
        attr = parser.parse_attribute()
        if not isinstance(attr, A.ASSUME_PREDICATES):
            parser.fail("expected assume predicate attribute", Span(tok.start, tok.start))
    elif tok.kind == L.IDENT and tok.text in ("div_by", "same_elements", "bounded"):
        parser.advance()
        attr = parser.parse_assume_predicate_body(tok.text)
    else:
        found = tok.text if tok.kind == L.IDENT else ""
        parser.fail(
            f"unknown assume predicate attribute: {found} (expected 'div_by', 'same_elements', or 'bounded')",
            tok.span,
        )
    op.properties[args[0].name] = attr


def _print_assume_predicate(printer: Printer, op: Operation, args: list[Var | TypeOf]) -> None:
    value = op.properties.get(args[0].name)
    if isinstance(value, A.ASSUME_PREDICATES):
        printer.write(value.body())
    elif value is not None:
        printer.write(printer.attr(value))


# ------------------------------------------------------------------ regions


def ensure_terminator(parser: Parser | None, region: Region, mnemonic: str, at: Span | None = None) -> None:
    """Add the implicit terminator (`yield`, `continue`, `return`) a region may omit. `at` is
    the parent op's name: MLIR locates the implicit terminator there (a zero-width span, so
    that it never covers the parent's text); without it, the region's end."""
    block = region.entry_block
    if block is None:
        from ..ir.core import Block

        block = region.add_block(Block())
    last = block.ops[-1] if block.ops else None
    if last is not None and last.opdef is not None and "Terminator" in last.opdef.traits:
        return
    opdef = lookup_op(mnemonic)
    term = Operation(opdef.name if opdef else f"cuda_tile.{mnemonic}", opdef)
    if opdef is not None and opdef.has_segments:
        term.operand_segments = tuple(0 for _ in opdef.operands)
    end = at.start if at is not None else region.span.end - 1 if region.span else 0
    term.span = Span(end, end)
    block.append(term)


def implicit_terminator_elided(region: Region, mnemonic: str) -> bool:
    """True when the region's terminator is the implicit one, with no operands."""
    block = region.entry_block
    if block is None or not block.ops:
        return True
    last = block.ops[-1]
    return last.name == f"cuda_tile.{mnemonic}" and not last.operands and not last.attributes


def _parse_if_region(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
    region = parser.parse_region()
    ensure_terminator(parser, region, "yield", op.name_span)
    state.regions[args[0].name] = region


def _print_if_region(printer: Printer, op: Operation, args: list[Var | TypeOf]) -> None:
    index = [r.name for r in op.opdef.regions].index(args[0].name) if op.opdef else 0
    region = op.regions[index]
    printer.print_region(region, print_terminators=not implicit_terminator_elided(region, "yield"))


def _parse_argument_region(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
    arguments = parser.parse_function_arguments()
    region = parser.parse_region(arguments)
    state.regions[args[0].name] = region


def _print_argument_region(printer: Printer, op: Operation, args: list[Var | TypeOf]) -> None:
    index = [r.name for r in op.opdef.regions].index(args[0].name) if op.opdef else 0
    region = op.regions[index]
    printer.newline()
    printer.write(printer.signature(region, ()))
    printer.write(" ")
    printer.print_region(region)


Parse = Callable[["Parser", Operation, "_State", list], None]
Print = Callable[["Printer", Operation, list], None]

DIRECTIVES: dict[str, tuple[Parse, Print]] = {
    "IEEERoundingMode": _rounding(
        ("nearest_even", "zero", "negative_inf", "positive_inf"), "nearest_even", newer=("nearest_away",)
    ),
    "DivFOpRoundingMode": _rounding(
        ("nearest_even", "zero", "negative_inf", "positive_inf", "approx", "full"), "nearest_even", validated=False
    ),
    "SqrtOpRoundingMode": _rounding(
        ("nearest_even", "zero", "negative_inf", "positive_inf", "approx"), "nearest_even", validated=False
    ),
    "TanHOpRoundingMode": _rounding(("approx", "full"), "full", validated=False),
    "ExpOpRoundingMode": _rounding(("approx", "full"), "full", validated=False),
    "IntegerRoundingMode": _rounding(("nearest_int_to_zero",), "nearest_int_to_zero"),
    "Signedness": _keyword_enum(SIGNEDNESS, "expected signedness to be one of: {'signed', 'unsigned'}"),
    "ComparisonPredicate": _keyword_enum(
        COMPARISON_PREDICATE,
        "expected 'comparison_predicate' to be one of: {'equal', 'not_equal', 'less_than', "
        "'less_than_or_equal', 'greater_than', 'greater_than_or_equal'}",
    ),
    "ComparisonOrdering": _keyword_enum(
        COMPARISON_ORDERING, "expected 'comparison_ordering' to be one of: {'ordered', 'unordered'}"
    ),
    "DenseTypedElementsAttr": (_parse_dense, _print_dense),
    "DenseTypedElementsAttrNoResult": (_parse_dense, _print_dense),
    "SymbolVisibility": (_parse_visibility, _print_visibility),
    "AssumePredicate": (_parse_assume_predicate, _print_assume_predicate),
    "IfOpRegion": (_parse_if_region, _print_if_region),
    "ArgumentRegion": (_parse_argument_region, _print_argument_region),
}
