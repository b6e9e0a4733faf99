"""`python -m compiler.cli ...` is the same as the `tileir` command (and `python -m compiler`)."""

from compiler.cli import run

run()
