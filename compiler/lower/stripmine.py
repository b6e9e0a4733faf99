"""Strip-mining: a large tile computed element by element, from partition-view loads to
partition-view stores, is computed a slice at a time in a `for` over the slices.

    entry = stripmine(entry, warps)     # the entry itself, or a rewritten copy of it

TILEIR_STRIPMINE=off leaves every tile whole (for measuring what this changes).

Why. Triton gives each thread its share of a tile in registers and unrolls the work on
them: a 128x128 f32 tile at 4 warps is 128 elements a thread, and a `pow` on it compiles to
17,175 SASS instructions, 255 registers and 552 bytes of spills in 5.9 s (sm_90). NVIDIA's
tileiras loops over a thread's elements (a backward branch around the load, the op and the
store; it unrolls up to 32 elements a thread, 64x64 f32 at 4 warps, and loops from 64x128):
444 instructions, 29 registers, 0.13 s. Written here as a `for` over 4-row slices the same
kernel is 515 instructions and 32 registers without spills, compiled in 0.45 s (the whole
`tileir compile`; `benchmarks/sass.py --large`, README "Large elementwise tiles").

What is rewritten. In one block, a *chain*: ops that all compute tiles of one shape T
element by element (ELEMENTWISE, the operands of the same shape), `load_view_tko`s of T
from partition views, and `store_view_tko`s of T to partition views, connected by their
values, where

- no value of the chain is used outside it, and no load's or store's result token is used
  (nothing is ordered after the chain's memory accesses);
- the loads and stores are `weak` or `relaxed` (an acquire or release access may not be
  split: other accesses would move across it; a relaxed one orders nothing else, and each
  element stays one atomic access);
- every other tile of shape T the chain uses is a splat `constant` or a `broadcast` of a
  tile whose extent along the split dimension is 1: both are made again at the slice's
  shape inside the loop;
- a thread holds more than LARGE elements of T (at the kernel's warps).

The chain moves into a `for %strip in (0 to k)` where its last op was, each op now on a
slice of T: T with one dimension d (the outermost one that can be split k ways) divided by
k, where k makes a slice SLICE elements a thread (where an op of the chain is not CHEAP,
COSTLY_SLICE, or more to make a 128-bit access of the narrowest element the chain loads or
stores). A load or store at index I reads the slice at I with I[d] replaced by
I[d] * k + %strip, through a partition view of the same tensor view with the slice as its
tile: element t of slice j of tile I is element I[d] * T[d] + j * T[d] / k + t[d] along d,
the element the whole tile had there.

Why it is allowed. The chain's accesses are token-ordered: Tile IR orders them only where
a token says so (003 "Memory model"), and no token orders anything after them, so
interleaving the slices' loads and stores is one of the orders the program permits. Their
input tokens and every other operand are defined before the chain's last op, where the
loop goes. The chain's values are its own, so nothing outside sees a slice.

The copy is the lowering's alone: a tile that sticks out of the tensor has slices wholly
outside it, whose indices lie past the slice view's index space, undefined in Tile IR. The
slice view says so (its attribute WHOLE, the whole tile's shape), and the lowering masks
its accesses where a valid whole tile can stick out (ops_view's `_may_be_partial`: where
the extent is dynamic or the whole tile does not divide it, even where the slice does), so
such a slice's loads give the padding value and its stores write nothing, as the whole
tile's did there. A valid index I[d] has I[d] * T[d] below the dimension's extent, so
I[d] * k + %strip stays below it: the i32 arithmetic does not wrap.
"""

from __future__ import annotations

import math
import os

from ..dialect import OPS
from ..ir.attributes import DenseArrayAttr, DenseElementsAttr
from ..ir.core import Block, Operation, Region, Value
from ..ir.types import IntegerType, PartitionViewType, TileType, memory_bits

# Ops whose result element i depends on element i of each operand only (all of one shape).
ELEMENTWISE = frozenset(
    "cuda_tile." + m
    for m in (
        "absf addf atan2 ceil cos cosh divf exp exp2 floor fma fpowi log log2 maxf minf mulf negf pow remf "
        "rsqrt sin sinh sqrt subf tan tanh absi addi andi divi maxi mini mulhii muli negi ori remi shli shri "
        "subi xori cmpf cmpi select bitcast exti ftof ftoi itof trunci int_to_ptr ptr_to_int ptr_to_ptr offset"
    ).split()
)
LOAD, STORE = "cuda_tile.load_view_tko", "cuda_tile.store_view_tko"
# A thread's elements of the tile above which a chain is strip-mined (tileiras unrolls up to
# 32, see the module doc), and the elements a thread computes per slice: SLICE for a chain
# of CHEAP ops (a few instructions an element), COSTLY_SLICE for one with a longer sequence
# (a division, a square root, exp, a libdevice function), as tileiras' loops hold 28-48
# elements of `exp` and `addf` but one of `sin` and `pow`. One op on a 128x128 f32 tile, sm_90,
# Triton 3.6, registers / SASS instructions at 16, 8 and 4 elements a thread: addf 48/144,
# 40/256, 32/240 (LLVM unrolls the shorter loops); exp 40/304, 32/176, 21/104; divf 64/464,
# 44/312, 29/216; sin 30/1368, 32/696, 23/368; pow 78/2024, 48/1032, 32/528 (compile 0.32,
# 0.20, 0.15 s); atan2 67/1256, 47/736, 32/464 (tileiras: addf 267 instructions, exp 343,
# divf 299, sin 383, pow 444). Four f32 elements are one 128-bit access an operand.
LARGE = 32
SLICE = 16
COSTLY_SLICE = 4
CHEAP = frozenset(
    "cuda_tile." + m
    for m in (
        "absf addf ceil exp2 floor fma maxf minf mulf negf rsqrt subf absi addi andi maxi mini mulhii muli negi "
        "ori shli shri subi xori cmpf cmpi select bitcast exti ftof ftoi itof trunci int_to_ptr ptr_to_int "
        "ptr_to_ptr offset"
    ).split()
)
_I32 = TileType((), IntegerType(32))
ENV = "TILEIR_STRIPMINE"
# The discardable attribute of a slice view: the whole tile's shape, whose index space holds
# the valid indices (ops_view masks a slice that a valid whole tile holds past the tensor);
# the loop over the slices has it too, for the comment the lowering writes above it.
WHOLE = "tileir.strip_of"


def stripmine(entry: Operation, warps: int) -> Operation:
    """`entry`, or a copy of it with its chains strip-mined (module doc) for `warps` warps."""
    if os.environ.get(ENV) == "off" or not any(_chains(block, warps) for block in _blocks(entry)):
        return entry
    copy = entry.clone()
    copy.parent = entry.parent
    names = {v.name for op in copy.walk() for v in op.results} | {
        a.name for op in copy.walk() for r in op.regions for b in r.blocks for a in b.arguments
    }
    for block in list(_blocks(copy)):
        for chain, shape, dim, k in _chains(block, warps):
            _rewrite(block, chain, shape, dim, k, names)
    return copy


def _blocks(op: Operation):
    for inner in op.walk():
        for region in inner.regions:
            yield from region.blocks


def _shape(v: Value) -> tuple[int, ...] | None:
    t = v.type
    return t.shape if isinstance(t, TileType) else None


def _view_access(op: Operation, shape: tuple[int, ...]) -> bool:
    """A weak or relaxed load or store of a `shape` tile through a partition view of that tile."""
    if op.name not in (LOAD, STORE) or op.keyword("memory_ordering_semantics") not in ("weak", "relaxed"):
        return False
    view = op.operand("view")
    return view is not None and isinstance(view.type, PartitionViewType) and view.type.tile_shape == shape


def _node(op: Operation) -> tuple[int, ...] | None:
    """The tile shape `op` works on if it can be a link of a chain, else None."""
    if op.name in ELEMENTWISE and op.results:
        shape = _shape(op.results[0])
        if shape and all(_shape(v) == shape for v in [*op.operands, *op.results]):
            return shape
    elif op.name == LOAD and _view_access(op, _shape(op.results[0]) or ()):
        return _shape(op.results[0])
    elif op.name == STORE and _view_access(op, _shape(op.operands[0]) or ()):
        return _shape(op.operands[0])
    return None


def _splat(v: Value) -> bool:
    op = v.defining_op
    value = op.properties.get("value") if op is not None and op.name == "cuda_tile.constant" else None
    return isinstance(value, DenseElementsAttr) and len(set(value.values)) <= 1


def _broadcast_source(v: Value) -> tuple[int, ...] | None:
    op = v.defining_op
    return _shape(op.operands[0]) if op is not None and op.name == "cuda_tile.broadcast" else None


def _chains(block: Block, warps: int) -> list[tuple[list[Operation], tuple[int, ...], int, int]]:
    """The chains of `block` worth strip-mining (module doc): (ops in block order, their
    tile shape, the dimension split, the number of slices)."""
    shapes = {op: s for op in block.ops if (s := _node(op)) and _large(s, warps)}
    if not shapes:
        return []
    # Connected components of the links through the values they pass one another.
    root = {op: op for op in shapes}

    def find(op: Operation) -> Operation:
        while root[op] is not op:
            root[op] = root[root[op]]
            op = root[op]
        return op

    for op in shapes:
        for v in op.operands:
            d = v.defining_op
            # (through tiles only: a token from one access of the chain to another orders
            # the whole of one before the other, which slices would not keep)
            if d in shapes and shapes[d] == shapes[op] and isinstance(v.type, TileType):
                root[find(d)] = find(op)
    groups: dict[Operation, list[Operation]] = {}
    for op in block.ops:
        if op in shapes:
            groups.setdefault(find(op), []).append(op)
    found = []
    for chain in groups.values():
        plan = _plan(chain, shapes[chain[0]], warps)
        if plan is not None:
            found.append((chain, shapes[chain[0]], *plan))
    return found


def _large(shape: tuple[int, ...], warps: int) -> bool:
    return math.prod(shape) > LARGE * warps * 32


def _tile_operands(op: Operation) -> list[Value]:
    """The operands of a link that are tiles of the chain's shape (a load has none)."""
    return [op.operands[0]] if op.name == STORE else [] if op.name == LOAD else op.operands


def _plan(chain: list[Operation], shape: tuple[int, ...], warps: int) -> tuple[int, int] | None:
    """(the dimension to split, the number of slices) for a chain that may be strip-mined."""
    members = set(chain)
    if not any(op.name == STORE for op in chain):
        return None
    if any(
        _shape(i) != () or i.type.element != IntegerType(32)  # type: ignore[attr-defined]
        for op in chain
        if op.name in (LOAD, STORE)
        for i in op.operand_group("index")
    ):
        return None  # (the slice index is computed in i32)
    splittable = [True] * len(shape)
    for op in chain:
        for v in op.results:
            if any(user not in members for user, _ in v.uses):
                return None  # a value (or a load's or store's token) used outside
        for v in _tile_operands(op):
            if v.defining_op in members:
                continue
            source = _broadcast_source(v)
            if source is not None and len(source) == len(shape):
                splittable = [ok and s == 1 for ok, s in zip(splittable, source, strict=True)]
            elif not _splat(v):
                return None  # a whole tile from outside
    cheap = all(op.name in CHEAP for op in chain if op.name not in (LOAD, STORE))
    # A costly chain's slice: at least one 128-bit access a thread of its narrowest elements
    # in memory (8 of f16: a 128x128 f16 SiLU in 4-element slices made 64-bit accesses).
    bits = min(memory_bits(_element(op)) for op in chain if op.name in (LOAD, STORE))
    k = math.prod(shape) // (warps * 32 * (SLICE if cheap else max(COSTLY_SLICE, 128 // max(bits, 1))))
    dims = [d for d, ok in enumerate(splittable) if ok and shape[d] > 1]
    if not dims:
        return None
    dim = next((d for d in dims if shape[d] >= k), max(dims, key=lambda d: shape[d]))
    k = min(k, shape[dim])
    return (dim, k) if k >= 2 else None


def _element(access: Operation):
    """The element type a load or store moves."""
    t = (access.operands[0] if access.name == STORE else access.results[0]).type
    assert isinstance(t, TileType)
    return t.element


def _new(name: str, operands: list[Value], types: list, near: Operation, segments=None, **properties) -> Operation:
    """A new `name` op, placed (for its location and source line) at `near`."""
    op = Operation(name, OPS[name], operands, types, properties, location=near.location, span=near.span)
    op.operand_segments = segments
    return op


def _constant(value: int, near: Operation) -> Operation:
    return _new("cuda_tile.constant", [], [_I32], near, value=DenseElementsAttr(_I32, (value,), splat=True))


def _rewrite(
    block: Block, chain: list[Operation], shape: tuple[int, ...], dim: int, k: int, names: set[str | None]
) -> None:
    """Move `chain` (on tiles of `shape`) into a `for` over `k` slices along `dim` where its
    last op was. `names`: the value names taken, to which the new values' are added (the
    printed copy parses)."""

    def name(v: Value, hint: str) -> None:
        n, i = hint, 0
        while n in names:
            i += 1
            n = f"{hint}_{i}"
        names.add(n)
        v.name = n

    sliced = tuple(s // k if d == dim else s for d, s in enumerate(shape))
    last = chain[-1]
    before: list[Operation] = []  # ops to put before the loop, in order
    zero, count, one = _constant(0, last), _constant(k, last), _constant(1, last)
    for op, hint in ((zero, "first"), (count, "strips"), (one, "step")):
        name(op.results[0], hint)
    before += [zero, count, one]
    loop = _new("cuda_tile.for", [zero.results[0], count.results[0], one.results[0]], [], last, (1, 1, 1, 0))
    loop.attributes[WHOLE] = DenseArrayAttr(IntegerType(64), shape)  # (the generated loop says so)
    body = Block([_I32])
    name(body.arguments[0], "strip")
    loop.add_region(Region([body]))
    index_of = body.arguments[0]
    views: dict[Value, Value] = {}  # partition view -> its slice view
    moved: dict[Value, Value] = {}  # an index along `dim` -> index * k + %strip
    mapping: dict[Value, Value] = {}

    def slice_view(view: Value) -> Value:
        if view not in views:
            t = view.type
            assert isinstance(t, PartitionViewType)
            made = view.defining_op
            assert made is not None
            vt = PartitionViewType(sliced, t.tensor_view, t.dim_map, t.padding)
            op = _new("cuda_tile.make_partition_view", [made.operands[0]], [vt], made)
            op.attributes[WHOLE] = DenseArrayAttr(IntegerType(64), shape)
            name(op.results[0], f"{view.name or 'view'}_strip")
            before.append(op)
            views[view] = op.results[0]
        return views[view]

    def slice_index(i: Value, near: Operation) -> Value:
        if i not in moved:
            op = _new("cuda_tile.muli", [i, count.results[0]], [i.type], near)
            name(op.results[0], f"{i.name or 'index'}_x{k}")
            before.append(op)
            add = _new("cuda_tile.addi", [op.results[0], index_of], [i.type], near)
            name(add.results[0], f"{i.name or 'index'}_strip")
            body.append(add)
            moved[i] = add.results[0]
        return moved[i]

    def operand(v: Value, near: Operation) -> Value:
        if v in mapping:
            return mapping[v]
        t = v.type
        assert isinstance(t, TileType)
        made = v.defining_op
        assert made is not None
        if made.name == "cuda_tile.constant":
            value = made.properties["value"]
            assert isinstance(value, DenseElementsAttr)
            st = TileType(sliced, t.element)
            op = _new("cuda_tile.constant", [], [st], made, value=DenseElementsAttr(st, value.values[:1], splat=True))
        else:  # a broadcast of a tile of extent 1 along `dim`
            op = _new("cuda_tile.broadcast", [made.operands[0]], [TileType(sliced, t.element)], made)
        name(op.results[0], f"{v.name or 'v'}_strip")
        body.append(op)
        mapping[v] = op.results[0]
        return mapping[v]

    for op in chain:
        for v in _tile_operands(op):
            if v not in mapping:
                operand(v, op)  # a splat or broadcast from outside, made again at the slice's shape
        copy = op.clone(mapping)
        if op.name in (LOAD, STORE):
            view = op.operand("view")
            assert view is not None
            first = 1 if op.name == STORE else 0
            indices = op.operand_group("index")
            operands = list(copy.operands)
            operands[first] = slice_view(view)
            operands[first + 1 : first + 1 + len(indices)] = [
                slice_index(i, op) if d == dim else i for d, i in enumerate(indices)
            ]
            copy.set_operands(operands)
        for r in copy.results:
            if isinstance(r.type, TileType) and r.type.shape == shape:
                r.type = TileType(sliced, r.type.element)
        body.append(copy)
    body.append(_new("cuda_tile.continue", [], [], last, (0,)))
    members = set(chain)
    at = block.ops.index(last)
    for op in chain:
        op.set_operands([])
    block.ops[at : at + 1] = [*before, loop]
    for op in [*before, loop]:
        op.parent = block
    block.ops[:] = [op for op in block.ops if op not in members]
