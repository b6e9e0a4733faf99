"""The table of op semantics: one function per op, registered by op name.

    @semantics("addi")
    def _addi(ctx: Ctx) -> np.ndarray:
        lhs, rhs = ctx.args
        return ...

A semantics function receives a `Ctx` and returns the op's results: one value, or a
tuple/list with one value per result (None for an op without results). Tile values
are ndarrays whose first axis is the tile-block axis of the group being run (length
`ctx.group.size`, or 1 when the value is the same for every block), followed by the
tile's own shape; see `machine.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..ir.attributes import Attribute
from ..ir.types import Type

if TYPE_CHECKING:
    from ..ir.core import Operation
    from .machine import Frame, Group, Machine

Semantics = Callable[["Ctx"], Any]
T = TypeVar("T")
SEMANTICS: dict[str, Semantics] = {}


def semantics(*mnemonics: str) -> Callable[[Semantics], Semantics]:
    """Register the decorated function as the semantics of the named ops."""

    def register(fn: Semantics) -> Semantics:
        for m in mnemonics:
            name = m if "." in m else "cuda_tile." + m
            if name in SEMANTICS:
                raise ValueError(f"semantics of {name} registered twice")
            SEMANTICS[name] = fn
        return fn

    return register


class Ctx:
    """What a semantics function may see of the op being executed and the machine."""

    __slots__ = ("machine", "frame", "op", "args", "new_deps")

    def __init__(self, machine: Machine, frame: Frame, op: Operation, args: list[Any]) -> None:
        self.machine = machine
        self.frame = frame
        self.op = op
        self.args = args
        # Memory-op instances that the results of this op depend on, besides those its
        # operands carry (a memory op adds its own instance; see `Machine.value_deps`).
        self.new_deps: frozenset[int] = frozenset()

    @property
    def group(self) -> Group:
        return self.frame.group

    def arg(self, name: str) -> Any:
        """The runtime value of a single or optional operand of the op definition (None when absent)."""
        group = self.args_of(name)
        return group[0] if group else None

    def args_of(self, name: str) -> list[Any]:
        """The runtime values of a (variadic) operand group."""
        op = self.op
        start, length = op.opdef.operand_range(name, op.operand_segments)  # type: ignore[union-attr]
        return self.args[start : start + length]

    def attr(self, name: str) -> Attribute | None:
        return self.op.attr(name)

    def int_attr(self, name: str, default: int | None = None) -> int | None:
        return self.op.int_attr(name, default)

    def keyword(self, name: str, default: str | None = None) -> str | None:
        """The keyword of an enum attribute (`rounding_mode` → "nearest_even"), or `default`."""
        return self.op.keyword(name, default)

    def flag(self, name: str) -> bool:
        """Whether a unit/bool attribute is set."""
        return self.op.flag(name)

    def static(self, fn: Callable[[Ctx], T]) -> T:
        """`fn(self)`, computed once per op and run: for what a semantics derives from the op
        alone (its types and attributes), which a loop would otherwise derive each iteration."""
        key = (self.op, fn)
        statics = self.machine.statics
        try:
            return statics[key]
        except KeyError:
            value = statics[key] = fn(self)
            return value

    def operand_type(self, i: int = 0) -> Type:
        return self.op.operands[i].type

    def result_type(self, i: int = 0) -> Type:
        return self.op.results[i].type

    def error(self, message: str, blocks: np.ndarray | None = None, address: int | None = None) -> Exception:
        """An `InterpError` for this op; `blocks` is a boolean mask or index array of the
        group positions at fault (the first one is named). Raise what it returns."""
        return self.machine.op_error(self.op, self.frame, message, blocks, address)

    def memory_instance(self) -> int:
        """A fresh id for this execution of a memory op; the op's results depend on it."""
        iid = self.machine.next_instance()
        self.new_deps = self.new_deps | {iid}
        return iid

    def input_deps(self) -> frozenset[int]:
        """Memory-op instances this op is ordered after (through tokens or data)."""
        return self.machine.deps_of_operands(self.op, self.frame)
