"""The CLI's reliability (issue 18): what `-o` does to devices, FIFOs, hard links, owners and
the temporary files of a killed run; clear errors (exit 2), never exit 3, for odd input and
full disks; memory that stays near the size of what is made; --split-input-file in linear
time; checked --rtol/--atol/--save; opt and layout reading bytecode."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from compiler import cli
from compiler.cli import bytecode as cli_bytecode
from compiler.ir.files import write_atomic
from compiler.runtime.argspec import SpecError, parse_spec
from tests.corpus import REPO, VADD_RUN_ARGS

from .test_cli_run import run

VADD = REPO / "examples" / "vector_add.tileir"
VADD_ARGS = list(VADD_RUN_ARGS)
BYTECODE_MAGIC = b"\x7fTileIR\x00"

# Takes one f32 array and one i8 array, and does nothing with them.
KEEPS = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>, %q: tile<ptr<i8>>) {
    return
  }
}
"""


def tileir(*argv: str, limits: dict[int, int] | None = None, unbuffered: bool | None = None, **kwargs):
    """`python -m compiler ARGV` as its own process (exit statuses and resource limits are real);
    `unbuffered`: with PYTHONUNBUFFERED set or unset (None: as in this environment)."""

    def set_limits() -> None:
        for which, value in (limits or {}).items():
            resource.setrlimit(which, (value, value))

    kwargs.setdefault("stdout", subprocess.PIPE)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if unbuffered is not None:
        env.pop("PYTHONUNBUFFERED", None)
        if unbuffered:
            env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "compiler", *argv],
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=REPO,
        env=env,
        preexec_fn=set_limits if limits else None,
        timeout=120,
        **kwargs,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "Exception ignored" not in err, err
    return proc.returncode, err


@pytest.fixture
def no_rename_over_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make renaming over anything but a regular file (or nothing) fail the test instead of
    happening: a regression must not replace /dev/null or /dev/full of the machine running it."""
    for name in ("replace", "rename"):
        real = getattr(os, name)

        def guarded(src, dst, *args, _real=real, **kwargs):
            try:
                mode = os.stat(dst).st_mode
            except FileNotFoundError:
                mode = stat.S_IFREG
            if not stat.S_ISREG(mode):
                raise AssertionError(f"os.rename/replace over a non-regular file: {dst}")
            return _real(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, name, guarded)


# -- item 2: -o and what it replaces --------------------------------------------------------------


def _read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    def reader() -> None:
        with open(path, "rb") as f:
            into.append(f.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("through_symlink", [False, True], ids=["fifo", "symlink-to-fifo"])
def test_output_to_a_fifo_is_written_into_it(
    capsys, tmp_path: Path, no_rename_over_devices, through_symlink: bool
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    target = fifo
    if through_symlink:
        target = tmp_path / "link"
        target.symlink_to(fifo)
    got: list[bytes] = []
    reader = _read_fifo(fifo, got)
    status, _, err = run(capsys, "asm", str(VADD), "-o", str(target))
    reader.join(timeout=30)
    assert status == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert through_symlink == target.is_symlink()
    assert got and got[0].startswith(BYTECODE_MAGIC)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({"pipe", target.name})  # no temporary left


def test_output_to_dev_null_keeps_the_device(capsys, no_rename_over_devices) -> None:
    if not os.path.exists(os.devnull) or not stat.S_ISCHR(os.stat(os.devnull).st_mode):
        pytest.skip(f"{os.devnull} is not a character device here")
    status, _, err = run(capsys, "asm", str(VADD), "-o", os.devnull)
    assert status == 0, err
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_output_to_dev_full_is_a_clear_error(capsys, no_rename_over_devices) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    status, _, err = run(capsys, "asm", str(VADD), "-o", "/dev/full")
    assert status == 2
    assert err.strip() == "tileir: error: cannot write '/dev/full': No space left on device"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_hard_linked_output_is_rewritten_in_place(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old content, longer than the new one\n")
    other = tmp_path / "other-name.txt"
    os.link(target, other)
    inode = target.stat().st_ino
    write_atomic(str(target), "new\n")
    assert other.read_text() == target.read_text() == "new\n"
    assert target.stat().st_ino == inode and target.stat().st_nlink == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-name.txt", "out.txt"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    for linked in (False, True):
        target = tmp_path / f"out{int(linked)}.txt"
        target.write_text("old\n")
        if linked:
            os.link(target, tmp_path / f"link{int(linked)}.txt")

        def fails(f) -> None:
            f.write(b"half of it")
            raise OSError(28, "No space left on device")

        with pytest.raises(OSError):
            write_atomic(str(target), fails)
        assert target.read_text() == "old\n"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file to another user")
def test_the_owner_and_mode_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "owned.txt"
    target.write_text("old\n")
    os.chown(target, 12345, 23456)
    target.chmod(0o640)
    write_atomic(str(target), "new\n")
    info = target.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (12345, 23456, 0o640)
    assert target.read_text() == "new\n"


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid  # reaped: no process has it (until reused, which a test can live with)


def test_temporaries_of_a_killed_run_are_named_and_cleaned(tmp_path: Path) -> None:
    target = tmp_path / "out.tileirbc"
    seen: list[str] = []
    write_atomic(str(target), lambda f: seen.extend(os.listdir(tmp_path)))
    # While it writes, the temporary file says whose it is: `.NAME.tileir<pid>.XXXXXXXX.tmp`.
    assert len(seen) == 1 and seen[0].startswith(f".out.tileirbc.tileir{os.getpid()}.") and seen[0].endswith(".tmp")

    old = time.time() - 3600
    dead = _dead_pid()
    stale = [f".out.tileirbc.tileir{dead}.abcd1234.tmp", ".out.tileirbc.k3j4h5g6.tmp"]  # the second: older naming
    kept = [
        f".out.tileirbc.tileir{dead}.fresh123.tmp",  # written just now: a live run on another machine?
        f".out.tileirbc.tileir{os.getpid()}.mine1234.tmp",  # of a process still running
        ".out.tileirbc.notours.tmp",  # not our pattern
        ".other.tileirbc.abcd1234.tmp",  # another target's
    ]
    for name in stale + kept:
        (tmp_path / name).write_text("leftover")
        if "fresh" not in name:
            os.utime(tmp_path / name, (old, old))
    write_atomic(str(target), b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, "out.tileirbc"])


def test_a_full_disk_is_an_error_and_leaves_the_old_file(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes writes past 1000 bytes fail as on a full disk (a short write, then
    EFBIG): exit 2, the old output kept, no temporary left."""
    src = tmp_path / "big.tileir"
    src.write_text(VADD.read_text() + "".join(f"// comment {i} {'x' * 60}\n" for i in range(100)))
    out = tmp_path / "out.tileir"
    out.write_text("old\n")
    status, err = tileir("opt", str(src), "-o", str(out), limits={resource.RLIMIT_FSIZE: 1000})
    assert status == 2
    assert err.strip() == f"tileir: error: cannot write '{out}': File too large"
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.tileir", "out.tileir"]


# -- item 4: exit 1 or 2, never 3 ---------------------------------------------------------------


def test_standard_output_to_a_full_device_is_exit_2() -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    for argv in (["fmt", str(VADD)], ["check", str(VADD)], ["asm", str(VADD), "-o", "-"]):
        with open("/dev/full", "wb") as full:
            status, err = tileir(*argv, stdout=full)
        assert (status, err.strip()) == (2, "tileir: error: cannot write to standard output: No space left on device")


@pytest.mark.parametrize("unbuffered", [True, False], ids=["PYTHONUNBUFFERED", "buffered"])
def test_a_short_write_of_standard_output_is_exit_2(tmp_path: Path, unbuffered: bool) -> None:
    """Standard output into a file that can take only 1000 bytes (RLIMIT_FSIZE: as a full disk).
    Unbuffered, Python's text layer ignores the short write: it exited 0 with 1000 bytes."""
    out = tmp_path / "out.txt"
    with open(out, "wb") as f:
        status, err = tileir("fmt", str(VADD), stdout=f, limits={resource.RLIMIT_FSIZE: 1000}, unbuffered=unbuffered)
    assert len(VADD.read_bytes()) > 1000
    assert status == 2 and err.strip() == "tileir: error: cannot write to standard output: File too large"


def test_a_device_as_input_is_an_error_not_a_memory_error() -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero on this system")
    status, err = tileir("check", "/dev/zero")
    assert status == 2
    assert (
        err.strip()
        == "tileir: error: cannot read '/dev/zero': more than the limit of 268435456 bytes (is it the right file?)"
    )
    # Under a memory limit too small for the cap: the same kind of error, not a MemoryError (exit 3).
    status, err = tileir("check", "/dev/zero", limits={resource.RLIMIT_AS: 600 << 20})
    assert status == 2 and err.startswith("tileir: error: cannot read '/dev/zero': "), err
    status, err = tileir("run", "/dev/zero", "--grid", "1")
    assert status == 2 and err.startswith("tileir: error: cannot read '/dev/zero': "), err


def _bad_npy_files(tmp_path: Path) -> dict[str, Path]:
    strings = tmp_path / "strings.npy"
    np.save(strings, np.array(["ab", "c"]))
    huge = tmp_path / "huge.npy"
    with open(huge, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (99999999999999,)})
        f.write(b"\0" * 16)
    return {"strings": strings, "huge": huge}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--arg", "zeros:0x99999999999999999999:f32"],
            "tileir: error: --arg 'zeros:0x99999999999999999999:f32': shape '0x99999999999999999999' is too large",
        ),
        (["--arg", "zeros:99999999999:f32"], "tileir: error: --arg 'zeros:99999999999:f32': 399999999996 bytes is too"),
        (["--seed", "-1"], "tileir: error: --seed -1: must be 0 or more"),
        (
            ["--arg", "{strings}:f32"],
            "tileir: error: '{strings}' holds <U2 elements, not real numbers a kernel can take",
        ),
        (["--arg", "{strings}"], "tileir: error: '{strings}' holds <U2 elements, not real numbers"),
        (
            ["--arg", "{huge}"],
            "tileir: error: cannot read '{huge}' as a .npy array: its header declares 99999999999999 float32 "
            "elements (399999999999996 bytes) but only 16 bytes follow it",
        ),
    ],
    ids=["zero-times-huge", "huge", "seed", "string-npy-as-f32", "string-npy", "npy-header-shape"],
)
def test_odd_run_arguments_are_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    files = _bad_npy_files(tmp_path)
    args = [a.format(**files) for a in args]
    message = message.format(**files)
    argv = ["run", str(VADD), "--backend", "cpu", "--grid", "4", "--cutile-args", *args]
    if "--arg" not in args:
        argv += VADD_ARGS[3:]
    else:
        argv += ["--arg", "rand:4000:f32", "--arg", "zeros:4000:f32"]
    status, err = tileir(*argv)
    assert status == 2, err
    assert err.startswith(message) and len(err.strip().splitlines()) == 1, err


def test_a_shape_of_5000_digits_is_a_usage_error() -> None:
    shape = r"9{35}\.\.\.\(5009 characters\)': shape '9{40}\.\.\.\(5000 characters\)' is too large$"
    with pytest.raises(SpecError, match=r"^--arg 'rand:" + shape):
        parse_spec("rand:" + "9" * 5000 + ":f32")


# -- item 5: memory and time ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["i8", "i1", "f16", "bf16", "f32", "f8E4M3FN", "f8E8M0FNU", "f4E2M1FN"])
@pytest.mark.parametrize("kind", ["rand", "arange"])
def test_generated_arrays_are_made_in_their_dtype(kind: str, dtype: str) -> None:
    """No int64 or float64 array of the full size first: the peak is the array plus a chunk."""
    spec = parse_spec(f"{kind}:4000000:{dtype}")
    tracemalloc.start()
    try:
        array = spec.make(np.random.default_rng(1))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert array.shape == (4_000_000,)
    assert peak <= array.nbytes + (8 << 20), f"{spec.text}: peak {peak} bytes for {array.nbytes}"
    if kind == "rand" and dtype.startswith("f") and dtype != "f8E8M0FNU":
        values = array.astype(np.float64)
        assert -1 <= values.min() < -0.9 and 0.9 < values.max() <= 1 and abs(values.mean()) < 0.01
    if kind == "rand" and dtype == "i8":
        assert array.min() == -100 and array.max() == 99


def test_arguments_are_checked_against_the_kernel_before_they_are_made(capsys, tmp_path: Path) -> None:
    kernel = tmp_path / "keeps.tileir"
    kernel.write_text(KEEPS)
    tracemalloc.start()
    try:
        # 300 MB of i8 for the f32 pointer: refused from the signature, nothing allocated.
        status, _, err = run(
            capsys, "run", str(kernel), "--backend", "cpu", "--grid", "1",
            "--arg", "rand:300000000:i8", "--arg", "zeros:4:i8",
        )  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 2
    assert err.startswith("tileir: error: argument 0 (%p: tile<ptr<f32>>): the kernel reads f32 elements")
    assert peak < 50 << 20, f"peak {peak} bytes"
    # Too many arguments: refused before the 300 MB is made, with the launch's own message.
    status, _, err = run(
        capsys, "run", str(kernel), "--grid", "1", "--arg", "zeros:4:f32", "--arg", "rand:300000000:i8", "--arg", "1"
    )
    assert status == 2 and err.startswith("tileir: error: kernel @k takes 2 arguments, got 3")
    # And what fits runs.
    status, out, err = run(capsys, "run", str(kernel), "--grid", "1", "--arg", "zeros:4:f32", "--arg", "rand:8:i8")
    assert status == 0, err
    assert "  arg1  i8[8]  min " in out


_SPLIT_CHUNK = "// chunk {i}\ncuda_tile.module @m{i} {{\n}}\n// expected-error @below {{{{is unknown}}}}\nfoo{i}\n"

_TIMER = """
import sys, time
from compiler import cli
times = []
for path in sys.argv[1:]:
    start = time.perf_counter()
    status = cli.main(["opt", "--split-input-file", "-verify-diagnostics", path])
    times.append(time.perf_counter() - start)
    assert status == 0, (path, status)
print(" ".join(f"{t:.3f}" for t in times))
"""


def test_split_input_file_is_linear_in_the_chunks(tmp_path: Path) -> None:
    """32,000 chunks in seconds, and 4x the chunks about 4x the time (padding every chunk with
    the lines before it made this quadratic: 4,000 real chunks took 100 s)."""
    paths = []
    for n in (4000, 16000, 32000):
        path = tmp_path / f"chunks{n}.tileir"
        path.write_text("// -----\n".join(_SPLIT_CHUNK.format(i=i) for i in range(n)))
        paths.append(str(path))
    proc = subprocess.run(
        [sys.executable, "-c", _TIMER, *paths],
        capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    t4, t16, t32 = (float(t) for t in proc.stdout.split())
    assert t16 < 8 * t4 + 0.5, f"4,000 chunks {t4:.2f} s, 16,000 chunks {t16:.2f} s: not linear"
    assert t32 < 60, f"32,000 chunks took {t32:.1f} s"


def test_split_chunks_report_the_lines_of_the_file(capsys, tmp_path: Path) -> None:
    chunks = [_SPLIT_CHUNK.format(i=i) for i in range(3)]
    chunks[1] = chunks[1].replace("is unknown", "is not this message")
    chunks[2] = chunks[2].replace("foo2", "%x = addi %a, %nope : tile<i32>")
    path = tmp_path / "split.tileir"
    text = "// -----\n".join(chunks)
    path.write_text(text)
    lines = text.splitlines()

    def at(needle: str, occurrence: int = 0) -> str:
        """`path:line:col` of `needle` in the file, found independently of the code under test."""
        found = [(i, line.index(needle)) for i, line in enumerate(lines) if needle in line][occurrence]
        return f"{path}:{found[0] + 1}:{found[1] + 1}"

    status, _, err = run(capsys, "opt", "--split-input-file", "-verify-diagnostics", str(path))
    assert status == 1
    assert [line for line in err.splitlines() if line.startswith(str(path))] == [
        f"{at('foo1')}: error: unexpected error: custom op 'foo1' is unknown (tried 'cuda_tile.foo1' as well)",
        f'{at("expected-error", 1)}: error: expected error "is not this message" was not produced',
        f"{at('%a')}: error: unexpected error: use of undeclared SSA value name '%a'",
        f'{at("expected-error", 2)}: error: expected error "is unknown" was not produced',
    ]
    assert "\n  foo1\n  ^~~~\n" in err  # the snippet is the file's line
    # Without -verify-diagnostics: the same places; translate numbers them the same way.
    status, _, err = run(capsys, "opt", "--split-input-file", str(path))
    places = [line.split(": error")[0] for line in err.splitlines() if line.startswith(str(path))]
    assert status == 1 and places == [at("foo0"), at("foo1"), at("%a")]
    status, _, err = run(capsys, "translate", "-test-cudatile-roundtrip", "--split-input-file", str(path))
    assert (
        status == 1 and [line.split(": error")[0] for line in err.splitlines() if line.startswith(str(path))] == places
    )


# -- item 8: small ones ---------------------------------------------------------------------------


@pytest.mark.parametrize(("option", "value"), [("--rtol", "nan"), ("--atol", "-1"), ("--rtol", "inf"), ("--atol", "x")])
def test_tolerances_must_be_finite_and_not_negative(capsys, option: str, value: str) -> None:
    status, out, err = run(capsys, "run", str(VADD), *VADD_ARGS, option, value, "--check", "arg2 = arg0 + arg1")
    assert status == 2 and out == ""
    assert err.startswith(f"tileir run: error: argument {option}: '{value}'"), err


def test_save_makes_its_directory_but_not_missing_parents(capsys, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    status, out, err = run(capsys, "run", str(VADD), *VADD_ARGS, "--save", str(missing))
    assert status == 2 and out == ""  # refused before the run
    assert (
        err.strip()
        == f"tileir: error: --save {missing}: the directory '{tmp_path / 'no'}' does not exist (create it first)"
    )
    assert not (tmp_path / "no").exists()
    a_file = tmp_path / "file"
    a_file.write_text("")
    status, _, err = run(capsys, "run", str(VADD), *VADD_ARGS, "--save", str(a_file))
    assert status == 2 and err.strip() == f"tileir: error: --save {a_file}: not a directory"
    status, out, err = run(capsys, "run", str(VADD), *VADD_ARGS, "--save", str(tmp_path / "new"), "-q")
    assert status == 0, err
    assert sorted(os.listdir(tmp_path / "new")) == ["arg0.npy", "arg1.npy", "arg2.npy"]
    a, b, c = (np.load(tmp_path / "new" / f"arg{i}.npy") for i in range(3))
    np.testing.assert_array_equal(c, a + b)


def test_opt_and_layout_read_bytecode(capsys, tmp_path: Path) -> None:
    bc = tmp_path / "vadd.tileirbc"
    status, _, err = run(capsys, "asm", str(VADD), "-o", str(bc))
    assert status == 0, err
    # opt prints the module the bytecode holds: the same as opt of the bytecode's text form.
    status, text_form, err = run(capsys, "translate", "-cudatilebc-to-mlir", str(bc))
    assert status == 0, err
    as_text = tmp_path / "vadd_from_bc.tileir"
    as_text.write_text(text_form)
    status, from_text, err = run(capsys, "opt", str(as_text))
    assert status == 0, err
    status, from_bytecode, err = run(capsys, "opt", str(bc))
    assert status == 0 and err == ""
    assert from_bytecode == from_text and "entry @vector_add(" in from_bytecode
    status, _, err = run(capsys, "opt", "-verify-diagnostics", str(bc))
    assert status == 2 and "is Tile IR bytecode, which has no expected-* comments" in err
    # layout: the same views as from the text, without source lines.
    status, from_bytecode, err = run(capsys, "layout", str(bc))
    assert status == 0, err
    status, from_text, err = run(capsys, "layout", str(VADD))
    assert status == 0, err

    def views(out: str) -> list[str]:
        return [line.split(" (")[0] for line in out.splitlines() if line.startswith("%")]

    assert len(views(from_bytecode)) == len(views(from_text)) > 0
    assert from_bytecode.count("dim 0:") == from_text.count("dim 0:")


def test_a_file_name_that_is_not_utf8_is_printed_as_its_bytes(tmp_path: Path) -> None:
    """Python decodes a name's undecodable bytes to surrogates; printing a diagnostic that
    names the file, or lowering it (the generated source names the file in its comments),
    must not fail on them (both were internal errors)."""
    bad = os.fsdecode(os.fsencode(str(tmp_path)) + b"/bad\xff.tileir")
    Path(bad).write_text(
        "cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    %b = addf %a, %a : tile<i32>\n    return\n  }\n}\n"
    )
    done = subprocess.run([sys.executable, "-m", "compiler", "check", bad], capture_output=True, cwd=REPO)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(os.fsencode(bad) + b":3:"), done.stderr
    vadd = os.fsdecode(os.fsencode(str(tmp_path)) + b"/vadd\xfe.tileir")
    Path(vadd).write_text((REPO / "examples" / "vector_add.tileir").read_text())
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", vadd, "--emit", "triton", "-q"], capture_output=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert b"# vadd\\udcfe.tileir:" in done.stdout


def test_small_messages_name_things_as_the_user_wrote_them(capsys, tmp_path: Path, monkeypatch) -> None:
    """A NUL byte is quoted as its escape (it showed as a space); stdin is `<stdin>` in every
    line about it and `-` in a command to run; asm refuses to write bytecode to a terminal."""
    nul = tmp_path / "nul.tileir"
    nul.write_bytes(b"cuda_tile.module @m {\n}\n\0")
    status, _, err = run(capsys, "check", str(nul))
    assert status == 1 and f"{nul}:3:1: error: expected operation name, found '\\x00'" in err
    import io

    bad = "cuda_tile.module @m {\n  entry @k() {\n    bogus\n  }\n}\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bad.encode())))
    status, _, err = run(capsys, "compile", "-", "--emit", "triton")
    assert status == 1 and err.splitlines()[0].startswith("<stdin>:3:5: error:")
    assert err.splitlines()[-1] == "tileir compile: '<stdin>' has errors; not compiled"
    bc = tmp_path / "v.tileirbc"
    assert cli.main(["asm", str(REPO / "examples" / "vector_add.tileir"), "-o", str(bc)]) == 0
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bc.read_bytes())))
    status, _, err = run(capsys, "asm", "-", "-o", str(tmp_path / "x"))
    assert status == 2 and "(`tileir disasm -` prints it)" in err
    monkeypatch.setattr(cli_bytecode, "is_terminal", lambda stream: True)
    status, _, err = run(capsys, "asm", str(REPO / "examples" / "vector_add.tileir"), "-o", "-")
    assert status == 2 and "asm writes bytecode, a binary file: name it with -o OUT" in err
