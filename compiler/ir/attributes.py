"""The attributes of Tile IR.

Attributes are immutable values. `str(a)` is the generic (MLIR) spelling, used
inside attribute dictionaries and the generic op form; op assembly formats may
print an attribute in a shorter form (see `compiler.text.asmformat`).
Floats keep their exact bit pattern so nothing is lost between text and bytecode.
"""

from __future__ import annotations

import re

from . import floats
from .enums import ENUM_BY_MNEMONIC, EnumDef
from .frozen import Frozen, _set
from .types import FloatType, IntegerType, Type


class Attribute(Frozen):
    __slots__ = ()


# What a string literal escapes: quotes, backslashes and all but printable ASCII.
_UNPRINTABLE = re.compile(r'["\\]|[^\x20-\x7e]')


_ESCAPES: dict[str, str] = {}  # character -> its escape, as met


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    escaped = _ESCAPES.get(ch)
    if escaped is None:
        if ch == "\\":
            escaped = "\\\\"
        elif ch == '"':
            escaped = "\\22"  # as MLIR prints it (tileirdisasm too), not \"
        elif ch == "\n":
            escaped = "\\0A"
        elif "\udc80" <= ch <= "\udcff":  # a byte that is not UTF-8 (lexer.unescape_string)
            escaped = f"\\{ord(ch) - 0xDC00:02X}"
        else:
            escaped = "".join(f"\\{b:02X}" for b in ch.encode("utf-8"))
        if len(_ESCAPES) < 4096:
            _ESCAPES[ch] = escaped
    return escaped


def quote(s: str) -> str:
    """A string literal as MLIR prints it (escaping quotes, backslashes, non-printables).
    Runs of printable text are copied whole (a megabyte-long string costs no Python step per
    character)."""
    return '"' + _UNPRINTABLE.sub(_escape, s) + '"'


class UnitAttr(Attribute):
    __slots__ = ()

    def __str__(self) -> str:
        return "unit"


UNIT = UnitAttr()


class BoolAttr(Attribute):
    __slots__ = ("value",)
    value: bool

    def __init__(self, value: bool) -> None:
        _set(self, "value", value)

    def __str__(self) -> str:
        return "true" if self.value else "false"


class IntegerAttr(Attribute):
    __slots__ = ("value", "type")
    value: int
    type: Type | None  # None means the builtin default, i64

    def __init__(self, value: int, type: Type | None = None) -> None:
        _set(self, "value", value)
        _set(self, "type", type)

    def __str__(self) -> str:
        if self.type is None or self.type == IntegerType(64):
            return str(self.value)
        if self.type == IntegerType(1):
            return "true" if self.value else "false"
        return f"{self.value} : {self.type}"


class FloatAttr(Attribute):
    __slots__ = ("bits", "type")
    bits: int  # exact bit pattern in `type`'s format
    type: FloatType

    def __init__(self, bits: int, type: FloatType) -> None:
        _set(self, "bits", bits)
        _set(self, "type", type)

    @property
    def value(self) -> float:
        return floats.bits_to_float(self.bits, self.type.name)

    def short(self) -> str:
        return floats.format_float(self.bits, self.type.name)

    def __str__(self) -> str:
        return f"{self.short()} : {self.type}"


class StringAttr(Attribute):
    __slots__ = ("value",)
    value: str

    def __init__(self, value: str) -> None:
        _set(self, "value", value)

    def __str__(self) -> str:
        return quote(self.value)


class TypeAttr(Attribute):
    __slots__ = ("value",)
    value: Type

    def __init__(self, value: Type) -> None:
        _set(self, "value", value)

    def __str__(self) -> str:
        return self.value.full()


class SymbolRefAttr(Attribute):
    __slots__ = ("name", "nested")
    name: str
    nested: tuple[str, ...]

    def __init__(self, name: str, nested: tuple[str, ...] = ()) -> None:
        _set(self, "name", name)
        _set(self, "nested", nested)

    def __str__(self) -> str:
        text = "@" + _symbol(self.name)
        for n in self.nested:
            text += "::@" + _symbol(n)
        return text


_BARE_ID = re.compile(r"[A-Za-z_][\w$.]*")


def _symbol(name: str) -> str:
    return name if _BARE_ID.fullmatch(name) else quote(name)


class ArrayAttr(Attribute):
    __slots__ = ("elements",)
    elements: tuple[Attribute, ...]

    def __init__(self, elements: tuple[Attribute, ...]) -> None:
        _set(self, "elements", elements)

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.elements)) + "]"


class DenseArrayAttr(Attribute):
    """`array<i32: 1, 2>`: a flat array of integers (or floats) of one element type."""

    __slots__ = ("element", "values")
    element: Type
    values: tuple[int, ...]

    def __init__(self, element: Type, values: tuple[int, ...]) -> None:
        _set(self, "element", element)
        _set(self, "values", values)

    def __str__(self) -> str:
        if not self.values:
            return f"array<{self.element}>"
        return f"array<{self.element}: {', '.join(map(str, self.values))}>"

    def short(self) -> str:
        return "[" + ", ".join(map(str, self.values)) + "]"


class DictionaryAttr(Attribute):
    __slots__ = ("entries",)
    entries: tuple[tuple[str, Attribute], ...]

    def __init__(self, entries: tuple[tuple[str, Attribute], ...]) -> None:
        # Sorted by name, as MLIR's DictionaryAttr always is (and so prints and encodes it).
        _set(self, "entries", tuple(sorted(entries, key=name_order)))

    def get(self, key: str) -> Attribute | None:
        for k, v in self.entries:
            if k == key:
                return v
        return None

    def __str__(self) -> str:
        return "{" + ", ".join(_dict_entry(k, v) for k, v in self.entries) + "}"


def name_order(entry: tuple[str, object]) -> bytes:
    """The sort key of a (name, value) entry of a dictionary: MLIR compares names as bytes."""
    return entry[0].encode("utf-8", "surrogateescape")


def _dict_entry(key: str, value: Attribute) -> str:
    k = _symbol(key)
    return k if isinstance(value, UnitAttr) else f"{k} = {value}"


class DenseElementsAttr(Attribute):
    """Tile contents: one bit pattern per element (row-major), or a single splat value.

    Integers are stored as their signed value in the element width; floats as raw
    bits in their format; i1 as 0/1.
    """

    __slots__ = ("type", "values", "splat")
    type: Type  # a TileType (or an opaque builtin tensor type)
    values: tuple[int, ...]
    splat: bool

    def __init__(self, type: Type, values: tuple[int, ...], splat: bool = False) -> None:
        _set(self, "type", type)
        _set(self, "values", values)
        _set(self, "splat", splat)

    @property
    def element(self) -> Type:
        return getattr(self.type, "element", self.type)

    def __str__(self) -> str:
        from ..text.denseformat import format_dense_body

        return f"dense<{format_dense_body(self)}> : {self.type.full()}"


class EnumAttr(Attribute):
    __slots__ = ("enum", "keyword")
    enum: EnumDef
    keyword: str

    def __init__(self, enum: EnumDef, keyword: str) -> None:
        _set(self, "enum", enum)
        _set(self, "keyword", keyword)

    @property
    def value(self) -> int:
        case = self.enum.by_keyword(self.keyword)
        return case.value if case else -1

    def __str__(self) -> str:
        return f"#cuda_tile.{self.enum.mnemonic}<{self.keyword}>"


def enum_attr(mnemonic: str, keyword: str) -> EnumAttr:
    return EnumAttr(ENUM_BY_MNEMONIC[mnemonic], keyword)


class OptimizationHintsAttr(Attribute):
    """Per-architecture hint dictionaries: `sm_100 = {num_cta_in_cga = 2}`."""

    __slots__ = ("entries",)
    entries: tuple[tuple[str, DictionaryAttr], ...]

    def __init__(self, entries: tuple[tuple[str, DictionaryAttr], ...]) -> None:
        # A dictionary in cuda_tile's parser (getDictionaryAttr): sorted by architecture name.
        _set(self, "entries", tuple(sorted(entries, key=name_order)))

    def body(self) -> str:
        # Hint values print without their type (`latency = 3`, whether stored as i32 or i64),
        # as cuda_tile's printer writes them.
        return "<" + ", ".join(f"{k} = {_hint_dict(v)}" for k, v in self.entries) + ">"

    def __str__(self) -> str:
        return "#cuda_tile.optimization_hints" + self.body()


def _hint_dict(d: Attribute) -> str:
    if not isinstance(d, DictionaryAttr):
        return str(d)
    return (
        "{"
        + ", ".join(
            _symbol(k) if isinstance(v, UnitAttr) else f"{_symbol(k)} = {_without_type(v)}" for k, v in d.entries
        )
        + "}"
    )


def _without_type(value: Attribute) -> str:
    if isinstance(value, IntegerAttr):
        if value.type == IntegerType(1):
            return "true" if value.value else "false"
        return str(value.value)
    if isinstance(value, FloatAttr):
        return value.short()
    return str(value)


# ---- assume predicates ------------------------------------------------------------


class DivByAttr(Attribute):
    __slots__ = ("divisor", "every", "along")
    divisor: int
    every: int | None
    along: int | None

    def __init__(self, divisor: int, every: int | None = None, along: int | None = None) -> None:
        _set(self, "divisor", divisor)
        _set(self, "every", every)
        _set(self, "along", along)

    def body(self) -> str:
        if self.every is None:
            return f"div_by<{self.divisor}>"
        return f"div_by<{self.divisor}, every {self.every} along {self.along}>"

    def __str__(self) -> str:
        return "#cuda_tile." + self.body()


class SameElementsAttr(Attribute):
    __slots__ = ("values",)
    values: tuple[int, ...]

    def __init__(self, values: tuple[int, ...]) -> None:
        _set(self, "values", values)

    def body(self) -> str:
        return f"same_elements<[{', '.join(map(str, self.values))}]>"

    def __str__(self) -> str:
        return "#cuda_tile." + self.body()


class BoundedAttr(Attribute):
    __slots__ = ("lb", "ub")
    lb: int | None
    ub: int | None

    def __init__(self, lb: int | None, ub: int | None) -> None:
        _set(self, "lb", lb)
        _set(self, "ub", ub)

    def body(self) -> str:
        lb = "?" if self.lb is None else str(self.lb)
        ub = "?" if self.ub is None else str(self.ub)
        return f"bounded<{lb}, {ub}>"

    def __str__(self) -> str:
        return "#cuda_tile." + self.body()


ASSUME_PREDICATES = (DivByAttr, SameElementsAttr, BoundedAttr)


# ---- debug info -------------------------------------------------------------------


class DIAttr(Attribute):
    """A cuda_tile debug-info attribute (`di_file`, `di_compile_unit`, `di_subprogram`,
    `di_lexical_block`). Parameters keep the order they were written in."""

    __slots__ = ("kind", "params")
    kind: str
    params: tuple[tuple[str, Attribute], ...]

    def __init__(self, kind: str, params: tuple[tuple[str, Attribute], ...]) -> None:
        _set(self, "kind", kind)
        _set(self, "params", params)

    def get(self, key: str) -> Attribute | None:
        for k, v in self.params:
            if k == key:
                return v
        return None

    def body(self) -> str:
        if self.kind == "di_file":
            return f"<{self.get('name')} in {self.get('directory')}>"
        return "<" + ", ".join(f"{k} = {v}" for k, v in self.params) + ">"

    def __str__(self) -> str:
        return f"#cuda_tile.{self.kind}{self.body()}"


class LocationAttr(Attribute):
    __slots__ = ()

    def body(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return f"loc({self.body()})"


class UnknownLoc(LocationAttr):
    __slots__ = ()

    def body(self) -> str:
        return "unknown"


class FileLineColLoc(LocationAttr):
    __slots__ = ("filename", "line", "column", "end_line", "end_column")
    filename: str
    line: int
    column: int
    end_line: int | None
    end_column: int | None

    def __init__(
        self, filename: str, line: int, column: int, end_line: int | None = None, end_column: int | None = None
    ) -> None:
        _set(self, "filename", filename)
        _set(self, "line", line)
        _set(self, "column", column)
        _set(self, "end_line", end_line)
        _set(self, "end_column", end_column)

    def body(self) -> str:
        text = f"{quote(self.filename)}:{self.line}:{self.column}"
        if self.end_line is not None:
            text += f" to {self.end_line}:{self.end_column}"
        return text


class NameLoc(LocationAttr):
    __slots__ = ("name", "child")
    name: str
    child: LocationAttr | None

    def __init__(self, name: str, child: LocationAttr | None = None) -> None:
        _set(self, "name", name)
        _set(self, "child", child)

    def body(self) -> str:
        if self.child is None or isinstance(self.child, UnknownLoc):
            return quote(self.name)
        return f"{quote(self.name)}({self.child.body()})"


class CallSiteLoc(LocationAttr):
    __slots__ = ("callee", "caller")
    callee: LocationAttr
    caller: LocationAttr

    def __init__(self, callee: LocationAttr, caller: LocationAttr) -> None:
        _set(self, "callee", callee)
        _set(self, "caller", caller)

    def body(self) -> str:
        return f"callsite({self.callee.body()} at {self.caller.body()})"


class FusedLoc(LocationAttr):
    __slots__ = ("locations", "metadata")
    locations: tuple[LocationAttr, ...]
    metadata: Attribute | None

    def __init__(self, locations: tuple[LocationAttr, ...], metadata: Attribute | None = None) -> None:
        _set(self, "locations", locations)
        _set(self, "metadata", metadata)

    def body(self) -> str:
        meta = f"<{self.metadata}>" if self.metadata is not None else ""
        return f"fused{meta}[{', '.join(loc.body() for loc in self.locations)}]"


class DILocAttr(LocationAttr):
    """`#cuda_tile.di_loc<loc("f.py":1:2) in #scope>`: a source location inside a debug scope."""

    __slots__ = ("source", "scope")
    source: LocationAttr
    scope: Attribute

    def __init__(self, source: LocationAttr, scope: Attribute) -> None:
        _set(self, "source", source)
        _set(self, "scope", scope)

    def body(self) -> str:
        return f"#cuda_tile.di_loc<{self.source} in {self.scope}>"


class OpaqueAttr(Attribute):
    """An attribute of a dialect we do not model, kept verbatim."""

    __slots__ = ("text",)
    text: str

    def __init__(self, text: str) -> None:
        _set(self, "text", text)

    def __str__(self) -> str:
        return self.text


def location_place(loc: LocationAttr | None) -> tuple[str, int, int] | None:
    """(file, line, column) of a location attribute (through names, call sites, fused and
    debug-info locations), or None when it names no file position."""
    if isinstance(loc, FileLineColLoc):
        return (loc.filename, loc.line, loc.column)
    if isinstance(loc, NameLoc):
        return location_place(loc.child)
    if isinstance(loc, CallSiteLoc):
        return location_place(loc.callee) or location_place(loc.caller)
    if isinstance(loc, FusedLoc):
        for inner in loc.locations:
            place = location_place(inner)
            if place is not None:
                return place
        return None
    if isinstance(loc, DILocAttr):
        return location_place(loc.source)
    return None


def location_text(loc: LocationAttr | None) -> str | None:
    """`file:line:col` of a location attribute (`location_place`), or None."""
    place = location_place(loc)
    return None if place is None else f"{place[0]}:{place[1]}:{place[2]}"
