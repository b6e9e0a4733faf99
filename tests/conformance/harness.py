"""Shared helpers of the conformance harness: where the tests are, which set is which,
how to run lit over them, and how to read MLIR's `expected-*` comments.

Used by `lit.cfg.py`, `run.py` and the pytest wrappers; imports nothing from lit at module
level so that it stays importable without the test extras.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"

# lit's test source root: the tests are named relative to it (`Dialect/CudaTile/ops.mlir`).
TEST_SUBDIR = Path("conformance/cuda-tile/test")
DIALECT_SUBDIR = TEST_SUBDIR / "Dialect/CudaTile"
BYTECODE_SUBDIR = TEST_SUBDIR / "Bytecode"

# The acceptance set of the parser/printer issue: files whose RUN lines are
# `cuda-tile-opt %s | cuda-tile-opt | FileCheck %s` and friends.
ROUND_TRIP = (
    "ops",
    "arith",
    "conversion",
    "types",
    "memory_consistency_ops",
    "syntax_omit_dialect_prefix",
    "opt_hints",
    "dense_attr",
    "entry_opt_hints_default_silent",
    "debuginfo_attr",
)

# Files that do not pass under lit yet, and why, by display name (`display_name`: the file
# name for test/Dialect/CudaTile, the path from test/ for the others). Every other file must pass.
KNOWN_LIT_FAILURES: dict[str, str] = {
    # One chunk (225) of its 265: see test_conformance.KNOWN_DIFFERENCES["invalid.mlir"].
    "invalid": "expects NVIDIA's 13.3 ftof rounding rule, which tileiras 13.5 has widened (the tools win)",
}

# Named sets of files (`run.py --files NAME`): a tuple of Dialect stems, or a folder's whole set.
FILE_SETS: dict[str, tuple[str, ...] | str | None] = {
    "round-trip": ROUND_TRIP,
    "dialect": "dialect",
    "bytecode": "bytecode",
    "all": None,
}

ROUND_TRIP_SKIPPED = (
    '"round_trip_test: SKIPPED - the bytecode round trip needs the lit feature tileir-bytecode'
    ' - bytecode writer and reader, issue 5"'
)


def shared_dir(override: Path | None = None) -> Path:
    """The shared/ folder: an explicit path, $TILEIR_SHARED, or ../shared beside the repo."""
    if override is not None:
        return override
    env = os.environ.get("TILEIR_SHARED")
    return Path(env) if env else SHARED


def test_root(shared: Path | None = None) -> Path:
    """NVIDIA's test/ folder: lit's test source root."""
    return shared_dir(shared) / TEST_SUBDIR


def conformance_dir(shared: Path | None = None) -> Path:
    return shared_dir(shared) / DIALECT_SUBDIR


def conformance_files(shared: Path | None = None) -> list[Path]:
    """The dialect tests (test/Dialect/CudaTile/*.mlir)."""
    d = conformance_dir(shared)
    return sorted(d.glob("*.mlir")) if d.is_dir() else []


def bytecode_dir(shared: Path | None = None) -> Path:
    return shared_dir(shared) / BYTECODE_SUBDIR


def bytecode_files(shared: Path | None = None) -> list[Path]:
    """The bytecode tests (test/Bytecode/**/*.mlir; `Inputs/` folders hold their data)."""
    d = bytecode_dir(shared)
    if not d.is_dir():
        return []
    return sorted(f for f in d.rglob("*.mlir") if "Inputs" not in f.relative_to(d).parts)


def all_files(shared: Path | None = None) -> list[Path]:
    return conformance_files(shared) + bytecode_files(shared)


def lit_path(path: Path, shared: Path | None = None) -> Path:
    """`path` relative to lit's test source root (`Bytecode/versioning/new_types.mlir`)."""
    return path.resolve().relative_to(test_root(shared).resolve())


def display_name(path: Path, shared: Path | None = None) -> str:
    """How reports name a file: `ops.mlir` for the dialect tests (as before the bytecode
    tests joined), `Bytecode/versioning/new_types.mlir` for the others."""
    if path.parent.resolve() == conformance_dir(shared).resolve():
        return path.name
    return lit_path(path, shared).as_posix()


def known_failure(path: Path, shared: Path | None = None) -> str | None:
    """Why `path` is expected to fail under lit, or None when it must pass."""
    name = display_name(path, shared)
    return KNOWN_LIT_FAILURES.get(name.removesuffix(".mlir"))


def bytecode_available() -> bool:
    """True once `tileir translate` (the bytecode writer and reader) exists."""
    try:
        from compiler.cli import has_command
    except Exception:  # noqa: BLE001 - a broken core simply means "no bytecode"
        return False
    return has_command("translate")


# ---------------------------------------------------------------------------------------------
# Running lit


@dataclass(slots=True)
class FileResult:
    name: str  # e.g. "ops.mlir"
    code: str  # PASS, FAIL, UNSUPPORTED, ...
    output: str = ""
    elapsed: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.code in ("PASS", "XFAIL")

    def reason(self) -> str:
        """A one-line hint at why a file failed (or a note on a pass)."""
        if self.passed:
            return "; ".join(self.notes)
        for needle, why in _KNOWN_REASONS:
            if needle in self.output:
                return why
        for line in self.output.splitlines():
            if "error:" in line and not line.lstrip().startswith(("#", "$")):
                return line.strip()[:160]
        return ""


_KNOWN_REASONS = (
    ("-verify-diagnostics is not yet supported", "needs -verify-diagnostics (verifier issue)"),
    ("unrecognized arguments", "uses an option tileir opt does not have"),
    ("tileir: internal error", "internal error in tileir"),
    ("Couldn't match", "FileCheck: an expected line is missing from the output"),
)


def file_set(name: str, shared: Path | None = None) -> list[Path]:
    """The files of a named set of FILE_SETS."""
    members = FILE_SETS[name]
    if members is None:
        return all_files(shared)
    if members == "dialect":
        return conformance_files(shared)
    if members == "bytecode":
        return bytecode_files(shared)
    return select(members, shared)


def select(names: Iterable[str] | None, shared: Path | None = None) -> list[Path]:
    """Conformance files by name (`ops`, `ops.mlir`, `Bytecode/list_versions`, or a bytecode
    test's bare stem `list_versions` when no other file has it), or all of them for None."""
    files = all_files(shared)
    if names is None:
        return files
    by_name: dict[str, Path] = {}
    stems: dict[str, list[Path]] = {}
    for f in files:
        by_name[display_name(f, shared).removesuffix(".mlir")] = f
        stems.setdefault(f.stem, []).append(f)
    chosen: list[Path] = []
    for n in names:
        key = n.removesuffix(".mlir")
        if key in by_name:
            chosen.append(by_name[key])
        elif len(stems.get(key, ())) == 1:
            chosen.append(stems[key][0])
        else:
            raise KeyError(f"no conformance file named {n!r} in {test_root(shared)}")
    return chosen


def run_lit(
    files: Sequence[Path],
    *,
    shared: Path | None = None,
    workers: int | None = None,
    timeout: float | None = 1800,
    extra_args: Sequence[str] = (),
) -> list[FileResult]:
    """Run lit over `files` (paths inside the conformance folder); one result per file.

    `timeout` bounds the whole lit run (a per-test timeout would need psutil)."""
    if not files:
        return []
    with tempfile.TemporaryDirectory(prefix="tileir-lit-") as tmp:
        report = Path(tmp) / "results.json"
        cmd = [
            sys.executable,
            "-c",
            "import sys; from lit.main import main; sys.argv[0] = 'lit'; main()",
            "--no-progress-bar",
            "-q",
            "-o",
            str(report),
        ]
        if workers:
            cmd.append(f"-j{workers}")
        if shared is not None:
            cmd += ["-D", f"shared={shared}"]
        cmd += list(extra_args)
        # lit finds the suite through lit.cfg.py here; each test is named by its path below
        # NVIDIA's test/ folder, as if it lived here.
        cmd += [str(HERE / lit_path(f, shared)) for f in files]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH")] if p)
        try:
            proc = subprocess.run(
                cmd,
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"lit did not finish within {timeout} s") from None
        if not report.exists():
            raise RuntimeError(f"lit produced no results (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        data = json.loads(report.read_text(encoding="utf-8"))
    results: dict[str, FileResult] = {}
    for t in data.get("tests", []):
        name = t["name"].split(" :: ", 1)[-1]
        results[name] = FileResult(name, t["code"], t.get("output", ""), t.get("elapsed"))
    has_bytecode = bytecode_available()
    out: list[FileResult] = []
    for f in files:
        name = display_name(f, shared)
        r = results.get(lit_path(f, shared).as_posix())
        r = FileResult(name, r.code, r.output, r.elapsed) if r else FileResult(name, "UNRESOLVED", "no result")
        if not has_bytecode and "%round_trip_test" in f.read_text(encoding="utf-8"):
            r.notes.append("bytecode round-trip RUN line skipped (issue 5)")
        out.append(r)
    return out


# ---------------------------------------------------------------------------------------------
# expected-* comments (MLIR's -verify-diagnostics), checked in-process file by file


def run_lines(text: str) -> str:
    """The RUN lines of a test file, joined."""
    return " ".join(line for line in text.splitlines() if "RUN:" in line)


def verify_diagnostics_files(shared: Path | None = None) -> list[Path]:
    """The verifier acceptance set: every file whose RUN line uses -verify-diagnostics."""
    return [f for f in conformance_files(shared) if "-verify-diagnostics" in run_lines(f.read_text(encoding="utf-8"))]


@dataclass(slots=True)
class DiagnosticsTally:
    name: str
    chunks: int = 0
    chunks_ok: int = 0
    expected: int = 0
    met: int = 0
    unexpected: int = 0
    complaints: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.chunks == self.chunks_ok


def opt_arguments(text: str, path: Path) -> list[str]:
    """The `cuda-tile-opt` arguments of the file's first RUN line that calls it, `%s` resolved."""
    import shlex

    for line in text.splitlines():
        if "RUN:" in line and "cuda-tile-opt" in line:
            command = line.split("RUN:", 1)[1].split("|", 1)[0]
            words = shlex.split(command)
            words = words[words.index("cuda-tile-opt") + 1 :]
            return [str(path) if w == "%s" else w for w in words]
    return [str(path)]


def verify_diagnostics_chunks(path: Path):
    """For each `// -----` chunk of a -verify-diagnostics file: (index, ExpectationReport),
    with `tileir opt` run in-process with the options of the file's RUN line."""
    from compiler.cli import build_parser
    from compiler.cli.text import opt_diagnostics
    from compiler.ir.source import SourceFile
    from compiler.text import split_input
    from compiler.verify.expected import check_expected

    text = path.read_text(encoding="utf-8")
    args = build_parser().parse_args(["opt", *opt_arguments(text, path)])
    chunks = split_input(text) if args.split_input_file else [(text, 0)]
    for index, (chunk, line_offset) in enumerate(chunks):
        padded = "\n" * line_offset + chunk
        _, diagnostics = opt_diagnostics(padded, path.name, args)
        yield index, check_expected(diagnostics, SourceFile(padded, path.name), line_offset)


def run_verify_diagnostics(path: Path) -> DiagnosticsTally:
    """`tileir opt` on a -verify-diagnostics file, as its RUN line says, counted."""
    tally = DiagnosticsTally(path.name)
    for _, report in verify_diagnostics_chunks(path):
        tally.chunks += 1
        tally.chunks_ok += report.ok
        tally.expected += report.expected
        tally.met += report.met
        tally.unexpected += report.unexpected
        tally.complaints += [d.format() for d in report.complaints]
    return tally


def expected_error_lines(text: str) -> set[int]:
    """0-based lines on which the file expects an error."""
    from compiler.verify.expected import expected_diagnostics

    return {e.line for e in expected_diagnostics(text) if e.kind == "error" and e.line is not None}
