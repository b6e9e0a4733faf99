"""Tile block ids, tokens (and the token-only ops: fences, grid dependency control), `assume`,
`assert` and `print_tko`."""

from __future__ import annotations

import re

from ..ir.attributes import BoundedAttr, DivByAttr, SameElementsAttr
from ..ir.types import IntegerType, PointerType
from . import tltypes
from .codegen import OpEmit
from .registry import emitter


@emitter("get_tile_block_id")
def _block_id(e: OpEmit) -> None:
    for axis in range(3):
        e.assign(f"tl.program_id({axis})", axis)


@emitter("get_num_tile_blocks")
def _num_blocks(e: OpEmit) -> None:
    for axis in range(3):
        e.assign(f"tl.num_programs({axis})", axis)


# Programmatic dependent launch: Triton's own `griddepcontrol` wrappers, on sm_90+ (as tileiras:
# ACQBULK and PREEXIT); older targets have no such launch, and Triton's interpreter runs one
# launch at a time: nothing to wait for or signal there.
_GRID_DEPENDENCY = {
    "cuda_tile.gdc_wait_tko": "gdc_wait",
    "cuda_tile.gdc_launch_dependents_tko": "gdc_launch_dependents",
}


@emitter("make_token", "join_tokens", "memory_fence_alias_tko", "gdc_wait_tko", "gdc_launch_dependents_tko")
def _tokens(e: OpEmit) -> None:
    # memory_fence_alias_tko: the generated code reaches memory through one mapping only
    # (tileiras emits no instruction for it either, sm_80 to sm_100).
    call = _GRID_DEPENDENCY.get(e.op.name)
    if call is not None and e.target.cc >= 90:
        e.line("if not INTERPRETED:")
        e.line(f"    tl.extra.cuda.{call}()  # GPU only")
    e.token(0)
    if e.op.name != "cuda_tile.make_token" and e.tokens_from_memory():
        e.cg.memory_tokens.add(e.op.results[0])


@emitter("assume")
def _assume(e: OpEmit) -> None:
    """The predicate reaches Triton's analyses: divisibility as `tl.multiple_of`, runs of
    equal elements as `tl.max_constancy`, bounds of scalars as `tl.assume`. The value is
    unchanged (a broken promise is undefined behaviour, as in Tile IR).

    `tl.multiple_of` sets `tt.divisibility` on the op defining its operand; a kernel
    parameter has none (Triton silently drops the hint on a function argument), so a
    parameter first goes through a bitcast round trip (pointer → int64 → f64 → int64 →
    pointer, iN → fN → iN) that Triton keeps until its axis analysis and LLVM then folds
    away: free, and the hint reaches the loads (128-bit vector accesses). i8 and i1
    parameters have no such round trip; their hint is dropped."""
    (x,) = e.operands
    pred = e.attr("predicate")
    t = e.operand_types[0]
    shape = tltypes.shape_of(t)
    rank = len(shape)
    if isinstance(pred, DivByAttr) and pred.every is None and pred.divisor > 1:
        # Triton's divisibility analysis tracks powers of two up to 2^30 (tt.divisibility).
        d = min(pred.divisor & -pred.divisor, 1 << 30)
        if d > 1:
            # A parameter, or an alias of one (`assume bounded` emits no statement).
            if x in {p.name for p in e.cg.params if p.kind in ("pointer", "scalar")}:
                el = tltypes.element_of(t)
                if isinstance(el, PointerType):
                    # (through f64: Triton 3.9 folds a bare pointer -> int64 -> pointer, and
                    # the hint with it)
                    x = (
                        f"{x}.to(tl.int64, bitcast=True).to(tl.float64, bitcast=True)"
                        f".to(tl.int64, bitcast=True).to({tltypes.dtype(t)}, bitcast=True)"
                    )
                elif isinstance(el, IntegerType) and el.width in (16, 32, 64):
                    x = f"{x}.to(tl.float{el.width}, bitcast=True).to(tl.int{el.width}, bitcast=True)"
            arg = d if rank == 0 else [d] * rank
            e.assign(f"tl.multiple_of({x}, {arg})")
            return
    if isinstance(pred, SameElementsAttr) and rank and any(v > 1 for v in pred.values):
        e.assign(f"tl.max_constancy({x}, {list(pred.values)})")
        return
    if isinstance(pred, BoundedAttr) and rank == 0 and tltypes.is_int(t):
        for bound, op in ((pred.lb, ">="), (pred.ub, "<=")):
            if bound is not None:
                e.line(f"tl.assume({x} {op} {bound})")
    e.alias(x)


@emitter("assert")
def _assert(e: OpEmit) -> None:
    cond = e.operands[0]
    message = e.attr("message")
    text = getattr(message, "value", "assertion failed")
    e.line(f"tl.device_assert({cond}, {text!r})")


# A printf conversion: flags, width, precision, length, the conversion letter.
_CONVERSION = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|L|q|j|z|t)?([diouxXeEfFgGaAcsp%])")


@emitter("print_tko")
def _print(e: OpEmit) -> None:
    """`tl.device_print` once per value, labelled with the format's text before its
    conversion (`"b=%d, s=%f"`: `b=` and `s=`; `%x` prints in hex): Triton has no printf, so
    the values print as Triton prints them, a line per element prefixed with the tile block,
    not as the format says. A format without values prints its text."""
    e.order_after_tokens()
    fmt = getattr(e.attr("str"), "value", "")
    values = iter(v for v in e.operands if v is not None and v != "None")
    start, printed = 0, False
    for m in _CONVERSION.finditer(fmt):
        text, start = fmt[start : m.start()].strip(" \t\r\n,;"), m.end()
        if m.group(1) == "%":
            continue
        value = next(values, None)
        if value is None:
            break
        hex_ = ", hex=True" if m.group(1) in "xX" else ""
        e.line(f"tl.device_print({_escaped(text or 'value') + ' '!r}, {value}{hex_})")
        printed = True
    if not printed:
        e.line(f"tl.device_print({_escaped(fmt.replace('%%', '%').strip() or 'print_tko')!r})")
    if e.op.results:
        e.token(0, memory=True)


def _escaped(text: str) -> str:
    """`text` as Triton's GPU printf needs it: Triton puts the label into the printf format
    unescaped (a `%` there would be read as a conversion). Triton's interpreter prints it
    as it is, so a `%` shows doubled there."""
    return text.replace("%", "%%")
