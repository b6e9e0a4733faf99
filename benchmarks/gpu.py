"""GPU speed: our two GPU backends against each other and against PyTorch, same sizes, one run.

    python benchmarks/gpu.py [--quick] [--only NAME,...] [--no-check] [--json OUT] [--strict]
                             [--warmup N] [--repeat N] [--rounds N]

Kernels: the cuTile kernels of benchmarks/kernels/cutile_kernels.py as exported to
benchmarks/kernels/gpu_<name>.tileir (committed: the GPU machine needs no cuTile), each run
by `compiler.runtime.benchmark` on both GPU backends:
    triton     our lowering (Tile IR -> Triton -> cubin)
    tileiras   NVIDIA's tileiras on the same module written as bytecode
and timed per launch by CUDA events (median of --repeat after --warmup launches). The
anchors are timed the same way (torch.cuda.Event around each call), in the same process, on
the same tensors:

    kernel              size                         anchor (judged)                 also printed
    matmul f16, bf16    4096 x 4096 x 4096           torch.matmul (cuBLAS)           TFLOP/s
    matmul skinny       M=64, N=K=8192 (f16, bf16)   torch.matmul (cuBLAS)           TFLOP/s
    softmax             16384 x 4096 f16, rows       y.copy_(x) (same bytes)         torch.softmax
    layer_norm          16384 x 4096 f16, rows       y.copy_(x) (same bytes)         F.layer_norm
    vector_add          2^25 f32: c = a + b          dst.copy_(src), 1.5 * 2^25 f32  a + b (torch)
    silu                16384 x 4096 f16, 128x128    y.copy_(x) (same bytes)         F.silu
    attention           (4, 8, 4096, 64) f16         -                               F.scaled_dot_product_attention

The square matmuls come in two tile shapes (128x256x64, cuTile's sample's, and 128x128x64:
tileiras spills the first on sm_90); each backend is timed on both and judged at its faster
(the table says which).

The skinny matmul is the decode/small-batch shape of inference (64 tokens against an
8192 x 8192 weight): it reads B (128 MiB) once for 8.6 GFLOP, so it is bound by bandwidth and
by how many blocks cover the SMs, the regime the square shape (compute-bound) does not test.

Copy anchor: the bandwidth a device-to-device copy gets is the ceiling of a memory-bound
kernel. For softmax, layer_norm and silu the copy is `y.copy_(x)` of the kernel's own input and
output (reads and writes the same M*N*2 bytes each way; layer_norm's weight and bias, 16 KiB,
are left out). Vector add reads a and b and writes c, 3 * n * 4 bytes; the copy is
`dst.copy_(src)` with src and dst of 1.5 * n f32 each, which reads and writes exactly those
3 * n * 4 bytes. So in every case "of copy" = copy time / kernel time = the kernel's
bandwidth / the copy's bandwidth.

Head to head: after each backend's own measurement, --rounds more rounds (default 5) time
the two backends back to back (each at its best tiles, --repeat launches, the order
alternating), and triton/tileiras is judged at the median of the rounds' ratios, printed with
their range: two kernels at parity otherwise came out anywhere in 1.00-1.04 from run to run,
as the GPU's clocks drifted between the two backends' measurements.

Targets (judged, "met"/"missed"):
    triton/tileiras   median ratio <= 1 for every kernel (our backend no slower than tileiras)
    matmul            cuBLAS time / ours >= 0.80 (both backends are reported; judged for triton)
    memory-bound      copy time / ours >= 0.80 (softmax, layer_norm, vector_add, silu)
Attention's and the torch kernels' ratios are printed, not judged (no target).

--check (default; --no-check to skip) first runs each kernel once on each backend and
compares its output with torch's on the benchmark sizes: |ours - torch| <= atol + rtol*|torch|
with atol = a * max|torch| (f16: rtol 1e-2, a 1e-2; bf16: 5e-2, 2e-2; attention f16 2e-2,
2e-2), no NaN where torch has none; a mismatch is reported in the table instead of a time.
--quick: 1 warm-up and 5 timed launches (default 3 and 20), no head-to-head rounds. --json
OUT writes the table.
Without an NVIDIA GPU (or torch without CUDA; TILEIR_NO_GPU=1 hides one) it prints why and
exits 0. Exit status: 1 when a kernel fails or mismatches, 2 with --strict when a target is missed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BACKENDS = ("triton", "tileiras")
TARGET_VS_TILEIRAS = 1.0  # triton time / tileiras time, at most
TARGET_MATMUL = 0.80  # cuBLAS time / our time, at least
TARGET_COPY = 0.80  # copy time / our time (bandwidth fraction), at least
TOLERANCES = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 2e-2), "attention": (2e-2, 2e-2)}


def _specs():
    """benchmarks/kernels/export_gpu_kernels.py's SPECS (plain data: no cuTile needed)."""
    path = REPO / "benchmarks" / "kernels" / "export_gpu_kernels.py"
    spec = importlib.util.spec_from_file_location("export_gpu_kernels", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules.setdefault("export_gpu_kernels", module)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


# --------------------------------------------------------------------------------------------
# The cases


@dataclass(slots=True)
class Case:
    """One row: the kernel file, its launch, the torch reference and the anchor."""

    name: str
    size: str
    kind: str  # "matmul", "memory" or "attention"
    path: Path
    grid: tuple[int, int, int]
    args: list[Any]  # cuTile-convention arguments (torch tensors, Python scalars)
    out: Any  # the tensor the kernel writes
    reference: Callable[[], Any]  # torch's result (also the torch timing)
    anchor: Callable[[], Any] | None  # the judged anchor (cuBLAS is `reference` itself)
    anchor_name: str
    tolerance: tuple[float, float]
    flops: float = 0.0
    bytes: float = 0.0
    # Other tile configurations of the same computation, (label, file, grid): each backend is
    # timed on every one and judged at its best (a compiler's best tiles differ by target).
    variants: list[tuple[str, Path, tuple[int, int, int]]] = field(default_factory=list)
    tiles: str = ""  # the label of (path, grid)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _tiles(spec) -> str:
    return "x".join(str(spec.const(c)) for c in ("TM", "TN", "TK"))


def make_cases(torch, only: set[str] | None) -> list[Case]:
    eg = _specs()
    F = torch.nn.functional
    dev = "cuda"
    gen = torch.Generator(device=dev).manual_seed(0)
    cases: list[Case] = []

    def want(name: str) -> bool:
        return only is None or name in only

    def randn(*shape, dtype=torch.float16, scale=1.0):
        return (torch.randn(*shape, generator=gen, device=dev, dtype=torch.float32) * scale).to(dtype)

    for tag, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for shape_name, (m, n, k) in (("", (4096, 4096, 4096)), ("skinny_", (64, 8192, 8192))):
            name = f"matmul_{shape_name}{tag}"
            if not want(name):
                continue
            spec = eg.find(name)
            variants = [
                (_tiles(v), v.path, (cdiv(m, v.const("TM")) * cdiv(n, v.const("TN")), 1, 1))
                for v in eg.SPECS
                if v.variant_of == name
            ]
            a = randn(m, k, dtype=dtype)
            b = randn(k, n, dtype=dtype, scale=1 / math.sqrt(k))  # outputs of order 1
            c = torch.empty(m, n, device=dev, dtype=dtype)
            ref = torch.empty(m, n, device=dev, dtype=dtype)
            grid = (cdiv(m, spec.const("TM")) * cdiv(n, spec.const("TN")), 1, 1)
            cases.append(
                Case(
                    name,
                    f"{m}x{n}x{k} {tag}",
                    "matmul",
                    spec.path,
                    grid,
                    [a, b, c],
                    c,
                    lambda a=a, b=b, ref=ref: torch.matmul(a, b, out=ref),
                    None,
                    "cuBLAS",
                    TOLERANCES[str(dtype).removeprefix("torch.")],
                    flops=2.0 * m * n * k,
                    variants=variants,
                    tiles=_tiles(spec),
                )
            )
    rows, cols = 16384, 4096
    if want("softmax") or want("layer_norm"):
        x = randn(rows, cols)
        y = torch.empty_like(x)
        y_copy = torch.empty_like(x)
        copy = lambda x=x, y_copy=y_copy: y_copy.copy_(x)  # noqa: E731
        if want("softmax"):
            spec = eg.find("softmax")
            cases.append(
                Case(
                    "softmax",
                    f"{rows}x{cols} f16",
                    "memory",
                    spec.path,
                    (cdiv(rows, spec.const("TM")), 1, 1),
                    [x, y],
                    y,
                    lambda x=x: torch.softmax(x, dim=-1),
                    copy,
                    "copy",
                    TOLERANCES["float16"],
                    bytes=2.0 * rows * cols * 2,
                )
            )
        if want("layer_norm"):
            spec = eg.find("layer_norm")
            w = randn(cols)
            bias = randn(cols)
            y2 = torch.empty_like(x)
            eps = 1e-5
            cases.append(
                Case(
                    "layer_norm",
                    f"{rows}x{cols} f16",
                    "memory",
                    spec.path,
                    (cdiv(rows, spec.const("TM")), 1, 1),
                    [x, w, bias, y2, eps],
                    y2,
                    lambda x=x, w=w, bias=bias: F.layer_norm(x, (cols,), w, bias, eps),
                    copy,
                    "copy",
                    TOLERANCES["float16"],
                    bytes=2.0 * rows * cols * 2 + 2 * cols * 2,
                )
            )
    if want("vector_add"):
        spec = eg.find("vector_add")
        n = 1 << 25
        a = randn(n, dtype=torch.float32)
        b = randn(n, dtype=torch.float32)
        c = torch.empty_like(a)
        src = torch.empty(n * 3 // 2, device=dev, dtype=torch.float32)
        dst = torch.empty_like(src)
        src.copy_(a.repeat(2)[: src.numel()])
        cases.append(
            Case(
                "vector_add",
                f"2^25 f32 ({n * 4 >> 20} MiB/array)",
                "memory",
                spec.path,
                (cdiv(n, spec.const("T")), 1, 1),
                [a, b, c],
                c,
                lambda a=a, b=b: torch.add(a, b),
                lambda src=src, dst=dst: dst.copy_(src),
                "copy",
                (0.0, 0.0),
                bytes=3.0 * n * 4,
            )
        )
    if want("silu"):
        spec = eg.find("silu")
        x = randn(rows, cols)
        y = torch.empty_like(x)
        y_copy = torch.empty_like(x)
        cases.append(
            Case(
                "silu",
                f"{rows}x{cols} f16",
                "memory",
                spec.path,
                (cdiv(rows, spec.const("TM")), cdiv(cols, spec.const("TN")), 1),
                [x, y],
                y,
                lambda x=x: F.silu(x),
                lambda x=x, y_copy=y_copy: y_copy.copy_(x),
                "copy",
                TOLERANCES["float16"],
                bytes=2.0 * rows * cols * 2,
            )
        )
    if want("attention"):
        spec = eg.find("attention")
        batch, heads, seq, dim = 4, spec.const("H"), 4096, spec.const("D")
        q, k, v = (randn(batch, heads, seq, dim) for _ in range(3))
        o = torch.empty_like(q)
        cases.append(
            Case(
                "attention",
                f"({batch},{heads},{seq},{dim}) f16",
                "attention",
                spec.path,
                (cdiv(seq, spec.const("TM")), batch * heads, 1),
                [q, k, v, o, 1.0 / math.sqrt(dim)],
                o,
                lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v),
                None,
                "SDPA",
                TOLERANCES["attention"],
                flops=4.0 * batch * heads * seq * seq * dim,
            )
        )
    return cases


# --------------------------------------------------------------------------------------------
# Measuring


@dataclass(slots=True)
class Cell:
    """One backend's result for one case: a median time, or why there is none."""

    seconds: float | None = None
    error: str | None = None
    max_error: float | None = None  # of the check
    tiles: str = ""  # the tile configuration timed (of the case's variants: the fastest)
    path: Path | None = None  # that configuration's file and grid
    grid: tuple[int, int, int] = (1, 1, 1)


@dataclass(slots=True)
class Row:
    case: Case
    cells: dict[str, Cell] = field(default_factory=dict)
    torch_s: float | None = None
    anchor_s: float | None = None
    targets: list[dict[str, Any]] = field(default_factory=list)
    # triton/tileiras per head-to-head round (each backend at its best tiles, interleaved).
    rounds: list[float] = field(default_factory=list)


def time_torch(torch, fn: Callable[[], Any], warmup: int, repeat: int) -> float:
    """Median seconds per call of `fn`, each call between two CUDA events."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1000.0)
    return statistics.median(times)


def compare(torch, out, ref, tolerance: tuple[float, float]) -> tuple[str | None, float]:
    """(why `out` does not match `ref`, or None; the largest absolute difference)."""
    rtol, a = tolerance
    o, r = out.float(), ref.float()
    finite = torch.isfinite(r)
    if bool((torch.isnan(o) & ~torch.isnan(r)).any()):
        return f"MISMATCH: NaN in {int((torch.isnan(o) & ~torch.isnan(r)).sum())} elements", math.nan
    diff = (o - r).abs()
    worst = float(diff[finite].max()) if bool(finite.any()) else 0.0
    atol = a * float(r[finite].abs().max()) if bool(finite.any()) else 0.0
    bad = (diff > atol + rtol * r.abs()) & finite
    count = int(bad.sum())
    if count:
        index = tuple(int(i) for i in torch.nonzero(bad)[0])
        return (
            f"MISMATCH: {count} of {r.numel()} elements off (max |diff| {worst:.3g}; first at {index}: "
            f"{float(o[index]):.4g} vs {float(r[index]):.4g})",
            worst,
        )
    return None, worst


def one_line(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc)
    lines = text.strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:300]


def _better(cell: Cell, best: Cell | None) -> bool:
    """Whether `cell` replaces `best` as a backend's result: the faster one, but a failing
    variant stays reported even where another is faster (a failure is a bug)."""
    if best is None or cell.error:
        return best is None or best.error is None
    return best.error is None and cell.seconds < best.seconds


def measure(torch, case: Case, backends: list[str], check: bool, warmup: int, repeat: int, rounds: int) -> Row:
    from compiler.runtime import benchmark, launch_cutile

    row = Row(case)
    ref = case.reference()
    torch.cuda.synchronize()
    for backend in backends:
        best = None
        for tiles, path, grid in [(case.tiles, case.path, case.grid), *case.variants]:
            cell = Cell(tiles=tiles, path=path, grid=grid)
            try:
                if check:
                    case.out.fill_(float("nan"))  # a kernel that writes nothing cannot pass
                    launch_cutile(str(path), None, grid, case.args, backend=backend)
                    torch.cuda.synchronize()
                    cell.error, cell.max_error = compare(torch, case.out, ref, case.tolerance)
                if not cell.error:
                    r = benchmark(
                        str(path),
                        None,
                        grid=grid,
                        args=case.args,
                        backend=backend,
                        warmup=warmup,
                        repeat=repeat,
                        cutile=True,
                    )
                    cell.seconds = r.median
            except Exception as exc:  # noqa: BLE001 - a launch error or a failure of the backend: one line
                cell.error = f"FAILED: {one_line(exc)}"
            if case.variants:
                print(f"  {case.name} {backend} {tiles}: {_ms(cell.seconds) if cell.seconds else cell.error} ms")
            if _better(cell, best):
                best = cell
        row.cells[backend] = best
    row.torch_s = time_torch(torch, case.reference, warmup, repeat)
    row.anchor_s = row.torch_s if case.anchor is None else time_torch(torch, case.anchor, warmup, repeat)
    row.rounds = head_to_head(case, row, rounds, repeat)
    judge(row)
    return row


def head_to_head(case: Case, row: Row, rounds: int, repeat: int) -> list[float]:
    """triton/tileiras in `rounds` more rounds, each timing both backends (their best tiles)
    back to back, the order alternating: the two times of a round share the GPU's clocks
    and temperature, which drift between the backends' first measurements (two backends
    at parity came out 1.00-1.04 apart, and either way, across whole runs)."""
    from compiler.runtime import benchmark

    cells = [(b, row.cells.get(b)) for b in ("triton", "tileiras")]
    if rounds < 1 or any(c is None or c.error or not c.seconds for _, c in cells):
        return []
    ratios = []
    for i in range(rounds):
        t = {}
        for backend, cell in cells if i % 2 == 0 else cells[::-1]:
            r = benchmark(str(cell.path), None, grid=cell.grid, args=case.args, backend=backend,
                          warmup=1, repeat=repeat, cutile=True)  # fmt: skip
            t[backend] = r.median
        ratios.append(t["triton"] / t["tileiras"])
    return ratios


def judge(row: Row) -> None:
    """The targets of one row, as {what, value, target, met}."""
    case = row.case
    ours = row.cells.get("triton")
    theirs = row.cells.get("tileiras")
    if ours and theirs and ours.seconds and theirs.seconds:
        # The median over the head-to-head rounds where there are any (see head_to_head).
        ratio = statistics.median(row.rounds) if row.rounds else ours.seconds / theirs.seconds
        row.targets.append(
            {
                "what": f"{case.name} triton/tileiras",
                "value": ratio,
                "target": f"<= {TARGET_VS_TILEIRAS:g}",
                "met": ratio <= TARGET_VS_TILEIRAS,
            }
        )
    if ours and ours.seconds and row.anchor_s:
        fraction = row.anchor_s / ours.seconds
        if case.kind == "matmul":
            row.targets.append(
                {
                    "what": f"{case.name} triton vs cuBLAS",
                    "value": fraction,
                    "target": f">= {TARGET_MATMUL:g}",
                    "met": fraction >= TARGET_MATMUL,
                }
            )
        elif case.kind == "memory":
            row.targets.append(
                {
                    "what": f"{case.name} triton of copy bandwidth",
                    "value": fraction,
                    "target": f">= {TARGET_COPY:g}",
                    "met": fraction >= TARGET_COPY,
                }
            )


# --------------------------------------------------------------------------------------------
# Printing


def _ms(t: float | None) -> str:
    return f"{t * 1e3:.3f}" if t else "-"


def _rate(case: Case, t: float | None) -> str:
    if not t:
        return "-"
    if case.flops:
        return f"{case.flops / t / 1e12:.0f} TF/s"
    return f"{case.bytes / t / 1e9:.0f} GB/s"


def _ratio(x: float | None, y: float | None) -> str:
    return f"{x / y:.2f}" if x and y else "-"


def print_table(title: str, head: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    line = "  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths)))
    print(title)
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))))
    print()


def report(rows: list[Row], backends: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Print the tables; (met, missed, failed)."""
    head = ["kernel", "size"]
    for b in backends:
        head += [f"{b} ms", "rate"]
    head += ["torch ms", "anchor", "anchor ms", "triton/tileiras"]
    head += [f"{b} of anchor" for b in backends]
    table = []
    failed: list[str] = []
    for row in rows:
        case = row.case
        cells = [case.name, case.size]
        for b in backends:
            cell = row.cells[b]
            timed = _ms(cell.seconds) + (f" ({cell.tiles})" if case.variants else "")
            cells += [timed if cell.error is None else "error", _rate(case, cell.seconds)]
            if cell.error:
                failed.append(f"{case.name} {b}: {cell.error}")
        anchor_ms = _ms(row.anchor_s)
        t = {b: row.cells[b].seconds for b in backends}
        vs = _ratio(t.get("triton"), t.get("tileiras"))
        if row.rounds:
            vs = f"{statistics.median(row.rounds):.2f} ({min(row.rounds):.2f}-{max(row.rounds):.2f})"
        cells += [_ms(row.torch_s), case.anchor_name, anchor_ms, vs]
        cells += [_ratio(row.anchor_s, t[b]) for b in backends]
        table.append(cells)
    print_table(
        "median time per launch (CUDA events); rate: TFLOP/s or GB/s; 'of anchor' = anchor time / kernel time:",
        head,
        table,
    )
    met = [f"{t['what']} {t['value']:.2f}" for r in rows for t in r.targets if t["met"]]
    missed = [f"{t['what']} {t['value']:.2f} (target {t['target']})" for r in rows for t in r.targets if not t["met"]]
    for r in rows:
        if r.case.kind != "matmul" and r.case.anchor is not None:
            for b in backends:
                if r.cells[b].seconds and r.torch_s:
                    print(f"{r.case.name}: {b} vs torch's own kernel: {r.torch_s / r.cells[b].seconds:.2f}x its speed")
    return met, missed, failed


def to_json(rows: list[Row], backends: list[str], meta: dict[str, Any], met, missed, failed) -> dict[str, Any]:
    out = {**meta, "backends": backends, "rows": [], "targets_met": met, "targets_missed": missed, "failed": failed}
    for r in rows:
        out["rows"].append(
            {
                "kernel": r.case.name,
                "size": r.case.size,
                "file": str(r.case.path.relative_to(REPO)),
                "grid": list(r.case.grid),
                "flops": r.case.flops,
                "bytes": r.case.bytes,
                "backends": {
                    b: {"median_s": c.seconds, "error": c.error, "check_max_abs_diff": c.max_error, "tiles": c.tiles}
                    for b, c in r.cells.items()
                },
                "torch_s": r.torch_s,
                "anchor": r.case.anchor_name,
                "anchor_s": r.anchor_s,
                "targets": r.targets,
                "triton_over_tileiras_rounds": r.rounds,
            }
        )
    return out


def write_json(path: Path, data: dict[str, Any]) -> None:
    from compiler.ir.files import write_atomic

    write_atomic(str(path), json.dumps(data, indent=2) + "\n")


# --------------------------------------------------------------------------------------------


def unavailable() -> str | None:
    """Why nothing can be measured here, or None."""
    from compiler.runtime import gpu_present

    if not gpu_present():
        if os.environ.get("TILEIR_NO_GPU"):
            return "no GPU: TILEIR_NO_GPU is set"
        return "no NVIDIA GPU found (no /dev/nvidia0, none listed by nvidia-smi)"
    try:
        import torch
    except ImportError:
        return "needs PyTorch with CUDA (pip install torch) for the baselines"
    if not torch.cuda.is_available():
        return f"PyTorch {torch.__version__} sees no CUDA device (a CPU-only build?)"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))  # the first paragraph
    ap.add_argument("--quick", action="store_true", help="1 warm-up, 5 timed launches (a smoke test)")
    ap.add_argument("--only", help="comma-separated kernels (matmul_f16, matmul_skinny_bf16, softmax, ...)")
    ap.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated (default triton,tileiras)")
    ap.add_argument(
        "--check",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="compare each backend's output with torch's before timing (default on)",
    )
    ap.add_argument("--warmup", type=int, help="launches before timing (default 3; 1 with --quick)")
    ap.add_argument("--repeat", type=int, help="timed launches (default 20; 5 with --quick)")
    ap.add_argument(
        "--rounds", type=int, help="head-to-head rounds judging triton/tileiras (default 5; 0 with --quick)"
    )
    ap.add_argument("--json", type=Path, metavar="OUT", help="write the table as JSON here")
    ap.add_argument("--strict", action="store_true", help="exit 2 when a target is missed")
    args = ap.parse_args(argv)

    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    bad = [b for b in backends if b not in BACKENDS]
    if bad or not backends:
        ap.error(f"--backends: unknown {', '.join(bad) or '(none given)'}; choose from {', '.join(BACKENDS)}")
    eg = _specs()
    only = {s.strip() for s in args.only.split(",")} if args.only else None
    unknown = (only or set()) - {s.name for s in eg.SPECS}
    if unknown:
        ap.error(f"--only: unknown {', '.join(sorted(unknown))}; known: {', '.join(s.name for s in eg.SPECS)}")
    warmup = max(0, args.warmup if args.warmup is not None else (1 if args.quick else 3))
    repeat = max(1, args.repeat if args.repeat is not None else (5 if args.quick else 20))
    rounds = max(0, args.rounds if args.rounds is not None else (0 if args.quick else 5))

    why = unavailable()
    if why is not None:
        print(f"benchmarks/gpu.py: {why}; nothing to measure")
        if args.json:
            write_json(args.json, {"skipped": why})
        return 0
    try:
        from compiler.runtime import benchmark  # noqa: F401
    except ImportError:
        print("benchmarks/gpu.py: compiler.runtime has no benchmark() (the GPU launcher); nothing to measure")
        return 1
    import torch

    props = torch.cuda.get_device_properties(0)
    from compiler.lower import triton_version
    from compiler.runtime import find_tileiras

    meta = {
        "device": props.name,
        "capability": f"sm_{props.major}{props.minor}",
        "sms": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton_version(),
        "tileiras": find_tileiras(),
        "warmup": warmup,
        "repeat": repeat,
        "rounds": rounds,
        "check": args.check,
    }
    print(
        f"GPU benchmark{' (--quick)' if args.quick else ''}: {props.name} ({meta['capability']}, "
        f"{props.multi_processor_count} SMs), torch {torch.__version__} (CUDA {torch.version.cuda}), "
        f"Triton {meta['triton']}, tileiras {meta['tileiras'] or 'not found'}"
    )
    print(
        f"median of {repeat} launches after {warmup} warm-up; triton/tileiras: median (range) of {rounds} "
        f"head-to-head rounds; outputs checked against torch: {'yes' if args.check else 'no'}"
    )
    print()
    cases = make_cases(torch, only)
    rows = []
    for case in cases:
        rows.append(measure(torch, case, backends, args.check, warmup, repeat, rounds))
    met, missed, failed = report(rows, backends)
    print(f"targets met: {len(met)}, missed: {len(missed)}" + (f" ({'; '.join(missed)})" if missed else ""))
    for f in failed:
        print(f"FAILED: {f}")
    if args.json:
        write_json(args.json, to_json(rows, backends, meta, met, missed, failed))
    if failed:
        return 1
    return 2 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
