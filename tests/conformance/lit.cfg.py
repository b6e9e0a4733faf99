# ruff: noqa: F821
"""lit configuration: NVIDIA's cuda-tile tests, run AS WRITTEN against our tools.

The tests live in `../shared/conformance/cuda-tile/test/` (next to this repository, never
copied into it): `Dialect/CudaTile/*.mlir` and `Bytecode/**/*.mlir`. Their RUN lines name
NVIDIA's tools; here they resolve to ours:

    cuda-tile-opt        -> `python -m compiler opt --default-names`   (a wrapper script on PATH;
                            MLIR's printer never keeps the source's SSA names, so neither do we here)
    cuda-tile-translate  -> `python -m compiler translate`
    FileCheck            -> `python -m filecheck`      (PyPI `filecheck`, the Python port)
    not                  -> lit's internal `not`        (the internal shell)
    %round_trip_test     -> tests/conformance/round_trip_test.py, gated on the lit feature
                            `tileir-bytecode` (see README.md here)

Run it with `python tests/conformance/run.py` (per-file PASS/FAIL and totals) or plain
`lit -v tests/conformance`. Parameters (`lit -D name=value`):

    shared=PATH             the shared/ folder (default: ../shared next to the repository)
    tileir_bytecode=0|1     force the `tileir-bytecode` feature off or on
"""

import os
import stat
import sys
from pathlib import Path

import lit.formats

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from tests.conformance import harness  # noqa: E402

shared = lit_config.params.get("shared") or os.environ.get("TILEIR_SHARED")
suite_dir = harness.test_root(Path(shared) if shared else None)

config.name = "tileir-conformance"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["round_trip_test.sh", "Inputs"]  # Inputs/: data of the bytecode tests
config.test_exec_root = str(HERE / "Output")  # lit puts every temporary below it (ignored by git)
config.recursiveExpansionLimit = 4

if suite_dir.is_dir():
    config.test_source_root = str(suite_dir)
else:
    lit_config.warning(f"conformance tests not found at {suite_dir}; nothing to run")
    config.test_source_root = str(HERE)
    config.unsupported = True

# --- tools -------------------------------------------------------------------------------------

bindir = HERE / "Output" / "bin"
bindir.mkdir(parents=True, exist_ok=True)
python = sys.executable


def _wrapper(name: str, body: str) -> None:
    path = bindir / name
    text = f"#!/bin/sh\n{body}\n"
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        os.replace(tmp, path)


_wrapper("cuda-tile-opt", f'exec "{python}" -m compiler opt --default-names "$@"')
_wrapper("cuda-tile-translate", f'exec "{python}" -m compiler translate "$@"')
_wrapper("tileir", f'exec "{python}" -m compiler "$@"')
_wrapper("FileCheck", f'exec "{python}" -m filecheck "$@"')

config.environment["PATH"] = os.pathsep.join([str(bindir), os.environ.get("PATH", "")])
config.environment["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p)
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
for var in ("HOME", "TMPDIR", "LANG", "LC_ALL", "TILEIR_TRACEBACK"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# --- features ------------------------------------------------------------------------------------

forced = lit_config.params.get("tileir_bytecode")
has_bytecode = harness.bytecode_available() if forced is None else forced not in ("0", "")
if has_bytecode:
    config.available_features.add("tileir-bytecode")

# `%round_trip_test %s %t` runs our round-trip script where bytecode exists; elsewhere the RUN
# line becomes an `echo` that says why it was skipped (the other RUN lines still decide).
round_trip = f'"{python}" "{HERE / "round_trip_test.py"}"'
config.substitutions.append(
    (
        "%round_trip_test",
        f"%if tileir-bytecode %{{ {round_trip} %}} %else %{{ echo {harness.ROUND_TRIP_SKIPPED} %}}",
    )
)
