"""What an editor may offer at a cursor: the context of a half-typed line, the SSA values and
symbols in scope, snippets and signatures of ops from the op table.

The language server turns these into protocol items; nothing here knows about the protocol.
The line under the cursor is often unparsable while it is being typed, so its context is
read from its tokens (the lexer) and the op table, while what lies around it (values in
scope, symbols) comes from the IR the error-tolerant parser built for the rest.

All offsets here are in the coordinates of the IR passed in (a caller holding shifted IR
converts before and after).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..dialect import OPS, OpDef, enum_for_kind, lookup_op
from ..ir.core import Block, Module, Operation, Value
from ..ir.enums import ENUM_BY_MNEMONIC, ROUNDING_MODE, EnumDef
from ..ir.types import ELEMENT_TYPE_SINCE, SCALAR_TYPES
from . import lexer as L
from .asmformat import AttrDict, Custom, Group, Lit, OIList, Space, TypeOf, Var, compile_format

# ------------------------------------------------------------------ vocabulary

# Types that take parameters, with the text that starts them; `tile` and `ptr` wrap element types.
PARAMETRIC_TYPES = ("tile", "ptr", "tensor_view", "partition_view", "strided_view", "gather_scatter_view")
PLAIN_TYPES = ("token",)
# Ops that only make sense at a given nesting level.
_MODULE_LEVEL = ("entry", "global")
_TOP_LEVEL = ("module",)


def element_type_names() -> list[str]:
    """The scalar element types, in the table's order."""
    return list(SCALAR_TYPES)


def element_type_since(name: str) -> str:
    return ELEMENT_TYPE_SINCE.get(name, "13.1")


def ops_for_level(level: str) -> list[OpDef]:
    """The ops one may start at `level`: "top" (the document), "module" (a cuda_tile.module
    body) or "body" (inside an entry). Test-only ops are left out."""
    found = []
    for opdef in OPS.values():
        if opdef.group == "testing":
            continue
        if level == "top":
            ok = opdef.mnemonic in _TOP_LEVEL or opdef.mnemonic in _MODULE_LEVEL
        elif level == "module":
            ok = opdef.mnemonic in _MODULE_LEVEL
        else:
            ok = opdef.mnemonic not in _MODULE_LEVEL and opdef.mnemonic not in _TOP_LEVEL
        if ok:
            found.append(opdef)
    return found


# ------------------------------------------------------------------ the line under the cursor


@dataclass(frozen=True, slots=True)
class CursorContext:
    """What is being typed at the cursor.

    kind: "op" (an op name), "type", "element_type" (inside `tile<...>`/`ptr<`), "enum",
    "value" (`%`), "symbol" (`@`), "type_alias" (`!`), "attribute_alias" (`#`), or "none".
    `start` is where the word being typed begins (the text [start, cursor) is replaced).
    """

    kind: str
    start: int
    prefix: str
    op_name: str | None = None  # the op written on the line, when known
    enums: tuple[EnumDef, ...] = ()
    wrapped: tuple[str, ...] = ()  # for each of `enums`: the keyword it is written inside (`rounding<x>`) or ""
    keywords: tuple[str, ...] = ()  # optional keywords the op's format allows here (`flush_to_zero`)
    level: str = "body"


_WORD_RE = re.compile(r"([%@!#^]?)([A-Za-z0-9_$.\-]*)$")
_DIMS_RE = re.compile(r"(?<![\w$.%@!#^])(?:(?:\d+|\?)x)+([A-Za-z_][\w]*)?$")
_OPENERS = {"<": ">", "(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
_TYPE_WORDS = frozenset(PARAMETRIC_TYPES) | frozenset(PLAIN_TYPES)


def tokens_of(text: str) -> tuple[list[L.Token], bool]:
    """The tokens of `text` and whether it ends inside a comment or an unterminated string."""
    lexer = L.Lexer(text)
    tokens: list[L.Token] = []
    pos = 0
    while True:
        tok = lexer.token_at(pos)
        if tok.kind == L.EOF:
            break
        tokens.append(tok)
        pos = tok.end
    in_comment = any(c.span.end >= len(text) for c in lexer.comments)
    open_string = bool(tokens) and tokens[-1].kind == L.ERROR and tokens[-1].text.startswith('"')
    return tokens, in_comment or open_string


def _unclosed(tokens: list[L.Token]) -> list[int]:
    """Indices of the openers (`<`, `(`, `[`, `{`) still open after `tokens`."""
    stack: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.kind != L.PUNCT:
            continue
        if tok.text in _OPENERS:
            stack.append(i)
        elif tok.text in _CLOSERS:
            while stack and tokens[stack[-1]].text != _CLOSERS[tok.text]:
                stack.pop()  # an unbalanced opener (`<` in `a < b` never happens here, but be safe)
            if stack:
                stack.pop()
    return stack


def _op_name_index(tokens: list[L.Token]) -> int | None:
    """Index of the op name: after the results' `=`, or the first token when there are none."""
    i = 0
    if tokens and tokens[0].kind == L.VALUE:
        # results: %a, %b:2 =
        while i < len(tokens) and (tokens[i].kind in (L.VALUE, L.INT) or tokens[i].text in (",", ":")):
            i += 1
        if i >= len(tokens) or tokens[i].text != "=":
            return None
        i += 1
    if i < len(tokens) and tokens[i].kind == L.IDENT:
        return i
    return None


def _results_only(tokens: list[L.Token]) -> bool:
    """`tokens` are a result list and its `=` (or nothing): an op name comes next."""
    if not tokens:
        return True
    if tokens[-1].text != "=":
        return False
    return all(t.kind in (L.VALUE, L.INT) or t.text in (",", ":") for t in tokens[:-1])


def _in_type_position(tokens: list[L.Token]) -> bool:
    """After a `:` or `->` with only type-looking tokens between it and the cursor."""
    depth = 0
    for tok in reversed(tokens):
        text = tok.text
        if tok.kind == L.PUNCT and text in _CLOSERS:
            depth += 1
            continue
        if tok.kind == L.PUNCT and text in _OPENERS:
            depth = max(depth - 1, 0)
            continue
        if depth:
            continue  # inside a complete type's parameters
        if text in (":", "->"):
            return True
        if text == ",":
            continue
        if tok.kind == L.BANG or (tok.kind == L.IDENT and (text in _TYPE_WORDS or text in SCALAR_TYPES)):
            continue
        return False
    return False


def cursor_context(line: str, line_start: int, level: str = "body") -> CursorContext:
    """The context of the cursor at the end of `line` (the text of its line before it);
    `line_start` is the offset of the line, `level` where the line is ("top", "module", "body")."""
    cursor = line_start + len(line)
    none = CursorContext("none", cursor, "")
    tokens_all, inert = tokens_of(line)
    if inert:
        return none
    dims = _DIMS_RE.search(line)
    if dims is not None:
        word = dims.group(1) or ""
        return CursorContext("element_type", cursor - len(word), word, level=level)
    match = _WORD_RE.search(line)
    sigil, word = (match.group(1), match.group(2)) if match else ("", "")
    start = cursor - len(sigil) - len(word)
    tokens, _ = tokens_of(line[: start - line_start])
    if sigil == "%":
        # `%x` opening the line names a new result: nothing to offer.
        if all(t.kind in (L.VALUE, L.INT) or t.text in (",", ":") for t in tokens):
            return none
        return CursorContext("value", start, sigil + word, level=level)
    if sigil == "@":
        return CursorContext("symbol", start, sigil + word, _op_name(tokens), level=level)
    if sigil == "!":
        return CursorContext("type_alias", start, sigil + word, level=level)
    if sigil == "#":
        return CursorContext("attribute_alias", start, sigil + word, level=level)
    if sigil == "^" or (word and not re.fullmatch(r"[A-Za-z_][\w$.]*", word)):
        return none
    op_name = _op_name(tokens)
    if len(tokens) >= 2 and tokens[-1].text == "=" and tokens[-2].kind == L.IDENT:
        enum = ENUM_BY_MNEMONIC.get(tokens[-2].text)  # `padding_value = zero`
        if enum is not None:
            return CursorContext("enum", start, word, op_name, (enum,), ("",), level=level)
    open_at = _unclosed(tokens)
    if open_at and tokens[open_at[-1]].text == "<" and open_at[-1] > 0:
        before = tokens[open_at[-1] - 1]
        if before.text in ("tile", "ptr", "tensor_view") or (before.kind == L.IDENT and before.text == "constant"):
            return CursorContext("element_type", start, word, op_name, level=level)
        if before.text in PARAMETRIC_TYPES:
            return CursorContext("type", start, word, op_name, level=level)
        enum = ENUM_BY_MNEMONIC.get(before.text)
        if enum is not None:
            return CursorContext("enum", start, word, op_name, (enum,), ("",), level=level)
    if _in_type_position(tokens):
        return CursorContext("type", start, word, op_name, level=level)
    if _results_only(tokens):
        return CursorContext("op", start, word, level=level)
    opdef = lookup_op(op_name) if op_name else None
    if opdef is None:
        return none
    index = _op_name_index(tokens)
    after_name = tokens[index + 1 :] if index is not None else []
    if any(t.text == ":" for t in after_name):
        return none
    enums, wrapped, keywords = expected_enums(opdef, after_name)
    if not enums and not keywords:
        return none
    return CursorContext("enum", start, word, op_name, enums, wrapped, keywords, level)


def _op_name(tokens: list[L.Token]) -> str | None:
    index = _op_name_index(tokens)
    return tokens[index].text if index is not None else None


# ------------------------------------------------------------------ the op's format, as slots


@dataclass(frozen=True, slots=True)
class Slot:
    """One piece of an op's assembly before its `:`: a literal, an operand, an enum, or
    something else (another attribute, a custom directive)."""

    kind: str  # "lit" | "operand" | "enum" | "other"
    text: str = ""  # literal text, operand or attribute name
    optional: bool = False
    enum: EnumDef | None = None
    wrap: str = ""  # the keyword an enum is written inside: `rounding<zero>`


def format_slots(opdef: OpDef) -> list[Slot] | None:
    """The op's assembly format up to its first top-level `:` as a flat list of slots
    (optional groups flattened, marked optional); None for ops with hand-written syntax."""
    if opdef.assembly is None:
        return None
    slots: list[Slot] = []
    operand_names = {o.name: o for o in opdef.operands}

    def add(elements: list, optional: bool) -> bool:
        for element in elements:
            if isinstance(element, Lit):
                if element.text == ":" and not optional:
                    return False
                slots.append(Slot("lit", element.text, optional))
            elif isinstance(element, Var):
                operand = operand_names.get(element.name)
                if operand is not None:
                    slots.append(Slot("operand", element.name, optional or operand.arity == "optional"))
                    continue
                attr = opdef.attribute(element.name)
                enum = enum_for_kind(attr.kind) if attr is not None else None
                if enum is not None:
                    slots.append(Slot("enum", element.name, optional or attr.optional, enum))
                else:
                    slots.append(Slot("other", element.name, optional))
            elif isinstance(element, Custom):
                attr = opdef.attribute(element.args[0].name) if element.args else None
                enum = enum_for_kind(attr.kind) if attr is not None else None
                if enum is ROUNDING_MODE and element.name.endswith("RoundingMode"):
                    slots.append(Slot("enum", attr.name, True, enum, "rounding"))  # omitted when default
                elif enum is not None and element.name != "SymbolVisibility":
                    slots.append(Slot("enum", attr.name, optional, enum))
                else:
                    slots.append(Slot("other", element.name, True))
            elif isinstance(element, Group):
                if not add(element.elements, True):
                    return False
            elif isinstance(element, OIList):
                for clause in element.clauses:
                    add(clause, True)
            elif isinstance(element, (Space, AttrDict)):
                continue
            elif isinstance(element, TypeOf):
                return False
        return True

    add(compile_format(opdef), False)
    return slots


def _match_slots(slots: list[Slot], typed: list[L.Token]) -> int:
    """The slot the next token fills after `typed` (the tokens after the op name)."""
    pos = 0
    previous: L.Token | None = None
    for tok in typed:
        found = None
        if tok.kind == L.VALUE:
            found = next((i for i in range(pos, len(slots)) if slots[i].kind == "operand"), None)
        elif tok.kind == L.IDENT:
            for i in range(pos, len(slots)):
                slot = slots[i]
                if slot.kind == "enum" and slot.enum.by_keyword(tok.text) is not None and not slot.wrap:
                    found = i
                    break
                if slot.kind == "enum" and slot.wrap == tok.text:
                    found = i
                    break
                if slot.kind == "lit" and slot.text == tok.text:
                    found = i
                    break
                if not slot.optional:
                    break
            if found is None and previous is not None and previous.text == "<":
                found = pos - 1  # the keyword inside `overflow<...>`: already counted
        elif tok.kind == L.PUNCT and tok.text in (",", "=", "[", "]", "(", ")"):
            found = next(
                (i for i in range(pos, len(slots)) if slots[i].kind == "lit" and slots[i].text == tok.text), None
            )
        if found is not None and found >= pos:
            pos = found + 1
        previous = tok
    return pos


def expected_enums(opdef: OpDef, typed: list[L.Token]) -> tuple[tuple[EnumDef, ...], tuple[str, ...], tuple[str, ...]]:
    """The enums (and how each is wrapped) and optional keywords the op's syntax allows after
    the tokens `typed` after its name."""
    slots = format_slots(opdef)
    if slots is None:
        return _expected_enums_by_attributes(opdef, typed)
    enums: list[EnumDef] = []
    wraps: list[str] = []
    keywords: list[str] = []
    pos = _match_slots(slots, typed)
    for slot in slots[pos:]:
        if slot.kind == "enum":
            if slot.enum not in enums:
                enums.append(slot.enum)
                wraps.append(slot.wrap)
        elif slot.kind == "lit" and slot.optional and re.fullmatch(r"[A-Za-z_]\w*", slot.text):
            if slot.text not in keywords:
                keywords.append(slot.text)
        if not slot.optional:
            break
    return tuple(enums), tuple(wraps), tuple(keywords)


def _expected_enums_by_attributes(
    opdef: OpDef, typed: list[L.Token]
) -> tuple[tuple[EnumDef, ...], tuple[str, ...], tuple[str, ...]]:
    """Hand-written syntaxes (the view ops) put their enum keywords first, in the order of
    the op's attributes, except an enum after the operands (atomic_red_view's mode)."""
    words = {t.text for t in typed if t.kind == L.IDENT}
    seen_value = any(t.kind == L.VALUE for t in typed)
    enums: list[EnumDef] = []
    for attr in opdef.attributes:
        enum = enum_for_kind(attr.kind)
        if enum is None or any(w in words for w in enum.keywords):
            continue
        if seen_value and attr.name in ("memory_ordering_semantics", "memory_scope"):
            continue  # these precede the operands
        enums.append(enum)
        if not seen_value and not attr.optional and attr.name == "memory_ordering_semantics":
            break
    return tuple(enums), ("",) * len(enums), ()


# ------------------------------------------------------------------ scope


def _block_at(op: Operation, offset: int) -> Block | None:
    for region in op.regions:
        if region.span is None or not region.span.start < offset <= region.span.end:
            continue
        for block in region.blocks:
            if block.span is not None and block.span.start <= offset <= block.span.end:
                return block
        return region.blocks[-1] if region.blocks else None
    return None


def values_in_scope(around: Operation | None, offset: int) -> list[Value]:
    """The SSA values usable at `offset`, nearest scope first: the arguments of the blocks
    around it and the results of the ops written before it in those blocks, up to the
    nearest op isolated from above (an entry). `around` is the innermost op covering
    `offset`."""
    if around is None:
        return []
    block = _block_at(around, offset)
    limit = offset
    if block is None:  # inside the op's own text (its operands): the ops before it
        block, limit = around.parent, (around.span.start if around.span is not None else offset)
        owner = around
    else:
        owner = around
        if around.is_isolated_from_above and around.name != "cuda_tile.entry":
            return []  # a module body holds no values
    found: list[Value] = []
    while block is not None:
        found.extend(block.arguments)
        for op in block.ops:
            if op.span is not None and op.span.end <= limit and op is not owner:
                found.extend(op.results)
        parent = block.parent.parent if block.parent is not None else None
        if parent is None or parent.is_isolated_from_above:
            break
        limit = parent.span.start if parent.span is not None else limit
        owner = parent
        block = parent.parent
    return [v for v in found if v.name]


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    name: str
    op: Operation
    kind: str  # "entry" | "global" | "module" | other op mnemonics


def module_symbols(module: Module) -> list[SymbolInfo]:
    """The symbols the document defines (globals, entries, modules), in document order."""
    found = []
    for op in module.walk():
        sym = op.properties.get("sym_name")
        name = getattr(sym, "value", None)
        if isinstance(name, str):
            found.append(SymbolInfo(name, op, op.mnemonic))
    return found


# ------------------------------------------------------------------ snippets and signatures


def _escape_snippet(text: str) -> str:
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


@dataclass(slots=True)
class _SnippetWriter:
    snippet: bool
    parts: list[str] = field(default_factory=list)
    count: int = 0
    glue: bool = False  # the next piece goes right after the previous one

    def write(self, text: str, placeholder: bool = False, choices: tuple[str, ...] = ()) -> None:
        if self.parts and not self.glue and text not in (",", "]", ")") and not self.parts[-1].endswith(("[", "(")):
            self.parts.append(" ")
        self.glue = False
        if not self.snippet:
            self.parts.append(text)
            return
        self.count += 1
        if choices:
            self.parts.append(f"${{{self.count}|{','.join(choices)}|}}")
        elif placeholder:
            self.parts.append(f"${{{self.count}:{_escape_snippet(text)}}}")
        else:
            self.count -= 1
            self.parts.append(_escape_snippet(text))


def op_snippet(opdef: OpDef, snippet: bool = True) -> str:
    """What to insert for the op: its mnemonic and its required syntax, with placeholders
    (`addf ${1:%lhs}, ${2:%rhs} : ${3:tile<f32>}`); the mnemonic alone when `snippet` is
    False. Hand-written syntaxes use the op's first example line."""
    if not snippet:
        return opdef.mnemonic
    if opdef.assembly is None:
        return _snippet_from_example(opdef)
    out = _SnippetWriter(True)
    out.write(opdef.mnemonic)
    operand_names = {o.name for o in opdef.operands}
    for element in compile_format(opdef):
        if isinstance(element, Lit):
            out.write(element.text)
        elif isinstance(element, Space):
            if element.text == "":
                out.glue = True
        elif isinstance(element, Var):
            if element.name in operand_names:
                out.write(f"%{element.name}", placeholder=True)
            else:
                attr = opdef.attribute(element.name)
                enum = enum_for_kind(attr.kind) if attr is not None else None
                if enum is not None:
                    out.write(enum.keywords[0], choices=enum.keywords)
                elif attr is not None and attr.kind in ("symbol", "symbol_ref"):
                    out.write(f"@{element.name}", placeholder=True)
                elif attr is not None and not (attr.optional or attr.default):
                    out.write(element.name, placeholder=True)
        elif isinstance(element, TypeOf):
            out.write("type", placeholder=True)
        elif isinstance(element, Custom):
            attr = opdef.attribute(element.args[0].name) if element.args else None
            enum = enum_for_kind(attr.kind) if attr is not None else None
            if element.name.endswith("RoundingMode") or element.name in ("SymbolVisibility",):
                continue  # optional: omitted means the default
            if enum is not None:
                out.write(enum.keywords[0], choices=enum.keywords)
            elif element.name == "DenseTypedElementsAttr":
                out.write("<f32: 0.0> : tile<f32>", placeholder=True)
            elif element.name == "DenseTypedElementsAttrNoResult":
                out.write("<f32: [0.0]> : tile<1xf32>", placeholder=True)
            elif element.name == "AssumePredicate":
                out.write("bounded<0, ?>", placeholder=True)
            elif element.name in ("IfOpRegion", "ArgumentRegion"):
                out.write("{ }")
        # Optional groups, oilists and attribute dictionaries are left out: a snippet shows
        # what is required.
    return "".join(out.parts).replace(" ,", ",")


def _snippet_from_example(opdef: OpDef) -> str:
    if not opdef.examples:
        return opdef.mnemonic
    line = opdef.examples[0].splitlines()[0]
    words = line.split(" = ", 1)
    body = words[1] if len(words) == 2 and words[0].lstrip().startswith("%") else line
    body = body.rstrip(" {")
    body, colon, types = body.partition(" : ")
    counter = 0

    def placeholder(match: re.Match[str]) -> str:
        nonlocal counter
        counter += 1
        return f"${{{counter}:{_escape_snippet(match.group(0))}}}"

    pieces = re.split(r"(%[\w$.\-]+|@[\w$.\-]+)", body)
    out = []
    for i, piece in enumerate(pieces):
        out.append(placeholder(re.match(r".*", piece)) if i % 2 else _escape_snippet(piece))  # type: ignore[arg-type]
    if colon:
        out.append(f" : ${{{counter + 1}:{_escape_snippet(types)}}}")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Signature:
    label: str
    parameters: tuple[tuple[int, int], ...]  # [start, end) of each operand in `label`
    parameter_docs: tuple[str, ...]


def op_signature(opdef: OpDef) -> Signature:
    """`addf %lhs: float_tile, %rhs: float_tile -> result: float_tile`, with where each
    operand is in the label."""
    label = opdef.mnemonic + " "
    spans = []
    docs = []
    for i, operand in enumerate(opdef.operands):
        if i:
            label += ", "
        suffix = "?" if operand.arity == "optional" else "..." if operand.arity == "variadic" else ""
        text = f"%{operand.name}{suffix}: {operand.constraint}"
        spans.append((len(label), len(label) + len(text)))
        label += text
        docs.append(operand.doc)
    if opdef.results:
        label += " -> " + ", ".join(f"{r.name}: {r.constraint}" for r in opdef.results)
    return Signature(label.rstrip(), tuple(spans), tuple(docs))


def active_operand(opdef: OpDef, typed: list[L.Token], typing_value: bool) -> int | None:
    """The operand (index in `opdef.operands`) the cursor is at, given the tokens after
    the op name; None once the operands are behind (types, a trailing enum)."""
    if not opdef.operands:
        return None
    slots = format_slots(opdef)
    if slots is None:
        # Hand-written syntax: operands are separated by commas at the top level.
        depth = 0
        commas = 0
        for tok in typed:
            if tok.text in _OPENERS:
                depth += 1
            elif tok.text in _CLOSERS:
                depth = max(depth - 1, 0)
            elif tok.text == "," and depth == 0:
                commas += 1
        return min(commas, len(opdef.operands) - 1)
    if typing_value and typed and typed[-1].kind == L.VALUE:
        typed = typed[:-1]
    pos = _match_slots(slots, typed)
    for slot in slots[pos:]:
        if slot.kind == "operand":
            return opdef.operand_index(slot.text)
        if not slot.optional and slot.kind != "enum":
            break
    return None


__all__ = [
    "PARAMETRIC_TYPES",
    "CursorContext",
    "Signature",
    "Slot",
    "SymbolInfo",
    "active_operand",
    "cursor_context",
    "element_type_names",
    "element_type_since",
    "expected_enums",
    "format_slots",
    "module_symbols",
    "op_signature",
    "op_snippet",
    "ops_for_level",
    "tokens_of",
    "values_in_scope",
]
