"""The declarative assembly format engine.

Each op in the table carries its format in MLIR's declarative syntax
(`$lhs `,` $rhs attr-dict `:` custom<CudaTileType>(type($result))`). This module
compiles a format once into a small element tree and then both parses and prints
ops with it, reproducing MLIR's spacing rules so our output matches `cuda-tile-opt`
character for character. Types the format does not print are inferred from the
op's `same_type` / `i1_same_shape` rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..dialect import enum_for_kind
from ..dialect.opdef import AttrDef, OpDef
from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation, OpResult, Region
from ..ir.source import Span
from . import lexer as L

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from .parser import Parser
    from .printer import Printer


# ------------------------------------------------------------------ format elements
#
# Plain slotted classes (no dataclass processing at import time): the tree of one format.


class Lit:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Space:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text  # "" (no space) or " "


class Var:
    __slots__ = ("name", "anchor")

    def __init__(self, name: str, anchor: bool = False) -> None:
        self.name = name
        self.anchor = anchor


class TypeOf:
    # A bare `type($x)` directive prints the type as MLIR's generic printer does, with its
    # dialect prefix (`!cuda_tile.tile<2xf32>`); `custom<CudaTileType>(type($x))` prints it
    # short (`tile<2xf32>`). Both parse either spelling.
    __slots__ = ("name", "anchor", "qualified")

    def __init__(self, name: str, anchor: bool = False, qualified: bool = False) -> None:
        self.name = name
        self.anchor = anchor
        self.qualified = qualified


class Custom:
    __slots__ = ("name", "args", "anchor")

    def __init__(self, name: str, args: list[Var | TypeOf], anchor: bool = False) -> None:
        self.name = name
        self.args = args
        self.anchor = anchor


class AttrDict:
    __slots__ = ("keyword",)

    def __init__(self, keyword: bool) -> None:
        self.keyword = keyword


class Group:
    __slots__ = ("elements", "else_elements")

    def __init__(self, elements: list, else_elements: list | None = None) -> None:
        self.elements = elements
        self.else_elements = else_elements if else_elements is not None else []

    def anchor(self):
        for e in flatten(self.elements):
            if getattr(e, "anchor", False):
                return e
        return None


class OIList:
    __slots__ = ("clauses",)

    def __init__(self, clauses: list[list]) -> None:
        self.clauses = clauses


def flatten(elements):
    """The elements of a format with optional groups opened up, in order."""
    for e in elements:
        if isinstance(e, Group):
            yield from flatten(e.elements)
        else:
            yield e


_FMT_TOKEN = re.compile(
    r"\s*(`[^`]*`|\$\w+|\^|[()?:|,]|custom<\w+>|type|attr-dict-with-keyword|attr-dict|oilist|functional-type|regions|operands|results)"
)


class _FormatParser:
    def __init__(self, text: str) -> None:
        self.tokens = _FMT_TOKEN.findall(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def next(self) -> str:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def parse_elements(self, stop: tuple[str, ...] = ()) -> list:
        elements: list = []
        while self.peek() is not None and self.peek() not in stop:
            elements.append(self.parse_element())
        return elements

    def _args(self) -> list[Var | TypeOf]:
        assert self.next() == "("
        args: list[Var | TypeOf] = []
        while self.peek() != ")":
            tok = self.next()
            if tok == ",":
                continue
            if tok == "type":
                self.next()
                args.append(TypeOf(self.next()[1:]))
                self.next()
            else:
                args.append(Var(tok[1:]))
        self.next()
        return args

    def parse_element(self):
        tok = self.next()
        if tok.startswith("`"):
            body = tok[1:-1]
            if body in ("", " ", "\\n"):
                return Space(body if body != "\\n" else " ")
            return Lit(body)
        if tok.startswith("$"):
            element = Var(tok[1:])
            return self._anchor(element)
        if tok == "type":
            (arg,) = self._args()
            return self._anchor(TypeOf(arg.name, qualified=True))
        if tok.startswith("custom<"):
            name = tok[7:-1]
            args = self._args()
            if name == "CudaTileType":
                return self._anchor(TypeOf(args[0].name))
            return self._anchor(Custom(name, args))
        if tok in ("attr-dict", "attr-dict-with-keyword"):
            return AttrDict(tok == "attr-dict-with-keyword")
        if tok == "oilist":
            assert self.next() == "("
            clauses = [self.parse_elements(("|", ")"))]
            while self.next() == "|":
                clauses.append(self.parse_elements(("|", ")")))
            return OIList(clauses)
        if tok == "(":
            elements = self.parse_elements((")",))
            self.next()
            else_elements: list = []
            if self.peek() == ":":
                self.next()
                assert self.next() == "("
                else_elements = self.parse_elements((")",))
                self.next()
            assert self.next() == "?"
            return Group(elements, else_elements)
        raise ValueError(f"unsupported format token {tok!r}")

    def _anchor(self, element):
        if self.peek() == "^":
            self.next()
            element.anchor = True
        return element


def compile_format(opdef: OpDef) -> list:
    """The element tree of the op's declarative format (parsed once per op)."""
    plans = opdef._plans
    elements = plans.get("elements")
    if elements is None:
        assert opdef.assembly is not None
        elements = plans["elements"] = _FormatParser(opdef.assembly).parse_elements()
    return elements


# ------------------------------------------------------------------ parsing
#
# A format is compiled once per op into a list of steps (closures that know which operand,
# attribute or region each `$name` is), so parsing an op runs the steps in turn instead of
# interpreting the element tree and searching the op definition for every element.

ParseStep = Callable[["Parser", Operation, "_State"], None]


class _State:
    """What the steps of one op read: operand names, types and regions by format name."""

    __slots__ = ("opdef", "operands", "types", "regions")

    def __init__(self, opdef: OpDef) -> None:
        self.opdef = opdef
        self.operands: dict[str, list[tuple[str, Span]]] = {}
        self.types: dict[str, list[T.Type]] = {}
        self.regions: dict[str, Region] = {}


def parse_op(parser: Parser, op: Operation, opdef: OpDef, num_results: int) -> None:
    plan = opdef._plans.get("parse")
    if plan is None:
        plan = opdef._plans["parse"] = (_parse_steps(opdef, compile_format(opdef)), _finisher(opdef))
    steps, finish = plan
    state = _State(opdef)
    for step in steps:
        step(parser, op, state)
    finish(parser, op, state, num_results)


def _parse_steps(opdef: OpDef, elements: list) -> list[ParseStep]:
    steps: list[ParseStep] = []
    for element in elements:
        step = _parse_step(opdef, element)
        if step is not None:
            steps.append(step)
    return steps


def _in_order(steps: list) -> Callable:
    """One step running `steps` in order (a parse or a print plan's: both take three
    arguments)."""

    def run(a, b, c) -> None:  # (parser, op, state) or (printer, op, state)
        for step in steps:
            step(a, b, c)

    return run


def _parse_step(opdef: OpDef, element) -> ParseStep | None:
    if isinstance(element, Lit):
        text = element.text

        def literal(parser: Parser, op: Operation, state: _State) -> None:
            tok = parser.tok
            if tok.text == text and (tok.kind == L.PUNCT or tok.kind == L.IDENT):
                parser.advance()
            else:
                parser.expect(text)

        return literal
    if isinstance(element, Space):
        return None
    if isinstance(element, Var):
        return _var_step(opdef, element.name)
    if isinstance(element, TypeOf):
        name = element.name
        variadic = any(o.name == name and o.arity == "variadic" for o in opdef.operands) or any(
            r.name == name and r.arity == "variadic" for r in opdef.results
        )

        def type_of(parser: Parser, op: Operation, state: _State) -> None:
            state.types[name] = _parse_type_list(parser, opdef, variadic)

        return type_of
    if isinstance(element, Custom):
        from .custom_directives import DIRECTIVES

        directive = DIRECTIVES[element.name][0]
        args = element.args

        def custom(parser: Parser, op: Operation, state: _State) -> None:
            directive(parser, op, state, args)

        return custom
    if isinstance(element, AttrDict):
        keyword = element.keyword

        def attr_dict(parser: Parser, op: Operation, state: _State) -> None:
            parse_attr_dict(parser, op, keyword)

        return attr_dict
    if isinstance(element, Group):
        present = _group_test(opdef, element)
        then_steps = _in_order(_parse_steps(opdef, element.elements))
        else_steps = _in_order(_parse_steps(opdef, element.else_elements))

        def group(parser: Parser, op: Operation, state: _State) -> None:
            if present(parser):
                then_steps(parser, op, state)
            else:
                else_steps(parser, op, state)

        return group
    if isinstance(element, OIList):
        # A clause can be chosen only by its leading keyword.
        clauses = [
            (clause[0].text, _in_order(_parse_steps(opdef, clause)))
            for clause in element.clauses
            if clause and isinstance(clause[0], Lit)
        ]

        def oilist(parser: Parser, op: Operation, state: _State) -> None:
            pending = list(clauses)
            progress = True
            while progress and pending:
                progress = False
                for clause in pending:
                    if parser.at(clause[0]):
                        clause[1](parser, op, state)
                        pending.remove(clause)
                        progress = True
                        break

        return oilist
    raise ValueError(f"unsupported format element {element!r}")


def _group_test(opdef: OpDef, group: Group) -> Callable[[Parser], bool]:
    """Whether an optional group is present, judged by the token its first element starts."""
    first = next((e for e in group.elements if not isinstance(e, Space)), None)
    if isinstance(first, Lit):
        text = first.text
        return lambda parser: parser.at(text)
    if isinstance(first, Var):
        if any(o.name == first.name for o in opdef.operands):
            return lambda parser: parser.tok.kind == L.VALUE
        adef = opdef.attribute(first.name)
        enum = enum_for_kind(adef.kind) if adef is not None else None
        if enum is not None:
            if enum.angle:
                return lambda parser: parser.at("<")
            by_keyword = enum.by_keyword
            return lambda parser: parser.tok.kind == L.IDENT and by_keyword(parser.tok.text) is not None
        return lambda parser: parser.tok.kind != L.EOF and not parser.at(":") and not parser.at("}")
    if isinstance(first, TypeOf):
        return lambda parser: parser.tok.kind in (L.IDENT, L.BANG) or parser.at("(")
    return lambda parser: False


def _operand_def(opdef: OpDef, name: str):
    for o in opdef.operands:
        if o.name == name:
            return o
    return None


def _var_step(opdef: OpDef, name: str) -> ParseStep:
    odef = _operand_def(opdef, name)
    if odef is not None:
        if odef.arity == "variadic":

            def variadic(parser: Parser, op: Operation, state: _State) -> None:
                refs = []
                if parser.tok.kind == L.VALUE:
                    while True:
                        refs.append(parser.parse_value_ref())
                        if not parser.accept(","):
                            break
                state.operands[name] = refs

            return variadic
        if odef.arity == "optional":

            def optional(parser: Parser, op: Operation, state: _State) -> None:
                state.operands[name] = [parser.parse_value_ref()] if parser.tok.kind == L.VALUE else []

            return optional

        def single(parser: Parser, op: Operation, state: _State) -> None:
            state.operands[name] = [parser.parse_value_ref()]

        return single
    adef = opdef.attribute(name)
    if adef is not None:
        kind = adef.kind

        def attribute(parser: Parser, op: Operation, state: _State) -> None:
            op.properties[name] = parse_attr_value(parser, kind, name)

        return attribute
    if any(rdef.name == name for rdef in opdef.regions):
        isolated = "IsolatedFromAbove" in opdef.traits

        def region(parser: Parser, op: Operation, state: _State) -> None:
            state.regions[name] = parser.parse_region(isolated=isolated)

        return region

    def unknown(parser: Parser, op: Operation, state: _State) -> None:
        parser.fail(f"internal: format of '{opdef.name}' names unknown ${name}")

    return unknown


def parse_attr_value(parser: Parser, kind: str, name: str | None = None) -> A.Attribute:
    """An attribute spelled the way declarative formats print `$attr` of this kind
    (`name`: the attribute's name, for MLIR's wording of a bad enum keyword)."""
    if kind == "unit":
        return A.UNIT
    enum = enum_for_kind(kind)
    if enum is not None:
        angle = enum.angle and parser.accept("<") is not None
        tok = parser.tok
        if tok.kind != L.IDENT or enum.by_keyword(tok.text) is None:
            if name is not None and not angle:
                parser.fail(
                    "expected string or keyword containing one of the following enum values for attribute "
                    f"'{name}' [{', '.join(enum.keywords)}]",
                    tok.span,
                )
            parser.fail(f"expected {enum.mnemonic} to be one of: {', '.join(enum.keywords)}")
        parser.advance()
        if angle:
            parser.expect(">")
        return A.EnumAttr(enum, tok.text)
    if kind in ("i32", "i64", "i8", "i16", "i1"):
        start = parser.tok.start
        value = parser.parse_integer()
        width = int(kind[1:])
        if not -(1 << (width - 1)) <= value < (1 << width):
            parser.fail(f"integer {value} does not fit in {kind}", Span(start, parser.prev_end))
        return A.IntegerAttr(value, T.INTEGER_TYPES.get(kind) if kind != "i64" else None)
    if kind == "bool":
        tok = parser.tok
        if tok.text not in ("true", "false"):
            parser.fail("expected 'true' or 'false'")
        parser.advance()
        return A.BoolAttr(tok.text == "true")
    if kind == "string":
        from .custom_directives import starts_attribute

        if parser.tok.kind != L.STRING:  # MLIR parses any attribute, then checks its kind
            start = parser.tok
            if not starts_attribute(start):
                parser.fail("expected attribute value", start.span)
            parser.parse_attribute()
            parser.fail("invalid kind of attribute specified", start.span)
        tok = parser.expect_kind(L.STRING, "string literal")
        return A.StringAttr(parser.string_value(tok))
    if kind in ("symbol", "symbol_ref"):
        if kind == "symbol" and parser.tok.kind != L.SYMBOL:
            parser.fail("expected valid '@'-identifier for symbol name", parser.here())  # MLIR's parseSymbolName
        tok = parser.expect_kind(L.SYMBOL, "symbol name")
        return A.StringAttr(parser._symbol_name(tok)) if kind == "symbol" else A.SymbolRefAttr(parser._symbol_name(tok))
    if kind in ("dense_i32_array", "dense_i64_array"):
        if parser.at("array"):
            return parser.parse_attribute()
        values = parser.parse_int_list()
        return A.DenseArrayAttr(T.I32 if kind == "dense_i32_array" else T.I64, tuple(values))
    if kind == "optimization_hints":
        return parser.parse_optimization_hints_body()
    if kind == "type":
        return A.TypeAttr(parser.parse_type())
    return parser.parse_attribute()


def parse_attr_dict(parser: Parser, op: Operation, keyword: bool) -> None:
    if keyword:
        if not parser.accept("attributes"):
            return
    elif not parser.at("{"):
        return
    entries = parser.parse_attr_dict_body()
    opdef = op.opdef
    for key, value in entries.items():
        if opdef is not None and opdef.attribute(key) is not None:
            op.properties[key] = parser.coerce_property(opdef, key, value)
        else:
            op.attributes[key] = value


def _parse_type_list(parser: Parser, opdef: OpDef, variadic: bool) -> list[T.Type]:
    """`type($x)`: one type, or a comma-separated list for variadic operands/results."""
    tok = parser.tok
    if tok.kind != L.IDENT and tok.kind != L.BANG and not parser.at("("):
        # Nothing that starts a type: cuda_tile's type parser then reads the unprefixed
        # type's name as a keyword, and fails as the op's custom parser.
        parser.fail(f"custom op '{opdef.name}' expected valid keyword", tok.span)
    if not variadic:
        return [parser.parse_type()]
    types = [parser.parse_type()]
    while parser.at(","):
        nxt = parser.lexer.token_at(parser.tok.end)
        if nxt.kind not in (L.IDENT, L.BANG):
            break
        parser.advance()
        types.append(parser.parse_type())
    return types


# Constraints that name one concrete type (ODS's buildable types): an operand or result whose
# type the format does not spell is resolved with it, as MLIR's generated parsers do.
_BUILDABLE: dict[str, T.Type] = {
    "scalar_i32_tile": T.TileType((), T.I32),
    "scalar_i1_tile": T.TileType((), T.I1),
    "token": T.TOKEN,
}


def finish_op(parser: Parser, op: Operation, state: _State, num_results: int) -> None:
    """Infer missing types from the op's type rules, then build operands/results/regions."""
    finisher = state.opdef._plans.get("finish")
    if finisher is None:
        finisher = _finisher(state.opdef)
    finisher(parser, op, state, num_results)


def _finisher(opdef: OpDef):
    """`finish_op` for one op, with what it needs from the op definition looked up once."""
    rules = [(kind, names) for kind, names, *_ in opdef.type_rules if kind in ("same_type", "i1_same_shape")]
    operand_plan = [(odef.name, _BUILDABLE.get(odef.constraint)) for odef in opdef.operands]
    has_segments = opdef.has_segments
    fixed = sum(1 for r in opdef.results if r.arity == "single")
    result_plan = [(rdef.name, rdef.arity == "variadic", _BUILDABLE.get(rdef.constraint)) for rdef in opdef.results]
    region_names = [rdef.name for rdef in opdef.regions]

    def finish(parser: Parser, op: Operation, state: _State, num_results: int) -> None:
        types = state.types
        operands = state.operands
        for kind, names in rules:
            if kind == "same_type":
                known = next((types[n][0] for n in names if types.get(n)), None)
                if known is not None:
                    for n in names:
                        if n not in types:
                            types[n] = [known] * max(len(operands.get(n, ())), 1)
            else:  # i1_same_shape
                src, dst = names
                if src in types and dst not in types and isinstance(types[src][0], T.TileType):
                    types[dst] = [T.TileType(types[src][0].shape, T.I1)]
        # Operands, in definition order.
        flat = []
        segments = []
        resolve = parser.resolve_operand
        for name, buildable in operand_plan:
            refs = operands.get(name, [])
            declared = types.get(name, [])
            if not declared and buildable is not None:
                declared = [buildable] * len(refs)
            if declared and len(declared) == 1 and len(refs) > 1:
                declared = declared * len(refs)
            if declared and len(declared) != len(refs):
                # MLIR's resolveOperands, inside the op's generated parser: its words, which
                # NVIDIA's tests match (as a part of the message), then which group took which types.
                read = ", ".join(f"{n} {len(types[n])}" for n, _ in operand_plan if n in types)
                parser.fail(
                    f"custom op '{opdef.name}' number of operands and types do not match: "
                    f"got {len(refs)} operands and {len(declared)} types (types per operand group: {read})",
                    refs[0][1] if refs else (op.name_span or parser.here()),
                )
            for i, (ref_name, span) in enumerate(refs):
                flat.append(resolve(ref_name, span, declared[i] if declared else None))
            segments.append(len(refs))
        op.set_operands(flat)
        if has_segments:
            op.operand_segments = tuple(segments)
        # Results: fixed ones take one type each; a variadic group takes what is left.
        result_types: list[T.Type] = []
        for name, variadic, buildable in result_plan:
            rtypes = types.get(name)
            if rtypes is None and buildable is not None and not variadic:
                rtypes = [buildable]  # `memory_fence_alias_tko %t` prints no type: a token
            if rtypes is None:
                if variadic:
                    if num_results - fixed > 0:
                        parser.fail(f"cannot infer the types of the results of '{opdef.name}'", op.name_span)
                    continue
                parser.fail(f"cannot infer the type of result '{name}' of '{opdef.name}'", op.name_span)
            assert rtypes is not None
            result_types.extend(rtypes)
        op.results = [OpResult(op, i, t) for i, t in enumerate(result_types)]
        regions = state.regions
        for name in region_names:
            region = regions.get(name)
            op.add_region(region if region is not None else Region())

    opdef._plans["finish"] = finish
    return finish


# ------------------------------------------------------------------ printing
#
# Printing is compiled the same way: one step per element, with MLIR's spacing rules
# (whether a space goes before a literal) decided once per literal.

PrintStep = Callable[["Printer", Operation, "_PrintState"], None]


class _PrintState:
    __slots__ = ("emit_space", "last_punct")

    def __init__(self) -> None:
        self.emit_space = True
        self.last_punct = False


def print_op(printer: Printer, op: Operation) -> None:
    opdef = op.opdef
    assert opdef is not None
    steps = opdef._plans.get("print")
    if steps is None:
        elements = compile_format(opdef)
        used = frozenset(_used_attrs(opdef, elements) | {"operandSegmentSizes"})
        steps = opdef._plans["print"] = _print_steps(opdef, elements, used)
    st = _PrintState()
    for step in steps:
        step(printer, op, st)


def _used_attrs(opdef: OpDef, elements: list) -> set[str]:
    used: set[str] = set()
    for e in _walk(elements):
        if isinstance(e, Var):
            used.add(e.name)
        elif isinstance(e, Custom):
            used.update(a.name for a in e.args)
    return used


def _walk(elements):
    for e in elements:
        if isinstance(e, Group):
            yield from _walk(e.elements)
            yield from _walk(e.else_elements)
        elif isinstance(e, OIList):
            for clause in e.clauses:
                yield from _walk(clause)
        else:
            yield e


_NO_SPACE_BEFORE = "<>(){}[],"
_NO_SPACE_BEFORE_AFTER_PUNCT = ">)}],"


def _print_steps(opdef: OpDef, elements: list, used: frozenset[str]) -> list[PrintStep]:
    steps: list[PrintStep] = []
    for element in elements:
        step = _print_step(opdef, element, used)
        if step is not None:
            steps.append(step)
    return steps


def _literal_step(text: str) -> PrintStep:
    # The space before a literal: always for a keyword (`->` aside); after punctuation,
    # unless the literal closes something; otherwise, unless it is punctuation itself.
    long = len(text) != 1 and text != "->"
    space_after_punct = text[0] not in _NO_SPACE_BEFORE_AFTER_PUNCT
    space_otherwise = text[0] not in _NO_SPACE_BEFORE
    emit_space_after = len(text) != 1 or text[0] not in "<({["
    punct = text[0] != "_" and not text[0].isalpha()

    def literal(printer: Printer, op: Operation, st: _PrintState) -> None:
        out = printer.out
        if st.emit_space:
            if long or (space_after_punct if st.last_punct else space_otherwise):
                out.append(" ")
        out.append(text)
        st.emit_space = emit_space_after
        st.last_punct = punct

    return literal


def _space_before_element(printer: Printer, st: _PrintState) -> None:
    if st.emit_space or not st.last_punct:
        printer.out.append(" ")
    st.last_punct = False
    st.emit_space = True


def _print_step(opdef: OpDef, element, used: frozenset[str]) -> PrintStep | None:
    if isinstance(element, Lit):
        return _literal_step(element.text)
    if isinstance(element, Space):
        if element.text:

            def space(printer: Printer, op: Operation, st: _PrintState) -> None:
                printer.out.append(" ")
                st.last_punct = False
                st.emit_space = False

            return space

        def no_space(printer: Printer, op: Operation, st: _PrintState) -> None:
            st.last_punct = True
            st.emit_space = False

        return no_space
    if isinstance(element, Group):
        present = _presence(opdef, element.anchor())
        then_steps = _in_order(_print_steps(opdef, element.elements, used))
        else_steps = _in_order(_print_steps(opdef, element.else_elements, used))

        def group(printer: Printer, op: Operation, st: _PrintState) -> None:
            if present(op):
                then_steps(printer, op, st)
            else:
                else_steps(printer, op, st)

        return group
    if isinstance(element, OIList):
        clauses = []
        for clause in element.clauses:
            anchor = next((e for e in clause if isinstance(e, Var)), None)
            if anchor is not None:
                clauses.append((_presence(opdef, anchor), _in_order(_print_steps(opdef, clause, used))))

        def oilist(printer: Printer, op: Operation, st: _PrintState) -> None:
            for present, steps in clauses:
                if present(op):
                    steps(printer, op, st)

        return oilist
    if isinstance(element, AttrDict):
        keyword = element.keyword

        def attr_dict(printer: Printer, op: Operation, st: _PrintState) -> None:
            printer.out.append(printer.attr_dict(op, used, keyword))
            st.last_punct = False

        return attr_dict
    if isinstance(element, Var):
        adef = opdef.attribute(element.name)
        if adef is not None and adef.kind == "unit":
            return None  # a unit attribute is shown by its group's keyword only
        write = _var_printer(opdef, element.name)
    elif isinstance(element, TypeOf):
        write = _type_printer(opdef, element)
    elif isinstance(element, Custom):
        from .custom_directives import DIRECTIVES

        directive = DIRECTIVES[element.name][1]
        args = element.args

        def write(printer: Printer, op: Operation) -> None:
            directive(printer, op, args)

    else:
        return None

    def spaced(printer: Printer, op: Operation, st: _PrintState) -> None:
        if st.emit_space or not st.last_punct:
            printer.out.append(" ")
        st.last_punct = False
        st.emit_space = True
        write(printer, op)

    return spaced


def _operand_group(index: int):
    """The operands of the op definition's operand `index` (`Operation.operand_group`)."""

    def group(op: Operation) -> list:
        segments = op.operand_segments
        if segments is None:
            return op.operands[index : index + 1]
        start = sum(segments[:index])
        return op.operands[start : start + segments[index]]

    return group


def _presence(opdef: OpDef, anchor) -> Callable[[Operation], bool]:
    """Whether the element an optional group is anchored on has something to print."""
    if anchor is None:
        return lambda op: False
    if isinstance(anchor, (Var, TypeOf)):
        return _var_present(opdef, anchor.name)
    if isinstance(anchor, Custom):
        tests = [_var_present(opdef, a.name) for a in anchor.args]
        return lambda op: any(test(op) for test in tests)
    return lambda op: False


def _var_present(opdef: OpDef, name: str) -> Callable[[Operation], bool]:
    odef = _operand_def(opdef, name)
    if odef is not None:
        group = _operand_group(opdef.operand_index(name))
        return lambda op: bool(group(op))
    adef = opdef.attribute(name)
    if adef is not None:

        def attribute(op: Operation) -> bool:
            value = op.properties.get(name)
            if value is None:
                return False
            return not is_default(value, adef)

        return attribute
    if any(r.name == name for r in opdef.results):
        return lambda op: bool(op.result_group(name))
    for i, rdef in enumerate(opdef.regions):
        if rdef.name == name:
            return lambda op, i=i: i < len(op.regions) and bool(op.regions[i].blocks)
    return lambda op: False


def _type_printer(opdef: OpDef, element: TypeOf):
    name = element.name
    qualified = element.qualified
    if _operand_def(opdef, name) is not None:
        group = _operand_group(opdef.operand_index(name))

        def types_of(op: Operation) -> list[T.Type]:
            return [v.type for v in group(op)]

    else:

        def types_of(op: Operation) -> list[T.Type]:
            return [r.type for r in op.result_group(name)]

    if qualified:

        def write(printer: Printer, op: Operation) -> None:
            printer.out.append(", ".join(t.full() for t in types_of(op)))

    else:

        def write(printer: Printer, op: Operation) -> None:
            spell = printer.type
            printer.out.append(", ".join(spell(t) for t in types_of(op)))

    return write


def _var_printer(opdef: OpDef, name: str):
    if _operand_def(opdef, name) is not None:
        group = _operand_group(opdef.operand_index(name))

        def operands(printer: Printer, op: Operation) -> None:
            value = printer.value
            printer.out.append(", ".join(value(v) for v in group(op)))

        return operands
    adef = opdef.attribute(name)
    if adef is not None:
        kind = adef.kind

        def attribute(printer: Printer, op: Operation) -> None:
            value = op.properties.get(name)
            if value is not None:
                printer.out.append(attr_text(value, kind, printer))

        return attribute
    for i, rdef in enumerate(opdef.regions):
        if rdef.name == name:
            return _region_printer(i)
    return lambda printer, op: None


def _region_printer(index: int):
    def region(printer: Printer, op: Operation) -> None:
        if index < len(op.regions):
            printer.print_region(op.regions[index])

    return region


def is_default(value: A.Attribute, adef: AttrDef) -> bool:
    """True when `value` is the attribute's default, which formats leave out."""
    if adef.default is None:
        return False
    if isinstance(value, A.EnumAttr):
        return value.keyword == adef.default
    return attr_text(value, adef.kind) == adef.default


def attr_text(value: A.Attribute, kind: str, printer: Printer | None = None) -> str:
    """An attribute spelled as a declarative format prints `$attr` of this kind."""
    if isinstance(value, A.EnumAttr):
        return f"<{value.keyword}>" if value.enum.angle else value.keyword
    if isinstance(value, A.IntegerAttr) and kind in ("i1", "i8", "i16", "i32", "i64"):
        return str(value.value)
    if isinstance(value, A.DenseArrayAttr):
        return value.short()
    if kind == "symbol" and isinstance(value, A.StringAttr):
        return str(A.SymbolRefAttr(value.value))
    if isinstance(value, A.OptimizationHintsAttr):
        return value.body()
    if isinstance(value, A.TypeAttr):
        return str(value.value)
    if printer is not None:
        return printer.attr(value)
    return str(value)
