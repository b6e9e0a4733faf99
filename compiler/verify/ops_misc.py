"""`assume` and its predicates, `print_tko`'s format string, and `global`.

- `assume` (on entrance): the predicate must fit the constrained value: `div_by` needs a
  power-of-two divisor and an integer/pointer tile or a tensor_view, `every N along D`
  only on ranked tiles and within the tile; `same_elements` one value per dimension of an
  integer/pointer tile; `bounded` an integer tile and bounds within its signed range.
- `print_tko`: one operand per `%` conversion of the format string (`%%` is a literal).
- `global`: the initial value is a rank-1 tile. (`get_global`'s symbol is checked with the
  module's symbol table, in `structure.py`.)
"""

from __future__ import annotations

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation
from .engine import Verifier
from .registry import op_verifier

# ---------------------------------------------------------------------------------------------
# assume

_DIV_BY = "'cuda_tile.div_by'"
_SAME_ELEMENTS = "'cuda_tile.same_elements'"
_BOUNDED = "'cuda_tile.bounded'"
# Divisors above 2^62 are a limit of NVIDIA's implementation.
_MAX_DIVISOR = 1 << 62


def _int_or_pointer(t: T.Type) -> bool:
    return isinstance(t, T.IntegerType | T.PointerType)


def _check_div_by(v: Verifier, op: Operation, pred: A.DivByAttr, t: T.Type) -> None:
    d = pred.divisor
    if d <= 0 or d & (d - 1):
        v.fail(op, f"{_DIV_BY} divisor must be a power of 2", code="assume-predicate")
    if (pred.every is None) != (pred.along is None):
        v.fail(op, f"{_DIV_BY} 'every'/'along' must be used in combination", code="assume-predicate")
    if d > _MAX_DIVISOR:
        v.fail(op, f"{_DIV_BY} divisor is too large", code="assume-predicate")
    if isinstance(t, T.TensorViewType):
        if pred.every is not None:
            v.fail(
                op,
                f"{_DIV_BY} 'every'/'along' cannot be used if the constrained value is a tensor_view",
                code="assume-predicate",
            )
        return
    if not isinstance(t, T.TileType):
        v.fail(
            op, f"{_DIV_BY} is valid only for tile of integer/pointer or tensor_view values", code="assume-predicate"
        )
    if not t.shape and pred.every is not None:
        v.fail(
            op,
            f"{_DIV_BY} 'every'/'along' cannot be used if the constrained value is a 0D tile",
            code="assume-predicate",
        )
    if not _int_or_pointer(t.element):
        v.fail(
            op, f"{_DIV_BY} is valid only for tile of integer/pointer or tensor_view values", code="assume-predicate"
        )
    if pred.every is None or pred.along is None:
        return
    rank = len(t.shape)
    if pred.along < 0 or pred.along >= rank:
        v.fail(
            op,
            f"{_DIV_BY} every_dim ({pred.along}) must be >= 0 and < tile rank ({rank})",
            code="assume-predicate",
        )
    size = t.shape[pred.along]
    if pred.every < 0 or pred.every > size:
        v.fail(
            op,
            f"expected {_DIV_BY} every_dim to be within 0 and the size of the respective dimension ({size})",
            code="assume-predicate",
        )


def _check_same_elements(v: Verifier, op: Operation, pred: A.SameElementsAttr, t: T.Type) -> None:
    if not isinstance(t, T.TileType) or not _int_or_pointer(t.element):
        v.fail(op, f"{_SAME_ELEMENTS} is valid only for tile of integer/pointer values", code="assume-predicate")
    rank = len(t.shape)
    if len(pred.values) != rank:
        v.fail(
            op,
            f"expected number of values in {_SAME_ELEMENTS} ({len(pred.values)}) to match rank of "
            f"constrained tile ({rank})",
            code="assume-predicate",
        )
    for i, (value, size) in enumerate(zip(pred.values, t.shape)):
        if value < 0 or (size is not None and value > size):
            v.fail(
                op,
                f"expected {_SAME_ELEMENTS} value {i} to be within 0 and the size of the respective dimension ({size})",
                code="assume-predicate",
            )


def _check_bounded(v: Verifier, op: Operation, pred: A.BoundedAttr, t: T.Type) -> None:
    if not isinstance(t, T.TileType) or not isinstance(t.element, T.IntegerType):
        v.fail(op, f"{_BOUNDED} is valid only for tile of integer values", code="assume-predicate")
    width = t.element.width
    low, high = -(1 << (width - 1)), (1 << (width - 1)) - 1
    if pred.lb is not None and not low <= pred.lb <= high:
        v.fail(op, f"{_BOUNDED} expects lower bound to be within [{low}, {high}]", code="assume-predicate")
    if pred.ub is not None and not low <= pred.ub <= high:
        v.fail(op, f"{_BOUNDED} expects upper bound to be within [{low}, {high}]", code="assume-predicate")
    if pred.lb is not None and pred.ub is not None and pred.lb > pred.ub:
        v.fail(
            op,
            f"{_BOUNDED} expects lower bound to be less than or equal to upper bound",
            code="assume-predicate",
        )


@op_verifier("assume")
def _assume(v: Verifier, op: Operation) -> None:
    pred = op.properties.get("predicate")
    if not op.operands:
        return
    t = op.operands[0].type
    if isinstance(pred, A.DivByAttr):
        _check_div_by(v, op, pred, t)
    elif isinstance(pred, A.SameElementsAttr):
        _check_same_elements(v, op, pred, t)
    elif isinstance(pred, A.BoundedAttr):
        _check_bounded(v, op, pred, t)


# ---------------------------------------------------------------------------------------------
# print_tko

# Characters that end a printf conversion (`%S` is CUDA's wide string).
_CONVERSION_ENDS = frozenset("diuoxXeEfFgGaAcsSpn%")


def count_conversions(fmt: str) -> int | None:
    """How many operands the format string consumes; None when a `%` is never closed."""
    count = 0
    pos = 0
    while pos < len(fmt):
        if fmt[pos] != "%":
            pos += 1
            continue
        end = next((i for i in range(pos + 1, len(fmt)) if fmt[i] in _CONVERSION_ENDS), None)
        if end is None:
            return None
        if end == pos + 1 and fmt[end] == "%":
            pos += 2  # `%%`, a literal percent sign
            continue
        count += 1
        pos += 1
    return count


@op_verifier("print_tko")
def _print_tko(v: Verifier, op: Operation) -> None:
    fmt = op.properties.get("str")
    if not isinstance(fmt, A.StringAttr):
        return
    expected = count_conversions(fmt.value)
    if expected is None:
        v.fail(op, "found unterminated format expression", code="print-format")
    try:
        args = op.operand_group("args")
    except (KeyError, IndexError, TypeError):
        return
    if expected != len(args):
        v.fail(op, f"incorrect number of operands: expected {expected}, found {len(args)}", code="print-format")


# ---------------------------------------------------------------------------------------------
# global


@op_verifier("global")
def _global(v: Verifier, op: Operation) -> None:
    value = op.properties.get("value")
    t = getattr(value, "type", None)
    if isinstance(t, T.TileType) and len(t.shape) != 1:
        v.fail(op, "type must have rank 1", code="global-rank")
