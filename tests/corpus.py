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

# Signaling NaNs (quiet bit clear, payload non-zero), positive and negative, by their bits: edge
# inputs of the float suites and of tests/lower/fuzz.py (NumPy's fmax took one for a result
# where maxf gives the other operand; fuzz seed 8162 found it through a bitcast).
SIGNALING_NAN = {
    "f16": (0x7D00, 0xFC01),
    "bf16": (0x7FA0, 0xFF81),
    "f32": (0x7FA00000, 0xFF800001),
    "f64": (0x7FF4000000000000, 0xFFF0000000000001),
}

# The grid and arguments of the README's main command, which runs examples/vector_add.tileir.
VADD_RUN_ARGS = ("--grid", "4", "--cutile-args", "--arg", "rand:4000:f32", "--arg", "rand:4000:f32",
                 "--arg", "zeros:4000:f32")  # fmt: skip


def matmul_cluster_text() -> str:
    """examples/matmul.tileir asking for clusters of 2 blocks on sm_90 (num_cta_in_cga = 2): what
    the cluster-launch checks compile (.ci/gpu-prepare fills tileiras' cache with it)."""
    text = (EXAMPLES_DIR / "matmul.tileir").read_text()
    hint = "optimization_hints=<sm_90 = {num_cta_in_cga = 1}>"
    assert hint in text, "examples/matmul.tileir no longer has the hint the cluster checks change"
    return text.replace(hint, hint.replace("= 1", "= 2"))


MATMUL_CLUSTER_NAME = "matmul_cga2.tileir"


def example_files() -> list[Path]:
    return sorted(EXAMPLES_DIR.glob("*.tileir"))


def sample_files() -> list[Path]:
    return sorted(SAMPLES_DIR.glob("*.tileir")) if SAMPLES_DIR.is_dir() else []


def conformance_files() -> list[Path]:
    return sorted(CONFORMANCE_DIR.glob("*.mlir")) if CONFORMANCE_DIR.is_dir() else []


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def run_bounded(work, seconds: float, what: str, where: str):
    """Run `work()` in a thread: its result, or an AssertionError when it raises or is still
    running after `seconds` (the fuzz tests' guard against crashes and hangs)."""
    import threading

    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["result"] = work()
        except BaseException as exc:  # noqa: BLE001 - reported below, with the input
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{what} did not finish within {seconds} s{where}"
    if "error" in outcome:
        exc = outcome["error"]
        raise AssertionError(f"{what} raised {exc!r}{where}") from exc  # type: ignore[misc]
    return outcome["result"]
