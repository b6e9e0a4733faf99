"""atomic_rmw_tko and atomic_cas_tko with duplicate addresses, within a tile and across
the blocks of a group: the final memory and every returned old value must be those of
the blocks' atomics applied one at a time (block order, then element order). The
expectation is a plain Python loop over the individual operations."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.interp import InterpError, Machine, Memory, RunOptions
from compiler.runtime import find_kernel, load_module

DTYPES = {
    "i32": np.int32,
    "i64": np.int64,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
}


def _ptrs(name: str, param: str, elem: str, n: int, offsets: str) -> str:
    return f"""
    %{name}_r = reshape %{param} : tile<ptr<{elem}>> -> tile<1xptr<{elem}>>
    %{name}_b = broadcast %{name}_r : tile<1xptr<{elem}>> -> tile<{n}xptr<{elem}>>
    %{name} = offset %{name}_b, %{offsets} : tile<{n}xptr<{elem}>>, tile<{n}xi32> -> tile<{n}xptr<{elem}>>
    """


def atomic_kernel(elem: str, n: int, op: str, masked: bool) -> str:
    """Block b, lane i (g = b*n + i): old[g] = atomic(p + ix[g], operands[g], mask[g])."""
    t, p = f"tile<{n}x{elem}>", f"tile<{n}xptr<{elem}>>"
    body = (
        f"""
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %iota = iota : tile<{n}xi32>
    %nn = constant <i32: {n}> : tile<i32>
    %b0 = muli %bx, %nn : tile<i32>
    %b1 = reshape %b0 : tile<i32> -> tile<1xi32>
    %base = broadcast %b1 : tile<1xi32> -> tile<{n}xi32>
    %g = addi %iota, %base : tile<{n}xi32>
    """
        + _ptrs("pix", "ix", "i32", n, "g")
        + f"""
    %idx, %t0 = load_ptr_tko weak %pix : tile<{n}xptr<i32>> -> tile<{n}xi32>, token
    """
        + _ptrs("pa", "a", elem, n, "g")
        + _ptrs("pb", "b", elem, n, "g")
        + _ptrs("pp", "p", elem, n, "idx")
        + f"""
    %x, %t1 = load_ptr_tko weak %pa : {p} -> {t}, token
    %y, %t2 = load_ptr_tko weak %pb : {p} -> {t}, token
    """
    )
    mask_operand, mask_type = "", ""
    if masked:
        body += (
            _ptrs("pm", "mk", "i1", n, "g")
            + f"""
        %m, %t3 = load_ptr_tko weak %pm : tile<{n}xptr<i1>> -> tile<{n}xi1>, token
        """
        )
        mask_operand, mask_type = ", %m", f", tile<{n}xi1>"
    if op == "cas":
        body += f"""
        %old, %tk = atomic_cas_tko relaxed device %pp, %x, %y{mask_operand} : {p}, {t}{mask_type} -> {t}, token
        """
    else:
        body += f"""
        %old, %tk = atomic_rmw_tko relaxed device %pp, {op}, %x{mask_operand} : {p}, {t}{mask_type} -> {t}, token
        """
    body += (
        _ptrs("po", "out", elem, n, "g")
        + f"""
    %done = store_ptr_tko weak %po, %old : {p}, {t} -> token
    """
    )
    lines = "\n".join("    " + line.strip() for line in body.strip().splitlines() if line.strip())
    params = (
        f"%p: tile<ptr<{elem}>>, %ix: tile<ptr<i32>>, %a: tile<ptr<{elem}>>, %b: tile<ptr<{elem}>>, "
        f"%mk: tile<ptr<i1>>, %out: tile<ptr<{elem}>>"
    )
    return f"cuda_tile.module @m {{\n  entry @k({params}) {{\n{lines}\n    return\n  }}\n}}\n"


_MODULES: dict[str, object] = {}


def run_atomic(elem, op, mem, ix, a, b=None, mask=None, grid=1, n=None, options=None):
    """Run the atomic kernel; returns the old values (one per block and lane)."""
    n = n or len(ix) // grid
    text = atomic_kernel(elem, n, op, mask is not None)
    mod = _MODULES.get(text) or _MODULES.setdefault(text, load_module(text))
    machine = Machine(mod, options=options)  # type: ignore[arg-type]
    out = np.zeros(grid * n, dtype=mem.dtype)
    b = a if b is None else b
    mk = np.ones(grid * n, np.uint8) if mask is None else mask.astype(np.uint8)
    values = []
    for arr in (mem, ix.astype(np.int32), a, b, mk, out):
        values.append(np.array([machine.memory.place(np.ascontiguousarray(arr))], np.int64))
    # `mem`, `a` etc. are placed without a copy when contiguous: use the placed arrays
    machine.run(find_kernel(mod, None), (grid,), values)  # type: ignore[arg-type]
    return out


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def rmw_reference(mode, elem, mem, ix, args, mask=None):
    """The individual operations one after another, in index order, on Python values."""
    mem = mem.copy()
    olds = np.zeros(len(ix), dtype=mem.dtype)
    dt = DTYPES[elem]
    bits = np.dtype(dt).itemsize * 8
    for k, (i, a) in enumerate(zip(ix.tolist(), args.tolist(), strict=True)):
        if mask is not None and not mask[k]:
            continue
        x = mem[i]
        olds[k] = x
        if mode == "addf" or (mode == "xchg" and elem.startswith(("f", "b"))):
            new = dt(x) + dt(a) if mode == "addf" else dt(a)
        else:
            xi, ai = int(x), int(a)
            ux, ua = xi & ((1 << bits) - 1), ai & ((1 << bits) - 1)
            new = {
                "add": xi + ai,
                "and": xi & ai,
                "or": xi | ai,
                "xor": xi ^ ai,
                "max": max(xi, ai),
                "min": min(xi, ai),
                "umax": max(ux, ua),
                "umin": min(ux, ua),
                "xchg": ai,
            }[mode]
            new = _wrap(new, bits)
        mem[i] = new
    return mem, olds


INT_MODES = ["add", "and", "or", "xor", "max", "min", "umax", "umin", "xchg"]


def _same(a: np.ndarray, b: np.ndarray) -> None:
    """Bitwise equality (NaNs included)."""
    assert a.dtype == b.dtype
    u = np.dtype(f"u{a.dtype.itemsize}")
    assert a.view(u).tolist() == b.view(u).tolist(), (a, b)


@pytest.mark.parametrize("mode", INT_MODES)
@pytest.mark.parametrize("elem", ["i32", "i64"])
def test_integer_modes_with_duplicates_in_a_tile_and_across_blocks(mode, elem):
    rng = np.random.default_rng(hash((mode, elem)) % 2**32)
    dt = DTYPES[elem]
    info = np.iinfo(dt)
    grid, n, slots = 3, 16, 5
    mem = rng.integers(info.min, info.max, slots, dtype=dt, endpoint=True)
    ix = rng.integers(0, slots, grid * n)
    args = rng.integers(info.min, info.max, grid * n, dtype=dt, endpoint=True)
    args[:4] = [info.max, info.min, -1, 0]
    expect_mem, expect_old = rmw_reference(mode, elem, mem, ix, args)
    old = run_atomic(elem, mode, mem, ix, args, grid=grid)
    _same(old, expect_old)
    _same(mem, expect_mem)


@pytest.mark.parametrize("elem", ["f16", "bf16", "f32", "f64"])
def test_addf_rounds_after_every_addition(elem):
    rng = np.random.default_rng(7)
    dt = DTYPES[elem]
    grid, n = 4, 32
    mem = np.array([1.0, 0.0, -3.0], dtype=dt)
    ix = rng.integers(0, 3, grid * n)
    # magnitudes far apart: the order of the additions shows in the rounding
    args = (rng.standard_normal(grid * n) * 10.0 ** rng.integers(-4, 4, grid * n)).astype(dt)
    args[5] = np.inf
    args[9] = -np.inf  # lane 9 meets +inf at some address: NaN if same slot
    expect_mem, expect_old = rmw_reference("addf", elem, mem, ix, args)
    old = run_atomic(elem, "addf", mem, ix, args, grid=grid)
    _same(old, expect_old)
    _same(mem, expect_mem)


@pytest.mark.parametrize("elem", ["f32", "f64"])
def test_float_xchg_with_duplicates(elem):
    dt = DTYPES[elem]
    mem = np.array([1.5, -0.0], dtype=dt)
    ix = np.array([0, 1, 0, 0, 1, 0, 1, 1])
    args = np.array([2, 3, np.nan, -0.0, 7, 8, 9, 10], dtype=dt)
    expect_mem, expect_old = rmw_reference("xchg", elem, mem, ix, args)
    old = run_atomic(elem, "xchg", mem, ix, args, grid=2)
    _same(old, expect_old)
    _same(mem, expect_mem)


@settings(max_examples=25)
@given(
    data=st.data(),
    mode=st.sampled_from(INT_MODES),
    grid=st.integers(1, 3),
    n=st.sampled_from([1, 4, 8]),
    slots=st.integers(1, 4),
)
def test_integer_modes_random_histories(data, mode, grid, n, slots):
    values = st.integers(-(2**31), 2**31 - 1)
    mem = np.array(data.draw(st.lists(values, min_size=slots, max_size=slots)), np.int32)
    ix = np.array(data.draw(st.lists(st.integers(0, slots - 1), min_size=grid * n, max_size=grid * n)))
    args = np.array(data.draw(st.lists(values, min_size=grid * n, max_size=grid * n)), np.int32)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=grid * n, max_size=grid * n)))
    expect_mem, expect_old = rmw_reference(mode, "i32", mem, ix, args, mask)
    ix_far = np.where(mask, ix, 1 << 28)  # masked-off lanes point far outside: never touched
    old = run_atomic("i32", mode, mem, ix_far, args, mask=mask, grid=grid, n=n)
    assert old[mask].tolist() == expect_old[mask].tolist()
    assert mem.tolist() == expect_mem.tolist()


def test_uniform_pointer_atomic_runs_once_per_block():
    # every lane of every block adds 1 to one counter: old values 0 .. G*N-1 in order
    grid, n = 5, 4
    mem = np.zeros(1, np.int32)
    old = run_atomic("i32", "add", mem, np.zeros(grid * n, np.int64), np.ones(grid * n, np.int32), grid=grid)
    assert old.tolist() == list(range(grid * n))
    assert mem.tolist() == [grid * n]


def test_blocks_in_separate_groups_keep_the_order():
    grid, n = 6, 4
    mem = np.zeros(2, np.float32)
    ix = np.tile([0, 1, 0, 1], grid)
    args = np.arange(grid * n, dtype=np.float32) * 0.1
    expect_mem, expect_old = rmw_reference("addf", "f32", mem, ix, args)
    old = run_atomic("f32", "addf", mem, ix, args, grid=grid, options=RunOptions(group_budget=8))
    _same(old, expect_old)
    _same(mem, expect_mem)


# -- compare-and-swap -----------------------------------------------------------------------------


def cas_reference(mem, ix, cmp, val, mask=None):
    mem = mem.copy()
    u = np.dtype(f"u{mem.dtype.itemsize}")
    bits, cbits, vbits = mem.view(u), cmp.view(u), val.view(u)
    olds = cmp.copy()
    for k, i in enumerate(ix.tolist()):
        if mask is not None and not mask[k]:
            continue
        olds.view(u)[k] = bits[i]
        if bits[i] == cbits[k]:
            bits[i] = vbits[k]
    return mem, olds


@settings(max_examples=25)
@given(
    data=st.data(),
    grid=st.integers(1, 3),
    n=st.sampled_from([1, 4, 8]),
    slots=st.integers(1, 3),
    elem=st.sampled_from(["i32", "i64"]),
)
def test_cas_random_histories(data, grid, n, slots, elem):
    dt = DTYPES[elem]
    small = st.integers(0, 3)
    total = grid * n
    mem = np.array(data.draw(st.lists(small, min_size=slots, max_size=slots)), dt)
    ix = np.array(data.draw(st.lists(st.integers(0, slots - 1), min_size=total, max_size=total)))
    cmp = np.array(data.draw(st.lists(small, min_size=total, max_size=total)), dt)
    val = np.array(data.draw(st.lists(small, min_size=total, max_size=total)), dt)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=total, max_size=total)))
    expect_mem, expect_old = cas_reference(mem, ix, cmp, val, mask)
    old = run_atomic(elem, "cas", mem, np.where(mask, ix, 1 << 28), cmp, val, mask=mask, grid=grid, n=n)
    assert old.tolist() == expect_old.tolist()  # masked-off lanes return their cmp
    assert mem.tolist() == expect_mem.tolist()


@pytest.mark.parametrize("elem", ["f32", "f64"])
def test_float_cas_compares_bits(elem):
    dt = DTYPES[elem]
    u = np.dtype(f"u{np.dtype(dt).itemsize}")
    quiet = np.array([np.nan], dt)
    other_nan = quiet.copy()
    other_nan.view(u)[0] |= 1  # a NaN with another payload
    mem = np.array([np.nan, 0.0, -0.0], dt)
    mem[0] = quiet[0]
    ix = np.array([0, 0, 1, 2, 2, 1, 0, 2])
    cmp = np.array([other_nan[0], quiet[0], -0.0, 0.0, -0.0, 0.0, 2.0, 5.0], dt)
    val = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], dt)
    expect_mem, expect_old = cas_reference(mem, ix, cmp, val)
    old = run_atomic(elem, "cas", mem, ix, cmp, val)
    _same(old, expect_old)
    _same(mem, expect_mem)
    assert mem.tolist() == [7.0, 6.0, 8.0]


def test_cas_long_chain_on_one_address():
    # a spin-lock-like chain: lane k swaps k -> k+1; all succeed in order
    n = 64
    mem = np.zeros(1, np.int32)
    cmp = np.arange(n, dtype=np.int32)
    old = run_atomic("i32", "cas", mem, np.zeros(n, np.int64), cmp, cmp + 1)
    assert old.tolist() == list(range(n)) and mem.tolist() == [n]


# -- Memory-level: many duplicates --------------------------------------------------------------


@pytest.mark.parametrize(
    "mode,elem",
    [
        ("addf", "f32"),
        ("addf", "bf16"),
        ("add", "i32"),
        ("umax", "i64"),
        ("xor", "i64"),
        ("xchg", "i32"),
        ("min", "i32"),
    ],
)
def test_many_duplicates_of_very_different_counts(mode, elem):
    rng = np.random.default_rng(3)
    dt = DTYPES[elem]
    memory = Memory()
    init = (rng.standard_normal(6) * 100).astype(dt)
    data = init.copy()
    base = memory.place(data)
    # address 0 gets thousands of accesses, address 5 one, the others a few
    ix = np.concatenate([np.zeros(3000, np.int64), rng.integers(1, 5, 200), [5]])
    rng.shuffle(ix)
    if elem.startswith(("f", "b")):
        args = rng.standard_normal(ix.size).astype(dt)
    else:
        args = rng.integers(-(2**31), 2**31, ix.size).astype(dt)
    expect_mem, expect_old = rmw_reference(mode, elem, init, ix, args)
    old = memory.atomic_rmw(base + ix * np.dtype(dt).itemsize, args, mode, np.dtype(dt))
    _same(old, expect_old)
    _same(data, expect_mem)


def test_cas_many_duplicates_memory_level():
    rng = np.random.default_rng(5)
    memory = Memory()
    data = np.zeros(3, np.int64)
    base = memory.place(data)
    ix = np.concatenate([np.zeros(500, np.int64), rng.integers(0, 3, 100)])
    cmp = rng.integers(0, 3, ix.size)
    val = rng.integers(0, 3, ix.size)
    expect_mem, expect_old = cas_reference(data.copy(), ix, cmp, val)
    old = memory.atomic_cas(base + 8 * ix, cmp, val, np.dtype(np.int64))
    assert old.tolist() == expect_old.tolist() and data.tolist() == expect_mem.tolist()


def test_atomic_outside_every_allocation_is_an_error_before_any_effect():
    mem = np.zeros(4, np.int32)
    ix = np.array([0, 1, 2, 4])  # element 4 is past the end
    with pytest.raises(
        InterpError,
        match=r"atomic_rmw_tko: atomic access outside every allocation "
        r"\(tile block \(0, 0, 0\), address 0x",
    ):
        run_atomic("i32", "add", mem, ix, np.ones(4, np.int32))
    assert mem.tolist() == [0, 0, 0, 0]
