"""The protocol's framing on stdin, read defensively before pygls sees it.

pygls reads `Content-Length: N` and then N bytes, whatever N is: `Content-Length:
999999999999` makes it allocate that much (a MemoryError that ends the server), and a header
it cannot read, or a length that does not match the body, leaves it reading bodies as
headers from then on. `FramedInput` sits between stdin and pygls: it parses each message's
headers itself, refuses lengths over `max_message_bytes`, and when the input is not a
well-formed message it skips to the next `Content-Length:` header (which cannot occur inside
a JSON body: strings there cannot hold a raw line break), logging what it skipped and why.
pygls then only ever sees well-formed messages, which it reads through `readline` and `read`
as it reads stdin.
"""

from __future__ import annotations

import logging
import re
from typing import BinaryIO

log = logging.getLogger("tile_lsp.framing")

MAX_MESSAGE_BYTES = 256 * 1024 * 1024  # a 200,000-line document is about 16 MB
MAX_HEADER_BYTES = 8192
_READ = 1 << 16

_HEADER_LINE = re.compile(rb"[!#-'*+.0-9A-Z^-z|~-]+[ \t]*:[^\r\n]*")  # `token: value`
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([0-9]{1,20})[ \t]*", re.IGNORECASE)
_NEXT_HEADER = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
# A complete header line inside what should be a JSON body: the body was cut short (its
# Content-Length was too small, or too large and swallowed the next message).
_HEADER_IN_BODY = re.compile(rb"content-length[ \t]*:[ \t]*[0-9]+\r\n", re.IGNORECASE)


class FramedInput:
    """Well-formed messages from `raw`, in the reader interface pygls uses for stdin."""

    def __init__(self, raw: BinaryIO, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._raw = raw
        self._read = getattr(raw, "read1", raw.read)
        self.max_message_bytes = max_message_bytes
        self._buffer = bytearray()
        self._eof = False
        self._pending: list[bytes] = []  # the next message's pieces, as pygls reads them
        self.skipped = 0  # bytes thrown away so far (for tests and logs)

    # ------------------------------------------------------------------ pygls's side

    def readline(self) -> bytes:
        if not self._pending:
            body = self._next_body()
            if body is None:
                return b""  # end of input: pygls stops
            self._pending = [b"Content-Length: %d\r\n" % len(body), b"\r\n", body]
        return self._pending.pop(0)

    def read(self, n: int) -> bytes:
        if not self._pending:
            return b""
        piece = self._pending.pop(0)
        if len(piece) > n:  # never happens with pygls (it reads the body whole)
            self._pending.insert(0, piece[n:])
            piece = piece[:n]
        return piece

    # ------------------------------------------------------------------ framing

    def _fill(self) -> bool:
        """Read more input; False at its end."""
        if self._eof:
            return False
        try:
            chunk = self._read(_READ)
        except (OSError, ValueError):  # stdin closed under us
            chunk = b""
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    def _next_body(self) -> bytes | None:
        buffer = self._buffer
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEADER_BYTES:
                    self._skip("headers longer than %d bytes without an end", MAX_HEADER_BYTES)
                    continue
                if not self._fill():
                    if buffer.strip():
                        log.warning("tile-lsp: input ended inside a message's headers (%d bytes ignored)", len(buffer))
                    return None
                continue
            problem, length = _headers(bytes(buffer[:end]))
            if problem is not None:
                self._skip("%s", problem)
                continue
            assert length is not None
            if length > self.max_message_bytes:
                log.error(
                    "tile-lsp: a message of Content-Length %d is over the limit of %d bytes; "
                    "skipping it (and what follows, up to the next message)",
                    length,
                    self.max_message_bytes,
                )
                del buffer[: end + 4]
                self._skip_to_header()
                continue
            start = end + 4
            while len(buffer) < start + length:
                if not self._fill():
                    log.warning(
                        "tile-lsp: input ended inside a message body (%d of %d bytes)", len(buffer) - start, length
                    )
                    return None
            body = bytes(buffer[start : start + length])
            del buffer[: start + length]
            broken = _HEADER_IN_BODY.search(body)
            if broken is not None:
                # Keep what starts at the header that should not be there; drop the rest.
                buffer[:0] = body[broken.start() :]
                self.skipped += broken.start()
                log.warning(
                    "tile-lsp: a message body (Content-Length %d) holds the headers of the next message: "
                    "its length is wrong; skipped %d bytes",
                    length,
                    broken.start(),
                )
                continue
            if body.lstrip()[:1] != b"{" or body.rstrip()[-1:] != b"}":
                # Not a JSON object (every LSP message is one): a length that cut it short,
                # or one that ran into the next message's headers (which then look broken).
                self.skipped += len(body)
                log.warning("tile-lsp: a message body (Content-Length %d) is not a JSON object; skipped it", length)
                continue
            return body

    def _skip(self, why: str, *args: object) -> None:
        """The buffer does not start with a well-formed header: drop up to the next one."""
        before = self.skipped
        match = _NEXT_HEADER.search(self._buffer, 1)
        if match is not None:
            self.skipped += match.start()
            del self._buffer[: match.start()]
        else:
            self._skip_to_header()
        log.warning("tile-lsp: malformed input (" + why + "); skipped %d bytes", *args, self.skipped - before)

    def _skip_to_header(self) -> None:
        """Drop input until a `Content-Length:` header starts the buffer (or input ends),
        keeping memory bounded however long the garbage is."""
        buffer = self._buffer
        while True:
            match = _NEXT_HEADER.search(buffer)
            if match is not None:
                self.skipped += match.start()
                del buffer[: match.start()]
                return
            keep = min(len(buffer), 32)  # a header may be cut across two reads
            self.skipped += len(buffer) - keep
            del buffer[: len(buffer) - keep]
            if not self._fill():
                self.skipped += len(buffer)
                buffer.clear()
                return


def _headers(block: bytes) -> tuple[str | None, int | None]:
    """(None, Content-Length) of a header block, or (what is wrong, None)."""
    length = None
    for line in block.split(b"\r\n"):
        if not _HEADER_LINE.fullmatch(line):
            return f"not a header line: {line[:60]!r}", None
        match = _CONTENT_LENGTH.fullmatch(line)
        if match is not None:
            length = int(match.group(1))
    if length is None:
        return "headers without Content-Length", None
    return None, length
