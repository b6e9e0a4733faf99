"""Rewrites of `if` (those of MLIR's `scf.if`, extended to branches that leave through
`return`, `continue` or `break` instead of yielding).

A branch "exits" when its terminator is not `yield`: the ops after the `if` never run
on that path, which several rewrites rely on.
"""

from __future__ import annotations

from ..ir.core import Block, Operation, OpResult, Value
from ..ir.types import TileType
from .registry import pattern
from .rewriter import Rewriter, defined_outside, is_splat_of

_YIELD = "cuda_tile.yield"


def _block(op: Operation, index: int) -> Block | None:
    """The block of the `if`'s then (0) or else (1) region, None when absent."""
    return op.regions[index].entry_block if index < len(op.regions) else None


def _yields(block: Block | None) -> bool:
    return block is not None and block.terminator is not None and block.terminator.name == _YIELD


def _exits(block: Block | None) -> bool:
    return block is not None and block.terminator is not None and block.terminator.name != _YIELD


def _within(op: Operation, block: Block) -> bool:
    """Whether `op` is in `block` or nested in an op of it."""
    b = op.parent
    while b is not None:
        if b is block:
            return True
        owner = b.parent.parent if b.parent is not None else None
        b = owner.parent if owner is not None else None
    return False


def _is_empty(block: Block | None) -> bool:
    """A missing branch, or one that only yields nothing."""
    return block is None or (len(block.ops) == 1 and block.ops[0].name == _YIELD and not block.ops[0].operands)


def _drop_results(op: Operation, drop: set[int], rw: Rewriter) -> None:
    """Remove the (unused) results at `drop` and the matching operands of the yields."""
    keep = [i for i in range(len(op.results)) if i not in drop]
    for index in (0, 1):
        block = _block(op, index)
        if _yields(block):
            term = block.terminator  # type: ignore[union-attr]
            rw.set_yield_operands(term, [term.operands[i] for i in keep])  # type: ignore[union-attr]
    rw.drop_results(op, keep)


@pattern("if")
def _if_constant_condition(op: Operation, rw: Rewriter) -> bool:
    """if true {A} else {B} -> A (and B for false), inlined in place of the `if`."""
    cond = op.operands[0]
    if is_splat_of(cond, True):
        taken = _block(op, 0)
    elif is_splat_of(cond, False):
        taken = _block(op, 1)
    else:
        return False
    if taken is None:
        rw.erase(op)  # no else: nothing runs (an `if` without else has no results)
        return True
    term = taken.terminator
    assert term is not None
    if term.name == _YIELD:
        values = list(term.operands)
        rw.move_ops_before(taken.ops[:-1], op)
        rw.replace(op, values)
    else:
        # The branch leaves (return/continue/break): what follows the `if` is unreachable.
        rw.erase_after(op)
        rw.move_ops_before(taken.ops, op)
        rw.erase(op)
    return True


@pattern("if")
def _if_both_branches_exit(op: Operation, rw: Rewriter) -> bool:
    """if c {A; return} else {B; return}; rest -> if c {A; return}; B; return"""
    then, other = _block(op, 0), _block(op, 1)
    if not _exits(then) or not _exits(other):
        return False
    rw.erase_after(op)
    block = op.parent
    assert block is not None and other is not None
    rw.move_ops_to_end(other.ops, block)
    op.regions[1].blocks.clear()
    _drop_results(op, set(range(len(op.results))), rw)
    rw.changed(op)
    return True


@pattern("if")
def _if_forward_results(op: Operation, rw: Rewriter) -> bool:
    """A result that every yielding branch yields as the same value from outside the `if`
    is that value (the branches that exit never produce it)."""
    if not op.results:
        return False
    yields = [b.terminator for b in (_block(op, 0), _block(op, 1)) if _yields(b)]
    if not yields:
        return False
    drop = set()
    for i, r in enumerate(op.results):
        values = {id(t.operands[i]): t.operands[i] for t in yields}  # type: ignore[union-attr]
        if len(values) == 1:
            (value,) = values.values()
            if defined_outside(value, op):
                rw.replace_uses(r, value)
                drop.add(i)
    if not drop:
        return False
    _drop_results(op, drop, rw)
    return True


@pattern("if")
def _if_to_select(op: Operation, rw: Rewriter) -> bool:
    """if c {yield a} else {yield b} -> select(c, a, b) for each tile result whose values
    both come from outside the `if` (the others stay in a smaller `if`)."""
    then, other = _block(op, 0), _block(op, 1)
    if not op.results or not _yields(then) or not _yields(other):
        return False
    cond = op.operands[0]
    t_vals, f_vals = then.terminator.operands, other.terminator.operands  # type: ignore[union-attr]
    conditions: dict[tuple[int, ...], Value] = {}
    drop = set()
    for i, r in enumerate(op.results):
        t, f = t_vals[i], f_vals[i]
        if not isinstance(r.type, TileType) or not defined_outside(t, op) or not defined_outside(f, op):
            continue
        rw.replace_uses(
            r, rw.create1("select", [_condition_for(cond, r.type, conditions, op, rw), t, f], r.type, before=op)
        )
        drop.add(i)
    if not drop:
        return False
    _drop_results(op, drop, rw)
    return True


def _condition_for(cond: Value, t: TileType, made: dict, op: Operation, rw: Rewriter) -> Value:
    """The scalar i1 `cond` as a tile of `t`'s shape (reshape to rank, then broadcast)."""
    if not t.shape:
        return cond
    shaped = made.get(t.shape)
    if shaped is None:
        element = cond.type.element  # type: ignore[attr-defined]
        ones = rw.create1("reshape", [cond], TileType((1,) * len(t.shape), element), before=op)
        shaped = rw.create1("broadcast", [ones], TileType(t.shape, element), before=op)
        made[t.shape] = shaped
    return shaped


@pattern("if")
def _if_negated_condition(op: Operation, rw: Rewriter) -> bool:
    """if xori(c, true) {A} else {B} -> if c {B} else {A}"""
    from .ops_arith import _negated

    inner = _negated(op.operands[0])
    if inner is None:
        return False
    if _block(op, 1) is None:
        if op.results:
            return False
        # No else: the new then-branch does nothing.
        block = Block()
        op.regions[1].add_block(block)
        term = Operation(_YIELD, op.regions[0].entry_block.terminator.opdef)  # type: ignore[union-attr]
        term.operand_segments = (0,)
        block.append(term)
    op.regions[0], op.regions[1] = op.regions[1], op.regions[0]
    rw.set_operand(op, 0, inner)
    return True


@pattern("if")
def _if_drop_empty_else(op: Operation, rw: Rewriter) -> bool:
    """if c {A} else {} -> if c {A}"""
    other = _block(op, 1)
    if op.results or other is None or not _is_empty(other):
        return False
    rw.erase(other.ops[0])
    op.regions[1].blocks.clear()
    rw.changed(op)
    return True


@pattern("if")
def _if_combine_adjacent(op: Operation, rw: Rewriter) -> bool:
    """if c {A} else {B}; if c {C} else {D} -> if c {A; C} else {B; D}, one `if` with the
    results of both (uses of the first's results in C and D become the yielded values)."""
    block = op.parent
    if block is None:
        return False
    index = block.ops.index(op)
    if index + 1 >= len(block.ops):
        return False
    nxt = block.ops[index + 1]
    if nxt.name != op.name or nxt.operands[0] is not op.operands[0]:
        return False
    first_results = list(op.results)
    for index_ in (0, 1):
        _merge_branch(op, nxt, index_, first_results, rw)
    for r in list(nxt.results):
        merged = OpResult(op, len(op.results), r.type)
        op.results.append(merged)
        rw.replace_uses(r, merged)
    rw.erase(nxt)
    rw.changed(op)
    return True


def _merge_branch(op: Operation, nxt: Operation, index: int, first_results: list, rw: Rewriter) -> None:
    mine, theirs = _block(op, index), _block(nxt, index)
    if theirs is None:
        return  # the second `if` does nothing on this path (and has no results)
    if mine is None:
        # The first `if` has no else (nor results): the second's else becomes it.
        mine = Block()
        op.regions[index].add_block(mine)
        rw.move_ops_to_end(theirs.ops, mine)
        return
    term = mine.terminator
    assert term is not None
    if term.name != _YIELD:
        # This path has left already: the second branch never runs on it.
        for dead in reversed(list(theirs.ops)):
            rw.erase(dead)
        return
    yielded = list(term.operands)
    for r, value in zip(first_results, yielded, strict=True):
        rw.replace_uses(r, value, where=lambda user: _within(user, theirs))
    rw.erase(term)
    their_term = theirs.terminator
    rw.move_ops_to_end(theirs.ops, mine)
    if their_term is not None and their_term.name == _YIELD:
        rw.set_yield_operands(their_term, yielded + list(their_term.operands))


@pattern("if")
def _if_combine_nested(op: Operation, rw: Rewriter) -> bool:
    """if a { if b {A} } -> if andi(a, b) {A} (neither with results or an else branch)."""
    then = _block(op, 0)
    if op.results or then is None or not _is_empty(_block(op, 1)):
        return False
    if len(then.ops) != 2 or then.ops[0].name != op.name or then.ops[1].name != _YIELD:
        return False
    inner = then.ops[0]
    inner_then = _block(inner, 0)
    if inner.results or inner_then is None or not _is_empty(_block(inner, 1)):
        return False
    if not defined_outside(inner.operands[0], op):
        return False
    cond = op.operands[0]
    both = rw.create1("andi", [cond, inner.operands[0]], cond.type, before=op)
    rw.set_operand(op, 0, both)
    rw.erase(then.ops[1])
    rw.move_ops_to_end(inner_then.ops, then)
    rw.erase(inner)
    return True
