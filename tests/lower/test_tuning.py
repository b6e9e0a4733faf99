"""What the lowering chooses for speed without changing a result: the compile options of its
default heuristic (compiler.lower.codegen.mma_plan) and the GPU-only fast paths of a few
helpers (native max.f32 / ex2.approx.ftz.f32 on the GPU, spelled out under Triton's
interpreter). The results themselves are the per-op suite's business (test_float, test_math,
test_reduce: under Triton's interpreter here, on both branches on a GPU)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest

from compiler import cli
from compiler.lower import LowerError
from compiler.lower import compile as lower_compile
from compiler.lower.codegen import Target, launch_options, lower_entry
from compiler.runtime import load_module
from tests.corpus import matmul_cluster_text

from .harness import compile_for, kernel_text, run_both

KERNELS = Path(__file__).resolve().parents[2] / "benchmarks" / "kernels"


def _options(name: str) -> dict:
    (entry,) = load_module(KERNELS / f"gpu_{name}.tileir").entries()
    return launch_options(entry, Target.parse("sm_90"))


@pytest.mark.parametrize(
    ("name", "warps", "stages"),
    [
        ("matmul_f16", 8, 3),  # 128x256x64 f16 tiles: 48 KiB of loads per iteration
        ("matmul_f16_t128", 8, 4),  # 128x128x64: 32 KiB
        ("matmul_skinny_bf16", 4, 3),  # 64x64x128: 32 KiB, a 64x64 product: unrolled twice, 3 stages
        ("attention", 4, None),  # Q K^T feeds P V in the same loop: Triton's 3 stages
    ],
)
def test_matmul_loops_choose_warps_and_stages(name: str, warps: int, stages: int | None) -> None:
    want = {"num_warps": warps} if stages is None else {"num_warps": warps, "num_stages": stages}
    assert _options(name) == want


def test_one_large_product_outside_the_loop_makes_the_kernel_a_large_product_one() -> None:
    """The small-product defaults (4 warps, up to 6 stages) need every product small, those
    after the loop too: a 128x128 product there gets 8 warps and at most 4 stages."""
    text = (KERNELS / "gpu_matmul_skinny_bf16.tileir").read_text()
    ftof = "%27 = ftof %for  : tile<64x64xf32> -> tile<64x64xbf16>\n"
    assert ftof in text
    large = (
        "    %la = constant <bf16: 1.000000e+00> : tile<128x64xbf16>\n"
        "    %lb = constant <bf16: 1.000000e+00> : tile<64x128xbf16>\n"
        "    %lc = constant <f32: 0.000000e+00> : tile<128x128xf32>\n"
        "    %ld = mmaf %la, %lb, %lc : tile<128x64xbf16>, tile<64x128xbf16>, tile<128x128xf32>\n"
    )
    (entry,) = load_module(text.replace(ftof, ftof + large)).entries()
    options = launch_options(entry, Target.parse("sm_90"))
    assert options["num_warps"] == 8 and 2 <= options["num_stages"] <= 4


def _loop_line(text: str) -> str:
    (line,) = [ln for ln in text.splitlines() if ln.lstrip().startswith("for ")]
    return line


def test_a_small_product_loop_is_unrolled_where_shared_memory_holds_it() -> None:
    """The 64x8192x8192 kernel's loop is unrolled twice with 3 stages on sm_90 (192 KiB of
    stages: 6 copies of 32 KiB); not on sm_80 (163 KiB a block), nor where the caller forces
    other stages (twice the loads at 5 stages would not fit)."""
    module = load_module(KERNELS / "gpu_matmul_skinny_f16.tileir")
    (entry,) = module.entries()
    unrolled = lower_entry(module, entry, "sm_90")
    assert "in tl.range(" in _loop_line(unrolled.text) and "loop_unroll_factor=2" in _loop_line(unrolled.text)
    assert unrolled.options == {"num_warps": 4, "num_stages": 3}
    for arch, forced in (("sm_80", None), ("sm_90", {"num_stages": 5})):
        plain = lower_entry(module, entry, arch, forced=forced)
        assert " in range(" in _loop_line(plain.text), (arch, forced)
    assert lower_entry(module, entry, "sm_80").options == {"num_warps": 4, "num_stages": 3}  # 99 KiB of stages
    # The same stages forced as planned keep the unrolled loop.
    assert "loop_unroll_factor=2" in lower_entry(module, entry, "sm_90", forced={"num_stages": 3}).text


def test_a_small_product_loop_in_a_cluster_or_with_small_tiles_is_not_unrolled() -> None:
    """The skinny kernel with `num_cta_in_cga = 2` is not unrolled (Triton 3.6's CTA planning
    asserts on the unrolled loop of a cluster, seen on an H100); nor is examples/matmul, whose
    1.5 KiB an iteration already fill 6 plain stages (unrolling only compiled longer)."""
    text = (KERNELS / "gpu_matmul_skinny_f16.tileir").read_text()
    hint = "optimization_hints=<default = {}>"
    assert hint in text
    cluster = text.replace(hint, "optimization_hints=<sm_90 = {num_cta_in_cga = 2}>")
    matmul = (KERNELS.parents[1] / "examples" / "matmul.tileir").read_text()
    for case, unrolled, stages in ((text, True, 3), (cluster, False, 5), (matmul, False, 6)):
        module = load_module(case)
        (entry,) = module.entries()
        src = lower_entry(module, entry, "sm_90")
        assert ("loop_unroll_factor=2" in _loop_line(src.text)) is unrolled
        assert src.options["num_stages"] == stages


def test_stage_budgets_follow_the_targets_shared_memory() -> None:
    (entry,) = load_module(KERNELS / "gpu_matmul_f16.tileir").entries()  # 48 KiB of loads per iteration
    stages = {arch: launch_options(entry, Target.parse(arch))["num_stages"] for arch in ("sm_80", "sm_86", "sm_90")}
    assert stages == {"sm_80": 2, "sm_86": 2, "sm_90": 3}


def test_the_unrolled_kernel_fits_shared_memory_without_spills() -> None:
    (k,) = compile_for((KERNELS / "gpu_matmul_skinny_f16.tileir").read_text(), arches=("sm_90",))
    assert 6 * 32 * 1024 <= k.shared <= 227 * 1024 and k.spills == 0


def test_operands_of_a_small_product_load_through_pointers() -> None:
    """A 64x64 product streams its operands (TMA measured slower there); the output store
    and the operands of a 128x128 product keep their tensor descriptors."""
    for name, descriptors in (("matmul_skinny_f16", 1), ("matmul_f16_t128", 3)):
        module = load_module(KERNELS / f"gpu_{name}.tileir")
        (entry,) = module.entries()
        text = lower_entry(module, entry, "sm_90").text
        assert text.count("tl.make_tensor_descriptor(") == descriptors, name
        if descriptors == 1:
            (line,) = [ln for ln in text.splitlines() if "tl.make_tensor_descriptor(" in ln]
            assert "block_shape=[64, 64]" in line  # the 64x64 result tile's store


def test_kernels_without_a_product_keep_triton_defaults() -> None:
    for name in ("softmax", "layer_norm", "vector_add"):
        assert _options(name) == {}, name


def test_hints_override_the_heuristic() -> None:
    text = (KERNELS / "gpu_attention.tileir").read_text()
    hint = "optimization_hints=<default = {}>"
    assert hint in text
    text = text.replace(hint, "optimization_hints=<sm_90 = {num_worker_warps_per_cta = 8}>")
    (entry,) = load_module(text).entries()
    assert launch_options(entry, Target.parse("sm_90")) == {"num_warps": 8}


FAST = kernel_text(
    [("a", "f32"), ("b", "f32")],
    [("m", "f32"), ("n", "f32"), ("e", "f32")],
    [
        "%m_r = maxf %a, %b : tile<128xf32>",
        "%n_r = minf %a, %b propagate_nan : tile<128xf32>",
        "%e_r = exp2 %a flush_to_zero : tile<128xf32>",
    ],
    (128,),
)


def test_gpu_only_fast_paths_compile_to_the_native_instructions() -> None:
    module = load_module(FAST)
    (entry,) = module.entries()
    src = lower_entry(module, entry, "sm_90")
    assert "INTERPRETED = tl.constexpr(" in src.text
    # Triton's interpreter runs the spelled-out branch: the kernel is not refused there.
    assert src.not_interpretable() == []
    (k,) = compile_for(FAST, arches=("sm_90",))
    ptx = k.asm["ptx"]
    assert "max.f32" in ptx and "min.NaN.f32" in ptx and "ex2.approx.ftz.f32" in ptx
    # The spelled-out branch is not compiled: it is comparisons and selects (setp/selp), of
    # which this kernel (unmasked loads and stores) has no other use.
    assert "setp" not in ptx and "selp" not in ptx


BF16 = kernel_text(
    [("a", "bf16"), ("b", "bf16"), ("c", "f16"), ("d", "f16")],
    [(r, "bf16") for r in "stpfmnr"] + [(r, "f16") for r in "hlg"],
    [
        "%s_r = addf %a, %b : tile<256xbf16>",
        "%t_r = subf %a, %b : tile<256xbf16>",
        "%p_r = mulf %a, %b : tile<256xbf16>",
        "%f_r = fma %a, %b, %a : tile<256xbf16>",
        "%m_r = maxf %a, %b : tile<256xbf16>",
        "%n_r = minf %a, %b propagate_nan : tile<256xbf16>",
        "%h_r = maxf %c, %d propagate_nan : tile<256xf16>",
        "%l_r = minf %c, %d : tile<256xf16>",
        "%g_r = fma %c, %d, %c : tile<256xf16>",
        # (a reduction's combiner takes one element at a time)
        "%r_r = reduce %a dim=0 identities=[0xFF80 : bf16] : tile<256xbf16> -> tile<bf16>",
        "  (%x: tile<bf16>, %y: tile<bf16>) {",
        "    %z = maxf %x, %y : tile<bf16>",
        "    yield %z : tile<bf16>",
        "  }",
    ],
    (256,),
    out_shapes={"r": ()},
)


def test_16_bit_float_arithmetic_is_the_gpus_own() -> None:
    """bf16 `+ - *` on the GPU: add/sub/mul.rn.bf16 from sm_90, fma.rn.bf16 on sm_80 (Triton's
    own operations), bf16 and f16 fma fma.rn, and bf16 / f16 maxf and minf PTX's max/min (HMNMX2, with .NaN for
    propagate_nan; tileiras' instruction too), two values an instruction, no f32 detour; the
    spelled-out formulations run under Triton's interpreter (test_float checks their results
    there, and on a GPU both)."""
    for k in compile_for(BF16, arches=("sm_80", "sm_90", "sm_100")):
        ptx, sass = k.asm["ptx"], k.sass()
        if k.target.cc >= 90:
            assert all(f"{op}.rn.bf16" in ptx for op in ("add", "sub", "mul")), k.target.arch
        assert "fma.rn.bf16" in ptx and "fma.rn.f16" in ptx  # (sm_80's bf16 + - * too)
        assert re.search(r"\bH(ADD|FMA)2(\.MMA)?\.BF16", sass), k.target.arch
        assert all(f in ptx for f in ("max.bf16 ", "min.NaN.bf16 ", "max.NaN.f16", "min.f16")), k.target.arch
        assert "HMNMX2.BF16_V2.NAN" in sass and re.search(r"HMNMX2\.NAN|HMNMX2 ", sass), k.target.arch
        assert not re.search(r"\bFADD\b|\bFMUL\b|F2FP|FMNMX|FSETP|\bD(FMA|ADD|MUL)\b", sass), k.target.arch  # no detour


def _scan(out: str, x: str, elem: str, dim: int, shape: tuple[int, ...], op: str) -> list[str]:
    t = f"tile<{'x'.join(map(str, shape))}x{elem}>"
    return [
        f"%{out}_r = scan %{x} dim={dim} reverse=false identities=[0 : {elem}] : {t} -> {t}",
        f"  (%e{out}: tile<{elem}>, %a{out}: tile<{elem}>) {{",
        f"    %y{out} = {op} %e{out}, %a{out} : tile<{elem}>",
        f"    yield %y{out} : tile<{elem}>",
        "  }",
    ]


# Two scans in clusters of 2, each of which one Triton cannot compile in a cluster: a 16x64
# i32 scan along dimension 1 (Triton 3.6 asserts 'numScanBlocks * ... == srcValues.size()'),
# a 2x16 i16 scan along dimension 0 (3.9: "TODO: unsupported scan layout"). Both compile
# without clusters.
SCANS_IN_A_CLUSTER = kernel_text(
    [("a", "i32"), ("b", "i16")],
    [("s", "i32"), ("u", "i16")],
    _scan("s", "a", "i32", 1, (16, 64), "addi") + _scan("u", "b", "i16", 0, (2, 16), "ori"),
    (16, 64),
    blocks=2,
    in_shapes={"b": (2, 16)},
    out_shapes={"u": (2, 16)},
).replace(") {\n", ") optimization_hints=<sm_90 = {num_cta_in_cga = 2}, sm_100 = {num_cta_in_cga = 2}> {\n", 1)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
def test_clusters_triton_cannot_compile_are_dropped_with_a_warning(
    arch: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`num_cta_in_cga` is a hint (tile blocks are independent): where Triton cannot compile
    the kernel in clusters, it is compiled without, and the compile says so, naming the
    entry's line, the hint and Triton's failure; a cache hit says it again. Triton's report
    of that failure is not kept (no message names it; each such compile left one, ~27 KB, in
    the temporary directory). Clusters the caller forces are not dropped: that failure is
    reported, with the report kept in the file the message names."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    k = lower_compile(SCANS_IN_A_CLUSTER, "k", arch, isolate=True)
    assert k.num_ctas == 1 and not k.cached
    (note,) = k.notes
    assert note.startswith(f"<input>:2:3: warning: the hint num_cta_in_cga = 2 for {arch} is not applied: Triton ")
    assert "could not compile @k in clusters of 2 (RuntimeError: PassManager::run failed; in " in note
    assert note.endswith("); compiled without clusters, which computes the same")
    assert list(tmp_path.iterdir()) == []
    again = lower_compile(SCANS_IN_A_CLUSTER, "k", arch)
    assert again.cached and again.notes == k.notes and again.num_ctas == 1
    with pytest.raises(LowerError, match="Triton could not compile the lowered kernel") as failed:
        lower_compile(SCANS_IN_A_CLUSTER, "k", arch, num_ctas=2, use_cache=False)
    (report,) = tmp_path.iterdir()
    assert failed.value.kept == str(report) and f"with Triton's report, {report}" in failed.value.message


def test_clusters_triton_compiles_are_kept() -> None:
    """examples/matmul in clusters of 2 on sm_90: Triton compiles it so, without a note."""
    k = lower_compile(matmul_cluster_text(), "matmul", "sm_90")
    assert k.num_ctas == 2 and k.notes == []


def test_a_dropped_cluster_is_a_warning_of_tileir_compile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scans.tileir"
    path.write_text(SCANS_IN_A_CLUSTER)
    assert cli.main(["compile", str(path), "--arch", "sm_90", "--emit", "ptx", "-o", str(tmp_path / "k.ptx")]) == 0
    err = capsys.readouterr().err
    assert f"{path}:2:3: warning: the hint num_cta_in_cga = 2 for sm_90 is not applied" in err
    assert (tmp_path / "k.ptx").read_text().startswith("//")


def test_scans_in_a_cluster_compute_what_the_interpreter_does() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(-1000, 1000, 32 * 64).astype(np.int32)
    b = rng.integers(-(2**15), 2**15, 4 * 16).astype(np.int16)
    run_both(SCANS_IN_A_CLUSTER, "k", 2, [a, b, np.zeros_like(a), np.zeros_like(b)])


@pytest.mark.parametrize(
    ("name", "arch", "warps"),
    [("matmul", "sm_90", 4), ("matmul", "sm_100", 4), ("matmul", "sm_80", 1), ("vector_add", "sm_90", 1)],
)
def test_one_worker_warp_is_a_warpgroup_for_products_on_sm_90_and_newer(name: str, arch: str, warps: int) -> None:
    """`num_worker_warps_per_cta = 1` as tileiras 13.5 takes it: its cubin of a kernel with a
    product declares 128 threads on sm_90 and sm_100 (wgmma and tcgen05 need a warpgroup),
    32 on sm_80 and for a kernel without a product."""
    text = (KERNELS.parents[1] / "examples" / f"{name}.tileir").read_text()
    hint = f" optimization_hints=<{arch} = {{num_worker_warps_per_cta = 1}}> {{"
    text, n = re.subn(r"(entry @\w+\([^)]*\))(?: optimization_hints=<[^>]*>)? \{", lambda m: m[1] + hint, text)
    assert n == 1
    module = load_module(text)
    (entry,) = module.entries()
    assert launch_options(entry, Target.parse(arch))["num_warps"] == warps


@pytest.mark.parametrize(
    ("arch", "hinted", "raised"), [("sm_80", 1, 4), ("sm_80", 2, 4), ("sm_90", 1, 4), ("sm_80", 4, 4)]
)
def test_too_few_warps_for_a_products_result_are_raised_with_a_note(arch: str, hinted: int, raised: int) -> None:
    """A 128x128 f32 product needs 512 registers a thread at 1 warp, 256 at 2 (255 at most):
    a hint of fewer warps than hold it is raised, with a note naming the entry's line, the
    hint and why (at 1 warp Triton took 13 s for sm_80, a fuzz kernel with two such products
    over 200 s). sm_90 raises 1 to a warpgroup anyway, silently, as tileiras does; 4 warps
    are kept without a note."""
    text = (KERNELS / "gpu_matmul_f16_t128.tileir").read_text()
    hint = f" optimization_hints=<{arch} = {{num_worker_warps_per_cta = {hinted}}}> {{"
    text, n = re.subn(r"(entry @\w+\([^)]*\))(?: optimization_hints=<[^>]*>)? \{", lambda m: m[1] + hint, text)
    assert n == 1
    k = lower_compile(text, None, arch, use_cache=False)
    assert k.num_warps == raised
    if hinted >= raised or arch != "sm_80":
        assert k.notes == []
        return
    (note,) = k.notes
    assert re.fullmatch(
        rf"<input>:\d+:\d+: warning: the hint num_worker_warps_per_cta = {hinted} for sm_80 is raised to 4: at "
        rf"{hinted} warps? its 128x128 product needs {16384 // (32 * hinted)} registers a thread \(255 at most\), "
        r"which Triton spills and compiles very slowly; 4 warps compute the same",
        note,
    ), note


def test_the_note_names_the_hint_as_written() -> None:
    """On sm_90 a hint of 1 warp is a warpgroup first (silently, as tileiras does); a 256x128
    f32 result needs 256 registers a thread at 4 warps, so 8: the note names the hint of 1."""
    text = """cuda_tile.module @m {
  entry @k() optimization_hints=<sm_90 = {num_worker_warps_per_cta = 1}> {
    %a = constant <f16: 1.0> : tile<256x16xf16>
    %b = constant <f16: 1.0> : tile<16x128xf16>
    %c = constant <f32: 0.0> : tile<256x128xf32>
    %d = mmaf %a, %b, %c : tile<256x16xf16>, tile<16x128xf16>, tile<256x128xf32>
    return
  }
}
"""
    module = load_module(text)
    (entry,) = module.entries()
    source = lower_entry(module, entry, "sm_90")
    assert source.options["num_warps"] == 8
    (note,) = source.notes
    assert note.startswith("<input>:2:3: warning: the hint num_worker_warps_per_cta = 1 for sm_90 is raised to 8: ")
    assert "at 4 warps its 256x128 product needs 256 registers a thread (255 at most)" in note


def test_products_results_are_counted_together() -> None:
    """Fuzz seed 234154 (hints, products weighted): 1 warp for sm_80 and seven products, three
    of 64x64, none past 255 registers alone but 488 together: Triton took 22 s and spilled
    2.7 KB at 1 warp, 5 s (536 B spilled) at 2, 2 s without spills at 4. They are counted
    together: 2 warps."""
    from tests.lower.fuzz import kernel

    module = load_module(kernel(234154, weights={"mma": 10, "mma_scaled": 4}, hints=True).text)
    (entry,) = module.entries()
    source = lower_entry(module, entry, "sm_80")
    assert source.options["num_warps"] == 2
    (note,) = source.notes
    assert "the hint num_worker_warps_per_cta = 1 for sm_80 is raised to 2: at 1 warp its 7 products' results " in note
    assert "(the largest 64x64) need " in note


def test_raised_warps_are_a_warning_of_tileir_compile_triton_source_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lowering decides the warps, so the note comes with the Triton source alone too."""
    text = (KERNELS / "gpu_matmul_f16_t128.tileir").read_text()
    hint = " optimization_hints=<sm_80 = {num_worker_warps_per_cta = 1}> {"
    path = tmp_path / "t128.tileir"
    path.write_text(re.sub(r"(entry @\w+\([^)]*\))(?: optimization_hints=<[^>]*>)? \{", lambda m: m[1] + hint, text))
    out = tmp_path / "t128.py"
    assert cli.main(["compile", str(path), "--arch", "sm_80", "--emit", "triton", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{path}:" in err and "warning: the hint num_worker_warps_per_cta = 1 for sm_80 is raised to 4" in err


def test_a_compile_past_the_limit_names_a_product_too_large_for_its_warps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 128x128 f32 product at 1 warp (512 registers a thread; Triton takes 12 s for sm_80
    and far longer with two such products): the time-limit diagnostic says so and what to do;
    at 4 warps (128 a thread) it names no product."""
    from compiler.lower.build import _crowded_warps

    monkeypatch.setenv("TILEIR_COMPILE_TIMEOUT", "1")
    text = (KERNELS / "gpu_matmul_f16_t128.tileir").read_text()
    with pytest.raises(LowerError) as e:
        lower_compile(text, None, "sm_80", use_cache=False, isolate=True, num_warps=1)
    said = str(e.value)
    assert "within the limit of 1 s ($TILEIR_COMPILE_TIMEOUT: seconds, 0 for none); at 1 warp its 128x128 " in said
    assert "product needs 512 registers a thread (255 at most)" in said and "--num-warps" in said
    module = load_module(text)
    (entry,) = module.entries()
    assert _crowded_warps(lower_entry(module, entry, "sm_80"), {"num_warps": 4}) == ""


OCCUPANCY = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>) optimization_hints=<sm_90 = {HINTS}> {
    %a = constant <f16: 1.000000e+00> : tile<64x64xf16>
    %b = constant <f16: 1.000000e+00> : tile<64x256xf16>
    %c = constant <f32: 0.000000e+00> : tile<64x256xf32>
    %d = mmaf %a, %b, %c : tile<64x64xf16>, tile<64x256xf16>, tile<64x256xf32>
    %v = make_tensor_view %p, shape = [64, 256], strides = [256, 1] : tensor_view<64x256xf32, strides=[256,1]>
    %pv = make_partition_view %v : partition_view<tile=(64x256), tensor_view<64x256xf32, strides=[256,1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %t = store_view_tko weak %d, %pv[%c0, %c0]
        : tile<64x256xf32>, partition_view<tile=(64x256), tensor_view<64x256xf32, strides=[256,1]>>, tile<i32>,
          tile<i32> -> token
    return
  }
}"""


@pytest.mark.parametrize(
    ("hints", "maxnreg", "taken"),
    [
        ("num_worker_warps_per_cta = 4, occupancy = 2", 255, None),  # 65536 / 256 threads: past 255
        ("num_worker_warps_per_cta = 8, occupancy = 4", 64, None),
        # 8 CTAs of 512 threads do not fit an SM's 2048 threads: 4 do, at 32 registers (fuzz seed
        # 241271 asked for this on sm_100 and was capped at 24, too few for an int8 mma.sync).
        ("num_worker_warps_per_cta = 16, occupancy = 8", 32, 4),
    ],
)
def test_occupancy_is_a_register_cap_that_fits_the_sms_threads(hints: str, maxnreg: int, taken: int | None) -> None:
    module = load_module(OCCUPANCY.replace("HINTS", hints))
    (entry,) = module.entries()
    source = lower_entry(module, entry, "sm_90")
    assert source.options["maxnreg"] == maxnreg
    if taken is None:
        assert source.notes == []
    else:
        (note,) = source.notes
        assert f"warning: the hint occupancy = 8 for sm_90 is taken as {taken}: " in note


def test_a_register_cap_too_low_for_an_instruction_is_dropped_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16 CTAs of 4 warps a 64x256 f32 product's (taken as 8 at the 8 warps the product
    gets): 32 registers a thread, fewer than its wgmma's accumulator needs, which ptxas
    refuses ("Insufficient registers"): compiled without the cap, with a note. A cap the
    caller forces is reported as it fails. Neither leaves the `.ptx` Triton handed ptxas in
    the temporary directory (it did, 22 KB each time, before it went to the scratch
    directory); the forced one leaves only the report its message names."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    text = OCCUPANCY.replace("HINTS", "occupancy = 16")
    (k,) = compile_for(text, arches=("sm_90",), use_cache=False)
    assert "maxnreg" not in k.options and k.registers > 32
    assert any("the hint occupancy for sm_90 is not applied: its register cap of 32" in n for n in k.notes), k.notes
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(LowerError, match=r"ptxas\S* fatal : \(C7602\) Insufficient registers") as failed:
        compile_for(text, arches=("sm_90",), use_cache=False, maxnreg=32)
    assert [str(p) for p in tmp_path.iterdir()] == [failed.value.kept]


def test_descriptors_are_for_a_products_operands_and_results() -> None:
    """The heuristic (ops_view's TMA decision; tileiras decides alike): tensor descriptors carry
    a product's operands in and its result, converted, out; a tile that only passes through
    (the copy of an operand to `d`) loads and stores through pointers: a descriptor made on
    the device, its shared-memory staging and barriers cost a small tile several times the
    instructions of its 128-bit accesses."""
    f16 = "tensor_view<128x128xf16, strides=[128,1]>"
    part = f"partition_view<tile=(128x128), {f16}>"
    text = f"""cuda_tile.module @m {{
  entry @k(%a0: tile<ptr<f16>>, %b0: tile<ptr<f16>>, %c0: tile<ptr<f16>>, %d0: tile<ptr<f16>>) {{
    %tok = make_token : token
    %a = assume div_by<16>, %a0 : tile<ptr<f16>>
    %b = assume div_by<16>, %b0 : tile<ptr<f16>>
    %c = assume div_by<16>, %c0 : tile<ptr<f16>>
    %d = assume div_by<16>, %d0 : tile<ptr<f16>>
    %va = make_tensor_view %a, shape = [128, 128], strides = [128, 1] : {f16}
    %vb = make_tensor_view %b, shape = [128, 128], strides = [128, 1] : {f16}
    %vc = make_tensor_view %c, shape = [128, 128], strides = [128, 1] : {f16}
    %vd = make_tensor_view %d, shape = [128, 128], strides = [128, 1] : {f16}
    %pa = make_partition_view %va : {part}
    %pb = make_partition_view %vb : {part}
    %pc = make_partition_view %vc : {part}
    %pd = make_partition_view %vd : {part}
    %z = constant <i32: 0> : tile<i32>
    %x, %t1 = load_view_tko weak %pa[%z, %z] token = %tok : {part}, tile<i32> -> tile<128x128xf16>, token
    %y, %t2 = load_view_tko weak %pb[%z, %z] token = %tok : {part}, tile<i32> -> tile<128x128xf16>, token
    %acc = constant <f32: 0.0> : tile<128x128xf32>
    %p = mmaf %x, %y, %acc : tile<128x128xf16>, tile<128x128xf16>, tile<128x128xf32>
    %h = ftof %p : tile<128x128xf32> -> tile<128x128xf16>
    %t3 = store_view_tko weak %h, %pc[%z, %z] token = %tok : tile<128x128xf16>, {part}, tile<i32> -> token
    %t4 = store_view_tko weak %x, %pd[%z, %z] token = %tok : tile<128x128xf16>, {part}, tile<i32> -> token
    return
  }}
}}
"""
    module = load_module(text)
    (entry,) = module.entries()
    src = lower_entry(module, entry, "sm_90").text
    made = [ln.split(" = ")[0].strip() for ln in src.splitlines() if "tl.make_tensor_descriptor(" in ln]
    assert len(made) == 3, src  # a, b and c: not d
    assert sum(f"{m}.load(" in src for m in made) == 2 and sum(f"{m}.store(" in src for m in made) == 1
    assert src.count("tl.store(") == 1  # d's, through pointers
