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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..dialect import enum_for_kind
from ..dialect.opdef import AttrDef, OpDef
from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation, OpResult, Region
from ..ir.source import Span
from . import lexer as L

if TYPE_CHECKING:
    from .parser import Parser
    from .printer import Printer


# ------------------------------------------------------------------ format elements


@dataclass(slots=True)
class Lit:
    text: str


@dataclass(slots=True)
class Space:
    text: str  # "" (no space) or " "


@dataclass(slots=True)
class Var:
    name: str
    anchor: bool = False


@dataclass(slots=True)
class TypeOf:
    name: str
    anchor: bool = False
    # A bare `type($x)` directive prints the type as MLIR's generic printer does, with its
    # dialect prefix (`!cuda_tile.tile<2xf32>`); `custom<CudaTileType>(type($x))` prints it
    # short (`tile<2xf32>`). Both parse either spelling.
    qualified: bool = False


@dataclass(slots=True)
class Custom:
    name: str
    args: list[Var | TypeOf]
    anchor: bool = False


@dataclass(slots=True)
class AttrDict:
    keyword: bool


@dataclass(slots=True)
class Group:
    elements: list
    else_elements: list = field(default_factory=list)

    def anchor(self):
        for e in flatten(self.elements):
            if getattr(e, "anchor", False):
                return e
        return None


@dataclass(slots=True)
class OIList:
    clauses: list[list]


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


_COMPILED: dict[str, list] = {}


def compile_format(opdef: OpDef) -> list:
    elements = _COMPILED.get(opdef.name)
    if elements is None:
        assert opdef.assembly is not None
        elements = _FormatParser(opdef.assembly).parse_elements()
        _COMPILED[opdef.name] = elements
    return elements


# ------------------------------------------------------------------ parsing


@dataclass(slots=True)
class _State:
    opdef: OpDef
    operands: dict[str, list[tuple[str, Span]]] = field(default_factory=dict)
    types: dict[str, list[T.Type]] = field(default_factory=dict)
    regions: dict[str, Region] = field(default_factory=dict)


def parse_op(parser: Parser, op: Operation, opdef: OpDef, num_results: int) -> None:
    state = _State(opdef)
    _parse_elements(parser, op, state, compile_format(opdef))
    finish_op(parser, op, state, num_results)


def _parse_elements(parser: Parser, op: Operation, state: _State, elements: list) -> None:
    for element in elements:
        _parse_element(parser, op, state, element)


def _parse_element(parser: Parser, op: Operation, state: _State, element) -> None:
    if isinstance(element, Lit):
        parser.expect(element.text)
    elif isinstance(element, Space):
        return
    elif isinstance(element, Var):
        _parse_var(parser, op, state, element.name)
    elif isinstance(element, TypeOf):
        state.types[element.name] = _parse_type_list(parser, state, element.name)
    elif isinstance(element, Custom):
        from .custom_directives import DIRECTIVES

        DIRECTIVES[element.name][0](parser, op, state, element.args)
    elif isinstance(element, AttrDict):
        parse_attr_dict(parser, op, element.keyword)
    elif isinstance(element, Group):
        if _group_present(parser, state, element):
            _parse_elements(parser, op, state, element.elements)
        else:
            _parse_elements(parser, op, state, element.else_elements)
    elif isinstance(element, OIList):
        pending = list(element.clauses)
        progress = True
        while progress and pending:
            progress = False
            for clause in pending:
                if isinstance(clause[0], Lit) and parser.at(clause[0].text):
                    _parse_elements(parser, op, state, clause)
                    pending.remove(clause)
                    progress = True
                    break


def _group_present(parser: Parser, state: _State, group: Group) -> bool:
    first = next((e for e in group.elements if not isinstance(e, Space)), None)
    tok = parser.tok
    if isinstance(first, Lit):
        return parser.at(first.text)
    if isinstance(first, Var):
        opdef = state.opdef
        if any(o.name == first.name for o in opdef.operands):
            return tok.kind == L.VALUE
        adef = opdef.attribute(first.name)
        enum = enum_for_kind(adef.kind) if adef is not None else None
        if enum is not None:
            if enum.angle:
                return parser.at("<")
            return tok.kind == L.IDENT and enum.by_keyword(tok.text) is not None
        return tok.kind not in (L.EOF,) and not parser.at(":") and not parser.at("}")
    if isinstance(first, TypeOf):
        return tok.kind in (L.IDENT, L.BANG) or parser.at("(")
    return False


def _operand_def(opdef: OpDef, name: str):
    for o in opdef.operands:
        if o.name == name:
            return o
    return None


def _parse_var(parser: Parser, op: Operation, state: _State, name: str) -> None:
    opdef = state.opdef
    odef = _operand_def(opdef, name)
    if odef is not None:
        if odef.arity == "variadic":
            refs = []
            if parser.tok.kind == L.VALUE:
                while True:
                    refs.append(parser.parse_value_ref())
                    if not parser.accept(","):
                        break
            state.operands[name] = refs
        elif odef.arity == "optional":
            state.operands[name] = [parser.parse_value_ref()] if parser.tok.kind == L.VALUE else []
        else:
            state.operands[name] = [parser.parse_value_ref()]
        return
    adef = opdef.attribute(name)
    if adef is not None:
        op.properties[name] = parse_attr_value(parser, adef.kind, name)
        return
    for rdef in opdef.regions:
        if rdef.name == name:
            isolated = "IsolatedFromAbove" in opdef.traits
            state.regions[name] = parser.parse_region(isolated=isolated)
            return
    parser.fail(f"internal: format of '{opdef.name}' names unknown ${name}")


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
        from .lexer import unescape_string

        if parser.tok.kind != L.STRING:  # MLIR parses any attribute, then checks its kind
            start = parser.tok
            if not starts_attribute(start):
                parser.fail("expected attribute value", start.span)
            parser.parse_attribute()
            parser.fail("invalid kind of attribute specified", start.span)
        tok = parser.expect_kind(L.STRING, "string literal")
        return A.StringAttr(unescape_string(tok.text))
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


def _parse_type_list(parser: Parser, state: _State, name: str) -> list[T.Type]:
    """`type($x)`: one type, or a comma-separated list for variadic operands/results."""
    variadic = any(o.name == name and o.arity == "variadic" for o in state.opdef.operands) or any(
        r.name == name and r.arity == "variadic" for r in state.opdef.results
    )
    if parser.tok.kind not in (L.IDENT, L.BANG) and not parser.at("("):
        # Nothing that starts a type: cuda_tile's type parser then reads the unprefixed
        # type's name as a keyword, and fails as the op's custom parser.
        parser.fail(f"custom op '{state.opdef.name}' expected valid keyword", parser.tok.span)
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


# Operand constraints that name one concrete type (ODS's buildable types): an operand whose
# type the format does not spell is resolved with it, as MLIR's generated parsers do.
_BUILDABLE: dict[str, T.Type] = {
    "scalar_i32_tile": T.TileType((), T.I32),
    "scalar_i1_tile": T.TileType((), T.I1),
    "token": T.TOKEN,
}


def finish_op(parser: Parser, op: Operation, state: _State, num_results: int) -> None:
    """Infer missing types from the op's type rules, then build operands/results/regions."""
    opdef = state.opdef
    types = state.types
    for kind, names, *_ in opdef.type_rules:
        if kind == "same_type":
            known = next((types[n][0] for n in names if types.get(n)), None)
            if known is not None:
                for n in names:
                    if n not in types:
                        types[n] = [known] * max(len(state.operands.get(n, ())), 1)
        elif kind == "i1_same_shape":
            src, dst = names
            if src in types and dst not in types and isinstance(types[src][0], T.TileType):
                types[dst] = [T.TileType(types[src][0].shape, T.I1)]
    # Operands, in definition order.
    flat = []
    segments = []
    for odef in opdef.operands:
        refs = state.operands.get(odef.name, [])
        declared = types.get(odef.name, [])
        if not declared and odef.constraint in _BUILDABLE:
            declared = [_BUILDABLE[odef.constraint]] * len(refs)
        if declared and len(declared) == 1 and len(refs) > 1:
            declared = declared * len(refs)
        if declared and len(declared) != len(refs):
            # MLIR's resolveOperands, inside the op's generated parser.
            parser.fail(
                f"custom op '{opdef.name}' number of operands and types do not match: "
                f"got {len(refs)} operands and {len(declared)} types",
                refs[0][1] if refs else (op.name_span or parser.here()),
            )
        for i, (name, span) in enumerate(refs):
            flat.append(parser.resolve_operand(name, span, declared[i] if declared else None))
        segments.append(len(refs))
    op.set_operands(flat)
    if opdef.has_segments:
        op.operand_segments = tuple(segments)
    # Results: fixed ones take one type each; a variadic group takes what is left.
    result_types: list[T.Type] = []
    for rdef in opdef.results:
        rtypes = types.get(rdef.name)
        if rtypes is None:
            if rdef.arity == "variadic":
                fixed = sum(1 for r in opdef.results if r.arity == "single")
                if num_results - fixed > 0:
                    parser.fail(f"cannot infer the types of the results of '{opdef.name}'", op.name_span)
                continue
            parser.fail(f"cannot infer the type of result '{rdef.name}' of '{opdef.name}'", op.name_span)
        assert rtypes is not None
        result_types.extend(rtypes)
    op.results = [OpResult(op, i, t) for i, t in enumerate(result_types)]
    for rdef in opdef.regions:
        region = state.regions.get(rdef.name)
        op.add_region(region if region is not None else Region())


# ------------------------------------------------------------------ printing


@dataclass(slots=True)
class _PrintState:
    emit_space: bool = True
    last_punct: bool = False


def print_op(printer: Printer, op: Operation) -> None:
    opdef = op.opdef
    assert opdef is not None
    st = _PrintState()
    elements = compile_format(opdef)
    _print_elements(printer, op, elements, st, _used_attrs(opdef, elements))


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


def _print_literal(printer: Printer, text: str, st: _PrintState) -> None:
    if st.emit_space:
        if len(text) != 1 and text != "->":
            printer.write(" ")
        elif st.last_punct:
            if text[0] not in _NO_SPACE_BEFORE_AFTER_PUNCT:
                printer.write(" ")
        elif text[0] not in _NO_SPACE_BEFORE:
            printer.write(" ")
    printer.write(text)
    st.emit_space = len(text) != 1 or text[0] not in "<({["
    st.last_punct = text[0] != "_" and not text[0].isalpha()


def _space_before_element(printer: Printer, st: _PrintState) -> None:
    if st.emit_space or not st.last_punct:
        printer.write(" ")
    st.last_punct = False
    st.emit_space = True


def _print_elements(printer: Printer, op: Operation, elements: list, st: _PrintState, used: set[str]) -> None:
    for element in elements:
        if isinstance(element, Lit):
            _print_literal(printer, element.text, st)
        elif isinstance(element, Space):
            if element.text:
                printer.write(" ")
                st.last_punct = False
            else:
                st.last_punct = True
            st.emit_space = False
        elif isinstance(element, Group):
            if _group_present_in_op(op, element):
                _print_elements(printer, op, element.elements, st, used)
            else:
                _print_elements(printer, op, element.else_elements, st, used)
        elif isinstance(element, OIList):
            for clause in element.clauses:
                anchor = next((e for e in clause if isinstance(e, Var)), None)
                if anchor is not None and _var_present(op, anchor.name):
                    _print_elements(printer, op, clause, st, used)
        elif isinstance(element, AttrDict):
            printer.write(printer.attr_dict(op, used | {"operandSegmentSizes"}, element.keyword))
            st.last_punct = False
        elif isinstance(element, Var) and _is_unit_attr(op, element.name):
            continue  # a unit attribute is shown by its group's keyword only
        else:
            _space_before_element(printer, st)
            if isinstance(element, Var):
                _print_var(printer, op, element.name)
            elif isinstance(element, TypeOf):
                spell = (lambda t: t.full()) if element.qualified else printer.type
                printer.write(", ".join(spell(t) for t in _types_of(op, element.name)))
            elif isinstance(element, Custom):
                from .custom_directives import DIRECTIVES

                DIRECTIVES[element.name][1](printer, op, element.args)


def _is_unit_attr(op: Operation, name: str) -> bool:
    opdef = op.opdef
    adef = opdef.attribute(name) if opdef else None
    return adef is not None and adef.kind == "unit"


def _group_present_in_op(op: Operation, group: Group) -> bool:
    anchor = group.anchor()
    if anchor is None:
        return False
    if isinstance(anchor, (Var, TypeOf)):
        return _var_present(op, anchor.name)
    if isinstance(anchor, Custom):
        return any(_var_present(op, a.name) for a in anchor.args)
    return False


def _var_present(op: Operation, name: str) -> bool:
    opdef = op.opdef
    assert opdef is not None
    if _operand_def(opdef, name) is not None:
        return bool(op.operand_group(name))
    adef = opdef.attribute(name)
    if adef is not None:
        value = op.properties.get(name)
        if value is None:
            return False
        return not is_default(value, adef)
    if any(r.name == name for r in opdef.results):
        return bool(op.result_group(name))
    for i, rdef in enumerate(opdef.regions):
        if rdef.name == name:
            return i < len(op.regions) and bool(op.regions[i].blocks)
    return False


def _types_of(op: Operation, name: str) -> list[T.Type]:
    opdef = op.opdef
    assert opdef is not None
    if _operand_def(opdef, name) is not None:
        return [v.type for v in op.operand_group(name)]
    return [r.type for r in op.result_group(name)]


def _print_var(printer: Printer, op: Operation, name: str) -> None:
    opdef = op.opdef
    assert opdef is not None
    if _operand_def(opdef, name) is not None:
        printer.write(", ".join(printer.value(v) for v in op.operand_group(name)))
        return
    adef = opdef.attribute(name)
    if adef is not None:
        value = op.properties.get(name)
        if value is not None:
            printer.write(attr_text(value, adef.kind, printer))
        return
    for i, rdef in enumerate(opdef.regions):
        if rdef.name == name and i < len(op.regions):
            printer.print_region(op.regions[i])
            return


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
