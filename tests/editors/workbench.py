"""What a user does in VS Code, as Playwright calls on code-server's workbench: open a file from
the Explorer, run a command from the palette, go to a line, hover, read the Problems panel,
look into a webview. Every wait is for a condition, with a timeout."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .conftest import SERVER_S, STARTUP_S, save_artifact

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Locator, Page

    from .conftest import CodeServer


class Workbench:
    def __init__(self, page: Page, server: CodeServer) -> None:
        self.page = page
        self.server = server

    # -- the workbench ----------------------------------------------------------------------

    def wait_ready(self) -> None:
        self.page.wait_for_selector(".monaco-workbench", timeout=STARTUP_S * 1000)
        # The Explorer lists the workspace once the file service answers.
        self.explorer_item("vector_add.tileir").wait_for(timeout=STARTUP_S * 1000)

    def explorer_item(self, name: str) -> Locator:
        return self.page.locator(f".explorer-folders-view .monaco-list-row[aria-label='{name}']")

    def screenshot(self, name: str) -> None:
        save_artifact(name, self.page.screenshot())

    def press(self, keys: str) -> None:
        self.page.keyboard.press(keys)

    def close_all(self) -> None:
        """Closes every editor, dropping unsaved changes (File: Revert, then Close All)."""
        self.page.keyboard.press("Escape")
        if self.page.locator(".tabs-container .tab").count() == 0:
            return
        self.command("View: Revert and Close Editor", optional=True, repeat_while_tabs=True)
        self.command("View: Close All Editors", optional=True)
        dialog = self.page.locator(".monaco-dialog-box")
        if dialog.count() and dialog.is_visible():
            dialog.get_by_role("button", name=re.compile("Don't Save")).click()
        self.page.locator(".tabs-container .tab").first.wait_for(state="detached", timeout=10_000)

    # -- commands ---------------------------------------------------------------------------

    def command(self, title: str, optional: bool = False, repeat_while_tabs: bool = False) -> None:
        """Runs a command from the Command Palette (F1), picking the entry labelled `title`."""
        for _ in range(20 if repeat_while_tabs else 1):
            if repeat_while_tabs and self.page.locator(".tabs-container .tab").count() == 0:
                return
            box = self.page.locator(".quick-input-widget .quick-input-box input")
            for attempt in range(3):
                # The palette can be re-rendered between showing and typing (seen once in CI, in a
                # teardown after the bytecode editor): close it and open it again.
                self.page.keyboard.press("F1")
                try:
                    box.wait_for(state="visible", timeout=10_000)
                    box.fill(f">{title}", timeout=10_000)
                    break
                except Exception:
                    if attempt == 2:
                        raise
                    self.page.keyboard.press("Escape")
            row = self.page.locator(".quick-input-widget .quick-input-list .monaco-list-row", has_text=title).first
            try:
                row.wait_for(state="visible", timeout=3_000 if optional else 15_000)
            except Exception:
                self.page.keyboard.press("Escape")
                if optional:
                    return
                raise
            # The row whose label is exactly the title (not a longer command that contains it).
            rows = self.page.locator(".quick-input-widget .quick-input-list .monaco-list-row")
            for i in range(rows.count()):
                label = rows.nth(i).get_attribute("aria-label") or ""
                if label.replace("\u00a0", " ").split(", ")[0].strip() == title:
                    rows.nth(i).click()
                    break
            else:
                row.click()
            # The palette closes, or a command that asks for input (a quick pick, the save
            # dialog) reuses the widget: then the box no longer holds the `>` query.
            self.page.wait_for_function(
                """() => {
                    const w = document.querySelector('.quick-input-widget');
                    const box = w && w.querySelector('.quick-input-box input');
                    return !w || getComputedStyle(w).display === 'none' || !box || !box.value.startsWith('>');
                }"""
            )

    # -- editors ----------------------------------------------------------------------------

    def open(self, name: str) -> Locator:
        """Opens a workspace file by clicking it in the Explorer; returns its editor."""
        item = self.explorer_item(name)
        if not item.is_visible():
            self.command("View: Show Explorer")
        item.wait_for()
        item.click()
        self.page.locator(f".tabs-container .tab.active[aria-label^='{name}']").wait_for()
        return self.active_editor()

    def active_editor(self) -> Locator:
        return self.page.locator(".editor-group-container.active .monaco-editor[data-uri]").first

    def wait_editor(self, name: str) -> Locator:
        self.page.locator(f".tabs-container .tab.active[aria-label^='{name}']").wait_for(timeout=SERVER_S * 1000)
        editor = self.active_editor()
        editor.locator(".view-lines").wait_for()
        return editor

    def wait_language(self, name: str) -> None:
        """Waits until the status bar names `name` as the active editor's language (right after the
        window opens, VS Code shows Plain Text until the extensions' languages are registered)."""
        self.page.wait_for_function(
            "name => document.getElementById('status.editor.mode')?.innerText.trim() === name",
            arg=name,
            timeout=SERVER_S * 1000,
        )

    def goto(self, line: int, column: int = 1) -> None:
        """Puts the cursor at `line`:`column` (1-based) with Go to Line (Ctrl+G). Tried again
        when the box stays open (seen in CI right after a file opened: the Enter came before
        the editor could take it)."""
        box = self.page.locator(".quick-input-widget .quick-input-box input")
        for attempt in range(2):
            self.page.keyboard.press("Control+g")
            box.wait_for(state="visible")
            box.fill(f":{line}:{column}")
            self.page.keyboard.press("Enter")
            try:
                self.page.locator(".quick-input-widget").wait_for(state="hidden")
                break
            except Exception:
                if attempt == 1:
                    raise
                self.page.keyboard.press("Escape")
        self.wait_cursor(line, column)

    def cursor(self) -> tuple[int, int] | None:
        item = self.page.locator("#status\\.editor\\.selection")
        if not item.count():
            return None
        found = re.search(r"Ln (\d+), Col (\d+)", item.inner_text())
        return (int(found[1]), int(found[2])) if found else None

    def wait_cursor(self, line: int, column: int | None = None) -> None:
        self.page.wait_for_function(
            """([line, column]) => {
                const item = document.getElementById('status.editor.selection');
                const m = item && /Ln (\\d+), Col (\\d+)/.exec(item.innerText);
                return m && +m[1] === line && (column === null || +m[2] === column);
            }""",
            arg=[line, column],
            timeout=15_000,
        )

    def line(self, editor: Locator, text: str) -> Locator:
        """The rendered line of `editor` that contains `text`."""
        return editor.locator(".view-line", has_text=text).first

    def token(self, editor: Locator, line_text: str, token: str) -> Locator:
        """The span of `token` in the line containing `line_text`, once the grammar has split the
        line into tokens (VS Code colours a freshly opened file asynchronously: until then the
        line is one span, and pointing into it points at its start)."""
        exact = re.compile(r"^[\s\u00a0]*" + re.escape(token) + r"[\s\u00a0]*$")
        span = self.line(editor, line_text).locator("span[class^=mtk]", has_text=exact).first
        span.wait_for(state="visible", timeout=SERVER_S * 1000)
        return span

    def hover_text(self, target: Locator) -> str:
        """Moves the mouse onto `target` and returns the hover's text once it shows our content."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        self.page.mouse.move(0, 0)
        # The previous hover must be gone first, or its text would be read as this one's.
        self.page.keyboard.press("Escape")
        self.wait_until(
            lambda: self.page.locator(".monaco-hover:not(.hidden) .hover-contents").count() == 0,
            "the previous hover to close",
            timeout_s=10,
        )
        # The line may be re-rendered meanwhile (semantic tokens arrive after the grammar's).
        boxes: list[dict] = []
        self.wait_until(lambda: boxes.append(target.bounding_box()) or boxes[-1] is not None, "the token to show")
        box = boxes[-1]
        x, y = box["x"] + min(4, box["width"] / 2), box["y"] + box["height"] / 2
        self.page.mouse.move(x, y)
        hover = self.page.locator(
            ".monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover .hover-contents"
        ).first
        try:
            hover.wait_for(state="visible", timeout=10_000)
        except PlaywrightTimeout:
            # A mouse hover can be lost on a loaded machine (the editor must see the pointer
            # rest); put the cursor on the token and ask for the hover as a keyboard user does.
            self.page.mouse.click(x, y)
            self.command("Show or Focus Hover")
            hover.wait_for(state="visible", timeout=SERVER_S * 1000)
        self.page.wait_for_function(
            "() => [...document.querySelectorAll('.monaco-hover .hover-contents')]"
            ".some(e => e.innerText.trim().length > 0 && !/^Loading/.test(e.innerText.trim()))",
            timeout=SERVER_S * 1000,
        )
        text = "\n".join(self.page.locator(".monaco-hover .hover-contents").all_inner_texts())
        return text

    def shown(self, has_text: str) -> str:
        """The visible lines of the active editor, once a line holding `has_text` is there
        (what a command opened beside, e.g. a compile's PTX: seconds on a 2-core machine)."""
        line = self.page.locator(".monaco-editor .view-line", has_text=has_text)
        line.first.wait_for(timeout=SERVER_S * 2000)
        text = "\n".join(self.page.locator(".editor-group-container.active .view-line").all_inner_texts())
        return text.replace("\u00a0", " ")

    def save(self) -> None:
        self.page.keyboard.press("Control+s")
        self.page.locator(".tabs-container .tab.active.dirty").wait_for(state="detached", timeout=15_000)

    # -- panels -----------------------------------------------------------------------------

    def problems(self, count: int | None = None) -> list[str]:
        """The Problems panel's entries (their accessible labels: message, file, line)."""
        self.command("View: Focus Problems (Errors, Warnings, Infos)")
        rows = self.page.locator(".markers-panel .monaco-list-row")
        if count is not None:
            self.page.wait_for_function(
                "n => document.querySelectorAll('.markers-panel .monaco-list-row[aria-label]').length >= n",
                arg=count,
                timeout=SERVER_S * 1000,
            )
        return [rows.nth(i).get_attribute("aria-label") or "" for i in range(rows.count())]

    def notifications(self) -> Locator:
        return self.page.locator(
            ".notifications-toasts .notification-toast, .notifications-center .notification-list-item"
        )

    def webview(self, title: str) -> Frame:
        """The document of the visible webview whose page title contains `title` (a webview is an
        iframe holding #active-frame; with several open, the title tells ours apart)."""
        found: list[Frame] = []

        def visible_webview() -> bool:
            for frame in self.page.frames:
                parent = frame.parent_frame
                if parent is None or parent.parent_frame is None:
                    continue
                try:
                    if (
                        frame.frame_element().get_attribute("id") == "active-frame"
                        and parent.frame_element().is_visible()
                        and title in frame.title()
                    ):
                        found.append(frame)
                        return True
                except Exception:  # noqa: BLE001 - a frame replaced while we looked
                    continue
            return False

        self.wait_until(visible_webview, f"a webview titled {title!r}")
        return found[-1]

    def wait_until(self, condition: Callable[[], object], what: str, timeout_s: float = SERVER_S) -> None:
        """Polls `condition` (a check outside the page: files, processes, frames) until it holds."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
            self.page.wait_for_timeout(100)

    def inspect_token(self, line: int, column: int) -> dict[str, str]:
        """What *Developer: Inspect Editor Tokens and Scopes* says of the token at `line`:`column`:
        its TextMate scopes (innermost first, one a line), the theme's foreground, ..."""
        self.goto(line, column)
        self.command("Developer: Inspect Editor Tokens and Scopes")
        widget = self.page.locator(".token-inspect-widget")
        widget.locator("td", has_text="textmate scopes").wait_for()  # filled in after it shows
        rows = widget.locator("tr").evaluate_all("rows => rows.map(r => [...r.children].map(c => c.innerText))")
        self.press("Escape")
        widget.wait_for(state="detached")
        found: dict[str, str] = {}
        for key, value in rows:
            found.setdefault(key, value)  # the first `foreground` is the colour, the second its rule
        return found
