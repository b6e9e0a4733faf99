"""The extension in a real VS Code (code-server in headless chromium), checked as a user would
check it: colours, squiggles and Problems, hovers, completion, the light bulb, rename, go to
definition, format, the layout webview, PTX, the bytecode editor and the server's interpreter.
Screenshots go to tests/artifacts/vscode_*.png."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from .conftest import BROKEN, EXAMPLES, SERVER_S

ADDF_MESSAGE = "'cuda_tile.addf' op operand #0 must be tile of f16 or bf16 or f32 or f64 values"


@pytest.fixture
def restore(vscode) -> Iterator[list[str]]:
    """Names of workspace files a test changes; their original text is written back after it."""
    names: list[str] = []
    yield names
    for name in names:
        original = EXAMPLES / name
        if original.exists():
            (vscode.server.workspace / name).write_text(original.read_text())


def _colour(locator) -> str:
    return locator.evaluate("e => getComputedStyle(e).color")


def _server_processes(workbench) -> list[tuple[int, list[str]]]:
    return [(pid, argv) for pid, argv in workbench.server.descendants() if argv[1:3] == ["-m", "tile_lsp"]]


def _position(text: str, line_text: str, token: str, last: bool = False) -> tuple[int, int]:
    """The 1-based line and column of `token` on the first line of `text` containing `line_text`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line_text in line:
            return number, (line.rindex(token) if last else line.index(token)) + 1
    raise AssertionError(f"no line with {line_text!r}")


def _rgb(hex_colour: str) -> str:
    """#RRGGBB as getComputedStyle writes it."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


# Tokens of examples/vector_add.tileir: (a line's text, the token, last on the line?) and the
# kind of TextMate scope a grammar for this language must give it.
TOKENS = {
    "comment": (("// c[i] = a[i] + b[i]", "//", False), "comment."),
    "op": (("%tok = make_token", "make_token", False), "support.function."),
    "value": (("%tok = make_token", "%tok", False), "variable."),
    "type": (("%tok = make_token", "token", True), "storage.type"),
    "symbol": (("cuda_tile.module @vector_add", "@vector_add", False), "entity.name.function"),
    "number": (("%pa = make_partition_view", "1024", False), "constant.numeric."),
}


def test_the_file_is_coloured_by_our_grammar(workbench) -> None:
    text = (EXAMPLES / "vector_add.tileir").read_text()
    editor = workbench.open("vector_add.tileir")
    # The status bar names our language for the file.
    workbench.wait_language("Tile IR")
    # Our grammar scoped each token (VS Code's own inspector says so), and the theme has a colour
    # for it (the inspector's foreground: the scope's, or the semantic token's once the server's
    # semantic tokens arrived).
    inspected: dict[str, str] = {}

    def inspect(kind: str) -> None:
        (line_text, token, last), scope = TOKENS[kind]
        found = workbench.inspect_token(*_position(text, line_text, token, last))
        scopes = found.get("textmate scopes", "").split("\n")
        assert found.get("language") == "tileir", (kind, found)
        # Innermost first: `//` is the comment's punctuation inside the comment's scope.
        assert any(s.startswith(scope) for s in scopes[:-1]), (kind, found)
        assert all(s.endswith(".tileir") for s in scopes) and scopes[-1] == "source.tileir", (kind, found)
        inspected[kind] = _rgb(found["foreground"])

    for kind in TOKENS:
        inspect(kind)
    # What the user sees: each token drawn in the inspector's colour, and not in the colour of
    # plain text. The theme's token colours, and the server's semantic tokens, can reach the page
    # after the text: a token whose colour still differs is inspected again until they agree.
    wanted = {kind: [line_text, token] for kind, ((line_text, token, _), _) in TOKENS.items()}
    read_colours = """(wanted) => {
        const lines = [...document.querySelectorAll('.editor-group-container.active .view-line')];
        const row = (text) => lines.find(l => l.textContent.replace(/\\u00a0/g, ' ').includes(text));
        const colour = ([line, token]) => {
            const spans = [...(row(line)?.querySelectorAll('span[class^=mtk]') ?? [])];
            const span = spans.filter(s => s.textContent.includes(token))
                .sort((a, b) => a.textContent.length - b.textContent.length)[0];
            return span ? getComputedStyle(span).color : null;
        };
        const plain = row(wanted.op[0])?.querySelector('span.mtk1');
        const found = Object.fromEntries(Object.entries(wanted).map(([k, v]) => [k, colour(v)]));
        found.plain = plain ? getComputedStyle(plain).color : null;
        return found;
    }"""
    deadline = time.monotonic() + SERVER_S
    while True:
        colours = workbench.page.evaluate(read_colours, wanted)
        differ = [kind for kind in TOKENS if colours[kind] != inspected[kind]]
        if not differ or time.monotonic() > deadline:
            break
        for kind in differ:
            inspect(kind)
    workbench.screenshot("vscode_highlighting.png")
    assert colours == {**inspected, "plain": colours["plain"]}, (colours, inspected)
    assert colours["plain"] is not None
    for kind in TOKENS:
        assert colours[kind] != colours["plain"], (kind, colours)
    assert colours["op"] != colours["comment"] != colours["number"], colours
    assert editor.count() == 1


def _problem_rows(workbench) -> list[tuple[str, int, int]]:
    """(message, line, column) of each marker in the Problems panel."""
    rows = workbench.page.locator(".markers-panel .monaco-list-row").evaluate_all("els => els.map(e => e.innerText)")
    found = []
    for row in rows:
        where = re.search(r"\[Ln (\d+), Col (\d+)\]", row)
        if where:
            found.append((row.splitlines()[0], int(where[1]), int(where[2])))
    return found


def test_squiggles_and_problems_on_the_right_lines(workbench) -> None:
    editor = workbench.open("broken.tileir")
    squiggles = editor.locator(".view-overlays .squiggly-error")
    squiggles.first.wait_for(timeout=SERVER_S * 1000)
    workbench.problems(count=2)
    markers = _problem_rows(workbench)
    # One marker per mistake (the two addf of i32), with our verifier's message, at the first
    # operand of each.
    mistakes = [(n, line.index("addf ") + 6) for n, line in enumerate(BROKEN.splitlines(), 1) if "addf" in line]
    assert [line for line, _ in mistakes] == [4, 5]
    assert sorted((line, column) for _, line, column in markers) == mistakes, markers
    for message, _, _ in markers:
        assert message.startswith(ADDF_MESSAGE) and "tile<i32>" in message, markers
    # The squiggles sit on those lines: their tops are the tops of line numbers 4 and 5.
    tops = squiggles.evaluate_all("els => els.map(e => Math.round(e.parentElement.getBoundingClientRect().top))")
    numbers = editor.locator(".margin-view-overlays .line-numbers").evaluate_all(
        "els => els.map(e => [e.innerText.trim(), Math.round(e.getBoundingClientRect().top)])"
    )
    lines = {top: int(n) for n, top in numbers if n.isdigit()}
    assert sorted(lines.get(t) for t in tops) == [line for line, _ in mistakes], (tops, numbers)
    workbench.screenshot("vscode_problems.png")
    # A click on the second marker puts the cursor on its mistake.
    line, column = mistakes[1]
    workbench.page.locator(".markers-panel .monaco-list-row", has_text=f"[Ln {line}, Col {column}]").click()
    workbench.wait_cursor(line)  # it selects the marker's range, from that column
    workbench.command("View: Hide Panel")


def test_quick_fix_through_the_light_bulb(workbench, restore) -> None:
    from playwright.sync_api import Error as PlaywrightError

    path = workbench.server.workspace / "named.tileir"
    original = path.read_text()
    try:
        editor = workbench.open("named.tileir")
        editor.locator(".view-overlays .squiggly-error").first.wait_for(timeout=SERVER_S * 1000)
        workbench.goto(4, 6)
        fix = workbench.page.locator(".action-widget .monaco-list-row", has_text="Remove the result names")
        # The light bulb's menu, asked again while it comes up without the fix: VS Code asks the
        # server for the code actions at that moment, and a busy machine once answered late
        # (the menu then said "No code actions available", and a CI run failed).
        deadline = time.monotonic() + SERVER_S
        while True:
            workbench.press("Control+.")
            try:
                fix.wait_for(timeout=5000)
                break
            except PlaywrightError:
                if time.monotonic() > deadline:
                    raise
                workbench.press("Escape")
        workbench.screenshot("vscode_quick_fix.png")
        fix.click()
        workbench.save()
        fixed = path.read_text()
        assert "%r = return" not in fixed and re.search(r"^\s*return$", fixed, flags=re.MULTILINE), fixed
        # The file's only mistake is mended: its squiggle goes (the server checked the new text).
        editor.locator(".view-overlays .squiggly-error").first.wait_for(state="detached", timeout=SERVER_S * 1000)
    finally:
        path.write_text(original)


def test_hover_on_an_op_a_value_and_a_view(workbench) -> None:
    editor = workbench.open("vector_add.tileir")
    op = workbench.hover_text(workbench.token(editor, "%pa = make_partition_view", "make_partition_view"))
    assert "make_partition_view" in op and "partition" in op.lower(), op
    value = workbench.hover_text(workbench.token(editor, "%sum = addf", "%sum"))
    assert "%sum" in value and "tile<1024xf32>" in value, value
    view = workbench.hover_text(workbench.token(editor, "%pa = make_partition_view", "%pa"))
    # A view's hover tells its tiling: the tile shape and the index space.
    assert "partition_view" in view and "1024" in view and "index space" in view.lower(), view
    workbench.screenshot("vscode_hover.png")


def _suggestions(workbench, prefix: str) -> list[str]:
    """Types `prefix`, asks for completion (Ctrl+Space) and returns the labels offered (empty:
    VS Code says there are none); the prefix is removed again."""
    workbench.page.keyboard.type(prefix)
    workbench.press("Control+Space")
    widget = workbench.page.locator(".suggest-widget.visible")
    widget.wait_for(timeout=SERVER_S * 1000)
    workbench.page.wait_for_function(
        "() => { const w = document.querySelector('.suggest-widget.visible');"
        " return w && (w.querySelector('.monaco-list-row[aria-label]') || /No suggestions/.test(w.innerText)); }",
        timeout=SERVER_S * 1000,
    )
    labels = widget.locator(".monaco-list-row[aria-label]").evaluate_all(
        "els => els.map(e => e.getAttribute('aria-label').split(',')[0])"
    )
    workbench.press("Escape")
    for _ in prefix:
        workbench.press("Backspace")
    return labels


def test_completion_offers_ops_and_values_in_scope(workbench) -> None:
    text = (EXAMPLES / "vector_add.tileir").read_text()
    line, _ = _position(text, "%sum = addf", "%sum")
    workbench.open("vector_add.tileir")
    workbench.goto(line, 1)
    workbench.press("End")
    workbench.press("Enter")  # a new line after %sum, before %done
    workbench.page.keyboard.type("%z = ")
    ops = _suggestions(workbench, "add")
    assert "addf" in ops and "addi" in ops, ops
    workbench.page.keyboard.type("addf ")
    # The values defined above the cursor, and only those (%done is defined below it): the
    # kernel's parameters and the results named before the cursor's line.
    above = text.splitlines()[:line]
    values = {name for row in above if "entry @" in row for name in re.findall(r"(%\w+):", row)}
    values |= {name for row in above if " = " in row for name in re.findall(r"%\w+", row.split(" = ")[0])}
    assert {"%a", "%sum", "%x"} <= values and "%done" not in values, values
    offered = _suggestions(workbench, "%")
    assert offered and all(label in values for label in offered), (offered, values)
    # The list is virtual (only the rows in sight exist): filter for the others.
    for name in ("%sum", "%x", "%y", "%tok_y"):
        assert name in _suggestions(workbench, name), name
    assert _suggestions(workbench, "%done") == []
    workbench.page.keyboard.type("%")
    workbench.press("Control+Space")
    workbench.page.locator(".suggest-widget.visible .monaco-list-row").first.wait_for()
    total = workbench.page.locator(".suggest-widget.visible .monaco-list-row").first.get_attribute("aria-setsize")
    workbench.screenshot("vscode_completion.png")
    workbench.press("Escape")
    assert total == str(len(values)), (total, sorted(values))


def test_rename_and_go_to_definition(workbench, restore) -> None:
    restore.append("vector_add.tileir")
    path = workbench.server.workspace / "vector_add.tileir"
    editor = workbench.open("vector_add.tileir")
    # Go to definition: from the use of %pa on line 21 to its definition on line 18.
    use = workbench.token(editor, "%x, %tok_x = load_view_tko", "%pa")
    use.click()
    workbench.press("F12")
    workbench.wait_cursor(18)
    # Rename %sum (defined on line 23, used on line 24) to %total.
    workbench.goto(23, 6)
    workbench.press("F2")
    box = workbench.page.locator(".rename-box input, .rename-box textarea").first
    box.wait_for()
    box.fill("total")
    workbench.press("Enter")
    workbench.page.locator(".tabs-container .tab.active.dirty").wait_for(timeout=SERVER_S * 1000)
    workbench.save()
    text = path.read_text()
    assert "%sum" not in text and text.count("%total") == 2, text


def test_format_keeps_comments(workbench, restore) -> None:
    path = workbench.server.workspace / "messy.tileir"
    original = path.read_text()
    try:
        workbench.open("messy.tileir")
        workbench.command("Format Document")
        workbench.page.locator(".tabs-container .tab.active.dirty").wait_for(timeout=SERVER_S * 1000)
        workbench.save()
        formatted = path.read_text()
        for comment in (
            "// header comment: kept",
            "// before the entry",
            "// trailing comment: kept",
            "// a comment line inside the body: kept",
        ):
            assert comment in formatted, formatted
        assert "module   @messy" not in formatted and "%a,%a" not in formatted, formatted
        assert "cuda_tile.module @messy" in formatted and "addf %a, %a" in formatted, formatted
    finally:
        path.write_text(original)


def _layout_title(frame) -> str:
    return frame.locator("#title").inner_text()


LAYOUT = "Tile IR Layout"  # the layout webview's page title


def _wait_title(frame, name: str) -> None:
    frame.wait_for_function(
        "name => document.getElementById('title').innerText.startsWith(name + ':')",
        arg=name,
        timeout=SERVER_S * 1000,
    )


def _hover(frame, target, pattern: str, position: dict | None = None) -> str:
    """The text the picture shows while the pointer is on `target`, once it matches `pattern`
    (a JavaScript regular expression). The pointer first leaves the picture, and the hover is
    tried again if a new picture (a layout the server sends again) reset the text meanwhile, or
    replaced the target while the pointer moved to it ("Element is not visible", seen on a busy
    machine)."""
    from playwright.sync_api import Error as PlaywrightError

    wanted = "re => { const t = document.getElementById('hover').innerText; return new RegExp(re).test(t) && t; }"
    for _ in range(4):
        try:
            frame.locator("#title").hover(force=True)
            if position:
                target.hover(position=position, force=True, timeout=10000)
            else:
                target.hover(force=True, timeout=10000)
            return frame.wait_for_function(wanted, arg=pattern, timeout=5000).json_value()
        except PlaywrightError:  # (its TimeoutError too)
            frame.wait_for_timeout(500)
            continue
    return frame.locator("#hover").inner_text()  # what it says instead, for the assertion


def test_show_view_layout_follows_the_cursor(workbench) -> None:
    workbench.command("View: Hide Panel", optional=True)  # room for the picture
    text = (EXAMPLES / "vector_add.tileir").read_text()
    workbench.open("vector_add.tileir")
    workbench.goto(*_position(text, "%pa = make_partition_view", "%pa"))
    workbench.command("Tile IR: Show View Layout")
    frame = workbench.webview(LAYOUT)
    _wait_title(frame, "%pa")
    # The cursor moves to %pb: the picture follows.
    workbench.goto(*_position(text, "%pb = make_partition_view", "%pb"))
    _wait_title(frame, "%pb")

    # A dynamic extent: S0 = 4096 gives four tiles of 1024, and the input keeps its value.
    extent = frame.locator("#dims input").first
    extent.fill("4096")
    frame.locator("#controls button[type=submit]").click()
    frame.wait_for_function(
        "() => document.querySelectorAll('#picture svg rect.tile').length === 4", timeout=SERVER_S * 1000
    )
    assert frame.locator("#dims input").first.input_value() == "4096"
    # Hovering a tile says which it is and which elements it holds.
    hover = _hover(frame, frame.locator("#picture svg rect.tile").nth(2), "^tile \\(2\\)")
    assert "tile (2)" in hover and "2048..3071" in hover, hover
    workbench.screenshot("vscode_layout.png")

    # A wide tensor (8x2048 in 8x64 tiles): the picture follows into another file, and every
    # tile is drawn tall and wide enough to point at.
    wide = (workbench.server.workspace / "wide.tileir").read_text()
    workbench.command("View: Focus First Editor Group")  # not over the picture, in group 2
    workbench.open("wide.tileir")
    workbench.goto(*_position(wide, "%v = make_partition_view", "%v"))
    frame = workbench.webview(LAYOUT)
    _wait_title(frame, "%v")
    tiles = frame.locator("#picture svg rect.tile")
    boxes = tiles.evaluate_all(
        "els => els.map(e => { const b = e.getBoundingClientRect(); return [b.width, b.height]; })"
    )
    assert len(boxes) >= 8, boxes
    assert min(w for w, _ in boxes) >= 6 and min(h for _, h in boxes) >= 6, boxes
    # Tile (0, 1) holds rows 0..7 and columns 64..127. Near its bottom-right corner the pointer is
    # on row 7 and one of the last columns (an element is under half a pixel wide here); near its
    # top-left corner on row 0 and one of the first.
    second = tiles.nth(1)
    second.scroll_into_view_if_needed()
    box = second.bounding_box()
    assert box is not None
    for x, y, row, columns in (
        (box["width"] - 1, box["height"] - 1, 7, range(120, 128)),
        (1, 1, 0, range(64, 72)),
    ):
        hover = _hover(frame, second, f"^tile \\(0, 1\\).*element \\({row}, ", position={"x": x, "y": y})
        element = re.search(r"element \((\d+), (\d+)\)", hover)
        assert "elements [0..7, 64..127]" in hover and element, hover
        assert int(element[1]) == row and int(element[2]) in columns, hover
    workbench.screenshot("vscode_layout_wide.png")


def test_show_ptx_shows_real_ptx(workbench) -> None:
    """Show PTX: the kernel's PTX beside the editor, read-only, in a tab named after the kernel
    and target, never dirty (closing it asks nothing); shown again, the same tab."""
    workbench.open("vector_add.tileir")
    workbench.goto(10, 6)
    workbench.command("Tile IR: Show PTX")
    text = workbench.shown(".version")
    assert re.search(r"\.target sm_\d+", text) and ".address_size 64" in text, text
    assert re.search(r"\.entry \w+", text) or ".visible .entry" in text, text
    tab = workbench.page.locator(".editor-group-container.active .tabs-container .tab.active")
    name = tab.get_attribute("data-resource-name") or ""
    assert re.fullmatch(r"vector_add\.sm_\d+\.ptx", name), name
    assert "dirty" not in (tab.get_attribute("class") or ""), tab.get_attribute("class")
    # Coloured by our PTX grammar: the directive and an opcode drawn apart from plain text.
    # VS Code colours the text after it shows it (its tokenizer runs in the background, late
    # on a busy machine): the colours are read once the directive is a span of its own, coloured.
    workbench.wait_language("PTX")
    colours = workbench.page.wait_for_function(
        """() => {
        const spans = [...document.querySelectorAll(
            '.editor-group-container.active .view-line span[class^=mtk]')];
        const colour = (text) => spans.filter(s => s.textContent.replace(/\u00a0/g, ' ').trim() === text)
            .map(s => getComputedStyle(s).color)[0];
        const plain = spans.find(s => s.className === 'mtk1');
        const found = {directive: colour('.version'), opcode: colour('ld') ?? colour('mov'),
                       comment: colour('// Generated by LLVM NVPTX Back-End') ?? colour('//'),
                       plain: plain && getComputedStyle(plain).color};
        const ready = !Object.values(found).includes(undefined) && found.directive !== found.plain;
        return ready ? found : null;
    }""",
        timeout=SERVER_S * 1000,
    ).json_value()
    assert None not in colours.values(), colours
    assert colours["plain"] not in (colours["directive"], colours["opcode"], colours["comment"]), colours
    workbench.screenshot("vscode_ptx.png")
    workbench.command("View: Focus First Editor Group")
    workbench.wait_editor("vector_add.tileir")
    workbench.command("Tile IR: Show PTX")
    # Done when the PTX's group is the active one again: its tab the same, not a second one.
    workbench.page.locator(f".editor-group-container.active .tab.active[data-resource-name='{name}']").wait_for(
        timeout=SERVER_S * 1000
    )
    assert workbench.page.locator(f".tabs-container .tab[data-resource-name='{name}']").count() == 1


def test_show_triton_source(workbench) -> None:
    """Show Triton Source: the kernel lowered to Triton's Python, read-only beside the editor,
    coloured as Python, each statement ending with the Tile IR line it comes from."""
    workbench.open("vector_add.tileir")
    workbench.goto(10, 6)
    workbench.command("Tile IR: Show Triton Source")
    text = workbench.shown("@triton.jit")
    assert "def vector_add(" in text and re.search(r"# vector_add\.tileir:\d+", text), text
    tab = workbench.page.locator(".editor-group-container.active .tabs-container .tab.active")
    assert re.fullmatch(r"vector_add\.sm_\d+\.py", tab.get_attribute("data-resource-name") or "")
    workbench.wait_language("Python")
    workbench.screenshot("vscode_triton.png")


def test_show_ptx_warns_of_a_hint_it_could_not_apply(workbench) -> None:
    """A kernel asking for clusters of 2 that Triton cannot compile in clusters: Show PTX shows
    the PTX compiled without them, and a warning names the entry's line, the hint and why."""
    workbench.open("clusters.tileir")
    workbench.goto(3, 6)
    workbench.command("Tile IR: Show PTX")
    text = workbench.shown(".version")
    assert re.search(r"\.target sm_\d+", text), text
    toast = workbench.page.locator(".notifications-toasts .notification-toast", has_text="is not applied")
    toast.wait_for(timeout=SERVER_S * 1000)
    note = toast.inner_text()
    assert re.search(r"clusters\.tileir:3:3: warning: the hint num_cta_in_cga = 2 for sm_\d+ is not applied", note), (
        note
    )
    assert "could not compile @k in clusters of 2" in note and "compiled without clusters" in note, note
    workbench.screenshot("vscode_ptx_note.png")
    workbench.command("Notifications: Clear All Notifications", optional=True)


def test_show_sass_of_nvidias_tileiras(workbench) -> None:
    """Show SASS (NVIDIA tileiras): the SASS of the kernel as tileiras compiles the module's
    bytecode, for the tileir.targetArchitecture setting (sm_100 by default), beside ours."""
    from compiler.runtime import find_tileiras

    if find_tileiras() is None:
        pytest.skip("NVIDIA's tileiras is not installed (nvidia-cuda-tileiras, the `test` extra)")
    workbench.open("vector_add.tileir")
    workbench.goto(10, 6)
    workbench.command("Tile IR: Show SASS (NVIDIA tileiras)")
    text = workbench.shown("Function : vector_add")
    assert "code for sm_100" in text and "EF_CUDA_SM100" in text, text
    workbench.wait_language("NVIDIA SASS")
    workbench.screenshot("vscode_tileiras_sass.png")


def test_bytecode_opens_as_text_and_saves_back(workbench) -> None:
    from compiler.runtime import find_tileirdisasm

    disasm = find_tileirdisasm()
    if disasm is None:
        pytest.skip("NVIDIA's tileirdisasm is not installed (nvidia-cuda-tileiras, the `test` extra)")
    workbench.open("vadd.tileirbc")
    frame = workbench.webview("vadd.tileirbc")  # the bytecode editor's page is titled by the file
    frame.wait_for_selector("pre.text", timeout=SERVER_S * 1000)
    shown = frame.locator("pre.text").inner_text()
    assert "entry @vector_add" in shown and "make_partition_view" in shown, shown
    workbench.screenshot("vscode_bytecode.png")
    # As text in a normal editor: our language, highlighted, checked by the server.
    frame.locator("#open").click()
    editor = workbench.wait_editor("vadd.tileirbc.tileir")
    workbench.line(editor, "make_partition_view").wait_for()
    workbench.wait_language("Tile IR")
    # Save as Bytecode: code-server's save dialog is a path in a quick input.
    target = workbench.server.workspace / "roundtrip.tileirbc"
    target.unlink(missing_ok=True)
    workbench.command("Tile IR: Save as Bytecode...")
    box = workbench.page.locator(".quick-input-widget .quick-input-box input")
    box.wait_for(state="visible")
    workbench.page.wait_for_function(
        "() => /\\.tileirbc$/.test(document.querySelector('.quick-input-widget .quick-input-box input').value)"
    )
    box.fill(str(target))
    workbench.press("Enter")
    try:
        workbench.wait_until(target.exists, f"Save as Bytecode to write {target}")
    finally:
        workbench.screenshot("vscode_bytecode_saved.png")
    done = subprocess.run([disasm, str(target)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "make_partition_view" in done.stdout and "vector_add" in done.stdout, done.stdout[:2000]


def test_the_server_runs_on_the_configured_interpreter(workbench) -> None:
    workbench.open("vector_add.tileir")
    workbench.wait_until(lambda: _server_processes(workbench), "`python -m tile_lsp` below code-server")
    processes = _server_processes(workbench)
    for pid, argv in processes:
        assert argv[0] == sys.executable, argv
        assert os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(sys.executable)


def test_a_setting_reaches_the_running_server(workbench) -> None:
    """`tileir.inlayHints.enabled` goes to the running server (didChangeConfiguration, no
    restart), which asks VS Code to refresh its inlay hints: the index-space hints after
    make_partition_view go away and come back, with no edit and no new server process."""
    editor = workbench.open("vector_add.tileir")
    assert "ceildiv" not in (workbench.server.workspace / "vector_add.tileir").read_text()
    lines = editor.locator(".view-lines")

    def hints_shown() -> bool:  # ": ceildiv(S0, 1024) tiles" after each make_partition_view
        return "ceildiv(" in lines.inner_text()

    workbench.wait_until(hints_shown, "the index-space inlay hints")
    (server,) = _server_processes(workbench)
    # The Remote (machine) settings: code-server's window is a remote one, whose extension host
    # sees changes to those as they are made.
    workbench.server.write_settings(machine=True, **{"tileir.inlayHints.enabled": False})
    try:
        workbench.wait_until(lambda: not hints_shown(), "the inlay hints to go with the setting")
    finally:
        workbench.server.write_settings(machine=True, **{"tileir.inlayHints.enabled": True})
    workbench.wait_until(hints_shown, "the inlay hints to come back")
    assert _server_processes(workbench) == [server]  # the same process all along


def test_a_wrong_interpreter_says_how_to_fix_it(workbench) -> None:
    workbench.open("vector_add.tileir")
    workbench.wait_until(lambda: _server_processes(workbench), "the language server")
    # Changing the setting restarts the server (the extension watches its settings); code-server's
    # window is a remote one, where the interpreter is a Remote (machine) setting.
    workbench.server.write_settings(machine=True, **{"tileir.server.python": "/nonexistent/python3"})
    try:
        toast = workbench.page.locator(
            ".notifications-toasts .notification-toast", has_text="could not start the language server"
        )
        toast.wait_for(timeout=SERVER_S * 1000)
        text = toast.inner_text()
        assert "/nonexistent/python3" in text and "tileir.server.python" in text and "tileir-tools" in text, text
        assert toast.get_by_role("button", name="Open Settings").count() == 1
        workbench.screenshot("vscode_wrong_interpreter.png")
        # The old server was told to exit before the failed start; the client does not wait for
        # its process to end, so it may outlive the toast by a moment, but not for long.
        workbench.wait_until(lambda: not _server_processes(workbench), "the old server to exit", timeout_s=10)
    finally:
        workbench.server.write_settings(machine=True, **{"tileir.server.python": sys.executable})
    # Back on the right interpreter, the server runs again.
    workbench.wait_until(lambda: _server_processes(workbench), "the server to start again on the fixed setting")
    workbench.command("Notifications: Clear All Notifications", optional=True)
