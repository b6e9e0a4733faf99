"""A real VS Code for the extension's end-to-end tests: code-server (VS Code in the browser) on
Node 24, with our packaged extension (vscode-extension/*.vsix) installed, serving a temporary
workspace of the examples, a broken file, a file to format, a wide view and a bytecode file
written by our writer; Debian's chromium drives it through Playwright (headless).

`.ci/install-code-server` installs Node 24 and code-server under $TILEIR_EDITORS_CACHE
(default ~/.cache/tileir-editors) and packages the .vsix; where it could not, it left the reason
in unavailable.txt there, and these tests skip with it. A .vsix older than the extension's
sources is re-packaged first (a few seconds), so that the tests never run yesterday's build.

One code-server and one browser page serve the whole session (starting them costs ~10 s); each
test opens what it needs and closes its editors afterwards."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "vscode-extension"
EXAMPLES = ROOT / "examples"
CACHE = Path(os.environ.get("TILEIR_EDITORS_CACHE", Path.home() / ".cache" / "tileir-editors"))
CHROMIUM = Path(os.environ.get("TILEIR_CHROMIUM", "/usr/bin/chromium"))
# Screenshots of the browser tests (gitignored), beside the notebook tests' ones.
ARTIFACTS = Path(os.environ.get("TILEIR_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))
INSTALL = ".ci/install-code-server"

# Generous for a 2-core CI machine: code-server answers in ~1 s, the workbench loads in a few,
# the Python server starts and verifies in 4-9 s, Triton compiles PTX in a few more.
STARTUP_S = 90
SERVER_S = 60


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "editors: end-to-end tests of the VS Code extension in code-server")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.editors)


# --------------------------------------------------------------------------------------------
# What is installed


def _unavailable() -> str:
    note = CACHE / "unavailable.txt"
    reason = note.read_text().strip() if note.exists() else f"{INSTALL} has not been run"
    return f"{reason} ({INSTALL} installs Node 24 and code-server under {CACHE})"


def node_dir() -> Path | None:
    """The newest Node 24 that the install script left in the cache."""
    found = sorted(
        CACHE.glob("node-24.*/bin/node"), key=lambda p: [int(x) for x in re.findall(r"\d+", p.parent.parent.name)]
    )
    return found[-1].parent.parent if found else None


def code_server() -> Path | None:
    found = sorted(CACHE.glob("code-server-*/node_modules/.bin/code-server"))
    return found[-1] if found else None


def tool_env() -> dict[str, str]:
    """The environment the cached Node runs in: its bin/ first, its headers for node-gyp."""
    node = node_dir()
    assert node is not None
    return dict(
        os.environ,
        PATH=f"{node / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        npm_config_nodedir=str(node),
        npm_config_update_notifier="false",
    )


def _sources() -> list[Path]:
    """What the .vsix is built from (the grammar comes from ../syntax/ through copy-grammar)."""
    files = [p for d in ("src", "media", "scripts") for p in (EXTENSION / d).rglob("*") if p.is_file()]
    files += [EXTENSION / n for n in ("package.json", "language-configuration.json", ".vscodeignore", "README.md")]
    files += [p for p in (ROOT / "syntax").glob("*.json")]
    return [p for p in files if p.exists()]


def packaged_vsix() -> Path:
    """The extension's .vsix, re-packaged when a source is newer than it; skips (with the
    reason) when the tools are absent, fails when packaging itself fails."""
    if node_dir() is None or code_server() is None:
        pytest.skip(_unavailable())
    if not (EXTENSION / "node_modules" / ".bin" / "vsce").exists():
        pytest.skip(f"vscode-extension/node_modules is missing (run {INSTALL}, which runs npm ci there)")
    found = sorted(EXTENSION.glob("*.vsix"), key=lambda p: p.stat().st_mtime)
    newest_source = max(p.stat().st_mtime for p in _sources())
    if found and found[-1].stat().st_mtime >= newest_source:
        return found[-1]
    for old in found:
        old.unlink()
    for command in (
        ["npm", "run", "compile"],
        ["npx", "--no-install", "vsce", "package", "--allow-missing-repository"],
    ):
        done = subprocess.run(command, cwd=EXTENSION, env=tool_env(), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (
            f"{' '.join(command)} failed in vscode-extension/:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    found = sorted(EXTENSION.glob("*.vsix"))
    assert found, "vsce package wrote no .vsix"
    return found[-1]


def save_artifact(name: str, data: bytes) -> None:
    """A screenshot under tests/artifacts/, written atomically (a temporary file, then a rename)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=ARTIFACTS, prefix=f".{name}.")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, ARTIFACTS / name)


# --------------------------------------------------------------------------------------------
# The workspace

BROKEN = """// Two mistakes, on lines 4 and 5.
cuda_tile.module @broken {
  entry @k(%a: tile<i32>) {
    %c = addf %a, %a : tile<i32>
    %d = addf %c, %c : tile<i32>
    return
  }
}
"""

# A result name on an op without results: the diagnostic carries a quick fix.
NAMED = """cuda_tile.module @named {
  entry @k(%a: tile<i32>) {
    %b = addi %a, %a : tile<i32>
    %r = return
  }
}
"""

# Odd spacing and comments everywhere the formatter might drop them.
MESSY = """// header comment: kept
cuda_tile.module   @messy {
// before the entry
      entry @k(%a: tile<f32>) {
    %b =    addf %a,%a   : tile<f32>   // trailing comment: kept
        // a comment line inside the body: kept
    return
  }
}
"""

# A wide, flat tensor: 8x2048 elements in 8x64 tiles (32 tiles side by side).
WIDE = """// A wide view: its picture must not be a hairline.
cuda_tile.module @wide {
  entry @k(%p: tile<ptr<f32>>) {
    %t = make_tensor_view %p, shape = [8, 2048], strides = [2048, 1] : tensor_view<8x2048xf32, strides=[2048,1]>
    %v = make_partition_view %t : partition_view<tile=(8x64), tensor_view<8x2048xf32, strides=[2048,1]>>
    return
  }
}
"""

# Clusters of 2 asked for a kernel whose scans Triton (3.6 and 3.9) cannot compile in clusters:
# the lowering compiles it without and says so (compiler/lower/build.py), which Show PTX shows.
CLUSTERS = """// Clusters of 2 for scans Triton cannot compile in clusters: Show PTX warns.
cuda_tile.module @m {
  entry @k(%a_ptr: tile<ptr<i32>>, %b_ptr: tile<ptr<i16>>, %s_ptr: tile<ptr<i32>>, %u_ptr: tile<ptr<i16>>) optimization_hints=<sm_90 = {num_cta_in_cga = 2}, sm_100 = {num_cta_in_cga = 2}> {
    %tok = make_token : token
    %zero = constant <i32: 0> : tile<i32>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %a_tv = make_tensor_view %a_ptr, shape = [32, 64], strides = [64, 1] : tensor_view<32x64xi32, strides=[64,1]>
    %a_pv = make_partition_view %a_tv : partition_view<tile=(16x64), tensor_view<32x64xi32, strides=[64,1]>>
    %b_tv = make_tensor_view %b_ptr, shape = [4, 16], strides = [16, 1] : tensor_view<4x16xi16, strides=[16,1]>
    %b_pv = make_partition_view %b_tv : partition_view<tile=(2x16), tensor_view<4x16xi16, strides=[16,1]>>
    %s_tv = make_tensor_view %s_ptr, shape = [32, 64], strides = [64, 1] : tensor_view<32x64xi32, strides=[64,1]>
    %s_pv = make_partition_view %s_tv : partition_view<tile=(16x64), tensor_view<32x64xi32, strides=[64,1]>>
    %u_tv = make_tensor_view %u_ptr, shape = [4, 16], strides = [16, 1] : tensor_view<4x16xi16, strides=[16,1]>
    %u_pv = make_partition_view %u_tv : partition_view<tile=(2x16), tensor_view<4x16xi16, strides=[16,1]>>
    %a, %a_t = load_view_tko weak %a_pv[%bx, %zero] token = %tok : partition_view<tile=(16x64), tensor_view<32x64xi32, strides=[64,1]>>, tile<i32>, tile<i32> -> tile<16x64xi32>, token
    %b, %b_t = load_view_tko weak %b_pv[%bx, %zero] token = %tok : partition_view<tile=(2x16), tensor_view<4x16xi16, strides=[16,1]>>, tile<i32>, tile<i32> -> tile<2x16xi16>, token
    %s_r = scan %a dim=1 reverse=false identities=[0 : i32] : tile<16x64xi32> -> tile<16x64xi32>
      (%es: tile<i32>, %as: tile<i32>) {
        %ys = addi %es, %as : tile<i32>
        yield %ys : tile<i32>
      }
    %u_r = scan %b dim=0 reverse=false identities=[0 : i16] : tile<2x16xi16> -> tile<2x16xi16>
      (%eu: tile<i16>, %au: tile<i16>) {
        %yu = ori %eu, %au : tile<i16>
        yield %yu : tile<i16>
      }
    %s_st = store_view_tko weak %s_r, %s_pv[%bx, %zero] token = %tok : tile<16x64xi32>, partition_view<tile=(16x64), tensor_view<32x64xi32, strides=[64,1]>>, tile<i32>, tile<i32> -> token
    %u_st = store_view_tko weak %u_r, %u_pv[%bx, %zero] token = %tok : tile<2x16xi16>, partition_view<tile=(2x16), tensor_view<4x16xi16, strides=[16,1]>>, tile<i32>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


def make_workspace(folder: Path) -> None:
    folder.mkdir(parents=True)
    for path in EXAMPLES.glob("*.tileir"):
        shutil.copy(path, folder / path.name)
    (folder / "broken.tileir").write_text(BROKEN)
    (folder / "messy.tileir").write_text(MESSY)
    (folder / "named.tileir").write_text(NAMED)
    (folder / "wide.tileir").write_text(WIDE)
    (folder / "clusters.tileir").write_text(CLUSTERS)
    # Bytecode by our writer (`tileir asm`), as a user would have it.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "compiler",
            "asm",
            str(EXAMPLES / "vector_add.tileir"),
            "-o",
            str(folder / "vadd.tileirbc"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def user_settings() -> dict[str, object]:
    """VS Code's user settings: nothing that would pop up over the editor."""
    return {
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "workbench.enableExperiments": False,
        "workbench.welcomePage.walkthroughs.openOnInstall": False,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
        "chat.disableAIFeatures": True,
        "security.workspace.trust.enabled": False,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoUpdate": False,
        "extensions.autoCheckUpdates": False,
        "extensions.ignoreRecommendations": True,
        "editor.minimap.enabled": False,
        "editor.hover.delay": 150,
        "editor.quickSuggestions": {"other": False, "comments": False, "strings": False},
        "editor.lightbulb.enabled": "on",
        "files.autoSave": "off",
        "git.enabled": False,
        "workbench.editor.enablePreview": False,
        "window.commandCenter": False,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CodeServer:
    """The running code-server: its folders, its process and its log."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.workspace = home / "workspace"
        self.user_data = home / "user-data"
        self.extensions = home / "extensions"
        self.settings_file = self.user_data / "User" / "settings.json"
        # code-server's window is a remote one: settings of `machine(-overridable)` scope, like
        # tileir.server.python, are read from the Remote settings (user-data/Machine) there, and
        # ignored (greyed out) in the User settings.
        self.machine_settings_file = self.user_data / "Machine" / "settings.json"
        self.log_path = home / "code-server.log"
        self.process: subprocess.Popen | None = None
        self.url = ""

    def write_settings(self, machine: bool = False, **changes: object) -> None:
        """Changes the User (or, with `machine`, the Remote) settings as a user editing
        settings.json would (VS Code watches the file)."""
        path = self.machine_settings_file if machine else self.settings_file
        settings = json.loads(path.read_text()) if path.exists() else {}
        settings.update(changes)
        path.parent.mkdir(parents=True, exist_ok=True)
        # In place, not through a rename: VS Code watches the file, and a renamed-over file
        # can go unnoticed.
        path.write_text(json.dumps(settings, indent=2))

    def common_args(self) -> list[str]:
        return [
            "--user-data-dir",
            str(self.user_data),
            "--extensions-dir",
            str(self.extensions),
            "--disable-telemetry",
            "--disable-update-check",
        ]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""

    def descendants(self) -> list[tuple[int, list[str]]]:
        """(pid, argv) of every process below code-server, from /proc."""
        assert self.process is not None
        children: dict[int, list[int]] = {}
        argv: dict[int, list[str]] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
            argv[int(entry.name)] = [a.decode(errors="replace") for a in args if a]
        found, todo = [], [self.process.pid]
        while todo:
            for child in children.get(todo.pop(), []):
                found.append((child, argv.get(child, [])))
                todo.append(child)
        return found


# Module scope: Playwright's sync API runs an asyncio loop in this thread while it is open,
# and the language-server tests (pytest-lsp, pytest-asyncio) that run later need the thread's
# loop free; tests/editors/test_vscode.py is the one module that drives the browser.
@pytest.fixture(scope="module")
def code_server_instance() -> Iterator[CodeServer]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (CI installs it with .ci/install-browser)")
    pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (the `test` extra)")
    vsix = packaged_vsix()
    binary = code_server()
    assert binary is not None
    server = CodeServer(Path(tempfile.mkdtemp(prefix="tileir-code-server-")))
    make_workspace(server.workspace)
    server.write_settings(**user_settings())
    server.write_settings(machine=True, **{"tileir.server.python": sys.executable})
    env = tool_env()
    done = subprocess.run(
        [str(binary), *server.common_args(), "--install-extension", str(vsix)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0 and "successfully installed" in done.stdout.lower(), done.stdout + done.stderr
    port = _free_port()
    log = open(server.log_path, "w")  # noqa: SIM115 - closed in the finalizer
    server.process = subprocess.Popen(
        [
            str(binary),
            "--auth",
            "none",
            "--bind-addr",
            f"127.0.0.1:{port}",
            "--disable-workspace-trust",
            "--disable-getting-started-override",
            *server.common_args(),
            str(server.workspace),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=server.workspace,
        start_new_session=True,  # its own process group: the finalizer ends the language server too
    )
    server.url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                with urllib.request.urlopen(f"{server.url}/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if server.process.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail(f"code-server did not start:\n{server.log()}")
            time.sleep(0.2)
        yield server
    finally:
        try:
            os.killpg(server.process.pid, signal.SIGTERM)
            server.process.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with __import__("contextlib").suppress(ProcessLookupError):
                os.killpg(server.process.pid, signal.SIGKILL)
        log.close()
        shutil.rmtree(server.home, ignore_errors=True)


@pytest.fixture(scope="module")
def vscode(code_server_instance: CodeServer) -> Iterator[object]:
    """The workbench in headless chromium, the workspace folder open, as a `Workbench`."""
    from playwright.sync_api import sync_playwright

    from .workbench import Workbench

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1500, "height": 950})
        page.set_default_timeout(30_000)
        page.goto(f"{code_server_instance.url}/?folder={code_server_instance.workspace}")
        workbench = Workbench(page, code_server_instance)
        try:
            workbench.wait_ready()
        except Exception:
            save_artifact("vscode_startup_failed.png", page.screenshot())
            raise
        yield workbench
        browser.close()


@pytest.fixture
def workbench(vscode, request) -> Iterator[object]:
    """The session's workbench for one test: a screenshot when the test fails, and every editor
    closed (unsaved changes dropped) after it."""
    yield vscode
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        save_artifact(f"vscode_failed_{request.node.name}.png", vscode.page.screenshot())
    vscode.close_all()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.rep_call = report
    return report
