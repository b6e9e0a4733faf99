"""Re-analysis after an edit inside one kernel gives what analysing the new text from scratch
gives: the same diagnostics at the same places, the same index."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

pytest.importorskip("lsprotocol", reason="the `test` extra (lsprotocol) is not installed")

from tile_lsp.documents import Settings, analyze  # noqa: E402
from tile_lsp.incremental import changed_region, reanalyze  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "examples").glob("*.tileir"))


def _multi_kernel_text() -> str:
    """One module holding every example's kernels (renamed apart), so edits have neighbours."""
    bodies = []
    for n, path in enumerate(FILES):
        text = path.read_text()
        start = text.index("entry @")
        end = text.rindex("}")  # the module's closing brace
        body = text[start:end].rstrip()
        name = body[len("entry @") : body.index("(")]
        bodies.append(body.replace(f"entry @{name}(", f"entry @{name}_{n}(", 1))
    return "// header comment\ncuda_tile.module @all {\n" + "\n".join("  " + b for b in bodies) + "\n}\n"


def _snapshot(analysis):
    diags = [(d.severity, d.message, d.span.start, d.span.end) for d in analysis.diagnostics]
    occs = [(o.span.start, o.span.end, o.kind, o.is_definition) for o in analysis.occurrences()]
    return diags, occs


EDITS = [
    lambda line: line + "\n",  # a new empty line
    lambda line: line.replace("%", "%x", 1),  # an undefined or redefined value
    lambda line: line.replace(" : ", " :: ", 1),  # a syntax error
    lambda line: line.replace("tile<", "tile<2x", 1),  # a type error
    lambda line: "",  # a deleted line
]


def test_changed_region():
    assert changed_region("abcdef", "abXdef") == (2, 3, 3)
    assert changed_region("abc", "abc") == (3, 3, 3)
    assert changed_region("aaaa", "aaaaa") == (4, 4, 5)
    long_old = "x" * 10_000 + "A" + "y" * 9_000
    long_new = "x" * 10_000 + "BB" + "y" * 9_000
    assert changed_region(long_old, long_new) == (10_000, 10_001, 10_002)


@pytest.mark.parametrize("seed", range(6))
def test_edits_inside_kernels_match_a_fresh_analysis(seed):
    rng = random.Random(seed)
    text = _multi_kernel_text()
    settings = Settings()
    current = analyze("file:///t.tileir", text, 1, settings)
    assert len(current.units) > 3, "the document should be cut into kernels"
    reused = 0
    for version in range(2, 14):
        lines = text.split("\n")
        # A line inside some kernel: indented deeper than the entry line.
        candidates = [i for i, line in enumerate(lines) if line.startswith("    ")]
        i = rng.choice(candidates)
        lines[i] = rng.choice(EDITS)(lines[i])
        new_text = "\n".join(lines)
        before = current
        current = reanalyze(before, new_text, version)
        fresh = analyze("file:///t.tileir", new_text, version, settings)
        assert current.text == new_text
        assert _snapshot(current) == _snapshot(fresh), f"edit of line {i + 1}"
        for offset in rng.sample(range(len(new_text)), 40):
            a, b = current.at(offset), fresh.at(offset)
            assert (a and (a.span, a.kind)) == (b and (b.span, b.kind)), offset
        reused += len(current.units) == len(before.units) and any(u.item is not None for u in current.units)
        text = new_text
    assert reused > 0, "no edit took the one-kernel path"
