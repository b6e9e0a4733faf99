"""Write `expected-*` comments for diagnostics: the inverse of `-verify-diagnostics`.

    checks = missing_checks(text, "k.tileir")        # what `tileir opt -verify-diagnostics` would flag
    new_text = apply_edits(text, check_edits(text, checks))

Each check becomes a comment line inserted above the line the diagnostic points at, indented
like that line: `// expected-error@+1 {{message}}`. Several checks for one line are stacked,
the first with `@+N`, the next with `@+(N-1)`, ..., so that every comment designates the same
line whatever else surrounds it (`@below` would skip a target line that holds an `expected-*`
comment itself). A diagnostic without a location gets `@unknown` on the first line.

The language server's "add expected-* checks" action and any other face share this.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..ir.diagnostics import Diagnostic, TextEdit
from ..ir.source import SourceFile, Span
from .engine import VerifyOptions
from .expected import check_expected, flatten

# A `--split-input-file` separator line (the one `compiler.text.split_input` splits at).
_SPLIT_MARKER_RE = re.compile(r"^// -----", re.MULTILINE)
_UNEXPECTED_RE = re.compile(r"unexpected (error|warning|note|remark): (.*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Check:
    kind: str  # error, warning, note, remark
    line: int | None  # 0-based line the diagnostic points at; None: it has no location
    message: str


def checks_for(diagnostics: Iterable[Diagnostic], source: SourceFile) -> list[Check]:
    """A check for each diagnostic and each of its related notes (as `-verify-diagnostics`
    counts them) that points into `source`; notes about another file are left out."""
    checks: list[Check] = []
    for severity, message, span, src in flatten(diagnostics):
        if src is None or span is None:
            checks.append(Check(severity.label, None, message))
        elif src is source or src.name == source.name:
            checks.append(Check(severity.label, source.line_col(span.start)[0], message))
    return checks


def missing_checks(
    text: str, name: str = "<input>", options: VerifyOptions | None = None, split_input_file: bool | None = None
) -> list[Check]:
    """The diagnostics `tileir opt -verify-diagnostics` would call unexpected in `text`: the
    ones no `expected-*` comment covers yet. Verification stops each kernel at its first error,
    as `tileir opt` does. With `split_input_file` (default: when `text` has a `// -----` line)
    each chunk is checked on its own, as `-split-input-file` does."""
    from ..text import split_input
    from . import check_text

    base = options or VerifyOptions()
    options = VerifyOptions(False, base.target_version, base.unsupported_hints)
    if split_input_file is None:
        split_input_file = _SPLIT_MARKER_RE.search(text) is not None
    chunks = split_input(text) if split_input_file else [(text, 0)]
    checks: list[Check] = []
    for chunk, line_offset in chunks:
        # Pad with blank lines so that lines are numbered as in the whole text (what opt does).
        padded = "\n" * line_offset + chunk
        _, diagnostics = check_text(padded, name, options)
        report = check_expected(diagnostics, SourceFile(padded, name), line_offset)
        for complaint in report.complaints:
            match = _UNEXPECTED_RE.fullmatch(complaint.message)
            if match is None:  # an expected-* comment nothing matched: not ours to add
                continue
            line = complaint.source.line_col(complaint.span.start)[0] if complaint.source is not None else None
            checks.append(Check(match[1], line, match[2]))
    return checks


def check_comment(check: Check, designator: str) -> str:
    # `-verify-diagnostics` matches a substring of the message: one line of it is enough, and
    # the greedy `{{(.*)}}` of its pattern keeps a `}}` inside the message intact.
    message = check.message.splitlines()[0] if check.message else ""
    return f"// expected-{check.kind}{designator} {{{{{message}}}}}"


def check_edits(text: str, checks: Iterable[Check]) -> list[TextEdit]:
    """Insertions (one per target line, in document order) that add a comment for each check."""
    source = SourceFile(text, "<text>")
    starts = source.line_starts
    by_line: dict[int, list[Check]] = {}
    for check in checks:
        by_line.setdefault(0 if check.line is None else check.line, []).append(check)
    edits: list[TextEdit] = []
    for line in sorted(by_line):
        group = sorted(by_line[line], key=lambda c: c.line is not None)  # @unknown ones first
        offset = starts[line] if line < len(starts) else len(text)
        target = source.line_text(line) if line < len(starts) else ""
        indent = target[: len(target) - len(target.lstrip(" \t"))]
        lines = []
        for i, check in enumerate(group):
            designator = "@unknown" if check.line is None else f"@+{len(group) - i}"
            lines.append(indent + check_comment(check, designator) + "\n")
        edits.append(TextEdit(Span(offset, offset), "".join(lines)))
    return edits


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """`text` with non-overlapping `edits` applied."""
    for edit in sorted(edits, key=lambda e: e.span.start, reverse=True):
        text = text[: edit.span.start] + edit.new_text + text[edit.span.end :]
    return text
