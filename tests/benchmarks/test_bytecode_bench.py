"""Smoke test of benchmarks/bytecode.py: the --quick run prints every row of both tables and the
ratio against NVIDIA's tileirdisasm (or says why it is skipped). The full benchmark is not run here."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.runtime import find_tileirdisasm

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "bytecode.py"

IN_PROCESS_ROWS = ("decode (read_bytecode)", "decode + print", "parse + verify + encode", "parse + encode")
# A table row: the step, the time in ms, then (CPU ms for processes and) three throughput
# columns, each a number or "-".
_ROW_TAIL = r"\s+\d+\.\d(?:\s+(?:\d[\d.,]*|-)){3,4}\s*$"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_bytecode", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _has_row(out: str, step: str) -> bool:
    return re.search(r"^" + re.escape(step) + _ROW_TAIL, out, re.M) is not None


@pytest.fixture(scope="module")
def quick_output() -> str:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_quick_module_is_large_enough(quick_output):
    bench = _bench()
    m = re.search(r"^module: ([\d,]+) bytes of bytecode", quick_output, re.M)
    assert m, quick_output
    assert int(m.group(1).replace(",", "")) >= bench.QUICK_SIZE_KB * 1024


def test_quick_prints_the_in_process_rows(quick_output):
    for step in IN_PROCESS_ROWS:
        assert _has_row(quick_output, step), f"no row {step!r} in:\n{quick_output}"


def test_quick_prints_the_process_rows(quick_output):
    assert _has_row(quick_output, "python -c pass (start-up floor)"), quick_output
    disasm = "tileir disasm" if "`tileir disasm` does not exist" not in quick_output else "python -c read+print"
    assert _has_row(quick_output, f"{disasm} big.tileirbc"), quick_output
    assert _has_row(quick_output, "  the same without .pyc files"), quick_output
    asm = "tileir asm" if "`tileir asm` does not exist" not in quick_output else "python -c parse+verify+encode"
    assert _has_row(quick_output, f"{asm} big.tileir"), quick_output
    assert "wrote bytes different" not in quick_output, quick_output


def test_quick_prints_the_ratio_against_tileirdisasm(quick_output):
    if find_tileirdisasm() is None:
        assert "ratio skipped: tileirdisasm not found" in quick_output, quick_output
        pytest.skip("tileirdisasm is not installed (pip install nvidia-cuda-tileiras)")
    assert _has_row(quick_output, "tileirdisasm big.tileirbc"), quick_output
    ratio = re.search(r"^ratio: .+ / tileirdisasm = (\d+\.\d)x \(goal <= 10x: not judged", quick_output, re.M)
    assert ratio, quick_output
    assert float(ratio.group(1)) > 0
    # Both processes printed the same module (the benchmark compares their outputs).
    assert "the two disassemblies are identical" in quick_output, quick_output


def test_ratio_is_skipped_with_the_reason_without_tileirdisasm(monkeypatch, capsys):
    import compiler.runtime

    monkeypatch.setattr(compiler.runtime, "find_tileirdisasm", lambda: None)
    bench = _bench()
    assert bench.main(["--quick", "--size-kb", "2", "--strict"]) == 0
    out = capsys.readouterr().out
    assert "ratio skipped: tileirdisasm not found" in out
    assert not _has_row(out, "tileirdisasm big.tileirbc")


def test_module_is_deterministic_and_sized():
    bench = _bench()
    first = bench.build_module(3, (13, 3))
    again = bench.build_module(3, (13, 3))
    assert first.data == again.data and first.text == again.text
    assert len(first.data) >= 3 * 1024
    # The smallest such module: one copy fewer stays under the size.
    from compiler.bytecode import read_bytecode

    assert first.copies >= 1
    kernels = bench.kernel_bodies(sorted(bench.EXAMPLES.glob("*.tileir")))
    assert [name for name, _ in kernels] == first.kernels
    if first.copies > 1:
        smaller = bench.encode_text(bench.module_text(kernels, first.copies - 1), (13, 3))
        assert len(smaller) < 3 * 1024
    # Every copy is there under its own name when read back.
    module = read_bytecode(first.data)
    (wrapper,) = module.body.ops
    symbols = [op.properties["sym_name"].value for op in wrapper.regions[0].blocks[0].ops]
    assert len(symbols) == len(set(symbols)) == first.copies * len(first.kernels)
