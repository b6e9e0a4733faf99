"""Semantics of the grid queries, tokens, `assume`, `assert` and `print_tko`."""

from __future__ import annotations

import re

import numpy as np

from .machine import TOKEN
from .registry import Ctx, semantics


@semantics("get_tile_block_id")
def _get_tile_block_id(ctx: Ctx):
    g = ctx.group
    return g.x.copy(), g.y.copy(), g.z.copy()


@semantics("get_num_tile_blocks")
def _get_num_tile_blocks(ctx: Ctx):
    return tuple(np.array([n], dtype=np.int32) for n in ctx.machine.grid)


@semantics("make_token", "join_tokens")
def _token(ctx: Ctx):
    return TOKEN


@semantics("assume")
def _assume(ctx: Ctx):
    # The predicate is a promise to the compiler; breaking it is undefined, and the
    # interpreter, like the hardware, does not check it.
    return ctx.args[0]


@semantics("assert")
def _assert(ctx: Ctx):
    cond = ctx.args[0]
    failed = ~cond.astype(np.bool_)
    if failed.any():
        message = ctx.attr("message")
        text = getattr(message, "value", "")
        flat = failed.reshape(failed.shape[0], -1)
        block_pos = int(np.flatnonzero(flat.any(axis=1))[0])
        element = np.unravel_index(int(np.flatnonzero(flat[block_pos])[0]), cond.shape[1:]) if cond.ndim > 1 else ()
        where = f" at element {tuple(int(i) for i in element)}" if element else ""
        raise ctx.error(f'assertion failed: "{text}"{where}', blocks=np.array([block_pos]))


# printf conversions: %[flags][width][.precision][length]type, and %%.
_CONVERSION = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcsp%])")


def format_printf(fmt: str, values: list) -> str:
    """Fill a printf-style format from Python scalars."""
    it = iter(values)

    def one(m: re.Match[str]) -> str:
        flags, width, precision, _length, conv = m.groups()
        if conv == "%":
            return "%"
        try:
            v = next(it)
        except StopIteration:
            return m.group(0)
        spec = f"%{flags}{width or ''}{'.' + precision if precision is not None else ''}"
        if conv in "diouxX":
            v = int(v)
            if conv == "u" and v < 0:
                v &= (1 << 64) - 1
            return (spec + ("d" if conv in "iu" else conv)) % v
        if conv in "eEfFgGaA":
            if conv in "aA":
                return float(v).hex()
            return (spec + conv) % float(v)
        if conv == "c":
            return chr(int(v))
        if conv == "p":
            return hex(int(v))
        return (spec + "s") % v

    return _CONVERSION.sub(one, fmt)


@semantics("print_tko")
def _print(ctx: Ctx):
    import sys

    fmt = getattr(ctx.attr("str"), "value", "")
    args = ctx.args_of("args")
    out = ctx.machine.options.stdout or sys.stdout
    g = ctx.group
    for pos in range(g.size):
        values = []
        for a in args:
            v = a[0 if a.shape[0] == 1 else pos]
            values.extend(np.asarray(v).reshape(-1).tolist())
        out.write(f"[block ({g.x[pos]}, {g.y[pos]}, {g.z[pos]})] {format_printf(fmt, values)}")
    ctx.memory_instance()
    return TOKEN
