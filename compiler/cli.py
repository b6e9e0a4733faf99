"""The `tileir` command line.

    tileir check FILE...                     parse and verify files, report diagnostics
    tileir fmt [--check | -i] FILE...        print the canonical form
    tileir opt [FILE|-] [-o OUT] [...]       a `cuda-tile-opt` / `mlir-opt` look-alike
    tileir run FILE --grid X[,Y[,Z]] --arg SPEC... [--backend auto|cpu|triton-interpret|...]   run a kernel on
                                             the CPU interpreter, or lowered to Triton under Triton's interpreter
    tileir bench FILE --grid ... --arg ... [--backend cpu,triton-interpret] [--repeat N]   time a kernel per backend
    tileir compile FILE [-k K] [--arch sm_90] [--emit ptx|...] [-o OUT]   compile a kernel through Triton
    tileir asm FILE.tileir [-o OUT] [--bytecode-version V]   write Tile IR bytecode
    tileir disasm FILE.tileirbc [-g]         print bytecode as text, like tileirdisasm
    tileir translate [FILE] -mlir-to-cudatilebc | -cudatilebc-to-mlir | ...   a cuda-tile-translate look-alike
    tileir layout FILE [--value NAME | --line N] [--extent DIM=N ...] [--svg OUT.svg]   index spaces of views

`check` and `fmt` take bytecode files too (told by their magic number, not their suffix).

Exit status: 0 success; 1 the input has errors (or `fmt --check` found a file to reformat);
2 bad usage or an unreadable file; 3 an internal error (a bug: please report it).

Bad input never produces a Python traceback: the core returns diagnostics, and everything
else is caught here and turned into one line on stderr. Set `TILEIR_TRACEBACK=1` to see the
traceback of an internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:  # the core is imported lazily so that `tileir --help` stays fast
    from typing import BinaryIO, NoReturn, TextIO

    from compiler.ir.diagnostics import Diagnostic

PROG = "tileir"
EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

ISSUES_URL = "the project's issue tracker"

# Where `tileir run` runs a kernel: compiler.runtime.BACKENDS, repeated here so that `--help`
# need not import the runtime (a test keeps the two equal).
BACKENDS = ("auto", "cpu", "triton-interpret", "triton", "tileiras")
# compiler.interp.DEFAULT_MAX_STEPS (the --max-steps default), repeated for the same reason.
DEFAULT_MAX_STEPS = 1_000_000


class CliError(Exception):
    """A user-facing error: one line on stderr and a non-zero exit status."""

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


class _ArgparseExit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports errors in one line and never calls `sys.exit` itself."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        raise _ArgparseExit(EXIT_USAGE)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _ArgparseExit(status)


# --------------------------------------------------------------------------------------------
# Input and output


# Plain classes, not dataclasses: importing `dataclasses` costs every command's start-up as
# much as the rest of the command line module (compiler/ir/frozen.py says more).


class _Input:
    __slots__ = ("name", "text", "path", "bytecode")

    def __init__(self, name: str, text: str, path: str | None, bytecode: bytes | None = None) -> None:
        self.name = name  # as shown in diagnostics
        self.text = text  # empty for bytecode
        self.path = path  # None for stdin
        self.bytecode = bytecode  # the file's bytes when it is Tile IR bytecode


def _decode(data: bytes, name: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"cannot read '{name}': not valid UTF-8 (byte {exc.start}: {data[exc.start]:#04x})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def _read_bytes(path: str) -> tuple[str, bytes, str | None]:
    """(name as diagnostics show it, contents, path or None for stdin) of a file or `-`, at
    most compiler.ir.files.DEFAULT_LIMIT bytes (`tileir check /dev/zero` fails, not fills
    memory)."""
    from compiler.ir.files import DEFAULT_LIMIT, InputError, read_file, read_stream, too_large

    hint = " (is it the right file?)"
    try:
        if path != "-":
            return path, read_file(path, hint=hint), path
        stream = sys.stdin
        if stream is None or getattr(stream, "closed", False):
            raise CliError("cannot read '<stdin>': standard input is closed")
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            return "<stdin>", read_stream(buffer, "<stdin>", hint=hint), None
        data = stream.read(DEFAULT_LIMIT + 1).encode("utf-8")  # a text-only stdin (tests, notebooks)
        if len(data) > DEFAULT_LIMIT:
            raise too_large("<stdin>", None, DEFAULT_LIMIT, hint)
        return "<stdin>", data, None
    except InputError as exc:
        raise CliError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot read '<stdin>': {exc}") from None


def _read_input(path: str, allow_bytecode: bool = False) -> _Input:
    """A text file (or `-`). With `allow_bytecode`, Tile IR bytecode (told by its magic
    number, whatever the file is called) is returned undecoded in `bytecode`."""
    name, data, real_path = _read_bytes(path)
    if allow_bytecode:
        from compiler.bytecode import is_bytecode

        if is_bytecode(data):
            return _Input(name, "", real_path, data)
        try:
            return _Input(name, _decode(data, name), real_path)
        except CliError as exc:
            raise CliError(f"{exc} and not Tile IR bytecode (no bytecode magic number)") from None
    return _Input(name, _decode(data, name), real_path)


def _utf8(text: str) -> bytes:
    """UTF-8 bytes of text that may hold a file name's undecodable bytes (Python decodes
    them to surrogates: `surrogateescape` gives the very bytes back); any other lone
    surrogate written as an escape."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def _write(stream: TextIO, text: str) -> None:
    buffer = getattr(stream, "buffer", None)
    if isinstance(buffer, io.RawIOBase):
        # Unbuffered (PYTHONUNBUFFERED=1, python -u): the text layer writes to the raw file and
        # ignores a short write, so a full disk would cut the output without an error.
        stream.flush()
        try:
            data = text.encode(stream.encoding or "utf-8")
        except (UnicodeEncodeError, LookupError):
            data = _utf8(text)
        _write_fully(buffer, data)
        return
    try:
        stream.write(text)
    except UnicodeEncodeError:
        # A terminal or pipe whose encoding cannot hold the text (or a file name's undecodable
        # bytes): send UTF-8 bytes instead.
        stream.flush()
        if buffer is None:
            stream.write(text.encode("ascii", "backslashreplace").decode("ascii"))
        else:
            _write_fully(buffer, _utf8(text))
            buffer.flush()


def _write_fully(buffer, data: bytes) -> None:
    """Write all of `data` to a binary stream: a raw one may take only part of it per call
    (the rest of a disk), and the next call then reports why (ENOSPC, EFBIG) as an OSError."""
    import errno

    view = memoryview(data)
    while view:
        written = buffer.write(view)
        if written is None:  # a non-blocking stream that is full
            raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _out(text: str) -> None:
    try:
        _write(sys.stdout, text)
    except BrokenPipeError:
        raise  # the reader went away: main() handles it
    except OSError as exc:
        raise _stdout_failed(exc) from None


def _flush_stdout() -> None:
    """Flush standard output, so that a full disk is reported here rather than lost at exit."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        raise _stdout_failed(exc) from None


def _stdout_failed(exc: Exception) -> CliError:
    """The error for output that could not be written (`> /dev/full`, a full disk). What is
    still buffered is dropped, by pointing standard output at the null device: flushing it
    again at exit would fail again and print a traceback-like warning."""
    _silence_stdout()
    reason = getattr(exc, "strerror", None) or str(exc)
    return CliError(f"cannot write to standard output: {reason}")


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _err(text: str) -> None:
    try:
        _write(sys.stderr, text if text.endswith("\n") else text + "\n")
    except OSError:
        pass  # nowhere left to report it; the exit status still says what happened


def write_atomic(path: str, text: str | bytes | Callable[[BinaryIO], object]) -> None:
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
    fails before the file is touched."""
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
    if info is None:
        # A new file gets the mode `open()` would give it, not mkstemp's 0600.
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    else:
        mode = info.st_mode & 0o7777
    import tempfile  # only when writing a file: its import (random, shutil) costs every start-up

    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.tileir{os.getpid()}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            _write_content(f, text)
            f.flush()
            os.fsync(f.fileno())
        if info is not None and info.st_nlink > 1:
            _rewrite_in_place(target, tmp)
            return
        if info is not None:
            _keep_owner(tmp, info)
        os.chmod(tmp, mode)  # after chown, which clears the set-user-ID bit
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(directory)


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
    """Remove `.NAME.*.tmp` files a killed tileir left in `directory`: ours by their name, not
    written for a minute, and (when the name carries one) not of a process still running here."""
    prefix = f".{name}."
    try:
        entries = [e for e in os.scandir(directory) if e.name.startswith(prefix)]
    except OSError:
        return
    now = time.time()
    for entry in entries:
        m = _TEMPORARY.match(entry.name, len(prefix))
        if m is None:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or now - info.st_mtime < STALE_TEMPORARY_SECONDS:
                continue
            if hasattr(os, "getuid") and info.st_uid != os.getuid():
                continue  # someone else's
            if m.group(1) is not None and _process_alive(int(m.group(1))):
                continue
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


# --------------------------------------------------------------------------------------------
# Diagnostics


class _Tally:
    __slots__ = ("errors", "warnings", "status")

    def __init__(self) -> None:
        self.errors = 0
        self.warnings = 0
        self.status = EXIT_OK  # the worst exit status so far

    def worsen(self, status: int) -> None:
        self.status = max(self.status, status)


def _report(diagnostics: Sequence[Diagnostic], tally: _Tally, snippet: bool = True, name: str | None = None) -> bool:
    """Print diagnostics to stderr; return True if any is an error. `name` is the file that
    diagnostics without a source (a module read from bytecode has no text) are about."""
    from compiler.ir.diagnostics import Severity

    has_error = False
    for diag in diagnostics:
        if diag.source is None and name is not None:
            _err(f"{name}: {diag.severity.label}: {diag.message}")
        else:
            _err(diag.format(with_snippet=snippet))
        if diag.is_error:
            has_error = True
            tally.errors += 1
        elif diag.severity == Severity.WARNING:
            tally.warnings += 1
    return has_error


def _verify_options(args: argparse.Namespace, keep_going: bool = True):
    from compiler.verify import VerifyOptions
    from compiler.verify.versions import SUPPORTED_VERSIONS

    target = getattr(args, "target_version", None)
    if target is not None and target not in SUPPORTED_VERSIONS:
        raise CliError(
            f"--target-version {target}: not a bytecode version tileir knows; "
            f"use one of {', '.join(SUPPORTED_VERSIONS)}"
        )

    hints = "silent"
    if getattr(args, "Werr_hints", False):
        hints = "error"
    elif getattr(args, "Wunsupported_hints", False):
        hints = "warn"
    return VerifyOptions(
        keep_going=keep_going, target_version=getattr(args, "target_version", None), unsupported_hints=hints
    )


def _parse_and_verify(text: str, name: str, args: argparse.Namespace, keep_going: bool = True, verify: bool = True):
    """Parse `text`; verify it when it parsed cleanly. Returns (result, diagnostics)."""
    from compiler.text import ParseOptions, parse
    from compiler.verify import check_text

    if not verify or getattr(args, "no_verify", False):
        result = parse(text, name, ParseOptions(allow_unregistered=args.allow_unregistered_dialect))
        return result, list(result.diagnostics)
    return check_text(text, name, _verify_options(args, keep_going), args.allow_unregistered_dialect)


class _Decoded:
    """A module read from bytecode, standing in for a ParseResult."""

    __slots__ = ("module",)

    def __init__(self, module: object) -> None:
        self.module = module


def _parsed_files(args: argparse.Namespace, tally: _Tally, verify: bool = True, in_parts=None):
    """Each file of `args.files` read, parsed (or decoded, for bytecode) and (with `verify`)
    verified, its diagnostics printed, as (input, result, has_errors); a file that cannot be
    read is reported and skipped, as is bytecode that cannot be decoded.

    `in_parts(text, name)`: the command's answer for a big text found in several processes
    (`compiler.text.parts`), given as the result when it has one (it has none when the
    text has anything to report: then the text is parsed here)."""
    for path in args.files:
        try:
            src = _read_input(path, allow_bytecode=True)
        except CliError as exc:
            _err(f"{PROG}: error: {exc}")
            tally.worsen(exc.status)
            continue
        if src.bytecode is not None:
            module = _decode_bytecode(src.bytecode, src.name, tally)
            if module is None:
                tally.worsen(EXIT_ERRORS)
                continue
            result = _Decoded(module)
            diagnostics = _verify_module(module, args) if verify and not getattr(args, "no_verify", False) else []
        else:
            answer = in_parts(src.text, src.name) if in_parts is not None else None
            if answer is not None:
                yield src, answer, False
                continue
            result, diagnostics = _parse_and_verify(src.text, src.name, args, verify=verify)
        has_errors = _report(diagnostics, tally, name=src.name)
        if has_errors:
            tally.worsen(EXIT_ERRORS)
        yield src, result, has_errors


def _decode_bytecode(data: bytes, name: str, tally: _Tally | None = None):
    """The module of a bytecode file, or None after printing `NAME: error: at byte N (0xN): ...`."""
    from compiler.bytecode import BytecodeError, read_bytecode

    try:
        return read_bytecode(data)
    except BytecodeError as exc:
        _err(f"{name}: error: {exc}")
        if tally is not None:
            tally.errors += 1
        return None


def _verify_module(module, args: argparse.Namespace, keep_going: bool = True) -> list[Diagnostic]:
    from compiler.verify import verify

    return verify(module, _verify_options(args, keep_going))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# --------------------------------------------------------------------------------------------
# tileir check


def _cmd_check(args: argparse.Namespace) -> int:
    from compiler.verify import check_text_in_parts

    def in_parts(text: str, name: str) -> bool | None:
        if getattr(args, "no_verify", False):
            return None
        return check_text_in_parts(text, name, _verify_options(args), args.allow_unregistered_dialect)

    tally = _Tally()
    for _ in _parsed_files(args, tally, in_parts=in_parts):
        pass
    status = tally.status
    if not args.quiet:
        n = len(args.files)
        if tally.errors or tally.warnings:
            _err(
                f"{PROG} check: {_plural(tally.errors, 'error')}, "
                f"{_plural(tally.warnings, 'warning')} in {_plural(n, 'file')}"
            )
        elif status == EXIT_OK:
            _out(f"{PROG} check: {_plural(n, 'file')} ok\n")
    return status


# --------------------------------------------------------------------------------------------
# tileir fmt


def _cmd_fmt(args: argparse.Namespace) -> int:
    from compiler.text import PrintOptions, parts, print_module

    if args.check and args.in_place:
        raise CliError("--check and -i cannot be used together")
    if args.in_place and "-" in args.files:
        raise CliError("-i cannot rewrite standard input")
    print_options = PrintOptions(keep_comments=True)
    tally = _Tally()
    would_change: list[str] = []
    rewritten: list[str] = []

    # Like any formatter, fmt needs the syntax right, not the semantics: `tileir check` verifies.
    def in_parts(text: str, name: str) -> str | None:
        return parts.format_text(text, name, print_options, args.allow_unregistered_dialect)

    for src, result, has_errors in _parsed_files(args, tally, verify=False, in_parts=in_parts):
        if has_errors:
            _err(f"{PROG} fmt: '{src.name}' has errors; not formatted")
            continue
        if src.bytecode is not None and (args.check or args.in_place):
            # Bytecode has no text to compare with or to rewrite: only printing it makes sense.
            option = "--check" if args.check else "-i"
            _err(
                f"{PROG}: error: fmt {option}: '{src.name}' is Tile IR bytecode, not text; "
                f"print it with `{PROG} fmt {src.name}` or `{PROG} disasm {src.name}`"
            )
            tally.worsen(EXIT_USAGE)
            continue
        formatted = result if isinstance(result, str) else print_module(result.module, print_options)
        if args.check:
            if formatted != src.text:
                would_change.append(src.name)
                _err(f"would reformat {src.name}")
                tally.worsen(EXIT_ERRORS)
        elif args.in_place:
            assert src.path is not None
            if formatted != src.text:
                try:
                    write_atomic(src.path, formatted)
                except OSError as exc:
                    _err(f"{PROG}: error: cannot write '{src.path}': {exc.strerror or exc}")
                    tally.worsen(EXIT_USAGE)
                    continue
                rewritten.append(src.name)
        else:
            _out(formatted)
    status = tally.status
    if args.check and not args.quiet:
        n = len(args.files)
        if would_change:
            _err(f"{_plural(len(would_change), 'file')} would be reformatted")
        elif status == EXIT_OK:
            _err(f"{_plural(n, 'file')} already formatted")
    if args.in_place and not args.quiet and rewritten:
        _err(f"{_plural(len(rewritten), 'file')} reformatted")
    return status


# --------------------------------------------------------------------------------------------
# tileir opt


def _cmd_opt(args: argparse.Namespace) -> int:
    src = _read_input(args.file, allow_bytecode=True)
    from compiler.ir.diagnostics import has_errors
    from compiler.ir.source import SourceFile
    from compiler.text import PrintOptions, print_module
    from compiler.verify.expected import check_expected

    print_options = PrintOptions(
        generic=args.mlir_print_op_generic,
        debuginfo=args.mlir_print_debuginfo,
        keep_comments=False,
        source_names=not args.default_names,
    )
    _rename_options(args.test_debuginfo_update_symbol_name)  # bad options fail before any work
    tally = _Tally()
    outputs: list[str] = []
    status = EXIT_OK
    if src.bytecode is not None:
        # Bytecode is one module and has no expected-* comments: --split-input-file has
        # nothing to split, and -verify-diagnostics nothing to check against.
        if args.verify_diagnostics:
            raise CliError(f"-verify-diagnostics: '{src.name}' is Tile IR bytecode, which has no expected-* comments")
        module = _decode_bytecode(src.bytecode, src.name, tally)
        if module is None:
            return EXIT_ERRORS
        result, diagnostics = _opt_passes(_Decoded(module), _verify_module(module, args, keep_going=False), args)
        if _report(diagnostics, tally, name=src.name):
            status = EXIT_ERRORS
        else:
            outputs.append(print_module(result.module, print_options))
    whole = SourceFile(src.text, src.name)
    for chunk, offset in _chunks(src.text, whole, args.split_input_file) if src.bytecode is None else ():
        # Like cuda-tile-opt, stop each kernel at its first error.
        result, diagnostics = opt_diagnostics(chunk, src.name, args)
        if args.verify_diagnostics:
            # The diagnostics are the expected output: only mismatches are reported.
            report = check_expected(diagnostics, SourceFile(chunk, src.name))
            if _report([d.moved(offset, whole) for d in report.complaints], tally):
                status = EXIT_ERRORS
            continue
        if _report([d.moved(offset, whole) for d in diagnostics], tally):
            status = EXIT_ERRORS
        if has_errors(diagnostics):
            continue
        outputs.append(print_module(result.module, print_options))
    if args.verify_diagnostics:
        return status
    if not outputs and status != EXIT_OK:
        return status  # like mlir-opt: no output at all when nothing could be parsed
    text = "// -----\n".join(_ensure_newline(o) for o in outputs)
    if args.output in (None, "-"):
        _out(text)
    else:
        try:
            write_atomic(args.output, text)
        except OSError as exc:
            raise CliError(f"cannot write '{args.output}': {exc.strerror or exc}") from None
    return status


def _chunks(text: str, whole, split: bool):
    """(chunk, offset of its first character in `text`) of each `// -----` chunk (with
    `split`), or of the whole text. Each chunk is parsed on its own and its diagnostics moved
    onto `whole` (the SourceFile of `text`) with `_moved`: padding every chunk with the lines
    before it, to number them as in the file, made 32,000 chunks quadratic (minutes)."""
    from compiler.text import split_input

    if not split:
        return [(text, 0)]
    return [(chunk, whole.offset(line, 0)) for chunk, line in split_input(text)]


def _opt_passes(result, diagnostics: list[Diagnostic], args: argparse.Namespace):
    """The pass `tileir opt` was asked for (a symbol rename, canonicalization) on a module
    that verified; returns (result, diagnostics)."""
    from compiler.ir.diagnostics import has_errors

    rename = _rename_options(args.test_debuginfo_update_symbol_name)
    if rename is not None and not has_errors(diagnostics):
        diagnostics += _rename_symbol(result.module, rename)
    if getattr(args, "canonicalize", False) and not has_errors(diagnostics):
        from compiler.transform import canonicalize

        canonicalize(result.module)
    return result, diagnostics


def opt_diagnostics(text: str, name: str, args: argparse.Namespace):
    """What `tileir opt` does to one module (one chunk with --split-input-file): parse,
    verify stopping each kernel at its first error as cuda-tile-opt does, run the requested
    pass. Returns (parse result, diagnostics). The conformance harness calls this too."""
    result, diagnostics = _parse_and_verify(text, name, args, keep_going=False)
    return _opt_passes(result, diagnostics, args)


def _rename_options(spec: str | None) -> dict[str, str] | None:
    """`symbol-to-rename=a::b scope=a new-name=c update-uses=true` as a dict, checked."""
    if spec is None:
        return None
    options: dict[str, str] = {}
    for item in spec.split():
        key, sep, value = item.partition("=")
        if not sep or key not in ("symbol-to-rename", "scope", "new-name", "update-uses"):
            raise CliError(
                f"--test-debuginfo-update-symbol-name: cannot use '{item}'; expected "
                "symbol-to-rename=A::B [scope=A] new-name=C [update-uses=true|false]"
            )
        options[key] = value
    for required in ("symbol-to-rename", "new-name"):
        if not options.get(required):
            raise CliError(f"--test-debuginfo-update-symbol-name: '{required}=' is required")
    if options.get("update-uses", "false") not in ("true", "false", "1", "0"):
        raise CliError("--test-debuginfo-update-symbol-name: update-uses must be true or false")
    return options


def _rename_symbol(module, options: dict[str, str]) -> list[Diagnostic]:
    """The `--test-debuginfo-update-symbol-name` pass of cuda-tile-opt, on one module."""
    from compiler.ir.diagnostics import Diagnostic, Severity
    from compiler.ir.source import Span
    from compiler.ir.symbols import lookup_symbol_path, rename_symbol

    def missing(path: str) -> list[Diagnostic]:
        ref = "::".join(f"@{p}" for p in path.split("::"))
        message = f"could not find symbol op with name '{ref}'"
        return [Diagnostic(Severity.ERROR, "rename-symbol", message, Span(0, 0), module.source)]

    scope = None
    if options.get("scope"):
        scope = lookup_symbol_path(module, options["scope"].split("::"))
        if scope is None:
            return missing(options["scope"])
    target = lookup_symbol_path(module, options["symbol-to-rename"].split("::"))
    if target is None:
        return missing(options["symbol-to-rename"])
    update = options.get("update-uses", "false") in ("true", "1")
    problem = rename_symbol(module, target, options["new-name"], scope, update_uses=update)
    return [problem] if problem is not None else []


def _ensure_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


# --------------------------------------------------------------------------------------------
# Bytecode: tileir asm, tileir disasm, tileir translate

BYTECODE_SUFFIX = ".tileirbc"


def _bytecode_version(text: str | None, option: str, test_versions: bool = False):
    """The version `text` names (default: the current one), or a usage error that lists the
    versions that can be written."""
    from compiler.bytecode import DEFAULT_WRITE, SUPPORTED, TEST_VERSIONS, parse_version, version_text

    if text is None:
        return DEFAULT_WRITE
    allowed = SUPPORTED + (TEST_VERSIONS if test_versions else ())
    version = parse_version(text)
    if version not in allowed:
        # cuda-tile-translate's wording (test/Bytecode/unsupportedVersionTest.mlir checks it).
        supported = f"[{version_text(SUPPORTED[0])} - {version_text(SUPPORTED[-1])}]"
        raise CliError(f"for the {option} option: Invalid argument '{text}': the supported versions are {supported}")
    return version


def _write_output(path: str, data: str | bytes) -> None:
    """Write to `path` atomically, or to standard output for `-`."""
    if path == "-":
        if isinstance(data, str):
            _out(data)
            return
        _flush_stdout()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:
            raise CliError("cannot write bytecode to standard output: it only takes text")
        try:
            _write_fully(buffer, data)
            buffer.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _stdout_failed(exc) from None
        return
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise CliError(f"cannot write '{path}': {exc.strerror or exc}") from None


def _encode(module, version, tally: _Tally, name: str) -> bytes | None:
    """`module` as bytecode, or None after printing why it cannot be written."""
    from compiler.bytecode import BytecodeWriteError, write_bytecode

    try:
        return write_bytecode(module, version)
    except BytecodeWriteError as exc:
        _report(exc.diagnostics, tally, name=name)
        return None


def _cmd_asm(args: argparse.Namespace) -> int:
    version = _bytecode_version(args.bytecode_version, "--bytecode-version")
    if args.output is None and args.file == "-":
        raise CliError("asm from standard input: name the output with -o (-o - for standard output)")
    src = _read_input(args.file, allow_bytecode=True)
    if src.bytecode is not None:
        shown = "-" if src.path is None else src.name  # a command to run names stdin `-`
        raise CliError(f"'{src.name}' is already Tile IR bytecode (`{PROG} disasm {shown}` prints it)")
    if args.output == "-" and _is_terminal(sys.stdout):
        raise CliError("asm writes bytecode, a binary file: name it with -o OUT (or redirect standard output)")
    output = args.output
    if output is None:
        assert src.path is not None
        output = os.path.splitext(src.path)[0] + BYTECODE_SUFFIX
        if os.path.abspath(output) == os.path.abspath(src.path):
            raise CliError(f"'{src.path}' already ends in {BYTECODE_SUFFIX}: name the output with -o")
    tally = _Tally()
    result, diagnostics = _parse_and_verify(src.text, src.name, args)
    if _report(diagnostics, tally):
        _err(f"{PROG} asm: '{src.name}' has errors; no bytecode written")
        return EXIT_ERRORS
    data = _encode(result.module, version, tally, src.name)
    if data is None:
        _err(f"{PROG} asm: '{src.name}' cannot be written as bytecode {args.bytecode_version or ''}".rstrip())
        return EXIT_ERRORS
    _write_output(output, data)
    return EXIT_OK


def _cmd_disasm(args: argparse.Namespace) -> int:
    from compiler.bytecode.disasm import disassembly, disassembly_in_parts

    name, data, _ = _read_bytes(args.file)
    if not _bytecode_or_say(name, data):
        return EXIT_ERRORS
    # A big file in several processes (without debug info, whose aliases span the kernels);
    # one that cannot be read that way is read here, which says why.
    text = None if args.print_debug_info else disassembly_in_parts(data)
    if text is None:
        module = _decode_bytecode(data, name)
        if module is None:
            return EXIT_ERRORS
        text = disassembly(module, debuginfo=args.print_debug_info)
    _write_output(args.output or "-", text)
    return EXIT_OK


def _read_bytecode_file(path: str):
    """The module of a bytecode file (or `-`), or None after printing why it cannot be read."""
    name, data, _ = _read_bytes(path)
    if not _bytecode_or_say(name, data):
        return None
    return _decode_bytecode(data, name)


def _bytecode_or_say(name: str, data: bytes) -> bool:
    """False after saying so when `data` is a text file: the user is told that rather than
    what is wrong with its first byte."""
    from compiler.bytecode import is_bytecode
    from compiler.bytecode.disasm import looks_like_text

    if not is_bytecode(data) and looks_like_text(data):
        _err(
            f"{name}: error: this is a text file, not Tile IR bytecode (which starts with the bytes "
            f"7f 54 69 6c 65 49 52 00); `{PROG} check` and `{PROG} asm` take text"
        )
        return False
    return True


def _cmd_translate(args: argparse.Namespace) -> int:
    from compiler.bytecode import SUPPORTED, TEST_VERSIONS, version_text

    if args.list_versions:
        _out("".join(version_text(v) + "\n" for v in SUPPORTED + TEST_VERSIONS))
        return EXIT_OK
    if args.mode is None:
        raise CliError(
            "translate: choose a translation: -mlir-to-cudatilebc, -cudatilebc-to-mlir or -test-cudatile-roundtrip"
        )
    version = _bytecode_version(args.bytecode_version, "-bytecode-version", test_versions=True)
    if args.mode == "cudatilebc-to-mlir":
        return _translate_from_bytecode(args)
    return _translate_text(args, version)


def _translate_from_bytecode(args: argparse.Namespace) -> int:
    from compiler.text import PrintOptions, print_module

    module = _read_bytecode_file(args.file)
    if module is None:
        return EXIT_ERRORS
    text = print_module(module, PrintOptions(debuginfo=args.mlir_print_debuginfo, keep_comments=False))
    _write_output(args.output or "-", text)
    return EXIT_OK


def _translate_diagnostics(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """NVIDIA's writer reports a type newer than the target at an unknown location
    (test/Bytecode/versioning/new_types.mlir expects `expected-error@unknown`)."""
    from compiler.ir.diagnostics import Diagnostic as Diag

    return [Diag(d.severity, d.code, d.message, d.span, None) if d.code == "version-type" else d for d in diagnostics]


def _translate_text(args: argparse.Namespace, version) -> int:
    """-mlir-to-cudatilebc and -test-cudatile-roundtrip, chunk by chunk with -split-input-file."""
    from compiler.bytecode import BytecodeError, BytecodeWriteError, read_bytecode, write_bytecode
    from compiler.ir.diagnostics import Diagnostic as Diag
    from compiler.ir.diagnostics import Severity, has_errors
    from compiler.ir.source import SourceFile, Span
    from compiler.text import PrintOptions, print_module
    from compiler.verify.expected import check_expected

    src = _read_input(args.file, allow_bytecode=True)
    if src.bytecode is not None:
        raise CliError(f"'{src.name}' is Tile IR bytecode, not text: read it with -cudatilebc-to-mlir")
    whole = SourceFile(src.text, src.name)
    print_options = PrintOptions(debuginfo=args.mlir_print_debuginfo, keep_comments=False)
    tally = _Tally()
    status = EXIT_OK
    texts: list[str] = []  # -test-cudatile-roundtrip: each chunk's module, read back
    blobs: list[bytes] = []  # -mlir-to-cudatilebc: each chunk's bytecode, written one after the other
    for chunk, offset in _chunks(src.text, whole, args.split_input_file):
        result, diagnostics = _parse_and_verify(chunk, src.name, args, keep_going=False)
        if not has_errors(diagnostics):
            try:
                data = write_bytecode(result.module, version)
            except BytecodeWriteError as exc:
                diagnostics += _translate_diagnostics(exc.diagnostics)
            else:
                if args.mode != "test-cudatile-roundtrip":
                    blobs.append(data)
                else:
                    try:
                        texts.append(print_module(read_bytecode(data), print_options))
                    except BytecodeError as exc:
                        # Our writer wrote what our reader refuses: a bug, but report it as data.
                        message = f"the bytecode written does not read back: {exc}"
                        diagnostics.append(Diag(Severity.ERROR, "bytecode", message, Span(0, 0), None))
        if args.verify_diagnostics:
            # The diagnostics are the expected output: only mismatches are reported.
            report = check_expected(diagnostics, SourceFile(chunk, src.name))
            if _report([d.moved(offset, whole) for d in report.complaints], tally, name=src.name):
                status = EXIT_ERRORS
        elif _report([d.moved(offset, whole) for d in diagnostics], tally, name=src.name):
            status = EXIT_ERRORS
    if texts:
        _write_output(args.output or "-", "// -----\n".join(_ensure_newline(t) for t in texts))
    elif blobs:
        # Like cuda-tile-translate, every chunk's output goes to the one output, in order.
        _write_output(args.output or "-", b"".join(blobs))
    return status


# --------------------------------------------------------------------------------------------
# tileir run


def _load_kernel(args: argparse.Namespace, command: str, not_done: str, path: str | None = None):
    """(module, entry) of `path` (default `args.file`; text or bytecode, or `-`) and
    `args.kernel` (None: the only one), or None after printing the module's diagnostics and
    `tileir COMMAND: 'FILE' has errors; NOT_DONE`. An unreadable file or an unknown kernel is
    a usage error."""
    from compiler.modules import LaunchError, find_kernel, load_module

    path = args.file if path is None else path
    # Read here, not by load_module, so that a device or a pipe gets the same size cap as
    # every other command's input (`tileir run /dev/zero` is an error, not a MemoryError).
    src = _read_input(path, allow_bytecode=True)
    try:
        if src.bytecode is not None:
            module = load_module(src.bytecode, name=src.name)
        else:
            # load_module takes a one-line string without `{` for a path: a newline says text.
            module = load_module(src.text if "\n" in src.text else src.text + "\n", name=src.name)
        entry = find_kernel(module, args.kernel)
    except LaunchError as exc:
        if exc.diagnostics:
            _report(exc.diagnostics, _Tally(), name="<stdin>" if path == "-" else path)
            _err(f"{PROG} {command}: '{src.name}' has errors; {not_done}")
            return None
        if exc.kind == "kernel" and args.kernel is None:
            raise CliError(f"{exc.message} with -k") from None
        if exc.kind == "no kernel":
            raise CliError(f"{src.name}: {exc.message}; {not_done}") from None
        raise CliError(exc.message) from None
    return module, entry


def _lowering_error(report: str) -> str:
    """A `LowerError`'s report as one diagnostic line: `file:line:col: error: <op>: message
    [target sm_90]` as it is, `tileir: error: message` when it names no place."""
    return f"{PROG}: {report}" if report.startswith("error: ") else report


def _require_cache(what: str) -> None:
    """A usage error, before any work, where the compile cache (which every compile writes
    its generated source to) cannot be used: $TILEIR_CACHE_DIR naming a file, no rights."""
    from compiler.lower import LowerError
    from compiler.lower.build import cache_root

    try:
        cache_root()
    except LowerError as exc:
        raise CliError(f"{what}: {exc.message}") from None


def _require_backend(backend: str) -> tuple[str, str]:
    """(the backend to run on, why `auto` chose it or ""): a usage error when it cannot run
    here (a GPU backend without a GPU or launcher; Triton, and torch for its interpreter, not
    importable)."""
    from compiler.runtime import LaunchError, resolve_backend

    try:
        backend, note = resolve_backend(backend)
    except LaunchError as exc:
        raise CliError(f"--backend {backend}: {exc.message}") from None
    if backend == "cpu":
        return backend, note
    import importlib.util

    from compiler.lower import LowerError
    from compiler.lower.build import require_triton

    try:
        require_triton()
    except LowerError as exc:
        raise CliError(f"--backend {backend}: {exc.message}") from None
    _require_cache(f"--backend {backend}")
    if backend == "triton-interpret" and importlib.util.find_spec("torch") is None:
        raise CliError(
            f"--backend {backend}: Triton's interpreter needs PyTorch (pip install torch; the CPU build is enough)"
        )
    return backend, note


def _arg_checks():
    """The launcher's argument checks, advising as the command line spells an array: every
    array --arg is checked here before the launch, so the launcher's own advice (Python's
    `.astype`) is never the one shown."""
    from compiler.runtime import ArgumentChecks

    class ArgChecks(ArgumentChecks):
        def conversion_advice(self, element, want) -> str:
            return f"give that --arg as ...:{element}, e.g. rand:4000:{element}"

    return ArgChecks()


class _Launchable:
    """What `tileir run` and `tileir bench` parse from the command line: the kernel, its grid and
    the SPECs of its arguments."""

    def __init__(self, module: object, entry: object, grid: tuple, specs: list) -> None:
        self.module = module
        self.entry = entry
        self.grid = grid
        self.specs = specs

    def values(self, seed: int) -> list:
        """The arguments made from the SPECs (rand: from `seed`)."""
        import numpy as np

        from compiler.runtime.argspec import SpecError

        rng = np.random.default_rng(seed)
        try:
            return [spec.make(rng) for spec in self.specs]
        except SpecError as exc:
            raise CliError(str(exc)) from None

    def check_signature(self, args: argparse.Namespace) -> None:
        """Check the SPECs against the kernel's parameters (their number, after --cutile-args;
        an array's dtype; a scalar's value) before any array is made, with the launch's own
        checks and messages: `rand:300000000:i8` for an f32 pointer fails at once, not after
        allocating 300 MB. Only what the launch would refuse on every backend is refused."""
        import numpy as np

        from compiler.ir.types import PointerType, TileType
        from compiler.runtime import LaunchError, check_count
        from compiler.runtime.argspec import SpecError
        from compiler.runtime.cutile import cutile_args

        try:
            placeholders = [spec.placeholder() for spec in self.specs]  # arrays that take no memory
        except SpecError as exc:
            raise CliError(str(exc)) from None
        try:
            params = self.entry.regions[0].blocks[0].arguments
            expanded = cutile_args(*placeholders) if args.cutile_args else placeholders
            check_count(self.entry, expanded, len(placeholders), args.cutile_args)
            checks = _arg_checks()
            for i, (param, arg) in enumerate(zip(params, expanded)):
                t = param.type
                element = t.element if isinstance(t, TileType) else t
                if isinstance(element, PointerType):
                    if isinstance(arg, np.ndarray):
                        checks.check_dtype(checks.where(i, param), element, arg.dtype)
                elif not isinstance(arg, np.ndarray):  # a placeholder's value is not the array's
                    checks.scalar(i, param, element, arg)
        except LaunchError as exc:
            raise CliError(self._message(args, exc)) from None

    def _message(self, args: argparse.Namespace, exc) -> str:
        message = exc.message
        if exc.kind == "count" and not args.cutile_args and any(s.is_array for s in self.specs):
            message += " (with --cutile-args, each array argument is passed as pointer, shape, strides)"
        return message

    def launch(self, args: argparse.Namespace, command: str, values: list, backend: str, options, timed=None):
        """One launch with `values` on `backend` (resolved), or None after printing why it failed
        (a usage error is raised as CliError). `timed` = (warm-up, repeat): timed launches
        instead (`compiler.runtime.benchmark`), a BenchResult."""
        from compiler.interp import InterpError
        from compiler.runtime import LaunchError, benchmark, kernel_name, launch, signature

        name = signature(self.entry).partition("(")[0]
        try:
            kernel = kernel_name(self.entry)
            if timed is not None:
                warmup, repeat = timed
                return benchmark(
                    self.module, kernel, self.grid, values, backend,
                    warmup=warmup, repeat=repeat, cutile=args.cutile_args, options=options,
                )  # fmt: skip
            return launch(self.module, kernel, self.grid, values, backend, cutile=args.cutile_args, options=options)
        except LaunchError as exc:
            if exc.kind == "backend":
                # The lowering cannot express the kernel, or it failed under Triton's interpreter:
                # the report names the op and its place, as the CPU interpreter's errors do.
                _err(_lowering_error(exc.message))
                _err(f"{PROG} {command}: kernel {name} could not run on the {backend} backend")
                return None
            raise CliError(self._message(args, exc)) from None
        except InterpError as exc:
            _err(str(exc))
            if len(exc.details) > 1:  # a failed assert: every failing tile block (at most 100), indented
                _err("".join(f"  {line}\n" for line in exc.details).rstrip("\n"))
            _err(f"{PROG} {command}: kernel {name} failed")
            return None


def _parse_launchable(args: argparse.Namespace, command: str, not_done: str) -> _Launchable | None:
    """The kernel, grid and argument SPECs of `tileir run` / `tileir bench` (None after printing
    the module's diagnostics)."""
    from compiler.runtime.argspec import SpecError, parse_grid, parse_spec

    if args.seed < 0:
        raise CliError(f"--seed {args.seed}: must be 0 or more")
    try:
        specs = [parse_spec(a) for a in args.arg]
        grid = parse_grid(args.grid)
    except SpecError as exc:
        raise CliError(str(exc)) from None
    loaded = _load_kernel(args, command, not_done)
    if loaded is None:
        return None
    target = _Launchable(loaded[0], loaded[1], grid, specs)
    target.check_signature(args)
    return target


def _cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    from compiler.interp import RunOptions
    from compiler.runtime.argspec import SpecError, parse_check, run_check, summarize

    try:
        checks = [parse_check(c) for c in args.check]
    except SpecError as exc:
        raise CliError(str(exc)) from None
    if not checks and (args.rtol is not None or args.atol is not None):
        raise CliError(f"--{'rtol' if args.rtol is not None else 'atol'} is a tolerance of --check; give a --check")
    if args.save is not None:
        _check_save_directory(args.save)  # before the run, which may be long
    backend, note = _require_backend(args.backend)
    target = _parse_launchable(args, "run", "not run")
    if target is None:
        return EXIT_ERRORS
    values = target.values(args.seed)
    before = [v.copy() if isinstance(v, np.ndarray) else v for v in values] if checks else []
    options = RunOptions(check_races=not args.no_race_check, max_steps=args.max_steps, timeout=args.timeout)
    result = target.launch(args, "run", values, backend, options)
    if result is None:
        return EXIT_ERRORS
    if not args.quiet:
        grid_text = "x".join(str(d) for d in result.grid)
        _out(
            f"kernel @{result.kernel}  grid {grid_text} ({_plural(result.num_blocks, 'tile block')})  "
            f"backend {result.backend}  time {result.time:.3f} s{f'  ({note})' if note else ''}\n"
        )
        for i, v in enumerate(values):
            text = summarize(v) if isinstance(v, np.ndarray) else f"scalar {v!r}"
            _out(f"  arg{i}  {text}\n")
    if args.save is not None:
        try:
            if not os.path.isdir(args.save):
                os.mkdir(args.save)  # DIR itself, as --help says; never its parents
            saved = 0
            for i, v in enumerate(values):
                if isinstance(v, np.ndarray):
                    write_atomic(os.path.join(args.save, f"arg{i}.npy"), _npy_writer(v))
                    saved += 1
        except OSError as exc:
            raise CliError(f"cannot write to '{args.save}': {exc.strerror or exc}") from None
        if not args.quiet:
            _out(f"saved {_plural(saved, 'array')} to {args.save}\n")
    status = EXIT_OK
    for check in checks:
        try:
            outcome = run_check(check, before, values, args.rtol, args.atol)
        except SpecError as exc:
            raise CliError(str(exc)) from None
        if outcome.ok:
            if not args.quiet:
                _out(outcome.message + "\n")
        else:
            _err(outcome.message)
            status = EXIT_ERRORS
    return status


def _check_save_directory(path: str) -> None:
    """--save DIR: an existing directory, or a new one in an existing directory. A missing
    parent is an error rather than created: a typo (`--save ouptut/run1`) should not leave
    a tree of directories behind."""
    if os.path.isdir(path):
        return
    if os.path.exists(path):
        raise CliError(f"--save {path}: not a directory")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CliError(f"--save {path}: the directory '{parent}' does not exist (create it first)")


def _npy_writer(array):
    """What write_atomic calls to write `array` as .npy (straight to the file: no copy in memory)."""
    import numpy as np

    return lambda f: np.save(f, array, allow_pickle=False)


# --------------------------------------------------------------------------------------------
# tileir bench


def mma_flops(entry) -> int:
    """Floating-point (or integer) operations of the mmaf/mmai ops of one tile block of `entry`:
    2*M*N*K each (times the batch for 3-d operands), each op counted once, even inside a loop."""
    from compiler.ir.types import TileType

    total = 0
    for op in entry.walk():
        if op.name.removeprefix("cuda_tile.") not in ("mmaf", "mmai") or len(op.operands) < 2:
            continue
        lhs, rhs = op.operands[0].type, op.operands[1].type
        if not (isinstance(lhs, TileType) and isinstance(rhs, TileType)) or len(lhs.shape) < 2:
            continue
        *batch, m, k = lhs.shape
        n = rhs.shape[-1]
        count = 2 * m * n * k
        for b in batch:
            count *= b
        total += count
    return total


def _cmd_bench(args: argparse.Namespace) -> int:
    import math
    import statistics

    import numpy as np

    from compiler.interp import RunOptions

    names = [b.strip() for b in args.backend.split(",") if b.strip()]
    if not names:
        raise CliError("--backend: name at least one backend")
    for name in names:
        if name not in BACKENDS:
            raise CliError(f"--backend: unknown backend {name!r}; available: {', '.join(BACKENDS)}")
    if args.repeat < 1 or args.warmup < 0:
        raise CliError("--repeat must be at least 1 and --warmup at least 0")
    if args.rounds < 1:
        raise CliError("--rounds must be at least 1")
    if args.flops is not None and not args.flops >= 0:
        raise CliError("--flops must be a number of operations, 0 or more")
    resolved = [(name, *_require_backend(name)) for name in names]
    target = _parse_launchable(args, "bench", "not run")
    if target is None:
        return EXIT_ERRORS
    flops = args.flops
    if flops is None:
        per_block = mma_flops(target.entry)
        flops = per_block * math.prod(target.grid)
    options = RunOptions(check_races=False, max_steps=args.max_steps, timeout=args.timeout)
    # Round r times every backend once, in the given order on even rounds and reversed on odd
    # ones, so that two backends compared share the machine's state (clocks, temperature,
    # other load) round by round; the ratio is the median of the rounds' ratios.
    times: list[list[float]] = [[] for _ in resolved]  # per backend, in the order given
    medians: list[list[float]] = [[] for _ in resolved]  # per backend, one per round
    moved = [0] * len(resolved)
    order = list(range(len(resolved)))
    for r in range(args.rounds):
        for i in order if r % 2 == 0 else order[::-1]:
            values = target.values(args.seed)
            moved[i] = sum(v.nbytes for v in values if isinstance(v, np.ndarray))
            # On a GPU the arguments are bound once and the kernel timed with CUDA events.
            result = target.launch(args, "bench", values, resolved[i][1], options, timed=(args.warmup, args.repeat))
            if result is None:
                return EXIT_ERRORS
            times[i].extend(result.times)
            medians[i].append(statistics.median(result.times))
    grid_text = "x".join(str(d) for d in (*target.grid, 1, 1)[:3])
    rounds = f", {args.rounds} rounds (ratio: median of the rounds', and their range)" if args.rounds > 1 else ""
    _out(
        f"kernel {signature_name(target.entry)}  grid {grid_text}  warm-up {args.warmup}, timed {args.repeat} "
        f"per backend{rounds}\n"
    )
    header = f"{'backend':<18} {'median':>12} {'min':>12} {'GB/s':>10}"
    if flops:
        header += f" {'TFLOP/s':>10}"
    _out(header + f" {'ratio':>8}\n")
    for i, (name, backend, note) in enumerate(resolved):
        median = statistics.median(times[i])
        label = backend if backend == name else f"{backend} ({name})"
        least = min(times[i])
        line = f"{label:<18} {_seconds(median):>12} {_seconds(least):>12} {_rate(moved[i] / 1e9, median):>10}"
        if flops:
            line += f" {_rate(flops / 1e12, median):>10}"
        ratios = [m / f for m, f in zip(medians[i], medians[0]) if f > 0]
        ratio = f"{statistics.median(ratios):.2f}x" if ratios else "-"
        if len(ratios) > 1 and i > 0:
            ratio += f" ({min(ratios):.2f}-{max(ratios):.2f})"
        _out(line + f" {ratio:>8}" + (f"  {note}" if note else "") + "\n")
    return EXIT_OK


def signature_name(entry) -> str:
    from compiler.runtime import signature

    return signature(entry).partition("(")[0]


def _seconds(t: float) -> str:
    if t >= 1:
        return f"{t:.3f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3f} ms"
    return f"{t * 1e6:.1f} us"


def _rate(amount: float, t: float) -> str:
    return f"{amount / t:.4g}" if t > 0 else "-"


# --------------------------------------------------------------------------------------------
# tileir compile

# What `tileir compile --emit` writes, with the suffix of its file when several go into a directory.
EMIT_SUFFIXES = {
    "triton": ".py",
    "ttir": ".ttir",
    "ttgir": ".ttgir",
    "llir": ".ll",
    "ptx": ".ptx",
    "cubin": ".cubin",
    "sass": ".sass",
}
EMIT_KINDS = tuple(EMIT_SUFFIXES)
FALLBACK_ARCH = "sm_90"  # without a visible GPU (compiler.lower.DEFAULT_ARCH)


def local_arch() -> str | None:
    """`sm_XY` of the first visible GPU, or None: `nvidia-smi`'s compute capability, else (a
    device node without nvidia-smi, as in some containers) cuda.core or torch when installed.
    Never fails and never imports a GPU library on a machine without an NVIDIA device."""
    import shutil
    import subprocess

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    first = visible.split(",")[0].strip() if visible is not None else None
    if first is not None and (first == "" or first.startswith("-")):
        return None  # CUDA_VISIBLE_DEVICES hides every GPU
    smi = shutil.which("nvidia-smi")
    if smi is not None:
        command = [smi, "--query-gpu=compute_cap", "--format=csv,noheader"]
        if first:
            command.append(f"--id={first}")  # an index or a GPU-UUID, as CUDA reads it
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        for line in done.stdout.splitlines() if done.returncode == 0 else ():
            major, dot, minor = line.strip().partition(".")
            if dot and major.isdigit() and minor.isdigit():
                return _arch_of(int(major), int(minor))
        return None
    if not os.path.exists("/dev/nvidia0"):
        return None
    return _arch_from_libraries()


def _arch_of(major: int, minor: int) -> str | None:
    cc = major * 10 + minor
    return f"sm_{cc}" if cc >= 80 else None  # older GPUs: Triton cannot target them


def _arch_from_libraries() -> str | None:
    import importlib.util

    try:
        if importlib.util.find_spec("cuda.core") is not None:
            try:
                from cuda.core import Device  # type: ignore[import-not-found]
            except ImportError:
                from cuda.core.experimental import Device  # type: ignore[import-not-found]
            major, minor = Device(0).compute_capability
            return _arch_of(int(major), int(minor))
    except Exception:  # noqa: BLE001 - no GPU, no driver, an API that moved: fall back
        pass
    try:
        if importlib.util.find_spec("torch") is not None:
            import torch

            if torch.cuda.is_available():
                major, minor = torch.cuda.get_device_capability(0)
                return _arch_of(int(major), int(minor))
    except Exception:  # noqa: BLE001 - as above
        pass
    return None


# Architectures Triton 3.6's ptxas compiles for (probed); another one is checked with ptxas
# before compiling, so that a name no ptxas knows (sm_95) is a usage error, not a failed compile.


def _compile_targets(args: argparse.Namespace) -> list:
    """The Targets of --arch, one or several separated by commas (default: the local GPU's,
    else sm_90), in order, each once; a usage error for an empty or unknown one."""
    from compiler.lower import LowerError, Target

    names = [None] if args.arch is None else [name.strip() for name in args.arch.split(",")]
    if "" in names:
        raise CliError(
            f"--arch {args.arch!r}: an empty architecture; name one or several, e.g. sm_90 or sm_80,sm_90,sm_100 "
            "(or leave --arch out: the local GPU's, else sm_90)"
        )
    targets = []
    for name in dict.fromkeys(names):
        arch = name or local_arch() or FALLBACK_ARCH
        try:
            target = Target.parse(arch)
        except LowerError as exc:
            raise CliError(f"--arch: {exc.message}") from None
        problem = arch_problem(target.cc) if args.emit != "triton" else None
        if problem is not None:
            raise CliError(f"--arch {arch}: {problem}")
        targets.append(target)
    return targets


def arch_problem(cc: int) -> str | None:
    """Why Triton cannot compile for `sm_<cc>` (its ptxas does not know it), or None. Only an
    architecture outside KNOWN_ARCHES costs a ptxas run. The language server asks this too."""
    from compiler.lower.codegen import KNOWN_ARCHES

    if cc in KNOWN_ARCHES or not _ptxas_refuses(cc):
        return None
    from compiler.lower import triton_version

    known = ", ".join(f"sm_{k}" for k in KNOWN_ARCHES)
    return f"Triton {triton_version()}'s ptxas cannot compile for sm_{cc}; use one of {known}"


def _ptxas_refuses(cc: int) -> bool:
    """Whether the ptxas Triton would run for `cc` says it does not know the architecture
    (False when that cannot be found out: the compile will tell)."""
    import subprocess

    try:
        from triton.backends.nvidia.compiler import get_ptxas, sm_arch_from_capability

        command = [get_ptxas(cc).path, f"--gpu-name={sm_arch_from_capability(cc)}", os.devnull]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except Exception:  # noqa: BLE001 - Triton's internals moved, no ptxas: let the compile decide
        return False
    return "is not defined for option 'gpu-name'" in done.stderr


def _check_compile_options(args: argparse.Namespace) -> None:
    from compiler.lower.build import option_problem

    if args.jobs < 1:
        raise CliError(f"-j {args.jobs}: give 1 or more worker processes")

    for flag, value in (("--num-warps", args.num_warps), ("--num-stages", args.num_stages)):
        problem = option_problem(flag[2:].replace("-", "_"), value) if value is not None else None
        if problem is not None:
            raise CliError(f"{flag} {value}: {problem}")
    if args.output not in (None, "-") and any(
        path != "-" and os.path.realpath(args.output) == os.path.realpath(path) for path in args.file
    ):
        raise CliError(f"-o {args.output} would replace the input file")
    if args.emit == "cubin" and args.output in (None, "-") and _is_terminal(sys.stdout):
        raise CliError("--emit cubin writes a binary file: name it with -o OUT (or redirect standard output)")


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _cmd_compile(args: argparse.Namespace) -> int:
    from compiler.lower import LowerError
    from compiler.lower.build import require_triton

    _check_compile_options(args)
    if args.emit != "triton":
        try:
            require_triton()
        except LowerError as exc:
            raise CliError(f"--emit {args.emit}: {exc.message}") from None
        _require_cache(f"--emit {args.emit}")
    targets = _compile_targets(args)
    if len(args.file) * len(targets) > 1:
        return _compile_batch(args, targets)
    loaded = _load_kernel(args, "compile", "not compiled", args.file[0])
    if loaded is None:
        return EXIT_ERRORS
    status, output, summary = _compile_one(args, *loaded, targets[0])
    if output is not None:
        _write_output(args.output or "-", output)
        if not args.quiet:
            _err(summary)
    return status


def _compile_batch(args: argparse.Namespace, targets: list) -> int:
    """Every FILE for every --arch in this one process (Triton's start-up paid once), each
    output written to -o DIR as STEM.ARCH.EXT; all inputs are read and checked first, and a
    kernel that fails does not stop the others (the exit status is the worst)."""
    files = args.file
    count = (
        f"{len(files) * len(targets)} outputs ({len(files)} file{'s' * (len(files) != 1)}, "
        f"{len(targets)} architecture{'s' * (len(targets) != 1)})"
    )
    if "-" in files:
        raise CliError("- (standard input) cannot be one of several inputs: name the files")
    if args.output in (None, "-"):
        raise CliError(f"{count}: name a directory for them with -o DIR")
    out_dir = args.output
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise CliError(f"-o {out_dir}: not a directory (several outputs go into one)")
    stem_of = {path: os.path.splitext(os.path.basename(path))[0] for path in files}  # (each path once)
    owner: dict[str, str] = {}
    for path, stem in stem_of.items():
        other = owner.setdefault(stem, path)
        if other != path:
            raise CliError(f"'{other}' and '{path}' would both write {stem}.*: compile them separately")
    status = EXIT_OK
    loaded = []
    for path in stem_of:
        kernel = _load_kernel(args, "compile", "not compiled", path)
        if kernel is None:
            status = EXIT_ERRORS
        else:
            loaded.append((path, kernel))
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise CliError(f"cannot make the directory '{out_dir}': {exc.strerror or exc}") from None
    tasks = [(path, kernel, target) for path, kernel in loaded for target in targets]
    jobs = min(args.jobs, len(tasks))
    if jobs > 1:
        results = _compile_in_processes(args, tasks, jobs)
    else:
        results = (_compile_one(args, *kernel, target) for _, kernel, target in tasks)
    for (path, _, target), (done, output, summary) in zip(tasks, results):
        status = max(status, done)
        if output is None:
            continue
        out = os.path.join(out_dir, f"{stem_of[path]}.{target.arch}{EMIT_SUFFIXES[args.emit]}")
        _write_output(out, output)
        if not args.quiet:
            _err(f"{out}: {summary}")
    return status


def _compile_in_processes(args: argparse.Namespace, tasks: list, jobs: int):
    """The results of `_compile_one` for `tasks`, computed by `jobs` worker processes (each
    pays Triton's start-up once), in the tasks' order; what a worker reported is printed
    before its result is used, so the output reads as a serial run's."""
    import concurrent.futures
    import multiprocessing

    options = {name: getattr(args, name) for name in ("kernel", "emit", "num_warps", "num_stages", "no_cache")}
    # spawn: a fresh interpreter per worker (no fork of a process that may hold threads)
    pool = concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = [pool.submit(_compile_task, path, target.arch, options) for path, _, target in tasks]
        for future in futures:
            done, output, summary, reported = future.result()
            if reported:
                _write(sys.stderr, reported)
            yield done, output, summary
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _compile_task(path: str, arch: str, options: dict) -> tuple[int, str | bytes | None, str, str]:
    """`_compile_one` of `path` for `arch` in a worker process: (status, output, summary, what
    it reported on stderr)."""
    from compiler.lower import Target

    args = argparse.Namespace(**options)
    reported = io.StringIO()
    with contextlib.redirect_stderr(reported):
        try:
            loaded = _load_kernel(args, "compile", "not compiled", path)
            if loaded is None:
                return EXIT_ERRORS, None, "", reported.getvalue()
            done, output, summary = _compile_one(args, *loaded, Target.parse(arch))
        except CliError as exc:
            _err(f"{PROG}: error: {exc}")
            done, output, summary = exc.status, None, ""
    return done, output, summary, reported.getvalue()


def _compile_one(args: argparse.Namespace, module, entry, target) -> tuple[int, str | bytes | None, str]:
    """(exit status, the output or None, the summary line) of `entry` compiled for `target`;
    a failure is reported here."""
    from compiler.lower import LowerError, compile_source, disassemble, lower

    start = time.perf_counter()
    options = {"num_warps": args.num_warps, "num_stages": args.num_stages}
    try:
        source = lower(module, entry, target, options)
    except LowerError as exc:
        _err(_lowering_error(exc.report()))  # an op or type the target cannot do
        return EXIT_ERRORS, None, ""
    compiled = None
    if args.emit == "triton":
        output: str | bytes = source.text
        elapsed = time.perf_counter() - start
    else:
        try:
            with _triton_prints():
                compiled = compile_source(source, use_cache=not args.no_cache, **options)
        except LowerError as exc:
            # Triton refused what the lowering wrote: a bug of ours, not of the input.
            _err(_lowering_error(exc.report()))
            return EXIT_INTERNAL, None, ""
        elapsed = time.perf_counter() - start  # the compile's, not the disassembler's
        if args.emit == "cubin":
            output = compiled.cubin
        elif args.emit == "sass":
            try:
                output = disassemble(compiled.cubin)
            except LowerError as exc:  # cuobjdump missing or failing
                raise CliError(f"--emit sass: {exc.message}") from None
        else:
            output = compiled.asm[args.emit]
    return EXIT_OK, output, _compile_summary(source, compiled, args.emit, elapsed)


@contextlib.contextmanager
def _triton_prints():
    """Keep what Triton prints (a failed ptxas run prints the whole PTX) off standard output,
    which carries the result: to stderr after a success (dumps the user asked Triton for),
    dropped after a failure unless TILEIR_TRACEBACK is set (the error says what failed)."""
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):
            yield
    except BaseException:
        if os.environ.get("TILEIR_TRACEBACK"):
            _write(sys.stderr, captured.getvalue())
        raise
    _write(sys.stderr, captured.getvalue())


def _compile_summary(source, compiled, emit: str, elapsed: float) -> str:
    """`kernel @k  arch sm_90  emit ptx  registers 38  spills 0 B  shared 0 B  warps 4  time 0.912 s`."""
    parts = [f"kernel @{source.kernel}", f"arch {source.target.arch}", f"emit {emit}"]
    if compiled is None:
        parts.append(f"time {elapsed:.3f} s (Triton source, not compiled)")
        return "  ".join(parts)

    def known(value, unit: str = "") -> str:
        return "?" if value is None else f"{value}{unit}"

    parts += [
        f"registers {known(compiled.registers)}",
        f"spills {known(compiled.spills, ' B')}",
        f"shared {compiled.shared} B",
        f"warps {compiled.num_warps}",
        f"time {elapsed:.3f} s" + (" (cached)" if compiled.cached else ""),
    ]
    return "  ".join(parts)


# --------------------------------------------------------------------------------------------
# tileir layout


def _parse_extents(specs: Sequence[str]) -> dict[int, int]:
    extents: dict[int, int] = {}
    for spec in specs:
        dim, sep, value = spec.partition("=")
        try:
            if not sep:
                raise ValueError
            d, n = int(dim), int(value)
        except ValueError:
            raise CliError(f"--extent {spec}: expected DIM=N with integers, e.g. --extent 0=4096") from None
        if d < 0 or n < 0:
            raise CliError(f"--extent {spec}: the dimension and the extent must be non-negative")
        if n == 0:
            raise CliError(f"--extent {spec}: the extent must be at least 1 (an empty tensor has no tiles to picture)")
        extents[d] = n
    return extents


def _view_values(module) -> list:
    """Every SSA value of a view type (op results and block arguments), in source order."""
    from compiler.layout import is_view_type

    found = []
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                found.extend(a for a in block.arguments if is_view_type(a.type))
        found.extend(r for r in op.results if is_view_type(r.type))
    return sorted(found, key=lambda v: v.span.start if v.span is not None else -1)


def _cmd_layout(args: argparse.Namespace) -> int:
    from compiler.layout import describe, svg_picture, text_picture, view_layout_of
    from compiler.text import parse

    if args.value is not None and args.line is not None:
        raise CliError("--value and --line cannot be used together")
    extents = _parse_extents(args.extent)
    src = _read_input(args.file, allow_bytecode=True)
    if src.bytecode is not None:
        # Bytecode has no source lines: views are shown without them, and --line finds none.
        result = _Decoded(_decode_bytecode(src.bytecode, src.name))
        if result.module is None:
            return EXIT_ERRORS
    else:
        result = parse(src.text, src.name)
        if _report(result.diagnostics, _Tally(), name=src.name):
            _err(f"{PROG} layout: '{src.name}' has errors; no layout shown")
            return EXIT_ERRORS
    source = result.module.source
    values = _view_values(result.module)
    names = {v: v.name for v in values}
    if any(name is None for name in names.values()):
        # Bytecode keeps no value names: call the views what `tileir disasm` calls them.
        from compiler.text.printer import value_names

        printed = value_names(result.module)
        names = {v: name or printed.get(v, "?") for v, name in names.items()}

    def line_of(value) -> int | None:
        return source.line_col(value.span.start)[0] if value.span is not None and source is not None else None

    if args.value is not None:
        wanted = args.value.removeprefix("%")
        values = [v for v in values if names[v] == wanted]
        if not values:
            raise CliError(f"no view value named %{wanted} in '{src.name}'")
    elif args.line is not None:
        values = [v for v in values if line_of(v) == args.line]
        if not values:
            raise CliError(f"no view value is defined on line {args.line} of '{src.name}'")
    if not values:
        _out(f"{src.name}: no view values\n")
        return EXIT_OK
    if args.svg is not None and len(values) > 1:
        names = ", ".join(f"%{v.name}" for v in values[:6]) + (", ..." if len(values) > 6 else "")
        raise CliError(f"--svg draws one view; '{src.name}' has {len(values)} ({names}): choose with --value or --line")
    found = [(value, view_layout_of(value, extents)) for value in values]
    most = max((layout.tensor_rank for _, layout in found if layout is not None), default=0)
    for d in sorted(d for d in extents if d >= most):
        # Said, not refused: one command line may serve files of several ranks (a script).
        _err(
            f"{PROG}: warning: --extent {d}={extents[d]}: no view here has a tensor dimension {d} "
            f"(the views' tensors have at most {most} dimension{'s' if most != 1 else ''}); ignored"
        )
    blocks = []
    layouts = []
    for value, layout in found:
        where = f"{src.name}:{line_of(value)}" if line_of(value) is not None else src.name
        if layout is None:
            blocks.append(f"%{names[value]} ({where}): {value.type}\n  (malformed view type; no layout)\n")
            continue
        layouts.append(layout)
        blocks.append(f"%{names[value]} ({where}): {value.type}\n{describe(layout)}\n\n{text_picture(layout)}\n")
    _out("\n".join(blocks))
    if args.svg is not None:
        if not layouts:
            raise CliError("no layout to draw")
        try:
            write_atomic(args.svg, svg_picture(layouts[0]))
        except OSError as exc:
            raise CliError(f"cannot write '{args.svg}': {exc.strerror or exc}") from None
    return EXIT_OK


# --------------------------------------------------------------------------------------------
# Argument parsing


def _flag(parser: argparse.ArgumentParser, name: str, help: str) -> None:
    """An MLIR-style long flag, accepted with one dash and with two."""
    parser.add_argument(f"--{name}", f"-{name}", action="store_true", help=help)


def _tolerance(text: str) -> float:
    """An argparse type: a finite number, 0 or more (a NaN or negative tolerance makes every
    comparison fail, whatever the result)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"'{text}': give a finite number, 0 or more")
    return value


def _verify_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target-version",
        "-target-version",
        metavar="VERSION",
        help="report ops, types and attributes newer than this bytecode version (e.g. 13.1)",
    )
    _flag(parser, "no-verify", "parse only; skip the verifier")


def _launch_arguments(parser: argparse.ArgumentParser) -> None:
    """The kernel, grid and argument options of `tileir run` and `tileir bench`."""
    parser.add_argument("file", metavar="FILE", help="a .tileir text or .tileirbc bytecode file, or - for stdin")
    parser.add_argument("-k", "--kernel", metavar="K", help="the entry to run (default: the only one)")
    parser.add_argument("--grid", required=True, metavar="X[,Y[,Z]]", help="the number of tile blocks")
    parser.add_argument(
        "--arg", action="append", default=[], metavar="SPEC", help="one argument, in order (repeat the option)"
    )
    parser.add_argument(
        "--cutile-args",
        action="store_true",
        help="cuTile's calling convention: each array --arg is passed as pointer, extents, strides (in elements)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of rand: SPECs (default 0)")
    parser.add_argument(
        "--max-steps",
        type=_limit(int),
        default=DEFAULT_MAX_STEPS,
        metavar="N",
        help=f"stop a runaway kernel after N loop iterations, each iteration of a group of tile blocks counted "
        f"once (cpu backend; default {DEFAULT_MAX_STEPS}, 0: no limit)",
    )
    parser.add_argument(
        "--timeout",
        type=_limit(float),
        default=0,
        metavar="SECONDS",
        help="stop a kernel that runs longer than SECONDS per launch (cpu and triton-interpret backends; "
        "default 0: no limit)",
    )


def _limit(kind: type):
    """An argparse type: a number of `kind`, 0 or more."""

    def parse(text: str):
        value = kind(text)
        if not value >= 0:
            raise argparse.ArgumentTypeError(f"{text}: give 0 (no limit) or more")
        return value

    parse.__name__ = kind.__name__  # argparse names it in "invalid int value"
    return parse


class _Unbuilt:
    """Stands for the parser of a command that is not being run: takes its arguments and
    drops them (building every command's arguments was a fifth of a one-file `check`)."""

    def __getattr__(self, name: str) -> Callable[..., _Unbuilt]:
        return lambda *args, **kwargs: self


class _Commands:
    """`add_subparsers()` for build_parser: every command is listed (for `--help` and the
    choice check), only the `wanted` one (all, when None) gets its arguments."""

    def __init__(self, sub: argparse._SubParsersAction, wanted: str | None) -> None:
        self.sub, self.wanted = sub, wanted

    def add_parser(self, name: str, **kwargs: object) -> argparse.ArgumentParser | _Unbuilt:
        if self.wanted is None or name == self.wanted:
            parser = self.sub.add_parser(name, **kwargs)
            parser.set_defaults(command_parser=parser)  # main reports stray arguments with it
            return parser
        self.sub.add_parser(name, help=kwargs.get("help"), add_help=False)
        return _Unbuilt()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `command`, only that command's arguments are built
    (the others are listed, and rejected if given)."""
    from compiler import __version__

    parser = _ArgumentParser(
        prog=PROG,
        description="Tools for NVIDIA CUDA Tile IR (the cuda_tile MLIR dialect).",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = _Commands(parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser), command)

    check = sub.add_parser(
        "check",
        help="parse and verify files, report diagnostics",
        description="Parse and verify each file; print its diagnostics as path:line:col: error: message.",
        allow_abbrev=False,
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="a .tileir file, or - for stdin")
    check.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    _flag(check, "allow-unregistered-dialect", "accept operations of unknown dialects")
    _flag(check, "Wunsupported-hints", "warn about unknown or invalid optimization hints")
    _flag(check, "Werr-hints", "with -Wunsupported-hints: make those warnings errors")
    _verify_flags(check)
    check.set_defaults(func=_cmd_check)

    fmt = sub.add_parser(
        "fmt",
        help="print the canonical form",
        description="Print each file in canonical form (comments are kept).",
        allow_abbrev=False,
    )
    fmt.add_argument("files", nargs="+", metavar="FILE", help="a .tileir file, or - for stdin")
    fmt.add_argument("--check", action="store_true", help="exit 1 and name the files that would change")
    fmt.add_argument("-i", "--in-place", action="store_true", help="rewrite the files in place (atomically)")
    fmt.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    _flag(fmt, "allow-unregistered-dialect", "accept operations of unknown dialects")
    fmt.set_defaults(func=_cmd_fmt)

    opt = sub.add_parser(
        "opt",
        help="parse and print like cuda-tile-opt",
        description=(
            "Parse a module and print it, like cuda-tile-opt / mlir-opt. "
            "Long options are accepted with one dash or two."
        ),
        allow_abbrev=False,
    )
    opt.add_argument("file", nargs="?", default="-", metavar="FILE", help="input (default: -)")
    opt.add_argument("-o", dest="output", metavar="OUT", help="output file (default: stdout)")
    _flag(opt, "split-input-file", "process each '// -----' chunk separately")
    _flag(opt, "mlir-print-op-generic", "print operations in the generic form")
    _flag(opt, "mlir-print-debuginfo", "print location information")
    _flag(opt, "allow-unregistered-dialect", "accept operations of unknown dialects")
    _flag(opt, "verify-diagnostics", "check the diagnostics against the file's expected-* comments")
    _flag(opt, "canonicalize", "fold and simplify with the canonicalization rewrites (compiler/transform)")
    _flag(opt, "Wunsupported-hints", "warn about unknown or invalid optimization hints")
    _flag(opt, "Werr-hints", "with -Wunsupported-hints: make those warnings errors")
    _verify_flags(opt)
    _flag(opt, "no-implicit-module", "accepted for compatibility; has no effect")
    _flag(
        opt,
        "default-names",
        "print MLIR's default SSA names (%%0, %%cst_1_i32, %%arg0) instead of the source's, as cuda-tile-opt does",
    )
    opt.add_argument(
        "--test-debuginfo-update-symbol-name",
        "-test-debuginfo-update-symbol-name",
        metavar="OPTIONS",
        help=(
            "rename a symbol with its uses and debug-info linkage name, as cuda-tile-opt's test pass: "
            "'symbol-to-rename=A::B [scope=A] new-name=C [update-uses=true]'"
        ),
    )
    opt.set_defaults(func=_cmd_opt)

    _bytecode_parsers(sub)

    run = sub.add_parser(
        "run",
        help="run a kernel on the CPU interpreter (or lowered to Triton, under Triton's interpreter)",
        description=(
            "Run a kernel on the CPU interpreter (or, with --backend triton-interpret, lowered to Triton and run "
            "by Triton's interpreter) with arguments made from SPECs, print a summary of "
            "every argument after the run, and optionally save the arrays and check them against NumPy."
        ),
        epilog=(
            "SPEC: FILE.npy[:DTYPE] | zeros:SHAPE:DTYPE | ones:SHAPE:DTYPE | rand:SHAPE:DTYPE | "
            "arange:SHAPE:DTYPE | a number. SHAPE: 1024 or 64x64. DTYPE as the IR spells it: "
            "f32 f16 bf16 f64 f8E4M3FN f8E5M2 f8E8M0FNU f4E2M1FN i1 i8 i16 i32 i64. "
            "rand: floats uniform in [-1, 1), integers in [-100, 100). "
            "Example: tileir run examples/vector_add.tileir --grid 4 --cutile-args "
            "--arg rand:4000:f32 --arg rand:4000:f32 --arg zeros:4000:f32 --check 'arg2 = arg0 + arg1'"
        ),
        allow_abbrev=False,
    )
    _launch_arguments(run)
    run.add_argument(
        "--save",
        metavar="DIR",
        help=(
            "write each array argument after the run as DIR/arg<i>.npy (i: its --arg index); DIR is created "
            "if missing, but its parent must exist"
        ),
    )
    run.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="'argN = EXPR'",
        help=(
            "after the run, argN must match EXPR, a Python expression (np, ml_dtypes at hand) over arg0, "
            "arg1, ... as they were before the run; within a tolerance set by argN's dtype (exit 1 if not). "
            "EXPR is ordinary Python run with your rights, not a sandbox: pass only expressions you trust"
        ),
    )
    run.add_argument("--rtol", type=_tolerance, metavar="R", help="relative tolerance of --check (default: by dtype)")
    run.add_argument("--atol", type=_tolerance, metavar="A", help="absolute tolerance of --check (default: by dtype)")
    run.add_argument(
        "--no-race-check", action="store_true", help="do not report unordered store/access races (cpu backend)"
    )
    run.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help=(
            "auto (default): triton where an NVIDIA GPU is present, else cpu (the one chosen is printed); "
            "cpu: the CPU interpreter (the reference semantics); triton-interpret: the kernel "
            "lowered to Triton and run by Triton's interpreter on the CPU (needs triton and torch); "
            "triton: our lowering compiled by Triton, on an NVIDIA GPU; tileiras: the bytecode compiled "
            "by NVIDIA's tileiras, on an NVIDIA GPU"
        ),
    )
    run.add_argument("-q", "--quiet", action="store_true", help="print only errors and failed checks")
    run.set_defaults(func=_cmd_run)

    bench = sub.add_parser(
        "bench",
        help="time a kernel on one or more backends",
        description=(
            "Time a kernel: on each backend, WARMUP untimed launches, then REPEAT timed ones (the kernel's "
            "run only: placing arguments excluded; the CPU interpreter runs without its race check). "
            "Prints one row per backend: median and minimum time, GB/s (the bytes of the array arguments, "
            "each counted once, over the median time), TFLOP/s for kernels with mmaf/mmai ops, and the "
            "median time relative to the first backend (with --rounds N, the backends are timed N times over, "
            "interleaved, and the ratio is the median of the rounds' ratios, with their range)."
        ),
        epilog=(
            "FLOPs: 2*M*N*K per mmaf/mmai op (x the batch, for 3-d operands) per tile block, each op "
            "counted once even inside a loop (a lower bound for a loop over K); --flops N overrides. "
            "SPECs as in `tileir run`. Example: tileir bench examples/vector_add.tileir --grid 4 "
            "--cutile-args --arg rand:4000:f32 --arg rand:4000:f32 --arg zeros:4000:f32 --backend cpu,triton-interpret"
        ),
        allow_abbrev=False,
    )
    _launch_arguments(bench)
    bench.add_argument(
        "--backend",
        default="auto",
        metavar="B[,B...]",
        help=f"backends to time, in order, comma-separated, from: {', '.join(BACKENDS)} (default auto)",
    )
    bench.add_argument("--repeat", type=int, default=5, metavar="N", help="timed launches per backend (default 5)")
    bench.add_argument("--warmup", type=int, default=1, metavar="N", help="untimed launches first (default 1)")
    bench.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="N",
        help="time the backends N times over, interleaved (order alternating); ratios are the median of "
        "the rounds' (default 1)",
    )
    bench.add_argument("--flops", type=float, metavar="N", help="floating-point operations of one launch")
    bench.set_defaults(func=_cmd_bench)

    _compile_parser(sub)

    layout = sub.add_parser(
        "layout",
        help="show how views tile their tensors (index spaces, pictures)",
        description=(
            "Print the layout of each view value in a file: tile and tensor shapes, the index space "
            "with its arithmetic, padding, and a text picture of the tiling."
        ),
        allow_abbrev=False,
    )
    layout.add_argument("file", metavar="FILE", help="a .tileir file, or - for stdin")
    layout.add_argument("--value", metavar="NAME", help="only the view value %%NAME")
    layout.add_argument("--line", type=int, metavar="N", help="only the view values defined on line N")
    layout.add_argument(
        "--extent",
        action="append",
        default=[],
        metavar="DIM=N",
        help="the extent of a dynamic (?) tensor dimension (repeat the option)",
    )
    layout.add_argument("--svg", metavar="OUT.svg", help="also write the picture as SVG (one view; atomically)")
    layout.set_defaults(func=_cmd_layout)
    return parser


def _compile_parser(sub) -> None:
    compile_ = sub.add_parser(
        "compile",
        help="compile a kernel to PTX (or Triton, TTIR, TTGIR, LLVM IR, cubin, SASS) through Triton",
        description=(
            "Lower a kernel to Triton and compile it with Triton for a GPU architecture; no GPU is needed. "
            "The result goes to standard output or -o OUT (replaced atomically); a summary line (registers, "
            "spills, shared memory, compile time) goes to standard error. Several files and architectures "
            "(--arch sm_80,sm_90,sm_100) are compiled in one process, which pays Triton's start-up once, into "
            "the directory -o DIR. Compiles are cached in $TILEIR_CACHE_DIR (default ~/.cache/tileir)."
        ),
        epilog=(
            "Examples: tileir compile examples/vector_add.tileir --arch sm_90 --emit ptx -o vector_add.ptx; "
            "tileir compile examples/*.tileir --arch sm_80,sm_90,sm_100 --emit cubin -o build. "
            "Exit status: 0 ok; 1 the module has errors or uses what the lowering cannot express for the "
            "target (the op and its line are named); 2 bad usage, an unreadable file, an unknown kernel, "
            "Triton not installed; 3 Triton refused the lowered kernel (a bug in the lowering); of several "
            "compiles, the worst."
        ),
        allow_abbrev=False,
    )
    compile_.add_argument(
        "file",
        metavar="FILE",
        nargs="+",
        help="a .tileir text or .tileirbc bytecode file, or - for stdin; several are compiled in one process",
    )
    compile_.add_argument("-k", "--kernel", metavar="K", help="the entry to compile (default: the only one)")
    compile_.add_argument(
        "--arch",
        metavar="ARCH",
        help=f"the GPU architecture: sm_80, sm_90, sm_100, ..., or several separated by commas "
        f"(default: the local GPU's, else {FALLBACK_ARCH})",
    )
    compile_.add_argument(
        "--emit",
        choices=EMIT_KINDS,
        default="ptx",
        help=(
            "what to write: triton (the generated Python source; no compile), ttir, ttgir, llir, ptx (default), "
            "cubin (binary: not to a terminal), sass (the cubin disassembled by cuobjdump)"
        ),
    )
    compile_.add_argument(
        "-o",
        dest="output",
        metavar="OUT",
        help="output file (default: stdout); with several files or architectures, a directory that receives "
        "STEM.ARCH.EXT for each (made if missing)",
    )
    compile_.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="with several files or architectures, compile in N worker processes (default 1: this one)",
    )
    compile_.add_argument(
        "--num-warps",
        type=int,
        metavar="N",
        help="warps per CTA (default: the IR's hint, else 4, or for a kernel with a matrix multiply 4 or 8 by its "
        "loops' shape)",
    )
    compile_.add_argument(
        "--num-stages",
        type=int,
        metavar="N",
        help="pipelining stages of loops (default: the IR's hint, else 3, or for a kernel with a matrix multiply "
        "2 to 6 by the bytes a loop iteration loads)",
    )
    compile_.add_argument(
        "--no-cache", action="store_true", help="compile from scratch; neither read nor write the cache"
    )
    compile_.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    compile_.set_defaults(func=_cmd_compile)


def _bytecode_parsers(sub) -> None:
    versions = "13.1, 13.2 or 13.3"
    asm = sub.add_parser(
        "asm",
        help="write a .tileir file as Tile IR bytecode",
        description=(
            "Parse and verify a text file (bare entries and globals, or one cuda_tile.module), then write it as "
            "Tile IR bytecode that NVIDIA's tools read. The output is replaced atomically."
        ),
        allow_abbrev=False,
    )
    asm.add_argument("file", metavar="FILE", help="a .tileir file, or - for stdin")
    asm.add_argument(
        "-o", dest="output", metavar="OUT", help="output (default: FILE with suffix .tileirbc; - for stdout)"
    )
    asm.add_argument(
        "--bytecode-version", metavar="V", help=f"the bytecode version to write: {versions} (default: 13.3)"
    )
    _flag(asm, "allow-unregistered-dialect", "accept operations of unknown dialects (the writer still refuses them)")
    asm.set_defaults(func=_cmd_asm)

    disasm = sub.add_parser(
        "disasm",
        help="print a Tile IR bytecode file as text",
        description=(
            "Print a Tile IR bytecode file as text, as NVIDIA's tileirdisasm prints it: the module's globals "
            "and entries, without the cuda_tile.module wrapper."
        ),
        allow_abbrev=False,
    )
    disasm.add_argument("file", metavar="FILE", help="a .tileirbc file, or - for stdin")
    disasm.add_argument("-o", dest="output", metavar="OUT", help="write the text here (default: stdout)")
    disasm.add_argument(
        "-g", "--print-debug-info", action="store_true", help="print locations (the debug information), if present"
    )
    disasm.set_defaults(func=_cmd_disasm)

    translate = sub.add_parser(
        "translate",
        help="convert between text and bytecode like cuda-tile-translate",
        description=(
            "Text to bytecode and back, like NVIDIA's cuda-tile-translate. Long options are accepted with one "
            "dash or two."
        ),
        allow_abbrev=False,
    )
    translate.add_argument("file", nargs="?", default="-", metavar="FILE", help="input (default: -)")
    translate.add_argument("-o", dest="output", metavar="OUT", help="output file (default: stdout)")
    mode = translate.add_mutually_exclusive_group()
    for flag, dest_mode, what in (
        ("mlir-to-cudatilebc", "mlir-to-cudatilebc", "text to bytecode"),
        ("mlir-to-tilebc", "mlir-to-cudatilebc", "the same as -mlir-to-cudatilebc"),
        ("cudatilebc-to-mlir", "cudatilebc-to-mlir", "bytecode to text (the whole cuda_tile.module)"),
        ("tilebc-to-mlir", "cudatilebc-to-mlir", "the same as -cudatilebc-to-mlir"),
        ("test-cudatile-roundtrip", "test-cudatile-roundtrip", "text to bytecode to text in memory; print the result"),
    ):
        mode.add_argument(f"--{flag}", f"-{flag}", dest="mode", action="store_const", const=dest_mode, help=what)
    translate.add_argument(
        "--bytecode-version",
        "-bytecode-version",
        metavar="V",
        help=f"the bytecode version to write: {versions}, or the test-only 250.0 / 250.1 (default: 13.3)",
    )
    _flag(translate, "list-versions", "print the bytecode versions that can be written, one per line")
    _flag(translate, "split-input-file", "translate each '// -----' chunk separately (errors go on to the next)")
    _flag(translate, "verify-diagnostics", "check the diagnostics against the file's expected-* comments")
    _flag(translate, "allow-unregistered-dialect", "accept operations of unknown dialects")
    _flag(translate, "mlir-print-debuginfo", "print location information")
    _flag(translate, "no-implicit-module", "accepted for compatibility; has no effect")
    translate.set_defaults(func=_cmd_translate, mode=None)


def has_command(name: str) -> bool:
    """Whether `tileir NAME` exists (e.g. `translate`, which arrives with bytecode support)."""
    for action in build_parser()._actions:  # noqa: SLF001 - argparse has no public accessor
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict) and name in choices:
            return True
    return False


_ACYCLIC_COMMANDS = frozenset({"asm", "disasm", "check", "fmt", "translate", "opt"})
# Every command build_parser adds (a test keeps the two equal).
_COMMAND_NAMES = frozenset({"check", "fmt", "opt", "run", "bench", "compile", "layout", "asm", "disasm", "translate"})


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `tileir` command line; return the exit status."""
    try:
        argv = list(argv) if argv is not None else sys.argv[1:]
        # The command is the first word that is not an option (the top level has no option
        # with a value); only its arguments are built.
        command = next((a for a in argv if not a.startswith("-")), None)
        parser = build_parser(command if command in _COMMAND_NAMES else None)
        try:
            args, extra = parser.parse_known_args(argv)
            if extra:  # named by the command's parser, which is the help to read
                command_parser = getattr(args, "command_parser", parser)
                command_parser.error(f"unrecognized arguments: {' '.join(extra)}")
        except _ArgparseExit as exc:
            return exc.status
        if getattr(args, "func", None) is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        if args.command in _ACYCLIC_COMMANDS:
            # These build one module and print or encode it: nothing they make is cyclic garbage,
            # and the collector would rescan the whole module many times (a third of the time).
            gc.disable()
        status = int(args.func(args))
        _flush_stdout()  # a write error (a full disk) must not pass for success
        return status
    except CliError as exc:
        _err(f"{PROG}: error: {exc}")
        return exc.status
    except KeyboardInterrupt as exc:
        # A launch on the interpreter says where it was (compiler.interp.InterruptedLaunch).
        where = exc.report() if hasattr(exc, "report") else ""
        _err(f"{PROG}: interrupted{f': {where}' if where else ''}")
        return 130
    except BrokenPipeError:
        # The reader went away (`tileir fmt big.tileir | head`): not an error of ours.
        _silence_stdout()
        return EXIT_ERRORS
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        if os.environ.get("TILEIR_TRACEBACK"):
            import traceback

            traceback.print_exc()
        _err(
            f"{PROG}: internal error: {type(exc).__name__}: {exc} "
            f"(this is a bug; please report it to {ISSUES_URL} with the input file)"
        )
        return EXIT_INTERNAL


def run() -> NoReturn:  # pragma: no cover - measured through the `tileir` processes the tests start
    """The `tileir` program: `main`, then exit without the interpreter's teardown, which frees
    every object one by one for nothing: 30-110 ms after `check` of 7,000 lines, 200-400 ms at
    30,000, about 60 ms after a `compile` that imported Triton (measured). What must happen at
    exit still does: the functions registered with `atexit` run (logging's flush, temporary
    directories' removal), and the standard streams are flushed. Where another thread is alive
    the process exits normally, so that Python waits for it."""
    status = main()
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        raise SystemExit(status)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken pipe: main has already said what it could
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
