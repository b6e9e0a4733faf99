"""`mmaf`, `mmai` and `mmaf_scaled` through the lowering, against the CPU interpreter.

Bitwise: mmai always; mmaf on data whose partial sums are all exact (small integers), so
that no summation order can change the result. Random data: both backends within the
bound of compiler/lower/ops_mma.py, |r - exact| <= (K + 1) u (sum |a b| + |c|) (+ half
an ulp of an f16 result), with the exact result from float64 products summed with fsum.
bf16 dots run too: Triton 3.6's interpreter computes bf16 dots on the raw bits, so the
generated code widens bf16 operands to f32 there (exactly), and only there.
The f8 path of sm_80 (integer conversion to f16) runs under Triton's interpreter too, from
the sm_80 source. The f16 matmul example is compiled for sm_80/sm_90/sm_100 and its SASS
must use the tensor cores (HMMA / HGMMA / UTCHMMA)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from tests.corpus import REPO

from .harness import ON_GPU, compile_for, run_both, source_of
from .test_bits import F4_VALUES, _nibbles
from .test_shape import NP, _io_args, io_kernel, run_io, run_io_pair, tile

RNG = np.random.default_rng(9)
MATMUL = REPO / "examples" / "matmul.tileir"


def mma_text(el: str, acc: str, sa, sb, sc, op: str = "mmaf", attrs: str = "") -> str:
    return f"%r = {op} %a, %b, %c{attrs} : {tile(sa, el)}, {tile(sb, el)}, {tile(sc, acc)}"


def shapes(m: int, k: int, n: int, lead=()):
    return (*lead, m, k), (*lead, k, n), (*lead, m, n)


def exact_mma(a, b, c):
    """The exact result (nearest float64, via fsum) and the sum of magnitudes, per element."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    out, mag = np.empty(c.shape), np.empty(c.shape)
    for idx in np.ndindex(*c.shape):
        *batch, i, j = idx
        terms = [*(a[(*batch, i)] * b[(*batch, slice(None), j)]).tolist(), float(c[idx])]
        out[idx] = math.fsum(terms)
        mag[idx] = math.fsum(abs(t) for t in terms)
    return out, mag


def tf32(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to tf32 (10 mantissa bits), nearest-even."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & ~np.uint64(0x1FFF)
    return u.astype(np.uint32).view(np.float32)


def small_ints(shape, el: str) -> np.ndarray:
    values = RNG.integers(-3, 4, size=shape).astype(np.float64)
    return values.astype(NP[el])


MMAF_CASES = [
    # (input, accumulator, (M, K, N), leading batch)
    ("f16", "f32", (16, 16, 16), ()),
    ("f16", "f32", (1, 1, 1), ()),  # K of 1: a multiply-add, no dot
    ("bf16", "f32", (16, 16, 16), ()),  # (bf16 allows only an f32 accumulator)
    ("bf16", "f32", (4, 8, 2), (2,)),  # batched, K of 8: a chain of 8
    ("f16", "f16", (4, 8, 2), ()),
    ("f16", "f32", (64, 32, 64), ()),
    ("f16", "f32", (8, 16, 4), (2,)),  # batched
    ("f32", "f32", (16, 4, 32), ()),
    ("tf32", "f32", (32, 16, 8), ()),
    ("f64", "f64", (8, 8, 16), ()),
    ("f8E4M3FN", "f32", (16, 32, 16), ()),
    ("f8E5M2", "f32", (4, 8, 2), ()),  # K of 8: a chain of 8 (fp8 dots take 32)
    ("f8E4M3FN", "f16", (16, 64, 8), (2,)),
    ("f8E4M3FN", "f32", (8, 16, 8), ()),  # K of 16: an f16 dot (fp8 dots take 32)
    ("f8E5M2", "f32", (4, 16, 8), (2,)),
]


@pytest.mark.parametrize(("el", "acc", "mkn", "lead"), MMAF_CASES)
def test_mmaf_exact_data_is_bitwise(el, acc, mkn, lead):
    sa, sb, sc = shapes(*mkn, lead)
    a, b, c = small_ints(sa, el), small_ints(sb, el), small_ints(sc, acc)
    (r,) = run_io([("a", sa, el), ("b", sb, el), ("c", sc, acc)], [("r", sc, acc)], mma_text(el, acc, sa, sb, sc),
                  [a, b, c])  # fmt: skip
    assert np.array_equal(r.astype(np.float64), np.matmul(a.astype(np.float64), b.astype(np.float64)) + c)


@pytest.mark.parametrize(
    ("src", "mkn"), [("i8", (16, 16, 16)), ("f16", (32, 32, 32)), ("f32", (1, 16, 1)), ("i32", (2, 16, 2))]
)
def test_mmaf_f64_of_converted_operands(src: str, mkn) -> None:
    """f64 operands converted from a narrower type: Triton 3.6 once folded the conversion into
    the mma operands and failed to compile for sm_80/sm_90 (an assertion in its MMAv2
    lowering); the fence keeps them apart. Found by tests/lower/fuzz.py."""
    sa, sb, sc = shapes(*mkn)
    a, b = small_ints(sa, src), small_ints(sb, src)
    c = small_ints(sc, "f64")
    conv = "itof" if src.startswith("i") else "ftof"
    sign = " signed" if conv == "itof" else ""
    body = f"""%a64 = {conv} %a{sign} : {tile(sa, src)} -> {tile(sa, "f64")}
    %b64 = {conv} %b{sign} : {tile(sb, src)} -> {tile(sb, "f64")}
    {mma_text("f64", "f64", sa, sb, sc).replace("%a, %b", "%a64, %b64")}"""
    inputs, outputs = [("a", sa, src), ("b", sb, src), ("c", sc, "f64")], [("r", sc, "f64")]
    (r,) = run_io(inputs, outputs, body, [a, b, c])
    assert np.array_equal(r, np.matmul(a.astype(np.float64), b.astype(np.float64)) + c)
    for k in compile_for(io_kernel(inputs, outputs, body), arches=("sm_80", "sm_90")):
        assert re.search(r"mma\.sync\.aligned\.m\w+\.row\.col\.f64\.f64\.f64\.f64", k.asm["ptx"])  # (sm_90: m16n8k16)
    # an operand loaded straight from memory keeps the direct path
    loaded = [("a", sa, "f64"), ("b", sb, "f64"), ("c", sc, "f64")]
    assert "_fence64" not in source_of(io_kernel(loaded, outputs, mma_text("f64", "f64", sa, sb, sc)))


@pytest.mark.parametrize(
    ("el", "acc", "mkn", "lead"),
    [("f16", "f32", (32, 64, 16), ()), ("f16", "f16", (16, 128, 16), ()), ("bf16", "f32", (32, 64, 16), ()),
     ("f32", "f32", (16, 32, 16), ()),
     ("tf32", "f32", (16, 32, 16), ()), ("f64", "f64", (8, 64, 8), ()), ("f8E4M3FN", "f32", (16, 64, 16), (2,)),
     ("f8E5M2", "f32", (16, 32, 16), ()), ("f8E4M3FN", "f32", (16, 16, 32), ())],
)  # fmt: skip
def test_mmaf_random_data_within_bound(el, acc, mkn, lead):
    sa, sb, sc = shapes(*mkn, lead)
    scale = 4.0 if el.startswith("f8") else 1.0
    a = (RNG.standard_normal(sa) * scale).astype(NP[el])
    b = (RNG.standard_normal(sb) * scale).astype(NP[el])
    c = (RNG.standard_normal(sc) * 8).astype(NP[acc])
    if el == "tf32":
        a, b = tf32(a), tf32(b)
    cpu, tri = run_io_pair([("a", sa, el), ("b", sb, el), ("c", sc, acc)], [("r", sc, acc)],
                           mma_text(el, acc, sa, sb, sc), [a, b, c])  # fmt: skip
    exact, mag = exact_mma(a, b, c)
    u = 2.0**-53 if el == "f64" else 2.0**-24
    bound = (mkn[1] + 1) * u * mag
    if acc == "f16":
        bound = bound + np.abs(exact) * 2.0**-11 + 2.0**-25  # the final rounding (and f16 denormals)
    for r in (cpu[0], tri[0]):
        assert np.all(np.abs(r.astype(np.float64) - exact) <= bound)


# Batches (compiler/lower/ops_mma.py, per_batch): a batch of one is a 2-D dot; a batch smaller
# than the warps (8 for a product) whose items have 2048 elements or more, that many 2-D dots
# taken apart by tl.split; the rest Triton's batched dot.
BATCHES = [
    ("mmaf", "f16", "f32", (1, 64, 32, 64), "2-D"),
    ("mmaf", "f16", "f16", (2, 64, 32, 64), "split"),
    ("mmaf", "bf16", "f32", (4, 32, 16, 64), "split"),
    ("mmaf", "f32", "f32", (2, 64, 4, 32), "split"),  # small K: fused multiply-add chains per item
    ("mmai", "i8", "i32", (4, 64, 32, 32), "split"),
    ("mmaf", "f16", "f32", (4, 16, 16, 16), "batched"),  # items too small for 8 warps
    ("mmaf", "f16", "f32", (8, 64, 16, 64), "batched"),  # one item a warp
]


@pytest.mark.parametrize("signs", [" signed signed", " unsigned signed"])
def test_batched_i8_products_with_a_signed_right_hand_side_compile(signs: str) -> None:
    """Taken apart into 2-D dots, a signed i8 right-hand side as loaded made Triton fail for
    sm_90 ("Illegal shared layout" in TritonGPUOptimizeDotOperands: wgmma takes 8-bit operands
    K-major only); its items now pass through a register move (ops_mma, per_batch). They
    compile for every target without spills, and compute the products."""
    batch, m, k, n = 2, 64, 32, 64
    sa, sb, sc = shapes(m, k, n, (batch,))
    inputs, outputs = [("a", sa, "i8"), ("b", sb, "i8"), ("c", sc, "i32")], [("r", sc, "i32")]
    body = mma_text("i8", "i32", sa, sb, sc, op="mmai", attrs=signs)
    a = RNG.integers(-128, 128, sa).astype(np.int8)
    b = RNG.integers(-128, 128, sb).astype(np.int8)
    c = RNG.integers(-(2**31), 2**31, sc).astype(np.int32)
    (r,) = run_io(inputs, outputs, body, [a, b, c])
    wide_a = a.view(np.uint8).astype(np.int64) if "unsigned" in signs else a.astype(np.int64)
    assert np.array_equal(r, (np.matmul(wide_a, b.astype(np.int64)) + c).astype(np.int32))  # wraps
    text = io_kernel(inputs, outputs, body)
    assert "tl.split(" in source_of(text)
    for compiled in compile_for(text, "k"):
        assert compiled.spills == 0


@pytest.mark.parametrize(("op", "el", "acc", "bmkn", "form"), BATCHES)
def test_batched_products(op, el, acc, bmkn, form):
    """Each form gives the products bitwise (small integers: every partial sum exact), item by
    item in order (distinct data per item), signedness flags included for mmai."""
    batch, m, k, n = bmkn
    sa, sb, sc = shapes(m, k, n, (batch,))
    a, b, c = small_ints(sa, el), small_ints(sb, el), small_ints(sc, acc)
    a[0] += 1  # the items differ
    attrs = ""
    if op == "mmai":
        attrs = " unsigned signed"
        a = RNG.integers(0, 256, sa).astype(np.uint8).view(np.int8)
    inputs, outputs = [("a", sa, el), ("b", sb, el), ("c", sc, acc)], [("r", sc, acc)]
    body = mma_text(el, acc, sa, sb, sc, op=op, attrs=attrs)
    (r,) = run_io(inputs, outputs, body, [a, b, c])
    wide_a = a.view(np.uint8).astype(np.int64) if op == "mmai" else a.astype(np.float64)
    expect = np.matmul(wide_a, b.astype(np.float64 if op == "mmaf" else np.int64)) + c
    assert np.array_equal(r, expect.astype(r.dtype))
    source = source_of(io_kernel(inputs, outputs, body))
    assert ("tl.split(" in source) == (form == "split")
    if form == "2-D":
        assert f"tl.reshape(a, {(m, k)}, can_reorder=False)" in source


def test_batched_products_use_all_warps():
    """A batch of two 64x64 f16 products compiles to 2-D tensor-core code on every target
    (Triton's batched dot gave each warp a whole item, mma.sync only), without spills."""
    sa, sb, sc = shapes(64, 32, 64, (2,))
    text = io_kernel([("a", sa, "f16"), ("b", sb, "f16"), ("c", sc, "f32")], [("r", sc, "f32")],
                     mma_text("f16", "f32", sa, sb, sc))  # fmt: skip
    instruction = {"sm_80": "mma.sync.aligned.m16n8k16", "sm_90": "wgmma.mma_async", "sm_100": "tcgen05.mma"}
    ptx = {}
    for arch, k in zip(("sm_80", "sm_90", "sm_100"), compile_for(text, "k"), strict=True):
        assert k.spills == 0 and instruction[arch] in k.asm["ptx"]
        ptx[arch] = k.asm["ptx"]
    # half the mma.sync of Triton's batched dot, which had two warps compute each item (64)
    assert ptx["sm_80"].count("mma.sync") == 32


def run_for_arch(text: str, arch: str, args: list) -> None:
    """Runs the kernel's source generated for `arch` under Triton's interpreter."""
    from compiler.lower.codegen import lower_entry
    from compiler.runtime import load_module
    from compiler.runtime.interpret import run

    module = load_module(text)
    entry = module.entries()[0]
    run(module, entry, (1, 1, 1), args, source=lower_entry(module, entry, arch))


@pytest.mark.parametrize(("mkn", "src"), [((64, 16, 64), "i8"), ((128, 16, 64), "f64")])
def test_mmaf_f64_of_64_rows_on_sm100(mkn, src) -> None:
    """A 2-D f64 mmaf of 64 rows or more: Triton 3.6 handed it to tcgen05 on sm_100 (which has
    no f64 form) and aborted in TritonGPUAccelerateMatmul ("colStride must be 1, 2, or 4 but
    got 0"; found by tests/lower/fuzz.py, seed 34024). The sm_100 source makes it a batched dot
    of one; that compiles for every target, and runs under Triton's interpreter bitwise
    (small integers: every partial sum exact)."""
    sa, sb, sc = shapes(*mkn)
    a, b, c = small_ints(sa, src), small_ints(sb, src), small_ints(sc, "f64")
    body = mma_text("f64", "f64", sa, sb, sc)
    if src != "f64":  # converted operands, as the fuzz kernel's were
        body = f"""%a64 = itof %a signed : {tile(sa, src)} -> {tile(sa, "f64")}
    %b64 = itof %b signed : {tile(sb, src)} -> {tile(sb, "f64")}
    {body.replace("%a, %b", "%a64, %b64")}"""
    text = io_kernel([("a", sa, src), ("b", sb, src), ("c", sc, "f64")], [("r", sc, "f64")], body)
    assert all(k.cubin for k in compile_for(text, "k"))
    assert "[None, :, :]" in source_of(text, "k", "sm_100") and "[None, :, :]" not in source_of(text, "k", "sm_90")
    out = np.zeros(sc, np.float64)
    run_for_arch(text, "sm_100", [a, b, c, out])
    assert np.array_equal(out, np.matmul(a.astype(np.float64), b.astype(np.float64)) + c)


# Shapes of products an H200 computed wrongly as Triton dots of operands padded to K = 16
# (tests/lower/fuzz.py seeds 11, 60068, 62011, 62164, 62261, 63479, 74133, 75040).
SMALL_K = [("bf16", "f32", (64, 1, 64), ()), ("f64", "f64", (1, 1, 4), (64,)), ("f64", "f64", (1, 2, 1), (32,)),
           ("bf16", "f32", (1, 1, 1), (32,)), ("f16", "f32", (1, 2, 1), (64,)), ("f64", "f64", (1, 1, 1), (128,)),
           ("f16", "f16", (4, 8, 4), ()), ("f8E4M3FN", "f32", (8, 8, 8), ()),
           ("tf32", "f32", (4, 4, 2), (2,))]  # fmt: skip


@pytest.mark.parametrize(("el", "acc", "mkn", "lead"), SMALL_K)
def test_small_k_products_are_fused_multiply_add_chains(el, acc, mkn, lead):
    """A K below what tl.dot takes is no dot (module doc of compiler/lower/ops_mma.py): the
    chain of fused multiply-adds gives the exact sums bitwise, signed zeros of the operands
    included, and the PTX holds no mma instruction."""
    sa, sb, sc = shapes(*mkn, lead)
    a, b, c = small_ints(sa, el), small_ints(sb, el), small_ints(sc, acc)
    a.reshape(-1)[::3] = -0.0
    inputs, outputs = [("a", sa, el), ("b", sb, el), ("c", sc, acc)], [("r", sc, acc)]
    body = mma_text(el, acc, sa, sb, sc)
    (r,) = run_io(inputs, outputs, body, [a, b, c])
    assert np.array_equal(r, (np.matmul(a.astype(np.float64), b.astype(np.float64)) + c).astype(r.dtype))
    source = source_of(io_kernel(inputs, outputs, body))
    assert "tl.dot" not in source and "tl.fma" in source
    for k in compile_for(io_kernel(inputs, outputs, body), arches=("sm_90",)):
        assert not re.search(r"\bw?mma\.", k.asm["ptx"])


def _moved_twice(name: str, shape: tuple[int, ...], el: str) -> str:
    """Tile IR computing %{name}2 from %{name} by two permutes (a computed operand, bit for bit)."""
    swap = [*range(len(shape) - 2), len(shape) - 1, len(shape) - 2]
    other = tuple(shape[i] for i in swap)
    return (f"%{name}1 = permute %{name} {swap} : {tile(shape, el)} -> {tile(other, el)}\n"
            f"    %{name}2 = permute %{name}1 {swap} : {tile(other, el)} -> {tile(shape, el)}")  # fmt: skip


@pytest.mark.parametrize(("el", "acc", "mkn", "lead"), SMALL_K)
def test_small_k_products_of_computed_operands(el, acc, mkn, lead):
    """Operands computed in the kernel: their columns and rows are taken out by tl.split
    trees (ops_mma.small_k), bitwise as the sums of loaded ones."""
    sa, sb, sc = shapes(*mkn, lead)
    a, b, c = small_ints(sa, el), small_ints(sb, el), small_ints(sc, acc)
    a.reshape(-1)[::3] = -0.0
    inputs, outputs = [("a", sa, el), ("b", sb, el), ("c", sc, acc)], [("r", sc, acc)]
    body = f"""{_moved_twice("a", sa, el)}
    {_moved_twice("b", sb, el)}
    {mma_text(el, acc, sa, sb, sc).replace("%a, %b", "%a2, %b2")}"""
    (r,) = run_io(inputs, outputs, body, [a, b, c])
    assert np.array_equal(r, (np.matmul(a.astype(np.float64), b.astype(np.float64)) + c).astype(r.dtype))
    assert ("tl.split(" in source_of(io_kernel(inputs, outputs, body))) == (mkn[1] > 1)


def test_small_k_product_of_computed_operands_costs_little():
    """A 64x8 @ 8x64 f32 product of operands broadcast from a 64x1 tile: about the 128 fused
    multiply-adds a thread of 8 warps owes, not the 1,948 LLVM IR instructions that sums
    taking out each column and row cost (tileir compile --emit ops)."""
    from compiler.lower import compile_source, lower
    from compiler.lower.cost import op_costs

    body = f"""%b = broadcast %x : {tile((64, 1), "i16")} -> {tile((64, 8), "i16")}
    %p = permute %b [1, 0] : {tile((64, 8), "i16")} -> {tile((8, 64), "i16")}
    %af = itof %b signed : {tile((64, 8), "i16")} -> {tile((64, 8), "f32")}
    %bf = itof %p signed : {tile((8, 64), "i16")} -> {tile((8, 64), "f32")}
    {mma_text("f32", "f32", (64, 8), (8, 64), (64, 64)).replace("%a, %b", "%af, %bf")}"""
    text = io_kernel([("x", (64, 1), "i16"), ("c", (64, 64), "f32")], [("r", (64, 64), "f32")], body)
    src = lower(text, "k", "sm_90")
    compiled = compile_source(src, use_cache=False)
    count = {name: n for n, _, name in op_costs(src, compiled.asm["llir"])}
    assert count["mmaf"] <= 4 * 128 and compiled.spills == 0
    x = RNG.integers(-3, 4, (64, 1)).astype(np.int16)
    (r,) = run_io([("x", (64, 1), "i16"), ("c", (64, 64), "f32")], [("r", (64, 64), "f32")], body,
                  [x, np.zeros((64, 64), np.float32)])  # fmt: skip
    wide = np.broadcast_to(x, (64, 8)).astype(np.float64)
    assert np.array_equal(r, wide @ wide.T)


@pytest.mark.parametrize(("signs", "mkn", "lead"), [(("unsigned", "unsigned"), (1, 1, 1), (32,)),
                                                    (("signed", "unsigned"), (1, 2, 1), (4,)),
                                                    (("unsigned", "signed"), (16, 8, 16), ())])  # fmt: skip
def test_small_k_integer_products_wrap(signs, mkn, lead):
    sa, sb, sc = shapes(*mkn, lead)
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, sa).astype(np.int8)
    b = rng.integers(-128, 128, sb).astype(np.int8)
    c = rng.integers(-(2**31), 2**31, sc).astype(np.int32)
    body = f"%r = mmai %a, %b, %c {signs[0]} {signs[1]} : {tile(sa, 'i8')}, {tile(sb, 'i8')}, {tile(sc, 'i32')}"
    inputs, outputs = [("a", sa, "i8"), ("b", sb, "i8"), ("c", sc, "i32")], [("r", sc, "i32")]
    (r,) = run_io(inputs, outputs, body, [a, b, c])
    wa = a.astype(np.int64) & 0xFF if signs[0] == "unsigned" else a.astype(np.int64)
    wb = b.astype(np.int64) & 0xFF if signs[1] == "unsigned" else b.astype(np.int64)
    assert np.array_equal(r, ((np.matmul(wa, wb) + c) & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
    assert "tl.dot" not in source_of(io_kernel(inputs, outputs, body))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # NaN patterns times 0.0
@pytest.mark.parametrize("el", ["f8E4M3FN", "f8E5M2"])
def test_mmaf_f8_on_sm80_converts_exactly(el):
    # sm_80 has no fp8e4nv: both formats become f16 by integer code. Row i of lhs holds bit
    # pattern i in column 0 and rhs row 0 is 1.0, so r[i, :] is the value of pattern i.
    sa, sb, sc = shapes(256, 32, 16)
    a = np.zeros(sa, np.uint8)
    a[:, 0] = np.arange(256)
    b = np.zeros(sb, np.uint8)
    b[0, :] = 0x38 if el == "f8E4M3FN" else 0x3C  # 1.0
    a, b = a.view(NP[el]), b.view(NP[el])
    c = np.zeros(sc, np.float32)
    text = io_kernel([("a", sa, el), ("b", sb, el), ("c", sc, "f32")], [("r", sc, "f32")],
                     mma_text(el, "f32", sa, sb, sc))  # fmt: skip
    src = source_of(text, "k", "sm_80")
    assert "_f8_to_f16(" in src and "tl.float8" not in src
    out = np.zeros(sc, np.float32)
    run_for_arch(text, "sm_80", [a, b, c, out])
    values = np.arange(256, dtype=np.uint8).view(NP[el]).astype(np.float32)
    expect = np.broadcast_to(values[:, None], sc)
    assert np.array_equal(out, expect, equal_nan=True)


# -- mmai ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sl", ["signed", "unsigned"])
@pytest.mark.parametrize("sr", ["signed", "unsigned"])
@pytest.mark.parametrize(
    ("mkn", "lead"), [((16, 64, 32), ()), ((32, 16, 64), ()), ((4, 16, 8), (2,)), ((4, 8, 2), (2,)), ((1, 1, 1), ())]
)
def test_mmai_signedness_and_wrap(sl, sr, mkn, lead):
    sa, sb, sc = shapes(*mkn, lead)
    a = RNG.integers(-128, 128, size=sa, dtype=np.int8)
    b = RNG.integers(-128, 128, size=sb, dtype=np.int8)
    a.reshape(-1)[0], b.reshape(-1)[0] = -128, -128
    c = RNG.integers(-(2**31), 2**31, size=sc, dtype=np.int64).astype(np.int32)
    c.reshape(-1)[0] = 2**31 - 1  # overflows: wraps in the interpreter and our lowering
    text = mma_text("i8", "i32", sa, sb, sc, op="mmai", attrs=f" {sl} {sr}")
    ra = a.view(np.uint8).astype(np.int64) if sl == "unsigned" else a.astype(np.int64)
    rb = b.view(np.uint8).astype(np.int64) if sr == "unsigned" else b.astype(np.int64)
    expect = ((np.matmul(ra, rb) + c) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    # Overflow is open: mmai's reference (cuda-tile Ops.td, MmaIOp) is sum_k A_ik B_kj + C_ij
    # with no word on overflow, and it lacks the element-wise integer ops' "wrap-around
    # semantics on overflow"; NVIDIA's cuTile C++ reference (Matrix Multiplication) says an
    # integral mma that overflows has an unspecified result. tileiras 13.5 uses
    # IMMA.16832.*.SAT (its sm_90 SASS), which saturates after each 32-deep step of K: on an
    # H200 the overflowing element came out 0x7fffffff, or 2^31 - 1 - 80395 where a later
    # step brought it back. So on tileiras: bitwise where no partial sum, in any order, can
    # leave i32 (|c| + sum_k |a b| < 2^31); the rest open.
    no_overflow = np.abs(c.astype(np.int64)) + np.matmul(np.abs(ra), np.abs(rb)) < 2**31

    def bitwise_where_no_overflow(cpu: list, gpu: list) -> None:
        for x, y in zip(cpu[:3], gpu[:3], strict=True):
            assert np.array_equal(x, y), "an input changed"
        assert np.array_equal(gpu[3].reshape(sc)[no_overflow], expect[no_overflow])

    inputs = [("a", sa, "i8"), ("b", sb, "i8"), ("c", sc, "i32")]
    ins, outs = _io_args(inputs, [("r", sc, "i32")], [a, b, c])
    cpu, _ = run_both(io_kernel(inputs, [("r", sc, "i32")], text), "k", 1, [*ins, *outs],
                      on_tileiras=bitwise_where_no_overflow)  # fmt: skip
    assert np.array_equal(cpu[3].reshape(sc), expect)  # our backends equal it bitwise (run_both)
    if not ON_GPU:  # sound: a saturated overflow passes, a wrong in-range element does not
        assert not no_overflow.reshape(-1)[0]
        wide = np.matmul(ra, rb) + c
        saturated = np.where(no_overflow, expect, np.clip(wide, -(2**31), 2**31 - 1)).astype(np.int32)
        bitwise_where_no_overflow(cpu, [*cpu[:3], saturated.reshape(cpu[3].shape)])
        if no_overflow.any():  # (the 1x1x1 product has the overflowing element only)
            wrong = saturated.copy()
            wrong[no_overflow] ^= 1
            with pytest.raises(AssertionError):
                bitwise_where_no_overflow(cpu, [*cpu[:3], wrong.reshape(cpu[3].shape)])


# -- mmaf_scaled ----------------------------------------------------------------------------------------


def scaled_text(el: str, sa, sb, sc, ssa, ssb, scale: str = "f8E8M0FNU") -> str:
    return (
        f"%r = mmaf_scaled %a, %b, %c, %sa, %sb : {tile(sa, el)}, {tile(sb, el)}, {tile(sc, 'f32')}, "
        f"{tile(ssa, scale)}, {tile(ssb, scale)}"
    )


def loaded_scaled(el: str, lead: tuple[int, ...], m: int, k: int, n: int) -> str:
    """The text of an io kernel of an `mmaf_scaled` of loaded `el` operands and f8E8M0FNU
    scales (blocks of 32), after checking that Triton's interpreter and the CPU interpreter
    both give its result within the bound on random inputs."""
    sa, sb, sc = shapes(m, k, n, lead)
    ssa, ssb = (*lead, m, k // 32), (*lead, k // 32, n)
    a = (RNG.standard_normal(sa) * 4).astype(NP[el])
    b = (RNG.standard_normal(sb) * 4).astype(NP[el])
    c = RNG.standard_normal(sc).astype(np.float32)
    xa = (2.0 ** RNG.integers(-20, 21, ssa)).astype(NP["f8E8M0FNU"])
    xb = (2.0 ** RNG.integers(-20, 21, ssb)).astype(NP["f8E8M0FNU"])
    inputs = [("a", sa, el), ("b", sb, el), ("c", sc, "f32"), ("sa", ssa, "f8E8M0FNU"), ("sb", ssb, "f8E8M0FNU")]
    body = scaled_text(el, sa, sb, sc, ssa, ssb)
    cpu, tri = run_io_pair(inputs, [("r", sc, "f32")], body, [a, b, c, xa, xb])
    a64 = a.astype(np.float64) * np.repeat(xa.astype(np.float64), 32, axis=-1)
    b64 = b.astype(np.float64) * np.repeat(xb.astype(np.float64), 32, axis=-2)
    exact, mag = exact_mma(a64, b64, c)
    for r in (cpu[0], tri[0]):
        assert np.all(np.abs(r.astype(np.float64) - exact) <= 2.0**-24 * np.abs(exact) + (k + 1) * 2.0**-24 * mag)
    return io_kernel(inputs, [("r", sc, "f32")], body)


@pytest.mark.parametrize(("el", "lead"), [("f8E4M3FN", ()), ("f8E5M2", ()), ("f8E4M3FN", (2,))])
def test_mmaf_scaled_within_bound(el, lead):
    loaded_scaled(el, lead, 16, 64, 8)


def test_a_batched_mmaf_scaled_taken_apart_unanchors_its_loaded_scales() -> None:
    """2x64x128x64: the batch items are taken apart by splits (ops_mma.per_batch), after
    which the loaded scales are no longer as loaded; kept so, 255 registers and 1,752 B of
    spills for sm_80. Within the bound, and no spills."""
    text = loaded_scaled("f8E4M3FN", (2,), 64, 128, 64)
    assert "tl.split(" in source_of(text, arch="sm_80")  # (taken apart)
    (compiled,) = compile_for(text, arches=("sm_80",))
    assert compiled.spills == 0


@pytest.mark.parametrize(("m", "nb"), [(64, 2), (32, 1)])
def test_mmaf_scaled_with_scales_computed_from_the_operands_tile(m: int, nb: int) -> None:
    """Scales extracted from the tile the operands are converted from: Triton kept the
    scales' layout (a reduction's, every lane holding the same elements) for the
    dequantization of the whole operand, 18 s and 9 KB of spills for sm_80, 80 s for sm_90
    (compiler/lower/ops_shape.py, unanchored). Gathered along their K axis, still 170-255
    registers (one scale a row: 255 on sm_90; fuzz seed 424314's spilled); flattened, 30-92.
    Within the bound, no spills, at most 128 registers."""
    k = 32 * nb  # = m: blocks of 32
    x = RNG.integers(120, 135, (m, m)).astype(np.int32)  # scale bytes: 2^-7 .. 2^7
    c = RNG.standard_normal((m, m)).astype(np.float32)
    tx, tl_, tr = tile((m, m), "i32"), tile((m, nb), "i32"), tile((nb, m), "i32")
    body = f"""%c0 = constant <i32: 0> : tile<i32>
    %c5 = constant <i32: 5> : tile<i32>
    %k = constant <i32: 127> : {tx}
    %sl = extract %x[%c0, %c5] : {tx} -> {tl_}
    %sr = extract %x[%c5, %c0] : {tx} -> {tr}
    %sl8 = trunci %sl : {tl_} -> {tile((m, nb), "i8")}
    %sr8 = trunci %sr : {tr} -> {tile((nb, m), "i8")}
    %sa = bitcast %sl8 : {tile((m, nb), "i8")} -> {tile((m, nb), "f8E8M0FNU")}
    %sb = bitcast %sr8 : {tile((nb, m), "i8")} -> {tile((nb, m), "f8E8M0FNU")}
    %xm = subi %x, %k : {tx}
    %xf = itof %xm signed : {tx} -> {tile((m, m), "f32")}
    %a = ftof %xf : {tile((m, m), "f32")} -> {tile((m, m), "f8E4M3FN")}
    {scaled_text("f8E4M3FN", (m, m), (m, m), (m, m), (m, nb), (nb, m)).replace("%a, %b", "%a, %a")}"""
    inputs, outputs = [("x", (m, m), "i32"), ("c", (m, m), "f32")], [("r", (m, m), "f32")]
    cpu, tri = run_io_pair(inputs, outputs, body, [x, c])
    a = (x - 127).astype(np.float64)
    lhs = a * np.repeat(2.0 ** (x[:, 5 * nb : 6 * nb] - 127), 32, axis=1)
    rhs = a * np.repeat(2.0 ** (x[5 * nb : 6 * nb, :] - 127), 32, axis=0)
    exact, mag = exact_mma(lhs, rhs, c)
    for r in (cpu[0], tri[0]):
        assert np.all(np.abs(r.astype(np.float64) - exact) <= 2.0**-24 * np.abs(exact) + (k + 1) * 2.0**-24 * mag)
    for compiled in compile_for(io_kernel(inputs, outputs, body), arches=("sm_80", "sm_90")):
        assert compiled.spills == 0
        assert compiled.registers <= 128


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # infinite products, on purpose
def test_mmaf_scaled_nan_scale_overflow_and_tiny_scales():
    m, k, n = 4, 32, 4
    sa, sb, sc = shapes(m, k, n)
    a = np.ones(sa, NP["f8E4M3FN"])
    b = np.full(sb, 448.0, NP["f8E4M3FN"])
    c = np.zeros(sc, np.float32)
    xa = np.array([[1.0], [2.0**127], [2.0**-127], [2.0**-60]]).astype(NP["f8E8M0FNU"])
    xb = np.array([[1.0, np.nan, 2.0**-60, 1.0]]).astype(NP["f8E8M0FNU"])
    assert xb.view(np.uint8)[0, 1] == 0xFF and xa.view(np.uint8)[2, 0] == 0
    inputs = [("a", sa, "f8E4M3FN"), ("b", sb, "f8E4M3FN"), ("c", sc, "f32"), ("sa", (m, 1), "f8E8M0FNU"),
              ("sb", (1, n), "f8E8M0FNU")]  # fmt: skip
    text = io_kernel(inputs, [("r", sc, "f32")], scaled_text("f8E4M3FN", sa, sb, sc, (m, 1), (1, n)))
    # Block scales are f8E8M0FNU, which tileiras 13.5 refuses for sm_90 ("Incompatibility with
    # architecture 'sm_90': unsupported type 'f8E8M0FNU'"): scaled mmaf is for sm_100 on.
    _, tri = run_both(
        text, "k", 1, [a, b, c, xa, xb, np.zeros(sc, np.float32)], tileiras_refuses=r"unsupported type 'f8E8M0FNU'"
    )
    r = tri[5]
    assert r[0, 0] == 32 * 448.0 and np.isnan(r[:, 1]).all()
    assert r[1, 0] == np.inf  # 448 * 2**127 is beyond f32 (in both backends)
    assert r[2, 0] == np.float32(32 * 448.0 * 2.0**-127)  # a subnormal scale, exact
    assert r[3, 2] == np.float32(32 * 448.0 * 2.0**-120)


def _f4_scaled(scale: str, m: int, k: int, n: int):
    """(body, inputs) of an `mmaf_scaled` of f4E2M1FN operands unpacked from bytes `%pa`, `%pb`
    (blocks of 32 for f8E8M0FNU scales, 16 for f8E4M3FN)."""
    block = 32 if scale == "f8E8M0FNU" else 16
    sa, sb, sc = shapes(m, k, n)
    ssa, ssb = (m, k // block), (k // block, n)
    f4 = "f4E2M1FN"
    body = f"""%a1 = unpack %pa : {tile((m * k // 2,), "i8")} -> {tile((m * k,), f4)}
    %a = reshape %a1 : {tile((m * k,), f4)} -> {tile(sa, f4)}
    %b1 = unpack %pb : {tile((k * n // 2,), "i8")} -> {tile((k * n,), f4)}
    %b = reshape %b1 : {tile((k * n,), f4)} -> {tile(sb, f4)}
    """ + scaled_text(f4, sa, sb, sc, ssa, ssb, scale)
    inputs = [("pa", (m * k // 2,), "i8"), ("pb", (k * n // 2,), "i8"), ("c", sc, "f32"), ("sa", ssa, scale),
              ("sb", ssb, scale)]  # fmt: skip
    return body, inputs


@pytest.mark.parametrize("scale", ["f8E8M0FNU", "f8E4M3FN"])
def test_mmaf_scaled_f4_operands(scale):
    """f4E2M1FN operands, unpacked from random bytes (every code, -0.0 included): MXFP4
    (f8E8M0FNU scales over blocks of 32) and NVFP4 (f8E4M3FN scales over blocks of 16); both
    backends within the bound of the exact result."""
    m, k, n = 16, 64, 8
    block = 32 if scale == "f8E8M0FNU" else 16
    sa, sb, sc = shapes(m, k, n)
    ssa, ssb = (m, k // block), (k // block, n)
    pa = RNG.integers(-128, 128, m * k // 2).astype(np.int8)
    pb = RNG.integers(-128, 128, k * n // 2).astype(np.int8)
    c = RNG.standard_normal(sc).astype(np.float32)
    if scale == "f8E8M0FNU":
        xa, xb = ((2.0 ** RNG.integers(-20, 21, s)).astype(NP[scale]) for s in (ssa, ssb))
    else:  # e4m3 scales of every magnitude, subnormals included
        xa, xb = ((RNG.standard_normal(s) * 2.0 ** RNG.integers(-9, 5, s)).astype(NP[scale]) for s in (ssa, ssb))
    body, inputs = _f4_scaled(scale, m, k, n)
    cpu, tri = run_io_pair(inputs, [("r", sc, "f32")], body, [pa, pb, c, xa, xb])
    a64 = F4_VALUES[_nibbles(pa)].reshape(sa).astype(np.float64) * np.repeat(xa.astype(np.float64), block, axis=-1)
    b64 = F4_VALUES[_nibbles(pb)].reshape(sb).astype(np.float64) * np.repeat(xb.astype(np.float64), block, axis=-2)
    exact, mag = exact_mma(a64, b64, c)
    for r in (cpu[0], tri[0]):
        assert np.all(np.abs(r.astype(np.float64) - exact) <= 2.0**-24 * np.abs(exact) + (k + 1) * 2.0**-24 * mag)


def test_mmaf_scaled_f4_compiles_everywhere():
    """NVFP4 (f4E2M1FN with f8E4M3FN scales), which tileiras refuses for sm_80 and sm_90,
    compiles for every target to a tf32 tensor-core dot, without spills."""
    body, inputs = _f4_scaled("f8E4M3FN", 64, 64, 64)
    for k in compile_for(io_kernel(inputs, [("r", (64, 64), "f32")], body), "k"):
        assert k.spills == 0
        tf32_dot = r"(mma\.sync\.aligned\.\w+\.row\.col\.f32\.tf32|wgmma\.\S+\.f32\.tf32|tcgen05\.mma)"
        assert re.search(tf32_dot, k.asm["ptx"])


# -- the matmul example and compiled code ---------------------------------------------------------------


def test_matmul_example_matches():
    m, k, n = 100, 80, 72  # partial tiles on every edge; two K steps and a partial one
    a = RNG.integers(-4, 5, (m, k)).astype(np.float16)
    b = RNG.integers(-4, 5, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    _, tri = run_both(MATMUL.read_text(), None, (2, 2, 1), [a, m, k, k, 1, b, k, n, n, 1, c, m, n, n, 1])
    assert np.array_equal(tri[10], (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))


TENSOR_CORE = {"sm_80": r"\bHMMA\.16816\.F32\b", "sm_90": r"\bHGMMA\.\w+\.F32\b", "sm_100": r"\bUTC\w*MMA\b"}


@pytest.mark.parametrize(("el", "acc", "op"), [("i8", "i32", "mmai"), ("f8E4M3FN", "f32", "mmaf")])
def test_8_bit_products_with_k_of_16_use_the_tensor_cores(el: str, acc: str, op: str) -> None:
    """A K of 16 is below Triton's 8-bit dots: an f16 dot of the operands widened exactly
    (ops_mma's module doc), not the chain of K sums small_k writes below 16 (16x16x16 i8 on
    sm_90: 554 SASS instructions and 47 barriers that way)."""
    sa, sb, sc = shapes(16, 16, 16)
    attrs = " unsigned signed" if op == "mmai" else ""
    text = io_kernel([("a", sa, el), ("b", sb, el), ("c", sc, acc)], [("r", sc, acc)],
                     mma_text(el, acc, sa, sb, sc, op=op, attrs=attrs))  # fmt: skip
    for k in compile_for(text):
        assert "tl.float16" in k.source.text and "tl.dot(" in k.source.text, k.target.arch
        assert re.search(r"\bHMMA\.16816\.F32\b", k.sass()), k.target.arch  # (mma.sync: M of 16)
        assert k.sass().count("BAR.SYNC") < 8, k.target.arch  # (the chain of sums: 47)


def test_matmul_example_uses_tensor_cores():
    for k in compile_for(MATMUL.read_text()):
        sass = k.sass()
        assert re.search(TENSOR_CORE[k.target.arch], sass), k.target.arch
        assert k.spills == 0


def test_mma_family_compiles_everywhere():
    # One kernel with every input kind: bf16 (tensor cores on the GPU: see the module doc), f8 with and
    # without fast_acc, i8 with an unsigned operand, block-scaled f8, f64.
    sa, sb, sc = shapes(64, 32, 64)

    def op(text: str, r: str, a: str, b: str, c: str) -> str:
        return text.replace("%r =", f"%{r} =").replace("%a, %b, %c", f"%{a}, %{b}, %{c}")

    body = "\n".join([
        op(mma_text("bf16", "f32", sa, sb, sc), "r1", "a1", "b1", "c"),
        op(mma_text("f8E4M3FN", "f32", sa, sb, sc), "r2", "a2", "b2", "c"),
        op(mma_text("f8E4M3FN", "f32", sa, sb, sc, attrs=" fast_acc"), "r6", "a2", "b2", "c"),
        op(mma_text("i8", "i32", sa, sb, sc, op="mmai", attrs=" unsigned signed"), "r3", "a3", "b3", "c3"),
        scaled_text("f8E5M2", sa, sb, sc, (64, 1), (1, 64)).replace("%r =", "%r4 =").replace("%a, %b", "%a4, %b4"),
        op(mma_text("f64", "f64", (16, 16), (16, 16), (16, 16)), "r5", "a5", "a5", "c5"),
    ])  # fmt: skip
    ins = [
        ("a1", sa, "bf16"),
        ("b1", sb, "bf16"),
        ("c", sc, "f32"),
        ("a2", sa, "f8E4M3FN"),
        ("b2", sb, "f8E4M3FN"),
        ("a3", sa, "i8"),
        ("b3", sb, "i8"),
        ("c3", sc, "i32"),
        ("a4", sa, "f8E5M2"),
        ("b4", sb, "f8E5M2"),
        ("sa", (64, 1), "f8E8M0FNU"),
        ("sb", (1, 64), "f8E8M0FNU"),
        ("a5", (16, 16), "f64"),
        ("c5", (16, 16), "f64"),
    ]
    outs = [
        ("r1", sc, "f32"),
        ("r2", sc, "f32"),
        ("r6", sc, "f32"),
        ("r3", sc, "i32"),
        ("r4", sc, "f32"),
        ("r5", (16, 16), "f64"),
    ]
    text = io_kernel(ins, outs, body)  # fmt: skip
    for k in compile_for(text, "k"):
        ptx = k.asm["ptx"]
        found = set(re.findall(r"(?:mma\.sync\.aligned|wgmma\.mma_async\.sync\.aligned|tcgen05\.mma)[\w.:]*", ptx))
        if k.target.arch == "sm_80":
            expected = {
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",  # bf16
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",  # f8 through f16
                "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32",  # i8 (zero accumulator)
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",  # dequantized mmaf_scaled
                "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",  # f64
            }
        elif k.target.arch == "sm_90":
            expected = {
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",  # f8 without fast_acc: precise
                "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3",  # f8 with fast_acc
                "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8",
                "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32",
                "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64",
            }
        else:
            expected = {"tcgen05.mma.cta_group::1.kind::f16", "tcgen05.mma.cta_group::1.kind::f8f6f4",
                        "tcgen05.mma.cta_group::1.kind::tf32"}  # fmt: skip

        # wgmma's N depends on how Triton splits the tile over the warps (num_warps), and the
        # f64 mma's shape on the Triton (sm_90: m16n8k16 from 3.6, m8n8k4 from 3.9): compare
        # without them.
        def shape_free(names: set[str]) -> set[str]:
            names = {re.sub(r"\.m64n\d+k", ".m64nNk", n) for n in names}
            return {re.sub(r"\.m\d+n\d+k\d+(\.row\.col\.f64)", r".mMNK\1", n) for n in names}

        assert shape_free(expected) <= shape_free(found), (k.target.arch, found)
        assert k.spills == 0, k.target.arch
        # The integer dot accumulates into zeros (the .satfinite of mma.sync must not clamp
        # the accumulator's wrap-around): its acc operand is a zero constant.
        ttir = k.asm["ttir"]
        zeros = set(re.findall(r"(%\S+) = arith.constant dense<0> : tensor<64x64xi32>", ttir))
        dots = re.findall(r"tt.dot \S+, \S+, (\S+?),? .*: tensor<64x32xi8>", ttir)
        assert dots and all(acc in zeros for acc in dots), dots


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_mmaf_nan_and_subnormal_operands_under_tritons_interpreter():
    """Found by differential testing against the CPU interpreter: Triton 3.6's interpreter
    read e4m3fn's NaN code 0x7F as 480 (its float8e4nv conversion knows no e4m3fn NaN) and
    flushed bf16 subnormals to zero when widening; both now go by the bits there."""
    sa, sb, sc = shapes(1, 2, 1)
    a = np.array([[0x7F, 0x38]], np.uint8).view(NP["f8E4M3FN"])  # [NaN, 1.0]
    b = np.array([[0x38], [0x38]], np.uint8).view(NP["f8E4M3FN"])
    (r,) = run_io([("a", sa, "f8E4M3FN"), ("b", sb, "f8E4M3FN"), ("c", sc, "f32")], [("r", sc, "f32")],
                  mma_text("f8E4M3FN", "f32", sa, sb, sc), [a, b, np.zeros(sc, np.float32)])  # fmt: skip
    assert np.isnan(r).all()
    sa, sb, sc = shapes(1, 1, 1)
    a = np.array([[0x0001]], np.uint16).view(NP["bf16"])  # 2^-133, a subnormal
    b = np.array([[0x3F80]], np.uint16).view(NP["bf16"])  # 1.0
    (r,) = run_io([("a", sa, "bf16"), ("b", sb, "bf16"), ("c", sc, "f32")], [("r", sc, "f32")],
                  mma_text("bf16", "f32", sa, sb, sc), [a, b, np.zeros(sc, np.float32)])  # fmt: skip
    assert r.view(np.uint32).tolist() == [[0x00010000]]
