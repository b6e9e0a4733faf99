"""`tileir asm`, `disasm`, `translate`, and `check` / `fmt` on bytecode: exit statuses,
messages, atomic output, and that what they write reads back (and, where NVIDIA's tools are
installed, that tileirdisasm prints our bytes as `tileir disasm` does)."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from compiler import cli
from compiler.bytecode import (
    MAGIC,
    SUPPORTED,
    TEST_VERSIONS,
    TRANSLATE_VERSIONS,
    read_bytecode,
    version_text,
    write_bytecode,
)
from compiler.text import PrintOptions, parse, print_module
from tests.corpus import REPO, example_files

KERNEL = """cuda_tile.module @kernels {
  global @table <i32: [1, 2, 3, 4]> : tile<4xi32>
  entry @add_one(%ptr: tile<ptr<f32>>, %n: tile<i32>) {
    %one = constant <i32: 1> : tile<i32>
    %sum = addi %n, %one : tile<i32>
    return
  }
}
"""
# fpowi exists since bytecode 13.4.
NEEDS_13_4 = """cuda_tile.module @kernels {
  entry @cube(%x: tile<f32>) {
    %n = constant <i32: 3> : tile<i32>
    %r = fpowi %x, %n : tile<f32>, tile<i32>
    return
  }
}
"""
# `overflow` on negi exists since bytecode 13.2.
NEEDS_13_2 = """cuda_tile.module @kernels {
  entry @neg(%n: tile<i32>) {
    %r = negi %n overflow<no_signed_wrap> : tile<i32>
    return
  }
}
"""
# An undefined value: the verifier's error, before any bytecode is written.
INVALID = """cuda_tile.module @kernels {
  entry @k() {
    %1 = addi %0, %nope : tile<i32>
    return
  }
}
"""
# f8E8M0FNU exists since 13.2: NVIDIA's writer reports it at an unknown location.
NEW_TYPE = """// expected-error@unknown {{type 'Float8E8M0FNU' requires bytecode version 13.2+, targeting 13.1}}
cuda_tile.module @kernels {
  entry @k(%p: tile<f8E8M0FNU>) {
    return
  }
}
"""

# An op that does not verify (cuTile Python 1.7 writes unsigned `//` so), with debug info: the
# line of the Python kernel that made it.
UNVERIFIED_WITH_DEBUG_INFO = """cuda_tile.module @m {
  entry @k(%a: tile<i32>) {
    %q = divi %a, %a unsigned rounding<negative_inf> : tile<i32> loc(#loc2)
    return loc(#loc1)
  } loc(#loc1)
}
#di_file = #cuda_tile.di_file<"kern.py" in "/src">
#loc = loc("/src/kern.py":3:0)
#loc0 = loc("/src/kern.py":12:7)
#di_compile_unit = #cuda_tile.di_compile_unit<file = #di_file>
#di_subprogram = #cuda_tile.di_subprogram<file = #di_file, line = 3, name = "k", linkageName = "k",
                                          compileUnit = #di_compile_unit, scopeLine = 3>
#loc1 = #cuda_tile.di_loc<#loc in #di_subprogram>
#loc2 = #cuda_tile.di_loc<#loc0 in #di_subprogram>
"""

BYTE_ERROR = re.compile(r"^(?P<name>.+): error: at byte (?P<n>\d+) \(0x(?P<hex>[0-9a-f]+)\): \S")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return status, out, err


def canonical(text: str) -> str:
    """`text` printed as a module read from bytecode prints: MLIR's default SSA names, and the
    module named @kernels (bytecode keeps no module name; NVIDIA's reader calls it that)."""
    from compiler.ir.attributes import StringAttr

    result = parse(text, "<expected>")
    assert result.ok, [d.format() for d in result.diagnostics]
    for op in result.module.ops:
        if op.name == "cuda_tile.module":
            op.properties["sym_name"] = StringAttr("kernels")
    return print_module(result.module, PrintOptions(keep_comments=False, source_names=False))


def printed(data: bytes) -> str:
    return print_module(read_bytecode(data), PrintOptions(keep_comments=False))


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "kernel.tileir"
    path.write_text(KERNEL)
    return path


# --- tileir asm ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [version_text(v) for v in SUPPORTED])
def test_asm_writes_bytecode_that_reads_back(capsys, kernel: Path, version: str) -> None:
    status, out, err = run(capsys, "asm", str(kernel), "--bytecode-version", version)
    assert (status, out, err) == (0, "", "")
    data = kernel.with_suffix(".tileirbc").read_bytes()
    assert data.startswith(MAGIC)
    assert (data[len(MAGIC)], data[len(MAGIC) + 1]) == tuple(int(p) for p in version.split("."))
    assert printed(data) == canonical(KERNEL)


@pytest.mark.parametrize("example", example_files(), ids=lambda p: p.name)
def test_asm_of_each_example_reads_back(capsys, tmp_path: Path, example: Path) -> None:
    out_path = tmp_path / "out.tileirbc"
    status, _, err = run(capsys, "asm", str(example), "-o", str(out_path))
    assert status == 0, err
    assert printed(out_path.read_bytes()) == canonical(example.read_text(encoding="utf-8"))


def test_asm_defaults_to_13_3(capsys, kernel: Path) -> None:
    assert run(capsys, "asm", str(kernel))[0] == 0
    assert kernel.with_suffix(".tileirbc").read_bytes()[len(MAGIC) : len(MAGIC) + 2] == bytes([13, 3])


def test_asm_writes_13_4_by_default_for_13_4_ops_and_refuses_13_3(capsys, tmp_path: Path) -> None:
    src = tmp_path / "cube.tileir"
    src.write_text(NEEDS_13_4)
    assert run(capsys, "asm", str(src))[0] == 0, capsys.readouterr()
    data = src.with_suffix(".tileirbc").read_bytes()
    assert data[len(MAGIC) : len(MAGIC) + 2] == bytes([13, 4]) and "fpowi" in printed(data)
    status, _, err = run(capsys, "asm", str(src), "--bytecode-version", "13.3")
    assert status == 1 and "operation 'cuda_tile.fpowi' is not available in bytecode version 13.3" in err


def test_asm_to_stdout_is_binary_and_the_same_bytes(tmp_path: Path, kernel: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "asm", str(kernel), "-o", "-"],
        cwd=REPO,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    parsed = parse(KERNEL, "k")
    assert done.stdout == write_bytecode(parsed.module)
    assert not kernel.with_suffix(".tileirbc").exists()


def test_asm_accepts_bare_items_as_disasm_prints_them(capsys, kernel: Path, tmp_path: Path) -> None:
    """bytes -> disasm text (no module wrapper) -> asm -> the same bytes."""
    assert run(capsys, "asm", str(kernel))[0] == 0
    original = kernel.with_suffix(".tileirbc").read_bytes()
    status, text, _ = run(capsys, "disasm", str(kernel.with_suffix(".tileirbc")))
    assert status == 0 and not text.startswith("cuda_tile.module")
    bare = tmp_path / "bare.tileir"
    bare.write_text(text)
    assert run(capsys, "asm", str(bare))[0] == 0
    assert bare.with_suffix(".tileirbc").read_bytes() == original


def test_asm_reports_verifier_errors_and_writes_nothing(capsys, tmp_path: Path) -> None:
    src = tmp_path / "bad.tileir"
    src.write_text(INVALID)
    status, out, err = run(capsys, "asm", str(src))
    assert status == 1 and out == ""
    assert re.search(rf"^{re.escape(str(src))}:3:\d+: error: ", err, re.M), err
    assert not src.with_suffix(".tileirbc").exists()


def test_asm_version_error_names_the_attribute_and_keeps_the_old_output(capsys, tmp_path: Path) -> None:
    src = tmp_path / "neg.tileir"
    src.write_text(NEEDS_13_2)
    target = src.with_suffix(".tileirbc")
    target.write_bytes(b"previous contents")
    status, _, err = run(capsys, "asm", str(src), "--bytecode-version", "13.1")
    assert status == 1
    assert f"{src}:3:5: error: 'cuda_tile.negi' op attribute 'overflow' requires bytecode version 13.2+" in err
    assert target.read_bytes() == b"previous contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["neg.tileir", "neg.tileirbc"]  # no temporaries left
    # The same module is fine for 13.2.
    assert run(capsys, "asm", str(src), "--bytecode-version", "13.2")[0] == 0
    assert target.read_bytes()[len(MAGIC) : len(MAGIC) + 2] == bytes([13, 2])


@pytest.mark.parametrize("version", ["12.0", "13.5", "250.0", "13", "latest"])
def test_asm_unknown_version_is_a_usage_error(capsys, kernel: Path, version: str) -> None:
    status, _, err = run(capsys, "asm", str(kernel), "--bytecode-version", version)
    assert status == 2
    assert f"Invalid argument '{version}': the supported versions are [13.1 - 13.4]" in err
    assert not kernel.with_suffix(".tileirbc").exists()


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_asm_replaces_the_output_atomically_keeping_its_mode(capsys, kernel: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.tileirbc"
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / "link.tileirbc"
    link.symlink_to(target)
    assert run(capsys, "asm", str(kernel), "-o", str(link))[0] == 0
    assert link.is_symlink()  # followed, not replaced
    assert target.read_bytes().startswith(MAGIC)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kernel.tileir", "link.tileirbc", "out.tileirbc"]


def test_asm_of_bytecode_or_stdin_without_output_is_refused(capsys, kernel: Path) -> None:
    assert run(capsys, "asm", str(kernel))[0] == 0
    status, _, err = run(capsys, "asm", str(kernel.with_suffix(".tileirbc")))
    assert status == 2 and "already Tile IR bytecode" in err
    status, _, err = run(capsys, "asm", "-")
    assert status == 2 and "-o" in err


# --- tileir disasm ------------------------------------------------------------------------------


@pytest.fixture
def kernel_bc(capsys, kernel: Path) -> Path:
    assert run(capsys, "asm", str(kernel))[0] == 0
    return kernel.with_suffix(".tileirbc")


def test_disasm_prints_the_items_without_the_module(capsys, kernel_bc: Path) -> None:
    status, out, err = run(capsys, "disasm", str(kernel_bc))
    assert status == 0 and err == ""
    # The canonical text, less the `cuda_tile.module @kernels {` line, its `}` and one indent.
    inner = canonical(KERNEL).splitlines()[1:-1]
    assert out.splitlines() == [line.removeprefix("  ") for line in inner]
    assert "loc(" not in out


def test_disasm_g_prints_locations(capsys, kernel_bc: Path) -> None:
    status, out, _ = run(capsys, "disasm", "-g", str(kernel_bc))
    assert status == 0 and "loc(#loc)" in out and "#loc = loc(unknown)" in out
    assert run(capsys, "disasm", "--print-debug-info", str(kernel_bc))[1] == out


def test_disasm_truncated_files_fail_with_the_offset(capsys, kernel_bc: Path, tmp_path: Path) -> None:
    data = kernel_bc.read_bytes()
    cut = tmp_path / "cut.tileirbc"
    for size in range(len(data)):
        cut.write_bytes(data[:size])
        status, out, err = run(capsys, "disasm", str(cut))
        assert status == 1 and out == "", size
        m = BYTE_ERROR.match(err)
        assert m and m["name"] == str(cut) and int(m["n"]) == int(m["hex"], 16) <= size, (size, err)
        assert err.count("\n") == 1


def test_disasm_of_a_text_file_says_it_is_text(capsys, kernel: Path) -> None:
    status, out, err = run(capsys, "disasm", str(kernel))
    assert status == 1 and out == ""
    assert err.startswith(f"{kernel}: error: this is a text file, not Tile IR bytecode")


def test_disasm_of_other_binary_complains_about_the_magic(capsys, tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02\x03garbage")
    status, _, err = run(capsys, "disasm", str(junk))
    assert status == 1 and BYTE_ERROR.match(err) and "magic number" in err


def test_disasm_of_a_missing_file_is_a_usage_error(capsys, tmp_path: Path) -> None:
    status, _, err = run(capsys, "disasm", str(tmp_path / "nope.tileirbc"))
    assert status == 2 and "cannot read" in err


def test_disasm_matches_tileirdisasm(capsys, tmp_path: Path) -> None:
    from compiler.runtime import find_tileirdisasm

    tool = find_tileirdisasm()
    if tool is None:
        pytest.skip("NVIDIA's tileirdisasm is not installed (pip install nvidia-cuda-tileiras)")
    sources = [*example_files(), tmp_path / "kernel.tileir"]
    sources[-1].write_text(KERNEL)
    for source in sources:
        for version in ("13.1", "13.3"):
            bc = tmp_path / f"{source.stem}-{version}.tileirbc"
            assert run(capsys, "asm", str(source), "-o", str(bc), "--bytecode-version", version)[0] == 0
            for flags in ([], ["-g"]):
                ours = run(capsys, "disasm", *flags, str(bc))[1]
                theirs = subprocess.run([tool, *flags, str(bc)], capture_output=True, text=True, timeout=120)
                assert theirs.returncode == 0, theirs.stderr
                assert ours == theirs.stdout, (source.name, version, flags)


# --- tileir check and fmt on bytecode -------------------------------------------------------------


def test_check_accepts_bytecode_by_its_magic_not_its_name(capsys, kernel_bc: Path, tmp_path: Path) -> None:
    disguised = tmp_path / "really_bytecode.tileir"
    disguised.write_bytes(kernel_bc.read_bytes())
    status, out, err = run(capsys, "check", str(kernel_bc), str(disguised))
    assert (status, err) == (0, "") and "2 files ok" in out
    text_named_bc = tmp_path / "really_text.tileirbc"
    text_named_bc.write_text(KERNEL)
    assert run(capsys, "check", str(text_named_bc))[0] == 0


def test_check_reports_bad_bytecode(capsys, kernel_bc: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.tileirbc"
    cut.write_bytes(kernel_bc.read_bytes()[:40])
    status, _, err = run(capsys, "check", str(cut), str(kernel_bc))
    assert status == 1
    first, summary = err.splitlines()
    assert BYTE_ERROR.match(first) and first.startswith(f"{cut}: error: ")
    assert summary == "tileir check: 1 error, 0 warnings in 2 files"


def test_fmt_prints_bytecode_as_canonical_text(capsys, kernel_bc: Path) -> None:
    status, out, _ = run(capsys, "fmt", str(kernel_bc))
    assert status == 0 and out == canonical(KERNEL)


@pytest.mark.parametrize("option", ["--check", "-i"])
def test_fmt_check_or_in_place_on_bytecode_is_a_usage_error(capsys, kernel_bc: Path, option: str) -> None:
    before = kernel_bc.read_bytes()
    status, out, err = run(capsys, "fmt", option, str(kernel_bc))
    assert status == 2 and out == ""
    assert f"fmt {option}: '{kernel_bc}' is Tile IR bytecode, not text" in err
    assert kernel_bc.read_bytes() == before


# --- tileir translate ----------------------------------------------------------------------------


def test_translate_lists_the_versions(capsys) -> None:
    for flag in ("--list-versions", "-list-versions"):
        status, out, _ = run(capsys, "translate", flag)
        assert status == 0
        assert out.split() == [version_text(v) for v in TRANSLATE_VERSIONS + TEST_VERSIONS]
    # NVIDIA's cuda-tile-translate 13.3's list (test/Bytecode/list_versions.mlir); asm writes 13.4 too.
    assert out == "13.1\n13.2\n13.3\n250.0\n250.1\n"
    assert (13, 4) in SUPPORTED


@pytest.mark.parametrize(
    ("to_bc", "from_bc"),
    [("-mlir-to-cudatilebc", "-cudatilebc-to-mlir"), ("--mlir-to-tilebc", "--tilebc-to-mlir")],
)
def test_translate_round_trip_through_files(capsys, kernel: Path, tmp_path: Path, to_bc: str, from_bc: str) -> None:
    bc, back = tmp_path / "k.bc", tmp_path / "k.mlir"
    assert (
        run(capsys, "translate", to_bc, "-no-implicit-module", "-bytecode-version=13.1", str(kernel), "-o", str(bc))[0]
        == 0
    )
    assert bc.read_bytes()[len(MAGIC) : len(MAGIC) + 2] == bytes([13, 1])
    assert run(capsys, "translate", from_bc, str(bc), "-o", str(back))[0] == 0
    # cuda-tile-translate prints the whole module, wrapper included.
    assert back.read_text() == canonical(KERNEL)


def test_translate_test_roundtrip_matches_opt_default_names(capsys, kernel: Path) -> None:
    status, roundtrip, _ = run(capsys, "translate", "-test-cudatile-roundtrip", "-bytecode-version=13.1", str(kernel))
    assert status == 0
    status, opt, _ = run(capsys, "opt", "--default-names", "-no-implicit-module", str(kernel))
    assert status == 0 and roundtrip == opt
    assert "%cst_1_i32" in opt and "%one" not in opt and "%arg1" in opt


def test_translate_version_errors(capsys, kernel: Path) -> None:
    status, _, err = run(capsys, "translate", "-mlir-to-cudatilebc", "-bytecode-version=12.0", str(kernel))
    assert status == 2 and "Invalid argument '12.0': the supported versions are [13.1 - 13.3]" in err
    status, _, err = run(capsys, "translate", "-mlir-to-cudatilebc", "-bytecode-version=13.4", str(kernel))
    assert status == 2 and "Invalid argument '13.4': the supported versions are [13.1 - 13.3]" in err
    # The test-only versions are accepted by translate (and only there).
    status, out, _ = run(capsys, "translate", "-test-cudatile-roundtrip", "-bytecode-version=250.0", str(kernel))
    assert status == 0 and "entry @add_one" in out


def test_translate_needs_a_mode(capsys, kernel: Path) -> None:
    status, _, err = run(capsys, "translate", str(kernel))
    assert status == 2 and "-mlir-to-cudatilebc" in err


def test_translate_split_input_writes_every_chunk_and_goes_on_after_errors(capsys, tmp_path: Path) -> None:
    src = tmp_path / "chunks.mlir"
    src.write_text("\n// -----\n".join([KERNEL, INVALID, NEEDS_13_2]))
    out = tmp_path / "chunks.bc"
    status, _, err = run(capsys, "translate", "-mlir-to-cudatilebc", "-split-input-file", str(src), "-o", str(out))
    assert status == 1
    # The bad chunk's error is numbered as in the whole file.
    assert re.search(rf"^{re.escape(str(src))}:{KERNEL.count(chr(10)) + 5}:\d+: error: ", err, re.M), err
    expected = write_bytecode(parse(KERNEL, "a").module) + write_bytecode(parse(NEEDS_13_2, "c").module)
    assert out.read_bytes() == expected


def test_translate_verify_diagnostics_matches_unknown_locations(capsys, tmp_path: Path) -> None:
    src = tmp_path / "new_type.mlir"
    src.write_text(NEW_TYPE)
    argv = ["translate", "-mlir-to-cudatilebc", "-bytecode-version=13.1", "-verify-diagnostics", str(src)]
    status, _, err = run(capsys, *argv)
    assert (status, err) == (0, "")
    # Without -verify-diagnostics the error is printed with the file's name and no line.
    status, _, err = run(capsys, *(a for a in argv if a != "-verify-diagnostics"))
    assert status == 1
    assert err.startswith(f"{src}: error: type 'Float8E8M0FNU' requires bytecode version 13.2+, targeting 13.1")


def test_translate_verify_diagnostics_reports_mismatches(capsys, tmp_path: Path) -> None:
    src = tmp_path / "wrong.mlir"
    src.write_text(NEW_TYPE.replace("13.2+", "13.9+"))
    argv = ["translate", "-mlir-to-cudatilebc", "-bytecode-version=13.1", "-verify-diagnostics", str(src)]
    status, _, err = run(capsys, *argv)
    assert status == 1
    assert "unexpected error: type 'Float8E8M0FNU' requires bytecode version 13.2+" in err
    assert "expected error \"type 'Float8E8M0FNU' requires bytecode version 13.9+" in err


def test_translate_bad_bytecode_fails_with_the_offset(capsys, kernel_bc: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.bc"
    cut.write_bytes(kernel_bc.read_bytes()[:-3])
    status, out, err = run(capsys, "translate", "-cudatilebc-to-mlir", str(cut))
    assert status == 1 and out == "" and BYTE_ERROR.match(err)


# --- tileir opt --default-names --------------------------------------------------------------------


def test_opt_default_names_drops_the_source_names(capsys, kernel: Path) -> None:
    status, kept, _ = run(capsys, "opt", str(kernel))
    assert status == 0 and "%one" in kept and "%n" in kept
    status, default, _ = run(capsys, "opt", "--default-names", str(kernel))
    assert status == 0 and "%one" not in default and "%n:" not in default
    assert default == canonical(KERNEL)


# --- the runtime reads bytecode itself -----------------------------------------------------------


def test_load_module_reads_bytecode_without_tileirdisasm(monkeypatch, kernel_bc: Path) -> None:
    import compiler.runtime as runtime

    monkeypatch.setattr(runtime, "find_tileirdisasm", lambda: None)
    monkeypatch.setenv("TILEIRDISASM", "/nonexistent/tileirdisasm")
    for source in (kernel_bc, kernel_bc.read_bytes()):
        module = runtime.load_module(source)
        assert [runtime.kernel_name(e) for e in module.entries()] == ["add_one"]


def test_load_module_reports_bad_bytecode_as_a_module_error(kernel_bc: Path, tmp_path: Path) -> None:
    from compiler.runtime import LaunchError, load_module

    cut = tmp_path / "cut.tileirbc"
    cut.write_bytes(kernel_bc.read_bytes()[:30])
    with pytest.raises(LaunchError) as info:
        load_module(cut)
    assert info.value.kind == "module"
    assert re.match(
        rf"{re.escape(str(cut))}: cannot read Tile IR bytecode: at byte \d+ \(0x[0-9a-f]+\): ", str(info.value)
    )


def test_an_error_in_bytecode_names_the_ops_debug_info_location(capsys, tmp_path: Path) -> None:
    """Bytecode has no text to point into: `check` names the file, then the op's debug-info
    location as a note (the Python line a cuTile kernel made the op at), and so does the one
    line of `launch`'s error."""
    from compiler.runtime import LaunchError, launch

    path = tmp_path / "k.tileirbc"
    path.write_bytes(write_bytecode(parse(UNVERIFIED_WITH_DEBUG_INFO, "k.tileir").module))
    status, _, err = run(capsys, "check", str(path))
    message = "'cuda_tile.divi' op rounding mode 'negative_inf' is not allowed with 'unsigned' flag"
    assert status == 1
    assert err.splitlines()[:2] == [
        f"{path}: error: {message}",
        "/src/kern.py:12:7: note: the op's source location (from the module's debug info)",
    ]
    with pytest.raises(LaunchError) as e:
        launch(str(path), "k", 1, [1], backend="cpu")
    assert e.value.message == f"{path}: /src/kern.py:12:7: {message}"
    assert e.value.diagnostics[0].location() == ("/src/kern.py", 12, 7)
