"""Syntax highlighting for Tile IR text: a pygments lexer (registered as the `tileir`
entry point) and, later, the TextMate grammar used by the VS Code extension."""
