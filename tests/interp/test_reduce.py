"""`reduce` and `scan` on the interpreter.

Expectations are computed independently: Python integers for wrap-around sums, float64
sums with the documented error bound for f32, explicit element-type loops for the
per-step rounding of f16/bf16, NumPy's argmax/cumsum/maximum for the rest. The module
docstring of compiler/interp/ops_reduce.py states the evaluation order these tests pin."""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest

from compiler.interp.ops_reduce import hillis_steele_scan, tree_reduce
from tests.interp.util import eval_kernel, kernel

RNG = np.random.default_rng(11)
BF16 = np.dtype(ml_dtypes.bfloat16)


def tile(shape: tuple[int, ...], element: str) -> str:
    return f"tile<{'x'.join(map(str, shape))}x{element}>" if shape else f"tile<{element}>"


def const(name: str, values: np.ndarray, element: str) -> str:
    data = np.ascontiguousarray(values).tobytes().hex().upper()
    return f'%{name} = constant <{element}: "0x{data}"> : {tile(values.shape, element)}'


def reduce_text(
    x: np.ndarray,
    element: str,
    dim: int,
    body: str,
    identity: str,
    *,
    op: str = "reduce",
    reverse: bool = False,
    names: tuple[str, str] = ("e", "a"),
) -> str:
    shape = x.shape
    out = shape if op == "scan" else tuple(s for d, s in enumerate(shape) if d != dim)
    rev = f" reverse={'true' if reverse else 'false'}" if op == "scan" else ""
    scalar = tile((), element)
    return kernel(f"""{const("x", x, element)}
    %r = {op} %x dim={dim}{rev} identities=[{identity}] : {tile(shape, element)} -> {tile(out, element)}
    (%{names[0]}: {scalar}, %{names[1]}: {scalar}) {{
    {body}
    }}""")


def run(x, element, dim, body, identity, **kw) -> np.ndarray:
    r = eval_kernel(reduce_text(x, element, dim, body, identity, **kw))["r"]
    assert r.shape[0] == 1  # a uniform input gives a uniform result
    return r[0]


ADDI = "%s = addi %e, %a : tile<i32>\nyield %s : tile<i32>"


# -- the evaluation-order helpers, with a non-commutative combiner --------------------------------


def _concat(newer: list[np.ndarray], older: list[np.ndarray]) -> list[np.ndarray]:
    return [np.char.add(older[0], newer[0])]


@pytest.mark.parametrize("n", list(range(1, 18)))
def test_tree_and_scan_keep_order_for_any_extent(n):
    letters = np.array([[chr(97 + i) for i in range(n)]] * 2, dtype="U32")
    (r,) = tree_reduce(_concat, [letters], axis=1)
    assert r.tolist() == ["".join(letters[0])] * 2
    (s,) = hillis_steele_scan(_concat, [letters], axis=1)
    assert s[0].tolist() == ["".join(letters[0][: j + 1]) for j in range(n)]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 16, 100])
def test_combiner_runs_log_n_times(n):
    calls = []

    def combine(newer, older):
        calls.append(1)
        return [newer[0] + older[0]]

    tree_reduce(combine, [np.ones((1, n))], axis=1)
    assert len(calls) == math.ceil(math.log2(n)) if n > 1 else not calls
    calls.clear()
    hillis_steele_scan(combine, [np.ones((1, n))], axis=1)
    assert len(calls) == (math.ceil(math.log2(n)) if n > 1 else 0)


# -- integer reductions (fast path): exact, wrapping ---------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_reduce_addi_wraps(dim):
    x = RNG.integers(2**30, 2**31 - 1, size=(4, 8, 16), dtype=np.int32)
    r = run(x, "i32", dim, ADDI, "0 : i32")
    py = x.astype(object).sum(axis=dim)
    expect = np.vectorize(lambda v: ((v + 2**31) % 2**32) - 2**31)(py).astype(np.int32)
    np.testing.assert_array_equal(r, expect)


def test_reduce_rank1_to_rank0():
    x = np.arange(1, 9, dtype=np.int32)
    r = run(x, "i32", 0, ADDI, "0 : i32")
    assert r.shape == () and int(r) == 36


def test_reduce_muli_i8_wraps():
    x = RNG.integers(-128, 128, size=(2, 16), dtype=np.int8)
    r = run(x, "i8", 1, "%s = muli %a, %e : tile<i8>\nyield %s : tile<i8>", "1 : i8")
    for row, got in zip(x, r):
        p = 1
        for v in row.tolist():
            p = (p * v) & 0xFF
        assert int(got) == (p - 256 if p >= 128 else p)


@pytest.mark.parametrize(
    ("op", "sign", "pick"),
    [("maxi", "signed", max), ("mini", "signed", min), ("maxi", "unsigned", max), ("mini", "unsigned", min)],
)
def test_reduce_max_min_signedness(op, sign, pick):
    x = RNG.integers(-(2**31), 2**31, size=(4, 8), dtype=np.int64).astype(np.int32)
    identity = {
        ("maxi", "signed"): "-2147483648",
        ("mini", "signed"): "2147483647",
        ("maxi", "unsigned"): "0",
        ("mini", "unsigned"): "-1",
    }[op, sign]
    r = run(x, "i32", 1, f"%s = {op} %e, %a {sign} : tile<i32>\nyield %s : tile<i32>", f"{identity} : i32")
    for row, got in zip(x.tolist(), r.tolist()):
        if sign == "unsigned":
            assert got & 0xFFFFFFFF == pick(v & 0xFFFFFFFF for v in row)
        else:
            assert got == pick(row)


@pytest.mark.parametrize(("op", "fn"), [("andi", np.bitwise_and), ("ori", np.bitwise_or), ("xori", np.bitwise_xor)])
def test_reduce_bitwise(op, fn):
    x = RNG.integers(-(2**15), 2**15, size=(8, 4), dtype=np.int16)
    identity = "-1" if op == "andi" else "0"
    r = run(x, "i16", 0, f"%s = {op} %e, %a : tile<i16>\nyield %s : tile<i16>", f"{identity} : i16")
    np.testing.assert_array_equal(r, fn.reduce(x, axis=0))


def test_reduce_i1_addi_is_parity():
    x = RNG.integers(0, 2, size=(4, 8)).astype(np.bool_)
    r = run(x, "i1", 1, "%s = addi %e, %a : tile<i1>\nyield %s : tile<i1>", "false")
    np.testing.assert_array_equal(r, x.sum(axis=1) % 2 == 1)


def test_identity_is_folded_in_once():
    # A sum with identity 5 is not a valid reduce, but it shows where the identity goes:
    # the fold f(x[n-1], ... f(x[0], identity)) uses it exactly once.
    x = np.arange(16, dtype=np.int32).reshape(2, 8)
    np.testing.assert_array_equal(run(x, "i32", 1, ADDI, "5 : i32"), x.sum(axis=1) + 5)
    body = "%s = addi %e, %a : tile<i32>\n%u = negi %e : tile<i32>\nyield %s : tile<i32>"  # not a fast path
    np.testing.assert_array_equal(run(x, "i32", 1, body, "5 : i32"), x.sum(axis=1) + 5)


# -- the general path (region run on whole arrays) -----------------------------------------------


def test_reduce_general_body_wraps():
    x = RNG.integers(-(2**31), 2**31, size=(4, 16), dtype=np.int64).astype(np.int32)
    body = """%s = addi %e, %a : tile<i32>
    %m = constant <i32: 2147483647> : tile<i32>
    %t = andi %s, %m : tile<i32>
    yield %t : tile<i32>"""
    r = run(x, "i32", 1, body, "0 : i32")
    expect = [sum(row) & 0x7FFFFFFF for row in x.astype(np.int64).tolist()]
    np.testing.assert_array_equal(r, expect)


def _argmax_text(x: np.ndarray, dim: int) -> str:
    shape = x.shape
    out = tuple(s for d, s in enumerate(shape) if d != dim)
    idx = np.broadcast_to(np.arange(shape[dim]).reshape([-1 if d == dim else 1 for d in range(x.ndim)]), shape)
    return kernel(f"""{const("v", x, "i32")}
    {const("i", np.ascontiguousarray(idx, dtype=np.int32), "i32")}
    %rv, %ri = reduce %v, %i dim={dim} identities=[-2147483648 : i32, -1 : i32]
        : {tile(shape, "i32")}, {tile(shape, "i32")} -> {tile(out, "i32")}, {tile(out, "i32")}
    (%ve: tile<i32>, %va: tile<i32>, %ie: tile<i32>, %ia: tile<i32>) {{
      %c = cmpi greater_than %ve, %va, signed : tile<i32> -> tile<i1>
      %v2 = select %c, %ve, %va : tile<i1>, tile<i32>
      %i2 = select %c, %ie, %ia : tile<i1>, tile<i32>
      yield %v2, %i2 : tile<i32>, tile<i32>
    }}""")


@pytest.mark.parametrize("dim", [0, 1])
def test_reduce_two_operands_argmax(dim):
    # Few distinct values: many ties, and the combiner keeps the older (lower) index.
    x = RNG.integers(-3, 4, size=(8, 16), dtype=np.int32)
    out = eval_kernel(_argmax_text(x, dim))
    np.testing.assert_array_equal(out["rv"][0], x.max(axis=dim))
    np.testing.assert_array_equal(out["ri"][0], x.argmax(axis=dim))


def test_reduce_per_block_values():
    body = """%bx, %by, %bz = get_tile_block_id : tile<i32>
    %v = reshape %bx : tile<i32> -> tile<1xi32>
    %b = broadcast %v : tile<1xi32> -> tile<8xi32>
    %io = iota : tile<8xi32>
    %x = muli %b, %io : tile<8xi32>
    %r = reduce %x dim=0 identities=[0 : i32] : tile<8xi32> -> tile<i32>
    (%e: tile<i32>, %a: tile<i32>) {
      %s = addi %e, %a : tile<i32>
      yield %s : tile<i32>
    }"""
    r = eval_kernel(kernel(body), grid_positions=[0, 1, 2, 3])["r"]
    np.testing.assert_array_equal(r, [0, 28, 56, 84])


# -- float reductions --------------------------------------------------------------------------------


ADDF = "%s = addf %e, %a : {t}\nyield %s : {t}"


@pytest.mark.parametrize("dim", [0, 1])
def test_reduce_addf_f32_within_bound(dim):
    x = RNG.standard_normal((16, 64)).astype(np.float32)
    r = run(x, "f32", dim, ADDF.format(t="tile<f32>"), "0.0 : f32")
    exact = x.astype(np.float64).sum(axis=dim)
    n = x.shape[dim]
    bound = math.ceil(math.log2(n)) * 2.0**-24 * np.abs(x.astype(np.float64)).sum(axis=dim)
    assert np.all(np.abs(r.astype(np.float64) - exact) <= bound)


def _pairwise(values: list, add) -> object:
    """The documented tree: adjacent pairs (x[2k+1] + x[2k]), odd tail carried."""
    while len(values) > 1:
        nxt = [add(values[i + 1], values[i]) for i in range(0, len(values) - 1, 2)]
        if len(values) % 2:
            nxt.append(values[-1])
        values = nxt
    return values[0]


@pytest.mark.parametrize(("element", "dtype"), [("f16", np.dtype(np.float16)), ("bf16", BF16)])
def test_reduce_addf_rounds_every_step_in_element_type(element, dtype):
    # Large and small terms: accumulating in f32 would give a different answer.
    x = np.concatenate([np.full(8, 2048.0), np.full(24, 1.0)]).astype(dtype)
    x = RNG.permutation(x).reshape(1, 32)
    r = run(x, element, 1, ADDF.format(t=f"tile<{element}>"), f"0.0 : {element}")

    def add(a, b):  # one correctly rounded operation in the element type
        return dtype.type(float(a) + float(b))

    expect = add(_pairwise(list(x[0]), add), dtype.type(0.0))
    assert r.tobytes() == np.array([expect], dtype=dtype).tobytes()


def test_reduce_addf_fast_path_matches_general_path_bitwise():
    x = (RNG.standard_normal((4, 128)) * 10.0 ** RNG.integers(-6, 6, (4, 128))).astype(np.float32)
    fast = run(x, "f32", 1, ADDF.format(t="tile<f32>"), "0.0 : f32")
    body = "%s = addf %e, %a : tile<f32>\n%u = bitcast %e : tile<f32> -> tile<i32>\nyield %s : tile<f32>"
    general = run(x, "f32", 1, body, "0.0 : f32")
    assert fast.tobytes() == general.tobytes()


def test_reduce_addf_negative_zeros_fold_with_identity():
    x = np.full((2, 4), -0.0, dtype=np.float32)
    r = run(x, "f32", 1, ADDF.format(t="tile<f32>"), "0.0 : f32")
    assert not np.signbit(r).any()  # -0 + ... + (+0 identity) = +0
    r = run(x, "f32", 1, ADDF.format(t="tile<f32>"), "-0.0 : f32")
    assert np.signbit(r).all()


def _bits(a: np.ndarray) -> list[int]:
    return a.view(np.uint32).reshape(-1).tolist()


CANONICAL_NAN = 0x7FFFFFFF  # NVIDIA's canonical f32 NaN: every payload bit set


@pytest.mark.parametrize("propagate", [False, True])
@pytest.mark.parametrize("op", ["maxf", "minf"])
def test_reduce_maxf_minf_nan_and_zero(op, propagate):
    nan = np.float32(np.nan)
    neg_nan = np.array([0xFFC00001], dtype=np.uint32).view(np.float32)[0]  # a NaN with payload
    rows = np.array(
        [
            [1.0, nan, 3.0, -2.0],
            [nan, nan, neg_nan, nan],
            [-0.0, 0.0, -0.0, -0.0],
            [-0.0, -0.0, -0.0, -0.0],
            [0.0, 0.0, 0.0, 0.0],
            [-np.inf, 5.0, np.inf, 0.5],
            [0.0, -0.0, nan, 1.0],
            [-0.0, nan, 0.0, -1.0],
        ],
        dtype=np.float32,
    )
    ident = "0xFF800000 : f32" if op == "maxf" else "0x7F800000 : f32"  # -inf / +inf
    flag = " propagate_nan" if propagate else ""
    r = run(rows, "f32", 1, f"%s = {op} %e, %a{flag} : tile<f32>\nyield %s : tile<f32>", ident)
    pick = max if op == "maxf" else min
    for row, got in zip(rows.tolist(), _bits(r)):
        row = [*row, -math.inf if op == "maxf" else math.inf]  # the identity takes part
        nans = [math.isnan(v) for v in row]
        if (propagate and any(nans)) or all(nans):
            assert got == CANONICAL_NAN
            continue
        values = [v for v in row if not math.isnan(v)]
        best = pick(values)
        if best == 0.0:
            signs = [math.copysign(1.0, v) for v in values if v == 0.0]
            best = (0.0 if 1.0 in signs else -0.0) if op == "maxf" else (-0.0 if -1.0 in signs else 0.0)
        assert got == _bits(np.array([best], dtype=np.float32))[0]


@pytest.mark.parametrize("op", ["reduce", "scan"])
@pytest.mark.parametrize("fn", ["maxf", "minf"])
def test_signaling_nans_lose_in_reductions_and_scans(fn, op):
    """A signaling NaN loses against numbers like a quiet one. NumPy's fmax.reduce took it for
    the result so far, dropping every element before it (found by tests/lower/fuzz.py, seed
    8162: a bitcast of integers made one)."""
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    bits = x.view(np.uint32)
    bits[:, 20] = 0x7FA00000
    bits[1, 41] = 0xFF800001
    bits[2, :] = 0x7FA00000  # a row of signaling NaNs: the identity is the only number
    ident = "0xFF800000 : f32" if fn == "maxf" else "0x7F800000 : f32"
    r = run(x, "f32", 1, f"%s = {fn} %e, %a : tile<f32>\nyield %s : tile<f32>", ident, op=op)
    numbers = np.where(np.isnan(x), -np.inf if fn == "maxf" else np.inf, x)
    ufunc = np.maximum if fn == "maxf" else np.minimum
    expected = ufunc.accumulate(numbers, axis=1) if op == "scan" else ufunc.reduce(numbers, axis=1)
    np.testing.assert_array_equal(r, expected)


def test_reduce_maxf_all_nan_with_identity_number():
    # maximumNumber(NaN, -inf) is -inf: the identity takes part in the fold.
    x = np.full((1, 4), np.nan, dtype=np.float32)
    r = run(x, "f32", 1, "%s = maxf %e, %a : tile<f32>\nyield %s : tile<f32>", "0xFF800000 : f32")
    assert float(r[0]) == -np.inf


def test_reduce_maxf_bf16():
    x = RNG.standard_normal((4, 32)).astype(BF16)
    r = run(x, "bf16", 1, "%s = maxf %e, %a : tile<bf16>\nyield %s : tile<bf16>", "0xFF80 : bf16")
    np.testing.assert_array_equal(r.astype(np.float32), x.astype(np.float32).max(axis=1))


def test_reduce_argmax_f32():
    x = RNG.integers(-3, 4, size=(4, 16)).astype(np.float32)
    idx = np.broadcast_to(np.arange(16, dtype=np.int32), (4, 16))
    text = kernel(f"""{const("v", x, "f32")}
    {const("i", np.ascontiguousarray(idx), "i32")}
    %rv, %ri = reduce %v, %i dim=1 identities=[0xFF800000 : f32, -1 : i32]
        : tile<4x16xf32>, tile<4x16xi32> -> tile<4xf32>, tile<4xi32>
    (%ve: tile<f32>, %va: tile<f32>, %ie: tile<i32>, %ia: tile<i32>) {{
      %c = cmpf greater_than ordered %ve, %va : tile<f32> -> tile<i1>
      %v2 = select %c, %ve, %va : tile<i1>, tile<f32>
      %i2 = select %c, %ie, %ia : tile<i1>, tile<i32>
      yield %v2, %i2 : tile<f32>, tile<i32>
    }}""")
    out = eval_kernel(text)
    np.testing.assert_array_equal(out["rv"][0], x.max(axis=1))
    np.testing.assert_array_equal(out["ri"][0], x.argmax(axis=1))


# -- scan ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_scan_addi(dim, reverse):
    x = RNG.integers(2**28, 2**31 - 1, size=(8, 16), dtype=np.int32)
    r = run(x, "i32", dim, ADDI, "0 : i32", op="scan", reverse=reverse)
    src = np.flip(x, axis=dim) if reverse else x
    expect = np.cumsum(src.astype(np.int64), axis=dim).astype(np.int32)  # int64 → int32 keeps the low bits
    if reverse:
        expect = np.flip(expect, axis=dim)
    np.testing.assert_array_equal(r, expect)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_general_body(reverse):
    # Not a fast path (two ops): runs the region in log2(n) steps.
    x = RNG.integers(-100, 100, size=(2, 16), dtype=np.int32)
    body = "%s = addi %e, %a : tile<i32>\n%u = negi %e : tile<i32>\nyield %s : tile<i32>"
    r = run(x, "i32", 1, body, "0 : i32", op="scan", reverse=reverse)
    src = x[:, ::-1] if reverse else x
    expect = np.cumsum(src, axis=1)
    np.testing.assert_array_equal(r, expect[:, ::-1] if reverse else expect)


def test_scan_non_commutative_order():
    # A scan's body takes (accumulator, element), unlike reduce's (element, accumulator):
    # Ops.td's `scan` formula result[j] = f(result[j-1], X[j]) and example `(%acc, %elem)`,
    # as NVIDIA's tileiras 13.5 binds them (compiler/interp/ops_reduce.py). f(acc, x) =
    # acc * 2 + x (i32) is not commutative (nor associative beyond two terms: a 2-element
    # scan); it shows which argument gets the older prefix. The element first would give 6
    # for result[0] = f(0, 3).
    x = np.array([[3, 5]], dtype=np.int32)
    body = """%c2 = constant <i32: 2> : tile<i32>
    %d = muli %acc, %c2 : tile<i32>
    %s = addi %d, %el : tile<i32>
    yield %s : tile<i32>"""
    r = run(x, "i32", 1, body, "0 : i32", op="scan", names=("acc", "el"))
    np.testing.assert_array_equal(r, [[3, 11]])  # result[0] = f(0, 3); result[1] = f(3, 5) = 3*2 + 5
    r = run(x, "i32", 1, body, "0 : i32", op="scan", reverse=True, names=("acc", "el"))
    np.testing.assert_array_equal(r, [[13, 5]])  # reverse: result[0] = f(result[1], x[0]) = 5*2 + 3


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n", [1, 2, 8, 32])
def test_scan_of_affine_maps_applies_them_in_scan_order(n, reverse):
    # Composition of x -> m x + c (associative, not commutative), through the general path
    # (two operands): body(older, newer) = newer o older = (m_n m_o, m_n c_o + c_n) with the
    # accumulator first, so result[j] applies the maps in scan order (reverse: from the end).
    m = RNG.integers(-5, 6, size=(4, n), dtype=np.int32)
    c = RNG.integers(-50, 51, size=(4, n), dtype=np.int32)
    rev = "true" if reverse else "false"
    t = tile((4, n), "i32")
    text = kernel(f"""{const("m", m, "i32")}
    {const("c", c, "i32")}
    %rm, %rc = scan %m, %c dim=1 reverse={rev} identities=[1 : i32, 0 : i32] : {t}, {t} -> {t}, {t}
    (%ma: tile<i32>, %me: tile<i32>, %ca: tile<i32>, %ce: tile<i32>) {{
      %mm = muli %me, %ma : tile<i32>
      %p = muli %me, %ca : tile<i32>
      %cc = addi %p, %ce : tile<i32>
      yield %mm, %cc : tile<i32>, tile<i32>
    }}""")
    out = eval_kernel(text)
    for i in range(4):
        order = range(n - 1, -1, -1) if reverse else range(n)
        fm, fc, expect = 1, 0, {}
        for j in order:  # apply map j after the ones before it in scan order
            fm, fc = int(m[i, j]) * fm, int(m[i, j]) * fc + int(c[i, j])
            expect[j] = (fm, fc)
        got = [(int(a), int(b)) for a, b in zip(out["rm"][0][i], out["rc"][0][i], strict=True)]
        wrap = [tuple(((v + 2**31) % 2**32) - 2**31 for v in expect[j]) for j in range(n)]
        assert got == wrap, (i, got, wrap)


@pytest.mark.parametrize(
    ("element", "dtype"), [("f32", np.dtype(np.float32)), ("f16", np.dtype(np.float16)), ("bf16", BF16)]
)
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_addf_is_the_sequential_fold(element, dtype, reverse):
    x = (RNG.standard_normal((2, 32)) * 100).astype(dtype)
    r = run(x, element, 1, ADDF.format(t=f"tile<{element}>"), f"0.0 : {element}", op="scan", reverse=reverse)
    for row, got in zip(x, r):
        seq = row[::-1] if reverse else row
        acc = dtype.type(0.0)
        expect = []
        for v in seq:
            acc = dtype.type(float(v) + float(acc))
            expect.append(acc)
        expect = np.array(expect, dtype=dtype)
        assert got.tobytes() == (expect[::-1] if reverse else expect).tobytes()


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_maxf_and_maxi_unsigned(reverse):
    x = RNG.standard_normal((2, 16)).astype(np.float32)
    r = run(
        x,
        "f32",
        1,
        "%s = maxf %e, %a : tile<f32>\nyield %s : tile<f32>",
        "0xFF800000 : f32",
        op="scan",
        reverse=reverse,
    )
    src = x[:, ::-1] if reverse else x
    expect = np.maximum.accumulate(src, axis=1)
    np.testing.assert_array_equal(r, expect[:, ::-1] if reverse else expect)
    y = RNG.integers(-(2**31), 2**31, size=(2, 16), dtype=np.int64).astype(np.int32)
    r = run(
        y,
        "i32",
        1,
        "%s = maxi %e, %a unsigned : tile<i32>\nyield %s : tile<i32>",
        "0 : i32",
        op="scan",
        reverse=reverse,
    )
    src = y.view(np.uint32)[:, ::-1] if reverse else y.view(np.uint32)
    expect = np.maximum.accumulate(src, axis=1)
    np.testing.assert_array_equal(r.view(np.uint32), expect[:, ::-1] if reverse else expect)


def test_scan_maxf_signed_zero_prefixes():
    x = np.array([[-0.0, 0.0, -0.0, -1.0]], dtype=np.float32)
    r = run(x, "f32", 1, "%s = maxf %e, %a : tile<f32>\nyield %s : tile<f32>", "0xFF800000 : f32", op="scan")
    assert np.signbit(r[0]).tolist() == [True, False, False, False]


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_two_operands(reverse):
    x = RNG.integers(-50, 50, size=(4, 8), dtype=np.int32)
    y = RNG.integers(-50, 50, size=(4, 8), dtype=np.int32)
    rev = "true" if reverse else "false"
    text = kernel(f"""{const("x", x, "i32")}
    {const("y", y, "i32")}
    %r, %s = scan %x, %y dim=1 reverse={rev} identities=[0 : i32, -2147483648 : i32]
        : tile<4x8xi32>, tile<4x8xi32> -> tile<4x8xi32>, tile<4x8xi32>
    (%xe: tile<i32>, %xa: tile<i32>, %ye: tile<i32>, %ya: tile<i32>) {{
      %p = addi %xe, %xa : tile<i32>
      %q = maxi %ye, %ya signed : tile<i32>
      yield %p, %q : tile<i32>, tile<i32>
    }}""")
    out = eval_kernel(text)
    xs, ys = (x[:, ::-1], y[:, ::-1]) if reverse else (x, y)
    sums, maxes = np.cumsum(xs, axis=1), np.maximum.accumulate(ys, axis=1)
    if reverse:
        sums, maxes = sums[:, ::-1], maxes[:, ::-1]
    np.testing.assert_array_equal(out["r"][0], sums)
    np.testing.assert_array_equal(out["s"][0], maxes)


@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("op", ["maxf", "minf"])
def test_reduce_maxf_minf_rank3(op, dim):
    x = RNG.standard_normal((4, 8, 16)).astype(np.float32)
    ident = "0xFF800000 : f32" if op == "maxf" else "0x7F800000 : f32"
    r = run(x, "f32", dim, f"%s = {op} %e, %a propagate_nan : tile<f32>\nyield %s : tile<f32>", ident)
    np.testing.assert_array_equal(r, x.max(axis=dim) if op == "maxf" else x.min(axis=dim))


def _general(body: str, element: str) -> str:
    """The same body with an unused extra op, which turns the fast path off."""
    head, tail = body.rsplit("\n", 1)
    bits = {"f32": "i32", "f16": "i16", "bf16": "i16"}[element]
    return f"{head}\n%u = bitcast %e : tile<{element}> -> tile<{bits}>\n{tail}"


SPECIALS = [0.0, -0.0, np.nan, 1.0, -1.0, np.inf, -np.inf]


@pytest.mark.parametrize("element", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("op", ["maxf", "minf", "maxf propagate_nan", "minf propagate_nan", "addf", "mulf"])
@pytest.mark.parametrize("kind", ["reduce", "scan"])
def test_fast_paths_equal_the_general_path_bitwise(element, op, kind):
    dtype = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": BF16}[element]
    combos = np.array(list(itertools.product(SPECIALS, repeat=4)), dtype=np.float64)
    x = np.concatenate([combos[RNG.permutation(len(combos))[:224]], RNG.standard_normal((32, 4))]).astype(dtype)
    name, *flag = op.split()
    body = f"%s = {name} %e, %a {' '.join(flag)} : tile<{element}>\nyield %s : tile<{element}>"
    ident = {"maxf": "0xFF80", "minf": "0x7F80", "addf": "0.0", "mulf": "1.0"}[name]
    if name in ("maxf", "minf") and element != "bf16":
        ident = {"f32": {"maxf": "0xFF800000", "minf": "0x7F800000"}, "f16": {"maxf": "0xFC00", "minf": "0x7C00"}}[
            element
        ][name]
    fast = run(x, element, 1, body, f"{ident} : {element}", op=kind)
    general = run(x, element, 1, _general(body, element), f"{ident} : {element}", op=kind)
    if kind == "scan" and name in ("addf", "mulf"):
        # The fast scan is sequential, the general one Hillis–Steele: compare only where
        # the order cannot matter (at most two terms).
        fast, general = fast[:, :2], general[:, :2]
    assert fast.tobytes() == general.tobytes()


def test_combiner_uses_values_from_outside_per_block():
    # The body reads %k (a constant) and %b (the block id, different in each block of the
    # group): each block's reduction sees its own %b.
    out = eval_kernel(
        kernel("""
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %k = constant <i32: 3> : tile<i32>
        %x = iota : tile<8xi32>
        %r = reduce %x dim=0 identities=[0 : i32] : tile<8xi32> -> tile<i32>
        (%e: tile<i32>, %a: tile<i32>) {
          %t = addi %e, %a : tile<i32>
          %u = addi %t, %k : tile<i32>
          %v = addi %u, %bx : tile<i32>
          yield %v : tile<i32>
        }
    """),
        grid_positions=[0, 1, 2],
        grid=(3, 1, 1),
    )
    # 8 elements: 7 combines and the identity step, each adding 3 + bx.
    assert np.broadcast_to(out["r"], (3,)).tolist() == [28 + 8 * (3 + b) for b in range(3)]
