"""Tile IR bytecode (`.tileirbc`): the reader and writer, compatible with NVIDIA's tools.

    from compiler.bytecode import read_bytecode, write_bytecode
    module = read_bytecode(data)                   # bytes -> Module (BytecodeError if invalid)
    data = write_bytecode(module, (13, 1))         # Module -> bytes (BytecodeWriteError)

`format` holds the container (versions, sections, tags, primitive encodings), `schema` the
per-op layout derived from the op table, `constants` the dense-constant payloads.
"""

from __future__ import annotations

from .format import (
    AUTO_WRITE,
    CURRENT,
    DEFAULT_WRITE,
    MAGIC,
    READ_ONLY,
    SUPPORTED,
    TEST_VERSIONS,
    TRANSLATE_VERSIONS,
    BytecodeError,
    Version,
    parse_version,
    version_text,
)

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from .reader import read_bytecode
    from .writer import BytecodeWriteError, oldest_version, write_bytecode

# The reader and the writer are imported on first use: telling bytecode from text
# (`is_bytecode`) should not cost every text command their import.
_LAZY = {
    "read_bytecode": "reader",
    "BytecodeWriteError": "writer",
    "oldest_version": "writer",
    "write_bytecode": "writer",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is not None:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{module}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_bytecode(data: bytes) -> bool:
    """Whether `data` starts like a Tile IR bytecode file."""
    return data[: len(MAGIC)] == MAGIC


__all__ = [
    "AUTO_WRITE",
    "CURRENT",
    "DEFAULT_WRITE",
    "READ_ONLY",
    "SUPPORTED",
    "TEST_VERSIONS",
    "TRANSLATE_VERSIONS",
    "BytecodeError",
    "BytecodeWriteError",
    "Version",
    "is_bytecode",
    "oldest_version",
    "parse_version",
    "read_bytecode",
    "version_text",
    "write_bytecode",
]
