"""tests/lower/reduce.py, the reducer of failing fuzz kernels: what it deletes and keeps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.lower.fuzz import kernel
from tests.lower.reduce import main, reduce, statements


def test_statements_take_regions_whole_and_leave_terminators() -> None:
    lines = kernel(11).text.splitlines()
    found = statements(lines)
    starts = {lines[first].strip().split(" = ", 1)[-1].split(" ")[0] for first, _ in found}
    assert {"for", "reduce", "scan", "mmaf", "store_view_tko"} <= starts
    for first, last in found:
        block = "\n".join(lines[first : last + 1])
        assert block.count("{") == block.count("}"), block  # a region goes with its op
        assert not lines[first].strip().startswith(("continue", "return", "yield", "}"))


def test_reduce_keeps_what_the_predicate_needs(tmp_path: Path) -> None:
    text = kernel(11).text
    out = tmp_path / "small.tileir"
    small = reduce(text, lambda t: "mmaf %" in t and "%o3_st = store_view_tko" in t, out, log=lambda *_: None)
    assert len(small.splitlines()) < len(text.splitlines()) // 3
    assert out.read_text() == small and "mmaf %" in small and "%o1_st" not in small
    from compiler.runtime import load_module

    load_module(small)  # every step verified


def test_a_file_without_its_seed_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "k.tileir"
    f.write_text("cuda_tile.module @m {\n}\n")
    assert main([str(f)]) == 2
    assert "does not name a fuzz seed" in capsys.readouterr().err


def test_a_kernel_that_does_not_fail_is_said(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("triton")
    assert main(["3", "--backend", "triton-interpret", "-o", str(tmp_path / "r.tileir")]) == 1
    assert "does not fail that way" in capsys.readouterr().err


def test_until_timeout_compiles_in_a_child_it_kills() -> None:
    """--until timeout: a compile that outlasts the limit counts (limit 0: every one does, and
    the kernel shrinks to its shell); one that ends in time does not."""
    pytest.importorskip("triton")
    from tests.lower.reduce import _times_out

    small = reduce(kernel(11).text, _times_out("sm_90", 0.0), None, log=lambda *_: None)
    assert len(small.splitlines()) <= 6
    assert not _times_out("sm_90", 120.0)(small)


def test_failure_key_names_the_pass_and_assertion() -> None:
    from tests.lower.reduce import failure_key

    message = (
        "Triton could not compile the lowered kernel (RuntimeError: PassManager::run failed; in "
        'TritonGPURemoveLayoutConversions; loc("acc65"("v73")): \'ttg.convert_layout\' op operation destroyed '
        "but still has uses); this is a bug in the lowering, please report it with Triton's report, /tmp/r.log"
    )
    assert failure_key(message) == "in TritonGPURemoveLayoutConversions"
    assert failure_key(message.replace("uses)", "uses; assertion 'x == y' failed)")) == (
        "in TritonGPURemoveLayoutConversions; assertion 'x == y' failed"
    )
    assert failure_key("Triton crashed compiling the lowered kernel (its process killed by SIGSEGV)") == (
        "crashed compiling"
    )


def test_until_compile_error_keeps_triton_failing_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """--until compile-error: Triton 3.6's assertion in TritonGPUCoalesce on a kernel of ours
    (test_control.DEAD_LOOP_LOAD, the lowering's workaround of that defect off) is found
    again, and a kernel that compiles is no failure."""
    pytest.importorskip("triton")
    import compiler.lower
    from tests.lower.harness import triton_version, without_workarounds
    from tests.lower.reduce import _compile_fails
    from tests.lower.test_control import DEAD_LOOP_LOAD

    failure = _compile_fails("sm_90")
    assert failure(kernel(3).text) is None
    if triton_version() <= (3, 6):
        real = compiler.lower.lower
        monkeypatch.setattr(compiler.lower, "lower", lambda *a, **k: without_workarounds(real(*a, **k)))
        failure = _compile_fails("sm_90")
        assert failure(DEAD_LOOP_LOAD) == "in TritonGPUCoalesce; assertion 'idx < size()' failed"


def test_until_tileiras_error_keeps_tileiras_failing_the_same_way(tmp_path: Path) -> None:
    """--until tileiras-error: fuzz seed 226139 of --hints --asm (tileiras aborts on it for
    sm_80: a scan of 32 elements reshaped to three dimensions, TILEIRAS_DEFECTS'
    scan_then_reshape) is cut down to a kernel tileiras still aborts on, with the scan and
    the reshape; a kernel tileiras compiles is no failure."""
    from tests.bytecode.util import require_tileiras
    from tests.lower.reduce import _tileiras_fails

    require_tileiras()
    failure = _tileiras_fails("sm_80")
    assert failure(kernel(3).text) is None
    text = kernel(226139, hints=True, asm=True).text
    first = failure(text)
    assert first is not None and "crashed (SIGABRT)" in first
    f = tmp_path / "seed226139.tileir"
    f.write_text("// seed 226139 --hints --asm: tileiras aborts\n" + text)
    out = tmp_path / "small.tileir"
    assert main([str(f), "--until", "tileiras-error", "--arch", "sm_80", "-o", str(out), "--budget", "240"]) == 0
    small = out.read_text()
    assert len(small.splitlines()) < len(text.splitlines()) // 2
    assert re.search(r"= scan ", small) and re.search(r"= reshape ", small) and failure(small) == first


def test_until_spills_counts_a_cubin_that_spills() -> None:
    """--until spills: a 128x128 f64 tile a row maximum is taken from and subtracted keeps 128
    f64 a thread live at 4 warps (sm_90: 255 registers, 1,608 B of spills); fuzz seed 3's
    kernel spills nothing."""
    pytest.importorskip("triton")
    from tests.lower.reduce import _spills
    from tests.lower.test_shape import io_kernel

    t, row = "tile<128x128xf64>", "tile<128xf64>"
    body = f"""%m = reduce %x dim=1 identities=[0xFFF0000000000000 : f64] : {t} -> {row}
    (%a: tile<f64>, %b: tile<f64>) {{
      %s = maxf %a, %b : tile<f64>
      yield %s : tile<f64>
    }}
    %c = reshape %m : {row} -> tile<128x1xf64>
    %cb = broadcast %c : tile<128x1xf64> -> {t}
    %r = subf %x, %cb : {t}
    %r2 = addf %r, %x : {t}"""
    spills = _spills("sm_90")
    assert spills(io_kernel([("x", (128, 128), "f64")], [("r2", (128, 128), "f64")], body))
    assert not spills(kernel(3).text)
