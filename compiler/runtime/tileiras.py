"""Compiling a Tile IR module to a cubin with NVIDIA's `tileiras`, through a disk cache.

    from compiler.runtime.tileiras import compile_tileiras
    built = compile_tileiras(module, "sm_90")    # LaunchError(kind="backend") when it cannot
    built.cubin, built.info.kernels["vector_add"].params, built.cached

The module is written as bytecode by the project's own writer (`compiler.bytecode`), in the
oldest of 13.3 and 13.4 that expresses it (`AUTO_WRITE`: 13.4 for its ops, `fpowi` or
`insert`, and the `nearest_away` rounding mode, which cuTile's 13.4 exports hold): tileiras
13.5 reads 13.1 to 13.5, an older one 13.3 at least. Then it is compiled by

    tileiras --gpu-name=sm_XX --opt-level=N --output-file=OUT IN

Cache: `tileiras/` in the compile cache (`compiler.lower.cache`, which bounds its size):

    <key>/kernel.cubin, <key>/meta.json    key = sha256(bytecode, arch, opt level, `tileiras --version`)
    index/<key without the version>.json   {"key": the newest entry made for that input}

A GPU machine usually has no tileiras, so it cannot know the version a cubin would be keyed
on. Cubins are built where tileiras is installed and the cache is carried over; a lookup
without tileiras goes through the index, which names the entry last compiled for (bytecode,
arch, opt level) by whichever tileiras was there. Where tileiras is installed the key includes
its version, so installing another tileiras compiles afresh instead of reusing older output.
Every entry records the sha256 of its cubin; one that does not match, or does not read as a
cubin, is treated as missing (and compiled again where tileiras is installed).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..ir.core import Module
from ..ir.files import write_atomic
from ..lower import cache
from ..lower.cubin import Cubin, CubinError, read_cubin
from ..modules import LaunchError

INSTALL_TILEIRAS = "pip install nvidia-cuda-tileiras"
OPT_LEVELS = (0, 1, 2, 3)
MIN_SM = 80  # tileiras 13.5 compiles for sm_80 and newer
_ARCH_RE = re.compile(r"sm_(\d+)")
_TIMEOUT_S = 600
_NO_REASON = "failed to compile Tile IR program"  # all tileiras says of some failures


@dataclass(slots=True)
class TileirasCubin:
    """A cubin compiled by tileiras: the bytes, what `read_cubin` finds in them, the target
    (`sm_90`), the tileiras release that built it and whether it came from the cache."""

    cubin: bytes
    info: Cubin
    arch: str
    tool_version: str
    cached: bool

    def sass(self, kernel: str | None = None) -> str:
        """The cubin's SASS (`cuobjdump -sass`, Triton's), or `kernel`'s alone where the cubin
        holds a kernel of that name (tileiras makes one cubin of the whole module)."""
        from ..lower.build import disassemble

        return disassemble(self.cubin, kernel if kernel in self.info.kernels else None)


def _error(message: str) -> Exception:
    return LaunchError(message, kind="backend")


class TileirasMissing(LaunchError):
    """tileiras is not installed and no cubin of the module is cached (nor a refusal): what
    to install (the command line's usage error; a cached refusal is tileiras' answer)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="backend")


class _NoReason(LaunchError):
    """tileiras failed without saying why: "failed to compile Tile IR program" and nothing
    more, or a crash. On a module that verifies (every module here does) that is likely a
    defect of tileiras' (tests/bytecode/test_fuzz_kernels.py keeps the kinds seen in 13.5:
    small scans next to a reshape, f4E2M1FN stores into rows an odd number of elements apart
    on sm_100)."""

    HINT = (
        "the module verifies and tileiras names no fault in it: likely a defect of tileiras'; "
        "the triton backend may compile it"
    )


# What a refusal "Incompatibility with architecture 'sm_80': ..." (f8 before sm_89, f4E2M1FN and
# f8E8M0FNU before sm_100, a bf16 atomic add before sm_90) leaves the user.
_LACKS = "the triton backend may compile it: it takes exact slower paths where a target lacks a type or an instruction"


def _find_tool() -> str | None:
    from . import find_tileiras

    return find_tileiras()


def cache_root() -> Path:
    return cache.cache_dir() / "tileiras"


def _sm(arch: str) -> int:
    m = _ARCH_RE.fullmatch(arch) if isinstance(arch, str) else None
    if m is None or int(m.group(1)) < MIN_SM:
        raise _error(f"tileiras cannot compile for {arch!r}: give an architecture like 'sm_90' (sm_{MIN_SM} or newer)")
    return int(m.group(1))


def tool_version(tool: str) -> str:
    """The full text of `tileiras --version` (it names the release and the build)."""
    st = os.stat(tool)
    return _version(tool, st.st_mtime_ns, st.st_size)


@functools.cache
def _version(tool: str, _mtime: int, _size: int) -> str:
    # Cached per process by the file's identity: a second compile then runs nothing on a hit.
    try:
        done = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise _error(f"cannot run tileiras ({tool}): {e}") from None
    text = (done.stdout + done.stderr).strip()
    if done.returncode != 0 or not text:
        raise _error(f"tileiras ({tool}) --version failed with exit status {done.returncode}")
    return text


def _release(version: str) -> str:
    """The line of `--version` that names the release: 'Cuda compilation tools, release 13.5, V13.5.37'."""
    lines = [line.strip() for line in version.splitlines() if line.strip()]
    return next((line for line in lines if "release" in line), lines[0] if lines else "unknown")


def _input_key(bytecode: bytes, arch: str, opt_level: int) -> str:
    h = hashlib.sha256(bytecode)
    h.update(json.dumps({"arch": arch, "opt": opt_level}, sort_keys=True).encode())
    return h.hexdigest()[:32]


def _full_key(bytecode: bytes, arch: str, opt_level: int, version: str) -> str:
    h = hashlib.sha256(bytecode)
    h.update(json.dumps({"arch": arch, "opt": opt_level, "tileiras": version}, sort_keys=True).encode())
    return h.hexdigest()[:32]


def write_module(module: Module) -> bytes:
    """The module as bytecode for tileiras."""
    from ..bytecode import BytecodeWriteError, oldest_version, write_bytecode

    try:
        return write_bytecode(module, oldest_version(module))
    except BytecodeWriteError as e:
        first = e.diagnostics[0].format().splitlines()[0] if e.diagnostics else str(e)
        raise _error(f"cannot write the module as bytecode for tileiras: {first}") from None


def compile_tileiras(module: Module, arch: str, *, use_cache: bool = True, opt_level: int = 3) -> TileirasCubin:
    """tileiras' cubin of a verified module for `arch` ("sm_90"), from the cache when an entry
    is there (see the module's docstring). Raises LaunchError(kind="backend") when tileiras is
    missing, refuses the module or the architecture, or makes something that is not a cubin."""
    return compile_bytecode(
        write_module(module), arch, use_cache=use_cache, opt_level=opt_level, cause=lambda: named_cause(module)
    )


def compile_bytecode(
    bytecode: bytes,
    arch: str,
    *,
    use_cache: bool = True,
    opt_level: int = 3,
    cause: Callable[[], str | None] = lambda: None,
) -> TileirasCubin:
    """`compile_tileiras` of a module already written (`write_module`): what a thread that must
    not read the module (the language server's, while edits change it) can run. `cause()`
    names what tileiras is known to refuse silently, if anything (`named_cause`)."""
    _sm(arch)
    if opt_level not in OPT_LEVELS:
        raise _error(f"tileiras optimization level must be one of {OPT_LEVELS}, not {opt_level!r}")
    root = cache_root()
    input_key = _input_key(bytecode, arch, opt_level)
    tool = _find_tool()
    if tool is None:
        if use_cache:
            hit = _lookup_index(root, input_key, bytecode, arch, opt_level)
            if hit is not None:
                return hit
            refused = _pointer(root, input_key, "refused")  # why, where the cache was filled
            if refused is not None:
                raise _error(f"tileiras refused this module where the cache was filled: {refused}")
        raise TileirasMissing(
            f"compiling for {arch} with the tileiras backend needs NVIDIA's tileiras, which was not found "
            f"and no cubin for this module is cached (install it with `{INSTALL_TILEIRAS}`, put it on PATH, "
            "or set TILEIRAS)"
        )
    version = tool_version(tool)
    key = _full_key(bytecode, arch, opt_level, version)
    if use_cache:
        hit = _load(root / key, bytecode, arch, opt_level)
        if hit is not None:
            with contextlib.suppress(OSError):
                _write_index(root, input_key, key)  # a copied cache may lack it
            return hit
    try:
        cubin = _run(tool, bytecode, arch, opt_level)
    except Exception as e:
        # tileiras itself says only "failed to compile Tile IR program", or nothing
        why = cause() or (_NoReason.HINT if isinstance(e, _NoReason) else None)
        failure = e if why is None else _error(f"{e} ({why})")
        if use_cache:
            # Recorded, so that a machine without tileiras that gets this cache says why
            # there is no cubin rather than "not cached".
            with contextlib.suppress(OSError):
                _write_refusal(root, input_key, f"{failure} (tileiras {_release(version)})")
        if why is None:
            raise
        raise failure from None
    try:
        info = read_cubin(cubin)
    except CubinError as e:
        raise _error(f"tileiras made an unreadable cubin for {arch}: {e}") from None
    if use_cache:
        with contextlib.suppress(OSError):  # a read-only cache costs speed, not the compile
            _store(root, key, input_key, cubin, bytecode, arch, opt_level, version)
    return TileirasCubin(cubin, info, arch, _release(version), False)


def named_cause(module: Module) -> str | None:
    """What in `module` tileiras is known to refuse without saying why: a kernel or global
    whose name is not a PTX identifier (`tileir check` warns of it, `ptx-name`)."""
    from ..ir.symbols import symbol_name
    from ..verify.contract import misnamed

    for op in module.walk():
        what = misnamed(op)
        if what is not None:
            return f"the {what} name '{symbol_name(op)}' is not a PTX identifier, which tileiras requires"
    return None


def _run(tool: str, bytecode: bytes, arch: str, opt_level: int) -> bytes:
    with tempfile.TemporaryDirectory(prefix="tileir-tileiras-") as tmp:
        src = Path(tmp) / "module.tileirbc"
        out = Path(tmp) / "module.cubin"
        src.write_bytes(bytecode)
        cmd = [tool, f"--gpu-name={arch}", f"--opt-level={opt_level}", f"--output-file={out}", str(src)]
        # Its TMPDIR is this directory: tileiras writes a `tileir-XXXXXX.o` there, which it leaves
        # behind when it is killed (the time limit, Ctrl-C) or crashes.
        env = {**os.environ, "TMPDIR": tmp}
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired:
            raise _error(f"tileiras did not finish compiling for {arch} within {_TIMEOUT_S} s") from None
        except OSError as e:
            raise _error(f"cannot run tileiras ({tool}): {e}") from None
        messages = (done.stderr + "\n" + done.stdout).strip()
        if done.returncode != 0 or not out.is_file():
            if "--gpu-name" in messages and "Cannot find option" in messages:
                known = _known_archs(tool)
                hint = f" (it knows {', '.join(known)})" if known else ""
                raise _error(f"this tileiras cannot compile for {arch}{hint}")
            reason = _first_error(messages, done.returncode)
            if "Incompatibility with architecture" in reason:  # (a type or an op the target lacks)
                reason += f" ({_LACKS})"
            silent = done.returncode < 0 or reason.endswith(_NO_REASON)
            if silent and done.returncode >= 0:
                # What its back end wrote before giving up, e.g. LLVM's verifier on the IR it
                # made: "Load operand must be a pointer." and the instruction (f4E2M1FN rows an
                # odd number of elements apart on sm_100, tests/bytecode/test_fuzz_kernels.py).
                before = [ln.strip() for ln in messages.splitlines() if ln.strip() and "error" not in ln.lower()]
                if before:
                    reason += f", after writing: {' | '.join(before)[:300]}"
            failure = _NoReason if silent else LaunchError
            raise failure(f"tileiras could not compile the module for {arch}: {reason}", kind="backend")
        return out.read_bytes()


def _first_error(messages: str, returncode: int) -> str:
    lines = [line.strip() for line in messages.splitlines() if line.strip()]
    if returncode < 0:  # tileiras 13.5 aborts on some valid modules, silently
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        said = f": {lines[0][:300]}" if lines else " without a message"
        return f"tileiras crashed ({name}){said}"
    line = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else f"exit status {returncode}")
    # tileiras names the place by the op's whole debug-info attribute: `file:line:col` reads
    # as compilers write it (a cuTile kernel's line; the attribute runs to hundreds of chars).
    line = re.sub(
        r'^#cuda_tile\.di_loc<loc\("([^"]*)":(\d+):(\d+)\) in #cuda_tile\.di_\w+<.*?>>:\s*', r"\1:\2:\3: ", line
    )
    return line[:400]


def _known_archs(tool: str) -> list[str]:
    try:
        done = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return re.findall(r"^\s*=(sm_\d+)\s", done.stdout, flags=re.M)


# -- cache -----------------------------------------------------------------------------------


def _load(entry: Path, bytecode: bytes, arch: str, opt_level: int) -> TileirasCubin | None:
    """The entry's cubin when it is whole and was made for this input, else None."""
    try:
        meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
        cubin = (entry / "kernel.cubin").read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict):
        return None
    wanted = {"arch": arch, "opt_level": opt_level, "bytecode_sha256": hashlib.sha256(bytecode).hexdigest()}
    if any(meta.get(k) != v for k, v in wanted.items()):
        return None
    if meta.get("cubin_sha256") != hashlib.sha256(cubin).hexdigest():
        return None
    try:
        info = read_cubin(cubin)
    except CubinError:
        return None
    cache.mark_used(entry)
    return TileirasCubin(cubin, info, arch, _release(str(meta.get("tool_version", ""))), True)


def _index_file(root: Path, input_key: str) -> Path:
    """Where the cache says what became of an input whatever the tileiras version: the key of
    its entry (`{"key": ...}`), or why tileiras refused it (`{"refused": ...}`)."""
    return root / "index" / f"{input_key}.json"


def _pointer(root: Path, input_key: str, field: str) -> str | None:
    """The string `field` of the input's index file, if there is one."""
    try:
        pointer = json.loads(_index_file(root, input_key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = pointer.get(field) if isinstance(pointer, dict) else None
    return value if isinstance(value, str) else None


def _lookup_index(root: Path, input_key: str, bytecode: bytes, arch: str, opt_level: int) -> TileirasCubin | None:
    key = _pointer(root, input_key, "key")
    if key is None or not re.fullmatch(r"[0-9a-f]{32}", key):
        return None
    hit = _load(root / key, bytecode, arch, opt_level)
    if hit is not None:
        cache.mark_used(_index_file(root, input_key))  # kept as long as its entry
    return hit


def _write_refusal(root: Path, input_key: str, message: str) -> None:
    path = _index_file(root, input_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"refused": message}), durable=False)


def _write_index(root: Path, input_key: str, key: str) -> None:
    path = _index_file(root, input_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"key": key}).encode()
    with contextlib.suppress(OSError):
        if path.read_bytes() == data:
            cache.mark_used(path)  # kept as long as its entry
            return
    write_atomic(path, data, durable=False)


def _store(
    root: Path, key: str, input_key: str, cubin: bytes, bytecode: bytes, arch: str, opt_level: int, version: str
) -> None:
    entry = root / key
    entry.mkdir(parents=True, exist_ok=True)
    meta = {
        "arch": arch,
        "opt_level": opt_level,
        "tool_version": version,
        "bytecode_sha256": hashlib.sha256(bytecode).hexdigest(),
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
    }
    # The cubin first: meta.json names its hash, so a reader never takes a half-made entry.
    write_atomic(entry / "kernel.cubin", cubin, durable=False)
    write_atomic(entry / "meta.json", json.dumps(meta, indent=1), durable=False)
    _write_index(root, input_key, key)
    cache.stored(root.parent)
