"""Tokens of Tile IR text (MLIR's lexical structure).

The lexer is pull-based: the parser asks for the token at a position, which lets it
re-read raw text where MLIR's grammar is not token-shaped (dimension lists such as
`4x8xf32`). One compiled regex does the work; comments are collected on the side
so the formatter can put them back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir.core import Comment
from ..ir.source import Span

# Token kinds.
EOF = "eof"
VALUE = "value"  # %name
SYMBOL = "symbol"  # @name or @"name"
CARET = "caret"  # ^bb0
HASH = "hash"  # #alias or #dialect.attr
BANG = "bang"  # !alias or !dialect.type
IDENT = "ident"  # bare identifier / keyword
INT = "int"
FLOAT = "float"
STRING = "string"
PUNCT = "punct"
ERROR = "error"

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f\v]+)
  | (?P<comment>//[^\n]*)
  | (?P<value>%(?:[A-Za-z_$.\-][\w$.\-]*|\d+))
  | (?P<symbol>@(?:[A-Za-z_$.\-][\w$.\-]*|"(?:[^"\\\n]|\\.)*"))
  | (?P<caret>\^[\w$.\-]+)
  | (?P<hash>\#[A-Za-z_$.\-][\w$.\-]*)
  | (?P<bang>![A-Za-z_$.\-][\w$.\-]*)
  | (?P<float>[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?)
  | (?P<int>0x[0-9A-Fa-f]+|[0-9]+)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<ident>[A-Za-z_][\w$.]*)
  | (?P<punct>->|::|[()\[\]{}<>,:=?*+\-|])
  | (?P<badstring>"[^\n]*)
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(slots=True)
class Token:
    kind: str
    text: str
    start: int
    end: int

    @property
    def span(self) -> Span:
        return Span(self.start, self.end)

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.start})"


class Lexer:
    """Produces tokens on demand from `text`, recording comments once each."""

    __slots__ = ("text", "comments", "_seen_comment_end", "_match")

    def __init__(self, text: str) -> None:
        self.text = text
        self.comments: list[Comment] = []
        self._seen_comment_end = 0
        self._match = _TOKEN_RE.match

    def token_at(self, pos: int) -> Token:
        text = self.text
        n = len(text)
        match = self._match
        while pos < n:
            m = match(text, pos)
            kind = m.lastgroup
            end = m.end()
            if kind == "ws":
                pos = end
                continue
            if kind == "comment":
                if pos >= self._seen_comment_end:
                    self.comments.append(Comment(m.group(), Span(pos, end)))
                    self._seen_comment_end = end
                pos = end
                continue
            if kind == "badstring" or kind == "bad":
                return Token(ERROR, m.group(), pos, end)
            return Token(kind, m.group(), pos, end)  # type: ignore[arg-type]
        return Token(EOF, "", n, n)


def int_literal(text: str) -> int:
    """The value of an INT token: hexadecimal after `0x`, else decimal — leading zeros
    included (`007` is 7, as in MLIR; Python's int(text, 0) refuses it)."""
    if text[:2] in ("0x", "0X"):
        return int(text[2:], 16)
    if len(text) > 400:  # longer than any type's value: floats.decimal_value's stand-in
        from ..ir.floats import decimal_value

        return decimal_value(text)
    return int(text, 10)


def unescape_string(literal: str) -> str:
    """The value of a string literal token (MLIR escapes: \\n \\t \\" \\\\ and \\XX hex)."""
    body = literal[1:-1]
    if "\\" not in body:
        return body
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in ('"', "\\"):
            out += nxt.encode()
            i += 2
        elif nxt == "n":
            out += b"\n"
            i += 2
        elif nxt == "t":
            out += b"\t"
            i += 2
        elif re.fullmatch(r"[0-9A-Fa-f]{2}", body[i + 1 : i + 3]):
            out.append(int(body[i + 1 : i + 3], 16))
            i += 3
        else:
            out += nxt.encode()
            i += 2
    return out.decode("utf-8", errors="replace")
