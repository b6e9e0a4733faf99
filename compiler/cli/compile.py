"""`tileir compile`: a kernel lowered to Triton and compiled for one or several GPU
architectures, to Triton source, TTIR, TTGIR, LLVM IR, PTX, a cubin or SASS; or, with
`--compiler tileiras`, the module's bytecode compiled by NVIDIA's tileiras to a cubin or SASS,
to read beside ours."""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import re
import sys
import time

from .common import (
    EXIT_ERRORS,
    EXIT_INTERNAL,
    EXIT_OK,
    PROG,
    CliError,
    err,
    is_terminal,
    load_kernel,
    lowering_error,
    require_cache,
    write_output,
    write_text,
)
from .server import add_server_flag

# What `tileir compile --emit` writes, with the suffix of its file when several go into a directory.
EMIT_SUFFIXES = {
    "triton": ".py",
    "ttir": ".ttir",
    "ttgir": ".ttgir",
    "llir": ".ll",
    "ptx": ".ptx",
    "cubin": ".cubin",
    "sass": ".sass",
    "ops": ".ops",
}
EMIT_KINDS = tuple(EMIT_SUFFIXES)
COMPILERS = ("triton", "tileiras")
# tileiras compiles bytecode straight to a cubin: its forms, the first the default.
TILEIRAS_EMITS = ("sass", "cubin")
# compiler.lower.DEFAULT_ARCH, the target without a visible GPU: repeated here so that `--help`
# need not import the lowering (a test keeps the two equal).
FALLBACK_ARCH = "sm_90"


def _compile_targets(args: argparse.Namespace) -> list:
    """The Targets of --arch, one or several separated by commas (default: the local GPU's,
    else sm_90), in order, each once; a usage error for an empty or unknown one."""
    from compiler.lower import LowerError, Target
    from compiler.lower.targets import arch_problem, default_arch

    names = [None] if args.arch is None else [name.strip() for name in args.arch.split(",")]
    if "" in names:
        raise CliError(
            f"--arch {args.arch!r}: an empty architecture; name one or several, e.g. sm_90 or sm_80,sm_90,sm_100 "
            "(or leave --arch out: the local GPU's, else sm_90)"
        )
    targets = []
    for name in dict.fromkeys(names):
        arch = name or default_arch()
        try:
            target = Target.parse(arch)
        except LowerError as exc:
            if args.compiler == "tileiras":  # (its floor is the lowering's, sm_80; the wording is Triton's)
                from compiler.runtime.tileiras import MIN_SM

                raise CliError(f"--arch {arch}: tileiras compiles for sm_{MIN_SM} and newer, e.g. sm_90") from None
            raise CliError(f"--arch: {exc.message}") from None
        problem = arch_problem(target.cc) if args.emit != "triton" and args.compiler == "triton" else None
        if problem is not None:
            raise CliError(f"--arch {arch}: {problem}")
        targets.append(target)
    return targets


def _check_compile_options(args: argparse.Namespace) -> None:
    from compiler.lower.build import option_problem

    if args.jobs < 1:
        raise CliError(f"-j {args.jobs}: give 1 or more worker processes")
    if args.arg and not all(path.endswith(".py") for path in args.file):
        raise CliError("--arg: the arguments of a cuTile kernel of a .py file, which a Tile IR file has no use for")
    if args.compiler == "tileiras":
        if args.emit is not None and args.emit not in TILEIRAS_EMITS:
            raise CliError(
                f"--emit {args.emit}: tileiras compiles the bytecode straight to a cubin; give --emit sass or cubin "
                f"({args.emit} is Triton's: leave --compiler out)"
            )
        for flag, value in (("--num-warps", args.num_warps), ("--num-stages", args.num_stages)):
            if value is not None:
                raise CliError(f"{flag}: an option of the Triton lowering; tileiras chooses its own")
    args.emit = args.emit or ("ptx" if args.compiler == "triton" else TILEIRAS_EMITS[0])

    for flag, value in (("--num-warps", args.num_warps), ("--num-stages", args.num_stages)):
        problem = option_problem(flag[2:].replace("-", "_"), value) if value is not None else None
        if problem is not None:
            raise CliError(f"{flag} {value}: {problem}")
    if args.output not in (None, "-") and any(
        path != "-" and os.path.realpath(args.output) == os.path.realpath(path) for path in args.file
    ):
        raise CliError(f"-o {args.output} would replace the input file")
    if args.emit == "cubin" and args.output in (None, "-") and is_terminal(sys.stdout):
        raise CliError("--emit cubin writes a binary file: name it with -o OUT (or redirect standard output)")


def command_compile(args: argparse.Namespace) -> int:
    from compiler.lower import LowerError
    from compiler.lower.build import require_triton
    from compiler.lower.guard import time_limit

    _check_compile_options(args)
    if args.compiler == "tileiras":
        require_cache("--compiler tileiras")
    elif args.emit != "triton":
        try:
            require_triton()
            time_limit()  # a bad $TILEIR_COMPILE_TIMEOUT is a usage error, said before any work
        except LowerError as exc:
            raise CliError(f"--emit {args.emit}: {exc.message}") from None
        require_cache(f"--emit {args.emit}")
    targets = _compile_targets(args)
    if len(args.file) * len(targets) > 1:
        return _compile_batch(args, targets)  # (the collector on: each kernel's module is garbage once compiled)
    # One kernel: Triton's import and compile make cyclic garbage, but the process (or the compile
    # server's worker) ends soon after. Without the collector a cold compile runs 2-3 % fewer
    # instructions (benchmarks/instructions.py: 0.976 samples/softmax, 0.975 the vector add) at
    # the same peak memory (examples/matmul 112 MB either way).
    gc.disable()
    loaded = load_kernel(args, "compile", "not compiled", args.file[0])
    if loaded is None:
        return EXIT_ERRORS
    status, output, summary = _compile_one(args, *loaded, targets[0])
    if output is not None:
        write_output(args.output or "-", output)
        if not args.quiet:
            err(summary)
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
        kernel = load_kernel(args, "compile", "not compiled", path)
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
        destination = os.path.join(out_dir, f"{stem_of[path]}.{target.arch}{EMIT_SUFFIXES[args.emit]}")
        write_output(destination, output)
        if not args.quiet:
            err(f"{destination}: {summary}")
    return status


def _compile_in_processes(args: argparse.Namespace, tasks: list, jobs: int):
    """The results of `_compile_one` for `tasks`, computed by `jobs` worker processes (each
    pays Triton's start-up once), in the tasks' order; what a worker reported is printed
    before its result is used, so the output reads as a serial run's."""
    import concurrent.futures
    import multiprocessing

    options = {
        name: getattr(args, name)
        for name in ("kernel", "arg", "emit", "compiler", "num_warps", "num_stages", "no_cache")
    }
    # fork where this process holds no other thread (the pool forks its workers before it
    # starts its own): the workers inherit what is imported, and in a compile server's worker
    # (compiler/cli/server.py) that is Triton, warm; else spawn, a fresh interpreter per worker.
    import threading

    method = "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() else "spawn"
    pool = concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method))
    try:
        futures = [pool.submit(_compile_task, path, target.arch, options) for path, _, target in tasks]
        for future in futures:
            done, output, summary, reported = future.result()
            if reported:
                write_text(sys.stderr, reported)
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
            loaded = load_kernel(args, "compile", "not compiled", path)
            if loaded is None:
                return EXIT_ERRORS, None, "", reported.getvalue()
            done, output, summary = _compile_one(args, *loaded, Target.parse(arch))
        except CliError as exc:
            err(f"{PROG}: error: {exc}")
            done, output, summary = exc.status, None, ""
    return done, output, summary, reported.getvalue()


def _compile_one(args: argparse.Namespace, module, entry, target) -> tuple[int, str | bytes | None, str]:
    """(exit status, the output or None, the summary line) of `entry` compiled for `target`;
    a failure is reported here."""
    from compiler.lower import LowerError, compile_source, disassemble, lower

    if args.compiler == "tileiras":
        return _compile_tileiras(args, module, entry, target)
    start = time.perf_counter()
    options = {"num_warps": args.num_warps, "num_stages": args.num_stages}
    try:
        source = lower(module, entry, target, options)
    except LowerError as exc:
        err(lowering_error(exc.report()))  # an op or type the target cannot do
        return EXIT_ERRORS, None, ""
    compiled = None
    if args.emit == "triton":
        output: str | bytes = source.text
        elapsed = time.perf_counter() - start
        for note in source.notes:  # a hint not applied as asked (lower/codegen.py's launch_plan)
            err(note)
    else:
        try:
            with _triton_prints():
                # In a child process (compiler/lower/guard.py): a crash of Triton's is a diagnostic too.
                compiled = compile_source(source, use_cache=not args.no_cache, isolate=True, **options)
        except LowerError as exc:
            # Triton refused what the lowering wrote: a bug of ours, not of the input.
            err(lowering_error(exc.report()))
            return EXIT_INTERNAL, None, ""
        elapsed = time.perf_counter() - start  # the compile's, not the disassembler's
        write_text(sys.stderr, compiled.log)  # what Triton's C++ side wrote (warnings), where it wrote it
        for note in compiled.notes:  # a hint not applied (lower/build.py)
            err(note)
        if args.emit == "cubin":
            output = compiled.cubin
        elif args.emit == "sass":
            try:
                output = disassemble(compiled.cubin)
            except LowerError as exc:  # cuobjdump missing or failing
                raise CliError(f"--emit sass: {exc.message}") from None
        elif args.emit == "ops":
            from compiler.lower.cost import cost_table

            output = cost_table(source, compiled.asm["llir"])
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
            write_text(sys.stderr, captured.getvalue())
        raise
    write_text(sys.stderr, captured.getvalue())


def _compile_summary(source, compiled, emit: str, elapsed: float) -> str:
    """`kernel @k  arch sm_90  emit ptx  registers 38  spills 0 B  shared 0 B  warps 4  time 0.912 s`
    (`registers 255 (cap 255)` where a register cap was set)."""
    parts = [f"kernel @{source.kernel}", f"arch {source.target.arch}", f"emit {emit}"]
    if compiled is None:
        parts.append(f"time {elapsed:.3f} s (Triton source, not compiled)")
        return "  ".join(parts)

    def known(value, unit: str = "") -> str:
        return "?" if value is None else f"{value}{unit}"

    # A register cap (Triton's maxnreg: an `occupancy` hint's, or the one a spilling compile was
    # made again with, compiler/lower/build.py) is said: it explains the count, and the time.
    cap = compiled.options.get("maxnreg")
    parts += [
        f"registers {known(compiled.registers)}" + (f" (cap {cap})" if cap else ""),
        f"spills {known(compiled.spills, ' B')}",
        f"shared {compiled.shared} B",
        f"warps {compiled.num_warps}",
        f"time {elapsed:.3f} s" + (" (cached)" if compiled.cached else ""),
    ]
    return "  ".join(parts)


def _compile_tileiras(args: argparse.Namespace, module, entry, target) -> tuple[int, str | bytes | None, str]:
    """`_compile_one` by NVIDIA's tileiras: the module's bytecode (our writer's, as `tileir run
    --backend tileiras` sends it) to a cubin of every kernel, through the same cache; the SASS
    and the summary line are of `entry`'s kernel (the cubin holds them all)."""
    from compiler.lower import LowerError
    from compiler.modules import LaunchError, kernel_name
    from compiler.runtime.tileiras import TileirasMissing, compile_tileiras

    start = time.perf_counter()
    try:
        built = compile_tileiras(module, target.arch, use_cache=not args.no_cache)
    except TileirasMissing as exc:  # (and nothing cached): a usage error, as Triton missing is
        raise CliError(f"--compiler tileiras: {exc}") from None
    except LaunchError as exc:
        # tileiras refused the module or the architecture (now, or where the cache was
        # filled), or failed on it
        err(f"{PROG}: error: {exc}")
        return EXIT_ERRORS, None, ""
    elapsed = time.perf_counter() - start
    name = kernel_name(entry)
    kernel = built.info.kernels.get(name)
    output: str | bytes = built.cubin
    if args.emit == "sass":
        try:  # the kernel's alone, as ours
            output = built.sass(name)
        except LowerError as exc:  # cuobjdump (Triton's wheel ships it) missing or failing
            raise CliError(f"--emit sass: {exc.message}") from None
    release = re.search(r"\bV(\d[\w.]*)", built.tool_version)  # '..., release 13.5, V13.5.37'
    parts = [f"kernel @{name}", f"arch {target.arch}", f"emit {args.emit}"]
    parts.append(f"tileiras {release[1] if release else built.tool_version}")
    if kernel is not None:
        threads = kernel.reqntid or kernel.max_threads
        parts += [
            f"registers {'?' if kernel.registers is None else kernel.registers}",
            f"stack {'?' if kernel.frame_size is None else kernel.frame_size} B",
            f"shared {kernel.static_shared} B",
            f"threads {'?' if threads is None else threads[0] * threads[1] * threads[2]}",
        ]
    parts.append(f"time {elapsed:.3f} s" + (" (cached)" if built.cached else ""))
    return EXIT_OK, output, "  ".join(parts)


# --------------------------------------------------------------------------------------------
# Arguments


def arguments_compile(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Lower a kernel to Triton and compile it with Triton for a GPU architecture; no GPU is needed. "
        "The result goes to standard output or -o OUT (replaced atomically); a summary line (registers, "
        "spills, shared memory, compile time) goes to standard error. Several files and architectures "
        "(--arch sm_80,sm_90,sm_100) are compiled in one process, which pays Triton's start-up once, into "
        "the directory -o DIR. Compiles are cached in $TILEIR_CACHE_DIR (default ~/.cache/tileir). With "
        "--compiler tileiras, NVIDIA's tileiras compiles the module's bytecode instead, to SASS or a cubin "
        "to read beside ours."
    )
    parser.epilog = (
        "Examples: tileir compile examples/vector_add.tileir --arch sm_90 --emit ptx -o vector_add.ptx; "
        "tileir compile examples/*.tileir --arch sm_80,sm_90,sm_100 --emit cubin -o build; "
        "tileir compile examples/matmul.tileir --compiler tileiras --arch sm_90 -o matmul.tileiras.sass; "
        "tileir compile kernels.py -k vadd --arg rand:4096:f32 --arg rand:4096:f32 --arg zeros:4096:f32 "
        "--arg 1024 --emit sass. "
        "Exit status: 0 ok; 1 the module has errors or uses what the lowering cannot express for the "
        "target (the op and its line are named), or tileiras refused or failed on it; 2 bad usage, an "
        "unreadable file, an unknown kernel, Triton (or tileiras) not installed; 3 Triton refused, crashed "
        "on or did not finish the lowered kernel (a bug in the lowering); of several compiles, the worst. "
        "Triton compiles in a child process, stopped by Ctrl-C or after $TILEIR_COMPILE_TIMEOUT seconds "
        "(default 300; 0: no limit)."
    )
    parser.add_argument(
        "file",
        metavar="FILE",
        nargs="+",
        help="a .tileir text or .tileirbc bytecode file, - for stdin, or a .py file of cuTile Python kernels "
        "(with --arg); several are compiled in one process",
    )
    parser.add_argument(
        "-k", "--kernel", metavar="K", help="the entry (or cuTile kernel) to compile (default: the only one)"
    )
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="SPEC",
        help="for a .py file: the cuTile kernel's arguments, in order, as tileir run takes them (rand:1024:f32, "
        "a number for a scalar or a ct.Constant); cuTile exports the kernel for their shapes and types",
    )
    parser.add_argument(
        "--arch",
        metavar="ARCH",
        help=f"the GPU architecture: sm_80, sm_90, sm_100, ..., or several separated by commas "
        f"(default: the local GPU's, else {FALLBACK_ARCH})",
    )
    parser.add_argument(
        "--emit",
        choices=EMIT_KINDS,
        help=(
            "what to write: triton (the generated Python source; no compile), ttir, ttgir, llir, ptx (default), "
            "cubin (binary: not to a terminal), sass (the cubin disassembled by cuobjdump), ops (the kernel's "
            "LLVM IR instructions counted per Tile IR op: where the code goes); with --compiler tileiras: sass "
            "(default) or cubin"
        ),
    )
    parser.add_argument(
        "--compiler",
        choices=COMPILERS,
        default="triton",
        help="triton (default): our lowering, compiled by Triton; tileiras: the module's bytecode compiled by "
        "NVIDIA's tileiras (pip install nvidia-cuda-tileiras), the cubin `tileir run --backend tileiras` "
        "launches, to compare with ours",
    )
    parser.add_argument(
        "-o",
        dest="output",
        metavar="OUT",
        help="output file (default: stdout); with several files or architectures, a directory that receives "
        "STEM.ARCH.EXT for each (made if missing)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="with several files or architectures, compile in N worker processes (default 1: this one)",
    )
    parser.add_argument(
        "--num-warps",
        type=int,
        metavar="N",
        help="warps per CTA (default: the IR's hint, else 4, or for a kernel with a matrix multiply 4 or 8 by its "
        "loops' shape)",
    )
    parser.add_argument(
        "--num-stages",
        type=int,
        metavar="N",
        help="pipelining stages of loops (default: the IR's hint, else 3, or for a kernel with a matrix multiply "
        "2 to 6 by the bytes a loop iteration loads)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="compile from scratch; neither read nor write the cache"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    add_server_flag(parser)


def arguments_cache(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Show the compile cache: where it is, what it holds (our compiles, generated Triton source, "
        "tileiras' cubins) and its bound. Its place: $TILEIR_CACHE_DIR, else $XDG_CACHE_HOME/tileir, else "
        "~/.cache/tileir. Its bound: $TILEIR_CACHE_SIZE (default 2G; K, M, G; 0: none); past it, the least "
        "recently used entries are removed after a compile (checked at most every 10 minutes)."
    )
    parser.epilog = "Exit status: 0 ok; 2 a cache directory that cannot be used or a TILEIR_CACHE_SIZE that is no size."
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--clear", action="store_true", help="remove everything the cache holds")
    what.add_argument(
        "--trim",
        metavar="SIZE",
        nargs="?",
        const="",
        help="remove the least recently used entries now, down to 90%% of SIZE (default: the bound)",
    )


def command_cache(args: argparse.Namespace) -> int:
    from compiler.lower import LowerError, cache

    try:
        limit = cache.size_limit()
    except LowerError as exc:
        raise CliError(exc.message) from None
    root = cache.cache_dir()
    if args.clear or args.trim is not None:
        require_cache("tileir cache")
        if args.clear:
            removed, freed = cache.clear(root)
        else:
            size = cache.parse_size(args.trim) if args.trim else limit
            if size is None:
                raise CliError(f"--trim {args.trim}: not a size; give bytes with an optional K, M or G (e.g. 500M)")
            removed, freed = cache.trim(root, size)
        print(f"removed {removed} entr{'y' if removed == 1 else 'ies'} ({cache.show_size(freed)}) from {root}")
        return EXIT_OK
    found = cache.items(root) if root.is_dir() else []
    state = "" if root.is_dir() else " (not a directory: it cannot be used)" if root.exists() else " (not made yet)"
    print(f"compile cache: {root}{cache.origin()}{state}")
    rows = []
    for area, meaning in cache.AREAS:
        mine = [i for i in found if i.area == area]
        rows.append(
            (area, f"{len(mine)} {'entry' if len(mine) == 1 else 'entries'}", sum(i.size for i in mine), meaning)
        )
    total = sum(i.size for i in found)
    bound = f"of {cache.show_size(limit)} (TILEIR_CACHE_SIZE)" if limit else "(no bound: TILEIR_CACHE_SIZE=0)"
    rows.append(("total", f"{len(found)} {'entry' if len(found) == 1 else 'entries'}", total, bound))
    for area, count, size, meaning in rows:
        print(f"  {area:<15} {count:>13} {cache.show_size(size):>10}   {meaning}")
    return EXIT_OK
