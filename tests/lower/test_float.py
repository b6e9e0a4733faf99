"""The Triton lowering of the float ops (compiler/lower/ops_float.py) against the CPU
interpreter: every op on f16/bf16/f32/f64, each rounding mode, flush_to_zero, propagate_nan,
cmpf predicates and orderings, on edge values (±0, subnormals, ±inf, NaN, max, min normal)
and random bit patterns, several shapes; and compiles for sm_80/sm_90/sm_100 with checks of
the PTX of the ops whose exact path Triton's interpreter cannot run (f32/f64 fma in nearest
mode, f64 directed rounding, f64 remf).

The kernel builder and value generators here are shared by test_math and test_conversion.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from compiler.lower.codegen import LowerError
from compiler.runtime import LaunchError, launch, load_module

from .harness import compile_for, kernel_text, run_both, source_of, tile_type

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


def run_ops(
    ops: dict[str, tuple[str, str]],
    inputs: dict[str, tuple[str, np.ndarray]],
    shape: tuple[int, ...],
    blocks: int = 1,
    ulp: int = 0,
    nan_payload: bool = False,
) -> dict[str, np.ndarray]:
    """`ops`: output name -> (op text with its types, result element type); `inputs`: name
    -> (element type, array of shape (shape[0] * blocks, *shape[1:])). Runs both backends,
    which must agree (bitwise, or within `ulp`); returns the CPU interpreter's outputs."""
    body = [f"%{name}_r = {text}" for name, (text, _) in ops.items()]
    outs = [(name, elem) for name, (_, elem) in ops.items()]
    text = kernel_text([(n, el) for n, (el, _) in inputs.items()], outs, body, shape, blocks)
    full = (shape[0] * blocks, *shape[1:])
    args = [a for _, a in inputs.values()] + [np.zeros(full, NP[el]) for _, el in outs]
    cpu, _ = run_both(text, "k", blocks, args, ulp=ulp, nan_payload=nan_payload)
    return dict(zip(ops, cpu[len(inputs) :], strict=True))


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
    """add sub mul div sqrt (and fma on f16/bf16, exact there) on every special pair and
    random bit patterns: bitwise equal. f32 div/sqrt are div.rn/sqrt.rn, not Triton's `/`."""
    a, b, c = pairs(t, 4096, seed=1, arity=2) + [random_values(t, 4096, np.random.default_rng(2))]
    exact_fma = t in ("f16", "bf16")
    ops = arith_ops(t, fma=exact_fma)
    if t == "f32":  # the interpreter computes approx / full exactly, and so does the lowering
        ops["div_approx"] = ("divf %a, %b rounding<approx> : tile<1024xf32>", t)
        ops["div_full"] = ("divf %a, %b rounding<full> : tile<1024xf32>", t)
        ops["sqrt_approx"] = ("sqrt %a rounding<approx> : tile<1024xf32>", t)
    inputs = {"a": (t, a), "b": (t, b), "c": (t, c)}
    run_ops(ops, inputs, (1024,), 4)


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


def test_flush_to_zero_f32() -> None:
    """flush_to_zero on f32: subnormal inputs are zeros, results below the smallest normal
    after rounding are flushed; in every mode and for max/min."""
    a, b = pairs("f32", 4096, seed=5)
    c = random_values("f32", 4096, np.random.default_rng(6))
    ops = arith_ops("f32", " flush_to_zero", "_ftz", fma=False)  # nearest fma: test_fma_nearest
    for mode in MODES:
        ops.update(arith_ops("f32", f" rounding<{mode}> flush_to_zero", f"_{mode}_ftz"))
    ops["max_ftz"] = ("maxf %a, %b flush_to_zero : tile<1024xf32>", "f32")
    ops["min_ftz"] = ("minf %a, %b flush_to_zero propagate_nan : tile<1024xf32>", "f32")
    out = run_ops(ops, {"a": ("f32", a), "b": ("f32", b), "c": ("f32", c)}, (1024,), 4)
    for k, v in out.items():
        tiny = (np.abs(v) < 2.0**-126) & (v != 0)
        assert not tiny.any(), k


def _short(t: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Values with at most 12 significant bits: their products are exact in f32 and f64."""
    m = rng.integers(-(2**11), 2**11, n).astype(np.float64)
    return (m * np.exp2(rng.integers(-20, 20, n))).astype(NP[t])


@pytest.mark.parametrize("t", ("f32", "f64"))
def test_fma_nearest(t: str) -> None:
    """f32/f64 fma is a real fused `tl.fma` (fma.rn in the PTX). Triton's interpreter computes
    x*y+z with two roundings, so it is checked on operands whose product is exact (where both
    agree), and on a case it cannot reproduce through the PTX instruction."""
    rng = np.random.default_rng(7)
    a, b, c = (_short(t, 1024, rng) for _ in range(3))
    a[:4] = [np.inf, 0.0, -0.0, np.nan]
    b[:4] = [0.0, -3.0, 5.0, 1.0]
    ops = {"fma": (f"fma %a, %b, %c : tile<256x{t}>", t)}
    if t == "f32":
        a[4:8] = [2.0**-140, 2.0**-126, 2.0**-70, -(2.0**-130)]
        b[4:8] = [1.0, 0.5, 2.0**-60, 3.0]
        ops["fma_ftz"] = ("fma %a, %b, %c flush_to_zero : tile<256xf32>", t)
    run_ops(ops, {"a": (t, a), "b": (t, b), "c": (t, c)}, (256,), 4)
    text = kernel_text(
        [("a", t), ("b", t), ("c", t)], [("fma", t)], [f"%fma_r = fma %a, %b, %c : tile<128x{t}>"], (128,)
    )
    assert "tl.fma(a, b, c)" in source_of(text)
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


# -- sign, ceil/floor, remf ----------------------------------------------------------------------------


@pytest.mark.parametrize("t", TYPES)
def test_abs_neg_ceil_floor(t: str) -> None:
    """Bit-exact: NaN signs too (absf clears, negf flips: checked with nan_payload)."""
    rng = np.random.default_rng(8)
    vals = np.array(specials(t) + [-0.5, 0.5, 2.5, -2.5, -1e-3, 255.5, -255.5], dtype=np.float64).astype(NP[t])
    a = np.concatenate([vals, random_values(t, 1024 - len(vals), rng)])
    nan = np.array([np.nan], NP[t])
    a[-2:] = nan
    a[-1:] = (bits_of(nan) ^ np.array(1 << (a.dtype.itemsize * 8 - 1), bits_of(nan).dtype)).view(NP[t])  # -NaN
    sign_ops = {name: (f"{name} %a : tile<256x{t}>", t) for name in ("absf", "negf")}
    run_ops(sign_ops, {"a": (t, a)}, (256,), 4, nan_payload=True)
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
    """C's fmod, exact (integer long division), on special pairs, random bit patterns and
    operands with far-apart exponents."""
    a, b = _fmod_pairs(t, np.random.default_rng(10))
    run_ops({"rem": (f"remf %a, %b : tile<1024x{t}>", t)}, {"a": (t, a), "b": (t, b)}, (1024,), 4)


def test_remf_f64_uses_libdevice_fmod() -> None:
    text = kernel_text([("a", "f64"), ("b", "f64")], [("rem", "f64")], ["%rem_r = remf %a, %b : tile<64xf64>"], (64,))
    assert "libdevice.fmod(a, b)" in source_of(text)
    (k,) = compile_for(text, arches=("sm_90",), use_cache=False)
    assert "div.rn.f64" not in k.asm["ptx"]  # not Triton's x - trunc(x/y)*y


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


@pytest.mark.parametrize("t", TYPES)
def test_maxf_minf(t: str) -> None:
    """NaN loses against a number (propagate_nan: wins), +0 > -0, canonical NaN results:
    compared with NaN payloads."""
    a, b = pairs(t, 1024, seed=12)
    ops = {}
    for op in ("maxf", "minf"):
        ops[op] = (f"{op} %a, %b : tile<1024x{t}>", t)
        ops[f"{op}_nan"] = (f"{op} %a, %b propagate_nan : tile<1024x{t}>", t)
    run_ops(ops, {"a": (t, a), "b": (t, b)}, (1024,), nan_payload=True)


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
    for t, native in (("f16", "add.rn.f16"), ("bf16", "cvt.f64.f32")):
        (k,) = compile_for(_family_kernel(t), arches=("sm_80",), use_cache=False)
        assert native in k.asm["ptx"] and "div.full" not in k.asm["ptx"]
