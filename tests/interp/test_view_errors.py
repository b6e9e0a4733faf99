"""Undefined behaviour and faults of the view ops, with their exact error text: indices
outside the index space, accesses outside every allocation (naming the tile element,
the tile block and the address), misaligned bases, sizes that do not fit, races."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.interp import InterpError
from compiler.runtime import launch

from .test_views import BIDS, gv, kernel, load, make_tv, pv, store, sv, tv


def gather(name: str, view: str, vtype: str, rows: str, off: str, shape: tuple[int, int]) -> str:
    return (
        f"%{name}, %{name}_tok = load_view_tko weak %{view}[%{rows}, %{off}] : {vtype}, tile<{shape[0]}xi32>, "
        f"tile<i32> -> tile<{shape[0]}x{shape[1]}xf32>, token"
    )


def red(view: str, vtype: str, value: str, index: str = "%bx") -> str:
    return (
        f"%r = atomic_red_view_tko relaxed device %{view}[{index}], add, %{value} : tile<4xi32>, {vtype}, "
        "tile<i32> -> token"
    )


def fails(body: str, params: str, grid, args) -> str:
    with pytest.raises(InterpError) as e:
        launch(kernel(body, params), grid=grid, args=args)
    return str(e.value)


# -- index spaces ---------------------------------------------------------------------------------


def test_partition_index_past_the_index_space() -> None:
    t = tv([None], [1])
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            load("x", "pa", p, ["%bx"], [4]),
        ]
    )
    # 10 elements in tiles of 4: index space (3); block 3 asks for tile 3
    msg = fails(body, "%a: tile<ptr<f32>>, %n: tile<i32>", (4,), [np.zeros(16, np.float32), 10])
    assert msg == (
        "<input>:6:5: error: load_view_tko: index (3) is outside the index space (3) of the partition_view "
        "(tile block (3, 0, 0))"
    )


def test_tile_0_of_an_empty_tensor_is_outside() -> None:
    """An extent of 0 has an index space of 0 tiles: index 0 is outside it too. (cuTile's
    own tests load tile 0 of an empty `Array.slice`, and tile 1 of a one-tile array, and
    expect padding, as tileiras' masks give; its docs call a tile wholly outside the array
    undefined behaviour, as Tile IR's spec does, and so it is reported here.)"""
    t = tv([None], [1])
    p = pv([4], t, "neg_inf")
    body = "\n".join(
        [
            make_tv("va", "a", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            load("x", "pa", p, ["%bx"], [4]),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>, %n: tile<i32>", (1,), [np.zeros(8, np.float32), 0])
    assert msg.endswith(
        "error: load_view_tko: index (0) is outside the index space (0) of the partition_view (tile block (0, 0, 0))"
    )


def test_index_space_follows_dim_map() -> None:
    # 64x16 tensor, tile 4x2, dim_map [1, 0]: index space (16/4, 64/2) = (4, 32)
    t = tv([64, 16], [16, 1])
    p = pv([4, 2], t, dim_map=[1, 0])
    body = "\n".join(
        [
            make_tv("va", "a", [64, 16], [16, 1]),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            "%c0 = constant <i32: 0> : tile<i32>",
            load("x", "pa", p, ["%bx", "%c0"], [4, 2]),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>", (5,), [np.zeros(64 * 16, np.float32)])
    assert msg == (
        "<input>:7:5: error: load_view_tko: index (4, 0) is outside the index space (4, 32) of the partition_view "
        "(tile block (4, 0, 0))"
    )


def test_strided_index_space() -> None:
    # the spec's example: 64x16, tile 4x2, traversal [4, 3]: index space 16x6
    t = tv([64, 16], [16, 1])
    s = sv([4, 2], [4, 3], t)
    body = "\n".join(
        [
            make_tv("va", "a", [64, 16], [16, 1]),
            f"%sa = make_strided_view %va : {s}",
            BIDS,
            "%c0 = constant <i32: 0> : tile<i32>",
            load("x", "sa", s, ["%c0", "%bx"], [4, 2]),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>", (7,), [np.zeros(64 * 16, np.float32)])
    assert msg == (
        "<input>:7:5: error: load_view_tko: index (0, 6) is outside the index space (16, 6) of the strided_view "
        "(tile block (6, 0, 0))"
    )


def test_indices_are_unsigned() -> None:
    t = tv([16], [1])
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", [16], [1]),
            f"%pa = make_partition_view %va : {p}",
            "%m = constant <i32: -1> : tile<i32>",
            "%c = constant <f32: 1.0> : tile<4xf32>",
            store("c", "pa", p, ["%m"], [4]),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>", (1,), [np.zeros(16, np.float32)])
    assert msg == (
        "<input>:7:5: error: store_view_tko: index (4294967295) is outside the index space (4) of the partition_view "
        "(tile block (0, 0, 0))"
    )


def test_gather_offsets_outside_the_tensor() -> None:
    # The sparse dimension may name rows outside the tensor; the other indices may not.
    t = tv([8, 8], [8, 1])
    g = gv([4, 4], t, 0)
    body = "\n".join(
        [
            make_tv("va", "a", [8, 8], [8, 1]),
            f"%ga = make_gather_scatter_view %va : {g}",
            "%r = constant <i32: [0, 100, 2, 3]> : tile<4xi32>",
            "%c = constant <i32: 8> : tile<i32>",
            gather("x", "ga", g, "r", "c", (4, 4)),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>", (1,), [np.zeros(64, np.float32)])
    assert msg == (
        "<input>:7:5: error: load_view_tko: index (*, 8) is outside the index space (8, 8) of the "
        "gather_scatter_view (tile block (0, 0, 0))"
    )


def test_atomic_index_outside() -> None:
    t = tv([8], [1], "i32")
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", [8], [1], "i32"),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            "%one = constant <i32: 1> : tile<4xi32>",
            red("pa", p, "one"),
        ]
    )
    msg = fails(body, "%a: tile<ptr<i32>>", (3,), [np.zeros(8, np.int32)])
    assert msg == (
        "<input>:7:5: error: atomic_red_view_tko: index (2) is outside the index space (2) of the partition_view "
        "(tile block (2, 0, 0))"
    )


# -- memory faults ----------------------------------------------------------------------------------


def _copy_body(t: str, p: str) -> str:
    return "\n".join(
        [
            make_tv("va", "a", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            load("x", "pa", p, ["%bx"], [4]),
            store("x", "pa", p, ["%bx"], [4]),
        ]
    )


def test_load_outside_the_allocation_names_element_block_and_address() -> None:
    # The view claims 16 elements; the array has 10 (40 bytes at 0x10000).
    t = tv([None], [1])
    p = pv([4], t)
    msg = fails(_copy_body(t, p), "%a: tile<ptr<f32>>, %n: tile<i32>", (4,), [np.zeros(10, np.float32), 16])
    assert msg == (
        "<input>:6:5: error: load_view_tko: load outside every allocation at element (2) of the tile "
        "(tile block (2, 0, 0), address 0x10028)"
    )


def test_store_outside_the_allocation() -> None:
    t = tv([None], [1])
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            "%c = constant <f32: 1.0> : tile<4xf32>",
            store("c", "pa", p, ["%bx"], [4]),
        ]
    )
    a = np.zeros(10, np.float32)
    msg = fails(body, "%a: tile<ptr<f32>>, %n: tile<i32>", (4,), [a, 16])
    assert msg == (
        "<input>:7:5: error: store_view_tko: store outside every allocation at element (2) of the tile "
        "(tile block (2, 0, 0), address 0x10028)"
    )
    assert not a.any()  # nothing was written


def test_fault_in_one_block_of_views_that_differ() -> None:
    # Per-block lengths: block b's tensor has 4 * (b + 1) elements, past the array for b = 2.
    t = tv([None], [1])
    p = pv([4], t)
    body = "\n".join(
        [
            BIDS,
            "%c1 = constant <i32: 1> : tile<i32>",
            "%c4 = constant <i32: 4> : tile<i32>",
            "%b1 = addi %bx, %c1 : tile<i32>",
            "%n = muli %b1, %c4 : tile<i32>",
            make_tv("va", "a", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p}",
            load("x", "pa", p, ["%bx"], [4]),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>", (3,), [np.zeros(10, np.float32)])
    assert msg == (
        "<input>:10:5: error: load_view_tko: load outside every allocation at element (2) of the tile "
        "(tile block (2, 0, 0), address 0x10028)"
    )


def test_gather_row_inside_the_view_but_outside_memory() -> None:
    t = tv([8, 4], [4, 1])
    g = gv([2, 4], t, 0, "zero")
    body = "\n".join(
        [
            make_tv("va", "a", [8, 4], [4, 1]),
            f"%ga = make_gather_scatter_view %va : {g}",
            "%r = constant <i32: [1, 6]> : tile<2xi32>",
            "%c = constant <i32: 0> : tile<i32>",
            gather("x", "ga", g, "r", "c", (2, 4)),
        ]
    )
    # The array holds rows 0..4 only: row 6 starts at byte 96.
    msg = fails(body, "%a: tile<ptr<f32>>", (1,), [np.zeros(20, np.float32)])
    assert msg == (
        "<input>:7:5: error: load_view_tko: load outside every allocation at element (1, 0) of the tile "
        "(tile block (0, 0, 0), address 0x10060)"
    )


def test_atomic_outside_the_allocation() -> None:
    t = tv([None], [1], "i32")
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", ["%n"], [1], "i32"),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            "%one = constant <i32: 1> : tile<4xi32>",
            red("pa", p, "one"),
        ]
    )
    a = np.zeros(6, np.int32)
    msg = fails(body, "%a: tile<ptr<i32>>, %n: tile<i32>", (2,), [a, 8])
    assert msg == (
        "<input>:7:5: error: atomic_red_view_tko: atomic access outside every allocation at element (2) of the tile "
        "(tile block (1, 0, 0), address 0x10018)"
    )
    assert not a.any()


@pytest.mark.parametrize("stride", [-1, 1 << 60])
def test_huge_stride_names_the_exact_address(stride: int) -> None:
    # An i64 stride of -1 is 2^64 - 1 read as unsigned: element 1 is 4 * (2^64 - 1) bytes
    # on. 2^60 puts element 1 at 0x10000 + 2^62, which must not pass for 0x10000.
    t = tv([4], [None])
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", [4], ["%s"], dyn="i64"),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            load("x", "pa", p, ["%bx"], [4]),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>, %s: tile<i64>", (1,), [np.zeros(16, np.float32), stride])
    address = 0x10000 + 4 * (stride % (1 << 64))
    assert msg == (
        "<input>:6:5: error: load_view_tko: load outside every allocation at element (1) of the tile "
        f"(tile block (0, 0, 0), address {address:#x})"
    )


def test_misaligned_base() -> None:
    t = tv([4], [1])
    p = pv([4], t)
    body = "\n".join(
        [
            "%ai = ptr_to_int %a : tile<ptr<f32>> -> tile<i64>",
            "%c2 = constant <i64: 2> : tile<i64>",
            "%b = addi %ai, %c2 : tile<i64>",
            "%bp = int_to_ptr %b : tile<i64> -> tile<ptr<f32>>",
            make_tv("va", "bp", [4], [1]),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            load("x", "pa", p, ["%bx"], [4]),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>", (1,), [np.zeros(16, np.float32)])
    assert msg == (
        "<input>:10:5: error: load_view_tko: load at an address not aligned to 4 bytes (the element size) "
        "at element (0) of the tile (tile block (0, 0, 0), address 0x10002)"
    )


# -- shape queries -------------------------------------------------------------------------------------


def test_tensor_dimension_that_does_not_fit_the_result() -> None:
    t = tv([None], [1])
    body = "\n".join([make_tv("va", "a", ["%n"], [1]), f"%s = get_tensor_shape %va : {t} -> tile<i8>"])
    msg = fails(body, "%a: tile<ptr<f32>>, %n: tile<i32>", (1,), [np.zeros(4, np.float32), 300])
    assert msg == (
        "<input>:4:5: error: get_tensor_shape: dimension 0 is 300, which does not fit in the result type i8 "
        "(tile block (0, 0, 0))"
    )


def test_index_space_dimension_that_does_not_fit_the_result() -> None:
    t = tv([None], [1])
    p = pv([1], t)
    body = "\n".join(
        [
            make_tv("va", "a", ["%n"], [1]),
            f"%pa = make_partition_view %va : {p}",
            f"%s = get_index_space_shape %pa : {p} -> tile<i8>",
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>, %n: tile<i32>", (1,), [np.zeros(4, np.float32), 256])
    assert msg == (
        "<input>:5:5: error: get_index_space_shape: index space dimension 0 is 256, which does not fit in the "
        "result type i8 (tile block (0, 0, 0))"
    )


# -- races -----------------------------------------------------------------------------------------------


def test_store_then_load_of_the_same_tile_without_a_token_races() -> None:
    t = tv([16], [1])
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", [16], [1]),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            "%c = constant <f32: 1.0> : tile<4xf32>",
            store("c", "pa", p, ["%bx"], [4]),
            load("x", "pa", p, ["%bx"], [4]),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>", (4,), [np.zeros(16, np.float32)])
    assert msg == (
        "<input>:8:5: error: load_view_tko: race: load_view_tko at <input>:8:5 and store_view_tko at <input>:7:5 "
        "access the same address with no token order between them (tile block (0, 0, 0), address 0x10000)"
    )


def test_token_order_and_other_blocks_tiles_do_not_race() -> None:
    t = tv([16], [1])
    p = pv([4], t)
    body = "\n".join(
        [
            make_tv("va", "a", [16], [1]),
            f"%pa = make_partition_view %va : {p}",
            BIDS,
            "%c = constant <f32: 1.0> : tile<4xf32>",
            store("c", "pa", p, ["%bx"], [4]),
            f"%x, %xt = load_view_tko weak %pa[%bx] token = %c_st : {p}, tile<i32> -> tile<4xf32>, token",
            "%c1 = constant <i32: 1> : tile<i32>",
            "%nb = xori %bx, %c1 : tile<i32>",
            load("y", "pa", p, ["%nb"], [4]),
        ]
    )  # the neighbour's tile: another block's business
    a = np.zeros(16, np.float32)
    launch(kernel(body, "%a: tile<ptr<f32>>"), grid=(4,), args=[a])
    assert np.array_equal(a, np.ones(16, np.float32))


def test_gather_store_and_load_overlapping_rows_race() -> None:
    t = tv([8, 4], [4, 1])
    g = gv([2, 4], t, 0)
    body = "\n".join(
        [
            make_tv("va", "a", [8, 4], [4, 1]),
            f"%ga = make_gather_scatter_view %va : {g}",
            "%r = constant <i32: [6, 1]> : tile<2xi32>",
            "%q = constant <i32: [0, 6]> : tile<2xi32>",
            "%c = constant <i32: 0> : tile<i32>",
            "%v = constant <f32: 2.0> : tile<2x4xf32>",
            f"%s = store_view_tko weak %v, %ga[%r, %c] : tile<2x4xf32>, {g}, tile<2xi32>, tile<i32> -> token",
            gather("x", "ga", g, "q", "c", (2, 4)),
        ]
    )
    msg = fails(body, "%a: tile<ptr<f32>>", (1,), [np.zeros(32, np.float32)])
    assert msg == (
        "<input>:10:5: error: load_view_tko: race: load_view_tko at <input>:10:5 and store_view_tko at <input>:9:5 "
        "access the same address with no token order between them (tile block (0, 0, 0), address 0x10060)"
    )
