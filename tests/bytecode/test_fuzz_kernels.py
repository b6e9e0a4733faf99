"""The random kernels of tests/lower/fuzz.py through our
bytecode writer and NVIDIA's tileirdisasm: it prints our bytes as our printer prints the
module, and our reader reads them back to the same text. Those kernels chain views with
dynamic extents, pointer gathers, atomics, nested regions with early exits, f8/f4/i4 values:
shapes of modules the conformance files hold few of. A longer campaign:
`python -m tests.lower.fuzz --seeds 0:500 --bytecode`."""

from __future__ import annotations

import pytest

from .util import require_tileirdisasm

fuzz = pytest.importorskip("tests.lower.fuzz", reason="the random kernels' generator")


@pytest.mark.parametrize("seed", range(25))
def test_tileirdisasm_reads_random_kernels_as_we_print_them(seed: int) -> None:
    require_tileirdisasm()
    fuzz.check_bytecode(fuzz.kernel(seed))
