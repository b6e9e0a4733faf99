"""The command-line faces of the lowering: `tileir compile` (every --emit kind, the cache,
the default architecture, one-line errors with the CLI's exit statuses) and `tileir run
--backend triton-interpret`. Vector add is compiled for sm_90 once and then read from the
session's private cache (tests/lower/conftest.py)."""

from __future__ import annotations

import io
import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from compiler import cli
from compiler.cli import compile as cli_compile
from compiler.cli import launch as cli_launch
from compiler.lower import DEFAULT_ARCH, registry, to_triton
from compiler.lower import compile as lower_compile
from compiler.lower.targets import local_arch
from compiler.runtime import BACKENDS, load_module
from tests.corpus import REPO, VADD_RUN_ARGS
from tests.lower.harness import UNLOWERABLE

VADD = str(REPO / "examples" / "vector_add.tileir")
SUMMARY = re.compile(
    r"kernel @vector_add  arch sm_90  emit (\w+)  registers \d+  spills \d+ B  shared \d+ B  warps (\d+)  "
    r"time \d+\.\d{3} s( \(cached\))?"
)
TWO_KERNELS = """cuda_tile.module @m {
  entry @first() {
    return
  }
  entry @second() {
    return
  }
}
"""

WRONG = """cuda_tile.module @m {
  entry @k(%a: tile<i32>) {
    %c = addf %a, %a : tile<i32>
    return
  }
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def write(tmp_path: Path):
    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


# -- tileir compile: what it writes ------------------------------------------------------------


def test_every_emit_kind_of_vector_add(capsys, tmp_path: Path) -> None:
    module = load_module(VADD)
    status, out, err = run(capsys, "compile", VADD, "--arch", "sm_90", "--emit", "triton")
    assert status == 0 and out == to_triton(module, "vector_add", "sm_90")
    assert one_error_line(err).startswith("kernel @vector_add  arch sm_90  emit triton  time ")
    assert err.rstrip().endswith("(Triton source, not compiled)")

    expected = lower_compile(module, "vector_add", "sm_90")  # the compile the others read from the cache
    wanted = {
        "ttir": ["tt.func public @vector_add", "tt.load", "tt.store"],
        "ttgir": ["#ttg.blocked", '"ttg.num-warps" = 4'],
        "llir": ["define", "@vector_add", "fadd"],
        "ptx": [".target sm_90a", ".visible .entry vector_add(", "add.rn.f32"],
        "sass": ["code for sm_90", "Function : vector_add", "FADD"],
        "ops": ["# LLVM IR instructions of @vector_add for sm_90 by Tile IR op", "load_view_tko", "addf"],
    }
    for kind, needles in wanted.items():
        status, out, err = run(capsys, "compile", VADD, "--arch", "sm_90", "--emit", kind)
        assert status == 0, err
        for needle in needles:
            assert needle in out, (kind, needle)
        if kind in expected.asm:
            assert out == expected.asm[kind], kind
        summary = SUMMARY.fullmatch(one_error_line(err))
        assert summary is not None, err
        assert summary.group(1) == kind and summary.group(2) == "4" and summary.group(3) == " (cached)"

    cubin = tmp_path / "vector_add.cubin"
    status, out, err = run(capsys, "compile", VADD, "--arch", "sm_90", "--emit", "cubin", "-o", str(cubin))
    assert status == 0 and out == "" and SUMMARY.fullmatch(one_error_line(err))
    assert cubin.read_bytes() == expected.cubin and cubin.read_bytes()[:4] == b"\x7fELF"


def test_no_cache_compiles_again_and_gives_the_same_ptx(capsys) -> None:
    status, cached, _ = run(capsys, "compile", VADD, "--arch", "sm_90")
    assert status == 0
    status, fresh, err = run(capsys, "compile", VADD, "--arch", "sm_90", "--no-cache")
    assert status == 0 and fresh == cached
    summary = SUMMARY.fullmatch(one_error_line(err))
    assert summary is not None and summary.group(3) is None  # not "(cached)"


def test_output_file_quiet_and_options(capsys, tmp_path: Path) -> None:
    out_file = tmp_path / "k.ptx"
    out_file.write_text("old")
    out_file.chmod(0o640)
    status, out, err = run(capsys, "compile", VADD, "--arch", "sm_90", "-o", str(out_file), "-q")
    assert status == 0 and out == "" and err == ""
    assert out_file.read_text().startswith("//") and ".entry vector_add" in out_file.read_text()
    assert stat.S_IMODE(out_file.stat().st_mode) == 0o640  # replaced atomically, mode kept
    assert [p.name for p in tmp_path.iterdir()] == ["k.ptx"]  # no temporary left behind
    status, out, _ = run(capsys, "compile", VADD, "--arch", "sm_90", "-o", "-", "-q")
    assert status == 0 and out == out_file.read_text()

    status, out, err = run(capsys, "compile", VADD, "--arch", "sm_90", "--emit", "ttgir", "--num-warps", "8")
    assert status == 0 and '"ttg.num-warps" = 8' in out
    summary = SUMMARY.fullmatch(one_error_line(err))
    assert summary is not None and summary.group(2) == "8"


def test_bytecode_and_stdin_inputs(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bytecode = tmp_path / "vector_add.tileirbc"
    assert run(capsys, "asm", VADD, "-o", str(bytecode))[0] == 0
    text = Path(VADD).read_text()
    status, out, _ = run(capsys, "compile", str(bytecode), "--arch", "sm_90", "--emit", "triton", "-q")
    assert status == 0 and "@triton.jit" in out and "def vector_add(" in out
    for data in (text.encode(), bytecode.read_bytes()):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        status, out, _ = run(capsys, "compile", "-", "--arch", "sm_90", "--emit", "triton", "-q")
        assert status == 0 and "def vector_add(" in out


def test_the_command_line_itself(tmp_path: Path) -> None:
    """`python -m compiler compile` in a process of its own: binary cubin on a pipe, the
    summary on stderr (the cache directory is inherited from the test's environment)."""
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", VADD, "--arch", "sm_90", "--emit", "cubin"],
        capture_output=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout[:4] == b"\x7fELF"
    assert SUMMARY.fullmatch(done.stderr.decode().strip()), done.stderr


# -- the default architecture ------------------------------------------------------------------


def fake_nvidia_smi(directory: Path, script: str) -> None:
    tool = directory / "nvidia-smi"
    tool.write_text("#!/bin/sh\n" + script + "\n")
    tool.chmod(0o755)


@pytest.mark.parametrize(
    ("script", "visible", "arch"),
    [
        ('echo "8.6"', None, "sm_86"),
        ('echo "12.0"; echo "9.0"', None, "sm_120"),  # the first GPU
        ('case "$*" in *--id=1*) echo "10.0";; *) echo "8.0";; esac', "1", "sm_100"),  # CUDA_VISIBLE_DEVICES
        ('echo "8.6"', "", "sm_90"),  # every GPU hidden
        ('echo "7.5"', None, "sm_90"),  # older than Triton supports
        ("echo 'NVIDIA-SMI has failed'; exit 9", None, "sm_90"),
        ("echo garbage", None, "sm_90"),
    ],
)
def test_default_arch_is_the_local_gpus(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str, visible: str | None, arch: str
) -> None:
    fake_nvidia_smi(tmp_path, script)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    status, out, err = run(capsys, "compile", VADD, "--emit", "triton")
    assert status == 0 and f"for {arch}." in out.splitlines()[0]
    assert one_error_line(err).startswith(f"kernel @vector_add  arch {arch}  emit triton")


def test_the_local_gpus_architecture_is_asked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """nvidia-smi runs once per visible GPU and nvidia-smi in a process (a compile server's
    workers inherit its answer); a failed query is not kept, and is made again."""
    calls = tmp_path / "calls"
    fake_nvidia_smi(tmp_path, f'echo "$*" >> {calls}; case "$*" in *--id=1*) echo "10.0";; *) echo "8.0";; esac')
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert [local_arch(), local_arch()] == ["sm_80", "sm_80"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    assert [local_arch(), local_arch()] == ["sm_100", "sm_100"]
    assert len(calls.read_text().splitlines()) == 2
    failing = tmp_path / "failing"
    failing.mkdir()
    fake_nvidia_smi(failing, f"echo failed >> {calls}; exit 9")
    monkeypatch.setenv("PATH", f"{failing}{os.pathsep}{os.environ.get('PATH', '')}")
    assert [local_arch(), local_arch()] == [None, None]
    assert calls.read_text().splitlines()[2:] == ["failed", "failed"]


def test_without_nvidia_smi_the_default_is_sm_90(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi here
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("a GPU device is here: the default comes from cuda.core or torch")
    assert local_arch() is None
    status, _, err = run(capsys, "compile", VADD, "--emit", "triton")
    assert status == 0 and "arch sm_90" in err


# -- tileir compile: errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--arch", "bogus"], "tileir: error: --arch: unknown GPU architecture 'bogus'; use one of sm_80"),
        (["--arch", ""], "tileir: error: --arch '': an empty architecture; name one or several, e.g. sm_90"),
        (["--arch", "sm_80,"], "tileir: error: --arch 'sm_80,': an empty architecture; name one or several"),
        (["--arch", "sm_80,bogus"], "tileir: error: --arch: unknown GPU architecture 'bogus'; use one of sm_80"),
        (["--arch", "sm_9"], "tileir: error: --arch: unknown GPU architecture 'sm_9'; use one of sm_80, sm_86, sm_87,"),
        (["--arch", "sm_70"], "tileir: error: --arch: sm_70: the Triton lowering needs sm_80 or newer"),
        (["--arch", "sm_95"], "tileir: error: --arch sm_95: Triton 3."),
        (["-k", "nope"], "tileir: error: no kernel named 'nope'; the module has: vector_add"),
        (["--num-warps", "3"], "tileir: error: --num-warps 3: must be a power of two from 1 to 32"),
        (["--num-warps", "64"], "tileir: error: --num-warps 64: must be a power of two from 1 to 32"),
        (["--num-stages", "0"], "tileir: error: --num-stages 0: must be from 1 to 64 (each stage holds one loop"),
        # Triton takes an int32: 2^31 was a Triton failure reported as a bug in the lowering.
        (["--num-stages", "2147483648"], "tileir: error: --num-stages 2147483648: must be from 1 to 64"),
        (["--emit", "asm"], "tileir compile: error: argument --emit: invalid choice: 'asm'"),
        (["-o", VADD], f"tileir: error: -o {VADD} would replace the input file"),
    ],
)
def test_usage_errors_are_one_line_with_status_2(capsys, argv: list[str], message: str) -> None:
    status, out, err = run(capsys, "compile", VADD, *argv)
    assert status == 2 and out == ""
    assert one_error_line(err).startswith(message), err


def test_several_files_and_architectures_in_one_process(capsys, tmp_path: Path) -> None:
    """FILE... and --arch A,B: every file for every architecture, into -o DIR as
    STEM.ARCH.EXT, each the same as its own compile; a summary line each, naming the file."""
    softmax = str(REPO / "examples" / "softmax.tileir")
    bytecode = tmp_path / "vadd.tileirbc"
    assert run(capsys, "asm", VADD, "-o", str(bytecode))[0] == 0
    out_dir = tmp_path / "build" / "ptx"  # made, parents too
    status, out, err = run(
        capsys, "compile", str(bytecode), softmax, "--arch", "sm_80,sm_90,sm_80", "--emit", "ptx", "-o", str(out_dir)
    )
    assert status == 0 and out == ""
    names = [f"{stem}.{arch}.ptx" for stem in ("vadd", "softmax") for arch in ("sm_80", "sm_90")]
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(names)
    lines = err.strip().splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [str(out_dir / name) for name in names]
    assert all(re.search(r": kernel @\w+  arch sm_\d+  emit ptx  registers \d+", line) for line in lines), err
    for path, kernel in ((str(bytecode), "vector_add"), (softmax, "softmax")):
        stem = "vadd" if kernel == "vector_add" else "softmax"
        for arch in ("sm_80", "sm_90"):
            want = lower_compile(load_module(path), kernel, arch).asm["ptx"]
            assert (out_dir / f"{stem}.{arch}.ptx").read_text() == want, (stem, arch)


def test_several_compiles_check_every_input_first_and_go_on_after_a_failure(capsys, write, tmp_path: Path) -> None:
    good, wrong = write("good.tileir", Path(VADD).read_text()), write("wrong.tileir", WRONG)
    (tmp_path / "sub").mkdir()
    out_dir = tmp_path / "out"
    for argv, message in [
        ([good, wrong], "tileir: error: 2 outputs (2 files, 1 architecture): name a directory for them with -o DIR"),
        ([good, "--arch", "sm_80,sm_90"], "tileir: error: 2 outputs (1 file, 2 architectures): name a directory"),
        ([good, "-", "-o", str(out_dir)], "tileir: error: - (standard input) cannot be one of several inputs"),
        ([good, VADD, "-o", str(out_dir)], ""),  # (distinct stems: fine)
        ([good, write("sub/good.tileirbc", ""), "-o", str(out_dir)], f"tileir: error: '{good}' and "),
        ([good, wrong, "-o", good], f"tileir: error: -o {good} would replace the input file"),
        ([good, wrong, "-o", VADD], f"tileir: error: -o {VADD}: not a directory (several outputs go into one)"),
        ([good, str(tmp_path / "missing.tileir"), "-o", str(out_dir)], "tileir: error: cannot read"),
    ]:
        status, _, err = run(capsys, "compile", *argv, "--emit", "triton", "-q")
        if not message:
            assert status == 0, err
            continue
        assert status == 2 and one_error_line(err).startswith(message), (argv, err)
    assert sorted(p.name for p in out_dir.iterdir()) == ["good.sm_90.py", "vector_add.sm_90.py"]
    # A module with errors: its diagnostics, the others compiled, status 1.
    status, _, err = run(capsys, "compile", wrong, good, "--arch", "sm_80", "--emit", "triton", "-o", str(out_dir))
    assert (
        status == 1
        and "wrong.tileir:3:15: error: 'cuda_tile.addf' op" in err
        and f"'{wrong}' has errors; not compiled" in err
    )
    assert (out_dir / "good.sm_80.py").read_text() == to_triton(load_module(good), "vector_add", "sm_80")
    assert not (out_dir / "wrong.sm_80.py").exists()


def test_worker_processes_write_what_one_process_writes(capsys, write, tmp_path: Path) -> None:
    """-j 2: the same files, the same summary lines in the same order; what the lowering
    refuses is reported by its worker, in order; -j 0 is a usage error."""
    softmax = str(REPO / "examples" / "softmax.tileir")
    unlowerable = write("alloca.tileir", UNLOWERABLE)
    runs = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}"
        status, _, err = run(capsys, "compile", VADD, softmax, "--arch", "sm_80,sm_90", "-o", str(out), "-j", jobs)
        assert status == 0, err
        runs[jobs] = (
            {p.name: p.read_text() for p in out.iterdir()},
            [line.split(": ", 1)[0] for line in err.splitlines()],
        )
    assert runs["1"][0] == runs["2"][0] and len(runs["2"][0]) == 4
    assert [Path(p).name for p in runs["1"][1]] == [Path(p).name for p in runs["2"][1]]
    status, _, err = run(capsys, "compile", unlowerable, VADD, "-o", str(tmp_path / "e"), "-j", "2", "--emit", "ttir")
    lines = err.splitlines()
    assert (
        status == 1 and len(lines) == 2 and lines[0].startswith(f"{unlowerable}:3:5: error: alloca: alloca alignment")
    )
    assert lines[1].startswith(str(tmp_path / "e" / "vector_add.sm_90.ttir"))
    status, _, err = run(capsys, "compile", VADD, "-j", "0")
    assert status == 2 and one_error_line(err) == "tileir: error: -j 0: give 1 or more worker processes"


def test_arch_spellings(capsys) -> None:
    for spelling in ("sm_90a", "90", "SM_90", "compute_90"):
        status, _, err = run(capsys, "compile", VADD, "--arch", spelling, "--emit", "triton")
        assert status == 0 and "arch sm_90" in err, spelling
    assert (
        "ptxas cannot compile for sm_95; use one of sm_80, sm_86" in run(capsys, "compile", VADD, "--arch", "sm_95")[2]
    )


def test_several_kernels_need_k(capsys, write) -> None:
    path = write("two.tileir", TWO_KERNELS)
    status, _, err = run(capsys, "compile", path)
    assert status == 2
    assert one_error_line(err) == "tileir: error: the module has 2 kernels (first, second); name one with -k"
    status, out, err = run(capsys, "compile", path, "-k", "@second", "--arch", "sm_90", "--emit", "triton")
    assert status == 0 and "def second(" in out


def test_missing_file_and_cubin_to_a_terminal(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    status, _, err = run(capsys, "compile", str(tmp_path / "none.tileir"))
    assert status == 2 and "cannot read" in one_error_line(err)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdout", Terminal())
    status = cli.main(["compile", VADD, "--emit", "cubin"])
    _, err = capsys.readouterr()
    assert status == 2 and sys.stdout.getvalue() == ""
    assert one_error_line(err).startswith("tileir: error: --emit cubin writes a binary file: name it with -o OUT")


def test_a_module_with_errors_prints_its_diagnostics(capsys, write) -> None:
    path = write("wrong.tileir", WRONG)
    status, out, err = run(capsys, "compile", path)
    assert status == 1 and out == ""
    assert f"{path}:3:15: error: 'cuda_tile.addf' op operand #0 must be tile of f16" in err
    assert err.rstrip().endswith(f"tileir compile: '{path}' has errors; not compiled")


def test_what_the_lowering_cannot_do_is_one_diagnostic_with_status_1(
    capsys, write, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compiler.lower import ops  # noqa: F401  (registers the emitters, so that one can be taken away)

    path = write("alloca.tileir", UNLOWERABLE)
    status, out, err = run(capsys, "compile", path, "--arch", "sm_90")
    assert status == 1 and out == ""
    assert one_error_line(err) == (
        f"{path}:3:5: error: alloca: alloca alignment 512 exceeds the 256 bytes device allocations "
        "guarantee [target sm_90]"
    )
    # An op without an emitter (taken away here: every op of vector add has one).
    monkeypatch.delitem(registry.EMITTERS, "cuda_tile.addf")
    for emit in ("triton", "ptx"):
        status, out, err = run(capsys, "compile", VADD, "--arch", "sm_100", "--emit", emit)
        assert status == 1 and out == ""
        line = one_error_line(err)
        assert re.fullmatch(
            re.escape(VADD)
            + r":\d+:\d+: error: addf: the Triton lowering has no emitter for this op \[target sm_100\]",
            line,
        ), line
    monkeypatch.setitem(registry.UNSUPPORTED, "cuda_tile.addf", "not on this test's GPU")
    status, _, err = run(capsys, "compile", VADD, "--arch", "sm_90", "--emit", "triton")
    assert status == 1 and one_error_line(err).endswith("error: addf: not on this test's GPU [target sm_90]")


def test_triton_missing_is_a_usage_error(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    from compiler.lower import build

    monkeypatch.setattr(build, "triton_version", lambda: None)
    status, out, err = run(capsys, "compile", VADD, "--arch", "sm_90")
    assert status == 2 and out == ""
    assert one_error_line(err) == (
        "tileir: error: --emit ptx: compiling needs Triton (pip install 'triton>=3.6'); it is not installed"
    )
    status, out, _ = run(capsys, "compile", VADD, "--arch", "sm_90", "--emit", "triton", "-q")
    assert status == 0 and "@triton.jit" in out  # the source needs no Triton
    status, _, err = run(capsys, "run", VADD, "--backend", "triton-interpret", *VADD_RUN_ARGS)
    assert status == 2 and one_error_line(err).startswith("tileir: error: --backend triton-interpret: compiling needs")


def test_a_triton_failure_is_an_internal_error_and_its_prints_stay_off_stdout(
    capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compiler.lower import LowerError, build

    def failing(src, opts, divisible=(), isolate=False):
        print("a reproducer Triton prints on stdout")
        raise LowerError("Triton could not compile the lowered kernel (PTXASError: ...)", target=src.target.arch)

    monkeypatch.setattr(build, "_compile", failing)
    status, out, err = run(capsys, "compile", VADD, "--arch", "sm_90", "--no-cache")
    assert status == 3 and out == ""
    assert one_error_line(err) == (
        "tileir: error: Triton could not compile the lowered kernel (PTXASError: ...) [target sm_90]"
    )
    monkeypatch.setenv("TILEIR_TRACEBACK", "1")
    status, out, err = run(capsys, "compile", VADD, "--arch", "sm_90", "--no-cache")
    assert status == 3 and out == "" and "a reproducer Triton prints on stdout" in err


# tileir compile with the lowering's workarounds of Triton 3.6's defects off (tests/lower/
# harness.py, without_workarounds): a real Triton failure on a kernel of ours.
WITHOUT_WORKAROUNDS = """
import sys
from compiler.cli import run
from compiler.lower import build
from tests.lower.harness import without_workarounds

real = build.import_kernel
build.import_kernel = lambda src, interpret=False: real(without_workarounds(src), interpret)
sys.argv[0] = "tileir"
run()
"""


def test_a_triton_crash_is_one_line_naming_the_pass_and_its_report(tmp_path: Path) -> None:
    """Triton 3.6 fails an assertion in TritonGPUCoalesce on a kernel of ours with the
    workaround of that defect off (test_control.py's DEAD_LOOP_LOAD). Its C++ side writes the
    assertion, MLIR's errors and the whole module as a reproducer on file descriptor 2: none of
    that stands before the diagnostic; the one line names the pass and the assertion, and a
    file named there keeps the report."""
    from tests.lower.harness import triton_version
    from tests.lower.test_control import DEAD_LOOP_LOAD

    if triton_version() > (3, 6):
        pytest.skip(f"Triton {'.'.join(map(str, triton_version()))} compiles the kernel (3.6 failed)")
    path = tmp_path / "dead.tileir"
    path.write_text(DEAD_LOOP_LOAD)
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_WORKAROUNDS, "compile", str(path), "--no-cache", "--emit", "ptx"],
        capture_output=True, text=True, cwd=REPO, timeout=120, env={**os.environ, "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 3 and done.stdout == ""
    line = one_error_line(done.stderr)
    found = re.fullmatch(
        r"tileir: error: Triton could not compile the lowered kernel \(RuntimeError: PassManager::run failed; "
        r"in TritonGPUCoalesce; assertion 'idx < size\(\)' failed\); this is a bug in the lowering, please "
        r"report it with Triton's report, (\S+\.log) \[target sm_90\]",
        line,
    )
    assert found, line
    report = Path(found.group(1)).read_text()
    assert Path(found.group(1)).parent == tmp_path and "mlir_reproducer" in report
    assert report.rstrip().endswith("RuntimeError: PassManager::run failed")


def test_what_triton_writes_on_a_success_still_reaches_stderr() -> None:
    """A dump the user asked Triton for (MLIR_ENABLE_DUMP: every pass's IR, written by its C++
    side on fd 2, which a compile now captures) comes out on stderr before the summary line,
    and the output stays the PTX alone."""
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", VADD, "--arch", "sm_90", "--no-cache", "--emit", "ptx"],
        capture_output=True, text=True, cwd=REPO, timeout=120, env={**os.environ, "MLIR_ENABLE_DUMP": "1"},
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.startswith("//") and ".visible .entry vector_add" in done.stdout
    lines = done.stderr.strip().splitlines()
    assert any("IR Dump Before" in line for line in lines[:5]) and len(lines) > 100
    assert SUMMARY.fullmatch(lines[-1]), lines[-1]


def test_the_compile_s_child_runs_only_the_compile_s_ptxas(tmp_path: Path) -> None:
    """Triton runs `ptxas --version` at its first compile in a process (twice, cached apart);
    `tileir compile` runs them before it forks the child its compile runs in (build.py,
    prepare), so that neither it nor each child of a `-j` build pays them again. Seen
    through a ptxas that notes who ran it."""
    from triton.backends.nvidia.compiler import get_ptxas

    log = tmp_path / "ran"
    wrapper = tmp_path / "ptxas"
    wrapper.write_text(f'#!/bin/sh\necho "$PPID $*" >> {log}\nexec {get_ptxas(90).path} "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "TRITON_PTXAS_PATH": str(wrapper), "TRITON_PTXAS_BLACKWELL_PATH": str(wrapper)}
    env["TILEIR_SERVER"] = "off"
    argv = [sys.executable, "-m", "compiler", "compile", VADD, "--arch", "sm_90", "--no-cache", "--emit", "cubin"]
    done = subprocess.Popen([*argv, "-o", str(tmp_path / "k.cubin")], cwd=REPO, env=env, stderr=subprocess.PIPE)
    assert done.wait(timeout=120) == 0, done.stderr.read() if done.stderr else ""
    runs = [line.split(" ", 1) for line in log.read_text().splitlines()]
    versions = {int(pid) for pid, args in runs if args == "--version"}
    compiles = {int(pid) for pid, args in runs if "--gpu-name" in args}
    assert versions == {done.pid}, runs  # the command's own process asked for the version
    assert len(compiles) == 1 and compiles != versions, runs  # the compile's child ran ptxas once


# tileir compile, where Triton's compile ends its process as a crash of Triton's C++ side would.
CRASHES = """
import ctypes, os, sys
import triton


def crash(*args, **kwargs):
    if os.environ["CRASH"] == "fatal":  # LLVM's report_fatal_error: a message, then exit(1)
        os.write(2, b"LLVM ERROR: Cannot select: 0x5581 i1 = fcmp_une\\n")
        os._exit(1)
    ctypes.string_at(0)  # a segmentation fault


triton.compile = crash
from compiler.cli import run
sys.argv[0] = "tileir"
run()
"""


@pytest.mark.parametrize(
    ("crash", "how"),
    [("fatal", "its process ended with status 1; Cannot select: 0x5581 i1 = fcmp_une"),
     ("segfault", "its process killed by SIGSEGV")],
)  # fmt: skip
def test_a_triton_crash_is_a_diagnostic_not_the_end_of_tileir(tmp_path: Path, crash: str, how: str) -> None:
    """tileir compile runs Triton in a child process (compiler/lower/guard.py): where Triton's
    C++ side ends the process (an LLVM fatal error, a segmentation fault), which MLIR's crash
    recovery does not catch, tileir still says what happened in one line, with what Triton
    wrote kept in a file the line names."""
    argv = [sys.executable, "-c", CRASHES, "compile", VADD, "--arch", "sm_90", "--emit", "ptx", "--no-cache"]
    env = {**os.environ, "CRASH": crash, "TMPDIR": str(tmp_path)}
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert done.returncode == 3 and done.stdout == ""
    line = one_error_line(done.stderr)
    kept = r" with Triton's report, (\S+\.log)" if crash == "fatal" else "()"
    found = re.fullmatch(
        rf"tileir: error: Triton crashed compiling the lowered kernel \({re.escape(how)}\); this is a bug in the "
        rf"lowering, please report it{kept} \[target sm_90\]",
        line,
    )
    assert found, line
    if crash == "fatal":
        assert "LLVM ERROR: Cannot select" in Path(found.group(1)).read_text()


def test_without_a_child_process_the_compile_runs_on_a_thread_with_stderr_read(tmp_path, monkeypatch) -> None:
    """Where it does not fork (a language server, a notebook kernel: they run threads), the
    compile runs on a thread of its own and what Triton's C++ side writes on fd 2 is read
    all the same: Triton 3.6's assertion in TritonGPUCoalesce (the workaround off), named in
    the one line."""
    from compiler.lower import LowerError, lower
    from compiler.lower.build import compile_source
    from tests.lower.harness import triton_version, without_workarounds
    from tests.lower.test_control import DEAD_LOOP_LOAD

    if triton_version() > (3, 6):
        pytest.skip(f"Triton {'.'.join(map(str, triton_version()))} compiles the kernel (3.6 failed)")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # (tempfile reads TMPDIR once)
    module = load_module(DEAD_LOOP_LOAD)
    with pytest.raises(LowerError) as caught:
        compile_source(without_workarounds(lower(module, None, "sm_90")), use_cache=False)  # isolate=False: the thread
    assert "in TritonGPUCoalesce; assertion 'idx < size()' failed" in caught.value.message
    assert str(tmp_path) in caught.value.message


# A compile that never ends: Triton 3.6 and 3.9 loop forever in TritonGPURemoveLayoutConversions
# on a small tile carried through tl.permute by a loop (before compiler/lower/ops_shape gathered
# instead). Written straight in Triton: our lowering no longer emits it.
PERMUTE_IN_A_LOOP = """
import triton
import triton.language as tl


@triton.jit
def k(x, y, n):
    offs = tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :]
    acc = tl.load(x + offs)
    for i in range(0, n):
        acc = tl.permute(acc, (1, 0))
    tl.store(y + offs, acc)
"""

# tileir compile, where Triton's compile, whatever it is given, compiles PERMUTE_IN_A_LOOP.
NEVER_ENDS = """
import os, pathlib, sys
import triton
from triton.compiler import ASTSource

sys.path.insert(0, os.environ["HANG_DIR"])
import hang

real = triton.compile


def never_ends(src, target=None, options=None):
    pathlib.Path(os.environ["STARTED"]).touch()
    return real(ASTSource(fn=hang.k, signature={"x": "*fp32", "y": "*fp32", "n": "i32"}, constexprs={}), target=target)


triton.compile = never_ends
from compiler.cli import run
sys.argv[0] = "tileir"
run()
"""


def test_compile_time_limit_and_ctrl_c(tmp_path: Path) -> None:
    """A real hang of Triton's passes (they release the GIL but never return to Python): the
    limit ($TILEIR_COMPILE_TIMEOUT) ends it with one line and status 3 (a bug of Triton's on
    our output), and Ctrl-C stops it (status 130), which waited for Triton's end while the
    compile ran on the main thread; the process ends, leaving the compile behind on a daemon
    thread. Neither leaves Triton's scratch directory behind. A limit that is no number is a
    usage error."""
    import signal
    import time

    argv = [sys.executable, "-c", NEVER_ENDS, "compile", VADD, "--arch", "sm_90", "--emit", "ptx", "--no-cache"]
    (tmp_path / "hang.py").write_text(PERMUTE_IN_A_LOOP)
    scratch = tmp_path / "tmp"  # (TMPDIR: where the scratch directories go)
    scratch.mkdir()
    env = {
        **os.environ, "TILEIR_COMPILE_TIMEOUT": "1.5", "STARTED": str(tmp_path / "first"), "HANG_DIR": str(tmp_path),
        "TMPDIR": str(scratch),
    }  # fmt: skip
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert done.returncode == 3 and done.stdout == "" and time.monotonic() - start < 60
    assert not list(scratch.glob("tileir-scratch-*"))
    assert done.stderr.strip() == (
        "tileir: error: Triton did not finish compiling @vector_add within the limit of 1.5 s "
        "($TILEIR_COMPILE_TIMEOUT: seconds, 0 for none); a compile that never ends is a bug of Triton on "
        "our output, please report it with the input [target sm_90]"
    )
    env["TILEIR_COMPILE_TIMEOUT"] = "0"  # no limit: only Ctrl-C ends it
    started = tmp_path / "started"
    env["STARTED"] = str(started)
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        while not started.exists():
            assert process.poll() is None and time.monotonic() - start < 100, process.communicate()
            time.sleep(0.05)
        time.sleep(2)  # well into Triton's passes
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130 and out == "" and err.strip() == "tileir: interrupted", err
    assert not list(scratch.glob("tileir-scratch-*"))
    env["TILEIR_COMPILE_TIMEOUT"] = "soon"
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert done.returncode == 2 and done.stderr.strip() == (
        "tileir: error: --emit ptx: TILEIR_COMPILE_TIMEOUT='soon' is not a number of seconds (0: no limit)"
    )


@pytest.mark.parametrize(
    "written",
    ["tileir-scratch-*/*", "tileir-scratch-*/tmp*.ptx"],
    ids=["Triton-has-begun", "ptxas-is-running"],
)
def test_ctrl_c_in_a_compile_s_child_leaves_no_scratch_directory(tmp_path: Path, written: str) -> None:
    """A `tileir compile` compiles in a child of its own; Ctrl-C kills that child, which then
    cannot remove Triton's scratch directory: the parent does (it made it). Before, each Ctrl-C
    left one in /tmp, up to a few MB; and one while ptxas ran left the `.ptx` and `.log` Triton
    made for it in /tmp itself (now made in the scratch directory)."""
    import signal
    import time

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "TILEIR_SERVER": "off", "TILEIR_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "compiler", "compile", str(REPO / "examples" / "matmul.tileir"), "--arch", "sm_100"]
    process = subprocess.Popen([*argv, "--emit", "cubin", "-o", str(tmp_path / "k.cubin")], cwd=REPO, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 100
        while not list(scratch.glob(written)):
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.002)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130 and err.strip() == "tileir: interrupted", err
    assert list(scratch.iterdir()) == []


def test_one_kernel_compiles_without_the_collector_a_build_with_it(capsys, tmp_path: Path) -> None:
    """`tileir compile` of one kernel turns Python's garbage collector off (the process ends
    after it: 2-3 % of a cold compile's instructions, compile.py); a build of several keeps it
    on, since each kernel's module is garbage once compiled."""
    import gc

    was = gc.isenabled()  # (left as found: see the note in tests/conftest.py)
    try:
        gc.enable()
        status, _, _ = run(capsys, "compile", VADD, "--emit", "triton", "-o", str(tmp_path / "k.py"))
        assert status == 0 and not gc.isenabled()
        gc.enable()  # (as in a process of its own)
        status, _, _ = run(capsys, "compile", VADD, "--arch", "sm_80,sm_90", "--emit", "triton", "-o", str(tmp_path))
        assert status == 0 and gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_help(capsys) -> None:
    status, out, _ = run(capsys, "--help")
    assert status == 0 and "compile" in out
    status, out, _ = run(capsys, "compile", "--help")
    assert status == 0
    for needle in ("--arch", "--emit", "{triton,ttir,ttgir,llir,ptx,cubin,sass,ops}", "--no-cache", "--num-warps",
                   "--compiler {triton,tileiras}"):  # fmt: skip
        assert needle in out
    status, out, _ = run(capsys, "run", "--help")
    assert status == 0 and "{auto,cpu,triton-interpret,triton,tileiras}" in out


# -- tileir compile --compiler tileiras ------------------------------------------------------------

F4_VALUES = """cuda_tile.module @m {
  entry @k() {
    %c = constant <f32: 1.5> : tile<2xf32>
    %f = ftof %c : tile<2xf32> -> tile<2xf4E2M1FN>
    return
  }
}
"""


def test_tileiras_compiles_the_bytecode_to_sass_or_a_cubin(capsys, tmp_path: Path) -> None:
    """--compiler tileiras: NVIDIA's cubin of our bytecode (the one `run --backend tileiras`
    launches: it carries tileiras' launch metadata, ours does not), SASS by default; a
    summary line of the kernel's resources as the cubin declares them."""
    from compiler.lower.cubin import read_cubin
    from compiler.runtime.tileiras import compile_tileiras
    from tests.bytecode.util import require_tileiras

    require_tileiras()
    status, sass, err = run(capsys, "compile", VADD, "--compiler", "tileiras", "--arch", "sm_80")
    assert status == 0 and "Function : vector_add" in sass and "EF_CUDA_SM80" in sass, err
    summary = re.fullmatch(
        r"kernel @vector_add  arch sm_80  emit sass  tileiras \d+\.\d+[\w.]*  registers (\d+)  stack 0 B  "
        r"shared 0 B  threads (\d+)  time \d+\.\d{3} s( \(cached\))?\n",
        err,
    )
    assert summary, err
    cubin = tmp_path / "vadd.cubin"
    argv = ["compile", VADD, "--compiler", "tileiras", "--arch", "sm_80", "--emit", "cubin", "-o", str(cubin), "-q"]
    status, _, err = run(capsys, *argv)
    assert status == 0 and err == ""
    info = read_cubin(cubin.read_bytes()).kernels["vector_add"]
    assert info.tile_kernel and info.registers == int(summary[1]) and info.reqntid == (int(summary[2]), 1, 1)
    assert cubin.read_bytes() == compile_tileiras(load_module(VADD), "sm_80").cubin
    ours = lower_compile(load_module(VADD), "vector_add", "sm_80").cubin
    assert not read_cubin(ours).kernels["vector_add"].tile_kernel
    two = tmp_path / "two.tileir"
    two.write_text(TWO_KERNELS)
    status, sass, err = run(capsys, "compile", str(two), "--compiler", "tileiras", "-k", "second")
    assert status == 0 and "Function : second" in sass and "Function : first" not in sass, err  # -k's alone
    arch = local_arch() or DEFAULT_ARCH  # the default, as for our compiles
    status, _, err = run(capsys, "compile", VADD, "--compiler", "tileiras", "--emit", "cubin", "-o", str(cubin))
    assert status == 0 and f"arch {arch}  emit cubin  tileiras " in err
    # several architectures into a directory, in worker processes too
    for jobs in ("1", "2"):
        out_dir = tmp_path / f"j{jobs}"
        status, _, err = run(capsys, "compile", VADD, "--compiler", "tileiras", "--arch", "sm_80,sm_100", "-o",
                             str(out_dir), "-j", jobs)  # fmt: skip
        assert status == 0, err
        assert sorted(p.name for p in out_dir.iterdir()) == ["vector_add.sm_100.sass", "vector_add.sm_80.sass"]
        assert "EF_CUDA_SM100" in (out_dir / "vector_add.sm_100.sass").read_text()
        assert [line.split(": ")[0] for line in err.splitlines()] == [
            str(out_dir / "vector_add.sm_80.sass"), str(out_dir / "vector_add.sm_100.sass")
        ]  # fmt: skip


def test_tileiras_refusals_and_usage_errors(capsys, write, monkeypatch: pytest.MonkeyPatch) -> None:
    from compiler.runtime import tileiras
    from tests.bytecode.util import require_tileiras

    require_tileiras()
    for argv, message in [
        (["--emit", "ptx"], "tileir: error: --emit ptx: tileiras compiles the bytecode straight to a cubin; give "),
        (["--num-warps", "8"], "tileir: error: --num-warps: an option of the Triton lowering; tileiras chooses"),
        (["--compiler", "nvcc"], "tileir compile: error: argument --compiler: invalid choice: 'nvcc'"),
        (["--arch", "sm_75"], "tileir: error: --arch sm_75: tileiras compiles for sm_80 and newer, e.g. sm_90"),
    ]:
        status, out, err = run(capsys, "compile", VADD, "--compiler", "tileiras", *argv)
        assert status == 2 and out == "" and one_error_line(err).startswith(message), err
    # A type the target lacks: tileiras says so, status 1; the other architecture is written.
    f4 = write("f4.tileir", F4_VALUES)
    status, out, err = run(capsys, "compile", f4, "--compiler", "tileiras", "--arch", "sm_90", "--no-cache")
    assert status == 1 and out == ""
    assert one_error_line(err) == (
        "tileir: error: tileiras could not compile the module for sm_90: error: Incompatibility with "
        "architecture 'sm_90': unsupported type 'f4E2M1FN' (the triton backend may compile it: it takes exact "
        "slower paths where a target lacks a type or an instruction)"
    )
    out_dir = Path(f4).parent / "out"
    status, _, err = run(capsys, "compile", f4, "--compiler", "tileiras", "--arch", "sm_90,sm_100", "-o", str(out_dir))
    assert status == 1 and [p.name for p in out_dir.iterdir()] == ["f4.sm_100.sass"], err
    # Not installed, nothing cached: a usage error that says how to install it.
    monkeypatch.setattr(tileiras, "_find_tool", lambda: None)
    monkeypatch.setattr(tileiras, "find_tileiras", lambda: None, raising=False)
    import compiler.runtime

    monkeypatch.setattr(compiler.runtime, "find_tileiras", lambda: None)
    status, out, err = run(capsys, "compile", VADD, "--compiler", "tileiras", "--no-cache")
    assert status == 2 and out == ""
    assert (
        "tileir: error: --compiler tileiras: compiling for sm_90 with the tileiras backend needs NVIDIA's "
        in (one_error_line(err))
        and "pip install nvidia-cuda-tileiras" in err
    )
    # Not installed, but the cache holds tileiras' refusal: its answer, status 1 (was 2).
    status, out, err = run(capsys, "compile", f4, "--compiler", "tileiras", "--arch", "sm_90")
    assert status == 1 and out == ""
    assert one_error_line(err).startswith(
        "tileir: error: tileiras refused this module where the cache was filled: tileiras could not compile"
    ), err


# -- tileir run --backend triton-interpret -----------------------------------------------------


def test_backends_and_default_arch_match_the_core() -> None:
    # The command line repeats them so that `--help` imports neither the runtime nor the lowering.
    assert cli_launch.BACKENDS == BACKENDS
    assert cli_compile.FALLBACK_ARCH == DEFAULT_ARCH


def test_run_on_the_triton_interpreter(capsys, tmp_path: Path) -> None:
    argv = ["run", VADD, *VADD_RUN_ARGS, "--check", "arg2 = arg0 + arg1"]
    status, out_cpu, err = run(capsys, *argv, "--save", str(tmp_path / "cpu"))
    assert status == 0, err
    status, out, err = run(capsys, *argv, "--backend", "triton-interpret", "--save", str(tmp_path / "triton"))
    assert status == 0 and err == ""
    first = out.splitlines()[0]
    assert first.startswith("kernel @vector_add  grid 4x1x1 (4 tile blocks)  backend triton-interpret  time ")
    assert "check arg2 = arg0 + arg1: ok (4000 elements, max abs error 0" in out
    # The same arguments (same seed), the same results, the same summary lines as the CPU's.
    assert out.splitlines()[1:] == [
        line.replace(str(tmp_path / "cpu"), str(tmp_path / "triton")) for line in out_cpu.splitlines()[1:]
    ]
    for i in range(3):
        assert np.array_equal(np.load(tmp_path / "cpu" / f"arg{i}.npy"), np.load(tmp_path / "triton" / f"arg{i}.npy"))

    status, out, err = run(capsys, *argv[:-1], "arg2 = arg0 - arg1", "--backend", "triton-interpret", "-q")
    assert status == 1 and out == "" and one_error_line(err).startswith("check arg2 = arg0 - arg1: FAILED")


def test_run_errors_on_the_triton_interpreter(capsys, write, monkeypatch: pytest.MonkeyPatch) -> None:
    from compiler.lower import ops  # noqa: F401

    monkeypatch.delitem(registry.EMITTERS, "cuda_tile.addf")
    status, out, err = run(capsys, "run", VADD, *VADD_RUN_ARGS, "--backend", "triton-interpret")
    assert status == 1 and out == ""
    first, second = err.strip().splitlines()
    assert re.fullmatch(re.escape(VADD) + r":\d+:\d+: error: addf: .* \[target sm_90\]", first), first
    assert second == "tileir run: kernel @vector_add could not run on the triton-interpret backend"

    path = write("wrong.tileir", WRONG)
    status, _, err = run(capsys, "run", path, "--grid", "1", "--arg", "1", "--backend", "triton-interpret")
    assert status == 1 and err.rstrip().endswith(f"tileir run: '{path}' has errors; not run")
    status, _, err = run(capsys, "run", VADD, "--grid", "1", "--backend", "triton-interpret")
    assert status == 2 and "takes 9 arguments, got 0" in one_error_line(err)


def test_triton_version_is_the_metadata_version_read_without_a_scan() -> None:
    """`triton_version` reads the dist-info beside the package (a cache hit pays no scan of
    every distribution): the same answer as importlib.metadata, in a process that has not
    imported Triton; and Triton's own `__version__` where neither the dist-info nor the
    metadata says it (a source checkout)."""
    from importlib import metadata

    code = (
        "import sys; from compiler.lower.build import triton_version; v = triton_version(); "
        "print(v, 'triton' in sys.modules, 'importlib.metadata' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.split() == [metadata.version("triton"), "False", "False"]
    hidden = (
        "import pathlib; from importlib import metadata\n"
        "def missing(name): raise metadata.PackageNotFoundError(name)\n"
        "metadata.version = missing\n"
        "pathlib.Path.glob = lambda self, pattern: iter(())\n"
        "from compiler.lower.build import triton_version; v = triton_version(); import triton\n"
        "print(v == triton.__version__)"
    )
    done = subprocess.run([sys.executable, "-c", hidden], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.split() == ["True"]


def test_a_damaged_cache_entry_is_a_miss_and_is_replaced(capsys, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """Each file of an entry is checked against the SHA-256 that meta.json lists: an empty
    PTX was served as the result (status 0, 0 bytes), a meta.json of the wrong shape was an
    internal error, and a damaged entry was never replaced (every later compile missed)."""
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "k.ptx"

    def compile_ptx() -> str:
        status, _, err = run(capsys, "compile", VADD, "--arch", "sm_90", "-o", str(out))
        assert status == 0, err
        assert out.read_text().startswith("//") and ".entry vector_add" in out.read_text()
        return err

    assert "(cached)" not in compile_ptx()
    (entry,) = (tmp_path / "cache" / "kernels").iterdir()
    for damage in (
        lambda: (entry / "kernel.ptx").write_text(""),
        lambda: (entry / "meta.json").write_text("[1, 2]"),
        lambda: (entry / "meta.json").write_text("{}"),
        lambda: (entry / "kernel.cubin").unlink(),
    ):
        damage()
        assert "(cached)" not in compile_ptx()  # compiled again ...
        assert "(cached)" in compile_ptx()  # ... and stored again in its place
    assert sorted(p.name for p in (tmp_path / "cache" / "kernels").iterdir()) == [entry.name]


def test_a_cache_directory_that_cannot_be_used_is_a_usage_error(capsys, monkeypatch, tmp_path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    monkeypatch.setenv("TILEIR_CACHE_DIR", str(afile))
    status, out, err = run(capsys, "compile", VADD, "--arch", "sm_90")
    assert status == 2 and out == ""
    assert one_error_line(err) == (
        f"tileir: error: --emit ptx: the compile cache {afile} (from $TILEIR_CACHE_DIR) cannot be used: "
        "it is not a directory; set TILEIR_CACHE_DIR to a writable directory"
    )
    status, _, err = run(capsys, "run", VADD, "--backend", "triton-interpret", *VADD_RUN_ARGS)
    assert status == 2 and "--backend triton-interpret: the compile cache" in one_error_line(err)


def test_a_generated_source_file_changed_on_disk_is_written_again(tmp_path) -> None:
    """The source is imported from the cache directory: one cut short there was imported as
    it was (its existence was all that was checked)."""
    from compiler.lower import lower
    from compiler.lower.build import write_source

    module = load_module(VADD)
    source = lower(module, module.entries()[0], "sm_90")
    path = write_source(source, tmp_path)
    path.write_text(path.read_text()[:100])
    assert write_source(source, tmp_path) == path and path.read_text() == source.text


def test_a_module_without_kernels_is_said_so_with_the_file(capsys, tmp_path) -> None:
    """It was "the module has 0 kernels (none); name one with -k", where -k cannot help."""
    empty = tmp_path / "empty.tileir"
    empty.write_text("cuda_tile.module @m {\n}\n")
    status, out, err = run(capsys, "compile", str(empty), "--emit", "triton")
    assert status == 2 and out == ""
    assert one_error_line(err) == f"tileir: error: {empty}: the module has no kernel (no `entry` op); not compiled"


def test_compile_a_cutile_kernel_of_a_python_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`tileir compile kernels.py -k K --arg ...`: cuTile exports K for the arguments, then as
    any module: PTX by our lowering, SASS by tileiras, several targets in worker processes."""
    pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    from tests.compiler.test_cli_run import CUTILE_KERNELS

    path = tmp_path / "kernels.py"
    path.write_text(CUTILE_KERNELS)
    spec = ["--arg", "rand:256:f32", "--arg", "2.5", "--arg", "zeros:256:f32", "--arg", "64"]
    ptx = tmp_path / "scale.ptx"
    assert cli.main(["compile", str(path), "-k", "scale", *spec, "--arch", "sm_90", "-o", str(ptx)]) == 0
    assert ".entry scale" in ptx.read_text() and "kernel @scale  arch sm_90  emit ptx" in capsys.readouterr().err
    out = tmp_path / "build"
    assert (
        cli.main(["compile", str(path), "-k", "scale", *spec, "--arch", "sm_80,sm_100", "-j", "2", "-o", str(out)]) == 0
    )
    assert sorted(p.name for p in out.iterdir()) == ["kernels.sm_100.ptx", "kernels.sm_80.ptx"]
    capsys.readouterr()
    assert cli.main(["compile", str(path), "-k", "scale", "--arch", "sm_90"]) == 2
    assert "cuTile exports a kernel for its arguments' types: give them with --arg SPEC" in capsys.readouterr().err
    assert cli.main(["compile", str(REPO / "examples" / "vector_add.tileir"), "--arg", "1"]) == 2
    assert "--arg: the arguments of a cuTile kernel of a .py file" in capsys.readouterr().err
