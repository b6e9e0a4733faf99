"""Run NVIDIA's cuda-tile tests through lit and print per-file PASS/FAIL and totals.

    python tests/conformance/run.py                      # every file (Dialect and Bytecode)
    python tests/conformance/run.py --files dialect      # test/Dialect/CudaTile
    python tests/conformance/run.py --files bytecode     # test/Bytecode (with versioning/, invalid/)
    python tests/conformance/run.py --files round-trip   # the parser/printer acceptance set
    python tests/conformance/run.py ops types -v         # chosen files, failures in full
    python tests/conformance/run.py Bytecode/versioning/new_types list_versions

Exit status: 0 when every selected file passes, 1 when one does not, 2 when the tests
(../shared/conformance) or lit are missing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.conformance import harness  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="run.py", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="file names (ops, ops.mlir); default: --files")
    ap.add_argument(
        "--files",
        default="all",
        choices=sorted(harness.FILE_SETS),
        help="a named set of files (default: all)",
    )
    ap.add_argument("--shared", type=Path, help="the shared/ folder (default: ../shared)")
    ap.add_argument("-j", "--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("-v", "--verbose", action="store_true", help="show the output of failures")
    ap.add_argument(
        "--diagnostics",
        action="store_true",
        help="check the -verify-diagnostics files in-process; print expected/met/unexpected per file",
    )
    args = ap.parse_args(argv)
    if args.diagnostics:
        return _diagnostics(args)

    suite = harness.test_root(args.shared)
    if not suite.is_dir():
        print(f"run.py: conformance tests not found at {suite}", file=sys.stderr)
        return 2
    try:
        import lit  # noqa: F401
    except ImportError:
        print("run.py: lit is not installed (pip install -e '.[test]')", file=sys.stderr)
        return 2
    try:
        files = harness.select(args.names, args.shared) if args.names else harness.file_set(args.files, args.shared)
    except KeyError as exc:
        print(f"run.py: {exc.args[0]}", file=sys.stderr)
        return 2

    try:
        results = harness.run_lit(files, shared=args.shared, workers=args.workers)
    except RuntimeError as exc:
        print(f"run.py: {exc}", file=sys.stderr)
        return 2
    width = max((len(r.name) for r in results), default=10)
    for r in results:
        reason = r.reason()
        print((f"{r.code:<12} {r.name:<{width}}" + (f"   {reason}" if reason else "")).rstrip())
        if args.verbose and not r.passed:
            print("\n".join("    " + line for line in r.output.splitlines()))
    passed = sum(r.passed for r in results)
    failed = len(results) - passed
    label = args.files if not args.names else "selected"
    print(f"{label}: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def _diagnostics(args: argparse.Namespace) -> int:
    files = harness.verify_diagnostics_files(args.shared)
    if args.names:
        wanted = {n.removesuffix(".mlir") for n in args.names}
        files = [f for f in files if f.stem in wanted]
    if not files:
        print("run.py: no -verify-diagnostics files found", file=sys.stderr)
        return 2
    width = max(len(f.name) for f in files)
    print(f"{'file':<{width}}  chunks ok  expected met  unexpected")
    totals = harness.DiagnosticsTally("total")
    for f in files:
        t = harness.run_verify_diagnostics(f)
        print(f"{t.name:<{width}}  {t.chunks_ok:>4}/{t.chunks:<4} {t.met:>5}/{t.expected:<5} {t.unexpected:>6}")
        if args.verbose:
            print("\n".join("    " + c for c in t.complaints))
        for attr in ("chunks", "chunks_ok", "expected", "met", "unexpected"):
            setattr(totals, attr, getattr(totals, attr) + getattr(t, attr))
    print(
        f"{'total':<{width}}  {totals.chunks_ok:>4}/{totals.chunks:<4} {totals.met:>5}/{totals.expected:<5} "
        f"{totals.unexpected:>6}"
    )
    return 0 if totals.passed else 1


if __name__ == "__main__":
    sys.exit(main())
