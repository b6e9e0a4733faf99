"""The `tileir` command line.

    tileir check FILE...                     parse and verify files, report diagnostics
    tileir fmt [--check | -i] FILE...        print the canonical form
    tileir opt [FILE|-] [-o OUT] [...]       a `cuda-tile-opt` / `mlir-opt` look-alike
    tileir run FILE --grid X[,Y[,Z]] --arg SPEC...   run a kernel on the CPU interpreter

Exit status: 0 success; 1 the input has errors (or `fmt --check` found a file to reformat);
2 bad usage or an unreadable file; 3 an internal error (a bug: please report it).

Bad input never produces a Python traceback: the core returns diagnostics, and everything
else is caught here and turned into one line on stderr. Set `TILEIR_TRACEBACK=1` to see the
traceback of an internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn, TextIO

if TYPE_CHECKING:  # the core is imported lazily so that `tileir --help` stays fast
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


@dataclass(slots=True)
class _Input:
    name: str  # as shown in diagnostics
    text: str
    path: str | None  # None for stdin


def _decode(data: bytes, name: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"cannot read '{name}': not valid UTF-8 (byte {exc.start}: {data[exc.start]:#04x})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def _read_input(path: str) -> _Input:
    if path == "-":
        stream = sys.stdin
        if stream is None or getattr(stream, "closed", False):
            raise CliError("cannot read '<stdin>': standard input is closed")
        try:
            buffer = getattr(stream, "buffer", None)
            data = buffer.read() if buffer is not None else stream.read().encode("utf-8")
        except (OSError, ValueError) as exc:
            raise CliError(f"cannot read '<stdin>': {exc}") from None
        return _Input("<stdin>", _decode(data, "<stdin>"), None)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except IsADirectoryError:
        raise CliError(f"cannot read '{path}': is a directory") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise CliError(f"cannot read '{path}': {reason}") from None
    return _Input(path, _decode(data, path), path)


def _write(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
    except UnicodeEncodeError:
        # A terminal or pipe whose encoding cannot hold the text: send UTF-8 bytes instead.
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            stream.write(text.encode("ascii", "backslashreplace").decode("ascii"))
        else:
            buffer.write(text.encode("utf-8"))
            buffer.flush()


def _out(text: str) -> None:
    _write(sys.stdout, text)


def _err(text: str) -> None:
    _write(sys.stderr, text if text.endswith("\n") else text + "\n")


def write_atomic(path: str, text: str) -> None:
    """Replace `path` by `text` atomically: a temporary file in the same directory, fsync,
    `os.replace`. The file's mode is kept; a symbolic link is followed, not replaced."""
    target = os.path.realpath(path)
    directory = os.path.dirname(target) or "."
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        # A new file gets the mode `open()` would give it, not mkstemp's 0600.
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
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


@dataclass(slots=True)
class _Tally:
    errors: int = 0
    warnings: int = 0
    status: int = EXIT_OK  # the worst exit status so far

    def worsen(self, status: int) -> None:
        self.status = max(self.status, status)


def _report(diagnostics: Sequence[Diagnostic], tally: _Tally, snippet: bool = True) -> bool:
    """Print diagnostics to stderr; return True if any is an error."""
    from compiler.ir.diagnostics import Severity

    has_error = False
    for diag in diagnostics:
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


def _parsed_files(args: argparse.Namespace, tally: _Tally, verify: bool = True):
    """Each file of `args.files` read, parsed and (with `verify`) verified, its diagnostics
    printed, as (input, result, has_errors); a file that cannot be read is reported and skipped."""
    for path in args.files:
        try:
            src = _read_input(path)
        except CliError as exc:
            _err(f"{PROG}: error: {exc}")
            tally.worsen(exc.status)
            continue
        result, diagnostics = _parse_and_verify(src.text, src.name, args, verify=verify)
        has_errors = _report(diagnostics, tally)
        if has_errors:
            tally.worsen(EXIT_ERRORS)
        yield src, result, has_errors


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# --------------------------------------------------------------------------------------------
# tileir check


def _cmd_check(args: argparse.Namespace) -> int:
    tally = _Tally()
    for _ in _parsed_files(args, tally):
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
    from compiler.text import PrintOptions, print_module

    if args.check and args.in_place:
        raise CliError("--check and -i cannot be used together")
    if args.in_place and "-" in args.files:
        raise CliError("-i cannot rewrite standard input")
    print_options = PrintOptions(keep_comments=True)
    tally = _Tally()
    would_change: list[str] = []
    rewritten: list[str] = []
    # Like any formatter, fmt needs the syntax right, not the semantics: `tileir check` verifies.
    for src, result, has_errors in _parsed_files(args, tally, verify=False):
        if has_errors:
            _err(f"{PROG} fmt: '{src.name}' has errors; not formatted")
            continue
        formatted = print_module(result.module, print_options)
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
    src = _read_input(args.file)
    from compiler.ir.diagnostics import has_errors
    from compiler.ir.source import SourceFile
    from compiler.text import PrintOptions, print_module, split_input
    from compiler.verify.expected import check_expected

    print_options = PrintOptions(
        generic=args.mlir_print_op_generic,
        debuginfo=args.mlir_print_debuginfo,
        keep_comments=False,
    )
    _rename_options(args.test_debuginfo_update_symbol_name)  # bad options fail before any work
    if args.split_input_file:
        chunks = split_input(src.text)
    else:
        chunks = [(src.text, 0)]
    tally = _Tally()
    outputs: list[str] = []
    status = EXIT_OK
    for chunk, line_offset in chunks:
        # Pad with the lines before the chunk so that every location (and snippet) is
        # numbered as in the original file.
        padded = "\n" * line_offset + chunk
        # Like cuda-tile-opt, stop each kernel at its first error.
        result, diagnostics = opt_diagnostics(padded, src.name, args)
        if args.verify_diagnostics:
            # The diagnostics are the expected output: only mismatches are reported.
            report = check_expected(diagnostics, SourceFile(padded, src.name), line_offset)
            if _report(report.complaints, tally):
                status = EXIT_ERRORS
            continue
        if _report(diagnostics, tally):
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


def opt_diagnostics(text: str, name: str, args: argparse.Namespace):
    """What `tileir opt` does to one module (one chunk with --split-input-file): parse,
    verify stopping each kernel at its first error as cuda-tile-opt does, run the requested
    pass. Returns (parse result, diagnostics). The conformance harness calls this too."""
    from compiler.ir.diagnostics import has_errors

    result, diagnostics = _parse_and_verify(text, name, args, keep_going=False)
    rename = _rename_options(args.test_debuginfo_update_symbol_name)
    if rename is not None and not has_errors(diagnostics):
        diagnostics += _rename_symbol(result.module, rename)
    return result, diagnostics


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
# tileir run


def _cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    from compiler.interp import InterpError, RunOptions
    from compiler.runtime import LaunchError, find_kernel, kernel_name, launch, load_module, signature
    from compiler.runtime.argspec import (
        SpecError,
        parse_check,
        parse_grid,
        parse_spec,
        run_check,
        save_npy_atomic,
        summarize,
    )

    try:
        specs = [parse_spec(a) for a in args.arg]
        grid = parse_grid(args.grid)
        checks = [parse_check(c) for c in args.check]
    except SpecError as exc:
        raise CliError(str(exc)) from None
    try:
        if args.file == "-":
            src = _read_input("-")
            module = load_module(src.text, name=src.name)
        else:
            module = load_module(args.file)
        entry = find_kernel(module, args.kernel)
    except LaunchError as exc:
        if exc.diagnostics:
            _report(exc.diagnostics, _Tally())
            _err(f"{PROG} run: '{args.file}' has errors; not run")
            return EXIT_ERRORS
        raise CliError(exc.message) from None
    rng = np.random.default_rng(args.seed)
    try:
        values = [spec.make(rng) for spec in specs]
    except SpecError as exc:
        raise CliError(str(exc)) from None
    before = [v.copy() if isinstance(v, np.ndarray) else v for v in values] if checks else []
    options = RunOptions(check_races=not args.no_race_check)
    try:
        result = launch(module, kernel_name(entry), grid, values, cutile=args.cutile_args, options=options)
    except LaunchError as exc:
        message = exc.message
        if exc.kind == "count" and not args.cutile_args and any(s.is_array for s in specs):
            message += " (with --cutile-args, each array argument is passed as pointer, shape, strides)"
        raise CliError(message) from None
    except InterpError as exc:
        _err(str(exc))
        _err(f"{PROG} run: kernel {signature(entry).partition('(')[0]} failed")
        return EXIT_ERRORS
    if not args.quiet:
        grid_text = "x".join(str(d) for d in result.grid)
        _out(
            f"kernel @{result.kernel}  grid {grid_text} ({_plural(result.num_blocks, 'tile block')})  "
            f"backend {result.backend}  time {result.time:.3f} s\n"
        )
        for i, v in enumerate(values):
            text = summarize(v) if isinstance(v, np.ndarray) else f"scalar {v!r}"
            _out(f"  arg{i}  {text}\n")
    if args.save is not None:
        try:
            os.makedirs(args.save, exist_ok=True)
            saved = 0
            for i, v in enumerate(values):
                if isinstance(v, np.ndarray):
                    save_npy_atomic(os.path.join(args.save, f"arg{i}.npy"), v)
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


# --------------------------------------------------------------------------------------------
# Argument parsing


def _flag(parser: argparse.ArgumentParser, name: str, help: str) -> None:
    """An MLIR-style long flag, accepted with one dash and with two."""
    parser.add_argument(f"--{name}", f"-{name}", action="store_true", help=help)


def _verify_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target-version",
        metavar="VERSION",
        help="report ops, types and attributes newer than this bytecode version (e.g. 13.1)",
    )
    parser.add_argument("--no-verify", action="store_true", help="parse only; skip the verifier")


def build_parser() -> argparse.ArgumentParser:
    from compiler import __version__

    parser = _ArgumentParser(
        prog=PROG,
        description="Tools for NVIDIA CUDA Tile IR (the cuda_tile MLIR dialect).",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)

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
    _flag(opt, "Wunsupported-hints", "warn about unknown or invalid optimization hints")
    _flag(opt, "Werr-hints", "with -Wunsupported-hints: make those warnings errors")
    _verify_flags(opt)
    _flag(opt, "no-implicit-module", "accepted for compatibility; has no effect")
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

    run = sub.add_parser(
        "run",
        help="run a kernel on the CPU interpreter",
        description=(
            "Run a kernel on the CPU interpreter with arguments made from SPECs, print a summary of "
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
    run.add_argument("file", metavar="FILE", help="a .tileir text or .tileirbc bytecode file, or - for stdin")
    run.add_argument("-k", "--kernel", metavar="K", help="the entry to run (default: the only one)")
    run.add_argument("--grid", required=True, metavar="X[,Y[,Z]]", help="the number of tile blocks")
    run.add_argument(
        "--arg", action="append", default=[], metavar="SPEC", help="one argument, in order (repeat the option)"
    )
    run.add_argument(
        "--cutile-args",
        action="store_true",
        help="cuTile's calling convention: each array --arg is passed as pointer, extents, strides (in elements)",
    )
    run.add_argument("--seed", type=int, default=0, help="seed of rand: SPECs (default 0)")
    run.add_argument(
        "--save", metavar="DIR", help="write each array argument after the run as DIR/arg<i>.npy (i: its --arg index)"
    )
    run.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="'argN = EXPR'",
        help=(
            "after the run, argN must match EXPR, a NumPy expression (np, ml_dtypes) over arg0, arg1, ... "
            "as they were before the run; within a tolerance set by argN's dtype (exit 1 if not)"
        ),
    )
    run.add_argument("--rtol", type=float, metavar="R", help="relative tolerance of --check (default: by dtype)")
    run.add_argument("--atol", type=float, metavar="A", help="absolute tolerance of --check (default: by dtype)")
    run.add_argument("--no-race-check", action="store_true", help="do not report unordered store/access races")
    run.add_argument("-q", "--quiet", action="store_true", help="print only errors and failed checks")
    run.set_defaults(func=_cmd_run)
    return parser


def has_command(name: str) -> bool:
    """Whether `tileir NAME` exists (e.g. `translate`, which arrives with bytecode support)."""
    for action in build_parser()._actions:  # noqa: SLF001 - argparse has no public accessor
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict) and name in choices:
            return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `tileir` command line; return the exit status."""
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(list(argv) if argv is not None else None)
        except _ArgparseExit as exc:
            return exc.status
        if getattr(args, "func", None) is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return int(args.func(args))
    except CliError as exc:
        _err(f"{PROG}: error: {exc}")
        return exc.status
    except KeyboardInterrupt:
        _err(f"{PROG}: interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (`tileir fmt big.tileir | head`): not an error of ours.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
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


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
