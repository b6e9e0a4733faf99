"""The canonical printer.

Prints what `cuda-tile-opt` prints (or MLIR's generic form), keeping the SSA names
the user wrote and naming the rest. Comments of the source are put back next to
the code they were written with, so `tileir fmt` never loses a user's words.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import attributes as A
from ..ir import types as T
from ..ir.core import Block, BlockArgument, Comment, Module, Operation, OpResult, Region, Value
from . import asmformat


@dataclass(slots=True)
class PrintOptions:
    generic: bool = False
    debuginfo: bool = False
    keep_comments: bool = True


def print_module(module: Module, options: PrintOptions | None = None) -> str:
    printer = Printer(module, options or PrintOptions())
    return printer.print_module()


def print_op(op: Operation, options: PrintOptions | None = None) -> str:
    """One operation (and its regions) on its own, for hovers and messages."""
    printer = Printer(None, options or PrintOptions(keep_comments=False))
    printer.print_operation(op)
    return "".join(printer.out)


_DI_ORDER = ("di_file", "di_compile_unit", "di_subprogram", "di_lexical_block")


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

    # ------------------------------------------------------------------ output helpers

    def write(self, text: str) -> None:
        self.out.append(text)

    def newline(self) -> None:
        self.out.append("\n" + "  " * self.indent)

    # ------------------------------------------------------------------ names

    def _assign_names(self, ops: list[Operation], top: bool = True) -> None:
        """Give every value a printable name, keeping the ones the user wrote."""
        values: list[Value] = []

        def collect(op: Operation) -> None:
            values.extend(op.results)
            for region in op.regions:
                for block in region.blocks:
                    values.extend(block.arguments)
                    for inner in block.ops:
                        collect(inner)

        for op in ops:
            collect(op)
        for v in values:
            if v.name is not None:
                self.used_names.add(v.name.split("#", 1)[0])
        for v in values:
            if v in self.names:
                continue
            if v.name is not None:
                self.names[v] = v.name
            elif isinstance(v, OpResult) and len(v.owner.results) > 1:
                group = self._fresh_number()
                for r in v.owner.results:
                    self.names[r] = f"{group}#{r.index}"
            elif isinstance(v, BlockArgument):
                self.names[v] = self._fresh("arg", v.index)
            else:
                self.names[v] = self._fresh_number()

    def _fresh_number(self) -> str:
        while str(self.counter) in self.used_names:
            self.counter += 1
        name = str(self.counter)
        self.used_names.add(name)
        self.counter += 1
        return name

    def _fresh(self, prefix: str, start: int) -> str:
        i = start
        while f"{prefix}{i}" in self.used_names:
            i += 1
        name = f"{prefix}{i}"
        self.used_names.add(name)
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

    def _collect_aliases(self) -> list[str]:
        found: dict[A.DIAttr, None] = {}
        locations: dict[A.LocationAttr, None] = {}

        def visit(a: object) -> None:
            if isinstance(a, A.LocationAttr) and not isinstance(a, A.UnknownLoc):
                if isinstance(a, A.DILocAttr):
                    visit(a.source)
                locations.setdefault(a, None)
            if isinstance(a, A.DIAttr):
                for _, v in a.params:
                    visit(v)
                found.setdefault(a, None)
            elif isinstance(a, A.DILocAttr):
                visit(a.scope)
            elif isinstance(a, (A.CallSiteLoc,)):
                visit(a.callee)
                visit(a.caller)
            elif isinstance(a, A.FusedLoc):
                for x in a.locations:
                    visit(x)
            elif isinstance(a, A.NameLoc) and a.child is not None:
                visit(a.child)
            elif isinstance(a, A.ArrayAttr):
                for x in a.elements:
                    visit(x)
            elif isinstance(a, A.DictionaryAttr):
                for _, x in a.entries:
                    visit(x)

        assert self.module is not None
        for op in self.module.walk():
            for v in list(op.properties.values()) + list(op.attributes.values()):
                visit(v)
            if op.location is not None:
                visit(op.location)
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.arguments:
                        if arg.location is not None:
                            visit(arg.location)
        ordered = sorted(found, key=lambda a: _DI_ORDER.index(a.kind) if a.kind in _DI_ORDER else 9)
        counts: dict[str, int] = {}
        lines = []
        for a in ordered:
            n = counts.get(a.kind, 0)
            counts[a.kind] = n + 1
            name = a.kind if n == 0 else f"{a.kind}{n}"
            lines.append(f"#{name} = {self.attr(a)}")
            self.aliases[a] = name
        for i, loc in enumerate(locations):
            self.loc_aliases[loc] = "loc" if i == 0 else f"loc{i}"
        return lines

    def _location_alias_lines(self) -> list[str]:
        lines = []
        for loc, name in list(self.loc_aliases.items()):
            del self.loc_aliases[loc]
            body = self.location_body(loc)
            text = body if isinstance(loc, A.DILocAttr) else f"loc({body})"
            self.loc_aliases[loc] = name
            lines.append(f"#{name} = {text}")
        return lines

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
        if self.options.debuginfo:
            for line in self._collect_aliases():
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
        for line in self._location_alias_lines():
            self.write(line + "\n")
        text = "".join(self.out)
        return text if text.endswith("\n") or not text else text + "\n"

    def print_operation(self, op: Operation, top_level: bool = False) -> None:
        if not self.names and self.module is None:
            self._assign_names([op])
        self._print_results(op)
        opdef = op.opdef
        if self.options.generic or opdef is None:
            self._print_generic(op)
        else:
            from .custom_ops import PRINTERS

            name = op.name if top_level and op.name == "cuda_tile.module" else opdef.mnemonic
            self.write(name)
            custom = PRINTERS.get(opdef.mnemonic)
            if custom is not None:
                custom(self, op)
            else:
                asmformat.print_op(self, op)
        if self.options.debuginfo and op.location is not None:
            self.write(" " + self.attr(op.location))

    def _print_results(self, op: Operation) -> None:
        results = op.results
        if not results:
            return
        names = [self.names.get(r) or self.value(r)[1:] for r in results]
        groups = {n.split("#", 1)[0] for n in names}
        if len(results) > 1 and len(groups) == 1 and all("#" in n for n in names):
            self.write(f"%{names[0].split('#', 1)[0]}:{len(results)} = ")
        else:
            self.write(", ".join("%" + n for n in names) + " = ")

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
    ) -> None:
        self.write("{")
        self.indent += 1
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
            for op in ops:
                self.newline()
                if op.span is not None and op.span.end > op.span.start:
                    self._flush_comments(_header_end(op))
                self.print_operation(op)
                if op.span is not None and op.span.end > op.span.start:
                    self._trailing_comment(op.span.end)
        self.indent -= 1
        if region.span is not None and self.next_comment < len(self.comments):
            if self.comments[self.next_comment].span.start < region.span.end:
                self.indent += 1
                self.newline()
                self._flush_comments(region.span.end)
                # _flush_comments leaves a fresh indented line; replace it with the closing one.
                self.out.pop()
                self.indent -= 1
        self.newline()
        self.write("}")

    def _print_block_label(self, block: Block, index: int) -> None:
        label = block.label or f"bb{index}"
        self.write("^" + label)
        if block.arguments:
            self.write("(" + ", ".join(f"{self.value(a)}: {self.type(a.type)}" for a in block.arguments) + ")")
        self.write(":")

    def signature(self, region: Region | None, results: tuple[T.Type, ...]) -> str:
        """`(%a: tile<f32>, ...) -> result` of an entry-like op, from its body's arguments."""
        args = region.entry_block.arguments if region is not None and region.entry_block else []
        parts = []
        for a in args:
            text = f"{self.value(a)}: {self.type(a.type)}"
            if self.options.debuginfo and a.location is not None:
                text += " " + self.attr(a.location)
            parts.append(text)
        text = "(" + ", ".join(parts) + ")"
        if results:
            if len(results) == 1:
                text += " -> " + self.type(results[0])
            else:
                text += " -> (" + ", ".join(self.type(t) for t in results) + ")"
        return text


def _header_end(op: Operation) -> int:
    """Where an op's own text ends and its first region begins."""
    assert op.span is not None
    for region in op.regions:
        if region.span is not None:
            return region.span.start
    return op.span.end
