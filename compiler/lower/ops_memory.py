"""Pointer memory ops: `offset`, `load_ptr_tko`, `store_ptr_tko`, `atomic_rmw_tko`,
`atomic_cas_tko`, `alloca` and `get_global`; and the memory-ordering helpers the view
accesses (`ops_view`) share.

Elements in memory. A tile of i1 lives as one byte per element (loaded as int8, true
where the byte is non-zero; stored as 0/1); the f8 formats travel as uint8 bits; tf32
values are read from f32 memory with the low 13 mantissa bits cleared and any NaN made
the quiet NaN 0x7FC00000, as the interpreter holds tf32 tiles. All exact.

f4E2M1FN (the one 4-bit type memory holds; tltypes): its pointers are nibble addresses N;
a load reads the byte at N >> 1 (with the load's ordering) and takes its nibble (N & 1: the
upper one); masked-off lanes take the padding's code. A store cannot write half a byte, and
the other half may be
another lane's or another tile block's element: each lane replaces its nibble in the
aligned 32-bit word around it by compare-and-swap, again until its swap finds the word it
read (a loop while any lane is pending; slow, exact). Lanes writing the same word each
keep the others' nibbles; two writing the same nibble leave one of their values, as plain
stores do. The launchers pad their packed copies to whole words (and device allocations
are 256-byte aligned, so a word around an element lies in its allocation). A view whose
tiles run along a unit-stride dimension last, an even number of elements long, first
tries pairs: where every pair of neighbours starts on a byte and is masked alike, the
tile is stored as whole bytes (`tl.store`), else by the loop. A relaxed or release store
is the loop alone, its compare-and-swap carrying the ordering and scope. Globals and alloca
slabs of 4-bit elements are packed bytes, padded to whole words.
`ptr_to_int`/`int_to_ptr`/`ptr_to_ptr` turn N into the interpreter's pointer (byte
address, bit 62 for the upper nibble) and back.

    offset         `ptr + off` (Triton scales by the pointee size); i8/i16 offsets are
                   sign-extended to int32 first, an i1 offset is read as signed (-1/0).
    load_ptr_tko   `tl.load(ptr, mask, other)`: masked-off lanes take `paddingValue`, or
                   zero bits without one (what the interpreter loads; the spec leaves
                   them undefined).
    store_ptr_tko  `tl.store(ptr, value, mask)`.

Memory ordering (loads and stores, through pointers or views; scope tl_blk → cta,
device → gpu, sys → sys):

    weak           plain `tl.load` / `tl.store` (`ld.global` / `st.global`).
    relaxed load   `tl.load(..., volatile=True)`: `ld.volatile`, which PTX defines as
                   `ld.relaxed.sys` — at least as strong as any relaxed scope. Runs under
                   Triton's interpreter.
    acquire load   the relaxed load, then `fence.acq_rel.<scope>` once a thread (`ordered`:
                   PTX's acquire pattern; Triton 3.6 has no acquire load); under Triton's
                   interpreter, which runs one tile block after another, no fence.
    relaxed store  inline PTX `st.relaxed.<scope>.global` per element, predicated by the
                   mask; under Triton's interpreter a plain store (a split helper).
    release store  `fence.acq_rel.<scope>` once a thread, then the relaxed store (PTX's
                   release pattern).

Atomics. `atomic_rmw_tko` → `tl.atomic_add/and/or/xor/max/min/xchg`, relaxed at the op's
`scope=`, after a release fence (release, acq_rel) and before an acquire one (acquire,
acq_rel), as ordered stores and loads; umax/umin act on the pointer
reinterpreted as unsigned; xchg of f32/f64 exchanges the bits as integers (Triton's
interpreter refuses float xchg). Lanes masked off return zero (the interpreter's choice
for an unspecified value). `addf` on f16/bf16/f32/f64 is `atom.add` (f16: `.noftz`;
bf16 on sm_80: Triton's CAS loop), each update rounded to nearest-even — exact, except
that PTX documents `atom.add.f32` as flushing subnormal inputs and results to zero, so
f32 `addf` may differ from the interpreter where an input or a sum is subnormal.
`atomic_cas_tko` compares and swaps the bits (integers), so NaNs and -0.0 compare
bitwise, as the spec says. Triton's `atomic_cas` has no mask: a masked-off lane is sent
to a hidden 8-byte scratch buffer with cmp == val (no visible effect) and returns its
`cmp`, as the interpreter does. Duplicate addresses inside one tile are applied in an
order the hardware picks; the final memory of commutative modes does not depend on it,
the returned old values do.

`alloca` gives each tile block a slab of a hidden buffer parameter (symbol
`alloca <op location>`, `Param.per_block`: `len(data)` bytes per block, slabs `len(data)` apart,
indexed by the linear block id): the launcher allocates `len(data) * number of blocks` bytes for
it.

`get_global` makes the global's storage a hidden buffer parameter holding its initial
bytes (read-only for `constant` globals); the launcher passes the same storage to every
launch of one `Module` object (initialized once, spec 003 6.2.1), a fresh one to another Module.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..ir.attributes import SymbolRefAttr
from ..ir.types import I8, FloatType, IntegerType, PointerType, Type, memory_bits
from . import tltypes
from .codegen import GPU_ONLY, OpEmit
from .fold import fold
from .ops_float import fence
from .ptx import inline_ptx
from .registry import emitter

SCOPES = {"tl_blk": "cta", "device": "gpu", "sys": "sys"}
_ASM_TYPE = {8: "u8", 16: "b16", 32: "b32", 64: "b64"}


# -- element types in memory ---------------------------------------------------------------


def pointee(t: Type) -> Type:
    """The pointee of a pointer tile type."""
    e = tltypes.element_of(t)
    assert isinstance(e, PointerType)
    return e.pointee


def initial_bytes(value) -> bytes:
    """The bytes of a `global`'s initial value as they lie in memory (the interpreter's layout)."""
    from ..interp.memory import memory_image  # NumPy: only for a kernel with globals

    return memory_image(value).tobytes()


def int_dtype(bits: int) -> str:
    return f"tl.int{bits}"


def is_i1(element: Type) -> bool:
    return tltypes.element_of(element) == IntegerType(1)


def is_tf32(element: Type) -> bool:
    e = tltypes.element_of(element)
    return isinstance(e, FloatType) and e.name == "tf32"


def to_memory(expr: str, element: Type) -> str:
    """A tile value as the elements a store writes (i1 → a 0/1 byte)."""
    return f"{expr}.to(tl.int8)" if is_i1(element) else expr


def from_memory(e: OpEmit, expr: str, element: Type) -> str:
    """Loaded memory elements as tile values (i1: non-zero; tf32: low bits cleared)."""
    if is_i1(element):
        return f"({expr} != 0)"
    if is_tf32(element):
        raw = e.tmp("raw")
        e.line(f"{raw} = {expr}")
        cut = f"({raw}.to(tl.uint32, bitcast=True) & 0xFFFFE000).to(tl.float32, bitcast=True)"
        return f"tl.where({raw} != {raw}, tl.full((), 0x7FC00000, tl.int32).to(tl.float32, bitcast=True), {cut})"
    return expr


def bits_literal(bits: int, width: int, dtype: str) -> str:
    """A 0-d tensor of `dtype` holding the bit pattern `bits` (exact for any value,
    -0.0 and NaN payloads included: Triton's interpreter misreads a `-0.0` literal)."""
    if dtype == "tl.uint8":
        return f"tl.full((), {bits & 0xFF}, tl.uint8)"
    signed = bits - (1 << width) if bits >> (width - 1) else bits
    if dtype.startswith("tl.int"):
        return f"tl.full((), {signed}, {dtype})"
    return f"tl.full((), {signed}, tl.int{width}).to({dtype}, bitcast=True)"


# -- memory ordering -------------------------------------------------------------------------


def ordering(e: OpEmit) -> tuple[str, str]:
    """(semantics keyword, Triton scope) of the op; weak ops get scope "gpu" (unused)."""
    sem = e.keyword("memory_ordering_semantics", "weak") or "weak"
    scope = SCOPES.get(e.keyword("memory_scope", "device") or "device", "gpu")
    return sem, scope


# PTX's release and acquire patterns. An ordered access of a tile is many accesses a thread;
# as st.release / ld.acquire / atom.acq_rel each would carry its own fence (a MEMBAR, an L1
# invalidation: 128 of either for a 128x128 f32 tile on 4 warps). The PTX memory model lets a
# release be a fence.acq_rel followed by strong writes, and an acquire strong reads followed by
# a fence.acq_rel: so the tile's accesses are relaxed (strong) ones between at most two fences
# a thread. (Elements of one tile op are unordered among themselves anyway: threads run them.)
# The fences are inline PTX with side effects, in program order with the accesses around
# them; Triton's interpreter runs one tile block at a time: no fences there.
_FENCE = inline_ptx("fence.acq_rel.SCOPE; mov.b32 $0, $1;", "i32", ["i32"], ["tl.full((), 0, tl.int32)"], pure=False)
_FENCE_ASM = f"{_FENCE}  {GPU_ONLY}"
_RELEASE = f"""@triton.jit
def {{name}}():
    # fence.acq_rel.SCOPE on the GPU: PTX's release pattern, strong writes after it
    if not INTERPRETED:
        {_FENCE_ASM}
"""
_ACQUIRED = f"""@triton.jit
def {{name}}(x):
    # x, read by strong accesses, then fence.acq_rel.SCOPE on the GPU: PTX's acquire pattern
    if not INTERPRETED:
        {_FENCE_ASM}
    return x
"""


def ordered(e: OpEmit, sem: str, scope: str) -> tuple[str, Callable[[str], str]]:
    """For an access of ordering `sem` at `scope` (above): emits the release fence it needs
    first (release, acq_rel); returns the ordering of the accesses themselves (relaxed; weak
    stays weak) and what their result passes through (acquire, acq_rel: the acquire fence)."""
    if sem in ("weak", "relaxed"):
        return sem, _same
    if sem in ("release", "acq_rel"):
        e.line(f"{e.helper(f'_release_{scope}', _RELEASE.replace('SCOPE', scope))}()")
    if sem in ("acquire", "acq_rel"):
        helper = e.helper(f"_acquired_{scope}", _ACQUIRED.replace("SCOPE", scope))
        return "relaxed", lambda result: f"{helper}({result})"
    return "relaxed", _same


def _same(result: str) -> str:
    return result


def _broadcast(expr: str, shape: tuple[int, ...]) -> str:
    return f"tl.broadcast_to({expr}, {list(shape)})" if shape else expr


def load_memory(
    e: OpEmit,
    ptr: str,
    mask: str | None,
    other: str | None,
    element: Type,
    shape: tuple[int, ...],
    sem: str = "weak",
    scope: str = "gpu",
) -> str:
    """An expression loading memory elements (memory dtype; 4-bit elements: their codes) at
    `ptr` (a tensor of `shape`, or a scalar pointer when shape is ()), `other` where `mask`
    is false."""
    if tltypes.is_nibble(element):
        return _load_nibbles(e, ptr, mask, other, shape, sem, scope)
    if sem in ("weak", "relaxed"):
        args = [ptr]
        select = None
        if mask is not None:
            if other is not None and math.prod(shape) == 1 and isinstance(element, FloatType):
                # Triton 3.6's interpreter drops an `other` of one element that is false as a
                # bool (it tests `if other`): a -0.0 padding came back +0.0. Selected after.
                select, other = other, None
            args += [f"mask={mask}", f"other={other if other is not None else 0}"]
        if sem == "relaxed":
            args.append("volatile=True")
        load = f"tl.load({', '.join(args)})"
        return load if select is None else f"tl.where({mask}, {load}, {select})"
    if sem != "acquire":
        raise e.error(f"a load cannot have {sem} ordering")
    # Relaxed loads are volatile ones (ld.volatile: relaxed at sys scope, as strong as any
    # scope's), which Triton can widen. (An expression: callers place it in branches.)
    _, acquired = ordered(e, sem, scope)
    return acquired(load_memory(e, ptr, mask, other, element, shape, "relaxed", scope))


def _load_nibbles(
    e: OpEmit, addr: str, mask: str | None, other: str | None, shape: tuple[int, ...], sem: str, scope: str
) -> str:
    """The codes (uint8) of the f4E2M1FN elements at nibble addresses `addr`: each lane loads
    its byte with the load's ordering (an acquire one as for a byte: volatile, then a fence)."""
    byte = e.tmp("byte")
    loaded = load_memory(e, f"({addr} >> 1).to(tl.pointer_type(tl.uint8))", mask, None, _BYTE, shape, sem, scope)
    e.line(f"{byte} = ({loaded}).to(tl.uint8, bitcast=True)")
    code = f"(({byte} >> (({addr} & 1) * 4).to(tl.uint8)) & 0xF)"
    if mask is None:
        return code
    return f"tl.where({mask}, {code}, {other if other is not None else 0})"


_BYTE = I8  # what a lane of an f4E2M1FN access loads: the byte holding its element

_ANY_I32 = """@triton.jit
def {name}(a, b):
    return a | b
"""


def store_nibble_pairs(
    e: OpEmit, addr: str, value: str, mask: str | None, shape: tuple[int, ...], sem: str, scope: str
) -> None:
    """`_store_nibbles` for a tile whose last dimension (even) runs over consecutive nibbles:
    as whole bytes when every pair of neighbours along it starts on a byte and is masked
    alike (module doc). An ordered store always swaps (the swap carries the ordering)."""
    if sem != "weak":
        _store_nibbles(e, addr, value, mask, shape, sem, scope)
        return
    pairs = (*shape[:-1], shape[-1] // 2, 2)
    lo, hi, vlo, vhi = e.tmp("n_lo"), e.tmp("n_hi"), e.tmp("v_lo"), e.tmp("v_hi")
    e.line(f"{lo}, {hi} = tl.split(tl.reshape({addr}, {list(pairs)}, can_reorder=False))")
    e.line(f"{vlo}, {vhi} = tl.split(tl.reshape({value}, {list(pairs)}, can_reorder=False))")
    odd = f"({lo} & 1) != 0"
    m = None
    if mask is not None:
        mlo, mhi = e.tmp("m_lo"), e.tmp("m_hi")
        full = f"tl.broadcast_to({mask}, {list(shape)})"
        e.line(f"{mlo}, {mhi} = tl.split(tl.reshape({full}, {list(pairs)}, can_reorder=False))")
        odd = f"({odd}) | ({mlo} != {mhi})"
        m = mlo
    e.line(f"if {_any(e, odd, pairs[:-1])} == 0:")
    stored = f"({vlo} | ({vhi} << 4)).to(tl.uint8)"
    e.line(f"    tl.store(({lo} >> 1).to(tl.pointer_type(tl.uint8)), {stored}{f', mask={m}' if m else ''})")
    e.line("else:")
    e.cg.indent += 1
    _store_nibbles(e, addr, value, mask, shape, sem, scope)
    e.cg.indent -= 1


def _any(e: OpEmit, flags: str, shape: tuple[int, ...]) -> str:
    """A scalar: non-zero where any of the int1 `flags` (a tensor of `shape`) holds. (A fold
    with a jitted combiner: Triton's interpreter cannot call `tl.max`, a JITFunction; over
    every axis at once (None), in whatever order: Triton 3.9 deprecates the reordering reshape
    that would flatten it here.)"""
    return fold(e, f"({flags}).to(tl.int32)", 0 if len(shape) == 1 else None, e.helper("_any_i32", _ANY_I32))


def _store_nibbles(
    e: OpEmit, addr: str, value: str, mask: str | None, shape: tuple[int, ...], sem: str, scope: str
) -> None:
    """Statements storing the f4E2M1FN codes `value` at nibble addresses `addr` (module doc).
    The compare-and-swap is relaxed: at the store's scope, after the release fence of a
    release store (`ordered`); at gpu scope for a weak store (atomic, so that lanes sharing a
    word each keep theirs)."""
    if sem == "weak":
        cas_sem, cas_scope = "relaxed", "gpu"
    else:
        cas_sem, _ = ordered(e, sem, scope)  # (emits the release fence)
        cas_scope = scope
    scratch = e.cg.buffer("cas scratch", "*i64", bytes(8), False, hint="cas_scratch")
    word, keep, put, pending = e.tmp("word"), e.tmp("keep"), e.tmp("put"), e.tmp("pending")
    old, new, prev = e.tmp("old"), e.tmp("new"), e.tmp("prev")
    e.line(f"{word} = (({addr} >> 1) & -4).to(tl.pointer_type(tl.int32))")
    shift = f"((({addr} >> 1) & 3) * 8 + ({addr} & 1) * 4).to(tl.int32)"
    e.line(f"{keep} = ~(tl.full((), 15, tl.int32) << {shift})")
    e.line(f"{put} = ({value}.to(tl.int32) & 15) << {shift}")
    # (a mask may be partial along some dimensions: the loop needs every lane's flag)
    e.line(f"{pending} = {_broadcast(mask, shape) if mask is not None else f'tl.full({list(shape)}, 1, tl.int1)'}")
    target = e.tmp("target")
    e.line(f"while {_any(e, pending, shape)} != 0:")
    # Lanes done (or masked off) work on a private scratch word: they read it and swap 0 for 0.
    e.line(f"    {target} = tl.where({pending}, {word}, {scratch}.to(tl.pointer_type(tl.int32), bitcast=True))")
    # The word is read by an atomic, not a load: Triton has one thread of those holding a tile
    # element issue an atomic and hands its result to the others, so every copy of `old`, and
    # of `pending` computed from it, is the same. With a load each copy read the word at its own
    # time; when another block changed it in between, warps disagreed about `pending` and left
    # the loop apart (which holds a barrier): on an H200 a nibble was lost (fuzz seed 61205).
    e.line(f"    {old} = tl.atomic_or({target}, 0, sem='relaxed', scope={cas_scope!r})")
    e.line(f"    {new} = tl.where({pending}, ({old} & {keep}) | {put}, 0)")
    e.line(f"    {prev} = tl.atomic_cas({target}, {old}, {new}, sem={cas_sem!r}, scope={cas_scope!r})")
    e.line(f"    {pending} = {pending} & ({prev} != {old})")


def store_memory(
    e: OpEmit,
    ptr: str,
    value: str,
    mask: str | None,
    element: Type,
    shape: tuple[int, ...],
    sem: str = "weak",
    scope: str = "gpu",
) -> None:
    """Statements storing the memory elements `value` at `ptr` where `mask` holds."""
    if tltypes.is_nibble(element):
        _store_nibbles(e, ptr, value, mask, shape, sem, scope)
        return
    if sem == "weak":
        m = f", mask={mask}" if mask is not None else ""
        e.line(f"tl.store({ptr}, {value}{m})")
        return
    if sem not in ("relaxed", "release"):
        raise e.error(f"a store cannot have {sem} ordering")
    sem, _ = ordered(e, sem, scope)
    bits = memory_bits(element)
    ity = int_dtype(bits)
    iptr = f"{ptr}.to(tl.pointer_type({ity}), bitcast=True)"
    mem = tltypes.memory_dtype(element)
    ivalue = value if mem == ity else f"{value}.to({ity}, bitcast=True)"
    # st.relaxed: inline PTX; under Triton's interpreter (one tile block at a time) a plain
    # store. (Not an atomic exchange, a morally strong store too: its returned old values
    # cost a 128x128 f32 tile ~50 registers and spills, and atom.exch goes through L2 where
    # st.relaxed is a plain store, STG.E.STRONG as tileiras' own. Threads holding copies of
    # one element each store it: the same value, so memory ends the same.)
    st = f"st.{sem}.{scope}.global.{_ASM_TYPE[bits]}"
    wide = f"{ivalue}.to(tl.int16)" if bits == 8 else ivalue  # (8-bit values travel in 16-bit registers)
    asm = f"{{ .reg .pred %p; setp.ne.s32 %p, $1, 0; @%p {st} [$2], $3; mov.b32 $0, 0; }}"
    gpu = inline_ptx(asm, "i32", ["i32", "ptr", f"i{max(bits, 16)}"], ["m", "p", "v"], pure=False)
    helper = e.split_helper(
        f"_st_{sem}_{scope}_b{bits}",
        "tl.store(p, v, mask=m != 0)",  # (an 8-bit value travels widened: the store narrows it again)
        f"{gpu}  {GPU_ONLY}",
        f"{st} on the GPU, a plain store under Triton's interpreter (one tile block at a time)",
        "m, p, v",
    )
    args = [_broadcast(f"({mask}).to(tl.int32)" if mask is not None else "tl.full((), 1, tl.int32)", shape),
            _broadcast(iptr, shape), _broadcast(wide, shape)]  # fmt: skip
    e.line(f"{helper}({', '.join(args)})")


# -- offset -------------------------------------------------------------------------------


@emitter("offset")
def _offset(e: OpEmit) -> None:
    ptr = e.operands[0]
    off = e.cg.expr(e.op.operands[1])
    t = e.operand_types[1]
    width = tltypes.int_width(t)
    if width == 1:
        off = f"tl.where({off}, -1, 0)"  # i1 read as a signed integer: true is -1
    elif width < 32:
        off = f"{off}.to(tl.int32)"
    e.assign(f"{ptr} + {off}")


# -- loads and stores -----------------------------------------------------------------------


@emitter("load_ptr_tko")
def _load_ptr(e: OpEmit) -> None:
    e.order_after_tokens()
    ptr = e.operand("source")
    mask = e.operand("mask")
    pad = e.operand("paddingValue")
    rt = e.result_types[0]
    element = tltypes.element_of(rt)
    if pad is not None and is_i1(element):
        pad = f"{pad}.to(tl.int8)"
    sem, scope = ordering(e)
    expr = load_memory(e, ptr, mask, pad if mask is not None else None, element, e.shape(rt), sem, scope)
    e.assign(from_memory(e, expr, element))
    e.token(1, memory=True)


@emitter("store_ptr_tko")
def _store_ptr(e: OpEmit) -> None:
    e.order_after_tokens()
    ptr = e.operand("destination")
    value = e.operand("value")
    mask = e.operand("mask")
    vt = e.op.operand("value").type
    element = tltypes.element_of(vt)
    sem, scope = ordering(e)
    store_memory(e, ptr, to_memory(value, element), mask, element, e.shape(vt), sem, scope)
    e.token(0, memory=True)


# -- atomics ------------------------------------------------------------------------------

_RMW = {"add": "atomic_add", "addf": "atomic_add", "and": "atomic_and", "or": "atomic_or", "xor": "atomic_xor",
        "max": "atomic_max", "min": "atomic_min", "umax": "atomic_max", "umin": "atomic_min",
        "xchg": "atomic_xchg"}  # fmt: skip


# Triton 3.6's interpreter hands an atomic's values and mask to C++ code that reads them as
# dense arrays: a broadcast tile (a NumPy view repeating one element) gave every lane but the
# first garbage. `dense` copies them there (a select makes a new array); the GPU compiler folds
# the select away. Found by tests/lower/fuzz.py.
def dense(e: OpEmit, expr: str) -> str:
    return f"{e.split_helper('_dense', 'tl.where(x == x, x, x)')}({expr})"


def _atomic_mask(e: OpEmit, mask: str | None, shape: tuple[int, ...]) -> str:
    """An atomic's `, mask=...` argument: broadcast to the lanes' `shape` (a view's mask may be
    partial along some dimensions, and Triton's interpreter, which reads it as raw memory, does
    not broadcast it; found by tests/lower/fuzz.py), then made dense."""
    return f", mask={dense(e, _broadcast(mask, shape))}" if mask is not None else ""


def atomic_update(
    e: OpEmit,
    mode: str,
    ptr: str,
    value: str,
    mask: str | None,
    element: Type,
    shape: tuple[int, ...],
    sem: str,
    scope: str,
) -> str:
    """The `tl.atomic_*` call applying `mode` with `value` at `ptr` (tensors of `shape`); it
    returns the old values (as the element type)."""
    fn = _RMW.get(mode)
    if fn is None:
        raise e.error(f"the atomic mode {mode} has no Triton lowering")
    bits = memory_bits(element)
    convert_back = None
    if mode in ("umax", "umin"):
        ut = f"tl.uint{bits}"
        ptr = f"{ptr}.to(tl.pointer_type({ut}), bitcast=True)"
        value = f"{value}.to({ut}, bitcast=True)"
        convert_back = int_dtype(bits)
    elif mode == "xchg" and tltypes.is_float(element):
        ity = int_dtype(bits)
        ptr = f"{ptr}.to(tl.pointer_type({ity}), bitcast=True)"
        value = f"{value}.to({ity}, bitcast=True)"
        convert_back = tltypes.dtype(element)
    if mode == "addf" and str(element) == "bf16":  # ("Unsupported data type", Triton 3.6 and 3.9)
        e.interpreter_lacks("a bf16 atomic add")
    sem, acquired = ordered(e, sem, scope)
    call = acquired(f"tl.{fn}({ptr}, {dense(e, value)}{_atomic_mask(e, mask, shape)}, sem={sem!r}, scope={scope!r})")
    if convert_back is not None:
        call = f"{call}.to({convert_back}, bitcast=True)"
    return call


def _atomic_ordering(e: OpEmit) -> tuple[str, str]:
    sem, scope = ordering(e)
    if sem == "weak":
        raise e.error("an atomic needs relaxed, acquire, release or acq_rel ordering")
    return sem, scope


@emitter("atomic_rmw_tko")
def _atomic_rmw(e: OpEmit) -> None:
    e.order_after_tokens()
    ptr = e.operand("pointers")
    arg = e.operand("arg")
    mask = e.operand("mask")
    rt = e.result_types[0]
    element = tltypes.element_of(rt)
    mode = e.keyword("mode", "add") or "add"
    sem, scope = _atomic_ordering(e)
    call = atomic_update(e, mode, ptr, arg, mask, element, e.shape(rt), sem, scope)
    if mask is not None:
        old = e.tmp("old")
        e.line(f"{old} = {call}")
        # Masked-off lanes: unspecified by the spec, zero in the interpreter.
        call = f"tl.where({mask}, {old}, tl.full((), 0, {tltypes.dtype(rt)}))"
    e.assign(_fenced(e, call, element))
    e.token(1, memory=True)


def _fenced(e: OpEmit, old: str, element: Type) -> str:
    """An atomic's result, where it is used, through a register move Triton may not look
    through: Triton 3.9 (not 3.6) fails an assertion ('operandEnc') in
    TritonGPURemoveLayoutConversions when the value of an atomic is a product (its mma
    layout) and the old values go on to an op in another layout (a store through transposed
    addresses), for every type of product and atomic tried (f16, tf32, i8 and f64 products;
    add and xchg; 8x8 to 32x32) on sm_80, sm_90 and sm_100: fuzz seeds 156022 (--weight
    mma=15 --weight mma_scaled=5) and 196190 (--weight math=4 --hints). With the move between
    the atomic and its users, it compiles; one `mov` per element."""
    if not e.op.results[0].uses:
        return old
    return fence(e, old, tltypes.dtype(element), memory_bits(element))


@emitter("atomic_cas_tko")
def _atomic_cas(e: OpEmit) -> None:
    e.order_after_tokens()
    ptr = e.operand("pointers")
    cmp = e.operand("cmp")
    val = e.operand("val")
    mask = e.operand("mask")
    rt = e.result_types[0]
    element = tltypes.element_of(rt)
    bits = memory_bits(element)
    ity = int_dtype(bits)
    sem, scope = _atomic_ordering(e)
    # Compare bits, not values: NaN payloads and -0.0 compare as the spec says.
    is_float = tltypes.is_float(element)
    iptr = f"{ptr}.to(tl.pointer_type({ity}), bitcast=True)"
    icmp = f"{cmp}.to({ity}, bitcast=True)" if is_float else cmp
    ival = f"{val}.to({ity}, bitcast=True)" if is_float else val
    if mask is not None:
        # (A symbol with a space: no global can be named so.)
        scratch = e.cg.buffer("cas scratch", "*i64", bytes(8), False, hint="cas_scratch")
        p, c = e.tmp("cas_ptr"), e.tmp("cas_cmp")
        # Masked-off lanes exchange their cmp with itself in a private scratch word.
        e.line(f"{p} = tl.where({mask}, {iptr}, {scratch}.to(tl.pointer_type({ity}), bitcast=True))")
        e.line(f"{c} = {icmp}")
        iptr, icmp, ival = p, c, f"tl.where({mask}, {ival}, {c})"
    sem, acquired = ordered(e, sem, scope)
    call = acquired(f"tl.atomic_cas({iptr}, {dense(e, icmp)}, {dense(e, ival)}, sem={sem!r}, scope={scope!r})")
    if mask is not None:
        old = e.tmp("old")
        e.line(f"{old} = {call}")
        call = f"tl.where({mask}, {old}, {icmp})"
    if is_float:
        call = f"({call}).to({tltypes.dtype(element)}, bitcast=True)"
    e.assign(_fenced(e, call, element))
    e.token(1, memory=True)


# -- allocation and globals -------------------------------------------------------------------


@emitter("alloca")
def _alloca(e: OpEmit) -> None:
    rt = e.result_types[0]
    element = pointee(rt)
    nibbles = tltypes.is_nibble(element)
    count = e.int_attr("num_elem", 0) or 0
    alignment = e.int_attr("alignment", 1) or 1
    if count < 0 or alignment <= 0 or alignment & (alignment - 1):
        raise e.error(f"alloca of {count} elements aligned to {alignment} bytes is invalid")
    if alignment > 256:
        raise e.error(f"alloca alignment {alignment} exceeds the 256 bytes device allocations guarantee")
    nbytes = (count * memory_bits(element) + 7) // 8
    slab = max(-(-nbytes // alignment) * alignment, alignment, 8)
    if nibbles:  # whole 32-bit words: a 4-bit store swaps the word around its element
        slab = -(-slab // 4) * 4
    where = e.cg.where(e.op) or f"op{id(e.op)}"
    sig = "*u8" if nibbles else tltypes.memory_signature(element)
    buf = e.cg.buffer(f"alloca {where}", sig, bytes(slab), False, hint="alloca", per_block=True)
    pid = e.tmp("block")
    # The linear block id, x fastest (the launcher lays the slabs out in this order).
    e.line(
        f"{pid} = tl.program_id(0).to(tl.int64) + tl.num_programs(0).to(tl.int64) * "
        "(tl.program_id(1).to(tl.int64) + tl.num_programs(1).to(tl.int64) * tl.program_id(2).to(tl.int64))"
    )
    esize = max(memory_bits(element) // 8, 1)
    base = f"{buf} + {pid} * {slab // esize}"
    e.assign(f"({base}).to(tl.int64) * 2" if nibbles else base)  # (4-bit elements: a nibble address)


def find_global(e: OpEmit, name: str):
    for op in e.cg.module.walk():
        if op.name == "cuda_tile.global":
            sym = op.properties.get("sym_name")
            if getattr(sym, "value", None) == name:
                return op
    return None


@emitter("get_global")
def _get_global(e: OpEmit) -> None:
    attr = e.attr("name")
    name = attr.name if isinstance(attr, SymbolRefAttr) else str(getattr(attr, "value", attr))
    g = find_global(e, name)
    if g is None:
        raise e.error(f"no global named @{name}")
    value = g.properties.get("value")
    element = value.element  # type: ignore[union-attr]
    raw = initial_bytes(value)
    read_only = g.properties.get("constant") is not None
    rt = e.result_types[0]
    if tltypes.is_nibble(element) != tltypes.is_nibble(pointee(rt)) or (
        not tltypes.is_nibble(element) and tltypes.memory_signature(pointee(rt)) != tltypes.memory_signature(element)
    ):
        raise e.error(f"@{name} holds {element}, the result points to {pointee(rt)}")
    if tltypes.is_nibble(element):
        # Packed two to a byte, padded to whole 32-bit words (a 4-bit store swaps the word
        # around its element); the pointer is a nibble address.
        raw += bytes(-len(raw) % 4)
        buf = e.cg.buffer(name, "*u8", raw, read_only, hint=f"global_{name}", module_global=True)
        e.assign(f"{buf}.to(tl.int64) * 2")
        return
    sig = tltypes.memory_signature(element)
    e.alias(e.cg.buffer(name, sig, raw, read_only, hint=f"global_{name}", module_global=True))
