"""NVIDIA's cuda-tile tests (../shared/conformance), through lit and directly.

* Every file of test/Dialect/CudaTile and test/Bytecode (with versioning/ and invalid/) passes
  under lit, RUN lines as written, with `cuda-tile-opt` -> `tileir opt --default-names`,
  `cuda-tile-translate` -> `tileir translate` and `FileCheck` -> PyPI filecheck, except
  `harness.KNOWN_LIT_FAILURES` (each with its reason), which must still fail.
* Every `-verify-diagnostics` file gives exactly the diagnostics its `expected-*` comments
  ask for, chunk by chunk (`KNOWN_DIFFERENCES` lists the chunks where we deliberately differ,
  each with the reason; the test fails when such a chunk starts to pass, so the list stays true).
* Every valid file verifies with zero diagnostics.
* Every file parses without a spurious error: for each `// -----` chunk, with unregistered ops
  allowed, any error must sit on a line where the file itself expects one (`expected-error`);
  errors after such an expected one in the same chunk are tolerated (MLIR's parser would have
  stopped there, our error-tolerant one goes on).

Skipped, with the reason, when ../shared/conformance is absent (a user's clone).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.conformance import harness

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SUITE = SHARED / harness.DIALECT_SUBDIR

needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"conformance tests absent: {SUITE} does not exist")

FILES = sorted(SUITE.glob("*.mlir")) if SUITE.is_dir() else []
LIT_FILES = harness.all_files(SHARED)  # Dialect/CudaTile and Bytecode


@pytest.fixture(scope="module")
def lit_results() -> dict[str, harness.FileResult]:
    for module in ("lit", "filecheck"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    return {r.name: r for r in harness.run_lit(LIT_FILES, shared=SHARED)}


@needs_suite
@pytest.mark.parametrize(
    "path",
    [pytest.param(f, id=harness.display_name(f, SHARED)) for f in LIT_FILES] or [pytest.param(None, id="absent")],
)
def test_file_passes_lit(path: Path, lit_results) -> None:
    """Every file passes under lit with its RUN lines as written, except the known ones,
    which must still fail (so that the list stays true)."""
    name = harness.display_name(path, SHARED)
    result = lit_results[name]
    known = harness.known_failure(path, SHARED)
    if known is not None:
        assert not result.passed, f"{name} passes now: remove it from harness.KNOWN_LIT_FAILURES"
        return
    assert result.passed, f"{name}: {result.code} ({result.reason()})\n" + result.output[-6000:]


@needs_suite
def test_bytecode_tests_are_found() -> None:
    """The Bytecode folder's tests, its versioning/ and invalid/ subfolders included, are run."""
    names = {harness.display_name(f, SHARED) for f in harness.bytecode_files(SHARED)}
    on_disk = {
        p.relative_to(SHARED / harness.TEST_SUBDIR).as_posix()
        for p in (SHARED / harness.BYTECODE_SUBDIR).rglob("*.mlir")
        if "Inputs" not in p.parts
    }
    assert names == on_disk
    assert {"Bytecode/list_versions.mlir", "Bytecode/invalid/invalid_structure.mlir"} <= names
    assert any(n.startswith("Bytecode/versioning/") for n in names)


def test_expected_error_extraction() -> None:
    from compiler.verify.expected import expected_diagnostics

    text = "\n".join(
        [
            "op1",  # 0
            "// expected-error @below {{first}}",  # 1 -> 3 (skips the designator line 2)
            "// expected-note @below {{note}}",  # 2 -> 3
            "op2",  # 3
            "// expected-error @above {{second}}",  # 4 -> 3
            "// expected-error@+2 {{third}}",  # 5 -> 7
            "op3 // expected-error {{fourth}}",  # 6 -> 6
            "op4",  # 7
            "// expected-error@-3 {{fifth}}",  # 8 -> 5
        ]
    )
    got = {(e.kind, e.line, e.message) for e in expected_diagnostics(text)}
    assert got == {
        ("error", 3, "first"),
        ("note", 3, "note"),
        ("error", 3, "second"),
        ("error", 7, "third"),
        ("error", 6, "fourth"),
        ("error", 5, "fifth"),
    }
    assert harness.expected_error_lines(text) == {3, 5, 6, 7}


@needs_suite
@pytest.mark.parametrize("path", [pytest.param(f, id=f.name) for f in FILES] or [pytest.param(None, id="absent")])
def test_parses_without_spurious_errors(path: Path) -> None:
    from compiler.text import ParseOptions, parse, split_input

    text = path.read_text(encoding="utf-8")
    allowed = harness.expected_error_lines(text)
    options = ParseOptions(allow_unregistered=True)
    spurious: list[str] = []
    for chunk, line_offset in split_input(text):
        # Pad with the lines before the chunk so that lines are numbered as in the file.
        result = parse("\n" * line_offset + chunk, str(path), options)
        errors = sorted((d for d in result.diagnostics if d.is_error), key=lambda d: d.span.start)
        # FileCheck files (`not cuda-tile-opt ... | FileCheck`) expect their errors in `CHECK:` lines.
        checked = [line.split("CHECK:", 1)[1].strip() for line in chunk.splitlines() if "// CHECK:" in line]
        for diag in errors:
            if diag.location()[1] - 1 in allowed or any(c and c in diag.message for c in checked):
                # MLIR stops parsing a chunk at its first error; our parser goes on, so errors
                # that follow an expected one in the same chunk may be its consequences.
                break
            spurious.append(diag.format(with_snippet=True))
    assert not spurious, f"{len(spurious)} unexpected error(s):\n" + "\n".join(spurious[:20])


# Chunks (0-based, in `// -----` order) where our diagnostics deliberately differ from
# cuda-tile-opt's, with the reason. Keep it short: each entry is a known gap.
KNOWN_DIFFERENCES: dict[str, dict[int, str]] = {
    "invalid.mlir": {
        225: (
            "ftof f32 -> f64 rounding<negative_inf>: NVIDIA's 13.3 verifier refused every mode but "
            "nearest_even; tileiras 13.5 accepts it (and any mode of an exact conversion); the tools win"
        ),
    },
}

DIAGNOSTIC_FILES = harness.verify_diagnostics_files(SHARED)
VALID_FILES = [
    f
    for f in FILES
    if "expected-" not in f.read_text(encoding="utf-8") and "not cuda-tile-opt" not in f.read_text(encoding="utf-8")
]


@needs_suite
@pytest.mark.parametrize(
    "path", [pytest.param(f, id=f.name) for f in DIAGNOSTIC_FILES] or [pytest.param(None, id="absent")]
)
def test_verify_diagnostics_file(path: Path) -> None:
    known = KNOWN_DIFFERENCES.get(path.name, {})
    failures: list[str] = []
    now_passing: list[int] = []
    for index, report in harness.verify_diagnostics_chunks(path):
        if index in known:
            if report.ok:
                now_passing.append(index)
        elif not report.ok:
            failures += [f"chunk {index}: {d.format()}" for d in report.complaints]
    assert not failures, f"{len(failures)} mismatch(es):\n" + "\n".join(failures[:40])
    assert not now_passing, f"chunks {now_passing} now pass: remove them from KNOWN_DIFFERENCES"


@needs_suite
@pytest.mark.parametrize("path", [pytest.param(f, id=f.name) for f in VALID_FILES] or [pytest.param(None, id="absent")])
def test_valid_file_verifies_cleanly(path: Path) -> None:
    from compiler.text import split_input
    from compiler.verify import check_text

    text = path.read_text(encoding="utf-8")
    found: list[str] = []
    for chunk, line_offset in split_input(text):
        _, diagnostics = check_text("\n" * line_offset + chunk, path.name, allow_unregistered=True)
        found += [d.format() for d in diagnostics]
    assert not found, "\n".join(found[:20])
