"""`print_tko` through Triton: `tl.device_print` once per value, labelled with the format's
text before the value's conversion (Triton has no printf: its values print a line per element,
prefixed with the tile block), `%x` in hex; the same source under Triton's interpreter and
compiled."""

from __future__ import annotations

import re

import pytest

from compiler.runtime import launch

from .harness import TRITON_INTERPRETED, compile_for, source_of

PRINT = """cuda_tile.module @m {
  entry @k(%n: tile<i32>, %x: tile<f32>) {
    %t = print_tko "n=%d, mask %#06x;  x = %.3f%% done\\n", %n, %n, %x : tile<i32>, tile<i32>, tile<f32> -> token
    %u = print_tko "no values, 100%%\\n" -> token
    return
  }
}"""


def test_each_value_is_printed_with_its_label() -> None:
    src = source_of(PRINT)
    prints = [line.strip().split("  #")[0] for line in src.splitlines() if "tl.device_print" in line]
    assert prints == [
        "tl.device_print('n= ', n)",
        "tl.device_print('mask ', n, hex=True)",
        "tl.device_print('x = ', x)",
        "tl.device_print('no values, 100%%')",  # Triton's GPU printf reads % in it
    ], src


@pytest.mark.skipif(not TRITON_INTERPRETED, reason="Triton's interpreter (triton, torch) is not installed")
def test_under_tritons_interpreter(capfd: pytest.CaptureFixture[str]) -> None:
    launch(PRINT, "k", 2, [7, 1.5], backend="triton-interpret")
    out = capfd.readouterr().out
    for label in ("n=", "mask", "x ="):
        assert sum(label in line for line in out.splitlines()) == 2, out  # once per tile block


def test_it_compiles() -> None:
    """The printf formats Triton makes hold no stray `%` (as bytes in the PTX's globals)."""
    (k,) = compile_for(PRINT, arches=("sm_90",), use_cache=False)
    assert "vprintf" in k.asm["ptx"]
    formats = re.findall(r"printfFormat_\d+\[\d+\] = \{([\d, ]+)\}", k.asm["ptx"])
    texts = sorted(bytes(int(b) for b in f.split(",")).decode() for f in formats)
    assert any(t.endswith(" no values, 100%%\n") for t in texts), texts
    for t in texts:
        assert re.fullmatch(r"([^%]|%%|%[-+ #0]*\d*(?:\.\d+)?(?:ll|l)?[uidxXfFeEgG])*", t.rstrip("\0")), t
