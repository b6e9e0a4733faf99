"""The lowering's frame: every op has an emitter or a reason, sources are readable and
compile, vector add matches the CPU interpreter under Triton's interpreter."""

from __future__ import annotations

import numpy as np

from compiler.dialect.ops import ALL_OPS
from compiler.lower import registry
from compiler.lower.codegen import lower_entry  # noqa: F401  (imports every emitter)
from tests.corpus import REPO

from .harness import compile_for, run_both, source_of

VECTOR_ADD = REPO / "examples" / "vector_add.tileir"


def test_every_op_has_an_emitter_or_a_reason() -> None:
    from compiler.lower import ops  # noqa: F401

    missing = [op.name if "." in op.name else "cuda_tile." + op.name for op in ALL_OPS]
    missing = [n for n in missing if n not in registry.EMITTERS and n not in registry.UNSUPPORTED]
    assert missing == []
    assert not set(registry.EMITTERS) & set(registry.UNSUPPORTED)


def test_source_names_values_and_lines() -> None:
    text = source_of(VECTOR_ADD.read_text())
    assert "@triton.jit" in text
    assert "sum_ = x + y  # <input>:23" in text


def test_vector_add_matches_cpu() -> None:
    n = 2500
    rng = np.random.default_rng(1)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    cpu, tri = run_both(VECTOR_ADD.read_text(), None, 3, [a, n, 1, b, n, 1, c, n, 1])
    assert np.array_equal(tri[6], a + b)


def test_vector_add_compiles_everywhere() -> None:
    for k in compile_for(VECTOR_ADD.read_text()):
        assert ".entry vector_add" in k.asm["ptx"]
        assert k.spills == 0
        assert len(k.cubin) > 1000


def test_readme_lists_every_op_in_the_lowering_table() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = readme.index("### How each op is lowered")
    table = readme[start : readme.index("\n## ", start)]
    names = [op.name.removeprefix("cuda_tile.") for op in ALL_OPS]
    missing = [n for n in names if f"`{n}`" not in table]
    assert missing == [], f"README's lowering table does not list {missing}"
