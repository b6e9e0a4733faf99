"""The abstract machine: runs a kernel over a grid of tile blocks, many blocks at once.

Batching. The grid is cut into *groups* of tile blocks that execute together, in the
order of their linear ids (x fastest, then y, then z, as CUDA numbers blocks). A tile
value of type `tile<SxE>` is held for a group as one ndarray of shape `(G, *S)`, G
being the group size, or `(1, *S)` when every block of the group has the same value
(constants, kernel arguments, loop bounds): NumPy's broadcasting then works across the
blocks, so `addf` on a group is one NumPy call however many blocks it holds. The group
size is chosen so that the largest tile of the kernel times the group size stays near
`GROUP_ELEMENT_BUDGET` elements; values are dropped from the register file after their
last use, so memory stays bounded by a few of those group-sized arrays.

Divergence. Where control flow depends on a value that differs between the blocks of
a group (an `if` condition, a loop bound, a `break`), the group is split: each branch
runs on a child `Frame` that sees only its blocks (values of the parent are restricted
lazily, on first use, and the restriction is cached), and the branches' results are
merged back. Blocks that leave a region early (`break`, `continue`, `return` inside an
`if`, or a failed `assert`) are carried as `Exit`s with the positions they cover, so the
rest of the region runs on the blocks that remain. Where the condition is the same for
every block of the group nothing is split or copied.

Undefined behaviour is an `InterpError` naming the op, its source line, the first
tile block at fault and, for memory, the address.

Runaway kernels. A `loop` whose `break` never fires, or a `for` over 0..2^63, would run
forever: a launch stops, with an `InterpError` naming the loop and a tile block still in
it, once its loop bodies have run `RunOptions.max_steps` times (each run of a body on a
group counts once, however many blocks the group holds) or once it has run
`RunOptions.timeout` seconds (checked at each loop iteration and each group).
"""

from __future__ import annotations

import itertools
import sys
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from ..ir.attributes import location_text
from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.types import IntegerType, TileType
from . import dtypes
from .memory import Memory, MemoryFault, memory_image
from .registry import SEMANTICS, Ctx

# A token carries no data: what orders memory operations is recorded in
# `Machine.value_deps`. One shared object stands for every token value.
TOKEN = "token"

# Target for (elements of the largest tile value of a kernel) x (blocks run together).
# 2^20 elements (4 MiB of f32 per tile value) amortizes the per-op Python overhead over
# enough data (16 groups for a 2^24-element vector add) while keeping the group's
# temporaries small next to the arrays a benchmark-sized kernel works on.
GROUP_ELEMENT_BUDGET = 1 << 20

# Grid extents per axis: the op reference limits them to 2^24 - 1 (get_tile_block_id /
# get_num_tile_blocks: "larger dimensions may result in incorrect tile block ids").
MAX_GRID_EXTENT = (1 << 24) - 1

# Loop iterations (runs of a `for`/`loop` body on a group) one launch may make before it is
# stopped as a runaway. An iteration costs the interpreter 10 us or more (a few ops of Python
# overhead), so a runaway stops within a minute even on a loaded machine, and a kernel that
# really iterates this much would run for minutes anyway; the tests, examples and benchmarks
# use a few hundred at most (the 1024^3 matmul benchmark: one group, 32 iterations).
DEFAULT_MAX_STEPS = 1_000_000

_NO_DEPS: frozenset[int] = frozenset()


class InterpError(Exception):
    """Undefined behaviour or a failure while running a kernel.

    `str()` gives the one-line report: `file:line:col: error: <op>: message
    (tile block (x, y, z)[, address 0x...])[; note]`. `details` holds further lines (one
    per failing tile block of a failed `assert`)."""

    def __init__(
        self,
        message: str,
        *,
        op: str | None = None,
        where: str | None = None,
        block: tuple[int, int, int] | None = None,
        address: int | None = None,
        note: str | None = None,
        details: list[str] | None = None,
    ) -> None:
        self.message = message
        self.op = op
        self.where = where
        self.block = block
        self.address = address
        self.note = note
        self.details: list[str] = details or []
        super().__init__(self.report())

    def report(self) -> str:
        text = f"{self.op}: {self.message}" if self.op else self.message
        extra = []
        if self.block is not None:
            extra.append(f"tile block ({self.block[0]}, {self.block[1]}, {self.block[2]})")
        if self.address is not None:
            extra.append(f"address {self.address:#x}")
        if extra:
            text += f" ({', '.join(extra)})"
        if self.note:
            text += f"; {self.note}"
        return f"{self.where}: error: {text}" if self.where else f"error: {text}"


class _Blamed:
    """What a runaway and an interrupted launch share: the report names the loop with the most
    iterations that the stop unwound through (an outer loop that never ends stops in
    whichever inner loop it is running); each loop it passes calls `blame`."""

    iterations = -1
    what = ""
    joiner = ", "  # between `what` and "at iteration N of this loop"

    def place(self, machine: Machine, op: Operation, frame: Frame, iterations: int | None) -> dict[str, Any] | None:
        """The report's fields naming `op` (at `iterations` of its current run, None: not a
        loop) and the first tile block of `frame`, or None where an op named before had run
        more iterations."""
        n = iterations if iterations is not None else 0
        if n <= self.iterations:
            return None
        self.iterations = n
        message = f"{self.what}{self.joiner}at iteration {n} of this loop" if iterations is not None else self.what
        block = frame.group.coords(0) if frame.group.size else None
        return {"message": message, "op": op.mnemonic, "where": machine.where(op), "block": block}


class RunawayError(InterpError, _Blamed):
    """A launch stopped by its step budget or time limit (RunOptions.max_steps/timeout).
    Raised by the loop whose iteration went over."""

    def __init__(
        self, what: str, hint: str, machine: Machine, op: Operation, frame: Frame, iterations: int | None
    ) -> None:
        self.what = what
        InterpError.__init__(self, what, note=hint)
        self.blame(machine, op, frame, iterations)

    def blame(self, machine: Machine, op: Operation, frame: Frame, iterations: int | None) -> None:
        fields = self.place(machine, op, frame, iterations)
        if fields is not None:
            InterpError.__init__(self, fields.pop("message"), **fields, note=self.note)


class InterruptedLaunch(KeyboardInterrupt, _Blamed):
    """Ctrl-C (a notebook's Interrupt) while a kernel ran on the interpreter: still a
    KeyboardInterrupt, so that whatever was running stops, but it says where the kernel was
    (`report()`, the one line of a runaway's report)."""

    joiner = " "

    def __init__(self, kernel: str | None) -> None:
        super().__init__()
        self.what = f"@{kernel} was interrupted" if kernel else "the launch was interrupted"
        self.error = InterpError(self.what)

    def blame(self, machine: Machine, op: Operation, frame: Frame, iterations: int | None) -> None:
        fields = self.place(machine, op, frame, iterations)
        if fields is not None:
            self.error = InterpError(fields.pop("message"), **fields)

    def report(self) -> str:
        return self.error.report().replace(": error: ", ": ", 1).removeprefix("error: ")

    def __str__(self) -> str:
        return self.report()


@dataclass(slots=True)
class Group:
    """Tile blocks executing together: their grid coordinates, one entry per block."""

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    # Linear ids (x fastest) of the blocks, once asked for, and the grid they are for.
    ids: np.ndarray | None = None
    ids_grid: tuple[int, int, int] | None = None

    @property
    def size(self) -> int:
        return len(self.x)

    def subset(self, index: np.ndarray) -> Group:
        sub = Group(self.x[index], self.y[index], self.z[index])
        if self.ids is not None:
            sub.ids, sub.ids_grid = self.ids[index], self.ids_grid
        return sub

    def coords(self, position: int) -> tuple[int, int, int]:
        return int(self.x[position]), int(self.y[position]), int(self.z[position])

    def linear(self, grid: tuple[int, int, int]) -> np.ndarray:
        """Linear tile block ids (x fastest), shape (G,), int64, increasing; the same array
        object on every call for one group."""
        if self.ids is None or self.ids_grid != grid:
            gx, gy = grid[0], grid[1]
            self.ids = self.x.astype(np.int64) + gx * (self.y.astype(np.int64) + gy * self.z.astype(np.int64))
            self.ids_grid = grid
        return self.ids


def restrict(value: Any, index: np.ndarray) -> Any:
    """A group value seen by the sub-group at `index` (positions in the group)."""
    if isinstance(value, np.ndarray):
        return value if value.shape[0] == 1 else value[index]
    restrict_to = getattr(value, "restrict", None)
    return restrict_to(index) if restrict_to is not None else value


def is_uniform(value: np.ndarray) -> bool:
    """Whether a group value is the same for every block (only the cheap check)."""
    return value.shape[0] == 1


class Frame:
    """The register file of a group: SSA value → runtime value. A child frame covers a
    subset of its parent's blocks (`index`: their positions in the parent's group)."""

    __slots__ = ("group", "env", "parent", "index")

    def __init__(self, group: Group, parent: Frame | None = None, index: np.ndarray | None = None) -> None:
        self.group = group
        self.env: dict[Value, Any] = {}
        self.parent = parent
        self.index = index

    def child(self, index: np.ndarray) -> Frame:
        return Frame(self.group.subset(index), self, index)

    def get(self, v: Value) -> Any:
        try:
            return self.env[v]
        except KeyError:
            pass
        if self.parent is None:
            raise KeyError(v)
        value = restrict(self.parent.get(v), self.index)  # type: ignore[arg-type]
        self.env[v] = value
        return value


@dataclass(slots=True)
class Exit:
    """A region left through `kind` ("yield", "continue", "break", "return", or "abort"
    for blocks stopped by a failed `assert`) by the blocks at `positions` of the frame it
    is reported to (None: all of them), with the terminator's operand values and, while
    dependencies are tracked, each operand's memory-op dependencies."""

    kind: str
    positions: np.ndarray | None
    values: list[Any] = field(default_factory=list)
    deps: list[frozenset[int]] | None = None


def op_where(module: Module, op: Operation) -> str | None:
    """`file:line:col` of an op of `module`: its place in the parsed text, else its location
    attribute (None when it has neither)."""
    source = module.source
    if source is not None and op.span is not None:
        line, col = source.line_col(op.span.start)
        return f"{source.name}:{line + 1}:{col + 1}"
    return location_text(op.location)


def quote_message(text: str) -> str:
    """An assert's message as a report quotes it: in double quotes, with `\\`, `"` and newlines
    escaped as a reader expects (not the printer's `\22`, which is MLIR's)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _compose(outer: np.ndarray | None, inner: np.ndarray | None) -> np.ndarray | None:
    """Positions `inner` (of a sub-frame at `outer`) as positions of the outer frame."""
    if inner is None:
        return outer
    return inner if outer is None else outer[inner]


def _union(positions: list[np.ndarray | None], size: int) -> np.ndarray:
    """The sorted union of disjoint position sets (None: all `size` positions)."""
    if any(p is None for p in positions):
        return np.arange(size)
    if len(positions) == 1:
        return positions[0]  # type: ignore[return-value]
    if not positions:
        return np.zeros(0, dtype=np.intp)
    return np.sort(np.concatenate(positions))  # type: ignore[arg-type]


# A part of a merge: (positions in the frame or None for all, values, deps or None).
_Part = tuple[np.ndarray | None, list[Any], list[frozenset[int]] | None]


def _merge_value(parts: list[tuple[np.ndarray | None, Any]], size: int) -> Any:
    """One value for a frame of `size` blocks from values of disjoint subsets."""
    first = parts[0][1]
    if not isinstance(first, np.ndarray):
        return first  # tokens (views cannot be merged: the verifier forbids them here)
    out = np.empty((size, *first.shape[1:]), dtype=first.dtype)
    for positions, value in parts:
        if positions is None:
            out[...] = value
        else:
            out[positions] = value
    return out


_TERMINATORS = {
    "cuda_tile.yield": "yield",
    "cuda_tile.continue": "continue",
    "cuda_tile.break": "break",
    "cuda_tile.return": "return",
}

# How a block without a terminator is left, by the op that owns its region.
_IMPLICIT_EXIT = {
    "cuda_tile.for": "continue",
    "cuda_tile.loop": "continue",
    "cuda_tile.entry": "return",
}


def _implicit_exit(block: Block) -> str:
    region = block.parent
    owner = region.parent if region is not None else None
    return _IMPLICIT_EXIT.get(owner.name, "yield") if owner is not None else "return"


@dataclass(slots=True)
class RunOptions:
    stdout: IO[str] | None = None  # where print_tko writes (default: sys.stdout at the time)
    check_races: bool = True
    # f32 atomic `addf` as NVIDIA GPUs compute it (`atom.add.f32`, in Triton's code and in
    # tileiras'): subnormal inputs and results flushed to zero. Off: exact IEEE addition, as
    # the op reference reads. The GPU checks compare with the interpreter set so.
    gpu_f32_atomic_add: bool = False
    group_budget: int = GROUP_ELEMENT_BUDGET
    # Start each line print_tko writes with the tile block it comes from,
    # `[block (x, y, z)] `. (The GPU prints no prefix; its blocks' lines interleave.)
    print_prefix: bool = True
    # Budgets against runaway kernels (`tileir run --max-steps/--timeout`): loop iterations
    # per launch (each run of a loop body on a group of blocks counts once; 0 or None: no
    # limit) and wall-clock seconds per launch (0 or None: no limit).
    max_steps: int | None = DEFAULT_MAX_STEPS
    timeout: float | None = None
    # How a runaway's report names the limits: "option" (`--max-steps N`, the command
    # line's and the magic's) or "keyword" (`max_steps=N`, a Python launch's).
    limits_spelled: str = "option"

    def spell(self, limit: str, value: object) -> str:
        """`limit` ("max_steps" or "timeout") set to `value`, as `limits_spelled` says."""
        if self.limits_spelled == "keyword":
            return f"{limit}={value}"
        return f"--{limit.replace('_', '-')} {value}"


@dataclass(slots=True)
class AssertFailure:
    """A tile block stopped by a failed `assert`: the first failing element, the count."""

    op: Operation
    block: tuple[int, int, int]
    element: tuple[int, ...]
    count: int


# How a block's ops are run: (op, terminator kind or None, control-flow handler or None,
# values dead after the op).
_Step = tuple[Operation, str | None, Callable[..., Any] | None, tuple[Value, ...]]


# What each backend keeps for a loaded module, per Module object: spec 003 (6.2.1) says a
# global "will be initialized exactly once", and NVIDIA's op docs (cuda-tile Ops.td,
# GlobalOp) that its allocation is initialized "at CUDA module load time" and lives as long
# as the module. Our runtime's loaded module is the `Module` object, so a global's storage
# lives in this cache, dropped with the Module; each backend (cpu, triton-interpret,
# triton, tileiras) keeps its own, as two devices would each load their own copy.
_LOADED: weakref.WeakKeyDictionary[Module, dict[str, dict[Any, Any]]] = weakref.WeakKeyDictionary()


def loaded_state(module: Module, backend: str) -> dict[Any, Any]:
    """The state `backend` keeps for `module` while the Module object lives (empty at first):
    the storage of its globals, for instance. Its values must not refer to the Module, or
    it would never be dropped."""
    per_backend = _LOADED.get(module)
    if per_backend is None:
        per_backend = _LOADED[module] = {}
    return per_backend.setdefault(backend, {})


class Machine:
    """Runs kernels of one module against one simulated global memory; memory persists
    across `run`s. A global's storage belongs to the Module object (`loaded_state`), not
    to the machine: every Machine of one Module places the same arrays, so each launch
    sees what the launches of that Module before it left in its globals."""

    def __init__(self, module: Module, memory: Memory | None = None, options: RunOptions | None = None) -> None:
        self.module = module
        self.memory = memory if memory is not None else Memory()
        self.options = options or RunOptions()
        self.memory.race_checking = self.options.check_races
        self.memory.f32_atomic_add_ftz = self.options.gpu_f32_atomic_add
        self.grid: tuple[int, int, int] = (1, 1, 1)
        self.value_deps: dict[Value, frozenset[int]] = {}
        # Memory-op instances that decided whether the ops now running run at all.
        self.control_deps: frozenset[int] = _NO_DEPS
        self._instances = itertools.count(1)
        self.globals: dict[str, int] = {}  # symbol → address
        self.assert_failures: list[AssertFailure] = []
        self.assert_failed_elements = 0
        # print_tko output of the group being run: (linear block id, text); None outside `run`.
        self.print_buffer: list[tuple[int, str]] | None = None
        self._plans: dict[Block, list[_Step]] = {}
        # What semantics derive from an op alone (types, attributes), per run (`Ctx.static`).
        self.statics: dict[tuple[Operation, Callable[..., Any]], Any] = {}
        self._largest: dict[Operation, int] = {}
        self._waits: dict[Operation, bool] = {}  # (`_may_wait_for_other_blocks`)
        self._checked_loops: set[Operation] = set()
        self._free_dead = False
        # Loop iterations run so far (since the last `run`) and the budgets (see RunOptions).
        self.steps = 0
        self._step_limit = sys.maxsize
        self._deadline: float | None = None
        self._check_at = sys.maxsize  # the step count past which `_check_budget` runs
        self._start_budget()
        self._load_globals()

    # -- errors --------------------------------------------------------------------------

    def where(self, op: Operation) -> str | None:
        """`file:line:col` of an op: its place in the parsed text, else its location attribute."""
        return op_where(self.module, op)

    def op_error(
        self,
        op: Operation,
        frame: Frame,
        message: str,
        blocks: np.ndarray | None = None,
        address: int | None = None,
        note: str | None = None,
    ) -> InterpError:
        """An error of `op` run on `frame`; `blocks` (a boolean mask over the group, or
        positions) picks the block named: the first one at fault (default: the first)."""
        position = 0
        if blocks is not None:
            blocks = np.asarray(blocks)
            if blocks.dtype == np.bool_:
                flat = blocks.reshape(blocks.shape[0], -1).any(axis=1) if blocks.ndim > 1 else blocks.reshape(-1)
                hits = np.flatnonzero(flat)
                position = int(hits[0]) if len(hits) else 0
            elif blocks.size:
                position = int(blocks.reshape(-1)[0])
        size = frame.group.size
        block = frame.group.coords(min(position, size - 1)) if size else None
        return InterpError(message, op=op.mnemonic, where=self.where(op), block=block, address=address, note=note)

    # -- dependencies (for race detection) -----------------------------------------------

    def next_instance(self) -> int:
        return next(self._instances)

    def deps_of_operands(self, op: Operation, frame: Frame) -> frozenset[int]:
        deps: frozenset[int] = self.control_deps
        vd = self.value_deps
        if vd:
            for v in op.operands:
                d = vd.get(v)
                if d:
                    deps = deps | d
        return deps

    def _deps_of(self, values: list[Value]) -> list[frozenset[int]] | None:
        vd = self.value_deps
        if not vd:
            return None
        return [vd.get(v, _NO_DEPS) for v in values]

    def _set_deps(self, targets: list[Value], deps: list[frozenset[int]] | None) -> None:
        vd = self.value_deps
        if not vd and not deps:
            return
        if deps is None:
            for t in targets:
                vd.pop(t, None)
            return
        for t, d in zip(targets, deps, strict=False):
            if d:
                vd[t] = d
            else:
                vd.pop(t, None)

    # -- module setup ----------------------------------------------------------------------

    def _load_globals(self) -> None:
        # The module's storage, initialized at its first launch on this backend and placed
        # without a copy, so that what a kernel writes stays there for the next launch.
        storage = loaded_state(self.module, "cpu")
        for op in self.module.walk():
            if op.name == "cuda_tile.global":
                value = op.properties.get("value")
                sym = op.properties["sym_name"].value  # type: ignore[attr-defined]
                itemsize = dtypes.storage_dtype(value.element).itemsize  # type: ignore[union-attr]
                alignment = self._int(op.properties.get("alignment"), itemsize)
                data = storage.get(sym)
                if data is None:
                    data = storage[sym] = memory_image(value).copy()
                self.globals[sym] = self.memory.place(
                    data,
                    alignment=alignment,
                    name=f"global @{sym}",
                    read_only=op.properties.get("constant") is not None,
                )

    @staticmethod
    def _int(attr: Any, default: int) -> int:
        return int(getattr(attr, "value", default)) if attr is not None else default

    # -- launching -------------------------------------------------------------------------

    def group_size(self, kernel: Operation, total: int) -> int:
        """How many tile blocks run together (see `GROUP_ELEMENT_BUDGET`; one, where the
        kernel may wait for other blocks: `_may_wait_for_other_blocks`)."""
        per_block = self._largest.get(kernel)
        if per_block is None:
            per_block = self._largest[kernel] = _largest_tile(kernel)
        waits = self._waits.get(kernel)
        if waits is None:
            waits = self._waits[kernel] = _may_wait_for_other_blocks(kernel)
        return 1 if waits else max(1, min(total, self.options.group_budget // per_block))

    def run(self, kernel: Operation, grid: tuple[int, ...], args: list[Any]) -> None:
        """Run `kernel` (an `entry` op) over `grid` ((x[, y[, z]]) tile blocks), its
        parameters bound to `args` (scalars as arrays of shape (1,) of the parameter's
        storage dtype). Raises `InterpError` at the first undefined behaviour, or at the
        end when an `assert` failed (the failing blocks stop there; the others go on)."""
        dims = tuple(int(d) for d in grid) + (1,) * (3 - len(grid))
        if len(dims) != 3 or any(d < 1 for d in dims):
            raise InterpError(f"the grid must be 1 to 3 positive extents, got {tuple(grid)}")
        if any(d > MAX_GRID_EXTENT for d in dims):
            raise InterpError(f"grid {dims} exceeds the limit of {MAX_GRID_EXTENT} (2^24-1) tile blocks per axis")
        self.grid = dims  # type: ignore[assignment]
        gx, gy, gz = dims
        body = kernel.regions[0].blocks[0]
        total = gx * gy * gz
        size = self.group_size(kernel, total)
        self.value_deps.clear()
        self.assert_failures = []
        self.assert_failed_elements = 0
        self._free_dead = True
        self._start_budget()
        self.statics.clear()
        try:
            # The ops define their infinities and NaNs (IEEE); NumPy's warnings about them say
            # nothing. Set once here, so that the semantics' fast paths need no errstate of their own.
            with np.errstate(all="ignore"):
                for start in range(0, total, size):
                    frame = Frame(_group_at(start, min(size, total - start), dims))  # type: ignore[arg-type]
                    if self._deadline is not None and time.monotonic() > self._deadline:
                        raise self._budget_error(kernel, frame, None, "timeout")
                    env = frame.env
                    for arg, value in zip(body.arguments, args, strict=True):
                        env[arg] = value
                    self.value_deps.clear()
                    self.memory.begin_group(start, frame.group.size)
                    self.print_buffer = []
                    try:
                        self.exec_block(body, frame)
                    finally:
                        self._flush_prints()
        except InterpError as e:
            if self.assert_failures:
                raise self._assert_error() from e
            raise
        finally:
            self._free_dead = False
            self.print_buffer = None
            self.value_deps.clear()
        if self.assert_failures:
            raise self._assert_error()

    def _start_budget(self) -> None:
        """Reset the step count and arm the budgets of `options` (a launch's start)."""
        options = self.options
        self.steps = 0
        self._step_limit = options.max_steps if options.max_steps else sys.maxsize
        self._deadline = time.monotonic() + options.timeout if options.timeout else None
        # With a time limit the clock is read at every iteration (a few dozen ns).
        self._check_at = 0 if self._deadline is not None else self._step_limit

    def _check_budget(self, op: Operation, frame: Frame, iterations: int) -> None:
        """Raise the report of a launch over its budget at this iteration of loop `op`."""
        if self.steps > self._step_limit:
            raise self._budget_error(op, frame, iterations, "steps")
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise self._budget_error(op, frame, iterations, "timeout")

    def _budget_error(self, op: Operation, frame: Frame, iterations: int | None, kind: str) -> RunawayError:
        """The report of a launch stopped by its step budget (`kind` "steps") or time limit
        ("timeout") while `op` (a loop at iteration `iterations`, or the entry) ran on `frame`."""
        if kind == "steps":
            n = self.options.max_steps
            what = f"the kernel ran past {n} loop iterations ({self.options.spell('max_steps', n)})"
            hint = f"raise or lift the limit with {self.options.spell('max_steps', 'N')} (0: no limit)"
        else:
            t = f"{self.options.timeout:g}"
            what = f"the kernel ran past its time limit of {t} s ({self.options.spell('timeout', t)})"
            hint = f"raise or lift the limit with {self.options.spell('timeout', 'SECONDS')} (0: no limit)"
        return RunawayError(what, hint, self, op, frame, iterations)

    def _flush_prints(self) -> None:
        """Write the group's print_tko output, block by block (program order within a block)."""
        buffer = self.print_buffer
        self.print_buffer = None
        if not buffer:
            return
        out = self.options.stdout or sys.stdout
        buffer.sort(key=lambda item: item[0])  # stable: keeps program order within a block
        if not self.options.print_prefix:
            out.write("".join(text for _, text in buffer))
            return
        gx, gy = self.grid[0], self.grid[1]
        pieces: list[str] = []
        for block_id, group in itertools.groupby(buffer, key=lambda item: item[0]):
            x, rest = block_id % gx, block_id // gx
            prefix = f"[block ({x}, {rest % gy}, {rest // gy})] "
            text = "".join(t for _, t in group)
            for line in text.splitlines(keepends=True):
                pieces.append(prefix + line)
            if pieces and not pieces[-1].endswith("\n"):
                pieces.append("\n")
        out.write("".join(pieces))

    def _assert_error(self) -> InterpError:
        failures = self.assert_failures
        first = failures[0]
        text = getattr(first.op.attr("message"), "value", "")
        at = f" at element {first.element}" if first.element else ""
        note = None
        if len(failures) > 1 or first.count > 1:
            blocks = "1 tile block" if len(failures) == 1 else f"{len(failures)} tile blocks"
            note = f"in all, {self.assert_failed_elements} elements failed in {blocks}"
        details = []
        for f in failures[:100]:
            where = self.where(f.op)
            element = f" at element {f.element}" if f.element else ""
            msg = getattr(f.op.attr("message"), "value", "")
            details.append(
                f"{where + ': ' if where else ''}tile block {f.block}: assertion failed: {quote_message(msg)}{element}"
                f" ({f.count} element{'s' if f.count != 1 else ''})"
            )
        if len(failures) > 100:
            details.append(f"... and {len(failures) - 100} more tile blocks")
        return InterpError(
            f"assertion failed: {quote_message(text)}{at}",
            op=first.op.mnemonic,
            where=self.where(first.op),
            block=first.block,
            note=note,
            details=details,
        )

    # -- execution -------------------------------------------------------------------------

    def _plan(self, block: Block) -> list[_Step]:
        """The ops of `block` with their terminator kind / control handler and the values
        of this block that are dead after each op (computed once per block)."""
        plan = self._plans.get(block)
        if plan is not None:
            return plan
        ops = block.ops
        defined: set[Value] = set(block.arguments)
        for op in ops:
            defined.update(op.results)
        last: dict[Value, int] = {}
        for i, op in enumerate(ops):
            for r in op.results:
                last.setdefault(r, i)
            for inner in op.walk():
                for v in inner.operands:
                    if v in defined:
                        last[v] = i
        dead: list[list[Value]] = [[] for _ in ops]
        for v, i in last.items():
            dead[i].append(v)
        plan = [(op, _TERMINATORS.get(op.name), _CONTROL.get(op.name), tuple(dead[i])) for i, op in enumerate(ops)]
        self._plans[block] = plan
        return plan

    def exec_block(self, block: Block, frame: Frame, start: int = 0) -> list[Exit]:
        """Run `block` from op `start` on `frame`; returns how its blocks left it (the
        exits' positions are positions in `frame`)."""
        plan = self._plan(block)
        free = self._free_dead
        exits: list[Exit] = []
        offset: np.ndarray | None = None  # positions of `frame` in the caller's frame
        for i in range(start, len(plan)):
            op, kind, handler, dead = plan[i]
            if kind is not None:
                exits.append(self._exit(kind, op, frame, offset))
                return exits
            if handler is None:
                self.exec_op(op, frame)
            else:
                rest, frame, more = handler(self, op, frame)
                for e in more:
                    e.positions = _compose(offset, e.positions)
                    exits.append(e)
                if rest is not None:
                    if not len(rest):
                        return exits
                    offset = _compose(offset, rest)
            if free and dead:
                env = frame.env
                for v in dead:
                    env.pop(v, None)
        exits.append(Exit(_implicit_exit(block), offset))
        return exits

    def _exit(self, kind: str, op: Operation, frame: Frame, offset: np.ndarray | None) -> Exit:
        get = frame.get
        operands = op.operands
        return Exit(kind, offset, [get(v) for v in operands], self._deps_of(operands) if operands else None)

    def exec_op(self, op: Operation, frame: Frame) -> Any:
        """Run one op without regions of its own (or whose regions its semantics runs);
        binds its results in `frame` and returns what the semantics returned."""
        fn = SEMANTICS.get(op.name)
        if fn is None:
            raise InterpError("the interpreter has no semantics for this op", op=op.mnemonic, where=self.where(op))
        get = frame.get
        ctx = Ctx(self, frame, op, [get(v) for v in op.operands])
        try:
            out = fn(ctx)
        except InterpError:
            raise
        except MemoryFault as e:
            blocks = np.array([e.block]) if e.block is not None else None
            raise self.op_error(op, frame, e.message, blocks=blocks, address=e.address) from None
        except Exception as e:  # a bug in a semantics function: still a report, not a crash
            raise self.op_error(op, frame, f"internal error in the interpreter: {type(e).__name__}: {e}") from e
        results = op.results
        if not results:
            return out
        values = (out,) if len(results) == 1 and not isinstance(out, (tuple, list)) else out
        env = frame.env
        for r, value in zip(results, values, strict=True):
            env[r] = value
        vd = self.value_deps
        if vd or ctx.new_deps or self.control_deps:
            deps = self.deps_of_operands(op, frame) | ctx.new_deps
            for r in results:
                if deps:
                    vd[r] = deps
                else:
                    vd.pop(r, None)
        return out

    def run_region(self, region: Region, frame: Frame, args: list[Any]) -> list[Exit]:
        block = region.blocks[0]
        env = frame.env
        for a, v in zip(block.arguments, args, strict=True):
            env[a] = v
        return self.exec_block(block, frame)

    def run_combiner(self, region: Region, args: list[np.ndarray], outer: Frame | None = None) -> list[np.ndarray]:
        """Run the body of a `reduce`/`scan` elementwise on whole arrays at once: the
        body's ops are pure and elementwise on rank-0 tiles, so each argument can be an
        array of any shape, all of one shape (used as the group axis). The arguments'
        first axis is the group axis of `outer`, the frame running the op: values the body
        uses from outside it (0-d tiles) are taken there and spread over the other axes."""
        rank = max((a.ndim for a in args), default=0)
        captured: dict[Value, Any] = {}
        if outer is not None:
            for v in _captured(region):
                value = outer.get(v)
                if isinstance(value, np.ndarray) and rank:
                    # (G, *()) for a 0-d tile: along the group axis, constant along the others.
                    value = value.reshape(value.shape[0], *([1] * (rank - 1)))
                captured[v] = value
        shape = np.broadcast_shapes(*(a.shape for a in args), *(c.shape for c in captured.values()
                                                                 if isinstance(c, np.ndarray)))  # fmt: skip
        n = int(np.prod(shape))
        flat = [np.broadcast_to(a, shape).reshape(n) for a in args]
        zeros = np.broadcast_to(np.int32(0), (n,))
        frame = Frame(Group(zeros, zeros, zeros))
        for v, value in captured.items():
            frame.env[v] = np.broadcast_to(value, shape).reshape(n) if isinstance(value, np.ndarray) else value
        exits = self.run_region(region, frame, flat)
        values = exits[0].values
        return [np.broadcast_to(v, (n,)).reshape(shape) for v in values]

    # -- control flow ------------------------------------------------------------------------
    #
    # A handler runs a control-flow op on `frame` and returns (rest, frame', exits): `rest`
    # None when every block of `frame` goes on after the op (in `frame` itself), else the
    # positions of those that do, and `frame'` a child frame over them; `exits` are the
    # blocks that left the enclosing region (break / continue / return / abort), with
    # positions in `frame`. The op's results are bound in `frame'`.

    def _bind_merged(self, frame: Frame, targets: list[Value], parts: list[_Part]) -> None:
        """Bind `targets` in `frame` from parts covering all of its blocks, disjointly."""
        if not targets:
            return
        env = frame.env
        if len(parts) == 1:
            values = parts[0][1]
            for t, v in zip(targets, values, strict=True):
                env[t] = v
        else:
            size = frame.group.size
            for i, t in enumerate(targets):
                env[t] = _merge_value([(p, values[i]) for p, values, _ in parts], size)
        deps = [d for _, _, d in parts if d is not None]
        if not deps:
            self._set_deps(targets, None)
        elif len(deps) == 1:
            self._set_deps(targets, deps[0])
        else:
            self._set_deps(targets, [frozenset().union(*column) for column in zip(*deps, strict=True)])

    def _continue_with(self, op: Operation, frame: Frame, parts: list[_Part], exits: list[Exit]) -> Any:
        """The handler result once `parts` (positions in `frame`) went on past `op` with
        the op's results, and `exits` left the enclosing region."""
        if not exits:
            self._bind_merged(frame, op.results, parts)
            return None, frame, exits
        rest = _union([p for p, _, _ in parts], frame.group.size)
        if not len(rest):
            return rest, frame, exits
        if len(rest) == frame.group.size:
            self._bind_merged(frame, op.results, parts)
            return None, frame, exits
        cont = frame.child(rest)
        if op.results:
            if len(parts) == 1:
                local = [(None, parts[0][1], parts[0][2])]
            else:
                local = [(np.searchsorted(rest, p), v, d) for p, v, d in parts]
            self._bind_merged(cont, op.results, local)
        return rest, cont, exits

    def exec_if(self, op: Operation, frame: Frame) -> Any:
        cond = frame.get(op.operands[0]).reshape(-1)
        regions = op.regions
        then_block = regions[0].blocks[0]
        else_block = regions[1].blocks[0] if len(regions) > 1 and regions[1].blocks else None
        n = cond.shape[0]
        taken = int(np.count_nonzero(cond)) if n > 1 else (n if cond[0] else 0)
        # What runs in a branch is ordered after the memory accesses the condition was
        # computed from (a store under `if %loaded > 0` cannot happen before that load).
        saved_control = self.control_deps
        cond_deps = self.value_deps.get(op.operands[0])
        if cond_deps:
            self.control_deps = saved_control | cond_deps
        try:
            sides = self._run_if_sides(cond, n, taken, then_block, else_block, frame)
        finally:
            self.control_deps = saved_control
        if sides is None:
            return None, frame, []
        parts: list[_Part] = []
        exits: list[Exit] = []
        for positions, side_exits in sides:
            for e in side_exits:
                where = _compose(positions, e.positions)
                if e.kind == "yield":
                    parts.append((where, e.values, e.deps))
                else:
                    e.positions = where
                    exits.append(e)
        return self._continue_with(op, frame, parts, exits)

    def _run_if_sides(
        self, cond: np.ndarray, n: int, taken: int, then_block: Block, else_block: Block | None, frame: Frame
    ) -> list[tuple[np.ndarray | None, list[Exit]]] | None:
        """Run the branches of an `if` (None when nothing runs)."""
        if taken == n or taken == 0:
            block = then_block if taken else else_block
            if block is None:
                return None
            return [(None, self.exec_block(block, frame))]
        then_pos = np.flatnonzero(cond)
        else_pos = np.flatnonzero(~cond)
        sides = [(then_pos, self.exec_block(then_block, frame.child(then_pos)))]
        if else_block is not None:
            sides.append((else_pos, self.exec_block(else_block, frame.child(else_pos))))
        else:
            sides.append((else_pos, [Exit("yield", None)]))
        return sides

    def exec_assert(self, op: Operation, frame: Frame) -> Any:
        """`assert`: the semantics records failures and returns a mask of the failing
        blocks (or None); those blocks stop here, the others go on."""
        failed = self.exec_op(op, frame)
        if failed is None:
            return None, frame, []
        size = frame.group.size
        failed = np.broadcast_to(np.asarray(failed, dtype=np.bool_).reshape(-1), (size,))
        exits = [Exit("abort", np.flatnonzero(failed))]
        rest = np.flatnonzero(~failed)
        if not len(rest):
            return rest, frame, exits
        return rest, frame.child(rest), exits

    def _check_loop_ends(self, op: Operation) -> None:
        """A `loop` whose body has no `break` (nor `assert`) would never end: say so."""
        if op in self._checked_loops:
            return

        def leaves(block: Block) -> bool:
            for inner in block.ops:
                if inner.name in ("cuda_tile.break", "cuda_tile.return", "cuda_tile.assert"):
                    return True
                if inner.name == "cuda_tile.if":
                    if any(leaves(b) for r in inner.regions for b in r.blocks):
                        return True
            return False

        if not any(leaves(b) for b in op.regions[0].blocks):
            raise InterpError("this loop has no `break`: it would never end", op=op.mnemonic, where=self.where(op))
        self._checked_loops.add(op)

    def exec_loop(self, op: Operation, frame: Frame) -> Any:
        """`for` and `loop`: blocks leave at different iterations where their bounds or
        `break`s differ; the body runs on the blocks still iterating (a frame that is
        made anew only when that set changes)."""
        is_for = op.name == "cuda_tile.for"
        region = op.regions[0]
        body = region.blocks[0]
        counter: _ForCounter | None = None
        if is_for:
            counter = _ForCounter(self, op, frame)
            inits = op.operands[3:]
            targets = body.arguments[1:]
        else:
            self._check_loop_ends(op)
            inits = op.operands
            targets = body.arguments
        get = frame.get
        carried = [get(v) for v in inits]
        deps = self._deps_of(inits)
        active: np.ndarray | None = None  # positions (in `frame`) of the blocks still iterating
        current = frame
        finished: list[_Part] = []  # (positions in `frame`, final values, deps)
        exits: list[Exit] = []
        iterations = 0  # of this run of the loop, for the report of a runaway
        try:
            while True:
                if counter is not None:
                    go = counter.going()
                    if go is not None:  # some blocks are done
                        if not go.any():
                            finished.append((active, carried, deps))
                            break
                        stop = np.flatnonzero(~go)
                        keep = np.flatnonzero(go)
                        finished.append((_compose(active, stop), [restrict(c, stop) for c in carried], deps))
                        carried = [restrict(c, keep) for c in carried]
                        counter.restrict(keep)
                        active = _compose(active, keep)
                        current = frame.child(active)  # type: ignore[arg-type]
                    args = [counter.value(), *carried]
                else:
                    args = carried
                self._set_deps(targets, deps)
                # The budgets (see RunOptions): one comparison per iteration of a group.
                self.steps += 1
                iterations += 1
                if self.steps > self._check_at:
                    self._check_budget(op, current, iterations)
                conts: list[Exit] = []
                for e in self.run_region(region, current, args):
                    if e.kind == "continue":
                        conts.append(e)
                    elif e.kind == "break":
                        finished.append((_compose(active, e.positions), e.values, e.deps))
                    else:  # return / abort from inside the body
                        e.positions = _compose(active, e.positions)
                        exits.append(e)
                if not conts:
                    break
                if len(conts) == 1 and conts[0].positions is None:
                    carried, deps = conts[0].values, conts[0].deps
                else:
                    size = current.group.size
                    keep = _union([e.positions for e in conts], size)
                    if len(conts) == 1:
                        carried, deps = conts[0].values, conts[0].deps
                    else:
                        parts = [(np.searchsorted(keep, e.positions), e.values) for e in conts]
                        carried = [
                            _merge_value([(p, values[i]) for p, values in parts], len(keep)) for i in range(len(inits))
                        ]
                        deps = _union_deps([e.deps for e in conts])
                    if len(keep) != size:
                        active = _compose(active, keep)
                        current = frame.child(active)  # type: ignore[arg-type]
                        if counter is not None:
                            counter.restrict(keep)
                if counter is not None:
                    counter.advance()
        except (RunawayError, InterruptedLaunch) as e:
            # An enclosing loop that has run more iterations is the likelier runaway (an
            # outer loop that never ends stops in whichever inner loop it is running).
            e.blame(self, op, current, iterations)
            raise
        except KeyboardInterrupt:
            entry = op
            while entry is not None and entry.name != "cuda_tile.entry":
                entry = entry.parent_op
            name = entry.properties.get("sym_name") if entry is not None else None
            stopped = InterruptedLaunch(getattr(name, "value", None))
            stopped.blame(self, op, current, iterations)
            raise stopped from None
        return self._continue_with(op, frame, finished, exits)


def _all_equal(a: np.ndarray) -> bool:
    return len(a) == 1 or bool((a == a[0]).all())


def _union_deps(columns: list[list[frozenset[int]] | None]) -> list[frozenset[int]] | None:
    present = [c for c in columns if c is not None]
    if not present:
        return None
    return [frozenset().union(*column) for column in zip(*present, strict=True)]


class _ForCounter:
    """The induction variable of a `for`, per block: compared with the upper bound
    (signed, or unsigned with the `unsigned` flag) and advanced by the step. The
    iteration space is the mathematical {lb + i*step < ub}, so a block whose next value
    would not fit the type (the adder wraps) has finished."""

    __slots__ = ("iv", "upper", "step", "done", "dtype", "unsigned", "left")

    def __init__(self, machine: Machine, op: Operation, frame: Frame) -> None:
        lower, upper, step = (frame.get(v) for v in op.operands[:3])
        self.dtype = lower.dtype
        self.unsigned = op.attr("unsignedCmp") is not None
        element = dtypes.element_of(op.operands[0].type)
        width = element.width if isinstance(element, IntegerType) else lower.dtype.itemsize * 8
        self.iv = self._domain(lower.reshape(-1), width)
        self.upper = self._domain(upper.reshape(-1), width)
        self.step = self._domain(step.reshape(-1), width)
        self.done: np.ndarray | None = None  # blocks whose induction variable overflowed
        flat = step.reshape(-1)
        signed_step = -flat.astype(np.int64) if flat.dtype == np.bool_ else flat.astype(np.int64)
        bad = (signed_step <= 0) & (self.iv < self.upper)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            value = int(signed_step[first if len(signed_step) > 1 else 0])
            raise machine.op_error(op, frame, f"the step must be positive, got {value}", blocks=bad)
        # Where every block has the same bounds (one block, or a grid walking one range), the
        # trip count is known up front: counting it down spares each iteration the compare
        # and the wrap check (a third of a small-tile loop's time). None: counted per block.
        self.left: int | None = None
        if self.dtype != np.bool_ and all(_all_equal(a) for a in (self.iv, self.upper, self.step)):
            lo, hi, st = int(self.iv[0]), int(self.upper[0]), int(self.step[0])
            # ceil((hi - lo) / st) values lo + i*st < hi (an empty range may have any step)
            self.left = -((lo - hi) // st) if lo < hi else 0

    def _domain(self, a: np.ndarray, width: int) -> np.ndarray:
        """Values in a dtype where `<` is the loop's comparison."""
        if a.dtype == np.bool_:  # i1: 1 is -1 when signed
            return a.astype(np.uint8) if self.unsigned else -a.astype(np.int8)
        return dtypes.as_unsigned(a) if self.unsigned else a

    def value(self) -> np.ndarray:
        """The induction variable as the body sees it (the type's storage dtype)."""
        iv = self.iv
        if self.dtype == np.bool_:
            return iv != 0
        return iv if iv.dtype == self.dtype else iv.view(self.dtype)

    def going(self) -> np.ndarray | None:
        """None when every block iterates again, else a mask of those that do."""
        if self.left is not None:
            return None if self.left > 0 else np.zeros(len(self.iv), dtype=bool)
        go = self.iv < self.upper
        if self.done is not None:
            go = go & ~self.done
        if go.all():
            return None
        return go

    def restrict(self, keep: np.ndarray) -> None:
        self.iv = restrict(self.iv, keep)
        self.upper = restrict(self.upper, keep)
        self.step = restrict(self.step, keep)
        if self.done is not None:
            self.done = restrict(self.done, keep)

    def advance(self) -> None:
        if self.left is not None:
            self.left -= 1
            if self.left > 0:  # (the value after the last one may not fit the type)
                self.iv = self.iv + self.step
            return
        iv, step = self.iv, self.step
        if iv.dtype.kind == "u":
            nxt = iv + step
        else:
            unsigned = dtypes.as_unsigned(iv) if iv.dtype != np.bool_ else iv
            nxt = (unsigned + dtypes.as_unsigned(step)).view(iv.dtype)
        overflow = nxt < iv  # the step is positive: a smaller value means it wrapped
        if overflow.any():
            self.done = overflow if self.done is None else (self.done | overflow)
        self.iv = nxt


def _captured(region: Region) -> list[Value]:
    """Values a region's ops use that are defined outside the region, in order of use."""
    inside: set[Value] = set()
    for b in region.blocks:
        inside.update(b.arguments)
    seen: list[Value] = []
    for b in region.blocks:
        for top in b.ops:
            for op in top.walk():
                inside.update(op.results)
                for r in op.regions:
                    for blk in r.blocks:
                        inside.update(blk.arguments)
    for b in region.blocks:
        for top in b.ops:
            for op in top.walk():
                for v in op.operands:
                    if v not in inside and v not in seen:
                        seen.append(v)
    return seen


def _group_at(start: int, n: int, grid: tuple[int, int, int]) -> Group:
    """The `n` tile blocks from linear id `start` on (x fastest, then y, then z)."""
    gx, gy, _ = grid
    x0, rest = start % gx, start // gx
    y0, z0 = rest % gy, rest // gy
    local = np.arange(n, dtype=np.int64)
    t = local + x0
    x = t % gx
    t = t // gx + y0
    y = t % gy
    z = t // gy + z0
    return Group(x.astype(np.int32), y.astype(np.int32), z.astype(np.int32), local + start, grid)


def _largest_tile(kernel: Operation) -> int:
    largest = 1
    for op in kernel.walk():
        for r in op.results:
            if isinstance(r.type, TileType):
                largest = max(largest, r.type.num_elements)
    return largest


# What a `loop` can spin on, waiting for another tile block: an atomic's old value, or a
# load ordered acquire or relaxed (a weak one may never see the other block's store).
_CROSS_BLOCK_READS = frozenset({"cuda_tile.atomic_cas_tko", "cuda_tile.atomic_rmw_tko"})
_ORDERED_LOADS = frozenset({"cuda_tile.load_ptr_tko", "cuda_tile.load_view_tko"})


def _may_wait_for_other_blocks(kernel: Operation) -> bool:
    """Whether a `loop` of the kernel (which runs until a `break`) reads memory another tile
    block may be writing: a spin lock, or a block waiting for its predecessor's flag (a
    decoupled look-back scan). The blocks of a group run in lockstep, a loop until every
    block of the group has left it: a block that took the lock could not go on to release
    it while the others spin, and the launch would run into its step budget. Such kernels
    run one block at a time, in linear order (a valid order of the grid's blocks; slower),
    so a block that waits for an earlier one finds it done. (One that waits for a later
    block still spins to the budget: the interpreter does not interleave blocks.)"""
    for op in kernel.walk():
        if op.name != "cuda_tile.loop":
            continue
        for inner in op.walk():
            if inner.name in _CROSS_BLOCK_READS:
                return True
            if inner.name in _ORDERED_LOADS and inner.keyword("memory_ordering_semantics", "weak") != "weak":
                return True
    return False


_CONTROL: dict[str, Callable[..., Any]] = {
    "cuda_tile.if": Machine.exec_if,
    "cuda_tile.for": Machine.exec_loop,
    "cuda_tile.loop": Machine.exec_loop,
    "cuda_tile.assert": Machine.exec_assert,
}


__all__ = [
    "DEFAULT_MAX_STEPS",
    "GROUP_ELEMENT_BUDGET",
    "MAX_GRID_EXTENT",
    "TOKEN",
    "AssertFailure",
    "Exit",
    "Frame",
    "Group",
    "InterpError",
    "Machine",
    "RunOptions",
    "is_uniform",
    "location_text",
    "op_where",
    "restrict",
]
