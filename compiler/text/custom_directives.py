"""The `custom<...>` directives used inside declarative assembly formats.

Each directive is a (parse, print) pair. Parse functions store what they read in
the op (attributes) or in the format state (operands, types, regions); print
functions write text through the printer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..dialect import lookup_op
from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation, Region
from ..ir.enums import COMPARISON_ORDERING, COMPARISON_PREDICATE, ROUNDING_MODE, SIGNEDNESS, SYMBOL_VISIBILITY
from ..ir.source import Span
from . import lexer as L

if TYPE_CHECKING:
    from .asmformat import TypeOf, Var, _State
    from .parser import Parser
    from .printer import Printer


# ------------------------------------------------------------------ enums


def _keyword_enum(enum, message: str):
    def parse(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
        tok = parser.tok
        if tok.kind != L.IDENT or enum.by_keyword(tok.text) is None:
            parser.fail(message, tok.span)
        parser.advance()
        op.properties[args[0].name] = A.EnumAttr(enum, tok.text)

    def print_(printer: Printer, op: Operation, args: list[Var | TypeOf]) -> None:
        value = op.properties.get(args[0].name)
        if isinstance(value, A.EnumAttr):
            printer.write(value.keyword)

    return parse, print_


def _rounding(allowed: tuple[str, ...], default: str):
    """`rounding<mode>`, omitted when it is the op's default mode."""

    def parse(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
        name = args[0].name
        if not parser.accept("rounding"):
            op.properties[name] = A.EnumAttr(ROUNDING_MODE, default)
            return
        parser.expect("<")
        tok = parser.expect_kind(L.IDENT, "rounding mode")
        parser.expect(">")
        if ROUNDING_MODE.by_keyword(tok.text) is None or tok.text not in allowed:
            quoted = ", ".join(f"'{m}'" for m in allowed)
            parser.fail(f"expected rounding mode to be one of: {quoted}, got: '{tok.text}'", tok.span)
        op.properties[name] = A.EnumAttr(ROUNDING_MODE, tok.text)

    def print_(printer: Printer, op: Operation, args: list[Var | TypeOf]) -> None:
        value = op.properties.get(args[0].name)
        if isinstance(value, A.EnumAttr) and value.keyword != default:
            printer.write(f"rounding<{value.keyword}>")

    return parse, print_


# ------------------------------------------------------------------ dense constants


def _parse_dense(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
    """`<f32: [1.0, 2.0]> : tile<2xf32>` — element type, literal, then the tile type."""
    start = parser.tok.start
    parser.expect("<")
    elem_start = parser.tok.start
    element = parser.parse_type()
    if element not in T.SCALAR_TYPES.values() or element == T.I4:
        parser.fail(
            "expect element type to be one of i1 or i8 or i16 or i32 or i64 or f16 or bf16 or f32 or f64 "
            f"or tf32 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN values, but got {element}",
            Span(elem_start, parser.prev_end),
        )
    parser.expect(":")
    literal = parser.parse_dense_literal()
    parser.expect(">")
    parser.expect(":")
    ty_start = parser.tok.start
    ty = parser.parse_type()
    if isinstance(ty, T.TileType) and ty.element != element:
        parser.fail(
            f"element type {element} of the constant does not match the tile type {ty}", Span(ty_start, parser.prev_end)
        )
    op.properties[args[0].name] = parser.build_dense(
        literal, ty, Span(start, parser.prev_end), Span(ty_start, parser.prev_end)
    )
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


def _parse_assume_predicate(parser: Parser, op: Operation, state: _State, args: list[Var | TypeOf]) -> None:
    tok = parser.tok
    if tok.kind == L.HASH:
        attr = parser.parse_attribute()
        if not isinstance(attr, A.ASSUME_PREDICATES):
            parser.fail("expected assume predicate attribute", Span(tok.start, parser.prev_end))
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


def ensure_terminator(parser: Parser | None, region: Region, mnemonic: str) -> None:
    """Add the implicit terminator (`yield`, `continue`, `return`) a region may omit."""
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
    end = region.span.end - 1 if region.span else 0
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
    ensure_terminator(parser, region, "yield")
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
    "IEEERoundingMode": _rounding(("nearest_even", "zero", "negative_inf", "positive_inf"), "nearest_even"),
    "DivFOpRoundingMode": _rounding(
        ("nearest_even", "zero", "negative_inf", "positive_inf", "approx", "full"), "nearest_even"
    ),
    "SqrtOpRoundingMode": _rounding(("nearest_even", "zero", "negative_inf", "positive_inf", "approx"), "nearest_even"),
    "TanHOpRoundingMode": _rounding(("approx", "full"), "full"),
    "ExpOpRoundingMode": _rounding(("approx", "full"), "full"),
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
