"""Helpers the benchmark scripts share (imported as `benchmarks._common`: each script puts the
repository on sys.path first)."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def tool_version(tool: str) -> str:
    """The version an NVIDIA tool prints for `--version` (`... V13.5.37` -> "13.5.37"), else the
    first dotted number it prints, else "unknown version" (a benchmark names its anchor's version
    but must not fail when a tool prints something unexpected)."""
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown version"
    text = out.stdout + out.stderr
    found = re.search(r"\bV(\d+(?:\.\d+)+)", text) or re.search(r"(\d+\.\d+(?:\.\d+)*)", text)
    return found.group(1) if found else "unknown version"


def disassembly_items(printed: bytes) -> list[str]:
    """The lines of a disassembly without indentation and without a `cuda_tile.module` wrapper
    (tileirdisasm prints the module's items bare): what two disassemblies compare by."""
    lines = [line.strip() for line in printed.decode("utf-8", "replace").splitlines()]
    if lines and lines[0].startswith("cuda_tile.module") and lines[-1] == "}":
        lines = lines[1:-1]
    return lines


def python_env(pycache: Path | None) -> dict[str, str]:
    """The environment of our processes: the repository importable, and .pyc files kept in
    `pycache` (outside the repository) as an installed tool has them, even where
    PYTHONDONTWRITEBYTECODE is set; with `pycache` None, no .pyc files at all."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH")] if p)}
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = str(REPO / ".no-such-pycache")  # never read an existing cache
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def process_once(
    cmd: list[str], env: dict[str, str] | None = None, capture: bool = False
) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of it and the processes it waited for, stdout when captured)
    of one run; a failed run raises RuntimeError with the end of its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        cmd,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace")[-500:]
        raise RuntimeError(f"{' '.join(cmd)} failed (exit status {proc.returncode}): {tail}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, proc.stdout or b""


def interleaved_rounds(
    commands: list[tuple[list[str], dict[str, str] | None]],
    rounds: int,
    before: Callable[[int], None] | None = None,
) -> list[list[tuple[float, float]]]:
    """(wall, CPU) of each command in each round: a round runs every command once, back to
    back, in reverse order every other round, so that a ratio of two commands in the same
    round is not a drift of the machine's speed between them (on the 2-core development
    machine it drifts by tens of percent within minutes). `before(i)` runs, untimed, before
    each run of command i (a fresh cache directory, a stale output removed)."""
    times: list[list[tuple[float, float]]] = [[] for _ in commands]
    for r in range(rounds):
        order = range(len(commands)) if r % 2 == 0 else range(len(commands) - 1, -1, -1)
        for i in order:
            if before is not None:
                before(i)
            wall, cpu, _ = process_once(*commands[i])
            times[i].append((wall, cpu))
    return times
