"""Smoke test of benchmarks/sass.py: the --quick run prints, for each example, our cubin's
registers, spills and SASS instruction counts beside tileiras' (sm_90). The full benchmark is
not run here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import example_files

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "sass.py"

pytest.importorskip("triton", reason="the SASS benchmark needs Triton (pip install -e '.[bench]')")


@pytest.fixture(scope="module")
def quick() -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, cwd=REPO, timeout=600
    )


def run_picked(option: str, picked: str) -> str:
    """The output of a --quick run with `option` (--zoo, --ops, --large) on the kernels
    `picked` names, which must succeed."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", option, "--only", picked],
        capture_output=True, text=True, cwd=REPO, timeout=600,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_quick_run_succeeds(quick) -> None:
    assert "Traceback" not in quick.stderr, quick.stderr
    assert quick.returncode == 0, quick.stdout + quick.stderr  # 1: a kernel did not compile (FAILED lines)


def test_quick_prints_a_block_per_example(quick) -> None:
    out = quick.stdout
    blocks = dict(re.findall(r"^(examples/\w+), sm_90:\n(.*?)\n\n", out, re.M | re.S))
    assert set(blocks) == {f"examples/{p.stem}" for p in example_files()}, out
    for name, block in blocks.items():
        for metric in ("registers", "stack+local B (spills)", "instructions"):
            assert re.search(rf"^{re.escape(metric)}\s+\S+\s+\S+", block, re.M), f"{name}: no {metric} row:\n{block}"
        if quick.returncode == 0:
            ours = re.search(r"^instructions\s+([\d,]+)\s", block, re.M)
            assert ours, f"{name}: our cubin has no instruction count:\n{block}"


def test_zoo_lines_show_tensor_cores_and_expected_refusals() -> None:
    """--zoo prints a line per cuTile kernel; an 8-bit product with a K of 16 uses the tensor
    cores (ops_mma: an f16 dot), and tileiras' refusal of an MX product on sm_90, which the
    zoo expects, is said as such and is not a failure."""
    pytest.importorskip("cuda.tile", reason="--zoo exports kernels with cuTile Python (pip cuda-tile)")
    out = run_picked("--zoo", "vector_add,zoo/matmul_i8,matmul_scaled")
    ours = ("matmul_i8 ", "matmul_scaled ")
    lines = {ln.split()[0]: ln.split() for ln in out.splitlines() if ln.startswith(ours)}
    assert set(lines) == {"matmul_i8", "matmul_scaled"}, out
    _, stack, instructions, tensor_core = map(int, lines["matmul_i8"][1:5])
    assert tensor_core >= 1 and stack == 0 and instructions < 400, lines["matmul_i8"]
    assert "refused (expected)" in " ".join(lines["matmul_scaled"]), lines["matmul_scaled"]


def test_ops_lines_rank_the_ops_by_ratio() -> None:
    """--ops prints one line per op kernel, worst ratio of instructions first, and a count;
    f32 remf (libdevice's fmodf on the GPU) and f32 rsqrt (one rsqrt.approx) are within
    tileiras' instruction counts."""
    out = run_picked("--ops", "vector_add,op/remf-f32,op/addf-rz-f16,op/rsqrt-f32")
    lines = [ln.split() for ln in out.splitlines() if re.match(r"(remf-f32|addf-rz-f16|rsqrt-f32) ", ln)]
    assert [ln[0] for ln in lines] and len(lines) == 3, out
    ratios = [float(ln[-1]) for ln in lines]
    assert ratios == sorted(ratios, reverse=True)
    for ln in lines:
        if ln[0] in ("remf-f32", "rsqrt-f32"):
            assert int(ln[3]) <= int(ln[6]), ln  # instructions: ours, tileiras'
    assert "3 ops: " in out


def test_large_tiles_line() -> None:
    """--large prints the 128x128 one-op kernels as --ops prints its own: our registers,
    stack and instructions beside tileiras'."""
    out = run_picked("--large", "vector_add,op/addf-f32-128x128")
    assert "One op on 128x128 tiles, sm_90" in out, out
    (line,) = [ln.split() for ln in out.splitlines() if ln.startswith("addf-f32-128x128 ")]
    ours, theirs = int(line[3]), int(line[6])  # instructions
    assert ours > 0 and theirs > 0 and float(line[-1]) == pytest.approx(ours / theirs, abs=0.01), line
    # In slices (compiler/lower/stripmine.py) ours is about half tileiras' (130 against 267);
    # the whole tile was 2.2 times it (595).
    assert ours <= theirs, line
    assert "1 ops: " in out
