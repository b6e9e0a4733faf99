"""Kernel parameters as a GPU kernel receives them, for the cubins of both compilers.

A launch passes each kernel parameter as a C value of an exact size; the two compilers
lay out the same Tile IR entry differently:

- `tileiras` (NVIDIA) keeps the entry's parameters one for one: a pointer is 8 bytes, an
  integer or float scalar its storage width (i1 one byte), in entry order.
- Triton (our lowering) compiles the generated function's parameters (entry parameters,
  then hidden device buffers for globals and constant tables) and appends two pointers of
  its own, the global and the profile scratch (`compiler.lower.codegen.Param`). Scalars
  travel as integers of their width (floats as their bits), i1 as one byte (`int8_t`).

`slots_*` give the sizes in order; `check_layout` compares them with what the cubin itself
declares (`compiler.lower.cubin`: EIATTR_KPARAM_INFO), so a disagreement is a clear error
before the launch instead of garbage in the kernel; `c_values` makes the ctypes values the
launch passes.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..ir.core import Operation
from ..ir.types import FloatType, IntegerType, PointerType, TileType

_CTYPES = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64}
_TRITON_SIZES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "u16": 2, "u32": 4, "u64": 8}


@dataclass(frozen=True, slots=True)
class Slot:
    """One kernel parameter as passed: its size in bytes and what it is (for messages)."""

    size: int
    what: str


def _scalar_size(t: Any) -> int:
    e = t.element if isinstance(t, TileType) else t
    if isinstance(e, PointerType):
        return 8
    if isinstance(e, IntegerType):
        return max(1, (e.width + 7) // 8)
    if isinstance(e, FloatType):
        return max(1, (e.format.storage_width + 7) // 8)
    raise TypeError(f"no C type for a parameter of type {t}")


def slots_tileiras(entry: Operation) -> list[Slot]:
    """The parameters of `entry`'s kernel compiled by tileiras: the entry's, in order."""
    params = entry.regions[0].blocks[0].arguments
    return [Slot(_scalar_size(p.type), f"parameter {i} ({p.type})") for i, p in enumerate(params)]


def slots_triton(params: Sequence[Any]) -> list[Slot]:
    """The parameters of a kernel compiled by Triton, from its `KernelSource.params`
    (scratch pointers included, which Triton appends)."""
    out = []
    for p in params:
        sig = p.signature
        size = 8 if sig.startswith("*") else _TRITON_SIZES.get(sig)
        if size is None:
            raise TypeError(f"no C type for Triton signature {sig!r} of parameter {p.name}")
        out.append(Slot(size, f"{p.kind} {p.name} ({sig})"))
    return out


def offsets(slots: Sequence[Slot]) -> list[int]:
    """Offsets in the parameter buffer under C rules (each value aligned to its size)."""
    out, at = [], 0
    for s in slots:
        at = (at + s.size - 1) // s.size * s.size
        out.append(at)
        at += s.size
    return out


def check_layout(slots: Sequence[Slot], declared: Sequence[Any], kernel: str, compiler: str) -> None:
    """Raise ValueError when the cubin's declared parameters (KernelParam: ordinal, offset,
    size) differ from ours in number, size or offset."""
    if len(declared) != len(slots):
        raise ValueError(
            f"the {compiler} cubin of kernel {kernel} declares {len(declared)} parameters, the launcher "
            f"packs {len(slots)}"
        )
    for slot, at, d in zip(slots, offsets(slots), sorted(declared, key=lambda d: d.ordinal), strict=True):
        if (d.size, d.offset) != (slot.size, at):
            raise ValueError(
                f"the {compiler} cubin of kernel {kernel}: parameter {d.ordinal} ({slot.what}) is "
                f"{d.size} bytes at offset {d.offset}, the launcher packs {slot.size} bytes at {at}"
            )


def c_values(slots: Sequence[Slot], values: Sequence[int]) -> list[Any]:
    """ctypes values of exactly each slot's size holding `values` (ints: addresses or bits)."""
    return [_CTYPES[s.size](int(v) & ((1 << (8 * s.size)) - 1)) for s, v in zip(slots, values, strict=True)]
