"""Reading input files with memory bounded by a limit, and replacing files atomically, for every face.

A path a user names may be a device (`/dev/zero` never ends), a FIFO (blocks until a writer
comes), a directory, or a file far larger than any Tile IR module. The CLI, the runtime's
`load_module` and the language server all read their inputs through `read_file`, which
refuses each of these with a one-line reason instead of filling memory or hanging.

Whatever the tools write (`tileir fmt -i`, `-o OUT`, the compile caches) goes through
`write_atomic`: a reader, or a crash, sees the old file or the new one, never a mix.
"""

from __future__ import annotations

import os
import re
import stat
import time

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable
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


def write_atomic(
    path: str | os.PathLike, text: str | bytes | Callable[[BinaryIO], object], *, durable: bool = True
) -> None:
    """Write `text` (UTF-8), bytes, or what `text(file)` writes to a binary file, to `path`.

    A regular file is replaced atomically: a temporary file `.NAME.tileir<pid>.XXXXXXXX.tmp`
    in the same directory, fsync, `os.replace`; readers see the old or the new content, never
    a mix. The file's mode is kept, and its owner and group where the rights allow (root).
    A symbolic link is followed, not replaced. Temporary files that a killed tileir left
    beside the target are removed.

    Exceptions, where a rename would do harm: a target that is not a regular file (a device
    such as /dev/null, a FIFO) is written directly, not replaced; a regular file with other
    hard links is rewritten in place, so that every link sees the new content; that write is
    not atomic, but the content is first written in full to a temporary file, so a full disk
    fails before the file is touched.

    `durable=False` skips the fsyncs, for caches: after a power cut such a file may be empty or
    old (an fsync waits for the disk; a lost cache entry is only made again, and caches check
    what they read)."""
    target = os.path.realpath(path)
    directory = os.path.dirname(target) or "."
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        # /dev/null, /dev/stdout, a FIFO: renaming over them would replace the device itself.
        with open(target, "wb") as f:
            _write_content(f, text)
        return
    _remove_stale_temporaries(directory, os.path.basename(target))
    fd, tmp = _create_temporary(directory, os.path.basename(target))
    try:
        with os.fdopen(fd, "wb") as f:
            _write_content(f, text)
            if durable:
                os.fsync(f.fileno())
        if info is not None and info.st_nlink > 1:
            _rewrite_in_place(target, tmp)
            return
        if info is not None:
            _keep_owner(tmp, info)
            os.chmod(tmp, info.st_mode & 0o7777)  # after chown, which clears the set-user-ID bit
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        _fsync_directory(directory)


def _create_temporary(directory: str, name: str) -> tuple[int, str]:
    """(descriptor, path) of a new file `.NAME.tileir<pid>.XXXXXXXX.tmp` in `directory`, with the
    mode `open()` gives a new file: 0666 less the umask, which the kernel applies. (mkstemp's
    0600 would make a new output private; reading the umask means setting it, which races
    with the threads of a server that create files meanwhile.)"""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".{name}.tileir{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue  # another writer's name: draw again
    raise FileExistsError(f"no free temporary file name beside '{name}' in '{directory}'")


def _write_content(f: BinaryIO, text: str | bytes | Callable[[BinaryIO], object]) -> None:
    if isinstance(text, str):
        f.write(text.encode("utf-8"))
    elif isinstance(text, bytes | bytearray | memoryview):
        f.write(text)
    else:
        text(f)
    f.flush()  # a full disk or device (/dev/full) fails here, not silently at close


def _rewrite_in_place(target: str, tmp: str) -> None:
    """Copy the complete temporary file `tmp` over the hard-linked `target`, then remove `tmp`.
    `tmp` is removed first: it proved the content fits, and its blocks are then free for the
    copy. The target is overwritten and then cut to length (not truncated first), so a
    failure leaves the old content, partly overwritten, rather than an empty file."""
    with open(tmp, "rb") as src:
        os.unlink(tmp)
        with open(target, "r+b") as dst:
            while block := src.read(1 << 20):
                dst.write(block)
            dst.truncate()
            dst.flush()
            os.fsync(dst.fileno())


def _keep_owner(tmp: str, info: os.stat_result) -> None:
    """Give `tmp` the replaced file's owner and group: root can; others can keep a group they
    belong to; otherwise the new file is theirs, as after any editor's save."""
    mine = os.stat(tmp)
    if (mine.st_uid, mine.st_gid) == (info.st_uid, info.st_gid) or not hasattr(os, "chown"):
        return
    for uid, gid in ((info.st_uid, info.st_gid), (-1, info.st_gid)):
        try:
            os.chown(tmp, uid, gid)
            return
        except OSError:
            continue


# A temporary file of write_atomic: `.NAME.tileir<pid>.XXXXXXXX.tmp`, and the `.NAME.XXXXXXXX.tmp`
# of earlier versions (mkstemp's eight characters).
_TEMPORARY = re.compile(r"(?:tileir(\d+)\.)?[a-z0-9_]{8}\.tmp\Z")
STALE_TEMPORARY_SECONDS = 60  # a live write keeps touching its file; one idle this long is not live


def _remove_stale_temporaries(directory: str, name: str) -> None:
    """Remove `.NAME.*.tmp` files a killed tileir left in `directory`."""
    remove_left_behind(directory, f".{name}.", _TEMPORARY)


def remove_left_behind(
    directory: str,
    prefix: str,
    pattern: re.Pattern[str],
    *,
    directories: bool = False,
    stale: float = STALE_TEMPORARY_SECONDS,
) -> None:
    """Remove the temporary files (with `directories`: directories) that tileir processes left
    in `directory`: ours by their name, `prefix` then what `pattern` matches (its group 1: the
    process's id, where the name carries one), and left behind: this user's, untouched for
    `stale` seconds, and not of a process still running here."""
    try:
        entries = [e for e in os.scandir(directory) if e.name.startswith(prefix)]
    except OSError:
        return
    now = time.time()
    for entry in entries:
        m = pattern.match(entry.name, len(prefix))
        if m is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not (stat.S_ISDIR if directories else stat.S_ISREG)(info.st_mode):
                continue
            if now - info.st_mtime < stale:
                continue
            if hasattr(os, "getuid") and info.st_uid != os.getuid():
                continue  # someone else's
            if m.group(1) is not None and _process_alive(int(m.group(1))):
                continue
            if directories:
                import shutil

                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            continue


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):
        return True  # exists (another user's: EPERM), or cannot tell: keep the file
    return True


def _fsync_directory(directory: str) -> None:
    try:  # make the rename itself durable; not possible everywhere, and not fatal
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
