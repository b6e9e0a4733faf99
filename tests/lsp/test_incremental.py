"""Re-analysis after an edit inside one kernel gives what analysing the new text from scratch
gives: the same diagnostics at the same places, the same index."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

pytest.importorskip("lsprotocol", reason="the `test` extra (lsprotocol) is not installed")

from tile_lsp.documents import Settings, analyze  # noqa: E402
from tile_lsp.features.formatting import format_text, module_of  # noqa: E402
from tile_lsp.features.navigation import folding_range_list  # noqa: E402
from tile_lsp.features.tokens import full_data  # noqa: E402
from tile_lsp.incremental import changed_region, reanalyze  # noqa: E402
from tile_lsp.store import DocumentSource, LineIndex, merge_change  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "examples").glob("*.tileir"))


def _multi_kernel_text() -> str:
    """One module holding every example's kernels (renamed apart), so edits have neighbours,
    with comments between and inside them."""
    bodies = []
    for n, path in enumerate(FILES):
        text = path.read_text()
        start = text.index("entry @")
        end = text.rindex("}")  # the module's closing brace
        body = text[start:end].rstrip()
        name = body[len("entry @") : body.index("(")]
        bodies.append(body.replace(f"entry @{name}(", f"entry @{name}_{n}(", 1))
    between = "\n  // between kernels\n  // (two lines)\n"
    return "// header comment\ncuda_tile.module @all {\n" + between.join("  " + b for b in bodies) + "\n}\n"


def _snapshot(analysis):
    diags = [(d.severity, d.message, d.span.start, d.span.end) for d in analysis.diagnostics]
    occs = [(o.span.start, o.span.end, o.kind, o.is_definition) for o in analysis.occurrences()]
    comments = [(c.text, c.span.start, c.span.end) for c in analysis.comments()]
    # The spans of the module (where its region and block end, with its `}` or without),
    # which the next edit's re-analysis starts from. (Kernels keep their spans when the
    # units after an edit move: `Unit.shift`.)
    modules = [
        (op.span, [(r.span, [b.span for b in r.blocks]) for r in op.regions])
        for op in analysis.module.ops
        if op.name == "cuda_tile.module"
    ]
    return diags, occs, comments, modules


def _features(analysis):
    """What the whole-document features answer: semantic tokens (kept per unit between
    versions) and folding ranges (comments included)."""
    tokens = asyncio.run(full_data(analysis))
    assert json.loads(tokens.json) == tokens  # the JSON the server writes, made from the parts'
    folds = [(f.start_line, f.end_line, f.kind) for f in folding_range_list(analysis, None)]
    return tokens, folds


EDITS = [
    lambda line: line + "\n",  # a new empty line
    lambda line: line.replace("%", "%x", 1),  # an undefined or redefined value
    lambda line: line.replace(" : ", " :: ", 1),  # a syntax error
    lambda line: line.replace("tile<", "tile<2x", 1),  # a type error
    lambda line: "",  # a deleted line
    lambda line: line + "  // a comment",  # a comment after code
    lambda line: "    // one\n    // two\n" + line,  # a foldable run of comments
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
        line_start = sum(len(line) + 1 for line in lines[:i])
        old_length = len(lines[i])
        lines[i] = rng.choice(EDITS)(lines[i])
        new_text = "\n".join(lines)
        before = current
        # The server says which region changed (here: the whole line, as a client may send
        # it); without one the texts are compared.
        region = (line_start, line_start + old_length, line_start + len(lines[i])) if version % 2 else None
        current = reanalyze(before, new_text, version, region)
        fresh = analyze("file:///t.tileir", new_text, version, settings)
        assert current.text == new_text
        assert _snapshot(current) == _snapshot(fresh), f"edit of line {i + 1}"
        assert _features(current) == _features(fresh), f"edit of line {i + 1}"

        for offset in rng.sample(range(len(new_text)), 40):
            a, b = current.at(offset), fresh.at(offset)
            assert (a and (a.span, a.kind)) == (b and (b.span, b.kind)), offset
        reused += len(current.units) == len(before.units) and any(u.item is not None for u in current.units)
        text = new_text
    assert reused > 0, "no edit took the one-kernel path"


@pytest.mark.parametrize("seed", range(3))
def test_formatting_prints_the_spliced_module_as_a_fresh_parse(seed):
    """After edits that keep the text free of syntax errors (lines added, deleted,
    commented), formatting prints the analysis's module, its units moved back into document
    coordinates: the result is that of a fresh parse, and the analysis stays right."""
    rng = random.Random(seed)
    text = _multi_kernel_text()
    settings = Settings()
    current = analyze("file:///t.tileir", text, 1, settings)
    for version in range(2, 10):
        lines = text.split("\n")
        i = rng.choice([i for i, line in enumerate(lines) if line.startswith("    %")])
        lines[i] = rng.choice([EDITS[0], EDITS[5], EDITS[6]])(lines[i])
        text = "\n".join(lines)
        current = reanalyze(current, text, version)
        assert current.parse_errors == [] and any(u.item is not None for u in current.units)
        if version % 3 == 0:
            _, hunks, errors = format_text(text, "t.tileir", module_of(current))
            assert (hunks, errors) == format_text(text, "t.tileir")[1:], f"version {version}"
            assert current.aligned
        fresh = analyze("file:///t.tileir", text, version, settings)
        assert _snapshot(current) == _snapshot(fresh) and _features(current) == _features(fresh)


def test_the_region_an_edit_sequence_changed():
    """merge_change's region, applied to the first text, gives the last."""
    rng = random.Random(5)
    for _ in range(300):
        first = text = "".join(rng.choice("ab\n") for _ in range(rng.randrange(0, 40)))
        region = None
        for _ in range(rng.randrange(1, 5)):
            a = rng.randrange(len(text) + 1)
            b = rng.randrange(a, len(text) + 1)
            new = "".join(rng.choice("xy\n") for _ in range(rng.randrange(0, 5)))
            text = text[:a] + new + text[b:]
            region = merge_change(region, a, b, len(new))
        start, old_end, new_end = region
        assert first[:start] + text[start:new_end] + first[old_end:] == text
        assert first[:start] == text[:start] and first[old_end:] == text[new_end:]


def test_line_index_follows_edits():
    rng = random.Random(7)
    text = "".join(rng.choice("ab\n") for _ in range(3000))
    source = DocumentSource(text)
    for _ in range(200):
        a = rng.randrange(len(text) + 1)
        b = min(len(text), a + rng.choice((0, 1, 5, 50, 2000)))
        new = "".join(rng.choice("xy\n") for _ in range(rng.choice((0, 1, 3, 1500))))
        text = text[:a] + new + text[b:]
        source = source.edited(a, b, new)
        assert source.text == text
        assert source.index.starts() == LineIndex.of(text).starts()
        for offset in rng.sample(range(len(text) + 1), 20):
            line = text.count("\n", 0, offset)
            assert source.line_col(offset) == (line, offset - (text.rfind("\n", 0, offset) + 1))
    assert len(source.index.rel) > 1, "the index should hold several blocks"


def _two_kernels_named_alike() -> str:
    body = (ROOT / "examples" / "vector_add.tileir").read_text()
    entry = body[body.index("entry @") : body.rindex("}")].rstrip()
    other = entry.replace("entry @vector_add(", "entry @other(", 1)
    return "cuda_tile.module @m {\n  " + "\n  ".join((entry, entry, other)) + "\n}\n"


def _redefinitions(analysis) -> list[int]:
    return [d.span.start for d in analysis.diagnostics if "redefinition of symbol" in d.message]


def test_redefinition_follows_edits_of_either_kernel():
    text = _two_kernels_named_alike()
    first = text.index("entry @vector_add(")
    second = text.index("entry @vector_add(", first + 1)
    settings = Settings()
    analysis = analyze("file:///r.tileir", text, 1, settings)
    assert len(_redefinitions(analysis)) == 1
    # Edits inside either kernel keep the error (the names are still the same).
    for kernel in (first, second):
        line_end = text.index("\n", kernel)
        edited = text[:line_end] + "\n" + text[line_end:]
        after = reanalyze(analyze("file:///r.tileir", text, 1, settings), edited, 2)
        assert _redefinitions(after) == _redefinitions(analyze("file:///r.tileir", edited, 2, settings)) != []
    # Renaming either kernel removes it.
    for kernel in (first, second):
        at = kernel + len("entry @vector_add")
        renamed = text[:at] + "_2" + text[at:]
        after = reanalyze(analyze("file:///r.tileir", text, 1, settings), renamed, 2)
        assert _redefinitions(after) == []


def _outside_edit(rng: random.Random, text: str, serial: int) -> tuple[int, int, str]:
    """A random edit outside the kernels of `_multi_kernel_text`'s layout: ([a, b) replaced by
    the string) a comment or blank line typed or deleted before the module, after its `{`,
    between kernels or before its `}`; a kernel pasted, deleted or renamed as a whole."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    # Lines outside kernels: the header, blank or comment lines at kernel depth, the module's
    # `{` and `}` lines (deleting those breaks the text). (Not a `    }` or blank line inside
    # a kernel: a kernel pasted there, at the column of the kernel around it, ends that kernel.)
    entries = [i for i, line in enumerate(lines) if line.startswith("  entry @")]
    inside = set()
    for entry in entries:
        inside.update(range(entry, next(j for j in range(entry, len(lines)) if lines[j] == "  }") + 1))
    outside = [
        i
        for i, line in enumerate(lines[:-1])
        if i not in inside and (line.strip() in ("", "}") or line.startswith(("//", "  //", "cuda_tile.")))
    ]
    module = next(i for i, line in enumerate(lines) if line.startswith("cuda_tile."))
    close = max(i for i, line in enumerate(lines) if line.startswith("}"))
    inside_module = [i for i in outside if module < i <= close]
    kind = rng.randrange(8)
    if not entries and kind in (4, 5, 6):
        kind = 7  # every kernel was deleted: paste one
    i = rng.choice(outside if kind < 3 else inside_module)
    if kind == 0:  # a new comment line
        return starts[i], starts[i], f"  // note {serial}\n"
    if kind == 1:  # a blank line
        return starts[i], starts[i], "\n"
    if kind == 2:  # a character typed into a comment, or at the end of a line outside kernels
        at = starts[i] + len(lines[i])
        return at, at, rng.choice([" ", "/", "x", "// c"]) if lines[i].lstrip().startswith("//") else " "
    if kind == 3:  # a comment or blank line deleted
        if lines[i].startswith("}"):
            i = rng.choice(outside)
        if lines[i].startswith(("}", "cuda_tile.")):
            return starts[i], starts[i], ""
        return starts[i], starts[i + 1], ""
    if kind < 7:
        entry = rng.choice(entries)
        end = next(j for j in range(entry + 1, len(lines)) if lines[j] == "  }") + 1
    if kind == 4:  # a kernel pasted before another, renamed apart
        copied = "\n".join(lines[entry:end]) + "\n"
        name = lines[entry][len("  entry @") : lines[entry].index("(")]
        return starts[entry], starts[entry], copied.replace(f"@{name}(", f"@pasted_{serial}(", 1)
    if kind == 5:  # a kernel deleted
        return starts[entry], starts[end], ""
    if kind == 6:  # a kernel renamed
        at = starts[entry] + len("  entry @")
        return at, at, f"r{serial}_"
    # A three-line kernel pasted where a line in the module starts (a blank or comment line,
    # or the module's `}`), sometimes with an error inside.
    body = "return" if rng.random() < 0.7 else "%x = addf %q, %q : tile<f32>\n    return"
    return starts[i], starts[i], f"  entry @small_{serial}() {{\n    {body}\n  }}\n"


@pytest.mark.parametrize("seed", range(6))
def test_edits_outside_kernels_match_a_fresh_analysis(seed):
    """Edits between kernels, in the header, and whole kernels pasted, deleted or renamed:
    analysed without parsing the document again (the module is the previous one), with what a
    fresh analysis gives."""
    rng = random.Random(seed)
    text = _multi_kernel_text()
    settings = Settings()
    current = analyze("file:///t.tileir", text, 1, settings)
    reused = 0
    undo = None
    for version in range(2, 22):
        if undo is not None:
            (a, b, new), undo = undo, None
        elif rng.random() < 0.1:  # the module's `{` deleted (analysed from scratch), then typed again
            a, b, new = text.index("{"), text.index("{") + 1, ""
            undo = (a, a, "{")
        else:
            a, b, new = _outside_edit(rng, text, version)
        new_text = text[:a] + new + text[b:]
        before = current
        region = (a, b, a + len(new)) if version % 2 else None
        current = reanalyze(before, new_text, version, region)
        fresh = analyze("file:///t.tileir", new_text, version, settings)
        assert current.text == new_text
        what = f"edit {a}:{b} -> {new!r}"
        assert _snapshot(current) == _snapshot(fresh), what
        assert _features(current) == _features(fresh), what
        for offset in rng.sample(range(len(new_text)), 40):
            x, y = current.at(offset), fresh.at(offset)
            assert (x and (x.span, x.kind)) == (y and (y.span, y.kind)), offset
        reused += current.module is before.module
        text = new_text
    assert reused > 8, "edits outside kernels should not parse the document again"


def test_an_error_between_kernels_is_shown():
    """Text between two kernels that is not an item: its error belongs to the kernel before
    (it was dropped), and stays after edits of that kernel."""
    body = (ROOT / "examples" / "vector_add.tileir").read_text()
    entry = body[body.index("entry @") : body.rindex("}")].rstrip()
    text = "cuda_tile.module @m {\n  " + entry + "\n  bogus junk\n  " + entry.replace("@vector_add(", "@b(") + "\n}\n"
    settings = Settings()
    analysis = analyze("file:///j.tileir", text, 1, settings)
    assert len(analysis.units) == 4
    assert [d.span.start for d in analysis.diagnostics] == [text.index("bogus")]
    line_end = text.index("\n", text.index("%tok"))
    edited = text[:line_end] + "\n" + text[line_end:]
    after = reanalyze(analysis, edited, 2)
    assert after.module is analysis.module
    assert _snapshot(after) == _snapshot(analyze("file:///j.tileir", edited, 2, settings))
    assert [d.span.start for d in after.diagnostics] == [edited.index("bogus")]


# A kernel as it is typed, one character at a time.
_TYPED = """  entry @typed(%a: tile<ptr<f32>>, %n: tile<i32>) {
    %c = constant <f32: 1.0> : tile<f32>
    return
  }
"""
_CLOSERS = {"(": ")", "{": "}", "[": "]"}


def _auto_closed(prefix: str) -> str:
    """`prefix` with the brackets an editor closes as they are typed (VS Code's autoClosingPairs)."""
    pending: list[str] = []
    for ch in prefix:
        if ch in _CLOSERS:
            pending.append(_CLOSERS[ch])
        elif pending and ch == pending[-1]:
            pending.pop()
    return prefix + "".join(reversed(pending))


@pytest.mark.parametrize("where", ["between", "first", "last", "last, a comment after", "after a kernel"])
@pytest.mark.parametrize("auto_close", [True, False])
def test_typing_a_kernel_between_kernels(where, auto_close):
    """A kernel typed character by character before the first kernel, between two (on the
    line of the next one's `entry`, or on a new line after a kernel's `}`), or before the
    module's `}` (the module left open while the kernel's `{` is): every state matches a fresh
    analysis, and while the brackets are closed (an editor closes them as they are typed) the
    text that is not yet a kernel is re-parsed on its own: its errors and types belong to the
    unit before it, as in a whole analysis (an error pointing at the next kernel's `entry`, to
    that kernel, which is then not verified)."""
    text = _multi_kernel_text() + ("// after the module\n" if where == "last, a comment after" else "")
    lines = text.split("\n")
    entries = [i for i, line in enumerate(lines) if line.startswith("  entry @")]
    line = {"between": entries[2], "first": entries[0], "after a kernel": entries[2]}.get(where)
    at = text.rindex("}") if line is None else sum(len(x) + 1 for x in lines[:line])
    typing = _TYPED
    if where == "after a kernel":  # Enter after the `}` of the kernel before, then the kernel
        at = text.rindex("}", 0, at) + 1
        typing = "\n" + _TYPED.rstrip("\n")
    settings = Settings()
    current = analyze("file:///t.tileir", text, 1, settings)
    reused = whole = 0
    for k in range(1, len(typing) + 1):
        typed = _auto_closed(typing[:k]) if auto_close else typing[:k]
        new_text = text[:at] + typed + text[at:]
        before = current
        current = reanalyze(before, new_text, k + 1)
        fresh = analyze("file:///t.tileir", new_text, k + 1, settings)
        assert _snapshot(current) == _snapshot(fresh), repr(typed)
        assert _features(current) == _features(fresh), repr(typed)
        reused += current.module is before.module
        whole += _auto_closed(typing[:k]) == typing[:k]
    # With the brackets closed every state is re-parsed in place (even `e` typed before the
    # `entry` of the kernel after it, on its line, which makes that kernel part of the text
    # skipped after the error). Without, so is every state typed on a line of its own (a
    # bracket left open ends at the next kernel's `entry`: Parser.next_item_here), and every
    # state whose brackets are all closed.
    # Typed last, a `{` before its `}` takes the module's `}`: the module is left open (the
    # error at its `{`) until the kernel's `}` is typed, and it is re-parsed in place too.
    everything = auto_close or where != "between" and where != "first"
    assert reused >= (len(typing) if everything else whole), (reused, whole)


def test_a_pasted_kernel_renamed_keystroke_by_keystroke():
    """A kernel pasted (its name now defined twice) and then renamed one character at a time:
    the "redefinition" error comes and goes with the names, and no keystroke parses the
    document again (the symbol table is the analysis's, checked from the kernels' names)."""
    text = _multi_kernel_text()
    start = text.index("  entry @")
    end = text.index("\n  }\n", start) + len("\n  }\n")
    kernel = text[start:end]
    name = kernel[len("  entry @") : kernel.index("(")]
    settings = Settings()
    current = analyze("file:///t.tileir", text, 1, settings)
    at = text.index("  // between kernels")
    pasted = text[:at] + kernel + text[at:]
    # Then the copy's `@name` -> `@namexyz` one character at a time, and one taken back.
    second = pasted.index(f"entry @{name}(", at) + len(f"entry @{name}")
    states = [pasted] + [pasted[:second] + "xyz"[:k] + pasted[second:] for k in (1, 2, 3, 2)]
    seen = []
    for version, new_text in enumerate(states, start=2):
        before = current
        current = reanalyze(before, new_text, version)
        fresh = analyze("file:///t.tileir", new_text, version, settings)
        assert current.module is before.module, f"state {version}: analysed from scratch"
        assert _snapshot(current) == _snapshot(fresh), f"state {version}"
        seen.append(len(_redefinitions(current)))
    assert seen == [1, 0, 0, 0, 0]


_GLOBALS = """cuda_tile.module @m {
  global @g <f32: [0.0, 1.0]> : tile<2xf32>
  entry @broken() {
    %c = constant <f32: 1.0> : tile<f32>
    %d = negi %c : tile<f32>
    return
  }
  entry @user() {
    %p = get_global @g : tile<ptr<f32>>
    return
  }
  entry @lost() {
    %p = get_global @missing : tile<ptr<f32>>
    return
  }
}
"""


def test_symbol_table_errors_follow_edits_anywhere():
    """The symbol table is checked once every kernel verifies, as the verifier does: fixing an
    error in one kernel shows the unknown `get_global` in another (it stayed hidden after the
    fix before); a global's element type changed, deleted or restored is checked against its
    users; all without parsing the document again, and as a fresh analysis."""
    settings = Settings()
    text = _GLOBALS
    current = analyze("file:///g.tileir", text, 1, settings)
    assert [d.code for d in current.diagnostics] == ["operand-type"]
    fixed = text.replace("negi %c", "negf %c")
    retyped = fixed.replace("<f32: [0.0, 1.0]> : tile<2xf32>", "<i32: [0, 1]> : tile<2xi32>")
    found = fixed.replace("@missing", "@g")
    deleted = found.replace("  global @g <f32: [0.0, 1.0]> : tile<2xf32>\n", "")
    codes = []
    for version, new_text in enumerate([fixed, retyped, fixed, found, deleted, found], start=2):
        before = current
        current = reanalyze(before, new_text, version)
        fresh = analyze("file:///g.tileir", new_text, version, settings)
        assert current.module is before.module, f"version {version}: analysed from scratch"
        assert _snapshot(current) == _snapshot(fresh), f"version {version}"
        codes.append([d.code for d in current.diagnostics])
    # (MLIR's symbol table verifier stops at its first error.)
    assert codes == [["unknown-global"], ["global-type"], ["unknown-global"], [], ["unknown-global"], []]


# Pieces typed at random places by `test_random_edits_anywhere_match_a_fresh_analysis`: brackets,
# keywords, half and whole kernels, names, strings, comments.
_PIECES = [
    "{", "}", "(", ")", "<", ">", "\n", "\n  ", " ", "entry", "entry @k", "  entry @z() {\n    return\n  }\n",
    "%x = ", "global", "// c", "return", ":", ",", "@", "%", "tile<f32>", '"', "}\n", "x",
]  # fmt: skip


def _random_edits(rng: random.Random, original: str, place) -> int:
    """40 pieces typed or text deleted at `place(text)`, and now and then the text put back:
    every analysis equals a fresh one, whichever path it took. How many were re-analysed in
    place."""
    text = original
    settings = Settings()
    current = analyze("file:///t.tileir", text, 1, settings)
    reused = 0
    for version in range(2, 42):
        at = place(text)
        roll = rng.random()
        if roll < 0.55:
            new_text = text[:at] + rng.choice(_PIECES) + text[at:]
        elif roll < 0.9:
            new_text = text[:at] + text[at + rng.choice([1, 1, 1, 2, 5, 20]) :]
        else:
            new_text = original
        before = current
        current = reanalyze(before, new_text, version)
        fresh = analyze("file:///t.tileir", new_text, version, settings)
        what = f"version {version}: at {at}, {new_text[max(0, at - 30) : at + 30]!r}"
        assert _snapshot(current) == _snapshot(fresh), what
        assert _features(current) == _features(fresh), what
        reused += current.module is before.module
        text = new_text
    return reused


@pytest.mark.parametrize("seed", range(3))
def test_random_edits_anywhere_match_a_fresh_analysis(seed):
    """Characters and pieces typed or deleted anywhere — inside kernels, between them, in the
    module's own text, brackets left open or closed twice."""
    rng = random.Random(seed)
    reused = _random_edits(rng, _multi_kernel_text(), lambda text: rng.randrange(len(text) + 1))
    assert reused > 10, "most random edits should not parse the document again"


@pytest.mark.parametrize("seed", range(2))
def test_random_edits_at_the_module_end_match_a_fresh_analysis(seed):
    """The same in the last 400 characters (the last kernel, the module's `}`, a comment after
    it): brackets typed there take the module's `}` and give it back, errors point at the end
    of the text, at a kernel's end or past it."""
    rng = random.Random(seed)
    original = _multi_kernel_text() + ("// after the module\n" if seed else "")
    reused = _random_edits(rng, original, lambda text: rng.randrange(len(text) - 400, len(text) + 1))
    assert reused > 25, "most edits at the end should not parse the document again"
