"""Test-wide configuration: markers, the hypothesis profiles, skipping GPU tests cleanly."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is in the `test` extra; only the fuzz tests need it
    settings = None  # type: ignore[assignment]

if settings is not None:
    # CI: no deadline (a 2-core machine is slow and noisy), a bounded number of examples,
    # derandomized so that a run is reproducible, no example database on disk.
    settings.register_profile(
        "ci",
        deadline=None,
        max_examples=60,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.register_profile(
        "dev",
        deadline=None,
        max_examples=100,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.register_profile("thorough", deadline=None, max_examples=2000)
    default = "ci" if os.environ.get("CI") else "dev"
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", default))


# The `tileir compile` processes the tests start compile in themselves, not on a compile server
# the developer may have running (compiler/cli/server.py); tests/lower/test_server.py starts
# its own.
os.environ["TILEIR_SERVER"] = "off"

# `compiler.cli.main` turns Python's garbage collector off for the commands whose process ends
# right after (ACYCLIC_COMMANDS; `compile` of one kernel), and tests call it in this process: from the
# first such test on, a run goes without it. Turned on again after each test (tried on
# 2026-12-02), CI failed with "SystemError: AST constructor recursion depth mismatch" in
# pytest's own report of a test. As far as we can tell: CPython 3.11's AST constructors count
# their depth in state that threads share (cpython gh-106905), and a collection inside
# `ast.parse` let a compile thread that a test left past its time limit (Triton parses
# sources too) switch in mid-parse.


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU; skipped cleanly without one")
    config.addinivalue_line("markers", "slow: long-running test (deselect with -m 'not slow')")


def _has_gpu() -> bool:
    if os.environ.get("TILEIR_NO_GPU"):
        return False
    return Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_gpu():
        return
    skip_gpu = pytest.mark.skip(reason="no NVIDIA GPU on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
