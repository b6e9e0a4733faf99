"""`reduce` and `scan`: the combiner region becomes a module-level jitted function.

    @triton.jit
    def combine(acc0, acc1, x0, x1):       # acc: the older run, x: the newer one
        <the region's ops>                 # reduce: block args (e0, a0, e1, a1) = (x0, acc0, x1, acc1)
        return r0, r1                      # the region's `yield`

Argument order. Tile IR's body takes one pair per operand: the element (the newer value
along the dimension: a higher index; in a reverse scan, a lower one) and the accumulator
(the fold of the older ones). `reduce` pairs them (element, accumulator), `scan`
(accumulator, element): Ops.td's `scan` formula result[j] = f(result[j-1], X[j]) and
example `(%acc, %elem)`, which NVIDIA's tileiras follows (its prose says the other order;
compiler/interp/ops_reduce.py has the evidence). Triton's combine functions take all lhs
values, then all rhs values, so lhs is always the accumulator and rhs the element; only
the binding of the block arguments to them differs.

reduce, two strategies:
  * The body is one commutative op on its two arguments (addi, muli, andi, ori, xori,
    maxi, mini, addf, mulf, maxf, minf): `tl.reduce(x, dim, combine)`, Triton's fast
    reduction (in-thread, then shuffles, then shared memory across warps), on the GPU;
    under Triton's interpreter, which calls a tl.reduce's combiner once per element, the
    tree below (compiler/lower/fold.py).
  * Any other body (several ops, several operands as in argmax, non-commutative folds):
    Triton's tl.reduce does not keep the order of a fold (a thread first combines all the
    elements it holds, which need not be adjacent, and butterfly shuffles combine in both
    orders), so the pairwise tree is written out: the reduced axis is moved last and, level
    by level, reshaped to (n/2, 2) and split, and the pairs combined as
    f(element = x[2k+1], accumulator = x[2k]). That is the CPU interpreter's evaluation
    order exactly, for any associative body.
scan: `tl.associative_scan(x, dim, combine, reverse=...)`, which combines prefixes in
axis order (lhs the earlier run; for reverse=True the later one), as the body expects.

Identity. The CPU interpreter (the oracle) folds the identity in once, at the end, as
f(element = result, accumulator = identity) (in each op's argument order). That is a
no-op for a true identity except in corner cases of floats (a sum of -0.0 values with
identity +0.0 is +0.0; max/min give the canonical NaN), so it is applied the same way: one
call of the combiner on (accumulator = the identity broadcast, element = the result), in
registers. (Written as a two-element tl.reduce of join(identity, result), Triton 3.6 failed
in its layout pass on such a reduce of a loop-invariant tile inside a loop with a `break`;
found by tests/lower/fuzz.py.) It is left out for integer bodies that are a single `addi`/`muli`/`andi`/`ori`/
`xori`/`maxi`/`mini` with that op's own identity (where it changes nothing).

Values from outside. A Triton combine function sees only its arguments. A 0-d `constant`
the body uses from outside is emitted again inside the function; any other (0-d) value is
passed along as an extra operand (for tl.reduce/associative_scan a tile of copies), which
the function returns unchanged, so the body finds it under its usual name.

Exactness. Every combiner step is the body's ops, emitted by their own emitters (exact as
those are); only the order of the steps can differ from the CPU interpreter:
  * general bodies (the tree): the same order as the interpreter: bitwise equal, float
    bodies included;
  * single commutative ops: integers, maxf/minf: order-free, bitwise equal. addf/mulf:
    equal up to reassociation on the GPU (bitwise under Triton's interpreter: the tree).
    For n terms each order errs by at most about (n - 1) u sum|x_i| (u = 2^-24 for f32,
    2^-11 for f16, 2^-8 for bf16, 2^-53 for f64), so the results differ by at most
    2 (n - 1) u sum|x_i| (the tests check that bound);
  * scans: Triton's order is sequential within a thread and a prefix tree across threads,
    the interpreter's is sequential (addf/mulf) or Hillis-Steele: integers and max/min
    bitwise; float sums up to the same reassociation bound. Under Triton's interpreter,
    bitwise: a single addf/mulf runs tl.associative_scan, which that interpreter folds
    sequentially, every other body the CPU interpreter's Hillis-Steele steps (_scan).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..ir.attributes import BoolAttr, FloatAttr, IntegerAttr
from ..ir.core import Operation, Region, Value
from ..ir.types import FloatType, IntegerType, Type
from . import tltypes
from .codegen import OpEmit
from .fold import fold
from .ops_shape import permute, reshape, shape_text
from .registry import emitter


def render_region(
    e: OpEmit,
    region: Region,
    arg_names: list[str],
    on_yield: Callable[[OpEmit], None],
    prelude: Sequence[Operation] = (),
) -> list[str]:
    """The lines of `region`'s ops (the body of a function, at indent 1), emitted into a
    separate buffer after the ops of `prelude` (emitted again there); the region's `yield`
    calls `on_yield` with its OpEmit."""
    cg = e.cg
    saved = (cg.lines, cg.indent, cg.line_ops, cg.loops, cg.return_flag)
    cg.lines, cg.indent, cg.line_ops, cg.loops, cg.return_flag = [], 1, {}, [], None
    cg.yield_targets[e.op] = on_yield
    try:
        block = region.blocks[0]
        e.bind_args(block, arg_names)
        for op in prelude:
            cg.emit_op(op)
        cg.emit_block(block)
        return cg.lines
    finally:
        cg.lines, cg.indent, cg.line_ops, cg.loops, cg.return_flag = saved
        del cg.yield_targets[e.op]


def captured_values(op: Operation) -> list[Value]:
    """Values the op's regions use but do not define, in order of first use."""
    inside: set[int] = set()
    for region in op.regions:
        for block in region.blocks:
            inside.update(id(a) for a in block.arguments)
            for inner in block.ops:
                for o in inner.walk():
                    inside.update(id(r) for r in o.results)
                    for r in o.regions:
                        for b in r.blocks:
                            inside.update(id(a) for a in b.arguments)
    out: list[Value] = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                for o in inner.walk():
                    out += [v for v in o.operands if id(v) not in inside and all(v is not w for w in out)]
    return out


class Combiner:
    """The combine function of a reduce/scan region, written as a module-level helper.

    A Triton combine function sees only its arguments, so values the body uses from
    outside are handled here: splat constants are emitted again inside the function, other
    (0-d) values are carried along as extra operands of the reduction (a tile of copies,
    passed through unchanged: the function returns its lhs copy), named inside the function
    as outside."""

    def __init__(self, e: OpEmit, n: int, accumulator_first: bool = False) -> None:
        region = e.op.regions[0]
        block = region.blocks[0]
        if len(block.arguments) != 2 * n:
            raise e.error(f"the combiner takes {len(block.arguments)} arguments; {2 * n} expected")
        captured = captured_values(e.op)
        constants = [v.defining_op for v in captured if _is_constant(v)]
        carried = [v for v in captured if not _is_constant(v)]
        for v in carried:
            if tltypes.shape_of(v.type):
                raise e.error(f"the combiner uses %{v.name or '?'}, a tile of rank > 0 defined outside it")
        self.carried = [e.cg.expr(v) for v in carried]
        self.name = e.tmp("combine_" + e.op.mnemonic)
        # The block's pairs: (element, accumulator), or (accumulator, element) for a scan.
        a, x = (0, 1) if accumulator_first else (1, 0)
        acc = [e.tmp(block.arguments[2 * i + a].name or f"acc{i}") for i in range(n)]
        new = [e.tmp(block.arguments[2 * i + x].name or f"x{i}") for i in range(n)]
        unused = [e.tmp(f"{c}_rhs") for c in self.carried]
        args = []
        for i in range(n):
            args += [acc[i], new[i]] if accumulator_first else [new[i], acc[i]]

        def on_yield(y: OpEmit) -> None:
            values = y.operands
            if len(values) != n:
                raise y.error(f"the combiner yields {len(values)} values; {n} expected")
            y.line("return " + ", ".join(values + self.carried))

        body = render_region(e, region, args, on_yield, constants)
        params = acc + self.carried + new + unused
        e.helper(self.name, "@triton.jit\ndef {name}(" + ", ".join(params) + "):\n" + "\n".join(body))


def _is_constant(v: Value) -> bool:
    d = v.defining_op
    return d is not None and d.name == "cuda_tile.constant" and not tltypes.shape_of(v.type)


def identity_expr(e: OpEmit, i: int, t: Type) -> str:
    """A 0-d tensor holding operand i's identity, bit-exact."""
    attr = e.attr("identities")
    elements = getattr(attr, "elements", ())
    a = elements[i] if i < len(elements) else None
    el = tltypes.element_of(t)
    if isinstance(el, FloatType) and isinstance(a, FloatAttr):
        if tltypes.is_bits_float(el):
            return f"tl.full((), {a.bits & 0xFF}, tl.uint8)"
        width = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "f64": 64}[el.name]
        bits = a.bits << 13 if el.name == "tf32" else a.bits
        if bits >= 1 << (width - 1):
            bits -= 1 << width  # as the signed integer of the same bits
        return f"tl.full((), {bits}, tl.int{width}).to({tltypes.dtype(el)}, bitcast=True)"
    if isinstance(el, IntegerType) and isinstance(a, (IntegerAttr, BoolAttr)):
        width = el.width
        v = int(a.value) & ((1 << width) - 1)
        if width == 1:
            return f"tl.full((), {v}, tl.int1)"
        if v >= 1 << (width - 1):
            v -= 1 << width
        return f"tl.full((), {v}, {tltypes.dtype(el)})"
    raise e.error(f"identity {i} ({a}) is not a value of the operand's element type {el}")


# Integer ops whose identity, when the body is that op alone, makes the final identity step a no-op.
_NEUTRAL = {"addi": 0, "ori": 0, "xori": 0, "andi": -1, "muli": 1}


def identity_is_noop(e: OpEmit) -> bool:
    if len(e.op.operands) != 1:
        return False
    t = e.operand_types[0]
    el = tltypes.element_of(t)
    if not isinstance(el, IntegerType) or el.width == 1:
        return False
    block = e.op.regions[0].blocks[0]
    if len(block.ops) != 2:
        return False
    op, term = block.ops
    if term.name != "cuda_tile.yield" or len(op.results) != 1 or list(term.operands) != [op.results[0]]:
        return False
    if {id(v) for v in op.operands} != {id(a) for a in block.arguments} or len(op.operands) != 2:
        return False
    elements = getattr(e.attr("identities"), "elements", ())
    if not elements or not isinstance(elements[0], IntegerAttr):
        return False
    mask = (1 << el.width) - 1
    v = int(elements[0].value) & mask
    name = op.name.removeprefix("cuda_tile.")
    if name in ("addi", "muli"):
        overflow = op.attr("overflow")
        if overflow is not None and getattr(overflow, "keyword", "none") != "none":
            return False
    if name in _NEUTRAL:
        return v == _NEUTRAL[name] & mask
    if name in ("maxi", "mini"):
        signedness = op.attr("signedness")
        unsigned = getattr(signedness, "keyword", "signed") == "unsigned"
        if unsigned:
            return v == (0 if name == "maxi" else mask)
        return v == ((1 << (el.width - 1)) if name == "maxi" else mask >> 1)
    return False


def _pack(names: list[str]) -> str:
    return names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"


def _apply_identities(e: OpEmit, c: Combiner, results: list[str]) -> None:
    """results = f(element = results, accumulator = identities), elementwise (module doc)."""
    if identity_is_noop(e):
        return
    shape = tltypes.shape_of(e.result_types[0])
    ids = [identity_expr(e, i, t) for i, t in enumerate(e.operand_types)]
    if shape:
        ids = [f"tl.broadcast_to({i}, {list(shape)})" for i in ids]
    outs = results + [e.tmp("unused") for _ in c.carried]
    e.line(f"{', '.join(outs)} = {c.name}({', '.join(ids + c.carried + results + c.carried)})")


def _setup(e: OpEmit, accumulator_first: bool = False) -> tuple[list[str], int, Combiner, list[str]]:
    xs = e.operands
    if any(x is None or x == "None" for x in xs):
        raise e.error("reduce/scan operands must be tiles")
    dim = int(e.int_attr("dim", 0) or 0)
    c = Combiner(e, len(xs), accumulator_first)
    shape = tltypes.shape_of(e.operand_types[0])
    operands = xs + [f"tl.broadcast_to({v}, {list(shape)})" for v in c.carried]
    outs = [e.result_name(i) for i in range(len(xs))] + [e.tmp("unused") for _ in c.carried]
    return operands, dim, c, outs


# Bodies that are one of these ops on the two arguments are commutative (and, but for float
# rounding, associative): for them the order Triton's tl.reduce combines in does not matter.
_COMMUTATIVE = {"addi", "muli", "andi", "ori", "xori", "maxi", "mini", "addf", "mulf", "maxf", "minf"}


def single_commutative_op(e: OpEmit) -> str | None:
    """The op of a body that is one commutative op on its two arguments (else None)."""
    if len(e.op.operands) != 1:
        return None
    block = e.op.regions[0].blocks[0]
    if len(block.ops) != 2:
        return None
    op, term = block.ops
    if term.name != "cuda_tile.yield" or len(op.results) != 1 or list(term.operands) != [op.results[0]]:
        return None
    args = list(block.arguments)
    if len(op.operands) != 2 or not (
        (op.operands[0] is args[0] and op.operands[1] is args[1])
        or (op.operands[0] is args[1] and op.operands[1] is args[0])
    ):
        return None
    name = op.name.removeprefix("cuda_tile.")
    return name if name in _COMMUTATIVE else None


@emitter("reduce")
def _reduce(e: OpEmit) -> None:
    xs, dim, c, outs = _setup(e)
    if single_commutative_op(e) is not None:
        e.line(f"{outs[0]} = {fold(e, xs[0], dim, c.name)}")
    else:
        _tree_reduce(e, c, xs, dim, outs)
    _apply_identities(e, c, outs[: len(e.op.results)])


def _tree_reduce(e: OpEmit, c: Combiner, xs: list[str], dim: int, outs: list[str]) -> None:
    """outs = the pairwise-tree fold of xs along `dim`: level by level, elements (2k, 2k+1)
    become f(element = x[2k+1], accumulator = x[2k]), as the CPU interpreter folds (module
    doc). Each level reshapes the reduced axis (moved last) to (n/2, 2) and splits it."""
    shape = list(tltypes.shape_of(e.operand_types[0]))
    rank = len(shape)
    n = shape[dim]
    rest = [s for d, s in enumerate(shape) if d != dim]
    perm = [d for d in range(rank) if d != dim] + [dim]
    k = len(e.op.results)  # the operands proper (xs also holds the carried values' tiles)
    cur = []
    for x in xs[:k]:
        t = e.tmp("run")
        e.line(f"{t} = {permute(x, perm)}")
        cur.append(t)
    while n > 1:
        n //= 2
        even, odd = [], []
        for x in cur:
            a, b = e.tmp("older"), e.tmp("newer")
            e.line(f"{a}, {b} = tl.split(tl.reshape({x}, {shape_text((*rest, n, 2))}, can_reorder=False))")
            even.append(a)
            odd.append(b)
        # The carried values go in as they are (0-d) and come back unused.
        cur = [e.tmp("run") for _ in range(k)]
        unused = [e.tmp("unused") for _ in c.carried]
        e.line(f"{', '.join(cur + unused)} = {c.name}({', '.join(even + c.carried + odd + c.carried)})")
    for x, out in zip(cur, outs[:k], strict=True):
        e.line(f"{out} = {reshape(e, x, (*rest, 1), tuple(rest))}")


@emitter("scan")
def _scan(e: OpEmit) -> None:
    xs, dim, c, outs = _setup(e, accumulator_first=True)
    reverse = e.flag("reverse")
    shape = tltypes.shape_of(e.operand_types[0])
    # Under Triton's interpreter, which calls a tl.associative_scan's combiner once per
    # element, Hillis-Steele: the CPU interpreter's order for every body but one addf or mulf
    # (those it accumulates sequentially, as Triton's interpreter does: kept for them).
    split = not _sequential_in_cpu_interpreter(e) and shape[dim] > 1
    if split:
        e.line("if INTERPRETED:")
        e.cg.indent += 1
        _hillis_steele(e, c, xs[: len(e.op.results)], dim, reverse, outs)
        e.cg.indent -= 1
        e.line("else:")
        e.cg.indent += 1
    # Scanned without its dimensions of size 1 (the same elements in the same order): Triton
    # 3.6 gave a scanned 64x1 tile whose result fed a matrix product a layout its scan
    # lowering asserts on ("numScanBlocks * numParallelBlocks * ... == srcValues.size()",
    # ScanOpToLLVM.cpp; tests/lower/test_reduce.py); the 1-D scan compiles. (A 64x2 tile
    # feeding a small-K product met it too, while that product took its columns out by sums.)
    kept = [d for d, n in enumerate(shape) if n != 1 or d == dim]
    small = tuple(shape[d] for d in kept)
    scanned = outs if small == shape else [e.tmp("scanned") for _ in outs]
    xs = [reshape(e, x, shape, small) for x in xs]
    e.line(f"{', '.join(scanned)} = tl.associative_scan({_pack(xs)}, {kept.index(dim)}, {c.name}, reverse={reverse})")
    if scanned is not outs:
        for out, x in zip(outs, scanned, strict=True):
            e.line(f"{out} = {reshape(e, x, small, shape)}")
    if split:
        e.cg.indent -= 1
    _apply_identities(e, c, outs[: len(e.op.results)])


def _sequential_in_cpu_interpreter(e: OpEmit) -> bool:
    """Whether the CPU interpreter scans this body sequentially: one addf or mulf in
    round-to-nearest without flush_to_zero, on f16, bf16, f32 or f64 (compiler/interp/
    ops_reduce.py's fast path; Hillis-Steele otherwise)."""
    if single_commutative_op(e) not in ("addf", "mulf"):
        return False
    op = e.op.regions[0].blocks[0].ops[0]
    rounding = op.attr("rounding_mode")
    return (
        getattr(tltypes.element_of(e.operand_types[0]), "name", "") in ("f16", "bf16", "f32", "f64")
        and getattr(rounding, "keyword", "nearest_even") == "nearest_even"
        and op.attr("flush_to_zero") is None
    )


# _scan's path under Triton's interpreter: one helper for any tiles, axis, direction and
# combiner, as fold.py's _FOLD_TREE for folds (Python there; never compiled for a GPU).
_SCAN_STEPS = """@triton.jit
def {name}(xs, carried, axis: tl.constexpr, reverse: tl.constexpr, combine: tl.constexpr):
    # Triton's interpreter only (ops_reduce._scan): the inclusive scans of the tiles xs along
    # `axis` in the CPU interpreter's Hillis-Steele steps: for s = 1, 2, 4, ..., y[i] becomes
    # combine(accumulator = y[i - s], element = y[i]) where i >= s (reverse: y[i + s], where
    # i + s < n), one call per step on whole tiles. `carried`: the combiner's extra operands,
    # passed along (ops_reduce.Combiner). (The interpreter makes every value assigned to a
    # name a tensor: the extents stay in lists.)
    shape = [int(s) for s in xs[0].shape]
    position = tl.reshape(tl.arange(0, shape[axis]), [s if d == axis else 1 for d, s in enumerate(shape)])
    runs = list(xs)
    for step in [1 << k for k in range((shape[axis] - 1).bit_length())]:
        if reverse:
            source = tl.minimum(position + step, shape[axis] - 1)
            reached = position + step < shape[axis]
        else:
            source = tl.maximum(position - step, 0)
            reached = position >= step
        older = [tl.gather(run, tl.broadcast_to(source, shape), axis) for run in runs]
        out = combine(*older, *carried, *runs, *carried)
        new = list(out) if len(runs) + len(carried) > 1 else [out]
        runs = [tl.where(reached, n, run) for n, run in zip(new, runs)]
    return runs
"""


def _hillis_steele(e: OpEmit, c: Combiner, xs: list[str], dim: int, reverse: bool, outs: list[str]) -> None:
    """outs = the inclusive scans of xs along `dim` by _SCAN_STEPS (Triton's interpreter only)."""
    tiles, carried = (f"({', '.join(v)}{',' if len(v) == 1 else ''})" for v in (xs, c.carried))
    call = f"{e.helper('_scan_steps', _SCAN_STEPS)}({tiles}, {carried}, {dim}, {reverse}, {c.name})"
    if len(xs) == 1:
        e.line(f"{outs[0]} = {call}[0]")
    else:
        e.line(f"{', '.join(outs[: len(xs)])} = {call}")
