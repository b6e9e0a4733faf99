"""What a `%%tileir` cell shows: diagnostics, code listings, notes and reports, each as HTML
for notebooks and plain text for text frontends (a terminal IPython, `jupyter console`,
nbconvert to text). Nothing here runs kernels; `magic.py` decides what to show.

Every object has `_repr_mimebundle_`, so `IPython.display.display(obj)` sends both forms and
the frontend picks. Styles are inline (with JupyterLab's CSS variables where they exist), so
that the output looks right in a saved notebook and in nbconvert's HTML without any CSS of ours.
"""

from __future__ import annotations

import base64
import html
import threading
import time
from collections.abc import Sequence
from typing import Any

from compiler.ir.diagnostics import Diagnostic, Severity

# Severity colours that read on light and dark themes alike.
_COLOURS = {
    Severity.ERROR: "#d32f2f",
    Severity.WARNING: "#b26a00",
    Severity.NOTE: "#1565c0",
    Severity.REMARK: "#555",
}
MONO = "font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 13px)"


class Rich:
    """An HTML and a plain-text form of the same output."""

    def __init__(self, html_text: str, plain: str) -> None:
        self.html = html_text
        self.text = plain

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html, "text/plain": self.text}

    def __repr__(self) -> str:
        return self.text


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


# --------------------------------------------------------------------------------------------
# Diagnostics


def diagnostics_view(diagnostics: Sequence[Diagnostic]) -> Rich:
    """Diagnostics with their cell line, the source line and a caret under the characters at
    fault, the quick fixes by name and related notes. The text form is the CLI's
    (`In[3]:2:5: error: message`, the line, the caret), so it reads the same in a terminal."""
    parts = []
    for d in diagnostics:
        parts.append(_diagnostic_html(d))
    text = "\n".join(d.format(with_snippet=True) for d in diagnostics)
    return Rich(f'<div class="tileir-diagnostics" style="{MONO}">{"".join(parts)}</div>', text)


def _diagnostic_html(d: Diagnostic) -> str:
    colour = _COLOURS.get(d.severity, "#555")
    name, line, col = d.location()
    head = (
        f'<div><b style="color:{colour}">{esc(d.severity.label)}</b>: {esc(d.message)} '
        f'<span style="opacity:0.65">[{esc(d.code)}] {esc(name)}, line {line}, column {col}</span></div>'
    )
    snippet = ""
    if d.source is not None:
        src = d.source
        l0, c0 = src.line_col(d.span.start)
        l1, c1 = src.line_col(d.span.end)
        text = src.line_text(l0).expandtabs(1)
        width = max((c1 - c0) if l1 == l0 else len(text) - c0, 1)
        gutter = f"{l0 + 1:>4} | "
        caret = " " * len(f"{l0 + 1:>4}") + " | " + " " * c0 + "^" + "~" * (width - 1)
        marked = (
            esc(text[:c0])
            + f'<span style="text-decoration: underline wavy {colour}">{esc(text[c0 : c0 + width]) or " "}</span>'
            + esc(text[c0 + width :])
        )
        snippet = (
            f'<pre style="margin:2px 0 2px 0; padding:2px 6px; background: var(--jp-layout-color2, #f5f5f5)">'
            f"{esc(gutter)}{marked}\n"
            f'<span style="color:{colour}">{esc(caret)}</span></pre>'
        )
    extra = []
    for fix in d.fixes:
        extra.append(f'<div style="margin-left:1em"><b>help</b>: {esc(fix.title)}</div>')
    for rel in d.related:
        src = rel.source or d.source
        where = ""
        if src is not None:
            rl, rc = src.line_col(rel.span.start)
            where = f" (line {rl + 1}, column {rc + 1})"
        extra.append(f'<div style="margin-left:1em"><b>note</b>{esc(where)}: {esc(rel.message)}</div>')
    return f'<div style="margin: 4px 0 8px 0">{head}{snippet}{"".join(extra)}</div>'


def error_view(title: str, lines: Sequence[str]) -> Rich:
    """A failure that is not a diagnostic of the cell's text (a launch that cannot start, a
    kernel that failed while running, a lowering the backend does not have): one red title
    and the one-line reports under it."""
    body = "".join(f"<div>{esc(line)}</div>" for line in lines)
    html_text = (
        f'<div class="tileir-error" style="{MONO}; border-left: 3px solid #d32f2f; padding: 2px 8px">'
        f'<b style="color:#d32f2f">{esc(title)}</b>{body}</div>'
    )
    return Rich(html_text, "\n".join([title, *lines]))


def note_view(text: str, kind: str = "note") -> Rich:
    """A one-line note (e.g. which backend ran), visible in both forms."""
    colour = {"note": "#1565c0", "ok": "#2e7d32", "warning": "#b26a00"}.get(kind, "#1565c0")
    html_text = (
        f'<div class="tileir-note" style="{MONO}; border-left: 3px solid {colour}; padding: 1px 8px">{esc(text)}</div>'
    )
    return Rich(html_text, f"{kind}: {text}" if kind != "ok" else text)


def lines_view(lines: Sequence[str], title: str | None = None) -> Rich:
    """A few monospace lines (a run report, argument summaries)."""
    head = f"<b>{esc(title)}</b>\n" if title else ""
    html_text = f'<pre class="tileir-report" style="margin:2px 0">{head}{esc(chr(10).join(lines))}</pre>'
    return Rich(html_text, "\n".join(([title] if title else []) + list(lines)))


# --------------------------------------------------------------------------------------------
# Code listings


# Which lexer highlights which --show kind: the project's lexer for Tile IR (and, being an MLIR
# lexer at heart, for Triton's TTIR, which is MLIR too), pygments' own for the rest.
LEXERS = {"ir": "tileir", "ttir": "tileir", "triton": "python", "ptx": "ptx", "llir": "llvm", "sass": "text"}


def _lexer(kind: str):
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    name = LEXERS.get(kind, "text")
    if name == "tileir":
        # Imported directly rather than through the entry point, which exists only after
        # `pip install -e .` (a checkout run from its directory has no entry points).
        from syntax.pygments_lexer import TileIRLexer

        return TileIRLexer()
    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return TextLexer()


def code_view(code: str, kind: str, title: str, max_height: int = 420) -> Rich:
    """A highlighted listing (inline styles: no stylesheet needed) in a scrolling box."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter

        body = highlight(code, _lexer(kind), HtmlFormatter(noclasses=True, nowrap=True))
    except ImportError:  # pygments is optional for the kernel: plain text still reads
        body = esc(code)
    html_text = (
        f'<details open class="tileir-code"><summary style="{MONO}; cursor: pointer"><b>{esc(title)}</b></summary>'
        f'<pre style="max-height:{max_height}px; overflow:auto; margin:2px 0; padding:4px 6px; '
        f'background: var(--jp-layout-color2, #f7f7f7)">{body}</pre></details>'
    )
    return Rich(html_text, f"{title}\n{code}")


def bytecode_view(data: bytes, title: str, filename: str, shown: int = 1024) -> Rich:
    """Bytecode as a hex dump (the first `shown` bytes) with a download link for the whole."""
    dump = hexdump(data[:shown])
    more = f"\n... {len(data) - shown} more bytes" if len(data) > shown else ""
    href = "data:application/octet-stream;base64," + base64.b64encode(data).decode("ascii")
    html_text = (
        f'<details open class="tileir-code"><summary style="{MONO}"><b>{esc(title)}</b> '
        f'<a download="{esc(filename)}" href="{href}">download {esc(filename)}</a></summary>'
        f'<pre style="max-height:300px; overflow:auto; margin:2px 0">{esc(dump + more)}</pre></details>'
    )
    return Rich(html_text, f"{title}\n{dump}{more}")


def hexdump(data: bytes) -> str:
    """`xxd`-style lines: offset, 16 bytes in hex, the printable ASCII."""
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        hexes = " ".join(chunk[i : i + 2].hex() for i in range(0, len(chunk), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:08x}: {hexes:<39}  {text}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Progress


class Progress:
    """A line that says what is going on during a long step (a Triton compile, the first
    import of Triton's interpreter) and, in a kernel, how long it has taken so far; it is
    replaced by the outcome when the step ends. In a terminal it prints the first line only
    (a terminal has no display to update)."""

    def __init__(self, message: str, *, tick: float = 0.5) -> None:
        self.message = message
        self.tick = tick
        self.start = 0.0
        self.handle: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Progress:
        from IPython.display import display

        self.start = time.perf_counter()
        self.handle = display(note_view(f"{self.message} ..."), display_id=True)
        if _in_kernel() and self.handle is not None:
            self._thread = threading.Thread(target=self._run, name="tileir-progress", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.tick):
            elapsed = time.perf_counter() - self.start
            try:
                self.handle.update(note_view(f"{self.message} ... {elapsed:.1f} s"))
            except Exception:  # noqa: BLE001 - a closed frontend must not kill the step itself
                return

    def done(self, text: str, kind: str = "note") -> None:
        self._finish()
        if self.handle is not None:
            self.handle.update(note_view(text, kind))

    def _finish(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def __exit__(self, *exc: object) -> None:
        self._finish()


def _in_kernel() -> bool:
    """Whether IPython runs inside a Jupyter kernel (where displays can be updated)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def seconds(t: float) -> str:
    """A duration with a unit that suits it."""
    if t < 1e-3:
        return f"{t * 1e6:.0f} µs"
    if t < 1:
        return f"{t * 1e3:.3g} ms"
    return f"{t:.3g} s"
