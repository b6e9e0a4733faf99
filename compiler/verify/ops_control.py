"""Structured control flow: `if`, `for`, `loop` and their terminators `yield`, `continue`,
`break`, `return`.

The rules, in the order `cuda-tile-opt` applies them:

- `continue` / `break` (on entrance): every op between the terminator and its loop must be
  an `if`, else "can only be nested within a ancestor chain of ..." with a note at the
  offending ancestor; then the operand types must match the loop (`continue` in a `for`:
  the for's results; in a `loop`: the loop's carried values; `break`: the loop's results).
- `return` (on entrance): the operands match the enclosing `entry` / `testing$func`.
- `if` (on entrance): no view results, then each branch's `yield` against the results.
- `for` / `loop` (region verifiers, once the body is verified): the induction variable,
  the carried values against the inits, no views carried or returned.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Operation, Region, Value
from ..ir.diagnostics import Related
from .common import type_list
from .engine import Verifier
from .registry import op_verifier, region_verifier


def _types(values: Sequence[Value]) -> list[T.Type]:
    return [v.type for v in values]


def _view_kind(t: T.Type) -> str | None:
    if isinstance(t, T.TensorViewType):
        return "a tensor_view"
    if isinstance(t, T.VIEW_TYPES):
        return "a tile view"
    return None


def _check_view_results(v: Verifier, op: Operation) -> None:
    """No result of the op is a tensor_view or a tile view."""
    for i, result in enumerate(op.results):
        kind = _view_kind(result.type)
        if kind is not None:
            v.fail(op, f"result type {i} is {kind}, which is not supported", code="view-result")


# ---------------------------------------------------------------------------------------------
# continue / break


def _check_ancestor_chain(v: Verifier, op: Operation, loops: tuple[str, ...]) -> Operation | None:
    """Walk up from an early exit to its loop, through `if`s only. Returns the loop."""
    parent = op.parent_op
    while parent is not None:
        if parent.name in loops:
            return parent
        if parent.name != "cuda_tile.if":
            break
        parent = parent.parent_op
    names = "', '".join((*loops, "cuda_tile.if"))
    related: list[Related] = []
    if parent is not None:
        related = [Related("see unexpected ancestor operation", v.op_span(parent), v.source)]
    v.fail(
        op,
        f"can only be nested within a ancestor chain of '{names}' operations",
        code="early-exit-nesting",
        related=related,
    )


@op_verifier("continue")
def _continue(v: Verifier, op: Operation) -> None:
    loop = _check_ancestor_chain(v, op, ("cuda_tile.for", "cuda_tile.loop"))
    if loop is None:
        return
    found = _types(op.operands)
    if loop.name == "cuda_tile.loop":
        expected = _types(loop.operands)
        if expected != found:
            v.fail(
                op,
                "`loop` is missing a valid terminator. `continue` op should have operand types that match the "
                f"parent loop iter_values: ({type_list(expected)}), but found: ({type_list(found)})",
                code="continue-types",
                prefix=False,
            )
    else:
        expected = _types(loop.results)
        if expected != found:
            v.fail(
                op,
                "`for` is missing a valid terminator. `continue` op should have operand types that match the "
                f"parent loop return types: ({type_list(expected)}), but found: ({type_list(found)})",
                code="continue-types",
                prefix=False,
            )


@op_verifier("break")
def _break(v: Verifier, op: Operation) -> None:
    loop = _check_ancestor_chain(v, op, ("cuda_tile.loop",))
    if loop is None:
        return
    found = _types(op.operands)
    expected = _types(loop.results)
    if expected != found:
        v.fail(
            op,
            "operand types must correspond to the parent loop result types: "
            f"({type_list(found)}) vs ({type_list(expected)})",
            code="break-types",
        )


# ---------------------------------------------------------------------------------------------
# return


def _function_results(fn: Operation) -> tuple[T.Type, ...] | None:
    attr = fn.properties.get("function_type")
    if isinstance(attr, A.TypeAttr) and isinstance(attr.value, T.FunctionType):
        return attr.value.results
    return None


def _symbol(fn: Operation) -> str:
    name = fn.properties.get("sym_name")
    return name.value if isinstance(name, A.StringAttr) else ""


@op_verifier("return")
def _return(v: Verifier, op: Operation) -> None:
    parent = op.parent_op
    while parent is not None and parent.name == "cuda_tile.if":
        parent = parent.parent_op
    if parent is None or parent.name not in ("cuda_tile.entry", "cuda_tile.testing$func"):
        v.fail(
            op,
            "must be used within a cuda_tile.testing$func, cuda_tile.entry, or cuda_tile.if operation",
            code="parent",
        )
    results = _function_results(parent)
    if results is None:
        return
    count = len(op.operands)
    if count != len(results):
        v.fail(
            op,
            f"has {count} operands, but enclosing function (@{_symbol(parent)}) returns {len(results)}",
            code="return-count",
        )
    if parent.name == "cuda_tile.entry":
        if count:
            v.fail(op, f"has {count} operands, but entry function must return 0 operands", code="return-count")
        return
    for i, (value, expected) in enumerate(zip(op.operands, results)):
        if value.type != expected:
            v.fail(
                op,
                f"type of return operand {i} ('{value.type.full()}') doesn't match function result type "
                f"('{expected.full()}') in function @{_symbol(parent)}",
                at=i,
                code="return-type",
                prefix=False,
            )


# ---------------------------------------------------------------------------------------------
# if


def _terminator(region: Region) -> Operation | None:
    block = region.entry_block
    return block.ops[-1] if block is not None and block.ops else None


@op_verifier("if")
def _if(v: Verifier, op: Operation) -> None:
    if not op.regions or not op.regions[0].blocks:
        v.fail(op, "must define then branch", code="if-branches")
    results = _types(op.results)
    _check_view_results(v, op)

    def check_branch(region: Region, name: str) -> None:
        term = _terminator(region)
        if term is None or term.name != "cuda_tile.yield":
            return
        yielded = _types(term.operands)
        if results and not yielded:
            v.fail(
                op,
                f"has return type of {type_list(results)} but {name} branch does not yield anything",
                code="if-yield",
            )
        if not results and yielded:
            v.fail(op, f"does not return a value, but {name} branch yields {type_list(yielded)}", code="if-yield")
        if yielded != results:
            v.fail(
                op,
                f"type does not match yield type, {name} branch yields {type_list(yielded)} "
                f"but op result type is {type_list(results)}",
                code="if-yield",
            )

    check_branch(op.regions[0], "then")
    if len(op.regions) < 2 or not op.regions[1].blocks:
        if results:
            v.fail(op, "has non-empty return type, must define else branch", code="if-branches")
        return
    check_branch(op.regions[1], "else")


# ---------------------------------------------------------------------------------------------
# for / loop


def _check_iter_values(v: Verifier, op: Operation, inits: Sequence[Value], iter_args: Sequence[Value]) -> None:
    if len(iter_args) != len(inits):
        v.fail(
            op,
            f"mismatch in number of region iterator values and loop iterator inits: {len(iter_args)} vs {len(inits)}",
            code="loop-iter-values",
        )
    for i, (init, arg) in enumerate(zip(inits, iter_args)):
        kind = _view_kind(arg.type)
        if kind is not None:
            v.fail(op, f"loop-carried value {i} is {kind}, which is not supported", code="view-loop-carried")
        if init.type != arg.type:
            v.fail(
                op,
                f"init value {i} and region iter_value {i} have different type: "
                f"'{init.type.full()}' != '{arg.type.full()}'",
                code="loop-iter-values",
            )
    _check_view_results(v, op)


def _block_arguments(op: Operation) -> list:
    region = op.regions[0] if op.regions else None
    block = region.entry_block if region is not None else None
    return list(block.arguments) if block is not None else []


@region_verifier("for")
def _for_regions(v: Verifier, op: Operation) -> None:
    args = _block_arguments(op)
    if not args:
        v.fail(op, "expected at least one block argument for induction variable", code="induction-variable")
    if not op.operands:
        return
    iv, lower = args[0], op.operands[0]
    if iv.type != lower.type:
        v.fail(
            op,
            "expected induction variable to be same type as bounds and step: "
            f"'{iv.type.full()}' vs '{lower.type.full()}'",
            code="induction-variable",
        )
    _check_iter_values(v, op, op.operands[3:], args[1:])


@region_verifier("loop")
def _loop_regions(v: Verifier, op: Operation) -> None:
    _check_iter_values(v, op, op.operands, _block_arguments(op))
