"""Smoke test of benchmarks/lsp.py's keystroke timing: a kernel typed between two others, or after
the last one, in a 1,000-line document, with the editor closing brackets and without, is
re-analysed in place at every keystroke (none from scratch). The full benchmark (a real client, 50,000 lines) is not run
here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("lsprotocol", reason="the `test` extra (lsprotocol, pygls) is not installed")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "lsp.py"


def _bench():
    sys.path.insert(0, str(SCRIPT.parent))  # the script imports benchmarks/text.py as `text`
    spec = importlib.util.spec_from_file_location("bench_lsp", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("auto_close", [True, False])
def test_typing_a_kernel_is_never_analysed_from_scratch(auto_close, last):
    median, worst, fresh, count = _bench()._typing_a_kernel(1000, auto_close, last)
    assert count > 80 and fresh == 0
    assert 0 < median <= worst
