"""Random kernels from tests/lower/fuzz.py: chains of ops through views, pointer gathers and
scatters, nested loops and branches (early `continue`, `break`, `return`), each on the CPU
interpreter and under Triton's interpreter (or, with TILEIR_GPU_BACKENDS, on the GPU backends),
compared bitwise; a few also compiled for every target. A longer campaign:
`python -m tests.lower.fuzz --seeds 0:2000 [--compile sm_90]`."""

from __future__ import annotations

import pytest

from .fuzz import arguments, kernel
from .harness import compile_for, run_both

# NumPy's warnings inside Triton's interpreter, for the NaNs and infinities the kernels make
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.mark.parametrize("seed", range(60))
def test_random_kernel(seed: int) -> None:
    case = kernel(seed)
    run_both(case.text, "k", case.blocks, arguments(case))


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
             "ftof", "iota", "fma", "remf", "divi", "remi", "shli", "shri"}  # fmt: skip
    assert kinds <= drawn, kinds - drawn


def test_the_same_seed_gives_the_same_kernel() -> None:
    assert kernel(7).text == kernel(7).text
    assert kernel(7).text != kernel(8).text
