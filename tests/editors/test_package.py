"""The packaged extension (.vsix, a zip): built offline by `npm ci && npm run compile && vsce
package` (.ci/install-code-server, or re-packaged by the fixture when stale), it holds what VS Code
loads and none of the sources, tests or development packages; `tsc` and ESLint are clean."""

from __future__ import annotations

import json
import subprocess
import zipfile

from .conftest import EXTENSION, packaged_vsix, tool_env


def test_vsix_holds_the_extension_and_no_junk() -> None:
    vsix = packaged_vsix()
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        manifest = json.loads(z.read("extension/package.json"))
    # What package.json points at is inside: the entry point, grammars, the language config.
    assert "extension/" + manifest["main"].lstrip("./") in names
    for grammar in manifest["contributes"]["grammars"]:
        assert "extension/" + grammar["path"].lstrip("./") in names, grammar
    for language in manifest["contributes"]["languages"]:
        assert "extension/" + language["configuration"].lstrip("./") in names
    # Every compiled module and the webview script.
    for source in (EXTENSION / "src").glob("*.ts"):
        assert f"extension/out/{source.stem}.js" in names, source.name
    assert "extension/media/layout.js" in names
    # The runtime dependency, and none of the development ones (compilers, linters, vsce).
    assert any(n.startswith("extension/node_modules/vscode-languageclient/") for n in names)
    dev = json.loads((EXTENSION / "package.json").read_text())["devDependencies"]
    for package in dev:
        assert not any(n.startswith(f"extension/node_modules/{package}/") for n in names), package
    # No sources, tests, maps, build scripts or lint config.
    junk = [
        n
        for n in names
        if n.endswith((".ts", ".map", ".vsix"))
        or n.startswith(("extension/src/", "extension/test/", "extension/scripts/"))
        or "/.github/" in n
        or n.endswith(("tsconfig.json", "eslint.config.mjs", "package-lock.json"))
    ]
    assert junk == [], junk


def test_typescript_and_eslint_are_clean() -> None:
    packaged_vsix()  # skips, with the reason, where Node 24 or the node_modules are absent
    done = subprocess.run(
        ["npm", "run", "lint"], cwd=EXTENSION, env=tool_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "problem" not in done.stdout, done.stdout[-4000:]
