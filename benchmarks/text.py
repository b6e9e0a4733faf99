"""Text speed: parse and print a large module, and `tileir fmt` against NVIDIA's tileirdisasm.

    python benchmarks/text.py [--min-lines 7000] [--repeat 5] [--keep DIR]

1. Builds one `cuda_tile.module` of at least --min-lines lines by replicating the sample
   kernels (../shared/samples/*.tileir, or examples/*.tileir when shared/ is absent) with
   renamed symbols (@vadd_0, @vadd_1, ...), then times parse and print in this process
   (best of --repeat) and prints lines/s and MB/s for each step.
   Verification of the same module is timed too, and its ratio to parsing printed (the goal
   is at most 1: verifying costs no more than parsing).
2. The ratio against the anchor: `python -m compiler fmt big.tileir` (whole process) versus
   `tileirdisasm big.tileirbc` (whole process), both best of --repeat, in this run. The
   anchor needs the same module as bytecode. Our bytecode writer does not exist yet (issue 5),
   so the bytecode comes from cuTile Python (pip `cuda-tile`), which compiles the same three
   kernels (its output disassembles to exactly the samples) into one bytecode module with one
   function per renamed symbol; tileirdisasm comes from pip `nvidia-cuda-tileiras`
   (`pip install -e '.[bench]'`). Where either is missing, the ratio is skipped with the reason.

Runs in well under a minute on a 2-core machine.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_SAMPLES = REPO.parent / "shared" / "samples"
EXAMPLES = REPO / "examples"
sys.path.insert(0, str(REPO))

_ENTRY = re.compile(r"^(\s*)entry\s+@([\w$.-]+)", re.M)


# --------------------------------------------------------------------------------------------
# The big module


def _kernel_bodies(files: list[Path]) -> list[tuple[str, list[str]]]:
    """(symbol, lines of the `entry` item, unindented) for each kernel in `files`."""
    kernels: list[tuple[str, list[str]]] = []
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        current: list[str] | None = None
        indent = ""
        name = ""
        for line in lines:
            m = _ENTRY.match(line)
            if current is None and m:
                indent, name = m.group(1), m.group(2)
                current = []
            if current is not None:
                current.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
                if line.rstrip() == indent + "}":
                    kernels.append((name, current))
                    current = None
    return kernels


def build_module(files: list[Path], min_lines: int) -> tuple[str, list[tuple[str, int]], int]:
    """The module text, the (kernel, copies) plan and its line count."""
    kernels = _kernel_bodies(files)
    if not kernels:
        raise SystemExit(f"benchmarks/text.py: no `entry` kernels found in {files}")
    per_round = sum(len(body) for _, body in kernels)
    copies = max(1, math.ceil((min_lines - 2) / per_round))
    out = ["cuda_tile.module @bench {"]
    # Grouped by kernel (all @vadd_i, then all @softmax_i, ...) like the bytecode below.
    for name, body in kernels:
        for i in range(copies):
            first = body[0].replace(f"@{name}(", f"@{name}_{i}(", 1)
            out.append("  " + first)
            out.extend(("  " + line) if line else line for line in body[1:])
    out.append("}")
    text = "\n".join(out) + "\n"
    return text, [(name, copies) for name, _ in kernels], text.count("\n")


# --------------------------------------------------------------------------------------------
# Timing


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    times: list[float] = []
    result: object = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def run_process(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    def once() -> None:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-500:]!r}")

    once()  # warm the file cache
    return best_of(repeat, once)[0]


def rate(lines: int, size: int, seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms  {lines / seconds:12,.0f} lines/s  {size / seconds / 1e6:7.2f} MB/s"


# --------------------------------------------------------------------------------------------
# The anchor: tileirdisasm on the same module as bytecode


def find_tileirdisasm() -> str | None:
    found = shutil.which("tileirdisasm")
    if found:
        return found
    try:
        import nvidia  # namespace package of NVIDIA's pip wheels
    except ImportError:
        nvidia = None
    if nvidia is not None:
        for base in getattr(nvidia, "__path__", []):
            for candidate in sorted(Path(base).glob("*/bin/tileirdisasm")):
                if os.access(candidate, os.X_OK):
                    return str(candidate)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home and os.access(Path(home) / "bin" / "tileirdisasm", os.X_OK):
            return str(Path(home) / "bin" / "tileirdisasm")
    return None


def tool_version(tool: str) -> str:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown version"
    text = out.stdout + out.stderr
    m = re.search(r"\bV(\d+(?:\.\d+)+)", text) or re.search(r"(\d+\.\d+(?:\.\d+)*)", text)
    return m.group(1) if m else "unknown version"


def cutile_bytecode(plan: list[tuple[str, int]], version: str) -> bytes:
    """One bytecode module holding copies of the sample kernels, compiled by cuTile Python.

    Uses cuTile's internal compile pipeline to put several kernels in one module (its public
    `export_kernel` takes one kernel); raises ImportError/AttributeError when that changes.
    """
    import cuda.tile as ct
    from cuda.tile import _compile as C
    from cuda.tile.compilation import ArrayConstraint, CallingConvention, KernelSignature

    def vadd(a, b, c):
        bid = ct.bid(0)
        x = ct.load(a, index=(bid,), shape=(1024,))
        y = ct.load(b, index=(bid,), shape=(1024,))
        ct.store(c, index=(bid,), tile=x + y)

    def softmax(x, y):
        bid = ct.bid(0)
        t = ct.load(x, index=(bid, 0), shape=(1, 1024), padding_mode=ct.PaddingMode.NEG_INF)
        m = ct.max(t, axis=1, keepdims=True)
        e = ct.exp(t - m)
        s = ct.sum(e, axis=1, keepdims=True)
        ct.store(y, index=(bid, 0), tile=e / s)

    def matmul(a, b, c):
        bx = ct.bid(0)
        by = ct.bid(1)
        num_k = ct.num_tiles(a, axis=1, shape=(128, 32))
        acc = ct.full((128, 128), 0, dtype=ct.float32)
        for k in range(num_k):
            ta = ct.load(a, index=(bx, k), shape=(128, 32), padding_mode=ct.PaddingMode.ZERO)
            tb = ct.load(b, index=(k, by), shape=(32, 128), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(ta, tb, acc)
        ct.store(c, index=(bx, by), tile=ct.astype(acc, ct.float16))

    kernels = {
        "vadd": (vadd, ct.float32, 1, 3),
        "softmax": (softmax, ct.float32, 2, 2),
        "matmul": (matmul, ct.float16, 2, 3),
    }
    cc = CallingConvention.cutile_python_v1()
    bc_version = C.parse_bytecode_version(version)
    keepers = []
    for name, copies in plan:
        if name not in kernels:
            raise KeyError(f"no cuTile source for kernel @{name}")
        fn, dtype, ndim, nargs = kernels[name]
        fn.__name__ = fn.__qualname__ = name
        kernel = ct.kernel(fn)
        array = ArrayConstraint(
            dtype,
            ndim,
            index_dtype=ct.int32,
            stride_lower_bound_incl=0,
            alias_groups=(),
            may_alias_internally=False,
        )
        sigs = [KernelSignature([array] * nargs, cc, symbol=f"{name}_{i}") for i in range(copies)]
        ann = kernel._annotated_function
        hir = C.get_function_hir(ann.pyfunc, mode=C.HirMode.ENTRY_POINT)
        keeper = C._IrKeeper(
            ann_func=ann,
            func_hir=hir,
            signatures=sigs,
            bytecode_version=bc_version,
            sm_arch=None,
            log_cutile_ir=False,
            keep_all=False,
        )
        keepers.append((kernel, keeper))
    buf = bytearray()
    total = sum(k.num_signatures for _, k in keepers)
    with C.bc.write_bytecode(num_functions=total, buf=buf, version=bc_version) as writer:
        for kernel, keeper in keepers:
            for i in range(keeper.num_signatures):
                C.generate_bytecode_for_kernel(
                    keeper.get_final_ir(i),
                    keeper.get_dataflow_result(i),
                    keeper.signatures[i].symbol,
                    kernel._compiler_options,
                    None,
                    writer,
                    anonymize_debug_attr=False,
                )
    return bytes(buf)


def our_bytecode(big_tileir: Path, out: Path) -> bool:
    """Our own writer, once `tileir translate` exists (issue 5)."""
    from compiler.cli import has_command, main

    if not has_command("translate"):
        return False

    return main(["translate", "--mlir-to-tilebc", str(big_tileir), "-o", str(out)]) == 0


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-lines", type=int, default=7000)
    ap.add_argument("--repeat", type=int, default=5, help="best of N (default 5)")
    ap.add_argument("--bytecode-version", default="13.3")
    ap.add_argument("--keep", type=Path, help="write big.tileir / big.tileirbc here")
    args = ap.parse_args(argv)

    from compiler.text import parse, print_module
    from compiler.verify import verify

    files = sorted(SHARED_SAMPLES.glob("*.tileir")) if SHARED_SAMPLES.is_dir() else []
    source = "../shared/samples"
    if not files:
        files, source = sorted(EXAMPLES.glob("*.tileir")), "examples/ (shared/ is absent)"
    text, plan, lines = build_module(files, args.min_lines)
    size = len(text.encode("utf-8"))
    kernels = ", ".join(f"{copies} x @{name}" for name, copies in plan)
    print(f"module: {lines:,} lines, {size / 1e6:.2f} MB; {kernels} (from {source})")

    t_parse, result = best_of(args.repeat, lambda: parse(text, "big.tileir"))
    errors = [d for d in result.diagnostics if d.is_error]  # type: ignore[attr-defined]
    if errors:
        print(f"warning: {len(errors)} parse errors; first: {errors[0].format()}")
    module = result.module  # type: ignore[attr-defined]
    t_print, printed = best_of(args.repeat, lambda: print_module(module))
    t_verify, found = best_of(args.repeat, lambda: verify(module))
    print(f"parse  (best of {args.repeat}): {rate(lines, size, t_parse)}")
    print(f"print  (best of {args.repeat}): {rate(lines, size, t_print)}")
    print(f"verify (best of {args.repeat}): {rate(lines, size, t_verify)}")
    if found:
        print(f"warning: the module has {len(found)} verifier diagnostics; first: {found[0].format()}")  # type: ignore[index]
    print(f"verify / parse = {t_verify / t_parse:.2f} (the goal: at most 1.00)")

    # ---- the anchor --------------------------------------------------------------------------
    tmp_ctx = tempfile.TemporaryDirectory(prefix="tileir-bench-")
    work = args.keep or Path(tmp_ctx.name)
    work.mkdir(parents=True, exist_ok=True)
    big = work / "big.tileir"
    big.write_text(text, encoding="utf-8")
    bc_path = work / "big.tileirbc"
    try:
        disasm = find_tileirdisasm()
        if disasm is None:
            print(
                "ratio skipped: tileirdisasm not found (pip install nvidia-cuda-tileiras, or pip install -e '.[bench]')"
            )
            return 0
        how = "our bytecode writer"
        if not our_bytecode(big, bc_path):
            try:
                t0 = time.perf_counter()
                bc_path.write_bytes(cutile_bytecode(plan, args.bytecode_version))
                how = f"cuTile Python ({time.perf_counter() - t0:.1f} s to compile)"
            except Exception as exc:  # noqa: BLE001 - any failure just skips the ratio
                print(
                    "ratio skipped: needs bytecode writer (issue 5); cuTile Python could not "
                    f"build the bytecode either ({type(exc).__name__}: {exc})"
                )
                return 0
        dis = subprocess.run([disasm, str(bc_path)], capture_output=True, text=True)
        entries = len(re.findall(r"^\s*entry @", dis.stdout, re.M))
        want = sum(c for _, c in plan)
        if dis.returncode != 0 or entries != want:
            print(f"ratio skipped: tileirdisasm read {entries}/{want} kernels: {dis.stderr[-300:]}")
            return 0
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        t_fmt = run_process([sys.executable, "-m", "compiler", "fmt", str(big)], args.repeat, env)
        t_dis = run_process([disasm, str(bc_path)], args.repeat)
        version = tool_version(disasm)
        inner = [line.removeprefix("  ") for line in text.splitlines()[1:-1]]
        same = "identical to" if dis.stdout.splitlines() == inner else "NOT identical to"
        print(
            f"bytecode: {bc_path.stat().st_size:,} bytes from {how}; tileirdisasm prints "
            f"{dis.stdout.count(chr(10)):,} lines, {same} the entries of big.tileir"
        )
        print(f"tileir fmt big.tileir     (process, best of {args.repeat}): {rate(lines, size, t_fmt)}")
        print(f"tileirdisasm big.tileirbc (process, best of {args.repeat}): {rate(lines, size, t_dis)}")
        print(
            f"ratio: tileir fmt / tileirdisasm = {t_fmt / t_dis:.1f}x "
            f"(anchor: NVIDIA tileirdisasm {version}; same module, same run)"
        )
    finally:
        tmp_ctx.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
