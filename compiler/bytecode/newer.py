"""Reading bytecode 13.4 and 13.5 as far as the 13.3 op set can represent it.

cuTile Python 1.7 writes 13.4 by default (13.5 is a developer option there), so users bring
these files. No public specification of them exists; what follows was established from
cuTile's encoders and checked against NVIDIA's 13.5 `tileirdisasm` on real exports. Against
13.3 the differences are:

* header: the version tag's bit 0 marks "public-preview" content (13.5 only); other bits
  are invalid;
* types: `ptr` and `tensor_view` start with an option-flags varint (bit 0: a `ptr_attr`
  follows); new element type `fnv8E5M3FNU` (tag 130);
* function table (13.5): flag bit 2 means "extern implementation" rather than "has hints";
  kernels always carry hints, then a tagged array of argument attribute dictionaries;
* debug info (13.5): DISubprogram gains a trailing flags varint (1 = declaration);
* ops: `ftoi` gains a flags varint (bit 0: `saturating`); `load_view_tko` and
  `store_view_tko` (13.4) and `atomic_red_view_tko` (13.5) gain an `inbounds` array (a count,
  then one 0/1 byte per index) after their hints; opcodes 0x76-0x7D are new; rounding mode 7
  (`nearest_away`) is new.

Everything a 13.3 module can express reads into the same IR (absent flags, all-false
`inbounds`, empty argument attributes); anything else is refused with a message naming the
construct, its version, and how to export the kernel for 13.3 instead.
"""

from __future__ import annotations

from .format import BytecodeError, Version, version_text

HOW_TO_EXPORT = (
    "export the kernel for bytecode 13.3 instead, e.g. with cuTile Python: export_kernel(kernel, signatures, path, "
    'output_format="tileir_bytecode", bytecode_version="13.3")'
)

# Opcodes added after 13.3, with their names and versions.
NEW_OPCODES: dict[int, tuple[str, Version]] = {
    0x76: ("insert", (13, 4)),
    0x77: ("gdc_launch_dependents_tko", (13, 4)),
    0x78: ("gdc_wait_tko", (13, 4)),
    0x79: ("fpowi", (13, 4)),
    0x7A: ("memory_fence_alias_tko", (13, 4)),
    0x7B: ("multimem_load_reduce_view_tko", (13, 5)),
    0x7C: ("multimem_reduce_view_tko", (13, 5)),
    0x7D: ("multimem_store_view_tko", (13, 5)),
    0x4002: ("preview$call", (13, 5)),
}
MAX_OPCODE = {(13, 4): 0x7A, (13, 5): 0x7D}

# Ops that carry an `inbounds` array from a version on.
INBOUNDS_SINCE: dict[str, Version] = {
    "cuda_tile.load_view_tko": (13, 4),
    "cuda_tile.store_view_tko": (13, 4),
    "cuda_tile.atomic_red_view_tko": (13, 5),
}
FTOI_FLAGS_SINCE: Version = (13, 4)
TYPE_FLAGS_SINCE: Version = (13, 4)  # ptr and tensor_view start with option flags
FUNCTION_ARG_ATTRS_SINCE: Version = (13, 5)
SUBPROGRAM_FLAGS_SINCE: Version = (13, 5)
FNV8E5M3FNU_TAG = 130
NEAREST_AWAY = 7  # RoundingMode value added in 13.4
PTR_ATTRS = ("none", "unicast", "multicast")


def unrepresentable(what: str, version: Version, offset: int | None) -> BytecodeError:
    """A 13.4/13.5 construct the 13.3 op set has no counterpart for."""
    return BytecodeError(
        f"this file (bytecode {version_text(version)}) uses {what}, which this tool cannot represent (it reads "
        f"13.4 and 13.5 files only where they stay within the 13.3 op set); {HOW_TO_EXPORT}",
        offset,
    )


def check_header(version: Version, tag: int) -> None:
    if tag & 1:
        raise unrepresentable("public-preview content (version tag bit 0)", version, 10)
    if tag:
        raise BytecodeError(f"header has unrecognized version tag bits (0x{tag:x})", 10)
