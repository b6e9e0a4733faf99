"""Optimization hints: silent by default, warnings with -Wunsupported-hints, plus an op error
with -Werr-hints; the parse errors of the hints attribute."""

from __future__ import annotations

import pytest

from compiler.verify import VerifyOptions, check_text


def _entry(hints: str) -> str:
    return (
        "cuda_tile.module @m {\n"
        f"  entry @k(%a: !cuda_tile.tile<ptr<f32>>) optimization_hints=<{hints}> {{\n"
        "    return\n"
        "  }\n"
        "}\n"
    )


def _diags(text: str, mode: str, keep_going: bool = False):
    _, diags = check_text(text, "t.mlir", VerifyOptions(keep_going=keep_going, unsupported_hints=mode))
    return diags


def _summary(text: str, mode: str):
    return [(d.severity.label, d.message, d.location()[1], d.code) for d in _diags(text, mode)]


@pytest.mark.parametrize(
    ("hints", "message"),
    [
        ("sm_100a={num_cta_in_cga=2}", "unknown hint key sm_100a"),
        ("sm_100={num_qqq=1}", "num_qqq is not known hint for current Operation"),
        ('sm_100={num_cta_in_cga="a"}', "integer value expected for sm_100.num_cta_in_cga"),
        ("sm_100={num_cta_in_cga=7}", "expected power-of-two ≤ 16 for sm_100.num_cta_in_cga"),
        ("sm_80={num_cta_in_cga=2}", "expected 1 for sm_80.num_cta_in_cga"),
        ("sm_100={occupancy=64}", "integer value in the range [1, 32] is expected for sm_100.occupancy"),
        ("sm_100={num_worker_warps_per_cta=64}", "expected power-of-two ≤ 32 for sm_100.num_worker_warps_per_cta"),
        ("sm_100={latency=3}", "latency is not known hint for current Operation"),
    ],
)
def test_warn_and_error_modes(hints: str, message: str) -> None:
    text = _entry(hints)
    assert _summary(text, "silent") == []
    warned = _summary(text, "warn")
    assert [(s, m, line) for s, m, line, _ in warned] == [("warning", message, 2)]
    errored = _summary(text, "error")
    assert [(s, m, line) for s, m, line, _ in errored] == [
        ("warning", message, 2),
        ("error", "'cuda_tile.entry' op Optimization hints verification failed", 2),
    ]
    assert errored[1][3] == "unsupported-hint"


def test_range_is_the_key_at_fault() -> None:
    text = _entry("sm_100={num_cta_in_cga=2}, sm_90={num_cta_in_cga=7}")
    (d,) = _diags(text, "warn")
    start = text.index("num_cta_in_cga=7")
    assert (d.span.start, d.span.end) == (start, start + len("num_cta_in_cga"))
    assert d.code == "hint-value"


def test_unknown_arch_range() -> None:
    text = _entry("sm_100a={num_cta_in_cga=2}")
    (d,) = _diags(text, "warn")
    assert text[d.span.start : d.span.end] == "sm_100a"
    assert d.code == "unknown-hint-key"


def test_every_problem_is_warned_in_warn_mode() -> None:
    text = _entry("sm_100={num_cta_in_cga=7, occupancy=0}, sm_120a={num_cta_in_cga=2}")
    assert [d.message for d in _diags(text, "warn")] == [
        "expected power-of-two ≤ 16 for sm_100.num_cta_in_cga",
        "integer value in the range [1, 32] is expected for sm_100.occupancy",
        "unknown hint key sm_120a",
    ]


def test_error_mode_stops_at_the_first_bad_architecture() -> None:
    text = _entry("sm_100={num_cta_in_cga=7, occupancy=0}, sm_120a={num_cta_in_cga=2}")
    assert [d.message for d in _diags(text, "error")] == [
        "expected power-of-two ≤ 16 for sm_100.num_cta_in_cga",
        "integer value in the range [1, 32] is expected for sm_100.occupancy",
        "'cuda_tile.entry' op Optimization hints verification failed",
    ]


def test_valid_hints_are_quiet() -> None:
    text = _entry("sm_100={num_cta_in_cga=8, num_worker_warps_per_cta=8, occupancy=2}, default={num_cta_in_cga=1}")
    assert _diags(text, "error") == []


LOAD_PTR = """cuda_tile.module @m {
  entry @k(%p: !cuda_tile.tile<ptr<f32>>) {
    %t, %tok = load_ptr_tko weak %p optimization_hints = <sm_100 = {HINT}> : tile<ptr<f32>> -> tile<f32>, token
    return
  }
}
"""


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        ("latency = 3", None),
        ("latency = 11", "integer value in the range [1, 10] is expected for sm_100.latency"),
        ("allow_tma = true", "allow_tma is not known hint for current Operation"),
        ("num_cta_in_cga = 2", "num_cta_in_cga is not known hint for current Operation"),
    ],
)
def test_load_ptr_hints(hint: str, message: str | None) -> None:
    text = LOAD_PTR.replace("HINT", hint)
    got = [d.message for d in _diags(text, "warn")]
    assert got == ([] if message is None else [message])


def test_parse_errors() -> None:
    _, diags = check_text(_entry("sm_100=2"), "t.mlir", VerifyOptions(keep_going=False))
    assert [d.message for d in diags] == [
        "custom op 'cuda_tile.entry' expected dictionary attribute for optimization_hints entry `sm_100` "
        "got value=2 : i64"
    ]
    _, diags = check_text(_entry("2"), "t.mlir", VerifyOptions(keep_going=False))
    assert [d.message for d in diags] == ["custom op 'cuda_tile.entry' expected valid keyword or string"]
    _, diags = check_text(_entry("sm_100={}, sm_100={}"), "t.mlir", VerifyOptions(keep_going=False))
    assert [d.message for d in diags] == ["custom op 'cuda_tile.entry' duplicate optimization_hints key `sm_100`"]


def test_quoted_architecture_key() -> None:
    assert _diags(_entry('"sm_100"={num_cta_in_cga=2}'), "error") == []
