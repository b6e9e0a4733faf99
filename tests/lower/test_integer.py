"""The Triton lowering of the integer ops (compiler/lower/ops_integer.py) against the CPU
interpreter: every op, i1/i8/i16/i32/i64, each signedness and rounding variant, edge values
(0, ±1, the extremes, shift amounts around the width), several shapes; and compiles for
sm_80/sm_90/sm_100 with checks of the PTX of the ops that have a dedicated instruction.

Many ops share one kernel (one output per op) so that a launch checks them all at once.
On tileiras, shifts by amounts of at least the width are left open (tileiras_shift_check).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from .harness import ON_GPU, compile_for, kernel_text, run_both, source_of, tile_type, triton_version

WIDTHS = (8, 16, 32, 64)
NP_INT = {1: np.bool_, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


# -- building kernels ------------------------------------------------------------------------------


def run_ops(
    ops: dict[str, str],
    w: int,
    inputs: dict[str, np.ndarray],
    shape: tuple[int, ...],
    blocks: int = 1,
    result_width: dict[str, int] | None = None,
) -> list:
    """Each op text (with %a, %b ... for the inputs) gives output `<name>`; both backends run
    and must agree bitwise. Returns the CPU backend's arguments."""
    elem = f"i{w}"
    result_width = result_width or {}
    body = []
    for name, text in ops.items():
        rw = result_width.get(name, w)
        if text.startswith("cmpi"):
            rw = 1
        arrow = rw != w or text.startswith("cmpi")
        types = f"{tile_type(shape, elem)} -> {tile_type(shape, f'i{rw}')}" if arrow else tile_type(shape, elem)
        body.append(f"%{name}_r = {text} : {types}")
    outs = [(name, "i1" if ops[name].startswith("cmpi") else f"i{result_width.get(name, w)}") for name in ops]
    text = kernel_text([(n, elem) for n in inputs], outs, body, shape, blocks)
    args = list(inputs.values())
    for _, oe in outs:
        args.append(np.zeros(args[0].shape, dtype=NP_INT[int(oe[1:])]))
    check = tileiras_shift_check(ops, w, inputs)
    cpu, _ = run_both(text, "k", blocks, args, on_tileiras=check)
    assert_check_sound(check, cpu, ops, w, inputs)
    return cpu


# -- shift amounts of at least the width on tileiras -----------------------------------------------
#
# The op reference (cuda-tile Ops.td, shli/shri) defines `x_i << y_i` and `x_i >> y_i`, the amount
# "interpreted as an unsigned integer", and says nothing of amounts >= the bit width; the
# interpreter follows the native clamping shifts there (compiler/interp/ops_integer.py). tileiras
# 13.5 treats those amounts as undefined, as LLVM does (a shift by >= the width is poison): for
# i64 its sm_90 code reads only the low 32 bits of the amount (USHF.L.U32 / USHF.L.U64.HI on the
# parameter's low word), so `1 << 2**63` gives 1 and `x << (2**32 + 3)` gives x << 3. The spec
# leaves these lanes open: on tileiras they are not compared, every other lane stays bitwise.


def _bits(a: Any) -> np.ndarray:
    a = np.asarray(a).reshape(-1)
    return a if a.dtype == np.bool_ else a.view(f"u{a.itemsize}")


def open_shift_lanes(ops: dict[str, str], w: int, inputs: dict[str, Any]) -> dict[str, np.ndarray]:
    """Per shift op, the (flat) lanes whose amount, its right operand read as unsigned, is >= w."""
    lanes = {}
    for name, text in ops.items():
        words = text.replace(",", " ").split()
        if words[0] in ("shli", "shri"):
            amount = np.asarray(inputs[words[2].lstrip("%")]).reshape(-1)
            lanes[name] = (amount.astype(np.uint8) if amount.dtype == np.bool_ else _bits(amount)) >= w
    return lanes


def tileiras_shift_check(ops: dict[str, str], w: int, inputs: dict[str, Any]) -> Callable[[list, list], None]:
    """run_both's `on_tileiras` for the arguments [*inputs, one output per op]: every argument
    bitwise except the open lanes of the shift outputs."""
    lanes = open_shift_lanes(ops, w, inputs)
    names = [""] * len(inputs) + list(ops)

    def check(cpu: list, gpu: list) -> None:
        for i, (x, y) in enumerate(zip(cpu, gpu, strict=True)):
            keep = ~lanes.get(names[i], np.zeros(_bits(x).shape, np.bool_))
            assert np.array_equal(_bits(x)[keep], _bits(y)[keep]), f"argument {i} ({names[i] or 'input'})"

    return check


def _changed(a: np.ndarray, lanes: np.ndarray) -> np.ndarray:
    """A copy of `a` with the lowest bit of each of `lanes` (flat) flipped."""
    out = a.copy()
    flat = out.reshape(-1)
    if flat.dtype == np.bool_:
        flat[lanes] = ~flat[lanes]
    else:
        _bits(flat)[lanes] ^= 1
    return out


def assert_check_sound(check, cpu: list, ops: dict[str, str], w: int, inputs: dict[str, Any]) -> None:
    """Without a GPU, the tileiras check on the oracle's own results: they pass, and still pass
    with every open shift lane changed (what the check allows), but a change to any other lane
    of an output fails it (the check is not vacuous)."""
    if ON_GPU:
        return
    lanes = open_shift_lanes(ops, w, inputs)
    n_in = len(inputs)
    check(cpu, list(cpu))
    relaxed = list(cpu)
    for k, name in enumerate(ops):
        if name in lanes and lanes[name].any():
            relaxed[n_in + k] = _changed(cpu[n_in + k], lanes[name])
    check(cpu, relaxed)
    for k, name in enumerate(ops):
        out = cpu[n_in + k]
        closed = np.flatnonzero(~lanes.get(name, np.zeros(out.size, np.bool_)))
        if closed.size:
            bad = list(cpu)
            bad[n_in + k] = _changed(out, closed[-1:])
            with pytest.raises(AssertionError):
                check(cpu, bad)


# -- inputs ----------------------------------------------------------------------------------------


def edge_values(w: int) -> list[int]:
    """0, ±1, ±2, small values, shift amounts around the width, the extremes and neighbours."""
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    vals = [0, 1, -1, 2, -2, 3, 7, -7, w - 1, w, w + 1, lo, lo + 1, hi, hi - 1, 0x55 if w > 8 else 0x35]
    if w > 8:
        vals += [255, 256, -256, (1 << (w // 2)) + 3]
    out: list[int] = []
    for v in vals:
        v = ((v - lo) % (1 << w)) + lo  # as a signed w-bit value
        if v not in out:
            out.append(v)
    return out


def all_pairs(w: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge values, then random values, `n` of each."""
    e = edge_values(w)
    lhs = [x for x in e for _ in e]
    rhs = [y for _ in e for y in e]
    assert len(lhs) <= n
    rng = np.random.default_rng(seed + w)
    info = np.iinfo(NP_INT[w])
    extra = n - len(lhs)
    a = np.array(lhs + rng.integers(info.min, info.max, extra, endpoint=True).tolist(), dtype=NP_INT[w])
    # Random shift-sized right operands for some of the rest: amounts below the width matter most.
    r = rng.integers(info.min, info.max, extra, endpoint=True)
    r[: extra // 2] = rng.integers(0, w + 2, extra // 2)
    b = np.array(rhs + r.tolist(), dtype=NP_INT[w])
    return a, b


def divisors(a: np.ndarray, b: np.ndarray, signed_div: bool) -> np.ndarray:
    """`b` with the undefined cases removed: 0 → 1; for signed division MIN / -1 → MIN / 1."""
    b = b.copy()
    b[b == 0] = 1
    if signed_div:
        b[(a == np.iinfo(a.dtype).min) & (b == -1)] = 1
    return b


# -- the op tables ---------------------------------------------------------------------------------

ARITH = {
    "add": "addi %a, %b",
    "sub": "subi %a, %b",
    "mul": "muli %a, %b",
    "mulhi": "mulhii %a, %b",
    "and_": "andi %a, %b",
    "or_": "ori %a, %b",
    "xor": "xori %a, %b",
    "shl": "shli %a, %b",
    "shr_u": "shri %a, %b unsigned",
    "shr_s": "shri %a, %b signed",
    "smax": "maxi %a, %b signed",
    "smin": "mini %a, %b signed",
    "umax": "maxi %a, %b unsigned",
    "umin": "mini %a, %b unsigned",
    "neg": "negi %a",
    "abs": "absi %a",
}
COMPARE = {
    "eq": "cmpi equal %a, %b, signed",
    "ne": "cmpi not_equal %a, %b, unsigned",
    "slt": "cmpi less_than %a, %b, signed",
    "sle": "cmpi less_than_or_equal %a, %b, signed",
    "sgt": "cmpi greater_than %a, %b, signed",
    "sge": "cmpi greater_than_or_equal %a, %b, signed",
    "ult": "cmpi less_than %a, %b, unsigned",
    "ule": "cmpi less_than_or_equal %a, %b, unsigned",
    "ugt": "cmpi greater_than %a, %b, unsigned",
    "uge": "cmpi greater_than_or_equal %a, %b, unsigned",
}
# %d: divisor for signed division (no 0, no MIN / -1); %r: divisor for the rest (no 0).
DIVISION = {
    "sdiv": "divi %a, %d signed",
    "sdiv_zero": "divi %a, %d signed rounding<zero>",
    "sdiv_ceil": "divi %a, %d signed rounding<positive_inf>",
    "sdiv_floor": "divi %a, %d signed rounding<negative_inf>",
    "srem": "remi %a, %r signed",
    "udiv": "divi %a, %r unsigned",
    "udiv_ceil": "divi %a, %r unsigned rounding<positive_inf>",
    "urem": "remi %a, %r unsigned",
}
ALL_OPS = {**ARITH, **COMPARE, **DIVISION}


def inputs_for(w: int, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    a, b = all_pairs(w, n, seed)
    return {"a": a, "b": b, "d": divisors(a, b, True), "r": divisors(a, b, False)}


# -- tests -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("w", WIDTHS)
def test_every_op_on_edge_pairs(w: int) -> None:
    """All pairs of edge values (and random ones) through every op, one 1024-element tile."""
    n = 1024
    cpu = run_ops(ALL_OPS, w, inputs_for(w, n), (n,))
    # The oracle computed something: spot-check a few results with Python integers.
    a, b = cpu[0].astype(object), cpu[1].astype(object)
    outs = dict(zip(ALL_OPS, cpu[4:], strict=True))
    m = (1 << w) - 1
    for i in range(0, n, 37):
        x, y = int(a[i]), int(b[i])
        assert int(outs["add"][i]) & m == (x + y) & m
        assert int(outs["mulhi"][i]) & m == ((x & m) * (y & m)) >> w
        assert bool(outs["ult"][i]) == ((x & m) < (y & m))


@pytest.mark.parametrize(
    ("w", "shape", "blocks"),
    [
        (64, (1,), 3),
        (8, (16,), 2),
        (32, (4096,), 1),
        (16, (16, 16), 2),
        (64, (8, 4, 8), 1),
        (8, (2, 128), 1),
    ],
)
def test_shapes(w: int, shape: tuple[int, ...], blocks: int) -> None:
    """Every op on random and edge values in other shapes (1 element, 2-D, 3-D, several blocks)."""
    n = int(np.prod(shape)) * blocks
    flat = inputs_for(w, max(n, 1024), seed=7)
    full = (shape[0] * blocks, *shape[1:])
    rng = np.random.default_rng(n)
    picks = rng.permutation(len(flat["a"]))[:n]  # a mix of edge pairs and random pairs
    ins = {k: v[picks].reshape(full) for k, v in flat.items()}
    run_ops(ALL_OPS, w, ins, shape, blocks)


@pytest.mark.parametrize("w", (1, 8, 64))
def test_zero_dimensional_tiles(w: int) -> None:
    """Every op on 0-d tiles (scalar parameters), results stored through a reshape."""
    elem = f"i{w}"
    ops = {**ARITH, **COMPARE} if w == 1 else ALL_OPS
    body, outs = [], []
    for name, text in ops.items():
        cmp = text.startswith("cmpi")
        body.append(f"%{name}_r = {text} : tile<{elem}>" + (" -> tile<i1>" if cmp else ""))
        outs.append((name, "i1" if cmp else elem))
    text = kernel_text([], outs, body, (1,), out_shapes={n: () for n, _ in outs},
                       scalars=[(x, elem) for x in ("a", "b", "d", "r")])  # fmt: skip
    lo = -(1 << (w - 1))
    pairs = [(0, 0), (0, 1), (1, 0), (1, 1)] if w == 1 else [(lo, -1), (-3, 2), (7, w), (5, -2), (-1, lo)]
    for a, b in pairs:
        d = 1 if b == 0 or (a == lo and b == -1) else b
        r = 1 if b == 0 else b
        args = [a, b, d, r] + [np.zeros(1, NP_INT[int(e[1:])]) for _, e in outs]
        if w == 1:
            args[:4] = [bool(v & 1) for v in args[:4]]
        inputs = {x: np.array(v, NP_INT[w]) for x, v in zip("abdr", args[:4])}
        check = tileiras_shift_check(ops, w, inputs)
        cpu, _ = run_both(text, "k", 1, args, on_tileiras=check)
        assert_check_sound(check, cpu, ops, w, inputs)


def test_i1_ops() -> None:
    """i1 is a 1-bit integer: addi is xor, muli is and, signed true is -1, ..."""
    a = np.array([False, False, True, True] * 4, dtype=np.bool_)
    b = np.array([False, True, False, True] * 4, dtype=np.bool_)
    run_ops({**ARITH, **COMPARE}, 1, {"a": a, "b": b}, (16,))
    # Division: the only defined divisor is true; signed, true / true is MIN / -1.
    d_a = np.array([False, True, False, False], dtype=np.bool_)
    d_b = np.array([True, True, True, True], dtype=np.bool_)
    s_a = np.array([False, False, False, False], dtype=np.bool_)
    ops = {
        "udiv": "divi %a, %b unsigned",
        "udiv_ceil": "divi %a, %b unsigned rounding<positive_inf>",
        "urem": "remi %a, %b unsigned",
        "srem": "remi %a, %b signed",
        "sdiv": "divi %s, %b signed",
        "sdiv_ceil": "divi %s, %b signed rounding<positive_inf>",
        "sdiv_floor": "divi %s, %b signed rounding<negative_inf>",
    }
    run_ops(ops, 1, {"a": d_a, "b": d_b, "s": s_a}, (4,))


def test_i1_pairs_are_exhaustive() -> None:
    # The 16-element i1 kernel above covers the four pairs; check the oracle's reading of them.
    a = np.array([False, False, True, True], dtype=np.bool_)
    b = np.array([False, True, False, True], dtype=np.bool_)
    cpu = run_ops({"add": "addi %a, %b", "mul": "muli %a, %b", "slt": COMPARE["slt"], "ult": COMPARE["ult"]}, 1,
                  {"a": a, "b": b}, (4,))  # fmt: skip
    assert cpu[2].tolist() == [False, True, True, False]
    assert cpu[3].tolist() == [False, False, False, True]
    assert cpu[4].tolist() == [False, False, True, False]  # true (-1) < false (0)
    assert cpu[5].tolist() == [False, True, False, False]  # unsigned: 0 < 1


@pytest.mark.parametrize("w", WIDTHS)
def test_shift_amounts_at_and_beyond_the_width(w: int) -> None:
    """Amounts 0 .. w + 2 and huge (negative when read as signed) ones, on values with the
    sign bit set and clear: the interpreter's clamping rule (0, or the sign for signed shri)."""
    values = [1, -1, (1 << (w - 1)) - 1, -(1 << (w - 1)), 0x5A, -0x5A]
    amounts = list(range(w + 3)) + [-1, -w, (1 << (w - 1)) - 1, -(1 << (w - 1)), 255, 128]
    wrap = lambda v: ((v + (1 << (w - 1))) % (1 << w)) - (1 << (w - 1))  # noqa: E731
    a = np.array([wrap(v) for v in values for _ in amounts], dtype=NP_INT[w])
    b = np.array([wrap(s) for _ in values for s in amounts], dtype=NP_INT[w])
    n = 1
    while n < len(a):
        n *= 2
    a = np.concatenate([a, np.zeros(n - len(a), a.dtype)])
    b = np.concatenate([b, np.zeros(n - len(b), b.dtype)])
    shifts = {k: ARITH[k] for k in ("shl", "shr_u", "shr_s")}
    cpu = run_ops(shifts, w, {"a": a, "b": b}, (n,))
    m = (1 << w) - 1
    for i in range(len(values) * len(amounts)):
        x, s = int(a[i]), int(b[i]) & m
        assert int(cpu[2][i]) & m == (0 if s >= w else (x << s) & m)
        assert int(cpu[4][i]) == x >> min(s, w - 1)


@pytest.mark.parametrize("w", (8, 16))
def test_narrow_shifts_need_no_compare(w: int) -> None:
    """i8 and i16 shifts run on 32 bits with the amount clamped to 31 (ops_integer), which
    shifts every bit out (or the sign in) past the width by itself: no compare, no select
    (test above: the results)."""
    t = f"i{w}"
    ops = {k: ARITH[k] for k in ("shl", "shr_u", "shr_s")}
    body = [f"%{k}_r = {text} : tile<128x{t}>" for k, text in ops.items()]
    text = kernel_text([("a", t), ("b", t)], [(k, t) for k in ops], body, (128,))
    for k in compile_for(text, arches=("sm_80", "sm_90")):
        ptx = k.asm["ptx"]
        assert not re.search(r"\b(setp|selp)\.", ptx), k.target
        assert re.search(r"\bshl\.b32", ptx) and re.search(r"\bshr\.s32", ptx), k.target


def test_comparison_results_of_different_operand_types_combine() -> None:
    """cat and select of broadcast cmpi (signed, unsigned, other widths) and cmpf results:
    Triton 3.6's interpreter typed each result as its operands (a broadcast then held uint32,
    int16 or float32 data) and failed to join them. Found by tests/lower/fuzz.py."""
    n = 4
    t1, tn, t2n, t4n = (tile_type(s, "i1") for s in ((1,), (n,), (2 * n,), (4 * n,)))
    body = [
        "%u0 = cmpi less_than %a, %b, unsigned : tile<i32> -> tile<i1>",
        "%s0 = cmpi greater_than %c, %d, signed : tile<i16> -> tile<i1>",
        "%f0 = cmpf less_than unordered %x, %y : tile<f32> -> tile<i1>",
    ]
    for v in ("u", "s", "f"):
        body += [f"%{v}1 = reshape %{v}0 : tile<i1> -> {t1}", f"%{v} = broadcast %{v}1 : {t1} -> {tn}"]
    body += [
        f"%us = cat %u, %s dim = 0 : {tn}, {tn} -> {t2n}",
        f"%sf = cat %s, %f dim = 0 : {tn}, {tn} -> {t2n}",
        f"%cat_r = cat %us, %sf dim = 0 : {t2n}, {t2n} -> {t4n}",
        f"%sel_r = select %f, %u, %s : {tn}, {tn}",
    ]
    scalars = [("a", "i32"), ("b", "i32"), ("c", "i16"), ("d", "i16"), ("x", "f32"), ("y", "f32")]
    text = kernel_text([], [("cat", "i1"), ("sel", "i1")], body, (n,), out_shapes={"cat": (4 * n,)}, scalars=scalars)
    for a, b, c, d, x, y in [(-1, 2, 3, -4, 1.0, 2.0), (1, -2, -3, 4, float("nan"), 0.0), (5, 5, 0, 0, 2.0, 1.0)]:
        u, sg, f = (a % 2**32) < (b % 2**32), c > d, not x >= y
        cpu, _ = run_both(text, "k", 1, [a, b, c, d, x, y, np.zeros(4 * n, np.bool_), np.zeros(n, np.bool_)])
        assert cpu[6].tolist() == [u] * n + [sg] * 2 * n + [f] * n
        assert cpu[7].tolist() == [u if f else sg] * n


def test_division_rounding_signs() -> None:
    """Every sign combination with exact and inexact quotients, in each rounding mode."""
    xs = [7, -7, 6, -6, 1, -1, 0, 127, -128, -127]
    ys = [2, -2, 3, -3, 1, -1, 7, -7, 127, -128]
    pairs = [(x, y) for x in xs for y in ys if not (x == -128 and y == -1)]
    n = 128
    a = np.array([p[0] for p in pairs] + [0] * (n - len(pairs)), dtype=np.int8)
    d = np.array([p[1] for p in pairs] + [1] * (n - len(pairs)), dtype=np.int8)
    cpu = run_ops(DIVISION, 8, {"a": a, "d": d, "r": d}, (n,))
    outs = dict(zip(DIVISION, cpu[3:], strict=True))
    for i, (x, y) in enumerate(pairs):
        assert int(outs["sdiv_floor"][i]) == x // y
        assert int(outs["sdiv_ceil"][i]) == -((-x) // y)
        assert int(outs["sdiv"][i]) == int(x / y)


def test_overflow_flags_are_promises() -> None:
    """A flag changes nothing in the generated code (wrapping is a correct reading of a
    promise); on inputs that keep the promise both backends agree."""
    ops = {
        "add": "addi %a, %b overflow<no_signed_wrap>",
        "sub": "subi %a, %b overflow<no_wrap>",
        "mul": "muli %a, %b overflow<no_unsigned_wrap>",
        "shl": "shli %a, %b overflow<no_wrap>",
        "neg": "negi %a overflow<no_signed_wrap>",
    }
    a = np.arange(1, 17, dtype=np.int32)
    b = np.arange(0, 16, dtype=np.int32) % 5
    run_ops(ops, 32, {"a": a, "b": b}, (16,))
    plain = {k: v.split(" overflow")[0] for k, v in ops.items()}
    strip = lambda s: "\n".join(line.split("  #")[0] for line in s.splitlines())  # noqa: E731
    t = tile_type((16,), "i32")
    body = [f"%{k}_r = {v} : {t}" for k, v in ops.items()]
    body_plain = [f"%{k}_r = {v} : {t}" for k, v in plain.items()]
    ins, outs = [("a", "i32"), ("b", "i32")], [(k, "i32") for k in ops]
    assert strip(source_of(kernel_text(ins, outs, body, (16,)))) == strip(
        source_of(kernel_text(ins, outs, body_plain, (16,)))
    )


def family_kernel(ops: dict[str, str], widths: tuple[int, ...], n: int = 128) -> str:
    """`ops` at each of `widths` in one kernel (inputs %a<w>, %b<w>, %d<w>, %r<w>)."""
    ins, outs, body = [], [], []
    for w in widths:
        t = tile_type((n,), f"i{w}")
        ins += [(f"{x}{w}", f"i{w}") for x in ("a", "b", "d", "r")]
        for name, text in ops.items():
            for x in ("a", "b", "d", "r"):
                text = text.replace(f"%{x}", f"%{x}{w}")
            cmp = text.startswith("cmpi")
            body.append(f"%{name}{w}_r = {text} : {t}" + (f" -> {tile_type((n,), 'i1')}" if cmp else ""))
            outs.append((f"{name}{w}", "i1" if cmp else f"i{w}"))
    return kernel_text(ins, outs, body, (n,))


@pytest.mark.parametrize(
    ("ops", "widths", "instructions"),
    [
        (
            {**ARITH, **COMPARE},
            (64,),
            # (abs.s64 is Triton 3.6's LLVM's choice; 3.9's negates and selects)
            ["mul.hi.u64", "shl.b64", "shr.s64", "shr.u64", "min.u64", "max.s64", "setp.lt.u64"]
            + (["abs.s64"] if triton_version() < (3, 9) else []),
        ),
        (DIVISION, (32, 16), ["div.s32", "div.u32", "rem.s32"]),
        ({**ARITH, **COMPARE, **DIVISION}, (1,), []),
    ],
    ids=["arith", "division", "i1"],
)
def test_family_compiles_for_every_target(
    ops: dict[str, str], widths: tuple[int, ...], instructions: list[str]
) -> None:
    """A kernel per op family for sm_80, sm_90 and sm_100, with the instructions expected."""
    for k in compile_for(family_kernel(ops, widths), "k"):
        ptx = k.asm["ptx"]
        missing = [i for i in instructions if i not in ptx]
        assert missing == [], f"{k.target}: {missing}"
        assert k.spills == 0


@pytest.mark.parametrize("w", (8, 16, 32))
def test_every_width_compiles(w: int) -> None:
    """Every op at the widths the family kernels leave out (sm_90 only: the integer code does
    not depend on the target)."""
    (k,) = compile_for(family_kernel(ALL_OPS, (w,)), "k", arches=("sm_90",))
    if w == 32:
        assert "mul.hi.u32" in k.asm["ptx"]


def test_mulhi_source_uses_unsigned_operands() -> None:
    # Triton 3.6's interpreter sign-extends signed umulhi operands: the lowering never gives it any.
    t = tile_type((16,), "i64")
    text = kernel_text([("a", "i64"), ("b", "i64")], [("h", "i64")], [f"%h_r = mulhii %a, %b : {t}"], (16,))
    src = source_of(text)
    assert "tl.umulhi(a.to(tl.uint64, bitcast=True), b.to(tl.uint64, bitcast=True))" in src
