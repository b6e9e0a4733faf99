"""The tour in a real browser: JupyterLab on 127.0.0.1, driven by Playwright through Debian's
chromium (/usr/bin/chromium, headless, --no-sandbox; Playwright never downloads a browser).
It opens examples/tileir_tour.ipynb, runs every cell, checks that the layout widget draws its
tiles and that a click on a tile moves the highlighted elements, and keeps screenshots and the
widget measurements under tests/artifacts/.

Skips, with the reason, where chromium, Playwright or JupyterLab is missing (`.ci/install-browser`
installs chromium in CI)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, EXAMPLES, needs_triton

CHROMIUM = Path(os.environ.get("TILEIR_CHROMIUM", "/usr/bin/chromium"))

if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed (CI installs it with .ci/install-browser)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (the `test` extra)")
pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (the `test` extra)")

# Generous: a 2-core CI machine starts JupyterLab and a kernel slowly, and Triton's interpreter
# takes seconds in the tour's last cell.
STARTUP_S = 90
TOUR_S = 240


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(kernelspec: Path) -> Iterator[str]:
    """JupyterLab serving a copy of the tour from a temporary folder; yields its base URL
    (with the token as a query)."""
    home = Path(tempfile.mkdtemp(prefix="tileir-lab-"))
    root = home / "notebooks"
    root.mkdir()
    shutil.copy(EXAMPLES / "tileir_tour.ipynb", root / "tileir_tour.ipynb")
    config = home / "config"
    (config / "labconfig").mkdir(parents=True)
    # No "get Jupyter news?" toast over the notebook (it would ask the network anyway).
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    port, token = _free_port(), "tileir-test-token"
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        TILEIR_NO_GPU="1",
    )
    log = open(home / "lab.log", "w")  # noqa: SIM115 - closed in the finalizer
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",  # no PyPI queries from the extension manager
            *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),  # CI runs as root
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=root,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail(f"JupyterLab did not start: {(home / 'lab.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield f"{base}|{token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def page(lab: str) -> Iterator[object]:
    base, token = lab.split("|")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        context = browser.new_page(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(60_000)
        context.goto(f"{base}/lab/tree/tileir_tour.ipynb?token={token}")
        yield context
        browser.close()


def _save(name: str, data: bytes) -> None:
    """An artifact, written atomically (a temporary file beside it, then a rename)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=ARTIFACTS, prefix=f".{name}.")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, ARTIFACTS / name)


def _count_models(root) -> int:
    """Widgets reachable from `root` through its traits (children, layout, style, ...)."""
    import ipywidgets

    seen: set[int] = set()
    todo = [root]
    while todo:
        w = todo.pop()
        if id(w) in seen:
            continue
        seen.add(id(w))
        for name in w.keys:
            value = getattr(w, name, None)
            items = value if isinstance(value, (list, tuple)) else [value]
            todo.extend(v for v in items if isinstance(v, ipywidgets.Widget))
    return len(seen)


def _highlighted(layout) -> list[tuple[str, str]]:
    """The (row, column) of the elements the element grid highlights now."""
    cells = layout.locator(".tileir-elements rect.el.tile, .tileir-elements rect.el.pad")
    return sorted(
        zip(
            cells.evaluate_all("els => els.map(e => e.dataset.r)"),
            cells.evaluate_all("els => els.map(e => e.dataset.c)"),
        )
    )


@needs_triton
def test_tour_runs_in_jupyterlab_and_the_layout_widget_responds(page) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # The notebook opened on its "Tile IR" kernel, which is idle.
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=STARTUP_S * 1000)
    try:
        page.wait_for_selector(".jp-Toolbar-kernelName:has-text('Tile IR')", timeout=STARTUP_S * 1000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=STARTUP_S * 1000)
    except playwright_api.Error:
        _save("tour_no_kernel.png", page.screenshot())
        raise

    page.locator(".jp-Notebook").first.click()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

    # The last cell's output (every backend) means that everything ran.
    page.wait_for_selector("text=@matmul on every available backend", timeout=TOUR_S * 1000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=TOUR_S * 1000)
    if importlib.util.find_spec("cuda.tile") is not None:  # the cuTile section ran its kernel on the CPU
        page.wait_for_selector("text=saxpy (4, 1, 1) cpu ok", timeout=10_000)
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert page.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']").count() == 0
    assert errors.count() == 0 or "Error" not in " ".join(errors.all_inner_texts())

    # The first layout explorer (vector add's views): tiles drawn by the core's SVG.
    layout = page.locator(".tileir-layout").first
    layout.scroll_into_view_if_needed()
    tiles = layout.locator(".tileir-picture rect.tile")
    tiles.first.wait_for()
    assert tiles.count() == 4  # 3584 elements of dynamic length: 4 tiles of 1024, the last partial
    before = _highlighted(layout)
    assert before and before[0] == ("0", "0")
    _save("tour_layout_before.png", page.screenshot())

    # A click on the third tile moves the highlight to its elements.
    tiles.nth(2).click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tileir-layout')][0]"
        ".querySelector('.tileir-elements rect.el.tile')?.dataset.c >= 2048",
        timeout=30_000,
    )
    after = _highlighted(layout)
    assert after != before
    assert min(int(c) for _, c in after) == 2048
    assert "tile (2): elements [2048, 3072)" in layout.locator(".tileir-info").inner_text()
    _save("tour_layout_after_click.png", layout.screenshot())

    # The softmax explorer: a 2-D picture of 4x1024 tiles; a click picks a row of tiles.
    softmax = page.locator(".tileir-layout").nth(1)
    softmax.scroll_into_view_if_needed()
    cells = softmax.locator(".tileir-picture rect.tile")
    assert cells.count() == 16
    cells.nth(5).click()  # (1, 1)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tileir-layout')][1]"
        ".querySelector('.tileir-info').innerText.includes('tile (1,1)')",
        timeout=30_000,
    )
    _save("tour_softmax_layout.png", page.screenshot())


MEASURE_CELLS = [
    "from tile_kernel.widgets import LayoutExplorer\n"
    'VIEW = "partition_view<tile=(4x4), tensor_view<64x64xf32, strides=[64,1]>>"  # 16x16 tiles',
    'LayoutExplorer.of_type(VIEW, picker="anywidget")',
    'LayoutExplorer.of_type(VIEW, picker="ipywidgets")',
]


@needs_triton
def test_measure_anywidget_against_ipywidgets(page, lab: str) -> None:
    """The two tile pickers side by side in the browser, on a 16x16-tile view: widget models,
    page elements, time from a click to the new highlight; and their code, counted in Python.
    Written to tests/artifacts/widget_measurements.json (the README quotes it)."""
    import inspect

    from tile_kernel import widgets

    base, token = lab.split("|")
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in MEASURE_CELLS])
    nb.metadata["kernelspec"] = {"name": "tileir", "display_name": "Tile IR", "language": "python"}
    body = json.dumps({"type": "notebook", "content": json.loads(nbformat.writes(nb))}).encode()
    request = urllib.request.Request(
        f"{base}/api/contents/measure.ipynb?token={token}",
        data=body,
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as r:
        assert r.status in (200, 201)

    # A workspace of its own: only this notebook open (the tour's tab would be restored otherwise).
    page.goto(f"{base}/lab/workspaces/measure/tree/measure.ipynb?token={token}")
    page.wait_for_selector(".jp-Toolbar-kernelName:has-text('Tile IR')", timeout=STARTUP_S * 1000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=STARTUP_S * 1000)
    page.locator(".jp-Notebook").first.click()
    started = time.perf_counter()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function("() => document.querySelectorAll('.tileir-layout').length == 2", timeout=TOUR_S * 1000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.tileir-layout')]"
        ".every(l => l.querySelector('.tileir-picture rect.tile'))",
        timeout=60_000,
    )
    shown_s = time.perf_counter() - started

    results: dict[str, dict[str, float | int]] = {}
    for n, (kind, clickable) in enumerate([("anywidget", "rect.tile"), ("ipywidgets", "button")]):
        layout = page.locator(".tileir-layout").nth(n)
        layout.scroll_into_view_if_needed()
        targets = layout.locator(
            f".tileir-picture {clickable}" if kind == "anywidget" else f".widget-gridbox {clickable}"
        )
        latencies = []
        for i, index in enumerate((17, 34, 51, 68, 85)):  # tiles (1,1), (2,2), ... (5,5)
            target = targets.nth(index)
            start = time.perf_counter()
            target.click()
            layout.locator(".tileir-info").filter(has_text=f"tile ({i + 1},{i + 1}):").wait_for(timeout=30_000)
            latencies.append(time.perf_counter() - start)
        results[kind] = {
            "clickable_tiles": targets.count(),
            "page_elements": layout.evaluate("e => e.querySelectorAll('*').length"),
            "click_to_highlight_ms_median": round(sorted(latencies)[2] * 1000, 1),
        }

    def code_lines(obj) -> int:
        return sum(
            1 for line in inspect.getsource(obj).splitlines() if line.strip() and not line.strip().startswith("#")
        )

    results["anywidget"]["python_and_js_lines"] = (
        code_lines(widgets.AnyWidgetPicker)
        + code_lines(widgets._svg_picker_class)
        + widgets._ESM.strip().count("\n")
        + 1
    )
    results["ipywidgets"]["python_and_js_lines"] = code_lines(widgets.ButtonPicker)
    # Widget models per explorer (each is a comm and a model in the page): the tree of widgets
    # reachable from the explorer, as made in this process the way the kernel made them.
    for kind in ("anywidget", "ipywidgets"):
        explorer = widgets.LayoutExplorer.of_type(
            "partition_view<tile=(4x4), tensor_view<64x64xf32, strides=[64,1]>>", picker=kind
        )
        results[kind]["widget_models"] = _count_models(explorer.widget)
    results["both_cells_rendered_s"] = round(shown_s, 2)  # type: ignore[assignment]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    _save("widget_measurements.json", json.dumps(results, indent=2).encode())
    _save("pickers.png", page.screenshot())
    print(json.dumps(results, indent=2))
    # What the choice rests on: anywidget needs one model where ipywidgets needs one per tile.
    assert results["anywidget"]["widget_models"] < results["ipywidgets"]["widget_models"]
    assert results["anywidget"]["clickable_tiles"] == results["ipywidgets"]["clickable_tiles"] == 256
