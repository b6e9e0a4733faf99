"""Where the test inputs are: our examples (always there) and, beside the repository,
`../shared/samples` and NVIDIA's conformance tests (absent in a user's clone: tests skip)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EXAMPLES_DIR = REPO / "examples"
SAMPLES_DIR = SHARED / "samples"
CONFORMANCE_DIR = SHARED / "conformance" / "cuda-tile" / "test" / "Dialect" / "CudaTile"

SHARED_MISSING = f"{SHARED} is absent (a user's clone): shared tests skipped"


def example_files() -> list[Path]:
    return sorted(EXAMPLES_DIR.glob("*.tileir"))


def sample_files() -> list[Path]:
    return sorted(SAMPLES_DIR.glob("*.tileir")) if SAMPLES_DIR.is_dir() else []


def conformance_files() -> list[Path]:
    return sorted(CONFORMANCE_DIR.glob("*.mlir")) if CONFORMANCE_DIR.is_dir() else []


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")
