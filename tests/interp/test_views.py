"""View ops on the CPU interpreter: make_tensor_view, the partition, strided and
gather/scatter views, their shape queries, load_view_tko, store_view_tko and
atomic_red_view_tko.

Every expectation is computed from the host arrays with NumPy slicing or plain Python
loops over the spec's formulas (element c with c[dim_map[i]] = I_i * step_i + t_i),
never with the interpreter's own view code.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from compiler.interp import Frame, Group, Machine
from compiler.runtime import find_kernel, launch, load_module
from tests.corpus import REPO

from .util import eval_kernel, kernel

# -- type spelling helpers -------------------------------------------------------------------------


def _dims(values) -> str:
    return ["?" if v is None else str(v) for v in values]


def tv(shape, strides, elem: str = "f32") -> str:
    return f"tensor_view<{'x'.join(_dims(shape))}x{elem}, strides=[{','.join(_dims(strides))}]>"


def pv(tile, tview: str, padding: str | None = None, dim_map=None) -> str:
    pad = f"padding_value = {padding}, " if padding else ""
    dm = f", dim_map=[{', '.join(map(str, dim_map))}]" if dim_map is not None else ""
    return f"partition_view<tile=({'x'.join(map(str, tile))}), {pad}{tview}{dm}>"


def sv(tile, steps, tview: str, padding: str | None = None, dim_map=None) -> str:
    pad = f"padding_value = {padding}, " if padding else ""
    dm = f", dim_map=[{', '.join(map(str, dim_map))}]" if dim_map is not None else ""
    return (
        f"strided_view<tile=({'x'.join(map(str, tile))}), traversal_strides=[{','.join(map(str, steps))}], "
        f"{pad}{tview}{dm}>"
    )


def gv(tile, tview: str, sparse: int, padding: str | None = None) -> str:
    pad = f"padding_value = {padding}, " if padding else ""
    return f"gather_scatter_view<tile=({'x'.join(map(str, tile))}), {pad}{tview}, sparse_dim={sparse}>"


def tile(shape, elem: str = "f32") -> str:
    return f"tile<{'x'.join(map(str, shape))}x{elem}>"


def make_tv(name: str, ptr: str, shape, strides, elem: str = "f32", dyn: str = "i32") -> str:
    """`make_tensor_view`; entries of shape/strides that are strings are SSA operands."""
    ty = tv(
        [None if isinstance(d, str) else d for d in shape], [None if isinstance(s, str) else s for s in strides], elem
    )
    dynamic = any(isinstance(v, str) for v in (*shape, *strides))
    sh = ", ".join(map(str, shape))
    st = ", ".join(map(str, strides))
    return f"%{name} = make_tensor_view %{ptr}, shape = [{sh}], strides = [{st}] : " + (
        f"tile<{dyn}> -> {ty}" if dynamic else ty
    )


def load(name: str, view: str, vtype: str, idx: list[str], shape, elem: str = "f32", itype: str = "tile<i32>") -> str:
    return (
        f"%{name}, %{name}_tok = load_view_tko weak %{view}[{', '.join(idx)}] : {vtype}, {itype} -> "
        f"{tile(shape, elem)}, token"
    )


def store(value: str, view: str, vtype: str, idx: list[str], shape, elem: str = "f32", itype: str = "tile<i32>") -> str:
    return (
        f"%{value}_st = store_view_tko weak %{value}, %{view}[{', '.join(idx)}] : "
        f"{tile(shape, elem)}, {vtype}, {itype} -> token"
    )


BIDS = "%bx, %by, %bz = get_tile_block_id : tile<i32>"


def run(body: str, params: str, grid, args):
    return launch(kernel(body, params), grid=grid, args=args)


# -- partition views -----------------------------------------------------------------------------------


def test_copy_1d_partial_tile_is_masked_on_store() -> None:
    t_in, t_out = tv([None], [1]), tv([None], [1])
    p_in, p_out = pv([4], t_in, "zero"), pv([4], t_out)
    body = "\n".join(
        [
            make_tv("va", "a", ["%n"], [1]),
            make_tv("vb", "b", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p_in}",
            f"%pb = make_partition_view %vb : {p_out}",
            BIDS,
            load("x", "pa", p_in, ["%bx"], [4]),
            store("x", "pb", p_out, ["%bx"], [4]),
        ]
    )
    a = np.arange(1, 11, dtype=np.float32)
    b = np.full(12, -1.0, np.float32)
    run(body, "%a: tile<ptr<f32>>, %b: tile<ptr<f32>>, %n: tile<i32>", (3,), [a, b, 10])
    assert np.array_equal(b[:10], a)
    assert np.array_equal(b[10:], [-1.0, -1.0])  # outside the view: never written


def test_partition_2d_with_padding_and_edges() -> None:
    rows, cols = 10, 12
    t_a = tv([rows, cols], [cols, 1])
    p_a = pv([4, 8], t_a, "zero")
    t_o = tv([12, 16], [16, 1])
    p_o = pv([4, 8], t_o)
    body = "\n".join(
        [
            make_tv("va", "a", [rows, cols], [cols, 1]),
            make_tv("vo", "o", [12, 16], [16, 1]),
            f"%pa = make_partition_view %va : {p_a}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            load("x", "pa", p_a, ["%bx", "%by"], [4, 8]),
            store("x", "po", p_o, ["%bx", "%by"], [4, 8]),
        ]
    )
    a = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    o = np.full((12, 16), 99.0, np.float32)
    run(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>", (3, 2), [a, o])
    want = np.zeros((12, 16), np.float32)
    want[:rows, :cols] = a
    assert np.array_equal(o, want)


def test_partition_dim_map_transposes() -> None:
    # tile 4x2 with dim_map [1, 0] over an 8x6 tensor: tile dim 0 runs along tensor dim 1.
    t_a = tv([8, 6], [6, 1])
    p_a = pv([4, 2], t_a, "neg_inf", dim_map=[1, 0])
    t_o = tv([8, 8], [8, 1])
    p_o = pv([4, 2], t_o)
    body = "\n".join(
        [
            make_tv("va", "a", [8, 6], [6, 1]),
            make_tv("vo", "o", [8, 8], [8, 1]),
            f"%pa = make_partition_view %va : {p_a}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            load("x", "pa", p_a, ["%bx", "%by"], [4, 2]),
            store("x", "po", p_o, ["%bx", "%by"], [4, 2]),
        ]
    )
    a = np.arange(48, dtype=np.float32).reshape(8, 6)
    o = np.zeros((8, 8), np.float32)
    run(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>", (2, 4), [a, o])  # index space (6/4 -> 2, 8/2 -> 4)
    want = np.full((8, 8), -np.inf, np.float32)
    for bx in range(2):
        for by in range(4):
            for t0 in range(4):
                for t1 in range(2):
                    r, c = by * 2 + t1, bx * 4 + t0  # c[dim_map[i]] = I_i * T_i + t_i
                    if r < 8 and c < 6:
                        want[bx * 4 + t0, by * 2 + t1] = a[r, c]
    assert np.array_equal(o, want)


def test_partition_3d_dim_map() -> None:
    shape = (4, 6, 8)
    strides = (48, 8, 1)
    dm = [2, 0, 1]
    tl = [4, 2, 4]
    t_a = tv(shape, strides)
    p_a = pv(tl, t_a, "pos_inf", dim_map=dm)
    n = [-(-shape[dm[i]] // tl[i]) for i in range(3)]  # (2, 2, 2)
    out_shape = [n[i] * tl[i] for i in range(3)]
    t_o = tv(out_shape, [out_shape[1] * out_shape[2], out_shape[2], 1])
    p_o = pv(tl, t_o)
    body = "\n".join(
        [
            make_tv("va", "a", list(shape), list(strides)),
            make_tv("vo", "o", out_shape, [out_shape[1] * out_shape[2], out_shape[2], 1]),
            f"%pa = make_partition_view %va : {p_a}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            load("x", "pa", p_a, ["%bx", "%by", "%bz"], tl),
            store("x", "po", p_o, ["%bx", "%by", "%bz"], tl),
        ]
    )
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    o = np.zeros(out_shape, np.float32)
    run(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>", tuple(n), [a, o])
    b = a.transpose(2, 0, 1)  # b[x0, x1, x2] = a[x1, x2, x0]
    want = np.full(out_shape, np.inf, np.float32)
    want[: b.shape[0], : b.shape[1], : b.shape[2]] = b
    assert np.array_equal(o, want)


_PADDING_CASES = [
    ("f32", np.float32, "zero", 0x00000000),
    ("f32", np.float32, "neg_zero", 0x80000000),
    ("f32", np.float32, "nan", None),
    ("f32", np.float32, "pos_inf", 0x7F800000),
    ("f32", np.float32, "neg_inf", 0xFF800000),
    ("f16", np.float16, "neg_zero", 0x8000),
    ("f16", np.float16, "pos_inf", 0x7C00),
    ("f16", np.float16, "nan", None),
    ("bf16", ml_dtypes.bfloat16, "neg_inf", 0xFF80),
    ("f64", np.float64, "neg_zero", 0x8000000000000000),
    ("f8E5M2", ml_dtypes.float8_e5m2, "pos_inf", 0x7C),
    ("f8E4M3FN", ml_dtypes.float8_e4m3fn, "pos_inf", 0x7E),  # no infinity: +MAX_NORM (448)
    ("f8E4M3FN", ml_dtypes.float8_e4m3fn, "neg_inf", 0xFE),
    ("f8E4M3FN", ml_dtypes.float8_e4m3fn, "nan", None),
    ("f8E8M0FNU", ml_dtypes.float8_e8m0fnu, "pos_inf", 0xFE),  # powers of two only: 2**127
    ("f8E8M0FNU", ml_dtypes.float8_e8m0fnu, "zero", 0x00),  # no zero: 2**-127
    ("i32", np.int32, "zero", 0),
    ("i16", np.int16, None, 0),  # no padding: the interpreter loads zero
    ("f32", np.float32, None, 0),
]


@pytest.mark.parametrize(("elem", "dtype", "padding", "bits"), _PADDING_CASES)
def test_padding_values(elem: str, dtype, padding: str | None, bits: int | None) -> None:
    t_a = tv([None], [1], elem)
    p_a = pv([4], t_a, padding)
    t_o = tv([8], [1], elem)
    p_o = pv([4], t_o)
    body = "\n".join(
        [
            make_tv("va", "a", ["%n"], [1], elem),
            make_tv("vo", "o", [8], [1], elem),
            f"%pa = make_partition_view %va : {p_a}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            load("x", "pa", p_a, ["%bx"], [4], elem),
            store("x", "po", p_o, ["%bx"], [4], elem),
        ]
    )
    a = np.array([1, 2, 3, 4, 5, 6, 7, 8], dtype=np.float64).astype(dtype)
    o = np.zeros(8, dtype)
    run(body, f"%a: tile<ptr<{elem}>>, %o: tile<ptr<{elem}>>, %n: tile<i32>", (2,), [a, o, 5])
    assert np.array_equal(o[:5].astype(np.float64), a[:5].astype(np.float64))
    raw = o.view(f"u{o.dtype.itemsize}")
    for k in range(5, 8):
        if bits is None:
            assert np.isnan(o[k].astype(np.float64))
        else:
            assert int(raw[k]) == bits, (k, hex(int(raw[k])))


def test_masked_store_edges_with_row_stride_past_extent() -> None:
    # A 6x5 tensor inside an 8x8 buffer (row stride 8 > 5 columns): a 4x4 tile store
    # writes only elements inside the 6x5 tensor.
    t_o = tv([6, 5], [8, 1])
    p_o = pv([4, 4], t_o)
    body = "\n".join(
        [
            make_tv("vo", "o", [6, 5], [8, 1]),
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            "%c = constant <f32: 7.0> : tile<4x4xf32>",
            store("c", "po", p_o, ["%bx", "%by"], [4, 4]),
        ]
    )
    o = np.full((8, 8), -1.0, np.float32)
    run(body, "%o: tile<ptr<f32>>", (2, 2), [o])
    want = np.full((8, 8), -1.0, np.float32)
    want[:6, :5] = 7.0
    assert np.array_equal(o, want)


def test_column_major_tensor() -> None:
    rows, cols = 5, 7
    a = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    buf = np.ascontiguousarray(a.T).reshape(-1)  # column-major layout of a
    t_a = tv([rows, cols], [1, rows])
    p_a = pv([4, 4], t_a, "zero")
    t_o = tv([8, 8], [8, 1])
    p_o = pv([4, 4], t_o)
    body = "\n".join(
        [
            make_tv("va", "a", [rows, cols], [1, rows]),
            make_tv("vo", "o", [8, 8], [8, 1]),
            f"%pa = make_partition_view %va : {p_a}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            load("x", "pa", p_a, ["%bx", "%by"], [4, 4]),
            store("x", "po", p_o, ["%bx", "%by"], [4, 4]),
        ]
    )
    o = np.full((8, 8), 5.0, np.float32)
    run(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>", (2, 2), [buf, o])
    want = np.zeros((8, 8), np.float32)
    want[:rows, :cols] = a
    assert np.array_equal(o, want)


def test_dynamic_strides_and_block_order_any() -> None:
    # Loads at indices that are not the block ids (reversed), dynamic row stride.
    t_a = tv([None, 4], [None, 1])
    p_a = pv([2, 4], t_a)
    t_o = tv([8, 4], [4, 1])
    p_o = pv([2, 4], t_o)
    body = "\n".join(
        [
            make_tv("va", "a", ["%r", 4], ["%rs", 1]),
            make_tv("vo", "o", [8, 4], [4, 1]),
            f"%pa = make_partition_view %va : {p_a}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            "%c3 = constant <i32: 3> : tile<i32>",
            "%c0 = constant <i32: 0> : tile<i32>",
            "%rev = subi %c3, %bx : tile<i32>",
            load("x", "pa", p_a, ["%rev", "%c0"], [2, 4]),
            store("x", "po", p_o, ["%bx", "%c0"], [2, 4]),
        ]
    )
    buf = np.arange(8 * 6, dtype=np.float32)  # rows of 6, only 4 columns in the view
    o = np.zeros((8, 4), np.float32)
    run(body, "%a: tile<ptr<f32>>, %r: tile<i32>, %rs: tile<i32>, %o: tile<ptr<f32>>", (4,), [buf, 8, 6, o])
    a = buf.reshape(8, 6)[:, :4]
    want = np.concatenate([a[2 * (3 - b) : 2 * (3 - b) + 2] for b in range(4)])
    assert np.array_equal(o, want)


# -- strided views ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "step"), [(16, 3), (8, 1), (9, 2), (10, 5)])
def test_strided_1d_gaps_and_overlaps(n: int, step: int) -> None:
    t_a = tv([n], [1])
    s_a = sv([2], [step], t_a, "nan")
    space = -(-n // step)
    t_o = tv([2 * space], [1])
    p_o = pv([2], t_o)
    body = "\n".join(
        [
            make_tv("va", "a", [n], [1]),
            make_tv("vo", "o", [2 * space], [1]),
            f"%sa = make_strided_view %va : {s_a}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            load("x", "sa", s_a, ["%bx"], [2]),
            store("x", "po", p_o, ["%bx"], [2]),
        ]
    )
    a = np.arange(100, 100 + n, dtype=np.float32)
    o = np.zeros(2 * space, np.float32)
    run(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>", (space,), [a, o])
    for i in range(space):
        for t in range(2):
            c = i * step + t
            if c < n:
                assert o[2 * i + t] == a[c]
            else:
                assert np.isnan(o[2 * i + t])


def test_strided_2d_with_dim_map() -> None:
    shape = (8, 7)
    steps, tl, dm = [3, 2], [2, 4], [1, 0]  # tile dim 0 (2) along tensor dim 1, traversal 3
    space = [-(-shape[dm[i]] // steps[i]) for i in range(2)]  # (ceil(7/3)=3, ceil(8/2)=4)
    t_a = tv(list(shape), [7, 1])
    s_a = sv(tl, steps, t_a, "zero", dim_map=dm)
    out = [space[0] * tl[0], space[1] * tl[1]]
    t_o = tv(out, [out[1], 1])
    p_o = pv(tl, t_o)
    body = "\n".join(
        [
            make_tv("va", "a", list(shape), [7, 1]),
            make_tv("vo", "o", out, [out[1], 1]),
            f"%sa = make_strided_view %va : {s_a}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            load("x", "sa", s_a, ["%bx", "%by"], tl),
            store("x", "po", p_o, ["%bx", "%by"], tl),
        ]
    )
    a = np.arange(56, dtype=np.float32).reshape(shape) + 1
    o = np.full(out, -1.0, np.float32)
    run(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>", tuple(space), [a, o])
    want = np.zeros(out, np.float32)
    for i0 in range(space[0]):
        for i1 in range(space[1]):
            for t0 in range(tl[0]):
                for t1 in range(tl[1]):
                    c = [0, 0]
                    c[dm[0]] = i0 * steps[0] + t0
                    c[dm[1]] = i1 * steps[1] + t1
                    if c[0] < shape[0] and c[1] < shape[1]:
                        want[i0 * tl[0] + t0, i1 * tl[1] + t1] = a[c[0], c[1]]
    assert np.array_equal(o, want)


def test_strided_store_leaves_gaps() -> None:
    t_o = tv([11], [1])
    s_o = sv([2], [3], t_o)
    body = "\n".join(
        [
            make_tv("vo", "o", [11], [1]),
            f"%so = make_strided_view %vo : {s_o}",
            BIDS,
            "%c = constant <f32: 5.0> : tile<2xf32>",
            store("c", "so", s_o, ["%bx"], [2]),
        ]
    )
    o = np.zeros(12, np.float32)
    run(body, "%o: tile<ptr<f32>>", (4,), [o])
    want = np.array([5, 5, 0, 5, 5, 0, 5, 5, 0, 5, 5, 0], np.float32)  # element 11 is outside the view
    assert np.array_equal(o, want)


# -- gather / scatter ------------------------------------------------------------------------------------------


def _gather_kernel(padding: str | None, sparse: int) -> str:
    t_a = tv([8, 8], [8, 1])
    g_a = gv([4, 4], t_a, sparse, padding)
    t_i = tv([8], [1], "i32")
    p_i = pv([4], t_i)
    t_o = tv([8, 4], [4, 1])
    p_o = pv([4, 4], t_o)
    idx = ["%rows", "%off"] if sparse == 0 else ["%off", "%rows"]
    types = "tile<4xi32>, tile<i32>" if sparse == 0 else "tile<i32>, tile<4xi32>"
    return "\n".join(
        [
            make_tv("va", "a", [8, 8], [8, 1]),
            make_tv("vi", "i", [8], [1], "i32"),
            make_tv("vo", "o", [8, 4], [4, 1]),
            f"%ga = make_gather_scatter_view %va : {g_a}",
            f"%pi = make_partition_view %vi : {p_i}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            "%c0 = constant <i32: 0> : tile<i32>",
            load("rows", "pi", p_i, ["%bx"], [4], "i32"),
            f"%x, %xt = load_view_tko weak %ga[{', '.join(idx)}] : {g_a}, {types} -> tile<4x4xf32>, token",
            store("x", "po", p_o, ["%bx", "%c0"], [4, 4]),
        ]
    )


@pytest.mark.parametrize("padding", ["zero", "nan", None])
@pytest.mark.parametrize("sparse", [0, 1])
def test_gather_rows_out_of_range(padding: str | None, sparse: int) -> None:
    a = np.arange(64, dtype=np.float32).reshape(8, 8) + 1
    rows = np.array([5, 1, 9, 3, 7, 0, 4000000000 - (1 << 32), 6], dtype=np.int32)  # 9 and "-294967296" (huge) out
    off = 5  # columns (or rows) 5..8: 8 is outside
    o = np.full((8, 4), 77.0, np.float32)
    run(
        _gather_kernel(padding, sparse),
        "%a: tile<ptr<f32>>, %i: tile<ptr<i32>>, %o: tile<ptr<f32>>, %off: tile<i32>",
        (2,),
        [a, rows, o, off],
    )
    pad = np.nan if padding == "nan" else 0.0
    for b in range(2):
        for t0 in range(4):
            for t1 in range(4):
                r = int(rows[4 * b + (t0 if sparse == 0 else t1)]) & 0xFFFFFFFF
                k = off + (t1 if sparse == 0 else t0)
                c = (r, k) if sparse == 0 else (k, r)
                got = o[4 * b + t0, t1]
                if c[0] < 8 and c[1] < 8:
                    assert got == a[c], (b, t0, t1)
                elif np.isnan(pad):
                    assert np.isnan(got)
                else:
                    assert got == pad


def test_scatter_drops_rows_out_of_range() -> None:
    t_o = tv([8, 8], [8, 1])
    g_o = gv([4, 4], t_o, 0)
    t_i = tv([8], [1], "i32")
    p_i = pv([4], t_i)
    body = "\n".join(
        [
            make_tv("vo", "o", [8, 8], [8, 1]),
            make_tv("vi", "i", [8], [1], "i32"),
            f"%go = make_gather_scatter_view %vo : {g_o}",
            f"%pi = make_partition_view %vi : {p_i}",
            BIDS,
            load("rows", "pi", p_i, ["%bx"], [4], "i32"),
            "%v = constant <f32: [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], "
            "[13.0, 14.0, 15.0, 16.0]]> : tile<4x4xf32>",
            "%col = muli %bx, %bx : tile<i32>",
            f"%s = store_view_tko weak %v, %go[%rows, %col] : tile<4x4xf32>, {g_o}, tile<4xi32>, tile<i32> -> token",
        ]
    )
    rows = np.array([5, 1, 100, 3, 0, 6, 2, 8], dtype=np.int32)
    o = np.zeros((8, 8), np.float32)
    run(body, "%o: tile<ptr<f32>>, %i: tile<ptr<i32>>", (2,), [o, rows])
    v = np.arange(1, 17, dtype=np.float32).reshape(4, 4)
    want = np.zeros((8, 8), np.float32)
    for b in range(2):
        col = b * b
        for t0 in range(4):
            r = rows[4 * b + t0]
            for t1 in range(4):
                if r < 8 and col + t1 < 8:
                    want[r, col + t1] = v[t0, t1]
    assert np.array_equal(o, want)


# -- shape queries ---------------------------------------------------------------------------------------------


def test_get_tensor_shape_and_index_space_shape() -> None:
    t_a = tv([None, 12, None], [None, None, 1])
    body = "\n".join(
        [
            make_tv("va", "a", ["%d0", 12, "%d2"], ["%s0", "%s1", 1], dyn="i64"),
            f"%t0, %t1, %t2 = get_tensor_shape %va : {t_a} -> tile<i32>",
            f"%pa = make_partition_view %va : {pv([4, 8, 2], t_a, dim_map=[2, 0, 1])}",
            f"%n0, %n1, %n2 = get_index_space_shape %pa : {pv([4, 8, 2], t_a, dim_map=[2, 0, 1])} -> tile<i64>",
            f"%sa = make_strided_view %va : {sv([2, 2, 2], [3, 5, 7], t_a)}",
            f"%m0, %m1, %m2 = get_index_space_shape %sa : {sv([2, 2, 2], [3, 5, 7], t_a)} -> tile<i16>",
            f"%ga = make_gather_scatter_view %va : {gv([2, 2, 2], t_a, 1)}",
            f"%g0, %g1, %g2 = get_index_space_shape %ga : {gv([2, 2, 2], t_a, 1)} -> tile<i32>",
        ]
    )
    params = "%a: tile<ptr<f32>>, %d0: tile<i64>, %d2: tile<i64>, %s0: tile<i64>, %s1: tile<i64>"
    out = eval_kernel(kernel(body, params), args=[0x10000, 9, 33, 1000, 40])
    assert [int(out[k][0]) for k in ("t0", "t1", "t2")] == [9, 12, 33]
    assert out["t0"].dtype == np.int32 and out["n0"].dtype == np.int64 and out["m0"].dtype == np.int16
    # partition: N[i] = ceildiv(S[dim_map[i]], T[i]) = (33/4, 9/8, 12/2)
    assert [int(out[k][0]) for k in ("n0", "n1", "n2")] == [9, 2, 6]
    # strided: N[i] = ceildiv(S[i], step[i]) = (9/3, 12/5, 33/7)
    assert [int(out[k][0]) for k in ("m0", "m1", "m2")] == [3, 3, 5]
    assert [int(out[k][0]) for k in ("g0", "g1", "g2")] == [9, 12, 33]


def test_shape_queries_per_block_when_the_view_differs() -> None:
    t_a = tv([None], [1])
    body = "\n".join(
        [
            BIDS,
            "%c1 = constant <i32: 1> : tile<i32>",
            "%n = addi %bx, %c1 : tile<i32>",
            make_tv("va", "a", ["%n"], [1]),
            f"%t = get_tensor_shape %va : {t_a} -> tile<i32>",
            f"%pa = make_partition_view %va : {pv([2], t_a)}",
            f"%s = get_index_space_shape %pa : {pv([2], t_a)} -> tile<i32>",
        ]
    )
    out = eval_kernel(kernel(body, "%a: tile<ptr<f32>>"), grid_positions=[0, 1, 2, 3, 4], args=[0x10000])
    assert out["t"].tolist() == [1, 2, 3, 4, 5]
    assert out["s"].tolist() == [1, 1, 2, 2, 3]


# -- atomic reductions ------------------------------------------------------------------------------------------

_RED_CASES = [
    ("add", "i32", np.int32, lambda acc, v: (acc.astype(np.int64) + v.sum(0)).astype(np.int32)),
    ("and", "i32", np.int32, lambda acc, v: np.bitwise_and.reduce(np.vstack([acc[None], v]), axis=0)),
    ("or", "i64", np.int64, lambda acc, v: np.bitwise_or.reduce(np.vstack([acc[None], v]), axis=0)),
    ("xor", "i32", np.int32, lambda acc, v: np.bitwise_xor.reduce(np.vstack([acc[None], v]), axis=0)),
    ("max", "i32", np.int32, lambda acc, v: np.maximum(acc, v.max(0))),
    ("min", "i64", np.int64, lambda acc, v: np.minimum(acc, v.min(0))),
    ("umax", "i32", np.int32, lambda acc, v: np.maximum(acc.view(np.uint32), v.view(np.uint32).max(0)).view(np.int32)),
    ("umin", "i32", np.int32, lambda acc, v: np.minimum(acc.view(np.uint32), v.view(np.uint32).min(0)).view(np.int32)),
    ("addf", "f32", np.float32, lambda acc, v: acc + v.sum(0)),
    ("addf", "f16", np.float16, lambda acc, v: acc + v.sum(0)),
    ("addf", "bf16", ml_dtypes.bfloat16, lambda acc, v: acc.astype(np.float32) + v.astype(np.float32).sum(0)),
    ("addf", "f64", np.float64, lambda acc, v: acc + v.sum(0)),
]


def _red_kernel(mode: str, elem: str, padded_tail: bool) -> str:
    n_acc = 6 if padded_tail else 4
    t_v = tv([None], [1], elem)
    p_v = pv([4], t_v)
    t_a = tv([n_acc], [1], elem)
    p_a = pv([4], t_a)
    index = "%c1" if padded_tail else "%c0"
    return "\n".join(
        [
            make_tv("vv", "v", ["%n"], [1], elem),
            make_tv("va", "acc", [n_acc], [1], elem),
            f"%pv = make_partition_view %vv : {p_v}",
            f"%pa = make_partition_view %va : {p_a}",
            BIDS,
            "%c0 = constant <i32: 0> : tile<i32>",
            "%c1 = constant <i32: 1> : tile<i32>",
            load("x", "pv", p_v, ["%bx"], [4], elem),
            f"%r = atomic_red_view_tko relaxed device %pa[{index}], {mode}, %x : "
            f"{tile([4], elem)}, {p_a}, tile<i32> -> token",
        ]
    )


@pytest.mark.parametrize(("mode", "elem", "dtype", "expect"), _RED_CASES)
def test_atomic_red_view_all_blocks_to_one_tile(mode: str, elem: str, dtype, expect) -> None:
    rng = np.random.default_rng(hash(mode + elem) % 1000)
    blocks = 16
    if dtype in (np.int32, np.int64):
        v = rng.integers(-(1 << 30), 1 << 30, size=(blocks, 4)).astype(dtype)
        if mode == "add":
            v[:, 0] = (1 << 30) + 7  # wraps around
        acc = rng.integers(-1000, 1000, size=4).astype(dtype)
    else:
        v = rng.integers(-8, 9, size=(blocks, 4)).astype(dtype)  # exact in every order
        acc = np.array([0.5, -1, 2, 100], dtype=dtype)
    want = np.asarray(expect(acc.copy(), v)).astype(dtype)
    run(
        _red_kernel(mode, elem, False),
        f"%v: tile<ptr<{elem}>>, %acc: tile<ptr<{elem}>>, %n: tile<i32>",
        (blocks,),
        [v.reshape(-1), acc, blocks * 4],
    )
    assert np.array_equal(acc.astype(np.float64), want.astype(np.float64)), (acc, want)


def test_atomic_red_view_partial_tile_is_masked() -> None:
    v = np.arange(1, 4 * 5 + 1, dtype=np.float32)
    acc = np.zeros(8, np.float32)  # the view covers 6 elements: the tile at index 1 is 4, 5 (6, 7 masked)
    run(_red_kernel("addf", "f32", True), "%v: tile<ptr<f32>>, %acc: tile<ptr<f32>>, %n: tile<i32>", (5,), [v, acc, 20])
    want = np.zeros(8, np.float32)
    want[4:6] = v.reshape(5, 4)[:, :2].sum(0)
    assert np.array_equal(acc, want)


def test_atomic_red_overlapping_strided_tiles() -> None:
    t_a = tv([9], [1], "i32")
    s_a = sv([2], [1], t_a)
    body = "\n".join(
        [
            make_tv("va", "acc", [9], [1], "i32"),
            f"%sa = make_strided_view %va : {s_a}",
            BIDS,
            "%one = constant <i32: [1, 10]> : tile<2xi32>",
            f"%r = atomic_red_view_tko relaxed device %sa[%bx], add, %one : tile<2xi32>, {s_a}, tile<i32> -> token",
        ]
    )
    acc = np.zeros(9, np.int32)
    run(body, "%acc: tile<ptr<i32>>", (9,), [acc])
    # tile i covers elements i (+1) and i + 1 (+10); tile 8's second element is outside
    want = np.array([1] + [11] * 8, np.int32)
    assert np.array_equal(acc, want)


# -- views that differ between blocks -----------------------------------------------------------------------


def test_non_uniform_base_pointers() -> None:
    t_a = tv([4], [1])
    p_a = pv([4], t_a)
    t_o = tv([None], [1])
    p_o = pv([4], t_o)
    body = "\n".join(
        [
            BIDS,
            "%ai = ptr_to_int %a : tile<ptr<f32>> -> tile<i64>",
            "%b64 = exti %bx signed : tile<i32> -> tile<i64>",
            "%c24 = constant <i64: 24> : tile<i64>",  # every block's tensor starts 6 floats later
            "%off = muli %b64, %c24 : tile<i64>",
            "%pi = addi %ai, %off : tile<i64>",
            "%p = int_to_ptr %pi : tile<i64> -> tile<ptr<f32>>",
            make_tv("va", "p", [4], [1]),
            make_tv("vo", "o", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p_a}",
            f"%po = make_partition_view %vo : {p_o}",
            "%c0 = constant <i32: 0> : tile<i32>",
            load("x", "pa", p_a, ["%c0"], [4]),
            store("x", "po", p_o, ["%bx"], [4]),
        ]
    )
    a = np.arange(40, dtype=np.float32)
    o = np.zeros(20, np.float32)
    run(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>, %n: tile<i32>", (5,), [a, o, 20])
    want = np.concatenate([a[6 * b : 6 * b + 4] for b in range(5)])
    assert np.array_equal(o, want)


def test_non_uniform_shapes_pad_per_block() -> None:
    t_a = tv([None], [1])
    p_a = pv([4], t_a, "neg_inf")
    t_o = tv([None], [1])
    p_o = pv([4], t_o)
    body = "\n".join(
        [
            BIDS,
            "%c1 = constant <i32: 1> : tile<i32>",
            "%len = addi %bx, %c1 : tile<i32>",
            make_tv("va", "a", ["%len"], [1]),
            make_tv("vo", "o", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p_a}",
            f"%po = make_partition_view %vo : {p_o}",
            "%c0 = constant <i32: 0> : tile<i32>",
            load("x", "pa", p_a, ["%c0"], [4]),
            store("x", "po", p_o, ["%bx"], [4]),
        ]
    )
    a = np.arange(1, 5, dtype=np.float32)
    o = np.zeros(16, np.float32)
    run(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>, %n: tile<i32>", (4,), [a, o, 16])
    want = np.full((4, 4), -np.inf, np.float32)
    for b in range(4):
        want[b, : b + 1] = a[: b + 1]
    assert np.array_equal(o.reshape(4, 4), want)


# -- element types ------------------------------------------------------------------------------------------------


def test_i1_view_roundtrip() -> None:
    t = tv([6], [1], "i1")
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", [6], [1], "i1"),
            make_tv("vo", "o", [6], [1], "i1"),
            f"%pa = make_partition_view %va : {p}",
            f"%po = make_partition_view %vo : {p}",
            BIDS,
            load("x", "pa", p, ["%bx"], [4], "i1"),
            "%y = xori %x, %x : tile<4xi1>",
            "%t = constant <i1: true> : tile<4xi1>",
            "%z = xori %y, %t : tile<4xi1>",
            "%w = xori %z, %x : tile<4xi1>",  # not x
            store("w", "po", p, ["%bx"], [4], "i1"),
        ]
    )
    a = np.array([1, 0, 0, 1, 1, 0, 1, 1], np.uint8)
    o = np.full(8, 7, np.uint8)
    run(body, "%a: tile<ptr<i1>>, %o: tile<ptr<i1>>", (2,), [a[:6].view(np.uint8), o])
    assert o.tolist() == [0, 1, 1, 0, 0, 1, 7, 7]


def run_placed(text: str, grid, args: list) -> tuple[Machine, dict[str, np.ndarray]]:
    """Run the entry on one group of all `grid` blocks with pointer arguments bound to
    raw buffers (ndarrays, placed as they are, e.g. packed bytes) and scalars (ints, as
    i32); returns the machine and the entry's named values."""
    module = load_module(text)
    entry = find_kernel(module, None)
    m = Machine(module)
    m.grid = (grid[0], 1, 1)
    body = entry.regions[0].blocks[0]
    frame = Frame(Group(np.arange(grid[0], dtype=np.int32), np.zeros(grid[0], np.int32), np.zeros(grid[0], np.int32)))
    for param, arg in zip(body.arguments, args, strict=True):
        if isinstance(arg, np.ndarray):
            frame.env[param] = np.array([m.memory.place(arg)], np.int64)
        else:
            frame.env[param] = np.array([arg], np.int32)
    m.memory.begin_group(0, grid[0])
    m.exec_block(body, frame)
    values = {r.name: frame.env[r] for op in entry.walk() for r in op.results if r.name and r in frame.env}
    return m, values


def test_tf32_load_keeps_tf32_values() -> None:
    t = tv([4], [1], "tf32")
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", [4], [1], "tf32"),
            f"%pa = make_partition_view %va : {p}",
            "%c0 = constant <i32: 0> : tile<i32>",
            load("x", "pa", p, ["%c0"], [4], "tf32"),
        ]
    )
    bits = np.array([0x3F800001, 0x3FFFFFFF, 0x7F800001, 0xC0000000], np.uint32)
    _, values = run_placed(kernel(body, "%a: tile<ptr<tf32>>"), (1,), [bits.view(np.float32).copy()])
    x = values["x"].reshape(-1)
    got = x.view(np.uint32)
    # the low 13 mantissa bits are cleared; a NaN stays a NaN (not the infinity its bits would cut to)
    assert got[0] == 0x3F800000 and got[1] == 0x3FFFE000 and got[3] == 0xC0000000
    assert np.isnan(x[2])


# -- sub-byte ------------------------------------------------------------------------------------------------------


def test_f4_view_packed_little_endian_nibbles() -> None:
    t_a = tv([None], [1], "f4E2M1FN")
    p_a = pv([4], t_a, "zero")
    t_o = tv([8], [1], "f4E2M1FN")
    p_o = pv([4], t_o)
    body = "\n".join(
        [
            make_tv("va", "a", ["%n"], [1], "f4E2M1FN"),
            make_tv("vo", "o", [8], [1], "f4E2M1FN"),
            f"%pa = make_partition_view %va : {p_a}",
            f"%po = make_partition_view %vo : {p_o}",
            BIDS,
            load("x", "pa", p_a, ["%bx"], [4], "f4E2M1FN"),
            store("x", "po", p_o, ["%bx"], [4], "f4E2M1FN"),
        ]
    )
    # The spec's example: [0.5, 1.5] is the byte 0x31 (element 0 in bits 3..0).
    values = [0.5, 1.5, 2.0, 3.0, 6.0, -1.0]
    codes = [0b0001, 0b0011, 0b0100, 0b0101, 0b0111, 0b1010]
    src = np.array([codes[0] | codes[1] << 4, codes[2] | codes[3] << 4, codes[4] | codes[5] << 4, 0xFF], np.uint8)
    dst = np.full(4, 0xAA, np.uint8)
    text = kernel(body, "%a: tile<ptr<f4E2M1FN>>, %o: tile<ptr<f4E2M1FN>>, %n: tile<i32>")
    _, out = run_placed(text, (2,), [src, dst, 6])
    x = out["x"]
    assert x.dtype == ml_dtypes.float4_e2m1fn and x.shape == (2, 4)
    assert x.astype(np.float32).reshape(-1).tolist() == values + [0.0, 0.0]  # padding zero past n
    assert dst.tolist() == [0x31, 0x54, 0xA7, 0x00]


def test_f4_view_odd_offsets_touch_single_nibbles() -> None:
    t_o = tv([5], [1], "f4E2M1FN")
    p_o = pv([2], t_o)
    body = "\n".join(
        [
            make_tv("vo", "o", [5], [1], "f4E2M1FN"),
            f"%po = make_partition_view %vo : {p_o}",
            "%c = constant <f4E2M1FN: [1.0, 4.0]> : tile<2xf4E2M1FN>",
            "%c2 = constant <i32: 2> : tile<i32>",
            store("c", "po", p_o, ["%c2"], [2], "f4E2M1FN"),  # element 4 (5 is outside): low nibble of byte 2
        ]
    )
    dst = np.full(4, 0xAA, np.uint8)
    run_placed(kernel(body, "%o: tile<ptr<f4E2M1FN>>"), (1,), [dst])
    assert dst.tolist() == [0xAA, 0xAA, 0xA2, 0xAA]  # 1.0 is 0b0010


def test_f4_strided_tensor() -> None:
    # every other element: rows of one element, two elements apart (offsets 0, 2, 4: low
    # nibbles); the packing dimension is the unit-stride one, as f4 views need
    t_a = tv([3, 1], [2, 1], "f4E2M1FN")
    p_a = pv([4, 1], t_a, "zero")
    body = "\n".join(
        [
            make_tv("va", "a", [3, 1], [2, 1], "f4E2M1FN"),
            f"%pa = make_partition_view %va : {p_a}",
            "%c0 = constant <i32: 0> : tile<i32>",
            load("x", "pa", p_a, ["%c0", "%c0"], [4, 1], "f4E2M1FN"),
        ]
    )
    src = np.array([0x21, 0x43, 0x65], np.uint8)  # codes 1, 2, 3, 4, 5, 6
    _, out = run_placed(kernel(body, "%a: tile<ptr<f4E2M1FN>>"), (1,), [src])
    assert out["x"].reshape(-1).view(np.uint8).tolist() == [1, 3, 5, 0]


# -- whole kernels ---------------------------------------------------------------------------------------------------


def test_vector_add_example_matches_numpy() -> None:
    n = 5000  # not a multiple of 1024: the last tile is partial
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.full(n, np.nan, np.float32)
    launch(REPO / "examples" / "vector_add.tileir", grid=(-(-n // 1024),), args=[a, n, 1, b, n, 1, c, n, 1])
    assert np.array_equal(c, a + b)


def test_softmax_example_matches_numpy() -> None:
    rows, cols = 10, 700  # partial row block, columns padded with -inf
    rng = np.random.default_rng(2)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = np.zeros((rows, cols), np.float32)
    softmax = REPO / "examples" / "softmax.tileir"
    launch(softmax, grid=(-(-rows // 4),), args=[x, rows, cols, cols, 1, y, rows, cols, cols, 1])
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    assert np.allclose(y, want, rtol=1e-5, atol=1e-7)


# -- groups, divergence ------------------------------------------------------------------------------------------------


def test_views_inside_divergent_if_and_many_small_groups() -> None:
    # Odd blocks copy their tile doubled, even blocks store zeros; views are made outside
    # the `if` (the sub-groups restrict them). A tiny group budget runs each block alone,
    # so the zero-copy arrays are reused across groups.
    t = tv([None], [1])
    p = pv([4], t, "zero")
    body = "\n".join(
        [
            make_tv("va", "a", ["%n"], [1]),
            make_tv("vo", "o", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p}",
            f"%po = make_partition_view %vo : {p}",
            BIDS,
            "%c0 = constant <i32: 0> : tile<i32>",
            "%c2 = constant <i32: 2> : tile<i32>",
            "%m = remi %bx, %c2 signed : tile<i32>",
            "%odd = cmpi not_equal %m, %c0, signed : tile<i32> -> tile<i1>",
            "if %odd {",
            load("x", "pa", p, ["%bx"], [4]),
            "%y = addf %x, %x : tile<4xf32>",
            store("y", "po", p, ["%bx"], [4]),
            "} else {",
            "%z = constant <f32: 0.0> : tile<4xf32>",
            store("z", "po", p, ["%bx"], [4]),
            "}",
        ]
    )
    from compiler.interp import RunOptions

    a = np.arange(1, 31, dtype=np.float32)
    for budget in (4, 1 << 20):
        o = np.full(30, -1.0, np.float32)
        launch(
            kernel(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>, %n: tile<i32>"),
            grid=(8,),
            args=[a, o, 30],
            options=RunOptions(group_budget=budget),
        )
        want = np.where((np.arange(30) // 4) % 2 == 1, 2 * a, 0.0)
        assert np.array_equal(o, want), budget


# -- property test against the spec's formula -------------------------------------------------------------------------

try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None


def _reference_tile(a: np.ndarray, index, tile_shape, steps, dim_map, pad):
    """The tile at `index` by the spec's formula, one element at a time."""
    out = np.empty(tile_shape, dtype=np.float64)
    for t in np.ndindex(*tile_shape):
        c = [0] * a.ndim
        for i in range(a.ndim):
            c[dim_map[i]] = index[i] * steps[i] + t[i]
        out[t] = a[tuple(c)] if all(c[d] < a.shape[d] for d in range(a.ndim)) else pad
    return out


if given is not None:

    @st.composite
    def _views(draw):
        rank = draw(st.integers(1, 3))
        shape = [draw(st.integers(1, 7)) for _ in range(rank)]
        tile_shape = [draw(st.sampled_from([1, 2, 4])) for _ in range(rank)]
        dim_map = draw(st.permutations(list(range(rank))))
        strided = draw(st.booleans())
        steps = [draw(st.integers(1, 5)) for _ in range(rank)] if strided else None
        order = draw(st.permutations(list(range(rank))))  # memory layout: innermost first
        gaps = [draw(st.integers(0, 2)) for _ in range(rank)]
        return shape, tile_shape, dim_map, steps, order, gaps

    @settings(max_examples=25, deadline=None)
    @given(_views())
    def test_tiled_views_match_the_formula(case) -> None:
        shape, tile_shape, dim_map, steps, order, gaps = case
        rank = len(shape)
        strides = [0] * rank
        reach = 1
        for d in order:  # each dimension's stride past the previous one's extent, plus a gap
            strides[d] = reach + gaps[d]
            reach = strides[d] * shape[d]
        buf = np.arange(reach, dtype=np.float32) + 1
        a = np.lib.stride_tricks.as_strided(buf, shape=shape, strides=[s * 4 for s in strides])
        step = steps or tile_shape
        space = [-(-shape[dim_map[i]] // step[i]) for i in range(rank)]
        t_a = tv(shape, strides)
        view = sv(tile_shape, steps, t_a, "nan", dim_map) if steps else pv(tile_shape, t_a, "nan", dim_map)
        out_shape = [space[i] * tile_shape[i] for i in range(rank)]
        out_strides = [int(np.prod(out_shape[i + 1 :])) for i in range(rank)]
        t_o = tv(out_shape, out_strides)
        p_o = pv(tile_shape, t_o)
        ids = ["%bx", "%by", "%bz"][:rank]
        make = "make_strided_view" if steps else "make_partition_view"
        body = "\n".join(
            [
                make_tv("va", "a", shape, strides),
                make_tv("vo", "o", out_shape, out_strides),
                f"%va2 = {make} %va : {view}",
                f"%po = make_partition_view %vo : {p_o}",
                BIDS,
                load("x", "va2", view, ids, tile_shape),
                store("x", "po", p_o, ids, tile_shape),
            ]
        )
        o = np.zeros(out_shape, np.float32)
        launch(kernel(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>"), grid=tuple(space), args=[buf, o])
        for index in np.ndindex(*space):
            want = _reference_tile(a, index, tile_shape, step, dim_map, np.nan)
            got = o[tuple(slice(index[i] * tile_shape[i], (index[i] + 1) * tile_shape[i]) for i in range(rank))]
            assert np.array_equal(got, want, equal_nan=True), index

    @settings(max_examples=20, deadline=None)
    @given(_views())
    def test_tiled_view_stores_match_the_formula(case) -> None:
        shape, tile_shape, dim_map, steps, order, gaps = case
        rank = len(shape)
        if steps:  # tiles must not overlap: two blocks storing one element is a race
            steps = [max(s, t) for s, t in zip(steps, tile_shape, strict=True)]
        strides = [0] * rank
        reach = 1
        for d in order:
            strides[d] = reach + gaps[d]
            reach = strides[d] * shape[d]
        step = steps or tile_shape
        space = [-(-shape[dim_map[i]] // step[i]) for i in range(rank)]
        src_shape = [space[i] * tile_shape[i] for i in range(rank)]
        src_strides = [int(np.prod(src_shape[i + 1 :])) for i in range(rank)]
        src = np.arange(int(np.prod(src_shape)), dtype=np.float32).reshape(src_shape) + 1
        t_o = tv(shape, strides)
        view = sv(tile_shape, steps, t_o, None, dim_map) if steps else pv(tile_shape, t_o, None, dim_map)
        t_s = tv(src_shape, src_strides)
        p_s = pv(tile_shape, t_s)
        ids = ["%bx", "%by", "%bz"][:rank]
        make = "make_strided_view" if steps else "make_partition_view"
        body = "\n".join(
            [
                make_tv("vs", "s", src_shape, src_strides),
                make_tv("vo", "o", shape, strides),
                f"%ps = make_partition_view %vs : {p_s}",
                f"%vo2 = {make} %vo : {view}",
                BIDS,
                load("x", "ps", p_s, ids, tile_shape),
                store("x", "vo2", view, ids, tile_shape),
            ]
        )
        buf = np.zeros(reach, np.float32)
        launch(kernel(body, "%s: tile<ptr<f32>>, %o: tile<ptr<f32>>"), grid=tuple(space), args=[src.reshape(-1), buf])
        want = np.zeros(reach, np.float32)
        for index in np.ndindex(*space):
            for t in np.ndindex(*tile_shape):
                c = [0] * rank
                for i in range(rank):
                    c[dim_map[i]] = index[i] * step[i] + t[i]
                if all(c[d] < shape[d] for d in range(rank)):
                    want[sum(c[d] * strides[d] for d in range(rank))] = src[
                        tuple(index[i] * tile_shape[i] + t[i] for i in range(rank))
                    ]
        assert np.array_equal(buf, want)


def test_two_element_types_over_one_buffer() -> None:
    # f8E4M3FN and f8E8M0FNU views of the same bytes (cached zero-copy arrays must not mix
    # up dtypes of one size), and an i8 view of them through a pointer cast.
    t1, t2, t3 = tv([4], [1], "f8E4M3FN"), tv([4], [1], "f8E8M0FNU"), tv([4], [1], "i8")
    p1, p2, p3 = pv([4], t1), pv([4], t2), pv([4], t3)
    body = "\n".join(
        [
            "%q = ptr_to_ptr %a : tile<ptr<f8E4M3FN>> -> tile<ptr<f8E8M0FNU>>",
            "%r = ptr_to_ptr %a : tile<ptr<f8E4M3FN>> -> tile<ptr<i8>>",
            make_tv("v1", "a", [4], [1], "f8E4M3FN"),
            make_tv("v2", "q", [4], [1], "f8E8M0FNU"),
            make_tv("v3", "r", [4], [1], "i8"),
            f"%p1 = make_partition_view %v1 : {p1}",
            f"%p2 = make_partition_view %v2 : {p2}",
            f"%p3 = make_partition_view %v3 : {p3}",
            "%c0 = constant <i32: 0> : tile<i32>",
            load("x1", "p1", p1, ["%c0"], [4], "f8E4M3FN"),
            load("x2", "p2", p2, ["%c0"], [4], "f8E8M0FNU"),
            load("x3", "p3", p3, ["%c0"], [4], "i8"),
        ]
    )
    raw = np.array([0x38, 0x7F, 0x80, 0x01], np.uint8)
    _, out = run_placed(kernel(body, "%a: tile<ptr<f8E4M3FN>>"), (1,), [raw])
    assert out["x1"].dtype == ml_dtypes.float8_e4m3fn and out["x2"].dtype == ml_dtypes.float8_e8m0fnu
    assert out["x1"].reshape(-1).view(np.uint8).tolist() == raw.tolist()
    assert out["x2"].reshape(-1).view(np.uint8).tolist() == raw.tolist()
    assert out["x3"].reshape(-1).tolist() == [0x38, 0x7F, -128, 1]


def test_loop_carried_loads_keep_their_values() -> None:
    # Two blocks; in iteration i block b loads tile 2i + b (a contiguous run of tile
    # indices: the path whose output array is reused once dead) and carries the previous
    # iteration's tile: the result must be tiles (2i + b) + (2i - 2 + b), not a tile
    # added to itself.
    n = 1 << 15
    t = tv([8 * n], [1])
    p = pv([n], t)
    po = pv([n], tv([6 * n], [1]))
    body = "\n".join(
        [
            make_tv("va", "a", [8 * n], [1]),
            make_tv("vo", "o", [6 * n], [1]),
            f"%pa = make_partition_view %va : {p}",
            f"%po = make_partition_view %vo : {po}",
            BIDS,
            "%c1 = constant <i32: 1> : tile<i32>",
            "%c2 = constant <i32: 2> : tile<i32>",
            "%c4 = constant <i32: 4> : tile<i32>",
            load("first", "pa", p, ["%bx"], [n]),
            f"%last = for %i in (%c1 to %c4, step %c1) : tile<i32> iter_values(%prev = %first) -> (tile<{n}xf32>) {{",
            "%i2 = muli %i, %c2 : tile<i32>",
            "%k = addi %i2, %bx : tile<i32>",
            load("x", "pa", p, ["%k"], [n]),
            f"%s = addf %x, %prev : tile<{n}xf32>",
            "%k2 = subi %k, %c2 : tile<i32>",
            store("s", "po", po, ["%k2"], [n]),
            f"continue %x : tile<{n}xf32>",
            "}",
        ]
    )
    a = np.random.default_rng(3).standard_normal(8 * n).astype(np.float32)
    o = np.zeros(6 * n, np.float32)
    launch(kernel(body, "%a: tile<ptr<f32>>, %o: tile<ptr<f32>>"), grid=(2,), args=[a, o])
    tiles = a.reshape(8, n)
    assert np.array_equal(o.reshape(6, n), tiles[2:] + tiles[:-2])


def test_atomic_red_view_on_a_self_overlapping_tensor() -> None:
    # strides [1, 1]: elements (0, 1) and (1, 0) share an address, so one tile updates it
    # twice; every update must land (the general path applies them one by one).
    t = tv([2, 2], [1, 1], "i32")
    p = pv([2, 2], t)
    body = "\n".join(
        [
            make_tv("va", "acc", [2, 2], [1, 1], "i32"),
            f"%pa = make_partition_view %va : {p}",
            "%c0 = constant <i32: 0> : tile<i32>",
            "%v = constant <i32: [[1, 10], [100, 1000]]> : tile<2x2xi32>",
            f"%r = atomic_red_view_tko relaxed device %pa[%c0, %c0], add, %v : tile<2x2xi32>, {p}, tile<i32> -> token",
        ]
    )
    acc = np.zeros(4, np.int32)
    run(body, "%acc: tile<ptr<i32>>", (3,), [acc])
    assert acc.tolist() == [3 * 1, 3 * (10 + 100), 3 * 1000, 0]


@pytest.mark.parametrize("budget", [2, 1 << 20])
def test_atomic_red_view_uniform_update_applies_once_per_block(budget: int) -> None:
    # View, index and value are the same for the whole group: still one update per block.
    from compiler.interp import RunOptions

    t = tv([2, 2], [2, 1], "f32")
    p = pv([2, 2], t)
    body = "\n".join(
        [
            make_tv("va", "acc", [2, 2], [2, 1], "f32"),
            f"%pa = make_partition_view %va : {p}",
            "%c0 = constant <i32: 0> : tile<i32>",
            "%v = constant <f32: [[1.0, 2.0], [4.0, 8.0]]> : tile<2x2xf32>",
            f"%r = atomic_red_view_tko relaxed device %pa[%c0, %c0], addf, %v : tile<2x2xf32>, {p}, tile<i32> -> token",
        ]
    )
    acc = np.full(4, 0.5, np.float32)
    launch(kernel(body, "%acc: tile<ptr<f32>>"), grid=(5,), args=[acc], options=RunOptions(group_budget=budget))
    assert acc.tolist() == [5.5, 10.5, 20.5, 40.5]


@pytest.mark.parametrize("sparse", [0, 1])
def test_gather_inbounds_is_checked_on_the_dense_dimension(sparse: int) -> None:
    """13.4's `inbounds` on a gather: the dense dimension's tile must lie inside (columns 5..8
    of 8 do not: reported); the sparse rows keep their own rule (masked, padded)."""
    from compiler.interp.machine import InterpError

    promised = "] inbounds = [true, true] : gather_scatter_view"
    text = _gather_kernel("zero", sparse).replace("] : gather_scatter_view", promised)
    params = "%a: tile<ptr<f32>>, %i: tile<ptr<i32>>, %o: tile<ptr<f32>>, %off: tile<i32>"
    a = np.arange(64, dtype=np.float32).reshape(8, 8) + 1
    rows = np.array([5, 1, 9, 3, 7, 0, 2, 6], dtype=np.int32)
    o = np.full((8, 4), 77.0, np.float32)
    run(text, params, (2,), [a, rows, o, 4])  # columns (rows) 4..7: inside
    with pytest.raises(InterpError, match=r"reaches past the tensor's extent 8 .*inbounds"):
        run(text, params, (2,), [a, rows, o, 5])
