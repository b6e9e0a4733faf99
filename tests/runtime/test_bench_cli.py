"""`tileir bench`: warm-up and timed launches per backend, one row each (tiny grids: fast),
and `tileir run --backend auto|triton|tileiras` without a GPU."""

from __future__ import annotations

import importlib.util
import re

import pytest

from compiler import cli
from compiler.cli import launch as cli_launch
from compiler.runtime import find_kernel, load_module
from tests.corpus import REPO

VADD = str(REPO / "examples" / "vector_add.tileir")
MATMUL = str(REPO / "examples" / "matmul.tileir")
VADD_ARGS = ("--grid", "1", "--cutile-args", "--arg", "rand:100:f32", "--arg", "rand:100:f32", "--arg", "zeros:100:f32")
HAS_TRITON_INTERPRETER = all(importlib.util.find_spec(m) is not None for m in ("triton", "torch"))


@pytest.fixture(autouse=True)
def _no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # as in CI: no GPU visible


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def rows(out: str) -> list[list[str]]:
    lines = out.strip().splitlines()
    assert lines[0].startswith("kernel @") and lines[1].split()[0] == "backend"
    return [line.split() for line in lines[2:]]


def test_bench_cpu_prints_a_row_with_times_bandwidth_and_ratio(capsys) -> None:
    status, out, err = run(capsys, "bench", VADD, *VADD_ARGS, "--backend", "cpu", "--repeat", "2", "--warmup", "1")
    assert status == 0 and err == ""
    assert out.splitlines()[0] == "kernel @vector_add  grid 1x1x1  warm-up 1, timed 2 per backend"
    assert out.splitlines()[1].split() == ["backend", "median", "min", "GB/s", "ratio"]  # no mma: no TFLOP/s
    (row,) = rows(out)
    assert row[0] == "cpu" and row[-1] == "1.00x" and float(row[5]) > 0


@pytest.mark.skipif(not HAS_TRITON_INTERPRETER, reason="Triton's interpreter needs triton and torch")
def test_bench_two_backends_with_ratios(capsys) -> None:
    status, out, _ = run(capsys, "bench", VADD, *VADD_ARGS, "--backend", "cpu,triton-interpret", "--repeat", "1")
    assert status == 0
    table = rows(out)
    assert [r[0] for r in table] == ["cpu", "triton-interpret"] and table[0][-1] == "1.00x"
    assert table[1][-1].endswith("x")


def test_bench_rounds_give_the_median_ratio_and_its_range(capsys) -> None:
    status, out, _ = run(
        capsys, "bench", VADD, *VADD_ARGS, "--backend", "cpu,auto", "--repeat", "2", "--warmup", "0", "--rounds", "3"
    )
    assert status == 0
    assert out.splitlines()[0].endswith("timed 2 per backend, 3 rounds (ratio: median of the rounds', and their range)")
    first, second = rows(out)
    assert first[0] == "cpu" and first[-1] == "1.00x"  # the anchor: no range
    found = re.search(r" (\d+\.\d\d)x \((\d+\.\d\d)-(\d+\.\d\d)\)", " ".join(second))  # 1.03x (0.97-1.10)
    assert found is not None, second
    ratio, low, high = (float(x) for x in found.groups())
    assert low <= ratio <= high


@pytest.mark.skipif(not HAS_TRITON_INTERPRETER, reason="Triton's interpreter needs triton and torch")
def test_bench_rounds_alternate_the_order_of_the_backends(capsys, monkeypatch) -> None:
    order: list[str] = []
    real = cli_launch.Launchable.launch

    def spy(self, args, command, values, backend, options, timed=None):
        order.append(backend)
        return real(self, args, command, values, backend, options, timed=timed)

    monkeypatch.setattr(cli_launch.Launchable, "launch", spy)
    argv = ("--backend", "cpu,triton-interpret", "--repeat", "1", "--warmup", "0", "--rounds", "3")
    status, out, _ = run(capsys, "bench", VADD, *VADD_ARGS, *argv)
    assert status == 0 and len(rows(out)) == 2
    assert order == ["cpu", "triton-interpret", "triton-interpret", "cpu", "cpu", "triton-interpret"]


def test_bench_auto_says_it_ran_on_the_cpu(capsys) -> None:
    status, out, _ = run(capsys, "bench", VADD, *VADD_ARGS, "--repeat", "1", "--warmup", "0")
    assert status == 0
    assert out.strip().splitlines()[-1].startswith("cpu (auto)")
    assert out.strip().endswith("auto: no GPU, ran on the CPU interpreter")


def test_bench_reports_tflops_for_mma_kernels(capsys) -> None:
    entry = find_kernel(load_module(MATMUL), None)
    assert cli_launch.mma_flops(entry) == 2 * 64 * 64 * 32  # one mmaf of 64x32 by 32x64 per tile block
    argv = ["--grid", "1,1", "--cutile-args", "--arg", "rand:64x32:f16", "--arg", "rand:32x64:f16"]
    status, out, _ = run(
        capsys, "bench", MATMUL, *argv, "--arg", "zeros:64x64:f16", "--backend", "cpu", "--repeat", "1"
    )
    assert status == 0 and "TFLOP/s" in out.splitlines()[1]
    (row,) = rows(out)
    assert float(row[6]) > 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--backend", "gpu"), "tileir: error: --backend: unknown backend 'gpu'"),
        (("--backend", "cpu,triton"), "tileir: error: --backend triton: the triton backend runs on an NVIDIA GPU"),
        (("--backend", "cpu", "--repeat", "0"), "tileir: error: --repeat must be at least 1"),
        (("--backend", "cpu", "--rounds", "0"), "tileir: error: --rounds must be at least 1"),
        (("--backend", ","), "tileir: error: --backend: name at least one backend"),
    ],
)
def test_bench_usage_errors_are_one_line(capsys, argv: tuple[str, ...], message: str) -> None:
    status, out, err = run(capsys, "bench", VADD, *VADD_ARGS, *argv)
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith(message)


def test_bench_a_wrong_argument_count_is_a_usage_error(capsys) -> None:
    status, _, err = run(capsys, "bench", VADD, "--grid", "1", "--arg", "1", "--backend", "cpu")
    assert status == 2 and "takes 9 arguments" in err


def test_run_auto_is_the_default_and_says_so(capsys) -> None:
    status, out, _ = run(capsys, "run", VADD, *VADD_ARGS)
    first = out.splitlines()[0]
    assert status == 0 and "  backend cpu  time " in first
    assert first.endswith("(auto: no GPU, ran on the CPU interpreter)")


@pytest.mark.parametrize("backend", ["triton", "tileiras"])
def test_run_gpu_backends_explain_there_is_no_gpu(capsys, backend: str) -> None:
    status, out, err = run(capsys, "run", VADD, *VADD_ARGS, "--backend", backend)
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"tileir: error: --backend {backend}: the {backend} backend runs on an NVIDIA GPU")


def test_bench_a_kernel_fault_is_reported_in_one_line_per_fact(capsys) -> None:
    argv = ["--grid", "2", "--cutile-args", "--arg", "rand:100:f32", "--arg", "rand:100:f32", "--arg", "zeros:100:f32"]
    status, out, err = run(capsys, "bench", VADD, *argv, "--backend", "cpu")
    assert status == 1 and out == ""
    assert err.strip().splitlines()[-1] == "tileir bench: kernel @vector_add failed"
