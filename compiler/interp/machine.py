"""The abstract machine: runs a kernel over a grid of tile blocks, many blocks at once.

Batching. The grid is cut into *groups* of tile blocks that execute together. A tile
value of type `tile<SxE>` is held for a group as one ndarray of shape `(G, *S)`, G
being the group size, or `(1, *S)` when every block of the group has the same value
(constants, kernel arguments, loop bounds): NumPy's broadcasting then works across the
blocks, so `addf` on a group is one NumPy call however many blocks it holds.

Divergence. Where control flow depends on a value that differs between the blocks of
a group (an `if` condition, a loop bound, a `break`), the group is split: each branch
runs on a child `Frame` that sees only its blocks (values of the parent are restricted
lazily, on first use), and the branches' results are merged back. Blocks that leave a
region early (`break`, `continue`, `return` inside an `if`) are carried as `Exit`s with
the positions they cover, so the rest of the region runs on the blocks that remain.

Undefined behaviour is an `InterpError` naming the op, its source line, the first
tile block at fault and, for memory, the address.
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.types import TileType, TokenType
from . import dtypes
from .memory import Memory
from .registry import SEMANTICS, Ctx

# A token carries no data: what orders memory operations is recorded in
# `Machine.value_deps`. One shared object stands for every token value.
TOKEN = "token"

# Upper bound on the elements of the largest tile value of a kernel times the number of
# blocks run together, so that batching never needs much more memory than the arrays
# the kernel works on.
GROUP_ELEMENT_BUDGET = 1 << 22


class InterpError(Exception):
    """Undefined behaviour or a failure while running a kernel.

    `str()` gives the one-line report: `file:line:col: error: <op>: message
    (tile block (x, y, z)[, address 0x...])`."""

    def __init__(
        self,
        message: str,
        *,
        op: str | None = None,
        where: str | None = None,
        block: tuple[int, int, int] | None = None,
        address: int | None = None,
    ) -> None:
        self.message = message
        self.op = op
        self.where = where
        self.block = block
        self.address = address
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
        return f"{self.where}: error: {text}" if self.where else f"error: {text}"


@dataclass(slots=True)
class Group:
    """Tile blocks executing together: their grid coordinates, one entry per block."""

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray

    @property
    def size(self) -> int:
        return len(self.x)

    def subset(self, index: np.ndarray) -> Group:
        return Group(self.x[index], self.y[index], self.z[index])

    def coords(self, position: int) -> tuple[int, int, int]:
        return int(self.x[position]), int(self.y[position]), int(self.z[position])


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
    """A region left through `kind` ("yield", "continue", "break" or "return") by the
    blocks at `positions` of the frame it is reported to (None: all of them)."""

    kind: str
    positions: np.ndarray | None
    values: list[Any] = field(default_factory=list)


def _compose(outer: np.ndarray | None, inner: np.ndarray | None) -> np.ndarray | None:
    if inner is None:
        return outer
    return inner if outer is None else outer[inner]


_TERMINATORS = {
    "cuda_tile.yield": "yield",
    "cuda_tile.continue": "continue",
    "cuda_tile.break": "break",
    "cuda_tile.return": "return",
}


@dataclass(slots=True)
class RunOptions:
    stdout: IO[str] | None = None  # where print_tko writes (default sys.stdout)
    check_races: bool = True
    group_budget: int = GROUP_ELEMENT_BUDGET


class Machine:
    """Runs kernels of one module against one simulated global memory."""

    def __init__(self, module: Module, memory: Memory | None = None, options: RunOptions | None = None) -> None:
        self.module = module
        self.memory = memory if memory is not None else Memory()
        self.options = options or RunOptions()
        self.grid: tuple[int, int, int] = (1, 1, 1)
        self.value_deps: dict[Value, frozenset[int]] = {}
        self._instances = itertools.count(1)
        self.globals: dict[str, int] = {}  # symbol → address
        self._load_globals()

    # -- errors --------------------------------------------------------------------------

    def where(self, op: Operation) -> str | None:
        source = self.module.source
        if source is not None and op.span is not None:
            line, col = source.line_col(op.span.start)
            return f"{source.name}:{line + 1}:{col + 1}"
        loc = op.location
        filename = getattr(loc, "filename", None)
        if filename is not None:
            return f"{filename}:{getattr(loc, 'line', 0)}:{getattr(loc, 'column', 0)}"
        return None

    def op_error(
        self, op: Operation, frame: Frame, message: str, blocks: np.ndarray | None = None, address: int | None = None
    ) -> InterpError:
        position = 0
        if blocks is not None:
            blocks = np.asarray(blocks)
            if blocks.dtype == np.bool_:
                hits = np.flatnonzero(blocks.reshape(blocks.shape[0], -1).any(axis=1) if blocks.ndim > 1 else blocks)
                position = int(hits[0]) if len(hits) else 0
            elif blocks.size:
                position = int(blocks.reshape(-1)[0])
        block = frame.group.coords(min(position, frame.group.size - 1)) if frame.group.size else None
        return InterpError(message, op=op.mnemonic, where=self.where(op), block=block, address=address)

    # -- dependencies (for race detection) -----------------------------------------------

    def next_instance(self) -> int:
        return next(self._instances)

    def deps_of_operands(self, op: Operation, frame: Frame) -> frozenset[int]:
        deps: frozenset[int] = frozenset()
        vd = self.value_deps
        for v in op.operands:
            d = vd.get(v)
            if d:
                deps = deps | d
        return deps

    def _bind_deps(self, values: list[Value], deps: frozenset[int]) -> None:
        vd = self.value_deps
        for v in values:
            if deps:
                vd[v] = deps
            else:
                vd.pop(v, None)

    # -- module setup ----------------------------------------------------------------------

    def _load_globals(self) -> None:
        for op in self.module.walk():
            if op.name == "cuda_tile.global":
                value = op.properties.get("value")
                sym = op.properties["sym_name"].value  # type: ignore[attr-defined]
                data = dtypes.array_from_bits(value.values, value.element, value.type.shape)  # type: ignore[union-attr]
                alignment = self._int(op.properties.get("alignment"), data.dtype.itemsize)
                if data.dtype == np.bool_:
                    data = data.astype(np.uint8)
                self.globals[sym] = self.memory.place(
                    np.ascontiguousarray(data).reshape(-1), alignment=alignment, name=f"global @{sym}",
                    read_only=op.properties.get("constant") is not None,
                )

    @staticmethod
    def _int(attr: Any, default: int) -> int:
        return int(getattr(attr, "value", default)) if attr is not None else default

    # -- launching -------------------------------------------------------------------------

    def run(self, kernel: Operation, grid: tuple[int, int, int], args: list[Any]) -> None:
        """Run `kernel` (an `entry` op) over `grid`, its parameters bound to `args`
        (scalars as 0-d arrays of the parameter's storage dtype)."""
        self.grid = grid
        body = kernel.regions[0].blocks[0]
        total = grid[0] * grid[1] * grid[2]
        per_block = max(_largest_tile(kernel), 1)
        group_size = max(1, min(total, self.options.group_budget // per_block))
        linear = np.arange(total, dtype=np.int64)
        for start in range(0, total, group_size):
            ids = linear[start : start + group_size]
            # Linear order is x fastest, then y, then z.
            x = (ids % grid[0]).astype(np.int32)
            y = ((ids // grid[0]) % grid[1]).astype(np.int32)
            z = (ids // (grid[0] * grid[1])).astype(np.int32)
            frame = Frame(Group(x, y, z))
            for arg, value in zip(body.arguments, args, strict=True):
                frame.env[arg] = value
            self.value_deps.clear()
            self.memory.begin_group()
            self.exec_block(body, frame)

    # -- execution -------------------------------------------------------------------------

    def exec_block(self, block: Block, frame: Frame, start: int = 0) -> list[Exit]:
        """Run `block` from op `start` on `frame`; returns how its blocks left it."""
        ops = block.ops
        for i in range(start, len(ops)):
            op = ops[i]
            name = op.name
            kind = _TERMINATORS.get(name)
            if kind is not None:
                return [Exit(kind, None, [frame.get(v) for v in op.operands])]
            if name == "cuda_tile.if":
                remaining, exits = self.exec_if(op, frame)
            elif name == "cuda_tile.for" or name == "cuda_tile.loop":
                remaining, exits = self.exec_loop(op, frame)
            else:
                self.exec_op(op, frame)
                continue
            if remaining is None:
                continue
            # Some blocks left through a break/continue/return; the rest go on alone.
            if len(remaining):
                child = frame.child(remaining)
                for e in self.exec_block(block, child, i + 1):
                    exits.append(Exit(e.kind, _compose(remaining, e.positions), e.values))
            return exits
        return []

    def exec_op(self, op: Operation, frame: Frame) -> None:
        fn = SEMANTICS.get(op.name)
        if fn is None:
            raise InterpError("the interpreter has no semantics for this op", op=op.name, where=self.where(op))
        get = frame.get
        ctx = Ctx(self, frame, op, [get(v) for v in op.operands])
        out = fn(ctx)
        results = op.results
        if not results:
            return
        if len(results) == 1 and not isinstance(out, (tuple, list)):
            out = (out,)
        env = frame.env
        for r, value in zip(results, out, strict=True):
            env[r] = value
        deps = self.deps_of_operands(op, frame) | ctx.new_deps
        if deps or self.value_deps:
            self._bind_deps(results, deps)  # type: ignore[arg-type]

    def run_region(self, region: Region, frame: Frame, args: list[Any]) -> list[Exit]:
        block = region.blocks[0]
        for a, v in zip(block.arguments, args, strict=True):
            frame.env[a] = v
        return self.exec_block(block, frame)

    def run_combiner(self, region: Region, args: list[np.ndarray]) -> list[np.ndarray]:
        """Run the body of a `reduce`/`scan` elementwise on whole arrays at once: the
        body's ops are pure and elementwise on rank-0 tiles, so each argument can be an
        array of any shape, all of one shape (used as the group axis)."""
        shape = np.broadcast_shapes(*(a.shape for a in args))
        n = int(np.prod(shape))
        flat = [np.broadcast_to(a, shape).reshape(n) for a in args]
        ones = np.zeros(n, dtype=np.int32)
        frame = Frame(Group(ones, ones, ones))
        exits = self.run_region(region, frame, flat)
        values = exits[0].values
        return [np.broadcast_to(v, (n,)).reshape(shape) for v in values]

    # -- control flow ------------------------------------------------------------------------

    def _yield_results(
        self, op: Operation, frame: Frame, yields: list[tuple[np.ndarray | None, list[Any]]]
    ) -> None:
        """Bind `op`'s results from the values its region(s) yielded for the given positions."""
        results = op.results
        if not results:
            return
        if len(yields) == 1 and yields[0][0] is None:
            for r, v in zip(results, yields[0][1], strict=True):
                frame.env[r] = v
            return
        size = frame.group.size
        for i, r in enumerate(results):
            if isinstance(r.type, TokenType) or not isinstance(yields[0][1][i], np.ndarray):
                frame.env[r] = yields[0][1][i]
                continue
            first = yields[0][1][i]
            out = np.empty((size,) + first.shape[1:], dtype=first.dtype)
            for positions, values in yields:
                out[positions if positions is not None else slice(None)] = values[i]
            frame.env[r] = out

    def _merge_deps(self, targets: list[Value], sources: list[list[Value]]) -> None:
        vd = self.value_deps
        if not vd:
            return
        for i, t in enumerate(targets):
            deps: frozenset[int] = frozenset()
            for src in sources:
                d = vd.get(src[i]) if i < len(src) else None
                if d:
                    deps = deps | d
            self._bind_deps([t], deps)

    def exec_if(self, op: Operation, frame: Frame) -> tuple[np.ndarray | None, list[Exit]]:
        """Run an `if`. Returns (positions still running after it, or None for all;
        the exits of blocks that left through break/continue/return)."""
        cond = frame.get(op.operands[0])
        cond = np.asarray(cond).reshape(cond.shape[0])
        regions = op.regions
        has_else = len(regions) > 1 and regions[1].blocks
        if cond.shape[0] == 1 or cond.all() or not cond.any():
            taken = bool(cond[0])
            if not taken and not has_else:
                return None, []
            region = regions[0] if taken else regions[1]
            exits = self.exec_block(region.blocks[0], frame)
            sides = [(None, exits)]
        else:
            sides = []
            then_pos = np.flatnonzero(cond)
            else_pos = np.flatnonzero(~cond)
            sides.append((then_pos, self.exec_block(regions[0].blocks[0], frame.child(then_pos))))
            if has_else:
                sides.append((else_pos, self.exec_block(regions[1].blocks[0], frame.child(else_pos))))
            else:
                sides.append((else_pos, [Exit("yield", None, [])]))
        yields: list[tuple[np.ndarray | None, list[Any]]] = []
        others: list[Exit] = []
        for positions, exits in sides:
            for e in exits:
                where = _compose(positions, e.positions)
                if e.kind == "yield":
                    yields.append((where, e.values))
                else:
                    others.append(Exit(e.kind, where, e.values))
        yield_ops = [r.blocks[0].ops[-1] for r in regions if r.blocks and r.blocks[0].ops]
        self._merge_deps(list(op.results), [list(y.operands) for y in yield_ops if y.name == "cuda_tile.yield"])
        if not others:
            self._yield_results(op, frame, yields)
            return None, []
        remaining = np.sort(np.concatenate([p if p is not None else np.arange(frame.group.size) for p, _ in yields]
                                           or [np.zeros(0, dtype=np.int64)]))
        if len(remaining):
            child_yields = []
            for p, values in yields:
                local = np.searchsorted(remaining, p) if p is not None else np.arange(len(remaining))
                child_yields.append((local, values))
            # Bind the results in the parent frame at the remaining positions only; the
            # caller continues in a child frame over `remaining`, which restricts them.
            full: list[tuple[np.ndarray | None, list[Any]]] = [
                (remaining[local], values) for local, values in child_yields
            ]
            self._yield_results(op, frame, full)
        return remaining, others

    def exec_loop(self, op: Operation, frame: Frame) -> tuple[np.ndarray | None, list[Exit]]:
        """Run a `for` or `loop`; blocks leave it at different iterations where their
        bounds or `break`s differ. Returns like `exec_if`."""
        is_for = op.name == "cuda_tile.for"
        body = op.regions[0].blocks[0]
        size = frame.group.size
        if is_for:
            lower, upper, step = (frame.get(v) for v in op.operands[:3])
            init = [frame.get(v) for v in op.operands[3:]]
            unsigned = op.attr("unsignedCmp") is not None
            iv = lower
        else:
            init = [frame.get(v) for v in op.operands]
        carried = init
        # Positions (in `frame`) of the blocks still iterating, and the frame they run in.
        active: np.ndarray | None = None
        current = frame
        finished: list[tuple[np.ndarray | None, list[Any]]] = []  # (positions, final values)
        others: list[Exit] = []
        carried_deps = [list(op.operands[3:] if is_for else op.operands)]
        self._merge_deps(body.arguments[1:] if is_for else body.arguments, carried_deps)
        while True:
            if is_for:
                if unsigned:
                    go = dtypes.as_unsigned(iv) < dtypes.as_unsigned(upper)
                else:
                    go = iv < upper
                go = go.reshape(go.shape[0])
                if not go.all():
                    stop = np.flatnonzero(~go) if go.shape[0] > 1 else None
                    if go.shape[0] == 1 or not go.any():
                        finished.append((active, carried))
                        break
                    finished.append((_compose(active, stop), [restrict(c, stop) for c in carried]))
                    keep = np.flatnonzero(go)
                    active = _compose(active, keep)
                    current = current.child(keep)
                    carried = [restrict(c, keep) for c in carried]
                    iv = restrict(iv, keep)
                    upper = restrict(upper, keep)
                    step = restrict(step, keep)
                exits = self.run_region(op.regions[0], current, [iv, *carried])
            else:
                exits = self.run_region(op.regions[0], current, list(carried))
            next_values: list[tuple[np.ndarray | None, list[Any]]] = []
            for e in exits:
                if e.kind == "continue":
                    next_values.append((e.positions, e.values))
                elif e.kind == "break":
                    finished.append((_compose(active, e.positions), e.values))
                else:  # return from inside the loop body
                    others.append(Exit(e.kind, _compose(active, e.positions), e.values))
            if not next_values:
                break
            if len(next_values) == 1 and next_values[0][0] is None:
                carried = next_values[0][1]
            else:
                keep = np.sort(np.concatenate([p if p is not None else np.arange(current.group.size)
                                               for p, _ in next_values]))
                carried = _gather(next_values, keep, len(carried))
                if len(keep) != current.group.size:
                    active = _compose(active, keep)
                    current = current.child(keep)
                    if is_for:
                        iv, upper, step = restrict(iv, keep), restrict(upper, keep), restrict(step, keep)
            if is_for:
                iv = (iv + step).astype(iv.dtype)  # wraps like the hardware adder
            terminator = body.ops[-1] if body.ops else None
            if terminator is not None and self.value_deps:
                self._merge_deps(body.arguments[1:] if is_for else body.arguments, [list(terminator.operands)])
        self._bind_loop_results(op, frame, finished, size)
        if not others:
            return None, []
        done = np.sort(np.concatenate([p for p, _ in finished if p is not None] or [np.zeros(0, dtype=np.int64)]))
        if any(p is None for p, _ in finished):
            done = np.arange(size)
        return done, others

    def _bind_loop_results(
        self, op: Operation, frame: Frame, finished: list[tuple[np.ndarray | None, list[Any]]], size: int
    ) -> None:
        if not op.results or not finished:
            return
        self._yield_results(op, frame, finished)


def _gather(parts: list[tuple[np.ndarray | None, list[Any]]], keep: np.ndarray, count: int) -> list[Any]:
    """Values for the positions `keep` (sorted) from parts covering them."""
    out: list[Any] = []
    for i in range(count):
        first = parts[0][1][i]
        if not isinstance(first, np.ndarray):
            out.append(first)
            continue
        arr = np.empty((len(keep),) + first.shape[1:], dtype=first.dtype)
        for positions, values in parts:
            local = np.searchsorted(keep, positions) if positions is not None else slice(None)
            arr[local] = values[i]
        out.append(arr)
    return out


def _largest_tile(kernel: Operation) -> int:
    largest = 1
    for op in kernel.walk():
        for r in op.results:
            if isinstance(r.type, TileType):
                largest = max(largest, r.type.num_elements)
    return largest


__all__ = ["TOKEN", "Exit", "Frame", "Group", "InterpError", "Machine", "RunOptions", "restrict"]
