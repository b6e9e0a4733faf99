"""The Triton lowering of the float ops (compiler/lower/ops_float.py) against the CPU
interpreter: every op on f16/bf16/f32/f64, each rounding mode, flush_to_zero, propagate_nan,
cmpf predicates and orderings, on edge values (±0, subnormals, ±inf, NaN, max, min normal)
and random bit patterns, several shapes; and compiles for sm_80/sm_90/sm_100 with checks of
the PTX of the ops whose exact path Triton's interpreter cannot run (f64 fma in nearest mode,
f64 directed rounding, f64 remf).

The kernel builder and value generators here are shared by test_math and test_conversion.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from compiler.lower.codegen import LowerError, lower_entry
from compiler.runtime import LaunchError, launch, load_module
from tests.corpus import SIGNALING_NAN

from .harness import ON_GPU, assert_same, compile_for, kernel_text, run_both, source_of, tile_type

# The expected values are computed by NumPy from edge inputs (signaling NaNs, infinities, values
# past a type's range), whose warnings about them say nothing. (The interpreter's own warnings
# are errors in tests/interp; the triton-interpret backend's, tests/lower/test_failures.py.)
pytestmark = pytest.mark.filterwarnings(
    "ignore:invalid value encountered:RuntimeWarning", "ignore:overflow encountered in cast:RuntimeWarning"
)

TYPES = ("f16", "bf16", "f32", "f64")
NP = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "tf32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
}
# (precision, emin, emax) of the formats
FORMAT = {"f16": (11, -14, 15), "bf16": (8, -126, 127), "f32": (24, -126, 127), "f64": (53, -1022, 1023)}
MODES = ("zero", "negative_inf", "positive_inf")


# -- building kernels ------------------------------------------------------------------------------


Outputs = dict[str, np.ndarray]


def run_ops(
    ops: dict[str, tuple[str, str]],
    inputs: dict[str, tuple[str, np.ndarray]],
    shape: tuple[int, ...],
    blocks: int = 1,
    ulp: int = 0,
    nan_payload: bool = False,
    on_tileiras: Callable[[Outputs, Outputs], None] | None = None,
    tileiras_refuses: str | None = None,
) -> Outputs:
    """`ops`: output name -> (op text with its types, result element type); `inputs`: name
    -> (element type, array of shape (shape[0] * blocks, *shape[1:])). Runs both backends,
    which must agree (bitwise, or within `ulp`); returns the CPU interpreter's outputs.
    `on_tileiras(cpu, got)` (outputs by name) and `tileiras_refuses`: as in run_both."""
    body = [f"%{name}_r = {text}" for name, (text, _) in ops.items()]
    outs = [(name, elem) for name, (_, elem) in ops.items()]
    text = kernel_text([(n, el) for n, (el, _) in inputs.items()], outs, body, shape, blocks)
    full = (shape[0] * blocks, *shape[1:])
    args = [a for _, a in inputs.values()] + [np.zeros(full, NP[el]) for _, el in outs]
    check = None
    if on_tileiras is not None:

        def check(cpu_args: list, gpu_args: list) -> None:
            # the inputs come back unchanged on every backend; the outputs are what is judged
            for x, y in zip(cpu_args[: len(inputs)], gpu_args[: len(inputs)], strict=True):
                assert np.array_equal(bits_of(x), bits_of(y)), "an input changed"
            on_tileiras(*(dict(zip(ops, a[len(inputs) :], strict=True)) for a in (cpu_args, gpu_args)))

    cpu, _ = run_both(
        text, "k", blocks, args, ulp=ulp, nan_payload=nan_payload, on_tileiras=check, tileiras_refuses=tileiras_refuses
    )
    return dict(zip(ops, cpu[len(inputs) :], strict=True))


def check_is_sound(check: Callable[[Outputs, Outputs], None], cpu: Outputs, good: Outputs, bad: Outputs) -> None:
    """An `on_tileiras` check accepts `good` (the results it is there to admit) and rejects
    `bad` (a corruption it must catch): run where no GPU is, so that it is neither vacuous
    nor wrong."""
    check(cpu, good)
    with pytest.raises(AssertionError):
        check(cpu, bad)


def nan_payloads_open(cpu: Outputs, got: Outputs) -> None:
    """Where the CPU interpreter's result is a NaN, any NaN (payload, sign); elsewhere bitwise."""
    for k, expected in cpu.items():
        nan = np.isnan(expected.astype(np.float64))
        assert np.array_equal(bits_of(expected)[~nan], bits_of(got[k])[~nan]), k
        assert np.isnan(got[k][nan].astype(np.float64)).all(), f"{k}: a NaN result is no NaN"


def with_other_nans(out: Outputs) -> tuple[Outputs, Outputs]:
    """(`out` with every NaN replaced by another NaN, `out` with one NaN replaced by 1.0):
    what nan_payloads_open must accept and reject."""
    good, bad = {}, {}
    for k, v in out.items():
        nan = np.isnan(v.astype(np.float64))
        u = bits_of(v).dtype.type
        mantissa, sign = u((1 << ml_dtypes.finfo(v.dtype).nmant) - 1), u(1 << (v.dtype.itemsize * 8 - 1))
        good[k] = np.where(nan, ((bits_of(v) | mantissa) ^ sign).view(v.dtype), v)  # another NaN, other sign
        bad[k] = v.copy()
        if nan.any():
            bad[k].reshape(-1)[np.flatnonzero(nan.reshape(-1))[0]] = 1.0
    assert any(np.isnan(v.astype(np.float64)).any() for v in out.values()), "no NaN to check"
    return good, bad


# -- values ----------------------------------------------------------------------------------------


def specials(t: str) -> list[float]:
    """±0, ±1, simple values, ±inf, NaN, ±max, ±min normal, subnormals and neighbours of 1."""
    p, emin, emax = FORMAT[t]
    big = (2 - 2.0 ** (1 - p)) * 2.0**emax
    tiny = 2.0**emin
    sub = 2.0 ** (emin - p + 1)
    values = [0.0, -0.0, 1.0, -1.0, 1.5, -2.5, 3.0, 0.1, -7.25, 1e-3, 100.0, np.inf, -np.inf, np.nan]
    values += [big, -big, tiny, -tiny, sub, -sub, tiny - sub, 3 * sub, 1 + 2.0 ** (1 - p), 1 - 2.0**-p, 0.5 * big]
    return values


def random_values(t: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Half random bit patterns (every exponent; a few NaN), half moderate random values."""
    dt = NP[t]
    width = dt.itemsize * 8
    bits = rng.integers(0, 1 << width, n // 2, dtype=np.uint64 if width == 64 else np.int64)
    pattern = bits.astype(f"u{dt.itemsize}").view(dt)
    moderate = (rng.standard_normal(n - n // 2) * np.exp2(rng.integers(-8, 9, n - n // 2))).astype(dt)
    return np.concatenate([pattern, moderate])


def pairs(t: str, n: int, seed: int = 0, arity: int = 2) -> list[np.ndarray]:
    """`arity` arrays of n values of type t: every pair (triple: diagonal) of special values,
    then random values."""
    rng = np.random.default_rng(seed)
    s = specials(t)
    if arity == 2:
        cols = [[x for x in s for _ in s], [y for _ in s for y in s]]
    else:
        cols = [list(rng.permutation(s * len(s))) for _ in range(arity)]
    out = []
    for col in cols:
        head = np.array(col[:n], dtype=np.float64).astype(NP[t])
        out.append(np.concatenate([head, random_values(t, n - len(head), rng)]))
    return out


def bits_of(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}")


# -- arithmetic --------------------------------------------------------------------------------------

ARITH = {"add": ("addf", 2), "sub": ("subf", 2), "mul": ("mulf", 2), "div": ("divf", 2), "sqrt": ("sqrt", 1)}


def arith_ops(t: str, suffix: str = "", tag: str = "", fma: bool = True) -> dict[str, tuple[str, str]]:
    ops = {}
    for name, (op, arity) in ARITH.items():
        operands = ", ".join(["%a", "%b"][:arity])
        ops[f"{name}{tag}"] = (f"{op} {operands}{suffix} : tile<1024x{t}>", t)
    if fma:
        ops[f"fma{tag}"] = (f"fma %a, %b, %c{suffix} : tile<1024x{t}>", t)
    return ops


@pytest.mark.parametrize("t", TYPES)
def test_arithmetic_nearest(t: str) -> None:
    """add sub mul div sqrt (and fma on f16/bf16/f32, exact there) on every special pair and
    random bit patterns: bitwise equal. f32 div/sqrt are div.rn/sqrt.rn, not Triton's `/`."""
    a, b, c = pairs(t, 4096, seed=1, arity=2) + [random_values(t, 4096, np.random.default_rng(2))]
    exact_fma = t in ("f16", "bf16", "f32")
    ops = arith_ops(t, fma=exact_fma)
    # f32: the interpreter computes approx / full exactly (approx divf: 0 for |b| > 2^126, as
    # documented), and so does the lowering
    if t == "f32":
        ops["div_approx"] = ("divf %a, %b rounding<approx> : tile<1024xf32>", t)
        ops["div_full"] = ("divf %a, %b rounding<full> : tile<1024xf32>", t)
        ops["sqrt_approx"] = ("sqrt %a rounding<approx> : tile<1024xf32>", t)
    inputs = {"a": (t, a), "b": (t, b), "c": (t, c)}
    if t != "f32":
        run_ops(ops, inputs, (1024,), 4)
        return
    check = _approx_div_sqrt_as_documented(a, b)
    out = run_ops(ops, inputs, (1024,), 4, on_tileiras=check)
    if not ON_GPU:  # sound: admits results 2 ulp off and the documented zeros; rejects 3 ulp
        good = {k: v.copy() for k, v in out.items()}
        bad = {k: v.copy() for k, v in out.items()}
        finite = np.isfinite(out["div_full"]) & (np.abs(out["div_full"]) < 1e30)
        i = int(np.flatnonzero(finite & (out["div_full"] != 0))[0])
        good["div_full"][i] = np.nextafter(np.nextafter(out["div_full"][i], np.float32(np.inf)), np.float32(np.inf))
        beyond = _rhs_beyond_2_126(b)
        good["div_approx"] = np.where(beyond, np.where(np.isinf(a), np.float32(np.nan), a * 0), out["div_approx"])
        bad["div_full"][i] = np.nextafter(good["div_full"][i], np.float32(np.inf))
        check_is_sound(check, out, good, bad)
        bad = {k: v.copy() for k, v in good.items()}
        with np.errstate(all="ignore"):  # quotients beyond 2^126 instead of the documented zeros
            bad["div_approx"] = np.where(beyond, a / b, out["div_approx"]).astype(np.float32)
        with pytest.raises(AssertionError):
            check(out, bad)


def _rhs_beyond_2_126(b: np.ndarray) -> np.ndarray:
    return (np.abs(b) > np.float32(2.0**126)) & np.isfinite(b)


def _approx_div_sqrt_as_documented(a: np.ndarray, b: np.ndarray) -> Callable[[Outputs, Outputs], None]:
    """The on_tileiras check of test_arithmetic_nearest[f32]: bitwise but for the approximate
    ops. divf `approx` and `full` are up to 2 ulp off ("the maximum ULP error is 2", cuda-tile
    Ops.td, DivFOp) and, with `approx`, 2^126 < |rhs| < 2^128 gives 0 (NaN for an infinite
    lhs), as the interpreter and our lowering give too. tileiras 13.5 does exactly
    that (its SASS: MUFU.RCP of rhs times lhs, a subnormal rhs and lhs scaled by 2^24 first;
    the reciprocal of a rhs beyond 2^126 is subnormal and flushes to 0): on an H200, 958 of
    4096 div_approx results differed from the interpreter's, the first 1 / FLT_MAX (2^-128
    against 0). sqrt `approx`: the op docs give no bound; tileiras' MUFU.SQRT is held to 2 ulp."""
    beyond = _rhs_beyond_2_126(b)

    def check(cpu: Outputs, got: Outputs) -> None:
        for k, v in cpu.items():
            if k not in ("div_approx", "div_full", "sqrt_approx"):
                assert_same(v, got[k], what=k, name="tileiras")
                continue
            near = beyond & ~np.isnan(a) if k == "div_approx" else np.zeros(v.shape, np.bool_)
            assert_same(v[~near], got[k][~near], ulp=2, what=k, name="tileiras")
            zero = near & np.isfinite(a)
            assert np.all(got[k][zero] == 0), f"{k}: |rhs| > 2^126 gives 0"
            assert np.isnan(got[k][near & ~zero]).all(), f"{k}: inf / rhs beyond 2^126 gives NaN"

    return check


@pytest.mark.parametrize("t", ("f16", "bf16", "f32"))
def test_arithmetic_directed_rounding(t: str) -> None:
    """Every op in rounding<zero|negative_inf|positive_inf>: pure Triton, exact (f64 value plus
    residual sign, then integer rounding), so the Triton interpreter must match bitwise."""
    rng = np.random.default_rng(3)
    a, b = pairs(t, 2048, seed=3)
    c = random_values(t, 2048, rng)
    # x + (-x) and friends: exact zeros, whose sign depends on the mode
    a[:64] = b[:64] = np.abs(random_values(t, 64, rng))
    c[:64] = (-(a[:64].astype(np.float64) * b[:64].astype(np.float64))).astype(NP[t])
    b[64:128] = (-a[64:128].astype(np.float64)).astype(NP[t])
    ops = {}
    for mode in MODES:
        ops.update(arith_ops(t, f" rounding<{mode}>", f"_{mode}"))
        # shapes (512,) x 4 blocks
    ops = {k: (v.replace("1024x", "512x"), el) for k, (v, el) in ops.items()}
    out = run_ops(ops, {"a": (t, a), "b": (t, b), "c": (t, c)}, (512,), 4)
    # the sign of an exact zero sum (IEEE 754): -0 toward -inf, +0 otherwise
    zero = np.flatnonzero((b.astype(np.float64) == -a.astype(np.float64)) & (a != 0) & np.isfinite(a))
    assert zero.size
    assert np.all(bits_of(out["add_negative_inf"][zero]) == bits_of(np.array(-0.0, NP[t])))
    assert np.all(bits_of(out["add_zero"][zero]) == 0)


_EXACT = {
    "add": lambda x, y, z: x + y,
    "sub": lambda x, y, z: x - y,
    "mul": lambda x, y, z: x * y,
    "div": lambda x, y, z: x / y if y else None,
    "fma": lambda x, y, z: x * y + z,
}


def _ftz_before_rounding(cpu: Outputs, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> Outputs:
    """The f32 flush_to_zero results of tileiras 13.5 as the CPU interpreter's, except that a
    result whose exact value (of the flushed inputs) lies below the smallest normal 2^-126 but
    rounds to it is a zero of its sign. (Here those exact values are 2^-126 - 2^-150 and
    2^-126 - ~2^-149, which FTZ hardware flushes whether it tests tininess before rounding
    or after rounding to 24 bits with an unbounded exponent.)"""
    tiny = Fraction(2) ** -126
    out = {}
    for k, v in cpu.items():
        out[k] = v.copy()
        op = _EXACT.get(k.split("_")[0])  # sqrt, max and min never round up to 2^-126
        for i in np.flatnonzero(np.abs(v) == np.float32(2.0**-126)) if op else ():
            x, y, z = (Fraction(float(w[i])) if abs(w[i]) >= 2.0**-126 else Fraction(0) for w in (a, b, c))
            exact = op(x, y, z)
            if exact is not None and abs(exact) < tiny:
                out[k][i] = np.copysign(np.float32(0), v[i])
    return out


def test_flush_to_zero_f32() -> None:
    """flush_to_zero on f32: subnormal inputs are zeros, results below the smallest normal
    after rounding are flushed; in every mode and for max/min."""
    a, b = pairs("f32", 4096, seed=5)
    c = random_values("f32", 4096, np.random.default_rng(6))
    ops = arith_ops("f32", " flush_to_zero", "_ftz")
    for mode in MODES:
        ops.update(arith_ops("f32", f" rounding<{mode}> flush_to_zero", f"_{mode}_ftz"))
    ops["max_ftz"] = ("maxf %a, %b flush_to_zero : tile<1024xf32>", "f32")
    ops["min_ftz"] = ("minf %a, %b flush_to_zero propagate_nan : tile<1024xf32>", "f32")

    # A tileiras defect: spec 000 (5.1.3, Note) says "the rounding step is applied first and
    # FTZ is applied to the rounded result", so an exact 2^-126 - 2^-150 rounds (nearest, and
    # away from zero in the directed modes) to the normal 2^-126 and stays. tileiras 13.5
    # compiles these ops to the FTZ instructions (FMUL.FTZ, FMUL.FTZ.RP, ... and CUDA's
    # div_ru_ftz routine: its sm_90 SASS), which flush it to 0 (seen on an H200: mulf nearest,
    # the 4 elements the model predicts). Asserted exactly, so that a fix shows.
    def tileiras_flushes_before_rounding(cpu: Outputs, got: Outputs) -> None:
        for k, v in _ftz_before_rounding(cpu, a, b, c).items():
            assert_same(v, got[k], what=k, name="tileiras")

    out = run_ops(
        ops,
        {"a": ("f32", a), "b": ("f32", b), "c": ("f32", c)},
        (1024,),
        4,
        on_tileiras=tileiras_flushes_before_rounding,
    )
    for k, v in out.items():
        tiny = (np.abs(v) < 2.0**-126) & (v != 0)
        assert not tiny.any(), k
    if not ON_GPU:  # the check admits the model and rejects the interpreter's own results
        check_is_sound(tileiras_flushes_before_rounding, out, _ftz_before_rounding(out, a, b, c), out)


def _short(t: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Values with at most 12 significant bits: their products are exact in f32 and f64."""
    m = rng.integers(-(2**11), 2**11, n).astype(np.float64)
    return (m * np.exp2(rng.integers(-20, 20, n))).astype(NP[t])


@pytest.mark.parametrize("t", ("f32", "f64"))
def test_fma_nearest(t: str) -> None:
    """f32/f64 fma is a real fused `tl.fma` (fma.rn in the PTX). Triton's interpreter computes
    `tl.fma` as x*y+z with two roundings: for f32 the lowering computes it there exactly
    instead (ops_float.fma_f32: f64 TwoSum), checked bitwise on random operands and on cases
    that a second rounding gets wrong; f64 is checked on operands whose product is exact
    (where both agree), and through the PTX instruction."""
    rng = np.random.default_rng(7)
    if t == "f32":
        a, b, c = (random_values(t, 1024, rng) for _ in range(3))
        # sums a second rounding gets wrong (the first three): a*b = 1 + 2^-22 + 2^-46 and
        # 1 + 2^-11 + 2^-24 (a tie of f32) exactly
        a[8:12] = b[8:12] = [1 + 2.0**-23, 1 + 2.0**-12, 1 + 2.0**-12, 1 + 2.0**-12]
        c[8:12] = [-(1 + 2.0**-22), 2.0**-70, -1.0, -(2.0**-70)]
    else:
        a, b, c = (_short(t, 1024, rng) for _ in range(3))
    a[:4] = [np.inf, 0.0, -0.0, np.nan]
    b[:4] = [0.0, -3.0, 5.0, 1.0]
    ops = {"fma": (f"fma %a, %b, %c : tile<256x{t}>", t)}
    if t == "f32":
        a[4:8] = [2.0**-140, 2.0**-126, 2.0**-70, -(2.0**-130)]
        b[4:8] = [1.0, 0.5, 2.0**-60, 3.0]
        ops["fma_ftz"] = ("fma %a, %b, %c flush_to_zero : tile<256xf32>", t)
    out = run_ops(ops, {"a": (t, a), "b": (t, b), "c": (t, c)}, (256,), 4)
    if t == "f32":  # the cases above are ones two roundings get wrong
        two = (a[8:12] * b[8:12]).astype(np.float32) + c[8:12]
        assert list(two.view(np.uint32) != out["fma"][8:12].view(np.uint32)) == [True, True, True, False]
    text = kernel_text(
        [("a", t), ("b", t), ("c", t)], [("fma", t)], [f"%fma_r = fma %a, %b, %c : tile<128x{t}>"], (128,)
    )
    assert ("_fp_fma_f32(a, b, c)" if t == "f32" else "tl.fma(a, b, c)") in source_of(text)
    (k,) = compile_for(text, arches=("sm_80",), use_cache=False)
    assert f"fma.rn.{t}" in k.asm["ptx"]


def test_f64_directed_rounding_is_inline_ptx() -> None:
    """f64 in a directed mode: the PTX instruction itself (exact by definition); Triton's
    interpreter cannot run it, so the triton-interpret backend refuses the kernel."""
    ops = {}
    for mode in MODES:
        ops.update(arith_ops("f64", f" rounding<{mode}>", f"_{mode}"))
    ops = {k: (v.replace("1024x", "128x"), el) for k, (v, el) in ops.items()}
    body = [f"%{name}_r = {text}" for name, (text, _) in ops.items()]
    text = kernel_text([("a", "f64"), ("b", "f64"), ("c", "f64")], [(n, "f64") for n in ops], body, (128,))
    for k in compile_for(text, use_cache=False):
        ptx = k.asm["ptx"]
        for op in ("add", "sub", "mul", "div", "sqrt", "fma"):
            for rnd in ("rz", "rm", "rp"):
                assert f"{op}.{rnd}.f64" in ptx, (op, rnd, k.target)
        assert k.source.inline_asm == ["addf", "subf", "mulf", "divf", "sqrt", "fma"]
    args = [np.ones(128)] * 3 + [np.zeros(128) for _ in ops]
    with pytest.raises((LowerError, LaunchError), match="inline PTX"):
        launch(load_module(text), "k", 1, args, backend="triton-interpret")


@pytest.mark.parametrize("t", ("f32", "f16", "bf16"))
def test_directed_rounding_is_the_instruction_on_the_gpu(t: str) -> None:
    """f32 in a directed mode: on the GPU PTX's own instruction (exact by definition), with
    flush_to_zero not .ftz (which flushes before rounding: test_flush_to_zero_f32) but the
    result flushed after; f16 and bf16: the f32 instruction in the mode, then a cvt in the
    mode (one rounding in effect). Under Triton's interpreter the f64 path, which it runs (no
    inline PTX is left to refuse the kernel)."""
    ops = {}
    for mode in MODES:
        ops.update(arith_ops(t, f" rounding<{mode}>", f"_{mode}"))
    if t == "f32":
        ops["add_ftz"] = ("addf %a, %b rounding<positive_inf> flush_to_zero : tile<1024xf32>", t)
    ops = {k: (v.replace("1024x", "128x"), el) for k, (v, el) in ops.items()}
    body = [f"%{name}_r = {text}" for name, (text, _) in ops.items()]
    text = kernel_text([("a", t), ("b", t), ("c", t)], [(n, t) for n in ops], body, (128,))
    module = load_module(text)
    (entry,) = module.entries()
    assert lower_entry(module, entry, "sm_90").not_interpretable() == []
    for k in compile_for(text, arches=("sm_80", "sm_90"), use_cache=False):
        ptx = k.asm["ptx"]
        for rnd in ("rz", "rm", "rp"):
            for op in ("add", "sub", "mul", "div", "sqrt", "fma"):
                assert f"{op}.{rnd}.f32" in ptx, (op, rnd, k.target)
            assert t == "f32" or f"cvt.{rnd}.{t}.f32" in ptx, (rnd, k.target)
        assert not re.search(r"\.ftz\b|\.f64\b", ptx), k.target  # no .ftz, no f64 path


# -- sign, ceil/floor, remf ----------------------------------------------------------------------------


@pytest.mark.parametrize("t", TYPES)
def test_abs_neg_ceil_floor(t: str) -> None:
    """Bit-exact on our backends: NaN signs too (absf clears, negf flips, the payload kept:
    checked with nan_payload). On tileiras a NaN's payload and sign are open (below)."""
    rng = np.random.default_rng(8)
    vals = np.array(specials(t) + [-0.5, 0.5, 2.5, -2.5, -1e-3, 255.5, -255.5], dtype=np.float64).astype(NP[t])
    a = np.concatenate([vals, random_values(t, 1024 - len(vals), rng)])
    nan = np.array([np.nan], NP[t])
    a[-2:] = nan
    a[-1:] = (bits_of(nan) ^ np.array(1 << (a.dtype.itemsize * 8 - 1), bits_of(nan).dtype)).view(NP[t])  # -NaN
    sign_ops = {name: (f"{name} %a : tile<256x{t}>", t) for name in ("absf", "negf")}
    # NaN inputs: Tile IR's absf is |x| and negf -x ("negates the sign of source"), and its
    # float ops are "performed by the target architecture's native floating-point instructions"
    # (cuda-tile Ops.td, AbsFOp / NegFOp); nothing fixes the NaN a NaN gives (spec 003 says
    # nothing of NaNs). tileiras 13.5 compiles both to an addition (its sm_90 SASS: FADD |x|,-0
    # for f32, HADD2 / HFMA2 for f16 / bf16, DADD -0,|x| for f64), which gives the canonical NaN
    # 0x7fff.. on f16/bf16/f32 and leaves an f64 NaN as it is (absf(-NaN) = -NaN): any NaN there.
    out = run_ops(sign_ops, {"a": (t, a)}, (256,), 4, nan_payload=True, on_tileiras=nan_payloads_open)
    if not ON_GPU:
        check_is_sound(nan_payloads_open, out, *with_other_nans(out))
    # (the payload of a NaN through ceil/floor is not specified: cvt.rpi may canonicalize it)
    ops = {name: (f"{name} %a : tile<256x{t}>", t) for name in ("ceil", "floor")}
    run_ops(ops, {"a": (t, a)}, (256,), 4)


def _fmod_pairs(t: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    a, b = pairs(t, 4096, seed=9)
    p, emin, emax = FORMAT[t]
    # far-apart exponents: the long division's every chunk
    n = 1024
    ea = rng.integers(emin - p + 1, emax + 1, n)
    eb = rng.integers(emin - p + 1, emax + 1, n)
    ma, mb = rng.random(n) + 1, rng.random(n) + 1
    a[-n:] = (ma * np.exp2(np.maximum(ea, eb).astype(float)) * rng.choice([-1, 1], n)).astype(NP[t])
    b[-n:] = (mb * np.exp2(np.minimum(ea, eb).astype(float)) * rng.choice([-1, 1], n)).astype(NP[t])
    return a, b


@pytest.mark.parametrize("t", ("f16", "bf16", "f32"))
def test_remf_exact(t: str) -> None:
    """C's fmod, exact (integer long division under Triton's interpreter, libdevice's fmodf on
    a GPU), on special pairs, random bit patterns and operands with far-apart exponents."""
    a, b = _fmod_pairs(t, np.random.default_rng(10))
    run_ops({"rem": (f"remf %a, %b : tile<1024x{t}>", t)}, {"a": (t, a), "b": (t, b)}, (1024,), 4)


@pytest.mark.parametrize("t", ("f16", "bf16", "f32", "f64"))
def test_remf_is_libdevices_fmod_on_the_gpu(t: str) -> None:
    """On the GPU every remf is libdevice's fmod (f16/bf16 through f32), not Triton's
    x - trunc(x/y)*y, nor (f16/bf16/f32) the 64-bit remainders of the long division that
    Triton's interpreter runs (which f64, libdevice only, cannot run there)."""
    text = kernel_text([("a", t), ("b", t)], [("rem", t)], [f"%rem_r = remf %a, %b : tile<64x{t}>"], (64,))
    module = load_module(text)
    (entry,) = module.entries()
    src = lower_entry(module, entry, "sm_90")
    assert "libdevice.fmod(" in src.text
    assert src.not_interpretable() == (["remf"] if t == "f64" else [])
    (k,) = compile_for(text, arches=("sm_90",), use_cache=False)
    ptx = k.asm["ptx"]
    assert "div.rn.f64" not in ptx and "rem.s64" not in ptx and "rem.u64" not in ptx, t


# -- comparisons, min/max ------------------------------------------------------------------------------

PREDICATES = ("equal", "not_equal", "less_than", "less_than_or_equal", "greater_than", "greater_than_or_equal")


@pytest.mark.parametrize("t", TYPES)
def test_cmpf_every_predicate_and_ordering(t: str) -> None:
    a, b = pairs(t, 1024, seed=11)
    b[-200:] = a[-200:]  # equal pairs
    ops = {
        f"{p}_{o}": (f"cmpf {p} {o} %a, %b : tile<1024x{t}> -> tile<1024xi1>", "i1")
        for p in PREDICATES
        for o in ("ordered", "unordered")
    }
    out = run_ops(ops, {"a": (t, a), "b": (t, b)}, (1024,))
    x, y = a.astype(np.float64), b.astype(np.float64)
    unordered = np.isnan(x) | np.isnan(y)
    with np.errstate(invalid="ignore"):
        assert np.array_equal(out["less_than_unordered"], (x < y) | unordered)
        assert np.array_equal(out["not_equal_ordered"], (x != y) & ~unordered)


def test_bf16_compares_are_bf16_instructions_from_sm_90() -> None:
    """On the GPU bf16 operands are compared as they are: sm_90 has setp.bf16 (HSETP2.BF16 in
    SASS), where widening each to f32 first cost an instruction an operand; before sm_90
    Triton widens them itself. Triton's interpreter compares in f32 (test above)."""
    ops = {f"{p}_unordered": (f"cmpf {p} unordered %a, %b : tile<128xbf16> -> tile<128xi1>", "i1") for p in PREDICATES}
    body = [f"%{name}_r = {text}" for name, (text, _) in ops.items()]
    text = kernel_text([("a", "bf16"), ("b", "bf16")], [(n, "i1") for n in ops], body, (128,))
    for k in compile_for(text, arches=("sm_80", "sm_90"), use_cache=False):
        setp = set(re.findall(r"setp\.\w+\.(\w+)", k.asm["ptx"]))
        assert setp == ({"f32"} if k.target.cc < 90 else {"bf16"}), (k.target, setp)


@pytest.mark.parametrize("t", TYPES)
def test_maxf_minf(t: str) -> None:
    """NaN loses against a number (propagate_nan: wins), +0 > -0, canonical NaN results:
    compared with NaN payloads (on tileiras, f64 NaN results: any NaN, below)."""
    a, b = pairs(t, 1024, seed=12)
    ops = {}
    for op in ("maxf", "minf"):
        ops[op] = (f"{op} %a, %b : tile<1024x{t}>", t)
        ops[f"{op}_nan"] = (f"{op} %a, %b propagate_nan : tile<1024x{t}>", t)
    # maxf / minf return "a canonical NaN" (cuda-tile Ops.td, MaxFOp / MinFOp), a bit pattern
    # the op docs do not give. f16/bf16/f32: tileiras' (HMNMX2 / FMNMX) is the interpreter's,
    # 0x7fff.. (checked bitwise). f64 has no such instruction: tileiras 13.5 returns an input
    # NaN with its quiet bit set (DSETP.MAX + LOP3 |0x80000 in its SASS: maxf(NaN, NaN) =
    # 0x7ff8000000000000 for NumPy's NaNs) and, with propagate_nan, the constant
    # 0x7ff8000000000000 (FSEL of 0x7ff80000 into the high word): NaNs the spec leaves open,
    # so any NaN there.
    check = nan_payloads_open if t == "f64" else None
    out = run_ops(ops, {"a": (t, a), "b": (t, b)}, (1024,), nan_payload=True, on_tileiras=check)
    if check is not None and not ON_GPU:
        check_is_sound(check, out, *with_other_nans(out))


@pytest.mark.parametrize("t", TYPES)
def test_maxf_minf_signaling_nans(t: str) -> None:
    """A signaling NaN loses against a number as a quiet one does, elementwise and in a
    reduction (the interpreter's NumPy fmax took one for the result; fuzz seed 8162)."""
    a, b = pairs(t, 1024, seed=14)
    patterns = np.array(SIGNALING_NAN[t], dtype=bits_of(a).dtype)
    bits_of(a)[::7] = patterns[np.arange(0, 1024, 7) % 2]
    bits_of(b)[3::11] = patterns[np.arange(3, 1024, 11) % 2]
    ops = {
        "max": (f"maxf %a, %b : tile<1024x{t}>", t),
        "min": (f"minf %a, %b : tile<1024x{t}>", t),
        "max_nan": (f"maxf %a, %b propagate_nan : tile<1024x{t}>", t),
    }
    check = nan_payloads_open if t == "f64" else None  # as in test_maxf_minf
    out = run_ops(ops, {"a": (t, a), "b": (t, b)}, (1024,), nan_payload=True, on_tileiras=check)
    with np.errstate(invalid="ignore"):
        wins = np.isnan(a) & ~np.isnan(b)
    assert wins.sum() > 100
    assert np.array_equal(bits_of(out["max"])[wins], bits_of(b)[wins])
    assert np.array_equal(bits_of(out["min"])[wins], bits_of(b)[wins])
    assert np.isnan(out["max_nan"][wins]).all()


# -- shapes ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("t", "shape", "blocks"),
    [("f32", (1,), 3), ("f16", (16,), 2), ("bf16", (4096,), 1), ("f64", (64, 64), 1), ("f32", (8, 4, 8), 2)],
)
def test_shapes(t: str, shape: tuple[int, ...], blocks: int) -> None:
    """A mix of ops (nearest and directed, compare, max, rem) on 1-element, 2-D and 3-D tiles."""
    n = int(np.prod(shape)) * blocks
    full = (shape[0] * blocks, *shape[1:])
    a, b = (x[np.random.default_rng(n).permutation(4096)[:n]].reshape(full) for x in pairs(t, 4096, seed=13))
    tt = tile_type(shape, t)
    ops = {
        "add": (f"addf %a, %b : {tt}", t),
        "div": (f"divf %a, %b : {tt}", t),
        "sqrt": (f"sqrt %a : {tt}", t),
        "mul_up": (f"mulf %a, %b rounding<positive_inf> : {tt}", t) if t != "f64" else (f"mulf %a, %b : {tt}", t),
        "lt": (f"cmpf less_than unordered %a, %b : {tt} -> {tile_type(shape, 'i1')}", "i1"),
        "max": (f"maxf %a, %b : {tt}", t),
        "neg": (f"negf %a : {tt}", t),
        "floor": (f"floor %a : {tt}", t),
    }
    if t != "f64":
        ops["rem"] = (f"remf %a, %b : {tt}", t)
    run_ops(ops, {"a": (t, a), "b": (t, b)}, shape, blocks)


@pytest.mark.parametrize("t", ("f32", "bf16"))
def test_zero_dimensional_tiles(t: str) -> None:
    """0-d tiles (scalar parameters, passed as bits): results through a reshape."""
    ops = {
        "add": f"addf %a, %b : tile<{t}>",
        "add_dn": f"addf %a, %b rounding<negative_inf> : tile<{t}>",
        "fma_up": f"fma %a, %b, %a rounding<positive_inf> : tile<{t}>",
        "max": f"maxf %a, %b : tile<{t}>",
        "rem": f"remf %a, %b : tile<{t}>",
        "abs": f"absf %a : tile<{t}>",
    }
    body = [f"%{n}_r = {op}" for n, op in ops.items()]
    text = kernel_text([], [(n, t) for n in ops], body, (1,), scalars=[("a", t), ("b", t)],
                       out_shapes={n: () for n in ops})  # fmt: skip
    for x, y in [(1.0, 2.0**-30), (-0.0, 0.0), (np.nan, 3.0), (-7.5, 2.0), (1e30, -1e-30)]:
        args = [np.array(x).astype(NP[t]), np.array(y).astype(NP[t])] + [np.zeros(1, NP[t]) for _ in ops]
        run_both(text, "k", 1, args)


# -- compiling ---------------------------------------------------------------------------------------------


def _family_kernel(t: str) -> str:
    tt = f"tile<128x{t}>"
    ops = {
        "add": "addf %a, %b",
        "div": "divf %a, %b",
        "sqrt": "sqrt %a",
        "fma": "fma %a, %b, %a",
        "mulz": "mulf %a, %b rounding<zero>",
        "subm": "subf %a, %b rounding<negative_inf>",
        "fmap": "fma %a, %b, %a rounding<positive_inf>",
        "rem": "remf %a, %b",
        "max": "maxf %a, %b propagate_nan",
        "neg": "negf %a",
        "ceil": "ceil %a",
    }
    body = [f"%{name}_r = {text} : {tt}" for name, text in ops.items()]
    body.append(f"%lt_r = cmpf less_than unordered %a, %b : {tt} -> tile<128xi1>")
    return kernel_text([("a", t), ("b", t)], [*((n, t) for n in ops), ("lt", "i1")], body, (128,))


def test_float_family_compiles_for_every_target() -> None:
    """Every float op family on f32 compiles for sm_80/sm_90/sm_100 (f16 and bf16 for sm_80,
    f64 in the tests above); the PTX has the correctly rounded instructions, no approximate
    division or square root, and no inline PTX."""
    for k in compile_for(_family_kernel("f32"), use_cache=False):
        ptx = k.asm["ptx"]
        assert "div.rn.f32" in ptx and "sqrt.rn.f32" in ptx and "fma.rn.f32" in ptx
        assert "div.full" not in ptx and "sqrt.approx" not in ptx
        assert k.source.inline_asm == []
    for t, native in (("f16", "add.rn.f16"), ("bf16", "fma.rn.bf16")):
        (k,) = compile_for(_family_kernel(t), arches=("sm_80",), use_cache=False)
        assert native in k.asm["ptx"] and "div.full" not in k.asm["ptx"]
