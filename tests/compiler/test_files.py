"""compiler.ir.files: the bounded reader every face reads its inputs with."""

from __future__ import annotations

import io
import os
import threading

import pytest

from compiler.ir.files import InputError, read_file, read_stream


def test_regular_file_within_and_past_the_limit(tmp_path) -> None:
    f = tmp_path / "k.tileir"
    f.write_bytes(b"x" * 100)
    assert read_file(str(f), 100) == b"x" * 100
    with pytest.raises(InputError, match=r"'.*k\.tileir': 100 bytes, more than the limit of 99 bytes \(raise it\)"):
        read_file(str(f), 99, hint=" (raise it)")


def test_endless_device_stops_at_the_limit() -> None:
    with pytest.raises(InputError, match="/dev/zero': more than the limit of 4096 bytes"):
        read_file("/dev/zero", 4096)


def test_regular_only_refuses_devices_fifos_and_directories_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, what in (("/dev/zero", "a character device"), (str(fifo), "a FIFO"), (str(tmp_path), "a directory")):
        with pytest.raises(InputError, match=what):
            read_file(path, 1 << 20, regular_only=True)


def test_a_fifo_is_read_until_its_writer_closes(tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as w:
            w.write(b"abc" * 1000)

    writer = threading.Thread(target=write)
    writer.start()
    assert read_file(str(fifo), 1 << 20) == b"abc" * 1000
    writer.join()


def test_missing_file_and_stream_limit(tmp_path) -> None:
    with pytest.raises(InputError, match="No such file"):
        read_file(str(tmp_path / "nope"))
    assert read_stream(io.BytesIO(b"12345"), "<stdin>", 5) == b"12345"
    with pytest.raises(InputError, match="<stdin>"):
        read_stream(io.BytesIO(b"123456"), "<stdin>", 5)
