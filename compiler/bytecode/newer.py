"""Bytecode 13.4 and 13.5: what the op table does not say about them.

cuTile Python 1.7 writes 13.4 by default (13.5 is a developer option there), so users bring
these files. No public specification of them exists; what follows was established from
cuTile's encoders and checked against NVIDIA's 13.5 `tileirdisasm` on real exports.

13.4 is read and written in full. Its new ops (`insert`, `fpowi`, `gdc_wait_tko`,
`gdc_launch_dependents_tko`, `memory_fence_alias_tko`), `ftoi`'s `saturating` flag and the
`inbounds` array of `load_view_tko`/`store_view_tko` (a count, then one 0/1 byte per index,
after the hints) are in the op table (`compiler.dialect.ops`, `since="13.4"`), so the generic
layout (`compiler.bytecode.schema`) encodes them. What is here is the rest:

* header: from 13.4 the version tag has a meaning; bit 0 marks "public-preview" content
  (13.5 only); other bits are invalid;
* types: `ptr` and `tensor_view` start with an option-flags varint (bit 0: a `ptr_attr`
  follows, which we cannot represent); new element type `fnv8E5M3FNU` (tag 130, refused);
* 13.5 only, read as far as the 13.4 op set can represent it: function table flag bit 2
  means "extern implementation" rather than "has hints", kernels always carry hints, then a
  tagged array of argument attribute dictionaries; DISubprogram gains a trailing flags varint
  (1 = declaration); `atomic_red_view_tko` gains an `inbounds` array; opcodes 0x7B-0x7D and
  the preview call are new.

Anything else is refused with a message naming the construct, its version, and how to
export the kernel for 13.4 instead.
"""

from __future__ import annotations

from .format import BytecodeError, Version, version_text

HOW_TO_EXPORT = (
    "export the kernel for bytecode 13.4 instead, e.g. with cuTile Python: export_kernel(kernel, signatures, path, "
    'output_format="tileir_bytecode", bytecode_version="13.4")'
)

# Opcodes added after 13.4, with their names and versions.
NEW_OPCODES: dict[int, tuple[str, Version]] = {
    0x7B: ("multimem_load_reduce_view_tko", (13, 5)),
    0x7C: ("multimem_reduce_view_tko", (13, 5)),
    0x7D: ("multimem_store_view_tko", (13, 5)),
    0x4002: ("preview$call", (13, 5)),
}
MAX_OPCODE = {(13, 5): 0x7D}

# Ops that carry an `inbounds` array from a version on that the op table does not declare.
INBOUNDS_SINCE: dict[str, Version] = {"cuda_tile.atomic_red_view_tko": (13, 5)}
V13_4: Version = (13, 4)  # the version tag's meaning, the type option flags, fnv8E5M3FNU
FUNCTION_ARG_ATTRS_SINCE: Version = (13, 5)
SUBPROGRAM_FLAGS_SINCE: Version = (13, 5)
FNV8E5M3FNU_TAG = 130
PTR_ATTRS = ("none", "unicast", "multicast")


def unrepresentable(what: str, version: Version, offset: int | None) -> BytecodeError:
    """A 13.4/13.5 construct the op table has no counterpart for."""
    if version <= (13, 4):
        return BytecodeError(f"this file (bytecode 13.4) uses {what}, which this tool does not support", offset)
    return BytecodeError(
        f"this file (bytecode {version_text(version)}) uses {what}, which this tool cannot represent (it reads "
        f"13.5 files only where they stay within the 13.4 op set); {HOW_TO_EXPORT}",
        offset,
    )


def check_header(version: Version, tag: int) -> None:
    if tag & 1:
        raise unrepresentable("public-preview content (version tag bit 0)", version, 10)
    if tag:
        raise BytecodeError(f"header has unrecognized version tag bits (0x{tag:x})", 10)
