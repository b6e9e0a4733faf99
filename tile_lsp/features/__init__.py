"""One module per feature; each has `register(server)`, which declares its handlers with
`tile_lsp.server.feature`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..server import TileLanguageServer

FEATURES = (
    "lifecycle",  # open/change/close, settings, diagnostics
    "actions",  # code actions: quick fixes, "add expected-* checks"
    "hover",
    "navigation",  # definition, references, highlight, rename, symbols, folding, selection ranges
    "completion",  # completion, signature help
    "tokens",  # semantic tokens, inlay hints
    "formatting",
    "layout",  # tileir/layout
    "conversion",  # tileir/convertFromBytecode, tileir/convertToBytecode, tileir/triton, tileir/ptx, tileir/sass
)


def register_all(server: TileLanguageServer) -> None:
    for name in FEATURES:
        importlib.import_module(f"{__name__}.{name}").register(server)
