"""The custom requests tileir/convertFromBytecode, tileir/convertToBytecode, tileir/triton,
tileir/ptx and tileir/sass."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from compiler.bytecode import write_bytecode
from compiler.text import parse
from tests.conformance.harness import shared_dir
from tests.lower.harness import UNLOWERABLE

from .util import open_document, position_of

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
async def test_convert_from_bytecode_reads_only_regular_files(client, tmp_path):
    """Special files and files over the limit are refused at once, without reading them (issue
    18: /dev/zero grew the server until the OOM killer came, a FIFO blocked it for good)."""
    fifo = tmp_path / "pipe.tileirbc"
    os.mkfifo(fifo)
    # Over the default limit (64 MiB) without taking the disk space: a sparse file.
    huge = tmp_path / "huge.tileirbc"
    with open(huge, "wb") as f:
        f.truncate(64 * 1024 * 1024 + 1)
    cases = [(fifo, "FIFO"), (tmp_path, "directory"), (huge, "more than the limit")]
    if Path("/dev/zero").exists():
        cases.append((Path("/dev/zero"), "character device"))
    for path, words in cases:
        with pytest.raises(JsonRpcException) as caught:
            await asyncio.wait_for(request(client, "tileir/convertFromBytecode", {"uri": path.as_uri()}), 30)
        assert str(path) in caught.value.message and words in caught.value.message, caught.value.message
    # The server is still well: a good file converts.
    good = tmp_path / "good.tileirbc"
    good.write_bytes(write_bytecode(parse(EXAMPLES[0].read_text()).module, (13, 3)))
    result = await request(client, "tileir/convertFromBytecode", {"uri": good.as_uri()})
    assert field(result, "output") == tileir_disasm(good)


@pytest.mark.asyncio(loop_scope="module")
async def test_other_requests_are_answered_while_a_conversion_runs(client, tmp_path):
    """Reading and decoding a file run off the main loop: a hover sent after a long
    conversion is answered before it."""
    body = EXAMPLES[0].read_text()
    entry = body[body.index("entry @") : body.rindex("}")].rstrip()
    name = entry[len("entry @") : entry.index("(")]
    kernels = [entry.replace(f"entry @{name}(", f"entry @{name}_{i}(", 1) for i in range(240)]
    big = tmp_path / "big.tileirbc"
    big.write_bytes(write_bytecode(parse("cuda_tile.module @big {\n" + "\n".join(kernels) + "\n}\n").module, (13, 3)))
    uri, _ = await open_document(client, body)
    # Sent now (pygls's plain send_request, not a coroutine that sends when it first runs).
    converting = asyncio.wrap_future(client.protocol.send_request("tileir/convertFromBytecode", {"uri": big.as_uri()}))
    hover = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=position_of(body, "entry @"))
    )
    assert hover is not None and not converting.done()  # answered during the conversion
    assert field(await converting, "output").count("entry @") == len(kernels)


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


# -- tileir/ptx ---------------------------------------------------------------------------------

VECTOR_ADD = ROOT / "examples" / "vector_add.tileir"
TWO_KERNELS = "cuda_tile.module @m {\n  entry @first() {\n    return\n  }\n  entry @second() {\n    return\n  }\n}\n"
WRONG = "cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    %c = addf %a, %a : tile<i32>\n    return\n  }\n}\n"


@pytest.fixture(scope="module", autouse=True)
def _private_compile_cache(tmp_path_factory: pytest.TempPathFactory):
    """The servers of this module (started after this fixture: autouse fixtures come first in
    their scope) and this process compile into a cache of their own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILEIR_CACHE_DIR", str(tmp_path_factory.mktemp("tileir-cache")))
        yield


def needs_triton() -> None:
    pytest.importorskip("triton", reason="tileir/ptx compiles with Triton (pip install 'triton>=3.6')")


def compiled_here(text: str, uri: str, kernel: str, arch: str):
    """What `tileir compile` makes of the document, in this process (the server names the
    module after the URI's last part, and the generated source carries that name)."""
    from compiler.lower import compile as lower_compile
    from compiler.runtime import load_module

    return lower_compile(load_module(text, name=uri.rsplit("/", 1)[-1]), kernel, arch)


@pytest.mark.asyncio(loop_scope="module")
async def test_ptx_of_a_kernel(client):
    needs_triton()
    text = VECTOR_ADD.read_text()
    uri, _ = await open_document(client, text)
    client.progress_reports["ptx"] = []
    params = {"textDocument": {"uri": uri}, "kernel": "@vector_add", "arch": "sm_90", "workDoneToken": "ptx"}
    result = await request(client, "tileir/ptx", params)
    ptx = field(result, "ptx")
    assert ".target sm_90a" in ptx and ".visible .entry vector_add(" in ptx
    expected = compiled_here(text, uri, "vector_add", "sm_90")  # read from the cache the server wrote
    assert expected.cached and ptx == expected.asm["ptx"]
    assert field(result, "kernel") == "vector_add" and field(result, "arch") == "sm_90"
    assert field(result, "registers") == expected.registers and field(result, "shared") == 0
    assert field(result, "cached") is False
    reports = client.progress_reports["ptx"]
    assert [r.kind for r in reports][0] == "begin" and reports[-1].kind == "end" and reports[-1].message == "done"
    assert reports[0].title == "Generating PTX for @vector_add"
    messages = [r.message for r in reports if r.kind == "report"]
    assert messages == ["lowering to Triton", "compiling for sm_90 with Triton", "done"]
    # Asked again: from the cache.
    again = await request(client, "tileir/ptx", params)
    assert field(again, "ptx") == ptx and field(again, "cached") is True


@pytest.mark.asyncio(loop_scope="module")
async def test_triton_source_of_a_kernel(client):
    """tileir/triton: the generated Triton source, as `tileir compile --emit triton` writes
    it (the lowering alone: no compile), with the ops Triton's interpreter cannot run."""
    from compiler.lower import lower
    from compiler.runtime import load_module

    text = VECTOR_ADD.read_text()
    uri, _ = await open_document(client, text)
    result = await request(client, "tileir/triton", {"textDocument": {"uri": uri}, "arch": "sm_100"})
    source = field(result, "source")
    expected = lower(load_module(text, name=uri.rsplit("/", 1)[-1]), "vector_add", "sm_100")
    assert source == expected.text and "@triton.jit" in source and "def vector_add(" in source
    assert (field(result, "kernel"), field(result, "arch"), field(result, "notInterpretable")) == (
        "vector_add",
        "sm_100",
        [],
    )
    # f64 with a directed rounding: inline PTX, which the interpreter cannot run.
    rounded = (
        "cuda_tile.module @m {\n  entry @k(%a: tile<f64>) {\n"
        "    %b = addf %a, %a rounding<zero> : tile<f64>\n    return\n  }\n}\n"
    )
    uri2, _ = await open_document(client, rounded)
    result = await request(client, "tileir/triton", {"textDocument": {"uri": uri2}})
    assert field(result, "notInterpretable") == ["addf"] and "inline_asm_elementwise" in field(result, "source")
    uri3, _ = await open_document(client, WRONG)
    with pytest.raises(JsonRpcException, match="has errors; no Triton source generated"):
        await request(client, "tileir/triton", {"textDocument": {"uri": uri3}})


@pytest.mark.asyncio(loop_scope="module")
async def test_ptx_and_sass_carry_the_compiles_notes(client):
    """A kernel whose clusters Triton cannot compile (tests/lower/test_tuning.py): compiled
    without them, and the answer's notes say so as `tileir compile` does; none otherwise."""
    needs_triton()
    from tests.lower.test_tuning import SCANS_IN_A_CLUSTER

    uri, _ = await open_document(client, SCANS_IN_A_CLUSTER)
    params = {"textDocument": {"uri": uri}, "arch": "sm_90"}
    (note,) = field(await request(client, "tileir/ptx", params), "notes")
    name = uri.rsplit("/", 1)[-1]
    assert note.startswith(f"{name}:2:3: warning: the hint num_cta_in_cga = 2 for sm_90 is not applied: Triton ")
    assert field(await request(client, "tileir/sass", params), "notes") == [note]
    uri, _ = await open_document(client, VECTOR_ADD.read_text())
    assert field(await request(client, "tileir/ptx", {"textDocument": {"uri": uri}, "arch": "sm_90"}), "notes") == []


@pytest.mark.asyncio(loop_scope="module")
async def test_ptx_defaults_to_the_only_kernel_and_the_setting(client):
    needs_triton()
    uri, _ = await open_document(client, VECTOR_ADD.read_text())
    result = await request(client, "tileir/ptx", {"textDocument": {"uri": uri}})
    assert ".target sm_100a" in field(result, "ptx")  # tileir.targetArchitecture's default
    assert field(result, "arch") == "sm_100"


@pytest.mark.asyncio(loop_scope="module")
async def test_the_server_answers_while_it_compiles(client):
    needs_triton()
    uri, _ = await open_document(client, VECTOR_ADD.read_text())  # a new name: a new source, not cached
    # A token of the client's own: the server starts at once (creating one would await the client).
    params = {"textDocument": {"uri": uri}, "arch": "sm_80", "workDoneToken": f"busy-{uri}"}
    client.progress_reports[params["workDoneToken"]] = []
    ptx = asyncio.ensure_future(request(client, "tileir/ptx", params))
    await asyncio.sleep(0.05)  # the request has reached the server
    symbols = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert symbols and not ptx.done()  # answered during Triton's compile
    assert ".target sm_80" in field(await ptx, "ptx")


@pytest.mark.asyncio(loop_scope="module")
async def test_ptx_errors(client):
    needs_triton()
    uri, _ = await open_document(client, VECTOR_ADD.read_text())
    for params, words in (
        ({"kernel": "nope"}, ["@nope"]),
        ({"arch": "bogus"}, ["unknown GPU architecture 'bogus'"]),
        ({"arch": "sm_70"}, ["sm_80 or newer"]),
        ({"arch": "sm_95"}, ["ptxas cannot compile for sm_95"]),
    ):
        with pytest.raises(JsonRpcException) as caught:
            await request(client, "tileir/ptx", {"textDocument": {"uri": uri}, **params})
        assert caught.value.code == -32602  # InvalidParams
        assert all(w in caught.value.message for w in words), caught.value.message
    with pytest.raises(JsonRpcException):
        await request(client, "tileir/ptx", {"textDocument": {"uri": "file:///not/open.tileir"}})

    two, _ = await open_document(client, TWO_KERNELS)
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/ptx", {"textDocument": {"uri": two}})
    assert "name the kernel" in caught.value.message and "@first, @second" in caught.value.message

    wrong, _ = await open_document(
        client,
        "cuda_tile.module @m {\n  entry @k(%a: tile<i32>) {\n    %c = addf %a, %a : tile<i32>\n    return\n  }\n}\n",
    )
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/ptx", {"textDocument": {"uri": wrong}})
    assert caught.value.code == -32803  # RequestFailed
    assert "has errors; no PTX generated" in caught.value.message and "must be tile of f16" in caught.value.message

    unlowerable, _ = await open_document(client, UNLOWERABLE)
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/ptx", {"textDocument": {"uri": unlowerable}, "arch": "sm_90"})
    assert caught.value.code == -32803
    name = unlowerable.rsplit("/", 1)[-1]
    assert caught.value.message == (
        f"{name}:3:5: error: alloca: alloca alignment 512 exceeds the 256 bytes device allocations "
        "guarantee [target sm_90]"
    )


# -- tileir/sass ---------------------------------------------------------------------------------


@pytest.mark.asyncio(loop_scope="module")
async def test_sass_of_our_compile_and_of_tileiras(client):
    """tileir/sass: our cubin's SASS (the compile tileir/ptx makes), or NVIDIA's tileiras' of
    the module's bytecode, the named kernel's alone; the resources each cubin declares."""
    from compiler.lower.build import tool_path
    from compiler.lower.cubin import read_cubin
    from compiler.runtime import find_tileiras, load_module
    from compiler.runtime.tileiras import compile_tileiras

    needs_triton()
    if tool_path("cuobjdump") is None:
        pytest.skip("cuobjdump (shipped in Triton's wheel) is not there")
    text = VECTOR_ADD.read_text()
    uri, _ = await open_document(client, text)
    client.progress_reports["sass"] = []
    params = {"textDocument": {"uri": uri}, "arch": "80", "workDoneToken": "sass"}
    ours = await request(client, "tileir/sass", params)
    expected = compiled_here(text, uri, "vector_add", "sm_80")
    assert field(ours, "sass") == expected.sass() and "Function : vector_add" in field(ours, "sass")
    assert (field(ours, "compiler"), field(ours, "arch"), field(ours, "kernel")) == ("triton", "sm_80", "vector_add")
    assert field(ours, "registers") == expected.registers
    messages = [r.message for r in client.progress_reports["sass"] if r.kind == "report"]
    assert messages == ["lowering to Triton", "compiling for sm_80 with Triton", "disassembling", "done"]
    if find_tileiras() is None:
        pytest.skip("NVIDIA's tileiras is not installed (pip install nvidia-cuda-tileiras)")
    two, _ = await open_document(client, TWO_KERNELS)
    theirs = await request(client, "tileir/sass", {"textDocument": {"uri": two}, "kernel": "second",
                                                   "arch": "sm_80", "compiler": "tileiras"})  # fmt: skip
    sass = field(theirs, "sass")
    assert "Function : second" in sass and "Function : first" not in sass and "EF_CUDA_SM80" in sass
    built = compile_tileiras(load_module(TWO_KERNELS), "sm_80")  # the cubin the server stored
    assert built.cached and read_cubin(built.cubin).kernels["second"].tile_kernel
    assert field(theirs, "registers") == built.info.kernels["second"].registers
    assert (field(theirs, "compiler"), field(theirs, "arch")) == ("tileiras", "sm_80")


@pytest.mark.asyncio(loop_scope="module")
async def test_sass_errors(client):
    from compiler.runtime import find_tileiras

    needs_triton()
    uri, _ = await open_document(client, VECTOR_ADD.read_text())
    cases = [
        ({"compiler": "nvcc"}, -32602, "tileir/sass: compiler 'nvcc': one of triton, tileiras"),
        ({"kernel": "nope"}, -32602, "tileir/sass: the document has no entry @nope"),
        ({"arch": "bogus"}, -32602, "tileir/sass: unknown GPU architecture 'bogus'"),
    ]
    if find_tileiras() is not None:
        cases.append(({"arch": "sm_200", "compiler": "tileiras"}, -32803, "this tileiras cannot compile for sm_200"))
    for params, code, words in cases:
        with pytest.raises(JsonRpcException) as caught:
            await request(client, "tileir/sass", {"textDocument": {"uri": uri}, **params})
        assert caught.value.code == code and words in caught.value.message, caught.value.message
    wrong, _ = await open_document(client, WRONG)
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/sass", {"textDocument": {"uri": wrong}, "compiler": "tileiras"})
    assert caught.value.code == -32803 and "has errors; no SASS generated" in caught.value.message


@pytest.mark.asyncio(loop_scope="module")
async def test_convert_to_bytecode_of_a_virtual_document(client, tmp_path):
    """A bytecode file opened as text in VS Code is a virtual document (the extension's
    `tileir-bytecode:` scheme, with the file's URI percent-encoded in the query); Save as
    Bytecode asks for it by that URI, exactly as the client sent it."""
    text = EXAMPLES[0].read_text()
    original = (tmp_path / "k.tileirbc").as_uri()
    query = original.replace(":", "%3A").replace("/", "%2F")
    uri = f"tileir-bytecode:{tmp_path}/k.tileirbc.tileir?{query}"
    await open_document(client, text, uri)
    result = await request(client, "tileir/convertToBytecode", {"uri": uri})
    assert base64.b64decode(field(result, "output")) == write_bytecode(parse(text).module, (13, 3))


TWO_MODULES = (
    "cuda_tile.module @m1 {\n  entry @k(%a: tile<f32>) {\n    return\n  }\n}\n"
    "cuda_tile.module @m2 {\n  entry @k(%a: tile<i32>) {\n    %c = addf %a, %a : tile<i32>\n    return\n  }\n}\n"
)


@pytest.mark.asyncio(loop_scope="module")
async def test_ptx_kernel_names_that_are_ambiguous_or_missing(client):
    """Two modules with an `entry @k`: the bare name is refused as ambiguous, and `m::k`
    chooses (@m2's `k` has an error: asking for it fails past the name, without compiling); a
    document without entries says it has no kernel."""
    uri, _ = await open_document(client, TWO_MODULES)
    for params, code, words in (
        ({}, -32602, "name the kernel (the document's entries: @m1::k, @m2::k)"),
        (
            {"kernel": "@k"},
            -32602,
            'the kernel name @k is ambiguous: 2 entries have it; name it with its module ("m1::k", "m2::k")',
        ),
        ({"kernel": "m2::k"}, -32803, "has errors; no PTX generated"),
        ({"kernel": "@m3::k"}, -32602, "the document has no entry @m3::k"),
    ):
        with pytest.raises(JsonRpcException) as caught:
            await request(client, "tileir/ptx", {"textDocument": {"uri": uri}, **params})
        assert caught.value.code == code and words in caught.value.message, caught.value.message
    empty, _ = await open_document(client, "cuda_tile.module @m {\n}\n")
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/ptx", {"textDocument": {"uri": empty}})
    assert "the document has no kernel (no `entry`)" in caught.value.message


@pytest.mark.asyncio(loop_scope="module")
async def test_messages_name_the_file_as_the_user_does(client):
    """A percent-encoded URI's file name is decoded in messages."""
    uri = "file:///tmp/tile_lsp_tests/my%20file%C3%BC.tileir"
    await open_document(client, WRONG, uri)
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "tileir/ptx", {"textDocument": {"uri": uri}})
    assert caught.value.message.startswith("'my fileü.tileir' has errors; no PTX generated"), caught.value.message
