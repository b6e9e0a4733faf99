"""Hand-written syntax for the ops whose assembly is not declarative
(`hasCustomAssemblyFormat` in the dialect): entries, loops, views and view
memory ops. Each op has a parse function filling an `Operation` and a print
function writing the text after the op name.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation, OpResult
from ..ir.enums import ATOMIC_RMW_MODE, MEMORY_ORDERING, MEMORY_SCOPE
from ..ir.source import Span
from . import lexer as L
from .asmformat import parse_attr_dict
from .custom_directives import ensure_terminator, implicit_terminator_elided

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from .parser import Parser
    from .printer import Printer


def _set_results(op: Operation, types: list[T.Type]) -> None:
    op.results = [OpResult(op, i, t) for i, t in enumerate(types)]


# ------------------------------------------------------------------ functions


def parse_entry(parser: Parser, op: Operation) -> None:
    if parser.tok.kind != L.SYMBOL:
        parser.fail("expected valid '@'-identifier for symbol name", parser.here())
    tok = parser.advance()
    op.properties["sym_name"] = A.StringAttr(parser._symbol_name(tok))
    arg_attrs: list[A.DictionaryAttr] = []
    args = parser.parse_function_arguments(arg_attrs)
    results: list[T.Type] = []
    res_attrs: list[A.DictionaryAttr] = []
    if parser.accept("->"):
        if parser.accept("("):
            if not parser.at(")"):
                while True:
                    results.append(parser.parse_type())
                    entries = parser.parse_attr_dict_body() if parser.at("{") else {}
                    res_attrs.append(A.DictionaryAttr(tuple(entries.items())))
                    if not parser.accept(","):
                        break
            parser.expect(")")
        else:
            results.append(parser.parse_type())
    op.properties["function_type"] = A.TypeAttr(T.FunctionType(tuple(a[2] for a in args), tuple(results)))
    # Argument/result attributes are kept only when some were written (the verifier checks them).
    if any(d.entries for d in arg_attrs):
        op.properties["arg_attrs"] = A.ArrayAttr(tuple(arg_attrs))
    if any(d.entries for d in res_attrs):
        op.properties["res_attrs"] = A.ArrayAttr(tuple(res_attrs))
    if parser.accept("optimization_hints"):
        parser.expect("=")
        op.properties["optimization_hints"] = parser.parse_optimization_hints_body(op.name)
    outer = parser.kernel_column
    if op.name_span is not None:  # see Parser.next_item_here
        parser.kernel_column = parser.source.line_col(op.name_span.start)[1]
    try:
        region = parser.parse_region(args, isolated=True)
    finally:
        parser.kernel_column = outer
    op.add_region(region)
    ensure_terminator(parser, region, "return", op.name_span)
    parse_attr_dict(parser, op, keyword=True)


def print_entry(printer: Printer, op: Operation) -> None:
    name = op.properties.get("sym_name")
    printer.write(" " + str(A.SymbolRefAttr(name.value if isinstance(name, A.StringAttr) else "?")))
    fn = op.properties.get("function_type")
    results = fn.value.results if isinstance(fn, A.TypeAttr) and isinstance(fn.value, T.FunctionType) else ()
    region = op.regions[0] if op.regions else None
    printer.write(printer.signature(region, results))
    hints = op.properties.get("optimization_hints")
    if isinstance(hints, A.OptimizationHintsAttr) and hints.entries:
        printer.write(" optimization_hints=" + hints.body())
    if region is not None:
        printer.write(" ")
        printer.print_region(region)
    printer.write(
        printer.attr_dict(
            op, {"sym_name", "function_type", "arg_attrs", "res_attrs", "optimization_hints"}, keyword=True
        )
    )


# ------------------------------------------------------------------ loops


def _assignment_list(parser: Parser) -> tuple[list[tuple[str, Span]], list[tuple[str, Span]]]:
    """`(%a = %x, %b = %y)`: the new names and the initial values."""
    names: list[tuple[str, Span]] = []
    inits: list[tuple[str, Span]] = []
    parser.expect("(")
    if not parser.at(")"):
        while True:
            names.append(parser.parse_value_ref())
            parser.expect("=")
            inits.append(parser.parse_value_ref())
            if not parser.accept(","):
                break
    parser.expect(")")
    return names, inits


def _type_list(parser: Parser) -> list[T.Type]:
    types = [parser.parse_type()]
    while parser.accept(","):
        types.append(parser.parse_type())
    return types


def parse_for(parser: Parser, op: Operation) -> None:
    if parser.accept("unsigned"):
        op.properties["unsignedCmp"] = A.UNIT
    iv = parser.parse_value_ref()
    parser.expect("in")
    parser.expect("(")
    lb = parser.parse_value_ref()
    parser.expect("to")
    ub = parser.parse_value_ref()
    parser.expect(",")
    parser.expect("step")
    step = parser.parse_value_ref()
    parser.expect(")")
    parser.expect(":")
    iv_type = parser.parse_type()
    names: list[tuple[str, Span]] = []
    inits: list[tuple[str, Span]] = []
    result_types: list[T.Type] = []
    if parser.accept("iter_values"):
        names, inits = _assignment_list(parser)
        parser.expect("->")
        parser.expect("(")
        result_types = _type_list(parser)
        parser.expect(")")
        if len(inits) != len(result_types):
            parser.fail("mismatch in number of loop-carried values and defined values", op.name_span)
    args = [(iv[0], iv[1], iv_type, None)] + [(n, s, t, None) for (n, s), t in zip(names, result_types)]
    region = parser.parse_region(args)
    op.add_region(region)
    ensure_terminator(parser, region, "continue", op.name_span)
    parse_attr_dict(parser, op, keyword=False)
    # Like MLIR's parser, the operands are resolved once the body is parsed: a value defined
    # only inside the body is then an undeclared name, not a use before definition.
    operands = [parser.resolve_operand(n, s, iv_type) for n, s in (lb, ub, step)]
    operands += [parser.resolve_operand(n, s, t) for (n, s), t in zip(inits, result_types)]
    op.set_operands(operands)
    op.operand_segments = (1, 1, 1, len(inits))
    _set_results(op, result_types)


def _iter_values(printer: Printer, block_args, inits) -> str:
    pairs = ", ".join(f"{printer.value(a)} = {printer.value(v)}" for a, v in zip(block_args, inits))
    return f"iter_values({pairs})"


def print_for(printer: Printer, op: Operation) -> None:
    region = op.regions[0]
    block = region.entry_block
    args = block.arguments if block else []
    if "unsignedCmp" in op.properties:
        printer.write(" unsigned")
    lb, ub, step = op.operands[:3]
    iv = printer.value(args[0]) if args else "%?"
    printer.write(
        f" {iv} in ({printer.value(lb)} to {printer.value(ub)}, step {printer.value(step)}) : {printer.type(lb.type)} "
    )
    inits = op.operands[3:]
    if inits:
        printer.write(_iter_values(printer, args[1:], inits))
        printer.write(f" -> ({', '.join(printer.type(v.type) for v in inits)}) ")
    printer.print_region(region, print_terminators=not implicit_terminator_elided(region, "continue"))
    printer.write(printer.attr_dict(op, {"unsignedCmp", "operandSegmentSizes"}))


def parse_loop(parser: Parser, op: Operation) -> None:
    names: list[tuple[str, Span]] = []
    inits: list[tuple[str, Span]] = []
    iter_types: list[T.Type] = []
    result_types: list[T.Type] = []
    if parser.accept("iter_values"):
        names, inits = _assignment_list(parser)
        parser.expect(":")
        iter_types = _type_list(parser)
        if len(names) != len(iter_types):
            parser.fail("found different number of iter_values and types")
        if parser.accept("->"):
            result_types = _type_list(parser)
    elif parser.accept(":"):
        result_types = _type_list(parser)
    args = [(n, s, t, None) for (n, s), t in zip(names, iter_types)]
    region = parser.parse_region(args)
    op.add_region(region)
    ensure_terminator(parser, region, "continue", op.name_span)
    parse_attr_dict(parser, op, keyword=False)
    op.set_operands([parser.resolve_operand(n, s, t) for (n, s), t in zip(inits, iter_types)])  # after the body
    _set_results(op, result_types)


def print_loop(printer: Printer, op: Operation) -> None:
    region = op.regions[0]
    block = region.entry_block
    inits = op.operands
    printer.write(" ")
    if inits:
        printer.write(_iter_values(printer, block.arguments if block else [], inits) + " ")
    if inits or op.results:
        printer.write(": ")
    if inits:
        printer.write(", ".join(printer.type(v.type) for v in inits) + " ")
        if op.results:
            printer.write("-> ")
    if op.results:
        printer.write(", ".join(printer.type(r.type) for r in op.results) + " ")
    printer.print_region(region, print_terminators=not implicit_terminator_elided(region, "continue"))
    printer.write(printer.attr_dict(op, set()))


# ------------------------------------------------------------------ shape queries


def _parse_shape_query(expect_view: bool):
    def parse(parser: Parser, op: Operation) -> None:
        src = parser.parse_value_ref()
        parser.expect(":")
        ty_start = parser.tok.start
        src_type = parser.parse_type()
        ty_span = Span(ty_start, parser.prev_end)
        parser.expect("->")
        result_type = parser.parse_type()
        if expect_view:
            if not isinstance(src_type, T.VIEW_TYPES):
                parser.fail(f"custom op '{op.name}' expected tile view, got '{src_type.full()}'", ty_span)
            rank = index_space_rank(src_type)
        else:
            if not isinstance(src_type, T.TensorViewType):
                parser.fail(f"custom op '{op.name}' expected tensor_view, got '{src_type.full()}'", ty_span)
            rank = src_type.rank  # type: ignore[union-attr]
        op.set_operands([parser.resolve_operand(src[0], src[1], src_type)])
        _set_results(op, [result_type] * rank)

    return parse


def index_space_rank(view: T.Type) -> int:
    """How many indices address a tile of the view (one per tile dimension)."""
    return len(view.tile_shape) if isinstance(view, T.VIEW_TYPES) else 0


def print_shape_query(printer: Printer, op: Operation) -> None:
    src = op.operands[0]
    result = printer.type(op.results[0].type) if op.results else "tile<i32>"
    printer.write(f" {printer.value(src)} : {printer.type(src.type)} -> {result}")


# ------------------------------------------------------------------ views


def parse_make_tensor_view(parser: Parser, op: Operation) -> None:
    base = parser.parse_value_ref()
    parser.expect(",")

    def mixed_list() -> tuple[list[tuple[int | None, Span]], list[tuple[str, Span]], Span]:
        start = parser.tok.start
        parser.expect("[")
        elements: list[tuple[int | None, Span]] = []
        dynamic: list[tuple[str, Span]] = []
        if not parser.at("]"):
            while True:
                tok = parser.tok
                if tok.kind == L.VALUE:
                    ref = parser.parse_value_ref()
                    dynamic.append(ref)
                    elements.append((None, ref[1]))
                elif tok.kind == L.INT or parser.at("-"):
                    value = parser.parse_integer()
                    elements.append((value, Span(tok.start, parser.prev_end)))
                else:
                    parser.fail("expected either integer or SSA value")
                if not parser.accept(","):
                    break
        parser.expect("]")
        return elements, dynamic, Span(start, parser.prev_end)

    parser.expect("shape")
    parser.expect("=")
    shape, dyn_shape, shape_span = mixed_list()
    parser.expect(",")
    parser.expect("strides")
    parser.expect("=")
    strides, dyn_strides, stride_span = mixed_list()
    parse_attr_dict(parser, op, keyword=False)
    parser.expect(":")
    index_type = None
    if dyn_shape or dyn_strides:
        index_type = parser.parse_type()
        parser.expect("->")
    ty_start = parser.tok.start
    view = parser.parse_type()
    if not isinstance(view, T.TensorViewType):
        parser.fail(
            f"custom op '{op.name}' expected 'tensor_view' type, but got '{view.full()}'",
            Span(ty_start, parser.prev_end),
        )
    assert isinstance(view, T.TensorViewType)
    for name, given, declared, span in (
        ("shape", shape, view.shape, shape_span),
        ("stride", strides, view.strides, stride_span),
    ):
        if len(given) != len(declared):
            parser.fail(
                f"expected {name} declaration to contain {len(declared)} elements due to tensor_view type, "
                f"but {len(given)} were provided",
                span,
            )
        for i, ((value, vspan), expected) in enumerate(zip(given, declared)):
            if value != expected:
                exp = "dynamic" if expected is None else str(expected)
                got = "dynamic" if value is None else str(value)
                parser.fail(
                    f"input {name} dimension {i} does not match tensor_view type (expected {exp}, got {got})", vspan
                )
    base_value = parser.resolve_operand(base[0], base[1], T.TileType((), T.PointerType(view.element)))
    dyn = [parser.resolve_operand(n, s, index_type) for n, s in dyn_shape + dyn_strides]
    op.set_operands([base_value, *dyn])
    op.operand_segments = (1, len(dyn_shape), len(dyn_strides))
    _set_results(op, [view])


def print_make_tensor_view(printer: Printer, op: Operation) -> None:
    view = op.results[0].type if op.results else None
    base = op.operands[0]
    segments = op.operand_segments or (1, 0, 0)
    dyn_shape = op.operands[1 : 1 + segments[1]]
    dyn_strides = op.operands[1 + segments[1] : 1 + segments[1] + segments[2]]

    def mixed(static, dynamic) -> str:
        it = iter(dynamic)
        parts = []
        for s in static:
            if s is None:
                v = next(it, None)
                parts.append(printer.value(v) if v is not None else "?")
            else:
                parts.append(str(s))
        return ", ".join(parts)

    shape = view.shape if isinstance(view, T.TensorViewType) else ()
    strides = view.strides if isinstance(view, T.TensorViewType) else ()
    printer.write(
        f" {printer.value(base)}, shape = [{mixed(shape, dyn_shape)}], strides = [{mixed(strides, dyn_strides)}]"
    )
    printer.write(printer.attr_dict(op, {"operandSegmentSizes"}))
    printer.write(" : ")
    dynamic = list(dyn_shape) + list(dyn_strides)
    if dynamic:
        printer.write(printer.type(dynamic[0].type) + " -> ")
    printer.write(printer.type(view) if view is not None else "?")


def _parse_make_view(kind: type, keyword: str):
    def parse(parser: Parser, op: Operation) -> None:
        src = parser.parse_value_ref()
        parse_attr_dict(parser, op, keyword=False)
        parser.expect(":")
        ty_start = parser.tok.start
        view = parser.parse_type()
        if not isinstance(view, kind):
            parser.fail(
                f"custom op '{op.name}' expected '{keyword}' type, but got '{view.full()}'",
                Span(ty_start, parser.prev_end),
            )
        op.set_operands([parser.resolve_operand(src[0], src[1], view.tensor_view)])  # type: ignore[attr-defined]
        _set_results(op, [view])

    return parse


def print_make_view(printer: Printer, op: Operation) -> None:
    printer.write(f" {printer.value(op.operands[0])}")
    printer.write(printer.attr_dict(op, set()))
    printer.write(f" : {printer.type(op.results[0].type)}")


# ------------------------------------------------------------------ view memory ops


def _memory_attributes(parser: Parser, op: Operation) -> None:
    tok = parser.tok
    if tok.kind != L.IDENT or MEMORY_ORDERING.by_keyword(tok.text) is None:
        parser.fail(
            f'invalid memory_ordering_semantics attribute specification. Got "{tok.text}" but expect one of: '
            "weak, relaxed, acquire, release, acq_rel",
            tok.span,
        )
    parser.advance()
    op.properties["memory_ordering_semantics"] = A.EnumAttr(MEMORY_ORDERING, tok.text)
    scope = parser.tok
    if scope.kind == L.IDENT and scope.text not in ("token", "optimization_hints"):
        if tok.text == "weak":
            parser.fail(
                f'operation specifies weak memory ordering semantics, but then provides "{scope.text}" scope, '
                "expected no memory scope.",
                scope.span,
            )
        if MEMORY_SCOPE.by_keyword(scope.text) is None:
            parser.fail(
                f'invalid memory_scope attribute specification. Got "{scope.text}" '
                "but expect one of: tl_blk, device, sys",
                scope.span,
            )
        parser.advance()
        op.properties["memory_scope"] = A.EnumAttr(MEMORY_SCOPE, scope.text)


def _print_memory_attributes(printer: Printer, op: Operation) -> None:
    sem = op.properties.get("memory_ordering_semantics")
    printer.write(" " + (sem.keyword if isinstance(sem, A.EnumAttr) else "weak"))
    scope = op.properties.get("memory_scope")
    if isinstance(scope, A.EnumAttr):
        printer.write(" " + scope.keyword)


def _view_and_indices(parser: Parser) -> tuple[tuple[str, Span], list[tuple[str, Span]]]:
    view = parser.parse_value_ref()
    parser.expect("[")
    indices: list[tuple[str, Span]] = []
    if not parser.at("]"):
        while True:
            indices.append(parser.parse_value_ref())
            if not parser.accept(","):
                break
    parser.expect("]")
    return view, indices


def _token_and_hints(parser: Parser, op: Operation, hints: bool = True) -> tuple[str, Span] | None:
    token = None
    if parser.accept("token"):
        parser.expect("=")
        token = parser.parse_value_ref()
    if hints and parser.accept("inbounds"):  # `inbounds = [true, false]` (13.4), as tileirdisasm prints it
        parser.expect("=")
        parser.expect("[")
        flags = []
        while True:
            word = parser.expect_kind(L.IDENT, "true or false")
            if word.text not in ("true", "false"):
                parser.fail(f"expected true or false in 'inbounds', got '{word.text}'", word.span)
            flags.append(int(word.text == "true"))
            if not parser.accept(","):
                break
        parser.expect("]")
        if any(flags):
            op.properties["inbounds"] = A.DenseArrayAttr(T.I1, tuple(flags))
    if hints and parser.accept("optimization_hints"):
        parser.expect("=")
        op.properties["optimization_hints"] = parser.parse_optimization_hints_body(op.name)
    parse_attr_dict(parser, op, keyword=True)
    return token


def _index_types(parser: Parser, count: int) -> tuple[list[T.Type], Span]:
    """`, tile<i32>` (one type for every index) or `, t0, t1, ...`."""
    span = parser.here()
    types: list[T.Type] = []
    if parser.accept(","):
        span = parser.here()
        types.append(parser.parse_type())
        if parser.accept(","):
            while True:
                types.append(parser.parse_type())
                if not parser.accept(","):
                    break
        else:
            types = types * count
    return types, span


def _resolve_indices(parser: Parser, indices: list[tuple[str, Span]], types: list[T.Type], span: Span) -> list:
    if indices and not types:
        parser.fail("index types must be specified when indices are present")
    if types and len(types) != len(indices):
        parser.fail(f"expected {len(indices)} index types, got {len(types)}", span)
    return [parser.resolve_operand(n, s, t) for (n, s), t in zip(indices, types)]


def parse_load_view(parser: Parser, op: Operation) -> None:
    _memory_attributes(parser, op)
    view, indices = _view_and_indices(parser)
    token = _token_and_hints(parser, op)
    parser.expect(":")
    view_type = parser.parse_type()
    index_types, span = _index_types(parser, len(indices))
    parser.expect("->")
    result_type = parser.parse_type()
    parser.expect(",")
    token_type = parser.parse_type()
    operands = [parser.resolve_operand(view[0], view[1], view_type)]
    operands += _resolve_indices(parser, indices, index_types, span)
    if token is not None:
        operands.append(parser.resolve_operand(token[0], token[1], T.TOKEN))
    op.set_operands(operands)
    op.operand_segments = (1, len(indices), 1 if token else 0)
    _set_results(op, [result_type, token_type])


def parse_store_view(parser: Parser, op: Operation) -> None:
    _memory_attributes(parser, op)
    tile = parser.parse_value_ref()
    parser.expect(",")
    view, indices = _view_and_indices(parser)
    token = _token_and_hints(parser, op)
    parser.expect(":")
    tile_type = parser.parse_type()
    parser.expect(",")
    view_type = parser.parse_type()
    index_types, span = _index_types(parser, len(indices))
    parser.expect("->")
    token_type = parser.parse_type()
    operands = [
        parser.resolve_operand(tile[0], tile[1], tile_type),
        parser.resolve_operand(view[0], view[1], view_type),
    ]
    operands += _resolve_indices(parser, indices, index_types, span)
    if token is not None:
        operands.append(parser.resolve_operand(token[0], token[1], T.TOKEN))
    op.set_operands(operands)
    op.operand_segments = (1, 1, len(indices), 1 if token else 0)
    _set_results(op, [token_type])


def _red_view_memory_attributes(parser: Parser, op: Operation) -> None:
    """atomic_red_view_tko's own spelling: any ordering and an optional scope (its verifier,
    not its parser, rejects `weak` and `sys`)."""
    tok = parser.expect_kind(L.IDENT, "valid keyword")
    if MEMORY_ORDERING.by_keyword(tok.text) is None:
        parser.fail(
            f"custom op '{op.name}' invalid memory_ordering_semantics: '{tok.text}'; expected one of: "
            "weak, relaxed, acquire, release, acq_rel",
            tok.span,
        )
    op.properties["memory_ordering_semantics"] = A.EnumAttr(MEMORY_ORDERING, tok.text)
    scope = parser.tok
    if scope.kind == L.IDENT:
        if MEMORY_SCOPE.by_keyword(scope.text) is None:
            parser.fail(
                f"custom op '{op.name}' invalid memory_scope: '{scope.text}'; expected one of: tl_blk, device, sys",
                scope.span,
            )
        parser.advance()
        op.properties["memory_scope"] = A.EnumAttr(MEMORY_SCOPE, scope.text)


def parse_atomic_red_view(parser: Parser, op: Operation) -> None:
    _red_view_memory_attributes(parser, op)
    view, indices = _view_and_indices(parser)
    parser.expect(",")
    mode = parser.expect_kind(L.IDENT, "atomic mode")
    if ATOMIC_RMW_MODE.by_keyword(mode.text) is None:
        parser.fail(
            f"unknown atomic RMW mode: '{mode.text}'; expected one of: and, or, xor, add, addf, max, min, umax, umin",
            mode.span,
        )
    op.properties["mode"] = A.EnumAttr(ATOMIC_RMW_MODE, mode.text)
    parser.expect(",")
    value = parser.parse_value_ref()
    token = _token_and_hints(parser, op, hints=False)
    parser.expect(":")
    value_type = parser.parse_type()
    parser.expect(",")
    view_type = parser.parse_type()
    index_types, span = _index_types(parser, len(indices))
    parser.expect("->")
    token_type = parser.parse_type()
    operands = [parser.resolve_operand(view[0], view[1], view_type)]
    operands += _resolve_indices(parser, indices, index_types, span)
    operands.append(parser.resolve_operand(value[0], value[1], value_type))
    if token is not None:
        operands.append(parser.resolve_operand(token[0], token[1], T.TOKEN))
    op.set_operands(operands)
    op.operand_segments = (1, len(indices), 1, 1 if token else 0)
    _set_results(op, [token_type])


def _print_index_types(printer: Printer, indices) -> str:
    if not indices:
        return ""
    types = [v.type for v in indices]
    if all(t == types[0] for t in types):
        return ", " + printer.type(types[0])
    return "".join(", " + printer.type(t) for t in types)


_VIEW_ELIDED = {
    "memory_ordering_semantics",
    "memory_scope",
    "optimization_hints",
    "operandSegmentSizes",
    "mode",
    "inbounds",
}


def _print_token_and_hints(printer: Printer, op: Operation, token) -> None:
    if token is not None:
        printer.write(f" token = {printer.value(token)}")
    inbounds = op.properties.get("inbounds")
    if isinstance(inbounds, A.DenseArrayAttr) and any(inbounds.values):
        printer.write(" inbounds = [" + ", ".join("true" if f else "false" for f in inbounds.values) + "]")
    hints = op.properties.get("optimization_hints")
    if isinstance(hints, A.OptimizationHintsAttr):
        printer.write(" optimization_hints = " + hints.body())
    printer.write(printer.attr_dict(op, _VIEW_ELIDED, keyword=True))


def print_load_view(printer: Printer, op: Operation) -> None:
    _print_memory_attributes(printer, op)
    view = op.operand("view")
    indices = op.operand_group("index")
    token = op.operand("token")
    printer.write(f" {printer.value(view)}[{', '.join(printer.value(v) for v in indices)}]")
    _print_token_and_hints(printer, op, token)
    results = op.results
    printer.write(f" : {printer.type(view.type)}{_print_index_types(printer, indices)} -> ")
    printer.write(", ".join(printer.type(r.type) for r in results))


def print_store_view(printer: Printer, op: Operation) -> None:
    _print_memory_attributes(printer, op)
    tile = op.operand("tile")
    view = op.operand("view")
    indices = op.operand_group("index")
    token = op.operand("token")
    printer.write(f" {printer.value(tile)}, {printer.value(view)}[{', '.join(printer.value(v) for v in indices)}]")
    _print_token_and_hints(printer, op, token)
    printer.write(f" : {printer.type(tile.type)}, {printer.type(view.type)}{_print_index_types(printer, indices)}")
    printer.write(f" -> {printer.type(op.results[0].type)}")


def print_atomic_red_view(printer: Printer, op: Operation) -> None:
    _print_memory_attributes(printer, op)
    view = op.operand("view")
    indices = op.operand_group("index")
    value = op.operand("value")
    token = op.operand("token")
    mode = op.properties.get("mode")
    printer.write(f" {printer.value(view)}[{', '.join(printer.value(v) for v in indices)}]")
    printer.write(f", {mode.keyword if isinstance(mode, A.EnumAttr) else '?'}, {printer.value(value)}")
    if token is not None:
        printer.write(f" token = {printer.value(token)}")
    printer.write(printer.attr_dict(op, _VIEW_ELIDED, keyword=True))
    printer.write(f" : {printer.type(value.type)}, {printer.type(view.type)}{_print_index_types(printer, indices)}")
    printer.write(f" -> {printer.type(op.results[0].type)}")


PARSERS: dict[str, Callable[[Parser, Operation], None]] = {
    "entry": parse_entry,
    "testing$func": parse_entry,
    "for": parse_for,
    "loop": parse_loop,
    "get_index_space_shape": _parse_shape_query(expect_view=True),
    "get_tensor_shape": _parse_shape_query(expect_view=False),
    "make_tensor_view": parse_make_tensor_view,
    "make_partition_view": _parse_make_view(T.PartitionViewType, "partition_view"),
    "make_strided_view": _parse_make_view(T.StridedViewType, "strided_view"),
    "make_gather_scatter_view": _parse_make_view(T.GatherScatterViewType, "gather_scatter_view"),
    "load_view_tko": parse_load_view,
    "store_view_tko": parse_store_view,
    "atomic_red_view_tko": parse_atomic_red_view,
}

PRINTERS: dict[str, Callable[[Printer, Operation], None]] = {
    "entry": print_entry,
    "testing$func": print_entry,
    "for": print_for,
    "loop": print_loop,
    "get_index_space_shape": print_shape_query,
    "get_tensor_shape": print_shape_query,
    "make_tensor_view": print_make_tensor_view,
    "make_partition_view": print_make_view,
    "make_strided_view": print_make_view,
    "make_gather_scatter_view": print_make_view,
    "load_view_tko": print_load_view,
    "store_view_tko": print_store_view,
    "atomic_red_view_tko": print_atomic_red_view,
}
