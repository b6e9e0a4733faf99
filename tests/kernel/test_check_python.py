"""The notebook's `--check` shares `tileir run --check`'s code: Python in one namespace (a
lambda sees argN and np), with the user's rights; an expression that is not Python fails the
cell under `--check` before the launch, in one line, without a traceback."""

from __future__ import annotations

import pytest

from .conftest import CellRun, Shell, example

VECTOR_ADD = example("vector_add")
RUN = "%%tileir vadd_check --run vector_add --grid 4 --args a,b,c --cutile-args"


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEIR_NO_GPU", "1")


def no_traceback(run: CellRun) -> None:
    everything = run.text() + run.html()
    assert "Traceback" not in everything and 'File "' not in everything


def test_a_lambda_sees_the_arguments(shell: Shell, arrays) -> None:
    run = shell.run(f"{RUN} --check 'arg2 = (lambda x: np.add(x, arg1))(arg0)'\n{VECTOR_ADD}")
    assert run.ok, run.text()
    assert "check arg2 = (lambda x: np.add(x, arg1))(arg0): ok (4000 elements" in run.text()


def test_an_expression_that_is_not_python_fails_before_the_launch(shell: Shell, arrays) -> None:
    _, _, c = arrays
    run = shell.run(f"{RUN} --check 'arg2 = arg0 +'\n{VECTOR_ADD}")
    assert not run.ok
    assert "--check 'arg2 = arg0 +': not a Python expression: invalid syntax" in run.text()
    assert "TileIRError: --check failed" in run.stdout
    assert not c.any()  # the kernel did not run
    no_traceback(run)
