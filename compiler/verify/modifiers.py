"""Shared rules for the modifiers that arithmetic, math and conversion ops carry.

The float ops take a rounding mode (`rounding<zero>`), `flush_to_zero`, and for some of
them the `approx` / `full` rounding variants; the integer ops take an overflow flag
(`overflow<no_signed_wrap>`) or a signedness. Each op accepts its own subset, so the
checks here take what is allowed as parameters:

    check_rounding_mode(v, op, IEEE_MODES)           # 'invalid rounding mode specified, ...'
    check_flush_to_zero(v, op)                       # f32 only
    check_f32_modifier(v, op, "approx", present)     # approx / full: f32 only
    check_div_sqrt_modifiers(v, op)                  # divf / sqrt: the whole set at once
    check_overflow_not(v, op, ("no_unsigned_wrap",)) # a flag the op does not support

Every check reports through `Verifier.fail` (so it stops the op, as a failing `verify()`
does in MLIR) with MLIR's wording, and points at the modifier as written when the
source text shows it (`rounding<full>`, `flush_to_zero`, `overflow<...>`), else at the op.
The checks never raise on malformed ops: a missing or ill-typed attribute is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..ir import attributes as A
from ..ir import types as T
from ..ir.diagnostics import Fix
from ..ir.source import Span
from .common import deletion_fix, enum_keyword, type_text

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from ..ir.core import Operation
    from .engine import Verifier

# The rounding modes of IEEE 754 arithmetic, in the order MLIR's messages list them.
IEEE_MODES: tuple[str, ...] = ("nearest_even", "zero", "negative_inf", "positive_inf")
# divf also takes the two non-IEEE modes.
DIVF_MODES: tuple[str, ...] = (*IEEE_MODES, "approx", "full")
# Integer division rounds in one of the directed modes.
DIVI_MODES: tuple[str, ...] = ("zero", "negative_inf", "positive_inf")


# ------------------------------------------------------------------ reading the op


def result_element(op: Operation) -> T.Type | None:
    """The element type of the op's first result (the type itself when not a tile)."""
    if not op.results:
        return None
    return T.element_type(op.results[0].type)


def unit_flag(op: Operation, name: str) -> bool:
    """Whether unit property `name` is set (a `true` BoolAttr counts too)."""
    attr = op.properties.get(name)
    if isinstance(attr, A.BoolAttr):
        return bool(getattr(attr, "value", False))
    return attr is not None


def is_generic(v: Verifier, op: Operation) -> bool:
    """True when the op is written in MLIR's generic form (`"cuda_tile.addf"(...)`)."""
    if v.source is None or op.name_span is None:
        return False
    return v.source.text[op.name_span.start : op.name_span.start + 1] == '"'


def _own_text_end(op: Operation) -> int | None:
    """Where the op's own text ends: its span, without any nested region."""
    if op.span is None:
        return None
    end = op.span.end
    for region in op.regions:
        if region.span is not None and op.span.start <= region.span.start < end:
            end = region.span.start
    return end


def find_in_op(v: Verifier, op: Operation, pattern: str) -> Span | None:
    """The span of the first match of regex `pattern` in the op's own text."""
    if v.source is None or op.span is None:
        return None
    end = _own_text_end(op)
    start = op.name_span.end if op.name_span is not None else op.span.start
    m = re.compile(pattern).search(v.source.text, start, end if end is not None else op.span.end)
    if m is None:
        return None
    return Span(m.start(), m.end())


def rounding_span(v: Verifier, op: Operation) -> Span | None:
    """Where the rounding mode is written: `rounding<zero>`, or in the generic form the
    attribute's value `#cuda_tile.rounding<zero>`."""
    return find_in_op(v, op, r"(?:#cuda_tile\.)?rounding<\s*\w*\s*>")


def keyword_span(v: Verifier, op: Operation, word: str) -> Span | None:
    """Where the bare keyword `word` (e.g. `flush_to_zero`) is written."""
    return find_in_op(v, op, rf"(?<![\w$.]){re.escape(word)}(?![\w])")


def removal_fix(v: Verifier, op: Operation, span: Span | None, title: str) -> list[Fix]:
    """A fix deleting a modifier written in the custom syntax, with the blank before it.
    None for the generic form, where the attribute sits in a dictionary."""
    if is_generic(v, op):
        return []
    return deletion_fix(v, span, title)


# ------------------------------------------------------------------ the checks


def check_rounding_mode(
    v: Verifier,
    op: Operation,
    allowed: Sequence[str],
    *,
    attr: str = "rounding_mode",
    message: str | None = None,
    code: str = "rounding-mode",
) -> str | None:
    """The rounding mode is one of `allowed`; returns the mode (None when absent).

    The default message is MLIR's `invalid rounding mode specified, expect one of [a, b]`;
    ops with another wording pass `message`."""
    mode = enum_keyword(op, attr)
    if mode is None or mode in allowed:
        return mode
    v.fail(
        op,
        message or f"invalid rounding mode specified, expect one of [{', '.join(allowed)}]",
        at=rounding_span(v, op),
        code=code,
    )


def check_f32_modifier(
    v: Verifier,
    op: Operation,
    modifier: str,
    present: bool,
    *,
    at: Span | None = None,
    fixes: Sequence[Fix] = (),
    code: str | None = None,
) -> None:
    """A modifier that only f32 results support (`flush_to_zero`, `approx`, `full`):
    `<modifier> modifier only supported for f32 data type, but got: 'f16'`."""
    if not present:
        return
    element = result_element(op)
    if element is None or element == T.FLOAT_TYPES["f32"]:
        return
    v.fail(
        op,
        f"{modifier} modifier only supported for f32 data type, but got: '{type_text(element)}'",
        at=at,
        code=code or f"{modifier.replace('_', '-')}-f32",
        fixes=fixes,
    )


def check_flush_to_zero(v: Verifier, op: Operation, *, attr: str = "flush_to_zero") -> None:
    """`flush_to_zero` is set only on ops whose result element type is f32."""
    if not unit_flag(op, attr):
        return
    span = keyword_span(v, op, attr)
    fixes = removal_fix(v, op, span, "Remove `flush_to_zero`")
    check_f32_modifier(v, op, "flush_to_zero", True, at=span, fixes=fixes, code="flush-to-zero")


def check_approx_full(v: Verifier, op: Operation, mode: str | None, *, rounding_default: str | None = None) -> None:
    """The `approx` / `full` rounding variants apply to f32 results only. The fix drops
    the `rounding<...>` modifier (the op's default mode then applies) when that default
    is an ordinary rounding."""
    if mode not in ("approx", "full"):
        return
    span = rounding_span(v, op)
    fixes = removal_fix(v, op, span, f"Remove `rounding<{mode}>`") if rounding_default not in ("approx", "full") else []
    check_f32_modifier(v, op, mode, True, at=span, fixes=fixes, code=f"{mode}-f32")


def check_div_sqrt_modifiers(
    v: Verifier,
    op: Operation,
    allowed: Sequence[str] = DIVF_MODES,
    *,
    attr: str = "rounding_mode",
    ftz_attr: str = "flush_to_zero",
) -> None:
    """divf and sqrt: the rounding mode is one of `allowed`, then flush_to_zero, approx
    and full are for f32 results only (in that order, as MLIR checks them)."""
    mode = check_rounding_mode(v, op, allowed, attr=attr)
    check_flush_to_zero(v, op, attr=ftz_attr)
    check_approx_full(v, op, mode, rounding_default="nearest_even")


def check_ieee_arith(v: Verifier, op: Operation) -> None:
    """addf, subf, mulf, fma: an IEEE rounding mode, and flush_to_zero on f32 only."""
    check_rounding_mode(v, op, IEEE_MODES)
    check_flush_to_zero(v, op)


def check_overflow_not(
    v: Verifier,
    op: Operation,
    unsupported: Sequence[str],
    *,
    attr: str = "overflow",
) -> None:
    """An overflow flag the op does not support: `'no_unsigned_wrap' overflow flag is
    not supported`. The fix removes the flag (an assumption less is always safe)."""
    flag = enum_keyword(op, attr)
    if flag is None or flag not in unsupported:
        return
    span = find_in_op(v, op, r"overflow\s*<\s*\w*\s*>")
    v.fail(
        op,
        f"'{flag}' overflow flag is not supported",
        at=span,
        code="overflow-flag",
        fixes=removal_fix(v, op, span, f"Remove `overflow<{flag}>`"),
    )
