"""Structured control flow: `if`, `for`, `loop` and their terminators, plus the module
structure ops.

Triton has `if`, `for` and `while` over scalars but no `break`, `continue` or early
`return` (the compiled language refuses them inside loops), so exits are flags:

    loop        brk = 0; carried = init; while brk == 0: <body>        (results pre-set)
    break       results = values; brk = 1
    continue    carried = values  (inside an `if`: also cnt = 1)
    return      ret = 1           (inside an `if` or a loop; at the kernel's end: nothing)

After an op that may have left early, the rest of its block runs under
`if (brk | cnt | ret) == 0:` (`Codegen.emit_block`). A `for` whose body may return is
written as a `while` over the induction variable, so that the return flag stops it; so is
a `for` with unsigned comparison or bounds Triton's `range` does not take (i8, i16, i1).

Variables that only some paths assign (an `if`'s results when a branch exits early, a
`loop`'s results) are set to zeros first: Triton requires a variable to exist before an
`if`/`while` that assigns it conditionally.

Two helpers work around defects of Triton 3.6 that 3.9 has not; under Triton 3.9 and newer
(the module's TRITON_BEFORE_3_9 constexpr) they are the identity.

The condition of an `if` that loads, stores or runs an atomic, or that returns, or that leaves
a loop whose body does one of those, passes through `_branch`, a `mov` in inline PTX: Triton
3.6 fails an assertion in TritonGPUCoalesce ('idx < size()') on a load or store in a branch
that its dataflow analysis proves never taken (the else of `x >= x`; a loop body after a
`break` that always happens at the first trip: fuzz seed 151085 and test_control's
DEAD_LOOP_LOAD), which it leaves without the alignment facts Coalesce asks for. It cannot see
into the `mov`, so both branches stay live. Other `if`s keep their plain condition: an opaque
`break` condition in a loop carrying 64x64 tiles cost 2 registers and 8 bytes of spills.

A tile a `while` loop carries enters it through `_loop_entry` (`entry_values`): Triton 3.6
(not 3.9) fails in TritonGPURemoveLayoutConversions ("'ttg.convert_layout' op operation
destroyed but still has uses") on a `while` whose carried tile starts in one layout and is
given a value of another through an `if` or `where`, or through a second carried value
(a tile made outside the loop and permuted, or reduced and broadcast: fuzz seeds 110202 and
150068). A `for` is not affected. The helper passes the start value through a `tl.gather`
along a new axis of extent 1 by a zero index: the same tile, whose layout comes from the
(constant) index, so that the loop's layout comes from what the loop assigns. Measured: 128
shuffles and no shared memory, once, for a 128x128 tile, where an identity index along an
existing axis (ops_mma.unanchored, better for its case) takes 512 and 2 KB. Only a start
computed from a load, an atomic or a product gets it (`_anchored`): one made from parameters,
`iota` and constants alone brings no layout into the loop, and keeps the alignment and
contiguity facts that a gather would hide (a pointer tile made by `offset`, an offset tile
made from `iota`). A pointer tile made from loaded integers (`int_to_ptr`) met the defect too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir.attributes import DenseArrayAttr
from ..ir.core import Block, BlockArgument, Operation, Region, Value
from ..ir.types import PointerType, TileType, TokenType, Type
from . import tltypes
from .codegen import BEFORE_3_9, GPU_ONLY, LOADS, PRODUCTS, OpEmit
from .ops_view import const_int
from .ptx import inline_ptx
from .registry import emitter
from .stripmine import WHOLE

_EXITS = {"cuda_tile.break", "cuda_tile.continue", "cuda_tile.return"}
LOOPS = {"cuda_tile.for", "cuda_tile.loop"}


@dataclass(slots=True)
class LoopFrame:
    op: Operation
    carried: list[str]
    results: list[str] = field(default_factory=list)
    brk: str | None = None
    cnt: str | None = None
    # (line, condition) of each `if` in the body that leaves by `break` or `continue`
    exit_ifs: list[tuple[int, str]] = field(default_factory=list)

    def flags(self) -> list[str]:
        return [f for f in (self.brk, self.cnt) if f is not None]


def zeros(t: Type) -> str:
    """An expression for a tile of type `t` filled with zeros (bits all clear)."""
    shape = list(tltypes.shape_of(t))
    e = tltypes.element_of(t)
    if isinstance(e, PointerType):
        return f"tl.full({shape}, 0, tl.int64).to({tltypes.dtype(e)})"
    return f"tl.full({shape}, 0, {tltypes.dtype(t)})"


def _exits(region: Region, count_top: bool) -> set[str]:
    """Kinds of exits (`break`, `continue`, `return`) inside `region` that leave its owner:
    `break`/`continue` outside nested loops, `return` anywhere. With `count_top` False only
    those inside an `if` count (not the terminator that ends a loop body)."""
    found: set[str] = set()

    def visit(block: Block, counted: bool, in_loop: bool) -> None:
        for op in block.ops:
            if op.name in _EXITS and counted and (op.name == "cuda_tile.return" or not in_loop):
                found.add(op.mnemonic)
            for r in op.regions:
                for b in r.blocks:
                    visit(b, counted or op.name == "cuda_tile.if", in_loop or op.name in LOOPS)

    for b in region.blocks:
        visit(b, count_top, False)
    return found


def _assign_all(e: OpEmit, names: list[str], values: list[str]) -> None:
    """`names[i] = values[i]` for all i, as a parallel assignment (a value may be a name
    that an earlier assignment of the list overwrites)."""
    pairs = [(n, v) for n, v in zip(names, values, strict=True) if n != "None" and n != v]
    if not pairs:
        return
    targets = {n for n, _ in pairs}
    # A value naming a target (itself, or inside an expression) is read before any is set.
    if len(pairs) > 1 and any(set(re.findall(r"\w+", v)) & targets for _, v in pairs):
        temps = []
        for _, v in pairs:
            t = e.tmp("tmp")
            e.line(f"{t} = {v}")
            temps.append(t)
        pairs = [(n, t) for (n, _), t in zip(pairs, temps, strict=True)]
    for n, v in pairs:
        e.line(f"{n} = {v}")


_LOOP_ENTRY = f"""@triton.jit
def {{name}}(x):
    # x, its layout left to the loop (ops_control): gathered along a new axis of 1 by a zero index.
    if {BEFORE_3_9}:
        y = tl.expand_dims(x, len(x.shape))
        x = tl.reshape(tl.gather(y, tl.full(y.shape, 0, tl.int32), len(x.shape)), x.shape)
    return x
"""

_BRANCH = f"""@triton.jit
def {{name}}(x):
    # An if's condition, through a mov Triton's analyses cannot see into (ops_control).
    if INTERPRETED:
        out = x
    elif {BEFORE_3_9}:
        y = x.to(tl.int32)
        out = {inline_ptx("mov.b32 $0, $1;", "i32", ["i32"], ["y"])} != 0  {GPU_ONLY}
    else:
        out = x
    return out
"""


def entry_values(e: OpEmit, values: list[Value], exprs: list[str]) -> list[str]:
    """The start values of a while loop's carried variables (module doc: `_loop_entry`)."""
    out = []
    for v, x in zip(values, exprs, strict=True):
        if isinstance(v.type, TileType) and tltypes.shape_of(v.type) and _anchored(v):
            x = f"{e.helper('_loop_entry', _LOOP_ENTRY)}({x})"
        out.append(x)
    return out


# Ops whose Triton counterparts fix a layout that Triton then propagates (its "anchors": loads,
# atomics, dots).
_ANCHORS = LOADS | PRODUCTS | {"cuda_tile.atomic_rmw_tko", "cuda_tile.atomic_cas_tko"}


def _anchored(v: Value) -> bool:
    """Whether `v` is computed from an anchor's result (a loaded tile, `int_to_ptr` of one, a
    product): a tile made from parameters, `iota` and constants alone has no layout to hold,
    and keeps the alignment and contiguity facts a gather would hide."""
    seen: set[int] = set()
    todo = [v]
    while todo:
        w = todo.pop()
        op = w.defining_op
        if op is None:
            # A block argument: the kernel's parameters have no layout; an enclosing loop's or
            # region's argument may hold anything its loop assigns (taken as anchored).
            region = w.owner.parent if isinstance(w, BlockArgument) else None
            owner = region.parent if region is not None else None
            if owner is not None and owner.name != "cuda_tile.entry":
                return True
            continue
        if id(op) in seen:
            continue
        seen.add(id(op))
        if op.name in _ANCHORS:
            return True
        todo.extend(op.operands)
    return False


def _set_flag(e: OpEmit, flag: str) -> None:
    e.line(f"{flag} = tl.full((), 1, tl.int1)")


def _new_flag(e: OpEmit, hint: str) -> str:
    flag = e.tmp(hint)
    e.line(f"{flag} = tl.full((), 0, tl.int1)")
    return flag


def _carried_names(e: OpEmit, block: Block, first: int) -> list[str]:
    names = []
    for arg in block.arguments[first:]:
        if isinstance(arg.type, TokenType):
            e.cg.names[arg] = "None"
            names.append("None")
        else:
            names.append(e.name_of(arg))
    return names


def _ensure_return_flag(e: OpEmit) -> None:
    if e.cg.return_flag is None:
        raise e.error("internal: early return without a return flag")


# -- module structure -------------------------------------------------------------------


@emitter("module", "entry")
def _structure(e: OpEmit) -> None:
    raise e.error("a module or kernel cannot be nested in a kernel")


@emitter("global")
def _global(e: OpEmit) -> None:
    # A module-level declaration: its storage is a hidden buffer parameter, made where
    # `get_global` names it (ops_memory).
    return None


# -- if ---------------------------------------------------------------------------------


@emitter("if")
def _if(e: OpEmit) -> bool:
    cond = e.operands[0]
    results = []
    for r in e.op.results:
        results.append("None" if isinstance(r.type, TokenType) else e.result_name(r.index))
    e.cg.yield_targets[e.op] = results
    exits = set()
    for region in e.op.regions:
        exits |= _exits(region, count_top=True)
    if exits and results:
        for name, r in zip(results, e.op.results, strict=True):
            if name != "None":
                e.line(f"{name} = {zeros(r.type)}")
    head = len(e.cg.lines)
    e.line(f"if {cond}:")
    e.emit_region(e.op.regions[0])
    if len(e.op.regions) > 1 and e.op.regions[1].blocks and e.op.regions[1].blocks[0].ops:
        e.line("else:")
        e.emit_region(e.op.regions[1])
    if "return" in exits or _touches_memory(e, e.cg.lines[head + 1 :]):
        opaque_branch(e, head, cond)
    elif exits:  # what may become dead is the rest of the loop's body: _loop_body decides
        e.cg.loops[-1].exit_ifs.append((head, cond))
    return bool(exits)


def opaque_branch(e: OpEmit, line: int, cond: str) -> None:
    """The `if` written at `line` tests `_branch(cond)` (module doc)."""
    e.cg.lines[line] = e.cg.lines[line].replace(f"if {cond}:", f"if {e.helper('_branch', _BRANCH)}({cond}):", 1)


_MEMORY = re.compile(r"\btl\.(load|store|atomic_\w+)\(")


def _touches_memory(e: OpEmit, lines: list[str]) -> bool:
    """Whether `lines` (or a helper they call) load, store or run an atomic (module doc: `_branch`)."""
    text = "\n".join(lines)
    return bool(_MEMORY.search(text)) or any(
        _MEMORY.search(source) and re.search(rf"\b{name}\(", text) for name, source in e.cg.helpers.items()
    )


@emitter("yield")
def _yield(e: OpEmit) -> None:
    owner = e.op.parent.parent.parent  # type: ignore[union-attr]
    handler = e.cg.yield_targets.get(owner)
    if handler is None:
        raise e.error(f"yield in {owner.name if owner else 'nothing'}, which the lowering does not expect")
    if callable(handler):
        handler(e)
    else:
        _assign_all(e, handler, e.operands)


# -- loops ------------------------------------------------------------------------------


def enclosing_loop(op: Operation) -> Operation | None:
    """The innermost `for` or `loop` around `op`, if any."""
    owner = op.parent_op
    while owner is not None and owner.name not in LOOPS:
        owner = owner.parent_op
    return owner


def _enclosing_loop(e: OpEmit) -> LoopFrame:
    op = enclosing_loop(e.op)
    frame = e.cg.loop_frames.get(op) if op is not None else None
    if frame is None:
        raise e.error("break/continue outside a loop")
    return frame


def _in_if(e: OpEmit) -> bool:
    owner = e.op.parent_op
    return owner is not None and owner.name == "cuda_tile.if"


@emitter("continue")
def _continue(e: OpEmit) -> bool:
    frame = _enclosing_loop(e)
    _assign_all(e, frame.carried, e.operands)
    if _in_if(e):
        assert frame.cnt is not None
        _set_flag(e, frame.cnt)
        return True
    return False


@emitter("break")
def _break(e: OpEmit) -> bool:
    frame = _enclosing_loop(e)
    _assign_all(e, frame.results, e.operands)
    assert frame.brk is not None
    _set_flag(e, frame.brk)
    return True


@emitter("return")
def _return(e: OpEmit) -> bool:
    owner = e.op.parent_op
    if owner is not None and owner.name == "cuda_tile.entry":
        return False  # the end of the kernel
    _ensure_return_flag(e)
    _set_flag(e, e.cg.return_flag)  # type: ignore[arg-type]
    return True


def _loop_body(e: OpEmit, frame: LoopFrame, block: Block, body_exits: set[str]) -> None:
    e.cg.loops.append(frame)
    e.cg.loop_frames[e.op] = frame
    e.cg.indent += 1
    if "continue" in body_exits:
        frame.cnt = _new_flag(e, "cont")
    before = len(e.cg.lines)
    e.cg.emit_block(block)
    if len(e.cg.lines) == before:
        e.line("pass")
    if frame.exit_ifs and _touches_memory(e, e.cg.lines[before:]):
        for line, cond in frame.exit_ifs:
            opaque_branch(e, line, cond)
    e.cg.indent -= 1
    e.cg.loops.pop()


def _bound_ok(t: Type) -> bool:
    e = tltypes.element_of(t)
    return getattr(e, "width", 0) in (32, 64)


def counted_for(op: Operation) -> bool:
    """Whether the `for` op is written as a Python `for` over a range (Triton's software
    pipeliner works on those), not as a while loop: no return inside it, a signed 32- or
    64-bit induction variable."""
    iv_arg = op.regions[0].blocks[0].arguments[0]
    return (
        "return" not in _exits(op.regions[0], count_top=False) and not op.flag("unsignedCmp") and _bound_ok(iv_arg.type)
    )


@emitter("for")
def _for(e: OpEmit) -> None:
    lb, ub, step = e.operands[:3]
    inits = e.operands[3:]
    block = e.op.regions[0].blocks[0]
    iv_arg = block.arguments[0]
    iv = e.name_of(iv_arg)
    carried = _carried_names(e, block, 1)
    counted = counted_for(e.op)
    _assign_all(e, carried, inits if counted else entry_values(e, e.op.operands[3:], inits))
    for r, n in zip(e.op.results, carried, strict=True):
        e.cg.names[r] = n
    body_exits = _exits(e.op.regions[0], count_top=False)
    frame = LoopFrame(e.op, carried)
    unsigned = e.flag("unsignedCmp")
    if counted:
        # Under Triton's interpreter `range` yields Python ints: cast to the bound type
        # (a no-op when compiled, where the induction variable already has it).
        raw = e.tmp(iv + "_i")
        known = const_int(e.op.operands[2])
        if known is None or not 0 < known < 1 << (tltypes.int_width(iv_arg.type) - 1):
            # A step not known positive: Tile IR runs {lb + i*step < ub}, none when lb >= ub
            # whatever the step (a step <= 0 with lb < ub is undefined), as the compiled loop
            # does; Python's `range`, under Triton's interpreter, would count down a negative
            # step (cuTile's `range(11, 1, -2)`, found by cuTile's own tests).
            ub, step = f"tl.maximum({lb}, {ub})", f"tl.maximum({step}, 1)"
        whole = e.op.attributes.get(WHOLE)
        if isinstance(whole, DenseArrayAttr):  # (stripmine.py's loop: its reader may wonder why)
            n = const_int(e.op.operands[1])
            e.cg.remark(f"the {'x'.join(map(str, whole.values))} tile in {n} slices (compiler/lower/stripmine.py)")
        if e.op in e.cg.unrolled:  # two iterations per step of the pipeline (codegen.mma_plan)
            e.line(f"for {raw} in tl.range({lb}, {ub}, {step}, loop_unroll_factor=2):")
        else:
            e.line(f"for {raw} in range({lb}, {ub}, {step}):")
        e.cg.indent += 1
        e.line(f"{iv} = tl.cast({raw}, {tltypes.dtype(iv_arg.type)})")
        e.cg.indent -= 1
        _loop_body(e, frame, block, body_exits)
        return
    # A while loop: the induction variable advances before the body, so that every path
    # through the body (early continues included) steps it.
    # The iteration space is {lb + i*step < ub}: a next value past the type's range ends
    # the loop (as the interpreter says), so narrow and unsigned counters run in int64.
    width = tltypes.int_width(iv_arg.type)
    dt = tltypes.dtype(iv_arg.type)

    def wide(x: str) -> str:
        if unsigned and width < 64:
            return f"{x}.to({tltypes.unsigned_dtype(iv_arg.type)}, bitcast=True).to(tl.int64)"
        return f"{x}.to(tl.int64)"

    nxt = e.tmp(iv + "_next")
    hi = e.tmp(iv + "_end")
    by = e.tmp(iv + "_step")
    e.line(f"{nxt} = {wide(lb)}")
    e.line(f"{hi} = {wide(ub)}")
    e.line(f"{by} = {wide(step)}")
    cond = f"{nxt} < {hi}"
    if unsigned and width == 64:
        cond = f"{nxt}.to(tl.uint64, bitcast=True) < {hi}.to(tl.uint64, bitcast=True)"
    if "return" in body_exits:
        cond = f"({cond}) & ({e.cg.return_flag} == 0)"
    e.line(f"while {cond}:")
    e.cg.indent += 1
    e.line(f"{iv} = {nxt}.to({dt})")
    if width == 64:
        # A 64-bit counter has no wider type: a step past its range wraps, and that ends the
        # loop (the next value is made the end, which the condition refuses).
        stepped = e.tmp(iv + "_stepped")
        e.line(f"{stepped} = {nxt} + {by}")
        if unsigned:
            wrapped = f"{stepped}.to(tl.uint64, bitcast=True) < {nxt}.to(tl.uint64, bitcast=True)"
        else:
            wrapped = f"{stepped} < {nxt}"
        e.line(f"{nxt} = tl.where({wrapped}, {hi}, {stepped})")
    else:
        e.line(f"{nxt} = {nxt} + {by}")
    e.cg.indent -= 1
    _loop_body(e, frame, block, body_exits)


@emitter("loop")
def _loop(e: OpEmit) -> None:
    block = e.op.regions[0].blocks[0]
    carried = _carried_names(e, block, 0)
    _assign_all(e, carried, entry_values(e, e.op.operands, e.operands))
    results = []
    for r in e.op.results:
        if isinstance(r.type, TokenType):
            e.cg.names[r] = "None"
            results.append("None")
        else:
            name = e.result_name(r.index)
            e.line(f"{name} = {zeros(r.type)}")
            results.append(name)
    body_exits = _exits(e.op.regions[0], count_top=False)
    frame = LoopFrame(e.op, carried, results)
    frame.brk = _new_flag(e, "brk")
    cond = f"{frame.brk} == 0"
    if "return" in body_exits:
        cond = f"({frame.brk} | {e.cg.return_flag}) == 0"
    e.line(f"while {cond}:")
    _loop_body(e, frame, block, body_exits)


def needs_return_flag(entry: Operation) -> bool:
    """Whether the kernel returns from inside an `if` or a loop."""
    return "return" in _exits(entry.regions[0], count_top=False)
