"""`python -m tile_kernel install [...]` installs the kernelspec; `python -m tile_kernel -f
CONNECTION_FILE` (what the kernelspec runs) starts the kernel."""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:2] == ["install"]:
        from .install import main as install_main

        return install_main(sys.argv[2:])
    from ipykernel.kernelapp import IPKernelApp

    from .kernel import TileIRKernel

    IPKernelApp.launch_instance(kernel_class=TileIRKernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
