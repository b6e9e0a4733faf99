"""`python -m compiler ...` is the same as the `tileir` command."""

from compiler.cli import run

run()
