"""The parser never raises, never hangs and keeps every span inside the text, whatever it is fed.

Inputs are mangled real files: our examples (always), `../shared/samples` and the `// -----`
chunks of NVIDIA's conformance tests (when shared/ is there). Three manglings: truncation,
random byte edits (decoded with errors='replace'), and token shuffles.
"""

from __future__ import annotations

import re
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.corpus import conformance_files, example_files, read, run_bounded, sample_files

HANG_SECONDS = 10.0  # generous: this only catches hangs, it is not a speed test


@cache
def corpus() -> tuple[str, ...]:
    texts: list[str] = [read(p) for p in example_files()]
    texts += [read(p) for p in sample_files()]
    conformance = conformance_files()
    if conformance:
        from compiler.text import split_input

        for path in conformance:
            texts += [chunk for chunk, _ in split_input(read(path)) if chunk.strip()]
    return tuple(texts)


def _parse_checked(text: str) -> None:
    """Parse in a thread: fail on an exception, on a hang, or on a span outside the text."""
    from compiler.text import ParseOptions, parse

    where = f"\ninput ({len(text)} chars): {text[:2000]!r}"
    options = ParseOptions(allow_unregistered=True)
    result = run_bounded(lambda: parse(text, "fuzz.tileir", options), HANG_SECONDS, "parse", where)
    n = len(text)
    for diag in result.diagnostics:  # type: ignore[attr-defined]
        span = diag.span
        assert 0 <= span.start <= span.end <= n, f"span {span} outside [0, {n}]: {diag.format()}{where}"
        for rel in diag.related:
            if rel.source is None or rel.source is diag.source:
                rs = rel.span
                assert 0 <= rs.start <= rs.end <= n, f"related span {rs} outside [0, {n}]{where}"
    # Formatting a diagnostic must not raise either (the CLI and the LSP do it for every one).
    for diag in result.diagnostics:  # type: ignore[attr-defined]
        diag.format(with_snippet=True)


def _texts() -> st.SearchStrategy[str]:
    return st.sampled_from(corpus())


_FUZZ_SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_corpus_is_not_empty() -> None:
    assert corpus(), "no examples/*.tileir to fuzz"


@pytest.mark.parametrize("index", range(len(example_files())))
def test_unmangled_examples_parse(index: int) -> None:
    _parse_checked(read(example_files()[index]))


@_FUZZ_SETTINGS
@given(data=st.data())
def test_truncations(data: st.DataObject) -> None:
    text = data.draw(_texts(), label="source")
    cut = data.draw(st.integers(0, len(text)), label="cut")
    _parse_checked(text[:cut])


_BYTE_EDIT = st.tuples(
    st.sampled_from(["replace", "insert", "delete"]),
    st.floats(0, 1, exclude_max=True),
    st.binary(min_size=1, max_size=4),
)


@_FUZZ_SETTINGS
@given(data=st.data())
def test_random_byte_edits(data: st.DataObject) -> None:
    raw = bytearray(data.draw(_texts(), label="source").encode("utf-8"))
    edits = data.draw(st.lists(_BYTE_EDIT, min_size=1, max_size=8), label="edits")
    for kind, where, payload in edits:
        pos = int(where * (len(raw) + 1))
        if kind == "replace":
            raw[pos : pos + len(payload)] = payload
        elif kind == "insert":
            raw[pos:pos] = payload
        else:
            del raw[pos : pos + len(payload)]
    _parse_checked(raw.decode("utf-8", errors="replace"))


_TOKEN = re.compile(r"\s+|[%@^#!]?[\w.$-]+|\"(?:[^\"\\\n]|\\.)*\"|//[^\n]*|.", re.S)


@_FUZZ_SETTINGS
@given(data=st.data())
def test_token_shuffles(data: st.DataObject) -> None:
    text = data.draw(_texts(), label="source")
    tokens = _TOKEN.findall(text)
    assert "".join(tokens) == text
    if len(tokens) < 2:
        _parse_checked(text)
        return
    index = st.integers(0, len(tokens) - 1)
    mode = data.draw(st.sampled_from(["swap", "window", "duplicate", "drop"]), label="mode")
    if mode == "swap":
        for _ in range(data.draw(st.integers(1, 6), label="swaps")):
            i, j = data.draw(index), data.draw(index)
            tokens[i], tokens[j] = tokens[j], tokens[i]
    elif mode == "window":
        start = data.draw(index, label="start")
        width = data.draw(st.integers(2, 12), label="width")
        window = tokens[start : start + width]
        shuffled = data.draw(st.permutations(window), label="permutation")
        tokens[start : start + width] = shuffled
    elif mode == "duplicate":
        start = data.draw(index, label="start")
        tokens[start:start] = tokens[start : start + data.draw(st.integers(1, 20))]
    else:
        for _ in range(data.draw(st.integers(1, 6), label="drops")):
            if tokens:
                del tokens[data.draw(st.integers(0, len(tokens) - 1))]
    _parse_checked("".join(tokens))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        "// only a comment",
        "{",
        "}",
        "cuda_tile.module",
        "cuda_tile.module @m {",
        "entry @k(",
        "%",
        "%0 =",
        '"unterminated',
        "\x00\x01\x02",
        "\ufffd" * 10,
        "tile<" * 200,
        "(" * 500,
        "cuda_tile.module @m { entry @k() { %0 = constant <i32: 99999999999999999999999> : tile<i32> } }",
    ],
)
def test_edge_cases(text: str) -> None:
    _parse_checked(text)
