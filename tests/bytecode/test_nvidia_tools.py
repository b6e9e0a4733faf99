"""Our reader and writer against NVIDIA's tools (`tileirdisasm`, `tileiras`; no GPU needed).

- Reader: on every bytecode file of the samples and of the conformance suite, our reader
  agrees with tileirdisasm: both reject it, or our module prints as tileirdisasm prints it.
- Writer: for every sample, example and valid conformance module, tileirdisasm prints our
  bytes (13.3, and 13.1 where the module fits 13.1) as our printer prints the module, and
  tileiras compiles them to a cubin for sm_90 and sm_100, except where it refuses a module
  for reasons of its own, each listed below with the words it uses.

Texts compare after `normalize_ssa`: value and block names are the printers' choice.
"""

from __future__ import annotations

import concurrent.futures
import difflib
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from compiler.bytecode import BytecodeError, read_bytecode

from .util import (
    ELF_MAGIC,
    SHARED,
    WrittenCase,
    comparable,
    conformance_bytecode_files,
    disasm_text,
    expected_text,
    module_items_text,
    require_tileiras,
    require_tileirdisasm,
    run_tileiras,
    run_tileirdisasm,
    run_tileirdisasm_file,
    sample_bytecode_files,
    write_all,
)

# Modules NVIDIA's 13.5 tools refuse to read although the 13.3 dialect (and our verifier)
# accepts them: case id -> a substring of tileirdisasm's (and tileiras') message.
TILEIRDISASM_REFUSALS: dict[str, str] = {
    # 13.5 checks "bytecode format invariants" after reading: entry arguments must be tiles.
    "Bytecode/operationsTest.mlir#0": "unsupported type in bytecode for entry argument #0: '!cuda_tile.token'",
}

_GLOBALS_ONLY = "failed to compile Tile IR program"
_HOPPER = "Incompatibility with architecture 'sm_90': "

# Modules tileiras reads but will not compile: case id -> {gpu: substring of its message}.
TILEIRAS_REFUSALS: dict[str, dict[str, str]] = {
    # A module of globals and no entry: tileiras gives no further reason (a module with the
    # same globals and an empty entry compiles, and so does an empty module).
    "Bytecode/versioning/legacy_global_constant_rejected.mlir#0": {"sm_90": _GLOBALS_ONLY, "sm_100": _GLOBALS_ONLY},
    "Bytecode/versioning/multiple_globals_legacy_bytecode.mlir#0": {"sm_90": _GLOBALS_ONLY, "sm_100": _GLOBALS_ONLY},
    "Dialect/CudaTile/syntax_omit_dialect_prefix.mlir#0.1": {"sm_90": _GLOBALS_ONLY, "sm_100": _GLOBALS_ONLY},
    # Element types Hopper has no instructions for.
    "Dialect/CudaTile/conversion.mlir#0": {"sm_90": _HOPPER + "unsupported type 'f8E8M0FNU'"},
    "Dialect/CudaTile/dense_attr.mlir#2": {"sm_90": _HOPPER + "unsupported type 'f4E2M1FN'"},
}
for _case_id, _message in TILEIRDISASM_REFUSALS.items():
    TILEIRAS_REFUSALS[_case_id] = {"sm_90": _message, "sm_100": _message}

GPUS = ("sm_90", "sm_100")


def _diff(expected: str, actual: str, what_expected: str, what_actual: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True), what_expected, what_actual
    )
    return "".join(list(lines)[:60])


# ------------------------------------------------------------------------------------------------
# Reader vs tileirdisasm


def _bytecode_files() -> list[Path]:
    return sample_bytecode_files() + conformance_bytecode_files()


def _file_id(path: Path) -> str:
    return path.relative_to(SHARED).as_posix() if path.is_relative_to(SHARED) else path.name


@pytest.mark.parametrize("path", _bytecode_files(), ids=_file_id)
def test_reader_agrees_with_tileirdisasm(path: Path) -> None:
    tool = require_tileirdisasm()
    nvidia = run_tileirdisasm_file(path, tool)
    data = path.read_bytes()
    if not nvidia.ok:
        with pytest.raises(BytecodeError) as caught:
            read_bytecode(data)
        assert str(caught.value).strip(), f"{path.name}: our reader rejected it without a message"
        return
    try:
        module = read_bytecode(data)
    except BytecodeError as exc:
        pytest.fail(f"{path.name}: tileirdisasm reads it, our reader says: {exc}")
    ours = comparable(module_items_text(module))
    theirs = disasm_text(nvidia.stdout)
    assert ours == theirs, _diff(theirs, ours, "tileirdisasm", "our reader + printer")


def test_bytecode_inputs_exist() -> None:
    """The reader test above is not vacuous: samples and conformance bytecode are there."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent")
    assert len(sample_bytecode_files()) >= 6
    assert len(conformance_bytecode_files()) >= 9


# ------------------------------------------------------------------------------------------------
# Writer vs tileirdisasm


def _written() -> list[WrittenCase]:
    return list(write_all().written)


def test_writer_refusals_are_only_the_expected_ones() -> None:
    from .util import WRITER_REFUSALS, expected_writer_refusal

    outcome = write_all()
    assert not outcome.problems, "\n".join(outcome.problems)
    wrong = []
    for case_id, message in outcome.refused.items():
        expected = expected_writer_refusal(case_id)
        if expected is None:
            wrong.append(f"{case_id}: unexpected refusal: {message}")
        elif expected not in message:
            wrong.append(f"{case_id}: refused with {message!r}, expected {expected!r}")
    import fnmatch

    for pattern in WRITER_REFUSALS:
        written = [w.case.id for w in outcome.written if fnmatch.fnmatchcase(w.case.id, pattern)]
        if written:
            wrong.append(f"{pattern}: listed as refused, but {written} now write")
        if not any(fnmatch.fnmatchcase(case_id, pattern) for case_id in outcome.refused) and SHARED.is_dir():
            wrong.append(f"{pattern}: listed as refused, but no such module")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("written", _written(), ids=lambda w: w.id)
def test_tileirdisasm_prints_our_bytes_as_we_print_the_module(written: WrittenCase) -> None:
    require_tileirdisasm()
    nvidia = run_tileirdisasm(written.data)
    refusal = TILEIRDISASM_REFUSALS.get(written.case.id)
    if refusal is not None:
        assert not nvidia.ok and refusal in nvidia.stderr, (
            f"expected tileirdisasm to refuse with {refusal!r}; it says: {nvidia.stderr or nvidia.stdout[:300]}"
        )
        return
    assert nvidia.ok, f"tileirdisasm rejects our bytes: {nvidia.stderr.strip()}"
    ours = comparable(expected_text(written.case.module, written.version))
    theirs = disasm_text(nvidia.stdout)
    assert theirs == ours, _diff(ours, theirs, "our printer", "tileirdisasm on our bytes")


# ------------------------------------------------------------------------------------------------
# Writer vs tileiras


def _compile(tool: str, source: Path, gpu: str) -> tuple[bool, str, float]:
    """(a cubin came out, tileiras' messages, seconds)."""
    out = source.with_name(f"{source.stem}.{gpu}.cubin")
    start = time.perf_counter()
    proc = run_tileiras(tool, source, gpu, out)
    elapsed = time.perf_counter() - start
    made = proc.returncode == 0 and out.is_file() and out.read_bytes()[:4] == ELF_MAGIC
    return made, (proc.stderr + proc.stdout).strip(), elapsed


@pytest.mark.slow
def test_tileiras_compiles_our_bytes() -> None:
    tool = require_tileiras()
    written = _written()
    assert written, "nothing was written"
    wrong: list[str] = []
    seen_refusals: set[tuple[str, str]] = set()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tileir-tileiras-") as tmp:
        jobs = []
        for index, w in enumerate(written):
            source = Path(tmp) / f"m{index}.tileirbc"
            source.write_bytes(w.data)
            jobs.extend((w, source, gpu) for gpu in GPUS)
        workers = max(1, os.cpu_count() or 1)
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(lambda job: _compile(tool, job[1], job[2]), jobs))
    elapsed = time.perf_counter() - started
    for (w, _source, gpu), (made, messages, _seconds) in zip(jobs, results):
        expected = TILEIRAS_REFUSALS.get(w.case.id, {}).get(gpu)
        if expected is None and not made:
            wrong.append(f"{w.id} {gpu}: tileiras refuses: {messages[:400]}")
        elif expected is not None:
            seen_refusals.add((w.case.id, gpu))
            if made:
                wrong.append(f"{w.id} {gpu}: listed as refused ({expected!r}) but now compiles")
            elif expected not in messages:
                wrong.append(f"{w.id} {gpu}: refused with {messages[:400]!r}, expected {expected!r}")
    if SHARED.is_dir():
        for case_id, by_gpu in TILEIRAS_REFUSALS.items():
            for gpu in by_gpu:
                if (case_id, gpu) not in seen_refusals:
                    wrong.append(f"{case_id} {gpu}: listed as refused but no such module was written")
    slowest = sorted(zip(results, jobs), key=lambda rj: -rj[0][2])[:3]
    timing = f"{len(jobs)} compilations in {elapsed:.1f} s on {workers} workers; slowest: " + ", ".join(
        f"{j[0].id} {j[2]} {r[2]:.1f} s" for r, j in slowest
    )
    print(timing)
    assert not wrong, "\n".join(wrong) + "\n" + timing


STRINGS_AND_HINTS = r"""cuda_tile.module @m {
  global @"g\fe" <f32: [1.0]> : tile<1xf32>
  global @"g\ff" <f32: [2.0]> : tile<1xf32>
  entry @k(%p: tile<ptr<f32>>) optimization_hints=<sm_90 = {occupancy = 2, num_cta_in_cga = 1},
                                                   sm_100 = {num_cta_in_cga = 2}> {
    %a = constant <f32: 2.0> : tile<4xf32>
    %b = pow %a, %a : tile<4xf32>
    %t = print_tko "q\"b\n\\c\ff" -> token
    return
  }
}
"""


def test_strings_hints_and_pow_print_as_tileirdisasm_prints_them(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 stay bytes (`\fe`, `\ff`: two symbols, not one U+FFFD twice),
    a quote prints as `\22`, optimization_hints are a dictionary (sorted by name), and
    tileirdisasm 13.5's name for pow, `fpowf`, reads back (found by a QA pass)."""
    from compiler.bytecode import write_bytecode
    from compiler.bytecode.disasm import disassembly
    from compiler.text import parse

    tool = require_tileirdisasm()
    result = parse(STRINGS_AND_HINTS, "s.tileir")
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    path = tmp_path / "s.tileirbc"
    path.write_bytes(write_bytecode(result.module, (13, 3)))
    theirs = subprocess.run([tool, str(path)], capture_output=True, text=True, check=True).stdout
    ours = disassembly(read_bytecode(path.read_bytes()))
    assert '@"g\\FE"' in theirs and '"q\\22b\\0A\\\\c\\FF"' in theirs
    assert "optimization_hints=<sm_100 = {num_cta_in_cga = 2}, sm_90 = {num_cta_in_cga = 1, occupancy = 2}>" in theirs
    assert disasm_text(ours) == disasm_text(theirs)  # (13.5's newer names aside: util.disasm_text)
    again = parse(theirs, "theirs.tileir")  # their text, fpowf included, is ours to read
    assert not again.diagnostics and any(op.name == "cuda_tile.pow" for op in again.module.walk())


def test_an_escape_mlir_does_not_know_is_an_error_where_it_is() -> None:
    from compiler.text import parse

    text = 'cuda_tile.module @m {\n  entry @k() {\n    %t = print_tko "a\\qb" -> token\n    return\n  }\n}\n'
    (error,) = parse(text, "e.tileir").diagnostics
    assert error.message == "unknown escape in string literal" and text[error.span.start : error.span.end] == "\\q"
