"""Mutations of the examples, and the worker that runs `tileir` on many of them in one process
(for tests/test_fuzz_faces.py).

The mutations are deterministic (a seeded `random.Random`) and textual or byte-level: they
model what a user's editor, a broken download or a bad generator hands the tools, not what a
parser test wants to reach (tests/compiler/test_parser_fuzz.py and tests/bytecode/test_fuzz.py
fuzz the parser and the bytecode reader directly; this fuzzes the faces: the command line and
the language server, with every subcommand's own code after the parser).

    python -m tests.fuzz_faces_worker JOBS.json     # run the jobs; one JSON line per job on stdout

Each job is an argv for `compiler.cli.main`. The worker runs it with stdout/stderr captured the
way a real process has them (UTF-8, strict on stdout), a per-job time limit (SIGALRM), and
reports the exit status, the time, the output sizes and, for an internal error (status 3) or an
exception escaping `main`, the traceback (the job is run again with TILEIR_TRACEBACK=1).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import sys
import time
import traceback
from pathlib import Path

# --------------------------------------------------------------------------------------------
# Mutations

HUGE_NUMBERS = (
    "18446744073709551616",  # 2^64
    "-9223372036854775809",  # below i64
    "4294967296",  # 2^32
    "1" + "0" * 400,  # past any float
    "0x" + "f" * 40,
    "1e400",
    "-0",
    "99999999999999999999999999999999999999999999999999",
    "9" * 5000,  # past Python's 4300-digit limit on int(str)
)
INVALID_UTF8 = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80\x80\x80", b"\x00")
TOKEN = re.compile(rb"\s+|[%@^#!]?[\w.$-]+|\"(?:[^\"\\\n]|\\.)*\"|//[^\n]*|.", re.S)
NUMBER = re.compile(rb"(?<![\w%@^#$.])-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?![\w.])")

TEXT_KINDS = (
    "byte_flip",
    "truncate",
    "token_delete",
    "token_duplicate",
    "splice_lines",
    "huge_number",
    "deep_nesting",
    "invalid_utf8",
)
BYTECODE_KINDS = ("byte_flip", "truncate", "splice_bytes", "huge_bytes")


def mutate_text(data: bytes, others: list[bytes], kind: str, rng: random.Random) -> tuple[bytes, str]:
    """One mutation of a text kernel's bytes: (the bytes, a description for the report)."""
    n = len(data)
    if kind == "byte_flip":
        out = bytearray(data)
        edits = []
        for _ in range(rng.choice((1, 2, 4))):
            pos = rng.randrange(n)
            out[pos] ^= 1 << rng.randrange(8)
            edits.append(str(pos))
        return bytes(out), f"bits flipped at bytes {','.join(edits)}"
    if kind == "truncate":
        cut = rng.randrange(n)
        return data[:cut], f"truncated to {cut} bytes"
    tokens = TOKEN.findall(data)
    if kind == "token_delete":
        picked = sorted({rng.randrange(len(tokens)) for _ in range(rng.choice((1, 2, 3)))}, reverse=True)
        for i in picked:
            del tokens[i]
        return b"".join(tokens), f"tokens {sorted(picked)} deleted"
    if kind == "token_duplicate":
        i = rng.randrange(len(tokens))
        width = rng.choice((1, 1, 3, 12))
        times = rng.choice((1, 2, 50))
        tokens[i:i] = tokens[i : i + width] * times
        return b"".join(tokens), f"tokens {i}..{i + width} repeated {times} more times"
    if kind == "splice_lines":
        lines = data.split(b"\n")
        donor = rng.choice(others).split(b"\n")
        start = rng.randrange(len(donor))
        chunk = donor[start : start + rng.choice((1, 3, 8))]
        at = rng.randrange(len(lines) + 1)
        replace = rng.random() < 0.5
        lines[at : at + (len(chunk) if replace else 0)] = chunk
        how = "replacing" if replace else "inserted at"
        return b"\n".join(lines), f"{len(chunk)} lines of another kernel (from line {start + 1}) {how} line {at + 1}"
    if kind == "huge_number":
        # Not inside a comment: the parser would never see it.
        numbers = [
            m for m in NUMBER.finditer(data) if b"//" not in data[data.rfind(b"\n", 0, m.start()) + 1 : m.start()]
        ]
        if not numbers:
            return data + HUGE_NUMBERS[0].encode(), "a huge number appended"
        picked = sorted({rng.randrange(len(numbers)) for _ in range(rng.choice((1, 3)))}, reverse=True)
        edits = []
        for i in picked:  # from the end, so that the earlier matches' offsets stay right
            m = numbers[i]
            value = rng.choice(HUGE_NUMBERS).encode()
            line = data.count(b"\n", 0, m.start()) + 1
            edits.append(f"{m.group().decode()} on line {line} -> {value[:24].decode()}")
            data = data[: m.start()] + value + data[m.end() :]
        return data, "numbers replaced: " + "; ".join(reversed(edits))
    if kind == "deep_nesting":
        depth = rng.choice((200, 2000, 20000))
        where = rng.choice(("type", "parens", "regions", "attribute"))
        if where == "regions":
            # `if` inside `if`, each well formed: only the depth is wrong.
            body = "".join("  " * (i % 8) + "if %c {\n" for i in range(depth)) + "yield\n}\n" * depth
            text = f"cuda_tile.module @deep {{\n  entry @k(%c: tile<i1>) {{\n{body}  return\n  }}\n}}\n"
            return text.encode(), f"{depth} nested `if` regions"
        opening, closing = {"type": ("tile<", ">"), "parens": ("(", ")"), "attribute": ("[", "]")}[where]
        m = re.search(rb"tile<", data) if where == "type" else None
        at = m.start() if m else rng.randrange(n)
        tail = rng.choice((True, False))  # closed (valid depth only wrong) or left open
        nested = opening.encode() * depth + (b"i32" + closing.encode() * depth if tail else b"")
        return data[:at] + nested + data[at:], f"{depth} x {opening!r} inserted at byte {at}"
    if kind == "invalid_utf8":
        bad = rng.choice(INVALID_UTF8)
        at = rng.randrange(n + 1)
        return data[:at] + bad + data[at:], f"bytes {bad!r} inserted at byte {at}"
    raise ValueError(kind)


def mutate_bytecode(data: bytes, others: list[bytes], kind: str, rng: random.Random) -> tuple[bytes, str]:
    """One mutation of a bytecode file (past its 8-byte magic half the time, so that the
    reader gets further than the header)."""
    n = len(data)
    start = 8 if rng.random() < 0.5 else 0
    if kind == "byte_flip":
        out = bytearray(data)
        at = []
        for _ in range(rng.choice((1, 2, 8))):
            pos = rng.randrange(start, n)
            out[pos] = rng.choice((out[pos] ^ (1 << rng.randrange(8)), 0xFF, 0x00, 0x80))
            at.append(str(pos))
        return bytes(out), f"bytes {','.join(at)} changed"
    if kind == "truncate":
        cut = rng.randrange(n)
        return data[:cut], f"truncated to {cut} bytes"
    if kind == "splice_bytes":
        donor = rng.choice(others)
        a = rng.randrange(len(donor))
        piece = donor[a : a + rng.choice((4, 32, 256))]
        at = rng.randrange(start, n)
        return data[:at] + piece + data[at:], f"{len(piece)} bytes of another file inserted at {at}"
    if kind == "huge_bytes":
        at = rng.randrange(start, n)
        run = rng.choice((b"\xff" * 9 + b"\x01", b"\x80" * 12, b"\xff\xff\xff\xff\x0f"))
        return data[:at] + run + data[at + 1 :], f"byte {at} replaced by the varint {run.hex()}"
    raise ValueError(kind)


# --------------------------------------------------------------------------------------------
# The worker


class CaseTimeout(BaseException):
    """Raised by SIGALRM inside a job: a BaseException, so that the CLI's last line of defence
    (`except Exception`) does not turn it into an ordinary exit status."""


def _on_alarm(signum, frame):  # noqa: ANN001 - a signal handler's signature
    raise CaseTimeout


def _stream(errors: str) -> io.TextIOWrapper:
    # As a real process's streams are: UTF-8 text over a byte buffer (`.buffer` exists, for
    # bytecode on stdout); stdout strict, stderr backslashreplace, as Python sets them up.
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors=errors, write_through=True)


def run_job(argv: list[str], limit: float) -> dict:
    import gc

    from compiler.cli import main

    out, err = _stream("strict"), _stream("backslashreplace")
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout, sys.stderr, sys.stdin = out, err, io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
    result: dict = {"argv": argv}
    signal.setitimer(signal.ITIMER_REAL, limit)
    start = time.perf_counter()
    try:
        result["status"] = main(argv)
    except CaseTimeout:
        result["status"] = None
        result["escaped"] = f"still running after {limit} s"
    except BaseException as exc:  # noqa: BLE001 - an exception escaping main is what we look for
        result["status"] = None
        result["escaped"] = "".join(traceback.format_exception(exc))[-4000:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        result["seconds"] = time.perf_counter() - start
        sys.stdout, sys.stderr, sys.stdin = saved
        gc.enable()  # main() disables the collector for the one-shot commands
    stderr = err.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]
    result["stdout_bytes"] = len(out.buffer.getvalue())  # type: ignore[attr-defined]
    result["stderr_bytes"] = len(stderr)
    result["stderr"] = stderr[-3000:]
    return result


def run_jobs(jobs: list[dict], limit: float) -> None:
    """Each job: {"argv": [...]} (+ anything, echoed back). One JSON line per job, flushed, so
    that a worker that dies still says which job killed it (the line before is the last one)."""
    signal.signal(signal.SIGALRM, _on_alarm)
    real_stdout = sys.stdout
    for job in jobs:
        print(json.dumps({"starting": job["argv"]}), file=real_stdout, flush=True)
        result = run_job(job["argv"], limit)
        if result["status"] == 3:
            # The traceback, for the report: the same job again with TILEIR_TRACEBACK=1.
            os.environ["TILEIR_TRACEBACK"] = "1"
            try:
                result["traceback"] = run_job(job["argv"], limit)["stderr"]
            finally:
                del os.environ["TILEIR_TRACEBACK"]
        print(json.dumps({**job, **result}), file=real_stdout, flush=True)


if __name__ == "__main__":
    spec = json.loads(Path(sys.argv[1]).read_text())
    run_jobs(spec["jobs"], spec["limit"])
