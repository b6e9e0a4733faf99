"""What a cubin holds: SASS instruction counts by class and the resources it declares.

    from compiler.lower.sass import sass_counts, resources
    counts = sass_counts(k.cubin)          # k = compiler.lower.compile(...); or any cubin (tileiras')
    counts.classes["tensor_core"], counts.global_loads[128], counts.total
    res = resources(k.cubin)               # registers, stack, static shared, local bytes per function

Counting reads `cuobjdump -sass` text (`build.disassemble`): one instruction per
`/*addr*/ [@pred] OPCODE.MODIFIERS operands ;` line. An instruction's *base* opcode is the
part before the first dot (`LDG` of `LDG.E.128.CONSTANT`); classes are sets of base opcodes:

    tensor_core   HMMA IMMA DMMA BMMA QMMA OMMA (mma.sync), HGMMA IGMMA QGMMA BGMMA (sm_90
                  wgmma), UTC*MMA (sm_100 tcgen05.mma: UTCHMMA, UTCQMMA, UTCIMMA, ...)
    tensor_memory LDTM STTM UTCBAR UTCCP UTCSHIFT (sm_100 tensor memory, tcgen05.commit)
    global_load   LDG; also counted by width in `global_loads` (bits per thread)
    global_store  STG; by width in `global_stores`
    generic       LD ST (generic-address loads and stores)
    tma           UTMA* (UTMALDG, UTMASTG, UTMAPF, UTMAREDG, ...) and UBLK* (UBLKCP, UBLKRED, ...)
    async_copy    LDGSTS (cp.async, global to shared) and LDGDEPBAR
    shared        LDS STS LDSM STSM ATOMS
    local         LDL STL (local memory: spills and stack arrays)
    atomic        ATOM ATOMG RED REDG (global atomics and reductions)
    branch        BRA BRX BRXU JMP JMX JMXU CALL RET
    barrier       BAR (CTA barriers), MEMBAR FENCE ERRBAR (fences), SYNCS ARRIVES (mbarrier),
                  WARPGROUP (wgmma fences), DEPBAR, WARPSYNC, UCGABAR_ARV UCGABAR_WAIT (cluster)

Width of a global access: 8 or 16 for `.U8/.S8/.U16/.S16`, 64, 128 or 256 for a `.64`, `.128`
or `.256` modifier, else 32 (`LDG.E` is one 32-bit word per thread). `total` counts every
instruction except NOP (the padding after the last EXIT); the self-branch that ends every
function (`BRA` to itself) is counted, as a branch.

Resources are read from the cubin itself (`compiler.lower.cubin`), the figures `cuobjdump
-res-usage` prints (tests/lower/test_sass.py compares them): REG (registers per thread),
STACK (bytes of stack frame), SHARED (static shared memory; Triton allocates its shared
memory dynamically, see `Compiled.shared`), LOCAL (bytes of local memory per thread: with no
local arrays in the kernel, these are register spills).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .codegen import LowerError
from .cubin import CubinError, read_cubin

_TENSOR_CORE = {"HMMA", "IMMA", "DMMA", "BMMA", "QMMA", "OMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA"}
_CLASSES: dict[str, set[str]] = {
    "tensor_memory": {"LDTM", "STTM", "UTCBAR", "UTCCP", "UTCSHIFT"},
    "global_load": {"LDG"},
    "global_store": {"STG"},
    "generic": {"LD", "ST"},
    "async_copy": {"LDGSTS", "LDGDEPBAR"},
    "shared": {"LDS", "STS", "LDSM", "STSM", "ATOMS"},
    "local": {"LDL", "STL"},
    "atomic": {"ATOM", "ATOMG", "RED", "REDG"},
    "branch": {"BRA", "BRX", "BRXU", "JMP", "JMX", "JMXU", "CALL", "RET"},
    "barrier": {
        "BAR", "MEMBAR", "FENCE", "ERRBAR", "SYNCS", "ARRIVES", "WARPGROUP", "DEPBAR", "WARPSYNC",
        "UCGABAR_ARV", "UCGABAR_WAIT",
    },
}  # fmt: skip
CLASSES = ("tensor_core", "tma", *_CLASSES)
_WIDTH = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128, "256": 256}

# `/*0040*/   @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;` → the opcode with its modifiers.
_INSTRUCTION = re.compile(
    r"^\s*/\*[0-9a-fA-F]+\*/\s*\{?\s*(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)"
)
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")


def class_of(base: str) -> str | None:
    """The class of a base opcode (`HGMMA` → "tensor_core"), or None."""
    if base in _TENSOR_CORE or (base.startswith("UTC") and base.endswith("MMA")):
        return "tensor_core"
    if base.startswith(("UTMA", "UBLK")):
        return "tma"
    for name, members in _CLASSES.items():
        if base in members:
            return name
    return None


def access_bits(opcode: str) -> int:
    """Bits per thread of a global load or store (`LDG.E.128` → 128, `STG.E.U16` → 16)."""
    bits = 32
    for modifier in opcode.split(".")[1:]:
        bits = _WIDTH.get(modifier, bits)
    return bits


@dataclass(slots=True)
class SassCounts:
    """Instruction counts of one disassembly (all functions together)."""

    functions: list[str] = field(default_factory=list)
    opcodes: Counter[str] = field(default_factory=Counter)  # full opcode with modifiers → count
    classes: Counter[str] = field(default_factory=Counter)  # class → count (see CLASSES)
    global_loads: Counter[int] = field(default_factory=Counter)  # bits per thread → count
    global_stores: Counter[int] = field(default_factory=Counter)
    total: int = 0

    def base(self, name: str) -> int:
        """How many instructions have base opcode `name` (`LDG`, `HGMMA`)."""
        return sum(n for op, n in self.opcodes.items() if op.split(".", 1)[0] == name)

    def has(self, pattern: str) -> bool:
        """Whether some opcode (with modifiers) matches the regular expression `pattern`."""
        rx = re.compile(pattern)
        return any(rx.search(op) for op in self.opcodes)


def count_sass(text: str) -> SassCounts:
    """Instruction counts of `cuobjdump -sass` output."""
    out = SassCounts()
    for line in text.splitlines():
        m = _INSTRUCTION.match(line)
        if m is None:
            f = _FUNCTION.match(line)
            if f is not None:
                out.functions.append(f.group(1))
            continue
        opcode = m.group(1)
        base = opcode.split(".", 1)[0]
        if base == "NOP":
            continue
        out.total += 1
        out.opcodes[opcode] += 1
        cls = class_of(base)
        if cls is not None:
            out.classes[cls] += 1
        if base == "LDG":
            out.global_loads[access_bits(opcode)] += 1
        elif base == "STG":
            out.global_stores[access_bits(opcode)] += 1
    return out


def sass_counts(cubin: bytes) -> SassCounts:
    """Instruction counts of a cubin (needs cuobjdump: it ships in Triton's wheel)."""
    from .build import disassemble

    return count_sass(disassemble(cubin))


@dataclass(frozen=True, slots=True)
class Resources:
    """What one kernel of a cubin declares (`cuobjdump -res-usage`'s figures)."""

    function: str
    registers: int
    stack: int  # bytes of stack frame per thread
    shared: int  # bytes of static shared memory (dynamic shared memory is a launch parameter)
    local: int  # bytes of local memory per thread (register spills when the kernel has no local arrays)


def resources(cubin: bytes) -> list[Resources]:
    """Registers, stack, static shared memory and local memory of each kernel of a cubin."""
    try:
        kernels = read_cubin(cubin).kernels.values()
    except CubinError as exc:
        raise LowerError(str(exc)) from None
    return [Resources(k.name, k.registers or 0, k.frame_size or 0, k.static_shared, k.static_local) for k in kernels]


def find_tileiras() -> str | None:
    """NVIDIA's `tileiras` (to compare cubins with), as `compiler.modules` finds it."""
    from ..modules import find_tileiras as find

    return find()


__all__ = [
    "CLASSES",
    "Resources",
    "SassCounts",
    "access_bits",
    "class_of",
    "count_sass",
    "find_tileiras",
    "resources",
    "sass_counts",
]
