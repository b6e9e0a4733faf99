"""Jupyter face of the Tile IR tools: the `%%tileir` cell magic and `%tileir` line magic, a
"Tile IR" kernel (an ipykernel subclass with the extension loaded, plus completion and
inspection inside `%%tileir` cells), and widgets that picture layouts and results.

    %load_ext tile_kernel                      # in any IPython kernel or terminal
    python -m tile_kernel install --user       # the "Tile IR" kernelspec

`import tile_kernel` stays light: IPython, ipywidgets and the runtime are imported when used.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "LayoutExplorer",
    "ResultView",
    "TileModule",
    "available_backends",
    "compare",
    "load_ipython_extension",
    "time_backends",
    "unload_ipython_extension",
]

_LAZY = {
    "LayoutExplorer": "widgets",
    "ResultView": "widgets",
    "compare": "widgets",
    "TileModule": "module",
    "available_backends": "module",
    "time_backends": "module",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """Register `%%tileir`/`%tileir` and the completer for `%%tileir` cells. Loading twice
    (the Tile IR kernel loads it, then a notebook's `%load_ext tile_kernel`) is harmless."""
    from .editor import make_matcher
    from .magic import TileIRMagics

    ipython.register_magics(TileIRMagics)
    completer = getattr(ipython, "Completer", None)
    if completer is not None and hasattr(completer, "custom_matchers"):
        if not any(getattr(m, "_tileir", False) for m in completer.custom_matchers):
            matcher = make_matcher(ipython)
            matcher._tileir = True  # type: ignore[attr-defined]
            completer.custom_matchers.append(matcher)


def unload_ipython_extension(ipython: Any) -> None:
    completer = getattr(ipython, "Completer", None)
    if completer is not None and hasattr(completer, "custom_matchers"):
        completer.custom_matchers[:] = [m for m in completer.custom_matchers if not getattr(m, "_tileir", False)]
    magics = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        magics[kind].pop("tileir", None)
