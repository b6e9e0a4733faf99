"""Verifiers of the math ops: the modifiers they accept and the element types those need.

The generic checks (float operands, `source` and `result` of one type) come from the op
table; what is left is the rounding mode each op allows and the modifiers that only f32
supports (the shared rules live in `modifiers`):

* `exp`, `tanh`: `rounding<full>` (the default) or `rounding<approx>`; approx is f32 only.
  `tanh` reports a wrong mode but goes on to the approx check, as `cuda-tile-opt` does.
* `sqrt`: an IEEE direction or `approx`; then `flush_to_zero` and approx are f32 only.
* `exp2`, `rsqrt`: `flush_to_zero` is f32 only.
"""

from __future__ import annotations

from ..ir.core import Operation
from .engine import Verifier
from .modifiers import (
    IEEE_MODES,
    check_approx_full,
    check_div_sqrt_modifiers,
    check_flush_to_zero,
    check_rounding_mode,
    enum_keyword,
    removal_fix,
    rounding_span,
)
from .registry import op_verifier

# The modes exp and tanh accept; `full` is their default.
EXP_MODES: tuple[str, ...] = ("approx", "full")
SQRT_MODES: tuple[str, ...] = (*IEEE_MODES, "approx")


@op_verifier("exp")
def _exp(v: Verifier, op: Operation) -> None:
    mode = check_rounding_mode(v, op, EXP_MODES)
    check_approx_full(v, op, mode if mode == "approx" else None)


@op_verifier("tanh")
def _tanh(v: Verifier, op: Operation) -> None:
    mode = enum_keyword(op, "rounding_mode")
    if mode is not None and mode not in EXP_MODES:
        # Reported without stopping: cuda-tile-opt goes on to the approx check.
        span = rounding_span(v, op)
        v.emit(
            op,
            f"invalid rounding mode specified, expect one of [{', '.join(EXP_MODES)}]",
            at=span,
            code="rounding-mode",
            fixes=removal_fix(v, op, span, "Remove the rounding mode (tanh defaults to `full`)"),
        )
    check_approx_full(v, op, mode if mode == "approx" else None)


@op_verifier("exp2", "rsqrt")
def _ftz_only(v: Verifier, op: Operation) -> None:
    check_flush_to_zero(v, op)


@op_verifier("sqrt")
def _sqrt(v: Verifier, op: Operation) -> None:
    # `full` is rejected with the other foreign modes, so of the approx/full checks only
    # "approx needs f32" can fire, after the flush_to_zero one.
    check_div_sqrt_modifiers(v, op, SQRT_MODES)
