"""The verifier's driver: walks a module the way MLIR's verifier does and collects diagnostics.

For each operation, in the order MLIR uses:

1. on entrance: the checks the op table drives (operand and result type constraints, then
   the type rules: `AllTypesMatch` and friends), the native traits (`Terminator`,
   `ParentOneOf`, `SameOperandsShape`, ...), then the op's own verifiers (`registry.op_verifier`);
2. each block of each region: not empty, ops verified in order, ends with a terminator;
3. on exit: ops that are isolated from above (kernels) are verified as units of their own,
   then the region verifiers (`registry.region_verifier`) run;
4. per isolated unit, once all of it is well-formed: SSA dominance.

A failing check raises `OpFailed` through `Verifier.fail`. With `keep_going` (the default,
for `tileir check` and the language server) the rest of that op and its regions are skipped
and verification goes on with the next op; without it (MLIR's behaviour, used by
`tileir opt`) the whole isolated unit stops at its first error, so exactly the diagnostics
`cuda-tile-opt` prints come out.

Messages use MLIR's wording (`'cuda_tile.addf' op operand #0 must be ...`) so that they
can be compared with NVIDIA's tools; each diagnostic also carries a stable `code`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..dialect.constraints import TYPE_CONSTRAINTS
from ..ir import types as T
from ..ir.attributes import location_place
from ..ir.core import Block, BlockArgument, Module, Operation, OpResult, Value
from ..ir.diagnostics import Diagnostic, Fix, Related, Severity
from ..ir.frozen import Record
from ..ir.source import SourceFile, Span
from .common import tile_shape, type_text
from .registry import MODULE_CHECKS, OP_VERIFIERS, REGION_VERIFIERS

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from typing import NoReturn

    from ..dialect.opdef import OpDef


class OpFailed(Exception):
    """Raised by `Verifier.fail`: the op being verified is invalid."""


class VerifyOptions(Record):
    __slots__ = ("keep_going", "target_version", "unsupported_hints")

    def __init__(
        self, keep_going: bool = True, target_version: str | None = None, unsupported_hints: str = "silent"
    ) -> None:
        # Report every invalid op (True), or stop each kernel at its first error as MLIR does.
        self.keep_going = keep_going
        # Bytecode version the module must fit, e.g. "13.1"; None: the newest we know.
        self.target_version = target_version
        # Optimization hints that are unknown or unsupported: "silent" (as cuda-tile-opt by
        # default), "warn" (-Wunsupported-hints) or "error" (-Werr-hints).
        self.unsupported_hints = unsupported_hints


# Op class names used by `ParentOneOf` / `HasParent` traits, and the ops they stand for.
_OP_CLASSES = {
    "EntryOp": "cuda_tile.entry",
    "ForOp": "cuda_tile.for",
    "IfOp": "cuda_tile.if",
    "LoopOp": "cuda_tile.loop",
    "ModuleOp": "cuda_tile.module",
    "ReduceOp": "cuda_tile.reduce",
    "ScanOp": "cuda_tile.scan",
    "ReturnOp": "cuda_tile.return",
    "YieldOp": "cuda_tile.yield",
    "ContinueOp": "cuda_tile.continue",
    "BreakOp": "cuda_tile.break",
    "FuncOp": "cuda_tile.testing$func",
    "Test_FuncOp": "cuda_tile.testing$func",
}


def op_class_name(cls: str) -> str:
    return _OP_CLASSES.get(cls, cls)


class Verifier:
    def __init__(self, module: Module, options: VerifyOptions | None = None) -> None:
        self.module = module
        self.source: SourceFile | None = module.source
        self.options = options or VerifyOptions()
        self.diagnostics: list[Diagnostic] = []
        # Set by `verify_isolated`: the one op being verified again; whole-module rules then
        # look only at it (`walk`, `top_ops`).
        self.scope: Operation | None = None
        # The signatures (`_signature`) whose ODS checks passed (`_on_entrance`).
        self._passed: set[tuple] = set()

    def walk(self) -> Iterator[Operation]:
        """The ops the whole-module rules look at."""
        return self.scope.walk() if self.scope is not None else self.module.walk()

    def top_ops(self) -> list[Operation]:
        return [] if self.scope is not None else self.module.body.ops

    # ------------------------------------------------------------------ reporting

    def op_span(self, op: Operation) -> Span:
        """The range a diagnostic about `op` as a whole covers (its first line)."""
        return op.head_span

    def span_of(self, op: Operation, at: Span | Value | int | None) -> Span:
        """Where to point: an explicit span, an operand index of `op`, a value's
        definition, or (None) the op itself."""
        if isinstance(at, Span):
            return at
        if isinstance(at, int):
            return op.operand_span(at) or self.op_span(op)
        if isinstance(at, Value) and at.span is not None:
            return at.span
        return self.op_span(op)

    def defined_here(self, value: Value, message: str = "value defined here") -> list[Related]:
        """A related location pointing at where `value` was defined, if known."""
        if value.span is None:
            return []
        return [Related(message, value.span, self.source)]

    def emit(
        self,
        op: Operation | None,
        message: str,
        *,
        severity: Severity = Severity.ERROR,
        at: Span | Value | int | None = None,
        code: str = "invalid-op",
        related: Iterable[Related] = (),
        fixes: Iterable[Fix] = (),
        prefix: bool = True,
    ) -> Diagnostic:
        """Record a diagnostic about `op` without stopping. `prefix` adds MLIR's
        `'cuda_tile.x' op ` in front of the message, as `op->emitOpError` does."""
        if op is not None and prefix:
            message = f"'{op.name}' op {message}"
        span = self.span_of(op, at) if op is not None else (at if isinstance(at, Span) else Span(0, 0))
        # A module read from bytecode has no text to point into: its op's debug-info location
        # (the cuTile Python line that made it, say) is the place to name instead.
        origin = location_place(op.location) if op is not None and self.source is None else None
        diag = Diagnostic(severity, code, message, span, self.source, list(related), list(fixes), origin)
        self.diagnostics.append(diag)
        return diag

    def fail(self, op: Operation, message: str, **kwargs) -> NoReturn:
        """Report an error about `op` and stop verifying it."""
        self.emit(op, message, **kwargs)
        raise OpFailed(message)

    def warn(self, op: Operation, message: str, **kwargs) -> Diagnostic:
        return self.emit(op, message, severity=Severity.WARNING, **kwargs)

    # ------------------------------------------------------------------ driver

    def run(self) -> list[Diagnostic]:
        try:
            self._verify_top(self.module.body)
        except OpFailed:
            pass
        return self.diagnostics

    def _verify_top(self, top: Block) -> None:
        """The top-level ops, as MLIR verifies the `builtin.module` that holds them: the ops
        that are not isolated from above in order (without `keep_going` the first failure
        stops everything), then each isolated op as a unit of its own, then the dominance
        of the values used at top level."""
        failed: set[int] = set()
        isolated: list[Operation] = []
        for op in top.ops:
            if _is_isolated(op):
                isolated.append(op)
            elif not self._verify_op(op):
                failed.add(id(op))
        for op in isolated:
            if not self._verify_unit(op):
                failed.add(id(op))
        if failed and not self.options.keep_going:
            return
        from .structure import verify_symbol_table  # the top level is a symbol table too

        if not failed:
            self._guard(lambda _: verify_symbol_table(self, [top]), None)
        self._dominance_of_blocks([top], skip=failed)  # an error stops it (OpFailed, caught by run)

    def _guard(self, check, op: Operation) -> bool:
        try:
            check(op)
            return True
        except OpFailed:
            if not self.options.keep_going:
                raise
            return False

    def _verify_unit(self, op: Operation) -> bool:
        """An op verified as a unit of its own (a top-level op, or one isolated from
        above), then the dominance of the values used inside it."""
        try:
            ok = self._verify_op(op)
            if ok:
                ok = self._guard(self._verify_dominance, op)
            return ok
        except OpFailed:
            return False

    def _verify_op(self, op: Operation) -> bool:
        if not self._guard(self._on_entrance, op):
            return False
        ok = True
        isolated: list[Operation] = []
        for region in op.regions:
            for block in region.blocks:
                ok = self._verify_block(op, block, isolated) and ok
        for nested in isolated:
            ok = self._verify_unit(nested) and ok
        if not ok:
            return False
        return self._guard(self._on_exit, op)

    def _verify_block(self, parent: Operation, block: Block, isolated: list[Operation]) -> bool:
        if not block.ops:
            if not _may_lack_terminator(parent):
                self._guard(lambda p: self.fail(p, "empty block: expect at least a terminator", prefix=False), parent)
                return False
            return True
        ok = True
        for op in block.ops:
            if _is_isolated(op):
                isolated.append(op)
            else:
                ok = self._verify_op(op) and ok
        if not ok:
            return False
        last = block.ops[-1]
        if not _may_lack_terminator(parent) and not _might_be_terminator(last):
            return self._guard(
                lambda op: self.fail(op, f"block with no terminator, has '{op.name}'", prefix=False, code="terminator"),
                last,
            )
        return True

    def _on_entrance(self, op: Operation) -> None:
        opdef = op.opdef
        if opdef is None:
            return
        check_region_count(self, op)
        # The ODS checks of counts, constraints and type rules read nothing but what
        # `_signature` holds: an op whose signature passed them once passes again (a third of
        # the verifier's time went there, on ops that repeat a few signatures many times).
        signature = _signature(op)
        if signature in self._passed:
            check_region_constraints(self, op)
        else:
            before = len(self.diagnostics)
            check_counts(self, op)
            check_constraints(self, op)
            check_region_constraints(self, op)
            check_type_rules(self, op)
            if len(self.diagnostics) == before:
                self._passed.add(signature)
        check_traits(self, op)
        for fn in OP_VERIFIERS.get(op.name, ()):
            fn(self, op)

    def _on_exit(self, op: Operation) -> None:
        for fn in REGION_VERIFIERS.get(op.name, ()):
            fn(self, op)

    # ------------------------------------------------------------------ dominance

    def _verify_dominance(self, unit: Operation) -> None:
        """Every operand is defined before its use: in the same block earlier, in an
        enclosing block, or as an argument of an enclosing block."""
        self._dominance_of_blocks([block for region in unit.regions for block in region.blocks])

    def _dominance_of_blocks(self, blocks: list[Block], skip: set[int] | frozenset[int] = frozenset()) -> None:
        """MLIR's order: every op of a block is checked before the regions nested in it
        (a worklist, the last op with regions first); ops isolated from above are left to
        their own unit, and `skip` names ops (by id) that already failed."""
        positions: dict[int, int] = {}
        worklist: list[list[Block]] = [blocks]
        while worklist:
            nested: list[Operation] = []
            for block in worklist.pop():
                for i, op in enumerate(block.ops):
                    positions[id(op)] = i
                for op in block.ops:
                    if id(op) in skip:
                        continue
                    for index, value in enumerate(op.operands):
                        if not _dominates(value, op, positions):
                            self.fail(
                                op,
                                f"operand #{index} does not dominate this use",
                                at=index,
                                related=self._dominance_note(op, value),
                                code="dominance",
                                prefix=False,
                            )
                    if op.regions and not _is_isolated(op):
                        nested.append(op)
            for op in nested:
                worklist.append([block for region in op.regions for block in region.blocks])

    def _dominance_note(self, user: Operation, value: Value) -> list[Related]:
        """MLIR's note on a dominance error: where the operand comes from, relative to the use."""
        if isinstance(value, OpResult):
            definer = value.owner
            if definer.parent is user.parent:
                where = "op in the same block"
            elif _region_of(definer) is _region_of(user):
                where = "op in the same region"
            elif _encloses(_region_of(definer), user):
                where = "op in a parent region"
            elif _encloses(_region_of(user), definer):
                where = "op in a child region"
            else:
                where = "op is neither in a parent nor in a child region"
            return self.defined_here(value, f"operand defined here ({where})")
        return self.defined_here(value, "operand defined here")


def _dominates(value: Value, user: Operation, positions: dict[int, int]) -> bool:
    if isinstance(value, BlockArgument):
        block = value.owner
        op: Operation | None = user
        while op is not None:
            if op.parent is block:
                return True
            op = op.parent_op
        return False
    if isinstance(value, OpResult):
        definer = value.owner
        block = definer.parent
        op = user
        while op is not None:
            if op.parent is block:
                return op is not definer and positions.get(id(definer), -1) < positions.get(id(op), -1)
            op = op.parent_op
        return False
    return True  # a value the parser could not resolve was already reported


def _is_isolated(op: Operation) -> bool:
    return bool(op.regions) and op.is_isolated_from_above


def _region_of(op: Operation):
    return op.parent.parent if op.parent is not None else None


def _encloses(region, op: Operation) -> bool:
    """True when `op` is nested (at any depth) in `region`."""
    if region is None:
        return False
    current: Operation | None = op
    seen: set[int] = set()
    while current is not None and id(current) not in seen:  # malformed IR may nest an op in itself
        seen.add(id(current))
        if _region_of(current) is region:
            return True
        current = current.parent_op
    return False


def _may_lack_terminator(op: Operation) -> bool:
    opdef = op.opdef
    if opdef is None:
        return True
    return "NoTerminator" in opdef.traits or "HasOnlyGraphRegion" in opdef.traits


def _might_be_terminator(op: Operation) -> bool:
    return op.opdef is None or "Terminator" in op.opdef.traits


# ---------------------------------------------------------------------------------------------
# Checks driven by the op table


def _count_message(kind: str, fixed: int, variadic: bool, found: int) -> str | None:
    """MLIR's structural trait messages (ZeroOperands, OneResult, NOperands, AtLeastNResults...)."""
    if variadic:
        return None if found >= fixed else f"expected {fixed} or more {kind}s, but found {found}"
    if found == fixed:
        return None
    if fixed == 0:
        return f"requires zero {kind}s"
    if fixed == 1:
        return "requires a single operand" if kind == "operand" else "requires one result"
    return f"expected {fixed} {kind}s, but found {found}"


class _Plan:
    """What the table-driven checks need from one op definition, worked out once per op
    (`OpDef._plans["verify"]`) instead of for every op verified."""

    __slots__ = (
        "fixed_results",
        "variadic_results",
        "fixed_operands",
        "variadic_operands",
        "required",
        "operand_constraints",
        "result_constraints",
        "operand_names",
        "result_names",
        "terminator",
        "parents",
        "single_block",
        "no_terminator",
        "typed_properties",
    )

    def __init__(self, opdef: OpDef) -> None:
        self.fixed_results = sum(1 for r in opdef.results if r.arity == "single")
        self.variadic_results = any(r.arity != "single" for r in opdef.results)
        self.fixed_operands = sum(1 for o in opdef.operands if o.arity == "single")
        self.variadic_operands = any(o.arity != "single" for o in opdef.operands)
        self.required = [a.name for a in opdef.attributes if not a.optional and a.default is None]
        self.operand_constraints = [(TYPE_CONSTRAINTS[o.constraint], o.arity) for o in opdef.operands]
        self.result_constraints = [(TYPE_CONSTRAINTS[r.constraint], r.arity) for r in opdef.results]
        self.operand_names = frozenset(o.name for o in opdef.operands)
        self.result_names = frozenset(r.name for r in opdef.results)
        # The properties whose types the type rules compare (`_named_types`).
        named = {name for rule in opdef.type_rules for name in rule[1]}
        self.typed_properties = tuple(sorted(named - self.operand_names - self.result_names))
        # The traits in the order `check_traits` has always met them (the frozenset's).
        self.terminator = False
        self.parents: list[tuple[str, list[str]]] = []  # ("Terminator" or the allowed parents, in order)
        for trait in opdef.traits:
            if trait == "Terminator":
                self.parents.append((trait, []))
            elif trait.startswith("ParentOneOf:") or trait.startswith("HasParent:"):
                self.parents.append((trait, [op_class_name(c) for c in trait.split(":", 1)[1].split(",")]))
        self.single_block = "SingleBlock" in opdef.traits or any(
            t.startswith("SingleBlockImplicitTerminator:") for t in opdef.traits
        )
        self.no_terminator = "NoTerminator" in opdef.traits


def _signature(op: Operation) -> tuple:
    """What `check_counts`, `check_constraints` and `check_type_rules` read of `op`: its op
    definition, operand segments, the types of its operands and results (and of the
    properties the type rules name), and the names of its properties and attributes. Types by
    identity (a parser makes one object per distinct type text, so ops repeating a signature
    share them; equal types that are distinct objects only miss): the module holds every one
    alive while it is verified, so an id seen here stands for one object. (A property is
    present when named: none is ever stored as None.)"""
    opdef = op.opdef
    plan = _plan(opdef)  # type: ignore[arg-type]
    props = op.properties
    key = (
        opdef,
        op.operand_segments,
        *[id(v.type) for v in op.operands],
        None,
        *[id(v.type) for v in op.results],
        *props,  # names (str), where the ids (int) end
        None,
        *op.attributes,
    )
    if plan.typed_properties:
        key += tuple([id(getattr(props.get(name), "type", None)) for name in plan.typed_properties])
    return key


def _plan(opdef: OpDef) -> _Plan:
    plan = opdef._plans.get("verify")
    if plan is None:
        plan = opdef._plans["verify"] = _Plan(opdef)
    return plan


def check_counts(v: Verifier, op: Operation) -> None:
    """The number of results and operands the op table allows (checked before the types, as
    MLIR's structural traits are)."""
    opdef = op.opdef
    assert opdef is not None
    plan = _plan(opdef)
    counts = (
        ("result", plan.fixed_results, plan.variadic_results, len(op.results)),
        ("operand", plan.fixed_operands, plan.variadic_operands, len(op.operands)),
    )
    for kind, fixed, variadic, found in counts:
        if found == fixed or (variadic and found > fixed):
            continue
        message = _count_message(kind, fixed, variadic, found)
        if message is not None:
            v.fail(op, message, code=f"{kind}-count")


def check_constraints(v: Verifier, op: Operation) -> None:
    """ODS's operand and result constraints: `operand #1 must be ..., but got '...'`."""
    opdef = op.opdef
    assert opdef is not None
    segments = op.operand_segments
    if segments is not None and opdef.has_segments:
        # ODS's check of `operandSegmentSizes` itself, before any operand is looked at.
        if len(segments) != len(opdef.operands):
            v.fail(
                op,
                "'operandSegmentSizes' attribute for specifying operand segments must have "
                f"{len(opdef.operands)} elements, but got {len(segments)}",
                code="operand-segments",
            )
        if sum(segments) != len(op.operands) or min(segments, default=0) < 0:
            v.fail(
                op,
                f"operand count ({len(op.operands)}) does not match with the total size ({sum(segments)}) "
                "specified in attribute 'operandSegmentSizes'",
                code="operand-segments",
            )
    plan = _plan(opdef)
    properties, attributes = op.properties, op.attributes
    for name in plan.required:
        if properties.get(name) is None and attributes.get(name) is None:  # `op.attr(name) is None`
            v.fail(op, f"requires attribute '{name}'", code="missing-attribute")
    operands = op.operands
    flat = 0
    for i, (constraint, arity) in enumerate(plan.operand_constraints):
        count = 1 if segments is None else (segments[i] if i < len(segments) else 0)
        for k in range(count):
            index = flat + k
            if index >= len(operands):
                break
            t = operands[index].type
            if not constraint.predicate(t):
                summary = constraint.summary
                if arity == "variadic":
                    summary = f"variadic of {summary}"
                v.fail(
                    op, f"operand #{index} must be {summary}, but got '{type_text(t)}'", at=index, code="operand-type"
                )
        flat += count
    results = op.results
    variadic_len = max(len(results) - plan.fixed_results, 0)
    index = 0
    for constraint, arity in plan.result_constraints:
        count = 1 if arity == "single" else variadic_len
        for k in range(count):
            if index + k >= len(results):
                break
            t = results[index + k].type
            if not constraint.predicate(t):
                summary = constraint.summary
                if arity == "variadic":
                    summary = f"variadic of {summary}"
                v.fail(op, f"result #{index + k} must be {summary}, but got '{type_text(t)}'", code="result-type")
        index += count


# ODS region constraints (`SizedRegion<1>`: exactly one block, `MaxSizedRegion<1>`: at most
# one), per op, in region order; ops not listed accept any region.
_REGION_SIZES: dict[str, tuple[str, ...]] = {
    "cuda_tile.entry": ("exact",),
    "cuda_tile.testing$func": ("exact",),
    "cuda_tile.for": ("exact",),
    "cuda_tile.loop": ("exact",),
    "cuda_tile.if": ("exact", "at_most"),
    "cuda_tile.module": ("at_most",),
    "cuda_tile.reduce": ("exact",),
    "cuda_tile.scan": ("exact",),
}


def check_region_count(v: Verifier, op: Operation) -> None:
    """The region-count trait ODS gives every op (`OneRegion`, `ZeroRegions`, `NRegions<n>`)."""
    opdef = op.opdef
    assert opdef is not None
    want, have = len(opdef.regions), len(op.regions)
    if want == have:
        return
    if want == 0:
        v.fail(op, "requires zero regions", code="region-count")
    if want == 1:
        v.fail(op, "requires one region", code="region-count")
    v.fail(op, f"expected {want} regions", code="region-count")


def check_region_constraints(v: Verifier, op: Operation) -> None:
    """ODS region constraints: `region #0 ('body') failed to verify constraint: region with 1 blocks`."""
    opdef = op.opdef
    assert opdef is not None
    for index, (kind, region) in enumerate(zip(_REGION_SIZES.get(op.name, ()), op.regions)):
        count = len(region.blocks)
        if (kind == "exact" and count != 1) or (kind == "at_most" and count > 1):
            name = opdef.regions[index].name if index < len(opdef.regions) else ""
            label = f" ('{name}') " if name else " "
            what = "region with 1 blocks" if kind == "exact" else "region with at most 1 blocks"
            v.fail(op, f"region #{index}{label}failed to verify constraint: {what}", code="region-blocks")


def _named_types(op: Operation, names: Sequence[str]) -> list[tuple[str, T.Type]]:
    """The types of the named operands/results/typed attributes that are present."""
    opdef = op.opdef
    assert opdef is not None
    out: list[tuple[str, T.Type]] = []
    plan = _plan(opdef)
    operand_names = plan.operand_names
    result_names = plan.result_names
    for name in names:
        if name in operand_names:
            out.extend((name, value.type) for value in op.operand_group(name))
        elif name in result_names:
            out.extend((name, value.type) for value in op.result_group(name))
        else:
            attr = op.properties.get(name)
            t = getattr(attr, "type", None)
            if isinstance(t, T.Type):
                out.append((name, t))
    return out


def _element(t: T.Type) -> T.Type:
    return t.element if isinstance(t, T.TileType) else t


_PRED_RULES = {
    # kind: (what is compared, how ODS words it)
    "same_type": (lambda t: t, "have same type"),
    "same_shape": (tile_shape, "have same shape"),
    "same_rank": (lambda t: len(t.shape) if isinstance(t, T.TileType) else None, "have same rank"),
    "same_element_type": (_element, "have the same element type"),
}


def check_type_rules(v: Verifier, op: Operation) -> None:
    """The op table's type relations, with ODS's messages (`failed to verify that all of
    {lhs, rhs, result} have same type`; `TypesMatchWith` rules carry their own wording)."""
    opdef = op.opdef
    assert opdef is not None
    for rule in opdef.type_rules:
        kind, names = rule[0], rule[1]
        wording = rule[2] if len(rule) > 2 else None  # type: ignore[misc]
        if kind in _PRED_RULES:
            key, how = _PRED_RULES[kind]
            typed = _named_types(op, names)
            if len({name for name, _ in typed}) < len(names):
                continue  # an optional operand is absent
            # Per name, the keys of its values: a variadic group (`initValues` of `for`)
            # matches another group element by element, as ODS compares type ranges.
            groups: dict[str, list[object]] = {}
            for name, t in typed:
                groups.setdefault(name, []).append(key(t))
            keys = list(groups.values())
            if any(k != keys[0] for k in keys[1:]):
                v.fail(
                    op,
                    f"failed to verify that {wording or 'all of {' + ', '.join(names) + '} ' + how}",
                    code="type-rule",
                )
        elif kind == "i1_same_shape":
            typed = _named_types(op, names)
            if len(typed) == 2:
                (_, src), (_, dst) = typed
                if not (isinstance(src, T.TileType) and dst == T.TileType(src.shape, T.I1)):
                    v.fail(
                        op,
                        "failed to verify that "
                        + (wording or "Result type has i1 element type and same shape as operands"),
                        code="type-rule",
                    )
        elif kind == "pointer_tile_of":
            typed = _named_types(op, names)
            if len(typed) == 2:
                (pname, ptr), (vname, val) = typed
                ok = (
                    isinstance(ptr, T.TileType)
                    and isinstance(val, T.TileType)
                    and isinstance(ptr.element, T.PointerType)
                    and ptr.element.pointee == val.element
                    and ptr.shape == val.shape
                )
                if not ok:
                    v.fail(
                        op,
                        "failed to verify that "
                        + (wording or f"`{pname}` type is expected a pointer type of `{vname}` type"),
                        code="type-rule",
                    )
        elif kind == "same_operands_and_result_shape":
            shapes = [tile_shape(x.type) for x in [*op.operands, *op.results]]
            if any(s != shapes[0] for s in shapes[1:]):
                v.fail(op, "requires the same shape for all operands and results", code="type-rule")
        elif kind == "same_operands_shape":
            shapes = [tile_shape(x.type) for x in op.operands]
            if any(s != shapes[0] for s in shapes[1:]):
                v.fail(op, "requires the same shape for all operands", code="type-rule")
        elif kind == "same_operands_and_result_element_type":
            elements = [_element(x.type) for x in [*op.operands, *op.results]]
            if any(e != elements[0] for e in elements[1:]):
                v.fail(op, "requires the same element type for all operands and results", code="type-rule")


def check_traits(v: Verifier, op: Operation) -> None:
    """The native traits of the op table that are about where an op may stand."""
    opdef = op.opdef
    assert opdef is not None
    plan = _plan(opdef)
    for trait, allowed in plan.parents:
        if trait == "Terminator":
            block = op.parent
            if block is not None and block.ops and block.ops[-1] is not op:
                v.fail(op, "must be the last operation in the parent block", code="terminator")
        else:
            parent = op.parent_op
            if parent is None or parent.name not in allowed:
                if len(allowed) == 1:
                    v.fail(op, f"expects parent op '{allowed[0]}'", code="parent")
                v.fail(op, f"expects parent op to be one of '{', '.join(allowed)}'", code="parent")
    if plan.single_block:
        for index, region in enumerate(op.regions):
            if len(region.blocks) > 1:
                v.fail(op, f"expects region #{index} to have 0 or 1 blocks", code="region-blocks")
            if region.blocks and not region.blocks[0].ops and not plan.no_terminator:
                v.fail(op, "expects a non-empty block", code="region-blocks")


def verify(module: Module, options: VerifyOptions | None = None) -> list[Diagnostic]:
    """All diagnostics of verifying `module` (its parse diagnostics are not included)."""
    _load_verifiers()
    verifier = Verifier(module, options)
    verifier.run()
    for check in MODULE_CHECKS:  # whole-module rules (versions, the frontend contract)
        try:
            check(verifier)
        except OpFailed:
            pass
    return verifier.diagnostics


def verify_isolated(module: Module, op: Operation, options: VerifyOptions | None = None) -> list[Diagnostic]:
    """Verify again one op of `module` that is isolated from above (a kernel or a global of a
    `cuda_tile.module`, or one at top level), as `verify` would within the module: the op as a
    unit, the whole-module rules on its ops. Not the symbol table it stands in (names defined
    twice, what its `get_global`s name): that is the whole table's, which `verify` checks once
    every item verifies (`structure.verify_symbol_table`, which the caller runs when it wants
    it). `module.source` must be the text `op` was parsed from."""
    _load_verifiers()
    verifier = Verifier(module, options)
    verifier.scope = op
    verifier._verify_unit(op)
    for check in MODULE_CHECKS:
        try:
            check(verifier)
        except OpFailed:
            pass
    return verifier.diagnostics


_loaded = False


def _load_verifiers() -> None:
    """Import the modules that register op verifiers (once)."""
    global _loaded
    if _loaded:
        return
    import importlib
    import os

    from . import __path__ as package_path

    # The package's own files (pkgutil.iter_modules would do, but imports `inspect`: a few
    # milliseconds of every `check`).
    names = sorted(
        entry.name[:-3] for folder in package_path for entry in os.scandir(folder) if entry.name.endswith(".py")
    )
    for name in names:
        if name.startswith("ops_") or name in ("hints", "contract", "versions", "structure"):
            importlib.import_module(f"{__package__}.{name}")
    _loaded = True
