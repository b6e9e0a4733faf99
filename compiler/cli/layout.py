"""`tileir layout`: how the views of a file tile their tensors, as text and SVG pictures."""

from __future__ import annotations

import argparse

from compiler.ir.files import write_atomic

from .common import EXIT_ERRORS, EXIT_OK, PROG, CliError, Decoded, Tally, decode_bytecode, err, out, read_input, report

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from collections.abc import Sequence


def _parse_extents(specs: Sequence[str]) -> dict[int, int]:
    extents: dict[int, int] = {}
    for spec in specs:
        dim, sep, value = spec.partition("=")
        try:
            if not sep:
                raise ValueError
            d, n = int(dim), int(value)
        except ValueError:
            raise CliError(f"--extent {spec}: expected DIM=N with integers, e.g. --extent 0=4096") from None
        if d < 0 or n < 0:
            raise CliError(f"--extent {spec}: the dimension and the extent must be non-negative")
        if n == 0:
            raise CliError(f"--extent {spec}: the extent must be at least 1 (an empty tensor has no tiles to picture)")
        extents[d] = n
    return extents


def _view_values(module) -> list:
    """Every SSA value of a view type (op results and block arguments), in source order."""
    from compiler.layout import is_view_type

    found = []
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                found.extend(a for a in block.arguments if is_view_type(a.type))
        found.extend(r for r in op.results if is_view_type(r.type))
    return sorted(found, key=lambda v: v.span.start if v.span is not None else -1)


def command_layout(args: argparse.Namespace) -> int:
    from compiler.layout import describe, svg_picture, text_picture, view_layout_of
    from compiler.text import parse

    if args.value is not None and args.line is not None:
        raise CliError("--value and --line cannot be used together")
    extents = _parse_extents(args.extent)
    src = read_input(args.file, allow_bytecode=True)
    if src.bytecode is not None:
        # Bytecode has no source lines: views are shown without them, and --line finds none.
        result = Decoded(decode_bytecode(src.bytecode, src.name))
        if result.module is None:
            return EXIT_ERRORS
    else:
        result = parse(src.text, src.name)
        if report(result.diagnostics, Tally(), name=src.name):
            err(f"{PROG} layout: '{src.name}' has errors; no layout shown")
            return EXIT_ERRORS
    source = result.module.source
    values = _view_values(result.module)
    names = {v: v.name for v in values}
    if any(name is None for name in names.values()):
        # Bytecode keeps no value names: call the views what `tileir disasm` calls them.
        from compiler.text.printer import value_names

        printed = value_names(result.module)
        names = {v: name or printed.get(v, "?") for v, name in names.items()}

    def line_of(value) -> int | None:
        return source.line_col(value.span.start)[0] if value.span is not None and source is not None else None

    if args.value is not None:
        wanted = args.value.removeprefix("%")
        values = [v for v in values if names[v] == wanted]
        if not values:
            raise CliError(f"no view value named %{wanted} in '{src.name}'")
    elif args.line is not None:
        values = [v for v in values if line_of(v) == args.line]
        if not values:
            raise CliError(f"no view value is defined on line {args.line} of '{src.name}'")
    if not values:
        out(f"{src.name}: no view values\n")
        return EXIT_OK
    if args.svg is not None and len(values) > 1:
        names = ", ".join(f"%{v.name}" for v in values[:6]) + (", ..." if len(values) > 6 else "")
        raise CliError(f"--svg draws one view; '{src.name}' has {len(values)} ({names}): choose with --value or --line")
    found = [(value, view_layout_of(value, extents)) for value in values]
    most = max((layout.tensor_rank for _, layout in found if layout is not None), default=0)
    for d in sorted(d for d in extents if d >= most):
        # Said, not refused: one command line may serve files of several ranks (a script).
        err(
            f"{PROG}: warning: --extent {d}={extents[d]}: no view here has a tensor dimension {d} "
            f"(the views' tensors have at most {most} dimension{'s' if most != 1 else ''}); ignored"
        )
    blocks = []
    layouts = []
    for value, layout in found:
        where = f"{src.name}:{line_of(value)}" if line_of(value) is not None else src.name
        if layout is None:
            blocks.append(f"%{names[value]} ({where}): {value.type}\n  (malformed view type; no layout)\n")
            continue
        layouts.append(layout)
        blocks.append(f"%{names[value]} ({where}): {value.type}\n{describe(layout)}\n\n{text_picture(layout)}\n")
    out("\n".join(blocks))
    if args.svg is not None:
        if not layouts:
            raise CliError("no layout to draw")
        try:
            write_atomic(args.svg, svg_picture(layouts[0]))
        except OSError as exc:
            raise CliError(f"cannot write '{args.svg}': {exc.strerror or exc}") from None
    return EXIT_OK


# --------------------------------------------------------------------------------------------
# Arguments


def arguments_layout(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print the layout of each view value in a file: tile and tensor shapes, the index space "
        "with its arithmetic, padding, and a text picture of the tiling."
    )
    parser.add_argument("file", metavar="FILE", help="a .tileir file, or - for stdin")
    parser.add_argument("--value", metavar="NAME", help="only the view value %%NAME")
    parser.add_argument("--line", type=int, metavar="N", help="only the view values defined on line N")
    parser.add_argument(
        "--extent",
        action="append",
        default=[],
        metavar="DIM=N",
        help="the extent of a dynamic (?) tensor dimension (repeat the option)",
    )
    parser.add_argument("--svg", metavar="OUT.svg", help="also write the picture as SVG (one view; atomically)")
