"""The Triton lowering of constant, iota, select, bitcast, exti/trunci, the pointer casts and
pack/unpack (compiler/lower/ops_bits.py) against the CPU interpreter, bitwise (NaN payloads
and -0.0 included), in several shapes; and compiles for sm_80/sm_90/sm_100.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from compiler.lower import ops as _ops  # noqa: F401  (registers every emitter)
from compiler.lower import registry

from .harness import compile_for, kernel_text, run_both, source_of, tile_type

NP = {
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
}
BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def zeros(elem: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.zeros(shape, dtype=NP[elem])


def random_bits(elem: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Uniformly random bit patterns of `elem` (NaNs with payloads, infinities, denormals ...)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if elem == "i1":
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    itemsize = np.dtype(NP[elem]).itemsize
    raw = rng.integers(0, 256, n * itemsize, dtype=np.uint8)
    return raw.view(NP[elem]).reshape(shape)


def run(
    ins: dict[str, tuple[str, np.ndarray]],
    outs: dict[str, tuple[str, tuple[int, ...]]],
    body: list[str],
    shape: tuple[int, ...],
    in_shapes: dict[str, tuple[int, ...]] | None = None,
    tileiras_refuses: str | None = None,
) -> list:
    """Inputs name → (element, array); outputs name → (element, shape). Both backends run and
    must agree bitwise, NaN payloads included (`tileiras_refuses`: as in run_both). Returns
    the CPU backend's arguments."""
    text = kernel_text(
        [(n, e) for n, (e, _) in ins.items()],
        [(n, e) for n, (e, _) in outs.items()],
        body,
        shape,
        out_shapes={n: s for n, (_, s) in outs.items()},
        in_shapes=in_shapes,
    )
    args = [a for _, a in ins.values()] + [zeros(e, s) for e, s in outs.values()]
    cpu, _ = run_both(text, "k", 1, args, nan_payload=True, tileiras_refuses=tileiras_refuses)
    return cpu


def literal(values: np.ndarray, elem: str) -> str:
    """The dense literal of `values` (nested like their shape): integers as values, i1 as
    true/false, floats as hexadecimal bit patterns."""
    if values.ndim > 1:
        return "[" + ", ".join(literal(v, elem) for v in values) + "]"
    if elem == "i1":
        items = ["true" if v else "false" for v in values.tolist()]
    elif elem.startswith("i"):
        items = [str(v) for v in values.tolist()]
    else:
        u = values.view(np.dtype(f"u{values.itemsize}"))
        items = [f"0x{v:X}" for v in u.tolist()]
    return "[" + ", ".join(items) + "]"


# -- constant --------------------------------------------------------------------------------------

SPLATS = [
    ("i1", "true"),
    ("i1", "false"),
    ("i8", "-128"),
    ("i8", "127"),
    ("i16", "-32768"),
    ("i32", "-2147483648"),
    ("i32", "2147483647"),
    ("i64", "-9223372036854775808"),
    ("i64", "9223372036854775807"),
    ("i64", "0"),
    ("f32", "1.5"),
    ("f32", "0.1"),
    ("f32", "-0.0"),
    ("f32", "0x7FC00001"),  # a quiet NaN with a payload
    ("f32", "0xFF800001"),  # a signalling NaN, sign set
    ("f32", "0xFF800000"),  # -inf
    ("f32", "0x00000001"),  # the smallest denormal
    ("f32", "3.4028235e38"),
    ("f16", "0.1"),
    ("f16", "0x7E01"),
    ("f16", "0x8000"),
    ("f16", "0x0001"),
    ("f16", "65504.0"),
    ("bf16", "1.5"),
    ("bf16", "0x7FC1"),
    ("bf16", "0x8000"),
    ("bf16", "0x0001"),
    ("f64", "0.1"),
    ("f64", "0x7FF0000000000001"),
    ("f64", "0x8000000000000000"),
    ("f64", "0x0000000000000001"),
    ("f64", "-2.5e-310"),
    ("f8E4M3FN", "448.0"),
    ("f8E4M3FN", "0x7F"),
    ("f8E5M2", "0x7D"),
    ("f8E5M2", "-0.0"),
]
# tileiras 13.5 refuses any kernel with an f8E8M0FNU value for sm_90 ("Incompatibility with
# architecture 'sm_90': unsupported type 'f8E8M0FNU'"): its splat is a kernel of its own, so
# that the others still run on tileiras.
E8M0_SPLAT = ("f8E8M0FNU", "0xFF")
E8M0_REFUSED = r"unsupported type 'f8E8M0FNU'"


@pytest.mark.parametrize("shape", [(1,), (16,), (4, 64)])
def test_constant_splats(shape: tuple[int, ...]) -> None:
    """Splats of every element type with edge values, exactly (NaN payloads, -0.0, denormals)."""
    body, outs = [], {}
    for i, (elem, value) in enumerate(SPLATS):
        body.append(f"%c{i}_r = constant <{elem}: {value}> : {tile_type(shape, elem)}")
        outs[f"c{i}"] = (elem, shape)
    cpu = run({}, outs, body, shape)
    assert cpu[13].view(np.uint32).reshape(-1)[0] == 0x7FC00001
    assert cpu[12].view(np.uint32).reshape(-1)[0] == 0x80000000
    elem, value = E8M0_SPLAT
    body = [f"%c_r = constant <{elem}: {value}> : {tile_type(shape, elem)}"]
    (nan,) = run({}, {"c": (elem, shape)}, body, shape, tileiras_refuses=E8M0_REFUSED)
    assert np.all(nan.view(np.uint8) == 0xFF)  # f8E8M0FNU's only NaN


def test_splat_float_spelling() -> None:
    """Readable decimals where they are exact; bit patterns for the rest."""
    t = tile_type((4,), "f32")
    src = source_of(
        kernel_text(
            [],
            [("a", "f32"), ("b", "f32"), ("c", "f32"), ("d", "bf16")],
            [
                f"%a_r = constant <f32: 1.5> : {t}",
                f"%b_r = constant <f32: -0.0> : {t}",
                f"%c_r = constant <f32: 0x7FC00001> : {t}",
                f"%d_r = constant <bf16: 1.5> : {tile_type((4,), 'bf16')}",
            ],
            (4,),
        )
    )
    assert "a_r = tl.full((4,), 1.5, tl.float32)" in src
    assert "b_r = tl.full((4,), -2147483648, tl.int32).to(tl.float32, bitcast=True)" in src
    assert "c_r = tl.full((4,), 2143289345, tl.int32).to(tl.float32, bitcast=True)" in src
    assert "d_r = tl.full((4,), 16320, tl.int16).to(tl.bfloat16, bitcast=True)" in src


def _dense_cases() -> list[tuple[str, str, np.ndarray]]:
    """(name, element, values): affine integer runs, small tables, large tables."""
    rng = np.random.default_rng(5)
    cases = [
        ("aff32", "i32", np.arange(16, dtype=np.int32)),
        ("aff8", "i8", np.arange(256).astype(np.uint8).view(np.int8)),  # wraps past 127
        ("aff64", "i64", (np.arange(32, dtype=np.int64) * 64 - 7).reshape(4, 8)),
        ("aff16", "i16", (30000 - 1000 * np.arange(128)).astype(np.int16).reshape(2, 8, 8)),
        ("affmin", "i64", np.arange(16, dtype=np.int64) * 3 + np.int64(-(2**63))),
        ("sel32", "i32", np.array([3, -1, 3, 7], dtype=np.int32)),
        ("self32", "f32", np.array([[0x7FC00001, 0x80000000], [0x3FC00000, 0x7F800000]], np.uint32).view(np.float32)),
        ("sel1", "i1", np.array([True, False, False, True, True, True, False, True])),
        ("selbf", "bf16", random_bits("bf16", (4,), 1)),
        ("sel8", "f8E4M3FN", np.array([0x7F, 0x00, 0x80, 0x38], np.uint8).view(ml_dtypes.float8_e4m3fn)),
        ("sel64", "f64", random_bits("f64", (2, 8), 2)),
        ("buf32", "i32", rng.integers(-(2**31), 2**31, 64).astype(np.int32)),
        ("buf64", "f64", random_bits("f64", (8, 8), 3)),
        ("buf1", "i1", random_bits("i1", (32,), 4)),
        ("buf16", "f16", random_bits("f16", (128,), 5)),
        ("bufe4", "f8E4M3FN", random_bits("i8", (64,), 6).view(ml_dtypes.float8_e4m3fn)),
        ("bufe5", "f8E5M2", random_bits("i8", (2, 32), 7).view(ml_dtypes.float8_e5m2)),
        ("bufbf", "bf16", random_bits("bf16", (32,), 8)),
        ("buf8", "i8", random_bits("i8", (256,), 9)),
        ("bufi16", "i16", random_bits("i16", (16, 16), 10)),
    ]
    return cases


def test_dense_constants() -> None:
    """Non-splat constants: arange arithmetic, select chains and device tables all exact."""
    body, outs = [], {}
    cases = _dense_cases()
    for name, elem, values in cases:
        shape = values.shape
        body.append(f"%{name}_r = constant <{elem}: {literal(values, elem)}> : {tile_type(shape, elem)}")
        outs[name] = (elem, shape)
    # The same table twice: one buffer.
    shape = cases[-1][2].shape
    body.append(f"%again_r = constant <i16: {literal(cases[-1][2], 'i16')}> : {tile_type(shape, 'i16')}")
    outs["again"] = ("i16", shape)
    cpu = run({}, outs, body, (1,))
    for i, (name, elem, values) in enumerate(cases):
        got = cpu[i]
        if elem == "i1":
            assert got.tolist() == values.tolist(), name
        else:
            assert got.tobytes() == np.ascontiguousarray(values).tobytes(), name
    src = source_of(
        kernel_text(
            [], [(n, e) for n, (e, _) in outs.items()], body, (1,), out_shapes={n: s for n, (_, s) in outs.items()}
        )
    )
    # Affine runs are arithmetic, small tables select chains, larger ones device tables (one
    # per distinct table: the repeated one is shared).
    assert "aff8_r = aff8_r_index.to(tl.int64).to(tl.int8)" in src
    assert "aff64_r = aff64_r_index.to(tl.int64) * 64 - 7" in src
    assert "sel32_r_acc = tl.where(sel32_r_index == 1, tl.full((), -1, tl.int32), sel32_r_acc)" in src
    header = src.split("def k(")[1].split(")")[0]
    assert header.count("constant_table") == 9, header
    assert src.count("tl.load(constant_table") == 10


# -- iota, select ----------------------------------------------------------------------------------


def test_iota() -> None:
    cases = [("i1", 2), ("i1", 1), ("i8", 256), ("i16", 4096), ("i32", 16), ("i64", 128), ("i8", 1)]
    body, outs = [], {}
    for i, (elem, n) in enumerate(cases):
        body.append(f"%o{i}_r = iota : {tile_type((n,), elem)}")
        outs[f"o{i}"] = (elem, (n,))
    cpu = run({}, outs, body, (1,))
    assert cpu[2].view(np.uint8).tolist() == list(range(256))
    assert cpu[0].tolist() == [False, True]


SELECT_ELEMS = ["i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "f8E4M3FN"]


@pytest.mark.parametrize("shape", [(1,), (16,), (8, 32), (2, 2, 4)])
def test_select(shape: tuple[int, ...]) -> None:
    """tl.where on every element type, the bits of both sides kept."""
    ins = {"c": ("i1", random_bits("i1", shape, 1))}
    body, outs = [], {}
    for i, elem in enumerate(SELECT_ELEMS):
        ins[f"x{i}"] = (elem, random_bits("i8" if elem.startswith("f8") else elem, shape, 10 + i).view(NP[elem]))
        ins[f"y{i}"] = (elem, random_bits("i8" if elem.startswith("f8") else elem, shape, 30 + i).view(NP[elem]))
        t = tile_type(shape, elem)
        body.append(f"%s{i}_r = select %c, %x{i}, %y{i} : {tile_type(shape, 'i1')}, {t}")
        outs[f"s{i}"] = (elem, shape)
    run(ins, outs, body, shape)


# -- bitcast ---------------------------------------------------------------------------------------

BITCASTS = [
    ("i32", "f32"),
    ("f32", "i32"),
    ("i16", "f16"),
    ("f16", "bf16"),
    ("bf16", "i16"),
    ("i64", "f64"),
    ("f64", "i64"),
    ("i8", "f8E4M3FN"),
    ("f8E4M3FN", "f8E5M2"),
    ("f8E5M2", "i8"),
    ("i32", "i32"),
]


@pytest.mark.parametrize("shape", [(1,), (64,), (4, 16)])
def test_bitcast(shape: tuple[int, ...]) -> None:
    ins, body, outs = {}, [], {}
    for i, (src, dst) in enumerate(BITCASTS):
        raw = random_bits("i8" if src.startswith("f8") else src, shape, i)
        ins[f"x{i}"] = (src, raw.view(NP[src]))
        body.append(f"%b{i}_r = bitcast %x{i} : {tile_type(shape, src)} -> {tile_type(shape, dst)}")
        outs[f"b{i}"] = (dst, shape)
    cpu = run(ins, outs, body, shape)
    n = len(BITCASTS)
    for i in range(n):
        assert cpu[n + i].tobytes() == cpu[i].tobytes()


def test_bitcast_without_code_between_f8_formats() -> None:
    t1, t2 = tile_type((4,), "f8E4M3FN"), tile_type((4,), "f8E5M2")
    src = source_of(kernel_text([("x", "f8E4M3FN")], [("y", "f8E5M2")], [f"%y_r = bitcast %x : {t1} -> {t2}"], (4,)))
    # Both formats are tl.uint8 bits: the loaded tile is stored as it is.
    assert "y_r" not in src and "tl.store(ptr_4, x)" in src


# -- exti / trunci ---------------------------------------------------------------------------------

INT_WIDTHS = (1, 8, 16, 32, 64)


def edge_ints(w: int, n: int, seed: int) -> np.ndarray:
    if w == 1:
        return np.array([False, True] * (n // 2), dtype=np.bool_)
    info = np.iinfo(NP[f"i{w}"])
    base = [0, 1, -1, 2, -2, info.min, info.max, info.min + 1, info.max - 1, 0x7F, -0x80, 0xFF, 0x100, -0x101]
    base = [v for v in base if info.min <= v <= info.max]
    rng = np.random.default_rng(seed)
    rest = rng.integers(info.min, info.max, n - len(base), endpoint=True)
    return np.array(base + rest.tolist(), dtype=NP[f"i{w}"])


@pytest.mark.parametrize("w", INT_WIDTHS)
def test_exti_trunci(w: int) -> None:
    """From width `w` to every other width: exti signed/unsigned up, trunci down."""
    shape = (64,)
    ins = {"x": (f"i{w}", edge_ints(w, 64, w))}
    body, outs = [], {}
    t = tile_type(shape, f"i{w}")
    for v in INT_WIDTHS:
        tv = tile_type(shape, f"i{v}")
        if v > w:
            body.append(f"%s{v}_r = exti %x signed : {t} -> {tv}")
            body.append(f"%u{v}_r = exti %x unsigned : {t} -> {tv}")
            outs[f"s{v}"] = (f"i{v}", shape)
            outs[f"u{v}"] = (f"i{v}", shape)
        elif v < w:
            body.append(f"%t{v}_r = trunci %x : {t} -> {tv}")
            outs[f"t{v}"] = (f"i{v}", shape)
    run(ins, outs, body, shape)


def test_exti_trunci_2d_and_flags() -> None:
    shape = (4, 8)
    x = edge_ints(16, 32, 3).reshape(shape)
    t16, t64, t8 = tile_type(shape, "i16"), tile_type(shape, "i64"), tile_type(shape, "i8")
    small = np.arange(-16, 16, dtype=np.int16).reshape(shape)
    body = [
        f"%s_r = exti %x signed : {t16} -> {t64}",
        f"%u_r = exti %x unsigned : {t16} -> {t64}",
        f"%t_r = trunci %y overflow<no_signed_wrap> : {t16} -> {t8}",
    ]
    outs = {"s": ("i64", shape), "u": ("i64", shape), "t": ("i8", shape)}
    run({"x": ("i16", x), "y": ("i16", small)}, outs, body, shape)


def test_zero_dimensional_tiles() -> None:
    """0-d constants, select, bitcast, exti and trunci (scalar parameters in, 1-element tiles out)."""
    body = [
        "%c1_r = constant <f32: 0x7FC00001> : tile<f32>",
        "%c2_r = constant <i64: -9223372036854775808> : tile<i64>",
        "%c3_r = constant <bf16: -0.0> : tile<bf16>",
        "%c4_r = constant <i1: true> : tile<i1>",
        "%s_r = select %c, %x, %y : tile<i1>, tile<i16>",
        "%b_r = bitcast %x : tile<i16> -> tile<f16>",
        "%e_r = exti %x unsigned : tile<i16> -> tile<i64>",
        "%f_r = exti %c signed : tile<i1> -> tile<i32>",
        "%t_r = trunci %x : tile<i16> -> tile<i1>",
        "%u_r = trunci %x : tile<i16> -> tile<i8>",
    ]
    outs = [("c1", "f32"), ("c2", "i64"), ("c3", "bf16"), ("c4", "i1"), ("s", "i16"), ("b", "f16"), ("e", "i64"),
            ("f", "i32"), ("t", "i1"), ("u", "i8")]  # fmt: skip
    text = kernel_text([], outs, body, (1,), out_shapes={n: () for n, _ in outs},
                       scalars=[("c", "i1"), ("x", "i16"), ("y", "i16")])  # fmt: skip
    for c, x, y in ((True, -32768, 5), (False, 0x7C01, -1), (True, -1, 0)):
        cpu, _ = run_both(text, "k", 1, [c, x, y] + [zeros(e, (1,)) for _, e in outs], nan_payload=True)
        assert cpu[3].view(np.uint32)[0] == 0x7FC00001 and cpu[5].view(np.uint16)[0] == 0x8000


# -- pack / unpack ---------------------------------------------------------------------------------

PACKED = ["i1", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"]


@pytest.mark.parametrize("count", [1, 16, 1024])
def test_pack_unpack(count: int) -> None:
    """Each element type packed to bytes and bytes unpacked to it, little-endian, bit-exact:
    8 * `count` bytes (i1: 8 elements per byte)."""
    ins, body, outs, in_shapes = {}, [], {}, {}
    for i, elem in enumerate(PACKED):
        bits = BITS[elem]
        n_bytes = count * 8  # `count` i64s' worth of bytes
        n_elems = n_bytes * 8 // bits
        te, tb = tile_type((n_elems,), elem), tile_type((n_bytes,), "i8")
        ins[f"e{i}"] = (elem, random_bits(elem, (n_elems,), i))
        ins[f"b{i}"] = ("i8", random_bits("i8", (n_bytes,), 40 + i))
        in_shapes[f"e{i}"] = (n_elems,)
        in_shapes[f"b{i}"] = (n_bytes,)
        body.append(f"%p{i}_r = pack %e{i} : {te} -> {tb}")
        body.append(f"%u{i}_r = unpack %b{i} : {tb} -> {te}")
        outs[f"p{i}"] = ("i8", (n_bytes,))
        outs[f"u{i}"] = (elem, (n_elems,))
    cpu = run(ins, outs, body, (1,), in_shapes=in_shapes)
    k = len(ins)
    names = list(ins)
    outs_l = list(outs)
    for j, name in enumerate(outs_l):
        i = int(name[1:])
        got = cpu[k + j]
        if name.startswith("p"):
            src = cpu[names.index(f"e{i}")]
            want = np.packbits(src, bitorder="little").tobytes() if src.dtype == np.bool_ else src.tobytes()
            assert got.tobytes() == want, name
        else:
            raw = cpu[names.index(f"b{i}")]
            if got.dtype == np.bool_:
                assert np.packbits(got, bitorder="little").tobytes() == raw.tobytes(), name
            else:
                assert got.tobytes() == raw.tobytes(), name


# The 16 f4E2M1FN values by code (sign in bit 3).
F4_VALUES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float32)


def _nibbles(b: np.ndarray) -> np.ndarray:
    """The 4-bit codes of bytes `b`, the low nibble of each byte first."""
    u = b.view(np.uint8)
    return np.stack([u & 0xF, u >> 4], axis=1).reshape(-1)


def test_i4() -> None:
    """i4 (an int8 sign-extended in Triton, which has no 4-bit type): bytes unpacked into
    nibbles and packed back, extended both ways, truncated to; bitwise on both backends and
    checked against NumPy."""
    n = 256  # bytes; 512 nibbles
    rng = np.random.default_rng(4)
    b = rng.integers(-128, 128, n).astype(np.int8)
    w = rng.integers(-(1 << 15), 1 << 15, 2 * n).astype(np.int16)
    t8, t4, t16 = f"tile<{n}xi8>", f"tile<{2 * n}xi4>", f"tile<{2 * n}xi16>"
    body = [
        f"%n4 = unpack %b : {t8} -> {t4}",
        f"%s_r = exti %n4 signed : {t4} -> {t16}",
        f"%u_r = exti %n4 unsigned : {t4} -> {t16}",
        f"%rp_r = pack %n4 : {t4} -> {t8}",
        f"%t = trunci %w : {t16} -> {t4}",
        f"%te_r = exti %t signed : {t4} -> {t16}",
        f"%tu_r = exti %t unsigned : {t4} -> tile<{2 * n}xi32>",
    ]
    wide = (2 * n,)
    outs = {"s": ("i16", wide), "u": ("i16", wide), "rp": ("i8", (n,)), "te": ("i16", wide), "tu": ("i32", wide)}
    ins = {"b": ("i8", b), "w": ("i16", w)}
    cpu = run(ins, outs, body, (1,), in_shapes={"b": (n,), "w": wide})
    got = dict(zip(outs, cpu[len(ins) :], strict=True))
    codes = _nibbles(b)
    assert np.array_equal(got["s"], (codes.astype(np.int16) ^ 8) - 8) and np.array_equal(got["u"], codes)
    assert np.array_equal(got["rp"], b)
    assert np.array_equal(got["te"], ((w.astype(np.int32) & 0xF) ^ 8) - 8)
    assert np.array_equal(got["tu"], w.astype(np.int32) & 0xF)


# tileiras 13.5 refuses f4E2M1FN for sm_80 and sm_90 ("Incompatibility with architecture
# 'sm_90': unsupported type 'f4E2M1FN'"); the Triton lowering's integer code runs everywhere.
F4_REFUSED = r"unsupported type 'f4E2M1FN'"


def test_f4e2m1fn() -> None:
    """f4E2M1FN (a uint8 code in Triton): bytes unpacked and packed back, decoded from every
    code, rounded into from f32 (midpoints and next to them, saturation, NaN), dense constants
    (a table and a select chain); bitwise on both backends, and checked against ml_dtypes."""
    n = 256  # bytes; 512 nibbles
    b = np.random.default_rng(5).integers(-128, 128, n).astype(np.int8)
    # Every f4 value, the midpoints between neighbours and next to them, beyond +-6, NaN.
    grid = np.unique(np.abs(F4_VALUES.astype(np.float64)))
    mids = (grid[:-1] + grid[1:]) / 2
    x = np.concatenate([grid, mids, np.nextafter(mids, 0), np.nextafter(mids, 9), [5.0, 6.5, 7.0, 1e30, np.inf]])
    x = np.resize(np.concatenate([x, -x, [np.nan, -np.nan]]).astype(np.float32), 2 * n)
    consts = np.arange(32) % 16
    f4c = "[" + ", ".join(str(float(F4_VALUES[v])) for v in consts[::-1]) + "]"
    t8, tf4 = f"tile<{n}xi8>", f"tile<{2 * n}xf4E2M1FN>"
    body = [
        f"%f4 = unpack %b : {t8} -> {tf4}",
        f"%df_r = ftof %f4 : {tf4} -> tile<{2 * n}xf32>",
        f"%dh_r = ftof %f4 : {tf4} -> tile<{2 * n}xf16>",
        f"%fp_r = pack %f4 : {tf4} -> {t8}",
        f"%c = ftof %x : tile<{2 * n}xf32> -> {tf4}",
        f"%cp_r = pack %c : {tf4} -> {t8}",
        f"%cf = constant <f4E2M1FN: {f4c}> : tile<32xf4E2M1FN>",
        "%cf_r = ftof %cf : tile<32xf4E2M1FN> -> tile<32xf32>",
        "%cs = constant <f4E2M1FN: [-6.0, 0.5, 0.5, 0.5]> : tile<4xf4E2M1FN>",
        "%cs_r = ftof %cs : tile<4xf4E2M1FN> -> tile<4xf32>",
    ]
    wide = (2 * n,)
    outs = {
        "df": ("f32", wide), "dh": ("f16", wide), "fp": ("i8", (n,)), "cp": ("i8", (n,)),
        "cf": ("f32", (32,)), "cs": ("f32", (4,)),
    }  # fmt: skip
    ins = {"b": ("i8", b), "x": ("f32", x)}
    cpu = run(ins, outs, body, (1,), in_shapes={"b": (n,), "x": wide}, tileiras_refuses=F4_REFUSED)
    got = dict(zip(outs, cpu[len(ins) :], strict=True))
    codes = _nibbles(b)
    assert np.array_equal(got["fp"], b)
    assert np.array_equal(got["df"].view(np.uint32), F4_VALUES[codes].view(np.uint32))  # -0.0 too
    assert np.array_equal(got["dh"], F4_VALUES[codes].astype(np.float16))
    # f32 -> f4E2M1FN: round to nearest even as ml_dtypes does for the finite values, saturating
    # at +-6; NaN -> +6 (the interpreter's rule for a format without NaN).
    rounded = _nibbles(got["cp"])
    finite = np.isfinite(x) & (np.abs(x) <= 6)
    want = x[finite].astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 0xF
    assert np.array_equal(rounded[finite], want)
    big = ~np.isnan(x) & (np.abs(x) > 6)
    assert np.array_equal(rounded[big], np.where(x[big] > 0, 0x7, 0xF))
    assert np.all(rounded[np.isnan(x)] == 0x7)
    assert np.array_equal(got["cf"], F4_VALUES[consts[::-1]])
    assert got["cs"].tolist() == [-6.0, 0.5, 0.5, 0.5]


# -- pointer casts ---------------------------------------------------------------------------------


def _have(*ops: str) -> bool:
    return all(f"cuda_tile.{op}" in registry.EMITTERS for op in ops)


@pytest.mark.skipif(
    not _have("reshape", "broadcast", "offset", "load_ptr_tko"),
    reason="needs the shape and pointer-memory emitters (other modules)",
)
def test_pointer_casts_round_trip() -> None:
    """ptr_to_int, integer arithmetic, int_to_ptr and ptr_to_ptr: loads through the result
    read the right elements (addresses differ between the backends, so compare the data)."""
    n = 16
    tp = tile_type((n,), "ptr<f32>")
    body = [
        f"%pr = reshape %x_ptr : tile<ptr<f32>> -> {tile_type((1,), 'ptr<f32>')}",
        f"%pb = broadcast %pr : {tile_type((1,), 'ptr<f32>')} -> {tp}",
        f"%i = iota : {tile_type((n,), 'i64')}",
        f"%four = constant <i64: 4> : {tile_type((n,), 'i64')}",
        f"%bytes = muli %i, %four : {tile_type((n,), 'i64')}",
        f"%addr = ptr_to_int %pb : {tp} -> {tile_type((n,), 'i64')}",
        f"%moved = addi %addr, %bytes : {tile_type((n,), 'i64')}",
        f"%p = int_to_ptr %moved : {tile_type((n,), 'i64')} -> {tp}",
        f"%q = ptr_to_ptr %p : {tp} -> {tile_type((n,), 'ptr<i32>')}",
        f"%y_r, %yt = load_ptr_tko weak %q : {tile_type((n,), 'ptr<i32>')} -> {tile_type((n,), 'i32')}, token",
    ]
    x = random_bits("f32", (n,), 1)
    text = kernel_text([("x", "f32")], [("y", "i32")], body, (n,))
    cpu, _ = run_both(text, "k", 1, [x, np.zeros(n, np.int32)])
    assert cpu[1].tobytes() == x.tobytes()


def test_pointer_casts_source() -> None:
    tp, ti = tile_type((4,), "ptr<f32>"), tile_type((4,), "i64")
    src = source_of(
        kernel_text(
            [("a", "i64")],
            [("b", "i64")],
            [
                f"%p = int_to_ptr %a : {ti} -> {tp}",
                f"%q = ptr_to_ptr %p : {tp} -> {tile_type((4,), 'ptr<i1>')}",
                f"%r = ptr_to_ptr %q : {tile_type((4,), 'ptr<i1>')} -> {tile_type((4,), 'ptr<i8>')}",
                f"%b_r = ptr_to_int %r : {tile_type((4,), 'ptr<i8>')} -> {ti}",
            ],
            (4,),
        )
    )
    assert "p = a.to(tl.pointer_type(tl.float32))" in src
    assert "q = p.to(tl.pointer_type(tl.int8))" in src
    assert "b_r = q.to(tl.int64)" in src  # ptr<i1> and ptr<i8> are the same Triton pointer


# -- compiles --------------------------------------------------------------------------------------


def _compile_kernel() -> str:
    """Every op of the module, in one kernel."""
    shape = (64,)
    body = [
        "%c1 = constant <f32: 0x7FC00001> : tile<64xf32>",
        "%c2_r = constant <i32: [" + ", ".join(str(v * 3) for v in range(64)) + "]> : tile<64xi32>",
        "%c3 = constant <i8: [1, 5, -3, 1]> : tile<4xi8>",
        "%c4_r = constant <f16: [" + ", ".join(f"0x{(v * 7919) & 0xFFFF:X}" for v in range(64)) + "]> : tile<64xf16>",
        "%io = iota : tile<64xi16>",
        "%ex = exti %io unsigned : tile<64xi16> -> tile<64xi64>",
        "%tr = trunci %ex : tile<64xi64> -> tile<64xi1>",
        "%fb = bitcast %x : tile<64xf32> -> tile<64xi32>",
        "%se_r = select %tr, %fb, %c2_r : tile<64xi1>, tile<64xi32>",
        "%pk = pack %x : tile<64xf32> -> tile<256xi8>",
        "%up_r = unpack %pk : tile<256xi8> -> tile<32xf64>",
        "%bp = pack %tr : tile<64xi1> -> tile<8xi8>",
        "%bu_r = unpack %bp : tile<8xi8> -> tile<64xi1>",
        "%pt = int_to_ptr %ex : tile<64xi64> -> tile<64xptr<f32>>",
        "%pp = ptr_to_ptr %pt : tile<64xptr<f32>> -> tile<64xptr<i16>>",
        "%c5 = constant <i64: -9223372036854775808> : tile<64xi64>",
        "%pq = int_to_ptr %c5 : tile<64xi64> -> tile<64xptr<i16>>",
        "%ps = select %tr, %pp, %pq : tile<64xi1>, tile<64xptr<i16>>",
        "%pi_r = ptr_to_int %ps : tile<64xptr<i16>> -> tile<64xi64>",
        "%c6_r = constant <f64: 0.1> : tile<64xf64>",
        "%c7_r = constant <bf16: [" + ", ".join(f"0x{(v * 31) & 0xFFFF:X}" for v in range(8)) + "]> : tile<8xbf16>",
        "%n4 = unpack %pk : tile<256xi8> -> tile<512xi4>",
        "%n4p_r = pack %n4 : tile<512xi4> -> tile<256xi8>",
        "%f4 = ftof %x : tile<64xf32> -> tile<64xf4E2M1FN>",
        "%f4p_r = pack %f4 : tile<64xf4E2M1FN> -> tile<32xi8>",
        "%c8 = constant <f4E2M1FN: " + str([float(F4_VALUES[v % 16]) for v in range(32)]) + "> : tile<32xf4E2M1FN>",
        "%c8_r = ftof %c8 : tile<32xf4E2M1FN> -> tile<32xf32>",
    ]
    outs = [("c2", "i32"), ("c4", "f16"), ("se", "i32"), ("up", "f64"), ("bu", "i1"), ("pi", "i64"), ("c6", "f64"),
            ("c7", "bf16"), ("n4p", "i8"), ("f4p", "i8"), ("c8", "f32")]  # fmt: skip
    sizes = {"up": (32,), "c7": (8,), "n4p": (256,), "f4p": (32,), "c8": (32,)}
    return kernel_text([("x", "f32")], outs, body, shape, out_shapes=sizes)


def test_compiles_for_every_target() -> None:
    for k in compile_for(_compile_kernel(), "k"):
        assert k.spills == 0
        assert ".entry k" in k.asm["ptx"]
