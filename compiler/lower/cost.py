"""Where a compiled kernel's code goes: its LLVM IR instructions counted per Tile IR op.

    from compiler.lower.cost import op_costs, cost_table
    costs = op_costs(source, compiled.asm["llir"])   # [(instructions, "f.tileir:12", "mmaf"), ...]
    print(cost_table(source, compiled.asm["llir"]))  # what `tileir compile --emit ops` writes

Triton inlines every jitted helper (a conversion's rounding, a combiner) into the kernel and
keeps the call site in each instruction's debug location (`!DILocation(..., inlinedAt: ...)`):
the outermost location of an instruction is a line of the kernel function in the generated
source, which names the Tile IR op it came from (`KernelSource.op_at`). PTX keeps only the
innermost line (the helper's), and the SASS line table the same, so the count is taken from
the LLVM IR: the code after Triton's layout choices and LLVM's optimisation, one instruction
per operation on a thread's registers (a 64x64 f32 add on 128 threads is 32 `fadd`), before
ptxas schedules and allocates registers. That is what shows which op a layout made expensive
(an operand converted on every copy a layout holds, an extract's layout spread to a
multiplication) without a GPU.
"""

from __future__ import annotations

import re
from collections import Counter

from .codegen import KernelSource

_LOCATION = re.compile(
    r"^!(\d+) = (?:distinct )?!DILocation\(line: (\d+)(?:, column: \d+)?, scope: ![^,)]+(?:, inlinedAt: !(\d+))?"
)
_DEBUG = re.compile(r", !dbg !(\d+)")
_DEFINE = re.compile(r"^define\b[^@]*@([\w.$]+)\(")
NO_LOCATION = "(no location)"


def op_costs(src: KernelSource, llir: str) -> list[tuple[int, str, str]]:
    """(instructions, Tile IR location, op mnemonic) per op of the kernel, most first. An
    instruction whose outermost line maps to no op is counted under the generated source's
    line (`generated line N`); one without a debug location under NO_LOCATION."""
    lines = llir.splitlines()
    outer: dict[str, str] = {}  # location id -> its inlinedAt (the call site), if any
    line_of: dict[str, int] = {}
    for text in lines:
        m = _LOCATION.match(text)
        if m:
            line_of[m[1]] = int(m[2])
            if m[3]:
                outer[m[1]] = m[3]
    counts: Counter[int | None] = Counter()
    inside = False
    for text in lines:
        m = _DEFINE.match(text)
        if m:
            inside = m[1] == src.name
            continue
        if not inside:
            continue
        if text.startswith("}"):
            inside = False
            continue
        if not text.startswith("  ") or not text.strip() or text.lstrip().startswith(";"):
            continue  # labels, blank lines, comments
        d = _DEBUG.search(text)
        if d is None:
            counts[None] += 1
            continue
        loc, seen = d[1], set()
        while loc in outer and loc not in seen:  # to the outermost call site
            seen.add(loc)
            loc = outer[loc]
        counts[line_of.get(loc)] += 1
    source_lines = src.text.splitlines()
    # (Triton 3.9 gives the kernel's `ret` the line of its `def`: the entry's own code.)
    define = next((n for n, text in enumerate(source_lines, 1) if text.startswith(f"def {src.name}(")), None)
    by_op: Counter[tuple[str, str]] = Counter()
    for line, n in counts.items():
        op = src.op_at(line) if line is not None else None
        if line is None:
            key = (NO_LOCATION, "")
        elif line == define:
            key = (f"@{src.kernel}", "entry")
        elif op is None:
            key = (f"generated line {line}", "")
        else:
            key = (src.where_at(line) or f"generated line {line}", op.mnemonic)
        by_op[key] += n
    return sorted(((n, where, name) for (where, name), n in by_op.items()), key=lambda t: (-t[0], t[1]))


def cost_table(src: KernelSource, llir: str) -> str:
    """`op_costs` as the text `tileir compile --emit ops` writes."""
    costs = op_costs(src, llir)
    total = sum(n for n, _, _ in costs) or 1
    width = max([len("where"), *(len(w) for _, w, _ in costs)])
    out = [
        f"# LLVM IR instructions of @{src.kernel} for {src.target.arch} by Tile IR op, {total} in all",
        "# (after Triton's inlining and LLVM's optimisation, per thread; helpers counted at their call)",
        f"{'count':>8}  {'share':>6}  {'where':<{width}}  op",
    ]
    out += [f"{n:>8}  {100 * n / total:>5.1f}%  {where:<{width}}  {name}" for n, where, name in costs]
    return "\n".join(out) + "\n"
