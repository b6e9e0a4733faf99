"""Index spaces of views and pictures of them (text and SVG), for the CLI, the language
server and the notebook. No editor or notebook types here: plain data and strings."""

from .index_space import (
    TileExtent,
    ViewLayout,
    ceildiv,
    full_tiles,
    is_view_type,
    known_extents,
    layout_of_type,
    tile_elements,
    tile_extent,
    view_layout_of,
)
from .picture import describe, layout_data, svg_picture, text_picture

__all__ = [
    "TileExtent",
    "ViewLayout",
    "ceildiv",
    "describe",
    "full_tiles",
    "is_view_type",
    "known_extents",
    "layout_data",
    "layout_of_type",
    "svg_picture",
    "text_picture",
    "tile_elements",
    "tile_extent",
    "view_layout_of",
]
