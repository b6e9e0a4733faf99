"""The TextMate grammars against hand-written expectations: `vscode-tmgrammar-test` (VS Code's
engine) runs the `// ^^^ scope` assertion files of vscode-extension/test/grammar, with the
grammars the extension's package.json contributes (so the Markdown injection is tested as VS
Code loads it) and VS Code's Markdown grammar (from the `tm-grammars` package) as the host of
the ```tileir fences. Every scope the grammars can give is asserted somewhere."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.corpus import REPO
from tests.syntax.highlighters import EXTENSION, NODE_MODULES, node_tools_missing

ASSERTIONS = EXTENSION / "test" / "grammar"
GRAMMARS = [REPO / "syntax" / name for name in ("tileir.tmLanguage.json", "tileir.markdown.tmLanguage.json")]
TOOL = NODE_MODULES / "vscode-tmgrammar-test" / "dist" / "unit.js"
MARKDOWN = NODE_MODULES / "tm-grammars" / "grammars" / "markdown.json"


def _names(node: Any) -> Iterator[str]:
    """Every scope name a grammar assigns (rules, captures, contentName)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("name", "contentName") and isinstance(value, str):
                yield value
            else:
                yield from _names(value)
    elif isinstance(node, list):
        for value in node:
            yield from _names(value)


def grammar_scopes() -> set[str]:
    scopes: set[str] = set()
    for path in GRAMMARS:
        grammar = json.loads(path.read_text(encoding="utf-8"))
        scopes |= set(_names(grammar["repository"]))
    return scopes


def asserted_scopes() -> set[str]:
    found: set[str] = set()
    for path in sorted(ASSERTIONS.glob("*")):
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            match = re.match(r"^(?://|<!--)\s*(?:\^+|<~*-+)\s+(.*)$", line)
            if match:
                required = match.group(1).split(" - ")[0]
                found |= set(required.split())
    return found


def test_every_token_class_is_asserted() -> None:
    missing = grammar_scopes() - asserted_scopes()
    assert not missing, sorted(missing)
    assert {path.suffix for path in ASSERTIONS.glob("*")} >= {".tileir", ".md"}


def test_vscode_tmgrammar_test_passes() -> None:
    missing = node_tools_missing()
    if missing:
        pytest.skip(missing)
    for path in (TOOL, MARKDOWN):
        if not path.exists():
            pytest.skip(f"{path} is absent (run `npm ci` in vscode-extension)")
    # The build step that puts the grammars where package.json says they are.
    copy = subprocess.run(
        ["node", "scripts/copy-grammar.js"], cwd=EXTENSION, capture_output=True, text=True, timeout=60, check=False
    )
    assert copy.returncode == 0, copy.stderr
    result = subprocess.run(
        ["node", str(TOOL), "--compact", "-g", str(MARKDOWN), "test/grammar/*.tileir", "test/grammar/*.md"],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # Markdown's grammar embeds dozens of languages we do not load: drop those warnings.
    output = "\n".join(line for line in (result.stdout + result.stderr).splitlines() if "grammar not found" not in line)
    assert result.returncode == 0, output
    ran = re.findall(r"run successfuly", output)
    assert len(ran) == len(list(ASSERTIONS.glob("*.tileir")) + list(ASSERTIONS.glob("*.md"))), output
