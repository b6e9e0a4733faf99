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


# Below this many bytes of bytecode per process, forking costs more than it saves.
MIN_PART_BYTES = 15_000


def disassembly_in_parts(data: bytes, parts: int | None = None) -> str | None:
    """`disassembly(read_bytecode(data))` (without debug info) found in `parts` processes
    (default: as many as pay), each decoding and printing a run of the kernels; None where
    the file is too small or any part fails (then only the one-process reader can say what
    is wrong with it first). The parts' texts join as they are: the printer names each
    kernel's values on its own, and the module has no comments."""
    from ..ir.workers import available_workers, fork_map
    from ..text import print_module  # noqa: F401 - imported once here, not in each process
    from . import read_bytecode  # noqa: F401

    if parts is None:
        parts = min(available_workers(), len(data) // MIN_PART_BYTES)
    if parts < 2:
        return None
    tasks = [_part_task(data, index, parts) for index in range(parts)]
    results = fork_map(tasks)
    if results is None or any(r is None for r in results):
        return None
    return "".join(results)  # type: ignore[arg-type]


def _part_task(data: bytes, index: int, parts: int):
    def run() -> str | None:
        from . import BytecodeError, read_bytecode

        try:
            module = read_bytecode(data, part=(index, parts))
        except BytecodeError:
            return None
        if index > 0:  # the first part prints the globals (and the producer) once
            for top in module.ops:
                if top.name == "cuda_tile.module" and top.regions and top.regions[0].entry_block is not None:
                    top.properties.pop("producer", None)
                    block = top.regions[0].entry_block
                    block.ops[:] = [op for op in block.ops if op.name != "cuda_tile.global"]
        return disassembly(module)

    return run


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
