"""Tile IR → Triton Python source: the walk over a kernel and the API its op emitters use.

The generated module holds one `@triton.jit` function per kernel (plus module-level jitted
helpers: combiner functions of `reduce`/`scan` regions, bit-manipulation helpers). Every
Tile IR op becomes one statement or a few, named after the Tile IR values it defines, with
the op's `file:line` in a trailing comment, so that a reader (and a Triton error) can be
led back to the IR:

    sum = x + y  # vector_add.tileir:23

Values. A tile value is a Triton tensor held in a local variable (a 0-d tile is a 0-d
tensor). Tokens carry no data in Triton: they are erased, and ordering is kept by program
order plus `tl.debug_barrier()` where a memory op is ordered after another one (threads of
a CTA would otherwise race; see `OpEmit.order_after_tokens`). Views (tensor_view,
partition_view, ...) are not Triton values either: their parts (base pointer, shape and
stride expressions) are kept by the generator in `Codegen.views`, and the loads and stores
through them compute addresses from those parts.

Control flow. Triton has `if`, `for` and `while` on scalars but no `break`, `continue` or
early `return`; Tile IR's structured control flow is therefore written with flags: a
`loop` is `while` over a flag that `break` sets, an exit inside an `if` sets its flag and
the rest of the enclosing block runs under `if <no flag set>:` (see `ops_control.py`).

Scalar parameters. Float parameters are passed as the integer bits of the same width and
bitcast in the prologue; integer parameters are converted to their exact type (Triton's
interpreter types a Python int by its magnitude).

GPU-only fast paths. A few helpers have two bodies under `if INTERPRETED:` (a module-level
constexpr, true when the module is imported under Triton's interpreter; `OpEmit.split_helper`): the GPU compiles the
native instruction (`max.f32`, `ex2.approx.ftz.f32`), whose results equal the CPU interpreter's
(the per-op suite checks them on a GPU), and Triton's interpreter runs the same results spelled
out with `tl.where` and bit operations (it runs `tl.maximum` as NumPy's NaN-propagating maximum
and has no inline PTX, which `ptx.inline_ptx` writes). Lines only the GPU compiles end with
`# GPU only`.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..ir.attributes import location_text
from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.source import shown
from ..ir.types import FloatType, IntegerType, PointerType, TileType, TokenType, Type
from . import tltypes
from .registry import EMITTERS, UNSUPPORTED
from .stripmine import stripmine
from .tltypes import LoweringTypeError

# The comment ending a helper line that only the GPU compiles (module doc: GPU-only fast paths).
GPU_ONLY = "# GPU only"

# Architectures the lowering targets (compute capability → name). Triton's NVIDIA backend
# compiles for sm_80 and newer; sm_100 needs Triton's Blackwell ptxas (it ships one).
# The architectures Triton 3.6's ptxas compiles for (others are asked of ptxas: targets.arch_problem).
KNOWN_ARCHES = (80, 86, 87, 89, 90, 100, 101, 103, 120, 121)
DEFAULT_ARCH = "sm_90"


@dataclass(frozen=True, slots=True)
class Target:
    """A GPU architecture to compile for: `Target.parse("sm_90")`."""

    cc: int

    @property
    def arch(self) -> str:
        return f"sm_{self.cc}"

    def __str__(self) -> str:
        return self.arch

    @classmethod
    def parse(cls, text: str | int | Target | None) -> Target:
        if isinstance(text, Target):
            return text
        if text is None:
            return cls.parse(DEFAULT_ARCH)
        s = str(text).strip().lower()
        m = re.fullmatch(r"(?:sm_?|compute_?)?(\d{2,3})a?", s)
        if m is None:
            known = ", ".join(f"sm_{k}" for k in KNOWN_ARCHES)
            raise LowerError(f"unknown GPU architecture {text!r}; use one of {known}")
        cc = int(m.group(1))
        if cc < 80:
            raise LowerError(f"{text}: the Triton lowering needs sm_80 or newer (Triton supports no older GPU)")
        return cls(cc)


class LowerError(Exception):
    """What the lowering cannot do, as a one-line diagnostic:
    `file:line:col: error: <op>: message [target sm_90]`."""

    def __init__(
        self,
        message: str,
        *,
        op: str | None = None,
        where: str | None = None,
        target: str | None = None,
        detail: str | None = None,
        kept: str | None = None,
    ):
        self.message = message
        self.op = op
        self.where = where
        self.target = target
        self.detail = detail  # Triton's failure in short (pass and assertion), where it is one
        self.kept = kept  # the file of Triton's report that the message names, where it names one
        super().__init__(self.report())

    def report(self) -> str:
        text = f"{self.op}: {self.message}" if self.op else self.message
        if self.target:
            text += f" [target {self.target}]"
        return f"{self.where}: error: {text}" if self.where else f"error: {text}"


@dataclass(slots=True)
class Param:
    """One parameter of the compiled kernel, in order.

    kind: "pointer" / "scalar" (a Tile IR parameter, `index` its position), "buffer" (a
    hidden device buffer: a `global`'s storage or a non-splat constant; `data` holds its
    initial bytes and `symbol` names it) or "scratch" (Triton's trailing global and profile
    scratch pointers, which Triton appends itself: they are not in the source)."""

    name: str
    kind: str
    signature: str
    ir_type: Type | None = None
    index: int | None = None
    symbol: str | None = None
    data: bytes | None = None
    read_only: bool = False
    # A buffer of `data` per tile block (alloca), laid out by linear block id (x fastest):
    # the launcher allocates len(data) * number of blocks bytes.
    per_block: bool = False
    # A module `global`'s storage: kept per loaded module by the launchers, not per launch.
    module_global: bool = False


# The generated module's constexpr: True where Triton is older than 3.9. Helpers that work
# around Triton 3.6's defects test it, so the source is the same for every Triton.
BEFORE_3_9 = "TRITON_BEFORE_3_9"


@dataclass(slots=True)
class KernelSource:
    """The generated Triton module of one kernel."""

    text: str
    name: str  # the jitted function's name
    kernel: str  # the Tile IR kernel's name
    target: Target
    params: list[Param]
    # Ops whose exact path is inline PTX (Triton's interpreter cannot run those).
    inline_asm: list[str] = field(default_factory=list)
    # Compile options the IR asks for (`optimization_hints`, launch metadata).
    options: dict[str, Any] = field(default_factory=dict)
    # Line of the generated text (1-based) → the Tile IR op it came from.
    line_ops: dict[int, Operation] = field(default_factory=dict)
    # The entry's Tile IR location (`file:line:col`), for what concerns the kernel as a whole.
    entry_where: str | None = None
    # Warnings of the lowering for the kernel as a whole (a hint not applied as asked: `launch_plan`).
    notes: list[str] = field(default_factory=list)
    # What else the kernel does that Triton's interpreter cannot run, said as a user reads it
    # ("a bf16 atomic add (atomic_rmw_tko)").
    interpreter_lacks: list[str] = field(default_factory=list)

    @property
    def signature(self) -> dict[str, str]:
        return {p.name: p.signature for p in self.params if p.kind != "scratch"}

    def op_at(self, line: int) -> Operation | None:
        return self.line_ops.get(line)

    def where_at(self, line: int) -> str | None:
        """The Tile IR location (`file:line`) that generated line `line` ends with, in the
        comment `Codegen.comment` writes; None where it has none."""
        lines = self.text.split("\n")
        if not 1 <= line <= len(lines):
            return None
        _, mark, where = lines[line - 1].rpartition("  # ")
        return where if mark else None

    def global_symbols(self) -> list[str]:
        """The symbols of the module globals the kernel uses (hidden buffer parameters)."""
        return [p.symbol for p in self.params if p.module_global and p.symbol is not None]

    def not_interpretable(self) -> list[str]:
        """Ops (mnemonics, in order) whose code Triton's interpreter cannot run: inline PTX
        and libdevice calls (the interpreter has neither); then `interpreter_lacks`."""
        found: list[str] = list(self.inline_asm)
        for n, line in enumerate(self.text.split("\n"), 1):
            code = line.split("#", 1)[0]
            if line.endswith(GPU_ONLY):
                continue
            if "libdevice." in code or "inline_asm_elementwise" in code:
                op = self.line_ops.get(n)
                name = op.mnemonic if op is not None else "a helper"
                if name not in found:
                    found.append(name)
        return found + self.interpreter_lacks


# -- views ------------------------------------------------------------------------------


@dataclass(slots=True)
class ViewInfo:
    """A view value as the generator knows it. `base` is the pointer expression; `shape`
    and `strides` are int64 expressions (or int literals) per tensor dimension; the tiled
    views add their tile shape, steps (tile size or traversal stride), dim_map and padding
    keyword, gather/scatter views their sparse dimension."""

    kind: str  # "tensor", "partition", "strided", "gather_scatter"
    type: Type
    base: str
    shape: list[str]
    strides: list[str]
    element: Type
    tile: tuple[int, ...] = ()
    steps: tuple[int, ...] = ()
    dim_map: tuple[int, ...] = ()
    padding: str | None = None
    sparse_dim: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# -- names ------------------------------------------------------------------------------

_RESERVED = set(keyword.kwlist) | {
    "tl", "triton", "libdevice", "range", "int", "float", "min", "max", "abs", "len", "print", "True", "False",
    "None", "static_range", "self", "object", "type", "id", "sum", "all", "any", "bool",
}  # fmt: skip


def _identifier(hint: str) -> str:
    s = re.sub(r"\W", "_", hint)
    # Names from the IR never start with `_`: module-level helpers do (see `Codegen.helper`).
    if not s or s[0].isdigit() or s[0] == "_":
        s = "v" + s
    if s in _RESERVED or s.startswith("__"):
        s = s.strip("_") + "_"
        if s in _RESERVED or s == "_":
            s = "v" + s
    return s


class Codegen:
    """Writes the Triton module of one kernel of a verified module."""

    def __init__(
        self,
        module: Module,
        entry: Operation,
        target: Target | str | None = None,
        ones: frozenset[int] = frozenset(),
        forced: dict[str, Any] | None = None,
    ) -> None:
        self.module = module
        self.entry = entry
        self.target = Target.parse(target)
        # Integer parameters known to be 1 at launch (unit strides): the GPU launcher
        # specialises on them as Triton's JIT does, so that Triton sees contiguous accesses.
        self.ones = ones
        self.kernel = entry.properties["sym_name"].value  # type: ignore[attr-defined]
        self.names: dict[Value, str] = {}
        self.views: dict[Value, ViewInfo] = {}
        self.used: set[str] = set()
        self.lines: list[str] = []
        self.line_ops: dict[int, Operation] = {}
        self.indent = 1
        self.helpers: dict[str, str] = {}
        self.params: list[Param] = []
        self.buffers: dict[str, Param] = {}
        self.inline_asm: list[str] = []
        self.options: dict[str, Any] = {}
        self.forced = {k: v for k, v in (forced or {}).items() if v is not None}
        # The `for` loops written unrolled twice (`mma_plan`).
        self.unrolled: frozenset[Operation] = frozenset()
        self.notes: list[str] = []  # launch_plan's
        self.interpreter_lacks: list[str] = []  # (KernelSource's)
        self.current: Operation | None = None
        # Values produced by memory ops' tokens (for barriers) and flags of enclosing loops.
        self.memory_tokens: set[Value] = set()
        self.loops: list[Any] = []  # ops_control's loop frames, innermost last
        self.loop_frames: dict[Operation, Any] = {}
        # What a `yield` in a region of the op does: names to assign, or a function of the OpEmit.
        self.yield_targets: dict[Operation, Any] = {}
        self.return_flag: str | None = None
        self._counter = 0

    # -- names ---------------------------------------------------------------------------

    def fresh(self, hint: str = "t") -> str:
        base = _identifier(hint)
        name = base
        while name in self.used:
            self._counter += 1
            name = f"{base}_{self._counter}"
        self.used.add(name)
        return name

    def name(self, v: Value, hint: str | None = None) -> str:
        """The variable holding `v` (made on first use, from the IR name)."""
        got = self.names.get(v)
        if got is None:
            got = self.names[v] = self.fresh(hint or v.name or "v")
        return got

    def expr(self, v: Value) -> str:
        if isinstance(v.type, TokenType):
            return "None"
        if v in self.views:
            raise self.error(f"a view ({v.type}) is used where the lowering expects a tile")
        try:
            return self.names[v]
        except KeyError:
            raise self.error(f"value %{v.name or '?'} is used before the lowering defined it") from None

    # -- output --------------------------------------------------------------------------

    def where(self, op: Operation | None) -> str | None:
        if op is None:
            return None
        source = self.module.source
        if source is not None and op.span is not None:
            line, col = source.line_col(op.span.start)
            return f"{source.name}:{line + 1}:{col + 1}"
        return location_text(op.location)

    def comment(self, op: Operation | None) -> str:
        where = self.where(op)
        if where is None:
            return ""
        parts = where.rsplit(":", 2)
        path = parts[0].replace("\\", "/").rsplit("/", 1)[-1]
        # A file name may hold undecodable bytes, a `loc` string line breaks: neither raw in a comment.
        return f"  # {shown(f'{path}:{parts[1]}' if len(parts) == 3 else where)}"

    def emit(self, text: str, op: Operation | None = None) -> None:
        op = op if op is not None else self.current
        for piece in text.split("\n"):
            self.lines.append("    " * self.indent + piece + self.comment(op))
            if op is not None:
                self.line_ops[len(self.lines)] = op

    def remark(self, text: str) -> None:
        """A comment line of its own for the reader (no Tile IR line: it explains the next one)."""
        self.lines.append("    " * self.indent + "# " + text)

    def error(self, message: str, op: Operation | None = None) -> LowerError:
        op = op if op is not None else self.current
        return LowerError(message, op=op.mnemonic if op else None, where=self.where(op), target=self.target.arch)

    # -- the walk ------------------------------------------------------------------------

    def lower(self) -> KernelSource:
        from .ops_control import needs_return_flag

        plan = launch_plan(self.entry, self.target, self.forced, self.where(self.entry))
        mined = stripmine(self.entry, plan[0].get("num_warps", 4))
        if mined is not self.entry:  # (the plan's unrolled loops are the copy's)
            self.entry = mined
            plan = launch_plan(self.entry, self.target, self.forced, self.where(self.entry))
        options, self.unrolled, self.notes = plan
        self.options.update(options)
        block = self.entry.regions[0].blocks[0]
        fn = self.fresh(self.kernel)
        self._parameters(block)
        if needs_return_flag(self.entry):
            self.return_flag = self.fresh("returned")
            self.emit(f"{self.return_flag} = tl.full((), 0, tl.int1)", self.entry)
        self.emit_block(block)
        if not any(line.strip() for line in self.lines):
            self.emit("pass", self.entry)
        body = self.lines
        self.lines = []
        header = [
            f"# Triton source generated by `tileir compile` from kernel @{self.kernel} for {self.target.arch}.",
            "# Each statement ends with the Tile IR line it comes from.",
            "import triton",
            "import triton.language as tl",
            "from triton.language.extra import libdevice  # noqa: F401",
            "",
        ]
        if any("INTERPRETED" in src for src in [*self.helpers.values(), *body]):
            # Whether this module runs under Triton's interpreter (module doc: GPU-only fast paths).
            header[2:2] = ["import os"]
            header[-1:-1] = ["", "INTERPRETED = tl.constexpr(os.environ.get('TRITON_INTERPRET', '0') == '1')"]
        if any(BEFORE_3_9 in src for src in self.helpers.values()):
            # Whether the code works around defects of Triton 3.6 that 3.9 has not (ops_control).
            header[-1:-1] = [
                f"{BEFORE_3_9} = tl.constexpr(tuple(int(v) for v in triton.__version__.split('.')[:2]) < (3, 9))"
            ]
        for src in self.helpers.values():
            header += ["", *src.rstrip().split("\n"), ""]
        header += [""]
        args = ", ".join(p.name for p in self.params if p.kind != "scratch")
        header += ["@triton.jit", f"def {fn}({args}):"]
        offset = len(header)
        text = "\n".join(header + body) + "\n"
        line_ops = {n + offset: op for n, op in self.line_ops.items()}
        params = self.params + [
            Param("global_scratch", "scratch", "*i8"),
            Param("profile_scratch", "scratch", "*i8"),
        ]
        return KernelSource(
            text,
            fn,
            self.kernel,
            self.target,
            params,
            list(self.inline_asm),
            dict(self.options),
            line_ops,
            self.where(self.entry),
            list(self.notes),
            list(self.interpreter_lacks),
        )

    def _parameters(self, block: Block) -> None:
        prologue: list[tuple[Operation | None, str]] = []
        for i, arg in enumerate(block.arguments):
            name = self.name(arg)
            t = arg.type
            e = tltypes.element_of(t)
            try:
                if isinstance(e, PointerType):
                    self.params.append(Param(name, "pointer", tltypes.scalar_signature(t), t, i))
                    if tltypes.is_nibble_pointer(t):  # the byte pointer as a nibble address
                        prologue.append((None, f"{name} = {name}.to(tl.int64) * 2"))
                    continue
                sig = tltypes.scalar_signature(t)
                self.params.append(Param(name, "scalar", sig, t, i))
                if tltypes.is_float(t):
                    bits = tltypes.dtype(arg.type) if tltypes.is_bits_float(t) else None
                    width = {"i8": "tl.int8", "i16": "tl.int16", "i32": "tl.int32", "i64": "tl.int64"}[sig]
                    if bits is None:
                        prologue.append((None, f"{name} = {name}.to({width}).to({tltypes.dtype(t)}, bitcast=True)"))
                    else:
                        prologue.append((None, f"{name} = {name}.to({width}).to(tl.uint8, bitcast=True)"))
                elif i in self.ones:
                    # Still a parameter (the launch ABI does not change); its value is 1.
                    prologue.append((None, f"{name} = tl.full((), 1, {tltypes.dtype(t)})  # specialised: 1 at launch"))
                else:
                    prologue.append((None, f"{name} = {name}.to({tltypes.dtype(t)})"))
            except LoweringTypeError as exc:
                raise LowerError(str(exc), op="entry", where=self.where(self.entry), target=self.target.arch) from None
        for op, line in prologue:
            self.emit(line, op or self.entry)

    def buffer(
        self,
        symbol: str,
        signature: str,
        data: bytes,
        read_only: bool,
        hint: str = "buf",
        per_block: bool = False,
        module_global: bool = False,
    ) -> str:
        """A hidden device buffer parameter (a `global`, a table of constants, an alloca's
        per-block slabs): its name."""
        p = self.buffers.get(symbol)
        if p is None:
            p = Param(
                self.fresh(hint), "buffer", signature, None, None, symbol, data, read_only, per_block, module_global
            )
            self.buffers[symbol] = p
            self.params.append(p)
        return p.name

    def helper(self, name: str, source: str) -> str:
        """A module-level function (written once, however many ops use it). `source` is
        its whole definition with `{name}` standing for the function's name."""
        # Fixed helper names start with `_`, which names from the IR never do; names made
        # by `fresh` are unique already.
        self.used.add(name)
        if name not in self.helpers:
            self.helpers[name] = source.replace("{name}", name)
        return name

    def emit_block(self, block: Block, start: int = 0) -> None:
        """The ops of `block` from `start` on (the terminator included: it is the region
        owner's emitter that gave it meaning, see ops_control)."""
        ops = block.ops
        i = start
        while i < len(ops):
            op = ops[i]
            exits = self.emit_op(op)
            i += 1
            if exits and i < len(ops):
                # The op may have left the enclosing loop or kernel: the rest runs under a guard.
                guard = self.guard_expr()
                if guard is not None:
                    self.emit(f"if {guard}:", op)
                    self.indent += 1
                    before = len(self.lines)
                    self.emit_block(block, i)
                    if len(self.lines) == before:
                        self.emit("pass", op)
                    self.indent -= 1
                    return

    def guard_expr(self) -> str | None:
        """The condition under which code after an early exit still runs."""
        flags = []
        if self.loops:
            flags += self.loops[-1].flags()
        if self.return_flag is not None and self.return_flag not in flags:
            flags.append(self.return_flag)
        if not flags:
            return None
        return " | ".join(flags) + " == 0" if len(flags) == 1 else f"({' | '.join(flags)}) == 0"

    def emit_op(self, op: Operation) -> bool:
        """Writes one op; True when it may leave the enclosing block early."""
        fn = EMITTERS.get(op.name)
        saved = self.current
        self.current = op
        try:
            if fn is None:
                why = UNSUPPORTED.get(op.name, "the Triton lowering has no emitter for this op")
                raise self.error(why)
            try:
                result = fn(OpEmit(self, op))
            except LoweringTypeError as exc:
                raise self.error(str(exc)) from None
            return bool(result)
        finally:
            self.current = saved


class OpEmit:
    """What an emitter sees of its op and how it writes code."""

    __slots__ = ("cg", "op")

    def __init__(self, cg: Codegen, op: Operation) -> None:
        self.cg = cg
        self.op = op

    # -- the op ------------------------------------------------------------------------

    @property
    def target(self) -> Target:
        return self.cg.target

    @property
    def operands(self) -> list[str]:
        """Expressions of the operands ("None" for tokens, None for views: use `view`)."""
        views = self.cg.views
        return [None if v in views else self.cg.expr(v) for v in self.op.operands]  # type: ignore[misc]

    def operand(self, name: str) -> str | None:
        v = self.op.operand(name)
        return None if v is None else self.cg.expr(v)

    def operands_of(self, name: str) -> list[str]:
        return [self.cg.expr(v) for v in self.op.operand_group(name)]

    @property
    def operand_types(self) -> list[Type]:
        return [v.type for v in self.op.operands]

    @property
    def result_types(self) -> list[Type]:
        return [r.type for r in self.op.results]

    def shape(self, t: Type) -> tuple[int, ...]:
        return tltypes.shape_of(t)

    def dtype(self, t: Type) -> str:
        return tltypes.dtype(t)

    def attr(self, name: str) -> Any:
        return self.op.attr(name)

    def int_attr(self, name: str, default: int | None = None) -> int | None:
        return self.op.int_attr(name, default)

    def keyword(self, name: str, default: str | None = None) -> str | None:
        return self.op.keyword(name, default)

    def flag(self, name: str) -> bool:
        return self.op.flag(name)

    def error(self, message: str) -> LowerError:
        return self.cg.error(message, self.op)

    # -- writing -----------------------------------------------------------------------

    def line(self, text: str) -> None:
        self.cg.emit(text, self.op)

    def tmp(self, hint: str = "t") -> str:
        return self.cg.fresh(hint)

    def result_name(self, i: int = 0) -> str:
        return self.cg.name(self.op.results[i])

    def assign(self, expr: str, i: int = 0) -> str:
        """`result_i = expr`; returns the result's name. Tokens are erased (no statement)."""
        r = self.op.results[i]
        if isinstance(r.type, TokenType):
            self.token(i)
            return "None"
        name = self.cg.name(r)
        self.line(f"{name} = {expr}")
        return name

    def alias(self, expr_name: str, i: int = 0) -> None:
        """Result i is the variable `expr_name` (no statement: a no-op conversion)."""
        self.cg.names[self.op.results[i]] = expr_name

    def token(self, i: int = 0, memory: bool = False) -> None:
        """Result i is a token; `memory`: it stands for this memory op's completion."""
        r = self.op.results[i]
        self.cg.names[r] = "None"
        if memory:
            self.cg.memory_tokens.add(r)

    def tokens_from_memory(self) -> bool:
        """Whether a token operand (through join_tokens) stands for an earlier memory op."""
        seen: set[Value] = set()
        todo = [v for v in self.op.operands if isinstance(v.type, TokenType)]
        while todo:
            v = todo.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in self.cg.memory_tokens:
                return True
            d = v.defining_op
            if d is not None and d.name == "cuda_tile.join_tokens":
                todo.extend(d.operands)
            elif d is None or d.name != "cuda_tile.make_token":
                return True  # a block argument or a loop's result: it may carry a memory op's token
        return False

    def order_after_tokens(self) -> None:
        """Memory ops ordered after others by tokens: a CTA barrier, so that the threads of
        the block see each other's earlier accesses (Triton orders only each thread's own)."""
        if self.tokens_from_memory():
            self.line("tl.debug_barrier()")

    def uses_inline_asm(self) -> None:
        if self.op.mnemonic not in self.cg.inline_asm:
            self.cg.inline_asm.append(self.op.mnemonic)

    def interpreter_lacks(self, what: str) -> None:
        """This op's code does `what`, which Triton's interpreter cannot run."""
        said = f"{what} ({self.op.mnemonic})"
        if said not in self.cg.interpreter_lacks:
            self.cg.interpreter_lacks.append(said)

    def helper(self, name: str, source: str) -> str:
        return self.cg.helper(name, source)

    def split_helper(self, name: str, interpreted: str, gpu: str = "x", note: str = "", params: str = "x") -> str:
        """The name of a helper of `params` computing `gpu` (an expression of them) where
        Triton compiles the module and `interpreted` under its interpreter (module doc:
        GPU-only fast paths); `note` becomes its first line's comment."""
        comment = f"    # {note}\n" if note else ""
        source = (
            f"@triton.jit\ndef {{name}}({params}):\n{comment}    if INTERPRETED:\n        out = {interpreted}\n"
            f"    else:\n        out = {gpu}\n    return out\n"
        )
        return self.helper(name, source)

    # -- views -------------------------------------------------------------------------

    def view(self, v: Value | int) -> ViewInfo:
        if isinstance(v, int):
            v = self.op.operands[v]
        info = self.cg.views.get(v)
        if info is None:
            raise self.error(f"the view %{v.name or '?'} ({v.type}) does not come from a view op the lowering knows")
        return info

    def set_view(self, info: ViewInfo, i: int = 0) -> None:
        self.cg.views[self.op.results[i]] = info

    # -- regions -----------------------------------------------------------------------

    def bind_args(self, block: Block, names: list[str]) -> None:
        for arg, n in zip(block.arguments, names, strict=True):
            if isinstance(arg.type, TokenType):
                self.cg.names[arg] = "None"
            else:
                self.cg.names[arg] = n

    def name_of(self, v: Value) -> str:
        return self.cg.name(v)

    def emit_region(self, region: Region, arg_names: list[str] | None = None) -> None:
        block = region.blocks[0]
        if arg_names is not None:
            self.bind_args(block, arg_names)
        self.cg.indent += 1
        before = len(self.cg.lines)
        self.cg.emit_block(block)
        if len(self.cg.lines) == before:
            self.line("pass")
        self.cg.indent -= 1


PRODUCTS = {"cuda_tile.mmaf", "cuda_tile.mmai", "cuda_tile.mmaf_scaled"}  # the matrix products
MAX_REGISTERS = 255  # a thread's, on every target
SM_REGISTERS = 65536  # an SM's, sm_80 to sm_100
SM_THREADS = 2048  # the most resident threads of an SM, sm_80 to sm_100 (sm_86/89: 1536, fewer still)


def register_cap(threads: int, ctas: int = 1) -> int:
    """The registers a thread may have for `ctas` CTAs of `threads` threads to fit an SM, as
    `__launch_bounds__` computes it (ptxas allocates in steps of 8): Triton's maxnreg."""
    return min(MAX_REGISTERS, SM_REGISTERS // (ctas * threads) // 8 * 8)


def product_words(ops: Iterable[Operation]) -> tuple[int, str]:
    """(the 32-bit words of the results of the matrix products among `ops`, all of them as if
    live together (a bound: most kernels' are), and what holds them, as a message says it:
    "its 128x128 product needs" or "its 4 products' results (the largest 64x64) need"), or
    (0, ""). Spread over a CTA's threads, past MAX_REGISTERS a thread, Triton spills the
    accumulators, and its compile slows by orders of magnitude: for sm_80 at 1 warp, one
    128x128 f32 product 13 s, a fuzz kernel with two over 200 s, one with four 64x64 ones 22 s
    (2 warps 5 s, 4 warps 2 s without spills)."""
    from ..ir.types import memory_bits

    words, largest, count = 0, (0, ""), 0
    for op in ops:
        t = op.results[0].type if op.name in PRODUCTS else None
        if isinstance(t, TileType):
            size = math.prod(t.shape) * max(memory_bits(t.element), 32) // 32
            words, largest, count = words + size, max(largest, (size, "x".join(map(str, t.shape)))), count + 1
    if count <= 1:
        return words, f"its {largest[1]} product needs" if count else ""
    return words, f"its {count} products' results (the largest {largest[1]}) need"


def thread_registers(words: int, warps: int) -> int:
    """The registers a thread needs to hold `words` spread over `warps` warps."""
    return words // (32 * warps)


_STORES = {
    "cuda_tile.store_view_tko", "cuda_tile.store_ptr_tko", "cuda_tile.atomic_rmw_tko", "cuda_tile.atomic_cas_tko",
    "cuda_tile.atomic_red_view_tko",
}  # fmt: skip


def _hint_int(d: Any, key: str) -> int | None:
    for k, v in getattr(d, "entries", ()):
        if k == key and isinstance(getattr(v, "value", None), int):
            return int(v.value)
    return None


LOADS = {"cuda_tile.load_view_tko", "cuda_tile.load_ptr_tko"}
# Shared memory the software pipeline may fill with the loads of a matmul loop (of an H100/H200
# SM's 227 KiB usable, leaving room for the epilogue's staging and layout conversions).
_STAGE_BUDGET = 160 * 1024


def _tile_bytes(v: Value) -> int:
    t = v.type
    if not isinstance(t, TileType) or not isinstance(t.element, (FloatType, IntegerType)):
        return 0
    n = 1
    for d in t.shape:
        n *= d
    return n * max(8, t.element.bitwidth) // 8


# A product tile of at most this many rows and columns is one warpgroup's m64n64 wgmma: the
# loop streams its operands with little reuse (see mma_plan and ops_view's TMA decision;
# measured on 64x64 tiles only, hence the column bound too).
SMALL_PRODUCT = 64
# Ops a loaded tile may pass through on its way to a product operand (no arithmetic).
_OPERAND_PATH = {"cuda_tile.reshape", "cuda_tile.permute", "cuda_tile.broadcast", "cuda_tile.ftof", "cuda_tile.bitcast"}


def small_product(op: Operation) -> bool:
    """Whether `op` (a product) computes a tile of at most SMALL_PRODUCT rows and columns."""
    shape = getattr(op.results[0].type, "shape", ())
    return len(shape) >= 2 and shape[-2] <= SMALL_PRODUCT and shape[-1] <= SMALL_PRODUCT


def product_operand_of(v: Value, depth: int = 4) -> list[Operation]:
    """The products of which the tile `v` becomes an operand (A or B), directly or through a
    few data-movement ops."""
    found = []
    for user, i in v.uses:
        if user.name in PRODUCTS and i < 2:
            found.append(user)
        elif depth and user.name in _OPERAND_PATH:
            for r in user.results:
                found += product_operand_of(r, depth - 1)
    return found


def from_product(v: Value, depth: int = 6) -> bool:
    """Whether the tile `v` is computed from a product's result within a few ops: the product,
    an epilogue's conversions and arithmetic on it, or the result of a loop or `if` that
    yields such a tile (an accumulator carried by a `for`)."""
    op = v.defining_op
    if op is None or not isinstance(v.type, TileType):
        return False
    if op.name in PRODUCTS:
        return True
    if not depth:
        return False
    if op.regions:
        index = v.index  # type: ignore[attr-defined]
        for region in op.regions:
            for block in region.blocks:
                term = block.terminator
                if term is not None and index < len(term.operands) and from_product(term.operands[index], depth - 1):
                    return True
        return False
    return any(from_product(x, depth - 1) for x in op.operands)


# Shared memory a block may use, in KiB, by compute capability (CUDA's opt-in maximum; an
# unknown one is taken as the smallest).
_MAX_SHARED_KIB = {80: 163, 86: 99, 87: 163, 89: 99, 90: 227, 100: 227, 101: 227, 103: 227, 110: 227, 120: 99, 121: 99}
# What a pipeline's stages leave free for the epilogue's staging and layout conversions.
_EPILOGUE_KIB = 64
_UNROLLED_EPILOGUE_KIB = 32  # a small product's epilogue (a 64x64 tile) needs less


def mma_plan(entry: Operation, target: Target, cluster: bool = False) -> tuple[dict[str, Any], frozenset[Operation]]:
    """num_warps and num_stages for a kernel with a matrix multiply, from the shape of its
    loops, and the `for` loops to unroll twice (ops_control) (measured on H200s and H100s
    with Triton 3.6, benchmarks/gpu.py; README "Running on a GPU"):

    - 8 warps (two warpgroups sharing each product): 4096^3 f16 matmul 0.21 ms vs 0.73 at 4;
      but 4 where a loop's product feeds another product (flash attention: the softmax of
      Q K^T between them needs the registers), with Triton's 3 stages: attention 0.415 ms
      (8 warps: 0.46; 4 warps and 4 stages: 0.50; 2 stages: 0.45).
    - otherwise stages: as many copies of one loop iteration's loads as fit _STAGE_BUDGET, 2
      to 4: 64x8192x8192 (64x64x128 tiles, 32 KiB a stage) 0.049 ms at 4 vs 0.058 at 3 (the
      loads in flight are what a one-wave, memory-bound grid needs); 128x256x64 (48 KiB) stays
      at 3 (0.206 ms vs 0.214 at 4).
    - a kernel whose products are all small (at most 64x64: one warpgroup's m64n64 wgmma)
      gets 4 warps and up to 6 stages, and its operands are loaded through pointers, not tensor
      descriptors (ops_view): the 64x8192x8192 matmul, two interleaved rounds on an H200,
      f16 / bf16 in ms: 8 warps, 4 stages, TMA 0.0582 0.0601 / 0.0576 0.0560; the same
      without TMA 0.0545 0.0572 / 0.0501 0.0544; 4 warps, 5 stages, no TMA 0.0556 0.0567 /
      0.0473 0.0539 (tileiras 0.054-0.055 / 0.046-0.051 in the same rounds).
    - such a kernel's product loops (`for` loops written as ranges) are unrolled twice
      (`tl.range(..., loop_unroll_factor=2)`) with 3 stages where three copies of two
      iterations' loads fit the target's shared memory (less _UNROLLED_EPILOGUE_KIB) and
      that is more than the plain pipeline holds (fewer than 6 stages of it fit): on an
      H100, 10 interleaved passes, medians in ms, f16 / bf16: unrolled, 3 stages 0.0657 /
      0.0660; 5 stages, not unrolled 0.0676 / 0.0677; unrolled, 2 stages 0.090 / 0.089;
      tileiras 0.0652 / 0.0655. Not in a `cluster`: Triton 3.6's CTA planning asserts
      ("CTA tiling is already determined") on the unrolled loop, seen on an H100.
    - the stage budgets shrink with the target's shared memory (`_MAX_SHARED_KIB`): sm_80
      gets at most 99 KiB of stages, sm_86/89/120 35 KiB (at least 2 stages), sm_90/100 160.
    """
    if not any(op.name in PRODUCTS for op in entry.walk()):
        return {}, frozenset()
    from .ops_control import counted_for

    shared = _MAX_SHARED_KIB.get(target.cc, min(_MAX_SHARED_KIB.values())) * 1024
    opts: dict[str, Any] = {"num_warps": 8}
    chained = False
    small = all(small_product(op) for op in entry.walk() if op.name in PRODUCTS)  # in loops or not
    stage_bytes = 0
    loops: list[Operation] = []
    for loop in entry.walk():
        if loop.name not in ("cuda_tile.for", "cuda_tile.loop") or not loop.regions:
            continue
        body = list(loop.walk())[1:]
        products = [op for op in body if op.name in PRODUCTS]
        if not products:
            continue
        loops.append(loop)
        stage_bytes = max(stage_bytes, sum(_tile_bytes(op.results[0]) for op in body if op.name in LOADS))
        derived: set[Value] = set()
        for op in body:
            if op.name in PRODUCTS and any(v in derived for v in op.operands[:2]):
                chained = True
            if op.name in PRODUCTS or any(v in derived for v in op.operands):
                derived.update(op.results)
    unrolled: frozenset[Operation] = frozenset()
    if chained:
        opts["num_warps"] = 4
    elif stage_bytes:
        most = 6 if small else 4
        budget = min(_STAGE_BUDGET, shared - _EPILOGUE_KIB * 1024)
        opts["num_stages"] = max(2, min(most, budget // stage_bytes))
        if small:
            opts["num_warps"] = 4
            # Unrolled only where that puts more bytes in flight than the plain pipeline can
            # (its stages are short of 6 for lack of room): small tiles gain nothing, and
            # compile longer (examples/matmul, 1.5 KiB an iteration: benchmarks/compile.py
            # 1.07x of tileiras' time unrolled, 0.70-0.78x plain).
            roomy = 3 * 2 * stage_bytes <= shared - _UNROLLED_EPILOGUE_KIB * 1024
            ranges = all(op.name == "cuda_tile.for" and counted_for(op) for op in loops)
            if opts["num_stages"] < 6 and roomy and ranges and not cluster:
                opts["num_stages"] = 3
                unrolled = frozenset(loops)
    return opts, unrolled


def launch_options(entry: Operation, target: Target, forced: dict[str, Any] | None = None) -> dict[str, Any]:
    """Triton compile options from what the IR says, else a default heuristic (`launch_plan`)."""
    return launch_plan(entry, target, forced)[0]


def launch_plan(
    entry: Operation, target: Target, forced: dict[str, Any] | None = None, where: str | None = None
) -> tuple[dict[str, Any], frozenset[Operation], list[str]]:
    """Triton compile options from what the IR says, else a default heuristic, the loops to
    write unrolled (`mma_plan`'s, for the stages it planned), and notes: warnings for a hint
    not applied as asked, `where` (the entry's location) first.

    From the kernel's `optimization_hints` (the entry for the target's `sm_XX`, else
    `default`): `num_worker_warps_per_cta` → num_warps, but at least a warpgroup (4 warps) on
    sm_90 and newer in a kernel with a matrix product, as NVIDIA's tileiras 13.5 does (its
    cubins of such kernels declare 128 threads for 1 or 2 worker warps; on sm_80, and without
    products, 32 and 64): wgmma and tcgen05 run on warpgroups, and Triton 3.6 took 11 s to
    compile a 128x128x64 f16 product at 1 warp (spilling 8 KB), over 5 minutes for a fuzz
    kernel with two 128x128 products; and on every target at least the warps that hold the
    products' results in MAX_REGISTERS a thread (`product_words`), with a note (a 128x128
    f32 result needs 4); `num_cta_in_cga` → num_ctas (a cluster: sm_90 and
    newer only); `occupancy` (CTAs per SM) → maxnreg, the register cap
    that lets that many CTAs fit (65536 registers per SM), as `__launch_bounds__` does, with
    a note where more CTAs are asked for than an SM's 2048 threads hold (then as many as do).
    Discardable attributes `tt.num_warps` / `tt.num_stages` on the entry (Triton's names)
    are taken as they are. Otherwise the heuristic of `mma_plan` for kernels with a
    matrix multiply, and 4 warps with Triton's default of 3 pipeline stages for the rest
    (memory-bound: 8 or 16 warps measured slower for softmax and layer norm on an H200).
    `forced`: options the caller sets (None values are not), taken last.
    """
    forced = {k: v for k, v in (forced or {}).items() if v is not None}
    hints = entry.attr("optimization_hints")
    chosen = None
    for key, d in getattr(hints, "entries", ()):
        if key == target.arch:
            chosen = d
        elif key == "default" and chosen is None:
            chosen = d
    ctas = _hint_int(chosen, "num_cta_in_cga") if chosen is not None else None
    # Triton 3.6's cluster planning asserts ("Cannot find store-like ops") on a kernel
    # that stores nothing; such a kernel has nothing to share across a cluster anyway.
    if not (ctas and ctas > 1 and target.cc >= 90 and any(op.name in _STORES for op in entry.walk())):
        ctas = None
    planned, unrolled = mma_plan(entry, target, cluster=max(ctas or 1, forced.get("num_ctas", 1)) > 1)
    opts = dict(planned)
    if any(op.name == "cuda_tile.assert" for op in entry.walk()):
        opts["debug"] = True  # Triton compiles device_assert only in debug mode
    notes: list[str] = []
    if chosen is not None:
        warps = hinted = _hint_int(chosen, "num_worker_warps_per_cta")
        if warps and warps & (warps - 1) == 0 and warps <= 32:
            words, needing = product_words(entry.walk())
            if target.cc >= 90 and words:
                warps = max(warps, 4)
            need = thread_registers(words, warps)
            if need > MAX_REGISTERS and "num_warps" not in forced:
                least = warps
                while least < 32 and thread_registers(words, least) > MAX_REGISTERS:
                    least *= 2
                notes.append(
                    f"{where or '<input>'}: warning: the hint num_worker_warps_per_cta = {hinted} for {target.arch} "
                    f"is raised to {least}: at {warps} warp{'s' * (warps > 1)} {needing} {need} registers a thread "
                    f"({MAX_REGISTERS} at most), which Triton spills and compiles very slowly; "
                    f"{least} warps compute the same"
                )
                warps = least
            opts["num_warps"] = warps
        if ctas:
            opts["num_ctas"] = ctas
        occupancy = _hint_int(chosen, "occupancy")
        if occupancy and occupancy > 0:
            threads = opts.get("num_warps", 4) * 32
            fit = max(1, SM_THREADS // threads)
            if occupancy > fit:
                notes.append(
                    f"{where or '<input>'}: warning: the hint occupancy = {occupancy} for {target.arch} is taken as "
                    f"{fit}: {fit} CTA{'s' * (fit > 1)} of {threads} threads fill an SM's {SM_THREADS}"
                )
                occupancy = fit
            # At most SM_THREADS threads, the cap is 32 or more: every instruction fits in it
            # (24 did not: an int8 mma.sync took 28 registers, fuzz seed 241271).
            opts["maxnreg"] = register_cap(threads, occupancy)
    for name, key in (("tt.num_warps", "num_warps"), ("tt.num_stages", "num_stages")):
        a = entry.attributes.get(name)
        if isinstance(getattr(a, "value", None), int):
            opts[key] = int(a.value)  # type: ignore[union-attr]
    opts.update(forced)
    # Unrolled loops are sized for the plan's stages: not where the IR's hints or the caller
    # set others (twice the loads at 5 stages overflow shared memory).
    if opts.get("num_stages") != planned.get("num_stages"):
        unrolled = frozenset()
    return opts, unrolled, notes


def lower_entry(
    module: Module,
    entry: Operation,
    target: Target | str | None = None,
    ones: frozenset[int] = frozenset(),
    forced: dict[str, Any] | None = None,
) -> KernelSource:
    """The Triton module of one kernel (see `Codegen`). Raises LowerError. `ones`: positions
    of integer entry parameters whose value is 1 at launch, compiled as that constant.
    `forced`: the compile options the caller will force (`compile_source`'s overrides; None
    values are not forced): the code is written for them (a loop unrolled for the lowering's
    own number of stages is not, for another)."""
    from . import ops  # noqa: F401  (registers the emitters)

    return Codegen(module, entry, target, ones, forced).lower()
