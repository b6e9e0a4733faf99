"""The Python face of a `%%tileir` cell: a module object whose kernels are launched as

    NAME.KERNEL[grid](*args, backend=None, cutile_args=False, max_steps=1000000, timeout=0)

with arguments bound exactly as `compiler.runtime.launch` binds them (NumPy arrays updated in
place), returning the launch's `LaunchResult`. Also the backend choice (`auto` and the GPU
backends that do not exist yet) and timing helpers the magic and the tour use.

Errors are the runtime's own exception types (`LaunchError`, `InterpError`), so Python code
can catch them; in a notebook they show as their one-line report instead of a traceback
through the runtime (see `quiet`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.util import find_spec
from typing import Any

import numpy as np

from compiler.interp import DEFAULT_MAX_STEPS, InterpError, InterruptedLaunch, RunOptions
from compiler.ir.core import Module, Operation
from compiler.runtime import (
    BACKENDS,
    GPU_BACKENDS,
    LaunchError,
    LaunchResult,
    find_kernel,
    gpu_present,
    kernel_name,
    launch,
    signature,
)
from compiler.runtime import backends as _backends  # (as a module: tests replace its functions)

from .render import Rich, esc, note_view, seconds

# What `--backend` accepts; the policy (what runs where, `auto`) is the runtime's
# (`compiler.runtime.backends.resolve_backend`): this module only words its answers for a notebook.
BACKEND_CHOICES = ("auto", "cpu", "triton", "tileiras", "triton-interpret")


def resolve_backend(requested: str | None) -> tuple[str, str | None]:
    """(the backend to run, a note to show or None). Raises LaunchError (kind "backend") with
    a one-line reason for a backend that cannot run here."""
    choice = (requested or "auto").strip()
    if choice not in BACKEND_CHOICES:
        raise LaunchError(f"unknown backend {choice!r}; one of: {', '.join(BACKEND_CHOICES)}", kind="backend")
    if choice in GPU_BACKENDS and not gpu_present():
        raise LaunchError(
            f"backend {choice!r} needs an NVIDIA GPU and this machine has none; "
            "use backend 'cpu' (the interpreter), 'triton-interpret' or 'auto'",
            kind="backend",
        )
    backend, why = _backends.resolve_backend(choice)
    if choice != "auto":
        return backend, None
    if backend == "cpu":
        if not gpu_present():
            return "cpu", "no GPU on this machine: the CPU interpreter ran (backend auto -> cpu)"
        return "cpu", why.removeprefix("auto: ").replace("; ran on", ": ran on") + " (backend auto -> cpu)"
    return backend, f"backend auto -> {backend} on the GPU"


def available_backends() -> list[str]:
    """The backends that can run on this machine, in the order a comparison shows them."""
    found = ["cpu"]
    if "triton-interpret" in BACKENDS and find_spec("triton") is not None and find_spec("torch") is not None:
        found.append("triton-interpret")
    if gpu_present() and _backends.gpu_launcher_missing() is None:
        found.extend(GPU_BACKENDS)
    return found


def quiet(exc: BaseException) -> BaseException:
    """`exc` made to show in IPython as its one-line report instead of a traceback through
    the runtime: IPython asks an exception for `_render_traceback_` before formatting one.
    The type is unchanged, so `except LaunchError` still catches it."""
    lines = str(exc).splitlines() or [type(exc).__name__]
    details = getattr(exc, "details", None) or []
    text = [f"{type(exc).__name__}: {lines[0]}", *lines[1:], *[str(d) for d in details]]
    try:
        exc._render_traceback_ = lambda: text  # type: ignore[attr-defined]
    except AttributeError:  # an exception type with __slots__: show it as it is
        pass
    return exc


def failure_line(exc: BaseException) -> str:
    """One line for an exception: the runtime's reports as they are, anything else (a backend
    that crashed) with its type."""
    lines = str(exc).strip().splitlines() or [""]
    if isinstance(exc, (LaunchError, InterpError)):
        return lines[0]
    return f"{type(exc).__name__}: {lines[0]}".rstrip(": ")


def interrupted_line(exc: BaseException, kernel: str) -> str:
    """The one-line report of a launch of `kernel` stopped by Kernel > Interrupt: where the
    CPU interpreter was (compiler.interp.InterruptedLaunch names the loop and iteration, as
    a runaway's report does) where it knows."""
    report = exc.report() if isinstance(exc, InterruptedLaunch) else f"@{kernel} was interrupted"
    return f"{report}; its array arguments may be partly written"


def module_symbol(module: Module) -> str | None:
    """The symbol of the module's `cuda_tile.module` (None for bare entries)."""
    for op in module.walk():
        if op.name == "cuda_tile.module":
            sym = op.properties.get("sym_name")
            value = getattr(sym, "value", None)
            if isinstance(value, str):
                return value
    return None


# --------------------------------------------------------------------------------------------
# Module, kernel, launch


class TileModule:
    """A verified Tile IR module bound by `%%tileir NAME`. Its kernels are attributes
    (`NAME.vector_add`), or items for names that are not identifiers (`NAME["k.1"]`)."""

    def __init__(self, module: Module, name: str, *, backend: str | None = None, arch: str | None = None) -> None:
        self.module = module
        self.name = name
        self.backend = backend  # the cell's --backend: the default of launches without one
        self.arch = arch
        # A module exported by cuTile (`from_cutile`): the positions of the kernel function's
        # `ct.Constant` arguments, compiled in, which a launch leaves out; else None.
        self.cutile_constants: frozenset[int] | None = None
        self.kernels: dict[str, TileKernel] = {}
        # Entries whose name an earlier entry has (two modules of a file, each with `entry @k`):
        # a launch by name finds the first (`find_kernel`), so the first is the kernel here too.
        self.shadowed: list[TileKernel] = []
        for entry in module.entries():
            kernel = TileKernel(self, entry)
            if kernel.name in self.kernels:
                self.shadowed.append(kernel)
            else:
                self.kernels[kernel.name] = kernel

    @classmethod
    def from_cutile(cls, kernel: Any, *args: Any, backend: str | None = None, arch: str | None = None) -> TileModule:
        """The module cuTile Python exports for the `@ct.kernel` function `kernel` and these
        arguments (their dtypes and ranks, and the extents and strides the kernel's
        `ct.ArrayAnnotation`s make constants; no GPU needed), named after the kernel. Its kernel
        takes the same arguments as the function, `ct.Constant` ones included (they are left
        out of the launch: compiled in), with cuTile's calling convention:

            vadd = TileModule.from_cutile(vadd_kernel, a, b, c, 1024)
            vadd.vadd_kernel[4](a, b, c, 1024)            # on the CPU where there is no GPU
            LayoutExplorer.of_module(vadd.module)         # its views, pictured
        """
        from compiler.runtime.cutile import constant_positions, is_cutile_kernel, load_cutile

        if not is_cutile_kernel(kernel):
            raise quiet(LaunchError(f"expected a cuTile @ct.kernel function, got {type(kernel).__name__}"))
        try:
            module, _ = load_cutile(kernel, args, specialise=False)  # (launched with other arrays too)
        except LaunchError as e:
            raise quiet(e) from None
        made = cls(module, getattr(kernel._pyfunc, "__name__", "kernel"), backend=backend, arch=arch)
        made.cutile_constants = frozenset(constant_positions(kernel))
        return made

    @property
    def text(self) -> str:
        """The module in canonical form."""
        from compiler.text.printer import print_module

        return print_module(self.module)

    def kernel(self, name: str | None = None) -> TileKernel:
        """The kernel named `name` (None: the only one); LaunchError when there is none."""
        entry = find_kernel(self.module, name)
        return self.kernels[kernel_name(entry)]

    def __getattr__(self, name: str) -> TileKernel:
        kernels = self.__dict__.get("kernels")
        if kernels is not None and name in kernels:
            return kernels[name]
        if name.startswith("_") or kernels is None:
            raise AttributeError(name)
        raise AttributeError(
            f"module {self.name!r} has no kernel {name!r}; its kernels: {', '.join(kernels) or 'none'}"
        )

    def __getitem__(self, name: str) -> TileKernel:
        try:
            return self.kernel(name)
        except LaunchError as e:
            raise KeyError(e.message) from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {k for k in self.kernels if k.isidentifier()})

    def __repr__(self) -> str:
        lines = [f"<Tile IR module {self.name!r}: {len(self.kernels)} kernel(s)>"]
        lines += [f"  {k.signature}" for k in self.kernels.values()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = "".join(f"<li><code>{esc(k.signature)}</code></li>" for k in self.kernels.values())
        return f"<div><b>Tile IR module</b> <code>{esc(self.name)}</code><ul>{rows}</ul></div>"


class TileKernel:
    """One entry of a module. `kernel[grid]` is a launch; `kernel(...)` without a grid is an
    error that says how to give one (as Triton's `kernel[grid](...)`)."""

    def __init__(self, owner: TileModule, entry: Operation) -> None:
        self.owner = owner
        self.entry = entry
        self.name = kernel_name(entry)

    @property
    def signature(self) -> str:
        return signature(self.entry)

    @property
    def params(self) -> list[Any]:
        return list(self.entry.regions[0].blocks[0].arguments)

    def __getitem__(self, grid: int | Sequence[int]) -> Launch:
        return Launch(self, grid)

    def __call__(self, *args: Any, **kwargs: Any) -> LaunchResult:
        raise quiet(
            LaunchError(f"give a grid: {self.owner.name}.{self.name}[grid](*args), grid an int or a tuple", kind="grid")
        )

    def __repr__(self) -> str:
        return f"<Tile IR kernel {self.signature}>"


@dataclass(slots=True)
class Launch:
    """`kernel[grid]`: call it with the kernel's arguments."""

    kernel: TileKernel
    grid: int | Sequence[int]
    # The note of the last `auto` choice, for whoever shows it (the magic does).
    last_note: str | None = field(default=None, init=False)

    def run(
        self,
        *args: Any,
        backend: str | None = None,
        cutile_args: bool = False,
        options: RunOptions | None = None,
    ) -> LaunchResult:
        """The launch, with errors raised as they are (the magic renders them itself)."""
        chosen, note = resolve_backend(backend or self.kernel.owner.backend)
        self.last_note = note
        constants = self.kernel.owner.cutile_constants
        if constants is not None:  # a cuTile kernel function's arguments (`TileModule.from_cutile`)
            args = tuple(a for i, a in enumerate(args) if i not in constants)
        return launch(
            self.kernel.owner.module,
            self.kernel.name,
            self.grid,
            list(args),
            chosen,
            cutile=cutile_args or constants is not None,
            options=options,
        )

    def __call__(
        self,
        *args: Any,
        backend: str | None = None,
        cutile_args: bool = False,
        max_steps: int = DEFAULT_MAX_STEPS,
        timeout: float = 0,
    ) -> LaunchResult:
        """The launch. `max_steps` (loop iterations, cpu backend) and `timeout` (seconds, cpu
        and triton-interpret backends) stop a runaway kernel, 0 meaning no limit: as the
        magic's `--max-steps` and `--timeout`."""
        try:
            options = python_run_options(max_steps, timeout)
            result = self.run(*args, backend=backend, cutile_args=cutile_args, options=options)
        except (LaunchError, InterpError) as e:
            raise quiet(e) from None
        except KeyboardInterrupt as e:
            # Still an interrupt (a loop of launches stops), shown as one line.
            raise quiet(KeyboardInterrupt(interrupted_line(e, self.kernel.name))) from None
        if self.last_note is not None:
            _note_once(self.last_note)
        return result

    def time(
        self,
        *args: Any,
        repeat: int = 5,
        backend: str | None = None,
        cutile_args: bool = False,
        max_steps: int = DEFAULT_MAX_STEPS,
        timeout: float = 0,
    ) -> Timing:
        """Run `repeat` times (array arguments restored between runs, so that every run sees
        the same inputs) and return the kernel times."""
        try:
            options = python_run_options(max_steps, timeout)
            chosen, _ = resolve_backend(backend or self.kernel.owner.backend)
            return time_runs(
                lambda: self.run(*args, backend=chosen, cutile_args=cutile_args, options=options), args, repeat, chosen
            )
        except (LaunchError, InterpError) as e:
            raise quiet(e) from None
        except KeyboardInterrupt as e:
            raise quiet(KeyboardInterrupt(interrupted_line(e, self.kernel.name))) from None


def python_run_options(max_steps: int, timeout: float) -> RunOptions:
    """The RunOptions of a Python launch (a runaway's report names its keywords,
    `max_steps=N`); LaunchError (kind "argument") for a limit that is not a number, 0 (no
    limit) or more."""
    for name, value, kinds in (
        ("max_steps", max_steps, (int, np.integer)),
        ("timeout", timeout, (int, float, np.number)),
    ):
        if isinstance(value, bool) or not isinstance(value, kinds) or not value >= 0:
            raise LaunchError(f"{name}={value!r}: give 0 (no limit) or more", kind="argument")
    return RunOptions(max_steps=int(max_steps), timeout=float(timeout) or None, limits_spelled="keyword")


_NOTED: set[str] = set()


def _note_once(note: str) -> None:
    """Show the `auto` note the first time it applies in a session (a loop of launches
    should not fill the output with it)."""
    if note in _NOTED:
        return
    _NOTED.add(note)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is not None:
        display(note_view(note))


# --------------------------------------------------------------------------------------------
# Snapshots and timing


def snapshot(value: Any) -> Any:
    """A copy of the arrays in `value` (arrays, and lists and tuples of them, as cuTile
    arguments nest), to restore or compare against later; other values as they are."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, tuple)):
        return type(value)(snapshot(v) for v in value)
    return value


def restore(value: Any, saved: Any) -> None:
    """Put the snapshot's contents back into the (same) arrays of `value`."""
    if isinstance(value, np.ndarray) and isinstance(saved, np.ndarray):
        if value.flags.writeable:
            np.copyto(value, saved)
    elif isinstance(value, (list, tuple)) and isinstance(saved, (list, tuple)):
        for v, s in zip(value, saved):
            restore(v, s)


@dataclass(slots=True)
class Timing:
    """Kernel times of repeated runs (seconds, placing arguments excluded)."""

    backend: str
    times: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def spread(self) -> tuple[float, float]:
        return min(self.times), max(self.times)

    def summary(self) -> str:
        lo, hi = self.spread
        runs = f"{len(self.times)} run{'s' if len(self.times) != 1 else ''}"
        return f"{self.backend}: median {seconds(self.median)} over {runs} (min {seconds(lo)}, max {seconds(hi)})"

    def __repr__(self) -> str:
        return self.summary()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return note_view(self.summary(), "ok")._repr_mimebundle_()


def time_runs(
    run: Callable[[], LaunchResult], args: Sequence[Any], repeat: int, backend: str, budget: float | None = None
) -> Timing:
    """`repeat` runs of `run`, restoring the array arguments before each one after the first;
    with a `budget` (seconds of kernel time), no further run starts once it is spent (a slow
    backend then gets fewer runs, at least one)."""
    _check_repeat(repeat)
    saved = snapshot(list(args))
    times: list[float] = []
    for i in range(repeat):
        if i:
            if budget is not None and sum(times) >= budget:
                break
            restore(list(args), saved)
        times.append(run().time)
    return Timing(backend, times)


def _check_repeat(repeat: int) -> None:
    # The magic checks `--time N` itself: this is the Python keyword's check.
    if isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)) or repeat < 1:
        raise LaunchError(f"repeat={repeat!r}: the number of runs must be at least 1", kind="argument")


@dataclass(slots=True)
class BackendRow:
    backend: str
    timing: Timing | None = None
    reason: str | None = None  # why it did not run
    max_diff: float | None = None  # largest difference from the first backend's results


@dataclass(slots=True)
class BackendTable:
    """The same launch timed on several backends; each result compared with the first's."""

    kernel: str
    rows: list[BackendRow]

    def text(self) -> str:
        lines = [f"@{self.kernel} on every available backend:"]
        for row in self.rows:
            if row.timing is None:
                lines.append(f"  {row.backend:<17} not run: {row.reason}")
                continue
            diff = "" if row.max_diff is None else f"; max difference from {self.rows[0].backend}: {row.max_diff:.3g}"
            lines.append(f"  {row.timing.summary()}{diff}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        head = "<tr><th>backend</th><th>median</th><th>min</th><th>max</th><th>runs</th><th>vs first</th></tr>"
        body = []
        for row in self.rows:
            if row.timing is None:
                body.append(
                    f'<tr><td>{esc(row.backend)}</td><td colspan="5" style="text-align:left">'
                    f"not run: {esc(row.reason)}</td></tr>"
                )
                continue
            lo, hi = row.timing.spread
            diff = "" if row.max_diff is None else f"{row.max_diff:.3g}"
            body.append(
                f"<tr><td>{esc(row.backend)}</td><td>{seconds(row.timing.median)}</td><td>{seconds(lo)}</td>"
                f"<td>{seconds(hi)}</td><td>{len(row.timing.times)}</td><td>{diff}</td></tr>"
            )
        html_text = (
            f'<div class="tileir-backends"><b>@{esc(self.kernel)}</b> on every available backend'
            f"<table>{head}{''.join(body)}</table></div>"
        )
        return Rich(html_text, self.text())._repr_mimebundle_()


def time_backends(
    launch_: Launch,
    *args: Any,
    repeat: int = 3,
    cutile_args: bool = False,
    backends: Sequence[str] | None = None,
    budget: float = 2.0,
) -> BackendTable:
    """Run `launch_` with `args` on each backend (default: every available one), `repeat`
    times each (fewer where one backend's runs take more than `budget` seconds: Triton's
    interpreter can take seconds a run), every backend on the same inputs; a backend that
    cannot run the kernel (a lowering that is missing an op, say) is listed with its one-line
    reason. The arrays are left as the first backend that ran made them."""
    try:
        _check_repeat(repeat)  # the call is wrong, not a backend: no row per backend
    except LaunchError as e:
        raise quiet(e) from None
    saved = snapshot(list(args))
    options = python_run_options(DEFAULT_MAX_STEPS, 0)  # a runaway names the keywords
    rows: list[BackendRow] = []
    reference: list[Any] | None = None
    for backend in backends or available_backends():
        restore(list(args), saved)
        row = BackendRow(backend)
        try:
            row.timing = time_runs(
                lambda b=backend: launch_.run(*args, backend=b, cutile_args=cutile_args, options=options),
                args,
                repeat,
                backend,
                budget,
            )
        except KeyboardInterrupt as e:
            raise quiet(KeyboardInterrupt(interrupted_line(e, launch_.kernel.name))) from None
        except Exception as e:  # noqa: BLE001 - one backend's failure (a bug in a lowering too) is a row, not the end
            row.reason = failure_line(e)
            rows.append(row)
            continue
        results = snapshot(list(args))
        if reference is None:
            reference = results
        else:
            row.max_diff = _max_difference(reference, results)
        rows.append(row)
    if reference is not None:
        restore(list(args), reference)
    return BackendTable(launch_.kernel.name, rows)


def _max_difference(a: Any, b: Any) -> float:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.size == 0:
            return 0.0
        with np.errstate(all="ignore"):
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        d = d[~(np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64)))]
        return float(np.nanmax(d)) if d.size else 0.0
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return max((_max_difference(x, y) for x, y in zip(a, b)), default=0.0)
    return 0.0
