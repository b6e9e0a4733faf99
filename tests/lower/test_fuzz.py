"""Random kernels from tests/lower/fuzz.py: chains of ops through views, pointer gathers and
scatters, nested loops and branches (early `continue`, `break`, `return`), each on the CPU
interpreter and under Triton's interpreter (or, with TILEIR_GPU_BACKENDS, on the GPU backends),
compared bitwise; a few also compiled for every target. A longer campaign:
`python -m tests.lower.fuzz --seeds 0:2000 [--compile sm_90]`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from . import harness
from .fuzz import arguments, check, check_compiles, kernel, main
from .harness import compile_for, run_both

# NumPy's warnings inside Triton's interpreter, for the NaNs and infinities the kernels make
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(autouse=True)
def _our_backends_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a GPU run, the kernels run on our `triton` backend, not on `tileiras`: they hold
    what the spec leaves open (ftoi past the integer range, which tileiras need not saturate as
    the interpreter does) and f4E2M1FN, which tileiras refuses before sm_100."""
    if harness.GPU_PREPARE:
        pytest.skip("these kernels need no tileiras cubins (they run on the triton backend only)")
    monkeypatch.setattr(harness, "GPU_BACKENDS", [b for b in harness.GPU_BACKENDS if b != "tileiras"])


@pytest.mark.parametrize("seed", range(60))
def test_random_kernel(seed: int) -> None:
    check(kernel(seed))


@pytest.mark.parametrize("seed", range(1000, 1006))
def test_random_kernel_compiles_for_every_target(seed: int) -> None:
    compile_for(kernel(seed).text, "k")


def test_the_seeds_draw_every_kind_of_op() -> None:
    """The 60 seeds above exercise every op kind the generator has (so a kind that stopped
    being drawn, or always failed to apply, shows here)."""
    drawn = set()
    for seed in range(60):
        drawn.update(kernel(seed).ops)
    kinds = {"gather", "scatter", "mmai", "mmaf", "reduce", "scan", "for", "loop", "if", "return", "permute",
             "broadcast", "cat", "extract", "reshape", "select", "cmpi", "cmpf", "exti", "trunci", "itof", "ftoi",
             "ftof", "iota", "fma", "remf", "divi", "remi", "shli", "shri", "alloca", "global", "bitcast", "grid",
             "join_tokens", "atomic_red", "pack", "unpack", "tensor_shape", "index_space", "mmaf_scaled",
             "assert"}  # fmt: skip
    assert kinds <= drawn, kinds - drawn


MATH = ("exp", "exp2", "log", "log2", "sin", "cos", "rsqrt")


@pytest.mark.parametrize("seed", range(180000, 180008))
def test_random_kernel_with_math(seed: int) -> None:
    """--weight math=6: math functions among the other ops, their stored results compared
    within test_math's bounds (the rest bitwise)."""
    check(kernel(seed, weights={"math": 6}))


def test_math_results_are_only_stored_or_yielded_and_compared_within_their_bound() -> None:
    """A math result feeds no other op (one ulp would become any difference through, say, a
    conversion to an integer): every use is a store, the reshape before one, or an `if`'s
    yield. And the bound is needed: these f32 results differ from the CPU interpreter's by
    an ulp or more under Triton's interpreter, which the bitwise check of the rest rejects."""
    drawn = set()
    for seed in range(180000, 180040):
        case = kernel(seed, weights={"math": 6})
        lines = case.text.split("\n")
        made = {m[1] for line in lines if (m := re.match(r"\s*(%\w+) = (\w+) ", line)) and m[2] in MATH}
        drawn.update(op for op in case.ops if op in MATH)
        for name in made:
            ops = [re.match(r"\s*(?:%[\w, %]+ = )?(\w+)", line)[1] for line in lines if re.search(name + r"\b", line)]
            assert set(ops[1:]) <= {"yield", "store_view_tko", "reshape"}, (seed, name, ops)  # (the reshape: to store)
    assert drawn == set(MATH)
    case = kernel(180039, weights={"math": 6})
    assert case.inexact
    if harness.TRITON_INTERPRETED:
        with pytest.raises(AssertionError, match=r"ulp bound 0\)"):
            run_both(case.text, "k", case.grid, arguments(case))
    check(case)


@pytest.mark.parametrize("seed", [190000, 190012])
def test_random_kernel_with_hints_compiles(seed: int) -> None:
    """--hints: 190000 asks for 8 warps in clusters of 4 on sm_90 and 2 warps in clusters of 2
    on sm_100, 190012 for 1 warp (sm_90) and 2 (sm_100), both in clusters of 2. Triton 3.9
    compiles them so; 3.6 compiles neither in clusters (lower/build.py then compiles
    without, and says so)."""
    asked = {190000: [(8, 4), (2, 2)], 190012: [(1, 2), (2, 2)]}[seed]
    compiled = compile_for(kernel(seed, hints=True).text, "k", arches=("sm_90", "sm_100"))
    for k, (warps, ctas) in zip(compiled, asked, strict=True):
        assert k.num_warps == warps
        if harness.triton_version() >= (3, 9):
            assert k.num_ctas == ctas and k.notes == []
        else:
            assert k.num_ctas == 1
            (note,) = k.notes
            assert f"warning: the hint num_cta_in_cga = {ctas} for {k.target.arch} is not applied" in note


def test_hints_are_drawn_apart_from_the_kernel() -> None:
    """--hints adds hints to the seed's kernel and changes nothing else."""
    hinted = 0
    for seed in range(40):
        text = kernel(seed, hints=True).text
        plain = re.sub(r" optimization_hints ?= ?<[^>]*>", "", text)
        assert plain == kernel(seed).text
        hinted += text != plain
    assert hinted >= 35


LIBDEVICE = ("tan", "sinh", "cosh", "tanh", "pow", "atan2")
ASM_DRAWS = {  # what else only --asm draws, as it reads in a kernel
    "acquire": r"_tko acquire ",
    "f16 addf": r"addf.*xf16>",
    "bf16 addf": r"addf.*xbf16>",
    "f64 remf": r"remf.*f64>$",
    "f64 rounding": r"(addf|subf|mulf|divf|sqrt|fma) .*rounding<(zero|\w+_inf)>.*f64>$",
    "f64 fma": r"= fma (?![^:]*rounding<(zero|\w+_inf)>)[^:]*: tile<[\dx]*f64>$",  # (fused, nearest)
}


@pytest.mark.parametrize("seed", [220001, 220005, 220052, 221092, 223301, 424314])
def test_random_asm_kernel_compiles(seed: int) -> None:
    """--asm: what Triton's interpreter cannot run (inline PTX, libdevice, prints) among the
    other ops, compiled for every target. 220001 and 220005 load through views without a
    padding value with acquire ordering (whose masked-off lanes once filled with `(0).to(...)`,
    which Triton refused); 220052, 221092 and 223301 were their campaigns' slowest compiles.
    The CPU interpreter runs each (fuzz.check_compiles). None spills: 223301 (three scaled
    products of 2x64 tiles among seven extracts) spilled 232 B for sm_80 and 336 B for sm_90
    and sm_100, and 424314 (an 8x32x8 scaled product, its scales extracted from the operands'
    tile) 264 B for sm_90, until the scales were gathered flattened (ops_shape.unanchored).
    Except 16 B of 221092 on sm_90 and sm_100: its two f32 remf are libdevice's fmodf since
    2026-12-03, and under the `.reqntid 256` Triton writes ptxas keeps the kernel (8 warps,
    two products) at 64 registers and stores two values live across fmodf's loop (taken
    only for quotients past 2^23) to the stack, rather than take more."""
    case = kernel(seed, asm=True)
    for arch in harness.ARCHES:
        allowed = 16 if (seed, arch) in ((221092, "sm_90"), (221092, "sm_100")) else 0
        assert check_compiles(case, arch)[1] <= allowed, arch


def test_asm_draws_what_only_compiles_and_only_with_asm(capsys: pytest.CaptureFixture[str]) -> None:
    """--asm draws the libdevice functions, prints, acquire loads, f16/bf16 atomic adds, f64
    remf and directed roundings, fused f64 fma (another kernel per seed); without it, none of
    these, and Triton's interpreter runs the kernels (so --asm needs a campaign that only
    compiles). Fused f32 fma is drawn either way (its exact path runs in the interpreter)."""

    def drawn(asm: bool) -> set[str]:
        found = set()
        # (f64 fused fma is rare: seeds 109, 151, 230 of the first 240)
        for seed in (*range(40), 109):
            case = kernel(seed, asm=asm)
            found.update(op for op in case.ops if op in (*LIBDEVICE, "print_tko"))
            found.update(k for k, pattern in ASM_DRAWS.items() if re.search(pattern, case.text, re.M))
        return found

    assert drawn(False) == set()
    f32_fma = r"= fma (?![^:]*rounding<(zero|\w+_inf)>)[^:]*: tile<[\dx]*f32>$"
    assert any(re.search(f32_fma, kernel(seed).text, re.M) for seed in range(40))
    assert drawn(True) == {*LIBDEVICE, "print_tko", *ASM_DRAWS}
    with pytest.raises(SystemExit) as exited:
        main(["--seeds", "0:1", "--asm"])
    assert exited.value.code == 2 and "--asm kernels do not run under Triton's interpreter" in capsys.readouterr().err


def test_the_same_seed_gives_the_same_kernel() -> None:
    assert kernel(7).text == kernel(7).text
    assert kernel(7).text != kernel(8).text


def test_weights_aim_a_campaign(capsys: pytest.CaptureFixture[str]) -> None:
    """--weight KIND=W draws a kind of op more (or never, W=0); without weights, the seeds'
    kernels are the default ones."""
    assert kernel(7, weights={}).text == kernel(7).text

    def with_mma(weights):
        return sum(bool({"mmaf", "mmai"} & set(kernel(s, weights=weights).ops)) for s in range(40))

    assert with_mma({"mma": 20}) > 2 * with_mma(None) and with_mma({"mma": 0}) == 0
    for bad, said in (("mma=many", "give KIND=W with a number W"), ("mmax=1", "KIND is one of gather, ")):
        with pytest.raises(SystemExit) as exited:
            main(["--seeds", "0:1", "--weight", bad])
        assert exited.value.code == 2 and f"--weight {bad}: {said}" in capsys.readouterr().err


def test_a_tileiras_campaign_without_tileiras_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import compiler.runtime

    monkeypatch.setattr(compiler.runtime, "find_tileiras", lambda: None)
    assert main(["--seeds", "0:3", "--tileiras", "sm_90", "--keep", "unused"]) == 2
    assert capsys.readouterr().err == (
        "--tileiras needs NVIDIA's tileiras, which was not found (pip install nvidia-cuda-tileiras)\n"
    )


def test_a_tileiras_campaign_counts_known_defects_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 362073 of this --asm campaign stores f4E2M1FN rows 17 apart with release order,
    on which tileiras 13.5 fails for sm_100 (tests/bytecode/test_fuzz_kernels.py,
    f4_release_odd_rows): the campaign names it, keeps no file of it and does not count it
    as a failure."""
    from compiler.runtime import find_tileiras

    if find_tileiras() is None:
        pytest.skip("NVIDIA's tileiras is not installed (pip install nvidia-cuda-tileiras)")
    argv = ["--tileiras", "sm_100", "--asm", "--keep", str(tmp_path)]
    argv += ["--weight", "fpowi=2", "--weight", "insert=2", "--weight", "ftof_mode=2"]
    assert main(["--seeds", "362073:362074", *argv]) == 0
    out = capsys.readouterr().out
    assert "seed 362073: a known defect of tileiras' (sm_100: f4E2M1FN rows that start mid-byte)" in out
    assert "1 seeds, 0 failed, 1 met a known defect of tileiras'" in out
    assert not list(tmp_path.iterdir())


def test_a_tileiras_campaign_takes_a_register_refusal_for_a_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seed 523503 of an sm_100 --asm --hints campaign holds two 128x128 f32 products at one
    warp, which tileiras 13.5 refuses ("RegisterPressure"): a limit, not a failure."""
    from compiler.runtime import find_tileiras

    if find_tileiras() is None:
        pytest.skip("NVIDIA's tileiras is not installed (pip install nvidia-cuda-tileiras)")
    argv = ["--seeds", "523503:523504", "--tileiras", "sm_100", "--asm", "--hints", "--keep", str(tmp_path)]
    assert main(argv) == 0
    assert "1 seeds, 0 failed (" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_the_scan_defects_of_tileiras_are_known() -> None:
    """A tileiras campaign counts apart the scan defects tests/bytecode/test_fuzz_kernels.py
    pins: a scan's result reshaped, or compared and packed (fuzz seed 523273 met the latter
    through an alloca); a pack of a compare of the unscanned tile is none of them."""
    from tests.bytecode.test_fuzz_kernels import SCAN_COMPARED_PACKED, SCAN_THEN_RESHAPE

    from .fuzz import _scan_reshaped

    assert _scan_reshaped(SCAN_THEN_RESHAPE) and _scan_reshaped(SCAN_COMPARED_PACKED)
    unscanned = SCAN_COMPARED_PACKED.replace("ordered %s, %c", "ordered %v, %c")
    assert unscanned != SCAN_COMPARED_PACKED and not _scan_reshaped(unscanned)
