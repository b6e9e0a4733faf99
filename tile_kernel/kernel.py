"""The "Tile IR" Jupyter kernel: IPython's kernel with the `%%tileir` extension loaded, and
completion and inspection inside `%%tileir` cells.

Why a subclass rather than the stock kernel with the extension preloaded: IPython has a hook
for completion (the extension uses it) but none for inspection. Jupyter's inspect request
(Shift-Tab, JupyterLab's contextual help, the completer's documentation panel) goes to the
kernel's `do_inspect`, which for Python looks up a Python name; only a kernel can answer it
for Tile IR. The subclass also answers completion itself, with each item's kind and detail
and the op templates spelled out, which IPython's completer API cannot carry. Every other
request, and every cell that is not `%%tileir`, is IPython's.
"""

from __future__ import annotations

from typing import Any

from ipykernel.ipkernel import IPythonKernel

import compiler

from . import editor


class TileIRKernel(IPythonKernel):
    implementation = "tile_kernel"
    implementation_version = compiler.__version__
    banner = (
        "Tile IR kernel: Python, plus %%tileir cells of CUDA Tile IR that are checked, bound, run "
        "(on the GPU, or the CPU interpreter without one), pictured and timed. Try %%tileir?"
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from . import load_ipython_extension

        # Loaded by hand rather than through the extension manager, so that a notebook that
        # says `%load_ext tile_kernel` (to run on any IPython kernel too) gets no "already
        # loaded" message here; loading is idempotent.
        load_ipython_extension(self.shell)

    def do_complete(self, code: str, cursor_pos: int | None) -> dict[str, Any]:
        cursor = len(code) if cursor_pos is None else cursor_pos
        try:
            reply = editor.complete_reply(code, cursor, self.shell.user_ns)
        except Exception:  # noqa: BLE001 - completion must never break the kernel; Python's is the fallback
            self.log.exception("tile_kernel: completion failed")
            reply = None
        if reply is None:
            return super().do_complete(code, cursor_pos)
        return reply

    def do_inspect(
        self, code: str, cursor_pos: int, detail_level: int = 0, omit_sections: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        try:
            reply = editor.inspect_reply(code, cursor_pos)
        except Exception:  # noqa: BLE001 - as for completion
            self.log.exception("tile_kernel: inspection failed")
            reply = None
        if reply is None:
            return super().do_inspect(code, cursor_pos, detail_level, omit_sections)
        return reply
