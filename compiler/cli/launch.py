"""`tileir run` and `tileir bench`: a kernel launched on a backend with arguments made from
SPECs (`rand:4000:f32`, a number, a .npy file), its results summarised, saved, checked, timed."""

from __future__ import annotations

import argparse
import os

from compiler.ir.files import write_atomic

from .common import (
    EXIT_ERRORS,
    EXIT_OK,
    PROG,
    CliError,
    err,
    load_cutile_kernel,
    load_kernel,
    lowering_error,
    out,
    plural,
    require_cache,
)

# Where `tileir run` runs a kernel: compiler.runtime.BACKENDS, repeated here so that `--help`
# need not import the runtime (a test keeps the two equal).
BACKENDS = ("auto", "cpu", "triton-interpret", "triton", "tileiras")


# compiler.interp.DEFAULT_MAX_STEPS (the --max-steps default), repeated for the same reason.
DEFAULT_MAX_STEPS = 1_000_000


def require_backend(backend: str) -> tuple[str, str]:
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
    require_cache(f"--backend {backend}")
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


class Launchable:
    """What `tileir run` and `tileir bench` parse from the command line: the kernel, its grid and
    the SPECs of its arguments."""

    def __init__(
        self, module: object, entry: object, grid: tuple, specs: list, constants: frozenset = frozenset()
    ) -> None:
        self.module = module
        self.entry = entry
        self.grid = grid
        self.specs = specs
        # The --arg positions of a cuTile kernel's `ct.Constant` parameters: compiled into the
        # kernel cuTile exports, not passed to it (but kept for argN numbering and printing).
        self.constants = constants

    def passed(self, values: list) -> list:
        """The arguments the kernel takes: `values` less the cuTile constants."""
        return [v for i, v in enumerate(values) if i not in self.constants]

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
            placeholders = self.passed([spec.placeholder() for spec in self.specs])  # arrays that take no memory
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
        values = self.passed(values)
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
                err(lowering_error(exc.message))
                err(f"{PROG} {command}: kernel {name} could not run on the {backend} backend")
                return None
            raise CliError(self._message(args, exc)) from None
        except InterpError as exc:
            err(str(exc))
            if len(exc.details) > 1:  # a failed assert: every failing tile block (at most 100), indented
                err("".join(f"  {line}\n" for line in exc.details).rstrip("\n"))
            err(f"{PROG} {command}: kernel {name} failed")
            return None


def _parse_launchable(args: argparse.Namespace, command: str, not_done: str) -> Launchable | None:
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
    if args.file.endswith(".py"):
        target = _cutile_launchable(args, specs, grid)
    else:
        loaded = load_kernel(args, command, not_done)
        if loaded is None:
            return None
        target = Launchable(loaded[0], loaded[1], grid, specs)
    target.check_signature(args)
    return target


def _cutile_launchable(args: argparse.Namespace, specs: list, grid: tuple) -> Launchable:
    """A cuTile Python kernel of the Python file `args.file` (`load_cutile_kernel`), launched
    with cuTile's calling convention. Its `ct.Constant` arguments are given as --arg numbers,
    as to the kernel function, and compiled in: left out of the launch."""
    module, entry, constants = load_cutile_kernel(args.file, args.kernel, specs)
    args.cutile_args = True  # (cuTile's convention is the only one its kernels have)
    return Launchable(module, entry, grid, specs, constants)


def command_run(args: argparse.Namespace) -> int:
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
    backend, note = require_backend(args.backend)
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
        out(
            f"kernel @{result.kernel}  grid {grid_text} ({plural(result.num_blocks, 'tile block')})  "
            f"backend {result.backend}  time {result.time:.3f} s{f'  ({note})' if note else ''}\n"
        )
        for i, v in enumerate(values):
            text = summarize(v) if isinstance(v, np.ndarray) else f"scalar {v!r}"
            out(f"  arg{i}  {text}{'  (ct.Constant: compiled in)' if i in target.constants else ''}\n")
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
            out(f"saved {plural(saved, 'array')} to {args.save}\n")
    status = EXIT_OK
    for check in checks:
        try:
            outcome = run_check(check, before, values, args.rtol, args.atol)
        except SpecError as exc:
            raise CliError(str(exc)) from None
        if outcome.ok:
            if not args.quiet:
                out(outcome.message + "\n")
        else:
            err(outcome.message)
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


def command_bench(args: argparse.Namespace) -> int:
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
    resolved = [(name, *require_backend(name)) for name in names]
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
    out(
        f"kernel {signature_name(target.entry)}  grid {grid_text}  warm-up {args.warmup}, timed {args.repeat} "
        f"per backend{rounds}\n"
    )
    header = f"{'backend':<18} {'median':>12} {'min':>12} {'GB/s':>10}"
    if flops:
        header += f" {'TFLOP/s':>10}"
    out(header + f" {'ratio':>8}\n")
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
        out(line + f" {ratio:>8}" + (f"  {note}" if note else "") + "\n")
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


def _launch_arguments(parser: argparse.ArgumentParser) -> None:
    """The kernel, grid and argument options of `tileir run` and `tileir bench`."""
    from .server import add_server_flag

    add_server_flag(parser)
    parser.add_argument(
        "file",
        metavar="FILE",
        help="a .tileir text or .tileirbc bytecode file, - for stdin, or a .py file of cuTile Python kernels "
        "(exported by cuTile for the --arg SPECs, ct.Constant arguments given as numbers, cuTile's calling "
        "convention implied)",
    )
    parser.add_argument(
        "-k", "--kernel", metavar="K", help="the entry (or cuTile kernel) to run (default: the only one)"
    )
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


# --------------------------------------------------------------------------------------------
# Arguments


def arguments_run(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run a kernel with arguments made from SPECs: on an NVIDIA GPU when there is one (our lowering "
        "compiled by Triton), else on the CPU interpreter, or on the --backend named; print a summary of "
        "every argument after the run, and optionally save the arrays and check them against NumPy."
    )
    parser.epilog = (
        "SPEC: FILE.npy[:DTYPE] | zeros:SHAPE:DTYPE | ones:SHAPE:DTYPE | rand:SHAPE:DTYPE | "
        "arange:SHAPE:DTYPE | a number. SHAPE: 1024 or 64x64. DTYPE as the IR spells it: "
        "f32 f16 bf16 f64 f8E4M3FN f8E5M2 f8E8M0FNU f4E2M1FN i1 i8 i16 i32 i64. "
        "rand: floats uniform in [-1, 1), integers in [-100, 100). "
        "Example: tileir run examples/vector_add.tileir --grid 4 --cutile-args "
        "--arg rand:4000:f32 --arg rand:4000:f32 --arg zeros:4000:f32 --check 'arg2 = arg0 + arg1'"
    )
    _launch_arguments(parser)
    parser.add_argument(
        "--save",
        metavar="DIR",
        help=(
            "write each array argument after the run as DIR/arg<i>.npy (i: its --arg index); DIR is created "
            "if missing, but its parent must exist"
        ),
    )
    parser.add_argument(
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
    parser.add_argument(
        "--rtol", type=_tolerance, metavar="R", help="relative tolerance of --check (default: by dtype)"
    )
    parser.add_argument(
        "--atol", type=_tolerance, metavar="A", help="absolute tolerance of --check (default: by dtype)"
    )
    parser.add_argument(
        "--no-race-check", action="store_true", help="do not report unordered store/access races (cpu backend)"
    )
    parser.add_argument(
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
    parser.add_argument("-q", "--quiet", action="store_true", help="print only errors and failed checks")


def arguments_bench(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Time a kernel: on each backend, WARMUP untimed launches, then REPEAT timed ones (the kernel's "
        "run only: placing arguments excluded; the CPU interpreter runs without its race check). "
        "Prints one row per backend: median and minimum time, GB/s (the bytes of the array arguments, "
        "each counted once, over the median time), TFLOP/s for kernels with mmaf/mmai ops, and the "
        "median time relative to the first backend (with --rounds N, the backends are timed N times over, "
        "interleaved, and the ratio is the median of the rounds' ratios, with their range)."
    )
    parser.epilog = (
        "FLOPs: 2*M*N*K per mmaf/mmai op (x the batch, for 3-d operands) per tile block, each op "
        "counted once even inside a loop (a lower bound for a loop over K); --flops N overrides. "
        "SPECs as in `tileir run`. Example: tileir bench examples/vector_add.tileir --grid 4 "
        "--cutile-args --arg rand:4000:f32 --arg rand:4000:f32 --arg zeros:4000:f32 --backend cpu,triton-interpret"
    )
    _launch_arguments(parser)
    parser.add_argument(
        "--backend",
        default="auto",
        metavar="B[,B...]",
        help=f"backends to time, in order, comma-separated, from: {', '.join(BACKENDS)} (default auto)",
    )
    parser.add_argument("--repeat", type=int, default=5, metavar="N", help="timed launches per backend (default 5)")
    parser.add_argument("--warmup", type=int, default=1, metavar="N", help="untimed launches first (default 1)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="N",
        help="time the backends N times over, interleaved (order alternating); ratios are the median of "
        "the rounds' (default 1)",
    )
    parser.add_argument("--flops", type=float, metavar="N", help="floating-point operations of one launch")
