"""Tokens of Tile IR text (MLIR's lexical structure).

The lexer is pull-based: the parser asks for the token at a position, which lets it
re-read raw text where MLIR's grammar is not token-shaped (dimension lists such as
`4x8xf32`). One compiled regex does the work, whitespace included; comments are
collected on the side so the formatter can put them back.

`Lexer` lexes one token per call. `TokenStream` (the parser's) lexes the rest of a line
at a time with one `findall` and answers the positions the parser asks for next (where
the previous token ended) from a table; any other position is lexed on demand.
"""

from __future__ import annotations

import re
import sys

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

# A string literal's body is written with possessive repeats around single-character
# classes: the alternation `(?:[^"\\]|\\.)*` made `re` keep a backtracking entry per
# character (about 120 bytes each: a 1 MB string attribute took hundreds of MB to lex).
_STRING_BODY = r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'

# Leading whitespace is part of every match, so one match gives one token (or comment);
# the token's own text is the group that matched. The alternatives start with different
# characters, except float before int and everything before error; the most frequent
# come first (each match costs less).
_TOKENS = (
    r"""(?P<ident>[A-Za-z_][\w$.]*)
    | (?P<punct>->|::|[()\[\]{}<>,:=?*+\-|])
    | (?P<value>%(?:[A-Za-z_$.\-][\w$.\-]*|\d+))
    | (?P<float>[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?)
    | (?P<int>0x[0-9A-Fa-f]+|[0-9]+)
    | (?P<comment>//[^\n]*)
    | (?P<symbol>@(?:[A-Za-z_$.\-][\w$.\-]*|"""
    + _STRING_BODY
    + r"""))
    | (?P<caret>\^[\w$.\-]+)
    | (?P<hash>\#[A-Za-z_$.\-][\w$.\-]*)
    | (?P<bang>![A-Za-z_$.\-][\w$.\-]*)
    | (?P<string>"""
    + _STRING_BODY
    + r""")
    | (?P<error>"[^\n]*|.)"""
)
_WHITESPACE = r"[ \t\r\n\f\v]*+"
_token_re: re.Pattern[str] | None = None  # `Lexer`'s, compiled on first use (the parser has its own)


def _lexer_pattern() -> tuple[re.Pattern[str], int, list[str]]:
    """`Lexer`'s pattern, the group number of comments, and the token kind of each group
    (the kind constants are the group names)."""
    global _token_re
    if _token_re is None:
        _token_re = re.compile(_WHITESPACE + "(?:" + _TOKENS + ")", re.VERBOSE | re.DOTALL)
    kinds = [""] * (_token_re.groups + 1)
    for name, index in _token_re.groupindex.items():
        kinds[index] = sys.intern(name)  # the very objects of the constants above
    return _token_re, _token_re.groupindex["comment"], kinds


# The cuda_tile types written `name<...>` (the parser reads each distinct one once: see
# `TokenStream.type_end`).
PARAMETRIC_TYPE_NAMES = frozenset(
    {"tile", "ptr", "token", "tensor_view", "partition_view", "strided_view", "gather_scatter_view"}
)
# Angle brackets (`->` is not one) and what ends a one-line type's search.
# (The lookbehind comes after the bracket, so that the search can skip to the next candidate
# character instead of trying the pattern at every position.)
_ANGLE_RE = re.compile(r"[<>](?<!-[<>])|[\n;{}]")

# `TokenStream`'s pattern, with groups (whitespace, token): the same tokens (`_TOKENS`)
# plus, first, a whole one-line parametric type nested at most three deep
# (`partition_view<tile=(8), tensor_view<ptr<f32>>>`), one match where its tokens would be a
# dozen. Inside it, `-<` and `->` are no brackets, as for `_ANGLE_RE`; no `"` or `/` (a
# string or comment there could hide or add a `>`), so that the type ends where a token ends.
_ANGLE_TEXT = r'(?:[^<>\n;{}\-"/]++|-[<>]?)'
_STREAM_RE = re.compile(
    r"([ \t\r\n\f\v]*+)((?:"
    + "|".join(sorted(PARAMETRIC_TYPE_NAMES, key=len, reverse=True))
    + r")<(?:"
    + _ANGLE_TEXT
    + r"|<(?:"
    + _ANGLE_TEXT
    + r"|<"
    + _ANGLE_TEXT
    + r"*+>)*+>)*+>|"
    + re.sub(r"\(\?P<\w+>", "(?:", _TOKENS)
    + ")",
    re.VERBOSE | re.DOTALL,
)
_STRING_RE = re.compile(_STRING_BODY, re.DOTALL)  # as in `_TOKENS` (`\\.` takes a line break too)
_SPACES_RE = re.compile(r"[ \t\r\n\f\v]*")
_LONGEST_WINDOW = 16384  # characters
_WINDOW_AHEAD = 2000  # characters after the token asked for, to the end of that line
_CUT_AFTER = " \t<>()[]{},=?*+|"  # each is a whole token (or a space), none starts a longer one
# A token's kind by its first character (refined in `TokenStream._fill`).
_KIND_OF_FIRST: dict[str, str] = {
    **dict.fromkeys("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_", IDENT),
    **dict.fromkeys("0123456789", INT),
    **dict.fromkeys("()[]{}<>,:=?*+-|", PUNCT),
    "%": VALUE,
    "@": SYMBOL,
    "^": CARET,
    "#": HASH,
    "!": BANG,
    '"': STRING,
    "/": "comment",
}


def _word_kind(word: str) -> str | None:
    """The kind of a token `_STREAM_RE` matched (None: a comment), as `Lexer` tells it.
    `TokenStream._fill` has the same rules inline."""
    kind = _KIND_OF_FIRST.get(word[0], ERROR)
    if kind is IDENT or kind is PUNCT:
        return kind
    if kind is INT:
        return FLOAT if "." in word else INT
    if kind is STRING:
        return STRING if _STRING_RE.fullmatch(word) is not None else ERROR
    if kind == "comment":
        return None if word[1:2] == "/" else ERROR
    return ERROR if len(word) == 1 else kind


class Token:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind: str, text: str, start: int, end: int) -> None:
        self.kind = kind
        self.text = text
        self.start = start
        self.end = end

    @property
    def span(self) -> Span:
        return Span(self.start, self.end)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Token:
            return NotImplemented
        return (self.kind, self.text, self.start, self.end) == (other.kind, other.text, other.start, other.end)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, {self.start})"


class Lexer:
    """Produces tokens on demand from `text`, recording comments once each."""

    __slots__ = ("text", "comments", "_seen_comment_end", "_match", "_comment_group", "_kinds")

    def __init__(self, text: str) -> None:
        self.text = text
        self.comments: list[Comment] = []
        self._seen_comment_end = 0
        pattern, self._comment_group, self._kinds = _lexer_pattern()
        self._match = pattern.match

    def token_at(self, pos: int) -> Token:
        text = self.text
        match = self._match
        comment_group = self._comment_group
        while True:
            m = match(text, pos)
            if m is None:  # only whitespace left
                n = len(text)
                return Token(EOF, "", n, n)
            group = m.lastindex
            end = m.end()
            if group == comment_group:
                start = m.start(group)
                if start >= self._seen_comment_end:
                    self.comments.append(Comment(m.group(group), Span(start, end)))
                    self._seen_comment_end = end
                pos = end
                continue
            return Token(self._kinds[group], m.group(group), m.start(group), end)  # type: ignore[index]


class TokenStream:
    """The parser's lexer: `token_at(pos)` like `Lexer`'s, from a window of tokens lexed
    ahead with one `findall`: the rest of the line and the lines in the next 2,000 characters
    (16 KB at most). Comments are
    recorded once each, in the order they are lexed (not necessarily the text's when the
    parser jumps ahead): `sorted_comments` gives them in order.

    A one-line cuda_tile type (`tile<4xf32>`, `partition_view<...>`) is lexed as its name,
    then the token after the type: kernels repeat the same few types many times, and the
    parser reads each distinct one once (its text is the key of a cache), so the tokens
    inside are lexed on demand, when the parser asks for them. `type_end` says where such
    a type ends."""

    __slots__ = ("text", "comments", "_starts", "at", "_type_ends", "_lo", "_hi", "_closes", "_analysed")

    # A window is a few dozen lines (more only when they hold no token): an item parsed on
    # its own (as the language server does) needs little, and each window costs a fixed
    # amount besides its tokens (a line at a time: 4 % more instructions to parse a module).

    def __init__(self, text: str) -> None:
        self.text = text
        self.comments: list[Comment] = []
        self._starts: set[int] = set()  # of the comments recorded
        # Position -> token, for each token of the window: where the one before it ended
        # (where the parser asks for the next token; the window's start for the first).
        self.at: dict[int, Token] = {}
        self._type_ends: dict[int, int] = {}
        self._lo = self._hi = 0  # the window covers positions [lo, hi)
        # `angle_close`'s memo: the end of each group opened in the range analysed last.
        self._closes: dict[int, int] = {}
        self._analysed = (0, 0)

    def token_at(self, pos: int) -> Token:
        tok = self.at.get(pos)
        if tok is not None:
            return tok
        if self._lo <= pos < self._hi:
            return self._one(pos)  # inside a token (`4x8xf32` re-read as dimensions)
        return self._fill(pos, _WINDOW_AHEAD)

    def type_end(self, start: int) -> int | None:
        """Where the parametric type whose name starts at `start` ends (`angle_close` of the
        `<` after the name), when the window knows."""
        return self._type_ends.get(start)

    def angle_close(self, pos: int) -> int | None:
        """Where the `<...>` group opening at `pos` ends (after its `>`), when it closes before
        the end of the line and before any `;`, `{` or `}`.

        The brackets of the rest of that stretch are matched in the same pass and
        remembered, so that asking again for any `<` in it is a lookup: a line of 80,000
        nested `tile<` costs one pass, not one per bracket."""
        lo, hi = self._analysed
        if lo <= pos < hi:
            return self._closes.get(pos)
        closes: dict[int, int] = {}
        stack: list[int] = []
        stop = len(self.text)
        for m in _ANGLE_RE.finditer(self.text, pos):
            ch = m.group()
            if ch == "<":
                stack.append(m.start())
            elif ch == ">":
                if stack:
                    closes[stack.pop()] = m.end()
            else:
                stop = m.start()
                break
        self._closes = closes
        self._analysed = (pos, max(stop, pos + 1))
        return closes.get(pos)

    def sorted_comments(self) -> list[Comment]:
        comments = self.comments
        comments.sort(key=lambda c: c.span.start)
        return comments

    def _one(self, pos: int) -> Token:
        """The token at `pos`, lexed on its own (a position inside the window's tokens)."""
        text = self.text
        while True:
            m = _STREAM_RE.match(text, pos)
            if m is None:
                n = len(text)
                return Token(EOF, "", n, n)
            space, word = m.groups()
            start = pos + len(space)
            end = start + len(word)
            kind = _word_kind(word)
            if kind is None:  # a comment
                if start not in self._starts:
                    self._starts.add(start)
                    self.comments.append(Comment(word, Span(start, end)))
                pos = end
                continue
            if kind is IDENT and word[-1] == ">":  # a whole type: its name is the token
                word = word[: word.index("<")]
                end = start + len(word)
            return Token(kind, word, start, end)

    def _fill(self, pos: int, more: int = 0, limit: int = _LONGEST_WINDOW) -> Token:
        """Lex the rest of the line of the token at `pos` (and of the lines in the `more`
        characters after it; at most `limit` characters); the first token.

        One `findall` scans the window (no Python step and no match object per token),
        giving each token with the whitespace before it; a token's kind follows from its
        first character, and its place from the lengths before it."""
        text = self.text
        n = len(text)
        # To the end of the line of the next token: no token spans a line break, but for one
        # escaped in a string (`\` before it).
        stop = text.find("\n", _SPACES_RE.match(text, pos).end() + more)  # type: ignore[union-attr]
        while stop > 0 and text[stop - 1] == "\\":
            stop = text.find("\n", stop + 1)
        stop = n if stop < 0 else stop + 1
        words = None
        if stop - pos > limit:
            # A very long line: part of it (a megabyte on one line is no reason for a megabyte
            # of tokens at once), cut after a character that is a whole token or a space, so
            # that only a string or comment running on can be cut short: the last token
            # (and the `@` of a quoted symbol name before it), which the next window lexes
            # again.
            cut = max(text.rfind(ch, pos, pos + limit) for ch in _CUT_AFTER) + 1
            if cut > pos:
                stop = cut
                words = _STREAM_RE.findall(text, pos, stop)
                if words:
                    words.pop()
                if words and words[-1][1] == "@":
                    words.pop()
        at: dict[int, Token] = {}
        type_ends: dict[int, int] = {}
        first = _KIND_OF_FIRST
        key = end = pos  # key: where the parser asks for the next token (the last one's end)
        for space, word in words if words is not None else _STREAM_RE.findall(text, pos, stop):
            start = end + len(space)
            end = start + len(word)
            kind = first.get(word[0], ERROR)
            if kind is IDENT:
                if word[-1] == ">":  # a whole parametric type (see `_STREAM_RE`)
                    name = word[: word.index("<")]
                    type_ends[start] = end
                    at[key] = Token(IDENT, name, start, start + len(name))
                    key = end
                    continue
            elif kind is INT:
                if "." in word:
                    kind = FLOAT
            elif kind is STRING:
                if _STRING_RE.fullmatch(word) is None:
                    kind = ERROR  # unterminated: the rest of the line
            elif kind == "comment":
                if word[1:2] == "/":
                    if start not in self._starts:
                        self._starts.add(start)
                        self.comments.append(Comment(word, Span(start, end)))
                    continue
                kind = ERROR
            elif kind is not PUNCT and len(word) == 1:
                kind = ERROR  # a sigil with no name after it
            at[key] = Token(kind, word, start, end)
            key = end
        if stop == n and words is None:
            at[key] = at[n] = Token(EOF, "", n, n)
            key = n + 1  # the window covers the end of the text
        self.at = at
        self._type_ends = type_ends
        self._lo = pos
        self._hi = key
        tok = at.get(pos)
        if tok is not None:
            return tok
        if words is not None:  # one token longer than the window (a long string): a longer one
            return self._fill(pos, more, limit * 4)
        return self._fill(pos, max(more * 4, 4096), limit)  # nothing but comments: more lines


def int_literal(text: str) -> int:
    """The value of an INT token: hexadecimal after `0x`, else decimal — leading zeros
    included (`007` is 7, as in MLIR; Python's int(text, 0) refuses it)."""
    if text[:2] in ("0x", "0X"):
        return int(text[2:], 16)
    if len(text) > 400:  # longer than any type's value: floats.decimal_value's stand-in
        from ..ir.floats import decimal_value

        return decimal_value(text)
    return int(text, 10)


# One escape, in the UTF-8 bytes of a literal's body: `\XX` (hex), or `\` and any byte
# (`\n`, `\t`, and the rest standing for themselves), or a `\` at the very end.
_ESCAPE_RE = re.compile(rb"\\(?:[0-9A-Fa-f]{2}|.|\Z)", re.DOTALL)
_UNESCAPED: dict[bytes, bytes] = {}  # escape -> the bytes it stands for, filled on first use


def _unescaped() -> dict[bytes, bytes]:
    if not _UNESCAPED:
        for b in range(256):
            _UNESCAPED[b"\\" + bytes([b])] = bytes([b])
        _UNESCAPED[b"\\n"] = b"\n"
        _UNESCAPED[b"\\t"] = b"\t"
        _UNESCAPED[b"\\"] = b""
        digits = "0123456789ABCDEFabcdef"
        for hi in digits:
            for lo in digits:
                _UNESCAPED[b"\\" + (hi + lo).encode()] = bytes([int(hi + lo, 16)])
    return _UNESCAPED


# MLIR's escapes: `\"`, `\\`, `\n`, `\t` and two hex digits; group 1 is any other.
_ESCAPE_CHECK_RE = re.compile(r'\\(?:["\\nt]|[0-9A-Fa-f]{2})|(\\)', re.DOTALL)


def bad_escape(literal: str) -> int | None:
    """The offset in a string literal token of its first escape MLIR does not know (its
    lexer: "unknown escape in string literal"), or None."""
    if "\\" not in literal:
        return None
    for m in _ESCAPE_CHECK_RE.finditer(literal, 1, len(literal) - 1):
        if m.group(1) is not None:
            return m.start()
    return None


def unescape_string(literal: str) -> str:
    """The value of a string literal token (MLIR escapes: \\n \\t \\" \\\\ and \\XX hex).
    Done on bytes with one substitution (a `\\XX` may be one byte of a UTF-8 sequence), so
    that a long literal costs no Python step per character."""
    body = literal[1:-1]
    if "\\" not in body:
        return body
    table = _unescaped()
    data = _ESCAPE_RE.sub(lambda m: table[m.group()], body.encode("utf-8"))
    # A string is bytes in MLIR: bytes that are not UTF-8 (`"\\FE"`) are kept as Python keeps a
    # file name's (surrogates), so that two such strings stay two, and print and encode back.
    return data.decode("utf-8", errors="surrogateescape")
