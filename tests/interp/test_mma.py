"""`mmaf`, `mmai` and `mmaf_scaled` on the interpreter.

Expectations: exact sums of exact products computed with Python's `math.fsum` (float
mma) or Python integers (mmai), compared with the error bounds documented in
compiler/interp/ops_mma.py."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from tests.interp.util import eval_kernel, kernel

RNG = np.random.default_rng(5)

DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "f4E2M1FN": np.dtype(ml_dtypes.float4_e2m1fn),
}


def tile(shape: tuple[int, ...], element: str) -> str:
    return f"tile<{'x'.join(map(str, shape))}x{element}>"


def raw(values: np.ndarray, element: str) -> bytes:
    if element == "tf32":  # 19-bit patterns (the top bits of an f32), three bytes each
        bits = (np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) >> 13).astype("<u4")
        return b"".join(int(b).to_bytes(3, "little") for b in bits.reshape(-1))
    return np.ascontiguousarray(values).tobytes()


def const(name: str, values: np.ndarray, element: str) -> str:
    return f'%{name} = constant <{element}: "0x{raw(values, element).hex().upper()}"> : {tile(values.shape, element)}'


def exact_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact result (as the float64 nearest to it, via fsum) and the sum of magnitudes."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    out = np.empty(c.shape)
    mag = np.empty(c.shape)
    for idx in np.ndindex(*c.shape):
        *batch, i, j = idx
        terms = [float(x) * float(y) for x, y in zip(a[(*batch, i)], b[(*batch, slice(None), j)])]
        out[idx] = math.fsum([*terms, float(c[idx])])
        mag[idx] = math.fsum([abs(t) for t in terms]) + abs(float(c[idx]))
    return out, mag


def random_values(shape, element, scale=1.0) -> np.ndarray:
    x = RNG.standard_normal(shape) * scale
    if element == "tf32":
        bits = x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
        return bits.view(np.float32)
    return x.astype(DTYPES[element])


def run_mmaf(a, b, c, in_el, acc_el, flags="") -> np.ndarray:
    text = kernel(f"""{const("a", a, in_el)}
    {const("b", b, in_el)}
    {const("c", c, acc_el)}
    %r = mmaf %a, %b, %c{flags} : {tile(a.shape, in_el)}, {tile(b.shape, in_el)}, {tile(c.shape, acc_el)}""")
    r = eval_kernel(text)["r"]
    assert r.shape == (1, *c.shape) and r.dtype == DTYPES[acc_el]
    return r[0]


@pytest.mark.parametrize(
    ("in_el", "acc_el"),
    [("f16", "f32"), ("bf16", "f32"), ("tf32", "f32"), ("f8E4M3FN", "f32"), ("f8E5M2", "f32")],
)
@pytest.mark.parametrize("batched", [False, True])
def test_mmaf_f32_accumulate_within_bound(in_el, acc_el, batched):
    m, k, n = 8, 32, 16
    lead = (2,) if batched else ()
    a = random_values((*lead, m, k), in_el)
    b = random_values((*lead, k, n), in_el)
    c = random_values((*lead, m, n), acc_el)
    r = run_mmaf(a, b, c, in_el, acc_el)
    exact, mag = exact_mma(a.astype(np.float64), b.astype(np.float64), c)
    bound = (k + 1) * 2.0**-24 * mag
    assert np.all(np.abs(r.astype(np.float64) - exact) <= bound)


@pytest.mark.parametrize("in_el", ["f16", "f8E4M3FN", "f8E5M2"])
def test_mmaf_f16_accumulator(in_el):
    m, k, n = 4, 16, 8
    a, b = random_values((m, k), in_el), random_values((k, n), in_el)
    c = random_values((m, n), "f16")
    r = run_mmaf(a, b, c, in_el, "f16")
    exact, mag = exact_mma(a.astype(np.float64), b.astype(np.float64), c.astype(np.float64))
    # f32 summation bound, then one rounding to f16 (half an ulp, relative 2**-11).
    bound = (k + 1) * 2.0**-24 * mag * (1 + 2.0**-11) + 2.0**-11 * np.abs(exact) + 2.0**-25
    assert np.all(np.abs(r.astype(np.float64) - exact) <= bound)


def test_mmaf_small_integers_are_exact():
    a = RNG.integers(-8, 8, (16, 32)).astype(np.float16)
    b = RNG.integers(-8, 8, (32, 16)).astype(np.float16)
    c = RNG.integers(-100, 100, (16, 16)).astype(np.float32)
    r = run_mmaf(a, b, c, "f16", "f32")
    np.testing.assert_array_equal(r, a.astype(np.int64) @ b.astype(np.int64) + c.astype(np.int64))


def test_mmaf_f32_inputs_nearly_correctly_rounded():
    m, k, n = 4, 64, 8
    a, b, c = random_values((m, k), "f32"), random_values((k, n), "f32"), random_values((m, n), "f32")
    r = run_mmaf(a, b, c, "f32", "f32")
    exact, mag = exact_mma(a, b, c)
    assert np.all(np.abs(r.astype(np.float64) - exact) <= 2.0**-24 * np.abs(exact) + (k + 1) * 2.0**-53 * mag)


def test_mmaf_f64():
    a, b, c = random_values((2, 4, 16), "f64"), random_values((2, 16, 4), "f64"), random_values((2, 4, 4), "f64")
    r = run_mmaf(a, b, c, "f64", "f64")
    exact, mag = exact_mma(a, b, c)
    assert np.all(np.abs(r - exact) <= 17 * 2.0**-53 * mag)


def test_mmaf_fast_acc_gives_the_same_values():
    a, b = random_values((8, 32), "f8E4M3FN"), random_values((32, 8), "f8E4M3FN")
    c = random_values((8, 8), "f32")
    fast = run_mmaf(a, b, c, "f8E4M3FN", "f32", " fast_acc")
    assert fast.tobytes() == run_mmaf(a, b, c, "f8E4M3FN", "f32").tobytes()


def test_mmaf_inf_and_nan():
    a = np.ones((2, 2), dtype=np.float16)
    a[0, 0] = np.inf
    b = np.ones((2, 2), dtype=np.float16)
    c = np.zeros((2, 2), dtype=np.float32)
    c[1, 1] = np.nan
    r = run_mmaf(a, b, c, "f16", "f32")
    assert np.isinf(r[0]).all() and r[1, 0] == 2.0 and np.isnan(r[1, 1])


# -- mmai ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sl", ["signed", "unsigned"])
@pytest.mark.parametrize("sr", ["signed", "unsigned"])
@pytest.mark.parametrize("batched", [False, True])
def test_mmai_signedness_and_wrap(sl, sr, batched):
    m, k, n = 4, 64, 8
    lead = (2,) if batched else ()
    a = RNG.integers(-128, 128, (*lead, m, k), dtype=np.int16).astype(np.int8)
    b = RNG.integers(-128, 128, (*lead, k, n), dtype=np.int16).astype(np.int8)
    # Accumulators near the ends of i32, so that many results wrap around.
    c = RNG.choice(np.array([2**31 - 1000, -(2**31) + 1000, 0], dtype=np.int64), (*lead, m, n)).astype(np.int32)
    text = kernel(f"""{const("a", a, "i8")}
    {const("b", b, "i8")}
    {const("c", c, "i32")}
    %r = mmai %a, %b, %c {sl} {sr} : {tile(a.shape, "i8")}, {tile(b.shape, "i8")}, {tile(c.shape, "i32")}""")
    r = eval_kernel(text)["r"][0]
    av = a.astype(np.int64) % 256 if sl == "unsigned" else a.astype(np.int64)
    bv = b.astype(np.int64) % 256 if sr == "unsigned" else b.astype(np.int64)
    for idx in np.ndindex(*c.shape):
        *batch, i, j = idx
        total = sum(int(x) * int(y) for x, y in zip(av[(*batch, i)], bv[(*batch, slice(None), j)])) + int(c[idx])
        wrapped = (total + 2**31) % 2**32 - 2**31
        assert int(r[idx]) == wrapped


def test_mmai_per_block_lhs():
    # The lhs differs per tile block (block id + 1 everywhere), rhs and acc are uniform.
    text = kernel("""%bx, %by, %bz = get_tile_block_id : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %v = addi %bx, %one : tile<i32>
    %w = trunci %v : tile<i32> -> tile<i8>
    %s = reshape %w : tile<i8> -> tile<1x1xi8>
    %a = broadcast %s : tile<1x1xi8> -> tile<2x4xi8>
    %b = constant <i8: 3> : tile<4x2xi8>
    %c = constant <i32: 1> : tile<2x2xi32>
    %r = mmai %a, %b, %c signed signed : tile<2x4xi8>, tile<4x2xi8>, tile<2x2xi32>""")
    r = eval_kernel(text, grid_positions=[0, 1, 2])["r"]
    assert r.shape == (3, 2, 2)
    for g in range(3):
        assert (r[g] == (g + 1) * 3 * 4 + 1).all()


# -- mmaf_scaled -------------------------------------------------------------------------------------------


def random_scales(shape, element) -> np.ndarray:
    if element == "f8E8M0FNU":
        return (2.0 ** RNG.integers(-6, 7, shape)).astype(DTYPES[element])
    return RNG.choice([0.5, 0.75, 1.0, 1.5, 2.0, 3.0], shape).astype(DTYPES[element])


def scaled_reference(a, b, c, sa, sb, block):
    a64 = a.astype(np.float64) * np.repeat(sa.astype(np.float64), block, axis=-1)
    b64 = b.astype(np.float64) * np.repeat(sb.astype(np.float64), block, axis=-2)
    return exact_mma(a64, b64, c)


@pytest.mark.parametrize(
    ("in_el", "scale_el", "block"),
    [
        ("f8E4M3FN", "f8E8M0FNU", 32),
        ("f8E5M2", "f8E8M0FNU", 32),
        ("f4E2M1FN", "f8E8M0FNU", 32),
        ("f4E2M1FN", "f8E8M0FNU", 16),
        ("f4E2M1FN", "f8E4M3FN", 16),
    ],
)
@pytest.mark.parametrize("batched", [False, True])
def test_mmaf_scaled(in_el, scale_el, block, batched):
    m, k, n = 4, 64, 8
    lead = (2,) if batched else ()
    a = random_values((*lead, m, k), in_el, scale=2.0)
    b = random_values((*lead, k, n), in_el, scale=2.0)
    c = random_values((*lead, m, n), "f32")
    sa = random_scales((*lead, m, k // block), scale_el)
    sb = random_scales((*lead, k // block, n), scale_el)
    text = kernel(f"""{const("a", a, in_el)}
    {const("b", b, in_el)}
    {const("c", c, "f32")}
    {const("sa", sa, scale_el)}
    {const("sb", sb, scale_el)}
    %r = mmaf_scaled %a, %b, %c, %sa, %sb : {tile(a.shape, in_el)}, {tile(b.shape, in_el)}, {tile(c.shape, "f32")},
        {tile(sa.shape, scale_el)}, {tile(sb.shape, scale_el)}""")
    r = eval_kernel(text)["r"][0]
    exact, mag = scaled_reference(a, b, c, sa, sb, block)
    assert r.dtype == np.float32
    assert np.all(np.abs(r.astype(np.float64) - exact) <= 2.0**-24 * np.abs(exact) + (k + 1) * 2.0**-53 * mag)


def test_mmaf_scaled_nan_scale_and_overflow():
    m, k, n = 2, 32, 2
    a = np.ones((m, k), dtype=DTYPES["f8E4M3FN"])
    b = np.full((k, n), 448.0, dtype=DTYPES["f8E4M3FN"])
    c = np.zeros((m, n), dtype=np.float32)
    sa = np.array([[1.0], [2.0**127]], dtype=DTYPES["f8E8M0FNU"])
    sb = np.array([[1.0, np.nan]], dtype=DTYPES["f8E8M0FNU"])  # 0xFF: NaN
    assert sb.view(np.uint8)[0, 1] == 0xFF
    text = kernel(f"""{const("a", a, "f8E4M3FN")}
    {const("b", b, "f8E4M3FN")}
    {const("c", c, "f32")}
    {const("sa", sa, "f8E8M0FNU")}
    {const("sb", sb, "f8E8M0FNU")}
    %r = mmaf_scaled %a, %b, %c, %sa, %sb : tile<2x32xf8E4M3FN>, tile<32x2xf8E4M3FN>, tile<2x2xf32>,
        tile<2x1xf8E8M0FNU>, tile<1x2xf8E8M0FNU>""")
    r = eval_kernel(text)["r"][0]
    assert r[0, 0] == 32 * 448.0
    assert np.isnan(r[:, 1]).all()
    assert r[1, 0] == np.inf  # 32 * 448 * 2**127 exceeds f32
