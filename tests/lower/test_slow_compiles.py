"""Kernels whose compile Triton did not finish (tests/lower/slow_compiles, each cut down by
tests/lower/reduce.py --until timeout, its first line naming its fuzz seed and weights, whose
arguments still fit it). Found by an aimed campaign (--weight mma=10 --weight mma_scaled=5
--compile sm_80, seeds 110000-110400: 110281 and 110391). What they shared: a batched product
(2x64x64) whose result feeds, through a chain of ops, another product. Triton gives a batched
dot every warp on the batch axis; 3.6 gave the chain a layout in which every lane of a warp
held the whole 2x64x64 operand (1,024 elements a thread) and its LLVM lowering never ended (the
module after ConvertTritonGPUToLLVM passed 800 MB within 20 s); 3.9 compiled the one kept here
in 2 s but not the uncut 110281 in 60 s. Since a batch smaller than the warps is split into 2-D
dots (compiler/lower/ops_mma.py, per_batch), both compile for every target in about 1 s (the
uncut 110281 in 3 s). The test keeps them compiling within a limit, through `tileir compile`,
whose forked compile is killed at the limit, and the interpreters agreeing on them."""

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
@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100"])
def test_it_compiles_within_a_limit(path: Path, arch: str) -> None:
    pytest.importorskip("triton")
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", str(path), "--arch", arch, "--no-cache", "--emit", "ptx",
         "-o", os.devnull],
        capture_output=True, text=True, cwd=REPO, timeout=300,
        env={**os.environ, "TILEIR_COMPILE_TIMEOUT": "20"},  # (they compile in under 2 s)
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "spills" in done.stderr and "Triton did not finish" not in done.stderr
