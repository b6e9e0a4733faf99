"""Kernels whose compile Triton does not finish (tests/lower/slow_compiles, each cut down by
tests/lower/reduce.py --until timeout, its first line naming its fuzz seed and weights, whose
arguments still fit it). Found by an aimed campaign (--weight mma=10 --weight mma_scaled=5
--compile sm_80, seeds 110000-110400: 110281 and 110391). What they share: a product with N = 1
whose operand is computed by a chain of ops from another product's result (here an f8E5M2
conversion of a K = 1 product, feeding mmaf_scaled). Triton 3.6 gives that chain a layout in
which every lane of a warp holds the whole 2x64x64 operand (1,024 elements a thread) and its
LLVM lowering never ends (the module after ConvertTritonGPUToLLVM passed 800 MB within 20 s);
Triton 3.9 compiles the one kept here in 2 s (the uncut kernel of 110281 it did not finish in
60 s for sm_80; nor did 3.6 for sm_90). Not worked around: the guard stops the compile at its limit with
one line. The test says when a Triton 3.6 finishes one or a 3.9 does not, and that the
interpreters agree on them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import REPO

from .harness import run_both
from .reduce import _HEADER

FOUND = sorted(Path(__file__).with_name("slow_compiles").glob("*.tileir"))


def case_of(path: Path):
    from .fuzz import kernel, parse_weights

    text = path.read_text()
    m = _HEADER.match(text)
    assert m, f"{path.name}: the first line names the fuzz seed"
    weights = m.group(2).split(" --weight ") if m.group(2) else []
    return text, kernel(int(m.group(1)), weights=parse_weights(weights) or None)


@pytest.mark.parametrize("path", FOUND, ids=lambda p: p.stem)
def test_the_interpreters_agree(path: Path) -> None:
    from .fuzz import arguments

    text, case = case_of(path)
    run_both(text, "k", case.grid, arguments(case))


@pytest.mark.parametrize("path", FOUND, ids=lambda p: p.stem)
def test_triton_36_does_not_finish_compiling_it(path: Path) -> None:
    """Through `tileir compile`, whose forked compile is killed at the limit (a compile on a
    thread of this test process would spin on for the rest of the run)."""
    pytest.importorskip("triton")
    from .harness import triton_version

    done = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", str(path), "--arch", "sm_80", "--no-cache", "--emit", "ptx",
         "-o", os.devnull],
        capture_output=True, text=True, cwd=REPO, timeout=300,
        env={**os.environ, "TILEIR_COMPILE_TIMEOUT": "20"},  # (its siblings compile in under 2 s)
    )  # fmt: skip
    if triton_version() >= (3, 9):
        assert done.returncode == 0, done.stderr
    elif triton_version() <= (3, 6):
        assert done.returncode == 3, done.stderr
        assert "Triton did not finish compiling @k within the limit of 20 s" in done.stderr
    else:
        pytest.skip(f"Triton {triton_version()} was not checked (3.6 does not finish, 3.9 does)")
