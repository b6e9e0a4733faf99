"""The integer ops of the interpreter against Python-int expectations.

Every expectation is computed here with Python's unbounded integers and an explicit
wrap to the element width (never with the interpreter's own helpers). Results are
compared as unsigned bit patterns, so i1 (bools) and iN (two's complement) compare alike.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.interp import SEMANTICS, InterpError

from .util import eval_kernel, kernel

WIDTHS = [1, 8, 16, 32, 64]


def mask(w: int) -> int:
    return (1 << w) - 1


def as_signed(v: int, w: int) -> int:
    v &= mask(w)
    return v - (1 << w) if v >> (w - 1) else v


def as_unsigned(v: int, w: int) -> int:
    return v & mask(w)


def literal(values: list[int], w: int) -> str:
    """A DenseElementsAttr body for iW values (any Python ints: wrapped to the width)."""
    if w == 1:
        items = ["true" if v & 1 else "false" for v in values]
    else:
        items = [str(as_signed(v, w)) for v in values]
    return "[" + ", ".join(items) + "]"


def pad(values: list[int]) -> list[int]:
    """Tile dimensions must be powers of two: pad with copies of the first value."""
    n = 1
    while n < len(values):
        n *= 2
    return values + [values[0]] * (n - len(values))


def bits(array: np.ndarray, w: int) -> list[int]:
    """The elements of a result tile (group axis of length 1) as unsigned bit patterns."""
    return [int(v) & mask(w) for v in np.asarray(array).reshape(-1).tolist()]


def run_binary(ops: dict[str, str], w: int, lhs: list[int], rhs: list[int]) -> dict[str, list[int]]:
    """Evaluate `%name = <op text> %a, %b <suffix>` for each entry; ops map a result name
    to the text between `=` and the operands' type, with `A`/`B` for the operands."""
    n = len(lhs)
    a, b = pad(lhs), pad(rhs)
    t = f"tile<{len(a)}xi{w}>"
    lines = [f"%a = constant <i{w}: {literal(a, w)}> : {t}", f"%b = constant <i{w}: {literal(b, w)}> : {t}"]
    for name, text in ops.items():
        body = text.replace("A", "%a").replace("B", "%b")
        result = f"{t} -> tile<{len(a)}xi1>" if body.startswith("cmpi") else t
        lines.append(f"%{name} = {body} : {result}")
    out = eval_kernel(kernel("\n".join(lines)))
    width = {name: 1 if text.startswith("cmpi") else w for name, text in ops.items()}
    return {name: bits(out[name], width[name])[:n] for name in ops}


def trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def ceil_div(x: int, y: int) -> int:
    return -((-x) // y)


# -- expectations per op ----------------------------------------------------------------------


def expect(name: str, x: int, y: int, w: int) -> int | None:
    """The expected unsigned result pattern, or None where the op is undefined."""
    sx, sy, ux, uy = as_signed(x, w), as_signed(y, w), as_unsigned(x, w), as_unsigned(y, w)
    smin = -(1 << (w - 1))
    m = mask(w)
    if name == "add":
        return (sx + sy) & m
    if name == "sub":
        return (sx - sy) & m
    if name == "mul":
        return (sx * sy) & m
    if name == "mulhi":
        return (ux * uy) >> w
    if name == "and":
        return ux & uy
    if name == "or":
        return ux | uy
    if name == "xor":
        return ux ^ uy
    if name in ("sdiv", "sdiv_ceil", "sdiv_floor", "srem"):
        if sy == 0 or (name != "srem" and sx == smin and sy == -1):
            return None
        if name == "srem":
            return (sx - trunc_div(sx, sy) * sy) & m
        f = {"sdiv": trunc_div, "sdiv_ceil": ceil_div, "sdiv_floor": lambda p, q: p // q}[name]
        return f(sx, sy) & m
    if name in ("udiv", "udiv_ceil", "urem"):
        if uy == 0:
            return None
        return {"udiv": ux // uy, "udiv_ceil": ceil_div(ux, uy), "urem": ux % uy}[name] & m
    if name == "shl":
        return 0 if uy >= w else (ux << uy) & m  # amounts >= w shift every bit out
    if name == "shr_u":
        return ux >> min(uy, w)
    if name == "shr_s":
        return (sx >> min(uy, w)) & m  # Python's >> fills with the sign
    if name == "smax":
        return max(sx, sy) & m
    if name == "smin":
        return min(sx, sy) & m
    if name == "umax":
        return max(ux, uy)
    if name == "umin":
        return min(ux, uy)
    raise KeyError(name)


BINARY = {
    "add": "addi A, B",
    "sub": "subi A, B",
    "mul": "muli A, B",
    "mulhi": "mulhii A, B",
    "and": "andi A, B",
    "or": "ori A, B",
    "xor": "xori A, B",
    "shl": "shli A, B",
    "shr_u": "shri A, B unsigned",
    "shr_s": "shri A, B signed",
    "smax": "maxi A, B signed",
    "smin": "mini A, B signed",
    "umax": "maxi A, B unsigned",
    "umin": "mini A, B unsigned",
}
DIVISION = {
    "sdiv": "divi A, B signed",
    "sdiv_ceil": "divi A, B signed rounding<positive_inf>",
    "sdiv_floor": "divi A, B signed rounding<negative_inf>",
    "srem": "remi A, B signed",
    "udiv": "divi A, B unsigned",
    "udiv_ceil": "divi A, B unsigned rounding<positive_inf>",
    "urem": "remi A, B unsigned",
}
COMPARE = {
    "eq": ("cmpi equal A, B, signed", lambda sx, sy, ux, uy: ux == uy),
    "ne": ("cmpi not_equal A, B, unsigned", lambda sx, sy, ux, uy: ux != uy),
    "slt": ("cmpi less_than A, B, signed", lambda sx, sy, ux, uy: sx < sy),
    "sle": ("cmpi less_than_or_equal A, B, signed", lambda sx, sy, ux, uy: sx <= sy),
    "sgt": ("cmpi greater_than A, B, signed", lambda sx, sy, ux, uy: sx > sy),
    "sge": ("cmpi greater_than_or_equal A, B, signed", lambda sx, sy, ux, uy: sx >= sy),
    "ult": ("cmpi less_than A, B, unsigned", lambda sx, sy, ux, uy: ux < uy),
    "ule": ("cmpi less_than_or_equal A, B, unsigned", lambda sx, sy, ux, uy: ux <= uy),
    "ugt": ("cmpi greater_than A, B, unsigned", lambda sx, sy, ux, uy: ux > uy),
    "uge": ("cmpi greater_than_or_equal A, B, unsigned", lambda sx, sy, ux, uy: ux >= uy),
}


def edge_values(w: int) -> list[int]:
    """Zero, ±1, ±2, the signed extremes and their neighbours, the unsigned maximum."""
    smin, smax = -(1 << (w - 1)), (1 << (w - 1)) - 1
    values = [0, 1, -1, 2, -2, 3, 7, smin, smin + 1, smax, smax - 1, mask(w)]
    seen: list[int] = []
    for v in values:
        v = as_unsigned(v, w)
        if v not in seen:
            seen.append(v)
    return seen


def all_pairs(w: int) -> tuple[list[int], list[int]]:
    values = edge_values(w)
    lhs = [x for x in values for _ in values]
    rhs = [y for _ in values for y in values]
    return lhs, rhs


def check_binary(w: int, lhs: list[int], rhs: list[int]) -> None:
    got = run_binary(BINARY, w, lhs, rhs)
    for name in BINARY:
        want = [expect(name, x, y, w) for x, y in zip(lhs, rhs, strict=True)]
        assert got[name] == want, (name, w, lhs, rhs)


def check_division(w: int, lhs: list[int], rhs: list[int]) -> None:
    """Division and remainder on the pairs where each op is defined."""
    for name, text in DIVISION.items():
        pairs = [(x, y) for x, y in zip(lhs, rhs, strict=True) if expect(name, x, y, w) is not None]
        if not pairs:
            continue
        xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
        got = run_binary({name: text}, w, xs, ys)[name]
        assert got == [expect(name, x, y, w) for x, y in pairs], (name, w)


def check_compare(w: int, lhs: list[int], rhs: list[int]) -> None:
    got = run_binary({k: v[0] for k, v in COMPARE.items()}, w, lhs, rhs)
    for name, (_, fn) in COMPARE.items():
        want = [
            int(fn(as_signed(x, w), as_signed(y, w), as_unsigned(x, w), as_unsigned(y, w)))
            for x, y in zip(lhs, rhs, strict=True)
        ]
        assert got[name] == want, (name, w)


# -- edge cases: every pair of edge values, every width ------------------------------------------


@pytest.mark.parametrize("w", WIDTHS)
def test_binary_ops_on_edge_values(w: int) -> None:
    lhs, rhs = all_pairs(w)
    check_binary(w, lhs, rhs)


@pytest.mark.parametrize("w", WIDTHS)
def test_division_on_edge_values(w: int) -> None:
    lhs, rhs = all_pairs(w)
    check_division(w, lhs, rhs)


@pytest.mark.parametrize("w", WIDTHS)
def test_compare_on_edge_values(w: int) -> None:
    lhs, rhs = all_pairs(w)
    check_compare(w, lhs, rhs)


@pytest.mark.parametrize("w", WIDTHS)
def test_shift_amounts_at_and_past_the_width(w: int) -> None:
    # The op reference does not define them; the interpreter follows the hardware's
    # clamping shifts: everything shifted out, or the sign filled in.
    x = as_unsigned(-(1 << (w - 1)) + 1, w) if w > 1 else 1  # 0b100...01: sign bit and bit 0 set
    amounts = [w - 1, w, w + 1, mask(w)] if w > 1 else [0, 1]
    got = run_binary(BINARY, w, [x] * len(amounts), amounts)
    for a, shl, shr_u, shr_s in zip(amounts, got["shl"], got["shr_u"], got["shr_s"], strict=True):
        if a >= w:
            assert (shl, shr_u, shr_s) == (0, 0, mask(w))
        else:
            assert shl == (x << a) & mask(w)


def test_documented_examples() -> None:
    # remi's examples in the op reference, and mulhii's 2^31 * 2.
    got = run_binary({"r": "remi A, B signed"}, 32, [7, 7, -7, -7], [3, -3, 3, -3])["r"]
    assert [as_signed(v, 32) for v in got] == [1, 1, -1, -1]
    got = run_binary({"h": "mulhii A, B", "l": "muli A, B"}, 32, [1 << 31], [2])
    assert got == {"h": [1], "l": [0]}


def test_i1_arithmetic() -> None:
    # As 1-bit integers: true is -1 signed, 1 unsigned; addi is xor, muli is and.
    lhs, rhs = [0, 0, 1, 1], [0, 1, 0, 1]
    got = run_binary(BINARY, 1, lhs, rhs)
    assert got["add"] == [0, 1, 1, 0]
    assert got["sub"] == [0, 1, 1, 0]
    assert got["mul"] == [0, 0, 0, 1]
    assert got["smax"] == [0, 0, 0, 1]  # max(0, -1) = 0
    assert got["umax"] == [0, 1, 1, 1]
    assert got["mulhi"] == [0, 0, 0, 0]
    got = run_binary({"d": "divi A, B unsigned", "r": "remi A, B signed"}, 1, [0, 1], [1, 1])
    assert got == {"d": [0, 1], "r": [0, 0]}


@pytest.mark.parametrize("w", WIDTHS)
def test_negi_absi(w: int) -> None:
    values = edge_values(w)
    n = len(values)
    a = pad(values)
    t = f"tile<{len(a)}xi{w}>"
    out = eval_kernel(
        kernel(f"""
        %a = constant <i{w}: {literal(a, w)}> : {t}
        %n = negi %a : {t}
        %m = absi %a : {t}
    """)
    )
    assert bits(out["n"], w)[:n] == [(-as_signed(v, w)) & mask(w) for v in values]
    # absi: signed input, unsigned result; |MIN| = 2^(w-1) has MIN's bits.
    assert bits(out["m"], w)[:n] == [abs(as_signed(v, w)) & mask(w) for v in values]


# -- hypothesis: random values -------------------------------------------------------------------


def operands(w: int, size: int = 8) -> st.SearchStrategy[tuple[list[int], list[int]]]:
    value = st.one_of(st.integers(0, mask(w)), st.sampled_from(edge_values(w)))
    return st.tuples(st.lists(value, min_size=size, max_size=size), st.lists(value, min_size=size, max_size=size))


@st.composite
def width_and_operands(draw: st.DrawFn) -> tuple[int, list[int], list[int]]:
    w = draw(st.sampled_from(WIDTHS))
    lhs, rhs = draw(operands(w))
    return w, lhs, rhs


@settings(max_examples=25)
@given(width_and_operands())
def test_binary_ops_random(case: tuple[int, list[int], list[int]]) -> None:
    check_binary(*case)


@settings(max_examples=25)
@given(width_and_operands())
def test_division_random(case: tuple[int, list[int], list[int]]) -> None:
    check_division(*case)


@settings(max_examples=15)
@given(width_and_operands())
def test_compare_random(case: tuple[int, list[int], list[int]]) -> None:
    check_compare(*case)


# -- the group axis: values differing between tile blocks -----------------------------------------


def test_values_differ_between_blocks() -> None:
    out = eval_kernel(
        kernel("""
            %bx, %by, %bz = get_tile_block_id : tile<i32>
            %p = constant <i32: 10> : tile<i32>
            %n = constant <i32: -10> : tile<i32>
            %qp = divi %p, %bx signed rounding<negative_inf> : tile<i32>
            %qn = divi %n, %bx signed rounding<negative_inf> : tile<i32>
            %sn = shri %n, %bx signed : tile<i32>
            %un = shri %n, %bx unsigned : tile<i32>
        """),
        grid_positions=[1, 3, 4],
    )
    assert out["qp"].tolist() == [10 // k for k in (1, 3, 4)]
    assert out["qn"].tolist() == [-10 // k for k in (1, 3, 4)]
    assert out["sn"].tolist() == [-10 >> k for k in (1, 3, 4)]
    assert out["un"].tolist() == [as_signed(as_unsigned(-10, 32) >> k, 32) for k in (1, 3, 4)]


# -- undefined behaviour -------------------------------------------------------------------------


def div_by_block(op: str) -> str:
    return kernel(f"""
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %two = constant <i32: 2> : tile<i32>
        %c = constant <i32: 7> : tile<i32>
        %d = subi %bx, %two : tile<i32>
        %q = {op} %c, %d signed : tile<i32>
    """)


@pytest.mark.parametrize("op", ["divi", "remi"])
def test_division_by_zero_names_the_block(op: str) -> None:
    # Blocks 0, 1, 2, 3 divide by -2, -1, 0, 1: block 2 is at fault.
    with pytest.raises(InterpError) as e:
        eval_kernel(div_by_block(op), grid_positions=[0, 1, 2, 3])
    assert str(e.value) == f"<test>:7:5: error: {op}: integer division by zero (tile block (2, 0, 0))"


def test_division_by_zero_unsigned_and_i1() -> None:
    with pytest.raises(InterpError, match=r"error: divi: integer division by zero \(tile block \(0, 0, 0\)\)$"):
        run_binary({"d": "divi A, B unsigned"}, 1, [1], [0])
    with pytest.raises(InterpError, match=r"error: remi: integer division by zero"):
        run_binary({"r": "remi A, B unsigned"}, 64, [5, 6], [3, 0])


def test_signed_division_overflow() -> None:
    with pytest.raises(InterpError) as e:
        run_binary({"d": "divi A, B signed"}, 16, [-(1 << 15)], [-1])
    assert str(e.value) == (
        "<test>:5:5: error: divi: signed integer division overflow (minimum value divided by -1) (tile block (0, 0, 0))"
    )
    # i1: -1 / -1 = 1 does not fit either.
    with pytest.raises(InterpError, match="signed integer division overflow"):
        run_binary({"d": "divi A, B signed"}, 1, [1], [1])
    # The remainder of MIN / -1 is defined (0), as is unsigned division of the same bits.
    got = run_binary({"r": "remi A, B signed", "u": "divi A, B unsigned"}, 64, [-(1 << 63)], [-1])
    assert got == {"r": [0], "u": [0]}


WRAPS = [
    # (op text, width, lhs, rhs, which promise breaks: "signed"/"unsigned"/None)
    ("addi A, B overflow<no_signed_wrap>", 8, 127, 1, "signed"),
    ("addi A, B overflow<no_signed_wrap>", 8, 255, 1, None),  # -1 + 1: only unsigned wraps
    ("addi A, B overflow<no_unsigned_wrap>", 8, 255, 1, "unsigned"),
    ("addi A, B overflow<no_unsigned_wrap>", 8, 127, 1, None),
    ("addi A, B overflow<no_wrap>", 64, (1 << 63) - 1, 1, "signed"),
    ("addi A, B overflow<no_wrap>", 64, -1, 1, "unsigned"),
    ("addi A, B overflow<no_wrap>", 64, -1, -1, "unsigned"),
    ("addi A, B overflow<no_signed_wrap>", 64, -1, -1, None),
    ("addi A, B overflow<no_signed_wrap>", 1, 1, 1, "signed"),  # -1 + -1 = -2
    ("subi A, B overflow<no_signed_wrap>", 32, -(1 << 31), 1, "signed"),
    ("subi A, B overflow<no_unsigned_wrap>", 32, 0, 1, "unsigned"),
    ("subi A, B overflow<no_signed_wrap>", 32, 0, 1, None),
    ("subi A, B overflow<no_signed_wrap>", 64, 0, -(1 << 63), "signed"),
    ("subi A, B overflow<no_unsigned_wrap>", 64, 5, 5, None),
    ("muli A, B overflow<no_signed_wrap>", 16, 256, 128, "signed"),
    ("muli A, B overflow<no_signed_wrap>", 16, 128, -256, None),  # exactly -32768
    ("muli A, B overflow<no_unsigned_wrap>", 16, 256, 255, None),
    ("muli A, B overflow<no_unsigned_wrap>", 16, 256, 256, "unsigned"),
    ("muli A, B overflow<no_signed_wrap>", 64, -1, -(1 << 63), "signed"),
    ("muli A, B overflow<no_signed_wrap>", 64, 1 << 32, 1 << 31, "signed"),
    ("muli A, B overflow<no_signed_wrap>", 64, 1 << 31, -(1 << 32), None),
    ("muli A, B overflow<no_unsigned_wrap>", 64, 1 << 32, 1 << 32, "unsigned"),
    ("muli A, B overflow<no_unsigned_wrap>", 64, (1 << 32) - 1, (1 << 32) + 1, None),
    ("shli A, B overflow<no_signed_wrap>", 8, 64, 1, "signed"),
    ("shli A, B overflow<no_signed_wrap>", 8, -64, 1, None),
    ("shli A, B overflow<no_unsigned_wrap>", 8, 64, 1, None),
    ("shli A, B overflow<no_unsigned_wrap>", 8, 128, 1, "unsigned"),
    ("shli A, B overflow<no_wrap>", 32, 1, 32, "signed"),  # shifted out entirely
    ("shli A, B overflow<no_wrap>", 32, 0, 40, None),
]


@pytest.mark.parametrize(("text", "w", "x", "y", "broken"), WRAPS)
def test_overflow_flags(text: str, w: int, x: int, y: int, broken: str | None) -> None:
    flag = text.split("overflow<")[1].rstrip(">")
    plain = text.split(" overflow")[0]
    if broken is None:
        got = run_binary({"r": text, "p": plain}, w, [x], [y])
        assert got["r"] == got["p"]
        return
    with pytest.raises(InterpError) as e:
        run_binary({"r": text}, w, [x], [y])
    op = text.split()[0]
    message = f"{op}: {broken} wrap-around despite overflow<{flag}>"
    assert str(e.value) == f"<test>:5:5: error: {message} (tile block (0, 0, 0))"
    # Without the promise the same values simply wrap.
    run_binary({"p": plain}, w, [x], [y])


def test_negi_no_signed_wrap() -> None:
    text = kernel("""
        %a = constant <i32: [-2147483648, 5]> : tile<2xi32>
        %n = negi %a overflow<no_signed_wrap> : tile<2xi32>
    """)
    with pytest.raises(InterpError, match=r"negi: signed wrap-around despite overflow<no_signed_wrap>"):
        eval_kernel(text)
    out = eval_kernel(text.replace(" overflow<no_signed_wrap>", ""))
    assert out["n"].tolist() == [[-(1 << 31), -5]]


def test_kernel_arguments_per_block() -> None:
    # Entry parameters bound per block (shape (G,)) and uniformly (a scalar).
    out = eval_kernel(
        kernel(
            """
            %q = divi %x, %y unsigned rounding<positive_inf> : tile<i16>
            %c = cmpi less_than %x, %y, unsigned : tile<i16> -> tile<i1>
            """,
            params="%x: tile<i16>, %y: tile<i16>",
        ),
        grid_positions=[0, 1, 2],
        args=[np.array([7, -1, 0], dtype=np.int16), 2],
    )
    assert out["q"].tolist() == [4, 32768 - (1 << 16), 0]  # ceil(65535 / 2) = 32768
    assert out["c"].tolist() == [False, False, True]


@pytest.mark.skipif(
    not {"cuda_tile.make_tensor_view", "cuda_tile.store_view_tko"} <= SEMANTICS.keys(),
    reason="the view ops are not in the interpreter yet",
)
def test_through_launch() -> None:
    # End to end: each of 4 blocks computes floor((4 * bx + i) * -7 / 4) and stores it.
    from compiler.runtime import launch

    pv = "partition_view<tile=(4), tensor_view<16xi32, strides=[1]>>"
    text = kernel(
        f"""
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %v = make_tensor_view %out, shape = [16], strides = [1] : tensor_view<16xi32, strides=[1]>
        %p = make_partition_view %v : {pv}
        %i = iota : tile<4xi32>
        %four = constant <i32: 4> : tile<i32>
        %base = muli %bx, %four : tile<i32>
        %r = reshape %base : tile<i32> -> tile<1xi32>
        %b = broadcast %r : tile<1xi32> -> tile<4xi32>
        %x = addi %b, %i : tile<4xi32>
        %m = constant <i32: -7> : tile<4xi32>
        %y = muli %x, %m : tile<4xi32>
        %d = constant <i32: 4> : tile<4xi32>
        %q = divi %y, %d signed rounding<negative_inf> : tile<4xi32>
        %t = make_token : token
        %done = store_view_tko weak %q, %p[%bx] token = %t : tile<4xi32>, {pv}, tile<i32> -> token
        """,
        params="%out: tile<ptr<i32>>",
    )
    out = np.zeros(16, dtype=np.int32)
    launch(text, grid=(4,), args=[out])
    assert out.tolist() == [(k * -7) // 4 for k in range(16)]
