"""Bytecode as text, the way NVIDIA's `tileirdisasm` shows it (`tileir disasm`, the language
server's `tileir/convertFromBytecode`)."""

from __future__ import annotations

from ..ir.core import Module


def looks_like_text(data: bytes) -> bool:
    """Whether `data` reads as UTF-8 text without control characters (a `.tileir` file passed
    where bytecode was expected), so that the user is told that rather than what is wrong
    with its first byte."""
    head = data[:4096]
    if not head:
        return False  # the reader says what is wrong with an empty file
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not just a character cut at the 4096-byte boundary
            return False
        text = head[: exc.start].decode("utf-8")
    return all(ch.isprintable() or ch in "\t\n\r\f\ufeff" for ch in text)


def disassembly(module: Module, debuginfo: bool = False) -> str:
    """The text of a module read from bytecode: its `cuda_tile.module` wrapper taken off (bare
    `global` and `entry` items), after the Producer section (13.3+) as a comment."""
    from ..text import PrintOptions, print_module

    items = Module()
    producer = None
    for top in module.ops:
        if top.name == "cuda_tile.module" and top.regions and top.regions[0].entry_block is not None:
            producer = producer or top.properties.get("producer")
            for item in list(top.regions[0].entry_block.ops):
                items.body.append(item)
        else:
            items.body.append(top)
    text = print_module(items, PrintOptions(debuginfo=debuginfo, keep_comments=False))
    return f"// Producer: {producer.value}\n" + text if producer is not None else text
