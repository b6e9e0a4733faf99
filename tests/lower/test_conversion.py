"""The Triton lowering of `ftof`, `ftoi`, `itof` (compiler/lower/ops_conversion.py) against the
CPU interpreter, bitwise: every pair of float formats (f16, bf16, f32, tf32, f64, f8E4M3FN,
f8E5M2, f8E8M0FNU), the f8 sources exhaustively, f16/bf16 sources exhaustively, f32/f64
sources on specials, random bit patterns and values at and next to the rounding midpoints of
every narrower format; float -> i1..i64 signed/unsigned around the saturation bounds;
i1..i64 signed/unsigned -> every float format, near the rounding ties. Compiles for
sm_80/sm_90/sm_100 (f8 conversions are integer code: no fp8 instruction is needed, so sm_80
works).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from compiler.interp import rounding
from compiler.verify.ops_conversion import ftof_exact, ftof_rounding_modes

from .harness import ON_GPU, compile_for
from .test_float import NP, bits_of, check_is_sound, random_values, run_ops, specials

# The expected values are computed by NumPy from edge inputs (signaling NaNs, infinities, values
# past a type's range), whose warnings about them say nothing. (The interpreter's own warnings
# are errors in tests/interp; the triton-interpret backend's, tests/lower/test_failures.py.)
pytestmark = pytest.mark.filterwarnings(
    "ignore:invalid value encountered:RuntimeWarning", "ignore:overflow encountered in cast:RuntimeWarning"
)

FLOATS = ("f16", "bf16", "f32", "tf32", "f64", "f8E4M3FN", "f8E5M2", "f8E8M0FNU")
INTS = (1, 8, 16, 32, 64)
NARROW = {"f32": 24, "tf32": 11, "bf16": 8, "f16": 11, "f8E5M2": 3, "f8E4M3FN": 4}


def _all_patterns(t: str) -> np.ndarray:
    width = NP[t].itemsize * 8
    return np.arange(1 << width, dtype=np.uint64).astype(f"u{width // 8}").view(NP[t])


def _near_midpoints(rng: np.random.Generator, n: int, wide: str) -> np.ndarray:
    """Values of `wide` (f32/f64) on the rounding midpoints of each narrower format and one
    `wide` ulp either side of them, over the formats' whole exponent ranges."""
    out = []
    for fmt, p in NARROW.items():
        if fmt == "f32" and wide == "f32":
            continue
        f = rounding.FORMATS[fmt]
        e = rng.integers(f.emin - p, int(np.log2(f.max_finite)) + 2, n)
        grid = np.floor((rng.random(n) + 1) * 2.0 ** (p - 1)) * np.exp2((e - p + 1).astype(float))
        mid = (grid + np.exp2((e - p).astype(float))) * rng.choice([-1, 1], n)
        mid = mid.astype(NP[wide])
        step = rng.choice([-1, 0, 1], n)
        out.append(np.where(step == 0, mid, np.nextafter(mid, np.where(step > 0, np.inf, -np.inf).astype(NP[wide]))))
    return np.concatenate(out)


def float_inputs(t: str, n: int = 4096, seed: int = 0) -> np.ndarray:
    if t in ("f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f16", "bf16"):
        return _all_patterns(t)
    rng = np.random.default_rng(seed)
    base = "f32" if t == "tf32" else t
    s = np.array(specials(base) + [448.0, 464.0, 480.0, 57344.0, 61440.0, 65504.0, 65520.0, 2.0**127, 2.0**-127,
                                   2.0**-133, 2.0**-150, 3.0 * 2.0**-150], dtype=np.float64)  # fmt: skip
    mids = _near_midpoints(rng, (n - len(s)) // 12, base)
    x = np.concatenate([s.astype(NP[base]), mids])
    x = np.concatenate([x, random_values(base, n - len(x), rng)])
    if t == "tf32":  # tf32 tiles hold tf32 values only
        x = rounding.round_to(x, "tf32")
    return x


def _ftof_ops(src: str, shape: tuple[int, ...]) -> dict[str, tuple[str, str]]:
    tt = "x".join(map(str, shape))
    ops = {}
    for dst in FLOATS:
        if dst == src:
            continue
        modes, _ = ftof_rounding_modes(src, dst)
        for mode in modes:
            if mode != "nearest_even" and ftof_exact(src, dst):
                continue  # the same values (and tileiras fails some: tests/bytecode/test_ftof_rounding.py)
            r = "" if mode == "nearest_even" else f" rounding<{mode}>"
            ops[f"{dst}_{mode}"] = (f"ftof %a{r} : tile<{tt}x{src}> -> tile<{tt}x{dst}>", dst)
    return ops


# tileiras 13.5 refuses every kernel with an f8E8M0FNU value for sm_90, the GPU the suite runs
# on ("Incompatibility with architecture 'sm_90': unsupported type 'f8E8M0FNU'").
E8M0_REFUSED = r"unsupported type 'f8E8M0FNU'"


@pytest.mark.parametrize("src", FLOATS)
def test_ftof_every_pair(src: str) -> None:
    x = float_inputs(src, seed=FLOATS.index(src))
    shape = (min(len(x), 16384),)
    ops, blocks = _ftof_ops(src, shape), len(x) // shape[0]
    # The pairs with f8E8M0FNU run in a kernel of their own, which tileiras refuses for sm_90:
    # the other pairs still run on tileiras.
    e8m0 = {name: op for name, op in ops.items() if "f8E8M0FNU" in (src, op[1])}
    rest = {name: op for name, op in ops.items() if name not in e8m0}
    out = run_ops(rest, {"a": (src, x)}, shape, blocks) if rest else {}
    out |= run_ops(e8m0, {"a": (src, x)}, shape, blocks, tileiras_refuses=E8M0_REFUSED)
    assert len(out) == len(ops)
    if src in ("f32", "f64"):  # the spec's saturation: +inf -> +448 in f8E4M3FN
        assert np.all(bits_of(out["f8E4M3FN_nearest_even"][np.isposinf(x)]) == 0x7E)
    if src != "f8E4M3FN":  # NaN -> NaN 0x7F (test_nan_to_f8e4m3fn)
        nan = np.isnan(x.astype(np.float64))
        assert nan.any() and np.all(bits_of(out["f8E4M3FN_nearest_even"][nan]) == 0x7F)


# Sources with a NaN, and their NaN bit patterns (both signs, quiet and signalling, payloads).
NAN_BITS = {
    "f16": (0x7C01, 0x7E00, 0x7FFF, 0xFC01, 0xFE00, 0xFFFF, 0x7D55, 0xFEAA),
    "bf16": (0x7F81, 0x7FC0, 0x7FFF, 0xFF81, 0xFFC0, 0xFFFF, 0x7FAA, 0xFFD5),
    "f32": (0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0xFF800001, 0xFFC00000, 0xFFFFFFFF, 0x7FA5A5A5, 0xFFD00001),
    "tf32": (0x7F802000, 0x7FC00000, 0x7FFFE000, 0xFF802000, 0xFFC00000, 0xFFFFE000, 0x7FA5A000, 0xFFD02000),
    "f64": (
        0x7FF0000000000001,
        0x7FF8000000000000,
        0x7FFFFFFFFFFFFFFF,
        0xFFF0000000000001,
        0xFFF8000000000000,
        0xFFFFFFFFFFFFFFFF,
        0x7FF5A5A5A5A5A5A5,
        0xFFFC000000000001,
    ),
    "f8E5M2": (0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF, 0x7D, 0xFF),  # all six, two twice
    "f8E8M0FNU": (0xFF,) * 8,
}


@pytest.mark.parametrize("src", list(NAN_BITS))
def test_nan_to_f8e4m3fn(src: str) -> None:
    """Every NaN, of either sign, converts to f8E4M3FN as the canonical NaN 0x7F, bitwise on
    every backend. Spec 000's table (5.1.3) says +MAX_NORM (0x7E), but NVIDIA's tools give NaN
    and the tools win: tileiras 13.5 on an H200 gives NaN for every NaN of f16, bf16, f32, tf32,
    f64 and f8E5M2 (0x7F for f32's +NaN), as PTX's cvt.rn.satfinite.e4m3x2 says ("if the input
    value is NaN, then the result is NaN"); CUDA's cuda_fp8.hpp emulates that instruction by
    making the NaN positive first, so -NaN gives 0x7F too."""
    width = NP[src].itemsize * 8
    x = np.tile(np.array(NAN_BITS[src], dtype=f"u{width // 8}"), 4).view(NP[src])
    with np.errstate(invalid="ignore"):  # signalling NaNs, quietly
        assert np.isnan(x.astype(np.float64)).all()
    ops = {"e4m3": (f"ftof %a : tile<{len(x)}x{src}> -> tile<{len(x)}xf8E4M3FN>", "f8E4M3FN")}
    refuses = E8M0_REFUSED if src == "f8E8M0FNU" else None
    out = run_ops(ops, {"a": (src, x)}, (len(x),), nan_payload=True, tileiras_refuses=refuses)
    assert np.all(bits_of(out["e4m3"]) == 0x7F)


def _ftoi_inputs(t: str, rng: np.random.Generator) -> np.ndarray:
    if t in ("f8E4M3FN", "f8E5M2", "f8E8M0FNU"):
        return _all_patterns(t)
    vals = [0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.0, -1.0, 1.5, -1.5, -2.5, 127.5, 128.0, -128.0, -129.0, 255.5, 256.0]
    vals += [np.nan, np.inf, -np.inf, 1e30, -1e30]
    for w in (8, 16, 32, 64):
        for b in (2.0 ** (w - 1), 2.0**w):
            vals += [b, -b, b - 1, -b - 1, b + 1, -b + 1, b * (1 - 2.0**-9), -b * (1 + 2.0**-9), b * (1 + 2.0**-9)]
    base = "f32" if t == "tf32" else t
    x = np.array(vals, dtype=np.float64).astype(NP[base])
    x = np.concatenate([x, (rng.standard_normal(512) * np.exp2(rng.integers(0, 66, 512))).astype(NP[base])])
    x = np.concatenate([x, random_values(base, 1024 - len(x), rng)])
    return rounding.round_to(x, "tf32") if t == "tf32" else x


@pytest.mark.parametrize("src", FLOATS)
def test_ftoi_saturates_like_the_interpreter(src: str) -> None:
    x = _ftoi_inputs(src, np.random.default_rng(20 + FLOATS.index(src)))
    n = len(x)
    ops = {
        f"{s[0]}{w}": (f"ftoi %a {s} : tile<{n}x{src}> -> tile<{n}xi{w}>", f"i{w}")
        for w in INTS
        for s in ("signed", "unsigned")
    }
    # On tileiras (cuda-tile Ops.td, FToIOp): the value "rounded towards zero to the nearest
    # integer of the provided type"; for an Inf, a NaN or a value out of the type's range after
    # rounding, "using the returned value is undefined behavior". So: the in-range elements
    # bitwise, the rest open (tileiras 13.5 does not saturate i8: F2I.S16 / F2I.U16 and the
    # low byte, in its sm_90 SASS). To i1, signed or unsigned, NVIDIA's tools convert `x != 0`
    # (tileiras: FSETP.NEU / DSETP.NEU / HSETP2.NEU, on an H200 too; cuTile's `astype(bool)`
    # relies on it) and so do the interpreter and the lowering, everywhere; but for tf32 and
    # f8 tileiras compares the raw bits (ISETP.NE.U32): -0.0 gives true, and f8E8M0FNU's
    # 2^-127 (the bits 0) false, which the model below admits.
    value = rounding.to_f64(x)
    with np.errstate(invalid="ignore"):
        whole = np.trunc(value)
    bitwise_zero = src in ("tf32", "f8E4M3FN", "f8E5M2", "f8E8M0FNU")
    i1_differs = bitwise_zero & ((bits_of(x) != 0) != (value != 0))

    def defined(name: str) -> np.ndarray:
        w = int(name[1:])
        if w == 1:
            return np.ones(len(value), np.bool_)
        lo, end = (-(2.0 ** (w - 1)), 2.0 ** (w - 1)) if name[0] == "s" else (0.0, 2.0**w)
        with np.errstate(invalid="ignore"):
            return np.isfinite(value) & (whole >= lo) & (whole < end)

    def tileiras_model(out: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {k: v ^ i1_differs if k[1:] == "1" else v for k, v in out.items()}

    def in_range_bitwise_i1_raw(cpu: dict[str, np.ndarray], got: dict[str, np.ndarray]) -> None:
        for k, v in tileiras_model(cpu).items():
            inside = defined(k)
            assert np.array_equal(bits_of(v)[inside], bits_of(got[k])[inside]), k

    out = run_ops(
        ops,
        {"a": (src, x)},
        (n,),
        on_tileiras=in_range_bitwise_i1_raw,
        tileiras_refuses=E8M0_REFUSED if src == "f8E8M0FNU" else None,
    )
    assert np.array_equal(out["s1"], value != 0) and np.array_equal(out["u1"], value != 0)  # NaN too: true
    if src == "f32":
        with np.errstate(invalid="ignore"):
            assert np.all(out["s32"][x >= np.float32(2.0**31)] == 2**31 - 1)
            assert np.all(out["u8"][np.isnan(x)] == 0)
    if not ON_GPU:  # sound: admits tileiras' raw-bit i1 and any out-of-range result, nothing else
        good = {k: np.where(defined(k), v, ~v) for k, v in tileiras_model(out).items()}
        assert any((~defined(k)).any() for k in out) and i1_differs.any() == bitwise_zero
        bad = {k: v.copy() for k, v in good.items()}
        bad["u1"][0] ^= True
        check_is_sound(in_range_bitwise_i1_raw, out, good, bad)
        bad = {k: v.copy() for k, v in good.items()}
        bad["s8"][np.flatnonzero(defined("s8"))[0]] ^= 1
        with pytest.raises(AssertionError):
            in_range_bitwise_i1_raw(out, bad)


def _int_inputs(w: int, rng: np.random.Generator) -> np.ndarray:
    if w == 1:
        return np.array([False, True] * 8, dtype=np.bool_)
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    vals = [0, 1, -1, 2, -2, 3, 7, lo, lo + 1, hi, hi - 1, 100, -100, 255, 256, 448, 464, 480, 57344, 61440]
    for k in (11, 12, 16, 23, 24, 25, 31, 32, 52, 53, 54, 62, 63):
        for d in (0, 1, -1, 1 << max(k - 9, 0), (1 << max(k - 9, 0)) + 1, (1 << max(k - 12, 0)) + 1):
            vals += [(1 << k) + d, -((1 << k) + d), (3 << k) + d]
    m = (1 << w) - 1
    vals = [((v & m) ^ (1 << (w - 1))) - (1 << (w - 1)) for v in vals]  # wrapped to w bits, signed
    info = np.iinfo(NP[f"i{w}"])
    x = np.array(vals, dtype=np.int64).astype(NP[f"i{w}"])
    return np.concatenate([x, rng.integers(info.min, info.max, 1024 - len(x), endpoint=True, dtype=NP[f"i{w}"])])


@pytest.mark.parametrize("w", INTS)
def test_itof_every_format(w: int) -> None:
    x = _int_inputs(w, np.random.default_rng(30 + w))
    n = len(x)
    ops = {
        f"{s[0]}_{dst}": (f"itof %a {s} : tile<{n}xi{w}> -> tile<{n}x{dst}>", dst)
        for dst in FLOATS
        if dst != "f8E8M0FNU"
        for s in ("signed", "unsigned")
    }
    run_ops(ops, {"a": (f"i{w}", x)}, (n,))


@pytest.mark.parametrize(("shape", "blocks"), [((1,), 5), ((16, 16), 2), ((4, 8, 8), 1)])
def test_shapes(shape: tuple[int, ...], blocks: int) -> None:
    n = int(np.prod(shape)) * blocks
    full = (shape[0] * blocks, *shape[1:])
    x = float_inputs("f32", 4096, seed=40)[np.random.default_rng(n).permutation(4096)[:n]].reshape(full)
    tt = "x".join(map(str, shape))
    ops = {
        "h": (f"ftof %a : tile<{tt}xf32> -> tile<{tt}xbf16>", "bf16"),
        "e4": (f"ftof %a : tile<{tt}xf32> -> tile<{tt}xf8E4M3FN>", "f8E4M3FN"),
        "i": (f"ftoi %a signed : tile<{tt}xf32> -> tile<{tt}xi16>", "i16"),
    }
    run_ops(ops, {"a": ("f32", x)}, shape, blocks)


def test_conversion_family_compiles_for_every_target() -> None:
    """f32 <-> every format, f64 -> bf16/f8, ints <-> floats: compiles for sm_80 (which has no
    fp8e4nv: the f8 code is integer code), sm_90 and sm_100, with no op whose exact path is
    inline PTX (i64 -> bf16 takes one on sm_90 and newer GPUs only, ftoi everywhere: fast paths,
    each with an exact path Triton's interpreter runs)."""
    from .test_float import kernel_text

    ins = [("a", "f32"), ("d", "f64"), ("i", "i64"), ("h", "f8E4M3FN")]
    body, outs = [], []
    for dst in FLOATS:
        if dst != "f32":
            r = " rounding<positive_inf>" if dst == "f8E8M0FNU" else ""
            body.append(f"%f_{dst}_r = ftof %a{r} : tile<128xf32> -> tile<128x{dst}>")
            outs.append((f"f_{dst}", dst))
    for dst in ("bf16", "f8E5M2", "tf32"):
        body.append(f"%d_{dst}_r = ftof %d : tile<128xf64> -> tile<128x{dst}>")
        outs.append((f"d_{dst}", dst))
    body += [
        "%h_f32_r = ftof %h : tile<128xf8E4M3FN> -> tile<128xf32>",
        "%i_bf16_r = itof %i unsigned : tile<128xi64> -> tile<128xbf16>",
        "%i_f32_r = itof %i signed : tile<128xi64> -> tile<128xf32>",
        "%a_i8_r = ftoi %a unsigned : tile<128xf32> -> tile<128xi8>",
        "%d_i64_r = ftoi %d unsigned : tile<128xf64> -> tile<128xi64>",
    ]
    outs += [("h_f32", "f32"), ("i_bf16", "bf16"), ("i_f32", "f32"), ("a_i8", "i8"), ("d_i64", "i64")]
    text = kernel_text(ins, outs, body, (128,))
    for k in compile_for(text, use_cache=False):
        ptx = k.asm["ptx"]
        assert "cvt.rn.f32.s64" in ptx and "cvt.rzi.u64.f64" in ptx
        assert k.source.inline_asm == []
        # i64 -> bf16: sm_90 and newer convert integers to bf16 themselves (one GPU-only
        # instruction, the exact f64 path under Triton's interpreter); sm_80 cannot.
        native = re.findall(r"cvt\.rn\.bf16\.[su]\d+", ptx)
        assert native == ([] if k.target.cc < 90 else ["cvt.rn.bf16.u64"]), k.target.arch
        assert ("I2F.BF16.U64" in k.sass()) == (k.target.cc >= 90), k.target.arch
        # f32 -> bf16 is the GPU's own conversion everywhere, f32 -> f8 from sm_89 (the exact
        # integer code under Triton's interpreter and, for f8, on sm_80)
        assert re.search(r"cvt\.rn\.bf16(x2)?\.f32", ptx), k.target.arch
        for f8 in ("e4m3x2", "e5m2x2"):
            assert (f"cvt.rn.satfinite.{f8}.f32" in ptx) == (k.target.cc >= 89), (k.target.arch, f8)
        # ftoi is one cvt.rzi everywhere (it saturates and converts NaN to 0 itself): F2I to
        # the narrow type
        assert "cvt.rzi.u8.f32" in ptx and "cvt.rzi.u64.f64" in ptx, k.target.arch
        assert re.search(r"F2IP?\.U8(\.F32)?\.TRUNC", k.sass()) and "F2I.U64.F64.TRUNC" in k.sass(), k.target.arch
