"""The canonicalizer: apply the registered rewrites until none matches, as MLIR's greedy
pattern driver does for `--canonicalize`.

One sweep: walk the module in pre-order, pooling constants (`Rewriter.pool_constant`),
then visit each op from a worklist: erase it when it is trivially dead (no uses and no
effects), else try its patterns; whatever a rewrite touches goes back on the worklist.
Sweeps repeat until one changes nothing (at most `max_sweeps`).
"""

from __future__ import annotations

from ..ir.core import Block, Module, Operation
from .registry import patterns_for
from .rewriter import Rewriter

# A pattern that claims success without changing anything would loop forever; no real
# module needs anywhere near this many visits per op.
_VISITS_PER_OP = 64


def is_removable(op: Operation) -> bool:
    """Whether erasing `op` (when its results are unused) changes nothing else: it has no
    memory or control effects (MLIR's `wouldOpBeTriviallyDead`)."""
    opdef = op.opdef
    if opdef is None:
        return False  # an unregistered op may do anything
    traits = opdef.traits
    if "Terminator" in traits:
        return False
    if "Pure" in traits or "NoMemoryEffect" in traits:
        return True
    if "RecursiveMemoryEffects" in traits:
        # An `if`/`for` is as pure as its body; a nested `return`/`break`/`continue`
        # transfers control, so a body holding one keeps the op alive.
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    if inner.name == "cuda_tile.yield":
                        continue
                    if inner.name == "cuda_tile.continue" and op.name == "cuda_tile.for" and inner.parent_op is op:
                        continue  # a loop's own back edge
                    if not is_removable(inner):
                        return False
        return True
    return False


def is_trivially_dead(op: Operation) -> bool:
    return all(not r.uses for r in op.results) and is_removable(op)


def canonicalize(module: Module, max_sweeps: int = 10) -> int:
    """Canonicalize `module` in place; returns the number of edits made."""
    total = 0
    for _ in range(max_sweeps):
        changes = _sweep(module)
        total += changes
        if not changes:
            break
    unique_names(module)
    return total


def _sweep(module: Module) -> int:
    worklist: list[Operation] = []
    queued: set[Operation] = set()
    erased: set[Operation] = set()

    def add(op: Operation) -> None:
        if op not in queued and op not in erased:
            queued.add(op)
            worklist.append(op)

    def forget(op: Operation) -> None:
        erased.add(op)

    rw = Rewriter(on_new=add, on_changed=add, on_erased=forget)
    for op in list(module.walk()):
        if op in erased:
            continue
        if op.opdef is not None and "ConstantLike" in op.opdef.traits and not rw.pool_constant(op):
            continue
        add(op)
    worklist.reverse()  # popped from the end: pre-order, as MLIR's top-down traversal

    budget = _VISITS_PER_OP * (len(worklist) + 16)
    while worklist and budget > 0:
        budget -= 1
        op = worklist.pop()
        queued.discard(op)
        if op in erased or op.parent is None:
            continue
        if is_trivially_dead(op):
            rw.erase(op)
            continue
        for pattern in patterns_for(op.name):
            if pattern(op, rw):
                rw.changes += 1
                add(op)
                break
    return rw.changes


def unique_names(module: Module) -> None:
    """Forget source names that rewrites made clash (ops moved out of sibling regions into
    one block, two `if`s merged): the printer then numbers those values afresh."""

    def block_names(block: Block, visible: set[str]) -> None:
        for arg in block.arguments:
            if arg.name is not None:
                if arg.name in visible:
                    arg.name = None
                else:
                    visible.add(arg.name)
        for op in block.ops:
            bases = {r.name.split("#", 1)[0] for r in op.results if r.name is not None}
            if bases & visible:
                for r in op.results:
                    r.name = None
            else:
                visible |= bases
            for region in op.regions:
                for inner in region.blocks:
                    # Isolated ops (kernels) start a scope of their own; others see ours.
                    block_names(inner, set() if op.is_isolated_from_above else set(visible))

    block_names(module.body, set())
