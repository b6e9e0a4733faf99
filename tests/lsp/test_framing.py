"""The server's input: oversized or malformed framing on stdin never ends the server (a
MemoryError in pygls) nor desynchronises it: it skips to the next message, logs why, and
answers the requests after it. Both `FramedInput` on its own and the server over raw stdio."""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tile_lsp.framing import FramedInput

ROOT = Path(__file__).resolve().parents[2]


def frame(payload: object, length: int | None = None) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def bodies(data: bytes, limit: int = 1000) -> list[object]:
    """What pygls would read from `data` through FramedInput, decoded."""
    reader = FramedInput(io.BytesIO(data), limit)
    found = []
    while True:
        header = reader.readline()
        if not header:
            return found
        assert header.startswith(b"Content-Length: ") and reader.readline() == b"\r\n"
        found.append(json.loads(reader.read(int(header.split(b":")[1]))))


def test_well_formed_messages_pass_through():
    messages = [{"id": i, "x": "y" * i} for i in range(5)]
    data = b"".join(frame(m) for m in messages)
    data += b'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 9\r\n\r\n{"id": 5}'
    assert bodies(data) == messages + [{"id": 5}]


def test_oversized_and_malformed_input_is_skipped(caplog):
    a, b, c, d = ({"id": i} for i in range(4))
    data = (
        frame(a)
        + b'Content-Length: 999999999999\r\n\r\n{"jsonrpc": "2.0", "id": 9, "method": "x"'  # absurd length
        + frame(b)
        + b"garbage without a header\r\n\r\n\x00\xff more garbage"  # not a header at all
        + frame(c, length=3)  # too short: the rest of the body runs into the next message
        + b"Content-Length: abc\r\n\r\n"  # not a number
        + b"Content-Length: 2000\r\n\r\n"
        + b"x" * 2000  # over the limit (1000), honestly sent
        + frame(d)
    )
    with caplog.at_level("WARNING", logger="tile_lsp.framing"):
        assert bodies(data) == [a, b, d]
    logged = caplog.text
    assert "Content-Length 999999999999 is over the limit" in logged and "malformed input" in logged


def test_garbage_without_headers_keeps_memory_bounded():
    reader = FramedInput(io.BytesIO(b"\x00" * 5_000_000 + frame({"id": 1})), 1000)
    header = reader.readline()
    assert header == b"Content-Length: 9\r\n" and reader.readline() == b"\r\n" and reader.read(9) == b'{"id": 1}'
    assert reader.skipped == 5_000_000 and len(reader._buffer) < 1 << 17


# ---------------------------------------------------------------------------------- the server


class RawServer:
    """`python -m tile_lsp` over pipes, its messages parsed on a thread."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tile_lsp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        self.messages: queue.Queue[dict] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()

    def _read(self) -> None:
        out = self.process.stdout
        while True:
            length = None
            while True:  # the headers, up to an empty line
                header = out.readline()
                if not header:
                    return
                if not header.strip():
                    break
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            self.messages.put(json.loads(out.read(length)))

    def send(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def response(self, msg_id: int, timeout: float = 60) -> dict:
        while True:
            try:
                message = self.messages.get(timeout=timeout)
            except queue.Empty:
                log = b"".join(self.stderr).decode(errors="replace")
                why = f"no answer to request {msg_id} (exit {self.process.poll()}); stderr:\n{log}"
                raise AssertionError(why) from None
            if message.get("id") == msg_id and "method" not in message:
                return message


def request(msg_id: int, method: str, params: object) -> bytes:
    return frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


def notification(method: str, params: object) -> bytes:
    return frame({"jsonrpc": "2.0", "method": method, "params": params})


def test_the_server_recovers_from_broken_framing(tmp_path):
    big = tmp_path / "big.tileirbc"
    big.write_bytes(b"\x7fTileIR\x00" + bytes(2000))
    server = RawServer("--max-file-bytes", "1000")
    try:
        server.send(request(1, "initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}}))
        assert "capabilities" in server.response(1)["result"]
        server.send(notification("initialized", {}))
        server.send(b'Content-Length: 999999999999\r\n\r\n{"jsonrpc": "2.0", "id": 2, "method": "shutdown"')
        server.send(b"\r\nthis is not a header\r\n\r\n")
        server.send(request(3, "shutdown", None)[:-5])  # cut short
        server.send(b"Content-Length: 10\r\n\r\n" + request(4, "tileir/convertFromBytecode", {"uri": big.as_uri()}))
        # The requests after all that are answered (the file is over --max-file-bytes).
        server.send(request(5, "tileir/convertFromBytecode", {"uri": big.as_uri()}))
        for msg_id in (4, 5):
            assert "more than the limit of 1000" in server.response(msg_id)["error"]["message"]
        server.send(request(6, "shutdown", None))
        assert server.response(6)["result"] is None
        server.send(notification("exit", None))
        assert server.process.wait(timeout=60) == 0
    finally:
        if server.process.poll() is None:
            server.process.kill()
    log = b"".join(server.stderr).decode(errors="replace")
    assert "Content-Length 999999999999 is over the limit" in log
    assert "MemoryError" not in log
    assert "Unable to handle message" not in log  # pygls never saw a broken body


def test_the_server_exits_when_input_ends_inside_a_message():
    server = RawServer()
    try:
        server.send(b'Content-Length: 100\r\n\r\n{"jsonrpc"')
        server.process.stdin.close()
        server.process.wait(timeout=60)
    finally:
        if server.process.poll() is None:
            server.process.kill()
            pytest.fail("the server did not exit when its input ended")
    assert "input ended inside a message body" in b"".join(server.stderr).decode(errors="replace")


def test_params_that_break_the_rules_are_answered_in_one_line():
    """A request whose params cannot be read (no `position`, a line of -1) is answered with
    InvalidParams; a didChange that cannot be read is dropped, the document marked as maybe out
    of step with the editor; each is one log line, not cattrs's traceback."""
    server = RawServer()
    uri = "file:///tmp/tile_lsp_tests/params.tileir"
    try:
        server.send(request(1, "initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}}))
        server.response(1)
        server.send(notification("initialized", {}))
        server.send(notification("workspace/didChangeConfiguration", {"settings": {"tileir": {"diagnostics": {}}}}))
        item = {"uri": uri, "languageId": "tileir", "version": 1, "text": "cuda_tile.module @m {\n}\n"}
        server.send(notification("textDocument/didOpen", {"textDocument": item}))
        ident = {"uri": uri}
        server.send(request(2, "textDocument/hover", {"textDocument": ident}))
        server.send(request(3, "textDocument/hover", {"textDocument": ident, "position": {"line": -1, "character": 0}}))
        for msg_id, why in (
            (2, "required field missing @ $.params.position"),
            (3, "invalid value @ $.params.position"),
        ):
            error = server.response(msg_id)["error"]
            assert error["code"] == -32602 and why in error["message"], error
        where = {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}
        change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": where, "text": "x"}]}
        server.send(notification("textDocument/didChange", change))
        server.send(request(4, "textDocument/hover", {"textDocument": ident, "position": {"line": 0, "character": 0}}))
        assert "error" not in server.response(4)
        deadline = 60
        while True:  # the stale warning comes with the next diagnostics
            message = server.messages.get(timeout=deadline)
            if message.get("method") == "textDocument/publishDiagnostics":
                messages = [d["message"] for d in message["params"]["diagnostics"]]
                if any("lost an edit" in m for m in messages):
                    break
        server.send(request(5, "shutdown", None))
        server.response(5)
        server.send(notification("exit", None))
        server.process.wait(timeout=60)
    finally:
        if server.process.poll() is None:
            server.process.kill()
    log = b"".join(server.stderr).decode(errors="replace")
    assert "Traceback" not in log and "Unable to deserialize" not in log, log
    assert "textDocument/hover request with invalid params: required field missing" in log
    assert "dropped a textDocument/didChange notification with invalid params" in log
