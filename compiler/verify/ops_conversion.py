"""Verifiers of the conversion ops.

The op table already checks the element kinds (integer, float, pointer, i64) and that
source and result have one shape; these are the rules it cannot express:

* `bitcast`: both element types have the same bit width (tf32 counts 19 bits, as in MLIR);
* `exti` widens and `trunci` narrows, strictly;
* `ftof` changes the type, with the rounding modes tileiras 13.5 takes for the pair of
  types (`ftof_rounding_modes`);
* `ftoi` rounds with nearest_int_to_zero only; `itof` with nearest_even only and never
  produces f8E8M0FNU.

(`iota`, which conversion_invalid.mlir also tests, is verified in `ops_shape`.)
"""

from __future__ import annotations

from ..ir import types as T
from ..ir.core import Operation
from ..ir.diagnostics import Fix, TextEdit
from ..ir.source import Span
from .common import bit_width, enum_keyword, source_and_result, tile_of
from .engine import Verifier
from .modifiers import IEEE_MODES, is_generic, removal_fix, rounding_span
from .registry import op_verifier


@op_verifier("bitcast")
def _bitcast(v: Verifier, op: Operation) -> None:
    types = source_and_result(op)
    if types is None:
        return
    src, dst = types
    src_bits, dst_bits = bit_width(src.element), bit_width(dst.element)
    if src_bits is None or dst_bits is None or src_bits == dst_bits:
        return
    v.fail(
        op,
        f"types must be equal width, cannot convert '{src.full()}' of width {src_bits} "
        f"to type '{dst.full()}' of width {dst_bits}",
        code="bitcast-width",
    )


def _int_widths(op: Operation) -> tuple[int, int] | None:
    types = source_and_result(op)
    if types is None:
        return None
    src, dst = types
    if not (isinstance(src.element, T.IntegerType) and isinstance(dst.element, T.IntegerType)):
        return None
    return src.element.width, dst.element.width


@op_verifier("exti")
def _exti(v: Verifier, op: Operation) -> None:
    widths = _int_widths(op)
    if widths is not None and widths[1] <= widths[0]:
        v.fail(op, "extending to smaller or identical integer", code="integer-width")


@op_verifier("trunci")
def _trunci(v: Verifier, op: Operation) -> None:
    widths = _int_widths(op)
    if widths is not None and widths[1] >= widths[0]:
        v.fail(op, "truncating to larger or identical integer", code="integer-width")


@op_verifier("ftof")
def _ftof(v: Verifier, op: Operation) -> None:
    types = source_and_result(op)
    if types is None:
        return
    src, dst = types
    if src == dst:
        v.fail(op, "converting tiles must not be a no-op", code="no-op-conversion")
    mode = enum_keyword(op, "rounding_mode") or "nearest_even"  # the attribute's default
    if not isinstance(src.element, T.FloatType) or not isinstance(dst.element, T.FloatType):
        return  # the operand constraints said so
    allowed, message = ftof_rounding_modes(src.element.name, dst.element.name)
    if mode not in allowed:
        span = rounding_span(v, op)
        v.fail(op, message, at=span, code="rounding-mode", fixes=_set_rounding_fixes(v, op, span, allowed))


# Conversions that every rounding mode leaves exact: each value of the source is one of the
# destination's (f8E8M0FNU excluded: tileiras treats it as narrowing, even to f32).
_EXACT: dict[str, frozenset[str]] = {
    "tf32": frozenset({"f32", "f64"}),
    "f32": frozenset({"f64"}),
    **{t: frozenset({"tf32", "f32", "f64"}) for t in ("f16", "bf16")},
    **{t: frozenset({"f16", "bf16", "tf32", "f32", "f64"}) for t in ("f8E4M3FN", "f8E5M2", "f4E2M1FN")},
}
_LOW_PRECISION = frozenset({"f8E4M3FN", "f8E5M2", "f4E2M1FN"})


def ftof_exact(src: str, dst: str) -> bool:
    """Whether every value of float type `src` is one of `dst` (as tileiras sees it)."""
    return dst == "f64" or dst in _EXACT.get(src, ())


def ftof_rounding_modes(src: str, dst: str) -> tuple[tuple[str, ...], str]:
    """The rounding modes `ftof` from `src` to `dst` takes, and the message refusing another.

    The rules of NVIDIA's tileiras 13.5, found by compiling every pair of float types with
    every rounding mode (`tests/bytecode/test_ftof_rounding.py` checks them against it where it
    is installed), in its words. They are wider than NVIDIA's 13.3 verifier (nearest_even only,
    which the conformance file `invalid.mlir` still expects for f32 -> f64): the tools win.
    f8E8M0FNU takes zero or positive_inf; the other 8- and 4-bit types nearest_even only; an
    exact (widening) conversion any IEEE mode or 13.4's nearest_away; f64 -> f32 the IEEE
    modes; f32 -> tf32 nearest_even, zero or nearest_away; any other narrowing nearest_even
    or zero."""
    invalid = "invalid rounding mode specified"
    allowed: tuple[str, ...]
    if dst == "f8E8M0FNU":
        allowed = ("zero", "positive_inf")
        message = f"{invalid} for conversion to f8E8M0FNU. Only 'zero' and 'positive_inf' are supported"
    elif dst in _LOW_PRECISION:
        allowed = ("nearest_even",)
        message = f"{invalid} for conversion to low-precision type. Only 'nearest_even' is supported"
    elif ftof_exact(src, dst):
        allowed = (*IEEE_MODES, "nearest_away")
        listed = ", ".join(f"'{m}'" for m in allowed)
        message = f"{invalid} for widening conversion. Only IEEE float rounding modes are supported: {listed}"
    elif (src, dst) == ("f64", "f32"):
        allowed = IEEE_MODES
        message = (
            f"{invalid} for conversion from f64 to f32. "
            "Only 'nearest_even', 'zero', 'negative_inf', and 'positive_inf' are supported"
        )
    elif (src, dst) == ("f32", "tf32"):
        allowed = ("nearest_even", "zero", "nearest_away")
        message = (
            f"{invalid} for conversion from f32 to tf32. Only 'nearest_even', 'zero', and 'nearest_away' are supported"
        )
    else:
        allowed = ("nearest_even", "zero")
        message = f"{invalid}. Only 'nearest_even' and 'zero' are supported for narrowing conversions to standard types"
    return allowed, message


def _set_rounding_fixes(v: Verifier, op: Operation, span: Span | None, modes: tuple[str, ...]) -> list[Fix]:
    """Fixes writing `rounding<mode>` for each of `modes`: in place of the mode written, or
    after the operand when none is (custom form only)."""
    if is_generic(v, op):
        return []
    if span is not None:
        where, text = span, "rounding<{}>"
    else:
        operand = op.operand_span(0)
        if operand is None:
            return []
        where, text = Span(operand.end, operand.end), " rounding<{}>"
    return [Fix(f"Use rounding<{m}>", (TextEdit(where, text.format(m)),)) for m in modes]


@op_verifier("ftoi")
def _ftoi(v: Verifier, op: Operation) -> None:
    mode = enum_keyword(op, "rounding_mode")
    if mode is not None and mode != "nearest_int_to_zero":
        _only_mode(v, op, "nearest_int_to_zero")


@op_verifier("itof")
def _itof(v: Verifier, op: Operation) -> None:
    dst = tile_of(op.results[0]) if op.results else None
    if dst is not None and isinstance(dst.element, T.FloatType) and dst.element.name == "f8E8M0FNU":
        v.fail(
            op,
            "integer to f8E8M0FNU conversion is not supported, please first convert to another float type",
            code="conversion-type",
        )
    mode = enum_keyword(op, "rounding_mode")
    if mode is not None and mode != "nearest_even":
        _only_mode(v, op, "nearest_even")


def _only_mode(v: Verifier, op: Operation, mode: str) -> None:
    span = rounding_span(v, op)
    v.fail(
        op,
        f"invalid rounding mode specified. Only '{mode}' is supported",
        at=span,
        code="rounding-mode",
        fixes=removal_fix(v, op, span, f"Remove the rounding mode (the default is `{mode}`)"),
    )
