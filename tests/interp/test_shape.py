"""Shape ops on the interpreter: broadcast, reshape, permute, cat, extract.

Expectations come from plain NumPy on the input arrays; inputs enter kernels as
constants written as raw little-endian hex (exact for every element type)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.interp import InterpError
from compiler.runtime import launch
from tests.interp.util import eval_kernel, kernel

RNG = np.random.default_rng(7)


def tile(shape: tuple[int, ...], element: str) -> str:
    return f"tile<{'x'.join(map(str, shape))}x{element}>" if shape else f"tile<{element}>"


def const(name: str, values: np.ndarray, element: str) -> str:
    """`%name = constant ...` holding exactly `values` (row-major)."""
    data = np.ascontiguousarray(values).tobytes().hex().upper()
    return f'%{name} = constant <{element}: "0x{data}"> : {tile(values.shape, element)}'


def block_ids() -> str:
    return "%bx, %by, %bz = get_tile_block_id : tile<i32>"


def ints(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.integers(-1000, 1000, size=shape, dtype=np.int32)


# -- broadcast -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        ((), ()),
        ((1,), (8,)),
        ((1, 4), (8, 4)),
        ((4, 1), (4, 2)),
        ((1, 1), (2, 2)),
        ((2, 1, 4), (2, 8, 4)),
        ((1, 1, 1), (2, 4, 8)),
    ],
)
def test_broadcast(src, dst):
    x = ints(src)
    out = eval_kernel(kernel(f"{const('x', x, 'i32')}\n%r = broadcast %x : {tile(src, 'i32')} -> {tile(dst, 'i32')}"))
    r = out["r"]
    assert r.shape == (1, *dst)  # a uniform input stays uniform
    np.testing.assert_array_equal(r[0], np.broadcast_to(x, dst))


def test_broadcast_keeps_blocks_apart():
    body = f"""{block_ids()}
    %v = reshape %bx : tile<i32> -> tile<1x1xi32>
    %r = broadcast %v : tile<1x1xi32> -> tile<2x4xi32>"""
    r = eval_kernel(kernel(body), grid_positions=[0, 1, 2])["r"]
    assert r.shape == (3, 2, 4)
    np.testing.assert_array_equal(r, np.arange(3).reshape(3, 1, 1) * np.ones((3, 2, 4), np.int32))


# -- reshape -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        ((), (1,)),
        ((1,), ()),
        ((), (1, 1, 1)),
        ((2, 4), (8,)),
        ((2, 4), (2, 2, 2)),
        ((8, 2), (2, 2, 4, 1)),
        ((2, 4, 8), (64,)),
        ((4, 8), (8, 4)),
        ((2, 2, 2), (4, 2)),
    ],
)
def test_reshape_row_major(src, dst):
    x = ints(src)
    out = eval_kernel(kernel(f"{const('x', x, 'i32')}\n%r = reshape %x : {tile(src, 'i32')} -> {tile(dst, 'i32')}"))
    expect = np.array(x.reshape(-1).tolist()).reshape(dst)  # row-major by construction
    assert out["r"].shape == (1, *dst)
    np.testing.assert_array_equal(out["r"][0], expect)


def test_reshape_f16_bits_preserved():
    x = np.array([[np.nan, -0.0], [np.inf, 1.5]], dtype=np.float16)
    out = eval_kernel(kernel(f"{const('x', x, 'f16')}\n%r = reshape %x : tile<2x2xf16> -> tile<4xf16>"))
    assert out["r"][0].tobytes() == x.reshape(-1).tobytes()


def test_reshape_per_block():
    body = f"""{block_ids()}
    %v = reshape %bx : tile<i32> -> tile<1x1xi32>
    %b = broadcast %v : tile<1x1xi32> -> tile<2x2xi32>
    %r = reshape %b : tile<2x2xi32> -> tile<4xi32>"""
    r = eval_kernel(kernel(body), grid_positions=[3, 5])["r"]
    np.testing.assert_array_equal(r, [[3] * 4, [5] * 4])


# -- permute -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "perm"),
    [
        ((2, 4), (1, 0)),
        ((2, 4), (0, 1)),
        ((2, 4, 8), (2, 0, 1)),
        ((2, 4, 8), (1, 2, 0)),
        ((2, 4, 8), (0, 2, 1)),
        ((1, 2), (1, 0)),
    ],
)
def test_permute(shape, perm):
    x = ints(shape)
    dst = tuple(shape[p] for p in perm)
    order = ", ".join(map(str, perm))
    text = f"{const('x', x, 'i32')}\n%r = permute %x [{order}] : {tile(shape, 'i32')} -> {tile(dst, 'i32')}"
    r = eval_kernel(kernel(text))["r"]
    assert r.shape == (1, *dst)
    # result[i0, i1, ...] == x[i_{perm^-1}...]: check element by element.
    for idx in np.ndindex(*dst):
        src_idx = [0] * len(shape)
        for i, p in enumerate(perm):
            src_idx[p] = idx[i]
        assert r[(0, *idx)] == x[tuple(src_idx)]


# -- cat ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "dim"),
    [
        ((4,), (4,), 0),
        ((2, 4), (2, 4), 1),
        ((2, 4), (2, 4), 0),
        ((4, 2), (4, 2), 0),
        ((2, 2, 4), (2, 2, 4), 2),
        ((2, 2, 4), (2, 2, 4), 1),
        ((1, 2, 2), (1, 2, 2), 0),
        ((4, 1), (4, 1), 1),
    ],
)
def test_cat(a, b, dim):
    x, y = ints(a), ints(b)
    out_shape = list(a)
    out_shape[dim] += b[dim]
    text = (
        f"{const('x', x, 'i32')}\n{const('y', y, 'i32')}\n"
        f"%r = cat %x, %y dim = {dim} : {tile(a, 'i32')}, {tile(b, 'i32')} -> {tile(tuple(out_shape), 'i32')}"
    )
    r = eval_kernel(kernel(text))["r"]
    assert r.shape == (1, *out_shape)
    lo = tuple(slice(0, a[d]) if d == dim else slice(None) for d in range(len(a)))
    hi = tuple(slice(a[d], None) if d == dim else slice(None) for d in range(len(a)))
    np.testing.assert_array_equal(r[0][lo], x)
    np.testing.assert_array_equal(r[0][hi], y)


def test_cat_uniform_with_per_block():
    x = ints((2,))
    body = f"""{block_ids()}
    {const("x", x, "i32")}
    %v = reshape %bx : tile<i32> -> tile<1xi32>
    %b = broadcast %v : tile<1xi32> -> tile<2xi32>
    %r = cat %x, %b dim = 0 : tile<2xi32>, tile<2xi32> -> tile<4xi32>"""
    r = eval_kernel(kernel(body), grid_positions=[0, 1, 2])["r"]
    assert r.shape == (3, 4)
    for g in range(3):
        np.testing.assert_array_equal(r[g], [x[0], x[1], g, g])


# -- extract -------------------------------------------------------------------------------------------


def test_extract_2d():
    x = ints((32, 8))
    text = f"""{const("x", x, "i32")}
    %c1 = constant <i32: 1> : tile<i32>
    %c2 = constant <i32: 2> : tile<i32>
    %r = extract %x[%c1, %c2] : tile<32x8xi32> -> tile<4x2xi32>"""
    r = eval_kernel(kernel(text))["r"]
    assert r.shape == (1, 4, 2)
    np.testing.assert_array_equal(r[0], x[4:8, 4:6])


@pytest.mark.parametrize(("shape", "sub"), [((8,), (4,)), ((8,), (8,)), ((2, 4, 8), (1, 2, 2)), ((4, 4), (1, 4))])
def test_extract_every_slice(shape, sub):
    x = ints(shape)
    counts = [s // r for s, r in zip(shape, sub)]
    for slot in np.ndindex(*counts):
        consts = "\n".join(f"%i{d} = constant <i32: {v}> : tile<i32>" for d, v in enumerate(slot))
        idx = ", ".join(f"%i{d}" for d in range(len(shape)))
        text = f"{const('x', x, 'i32')}\n{consts}\n%r = extract %x[{idx}] : {tile(shape, 'i32')} -> {tile(sub, 'i32')}"
        r = eval_kernel(kernel(text))["r"][0]
        window = tuple(slice(s * n, (s + 1) * n) for s, n in zip(slot, sub))
        np.testing.assert_array_equal(r, x[window])


def test_extract_rank0():
    text = "%x = constant <i32: 5> : tile<i32>\n%r = extract %x[] : tile<i32> -> tile<i32>"
    np.testing.assert_array_equal(eval_kernel(kernel(text))["r"], [5])


def test_extract_index_per_block():
    x = ints((4, 8))
    body = f"""{block_ids()}
    {const("x", x, "i32")}
    %z = constant <i32: 0> : tile<i32>
    %r = extract %x[%bx, %z] : tile<4x8xi32> -> tile<1x8xi32>
    %s = extract %x[%z, %bx] : tile<4x8xi32> -> tile<4x2xi32>"""
    out = eval_kernel(kernel(body), grid_positions=[2, 0, 3, 1])
    for g, b in enumerate([2, 0, 3, 1]):
        np.testing.assert_array_equal(out["r"][g], x[b : b + 1])
        np.testing.assert_array_equal(out["s"][g], x[:, 2 * b : 2 * b + 2])


def test_extract_per_block_source_and_index():
    body = f"""{block_ids()}
    %v = reshape %bx : tile<i32> -> tile<1xi32>
    %b = broadcast %v : tile<1xi32> -> tile<4xi32>
    %io = iota : tile<4xi32>
    %s = addi %b, %io : tile<4xi32>
    %r = extract %s[%bx] : tile<4xi32> -> tile<2xi32>"""
    out = eval_kernel(kernel(body), grid_positions=[0, 1])
    np.testing.assert_array_equal(out["r"], [[0, 1], [3, 4]])


def _line_col(text: str, needle: str) -> tuple[int, int]:
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n, line.index(needle) + 1
    raise AssertionError(needle)


def test_extract_out_of_range_is_reported():
    x = ints((8,))
    text = kernel(f"""{block_ids()}
    {const("x", x, "i32")}
    %r = extract %x[%bx] : tile<8xi32> -> tile<4xi32>""")
    line, col = _line_col(text, "%r = extract")
    eval_kernel(text, grid_positions=[0, 1])  # in range
    with pytest.raises(InterpError) as err:
        launch(text, grid=(4,))
    assert str(err.value) == (
        f"<input>:{line}:{col}: error: extract: slice index 2 of dimension 0 is out of range: the source "
        "extent 8 holds 2 slices of 4 (undefined behaviour) (tile block (2, 0, 0))"
    )


def test_extract_indices_are_unsigned():
    x = ints((8,))
    text = kernel(f"""{const("x", x, "i32")}
    %m = constant <i32: -1> : tile<i32>
    %r = extract %x[%m] : tile<8xi32> -> tile<4xi32>""")
    with pytest.raises(InterpError, match="slice index 4294967295 of dimension 0 is out of range"):
        eval_kernel(text)
