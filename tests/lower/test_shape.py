"""Shape ops through the lowering: broadcast, reshape, permute, cat, extract. Each kernel
loads its inputs through static tensor views, applies the ops and stores the results; the
Triton interpreter's results must equal the CPU interpreter's bitwise (the ops only move
elements), and are also checked against NumPy. One representative kernel is compiled
for every target.

`io_kernel` (also used by test_reduce and test_mma) builds such kernels."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

from .harness import compile_for, run_both, source_of

RNG = np.random.default_rng(3)

NP = {
    "i1": np.dtype(np.bool_), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16), "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64), "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2), "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "tf32": np.dtype(np.float32),  # tf32 values held in f32 storage
}  # fmt: skip


def tile(shape: tuple[int, ...], el: str) -> str:
    return f"tile<{'x'.join(map(str, shape))}x{el}>" if shape else f"tile<{el}>"


def _view_types(shape: tuple[int, ...], el: str) -> tuple[tuple[int, ...], str, str]:
    mem = shape or (1,)
    strides = [int(np.prod(mem[d + 1 :])) for d in range(len(mem))]
    tv = f"tensor_view<{'x'.join(map(str, mem))}x{el}, strides=[{','.join(map(str, strides))}]>"
    pv = f"partition_view<tile=({'x'.join(map(str, mem))}), {tv}>"
    return mem, tv, pv


def io_kernel(
    inputs: list[tuple[str, tuple[int, ...], str]],
    outputs: list[tuple[str, tuple[int, ...], str]],
    body: str,
    name: str = "k",
) -> str:
    """A kernel loading each input `(name, shape, element)` into `%name` (a whole array
    through a static view; 0-d through a 1-element one), running `body`, then storing each
    output value `%name` into the next parameter."""
    params, lines = [], ["%bx, %by, %bz = get_tile_block_id : tile<i32>"]
    for n, shape, el in inputs:
        mem, tv, pv = _view_types(shape, el)
        params.append(f"%p_{n}: tile<ptr<{el}>>")
        strides = tv.split("strides=[")[1].rstrip("]>")
        idx = ", ".join(["%bx"] * len(mem))
        target = f"%{n}" if shape else f"%{n}_1"
        lines += [
            f"%v_{n} = make_tensor_view %p_{n}, shape = [{', '.join(map(str, mem))}], strides = [{strides}] : {tv}",
            f"%q_{n} = make_partition_view %v_{n} : {pv}",
            f"{target}, %t_{n} = load_view_tko weak %q_{n}[{idx}] : {pv}, tile<i32> -> {tile(mem, el)}, token",
        ]
        if not shape:
            lines.append(f"%{n} = reshape %{n}_1 : {tile(mem, el)} -> {tile((), el)}")
    lines += [ln.strip() for ln in body.strip().splitlines() if ln.strip()]
    for n, shape, el in outputs:
        mem, tv, pv = _view_types(shape, el)
        params.append(f"%o_{n}: tile<ptr<{el}>>")
        strides = tv.split("strides=[")[1].rstrip("]>")
        idx = ", ".join(["%bx"] * len(mem))
        value = f"%{n}"
        if not shape:
            lines.append(f"%{n}_1 = reshape %{n} : {tile((), el)} -> {tile(mem, el)}")
            value = f"%{n}_1"
        lines += [
            f"%w_{n} = make_tensor_view %o_{n}, shape = [{', '.join(map(str, mem))}], strides = [{strides}] : {tv}",
            f"%r_{n} = make_partition_view %w_{n} : {pv}",
            f"%s_{n} = store_view_tko weak {value}, %r_{n}[{idx}] : {tile(mem, el)}, {pv}, tile<i32> -> token",
        ]
    text = "\n".join("    " + ln for ln in lines)
    return f"cuda_tile.module @m {{\n  entry @{name}({', '.join(params)}) {{\n{text}\n    return\n  }}\n}}\n"


def _io_args(inputs, outputs, values) -> tuple[list[np.ndarray], list[np.ndarray]]:
    ins = [np.ascontiguousarray(np.asarray(v, NP[el]).reshape(shape or (1,))) for v, (_, shape, el) in
           zip(values, inputs, strict=True)]  # fmt: skip
    outs = [np.zeros(shape or (1,), NP[el]) for _, shape, el in outputs]
    return ins, outs


def run_io(inputs, outputs, body: str, values: list[np.ndarray], ulp: int = 0, on_gpu=None) -> list[np.ndarray]:
    """Runs `io_kernel` on both backends (compared bitwise, or within `ulp`; `on_gpu`: as in
    run_both); returns Triton's outputs."""
    ins, outs = _io_args(inputs, outputs, values)
    _, tri = run_both(io_kernel(inputs, outputs, body), "k", 1, [*ins, *outs], ulp=ulp, on_gpu=on_gpu)
    return [np.asarray(t).reshape(shape) for t, (_, shape, _) in zip(tri[len(ins) :], outputs, strict=True)]


def run_io_pair(inputs, outputs, body: str, values: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Runs `io_kernel` on both backends without comparing: (CPU outputs, Triton outputs)."""
    from compiler.runtime import launch, load_module

    module = load_module(io_kernel(inputs, outputs, body))
    results = []
    for backend in ("cpu", "triton-interpret"):
        ins, outs = _io_args(inputs, outputs, values)
        launch(module, "k", 1, [*ins, *outs], backend=backend)
        results.append([o.reshape(shape) for o, (_, shape, _) in zip(outs, outputs, strict=True)])
    return results[0], results[1]


def bits(a: np.ndarray) -> np.ndarray:
    """The array as unsigned integers of its width (bools as they are): for bitwise compares."""
    a = np.asarray(a)
    return a if a.dtype == np.bool_ else a.view(f"u{a.dtype.itemsize}")


def sample(shape: tuple[int, ...], el: str) -> np.ndarray:
    """Random bit patterns of `el` (NaNs with payloads included), edge values first."""
    n = int(np.prod(shape))
    dt = NP[el]
    if el == "i1":
        return RNG.integers(0, 2, n).astype(np.bool_).reshape(shape)
    out = RNG.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt).copy()
    if el.startswith("f") or el == "bf16":
        edge = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0**-140]).astype(dt)
    else:
        info = np.iinfo(dt)
        edge = np.array([0, -1, info.min, info.max, 1], dtype=dt)
    out[: min(n, edge.size)] = edge[:n]
    return out.reshape(shape)


# -- broadcast ----------------------------------------------------------------------------------------

ELEMENTS = ["i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "f8E4M3FN"]


@pytest.mark.parametrize("el", ELEMENTS)
def test_broadcast_reshape_permute_types(el):
    # One kernel per element type: every op of the group on edge and random values.
    x = sample((4, 1), el)
    y = sample((1,), el)
    z = sample((2, 4, 8), el)
    s = sample((), el)
    body = f"""
    %b = broadcast %x : {tile((4, 1), el)} -> {tile((4, 64), el)}
    %y2 = reshape %y : {tile((1,), el)} -> {tile((1, 1, 1), el)}
    %by_ = broadcast %y2 : {tile((1, 1, 1), el)} -> {tile((2, 4, 8), el)}
    %r = reshape %z : {tile((2, 4, 8), el)} -> {tile((8, 8), el)}
    %p = permute %z [2, 0, 1] : {tile((2, 4, 8), el)} -> {tile((8, 2, 4), el)}
    %s1 = reshape %s : {tile((), el)} -> {tile((1, 1), el)}
    %s2 = broadcast %s1 : {tile((1, 1), el)} -> {tile((1, 16), el)}
    %s0 = reshape %s1 : {tile((1, 1), el)} -> {tile((), el)}
    """
    outs = run_io(
        [("x", (4, 1), el), ("y", (1,), el), ("z", (2, 4, 8), el), ("s", (), el)],
        [("b", (4, 64), el), ("by_", (2, 4, 8), el), ("r", (8, 8), el), ("p", (8, 2, 4), el), ("s2", (1, 16), el),
         ("s0", (), el)],
        body, [x, y, z, s],
    )  # fmt: skip
    b, by_, r, p, s2, s0 = (bits(o) for o in outs)
    assert np.array_equal(b, np.broadcast_to(bits(x), (4, 64)))
    assert np.array_equal(by_, np.broadcast_to(bits(y).reshape(1, 1, 1), (2, 4, 8)))
    assert np.array_equal(r, bits(z).reshape(8, 8))
    assert np.array_equal(p, np.transpose(bits(z), (2, 0, 1)))
    assert np.array_equal(s2, np.broadcast_to(bits(s).reshape(1, 1), (1, 16)))
    assert np.array_equal(s0, bits(s))


@pytest.mark.parametrize(
    ("src", "dst"),
    [((4096,), (64, 64)), ((64, 64), (4096,)), ((16, 2), (2, 2, 8)), ((2, 2, 8), (32,)), ((1,), ()), ((256,), (2, 128)),
     ((2, 1, 4), (8, 1)), ((8,), (8, 1)), ((8,), (1, 8, 1)), ((2, 1, 4), (1, 2, 1, 4, 1))],
)  # fmt: skip
def test_reshape_keeps_row_major_order(src, dst):
    x = np.arange(int(np.prod(src)), dtype=np.int32).reshape(src) * 7 - 3
    body = f"%r = reshape %x : {tile(src, 'i32')} -> {tile(dst, 'i32')}"
    (r,) = run_io([("x", src, "i32")], [("r", dst, "i32")], body, [x])
    assert np.array_equal(r, x.reshape(dst))


# A row statistic ([4] -> [4, 1]), worked on after its broadcast and then combined with the
# rows. With tl.reshape for the [4] -> [4, 1], Triton 3.6 gave the reshape's result a layout of
# its own, moved the work on the broadcast statistic onto the [4, 1] tile in that layout, and
# then converted the rows to it: a layout in which each thread held whole rows (sm_90: 32
# registers, 32,224 B of spills, a 70 s compile; now 80 registers, none, under a second).
ROW_STATISTIC = """
%m = reduce %x dim=1 identities=[0.000000e+00 : f32] : tile<4x1024xf32> -> tile<4xf32>
(%a: tile<f32>, %b: tile<f32>) {
  %s = addf %a, %b : tile<f32>
  yield %s : tile<f32>
}
%c = reshape %m : tile<4xf32> -> tile<4x1xf32>
%all = broadcast %c : tile<4x1xf32> -> tile<4x1024xf32>
%t = mulf %all, %all : tile<4x1024xf32>
%u = addf %t, %all : tile<4x1024xf32>
%w = mulf %x, %u : tile<4x1024xf32>
%r = fma %w, %u, %all : tile<4x1024xf32>
"""


def test_a_row_statistic_broadcast_back_over_the_rows_keeps_their_layout() -> None:
    inputs, outputs = [("x", (4, 1024), "f32")], [("r", (4, 1024), "f32")]
    x = (RNG.standard_normal((4, 1024)) / 64).astype(np.float32)
    run_io(inputs, outputs, ROW_STATISTIC, [x])  # the same results as the CPU interpreter's
    text = io_kernel(inputs, outputs, ROW_STATISTIC)
    assert "m[:, None]" in source_of(text)
    (k,) = compile_for(text, "k", ["sm_90"])
    assert k.spills == 0 and k.registers > 32


# A row turned into a column (a permute or reshape that moves only extents of 1) and
# broadcast into an outer product: the column's elements must cross threads, which a gather by
# an identity index does (ops_shape, `_unit_dims_moved`).
OUTER = """
%c = {op} %x {how} : tile<1x128xf32> -> tile<128x1xf32>
%h = constant <f32: 0.5> : tile<128x1xf32>
%c2 = mulf %c, %h : tile<128x1xf32>
%cb = broadcast %c2 : tile<128x1xf32> -> tile<128x128xf32>
%rb = broadcast %x : tile<1x128xf32> -> tile<128x128xf32>
%one = constant <f32: -1.0> : tile<128x128xf32>
%r = fma %cb, %rb, %one : tile<128x128xf32>
"""


@pytest.mark.parametrize("op", ["permute", "reshape"])
def test_a_row_made_a_column_for_an_outer_product(op: str) -> None:
    inputs, outputs = [("x", (1, 128), "f32")], [("r", (128, 128), "f32")]
    body = OUTER.format(op=op, how="[1, 0]" if op == "permute" else "")
    x = RNG.standard_normal((1, 128)).astype(np.float32)
    (r,) = run_io(inputs, outputs, body, [x])
    assert np.array_equal(r, (x.T.astype(np.float64) / 2 * x - 1).astype(np.float32))  # fused: one rounding
    assert "tl.gather(" in source_of(io_kernel(inputs, outputs, body))


# Fuzz seed 424497 (--asm), cut down by `python -m tests.lower.reduce 424497 --asm --until
# spills`: a row turned into a column, converted to bf16 through integer code, and the K = 1
# product of it and the row. As tl.reshape, Triton 3.6 kept the row's layout for the column
# and converted it there, a thread holding whole rows (sm_90: 32 registers, 3,672 B of
# spills, 7,797 SASS instructions of which 3,234 local-memory ones, 4.9 s); gathered, 80
# registers, no spills, 559 instructions, 0.8 s.
ROW_TO_COLUMN = """cuda_tile.module @m {
  entry @k(%x0_raw: tile<ptr<i8>>, %x1_ptr: tile<ptr<f8E4M3FN>>, %x1_e1: tile<i32>, %x1_s0: tile<i32>, %x2_ptr: tile<ptr<i32>>, %o0_ptr: tile<ptr<i32>>, %o1_raw: tile<ptr<f32>>, %o1_e0: tile<i32>, %o2_raw: tile<ptr<f32>>, %o3_raw: tile<ptr<i8>>) {
    %tok = make_token : token
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %x2_tv = make_tensor_view %x2_ptr, shape = [7, 97], strides = [100, 1] : tensor_view<7x97xi32, strides=[100,1]>
    %x2_pv = make_strided_view %x2_tv : strided_view<tile=(1x128), traversal_strides=[2,178], padding_value = zero, tensor_view<7x97xi32, strides=[100,1]>>
    %o2_ptr = assume div_by<16>, %o2_raw : tile<ptr<f32>>
    %o2_tv = make_tensor_view %o2_ptr, shape = [384, 87], strides = [87, 1] : tensor_view<384x87xf32, strides=[87,1]>
    %o2_pv = make_partition_view %o2_tv : partition_view<tile=(128x128), tensor_view<384x87xf32, strides=[87,1]>>
    %x2, %x2_t = load_view_tko weak %x2_pv[%bx, %by] token = %tok : strided_view<tile=(1x128), traversal_strides=[2,178], padding_value = zero, tensor_view<7x97xi32, strides=[100,1]>>, tile<i32>, tile<i32> -> tile<1x128xi32>, token
    %v4 = permute %x2 [1, 0] : tile<1x128xi32> -> tile<128x1xi32>
    %c6 = constant <i32: 15> : tile<128x1xi32>
    %v5 = andi %v4, %c6 : tile<128x1xi32>
    %v7 = itof %v5 signed : tile<128x1xi32> -> tile<128x1xbf16>
    %c9 = constant <i32: 15> : tile<1x128xi32>
    %v8 = andi %x2, %c9 : tile<1x128xi32>
    %v10 = itof %v8 signed : tile<1x128xi32> -> tile<1x128xbf16>
    %c11 = constant <f32: -1.0> : tile<128x128xf32>
    %o2_r = mmaf %v7, %v10, %c11 : tile<128x1xbf16>, tile<1x128xbf16>, tile<128x128xf32>
    %o2_st = store_view_tko weak %o2_r, %o2_pv[%bx, %by] token = %tok : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<384x87xf32, strides=[87,1]>>, tile<i32>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


def test_a_row_made_a_column_and_converted_does_not_spill() -> None:
    (k,) = compile_for(ROW_TO_COLUMN, "k", ["sm_90"])
    assert k.spills == 0


@pytest.mark.parametrize(
    ("shape", "perm"),
    [((16, 64), (1, 0)), ((2, 4, 8), (0, 2, 1)), ((2, 4, 8), (1, 2, 0)), ((2, 4, 8), (2, 1, 0)), ((4, 4), (0, 1)),
     ((2, 2, 4, 8), (3, 1, 0, 2))],
)  # fmt: skip
def test_permute(shape, perm):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) - 100
    out = tuple(shape[p] for p in perm)
    body = f"%r = permute %x [{', '.join(map(str, perm))}] : {tile(shape, 'i64')} -> {tile(out, 'i64')}"
    (r,) = run_io([("x", shape, "i64")], [("r", out, "i64")], body, [x])
    assert np.array_equal(r, np.transpose(x, perm))


@pytest.mark.parametrize(("shape", "perm"), [((1, 1, 1), (1, 2, 0)), ((4, 1, 8), (1, 0, 2)), ((1, 16), (1, 0))])
def test_a_permute_moving_only_extents_of_one_is_a_reshape(shape, perm):
    """Row-major order is the same before and after: no tl.permute (whose layout change made
    Triton 3.6 fail on a loop carrying a 1x1x1 tile, fuzz seed 150068)."""
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) - 100
    out = tuple(shape[p] for p in perm)
    body = f"%r = permute %x [{', '.join(map(str, perm))}] : {tile(shape, 'i64')} -> {tile(out, 'i64')}"
    (r,) = run_io([("x", shape, "i64")], [("r", out, "i64")], body, [x])
    assert np.array_equal(r, np.transpose(x, perm))
    text = io_kernel([("x", shape, "i64")], [("r", out, "i64")], body)
    assert "tl.permute" not in source_of(text)
    # One that moves an extent above 1 past another stays a permute.
    moving = f"%r = permute %x [1, 0] : {tile((2, 4), 'i64')} -> {tile((4, 2), 'i64')}"
    assert "tl.permute" in source_of(io_kernel([("x", (2, 4), "i64")], [("r", (4, 2), "i64")], moving))


LOOP_PERMUTE = """cuda_tile.module @m {{
  entry @k(%xp: tile<ptr<{el}>>, %yp: tile<ptr<{el}>>, %n: tile<i32>) {{
    %tok = make_token : token
    %zero = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %xt = make_tensor_view %xp, shape = [{dims}], strides = [{strides}] : {tv}
    %xv = make_partition_view %xt : partition_view<tile=({shape}), {tv}>
    %yt = make_tensor_view %yp, shape = [{dims}], strides = [{strides}] : {tv}
    %yv = make_partition_view %yt : partition_view<tile=({shape}), {tv}>
    %v, %t = load_view_tko weak %xv[{origin}] token = %tok : partition_view<tile=({shape}), {tv}>, {index} -> {t}, token
    %r = for %iv in (%zero to %n, step %one) : tile<i32> iter_values(%acc = %v) -> ({t}) {{
      %p = permute %acc [{perm}] : {t} -> {t}
      continue %p : {t}
    }}
    %s = store_view_tko weak %r, %yv[{origin}] token = %tok
        : {t}, partition_view<tile=({shape}), {tv}>, {index} -> token
    return
  }}
}}
"""


LOOP_PERMUTE_OF_A_ROW = """cuda_tile.module @m {{
  entry @k(%xp: tile<ptr<f32>>, %yp: tile<ptr<f32>>, %n: tile<i32>) {{
    %tok = make_token : token
    %zero = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %xt = make_tensor_view %xp, shape = [{w}], strides = [1] : tensor_view<{w}xf32, strides=[1]>
    %xv = make_partition_view %xt : partition_view<tile=({w}), tensor_view<{w}xf32, strides=[1]>>
    %v, %t = load_view_tko weak %xv[%zero] token = %tok : partition_view<tile=({w}), tensor_view<{w}xf32, strides=[1]>>, tile<i32> -> tile<{w}xf32>, token
    %r = reshape %v : tile<{w}xf32> -> tile<1x{w}xf32>
    %b = broadcast %r : tile<1x{w}xf32> -> tile<{w}x{w}xf32>
    %res = for %iv in (%zero to %n, step %one) : tile<i32> iter_values(%acc = %b) -> (tile<{w}x{w}xf32>) {{
      %p = permute %acc [1, 0] : tile<{w}x{w}xf32> -> tile<{w}x{w}xf32>
      continue %p : tile<{w}x{w}xf32>
    }}
    %yt = make_tensor_view %yp, shape = [{w}, {w}], strides = [{w}, 1] : tensor_view<{w}x{w}xf32, strides=[{w},1]>
    %yv = make_partition_view %yt : partition_view<tile=({w}x{w}), tensor_view<{w}x{w}xf32, strides=[{w},1]>>
    %s = store_view_tko weak %res, %yv[%zero, %zero] token = %tok : tile<{w}x{w}xf32>, partition_view<tile=({w}x{w}), tensor_view<{w}x{w}xf32, strides=[{w},1]>>, tile<i32>, tile<i32> -> token
    return
  }}
}}
"""  # noqa: E501


@pytest.mark.parametrize("w", [16, 64])
def test_a_broadcast_carried_through_a_loop_and_permuted_compiles(w: int) -> None:
    """Of any size: a loop that carries a broadcast row through tl.permute never finished
    compiling either (16x16 to 64x64; fuzz seed 404699 of a --compile sm_100 campaign, cut
    down by hand), while the same loop from a loaded tile compiles. A permute of what a loop
    carries is the tl.gather too, and computes the transposes."""
    import subprocess
    import sys

    text = LOOP_PERMUTE_OF_A_ROW.format(w=w)
    src = source_of(text, "k")
    assert "tl.permute" not in src[src.index("def k(") :] and "tl.gather" in src
    x = sample((w,), "f32")
    for n in (0, 1, 2):
        y = np.zeros((w, w), np.float32)
        _, tri = run_both(text, "k", 1, [x, y, n])
        want = np.broadcast_to(x, (w, w))
        assert np.array_equal(bits(tri[1].reshape(w, w)), bits(want.T if n % 2 else want))
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", "-", "--no-cache", "--emit", "ptx", "-o", "-"],
        input=text, capture_output=True, text=True, timeout=240,
        env={**os.environ, "TILEIR_COMPILE_TIMEOUT": "60"},
    )  # fmt: skip
    assert done.returncode == 0 and ".visible .entry k" in done.stdout, done.stderr


@pytest.mark.parametrize(
    ("shape", "perm", "el"),
    [((4, 4), (1, 0), "f16"), ((8, 8), (1, 0), "f32"), ((2, 2, 2), (2, 0, 1), "i1"), ((4, 4), (1, 0), "f8E4M3FN"),
     ((2, 4, 2), (2, 1, 0), "f64")],
)  # fmt: skip
def test_a_small_permute_carried_through_a_loop_compiles(shape, perm, el):
    """Triton 3.6 and 3.9 never finished compiling a loop that carries a tile of 64 elements or
    fewer through tl.permute (tests/lower/fuzz.py, seed 3864 of an aimed campaign): inside a
    loop such a permute is a tl.gather of the elements' bits (compiler/lower/ops_shape.py),
    bitwise exact (NaN payloads, -0.0), and the compile ends (in a child with a time limit, so
    that a hang fails the test instead of stopping the suite)."""
    import subprocess
    import sys

    if set(perm) != set(range(len(shape))) or tuple(shape[p] for p in perm) != shape:
        raise AssertionError("the loop carries its value: the permute must keep the shape")
    strides, acc = [], 1
    for d in reversed(shape):
        strides.insert(0, acc)
        acc *= d
    t = tile(shape, el)
    tv = f"tensor_view<{'x'.join(map(str, shape))}x{el}, strides=[{','.join(map(str, strides))}]>"
    text = LOOP_PERMUTE.format(
        el=el, t=t, tv=tv, shape="x".join(map(str, shape)), dims=", ".join(map(str, shape)),
        strides=", ".join(map(str, strides)), perm=", ".join(map(str, perm)),
        origin=", ".join(["%zero"] * len(shape)), index=", ".join(["tile<i32>"] * len(shape)),
    )  # fmt: skip
    src = source_of(text, "k")
    assert "tl.permute" not in src[src.index("def k(") :]  # (the kernel's; not the interpreter's fold helper)
    x = sample(shape, el)
    for n in (0, 1, 2, 3):
        y = np.zeros(shape, x.dtype)
        _, tri = run_both(text, "k", 1, [x, y, n])
        want = x
        for _ in range(n):
            want = np.transpose(want, perm)
        assert np.array_equal(bits(tri[1].reshape(shape)), bits(want))
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "compile", "-", "--no-cache", "--emit", "ptx", "-o", "-"],
        input=text, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0 and ".visible .entry k" in done.stdout, done.stderr


# -- cat ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "dim", "el"),
    [((1,), 0, "i32"), ((8,), 0, "f32"), ((2048,), 0, "i16"), ((4, 8), 0, "f16"), ((4, 8), 1, "i8"),
     ((64, 32), 1, "f32"), ((2, 4, 8), 0, "i64"), ((2, 4, 8), 1, "f64"), ((2, 4, 8), 2, "i1"),
     ((4, 1), 1, "f8E5M2"), ((1, 16), 0, "f32"), ((2, 2), 1, "bf16")],
)  # fmt: skip
def test_cat_is_a_true_concatenation(shape, dim, el):
    x, y = sample(shape, el), sample(shape, el)
    out = list(shape)
    out[dim] *= 2
    out = tuple(out)
    body = f"%r = cat %x, %y dim = {dim} : {tile(shape, el)}, {tile(shape, el)} -> {tile(out, el)}"
    (r,) = run_io([("x", shape, el), ("y", shape, el)], [("r", out, el)], body, [x, y])
    assert np.array_equal(bits(r), bits(np.concatenate([x, y], axis=dim)))


# -- extract --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "sub", "el"),
    [((32, 8), (4, 2), "f32"), ((8,), (1,), "i32"), ((4096,), (256,), "i8"), ((16, 16), (16, 4), "f16"),
     ((4, 8), (1, 8), "i1"), ((2, 4, 8), (1, 2, 8), "f64"), ((8, 8), (2, 2), "f8E4M3FN"), ((4, 4), (4, 4), "i64"),
     ((64,), (16,), "i64"), ((4, 2), (2, 1), "bf16")],
)  # fmt: skip
def test_extract_every_slice_with_runtime_indices(shape, sub, el):
    counts = [s // r for s, r in zip(shape, sub, strict=True)]
    x = sample(shape, el)
    picks = [tuple(int(RNG.integers(0, c)) for c in counts) for _ in range(6)]
    picks += [tuple(c - 1 for c in counts), tuple(0 for _ in counts)]
    rank = len(shape)
    # The slice numbers come from memory (an 8 x 4 table, one row per extract): run-time values.
    inputs = [("x", shape, el), ("ix", (8, 4), "i32")]
    lines = [f"%c{v} = constant <i32: {v}> : tile<i32>" for v in range(8)]
    outputs = []
    for j in range(len(picks)):
        idx_names = []
        for d in range(rank):
            lines.append(f"%i{j}_{d} = extract %ix[%c{j}, %c{d}] : tile<8x4xi32> -> tile<1x1xi32>")
            lines.append(f"%k{j}_{d} = reshape %i{j}_{d} : tile<1x1xi32> -> tile<i32>")
            idx_names.append(f"%k{j}_{d}")
        lines.append(f"%r{j} = extract %x[{', '.join(idx_names)}] : {tile(shape, el)} -> {tile(sub, el)}")
        outputs.append((f"r{j}", sub, el))
    index_table = np.zeros((8, 4), np.int32)
    index_table[:, :rank] = np.array(picks, dtype=np.int32).reshape(8, rank)
    got = run_io(inputs, outputs, "\n".join(lines), [x, index_table])
    for r, pick in zip(got, picks, strict=True):
        window = tuple(slice(p * s, (p + 1) * s) for p, s in zip(pick, sub, strict=True))
        assert np.array_equal(bits(r), bits(x[window])), pick


def test_extract_keeps_negative_zero_and_nan_payloads():
    x = np.array([-0.0, 1.5, -2.0, 3.0, 0.0, -0.0, 7.0, -7.0], np.float32)
    x.view(np.uint32)[3] = 0x7FC01234  # a NaN with a payload
    x.view(np.uint32)[6] = 0x00000001  # the smallest denormal
    body = """%c1 = constant <i32: 1> : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %a = extract %x[%c0] : tile<8xf32> -> tile<4xf32>
    %b = extract %x[%c1] : tile<8xf32> -> tile<4xf32>"""
    a, b = run_io([("x", (8,), "f32")], [("a", (4,), "f32"), ("b", (4,), "f32")], body, [x])
    assert np.array_equal(a.view(np.uint32), x[:4].view(np.uint32))
    assert np.array_equal(b.view(np.uint32), x[4:].view(np.uint32))


def test_extract_per_block_indices():
    # The slice number differs between tile blocks (the block id).
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    pv_in = "partition_view<tile=(4x8), tensor_view<4x8xi32, strides=[8,1]>>"
    pv_out = "partition_view<tile=(1x8), tensor_view<4x8xi32, strides=[8,1]>>"
    text = f"""cuda_tile.module @m {{
  entry @k(%a: tile<ptr<i32>>, %b: tile<ptr<i32>>) {{
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %va = make_tensor_view %a, shape = [4, 8], strides = [8, 1] : tensor_view<4x8xi32, strides=[8,1]>
    %pa = make_partition_view %va : {pv_in}
    %x, %t = load_view_tko weak %pa[%c0, %c0] : {pv_in}, tile<i32> -> tile<4x8xi32>, token
    %r = extract %x[%bx, %c0] : tile<4x8xi32> -> tile<1x8xi32>
    %vb = make_tensor_view %b, shape = [4, 8], strides = [8, 1] : tensor_view<4x8xi32, strides=[8,1]>
    %pb = make_partition_view %vb : {pv_out}
    %s = store_view_tko weak %r, %pb[%bx, %c0] : tile<1x8xi32>, {pv_out}, tile<i32> -> token
    return
  }}
}}
"""
    out = np.zeros((4, 8), np.int32)
    _, tri = run_both(text, "k", 4, [x, out])
    assert np.array_equal(tri[1], x)


def pointer_kernel() -> str:
    """Tiles of pointers through every shape op (as int64 inside extract), then loaded."""
    body = """%one = reshape %p_d : tile<ptr<f32>> -> tile<1xptr<f32>>
    %b = broadcast %one : tile<1xptr<f32>> -> tile<8xptr<f32>>
    %i = iota : tile<8xi32>
    %p = offset %b, %i : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>
    %p2 = reshape %p : tile<8xptr<f32>> -> tile<2x4xptr<f32>>
    %t = permute %p2 [1, 0] : tile<2x4xptr<f32>> -> tile<4x2xptr<f32>>
    %c = cat %t, %t dim = 1 : tile<4x2xptr<f32>>, tile<4x2xptr<f32>> -> tile<4x4xptr<f32>>
    %c1 = constant <i32: 1> : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %e = extract %c[%c1, %c1] : tile<4x4xptr<f32>> -> tile<2x2xptr<f32>>
    %v, %tv = load_ptr_tko weak %e : tile<2x2xptr<f32>> -> tile<2x2xf32>, token"""
    tv = "tensor_view<2x2xf32, strides=[2,1]>"
    pv = f"partition_view<tile=(2x2), {tv}>"
    store = f"""%w = make_tensor_view %o_v, shape = [2, 2], strides = [2, 1] : {tv}
    %q = make_partition_view %w : {pv}
    %s = store_view_tko weak %v, %q[%c0, %c0] : tile<2x2xf32>, {pv}, tile<i32> -> token"""
    lines = "\n".join("    " + ln.strip() for ln in (body + "\n" + store).splitlines())
    params = "%p_d: tile<ptr<f32>>, %o_v: tile<ptr<f32>>"
    return f"cuda_tile.module @m {{\n  entry @k({params}) {{\n{lines}\n    return\n  }}\n}}\n"


def test_pointer_tiles():
    data = np.arange(16, dtype=np.float32) * 1.5
    out = np.zeros((2, 2), np.float32)
    _, tri = run_both(pointer_kernel(), "k", 1, [data, out])
    # c = [[0,4,0,4],[1,5,1,5],[2,6,2,6],[3,7,3,7]] (element offsets); slice (1, 1) is rows 2-3, columns 2-3.
    assert np.array_equal(tri[1], data[[[2, 6], [3, 7]]])


# -- compiled -------------------------------------------------------------------------------------------


def test_shape_ops_compile_everywhere():
    el = "f32"
    body = f"""%c1 = constant <i32: 1> : tile<i32>
    %b = broadcast %x : {tile((4, 1), el)} -> {tile((4, 64), el)}
    %p = permute %b [1, 0] : {tile((4, 64), el)} -> {tile((64, 4), el)}
    %r = reshape %p : {tile((64, 4), el)} -> {tile((256,), el)}
    %c = cat %r, %r dim = 0 : {tile((256,), el)}, {tile((256,), el)} -> {tile((512,), el)}
    %e = extract %c[%c1] : {tile((512,), el)} -> {tile((128,), el)}
    %s = reshape %x : {tile((4, 1), el)} -> {tile((4,), el)}
    %q = cat %b, %b dim = 1 : {tile((4, 64), el)}, {tile((4, 64), el)} -> {tile((4, 128), el)}
    %bc = cat %m, %m dim = 0 : tile<4x8xi1>, tile<4x8xi1> -> tile<8x8xi1>
    %be = extract %bc[%c1, %c1] : tile<8x8xi1> -> tile<4x4xi1>"""
    text = io_kernel([("x", (4, 1), el), ("m", (4, 8), "i1")],
                     [("e", (128,), el), ("q", (4, 128), el), ("s", (4,), el), ("be", (4, 4), "i1")], body)  # fmt: skip
    src = source_of(text)
    assert "tl.join(" in src and "can_reorder=False" in src and "tl.cat(" not in src
    assert "tl.gather(" not in src  # extract: masked sums (the layout of a gather's result spreads: ops_shape)
    for k in compile_for(text, "k") + compile_for(pointer_kernel(), "k"):
        assert k.spills == 0
        assert len(k.cubin) > 1000


# cuTile's `ct.astile(((a, b), (c, d)), dtype=ct.bool_)` of scalar parameters: i1 values from
# compares (with an int parameter, and a float's `ftoi` to i1) and an i1 parameter, joined by
# `cat`. Triton's interpreter (3.6 and 3.9) stacked their NumPy data as it found them and
# failed ("numpy data itemsize (64 bits) exceeds ..."): i1 cats join as int8 now.
BOOL_CAT = """
cuda_tile.module @m {
  entry @k(%out: tile<ptr<i1>>, %a: tile<i32>, %c: tile<f32>, %d: tile<i1>) {
    %tok = make_token : token
    %c0 = constant <i32: 0> : tile<i32>
    %x = cmpi not_equal %a, %c0, signed : tile<i32> -> tile<i1>
    %y = ftoi %c unsigned : tile<f32> -> tile<i1>
    %x1 = reshape %x : tile<i1> -> tile<1xi1>
    %y1 = reshape %y : tile<i1> -> tile<1xi1>
    %d1 = reshape %d : tile<i1> -> tile<1xi1>
    %xy = cat %x1, %y1 dim = 0 : tile<1xi1>, tile<1xi1> -> tile<2xi1>
    %yd = cat %y1, %d1 dim = 0 : tile<1xi1>, tile<1xi1> -> tile<2xi1>
    %all = cat %xy, %yd dim = 0 : tile<2xi1>, tile<2xi1> -> tile<4xi1>
    %v = make_tensor_view %out, shape = [4], strides = [1] : tensor_view<4xi1, strides=[1]>
    %p = make_partition_view %v : partition_view<tile=(4), tensor_view<4xi1, strides=[1]>>
    %t = store_view_tko weak %all, %p[%c0] token = %tok : tile<4xi1>, partition_view<tile=(4), tensor_view<4xi1, strides=[1]>>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


@pytest.mark.parametrize(("a", "c", "d"), [(0, 0.0, True), (3, 0.5, False)])
def test_a_cat_of_booleans_from_scalar_parameters(a: int, c: float, d: bool) -> None:
    cpu, _ = run_both(BOOL_CAT, "k", 1, [np.zeros(4, np.bool_), a, c, d])
    x, y = a != 0, c != 0
    assert cpu[0].tolist() == [x, y, y, d]
