"""Our `%round_trip_test INPUT TMPBASE [FLAGS...]`: what NVIDIA's `round_trip_test.sh` does,
with our command line instead of cuda-tile-translate / cuda-tile-opt:

    tileir translate -mlir-to-cudatilebc -no-implicit-module INPUT -o TMPBASE.out.tilebc
    tileir translate -cudatilebc-to-mlir TMPBASE.out.tilebc -o TMPBASE.roundtrip.mlir FLAGS
    tileir opt --default-names INPUT -no-implicit-module -o TMPBASE.ref.mlir FLAGS
    diff -B TMPBASE.ref.mlir TMPBASE.roundtrip.mlir      (a perfect round trip is expected)

Bytecode keeps no SSA names, and MLIR's printer never prints the source's: `--default-names`
makes `tileir opt` name values as cuda-tile-opt does, so the two outputs compare as written.
The steps run in this process (one Python start instead of three). lit.cfg.py calls this only
when the lit feature `tileir-bytecode` is present (see README.md in this folder).
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _tileir(*args: str) -> int:
    from compiler.cli import main

    return main(list(args))


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: round_trip_test.py INPUT TMPBASE [FLAGS...]", file=sys.stderr)
        return 2
    source, tmpbase, flags = argv[0], argv[1], argv[2:]
    sys.path.insert(0, str(REPO))
    from tests.conformance.harness import bytecode_available

    if not bytecode_available():
        print(
            "round_trip_test: cannot run: the bytecode round trip needs `tileir translate` "
            "(the bytecode writer and reader), which this checkout does not have",
            file=sys.stderr,
        )
        return 2
    bc = f"{tmpbase}.out.tilebc"
    roundtrip = f"{tmpbase}.roundtrip.mlir"
    ref = f"{tmpbase}.ref.mlir"
    steps = [
        ("translate", "-mlir-to-cudatilebc", "-no-implicit-module", source, "-o", bc),
        ("translate", "-cudatilebc-to-mlir", bc, "-o", roundtrip, *flags),
        ("opt", "--default-names", source, "-no-implicit-module", "-o", ref, *flags),
    ]
    for step in steps:
        print("+ tileir " + " ".join(step), file=sys.stderr)
        status = _tileir(*step)
        if status != 0:
            return status
    # `diff -B`: blank lines do not count.
    want = [line for line in Path(ref).read_text(encoding="utf-8").splitlines() if line.strip()]
    got = [line for line in Path(roundtrip).read_text(encoding="utf-8").splitlines() if line.strip()]
    if want != got:
        sys.stderr.writelines(line + "\n" for line in difflib.unified_diff(want, got, ref, roundtrip, lineterm=""))
        print("round_trip_test: the bytecode round trip changed the module", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
