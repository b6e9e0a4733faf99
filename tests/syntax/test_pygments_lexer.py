"""The pygments lexer: registered as an entry point, lossless, and sensible on real files."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
from pygments import lex
from pygments.lexers import get_lexer_by_name
from pygments.token import Comment, Error, Keyword, Name, Number, String, Text

from syntax.pygments_lexer import TileIRLexer
from tests.corpus import conformance_files, example_files, read, sample_files

# ruff: noqa: E501 - the snippet's lines are as long as real Tile IR lines

SNIPPET = """// a comment
cuda_tile.module @kernels {
  entry @k(%arg0: tile<ptr<f32>>) optimization_hints=<sm_100 = {num_cta_in_cga = 2}> {
    %c = constant <f32: 1.5e+00> : tile<128x32xf32>
    %t, %tok = load_view_tko weak %pv[%i] token = %0 : partition_view<tile=(1024), tensor_view<?xf32, strides=[?]>>, tile<i32> -> tile<1024xf32>, token
    %r = reduce %t dim=0 identities=[0xFF800000 : f32] : tile<1024xf32> -> tile<f32>
    %g = "cuda_tile.addf"(%c, %c) : (!cuda_tile.tile<f32>, !cuda_tile.tile<f32>) -> !cuda_tile.tile<f32>
    print_tko "hello %f", %c : tile<f32> -> token
    return
  }
}
"""


def tokens(text: str) -> list[tuple[object, str]]:
    return list(lex(text, TileIRLexer(stripnl=False, ensurenl=False)))


def values(text: str, ttype: object) -> list[str]:
    return [v for t, v in tokens(text) if t in ttype]  # type: ignore[operator]


def test_registered_as_entry_point() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="pygments.lexers")}
    if "tileir" not in names:
        pytest.skip("tileir-tools is not installed (pip install -e .): no entry point")
    assert names["tileir"] == "syntax.pygments_lexer:TileIRLexer"
    assert isinstance(get_lexer_by_name("tileir"), TileIRLexer)


def test_snippet_tokens() -> None:
    assert values(SNIPPET, Comment) == ["// a comment"]
    ops = values(SNIPPET, Name.Builtin)
    assert ops == ["constant", "load_view_tko", "reduce", "print_tko", "return"]
    assert "%arg0" in values(SNIPPET, Name.Variable)
    assert "@kernels" in values(SNIPPET, Name.Function) and "@k" in values(SNIPPET, Name.Function)
    types = values(SNIPPET, Keyword.Type)
    for t in ("tile", "ptr", "f32", "partition_view", "tensor_view", "!cuda_tile.tile", "token"):
        assert t in types, t
    assert "0xFF800000" in values(SNIPPET, Number.Hex)
    assert "1.5e+00" in values(SNIPPET, Number.Float)
    assert {"128", "32"} <= set(values(SNIPPET, Number.Integer))
    assert '"cuda_tile.addf"' in values(SNIPPET, String)
    assert {"weak", "token", "dim", "identities", "optimization_hints"} <= set(values(SNIPPET, Keyword))


def test_block_labels_and_attribute_aliases() -> None:
    text = '^bb0(%a: tile<i32>):\n#loc = loc("k.py":1:2)\n// -----\n'
    assert "^bb0" in values(text, Name.Label)
    assert "#loc" in values(text, Name.Attribute)
    assert "// -----" in values(text, Comment.Special)


def _all_files() -> list[Path]:
    return example_files() + sample_files() + conformance_files()


@pytest.mark.parametrize("path", _all_files(), ids=lambda p: p.name)
def test_real_files_lex_losslessly_without_errors(path: Path) -> None:
    text = read(path)
    toks = tokens(text)
    assert "".join(v for _, v in toks) == text
    bad = [v for t, v in toks if (t in Error or t is Text) and v.strip()]
    assert not bad, bad[:10]
