"""Compile work counted, not timed: the instructions a whole `tileir compile` executes
(valgrind's callgrind), the working tree against a named revision, on the same bytecode.

    python benchmarks/instructions.py REV [--only NAME,...] [--arch sm_90]

On a shared 2-core machine the wall clock of one compile drifts by tens of percent within
minutes (benchmarks/compile.py interleaves rounds for that); the number of instructions a
process executes does not drift at all, so a change that saves 5 % of a compile shows as
5 % here, run once. What it counts is work, not time: instructions of Python, of Triton's
C++ and of ptxas do not cost the same, and it says nothing against tileiras (whose
instructions are another program's). The anchor is REV (e.g. HEAD, or HEAD~1 to see what
the last commit did), exported with `git archive` into a temporary directory and run from
there with the same Python, Triton and ptxas.

For each example and sample (`--only` picks some): its bytecode, written once by the working
tree's writer (benchmarks/compile.py's input), compiled by `python -m compiler compile FILE
--arch ARCH --emit cubin --no-server` with an empty cache, under `valgrind --tool=callgrind
--trace-children=yes`, once (each tree's .pyc files written by one compile before); the counts of
every process (the command, the child its compile runs in, ptxas and the tools it starts) are
added up, ptxas' shown apart. Printed: millions of instructions for REV and for the tree,
and tree/REV. About a minute per kernel and tree (callgrind runs a program ~50x slower).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks._common import python_env  # noqa: E402 - needs the repository on sys.path
from benchmarks.compile import kernels, print_table, write_bytecode  # noqa: E402


def export(rev: str, into: Path) -> str:
    """REV's files in `into` (git archive); its short commit name."""
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if commit.returncode != 0:
        raise SystemExit(f"benchmarks/instructions.py: {rev!r} is not a revision of {REPO}")
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return commit.stdout.strip()


def _environment(tree: Path, work: Path, pycache: Path) -> dict[str, str]:
    """A compile by `tree` (`python -m compiler` from it, not from the repository), with an
    empty cache and no server."""
    env = python_env(pycache)
    env["PYTHONPATH"] = str(tree)
    env["TILEIR_SERVER"] = "off"
    env["TILEIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=work)
    return env


def _compile_command(bytecode: Path, arch: str, work: Path) -> list[str]:
    return [sys.executable, "-m", "compiler", "compile", str(bytecode), "--arch", arch, "--emit", "cubin", "-q",
            "-o", str(work / "out.cubin")]  # fmt: skip


def _run(cmd: list[str], tree: Path, env: dict[str, str]) -> None:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tree)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed in {tree}: {proc.stderr.strip()[-400:]}")


def counted(tree: Path, bytecode: Path, arch: str, work: Path, pycache: Path) -> tuple[int, int]:
    """(instructions of every process, of ptxas alone) of one cold compile by `tree` (whose
    .pyc files a compile wrote before: see main)."""
    logs = Path(tempfile.mkdtemp(prefix="callgrind-", dir=work))
    grind = ["valgrind", "--tool=callgrind", "--trace-children=yes", f"--callgrind-out-file={logs}/cg.%p"]
    _run([*grind, *_compile_command(bytecode, arch, work)], tree, _environment(tree, work, pycache))
    return summed(logs)


def summed(logs: Path) -> tuple[int, int]:
    """(instructions, of ptxas alone) over the callgrind files in `logs`, one a process."""
    total = ptxas = 0
    for log in logs.glob("cg.*"):
        text = log.read_text(errors="replace")
        m = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        n = int(m.group(1)) if m else 0
        total += n
        command = re.search(r"^cmd: +(\S+)", text, re.M)
        if command and Path(command.group(1)).name == "ptxas":
            ptxas += n
    return total, ptxas


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("rev", help="the anchor: a git revision (HEAD, HEAD~1, a commit)")
    ap.add_argument("--only", help="comma-separated kernel names (vector_add, samples/vadd, ...)")
    ap.add_argument("--arch", default="sm_90", help="the GPU architecture (default sm_90)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("benchmarks/instructions.py: valgrind is not installed (apt install valgrind); nothing to count")
        return 1
    from compiler.lower import triton_version

    if triton_version() is None:
        print("benchmarks/instructions.py: Triton is not installed (pip install -e '.[bench]'); nothing to count")
        return 1
    only = {s.strip() for s in args.only.split(",")} if args.only else None
    with tempfile.TemporaryDirectory(prefix="tileir-instructions-") as tmp:
        work = Path(tmp)
        anchor = work / "anchor"
        anchor.mkdir()
        commit = export(args.rev, anchor)
        pycache = work / "pyc"
        print(
            f"instructions of a whole cold `tileir compile` (callgrind, millions): {args.rev} ({commit}) against "
            f"the working tree; {args.arch}, Triton {triton_version()}, Python {sys.version.split()[0]}"
        )
        print()
        head = ["kernel", f"{commit} all", "ptxas", "tree all", "ptxas", "tree/anchor"]
        rows = []
        failed = 0
        written = set()  # the trees whose .pyc files a compile wrote (what every process reads)
        for k in kernels(False, only):
            write_bytecode(k, work)
            if k.bytecode is None:
                rows.append([k.name, k.error or "", "", "", "", ""])
                failed += 1
                continue
            try:
                for tree in {anchor, REPO} - written:
                    _run(_compile_command(k.bytecode, args.arch, work), tree, _environment(tree, work, pycache))
                    written.add(tree)
                a, a_ptxas = counted(anchor, k.bytecode, args.arch, work, pycache)
                t, t_ptxas = counted(REPO, k.bytecode, args.arch, work, pycache)
            except RuntimeError as exc:
                rows.append([k.name, str(exc).splitlines()[0][:100], "", "", "", ""])
                failed += 1
                continue
            millions = [f"{n / 1e6:,.0f}" for n in (a, a_ptxas, t, t_ptxas)]
            rows.append([k.name, *millions, f"{t / a:.3f}"])
            print(f"  {k.name}: {a / 1e6:,.0f}M -> {t / 1e6:,.0f}M", flush=True)
        print()
        print_table("millions of instructions, the anchor's and the tree's:", head, rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
