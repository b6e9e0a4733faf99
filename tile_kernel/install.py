"""`python -m tile_kernel install [--user | --sys-prefix | --prefix P] [--name N]`: the
"Tile IR" kernelspec, which starts this Python with `-m tile_kernel`."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

KERNEL_NAME = "tileir"
DISPLAY_NAME = "Tile IR"

# A small square logo (JupyterLab's launcher shows logo-svg.svg where there is one).
LOGO_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">'
    '<rect width="64" height="64" rx="8" fill="#76b900"/>'
    '<g fill="#fff"><rect x="8" y="8" width="22" height="22"/><rect x="34" y="8" width="22" height="22"/>'
    '<rect x="8" y="34" width="22" height="22"/><rect x="34" y="34" width="22" height="22" fill-opacity="0.5"/></g>'
    "</svg>"
)


def kernel_json(python: str | None = None, display_name: str = DISPLAY_NAME) -> dict:
    return {
        "argv": [python or sys.executable, "-m", "tile_kernel", "-f", "{connection_file}"],
        "display_name": display_name,
        # Cells are Python (with %%tileir cells among them): editors highlight them as Python.
        "language": "python",
        "metadata": {"debugger": True},
    }


def install(
    user: bool = False,
    prefix: str | None = None,
    name: str = KERNEL_NAME,
    display_name: str = DISPLAY_NAME,
) -> str:
    """Install the kernelspec (default: for the system, as `jupyter kernelspec install` does)
    and return the folder it went to."""
    from jupyter_client.kernelspec import KernelSpecManager

    # Written to a fresh folder that Jupyter copies into place: no reader sees them half-made.
    with tempfile.TemporaryDirectory() as staging:
        folder = Path(staging)
        spec = json.dumps(kernel_json(display_name=display_name), indent=2)
        (folder / "kernel.json").write_text(spec, encoding="utf-8")
        (folder / "logo-svg.svg").write_text(LOGO_SVG, encoding="utf-8")
        return KernelSpecManager().install_kernel_spec(staging, name, user=user, prefix=prefix)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tile_kernel install",
        description=f'Install the "{DISPLAY_NAME}" Jupyter kernelspec (Python with %%tileir cells).',
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for this user (~/.local/share/jupyter)")
    where.add_argument("--sys-prefix", action="store_true", help=f"into this environment ({sys.prefix})")
    where.add_argument("--prefix", metavar="P", help="under P/share/jupyter/kernels")
    parser.add_argument("--name", default=KERNEL_NAME, help=f"the kernelspec's name (default {KERNEL_NAME})")
    parser.add_argument("--display-name", default=DISPLAY_NAME, help=f"the name shown (default {DISPLAY_NAME!r})")
    args = parser.parse_args(argv)
    prefix = sys.prefix if args.sys_prefix else args.prefix
    try:
        path = install(user=args.user, prefix=prefix, name=args.name, display_name=args.display_name)
    except ImportError:
        print("tile_kernel: jupyter_client is missing: pip install 'tileir-tools[kernel]'", file=sys.stderr)
        return 2
    except OSError as e:
        hint = " (try --user or --sys-prefix)" if isinstance(e, PermissionError) else ""
        print(f"tile_kernel: cannot install the kernelspec: {e}{hint}", file=sys.stderr)
        return 2
    print(f"Installed the {args.display_name!r} kernelspec ({args.name}) in {path}")
    return 0
