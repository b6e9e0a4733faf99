"""`reduce` and `scan` through the lowering, against the CPU interpreter.

Bitwise equal: integer bodies, float max/min, every body that is not a single
commutative op (reduced by the written-out pairwise tree, the interpreter's own order:
argmax, a non-commutative composition of affine maps, float bodies of two operands), the
identity step (signed zeros), sequential float scans under Triton's interpreter. The
affine maps also pin the argument order of scans, reverse ones included. Single-op float
sums and products (tl.reduce): within the reassociation bound of compiler/lower/
ops_reduce.py, |triton - cpu| <= 2 (n - 1) u sum|x| on a GPU, bitwise under Triton's
interpreter (the generated source folds there by the CPU interpreter's pairwise tree). That
interpreter runs a scan's combiner once per element in Python, so tiles stay at a few
thousand elements.

On tileiras (NVIDIA's compiler, on a GPU) `on_tileiras` checks replace the bitwise comparison
where the op docs leave the result open (cuda-tile Ops.td, `reduce`): "There are no guarantees
on the order of element reduction", so a body that is not commutative (argmax's ties, the
affine maps) or not associative in floats may give another of its orders' results; and the
identity "might be" the accumulator ("The correct identity value is a property of the
reduction function"), so one that is not neutral for the body (5 or 7 for addi, 0 for
`e + a + 3`, +0.0 for addf over -0.0, +inf for minf over NaNs) may be folded in any number
of times, none included. The interpreter and the triton backend fold it in once; tileiras
13.5 left it out where that showed (r3, the sums with 5 and with `e + a + 3`, zp, minf over
NaNs; not maxf over NaNs). What stays defined is asserted exactly; without a GPU
each check is shown to accept the oracle's result and the other allowed ones, and to reject a
changed one (run_checked)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from tests.corpus import REPO

from .harness import (
    ON_GPU,
    assert_same,
    compile_for,
    run_both,
    source_of,
)
from .test_shape import _io_args, io_kernel, run_io, run_io_pair, tile

RNG = np.random.default_rng(7)

Outputs = list[np.ndarray]
Check = Callable[[Outputs, Outputs], None]
Change = Callable[[Outputs], None]


def run_checked(
    inputs,
    outputs,
    body: str,
    values: list[np.ndarray],
    on_tileiras: Check,
    *,
    on_gpu: Check | None = None,
    passes: Sequence[Change] = (),
    fails: Sequence[Change] = (),
) -> tuple[Outputs, Outputs]:
    """run_io with an `on_tileiras` check (and `on_gpu`), both taking (CPU outputs, GPU outputs)
    shaped as declared; the inputs must come back unchanged. Returns (the CPU interpreter's
    outputs, the last backend's). Without a GPU the check is tried on the oracle's outputs:
    it must accept them as they are and after each change in `passes` (results the spec also
    allows), and reject them after each change in `fails` (each change edits the outputs in
    place)."""
    ins, outs = _io_args(inputs, outputs, values)
    n = len(ins)

    def shaped(args: list) -> Outputs:
        return [np.asarray(a).reshape(shape) for a, (_, shape, _) in zip(args[n:], outputs, strict=True)]

    def on_outputs(check: Check | None) -> Callable[[list, list], None] | None:
        if check is None:
            return None

        def flat(cpu: list, gpu: list) -> None:
            for i in range(n):
                assert_same(cpu[i], gpu[i], what=f"input {i}", name="gpu")
            check(shaped(cpu), shaped(gpu))

        return flat

    text = io_kernel(inputs, outputs, body)
    cpu, tri = run_both(text, "k", 1, [*ins, *outs], on_gpu=on_outputs(on_gpu), on_tileiras=on_outputs(on_tileiras))
    if not ON_GPU:
        on_tileiras(shaped(cpu), shaped(cpu))
        for change, allowed in [(c, True) for c in passes] + [(c, False) for c in fails]:
            got = [a.copy() for a in shaped(cpu)]
            change(got)
            if allowed:
                on_tileiras(shaped(cpu), got)
            else:
                with pytest.raises(AssertionError):
                    on_tileiras(shaped(cpu), got)
    return shaped(cpu), shaped(tri)


def same(cpu: np.ndarray, gpu: np.ndarray, what: str) -> None:
    """Bitwise (NaN matches any NaN), as run_both compares."""
    assert_same(cpu, gpu, what=what, name="tileiras")


def identity_folds(base: np.ndarray, got: np.ndarray, step: int, at_least: int = 0) -> None:
    """`got` is `base` plus `step` a whole number of times, at least `at_least` (elementwise):
    an i32 body adding `step` per application (or per fold of a non-neutral identity), applied
    an open number of times."""
    diff = got.astype(np.int64) - base.astype(np.int64)
    assert np.all(diff % step == 0) and np.all(diff >= at_least * step), (base, got)


def reduce_op(x: str, shape, el: str, dim: int, body: str, identity: str, *, result: str = "r", op: str = "reduce",
              reverse: bool = False) -> str:  # fmt: skip
    out = shape if op == "scan" else tuple(s for d, s in enumerate(shape) if d != dim)
    rev = f" reverse={'true' if reverse else 'false'}" if op == "scan" else ""
    s = tile((), el)
    return f"""%{result} = {op} %{x} dim={dim}{rev} identities=[{identity}] : {tile(shape, el)} -> {tile(out, el)}
    (%e: {s}, %a: {s}) {{
    {body}
    }}"""


def binary_body(op: str, el: str, attrs: str = "") -> str:
    return f"%v = {op} %e, %a{attrs} : {tile((), el)}\nyield %v : {tile((), el)}"


def reduced(shape, dim):
    return tuple(s for d, s in enumerate(shape) if d != dim)


# -- integers: bitwise --------------------------------------------------------------------------------------


INT_CASES = [
    # (element, op, attrs, identity)
    ("i32", "addi", "", "0"),
    ("i8", "muli", "", "1"),
    ("i32", "maxi", " signed", "-2147483648"),
    ("i32", "mini", " signed", "2147483647"),
    ("i16", "maxi", " unsigned", "0"),
    ("i64", "mini", " unsigned", "-1"),
    ("i16", "andi", "", "-1"),
    ("i8", "ori", "", "0"),
    ("i64", "xori", "", "0"),
    ("i64", "addi", "", "0"),
]


@pytest.mark.parametrize(("el", "op", "attrs", "identity"), INT_CASES)
def test_integer_reductions_every_dim(el, op, attrs, identity):
    shape = (4, 8, 16)
    info = np.iinfo({"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}[el])
    x = RNG.integers(info.min, info.max, size=shape, endpoint=True, dtype=info.dtype)
    x[0, 0, :4] = [info.min, info.max, 0, -1]
    body = "\n".join(
        reduce_op("x", shape, el, d, binary_body(op, el, attrs), f"{identity} : {el}", result=f"r{d}") for d in range(3)
    )
    outs = [(f"r{d}", reduced(shape, d), el) for d in range(3)]
    got = run_io([("x", shape, el)], outs, body, [x])
    ufunc = {"addi": np.add, "muli": np.multiply, "andi": np.bitwise_and, "ori": np.bitwise_or, "xori": np.bitwise_xor}
    for d, r in enumerate(got):
        if op in ufunc:
            expect = ufunc[op].reduce(x, axis=d, dtype=x.dtype)
        else:
            ux = x.view(f"u{x.itemsize}") if "unsigned" in attrs else x
            expect = (np.maximum if op == "maxi" else np.minimum).reduce(ux, axis=d).view(x.dtype)
        assert np.array_equal(r, expect), d


def test_reduce_sizes_one_and_zero_d_and_large():
    # A size-1 dimension (reduced and scanned), a rank-1 tile reduced to 0-d, a 4096-element reduction, i1 parity.
    x1 = RNG.integers(-100, 100, size=(1, 16), dtype=np.int32)
    x2 = RNG.integers(-(2**31), 2**31, size=(4096,), dtype=np.int64).astype(np.int32)
    b = RNG.integers(0, 2, size=(8, 4)).astype(np.bool_)
    body = "\n".join([
        reduce_op("x1", (1, 16), "i32", 0, binary_body("addi", "i32"), "0 : i32", result="r1"),
        reduce_op("x2", (4096,), "i32", 0, binary_body("addi", "i32"), "0 : i32", result="r2"),
        reduce_op("x3", (1,), "i32", 0, binary_body("addi", "i32"), "7 : i32", result="r3"),
        reduce_op("b", (8, 4), "i1", 1, binary_body("xori", "i1"), "false", result="rb"),
        reduce_op("x1", (1, 16), "i32", 0, binary_body("addi", "i32"), "3 : i32", result="s1", op="scan"),
    ])  # fmt: skip

    def tileiras(c: Outputs, g: Outputs) -> None:
        for k in (0, 1, 3):  # neutral identities (0 for addi, false for xori): defined
            same(c[k], g[k], f"output {k}")
        identity_folds(np.int32(5), g[2], 7)  # 7 is not neutral for addi: folded in j >= 0 times
        identity_folds(x1, g[4], 3)  # likewise 3, per element of the size-1 scan

    def add(k: int, v: int) -> Change:
        return lambda o: o[k].__iadd__(v)

    (r1, r2, r3, rb, s1), _ = run_checked(
        [("x1", (1, 16), "i32"), ("x2", (4096,), "i32"), ("x3", (1,), "i32"), ("b", (8, 4), "i1")],
        [("r1", (16,), "i32"), ("r2", (), "i32"), ("r3", (), "i32"), ("rb", (8,), "i1"), ("s1", (1, 16), "i32")],
        body,
        [x1, x2, np.array([5], np.int32), b],
        tileiras,
        passes=[add(2, -7), add(4, -3), add(2, 14)],  # the identity not folded in (tileiras'), or twice
        fails=[add(2, 1), add(2, -14), add(4, 1), add(0, 1), add(1, 1), lambda o: o[3].__ixor__(True)],
    )
    assert np.array_equal(s1, x1 + 3)  # a scan along a dimension of 1: f(x, identity)
    assert np.array_equal(r1, x1[0])
    assert int(r2) == np.add.reduce(x2, dtype=np.int32)
    assert int(r3) == 12  # the interpreter folds the identity (not a neutral one here) in once
    assert np.array_equal(rb, np.bitwise_xor.reduce(b, axis=1))


def test_identity_folded_in_once_with_a_general_body():
    # 5 is not neutral for addi: it shows the identity step; the body is not a single op.
    x = np.arange(16, dtype=np.int32).reshape(2, 8)
    body = "%s = addi %e, %a : tile<i32>\n%u = negi %e : tile<i32>\nyield %s : tile<i32>"
    sums = x.sum(axis=1, dtype=np.int32)
    (r,), _ = run_checked(
        [("x", (2, 8), "i32")], [("r", (2,), "i32")], reduce_op("x", (2, 8), "i32", 1, body, "5 : i32"), [x],
        lambda c, g: identity_folds(sums, g[0], 5),  # tileiras: the sums alone (folded in 0 times)
        passes=[lambda o: o[0].__isub__(5)], fails=[lambda o: o[0].__iadd__(1), lambda o: o[0].__isub__(10)],
    )  # fmt: skip
    assert np.array_equal(r, sums + 5)  # the interpreter: folded in once


# -- order: a non-commutative body --------------------------------------------------------------------------

# Composition of affine maps x -> m*x + c (i32, wrapping): associative, not commutative.
# f(newer, older) = newer o older: (m_n m_o, m_n c_o + c_n). The fold applies the maps in
# index order (reverse scans: from the highest index down). The block arguments come in
# each op's order: reduce (element, accumulator) pairs, scan (accumulator, element) ones
# (cuda-tile Ops.td `scan`: result[j] = f(result[j-1], X[j]), example `(%acc, %elem)`; the
# order tileiras 13.5 binds, which its prose `[op_0_current_iter, op_0_prev_iter]` reverses).
AFFINE = """({args}) {{
      %mm{s} = muli %me{s}, %ma{s} : tile<i32>
      %t{s} = muli %me{s}, %ca{s} : tile<i32>
      %cc{s} = addi %t{s}, %ce{s} : tile<i32>
      yield %mm{s}, %cc{s} : tile<i32>, tile<i32>
    }}"""


def affine_op(op: str, shape, dim: int, suffix: str, reverse: bool = False, m: str = "m", c: str = "c") -> str:
    out = shape if op == "scan" else reduced(shape, dim)
    rev = f" reverse={'true' if reverse else 'false'}" if op == "scan" else ""
    t_in, t_out = tile(shape, "i32"), tile(out, "i32")
    pairs = [("me", "ma"), ("ce", "ca")] if op == "reduce" else [("ma", "me"), ("ca", "ce")]
    args = ", ".join(f"%{a}{suffix}: tile<i32>" for pair in pairs for a in pair)
    return (
        f"%m{suffix}, %c{suffix} = {op} %{m}, %{c} dim={dim}{rev} identities=[1 : i32, 0 : i32] : {t_in}, {t_in} -> "
        f"{t_out}, {t_out}\n{AFFINE.format(s=suffix, args=args)}"
    )


def compose(ms, cs):
    m, c = 1, 0
    for mi, ci in zip(ms, cs, strict=True):  # apply in order: x -> mi * (m x + c) + ci
        m, c = (mi * m) & 0xFFFFFFFF, (mi * c + ci) & 0xFFFFFFFF
    return m, c


def compositions(ms: np.ndarray, cs: np.ndarray) -> set[int]:
    """The c of compose(ms[p], cs[p]) for every permutation p: the results a reduce in any
    order of its elements can give (the identity (1, 0) is neutral for composition)."""
    perms = np.array(list(itertools.permutations(range(len(ms)))))
    mu, cu = ms.astype(np.int64).astype(np.uint64), cs.astype(np.int64).astype(np.uint64)
    m, c = np.ones(len(perms), np.uint64), np.zeros(len(perms), np.uint64)
    for j in range(len(ms)):  # uint64 wraps modulo 2**64, which keeps the value modulo 2**32
        mj, cj = mu[perms[:, j]], cu[perms[:, j]]
        m, c = (mj * m) & np.uint64(0xFFFFFFFF), (mj * c + cj) & np.uint64(0xFFFFFFFF)
    return set(c.tolist())


def test_non_commutative_body_reduce_and_scans():
    shape = (4, 8)
    m = RNG.integers(-5, 6, size=shape, dtype=np.int32)
    c = RNG.integers(-50, 51, size=shape, dtype=np.int32)
    body = "\n".join([
        affine_op("reduce", shape, 1, "r"), affine_op("reduce", shape, 0, "q"),
        affine_op("scan", shape, 1, "s"), affine_op("scan", shape, 1, "v", reverse=True),
    ])  # fmt: skip
    outs = [("mr", (4,), "i32"), ("cr", (4,), "i32"), ("mq", (8,), "i32"), ("cq", (8,), "i32"),
            ("ms", shape, "i32"), ("cs", shape, "i32"), ("mv", shape, "i32"), ("cv", shape, "i32")]  # fmt: skip
    rows = [compositions(m[i], c[i]) for i in range(4)]
    cols = [compositions(m[:, j], c[:, j]) for j in range(8)]

    def tileiras(cpu: Outputs, g: Outputs) -> None:
        # A reduce's order is open: its c is the composition in some order of the elements (the
        # m, a commutative product, is not). A scan folds each prefix in index order (Ops.td,
        # `scan`: result[j] = f(result[j-1], X[j]), regrouped only; the accumulator the body's
        # first argument, as tileiras binds it): all of it bitwise.
        for k in (0, 2, 4, 5, 6, 7):
            same(cpu[k], g[k], outs[k][0])
        assert all(int(v) & 0xFFFFFFFF in rows[i] for i, v in enumerate(g[1])), g[1]
        assert all(int(v) & 0xFFFFFFFF in cols[j] for j, v in enumerate(g[3])), g[3]

    def backwards(o: Outputs) -> None:  # the elements in the opposite order: allowed
        o[1][:] = [np.uint32(compose(m[i, ::-1].tolist(), c[i, ::-1].tolist())[1]).view(np.int32) for i in range(4)]

    (mr, cr, mq, cq, ms, cs, mv, cv), _ = run_checked(
        [("m", shape, "i32"), ("c", shape, "i32")], outs, body, [m, c], tileiras, passes=[backwards],
        fails=[lambda o: o[1].__iadd__(1), lambda o: o[3].__iadd__(1), lambda o: o[0].__iadd__(1),
               lambda o: o[5].__iadd__(1), lambda o: o[7].__iadd__(1)],
    )  # fmt: skip
    u = np.uint32
    for i in range(4):
        assert (u(mr[i]), u(cr[i])) == compose(m[i].tolist(), c[i].tolist())
        for j in range(8):
            assert (u(ms[i, j]), u(cs[i, j])) == compose(m[i, : j + 1].tolist(), c[i, : j + 1].tolist())
            assert (u(mv[i, j]), u(cv[i, j])) == compose(m[i, j:][::-1].tolist(), c[i, j:][::-1].tolist())
    for j in range(8):
        assert (u(mq[j]), u(cq[j])) == compose(m[:, j].tolist(), c[:, j].tolist())


def test_argmax_two_operands_keeps_the_first_index():
    shape = (8, 16)
    x = RNG.integers(-3, 4, size=shape, dtype=np.int32)  # many ties
    idx = np.broadcast_to(np.arange(16, dtype=np.int32), shape).copy()
    body = """%rv, %ri = reduce %x, %i dim=1 identities=[-2147483648 : i32, -1 : i32]
        : tile<8x16xi32>, tile<8x16xi32> -> tile<8xi32>, tile<8xi32>
    (%ve: tile<i32>, %va: tile<i32>, %ie: tile<i32>, %ia: tile<i32>) {
      %c = cmpi greater_than %ve, %va, signed : tile<i32> -> tile<i1>
      %v2 = select %c, %ve, %va : tile<i1>, tile<i32>
      %i2 = select %c, %ie, %ia : tile<i1>, tile<i32>
      yield %v2, %i2 : tile<i32>, tile<i32>
    }"""

    def tileiras(c: Outputs, g: Outputs) -> None:
        # The maxima are defined; which of the tied indices comes out depends on the open order.
        same(c[0], g[0], "rv")
        assert np.all((0 <= g[1]) & (g[1] < 16)), g[1]
        assert np.array_equal(x[np.arange(8), np.clip(g[1], 0, 15)], c[0]), g[1]

    last = 15 - x[:, ::-1].argmax(axis=1)  # the last of the tied indices: allowed
    not_max = x.argmin(axis=1)
    assert np.all(x[np.arange(8), not_max] < x.max(axis=1))  # the rejected change does change a maximum

    def set_ri(v: np.ndarray) -> Change:
        return lambda o: o[1].__setitem__(slice(None), v)

    (rv, ri), _ = run_checked(
        [("x", shape, "i32"), ("i", shape, "i32")], [("rv", (8,), "i32"), ("ri", (8,), "i32")], body, [x, idx],
        tileiras, passes=[set_ri(last)], fails=[set_ri(not_max), lambda o: o[0].__iadd__(1)],
    )  # fmt: skip
    assert np.array_equal(rv, x.max(axis=1))
    assert np.array_equal(ri, x.argmax(axis=1))


def outside_values_body(op: str, n: int) -> str:
    """A `reduce` (or reverse `scan`) along dimension 1 of two copies of %x (4 x n i32) whose
    body uses a splat constant (written again inside the combine function) and a value
    computed outside (carried along as an extra operand): results (e + a + 3, max(e, a, 6))."""
    tile, out = f"tile<4x{n}xi32>", "tile<4xi32>" if op == "reduce" else f"tile<4x{n}xi32>"
    # (A reduce's block arguments pair (element, accumulator), a scan's (accumulator, element).)
    args = "%e: tile<i32>, %a: tile<i32>, %e2: tile<i32>, %a2: tile<i32>"
    if op == "scan":
        args = "%a: tile<i32>, %e: tile<i32>, %a2: tile<i32>, %e2: tile<i32>"
    reverse = " reverse=true" if op == "scan" else ""
    return f"""%k = constant <i32: 3> : tile<i32>
    %bias = addi %k, %k : tile<i32>
    %r, %s = {op} %x, %x dim=1{reverse} identities=[0 : i32, 0 : i32] : {tile}, {tile} -> {out}, {out}
    ({args}) {{
      %t = addi %e, %a : tile<i32>
      %u = addi %t, %k : tile<i32>
      %w = maxi %e2, %a2 signed : tile<i32>
      %w2 = maxi %w, %bias signed : tile<i32>
      yield %u, %w2 : tile<i32>, tile<i32>
    }}"""


def test_body_using_values_from_outside():
    x = RNG.integers(-1000, 1000, size=(4, 8), dtype=np.int32)
    body = outside_values_body("reduce", 8)
    sums = x.sum(axis=1, dtype=np.int32)

    def tileiras(c: Outputs, g: Outputs) -> None:
        # f(e, a) = e + a + 3 runs at least the 7 times that merge 8 elements, once more per
        # fold of the identity 0 (not neutral for f): open. max(e, a, 6) is the same either way.
        identity_folds(sums, g[0], 3, at_least=7)
        same(c[1], g[1], "s")

    (r, s), _ = run_checked(
        [("x", (4, 8), "i32")], [("r", (4,), "i32"), ("s", (4,), "i32")], body, [x], tileiras,
        passes=[lambda o: o[0].__isub__(3)],  # the identity not folded in (tileiras')
        fails=[lambda o: o[0].__iadd__(1), lambda o: o[0].__isub__(6), lambda o: o[1].__iadd__(1)],
    )  # fmt: skip
    # The interpreter: f runs 8 times per row, 7 combines and the identity step.
    assert np.array_equal(r, sums + 8 * 3)
    assert np.array_equal(s, np.maximum(x.max(axis=1), 6))


def test_general_float_body_follows_the_interpreters_tree():
    # A two-operand body is reduced by the written-out pairwise tree: the CPU interpreter's
    # order, so even float sums and products agree bitwise.
    x = (RNG.standard_normal((4, 256)) * 100).astype(np.float32)
    y = (1 + 0.01 * RNG.standard_normal((4, 256))).astype(np.float32)
    body = """%s, %p = reduce %x, %y dim=1 identities=[0.000000e+00 : f32, 1.000000e+00 : f32]
        : tile<4x256xf32>, tile<4x256xf32> -> tile<4xf32>, tile<4xf32>
    (%xe: tile<f32>, %xa: tile<f32>, %ye: tile<f32>, %ya: tile<f32>) {
      %s2 = addf %xe, %xa : tile<f32>
      %p2 = mulf %ye, %ya : tile<f32>
      yield %s2, %p2 : tile<f32>, tile<f32>
    }"""
    n, u = 256, 2.0**-24
    mag = np.abs(x.astype(np.float64)).sum(axis=1)

    def tileiras(c: Outputs, g: Outputs) -> None:
        # Another order of the sum and the product: within the reassociation bounds of
        # test_float_sums_within_reassociation_bound (the identities 0.0 and 1.0 change no sum
        # or product of these nonzero values, folded in or not).
        assert np.all(np.abs(c[0].astype(np.float64) - g[0]) <= 2 * (n - 1) * u * mag), (c[0], g[0])
        assert np.all(np.abs(c[1].astype(np.float64) - g[1]) <= 2 * n * u * np.abs(c[1].astype(np.float64)))

    def numpy_order(o: Outputs) -> None:  # NumPy's own (pairwise) order: allowed
        o[0][:], o[1][:] = x.sum(axis=1), y.prod(axis=1)

    (s_, p_), _ = run_checked(
        [("x", (4, 256), "f32"), ("y", (4, 256), "f32")], [("s", (4,), "f32"), ("p", (4,), "f32")], body, [x, y],
        tileiras, passes=[numpy_order],
        fails=[lambda o: o[0].__iadd__(np.float32(4 * n * u) * mag.astype(np.float32)),
               lambda o: o[1].__imul__(np.float32(1 + 4 * n * u))],
    )  # fmt: skip
    assert np.allclose(s_, x.sum(axis=1, dtype=np.float64), rtol=1e-4, atol=1e-2)
    assert np.allclose(p_, y.prod(axis=1, dtype=np.float64), rtol=1e-4)


# -- integer scans -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("reverse", [False, True])
def test_integer_scans(reverse):
    shape = (4, 64)
    x = RNG.integers(-(2**31), 2**31, size=shape, dtype=np.int64).astype(np.int32)
    y = RNG.integers(0, 2**16, size=(32,), dtype=np.int64).astype(np.uint16).view(np.int16)
    body = "\n".join([
        reduce_op("x", shape, "i32", 1, binary_body("addi", "i32"), "0 : i32", result="s1", op="scan", reverse=reverse),
        reduce_op("x", shape, "i32", 0, binary_body("maxi", "i32", " signed"), "-2147483648 : i32", result="s0",
                  op="scan", reverse=reverse),
        reduce_op("y", (32,), "i16", 0, binary_body("mini", "i16", " unsigned"), "-1 : i16", result="sy", op="scan",
                  reverse=reverse),
    ])  # fmt: skip
    s1, s0, sy = run_io([("x", shape, "i32"), ("y", (32,), "i16")],
                        [("s1", shape, "i32"), ("s0", shape, "i32"), ("sy", (32,), "i16")], body, [x, y])  # fmt: skip

    def scan(fn, a, axis):
        a = np.flip(a, axis) if reverse else a
        out = fn.accumulate(a, axis=axis, dtype=a.dtype)
        return np.flip(out, axis) if reverse else out

    assert np.array_equal(s1, scan(np.add, x, 1))
    assert np.array_equal(s0, scan(np.maximum, x, 0))
    assert np.array_equal(sy.view(np.uint16), scan(np.minimum, y.view(np.uint16), 0))


# -- floats ---------------------------------------------------------------------------------------------


def test_float_max_min_nan_and_signed_zeros():
    x = RNG.standard_normal((8, 16)).astype(np.float32)
    x[0, :] = -0.0
    x[1, :] = 0.0
    x[1, 3] = -0.0
    x[2, 5] = np.nan
    x[3, :] = np.nan
    x[4, 7] = np.inf
    x[5, :] = -np.inf
    x[6, 2] = 1e-45  # a denormal
    body = "\n".join([
        reduce_op("x", (8, 16), "f32", 1, binary_body("maxf", "f32"), "0xFF800000 : f32", result="mx"),
        reduce_op("x", (8, 16), "f32", 1, binary_body("minf", "f32"), "0x7F800000 : f32", result="mn"),
        reduce_op("x", (8, 16), "f32", 1, binary_body("maxf", "f32", " propagate_nan"), "0xFF800000 : f32",
                  result="mp"),
    ])  # fmt: skip
    all_nan = np.isnan(x).all(axis=1)  # row 3
    assert all_nan.sum() == 1

    def tileiras(c: Outputs, g: Outputs) -> None:
        # Over a row of NaNs maxf/minf give NaN, unless the identity (-inf, +inf) takes part:
        # then the identity, as a number, wins. Whether it is folded in is open: tileiras 13.5
        # gave -inf for maxf (as the interpreter) but NaN for minf. Every other element is defined.
        for k, ident in ((0, -np.inf), (1, np.inf)):
            same(c[k][~all_nan], g[k][~all_nan], ("mx", "mn")[k])
            v = g[k][all_nan]
            assert np.all(np.isnan(v) | (v.view(np.uint32) == np.float32(ident).view(np.uint32))), v
        same(c[2], g[2], "mp")

    def put(k: int, row: int, v: float) -> Change:
        return lambda o: o[k].__setitem__(row, v)

    (mx, mn, mp), _ = run_checked(
        [("x", (8, 16), "f32")], [("mx", (8,), "f32"), ("mn", (8,), "f32"), ("mp", (8,), "f32")], body, [x], tileiras,
        passes=[put(0, 3, np.nan), put(1, 3, np.nan)],
        fails=[put(1, 3, 0.0), put(0, 3, np.inf), put(0, 0, 0.0), put(1, 1, 0.0), put(2, 2, 1.0), put(2, 5, 0.0)],
    )  # fmt: skip
    # The interpreter folds the identity -inf in (as a number, it wins against NaN without propagate_nan).
    assert np.array_equal(mx, np.fmax(np.fmax.reduce(x, axis=1), -np.inf))
    assert np.signbit(mx[0]) and not np.signbit(mx[1])  # max(-0, -0) = -0; max(+0, -0) = +0
    assert mx[3] == -np.inf and not np.isnan(mx[2])
    assert np.isnan(mp[2]) and np.isnan(mp[3])
    assert np.signbit(mn[1]) and mn[5] == -np.inf


def test_float_max_min_signaling_nans_lose():
    """Signaling NaNs lose against numbers as quiet ones do, in reductions and scans: the
    interpreter's NumPy fmax.reduce took one for the result so far and dropped what came
    before it (tests/lower/fuzz.py seed 8162, where a bitcast of integers made them)."""
    x = RNG.standard_normal((8, 64)).astype(np.float32)
    bits = x.view(np.uint32)
    bits[:, 20] = 0x7FA00000
    bits[3, 50] = 0xFF800001
    bits[5, :] = 0x7FA00000  # all NaN: the identity is the only number
    body = "\n".join([
        reduce_op("x", (8, 64), "f32", 1, binary_body("maxf", "f32"), "0xFF800000 : f32", result="mx"),
        reduce_op("x", (8, 64), "f32", 1, binary_body("minf", "f32"), "0x7F800000 : f32", result="mn"),
        reduce_op("x", (8, 64), "f32", 1, binary_body("maxf", "f32"), "0xFF800000 : f32", result="sc", op="scan"),
    ])  # fmt: skip
    numbers = np.where(np.isnan(x), -np.inf, x)

    def tileiras(c: Outputs, g: Outputs) -> None:
        # Row 5 holds only NaNs: the identity or NaN, as in test_float_max_min_nan_and_signed_zeros (on an
        # H200, tileiras 13.5 gave NaN for this minf, -inf for the maxf). The rest is defined.
        rest = np.arange(8) != 5
        for k, (name, ident) in enumerate((("mx", -np.inf), ("mn", np.inf))):
            same(c[k][rest], g[k][rest], name)
            assert np.isnan(g[k][5]) or g[k][5] == ident, g[k][5]
        same(c[2], g[2], "sc")

    (mx, mn, sc), _ = run_checked(
        [("x", (8, 64), "f32")], [("mx", (8,), "f32"), ("mn", (8,), "f32"), ("sc", (8, 64), "f32")], body, [x], tileiras
    )  # fmt: skip
    np.testing.assert_array_equal(mx, numbers.max(axis=1))
    np.testing.assert_array_equal(mn, np.where(np.isnan(x), np.inf, x).min(axis=1))
    np.testing.assert_array_equal(sc, np.maximum.accumulate(numbers, axis=1))


def test_float_sums_within_reassociation_bound():
    n = 1024
    x = RNG.standard_normal((2, n)).astype(np.float32) * np.float32(1000)
    x[1, ::3] *= -1
    p = (1 + 0.01 * RNG.standard_normal((2, n))).astype(np.float32)
    h = (RNG.standard_normal((4, 64)) * 4).astype(np.float16)
    body = "\n".join([
        reduce_op("x", (2, n), "f32", 1, binary_body("addf", "f32"), "0.000000e+00 : f32", result="s"),
        reduce_op("p", (2, n), "f32", 1, binary_body("mulf", "f32"), "1.000000e+00 : f32", result="pr"),
        reduce_op("h", (4, 64), "f16", 1, binary_body("addf", "f16"), "0.000000e+00 : f16", result="sh"),
    ])  # fmt: skip
    cpu, tri = run_io_pair([("x", (2, n), "f32"), ("p", (2, n), "f32"), ("h", (4, 64), "f16")],
                           [("s", (2,), "f32"), ("pr", (2,), "f32"), ("sh", (4,), "f16")], body, [x, p, h])  # fmt: skip
    mag = np.abs(x.astype(np.float64)).sum(axis=1)
    assert np.all(np.abs(cpu[0].astype(np.float64) - tri[0]) <= 2 * (n - 1) * 2.0**-24 * mag)
    # Products: each order is within about (n - 1) u of the exact product, relatively.
    assert np.all(np.abs(cpu[1].astype(np.float64) - tri[1]) <= 2 * n * 2.0**-24 * np.abs(cpu[1]))
    mag_h = np.abs(h.astype(np.float64)).sum(axis=1)
    assert np.all(np.abs(cpu[2].astype(np.float64) - tri[2].astype(np.float64)) <= 2 * 63 * 2.0**-11 * mag_h)
    if not ON_GPU:  # Triton's interpreter folds by the CPU interpreter's pairwise tree (compiler/lower/fold.py)
        for c, t in zip(cpu, tri, strict=True):
            np.testing.assert_array_equal(c.view(f"u{c.itemsize}"), t.view(f"u{t.itemsize}"))


def test_scans_take_the_cpu_interpreters_steps_under_tritons_interpreter():
    """Triton's interpreter calls a tl.associative_scan's combiner once per element (a
    second for a 4x1024 tile); the generated source scans there in the CPU interpreter's
    Hillis-Steele steps instead (ops_reduce._scan), so such tiles take a fraction of a second
    and equal it bitwise: a signed maxi, a reverse (wrapping) addi, and an addf rounded toward
    zero, which the CPU interpreter scans by Hillis-Steele too (it accumulates only
    round-to-nearest addf/mulf sequentially, as Triton's interpreter then does); and a reverse
    scan of two operands whose body uses a value from outside."""
    x = RNG.integers(-(2**31), 2**31 - 1, (4, 1024), dtype=np.int32)
    f = (RNG.standard_normal((4, 256)) * 100).astype(np.float32)
    body = "\n".join([
        reduce_op("x", (4, 1024), "i32", 1, binary_body("maxi", "i32", " signed"), "-2147483648 : i32", result="m",
                  op="scan"),
        reduce_op("x", (4, 1024), "i32", 1, binary_body("addi", "i32"), "0 : i32", result="r", op="scan", reverse=True),
        reduce_op("f", (4, 256), "f32", 1, binary_body("addf", "f32", " rounding<zero>"), "0.000000e+00 : f32",
                  result="z", op="scan"),
    ])  # fmt: skip
    outs = [("m", (4, 1024), "i32"), ("r", (4, 1024), "i32"), ("z", (4, 256), "f32")]
    cpu, tri = run_io_pair([("x", (4, 1024), "i32"), ("f", (4, 256), "f32")], outs, body, [x, f])
    np.testing.assert_array_equal(cpu[0], np.maximum.accumulate(x, axis=1))
    np.testing.assert_array_equal(cpu[1], np.flip(np.cumsum(np.flip(x, 1), 1, dtype=np.int32), 1))  # (wraps)
    for c, t in zip(cpu, tri, strict=True):
        np.testing.assert_array_equal(c.view(np.uint32), t.view(np.uint32))
    # Two operands and a value from outside (carried along), reversed: r[j] = x[j] + r[j + 1] + 3,
    # then the identity step adds 3 more; s = max(x[j:], 6).
    x = RNG.integers(-1000, 1000, size=(4, 64), dtype=np.int32)
    body = outside_values_body("scan", 64)
    cpu, tri = run_io_pair([("x", (4, 64), "i32")], [("r", (4, 64), "i32"), ("s", (4, 64), "i32")], body, [x])
    suffix = np.flip(np.cumsum(np.flip(x, 1), 1), 1)
    np.testing.assert_array_equal(cpu[0], suffix + 3 * (64 - np.arange(64)))
    np.testing.assert_array_equal(cpu[1], np.maximum(np.flip(np.maximum.accumulate(np.flip(x, 1), 1), 1), 6))
    for c, t in zip(cpu, tri, strict=True):
        np.testing.assert_array_equal(c, t)


def _scan_bound(x: np.ndarray, zero_sign_open: bool) -> Check:
    """The GPU side of test_float_sum_identity_signs_and_sequential_scans, on the outputs
    (zp, zm, cs, rs): the sums of signed zeros bitwise, the scans of x within the
    reassociation bound per prefix. With `zero_sign_open` (tileiras) zp, a sum of -0.0s with
    the identity +0.0, is a zero of either sign: +0.0 is not neutral for addf (-0 + +0 = +0)
    and Ops.td's `reduce` does not say whether the identity is folded in ("might be"); the
    neutral -0.0 of zm leaves no choice."""
    x64 = x.astype(np.float64)
    u = np.finfo(np.float32).eps / 2

    def check(cpu: Outputs, gpu: Outputs) -> None:
        if zero_sign_open:
            assert np.all(gpu[0] == 0), gpu[0]
        else:
            assert np.array_equal(cpu[0].view(np.uint32), gpu[0].view(np.uint32)), "zp"
        assert np.array_equal(cpu[1].view(np.uint32), gpu[1].view(np.uint32)), "zm"
        for k, prefix in ((2, np.cumsum(np.abs(x64), 1)), (3, np.flip(np.cumsum(np.flip(np.abs(x64), 1), 1), 1))):
            n = np.arange(1, 257) if k == 2 else np.arange(256, 0, -1)
            err = np.abs(cpu[k].astype(np.float64) - gpu[k].astype(np.float64))
            assert np.all(err <= 2 * (n - 1) * u * prefix), k

    return check


def test_float_sum_identity_signs_and_sequential_scans():
    z = np.full((2, 8), -0.0, np.float32)
    x = (RNG.standard_normal((4, 256)) * 100).astype(np.float32)
    body = "\n".join([
        reduce_op("z", (2, 8), "f32", 1, binary_body("addf", "f32"), "0.000000e+00 : f32", result="zp"),
        reduce_op("z", (2, 8), "f32", 1, binary_body("addf", "f32"), "-0.000000e+00 : f32", result="zm"),
        reduce_op("x", (4, 256), "f32", 1, binary_body("addf", "f32"), "0.000000e+00 : f32", result="cs", op="scan"),
        reduce_op("x", (4, 256), "f32", 1, binary_body("addf", "f32"), "0.000000e+00 : f32", result="rs", op="scan",
                  reverse=True),
    ])  # fmt: skip
    # Triton's interpreter scans sequentially, as the CPU interpreter's addf scan does: bitwise.
    # A GPU scans in a parallel order: within the reassociation bound 2 (n - 1) u sum|x| there.
    outs = [("zp", (2,), "f32"), ("zm", (2,), "f32"), ("cs", (4, 256), "f32"), ("rs", (4, 256), "f32")]
    (zp, zm, _, _), (_, _, cs, rs) = run_checked(
        [("z", (2, 8), "f32"), ("x", (4, 256), "f32")], outs, body, [z, x], _scan_bound(x, True),
        on_gpu=_scan_bound(x, False), passes=[lambda o: o[0].__imul__(-1)],  # -0.0: the identity left out
        fails=[lambda o: o[0].__setitem__(0, 1e-45), lambda o: o[1].__imul__(-1),
               lambda o: o[2].__setitem__((1, 200), o[2][1, 200] + 1)],
    )  # fmt: skip
    assert not np.signbit(zp).any() and np.signbit(zm).all()  # the interpreter folds the identity in once
    if not ON_GPU:  # the sequential order, as the interpreter's
        assert np.array_equal(cs, np.add.accumulate(x, axis=1, dtype=np.float32))
        assert np.array_equal(rs, np.flip(np.add.accumulate(np.flip(x, 1), axis=1, dtype=np.float32), 1))


# -- compiled -----------------------------------------------------------------------------------------------


def test_reduce_and_scan_compile_everywhere():
    shape = (8, 128)
    body = "\n".join([
        reduce_op("x", shape, "f32", 1, binary_body("addf", "f32"), "0.000000e+00 : f32", result="s"),
        reduce_op("x", shape, "f32", 0, binary_body("maxf", "f32"), "0xFF800000 : f32", result="m"),
        reduce_op("x", shape, "f32", 1, binary_body("addf", "f32"), "0.000000e+00 : f32", result="c", op="scan",
                  reverse=True),
        """%i = iota : tile<128xi32>
        %z = reshape %i : tile<128xi32> -> tile<1x128xi32>
        %zi = broadcast %z : tile<1x128xi32> -> tile<8x128xi32>""",
        affine_op("reduce", shape, 1, "r", m="zi", c="zi"),
        affine_op("scan", shape, 0, "q", m="zi", c="zi"),
    ])  # fmt: skip
    text = io_kernel([("x", shape, "f32")], [("s", (8,), "f32"), ("m", (128,), "f32"), ("c", shape, "f32"),
                                             ("mr", (8,), "i32"), ("cq", shape, "i32")], body)  # fmt: skip
    src = source_of(text)
    assert "tl.reduce(" in src and "tl.associative_scan(" in src and "reverse=True" in src
    for k in compile_for(text, "k"):
        assert k.spills == 0
        assert len(k.cubin) > 1000


def test_softmax_example_matches():
    # Row maxima (bitwise) and row sums (reassociated) of the example: the outputs agree
    # within the sum's reassociation bound (relative 2 (n - 1) u, all terms positive) plus
    # a few ulps for exp.
    from compiler.runtime import launch, load_module

    module = load_module((REPO / "examples" / "softmax.tileir").read_text())
    rows, cols = 3, 1000  # a partial block of rows and a partial tile of columns
    x = (RNG.standard_normal((rows, cols)) * 4).astype(np.float32)
    x[0, :5] = [-np.inf, 80.0, -80.0, 0.0, -0.0]
    outs = []
    for backend in ("cpu", "triton-interpret"):
        y = np.zeros_like(x)
        launch(module, None, 1, [x, rows, cols, cols, 1, y, rows, cols, cols, 1], backend=backend)
        outs.append(y)
    cpu, tri = outs
    assert np.all(np.abs(cpu - tri) <= (2 * 1023 + 4) * 2.0**-24 * np.abs(cpu))
    assert np.allclose(tri.sum(axis=1), 1.0, rtol=1e-5)


# A scan (with its identity folded in) of a tile from outside a `loop` that leaves by `break`:
# written as a two-element tl.reduce, the identity fold made Triton 3.6 fail in its
# RemoveLayoutConversions pass (an assertion in a DenseMap lookup). Found by tests/lower/fuzz.py.
SCAN_IN_BREAKING_LOOP = """cuda_tile.module @m {
  entry @k(%x: tile<ptr<f32>>, %o: tile<ptr<f32>>, %n: tile<i32>) {
    %xv = make_tensor_view %x, shape = [4, 64], strides = [64, 1] : tensor_view<4x64xf32, strides=[64,1]>
    %xp = make_partition_view %xv : partition_view<tile=(4x64), tensor_view<4x64xf32, strides=[64,1]>>
    %ov = make_tensor_view %o, shape = [4, 64], strides = [64, 1] : tensor_view<4x64xf32, strides=[64,1]>
    %op = make_partition_view %ov : partition_view<tile=(4x64), tensor_view<4x64xf32, strides=[64,1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %x0, %t0 = load_view_tko weak %xp[%c0, %c0] : partition_view<tile=(4x64), tensor_view<4x64xf32, strides=[64,1]>>, tile<i32>, tile<i32> -> tile<4x64xf32>, token
    %r = loop iter_values(%i = %c0, %acc = %x0) : tile<i32>, tile<4x64xf32> -> tile<4x64xf32> {
      %done = cmpi greater_than_or_equal %i, %n, signed : tile<i32> -> tile<i1>
      if %done {
        break %acc : tile<4x64xf32>
      }
      %s = scan %x0 dim=1 reverse=false identities=[0xff800000 : f32] : tile<4x64xf32> -> tile<4x64xf32>
        (%a: tile<f32>, %b: tile<f32>) {
          %m = maxf %a, %b : tile<f32>
          yield %m : tile<f32>
        }
      %i1 = addi %i, %c1 : tile<i32>
      continue %i1, %s : tile<i32>, tile<4x64xf32>
    }
    %t1 = store_view_tko weak %r, %op[%c0, %c0] : tile<4x64xf32>, partition_view<tile=(4x64), tensor_view<4x64xf32, strides=[64,1]>>, tile<i32>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


def test_scan_in_a_loop_that_breaks_compiles() -> None:
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    for n in (0, 2):
        cpu, _ = run_both(SCAN_IN_BREAKING_LOOP, "k", 1, [x, np.zeros((4, 64), np.float32), n])
        assert np.array_equal(cpu[1], np.maximum.accumulate(x, axis=1) if n else x)
    compile_for(SCAN_IN_BREAKING_LOOP, "k")


# A scan whose result (through trunci and permute) is both operands of an unsigned mmai, the
# scanned tile loaded through a transposed view with run-time extents and strides: Triton 3.6
# gave the 64x1 scan a layout its scan lowering cannot handle (an assertion in ScanOpToLLVM.cpp,
# "numScanBlocks * numParallelBlocks * ... == srcValues.size()"). Found by tests/lower/fuzz.py
# (this is its shrunk kernel). The lowering now scans such a tile without its dimensions of
# size 1 (a 1-D scan of 64), which compiles.
SCAN_INTO_MMAI = """cuda_tile.module @m {
  entry @k(%x2_ptr: tile<ptr<i16>>, %x2_e0: tile<i32>, %x2_e1: tile<i32>, %x2_s0: tile<i32>, %x2_s1: tile<i32>, %o2_raw: tile<ptr<i32>>) {
    %tok = make_token : token
    %zero = constant <i32: 0> : tile<i32>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %x2_e0_0 = assume bounded<0, ?>, %x2_e0 : tile<i32>
    %x2_e1_0 = assume bounded<0, ?>, %x2_e1 : tile<i32>
    %x2_s1_0 = assume bounded<0, ?>, %x2_s1 : tile<i32>
    %x2_tv = make_tensor_view %x2_ptr, shape = [%x2_e0_0, %x2_e1_0], strides = [%x2_s0, %x2_s1_0] : tile<i32> -> tensor_view<?x?xi16, strides=[?,?]>
    %x2_pv = make_partition_view %x2_tv : partition_view<tile=(64x1), tensor_view<?x?xi16, strides=[?,?]>, dim_map=[1, 0]>
    %o2_ptr = assume div_by<16>, %o2_raw : tile<ptr<i32>>
    %o2_tv = make_tensor_view %o2_ptr, shape = [93, 64], strides = [64, 1] : tensor_view<93x64xi32, strides=[64,1]>
    %o2_pv = make_partition_view %o2_tv : partition_view<tile=(64x64), tensor_view<93x64xi32, strides=[64,1]>>
    %x2, %x2_t = load_view_tko weak %x2_pv[%bx, %zero] token = %tok : partition_view<tile=(64x1), tensor_view<?x?xi16, strides=[?,?]>, dim_map=[1, 0]>, tile<i32>, tile<i32> -> tile<64x1xi16>, token
    %v2 = scan %x2 dim=0 reverse=true identities=[-32768 : i16] : tile<64x1xi16> -> tile<64x1xi16>
          (%e3: tile<i16>, %a4: tile<i16>) {
            %y5 = maxi %e3, %a4 signed : tile<i16>
            yield %y5 : tile<i16>
          }
    %v11 = permute %v2 [1, 0] : tile<64x1xi16> -> tile<1x64xi16>
    %v12 = trunci %v2 : tile<64x1xi16> -> tile<64x1xi8>
    %v13 = trunci %v11 : tile<1x64xi16> -> tile<1x64xi8>
    %c14 = constant <i32: 2> : tile<64x64xi32>
    %v15 = mmai %v12, %v13, %c14 unsigned unsigned : tile<64x1xi8>, tile<1x64xi8>, tile<64x64xi32>
    %c19 = constant <i32: -2147483648> : tile<64x64xi32>
    %o2_r = mini %v15, %c19 unsigned : tile<64x64xi32>
    %o2_st = store_view_tko weak %o2_r, %o2_pv[%bx, %zero] token = %tok : tile<64x64xi32>, partition_view<tile=(64x64), tensor_view<93x64xi32, strides=[64,1]>>, tile<i32>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


def test_a_scanned_column_feeding_mmai_operands_compiles() -> None:
    x = RNG.integers(-(2**15), 2**15, 64).astype(np.int16)
    out = np.zeros((93, 64), np.int32)
    cpu, _ = run_both(SCAN_INTO_MMAI, "k", 1, [x, 1, 64, 64, 1, out])
    s = np.maximum.accumulate(x[::-1])[::-1].astype(np.int8).view(np.uint8).astype(np.int64)
    assert np.array_equal(cpu[5][:64], (np.outer(s, s) + 2).astype(np.int32))
    assert "tl.associative_scan(tl.reshape(x2, (64,)" in source_of(SCAN_INTO_MMAI, "k")
    compile_for(SCAN_INTO_MMAI, "k")


# The same defect without a dimension of size 1 to drop: a 64x2 scan whose result is both
# operands of a K = 2 mmai (a chain of multiply-adds, ops_mma.small_k), whose result feeds the
# operands and the accumulator of an f4E2M1FN mmaf_scaled (sm_80's exact path). Triton 3.6
# asserted in ScanOpToLLVM.cpp as above for sm_80 while the mmai took the scan's columns out by
# masked sums (3.9 compiled it). Found by an aimed fuzz campaign (seed 110201 of --weight
# mma=10 --weight mma_scaled=5, --compile sm_80; shrunk by tests/lower/reduce.py --until
# compile-error). Since a computed operand's columns are taken apart by tl.split
# (2026-11-30), it compiles for every target, with no spills.
SCAN_INTO_SCALED_PRODUCTS = """cuda_tile.module @m {
  entry @k(%x0_ptr: tile<ptr<i8>>, %x0_e1: tile<i32>, %o0_raw: tile<ptr<f32>>, %o0_e0: tile<i32>) {
    %tok = make_token : token
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %x0_e1_0 = assume bounded<0, ?>, %x0_e1 : tile<i32>
    %x0_tv = make_tensor_view %x0_ptr, shape = [100, %x0_e1_0], strides = [2, 1] : tile<i32> -> tensor_view<100x?xi8, strides=[2,1]>
    %x0_pv = make_partition_view %x0_tv : partition_view<tile=(64x2), padding_value = zero, tensor_view<100x?xi8, strides=[2,1]>>
    %o0_ptr = assume div_by<16>, %o0_raw : tile<ptr<f32>>
    %o0_e0_0 = assume bounded<0, ?>, %o0_e0 : tile<i32>
    %o0_tv = make_tensor_view %o0_ptr, shape = [%o0_e0_0, 64], strides = [65, 1] : tile<i32> -> tensor_view<?x64xf32, strides=[65,1]>
    %o0_pv = make_gather_scatter_view %o0_tv : gather_scatter_view<tile=(64x64), tensor_view<?x64xf32, strides=[65,1]>, sparse_dim=0>
    %o0_ix_io = iota : tile<64xi32>
    %o0_ix_a = constant <i32: 33> : tile<64xi32>
    %o0_ix_c = constant <i32: 38> : tile<64xi32>
    %o0_ix_m = muli %o0_ix_io, %o0_ix_a : tile<64xi32>
    %o0_ix_s = addi %o0_ix_m, %o0_ix_c : tile<64xi32>
    %o0_ix_t = constant <i32: 63> : tile<64xi32>
    %o0_ix_w = andi %o0_ix_s, %o0_ix_t : tile<64xi32>
    %o0_ix_bt = constant <i32: 64> : tile<i32>
    %o0_ix_b0 = muli %bx, %o0_ix_bt : tile<i32>
    %o0_ix_b1 = reshape %o0_ix_b0 : tile<i32> -> tile<1xi32>
    %o0_ix_b = broadcast %o0_ix_b1 : tile<1xi32> -> tile<64xi32>
    %o0_ix = addi %o0_ix_w, %o0_ix_b : tile<64xi32>
    %o0_d1t = constant <i32: 64> : tile<i32>
    %o0_d1 = muli %by, %o0_d1t : tile<i32>
    %x0, %x0_t = load_view_tko weak %x0_pv[%bx, %by] token = %tok : partition_view<tile=(64x2), padding_value = zero, tensor_view<100x?xi8, strides=[2,1]>>, tile<i32>, tile<i32> -> tile<64x2xi8>, token
    %v44 = scan %x0 dim=0 reverse=false identities=[-128 : i8] : tile<64x2xi8> -> tile<64x2xi8>
          (%e45: tile<i8>, %a46: tile<i8>) {
            %y47 = maxi %e45, %a46 signed : tile<i8>
            yield %y47 : tile<i8>
          }
    %v68 = permute %v44 [1, 0] : tile<64x2xi8> -> tile<2x64xi8>
    %c69 = constant <i32: -4> : tile<64x64xi32>
    %v70 = mmai %v44, %v68, %c69 unsigned unsigned : tile<64x2xi8>, tile<2x64xi8>, tile<64x64xi32>
    %v128 = reshape %by : tile<i32> -> tile<1x1xi32>
    %v129 = broadcast %v128 : tile<1x1xi32> -> tile<64x64xi32>
    %v130 = xori %v70, %v129 : tile<64x64xi32>
    %c150 = constant <i32: 3> : tile<64x64xi32>
    %v149 = andi %v130, %c150 : tile<64x64xi32>
    %c152 = constant <i32: 1> : tile<64x64xi32>
    %v151 = subi %v149, %c152 : tile<64x64xi32>
    %v153 = itof %v151 signed : tile<64x64xi32> -> tile<64x64xf4E2M1FN>
    %c155 = constant <i32: 3> : tile<64x64xi32>
    %v154 = andi %v70, %c155 : tile<64x64xi32>
    %c157 = constant <i32: 1> : tile<64x64xi32>
    %v156 = subi %v154, %c157 : tile<64x64xi32>
    %v158 = itof %v156 signed : tile<64x64xi32> -> tile<64x64xf4E2M1FN>
    %c160 = constant <i32: 0> : tile<i32>
    %c161 = constant <i32: 2> : tile<i32>
    %v159 = extract %v130[%c160, %c161] : tile<64x64xi32> -> tile<64x4xi32>
    %c163 = constant <i32: 3> : tile<64x4xi32>
    %v162 = andi %v159, %c163 : tile<64x4xi32>
    %c165 = constant <i32: -1> : tile<64x4xi32>
    %v164 = subi %v162, %c165 : tile<64x4xi32>
    %v166 = itof %v164 signed : tile<64x4xi32> -> tile<64x4xf8E4M3FN>
    %c168 = constant <i32: 1> : tile<i32>
    %c169 = constant <i32: 0> : tile<i32>
    %v167 = extract %v70[%c168, %c169] : tile<64x64xi32> -> tile<4x64xi32>
    %c171 = constant <i32: 3> : tile<4x64xi32>
    %v170 = andi %v167, %c171 : tile<4x64xi32>
    %c173 = constant <i32: -1> : tile<4x64xi32>
    %v172 = subi %v170, %c173 : tile<4x64xi32>
    %v174 = itof %v172 signed : tile<4x64xi32> -> tile<4x64xf8E4M3FN>
    %c176 = constant <i32: 15> : tile<64x64xi32>
    %v175 = andi %v70, %c176 : tile<64x64xi32>
    %v177 = itof %v175 signed : tile<64x64xi32> -> tile<64x64xf32>
    %o0_r = mmaf_scaled %v153, %v158, %v177, %v166, %v174 : tile<64x64xf4E2M1FN>, tile<64x64xf4E2M1FN>, tile<64x64xf32>, tile<64x4xf8E4M3FN>, tile<4x64xf8E4M3FN>
    %o0_st = store_view_tko weak %o0_r, %o0_pv[%o0_ix, %o0_d1] token = %tok : tile<64x64xf32>, gather_scatter_view<tile=(64x64), tensor_view<?x64xf32, strides=[65,1]>, sparse_dim=0>, tile<64xi32>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


def test_a_scan_feeding_scaled_products_compiles() -> None:
    assert "tl.split(" in source_of(SCAN_INTO_SCALED_PRODUCTS, "k", "sm_80")
    assert all(k.cubin and k.spills == 0 for k in compile_for(SCAN_INTO_SCALED_PRODUCTS, "k"))
