"""Both highlighters behind one interface, for the tests: the pygments lexer, and the TextMate
grammar run by VS Code's own engine (vscode-textmate on Oniguruma, through Node and the
extension's npm packages; `real_textmate` skips the test, saying why, when they are absent)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass

import pytest
from pygments import lex
from pygments.token import Keyword, Name, _TokenType

from syntax.pygments_lexer import TileIRLexer
from tests.corpus import REPO

EXTENSION = REPO / "vscode-extension"
NODE_MODULES = EXTENSION / "node_modules"
GRAMMAR = REPO / "syntax" / "tileir.tmLanguage.json"
TOKENIZER = REPO / "tests" / "syntax" / "textmate_tokenize.js"


@dataclass(frozen=True)
class TokenClass:
    """What a class of word is in each highlighter."""

    what: str
    pygments: _TokenType
    scope: str  # the innermost TextMate scope starts with this


OP = TokenClass("op", Name.Builtin, "support.function.operation.tileir")
TYPE = TokenClass("type", Keyword.Type, "storage.type")
CONSTANT = TokenClass("enum or constant", Keyword.Constant, "constant.language.tileir")
KEYWORD = TokenClass("keyword", Keyword, "keyword.other.tileir")
PLAIN_NAME = TokenClass("plain name", Name, "variable.other.name.tileir")


def pygments_tokens(text: str) -> list[tuple[int, int, _TokenType]]:
    """(start, end, token type) over the whole text."""
    out, pos = [], 0
    for ttype, value in lex(text, TileIRLexer(stripnl=False, ensurenl=False)):
        out.append((pos, pos + len(value), ttype))
        pos += len(value)
    return out


def pygments_class_at(tokens: list[tuple[int, int, _TokenType]], start: int, end: int) -> _TokenType | None:
    """The token type of the token spanning exactly [start, end), else None."""
    for a, b, ttype in tokens:
        if (a, b) == (start, end):
            return ttype
    return None


def node_tools_missing() -> str | None:
    """Why the Node-based checks cannot run here, or None when they can."""
    if shutil.which("node") is None:
        return "node is not on PATH"
    for package in ("vscode-textmate", "vscode-oniguruma"):
        if not (NODE_MODULES / package).is_dir():
            return f"{NODE_MODULES / package} is absent (run `npm ci` in vscode-extension)"
    return None


def real_textmate(texts: list[str], grammar: str = str(GRAMMAR)) -> list[list[tuple[int, int, int, list[str]]]]:
    """For each text, its (line, start, end, scopes) tokens from vscode-textmate."""
    missing = node_tools_missing()
    if missing:
        pytest.skip(missing)
    result = subprocess.run(
        ["node", str(TOKENIZER), grammar],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
    )
    assert result.returncode == 0, result.stderr
    return [[(line, start, end, scopes) for line, start, end, scopes in tokens] for tokens in json.loads(result.stdout)]
