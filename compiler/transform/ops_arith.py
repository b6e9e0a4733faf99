"""Rewrites of arithmetic ops: `addf` operand order and `select` folds and patterns
(those of MLIR's `arith.select`, which cuda_tile's `select` follows)."""

from __future__ import annotations

from ..dialect import enum_for_kind
from ..ir import attributes as A
from ..ir.core import Operation
from ..ir.types import IntegerType, TileType
from .fold import fold_to_constant
from .registry import pattern
from .rewriter import Rewriter, defining, is_all_ones, is_i1_tile, is_splat_of

# ------------------------------------------------------------------------------------ addf


@pattern("addf")
def _addf_multiply_first(op: Operation, rw: Rewriter) -> bool:
    """addf(x, mulf(..)) -> addf(mulf(..), x) when x is no product: the product on the left
    is the shape later FMA fusion looks for. Addition commutes exactly (also in IEEE)."""
    lhs, rhs = op.operands
    if defining(rhs, "mulf") is None or defining(lhs, "mulf") is not None:
        return False
    rw.set_operand(op, 0, rhs)
    rw.set_operand(op, 1, lhs)
    return True


# ---------------------------------------------------------------------------------- select


@pattern("select")
def _select_same_values(op: Operation, rw: Rewriter) -> bool:
    """select(c, x, x) -> x"""
    _, t, f = op.operands
    if t is not f:
        return False
    rw.replace(op, [t])
    return True


@pattern("select")
def _select_constant_condition(op: Operation, rw: Rewriter) -> bool:
    """select(true, a, b) -> a; select(false, a, b) -> b"""
    cond, t, f = op.operands
    if is_splat_of(cond, True):
        rw.replace(op, [t])
        return True
    if is_splat_of(cond, False):
        rw.replace(op, [f])
        return True
    return False


@pattern("select")
def _select_i1_identity(op: Operation, rw: Rewriter) -> bool:
    """select(c, true, false) -> c (for i1 results of c's type)"""
    cond, t, f = op.operands
    if cond.type != op.results[0].type or not is_splat_of(t, True) or not is_splat_of(f, False):
        return False
    rw.replace(op, [cond])
    return True


@pattern("select")
def _select_of_compare(op: Operation, rw: Rewriter) -> bool:
    """select(cmpi eq a b, a, b) -> b; select(cmpi ne a b, a, b) -> a (either operand order):
    where the condition picks, both choices are the same value."""
    cond, t, f = op.operands
    cmp = defining(cond, "cmpi")
    if cmp is None:
        return False
    predicate = cmp.keyword("comparison_predicate")
    if predicate not in ("equal", "not_equal"):
        return False
    a, b = cmp.operands
    if not ((a is t and b is f) or (a is f and b is t)):
        return False
    rw.replace(op, [t if predicate == "not_equal" else f])
    return True


@pattern("select")
def _select_fold_constants(op: Operation, rw: Rewriter) -> bool:
    """select of constants -> the constant the interpreter computes"""
    return fold_to_constant(op, rw)


@pattern("select")
def _select_of_select(op: Operation, rw: Rewriter) -> bool:
    """select(c, select(c, a, b), d) -> select(c, a, d);
    select(c, a, select(c, b, d)) -> select(c, a, d)"""
    cond, t, f = op.operands
    inner = defining(t, "select")
    if inner is not None and inner.operands[0] is cond:
        rw.set_operand(op, 1, inner.operands[1])
        return True
    inner = defining(f, "select")
    if inner is not None and inner.operands[0] is cond:
        rw.set_operand(op, 2, inner.operands[2])
        return True
    return False


@pattern("select")
def _select_i1_negation(op: Operation, rw: Rewriter) -> bool:
    """select(c, false, true) -> xori(c, true)"""
    cond, t, f = op.operands
    result = op.results[0].type
    if cond.type != result or not is_splat_of(t, False) or not is_splat_of(f, True):
        return False
    rw.replace(op, [_negate(cond, op, rw)])
    return True


@pattern("select")
def _select_of_negated_condition(op: Operation, rw: Rewriter) -> bool:
    """select(xori(c, true), a, b) -> select(c, b, a)"""
    cond, t, f = op.operands
    inverted = _negated(cond)
    if inverted is None:
        return False
    rw.set_operand(op, 0, inverted)
    rw.set_operand(op, 1, f)
    rw.set_operand(op, 2, t)
    return True


@pattern("select")
def _select_zero_one(op: Operation, rw: Rewriter) -> bool:
    """select(c, 1, 0) -> exti(c) unsigned; select(c, 0, 1) -> exti(xori(c, true)) unsigned"""
    cond, t, f = op.operands
    result = op.results[0].type
    if not isinstance(result, TileType) or not isinstance(result.element, IntegerType) or result.element.width == 1:
        return False
    if not is_i1_tile(cond.type) or getattr(cond.type, "shape", None) != result.shape:
        return False
    if is_splat_of(t, 1) and is_splat_of(f, 0):
        source = cond
    elif is_splat_of(t, 0) and is_splat_of(f, 1):
        source = _negate(cond, op, rw)
    else:
        return False
    signedness = enum_for_kind("enum:signedness")
    assert signedness is not None
    props = {"signedness": A.EnumAttr(signedness, "unsigned")}
    rw.replace(op, [rw.create1("exti", [source], result, properties=props, before=op)])
    return True


def _negated(value) -> object | None:
    """x when `value` is xori(x, true) (either operand order), else None."""
    xor = defining(value, "xori")
    if xor is None or not is_i1_tile(value.type):
        return None
    a, b = xor.operands
    if is_all_ones(b):
        return a
    if is_all_ones(a):
        return b
    return None


def _negate(value, before: Operation, rw: Rewriter):
    """xori(value, true) built before `before`."""
    true = rw.constant(True, value.type, before)
    return rw.create1("xori", [value, true], value.type, before=before)
