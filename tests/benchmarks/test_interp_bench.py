"""Smoke test of benchmarks/interp.py: the three benchmark kernels run on small ragged sizes and
give NumPy's results (the script exits 1 on a wrong result). The full benchmark is not run here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from compiler.interp import SEMANTICS

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "interp.py"
NEEDED = (
    "make_token assume make_tensor_view make_partition_view get_tile_block_id load_view_tko store_view_tko addf subf"
    " divf exp maxf reduce reshape broadcast constant get_index_space_shape mmaf"
).split()


def _bench():
    spec = importlib.util.spec_from_file_location("bench_interp", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _missing() -> list[str]:
    # `for` runs in the machine itself, not through the semantics table.
    return [op for op in NEEDED if "cuda_tile." + op not in SEMANTICS]


@pytest.fixture(scope="module")
def bench():
    missing = _missing()
    if missing:
        pytest.skip(f"semantics not there yet: {', '.join(missing)}")
    return _bench()


def test_kernels_verify_and_are_canonical():
    from compiler.runtime import load_module
    from compiler.text import print_module

    for name in ("vector_add", "softmax", "matmul"):
        path = SCRIPT.parent / "kernels" / f"{name}.tileir"
        module = load_module(path)
        assert print_module(module) == path.read_text(encoding="utf-8"), f"run: tileir fmt -i {path}"


def test_quick_run_matches_numpy(bench, capsys):
    assert bench.main(["--quick", "--no-triton", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "WRONG RESULT" not in out
    for label in ("vector add", "row softmax", "matmul"):
        assert label in out


@pytest.mark.slow
def test_quick_run_with_triton(bench, capsys):
    if bench.triton_missing():
        pytest.skip(bench.triton_missing())
    assert bench.main(["--quick", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "Triton worker failed" not in out
    assert "WRONG RESULT" not in out


def test_compare_reports_the_worst_mismatch():
    bench = _bench()
    want = np.zeros((2, 3), dtype=np.float32)
    got = want.copy()
    assert bench.compare(got, want, 0.0, 0.0) is None
    got[1, 2] = 5
    got[0, 0] = 1
    assert bench.compare(got, want, 0.0, 0.0) == "2 elements differ, worst at (1, 2): 5.0 vs 0.0"
    assert bench.compare(got[:1], want, 0.0, 0.0) == "shape (1, 3) != (2, 3)"


def test_triton_grid_prefixes():
    bench = _bench()
    assert bench._prefix_grid([16384], 4) == [4]
    assert bench._prefix_grid([8, 8], 4) == [4, 1]
    assert bench._prefix_grid([8, 8], 20) == [8, 2]
    assert bench._prefix_grid([8, 8], 1000) == [8, 8]
