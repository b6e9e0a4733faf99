"""Descriptions of what is written in a document: ops, values, blocks, types and views.

The language server shows them as hovers, the notebook and the CLI can print them. They are
built as a `Description` (paragraphs, code blocks, bullet lists) that renders as Markdown or
as plain text; nothing here knows about the editor protocol.

Places in the text are looked up through a `Locator`, because an editor may hold IR whose
spans are shifted from the document's current text (the language server re-parses only the
kernel that changed); `SourceLocator` is the plain case of IR parsed from the whole text.

    describe_op(op, locator)       # on an op name: its signature from the op table, ...
    describe_value(value, locator) # on %x: type, definition, uses (and a view's layout)
    describe_type(t)               # on a type: element size, element count, bytes
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ..dialect import TYPE_CONSTRAINTS, enum_for_kind
from ..dialect.opdef import AttrDef, OpDef, OperandDef, ResultDef
from ..ir.core import Block, BlockArgument, Operation, OpResult, Value
from ..ir.source import SourceFile, Span
from ..ir.types import (
    FLOAT_FORMATS,
    FloatType,
    FunctionType,
    IntegerType,
    PointerType,
    TensorViewType,
    TileType,
    TokenType,
    Type,
)
from ..layout import ViewLayout, describe, is_view_type, layout_of_type, text_picture, tile_extent, view_layout_of
from ..layout.index_space import constant_int, dim_name, through_assumes

# Ops that read or write one tile of a view at an index (operands `view` and `index`).
VIEW_ACCESS_OPS = ("load_view_tko", "store_view_tko")
VIEW_MAKERS = ("make_tensor_view", "make_partition_view", "make_strided_view", "make_gather_scatter_view")
# A definition's text is cut here so that a hover stays readable.
HEAD_LIMIT = 160


# ------------------------------------------------------------------------------------------------
# The description: a small document model rendered as Markdown or plain text


@dataclass(slots=True)
class Description:
    """Blocks in order: ("text", s) a paragraph with `inline code`, ("code", s, language) a
    code block, ("list", items) a bullet list."""

    blocks: list[tuple] = field(default_factory=list)

    def text(self, text: str) -> Description:
        self.blocks.append(("text", text))
        return self

    def code(self, text: str, language: str = "tileir") -> Description:
        self.blocks.append(("code", text, language))
        return self

    def items(self, items: list[str], title: str | None = None) -> Description:
        if items:
            if title:
                self.text(title)
            self.blocks.append(("list", list(items)))
        return self

    def rule(self) -> Description:
        """A separator between two parts (a horizontal line in Markdown)."""
        if self.blocks:
            self.blocks.append(("rule",))
        return self

    def extend(self, other: Description | None) -> Description:
        if other is not None:
            self.blocks.extend(other.blocks)
        return self

    def __bool__(self) -> bool:
        return bool(self.blocks)

    def _shown(self) -> list[tuple]:
        """The blocks without a separator at the end (nothing follows it)."""
        blocks = list(self.blocks)
        while blocks and blocks[-1][0] == "rule":
            blocks.pop()
        return blocks

    def markdown(self) -> str:
        parts: list[str] = []
        for block in self._shown():
            if block[0] == "text":
                parts.append(block[1])
            elif block[0] == "code":
                fence = "````" if "```" in block[1] else "```"
                parts.append(f"{fence}{block[2]}\n{block[1]}\n{fence}")
            elif block[0] == "rule":
                parts.append("---")
            else:
                parts.append("\n".join(f"- {item}" for item in block[1]))
        return "\n\n".join(parts)

    def plaintext(self) -> str:
        parts: list[str] = []
        for block in self._shown():
            if block[0] == "text":
                parts.append(block[1])
            elif block[0] == "code":
                parts.append(block[1])
            elif block[0] == "rule":
                parts.append("-" * 40)
            else:
                parts.append("\n".join(f"  - {item}" for item in block[1]))
        return "\n\n".join(parts)


class Locator(Protocol):
    """Where a span taken from the IR object `anchor` lies in the current text."""

    def line(self, span: Span, anchor: object) -> int:
        """The 0-based line of the span's start."""
        ...

    def text(self, span: Span, anchor: object) -> str: ...


class SourceLocator:
    """IR parsed from `source` itself: spans need no conversion."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source

    def line(self, span: Span, anchor: object) -> int:
        return self.source.line_col(span.start)[0]

    def text(self, span: Span, anchor: object) -> str:
        return self.source.text[span.start : span.end]


# ------------------------------------------------------------------------------------------------
# Ops: the op table


def _version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split("."))
    except ValueError:
        return (0,)


def _arity_mark(arity: str) -> str:
    return {"variadic": "...", "optional": "?"}.get(arity, "")


def signature(opdef: OpDef) -> str:
    """The op as a function: `load_view_tko(view: tile_view, index: int_tile..., ...) -> (...)`."""
    operands = ", ".join(f"{o.name}: {o.constraint}{_arity_mark(o.arity)}" for o in opdef.operands)
    attrs = [f"{a.name}: {a.kind.removeprefix('enum:')}{'?' if a.optional else ''}" for a in opdef.attributes]
    head = opdef.name + (f"<{', '.join(attrs)}>" if attrs else "") + f"({operands})"
    results = [f"{r.name}: {r.constraint}{_arity_mark(r.arity)}" for r in opdef.results]
    if not results:
        return head
    if len(results) == 1:
        return f"{head} -> {results[0]}"
    return f"{head} -> ({', '.join(results)})"


def _constraint_text(name: str) -> str:
    constraint = TYPE_CONSTRAINTS.get(name)
    return constraint.description if constraint is not None else name


def _attribute_text(opdef: OpDef, attr: AttrDef) -> str:
    notes: list[str] = []
    enum = enum_for_kind(attr.kind)
    if enum is not None:
        cases = []
        for case in enum.cases:
            added = f" (since {case.since})" if _version(case.since) > _version(opdef.since) else ""
            cases.append(f"`{case.keyword}`{added}")
        notes.append("one of " + ", ".join(cases))
    else:
        notes.append(attr.kind)
    if attr.optional:
        notes.append("optional")
    if attr.default is not None:
        notes.append(f"default `{attr.default}`")
    if _version(attr.since) > _version(opdef.since):
        notes.append(f"added in {attr.since}")
    doc = f": {attr.doc}" if attr.doc else ""
    return f"`{attr.name}`{doc} ({'; '.join(notes)})"


def _operand_text(opdef: OpDef, o: OperandDef | ResultDef) -> str:
    """One operand or result of an op: name, meaning, constraint, arity, version added."""
    notes = [_constraint_text(o.constraint)]
    if o.arity != "single":
        notes.append(o.arity)
    if _version(o.since) > _version(opdef.since):
        notes.append(f"added in {o.since}")
    return f"`{o.name}`{': ' + o.doc if o.doc else ''} ({'; '.join(notes)})"


def describe_opdef(opdef: OpDef) -> Description:
    """An op-table entry: summary, signature, operands, attributes, results, version, meaning."""
    out = Description()
    out.text(f"**{opdef.name}** — {opdef.summary} (since {opdef.since})" if opdef.summary else f"**{opdef.name}**")
    out.code(signature(opdef))
    out.items([_operand_text(opdef, o) for o in opdef.operands], "Operands:")
    out.items([_attribute_text(opdef, a) for a in opdef.attributes], "Attributes:")
    out.items([_operand_text(opdef, r) for r in opdef.results], "Results:")
    out.items([f"`{r.name}`{': ' + r.doc if r.doc else ''}" for r in opdef.regions], "Regions:")
    if opdef.description:
        out.text(opdef.description)
    if opdef.examples:
        out.code(opdef.examples[0])
    return out


def describe_op(op: Operation, locator: Locator) -> Description:
    """An op under the cursor: its op-table entry, and for view ops what the view looks like
    (`make_*_view`) or which elements the access touches (`load_view_tko`, ...)."""
    if op.opdef is None:
        return Description().text(f"**{op.name}**: not an op of the cuda_tile dialect (unregistered)")
    out = describe_opdef(op.opdef)
    if op.mnemonic in VIEW_MAKERS and op.results:
        out.rule().extend(describe_view(op.results[0]))
    if op.mnemonic in VIEW_ACCESS_OPS:
        out.rule().extend(describe_view_access(op))
    return out


# ------------------------------------------------------------------------------------------------
# Values and blocks


def op_head(op: Operation, locator: Locator) -> str:
    """The op's first line as written (results, name, operands), without its region."""
    if op.span is None:
        return op.name
    text = locator.text(op.span, op)
    head = text.split("\n", 1)[0].rstrip()
    if head.endswith("{"):
        head = head[:-1].rstrip()
    return head if len(head) <= HEAD_LIMIT else head[: HEAD_LIMIT - 3] + "..."


def _line(locator: Locator, span: Span | None, anchor: object) -> str:
    return f"line {locator.line(span, anchor) + 1}" if span is not None else "an unknown line"


def value_name(value: Value) -> str:
    return f"%{value.name}" if value.name else "%<unnamed>"


def _owner_label(op: Operation) -> str:
    sym = op.properties.get("sym_name")
    name = getattr(sym, "value", None)
    return f"`{op.mnemonic} @{name}`" if isinstance(name, str) else f"`{op.mnemonic}`"


def block_argument_role(arg: BlockArgument) -> str:
    """Which block's and op's argument `arg` is, in words."""
    block = arg.owner
    region = block.parent
    op = region.parent if region is not None else None
    if op is None:
        return f"argument {arg.index} of a block"
    where = "its body" if len(op.regions) == 1 else f"region {op.regions.index(region)}"
    if op.mnemonic == "entry":
        return f"kernel argument {arg.index} of {_owner_label(op)}"
    if op.mnemonic == "for" and op.opdef is not None:
        if arg.index == 0:
            return "the induction variable of `for`"
        init = _group(op, "initValues")
        source = f", starts as `{value_name(init[arg.index - 1])}`" if arg.index - 1 < len(init) else ""
        return f"loop-carried value {arg.index - 1} of `for`{source}"
    if op.mnemonic == "loop" and op.opdef is not None:
        init = _group(op, "initValues")
        source = f", starts as `{value_name(init[arg.index])}`" if arg.index < len(init) else ""
        return f"loop-carried value {arg.index} of `loop`{source}"
    label = f"`^{block.label}`" if block.label else f"block {region.blocks.index(block)}"
    return f"argument {arg.index} of {label} in {where} of {_owner_label(op)}"


def _group(op: Operation, name: str) -> list[Value]:
    try:
        return op.operand_group(name)
    except (KeyError, IndexError, ValueError):
        return []


def describe_value(value: Value, locator: Locator) -> Description:
    """An SSA value: its type, where it is defined, its uses; then its type and, for views,
    the layout."""
    out = Description()
    out.code(f"{value_name(value)} : {value.type}")
    if isinstance(value, OpResult):
        op = value.owner
        out.text(f"Result {value.index} of `{op.mnemonic}`, defined at {_line(locator, value.span or op.span, value)}:")
        out.code(op_head(op, locator))
    elif isinstance(value, BlockArgument):
        op = _block_op(value.owner)
        out.text(f"Block argument: {block_argument_role(value)}, defined at {_line(locator, value.span, value)}.")
        if op is not None and op.span is not None:
            out.code(op_head(op, locator))
    uses = len(value.uses)
    if uses == 0:
        out.text("Not used.")
    else:
        lines = sorted({locator.line(u.span, u) + 1 for u, _ in value.uses if u.span is not None})
        shown = ", ".join(map(str, lines[:12])) + (", ..." if len(lines) > 12 else "")
        out.text(f"{uses} use{'s' if uses != 1 else ''} (line{'s' if len(lines) != 1 else ''} {shown}).")
    return out.extend(describe_type(value.type, heading=False, value=value))


def _block_op(block: Block) -> Operation | None:
    region = block.parent
    return region.parent if region is not None else None


def describe_block(block: Block, locator: Locator) -> Description:
    out = Description()
    label = f"^{block.label}" if block.label else "a block"
    args = ", ".join(f"{value_name(a)}: {a.type}" for a in block.arguments)
    out.code(f"{label}({args})" if block.arguments else label)
    op = _block_op(block)
    if op is not None:
        region = block.parent
        assert region is not None
        out.text(
            f"Block {region.blocks.index(block)} of region {op.regions.index(region)} of {_owner_label(op)} "
            f"({_line(locator, op.span, op)})."
        )
    return out


def describe_symbol(op: Operation | None, name: str | None, locator: Locator) -> Description:
    out = Description()
    if op is None:
        return out.text(f"`@{name}`: no definition found")
    out.text(f"`@{name}`: {_owner_label(op)} defined at {_line(locator, op.span, op)}")
    out.code(op_head(op, locator))
    return out


# ------------------------------------------------------------------------------------------------
# Types


def element_bits(t: Type) -> int | None:
    if isinstance(t, IntegerType):
        return t.width
    if isinstance(t, FloatType):
        return FLOAT_FORMATS[t.name].storage_width if t.name in FLOAT_FORMATS else None
    if isinstance(t, PointerType):
        return 64
    return None


def format_bytes(count: int) -> str:
    """`16 KiB (16,384 bytes)`, `12 bytes`."""
    if count < 1024:
        return f"{count} byte{'s' if count != 1 else ''}"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            amount = f"{count / size:.2f}".rstrip("0").rstrip(".")
            return f"{amount} {unit} ({count:,} bytes)"
    return f"{count} bytes"  # pragma: no cover


def _element_text(t: Type) -> str:
    if isinstance(t, IntegerType):
        return f"`{t}`: {t.width}-bit integer (signless: ops choose signed or unsigned)"
    if isinstance(t, FloatType):
        f = FLOAT_FORMATS.get(t.name)
        if f is None:
            return f"`{t}`: floating point"
        parts = f"{f.exponent_bits} exponent and {f.mantissa_bits} mantissa bits"
        return f"`{t}`: {f.storage_width}-bit float ({parts}{'' if f.has_sign else ', unsigned'})"
    if isinstance(t, PointerType):
        return f"`{t}`: 64-bit pointer to `{t.pointee}` in global memory"
    return f"`{t}`"


def describe_type(t: Type, heading: bool = True, value: Value | None = None) -> Description:
    """Sizes and shapes of a type; for a view type its layout, with the extents the
    definition of `value` (a value of that type, if given) resolves."""
    out = Description()
    if heading:
        out.code(str(t))
    if isinstance(t, TileType):
        bits = element_bits(t.element)
        count = t.num_elements
        shape = f"shape {'x'.join(map(str, t.shape))} (rank {t.rank})" if t.shape else "scalar (rank 0)"
        facts = [
            shape,
            f"{count:,} element{'s' if count != 1 else ''}",
        ]
        if bits is not None:
            total_bits = bits * count
            size = format_bytes((total_bits + 7) // 8)
            packed = f", {bits} bits each" + (" packed" if bits < 8 else "")
            facts.append(f"{size}{packed}")
        out.text("Tile: " + ", ".join(facts) + ".")
        out.text("Element " + _element_text(t.element) + ".")
    elif isinstance(t, (IntegerType, FloatType, PointerType)):
        out.text("Element type " + _element_text(t) + ".")
    elif isinstance(t, TensorViewType):
        shape = "x".join("?" if s is None else str(s) for s in t.shape) or "()"
        strides = ", ".join("?" if s is None else str(s) for s in t.strides)
        dynamic = [str(d) for d, s in enumerate(t.shape) if s is None]
        out.text(f"Tensor view of `{t.element}` in global memory: shape {shape}, strides [{strides}] (in elements).")
        if dynamic or any(s is None for s in t.strides):
            out.text("`?` entries are given at run time by the operands of `make_tensor_view`.")
        out.extend(describe_view_type(t, value))
    elif is_view_type(t):
        out.extend(describe_view_type(t, value))
    elif isinstance(t, TokenType):
        out.text("Token: orders memory operations; it carries no data.")
    elif isinstance(t, FunctionType):
        out.text(f"Function type: {len(t.inputs)} argument{'s' if len(t.inputs) != 1 else ''}.")
    return out


# ------------------------------------------------------------------------------------------------
# Views


def _layout_text(layout: ViewLayout, names: dict[int, str] | None = None) -> Description:
    out = Description()
    out.code(describe(layout), "text")
    notes = []
    for d in layout.dynamic_dims:
        name = f" (`{names[d]}`)" if names and d in names else ""
        extent = layout.tensor_shape[d]
        bound = layout.extent_bounds[d] if layout.extent_bounds else None
        if extent is not None:
            notes.append(f"tensor dim {d}{name}: {extent}, a constant")
        elif bound is not None:
            notes.append(f"tensor dim {d}{name}: {dim_name(d)} <= {bound} (from `assume bounded`)")
        else:
            notes.append(f"tensor dim {d}{name}: {dim_name(d)}, known at run time")
    out.items(notes, "Dynamic extents:")
    if layout.kind != "tensor_view":
        out.code(text_picture(layout), "text")
    return out


def describe_view_type(t: Type, value: Value | None = None) -> Description:
    """A view type's index space and tiling; with the `value` of that type, the extents its
    definition gives (constants, `assume bounded`) are used."""
    try:
        if value is not None and value.type == t:
            layout = view_layout_of(value)
        else:
            layout = layout_of_type(t)
    except (TypeError, ValueError) as error:
        return Description().text(f"Not a well-formed view: {error}")
    if layout is None:
        return Description()
    return _layout_text(layout, _extent_names(value) if value is not None else None)


def describe_view(value: Value) -> Description:
    """A view value: its type and its layout with the extents the IR knows."""
    out = Description()
    out.extend(describe_view_type(value.type, value))
    return out


def _extent_names(value: Value) -> dict[int, str]:
    """The SSA values that give the dynamic tensor extents behind a view value."""
    value, _ = through_assumes(value)
    op = value.defining_op
    if op is not None and op.mnemonic in VIEW_MAKERS[1:] and op.operands:
        value, _ = through_assumes(op.operands[0])
        op = value.defining_op
    if op is None or op.mnemonic != "make_tensor_view" or not isinstance(value.type, TensorViewType):
        return {}
    dynamic = [d for d, s in enumerate(value.type.shape) if s is None]
    return {d: value_name(v) for d, v in zip(dynamic, _group(op, "dynamicShape"), strict=False)}


def describe_view_access(op: Operation) -> Description:
    """Which elements a view load/store at its index touches: exact ranges for constant
    indices, `[%i*64, %i*64+64)` otherwise."""
    out = Description()
    views = _group(op, "view")
    if not views:
        return out
    layout = view_layout_of(views[0])
    if layout is None:
        return out
    indices = _group(op, "index")
    if len(indices) != layout.rank:
        return out.text(
            f"The index has {len(indices)} coordinate{'s' if len(indices) != 1 else ''}; "
            f"the view's index space has {layout.rank}."
        )
    constants = [constant_int(through_assumes(v)[0]) for v in indices]
    ranges: list[str] = [""] * layout.tensor_rank
    for i, (value, constant) in enumerate(zip(indices, constants, strict=True)):
        d = layout.dim_map[i]
        step, size = layout.steps[i], layout.tile_extent(i)
        if i == layout.sparse_dim:
            ranges[d] = f"rows given by `{value_name(value)}` (`{value.type}`)"
        elif constant is not None:
            ranges[d] = f"[{constant * step}, {constant * step + size})"
        else:
            start = value_name(value) if step == 1 else f"{value_name(value)}*{step}"
            ranges[d] = f"[{start}, {start}+{size})"
    lines = [f"tensor dim {d}: {r}" for d, r in enumerate(ranges)]
    verb = "reads" if op.mnemonic.startswith("load") else "writes"
    out.text(f"This access {verb} the tile at index ({', '.join(value_name(v) for v in indices)}):")
    out.items(lines)
    if all(c is not None and c >= 0 for c in constants) and layout.sparse_dim is None:
        try:
            extent = tile_extent(layout, [c for c in constants if c is not None])
        except ValueError as error:
            out.text(f"Out of range: {error}.")
        else:
            if extent.padded:
                inside = [
                    f"dim {d} only [{a}, {b})"
                    for d, ((a, b), requested) in enumerate(zip(extent.ranges, extent.requested, strict=True))
                    if (a, b) != requested
                ]
                if verb == "writes":
                    rule = "is not written"
                else:
                    rule = f"reads as `{layout.padding}`" if layout.padding else "reads as unspecified values"
                out.text(f"Partly outside the tensor: it has {', '.join(inside)}; the rest {rule}.")
    elif layout.dynamic_dims or any(c is None for c in constants):
        out.text("Elements beyond the tensor's extent are padded on loads and dropped on stores.")
    return out


__all__ = [
    "Description",
    "Locator",
    "SourceLocator",
    "describe_block",
    "describe_op",
    "describe_opdef",
    "describe_symbol",
    "describe_type",
    "describe_value",
    "describe_view",
    "describe_view_access",
    "describe_view_type",
    "element_bits",
    "format_bytes",
    "signature",
]
