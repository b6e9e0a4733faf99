"""Smoke test of benchmarks/compile.py: the --quick run (the examples, one run each) prints both
tables with a row per example, ours (also through a compile server) beside NVIDIA's tileiras (or
says why tileiras is missing),
the build of every example for three targets, and judges the warm/cold cache target. The full
benchmark is not run here."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus import example_files

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "compile.py"

pytest.importorskip("triton", reason="the compile benchmark needs Triton (pip install -e '.[bench]')")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_compile", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quick() -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, cwd=REPO, timeout=600
    )


def test_quick_run_succeeds(quick) -> None:
    assert "Traceback" not in quick.stderr, quick.stderr
    assert quick.returncode == 0, quick.stdout + quick.stderr  # 1: a kernel did not compile (FAILED lines)


def test_quick_prints_a_row_per_example(quick) -> None:
    out = quick.stdout
    assert re.search(r"^python -c pass \(floor\)\s+\d+", out, re.M), out
    assert re.search(r"^import compiler.lower, triton\s+\d+", out, re.M), out
    tileiras_found = "tileiras not found" not in out
    for path in example_files():
        # whole process: ours cold, cpu, ours warm, ours through the compile server, then
        # tileiras' two times, the ratios (without and with the server) with their range over
        # the rounds (or -), warm/cold
        ratio = r"(\S+(?: \(\S+\))?)"
        times = r"\s+(\S+)" * 6
        row = re.search(rf"^examples/{path.stem}{times}\s+{ratio}\s+{ratio}\s+(\S+)$", out, re.M)
        assert row, f"no whole-process row for {path.stem}:\n{out}"
        if quick.returncode == 0:
            assert row.group(1).isdigit() and row.group(3).isdigit(), row.group(0)
            if sys.platform.startswith("linux"):  # the compile server's column
                assert row.group(4).isdigit(), row.group(0)
            if tileiras_found:
                assert row.group(5).isdigit() and re.fullmatch(r"[\d.]+x \([\d.]+-[\d.]+\)", row.group(7)), row.group(0)
                if sys.platform.startswith("linux"):
                    assert re.fullmatch(r"[\d.]+x \([\d.]+-[\d.]+\)", row.group(8)), row.group(0)
        verdict = re.search(rf"^examples/{path.stem}\s+\d+\s+\d+\s+(\d\.\d+) (ok|MISS)$", out, re.M)
        if quick.returncode == 0:
            assert verdict, f"no in-process row with a verdict for {path.stem}:\n{out}"
    if quick.returncode == 0:  # Triton's stages of each example's fastest cold compile, and ours
        assert "the fastest cold in-process compile by stage (ms)" in out, out
        for path in example_files():
            row = re.search(rf"^examples/{path.stem}(\s+-?\d+){{8}}$", out, re.M)
            assert row, f"no stage row for {path.stem}:\n{out}"
    if tileiras_found and quick.returncode == 0:  # the build: every example for three targets, one process
        n = len(example_files())
        assert f"a build: {n} kernels x sm_80, sm_90, sm_100 = {3 * n} cubins" in out, out
        assert re.search(r"^  ours \d+ ms \(cpu \d+ ms\), tileiras \d+ ms .* ours/tileiras [\d.]+x \(", out, re.M), out
    assert re.search(r"^targets met: \d+, missed: \d+", out, re.M), out


def test_compile_command_asks_for_a_cubin(tmp_path) -> None:
    """Through the `tileir` program installed beside the Python (what a user runs), else
    through that Python's `-m compiler`."""
    bench = _bench()
    python = tmp_path / "bin" / "python"
    for program in (None, tmp_path / "bin" / "tileir"):
        if program is not None:
            program.parent.mkdir()
            program.write_text("#!python\n")
        cmd = bench.compile_command(str(python), tmp_path / "k.tileirbc", "sm_90", tmp_path / "k.cubin")
        head = [str(program)] if program is not None else [str(python), "-m", "compiler"]
        assert cmd[: len(head) + 1] == [*head, "compile"], cmd
        assert "--emit" in cmd and cmd[cmd.index("--emit") + 1] == "cubin"
        assert cmd[cmd.index("--arch") + 1] == "sm_90"


def test_interleaved_rounds_alternate_the_order_and_prepare_each_run() -> None:
    from benchmarks._common import interleaved_rounds

    seen: list[int] = []
    cmd = [sys.executable, "-c", "pass"]
    times = interleaved_rounds([(cmd, None), (cmd, None), (cmd, None)], 3, seen.append)
    assert seen == [0, 1, 2, 2, 1, 0, 0, 1, 2]
    assert [len(t) for t in times] == [3, 3, 3] and all(w > 0 and c >= 0 for t in times for w, c in t)
    with pytest.raises(RuntimeError, match="exit status 3"):
        interleaved_rounds([([sys.executable, "-c", "raise SystemExit(3)"], None)], 1)
