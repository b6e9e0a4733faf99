"""Inline PTX in the generated source: every `tl.inline_asm_elementwise` call is written here.

Only the GPU runs inline PTX (Triton's interpreter has none), so each call stands in a
GPU-only branch of a helper (codegen's module doc: GPU-only fast paths). The ops' modules say
which instruction and why; this one says how Triton is asked for it.
"""

from __future__ import annotations

# For each type an instruction takes or gives: PTX's register kind (its constraint letter) and
# the Triton type that holds the value. PTX has no 8-bit registers: an i8 is in a 32-bit one
# (four to a register where an instruction packs them). A pointer is an input only, its
# 64-bit address.
REGISTERS = {
    "f16": ("h", "tl.float16"),
    "bf16": ("h", "tl.bfloat16"),
    "f32": ("f", "tl.float32"),
    "f64": ("d", "tl.float64"),
    "i8": ("r", "tl.int8"),
    "i16": ("h", "tl.int16"),
    "i32": ("r", "tl.int32"),
    "i64": ("l", "tl.int64"),
    "ptr": ("l", "tl.int64"),
}


def inline_ptx(asm: str, out: str, ins: list[str], args: list[str], pure: bool = True, pack: int = 1) -> str:
    """The expression running `asm` on each element: a value of type `out` from `args`, of
    the types `ins` (REGISTERS' names). `pure=False`: an instruction Triton may not move,
    merge or look through (a fence, a store, a move that must stop an analysis); `pack`:
    the elements an operand register holds."""
    reg, dtype = REGISTERS[out]
    constraints = ",".join([f"={reg}"] + [REGISTERS[t][0] for t in ins])
    return (
        f'tl.inline_asm_elementwise("{asm}", "{constraints}", [{", ".join(args)}], dtype={dtype}, '
        f"is_pure={pure}, pack={pack})"
    )
