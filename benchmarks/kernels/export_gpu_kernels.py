"""Export the cuTile kernels of `cutile_kernels.py` to the `.tileir` files `benchmarks/gpu.py` runs.

    python benchmarks/kernels/export_gpu_kernels.py [--check] [--only NAME,...]

For each entry of SPECS: cuTile Python's own `export_kernel` (no GPU needed) writes Tile IR
bytecode 13.3 for the kernel, its tile sizes and one parameter signature; our bytecode reader
reads it back and our printer writes it as text, after a header comment saying where it came
from, to `benchmarks/kernels/gpu_<name>.tileir` (atomically). --check writes nothing and exits
1 when a committed file differs from what the export gives now (or is missing).

The signature is what cuTile's JIT derives for a freshly allocated, C-contiguous torch tensor
of the benchmark's sizes (as cuTile's JAX binding spells out in `_array_constraint`): the last
stride is the constant 1, the other strides are multiples of 16 bytes, every extent is a
multiple of 16, the base address is 16-byte aligned, no array aliases another, 32-bit
indices. These facts reach the IR as `assume div_by<...>` and unit strides, and both backends
use them (vector accesses, TMA). Callers must honour them: every extent a multiple of 16.

SPECS is plain data (this module imports cuTile only to export), so `benchmarks/gpu.py` reads
the tile sizes from it on a machine without cuTile.
"""

from __future__ import annotations

import argparse
import io
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SOURCE = "benchmarks/kernels/cutile_kernels.py"
ALIGN_BYTES = 16  # cuTile's JIT assumption for torch allocations (base and strides)
EXTENT_MULTIPLE = 16  # every extent of every array (all benchmark sizes are multiples of 16)
BYTECODE_VERSION = "13.3"


@dataclass(frozen=True, slots=True)
class Arr:
    """An array argument: element type (NumPy/cuTile name) and rank."""

    name: str
    dtype: str
    ndim: int


@dataclass(frozen=True, slots=True)
class Scalar:
    """A runtime scalar argument (a parameter of the kernel)."""

    name: str
    dtype: str


@dataclass(frozen=True, slots=True)
class Const:
    """A `ct.Constant` argument: folded into the kernel, not a parameter."""

    name: str
    value: int


@dataclass(frozen=True, slots=True)
class Spec:
    name: str  # the file is gpu_<name>.tileir
    function: str  # the @ct.kernel in cutile_kernels.py
    args: tuple[Arr | Scalar | Const, ...]
    grid: str  # the launch grid formula, for the header
    why: str  # why these tile sizes
    variant_of: str = ""  # another tile configuration of that benchmark row (each backend gets its best)

    @property
    def path(self) -> Path:
        return HERE / f"gpu_{self.name}.tileir"

    def const(self, name: str) -> int:
        for a in self.args:
            if isinstance(a, Const) and a.name == name:
                return a.value
        raise KeyError(f"{self.name} has no constant {name}")

    def symbol(self) -> str:
        return self.name


def _matmul(name: str, dtype: str, tm: int, tn: int, tk: int, why: str, variant_of: str = "") -> Spec:
    return Spec(
        name,
        "matmul",
        (Arr("A", dtype, 2), Arr("B", dtype, 2), Arr("C", dtype, 2))
        + (Const("TM", tm), Const("TN", tn), Const("TK", tk), Const("GROUP_M", 8)),
        f"(ceil(M/{tm}) * ceil(N/{tn}), 1, 1)",
        why,
        variant_of,
    )


_SQUARE = (
    "cuTile's samples/MatMul.py tiles for 16-bit inputs (128 x 256 x 64); 4096^2 gives 512 "
    "tiles, about 4 waves of 132 SMs"
)
_SKINNY = (
    "M = 64 rows: one 64-row tile, 64-wide columns so that N = 8192 still makes 128 blocks "
    "(one per SM of an H100); K steps of 128 halve the loop trips of this bandwidth-bound shape"
)

_SQUARE_SM90 = (
    "tileiras 13.5 spills 128 x 256 x 64 on sm_90 (255 registers, 1808 B of stack, 658 STL in its "
    "SASS; none on sm_100), and not 128 x 128 x 64 (cuobjdump -res-usage): each backend is timed "
    "on both tile shapes and judged at its best"
)

SPECS: tuple[Spec, ...] = (
    _matmul("matmul_f16", "float16", 128, 256, 64, _SQUARE),
    _matmul("matmul_bf16", "bfloat16", 128, 256, 64, _SQUARE),
    _matmul("matmul_f16_t128", "float16", 128, 128, 64, _SQUARE_SM90, variant_of="matmul_f16"),
    _matmul("matmul_bf16_t128", "bfloat16", 128, 128, 64, _SQUARE_SM90, variant_of="matmul_bf16"),
    _matmul("matmul_skinny_f16", "float16", 64, 64, 128, _SKINNY),
    _matmul("matmul_skinny_bf16", "bfloat16", 64, 64, 128, _SKINNY),
    Spec(
        "softmax",
        "softmax",
        (Arr("X", "float16", 2), Arr("Y", "float16", 2), Const("TM", 1), Const("TN", 4096)),
        "(M, 1, 1)",
        "whole rows of up to 4096 columns in one tile (cuTile's test_softmax.py loads whole rows); "
        "one row per block: measured on an H200 (triton backend) 0.098 ms against 0.108 (2 rows), 0.143 (4), 0.210 (8)",
    ),
    Spec(
        "layer_norm",
        "layer_norm",
        (
            Arr("X", "float16", 2),
            Arr("W", "float16", 1),
            Arr("B", "float16", 1),
            Arr("Y", "float16", 2),
            Scalar("eps", "float32"),
            Const("TM", 2),
            Const("TN", 4096),
        ),
        "(ceil(M/2), 1, 1)",
        "whole rows of up to 4096 columns read once (samples/LayerNorm.py reads a row three times, "
        "which costs bandwidth), 2 rows per block (64 f32 values per thread of 4 warps)",
    ),
    Spec(
        "vector_add",
        "vector_add",
        (Arr("A", "float32", 1), Arr("B", "float32", 1), Arr("C", "float32", 1), Const("T", 1024)),
        "(ceil(n/1024), 1, 1)",
        "1024 elements per block (8 per thread of 4 warps: two 128-bit accesses per array)",
    ),
    Spec(
        "silu",
        "silu",
        (Arr("X", "float16", 2), Arr("Y", "float16", 2), Const("TM", 128), Const("TN", 128)),
        "(ceil(M/128), ceil(N/128), 1)",
        "128 x 128: 128 elements per thread of 4 warps, a large elementwise tile, which tileiras "
        "computes in a loop and the Triton lowering in slices (compiler/lower/stripmine.py)",
    ),
    Spec(
        "attention",
        "attention",
        (
            Arr("Q", "float16", 4),
            Arr("K", "float16", 4),
            Arr("V", "float16", 4),
            Arr("Out", "float16", 4),
            Scalar("qk_scale", "float32"),
            Const("H", 8),
            Const("TM", 128),
            Const("TN", 64),
            Const("D", 64),
        ),
        "(ceil(Lq/128), batch * 8, 1)",
        "head dim 64: 128 query rows by 64 keys per step (flash attention's usual tile for d = 64 "
        "on sm_90; samples/AttentionFMHA.py's structure); H = 8 heads is baked in",
    ),
)


def find(name: str) -> Spec:
    for s in SPECS:
        if s.name == name:
            return s
    raise KeyError(name)


# --------------------------------------------------------------------------------------------
# Exporting


def _constraint(ct, arg: Arr | Scalar):
    from cuda.tile.compilation import ArrayConstraint, ScalarConstraint

    dtype = getattr(ct, arg.dtype)
    if isinstance(arg, Scalar):
        return ScalarConstraint(dtype)
    itemsize = {"float16": 2, "bfloat16": 2, "float32": 4}[arg.dtype]
    return ArrayConstraint(
        dtype,
        arg.ndim,
        index_dtype=ct.int32,
        stride_lower_bound_incl=0,
        alias_groups=(),
        may_alias_internally=False,
        stride_constant=(None,) * (arg.ndim - 1) + (1,),
        stride_divisible_by=(ALIGN_BYTES // itemsize,) * (arg.ndim - 1) + (1,),
        shape_divisible_by=EXTENT_MULTIPLE,
        base_addr_divisible_by=ALIGN_BYTES,
    )


def header(spec: Spec, cutile_version: str) -> str:
    consts = ", ".join(f"{a.name}={a.value}" for a in spec.args if isinstance(a, Const))
    params = ", ".join(
        f"{a.name}: {a.dtype}[{'x'.join('?' * a.ndim)}]" if isinstance(a, Arr) else f"{a.name}: {a.dtype}"
        for a in spec.args
        if not isinstance(a, Const)
    )
    lines = [
        "GENERATED by benchmarks/kernels/export_gpu_kernels.py; do not edit (re-run it instead).",
        f"Source: {SOURCE}, @ct.kernel {spec.function}, exported by cuTile Python {cutile_version}",
        f"(export_kernel, bytecode {BYTECODE_VERSION}, no target GPU) and printed by our bytecode reader and printer.",
        f"Constants: {consts}.",
        f"Tile sizes: {spec.why}.",
        f"cuTile arguments: {params}; each array expands to pointer, extents, strides (elements).",
        "Assumed of every array (cuTile's JIT facts for a fresh C-contiguous torch tensor): last stride 1,",
        f"other strides multiples of {ALIGN_BYTES} bytes, extents multiples of {EXTENT_MULTIPLE}, "
        f"base {ALIGN_BYTES}-byte aligned, no aliasing.",
        f"Launch grid: {spec.grid}.",
    ]
    return "".join(f"// {line}\n" for line in lines)


def export(spec: Spec) -> str:
    """The text of gpu_<spec.name>.tileir as the export gives it now (needs cuTile)."""
    import cuda.tile as ct
    from cuda.tile.compilation import CallingConvention, KernelSignature, export_kernel

    sys.path.insert(0, str(REPO))
    from compiler.bytecode import read_bytecode
    from compiler.text import print_module

    sys.path.insert(0, str(HERE))
    import cutile_kernels

    kernel = getattr(cutile_kernels, spec.function)
    params = [a.value if isinstance(a, Const) else _constraint(ct, a) for a in spec.args]
    signature = KernelSignature(params, CallingConvention.cutile_python_v1(), symbol=spec.symbol())
    buf = io.BytesIO()
    export_kernel(kernel, [signature], buf, output_format="tileir_bytecode", bytecode_version=BYTECODE_VERSION)
    module = read_bytecode(buf.getvalue())
    text = print_module(module)
    return header(spec, ct.__version__) + text + ("" if text.endswith("\n") else "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed files; write nothing")
    ap.add_argument("--only", help="comma-separated names (matmul_f16, softmax, ...)")
    args = ap.parse_args(argv)
    try:
        import cuda.tile  # noqa: F401
    except ImportError as exc:
        print(f"export_gpu_kernels.py: needs cuTile Python (pip install cuda-tile): {exc}")
        return 1
    sys.path.insert(0, str(REPO))
    from compiler.ir.files import write_atomic

    only = {s.strip() for s in args.only.split(",")} if args.only else None
    unknown = (only or set()) - {s.name for s in SPECS}
    if unknown:
        print(
            f"export_gpu_kernels.py: unknown kernel(s) {', '.join(sorted(unknown))}; known: "
            + ", ".join(s.name for s in SPECS)
        )
        return 1
    stale = []
    for spec in SPECS:
        if only and spec.name not in only:
            continue
        try:
            text = export(spec)
        except Exception as exc:  # noqa: BLE001 - cuTile's errors, one line each
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            print(f"{spec.name}: cuTile could not export {spec.function}: {first}")
            return 1
        rel = spec.path.relative_to(REPO)
        if args.check:
            same = spec.path.exists() and spec.path.read_text(encoding="utf-8") == text
            print(f"{rel}: {'up to date' if same else 'STALE'}")
            if not same:
                stale.append(str(rel))
        else:
            write_atomic(str(spec.path), text)
            print(f"wrote {rel} ({text.count(chr(10))} lines)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
