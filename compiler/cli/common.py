"""What the commands of `tileir` share: reading input, writing output, reporting diagnostics,
parsing and verifying a file, loading a kernel, and the error that ends a command (CliError)."""

from __future__ import annotations

import io
import os
import sys

from compiler.ir.files import write_atomic

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:  # the core is imported lazily so that `tileir --help` stays fast
    import argparse
    from collections.abc import Sequence
    from typing import TextIO

    from compiler.ir.diagnostics import Diagnostic

PROG = "tileir"
EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

ISSUES_URL = "the project's issue tracker"


class CliError(Exception):
    """A user-facing error: one line on stderr and a non-zero exit status."""

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


# Plain classes, not dataclasses: importing `dataclasses` costs every command's start-up as
# much as the rest of the command line (compiler/ir/frozen.py says more).


class Input:
    __slots__ = ("name", "text", "path", "bytecode")

    def __init__(self, name: str, text: str, path: str | None, bytecode: bytes | None = None) -> None:
        self.name = name  # as shown in diagnostics
        self.text = text  # empty for bytecode
        self.path = path  # None for stdin
        self.bytecode = bytecode  # the file's bytes when it is Tile IR bytecode


def decode_text(data: bytes, name: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"cannot read '{name}': not valid UTF-8 (byte {exc.start}: {data[exc.start]:#04x})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def read_bytes(path: str) -> tuple[str, bytes, str | None]:
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


def read_input(path: str, allow_bytecode: bool = False) -> Input:
    """A text file (or `-`). With `allow_bytecode`, Tile IR bytecode (told by its magic
    number, whatever the file is called) is returned undecoded in `bytecode`."""
    if path.endswith(".py"):  # (a cuTile Python file would give a page of parse errors)
        raise CliError(
            f"'{path}' is Python, not Tile IR: a cuTile kernel in it runs with `{PROG} run {path} -k KERNEL "
            f"--grid ... --arg ...` and compiles with `{PROG} compile {path} -k KERNEL --arg ...`, which have "
            "cuTile export it for the arguments' types"
        )
    name, data, real_path = read_bytes(path)
    if allow_bytecode:
        from compiler.bytecode import is_bytecode

        if is_bytecode(data):
            return Input(name, "", real_path, data)
        try:
            return Input(name, decode_text(data, name), real_path)
        except CliError as exc:
            raise CliError(f"{exc} and not Tile IR bytecode (no bytecode magic number)") from None
    return Input(name, decode_text(data, name), real_path)


def _utf8(text: str) -> bytes:
    """UTF-8 bytes of text that may hold a file name's undecodable bytes (Python decodes
    them to surrogates: `surrogateescape` gives the very bytes back); any other lone
    surrogate written as an escape."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def write_text(stream: TextIO, text: str) -> None:
    buffer = getattr(stream, "buffer", None)
    if isinstance(buffer, io.RawIOBase):
        # Unbuffered (PYTHONUNBUFFERED=1, python -u): the text layer writes to the raw file and
        # ignores a short write, so a full disk would cut the output without an error.
        stream.flush()
        try:
            data = text.encode(stream.encoding or "utf-8")
        except (UnicodeEncodeError, LookupError):
            data = _utf8(text)
        write_fully(buffer, data)
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
            write_fully(buffer, _utf8(text))
            buffer.flush()


def write_fully(buffer, data: bytes) -> None:
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


def out(text: str) -> None:
    try:
        write_text(sys.stdout, text)
    except BrokenPipeError:
        raise  # the reader went away: main() handles it
    except OSError as exc:
        raise stdout_failed(exc) from None


def flush_stdout() -> None:
    """Flush standard output, so that a full disk is reported here rather than lost at exit."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        raise stdout_failed(exc) from None


def stdout_failed(exc: Exception) -> CliError:
    """The error for output that could not be written (`> /dev/full`, a full disk). What is
    still buffered is dropped, by pointing standard output at the null device: flushing it
    again at exit would fail again and print a traceback-like warning."""
    silence_stdout()
    reason = getattr(exc, "strerror", None) or str(exc)
    return CliError(f"cannot write to standard output: {reason}")


def silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def err(text: str) -> None:
    try:
        write_text(sys.stderr, text if text.endswith("\n") else text + "\n")
    except OSError:
        pass  # nowhere left to report it; the exit status still says what happened


class Tally:
    __slots__ = ("errors", "warnings", "status")

    def __init__(self) -> None:
        self.errors = 0
        self.warnings = 0
        self.status = EXIT_OK  # the worst exit status so far

    def worsen(self, status: int) -> None:
        self.status = max(self.status, status)


def report(diagnostics: Sequence[Diagnostic], tally: Tally, snippet: bool = True, name: str | None = None) -> bool:
    """Print diagnostics to stderr; return True if any is an error. `name` is the file that
    diagnostics without a source (a module read from bytecode has no text) are about."""
    from compiler.ir.diagnostics import Severity

    has_error = False
    for diag in diagnostics:
        if diag.source is None and name is not None:
            err(f"{name}: {diag.severity.label}: {diag.message}")
            if diag.origin is not None:  # the op's debug-info location (`compiler.ir.diagnostics`)
                err("{}:{}:{}: note: the op's source location (from the module's debug info)".format(*diag.origin))
        else:
            err(diag.format(with_snippet=snippet))
        if diag.is_error:
            has_error = True
            tally.errors += 1
        elif diag.severity == Severity.WARNING:
            tally.warnings += 1
    return has_error


def verify_options(args: argparse.Namespace, keep_going: bool = True):
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


def parse_and_verify(text: str, name: str, args: argparse.Namespace, keep_going: bool = True, verify: bool = True):
    """Parse `text`; verify it when it parsed cleanly. Returns (result, diagnostics)."""
    from compiler.text import ParseOptions, parse
    from compiler.verify import check_text

    if not verify or getattr(args, "no_verify", False):
        result = parse(text, name, ParseOptions(allow_unregistered=args.allow_unregistered_dialect))
        return result, list(result.diagnostics)
    return check_text(text, name, verify_options(args, keep_going), args.allow_unregistered_dialect)


class Decoded:
    """A module read from bytecode, standing in for a ParseResult."""

    __slots__ = ("module",)

    def __init__(self, module: object) -> None:
        self.module = module


def parsed_files(args: argparse.Namespace, tally: Tally, verify: bool = True, in_parts=None):
    """Each file of `args.files` read, parsed (or decoded, for bytecode) and (with `verify`)
    verified, its diagnostics printed, as (input, result, has_errors); a file that cannot be
    read is reported and skipped, as is bytecode that cannot be decoded.

    `in_parts(text, name)`: the command's answer for a big text found in several processes
    (`compiler.text.parts`), given as the result when it has one (it has none when the
    text has anything to report: then the text is parsed here)."""
    for path in args.files:
        try:
            src = read_input(path, allow_bytecode=True)
        except CliError as exc:
            err(f"{PROG}: error: {exc}")
            tally.worsen(exc.status)
            continue
        if src.bytecode is not None:
            module = decode_bytecode(src.bytecode, src.name, tally)
            if module is None:
                tally.worsen(EXIT_ERRORS)
                continue
            result = Decoded(module)
            diagnostics = verify_module(module, args) if verify and not getattr(args, "no_verify", False) else []
        else:
            answer = in_parts(src.text, src.name) if in_parts is not None else None
            if answer is not None:
                yield src, answer, False
                continue
            result, diagnostics = parse_and_verify(src.text, src.name, args, verify=verify)
        has_errors = report(diagnostics, tally, name=src.name)
        if has_errors:
            tally.worsen(EXIT_ERRORS)
        yield src, result, has_errors


def decode_bytecode(data: bytes, name: str, tally: Tally | None = None, versions=None):
    """The module of a bytecode file, or None after printing `NAME: error: at byte N (0xN): ...`.
    `versions`: read only these (see `read_bytecode`)."""
    from compiler.bytecode import BytecodeError, read_bytecode

    try:
        return read_bytecode(data, versions=versions)
    except BytecodeError as exc:
        err(f"{name}: error: {exc}")
        if tally is not None:
            tally.errors += 1
        return None


def verify_module(module, args: argparse.Namespace, keep_going: bool = True) -> list[Diagnostic]:
    from compiler.verify import verify

    return verify(module, verify_options(args, keep_going))


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def chunks(text: str, whole, split: bool):
    """(chunk, offset of its first character in `text`) of each `// -----` chunk (with
    `split`), or of the whole text. Each chunk is parsed on its own and its diagnostics moved
    onto `whole` (the SourceFile of `text`) with `_moved`: padding every chunk with the lines
    before it, to number them as in the file, made 32,000 chunks quadratic (minutes)."""
    from compiler.text import split_input

    if not split:
        return [(text, 0)]
    return [(chunk, whole.offset(line, 0)) for chunk, line in split_input(text)]


def ensure_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def write_output(path: str, data: str | bytes) -> None:
    """Write to `path` atomically, or to standard output for `-`."""
    if path == "-":
        if isinstance(data, str):
            out(data)
            return
        flush_stdout()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:
            raise CliError("cannot write bytecode to standard output: it only takes text")
        try:
            write_fully(buffer, data)
            buffer.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise stdout_failed(exc) from None
        return
    try:
        write_atomic(path, data)
    except OSError as exc:
        raise CliError(f"cannot write '{path}': {exc.strerror or exc}") from None


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def load_kernel(args: argparse.Namespace, command: str, not_done: str, path: str | None = None):
    """(module, entry) of `path` (default `args.file`; text or bytecode, or `-`) and
    `args.kernel` (None: the only one), or None after printing the module's diagnostics and
    `tileir COMMAND: 'FILE' has errors; NOT_DONE`. An unreadable file or an unknown kernel is
    a usage error."""
    from compiler.modules import LaunchError, find_kernel, load_module

    path = args.file if path is None else path
    if path.endswith(".py"):
        specs = getattr(args, "arg", None)
        if not specs:
            raise CliError(
                f"{path}: cuTile exports a kernel for its arguments' types: give them with --arg SPEC, "
                "as to tileir run (ct.Constant ones as numbers)"
            )
        from compiler.runtime.argspec import SpecError, parse_spec

        try:
            parsed = [parse_spec(a) for a in specs]
        except SpecError as exc:
            raise CliError(str(exc)) from None
        module, entry, _ = load_cutile_kernel(path, args.kernel, parsed)
        return module, entry
    # Read here, not by load_module, so that a device or a pipe gets the same size cap as
    # every other command's input (`tileir run /dev/zero` is an error, not a MemoryError).
    src = read_input(path, allow_bytecode=True)
    try:
        if src.bytecode is not None:
            module = load_module(src.bytecode, name=src.name)
        else:
            # load_module takes a one-line string without `{` for a path: a newline says text.
            module = load_module(src.text if "\n" in src.text else src.text + "\n", name=src.name)
        entry = find_kernel(module, args.kernel)
    except LaunchError as exc:
        if exc.diagnostics:
            report(exc.diagnostics, Tally(), name="<stdin>" if path == "-" else path)
            err(f"{PROG} {command}: '{src.name}' has errors; {not_done}")
            return None
        if exc.kind == "kernel" and args.kernel is None:
            raise CliError(f"{exc.message} with -k") from None
        if exc.kind == "no kernel":
            raise CliError(f"{src.name}: {exc.message}; {not_done}") from None
        raise CliError(exc.message) from None
    return module, entry


def load_cutile_kernel(path: str, name: str | None, specs: list) -> tuple:
    """(module, entry, the positions of its `ct.Constant` arguments) of the cuTile Python kernel
    `name` (None: the only one) of the Python file `path`, exported by cuTile for the SPECs'
    shapes, dtypes and numbers (no array is made for it). Errors are usage errors, naming
    the file's line where it could not run or cuTile refused the kernel."""
    from compiler.runtime import LaunchError, find_kernel
    from compiler.runtime.argspec import SpecError
    from compiler.runtime.cutile import constant_positions, cutile_kernels_in, load_cutile

    try:
        kernels = cutile_kernels_in(path)
    except LaunchError as exc:
        raise CliError(exc.message) from None
    if not kernels:
        raise CliError(f"{path}: no cuTile kernel (a function decorated with @ct.kernel) in it")
    if name is None and len(kernels) > 1:
        raise CliError(f"{path} has {len(kernels)} cuTile kernels ({', '.join(kernels)}); name one with -k")
    name = name or next(iter(kernels))
    if name not in kernels:
        raise CliError(f"{path}: no cuTile kernel named {name!r}; it has {', '.join(kernels)}")
    try:
        placeholders = [spec.placeholder() for spec in specs]
    except SpecError as exc:
        raise CliError(str(exc)) from None
    try:
        module, _ = load_cutile(kernels[name], placeholders, name=f"{path}::{name}", contiguous=True)
        entry = find_kernel(module, None)
    except LaunchError as exc:
        raise CliError(exc.message) from None
    return module, entry, frozenset(constant_positions(kernels[name]))


def lowering_error(report: str) -> str:
    """A `LowerError`'s report as one diagnostic line: `file:line:col: error: <op>: message
    [target sm_90]` as it is, `tileir: error: message` when it names no place."""
    return f"{PROG}: {report}" if report.startswith("error: ") else report


def require_cache(what: str) -> None:
    """A usage error, before any work, where the compile cache (which every compile writes
    its generated source to) cannot be used: $TILEIR_CACHE_DIR naming a file, no rights."""
    from compiler.lower import LowerError
    from compiler.lower.cache import cache_root

    try:
        cache_root()
    except LowerError as exc:
        raise CliError(f"{what}: {exc.message}") from None


def add_flag(parser: argparse.ArgumentParser, name: str, help: str) -> None:
    """An MLIR-style long flag, accepted with one dash and with two."""
    parser.add_argument(f"--{name}", f"-{name}", action="store_true", help=help)


def add_verify_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target-version",
        "-target-version",
        metavar="VERSION",
        help="report ops, types and attributes newer than this bytecode version (e.g. 13.1)",
    )
    add_flag(parser, "no-verify", "parse only; skip the verifier")
