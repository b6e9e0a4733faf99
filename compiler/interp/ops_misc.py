"""Semantics of the grid queries, tokens, `assume`, `assert` and `print_tko`.

`print_tko` formats like C's printf, one conversion per operand; a tile operand is
printed as its elements, each formatted by the conversion, in brackets, nested by rank
(`[[0, 1], [2, 3]]`; a rank-0 tile prints as its value), as the GPU's print does.
Integer conversions read the element's bits as signed (`d`, `i`) or unsigned (`u`, `o`,
`x`, `X`) at the element's width (`hh` / `h` narrow to 8 / 16 bits, as in C); float
conversions take the element's value as a double. A conversion that does not apply to
its operand (a float for `%d`, an integer for `%f`, `%s`, `%n`, `*` widths) is
undefined output on the GPU and an error here.

`assert` stops the blocks whose condition has a false element (the reference allows a
failing block to go on or not); the others go on, and the launch ends in an error
naming the first failure and how many elements and blocks failed (see
`Machine.run`).
"""

from __future__ import annotations

import re
import sys
from typing import Any

import numpy as np

from ..ir.types import FloatType, IntegerType, PointerType, TileType, Type
from .machine import TOKEN, AssertFailure
from .registry import Ctx, semantics


def _maybe_uniform(a: np.ndarray) -> np.ndarray:
    """A coordinate array as a (1,) array when every block of the group shares it."""
    if len(a) == 1 or (a == a[0]).all():
        return a[:1].copy()
    return a.copy()


@semantics("get_tile_block_id")
def _get_tile_block_id(ctx: Ctx):
    g = ctx.group
    return _maybe_uniform(g.x), _maybe_uniform(g.y), _maybe_uniform(g.z)


@semantics("get_num_tile_blocks")
def _get_num_tile_blocks(ctx: Ctx):
    return tuple(np.array([n], dtype=np.int32) for n in ctx.machine.grid)


@semantics("make_token", "join_tokens", "gdc_wait_tko", "gdc_launch_dependents_tko", "memory_fence_alias_tko")
def _token(ctx: Ctx):
    # join_tokens' result depends on every input token: the machine gives each result
    # the union of its operands' dependencies. The programmatic-dependent-launch ops order
    # only whole grids (one launch at a time here) and the alias fence only accesses through
    # different mappings of the same memory (one address space here): as tokens, nothing more.
    return TOKEN


@semantics("assume")
def _assume(ctx: Ctx):
    # The predicate is a promise to the compiler; breaking it is undefined, and the
    # interpreter, like the hardware, does not check it.
    return ctx.args[0]


@semantics("assert")
def _assert(ctx: Ctx) -> np.ndarray | None:
    """Records each failing block (first failing element in row-major order, count of
    failing elements) and returns the mask of failing blocks (None when none fails)."""
    cond = np.asarray(ctx.args[0], dtype=np.bool_)
    flat = cond.reshape(cond.shape[0], -1)
    ok = flat.all(axis=1)
    if ok.all():
        return None
    size = ctx.group.size
    failed = np.broadcast_to(~ok, (size,))
    shape = cond.shape[1:]
    machine = ctx.machine
    bad_counts = (~flat).sum(axis=1)
    firsts = np.argmin(flat, axis=1)  # first False in each row
    for pos in np.flatnonzero(failed).tolist():
        row = pos if flat.shape[0] > 1 else 0
        element = tuple(int(i) for i in np.unravel_index(int(firsts[row]), shape)) if shape else ()
        count = int(bad_counts[row])
        machine.assert_failures.append(AssertFailure(ctx.op, ctx.group.coords(pos), element, count))
        machine.assert_failed_elements += count
    return failed


# -- print_tko ---------------------------------------------------------------------------

# A printf conversion: %[flags][width][.precision][length]type, or %%.
_CONVERSION = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d*|\*))?(hh|h|ll|l|j|z|t|L|q)?([a-zA-Z%])")
_INT_CONVERSIONS = "diouxX"
_FLOAT_CONVERSIONS = "eEfFgGaA"


class FormatError(ValueError):
    """A format that does not fit its operands."""


def parse_format(fmt: str) -> list[str | re.Match[str]]:
    """The format as literal text pieces and conversion matches (`%%` becomes text)."""
    pieces: list[str | re.Match[str]] = []
    pos = 0
    for m in _CONVERSION.finditer(fmt):
        if m.start() > pos:
            pieces.append(fmt[pos : m.start()])
        if m.group(5) == "%":
            pieces.append("%")
        else:
            pieces.append(m)
        pos = m.end()
    if pos < len(fmt):
        pieces.append(fmt[pos:])
    return pieces


def _pad(body: str, sign: str, flags: str, width: int | None, zero_ok: bool) -> str:
    """`sign + body` padded to `width` as the flags say (zeros go after the sign/prefix)."""
    text = sign + body
    if width is None or len(text) >= width:
        return text
    fill = width - len(text)
    if "-" in flags:
        return text + " " * fill
    if "0" in flags and zero_ok:
        return sign + "0" * fill + body
    return " " * fill + text


def _format_int(flags: str, width: int | None, precision: int | None, conv: str, value: int) -> str:
    negative = value < 0
    magnitude = -value if negative else value
    if conv in "diu":
        digits = str(magnitude)
    elif conv == "o":
        digits = format(magnitude, "o")
    elif conv == "x":
        digits = format(magnitude, "x")
    else:
        digits = format(magnitude, "X")
    if precision is not None:
        digits = "" if precision == 0 and magnitude == 0 else digits.rjust(precision, "0")
    prefix = ""
    if "#" in flags:
        if conv == "o" and not digits.startswith("0"):
            digits = "0" + digits
        elif conv in "xX" and magnitude != 0:
            prefix = "0" + conv
    sign = ""
    if conv in "di":
        sign = "-" if negative else "+" if "+" in flags else " " if " " in flags else ""
    return _pad(digits, sign + prefix, flags, width, zero_ok=precision is None)


def _hex_float(value: float, precision: int | None, upper: bool, flags: str) -> tuple[str, str]:
    """C's %a: (sign, body) with the shortest exact hex digits, or `precision` of them."""
    sign = "-" if np.signbit(value) else "+" if "+" in flags else " " if " " in flags else ""
    value = abs(value)
    if value == 0:
        lead, frac, exp = 0, 0, 0
        bits = 0
    else:
        mantissa, exponent = np.frexp(value)  # value = mantissa * 2**exponent, 0.5 <= mantissa < 1
        exp = int(exponent) - 1
        if exp < -1022:  # subnormal: glibc prints 0x0.xxxp-1022
            exp = -1022
        scaled = int(np.ldexp(value, 52 - exp))  # 53-bit integer: lead digit and 52 fraction bits
        lead, frac = scaled >> 52, scaled & ((1 << 52) - 1)
        bits = 52
    digits = f"{frac:013x}" if bits else ""
    if precision is None:
        digits = digits.rstrip("0")
    elif precision < len(digits):
        drop = 4 * (13 - precision)
        whole = (lead << 52) | frac
        q, r = divmod(whole, 1 << drop)
        half = 1 << (drop - 1)
        if r > half or (r == half and q & 1):
            q += 1
        lead, frac_bits = q >> (4 * precision), q & ((1 << (4 * precision)) - 1)
        digits = f"{frac_bits:0{precision}x}" if precision else ""
    else:
        digits = digits.ljust(precision, "0")
    point = "." if digits or "#" in flags else ""
    body = f"0x{lead}{point}{digits}p{exp:+d}"
    if upper:
        body = body.upper()
    return sign, body


def _format_float(flags: str, width: int | None, precision: int | None, conv: str, value: float) -> str:
    if not np.isfinite(value):  # C pads inf/nan with spaces only and keeps NaN's sign
        sign = "-" if np.signbit(value) else "+" if "+" in flags else " " if " " in flags else ""
        body = "inf" if np.isinf(value) else "nan"
        return _pad(body.upper() if conv in "EFGA" else body, sign, flags, width, zero_ok=False)
    if conv in "aA":
        sign, body = _hex_float(value, precision, conv == "A", flags)
        # zero padding goes after the 0x prefix
        if "0" in flags and "-" not in flags and width is not None and len(sign + body) < width:
            body = body[:2] + "0" * (width - len(sign + body)) + body[2:]
        return _pad(body, sign, flags, width, zero_ok=False)
    spec = "%" + flags + (str(width) if width is not None else "") + (f".{precision}" if precision is not None else "")
    return (spec + conv) % value


def _scalar_formatter(m: re.Match[str], element: Type, index: int) -> Any:
    """A function formatting one element of `element` type by the conversion `m`."""
    flags, width_text, precision_text, length, conv = m.groups()
    if width_text == "*" or precision_text == "*":
        raise FormatError(f"conversion {m.group(0)!r}: `*` widths and precisions take no tile operand")
    width = int(width_text) if width_text else None
    precision = (int(precision_text) if precision_text else 0) if precision_text is not None else None
    is_int = isinstance(element, (IntegerType, PointerType))
    bits = element.width if isinstance(element, IntegerType) else 64
    what = f"conversion {m.group(0)!r} does not apply to operand {index} of element type {element}"
    if conv in _INT_CONVERSIONS or conv == "c":
        if not is_int:
            raise FormatError(what)
        if length == "hh":
            bits = min(bits, 8)
        elif length == "h":
            bits = min(bits, 16)
        mask = (1 << bits) - 1
        half = 1 << (bits - 1)
        signed = conv in "di"

        def fmt_int(v: Any) -> str:
            u = int(v) & mask
            if conv == "c":
                return _pad(chr(u & 0xFF), "", flags, width, zero_ok=False)
            value = u - (1 << bits) if signed and bits > 1 and u >= half else u
            return _format_int(flags, width, precision, conv, value)

        return fmt_int
    if conv in _FLOAT_CONVERSIONS:
        if not isinstance(element, FloatType):
            raise FormatError(what)
        return lambda v: _format_float(flags, width, precision, conv, float(v))
    if conv == "p":
        if not is_int:
            raise FormatError(what)

        def fmt_pointer(v: Any) -> str:
            u = int(v) & ((1 << 64) - 1)
            return _pad("(nil)" if u == 0 else f"0x{u:x}", "", flags, width, zero_ok=False)

        return fmt_pointer
    raise FormatError(f"conversion {m.group(0)!r} is not supported (operand {index} is a tile of {element})")


def _format_tile(values: np.ndarray, fmt: Any) -> str:
    """A tile's elements in nested brackets, each formatted by `fmt`."""
    if values.ndim == 0:
        return fmt(values[()])
    if values.ndim == 1:
        return "[" + ", ".join(fmt(v) for v in values.tolist()) + "]"
    return "[" + ", ".join(_format_tile(row, fmt) for row in values) + "]"


def format_print(fmt: str, operands: list[tuple[np.ndarray, Type]]) -> str:
    """Fill a print_tko format for one tile block: `operands` are (value of shape S, type)."""
    pieces = parse_format(fmt)
    conversions = [p for p in pieces if not isinstance(p, str)]
    if len(conversions) != len(operands):
        raise FormatError(f"the format has {len(conversions)} conversions for {len(operands)} operands")
    out: list[str] = []
    k = 0
    for p in pieces:
        if isinstance(p, str):
            out.append(p)
            continue
        value, t = operands[k]
        element = t.element if isinstance(t, TileType) else t
        out.append(_format_tile(value, _scalar_formatter(p, element, k)))
        k += 1
    return "".join(out)


@semantics("print_tko")
def _print(ctx: Ctx):
    fmt = getattr(ctx.attr("str"), "value", "")
    args = ctx.args_of("args")
    types = [v.type for v in ctx.op.operand_group("args")]
    g = ctx.group
    machine = ctx.machine
    lines: list[tuple[int, str]] = []
    ids = g.linear(machine.grid).tolist()
    try:
        for pos in range(g.size):
            operands = [(a[0 if a.shape[0] == 1 else pos], t) for a, t in zip(args, types, strict=True)]
            lines.append((ids[pos], format_print(fmt, operands)))
    except FormatError as e:
        raise ctx.error(str(e)) from None
    buffer = machine.print_buffer
    if buffer is not None:
        buffer.extend(lines)
    else:  # run outside `Machine.run` (tests): write at once
        out = machine.options.stdout or sys.stdout
        out.write("".join(text for _, text in lines))
    ctx.memory_instance()
    return TOKEN
