"""Every op, type and enum keyword of the compiler's tables is highlighted as such, by the
pygments lexer and by the TextMate grammar (under VS Code's engine, and under the Python
tokenizer of test_vscode_extension so that the check also runs without Node); the word lists
both use are exactly what `python -m syntax.generate` makes of the tables; and on every real
file (examples, samples, NVIDIA's conformance tests) no word of the tables is left plain."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from pygments.token import Error, Keyword, Name, Text

from compiler.dialect import OPS
from compiler.dialect.ops import TESTING_ENUMS
from compiler.ir.enums import ALL_ENUMS
from compiler.ir.types import SCALAR_TYPES
from compiler.text.completion import PARAMETRIC_TYPES, PLAIN_TYPES
from syntax import generate, keywords
from tests.corpus import REPO, conformance_files, example_files, read, sample_files
from tests.syntax.highlighters import (
    CONSTANT,
    KEYWORD,
    OP,
    TYPE,
    TokenClass,
    pygments_class_at,
    pygments_tokens,
    real_textmate,
)
from tests.syntax.test_vscode_extension import tokenizer

# --- the generated lists -------------------------------------------------------------------------


def test_committed_files_are_what_the_generator_makes() -> None:
    for path, text in generate.outputs().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run `python -m syntax.generate`"
    assert generate.main(["--check"]) == 0


def test_check_mode_names_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    stale = tmp_path / "tileir.tmLanguage.json"
    grammar = generate.GRAMMAR.read_text(encoding="utf-8")
    stale.write_text(grammar.replace('"seq_cst|', '"').replace("|seq_cst|", "|"), encoding="utf-8")
    assert stale.read_text(encoding="utf-8") != grammar  # the edit took
    monkeypatch.setattr(generate, "GRAMMAR", stale)
    assert generate.main(["--check"]) == 1
    assert "tileir.tmLanguage.json: out of date" in capsys.readouterr().err
    assert generate.main([]) == 0  # regenerates it
    assert stale.read_text(encoding="utf-8") == grammar


def test_lists_cover_the_tables() -> None:
    assert set(keywords.OPS) == {op.mnemonic for op in OPS.values()}
    assert {*PARAMETRIC_TYPES, *PLAIN_TYPES} <= set(keywords.TYPE_CONSTRUCTORS)
    assert set(SCALAR_TYPES) <= set(keywords.ELEMENT_TYPES)
    for gap in ("gather_scatter_view", "i4", "seq_cst"):  # the gaps issue 16 names
        assert gap in keywords.TYPE_CONSTRUCTORS + keywords.ELEMENT_TYPES + keywords.CONSTANTS, gap
    types = set(keywords.TYPE_CONSTRUCTORS) | set(keywords.ELEMENT_TYPES)
    for enum in (*ALL_ENUMS, *TESTING_ENUMS.values()):
        for word in enum.keywords:
            assert word in types or word in keywords.CONSTANTS, f"{enum.mnemonic}: {word}"
        assert enum.mnemonic in keywords.KEYWORDS


def test_each_word_has_one_class() -> None:
    lists = [keywords.TYPE_CONSTRUCTORS, keywords.ELEMENT_TYPES, keywords.CONSTANTS, keywords.KEYWORDS]
    seen: dict[str, int] = {}
    for index, words in enumerate(lists):
        assert len(set(words)) == len(words)
        for word in words:
            assert seen.setdefault(word, index) == index, word


def test_hand_kept_words_are_the_compilers() -> None:
    """The few words the tables lack must be ones the compiler's text code spells out."""
    paths = [*(REPO / "compiler" / "text").glob("*.py"), *(REPO / "compiler" / "ir").glob("*.py")]
    sources = "\n".join(path.read_text(encoding="utf-8") for path in paths)
    conformance = "\n".join(read(path) for path in conformance_files())
    for word in (*generate.SYNTAX_WORDS, *generate.EXTRA_ELEMENT_TYPES, *generate.EXTRA_CONSTANTS):
        if word == "seq_cst":  # not a valid ordering: the conformance tests write it
            if conformance:
                assert re.search(r"\bseq_cst\b", conformance)
            continue
        assert f'"{word}"' in sources, word


# --- every word of the tables, in context, in both highlighters ----------------------------------


@cache
def table_document() -> tuple[str, list[tuple[int, int, int, str, TokenClass]]]:
    """A document that uses every word where it belongs, and the (line, start, end, word, class)
    each occurrence must get."""
    lines: list[str] = []
    expected: list[tuple[int, int, int, str, TokenClass]] = []

    def add(line: str, *marks: tuple[str, TokenClass]) -> None:
        pos = 0
        for word, cls in marks:
            start = line.index(word, pos)
            expected.append((len(lines), start, start + len(word), word, cls))
            pos = start + len(word)
        lines.append(line)

    for op in keywords.OPS:
        add(f"  %r = {op} %a : tile<f32>", (op, OP))
        add(f"  %r:2 = cuda_tile.{op} %a", (f"cuda_tile.{op}", OP))
        if op not in ("module", "entry", "global", "testing$func"):  # these start a line as structure
            add(f"  {op} %a : tile<f32>", (op, OP))
    for name in keywords.ELEMENT_TYPES:
        add(f"  %r = bitcast %a : tile<4x{name}> -> {name}", (name, TYPE), (name, TYPE))
    for name in keywords.TYPE_CONSTRUCTORS:
        add(f"  %r = bitcast %a : {name}<f32> -> tile<2x{name}<f32>>", (name, TYPE), (name, TYPE))
    for word in keywords.CONSTANTS:
        add(f"  %r = atomic_rmw_tko {word} %a, {word}, %b rounding<{word}>", *[(word, CONSTANT)] * 3)
    for word in keywords.KEYWORDS:
        add(f"  %r = addf %a, %b {word} = 1 {{{word}}}", (word, KEYWORD), (word, KEYWORD))
    return "\n".join(lines) + "\n", expected


def _line_offsets(text: str) -> list[int]:
    offsets, pos = [], 0
    for line in text.split("\n"):
        offsets.append(pos)
        pos += len(line) + 1
    return offsets


def test_pygments_highlights_every_word_of_the_tables() -> None:
    text, expected = table_document()
    tokens, offsets = pygments_tokens(text), _line_offsets(text)
    wrong = []
    for line, start, end, word, cls in expected:
        got = pygments_class_at(tokens, offsets[line] + start, offsets[line] + end)
        if got is not cls.pygments:
            wrong.append(f"{word}: {got} (want {cls.what})")
    assert not wrong, wrong[:20]


def _textmate_mismatches(tokens_by_line: dict[int, list[tuple[int, int, list[str]]]]) -> list[str]:
    _, expected = table_document()
    wrong = []
    for line, start, end, word, cls in expected:
        found = [scopes for a, b, scopes in tokens_by_line[line] if (a, b) == (start, end)]
        if not found or not found[0][-1].startswith(cls.scope):
            wrong.append(f"{word}: {found[0] if found else 'split or merged'} (want {cls.scope})")
    return wrong


def test_textmate_engine_highlights_every_word_of_the_tables() -> None:
    text, _ = table_document()
    (tokens,) = real_textmate([text])
    by_line: dict[int, list[tuple[int, int, list[str]]]] = {}
    for line, start, end, scopes in tokens:
        by_line.setdefault(line, []).append((start, end, scopes))
    wrong = _textmate_mismatches(by_line)
    assert not wrong, wrong[:20]


def test_python_textmate_tokenizer_highlights_every_word_of_the_tables() -> None:
    """The same through test_vscode_extension's tokenizer, which needs no Node (so CI always
    checks the grammar's word lists)."""
    text, _ = table_document()
    by_line: dict[int, list[tuple[int, int, list[str]]]] = {}
    for n, line in enumerate(text.split("\n")):
        pos = 0
        for value, scopes in tokenizer()._line(line, []):
            by_line.setdefault(n, []).append((pos, pos + len(value), list(scopes) or ["source.tileir"]))
            pos += len(value)
    wrong = _textmate_mismatches(by_line)
    assert not wrong, wrong[:20]


# --- real files ----------------------------------------------------------------------------------

ALL_WORDS = {*keywords.TYPE_CONSTRUCTORS, *keywords.ELEMENT_TYPES, *keywords.CONSTANTS, *keywords.KEYWORDS}


def _corpus() -> list[Path]:
    return example_files() + sample_files() + conformance_files()


@pytest.mark.parametrize("path", _corpus(), ids=lambda path: path.name)
def test_pygments_leaves_no_table_word_plain(path: Path) -> None:
    text = read(path)
    plain = {text[a:b] for a, b, t in pygments_tokens(text) if t is Name or t is Text or t in Error}
    assert not (plain & ALL_WORDS), sorted(plain & ALL_WORDS)


def test_textmate_engine_on_real_files() -> None:
    """Every file tokenised by VS Code's engine: the tokens cover each line, every visible
    character has a scope of ours, and no word of the tables is left a plain name."""
    paths = _corpus()
    texts = [read(path) for path in paths]
    problems = []
    for path, text, tokens in zip(paths, texts, real_textmate(texts), strict=True):
        lines = text.split("\n")
        for line, start, end, scopes in tokens:
            value = lines[line][start:end]
            if len(scopes) == 1 and value.strip():
                problems.append(f"{path.name}:{line + 1}: {value!r} has no scope")
            if scopes[-1] == "variable.other.name.tileir" and value in ALL_WORDS:
                problems.append(f"{path.name}:{line + 1}: {value!r} is a plain name")
        covered = {}
        for line, start, end, _ in tokens:
            covered[line] = covered.get(line, 0) + (end - start)
        assert all(covered.get(n, 0) == len(line) for n, line in enumerate(lines)), path.name
    assert not problems, problems[:20]


def test_conformance_gaps_are_highlighted() -> None:
    """The words issue 16 found plain, where the conformance tests use them."""
    text = "\n".join(
        [
            "%0, %t = cuda_tile.atomic_rmw_tko seq_cst device %arg0, add, %arg1",
            "  testing$func @f(%arg0: !cuda_tile.tile<2x4x8xi4>) {",
            "  %g = make_gather_scatter_view %v : gather_scatter_view<tile=(4), tensor_view<8xf32>, sparse_dim=0>",
        ]
    )
    tokens, offsets = pygments_tokens(text), _line_offsets(text)
    gaps = ((0, "seq_cst", Keyword.Constant), (1, "i4", Keyword.Type), (2, "gather_scatter_view", Keyword.Type))
    for line, word, ttype in gaps:
        start = text.split("\n")[line].rindex(word)
        assert pygments_class_at(tokens, offsets[line] + start, offsets[line] + start + len(word)) is ttype, word
