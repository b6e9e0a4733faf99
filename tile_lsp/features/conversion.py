"""Custom requests for the editor's bytecode view, and the Triton source, PTX and SASS:

- `tileir/convertFromBytecode` {uri} -> {output}: the bytecode file at `uri` as text, printed
  as `tileir disasm` prints it.
- `tileir/convertToBytecode` {uri, version?} -> {output}: the open document (or the file at
  `uri`) verified and written as bytecode of `version` (default: the `tileir.bytecodeVersion`
  setting), base64-encoded.
- `tileir/ptx` {textDocument: {uri}, kernel?, arch?} -> {ptx, kernel, arch, registers, spills,
  shared, cached, notes}: the PTX of one kernel of the open document (`kernel`: needed when it has
  several; `module::kernel` when two modules have a kernel of that name) for `arch` (default:
  the `tileir.targetArchitecture` setting), as `tileir compile --emit ptx` writes it: lowered
  to Triton (`compiler.lower`) and compiled by Triton, through its disk cache. Triton's compile
  (0.2-2 s) runs on a worker thread, one at a time, so that the server keeps answering
  meanwhile; the lowering itself runs on the main loop, as it reads the document's module,
  which edits change in place. `notes`: the warnings `tileir compile` prints with it (a
  hint not applied, e.g. clusters Triton cannot compile), one line each.
- `tileir/triton` {textDocument: {uri}, kernel?, arch?} -> {source, kernel, arch, notInterpretable, notes}:
  the Triton Python source of that kernel as `tileir compile --emit triton` writes it (the
  lowering alone, on the main loop: no Triton needed, no compile); `notInterpretable`: the ops
  whose code Triton's interpreter cannot run (inline PTX, libdevice); `notes`: the lowering's
  warnings (a hint not applied as asked).
- `tileir/sass` {textDocument: {uri}, kernel?, arch?, compiler?} -> {sass, kernel, arch,
  compiler, registers, shared, cached, notes}: the SASS of that kernel (`cuobjdump -sass`, Triton's),
  compiled as for `tileir/ptx` (`compiler` "triton", the default) or by NVIDIA's tileiras from
  the module's bytecode ("tileiras": `tileir compile --compiler tileiras`); the bytecode is
  written on the main loop, tileiras runs on the worker thread.

Files are read only when they are regular files of at most `server.max_file_bytes` (`python -m
tile_lsp --max-file-bytes`): `/dev/zero` or a FIFO would otherwise grow the server without
bound or block it for good. Reading and decoding run on a worker thread (bytecode and its text
are the thread's alone), so the server keeps answering meanwhile.

Failures are JSON-RPC errors (code RequestFailed) whose message says what went wrong, naming
the file (and the byte offset, for bytecode that cannot be read). The conversions report
`$/progress` when the client gave a `workDoneToken` or supports server-created progress.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import functools
import itertools
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import to_fs_path

from compiler.ir.files import InputError, read_file
from compiler.ir.symbols import symbol_name

from ..convert import param
from ..server import feature

if TYPE_CHECKING:
    from compiler.ir.core import Module, Operation

    from ..server import TileLanguageServer

CONVERT_FROM_BYTECODE = "tileir/convertFromBytecode"
CONVERT_TO_BYTECODE = "tileir/convertToBytecode"
PTX = "tileir/ptx"
TRITON = "tileir/triton"
SASS = "tileir/sass"
COMPILERS = ("triton", "tileiras")
REQUEST_FAILED = -32803  # LSP's ErrorCodes.RequestFailed: valid request, the operation failed

_progress_tokens = itertools.count()


class RequestFailed(JsonRpcException):
    CODE = REQUEST_FAILED


def register(server: TileLanguageServer) -> None:
    @feature(server, CONVERT_FROM_BYTECODE)
    async def convert_from_bytecode(params: Any) -> dict[str, str]:
        uri = _string(params, "uri")
        path = _path(uri)
        async with _progress(server, params, "Reading Tile IR bytecode") as step:
            loop = asyncio.get_running_loop()
            data = await loop.run_in_executor(_reader(), _read_file, path, server.max_file_bytes)
            step(f"decoding {len(data)} bytes")
            return {"output": await loop.run_in_executor(_reader(), _disassemble, data, path)}

    @feature(server, CONVERT_TO_BYTECODE)
    async def convert_to_bytecode(params: Any) -> dict[str, str]:
        from compiler.bytecode import BytecodeWriteError, write_bytecode

        uri = _string(params, "uri")
        version = _version(param(params, "version") or server.settings.bytecode_version)
        async with _progress(server, params, "Writing Tile IR bytecode") as step:
            step("verifying")
            module, name = _verified_module(server, uri)
            step("encoding")
            try:
                data = write_bytecode(module, version)
            except BytecodeWriteError as error:
                what = f"cannot be written as bytecode {_text(version)}"
                raise RequestFailed(_failure(name, what, error.diagnostics)) from None
            return {"output": base64.b64encode(data).decode("ascii")}

    @feature(server, PTX)
    async def ptx(params: Any) -> dict[str, Any]:
        analysis, kernel, op = _document_kernel(server, params, PTX)
        target = _target(PTX, str(param(params, "arch") or server.settings.target_architecture))
        async with _progress(server, params, f"Generating PTX for @{kernel}") as step:
            compiled = await _compile_kernel(analysis, op, target, step, "PTX")
            step("done (cached)" if compiled.cached else "done")
            return {
                "ptx": compiled.asm["ptx"],
                "kernel": kernel,
                "arch": target.arch,
                "registers": compiled.registers,
                "spills": compiled.spills,
                "shared": compiled.shared,
                "cached": compiled.cached,
                "notes": compiled.notes,
            }

    @feature(server, TRITON)
    async def triton_source(params: Any) -> dict[str, Any]:
        analysis, kernel, op = _document_kernel(server, params, TRITON)
        target = _target(TRITON, str(param(params, "arch") or server.settings.target_architecture), compiles=False)
        _verified(analysis, "Triton source")
        source = _lower(analysis.module, op, target)
        return {
            "source": source.text,
            "kernel": kernel,
            "arch": target.arch,
            "notInterpretable": source.not_interpretable(),
            "notes": source.notes,
        }

    @feature(server, SASS)
    async def sass(params: Any) -> dict[str, Any]:
        analysis, kernel, op = _document_kernel(server, params, SASS)
        compiler = param(params, "compiler") or "triton"
        if compiler not in COMPILERS:
            raise JsonRpcInvalidParams(f"{SASS}: compiler {compiler!r}: one of {', '.join(COMPILERS)}")
        arch = str(param(params, "arch") or server.settings.target_architecture)
        target = _target(SASS, arch) if compiler == "triton" else None
        worker = _compile_thread()
        loop = asyncio.get_running_loop()
        by = " by NVIDIA's tileiras" if compiler == "tileiras" else ""
        async with _progress(server, params, f"Generating SASS for @{kernel}{by}") as step:
            if target is not None:
                compiled = await _compile_kernel(analysis, op, target, step, "SASS")
                disassemble, arch = compiled.sass, target.arch
                found = {
                    "registers": compiled.registers,
                    "shared": compiled.shared,
                    "cached": compiled.cached,
                    "notes": compiled.notes,
                }
            else:
                bytecode, cause = _tileiras_input(analysis)
                arch = _spelled(arch)
                step(f"compiling for {arch} with tileiras")
                built = await loop.run_in_executor(worker, _tileiras, bytecode, arch, cause)
                name = symbol_name(op)
                disassemble = functools.partial(built.sass, name)  # the kernel's alone
                declared = built.info.kernels.get(name or "")
                found = {
                    "registers": declared.registers if declared else None,
                    "shared": declared.static_shared if declared else None,
                    "cached": built.cached,
                    "notes": [],
                }
            step("disassembling")
            text = await loop.run_in_executor(worker, _sass, disassemble)
            step("done")
            return {"sass": text, "kernel": kernel, "arch": arch, "compiler": compiler, **found}


# ------------------------------------------------------------------------------ PTX


@functools.cache  # made on first use: the server starts no thread it does not need
def _compile_thread() -> concurrent.futures.ThreadPoolExecutor:
    """The one worker that runs Triton: compiles are serialised (Triton's cache setting and
    the redirected stdout are process-wide) and the main loop stays free."""
    return concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="tileir-ptx")


def _document_kernel(server: TileLanguageServer, params: Any, method: str):
    """(the open document's analysis, the kernel's name, its entry op) that `params` ask for."""
    uri = _string(param(params, "textDocument"), "uri")
    analysis = server.analysis(uri)
    if analysis is None:
        raise JsonRpcInvalidParams(f"{method}: {uri} is not an open document")
    return (analysis, *_kernel(analysis.module, param(params, "kernel"), method))


def _verified(analysis: Any, what: str) -> None:
    errors = [d for d in analysis.diagnostics if d.is_error]
    if errors:
        raise RequestFailed(_failure(analysis.source.name, f"has errors; no {what} generated", errors))


async def _compile_kernel(analysis: Any, op: Any, target: Any, step, what: str):
    """Our compile of the kernel `op`: lowered on the main loop, compiled by Triton on the
    worker thread."""
    _verified(analysis, what)
    step("lowering to Triton")
    source = _lower(analysis.module, op, target)
    step(f"compiling for {target.arch} with Triton")
    return await asyncio.get_running_loop().run_in_executor(_compile_thread(), _compile, source)


def _target(method: str, arch: str, compiles: bool = True):
    """The target `arch` names, for a request that `compiles` with Triton (which must then be
    installed) or only lowers."""
    from compiler.lower import LowerError, Target
    from compiler.lower.build import require_triton
    from compiler.lower.targets import arch_problem

    try:
        target = Target.parse(arch)
    except LowerError as error:
        raise JsonRpcInvalidParams(f"{method}: {error.message}") from None
    if not compiles:
        return target
    try:
        require_triton()
    except LowerError as error:
        raise RequestFailed(f"{method}: {error.message}") from None
    problem = arch_problem(target.cc)
    if problem is not None:
        raise JsonRpcInvalidParams(f"{method}: {problem}")
    return target


def _spelled(arch: str) -> str:
    """`arch` as tileiras spells it (sm_90 for 90, SM_90, compute_90), where it parses."""
    from compiler.lower import LowerError, Target

    with contextlib.suppress(LowerError):
        return Target.parse(arch).arch
    return arch  # tileiras says what it makes of it


def _tileiras_input(analysis: Any) -> tuple[bytes, str | None]:
    """(the document's module as bytecode for tileiras, what tileiras would refuse in it
    without saying why), read on the main loop: edits change the module in place."""
    from compiler.modules import LaunchError
    from compiler.runtime.tileiras import named_cause, write_module

    _verified(analysis, "SASS")
    try:
        return write_module(analysis.module), named_cause(analysis.module)
    except LaunchError as error:
        raise RequestFailed(f"{SASS}: {error.message}") from None


def _tileiras(bytecode: bytes, arch: str, cause: str | None):
    """tileiras' cubin of `bytecode` (on the worker thread), through the compile cache."""
    from compiler.modules import LaunchError
    from compiler.runtime.tileiras import compile_bytecode

    try:
        return compile_bytecode(bytecode, arch, cause=lambda: cause)
    except LaunchError as error:  # tileiras missing, or refusing the module or the architecture
        raise RequestFailed(f"{SASS}: {error.message}") from None


def _sass(disassemble: Callable[[], str]) -> str:
    """`disassemble()` (a cubin's `sass`, on the worker thread)."""
    from compiler.lower import LowerError

    try:
        return disassemble()
    except LowerError as error:  # cuobjdump (Triton's wheel ships it) missing or failing
        raise RequestFailed(f"{SASS}: {error.message}") from None


def _lower(module: Module, entry: Any, target: Any):
    """The generated Triton source of `entry`; what the target cannot do is the answer."""
    from compiler.lower import LowerError, lower

    try:
        return lower(module, entry, target)
    except LowerError as error:
        raise RequestFailed(error.report()) from None  # `file:line:col: error: <op>: ... [target sm_90]`


def _compile(source: Any):
    """Triton's compile of `source` (on the worker thread). Whatever Triton prints goes to
    stderr: stdout carries the protocol."""
    from compiler.lower import LowerError, compile_source

    try:
        with contextlib.redirect_stdout(sys.stderr):
            return compile_source(source)
    except LowerError as error:
        raise RequestFailed(error.report()) from None


# ------------------------------------------------------------------------------ params


def _string(params: Any, key: str) -> str:
    value = param(params, key)
    if not isinstance(value, str) or not value:
        raise JsonRpcInvalidParams(f"missing parameter '{key}' (a string)")
    return value


def _path(uri: str) -> str:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    if not path:
        raise JsonRpcInvalidParams(f"{uri}: only file: URIs can be read")
    return path


def _version(text: object):
    from compiler.bytecode import SUPPORTED, parse_version, version_text

    version = parse_version(str(text))
    if version not in SUPPORTED:
        allowed = ", ".join(version_text(v) for v in SUPPORTED)
        raise JsonRpcInvalidParams(f"bytecode version {text!r}: not one tileir writes (use one of {allowed})")
    return version


def _text(version) -> str:
    from compiler.bytecode import version_text

    return version_text(version)


# ------------------------------------------------------------------------------ work


@functools.cache
def _reader() -> concurrent.futures.ThreadPoolExecutor:
    """The worker that reads and converts files (two at once at most)."""
    return concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="tileir-read")


def _read_file(path: str, limit: int) -> bytes:
    """The bytes of the regular file at `path`, if it has at most `limit` of them."""
    try:
        return read_file(path, limit, regular_only=True, hint=" (python -m tile_lsp --max-file-bytes)")
    except InputError as error:
        raise RequestFailed(str(error)) from None


def _disassemble(data: bytes, path: str) -> str:
    """What `tileir disasm` prints for `data`."""
    from compiler.bytecode import BytecodeError, is_bytecode, read_bytecode
    from compiler.bytecode.disasm import disassembly, looks_like_text

    if not is_bytecode(data) and looks_like_text(data):
        raise RequestFailed(
            f"{path}: this is a text file, not Tile IR bytecode (which starts with 7f 54 69 6c 65 49 52 00)"
        )
    try:
        module = read_bytecode(data)
    except BytecodeError as error:
        raise RequestFailed(f"{path}: {error}") from None  # `at byte N (0xN): ...`
    return disassembly(module)


def _verified_module(server: TileLanguageServer, uri: str) -> tuple[Module, str]:
    """The module of the open document (or of the file at `uri`), which must verify."""
    analysis = server.analysis(uri)
    if analysis is not None:
        name, diagnostics, module = analysis.source.name, analysis.diagnostics, analysis.module
    else:
        from compiler.verify import check_text

        path = _path(uri)
        try:
            text = _read_file(path, server.max_file_bytes).decode("utf-8")
        except UnicodeDecodeError as error:
            raise RequestFailed(f"cannot read '{path}': not UTF-8 text (byte {error.start})") from None
        result, diagnostics = check_text(text, path, server.settings.verify_options())
        name, module = path, result.module
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        raise RequestFailed(_failure(name, "has errors; no bytecode written", errors))
    return module, name


def _failure(name: str, what: str, diagnostics: list) -> str:
    lines = [f"'{name}' {what}:"]
    for d in diagnostics:
        lines.append(d.format() if d.source is not None else f"{name}: {d.severity.label}: {d.message}")
    return "\n".join(lines)


def _kernel(module: Module, asked: object, method: str) -> tuple[str, Operation]:
    """The entry `asked` names (`k`, `@k`, or `m::k` for the `k` of `cuda_tile.module @m`), or
    the document's only one when None, and the name it goes by: `m::k` when another module
    has an entry `k` too."""
    entries = [(name, owner, op) for owner, op in _entries(module) if (name := symbol_name(op)) is not None]
    bare = [name for name, _, _ in entries]

    def called(name: str, owner: str | None) -> str:
        return f"{owner}::{name}" if owner is not None and bare.count(name) > 1 else name

    if asked is None:
        if not entries:
            raise JsonRpcInvalidParams(f"{method}: the document has no kernel (no `entry`)")
        if len(entries) > 1:
            listed = ", ".join(f"@{called(name, owner)}" for name, owner, _ in entries)
            raise JsonRpcInvalidParams(f"{method}: name the kernel (the document's entries: {listed})")
        name, owner, op = entries[0]
        return called(name, owner), op
    wanted = str(asked).lstrip("@")
    owner_wanted, _, name_wanted = wanted.rpartition("::")
    found = [
        (name, owner, op)
        for name, owner, op in entries
        if name == name_wanted and (not owner_wanted or owner_wanted.lstrip("@") == owner)
    ]
    if not found:
        raise JsonRpcInvalidParams(f"{method}: the document has no entry @{wanted}")
    if len(found) > 1:
        listed = ", ".join(f'"{owner}::{name}"' for name, owner, _ in found if owner is not None)
        raise JsonRpcInvalidParams(
            f"{method}: the kernel name @{wanted} is ambiguous: {len(found)} entries have it; "
            f"name it with its module ({listed or 'rename one'})"
        )
    name, owner, op = found[0]
    return called(name, owner), op


def _entries(module: Module) -> Iterator[tuple[str | None, Operation]]:
    """The document's entries, each with the name of the `cuda_tile.module` holding it (None
    at top level, or for a module without a name)."""
    for op in module.ops:
        if op.name == "cuda_tile.module" and op.regions and op.regions[0].entry_block is not None:
            owner = symbol_name(op)
            yield from ((owner, o) for o in op.regions[0].entry_block.ops if o.name == "cuda_tile.entry")
        elif op.name == "cuda_tile.entry":
            yield None, op


# ------------------------------------------------------------------------------ progress


class _progress:
    """`async with _progress(server, params, title) as step:` reports begin, `step(message)`
    as reports, and end through `$/progress`, with the client's `workDoneToken` or a token the
    server creates when the client supports `window.workDoneProgress`; silent otherwise."""

    def __init__(self, server: TileLanguageServer, params: Any, title: str) -> None:
        self.server = server
        self.token = param(params, "workDoneToken")
        self.title = title

    async def __aenter__(self):
        if self.token is None and _supports_progress(self.server):
            token = f"tileir-{next(_progress_tokens)}"
            try:
                await self.server.work_done_progress.create_async(token)
                self.token = token
            except Exception:  # noqa: BLE001 - no progress is better than no answer
                self.token = None
        if self.token is not None:
            self.server.work_done_progress.begin(self.token, lsp.WorkDoneProgressBegin(title=self.title))
        return self.step

    def step(self, message: str) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(self.token, lsp.WorkDoneProgressReport(message=message))

    async def __aexit__(self, kind, error, traceback) -> None:
        if self.token is not None:
            message = "failed" if error is not None else "done"
            self.server.work_done_progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))


def _supports_progress(server: TileLanguageServer) -> bool:
    window = server.client_capabilities.window
    return bool(window is not None and window.work_done_progress)
