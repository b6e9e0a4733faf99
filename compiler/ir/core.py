"""The IR proper: values, operations, blocks, regions and the module.

It follows MLIR's structure so that text, bytecode and the verifier all see the
same thing: an `Operation` has operands (values), results, inherent attributes
(`properties`), discardable attributes (`attributes`), regions of blocks, a debug
location and the source span it was parsed from. Every value keeps its use list.
"""

from __future__ import annotations

from collections.abc import Iterator

from .attributes import Attribute, LocationAttr
from .source import SourceFile, Span
from .types import Type

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from ..dialect.opdef import OpDef


class Value:
    """An SSA value. `name` is the name the user wrote (without `%`), if any;
    members of a result group written `%x:2` are named `x#0`, `x#1`."""

    __slots__ = ("type", "name", "uses", "span")

    def __init__(self, type: Type, name: str | None = None, span: Span | None = None) -> None:
        self.type = type
        self.name = name
        self.uses: list[tuple[Operation, int]] = []
        self.span = span

    @property
    def defining_op(self) -> Operation | None:
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} %{self.name}: {self.type}>"


class OpResult(Value):
    __slots__ = ("owner", "index")

    def __init__(
        self, owner: Operation, index: int, type: Type, name: str | None = None, span: Span | None = None
    ) -> None:
        super().__init__(type, name, span)
        self.owner = owner
        self.index = index

    @property
    def defining_op(self) -> Operation | None:
        return self.owner


class BlockArgument(Value):
    __slots__ = ("owner", "index", "location")

    def __init__(self, owner: Block, index: int, type: Type, name: str | None = None, span: Span | None = None) -> None:
        super().__init__(type, name, span)
        self.owner = owner
        self.index = index
        self.location: LocationAttr | None = None


class Operation:
    """One operation. `opdef` is its op-table entry (None for unregistered ops)."""

    __slots__ = (
        "name",
        "opdef",
        "operands",
        "results",
        "properties",
        "attributes",
        "regions",
        "successors",
        "location",
        "span",
        "name_span",
        "parent",
        "operand_segments",
        "operand_spans",
        "__weakref__",
    )

    def __init__(
        self,
        name: str,
        opdef: OpDef | None = None,
        operands: list[Value] | None = None,
        result_types: list[Type] | None = None,
        properties: dict[str, Attribute] | None = None,
        attributes: dict[str, Attribute] | None = None,
        regions: list[Region] | None = None,
        location: LocationAttr | None = None,
        span: Span | None = None,
    ) -> None:
        self.name = name
        self.opdef = opdef
        self.operands: list[Value] = []
        self.results: list[OpResult] = [OpResult(self, i, t) for i, t in enumerate(result_types or ())]
        self.properties: dict[str, Attribute] = properties if properties is not None else {}
        self.attributes: dict[str, Attribute] = attributes if attributes is not None else {}
        self.regions: list[Region] = []
        self.successors: list[Block] = []
        self.location = location
        self.span = span
        self.name_span: Span | None = None
        self.parent: Block | None = None
        # Sizes of the operand groups of ops with optional/variadic operands, in the
        # order of the op definition; None when every group holds exactly one value.
        self.operand_segments: tuple[int, ...] | None = None
        # Where each operand was written (parsed ops only), so that diagnostics can point at it.
        self.operand_spans: list[Span] | None = None
        if operands:
            self.set_operands(operands)
        for region in regions or ():
            self.add_region(region)

    # -- operands ---------------------------------------------------------------------

    def set_operands(self, operands: list[Value]) -> None:
        for i, v in enumerate(self.operands):
            try:
                v.uses.remove((self, i))
            except ValueError:
                pass
        self.operands = list(operands)
        for i, v in enumerate(self.operands):
            v.uses.append((self, i))

    def operand_group(self, name: str) -> list[Value]:
        """The operands bound to the named operand of the op definition."""
        if self.opdef is None:
            raise KeyError(name)
        start, length = self.opdef.operand_range(name, self.operand_segments)
        return self.operands[start : start + length]

    def operand_span(self, index: int) -> Span | None:
        spans = self.operand_spans
        return spans[index] if spans is not None and index < len(spans) else None

    def operand(self, name: str) -> Value | None:
        group = self.operand_group(name)
        return group[0] if group else None

    def result(self, name: str) -> OpResult | None:
        if self.opdef is None:
            return None
        start, length = self.opdef.result_range(name, len(self.results))
        return self.results[start] if length else None

    def result_group(self, name: str) -> list[OpResult]:
        if self.opdef is None:
            return []
        start, length = self.opdef.result_range(name, len(self.results))
        return self.results[start : start + length]

    # -- attributes -------------------------------------------------------------------

    def attr(self, name: str) -> Attribute | None:
        """An inherent attribute if present, else a discardable one."""
        value = self.properties.get(name)
        return value if value is not None else self.attributes.get(name)

    def int_attr(self, name: str, default: int | None = None) -> int | None:
        """The value of an integer attribute, or `default`."""
        a = self.attr(name)
        return getattr(a, "value", default) if a is not None else default

    def keyword(self, name: str, default: str | None = None) -> str | None:
        """The keyword of an enum attribute (`rounding_mode` → "nearest_even"), or `default`."""
        a = self.attr(name)
        return getattr(a, "keyword", default) if a is not None else default

    def flag(self, name: str) -> bool:
        """Whether a unit/bool attribute is set."""
        a = self.attr(name)
        return a is not None and getattr(a, "value", True) is not False

    # -- regions ----------------------------------------------------------------------

    def add_region(self, region: Region) -> Region:
        region.parent = self
        self.regions.append(region)
        return region

    def clone(self, mapping: dict[Value, Value] | None = None) -> Operation:
        """A deep copy of this op, its regions included, detached (no parent). Operands in
        `mapping` are replaced by their images; the copy's results and block arguments are
        added to it, so that a caller can find the copy of any value defined inside."""
        mapping = {} if mapping is None else mapping
        op = Operation(
            self.name,
            self.opdef,
            [mapping.get(v, v) for v in self.operands],
            [r.type for r in self.results],
            dict(self.properties),
            dict(self.attributes),
            location=self.location,
            span=self.span,
        )
        op.name_span = self.name_span
        op.operand_segments = self.operand_segments
        op.operand_spans = self.operand_spans
        for old, new in zip(self.results, op.results, strict=True):
            new.name, new.span = old.name, old.span
            mapping[old] = new
        for region in self.regions:
            copy = Region()
            copy.span = region.span
            for block in region.blocks:
                b = copy.add_block(Block())
                b.label, b.span, b.label_span = block.label, block.span, block.label_span
                for arg in block.arguments:
                    mapping[arg] = b.add_argument(arg.type, arg.name, arg.span)
                    mapping[arg].location = arg.location  # type: ignore[attr-defined]
            for block, b in zip(region.blocks, copy.blocks, strict=True):
                for inner in block.ops:
                    b.append(inner.clone(mapping))
            op.add_region(copy)
        return op

    @property
    def parent_op(self) -> Operation | None:
        block = self.parent
        return block.parent.parent if block is not None and block.parent is not None else None

    def walk(self) -> Iterator[Operation]:
        """This op and every op nested in it, in pre-order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    yield from op.walk()

    @property
    def head_span(self) -> Span:
        """The op's first line as diagnostics point at it: from its result names to its name
        (the whole op when the name's place was not recorded)."""
        span = self.span or Span(0, 0)
        if self.name_span is not None and self.name_span.start >= span.start:
            return Span(span.start, self.name_span.end)
        return span

    @property
    def is_isolated_from_above(self) -> bool:
        """Whether the op's regions cannot see values defined outside it (a kernel, a module)."""
        return self.opdef is not None and "IsolatedFromAbove" in self.opdef.traits

    @property
    def mnemonic(self) -> str:
        return self.name.split(".", 1)[1] if self.name.startswith("cuda_tile.") else self.name

    def __repr__(self) -> str:
        return f"<Operation {self.name} at {self.span}>"


class Block:
    __slots__ = ("arguments", "ops", "parent", "label", "span", "label_span")

    def __init__(self, arg_types: list[Type] | None = None) -> None:
        self.arguments: list[BlockArgument] = [BlockArgument(self, i, t) for i, t in enumerate(arg_types or ())]
        self.ops: list[Operation] = []
        self.parent: Region | None = None
        self.label: str | None = None  # `bb0` for a block written `^bb0(...)`
        self.span: Span | None = None
        self.label_span: Span | None = None

    def add_argument(self, type: Type, name: str | None = None, span: Span | None = None) -> BlockArgument:
        arg = BlockArgument(self, len(self.arguments), type, name, span)
        self.arguments.append(arg)
        return arg

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops else None


class Region:
    __slots__ = ("blocks", "parent", "span")

    def __init__(self, blocks: list[Block] | None = None) -> None:
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        self.span: Span | None = None
        for b in blocks or ():
            self.add_block(b)

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def entry_block(self) -> Block | None:
        return self.blocks[0] if self.blocks else None


class Comment:
    __slots__ = ("text", "span")

    def __init__(self, text: str, span: Span) -> None:
        self.text = text
        self.span = span


class Module:
    """A parsed document: its top-level operations (cuda_tile modules, bare entries,
    `module attributes {...}` wrappers, other ops) plus what the text carried besides
    operations: attribute and type alias definitions and comments."""

    # __weakref__: backends keep what a loaded module owns (its globals' storage, loaded
    # cubins) in caches keyed weakly by the Module (compiler.interp.machine.loaded_state).
    __slots__ = ("body", "source", "attribute_aliases", "type_aliases", "comments", "__weakref__")

    def __init__(self, source: SourceFile | None = None) -> None:
        self.body = Block()
        self.source = source
        self.attribute_aliases: dict[str, Attribute] = {}
        self.type_aliases: dict[str, Type] = {}
        self.comments: list[Comment] = []

    @property
    def ops(self) -> list[Operation]:
        return self.body.ops

    def walk(self) -> Iterator[Operation]:
        for op in self.body.ops:
            yield from op.walk()

    def entries(self) -> list[Operation]:
        return [op for op in self.walk() if op.name == "cuda_tile.entry"]

    def find_symbol(self, name: str) -> Operation | None:
        for op in self.walk():
            sym = op.properties.get("sym_name")
            if sym is not None and getattr(sym, "value", None) == name:
                return op
        return None
