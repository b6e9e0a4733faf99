"""The canonical printer.

Prints what `cuda-tile-opt` prints (or MLIR's generic form), keeping the SSA names
the user wrote and naming the rest. Comments of the source are put back next to
the code they were written with, so `tileir fmt` never loses a user's words.
"""

from __future__ import annotations

import math
import re

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Block, BlockArgument, Comment, Module, Operation, OpResult, Region, Value
from ..ir.frozen import Record
from . import asmformat
from .custom_ops import PRINTERS


class PrintOptions(Record):
    __slots__ = ("generic", "debuginfo", "keep_comments", "source_names")

    def __init__(
        self, generic: bool = False, debuginfo: bool = False, keep_comments: bool = True, source_names: bool = True
    ) -> None:
        self.generic = generic
        self.debuginfo = debuginfo
        self.keep_comments = keep_comments
        # False: name every value as MLIR does (`cuda-tile-opt` never keeps the source's
        # names), ignoring the names the source wrote.
        self.source_names = source_names


def print_module(module: Module, options: PrintOptions | None = None) -> str:
    printer = Printer(module, options or PrintOptions())
    return printer.print_module()


def value_names(module: Module, options: PrintOptions | None = None) -> dict[Value, str]:
    """The name `print_module` gives each value of `module` (without printing it): the
    source's where it has one, else MLIR's numbering."""
    printer = Printer(module, options or PrintOptions())
    printer._assign_names(module.body.ops)
    return printer.names


def print_op(op: Operation, options: PrintOptions | None = None) -> str:
    """One operation (and its regions) on its own, for hovers and messages."""
    printer = Printer(None, options or PrintOptions(keep_comments=False))
    printer.print_operation(op)
    return "".join(printer.out)


_UNKNOWN = A.UnknownLoc()


class Printer:
    def __init__(self, module: Module | None, options: PrintOptions) -> None:
        self.module = module
        self.options = options
        self.out: list[str] = []
        self.indent = 0
        self.names: dict[Value, str] = {}
        self.used_names: set[str] = set()
        self.counter = 0
        self.aliases: dict[A.Attribute, str] = {}
        # With --mlir-print-debuginfo, locations are printed as `loc(#locN)` and
        # defined at the end, as MLIR does.
        self.loc_aliases: dict[A.LocationAttr, str] = {}
        comments = module.comments if (module is not None and options.keep_comments) else []
        self.comments: list[Comment] = sorted(comments, key=lambda c: c.span.start)
        self.next_comment = 0
        self.text = module.source.text if module is not None and module.source is not None else ""
        # `text.parts` splices the printed parts of one region from several processes: for the
        # region whose `{` is at `mark_region`, where in `out` each op's line begins, where
        # the op itself begins (after the comments put back before it) and ends, and where the
        # region's closing line begins.
        self.mark_region: int | None = None
        self.op_marks: list[tuple[int, int, int]] = []
        self.tail_mark = -1
        self.unnamed = False  # some value had no name of its own (the printer numbered it)

    # ------------------------------------------------------------------ output helpers

    def write(self, text: str) -> None:
        self.out.append(text)

    def newline(self) -> None:
        self.out.append("\n" + "  " * self.indent)

    # ------------------------------------------------------------------ names

    def _assign_names(self, ops: list[Operation], top: bool = True) -> None:
        """Give every value a printable name, keeping the ones the user wrote.

        Values without a name are named as MLIR's printer names them (see `_Namer`):
        the names ops suggest (`%tview`, `%blockId_x`, `%cst_0_i32`, ...), made unique
        with `_N` suffixes, and plain numbers for the rest."""
        names = self.names
        used = self.used_names
        if not self.options.source_names:
            self.unnamed = True
            _Namer(self).number_top(ops, ignore_source=True)
            return
        unnamed = False
        stack = list(ops)
        while stack:
            op = stack.pop()
            for r in op.results:
                name = r.name
                if name is None:
                    unnamed = True
                else:
                    names[r] = name
                    used.add(name.split("#", 1)[0])
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        name = a.name
                        if name is None:
                            unnamed = True
                        else:
                            names[a] = name
                            used.add(name)
                    stack.extend(block.ops)
        if unnamed:
            self.unnamed = True
            _Namer(self).number_top(ops)

    def _fresh_number(self) -> str:
        while str(self.counter) in self.used_names:
            self.counter += 1
        name = str(self.counter)
        self.used_names.add(name)
        self.counter += 1
        return name

    def value(self, v: Value | None) -> str:
        if v is None:
            return "%<null>"
        name = self.names.get(v)
        if name is None:
            name = v.name or self._fresh_number()
            self.names[v] = name
        return "%" + name

    # ------------------------------------------------------------------ types and attributes

    def type(self, t: T.Type) -> str:
        return t.full() if self.options.generic else str(t)

    def attr(self, a: A.Attribute) -> str:
        alias = self.aliases.get(a)
        if alias is not None:
            return "#" + alias
        if isinstance(a, A.DIAttr) and self.aliases:
            return f"#cuda_tile.{a.kind}" + self._di_body(a)
        if isinstance(a, A.ArrayAttr):
            return "[" + ", ".join(self.attr(e) for e in a.elements) + "]"
        if isinstance(a, A.DictionaryAttr):
            return "{" + ", ".join(self._dict_entry(k, v) for k, v in a.entries) + "}"
        if isinstance(a, A.TypeAttr):
            return self.type(a.value)
        if isinstance(a, A.LocationAttr):
            name = self.loc_aliases.get(a)
            return f"loc(#{name})" if name else "loc(" + self.location_body(a) + ")"
        return str(a)

    def _dict_entry(self, key: str, value: A.Attribute) -> str:
        text = A._dict_entry(key, A.UNIT)
        return text if isinstance(value, A.UnitAttr) else f"{text} = {self.attr(value)}"

    def _di_body(self, a: A.DIAttr) -> str:
        if a.kind == "di_file":
            return a.body()
        return "<" + ", ".join(f"{k} = {self.attr(v)}" for k, v in a.params) + ">"

    def location_body(self, loc: A.LocationAttr) -> str:
        name = self.loc_aliases.get(loc)
        if name is not None:
            return "#" + name
        if isinstance(loc, A.DILocAttr):
            return f"#cuda_tile.di_loc<{self.location_body(loc.source)} in {self.attr(loc.scope)}>"
        if isinstance(loc, A.CallSiteLoc):
            return f"callsite({self.location_body(loc.callee)} at {self.location_body(loc.caller)})"
        if isinstance(loc, A.FusedLoc):
            meta = f"<{self.attr(loc.metadata)}>" if loc.metadata is not None else ""
            return f"fused{meta}[{', '.join(self.location_body(x) for x in loc.locations)}]"
        return loc.body()

    def attr_dict(self, op: Operation, elided: set[str], keyword: bool = False) -> str:
        """` {a = 1}` for the attributes a format does not print (or `` when none)."""
        entries: list[tuple[str, A.Attribute]] = []
        opdef = op.opdef
        for key, value in op.properties.items():
            if key in elided:
                continue
            adef = opdef.attribute(key) if opdef else None
            if adef is not None and asmformat.is_default(value, adef):
                continue
            entries.append((key, value))
        entries.extend((k, v) for k, v in op.attributes.items() if k not in elided)
        if not entries:
            return ""
        body = "{" + ", ".join(self._dict_entry(k, v) for k, v in entries) + "}"
        return (" attributes " if keyword else " ") + body

    # ------------------------------------------------------------------ debug-info aliases

    def _collect_aliases(self) -> tuple[list[str], list[str]]:
        """Alias definitions as MLIR's printer makes them: (lines printed before the ops,
        lines printed after them). See `_AliasCollector`."""
        assert self.module is not None
        collector = _AliasCollector(self.options.generic)
        for op in self.module.body.ops:
            collector.visit_op(op)
        ordered = collector.ordered()
        counts: dict[str, int] = {}
        for entry in ordered:
            n = counts.get(entry.name, 0)
            counts[entry.name] = n + 1
            alias = entry.name if n == 0 else f"{entry.name}{'_' if entry.name[-1].isdigit() else ''}{n}"
            if isinstance(entry.attr, A.LocationAttr):
                self.loc_aliases[entry.attr] = alias
            else:
                self.aliases[entry.attr] = alias
        early: list[str] = []
        late: list[str] = []
        for entry in ordered:
            (late if entry.deferred else early).append(self._alias_definition(entry.attr))
        return early, late

    def _alias_definition(self, a: A.Attribute) -> str:
        if isinstance(a, A.LocationAttr):
            name = self.loc_aliases.pop(a)
            try:
                body = self.location_body(a)
            finally:
                self.loc_aliases[a] = name
            return f"#{name} = {body if isinstance(a, A.DILocAttr) else f'loc({body})'}"
        name = self.aliases.pop(a)
        try:
            return f"#{name} = {self.attr(a)}"
        finally:
            self.aliases[a] = name

    # ------------------------------------------------------------------ comments

    def _flush_comments(self, before: int) -> None:
        """Emit, each on its own line, the comments that start before `before`."""
        comments = self.comments
        while self.next_comment < len(comments) and comments[self.next_comment].span.start < before:
            self.write(comments[self.next_comment].text)
            self.newline()
            self.next_comment += 1

    def _trailing_comment(self, end: int) -> None:
        comments = self.comments
        if self.next_comment < len(comments):
            c = comments[self.next_comment]
            gap = self.text[end : c.span.start]
            if "\n" not in gap and not gap.strip():
                self.write(" " + c.text)
                self.next_comment += 1

    # ------------------------------------------------------------------ module and ops

    def print_module(self) -> str:
        module = self.module
        assert module is not None
        self._assign_names(module.body.ops)
        late: list[str] = []
        if self.options.debuginfo:
            early, late = self._collect_aliases()
            for line in early:
                self.write(line + "\n")
        for op in module.body.ops:
            if op.span is not None:
                self._flush_comments(op.span.start)
            self.print_operation(op, top_level=True)
            if op.span is not None:
                self._trailing_comment(op.span.end)
            self.write("\n")
        if self.comments:
            self._flush_comments(len(self.text) + 1)
        for line in late:
            self.write(line + "\n")
        text = "".join(self.out)
        return text if text.endswith("\n") or not text else text + "\n"

    def print_operation(self, op: Operation, top_level: bool = False) -> None:
        if not self.names and self.module is None:
            self._assign_names([op])
        self._print_results(op)
        opdef = op.opdef
        if op.name == "builtin.module" and not self.options.generic and _plain_module(op):
            self._print_builtin_module(op)
        elif self.options.generic or opdef is None:
            self._print_generic(op)
        else:
            name = op.name if top_level and op.name == "cuda_tile.module" else opdef.mnemonic
            self.out.append(name)
            custom = PRINTERS.get(opdef.mnemonic)
            if custom is not None:
                custom(self, op)
            else:
                asmformat.print_op(self, op)
        if self.options.debuginfo:
            # An op with no location prints as MLIR prints `loc(unknown)`.
            self.write(" " + self.attr(op.location if op.location is not None else _UNKNOWN))

    def _print_builtin_module(self, op: Operation) -> None:
        """`module @name attributes {...} { ... }`, MLIR's pretty form of `builtin.module` (the
        frontend contract's wrapper), so `fmt` keeps a wrapped file in the form it was written.
        Its ops print as at the top level (`cuda_tile.module`, full name), as MLIR prints ops
        whose parent sets no default dialect."""
        name = op.properties.get("sym_name")
        if isinstance(name, A.StringAttr):
            # `module @name` reads back as a `cuda_tile.module` (the spec's short form), so a
            # named wrapper keeps its full name.
            self.write("builtin.module " + str(A.SymbolRefAttr(name.value)))
        else:
            self.write("module")
        # Any other inherent attribute (`sym_visibility`) goes into the dictionary, as MLIR's
        # `attr-dict-with-keyword` prints it; the parser reads it back from there.
        self.write(self.attr_dict(op, {"sym_name"}, keyword=True))
        self.write(" ")
        self.print_region(op.regions[0], top_level=True)

    def _print_results(self, op: Operation) -> None:
        results = op.results
        if not results:
            return
        names = self.names
        if len(results) == 1:
            name = names.get(results[0]) or self.value(results[0])[1:]
            self.write("%" + name.split("#", 1)[0] + " = ")
            return
        # Results print in groups: `%a, %b:2 = ...` (a group's members are `b#0`, `b#1`).
        parts: list[str] = []
        base = ""
        count = 0
        for r in results:
            name = names.get(r) or self.value(r)[1:]
            head, sep, k = name.partition("#")
            if count and sep and head == base and k == str(count):
                count += 1
                continue
            if count:
                parts.append(f"%{base}:{count}" if count > 1 else "%" + base)
            base, count = head, 1
        parts.append(f"%{base}:{count}" if count > 1 else "%" + base)
        self.write(", ".join(parts) + " = ")

    def _print_generic(self, op: Operation) -> None:
        from ..dialect.opdef import OpDef

        generic = self.options.generic
        self.options.generic = True
        try:
            name = op.name
            self.write(A.quote(name))
            self.write("(" + ", ".join(self.value(v) for v in op.operands) + ")")
            props: list[tuple[str, str]] = []
            opdef: OpDef | None = op.opdef
            for key, value in op.properties.items():
                props.append((key, self._generic_property(value)))
            if opdef is not None and op.operand_segments is not None and "AttrSizedOperandSegments" in opdef.traits:
                props.append(("operandSegmentSizes", f"array<i32: {', '.join(map(str, op.operand_segments))}>"))
            if props:
                self.write(" <{" + ", ".join(f"{k} = {v}" if v != "unit" else k for k, v in props) + "}>")
            if op.regions:
                self.write(" (")
                for i, region in enumerate(op.regions):
                    if i:
                        self.write(", ")
                    self.print_region(region, print_entry_args=True)
                self.write(")")
            if op.attributes:
                self.write(" {" + ", ".join(self._dict_entry(k, v) for k, v in op.attributes.items()) + "}")
            fn = T.FunctionType(tuple(v.type for v in op.operands), tuple(r.type for r in op.results))
            self.write(" : " + str(fn))
        finally:
            self.options.generic = generic

    def _generic_property(self, value: A.Attribute) -> str:
        if isinstance(value, A.EnumAttr) and value.enum.int_storage:
            return f"{value.value} : i32"
        if isinstance(value, A.UnitAttr):
            return "unit"
        return self.attr(value)

    # ------------------------------------------------------------------ regions

    def print_region(
        self,
        region: Region,
        print_entry_args: bool = False,
        print_terminators: bool = True,
        top_level: bool = False,
    ) -> None:
        self.write("{")
        self.indent += 1
        marking = self.mark_region is not None and region.span is not None and region.span.start == self.mark_region
        for bi, block in enumerate(region.blocks):
            show_label = (
                (bi > 0)
                or (print_entry_args and bool(block.arguments))
                or (self.options.generic and bool(block.arguments))
            )
            if show_label:
                self.out.append("\n" + "  " * (self.indent - 1))
                self._print_block_label(block, bi)
            ops = block.ops
            if not print_terminators and ops and bi == 0:
                ops = ops[:-1]
            comments = self.comments
            for op in ops:
                line = len(self.out)
                self.out.append("\n" + "  " * self.indent)  # `newline`
                # (Comments are put back only while some are left to put back.)
                span = op.span if self.next_comment < len(comments) else None
                if span is not None and span.end > span.start:
                    self._flush_comments(_header_end(op))
                begin = len(self.out)
                self.print_operation(op, top_level)
                if span is not None and span.end > span.start:
                    self._trailing_comment(span.end)
                if marking:
                    self.op_marks.append((line, begin, len(self.out)))
        self.indent -= 1
        if region.span is not None and self.next_comment < len(self.comments):
            if self.comments[self.next_comment].span.start < region.span.end:
                self.indent += 1
                self.newline()
                self._flush_comments(region.span.end)
                # _flush_comments leaves a fresh indented line; replace it with the closing one.
                self.out.pop()
                self.indent -= 1
        if marking:
            self.tail_mark = len(self.out)
        self.newline()
        self.write("}")

    def _print_block_label(self, block: Block, index: int) -> None:
        label = block.label or f"bb{index}"
        self.write("^" + label)
        if block.arguments:
            if self.options.debuginfo:
                parts = [
                    f"{self.value(a)}: {self.type(a.type)} {self.attr(a.location or _UNKNOWN)}" for a in block.arguments
                ]
            else:
                parts = [f"{self.value(a)}: {self.type(a.type)}" for a in block.arguments]
            self.write("(" + ", ".join(parts) + ")")
        self.write(":")

    def signature(self, region: Region | None, results: tuple[T.Type, ...]) -> str:
        """`(%a: tile<f32>, ...) -> result` of an entry-like op, from its body's arguments."""
        args = region.entry_block.arguments if region is not None and region.entry_block else []
        # Like cuda_tile's printer, argument locations are not printed here.
        text = "(" + ", ".join(f"{self.value(a)}: {self.type(a.type)}" for a in args) + ")"
        if results:
            if len(results) == 1:
                text += " -> " + self.type(results[0])
            else:
                text += " -> (" + ", ".join(self.type(t) for t in results) + ")"
        return text


def _plain_module(op: Operation) -> bool:
    """A `builtin.module` the pretty form can carry: no operands or results, one region of at
    most one block without arguments (anything else keeps the generic form, which says it)."""
    if op.results or op.operands or len(op.regions) != 1:
        return False
    blocks = op.regions[0].blocks
    return len(blocks) <= 1 and not (blocks and blocks[0].arguments)


def _header_end(op: Operation) -> int:
    """Where an op's own text ends and its first region begins."""
    assert op.span is not None
    for region in op.regions:
        if region.span is not None:
            return region.span.start
    return op.span.end


# ---------------------------------------------------------------------------------- SSA names
#
# Values with no name of their own are named as MLIR's AsmPrinter names them:
#
# * A region is numbered as a whole before the regions nested in it. Each nested region
#   starts from the counters (next number, next `argN`, next collision suffix) as they
#   stand once its parent region is done, and sees the names of its ancestor regions but
#   not those of its siblings (MLIR keeps a scoped name table).
# * Ops may suggest names for their results and for their regions' arguments (the
#   OpAsmOpInterface hooks of the cuda_tile dialect, and the ones ODS generates for ops
#   with several named results). A suggested name already in use gets `_N`, N taken from
#   one counter shared by the whole naming pass.
# * Unsuggested results are numbered `%0`, `%1`, ...; an op's results after the first
#   belong to the group of the nearest named result before them (`%1:2`, `%1#1`).
# * Unsuggested arguments of a region's entry block are `%argN`; other block arguments are
#   numbered.

# Ops whose result names are fixed words.
_FIXED_RESULT_NAMES = {
    "broadcast": "bcast",
    "make_tensor_view": "tview",
    "make_partition_view": "pview",
    "make_strided_view": "sview",
    "make_gather_scatter_view": "gsview",
    "reshape": "reshape",
}
# Ops that name their first result, when they have one.
_FIRST_RESULT_NAMES = {"for": "for", "reduce": "reduce"}
# Ops that implement the naming interface but suggest nothing for their results.
_SILENT_NAMERS = frozenset({"entry", "if", "loop", "module", "scan", "testing$func"})
_SANE = re.compile(r"[A-Za-z0-9$._-]+\Z")

# mnemonic -> result-definition names, for the ops whose naming hook ODS generates (more
# than one declared result, at least one named, and no hand-written hook).
_ods_names: dict[str, tuple[str, ...]] | None = None


def _ods_result_names() -> dict[str, tuple[str, ...]]:
    global _ods_names
    if _ods_names is None:
        from ..dialect import ALL_OPS

        table: dict[str, tuple[str, ...]] = {}
        for opdef in ALL_OPS:
            m = opdef.mnemonic
            if opdef.dialect != "cuda_tile" or len(opdef.results) < 2:
                continue
            if m in _FIXED_RESULT_NAMES or m in _FIRST_RESULT_NAMES or m in _SILENT_NAMERS:
                continue
            if m in ("assume", "constant") or not any(r.name for r in opdef.results):
                continue
            table[m] = tuple(r.name for r in opdef.results)
        _ods_names = table
    return _ods_names


def _sanitize(name: str) -> str:
    """MLIR's sanitizeIdentifier for SSA names (trailing digits allowed)."""
    if _SANE.match(name) and not name[0].isdigit():
        return name
    out = []
    for ch in name:
        if ch.isascii() and (ch.isalnum() or ch in "$._-"):
            out.append(ch)
        elif ch == " ":
            out.append("_")
        else:
            out.extend(f"{b:X}" for b in ch.encode("utf-8"))
    text = "".join(out)
    return "_" + text if name[0].isdigit() else text


def _constant_name(op: Operation) -> str:
    value = op.properties.get("value")
    if not isinstance(value, A.DenseElementsAttr):
        return "cst"
    element = value.element
    values = value.values
    if isinstance(element, T.IntegerType) and element.width == 1:
        if all(values):
            return "true"
        if not any(values):
            return "false"
        return "cst_i1"
    name = "cst"
    if values and (value.splat or len(values) == 1 or all(x == values[0] for x in values)):
        bits = values[0]
        if isinstance(element, T.IntegerType):
            name += f"_{bits}"
        elif isinstance(element, T.FloatType):
            from ..ir.floats import bits_to_float

            try:
                x = bits_to_float(bits, element.name)
            except (KeyError, ValueError):
                x = None
            if x is not None:
                if math.isnan(x):
                    name += "_NaN"
                elif math.isfinite(x) and x == int(x) and 0 <= x < 2.0**64 and math.copysign(1.0, x) > 0:
                    # APFloat's conversion to an unsigned 64-bit integer, when exact.
                    name += f"_{int(x)}"
    return f"{name}_{element}"


def _suggested_results(op: Operation, seen: int = 0) -> list[tuple[int, str]] | None:
    """(result index, name) the op suggests; None when the op has no naming hook."""
    opdef = op.opdef
    if opdef is None or opdef.dialect != "cuda_tile":
        return None
    m = opdef.mnemonic
    fixed = _FIXED_RESULT_NAMES.get(m)
    if fixed is not None:
        return [(0, fixed)] if op.results else []
    if m == "constant":
        return [(0, _constant_name(op))] if op.results else []
    if m == "assume":
        if not op.results:
            return []
        source = op.operands[0] if op.operands else None
        producer = source.owner if isinstance(source, OpResult) else None
        if producer is not None and seen < 64:
            inner = _suggested_results(producer, seen + 1)
            if inner is not None:
                name = "assume_"
                for index, suggested in inner:
                    if index == source.index:  # type: ignore[union-attr]
                        name += suggested
                return [(0, name)]
        return [(0, "assume")]
    first = _FIRST_RESULT_NAMES.get(m)
    if first is not None:
        return [(0, first)] if op.results else []
    if m in _SILENT_NAMERS:
        return []
    ods = _ods_result_names().get(m)
    if ods is None:
        return None
    out = []
    for name in ods:
        group = op.result_group(name)
        if group and name:
            out.append((group[0].index, name))
    return out


def _suggested_arguments(op: Operation, region: Region) -> list[tuple[BlockArgument, str]]:
    opdef = op.opdef
    if opdef is None or opdef.dialect != "cuda_tile" or not region.blocks:
        return []
    m = opdef.mnemonic
    if m == "for":
        args = region.blocks[0].arguments
        out = [(args[0], "loopIdx")] if args else []
        out.extend((a, f"iterArg{i}") for i, a in enumerate(args[1:]))
        return out
    if m == "reduce":
        args = [a for b in region.blocks for a in b.arguments]
        many = len(args) > 2
        return [
            (a, ("reduce_lhs" if i % 2 == 0 else "reduce_rhs") + (str(i // 2) if many else ""))
            for i, a in enumerate(args)
        ]
    return []


class _Namer:
    """One naming pass over the unnamed values of a printer's ops (MLIR's SSANameState)."""

    __slots__ = ("names", "used", "reserved", "generic", "next_value", "next_arg", "next_conflict", "added", "keep")

    def __init__(self, printer: Printer) -> None:
        self.names = printer.names
        self.used: set[str] = set(printer.used_names)
        # Numbers the user wrote (kept as they are) are skipped by the numbering.
        self.reserved = {n for n in printer.used_names if n.isdigit()}
        self.generic = printer.options.generic
        self.next_value = 0
        self.next_arg = 0
        self.next_conflict = 0
        self.added: list[str] = []
        self.keep = True  # keep the names values carry (False: MLIR names for all)

    def number_top(self, ops: list[Operation], ignore_source: bool = False) -> None:
        if ignore_source:
            self.keep = False
        for op in ops:
            self._number_op(op)
        self._nested(ops)

    def _nested(self, ops) -> None:
        saved = (self.next_value, self.next_arg, self.next_conflict)
        for op in ops:
            for region in op.regions:
                self.next_value, self.next_arg, self.next_conflict = saved
                self._number_region(op, region)

    def _number_region(self, parent: Operation, region: Region) -> None:
        mark = len(self.added)
        names = self.names
        if not self.generic:
            for arg, name in _suggested_arguments(parent, region):
                if arg not in names:
                    names[arg] = self._unique(name)
        region_ops: list[Operation] = []
        for bi, block in enumerate(region.blocks):
            for arg in block.arguments:
                if arg in names:
                    continue
                if bi == 0:
                    names[arg] = self._unique(f"arg{self.next_arg}")
                    self.next_arg += 1
                else:
                    names[arg] = self._number()
            for op in block.ops:
                self._number_op(op)
                if op.regions:
                    region_ops.append(op)
        self._nested(region_ops)
        # Leave this region's scope: its names are free again for its siblings.
        added = self.added
        if len(added) > mark:
            used = self.used
            for name in added[mark:]:
                used.discard(name)
            del added[mark:]

    def _number(self) -> str:
        n = self.next_value
        if self.reserved:
            while str(n) in self.reserved:
                n += 1
        self.next_value = n + 1
        return str(n)

    def _unique(self, name: str) -> str:
        name = _sanitize(name)
        used = self.used
        if name in used:
            while True:
                probe = f"{name}_{self.next_conflict}"
                self.next_conflict += 1
                if probe not in used:
                    name = probe
                    break
        used.add(name)
        self.added.append(name)
        return name

    def _number_op(self, op: Operation) -> None:
        results = op.results
        if not results:
            return
        names = self.names
        if self.keep and any(r.name is not None for r in results):
            for r in results:
                if r not in names:
                    names[r] = self._number()
            return
        heads: dict[int, str] = {}
        suggested = None if self.generic else _suggested_results(op)
        if suggested:
            for index, name in suggested:
                if index not in heads:
                    heads[index] = self._unique(name)
        if 0 not in heads:
            heads[0] = self._number()
        if len(results) == 1:
            names[results[0]] = heads[0]
            return
        starts = sorted(heads)
        for gi, start in enumerate(starts):
            stop = starts[gi + 1] if gi + 1 < len(starts) else len(results)
            base = heads[start]
            if stop - start == 1:
                names[results[start]] = base
            else:
                for k in range(start, stop):
                    names[results[k]] = f"{base}#{k - start}"


# ------------------------------------------------------------------------ debug-info aliases
#
# With --mlir-print-debuginfo, MLIR names every location `#loc`, `#loc1`, ... and the
# cuda_tile debug-info attributes `#di_file`, `#di_compile_unit`, `#di_subprogram`,
# `#di_lexical_block` (with 1, 2, ... suffixes). Which aliases exist and their order follow
# MLIR's alias initializer:
#
# * The IR is walked in print order; each op's location is visited before the op itself.
#   An attribute is recorded when first seen, before the attributes nested in it.
# * An alias's depth is 1, or one more than the deepest alias nested in it (attributes
#   without an alias pass their children's depth on, plus one). Aliases are ordered by
#   depth, then by name, then by when they were first seen; suffixes count in that order.
# * Aliases reached only through op locations are "deferred" and printed after the ops;
#   the others (block-argument locations, attributes of ops, and everything nested in them)
#   are printed before the ops.

# Ops whose custom form leaves out an implicit terminator (see custom_ops / custom_directives).
_ELIDED_TERMINATORS = {"if": "yield", "for": "continue", "loop": "continue"}
_DI_ALIASES = frozenset({"di_compile_unit", "di_file", "di_lexical_block", "di_subprogram"})


class _AliasEntry:
    __slots__ = ("attr", "name", "seen", "depth", "deferred", "children")

    def __init__(self, attr: A.Attribute, name: str, seen: int, deferred: bool = True) -> None:
        self.attr = attr
        self.name = name
        self.seen = seen
        self.depth = 1
        self.deferred = deferred
        self.children: list[_AliasEntry] | None = None


class _AliasCollector:
    __slots__ = ("entries", "generic", "plain")

    def __init__(self, generic: bool) -> None:
        self.entries: dict[A.Attribute, _AliasEntry] = {}
        self.generic = generic
        # Attributes without an alias: their depth and the aliases directly under them.
        self.plain: dict[A.Attribute, tuple[int, list[_AliasEntry]]] = {}

    def ordered(self) -> list[_AliasEntry]:
        return sorted(self.entries.values(), key=lambda e: (e.depth, e.name, e.seen))

    def visit_op(self, op: Operation) -> None:
        self.visit(op.location if op.location is not None else _UNKNOWN, True)
        for value in op.properties.values():
            self.visit(value, False)
        for value in op.attributes.values():
            self.visit(value, False)
        elided = None if self.generic or op.opdef is None else _ELIDED_TERMINATORS.get(op.opdef.mnemonic)
        for region in op.regions:
            skip = None
            if elided is not None:
                from .custom_directives import implicit_terminator_elided

                if implicit_terminator_elided(region, elided) and region.blocks and region.blocks[0].ops:
                    skip = region.blocks[0].ops[-1]  # not printed, so not visited
            for block in region.blocks:
                if self.generic:
                    for arg in block.arguments:
                        self.visit(arg.location or _UNKNOWN, False)
                for inner in block.ops:
                    if inner is not skip:
                        self.visit_op(inner)

    def visit(self, a: A.Attribute, deferred: bool) -> tuple[int, list[_AliasEntry]]:
        """(depth, the aliases this attribute is or passes on to its users)."""
        entry = self.entries.get(a)
        if entry is not None:
            if not deferred:
                _undefer(entry)
            return entry.depth, [entry]
        name = _alias_name(a)
        if name is None:
            known = self.plain.get(a)
            if known is not None:
                if not deferred:
                    for child in known[1]:
                        _undefer(child)
                return known
            children = self._children(a, deferred)
            depth = max((d for d, _ in children), default=0)
            found = [e for _, entries in children for e in entries]
            result = (depth + 1 if depth else 0, found)
            if found:
                self.plain[a] = result
            return result
        entry = _AliasEntry(a, name, len(self.entries), deferred=deferred)
        self.entries[a] = entry
        children = self._children(a, deferred)
        depth = max((d for d, _ in children), default=0)
        if depth:
            entry.depth = depth + 1
        entry.children = [e for _, entries in children for e in entries]
        return entry.depth, [entry]

    def _children(self, a: A.Attribute, deferred: bool) -> list[tuple[int, list[_AliasEntry]]]:
        nested: tuple[A.Attribute | None, ...]
        if isinstance(a, A.DILocAttr):
            nested = (a.source, a.scope)
        elif isinstance(a, A.DIAttr):
            nested = tuple(v for _, v in a.params)
        elif isinstance(a, A.CallSiteLoc):
            nested = (a.callee, a.caller)
        elif isinstance(a, A.FusedLoc):
            nested = (a.metadata, *a.locations)
        elif isinstance(a, A.NameLoc):
            nested = (a.child,) if not isinstance(a.child, A.UnknownLoc) else ()
        elif isinstance(a, A.ArrayAttr):
            nested = a.elements
        elif isinstance(a, A.DictionaryAttr):
            nested = tuple(v for _, v in a.entries)
        else:
            return []
        return [self.visit(x, deferred) for x in nested if x is not None]


def _alias_name(a: A.Attribute) -> str | None:
    if isinstance(a, A.LocationAttr):
        return "loc"
    if isinstance(a, A.DIAttr) and a.kind in _DI_ALIASES:
        return a.kind
    return None


def _undefer(entry: _AliasEntry) -> None:
    if entry.deferred:
        entry.deferred = False
        for child in entry.children or ():
            _undefer(child)
