"""`ftof`'s rounding modes: our verifier accepts and refuses exactly what NVIDIA's tileiras 13.5
does, in its words, for every pair of float types and every one of the eight modes (each case
written as bytecode and compiled by tileiras where it is installed); the modes it accepts run
alike on the CPU interpreter and under Triton's interpreter, rounding the way they say."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import numpy as np
import pytest

from compiler.bytecode import BytecodeWriteError, read_bytecode, write_bytecode
from compiler.ir import attributes as A
from compiler.ir.enums import ROUNDING_MODE
from compiler.runtime import launch
from compiler.text import parse, print_module
from compiler.verify import verify

from .util import run_tileiras

TYPES = ["f64", "f32", "tf32", "f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E8M0FNU"]
MODES = list(ROUNDING_MODE.keywords)  # approx, full and nearest_int_to_zero too: bytecode can say them

# Cases tileiras 13.5's verifier accepts but whose compile then fails without a message (seen
# for every target): directed rounding widening an 8- or 16-bit type to tf32, or an f8 to bf16,
# and nearest_away widening an f8 to bf16.
TILEIRAS_SILENT_FAILURES = {
    (src, dst, mode)
    for mode in ("negative_inf", "positive_inf")
    for src, dst in [(s, "tf32") for s in ("f16", "bf16", "f8E4M3FN", "f8E5M2")]
    + [(s, "bf16") for s in ("f8E4M3FN", "f8E5M2")]
} | {("f8E4M3FN", "bf16", "nearest_away"), ("f8E5M2", "bf16", "nearest_away")}


def kernel(src: str, dst: str, mode: str, n: int = 16) -> str:
    def pointers(name: str, t: str) -> str:
        return (
            f"    %{name}0 = reshape %{name} : tile<ptr<{t}>> -> tile<1xptr<{t}>>\n"
            f"    %{name}1 = broadcast %{name}0 : tile<1xptr<{t}>> -> tile<{n}xptr<{t}>>\n"
            f"    %{name}s = offset %{name}1, %off : tile<{n}xptr<{t}>>, tile<{n}xi32> -> tile<{n}xptr<{t}>>\n"
        )

    return (
        f"cuda_tile.module @m {{\n  entry @k(%x: tile<ptr<{src}>>, %y: tile<ptr<{dst}>>) {{\n"
        f"    %off = iota : tile<{n}xi32>\n{pointers('x', src)}{pointers('y', dst)}"
        f"    %v, %t = load_ptr_tko weak %xs : tile<{n}xptr<{src}>> -> tile<{n}x{src}>, token\n"
        f"    %c = ftof %v rounding<{mode}> : tile<{n}x{src}> -> tile<{n}x{dst}>\n"
        f"    %t2 = store_ptr_tko weak %ys, %c : tile<{n}xptr<{dst}>>, tile<{n}x{dst}> -> token\n"
        "    return\n  }\n}\n"
    )


def _ours(src: str, dst: str, mode: str):
    """(module, our verifier's ftof message or None). The mode is set on the parsed op: the
    text form refuses approx, full and nearest_int_to_zero for ftof, bytecode can carry them."""
    module = parse(kernel(src, dst, "nearest_even"), "k.tileir").module
    for op in module.walk():
        if op.name == "cuda_tile.ftof":
            op.properties["rounding_mode"] = A.EnumAttr(ROUNDING_MODE, mode)
    found = [d.message for d in verify(module) if "ftof" in d.message]
    return module, (found[0].split(" op ", 1)[1] if found else None)


def test_rules_match_tileiras(tmp_path: Path) -> None:
    from compiler.lower.sass import find_tileiras

    tileiras = find_tileiras()
    if tileiras is None:
        pytest.skip("NVIDIA's tileiras is not installed (pip install nvidia-cuda-tileiras)")
    differences, silent = [], set()
    for src, dst in itertools.permutations(TYPES, 2):
        for mode in MODES:
            module, ours = _ours(src, dst, mode)
            path = tmp_path / "k.tileirbc"
            # Written whatever our verdict (the writer checks versions only).
            path.write_bytes(write_bytecode(module, (13, 4)))
            done = run_tileiras(str(tileiras), path, "sm_100", tmp_path / "k.cubin")
            said = next((line for line in done.stderr.splitlines() if "'cuda_tile.ftof' op " in line), None)
            theirs = said.split("'cuda_tile.ftof' op ", 1)[1].strip() if said else None
            if done.returncode != 0 and theirs is None:
                silent.add((src, dst, mode))
            if ours != theirs:
                differences.append(f"{src} -> {dst} {mode}: ours {ours!r}, tileiras {theirs!r}")
    assert not differences, "\n".join(differences)
    assert silent == TILEIRAS_SILENT_FAILURES  # a tileiras that mends them: update the list


@pytest.mark.parametrize(
    ("src", "dst", "mode"),
    [
        ("f64", "f32", "negative_inf"),
        ("f64", "f32", "positive_inf"),
        ("f64", "f32", "zero"),
        ("f32", "f16", "zero"),
        ("f32", "bf16", "zero"),
        ("f32", "tf32", "zero"),
        ("f64", "f16", "zero"),
        ("f32", "tf32", "nearest_away"),
    ],
)
def test_accepted_modes_round_as_they_say(src: str, dst: str, mode: str) -> None:
    pytest.importorskip("triton")
    import ml_dtypes

    module, ours = _ours(src, dst, mode)
    assert ours is None
    host = {"f64": np.float64, "f32": np.float32, "tf32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(16) * 1000).astype(host[src])
    x[:3] = [np.inf, -np.inf, 1e300 if src == "f64" else 3e38]
    results = []
    for backend in ("cpu", "triton-interpret"):
        y = np.zeros(16, host[dst])
        launch(module, "k", (1, 1, 1), [x.copy(), y], backend=backend)
        results.append(y)
    assert results[0].tobytes() == results[1].tobytes()
    exact, got = x.astype(np.float64), results[0].astype(np.float64)
    finite = np.isfinite(exact) & np.isfinite(got)
    if mode == "nearest_away":  # (f32 -> tf32: tileiras' own sequence, see below)
        assert (got[finite] == _rna_tf32(x)[finite]).all()
    else:
        wanted = {"zero": np.abs(got) <= np.abs(exact), "negative_inf": got <= exact, "positive_inf": got >= exact}
        assert wanted[mode][finite].all()
    assert (got[finite] != exact[finite]).any() or dst == "f64"  # the test rounds something


def _rna_tf32(x: np.ndarray) -> np.ndarray:
    """f32 -> tf32 rounding to nearest, ties away, as tileiras 13.5 compiles it (sm_90 SASS:
    add 0x1000 to the bits of a finite value, then clear the 13 low bits)."""
    b = x.view(np.uint32)
    finite = np.isfinite(x)
    return np.where(finite, (b + np.uint32(0x1000)) & np.uint32(0xFFFFE000), b).view(np.float32)


def test_nearest_away_breaks_ties_away_from_zero() -> None:
    pytest.importorskip("triton")
    module, ours = _ours("f32", "tf32", "nearest_away")
    assert ours is None
    q = 2.0**-10  # tf32's quantum in [1, 2)
    ties = [1 + q / 2, -(1 + q / 2), 1 + 3 * q / 2, -(1 + 3 * q / 2), 2 - q / 2]  # the last carries to 2
    rng = np.random.default_rng(3)
    x = np.concatenate([ties, rng.standard_normal(8) * 1e3, [3.4028235e38, 1e-40, np.inf]]).astype(np.float32)
    x = np.resize(x, 16)
    results = []
    for backend in ("cpu", "triton-interpret"):
        y = np.zeros(16, np.float32)
        launch(module, "k", (1, 1, 1), [x.copy(), y], backend=backend)
        results.append(y)
    assert results[0].tobytes() == results[1].tobytes()
    assert results[0].tobytes() == _rna_tf32(x).tobytes()
    assert results[0][:5].tolist() == [1 + q, -(1 + q), 1 + 2 * q, -(1 + 2 * q), 2.0]


def test_nearest_away_text_and_bytecode_versions() -> None:
    module, ours = _ours("f32", "tf32", "nearest_away")
    text = print_module(module)
    assert "rounding<nearest_away>" in text
    assert print_module(parse(text, "k.tileir").module) == text
    again = read_bytecode(write_bytecode(module, (13, 4)))
    assert "rounding<nearest_away> : tile<16xf32> -> tile<16xtf32>" in print_module(again)
    with pytest.raises(BytecodeWriteError, match="nearest_away. requires 13.4"):
        write_bytecode(module, (13, 3))
    # The 13.3 ops that share ftof's rounding syntax parse it, and refuse it as tileiras does.
    add = kernel("f32", "f32", "zero").replace(
        "ftof %v rounding<zero> : tile<16xf32> -> tile<16xf32>", "addf %v, %v rounding<nearest_away> : tile<16xf32>"
    )
    said = [d.message for d in verify(parse(add, "k.tileir").module)]
    assert any("expect one of [nearest_even, zero, negative_inf, positive_inf]" in m for m in said), said


def test_nearest_away_is_what_tileirdisasm_reads(tmp_path: Path) -> None:
    from compiler.runtime import find_tileirdisasm

    disasm = find_tileirdisasm()
    if disasm is None:
        pytest.skip("NVIDIA's tileirdisasm is not installed (pip install nvidia-cuda-tileiras)")
    module, _ = _ours("f32", "tf32", "nearest_away")
    path = tmp_path / "k.tileirbc"
    path.write_bytes(write_bytecode(module, (13, 4)))
    out = subprocess.run([str(disasm), str(path)], capture_output=True, text=True, check=True).stdout
    assert "ftof %" in out and "rounding<nearest_away> : tile<16xf32> -> tile<16xtf32>" in out
