"""The in-memory IR: types, attributes, operations, spans and diagnostics."""
