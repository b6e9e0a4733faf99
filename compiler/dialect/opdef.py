"""The schema of the op table.

Each op of the dialect is declared once as an `OpDef` (see `ops.py`): its operands,
attributes, results and regions in definition order (the order the bytecode uses),
its declarative assembly format, traits, type rules, the version that introduced
it, and a one-paragraph description. The parser, printer, verifier, bytecode,
hovers and completion all read this table.
"""

from __future__ import annotations

from ..ir.frozen import Frozen, _set

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from typing import Literal

    Arity = Literal["single", "optional", "variadic"]


class _ValueDef(Frozen):
    """What an operand and a result definition both are."""

    __slots__ = ("name", "constraint", "arity", "since", "doc")
    name: str
    constraint: str  # a key of `compiler.dialect.constraints.TYPE_CONSTRAINTS`
    arity: Arity
    since: str
    doc: str

    def __init__(self, name: str, constraint: str, arity: Arity = "single", since: str = "13.1", doc: str = "") -> None:
        _set(self, "name", name)
        _set(self, "constraint", constraint)
        _set(self, "arity", arity)
        _set(self, "since", since)
        _set(self, "doc", doc)


class AttrDef(Frozen):
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

    __slots__ = ("name", "kind", "optional", "default", "since", "doc")
    name: str
    kind: str
    optional: bool
    default: str | None
    since: str
    doc: str

    def __init__(
        self,
        name: str,
        kind: str,
        optional: bool = False,
        default: str | None = None,
        since: str = "13.1",
        doc: str = "",
    ) -> None:
        _set(self, "name", name)
        _set(self, "kind", kind)
        _set(self, "optional", optional)
        _set(self, "default", default)
        _set(self, "since", since)
        _set(self, "doc", doc)


class OperandDef(_ValueDef):
    __slots__ = ()


class ResultDef(_ValueDef):
    __slots__ = ()


class RegionDef(Frozen):
    __slots__ = ("name", "doc")
    name: str
    doc: str

    def __init__(self, name: str, doc: str = "") -> None:
        _set(self, "name", name)
        _set(self, "doc", doc)


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

_OPDEF_FIELDS = (
    "mnemonic",
    "opcode",
    "since",
    "summary",
    "operands",
    "attributes",
    "results",
    "regions",
    "assembly",
    "traits",
    "type_rules",
    "group",
    "dialect",
    "description",
    "examples",
)


class OpDef(Frozen):
    """One op of the table. Each op has exactly one `OpDef`, so two are equal only when they
    are the same object (which also makes them cheap dictionary keys). The lookups the
    parser, printer, verifier and bytecode make for every op (`name`, `attribute`,
    `operand_index`, `has_segments`, `result_range`) are answered from tables built once."""

    __slots__ = (
        *_OPDEF_FIELDS,
        "name",  # derived: `dialect.mnemonic`
        "has_segments",  # derived: operands are not all `single`, so group sizes must be recorded
        "_attributes_by_name",
        "_operand_indices",
        "_fixed_results",
        "_result_slots",
        "_plans",
    )
    mnemonic: str
    opcode: int | None
    since: str
    summary: str
    operands: tuple[OperandDef, ...]
    attributes: tuple[AttrDef, ...]
    results: tuple[ResultDef, ...]
    regions: tuple[RegionDef, ...]
    # The declarative assembly format (MLIR syntax), or None when the op's syntax is
    # written by hand in `compiler.text.custom_ops`.
    assembly: str | None
    traits: frozenset[str]
    type_rules: tuple[TypeRule, ...]
    group: str
    dialect: str
    description: str
    examples: tuple[str, ...]
    name: str
    has_segments: bool

    def __init__(
        self,
        mnemonic: str,
        opcode: int | None,
        since: str,
        summary: str,
        operands: tuple[OperandDef, ...] = (),
        attributes: tuple[AttrDef, ...] = (),
        results: tuple[ResultDef, ...] = (),
        regions: tuple[RegionDef, ...] = (),
        assembly: str | None = None,
        traits: frozenset[str] = frozenset(),
        type_rules: tuple[TypeRule, ...] = (),
        group: str = "core",
        dialect: str = "cuda_tile",
        description: str = "",
        examples: tuple[str, ...] = (),
    ) -> None:
        _set(self, "mnemonic", mnemonic)
        _set(self, "opcode", opcode)
        _set(self, "since", since)
        _set(self, "summary", summary)
        _set(self, "operands", operands)
        _set(self, "attributes", attributes)
        _set(self, "results", results)
        _set(self, "regions", regions)
        _set(self, "assembly", assembly)
        _set(self, "traits", traits)
        _set(self, "type_rules", type_rules)
        _set(self, "group", group)
        _set(self, "dialect", dialect)
        _set(self, "description", description)
        _set(self, "examples", examples)
        _set(self, "name", f"{dialect}.{mnemonic}")
        _set(self, "has_segments", any(o.arity != "single" for o in operands))
        by_name: dict[str, AttrDef] = {}
        for a in attributes:
            by_name.setdefault(a.name, a)
        _set(self, "_attributes_by_name", by_name)
        indices: dict[str, int] = {}
        for i, o in enumerate(operands):
            indices.setdefault(o.name, i)
        _set(self, "_operand_indices", indices)
        _set(self, "_fixed_results", sum(1 for r in results if r.arity == "single"))
        _set(self, "_result_slots", tuple((r.name, r.arity == "single") for r in results))
        # What `compiler.text.asmformat` compiles from `assembly`, built on first use.
        _set(self, "_plans", {})

    # Identity: every op has one OpDef (see the class docstring).
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"OpDef({self.name})"

    def attribute(self, name: str) -> AttrDef | None:
        return self._attributes_by_name.get(name)

    def operand_index(self, name: str) -> int:
        index = self._operand_indices.get(name)
        if index is None:
            raise KeyError(f"{self.name} has no operand {name!r}")
        return index

    def operand_range(self, name: str, segments: tuple[int, ...] | None) -> tuple[int, int]:
        """(start, length) of the named operand group in the flat operand list."""
        index = self.operand_index(name)
        if segments is None:
            return index, 1
        return sum(segments[:index]), segments[index]

    def result_range(self, name: str, num_results: int) -> tuple[int, int]:
        """(start, length) of the named result group; at most one result group is variadic."""
        variadic_len = max(num_results - self._fixed_results, 0)
        start = 0
        for result_name, single in self._result_slots:
            length = 1 if single else variadic_len
            if result_name == name:
                return start, length
            start += length
        raise KeyError(f"{self.name} has no result {name!r}")


OpDef._fields = _OPDEF_FIELDS  # the derived slots are not fields
