"""`read_cubin` against NVIDIA's own reading (`cuobjdump -elf`, parsed here from its text) on
cubins made by tileiras, by Triton and by ptxas from hand-written PTX; and on damaged input,
which must give a CubinError, never another exception. No GPU needed."""

from __future__ import annotations

import os
import random
import re
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from compiler.lower.build import tool_path
from compiler.lower.cubin import CubinError, KernelParam, read_cubin
from compiler.runtime import load_module
from tests.conformance.harness import REPO
from tests.corpus import MATMUL_CLUSTER_NAME, matmul_cluster_text
from tests.runtime.test_tileiras import (  # noqa: F401 - tileiras_builds is a fixture used here
    ARCHS,
    CASES,
    build_cache,
    require_tileiras,
    tileiras_builds,
)

EXAMPLES = sorted(p.stem for p in (REPO / "examples").glob("*.tileir"))


# -- cuobjdump's reading -------------------------------------------------------------------------


@dataclass(slots=True)
class DumpedKernel:
    params: list[tuple[int, int, int]] = field(default_factory=list)  # (ordinal, offset, size)
    attrs: dict[str, str] = field(default_factory=dict)  # attribute name -> its Value text


@dataclass(slots=True)
class Dump:
    sm: int
    kernels: dict[str, DumpedKernel]
    registers: dict[str, int]
    frames: dict[str, int]
    section_sizes: dict[str, int]


def cuobjdump() -> str:
    tool = tool_path("cuobjdump")
    if tool is None:
        pytest.skip("cuobjdump is not installed (it ships with Triton's wheel: pip install triton)")
    return tool


def dump(cubin: bytes) -> Dump:
    """What `cuobjdump -elf` says about a cubin: its SM, the entries of each .nv.info.<kernel>
    section, REGCOUNT and FRAME_SIZE per function, and the size of every section."""
    tool = cuobjdump()
    with tempfile.TemporaryDirectory(prefix="tileir-cubin-") as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        text = subprocess.run([tool, "-elf", str(path)], capture_output=True, text=True, check=True, timeout=60).stdout
    sm = int(re.search(r"\bsm=(\d+)", text).group(1))
    sizes: dict[str, int] = {}
    kernels: dict[str, DumpedKernel] = {}
    registers: dict[str, int] = {}
    frames: dict[str, int] = {}
    lines = text.splitlines()
    in_table = False
    section = None
    entry: list[str] = []

    def finish() -> None:
        if not entry or section is None:
            return
        joined = "\n".join(entry)
        attr = re.search(r"Attribute:\s*(\S+)", joined)
        value = re.search(r"Value:\s*(.*)", joined, flags=re.S)
        if attr is None:
            return
        name, val = attr.group(1), value.group(1).strip() if value else ""
        if section == ".nv.info":
            m = re.match(r"function: (\S+)\(0x[0-9a-f]+\)\s+(register count|frame size): (\S+)", val)
            if m:
                (registers if m.group(2) == "register count" else frames)[m.group(1)] = int(m.group(3), 0)
        elif section.startswith(".nv.info."):
            k = kernels.setdefault(section.removeprefix(".nv.info."), DumpedKernel())
            if name == "EIATTR_KPARAM_INFO":
                m = re.search(r"Ordinal : (0x[0-9a-f]+)\s+Offset\s*: (0x[0-9a-f]+)\s+Size\s*: (0x[0-9a-f]+)", val)
                k.params.append(tuple(int(g, 16) for g in m.groups()))
            else:
                k.attrs[name] = val

    for line in lines:
        if line.startswith("Index Offset"):
            in_table = True
            continue
        if in_table:
            parts = line.split()
            if len(parts) >= 9:
                sizes[parts[-1]] = int(parts[2], 16)
                continue
            in_table = False
        if re.match(r"^\.\S+$", line) or line.startswith(".section "):
            finish()
            entry = []
            section = line.removeprefix(".section ").split()[0]
            if section.startswith(".nv.info."):
                kernels.setdefault(section.removeprefix(".nv.info."), DumpedKernel())
            continue
        if re.match(r"^\s*<0x[0-9a-f]+>\s*$", line):
            finish()
            entry = []
            continue
        if section is not None and line.strip():
            entry.append(line)
    finish()
    return Dump(sm, kernels, registers, frames, sizes)


def _dims(text: str | None) -> tuple[int, int, int] | None:
    if text is None:
        return None
    vals = [int(v, 16) for v in text.split()]
    return (vals + [1, 1, 1])[0], (vals + [1, 1, 1])[1], (vals + [1, 1, 1])[2]


def assert_agrees(cubin: bytes, what: str) -> None:
    info = read_cubin(cubin)
    theirs = dump(cubin)
    assert info.arch == theirs.sm, what
    assert set(info.kernels) == set(theirs.kernels), what
    for name, k in info.kernels.items():
        d = theirs.kernels[name]
        where = f"{what} {name}"
        assert [(p.ordinal, p.offset, p.size) for p in k.params] == sorted(d.params), where
        cbank = d.attrs.get("EIATTR_CBANK_PARAM_SIZE")
        assert k.param_bytes == (int(cbank, 16) if cbank else None), where
        assert k.reqntid == _dims(d.attrs.get("EIATTR_REQNTID")), where
        assert k.max_threads == _dims(d.attrs.get("EIATTR_MAX_THREADS")), where
        assert k.cluster == _dims(d.attrs.get("EIATTR_CTA_PER_CLUSTER")), where
        assert k.registers == theirs.registers.get(name), where
        assert k.frame_size == theirs.frames.get(name), where
        assert k.static_shared == theirs.section_sizes.get(f".nv.shared.{name}", 0), where
        assert k.static_local == theirs.section_sizes.get(f".nv.local.{name}", 0), where


# -- tileiras cubins ---------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", CASES)
def test_tileiras_cubin_agrees_with_cuobjdump(tileiras_builds: dict, case: str, arch: str) -> None:  # noqa: F811
    assert_agrees(tileiras_builds[(case, arch)].built.cubin, f"{case} {arch}")


@pytest.fixture(scope="module")
def tileiras_cluster(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """examples/matmul.tileir asking for clusters of 2 blocks on sm_90, compiled by tileiras."""
    require_tileiras()
    from compiler.runtime.tileiras import compile_tileiras

    module = load_module(matmul_cluster_text(), MATMUL_CLUSTER_NAME)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILEIR_CACHE_DIR", os.fspath(build_cache(tmp_path_factory)))
        return compile_tileiras(module, "sm_90").cubin


def test_tileiras_cluster_dims(tileiras_cluster: bytes, tileiras_builds: dict) -> None:  # noqa: F811
    k = read_cubin(tileiras_cluster).kernels["matmul"]
    assert k.cluster == (2, 1, 1) and k.tile_kernel
    assert_agrees(tileiras_cluster, "matmul with num_cta_in_cga = 2")
    assert read_cubin(tileiras_builds[("example/matmul.tileir", "sm_90")].built.cubin).kernels["matmul"].cluster is None


# -- Triton cubins -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def triton_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The examples compiled by the Triton lowering for sm_90, matmul with num_ctas=2, and
    vector_add for sm_80 and sm_100 (ptxas 12.8 and the newer Blackwell ptxas write the SM
    into different bits of the ELF flags)."""
    pytest.importorskip("triton", reason="Triton is not installed (pip install 'triton>=3.6')")
    from compiler.lower import compile as lower_compile

    out: dict[str, bytes] = {}
    with pytest.MonkeyPatch.context() as patch:
        # The cache tests/lower uses: a session that runs both compiles each kernel once.
        patch.setenv("TILEIR_CACHE_DIR", os.fspath(tmp_path_factory.getbasetemp() / "tileir-cache"))
        for name in EXAMPLES:
            module = load_module(REPO / "examples" / f"{name}.tileir")
            out[f"{name} sm_90"] = lower_compile(module, name, "sm_90").cubin
        module = load_module(REPO / "examples" / "matmul.tileir")
        out["matmul sm_90 num_ctas=2"] = lower_compile(module, "matmul", "sm_90", num_ctas=2).cubin
        module = load_module(REPO / "examples" / "vector_add.tileir")
        for arch in ("sm_80", "sm_100"):
            out[f"vector_add {arch}"] = lower_compile(module, "vector_add", arch).cubin
    return out


def test_triton_cubins_agree_with_cuobjdump(triton_builds: dict[str, bytes]) -> None:
    for what, cubin in triton_builds.items():
        assert_agrees(cubin, what)
        info = read_cubin(cubin)
        assert info.arch == int(re.search(r"sm_(\d+)", what).group(1)), what
        assert not any(k.tile_kernel for k in info.kernels.values()), what


def test_triton_params_and_cluster(triton_builds: dict[str, bytes]) -> None:
    from compiler.runtime import find_kernel

    for name in EXAMPLES:
        k = read_cubin(triton_builds[f"{name} sm_90"]).kernels[name]
        entry = find_kernel(load_module(REPO / "examples" / f"{name}.tileir"), name)
        # Ours, then Triton's two hidden scratch pointers.
        assert len(k.params) == len(entry.regions[0].blocks[0].arguments) + 2, name
        assert [p.size for p in k.params[-2:]] == [8, 8], name
        assert k.cluster is None, name
    assert read_cubin(triton_builds["matmul sm_90 num_ctas=2"]).kernels["matmul"].cluster == (2, 1, 1)


# -- ptxas on hand-written PTX -----------------------------------------------------------------

PTX = """
.version 8.0
.target sm_90
.address_size 64

.func (.param .b32 r) helper(.param .b32 x)
{
  .reg .b32 %a<2>;
  .local .align 4 .b8 scratch[32];
  ld.param.b32 %a0, [x];
  st.local.b32 [scratch], %a0;
  ld.local.b32 %a1, [scratch+4];
  st.param.b32 [r], %a1;
  ret;
}

.visible .entry wide(.param .u64 p0, .param .u32 p1, .param .align 16 .b8 p2[24], .param .u16 p3)
  .maxntid 256, 2, 1
{
  .reg .u64 %rd<2>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd0, [p0];
  ld.param.u32 %r0, [p1];
  call.uni (%r1), helper, (%r0);
  st.global.u32 [%rd0], %r1;
  ret;
}

.visible .entry clustered(.param .u64 q0)
  .reqntid 64, 1, 1
  .reqnctapercluster 1, 2, 3
{
  .reg .u64 %rd<3>;
  .reg .b32 %r<2>;
  .shared .align 4 .b8 buf[100];
  ld.param.u64 %rd0, [q0];
  ld.shared.u32 %r0, [buf+8];
  st.global.u32 [%rd0], %r0;
  ret;
}
"""


@pytest.fixture(scope="module")
def ptx_cubin(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    ptxas = tool_path("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed (it ships with Triton's wheel: pip install triton)")
    tmp = tmp_path_factory.mktemp("ptx")
    (tmp / "k.ptx").write_text(PTX)
    subprocess.run(
        [ptxas, "-arch", "sm_90", "-O1", str(tmp / "k.ptx"), "-o", str(tmp / "k.cubin")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return (tmp / "k.cubin").read_bytes()


def test_ptx_declarations_read_back(ptx_cubin: bytes) -> None:
    assert_agrees(ptx_cubin, "hand-written PTX")
    info = read_cubin(ptx_cubin)
    assert info.arch == 90
    # `helper` stays a function of its own (cuobjdump lists its frame), but it is no kernel.
    assert any("helper" in name for name in dump(ptx_cubin).frames)
    assert set(info.kernels) == {"wide", "clustered"}
    wide, clustered = info.kernels["wide"], info.kernels["clustered"]
    # As the PTX declares them: a pointer, a u32, a 24-byte array aligned to 16, a u16.
    assert wide.params == [KernelParam(0, 0, 8), KernelParam(1, 8, 4), KernelParam(2, 16, 24), KernelParam(3, 40, 2)]
    assert wide.max_threads == (256, 2, 1) and wide.reqntid is None and wide.cluster is None
    assert not wide.tile_kernel
    assert clustered.reqntid == (64, 1, 1) and clustered.max_threads is None
    assert clustered.cluster == (1, 2, 3)
    assert clustered.params == [KernelParam(0, 0, 8)] and clustered.param_bytes == 8
    assert clustered.static_shared >= 100
    assert wide.static_shared == 0


# -- damaged input -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_cubin(ptx_cubin: bytes) -> bytes:
    return ptx_cubin


def test_every_truncation_is_a_cubin_error(sample_cubin: bytes) -> None:
    read_cubin(sample_cubin)
    for n in range(len(sample_cubin)):
        with pytest.raises(CubinError):
            read_cubin(sample_cubin[:n])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "ELF magic"),
        (b"hello, world", "ELF magic"),
        (b"MZ\x90\x00" + bytes(60), "ELF magic"),
        (b"\x7fTileIR\x00\x0d\x03\x00", "ELF magic"),
        (b"\x7fELF", "shorter than an ELF header"),
    ],
)
def test_not_a_cubin(data: bytes, message: str) -> None:
    with pytest.raises(CubinError, match=message):
        read_cubin(data)


def test_other_elf_files(sample_cubin: bytes) -> None:
    x86 = bytearray(sample_cubin)
    struct.pack_into("<H", x86, 18, 62)  # EM_X86_64
    with pytest.raises(CubinError, match=r"^not a cubin: ELF machine 62"):
        read_cubin(bytes(x86))
    elf32 = bytearray(sample_cubin)
    elf32[4] = 1
    with pytest.raises(CubinError, match="64-bit little-endian"):
        read_cubin(bytes(elf32))
    with open("/proc/self/exe", "rb") as f:  # the Python interpreter: an ELF file, not a cubin
        head = f.read(4096)
    with pytest.raises(CubinError, match="not a cubin"):
        read_cubin(head)


def _info_section(cubin: bytes, name: str) -> tuple[int, int]:
    """(offset, size) of a section, found with the ELF layout written out here."""
    shoff = struct.unpack_from("<Q", cubin, 40)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 58)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    for h in headers:
        start = names_at + h[0]
        if cubin[start : cubin.index(b"\0", start)].decode() == name:
            return h[4], h[5]
    raise AssertionError(f"no section {name}")


def test_damaged_info_entries(sample_cubin: bytes) -> None:
    offset, size = _info_section(sample_cubin, ".nv.info.wide")
    bad_format = bytearray(sample_cubin)
    bad_format[offset] = 9  # the first entry's format byte
    with pytest.raises(CubinError, match=r"\.nv\.info\.wide: unknown entry format 9"):
        read_cubin(bytes(bad_format))
    too_long = bytearray(sample_cubin)
    assert too_long[offset] == 4, "the first entry of .nv.info.wide is expected to carry a payload"
    struct.pack_into("<H", too_long, offset + 2, size)  # claims more bytes than the section has
    with pytest.raises(CubinError, match=r"\.nv\.info\.wide: attribute 0x[0-9a-f]+ claims"):
        read_cubin(bytes(too_long))
    # An attribute nobody knows (yet) is skipped: the rest still reads.
    unknown = bytearray(sample_cubin)
    unknown[offset + 1] = 0xFE
    assert read_cubin(bytes(unknown)).kernels["wide"].params == read_cubin(sample_cubin).kernels["wide"].params


def test_random_damage_never_escapes_as_another_error(sample_cubin: bytes) -> None:
    rnd = random.Random(20240614)
    for _ in range(400):
        data = bytearray(sample_cubin)
        for _ in range(rnd.randint(1, 6)):
            pos = rnd.randrange(len(data)) if rnd.random() < 0.5 else rnd.randrange(64)  # the header often
            data[pos] = rnd.randrange(256)
        try:
            read_cubin(bytes(data))
        except CubinError as e:
            assert "\n" not in str(e) and str(e)
    for n in (1, 16, 64, 1000):
        blob = bytes(rnd.randrange(256) for _ in range(n))
        with pytest.raises(CubinError):
            read_cubin(blob)
        with pytest.raises(CubinError):
            read_cubin(sample_cubin[:64] + blob)
