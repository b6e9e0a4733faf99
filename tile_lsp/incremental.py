"""Re-analysis after an edit: re-parse and re-verify only the kernel the edit is inside.

(First version: analyze from scratch; the per-kernel path follows.)
"""

from __future__ import annotations

from .documents import Analysis, analyze


def reanalyze(previous: Analysis, text: str, version: int | None) -> Analysis:
    return analyze(previous.uri, text, version, previous.settings, name=previous.source.name)
