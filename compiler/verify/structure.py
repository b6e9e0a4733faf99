"""Kernels, functions and the module's symbol table.

- `entry` / `testing$func` (on entrance, before any other verifier of these ops): the
  `FunctionOpInterface` rules (argument/result attribute arrays sized like the signature,
  the body's block arguments matching the signature), then for `entry` no results and
  only scalar tiles among the tile arguments.
- once a region is verified: a body must end with the terminator the op implies
  (`SingleBlockImplicitTerminator`).
- `cuda_tile.module` (once its items are verified): symbols are unique, then every
  `get_global` names a `global` of the module whose element type is the pointee type.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Block, Operation
from ..ir.diagnostics import Related
from ..ir.symbols import symbol_name
from .engine import Verifier
from .registry import OP_VERIFIERS, REGION_VERIFIERS, region_verifier

_FUNCTIONS = ("cuda_tile.entry", "cuda_tile.testing$func")


def _function_type(op: Operation) -> T.FunctionType | None:
    attr = op.properties.get("function_type")
    if isinstance(attr, A.TypeAttr) and isinstance(attr.value, T.FunctionType):
        return attr.value
    return None


def _check_attr_array(v: Verifier, op: Operation, key: str, what: str, count: int) -> None:
    attrs = op.properties.get(key)
    if not isinstance(attrs, A.ArrayAttr):
        return
    plural = "arguments" if what == "argument" else "results"
    if len(attrs.elements) != count:
        v.fail(
            op,
            f"expects {what} attribute array to have the same number of elements as the number of function "
            f"{plural}, got {len(attrs.elements)}, but expected {count}",
            code="function-attrs",
        )
    for element in attrs.elements:
        if not isinstance(element, A.DictionaryAttr):
            v.fail(
                op,
                f"expects {what} attribute dictionary to be a DictionaryAttr, but got `{element}`",
                code="function-attrs",
            )
        if any("." not in name for name, _ in element.entries):
            v.fail(op, f"{plural} may only have dialect attributes", code="function-attrs")


def _verify_function(v: Verifier, op: Operation) -> None:
    fn = _function_type(op)
    if fn is None:
        return
    _check_attr_array(v, op, "arg_attrs", "argument", len(fn.inputs))
    _check_attr_array(v, op, "res_attrs", "result", len(fn.results))
    if len(op.regions) != 1:
        v.fail(op, "expects one region", code="region-count")
    region = op.regions[0]
    if not region.blocks:
        return  # an external function: no body to compare
    args = region.blocks[0].arguments
    if len(args) != len(fn.inputs):
        v.fail(
            op,
            f"entry block must have {len(fn.inputs)} arguments to match function signature",
            code="function-signature",
        )
    for i, (arg, expected) in enumerate(zip(args, fn.inputs)):
        if arg.type != expected:
            v.fail(
                op,
                f"type of entry block argument #{i}('{arg.type.full()}') must match the type of the "
                f"corresponding argument in function signature('{expected.full()}')",
                at=arg,
                code="function-signature",
            )


def _verify_entry(v: Verifier, op: Operation) -> None:
    fn = _function_type(op)
    if fn is None:
        return
    if fn.results:
        v.fail(op, "entry op must not return values", code="entry-results")
    region = op.regions[0] if op.regions else None
    args = region.blocks[0].arguments if region is not None and region.blocks else []
    for i, t in enumerate(fn.inputs):
        if isinstance(t, T.TileType) and t.shape:
            at = args[i] if i < len(args) else None
            v.fail(op, "entry op must have scalar types (rank 0 !cuda_tile.tile)", at=at, code="entry-arguments")


# These run before any other verifier of the ops (the optimization hints of an entry are
# checked after its signature), whatever the order in which the verifier modules load.
for _name in _FUNCTIONS:
    OP_VERIFIERS.setdefault(_name, []).insert(0, _verify_function)
OP_VERIFIERS["cuda_tile.entry"].insert(1, _verify_entry)


# ---------------------------------------------------------------------------------------------
# implicit terminators

_TERMINATORS = {
    "cuda_tile.entry": ("cuda_tile.return", ("cuda_tile.return",)),
    "cuda_tile.testing$func": ("cuda_tile.return", ("cuda_tile.return",)),
    "cuda_tile.for": ("cuda_tile.continue", ("cuda_tile.continue",)),
    "cuda_tile.loop": ("cuda_tile.continue", ("cuda_tile.continue", "cuda_tile.break")),
    "cuda_tile.if": (
        "cuda_tile.yield",
        ("cuda_tile.yield", "cuda_tile.break", "cuda_tile.continue", "cuda_tile.return"),
    ),
}


def _implicit_terminator(v: Verifier, op: Operation) -> None:
    implied, accepted = _TERMINATORS[op.name]
    for region in op.regions:
        if not region.blocks or not region.blocks[0].ops:
            continue
        last = region.blocks[0].ops[-1]
        if last.name not in accepted:
            v.fail(
                op,
                f"expects regions to end with '{implied}', found '{last.name}'",
                code="terminator",
                related=[
                    Related(
                        f"in custom textual format, the absence of terminator implies '{implied}'",
                        v.op_span(op),
                        v.source,
                    )
                ],
            )


# A region trait: it runs before the op's own region verifier (`for`'s, `loop`'s).
for _name in _TERMINATORS:
    REGION_VERIFIERS.setdefault(_name, []).insert(0, _implicit_terminator)


# ---------------------------------------------------------------------------------------------
# the module's symbol table


def _symbol_ref(attr: A.Attribute | None) -> str | None:
    if isinstance(attr, A.SymbolRefAttr):
        return attr.name
    if isinstance(attr, A.StringAttr):
        return attr.value
    return None


def _walk_table(blocks: list[Block]):
    """The ops nested in a symbol table's blocks, without entering nested symbol tables."""
    for block in blocks:
        yield from _walk_table_ops(block.ops)


def _walk_table_ops(ops: list[Operation]):
    for nested in ops:
        yield nested
        if nested.opdef is None or "SymbolTable" not in nested.opdef.traits:
            yield from _walk_table([b for region in nested.regions for b in region.blocks])


def verify_symbol_table(v: Verifier, blocks: list[Block], users: Iterable[Operation] | None = None) -> None:
    """Symbols defined in `blocks` are unique; the symbol uses under them resolve. Runs for
    each `cuda_tile.module`, and for the top level (MLIR's `builtin.module` is a symbol table
    too). `users`: `symbol_users` of the blocks' ops, when the caller has them (the language
    server keeps them per kernel)."""
    symbols: dict[str, Operation] = {}
    for block in blocks:
        for op in block.ops:
            name = symbol_name(op)
            if name is None:
                continue
            first = symbols.setdefault(name, op)
            if first is not op:
                v.fail(
                    op,
                    f"redefinition of symbol named '{name}'",
                    code="symbol-redefinition",
                    prefix=False,
                    related=[Related("see existing symbol definition here", v.op_span(first), v.source)],
                )
    for op in symbol_users([op for block in blocks for op in block.ops]) if users is None else users:
        _check_get_global(v, op, symbols)


def symbol_users(ops: list[Operation]) -> list[Operation]:
    """The ops in `ops` and nested in them (not inside a nested symbol table) that use a symbol
    of the table they stand in: the `get_global`s, which `verify_symbol_table` checks."""
    return [op for op in _walk_table_ops(ops) if op.name == "cuda_tile.get_global"]


# The codes of the diagnostics `verify_symbol_table` gives.
SYMBOL_TABLE_CODES = frozenset({"symbol-redefinition", "unknown-global", "global-type"})


@region_verifier("module")
def _symbol_table(v: Verifier, module: Operation) -> None:
    verify_symbol_table(v, [block for region in module.regions for block in region.blocks])


def _check_get_global(v: Verifier, op: Operation, symbols: dict[str, Operation]) -> None:
    name = _symbol_ref(op.properties.get("name"))
    if name is None:
        return
    target = symbols.get(name)
    if target is None or target.name != "cuda_tile.global":
        v.fail(op, f"'{name}' does not reference a valid global", code="unknown-global")
    value = target.properties.get("value")
    global_type = getattr(value, "type", None)
    result = op.results[0].type if op.results else None
    if not isinstance(global_type, T.TileType) or not isinstance(result, T.TileType):
        return
    pointer = result.element
    if isinstance(pointer, T.PointerType) and pointer.pointee != global_type.element:
        v.fail(
            op,
            f"pointee type of result type '{pointer.full()}' does not match type '{global_type.element.full()}' "
            f"of the global @{name}",
            code="global-type",
        )
