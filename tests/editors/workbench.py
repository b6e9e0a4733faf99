"""What a user does in VS Code, as Playwright calls on code-server's workbench: open a file from
the Explorer, run a command from the palette, go to a line, hover, read the Problems panel,
look into a webview. Every wait is for a condition, with a timeout."""

from __future__ import annotations

import re
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
            self.page.keyboard.press("F1")
            box = self.page.locator(".quick-input-widget .quick-input-box input")
            box.wait_for(state="visible")
            box.fill(f">{title}")
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
            self.page.locator(".quick-input-widget").wait_for(state="hidden")

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

    def goto(self, line: int, column: int = 1) -> None:
        """Puts the cursor at `line`:`column` (1-based) with Go to Line (Ctrl+G)."""
        self.page.keyboard.press("Control+g")
        box = self.page.locator(".quick-input-widget .quick-input-box input")
        box.wait_for(state="visible")
        box.fill(f":{line}:{column}")
        self.page.keyboard.press("Enter")
        self.page.locator(".quick-input-widget").wait_for(state="hidden")
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
        """The innermost span of the line containing `line_text` whose text contains `token`."""
        return self.line(editor, line_text).locator("span[class^=mtk]", has_text=token).first

    def hover_text(self, target: Locator) -> str:
        """Moves the mouse onto `target` and returns the hover's text once it shows our content."""
        self.page.mouse.move(0, 0)
        box = target.bounding_box()
        assert box is not None
        self.page.mouse.move(box["x"] + min(4, box["width"] / 2), box["y"] + box["height"] / 2)
        hover = self.page.locator(
            ".monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover .hover-contents"
        ).first
        hover.wait_for(state="visible", timeout=SERVER_S * 1000)
        self.page.wait_for_function(
            "() => [...document.querySelectorAll('.monaco-hover .hover-contents')]"
            ".some(e => e.innerText.trim().length > 0 && !/^Loading/.test(e.innerText.trim()))",
            timeout=SERVER_S * 1000,
        )
        text = "\n".join(self.page.locator(".monaco-hover .hover-contents").all_inner_texts())
        return text

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

    def webview(self, title_part: str) -> Frame:
        """The inner frame of the visible webview (webviews are an iframe holding #active-frame)."""
        self.page.locator(".tabs-container .tab", has_text=title_part).first.wait_for(timeout=SERVER_S * 1000)
        outer = self.page.locator("iframe.webview.ready").last
        outer.wait_for(timeout=SERVER_S * 1000)
        handle = outer.element_handle()
        assert handle is not None
        frame = handle.content_frame()
        assert frame is not None
        inner = frame.wait_for_selector("#active-frame", timeout=SERVER_S * 1000)
        assert inner is not None
        content = inner.content_frame()
        assert content is not None
        return content
