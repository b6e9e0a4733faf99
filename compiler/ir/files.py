"""Reading input files with memory bounded by a limit, for every face.

A path a user names may be a device (`/dev/zero` never ends), a FIFO (blocks until a writer
comes), a directory, or a file far larger than any Tile IR module. The CLI, the runtime's
`load_module` and the language server all read their inputs through `read_file`, which
refuses each of these with a one-line reason instead of filling memory or hanging.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from typing import BinaryIO

# The largest input the tools read by default. A Tile IR module is a few megabytes at most.
DEFAULT_LIMIT = 256 << 20
_PIECE = 1 << 20


class InputError(Exception):
    """An input that cannot be read: the message names it and says why, in one line."""


def kind_of(mode: int) -> str:
    """What a file of this `st_mode` is, for messages ("a FIFO (named pipe)", ...)."""
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def too_large(name: str, size: int | None, limit: int, hint: str) -> InputError:
    have = f"{size} bytes, " if size is not None else ""
    return InputError(f"cannot read '{name}': {have}more than the limit of {limit} bytes{hint}")


def read_file(path: str, limit: int = DEFAULT_LIMIT, *, regular_only: bool = False, hint: str = "") -> bytes:
    """The bytes of the file at `path`: at most `limit` of them, else InputError (`hint` says
    how to raise the limit). A regular file is read at its size; a device or a pipe in
    pieces up to the limit, or, with `regular_only` (a server that must not block), refused.
    Opened non-blocking, so that a FIFO without a writer cannot hang the caller."""
    try:
        flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | (getattr(os, "O_NONBLOCK", 0) if regular_only else 0)
        fd = os.open(path, flags)
    except OSError as error:
        raise InputError(f"cannot read '{path}': {_reason(error)}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"cannot read '{path}': is a directory")
        regular = stat.S_ISREG(info.st_mode)
        if regular_only and not regular:
            raise InputError(f"cannot read '{path}': {kind_of(info.st_mode)}, not a regular file")
        if regular and info.st_size > limit:
            raise too_large(path, info.st_size, limit, hint)
        with os.fdopen(fd, "rb", closefd=False) as stream:
            return read_stream(stream, path, limit, hint)
    except OSError as error:
        raise InputError(f"cannot read '{path}': {_reason(error)}") from None
    finally:
        os.close(fd)


def read_stream(stream: BinaryIO, name: str, limit: int = DEFAULT_LIMIT, hint: str = "") -> bytes:
    """All of `stream` (a file, a pipe, standard input), read in pieces: InputError past
    `limit` bytes (a file may also grow while it is read) or when memory runs out."""
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            chunk = stream.read(min(_PIECE, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise too_large(name, None, limit, hint)
    except MemoryError:
        chunks.clear()
        raise InputError(f"cannot read '{name}': not enough memory to hold it ({total} bytes read)") from None


def _reason(error: OSError) -> str:
    return error.strerror or str(error)
