"""Modules as the tools meet them: `load_module` (a verified module from a `Module`, a path to
a text or bytecode file, IR text or bytecode bytes), `find_kernel` and the names of its kernels,
and NVIDIA's own Tile IR tools found on the machine (`tileiras`, `tileirdisasm`), and which GPU
programs may see (`visible_gpu`).

Everything that runs or compiles a kernel starts here (`compiler.runtime` re-exports it all,
`compiler.lower` and the command line's `compile` use it directly): it needs only the parser,
the bytecode reader and the verifier, not the interpreter or NumPy, so that a command which
only compiles does not pay for importing what launches.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .ir.core import Module, Operation, Value

BYTECODE_MAGIC = b"\x7fTileIR\x00"
INSTALL_DISASSEMBLER = "pip install nvidia-cuda-tileiras"


class LaunchError(Exception):
    """A launch that cannot start: bad module, unknown kernel, arguments that do not fit.

    `kind` says what is wrong: "module" (unreadable, or errors: `diagnostics` holds the
    verifier's diagnostics), "kernel" (no such kernel, or several and none named), "no kernel"
    (the module has none), "grid", "count" (wrong number of
    arguments), "argument" (an argument that does not fit its parameter), "backend" (an
    unknown or unavailable backend, or one that could not run the kernel) or "device" (the
    GPU failed: no driver or GPU, a cubin the driver cannot load, out of device memory, a
    kernel fault; see `compiler.runtime.gpu`)."""

    def __init__(self, message: str, *, kind: str = "argument", diagnostics: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.diagnostics = list(diagnostics)


def find_nvidia_tool(name: str, env_var: str) -> str | None:
    """One of NVIDIA's Tile IR tools (`tileirdisasm`, `tileiras`): $ENV_VAR, then PATH, then
    the `nvidia-cuda-tileiras` wheel (site-packages/nvidia/cu*/bin), then $CUDA_HOME/bin and
    $CUDA_PATH/bin."""
    env = os.environ.get(env_var)
    if env and os.access(env, os.X_OK):
        return env
    found = shutil.which(name)
    if found:
        return found
    try:
        import nvidia  # the namespace package of NVIDIA's pip wheels
    except ImportError:
        nvidia = None  # type: ignore[assignment]
    if nvidia is not None:
        for base in getattr(nvidia, "__path__", []):
            for candidate in sorted(Path(base).glob(f"*/bin/{name}"), reverse=True):
                if os.access(candidate, os.X_OK):
                    return str(candidate)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home and os.access(Path(home) / "bin" / name, os.X_OK):
            return str(Path(home) / "bin" / name)
    return None


def find_tileirdisasm() -> str | None:
    """NVIDIA's disassembler (see `find_nvidia_tool`; $TILEIRDISASM overrides)."""
    return find_nvidia_tool("tileirdisasm", "TILEIRDISASM")


def find_tileiras() -> str | None:
    """NVIDIA's Tile IR compiler (see `find_nvidia_tool`; $TILEIRAS overrides)."""
    return find_nvidia_tool("tileiras", "TILEIRAS")


def visible_gpu() -> str | None:
    """The first GPU that CUDA_VISIBLE_DEVICES shows programs, as CUDA reads it (an index or a
    GPU-UUID; "" when the variable is unset: the first GPU there is), or None where it hides
    every GPU (empty, or starting with a negative index)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return ""
    first = visible.split(",")[0].strip()
    return None if first == "" or first.startswith("-") else first


def disassemble(data: bytes, name: str = "<bytecode>", path: str | None = None) -> str:
    """Tile IR bytecode as text, by NVIDIA's `tileirdisasm` (for comparing with NVIDIA's
    reading; `load_module` reads bytecode itself). Raises LaunchError when the tool is missing
    or fails."""
    tool = find_tileirdisasm()
    if tool is None:
        raise LaunchError(
            f"{name} is Tile IR bytecode; reading it needs NVIDIA's tileirdisasm, which was not found "
            f"(install it with `{INSTALL_DISASSEMBLER}`, put it on PATH, or set TILEIRDISASM)",
            kind="module",
        )
    tmp = None
    try:
        if path is None:
            fd, tmp = tempfile.mkstemp(suffix=".tileirbc")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            path = tmp
        try:
            done = subprocess.run([tool, path], capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise LaunchError(f"{name}: cannot run tileirdisasm ({tool}): {e}", kind="module") from None
    finally:
        if tmp is not None:
            os.unlink(tmp)
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit status {done.returncode}"
        raise LaunchError(f"{name}: tileirdisasm could not read it: {why}", kind="module")
    return done.stdout.decode("utf-8", "replace")


def _looks_like_path(source: str) -> bool:
    return "\n" not in source and "{" not in source


def is_cutile_kernel(obj: object) -> bool:
    """Whether `obj` is a cuTile Python `@ct.kernel` function (checked without importing cuTile)."""
    cls = type(obj)
    return cls.__name__ == "kernel" and cls.__module__.startswith("cuda.tile") and hasattr(obj, "_pyfunc")


def load_module(source: Module | str | os.PathLike | bytes, name: str | None = None) -> Module:
    """A verified module from a Module, a path to a `.tileir` text or `.tileirbc` bytecode
    file, IR text, or bytecode bytes (`name`: what diagnostics call IR text or bytes).
    Raises LaunchError (kind "module", with the diagnostics) otherwise."""
    if isinstance(source, Module):
        return source
    if not isinstance(source, (str, bytes, os.PathLike)):
        if is_cutile_kernel(source):
            raise LaunchError(
                "a cuTile @ct.kernel function: run it with launch_cutile(kernel, grid, args)", kind="module"
            )
        raise LaunchError(
            f"expected a module: a Module, a .tileir/.tileirbc path, IR text or bytecode; got {type(source).__name__}",
            kind="module",
        )
    from .ir.diagnostics import has_errors
    from .verify import check_text

    if isinstance(source, bytes):
        if not source.startswith(BYTECODE_MAGIC):
            raise LaunchError("bytes given as a module do not start with the Tile IR bytecode magic", kind="module")
        return _load_bytecode(source, name or "<bytecode>")
    elif isinstance(source, os.PathLike) or _looks_like_path(source):
        from .ir.files import InputError, read_file

        path = os.fspath(source)
        try:
            data = read_file(path)
        except InputError as e:
            raise LaunchError(str(e), kind="module") from None
        if data.startswith(BYTECODE_MAGIC):
            return _load_bytecode(data, path)
        else:
            try:
                text = data.decode("utf-8").removeprefix("\ufeff")
            except UnicodeDecodeError as e:
                raise LaunchError(
                    f"cannot read '{path}': neither UTF-8 text nor Tile IR bytecode "
                    f"(byte {e.start}: {data[e.start]:#04x})",
                    kind="module",
                ) from None
            name = path
    else:
        text, name = source, name or "<input>"
    result, diagnostics = check_text(text, name)
    if has_errors(diagnostics):
        errors = [d for d in diagnostics if d.is_error]
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        raise LaunchError(errors[0].format(with_snippet=True) + more, kind="module", diagnostics=diagnostics)
    return result.module


def _load_bytecode(data: bytes, name: str) -> Module:
    """A verified module from Tile IR bytecode, read by the project's own reader."""
    from .bytecode import BytecodeError, read_bytecode
    from .ir.diagnostics import has_errors
    from .verify import verify

    try:
        module = read_bytecode(data)
    except BytecodeError as e:
        raise LaunchError(f"{name}: cannot read Tile IR bytecode: {e}", kind="module") from None
    diagnostics = verify(module)
    if has_errors(diagnostics):
        errors = [d for d in diagnostics if d.is_error]
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        first = errors[0]
        where = "" if first.origin is None else "{}:{}:{}: ".format(*first.origin)
        raise LaunchError(f"{name}: {where}{first.message}{more}", kind="module", diagnostics=diagnostics)
    return module


def kernel_name(entry: Operation) -> str:
    return entry.properties["sym_name"].value  # type: ignore[attr-defined]


def find_kernel(module: Module, kernel: str | None) -> Operation:
    """The entry named `kernel` (or the only one). A cuTile-mangled name
    (`vadd_Kt1_A1f32...`) is also found by its function name (`vadd`) when that is unambiguous."""
    entries = module.entries()
    names = [kernel_name(e) for e in entries]
    if kernel is None:
        if len(entries) == 1:
            return entries[0]
        if not entries:
            raise LaunchError("the module has no kernel (no `entry` op)", kind="no kernel")
        raise LaunchError(
            f"the module has {len(entries)} kernels ({', '.join(names) or 'none'}); name one", kind="kernel"
        )
    kernel = kernel.removeprefix("@")
    for e, n in zip(entries, names, strict=True):
        if n == kernel:
            return e
    mangled = re.compile(re.escape(kernel) + r"_Kt\d+(_|$)")
    matches = [e for e, n in zip(entries, names, strict=True) if mangled.match(n)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise LaunchError(
            f"{kernel!r} names {len(matches)} kernels: "
            f"{', '.join(kernel_name(e) for e in matches)}; give the full name",
            kind="kernel",
        )
    raise LaunchError(f"no kernel named {kernel!r}; the module has: {', '.join(names) or 'none'}", kind="kernel")


def signature(entry: Operation) -> str:
    """`@name(%a: tile<ptr<f32>>, %n: tile<i32>)`."""
    params = entry.regions[0].blocks[0].arguments
    return f"@{kernel_name(entry)}({', '.join(_param_text(p) for p in params)})"


def _param_text(param: Value) -> str:
    return f"%{param.name}: {param.type}" if param.name else str(param.type)
