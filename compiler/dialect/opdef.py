"""The schema of the op table.

Each op of the dialect is declared once as an `OpDef` (see `ops.py`): its operands,
attributes, results and regions in definition order (the order the bytecode uses),
its declarative assembly format, traits, type rules, the version that introduced
it, and a one-paragraph description. The parser, printer, verifier, bytecode,
hovers and completion all read this table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Arity = Literal["single", "optional", "variadic"]


@dataclass(frozen=True, slots=True)
class OperandDef:
    name: str
    constraint: str  # a key of `compiler.dialect.constraints.TYPE_CONSTRAINTS`
    arity: Arity = "single"
    since: str = "13.1"
    doc: str = ""


@dataclass(frozen=True, slots=True)
class AttrDef:
    """An inherent attribute.

    `kind` names how the value is spelled and stored:
    `unit`, `bool`, `i32`, `i64`, `string`, `symbol` (a symbol name `@x`),
    `symbol_ref` (a reference `@x`), `dense_i32_array`, `dense_i64_array`,
    `array` (an array of typed attributes), `dense_elements`, `type`,
    `function_type`, `optimization_hints`, `assume_predicate`, `dictionary`,
    `di_attr`, `bytecode_test_value` (the test-only `#cuda_tile.bytecode_test_value<N>`),
    or `enum:<mnemonic>` for the enums of `compiler.ir.enums` (and the test-only
    `enum:bytecode_test_priority` of `compiler.dialect.ops.TESTING_ENUMS`).
    `default` is the value, as the assembly spells it, that is omitted when printing.
    """

    name: str
    kind: str
    optional: bool = False
    default: str | None = None
    since: str = "13.1"
    doc: str = ""


@dataclass(frozen=True, slots=True)
class ResultDef:
    name: str
    constraint: str
    arity: Arity = "single"
    since: str = "13.1"
    doc: str = ""


@dataclass(frozen=True, slots=True)
class RegionDef:
    name: str
    doc: str = ""


# A type rule relates the types of named operands/results. Kinds:
#   ("same_type", (a, b, ...))     all have the same type (AllTypesMatch)
#   ("i1_same_shape", (src, dst))  dst is a tile of i1 with the shape of src
#   ("same_shape", (a, ...)), ("same_rank", (a, ...)), ("same_element_type", (a, ...))
#   ("same_operands_and_result_shape", ()), ("same_operands_shape", ())
#   ("same_operands_and_result_element_type", ())  the native SameOperandsAndResultElementType trait
#   ("pointer_tile_of", (ptr, value))  ptr is a tile of pointers to value's element type,
#                                      with value's shape (load_ptr_tko / store_ptr_tko)
# A rule may name an optional operand; it then applies only when the operand is present
# ("same_type" rules never do, since the parser infers unprinted types from them). A name
# may also be a typed attribute (`constant`'s `value`), meaning the attribute's type.
# An optional third element is ODS's wording of the rule (TypesMatchWith's description).
TypeRule = tuple[str, tuple[str, ...]] | tuple[str, tuple[str, ...], str]


@dataclass(frozen=True, slots=True)
class OpDef:
    mnemonic: str
    opcode: int | None
    since: str
    summary: str
    operands: tuple[OperandDef, ...] = ()
    attributes: tuple[AttrDef, ...] = ()
    results: tuple[ResultDef, ...] = ()
    regions: tuple[RegionDef, ...] = ()
    # The declarative assembly format (MLIR syntax), or None when the op's syntax is
    # written by hand in `compiler.text.custom_ops`.
    assembly: str | None = None
    traits: frozenset[str] = frozenset()
    type_rules: tuple[TypeRule, ...] = ()
    group: str = "core"
    dialect: str = "cuda_tile"
    description: str = ""
    examples: tuple[str, ...] = field(default=())

    @property
    def name(self) -> str:
        return f"{self.dialect}.{self.mnemonic}"

    @property
    def has_segments(self) -> bool:
        """True when operands are not all `single`, so group sizes must be recorded."""
        return any(o.arity != "single" for o in self.operands)

    def attribute(self, name: str) -> AttrDef | None:
        for a in self.attributes:
            if a.name == name:
                return a
        return None

    def operand_index(self, name: str) -> int:
        for i, o in enumerate(self.operands):
            if o.name == name:
                return i
        raise KeyError(f"{self.name} has no operand {name!r}")

    def operand_range(self, name: str, segments: tuple[int, ...] | None) -> tuple[int, int]:
        """(start, length) of the named operand group in the flat operand list."""
        index = self.operand_index(name)
        if segments is None:
            return index, 1
        return sum(segments[:index]), segments[index]

    def result_range(self, name: str, num_results: int) -> tuple[int, int]:
        """(start, length) of the named result group; at most one result group is variadic."""
        fixed = sum(1 for r in self.results if r.arity == "single")
        variadic_len = max(num_results - fixed, 0)
        start = 0
        for r in self.results:
            length = 1 if r.arity == "single" else variadic_len
            if r.name == name:
                return start, length
            start += length
        raise KeyError(f"{self.name} has no result {name!r}")
