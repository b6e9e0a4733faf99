"""Atomics lowered to Triton (compiler/lower/ops_memory.py, ops_view.py) against the CPU
interpreter: atomic_rmw_tko in every mode (add, and, or, xor, max, min, umax, umin, xchg)
on i32/i64, addf on f16/f32/f64, xchg of f32/f64 bits, atomic_cas_tko on i32/i64/f32/f64
(bitwise: NaN payloads and -0.0), masks (masked-off rmw lanes read 0, cas lanes their cmp),
duplicate addresses within a tile and across blocks, the returned old values; and
atomic_red_view_tko over partition and strided views with partial tiles.

Triton's interpreter applies a tile's lanes one after another in lane order, as the CPU
interpreter does, so the old values compare bitwise even with duplicate addresses. On a GPU
their order is the hardware's: there the test asserts that the results are linearizable —
some serial order of each address's atomics returns every lane's old value and leaves the
final memory (`serial_order`). bf16 atomic adds are refused by Triton 3.6's
interpreter ("Unsupported data type"): their PTX is checked instead (atom.add.noftz.bf16
on sm_90+, Triton's CAS loop on sm_80), as are the memory semantics and scopes (the
interpreter ignores them): relaxed atoms at every scope between the fences of PTX's release
and acquire patterns, for every ordering.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

from .harness import ON_GPU, compile_for, run_both

DTYPES = {"i32": np.int32, "i64": np.int64, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
          "f64": np.float64}  # fmt: skip


def module(body: str, params: str) -> str:
    lines = "\n".join("    " + line.strip() for line in body.strip().splitlines() if line.strip())
    return f"cuda_tile.module @m {{\n  entry @k({params}) {{\n{lines}\n    return\n  }}\n}}\n"


def ptrs(name: str, param: str, elem: str, n: int, offsets: str) -> str:
    return f"""
    %{name}_r = reshape %{param} : tile<ptr<{elem}>> -> tile<1xptr<{elem}>>
    %{name}_b = broadcast %{name}_r : tile<1xptr<{elem}>> -> tile<{n}xptr<{elem}>>
    %{name} = offset %{name}_b, %{offsets} : tile<{n}xptr<{elem}>>, tile<{n}xi32> -> tile<{n}xptr<{elem}>>
    """


def atomic_kernel(elem: str, n: int, op: str, masked: bool, ordering: str = "relaxed device") -> str:
    """Block b, lane i (g = b*n + i): out[g] = atomic(p + ix[g], a[g] (, b[g]), mask[g])."""
    t, p = f"tile<{n}x{elem}>", f"tile<{n}xptr<{elem}>>"
    body = f"""
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %iota = iota : tile<{n}xi32>
    %nn = constant <i32: {n}> : tile<i32>
    %b0 = muli %bx, %nn : tile<i32>
    %b1 = reshape %b0 : tile<i32> -> tile<1xi32>
    %base = broadcast %b1 : tile<1xi32> -> tile<{n}xi32>
    %g = addi %iota, %base : tile<{n}xi32>
    {ptrs("pix", "ix", "i32", n, "g")}
    %idx, %t0 = load_ptr_tko weak %pix : tile<{n}xptr<i32>> -> tile<{n}xi32>, token
    {ptrs("pa", "a", elem, n, "g")}
    {ptrs("pb", "b", elem, n, "g")}
    {ptrs("pp", "p", elem, n, "idx")}
    {ptrs("po", "out", elem, n, "g")}
    %x, %t1 = load_ptr_tko weak %pa : {p} -> {t}, token
    %y, %t2 = load_ptr_tko weak %pb : {p} -> {t}, token
    """
    mask_operand, mask_type = "", ""
    if masked:
        body += (
            ptrs("pm", "mk", "i1", n, "g")
            + f"%m, %t3 = load_ptr_tko weak %pm : tile<{n}xptr<i1>> -> tile<{n}xi1>, token\n"
        )
        mask_operand, mask_type = ", %m", f", tile<{n}xi1>"
    if op == "cas":
        body += f"%old, %tk = atomic_cas_tko {ordering} %pp, %x, %y{mask_operand} : {p}, {t}{mask_type} -> {t}, token\n"
    else:
        body += (
            f"%old, %tk = atomic_rmw_tko {ordering} %pp, {op}, %x{mask_operand} : {p}, {t}{mask_type} -> {t}, token\n"
        )
    body += f"%done = store_ptr_tko weak %po, %old : {p}, {t} -> token\n"
    params = (
        f"%p: tile<ptr<{elem}>>, %ix: tile<ptr<i32>>, %a: tile<ptr<{elem}>>, %b: tile<ptr<{elem}>>, "
        f"%mk: tile<ptr<i1>>, %out: tile<ptr<{elem}>>"
    )
    return module(body, params)


def _ints(dt, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    info = np.iinfo(dt)
    v = rng.integers(info.min, info.max, n, dtype=np.int64, endpoint=True).astype(dt)
    v[:4] = [0, -1, info.min, info.max]
    return v


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(f"u{x.dtype.itemsize}")


def _step(op: str, dtype: np.dtype):
    """The atomic `op` on one element as a function of bit patterns:
    (memory bits, operand a, operand b) -> new memory bits."""
    u = np.dtype(f"u{dtype.itemsize}")

    def value(bits: int) -> np.ndarray:
        return np.array([bits], u).view(dtype)

    def bits(x: np.ndarray) -> int:
        return int(x.astype(dtype).view(u)[0])

    signed = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
              "max": np.maximum, "min": np.minimum}  # fmt: skip
    if op in signed:
        return lambda m, a, b: bits(signed[op](value(m), value(a)))
    if op in ("umax", "umin"):
        return lambda m, a, b: max(m, a) if op == "umax" else min(m, a)
    if op == "addf":
        return lambda m, a, b: bits(value(m) + value(a))
    if op == "xchg":
        return lambda m, a, b: a
    assert op == "cas"
    return lambda m, a, b: b if m == a else m


def serial_order(op: str, init: np.ndarray, final: np.ndarray, ix, a, b, mask, old) -> str | None:
    """None if, for every address, some serial order of the unmasked lanes' atomics (lane g:
    `op` on init[ix[g]] with a[g], b[g]) returns old[g] to each lane and leaves final[ix[g]];
    else what is wrong. Lanes that leave the state as it is are applied as soon as their old
    value is the state (always safe: the rest of any valid order stays valid); the search
    branches only between lanes that change it."""
    step = _step(op, init.dtype)
    ib, fb, ab, bb, ob = (_bits(x) for x in (init, final, a, b, old))
    for cell in np.unique(ix[mask]):
        lanes = [int(g) for g in np.flatnonzero(mask & (ix == cell))]
        stack, budget = [(int(ib[cell]), frozenset(lanes))], 100_000
        found = False
        while stack and budget and not found:
            budget -= 1
            state, left = stack.pop()
            moved = True
            while moved:  # lanes that keep the state
                moved = False
                for g in left:
                    if int(ob[g]) == state and step(state, int(ab[g]), int(bb[g])) == state:
                        left, moved = left - {g}, True
                        break
            if not left:
                found = state == int(fb[cell])
                continue
            for g in left:
                if int(ob[g]) == state:
                    stack.append((step(state, int(ab[g]), int(bb[g])), left - {g}))
        if not found:
            return f"{op}: no serial order of the {len(lanes)} atomics on cell {cell} gives the old values seen"
    return None


def _run(elem: str, op: str, masked: bool, grid: int, n: int, mem, ix, a, b=None, mk=None):
    text = atomic_kernel(elem, n, op, masked)
    b = a.copy() if b is None else b
    mk = np.ones(grid * n, np.bool_) if mk is None else mk
    out = np.zeros(grid * n, mem.dtype)
    args = [mem, ix.astype(np.int32), a, b, mk, out]

    def linearizable(cpu: list, gpu: list) -> None:
        # What no order changes: the inputs, and the masked-off lanes' results.
        for i in (1, 2, 3, 4):
            assert np.array_equal(_bits(cpu[i]) if i in (2, 3) else cpu[i], _bits(gpu[i]) if i in (2, 3) else gpu[i])
        assert np.array_equal(_bits(cpu[5])[~mk], _bits(gpu[5])[~mk]), "masked-off lanes"
        problem = serial_order(op, mem, gpu[0], ix, a, b, mk, gpu[5])
        assert problem is None, problem

    cpu, got = run_both(text, "k", grid, args, on_gpu=linearizable)
    if not ON_GPU:  # the interpreter's sequential result is linearizable too: the check is sound
        assert serial_order(op, mem, cpu[0], ix, a, b, mk, cpu[5]) is None
    return cpu, got


INT_MODES = ["add", "and", "or", "xor", "max", "min", "umax", "umin", "xchg"]


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("elem", ["i32", "i64"])
def test_integer_rmw_modes_with_duplicates(elem: str, masked: bool) -> None:
    n, grid, cells = 256, 2, 37
    rng = np.random.default_rng(11)
    for mode in INT_MODES:
        mem = _ints(DTYPES[elem], cells, 1)
        ix = rng.integers(0, cells, grid * n)
        a = _ints(DTYPES[elem], grid * n, 2)
        mk = rng.integers(0, 2, grid * n).astype(np.bool_) if masked else None
        cpu, _ = _run(elem, mode, masked, grid, n, mem, ix, a, mk=mk)
        if mode == "add" and not masked:  # the memory is the sum, whatever the order
            want = mem.astype(np.int64).copy()
            np.add.at(want, ix, a.astype(np.int64))
            assert np.array_equal(cpu[0], want.astype(DTYPES[elem]))


@pytest.mark.parametrize("op", ["add", "xchg", "cas", "max"])
def test_serial_order_rejects_what_no_order_gives(op: str) -> None:
    """The GPU-side check is sound and not vacuous: the interpreter's result passes, and so
    does its result for the lanes in another order; two lanes' old values swapped, or the
    final memory changed, do not."""
    from compiler.runtime import launch, load_module

    n, cells = 64, 5
    rng = np.random.default_rng(4)
    mem = rng.integers(0, 3, cells).astype(np.int32)  # cas: equal values, some swaps succeed
    ix = rng.integers(0, cells, n)
    a = rng.integers(0, 3, n).astype(np.int32) if op == "cas" else _ints(np.int32, n, 8)
    b = rng.integers(0, 3, n).astype(np.int32)
    mk = np.ones(n, np.bool_)
    args = [mem.copy(), ix.astype(np.int32), a, b, mk, np.zeros(n, np.int32)]
    launch(load_module(atomic_kernel("i32", n, op, False)), "k", 1, args, backend="cpu")
    final, old = args[0], args[5]
    assert serial_order(op, mem, final, ix, a, b, mk, old) is None
    # Another order (lanes permuted, as a GPU might apply them) gives other results, also accepted.
    perm = rng.permutation(n)
    other = [mem.copy(), ix[perm].astype(np.int32), a[perm], b[perm], mk, np.zeros(n, np.int32)]
    launch(load_module(atomic_kernel("i32", n, op, False)), "k", 1, other, backend="cpu")
    old2 = np.empty_like(old)
    old2[perm] = other[5]
    assert serial_order(op, mem, other[0], ix, a, b, mk, old2) is None
    lanes = np.flatnonzero(ix == ix[0])
    pair = next((g, h) for g in lanes for h in lanes if old[g] != old[h])
    swapped = old.copy()
    swapped[[pair[0], pair[1]]] = old[[pair[1], pair[0]]]
    if op in ("add", "xchg"):  # distinct random values: one chain only (cas, max have ties; a wrong end they can't)
        assert serial_order(op, mem, final, ix, a, b, mk, swapped) is not None
    wrong = final.copy()
    wrong[ix[0]] += 1000
    assert serial_order(op, mem, wrong, ix, a, b, mk, old) is not None


@pytest.mark.parametrize("elem", ["f16", "f32", "f64"])
def test_addf_and_xchg_floats(elem: str) -> None:
    n, grid, cells = 128, 2, 19
    rng = np.random.default_rng(5)
    dt = DTYPES[elem]
    for mode, masked in (("addf", False), ("addf", True), ("xchg", False), ("xchg", True)):
        if mode == "xchg" and elem == "f16":
            continue  # xchg takes 32/64-bit elements only
        mem = rng.standard_normal(cells).astype(dt)
        mem[0] = -0.0
        ix = rng.integers(0, cells, grid * n)
        a = (rng.standard_normal(grid * n) * 100).astype(dt)
        if mode == "xchg":  # bits survive: NaN payloads, -0.0
            a[:3] = np.array([np.nan, -0.0, np.inf], dt)
            a[3:4] = np.frombuffer(np.array([0x7FF4000000000001 if elem == "f64" else 0x7FA00001],
                                            np.uint64 if elem == "f64" else np.uint32).tobytes(), dt)  # fmt: skip
        mk = rng.integers(0, 2, grid * n).astype(np.bool_) if masked else None
        _run(elem, mode, masked, grid, n, mem, ix, a, mk=mk)


# f32 atomic addf with subnormals: memory before, the value added, memory after and the value
# returned, as an NVIDIA H200 gave them for Triton's code and for tileiras' alike (PTX's
# atom.add.f32 flushes subnormal inputs and results to zeros of their sign; the value it
# returns is the one it found).
_S, _N = 1e-40, 2.0**-126
GPU_F32_ADD = [  # (memory, added, memory after, returned)
    (_S, 0.0, 0.0, _S), (-_S, 0.0, 0.0, -_S), (_S, 1.0, 1.0, _S), (0.0, _S, 0.0, 0.0),
    (_N, -_S, _N, _N), (_N, 0.5 * _N, _N, _N), (1.5 * _N, -_N, 0.0, 1.5 * _N), (-_N, _S, -_N, -_N),
    (3 * _S, 0.0, 0.0, 3 * _S), (0.0, -_S, 0.0, 0.0), (1.0, _S, 1.0, 1.0), (_S, _S, 0.0, _S),
    (-_S, -0.0, -0.0, -_S), (0.0, 0.0, 0.0, 0.0), (_N, -_N, 0.0, _N), (0.0, 2 * _S, 0.0, 0.0),
]  # fmt: skip


def test_f32_addf_flushes_subnormals_as_the_gpu_does() -> None:
    """The interpreter's gpu_f32_atomic_add gives the GPU's bits (the table above); without
    it the addition is exact. On a GPU, run_both compares both backends with the former."""
    from compiler.interp.machine import RunOptions
    from compiler.runtime import launch, load_module

    m0, x, after, returned = (np.array(col, np.float32) for col in zip(*GPU_F32_ADD, strict=True))
    n = len(m0)
    ix = np.arange(n, dtype=np.int32)
    text = atomic_kernel("f32", n, "addf", False)
    for gpu, want_mem, want_old in ((True, after, returned), (False, m0 + x, m0)):
        mem, old = m0.copy(), np.zeros(n, np.float32)
        args = [mem, ix, x, x.copy(), np.zeros(n, np.bool_), old]
        launch(load_module(text), "k", 1, args, backend="cpu", options=RunOptions(gpu_f32_atomic_add=gpu))
        assert mem.view(np.uint32).tolist() == want_mem.view(np.uint32).tolist(), gpu
        assert old.view(np.uint32).tolist() == want_old.view(np.uint32).tolist(), gpu
    run_both(text, "k", 1, [m0.copy(), ix, x, x.copy(), np.zeros(n, np.bool_), np.zeros(n, np.float32)])


@pytest.mark.parametrize("elem", ["i32", "i64", "f32", "f64"])
@pytest.mark.parametrize("masked", [False, True])
def test_cas_compares_bits(elem: str, masked: bool) -> None:
    n, grid, cells = 128, 2, 8
    rng = np.random.default_rng(9)
    dt = DTYPES[elem]
    if elem.startswith("f"):
        pool = np.array([0.0, -0.0, np.nan, 1.5, -np.inf, 3.0], dt)
        nan2 = np.frombuffer(np.array([0x7FF8000000000002 if elem == "f64" else 0x7FC00002],
                                      np.uint64 if elem == "f64" else np.uint32).tobytes(), dt)  # fmt: skip
        pool = np.concatenate([pool, nan2])
    else:
        pool = np.array([0, -1, 1, 7, np.iinfo(dt).min, np.iinfo(dt).max], dt)
    mem = pool[rng.integers(0, len(pool), cells)]
    ix = rng.integers(0, cells, grid * n)
    cmp = pool[rng.integers(0, len(pool), grid * n)]
    val = pool[rng.integers(0, len(pool), grid * n)]
    mk = rng.integers(0, 2, grid * n).astype(np.bool_) if masked else None
    cpu, _ = _run(elem, "cas", masked, grid, n, mem, ix, cmp, val, mk=mk)
    if masked:  # masked-off lanes return their cmp
        off = ~mk
        assert np.array_equal(cpu[5][off].view(np.uint8), cmp[off].view(np.uint8))


def test_cas_masked_lanes_touch_only_scratch() -> None:
    from compiler.lower import lower
    from compiler.runtime import load_module

    params = lower(load_module(atomic_kernel("i32", 16, "cas", True)), "k").params
    scratch = [p for p in params if p.kind == "buffer"]
    assert [(p.symbol, p.signature, len(p.data or b""), p.read_only) for p in scratch] == [
        ("cas scratch", "*i64", 8, False)
    ]
    params = lower(load_module(atomic_kernel("i32", 16, "cas", False)), "k").params
    assert not [p for p in params if p.kind == "buffer"]


# -- orderings, scopes, bf16: in the PTX ------------------------------------------------------------------

SEMS = ["relaxed", "acquire", "release", "acq_rel"]
SCOPES = {"tl_blk": "cta", "device": "gpu", "sys": "sys"}


def test_semantics_and_scopes_reach_the_ptx() -> None:
    """Every (ordering, scope) on an i32 add and a cas: relaxed atoms at the scope
    (atom.relaxed.<scope>; Triton prints the two in either order), a release fence before
    them (release, acq_rel) and an acquire fence after them (acquire, acq_rel): PTX's release
    and acquire patterns, fence.acq_rel.<scope> once a thread, not one an element."""
    for sem in SEMS:
        for scope, ptx_scope in SCOPES.items():
            text = atomic_kernel("i32", 128, "add", True, f"{sem} {scope}")
            (k,) = compile_for(text, arches=("sm_90",))
            ptx = k.asm["ptx"]
            found = list(re.finditer(r"atom\.[\w.]+\.add", ptx))
            atoms, kinds = [m.start() for m in found], {m.group() for m in found}
            assert atoms and all({"relaxed", ptx_scope} <= set(a.split(".")) for a in kinds), (sem, scope, kinds)
            fences = [m.start() for m in re.finditer(rf"fence\.acq_rel\.{ptx_scope};", ptx)]
            before, after = sum(f < min(atoms) for f in fences), sum(f > max(atoms) for f in fences)
            want = (int(sem in ("release", "acq_rel")), int(sem in ("acquire", "acq_rel")))
            assert (before, after) == want and len(fences) == sum(want), (sem, scope, before, after)
    (k,) = compile_for(atomic_kernel("f64", 128, "cas", True, "acq_rel sys"), arches=("sm_80",))
    cas = re.search(r"atom(\.\w+)*\.relaxed(\.\w+)*\.cas\.b64|atom(\.\w+)*\.sys(\.\w+)*\.cas\.b64", k.asm["ptx"])
    assert cas and k.asm["ptx"].count("fence.acq_rel.sys;") == 2
    assert k.asm["ptx"].index("fence.acq_rel.sys;") < cas.start() < k.asm["ptx"].rindex("fence.acq_rel.sys;")


def test_bf16_addf_compiles_for_every_target() -> None:
    ptx = {k.target.arch: k.asm["ptx"] for k in compile_for(atomic_kernel("bf16", 128, "addf", True))}
    assert "atom.global.gpu.relaxed.add.noftz.bf16" in ptx["sm_90"]
    assert "add.noftz.bf16" in ptx["sm_100"]
    assert re.search(r"atom(\.\w+)*\.cas\.b32", ptx["sm_80"])  # Triton's CAS loop before sm_90


def test_umin_umax_are_unsigned_in_the_ptx() -> None:
    for mode, op in (("umax", "max.u32"), ("umin", "min.u32"), ("max", "max.s32"), ("min", "min.s32")):
        (k,) = compile_for(atomic_kernel("i32", 128, mode, False), arches=("sm_80",))
        assert re.search(rf"atom(\.\w+)*\.{op}", k.asm["ptx"]), mode


# -- atomic_red_view_tko -----------------------------------------------------------------------------------


def red_kernel(elem: str, mode: str, tile: int, step: int | None, scope: str = "device") -> str:
    tview = f"tensor_view<?x{elem}, strides=[1]>"
    view = (
        f"strided_view<tile=({tile}), traversal_strides=[{step}], {tview}>"
        if step is not None
        else f"partition_view<tile=({tile}), {tview}>"
    )
    make = "make_strided_view" if step is not None else "make_partition_view"
    src = f"partition_view<tile=({tile}), tensor_view<?x{elem}, strides=[1]>>"
    return module(
        f"""
        %m = assume bounded<0, ?>, %n : tile<i32>
        %k = assume bounded<0, ?>, %nv : tile<i32>
        %vo = make_tensor_view %o, shape = [%m], strides = [1] : tile<i32> -> {tview}
        %vv = make_tensor_view %v, shape = [%k], strides = [1] : tile<i32> -> {tview}
        %po = {make} %vo : {view}
        %pv = make_partition_view %vv : {src}
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %x, %t = load_view_tko weak %pv[%by] : {src}, tile<i32> -> tile<{tile}x{elem}>, token
        %r = atomic_red_view_tko relaxed {scope} %po[%bx], {mode}, %x : tile<{tile}x{elem}>, {view}, tile<i32> -> token
        """,
        f"%o: tile<ptr<{elem}>>, %v: tile<ptr<{elem}>>, %n: tile<i32>, %nv: tile<i32>",
    )


@pytest.mark.parametrize(
    ("elem", "mode"),
    [("i32", "add"), ("i64", "umax"), ("i32", "min"), ("i64", "xor"), ("f32", "addf"), ("f16", "addf"),
     ("f64", "addf")],
)  # fmt: skip
@pytest.mark.parametrize("step", [None, 8])
def test_atomic_red_view_partial_tiles(elem: str, mode: str, step: int | None) -> None:
    """Blocks (x, y): tile x of the output view reduced with value tile y; every tile is
    reduced into by 3 blocks, and the last one runs past the tensor (n = 45)."""
    tile, n, ny = 16, 45, 3
    grid_x = -(-n // (step or tile))
    rng = np.random.default_rng(3)
    dt = DTYPES[elem]
    if elem.startswith("f"):
        # Small integers: exact sums in any order (blocks reduce into overlapping strided
        # tiles in an order the GPU picks, and the two interpreters order blocks differently).
        o = rng.integers(-64, 64, n + 3).astype(dt)
        v = rng.integers(-64, 64, ny * tile).astype(dt)
    else:
        o, v = _ints(dt, n + 3, 4), _ints(dt, ny * tile, 5)
    text = red_kernel(elem, mode, tile, step)
    cpu, _ = run_both(text, "k", (grid_x, ny), [o, v, n, ny * tile])
    assert np.array_equal(cpu[0][n:], o[n:])  # past the tensor: untouched


def test_atomic_red_view_scope_in_ptx() -> None:
    (k,) = compile_for(red_kernel("f32", "addf", 128, None, "tl_blk"), arches=("sm_90",))
    atoms = set(re.findall(r"(?:atom|red)\.[\w.]+", k.asm["ptx"]))
    assert any("cta" in a and "relaxed" in a and "add.f32" in a for a in atoms), atoms
    for k in compile_for(red_kernel("i64", "umin", 256, 128)):
        assert k.spills == 0


def test_f16_addf_reaching_inf_is_computed_on_the_cpu_and_said_under_tritons_interpreter() -> None:
    """IEEE gives inf for 60000 + 10000 in f16; Triton 3.6's interpreter raises OverflowError
    inside its atomics (found by differential testing): a one-line InterpError at the op
    saying what the cpu backend does instead, not Triton's exception."""
    from compiler.interp import InterpError
    from compiler.runtime import launch, load_module

    text = atomic_kernel("f16", 1, "addf", False)
    mem = np.array([60000], np.float16)
    args = [mem, np.zeros(1, np.int32), np.array([10000], np.float16), np.zeros(1, np.float16),
            np.ones(1, np.bool_), np.zeros(1, np.float16)]  # fmt: skip
    cpu = [a.copy() for a in args]
    launch(load_module(text), "k", 1, cpu, backend="cpu")
    assert cpu[0].view(np.uint16).tolist() == [0x7C00] and cpu[5].view(np.uint16).tolist() == [0x7B53]
    with pytest.raises(InterpError, match=r"atomic_rmw_tko: Triton's interpreter cannot compute this result") as e:
        launch(load_module(text), "k", 1, [a.copy() for a in args], backend="triton-interpret")
    assert "the cpu backend computes it" in str(e.value) and "\n" not in str(e.value)


def test_a_bf16_atomic_add_is_refused_by_name_under_tritons_interpreter() -> None:
    """Triton's interpreter has no bf16 atomics ("Unsupported data type", 3.6 and 3.9): the
    launch is refused up front in one line naming the op, as for inline PTX; the cpu backend
    runs it."""
    from compiler.runtime import LaunchError, launch, load_module

    text = atomic_kernel("bf16", 4, "addf", False)
    b = ml_dtypes.bfloat16
    args = [np.zeros(4, b), np.arange(4, dtype=np.int32), np.ones(4, b), np.zeros(4, b), np.ones(4, np.bool_),
            np.zeros(4, b)]  # fmt: skip
    launch(load_module(text), "k", 1, [a.copy() for a in args], backend="cpu")
    with pytest.raises(LaunchError) as e:
        launch(load_module(text), "k", 1, args, backend="triton-interpret")
    assert e.value.message == (
        "error: kernel @k needs a bf16 atomic add (atomic_rmw_tko), which Triton's interpreter cannot run; use the cpu "
        "backend, or compile it (tileir compile) and run it on a GPU"
    )


def test_broadcast_values_and_masks() -> None:
    """Atomics whose value, compare value and mask are broadcast from one element (and a
    relaxed store, an exchange): Triton 3.6's interpreter read such tiles as dense arrays and
    gave every lane but the first garbage. Found by tests/lower/fuzz.py."""
    n = 8
    t, p, m = f"tile<{n}xi32>", f"tile<{n}xptr<i32>>", f"tile<{n}xi1>"
    body = f"""
    %io = iota : {t}
    {ptrs("pa", "a", "i32", n, "io")}
    {ptrs("pb", "b", "i32", n, "io")}
    {ptrs("pc", "c", "i32", n, "io")}
    {ptrs("pd", "d", "i32", n, "io")}
    %five = constant <i32: 5> : tile<1xi32>
    %v = broadcast %five : tile<1xi32> -> {t}
    %zero = constant <i32: 0> : tile<1xi32>
    %z = broadcast %zero : tile<1xi32> -> {t}
    %yes = constant <i1: 1> : tile<1xi1>
    %all = broadcast %yes : tile<1xi1> -> {m}
    %o1, %t1 = atomic_rmw_tko relaxed device %pa, max, %v, %all : {p}, {t}, {m} -> {t}, token
    %o2, %t2 = atomic_cas_tko relaxed device %pb, %z, %v : {p}, {t} -> {t}, token
    %o3, %t3 = atomic_rmw_tko relaxed device %pc, xchg, %v : {p}, {t} -> {t}, token
    %t4 = store_ptr_tko relaxed device %pd, %v, %all : {p}, {t}, {m} -> token
    """
    text = module(body, "%a: tile<ptr<i32>>, %b: tile<ptr<i32>>, %c: tile<ptr<i32>>, %d: tile<ptr<i32>>")
    arrays = [np.arange(n, dtype=np.int32) for _ in range(4)]
    cpu, _ = run_both(text, "k", 1, arrays)
    assert cpu[0].tolist() == [max(i, 5) for i in range(n)]
    assert cpu[1].tolist() == [5] + list(range(1, n))  # (only lane 0 held the compare value 0)
    assert cpu[2].tolist() == cpu[3].tolist() == [5] * n


# A product updated atomically, its old values stored through a transposed view: Triton 3.9
# (not 3.6) fails an assertion ('operandEnc') in TritonGPURemoveLayoutConversions, for every
# type of product and atomic (fuzz seed 156022 of --weight mma=15 --weight mma_scaled=5: f64
# added; 196190 of --weight math=4 --hints: an f32 product of mmaf_scaled exchanged; cut
# down); the old values now pass a register move first (ops_memory, _fenced).
PRODUCT_UPDATED_ATOMICALLY = """cuda_tile.module @m {
  entry @k(%xp: tile<ptr<i64>>, %ap: tile<ptr<ACC>>, %op: tile<ptr<ACC>>, %os: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %xt = make_tensor_view %xp, shape = [16], strides = [1] : tensor_view<16xi64, strides=[1]>
    %xv = make_partition_view %xt : partition_view<tile=(16), tensor_view<16xi64, strides=[1]>>
    %x, %t0 = load_view_tko weak %xv[%c0] : partition_view<tile=(16), tensor_view<16xi64, strides=[1]>>, tile<i32> -> tile<16xi64>, token
    %row = reshape %x : tile<16xi64> -> tile<1x16xi64>
    %b = broadcast %row : tile<1x16xi64> -> tile<4x16xi64>
    %bt = permute %b [1, 0] : tile<4x16xi64> -> tile<16x4xi64>
    %lhs = CONVERT %b : tile<4x16xi64> -> tile<4x16xIN>
    %rhs = CONVERT %bt : tile<16x4xi64> -> tile<16x4xIN>
    %acc = constant <ACC: -5> : tile<4x4xACC>
    %d = PRODUCT %lhs, %rhs, %acc : tile<4x16xIN>, tile<16x4xIN>, tile<4x4xACC>
    %io = iota : tile<16xi32>
    %ix = reshape %io : tile<16xi32> -> tile<4x4xi32>
    %a0 = reshape %ap : tile<ptr<ACC>> -> tile<1x1xptr<ACC>>
    %ab = broadcast %a0 : tile<1x1xptr<ACC>> -> tile<4x4xptr<ACC>>
    %aa = offset %ab, %ix : tile<4x4xptr<ACC>>, tile<4x4xi32> -> tile<4x4xptr<ACC>>
    %old, %t1 = atomic_rmw_tko acq_rel device %aa, MODE, %d : tile<4x4xptr<ACC>>, tile<4x4xACC> -> tile<4x4xACC>, token
    %ot = make_tensor_view %op, shape = [4, 4], strides = [%os, 1] : tile<i32> -> tensor_view<4x4xACC, strides=[?,1]>
    %ov = make_partition_view %ot : partition_view<tile=(4x4), tensor_view<4x4xACC, strides=[?,1]>, dim_map=[1, 0]>
    %t2 = store_view_tko weak %old, %ov[%c0, %c0] : tile<4x4xACC>, partition_view<tile=(4x4), tensor_view<4x4xACC, strides=[?,1]>, dim_map=[1, 0]>, tile<i32>, tile<i32> -> token
    return
  }
}
"""  # noqa: E501


@pytest.mark.parametrize(
    ("operands", "acc", "mode"),
    [("f64", "f64", "addf"), ("f16", "f32", "xchg"), ("f16", "f16", "addf"), ("i8", "i32", "add")],
)
def test_a_product_updated_atomically_and_its_old_values_stored_transposed(operands: str, acc: str, mode: str) -> None:
    integer = acc == "i32"
    product = "mmai %lhs, %rhs, %acc signed signed" if integer else "mmaf %lhs, %rhs, %acc"
    text = (
        PRODUCT_UPDATED_ATOMICALLY.replace("CONVERT", "trunci" if integer else "itof")
        .replace("itof %b :", "itof %b signed :")
        .replace("itof %bt :", "itof %bt signed :")
        .replace("PRODUCT %lhs, %rhs, %acc", product)
        .replace("<ACC: -5>", f"<{acc}: {-5 if integer else -5.0}>")
        .replace("ACC", acc)
        .replace("xIN", f"x{operands}")
        .replace("MODE", mode)
    )
    dtype = np.dtype({"f64": np.float64, "f32": np.float32, "f16": np.float16, "i32": np.int32}[acc])
    x = np.arange(-8, 8, dtype=np.int64)
    a = (np.arange(16) * (1 if integer else 0.5)).astype(dtype)
    cpu, _ = run_both(text, "k", 1, [x, a.copy(), np.zeros(16, dtype), 4])
    d = (np.sum(x * x) - 5).astype(dtype)  # every element of the product (exact in each type)
    assert np.array_equal(cpu[1], np.full(16, d, dtype) if mode == "xchg" else a + d)
    assert np.array_equal(cpu[2].reshape(4, 4), a.reshape(4, 4).T)  # the old values, transposed
    for k in compile_for(text, "k"):
        assert k.spills == 0
