"""`python -m compiler ...` is the same as the `tileir` command."""

from compiler.cli import main

raise SystemExit(main())
