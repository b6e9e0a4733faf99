"""The custom requests tileir/convertFromBytecode, tileir/convertToBytecode and tileir/ptx."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from compiler.bytecode import write_bytecode
from compiler.text import parse
from tests.conformance.harness import shared_dir

from .util import open_document

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.tileir"))


async def request(client, method: str, params: dict):
    return await client.protocol.send_request_async(method, params)


def field(result, key: str):
    return result[key] if isinstance(result, dict) else getattr(result, key)


def tileir_disasm(path: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "compiler", "disasm", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.asyncio(loop_scope="module")
async def test_convert_to_bytecode_of_the_examples(client):
    for path in EXAMPLES:
        text = path.read_text()
        uri, _ = await open_document(client, text)
        module = parse(text, path.name).module
        result = await request(client, "tileir/convertToBytecode", {"uri": uri})
        assert base64.b64decode(field(result, "output")) == write_bytecode(module, (13, 3)), path.name
        older = await request(client, "tileir/convertToBytecode", {"uri": uri, "version": "13.1"})
        assert base64.b64decode(field(older, "output")) == write_bytecode(module, (13, 1)), path.name


@pytest.mark.asyncio(loop_scope="module")
async def test_convert_to_bytecode_of_a_file_not_open(client):
    path = EXAMPLES[0]
    result = await request(client, "tileir/convertToBytecode", {"uri": path.as_uri()})
    assert base64.b64decode(field(result, "output")) == write_bytecode(parse(path.read_text()).module, (13, 3))


@pytest.mark.asyncio(loop_scope="module")
async def test_convert_to_bytecode_refuses_errors(client):
    text = "cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    %c = addf %a, %a : tile<i32>\n    return\n  }\n}\n"
    uri, _ = await open_document(client, text)
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/convertToBytecode", {"uri": uri})
    assert "has errors" in caught.value.message and "must be tile of f16" in caught.value.message
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/convertToBytecode", {"uri": uri, "version": "9.9"})
    assert "9.9" in caught.value.message


@pytest.mark.asyncio(loop_scope="module")
async def test_convert_from_bytecode_written_here(client, tmp_path):
    for path in EXAMPLES:
        bytecode = tmp_path / (path.stem + ".tileirbc")
        bytecode.write_bytes(write_bytecode(parse(path.read_text()).module, (13, 3)))
        result = await request(client, "tileir/convertFromBytecode", {"uri": bytecode.as_uri()})
        assert field(result, "output") == tileir_disasm(bytecode), path.name


@pytest.mark.asyncio(loop_scope="module")
async def test_convert_from_bytecode_of_nvidia_samples(client):
    samples = sorted((shared_dir() / "samples").glob("*.tileirbc")) if shared_dir() is not None else []
    if not samples:
        pytest.skip("../shared/samples is not here")
    for path in samples:
        result = await request(client, "tileir/convertFromBytecode", {"uri": path.as_uri()})
        assert field(result, "output") == tileir_disasm(path), path.name


@pytest.mark.asyncio(loop_scope="module")
async def test_convert_from_bad_files_is_an_error(client, tmp_path):
    good = write_bytecode(parse(EXAMPLES[0].read_text()).module, (13, 3))
    cut = tmp_path / "cut.tileirbc"
    cut.write_bytes(good[: len(good) // 2])
    garbage = tmp_path / "garbage.tileirbc"
    garbage.write_bytes(b"\x7fTileIR\x00" + bytes(range(256)) * 3)
    text = tmp_path / "text.tileirbc"
    text.write_text(EXAMPLES[0].read_text())
    for path, words in ((cut, "at byte"), (garbage, "at byte"), (text, "text file"), (tmp_path / "none", "cannot")):
        with pytest.raises(JsonRpcException) as caught:
            await request(client, "tileir/convertFromBytecode", {"uri": path.as_uri()})
        assert str(path) in caught.value.message and words in caught.value.message, caught.value.message
    for params in ({}, {"uri": 3}, {"uri": "untitled:Untitled-1"}):
        with pytest.raises(JsonRpcException):
            await request(client, "tileir/convertFromBytecode", params)


@pytest.mark.asyncio(loop_scope="module")
async def test_conversions_report_progress(client, tmp_path):
    before = set(client.progress_reports)
    uri, _ = await open_document(client, EXAMPLES[0].read_text())
    await request(client, "tileir/convertToBytecode", {"uri": uri})
    new = [token for token in client.progress_reports if token not in before]
    assert len(new) == 1
    kinds = [report.kind for report in client.progress_reports[new[0]]]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
    # A token the client chose is used as it is.
    client.progress_reports["mine"] = []
    bytecode = tmp_path / "p.tileirbc"
    bytecode.write_bytes(write_bytecode(parse(EXAMPLES[0].read_text()).module, (13, 3)))
    await request(client, "tileir/convertFromBytecode", {"uri": bytecode.as_uri(), "workDoneToken": "mine"})
    kinds = [report.kind for report in client.progress_reports["mine"]]
    assert kinds[0] == "begin" and kinds[-1] == "end"


@pytest.mark.asyncio(loop_scope="module")
async def test_ptx_says_the_lowering_does_not_exist_yet(client):
    uri, _ = await open_document(client, EXAMPLES[0].read_text())
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/ptx", {"textDocument": {"uri": uri}, "arch": "sm_120"})
    message = caught.value.message
    assert "PTX" in message and "tileir asm" in message and "tileiras" in message and "sm_120" in message
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/ptx", {"textDocument": {"uri": uri}, "kernel": "nope"})
    assert "@nope" in caught.value.message
    with pytest.raises(JsonRpcException):
        await request(client, "tileir/ptx", {"textDocument": {"uri": "file:///not/open.tileir"}})
