"""`tileir run`: SPEC parsing, the summary, --save (contents and naming), --check, and the
one-line errors with their exit statuses (2 usage, 1 the kernel or a check failed)."""

from __future__ import annotations

import os
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from compiler import cli
from compiler.runtime.argspec import (
    SpecError,
    default_tolerance,
    parse_check,
    parse_grid,
    parse_spec,
    run_check,
    summarize,
)
from tests.corpus import REPO, VADD_RUN_ARGS

VADD = REPO / "examples" / "vector_add.tileir"

# Needs no memory ops: prints its scalars, checks one of them with assert.
SCALARS = """cuda_tile.module @m {
  entry @k(%n: tile<i32>, %x: tile<f32>) {
    %zero = constant <i32: 0> : tile<i32>
    %ok = cmpi greater_than %n, %zero, signed : tile<i32> -> tile<i1>
    assert %ok, "n must be positive" : tile<i1>
    %t = print_tko "n=%d x=%f\\n", %n, %x : tile<i32>, tile<f32> -> token
    return
  }
}
"""

# Takes an array it does not touch (the run leaves it as it was).
KEEPS = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>, %q: tile<ptr<bf16>>, %n: tile<i32>) {
    return
  }
}
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


@pytest.fixture
def scalars(tmp_path: Path) -> str:
    f = tmp_path / "scalars.tileir"
    f.write_text(SCALARS)
    return str(f)


@pytest.fixture
def keeps(tmp_path: Path) -> str:
    f = tmp_path / "keeps.tileir"
    f.write_text(KEEPS)
    return str(f)


# -- SPEC parsing ------------------------------------------------------------------------------


def test_generator_specs() -> None:
    rng = np.random.default_rng(0)
    z = parse_spec("zeros:64x32:f16").make(rng)
    assert z.shape == (64, 32) and z.dtype == np.float16 and not z.any()
    o = parse_spec("ones:3:bf16").make(rng)
    assert o.dtype == ml_dtypes.bfloat16 and o.tolist() == [1, 1, 1]
    a = parse_spec("arange:2x3:i32").make(rng)
    assert a.dtype == np.int32 and a.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert parse_spec("arange:300:i8").make(rng)[-1] == 300 - 256 - 1  # wraps to the width
    assert parse_spec("arange:4:i1").make(rng).tolist() == [False, True, False, True]
    r = parse_spec("rand:1000:f32").make(rng)
    assert r.dtype == np.float32 and -1 <= r.min() < r.max() < 1
    i = parse_spec("rand:1000:i8").make(rng)
    assert i.dtype == np.int8 and -100 <= i.min() and i.max() < 100
    e8 = parse_spec("rand:100:f8E8M0FNU").make(rng).astype(np.float64)
    assert set(np.log2(e8).tolist()) <= set(range(-4, 5))
    f8 = parse_spec("rand:10:f8E4M3FN").make(rng)
    assert f8.dtype == ml_dtypes.float8_e4m3fn


def test_rand_is_seeded() -> None:
    spec = parse_spec("rand:16:f32")
    a = spec.make(np.random.default_rng(7))
    b = spec.make(np.random.default_rng(7))
    c = spec.make(np.random.default_rng(8))
    assert a.tolist() == b.tolist() != c.tolist()


def test_scalar_specs() -> None:
    values = {s: parse_spec(s).value for s in ("42", "-7", "0x10", "1.5", "-2e-3", "inf", "true", "False")}
    assert values == {
        "42": 42,
        "-7": -7,
        "0x10": 16,
        "1.5": 1.5,
        "-2e-3": -0.002,
        "inf": float("inf"),
        "true": True,
        "False": False,
    }
    assert not parse_spec("3").is_array


def test_npy_specs(tmp_path: Path) -> None:
    f = tmp_path / "x.npy"
    np.save(f, np.arange(4, dtype=np.float32))
    assert parse_spec(str(f)).make(np.random.default_rng()).tolist() == [0, 1, 2, 3]
    assert parse_spec(f"{f}:f16").make(np.random.default_rng()).dtype == np.float16
    g = tmp_path / "bf.npy"  # NumPy saves bf16 as raw 2-byte elements; :bf16 reads them back
    np.save(g, np.array([1.5, -2], dtype=ml_dtypes.bfloat16))
    back = parse_spec(f"{g}:bf16").make(np.random.default_rng())
    assert back.dtype == ml_dtypes.bfloat16 and back.astype(np.float32).tolist() == [1.5, -2]
    with pytest.raises(SpecError) as info:
        parse_spec(str(tmp_path / "nope.npy")).make(np.random.default_rng())
    assert str(info.value) == f"cannot read '{tmp_path / 'nope.npy'}': No such file or directory"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("zeros:10:f33", "unknown dtype 'f33' (one of: f16 f32 tf32"),
        ("zeros:10", "--arg 'zeros:10': expected zeros:SHAPE:DTYPE, e.g. zeros:1024:f32"),
        ("rand:10by10:f32", "--arg 'rand:10by10:f32': bad shape '10by10' (write it like 1024 or 64x64)"),
        ("banana", "--arg 'banana': expected a .npy file, zeros|ones|rand|arange:SHAPE:DTYPE, or a number"),
        ("", "--arg '': empty argument"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(spec)
    assert str(info.value).startswith(message.replace("tf32", "f64") if "f33" in spec else message)


def test_grid_parsing() -> None:
    assert parse_grid("8") == (8,)
    assert parse_grid("8,4") == (8, 4)
    assert parse_grid("8x4x2") == (8, 4, 2)
    for bad in ("0", "1,2,3,4", "a", "-1", ""):
        with pytest.raises(SpecError):
            parse_grid(bad)


def test_summary_line() -> None:
    a = np.array([[1.0, -2.0], [np.nan, 4.0]], np.float32)
    text = summarize(a)
    assert text.startswith("f32[2x2]  min -2  max 4  mean 1  sum 3  nan 1  crc32 ")
    assert summarize(np.array([3, 1], np.int16)).startswith("i16[2]  min 1  max 3  mean 2  sum 4  crc32 ")


def test_checks() -> None:
    x = np.array([1.0, 2.0, 3.0], np.float32)
    y = np.array([10.0, 20.0, 30.0], np.float32)
    ok = run_check(parse_check("arg1 = arg0 * 10"), [x, y.copy()], [x, y], None, None)
    assert ok.ok and ok.message.startswith("check arg1 = arg0 * 10: ok (3 elements, max abs error 0; rtol 1e-05")
    y[1] = 20.5
    bad = run_check(parse_check("arg1 == arg0 * 10"), [x, y.copy()], [x, y], None, None)
    assert not bad.ok
    assert bad.message.startswith(
        "check arg1 = arg0 * 10: FAILED: 1 of 3 elements differ (rtol 1e-05, atol 1e-06); "
        "first at arg1[1]: got 20.5, expected 20"
    )
    assert run_check(parse_check("arg1 = arg0 * 10"), [x, y], [x, y], 0.1, None).ok
    assert default_tolerance(np.dtype(np.int32)) == (0.0, 0.0)
    with pytest.raises(SpecError, match="there is no arg5"):
        run_check(parse_check("arg5 = 1"), [x], [x], None, None)
    with pytest.raises(SpecError, match="cannot evaluate the expression: NameError"):
        run_check(parse_check("arg0 = no_such_name"), [x], [x], None, None)
    with pytest.raises(SpecError, match="expected 'argN = EXPRESSION'"):
        parse_check("out = 1")


# -- the command ----------------------------------------------------------------------------------


def test_runs_and_summarizes(capsys, scalars: str) -> None:
    status, out, err = run(capsys, "run", scalars, "--grid", "2", "--arg", "3", "--arg", "0.5")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[:2] == ["[block (0, 0, 0)] n=3 x=0.500000", "[block (1, 0, 0)] n=3 x=0.500000"]
    assert lines[2].startswith("kernel @k  grid 2x1x1 (2 tile blocks)  backend cpu  time ")
    assert lines[3:] == ["  arg0  scalar 3", "  arg1  scalar 0.5"]


def test_save_writes_every_array_by_its_arg_index(capsys, keeps: str, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"  # created: its parent exists (a missing parent is an error)
    status, out, err = run(
        capsys,
        "run",
        keeps,
        "--grid",
        "1",
        "--arg",
        "arange:2x3:f32",
        "--arg",
        "ones:4:bf16",
        "--arg",
        "7",
        "--save",
        str(out_dir),
    )
    assert status == 0, err
    assert sorted(os.listdir(out_dir)) == ["arg0.npy", "arg1.npy"]
    assert np.load(out_dir / "arg0.npy").tolist() == [[0, 1, 2], [3, 4, 5]]
    assert np.load(out_dir / "arg1.npy").view(ml_dtypes.bfloat16).astype(np.float32).tolist() == [1, 1, 1, 1]
    assert "  arg0  f32[2x3]  min 0  max 5  mean 2.5  sum 15  crc32 " in out
    assert "  arg1  bf16[4]  min 1  max 1  mean 1  sum 4  crc32 " in out
    assert f"saved 2 arrays to {out_dir}" in out
    # a saved array can be given back (bf16 with :bf16)
    status, out2, err = run(
        capsys,
        "run",
        keeps,
        "--grid",
        "1",
        "--arg",
        str(out_dir / "arg0.npy"),
        "--arg",
        f"{out_dir / 'arg1.npy'}:bf16",
        "--arg",
        "7",
        "-q",
    )
    assert (status, out2) == (0, ""), err


def test_check_passes_and_fails(capsys, keeps: str) -> None:
    args = ["run", keeps, "--grid", "1", "--arg", "arange:4:f32", "--arg", "ones:4:bf16", "--arg", "4"]
    status, out, err = run(capsys, *args, "--check", "arg0 = np.arange(4)")
    assert status == 0 and "check arg0 = np.arange(4): ok (4 elements" in out
    status, out, err = run(capsys, *args, "--check", "arg1 = arg1 * 2")
    assert status == 1
    assert (
        "check arg1 = arg1 * 2: FAILED: 4 of 4 elements differ (rtol 0.016, atol 0.01); first at arg1[0]: "
        "got 1, expected 2" in err
    )
    status, out, err = run(capsys, *args, "--check", "arg1 = arg1 * 2", "--rtol", "1")
    assert status == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--arg", "zeros:4:f99"], "tileir: error: unknown dtype 'f99' (one of: "),
        (["--arg", "nope.npy"], "tileir: error: cannot read 'nope.npy': No such file or directory"),
        (["--grid", "0"], "tileir: error: --grid '0': expected 1 to 3 positive integers, X[,Y[,Z]]"),
        (
            ["--grid", "99999999999999999999,2", "--arg", "zeros:4:f32", "--arg", "ones:4:bf16", "--arg", "1"],
            "tileir: error: grid 99999999999999999999,2 exceeds the limit of 16777215 (2^24-1) tile blocks per axis",
        ),
        (["--kernel", "zzz"], "tileir: error: no kernel named 'zzz'; the module has: k"),
        (
            ["--arg", "rand:4:f32"],
            "tileir: error: kernel @k takes 3 arguments, got 1: "
            "@k(%p: tile<ptr<f32>>, %q: tile<ptr<bf16>>, %n: tile<i32>) "
            "(with --cutile-args, each array argument is passed as pointer, shape, strides)",
        ),
        (
            ["--arg", "rand:4:f16", "--arg", "ones:4:bf16", "--arg", "1"],
            "tileir: error: argument 0 (%p: tile<ptr<f32>>): the kernel reads f32 elements, which live in "
            "np.float32 arrays; got an array of float16 (give that --arg as ...:f32, e.g. rand:4000:f32)",
        ),
        (
            ["--arg", "zeros:4:f32", "--arg", "ones:4:bf16", "--arg", "1e40"],
            "tileir: error: argument 2 (%n: tile<i32>): expected an integer, got float 1e+40",
        ),
        (["--check", "x = 1", "--arg", "1"], "tileir: error: --check 'x = 1': expected 'argN = EXPRESSION'"),
        (["--atol", "0.1", "--arg", "1"], "tileir: error: --atol is a tolerance of --check; give a --check"),
    ],
)
def test_usage_errors_are_one_line_with_status_2(capsys, keeps: str, argv: list[str], message: str) -> None:
    if "--grid" not in argv:
        argv = ["--grid", "1", *argv]
    status, out, err = run(capsys, "run", keeps, *argv)
    assert status == 2
    assert err.startswith(message), err
    assert len(err.strip().splitlines()) == 1


def test_missing_file_and_missing_grid(capsys, tmp_path: Path) -> None:
    status, _, err = run(capsys, "run", str(tmp_path / "no.tileir"), "--grid", "1")
    assert status == 2
    assert err.strip() == f"tileir: error: cannot read '{tmp_path / 'no.tileir'}': No such file or directory"
    status, _, err = run(capsys, "run", str(tmp_path / "no.tileir"))
    assert status == 2 and "the following arguments are required: --grid" in err


def test_a_module_with_errors_prints_its_diagnostics(capsys, tmp_path: Path) -> None:
    f = tmp_path / "bad.tileir"
    f.write_text(KEEPS.replace("return", "%x = addi %n, %nope : tile<i32>\n    return"))
    status, out, err = run(capsys, "run", str(f), "--grid", "1")
    assert status == 1 and out == ""
    assert f"{f}:3:" in err and "error:" in err
    assert err.rstrip().endswith(f"tileir run: '{f}' has errors; not run")


def test_an_error_in_the_kernel_is_reported_with_status_1(capsys, scalars: str) -> None:
    status, out, err = run(capsys, "run", scalars, "--grid", "2", "--arg", "0", "--arg", "1")
    assert status == 1
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"{scalars}:5:5: error: assert: ") and "n must be positive" in lines[0]
    assert "tile block (0, 0, 0)" in lines[0]
    # Then each failing block (both fail: n = 0), indented, and the command's verdict.
    assert [line.split(": tile block ")[1][:9] for line in lines[1:3]] == ["(0, 0, 0)", "(1, 0, 0)"]
    assert lines[3] == "tileir run: kernel @k failed"


def test_stdin(capsys, monkeypatch) -> None:
    import io
    import sys

    class Stdin(io.StringIO):
        buffer = io.BytesIO(SCALARS.encode())

    monkeypatch.setattr(sys, "stdin", Stdin())
    status, out, err = run(capsys, "run", "-", "--grid", "1", "--arg", "1", "--arg", "2", "-q")
    assert status == 0 and out == "[block (0, 0, 0)] n=1 x=2.000000\n"


def test_main_job_command_runs_vector_add(capsys, tmp_path: Path) -> None:
    """The README's main-job command (after `pip install -e '.[gpu]'`; auto runs it on the CPU here)."""
    status, out, err = run(
        capsys,
        "run",
        str(VADD),
        *VADD_RUN_ARGS,
        "--check",
        "arg2 = arg0 + arg1",
        "--save",
        str(tmp_path),
    )
    assert status == 0, err
    assert "kernel @vector_add  grid 4x1x1 (4 tile blocks)" in out
    assert "check arg2 = arg0 + arg1: ok (4000 elements, max abs error 0;" in out
    a, b, c = (np.load(tmp_path / f"arg{i}.npy") for i in range(3))
    np.testing.assert_array_equal(c, a + b)


def test_a_failed_assert_lists_every_failing_tile_block(capsys, tmp_path) -> None:
    """The README's promise: the first line names the first block and counts the rest, then
    one indented line per failing block (the interpreter's details, which were not printed)."""
    path = tmp_path / "asrt.tileir"
    path.write_text(
        "cuda_tile.module @m {\n  entry @k() {\n    %bx, %by, %bz = get_tile_block_id : tile<i32>\n"
        "    %c1 = constant <i32: 1> : tile<i32>\n    %ok = cmpi less_than %bx, %c1, signed : tile<i32> -> tile<i1>\n"
        '    assert %ok, "bx must be < 1" : tile<i1>\n    return\n  }\n}\n'
    )
    status, _, err = run(capsys, "run", str(path), "--grid", "4", "--backend", "cpu")
    lines = err.splitlines()
    assert status == 1 and lines[0].endswith("in all, 3 elements failed in 3 tile blocks")
    assert [line.split(": tile block ")[1][:9] for line in lines[1:4]] == ["(1, 0, 0)", "(2, 0, 0)", "(3, 0, 0)"]
    assert all(line.startswith("  ") for line in lines[1:4]) and lines[4] == "tileir run: kernel @k failed"


def test_opt_verifier_options_take_one_dash_too(capsys, tmp_path) -> None:
    path = tmp_path / "k.tileir"
    path.write_text("cuda_tile.module @m {\n  entry @k() {\n    return\n  }\n}\n")
    for argv in (["-target-version", "13.1"], ["-no-verify"]):
        status, out, _ = run(capsys, "opt", *argv, str(path))
        assert status == 0 and "entry @k()" in out, argv


CUTILE_KERNELS = """import cuda.tile as ct

ConstInt = ct.Constant[int]


@ct.kernel
def vadd(a, b, c, T: ConstInt):
    i = ct.bid(0)
    ct.store(c, index=(i,), tile=ct.load(a, index=(i,), shape=(T,)) + ct.load(b, index=(i,), shape=(T,)))


@ct.kernel
def scale(x, s: float, y, T: ConstInt):
    i = ct.bid(0)
    ct.store(y, index=(i,), tile=ct.load(x, index=(i,), shape=(T,)) * s)


if __name__ == "__main__":
    raise SystemExit("run by tileir as a module, not as a script")
"""


@pytest.mark.parametrize("backend", ["cpu", "triton-interpret"])
def test_a_cutile_kernel_of_a_python_file(capsys, tmp_path: Path, backend: str) -> None:
    """`tileir run kernels.py -k K`: cuTile exports K for the SPECs (a ct.Constant given as a
    number, compiled in, still counted in argN), cuTile's convention implied."""
    pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    if backend == "triton-interpret":
        pytest.importorskip("triton")
        pytest.importorskip("torch")
    path = tmp_path / "kernels.py"
    path.write_text(CUTILE_KERNELS)
    arrays = ["--arg", "rand:128:f32", "--arg", "rand:128:f32", "--arg", "zeros:128:f32"]
    status, out, err = run(
        capsys, "run", str(path), "-k", "vadd", "--grid", "4", *arrays, "--arg", "32",
        "--backend", backend, "--check", "arg2 = arg0 + arg1",
    )  # fmt: skip
    assert status == 0, err
    assert out.startswith(f"kernel @vadd  grid 4x1x1 (4 tile blocks)  backend {backend}")
    assert "  arg3  scalar 32  (ct.Constant: compiled in)\n" in out and "check arg2 = arg0 + arg1: ok" in out
    # A constant between the arrays keeps their numbering; the float scalar is passed.
    status, out, err = run(
        capsys, "run", str(path), "-k", "scale", "--grid", "2", "--arg", "rand:64:f32", "--arg", "2.5",
        "--arg", "zeros:64:f32", "--arg", "32", "--backend", backend, "--check", "arg2 = arg0 * 2.5",
    )  # fmt: skip
    assert status == 0 and "check arg2 = arg0 * 2.5: ok" in out, err


def test_a_cutile_kernel_with_static_dimensions_from_specs(capsys, tmp_path: Path) -> None:
    """cuTile exports for the SPECs' placeholders (which take no memory: broadcast views with
    zero strides) as for the C-contiguous arrays they stand for: a stride the kernel's
    `ct.ArrayAnnotation` makes a constant is the made array's, not 0."""
    pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    path = tmp_path / "static.py"
    path.write_text(
        "from typing import Annotated\n"
        "import cuda.tile as ct\n\n\n"
        "Rows = Annotated[ct.Array, ct.ArrayAnnotation(static_shape_dims=(0,), static_stride_dims=(0, 1))]\n\n\n"
        "@ct.kernel\n"
        "def double(x: Rows, y):\n"
        "    ct.static_assert(x.strides[0] == 16)\n"
        "    ct.store(y, index=(0, 0), tile=ct.load(x, index=(0, 0), shape=(4, 16)) * 2)\n"
    )
    status, out, err = run(
        capsys, "run", str(path), "--grid", "1", "--arg", "rand:4x16:f32", "--arg", "zeros:4x16:f32",
        "--check", "arg1 = arg0 * 2",
    )  # fmt: skip
    assert status == 0 and "check arg1 = arg0 * 2: ok" in out, err


def test_errors_of_a_python_file_of_cutile_kernels(capsys, tmp_path: Path) -> None:
    pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    path = tmp_path / "kernels.py"
    path.write_text(CUTILE_KERNELS)
    grid = ["--grid", "1"]
    assert run(capsys, "run", str(path), *grid, "--arg", "1")[:3:2] == (
        2, f"tileir: error: {path} has 2 cuTile kernels (vadd, scale); name one with -k\n"
    )  # fmt: skip
    assert run(capsys, "run", str(path), "-k", "nope", *grid)[2] == (
        f"tileir: error: {path}: no cuTile kernel named 'nope'; it has vadd, scale\n"
    )
    assert run(capsys, "run", str(path), "-k", "vadd", *grid, "--arg", "1")[2] == (
        "tileir: error: cuTile kernel vadd takes 4 arguments, got 1\n"
    )
    broken = tmp_path / "broken.py"
    broken.write_text("import cuda.tile as ct\nx = 1\nundefined_name + 1\n")
    assert run(capsys, "run", str(broken), *grid)[2] == (
        f"tileir: error: {broken}:3: NameError: name 'undefined_name' is not defined "
        "(running it to find its cuTile kernels)\n"
    )
    broken.write_text("def f(:\n")
    assert run(capsys, "run", str(broken), *grid)[2] == (
        f"tileir: error: {broken}:1:7: SyntaxError: invalid syntax (running it to find its cuTile kernels)\n"
    )
    broken.write_text("x = 1\n")
    assert run(capsys, "run", str(broken), *grid)[2] == (
        f"tileir: error: {broken}: no cuTile kernel (a function decorated with @ct.kernel) in it\n"
    )
