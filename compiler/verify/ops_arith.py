"""Verifiers of the element-wise arithmetic, comparison and select ops.

What the op table drives (operand/result constraints, `AllTypesMatch`, the i1 result of
the comparisons) is checked by the engine; this module adds the rules of the ops' own
`verify()`:

- addf, subf, mulf, fma: an IEEE rounding mode; `flush_to_zero` on f32 only;
- divf: one of the IEEE modes, `approx` or `full`; `flush_to_zero`, `approx`, `full` on f32 only;
- maxf, minf: `flush_to_zero` on f32 only;
- divi: a directed rounding mode, and no `rounding<negative_inf>` with `unsigned`;
- negi: no `no_unsigned_wrap` flag (negation is a signed operation);
- select: no f4E2M1FN elements (a sub-byte type select cannot operate on).
"""

from __future__ import annotations

from . import modifiers as M
from .registry import op_verifier
from .types import is_f4

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from ..ir.core import Operation
    from .engine import Verifier


@op_verifier("addf", "subf", "mulf", "fma")
def _ieee_float_arith(v: Verifier, op: Operation) -> None:
    M.check_ieee_arith(v, op)


@op_verifier("divf")
def _divf(v: Verifier, op: Operation) -> None:
    M.check_div_sqrt_modifiers(v, op, M.DIVF_MODES)


@op_verifier("maxf", "minf")
def _maxf_minf(v: Verifier, op: Operation) -> None:
    M.check_flush_to_zero(v, op)


@op_verifier("divi")
def _divi(v: Verifier, op: Operation) -> None:
    mode = M.check_rounding_mode(v, op, M.DIVI_MODES, attr="rounding")
    if mode == "negative_inf" and M.enum_keyword(op, "signedness") == "unsigned":
        v.fail(
            op,
            "rounding mode 'negative_inf' is not allowed with 'unsigned' flag",
            at=M.rounding_span(v, op),
            code="rounding-mode",
        )


@op_verifier("negi")
def _negi(v: Verifier, op: Operation) -> None:
    M.check_overflow_not(v, op, ("no_unsigned_wrap",))


@op_verifier("select")
def _select(v: Verifier, op: Operation) -> None:
    element = M.result_element(op)
    if is_f4(element):
        v.fail(op, "cannot operate on sub-byte type F4E2M1FN", code="sub-byte-type")
