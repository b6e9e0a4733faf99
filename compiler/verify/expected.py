"""`-verify-diagnostics`: check diagnostics against `expected-*` comments, as MLIR does.

A test file says which diagnostics it expects in comments:

    // expected-error @below {{must be a power of two}}
    %t = ...
    %u = ... // expected-warning {{unused}}
    // expected-note @-2 {{defined here}}

`@+N` / `@-N` count from the comment's line; `@above` is the nearest line above that holds no
`expected-*` comment, `@below` the nearest such line below; no designator means the comment's
own line. The text between `{{` and `}}` must occur in the diagnostic's message; in
`expected-error-re` comments, `{{regex}}` groups inside it are regular expressions.

`check_expected` returns MLIR's own complaints: `unexpected error: ...` for a diagnostic no
comment asked for, and `expected error "..." was not produced` for a comment nothing matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..ir.diagnostics import Diagnostic, Severity
from ..ir.source import SourceFile, Span

_EXPECTED_RE = re.compile(
    r"expected-(?P<kind>error|warning|note|remark)(?P<re>-re)?"
    r"\s*(?:@(?P<at>[+-]\d+|above|below|unknown|[^\s{]+))?\s*\{\{(?P<msg>.*)\}\}"
)


@dataclass(frozen=True, slots=True)
class Expected:
    kind: str  # error, warning, note, remark
    line: int | None  # 0-based line the diagnostic is expected on; None for @unknown
    message: str
    regex: bool
    comment_line: int  # 0-based line of the comment itself
    column: int = 0  # where the comment's `expected-` starts on its line

    def matches(self, message: str) -> bool:
        if not self.regex:
            return self.message in message
        return re.search(_regex_of(self.message), message) is not None


def _regex_of(text: str) -> str:
    """An `expected-*-re` text as a Python regex: `{{...}}` groups are regexes, the rest literal."""
    out: list[str] = []
    pos = 0
    for m in re.finditer(r"\{\{(.*?)\}\}", text):
        out.append(re.escape(text[pos : m.start()]))
        out.append(f"(?:{m.group(1)})")
        pos = m.end()
    out.append(re.escape(text[pos:]))
    return "".join(out)


def expected_diagnostics(text: str) -> list[Expected]:
    """Every `expected-*` comment of `text`, with the 0-based line it designates."""
    result: list[Expected] = []
    pending_below: list[tuple[str, str, bool, int, int]] = []
    last_plain_line: int | None = None
    for lineno, line in enumerate(text.splitlines()):
        matches = list(_EXPECTED_RE.finditer(line)) if "expected-" in line else []
        if not matches:
            for kind, msg, is_re, comment_line, col in pending_below:
                result.append(Expected(kind, lineno, msg, is_re, comment_line, col))
            pending_below.clear()
            last_plain_line = lineno
            continue
        for m in matches:
            kind, msg, is_re, at, col = m["kind"], m["msg"], bool(m["re"]), m["at"], m.start()
            if at is None:
                result.append(Expected(kind, lineno, msg, is_re, lineno, col))
            elif at[0] in "+-":
                result.append(Expected(kind, lineno + int(at), msg, is_re, lineno, col))
            elif at == "above":
                result.append(Expected(kind, last_plain_line, msg, is_re, lineno, col))
            elif at == "below":
                pending_below.append((kind, msg, is_re, lineno, col))
            else:  # @unknown, or a file:line designator
                result.append(Expected(kind, None, msg, is_re, lineno, col))
    for kind, msg, is_re, comment_line, col in pending_below:  # @below at the end of the file
        result.append(Expected(kind, None, msg, is_re, comment_line, col))
    return result


def flatten(diagnostics: Iterable[Diagnostic]) -> list[tuple[Severity, str, Span | None, SourceFile | None]]:
    """Each diagnostic and each of its related notes as (severity, message, span, source)."""
    out: list[tuple[Severity, str, Span | None, SourceFile | None]] = []
    for d in diagnostics:
        out.append((d.severity, d.message, d.span, d.source))
        for rel in d.related:
            out.append((Severity.NOTE, rel.message, rel.span, rel.source or d.source))
    return out


@dataclass(slots=True)
class ExpectationReport:
    complaints: list[Diagnostic]  # MLIR's messages for every mismatch (all errors)
    expected: int  # expected-* comments checked
    met: int  # ... of which a diagnostic matched
    unexpected: int  # diagnostics no comment asked for

    @property
    def ok(self) -> bool:
        return not self.complaints


def check_expected(diagnostics: Iterable[Diagnostic], source: SourceFile, line_offset: int = 0) -> ExpectationReport:
    """MLIR's verdict on `diagnostics` given the `expected-*` comments of `source`.

    `line_offset` is the line of `source` where the checked text starts (a chunk of a
    `--split-input-file` document is checked on its own, the lines before it left blank).
    """
    text = source.text
    expectations = [e for e in expected_diagnostics(text) if e.comment_line >= line_offset]
    used = [False] * len(expectations)
    complaints: list[Diagnostic] = []
    for severity, message, span, src in flatten(diagnostics):
        line = src.line_col(span.start)[0] if (src is not None and span is not None) else None
        kind = severity.label
        found = False
        for i, e in enumerate(expectations):
            if not used[i] and e.kind == kind and e.line == line and e.matches(message):
                used[i] = found = True
                break
        if not found:
            where = span if span is not None else Span(0, 0)
            complaints.append(
                Diagnostic(Severity.ERROR, "verify-diagnostics", f"unexpected {kind}: {message}", where, src)
            )
    unexpected = len(complaints)
    for e, ok in zip(expectations, used):
        if not ok:
            start = source.offset(e.comment_line, e.column)
            complaints.append(
                Diagnostic(
                    Severity.ERROR,
                    "verify-diagnostics",
                    f'expected {e.kind} "{e.message}" was not produced',
                    Span(start, start),
                    source,
                )
            )
    return ExpectationReport(complaints, len(expectations), sum(used), unexpected)
