"""Fuzzing the reader: corrupt valid files and check that reading never goes wrong.

Every mutated file must either read (and then verify and print without an exception) or be
refused with a `BytecodeError` carrying a message; never any other exception, never more than
`TIME_LIMIT` seconds, never more than `MEMORY_FACTOR` x its size + 1 MB of allocation at the
peak (tracemalloc). Seeds: the cuTile exports in ../shared/samples (when present) and our
writer's bytes for the examples (always). Mutations: truncation at every length, random byte
edits, insertions and deletions, corrupted length/count/offset/index fields (found by the
ground-truth decoder in `layout`), huge varints inside function bodies, and sections cut short
with their lengths fixed up (so the damage is met past the section scan).

A fixed seed and a few thousand cases in CI; TILEIR_FUZZ_ITERATIONS=N multiplies the random
kinds for longer local runs (e.g. 20000).
"""

from __future__ import annotations

import functools
import os
import random
import time
import traceback
import tracemalloc
from collections.abc import Callable, Iterator

import pytest

from compiler.bytecode import BytecodeError, read_bytecode, write_bytecode
from compiler.text import PrintOptions, print_module
from compiler.verify import verify
from tests.corpus import run_bounded

from .layout import encode_varint, fields, section_spans, splice
from .util import example_text_cases, sample_bytecode_files

ITERATIONS = int(os.environ.get("TILEIR_FUZZ_ITERATIONS", "600"))
SEED = 20250605
TIME_LIMIT = 1.0  # seconds, per mutated file: read, verify, print
HANG_LIMIT = 20.0  # the guard against a hang (a case past TIME_LIMIT fails anyway)
MEMORY_FACTOR = 50
MEMORY_SLACK = 1 << 20

HUGE_VALUES = (2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40, 2**63 - 1, 2**63, 2**64 - 1)


@functools.cache
def seed_files() -> tuple[tuple[str, bytes], ...]:
    seeds = [(path.name, path.read_bytes()) for path in sample_bytecode_files()]
    for case in example_text_cases():
        for version in ((13, 3), (13, 1)):
            name = f"{case.id}@{version[0]}.{version[1]}"
            seeds.append((name, write_bytecode(case.module, version)))
    return tuple(seeds)


class Fuzzer:
    """Runs mutated files through the reader and collects what went wrong."""

    def __init__(self) -> None:
        self.cases = 0
        self.read_ok = 0
        self.failures: list[str] = []
        self.slowest = (0.0, "")

    def check(self, data: bytes, label: str) -> None:
        self.cases += 1
        outcome = run_bounded(lambda: self._one(data, label), HANG_LIMIT, "reading a mutated file", f" ({label})")
        if outcome:
            self.failures.append(outcome)

    def _one(self, data: bytes, label: str) -> str | None:
        tracemalloc.reset_peak()
        baseline = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        module = None
        try:
            module = read_bytecode(data)
        except BytecodeError as exc:
            if not str(exc).strip():
                return f"{label}: BytecodeError without a message"
        except Exception:  # noqa: BLE001 - the point of the test: report it with the input
            return f"{label}: the reader raised\n{traceback.format_exc(limit=-3)}"
        peak = tracemalloc.get_traced_memory()[1] - baseline
        limit = MEMORY_FACTOR * len(data) + MEMORY_SLACK
        if peak > limit:
            return f"{label}: reading allocated {peak} bytes at the peak (limit {limit})"
        if module is not None:
            self.read_ok += 1
            try:
                verify(module)
                print_module(module)
                print_module(module, PrintOptions(debuginfo=True))
            except Exception:  # noqa: BLE001
                return f"{label}: verify/print of what the reader accepted raised\n{traceback.format_exc(limit=-3)}"
        elapsed = time.perf_counter() - start
        if elapsed > self.slowest[0]:
            self.slowest = (elapsed, label)
        if elapsed > TIME_LIMIT:
            return f"{label}: took {elapsed:.2f} s"
        return None

    def run(self, cases: Iterator[tuple[bytes, str]]) -> None:
        tracemalloc.start()
        try:
            for data, label in cases:
                self.check(data, label)
        finally:
            tracemalloc.stop()
        summary = (
            f"{self.cases} cases, {self.read_ok} read successfully, "
            f"slowest {self.slowest[0] * 1000:.1f} ms ({self.slowest[1]})"
        )
        print(summary)
        assert self.cases, "no cases ran"
        assert not self.failures, f"{len(self.failures)} failures ({summary}):\n" + "\n".join(self.failures[:20])


def _fuzz(make_cases: Callable[[random.Random], Iterator[tuple[bytes, str]]]) -> None:
    Fuzzer().run(make_cases(random.Random(SEED)))


def test_seeds_read() -> None:
    for name, data in seed_files():
        read_bytecode(data)  # a mutation of an unreadable seed would test little
        assert fields(data), name


@pytest.mark.slow
def test_truncation_at_every_length() -> None:
    def cases(_rng: random.Random) -> Iterator[tuple[bytes, str]]:
        for name, data in seed_files():
            for n in range(len(data)):
                yield data[:n], f"{name} truncated to {n} bytes"

    _fuzz(cases)


@pytest.mark.slow
def test_random_byte_edits() -> None:
    def cases(rng: random.Random) -> Iterator[tuple[bytes, str]]:
        seeds = seed_files()
        for i in range(ITERATIONS * 2):
            name, data = seeds[i % len(seeds)]
            mutated = bytearray(data)
            edits = []
            for _ in range(rng.choice((1, 1, 2, 3, 8))):
                pos = rng.randrange(12, len(data))  # past the header: a bad one stops everything
                value = rng.choice((rng.randrange(256), mutated[pos] ^ (1 << rng.randrange(8)), 0xFF, 0x00, 0x80))
                mutated[pos] = value
                edits.append(f"[{pos}]={value:#04x}")
            yield bytes(mutated), f"{name} with {' '.join(edits)}"

    _fuzz(cases)


@pytest.mark.slow
def test_insertions_and_deletions() -> None:
    """Bytes inserted or deleted inside a section; half of the time the section's length (and
    the function body's, inside one) is fixed up to match, so the damage gets past the scan."""

    def cases(rng: random.Random) -> Iterator[tuple[bytes, str]]:
        seeds = [(name, data, section_spans(data)) for name, data in seed_files()]
        for i in range(ITERATIONS * 2):
            name, data, spans = seeds[i % len(seeds)]
            span = rng.choice(spans)
            start, end = span.payload
            if end == start:
                continue
            pos = rng.randrange(start, end)
            n = rng.choice((1, 2, 3, 8, 32))
            inserted = bytes(rng.randrange(256) for _ in range(n)) if i % 2 else b""
            removed = 0 if i % 2 else n
            what = f"{inserted.hex()} inserted at {pos}" if inserted else f"bytes {pos}..{pos + n} deleted"
            if i % 4 < 2:
                yield splice(data, pos, removed, inserted), f"{name}: {what}, lengths fixed up"
            else:
                yield data[:pos] + inserted + data[pos + removed :], f"{name}: {what}"

    _fuzz(cases)


@pytest.mark.slow
def test_length_and_count_fields_set_huge() -> None:
    """Every length, count, offset and index field of every seed, set to each huge value."""

    def cases(_rng: random.Random) -> Iterator[tuple[bytes, str]]:
        for name, data in seed_files():
            for field in fields(data):
                for value in (*HUGE_VALUES, len(data), len(data) + 1):
                    if field.fixed:
                        if value >= 1 << (8 * field.size):
                            continue
                        encoded = value.to_bytes(field.size, "little")
                    else:
                        encoded = encode_varint(value)
                    mutated = data[: field.pos] + encoded + data[field.pos + field.size :]
                    yield mutated, f"{name}: {field.what} (at {field.pos}) set to {value}"

    _fuzz(cases)


@pytest.mark.slow
def test_huge_varints_in_function_bodies() -> None:
    """Opcodes, type/value/constant/string indices, counts and enum values inside function
    bodies: a random byte replaced by a huge varint (or by an over-long encoding)."""

    def cases(rng: random.Random) -> Iterator[tuple[bytes, str]]:
        seeds = [(name, data, [s for s in section_spans(data) if s.section == 2]) for name, data in seed_files()]
        for i in range(ITERATIONS):
            name, data, func = seeds[i % len(seeds)]
            start, end = func[0].payload
            pos = rng.randrange(start, end)
            value = rng.choice(HUGE_VALUES + (rng.randrange(128, 1 << 14),))
            encoded = encode_varint(value) if i % 3 else bytes([data[pos] | 0x80, 0x00])  # over-long form
            yield splice(data, pos, 1, encoded), f"{name}: byte {pos} replaced by {encoded.hex()}, lengths fixed up"

    _fuzz(cases)


def test_sections_cut_short() -> None:
    """A section's payload cut at a random point and its length fixed to match, so that the
    damage is met by the section's own decoder, not by the section scan."""

    def cases(rng: random.Random) -> Iterator[tuple[bytes, str]]:
        for name, data in seed_files():
            for span in section_spans(data):
                start, end = span.payload
                at, size = span.length_field
                for _ in range(max(1, ITERATIONS // 60)):
                    keep = rng.randrange(0, end - start) if end > start else 0
                    mutated = data[:at] + encode_varint(keep) + data[at + size : start + keep] + data[end:]
                    yield mutated, f"{name}: section {span.section} cut to {keep} of {end - start} bytes"

    _fuzz(cases)


@pytest.mark.parametrize("size", [0, 1, 11, 12, 13])
def test_tiny_inputs(size: int) -> None:
    header = b"\x7fTileIR\x00\x0d\x03\x00\x00\x00"
    Fuzzer().run(iter([(header[:size], f"the first {size} bytes of a minimal header")]))
