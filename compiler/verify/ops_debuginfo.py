"""Debug-info scopes: the `#cuda_tile.di_loc<loc(...) in #scope>` locations of kernels and ops.

The rules cuda-tile-opt applies:

1. a kernel whose location has a debug scope must have a `di_subprogram` scope;
2. that subprogram's `linkageName` is the kernel's name;
3. ops of a kernel without a scope have no scope either;
4. the scope of an op (through `di_lexical_block`s) is the kernel's subprogram;
5. the other items of a `cuda_tile.module` (globals) have no scope;
6. a kernel's location is not a call site.

Rules 1, 2 and 6 are part of the kernel's own verification (after its signature, before its
optimization hints), rule 3 and 4 run once its body is verified, rule 5 with the module.
A location is looked through as MLIR does: a call site by its caller, a fused location by
its first part with a scope, a named location by its child.
"""

from __future__ import annotations

from ..ir import attributes as A
from ..ir.core import Operation
from .engine import Verifier
from .registry import OP_VERIFIERS, op_verifier, region_verifier

_FUNCTIONS = ("cuda_tile.entry",)


def di_loc(loc: A.Attribute | None) -> A.DILocAttr | None:
    """The debug-info location a location stands for, if any."""
    if isinstance(loc, A.DILocAttr):
        return loc
    if isinstance(loc, A.CallSiteLoc):
        return di_loc(loc.caller)
    if isinstance(loc, A.FusedLoc):
        for part in loc.locations:
            found = di_loc(part)
            if found is not None:
                return found
        return None
    if isinstance(loc, A.NameLoc):
        return di_loc(loc.child)
    return None


def subprogram_of(scope: A.Attribute | None) -> A.DIAttr | None:
    """The subprogram a local scope belongs to (through lexical blocks)."""
    seen = 0
    while isinstance(scope, A.DIAttr) and seen < 1000:
        if scope.kind == "di_subprogram":
            return scope
        if scope.kind != "di_lexical_block":
            return None
        scope = scope.get("scope")
        seen += 1
    return None


def _function_subprogram(op: Operation) -> A.DIAttr | None:
    loc = di_loc(op.location)
    return subprogram_of(loc.scope) if loc is not None else None


def verify_function_debug_info(v: Verifier, op: Operation) -> None:
    """Rules 6, 1 and 2: the kernel's own location."""
    if isinstance(op.location, A.CallSiteLoc):
        v.fail(
            op,
            f"invalid function debug info location: {op.location}. Function location must not be a CallSiteLoc.",
            code="debug-info",
        )
    loc = di_loc(op.location)
    if loc is None:
        return
    scope = loc.scope
    if not (isinstance(scope, A.DIAttr) and scope.kind == "di_subprogram"):
        v.fail(
            op,
            f"invalid function debug info scope: {scope}. "
            "Function location must have cuda_tile.di_subprogram debug info scope.",
            code="debug-info",
        )
    name = op.properties.get("sym_name")
    linkage = scope.get("linkageName")
    name_text = name.value if isinstance(name, A.StringAttr) else ""
    linkage_text = linkage.value if isinstance(linkage, A.StringAttr) else None
    if linkage_text != name_text:
        v.fail(
            op,
            f'invalid function debug info scope: {scope}. Function name "{name_text}" does not match '
            f"subprogram scope linkage name {linkage if linkage is not None else '<<NULL ATTRIBUTE>>'}.",
            code="debug-info",
        )


@region_verifier(*_FUNCTIONS)
def _function_body(v: Verifier, op: Operation) -> None:
    """Rules 3 and 4: every op of the kernel's body, nested ones included."""
    expected = _function_subprogram(op)
    for nested in op.walk():
        if nested is op:
            continue
        loc = di_loc(nested.location)
        found = subprogram_of(loc.scope) if loc is not None else None
        if found is None:
            continue
        if expected is None:
            v.fail(
                nested,
                f"invalid operation debug info scope: {found}. "
                "Operation has debug info scope, but function debug info scope is undefined.",
                code="debug-info",
            )
        if found != expected:
            v.fail(
                nested,
                f"invalid operation debug info scope: {found}. "
                f"Operation debug info scope does not match function debug info scope: {expected}.",
                code="debug-info",
                prefix=False,
            )


@op_verifier("module")
def _module_items(v: Verifier, op: Operation) -> None:
    """Rule 5: items of a cuda_tile.module other than kernels have no scope."""
    for region in op.regions:
        for block in region.blocks:
            for item in block.ops:
                if item.name in _FUNCTIONS or item.name == "cuda_tile.testing$func":
                    continue
                loc = di_loc(item.location)
                if loc is not None:
                    v.fail(
                        item,
                        f"invalid operation debug info scope: {loc}. Global variables must not have scope.",
                        code="debug-info",
                    )


# The kernel's own rules run after its signature checks and before its optimization hints.
def _register_function_rules() -> None:
    from . import hints

    for name in _FUNCTIONS:
        table = OP_VERIFIERS.setdefault(name, [])
        position = table.index(hints.verify_hints) if hints.verify_hints in table else len(table)
        table.insert(position, verify_function_debug_info)


_register_function_rules()
