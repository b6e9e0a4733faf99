"""examples/tileir_tour.ipynb executed headless by nbclient on the "Tile IR" kernel: no error
outputs, and the results it shows are the right ones. The executed notebook is kept under
tests/artifacts/ for a look."""

from __future__ import annotations

import os
import re
import tempfile

import pytest

nbclient = pytest.importorskip("nbclient", reason="the `test` extra (nbclient) is not installed")
nbformat = pytest.importorskip("nbformat", reason="the `test` extra (nbformat) is not installed")

from .conftest import ARTIFACTS, EXAMPLES, example, needs_triton  # noqa: E402

TOUR = EXAMPLES / "tileir_tour.ipynb"


def test_tour_cells_are_the_example_kernels() -> None:
    """The tour's %%tileir cells hold the example files verbatim, so that the two never drift."""
    nb = nbformat.read(TOUR, as_version=4)
    cells = {
        c.source.split("\n", 1)[0]: c.source.split("\n", 1)[1] for c in nb.cells if c.source.startswith("%%tileir")
    }
    assert cells["%%tileir vadd"] == example("vector_add")
    assert cells["%%tileir softmax --layout"] == example("softmax")
    assert cells["%%tileir matmul"] == example("matmul")
    assert nb.metadata.kernelspec.name == "tileir"
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the tour without outputs"


@needs_triton
@pytest.mark.usefixtures("kernelspec")
def test_tour_runs_headless(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEIR_NO_GPU", "1")  # the kernel inherits it: the notes are CI's
    nb = nbformat.read(TOUR, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=240, kernel_name="tileir", resources={"metadata": {"path": str(EXAMPLES)}}
    )
    client.execute()
    _keep(nb)

    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    texts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        text = ""
        for o in cell.outputs:
            text += o.get("text", "") + o.get("data", {}).get("text/plain", "") + "\n"
        texts.append((cell.source, text))

    def output_of(prefix: str) -> str:
        return next(t for s, t in texts if s.startswith(prefix))

    assert "backends here: cpu, triton-interpret" in output_of("%load_ext")
    assert "vadd = Tile IR module: @vector_add(" in output_of("%%tileir vadd")
    first_run = output_of("n = 4000")
    assert "vector_add (4, 1, 1) cpu" in first_run
    assert "no GPU on this machine: the CPU interpreter ran" in first_run
    assert re.search(r"ok \(4000 elements, max abs error 0;", first_run)
    magic_run = output_of("%tileir vadd --run")
    assert "check arg2 = arg0 + arg1: ok (4000 elements" in magic_run
    assert re.search(r"cpu: median [\d.]+ .?s over 3 runs", magic_run)
    shown = output_of("%tileir vadd --show")
    assert "@vector_add: Triton source for sm_90" in shown and "@triton.jit" in shown
    assert "@vector_add: PTX for sm_90" in shown and ".target sm_90" in shown
    assert "partition_view: tile 1024 over tensor" in output_of("%tileir vadd --layout")
    assert "partition_view: tile 4x1024 over tensor 14x3584" in output_of("%%tileir softmax")
    assert re.search(r"ok \(8000 elements", output_of("x = rng"))
    assert re.search(r"ok \(20480 elements", output_of("A = rng"))
    backends = output_of("xs, ys = ")
    for kernel in ("vector_add", "softmax", "matmul"):
        assert f"@{kernel} on every available backend:" in backends
    assert backends.count("  cpu: median") == 3
    assert re.search(r"triton-interpret: median .*max difference from cpu: 0", backends)
    cutile = output_of("try:\n    import cuda.tile")
    assert "saxpy (4, 1, 1) cpu ok" in cutile or "cuTile Python is not installed" in cutile, cutile
    # The two layout explorers are live widgets, with their state saved in the notebook.
    widget_outputs = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert len(widget_outputs) == 2
    assert "application/vnd.jupyter.widget-state+json" in nb.metadata.get("widgets", {})


def _keep(nb) -> None:
    """The executed notebook, written atomically under the artifacts folder."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=ARTIFACTS, suffix=".ipynb.tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        nbformat.write(nb, f)
    os.replace(tmp, ARTIFACTS / "tileir_tour.executed.ipynb")
