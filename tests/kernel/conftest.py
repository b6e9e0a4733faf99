"""Shared pieces of the notebook tests: a real IPython shell with the extension loaded, output
capture, and the "Tile IR" kernelspec installed into a temporary prefix (through `python -m
tile_kernel install --prefix`, as a user would) and made visible through JUPYTER_PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("IPython", reason="the `test` extra (IPython, ipykernel) is not installed")
pytest.importorskip("ipywidgets", reason="the `test` extra (ipywidgets) is not installed")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# Screenshots and measurements of the browser tests (gitignored).
ARTIFACTS = Path(os.environ.get("TILEIR_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))


def example(name: str) -> str:
    return (EXAMPLES / f"{name}.tileir").read_text()


@dataclass
class CellRun:
    """What one cell did: its result, the display outputs (mime bundles), stdout and stderr."""

    result: Any
    outputs: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.result.success

    def texts(self) -> list[str]:
        return [o.get("text/plain", "") for o in self.outputs]

    def text(self) -> str:
        return "\n".join([*self.texts(), self.stdout, self.stderr])

    def html(self) -> str:
        return "\n".join(o.get("text/html", "") for o in self.outputs)

    def widgets(self) -> list[dict[str, Any]]:
        return [o for o in self.outputs if "application/vnd.jupyter.widget-view+json" in o]


class Shell:
    """An IPython InteractiveShell with `%load_ext tile_kernel`, running cells as a notebook
    would (history on, so that `In[n]` numbers advance) and capturing what they display."""

    def __init__(self) -> None:
        from IPython.core.interactiveshell import InteractiveShell

        self.ip = InteractiveShell.instance()
        self.ip.run_line_magic("load_ext", "tile_kernel")

    def run(self, code: str) -> CellRun:
        from IPython.utils.capture import capture_output

        with capture_output() as captured:
            result = self.ip.run_cell(code, store_history=True)
        return CellRun(result, [o.data for o in captured.outputs], captured.stdout, captured.stderr)

    @property
    def ns(self) -> dict[str, Any]:
        return self.ip.user_ns


@pytest.fixture(scope="session")
def shell() -> Shell:
    return Shell()


@pytest.fixture
def arrays(shell: Shell):
    """The vector-add cells' inputs, bound in the notebook as a, b, c (and NumPy as np)."""
    import numpy as np

    rng = np.random.default_rng(1)
    a = rng.random(4000, dtype=np.float32)
    b = rng.random(4000, dtype=np.float32)
    c = np.zeros(4000, dtype=np.float32)
    shell.ns.update(np=np, a=a, b=b, c=c)
    return a, b, c


@pytest.fixture(scope="session")
def kernelspec() -> Iterator[Path]:
    """The kernelspec in a temporary prefix; JUPYTER_PATH points at it for the session."""
    pytest.importorskip("ipykernel", reason="the `test` extra (ipykernel) is not installed")
    prefix = Path(tempfile.mkdtemp(prefix="tileir-kernelspec-"))
    done = subprocess.run(
        [sys.executable, "-m", "tile_kernel", "install", "--prefix", str(prefix)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    saved = os.environ.get("JUPYTER_PATH")
    share = str(prefix / "share" / "jupyter")
    os.environ["JUPYTER_PATH"] = share if not saved else os.pathsep.join([share, saved])
    try:
        yield prefix
    finally:
        if saved is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = saved
        shutil.rmtree(prefix, ignore_errors=True)


def has_triton() -> bool:
    import importlib.util

    return importlib.util.find_spec("triton") is not None and importlib.util.find_spec("torch") is not None


needs_triton = pytest.mark.skipif(not has_triton(), reason="Triton and torch are not installed (the `test` extra)")
