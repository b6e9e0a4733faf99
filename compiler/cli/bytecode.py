"""`tileir asm`, `tileir disasm` and `tileir translate`: Tile IR bytecode written and read."""

from __future__ import annotations

import argparse
import os
import sys

from .common import (
    EXIT_ERRORS,
    EXIT_OK,
    PROG,
    CliError,
    Tally,
    add_flag,
    chunks,
    decode_bytecode,
    ensure_newline,
    err,
    is_terminal,
    out,
    parse_and_verify,
    read_bytes,
    read_input,
    report,
    write_output,
)

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from compiler.ir.diagnostics import Diagnostic

_VERSIONS = "13.1, 13.2, 13.3 or 13.4"  # the bytecode versions `asm` writes, as the help names them


BYTECODE_SUFFIX = ".tileirbc"


def _bytecode_version(text: str | None, option: str, translate: bool = False):
    """The version `text` names (default: the current one), or a usage error that lists the
    versions that can be written (`translate`: NVIDIA's 13.3 tool's, test-only ones included)."""
    from compiler.bytecode import DEFAULT_WRITE, SUPPORTED, TEST_VERSIONS, TRANSLATE_VERSIONS, parse_version
    from compiler.bytecode.format import supported_range

    if text is None:
        return DEFAULT_WRITE
    production = TRANSLATE_VERSIONS if translate else SUPPORTED
    allowed = production + (TEST_VERSIONS if translate else ())
    version = parse_version(text)
    if version not in allowed:
        # cuda-tile-translate's wording (test/Bytecode/unsupportedVersionTest.mlir checks it).
        raise CliError(
            f"for the {option} option: Invalid argument '{text}': the supported versions are "
            f"{supported_range(production)}"
        )
    return version


def _encode(module, version, tally: Tally, name: str) -> bytes | None:
    """`module` as bytecode, or None after printing why it cannot be written."""
    from compiler.bytecode import BytecodeWriteError, write_bytecode

    try:
        return write_bytecode(module, version)
    except BytecodeWriteError as exc:
        report(exc.diagnostics, tally, name=name)
        return None


def command_asm(args: argparse.Namespace) -> int:
    version = _bytecode_version(args.bytecode_version, "--bytecode-version") if args.bytecode_version else None
    if args.output is None and args.file == "-":
        raise CliError("asm from standard input: name the output with -o (-o - for standard output)")
    src = read_input(args.file, allow_bytecode=True)
    if src.bytecode is not None:
        shown = "-" if src.path is None else src.name  # a command to run names stdin `-`
        raise CliError(f"'{src.name}' is already Tile IR bytecode (`{PROG} disasm {shown}` prints it)")
    if args.output == "-" and is_terminal(sys.stdout):
        raise CliError("asm writes bytecode, a binary file: name it with -o OUT (or redirect standard output)")
    output = args.output
    if output is None:
        assert src.path is not None
        output = os.path.splitext(src.path)[0] + BYTECODE_SUFFIX
        if os.path.abspath(output) == os.path.abspath(src.path):
            raise CliError(f"'{src.path}' already ends in {BYTECODE_SUFFIX}: name the output with -o")
    tally = Tally()
    result, diagnostics = parse_and_verify(src.text, src.name, args)
    if report(diagnostics, tally):
        err(f"{PROG} asm: '{src.name}' has errors; no bytecode written")
        return EXIT_ERRORS
    if version is None:  # the oldest from 13.3 on that expresses the module (13.4 for its ops)
        from compiler.bytecode import oldest_version

        version = oldest_version(result.module)
    data = _encode(result.module, version, tally, src.name)
    if data is None:
        err(f"{PROG} asm: '{src.name}' cannot be written as bytecode {args.bytecode_version or ''}".rstrip())
        return EXIT_ERRORS
    write_output(output, data)
    return EXIT_OK


def command_disasm(args: argparse.Namespace) -> int:
    from compiler.bytecode.disasm import disassembly, disassembly_in_parts

    name, data, _ = read_bytes(args.file)
    if not _bytecode_or_say(name, data):
        return EXIT_ERRORS
    # A big file in several processes (without debug info, whose aliases span the kernels);
    # one that cannot be read that way is read here, which says why.
    text = None if args.print_debug_info else disassembly_in_parts(data)
    if text is None:
        module = decode_bytecode(data, name)
        if module is None:
            return EXIT_ERRORS
        text = disassembly(module, debuginfo=args.print_debug_info)
    write_output(args.output or "-", text)
    return EXIT_OK


def _read_bytecode_file(path: str, versions=None):
    """The module of a bytecode file (or `-`), or None after printing why it cannot be read."""
    name, data, _ = read_bytes(path)
    if not _bytecode_or_say(name, data):
        return None
    return decode_bytecode(data, name, versions=versions)


def _bytecode_or_say(name: str, data: bytes) -> bool:
    """False after saying so when `data` is a text file: the user is told that rather than
    what is wrong with its first byte."""
    from compiler.bytecode import is_bytecode
    from compiler.bytecode.disasm import looks_like_text

    if not is_bytecode(data) and looks_like_text(data):
        err(
            f"{name}: error: this is a text file, not Tile IR bytecode (which starts with the bytes "
            f"7f 54 69 6c 65 49 52 00); `{PROG} check` and `{PROG} asm` take text"
        )
        return False
    return True


def command_translate(args: argparse.Namespace) -> int:
    from compiler.bytecode import TEST_VERSIONS, TRANSLATE_VERSIONS, version_text

    if args.list_versions:
        out("".join(version_text(v) + "\n" for v in TRANSLATE_VERSIONS + TEST_VERSIONS))
        return EXIT_OK
    if args.mode is None:
        raise CliError(
            "translate: choose a translation: -mlir-to-cudatilebc, -cudatilebc-to-mlir or -test-cudatile-roundtrip"
        )
    version = _bytecode_version(args.bytecode_version, "-bytecode-version", translate=True)
    if args.mode == "cudatilebc-to-mlir":
        return _translate_from_bytecode(args)
    return _translate_text(args, version)


def _translate_from_bytecode(args: argparse.Namespace) -> int:
    from compiler.bytecode import TRANSLATE_VERSIONS
    from compiler.text import PrintOptions, print_module

    module = _read_bytecode_file(args.file, TRANSLATE_VERSIONS)
    if module is None:
        return EXIT_ERRORS
    text = print_module(module, PrintOptions(debuginfo=args.mlir_print_debuginfo, keep_comments=False))
    write_output(args.output or "-", text)
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

    src = read_input(args.file, allow_bytecode=True)
    if src.bytecode is not None:
        raise CliError(f"'{src.name}' is Tile IR bytecode, not text: read it with -cudatilebc-to-mlir")
    whole = SourceFile(src.text, src.name)
    print_options = PrintOptions(debuginfo=args.mlir_print_debuginfo, keep_comments=False)
    tally = Tally()
    status = EXIT_OK
    texts: list[str] = []  # -test-cudatile-roundtrip: each chunk's module, read back
    blobs: list[bytes] = []  # -mlir-to-cudatilebc: each chunk's bytecode, written one after the other
    for chunk, offset in chunks(src.text, whole, args.split_input_file):
        result, diagnostics = parse_and_verify(chunk, src.name, args, keep_going=False)
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
            expected = check_expected(diagnostics, SourceFile(chunk, src.name))
            if report([d.moved(offset, whole) for d in expected.complaints], tally, name=src.name):
                status = EXIT_ERRORS
        elif report([d.moved(offset, whole) for d in diagnostics], tally, name=src.name):
            status = EXIT_ERRORS
    if texts:
        write_output(args.output or "-", "// -----\n".join(ensure_newline(t) for t in texts))
    elif blobs:
        # Like cuda-tile-translate, every chunk's output goes to the one output, in order.
        write_output(args.output or "-", b"".join(blobs))
    return status


# --------------------------------------------------------------------------------------------
# Arguments


def arguments_asm(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Parse and verify a text file (bare entries and globals, or one cuda_tile.module), then write it as "
        "Tile IR bytecode that NVIDIA's tools read. The output is replaced atomically."
    )
    parser.add_argument("file", metavar="FILE", help="a .tileir file, or - for stdin")
    parser.add_argument(
        "-o", dest="output", metavar="OUT", help="output (default: FILE with suffix .tileirbc; - for stdout)"
    )
    parser.add_argument(
        "--bytecode-version",
        metavar="V",
        help=f"the bytecode version to write: {_VERSIONS} (default: 13.3, or 13.4 for a module that uses 13.4's ops)",
    )
    add_flag(
        parser, "allow-unregistered-dialect", "accept operations of unknown dialects (the writer still refuses them)"
    )


def arguments_disasm(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print a Tile IR bytecode file as text, as NVIDIA's tileirdisasm prints it: the module's globals "
        "and entries, without the cuda_tile.module wrapper."
    )
    parser.add_argument("file", metavar="FILE", help="a .tileirbc file, or - for stdin")
    parser.add_argument("-o", dest="output", metavar="OUT", help="write the text here (default: stdout)")
    parser.add_argument(
        "-g", "--print-debug-info", action="store_true", help="print locations (the debug information), if present"
    )


def arguments_translate(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Text to bytecode and back, like NVIDIA's cuda-tile-translate. Long options are accepted with one dash or two."
    )
    parser.add_argument("file", nargs="?", default="-", metavar="FILE", help="input (default: -)")
    parser.add_argument("-o", dest="output", metavar="OUT", help="output file (default: stdout)")
    mode = parser.add_mutually_exclusive_group()
    for flag, dest_mode, what in (
        ("mlir-to-cudatilebc", "mlir-to-cudatilebc", "text to bytecode"),
        ("mlir-to-tilebc", "mlir-to-cudatilebc", "the same as -mlir-to-cudatilebc"),
        ("cudatilebc-to-mlir", "cudatilebc-to-mlir", "bytecode to text (the whole cuda_tile.module)"),
        ("tilebc-to-mlir", "cudatilebc-to-mlir", "the same as -cudatilebc-to-mlir"),
        ("test-cudatile-roundtrip", "test-cudatile-roundtrip", "text to bytecode to text in memory; print the result"),
    ):
        mode.add_argument(f"--{flag}", f"-{flag}", dest="mode", action="store_const", const=dest_mode, help=what)
    parser.add_argument(
        "--bytecode-version",
        "-bytecode-version",
        metavar="V",
        help="the bytecode version to write: 13.1, 13.2 or 13.3 (those of NVIDIA's cuda-tile-translate 13.3, "
        "which this command stands in for), or the test-only 250.0 / 250.1 (default: 13.3)",
    )
    add_flag(parser, "list-versions", "print the bytecode versions that can be written, one per line")
    add_flag(parser, "split-input-file", "translate each '// -----' chunk separately (errors go on to the next)")
    add_flag(parser, "verify-diagnostics", "check the diagnostics against the file's expected-* comments")
    add_flag(parser, "allow-unregistered-dialect", "accept operations of unknown dialects")
    add_flag(parser, "mlir-print-debuginfo", "print location information")
    add_flag(parser, "no-implicit-module", "accepted for compatibility; has no effect")
    parser.set_defaults(mode=None)
