"""`%%tileir` cells on a real GPU (marker `gpu`; CI has none and skips them): `auto` picks the
GPU and says so, both GPU backends run a cell's kernel and equal NumPy, GPU arrays of the
notebook are used in place, `--time` times on the GPU, and a module bound by a cell launches
from Python on the GPU."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import Shell, example

pytestmark = pytest.mark.gpu

VECTOR_ADD = example("vector_add")
RUN = "%%tileir vadd_gpu --run vector_add --grid 4 --args a,b,c --cutile-args"


def test_auto_runs_a_cell_on_the_gpu_and_says_so(shell: Shell, arrays) -> None:
    a, b, c = arrays
    run = shell.run(f"{RUN} --check 'arg2 = arg0 + arg1'\n{VECTOR_ADD}")
    assert run.ok, run.text()
    assert "backend auto -> triton on the GPU" in run.text()
    assert "check arg2 = arg0 + arg1: ok" in run.text()
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("backend", ["triton", "tileiras"])
def test_each_gpu_backend_runs_a_cell(shell: Shell, arrays, backend: str) -> None:
    a, b, c = arrays
    run = shell.run(f"{RUN} --backend {backend}\n{VECTOR_ADD}")
    assert run.ok, run.text()
    assert f"backend {backend}" in run.text()
    np.testing.assert_array_equal(c, a + b)


def test_time_times_on_the_gpu(shell: Shell, arrays) -> None:
    a, b, c = arrays
    run = shell.run(f"{RUN} --backend triton --time 3\n{VECTOR_ADD}")
    assert run.ok, run.text()
    assert any(t.startswith("triton: median ") and "over 3 runs (min " in t for t in run.texts()), run.text()
    np.testing.assert_array_equal(c, a + b)


def test_torch_gpu_tensors_of_the_notebook_are_used_in_place(shell: Shell) -> None:
    torch = pytest.importorskip("torch")
    a = torch.rand(4000, device="cuda")
    b = torch.rand(4000, device="cuda")
    c = torch.zeros(4000, device="cuda")
    shell.ns.update(a=a, b=b, c=c)
    run = shell.run(f"{RUN}\n{VECTOR_ADD}")
    assert run.ok, run.text()
    assert shell.ns["c"] is c and c.device.type == "cuda"
    assert torch.equal(c, a + b)


def test_a_bound_module_launches_on_the_gpu_from_python(shell: Shell, arrays) -> None:
    a, b, c = arrays
    assert shell.run("%%tileir vadd_py\n" + VECTOR_ADD).ok
    result = shell.ns["vadd_py"].vector_add[4](a, b, c, cutile_args=True)
    assert result.backend == "triton" and result.grid == (4, 1, 1)
    np.testing.assert_array_equal(c, a + b)
