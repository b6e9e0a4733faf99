"""Lowering Tile IR to Triton: readable Triton Python source, compiled by Triton to PTX and
cubins for sm_80 and newer without a GPU, or run by Triton's interpreter on the CPU.

    from compiler.lower import to_triton, compile
    print(to_triton(module, "vector_add"))                 # the generated source
    k = compile(module, "vector_add", arch="sm_90")        # Triton's compile, cached on disk
    k.asm["ptx"], k.cubin, k.params, k.shared, k.registers, k.spills

See `codegen.py` for the shape of the generated code, `registry.py` for the per-op
emitters, `build.py` for compiling and caching, `targets.py` for the architecture to compile for.
Running the source under Triton's interpreter is a backend of the runtime
(`compiler/runtime/interpret.py`), as launching the cubins on a GPU is.
"""

from __future__ import annotations

import os
from typing import Any

from ..ir.core import Module, Operation
from .build import Compiled, compile_source, disassemble, triton_version
from .codegen import DEFAULT_ARCH, KernelSource, LowerError, Param, Target, lower_entry


def _entry(module: Module, kernel: str | Operation | None) -> Operation:
    if isinstance(kernel, Operation):
        return kernel
    from ..modules import LaunchError, find_kernel

    try:
        return find_kernel(module, kernel)
    except LaunchError as e:
        raise LowerError(e.message) from None


def _module(module: Module | str | os.PathLike | bytes) -> Module:
    """A verified module from what `compiler.runtime.launch` takes (a Module, a path, IR text,
    bytecode); its LaunchError as a LowerError."""
    if isinstance(module, Module):
        return module
    from ..modules import LaunchError, load_module

    try:
        return load_module(module)
    except LaunchError as e:
        raise LowerError(e.message) from None


def lower(
    module: Module | str | os.PathLike | bytes,
    kernel: str | Operation | None = None,
    arch: str | Target | None = None,
    forced: dict[str, Any] | None = None,
) -> KernelSource:
    """The generated Triton module of `kernel` (None: the only one) of a verified module (or
    a path, IR text or bytecode, as `compiler.runtime.launch` takes). `forced`: the compile
    options that will be forced (see `lower_entry`)."""
    module = _module(module)
    return lower_entry(module, _entry(module, kernel), arch, forced=forced)


def to_triton(
    module: Module | str | os.PathLike | bytes, kernel: str | Operation | None = None, arch: str | Target | None = None
) -> str:
    """The Triton Python source of `kernel`."""
    return lower(module, kernel, arch).text


def compile(  # noqa: A001 - the API the issue names
    module: Module | str | os.PathLike | bytes,
    kernel: str | Operation | None = None,
    arch: str | Target | None = None,
    *,
    use_cache: bool = True,
    isolate: bool = False,
    **options: Any,
) -> Compiled:
    """Triton's compile of `kernel` for `arch` (default sm_90): source, `.asm[...]` (ttir,
    ttgir, llir, ptx), `.cubin`, `.params`, `.shared`, `.registers`, `.spills`. `options`
    are Triton's (num_warps, num_stages, num_ctas, maxnreg, ...). `isolate`: Triton runs in a
    forked child where this process can fork (compiler/lower/guard.py), so that a crash of
    Triton's is a LowerError and a compile past $TILEIR_COMPILE_TIMEOUT is killed."""
    return compile_source(lower(module, kernel, arch, options), use_cache=use_cache, isolate=isolate, **options)


__all__ = [
    "DEFAULT_ARCH",
    "Compiled",
    "KernelSource",
    "LowerError",
    "Param",
    "Target",
    "compile",
    "compile_source",
    "disassemble",
    "lower",
    "to_triton",
    "triton_version",
]
