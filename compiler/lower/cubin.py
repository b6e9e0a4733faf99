"""Reading CUDA cubins (ELF files made by ptxas, Triton or NVIDIA's `tileiras`) in pure Python:
the kernels a cubin holds and what a launcher needs to know about each of them.

    from compiler.lower.cubin import read_cubin
    info = read_cubin(data)                      # CubinError if `data` is not a readable cubin
    k = info.kernels["vector_add"]
    k.params        # [KernelParam(ordinal, offset, size), ...] in the parameter buffer
    k.param_bytes   # the size of that buffer
    k.reqntid       # the block size the kernel was compiled for, if it requires one

Where the numbers come from (worked out by comparing the bytes of cubins with `cuobjdump -elf`;
tests/runtime/test_cubin.py checks the reading against cuobjdump on every cubin it builds):

- The ELF header: `e_machine` 190 (EM_CUDA); the SM number sits in `e_flags`, in bits 0-7 for
  ELF ABI version 7 (`e_ident[8]`, older ptxas such as Triton's 12.8) and in bits 8-15 for ABI
  version 8 and later (ptxas 13, `tileiras`).
- `.nv.info.<kernel>` (one per kernel; `sh_info` is its `.text.<kernel>` section) and `.nv.info`
  (module-wide) are lists of entries `u8 format, u8 attribute, u16 h, payload`: format 1
  (EIFMT_NVAL) carries nothing, 2 (BVAL) and 3 (HVAL) carry their value in `h`, 4 (SVAL) carries
  `h` bytes of payload after the four-byte head. The attributes read here are listed in `EIATTR`.
- EIATTR_KPARAM_INFO's 12-byte payload: u32 index, u16 ordinal, u16 offset, u32 word whose bits
  18-31 are the parameter's size in bytes (bits 0-7: pointee log-alignment, 8-11: space,
  12-16: constant bank).
- EIATTR_REGCOUNT and EIATTR_FRAME_SIZE live in the module-wide `.nv.info` as (u32 symbol
  index, u32 value) pairs, one per function (device functions too).
- A kernel's static shared memory is the size of its (NOBITS) `.nv.shared.<kernel>` section, as
  the driver reads it (and its static local memory, `cuobjdump -res-usage`'s LOCAL, the size of
  `.nv.local.<kernel>`); for sm_90 and newer ptxas has been seen to add 1 KiB to what the kernel
  declares when it uses shared memory at all (a `.shared` array of 100 bytes gives 1124).
- `tileiras` marks its cubins with the symbol `___NV_TILE_LAUNCH_META_DATA___` (a 64-byte
  global whose address it places in constant bank 4).

Anything else (unknown attributes, other sections) is skipped, so newer cubins still read; a
file that is cut short or is not a cubin raises `CubinError` with a one-line reason.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
SHT_SYMTAB = 2
SHT_NOBITS = 8
STT_FUNC = 2
STO_CUDA_ENTRY = 0x10  # st_other bit ptxas sets on kernels (as opposed to device functions)
TILE_LAUNCH_SYMBOL = "___NV_TILE_LAUNCH_META_DATA___"

# Entry formats of .nv.info sections.
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4

# The attribute codes read here (names as cuobjdump prints them).
EIATTR = {
    "MAX_THREADS": 0x05,
    "PARAM_CBANK": 0x0A,
    "REQNTID": 0x10,
    "FRAME_SIZE": 0x11,
    "MIN_STACK_SIZE": 0x12,
    "KPARAM_INFO": 0x17,
    "CBANK_PARAM_SIZE": 0x19,
    "MAXREG_COUNT": 0x1B,
    "EXIT_INSTR_OFFSETS": 0x1C,
    "REGCOUNT": 0x2F,
    "CUDA_API_VERSION": 0x37,
    "CTA_PER_CLUSTER": 0x3D,
    "EXPLICIT_CLUSTER": 0x3E,
    "MAX_CLUSTER_RANK": 0x3F,
    # The same 12-byte payload as KPARAM_INFO; tileiras writes it for kernels whose parameter
    # space also holds what the driver adds at launch (CBANK_PARAM_SIZE is then larger than
    # the parameters: the TMA descriptors a tile kernel's launch metadata has encoded).
    "KPARAM_INFO_V2": 0x45,
}
_MAX_THREADS = EIATTR["MAX_THREADS"]
_REQNTID = EIATTR["REQNTID"]
_FRAME_SIZE = EIATTR["FRAME_SIZE"]
_KPARAM_INFO = (EIATTR["KPARAM_INFO"], EIATTR["KPARAM_INFO_V2"])
_CBANK_PARAM_SIZE = EIATTR["CBANK_PARAM_SIZE"]
_REGCOUNT = EIATTR["REGCOUNT"]
_CTA_PER_CLUSTER = EIATTR["CTA_PER_CLUSTER"]


class CubinError(ValueError):
    """A cubin that cannot be read: not an ELF file, not a CUDA one, or cut short."""


@dataclass(frozen=True, slots=True)
class KernelParam:
    """One kernel parameter: its ordinal (position in the signature), its byte offset in the
    parameter buffer and its size in bytes."""

    ordinal: int
    offset: int
    size: int


@dataclass(slots=True)
class CubinKernel:
    name: str
    params: list[KernelParam]  # sorted by ordinal (EIATTR_KPARAM_INFO)
    param_bytes: int | None  # EIATTR_CBANK_PARAM_SIZE: the parameter buffer's size
    reqntid: tuple[int, int, int] | None  # EIATTR_REQNTID: the block size the kernel requires
    max_threads: tuple[int, int, int] | None  # EIATTR_MAX_THREADS (.maxntid)
    cluster: tuple[int, int, int] | None  # EIATTR_CTA_PER_CLUSTER: compile-time cluster dims
    registers: int | None  # EIATTR_REGCOUNT
    static_shared: int  # bytes: the size of .nv.shared.<name> (0 if none)
    frame_size: int | None  # EIATTR_FRAME_SIZE: the stack frame, local memory per thread
    static_local: int  # bytes per thread: the size of .nv.local.<name> (0 if none)
    tile_kernel: bool  # compiled by tileiras (the cubin has ___NV_TILE_LAUNCH_META_DATA___)


@dataclass(slots=True)
class Cubin:
    arch: int  # the SM number, e.g. 90
    kernels: dict[str, CubinKernel]


@dataclass(frozen=True, slots=True)
class _Section:
    index: int
    name: str
    type: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


@dataclass(frozen=True, slots=True)
class _Symbol:
    name: str
    info: int
    other: int
    shndx: int


class _Reader:
    """Bounds-checked little-endian reads: anything past the end is a CubinError."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def unpack(self, fmt: str, offset: int, what: str) -> tuple[int, ...]:
        size = struct.calcsize(fmt)
        if offset < 0 or offset + size > len(self.data):
            raise CubinError(
                f"malformed cubin: {what} at byte {offset} lies past the end of the file ({len(self.data)} bytes)"
            )
        return struct.unpack_from(fmt, self.data, offset)

    def slice(self, offset: int, size: int, what: str) -> bytes:
        if offset < 0 or size < 0 or offset + size > len(self.data):
            raise CubinError(
                f"malformed cubin: {what} (bytes {offset}..{offset + size}) lies past the end of the file "
                f"({len(self.data)} bytes)"
            )
        return self.data[offset : offset + size]


def _cstr(table: bytes, offset: int, what: str) -> str:
    if offset >= len(table) and offset != 0:
        raise CubinError(f"malformed cubin: {what} name offset {offset} is outside its string table")
    end = table.find(b"\0", offset)
    if end < 0:
        end = len(table)
    return table[offset:end].decode("utf-8", "replace")


def read_cubin(data: bytes) -> Cubin:
    """The SM number and kernels of a cubin. Raises CubinError (a ValueError) when `data` is
    not a 64-bit little-endian CUDA ELF file or its tables are cut short or inconsistent."""
    data = bytes(data)
    try:
        return _read(data)
    except CubinError:
        raise
    except (struct.error, IndexError, ValueError, OverflowError) as e:  # a guard: _read checks bounds itself
        raise CubinError(f"malformed cubin: {e}") from None


def _read(data: bytes) -> Cubin:
    r = _Reader(data)
    if data[:4] != ELF_MAGIC:
        raise CubinError("not a cubin: the data does not start with the ELF magic \\x7fELF")
    if len(data) < 64:
        raise CubinError(f"malformed cubin: {len(data)} bytes is shorter than an ELF header (64 bytes)")
    if data[4] != 2 or data[5] != 1:
        raise CubinError("not a cubin: CUDA cubins are 64-bit little-endian ELF files")
    (e_machine,) = r.unpack("<H", 18, "e_machine")
    if e_machine != EM_CUDA:
        raise CubinError(f"not a cubin: ELF machine {e_machine}, not CUDA ({EM_CUDA})")
    (e_flags,) = r.unpack("<I", 48, "e_flags")
    abi_version = data[8]
    arch = (e_flags >> 8) & 0xFF if abi_version >= 8 else e_flags & 0xFF
    (e_shoff,) = r.unpack("<Q", 40, "e_shoff")
    e_shentsize, e_shnum, e_shstrndx = r.unpack("<HHH", 58, "section header counts")
    if e_shnum == 0:
        raise CubinError("malformed cubin: it has no section headers")
    if e_shentsize < 64:
        raise CubinError(f"malformed cubin: section header size {e_shentsize} (64 expected)")
    raw_sections = []
    for i in range(e_shnum):
        raw_sections.append(r.unpack("<IIQQQQIIQQ", e_shoff + i * e_shentsize, f"section header {i}"))
    if e_shstrndx >= e_shnum:
        raise CubinError(f"malformed cubin: section name table index {e_shstrndx} is out of range")
    shstr = raw_sections[e_shstrndx]
    shstrtab = r.slice(shstr[4], shstr[5], "the section name table")
    sections: list[_Section] = []
    for i, (name, stype, _flags, _addr, offset, size, link, info, _align, entsize) in enumerate(raw_sections):
        section = _Section(i, _cstr(shstrtab, name, f"section {i}"), stype, offset, size, link, info, entsize)
        if stype != SHT_NOBITS and i != 0:
            r.slice(offset, size, f"section {section.name or i}")  # every section lies inside the file
        sections.append(section)
    # So does the program header table: a file cut short anywhere is reported, not half read.
    (e_phoff,) = r.unpack("<Q", 32, "e_phoff")
    e_phentsize, e_phnum = r.unpack("<HH", 54, "program header counts")
    if e_phnum:
        r.slice(e_phoff, e_phentsize * e_phnum, "the program header table")

    def contents(s: _Section) -> bytes:
        return b"" if s.type == SHT_NOBITS else r.slice(s.offset, s.size, f"section {s.name}")

    symbols = _symbols(r, sections, contents)
    tile = any(sym.name == TILE_LAUNCH_SYMBOL for sym in symbols)

    # Module-wide per-function values: symbol index -> value.
    registers: dict[int, int] = {}
    frames: dict[int, int] = {}
    for s in sections:
        if s.name == ".nv.info":
            for attr, fmt, _h, payload in _entries(contents(s), s.name):
                if fmt != EIFMT_SVAL or len(payload) < 8 or attr not in (_REGCOUNT, _FRAME_SIZE):
                    continue
                sym, v = struct.unpack_from("<II", payload)
                (registers if attr == _REGCOUNT else frames)[sym] = v

    by_name = {s.name: s for s in sections}
    info_by_text = {s.info: s for s in sections if s.name.startswith(".nv.info.")}
    kernels: dict[str, CubinKernel] = {}
    for index, sym in enumerate(symbols):
        if sym.info & 0xF != STT_FUNC or not sym.other & STO_CUDA_ENTRY:
            continue
        info = info_by_text.get(sym.shndx) or by_name.get(f".nv.info.{sym.name}")
        shared = by_name.get(f".nv.shared.{sym.name}")
        local = by_name.get(f".nv.local.{sym.name}")
        kernel = CubinKernel(
            name=sym.name,
            params=[],
            param_bytes=None,
            reqntid=None,
            max_threads=None,
            cluster=None,
            registers=registers.get(index),
            static_shared=shared.size if shared is not None else 0,
            frame_size=frames.get(index),
            static_local=local.size if local is not None else 0,
            tile_kernel=tile,
        )
        if info is not None:
            _read_kernel_info(kernel, contents(info), info.name)
        kernels[sym.name] = kernel
    return Cubin(arch, kernels)


def _symbols(r: _Reader, sections: list[_Section], contents) -> list[_Symbol]:
    symtab = next((s for s in sections if s.type == SHT_SYMTAB), None)
    if symtab is None:
        return []
    if symtab.link >= len(sections):
        raise CubinError(f"malformed cubin: the symbol table's string table index {symtab.link} is out of range")
    strtab = contents(sections[symtab.link])
    raw = contents(symtab)
    entsize = symtab.entsize or 24
    if entsize < 24:
        raise CubinError(f"malformed cubin: symbol entry size {entsize} (24 expected)")
    symbols = []
    for i in range(len(raw) // entsize):
        name, info, other, shndx = struct.unpack_from("<IBBH", raw, i * entsize)
        symbols.append(_Symbol(_cstr(strtab, name, f"symbol {i}"), info, other, shndx))
    return symbols


def _entries(raw: bytes, where: str):
    """(attribute, format, h, payload) of each entry of a .nv.info section."""
    pos = 0
    while pos < len(raw):
        if pos + 4 > len(raw):
            raise CubinError(f"malformed cubin: {where} ends inside an entry (byte {pos} of {len(raw)})")
        fmt, attr, h = struct.unpack_from("<BBH", raw, pos)
        pos += 4
        if fmt == EIFMT_SVAL:
            if pos + h > len(raw):
                raise CubinError(
                    f"malformed cubin: {where}: attribute {attr:#x} claims {h} bytes, only {len(raw) - pos} are left"
                )
            yield attr, fmt, h, raw[pos : pos + h]
            pos += h
        elif fmt in (EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL):
            yield attr, fmt, h, b""
        else:
            # The format says how long the entry is; without it the rest cannot be found.
            raise CubinError(
                f"malformed cubin: {where}: unknown entry format {fmt} (attribute {attr:#x}, byte {pos - 4})"
            )


def _dims(payload: bytes) -> tuple[int, int, int]:
    """Up to three u32 dimensions; missing ones are 1."""
    n = min(len(payload) // 4, 3)
    dims = list(struct.unpack_from(f"<{n}I", payload)) + [1] * (3 - n)
    return dims[0], dims[1], dims[2]


def _read_kernel_info(kernel: CubinKernel, raw: bytes, where: str) -> None:
    params: dict[int, KernelParam] = {}
    for attr, fmt, h, payload in _entries(raw, where):
        if attr in _KPARAM_INFO and fmt == EIFMT_SVAL:
            if len(payload) < 12:
                raise CubinError(f"malformed cubin: {where}: a KPARAM_INFO entry of {len(payload)} bytes (12 expected)")
            _index, ordinal, offset, word = struct.unpack_from("<IHHI", payload)
            # V1 keeps the size in bits 18-31; V2 in the low 16 bits (its top byte is the
            # pointee's address space), as cuobjdump decodes them.
            size = word >> 18 if attr == EIATTR["KPARAM_INFO"] else word & 0xFFFF
            params[ordinal] = KernelParam(ordinal, offset, size)
        elif attr == _CBANK_PARAM_SIZE and fmt == EIFMT_HVAL:
            kernel.param_bytes = h
        elif attr == _REQNTID and fmt == EIFMT_SVAL and len(payload) >= 4:
            kernel.reqntid = _dims(payload)
        elif attr == _MAX_THREADS and fmt == EIFMT_SVAL and len(payload) >= 4:
            kernel.max_threads = _dims(payload)
        elif attr == _CTA_PER_CLUSTER and fmt == EIFMT_SVAL and len(payload) >= 4:
            kernel.cluster = _dims(payload)
    kernel.params = [params[k] for k in sorted(params)]
