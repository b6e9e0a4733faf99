"""Syntax highlighting for Tile IR text: a pygments lexer (registered as the `tileir` entry
point), the TextMate grammar the VS Code extension ships (with a Markdown injection for
```tileir fences), and `python -m syntax.generate`, which writes both highlighters' word lists
from the compiler's op table and enums."""
