"""The `tileir` command line: exit statuses, one-line errors, never a traceback."""

from __future__ import annotations

import io
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from compiler import cli
from compiler.ir.files import write_atomic
from tests.corpus import REPO, example_files, read

VADD = REPO / "examples" / "vector_add.tileir"

GOOD = """cuda_tile.module @m {
  entry @k() {
    return
  }
}
"""
BAD = """cuda_tile.module @m {
  entry @k() {
    %0 = constant <i32: 1> : tile<i32>
    %1 = addi %0, %nope : tile<i32>
    return
  }
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def no_traceback(err: str) -> None:
    assert "Traceback" not in err


# --- usage errors (no parser needed) ---------------------------------------------------------


def test_no_command_prints_help_and_fails(capsys) -> None:
    status, _, err = run(capsys)
    assert status == 2 and "usage:" in err


def test_help_exits_zero(capsys) -> None:
    status, out, _ = run(capsys, "--help")
    assert status == 0 and "check" in out and "fmt" in out and "opt" in out


def test_only_the_command_run_gets_its_arguments_built(capsys) -> None:
    # main() builds one command's arguments (start-up time): each command's --help must still
    # list its options, and the module's docstring must show every command there is.
    full = cli.build_parser()
    (sub,) = [a for a in full._actions if isinstance(a.choices, dict)]  # noqa: SLF001
    assert set(sub.choices) == set(cli.COMMANDS) == set(re.findall(r"^    tileir (\w+)", cli.__doc__, re.M))
    for name in sub.choices:
        status, out, _ = run(capsys, name, "--help")
        assert status == 0 and f"usage: tileir {name}" in out, name
        assert out.count("\n") > 4, name  # its arguments are listed
    status, _, err = run(capsys, "check", "--no-such-flag", str(VADD))
    assert status == 2 and "unrecognized arguments: --no-such-flag" in err


def test_unknown_option_is_one_line(capsys) -> None:
    status, _, err = run(capsys, "opt", "--no-such-pass", "x.mlir")
    assert status == 2
    assert err.count("\n") == 1 and "unrecognized arguments: --no-such-pass" in err
    # Named by the command and pointing at its help (it was `tileir: ... (see 'tileir --help')`).
    status, _, err = run(capsys, "layout", "a.tileir", "b.tileir")
    assert status == 2
    assert err == "tileir layout: error: unrecognized arguments: b.tileir (see 'tileir layout --help')\n"


VERIFY_OK = """// RUN: tileir opt %s -verify-diagnostics -split-input-file
cuda_tile.module @m {
  entry @k() {
    %a = constant <f32: 1.0> : tile<4xf32>
    // expected-error @below {{operand #0 must be tile of i1 or i8 or i16 or i32 or i64 values}}
    %b = addi %a, %a : tile<4xf32>
    return
  }
}
// -----
cuda_tile.module @n {
  entry @k() {
    return
  }
}
"""


def test_verify_diagnostics_met(capsys, tmp_path: Path) -> None:
    path = tmp_path / "ok.mlir"
    path.write_text(VERIFY_OK)
    for flag in ("-verify-diagnostics", "--verify-diagnostics"):
        status, out, err = run(capsys, "opt", flag, "-split-input-file", str(path))
        assert (status, out, err) == (0, "", "")


def test_verify_diagnostics_reports_mismatches(capsys, tmp_path: Path) -> None:
    # The first chunk's expectation is met; the second's is not, and its real error is unexpected.
    text = VERIFY_OK.replace(
        "entry @k() {\n    return",
        "entry @k() {\n    // expected-error @below {{never said}}\n"
        "    %c = constant <f32: 1.0> : tile<3xf32>\n    return",
    )
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    status, out, err = run(capsys, "opt", "-verify-diagnostics", "-split-input-file", str(path))
    assert status == 1 and out == ""
    assert 'expected error "never said" was not produced' in err
    assert "unexpected error:" in err and "all dimensions must be powers of two, got 3" in err


def test_missing_file_is_one_line(capsys, tmp_path: Path) -> None:
    missing = tmp_path / "nope.tileir"
    for command in ("check", "fmt", "opt"):
        status, out, err = run(capsys, command, str(missing))
        assert status == 2, command
        assert str(missing) in err and "No such file" in err
        assert err.strip().count("\n") == 0, err
        no_traceback(err)


def test_directory_is_one_line(capsys, tmp_path: Path) -> None:
    status, _, err = run(capsys, "check", str(tmp_path))
    assert status == 2 and "is a directory" in err


def test_non_utf8_is_one_line(capsys, tmp_path: Path) -> None:
    f = tmp_path / "latin1.tileir"
    f.write_bytes(b"// caf\xe9\n")
    for command in ("check", "fmt", "opt"):
        status, _, err = run(capsys, command, str(f))
        assert status == 2
        assert "not valid UTF-8" in err and str(f) in err
        no_traceback(err)


def test_fmt_check_and_in_place_conflict(capsys, tmp_path: Path) -> None:
    f = tmp_path / "a.tileir"
    f.write_text(GOOD)
    status, _, err = run(capsys, "fmt", "--check", "-i", str(f))
    assert status == 2 and "cannot be used together" in err


def test_internal_error_is_reported_not_raised(capsys, monkeypatch, tmp_path: Path) -> None:
    import compiler.text

    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(compiler.text, "parse", boom)
    f = tmp_path / "a.tileir"
    f.write_text(GOOD)
    status, _, err = run(capsys, "check", str(f))
    assert status == 3
    assert "tileir: internal error: RuntimeError: kaboom" in err and "report" in err
    no_traceback(err)


def test_write_atomic_keeps_mode_and_follows_symlinks(tmp_path: Path) -> None:
    target = tmp_path / "real.tileir"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.tileir"
    link.symlink_to(target)
    write_atomic(str(link), "new\n")
    assert link.is_symlink()
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.tileir", "real.tileir"]


# --- commands (need the parser and printer) --------------------------------------------------


def test_check_clean_file(capsys) -> None:
    status, out, err = run(capsys, "check", str(VADD))
    assert status == 0, err
    assert "ok" in out


def test_check_reports_errors_with_location_and_snippet(capsys, tmp_path: Path) -> None:
    f = tmp_path / "bad.tileir"
    f.write_text(BAD)
    status, _, err = run(capsys, "check", str(f))
    assert status == 1
    first = err.splitlines()[0]
    assert first.startswith(f"{f}:4:") and ": error: " in first
    assert "^" in err
    no_traceback(err)


def test_fmt_prints_canonical_form(capsys) -> None:
    from compiler.text import parse, print_module

    status, out, err = run(capsys, "fmt", str(VADD))
    assert status == 0, err
    assert out == print_module(parse(read(VADD)).module)


def test_fmt_check(capsys, tmp_path: Path) -> None:
    from compiler.text import parse, print_module

    canonical = print_module(parse(GOOD).module)
    clean = tmp_path / "clean.tileir"
    clean.write_text(canonical)
    messy = tmp_path / "messy.tileir"
    messy.write_text(canonical.replace("\n", "\n\n") + "\n\n")
    status, out, err = run(capsys, "fmt", "--check", str(clean))
    assert status == 0 and out == ""
    status, out, err = run(capsys, "fmt", "--check", str(clean), str(messy))
    assert status == 1 and out == ""
    assert str(messy) in err and f"would reformat {clean}" not in err
    assert messy.read_text() != canonical  # --check never writes


def test_fmt_in_place_is_atomic_and_keeps_mode(capsys, tmp_path: Path) -> None:
    from compiler.text import parse, print_module

    f = tmp_path / "k.tileir"
    f.write_text("  " + GOOD.replace("  ", "      "))
    f.chmod(0o600)
    status, _, err = run(capsys, "fmt", "-i", str(f))
    assert status == 0, err
    assert f.read_text() == print_module(parse(GOOD).module)
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["k.tileir"]  # no temp file left behind


def test_fmt_in_place_refuses_files_with_errors(capsys, tmp_path: Path) -> None:
    f = tmp_path / "bad.tileir"
    f.write_text(BAD)
    status, out, err = run(capsys, "fmt", "-i", str(f))
    assert status == 1
    assert f.read_text() == BAD
    assert ": error: " in err and "not formatted" in err


def test_fmt_keeps_comments(capsys, tmp_path: Path) -> None:
    f = tmp_path / "c.tileir"
    f.write_text("// a comment worth keeping\n" + GOOD)
    status, out, err = run(capsys, "fmt", str(f))
    assert status == 0, err
    assert "// a comment worth keeping" in out


def test_opt_reads_stdin(capsys, monkeypatch) -> None:
    from compiler.text import parse, print_module

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    status, out, err = run(capsys, "opt")
    assert status == 0, err
    assert out == print_module(parse(GOOD).module)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    status, out2, err = run(capsys, "opt", "-")
    assert status == 0 and out2 == out


def test_opt_output_file(capsys, tmp_path: Path) -> None:
    out_file = tmp_path / "out.mlir"
    status, out, err = run(capsys, "opt", str(VADD), "-o", str(out_file))
    assert status == 0, err
    assert out == "" and out_file.read_text().strip()


def test_opt_single_and_double_dash_flags_agree(capsys) -> None:
    for name in ("mlir-print-op-generic", "mlir-print-debuginfo", "allow-unregistered-dialect"):
        s1, out1, err1 = run(capsys, "opt", f"-{name}", str(VADD))
        s2, out2, err2 = run(capsys, "opt", f"--{name}", str(VADD))
        assert s1 == s2 == 0, err1 + err2
        assert out1 == out2


def test_opt_split_input_file_numbers_lines_as_in_the_file(capsys, tmp_path: Path) -> None:
    f = tmp_path / "split.mlir"
    f.write_text(GOOD + "\n// -----\n\n" + BAD + "// -----\n" + GOOD)
    status, out, err = run(capsys, "opt", "--split-input-file", str(f))
    assert status == 1
    bad_line = GOOD.count("\n") + 3 + 4  # GOOD, "", "// -----", "", then BAD's line 4
    assert err.startswith(f"{f}:{bad_line}:"), err
    assert out.count("// -----\n") == 1  # the two good chunks, joined
    assert out.count("entry @k") == 2


def test_opt_errors_exit_one_without_output(capsys, tmp_path: Path) -> None:
    f = tmp_path / "bad.mlir"
    f.write_text(BAD)
    status, out, err = run(capsys, "opt", str(f))
    assert status == 1 and out == ""
    assert err.startswith(f"{f}:4:")


@pytest.mark.parametrize("path", example_files(), ids=lambda p: p.name)
def test_python_dash_m_compiler(path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "compiler", "fmt", "--check", str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc.stderr)


def test_check_names_the_quick_fix(capsys, tmp_path: Path) -> None:
    path = tmp_path / "k.tileir"
    path.write_text(
        "cuda_tile.module @m {\n  entry @k() {\n    %a = constant <f32: 1.0> : tile<3xf32>\n    return\n  }\n}\n"
    )
    status, out, err = run(capsys, "check", str(path))
    assert status == 1
    assert f"{path}:3:37: error: all dimensions must be powers of two, got 3" in err
    assert "\n  help: Round 3 up to 4\n" in err


# Modules whose import alone costs a command's start-up several milliseconds (see the
# README's benchmark section): the text path's commands on a small file import none of them.
_HEAVY_IMPORTS = {"dataclasses", "inspect", "typing", "tempfile", "pickle", "difflib"}


@pytest.mark.parametrize("command", ["fmt", "check", "disasm"])
def test_small_file_commands_import_nothing_heavy(command, tmp_path):
    path = VADD
    if command == "disasm":
        path = tmp_path / "vector_add.tileirbc"
        assert cli.main(["asm", str(VADD), "-o", str(path)]) == 0
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "compiler", command, str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "compiler.cli" in imported  # the output is what the test reads
    assert not imported & _HEAVY_IMPORTS


def test_the_installed_program_imports_nothing_before_the_command_line():
    # bin/tileir, installed as the environment's `tileir`: the wrapper pip writes for a
    # [project.scripts] entry imported `re` first (~10 ms of each served compile's start-up).
    import sysconfig

    from compiler import __version__

    program = Path(sysconfig.get_path("scripts")) / "tileir"
    if not program.is_file():
        pytest.skip(f"the tileir program is not installed in {program.parent} (pip install -e .)")
    shebang = program.read_text().splitlines()[0]
    assert shebang.startswith("#!") and os.path.realpath(shebang[2:]) == os.path.realpath(sys.executable), shebang

    def imports(*argv: str) -> tuple[list[str], str]:
        proc = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, cwd=REPO)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stderr.splitlines()
        return [line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")], proc.stdout

    # What Python's start-up imports is not the program's: another package's .pth file may
    # import anything (ours imports nothing: the test after this one).
    startup = set(imports("-c", "pass")[0])
    imported, out = imports(str(program), "--version")
    assert out == f"tileir {__version__}\n"
    before = imported[: imported.index("compiler.cli")]  # (a line is written when its import ends)
    assert not {"re", "enum", "argparse"} & (set(before) - startup), before


def test_our_editable_install_imports_nothing_at_python_s_start_up():
    # pyproject.toml's package-dir: `pip install -e .` (the README's install, and CI's) then
    # writes a .pth of one path instead of an `import` line loading setuptools' finder, whose
    # pathlib imported re, enum and urllib in every process of the environment (10-20 ms).
    from importlib import metadata

    try:
        files = metadata.distribution("tileir-tools").files or []
    except metadata.PackageNotFoundError:
        pytest.skip("tileir-tools is not installed here (pip install -e .)")
    for pth in (f for f in files if f.name.endswith(".pth")):
        lines = pth.read_text().splitlines()
        assert not [line for line in lines if line.startswith(("import ", "import\t"))], (str(pth), lines)


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("0", "0")])
def test_the_program_has_triton_take_its_own_backends(given, seen):
    # `tileir` sets TRITON_BACKENDS_IN_TREE (Triton then skips scanning every installed
    # distribution for backends: ~15-20 ms of a cold compile) unless the user set it.
    script = (
        "import atexit, os, sys\n"
        "atexit.register(lambda: print(os.environ.get('TRITON_BACKENDS_IN_TREE')))\n"
        "sys.argv = ['tileir', '--version']\n"
        "from compiler.cli import run\n"
        "run()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_BACKENDS_IN_TREE"}
    if given is not None:
        env["TRITON_BACKENDS_IN_TREE"] = given
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == seen
