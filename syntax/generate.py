"""Generate the highlighters' word lists from the compiler's op table, types and enums.

    python -m syntax.generate           # rewrite syntax/keywords.py and the grammar's lists
    python -m syntax.generate --check   # exit 1 (naming the stale files) when they differ

Both highlighters take their words from here, so a new op, type or enum case cannot be
forgotten by one of them: `syntax/keywords.py` (read by the pygments lexer, which must not
import `compiler/` so that it stays fast and works in a bare pygments install) and the
`types`, `constants` and `keywords` rules of `syntax/tileir.tmLanguage.json`. The rest of
the grammar (comments, values, numbers, ops by position, punctuation) is written by hand.
tests/syntax checks that the committed files are what this module produces.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from compiler.dialect import OPS
from compiler.dialect.ops import TESTING_ENUMS
from compiler.ir.enums import ALL_ENUMS
from compiler.ir.types import SCALAR_TYPES
from compiler.text.completion import PARAMETRIC_TYPES, PLAIN_TYPES
from compiler.verify.hints import DEFAULT_KEY, HINTS_FOR_OP, KNOWN_ARCHS

HERE = Path(__file__).resolve().parent
GRAMMAR = HERE / "tileir.tmLanguage.json"
KEYWORDS_MODULE = HERE / "keywords.py"

# Words the table does not list, kept by hand. Each must occur as a string literal in the
# compiler's text parser (tests/syntax checks it), so none is invented here.
#
# Builtin MLIR types that appear in attributes and generic-form types.
EXTRA_ELEMENT_TYPES = ("index",)
# Builtin constants of MLIR attributes (`true`, `false`, `inf`). `seq_cst` is not a case of
# memory_ordering_semantics, but it is the memory order people reach for (the conformance
# tests write it to check the error): shown as an ordering word, the verifier says why not.
EXTRA_CONSTANTS = ("true", "false", "inf", "seq_cst")
# The words of the hand-written op syntaxes (`compiler/text/custom_ops.py`, the parser's
# types and attributes), which have no declarative format to read them from.
SYNTAX_WORDS = (
    # structure, loops and conditionals
    "module", "entry", "global", "attributes", "in", "to", "step", "iter_values",
    # views
    "shape", "strides", "traversal_strides", "padding_value", "sparse_dim", "dim_map",
    # assume predicates
    "div_by", "every", "along", "same_elements", "bounded",
    # builtin attributes (and the generic form's operand group sizes) and locations
    "operandSegmentSizes", "unit", "dense", "array", "loc", "unknown", "callsite", "at", "fused",
    # debug-info attribute parameters
    "file", "line", "column", "name", "linkageName", "compileUnit", "scopeLine", "scope",
)  # fmt: skip

_ASSEMBLY_LITERAL = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


def _unique(words: object) -> tuple[str, ...]:
    """The words in first-seen order, each once."""
    return tuple(dict.fromkeys(words))  # type: ignore[arg-type]


def word_lists() -> dict[str, tuple[str, ...]]:
    """The lists by class. A word belongs to one class only: type, then constant, then keyword
    (`token` is a type even where it names an operand; `zero` is a constant)."""
    ops = _unique(op.mnemonic for op in OPS.values())
    type_constructors = _unique((*PARAMETRIC_TYPES, *PLAIN_TYPES))
    element_types = _unique((*SCALAR_TYPES, *EXTRA_ELEMENT_TYPES))
    types = {*type_constructors, *element_types}
    enums = (*ALL_ENUMS, *TESTING_ENUMS.values())
    constants = _unique(w for w in (*(k for e in enums for k in e.keywords), *EXTRA_CONSTANTS) if w not in types)
    # The literal words of the declarative formats, the op attributes' names (the generic
    # form spells them out), the enums' mnemonics, the optimization hints and their targets.
    keywords = _unique(
        w
        for w in (
            *(m for op in OPS.values() if op.assembly for m in _ASSEMBLY_LITERAL.findall(op.assembly)),
            *(a.name for op in OPS.values() for a in op.attributes),
            *(e.mnemonic for e in enums),
            *SYNTAX_WORDS,
            *(hint for hints in HINTS_FOR_OP.values() for hint in hints),
            DEFAULT_KEY,
            *KNOWN_ARCHS,
        )
        if w not in types and w not in constants
    )
    return {
        "OPS": ops,
        "TYPE_CONSTRUCTORS": type_constructors,
        "ELEMENT_TYPES": element_types,
        "CONSTANTS": constants,
        "KEYWORDS": keywords,
    }


_DOCS = {
    "OPS": "Op mnemonics (no `cuda_tile.`): the highlighters find ops by position, tests use this list.",
    "TYPE_CONSTRUCTORS": "Types: `tile<...>`, `ptr<...>`, the views, `token`.",
    "ELEMENT_TYPES": "Element types (integers, floats) and builtin types used in attributes.",
    "CONSTANTS": "Enum cases (rounding modes, orderings, predicates, ...) and builtin constants.",
    "KEYWORDS": "Format keywords, attribute names, enum mnemonics, hint names and targets.",
}


def keywords_module(lists: dict[str, tuple[str, ...]]) -> str:
    lines = [
        '"""The words of Tile IR by class, for the highlighters.',
        "",
        "Generated by `python -m syntax.generate` from the op table and enums: do not edit.",
        '"""',
        "",
        "# fmt: off",
    ]
    for name, words in lists.items():
        lines += ["", f"# {_DOCS[name]}", f"{name}: tuple[str, ...] = ("]
        lines += [f"    {word!r}," for word in words]
        lines.append(")")
    return "\n".join(lines) + "\n"


def _alternation(words: tuple[str, ...]) -> str:
    """A regex matching exactly the words; longest first so no word stops at a prefix."""
    ordered = sorted(set(words), key=lambda w: (-len(w), w))
    return "(?:" + "|".join(re.escape(w) for w in ordered) + ")"


def grammar_text(lists: dict[str, tuple[str, ...]], current: str) -> str:
    """The grammar `current` with its generated rules replaced."""
    grammar = json.loads(current)
    # `\b` before an element type would fail after a shape's `x` (`4xf32`): the lookbehind
    # allows it there while keeping `xf32` or `f32x` from matching inside a longer name.
    word_start = r"(?<![\w$.])"
    shaped_start = r"(?:(?<![\w$.])|(?<=[0-9?]x))"
    grammar["repository"]["types"] = {
        "patterns": [
            {"name": "storage.type.tileir", "match": shaped_start + _alternation(lists["TYPE_CONSTRUCTORS"]) + r"\b"},
            {
                "name": "storage.type.primitive.tileir",
                "match": shaped_start + _alternation(lists["ELEMENT_TYPES"]) + r"\b",
            },
        ]
    }
    for rule, scope, words in (
        ("constants", "constant.language.tileir", lists["CONSTANTS"]),
        ("keywords", "keyword.other.tileir", lists["KEYWORDS"]),
    ):
        grammar["repository"][rule] = {"patterns": [{"name": scope, "match": word_start + _alternation(words) + r"\b"}]}
    return json.dumps(grammar, indent=2, ensure_ascii=False) + "\n"


def outputs() -> dict[Path, str]:
    """Each generated file and the text it must have."""
    lists = word_lists()
    return {
        KEYWORDS_MODULE: keywords_module(lists),
        GRAMMAR: grammar_text(lists, GRAMMAR.read_text(encoding="utf-8")),
    }


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    check = args == ["--check"]
    if args and not check:
        print("usage: python -m syntax.generate [--check]", file=sys.stderr)
        return 2
    wanted = outputs()
    stale = [path for path, text in wanted.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    if check:
        for path in stale:
            print(f"{path}: out of date with the op table; run `python -m syntax.generate`", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        _write_atomically(path, wanted[path])
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
