"""The simulated memory and the pointer ops: offset, load_ptr_tko, store_ptr_tko, alloca,
get_global; faults (outside every allocation, misaligned, constant global) and sub-byte
packing. Expectations are computed with NumPy/ml_dtypes directly."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from compiler.interp import InterpError, Machine, Memory, MemoryFault, RunOptions
from compiler.interp.memory import NIBBLE_TAG, element_address, pack_nibbles, unpack_nibbles
from compiler.runtime import find_kernel, load_module


def module(body: str, params: str = "", globals_: str = "") -> str:
    lines = "\n".join("    " + line.strip() for line in body.strip().splitlines())
    return f"cuda_tile.module @m {{\n{globals_}\n  entry @k({params}) {{\n{lines}\n    return\n  }}\n}}\n"


def pointers(name: str, param: str, elem: str, n: int, offsets: str, otype: str = "i32") -> str:
    """Lines making `%name`: tile<n x ptr<elem>> = param + offsets (a tile<n x otype>)."""
    return f"""
    %{name}_r = reshape %{param} : tile<ptr<{elem}>> -> tile<1xptr<{elem}>>
    %{name}_b = broadcast %{name}_r : tile<1xptr<{elem}>> -> tile<{n}xptr<{elem}>>
    %{name} = offset %{name}_b, %{offsets} : tile<{n}xptr<{elem}>>, tile<{n}x{otype}> -> tile<{n}xptr<{elem}>>
    """


BLOCK_OFFSETS = """
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %iota = iota : tile<8xi32>
    %eight = constant <i32: 8> : tile<i32>
    %base0 = muli %bx, %eight : tile<i32>
    %base1 = reshape %base0 : tile<i32> -> tile<1xi32>
    %base = broadcast %base1 : tile<1xi32> -> tile<8xi32>
    %idx = addi %iota, %base : tile<8xi32>
"""


class Run:
    """A machine with `args` placed (arrays) or passed as raw addresses (ints)."""

    def __init__(self, text: str, args: list, options: RunOptions | None = None) -> None:
        mod = load_module(text)
        self.entry = find_kernel(mod, None)
        self.machine = Machine(mod, options=options)
        self.values = []
        self.addresses = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                address = self.machine.memory.place(a, name=f"argument {i}")
                self.addresses.append(address)
                self.values.append(np.array([address], dtype=np.int64))
            elif isinstance(a, int):
                self.addresses.append(a)
                self.values.append(np.array([a], dtype=np.int64))
            else:
                self.addresses.append(None)
                self.values.append(np.asarray(a).reshape(1))

    def __call__(self, grid: tuple[int, ...] = (1,)) -> Run:
        self.machine.run(self.entry, grid, self.values)
        return self


def run(text: str, args: list, grid: tuple[int, ...] = (1,), options: RunOptions | None = None) -> Run:
    return Run(text, args, options)(grid)


def line_of(text: str, needle: str) -> tuple[int, int]:
    """(line, column) of the op on the line holding `needle` (1-based, as errors give)."""
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            stripped = line.lstrip()
            return n, len(line) - len(stripped) + 1
    raise AssertionError(needle)


# -- Memory on its own -----------------------------------------------------------------------


def test_place_read_write_roundtrip_without_copy():
    mem = Memory()
    a = np.arange(10, dtype=np.float32)
    base = mem.place(a)
    assert base % 256 == 0 and base >= 0x10000
    addrs = base + 4 * np.array([[9, 0], [3, 3]])
    assert mem.read(addrs, np.float32).tolist() == [[9.0, 0.0], [3.0, 3.0]]
    mem.write(base + 4 * np.array([1, 2]), np.array([-1, -2], np.float32), np.float32)
    assert a[1] == -1 and a[2] == -2  # written straight into the caller's array
    assert mem.find(base + 39) is not None and mem.find(base + 40) is None


def test_fault_outside_names_first_element_and_address():
    mem = Memory()
    base = mem.place(np.zeros(4, np.int32))
    with pytest.raises(MemoryFault) as e:
        mem.read(np.array([base, base + 12, base + 16, base - 4]), np.int32, what="load")
    assert e.value.message == "load outside every allocation"
    assert (e.value.address, e.value.position) == (base + 16, 2)
    # an element straddling the end is outside too
    with pytest.raises(MemoryFault) as e:
        mem.read(np.array([base + 14]), np.int32)
    assert e.value.address == base + 14


def test_gap_between_allocations_and_multi_allocation_access():
    mem = Memory()
    a = np.arange(4, dtype=np.int32)
    b = np.arange(10, 14, dtype=np.int32)
    pa, pb = mem.place(a), mem.place(b)
    assert pb >= pa + 16 + 256  # running off a never lands in b
    got = mem.read(np.array([pb + 4, pa, pb, pa + 12]), np.int32)
    assert got.tolist() == [11, 0, 10, 3]
    mem.write(np.array([pa + 4, pb + 8]), np.array([7, 8], np.int32), np.int32)
    assert a[1] == 7 and b[2] == 8
    with pytest.raises(MemoryFault) as e:
        mem.read(np.array([pa, pa + 16, pb]), np.int32)
    assert e.value.address == pa + 16


def test_misaligned_and_read_only():
    mem = Memory()
    base = mem.place(np.zeros(8, np.float32))
    with pytest.raises(MemoryFault) as e:
        mem.read(np.array([base, base + 2]), np.float32, what="load")
    assert e.value.message == "load at an address not aligned to 4 bytes (the element size)"
    assert e.value.address == base + 2 and e.value.kind == "alignment"
    ro = mem.place(np.zeros(4, np.int8), name="global @c", read_only=True)
    with pytest.raises(MemoryFault) as e:
        mem.write(np.array([ro + 1]), np.array([1], np.int8), np.int8, what="store")
    assert e.value.message == "store to the constant global @c"
    assert mem.read(np.array([ro]), np.int8).tolist() == [0]


def test_alloca_slab_blocks_are_separate_aligned_and_die_with_the_group():
    mem = Memory()
    addrs = mem.allocate_blocks(3, 10, alignment=512)
    assert (addrs % 512 == 0).all() and len(set(addrs.tolist())) == 3
    mem.write(addrs + 9, np.array([1, 2, 3], np.uint8), np.uint8)
    assert mem.read(addrs + 9, np.uint8).tolist() == [1, 2, 3]
    assert mem.find(int(addrs[1]) + 3).base == addrs[1]
    with pytest.raises(MemoryFault):  # past the 10 bytes of block 1: a gap
        mem.read(addrs[1:2] + 10, np.uint8)
    with pytest.raises(MemoryFault):
        mem.read(np.array([addrs[0], addrs[2] + 12]), np.uint8)
    mem.begin_group(0, 1)
    with pytest.raises(MemoryFault):  # freed: use after the group is an error
        mem.read(addrs[:1], np.uint8)


# -- sub-byte packing --------------------------------------------------------------------------


def test_nibble_order_matches_the_spec_example():
    # tensor_view<2xf4E2M1FN> holding [0.5, 1.5] is the byte 0b0011_0001
    values = np.array([0.5, 1.5], dtype=ml_dtypes.float4_e2m1fn)
    assert pack_nibbles(values).tolist() == [0x31]
    assert unpack_nibbles(np.array([0x31], np.uint8), ml_dtypes.float4_e2m1fn).astype(float).tolist() == [0.5, 1.5]
    i4 = np.array([-8, 7, -1, 2, 5], dtype=np.int8)
    assert pack_nibbles(i4).tolist() == [0x78, 0x2F, 0x05]
    assert unpack_nibbles(np.array([0x78, 0x2F, 0x05], np.uint8), np.int8, 5).tolist() == [-8, 7, -1, 2, 5]


def test_nibble_addresses_read_write():
    mem = Memory()
    data = np.array([0x21, 0x43, 0x65], np.uint8)  # codes 1, 2, 3, 4, 5, 6
    base = mem.place(data)
    addrs = element_address(np.array([base]), np.arange(-0, 6), 4)
    assert addrs.tolist() == [
        base,
        base | NIBBLE_TAG,
        base + 1,
        (base + 1) | NIBBLE_TAG,
        base + 2,
        (base + 2) | NIBBLE_TAG,
    ]
    assert mem.read(addrs, np.uint8, bits=4).tolist() == [1, 2, 3, 4, 5, 6]
    # negative and chained offsets keep the nibble
    back = element_address(element_address(np.array([base]), np.array([5]), 4), np.array([-4]), 4)
    assert back.tolist() == [base | NIBBLE_TAG]
    # writing both halves of a byte in one access keeps both
    mem.write(addrs[[1, 2, 3]], np.array([-1, 7, -8], np.int8), np.int8, bits=4)
    assert data.tolist() == [0xF1, 0x87, 0x65]
    assert mem.read(addrs, np.int8, bits=4).tolist() == [1, -1, 7, -8, 5, 6]
    with pytest.raises(MemoryFault) as e:
        mem.read(element_address(np.array([base]), np.array([6]), 4), np.uint8, bits=4)
    assert e.value.address == base + 3


def test_element_address_whole_bytes_and_i1_offsets():
    p = np.array([1000], np.int64)
    assert element_address(p, np.array([-2, 0, 3], np.int8), 32).tolist() == [992, 1000, 1012]
    assert element_address(p, np.array([True, False]), 16).tolist() == [998, 1000]  # i1 true is -1


# -- offset, load, store -----------------------------------------------------------------------


def test_offset_load_store_per_block():
    text = module(
        BLOCK_OFFSETS
        + pointers("pa", "a", "f32", 8, "idx")
        + pointers("pc", "c", "f32", 8, "idx")
        + """
        %v, %t = load_ptr_tko weak %pa : tile<8xptr<f32>> -> tile<8xf32>, token
        %w = addf %v, %v : tile<8xf32>
        %t2 = store_ptr_tko weak %pc, %w : tile<8xptr<f32>>, tile<8xf32> -> token
        """,
        "%a: tile<ptr<f32>>, %c: tile<ptr<f32>>",
    )
    a = np.random.default_rng(1).standard_normal(32).astype(np.float32)
    c = np.zeros(32, np.float32)
    run(text, [a, c], (4,))
    np.testing.assert_array_equal(c, a + a)


@pytest.mark.parametrize(
    "elem,dtype",
    [("f16", np.float16), ("i64", np.int64), ("i8", np.int8), ("bf16", ml_dtypes.bfloat16), ("f64", np.float64)],
)
@pytest.mark.parametrize("otype", ["i8", "i16", "i64"])
def test_negative_offsets_scale_by_element_size(elem, dtype, otype):
    # pointer to the last element, offsets 0, -1, ..., -7: reverses the array
    text = module(
        f"""
        %seven = constant <{otype}: 7> : tile<{otype}>
        %last = offset %a, %seven : tile<ptr<{elem}>>, tile<{otype}> -> tile<ptr<{elem}>>
        %i = iota : tile<8x{otype}>
        %zero = constant <{otype}: 0> : tile<8x{otype}>
        %neg = subi %zero, %i : tile<8x{otype}>
        """
        + pointers("pa", "last", elem, 8, "neg", otype)
        + pointers("pc", "c", elem, 8, "i", otype)
        + f"""
        %v, %t = load_ptr_tko weak %pa : tile<8xptr<{elem}>> -> tile<8x{elem}>, token
        %t2 = store_ptr_tko weak %pc, %v : tile<8xptr<{elem}>>, tile<8x{elem}> -> token
        """,
        f"%a: tile<ptr<{elem}>>, %c: tile<ptr<{elem}>>",
    )
    a = np.arange(1, 9).astype(dtype)
    c = np.zeros(8, dtype)
    run(text, [a, c])
    np.testing.assert_array_equal(c, a[::-1])


MASKED = module(
    BLOCK_OFFSETS
    + """
    %big = constant <i32: 1000000> : tile<8xi32>
    %four = constant <i32: 4> : tile<8xi32>
    %m = cmpi less_than %iota, %four, signed : tile<8xi32> -> tile<8xi1>
    %far = select %m, %idx, %big : tile<8xi1>, tile<8xi32>
    """
    + pointers("pa", "a", "f32", 8, "far")
    + pointers("pc", "c", "f32", 8, "idx")
    + """
    %pad = constant <f32: -2.5> : tile<8xf32>
    %v, %t = load_ptr_tko weak %pa, %m, %pad : tile<8xptr<f32>>, tile<8xi1>, tile<8xf32> -> tile<8xf32>, token
    %t2 = store_ptr_tko weak %pc, %v : tile<8xptr<f32>>, tile<8xf32> -> token
    %w, %t3 = load_ptr_tko weak %pa, %m : tile<8xptr<f32>>, tile<8xi1> -> tile<8xf32>, token
    %pd = offset %pc, %big : tile<8xptr<f32>>, tile<8xi32> -> tile<8xptr<f32>>
    %far_c = select %m, %pc, %pd : tile<8xi1>, tile<8xptr<f32>>
    %one = constant <f32: 1.0> : tile<8xf32>
    %x = addf %w, %one : tile<8xf32>
    %t4 = store_ptr_tko weak %far_c, %x, %m token=%t2 : tile<8xptr<f32>>, tile<8xf32>, tile<8xi1> -> token
    """,
    "%a: tile<ptr<f32>>, %c: tile<ptr<f32>>",
)


def test_masked_lanes_never_touch_memory_and_take_padding():
    a = np.arange(16, dtype=np.float32) * 3
    c = np.full(16, 99.0, np.float32)
    run(MASKED, [a, c], (2,))
    expect = np.full(16, -2.5, np.float32)
    lanes = np.arange(16) % 8 < 4
    expect[lanes] = a[lanes] + 1  # the masked store overwrote lanes 0..3 with load + 1
    np.testing.assert_array_equal(c, expect)


def test_masked_load_with_padding_keeps_active_lanes_of_every_block():
    """Per-block pointers and masks with one padding tile for all blocks: the active lanes
    hold memory (the padding, broadcast over the group, once hid them; found by
    tests/lower/fuzz.py)."""
    text = module(
        BLOCK_OFFSETS
        + pointers("pa", "a", "f32", 8, "idx")
        + pointers("pc", "c", "f32", 8, "idx")
        + """
        %la, %t0 = load_ptr_tko weak %pa : tile<8xptr<f32>> -> tile<8xf32>, token
        %zero = constant <f32: 0.0> : tile<8xf32>
        %m = cmpf greater_than ordered %la, %zero : tile<8xf32> -> tile<8xi1>
        %pad = constant <f32: -2.5> : tile<8xf32>
        %v, %t = load_ptr_tko weak %pa, %m, %pad : tile<8xptr<f32>>, tile<8xi1>, tile<8xf32> -> tile<8xf32>, token
        %t2 = store_ptr_tko weak %pc, %v : tile<8xptr<f32>>, tile<8xf32> -> token
        """,
        "%a: tile<ptr<f32>>, %c: tile<ptr<f32>>",
    )
    a = np.random.default_rng(3).standard_normal(32).astype(np.float32)
    c = np.zeros(32, np.float32)
    run(text, [a, c], (4,))
    np.testing.assert_array_equal(c, np.where(a > 0, a, np.float32(-2.5)))


def test_load_outside_every_allocation_names_block_and_address():
    # 20 floats: block 2 reads elements 16..23, 20 is the first outside
    text = module(
        BLOCK_OFFSETS
        + pointers("pa", "a", "f32", 8, "idx")
        + """
        %v, %t = load_ptr_tko weak %pa : tile<8xptr<f32>> -> tile<8xf32>, token
        """,
        "%a: tile<ptr<f32>>",
    )
    r = Run(text, [np.zeros(20, np.float32)])
    line, col = line_of(text, "load_ptr_tko")
    with pytest.raises(InterpError) as e:
        r((4,))
    base = r.addresses[0]
    assert str(e.value) == (
        f"<input>:{line}:{col}: error: load_ptr_tko: load outside every allocation "
        f"(tile block (2, 0, 0), address {base + 80:#x})"
    )


def test_masked_store_outside_names_first_active_faulting_lane():
    # block 1 stores lanes 8..15 of a 12-element array with lanes 2, 3 masked off: the
    # first faulting active lane is element 12 (lane 4).
    text = module(
        BLOCK_OFFSETS
        + pointers("pc", "c", "i32", 8, "idx")
        + """
        %two = constant <i32: 2> : tile<8xi32>
        %four = constant <i32: 4> : tile<8xi32>
        %lt = cmpi less_than %iota, %two, signed : tile<8xi32> -> tile<8xi1>
        %ge = cmpi greater_than_or_equal %iota, %four, signed : tile<8xi32> -> tile<8xi1>
        %m = ori %lt, %ge : tile<8xi1>
        %t = store_ptr_tko weak %pc, %idx, %m : tile<8xptr<i32>>, tile<8xi32>, tile<8xi1> -> token
        """,
        "%c: tile<ptr<i32>>",
    )
    r = Run(text, [np.zeros(12, np.int32)])
    line, col = line_of(text, "store_ptr_tko")
    with pytest.raises(InterpError) as e:
        r((3,))
    assert str(e.value) == (
        f"<input>:{line}:{col}: error: store_ptr_tko: store outside every allocation "
        f"(tile block (1, 0, 0), address {r.addresses[0] + 48:#x})"
    )


def test_misaligned_pointer_is_an_error():
    text = module(
        """
        %v, %t = load_ptr_tko weak %a : tile<ptr<f32>> -> tile<f32>, token
        """,
        "%a: tile<ptr<f32>>",
    )
    mem_array = np.zeros(4, np.float32)
    probe = Run(text, [mem_array])
    base = probe.addresses[0]
    r = Run(text, [base + 2])
    r.machine.memory.place(mem_array)  # the same layout: the array is at `base` again
    line, col = line_of(text, "load_ptr_tko")
    with pytest.raises(InterpError) as e:
        r()
    assert str(e.value) == (
        f"<input>:{line}:{col}: error: load_ptr_tko: load at an address not aligned to 4 bytes (the element size) "
        f"(tile block (0, 0, 0), address {base + 2:#x})"
    )


def test_i1_loads_canonicalize_and_stores_write_bytes():
    text = module(
        """
        %i = iota : tile<4xi32>
        """
        + pointers("pa", "a", "i1", 4, "i")
        + pointers("pc", "c", "i1", 4, "i")
        + """
        %v, %t = load_ptr_tko weak %pa : tile<4xptr<i1>> -> tile<4xi1>, token
        %t2 = store_ptr_tko weak %pc, %v : tile<4xptr<i1>>, tile<4xi1> -> token
        """,
        "%a: tile<ptr<i1>>, %c: tile<ptr<i1>>",
    )
    a = np.array([0, 1, 7, 255], np.uint8)
    c = np.full(4, 9, np.uint8)
    run(text, [a, c])
    assert c.tolist() == [0, 1, 1, 1]


def test_tf32_load_keeps_only_tf32_bits():
    text = module(
        """
        %v, %t = load_ptr_tko weak %a : tile<ptr<tf32>> -> tile<tf32>, token
        %t2 = store_ptr_tko weak %c, %v : tile<ptr<tf32>>, tile<tf32> -> token
        """,
        "%a: tile<ptr<tf32>>, %c: tile<ptr<tf32>>",
    )
    a = np.array([1.0 + 2.0**-20], np.float32)
    c = np.zeros(1, np.float32)
    run(text, [a, c])
    assert c[0] == 1.0


# -- sub-byte memory -----------------------------------------------------------------------------
# (f4E2M1FN is reached through views only: NVIDIA's tools refuse tiles of pointers to it)


def f4_view(name: str, base: str, n: int) -> str:
    """Lines making `%name`: a partition view of one tile of `n` f4E2M1FN elements at `base`."""
    tv = f"tensor_view<{n}xf4E2M1FN, strides=[1]>"
    return f"""
    %{name}_v = make_tensor_view %{base}, shape = [{n}], strides = [1] : {tv}
    %{name} = make_partition_view %{name}_v : partition_view<tile=({n}), {tv}>
    """


def f4_access(n: int) -> str:
    return f"partition_view<tile=({n}), tensor_view<{n}xf4E2M1FN, strides=[1]>>, tile<i32>"


@pytest.mark.parametrize("shift", [0, 1, 2, 3])
def test_sub_byte_load_store_with_odd_offsets(shift):
    # load 8 packed elements starting at element 0, store them starting at element `shift`
    text = module(
        f"""
        %z = constant <i32: 0> : tile<i32>
        %s = constant <i32: {shift}> : tile<i32>
        %c1 = offset %c, %s : tile<ptr<f4E2M1FN>>, tile<i32> -> tile<ptr<f4E2M1FN>>
        """
        + f4_view("pa", "a", 8)
        + f4_view("pc", "c1", 8)
        + f"""
        %v, %t = load_view_tko weak %pa[%z] : {f4_access(8)} -> tile<8xf4E2M1FN>, token
        %t2 = store_view_tko weak %v, %pc[%z] : tile<8xf4E2M1FN>, {f4_access(8)} -> token
        """,
        "%a: tile<ptr<f4E2M1FN>>, %c: tile<ptr<f4E2M1FN>>",
    )
    codes = np.array([1, 2, 3, 4, 5, 6, 7, 0xE], np.uint8)
    a = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)  # spec: element 2k low nibble
    c = np.full(6, 0xAA, np.uint8)
    run(text, [a, c])
    out_codes = np.empty(12, np.uint8)
    out_codes[0::2] = 0xA
    out_codes[1::2] = 0xA
    out_codes[shift : shift + 8] = codes
    assert c.tolist() == (out_codes[0::2] | (out_codes[1::2] << 4)).tolist()


def test_sub_byte_global_is_packed():
    text = module(
        """
        %z = constant <i32: 0> : tile<i32>
        %g = get_global @g : tile<ptr<f4E2M1FN>>
        """
        + f4_view("pg", "g", 4)
        + f4_view("pc", "c", 4)
        + f"""
        %v, %t = load_view_tko weak %pg[%z] : {f4_access(4)} -> tile<4xf4E2M1FN>, token
        %t2 = store_view_tko weak %v, %pc[%z] : tile<4xf4E2M1FN>, {f4_access(4)} -> token
        """,
        "%c: tile<ptr<f4E2M1FN>>",
        globals_="  global @g <f4E2M1FN: [0.5, 1.5, -6.0, 1.0]> : tile<4xf4E2M1FN>",
    )
    c = np.zeros(2, np.uint8)
    r = run(text, [c])
    assert c.tolist() == [0x31, 0x2F]  # 0.5=0001 1.5=0011, -6=1111 1.0=0010
    g = r.machine.globals["g"]
    assert r.machine.memory.read(np.array([g, g + 1]), np.uint8).tolist() == [0x31, 0x2F]


# -- globals and alloca ---------------------------------------------------------------------------


GLOBALS = """
  global @counter <i32: [10, 20, 30, 40]> : tile<4xi32>
  global constant @table <i32: [1, 2, 3, 4]> : tile<4xi32>
"""


def _counter_plus_table() -> str:
    """A kernel adding @table to @counter in place, element by element."""
    return module(
        """
    %g = get_global @counter : tile<ptr<i32>>
    %t = get_global @table : tile<ptr<i32>>
    %i = iota : tile<4xi32>
    """
        + pointers("pg", "g", "i32", 4, "i")
        + pointers("pt", "t", "i32", 4, "i")
        + """
    %a, %ta = load_ptr_tko weak %pg : tile<4xptr<i32>> -> tile<4xi32>, token
    %b, %tb = load_ptr_tko weak %pt : tile<4xptr<i32>> -> tile<4xi32>, token
    %s = addi %a, %b : tile<4xi32>
    %done = store_ptr_tko weak %pg, %s : tile<4xptr<i32>>, tile<4xi32> -> token
    """,
        globals_=GLOBALS,
    )


def test_global_read_modify_write_through_get_global():
    text = _counter_plus_table()
    r = run(text, [])
    g = r.machine.globals["counter"]
    assert r.machine.memory.read(g + 4 * np.arange(4), np.int32).tolist() == [11, 22, 33, 44]


def test_store_to_constant_global_is_an_error():
    text = module(
        """
        %t = get_global @table : tile<ptr<i32>>
        %v = constant <i32: 5> : tile<i32>
        %done = store_ptr_tko weak %t, %v : tile<ptr<i32>>, tile<i32> -> token
        """,
        globals_=GLOBALS,
    )
    r = Run(text, [])
    line, col = line_of(text, "store_ptr_tko")
    with pytest.raises(InterpError) as e:
        r((2,))
    assert str(e.value) == (
        f"<input>:{line}:{col}: error: store_ptr_tko: store to the constant global @table "
        f"(tile block (0, 0, 0), address {r.machine.globals['table']:#x})"
    )


def test_globals_belong_to_the_module_not_the_machine():
    """Spec 003 (6.2.1): a global "will be initialized exactly once". Its storage is the
    Module object's: a second Machine of one Module sees what the first one's run wrote,
    a Machine of another load of the same text starts from the initial values, and a
    constant global stays as it was."""
    text = _counter_plus_table()

    def counter_and_table(machine: Machine) -> tuple[list[int], list[int]]:
        g, t = machine.globals["counter"], machine.globals["table"]
        offsets = 4 * np.arange(4)
        return machine.memory.read(g + offsets, np.int32).tolist(), machine.memory.read(t + offsets, np.int32).tolist()

    mod = load_module(text)
    entry = find_kernel(mod, None)
    for launches in (1, 2, 3):
        machine = Machine(mod)
        machine.run(entry, (1,), [])
        assert counter_and_table(machine) == ([10 + launches, 20 + 2 * launches, 30 + 3 * launches, 40 + 4 * launches],
                                              [1, 2, 3, 4])  # fmt: skip
    other = load_module(text)
    assert counter_and_table(Machine(other)) == ([10, 20, 30, 40], [1, 2, 3, 4])
    assert counter_and_table(Machine(mod))[0] == [13, 26, 39, 52]  # unchanged by the other Module


def test_alloca_is_per_block():
    # every block writes 100*bx + i into its own alloca, reads it back, copies it out
    text = module(
        BLOCK_OFFSETS
        + """
        %buf = alloca num_elem = 8, alignment = 64 : tile<ptr<i32>>
        %hundred = constant <i32: 100> : tile<8xi32>
        %bx1 = reshape %bx : tile<i32> -> tile<1xi32>
        %bxs = broadcast %bx1 : tile<1xi32> -> tile<8xi32>
        %h = muli %bxs, %hundred : tile<8xi32>
        %val = addi %h, %iota : tile<8xi32>
        """
        + pointers("pb", "buf", "i32", 8, "iota")
        + pointers("pc", "c", "i32", 8, "idx")
        + """
        %t1 = store_ptr_tko weak %pb, %val : tile<8xptr<i32>>, tile<8xi32> -> token
        %v, %t2 = load_ptr_tko weak %pb token=%t1 : tile<8xptr<i32>> -> tile<8xi32>, token
        %t3 = store_ptr_tko weak %pc, %v : tile<8xptr<i32>>, tile<8xi32> -> token
        """,
        "%c: tile<ptr<i32>>",
    )
    c = np.zeros(40, np.int32)
    run(text, [c], (5,))
    block = np.repeat(np.arange(5), 8)
    assert c.tolist() == (block * 100 + np.tile(np.arange(8), 5)).tolist()


def test_alloca_overrun_is_an_error():
    text = module(
        """
        %buf = alloca num_elem = 4, alignment = 16 : tile<ptr<f32>>
        %i = iota : tile<8xi32>
        """
        + pointers("pb", "buf", "f32", 8, "i")
        + """
        %v, %t = load_ptr_tko weak %pb : tile<8xptr<f32>> -> tile<8xf32>, token
        """,
    )
    with pytest.raises(InterpError, match=r"load_ptr_tko: load outside every allocation \(tile block \(0, 0, 0\)"):
        run(text, [], (3,))


def test_uniform_store_with_per_block_values_leaves_the_last_blocks():
    text = module(
        """
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %done = store_ptr_tko weak %c, %bx : tile<ptr<i32>>, tile<i32> -> token
        """,
        "%c: tile<ptr<i32>>",
    )
    c = np.zeros(1, np.int32)
    run(text, [c], (6,))
    assert c[0] == 5


def test_alloca_in_a_loop_frees_the_previous_iterations_allocation():
    # iteration i: buf = alloca; buf[0] = i; acc += buf[0]. A pointer carried over from
    # the previous iteration is dead: loading through it faults.
    loop = """
        %lb = constant <i32: 0> : tile<i32>
        %ub = constant <i32: 300> : tile<i32>
        %st = constant <i32: 1> : tile<i32>
        %z = constant <i32: 0> : tile<i32>
        %first = alloca num_elem = 1, alignment = 4 : tile<ptr<i32>>
        %acc, %last = for %i in (%lb to %ub, step %st) : tile<i32>
            iter_values(%a = %z, %prev = %first) -> (tile<i32>, tile<ptr<i32>>) {
          %buf = alloca num_elem = 1, alignment = 4 : tile<ptr<i32>>
          %t1 = store_ptr_tko weak %buf, %i : tile<ptr<i32>>, tile<i32> -> token
          %v, %t2 = load_ptr_tko weak %buf token=%t1 : tile<ptr<i32>> -> tile<i32>, token
          %s = addi %a, %v : tile<i32>
          continue %s, %buf : tile<i32>, tile<ptr<i32>>
        }
        %done = store_ptr_tko weak %c, %acc : tile<ptr<i32>>, tile<i32> -> token
    """
    c = np.zeros(1, np.int32)
    r = run(module(loop, "%c: tile<ptr<i32>>"), [c], (4,))
    assert c[0] == sum(range(300))
    assert len(r.machine.memory.allocations) < 5  # one live alloca per op, not one per iteration
    stale = loop.replace("%buf token=%t1", "%prev token=%t1").replace(
        "%ub = constant <i32: 300>", "%ub = constant <i32: 3>"
    )
    with pytest.raises(InterpError, match=r"load_ptr_tko: load outside every allocation \(tile block \(0, 0, 0\)"):
        run(module(stale, "%c: tile<ptr<i32>>"), [c], (4,))
