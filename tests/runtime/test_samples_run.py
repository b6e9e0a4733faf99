"""Acceptance: real kernels run on the CPU interpreter through cuTile's calling convention and
match NumPy. The shared samples (`../shared/samples`: text, and 13.1 / 13.3 bytecode through
NVIDIA's tileirdisasm) skip when shared/ or the disassembler is absent; every kernel in
`examples/` must have a recipe here (its arguments, grid and NumPy reference)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from compiler.runtime import find_tileirdisasm, launch_cutile
from tests.corpus import SAMPLES_DIR, SHARED_MISSING, example_files


@dataclass(frozen=True)
class Recipe:
    """Inputs, grid and expected output of one kernel. `make(rng)` gives the cuTile
    arguments; `expect(args)` the expected value of `args[out]` from the inputs."""

    make: Callable[[np.random.Generator], list]
    grid: Callable[[list], tuple[int, ...]]
    out: int
    expect: Callable[[list], np.ndarray]
    rtol: float
    atol: float


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _vadd(n: int, tile: int) -> Recipe:
    def make(rng):
        return [
            rng.uniform(-1, 1, n).astype(np.float32),
            rng.uniform(-1, 1, n).astype(np.float32),
            np.zeros(n, np.float32),
        ]

    return Recipe(make, lambda a: (_cdiv(n, tile),), 2, lambda a: a[0] + a[1], 0, 0)


def _softmax_ref(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _softmax(rows: int, cols: int, rows_per_block: int) -> Recipe:
    def make(rng):
        return [rng.uniform(-4, 4, (rows, cols)).astype(np.float32), np.zeros((rows, cols), np.float32)]

    return Recipe(make, lambda a: (_cdiv(rows, rows_per_block),), 1, lambda a: _softmax_ref(a[0]), 1e-5, 1e-7)


def _matmul(m: int, n: int, k: int, tile_m: int, tile_n: int, transposed_a: bool = False) -> Recipe:
    def make(rng):
        a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
        if transposed_a:  # the same values, held as a strided (column-major) view
            a = np.ascontiguousarray(a.T).T
        b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
        return [a, b, np.zeros((m, n), np.float16)]

    def expect(a):
        return (a[0].astype(np.float32) @ a[1].astype(np.float32)).astype(np.float16)

    # f32 accumulation in a different order may move an f16 result by one unit in the last place
    return Recipe(make, lambda a: (_cdiv(m, tile_m), _cdiv(n, tile_n)), 2, expect, 2e-3, 2e-3)


SAMPLE_RECIPES: dict[str, Recipe] = {
    "vadd": _vadd(3000, 1024),  # 3 blocks, the last one partial
    "softmax": _softmax(6, 1000, 1),  # one row per block, 1024-wide tiles padded with -inf
    "matmul": _matmul(256, 256, 128, 128, 128),
}

EXAMPLE_RECIPES: dict[str, list[tuple[str, Recipe]]] = {
    "vector_add": [("n3000", _vadd(3000, 1024))],
    "softmax": [("6x1000", _softmax(6, 1000, 4))],
    "matmul": [
        ("256x256x128", _matmul(256, 256, 128, 64, 64)),
        ("100x72x40-strided-a", _matmul(100, 72, 40, 64, 64, transposed_a=True)),
    ],
}


def _run(path: Path, recipe: Recipe, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    args = recipe.make(rng)
    before = [a.copy() for a in args]
    launch_cutile(path, grid=recipe.grid(args), args=args)
    expected = recipe.expect(before)
    got = args[recipe.out]
    if recipe.rtol == 0 and recipe.atol == 0:
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(np.float64), rtol=recipe.rtol, atol=recipe.atol
        )
    for i, (a, b) in enumerate(zip(args, before, strict=True)):
        if i != recipe.out:
            np.testing.assert_array_equal(a, b, err_msg=f"input {i} changed")


def _sample_params() -> list:
    if not SAMPLES_DIR.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=SHARED_MISSING), id="absent")]
    params = []
    for name in SAMPLE_RECIPES:
        for form in ("tileir", "13.1", "13.3"):
            params.append(pytest.param(name, form, id=f"{name}-{form}"))
    return params


@pytest.mark.parametrize(("name", "form"), _sample_params())
def test_shared_sample_matches_numpy(name: str, form: str) -> None:
    if form == "tileir":
        path = SAMPLES_DIR / f"{name}.tileir"
    else:
        if find_tileirdisasm() is None:
            pytest.skip("reading bytecode needs tileirdisasm (pip install nvidia-cuda-tileiras)")
        path = SAMPLES_DIR / f"{name}_{form}.tileirbc"
    _run(path, SAMPLE_RECIPES[name])


def test_every_example_has_a_recipe() -> None:
    missing = [p.stem for p in example_files() if p.stem not in EXAMPLE_RECIPES]
    assert not missing, f"add a recipe to EXAMPLE_RECIPES for: {', '.join(missing)}"


@pytest.mark.parametrize(
    ("path", "recipe"),
    [
        pytest.param(p, r, id=f"{p.stem}-{label}")
        for p in example_files()
        for label, r in EXAMPLE_RECIPES.get(p.stem, [])
    ],
)
def test_example_matches_numpy(path: Path, recipe: Recipe) -> None:
    _run(path, recipe)
