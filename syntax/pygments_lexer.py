"""A pygments lexer for CUDA Tile IR text (`.tileir`, and the `cuda_tile` dialect in `.mlir`).

Registered as the `tileir` entry point of `pygments.lexers`, so after `pip install -e .`:

    pygmentize -l tileir examples/vector_add.tileir

It is a plain regex lexer and imports nothing from `compiler/`: highlighting must be fast and
must work on broken text.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, this, using, words
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

from .keywords import CONSTANTS, ELEMENT_TYPES, KEYWORDS, TYPE_CONSTRUCTORS

__all__ = ["TileIRLexer"]

# The words come from the op table and enums, through the generated `keywords` module (see
# `syntax/generate.py`), so this lexer and the TextMate grammar cannot disagree on them.
# Op names: found by position (after `=`, or first on a line), as the parser does, so an op
# added to the table is highlighted before the lists are regenerated.
_OP_NAME = r"((?:cuda_tile\.)?[a-z_][a-z0-9_]*(?:\$[a-z_][a-z0-9_]*)?)"
# A word must not continue a name (`my_f32`), except that a type may follow a shape's
# `x` (`4xf32`); the grammar uses the same lookbehinds.
_WORD_START = r"(?<![\w$.])"
_SHAPED_START = r"(?:(?<![\w$.])|(?<=[0-9?]x))"

_BARE_ID = r"[A-Za-z_][\w$.]*"
_SUFFIX_ID = r"(?:[0-9]+|[A-Za-z_$.\-][\w$.\-]*)"


class TileIRLexer(RegexLexer):
    """Lexer for CUDA Tile IR assembly (the `cuda_tile` MLIR dialect)."""

    name = "Tile IR"
    aliases = ["tileir", "tile-ir", "cuda-tile"]
    filenames = ["*.tileir"]
    mimetypes = ["text/x-tileir"]
    url = "https://docs.nvidia.com/cuda/tile-ir/"

    tokens = {
        "root": [
            (r"\n", Whitespace),
            # The split marker of `--split-input-file` is a comment, but a special one.
            (r"//[ \t]*-----[ \t]*$", Comment.Special),
            (r"//.*?$", Comment.Single),
            (r'"(?:[^"\\]|\\.)*"', String.Double),
            # Top-level and structural keywords that start a line.
            (r"(cuda_tile)(\.)(module)\b", bygroups(Name.Namespace, Punctuation, Keyword)),
            (
                r"^([ \t]*)((?:cuda_tile\.)?testing)(\$)(func)\b",
                bygroups(Whitespace, Name.Namespace, Punctuation, Keyword),
            ),
            # An op name: after the results and `=`, or first on its line (an op with no results).
            (
                r"^([ \t]*)(%[^=\n]*?)(=)([ \t]*)" + _OP_NAME + r"\b",
                bygroups(Whitespace, using(this), Operator, Whitespace, Name.Builtin),
            ),
            (
                r"^([ \t]*)((?:cuda_tile\.)?(?:module|entry|global|else))\b",
                bygroups(Whitespace, Keyword),
            ),
            (
                r"^([ \t]*)" + _OP_NAME + r"\b(?![<:=(])",
                bygroups(Whitespace, Name.Builtin),
            ),
            (r"[ \t\r\f]+", Whitespace),
            # Values, symbols, blocks, attribute and type aliases.
            (r"%" + _SUFFIX_ID + r"(?:#[0-9]+)?", Name.Variable),
            (r'@(?:"(?:[^"\\]|\\.)*"|' + _BARE_ID + ")", Name.Function),
            (r"\^" + _SUFFIX_ID, Name.Label),
            (r"#" + _BARE_ID, Name.Attribute),
            (r"!" + _BARE_ID, Keyword.Type),
            # Not followed by a shape's `x`: in `tile<0x2xf32>` the 0 is an extent.
            (r"0x[0-9A-Fa-f]+(?![\w$.])", Number.Hex),
            # Shapes inside types: `128x32xf16`, `?x?xf32`, `8x!cuda_tile.ptr<f32>`.
            (r"(-?[0-9]+|\?)(x)(?=[0-9?A-Za-z!\-])", bygroups(Number.Integer, Operator)),
            (words(TYPE_CONSTRUCTORS, prefix=_SHAPED_START, suffix=r"\b"), Keyword.Type),
            (words(ELEMENT_TYPES, prefix=_SHAPED_START, suffix=r"\b"), Keyword.Type),
            (words(CONSTANTS, prefix=_WORD_START, suffix=r"\b"), Keyword.Constant),
            (words(KEYWORDS, prefix=_WORD_START, suffix=r"\b"), Keyword),
            # Numbers.
            (r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?", Number.Float),
            (r"[-+]?[0-9]+[eE][-+]?[0-9]+", Number.Float),
            (r"[-+]?[0-9]+", Number.Integer),
            # Everything else.
            (_BARE_ID, Name),
            (r"->|::|[=:?*+\-]", Operator),
            (r"[{}()\[\]<>,.$]", Punctuation),
            (r".", Text),
        ],
    }
