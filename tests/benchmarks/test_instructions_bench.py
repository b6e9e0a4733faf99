"""benchmarks/instructions.py's parts that need no valgrind: the anchor revision exported
with git, a revision that is not one refused in one line, and callgrind's files added up
with ptxas apart. The counting itself (a minute a kernel under callgrind) is run by hand."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.instructions import export, summed

REPO = Path(__file__).resolve().parents[2]


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_export_writes_the_revision(tmp_path: Path) -> None:
    try:
        head = _git("rev-parse", "--short", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    assert export("HEAD", tmp_path) == head
    assert (tmp_path / "compiler" / "__init__.py").read_bytes() == subprocess.run(
        ["git", "-C", str(REPO), "show", "HEAD:compiler/__init__.py"], capture_output=True, check=True
    ).stdout


def test_a_revision_that_is_not_one(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="'no-such-revision' is not a revision"):
        export("no-such-revision", tmp_path)
    assert not any(tmp_path.iterdir())


def test_counts_add_up_with_ptxas_apart(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "cg.1").write_text("version: 1\ncmd:  /venv/bin/python -m compiler compile k.tileirbc\nsummary: 1000\n")
    (logs / "cg.2").write_text("cmd:  /venv/bin/python -m compiler compile k.tileirbc\nsummary: 250\n")  # the fork
    (logs / "cg.3").write_text("cmd:  /site/triton/backends/nvidia/bin/ptxas -lineinfo k.ptx\nsummary: 400\n")
    (logs / "cg.4").write_text("cmd:  /usr/bin/ptxas-wrapper --version\ntotals: 5\n")  # not ptxas by name
    (logs / "other.txt").write_text("summary: 99999\n")  # not callgrind's
    assert summed(logs) == (1655, 400)
