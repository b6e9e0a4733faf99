"""Tile IR text: an error-tolerant parser that keeps spans, and the canonical printer.

result = parse(text, "k.tileir")      # never raises
result.module, result.diagnostics
print_module(result.module)           # canonical text
"""

from __future__ import annotations

from .parser import ParseOptions, ParseResult, parse, split_input
from .printer import PrintOptions, print_module

__all__ = ["ParseOptions", "ParseResult", "PrintOptions", "parse", "print_module", "split_input"]
