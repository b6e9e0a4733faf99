"""Completion and inspection inside `%%tileir` cells, from the language server's own code
(`tile_lsp.features.completion.completion_items`, `tile_lsp.features.hover.hover_at`) over
the language server's analysis of the cell (`tile_lsp.documents.analyze`): the same op
names with their snippets, types, enum keywords and values in scope, and the same hover text.

The cell's first line (`%%tileir NAME --options`) is blanked to spaces of the same length, so
that offsets in the cell and in the analysed text are the same numbers.

Two ways in: the Tile IR kernel's `do_complete`/`do_inspect` (kernel.py) call `complete` and
`inspect`; with the extension alone in a stock IPython kernel, `matcher` plugs `complete` into
IPython's completer (IPython has no hook for inspection).

On a magic line (`%%tileir NAME --options`, `%tileir SOURCE --options`) `complete` offers the
magic's option names, the values of `--backend` and `--show`, and for `%tileir SOURCE` the
modules bound in the notebook and the Tile IR files there; inspection there is IPython's (the
magic's docstring).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAGIC = "%%tileir"
_SNIPPET_FIELD = re.compile(r"\$\{\d+:((?:[^}\\]|\\.)*)\}|\$\d+")

# Jupyter's completion types (JupyterLab shows them as icons) for LSP's item kinds.
_TYPES = {
    3: "function",  # Function: ops
    6: "variable",  # Variable: SSA values, globals
    9: "module",
    14: "keyword",
    20: "enum",  # EnumMember
    21: "constant",
    22: "class",  # Struct: type constructors
    25: "class",  # TypeParameter: element types
}


_CELL = re.compile(r"[ \t]*%%tileir(?=\s|$)")  # not `%%tileirx`, another magic


def is_tileir_cell(code: str) -> bool:
    return _CELL.match(code) is not None


def ir_text(code: str) -> str:
    """The cell with its magic line blanked: same length, same offsets."""
    end = code.find("\n")
    end = len(code) if end < 0 else end
    return " " * end + code[end:]


def _analysis(code: str):
    from tile_lsp.documents import Settings, analyze

    analysis = analyze("cell", ir_text(code), None, Settings(), name="cell")
    # Jupyter counts cursor positions in code points (protocol 5.2), as Python indexes str.
    analysis.positions.encoding = "utf-32"
    return analysis


def _plain_snippet(snippet: str) -> str:
    """An LSP snippet as the text it stands for: placeholders by their default text."""
    text = _SNIPPET_FIELD.sub(lambda m: m.group(1) or "", snippet)
    return re.sub(r"\\([$}\\])", r"\1", text)


@dataclass(frozen=True, slots=True)
class Match:
    label: str  # what the list shows and what a plain frontend inserts
    text: str  # what JupyterLab inserts (an op with its snippet spelled out)
    type: str
    signature: str  # the item's detail: an op's name and version, a value's type


@dataclass(frozen=True, slots=True)
class Completions:
    start: int
    end: int
    matches: list[Match]


def on_magic_line(code: str, cursor_pos: int) -> bool:
    """Whether `cursor_pos` is on the first line of a `%%tileir` cell (IPython's to inspect)."""
    first_newline = code.find("\n")
    return is_tileir_cell(code) and (first_newline < 0 or cursor_pos <= first_newline)


def complete(code: str, cursor_pos: int, namespace: dict[str, Any] | None = None) -> Completions | None:
    """Completions at `cursor_pos`: in the Tile IR of a `%%tileir` cell, every item the
    language server offers whose label starts with what is typed (case-insensitive), ops
    first as the server orders them; on a `%%tileir`/`%tileir` line, the magic's options and
    their values (`complete_magic_line`, with the modules of `namespace`). None elsewhere,
    and on a magic line with nothing to offer (IPython's completion then answers)."""
    cursor_pos = max(0, min(cursor_pos, len(code)))
    if on_magic_line(code, cursor_pos) or not is_tileir_cell(code):
        return complete_magic_line(code, cursor_pos, namespace)
    from lsprotocol import types as lsp

    from tile_lsp.features.completion import completion_items

    analysis = _analysis(code)
    # Snippet support on: the op templates come back, spelled out as plain text below.
    capabilities = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            completion=lsp.CompletionClientCapabilities(
                completion_item=lsp.ClientCompletionItemOptions(snippet_support=True)
            )
        )
    )
    items = completion_items(analysis, cursor_pos, capabilities)
    start = cursor_pos
    matches: list[Match] = []
    for item in items:
        edit = item.text_edit
        if isinstance(edit, lsp.TextEdit):
            start = analysis.positions.offset(edit.range.start)
            new_text = edit.new_text
        else:
            new_text = item.insert_text or item.label
        typed = code[start:cursor_pos].lower()
        if typed and not item.label.lower().startswith(typed):
            continue
        snippet = item.insert_text_format == lsp.InsertTextFormat.Snippet
        matches.append(
            Match(
                label=item.label,
                text=_plain_snippet(new_text) if snippet else new_text,
                type=_TYPES.get(int(item.kind or 0), "text"),
                signature=item.detail or "",
            )
        )
    return Completions(start, cursor_pos, matches)


_MAGIC_LINE = re.compile(r"[ \t]*(%%?)tileir(?=\s|$)")
_TILEIR_FILES = (".tileir", ".tileirbc")


def complete_magic_line(code: str, cursor_pos: int, namespace: dict[str, Any] | None = None) -> Completions | None:
    """Completions on a `%%tileir` line (the cell's first) or a `%tileir` line: option names
    after `-`, the choices of `--backend` and `--show` (after the last comma), a module's
    kernels after `--run`, and for `%tileir`'s SOURCE the modules bound in `namespace` and
    the `.tileir`/`.tileirbc` files and folders. None when the cursor is elsewhere or
    nothing matches."""
    line_start = code.rfind("\n", 0, cursor_pos) + 1
    line = code[line_start:cursor_pos]
    magic = _MAGIC_LINE.match(line)
    if magic is None or (magic.group(1) == "%%" and code[:line_start].strip()):
        return None
    cell = magic.group(1) == "%%"
    typed = re.search(r"\S*$", line).group(0)  # type: ignore[union-attr]
    before = line[magic.end() : len(line) - len(typed)].split()
    previous = before[-1] if before else None
    choices: list[tuple[str, str, str]] = []  # (label, type, signature)
    from .magic import SHOW_KINDS, TileIRMagics
    from .module import BACKEND_CHOICES, TileModule

    parser = (TileIRMagics.tileir if cell else TileIRMagics.tileir_line).parser
    if typed.startswith("-"):
        for action in parser._actions:
            choices += [(o, "keyword", action.help or "") for o in action.option_strings if o.startswith("--")]
    elif previous in ("--backend", "--show"):
        typed = typed.rsplit(",", 1)[-1]  # --show ir,by
        choices = [(c, "enum", previous) for c in (BACKEND_CHOICES if previous == "--backend" else SHOW_KINDS)]
    elif previous == "--run" and not cell and before[0] != "--run":
        module = (namespace or {}).get(before[0])
        if isinstance(module, TileModule):
            choices = [(k.name, "function", k.signature) for k in module.kernels.values()]
    elif not cell and not before:
        modules = [
            (n, "module", repr(v).splitlines()[0]) for n, v in (namespace or {}).items() if isinstance(v, TileModule)
        ]
        choices = sorted(modules) + _tileir_paths(typed)
    matches = [Match(label, label, kind, detail) for label, kind, detail in choices if label.startswith(typed)]
    if not matches:
        return None
    return Completions(cursor_pos - len(typed), cursor_pos, matches)


def _tileir_paths(typed: str) -> list[tuple[str, str, str]]:
    """The folders and Tile IR files whose path starts with `typed` (`~` as the shell has it)."""
    import glob
    import os

    found = []
    for path in sorted(glob.glob(os.path.expanduser(typed) + "*"))[:200]:
        shown = typed + path[len(os.path.expanduser(typed)) :]
        if os.path.isdir(path):
            found.append((shown + os.sep, "path", "folder"))
        elif path.endswith(_TILEIR_FILES):
            found.append((shown, "path", "Tile IR file"))
    return found


def complete_reply(code: str, cursor_pos: int, namespace: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A Jupyter `complete_reply` for a `%%tileir` cell or a magic line (see `complete`), or
    None (IPython's to answer). `matches`
    are the labels; `_jupyter_types_experimental` (which JupyterLab reads) carries the text to
    insert, the kind and the detail."""
    found = complete(code, cursor_pos, namespace)
    if found is None:
        return None
    return {
        "status": "ok",
        "matches": [m.label for m in found.matches],
        "cursor_start": found.start,
        "cursor_end": found.end,
        "metadata": {
            "_jupyter_types_experimental": [
                {"start": found.start, "end": found.end, "text": m.text, "type": m.type, "signature": m.signature}
                for m in found.matches
            ]
        },
    }


def inspect(code: str, cursor_pos: int) -> dict[str, str] | None:
    """The hover text (Markdown and plain) of the op, value or type under `cursor_pos` in a
    `%%tileir` cell; None when there is nothing there. A cursor just after a word (where
    Shift-Tab is pressed) inspects that word."""
    if not is_tileir_cell(code):
        return None
    from lsprotocol import types as lsp

    from tile_lsp.features.hover import hover_at

    analysis = _analysis(code)
    for offset in (cursor_pos, cursor_pos - 1):
        if offset < 0 or offset > len(code):
            continue
        position = analysis.positions.position(offset)
        markdown = hover_at(analysis, position, lsp.MarkupKind.Markdown)
        if markdown is None:
            continue
        plain = hover_at(analysis, position, lsp.MarkupKind.PlainText)
        value = markdown.contents.value if isinstance(markdown.contents, lsp.MarkupContent) else str(markdown.contents)
        text = plain.contents.value if plain is not None and isinstance(plain.contents, lsp.MarkupContent) else value
        return {"text/plain": text, "text/markdown": value}
    return None


def inspect_reply(code: str, cursor_pos: int) -> dict[str, Any] | None:
    """A Jupyter `inspect_reply` for the Tile IR of a `%%tileir` cell, or None for other cells
    and for the magic line (IPython's inspection shows the magic's docstring there)."""
    if not is_tileir_cell(code) or on_magic_line(code, cursor_pos):
        return None
    data = inspect(code, cursor_pos)
    return {"status": "ok", "found": data is not None, "data": data or {}, "metadata": {}}


# --------------------------------------------------------------------------------------------
# IPython's completer (the extension alone, in any IPython kernel or terminal)


def make_matcher(shell: Any = None):
    """An IPython completion matcher (API v2, IPython >= 8.6) that answers inside `%%tileir`
    cells and on magic lines (with the modules of `shell`'s namespace), and suppresses the
    Python matchers there; elsewhere it returns nothing."""
    from IPython.core.completer import SimpleCompletion, context_matcher

    @context_matcher()
    def tileir_matcher(context) -> dict[str, Any]:
        lines = context.full_text.split("\n")
        offset = sum(len(line) + 1 for line in lines[: context.cursor_line]) + context.cursor_position
        found = complete(context.full_text, offset, getattr(shell, "user_ns", None))
        if found is None:
            return {"completions": [], "suppress": False}
        return {
            # IPython inserts what it lists: the names, not the spelled-out templates.
            "completions": [SimpleCompletion(m.label, type=m.type) for m in found.matches],
            "matched_fragment": context.full_text[found.start : found.end],
            "suppress": True,
            "ordered": True,
        }

    return tileir_matcher
