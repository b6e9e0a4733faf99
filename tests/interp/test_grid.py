"""The grid: 1-, 2- and 3-D grids, block ids and counts, the cut into groups, limits."""

from __future__ import annotations

import io
import itertools
import tracemalloc

import numpy as np
import pytest

from compiler.interp import InterpError, Machine, RunOptions
from compiler.interp.machine import GROUP_ELEMENT_BUDGET, MAX_GRID_EXTENT, _group_at
from compiler.runtime import find_kernel, launch, load_module
from tests.interp.util import eval_kernel, kernel

IDS = kernel("""
    %x, %y, %z = get_tile_block_id : tile<i32>
    %nx, %ny, %nz = get_num_tile_blocks : tile<i32>
    %t = print_tko "%d %d %d of %d %d %d\\n", %x, %y, %z, %nx, %ny, %nz
        : tile<i32>, tile<i32>, tile<i32>, tile<i32>, tile<i32>, tile<i32> -> token
""")


def _blocks(grid):
    """Blocks in linear order: x fastest, then y, then z."""
    gx, gy, gz = (*grid, 1, 1)[:3]
    return [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]


@pytest.mark.parametrize("grid", [(5,), (3, 2), (2, 3, 2), (1, 1, 4), (1,)])
def test_block_ids_and_counts(grid):
    out = io.StringIO()
    launch(IDS, grid=grid, options=RunOptions(stdout=out))
    n = (*grid, 1, 1)[:3]
    expected = "".join(f"[block ({x}, {y}, {z})] {x} {y} {z} of {n[0]} {n[1]} {n[2]}\n" for x, y, z in _blocks(grid))
    assert out.getvalue() == expected


@pytest.mark.parametrize("budget", [1, 2, 5, 7, GROUP_ELEMENT_BUDGET])
def test_group_chunking_does_not_change_results(budget):
    grid = (3, 4, 5)
    text = """
    cuda_tile.module @m {
      entry @k(%out: tile<ptr<i32>>) {
        %x, %y, %z = get_tile_block_id : tile<i32>
        %nx, %ny, %nz = get_num_tile_blocks : tile<i32>
        %t0 = muli %z, %ny : tile<i32>
        %t1 = addi %t0, %y : tile<i32>
        %t2 = muli %t1, %nx : tile<i32>
        %id = addi %t2, %x : tile<i32>
        %c1000 = constant <i32: 1000> : tile<i32>
        %c100 = constant <i32: 100> : tile<i32>
        %a = muli %x, %c100 : tile<i32>
        %b = muli %z, %c1000 : tile<i32>
        %ab = addi %a, %b : tile<i32>
        %v = addi %ab, %y : tile<i32>
        %p = offset %out, %id : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
        %t = store_ptr_tko weak %p, %v : tile<ptr<i32>>, tile<i32> -> token
        return
      }
    }
    """
    out = np.full(60, -1, dtype=np.int32)
    launch(text, grid=grid, args=[out], options=RunOptions(group_budget=budget))
    assert out.tolist() == [100 * x + 1000 * z + y for x, y, z in _blocks(grid)]


@pytest.mark.parametrize(
    ("grid", "start", "n"),
    [((7, 1, 1), 0, 7), ((5, 3, 2), 4, 9), ((5, 3, 2), 13, 17), ((2, 2, 2), 7, 1), ((4, 1, 3), 0, 12)],
)
def test_group_coordinates_follow_the_linear_order(grid, start, n):
    g = _group_at(start, n, grid)
    expected = _blocks(grid)[start : start + n]
    assert list(zip(g.x.tolist(), g.y.tolist(), g.z.tolist(), strict=True)) == expected
    assert g.x.dtype == np.int32
    assert g.linear(grid).tolist() == list(range(start, start + n))
    assert g.linear(grid) is g.linear(grid)  # one array per group (memory checks rely on it)
    sub = g.subset(np.array([0, n - 1]))
    assert sub.linear(grid).tolist() == [start, start + n - 1]


def test_group_coordinates_far_into_a_large_grid():
    grid = (MAX_GRID_EXTENT, MAX_GRID_EXTENT, 3)
    start = MAX_GRID_EXTENT * MAX_GRID_EXTENT * 2 + MAX_GRID_EXTENT * 5 - 2
    g = _group_at(start, 4, grid)
    m = MAX_GRID_EXTENT
    assert list(zip(g.x.tolist(), g.y.tolist(), g.z.tolist(), strict=True)) == [
        (m - 2, 4, 2),
        (m - 1, 4, 2),
        (0, 5, 2),
        (1, 5, 2),
    ]


def test_block_ids_of_a_1d_group_are_uniform_along_y_and_z():
    out = eval_kernel(kernel("%x, %y, %z = get_tile_block_id : tile<i32>"), grid_positions=[0, 1, 2, 3])
    assert out["x"].tolist() == [0, 1, 2, 3]
    assert out["y"].shape == (1,) and out["z"].shape == (1,)
    assert out["y"].dtype == np.int32


def test_group_size_follows_the_largest_tile():
    text = kernel("""
        %a = constant <f32: 1.0> : tile<128x128xf32>
        %b = constant <f32: 1.0> : tile<1024xf32>
    """)
    module = load_module(text)
    entry = find_kernel(module, None)
    machine = Machine(module)
    assert machine.group_size(entry, 10_000) == GROUP_ELEMENT_BUDGET // (128 * 128)
    assert machine.group_size(entry, 3) == 3
    small = Machine(module, options=RunOptions(group_budget=100))
    assert small.group_size(entry, 50) == 1  # a tile larger than the budget: one block at a time


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        (
            (MAX_GRID_EXTENT + 1,),
            "error: grid (16777216, 1, 1) exceeds the limit of 16777215 (2^24-1) tile blocks per axis",
        ),
        ((1, 1, 1 << 30), "error: grid (1, 1, 1073741824) exceeds the limit of 16777215 (2^24-1) tile blocks per axis"),
        ((0,), "error: the grid must be 1 to 3 positive extents, got (0,)"),
        ((1, 2, 3, 4), "error: the grid must be 1 to 3 positive extents, got (1, 2, 3, 4)"),
    ],
)
def test_grid_limits(grid, message):
    module = load_module(IDS)
    machine = Machine(module)
    with pytest.raises(InterpError) as e:
        machine.run(find_kernel(module, None), grid, [])
    assert str(e.value) == message


def test_dead_values_are_freed_so_memory_stays_bounded():
    # a chain of 24 tile<1024xf32> values, different in each of 1024 blocks: 4 MiB each
    # for the whole grid; holding them all would take ~100 MiB
    lines = [
        "%bx, %by, %bz = get_tile_block_id : tile<i32>",
        "%f = itof %bx signed : tile<i32> -> tile<f32>",
        "%r = reshape %f : tile<f32> -> tile<1xf32>",
        "%x0 = broadcast %r : tile<1xf32> -> tile<1024xf32>",
    ]
    lines += [f"%x{i + 1} = addf %x{i}, %x0 : tile<1024xf32>" for i in range(24)]
    text = kernel("\n".join(lines))
    module = load_module(text)
    entry = find_kernel(module, None)
    machine = Machine(module)
    tracemalloc.start()
    try:
        machine.run(entry, (1024,), [])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 24 * 2**20


def test_memory_persists_across_runs_of_one_machine():
    text = """
    cuda_tile.module @m {
      entry @k(%p: tile<ptr<i32>>) {
        %x, %y, %z = get_tile_block_id : tile<i32>
        %q = offset %p, %x : tile<ptr<i32>>, tile<i32> -> tile<ptr<i32>>
        %v, %t = load_ptr_tko weak %q : tile<ptr<i32>> -> tile<i32>, token
        %c1 = constant <i32: 1> : tile<i32>
        %w = addi %v, %c1 : tile<i32>
        %t2 = store_ptr_tko weak %q, %w token = %t : tile<ptr<i32>>, tile<i32> -> token
        return
      }
    }
    """
    module = load_module(text)
    entry = find_kernel(module, None)
    machine = Machine(module)
    data = np.arange(4, dtype=np.int32)
    address = machine.memory.place(data, name="data")
    arg = np.array([address], dtype=np.int64)
    machine.run(entry, (4,), [arg])
    machine.run(entry, (2,), [arg])
    assert data.tolist() == [2, 3, 3, 4]


def test_every_block_runs_once_in_a_3d_grid_with_uneven_groups():
    grid = (3, 5, 2)
    out = io.StringIO()
    launch(IDS, grid=grid, options=RunOptions(stdout=out, group_budget=4, print_prefix=False))
    lines = out.getvalue().splitlines()
    assert lines == [f"{x} {y} {z} of 3 5 2" for x, y, z in itertools.islice(_blocks(grid), None)]
