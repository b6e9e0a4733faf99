"""What our cubins hold (`compiler.lower.sass` over `cuobjdump -sass`, and the resources the cubin
declares, as `cuobjdump -res-usage` prints them):

* the f16 matmul example (examples/matmul.tileir: f16 A and B, f32 accumulation, `mmaf`) runs
  on tensor cores: HMMA (mma.sync) on sm_80, HGMMA (wgmma) on sm_90, UTC*MMA (tcgen05.mma) on
  sm_100;
* a contiguous view load, of f32 and of f16, becomes 128-bit global loads (LDG.E.128), or TMA
  where the lowering goes through a tensor descriptor (sm_90+), when the IR promises what vector
  loads need: `assume div_by<16>` on the pointers, a static unit inner stride, and a row stride
  and inner extent that are multiples of 16 bytes (`div_by<4>` for f32, `div_by<8>` for f16);
* where the generated source uses tensor descriptors (`tl.make_tensor_descriptor`: a product's
  operands and result, as in benchmarks/kernels' 128x128x64 f16 matmul), the sm_90 cubin uses
  TMA (UTMALDG / UTMASTG / UBLKCP);
* no example or sample spills: no local memory, no stack frame, no LDL/STL, on every arch.

Compiles go through the session's private cache, which test_acceptance.py fills first (it
compiles the examples and samples for every arch), so most of them are cache hits here.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from compiler.lower import Compiled, LowerError
from compiler.lower import compile as lower_compile
from compiler.lower.build import tool_path
from compiler.lower.sass import Resources, SassCounts, resources, sass_counts
from compiler.runtime import load_module
from tests.corpus import SAMPLES_DIR, SHARED_MISSING, example_files, sample_files

from .harness import ARCHES, compile_for, kernel_text, triton_version

pytestmark = pytest.mark.skipif(
    tool_path("cuobjdump") is None, reason="cuobjdump (shipped in Triton's wheel) is absent"
)

MATMUL = Path(__file__).resolve().parents[2] / "examples" / "matmul.tileir"
# A kernel whose product's data goes through tensor descriptors on sm_90 (ops_view's heuristic)
TMA_MATMUL = Path(__file__).resolve().parents[2] / "benchmarks" / "kernels" / "gpu_matmul_f16_t128.tileir"

TENSOR_CORE = {
    "sm_80": r"^HMMA\.",  # mma.sync
    "sm_90": r"^HGMMA\.",  # wgmma
    "sm_100": r"^UTC\w*MMA\b",  # tcgen05.mma (UTCHMMA for f16)
}


def _copy_kernel(dtype: str) -> str:
    """y[tile] = x[tile] for 32 x 64 tiles of a row-major matrix, with every promise a 128-bit
    vector load needs: 16-byte aligned pointers, unit inner stride, row stride and columns
    multiples of 16 bytes."""
    per16 = {"f32": 4, "f16": 8}[dtype]
    ptr = f"tile<ptr<{dtype}>>"
    view = f"tensor_view<?x?x{dtype}, strides=[?,1]>"
    src = f"partition_view<tile=(32x64), padding_value = zero, {view}>"
    dst = f"partition_view<tile=(32x64), {view}>"
    tile = f"tile<32x64x{dtype}>"
    return f"""cuda_tile.module @copy {{
  entry @copy_{dtype}(%x: {ptr}, %y: {ptr}, %rows: tile<i32>, %cols: tile<i32>, %rs: tile<i32>) {{
    %tok = make_token : token
    %xp = assume div_by<16>, %x : {ptr}
    %yp = assume div_by<16>, %y : {ptr}
    %m = assume bounded<0, ?>, %rows : tile<i32>
    %n0 = assume bounded<0, ?>, %cols : tile<i32>
    %n = assume div_by<{per16}>, %n0 : tile<i32>
    %s0 = assume bounded<0, ?>, %rs : tile<i32>
    %s = assume div_by<{per16}>, %s0 : tile<i32>
    %vx = make_tensor_view %xp, shape = [%m, %n], strides = [%s, 1] : tile<i32> -> {view}
    %vy = make_tensor_view %yp, shape = [%m, %n], strides = [%s, 1] : tile<i32> -> {view}
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %px = make_partition_view %vx : {src}
    %py = make_partition_view %vy : {dst}
    %t, %tk = load_view_tko weak %px[%bx, %by] token = %tok : {src}, tile<i32> -> {tile}, token
    %d = store_view_tko weak %t, %py[%bx, %by] token = %tok : {tile}, {dst}, tile<i32> -> token
    return
  }}
}}
"""


@cache
def _compiled(source: str, arch: str) -> tuple[Compiled, SassCounts]:
    """A kernel (a path or IR text) compiled for `arch`, with its SASS counts (memoized per test session)."""
    k = lower_compile(load_module(source), None, arch)
    return k, sass_counts(k.cubin)


def _describe(c: SassCounts) -> str:
    return f"classes {dict(c.classes)}; global loads by bits {dict(c.global_loads)}; {c.total} instructions"


@pytest.mark.parametrize("arch", ARCHES)
def test_f16_matmul_uses_tensor_cores(arch: str) -> None:
    assert "xf16" in MATMUL.read_text(), "the matmul example is meant to be f16: keep this test's premise true"
    _, c = _compiled(str(MATMUL), arch)
    assert c.has(TENSOR_CORE[arch]), f"no {TENSOR_CORE[arch]} instruction on {arch}: {_describe(c)}"


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("arch", ARCHES)
def test_contiguous_view_loads_are_128_bit(dtype: str, arch: str) -> None:
    """Every global load is 128 bits wide, or the tile comes by TMA (which the lowering may
    choose on sm_90+, through a tensor descriptor): never 8/16/32/64-bit loads."""
    k, c = _compiled(_copy_kernel(dtype), arch)
    by_tma = c.classes["tma"] > 0 and "make_tensor_descriptor" in k.source.text
    assert set(c.global_loads) <= {128} and (c.global_loads or by_tma), (
        f"{dtype} tile loads through an aligned unit-stride view should be LDG.E.128 (or TMA): {_describe(c)}"
    )


def _tma_candidates() -> list[str]:
    kernels = [_copy_kernel("f32"), _copy_kernel("f16"), str(TMA_MATMUL), *(str(p) for p in example_files())]
    return kernels + [str(p) for p in sample_files()]


def test_tma_where_descriptors_are_used() -> None:
    using = []
    for source in _tma_candidates():
        try:
            k, c = _compiled(source, "sm_90")
        except LowerError:  # kernels that do not compile yet are test_acceptance's business
            continue
        if "make_tensor_descriptor" in k.source.text:
            using.append(k.name)
            assert c.classes["tma"] > 0, (
                f"{k.name}: tensor descriptors in the source but no TMA in the SASS: {_describe(c)}"
            )
    assert "matmul_f16_t128" in using, using  # (TMA_MATMUL's kernel)


def _spill_params() -> list:
    files = list(example_files())
    if SAMPLES_DIR.is_dir():
        files += sample_files()
    params = [pytest.param(str(p), arch, id=f"{p.parent.name}/{p.stem}-{arch}") for p in files for arch in ARCHES]
    if not SAMPLES_DIR.is_dir():
        params.append(pytest.param(None, None, id="shared-absent", marks=pytest.mark.skip(reason=SHARED_MISSING)))
    return params


def _cuobjdump_resources(cubin: bytes) -> list[Resources]:
    """`cuobjdump -res-usage`'s figures of each function of a cubin: what `resources` reads
    from the cubin itself must be these."""
    from compiler.lower.build import _run_tool

    text = _run_tool("cuobjdump", ["-res-usage"], cubin)
    found = []
    for name, line in re.findall(r"^\s*Function\s+(\S+?):?\s*\n(.*REG:.*)$", text, re.M):
        values = {key: int(v) for key, v in re.findall(r"([A-Z]+):(\d+)", line)}
        found.append(Resources(name, values["REG"], values["STACK"], values["SHARED"], values["LOCAL"]))
    return found


@pytest.mark.parametrize(("path", "arch"), _spill_params())
def test_no_spills(path: str, arch: str) -> None:
    k, c = _compiled(path, arch)
    (res,) = resources(k.cubin)
    assert [res] == _cuobjdump_resources(k.cubin)
    assert (res.local, res.stack, c.classes["local"]) == (0, 0, 0), (
        f"{k.name} on {arch}: {res.registers} registers, {res.stack} B stack frame, {res.local} B local memory, "
        f"{c.classes['local']} LDL/STL instructions"
    )


def test_spill_figure() -> None:
    """`Compiled.spills`: the stack frame and local memory of a kernel that spills (softmax
    held to 40 registers), as `cuobjdump -res-usage` prints them; a frame that no instruction
    touches is none (Triton 3.9's LLVM can leave an unused byte of local memory, which ptxas
    makes an 8-byte frame)."""
    from compiler.lower import build, sass

    softmax = MATMUL.parent / "softmax.tileir"
    k = lower_compile(load_module(softmax), None, "sm_90", maxnreg=40)
    (res,) = _cuobjdump_resources(k.cubin)
    assert k.registers == res.registers == 40 and sass_counts(k.cubin).classes["local"] > 0
    assert k.spills == res.stack + res.local > 0
    assert resources(k.cubin) == [res]
    plain, _ = _compiled(str(softmax), "sm_90")
    dead = Resources("softmax", plain.registers, 8, 0, 0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sass, "resources", lambda cubin: [dead])
        assert build.resource_usage(plain.cubin) == (plain.registers, 0)  # no LDL/STL in its SASS
        assert build.resource_usage(k.cubin) == (plain.registers, 8)  # LDL/STL: the frame counts


def test_a_local_array_of_libdevice_is_not_a_spill(monkeypatch: pytest.MonkeyPatch) -> None:
    """libdevice's sinf and cosf keep a 28-byte local array for their argument reduction:
    a stack frame, with LDL/STL, that ptxas -v reports as 0 bytes of spill stores. It was
    counted as 32 bytes of spills (a cuTile kernel of tests/runtime/cutile_zoo.py). ptxas
    says so in the log of Triton's own run, kept for it: no second run (seconds for a large
    kernel that spills), and asked before the disassembly (a `cuobjdump` run, 0.37 s)."""
    from compiler.lower import build
    from compiler.lower import sass as sass_module

    again: list[str] = []
    monkeypatch.setattr(build, "_ptxas_spills", lambda ptx, fma: again.append(ptx) and None)
    disassembled: list[bytes] = []
    monkeypatch.setattr(sass_module, "sass_counts", lambda cubin: disassembled.append(cubin) or sass_counts(cubin))
    text = kernel_text([("a", "f32")], [("r", "f32")], ["%r_r = sin %a : tile<32xf32>"], (32,))
    framed = []
    for k in compile_for(text, use_cache=False):
        assert not disassembled, k.source.target.arch
        (res,) = resources(k.cubin)
        if res.stack > 0 and sass_counts(k.cubin).classes["local"] > 0:
            framed.append(k.source.target.arch)
        assert k.spills == 0, k.source.target.arch
    # Triton 3.6's libdevice keeps the array on every target (3.9's keeps it in registers).
    assert framed == list(ARCHES) or triton_version() >= (3, 9), framed
    assert not again


def test_a_kernel_that_spills_with_registers_to_spare_is_compiled_again_with_the_cap() -> None:
    """ptxas, told the block size and no cap, spills some kernels at 32 registers a thread:
    fuzz kernel 8 of `--large --asm` (64x2x128 i64 tiles behind acquire loads and release
    stores; Triton 3.6: 32 registers and 3,032 bytes of spill stores at 4 warps). The
    compile is then made again with the cap of 255 that 128 threads allow and kept, as it
    spills less. Should ptxas stop doing this, the first assertion says so (and the second
    compile can go)."""
    from compiler.cli.compile import _compile_summary
    from compiler.lower import build, lower
    from tests.lower import fuzz

    src = lower(fuzz.kernel(8, large=True, asm=True).text, None, "sm_90")
    first = build._compile(src, build.triton_options(src, {}))
    assert first.spills and first.registers is not None and first.registers < 255, (first.registers, first.spills)
    k = build.compile_source(src, use_cache=False)
    assert k.options.get("maxnreg") == 255
    assert k.registers is not None and k.registers > first.registers
    assert k.spills is not None and k.spills < first.spills, (first.spills, k.spills)
    assert first.options.get("maxnreg") is None
    # `tileir compile`'s summary says why: "registers 255 (cap 255)".
    assert f"registers {k.registers} (cap 255)  spills" in _compile_summary(src, k, "cubin", 1.0)
    assert f"registers {first.registers}  spills" in _compile_summary(src, first, "cubin", 1.0)


def test_sass_counting() -> None:
    """The parser on a hand-written disassembly (the cubin tools' format)."""
    from compiler.lower.sass import count_sass

    text = """
	code for sm_90a
		Function : k
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                   /* 0x00000a00ff017b82 */
        /*0010*/              @!P0 LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ; /* 0x0000000402047981 */
        /*0020*/                   LDG.E.U16 R6, desc[UR4][R2.64] ;         /* 0x0000000402067981 */
        /*0030*/                   STG.E desc[UR4][R2.64], R6 ;             /* 0x0000000602007986 */
        /*0040*/                   HGMMA.64x64x16.F32 R24, gdesc[UR16], R24 ; /* 0x01e00000101879f0 */
        /*0050*/                   UTCHMMA gdesc[UR14], gdesc[UR16], tmem[UR8], tmem[UR18], idesc[UR19], UP0 ;
        /*0060*/                   UTMALDG.2D [UR8], [UR4] ;
        /*0070*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0080*/                   STL [R1], R4 ;
        /*0090*/                   EXIT ;
        /*00a0*/                   BRA 0xa0;
        /*00b0*/                   NOP;
"""
    c = count_sass(text)
    assert c.functions == ["k"]
    assert c.total == 11
    assert c.global_loads == {128: 1, 16: 1} and c.global_stores == {32: 1}
    assert c.classes["tensor_core"] == 2 and c.classes["tma"] == 1 and c.classes["barrier"] == 1
    assert c.classes["local"] == 1 and c.classes["branch"] == 1
    assert c.base("LDG") == 2 and c.has(r"^HGMMA\.")
