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
    tileir cache [--clear | --trim [SIZE]]   show, trim or clear the compile cache
    tileir server start|stop|status          a compile server: compile, run, bench without Triton's start-up

`check` and `fmt` take bytecode files too (told by their magic number, not their suffix).

Exit status: 0 success; 1 the input has errors (or `fmt --check` found a file to reformat);
2 bad usage or an unreadable file; 3 an internal error (a bug: please report it).

Bad input never produces a Python traceback: the core returns diagnostics, and everything
else is caught here and turned into one line on stderr. Set `TILEIR_TRACEBACK=1` to see the
traceback of an internal error.

The package: this module parses the command line and runs one command; each command lives in
a module of its own group (`text`: check, fmt, opt; `bytecode`: asm, disasm, translate;
`launch`: run, bench; `compile`: compile, cache; `layout`) as `arguments_NAME(parser)`, which declares its
options, and `command_NAME(args)`, which runs it and returns the exit status. `common` holds
what they share: reading input, writing output, reporting diagnostics, CliError. Only the
module of the command being run is imported, and the core only as a command needs it, so
that `tileir --help` and `tileir check` start fast.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import NoReturn

# Every command, in the order `tileir --help` lists them: (the module of compiler.cli that
# implements it, its one-line help).
COMMANDS = {
    "check": ("text", "parse and verify files, report diagnostics"),
    "fmt": ("text", "print the canonical form"),
    "opt": ("text", "parse and print like cuda-tile-opt"),
    "asm": ("bytecode", "write a .tileir file as Tile IR bytecode"),
    "disasm": ("bytecode", "print a Tile IR bytecode file as text"),
    "translate": ("bytecode", "convert between text and bytecode like cuda-tile-translate"),
    "run": ("launch", "run a kernel: on the CPU interpreter, under Triton's interpreter, or on the GPU"),
    "bench": ("launch", "time a kernel on one or more backends"),
    "compile": (
        "compile",
        "compile a kernel to PTX (or Triton, TTIR, TTGIR, LLVM IR, cubin, SASS) through Triton, or "
        "with NVIDIA's tileiras",
    ),
    "layout": ("layout", "show how views tile their tensors (index spaces, pictures)"),
    "cache": ("compile", "show, trim or clear the compile cache"),
    "server": ("server", "start, stop or show the compile server, which keeps Triton loaded for compile, run, bench"),
}

# What a running compile server runs for the `tileir` program (compiler/cli/server.py).
SERVED_COMMANDS = frozenset({"compile", "run", "bench"})

# These build one module and print or encode it: nothing they make is cyclic garbage, and the
# garbage collector would rescan the whole module many times (a third of their time).
ACYCLIC_COMMANDS = frozenset({"asm", "disasm", "check", "fmt", "translate", "opt"})


class _ArgparseExit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _parser_class() -> type:
    """argparse's parser, reporting errors in one line and never calling `sys.exit` itself.
    Made on first use: importing argparse costs ~10 ms, which a `tileir compile` that a
    compile server runs (compiler/cli/server.py) does not pay."""
    import argparse

    from .common import EXIT_USAGE

    class ArgumentParser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
            raise _ArgparseExit(EXIT_USAGE)

        def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
            if message:
                sys.stderr.write(message)
            raise _ArgparseExit(status)

    return ArgumentParser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `command`, only that command's arguments are built
    (building every command's was a fifth of a one-file `check`): the others are listed,
    for `--help` and the choice check, and rejected if given."""
    from compiler import __version__

    from .common import PROG

    parser_class = _parser_class()
    parser = parser_class(
        prog=PROG,
        description="Tools for NVIDIA CUDA Tile IR (the cuda_tile MLIR dialect).",
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=parser_class)
    for name, (module_name, help_text) in COMMANDS.items():
        if command is not None and name != command:
            sub.add_parser(name, help=help_text, add_help=False)
            continue
        module = importlib.import_module(f"{__name__}.{module_name}")
        command_parser = sub.add_parser(name, help=help_text, allow_abbrev=False)
        getattr(module, f"arguments_{name}")(command_parser)
        # main reports stray arguments with the command's parser, whose help is the one to read
        command_parser.set_defaults(func=getattr(module, f"command_{name}"), command_parser=command_parser)
    return parser


def command_word(argv: Sequence[str]) -> str | None:
    """The command of a `tileir` command line: its first word that is not an option (the top
    level has no option with a value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def has_command(name: str) -> bool:
    """Whether `tileir NAME` exists (e.g. `translate`, which arrives with bytecode support)."""
    return name in COMMANDS


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `tileir` command line; return the exit status."""
    # (imported here: a `tileir compile` that a compile server runs needs none of it)
    from .common import (
        EXIT_ERRORS,
        EXIT_INTERNAL,
        EXIT_USAGE,
        ISSUES_URL,
        PROG,
        CliError,
        err,
        flush_stdout,
        silence_stdout,
    )

    try:
        argv = list(argv) if argv is not None else sys.argv[1:]
        command = command_word(argv)  # only its arguments are built
        parser = build_parser(command if command in COMMANDS else None)
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
        if args.command in ACYCLIC_COMMANDS:
            # These build one module and print or encode it: nothing they make is cyclic garbage,
            # and the collector would rescan the whole module many times (a third of the time).
            gc.disable()
        status = int(args.func(args))
        flush_stdout()  # a write error (a full disk) must not pass for success
        return status
    except CliError as exc:
        err(f"{PROG}: error: {exc}")
        return exc.status
    except KeyboardInterrupt as exc:
        # A launch on the interpreter says where it was (compiler.interp.InterruptedLaunch).
        where = exc.report() if hasattr(exc, "report") else ""
        err(f"{PROG}: interrupted{f': {where}' if where else ''}")
        return 130
    except BrokenPipeError:
        # The reader went away (`tileir fmt big.tileir | head`): not an error of ours.
        silence_stdout()
        return EXIT_ERRORS
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        if os.environ.get("TILEIR_TRACEBACK"):
            import traceback

            traceback.print_exc()
        err(
            f"{PROG}: internal error: {type(exc).__name__}: {exc} "
            f"(this is a bug; please report it to {ISSUES_URL} with the input file)"
        )
        return EXIT_INTERNAL


def run() -> NoReturn:  # pragma: no cover - measured through the `tileir` processes the tests start
    """The `tileir` program: a command that a compile server serves (compiler/cli/server.py)
    goes to the server where one runs and takes it, else `main` runs here (and may start a
    server for the next ones: server.autostart); then `finish`."""
    argv = sys.argv[1:]
    # Triton finds its backends through every installed distribution's entry points unless
    # told to take its own (in-tree) ones, which hold the CUDA backend we compile with: the
    # scan costs a process that imports Triton 15-20 ms (benchmarks/compile.py's cold column).
    # Set for this program only, not on importing the package; the user's own setting wins.
    os.environ.setdefault("TRITON_BACKENDS_IN_TREE", "1")
    if command_word(argv) not in SERVED_COMMANDS:  # (the server module is imported for these alone)
        finish(main(argv))
    from .server import autostart, forward

    status = forward(argv)
    if status is not None:
        finish(status)
    status = main(argv)
    autostart(argv)  # (where this process paid Triton's start-up: the next commands need not)
    finish(status)


def finish(status: int, report: Callable[[int], None] | None = None) -> NoReturn:
    """Exit with `status` without the interpreter's teardown, which frees every object one by
    one for nothing: 30-110 ms after `check` of 7,000 lines, 200-400 ms at 30,000, about 60 ms
    after a `compile` that imported Triton (measured). What must happen at exit still does:
    the functions registered with `atexit` run (logging's flush, temporary directories'
    removal), and the standard streams are flushed; then `report(status)` (a compile
    server's worker tells its caller). Where another thread that is no daemon is alive the
    process exits normally, so that Python waits for it (a daemon, such as a Triton compile
    left behind by Ctrl-C or its time limit, is not waited for)."""
    threading = sys.modules.get("threading")
    if threading is not None and any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        raise SystemExit(status)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken pipe: main has already said what it could
    if report is not None:
        report(status)
    os._exit(status)
