"""What the server knows about one open document: its text, IR, diagnostics and index.

Features never parse; they ask the document's current `Analysis`, which the server keeps up
to date (`analyze` on open, debounced on change, at once when a request needs it).

Coordinates: the IR keeps the spans it was parsed with. After an edit inside one kernel the
server re-parses and re-verifies only that kernel (see `tile_lsp.incremental`), so the IR of
the kernels after it still holds spans from before the edit. `Analysis.span(span, anchor)`
turns a span taken from the IR (`op.span`, `value.span`, ...) into document coordinates;
everything `Analysis` itself returns (occurrences, diagnostics, comments) is in document
coordinates.

Each unit's text runs from where it starts to where the next one starts (a kernel owns the
blank lines and comments after it): its comments and semantic tokens are kept per unit, so
that after an edit only the edited kernel's are found again.
"""

from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter

from lsprotocol import types as lsp

from compiler.ir.core import Block, Comment, Module, Operation, Region, Value
from compiler.ir.diagnostics import Diagnostic, Severity
from compiler.ir.source import SourceFile, Span
from compiler.text.index import Kind, Occurrence, SourceIndex
from compiler.text.parser import ItemResult, ParseOptions, parse
from compiler.verify import VerifyOptions, verify
from compiler.verify.engine import OpFailed, Verifier, verify_isolated
from compiler.verify.structure import SYMBOL_TABLE_CODES, symbol_name, symbol_users, verify_symbol_table

from .convert import Positions
from .store import DocumentSource


@dataclass(slots=True)
class Settings:
    """The `tileir` configuration section (see vscode-extension/package.json)."""

    target_architecture: str = "sm_100"
    bytecode_version: str = "13.3"
    unsupported_hints: str = "warn"  # silent | warn | error
    debounce_ms: int = 150
    inlay_hints: bool = True

    def verify_options(self) -> VerifyOptions:
        return VerifyOptions(keep_going=True, target_version=None, unsupported_hints=self.unsupported_hints)

    @classmethod
    def from_client(cls, value: object, base: Settings | None = None) -> tuple[Settings, list[str]]:
        """Settings from a client's `tileir` section, and a message for each value ignored."""
        settings = dataclasses.replace(base) if base is not None else cls()
        problems: list[str] = []
        if not isinstance(value, dict):
            return settings, problems
        flat = _flatten(value)
        checks = {
            "targetArchitecture": ("target_architecture", _known_architecture),
            "bytecodeVersion": ("bytecode_version", lambda v: v in ("13.1", "13.2", "13.3")),
            "warnings.unsupportedHints": ("unsupported_hints", lambda v: v in ("silent", "warn", "error")),
            "diagnostics.debounceMs": ("debounce_ms", lambda v: isinstance(v, int | float) and 0 <= v <= 10_000),
            "inlayHints.enabled": ("inlay_hints", lambda v: isinstance(v, bool)),
        }
        for key, (attr, ok) in checks.items():
            if key not in flat or flat[key] is None:
                continue
            if ok(flat[key]):
                setattr(settings, attr, int(flat[key]) if attr == "debounce_ms" else flat[key])
            else:
                problems.append(f"tileir.{key}: ignoring {flat[key]!r}")
        return settings, problems


def _known_architecture(value: object) -> bool:
    """Whether `value` names a GPU the PTX request can compile for (`tileir compile --arch`'s
    rule: an `sm_` name alone lets `sm_bogus` through, to fail at each request)."""
    from compiler.lower.codegen import LowerError, Target  # what the PTX request uses, on first need

    if not isinstance(value, str):
        return False
    try:
        Target.parse(value)
    except LowerError:
        return False
    return True


def _flatten(value: dict, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for key, item in value.items():
        if isinstance(item, dict):
            flat.update(_flatten(item, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = item
    return flat


@dataclass(slots=True)
class Unit:
    """A piece of the document analysed on its own: a kernel or global (`op`), or the text
    before the first of them (`header`) or after the last (`trailer`); a document that is not a
    list of kernels is one header unit. The unit covers [start, end) of its own coordinates
    (`end` None: to the end of the document); `shift` turns them into document offsets."""

    op: Operation | None
    start: int
    end: int | None
    shift: int
    diagnostics: list[Diagnostic]  # in the unit's own coordinates
    index: SourceIndex | None = None
    # A re-parsed kernel's parse, indexed on first need.
    item: ItemResult | None = None
    # The comments from `start` to the next unit's start, in the unit's own coordinates.
    comments: list[Comment] = field(default_factory=list)
    # Semantic tokens of the same text, once asked for (see features/tokens.py); they are
    # relative to the unit's start, so they stay right when the unit moves.
    tokens: object = None
    # The types and symbols written in text after the op that is no op (a kernel half typed
    # between two others), in the unit's own coordinates: a re-parsed unit's index adds them
    # (a whole analysis's index has them already).
    loose: list[Occurrence] = field(default_factory=list)
    # What the symbol table check reads of every unit at every analysis, kept so that it reads
    # them at C speed (`Analysis._symbol_table`): the `get_global` ops in `op` (found once: a
    # unit replaced with new diagnostics keeps them), whether any diagnostic is an error, the
    # name.
    users: list[Operation] | None = None
    has_error: bool = field(init=False)
    name: str | None = field(init=False)

    def __post_init__(self) -> None:
        if self.users is None:
            self.users = [] if self.op is None else symbol_users([self.op])
        self.has_error = any(d.is_error for d in self.diagnostics)
        self.name = None if self.op is None else symbol_name(self.op)

    def covers(self, offset: int) -> bool:
        local = offset - self.shift
        return self.start <= local and (self.end is None or local <= self.end)

    def get_index(self, module: Module) -> SourceIndex | None:
        if self.index is None and self.item is not None and self.op is not None:
            index = SourceIndex.of(module, [self.op], self.item.references)
            self.index = SourceIndex(module, index.occurrences + self.loose, index.ops) if self.loose else index
        return self.index

    def gap_occurrences(self, module: Module) -> list[Occurrence]:
        """The index's occurrences after the op's end (see `loose`), in the unit's coordinates."""
        if self.item is not None or self.end is None:
            return list(self.loose)
        index = self.get_index(module)
        return [] if index is None else index.starting_in(self.end, 1 << 62)


@dataclass(slots=True)
class Analysis:
    uri: str
    version: int | None
    source: SourceFile  # the current text
    module: Module
    settings: Settings
    units: list[Unit]
    # The errors of the parse the module came from, when it was one parse of the whole text
    # (None after a kernel was parsed again).
    parse_errors: list[Diagnostic] | None = None
    positions: Positions = field(init=False)
    _diagnostics: list[Diagnostic] | None = None
    # The symbol table's errors, once checked (an edit that cannot change them hands them on).
    symbol_errors: list[Diagnostic] | None = None
    _shifts: dict[int, int] | None = None

    def __post_init__(self) -> None:
        self.source = DocumentSource.of(self.source)
        self.positions = Positions(self.source)

    @property
    def pristine(self) -> bool:
        """Whether the module is one parse of the current text (no kernel re-parsed since):
        every span in it, and its comments, are in document coordinates."""
        return all(unit.shift == 0 and unit.item is None for unit in self.units)

    @property
    def aligned(self) -> bool:
        """Whether every unit is in document coordinates (none moved since it was parsed, or
        `align` moved it): the module's spans then all are."""
        return all(unit.shift == 0 for unit in self.units)

    def align(self, unit: Unit) -> None:
        """Put `unit` in document coordinates: move the spans of its IR, index, diagnostics
        and comments by its shift (then 0). Work in proportion to the unit: the server
        does it only for formatting, which prints the module by its spans."""
        shift = unit.shift
        if not shift:
            return
        index = unit.get_index(self.module)  # made from the spans as they are, if not yet
        if unit.op is not None:
            _move_ir(unit.op, shift)
        if index is not None:
            moved = [shift_occurrence(occ, shift) for occ in index.occurrences]
            unit.index = SourceIndex(index.module, moved, index.ops)
        unit.loose = [shift_occurrence(occ, shift) for occ in unit.loose]
        unit.diagnostics = [d.moved(shift) for d in unit.diagnostics]
        unit.comments = [Comment(c.text, Span(c.span.start + shift, c.span.end + shift)) for c in unit.comments]
        unit.start += shift
        if unit.end is not None:
            unit.end += shift
        unit.shift = 0
        self._shifts = None

    @property
    def text(self) -> str:
        return self.source.text

    # ---------------------------------------------------------------- coordinates

    def span(self, span: Span, anchor: Operation | Value | Block | Region | None = None) -> Span:
        """A span taken from the IR object `anchor` (or from something inside it), in document
        coordinates."""
        shift = self._shift_of(anchor)
        return Span(span.start + shift, span.end + shift) if shift else span

    def range(self, span: Span, anchor: Operation | Value | Block | Region | None = None) -> lsp.Range:
        return self.positions.range(self.span(span, anchor))

    def offset(self, position: lsp.Position) -> int:
        return self.positions.offset(position)

    def _shift_of(self, anchor: object) -> int:
        if anchor is None or len(self.units) == 1:
            return 0
        if self._shifts is None:
            self._shifts = {id(unit.op): unit.shift for unit in self.units if unit.op is not None and unit.shift}
        return self._shifts.get(id(_top_op(anchor)), 0)

    # ---------------------------------------------------------------- queries

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every diagnostic, in document coordinates, in document order."""
        if self._diagnostics is None:
            found: list[Diagnostic] = []
            for unit in self.units:
                if unit.diagnostics:
                    found.extend(d.moved(unit.shift) for d in unit.diagnostics)
            if self.symbol_errors is None:
                self.symbol_errors = self._symbol_table()
            found += self.symbol_errors
            found.sort(key=lambda d: (d.span.start, d.severity))
            self._diagnostics = found
        return self._diagnostics

    def _symbol_table(self) -> list[Diagnostic]:
        """The errors of the kernels' symbol table (a name defined twice, a `get_global` that
        names no global): checked, as the verifier does, once everything else verifies — no
        error in any unit. They are the whole table's, not a unit's: every analysis checks it
        again (in proportion to the number of kernels and `get_global`s, not to the text)."""
        units = self.units
        if len(units) < 3 or units[1].op is None or units[1].op.parent is None:
            return []  # not cut into kernels: the whole verification gave them
        if any(map(_HAS_ERROR, units)):
            return []
        items = units[1:-1]
        if not any(map(_USERS, items)):
            names = list(map(_NAME, items))
            if len(set(names)) == len(names):
                return []  # (what is left to check, in proportion to the kernels)
        users = list(chain.from_iterable(map(_USERS, items)))
        verifier = _DocumentVerifier(self)
        try:
            verify_symbol_table(verifier, [units[1].op.parent], users)
        except OpFailed:
            pass  # the first error stops it, as MLIR's symbol table verifier
        return verifier.diagnostics

    def unit_at(self, offset: int) -> Unit | None:
        """The unit whose text covers `offset` (a cursor just after a kernel's `}` is in it)."""
        units = self.units
        lo, hi = 0, len(units)
        while lo < hi:  # the last unit that starts at or before `offset`
            mid = (lo + hi) // 2
            if units[mid].start + units[mid].shift <= offset:
                lo = mid + 1
            else:
                hi = mid
        for unit in units[max(lo - 2, 0) : lo]:  # the one before may end exactly at `offset`
            if unit.covers(offset) and unit.op is not None:
                return unit
        return units[lo - 1] if lo > 0 and units[lo - 1].covers(offset) else None

    def at(self, offset: int, kinds: tuple[Kind, ...] | None = None) -> Occurrence | None:
        """The innermost occurrence (value, block, symbol, op name, type) under `offset`."""
        unit = self.unit_at(offset)
        index = unit.get_index(self.module) if unit is not None else None
        if unit is None or index is None:
            return None
        occ = index.at(offset - unit.shift, kinds)
        return shift_occurrence(occ, unit.shift) if occ is not None else None

    def op_at(self, offset: int) -> Operation | None:
        """The innermost op whose text covers `offset`."""
        unit = self.unit_at(offset)
        index = unit.get_index(self.module) if unit is not None else None
        if unit is None or index is None:
            return None
        return index.op_at(offset - unit.shift)

    def references(self, occ: Occurrence) -> list[Occurrence]:
        """Every occurrence of `occ`'s entity, definitions first, then in document order.
        Values and blocks live in one unit; a symbol is looked for in every unit, by name."""
        if occ.kind is Kind.SYMBOL:
            name = occ.symbol_name
            found = [o for o in self.occurrences() if o.kind is Kind.SYMBOL and o.symbol_name == name]
            return sorted(found, key=lambda o: (not o.is_definition, o.span.start))
        unit = self.unit_at(occ.span.start)
        index = unit.get_index(self.module) if unit is not None else None
        if unit is None or index is None:
            return []
        local = shift_occurrence(occ, -unit.shift)
        return [shift_occurrence(o, unit.shift) for o in index.references_to(local)]

    def definition(self, occ: Occurrence) -> Occurrence | None:
        for other in self.references(occ):
            if other.is_definition:
                return other
        return None

    def occurrences(self, start: int = 0, end: int | None = None) -> list[Occurrence]:
        """The occurrences that start in [start, end), in document order."""
        end = len(self.text) if end is None else end
        found: list[Occurrence] = []
        for unit in self.units:
            shift = unit.shift
            if unit.start + shift >= end or (unit.end is not None and unit.end + shift < start):
                continue  # no overlap: do not even index it
            index = unit.get_index(self.module)
            if index is None:
                continue
            local = index.starting_in(start - shift, end - shift)
            found.extend(shift_occurrence(occ, shift) for occ in local)
        found.sort(key=lambda o: (o.span.start, -o.span.end))
        return found

    def comments(self) -> list[Comment]:
        """Every comment, in document coordinates, in document order."""
        found: list[Comment] = []
        for unit in self.units:
            shift = unit.shift
            found.extend(
                Comment(c.text, Span(c.span.start + shift, c.span.end + shift)) if shift else c for c in unit.comments
            )
        return found

    @property
    def has_errors(self) -> bool:
        return any(d.severity == Severity.ERROR for d in self.diagnostics)


def _top_op(anchor: object) -> Operation | None:
    """The outermost op below the document's top level (or inside a top-level
    `cuda_tile.module`) that `anchor` belongs to: the unit it was parsed in."""
    op: Operation | None
    if isinstance(anchor, Operation):
        op = anchor
    elif isinstance(anchor, Value):
        owner = getattr(anchor, "owner", None)
        op = owner if isinstance(owner, Operation) else _block_op(owner)
    elif isinstance(anchor, Block):
        op = _block_op(anchor)
    elif isinstance(anchor, Region):
        op = anchor.parent
    else:
        return None
    while op is not None:
        parent = op.parent_op
        if parent is None or parent.name == "cuda_tile.module":
            return op
        op = parent
    return None


def _block_op(block: object) -> Operation | None:
    region = getattr(block, "parent", None)
    return region.parent if region is not None else None


def _move_ir(root: Operation, shift: int) -> None:
    """Move every span in `root` and the IR under it by `shift`."""

    def moved(span: Span | None) -> Span | None:
        return Span(span.start + shift, span.end + shift) if span is not None else None

    for op in root.walk():
        op.span = moved(op.span)
        op.name_span = moved(op.name_span)
        if op.operand_spans is not None:
            op.operand_spans = [Span(s.start + shift, s.end + shift) for s in op.operand_spans]
        for result in op.results:
            result.span = moved(result.span)
        for region in op.regions:
            region.span = moved(region.span)
            for block in region.blocks:
                block.span = moved(block.span)
                block.label_span = moved(block.label_span)
                for argument in block.arguments:
                    argument.span = moved(argument.span)


def shift_occurrence(occ: Occurrence, shift: int) -> Occurrence:
    """`occ` moved `shift` characters (itself when 0)."""
    if not shift:
        return occ
    return dataclasses.replace(occ, span=Span(occ.span.start + shift, occ.span.end + shift))


def analyze(
    uri: str,
    text: str,
    version: int | None,
    settings: Settings,
    name: str | None = None,
    source: DocumentSource | None = None,
) -> Analysis:
    """Parse, verify and index `text` from scratch, cut into units. `source`: the text's
    `DocumentSource`, when the caller has one (its line index is then not built again)."""
    result = parse(text, name or uri, ParseOptions(record_references=True))
    module = result.module
    parse_diagnostics = list(result.diagnostics)
    kernels = kernel_ops(module)
    index = SourceIndex.build(result)
    if not any(d.is_error for d in parse_diagnostics):
        diagnostics = parse_diagnostics + verify(module, settings.verify_options())
        if kernels:  # the symbol table's errors are the analysis's (Analysis._symbol_table)
            diagnostics = [d for d in diagnostics if d.code not in SYMBOL_TABLE_CODES]
    elif kernels:
        # Verify the kernels that parsed cleanly, as re-analysis after an edit does.
        broken = {id(_top_op_at(kernels, d.span.start)) for d in parse_diagnostics}
        diagnostics = parse_diagnostics + [
            d for op in kernels if id(op) not in broken for d in verify_isolated(module, op, settings.verify_options())
        ]
    else:
        diagnostics = parse_diagnostics
    # (The parser records comments as it lexes them, not necessarily in document order.)
    units = _cut(kernels, diagnostics, index, sorted(module.comments, key=lambda c: c.span.start))
    if source is None or source.text is not text:
        source = DocumentSource.of(result.source)
    parse_errors = [d for d in parse_diagnostics if d.is_error]
    return Analysis(uri, version, source, module, settings, units, parse_errors)


def kernel_ops(module: Module) -> list[Operation]:
    """The ops a document re-analyses one at a time: the kernels and globals of its one
    `cuda_tile.module` (or at its top level, as tileirdisasm prints them). Empty when the
    document has any other shape (it is then analysed as a whole)."""
    top = [op for op in module.ops if op.span is not None]
    if len(top) == 1 and top[0].name == "cuda_tile.module" and top[0].regions and top[0].regions[0].blocks:
        items = top[0].regions[0].blocks[0].ops
    else:
        items = top
    if not items or any(op.span is None or op.name not in UNIT_OPS for op in items):
        return []
    return items


UNIT_OPS = ("cuda_tile.entry", "cuda_tile.global")


def _top_op_at(kernels: list[Operation], offset: int) -> Operation | None:
    for op in kernels:
        if op.span.start <= offset < op.span.end:
            return op
    return None


def _cut(
    kernels: list[Operation], diagnostics: list[Diagnostic], index: SourceIndex, comments: list[Comment]
) -> list[Unit]:
    """Units for the header, each kernel and the trailer, each with its share of the
    diagnostics, of the index and of the comments."""
    if not kernels:
        return [Unit(None, 0, None, 0, diagnostics, index, comments=list(comments))]
    bounds = [(None, 0, kernels[0].span.start)]
    bounds += [(op, op.span.start, op.span.end) for op in kernels]
    bounds.append((None, kernels[-1].span.end, None))
    units: list[Unit] = []
    occ_starts = [o.span.start for o in index.occurrences]
    op_starts = [op.span.start for op in index.ops]
    diagnostics = sorted(diagnostics, key=lambda d: d.span.start)
    diag_starts = [d.span.start for d in diagnostics]
    comment_starts = [c.span.start for c in comments]
    # Each unit takes what starts from its own start to the next one's: the header [0, first),
    # a kernel [start, next start) (what lies between kernels is the kernel's before it: an
    # error there must not be lost), the last kernel [start, end], the trailer (end, ...).
    los = [start + 1 if op is None and i else start for i, (op, start, _) in enumerate(bounds)]
    for i, (op, start, end) in enumerate(bounds):
        lo = los[i]
        hi = los[i + 1] if i + 1 < len(bounds) else 1 << 62
        o0, o1 = bisect.bisect_left(occ_starts, lo), bisect.bisect_left(occ_starts, hi)
        p0, p1 = bisect.bisect_left(op_starts, lo), bisect.bisect_left(op_starts, hi)
        d0, d1 = bisect.bisect_left(diag_starts, lo), bisect.bisect_left(diag_starts, hi)
        part = SourceIndex(index.module, index.occurrences[o0:o1], index.ops[p0:p1])
        # Comments: up to where the next unit starts.
        c0 = bisect.bisect_left(comment_starts, start)
        c1 = bisect.bisect_left(comment_starts, bounds[i + 1][1]) if i + 1 < len(bounds) else len(comments)
        units.append(Unit(op, start, end, 0, diagnostics[d0:d1], part, comments=comments[c0:c1]))
    return units


_HAS_ERROR = attrgetter("has_error")
_NAME = attrgetter("name")
_USERS = attrgetter("users")


class _DocumentVerifier(Verifier):
    """A verifier whose diagnostics point into the document: the kernels it looks at may have
    moved since they were parsed (`Analysis.span`)."""

    def __init__(self, analysis: Analysis) -> None:
        super().__init__(analysis.module, analysis.settings.verify_options())
        self.source = analysis.source
        self.analysis = analysis

    def op_span(self, op: Operation) -> Span:
        return self.analysis.span(op.head_span, op)
