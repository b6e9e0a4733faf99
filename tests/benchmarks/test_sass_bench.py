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
