"""Tile IR tools: the shared compiler core (IR, op table, text, verifier, bytecode,
interpreter, lowering) behind the `tileir` CLI, the language server and the notebook kernel."""

__version__ = "0.1.0"
