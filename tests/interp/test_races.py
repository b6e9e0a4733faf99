"""Race detection: within one tile block, a store and another access to the same address
by two memory ops that no token or data dependence orders are undefined behaviour and
reported; ordered accesses, disjoint addresses, masked-off lanes, atomics among
themselves and accesses of different blocks are not races."""

from __future__ import annotations

import time

import numpy as np
import pytest

from compiler.interp import InterpError, Machine, Memory, MemoryFault, RunOptions
from compiler.runtime import find_kernel, load_module


def module(body: str, params: str = "%c: tile<ptr<i32>>") -> str:
    lines = "\n".join("    " + line.strip() for line in body.strip().splitlines() if line.strip())
    return f"cuda_tile.module @m {{\n  entry @k({params}) {{\n{lines}\n    return\n  }}\n}}\n"


def ptrs(name: str, param: str, n: int, offsets: str, elem: str = "i32") -> str:
    return f"""
    %{name}_r = reshape %{param} : tile<ptr<{elem}>> -> tile<1xptr<{elem}>>
    %{name}_b = broadcast %{name}_r : tile<1xptr<{elem}>> -> tile<{n}xptr<{elem}>>
    %{name} = offset %{name}_b, %{offsets} : tile<{n}xptr<{elem}>>, tile<{n}xi32> -> tile<{n}xptr<{elem}>>
    """


BLOCK = """
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %iota = iota : tile<8xi32>
    %eight = constant <i32: 8> : tile<i32>
    %b0 = muli %bx, %eight : tile<i32>
    %b1 = reshape %b0 : tile<i32> -> tile<1xi32>
    %base = broadcast %b1 : tile<1xi32> -> tile<8xi32>
    %idx = addi %iota, %base : tile<8xi32>
    %one = constant <i32: 1> : tile<8xi32>
    %two = constant <i32: 2> : tile<8xi32>
"""


def run(text: str, size: int = 64, grid: tuple[int, ...] = (1,), options: RunOptions | None = None):
    mod = load_module(text)
    machine = Machine(mod, options=options)
    c = np.zeros(size, np.int32)
    address = machine.memory.place(c)
    machine.run(find_kernel(mod, None), grid, [np.array([address], np.int64)])
    return c, address


def where(text: str, needle: str, nth: int = 0) -> str:
    hits = [(n, line) for n, line in enumerate(text.splitlines(), 1) if needle in line]
    n, line = hits[nth]
    return f"<input>:{n}:{len(line) - len(line.lstrip()) + 1}"


def race_text(text: str, this: tuple[str, int], other: tuple[str, int], block: int, address: int) -> str:
    here = where(text, this[0], this[1])
    there = where(text, other[0], other[1])
    op, other_op = this[0].split()[0], other[0].split()[0]
    return (
        f"{here}: error: {op}: race: {op} at {here} and {other_op} at {there} access the same address with "
        f"no token order between them (tile block ({block}, 0, 0), address {address:#x})"
    )


# -- races --------------------------------------------------------------------------------------


def test_two_unordered_stores_to_the_same_address():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %t1 = store_ptr_tko weak %p, %one : tile<8xptr<i32>>, tile<8xi32> -> token
        %t2 = store_ptr_tko weak %p, %two : tile<8xptr<i32>>, tile<8xi32> -> token
    """
    )
    with pytest.raises(InterpError) as e:
        run(text)
    c_base = 0x10000
    assert str(e.value) == race_text(text, ("store_ptr_tko", 1), ("store_ptr_tko", 0), 0, c_base)


def test_store_then_unordered_load():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %t1 = store_ptr_tko weak %p, %one : tile<8xptr<i32>>, tile<8xi32> -> token
        %v, %t2 = load_ptr_tko weak %p : tile<8xptr<i32>> -> tile<8xi32>, token
    """
    )
    with pytest.raises(InterpError) as e:
        run(text, grid=(3,))
    assert str(e.value) == race_text(text, ("load_ptr_tko", 0), ("store_ptr_tko", 0), 0, 0x10000)


def test_load_then_unordered_store_of_other_data():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %v, %t1 = load_ptr_tko weak %p : tile<8xptr<i32>> -> tile<8xi32>, token
        %t2 = store_ptr_tko weak %p, %two : tile<8xptr<i32>>, tile<8xi32> -> token
    """
    )
    with pytest.raises(InterpError, match="race: store_ptr_tko at .* and load_ptr_tko at "):
        run(text)


def test_race_in_one_block_only_names_that_block():
    # the second store goes 40 elements further except in block 2
    text = module(
        BLOCK
        + """
        %forty = constant <i32: 40> : tile<8xi32>
        %zero = constant <i32: 0> : tile<8xi32>
        %bxs = broadcast %bx_1 : tile<1xi32> -> tile<8xi32>
        %is2 = cmpi equal %bxs, %two, signed : tile<8xi32> -> tile<8xi1>
        %shift = select %is2, %zero, %forty : tile<8xi1>, tile<8xi32>
        %idx2 = addi %idx, %shift : tile<8xi32>
    """.replace("%bxs = broadcast %bx_1", "%bx_1 = reshape %bx : tile<i32> -> tile<1xi32>\n%bxs = broadcast %bx_1")
        + ptrs("p", "c", 8, "idx")
        + ptrs("q", "c", 8, "idx2")
        + """
        %t1 = store_ptr_tko weak %p, %one : tile<8xptr<i32>>, tile<8xi32> -> token
        %t2 = store_ptr_tko weak %q, %two : tile<8xptr<i32>>, tile<8xi32> -> token
    """
    )
    with pytest.raises(InterpError) as e:
        run(text, size=80, grid=(4,))
    assert str(e.value) == race_text(text, ("store_ptr_tko", 1), ("store_ptr_tko", 0), 2, 0x10000 + 16 * 4)


def test_atomic_and_unordered_weak_load_race():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %old, %t1 = atomic_rmw_tko relaxed device %p, add, %one : tile<8xptr<i32>>, tile<8xi32> -> tile<8xi32>, token
        %v, %t2 = load_ptr_tko weak %p : tile<8xptr<i32>> -> tile<8xi32>, token
    """
    )
    with pytest.raises(InterpError, match="race: load_ptr_tko at .* and atomic_rmw_tko at "):
        run(text)


def test_races_in_a_diverged_branch():
    # blocks 0 and 1 store in the `if`; then everyone stores the same addresses unordered
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %lim = constant <i32: 2> : tile<i32>
        %cond = cmpi less_than %bx, %lim, signed : tile<i32> -> tile<i1>
        if %cond {
          %t1 = store_ptr_tko weak %p, %one : tile<8xptr<i32>>, tile<8xi32> -> token
          yield
        }
        %t2 = store_ptr_tko weak %p, %two : tile<8xptr<i32>>, tile<8xi32> -> token
    """
    )
    with pytest.raises(InterpError, match=r"race: .* \(tile block \(0, 0, 0\), address 0x10000\)"):
        run(text, grid=(4,))


def test_race_found_when_blocks_run_in_several_groups():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %t1 = store_ptr_tko weak %p, %one : tile<8xptr<i32>>, tile<8xi32> -> token
        %v, %t2 = load_ptr_tko weak %p : tile<8xptr<i32>> -> tile<8xi32>, token
    """
    )
    with pytest.raises(InterpError, match=r"\(tile block \(0, 0, 0\)"):
        run(text, grid=(4,), options=RunOptions(group_budget=16))


# -- not races ------------------------------------------------------------------------------------


def test_token_ordered_accesses():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %t1 = store_ptr_tko weak %p, %one : tile<8xptr<i32>>, tile<8xi32> -> token
        %v, %t2 = load_ptr_tko weak %p token=%t1 : tile<8xptr<i32>> -> tile<8xi32>, token
        %t3 = store_ptr_tko weak %p, %two token=%t2 : tile<8xptr<i32>>, tile<8xi32> -> token
        %j = join_tokens %t1, %t3 : token
        %w, %t4 = load_ptr_tko weak %p token=%j : tile<8xptr<i32>> -> tile<8xi32>, token
        %s = addi %v, %w : tile<8xi32>
        %t5 = store_ptr_tko weak %p, %s token=%t1 : tile<8xptr<i32>>, tile<8xi32> -> token
    """
    )
    c, _ = run(text, grid=(2,))
    assert c[:16].tolist() == [3] * 16


def test_data_dependent_store_after_load():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %v, %t1 = load_ptr_tko weak %p : tile<8xptr<i32>> -> tile<8xi32>, token
        %w = addi %v, %one : tile<8xi32>
        %t2 = store_ptr_tko weak %p, %w : tile<8xptr<i32>>, tile<8xi32> -> token
    """
    )
    c, _ = run(text, grid=(2,))
    assert c[:16].tolist() == [1] * 16


def test_store_under_a_condition_computed_from_the_load():
    # The branch cannot run before the load that decides it: control dependence orders them.
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %v, %t1 = load_ptr_tko weak %p : tile<8xptr<i32>> -> tile<8xi32>, token
        %s = reduce %v dim=0 identities=[0 : i32] : tile<8xi32> -> tile<i32>
        (%a: tile<i32>, %b: tile<i32>) {
          %sum = addi %a, %b : tile<i32>
          yield %sum : tile<i32>
        }
        %zero = constant <i32: 0> : tile<i32>
        %ok = cmpi equal %s, %zero, signed : tile<i32> -> tile<i1>
        if %ok {
          %t2 = store_ptr_tko weak %p, %two : tile<8xptr<i32>>, tile<8xi32> -> token
        }
    """
    )
    c, _ = run(text, grid=(2,))
    assert c[:16].tolist() == [2] * 16


def test_store_under_an_unrelated_condition_still_races():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %v, %t1 = load_ptr_tko weak %p : tile<8xptr<i32>> -> tile<8xi32>, token
        %zero = constant <i32: 0> : tile<i32>
        %ok = cmpi equal %bx, %zero, signed : tile<i32> -> tile<i1>
        if %ok {
          %t2 = store_ptr_tko weak %p, %two : tile<8xptr<i32>>, tile<8xi32> -> token
        }
    """
    )
    with pytest.raises(InterpError, match="race: store_ptr_tko at .* and load_ptr_tko at "):
        run(text, grid=(2,))


def test_different_blocks_storing_the_same_address():
    text = module(
        """
        %i = iota : tile<8xi32>
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %b1 = reshape %bx : tile<i32> -> tile<1xi32>
        %v = broadcast %b1 : tile<1xi32> -> tile<8xi32>
    """
        + ptrs("p", "c", 8, "i")
        + """
        %t1 = store_ptr_tko weak %p, %v : tile<8xptr<i32>>, tile<8xi32> -> token
    """
    )
    c, _ = run(text, grid=(4,))
    assert c[:8].tolist() == [3] * 8


def test_interleaved_but_disjoint_addresses():
    # even elements and odd elements: the byte ranges overlap, the addresses do not
    text = module(
        BLOCK
        + """
        %even = muli %idx, %two : tile<8xi32>
        %odd = addi %even, %one : tile<8xi32>
    """
        + ptrs("p", "c", 8, "even")
        + ptrs("q", "c", 8, "odd")
        + """
        %t1 = store_ptr_tko weak %p, %one : tile<8xptr<i32>>, tile<8xi32> -> token
        %t2 = store_ptr_tko weak %q, %two : tile<8xptr<i32>>, tile<8xi32> -> token
        %v, %t3 = load_ptr_tko weak %p token=%t1 : tile<8xptr<i32>> -> tile<8xi32>, token
    """
    )
    c, _ = run(text, grid=(2,))
    assert c[:32].tolist() == [1, 2] * 16


def test_masked_off_lanes_do_not_race():
    # the second store covers the first one's addresses only in masked-off lanes
    text = module(
        BLOCK
        + """
        %four = constant <i32: 4> : tile<8xi32>
        %hi = cmpi greater_than_or_equal %iota, %four, signed : tile<8xi32> -> tile<8xi1>
        %lo = cmpi less_than %iota, %four, signed : tile<8xi32> -> tile<8xi1>
    """
        + ptrs("p", "c", 8, "idx")
        + """
        %t1 = store_ptr_tko weak %p, %one, %lo : tile<8xptr<i32>>, tile<8xi32>, tile<8xi1> -> token
        %t2 = store_ptr_tko weak %p, %two, %hi : tile<8xptr<i32>>, tile<8xi32>, tile<8xi1> -> token
        %v, %t3 = load_ptr_tko weak %p, %hi : tile<8xptr<i32>>, tile<8xi1> -> tile<8xi32>, token
    """
    )
    with pytest.raises(InterpError, match="race: load_ptr_tko at .* and store_ptr_tko at "):
        run(text)  # the load's active lanes meet the second store
    ok = text.replace("%v, %t3 = load_ptr_tko weak %p, %hi", "%v, %t3 = load_ptr_tko weak %p, %hi token=%t2")
    c, _ = run(ok)
    assert c[:8].tolist() == [1, 1, 1, 1, 2, 2, 2, 2]


def test_atomics_do_not_race_with_each_other_or_relaxed_loads():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "iota")
        + """
        %o1, %t1 = atomic_rmw_tko relaxed device %p, add, %one : tile<8xptr<i32>>, tile<8xi32> -> tile<8xi32>, token
        %o2, %t2 = atomic_rmw_tko relaxed device %p, add, %two : tile<8xptr<i32>>, tile<8xi32> -> tile<8xi32>, token
        %o3, %t3 = atomic_cas_tko relaxed device %p, %one, %two : tile<8xptr<i32>>, tile<8xi32> -> tile<8xi32>, token
        %v, %t4 = load_ptr_tko relaxed device %p : tile<8xptr<i32>> -> tile<8xi32>, token
    """
    )
    c, _ = run(text, grid=(3,))
    assert c[:8].tolist() == [9] * 8


def test_race_checking_can_be_turned_off():
    text = module(
        BLOCK
        + ptrs("p", "c", 8, "idx")
        + """
        %t1 = store_ptr_tko weak %p, %one : tile<8xptr<i32>>, tile<8xi32> -> token
        %t2 = store_ptr_tko weak %p, %two : tile<8xptr<i32>>, tile<8xi32> -> token
    """
    )
    c, _ = run(text, options=RunOptions(check_races=False))
    assert c[:8].tolist() == [2] * 8


LOOP = (
    BLOCK
    + ptrs("p", "c", 8, "idx")
    + """
    %lb = constant <i32: 0> : tile<i32>
    %ub = constant <i32: {n}> : tile<i32>
    %st = constant <i32: 1> : tile<i32>
    %t0 = make_token : token
    %tf = for %i in (%lb to %ub, step %st) : tile<i32> iter_values(%t = %t0) -> (token) {{
      %v, %tl = load_ptr_tko weak %p token=%t : tile<8xptr<i32>> -> tile<8xi32>, token
      %w = addi %v, %one : tile<8xi32>
      %ts = store_ptr_tko weak %p, %w token=%tl : tile<8xptr<i32>>, tile<8xi32> -> token
      continue %ts : token
    }}
"""
)


def test_long_token_threaded_loop_is_not_a_race_and_stays_fast():
    n = 400
    start = time.perf_counter()
    c, _ = run(module(LOOP.format(n=n)), size=128, grid=(16,))
    elapsed = time.perf_counter() - start
    assert c[:128].tolist() == [n] * 128
    assert elapsed < 5.0


def test_loop_of_disjoint_unordered_stores():
    # each iteration stores a different row with no token: unordered but disjoint
    text = module(
        """
        %iota = iota : tile<8xi32>
        %eights = constant <i32: 8> : tile<8xi32>
    """
        + ptrs("p", "c", 8, "iota")
        + """
        %lb = constant <i32: 0> : tile<i32>
        %ub = constant <i32: 64> : tile<i32>
        %st = constant <i32: 1> : tile<i32>
        for %i in (%lb to %ub, step %st) : tile<i32> {
          %i1 = reshape %i : tile<i32> -> tile<1xi32>
          %ib = broadcast %i1 : tile<1xi32> -> tile<8xi32>
          %row = muli %ib, %eights : tile<8xi32>
          %pp = offset %p, %row : tile<8xptr<i32>>, tile<8xi32> -> tile<8xptr<i32>>
          %t = store_ptr_tko weak %pp, %ib : tile<8xptr<i32>>, tile<8xi32> -> token
          continue
        }
    """
    )
    c, _ = run(text, size=512, grid=(2,))
    assert c.tolist() == np.repeat(np.arange(64), 8).tolist()


# -- the recording interface on its own -------------------------------------------------------


def test_check_access_contract_directly():
    mem = Memory()
    base = mem.place(np.zeros(64, np.int32))
    mem.begin_group(10, 4)  # blocks 10..13
    ids = np.array([10, 11, 12, 13])
    rows = base + 4 * (np.arange(4)[:, None] * 8 + np.arange(8))
    mem.check_access(
        instance=1,
        deps=frozenset(),
        store=True,
        block_ids=ids,
        lo=rows[:, 0],
        hi=rows[:, -1] + 4,
        addresses=lambda: rows,
        itemsize=4,
        op="first",
    )
    # block 12 alone, reading the element block 12 wrote, ordered after it: fine
    mem.check_access(
        instance=2,
        deps=frozenset({1}),
        store=False,
        block_ids=ids[2:3],
        lo=rows[2, 3:4],
        hi=rows[2, 3:4] + 4,
        itemsize=4,
        op="second",
    )
    # block 13 reading what block 12 wrote: another block, fine
    mem.check_access(
        instance=3,
        deps=frozenset(),
        store=False,
        block_ids=ids[3:],
        lo=rows[2, :1],
        hi=rows[2, :1] + 4,
        itemsize=4,
        op="third",
    )
    # block 11 unordered, reading one element block 11 wrote
    with pytest.raises(MemoryFault) as e:
        mem.check_access(
            instance=4,
            deps=frozenset({2}),
            store=False,
            block_ids=ids[1:3],
            lo=np.array([rows[1, 5], rows[2, 0] - 4]),
            hi=np.array([rows[1, 5] + 4, rows[2, 0]]),
            itemsize=4,
            op="fourth",
        )
    assert e.value.kind == "race" and e.value.block == 0 and e.value.address == rows[1, 5]
    assert e.value.message == "race: fourth and first access the same address with no token order between them"
    mem.begin_group(14, 4)  # records are per group
    mem.check_access(
        instance=5,
        deps=frozenset(),
        store=True,
        block_ids=np.array([14]),
        lo=rows[0, :1],
        hi=rows[0, :1] + 4,
        itemsize=4,
    )
