"""The CPU interpreter: the reference semantics of Tile IR, on NumPy and ml_dtypes.

    from compiler.interp import Machine
    Machine(module).run(entry_op, grid=(gx, gy, gz), args=[...])

Most users want `compiler.runtime.launch`, which places NumPy arrays in memory and
types scalar arguments. `machine` holds the batched execution model and control flow,
`memory` the simulated address space, `dtypes` the element-type ↔ NumPy mapping, and
the `ops_*` modules the semantics of each op family, registered by op name in
`registry`.
"""

from __future__ import annotations

from . import (  # noqa: F401  (registers semantics)  # noqa: F401  (registers semantics)  # noqa: F401  (registers semantics)
    ops_bits,
    ops_conversion,
    ops_float,
    ops_integer,
    ops_memory,  # noqa: F401  (registers semantics)
    ops_misc,  # noqa: F401  (registers semantics)
    ops_mma,
    ops_reduce,
    ops_shape,
    ops_view,  # noqa: F401  (registers semantics)
)
from .machine import (
    DEFAULT_MAX_STEPS,
    TOKEN,
    Frame,
    Group,
    InterpError,
    InterruptedLaunch,
    Machine,
    RunawayError,
    RunOptions,
)
from .memory import Memory, MemoryFault
from .registry import SEMANTICS, Ctx, semantics

__all__ = [
    "DEFAULT_MAX_STEPS",
    "SEMANTICS",
    "TOKEN",
    "Ctx",
    "Frame",
    "Group",
    "InterpError",
    "InterruptedLaunch",
    "Machine",
    "Memory",
    "MemoryFault",
    "RunOptions",
    "RunawayError",
    "semantics",
]
