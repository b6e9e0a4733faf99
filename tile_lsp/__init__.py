"""Tile IR language server (pygls).

Built by the language-server issue: diagnostics, hovers with types and index spaces, completion
and view pictures. Features call into `compiler/` and never re-parse on their own.
"""
