"""Bytecode speed: decode, print and encode a large module, and `tileir disasm` against NVIDIA's tileirdisasm.

    python benchmarks/bytecode.py [--quick] [--repeat N] [--size-kb K] [--bytecode-version V]
                                  [--profile [N]] [--strict] [--keep DIR]

1. Builds one module holding at least --size-kb KB of bytecode written by our writer: the
   `entry` kernels of examples/*.tileir (project-owned, so no ../shared is needed) replicated
   under fresh symbol names (@vector_add_0, @vector_add_1, ...), grouped by kernel. The
   number of copies follows from the bytecode size of one and two copies, so the module is the
   same on every run. It is written to a temporary directory as big.tileir and big.tileirbc.
2. In this process, best of --repeat: decode (`read_bytecode`), decode + print
   (`print_module`), parse + verify + encode (`check_text` + `write_bytecode`) and parse +
   encode (`parse` + `write_bytecode`), each as MB/s of bytecode, lines/s and MB/s of text.
3. Whole processes, best of --repeat after one warm-up run (wall clock, and the process's
   user + system CPU time, which a loaded machine disturbs less): `python -m compiler disasm
   big.tileirbc` against the anchor, NVIDIA's `tileirdisasm big.tileirbc`, and their ratio
   (the goal of issue 5: at most 10x, judged on wall clock); `python -m compiler asm
   big.tileir -o OUT` (NVIDIA ships no text-to-bytecode command, so there is no anchor: time
   and throughput only); and `python -c pass`, the floor every Python process pays. Our
   processes keep their .pyc files in a temporary PYTHONPYCACHEPREFIX, as an installed tool
   has them (even where PYTHONDONTWRITEBYTECODE is set); a second disasm row shows the cost
   without them. Where the `disasm` or `asm` command does not exist, a `python -c` script
   doing the same in-process calls stands in and the table says so. Without tileirdisasm
   (pip `nvidia-cuda-tileiras`) the ratio is skipped with the reason.

4. The text path table of benchmarks/text.py (`text_path_report`): `tileir fmt`, `check` and
   `disasm` as whole processes on modules of at least 7,000 and 30,000 lines against
   `tileirdisasm`, with the targets of issue 17 (fmt and check at most 10x, disasm at most
   5x), and the start-up of each command on a one-kernel file (at most 0.1 s).

--quick builds a small module and runs everything once (a smoke test: the ratios are printed
but not judged, since interpreter start-up dominates a small file; the text path table only
for one small module). --strict makes a missed goal exit 1. --profile prints where the time
of a disasm process goes (start-up, imports, decode, print, and the garbage collector's share
of each) and cProfile's N (default 25) hottest functions of one decode + print. The default
run takes about five minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import math
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
sys.path.insert(0, str(REPO))

from benchmarks._common import disassembly_items, process_once, python_env, tool_version  # noqa: E402 - needs the repository on sys.path

GOAL_RATIO = 10.0  # `tileir disasm` / `tileirdisasm`, whole processes, at most
DEFAULT_SIZE_KB = 200
QUICK_SIZE_KB = 8

_ENTRY = re.compile(r"^(\s*)entry\s+@([\w$.-]+)\(")


# --------------------------------------------------------------------------------------------
# The big module


def kernel_bodies(files: list[Path]) -> list[tuple[str, list[str]]]:
    """(symbol, lines of the `entry` item, unindented) for each kernel in `files`, in order."""
    kernels: list[tuple[str, list[str]]] = []
    for path in files:
        current: list[str] | None = None
        indent = name = ""
        for line in path.read_text(encoding="utf-8").splitlines():
            match = _ENTRY.match(line)
            if current is None and match:
                indent, name = match.group(1), match.group(2)
                current = []
            if current is not None:
                current.append(line.removeprefix(indent) if line.startswith(indent) else line.lstrip())
                if line.rstrip() == indent + "}":
                    kernels.append((name, current))
                    current = None
    return kernels


def module_text(kernels: list[tuple[str, list[str]]], copies: int) -> str:
    """One `cuda_tile.module` with `copies` renamed copies of each kernel."""
    out = ["cuda_tile.module @bench {"]
    for name, body in kernels:
        for i in range(copies):
            out.append("  " + body[0].replace(f"@{name}(", f"@{name}_{i}(", 1))
            out.extend(("  " + line) if line else line for line in body[1:])
    out.append("}")
    return "\n".join(out) + "\n"


def encode_text(text: str, version: tuple[int, int]) -> bytes:
    """Parse, verify and write `text`; any diagnostic is fatal (the benchmark's input must be valid)."""
    from compiler.bytecode import write_bytecode
    from compiler.ir.diagnostics import has_errors
    from compiler.verify import check_text

    result, diagnostics = check_text(text, "big.tileir")
    if has_errors(diagnostics):
        first = next(d for d in diagnostics if d.is_error)
        raise SystemExit(f"benchmarks/bytecode.py: the generated module does not verify: {first.format()}")
    return write_bytecode(result.module, version)


@dataclass(slots=True)
class BigModule:
    text: str
    data: bytes
    copies: int
    kernels: list[str]

    @property
    def lines(self) -> int:
        return self.text.count("\n")


def build_module(size_kb: int, version: tuple[int, int]) -> BigModule:
    """The smallest number of copies whose bytecode reaches `size_kb` KB (1 KB = 1024 bytes)."""
    kernels = kernel_bodies(sorted(EXAMPLES.glob("*.tileir")))
    if not kernels:
        raise SystemExit(f"benchmarks/bytecode.py: no `entry` kernels found in {EXAMPLES}")
    target = size_kb * 1024
    one = len(encode_text(module_text(kernels, 1), version))
    two = len(encode_text(module_text(kernels, 2), version))
    per_copy = max(1, two - one)  # the string and type tables are shared, so extra copies cost less
    copies = max(1, math.ceil((target - one) / per_copy) + 1)
    while True:
        text = module_text(kernels, copies)
        data = encode_text(text, version)
        if len(data) >= target:
            return BigModule(text, data, copies, [name for name, _ in kernels])
        copies += max(1, math.ceil((target - len(data)) / per_copy))


# --------------------------------------------------------------------------------------------
# Timing


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    """The best time of `repeat` calls and the last result. The previous result is dropped and
    the garbage collected before each call, so that every call starts from the heap a fresh
    `tileir` process would have (the collector stays on, as it is in the command)."""
    times: list[float] = []
    result: object = None
    for _ in range(repeat):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


@dataclass(slots=True)
class ProcessRun:
    seconds: float  # wall clock, best run
    cpu_seconds: float  # user + system time of the process, best run (less sensitive to a loaded machine)
    stdout: bytes


def run_process(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> ProcessRun:
    """Best of `repeat` runs after one warm-up (file cache, the interpreter's .pyc files)."""
    captured = process_once(cmd, env, capture=True)[2]
    runs = [process_once(cmd, env) for _ in range(repeat)]
    return ProcessRun(min(w for w, _, _ in runs), min(c for _, c, _ in runs), captured)


# --------------------------------------------------------------------------------------------
# The table


@dataclass(slots=True)
class Row:
    what: str
    seconds: float
    bytecode_bytes: int | None = None  # bytecode read or written
    text_lines: int | None = None  # text printed or parsed
    text_bytes: int | None = None
    cpu_seconds: float | None = None  # whole processes only


def print_table(title: str, rows: list[Row]) -> None:
    processes = any(row.cpu_seconds is not None for row in rows)
    head = ["step", "ms"] + (["cpu ms"] if processes else []) + ["bytecode MB/s", "text lines/s", "text MB/s"]
    cells = [
        [row.what, f"{row.seconds * 1000:.1f}"]
        + ([f"{row.cpu_seconds * 1000:.1f}" if row.cpu_seconds is not None else "-"] if processes else [])
        + [
            f"{row.bytecode_bytes / row.seconds / 1e6:.2f}" if row.bytecode_bytes else "-",
            f"{row.text_lines / row.seconds:,.0f}" if row.text_lines else "-",
            f"{row.text_bytes / row.seconds / 1e6:.2f}" if row.text_bytes else "-",
        ]
        for row in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
    header = "  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths)))
    print(title)
    print(header)
    print("-" * len(header))
    for c in cells:
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(c, widths))))
    print()


# The phases of a `tileir disasm` process, timed inside a fresh interpreter (--profile): what
# `python -m compiler` imports, then the bytecode and text packages, the decode, the print and
# the write; the garbage collector's share through gc.callbacks.
_PHASES_SCRIPT = """
import time
t0 = time.perf_counter()
import gc, json, os, sys
spent = [0.0, 0.0]
def on_gc(phase, info):
    if phase == "start":
        spent[1] = time.perf_counter()
    else:
        spent[0] += time.perf_counter() - spent[1]
gc.callbacks.append(on_gc)
marks = []
def mark(name):
    marks.append((name, time.perf_counter(), spent[0]))
mark("start")
import compiler.cli
mark("import compiler.cli")
from compiler.bytecode import read_bytecode
mark("import compiler.bytecode")
from compiler.text import print_module
mark("import compiler.text")
data = open(sys.argv[1], "rb").read()
module = read_bytecode(data)
mark("decode")
text = print_module(module)
mark("print")
with open(os.devnull, "w", encoding="utf-8") as sink:
    sink.write(text)
mark("write")
print(json.dumps([(n, t - t0, g) for n, t, g in marks]))
"""


def profile_decode_print(data: bytes, top: int) -> None:
    from compiler.bytecode import read_bytecode
    from compiler.text import print_module

    # With the collector on, its pauses are charged to whichever function happens to allocate;
    # the phases of a process (below) give the collector's share instead.
    gc.collect()
    gc.disable()
    try:
        profiler = cProfile.Profile()
        profiler.enable()
        print_module(read_bytecode(data))
        profiler.disable()
    finally:
        gc.enable()
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(top)
    print(f"cProfile of one decode + print (collector off), {top} hottest functions by own time:")
    print(buffer.getvalue().rstrip())
    print()


def profile_phases(python: str, bc_path: Path, env: dict[str, str], repeat: int, floor: float) -> None:
    """Where the time of a disasm process goes: best of `repeat` for each phase."""
    best: dict[str, tuple[float, float]] = {}
    order: list[str] = []
    for _ in range(max(2, repeat)):  # the first run fills the .pyc cache
        proc = subprocess.run(
            [python, "-c", _PHASES_SCRIPT, str(bc_path)], capture_output=True, text=True, env=env, check=True
        )
        previous = (0.0, 0.0)
        order = []
        for name, at, in_gc in json.loads(proc.stdout):
            step = (at - previous[0], in_gc - previous[1])
            previous = (at, in_gc)
            if name == "start":
                continue
            order.append(name)
            if name not in best or step[0] < best[name][0]:
                best[name] = step
    print("phases of a disasm process (best of each; `gc` is the collector's share of the phase):")
    print(f"  {'interpreter start-up (python -c pass)':40s} {floor * 1000:8.1f} ms")
    for name in order:
        seconds, in_gc = best[name]
        print(f"  {name:40s} {seconds * 1000:8.1f} ms   gc {in_gc * 1000:6.1f} ms")
    print()


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))  # the first paragraph
    ap.add_argument("--quick", action="store_true", help=f"a {QUICK_SIZE_KB} KB module, run once (a smoke test)")
    ap.add_argument("--repeat", type=int, help="best of N (default 5; 1 with --quick)")
    ap.add_argument("--size-kb", type=int, help=f"bytecode size at least K KB (default {DEFAULT_SIZE_KB})")
    ap.add_argument("--bytecode-version", default="13.3", help="the version our writer writes (default 13.3)")
    ap.add_argument(
        "--profile",
        type=int,
        nargs="?",
        const=25,
        default=0,
        metavar="N",
        help="print the phases of a disasm process and cProfile's N (default 25) hottest functions of decode + print",
    )
    ap.add_argument("--strict", action="store_true", help=f"exit 1 when disasm / tileirdisasm > {GOAL_RATIO:g}x")
    ap.add_argument("--keep", type=Path, help="write big.tileir / big.tileirbc here instead of a temporary dir")
    args = ap.parse_args(argv)

    from compiler.bytecode import parse_version, read_bytecode, write_bytecode
    from compiler.text import parse, print_module
    from compiler.verify import check_text

    version = parse_version(args.bytecode_version)
    if version is None:
        ap.error(f"--bytecode-version: cannot read {args.bytecode_version!r} (e.g. 13.3)")
    repeat = max(1, args.repeat if args.repeat is not None else (1 if args.quick else 5))
    size_kb = args.size_kb if args.size_kb is not None else (QUICK_SIZE_KB if args.quick else DEFAULT_SIZE_KB)
    if size_kb < 1:
        ap.error("--size-kb: at least 1")

    big = build_module(size_kb, version)
    text_bytes = len(big.text.encode("utf-8"))
    mode = " (--quick)" if args.quick else ""
    print(
        f"bytecode benchmark{mode}: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}, best of {repeat}"
    )
    print(
        f"module: {len(big.data):,} bytes of bytecode {args.bytecode_version} (our writer), "
        f"{big.lines:,} lines / {text_bytes:,} bytes of text; "
        f"{big.copies} copies each of {', '.join('@' + k for k in big.kernels)} (from examples/)"
    )
    print()

    # ---- in this process ---------------------------------------------------------------------
    t_decode, _ = best_of(repeat, lambda: read_bytecode(big.data))
    t_decode_print, printed = best_of(repeat, lambda: print_module(read_bytecode(big.data)))
    printed_text = str(printed)
    printed_lines = printed_text.count("\n")

    def parse_verify_encode() -> bytes:
        result, _ = check_text(big.text, "big.tileir")
        return write_bytecode(result.module, version)

    def parse_encode() -> bytes:
        return write_bytecode(parse(big.text, "big.tileir").module, version)

    t_pve, encoded = best_of(repeat, parse_verify_encode)
    t_pe, _ = best_of(repeat, parse_encode)
    notes: list[str] = []
    if encoded != big.data:
        notes.append("encoding the same text twice gave different bytes")
    n = len(big.data)
    print_table(
        "in this process:",
        [
            Row("decode (read_bytecode)", t_decode, n),
            Row("decode + print", t_decode_print, n, printed_lines, len(printed_text.encode("utf-8"))),
            Row("parse + verify + encode", t_pve, n, big.lines, text_bytes),
            Row("parse + encode", t_pe, n, big.lines, text_bytes),
        ],
    )
    if args.profile:
        profile_decode_print(big.data, args.profile)

    # ---- whole processes ---------------------------------------------------------------------
    tmp_ctx = tempfile.TemporaryDirectory(prefix="tileir-bc-bench-")
    work = args.keep or Path(tmp_ctx.name)
    work.mkdir(parents=True, exist_ok=True)
    tileir_path = work / "big.tileir"
    bc_path = work / "big.tileirbc"
    asm_out = work / "asm-out.tileirbc"
    tileir_path.write_text(big.text, encoding="utf-8")
    bc_path.write_bytes(big.data)
    python = sys.executable
    missed = False
    # Imported only now: compiler.runtime brings NumPy, whose objects would slow the collector
    # during the in-process timings above.
    from compiler.runtime import find_tileirdisasm

    try:
        with tempfile.TemporaryDirectory(prefix="tileir-bc-bench-pyc-") as pycache:
            env = python_env(Path(pycache))
            disasm_label, disasm_cmd = "tileir disasm", [python, "-m", "compiler", "disasm", str(bc_path)]
            asm_label = "tileir asm"
            asm_cmd = [python, "-m", "compiler", "asm", str(tileir_path), "-o", str(asm_out)]
            asm_cmd += ["--bytecode-version", args.bytecode_version]

            floor = run_process([python, "-c", "pass"], repeat, env)
            ours = run_process(disasm_cmd, repeat, env)
            cold = run_process(disasm_cmd, repeat, python_env(None))
            asm = run_process(asm_cmd, repeat, env)
            ours_lines = ours.stdout.count(b"\n")
            if asm_out.read_bytes() != big.data:
                notes.append(f"{asm_label} wrote bytes different from the in-process writer's")
            rows = [
                Row("python -c pass (start-up floor)", floor.seconds, cpu_seconds=floor.cpu_seconds),
                Row(f"{disasm_label} big.tileirbc", ours.seconds, n, ours_lines, len(ours.stdout), ours.cpu_seconds),
                Row("  the same without .pyc files", cold.seconds, n, ours_lines, len(ours.stdout), cold.cpu_seconds),
            ]
            anchor = find_tileirdisasm()
            ratio_line = (
                "ratio skipped: tileirdisasm not found (pip install nvidia-cuda-tileiras, "
                "or pip install -e '.[bench]'; or set TILEIRDISASM)"
            )
            if anchor is not None:
                theirs = run_process([anchor, str(bc_path)], repeat)
                rows.append(
                    Row(
                        "tileirdisasm big.tileirbc",
                        theirs.seconds,
                        n,
                        theirs.stdout.count(b"\n"),
                        len(theirs.stdout),
                        theirs.cpu_seconds,
                    )
                )
                ratio = ours.seconds / theirs.seconds
                judged = not args.quick
                verdict = ("ok" if ratio <= GOAL_RATIO else "MISS") if judged else "not judged with --quick"
                missed = judged and ratio > GOAL_RATIO
                ratio_line = (
                    f"ratio: {disasm_label} / tileirdisasm = {ratio:.1f}x (goal <= {GOAL_RATIO:g}x: {verdict}; "
                    f"CPU time ratio {ours.cpu_seconds / max(theirs.cpu_seconds, 1e-6):.1f}x; "
                    f"anchor: NVIDIA tileirdisasm {tool_version(anchor)}, same file, same run)"
                )
                ours_items, theirs_items = disassembly_items(ours.stdout), disassembly_items(theirs.stdout)
                if ours_items == theirs_items:
                    notes.append(f"the two disassemblies are identical ({len(ours_items):,} lines, indentation aside)")
                else:
                    differ = sum(a != b for a, b in zip(ours_items, theirs_items))
                    differ += abs(len(ours_items) - len(theirs_items))
                    notes.append(
                        f"the two disassemblies differ on {differ:,} of "
                        f"{max(len(ours_items), len(theirs_items)):,} lines (indentation aside)"
                    )
            rows.append(Row(f"{asm_label} big.tileir", asm.seconds, n, big.lines, text_bytes, asm.cpu_seconds))
            print_table(f"whole processes (best of {repeat}, after a warm-up run that fills the .pyc cache):", rows)
            print(ratio_line)
            if args.profile:
                print()
                profile_phases(python, bc_path, env, repeat, floor.seconds)
    finally:
        tmp_ctx.cleanup()
    for note in notes:
        print(f"note: {note}")
    print()
    # The targets of issue 17 (the same table as benchmarks/text.py prints): fmt, check and
    # disasm as whole processes on 7,000- and 30,000-line modules, and start-up.
    from benchmarks.text import QUICK_SIZES, text_path_report

    sizes = QUICK_SIZES[:1] if args.quick else None
    text_missed = text_path_report(
        sizes if sizes is not None else text_path_sizes(), repeat, judged=not args.quick, version=version
    )
    return 1 if args.strict and (missed or text_missed) else 0


def text_path_sizes() -> tuple[int, ...]:
    from benchmarks.text import DEFAULT_SIZES

    return DEFAULT_SIZES


if __name__ == "__main__":
    sys.exit(main())
