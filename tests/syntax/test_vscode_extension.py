"""The VS Code extension, checked without Node: the TextMate grammar (shape, Python-compatible
regexes, and the same tokens as the pygments lexer on real files) and the manifest against the
contract with the language server. With Node and `npm install` done, tsc type-checks the client."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pygments import lex
from pygments.token import Comment, Keyword, Name, Number, _TokenType

from syntax import keywords, pygments_lexer
from syntax.pygments_lexer import TileIRLexer
from tests.corpus import REPO, conformance_files, example_files, read, sample_files

EXTENSION = REPO / "vscode-extension"
GRAMMAR_PATH = REPO / "syntax" / "tileir.tmLanguage.json"
SOURCES = sorted((EXTENSION / "src").glob("*.ts"))

# The contract with tile_lsp (see vscode-extension/src/protocol.ts).
REQUEST_METHODS = {
    "tileir/layout",
    "tileir/convertFromBytecode",
    "tileir/convertToBytecode",
    "tileir/triton",
    "tileir/ptx",
    "tileir/sass",
}
COMMAND_TITLES = {
    "tileir.showLayout": "Tile IR: Show View Layout",
    "tileir.showTriton": "Tile IR: Show Triton Source",
    "tileir.showPtx": "Tile IR: Show PTX",
    "tileir.showSass": "Tile IR: Show SASS",
    "tileir.showTileirasSass": "Tile IR: Show SASS (NVIDIA tileiras)",
    "tileir.saveAsBytecode": "Tile IR: Save as Bytecode...",
    "tileir.restartServer": "Tile IR: Restart Language Server",
}
SETTINGS: dict[str, tuple[str, object, list[str] | None]] = {
    "tileir.server.python": ("string", "python3", None),
    "tileir.server.args": ("array", [], None),
    "tileir.targetArchitecture": ("string", "sm_100", None),
    "tileir.bytecodeVersion": ("string", "13.3", ["13.1", "13.2", "13.3"]),
    "tileir.warnings.unsupportedHints": ("string", "warn", ["silent", "warn", "error"]),
    "tileir.diagnostics.debounceMs": ("number", 150, None),
    "tileir.inlayHints.enabled": ("boolean", True, None),
}


# --- a small TextMate tokenizer (enough for this grammar), to test the grammar without Node ----


@cache
def _regex(source: str) -> re.Pattern[str]:
    return re.compile(source)


class TextMate:
    """Tokenizes like vscode-textmate: at each position the rule whose match starts first wins,
    ties go to the rule listed first, an open begin/end rule's `end` is tried before its patterns."""

    def __init__(self, grammar: dict[str, Any]) -> None:
        self.repository: dict[str, Any] = grammar["repository"]
        self.root: list[dict[str, Any]] = self.flatten(grammar["patterns"])

    def flatten(self, patterns: list[dict[str, Any]]) -> list[dict[str, Any]]:
        rules: list[dict[str, Any]] = []
        for pattern in patterns:
            if "include" in pattern:
                rules += self.flatten(self.repository[pattern["include"].removeprefix("#")]["patterns"])
            else:
                rules.append(pattern)
        return rules

    def tokenize(self, text: str) -> Iterator[tuple[str, tuple[str, ...]]]:
        """(text, scopes) for every token; an open begin/end rule carries over to the next line."""
        stack: list[dict[str, Any]] = []
        for line in text.split("\n"):
            yield from self._line(line, stack)

    def _line(self, line: str, stack: list[dict[str, Any]]) -> Iterator[tuple[str, tuple[str, ...]]]:
        pos = 0
        while pos <= len(line):
            scopes = tuple(rule["name"] for rule in stack if "name" in rule)
            rules = self.flatten(stack[-1].get("patterns", [])) if stack else self.root
            candidates: list[tuple[re.Match[str], dict[str, Any] | None]] = []
            if stack:
                end = _regex(stack[-1]["end"]).search(line, pos)
                if end:
                    candidates.append((end, None))
            for rule in rules:
                found = _regex(rule.get("match") or rule["begin"]).search(line, pos)
                if found and found.end() > found.start():
                    candidates.append((found, rule))
            if not candidates:
                break
            found, rule = min(candidates, key=lambda candidate: candidate[0].start())  # stable
            if found.start() > pos:
                yield line[pos : found.start()], scopes
            if rule is None:  # the end of the open begin/end rule
                closing = stack.pop()
                yield from self._captured(line, found, scopes, closing.get("endCaptures", {}))
            elif "match" in rule:
                inner = scopes + ((rule["name"],) if "name" in rule else ())
                yield from self._captured(line, found, inner, rule.get("captures", {}))
            else:
                stack.append(rule)
                inner = scopes + (rule["name"],)
                yield from self._captured(line, found, inner, rule.get("beginCaptures", {}))
            pos = found.end()
        if pos < len(line):
            yield line[pos:], tuple(rule["name"] for rule in stack if "name" in rule)

    def _captured(
        self, line: str, found: re.Match[str], scopes: tuple[str, ...], captures: dict[str, Any]
    ) -> Iterator[tuple[str, tuple[str, ...]]]:
        pos = found.start()
        for group in sorted((int(k) for k in captures if k != "0"), key=found.start):
            start, end = found.span(group)
            if start < 0 or start == end:
                continue
            if start > pos:
                yield line[pos:start], scopes
            capture = captures[str(group)]
            inner = scopes + ((capture["name"],) if "name" in capture else ())
            if "patterns" in capture:
                yield from self._sub(line[:end], start, inner, self.flatten(capture["patterns"]))
            else:
                yield line[start:end], inner
            pos = end
        whole = captures.get("0")
        if found.end() > pos:
            yield line[pos : found.end()], scopes + ((whole["name"],) if whole else ())

    def _sub(
        self, line: str, pos: int, scopes: tuple[str, ...], rules: list[dict[str, Any]]
    ) -> Iterator[tuple[str, tuple[str, ...]]]:
        """Match-only rules over line[pos:] (a capture's `patterns`)."""
        while pos < len(line):
            matches = [(m, r) for r in rules if (m := _regex(r["match"]).search(line, pos)) and m.end() > m.start()]
            if not matches:
                break
            found, rule = min(matches, key=lambda candidate: candidate[0].start())
            if found.start() > pos:
                yield line[pos : found.start()], scopes
            yield from self._captured(
                line, found, scopes + ((rule["name"],) if "name" in rule else ()), rule.get("captures", {})
            )
            pos = found.end()
        if pos < len(line):
            yield line[pos:], scopes


@cache
def grammar() -> dict[str, Any]:
    return json.loads(GRAMMAR_PATH.read_text(encoding="utf-8"))


@cache
def tokenizer() -> TextMate:
    return TextMate(grammar())


def textmate_values(text: str, scope_prefix: str) -> list[str]:
    """The tokens whose innermost scope starts with `scope_prefix`."""
    return [value for value, scopes in tokenizer().tokenize(text) if scopes and scopes[-1].startswith(scope_prefix)]


def _rules(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if any(key in node for key in ("match", "begin", "include", "patterns")):
            yield node
        for value in node.values():
            yield from _rules(value)
    elif isinstance(node, list):
        for value in node:
            yield from _rules(value)


# --- the grammar ----------------------------------------------------------------------------------


def test_grammar_shape() -> None:
    g = grammar()
    assert g["scopeName"] == "source.tileir"
    assert g["patterns"] and g["repository"]
    for rule in _rules(g["repository"]):
        if "include" in rule:
            assert rule["include"].removeprefix("#") in g["repository"], rule["include"]
        if "begin" in rule:
            assert "end" in rule, rule
        if "name" in rule:
            assert rule["name"].endswith(".tileir"), rule["name"]


def test_grammar_regexes_compile_with_python_re() -> None:
    sources = [rule[key] for rule in _rules(grammar()) for key in ("match", "begin", "end") if key in rule]
    assert len(sources) > 20
    for source in sources:
        re.compile(source)  # raises on a regex Python cannot read


def _alternatives(scope: str) -> set[str]:
    """The words of the `(?<!...)(?:a|b|...)\\b` rule named `scope`."""
    (rule,) = [r for r in _rules(grammar()) if r.get("name") == scope]
    body = re.fullmatch(r"\(\?(?:[^()]|\([^()]*\))*?\)\(\?:([\w|$]+)\)\\b", rule["match"])
    assert body, rule["match"]
    return set(body.group(1).split("|"))


def test_grammar_word_lists_are_the_pygments_lexers() -> None:
    """Both read the generated lists (syntax/keywords.py; test_table_words checks they are the
    op table's)."""
    assert _alternatives("keyword.other.tileir") == set(keywords.KEYWORDS)
    assert _alternatives("constant.language.tileir") == set(keywords.CONSTANTS)
    assert _alternatives("storage.type.tileir") == set(keywords.TYPE_CONSTRUCTORS)
    assert _alternatives("storage.type.primitive.tileir") == set(keywords.ELEMENT_TYPES)
    assert pygments_lexer.KEYWORDS is keywords.KEYWORDS and pygments_lexer.CONSTANTS is keywords.CONSTANTS
    assert pygments_lexer.TYPE_CONSTRUCTORS is keywords.TYPE_CONSTRUCTORS
    assert pygments_lexer.ELEMENT_TYPES is keywords.ELEMENT_TYPES


SNIPPET = """// a comment
cuda_tile.module @kernels {
  entry @k(%arg0: tile<ptr<f32>>) {
    %c = constant <f32: 1.5e+00> : tile<128x32xf32>
    %q:2 = get_index_space_shape %pv : partition_view<tile=(4x8), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>> -> tile<i32>
    %r = reduce %t dim=0 identities=[0xFF800000 : f32] : tile<1024xf32> -> tile<f32>
    print_tko "hello %f", %c : tile<f32> -> token
  ^bb1(%x: !alias):
    return
  }
}
// -----
"""  # noqa: E501 - as long as real Tile IR lines


def test_grammar_tokens_of_a_snippet() -> None:
    assert textmate_values(SNIPPET, "support.function.operation") == [
        "constant",
        "get_index_space_shape",
        "reduce",
        "print_tko",
        "return",
    ]
    assert textmate_values(SNIPPET, "variable.other.ssa") == (["%arg0", "%c", "%q", "%pv", "%r", "%t", "%c", "%x"])
    assert textmate_values(SNIPPET, "entity.name.function.symbol") == ["@kernels", "@k"]
    assert textmate_values(SNIPPET, "entity.name.label") == ["^bb1"]
    assert textmate_values(SNIPPET, "entity.name.type.alias") == ["!alias"]
    assert textmate_values(SNIPPET, "constant.numeric.hex") == ["0xFF800000"]
    assert textmate_values(SNIPPET, "constant.numeric.float") == ["1.5e+00"]
    assert textmate_values(SNIPPET, "constant.numeric.integer.shape") == ["128", "32", "4", "?", "?", "1024"]
    assert textmate_values(SNIPPET, "comment.line.double-slash.split-marker") == ["// -----"]
    assert "zero" in textmate_values(SNIPPET, "constant.language.tileir")  # `padding_value = zero`
    assert textmate_values(SNIPPET, "string.quoted.double") == ["hello %f"]


# The pygments token class and the grammar scope that stand for the same thing.
CORRESPONDING: list[tuple[str, _TokenType, str]] = [
    ("ops", Name.Builtin, "support.function.operation"),
    ("values", Name.Variable, "variable.other.ssa"),
    ("symbols", Name.Function, "entity.name.function.symbol"),
    ("blocks", Name.Label, "entity.name.label"),
    ("attribute aliases", Name.Attribute, "entity.other.attribute-name"),
    ("hex numbers", Number.Hex, "constant.numeric.hex"),
    ("floats", Number.Float, "constant.numeric.float"),
    ("split markers", Comment.Special, "comment.line.double-slash.split-marker"),
    ("enum cases and constants", Keyword.Constant, "constant.language"),
]


@pytest.mark.parametrize("path", example_files() + sample_files() + conformance_files(), ids=lambda path: path.name)
def test_grammar_agrees_with_the_pygments_lexer(path: Path) -> None:
    text = read(path)
    pygments_tokens = list(lex(text, TileIRLexer(stripnl=False, ensurenl=False)))
    textmate_tokens = [(value, scopes[-1] if scopes else "") for value, scopes in tokenizer().tokenize(text)]
    assert "".join(value for value, _ in textmate_tokens) == text.replace("\n", "")
    for what, token_type, scope in CORRESPONDING:
        expected = [value for ttype, value in pygments_tokens if ttype is token_type]
        found = [value for value, innermost in textmate_tokens if innermost.startswith(scope)]
        assert found == expected, f"{path.name}: {what}"
    keywords = [v for t, v in pygments_tokens if t is Keyword]
    assert [v for v, s in textmate_tokens if s.startswith("keyword.other")] == keywords
    # Types: pygments also calls `!alias` a type; the grammar gives aliases a scope of their own.
    types = [v for t, v in pygments_tokens if t is Keyword.Type and not v.startswith("!")]
    assert [v for v, s in textmate_tokens if s.startswith("storage.type")] == types


# --- the manifest against the contract ------------------------------------------------------------


@cache
def manifest() -> dict[str, Any]:
    return json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))


def sources_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in SOURCES)


# --- the PTX and SASS grammars (Show PTX, Show SASS) ----------------------------------------------


def _compiled_grammar(language: str) -> dict[str, Any]:
    return json.loads((REPO / "syntax" / f"{language}.tmLanguage.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("language", ["ptx", "nvidia-sass"])
def test_compiled_grammars_shape(language: str) -> None:
    g = _compiled_grammar(language)
    assert g["scopeName"] == f"source.{language}"
    for rule in _rules(g):
        if "include" in rule:
            assert rule["include"].removeprefix("#") in g["repository"], rule["include"]
        for key in ("match", "begin", "end"):
            if key in rule:
                re.compile(rule[key])
    names = [r["name"] for r in _rules(g["repository"]) if "name" in r]
    names += [c["name"] for r in _rules(g["repository"]) for c in r.get("captures", {}).values()]
    assert names and all(name.endswith(f".{language}") for name in names), names


@pytest.fixture(scope="module")
def compiled_matmul() -> dict[str, str]:
    """examples/matmul.tileir's PTX and SASS for sm_90, as Show PTX and Show SASS show them."""
    pytest.importorskip("triton")
    from compiler.lower import compile as lower_compile
    from compiler.runtime import load_module

    k = lower_compile(load_module((REPO / "examples" / "matmul.tileir").read_text()), "matmul", "sm_90")
    return {"ptx": k.asm["ptx"], "nvidia-sass": k.sass()}


def _scoped(language: str, text: str) -> list[list[tuple[str, str]]]:
    """Per line, (token, innermost scope or "") of the non-blank tokens."""
    tm = TextMate(_compiled_grammar(language))
    return [[(v.strip(), s[-1] if s else "") for v, s in tm._line(line, []) if v.strip()] for line in text.split("\n")]


def test_ptx_grammar_on_real_ptx(compiled_matmul: dict[str, str]) -> None:
    """Every instruction's opcode (tensor-core ones included) is an instruction, its modifiers
    modifiers, every register a register, a guard a predicate, every directive a directive."""
    lines = _scoped("ptx", compiled_matmul["ptx"])
    opcodes = {}
    for line in lines:
        first = line[0] if line else ("", "")
        if first[1] == "keyword.control.predicate.ptx":
            first = line[1]
        if first[1] == "support.function.instruction.ptx":
            opcodes[first[0]] = line
        for token, scope in line:
            if re.fullmatch(r"%(r|rd|rs|f|fd|p)\d+", token):
                assert scope == "variable.other.register.ptx", line
            if token.startswith("//"):
                assert scope.startswith("comment."), line
    expected = {"mov", "ld", "st", "bra", "ret", "setp", "cvt", "wgmma", "stmatrix", "bar"}
    assert expected <= opcodes.keys(), sorted(opcodes)
    assert opcodes["wgmma"][1][1] == "storage.modifier.ptx"  # .mma_async.sync.aligned.m64n64k16...
    plain = [line for line in lines if line and not line[0][1] and not re.fullmatch(r"[(){}]", line[0][0])]
    assert not plain, plain[:5]  # every line starts with something scoped (or a bracket)
    versions = [line for line in lines if line and line[0][0] == ".version"]
    assert versions and versions[0][0][1] == "keyword.other.directive.ptx"


def test_sass_grammar_on_real_sass(compiled_matmul: dict[str, str]) -> None:
    """cuobjdump's SASS: each instruction line's address is a comment, its opcode an
    instruction (tensor-core HGMMA included), its registers registers, its encoding a comment."""
    lines = _scoped("nvidia-sass", compiled_matmul["nvidia-sass"])
    instructions = [line for line in lines if line and re.fullmatch(r"/\*[0-9a-f]+\*/", line[0][0])]
    assert len(instructions) > 50
    opcodes = set()
    for line in instructions:
        guard = line[1][1] == "keyword.control.predicate.nvidia-sass"
        token, scope = line[2 if guard else 1]
        assert scope == "support.function.instruction.nvidia-sass", line
        opcodes.add(token)
        for token, scope in line:
            if re.fullmatch(r"U?R\d+|RZ|URZ", token):
                assert scope == "variable.other.register.nvidia-sass", line
        assert line[-1][1] == "comment.block.nvidia-sass" and line[-1][0].startswith("/* 0x"), line
    assert "HGMMA" in opcodes and "EXIT" in opcodes, sorted(opcodes)
    (function,) = [line for line in lines if line and line[0][0] == "Function"]
    assert function[-1] == ("matmul", "entity.name.function.nvidia-sass")


def test_manifest_identity_and_language() -> None:
    m = manifest()
    assert (m["name"], m["publisher"]) == ("tileir-tools", "tileir-tools")
    assert m["engines"]["vscode"] == "^1.85.0"
    language, ptx, sass = m["contributes"]["languages"]
    assert language["id"] == "tileir"
    # What Show PTX and Show SASS open: NVIDIA's SASS under an id of its own, and no file
    # extension (`.sass` files are the CSS preprocessor's).
    assert (ptx["id"], ptx["extensions"]) == ("ptx", [".ptx"])
    assert sass["id"] == "nvidia-sass" and "extensions" not in sass
    assert "'ptx'" in sources_text() and "'nvidia-sass'" in sources_text()
    assert language["extensions"] == [".tileir"]  # `.mlir` belongs to MLIR's extension
    configuration = json.loads((EXTENSION / language["configuration"]).read_text(encoding="utf-8"))
    assert configuration["comments"]["lineComment"] == "//"
    assert ["{", "}"] in configuration["brackets"]
    (custom_editor,) = m["contributes"]["customEditors"]
    assert custom_editor["selector"] == [{"filenamePattern": "*.tileirbc"}]
    assert set(m["activationEvents"]) == {"onLanguage:tileir", f"onCustomEditor:{custom_editor['viewType']}"}
    assert f"'{custom_editor['viewType']}'" in sources_text()


def test_manifest_grammar_is_copied_from_syntax() -> None:
    contributed, markdown, *compiled = manifest()["contributes"]["grammars"]
    assert contributed["scopeName"] == grammar()["scopeName"]
    assert contributed["language"] == "tileir"
    # The extension ships build-time copies of syntax/'s grammars, never second ones in git.
    assert contributed["path"] == "./syntaxes/tileir.tmLanguage.json"
    assert "syntaxes/" in (EXTENSION / ".gitignore").read_text(encoding="utf-8").split()
    copy_script = (EXTENSION / "scripts" / "copy-grammar.js").read_text(encoding="utf-8")
    # The Markdown injection for ```tileir fences.
    injection = json.loads((REPO / "syntax" / "tileir.markdown.tmLanguage.json").read_text(encoding="utf-8"))
    assert markdown["scopeName"] == injection["scopeName"]
    assert markdown["path"] == "./syntaxes/tileir.markdown.tmLanguage.json"
    assert markdown["injectTo"] == ["text.html.markdown"]
    assert injection["injectionSelector"] == "L:text.html.markdown"
    assert set(markdown["embeddedLanguages"].values()) == {"tileir"}
    assert {"source.tileir"} == {r["include"] for r in _rules(injection) if not r.get("include", "#").startswith("#")}
    # PTX and SASS, for what Show PTX and Show SASS open.
    assert [(g["language"], g["scopeName"]) for g in compiled] == [("ptx", "source.ptx"),
                                                                   ("nvidia-sass", "source.nvidia-sass")]  # fmt: skip
    for g in compiled:
        assert g["path"] == f"./syntaxes/{g['language']}.tmLanguage.json"
        assert json.loads((REPO / "syntax" / Path(g["path"]).name).read_text())["scopeName"] == g["scopeName"]
    for path in (contributed["path"], markdown["path"], *(g["path"] for g in compiled)):
        assert f"'{Path(path).name}'" in copy_script, path
    scripts = manifest()["scripts"]
    assert "copy-grammar" in scripts["compile"] and scripts["vscode:prepublish"] == "npm run compile"


def test_manifest_commands_are_registered() -> None:
    commands = manifest()["contributes"]["commands"]
    titles = {c["command"]: f"{c['category']}: {c['title']}" for c in commands}
    for command, title in COMMAND_TITLES.items():
        assert titles.get(command) == title
    registered = set(re.findall(r"registerCommand\(\s*'([\w.]+)'", sources_text()))
    assert set(titles) <= registered, set(titles) - registered


def test_manifest_settings_and_defaults() -> None:
    properties = manifest()["contributes"]["configuration"]["properties"]
    for key, (kind, default, choices) in SETTINGS.items():
        assert key in properties, key
        assert properties[key]["type"] == kind, key
        assert properties[key]["default"] == default, key
        if choices is not None:
            assert properties[key]["enum"] == choices, key
    # The server reads these through workspace/configuration; the extension tells the running
    # server when the section changes (tests/editors checks that live, in VS Code).
    assert "event.affectsConfiguration(CONFIGURATION_SECTION)" in sources_text()
    assert "DidChangeConfigurationNotification.type" in sources_text()
    assert "CONFIGURATION_SECTION = 'tileir'" in sources_text()


def test_client_uses_exactly_the_contract_requests() -> None:
    used = set(re.findall(r"['\"](tileir/[A-Za-z]+)['\"]", sources_text()))
    assert used == REQUEST_METHODS


def test_client_starts_the_server_module() -> None:
    assert "args: ['-m', 'tile_lsp', ...extraArgs]" in sources_text()
    assert "TransportKind.stdio" in sources_text()


def test_webviews_load_nothing_remote() -> None:
    webview_sources = SOURCES + sorted((EXTENSION / "media").glob("*.js"))
    for path in webview_sources:
        assert not re.search(r"https?://", path.read_text(encoding="utf-8")), path.name
    policy = (EXTENSION / "src" / "webview.ts").read_text(encoding="utf-8")
    assert "\"default-src 'none'\"" in policy and "`script-src 'nonce-${nonce}'`" in policy


def test_typescript_compiles() -> None:
    node, tsc = shutil.which("node"), EXTENSION / "node_modules" / "typescript" / "bin" / "tsc"
    if node is None:
        pytest.skip("node is not on PATH")
    if not tsc.exists():
        pytest.skip("vscode-extension/node_modules is absent (run npm ci there)")
    result = subprocess.run(
        [node, str(tsc), "--noEmit", "-p", str(EXTENSION)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
