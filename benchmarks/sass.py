"""Code quality: our cubin beside NVIDIA tileiras' cubin, kernel by kernel (registers, spills,
shared memory, SASS instruction counts by class).

    python benchmarks/sass.py [--quick] [--arch sm_90[,sm_100,...]] [--only NAME,...] [--keep DIR]
                              [--zoo] [--ops] [--large]

Kernels: examples/*.tileir and, when ../shared exists, ../shared/samples/*.tileir. Each is written
as bytecode 13.3 by our writer; tileiras compiles that file (`tileiras --gpu-name ARCH -o
K.cubin K.tileirbc`), ours compiles the same module (`compiler.lower.compile`, a fresh cache).
Both cubins are read the same way (`compiler.lower.sass`: the resources the cubin declares, as
`cuobjdump -res-usage` prints them, and `cuobjdump -sass`):

    registers        per thread (REG)
    stack+local B    bytes of stack frame and local memory per thread: spills (and local arrays)
    LDL/STL          local-memory instructions
    shared B         static shared memory (SHARED) plus, for ours, the dynamic shared memory
                     Triton's launch asks for (tileiras' cubins declare theirs statically)
    instructions     every SASS instruction but NOP
    tensor core ...  the classes of compiler.lower.sass (HMMA/HGMMA/UTC*MMA, TMA, LDG by width, ...)

and the ratio ours/tileiras where both are non-zero. Nothing is judged (there are no targets
for code quality; fewer instructions is not always faster): the tables are for reading. The exit
status is 1 when a kernel does not compile with either compiler. --quick: the examples only,
sm_90. The default run (6 kernels, sm_90) takes about 30 s.

--zoo: then the ~40 kernels of tests/runtime/cutile_zoo.py (cuTile Python's API, from norms and
attention to atomics and conversions; needs pip cuda-tile), each exported by cuTile for its
test's arguments, one line each: registers, stack, instructions, tensor-core instructions and
barriers of both cubins, and the ratio of instructions. A tileiras refusal the zoo expects
(a type the target lacks) is shown as such, not a failure. About 60 s more per architecture.

--ops: then one kernel per op and element type (`op_kernels`: float arithmetic in every
rounding mode, math functions, integer ops in both signednesses), one line each, worst
ratio of instructions first, and how many have at most tileiras' instructions. About 5
minutes more per architecture (~200 kernels). `--only op/remf-f32,op/divi-s-i64` picks some.

--large: then five one-op kernels (addf, exp, divf, sin, pow) on 128x128 f32 tiles, as
--ops prints them (`op/addf-f32-128x128`, ...). There tileiras loops over each thread's 128
elements, and so does our code since it computes such tiles in slices
(compiler/lower/stripmine.py; `TILEIR_STRIPMINE=off` shows the whole tiles, which ptxas got
unrolled, every copy of the op). About 15 s more per architecture.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BYTECODE_VERSION = (13, 3)


@dataclass(slots=True)
class Side:
    """What one compiler made of one kernel (or why it made nothing)."""

    error: str | None = None
    registers: int | None = None
    stack_local: int | None = None
    shared: int | None = None
    counts: object | None = None  # compiler.lower.sass.SassCounts


def describe(cubin: bytes, dynamic_shared: int = 0) -> Side:
    from compiler.lower.sass import resources, sass_counts

    res = resources(cubin)
    counts = sass_counts(cubin)
    return Side(
        None,
        max((r.registers for r in res), default=0),
        sum(r.stack + r.local for r in res),
        sum(r.shared for r in res) + dynamic_shared,
        counts,
    )


def ours(source: Path, arch: str) -> Side:
    from compiler.lower import LowerError, compile
    from compiler.runtime import load_module

    try:
        k = compile(load_module(str(source)), None, arch, use_cache=False)
    except LowerError as exc:
        return Side(error=exc.report())
    return describe(k.cubin, k.shared)


def theirs(tileiras: str | None, bytecode: Path | None, arch: str, out: Path) -> Side:
    if tileiras is None:
        return Side(error="tileiras not found (pip install nvidia-cuda-tileiras, or set TILEIRAS)")
    if bytecode is None:
        return Side(error="no bytecode")
    proc = subprocess.run(  # (TMPDIR: the `tileir-XXXXXX.o` it leaves where it fails goes with `out`)
        [tileiras, "--gpu-name", arch, "-o", str(out), str(bytecode)],
        capture_output=True, text=True, timeout=600, env={**os.environ, "TMPDIR": str(out.parent)},
    )  # fmt: skip
    if proc.returncode != 0 or not out.exists():
        # Its first error says why ("... error: Incompatibility with architecture 'sm_90':
        # unsupported type ..."; a location first); the last, only that it failed.
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        why = next((ln.split("error: ", 1)[1] for ln in lines if "error: " in ln), lines[-1] if lines else "")
        return Side(error=f"tileiras failed: {why[:300] or proc.returncode}")
    return describe(out.read_bytes())


def rows_of(a: Side, b: Side) -> list[list[str]]:
    """The side-by-side rows: metric, ours, tileiras, ours/tileiras."""
    from compiler.lower.sass import CLASSES

    def cell(x: int | None) -> str:
        return "-" if x is None else f"{x:,}"

    def ratio(x: int | None, y: int | None) -> str:
        return f"{x / y:.2f}" if x and y else ""

    def count(side: Side, f) -> int | None:
        return None if side.counts is None else f(side.counts)

    metrics: list[tuple[str, object]] = [
        ("registers", lambda s: s.registers),
        ("stack+local B (spills)", lambda s: s.stack_local),
        ("LDL/STL", lambda s: count(s, lambda c: c.classes["local"])),
        ("shared B", lambda s: s.shared),
        ("instructions", lambda s: count(s, lambda c: c.total)),
    ]
    for cls in CLASSES:
        if cls == "local":
            continue
        metrics.append((cls.replace("_", " "), lambda s, cls=cls: count(s, lambda c: c.classes[cls])))
        if cls in ("global_load", "global_store"):
            widths = sorted({*(getattr(a.counts, cls + "s", {}) or {}), *(getattr(b.counts, cls + "s", {}) or {})})
            for bits in widths:
                metrics.append(
                    (f"  {bits}-bit", lambda s, cls=cls, bits=bits: count(s, lambda c: getattr(c, cls + "s")[bits]))
                )
    out = []
    for name, f in metrics:
        x, y = f(a), f(b)  # type: ignore[operator]
        if name.startswith(" ") or x or y or name in ("registers", "stack+local B (spills)", "instructions"):
            out.append([name, cell(x), cell(y), ratio(x, y)])
    return out


def print_block(title: str, rows: list[list[str]]) -> None:
    head = ["", "ours", "tileiras", "ours/tileiras"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(title)
    line = "  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))))
    print()


def zoo(arches: list[str], tileiras: str | None, work: Path, failed: list[str], only: set[str] | None) -> None:
    """The one-line comparisons of --zoo (module doc), of the kernels `only` names (`name` or
    `zoo/name`; None: all); failures appended to `failed`."""
    import numpy as np

    try:
        from compiler.runtime.cutile import export_cutile
        from tests.runtime.cutile_zoo import CASES
    except ImportError as exc:  # (cuTile Python is not installed)
        failed.append(f"--zoo: cannot import the zoo: {exc} (pip install cuda-tile)")
        return
    files = []
    for case in CASES:
        if only is not None and case.name not in only and f"zoo/{case.name}" not in only:
            continue
        _, launch_args, _ = case.make(np.random.default_rng(0))
        path = work / f"zoo__{case.name}.tileirbc"
        try:
            path.write_bytes(export_cutile(case.kernel, launch_args)[0])
        except Exception as exc:  # noqa: BLE001 - reported below
            failed.append(f"zoo/{case.name}: cuTile cannot export it: {exc}")
            continue
        files.append((case, path))
    head = f"{'':22}{'ours':>27}  {'tileiras':>27}  instructions"
    cols = f"{'kernel':22}" + f"{'regs':>6}{'stack':>6}{'instr':>6}{'tc':>4}{'bar':>5}" * 2 + "  ours/tileiras"
    for arch in arches:
        print(f"cuTile zoo (tests/runtime/cutile_zoo.py), {arch}:")
        print(head)
        print(cols)
        print("-" * len(cols))
        for case, path in files:
            a = ours(path, arch)
            b = theirs(tileiras, path, arch, path.with_suffix(f".{arch}.cubin"))
            expected = case.tileiras_refuses.get(arch)
            if b.error and expected and expected in b.error:
                b = Side(error=_EXPECTED_REFUSAL)
            for who, side in (("ours", a), ("tileiras", b)):
                if side.error and side.error != _EXPECTED_REFUSAL:
                    failed.append(f"zoo/{case.name} {arch}: {who}: {side.error}")
            ratio = ""
            if a.counts is not None and b.counts is not None and b.counts.total:  # type: ignore[attr-defined]
                ratio = f"{a.counts.total / b.counts.total:.2f}"  # type: ignore[attr-defined]
            print(f"{case.name[:22]:22}{_zoo_cells(a)}{_zoo_cells(b)}  {ratio:>13}")
        print()


_EXPECTED_REFUSAL = "refused (expected)"


def op_kernels() -> list[tuple[str, str, list[str]]]:
    """The --ops kernels: (name, element type, body) for tests.lower.harness.kernel_text, one
    op on 256-element tiles %a and %b (f32/f16/bf16/f64 float ops in every rounding mode
    they take, i8/i16/i32/i64 integer ops in both signednesses)."""
    out: list[tuple[str, str, list[str]]] = []
    for t in ("f32", "f16", "bf16", "f64"):
        tile = f"tile<256x{t}>"
        for op in ("addf", "subf", "mulf", "divf", "maxf", "minf", "remf", "pow", "atan2"):
            out.append((f"{op}-{t}", t, [f"%r_r = {op} %a, %b : {tile}"]))
        for op in ("negf", "absf", "sqrt", "ceil", "floor", "exp", "exp2", "log", "log2", "sin", "cos", "tan"):
            out.append((f"{op}-{t}", t, [f"%r_r = {op} %a : {tile}"]))
        for op in ("rsqrt", "tanh", "sinh", "cosh"):
            out.append((f"{op}-{t}", t, [f"%r_r = {op} %a : {tile}"]))
        out.append((f"fma-{t}", t, [f"%r_r = fma %a, %b, %a : {tile}"]))
        for mode, short in (("zero", "rz"), ("negative_inf", "rm"), ("positive_inf", "rp")):
            for op in ("addf", "mulf", "divf"):
                out.append((f"{op}-{short}-{t}", t, [f"%r_r = {op} %a, %b rounding<{mode}> : {tile}"]))
            out.append((f"fma-{short}-{t}", t, [f"%r_r = fma %a, %b, %a rounding<{mode}> : {tile}"]))
    for t in ("i8", "i16", "i32", "i64"):
        tile = f"tile<256x{t}>"
        for op in ("addi", "subi", "muli", "andi", "xori", "mulhii", "shli"):
            out.append((f"{op}-{t}", t, [f"%r_r = {op} %a, %b : {tile}"]))
        for sign in ("signed", "unsigned"):
            for op in ("maxi", "mini", "divi", "remi", "shri"):
                out.append((f"{op}-{sign[0]}-{t}", t, [f"%r_r = {op} %a, %b {sign} : {tile}"]))
        for op in ("negi", "absi"):
            out.append((f"{op}-{t}", t, [f"%r_r = {op} %a : {tile}"]))
    return out


def large_kernels() -> list[tuple[str, str, list[str]]]:
    """The --large kernels: one f32 op on 128x128 tiles, as op_kernels' (module doc)."""
    operands = {"addf": "%a, %b", "exp": "%a", "divf": "%a, %b", "sin": "%a", "pow": "%a, %b"}
    return [(f"{op}-f32-128x128", "f32", [f"%r_r = {op} {args} : tile<128x128xf32>"]) for op, args in operands.items()]


def ops(
    arches: list[str],
    tileiras: str | None,
    work: Path,
    failed: list[str],
    only: set[str] | None,
    kernels: list[tuple[str, str, list[str]]] | None = None,
    shape: tuple[int, ...] = (256,),
) -> None:
    """The one-line comparisons of --ops (module doc), of the kernels `only` names (`op/name`;
    None: all), worst ratio first; failures appended to `failed`. `kernels` and `shape`:
    another set of one-op kernels, on tiles of that shape (--large)."""
    from compiler.bytecode import write_bytecode
    from compiler.runtime import load_module
    from tests.lower.harness import kernel_text

    files = []
    for name, t, body in op_kernels() if kernels is None else kernels:
        if only is not None and f"op/{name}" not in only:
            continue
        path = work / f"op__{name}.tileir"
        path.write_text(kernel_text([("a", t), ("b", t)], [("r", t)], body, shape))
        bytecode = path.with_suffix(".tileirbc")
        bytecode.write_bytes(write_bytecode(load_module(str(path)), BYTECODE_VERSION))
        files.append((name, path, bytecode))
    for arch in arches:
        rows = []
        for name, path, bytecode in files:
            a = ours(path, arch)
            b = theirs(tileiras, bytecode, arch, path.with_suffix(f".{arch}.cubin"))
            for who, side in (("ours", a), ("tileiras", b)):
                if side.error:
                    failed.append(f"op/{name} {arch}: {who}: {side.error}")
            if a.counts is not None and b.counts is not None and b.counts.total:  # type: ignore[attr-defined]
                rows.append((a.counts.total / b.counts.total, name, a, b))  # type: ignore[attr-defined]
        rows.sort(key=lambda r: (-r[0], r[1]))
        where = f"{shape[0]}-element" if len(shape) == 1 else "x".join(map(str, shape))
        print(f"One op on {where} tiles, {arch} (worst ratio first):")
        cols = f"{'op':20}{'regs':>6}{'stack':>6}{'instr':>6}  {'regs':>6}{'stack':>6}{'instr':>6}  ours/tileiras"
        print(f"{'':20}{'ours':>18}  {'tileiras':>18}")
        print(cols)
        print("-" * len(cols))
        for ratio, name, a, b in rows:
            cells = [f"{s.registers:>6}{s.stack_local:>6}{s.counts.total:>6}" for s in (a, b)]  # type: ignore[attr-defined]
            print(f"{name:20}{cells[0]}  {cells[1]}  {ratio:>13.2f}")
        above = sum(r[0] > 1 for r in rows)
        print(f"{len(rows)} ops: {len(rows) - above} with at most tileiras' instructions, {above} with more\n")


def _zoo_cells(side: Side) -> str:
    """One compiler's columns of a --zoo line (27 characters): registers, stack, instructions,
    tensor-core instructions, barriers; or why there are none."""
    if side.error or side.counts is None:
        return f"{(side.error or '-')[:27]:>27}"
    c = side.counts.classes  # type: ignore[attr-defined]
    total = side.counts.total  # type: ignore[attr-defined]
    return f"{side.registers:>6}{side.stack_local:>6}{total:>6}{c['tensor_core']:>4}{c['barrier']:>5}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))  # the first paragraph
    ap.add_argument("--quick", action="store_true", help="the examples only (a smoke test)")
    ap.add_argument("--arch", default="sm_90", help="comma-separated architectures (default sm_90)")
    ap.add_argument("--only", help="comma-separated kernel names (vector_add, samples/vadd, zoo/layernorm, ...)")
    ap.add_argument("--keep", type=Path, help="keep the bytecode files and tileiras' cubins here")
    ap.add_argument("--zoo", action="store_true", help="also the cuTile kernels of tests/runtime/cutile_zoo.py")
    ap.add_argument("--ops", action="store_true", help="also one kernel per op and type (add, remf, divi, ...)")
    ap.add_argument("--large", action="store_true", help="also one-op kernels on 128x128 f32 tiles (addf, pow, ...)")
    args = ap.parse_args(argv)

    from compiler.bytecode import write_bytecode
    from compiler.lower import triton_version
    from compiler.lower.build import tool_path
    from compiler.lower.sass import find_tileiras
    from compiler.runtime import load_module
    from tests.corpus import example_files, sample_files

    if triton_version() is None or tool_path("cuobjdump") is None:
        print("benchmarks/sass.py: needs Triton (pip install -e '.[bench]'), whose wheel ships cuobjdump")
        return 1
    arches = [a.strip() for a in args.arch.split(",") if a.strip()]
    files = [("examples", p) for p in example_files()]
    if not args.quick:
        files += [("samples", p) for p in sample_files()]
    only = {s.strip() for s in args.only.split(",")} if args.only else None
    if only is not None:
        files = [(d, p) for d, p in files if p.stem in only or f"{d}/{p.stem}" in only]
    tileiras = find_tileiras()
    tmp_ctx = tempfile.TemporaryDirectory(prefix="tileir-sass-bench-")
    work = args.keep or Path(tmp_ctx.name)
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"SASS of our cubins beside tileiras' ({', '.join(arches)}; Triton {triton_version()}, "
        f"{'tileiras ' + tileiras if tileiras else 'tileiras not found'})"
    )
    print()
    failed: list[str] = []
    old_cache = os.environ.get("TILEIR_CACHE_DIR")
    try:
        os.environ["TILEIR_CACHE_DIR"] = str(work / "cache")  # nothing of an earlier run is reused
        for folder, path in files:
            name = f"{folder}/{path.stem}"
            bytecode: Path | None = work / f"{folder}__{path.stem}.tileirbc"
            try:
                bytecode.write_bytes(write_bytecode(load_module(str(path)), BYTECODE_VERSION))
            except Exception as exc:  # noqa: BLE001 - reported below
                failed.append(f"{name}: cannot write its bytecode: {exc}")
                bytecode = None
            for arch in arches:
                a = ours(path, arch)
                b = theirs(tileiras, bytecode, arch, work / f"{folder}__{path.stem}.{arch}.cubin")
                for who, side in (("ours", a), ("tileiras", b)):
                    if side.error:
                        failed.append(f"{name} {arch}: {who}: {side.error}")
                print_block(f"{name}, {arch}:", rows_of(a, b))
        if args.zoo:
            zoo(arches, tileiras, work, failed, only)
        if args.ops:
            ops(arches, tileiras, work, failed, only)
        if args.large:
            ops(arches, tileiras, work, failed, only, large_kernels(), (128, 128))
    finally:
        if old_cache is None:
            os.environ.pop("TILEIR_CACHE_DIR", None)
        else:
            os.environ["TILEIR_CACHE_DIR"] = old_cache
        if args.keep is None:
            tmp_ctx.cleanup()
    for f in failed:
        print(f"FAILED: {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
