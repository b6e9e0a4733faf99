"""Symbols: find them by nested path, rename them with their uses and their debug info.

    op = lookup_symbol_path(module, ["kernels", "test_func"])      # @kernels::@test_func
    problem = rename_symbol(module, op, "_fqZtest_func_f32", update_uses=True)

Renaming a kernel changes its `sym_name`, every `@name` reference to it inside the symbol
table that holds it (with `update_uses`), and the `linkageName` of the debug-info subprogram
its location points into, everywhere that subprogram is referenced inside `scope`. This is
what `cuda-tile-opt --test-debuginfo-update-symbol-name` does, and what an editor's rename
must do so that the debugger still finds the kernel.
"""

from __future__ import annotations

from . import attributes as A
from .core import Module, Operation
from .diagnostics import Diagnostic, Related, Severity


def symbol_name(op: Operation) -> str | None:
    """The symbol `op` defines (its `sym_name`), if any."""
    attr = op.properties.get("sym_name")
    return attr.value if isinstance(attr, A.StringAttr) else None


def _symbol_children(ops: list[Operation]) -> list[Operation]:
    """The symbols directly inside the given ops' symbol table (looking through the
    unnamed `module { }` wrapper, which is not a symbol)."""
    found: list[Operation] = []
    for op in ops:
        if op.name == "builtin.module" and symbol_name(op) is None:
            found += _symbol_children([o for r in op.regions for b in r.blocks for o in b.ops])
        else:
            found.append(op)
    return found


def lookup_symbol_path(module: Module, path: list[str]) -> Operation | None:
    """The op named by a nested symbol path (`["kernels", "test_func"]`) from the top level."""
    candidates = _symbol_children(module.ops)
    found: Operation | None = None
    for name in path:
        found = next((op for op in candidates if symbol_name(op) == name), None)
        if found is None:
            return None
        candidates = [o for r in found.regions for b in r.blocks for o in b.ops]
    return found


def _is_ancestor(scope: Operation | None, op: Operation) -> bool:
    """True when `scope` is `op` or encloses it; None stands for the whole document."""
    if scope is None:
        return True
    current: Operation | None = op
    while current is not None:
        if current is scope:
            return True
        current = current.parent_op
    return False


def replace_in_attribute(attr: A.Attribute, old: A.Attribute, new: A.Attribute) -> A.Attribute:
    """`attr` with every occurrence of `old` inside it (at any depth) replaced by `new`."""
    if attr == old:
        return new
    if isinstance(attr, A.DIAttr):
        params = tuple((k, replace_in_attribute(v, old, new)) for k, v in attr.params)
        return attr if params == attr.params else attr.replace(params=params)
    if isinstance(attr, A.DILocAttr):
        scope = replace_in_attribute(attr.scope, old, new)
        return attr if scope is attr.scope else attr.replace(scope=scope)
    if isinstance(attr, A.FusedLoc):
        locations = tuple(replace_in_attribute(loc, old, new) for loc in attr.locations)
        return attr if locations == attr.locations else attr.replace(locations=locations)  # type: ignore[arg-type]
    if isinstance(attr, A.CallSiteLoc):
        return attr.replace(
            callee=replace_in_attribute(attr.callee, old, new), caller=replace_in_attribute(attr.caller, old, new)
        )  # type: ignore[arg-type]
    if isinstance(attr, A.NameLoc) and attr.child is not None:
        return attr.replace(child=replace_in_attribute(attr.child, old, new))  # type: ignore[arg-type]
    if isinstance(attr, A.ArrayAttr):
        elements = tuple(replace_in_attribute(e, old, new) for e in attr.elements)
        return attr if elements == attr.elements else attr.replace(elements=elements)
    if isinstance(attr, A.DictionaryAttr):
        entries = tuple((k, replace_in_attribute(v, old, new)) for k, v in attr.entries)
        return attr if entries == attr.entries else attr.replace(entries=entries)
    return attr


def _replace_everywhere(root_ops: list[Operation], old: A.Attribute, new: A.Attribute) -> None:
    for top in root_ops:
        for op in top.walk():
            if op.location is not None:
                op.location = replace_in_attribute(op.location, old, new)  # type: ignore[assignment]
            for table in (op.properties, op.attributes):
                for key, value in table.items():
                    table[key] = replace_in_attribute(value, old, new)
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.arguments:
                        if arg.location is not None:
                            arg.location = replace_in_attribute(arg.location, old, new)  # type: ignore[assignment]


def rename_symbol(
    module: Module,
    op: Operation,
    new_name: str,
    scope: Operation | None = None,
    update_uses: bool = False,
) -> Diagnostic | None:
    """Rename the symbol `op` to `new_name` (see the module docstring). `scope` (None: the
    whole document) bounds where debug info is rewritten and must enclose `op`; when it
    does not, nothing changes and the returned error says so."""
    if op.parent_op is not None and not _is_ancestor(scope, op):
        assert scope is not None
        related = [Related("scope defined here", scope.head_span, module.source)]
        return Diagnostic(
            Severity.ERROR,
            "rename-scope",
            "attempted to update symbol names in a scope that did not enclose the symbol itself",
            op.head_span,
            module.source,
            related,
        )
    old_name = symbol_name(op)
    table = op.parent_op
    if update_uses and old_name is not None:
        uses_in = [table] if table is not None else module.ops
        _replace_everywhere(uses_in, A.SymbolRefAttr(old_name), A.SymbolRefAttr(new_name))
    op.properties["sym_name"] = A.StringAttr(new_name)
    location = op.location
    subprogram = location.scope if isinstance(location, A.DILocAttr) else None
    if isinstance(subprogram, A.DIAttr) and subprogram.kind == "di_subprogram":
        params = tuple((k, A.StringAttr(new_name) if k == "linkageName" else v) for k, v in subprogram.params)
        if all(k != "linkageName" for k, _ in params):
            params += (("linkageName", A.StringAttr(new_name)),)
        _replace_everywhere([scope] if scope is not None else module.ops, subprogram, subprogram.replace(params=params))
    return None
