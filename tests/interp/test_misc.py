"""Misc ops (assert, print_tko, tokens, assume, block ids) and how errors are reported."""

from __future__ import annotations

import ctypes
import ctypes.util
import io
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler.dialect import OPS
from compiler.interp import SEMANTICS, InterpError, Machine, RunOptions
from compiler.interp.machine import location_text
from compiler.interp.ops_misc import _format_float, _format_int
from compiler.ir.attributes import CallSiteLoc, DILocAttr, FileLineColLoc, FusedLoc, NameLoc, UnknownLoc
from compiler.runtime import find_kernel, launch, load_module
from tests.interp.util import eval_kernel, kernel

PRELUDE = """
%bx, %by, %bz = get_tile_block_id : tile<i32>
%i = iota : tile<4xi32>
%b1 = reshape %bx : tile<i32> -> tile<1xi32>
%b = broadcast %b1 : tile<1xi32> -> tile<4xi32>
"""


def run(text: str, grid=(1,), args=(), **options) -> str:
    out = io.StringIO()
    launch(text, grid=grid, args=list(args), options=RunOptions(stdout=out, **options))
    return out.getvalue()


def run_failing(text: str, grid=(1,), **options) -> tuple[InterpError, str]:
    out = io.StringIO()
    with pytest.raises(InterpError) as e:
        launch(text, grid=grid, options=RunOptions(stdout=out, **options))
    return e.value, out.getvalue()


# -- assert --------------------------------------------------------------------------------


def test_assert_failing_in_one_block():
    # only block 2 fails, at element 2
    text = kernel(
        PRELUDE
        + """
        %o1 = cmpi not_equal %i, %b, signed : tile<4xi32> -> tile<4xi1>
        %two = constant <i32: 2> : tile<4xi32>
        %o2 = cmpi not_equal %b, %two, signed : tile<4xi32> -> tile<4xi1>
        %ok = ori %o1, %o2 : tile<4xi1>
        assert %ok, "x must differ" : tile<4xi1>
    """
    )
    error, _ = run_failing(text, grid=(4,))
    assert str(error) == (
        '<input>:12:5: error: assert: assertion failed: "x must differ" at element (2,) (tile block (2, 0, 0))'
    )
    assert error.block == (2, 0, 0)
    assert error.details == [
        '<input>:12:5: tile block (2, 0, 0): assertion failed: "x must differ" at element (2,) (1 element)'
    ]


def test_assert_stops_the_failing_blocks_the_others_go_on_and_the_launch_fails():
    text = kernel(
        PRELUDE
        + """
        %ok = cmpi less_than %i, %b, signed : tile<4xi32> -> tile<4xi1>
        %t0 = print_tko "before %d\\n", %bx : tile<i32> -> token
        assert %ok, "i < bx" : tile<4xi1>
        %t1 = print_tko "after %d\\n", %bx : tile<i32> -> token
    """
    )
    error, out = run_failing(text, grid=(6,), print_prefix=False)
    # blocks 0..3 have elements i >= bx: 4, 3, 2, 1 of them
    assert str(error) == (
        '<input>:10:5: error: assert: assertion failed: "i < bx" at element (0,) (tile block (0, 0, 0));'
        " in all, 10 elements failed in 4 tile blocks"
    )
    assert error.details == [
        f'<input>:10:5: tile block ({b}, 0, 0): assertion failed: "i < bx" at element ({b},) '
        f"({4 - b} element{'s' if b < 3 else ''})"
        for b in range(4)
    ]
    assert out == "before 0\nbefore 1\nbefore 2\nbefore 3\nbefore 4\nafter 4\nbefore 5\nafter 5\n"


def test_assert_reports_the_first_failing_element_of_a_2d_tile_in_row_major_order():
    text = kernel("""
        %v = constant <i32: [[1, 2, 3, 4], [5, 0, 7, 0]]> : tile<2x4xi32>
        %z = constant <i32: 0> : tile<2x4xi32>
        %ok = cmpi not_equal %v, %z, signed : tile<2x4xi32> -> tile<2x4xi1>
        assert %ok, "no zeros" : tile<2x4xi1>
    """)
    error, _ = run_failing(text, grid=(2,))
    assert str(error) == (
        '<input>:6:5: error: assert: assertion failed: "no zeros" at element (1, 1) (tile block (0, 0, 0));'
        " in all, 4 elements failed in 2 tile blocks"
    )


def test_assert_on_a_rank_0_tile_inside_a_loop():
    # block b fails at iteration b (for b < 3); the message quotes like the IR
    text = kernel("""
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %c0 = constant <i32: 0> : tile<i32>
        %c1 = constant <i32: 1> : tile<i32>
        %c5 = constant <i32: 5> : tile<i32>
        %c3 = constant <i32: 3> : tile<i32>
        %s = for %iv in (%c0 to %c5, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
          %hit = cmpi equal %iv, %bx, signed : tile<i32> -> tile<i1>
          %small = cmpi less_than %bx, %c3, signed : tile<i32> -> tile<i1>
          %bad = andi %hit, %small : tile<i1>
          %true = constant <i1: true> : tile<i1>
          %ok = xori %bad, %true : tile<i1>
          assert %ok, "say \\"no\\"" : tile<i1>
          %a = addi %acc, %c1 : tile<i32>
          continue %a : tile<i32>
        }
        %t = print_tko "%d:%d\\n", %bx, %s : tile<i32>, tile<i32> -> token
    """)
    error, out = run_failing(text, grid=(5,), print_prefix=False)
    assert str(error) == (
        '<input>:14:5: error: assert: assertion failed: "say \\"no\\"" (tile block (0, 0, 0));'
        " in all, 3 elements failed in 3 tile blocks"
    )
    assert out == "3:5\n4:5\n"


def test_assert_passing_is_silent():
    text = kernel("""
        %t = constant <i1: true> : tile<4xi1>
        assert %t, "fine" : tile<4xi1>
    """)
    assert run(text, grid=(3,)) == ""


# -- print_tko ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decl", "fmt", "expected"),
    [
        ("constant <i32: 42> : tile<i32>", "%d|%5d|%-5d|%05d|%+d", "42|   42|42   |00042|+42"),
        (
            "constant <i32: -1> : tile<i32>",
            "%d %u %x %X %o %#x",
            "-1 4294967295 ffffffff FFFFFFFF 37777777777 0xffffffff",
        ),
        ("constant <i8: -1> : tile<i8>", "%d %u %x", "-1 255 ff"),
        ("constant <i64: -2> : tile<i64>", "%lld %llu", "-2 18446744073709551614"),
        ("constant <i32: 300> : tile<i32>", "%hhd %hhu %hd", "44 44 300"),
        ("constant <i32: 65> : tile<i32>", "%c%c", None),
        ("constant <i1: true> : tile<i1>", "%d %u", "1 1"),
        (
            "constant <f32: 1.5> : tile<f32>",
            "%f %.2f %e %g %a %8.3f",
            "1.500000 1.50 1.500000e+00 1.5 0x1.8p+0    1.500",
        ),
        ("constant <f64: 0.1> : tile<f64>", "%.17g %A", "0.10000000000000001 0X1.999999999999AP-4"),
        ("constant <f16: -2.5> : tile<f16>", "%f", "-2.500000"),
        ("constant <bf16: 3.0> : tile<bf16>", "%.1f", "3.0"),
        ("constant <f32: 0x7F800000> : tile<f32>", "%f %05.1f %E", "inf   inf INF"),
        ("constant <i32: [1, -2, 3, 4]> : tile<4xi32>", "v=%d;", "v=[1, -2, 3, 4];"),
        ("constant <i32: [[1, 2], [3, 4]]> : tile<2x2xi32>", "%3d", "[[  1,   2], [  3,   4]]"),
        ("constant <f32: [0.5, 2.0]> : tile<2xf32>", "%.3f %%", "[0.500, 2.000] %"),
    ],
)
def test_print_formats_like_printf(decl, fmt, expected):
    n = fmt.count("%") - 2 * fmt.count("%%")
    args = ", ".join(["%v"] * n)
    types = ", ".join([decl.split(" : ")[1]] * n)
    text = kernel(f"""
        %v = {decl}
        %t = print_tko "{fmt}", {args} : {types} -> token
    """)
    if expected is None:  # %c of 65 twice
        expected = "AA"
    assert run(text, print_prefix=False) == expected


def test_print_prefixes_each_line_with_the_block_and_keeps_program_order_per_block():
    text = kernel("""
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %t0 = print_tko "a%d\\nb", %bx : tile<i32> -> token
        %t1 = print_tko "c\\n" -> token
        %t2 = print_tko "no newline" -> token
    """)
    assert run(text, grid=(2, 2)) == (
        "[block (0, 0, 0)] a0\n[block (0, 0, 0)] bc\n[block (0, 0, 0)] no newline\n"
        "[block (1, 0, 0)] a1\n[block (1, 0, 0)] bc\n[block (1, 0, 0)] no newline\n"
        "[block (0, 1, 0)] a0\n[block (0, 1, 0)] bc\n[block (0, 1, 0)] no newline\n"
        "[block (1, 1, 0)] a1\n[block (1, 1, 0)] bc\n[block (1, 1, 0)] no newline\n"
    )
    # without the prefix, as the GPU writes it
    assert run(text, grid=(2,), print_prefix=False) == "a0\nbc\nno newlinea1\nbc\nno newline"


def test_print_inside_divergent_control_flow_is_ordered_per_block():
    text = kernel("""
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %c2 = constant <i32: 2> : tile<i32>
        %m = remi %bx, %c2 signed : tile<i32>
        %c0 = constant <i32: 0> : tile<i32>
        %even = cmpi equal %m, %c0, signed : tile<i32> -> tile<i1>
        %t0 = print_tko "start %d\\n", %bx : tile<i32> -> token
        if %even {
          %t1 = print_tko "even\\n" -> token
        } else {
          %t2 = print_tko "odd\\n" -> token
        }
        %t3 = print_tko "end\\n" -> token
    """)
    assert run(text, grid=(3,), print_prefix=False) == "start 0\neven\nend\nstart 1\nodd\nend\nstart 2\neven\nend\n"


def test_print_output_of_blocks_run_before_an_error_is_written():
    text = kernel("""
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %t0 = print_tko "hello %d\\n", %bx : tile<i32> -> token
        %c0 = constant <i32: 0> : tile<i32>
        %q = divi %bx, %c0 signed : tile<i32>
    """)
    error, out = run_failing(text, grid=(2,), print_prefix=False)
    assert out == "hello 0\nhello 1\n"
    assert "divi" in str(error)


@pytest.mark.parametrize(
    ("decl", "fmt", "message"),
    [
        ("constant <f32: 1.0> : tile<f32>", "%d", "conversion '%d' does not apply to operand 0 of element type f32"),
        ("constant <i32: 1> : tile<i32>", "%f", "conversion '%f' does not apply to operand 0 of element type i32"),
        ("constant <i32: 1> : tile<i32>", "%s", "conversion '%s' is not supported (operand 0 is a tile of i32)"),
    ],
)
def test_print_conversion_that_does_not_fit_its_operand(decl, fmt, message):
    text = kernel(f"""
        %v = {decl}
        %t = print_tko "{fmt}", %v : {decl.split(" : ")[1]} -> token
    """)
    error, _ = run_failing(text)
    assert str(error) == f"<input>:4:5: error: print_tko: {message} (tile block (0, 0, 0))"


def test_print_goes_to_sys_stdout_by_default(capsys):
    text = kernel('%t = print_tko "hi\\n" -> token')
    launch(text, grid=(1,))
    assert capsys.readouterr().out == "[block (0, 0, 0)] hi\n"


_LIBC = ctypes.CDLL(ctypes.util.find_library("c")) if sys.platform.startswith("linux") else None


def _c_printf(fmt: str, value: int | float) -> str:
    buf = ctypes.create_string_buffer(512)
    arg = ctypes.c_double(value) if isinstance(value, float) else ctypes.c_longlong(value)
    _LIBC.snprintf(buf, 512, fmt.encode(), arg)  # type: ignore[union-attr]
    return buf.value.decode()


_FLAGS = st.text(alphabet="-+ #0", max_size=3)
_WIDTH = st.one_of(st.none(), st.integers(0, 12))
_PRECISION = st.one_of(st.none(), st.integers(0, 8))


@pytest.mark.skipif(_LIBC is None, reason="compares with glibc's printf")
@given(_FLAGS, _WIDTH, _PRECISION, st.sampled_from("diouxX"), st.integers(-(2**40), 2**40))
def test_integer_conversions_match_c_printf(flags, width, precision, conv, value):
    if conv in "ouxX":
        value = abs(value)
    spec = "%" + flags + ("" if width is None else str(width)) + ("" if precision is None else f".{precision}")
    assert _format_int(flags, width, precision, conv, value) == _c_printf(spec + "ll" + conv, value)


@pytest.mark.skipif(_LIBC is None, reason="compares with glibc's printf")
@given(
    _FLAGS,
    _WIDTH,
    _PRECISION,
    st.sampled_from("eEfFgGaA"),
    st.floats(allow_nan=True, allow_infinity=True, width=64).filter(lambda v: abs(v) < 1e30 or not np.isfinite(v)),
)
def test_float_conversions_match_c_printf(flags, width, precision, conv, value):
    spec = "%" + flags + ("" if width is None else str(width)) + ("" if precision is None else f".{precision}")
    if np.isnan(value):
        value = float("nan") if not np.signbit(value) else -float("nan")
    assert _format_float(flags, width, precision, conv, value) == _c_printf(spec + conv, value)


# -- tokens, assume, block ids ----------------------------------------------------------------


def test_tokens_and_assume():
    out = eval_kernel(
        kernel("""
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %t0 = make_token : token
        %t1 = make_token : token
        %j = join_tokens %t0, %t1 : token
        %a = assume bounded<0, ?>, %bx : tile<i32>
        %d = assume div_by<4>, %bx : tile<i32>
    """),
        grid_positions=[3, 5, 8],
    )
    assert out["j"] == "token"
    assert out["a"].tolist() == [3, 5, 8] and out["d"].tolist() == [3, 5, 8]  # unchecked: 5 is not divisible by 4


def test_num_tile_blocks_is_uniform():
    out = eval_kernel(kernel("%nx, %ny, %nz = get_num_tile_blocks : tile<i32>"), grid_positions=[0, 1], grid=(7, 2, 3))
    assert [out[k].tolist() for k in ("nx", "ny", "nz")] == [[7], [2], [3]]
    assert out["nx"].dtype == np.int32


# -- error reports -------------------------------------------------------------------------------


def test_interp_error_text():
    e = InterpError(
        "access outside every allocation", op="load_ptr_tko", where="k.tileir:7:9", block=(1, 2, 3), address=0x10040
    )
    assert str(e) == (
        "k.tileir:7:9: error: load_ptr_tko: access outside every allocation (tile block (1, 2, 3), address 0x10040)"
    )
    assert str(InterpError("bad grid")) == "error: bad grid"
    assert str(InterpError("m", op="x", note="more")) == "error: x: m; more"


@pytest.mark.parametrize(
    ("loc", "text"),
    [
        (FileLineColLoc("k.py", 12, 3), "k.py:12:3"),
        (NameLoc("acc", FileLineColLoc("k.py", 4, 5)), "k.py:4:5"),
        (NameLoc("acc"), None),
        (CallSiteLoc(FileLineColLoc("callee.py", 1, 2), FileLineColLoc("caller.py", 3, 4)), "callee.py:1:2"),
        (CallSiteLoc(UnknownLoc(), FileLineColLoc("caller.py", 3, 4)), "caller.py:3:4"),
        (
            FusedLoc((UnknownLoc(), NameLoc("n", FileLineColLoc("f.py", 8, 1)), FileLineColLoc("g.py", 1, 1))),
            "f.py:8:1",
        ),
        (DILocAttr(FileLineColLoc("d.py", 2, 7), UnknownLoc()), "d.py:2:7"),
        (UnknownLoc(), None),
        (None, None),
    ],
)
def test_location_text(loc, text):
    assert location_text(loc) == text


def test_errors_name_the_location_attribute_when_there_is_no_source_text():
    text = kernel("""
        %c = constant <i1: false> : tile<i1>
        assert %c, "boom" : tile<i1> loc(fused["kernel"("kernel.py":12:5), "other.py":1:1])
        %z = constant <i32: 0> : tile<i32>
    """)
    module = load_module(text)
    entry = find_kernel(module, None)
    module.source = None  # as for a module read from bytecode
    with pytest.raises(InterpError) as e:
        Machine(module).run(entry, (2,), [])
    assert str(e.value) == (
        'kernel.py:12:5: error: assert: assertion failed: "boom" (tile block (0, 0, 0));'
        " in all, 2 elements failed in 2 tile blocks"
    )
    # without any location: no place at all
    for op in entry.walk():
        op.location = None
    with pytest.raises(InterpError) as e:
        Machine(module).run(entry, (1,), [])
    assert str(e.value) == 'error: assert: assertion failed: "boom" (tile block (0, 0, 0))'


def test_errors_from_a_file_name_the_file(tmp_path):
    path = tmp_path / "k.tileir"
    path.write_text(
        kernel("""
        %c = constant <i1: false> : tile<i1>
        assert %c, "boom" : tile<i1>
    """)
    )
    with pytest.raises(InterpError) as e:
        launch(str(path), grid=(1, 2))
    assert str(e.value) == (
        f'{path}:4:5: error: assert: assertion failed: "boom" (tile block (0, 0, 0));'
        " in all, 2 elements failed in 2 tile blocks"
    )


def test_op_without_semantics(monkeypatch):
    monkeypatch.delitem(SEMANTICS, "cuda_tile.addi")
    text = kernel("""
        %c = constant <i32: 1> : tile<i32>
        %d = addi %c, %c : tile<i32>
    """)
    error, _ = run_failing(text)
    assert str(error) == "<input>:4:5: error: addi: the interpreter has no semantics for this op"


def test_a_crash_inside_a_semantics_function_is_reported_not_raised(monkeypatch):
    def broken(ctx):
        return 1 // 0

    monkeypatch.setitem(SEMANTICS, "cuda_tile.addi", broken)
    text = kernel("""
        %c = constant <i32: 1> : tile<i32>
        %d = addi %c, %c : tile<i32>
    """)
    error, _ = run_failing(text, grid=(3,))
    assert str(error) == (
        "<input>:4:5: error: addi: internal error in the interpreter: ZeroDivisionError: integer division or modulo "
        "by zero (tile block (0, 0, 0))"
    )
    assert isinstance(error.__cause__, ZeroDivisionError)


def test_every_op_of_the_dialect_has_semantics():
    from compiler.interp.machine import _CONTROL, _TERMINATORS

    handled = set(SEMANTICS) | set(_CONTROL) | set(_TERMINATORS)
    ops = {
        name
        for name, opdef in OPS.items()
        if opdef.dialect == "cuda_tile"
        and "testing$" not in name
        and opdef.mnemonic not in ("module", "entry", "global")
    }
    assert sorted(ops - handled) == []


def test_f8_values_print_as_doubles():
    text = kernel("""
        %x = constant <f8E4M3FN: [0.5, -3.0]> : tile<2xf8E4M3FN>
        %t = print_tko "%.2f", %x : tile<2xf8E4M3FN> -> token
    """)
    assert run(text, print_prefix=False) == "[0.50, -3.00]"
