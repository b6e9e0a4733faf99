"""Helpers the benchmark scripts share (imported as `benchmarks._common`: each script puts the
repository on sys.path first)."""

from __future__ import annotations

import re
import subprocess


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
