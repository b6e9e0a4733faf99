"""How rewrites change the IR: creating, replacing, moving and erasing ops, and the
constant pool.

`compiler.ir.core` holds the IR as plain lists with use lists on every value; these
helpers keep the use lists right and tell the driver which ops to look at again.

Constants follow MLIR's `OperationFolder`: one constant op per (value, type) in each
region whose parent is isolated from above (a kernel, a function), kept at the start
of that region's entry block. Duplicates are replaced by the pooled op, and constants
in nested blocks move up, so that rewrites see them as defined outside an `if`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..dialect import OPS
from ..interp import dtypes
from ..ir import attributes as A
from ..ir.core import Block, BlockArgument, Operation, OpResult, Region, Value
from ..ir.types import FloatType, IntegerType, TileType, Type

# -------------------------------------------------------------------------------- queries


def defining(value: Value, mnemonic: str) -> Operation | None:
    """The op defining `value` when it is a `cuda_tile.<mnemonic>`, else None."""
    op = value.defining_op
    return op if op is not None and op.name == "cuda_tile." + mnemonic else None


def constant_array(value: Value) -> np.ndarray | None:
    """The elements of `value` when a `constant` op defines it (in the tile's shape), as the
    interpreter holds them (`compiler.interp.dtypes`), else None."""
    op = defining(value, "constant")
    if op is None:
        return None
    attr = op.attr("value")
    t = value.type
    if not isinstance(attr, A.DenseElementsAttr) or not isinstance(t, TileType):
        return None
    return dtypes.array_from_bits(attr.values, t, t.shape)


def is_splat_of(value: Value, scalar: int | bool) -> bool:
    """Whether `value` is a constant whose every element equals `scalar` (True for i1)."""
    a = constant_array(value)
    return a is not None and a.size > 0 and bool(np.all(a == scalar))


def is_all_ones(value: Value) -> bool:
    """Whether `value` is a constant with every bit set (`true` for i1, -1 for integers)."""
    t = value.type
    if not isinstance(t, TileType) or not isinstance(t.element, IntegerType):
        return False
    return is_splat_of(value, True if t.element.width == 1 else -1)


def is_i1_tile(t: Type) -> bool:
    return isinstance(t, TileType) and isinstance(t.element, IntegerType) and t.element.width == 1


def dense_attr(array: np.ndarray, t: TileType) -> A.DenseElementsAttr:
    """The inverse of `dtypes.array_from_bits`: the attribute a `constant` of type `t` holding
    `array` carries (signed values for integers, 0/1 for i1, bit patterns for floats)."""
    e = t.element
    flat = np.ascontiguousarray(np.asarray(array).reshape(-1))
    if isinstance(e, FloatType):
        if e.name == "tf32":
            values = tuple(int(b) >> 13 for b in flat.astype(np.float32).view(np.uint32))
        else:
            values = tuple(int(b) for b in dtypes.as_unsigned(flat.view(f"i{flat.dtype.itemsize}")))
    else:
        values = tuple(int(v) for v in flat.astype(np.int64))
    if values and all(v == values[0] for v in values):
        return A.DenseElementsAttr(t, values[:1], splat=True)
    return A.DenseElementsAttr(t, values, splat=False)


def inside(op: Operation, ancestor: Operation) -> bool:
    """Whether `op` is nested (at any depth) in one of `ancestor`'s regions."""
    parent = op.parent_op
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent_op
    return False


def defined_outside(value: Value, op: Operation) -> bool:
    """Whether `value` is defined outside `op` (so it can be used in place of `op`)."""
    if isinstance(value, OpResult):
        return value.owner is not op and not inside(value.owner, op)
    if isinstance(value, BlockArgument):
        region = value.owner.parent
        owner = region.parent if region is not None else None
        return owner is not None and owner is not op and not inside(owner, op)
    return True


def _constant_key(op: Operation) -> tuple | None:
    attr = op.attr("value")
    if not isinstance(attr, A.DenseElementsAttr) or not op.results:
        return None
    values = attr.values
    if values and all(v == values[0] for v in values):
        values = values[:1]
    return (op.results[0].type, values)


# Ops whose bodies keep their own constants: a `reduce`/`scan` body is a combiner that the
# Triton lowering emits as a separate function, which cannot capture the kernel's values.
_OWN_CONSTANTS = frozenset({"cuda_tile.reduce", "cuda_tile.scan"})


def _insertion_region(block: Block | None) -> Region | None:
    """The region constants of `block` are pooled in: the nearest one whose parent is
    isolated from above (MLIR's `OperationFolder::getInsertionRegion`)."""
    while block is not None and block.parent is not None:
        region = block.parent
        parent = region.parent
        if parent is None or parent.is_isolated_from_above or parent.parent is None:
            return region
        if parent.name in _OWN_CONSTANTS:
            return region
        block = parent.parent
    return None


# -------------------------------------------------------------------------------- rewriter


class Rewriter:
    """The only way patterns change the IR. `on_new` / `on_changed` / `on_erased` tell the
    driver which ops to revisit (or forget)."""

    def __init__(
        self,
        on_new: Callable[[Operation], None] = lambda op: None,
        on_changed: Callable[[Operation], None] = lambda op: None,
        on_erased: Callable[[Operation], None] = lambda op: None,
    ) -> None:
        self.on_new = on_new
        self.on_changed = on_changed
        self.on_erased = on_erased
        self.pools: dict[int, dict[tuple, Operation]] = {}
        self.pooled: set[int] = set()  # ids of the constant ops the pool owns
        self.changes = 0  # edits made, so that the driver knows when it has reached a fixed point

    def changed(self, op: Operation) -> None:
        """Note an edit of `op` (patterns that edit regions directly call this too)."""
        self.changes += 1
        self.on_changed(op)

    # -- building ----------------------------------------------------------------------

    def create(
        self,
        mnemonic: str,
        operands: Sequence[Value],
        result_types: Sequence[Type],
        properties: dict[str, A.Attribute] | None = None,
        *,
        before: Operation,
    ) -> Operation:
        """A new `cuda_tile.<mnemonic>` op inserted just before `before`."""
        opdef = OPS["cuda_tile." + mnemonic]
        op = Operation(opdef.name, opdef, list(operands), list(result_types), dict(properties or {}))
        if opdef.has_segments:
            # Only single and one variadic group occur among the ops rewrites build.
            op.operand_segments = tuple(1 if o.arity == "single" else len(operands) for o in opdef.operands)
        op.location = before.location
        self.insert_before(op, before)
        self.changes += 1
        self.on_new(op)
        return op

    def create1(self, mnemonic: str, operands: Sequence[Value], result_type: Type, **kw) -> Value:
        """Like `create`, for an op with one result: that result."""
        return self.create(mnemonic, operands, [result_type], **kw).results[0]

    def constant(self, array: np.ndarray | bool | int, t: TileType, near: Operation) -> Value:
        """A constant of type `t` (a scalar is splat) usable at `near`: the pooled one with
        that value, or a new one at the start of the pool's block."""
        arr = np.broadcast_to(np.asarray(array), t.shape)
        attr = dense_attr(arr, t)
        region = _insertion_region(near.parent)
        key = (t, attr.values)
        pool = self.pools.setdefault(id(region), {})
        existing = pool.get(key)
        if existing is not None and existing.parent is not None:
            return existing.results[0]
        opdef = OPS["cuda_tile.constant"]
        op = Operation(opdef.name, opdef, [], [t], {"value": attr})
        block = region.entry_block if region is not None else near.parent
        assert block is not None
        op.parent = block
        block.ops.insert(0, op)
        pool[key] = op
        self.pooled.add(id(op))
        self.changes += 1
        self.on_new(op)
        return op.results[0]

    def pool_constant(self, op: Operation) -> bool:
        """Put an existing constant op in the pool (MLIR's `insertKnownConstant`). Returns
        False when an equal pooled constant replaced it (and `op` is gone)."""
        key = _constant_key(op)
        region = _insertion_region(op.parent)
        if key is None or region is None or region.entry_block is None:
            return True
        pool = self.pools.setdefault(id(region), {})
        existing = pool.get(key)
        if existing is op:
            return True
        if existing is not None and existing.parent is not None:
            self.replace(op, [existing.results[0]])
            return False
        block = region.entry_block
        ops = block.ops
        if op.parent is not block or (ops[0] is not op and id(ops[ops.index(op) - 1]) not in self.pooled):
            self.detach(op)
            op.parent = block
            ops.insert(0, op)
            self.changes += 1
        pool[key] = op
        self.pooled.add(id(op))
        return True

    # -- editing -----------------------------------------------------------------------

    @staticmethod
    def insert_before(op: Operation, anchor: Operation) -> None:
        block = anchor.parent
        assert block is not None
        op.parent = block
        block.ops.insert(block.ops.index(anchor), op)

    @staticmethod
    def detach(op: Operation) -> None:
        """Take `op` out of its block (keeping its operands and uses)."""
        if op.parent is not None:
            op.parent.ops.remove(op)
            op.parent = None

    def set_operand(self, op: Operation, index: int, value: Value) -> None:
        old = op.operands[index]
        try:
            old.uses.remove((op, index))
        except ValueError:
            pass
        op.operands[index] = value
        value.uses.append((op, index))
        self.changed(op)
        if old.defining_op is not None:
            self.on_changed(old.defining_op)  # it may have become dead

    def replace_uses(self, old: Value, new: Value, where: Callable[[Operation], bool] | None = None) -> None:
        """Make the users of `old` (those `where` accepts) use `new` instead."""
        for user, index in list(old.uses):
            if where is None or where(user):
                self.set_operand(user, index, new)

    def replace(self, op: Operation, values: Sequence[Value]) -> None:
        """Replace the results of `op` by `values` and erase it."""
        for r, v in zip(op.results, values, strict=True):
            if v is not r:
                self.replace_uses(r, v)
        self.erase(op)

    def erase(self, op: Operation) -> None:
        """Erase `op` with everything nested in it; its results must be unused."""
        for inner in reversed(list(op.walk())):
            for i, v in enumerate(inner.operands):
                try:
                    v.uses.remove((inner, i))
                except ValueError:
                    pass
                if v.defining_op is not None:
                    self.on_changed(v.defining_op)
            inner.operands = []
            self.pooled.discard(id(inner))
            self.on_erased(inner)
        self.detach(op)
        self.changes += 1

    def erase_after(self, op: Operation) -> None:
        """Erase every op after `op` in its block (they became unreachable), last first."""
        block = op.parent
        assert block is not None
        tail = block.ops[block.ops.index(op) + 1 :]
        # Last first: the users of a value come after it (or inside it), so they are gone
        # before the value's definition is erased.
        for dead in reversed(tail):
            self.erase(dead)

    def move_ops_before(self, ops: Iterable[Operation], anchor: Operation) -> None:
        for op in list(ops):
            self.detach(op)
            self.insert_before(op, anchor)
            self.changed(op)

    def move_ops_to_end(self, ops: Iterable[Operation], block: Block) -> None:
        for op in list(ops):
            self.detach(op)
            op.parent = block
            block.ops.append(op)
            self.changed(op)

    def drop_results(self, op: Operation, keep: Sequence[int]) -> None:
        """Keep only the results of `op` at the indices `keep` (the others must be unused)."""
        kept = [op.results[i] for i in keep]
        for i, r in enumerate(kept):
            r.index = i
        op.results = kept
        self.changed(op)

    def set_yield_operands(self, term: Operation, values: Sequence[Value]) -> None:
        """Give a variadic terminator (`yield`, `return`, `continue`, `break`) new operands."""
        for v in term.operands:
            if v.defining_op is not None:
                self.on_changed(v.defining_op)
        term.set_operands(list(values))
        if term.opdef is not None and term.opdef.has_segments:
            term.operand_segments = (len(values),)
        self.changed(term)
