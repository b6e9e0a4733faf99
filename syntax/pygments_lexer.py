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

__all__ = ["TileIRLexer"]

# Element types of the dialect (spec section 5.1) plus the MLIR builtin ones that appear in
# attributes (`index`, `none`).
_ELEMENT_TYPES = (
    "i1", "i8", "i16", "i32", "i64",
    "f16", "bf16", "f32", "tf32", "f64",
    "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN", "f6E2M3FN", "f6E3M2FN",
    "index", "none",
)  # fmt: skip

# Type constructors: `tile<...>`, `ptr<...>`, `tensor_view<...>`, `partition_view<...>`, `token`.
_TYPE_NAMES = ("tile", "ptr", "tensor_view", "partition_view", "strided_view", "token")

# Structural keywords and the words that appear inside custom assembly formats.
_KEYWORDS = (
    "module", "entry", "global", "attributes", "optimization_hints", "loc",
    "in", "to", "step", "iter_values", "else", "unsigned", "signed",
    "private", "public", "constant", "alignment",
    "shape", "strides", "padding_value", "dim_map", "dim", "identities", "token",
    "weak", "relaxed", "acquire", "release", "acq_rel", "device", "sys", "tl_blk",
    "rounding", "flush_to_zero", "propagate_nan", "approx", "full", "nearest_even",
    "zero", "negative_zero", "nan", "pos_inf", "neg_inf", "bounded", "div_by", "same_elements",
    "overflow", "no_signed_wrap", "no_unsigned_wrap", "reverse",
    "equal", "not_equal", "less_than", "less_than_or_equal", "greater_than",
    "greater_than_or_equal", "ordered", "unordered",
    "true", "false", "unit", "dense", "array",
)  # fmt: skip

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
                r"^([ \t]*)(%[^=\n]*?)(=)([ \t]*)((?:cuda_tile\.)?[a-z_][a-z0-9_]*)\b",
                bygroups(Whitespace, using(this), Operator, Whitespace, Name.Builtin),
            ),
            (
                r"^([ \t]*)((?:cuda_tile\.)?(?:module|entry|global|else))\b",
                bygroups(Whitespace, Keyword),
            ),
            (
                r"^([ \t]*)((?:cuda_tile\.)?[a-z_][a-z0-9_]*)\b(?![<:=(])",
                bygroups(Whitespace, Name.Builtin),
            ),
            (r"[ \t\r\f]+", Whitespace),
            # Values, symbols, blocks, attribute and type aliases.
            (r"%" + _SUFFIX_ID + r"(?:#[0-9]+)?", Name.Variable),
            (r'@(?:"(?:[^"\\]|\\.)*"|' + _BARE_ID + ")", Name.Function),
            (r"\^" + _SUFFIX_ID, Name.Label),
            (r"#" + _BARE_ID, Name.Attribute),
            (r"!" + _BARE_ID, Keyword.Type),
            (r"0x[0-9A-Fa-f]+", Number.Hex),
            # Shapes inside types: `128x32xf16`, `?x?xf32`.
            (r"([0-9]+|\?)(x)(?=[0-9?A-Za-z])", bygroups(Number.Integer, Operator)),
            (words(_TYPE_NAMES, suffix=r"\b"), Keyword.Type),
            (words(_ELEMENT_TYPES, suffix=r"\b"), Keyword.Type),
            (words(_KEYWORDS, suffix=r"\b"), Keyword),
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
