"""`%%tileir` and `%tileir`: check, bind, show, picture, run, check and time Tile IR kernels.

    %%tileir [NAME] [options]          the cell is Tile IR text; NAME (default: the module's
    <Tile IR text>                     symbol) is bound to a module object
    %tileir SOURCE [options]           SOURCE: a .tileir/.tileirbc file, or a module bound before
    %tileir                            which backends this machine has

A cell is parsed and verified first; its diagnostics (warnings too) are shown as HTML with the
cell line, the source line and a caret, and as plain text, never as a traceback. A cell with
errors binds nothing. Failures after that (a --show the lowering cannot do, a launch that cannot
start, a kernel that fails, a --check that does not hold) are shown the same way; the cell then
ends with a one-line error (so that "Run All" stops there), not a traceback.

Options go through IPython's `magic_arguments`, so `%%tileir?` documents them; expressions in
`--args` and `--grid` are evaluated in the user's namespace, and `--check` expressions by
`tileir run --check`'s own code (`compiler.runtime.argspec`), with the user's rights, as any
notebook code is.
"""

from __future__ import annotations

import keyword
import os
import re
import shlex
import sys
import types
from typing import Any

import numpy as np
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from compiler.interp import DEFAULT_MAX_STEPS, InterpError, RunOptions
from compiler.runtime import LaunchError, LaunchResult

from .module import (
    BACKEND_CHOICES,
    Launch,
    TileModule,
    available_backends,
    failure_line,
    gpu_present,
    interrupted_line,
    module_symbol,
    snapshot,
)
from .module import restore as restore_args
from .render import (
    Progress,
    Rich,
    bytecode_view,
    code_view,
    diagnostics_view,
    error_view,
    lines_view,
    note_view,
    seconds,
)

SHOW_KINDS = ("triton", "ttir", "ptx", "sass", "tileiras", "bytecode", "ir")


class TileIRError(Exception):
    """Ends a cell that failed, after its report was shown: IPython prints this one line
    (`_render_traceback_`) instead of a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"TileIRError: {self}"]


def _options(func):
    """The options `%%tileir` and `%tileir` share, in the order `--help` lists them."""
    decorators = [
        argument("--run", nargs="?", const="", metavar="KERNEL", help="launch KERNEL (the only kernel if not named)"),
        argument(
            "--grid",
            metavar="G",
            default="1",
            help="tile blocks: X, X,Y or X,Y,Z, or a Python expression giving an int or a tuple (default 1)",
        ),
        argument(
            "--args",
            metavar="EXPR[,EXPR...]",
            help="the kernel's arguments: Python expressions, evaluated in the notebook's namespace",
        ),
        argument(
            "--cutile-args",
            action="store_true",
            help="cuTile's calling convention: each array becomes pointer, extents, strides",
        ),
        argument(
            "--backend",
            choices=BACKEND_CHOICES,
            help="where to run: auto (a GPU backend where there is a GPU, else the CPU interpreter), cpu, "
            "triton, tileiras, triton-interpret (default auto)",
        ),
        argument("--arch", metavar="SM", help="GPU architecture for --show and GPU backends (default sm_90)"),
        argument(
            "--time",
            nargs="?",
            const=5,
            type=int,
            metavar="N",
            help="after the run, run N more times (default 5) and show the median time and its spread",
        ),
        argument(
            "--check",
            action="append",
            default=[],
            metavar="'argN = EXPR'",
            help="after the run, argument N must match EXPR (Python, np at hand, over arg0, arg1, ... as "
            "they were before the run), within a tolerance set by its dtype; as `tileir run --check`. "
            "EXPR runs with your rights, as any cell does: it is no sandbox",
        ),
        argument("--rtol", type=float, metavar="R", help="relative tolerance of --check (default: by dtype)"),
        argument("--atol", type=float, metavar="A", help="absolute tolerance of --check (default: by dtype)"),
        argument(
            "--show",
            action="append",
            default=[],
            metavar="KIND[,KIND]",
            help="show the kernel as: triton (generated source), ttir, ptx, sass, tileiras (the SASS of NVIDIA's "
            "tileiras, to compare), bytecode, ir (canonical text)",
        ),
        argument("--layout", action="store_true", help="the layout explorer for every view in the module"),
        argument("--no-race-check", action="store_true", help="do not report unordered store/access races"),
        argument(
            "--max-steps",
            type=int,
            default=DEFAULT_MAX_STEPS,
            metavar="N",
            help="stop a runaway kernel after N loop iterations, each iteration of a group of tile blocks counted "
            f"once (cpu backend; default {DEFAULT_MAX_STEPS}, 0: no limit); as `tileir run --max-steps`",
        ),
        argument(
            "--timeout",
            type=float,
            default=0,
            metavar="SECONDS",
            help="stop a kernel that runs longer than SECONDS per launch (cpu and triton-interpret backends; "
            "default 0: no limit); as `tileir run --timeout`",
        ),
    ]
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


def _described(value: Any) -> str:
    """`value` in a few words, for the note that a binding replaced it: "a function", "the
    module numpy", "an int"."""
    if isinstance(value, types.ModuleType):
        return f"the module {value.__name__}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return "a function"
    if isinstance(value, type):
        return f"the class {value.__name__}"
    kind = type(value).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


@magics_class
class TileIRMagics(Magics):
    @magic_arguments(name="%tileir")  # the usage line then reads `%%tileir`
    @argument("name", nargs="?", metavar="NAME", help="the name to bind the module to (default: its symbol)")
    @_options
    @cell_magic
    def tileir(self, line: str, cell: str | None = None) -> None:
        """Check, bind, show, picture, run, check and time the Tile IR kernel of this cell.

        The cell is Tile IR text. It is parsed and verified; errors are shown and bind nothing.
        NAME is bound to a module object whose kernels launch as
        ``NAME.KERNEL[grid](*args, backend=None, cutile_args=False, max_steps=1000000, timeout=0)``.

        Example::

            %%tileir vadd --run vector_add --grid 4 --args a,b,c --cutile-args --check 'arg2 = arg0 + arg1'
            cuda_tile.module @vector_add { ... }
        """
        args = self._parse(self.tileir, line)
        self._check_combinations(args)
        name = self._cell_name()
        # The magic line becomes an empty line: diagnostics then count lines as the cell does.
        text = "\n" + (cell or "")
        tmod = self._compile(text, name, args.name, args)
        self._after_bind(tmod, args)

    @magic_arguments(name="tileir")
    @argument("source", nargs="?", metavar="SOURCE", help="a .tileir or .tileirbc file, or a module bound before")
    @argument(
        "--name",
        metavar="NAME",
        help="bind the module to NAME (a file's: default its symbol; a module bound before: again, with this "
        "line's --backend and --arch as its defaults)",
    )
    @_options
    @line_magic("tileir")
    def tileir_line(self, line: str) -> None:
        """Load a Tile IR file (text or bytecode) and bind it, or act on a module bound before;
        with no SOURCE, show the backends this machine has. Options as for ``%%tileir``."""
        args = self._parse(self.tileir_line, line)
        self._check_combinations(args)
        if not args.source:
            self._environment()
            return
        existing = self.shell.user_ns.get(args.source)
        if isinstance(existing, TileModule):
            if args.name:  # bound anew under NAME (the same name too), with this cell's defaults
                existing = self._bind(existing.module, args.name, args, like=existing)
            else:
                self._note_unused(existing, args)
            self._after_bind(existing, args)
            return
        path = os.path.expanduser(args.source)
        if not os.path.exists(path):
            raise UsageError(f"{args.source!r} is neither a file nor a Tile IR module in the notebook")
        if os.path.isdir(path):
            raise UsageError(f"{args.source!r} is a directory: give a .tileir or .tileirbc file in it")
        if path.endswith(".py"):  # (a cuTile Python file would give a page of parse errors)
            raise UsageError(
                f"{args.source!r} is Python, not Tile IR: import its cuTile kernel and bind it with "
                "tile_kernel.TileModule.from_cutile(kernel, *args)"
            )
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:  # no permission, a file gone since: one line, not a traceback
            raise UsageError(f"cannot read {args.source!r}: {e.strerror or e}") from None
        from compiler.runtime import BYTECODE_MAGIC

        if data.startswith(BYTECODE_MAGIC):
            tmod = self._compile_bytecode(data, path, args.name, args)
        else:
            try:
                text = data.decode("utf-8").removeprefix("\ufeff")
            except UnicodeDecodeError:
                raise UsageError(f"{path!r} is neither UTF-8 text nor Tile IR bytecode") from None
            tmod = self._compile(text, path, args.name, args)
        self._after_bind(tmod, args)

    def _cell_name(self) -> str:
        """`In[n]`, n the number the frontend shows for this cell: the execution count IPython
        gave the cell it is running (`displayhook.exec_result`; `shell.execution_count` is
        bumped before the cell runs in IPython 9 but after it in IPython 8, and the input
        history's length is the last stored cell's, so neither can tell). A cell kept out of
        the history (`store_history=False`, silent) has no number: `<cell>`."""
        result = getattr(getattr(self.shell, "displayhook", None), "exec_result", None)
        count = getattr(result, "execution_count", None)
        if getattr(getattr(result, "info", None), "store_history", False) and isinstance(count, int):
            return f"In[{count}]"
        return "<cell>"

    # -- options ---------------------------------------------------------------------------

    def _parse(self, magic, line: str):
        # Shell-style quoting on every platform (IPython's parse_argstring keeps the quotes
        # outside POSIX): `--check 'arg2 = arg0 + arg1'` is one option value without quotes.
        try:
            argv = shlex.split(line)
        except ValueError as e:
            raise UsageError(f"cannot split the options: {e}") from None
        try:
            args = magic.parser.parse_args(argv)
        except UsageError as e:
            raise UsageError(f"{e}{self._split_hint(argv)}") from None
        shows: list[str] = []
        for item in args.show:
            for kind in filter(None, (k.strip() for k in item.split(","))):
                if kind not in SHOW_KINDS:
                    raise UsageError(f"--show {kind}: one of {', '.join(SHOW_KINDS)}")
                if kind not in shows:
                    shows.append(kind)
        args.show = shows
        if args.time is not None and args.time < 1:
            raise UsageError(f"--time {args.time}: the number of runs must be at least 1")
        for option, value in (("--max-steps", args.max_steps), ("--timeout", args.timeout)):
            if not value >= 0:
                raise UsageError(f"{option} {value}: give 0 (no limit) or more")
        for option, value in (("--rtol", args.rtol), ("--atol", args.atol)):
            if value is not None and not value >= 0:  # NaN too: no verdict could come of it
                raise UsageError(f"{option} {value}: give a tolerance of 0 or more")
        return args

    @staticmethod
    def _split_hint(argv: list[str]) -> str:
        """A hint for an option value that the shell-style split cut at a space, as in
        `--args a, b, c` (then `b,` and `c` are unrecognized arguments)."""
        for i, word in enumerate(argv[:-1]):
            if word in ("--args", "--grid") and argv[i + 1].endswith(","):
                parts = [argv[i + 1]]
                for more in argv[i + 2 :]:
                    if not parts[-1].endswith(",") or more.startswith("--"):
                        break
                    parts.append(more)
                given = " ".join(parts)
                return f" ({word} {given}: quote it, {word} '{given}', or drop the spaces, {word} {''.join(parts)})"
        return ""

    @staticmethod
    def _check_combinations(args) -> None:
        if args.run is None:
            given = [
                opt
                for opt, value in (
                    ("--args", args.args),
                    ("--check", args.check),
                    ("--time", args.time),
                    ("--cutile-args", args.cutile_args),
                )
                if value
            ]
            if given:
                raise UsageError(f"{', '.join(given)} without --run: name the kernel to launch with --run KERNEL")
        if args.check and args.args is None:
            raise UsageError("--check compares the arguments after the run: give them with --args")

    # -- compiling -------------------------------------------------------------------------

    def _compile(self, text: str, name: str, bind: str | None, args) -> TileModule:
        from compiler.ir.diagnostics import has_errors
        from compiler.verify import VerifyOptions, check_text

        result, diagnostics = check_text(text, name, VerifyOptions(keep_going=True))
        if diagnostics:
            display(diagnostics_view(diagnostics))
        if has_errors(diagnostics):
            errors = sum(1 for d in diagnostics if d.is_error)
            raise TileIRError(f"{errors} error{'s' if errors != 1 else ''} in the Tile IR; nothing was bound")
        return self._bind(result.module, bind, args)

    def _compile_bytecode(self, data: bytes, path: str, bind: str | None, args) -> TileModule:
        from compiler.runtime import load_module

        try:
            module = load_module(data, name=path)
        except LaunchError as e:
            if e.diagnostics:
                display(diagnostics_view(e.diagnostics))
            else:
                display(error_view(f"cannot load {path}", [e.message]))
            raise TileIRError(f"{path}: not loaded; nothing was bound") from None
        return self._bind(module, bind, args)

    @staticmethod
    def _note_unused(tmod: TileModule, args) -> None:
        """Say so when --backend or --arch do nothing: they apply to this cell's --run and
        --show, and a module bound before keeps the defaults of the cell that bound it."""
        unused = [
            f"{option} {value}"
            for option, value, used in (
                ("--backend", args.backend, args.run is not None),
                ("--arch", args.arch, args.run is not None or bool(args.show)),
            )
            if value and not used
        ]
        if unused:
            options = " ".join(unused)
            display(
                note_view(
                    f"{options}: no effect without --run or --show ({tmod.name} keeps the defaults it was bound "
                    f"with); to change them, bind it again: %tileir {tmod.name} --name {tmod.name} {options}",
                    "warning",
                )
            )

    def _bind(self, module, bind: str | None, args, like: TileModule | None = None) -> TileModule:
        """Bind `module` as `bind` (default: its symbol), with the cell's --backend and --arch
        as its defaults (else those of `like`, the module it is bound again from)."""
        name = bind or module_symbol(module)
        if name is None:
            entries = module.entries()
            if len(entries) == 1:
                from compiler.runtime import kernel_name

                name = kernel_name(entries[0])
        if name is None:
            raise UsageError("the module has no symbol to bind it to: give a NAME (%%tileir NAME)")
        if not name.isidentifier() or keyword.iskeyword(name):
            raise UsageError(f"{name!r} is not a Python name: give one (%%tileir NAME)")
        tmod = TileModule(
            module,
            name,
            backend=args.backend or (like.backend if like else None),
            arch=args.arch or (like.arch if like else None),
        )
        previous = self.shell.user_ns.get(name, tmod)
        self.shell.user_ns[name] = tmod
        kernels = ", ".join(k.signature for k in tmod.kernels.values()) or "no kernels"
        display(note_view(f"{name} = Tile IR module: {kernels}", "ok"))
        for hidden in tmod.shadowed:
            display(
                note_view(
                    f"two kernels are named @{hidden.name}: {name}.{hidden.name} and --run {hidden.name} launch the "
                    f"first, {tmod.kernels[hidden.name].signature}; not {hidden.signature} (rename one to launch it)",
                    "warning",
                )
            )
        if not isinstance(previous, TileModule):  # the notebook's own variable: say it is gone
            display(note_view(f"the module replaces {name}, {_described(previous)}", "warning"))
        return tmod

    # -- after binding ---------------------------------------------------------------------

    def _after_bind(self, tmod: TileModule, args) -> None:
        # --backend and --arch apply to this cell's steps; a module keeps the defaults of the
        # cell that bound it (see `_bind`), so `%tileir NAME --backend cpu` changes nothing after.
        failures: list[str] = []
        for kind in args.show:
            if not self._show(tmod, kind, args):
                failures.append(f"--show {kind}")
        if args.layout:
            self._layout(tmod)
        if args.run is not None:
            failures.extend(self._run(tmod, args))
        if failures:
            raise TileIRError(f"{', '.join(failures)} failed (the module is bound as {tmod.name})")

    def _kernels_for(self, tmod: TileModule, args) -> list[Any]:
        if args.run:
            return [tmod.kernel(args.run)]
        return list(tmod.kernels.values())

    def _show(self, tmod: TileModule, kind: str, args) -> bool:
        if kind == "ir":
            display(code_view(tmod.text, "ir", f"{tmod.name}: canonical Tile IR"))
            return True
        if kind == "tileiras":
            return self._show_tileiras(tmod, args)
        if kind == "bytecode":
            from compiler.bytecode import BytecodeWriteError, write_bytecode

            try:
                data = write_bytecode(tmod.module)
            except BytecodeWriteError as e:
                display(diagnostics_view(e.diagnostics))
                return False
            display(bytecode_view(data, f"{tmod.name}: Tile IR bytecode, {len(data)} bytes", f"{tmod.name}.tileirbc"))
            return True
        try:
            kernels = self._kernels_for(tmod, args)
        except LaunchError as e:
            display(error_view(f"--show {kind}", [e.message]))
            return False
        from compiler.lower import LowerError
        from compiler.lower.targets import default_arch

        # (only for what is lowered: finding the local GPU's may run nvidia-smi)
        arch = args.arch or tmod.arch or default_arch()
        ok = True
        for kernel in kernels:
            try:
                if kind == "triton":
                    from compiler.lower import lower

                    source = lower(tmod.module, kernel.entry, arch)
                    display(code_view(source.text, "triton", f"@{kernel.name}: Triton source for {arch}"))
                    for note in source.notes:  # a hint not applied as asked (too few warps for a product)
                        display(note_view(note, "warning"))
                    continue
                from compiler.lower import compile as triton_compile

                with Progress(f"compiling @{kernel.name} for {arch} with Triton") as progress:
                    compiled = triton_compile(tmod.module, kernel.entry, arch)
                    code = compiled.sass() if kind == "sass" else compiled.asm.get(kind, "")
                    cached = " (cached)" if compiled.cached else ""
                    progress.done(f"compiled @{kernel.name} for {arch} in {seconds(progress.elapsed)}{cached}", "ok")
                display(code_view(code, kind, f"@{kernel.name}: {kind.upper()} for {arch}"))
                for note in compiled.notes:  # a hint not applied (warps raised, clusters Triton cannot compile)
                    display(note_view(note, "warning"))
            except LowerError as e:
                display(error_view(f"--show {kind}: @{kernel.name} cannot be lowered", [e.report()]))
                ok = False
        return ok

    def _show_tileiras(self, tmod: TileModule, args) -> bool:
        """The SASS of the module as NVIDIA's tileiras compiles it (every kernel: tileiras makes
        one cubin of the module), the cubin `--backend tileiras` launches."""
        from compiler.lower import LowerError
        from compiler.lower.targets import default_arch
        from compiler.runtime.tileiras import compile_tileiras

        arch = args.arch or tmod.arch or default_arch()
        try:
            with Progress(f"compiling {tmod.name} for {arch} with tileiras") as progress:
                built = compile_tileiras(tmod.module, arch)
                code = built.sass()
                cached = " (cached)" if built.cached else ""
                progress.done(f"compiled {tmod.name} for {arch} in {seconds(progress.elapsed)}{cached}", "ok")
        except (LaunchError, LowerError) as e:  # tileiras missing or refusing the module; cuobjdump missing
            display(error_view("--show tileiras", [e.message]))
            return False
        display(code_view(code, "sass", f"{tmod.name}: SASS for {arch} by NVIDIA's tileiras"))
        return True

    def _layout(self, tmod: TileModule) -> None:
        from .widgets import LayoutExplorer, view_choices

        choices = view_choices(tmod.module)
        if not choices:
            display(note_view(f"{tmod.name} has no partition, strided or gather/scatter views to picture"))
            return
        display(LayoutExplorer(choices))

    def _run(self, tmod: TileModule, args) -> list[str]:
        from compiler.runtime.argspec import SpecError, parse_check, run_check, summarize

        try:
            kernel = tmod.kernel(args.run or None)
        except LaunchError as e:
            message = e.message
            if args.run and getattr(args, "name", "") is None and args.run.isidentifier():
                # `%%tileir --run NAME`: --run takes an optional KERNEL, so it took the NAME.
                message += (
                    f" (to bind the module as {args.run}, put NAME first: %%tileir {args.run} --run ..., "
                    f"or name the kernel: --run KERNEL {args.run})"
                )
            display(error_view("--run", [message]))
            return ["--run"]
        try:
            # Compiled before the launch: an expression that is not Python fails the cell at once.
            checks = [parse_check(c) for c in args.check]
        except SpecError as e:
            display(error_view("--check", [str(e)]))
            return ["--check"]
        grid = self._grid(args.grid)
        values = self._arguments(args.args)
        launch: Launch = kernel[grid]
        before = [snapshot(v) for v in values] if checks or args.time else []
        options = RunOptions(check_races=not args.no_race_check, max_steps=args.max_steps, timeout=args.timeout)
        backend = args.backend or tmod.backend
        try:
            slow = backend == "triton-interpret" and "triton" not in sys.modules
            if slow:  # the first use imports Triton and torch: seconds
                with Progress(f"@{kernel.name}: starting Triton's interpreter") as progress:
                    result = launch.run(*values, backend=backend, cutile_args=args.cutile_args, options=options)
                    progress.done(f"Triton's interpreter started in {seconds(progress.elapsed)}")
            else:
                result = launch.run(*values, backend=backend, cutile_args=args.cutile_args, options=options)
        except LaunchError as e:
            message = e.message
            if e.kind == "count" and not args.cutile_args and any(isinstance(v, np.ndarray) for v in values):
                message += " (with --cutile-args, each array is passed as pointer, shape, strides)"
            display(error_view(f"@{kernel.name} was not launched", message.splitlines()))
            return ["--run"]
        except InterpError as e:
            display(error_view(f"@{kernel.name} failed", [str(e), *map(str, getattr(e, "details", []) or [])]))
            return ["--run"]
        except KeyboardInterrupt as e:  # Kernel > Interrupt during the launch: a report, not a traceback
            display(error_view(f"@{kernel.name} was interrupted", [interrupted_line(e, kernel.name)]))
            return ["--run"]
        except Exception as e:  # a backend that crashed (a bug in a lowering, in Triton): one line too
            if os.environ.get("TILEIR_TRACEBACK"):
                raise
            display(
                error_view(
                    f"@{kernel.name}: the {backend or 'auto'} backend failed",
                    [failure_line(e), "(a bug: set TILEIR_TRACEBACK=1 to see its traceback)"],
                )
            )
            return ["--run"]
        self._report(result, values, launch.last_note, summarize)
        failures: list[str] = []
        for check in checks:
            try:
                outcome = run_check(check, before, values, args.rtol, args.atol)
            except SpecError as e:
                display(error_view("--check", [str(e)]))
                failures.append("--check")
                continue
            from .widgets import ResultView

            target = values[check.target]
            if outcome.expected is not None:
                view = ResultView(target, outcome.expected, title=f"arg{check.target}", rtol=args.rtol, atol=args.atol)
                display(Rich(view._repr_mimebundle_()["text/html"], outcome.message))
            else:
                display(note_view(outcome.message, "ok" if outcome.ok else "warning"))
            if not outcome.ok:
                failures.append(f"--check '{check.text}'")
        if args.time:
            restore_args(values, before)
            try:
                self._time(launch, values, args, options, backend)
            except KeyboardInterrupt as e:
                display(error_view(f"@{kernel.name}: --time was interrupted", [interrupted_line(e, kernel.name)]))
                failures.append("--time")
        return failures

    def _report(self, result: LaunchResult, values: list[Any], note: str | None, summarize) -> None:
        grid = "x".join(map(str, result.grid))
        blocks = result.num_blocks
        lines = [
            f"ran @{result.kernel}  grid {grid} ({blocks} tile block{'s' if blocks != 1 else ''})  "
            f"backend {result.backend}  time {seconds(result.time)}"
        ]
        for i, v in enumerate(values):
            lines.extend(self._summary_rows(f"arg{i}", v, summarize))
        display(lines_view(lines))
        if note is not None:
            display(note_view(note))

    def _summary_rows(self, label: str, value: Any, summarize) -> list[str]:
        """Rows of the run report for one argument: an array summarized, a list or tuple
        holding arrays (cuTile arguments nest) one row per item, anything else its repr."""
        if isinstance(value, np.ndarray):
            return [f"  {label}  {summarize(value)}"]
        if isinstance(value, (list, tuple)) and any(isinstance(v, (np.ndarray, list, tuple)) for v in value):
            rows = [f"  {label}  {type(value).__name__} of {len(value)}"]
            for j, item in enumerate(value):
                rows.extend(self._summary_rows(f"{label}[{j}]", item, summarize))
            return rows
        text = repr(value)
        return [f"  {label}  {type(value).__name__} {text if len(text) <= 100 else text[:97] + '...'}"]

    def _time(self, launch: Launch, values: list[Any], args, options: RunOptions, backend: str | None) -> None:
        from .module import resolve_backend, time_runs

        chosen, _ = resolve_backend(backend)
        timing = time_runs(
            lambda: launch.run(*values, backend=chosen, cutile_args=args.cutile_args, options=options),
            values,
            args.time,
            chosen,
        )
        display(timing)

    # -- arguments -------------------------------------------------------------------------

    def _eval(self, expression: str, what: str, shown: str | None = None) -> Any:
        try:
            return eval(expression, self.shell.user_ns)  # noqa: S307 - the notebook's own code, with its rights
        except Exception as e:  # noqa: BLE001 - any failure of the user's expression is one line
            shown = expression if shown is None else shown
            raise UsageError(f"{what}: cannot evaluate {shown!r}: {type(e).__name__}: {e}") from None

    def _grid(self, text: str) -> int | tuple[int, ...]:
        if re.fullmatch(r"\s*\d+(\s*[,x]\s*\d+){0,2}\s*", text):
            return tuple(int(p) for p in re.split(r"\s*[,x]\s*", text.strip()))
        value = self._eval(text, "--grid")
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (tuple, list)) and all(isinstance(v, (int, np.integer)) for v in value):
            return tuple(int(v) for v in value)
        raise UsageError(f"--grid {text}: expected an int or a tuple of ints, got {value!r}")

    def _arguments(self, text: str | None) -> list[Any]:
        if text is None or not text.strip():
            return []
        # A tuple display parses the commas as Python does (nested calls, slices, tuples).
        return list(self._eval(f"({text},)", "--args", text))

    # -- %tileir alone ---------------------------------------------------------------------

    def _environment(self) -> None:
        from compiler.lower import triton_version

        backends = available_backends()
        lines = [
            f"backends here: {', '.join(backends)}",
            f"GPU: {'present' if gpu_present() else 'none (auto runs the CPU interpreter)'}",
            f"Triton: {triton_version() or 'not installed (needed for --show triton/ttir/ptx/sass, triton-interpret)'}",
        ]
        display(lines_view(lines, "Tile IR"))
