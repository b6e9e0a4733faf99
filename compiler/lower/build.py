"""Compiling generated Triton source: `triton.compile` to TTIR, TTGIR, LLVM IR, PTX and a
cubin for any sm_80+ target, no GPU needed; and a disk cache of the results.

The generated module is written to a file and imported (Triton's `jit` reads the
function's source through `inspect`). Compile options: Triton's defaults, except

    enable_fp_fusion=False   Tile IR rounds every op; contraction to FMA would change
                             results (ops that allow it are written with `tl.fma`)
    enable_reflect_ftz=False libdevice must not flush denormals unless an op says so
    sanitize_overflow=False  integers wrap in Tile IR; Triton's debug mode would trap
    debug=True               only when the kernel has `assert` (device_assert is compiled
                             in debug mode only)

and `num_warps`/`num_stages`/`num_ctas` from the IR's hints or the caller (see `options`).

Cache (`compiler.lower.cache`: where it is, its bound): `kernels/KEY/`, one
directory per key = sha256(generated source, target, options, Triton version), which
covers (module text, kernel) since the source is a function of them. Triton's own cache
is pointed into ours so that `--no-cache` compiles from scratch.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ir.files import remove_left_behind, write_atomic
from . import cache, guard
from .codegen import (
    MAX_REGISTERS,
    KernelSource,
    LowerError,
    Param,
    Target,
    product_words,
    register_cap,
    thread_registers,
)

ASM_KINDS = ("ttir", "ttgir", "llir", "ptx")
_LOCK = threading.Lock()
_IMPORTED: dict[str, Any] = {}


_VERSION: list[str | None] = []  # triton_version's answer, once found


def triton_version() -> str | None:
    """The installed Triton's version without importing Triton (0.2 s; a cache hit needs
    none): from the `triton-<version>.dist-info` folder beside the package. Not
    `importlib.metadata.version`, whose first call scans every distribution on sys.path
    (18–70 ms here, in a cache-hit process that otherwise takes ~150). Where that folder is
    not found alone (a source checkout, a `pytorch-triton` build), the metadata, and last
    Triton's own `__version__`."""
    if _VERSION:
        return _VERSION[0]
    loaded = sys.modules.get("triton")
    version = getattr(loaded, "__version__", None) if loaded is not None else None
    if version is None:
        spec = importlib.util.find_spec("triton")
        if spec is None or spec.origin is None:
            return None  # not installed (not remembered: a test may install it)
        site = Path(spec.origin).parent.parent
        found = list(site.glob("triton-*.dist-info/METADATA"))
        if len(found) == 1:
            with contextlib.suppress(OSError):
                for line in found[0].read_text(encoding="utf-8", errors="replace").splitlines():
                    if line.startswith("Version:"):
                        version = line[8:].strip()
                        break
                    if not line:  # the headers end at the first blank line
                        break
    if version is None:
        from importlib import metadata

        try:
            version = metadata.version("triton")
        except metadata.PackageNotFoundError:
            try:
                import triton
            except ImportError:
                return None
            version = str(triton.__version__)
    _VERSION.append(version)
    return version


def require_triton() -> str:
    v = triton_version()
    if v is None:
        raise LowerError("compiling needs Triton (pip install 'triton>=3.6'); it is not installed")
    major, minor = (int(x) for x in re.findall(r"\d+", v)[:2])
    if (major, minor) < (3, 6):
        raise LowerError(f"Triton {v} is too old; the lowering needs Triton 3.6 or newer")
    return v


def tool_path(name: str) -> str | None:
    """A CUDA binary tool shipped in Triton's wheel (cuobjdump, nvdisasm, ptxas), else PATH."""
    try:
        import triton

        p = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
        if p.exists() and os.access(p, os.X_OK):
            return str(p)
    except ImportError:
        pass
    return shutil.which(name)


@dataclass(slots=True)
class Compiled:
    """A kernel compiled by Triton: the generated source, every intermediate (`asm["ptx"]`
    ...), the cubin, the parameter list (ours plus Triton's two hidden scratch pointers),
    and the resources the cubin declares."""

    source: KernelSource
    asm: dict[str, str]
    cubin: bytes
    metadata: dict[str, Any]
    registers: int | None = None
    spills: int | None = None  # bytes of local memory per thread (spill stores)
    cached: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    # What Triton's C++ side wrote on stderr while compiling it (warnings; "" mostly, and for
    # a cache hit): the core prints nothing, the faces decide.
    log: str = ""
    # What the compile did otherwise than the IR asked (a hint it could not apply), each a
    # one-line `file:line:col: warning: ...` diagnostic; kept in the cache with the cubin.
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.metadata.get("name", self.source.name))

    @property
    def target(self) -> Target:
        return self.source.target

    @property
    def params(self) -> list[Param]:
        return self.source.params

    @property
    def shared(self) -> int:
        return int(self.metadata.get("shared", 0))

    @property
    def num_warps(self) -> int:
        return int(self.metadata.get("num_warps", 4))

    @property
    def num_ctas(self) -> int:
        return int(self.metadata.get("num_ctas", 1))

    @property
    def global_scratch_size(self) -> int:
        return int(self.metadata.get("global_scratch_size", 0) or 0)

    def sass(self) -> str:
        return disassemble(self.cubin)


# -- importing generated source --------------------------------------------------------


def source_file_name(src: KernelSource) -> str:
    """The generated module's file name: its function's name and the text's digest."""
    return f"{src.name}_{hashlib.sha256(src.text.encode()).hexdigest()[:20]}.py"


def write_source(src: KernelSource, directory: Path) -> Path:
    path = directory / source_file_name(src)
    data = src.text.encode()
    try:
        same = path.read_bytes() == data  # a file cut short or edited is written again
    except OSError:
        same = False
    if same:
        cache.mark_used(path)
    else:
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data, durable=False)
    return path


def import_kernel(src: KernelSource, interpret: bool = False) -> Any:
    """The jitted function of the generated module (an InterpretedFunction with
    `interpret`). Triton reads `TRITON_INTERPRET` when `triton.jit` runs, so the module is
    imported under the right setting; imports are cached per (source, mode)."""
    key = hashlib.sha256(src.text.encode()).hexdigest() + (":interp" if interpret else "")
    with _LOCK:
        root = cache.cache_root()
        # Written (or marked used) on every call: a trim must not take the file that the
        # compiled code's line information names while a process keeps using it.
        path = write_source(src, root / "source")
        fn = _IMPORTED.get(key)
        if fn is not None:
            return fn
        cache.stored(root)  # (one stat while a check is not due)
        mod_name = f"_tileir_gen_{key[:16]}_{'i' if interpret else 'c'}"
        old = os.environ.get("TRITON_INTERPRET")
        os.environ["TRITON_INTERPRET"] = "1" if interpret else "0"
        try:
            module = _execute(mod_name, path, src.text)
        finally:
            if old is None:
                os.environ.pop("TRITON_INTERPRET", None)
            else:
                os.environ["TRITON_INTERPRET"] = old
        if not interpret:
            _give_keys(module, key)
        fn = getattr(module, src.name)
        _IMPORTED[key] = fn
        return fn


# Importing a generated module the usual way, and Triton's cache key of its functions, cost
# ~24 ms of a ~190 ms compile (samples/softmax, in one process), two thirds of it avoidable:
# `triton.jit` reads each function's source through `inspect.getsourcelines`, which runs
# Python's pure-Python tokenizer over it (`inspect.getblock`), and Triton's key walks every
# function's AST again. Both answers follow from the text, which we wrote and parse once here
# (the spans checked against inspect's on Python 3.11, 3.12 and 3.13).


def _execute(name: str, path: Path, text: str) -> Any:
    """The module `name` from the generated `text` written at `path`: parsed once, compiled
    from that tree (no .pyc: a kernel's module is imported once per process), executed while
    `inspect.getsourcelines` answers for its top-level functions from the tree
    (`function_spans`)."""
    import ast
    import inspect

    filename = str(path)
    tree = ast.parse(text, filename)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    # (dont_inherit: this file's `from __future__ import annotations` would turn the generated
    # functions' `tl.constexpr` annotations into strings)
    code = compile(tree, filename, "exec", dont_inherit=True)
    lines = text.splitlines(keepends=True)
    spans = function_spans(tree, lines)
    slow = inspect.getsourcelines

    def getsourcelines(obj: Any) -> tuple[list[str], int]:
        code_of = getattr(obj, "__code__", None)
        if code_of is not None and code_of.co_filename == filename:
            span = spans.get(code_of.co_firstlineno)
            if span is not None:
                return lines[span[0] - 1 : span[1]], span[0]
        return slow(obj)

    sys.modules[name] = module
    inspect.getsourcelines = getsourcelines  # (callers hold _LOCK; restored below)
    try:
        exec(code, module.__dict__)
    finally:
        inspect.getsourcelines = slow
    return module


def function_spans(tree: Any, lines: list[str]) -> dict[int, tuple[int, int]]:
    """For each top-level function of a parsed module: its code's first line (that of its first
    decorator) -> (first line, last line), 1-based, as `inspect.getsourcelines` finds them. A
    function followed by a comment line is left out (inspect counts such a comment into the
    block when it is indented at least as deep as the body, a rule the tree cannot see), and
    so is one whose first line is not a decorator or `def`: inspect answers for those."""
    import ast

    spans: dict[int, tuple[int, int]] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.end_lineno is None:
            continue
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        if not lines[first - 1].lstrip().startswith(("@", "def ")):
            continue
        after = next((line for line in lines[node.end_lineno :] if line.strip()), "")
        if after.lstrip().startswith("#"):
            continue
        spans[first] = (first, node.end_lineno)
    return spans


def _give_keys(module: Any, digest: str) -> None:
    """Set each jitted function's Triton cache key (`JITFunction.hash`, which `cache_key`
    returns once set) from the digest of the module's text, so that Triton does not compute it
    by walking the function's and its callees' ASTs (DependenciesFinder: ~9 ms for a softmax).
    The text is everything Triton's key covers: the functions' sources and line numbers, and
    the constexpr globals, all defined in it; what they call outside it is Triton's own, which
    Triton's version is in its key for. (An unknown attribute in another Triton: no harm.)"""
    from triton.runtime.jit import JITFunction

    for value in vars(module).values():
        if isinstance(value, JITFunction) and getattr(value, "hash", "") is None:
            value.hash = hashlib.sha256(f"{digest}:{value.__qualname__}".encode()).hexdigest()


# -- compiling -------------------------------------------------------------------------


MAX_WARPS = 32  # 1024 threads: the most a CTA has on every sm_80+ GPU
MAX_STAGES = 64  # far past any that fits shared memory; Triton takes an int32 and fails past it


def option_problem(name: str, value: Any) -> str | None:
    """Why `value` cannot be the compile option `name` (None: it can, or it is not one we
    check). The command line and `compile` say the same; Triton's own refusal of these
    would read as a bug in the lowering."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    if name == "num_warps" and not (whole and 1 <= value <= MAX_WARPS and value & (value - 1) == 0):
        return f"must be a power of two from 1 to {MAX_WARPS}"
    if name == "num_stages" and not (whole and 1 <= value <= MAX_STAGES):
        return f"must be from 1 to {MAX_STAGES} (each stage holds one loop iteration's loads in shared memory)"
    return None


def triton_options(src: KernelSource, overrides: dict[str, Any]) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "num_warps": 4,
        "num_stages": 3,
        "num_ctas": 1,
        "enable_fp_fusion": False,
        "enable_reflect_ftz": False,
        "sanitize_overflow": False,
        "debug": False,
    }
    opts.update(src.options)
    opts.update({k: v for k, v in overrides.items() if v is not None})
    return opts


def _key(src: KernelSource, opts: dict[str, Any], version: str, divisible: tuple[int, ...] = ()) -> str:
    h = hashlib.sha256()
    h.update(src.text.encode())
    # The signature too: the same text compiles differently for other parameter types.
    meta = {"target": src.target.arch, "options": opts, "triton": version, "signature": src.signature}
    if divisible:
        meta["divisible"] = list(divisible)
    h.update(json.dumps(meta, sort_keys=True).encode())
    return h.hexdigest()[:32]


def compile_source(
    src: KernelSource,
    *,
    use_cache: bool = True,
    divisible: Sequence[int] = (),
    isolate: bool = False,
    **overrides: Any,
) -> Compiled:
    """Triton's compile of generated source, through the cache.

    `divisible`: positions (in the jitted function's parameters) of the arguments known to
    be multiples of 16 at launch (aligned pointers, extents and strides), specialised as
    Triton's own JIT does (`tt.divisibility`): what lets Triton prove accesses contiguous
    and aligned and issue 128-bit loads. The kernel's parameters stay the same.

    `isolate`: Triton compiles in a child process where this one can fork (compiler/lower/
    guard.py: a crash of Triton's is then a diagnostic, a compile past the time limit is
    killed); `tileir compile` asks for it. Either way Ctrl-C and $TILEIR_COMPILE_TIMEOUT
    stop a compile."""
    version = require_triton()
    for name, value in overrides.items():
        problem = option_problem(name, value) if value is not None else None
        if problem is not None:
            raise LowerError(f"{name}={value!r}: {problem}")
    opts = triton_options(src, overrides)
    divisible = tuple(sorted(set(divisible)))
    key = _key(src, opts, version, divisible)
    root = cache.cache_root()
    entry = root / "kernels" / key
    if use_cache:
        hit = _load_cached(entry, src, opts)
        if hit is not None:
            cache.mark_used(entry)
            return hit
    forced = {k for k, v in overrides.items() if v is not None}
    compiled = _compile_without_failing_hints(src, opts, divisible, isolate, forced)
    compiled = _with_spare_registers(compiled, divisible, isolate)
    if use_cache:
        with contextlib.suppress(OSError):
            _store(entry, compiled)
            cache.stored(root)
    return compiled


def _compile(
    src: KernelSource, opts: dict[str, Any], divisible: tuple[int, ...] = (), isolate: bool = False
) -> Compiled:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    try:  # a name Triton does not know would be ignored without a word (checked on a miss only:
        # a hit's options compiled before)
        from dataclasses import fields

        from triton.backends.nvidia.compiler import CUDAOptions

        known = {f.name for f in fields(CUDAOptions)}
    except (ImportError, TypeError):
        known = set(opts)
    unknown = sorted(set(opts) - known)
    if unknown:
        raise LowerError(
            f"{unknown[0]}: not a compile option of Triton {triton.__version__} (its options include num_warps, "
            "num_stages, num_ctas, maxnreg)"
        )
    limit = guard.time_limit()
    fn = import_kernel(src, interpret=False)
    # Triton's own cache is private to this compile: results are cached by us, keyed by what
    # determines them, and `--no-cache` must really compile. Made and removed here, around the
    # compile: an isolated one's child is dead by the time run_guarded returns or raises
    # (Ctrl-C, the time limit), and the child of a compile interrupted there could not remove it.
    scratch = scratch_dir()

    def triton_compile() -> tuple[dict[str, str], bytes, dict[str, Any]]:
        try:
            with _triton_cache(scratch):
                k = triton.compile(
                    ASTSource(
                        fn=fn,
                        signature=src.signature,
                        constexprs={},
                        attrs={(i,): [["tt.divisibility", 16]] for i in divisible},
                    ),
                    target=GPUTarget("cuda", src.target.cc, 32),
                    options=opts,
                )
            log = _kept_ptxas_log(scratch)
        finally:
            # Also here: a compile on a thread that outlived its limit goes on after the caller
            # removed the directory, and Triton makes it again for its next file.
            shutil.rmtree(scratch, ignore_errors=True)
        return {kind: k.asm[kind] for kind in ASM_KINDS if kind in k.asm}, k.asm["cubin"], _metadata(k.metadata), log

    if isolate:
        prepare(src.target.cc)
    try:
        outcome = guard.run_guarded(triton_compile, limit, f"triton-{src.kernel}-{src.target.arch}", isolate)
    except guard.TimedOut as late:
        with_report, kept = _kept(src, late.report)
        raise LowerError(
            f"Triton did not finish compiling @{src.kernel} within the limit of {limit:g} s "
            f"(${guard.TIME_LIMIT_ENV}: seconds, 0 for none){_crowded_warps(src, opts)}; a compile that never "
            f"ends is a bug of Triton on our output, please report it with the input{with_report}",
            target=src.target.arch,
            detail=f"it did not finish within {limit:g} s",
            kept=kept,
        ) from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if outcome.value is None:
        raise _compile_error(src, outcome)
    asm, cubin, metadata, ptxas_log = outcome.value
    compiled = Compiled(src, asm, cubin, metadata, options=opts, log=outcome.report, notes=list(src.notes))
    compiled.registers, compiled.spills = resource_usage(
        cubin, asm.get("ptx"), bool(opts.get("enable_fp_fusion")), ptxas_log
    )
    return compiled


@dataclass(frozen=True, slots=True)
class _Hint:
    """A compile option a hint of the kernel set, which Triton or ptxas may fail on: the
    kernel computes the same without it, so a failure it may cause drops it."""

    option: str
    in_effect: Callable[[Any], bool]  # the option's value -> whether it asks for anything
    caused: Callable[[LowerError], bool]  # whether a failure may be the option's doing
    default: Any  # its value without the hint (None: the option left out, Triton's default)
    note: Callable[[KernelSource, Any, str], str]  # (source, value, the failure) -> what was not applied


_DROPPABLE = (
    # ptxas refuses an instruction needing more registers than the cap (maxnreg) an `occupancy`
    # hint set ("Insufficient registers"): a 64x256 f32 wgmma under a cap of 32.
    _Hint(
        "maxnreg",
        lambda cap: cap is not None,
        lambda e: "Insufficient registers" in (e.detail or ""),
        None,
        lambda src, cap, why: (
            f"the hint occupancy for {src.target.arch} is not applied: its register cap of {cap} "
            f'a thread is too low for an instruction of @{src.kernel} (ptxas: "Insufficient registers"); compiled '
            "without the cap, which computes the same"
        ),
    ),
    # Triton's clusters (num_ctas > 1) are made for its matrix products: fuzz kernels with
    # small, 3-D or scanned tiles failed in 50 of 60 cases with num_ctas = 2 under Triton 3.6
    # ("Invalid bases passed to LinearLayout" in ConvertTritonToTritonGPU, assertions in
    # TritonGPUPlanCTAPass) and 2 of 20 under 3.9 ("unsupported scan layout"): any failure may
    # be the cluster's. Tile blocks are independent in Tile IR: a kernel computes the same
    # without one.
    _Hint(
        "num_ctas",
        lambda ctas: int(ctas or 1) > 1,
        lambda e: True,
        1,
        lambda src, ctas, why: (
            f"the hint num_cta_in_cga = {ctas} for {src.target.arch} is not applied: Triton "
            f"{triton_version()} could not compile @{src.kernel} in clusters of {ctas} ({why}); compiled without "
            "clusters, which computes the same"
        ),
    ),
)


def _compile_without_failing_hints(
    src: KernelSource, opts: dict[str, Any], divisible: tuple[int, ...], isolate: bool, forced: set[str]
) -> Compiled:
    """`_compile`; where it fails on an option a hint set (`_DROPPABLE`), the kernel without
    that option, with a warning saying so, as often as another one fails. Options the
    caller forces (`forced`: `num_ctas=`, `maxnreg=`) are not dropped: their failure is
    reported."""
    notes: list[str] = []
    while True:
        try:
            compiled = _compile(src, opts, divisible, isolate)
            break
        except LowerError as e:
            hint = next(
                (h for h in _DROPPABLE if h.option not in forced and h.in_effect(opts.get(h.option)) and h.caused(e)),
                None,
            )
            if hint is None:
                raise
            if e.kept is not None:  # (a report that no message names: the warning says why, in short)
                with contextlib.suppress(OSError):
                    os.unlink(e.kept)
            note = hint.note(src, opts[hint.option], e.detail or e.message)
            notes.append(f"{src.entry_where or '<input>'}: warning: {note}")
            opts = {k: v for k, v in opts.items() if k != hint.option}
            if hint.default is not None:
                opts[hint.option] = hint.default
    compiled.notes += notes
    return compiled


def _with_spare_registers(compiled: Compiled, divisible: tuple[int, ...], isolate: bool) -> Compiled:
    """`compiled`, or where it spills with registers to spare, the kernel compiled again with
    the cap of registers its block size allows (maxnreg), if that spills less.

    ptxas reads the block size Triton declares (`.reqntid`) and, where no cap is given, picks
    the registers for occupancy: where a kernel needs more than it can have, it has been seen
    to give up on registers altogether and take 32, the full-occupancy count, spilling the
    rest (fuzz seed 526742, 8 warps: 32 registers and 3,128 bytes of spills a thread; with the
    cap, 255 and 720; NVIDIA's tileiras, 252 and none). The cap cannot be given always: on
    kernels that do not spill it makes ptxas take more registers than it needs (vector_add:
    34 -> 48), and one --large fuzz kernel that did not spill spilled with it. So only a
    compile that already spills with registers left, and only the better one is kept. A cap
    of the caller's or an `occupancy` hint's is left as it is."""
    opts = compiled.options
    cap = register_cap(compiled.num_warps * 32)
    if "maxnreg" in opts or not compiled.spills or compiled.registers is None or compiled.registers >= cap:
        return compiled
    try:
        capped = _compile(compiled.source, {**opts, "maxnreg": cap}, divisible, isolate)
    except LowerError:  # (its time limit, say: the first compile stands)
        return compiled
    if capped.spills is None or capped.spills >= compiled.spills:
        return compiled
    capped.notes = compiled.notes
    return capped


def _crowded_warps(src: KernelSource, opts: dict[str, Any]) -> str:
    """ "; <advice>" where the products' results need more registers a thread than there are at
    the kernel's warps (`product_words`: where the caller forced the warps, which a hint
    would not have been left at); else ""."""
    warps = int(opts.get("num_warps", 4))
    words, needing = product_words(set(src.line_ops.values()))
    need = thread_registers(words, warps)
    if need <= MAX_REGISTERS:
        return ""
    return (
        f"; at {warps} warp{'s' * (warps > 1)} {needing} {need} registers a thread "
        f"({MAX_REGISTERS} at most), which Triton compiles very slowly: more warps (--num-warps) should compile it"
    )


_WARM: set[int] = set()


def prepare(cc: int) -> None:
    """What Triton does once per process at its first compile for target `cc`, done here, so
    that each forked compile (an isolated one's child, a compile server's worker) inherits it
    instead of doing it again and losing it: the import of its code generator (whose class
    body imports Gluon, 35 ms) and `ptxas --version`, which Triton runs twice and caches
    twice (for the tool's version, and for its backend's hash: ~5 ms each).
    The build of benchmarks/compile.py (6 kernels for 3 targets in one `tileir compile -j 1`)
    took 4.6 s with each child doing them, 4.0 s with this, 3.7 s on threads."""
    if cc in _WARM:
        return
    _WARM.add(cc)
    with contextlib.suppress(Exception):  # (an internal of Triton's: where it moved, a child does it)
        import triton.compiler.code_generator  # noqa: F401
        from triton.backends.nvidia.compiler import get_ptxas, get_ptxas_version

        _ = get_ptxas(cc).version  # runs `ptxas --version` once, cached
        get_ptxas_version(cc)  # and again, cached apart (CUDABackend.hash)


# -- Triton's scratch directory ------------------------------------------------------------

SCRATCH_PREFIX = "tileir-scratch-"  # then the making process's id, "-", mkdtemp's 8 characters
_SCRATCH = re.compile(r"(\d+)-[a-z0-9_]{8}\Z")  # (after SCRATCH_PREFIX)
SWEEP_EVERY = 60.0  # seconds between two looks for scratch directories left behind
# Seconds a scratch directory of a process that no longer runs here is kept: a directory's time
# changes only when Triton starts, and a process of another PID namespace sharing the directory
# (a container's) may still be compiling; past any compile's default time limit (300 s).
SCRATCH_STALE = 3600.0
_swept_at = float("-inf")


def scratch_dir() -> str:
    """A new directory in the temporary directory for Triton's cache of one compile
    (`_triton_cache`), which the caller removes. Named after this process, so that one left
    behind (the process was killed outright) is removed by a later compile once that process
    is gone (`_sweep`). A LowerError naming the directory where none can be made."""
    advice = "set TMPDIR to a writable directory"
    try:
        root = tempfile.gettempdir()
    except OSError as exc:  # ("No usable temporary directory found in [...]")
        raise LowerError(f"cannot make a scratch directory for Triton: {exc}; {advice}") from None
    _sweep(root)
    try:
        return tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=root)
    except OSError as exc:
        raise LowerError(
            f"cannot make a scratch directory for Triton in {root}: {exc.strerror or exc}; {advice}"
        ) from None


def remove_scratch_of(pid: int) -> None:
    """Remove the scratch directories of the process `pid`, which has ended: a compile
    server's worker that was killed (a spare in its warm-up compile when the server stops), or
    interrupted in a compile on a thread, could not."""
    prefix = f"{SCRATCH_PREFIX}{pid}-"
    with contextlib.suppress(OSError):
        for entry in os.scandir(tempfile.gettempdir()):
            if entry.name.startswith(prefix) and _SCRATCH.match(entry.name, len(SCRATCH_PREFIX)):
                shutil.rmtree(entry.path, ignore_errors=True)


def _sweep(root: str) -> None:
    """Remove the scratch directories in `root` whose process is gone and that nobody touched
    for SCRATCH_STALE seconds (`files.remove_left_behind`); at most every SWEEP_EVERY seconds in
    a process."""
    global _swept_at
    now = time.monotonic()
    if now - _swept_at >= SWEEP_EVERY:
        _swept_at = now
        remove_left_behind(root, SCRATCH_PREFIX, _SCRATCH, directories=True, stale=SCRATCH_STALE)


_SCRATCH_OF = threading.local()  # .dir: the scratch directory of the compile on this thread


class _TempfileInScratch:
    """`tempfile` as Triton's CUDA backend sees it (its module's global): the `.ptx` and `.log`
    it hands ptxas go into the scratch directory of the compile on the calling thread, which
    is removed whatever happens. In the temporary directory they stayed behind when ptxas
    failed (a register cap too low, a hint then dropped: 22 KB each) or the compile was
    stopped while ptxas ran (Ctrl-C, the time limit; ptxas is a third to half of a softmax's
    compile). Per thread: a language server compiles on one thread while others use tempfile."""

    def __getattr__(self, name: str) -> Any:
        return getattr(tempfile, name)

    def NamedTemporaryFile(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - tempfile's name
        where = getattr(_SCRATCH_OF, "dir", None)
        if where is not None and len(args) < 7:  # `dir`, its seventh parameter, not given by position
            kwargs.setdefault("dir", where)
        f = tempfile.NamedTemporaryFile(*args, **kwargs)
        if where is not None and kwargs.get("suffix") == ".log" and os.path.dirname(f.name) == where:
            # The log of Triton's `ptxas -v`, which Triton removes after the run: a second name
            # keeps it for `resource_usage` (spills or a local array of libdevice's), which
            # otherwise runs ptxas again on the PTX (seconds for a large kernel).
            kept = os.path.join(where, PTXAS_LOG)
            with contextlib.suppress(OSError):
                if os.path.lexists(kept):
                    os.unlink(kept)
                os.link(f.name, kept)
        return f


PTXAS_LOG = "ptxas-v.log"  # in a compile's scratch directory (_TempfileInScratch)


def _kept_ptxas_log(scratch: str) -> str | None:
    try:
        with open(os.path.join(scratch, PTXAS_LOG), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _ptxas_files_in_scratch() -> None:
    try:
        import triton.backends.nvidia.compiler as cuda_backend
    except ImportError:
        return
    if getattr(cuda_backend, "tempfile", None) is tempfile:  # (a Triton without it: left alone)
        cuda_backend.tempfile = _TempfileInScratch()  # type: ignore[assignment]


@functools.cache
def _scratch_cache_manager() -> Any:
    """Triton's file cache manager, but writing straight into the scratch directory of the
    compile on the calling thread: its `put` writes each file into a directory of its own,
    renames it into place and removes that directory again (against other processes sharing
    the cache), ~2 ms of a compile's 8 files that no other process ever reads. Files of
    anywhere else (a directory the user set for dumps, another thread's) it puts as Triton does."""
    from triton.runtime.cache import FileCacheManager

    class ScratchCacheManager(FileCacheManager):
        def put(self, data: Any, filename: str, binary: bool = True) -> str:
            where = getattr(_SCRATCH_OF, "dir", None)
            if where is None or not self.cache_dir or os.path.dirname(self.cache_dir) != where:
                return super().put(data, filename, binary)
            path = self._make_path(filename)
            binary = isinstance(data, bytes)
            with open(path, "wb" if binary else "w") as f:
                f.write(data if binary else str(data))
            return path

    return ScratchCacheManager


@contextlib.contextmanager
def _triton_cache(path: str):
    """Triton's cache pointed at a throwaway directory for one compile, and the files it hands
    ptxas made there (`_TempfileInScratch`). Its key then needs to be unique only within that
    directory, so Triton's own fingerprint (a hash of its 100 MB library and sources, 0.3-0.4
    s the first time in each process) is replaced by its version for the duration: our cache
    key already names the Triton version."""
    _ptxas_files_in_scratch()
    _SCRATCH_OF.dir = path
    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = path
    try:
        import triton
        import triton.runtime.cache as triton_cache

        saved_key = triton_cache.triton_key
        triton_cache.triton_key = lambda: f"{triton.__version__}-tileir"  # type: ignore[assignment]
    except (ImportError, AttributeError):
        triton_cache = None  # type: ignore[assignment]
    ours = False
    try:
        from triton import knobs

        saved = knobs.cache.dir
        knobs.cache.dir = path
        with contextlib.suppress(RuntimeError):  # (TRITON_CACHE_MANAGER unreadable: Triton's compile says so)
            ours = knobs.cache.manager_class is None  # (a manager the user named stays theirs)
        if ours:
            knobs.cache.manager_class = _scratch_cache_manager()
    except (ImportError, AttributeError):
        knobs = None  # type: ignore[assignment]
    try:
        yield
    finally:
        _SCRATCH_OF.dir = None
        if triton_cache is not None:
            triton_cache.triton_key = saved_key
        if knobs is not None:
            knobs.cache.dir = saved
            if ours:
                del knobs.cache.manager_class  # (back to TRITON_CACHE_MANAGER's, none)
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old


def _metadata(md: Any) -> dict[str, Any]:
    d = md._asdict() if hasattr(md, "_asdict") else dict(vars(md))
    out = {}
    for k, v in d.items():
        try:
            json.dumps(v)
            out[k] = v
        except TypeError:
            out[k] = repr(v)
    return out


def _kept(src: KernelSource, report: str) -> tuple[str, str | None]:
    """(" with Triton's report, PATH" for the diagnostic, PATH): the report kept in a file;
    ("", None) where there is none to keep."""
    path = guard.keep(report, f"tileir-triton-{src.kernel}-{src.target.arch}-")
    return (f" with Triton's report, {path}", path) if path else ("", None)


def _compile_error(src: KernelSource, outcome: guard.Outcome) -> LowerError:
    """A Triton failure (or crash) on our output, pointed at the Tile IR op of the failing
    line. What Triton wrote (`outcome.report`) is summed up in the message and kept whole in
    a file that the message names, for the bug report."""
    failure = outcome.failure
    if outcome.stopped:  # (a signal sent to it: nothing to report)
        return LowerError(
            f"Triton's compile of @{src.kernel} was stopped from outside (its process {outcome.died}); compile "
            "it again",
            target=src.target.arch,
            detail=f"its process {outcome.died}",
        )
    text = failure.message if failure is not None else ""
    lineno = failure.lineno if failure is not None else None
    if lineno is None:
        m = re.search(r"(?:line |:)(\d+):\d+", text)
        lineno = int(m.group(1)) if m else None
    summary, report_line = guard.summary(outcome.report, source_file_name(src))
    if lineno is None or src.op_at(lineno) is None:
        lineno = report_line if report_line is not None else lineno
    op = src.op_at(lineno) if lineno is not None else None
    if failure is not None:
        first = next((ln for ln in text.splitlines() if ln.strip() and not ln.startswith(" ")), failure.kind)
        # Triton's PTXASError starts "Internal Triton PTX codegen error": ptxas' own words say more.
        first = next((ln for ln in text.splitlines() if re.match(r"ptxas\S* fatal", ln)), first)
        detail = f"{failure.kind}: {' '.join(first.split())[:300]}"
        verb = "could not compile"
    else:
        detail = f"its process {outcome.died}"
        verb = "crashed compiling"
    detail += f"; {summary}" if summary else ""
    with_report, kept = _kept(src, outcome.report + (f"\n\n{failure.kind}: {text}" if failure else ""))
    message = f"Triton {verb} the lowered kernel ({detail}); this is a bug in the lowering, please report it"
    message += with_report
    where = None
    name = None
    if op is not None:
        name = op.mnemonic
        where = src.where_at(lineno)
    return LowerError(message, op=name, where=where, target=src.target.arch, detail=detail, kept=kept)


# -- cache -----------------------------------------------------------------------------


def _store(entry: Path, c: Compiled) -> None:
    """Write the entry in a temporary directory and rename it into place: a reader sees a
    whole entry or none. `meta.json` lists each file's SHA-256, which `_load_cached` checks,
    so a file cut short or changed later is a miss, not a result."""
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent if entry.parent.exists() else _mk(entry.parent)))
    try:
        files = {f"kernel.{kind}": text.encode() for kind, text in c.asm.items()}
        files["kernel.cubin"] = c.cubin
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        meta = {
            "metadata": c.metadata,
            "registers": c.registers,
            "spills": c.spills,
            "spills_by": SPILLS_BY,
            "options": c.options,
            "notes": c.notes,
            "files": {name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
        }
        (tmp / "meta.json").write_text(json.dumps(meta))
        try:
            os.rename(tmp, entry)
        except OSError:
            # An entry is there: another process stored it first (then it is the same), or a
            # damaged one was found a miss: put this one in its place.
            old = entry.with_name(f".old-{entry.name}-{os.getpid()}")
            try:
                os.rename(entry, old)
                os.rename(tmp, entry)
            except OSError:
                shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(old, ignore_errors=True)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _mk(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def _load_cached(entry: Path, src: KernelSource, opts: dict[str, Any]) -> Compiled | None:
    """The entry's Compiled, or None: missing, or damaged in any way (a file missing, cut
    short or changed since it was stored, meta.json not what `_store` writes, an entry of
    an older layout without checksums): then the kernel is compiled and stored again."""
    try:
        meta = json.loads((entry / "meta.json").read_text())
        files: dict[str, bytes] = {}
        for name, digest in meta["files"].items():
            data = (entry / name).read_bytes()
            if hashlib.sha256(data).hexdigest() != digest:
                return None
            files[name] = data
        asm = {kind: files[f"kernel.{kind}"].decode() for kind in ASM_KINDS if f"kernel.{kind}" in files}
        cubin = files["kernel.cubin"]
        metadata = dict(meta["metadata"])
        registers, spills = meta.get("registers"), meta.get("spills")
        notes = [str(n) for n in meta.get("notes", [])]
        if spills and meta.get("spills_by") != SPILLS_BY:  # (an entry stored before ptxas was asked)
            registers, spills = resource_usage(cubin, asm.get("ptx"), bool(meta["options"].get("enable_fp_fusion")))
            # Once: the entry keeps the new count (meta.json is not among the files it checksums).
            with contextlib.suppress(OSError):
                meta.update(registers=registers, spills=spills, spills_by=SPILLS_BY)
                write_atomic(entry / "meta.json", json.dumps(meta), durable=False)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return Compiled(src, asm, cubin, metadata, registers, spills, True, meta.get("options", opts), notes=notes)


# -- cubin tools -----------------------------------------------------------------------


def _run_tool(tool: str, args: list[str], cubin: bytes) -> str:
    path = tool_path(tool)
    if path is None:
        raise LowerError(f"{tool} was not found (it ships with Triton's wheel: pip install triton)")
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        name = f.name
    try:
        done = subprocess.run([path, *args, name], capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(name)
    if done.returncode != 0:
        raise LowerError(f"{tool} failed: {done.stderr.strip()[:300]}")
    return done.stdout


# How `resource_usage` tells spills from a frame, as cache entries record it: entries without
# it counted libdevice's local arrays as spills, and are counted again when read.
SPILLS_BY = "ptxas -v"


def resource_usage(
    cubin: bytes, ptx: str | None = None, fma: bool = False, ptxas_log: str | None = None
) -> tuple[int | None, int | None]:
    """(registers per thread, spill bytes per thread) of the kernel, as `sass.resources` reads
    them from the cubin: the stack frame and local memory count as spills, unless no
    instruction touches them (`sass_counts`: no LDL/STL: Triton 3.9's LLVM can leave an unused
    byte of local memory behind, which ptxas turns into an 8-byte frame that nothing reads or
    writes), or ptxas says it spills nothing: the frame then holds a local array of
    libdevice's (sinf and cosf keep a 28-byte one for their argument reduction). ptxas says so
    in `ptxas_log`, the `ptxas -v` output of the compile (read first), or else, given the
    kernel's `ptx` (and whether Triton let ptxas `fma`), when run again on it. Disassembled
    (and assembled again) only then: a frame is rare."""
    from .sass import resources, sass_counts  # sass.py reads cubins with this module's tools

    try:
        found = resources(cubin)
    except LowerError:
        return None, None
    if not found:
        return None, None
    frame = found[0].stack + found[0].local  # (Triton's cubins hold one kernel)
    said = _spill_bytes(ptxas_log) if frame and ptxas_log is not None else None
    if said == 0:
        # The compile's own ptxas says no spill: asked first, since the disassembly costs a
        # `cuobjdump` run, 0.37 s on this machine (a 128x128 f32 sin: the compile 0.14 s).
        return found[0].registers, 0
    if frame:
        try:
            if sass_counts(cubin).classes["local"] == 0:
                frame = 0
            else:
                if said is None and ptx is not None:
                    said = _ptxas_spills(ptx, fma)
                if said == 0:
                    frame = 0
        except LowerError:
            pass
    return found[0].registers, frame


def _ptxas_spills(ptx: str, fma: bool) -> int | None:
    """The bytes of spill stores and loads `ptxas -v` reports for the PTX (as Triton runs
    ptxas for it: the same ptxas, target and --fmad), or None where it cannot say."""
    target = re.search(r"^\s*\.target\s+(sm_\w+)", ptx, re.M)
    if target is None:
        return None
    cc = int(re.sub(r"\D", "", target.group(1)))
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        ptxas: str | None = get_ptxas(cc).path
    except Exception:  # noqa: BLE001 - an internal of Triton's; the one it ships, else PATH's
        ptxas = tool_path("ptxas")
    if ptxas is None:
        return None
    with tempfile.TemporaryDirectory(prefix="tileir-ptxas-") as tmp:
        src = os.path.join(tmp, "kernel.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        args = [ptxas, "-v", *([] if fma else ["--fmad=false"]), f"--gpu-name={target.group(1)}", src]
        try:
            done = subprocess.run([*args, "-o", src + ".o"], capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return None
    return _spill_bytes(done.stderr) if done.returncode == 0 else None


def _spill_bytes(log: str) -> int | None:
    """The bytes of spill stores and loads in a `ptxas -v` output, None where it has no count."""
    counts = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    return sum(int(a) + int(b) for a, b in counts) if counts else None


def disassemble(cubin: bytes, function: str | None = None) -> str:
    """The SASS of a cubin (`cuobjdump -sass`), or of its one `function`."""
    return _run_tool("cuobjdump", ["-sass", *(["-fun", function] if function else [])], cubin)
