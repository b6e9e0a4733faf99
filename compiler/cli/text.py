"""`tileir check`, `tileir fmt` and `tileir opt`: Tile IR text parsed, verified, printed."""

from __future__ import annotations

import argparse

from compiler.ir.files import write_atomic

from .common import (
    EXIT_ERRORS,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CliError,
    Decoded,
    Tally,
    add_flag,
    add_verify_flags,
    chunks,
    decode_bytecode,
    ensure_newline,
    err,
    out,
    parse_and_verify,
    parsed_files,
    plural,
    read_input,
    report,
    verify_module,
    verify_options,
)

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from compiler.ir.diagnostics import Diagnostic


def command_check(args: argparse.Namespace) -> int:
    from compiler.verify import check_text_in_parts

    def in_parts(text: str, name: str) -> bool | None:
        if getattr(args, "no_verify", False):
            return None
        return check_text_in_parts(text, name, verify_options(args), args.allow_unregistered_dialect)

    tally = Tally()
    for _ in parsed_files(args, tally, in_parts=in_parts):
        pass
    status = tally.status
    if not args.quiet:
        n = len(args.files)
        if tally.errors or tally.warnings:
            err(
                f"{PROG} check: {plural(tally.errors, 'error')}, "
                f"{plural(tally.warnings, 'warning')} in {plural(n, 'file')}"
            )
        elif status == EXIT_OK:
            out(f"{PROG} check: {plural(n, 'file')} ok\n")
    return status


def command_fmt(args: argparse.Namespace) -> int:
    from compiler.text import PrintOptions, parts, print_module

    if args.check and args.in_place:
        raise CliError("--check and -i cannot be used together")
    if args.in_place and "-" in args.files:
        raise CliError("-i cannot rewrite standard input")
    print_options = PrintOptions(keep_comments=True)
    tally = Tally()
    would_change: list[str] = []
    rewritten: list[str] = []

    # Like any formatter, fmt needs the syntax right, not the semantics: `tileir check` verifies.
    def in_parts(text: str, name: str) -> str | None:
        return parts.format_text(text, name, print_options, args.allow_unregistered_dialect)

    for src, result, has_errors in parsed_files(args, tally, verify=False, in_parts=in_parts):
        if has_errors:
            err(f"{PROG} fmt: '{src.name}' has errors; not formatted")
            continue
        if src.bytecode is not None and (args.check or args.in_place):
            # Bytecode has no text to compare with or to rewrite: only printing it makes sense.
            option = "--check" if args.check else "-i"
            err(
                f"{PROG}: error: fmt {option}: '{src.name}' is Tile IR bytecode, not text; "
                f"print it with `{PROG} fmt {src.name}` or `{PROG} disasm {src.name}`"
            )
            tally.worsen(EXIT_USAGE)
            continue
        formatted = result if isinstance(result, str) else print_module(result.module, print_options)
        if args.check:
            if formatted != src.text:
                would_change.append(src.name)
                err(f"would reformat {src.name}")
                tally.worsen(EXIT_ERRORS)
        elif args.in_place:
            assert src.path is not None
            if formatted != src.text:
                try:
                    write_atomic(src.path, formatted)
                except OSError as exc:
                    err(f"{PROG}: error: cannot write '{src.path}': {exc.strerror or exc}")
                    tally.worsen(EXIT_USAGE)
                    continue
                rewritten.append(src.name)
        else:
            out(formatted)
    status = tally.status
    if args.check and not args.quiet:
        n = len(args.files)
        if would_change:
            err(f"{plural(len(would_change), 'file')} would be reformatted")
        elif status == EXIT_OK:
            err(f"{plural(n, 'file')} already formatted")
    if args.in_place and not args.quiet and rewritten:
        err(f"{plural(len(rewritten), 'file')} reformatted")
    return status


def command_opt(args: argparse.Namespace) -> int:
    src = read_input(args.file, allow_bytecode=True)
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
    tally = Tally()
    outputs: list[str] = []
    status = EXIT_OK
    if src.bytecode is not None:
        # Bytecode is one module and has no expected-* comments: --split-input-file has
        # nothing to split, and -verify-diagnostics nothing to check against.
        if args.verify_diagnostics:
            raise CliError(f"-verify-diagnostics: '{src.name}' is Tile IR bytecode, which has no expected-* comments")
        module = decode_bytecode(src.bytecode, src.name, tally)
        if module is None:
            return EXIT_ERRORS
        result, diagnostics = _opt_passes(Decoded(module), verify_module(module, args, keep_going=False), args)
        if report(diagnostics, tally, name=src.name):
            status = EXIT_ERRORS
        else:
            outputs.append(print_module(result.module, print_options))
    whole = SourceFile(src.text, src.name)
    for chunk, offset in chunks(src.text, whole, args.split_input_file) if src.bytecode is None else ():
        # Like cuda-tile-opt, stop each kernel at its first error.
        result, diagnostics = opt_diagnostics(chunk, src.name, args)
        if args.verify_diagnostics:
            # The diagnostics are the expected output: only mismatches are reported.
            expected = check_expected(diagnostics, SourceFile(chunk, src.name))
            if report([d.moved(offset, whole) for d in expected.complaints], tally):
                status = EXIT_ERRORS
            continue
        if report([d.moved(offset, whole) for d in diagnostics], tally):
            status = EXIT_ERRORS
        if has_errors(diagnostics):
            continue
        outputs.append(print_module(result.module, print_options))
    if args.verify_diagnostics:
        return status
    if not outputs and status != EXIT_OK:
        return status  # like mlir-opt: no output at all when nothing could be parsed
    text = "// -----\n".join(ensure_newline(o) for o in outputs)
    if args.output in (None, "-"):
        out(text)
    else:
        try:
            write_atomic(args.output, text)
        except OSError as exc:
            raise CliError(f"cannot write '{args.output}': {exc.strerror or exc}") from None
    return status


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
    result, diagnostics = parse_and_verify(text, name, args, keep_going=False)
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


# --------------------------------------------------------------------------------------------
# Arguments


def arguments_check(parser: argparse.ArgumentParser) -> None:
    parser.description = "Parse and verify each file; print its diagnostics as path:line:col: error: message."
    parser.add_argument("files", nargs="+", metavar="FILE", help="a .tileir file, or - for stdin")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    add_flag(parser, "allow-unregistered-dialect", "accept operations of unknown dialects")
    add_flag(parser, "Wunsupported-hints", "warn about unknown or invalid optimization hints")
    add_flag(parser, "Werr-hints", "with -Wunsupported-hints: make those warnings errors")
    add_verify_flags(parser)


def arguments_fmt(parser: argparse.ArgumentParser) -> None:
    parser.description = "Print each file in canonical form (comments are kept)."
    parser.add_argument("files", nargs="+", metavar="FILE", help="a .tileir file, or - for stdin")
    parser.add_argument("--check", action="store_true", help="exit 1 and name the files that would change")
    parser.add_argument("-i", "--in-place", action="store_true", help="rewrite the files in place (atomically)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    add_flag(parser, "allow-unregistered-dialect", "accept operations of unknown dialects")


def arguments_opt(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Parse a module and print it, like cuda-tile-opt / mlir-opt. Long options are accepted with one dash or two."
    )
    parser.add_argument("file", nargs="?", default="-", metavar="FILE", help="input (default: -)")
    parser.add_argument("-o", dest="output", metavar="OUT", help="output file (default: stdout)")
    add_flag(parser, "split-input-file", "process each '// -----' chunk separately")
    add_flag(parser, "mlir-print-op-generic", "print operations in the generic form")
    add_flag(parser, "mlir-print-debuginfo", "print location information")
    add_flag(parser, "allow-unregistered-dialect", "accept operations of unknown dialects")
    add_flag(parser, "verify-diagnostics", "check the diagnostics against the file's expected-* comments")
    add_flag(parser, "canonicalize", "fold and simplify with the canonicalization rewrites (compiler/transform)")
    add_flag(parser, "Wunsupported-hints", "warn about unknown or invalid optimization hints")
    add_flag(parser, "Werr-hints", "with -Wunsupported-hints: make those warnings errors")
    add_verify_flags(parser)
    add_flag(parser, "no-implicit-module", "accepted for compatibility; has no effect")
    add_flag(
        parser,
        "default-names",
        "print MLIR's default SSA names (%%0, %%cst_1_i32, %%arg0) instead of the source's, as cuda-tile-opt does",
    )
    parser.add_argument(
        "--test-debuginfo-update-symbol-name",
        "-test-debuginfo-update-symbol-name",
        metavar="OPTIONS",
        help=(
            "rename a symbol with its uses and debug-info linkage name, as cuda-tile-opt's test pass: "
            "'symbol-to-rename=A::B [scope=A] new-name=C [update-uses=true]'"
        ),
    )
