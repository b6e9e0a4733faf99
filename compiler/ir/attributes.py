"""The attributes of Tile IR.

Attributes are immutable values. `str(a)` is the generic (MLIR) spelling, used
inside attribute dictionaries and the generic op form; op assembly formats may
print an attribute in a shorter form (see `compiler.text.asmformat`).
Floats keep their exact bit pattern so nothing is lost between text and bytecode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import floats
from .enums import ENUM_BY_MNEMONIC, EnumDef
from .types import FloatType, IntegerType, Type


class Attribute:
    __slots__ = ()


def quote(s: str) -> str:
    """A string literal as MLIR prints it (escaping quotes, backslashes, non-printables)."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        elif ch == "\n":
            out.append("\\0A")
        else:
            for b in ch.encode("utf-8"):
                out.append(f"\\{b:02X}")
    return '"' + "".join(out) + '"'


@dataclass(frozen=True, slots=True)
class UnitAttr(Attribute):
    def __str__(self) -> str:
        return "unit"


UNIT = UnitAttr()


@dataclass(frozen=True, slots=True)
class BoolAttr(Attribute):
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass(frozen=True, slots=True)
class IntegerAttr(Attribute):
    value: int
    type: Type | None = None  # None means the builtin default, i64

    def __str__(self) -> str:
        if self.type is None or self.type == IntegerType(64):
            return str(self.value)
        if self.type == IntegerType(1):
            return "true" if self.value else "false"
        return f"{self.value} : {self.type}"


@dataclass(frozen=True, slots=True)
class FloatAttr(Attribute):
    bits: int  # exact bit pattern in `type`'s format
    type: FloatType

    @property
    def value(self) -> float:
        return floats.bits_to_float(self.bits, self.type.name)

    def short(self) -> str:
        return floats.format_float(self.bits, self.type.name)

    def __str__(self) -> str:
        return f"{self.short()} : {self.type}"


@dataclass(frozen=True, slots=True)
class StringAttr(Attribute):
    value: str

    def __str__(self) -> str:
        return quote(self.value)


@dataclass(frozen=True, slots=True)
class TypeAttr(Attribute):
    value: Type

    def __str__(self) -> str:
        return self.value.full()


@dataclass(frozen=True, slots=True)
class SymbolRefAttr(Attribute):
    name: str
    nested: tuple[str, ...] = ()

    def __str__(self) -> str:
        text = "@" + _symbol(self.name)
        for n in self.nested:
            text += "::@" + _symbol(n)
        return text


_BARE_ID = re.compile(r"[A-Za-z_][\w$.]*")


def _symbol(name: str) -> str:
    return name if _BARE_ID.fullmatch(name) else quote(name)


@dataclass(frozen=True, slots=True)
class ArrayAttr(Attribute):
    elements: tuple[Attribute, ...]

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.elements)) + "]"


@dataclass(frozen=True, slots=True)
class DenseArrayAttr(Attribute):
    """`array<i32: 1, 2>`: a flat array of integers (or floats) of one element type."""

    element: Type
    values: tuple[int, ...]

    def __str__(self) -> str:
        if not self.values:
            return f"array<{self.element}>"
        return f"array<{self.element}: {', '.join(map(str, self.values))}>"

    def short(self) -> str:
        return "[" + ", ".join(map(str, self.values)) + "]"


@dataclass(frozen=True, slots=True)
class DictionaryAttr(Attribute):
    entries: tuple[tuple[str, Attribute], ...]

    def get(self, key: str) -> Attribute | None:
        for k, v in self.entries:
            if k == key:
                return v
        return None

    def __str__(self) -> str:
        return "{" + ", ".join(_dict_entry(k, v) for k, v in self.entries) + "}"


def _dict_entry(key: str, value: Attribute) -> str:
    k = _symbol(key)
    return k if isinstance(value, UnitAttr) else f"{k} = {value}"


@dataclass(frozen=True, slots=True)
class DenseElementsAttr(Attribute):
    """Tile contents: one bit pattern per element (row-major), or a single splat value.

    Integers are stored as their signed value in the element width; floats as raw
    bits in their format; i1 as 0/1.
    """

    type: Type  # a TileType (or an opaque builtin tensor type)
    values: tuple[int, ...]
    splat: bool = False

    @property
    def element(self) -> Type:
        return getattr(self.type, "element", self.type)

    def __str__(self) -> str:
        from ..text.denseformat import format_dense_body

        return f"dense<{format_dense_body(self)}> : {self.type.full()}"


@dataclass(frozen=True, slots=True)
class EnumAttr(Attribute):
    enum: EnumDef
    keyword: str

    @property
    def value(self) -> int:
        case = self.enum.by_keyword(self.keyword)
        return case.value if case else -1

    def __str__(self) -> str:
        return f"#cuda_tile.{self.enum.mnemonic}<{self.keyword}>"


def enum_attr(mnemonic: str, keyword: str) -> EnumAttr:
    return EnumAttr(ENUM_BY_MNEMONIC[mnemonic], keyword)


@dataclass(frozen=True, slots=True)
class OptimizationHintsAttr(Attribute):
    """Per-architecture hint dictionaries: `sm_100 = {num_cta_in_cga = 2}`."""

    entries: tuple[tuple[str, DictionaryAttr], ...]

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


@dataclass(frozen=True, slots=True)
class DivByAttr(Attribute):
    divisor: int
    every: int | None = None
    along: int | None = None

    def body(self) -> str:
        if self.every is None:
            return f"div_by<{self.divisor}>"
        return f"div_by<{self.divisor}, every {self.every} along {self.along}>"

    def __str__(self) -> str:
        return "#cuda_tile." + self.body()


@dataclass(frozen=True, slots=True)
class SameElementsAttr(Attribute):
    values: tuple[int, ...]

    def body(self) -> str:
        return f"same_elements<[{', '.join(map(str, self.values))}]>"

    def __str__(self) -> str:
        return "#cuda_tile." + self.body()


@dataclass(frozen=True, slots=True)
class BoundedAttr(Attribute):
    lb: int | None
    ub: int | None

    def body(self) -> str:
        lb = "?" if self.lb is None else str(self.lb)
        ub = "?" if self.ub is None else str(self.ub)
        return f"bounded<{lb}, {ub}>"

    def __str__(self) -> str:
        return "#cuda_tile." + self.body()


ASSUME_PREDICATES = (DivByAttr, SameElementsAttr, BoundedAttr)


# ---- debug info -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DIAttr(Attribute):
    """A cuda_tile debug-info attribute (`di_file`, `di_compile_unit`, `di_subprogram`,
    `di_lexical_block`). Parameters keep the order they were written in."""

    kind: str
    params: tuple[tuple[str, Attribute], ...]

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


@dataclass(frozen=True, slots=True)
class UnknownLoc(LocationAttr):
    def body(self) -> str:
        return "unknown"


@dataclass(frozen=True, slots=True)
class FileLineColLoc(LocationAttr):
    filename: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def body(self) -> str:
        text = f"{quote(self.filename)}:{self.line}:{self.column}"
        if self.end_line is not None:
            text += f" to {self.end_line}:{self.end_column}"
        return text


@dataclass(frozen=True, slots=True)
class NameLoc(LocationAttr):
    name: str
    child: LocationAttr | None = None

    def body(self) -> str:
        if self.child is None or isinstance(self.child, UnknownLoc):
            return quote(self.name)
        return f"{quote(self.name)}({self.child.body()})"


@dataclass(frozen=True, slots=True)
class CallSiteLoc(LocationAttr):
    callee: LocationAttr
    caller: LocationAttr

    def body(self) -> str:
        return f"callsite({self.callee.body()} at {self.caller.body()})"


@dataclass(frozen=True, slots=True)
class FusedLoc(LocationAttr):
    locations: tuple[LocationAttr, ...]
    metadata: Attribute | None = None

    def body(self) -> str:
        meta = f"<{self.metadata}>" if self.metadata is not None else ""
        return f"fused{meta}[{', '.join(loc.body() for loc in self.locations)}]"


@dataclass(frozen=True, slots=True)
class DILocAttr(LocationAttr):
    """`#cuda_tile.di_loc<loc("f.py":1:2) in #scope>`: a source location inside a debug scope."""

    source: LocationAttr
    scope: Attribute

    def body(self) -> str:
        return f"#cuda_tile.di_loc<{self.source} in {self.scope}>"


@dataclass(frozen=True, slots=True)
class OpaqueAttr(Attribute):
    """An attribute of a dialect we do not model, kept verbatim."""

    text: str

    def __str__(self) -> str:
        return self.text


def location_text(loc: LocationAttr | None) -> str | None:
    """`file:line:col` of a location attribute (through names, call sites, fused and
    debug-info locations), or None when it names no file position."""
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename}:{loc.line}:{loc.column}"
    if isinstance(loc, NameLoc):
        return location_text(loc.child)
    if isinstance(loc, CallSiteLoc):
        return location_text(loc.callee) or location_text(loc.caller)
    if isinstance(loc, FusedLoc):
        for inner in loc.locations:
            text = location_text(inner)
            if text is not None:
                return text
        return None
    if isinstance(loc, DILocAttr):
        return location_text(loc.source)
    return None
