"""The floating-point ops of the interpreter, run through small kernels.

Expectations come from `Fraction` arithmetic with an independent rounding reference
(`test_rounding.ref_round`), Python float comparisons, NumPy in float64, mpmath (for the
documented accuracy bounds of the math functions, when installed) and hand-written
tables of special values. Values enter as scalar kernel parameters, one per tile block
of a group (`eval_kernel` with N grid positions), or as dense constants.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from tests.corpus import SIGNALING_NAN

from .test_rounding import MODES, _expected, f64, random_values, ref_round, same
from .util import eval_kernel, kernel

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

TYPES = ["f16", "bf16", "f32", "f64"]
DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
RNG = np.random.default_rng(7)
TINY = {"f16": 2.0**-14, "bf16": 2.0**-126, "f32": 2.0**-126, "f64": 2.0**-1022}


def run(body: str, t: str, *args: np.ndarray, names: str = "abc") -> dict[str, np.ndarray]:
    """Run `body` with scalar parameters %a, %b, ... of element type `t`, one value per
    tile block of a group of len(args[0]) blocks."""
    params = ", ".join(f"%{names[i]}: tile<{t}>" for i in range(len(args)))
    return eval_kernel(kernel(body, params), grid_positions=range(len(args[0])), args=list(args))


def specials(t: str) -> np.ndarray:
    tiny = TINY[t]
    sub = tiny / 4 if t != "bf16" else tiny / 8
    values = [0.0, -0.0, 1.0, -1.0, 1.5, np.inf, -np.inf, np.nan, tiny, -tiny, sub, -sub, 3.0, -7.25, 1e4, 2.0**-3]
    return np.array(values).astype(DTYPES[t])


def mixed(t: str, n: int) -> np.ndarray:
    """Random bit patterns and the special values of type t."""
    out = random_values(t, n)
    s = specials(t)
    out[: len(s)] = s
    RNG.shuffle(out)
    return out


def bits(a: np.ndarray) -> list[int]:
    a = np.asarray(a)
    return [int(v) for v in a.view(f"u{a.dtype.itemsize}").reshape(-1)]


# -- arithmetic with rounding modes --------------------------------------------------------

ARITH = {
    "add": ("addf %a, %b{r}{f}", 2),
    "sub": ("subf %a, %b{r}{f}", 2),
    "mul": ("mulf %a, %b{r}{f}", 2),
    "div": ("divf %a, %b{r}{f}", 2),
    "fma": ("fma %a, %b, %c{r}{f}", 3),
    "sqrt": ("sqrt %a{r}{f}", 1),
}


@pytest.mark.parametrize("t", TYPES)
@pytest.mark.parametrize("op", sorted(ARITH))
def test_arithmetic_every_mode(t: str, op: str) -> None:
    template, arity = ARITH[op]
    n = 48
    operands = [mixed(t, n) for _ in range(arity)]
    lines = []
    for mode in MODES:
        for ftz in (False, True) if t == "f32" else (False,):
            suffix = "" if mode == "nearest_even" else f" rounding<{mode}>"
            flag = " flush_to_zero" if ftz else ""
            lines.append(f"%{mode}_{int(ftz)} = {template.format(r=suffix, f=flag)} : tile<{t}>")
    out = run("\n".join(lines), t, *operands)
    cols = [f64(o).tolist() for o in operands]
    for mode in MODES:
        for ftz in (False, True) if t == "f32" else (False,):
            got = out[f"{mode}_{int(ftz)}"]
            assert got.dtype == np.dtype(DTYPES[t])
            same(got, [_expected(op, list(v), t, mode, ftz) for v in zip(*cols)])


def _approx_quotient(x: float, y: float, rounded: float) -> float:
    """f32 divf `approx`: the correctly rounded quotient, but for 2^126 < |rhs| (finite) a
    zero of the quotient's sign, NaN for an infinite or NaN lhs (cuda-tile Ops.td, DivFOp)."""
    if math.isfinite(y) and abs(y) > 2.0**126:
        if not math.isfinite(x):
            return math.nan
        return math.copysign(0.0, x) * math.copysign(1.0, y)
    return rounded


def test_divf_approx_beyond_2_126_is_zero_as_documented() -> None:
    big = np.float32(2.0**126)
    a = np.float32([1.0, -3.0, 0.0, np.inf, -np.inf, np.nan, 5.0, 5.0, 5.0, 1e-40])
    above = np.nextafter(big, np.float32(np.inf))
    b = np.float32([above, 3.4e38, -3.0e38, 2.0e38, -2.0e38, 2.0e38, big, np.inf, -1e37, 2e38])
    out = run(
        """
        %q1 = divf %a, %b rounding<approx> : tile<f32>
        %q2 = divf %a, %b rounding<full> : tile<f32>
        %q3 = divf %a, %b rounding<approx> flush_to_zero : tile<f32>
    """,
        "f32",
        a,
        b,
    )
    q1 = out["q1"].tolist()
    assert q1[:3] == [0.0, 0.0, 0.0] and [math.copysign(1, v) for v in q1[:3]] == [1, -1, -1]
    assert all(math.isnan(v) for v in q1[3:6])
    # |rhs| = 2^126 exactly, an infinite rhs and |rhs| < 2^126 are outside the range: quotients.
    assert q1[6] == 5.0 / 2.0**126 and q1[7] == 0.0 and q1[8] == np.float32(5.0) / np.float32(-1e37) != 0
    assert q1[9] == 0.0
    full = out["q2"].tolist()
    assert full[0] == np.float32(1.0) / above and full[0] != 0  # `full`: the quotient
    assert out["q3"].tolist()[:3] == q1[:3]


def test_divf_and_sqrt_approx_full_give_the_correctly_rounded_result() -> None:
    a = mixed("f32", 64)
    b = mixed("f32", 64)
    out = run(
        """
        %q1 = divf %a, %b rounding<approx> : tile<f32>
        %q2 = divf %a, %b rounding<full> : tile<f32>
        %s1 = sqrt %a rounding<approx> : tile<f32>
    """,
        "f32",
        a,
        b,
    )
    cols = [f64(a).tolist(), f64(b).tolist()]
    expected_q = [_expected("div", list(v), "f32", "nearest_even", False) for v in zip(*cols)]
    same(out["q1"], [_approx_quotient(x, y, q) for x, y, q in zip(*cols, expected_q, strict=True)])
    same(out["q2"], expected_q)
    same(out["s1"], [_expected("sqrt", [v], "f32", "nearest_even", False) for v in cols[0]])


def test_arithmetic_edge_table_f32() -> None:
    inf, nan = np.inf, np.nan
    a = np.float32([inf, inf, 0.0, -0.0, 1.0, 3.4e38, 1e-45, -1.0, 0.0])
    b = np.float32([-inf, inf, -0.0, -0.0, 0.0, 3.4e38, 0.5, -0.0, nan])
    out = run(
        """
        %s = addf %a, %b : tile<f32>
        %d = divf %a, %b : tile<f32>
        %m = mulf %a, %b : tile<f32>
        %z = addf %a, %b rounding<zero> : tile<f32>
        %n = addf %a, %b rounding<negative_inf> : tile<f32>
    """,
        "f32",
        a,
        b,
    )
    same(out["s"], [nan, inf, 0.0, -0.0, 1.0, inf, 0.5, -1.0, nan])
    same(out["d"], [nan, nan, nan, nan, inf, 1.0, 2.802596928649634e-45, inf, nan])
    same(out["m"], [-inf, inf, -0.0, 0.0, 0.0, inf, 0.0, 0.0, nan])
    big = float(np.finfo(np.float32).max)
    same(out["z"], [nan, inf, 0.0, -0.0, 1.0, big, 0.5, -1.0, nan])
    same(out["n"], [nan, inf, -0.0, -0.0, 1.0, big, 0.5, -1.0, nan])


def test_flush_to_zero_inputs_and_results() -> None:
    tiny = 2.0**-126
    a = np.float32([tiny / 2, -tiny / 2, tiny, tiny * 1.5, 1.0])
    b = np.float32([1.0, 1.0, 0.5, -1.0, tiny / 4])
    out = run(
        """
        %m = mulf %a, %b flush_to_zero : tile<f32>
        %s = addf %a, %b flush_to_zero : tile<f32>
        %x = maxf %a, %b flush_to_zero : tile<f32>
        %q = sqrt %a flush_to_zero : tile<f32>
        %e = exp2 %a flush_to_zero : tile<f32>
        %r = rsqrt %a flush_to_zero : tile<f32>
    """,
        "f32",
        a,
        b,
    )
    # subnormal inputs count as +-0; tiny*0.5 is a subnormal result: flushed
    same(out["m"], [0.0, -0.0, 0.0, -tiny * 1.5, 0.0])
    same(out["s"], [1.0, 1.0, 0.5, -1.0, 1.0])
    same(out["x"], [1.0, 1.0, 0.5, tiny * 1.5, 1.0])
    same(out["q"], [0.0, -0.0, 2.0**-63, float(np.float32(math.sqrt(tiny * 1.5))), 1.0])
    same(out["e"], [1.0, 1.0, 1.0, 1.0, 2.0])
    same(out["r"], [np.inf, -np.inf, 2.0**63, float(np.float32(1 / math.sqrt(tiny * 1.5))), 1.0])
    # exp2 of -126.5 is subnormal: flushed with ftz, kept without
    e = run("%y = exp2 %a flush_to_zero : tile<f32>\n%z = exp2 %a : tile<f32>", "f32", np.float32([-126.5, -149.0]))
    same(e["y"], [0.0, 0.0])
    same(e["z"], [float(np.float32(2.0**-126.5)), 2.0**-149])


# -- exact ops -------------------------------------------------------------------------------


@pytest.mark.parametrize("t", TYPES)
def test_abs_neg_ceil_floor(t: str) -> None:
    a = specials(t)
    a = np.concatenate([a, np.array([-0.5, 0.5, 2.5, -2.5, -1e-3, 255.5]).astype(DTYPES[t])])
    out = run(
        """
        %abs = absf %a : tile<T>
        %neg = negf %a : tile<T>
        %ceil = ceil %a : tile<T>
        %floor = floor %a : tile<T>
    """.replace("T", t),
        t,
        a,
    )
    values = f64(a).tolist()
    same(out["abs"], [abs(v) for v in values])
    same(out["neg"], [-v for v in values])
    same(out["ceil"], [v if not math.isfinite(v) else math.copysign(math.ceil(v), v) for v in values])
    same(out["floor"], [v if not math.isfinite(v) else math.copysign(math.floor(v), v) for v in values])
    for k in ("abs", "neg", "ceil", "floor"):
        assert out[k].dtype == np.dtype(DTYPES[t])
    # NaN signs: absf clears it, negf flips it (bit patterns)
    nan = np.array([np.nan, -np.nan]).astype(DTYPES[t])
    out = run(f"%abs = absf %a : tile<{t}>\n%neg = negf %a : tile<{t}>", t, nan)
    sign = 1 << (8 * nan.dtype.itemsize - 1)
    assert [b & sign for b in bits(out["abs"])] == [0, 0]
    assert [b & sign for b in bits(out["neg"])] == [b & sign ^ sign for b in bits(nan)]


def _fmod(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan
    if math.isinf(y):
        return x
    q = Fraction(x) / Fraction(y)
    n = q.numerator // q.denominator if q >= 0 else -((-q.numerator) // q.denominator)
    r = Fraction(x) - n * Fraction(y)
    return math.copysign(float(r), x) if r == 0 else float(r)


@pytest.mark.parametrize("t", TYPES)
def test_remf(t: str) -> None:
    a = mixed(t, 64)
    b = mixed(t, 64)
    out = run(f"%r = remf %a, %b : tile<{t}>", t, a, b)
    same(out["r"], [_fmod(x, y) for x, y in zip(f64(a).tolist(), f64(b).tolist())])
    # the special cases of the op's description
    a = np.array([5.5, -5.5, 1.0, np.inf, 3.0, np.nan, 2.0, -0.0]).astype(DTYPES[t])
    b = np.array([2.0, 2.0, 0.0, 2.0, np.inf, 1.0, np.nan, 3.0]).astype(DTYPES[t])
    same(run(f"%r = remf %a, %b : tile<{t}>", t, a, b)["r"], [1.5, -1.5, np.nan, np.nan, 3.0, np.nan, np.nan, -0.0])


PREDICATES = {
    "equal": lambda x, y: x == y,
    "not_equal": lambda x, y: x != y,
    "less_than": lambda x, y: x < y,
    "less_than_or_equal": lambda x, y: x <= y,
    "greater_than": lambda x, y: x > y,
    "greater_than_or_equal": lambda x, y: x >= y,
}


@pytest.mark.parametrize("t", TYPES)
def test_cmpf_every_predicate_and_ordering(t: str) -> None:
    s = specials(t)
    a = np.repeat(s, len(s))
    b = np.tile(s, len(s))
    lines = [
        f"%{p}_{o} = cmpf {p} {o} %a, %b : tile<{t}> -> tile<i1>" for p in PREDICATES for o in ("ordered", "unordered")
    ]
    out = run("\n".join(lines), t, a, b)
    xs, ys = f64(a).tolist(), f64(b).tolist()
    for p, fn in PREDICATES.items():
        for o in ("ordered", "unordered"):
            got = out[f"{p}_{o}"]
            assert got.dtype == np.bool_
            expected = []
            for x, y in zip(xs, ys):
                unordered = math.isnan(x) or math.isnan(y)
                expected.append(o == "unordered" if unordered else fn(x, y))
            assert got.tolist() == expected, (p, o)


@pytest.mark.parametrize("t", TYPES)
def test_maxf_minf(t: str) -> None:
    nan = np.nan
    a = np.array([1.0, nan, nan, 0.0, -0.0, -0.0, 2.0, -np.inf, 3.0]).astype(DTYPES[t])
    b = np.array([2.0, 1.0, nan, -0.0, 0.0, -0.0, nan, 5.0, 3.0]).astype(DTYPES[t])
    out = run(
        f"""
        %max = maxf %a, %b : tile<{t}>
        %min = minf %a, %b : tile<{t}>
        %maxp = maxf %a, %b propagate_nan : tile<{t}>
        %minp = minf %a, %b propagate_nan : tile<{t}>
    """,
        t,
        a,
        b,
    )
    same(out["max"], [2.0, 1.0, nan, 0.0, 0.0, -0.0, 2.0, 5.0, 3.0])
    same(out["min"], [1.0, 1.0, nan, -0.0, -0.0, -0.0, 2.0, -np.inf, 3.0])
    same(out["maxp"], [2.0, nan, nan, 0.0, 0.0, -0.0, nan, 5.0, 3.0])
    same(out["minp"], [1.0, nan, nan, -0.0, -0.0, -0.0, nan, -np.inf, 3.0])
    # NaN results are the canonical NaN (positive, all payload bits set)
    canonical = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}[t]
    assert bits(out["max"])[2] == canonical
    assert bits(out["minp"])[1] == canonical
    for k in out:
        assert out[k].dtype == np.dtype(DTYPES[t])


@pytest.mark.parametrize("t", TYPES)
def test_maxf_minf_signaling_nans_lose_like_quiet_ones(t: str) -> None:
    """maxf(x, sNaN) is x, as for a quiet NaN (IEEE maximumNumber; PTX max/min). NumPy's
    fmax/fmin, which the interpreter computes with, gave NaN for a signaling NaN."""
    kind, patterns = f"u{np.dtype(DTYPES[t]).itemsize}", SIGNALING_NAN[t]
    a = np.array([0, 0, 0, 0, np.nan], dtype=DTYPES[t])
    a.view(kind)[:4] = patterns * 2
    b = np.array([1.5, -2.0, 0, 0, -0.5], dtype=DTYPES[t])
    b.view(kind)[2:4] = patterns[::-1]  # sNaN against sNaN: NaN
    out = run(f"%max = maxf %a, %b : tile<{t}>\n%min = minf %a, %b : tile<{t}>", t, a, b)
    same(out["max"][[0, 1, 4]], [1.5, -2.0, -0.5])
    same(out["min"][[0, 1, 4]], [1.5, -2.0, -0.5])
    canonical = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}[t]
    assert bits(out["max"])[2:4] == [canonical] * 2 and bits(out["min"])[2:4] == [canonical] * 2


# -- math functions ----------------------------------------------------------------------------

UNARY = {
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
}


def _round_nearest(values: np.ndarray, t: str) -> list[float]:
    return [ref_round(v if not math.isfinite(v) or v == 0 else Fraction(v), t, "nearest_even") for v in values.tolist()]


def _math_inputs(t: str, n: int) -> np.ndarray:
    x = np.concatenate(
        [RNG.uniform(-10, 10, n), RNG.uniform(-100, 100, n // 4), [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 0.5, 88.0]]
    )
    return x.astype(DTYPES[t])


@pytest.mark.parametrize("t", TYPES)
def test_math_functions_against_numpy_float64(t: str) -> None:
    x = _math_inputs(t, 64)
    lines = [f"%{name} = {name} %a : tile<{t}>" for name in UNARY]
    lines.append(f"%exp_approx = exp %a rounding<approx> : tile<{t}>" if t == "f32" else "")
    lines.append(f"%tanh_approx = tanh %a rounding<approx> : tile<{t}>" if t == "f32" else "")
    out = run("\n".join(line for line in lines if line), t, x)
    with np.errstate(all="ignore"):
        for name, fn in UNARY.items():
            expected = fn(f64(x))
            got = out[name]
            assert got.dtype == np.dtype(DTYPES[t])
            if t == "f64":
                same(got, expected.tolist())
            else:
                same(got, _round_nearest(expected, t))
        if t == "f32":
            same(out["exp_approx"], out["exp"].astype(np.float64).tolist())
            same(out["tanh_approx"], out["tanh"].astype(np.float64).tolist())


@pytest.mark.parametrize("t", TYPES)
def test_pow_and_atan2(t: str) -> None:
    x = np.array([2.0, -2.0, 0.0, 1.0, np.nan, 4.0, -8.0, 0.5, 1.0, 0.0, -1.0, np.inf, 1.0]).astype(DTYPES[t])
    y = np.array([10.0, 3.0, -1.0, np.nan, 0.0, 0.5, 1 / 3, -2.0, 1.0, -1.0, 0.0, 1.0, 0.0]).astype(DTYPES[t])
    out = run(f"%p = pow %a, %b : tile<{t}>\n%t = atan2 %a, %b : tile<{t}>", t, x, y)
    with np.errstate(all="ignore"):
        p = np.power(f64(x), f64(y))
        a = np.arctan2(f64(x), f64(y))
    same(out["p"], p.tolist() if t == "f64" else _round_nearest(p, t))
    same(out["t"], a.tolist() if t == "f64" else _round_nearest(a, t))
    # atan2(x, y) = atan(x / y): the first operand is the numerator
    xs = np.array([1.0, 1.0, 0.0, 1.0]).astype(DTYPES[t])
    ys = np.array([0.0, 1.0, -1.0, -1.0]).astype(DTYPES[t])
    got = run(f"%t = atan2 %a, %b : tile<{t}>", t, xs, ys)["t"]
    expected = [math.pi / 2, math.pi / 4, math.pi, 3 * math.pi / 4]
    same(got, expected if t == "f64" else [ref_round(Fraction(v), t, "nearest_even") for v in expected])


ULP_BOUND = {"f16": 1, "bf16": 1, "f32": 1, "f64": 4}


@pytest.mark.parametrize("t", TYPES)
def test_math_accuracy_bound(t: str) -> None:
    """The bounds documented in ops_float: within 1 ulp for f16/bf16/f32 results, 4 ulp
    for f64, against 60-digit mpmath values."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    x = np.concatenate([RNG.uniform(-20, 20, 40), RNG.uniform(0.001, 5, 20)]).astype(DTYPES[t])
    y = RNG.uniform(0.1, 4, len(x)).astype(DTYPES[t])
    fns = {
        "exp": mpmath.exp,
        "exp2": lambda v: mpmath.power(2, v),
        "sin": mpmath.sin,
        "cos": mpmath.cos,
        "tan": mpmath.tan,
        "sinh": mpmath.sinh,
        "cosh": mpmath.cosh,
        "tanh": mpmath.tanh,
        "log": mpmath.log,
        "log2": lambda v: mpmath.log(v, 2),
        "rsqrt": lambda v: 1 / mpmath.sqrt(v),
    }
    lines = [f"%{n} = {n} %a : tile<{t}>" for n in fns]
    lines += [f"%pow = pow %b, %a : tile<{t}>", f"%atan2 = atan2 %a, %b : tile<{t}>"]
    out = run("\n".join(lines), t, x, y)
    finfo = {"f16": (11, -14), "bf16": (8, -126), "f32": (24, -126), "f64": (53, -1022)}[t]
    big = float(np.finfo(np.float16).max) if t == "f16" else float(ml_dtypes.finfo(DTYPES[t]).max)

    def ulp(v: float) -> float:
        e = max(math.frexp(v)[1] - 1, finfo[1]) if v != 0 else finfo[1]
        return math.ldexp(1.0, e - finfo[0] + 1)

    cases = [(n, fn, [(v,) for v in f64(x).tolist()]) for n, fn in fns.items()]
    cases += [
        ("pow", mpmath.power, list(zip(f64(y).tolist(), f64(x).tolist()))),
        ("atan2", mpmath.atan2, list(zip(f64(x).tolist(), f64(y).tolist()))),
    ]
    for name, fn, argss in cases:
        got = out[name].astype(np.float64).tolist()
        for g, args in zip(got, argss):
            if name in ("log", "log2", "rsqrt") and args[0] <= 0:
                continue
            exact = fn(*(mpmath.mpf(a) for a in args))
            if abs(exact) > big or not math.isfinite(g):
                continue
            err = abs(mpmath.mpf(g) - exact) / ulp(float(exact))
            assert err <= ULP_BOUND[t], (name, args, g, float(exact), float(err))


LONG = np.longdouble


@pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63, reason="long double is no wider than double here")
@pytest.mark.parametrize("t", TYPES)
def test_math_accuracy_bound_against_long_double(t: str) -> None:
    """The same bounds against x87 extended precision (64-bit significand), for machines
    without mpmath: the reference's own error is below 2^-10 ulp of an f64 result."""
    x = np.concatenate([RNG.uniform(-20, 20, 200), RNG.uniform(0.001, 5, 100)]).astype(DTYPES[t])
    y = RNG.uniform(0.1, 4, len(x)).astype(DTYPES[t])
    fns = {
        "exp": np.exp,
        "exp2": np.exp2,
        "sin": np.sin,
        "cos": np.cos,
        "tan": np.tan,
        "sinh": np.sinh,
        "cosh": np.cosh,
        "tanh": np.tanh,
        "log": np.log,
        "log2": np.log2,
        "rsqrt": lambda v: 1 / np.sqrt(v),
    }
    lines = [f"%{n} = {n} %a : tile<{t}>" for n in fns]
    lines += [f"%pow = pow %b, %a : tile<{t}>", f"%atan2 = atan2 %a, %b : tile<{t}>"]
    out = run("\n".join(lines), t, x, y)
    xl, yl = f64(x).astype(LONG), f64(y).astype(LONG)
    with np.errstate(all="ignore"):
        refs = {n: fn(xl) for n, fn in fns.items()}
        refs["pow"] = np.power(yl, xl)
        refs["atan2"] = np.arctan2(xl, yl)
    p, emin = {"f16": (11, -14), "bf16": (8, -126), "f32": (24, -126), "f64": (53, -1022)}[t]
    big = float(np.finfo(np.float16).max) if t == "f16" else float(ml_dtypes.finfo(DTYPES[t]).max)
    for name, ref in refs.items():
        got = out[name].astype(LONG)
        ok = np.isfinite(ref) & (np.abs(ref) <= big) & np.isfinite(got)
        e = np.maximum(np.floor(np.log2(np.abs(ref[ok]).astype(np.float64))), emin)
        ulp = np.ldexp(1.0, (e - p + 1).astype(int)).astype(LONG)
        err = np.abs(got[ok] - ref[ok]) / ulp
        assert float(err.max(initial=0)) <= ULP_BOUND[t], (name, float(err.max()))


def test_values_uniform_across_the_group_broadcast() -> None:
    # a constant (group axis 1) combined with per-block parameters (group axis 4)
    a = np.float32([1.0, 2.0, 3.0, 4.0])
    out = run(
        """
        %c = constant <f32: 0.5> : tile<f32>
        %s = addf %a, %c rounding<positive_inf> : tile<f32>
        %f = fma %c, %a, %c : tile<f32>
        %m = maxf %c, %a : tile<f32>
        %k = cmpf less_than ordered %c, %a : tile<f32> -> tile<i1>
    """,
        "f32",
        a,
    )
    same(out["s"], [1.5, 2.5, 3.5, 4.5])
    same(out["f"], [1.0, 1.5, 2.0, 2.5])
    same(out["m"], [1.0, 2.0, 3.0, 4.0])
    assert out["k"].tolist() == [True] * 4


def test_shaped_tiles_with_constants() -> None:
    out = eval_kernel(
        kernel("""
        %a = constant <bf16: [1.0, -2.5, 0x7FC0, 3.0]> : tile<4xbf16>
        %b = constant <bf16: [2.0, 0.5, 1.0, 0x7F80]> : tile<4xbf16>
        %s = subf %a, %b rounding<zero> : tile<4xbf16>
        %q = divf %a, %b : tile<4xbf16>
        %c = cmpf greater_than unordered %a, %b : tile<4xbf16> -> tile<4xi1>
        %e = exp %a : tile<4xbf16>
    """)
    )
    assert out["s"].shape == (1, 4) and out["s"].dtype == np.dtype(ml_dtypes.bfloat16)
    same(out["s"], [-1.0, -3.0, np.nan, -np.inf])
    same(out["q"], [0.5, -5.0, np.nan, 0.0])
    assert out["c"].tolist() == [[False, False, True, False]]
    same(
        out["e"],
        [
            ref_round(Fraction(float(np.exp(v))), "bf16", "nearest_even") if math.isfinite(v) else np.nan
            for v in [1.0, -2.5, np.nan, 3.0]
        ],
    )
