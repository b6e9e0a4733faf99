"""`tileir fmt` and `check` of a big module in several processes at once.

A module's kernels are isolated from one another, so a module of thousands of them can be
parsed, printed and verified in parts, one per CPU (`ir.workers.fork_map`). A cheap scan of
the text (braces, strings, comments, `entry` at the start of a line: one regex pass) finds
the region holding the kernels and where each kernel starts and ends; every process parses
the whole text except the kernels of the other parts, which its parser skips
(`Parser.skips`).

- `format_text`: the region is cut into runs, each before a kernel and the comment lines
  right above it; each process prints the module with its run (and only the region's
  comments in it), and the runs are spliced into the first process's text where its own
  run ends (the printer marks where each op of the region begins and ends).
- `in_kernel_parts`: each process parses the module with its share of the kernels (every
  `global` and other item in all of them: a kernel's `get_global` needs its global) and runs
  a given job on it — `compiler.verify.check_text_in_parts` verifies it; kernel names must
  be distinct (a redefinition is a whole-module error).

Both answer None, and the caller does the job in one process as before, whenever anything
is not plain: a diagnostic of any kind (so that every message a user sees, and its order,
is one process's), a kernel that did not start or end where the scan said, a value the
printer would have to name, a part that failed. The answers of the parallel path are
therefore the one-process answers, which tests/compiler/test_text_parts.py checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..ir.core import Module
from ..ir.source import SourceFile
from ..ir.workers import available_workers, fork_map
from .parser import ParseOptions, Parser, ParseResult
from .printer import Printer

# Below this much text per process, forking costs more than it saves.
MIN_PART_CHARS = 60_000

# One pass over the text: a string (its braces are not braces), a comment (the same), a
# brace, or `entry @name` starting a line (after spaces). Every alternative starts with a
# literal character (the line break for `entry`, not `^`; `\{|\}`, not `[{}]`): then `re`
# skips to the next of them with a set lookup per character, 4.6x as fast as trying each
# alternative at every position (the scan was a tenth of a part's work).
_SCAN_RE = re.compile(
    r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"?'
    r"|//[^\n]*"
    r"|\{|\}"
    r"|\n[ \t]*+((?:cuda_tile\.)?entry)[ \t]++@([\w$.\-]++)?"
)
# What may follow the `{` that opens a kernel's body on its line.
_LINE_REST_RE = re.compile(r"[ \t]*+(?://[^\n]*+)?(?:\n|\Z)")


class _Kernel:
    __slots__ = ("start", "end", "name")

    def __init__(self, start: int, name: str | None) -> None:
        self.start = start  # of `entry`
        self.end = -1  # after the `}` closing its body (-1: not found)
        self.name = name


class _Plan:
    """The region that holds the kernels (where its `{` and `}` are) and its kernels."""

    __slots__ = ("open", "close", "kernels")

    def __init__(self, open_at: int, close_at: int, kernels: list[_Kernel]) -> None:
        self.open = open_at
        self.close = close_at  # where its closing `}` is
        self.kernels = kernels


def _scan(text: str) -> _Plan | None:
    """The region with the most kernels, or None when the text holds no such region of two
    or more (or its braces do not balance)."""
    stack: list[int] = []  # open braces
    closes: dict[int, int] = {}  # open brace -> after its `}`
    by_region: dict[int, list[_Kernel]] = {}
    pending: list[tuple[_Kernel, int]] = []  # kernels whose body has not opened: (kernel, depth)
    bodies: dict[int, _Kernel] = {}  # a body's open brace -> its kernel
    for m in _SCAN_RE.finditer(text):
        start = m.start()
        ch = text[start]
        if ch == "{":
            if pending and len(stack) == pending[-1][1] and _LINE_REST_RE.match(text, m.end()):
                bodies[start] = pending.pop()[0]
            stack.append(start)
        elif ch == "}":
            if not stack:
                return None
            opened = stack.pop()
            closes[opened] = m.end()
            kernel = bodies.get(opened)
            if kernel is not None:
                kernel.end = m.end()
        elif ch in '"/':
            continue
        else:
            if not stack:
                continue  # a kernel outside any module (the text's first line too): not one of a module's parts
            kernel = _Kernel(m.start(1), m.group(2))
            by_region.setdefault(stack[-1], []).append(kernel)
            pending.append((kernel, len(stack)))
    if stack or not by_region:
        return None
    open_at, kernels = max(by_region.items(), key=lambda item: len(item[1]))
    if len(kernels) < 2 or any(k.end < 0 for k in kernels):
        return None
    return _Plan(open_at, closes[open_at] - 1, kernels)


def _parts(text: str, parts: int | None) -> int:
    if parts is None:
        parts = min(available_workers(), len(text) // MIN_PART_CHARS)
    return parts


# --------------------------------------------------------------------------------------------
# fmt


def format_text(
    text: str, name: str, options, allow_unregistered: bool = False, parts: int | None = None
) -> str | None:
    """`print_module(parse(text).module, options)` computed in `parts` processes (default:
    as many as pay), or None where that is not exactly the one-process text (see above)."""
    parts = _parts(text, parts)
    if parts < 2 or options.debuginfo:
        return None
    plan = _scan(text)
    if plan is None:
        return None
    cuts = _cuts(text, plan, parts)
    if not cuts:
        return None
    source = SourceFile(text, name)
    bounds = [plan.open + 1, *cuts, plan.close]
    parse_options = ParseOptions(allow_unregistered=allow_unregistered)
    tasks = [_format_task(source, plan, bounds, i, parse_options, options) for i in range(len(bounds) - 1)]
    results = fork_map(tasks)
    if results is None or any(r is None for r in results):
        return None
    head, tail = results[0]  # type: ignore[misc]
    spliced = head + "".join(results[1:]) + tail  # type: ignore[arg-type]
    return spliced if spliced.endswith("\n") or not spliced else spliced + "\n"


def _cuts(text: str, plan: _Plan, parts: int) -> list[int]:
    """Where the runs of `_runs` begin, but for the first: each at the comment lines and blank
    lines right above the run's first kernel (the comments go with the kernel they stand
    above; a comment on the last line of the item before stays with that)."""
    return [_lines_above(text, run[0].start, plan.open) for run in _runs(plan, parts)[1:]]


def _lines_above(text: str, start: int, floor: int) -> int:
    """Where the run of blank and comment-only lines just above the line of `start` begins (the
    line's own start when there is none); never before the line after `floor`."""
    cut = text.rfind("\n", floor, start) + 1
    while cut > floor + 1:
        above = text.rfind("\n", floor, cut - 1) + 1
        line = text[above : cut - 1].strip()
        if line and not line.startswith("//"):
            break
        if above <= floor:
            break
        cut = above
    return max(cut, floor + 1)


def _format_task(
    source: SourceFile, plan: _Plan, bounds: list[int], index: int, parse_options: ParseOptions, options
) -> Callable[[], object]:
    """Part `index`: the ops of the region from bounds[index] to bounds[index + 1]. The first
    part answers its text up to where its last op ends and from where the region's closing
    line begins (the others' runs go between); the others their run's text."""

    def run() -> object:
        lo, hi = bounds[index], bounds[index + 1]
        first, last = index == 0, index == len(bounds) - 2
        skips = ([] if first else [(plan.open + 1, lo)]) + ([] if last else [(hi, plan.close)])
        parser, result = _parse(source, skips, parse_options)
        if result is None or not _skipped_as_planned(parser, plan, lo, hi, first, last):
            return None
        region_ops = _region_ops(result, plan.open)
        if not region_ops or region_ops[0].span is None or region_ops[0].span.start < lo:
            return None
        if region_ops[-1].span is None or region_ops[-1].span.end > hi:
            return None
        # The comments of the region the lexer met on its way into or out of the part (where a
        # skip starts or ends) belong to another part.
        module = result.module
        module.comments = [
            c for c in module.comments if not plan.open < c.span.start < plan.close or lo <= c.span.start < hi
        ]
        printer = Printer(module, options)
        printer.mark_region = plan.open
        printer.print_module()
        marks = printer.op_marks
        if printer.unnamed or len(marks) != len(region_ops) or printer.tail_mark < 0:
            return None
        out = printer.out
        if first:
            return "".join(out[: marks[-1][2]]), "".join(out[printer.tail_mark :])
        end = printer.tail_mark if last else marks[-1][2]
        return "".join(out[marks[0][0] : end])  # from the line of its first op, comments above it included

    return run


def _skipped_as_planned(parser: Parser, plan: _Plan, lo: int, hi: int, first: bool, last: bool) -> bool:
    """The parser skipped what the part is not: from the region's first op to where the part
    begins (unless it is the first), and from the first op after the part to the region's end
    (unless it is the last)."""
    done = parser.skipped
    if len(done) != (0 if first else 1) + (0 if last else 1):
        return False
    if not first and not (done[0][1] == lo and plan.open < done[0][0] < lo):
        return False
    return last or (done[-1][1] == plan.close and hi <= done[-1][0] < plan.close)


# --------------------------------------------------------------------------------------------
# check


def in_kernel_parts(
    text: str, name: str, options: ParseOptions, work: Callable[[Module], object], parts: int | None = None
) -> list[object] | None:
    """`work(module)` in `parts` processes, each on the module parsed with its share of the
    kernels (and every other item), or None where the parallel path does not apply or a part
    did not parse cleanly (`check_text` in compiler.verify runs the verifier this way). The
    kernels' names must differ: a redefinition is a whole-module error no part would see."""
    parts = _parts(text, parts)
    if parts < 2:
        return None
    plan = _scan(text)
    if plan is None:
        return None
    names = [k.name for k in plan.kernels]
    if None in names or len(set(names)) != len(names):
        return None
    runs = _runs(plan, parts)
    if len(runs) < 2:
        return None
    source = SourceFile(text, name)
    tasks = [_kernels_task(source, plan, runs, i, options, work) for i in range(len(runs))]
    results = fork_map(tasks)
    if results is None or None in results:
        return None
    return [r[0] for r in results]  # type: ignore[index]


def _runs(plan: _Plan, parts: int) -> list[list[_Kernel]]:
    """The kernels in `parts` consecutive runs of similar length."""
    total = sum(k.end - k.start for k in plan.kernels)
    runs: list[list[_Kernel]] = [[]]
    done = 0
    for kernel in plan.kernels:
        if runs[-1] and done >= total * len(runs) / parts and len(runs) < parts:
            runs.append([])
        runs[-1].append(kernel)
        done += kernel.end - kernel.start
    return runs


def _kernels_task(source: SourceFile, plan: _Plan, runs: list[list[_Kernel]], index: int, options, work):
    def run() -> tuple[object] | None:  # (the work's answer,), or None: not parsed as planned
        others = _ranges(source.text, [k for i, run in enumerate(runs) if i != index for k in run])
        parser, result = _parse(source, others, options)
        if result is None or parser.skipped != others:
            return None
        ends = {op.span.start: op.span.end for op in _region_ops(result, plan.open) if op.span is not None}
        if any(ends.get(k.start) != k.end for k in runs[index]):
            return None
        return (work(result.module),)

    return run


def _ranges(text: str, kernels: list[_Kernel]) -> list[tuple[int, int]]:
    """The text of `kernels` as ranges to skip, kernels separated by nothing but spaces in
    one: after each skip the lexer reads a window of tokens ahead (~2,000 characters), which
    for a kernel skipped on its own was the next kernel, skipped in turn (a part parsed half
    the kernels for 64 % of the whole module's instructions)."""
    ranges: list[tuple[int, int]] = []
    for k in kernels:
        if ranges and text[ranges[-1][1] : k.start].isspace():
            ranges[-1] = (ranges[-1][0], k.end)
        else:
            ranges.append((k.start, k.end))
    return ranges


# --------------------------------------------------------------------------------------------


def _parse(
    source: SourceFile, skips: list[tuple[int, int]], options: ParseOptions
) -> tuple[Parser, ParseResult | None]:
    """The module parsed with `skips`; no result when the parser had anything to say."""
    parser = Parser(source, options)
    parser.skips = skips
    try:
        module = parser.parse_module()
    except RecursionError:
        return parser, None
    if parser.diagnostics:
        return parser, None
    return parser, ParseResult(module, [], source, None)


def _region_ops(result: ParseResult, open_at: int) -> list:
    """The ops of the region whose `{` is at `open_at` (a `cuda_tile.module`'s, at the top or
    inside the frontend contract's `module {...}`)."""
    pending = list(result.module.body.ops)
    for _ in range(3):
        nested = []
        for op in pending:
            for region in op.regions:
                if region.span is not None and region.span.start == open_at:
                    return region.blocks[0].ops if region.blocks else []
                for block in region.blocks:
                    nested.extend(block.ops)
        pending = nested
    return []
