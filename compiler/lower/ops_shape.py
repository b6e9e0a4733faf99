"""Shape ops: `broadcast`, `reshape`, `permute`, `cat`, `extract`, `insert`. All exact: they only move
elements (bits are never touched by arithmetic that could change them).

    broadcast   tl.broadcast_to(x, shape); a 0-d source is splat first. Same shape: no code.
    reshape     tl.reshape(x, shape, can_reorder=False): Triton keeps row-major element order
                unless told it may reorder (the default is False in Triton 3.6; we say it
                explicitly). To a 0-d tile: tl.reshape(x, ()) (Triton's unsplat of a one-element
                tensor); from a 0-d tile: splat to (1,) first, since Triton reshapes only blocks.
                One that only inserts extents of 1 is an index, x[:, None]; one that moves
                them, a gather by an identity index (`_unit_dims_moved`).
    permute     tl.permute(x, perm): result dimension i is source dimension perm[i], which is
                Tile IR's reading of `permutation` (NumPy's `transpose(axes)`). A permute that
                moves only extents of 1 is a reshape.
    cat         Tile shapes are powers of two, so both parts have the same shape. Triton's
                tl.cat may reorder elements (3.6 implements only can_reorder=True), so the
                concatenation is built from order-preserving ops: tl.join(lhs, rhs) adds a
                minor axis of 2 (… , n, 2), tl.permute moves it in front of `dim`
                (… , 2, n, …), and tl.reshape merges (2, n) into 2n row-major: lhs's n
                elements first, then rhs's.
    extract     The slice numbers are run-time values and Triton cannot slice a register
                tensor, so the source is reshaped to (c0, r0, c1, r1, ...) (c = number of
                slices, r = result extent per dimension) and each c axis with c > 1 is
                summed down to one element, every slice but the chosen one masked to 0, on
                the elements' bits (as integers of their width: bits, -0.0 and NaN payloads
                are kept; pointers travel as int64, i1 as int8). The slice number is taken
                modulo c (a power of two): out of range is undefined behaviour in Tile IR.
                Not tl.gather: Triton gives a gather along an axis spread over a warp's lanes
                a result in which all 32 lanes hold the same elements, and that layout
                spreads to what the slice meets (a slice broadcast as mmaf_scaled's scales
                made Triton 3.6 dequantize each 64x64 operand 32 times over: 50,000 lines of
                PTX, 8 KB of spills and a 16 s compile; fuzz seeds 111174 and 112162).
    insert      The same (c, r) form for the destination; the source, as (1, r0, 1, r1, ...),
                replaces the chosen slice through one tl.where (13.4).
"""

from __future__ import annotations

import math

from ..ir.core import BlockArgument, Value
from ..ir.types import IntegerType, PointerType, Type, memory_bits
from . import tltypes
from .codegen import OpEmit
from .fold import fold
from .ops_control import LOOPS, enclosing_loop
from .registry import emitter


def _shape(t: Type) -> tuple[int, ...]:
    return tltypes.shape_of(t)


def shape_text(shape: tuple[int, ...] | list[int]) -> str:
    """A Python tuple literal of `shape` ("(4,)", "()", "(2, 8)")."""
    shape = tuple(shape)
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(map(str, shape)) + ")"


def reshape(e: OpEmit, x: str, src: tuple[int, ...], dst: tuple[int, ...]) -> str:
    """An expression: `x` (a tensor of shape `src`) in shape `dst`, row-major order kept."""
    if tuple(src) == tuple(dst):
        return x
    if not dst:
        return f"tl.reshape({x}, ())"
    if not src:
        x = f"tl.broadcast_to({x}, (1,))"
        if tuple(dst) == (1,):
            return x
    return f"tl.reshape({x}, {shape_text(dst)}, can_reorder=False)"


def _unit_dims_moved(e: OpEmit, x: str, src: tuple[int, ...], dst: tuple[int, ...]) -> str:
    """`x` (of shape `src`) in shape `dst`, row-major order kept. Where `dst` only inserts
    extents of 1: an index (`:` and `None`s), Triton's expand_dims, which keeps the operand's
    layout (as the slice of its parent). Where other extents of 1 move (a row made a column):
    the reshape gathered by an identity index (`unanchored`), which moves the elements across
    threads. A plain reshape gets a layout of its own that the ops after it can inherit: a row
    statistic, [4] -> [4, 1], broadcast and combined with the rows, and a row made a column,
    [1, 128] -> [128, 1], converted and broadcast into a product, took layouts in which each
    thread held whole rows (tests/lower/test_shape.py: 32 KB of spills and a 70 s compile;
    fuzz seed 424497: 3.6 KB). Any other reshape stays one, and so does this one in a
    cluster. Not for a dot's batch of one (ops_mma): its result is in an MMA layout."""
    index = _unit_dims_inserted(src, dst)
    if index is not None and src:
        return f"{x}[{', '.join(index)}]"
    core = tuple(d for d in src if d != 1)
    if not core or core != tuple(d for d in dst if d != 1) or core == tuple(dst):
        return reshape(e, x, src, dst)
    if int(e.cg.options.get("num_ctas", 1)) > 1:
        # In a cluster Triton 3.9 asserts on such a gather ('GatherLoweringHelper(op).
        # isWarpLocal()', fuzz seed 190012 of --hints), and the compile then drops the cluster.
        return reshape(e, x, src, dst)
    return unanchored(e, reshape(e, x, src, dst), dst, dst.index(core[0]))


def _unit_dims_inserted(src: tuple[int, ...], dst: tuple[int, ...]) -> list[str] | None:
    """The index (`:` and `None`s) that makes `dst` of `src` by inserting extents of 1, if
    it can."""
    index, i = [], 0
    for d in dst:
        if i < len(src) and src[i] == d:
            index.append(":")
            i += 1
        elif d == 1:
            index.append("None")
        else:
            return None
    return index if i == len(src) else None


def permute(x: str, perm: list[int]) -> str:
    if perm == list(range(len(perm))):
        return x
    return f"tl.permute({x}, {shape_text(perm)})"


def concat(e: OpEmit, lhs: str, rhs: str, shape: tuple[int, ...], dim: int) -> tuple[str, tuple[int, ...]]:
    """(expression, shape) of lhs and rhs (both of `shape`) concatenated along `dim`, exact
    element order (see the module doc). Emits a temporary for the join."""
    rank = len(shape)
    joined = e.tmp("joined")
    e.line(f"{joined} = tl.join({lhs}, {rhs})")
    # The new axis (index `rank`) goes right before `dim`.
    perm = [*range(dim), rank, *range(dim, rank)]
    moved = permute(joined, perm)
    out = list(shape)
    out[dim] *= 2
    full = (*shape, 2)
    moved_shape = tuple(full[p] for p in perm)
    return reshape(e, moved, moved_shape, tuple(out)), tuple(out)


def arange_along(n: int, axis: int, rank: int) -> str:
    """tl.arange(0, n) as the extent of `axis` of a tensor of `rank` (size 1 elsewhere)."""
    index = ["None"] * rank
    index[axis] = ":"
    return f"tl.arange(0, {n})[{', '.join(index)}]"


def unanchored(e: OpEmit, x: str, shape: tuple[int, ...], axis: int | None = None) -> str:
    """`x` (of `shape`) gathered by an identity index along `axis`, or with no `axis` flattened
    (then back by an index, Triton's expand_dims, where one extent is above 1, else a
    reshape): the same tile, which Triton's layout propagation does not carry a layout into
    (a gather's result takes only its index's, and an arange has none). Which form is better
    depends on the use, measured: a row made a column (`_unit_dims_moved`) keeps its axis
    (flat, test_shape's ROW_TO_COLUMN spilled 520 bytes on sm_90, where along the axis it
    spills none), the scales of ops_mma go flat (along their K axis a 32x32x32 mmaf_scaled
    with one scale a row took 255 registers on sm_90, and fuzz seed 424314's, extracted from
    the operand's tile, spilled 264 bytes; flat: 32 and 30 registers, no spills; test_mma's
    64x64 with two a row, 170 -> 92 registers). Not ops_control's `_loop_entry` form (a
    zero index along a new axis of 1, cheaper before a loop): it left 424314's spills."""
    if axis is not None:
        identity = f"tl.broadcast_to({arange_along(shape[axis], axis, len(shape))}, {shape_text(shape)})"
        return f"tl.gather({x}, {identity}, {axis})"
    n = math.prod(shape)
    moved = f"tl.gather({reshape(e, x, shape, (n,))}, tl.arange(0, {n}), 0)"
    index = _unit_dims_inserted((n,), shape)
    if index is None or len(shape) == 1:
        return reshape(e, moved, (n,), shape)
    return f"{moved}[{', '.join(index)}]"


@emitter("broadcast")
def _broadcast(e: OpEmit) -> None:
    (x,) = e.operands
    src = _shape(e.operand_types[0])
    dst = _shape(e.result_types[0])
    if src == dst:
        e.alias(x)
        return
    e.assign(f"tl.broadcast_to({x}, {shape_text(dst)})")


@emitter("reshape")
def _reshape(e: OpEmit) -> None:
    (x,) = e.operands
    src = _shape(e.operand_types[0])
    dst = _shape(e.result_types[0])
    if src == dst:
        e.alias(x)
        return
    e.assign(_unit_dims_moved(e, x, src, dst))


# Triton 3.6 and 3.9 never finish TritonGPURemoveLayoutConversions on a loop through which a
# tile is carried and tl.permute'd: one of 64 elements or fewer whatever its start (4x4 and 8x8
# hang; found by tests/lower/fuzz.py, seed 3864 of an aimed campaign), and one of any size
# whose start is a broadcast (16x16, 32x32 and 64x64 from a row hang; a loaded 64x64 compiles;
# fuzz seed 404699, cut down by hand). Inside a loop, a permute of such a small tile, or of a
# value the loop carries, is a tl.gather of the flattened elements' bits by their source
# positions: exact for every value, NaN payloads and signed zeros included. No tl.permute, and
# Triton compiles it (a carried 64x64 f32 in 0.5 s: 72 registers, 16 KB of shared memory).
SMALL_PERMUTE = 64


_ADD = """@triton.jit
def {name}(a, b):
    return a + b
"""


def add_combine(e: OpEmit) -> str:
    """A combine function adding its two arguments, for tl.reduce (tl.sum is a jitted function
    Triton's interpreter cannot call from our kernels)."""
    return e.helper("_add", _ADD)


def _gathered_permute(e: OpEmit, x: str, t: Type, shape: tuple[int, ...], perm: list[int]) -> str:
    n = math.prod(shape)
    out = [shape[p] for p in perm]
    stride_in = [1] * len(shape)
    stride_out = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        stride_in[d] = stride_in[d + 1] * shape[d + 1]
        stride_out[d] = stride_out[d + 1] * out[d + 1]
    flat, src = e.tmp("flat"), e.tmp("source")
    e.line(f"{flat} = tl.reshape({as_integers(x, t)}, ({n},), can_reorder=False)")
    terms = [f"((tl.arange(0, {n}) // {stride_out[d]}) % {out[d]}) * {stride_in[p]}" for d, p in enumerate(perm)]
    e.line(f"{src} = {' + '.join(terms)}")
    return from_integers(f"tl.reshape(tl.gather({flat}, {src}, 0), {shape_text(out)}, can_reorder=False)", t)


def _carried(value: Value) -> bool:
    """Whether `value` is what a loop carries: an argument of a `for` or `loop` body."""
    if not isinstance(value, BlockArgument):
        return False
    region = value.owner.parent
    loop = region.parent if region is not None else None
    return loop is not None and loop.name in LOOPS


@emitter("permute")
def _permute(e: OpEmit) -> None:
    (x,) = e.operands
    perm = [int(p) for p in getattr(e.attr("permutation"), "values", ())]
    expr = permute(x, perm)
    if expr == x:
        e.alias(x)
        return
    shape = _shape(e.operand_types[0])
    if [d for d in perm if shape[d] != 1] == [d for d in range(len(shape)) if shape[d] != 1]:
        # Only extents of 1 move: row-major order is unchanged, a reshape. No tl.permute,
        # whose layout change Triton must then undo (fuzz seed 150068: a 1x1x1 permute).
        e.assign(_unit_dims_moved(e, x, shape, tuple(shape[d] for d in perm)))
        return
    if enclosing_loop(e.op) is not None and (math.prod(shape) <= SMALL_PERMUTE or _carried(e.op.operands[0])):
        expr = _gathered_permute(e, x, e.operand_types[0], shape, perm)
    e.assign(expr)


@emitter("cat")
def _cat(e: OpEmit) -> None:
    lhs, rhs = e.operands
    a = _shape(e.operand_types[0])
    b = _shape(e.operand_types[1])
    dim = int(e.int_attr("dim", 0) or 0)
    if a != b:
        # Tile extents are powers of two, so a verified cat always has equal halves.
        raise e.error(f"cat of tiles of different shapes {a} and {b} (extents must be powers of two)")
    el = tltypes.element_of(e.result_types[0])
    if isinstance(el, IntegerType) and el.width == 1:
        # Joined as int8: Triton's interpreter stacks the two i1 operands' NumPy data as it
        # finds them and failed where one came from a compare with a Python int (cuTile's
        # `ct.astile((a, b))` of scalars; 3.6 and 3.9). On the GPU two conversions.
        t = e.operand_types[0]
        expr, _ = concat(e, as_integers(lhs, t), as_integers(rhs, t), a, dim)
        e.assign(from_integers(expr, t))
        return
    expr, _ = concat(e, lhs, rhs, a, dim)
    e.assign(expr)


def as_integers(x: str, t: Type) -> str:
    """`x` as integers carrying its elements' bits, for sums in which all terms but one are
    0: floats bitcast to integers of their width (f8 and f4 codes are uint8 already),
    pointers as int64, i1 as int8, integers as they are."""
    return _integer_casts(t)[0].format(x)


def from_integers(x: str, t: Type) -> str:
    """The inverse of as_integers."""
    return _integer_casts(t)[1].format(x)


def _integer_casts(t: Type) -> tuple[str, str]:
    el = tltypes.element_of(t)
    if tltypes.is_float(t) and not tltypes.is_bits_float(t):
        return f"{{}}.to(tl.int{memory_bits(t)}, bitcast=True)", f"{{}}.to({tltypes.dtype(t)}, bitcast=True)"
    if isinstance(el, PointerType):
        return "{}.to(tl.int64)", f"{{}}.to({tltypes.dtype(t)})"
    if isinstance(el, IntegerType) and el.width == 1:
        return "{}.to(tl.int8)", "({} != 0)"
    return "{}", "{}"


def _slices(whole: tuple[int, ...], part: tuple[int, ...]) -> list[int]:
    """`whole` as (c0, r0, c1, r1, ...): axis 2d numbers the c_d slices (of extent r_d) of
    dimension d."""
    shape: list[int] = []
    for w, r in zip(whole, part, strict=True):
        shape += [w // r, r]
    return shape


def _picked(shape: list[int], d: int, index: str) -> str:
    """Where axis 2d of a `_slices` shape is at slice number `index` (modulo its count, a
    power of two: an out-of-range index is undefined behaviour in Tile IR)."""
    c = shape[2 * d]
    return f"({arange_along(c, 2 * d, len(shape))} == ({index} & {c - 1}))"


@emitter("extract")
def _extract(e: OpEmit) -> None:
    source = e.operands[0]
    indices = e.operands_of("indices")
    src_t, dst_t = e.operand_types[0], e.result_types[0]
    src = _shape(src_t)
    dst = _shape(dst_t)
    if not dst or src == dst:
        e.alias(source)
        return
    shape = _slices(src, dst)
    x = e.tmp("slices")
    e.line(f"{x} = {reshape(e, as_integers(source, src_t), src, tuple(shape))}")
    for d, idx in enumerate(indices):
        if shape[2 * d] == 1:
            continue
        # Axis 2d summed with every slice but the chosen one masked to 0.
        masked, x2 = e.tmp("masked"), e.tmp("piece")
        e.line(f"{masked} = tl.where({_picked(shape, d, idx)}, {x}, 0)")
        e.line(f"{x2} = {fold(e, masked, 2 * d, add_combine(e), keep_dims=True)}")
        shape[2 * d] = 1
        x = x2
    e.assign(from_integers(reshape(e, x, tuple(shape), dst), dst_t))


@emitter("insert")
def _insert(e: OpEmit) -> None:
    """The destination in extract's (c0, r0, c1, r1, ...) form, the source (1, r0, 1, r1, ...)
    broadcast over it, and a tl.where that keeps the source where every slice axis is at the
    chosen slice."""
    source, destination = e.operands[0], e.operands[1]
    indices = e.operands_of("indices")
    src_t, dst_t = e.operand_types[0], e.operand_types[1]
    part, whole = _shape(src_t), _shape(dst_t)
    if part == whole:
        e.alias(source)
        return
    shape = _slices(whole, part)
    lone = [1 if i % 2 == 0 else n for i, n in enumerate(shape)]
    picks = [_picked(shape, d, idx) for d, idx in enumerate(indices) if shape[2 * d] > 1]
    slices = e.tmp("slices")
    e.line(f"{slices} = {reshape(e, as_integers(destination, dst_t), whole, tuple(shape))}")
    new = reshape(e, as_integers(source, src_t), part, tuple(lone))
    put = e.tmp("put")
    e.line(f"{put} = tl.where({' & '.join(picks)}, {new}, {slices})")
    e.assign(from_integers(reshape(e, put, tuple(shape), whole), dst_t))
