"""The enumerations of the cuda_tile dialect.

Each enum is declared once: its attribute mnemonic (as in `#cuda_tile.rounding<zero>`),
its cases with the keyword the assembly uses, the integer the bytecode stores,
the version that introduced the case, and a one-line meaning in our words.
"""

from __future__ import annotations

from .frozen import Frozen, _set


class EnumCase(Frozen):
    __slots__ = ("keyword", "value", "since", "doc")
    keyword: str
    value: int
    since: str
    doc: str

    def __init__(self, keyword: str, value: int, since: str, doc: str) -> None:
        _set(self, "keyword", keyword)
        _set(self, "value", value)
        _set(self, "since", since)
        _set(self, "doc", doc)


class EnumDef(Frozen):
    __slots__ = ("name", "mnemonic", "since", "cases", "doc", "angle", "int_storage")
    name: str  # Python-side name, e.g. "RoundingMode"
    mnemonic: str  # attribute mnemonic, e.g. "rounding"
    since: str
    cases: tuple[EnumCase, ...]
    doc: str
    # Inside an op's assembly the value is written `<keyword>` (enum attributes with
    # their own `<$value>` syntax) rather than as a bare keyword.
    angle: bool
    # The generic form stores it as a plain `N : i32` (an I32EnumAttr with no
    # attribute of its own) rather than as `#cuda_tile.<mnemonic><keyword>`.
    int_storage: bool

    def __init__(
        self,
        name: str,
        mnemonic: str,
        since: str,
        cases: tuple[EnumCase, ...],
        doc: str,
        angle: bool = False,
        int_storage: bool = False,
    ) -> None:
        _set(self, "name", name)
        _set(self, "mnemonic", mnemonic)
        _set(self, "since", since)
        _set(self, "cases", cases)
        _set(self, "doc", doc)
        _set(self, "angle", angle)
        _set(self, "int_storage", int_storage)

    def by_keyword(self, keyword: str) -> EnumCase | None:
        for case in self.cases:
            if case.keyword == keyword:
                return case
        return None

    def by_value(self, value: int) -> EnumCase | None:
        for case in self.cases:
            if case.value == value:
                return case
        return None

    @property
    def keywords(self) -> tuple[str, ...]:
        return tuple(c.keyword for c in self.cases)


def _enum(
    name: str,
    mnemonic: str,
    doc: str,
    *cases: tuple[str, int, str, str] | tuple[str, int, str],
    angle: bool = False,
    int_storage: bool = False,
) -> EnumDef:
    built = []
    for case in cases:
        kw, value, case_doc = case[0], case[1], case[2]
        since = case[3] if len(case) > 3 else "13.1"
        built.append(EnumCase(kw, value, since, case_doc))
    return EnumDef(name, mnemonic, "13.1", tuple(built), doc, angle, int_storage)


SIGNEDNESS = _enum(
    "Signedness",
    "signedness",
    "How integer operands are interpreted.",
    ("unsigned", 0, "operands are unsigned integers"),
    ("signed", 1, "operands are two's-complement signed integers"),
    angle=True,
)

INTEGER_OVERFLOW = _enum(
    "IntegerOverflow",
    "overflow",
    "What the compiler may assume about integer overflow.",
    ("none", 0, "no assumption; results wrap around"),
    ("no_signed_wrap", 1, "signed overflow does not happen"),
    ("no_unsigned_wrap", 2, "unsigned overflow does not happen"),
    ("no_wrap", 3, "neither signed nor unsigned overflow happens"),
    angle=True,
)

ROUNDING_MODE = _enum(
    "RoundingMode",
    "rounding",
    "How a floating-point result is rounded.",
    ("nearest_even", 0, "round to nearest, ties to even (IEEE default)"),
    ("zero", 1, "round toward zero"),
    ("negative_inf", 2, "round toward negative infinity"),
    ("positive_inf", 3, "round toward positive infinity"),
    ("approx", 4, "a fast approximation"),
    ("full", 5, "full precision"),
    ("nearest_int_to_zero", 6, "round toward zero to an integral value"),
    ("nearest_away", 7, "round to nearest, ties away from zero", "13.4"),
    angle=True,
)

COMPARISON_ORDERING = _enum(
    "ComparisonOrdering",
    "comparison_ordering",
    "How a float comparison treats NaN.",
    ("unordered", 0, "true if either operand is NaN"),
    ("ordered", 1, "false if either operand is NaN"),
    angle=True,
)

COMPARISON_PREDICATE = _enum(
    "ComparisonPredicate",
    "comparison_predicate",
    "The relation a comparison tests.",
    ("equal", 0, "a == b"),
    ("not_equal", 1, "a != b"),
    ("less_than", 2, "a < b"),
    ("less_than_or_equal", 3, "a <= b"),
    ("greater_than", 4, "a > b"),
    ("greater_than_or_equal", 5, "a >= b"),
    angle=True,
)

ATOMIC_RMW_MODE = _enum(
    "AtomicRMWMode",
    "atomic_rmw_mode",
    "The read-modify-write an atomic performs.",
    ("and", 0, "bitwise and"),
    ("or", 1, "bitwise or"),
    ("xor", 2, "bitwise exclusive or"),
    ("add", 3, "integer addition"),
    ("addf", 4, "floating-point addition"),
    ("max", 5, "signed maximum"),
    ("min", 6, "signed minimum"),
    ("umax", 7, "unsigned maximum"),
    ("umin", 8, "unsigned minimum"),
    ("xchg", 9, "exchange: store the new value, return the old"),
    int_storage=True,
)

MEMORY_SCOPE = _enum(
    "MemoryScope",
    "memory_scope",
    "Which threads may access the location concurrently.",
    ("tl_blk", 0, "threads of the same tile block"),
    ("device", 1, "threads anywhere on the same GPU"),
    ("sys", 2, "threads anywhere in the system, all devices and the host"),
    int_storage=True,
)

MEMORY_ORDERING = _enum(
    "MemoryOrderingSemantics",
    "memory_ordering_semantics",
    "The ordering a memory access takes part in.",
    ("weak", 0, "no concurrent access to the location"),
    ("relaxed", 1, "concurrent access allowed, no happens-before established"),
    ("acquire", 2, "observing a release establishes happens-before"),
    ("release", 3, "an acquire that observes this establishes happens-before"),
    ("acq_rel", 4, "both acquire and release"),
    int_storage=True,
)

PADDING_VALUE = _enum(
    "PaddingValue",
    "padding_value",
    "What a view load yields for elements outside the tensor.",
    ("zero", 0, "+0"),
    ("neg_zero", 1, "-0"),
    ("nan", 2, "a quiet NaN"),
    ("pos_inf", 3, "+infinity"),
    ("neg_inf", 4, "-infinity"),
)

SYMBOL_VISIBILITY = _enum(
    "SymbolVisibility",
    "symbol_visibility",
    "Whether a symbol is visible outside its module.",
    ("public", 0, "visible outside the module"),
    ("private", 1, "visible only inside the module"),
    angle=True,
)

ALL_ENUMS: tuple[EnumDef, ...] = (
    SIGNEDNESS,
    INTEGER_OVERFLOW,
    ROUNDING_MODE,
    COMPARISON_ORDERING,
    COMPARISON_PREDICATE,
    ATOMIC_RMW_MODE,
    MEMORY_SCOPE,
    MEMORY_ORDERING,
    PADDING_VALUE,
    SYMBOL_VISIBILITY,
)

ENUM_BY_MNEMONIC: dict[str, EnumDef] = {e.mnemonic: e for e in ALL_ENUMS}
