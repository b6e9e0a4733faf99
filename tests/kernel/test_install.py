"""`python -m tile_kernel install [--user | --sys-prefix | --prefix P]`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jupyter_client", reason="the `kernel` extra (ipykernel, jupyter_client) is not installed")

from tile_kernel import install  # noqa: E402

from .conftest import ROOT  # noqa: E402


def test_prefix_install_writes_the_kernelspec(kernelspec: Path) -> None:
    folder = kernelspec / "share" / "jupyter" / "kernels" / "tileir"
    spec = json.loads((folder / "kernel.json").read_text())
    assert spec["argv"] == [sys.executable, "-m", "tile_kernel", "-f", "{connection_file}"]
    assert spec["display_name"] == "Tile IR" and spec["language"] == "python"
    assert (folder / "logo-svg.svg").read_text().startswith("<svg")
    # Jupyter finds it by name through JUPYTER_PATH (the fixture set it).
    from jupyter_client.kernelspec import KernelSpecManager

    assert KernelSpecManager().get_kernel_spec("tileir").display_name == "Tile IR"


def test_user_install_goes_to_the_user_data_dir(tmp_path: Path) -> None:
    env = dict(os.environ, JUPYTER_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-m", "tile_kernel", "install", "--user", "--name", "tileir-test"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "kernels" / "tileir-test" / "kernel.json").exists()
    assert "Installed the 'Tile IR' kernelspec (tileir-test) in" in done.stdout


def test_sys_prefix_means_this_environment(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    calls = []
    monkeypatch.setattr(install, "install", lambda **kw: calls.append(kw) or "/somewhere")
    assert install.main(["--sys-prefix"]) == 0
    assert calls == [{"user": False, "prefix": sys.prefix, "name": "tileir", "display_name": "Tile IR"}]


def test_options_are_exclusive_and_errors_are_one_line(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        install.main(["--user", "--prefix", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert install.main(["--prefix", str(blocked)]) == 2
    assert capsys.readouterr().err.startswith("tile_kernel: cannot install the kernelspec:")
