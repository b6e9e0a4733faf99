"""`%%tileir --run` of a runaway kernel: `--max-steps` and `--timeout` (as `tileir run`'s) stop
it, and the report naming the loop's cell line is rendered, not a traceback."""

from __future__ import annotations

import re
import time

import pytest

from compiler.interp import DEFAULT_MAX_STEPS
from tests.interp.test_runaway import FOR, LOOP, loop_line

from .conftest import Shell


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEIR_NO_GPU", "1")  # `auto` is the CPU interpreter, as on CI


def cell_line(text: str, mnemonic: str) -> str:
    """`line:col` of the loop in a cell whose first line is the magic (the kernel starts on
    the cell's second line)."""
    line, col = loop_line(text, mnemonic).split(":")
    return f"{int(line) + 1}:{col}"


def no_traceback(text: str) -> None:
    assert "Traceback" not in text and 'File "' not in text


@pytest.mark.parametrize(("mnemonic", "text"), [("loop", LOOP), ("for", FOR)])
def test_max_steps_stops_a_runaway_cell(shell: Shell, mnemonic: str, text: str) -> None:
    run = shell.run(f"%%tileir spin_{mnemonic} --run --grid 2 --max-steps 250\n" + text)
    assert not run.ok
    shown = run.text()
    found = re.search(r"(In\[\d+\]):(\d+:\d+): error: (\w+): the kernel ran past 250 loop iterations", shown)
    assert found, shown
    assert found.group(2) == cell_line(text, mnemonic) and found.group(3) == mnemonic
    assert "--max-steps 250" in shown and "@k failed" in shown
    assert f"TileIRError: --run failed (the module is bound as spin_{mnemonic})" in run.stdout
    no_traceback(shown + run.html())


def test_timeout_stops_a_runaway_cell(shell: Shell) -> None:
    start = time.perf_counter()
    run = shell.run("%%tileir spin_timeout --run --grid 2 --max-steps 0 --timeout 0.3\n" + LOOP)
    assert time.perf_counter() - start < 60
    assert not run.ok
    assert f":{cell_line(LOOP, 'loop')}: error: loop: the kernel ran past its time limit of 0.3 s" in run.text()
    no_traceback(run.text() + run.html())


def test_budget_options_are_checked_and_documented(shell: Shell) -> None:
    run = shell.run("%%tileir spin_bad --run --max-steps -1\n" + LOOP)
    assert not run.ok
    assert "--max-steps -1: give 0 (no limit) or more" in run.text()
    no_traceback(run.text())
    assert f"default {DEFAULT_MAX_STEPS}" in shell.ip.find_cell_magic("tileir").__doc__
