"""Real kernels parse cleanly and print -> parse -> print is a fixed point.

`../shared/samples/*.tileir` (as NVIDIA's tileirdisasm prints them) skip when shared/ is
absent; our own `examples/*.tileir` are always there and must also already be canonical.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import SHARED_MISSING, example_files, read, sample_files


def _params(files: list[Path], missing_reason: str | None) -> list:
    if not files and missing_reason:
        return [pytest.param(None, marks=pytest.mark.skip(reason=missing_reason), id="absent")]
    return [pytest.param(f, id=f.name) for f in files]


def _errors(result) -> list[str]:
    return [d.format(with_snippet=True) for d in result.diagnostics if d.is_error]


def _fixed_point(path: Path) -> str:
    from compiler.text import parse, print_module

    first = parse(read(path), str(path))
    assert not _errors(first), "\n".join(_errors(first))
    printed = print_module(first.module)
    second = parse(printed, f"{path.name} (printed)")
    assert not _errors(second), "the printed form does not parse:\n" + "\n".join(_errors(second))
    reprinted = print_module(second.module)
    assert reprinted == printed, "print -> parse -> print is not a fixed point"
    return printed


@pytest.mark.parametrize("path", _params(sample_files(), SHARED_MISSING))
def test_shared_sample_round_trips(path: Path) -> None:
    _fixed_point(path)


def test_examples_exist() -> None:
    names = {p.name for p in example_files()}
    assert {"vector_add.tileir", "matmul.tileir", "softmax.tileir"} <= names


@pytest.mark.parametrize("path", _params(example_files(), None))
def test_example_round_trips(path: Path) -> None:
    _fixed_point(path)


@pytest.mark.parametrize("path", _params(example_files(), None))
def test_example_is_canonical(path: Path) -> None:
    """`tileir fmt --check examples/*.tileir` passes: the examples are written canonically."""
    printed = _fixed_point(path)
    assert printed == read(path), f"run: tileir fmt -i {path.relative_to(path.parents[1])}"


def _verify_diagnostics(path: Path) -> list[str]:
    from compiler.verify import check_text

    _, diagnostics = check_text(read(path), str(path))
    return [d.format(with_snippet=True) for d in diagnostics]


@pytest.mark.parametrize("path", _params(sample_files(), SHARED_MISSING))
def test_shared_sample_verifies_cleanly(path: Path) -> None:
    diagnostics = _verify_diagnostics(path)
    assert not diagnostics, "\n".join(diagnostics)


@pytest.mark.parametrize("path", _params(example_files(), None))
def test_example_verifies_cleanly(path: Path) -> None:
    diagnostics = _verify_diagnostics(path)
    assert not diagnostics, "\n".join(diagnostics)
