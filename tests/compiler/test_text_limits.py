"""Big and deep inputs (issue 18 item 5): a long string literal costs memory and time in
proportion to its length, and types nested tens of thousands deep are refused at once, with
the place and the reason. The bound on memory is the issue's: at most 20 times the input plus
100 MB, for the commands (`tileir fmt`, `tileir check`) run in this process under tracemalloc
(which sees the regular-expression engine's own stack, where the old string pattern kept
about 120 bytes per character)."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from compiler.cli import main
from compiler.text import parse, print_module
from compiler.text.parser import MAX_TYPE_NESTING

MB = 1_000_000


def _string_module(body: str) -> str:
    return 'cuda_tile.module @m {\n  global @g {s = "' + body + '"} <f32: [1.0]> : tile<1xf32>\n}\n'


def _nested_module(n: int, opener: str = "tile<", closer: str = ">") -> str:
    return "cuda_tile.module @m {\n  entry @k(%a: " + opener * n + "f32" + closer * n + ") {\n    return\n  }\n}\n"


def _peak_of(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def _best_time(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


# ------------------------------------------------------------------ long string literals


@pytest.mark.parametrize(
    ("body", "value"),
    [
        ("x" * 2_000_000, "x" * 2_000_000),
        ("\\41" * 600_000, "A" * 600_000),  # an escape every three characters
    ],
    ids=["plain", "escapes"],
)
@pytest.mark.parametrize("command", ["fmt", "check"])
def test_long_string_literal_costs_memory_in_proportion(command, body, value, tmp_path: Path, capsys) -> None:
    text = _string_module(body)
    path = tmp_path / "long.tileir"
    path.write_text(text, encoding="utf-8")
    status, peak = _peak_of(lambda: main([command, str(path)]))
    out = capsys.readouterr().out
    assert status == 0
    assert peak <= 20 * len(text) + 100 * MB, f"{command}: peak {peak / MB:.0f} MB for {len(text) / MB:.1f} MB"
    if command == "fmt":
        # The string comes back whole (printed with its escapes, read back to the same value).
        reread = parse(out, "out.tileir")
        assert not reread.diagnostics
        (module,) = reread.module.ops
        (glob,) = module.regions[0].blocks[0].ops
        assert glob.attributes["s"].value == value


def test_long_string_literal_time_is_linear() -> None:
    """Four times the characters take about four times as long (the old per-character loops
    were linear too, but slow; a quadratic cost would take sixteen times as long)."""

    def run(n: int) -> float:
        text = _string_module("ab\\0Aé" * n)
        return _best_time(lambda: print_module(parse(text, "s.tileir").module))

    small, large = run(50_000), run(200_000)
    assert large < 8 * small + 0.5, f"{small:.3f} s, then {large:.3f} s for 4x the input"


# ------------------------------------------------------------------ deep nesting


def test_deeply_nested_type_is_refused_quickly_where_the_limit_is_passed() -> None:
    n = 80_000  # took 13 s to reach Python's recursion limit, reported at line 1, column 1
    text = _nested_module(n)
    start = time.process_time()
    result = parse(text, "deep.tileir")
    elapsed = time.process_time() - start
    errors = [d for d in result.diagnostics if d.is_error]  # type: ignore[attr-defined]
    assert errors, "accepted a type nested 80,000 deep"
    first = errors[0]
    assert first.message == f"type nested more than {MAX_TYPE_NESTING} levels deep"
    # At the first type past the limit.
    assert first.span.start == text.index("tile<") + MAX_TYPE_NESTING * len("tile<")
    assert first.format().startswith(f"deep.tileir:2:{first.span.start - text.index('  entry') + 1}: error: ")
    assert elapsed < 10, f"{elapsed:.1f} s to refuse it"


def test_deeply_nested_type_time_is_linear() -> None:
    small = _best_time(lambda: parse(_nested_module(10_000), "deep.tileir"))
    large = _best_time(lambda: parse(_nested_module(40_000), "deep.tileir"))
    assert large < 8 * small + 0.5, f"{small:.3f} s, then {large:.3f} s for 4x the input"


def test_nesting_just_under_the_limit_parses() -> None:
    """The limit refuses nothing a real type needs: 100 pointer levels still read (and are
    refused by the type rules, not the parser)."""
    text = _nested_module(MAX_TYPE_NESTING - 2, "ptr<", ">")
    messages = [d.message for d in parse(text, "p.tileir").diagnostics]
    assert not any("nested" in m for m in messages), messages


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        (_nested_module(20_000, "tile<", ">"), "type nested more than", 2),
        (_nested_module(20_000, "ptr<", ">"), "type nested more than", 2),
        (_nested_module(20_000, "tile<", ""), "type nested more than", 2),  # never closed
        (_nested_module(20_000, "(", ") -> f32"), "type nested more than", 2),
        (
            "cuda_tile.module @m {\n  global @g {a = "
            + "[" * 20_000
            + "1"
            + "]" * 20_000
            + "} <f32: [1.0]> : tile<1xf32>\n}\n",
            "input is nested too deeply to parse",
            2,
        ),
        (
            "cuda_tile.module @m {\n  entry @k() {\n    return loc("
            + "callsite(" * 20_000
            + "unknown"
            + " at unknown)" * 20_000
            + ")\n  }\n}\n",
            "input is nested too deeply to parse",
            3,
        ),
    ],
    ids=["tiles", "pointers", "unclosed", "function-types", "arrays", "locations"],
)
def test_deep_nestings_are_refused_by_the_commands_with_a_place(
    text: str, message: str, where: int, tmp_path: Path, capsys
) -> None:
    path = tmp_path / "deep.tileir"
    path.write_text(text, encoding="utf-8")
    start = time.process_time()
    status, peak = _peak_of(lambda: main(["check", str(path)]))
    elapsed = time.process_time() - start
    err = capsys.readouterr().err
    assert status == 1
    first = err.splitlines()[0]
    assert message in first and first.startswith(f"{path}:{where}:"), first  # where it is nested, not 1:1
    assert "Traceback" not in err
    # The snippet shows the part of the (long) line around the place, not the whole line.
    assert max(len(line) for line in err.splitlines()) < 400
    assert elapsed < 10, f"{elapsed:.1f} s to refuse it"
    assert peak <= 20 * len(text) + 100 * MB
