"""End-to-end tests of the language server: a real client (pytest-lsp) talks to
`python -m tile_lsp` in a subprocess, once with VS Code's capabilities and once with neovim's;
results outside what the client declared it supports fail the test (spec-compliance warnings
are errors)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="the `test` extra (pytest-lsp) is not installed")
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ("visual_studio_code", "neovim")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning"))


@pytest_lsp.fixture(
    scope="module",
    params=CLIENTS,
    config=ClientServerConfig(server_command=[sys.executable, "-m", "tile_lsp"]),
)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest):
    """A client with one real editor's capabilities, initialised against a fresh server.
    Diagnostics are published without the debounce delay so tests need not sleep."""
    lsp_client.set_configuration({"tileir": {"diagnostics": {"debounceMs": 0}}})
    # What the server answered (its capabilities), for the tests that check them.
    lsp_client.initialize_result = await lsp_client.initialize_session(
        lsp.InitializeParams(
            capabilities=client_capabilities(request.param),
            root_uri=ROOT.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=ROOT.as_uri(), name="main")],
        )
    )
    yield
    await lsp_client.shutdown_session()
