"""Random Tile IR kernels for differential testing of the lowering.

`kernel(seed)` builds a verified kernel for a 1-D or 2-D grid of tile blocks; each block loads
its tile of two or three inputs, runs a random chain of ops on them (integer and float
arithmetic, comparisons and selects, conversions, shape ops, matrix products, reductions,
scans, gathers, scatters, atomics, alloca round trips, constant globals, bitcasts, pack and
unpack, grid and shape queries, asserts, nested loops and branches) and stores a few of the results; loads and
stores are weak, relaxed or release;
`arguments(case)` makes its inputs, edge values included. The per-op suite runs each op alone;
these kernels run them together: a value made by one op's lowering feeds another's (a permuted
tile into a scan, a reduced one broadcast back and compared, a loop-carried one converted),
where the Triton code of one op can break what the next expects.

Only ops whose result the spec fixes are drawn (exactly rounded float ops; integer reductions,
which are associative; float reductions only by max/min), so the interpreters must agree
bitwise (NaN payloads aside). The one exception, drawn only when weighted (`--weight math=6`):
math functions, whose results are only stored (or yielded by an `if`) and compared within
test_math's ulp bounds.

f4E2M1FN memory is reached through views only, packed along their one static unit stride,
which a gather/scatter view's sparse dimension is not (NVIDIA's 13.5 rules, the verifier's).

    python -m tests.lower.fuzz --seeds 0:500 [--compile sm_90] [--keep DIR]

runs a campaign: each seed on the CPU interpreter and under Triton's interpreter, a line per
failure with the seed, the kernel written to DIR. `--bytecode` sends the kernels through our
bytecode writer to NVIDIA's tileirdisasm instead, `--tileiras sm_80,sm_90,sm_100` through it to
NVIDIA's tileiras (which must compile each, or refuse it for a type the target lacks).
`--weight mma=20` draws a kind of op more often (or never, with 0): a campaign aimed at it.
13.4's ops (`insert`, `fpowi`, and `ftof_mode`: ftof in a mode other than nearest_even that
tileiras takes, nearest_away included) are drawn only so (`--weight fpowi=3`); their kernels go
to NVIDIA's tools as bytecode 13.4.
`--asm` also draws what Triton's interpreter cannot run (the inline PTX and libdevice paths:
f64 remf and directed roundings, fused f64 fma, tan/sinh/cosh/tanh/pow/atan2, f16/bf16 atomic adds,
prints) and acquire loads and ordered narrow stores at every scope (inline PTX too, which the
interpreter runs as volatile loads and plain stores), for campaigns that only compile
(`--compile ARCH`, `--bytecode`, `--tileiras`): the seeds then name other kernels.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from compiler.ir.types import SCALAR_TYPES, memory_bits
from compiler.verify.common import bit_width
from tests.corpus import SIGNALING_NAN

INTS = ("i8", "i16", "i32", "i64")
FLOATS = ("f16", "bf16", "f32", "f64")
F8 = ("f8E4M3FN", "f8E5M2")  # only converted, moved and selected (no arithmetic on them)
F4 = ("f4E2M1FN",)  # the same, two to a byte in memory
# i4 only converted (trunci/exti), moved and selected; it has no pointers, so never stored


def allowed(shape: tuple[int, ...], elem: str) -> bool:
    """f4E2M1FN tiles hold an even number of elements (they are bytes in memory)."""
    return elem not in F4 or math.prod(shape) % 2 == 0


WIDTH = {"i1": 1, "i4": 4, "i8": 8, "i16": 16, "i32": 32, "i64": 64}
# Element types of one width, between which bitcast and ptr_to_ptr go.
_WIDTHS = (("i8", "f8E4M3FN", "f8E5M2"), ("i16", "f16", "bf16"), ("i32", "f32"), ("i64", "f64"))
SAME_WIDTH = {e: group for group in _WIDTHS for e in group}
# Element types `pack` and `unpack` take (not 8-bit ones), by their width as the verifier
# counts it; those packed from.
_BITS = {
    e: bit_width(SCALAR_TYPES[e]) for e in ("i1", "i4", "f4E2M1FN", "i16", "f16", "bf16", "i32", "f32", "i64", "f64")
}
_PACKABLE = ("i1", "i4", "i16", "i32", "i64")
MAX_ELEMENTS = 2048
MAX_DIM = 128


@dataclass(frozen=True)
class Value:
    name: str
    shape: tuple[int, ...]
    elem: str

    @property
    def type(self) -> str:
        return f"tile<{'x'.join(map(str, self.shape))}x{self.elem}>" if self.shape else f"tile<{self.elem}>"


def tile(shape: tuple[int, ...], elem: str) -> str:
    return Value("", shape, elem).type


@dataclass
class Case:
    seed: int
    text: str
    inputs: list[Operand]  # in parameter order, then the outputs
    outputs: list[Operand]
    grid: tuple[int, int]  # tile blocks along x (tile dim 0) and y (tile dim 1)
    ops: list[str] = field(default_factory=list)  # the op names drawn, for a campaign's tally
    inexact: set[str] = field(default_factory=set)  # outputs holding `math` results (compared within ulp)


class Gen:
    def __init__(self, seed: int, grid: tuple[int, int] = (1, 1)) -> None:
        self.rng = random.Random(seed)
        self.grid = grid
        self.blocks = grid[0] * grid[1]
        self.buffers: list[Operand] = []  # pointer parameters of gathers and scatters
        self.globals: list[str] = []  # module-level `global` lines
        self.views: list[tuple[str, str, str, int]] = []  # the inputs': name, its types, rank
        self.lines: list[str] = []
        self.pool: list[Value] = []
        self.used: set[str] = set()
        self.ops: list[str] = []
        self.inexact: set[str] = set()  # values of `math` ops: stored or yielded, never computed on
        self.n = 0
        self.depth = 0  # of nested regions
        self.weights = dict(self.OPS)  # how often each kind of op is drawn (kernel(weights=...))
        # kernel(asm=True): also draw what Triton's interpreter cannot run (inline PTX,
        # libdevice, prints: f64 remf and directed roundings, fused f64 fma, the libdevice math
        # functions, f16/bf16 atomic adds, prints) and the other inline PTX (acquire loads,
        # ordered narrow stores), for campaigns that compile
        self.asm = False

    # -- helpers ---------------------------------------------------------------------------
    def fresh(self, shape: tuple[int, ...], elem: str, prefix: str = "v") -> Value:
        self.n += 1
        return Value(f"%{prefix}{self.n}", shape, elem)

    def emit(self, line: str, *results: Value, op: str = "", keep: bool = True) -> None:
        self.lines.append(line)
        for name in re.findall(r"%[A-Za-z_0-9]+", line.split("=", 1)[-1]):
            self.used.add(name)
        if keep:
            self.pool.extend(results)
        if op:
            self.ops.append(op)

    def pick(self, pred=lambda v: True) -> Value | None:
        choices = [v for v in self.pool if v.name not in self.inexact and pred(v)]
        if not choices:
            return None
        # Recent values more often: chains of ops, not a flat fan-out of the inputs.
        weights = [1 + i for i in range(len(choices))]
        return self.rng.choices(choices, weights)[0]

    def literal(self, elem: str, value: Any = None) -> str:
        """`value` (default: a random edge value of `elem`) as an IR literal."""
        r = self.rng
        if value is None:
            if elem == "i1":
                value = r.choice([0, 1])
            elif elem in WIDTH:
                w = WIDTH[elem]
                value = r.choice(
                    [0, 1, -1, 3, 7, -(2 ** (w - 1)), 2 ** (w - 1) - 1, r.randrange(-(2 ** (w - 1)), 2 ** (w - 1))]
                )
            else:
                value = r.choice([0.0, -0.0, 1.0, -1.5, 0.5, 3.0] + ([] if elem in F8 + F4 else [1e3, -7.125]))
        lit = repr(float(value)) if elem in FLOATS + F8 + F4 else str(int(value))
        return "-0.000000e+00" if lit == "-0.0" else lit

    def const(self, shape: tuple[int, ...], elem: str, value: Any = None) -> Value:
        v = self.fresh(shape, elem, "c")
        self.emit(f"{v.name} = constant <{elem}: {self.literal(elem, value)}> : {v.type}", keep=False)
        return v

    def partner(self, v: Value) -> Value:
        """Another value of v's type: from the pool, else a constant (or a broadcast scalar)."""
        same = [w for w in self.pool if w.shape == v.shape and w.elem == v.elem and w.name != v.name]
        same = [w for w in same if w.name not in self.inexact]
        if same and self.rng.random() < 0.7:
            return self.rng.choice(same)
        if v.shape and self.rng.random() < 0.3:
            s = self.pick(lambda w: w.shape == () and w.elem == v.elem)
            if s is not None:
                return self.broadcast_scalar(s, v.shape)
        if v.elem == "i4":  # (no i4 constants)
            return self.rng.choice(same) if same else v
        return self.const(v.shape, v.elem)

    def broadcast_scalar(self, s: Value, shape: tuple[int, ...]) -> Value:
        ones = tuple(1 for _ in shape)
        r1 = self.fresh(ones, s.elem)
        self.emit(f"{r1.name} = reshape {s.name} : {s.type} -> {r1.type}", keep=False)
        b = self.fresh(shape, s.elem)
        self.emit(f"{b.name} = broadcast {r1.name} : {r1.type} -> {b.type}", keep=False)
        return b

    def shape_of(self, numel: int, rank: int) -> tuple[int, ...] | None:
        """A random shape of `rank` power-of-two dims holding `numel` elements."""
        k = int(math.log2(numel))
        if rank == 0:
            return () if numel == 1 else None
        cuts = sorted(self.rng.randint(0, k) for _ in range(rank - 1))
        dims = [2 ** (b - a) for a, b in zip([0, *cuts], [*cuts, k], strict=True)]
        return tuple(dims) if max(dims) <= MAX_DIM else None

    # -- ops ---------------------------------------------------------------------------------
    def int_binary(self) -> bool:
        a = self.pick(lambda v: v.elem in INTS)
        if a is None:
            return False
        b = self.partner(a)
        r = self.rng
        op = r.choice(
            ["addi", "subi", "muli", "andi", "ori", "xori", "maxi", "mini", "mulhii", "shli", "shri", "divi", "remi"]
        )
        attrs = " " + r.choice(["signed", "unsigned"]) if op in ("maxi", "mini", "shri") else ""
        if op in ("shli", "shri"):  # amounts below the width (beyond it the spec says nothing)
            m = self.const(a.shape, a.elem, WIDTH[a.elem] - 1)
            masked = self.fresh(a.shape, a.elem)
            self.emit(f"{masked.name} = andi {b.name}, {m.name} : {a.type}", keep=False)
            b = masked
        if op in ("divi", "remi"):
            sign = r.choice(["signed", "unsigned"])
            one = self.const(a.shape, a.elem, 1)
            d = self.fresh(a.shape, a.elem)
            if sign == "signed":  # no 0 and no MIN / -1: (b >>u 1) | 1
                half = self.fresh(a.shape, a.elem)
                self.emit(f"{half.name} = shri {b.name}, {one.name} unsigned : {a.type}", keep=False)
                self.emit(f"{d.name} = ori {half.name}, {one.name} : {a.type}", keep=False)
            else:
                self.emit(f"{d.name} = ori {b.name}, {one.name} : {a.type}", keep=False)
            b = d
            attrs = " " + sign
            if op == "divi" and r.random() < 0.5:
                modes = ["zero", "positive_inf", "negative_inf"] if sign == "signed" else ["zero", "positive_inf"]
                attrs += f" rounding<{r.choice(modes)}>"
        out = self.fresh(a.shape, a.elem)
        self.emit(f"{out.name} = {op} {a.name}, {b.name}{attrs} : {a.type}", out, op=op)
        return True

    def int_unary(self) -> bool:
        a = self.pick(lambda v: v.elem in INTS)
        if a is None:
            return False
        op = self.rng.choice(["negi", "absi"])
        out = self.fresh(a.shape, a.elem)
        self.emit(f"{out.name} = {op} {a.name} : {a.type}", out, op=op)
        return True

    def float_op(self) -> bool:
        a = self.pick(lambda v: v.elem in FLOATS)
        if a is None:
            return False
        r = self.rng
        op = r.choice(
            ["addf", "subf", "mulf", "divf", "maxf", "minf", "negf", "absf", "sqrt", "fma", "ceil", "floor", "remf"]
        )
        if op == "remf" and a.elem == "f64" and not self.asm:
            op = "subf"  # f64 remf is libdevice's fmod: not runnable under Triton's interpreter
        attrs = ""
        if op in ("addf", "subf", "mulf", "divf", "sqrt", "fma") and r.random() < 0.3:
            # f64's directed roundings are inline PTX: not runnable under Triton's interpreter
            modes = (
                ["nearest_even"]
                if a.elem == "f64" and not self.asm
                else ["nearest_even", "zero", "negative_inf", "positive_inf"]
            )
            attrs = f" rounding<{r.choice(modes)}>"
        if a.elem == "f32" and op not in ("negf", "absf", "ceil", "floor", "remf") and r.random() < 0.2:
            attrs += " flush_to_zero"
        if (
            op == "fma"
            and a.elem == "f64"
            and not self.asm
            and "rounding<" not in attrs.replace("rounding<nearest_even>", "")
        ):
            # a real fused tl.fma, which Triton's interpreter computes with two roundings (f32
            # has an exact path there: ops_float.fma_f32)
            attrs, op = "", "mulf"
        out = self.fresh(a.shape, a.elem)
        if op in ("negf", "absf", "sqrt", "ceil", "floor"):
            self.emit(f"{out.name} = {op} {a.name}{attrs} : {a.type}", out, op=op)
        elif op == "fma":
            b, c = self.partner(a), self.partner(a)
            self.emit(f"{out.name} = fma {a.name}, {b.name}, {c.name}{attrs} : {a.type}", out, op=op)
        else:
            b = self.partner(a)
            self.emit(f"{out.name} = {op} {a.name}, {b.name}{attrs} : {a.type}", out, op=op)
        return True

    def math(self) -> bool:
        """A math function that Triton's interpreter runs (exp, exp2, log, log2, sin, cos,
        rsqrt; f32 exp2 and rsqrt also with flush_to_zero). Its result is only within
        test_math's ulp bounds of the CPU interpreter's, not bitwise, so nothing computes on it
        (an op on it could turn one ulp into any difference): it is stored, or yielded by an
        `if`, and compared within the bound. Drawn only when weighted (its default is 0, which
        keeps earlier seeds' kernels). With `asm`, also the libdevice ones (tan, sinh, cosh, tanh,
        pow, atan2) and f32 exp and tanh with rounding<approx>."""
        a = self.pick(lambda v: v.elem in FLOATS)
        if a is None:
            return False
        libdevice = ["tan", "sinh", "cosh", "tanh", "pow", "atan2"] if self.asm else []
        op = self.rng.choice(["exp", "exp2", "log", "log2", "sin", "cos", "rsqrt", *libdevice])
        ftz = " flush_to_zero" if op in ("exp2", "rsqrt") and a.elem == "f32" and self.rng.random() < 0.3 else ""
        if self.asm and op in ("exp", "tanh") and a.elem == "f32" and self.rng.random() < 0.4:
            ftz = " rounding<approx>"
        out = self.fresh(a.shape, a.elem)
        if op in ("pow", "atan2"):
            b = self.partner(a)
            self.emit(f"{out.name} = {op} {a.name}, {b.name} : {a.type}", out, op=op)
        else:
            self.emit(f"{out.name} = {op} {a.name}{ftz} : {a.type}", out, op=op)
        if not self.asm:  # (in a campaign that only compiles, anything may compute on it)
            self.inexact.add(out.name)
        return True

    def print_(self) -> bool:
        """A print_tko of a value (drawn only with `asm`: Triton's interpreter prints it
        otherwise, and a campaign's output would drown in it)."""
        if not self.asm:
            return False
        a = self.pick(lambda v: v.elem in INTS + FLOATS)
        if a is None:
            return False
        spec = "%f" if a.elem in FLOATS else "%d"
        self.n += 1
        self.emit(f'%t{self.n} = print_tko "{a.name[1:]} = {spec}\\n", {a.name} : {a.type} -> token', op="print_tko")
        return True

    def compare(self) -> bool:
        a = self.pick(lambda v: v.elem in INTS + FLOATS)
        if a is None:
            return False
        b = self.partner(a)
        out = self.fresh(a.shape, "i1")
        r = self.rng
        if a.elem in INTS:
            pred = r.choice(
                ["equal", "not_equal", "less_than", "less_than_or_equal", "greater_than", "greater_than_or_equal"]
            )
            sign = r.choice(["signed", "unsigned"])
            self.emit(f"{out.name} = cmpi {pred} {a.name}, {b.name}, {sign} : {a.type} -> {out.type}", out, op="cmpi")
        else:
            pred = r.choice(
                ["equal", "not_equal", "less_than", "less_than_or_equal", "greater_than", "greater_than_or_equal"]
            )
            order = r.choice(["ordered", "unordered"])
            self.emit(f"{out.name} = cmpf {pred} {order} {a.name}, {b.name} : {a.type} -> {out.type}", out, op="cmpf")
        return True

    def select(self) -> bool:
        c = self.pick(lambda v: v.elem == "i1")
        if c is None:
            return False
        # (select refuses sub-byte types)
        a = self.pick(lambda v: v.shape == c.shape and v.elem not in ("i1", "i4", *F4))
        if a is None:
            return False
        b = self.partner(a)
        out = self.fresh(a.shape, a.elem)
        self.emit(f"{out.name} = select {c.name}, {a.name}, {b.name} : {c.type}, {a.type}", out, op="select")
        return True

    def convert(self) -> bool:
        a = self.pick(lambda v: v.elem != "i1" or self.rng.random() < 0.3)
        if a is None:
            return False
        r = self.rng
        if a.elem in WIDTH:
            kind = r.choice(["int", "int", "itof"]) if a.elem not in ("i1", "i4") else "int"
            if kind == "int":
                narrow = ["i4"] if a.elem in INTS and r.random() < 0.2 else []
                to = r.choice(narrow or [e for e in INTS if e != a.elem])
                out = self.fresh(a.shape, to)
                if WIDTH[to] > WIDTH[a.elem]:
                    sign = r.choice(["signed", "unsigned"])
                    self.emit(f"{out.name} = exti {a.name} {sign} : {a.type} -> {out.type}", out, op="exti")
                else:
                    self.emit(f"{out.name} = trunci {a.name} : {a.type} -> {out.type}", out, op="trunci")
            else:  # (to f8 and f4E2M1FN too: rounded, saturated or NaN by the target's rules)
                to = r.choice([e for e in FLOATS + F8 + F4 if allowed(a.shape, e)])
                out = self.fresh(a.shape, to)
                sign = r.choice(["signed", "unsigned"])
                self.emit(f"{out.name} = itof {a.name} {sign} : {a.type} -> {out.type}", out, op="itof")
        elif a.elem in F8 + F4:
            to = r.choice(FLOATS)
            out = self.fresh(a.shape, to)
            self.emit(f"{out.name} = ftof {a.name} : {a.type} -> {out.type}", out, op="ftof")
        else:
            if r.random() < 0.5:
                to = r.choice([e for e in FLOATS + F8 + F4 if e != a.elem and allowed(a.shape, e)])
                out = self.fresh(a.shape, to)
                self.emit(f"{out.name} = ftof {a.name} : {a.type} -> {out.type}", out, op="ftof")
            else:
                to = r.choice(INTS)
                out = self.fresh(a.shape, to)
                sign = r.choice(["signed", "unsigned"])
                self.emit(f"{out.name} = ftoi {a.name} {sign} : {a.type} -> {out.type}", out, op="ftoi")
        return True

    def reshape(self) -> bool:
        a = self.pick()
        if a is None:
            return False
        numel = math.prod(a.shape)
        shape = self.shape_of(numel, self.rng.randint(0 if numel == 1 else 1, 3))
        if shape is None or shape == a.shape:
            return False
        out = self.fresh(shape, a.elem)
        self.emit(f"{out.name} = reshape {a.name} : {a.type} -> {out.type}", out, op="reshape")
        return True

    def permute(self) -> bool:
        a = self.pick(lambda v: len(v.shape) >= 2)
        if a is None:
            return False
        perm = list(range(len(a.shape)))
        while perm == sorted(perm):
            self.rng.shuffle(perm)
        out = self.fresh(tuple(a.shape[p] for p in perm), a.elem)
        self.emit(
            f"{out.name} = permute {a.name} [{', '.join(map(str, perm))}] : {a.type} -> {out.type}", out, op="permute"
        )
        return True

    def broadcast(self) -> bool:
        a = self.pick(lambda v: len(v.shape) <= 2 and math.prod(v.shape) * 2 <= MAX_ELEMENTS)
        if a is None:
            return False
        at = self.rng.randint(0, len(a.shape))
        ones = (*a.shape[:at], 1, *a.shape[at:])
        room = MAX_ELEMENTS // max(1, math.prod(a.shape))
        k = self.rng.choice([n for n in (2, 4, 8, 16) if n <= min(room, MAX_DIM)] or [1])
        r1 = self.fresh(ones, a.elem)
        self.emit(f"{r1.name} = reshape {a.name} : {a.type} -> {r1.type}", keep=False)
        out = self.fresh((*a.shape[:at], k, *a.shape[at:]), a.elem)
        self.emit(f"{out.name} = broadcast {r1.name} : {r1.type} -> {out.type}", out, op="broadcast")
        return True

    def cat(self) -> bool:
        a = self.pick(lambda v: v.shape and math.prod(v.shape) * 2 <= MAX_ELEMENTS)
        if a is None:
            return False
        dim = self.rng.randrange(len(a.shape))
        if a.shape[dim] * 2 > MAX_DIM:
            return False
        b = self.partner(a)
        shape = tuple(s * 2 if d == dim else s for d, s in enumerate(a.shape))
        out = self.fresh(shape, a.elem)
        self.emit(f"{out.name} = cat {a.name}, {b.name} dim = {dim} : {a.type}, {b.type} -> {out.type}", out, op="cat")
        return True

    def sliced(self) -> tuple[Value, tuple[int, ...]] | None:
        """A value with an extent above 1 and the shape of a slice of it (each extent divided
        by 1, 2 or 4), or None."""
        a = self.pick(lambda v: v.shape and max(v.shape) > 1)
        if a is None:
            return None
        sub = tuple(s // self.rng.choice([f for f in (1, 2, 4) if f <= s]) for s in a.shape)
        if sub == a.shape or not allowed(sub, a.elem):
            return None
        return a, sub

    def slice_index(self, shape: tuple[int, ...], sub: tuple[int, ...]) -> str:
        """Constant slice indices (counted in slices) of a `sub` slice of `shape`."""
        names = [self.const((), "i32", self.rng.randrange(s // t)).name for s, t in zip(shape, sub, strict=True)]
        return ", ".join(names)

    def extract(self) -> bool:
        found = self.sliced()
        if found is None:
            return False
        a, sub = found
        idx = self.slice_index(a.shape, sub)
        out = self.fresh(sub, a.elem)
        self.emit(f"{out.name} = extract {a.name}[{idx}] : {a.type} -> {out.type}", out, op="extract")
        return True

    def insert(self) -> bool:
        """`insert` (13.4): a slice of another value of the type written into a value."""
        found = self.sliced()
        if found is None:
            return False
        a, sub = found
        src = self.fresh(sub, a.elem)
        idx = self.slice_index(a.shape, sub)
        self.emit(f"{src.name} = extract {self.partner(a).name}[{idx}] : {a.type} -> {src.type}", keep=False)
        idx = self.slice_index(a.shape, sub)
        out = self.fresh(a.shape, a.elem)
        line = f"{out.name} = insert {src.name}, {a.name}[{idx}] : {src.type}, {a.type}"
        self.emit(line, out, op="insert")
        return True

    def fpowi(self) -> bool:
        """`fpowi` (13.4): a float to the power of an i8/i16/i32 tile (or an i1 one: -1 or 0),
        small exponents mostly (large ones overflow or vanish, exactly too)."""
        a = self.pick(lambda v: v.elem in FLOATS)
        n = self.pick(lambda v: v.shape == a.shape and v.elem in INTS + ("i1",)) if a is not None else None
        if a is None or n is None:
            return False
        r = self.rng
        if n.elem == "i1":
            e = n
        else:
            to = r.choice(["i8", "i16", "i32"])
            e = self.small(n, to, r.choice([7, 15, 63]), offset=r.choice([0, 3])) if r.random() < 0.8 else n
            if e.elem not in ("i8", "i16", "i32"):
                e = self.small(e, to, None)
        out = self.fresh(a.shape, a.elem)
        self.emit(f"{out.name} = fpowi {a.name}, {e.name} : {a.type}, {e.type}", out, op="fpowi")
        return True

    def ftof_mode(self) -> bool:
        """`ftof` between float types with a rounding mode other than the default, one that
        tileiras 13.5 takes for the pair (`ftof_rounding_modes`; 13.4's nearest_away too)."""
        from compiler.verify.ops_conversion import ftof_exact, ftof_rounding_modes

        a = self.pick(lambda v: v.elem in FLOATS + F8 + F4)
        if a is None:
            return False
        pairs = []
        for to in FLOATS + F8 + F4 + ("tf32",):
            if to == a.elem or not allowed(a.shape, to):
                continue
            modes, _ = ftof_rounding_modes(a.elem, to)
            # (not widening with another mode: tileiras fails on some, tests/bytecode/test_ftof_rounding.py)
            pairs += [(to, m) for m in modes if m != "nearest_even" and not ftof_exact(a.elem, to)]
        if not pairs:
            return False
        to, mode = self.rng.choice(pairs)
        out = self.fresh(a.shape, to)
        line = f"{out.name} = ftof {a.name} rounding<{mode}> : {a.type} -> {out.type}"
        if to != "tf32":
            self.emit(line, out, op="ftof")
            return True
        self.emit(line, keep=False)  # (tf32 has no memory: back to f32, exactly, for the pool)
        back = self.fresh(a.shape, "f32")
        self.emit(f"{back.name} = ftof {out.name} : {out.type} -> {back.type}", back, op="ftof")
        return True

    REDUCERS = {
        # op, attrs, identity (by width), for integers; associative and commutative, so exact
        "addi": ("", lambda w: 0),
        "muli": ("", lambda w: 1),
        "xori": ("", lambda w: 0),
        "andi": ("", lambda w: -1),
        "ori": ("", lambda w: 0),
        "maxi": (" signed", lambda w: -(2 ** (w - 1))),
        "mini": (" unsigned", lambda w: -1),
    }

    def reduce_or_scan(self) -> bool:
        a = self.pick(lambda v: v.shape and v.elem in INTS + FLOATS)
        if a is None:
            return False
        r = self.rng
        dim = r.randrange(len(a.shape))
        if a.elem in INTS:
            op = r.choice(list(self.REDUCERS))
            attrs, ident = self.REDUCERS[op]
            identity = f"{ident(WIDTH[a.elem])} : {a.elem}"
        else:
            op = r.choice(["maxf", "minf"])
            attrs = ""
            bits = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[a.elem]
            inf = {"f16": 0x7C00, "bf16": 0x7F80, "f32": 0x7F800000, "f64": 0x7FF0000000000000}[a.elem]
            identity = f"{hex(inf | (1 << (bits - 1)) if op == 'maxf' else inf)} : {a.elem}"
        s = tile((), a.elem)
        scan = r.random() < 0.4
        if scan:
            out = self.fresh(a.shape, a.elem)
            head = f"scan {a.name} dim={dim} reverse={r.choice(['true', 'false'])}"
        else:
            out = self.fresh(tuple(x for d, x in enumerate(a.shape) if d != dim), a.elem)
            head = f"reduce {a.name} dim={dim}"
        e, acc, v = (self.fresh((), a.elem, p).name for p in ("e", "a", "y"))
        self.emit(
            f"{out.name} = {head} identities=[{identity}] : {a.type} -> {out.type}\n"
            f"      ({e}: {s}, {acc}: {s}) {{\n"
            f"        {v} = {op} {e}, {acc}{attrs} : {s}\n"
            f"        yield {v} : {s}\n"
            f"      }}",
            out,
            op="scan" if scan else "reduce",
        )
        return True

    def region(self, extra: list[Value], count: int) -> tuple[list[str], list[Value]]:
        """`count` random ops in a nested region that sees the enclosing values and `extra`
        (its block arguments): its lines (indented) and the values of its own it can yield
        (`extra` and what it made)."""
        saved = self.lines, self.pool
        self.lines, self.pool = [], [*self.pool, *extra]
        self.depth += 1
        names, weights = zip(*self.weights.items(), strict=True)
        done = 0
        for _ in range(count * 10):
            if done == count:
                break
            kind = self.rng.choices(names, weights)[0]
            if kind in ("loop", "while_loop", "branch") and self.depth > 2:
                continue
            if getattr(self, kind)():
                done += 1
        lines, own = self.lines, self.pool[len(saved[1]) :]
        self.lines, self.pool = saved
        self.depth -= 1
        return ["\n".join("  " + line for line in chunk.split("\n")) for chunk in lines], own

    def result_of(self, values: list[Value], like: Value, fallback: Value, inexact: bool = False) -> Value:
        """One of a region's `values` of `like`'s type, the newest more often (or `fallback`);
        a `math` result only where `inexact` (an `if` may yield one; a loop carrying one would
        compute on it)."""
        same = [v for v in values if v.shape == like.shape and v.elem == like.elem]
        same = [v for v in same if inexact or v.name not in self.inexact]
        return self.rng.choices(same, [1 + i for i in range(len(same))])[0] if same else fallback

    def trip_count(self, least: int = 0) -> Value:
        if self.rng.random() < 0.5:
            return self.const((), "i32", self.rng.randint(least, 3))
        one = self.const((), "i32", 1)
        ub = self.fresh((), "i32")  # trips that differ between tile blocks
        self.emit(f"{ub.name} = addi %bx, {one.name} : tile<i32>", keep=False)
        return ub

    def block_condition(self) -> Value:
        """An i1 that differs between tile blocks: bx even."""
        two, zero = self.const((), "i32", 2), self.const((), "i32", 0)
        m, c = self.fresh((), "i32"), self.fresh((), "i1")
        self.emit(f"{m.name} = remi %bx, {two.name} signed : tile<i32>", keep=False)
        self.emit(f"{c.name} = cmpi equal {m.name}, {zero.name}, signed : tile<i32> -> tile<i1>", keep=False)
        return c

    def loop(self) -> bool:
        """A `for` carrying a tile through random ops, sometimes continuing early (odd
        iterations keep the carried value)."""
        a = self.pick(lambda v: v.elem in INTS + FLOATS)
        if a is None:
            return False
        r = self.rng
        c0, c1 = self.const((), "i32", 0), self.const((), "i32", 1)
        ub = self.trip_count()
        iv, acc = self.fresh((), "i32", "iv"), self.fresh(a.shape, a.elem, "acc")
        head = []
        if r.random() < 0.3:
            two = self.const((), "i32", 2)
            m, odd = self.fresh((), "i32"), self.fresh((), "i1")
            head = [
                f"  {m.name} = remi {iv.name}, {two.name} signed : tile<i32>",
                f"  {odd.name} = cmpi equal {m.name}, {c1.name}, signed : tile<i32> -> tile<i1>",
                f"  if {odd.name} {{\n    continue {acc.name} : {a.type}\n  }}",
            ]
        body, own = self.region([iv, acc], r.randint(1, 4))
        new = self.result_of(own, a, acc)
        out = self.fresh(a.shape, a.elem)
        text = "\n".join([*head, *body, f"  continue {new.name} : {a.type}"])
        self.emit(
            f"{out.name} = for {iv.name} in ({c0.name} to {ub.name}, step {c1.name}) : tile<i32> "
            f"iter_values({acc.name} = {a.name}) -> ({a.type}) {{\n{text}\n}}",
            out,
            op="for",
        )
        return True

    def while_loop(self, trips: int | None = None) -> bool:
        """A `loop` counting to a trip count (`trips`, else drawn) and leaving by `break`."""
        a = self.pick(lambda v: v.elem in INTS + FLOATS)
        if a is None:
            return False
        c0, c1 = self.const((), "i32", 0), self.const((), "i32", 1)
        # (drawn: at least one trip. Triton 3.6 failed on the loads of a loop that always
        # leaves at once, test_control.py's DEAD_LOOP_LOAD, before ops_control's `_branch`;
        # kept so that the seeds of earlier campaigns still name the same kernels, and
        # `dead_code` draws such loops)
        ub = self.trip_count(least=1) if trips is None else self.const((), "i32", trips)
        i, acc = self.fresh((), "i32", "i"), self.fresh(a.shape, a.elem, "acc")
        done, i1 = self.fresh((), "i1"), self.fresh((), "i32")
        body, own = self.region([acc], self.rng.randint(1, 3))
        new = self.result_of(own, a, acc)
        out = self.fresh(a.shape, a.elem)
        text = "\n".join(
            [
                f"  {done.name} = cmpi greater_than_or_equal {i.name}, {ub.name}, signed : tile<i32> -> tile<i1>",
                f"  if {done.name} {{\n    break {acc.name} : {a.type}\n  }}",
                *body,
                f"  {i1.name} = addi {i.name}, {c1.name} : tile<i32>",
                f"  continue {i1.name}, {new.name} : tile<i32>, {a.type}",
            ]
        )
        self.emit(
            f"{out.name} = loop iter_values({i.name} = {c0.name}, {acc.name} = {a.name}) : tile<i32>, {a.type} -> "
            f"{a.type} {{\n{text}\n}}",
            out,
            op="loop",
        )
        return True

    def branch(self, never_else: bool = False) -> bool:
        """An `if` whose arms run random ops and yield a value of one type (`never_else`: on
        `bx >= bx`, unsigned, which Triton folds to true)."""
        a = self.pick(lambda v: v.elem in INTS + FLOATS)
        if a is None:
            return False
        if never_else:
            c = self.fresh((), "i1")
            self.emit(f"{c.name} = cmpi greater_than_or_equal %bx, %bx, unsigned : tile<i32> -> tile<i1>", keep=False)
        else:
            c = self.pick(lambda v: v.shape == () and v.elem == "i1")
            if c is None or self.rng.random() < 0.5:  # blocks take different arms
                c = self.block_condition()
        arms, yields = [], []
        for _ in range(2):
            body, own = self.region([], self.rng.randint(0, 3))
            v = self.result_of(own, a, a, inexact=True)
            yields.append(v.name)
            arms.append("\n".join([*body, f"  yield {v.name} : {a.type}"]))
        out = self.fresh(a.shape, a.elem)
        if self.inexact.intersection(yields):
            self.inexact.add(out.name)
        self.emit(f"{out.name} = if {c.name} -> ({a.type}) {{\n{arms[0]}\n}} else {{\n{arms[1]}\n}}", out, op="if")
        return True

    def dead_code(self) -> bool:
        """Code that Triton can prove never runs, random ops (loads and stores among them)
        inside: a `loop` that leaves at its first trip, or the `else` of an `if` on `bx >= bx`
        (ops_control's `_branch`). Drawn only when weighted (its default is 0, which keeps
        earlier seeds' kernels)."""
        if self.depth > 2:
            return False
        return self.while_loop(trips=0) if self.rng.random() < 0.5 else self.branch(never_else=True)

    def early_return(self) -> bool:
        """One tile block returns here: its later stores do not happen."""
        if self.depth > 0 or self.grid[0] == 1:
            return False
        k = self.const((), "i32", self.rng.randrange(self.grid[0]))
        c = self.fresh((), "i1")
        self.emit(f"{c.name} = cmpi equal %bx, {k.name}, signed : tile<i32> -> tile<i1>", keep=False)
        self.emit(f"if {c.name} {{\n  return\n}}", op="return")
        return True

    def _view_of(self, base: str, shape: tuple[int, ...], elem: str) -> tuple[str, str]:
        """Lines making a row-major partition view of one `shape` tile at pointer `base`: (its
        name, its type)."""
        strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
        if elem in F4:  # one unit stride (the packing dim): dims of extent 1 after it get another
            packing = max([d for d, n in enumerate(shape) if n > 1], default=len(shape) - 1)
            strides = [st if st != 1 or d == packing else 2 for d, st in enumerate(strides)]
        tv = f"tensor_view<{'x'.join(map(str, shape))}x{elem}, strides=[{','.join(map(str, strides))}]>"
        pv = f"partition_view<tile=({'x'.join(map(str, shape))}), {tv}>"
        self.n += 1
        view = f"%mv{self.n}"
        self.emit(
            f"{view}_t = make_tensor_view {base}, shape = [{', '.join(map(str, shape))}], "
            f"strides = [{', '.join(map(str, strides))}] : {tv}",
            keep=False,
        )
        self.emit(f"{view} = make_partition_view {view}_t : {pv}", keep=False)
        return view, pv

    def alloca(self) -> bool:
        """A value through a tile block's own `alloca` slab: stored, loaded back after the
        store's token (the same value; 4-bit ones packed, 1-bit ones as bytes). At random the
        slab's pointer goes through ptr_to_int/int_to_ptr, an integer slab takes an
        atomic_red_view_tko add of another value before the load (wrapping sum), the load
        waits for the tokens joined, or reads the slab as another type of the same width
        (ptr_to_ptr: a bitcast through memory)."""
        v = self.pick(lambda v: v.shape and v.elem != "i4")
        if v is None:
            return False
        r = self.rng
        alignment = max(memory_bits(SCALAR_TYPES[v.elem]) // 8, 1) * 2 ** r.randint(0, 3)
        base = self.fresh((), "ptr", "a")
        ptr = f"tile<ptr<{v.elem}>>"
        self.emit(f"{base.name} = alloca num_elem = {math.prod(v.shape)}, alignment = {alignment} : {ptr}", keep=False)
        where = base.name
        if r.random() < 0.3:  # the pointer as an integer and back
            self.emit(f"{where}_i = ptr_to_int {where} : {ptr} -> tile<i64>", keep=False)
            self.emit(f"{where}_p = int_to_ptr {where}_i : tile<i64> -> {ptr}", keep=False)
            where = f"{where}_p"
        view, pv = self._view_of(where, v.shape, v.elem)
        index, types = _origin(len(v.shape))
        store = f"%t{self.n}"
        self.emit(f"{store} = store_view_tko weak {v.name}, {view}[{index}] : {v.type}, {pv}, {types} -> token")
        token = store
        if v.elem in ("i32", "i64") and r.random() < 0.7:  # a wrapping sum, exact in any order
            w = self.partner(v)
            self.emit(
                f"{store}r = atomic_red_view_tko relaxed device {view}[{index}], add, {w.name} token = {store} : "
                f"{v.type}, {pv}, {types} -> token",
                op="atomic_red",
            )
            token = f"{store}r"
        if r.random() < 0.3:
            self.emit(f"{store}j = join_tokens %tok, {token} : token", op="join_tokens")
            token = f"{store}j"
        elem = v.elem
        # (from integers only: a float's NaN payload, which the spec leaves open, would become bits)
        same_width = [e for e in SAME_WIDTH.get(v.elem, ()) if e != v.elem] if v.elem in INTS else []
        if same_width and r.random() < 0.3:  # read back as another type of the width
            elem = r.choice(same_width)
            self.emit(f"{where}_q = ptr_to_ptr {where} : {ptr} -> tile<ptr<{elem}>>", keep=False)
            view, pv = self._view_of(f"{where}_q", v.shape, elem)
        out = self.fresh(v.shape, elem)
        self.emit(
            f"{out.name}, {store}b = load_view_tko weak {view}[{index}] token = {token} : {pv}, {types} -> "
            f"{out.type}, token",
            out,
            op="alloca",
        )
        return True

    def bitcast(self) -> bool:
        """An integer's bits as another type of the same width (not a float's: its NaN payload,
        which the spec leaves open, would become bits that must agree)."""
        v = self.pick(lambda v: v.elem in INTS and len(SAME_WIDTH.get(v.elem, ())) > 1)
        if v is None:
            return False
        elem = self.rng.choice([e for e in SAME_WIDTH[v.elem] if e != v.elem])
        out = self.fresh(v.shape, elem)
        self.emit(f"{out.name} = bitcast {v.name} : {v.type} -> {out.type}", out, op="bitcast")
        return True

    def pack(self) -> bool:
        """A rank-1 integer tile's bytes (`pack`, little-endian) and, at random, those bytes as a
        tile of another width (`unpack`). (Not a float's: its NaN payload would become bytes.)"""
        v = self.pick(lambda v: len(v.shape) == 1 and v.elem in _PACKABLE and _BITS[v.elem] * v.shape[0] >= 8)
        if v is None:
            return False
        n_bytes = _BITS[v.elem] * v.shape[0] // 8
        packed = self.fresh((n_bytes,), "i8")
        self.emit(f"{packed.name} = pack {v.name} : {v.type} -> {packed.type}", packed, op="pack")
        targets = [e for e in _BITS if _BITS[e] <= n_bytes * 8 <= MAX_ELEMENTS * _BITS[e]]
        if self.rng.random() < 0.6 and targets:
            elem = self.rng.choice(targets)
            out = self.fresh((n_bytes * 8 // _BITS[elem],), elem)
            self.emit(f"{out.name} = unpack {packed.name} : {packed.type} -> {out.type}", out, op="unpack")
        return True

    def shape_query(self) -> bool:
        """An input's tensor shape or its view's index space shape (i32 or i64 scalars; its
        dynamic extents are the kernel's arguments)."""
        if not self.views:
            return False
        r = self.rng
        name, tv, pv, rank = r.choice(self.views)
        it = r.choice(["i32", "i64"])
        # The results as a group (`%q:2`, used as `%q#0`), as NVIDIA's tools print them, each
        # then copied to a value of its own (an output's value is renamed where it is defined).
        group = self.fresh((), it, "q")
        results = [f"{group.name}#{i}" for i in range(rank)] if rank > 1 else [group.name]
        head = f"{group.name}:{rank}" if rank > 1 else group.name
        if r.random() < 0.5:
            self.emit(f"{head} = get_tensor_shape %{name}_tv : {tv} -> tile<{it}>", op="tensor_shape")
        else:
            self.emit(f"{head} = get_index_space_shape %{name}_pv : {pv} -> tile<{it}>", op="index_space")
        for result in results:
            out = self.fresh((), it)
            self.emit(f"{out.name} = maxi {result}, {result} signed : {out.type}", out)
        return True

    def grid_size(self) -> bool:
        """The grid's extent along x and y (i32 scalars)."""
        nx, ny = self.fresh((), "i32"), self.fresh((), "i32")
        self.emit(f"{nx.name}, {ny.name}, %nz{self.n} = get_num_tile_blocks : tile<i32>", nx, ny, op="grid")
        return True

    def global_(self) -> bool:
        """A tile of a constant module global (every block reads it), through a view that
        gives it a random shape."""
        r = self.rng
        elem = r.choice(INTS + FLOATS + F8 + F4 + ("i1",))
        shape = self.shape_of(2 ** r.randint(1, 6), r.randint(1, 3))
        if shape is None:
            return False
        numel = math.prod(shape)
        lits = [self.literal(elem) for _ in range(numel)]
        self.n += 1
        name = f"@g{self.n}"
        self.globals.append(f"global constant {name} <{elem}: [{', '.join(lits)}]> : tile<{numel}x{elem}>")
        base = f"%gp{self.n}"
        self.emit(f"{base} = get_global {name} : tile<ptr<{elem}>>", keep=False)
        view, pv = self._view_of(base, shape, elem)
        index, types = _origin(len(shape))
        out = self.fresh(shape, elem)
        self.emit(
            f"{out.name}, %t{self.n} = load_view_tko weak {view}[{index}] : {pv}, {types} -> {out.type}, token",
            out,
            op="global",
        )
        return True

    def assert_(self) -> bool:
        """An `assert` that holds on every element, (v & 15) <= 15 unsigned, for a value v of
        the chain: a lowering that evaluates it wrongly (its mask, its place in a loop or a
        branch) stops the kernel under Triton's interpreter, which evaluates it. (LLVM proves
        it and drops it from the PTX; the kernel is still compiled in Triton's debug mode.)"""
        v = self.pick(lambda v: v.elem in INTS)
        if v is None:
            return False
        low = self.small(v, v.elem, 15)
        cond = self.fresh(v.shape, "i1")
        self.emit(
            f"{cond.name} = cmpi less_than_or_equal {low.name}, {self.const(v.shape, v.elem, 15).name}, unsigned : "
            f"{low.type} -> {cond.type}",
            keep=False,
        )
        self.emit(f'assert {cond.name}, "fuzz {cond.name}" : {cond.type}', op="assert")
        return True

    def iota(self) -> bool:
        elem = self.rng.choice(["i16", "i32", "i64"])
        n = self.rng.choice([1, 2, 8, 32, 128])
        out = self.fresh((n,), elem)
        self.emit(f"{out.name} = iota : {out.type}", out, op="iota")
        return True

    def mma_pair(self, k_ok=lambda k: k <= 64) -> tuple[Value, Value] | None:
        """Integer tiles (..., m, k) and (..., k, n) to multiply, k_ok(k): the second from the
        pool, else the first's transpose."""
        a = self.pick(lambda v: len(v.shape) in (2, 3) and v.elem in INTS and k_ok(v.shape[-1]))
        if a is None:
            return None
        lead, k = a.shape[:-2], a.shape[-1]
        rhs = self.pick(
            lambda v: v.shape[:-2] == lead and len(v.shape) == len(a.shape) and v.shape[-2] == k and v.elem in INTS
        )
        return a, rhs if rhs is not None else self.transpose(a)

    def transpose(self, a: Value) -> Value:
        """a (..., m, k) as (..., k, m)."""
        lead = len(a.shape) - 2
        out = self.fresh((*a.shape[:-2], a.shape[-1], a.shape[-2]), a.elem)
        perm = ", ".join(map(str, [*range(lead), lead + 1, lead]))
        self.emit(f"{out.name} = permute {a.name} [{perm}] : {a.type} -> {out.type}", keep=False)
        return out

    def small(self, v: Value, elem: str, mask: int | None, offset: int = 0) -> Value:
        """v as `elem`: its elements `(v & mask) - offset` (mask None: v itself), converted
        (itof signed to a float type; trunci/exti to an integer one)."""
        if mask is not None:
            m_ = self.fresh(v.shape, v.elem)
            self.emit(f"{m_.name} = andi {v.name}, {self.const(v.shape, v.elem, mask).name} : {v.type}", keep=False)
            v = m_
            if offset:
                d = self.fresh(v.shape, v.elem)
                self.emit(f"{d.name} = subi {v.name}, {self.const(v.shape, v.elem, offset).name} : {v.type}",
                          keep=False)  # fmt: skip
                v = d
        if elem not in WIDTH:
            out = self.fresh(v.shape, elem)
            self.emit(f"{out.name} = itof {v.name} signed : {v.type} -> {out.type}", keep=False)
            return out
        if v.elem == elem:
            return v
        out = self.fresh(v.shape, elem)
        verb = "trunci" if WIDTH[v.elem] > WIDTH[elem] else "exti"
        sign = " signed" if verb == "exti" else ""
        self.emit(f"{out.name} = {verb} {v.name}{sign} : {v.type} -> {out.type}", keep=False)
        return out

    def accumulator(self, shape: tuple[int, ...], elem: str) -> Value:
        """A small accumulator of `elem` (|x| <= 15): a masked integer tile of the pool, else a
        constant (small also for mmai: one that overflows i32 has no fixed result)."""
        src = self.pick(lambda v: v.shape == shape and v.elem in INTS)
        return self.small(src, elem, 15) if src is not None else self.const(shape, elem, self.rng.randint(-5, 5))

    def mma(self) -> bool:
        """mmai on i8 operands, or mmaf on small integers (|x| <= 15, exact in every float
        type, so every partial sum is exact and the results bitwise)."""
        pair = self.mma_pair()
        if pair is None:
            return False
        a, rhs = pair
        r = self.rng
        integer = r.random() < 0.4
        el = "i8" if integer else r.choice(FLOATS)
        acc_el = "i32" if integer else {"f16": r.choice(["f16", "f32"]), "bf16": "f32", "f32": "f32", "f64": "f64"}[el]
        mask = None if integer else 15
        lhs_v, rhs_v = self.small(a, el, mask), self.small(rhs, el, mask)
        acc = self.accumulator((*a.shape[:-1], rhs.shape[-1]), acc_el)
        out = self.fresh(acc.shape, acc_el)
        if integer:
            attrs = f" {r.choice(['signed', 'unsigned'])} {r.choice(['signed', 'unsigned'])}"
            self.emit(
                f"{out.name} = mmai {lhs_v.name}, {rhs_v.name}, {acc.name}{attrs} : "
                f"{lhs_v.type}, {rhs_v.type}, {acc.type}",
                out,
                op="mmai",
            )
        else:
            self.emit(
                f"{out.name} = mmaf {lhs_v.name}, {rhs_v.name}, {acc.name} : {lhs_v.type}, {rhs_v.type}, {acc.type}",
                out,
                op="mmaf",
            )
        return True

    # Operands of mmaf_scaled: element type -> (mask, offset) making small integers it holds
    # exactly (f8E4M3FN -7..8, f8E5M2 -3..4, f4E2M1FN -1..2).
    SCALED = {"f8E4M3FN": (15, 7), "f8E5M2": (7, 3), "f4E2M1FN": (3, 1)}

    def mma_scaled(self) -> bool:
        """mmaf_scaled of small integers (SCALED) with scales taken from the operands' own
        elements: powers of two 2^-2..2^1 (f8E8M0FNU, made from bits) or, for f4E2M1FN over
        blocks of 16, 1..4 (f8E4M3FN). Every product is a multiple of 2^-4 of at most 2^8 in
        magnitude and k <= 128, so every partial sum is exact in f32 and the results bitwise."""
        r = self.rng
        el = r.choice(list(self.SCALED))
        scale = "f8E4M3FN" if el == "f4E2M1FN" and r.random() < 0.5 else "f8E8M0FNU"
        block = 16 if scale == "f8E4M3FN" or (el == "f4E2M1FN" and r.random() < 0.5) else 32
        pair = self.mma_pair(lambda k: k <= 128 and k % block == 0)
        if pair is None:  # a tile that fits as the right operand, and its transpose
            rhs = self.pick(lambda v: len(v.shape) in (2, 3) and v.elem in INTS and v.shape[-2] in (16, 32, 64, 128))
            if rhs is None or rhs.shape[-2] % block:
                return False
            pair = self.transpose(rhs), rhs
        a, rhs = pair
        lhs_v, rhs_v = (self.small(v, el, *self.SCALED[el]) for v in (a, rhs))
        # the scales: a block-column of each operand's integers ((..., m, k/block) of a,
        # (..., k/block, n) of rhs), masked to 0..3 and made 1..4 or the bits 125..128
        scales = []
        for v, dim in ((a, -1), (rhs, -2)):
            shape = list(v.shape)
            shape[dim] //= block
            part = self.fresh(tuple(shape), v.elem)
            index = [self.const((), "i32", r.randrange(block) if d == len(shape) + dim else 0).name
                     for d in range(len(shape))]  # fmt: skip
            self.emit(f"{part.name} = extract {v.name}[{', '.join(index)}] : {v.type} -> {part.type}", keep=False)
            if scale == "f8E4M3FN":
                scales.append(self.small(part, scale, 3, -1))
                continue
            bits = self.small(self.small(part, part.elem, 3, -125), "i8", None)  # 125..128: 2^-2..2^1
            s = self.fresh(bits.shape, scale)
            self.emit(f"{s.name} = bitcast {bits.name} : {bits.type} -> {s.type}", keep=False)
            scales.append(s)
        acc = self.accumulator((*a.shape[:-1], rhs.shape[-1]), "f32")
        out = self.fresh(acc.shape, "f32")
        sa, sb = scales
        self.emit(
            f"{out.name} = mmaf_scaled {lhs_v.name}, {rhs_v.name}, {acc.name}, {sa.name}, {sb.name} : "
            f"{lhs_v.type}, {rhs_v.type}, {acc.type}, {sa.type}, {sb.type}",
            out,
            op="mmaf_scaled",
        )
        return True

    def pointers(self, buf: Operand, shape: tuple[int, ...], offsets: Value) -> Value:
        """A tile of pointers `%<buf>_ptr + offsets`."""
        ones = self.fresh(tuple(1 for _ in shape), f"ptr<{buf.elem}>")
        self.emit(f"{ones.name} = reshape %{buf.name}_ptr : tile<ptr<{buf.elem}>> -> {ones.type}", keep=False)
        base = self.fresh(shape, f"ptr<{buf.elem}>")
        if shape:
            self.emit(f"{base.name} = broadcast {ones.name} : {ones.type} -> {base.type}", keep=False)
        else:
            base = ones
        p = self.fresh(shape, f"ptr<{buf.elem}>")
        self.emit(
            f"{p.name} = offset {base.name}, {offsets.name} : {base.type}, {offsets.type} -> {p.type}", keep=False
        )
        return p

    def gather(self) -> bool:
        """A load through a tile of pointers whose offsets are data: masked where out of the
        buffer (with a padding tile or without), or wrapped into it."""
        v = self.pick(lambda v: v.shape and v.elem in INTS)
        if v is None:
            return False
        r = self.rng
        elem = r.choice([e for e in INTS + FLOATS + F8 + F4 if allowed(v.shape, e) and e not in F4])
        size = r.randint(1, 127 if v.elem == "i8" else 300)
        buf = Operand(f"g{len(self.buffers)}", elem, (), (size,), (1,), (), None, size, view=False)
        self.buffers.append(buf)
        bound = self.const(v.shape, v.elem, size)
        masked = r.random() < 0.6
        if masked:  # lanes at or past the end, negatives included (unsigned), masked off
            mask = self.fresh(v.shape, "i1")
            self.emit(
                f"{mask.name} = cmpi less_than {v.name}, {bound.name}, unsigned : {v.type} -> {mask.type}", keep=False
            )
            idx = v
        else:
            idx = self.fresh(v.shape, v.elem)
            self.emit(f"{idx.name} = remi {v.name}, {bound.name} unsigned : {v.type}", keep=False)
        p = self.pointers(buf, v.shape, idx)
        out = self.fresh(v.shape, elem)
        if not masked:
            self.emit(
                f"{out.name}, %t{self.n} = load_ptr_tko weak {p.name} : {p.type} -> {out.type}, token", out, op="gather"
            )
            return True
        if r.random() < 0.5:
            pad = self.const(v.shape, elem)
            self.emit(
                f"{out.name}, %t{self.n} = load_ptr_tko weak {p.name}, {mask.name}, {pad.name} : "
                f"{p.type}, {mask.type}, {pad.type} -> {out.type}, token",
                out,
                op="gather",
            )
        else:
            self.emit(
                f"{out.name}, %t{self.n} = load_ptr_tko weak {p.name}, {mask.name} : "
                f"{p.type}, {mask.type} -> {out.type}, token",
                out,
                op="gather",
            )
        return True

    def scatter(self) -> bool:
        """A store through a tile of pointers: tile block b's lanes to a permutation of
        b*n .. b*n+n-1 (no two lanes at one address), masked by an i1 tile at random."""
        if self.depth > 0:  # (a store repeated by a loop would race with itself: no token orders it)
            return False
        v = self.pick(lambda v: v.shape and v.elem not in ("i1", "i4", *F4))
        if v is None:
            return False
        r = self.rng
        p = self.own_addresses("s", v)
        mask = self.pick(lambda m: m.shape == v.shape and m.elem == "i1") if r.random() < 0.6 else None
        if mask is None:
            self.emit(f"%t{self.n} = store_ptr_tko weak {p.name}, {v.name} : {p.type}, {v.type} -> token", op="scatter")
        else:
            self.emit(
                f"%t{self.n} = store_ptr_tko weak {p.name}, {v.name}, {mask.name} : "
                f"{p.type}, {v.type}, {mask.type} -> token",
                op="scatter",
            )
        return True

    def own_addresses(self, prefix: str, v: Value) -> Value:
        """Pointers for `v`'s lanes into a new buffer parameter (named by `prefix`, which says
        whether it is an output): each lane of each tile block at an address of its own."""
        n = math.prod(v.shape)
        buf = Operand(
            f"{prefix}{len(self.buffers)}", v.elem, (), (n * self.blocks,), (1,), (), None, n * self.blocks, view=False
        )
        self.buffers.append(buf)
        return self.pointers(buf, v.shape, self.permuted_offsets(v.shape))

    def permuted_offsets(self, shape: tuple[int, ...]) -> Value:
        """Offsets b*n + a permutation of 0..n-1 (n = the tile's elements, b the tile block):
        no two lanes, in this block or another, at one address."""
        r = self.rng
        n = math.prod(shape)
        io = self.fresh((n,), "i32")
        self.emit(f"{io.name} = iota : {io.type}", keep=False)
        odd, add = self.const((n,), "i32", r.randrange(1, 64, 2)), self.const((n,), "i32", r.randrange(n))
        top, nb = self.const((n,), "i32", n - 1), self.const((), "i32", n)
        mul, sh, wrapped, off = (self.fresh((n,), "i32") for _ in range(4))
        self.emit(f"{mul.name} = muli {io.name}, {odd.name} : {io.type}", keep=False)
        self.emit(f"{sh.name} = addi {mul.name}, {add.name} : {io.type}", keep=False)
        self.emit(f"{wrapped.name} = andi {sh.name}, {top.name} : {io.type}", keep=False)
        gx, row, block, s0 = self.const((), "i32", self.grid[0]), *(self.fresh((), "i32") for _ in range(3))
        self.emit(f"{row.name} = muli %by, {gx.name} : tile<i32>", keep=False)
        self.emit(f"{block.name} = addi %bx, {row.name} : tile<i32>", keep=False)
        self.emit(f"{s0.name} = muli {block.name}, {nb.name} : tile<i32>", keep=False)
        base = self.broadcast_scalar(s0, (n,))
        self.emit(f"{off.name} = addi {wrapped.name}, {base.name} : {io.type}", keep=False)
        offs = self.fresh(shape, "i32")
        self.emit(f"{offs.name} = reshape {off.name} : {off.type} -> {offs.type}", keep=False)
        return offs

    ATOMIC_MODES = {
        "i32": ["add", "and", "or", "xor", "max", "min", "umax", "umin", "xchg", "cas"],
        "i64": ["add", "and", "or", "xor", "max", "min", "umax", "umin", "xchg", "cas"],
        # (no f16: Triton's interpreter cannot add f16 atomically past its range, which the
        # edge values reach; the backend says so, compiler/runtime/interpret.py)
        "f32": ["addf", "xchg", "cas"],
        "f64": ["addf", "xchg", "cas"],
    }
    # with `asm`: f16/bf16 adds (atom.add.noftz.f16, bf16 by compare-and-swap on sm_80)
    ATOMIC_MODES_ASM = {"f16": ["addf"], "bf16": ["addf"]}

    def atomic(self) -> bool:
        """An atomic_rmw_tko / atomic_cas_tko on a buffer of its own, each lane at an address
        of its own (masked at random): the old values join the pool, the buffer is compared."""
        if self.depth > 0:
            return False
        modes = {**self.ATOMIC_MODES, **self.ATOMIC_MODES_ASM} if self.asm else self.ATOMIC_MODES
        v = self.pick(lambda v: v.shape and v.elem in modes)
        if v is None:
            return False
        r = self.rng
        p = self.own_addresses("a", v)
        mode = r.choice(modes[v.elem])
        if mode == "cas" and v.elem in FLOATS and not re.fullmatch(r"%x\d+", v.name):
            # A float compare-and-swap compares bits: a computed NaN's payload, which the spec
            # leaves open, would decide the swap (seed 17747: remf's NaN). An input's bits are
            # fixed; anything else is exchanged instead.
            mode = "xchg"
        mask = self.pick(lambda m: m.shape == v.shape and m.elem == "i1") if r.random() < 0.4 else None
        m_op, m_ty = (f", {mask.name}", f", {mask.type}") if mask else ("", "")
        orderings = ["relaxed device", "acq_rel device", "relaxed tl_blk"]
        ordering = r.choice(orderings + (["acquire sys", "release device", "acq_rel tl_blk"] if self.asm else []))
        out = self.fresh(v.shape, v.elem)
        if mode == "cas":
            new = self.partner(v)
            self.emit(
                f"{out.name}, %t{self.n} = atomic_cas_tko {ordering} {p.name}, {v.name}, {new.name}{m_op} : "
                f"{p.type}, {v.type}{m_ty} -> {v.type}, token",
                out,
                op="atomic_cas",
            )
        else:
            self.emit(
                f"{out.name}, %t{self.n} = atomic_rmw_tko {ordering} {p.name}, {mode}, {v.name}{m_op} : "
                f"{p.type}, {v.type}{m_ty} -> {v.type}, token",
                out,
                op="atomic_rmw",
            )
        return True

    OPS = {
        "gather": 1,
        "scatter": 1,
        "atomic": 1,
        "mma": 1,
        "mma_scaled": 1,
        "int_binary": 6,
        "int_unary": 1,
        "float_op": 5,
        "compare": 2,
        "select": 2,
        "convert": 3,
        "reshape": 2,
        "permute": 2,
        "broadcast": 2,
        "cat": 1,
        "extract": 1,
        "reduce_or_scan": 3,
        "loop": 1,
        "while_loop": 1,
        "branch": 1,
        "early_return": 0.3,
        "iota": 1,
        "assert_": 0.5,
        "alloca": 1,
        "global_": 1,
        "bitcast": 1,
        "grid_size": 0.5,
        "pack": 1,
        "shape_query": 0.7,
        "dead_code": 0,  # the last ones, at 0: the draws of earlier campaigns' seeds stay the same
        "math": 0,
        "print_": 0,
        "insert": 0,  # 13.4's: drawn when weighted (`--weight insert=2`)
        "fpowi": 0,
        "ftof_mode": 0,
    }
    OPS_ASM = {"math": 2, "print_": 0.5}  # the defaults that `asm` changes


@dataclass
class Operand:
    """An array parameter seen through a partition view: the tensor (`extents`, `strides` in
    elements over a flat buffer of `size`) and how the tile maps onto it."""

    name: str
    elem: str
    tile: tuple[int, ...]  # the tile's shape (a 0-d value is stored as one element)
    extents: tuple[int, ...]
    strides: tuple[int, ...]
    dim_map: tuple[int, ...]
    padding: str | None
    size: int
    view: bool = True  # False: a gather's or scatter's flat buffer, reached through pointers
    dynamic: tuple[bool, ...] = ()  # per tensor dim: extent, stride given as parameters
    dynamic_strides: tuple[bool, ...] = ()
    aligned: bool = False  # the pointer parameter is assumed 16-byte aligned
    kind: str = "partition"  # or "strided" (traversal `steps`), "gather" (indices along `sparse`)
    steps: tuple[int, ...] = ()
    sparse: int = 0
    spread: tuple[int, int] = (1, 0)  # a gather's indices: iota * spread[0] + spread[1] (+ block)

    def scalars(self) -> list[tuple[str, int]]:
        """(parameter name, value) of the dynamic extents and strides, in parameter order."""
        out = [(f"%{self.name}_e{d}", e) for d, e in enumerate(self.extents) if self.dynamic and self.dynamic[d]]
        out += [
            (f"%{self.name}_s{d}", st)
            for d, st in enumerate(self.strides)
            if self.dynamic_strides and self.dynamic_strides[d]
        ]
        return out

    def params(self) -> list[str]:
        ptr = f"%{self.name}_{'raw' if self.aligned else 'ptr'}: tile<ptr<{self.elem}>>"
        return [ptr] + [f"{n}: tile<i32>" for n, _ in self.scalars()]


def _operand(
    rng: random.Random,
    name: str,
    tile_shape: tuple[int, ...],
    elem: str,
    grid: tuple[int, int],
    load: bool,
) -> Operand:
    """A random view of a flat buffer whose tile blocks (x along tile dim 0, y along tile dim 1)
    hold the tile. A partition view: tile dims mapped to tensor dims in any order, the last block and
    the other dims partial at random (padded on a load, masked on a store). A strided view:
    block b's tile starts at b * step along dim 0 (overlapping ones on a load). A gather or
    scatter view: the rows along its sparse dim come from an index tile (out of range ones
    padded or dropped; a scatter's indices distinct). Rows padded in memory at random."""
    tile_shape = tile_shape or (1,)
    rank = len(tile_shape)
    blocks = [*grid, 1, 1][:rank]  # tile blocks along each tile dim
    kind = rng.choices(["partition", "strided", "gather"], [6, 1, 1])[0]
    if elem in F4 and rank == 1 and kind == "gather":  # (its one dimension packs)
        kind = "partition"
    dim_map = list(range(rank))
    if kind == "partition" and rank > 1 and rng.random() < 0.4:
        rng.shuffle(dim_map)
    extents = [0] * rank
    steps: list[int] = []
    sparse, spread = 0, (1, 0)
    partial = False
    if kind == "strided":
        for i, t in enumerate(tile_shape):
            # a store's blocks must not overlap (they would race): steps of at least the tile
            step = rng.randint(t if not load and blocks[i] > 1 else 1, 2 * t)
            steps.append(step)
            reach = (blocks[i] - 1) * step  # where the last block's tile starts
            extents[i] = reach + rng.randint(1, t + 2)
            partial |= reach + t > extents[i]
    elif kind == "gather":
        sparse = rng.randrange(rank)
        for i, t in enumerate(tile_shape):
            if i == sparse and load:  # indices i * spread + b*t + c, some past the end
                spread = (rng.randint(1, 3), rng.randint(0, 3))
                extents[i] = rng.randint(1, 2 * t * blocks[i] + 4)
            else:  # (a scatter's: a permutation of b*t .. b*t+t-1, the last ones dropped)
                full = t * blocks[i]
                extents[i] = full - (rng.randrange(t) if rng.random() < 0.35 else 0)
        partial = True  # (a gather may read past the end)
        if not load:
            spread = (rng.randrange(1, 64, 2), rng.randrange(tile_shape[sparse]))
    else:
        for i, t in enumerate(tile_shape):
            cut = rng.randrange(t) if rng.random() < 0.35 else 0
            extents[dim_map[i]] = t * blocks[i] - cut
        partial = any(extents[dim_map[i]] < t * blocks[i] for i, t in enumerate(tile_shape))
    order = list(range(rank))[::-1]  # innermost first: row-major, or another order
    if rank > 1 and rng.random() < 0.3:
        rng.shuffle(order)
    if elem in F4 and kind == "gather" and order[0] == sparse:  # (not the packing one)
        order[0], order[1] = order[1], order[0]
    packing = order[0] if elem in F4 else None
    strides = [0] * rank
    step = 1
    for d in order:
        if packing is not None and d != packing and step == 1:
            # exactly one unit stride (a dimension of extent 1 inside would make another), and
            # the dimensions outside it spaced from there (or rows would overlap)
            step = 2
        strides[d] = step
        step *= extents[d] + (rng.choice([0, 0, 1, 3]) if d != order[-1] else 0)
    size = sum((e - 1) * st for e, st in zip(extents, strides, strict=True)) + 1
    padding = None
    if load and (partial or rng.random() < 0.2):
        padding = rng.choice(["zero", "neg_zero", "nan", "pos_inf", "neg_inf"] if elem in FLOATS else ["zero"])
    # Extents and strides known only at run time, and assumptions about them and the pointer
    dynamic = tuple(rng.random() < 0.3 for _ in range(rank))
    dynamic_strides = tuple(rng.random() < 0.2 and d != packing for d in range(rank))  # (f4: packing is static)
    aligned = rng.random() < 0.4
    return Operand(name, elem, tile_shape, tuple(extents), tuple(strides), tuple(dim_map), padding, size,
                   True, dynamic, dynamic_strides, aligned, kind, tuple(steps), sparse, spread)  # fmt: skip


def _origin(rank: int) -> tuple[str, str]:
    """The indices of a view's first tile (`%zero, %zero`) and their types."""
    return ", ".join(["%zero"] * rank), ", ".join(["tile<i32>"] * rank)


def _view_types(o: Operand) -> tuple[str, str]:
    """The types of `o`'s tensor view (`%NAME_tv`) and of its view (`%NAME_pv`)."""
    dims = "x".join("?" if o.dynamic and o.dynamic[d] else str(e) for d, e in enumerate(o.extents))
    strides = ",".join("?" if o.dynamic_strides and o.dynamic_strides[d] else str(x) for d, x in enumerate(o.strides))
    tv = f"tensor_view<{dims}x{o.elem}, strides=[{strides}]>"
    pad = f"padding_value = {o.padding}, " if o.padding else ""
    shape = "x".join(map(str, o.tile))
    if o.kind == "strided":
        return tv, f"strided_view<tile=({shape}), traversal_strides=[{','.join(map(str, o.steps))}], {pad}{tv}>"
    if o.kind == "gather":
        return tv, f"gather_scatter_view<tile=({shape}), {pad}{tv}, sparse_dim={o.sparse}>"
    dm = f", dim_map=[{', '.join(map(str, o.dim_map))}]" if o.dim_map != tuple(range(len(o.dim_map))) else ""
    return tv, f"partition_view<tile=({shape}), {pad}{tv}{dm}>"


def _view_lines(o: Operand, rng: random.Random) -> tuple[str, list[str]]:
    """The view type of `o` and the lines making it from its parameters (with `assume`s that
    hold: alignment of the pointer, bounds and divisibility of the dynamic extents and
    strides)."""
    lines = []
    if o.aligned:
        lines.append(f"%{o.name}_ptr = assume div_by<16>, %{o.name}_raw : tile<ptr<{o.elem}>>")
    assumed = []
    for name, value in o.scalars():
        facts = ["bounded<0, ?>"] + [f"div_by<{k}>" for k in (16, 8, 4) if value % k == 0][:1]
        for i, fact in enumerate(f for f in facts if rng.random() < 0.6):
            lines.append(f"{name}_{i} = assume {fact}, {name} : tile<i32>")
            name = f"{name}_{i}"
        assumed.append(name)
    names = iter(assumed)
    ext = [next(names) if o.dynamic and o.dynamic[d] else str(e) for d, e in enumerate(o.extents)]
    st = [next(names) if o.dynamic_strides and o.dynamic_strides[d] else str(x) for d, x in enumerate(o.strides)]
    tv, pv = _view_types(o)
    make = {"strided": "make_strided_view", "gather": "make_gather_scatter_view"}.get(o.kind, "make_partition_view")
    typed = f"tile<i32> -> {tv}" if any(v.startswith("%") for v in ext + st) else tv
    lines += [
        f"%{o.name}_tv = make_tensor_view %{o.name}_ptr, shape = [{', '.join(ext)}], "
        f"strides = [{', '.join(st)}] : {typed}",
        f"%{o.name}_pv = {make} %{o.name}_tv : {pv}",
    ]
    if o.kind == "gather":
        lines += _index_lines(o)
    return pv, lines


def _index_lines(o: Operand) -> list[str]:
    """`%<name>_ix`, a gather's or scatter's index tile along its sparse dim: for a gather
    iota * a + c (+ b*t along dim 0, b the tile block), for a scatter a permutation of
    0 .. t-1 ((iota * odd + c) mod t; + b*t along dim 0)."""
    t = o.tile[o.sparse]
    ti = f"tile<{t}xi32>"
    n = f"%{o.name}_ix"
    steps = [
        ("io", f"iota : {ti}"),
        ("a", f"constant <i32: {o.spread[0]}> : {ti}"),
        ("c", f"constant <i32: {o.spread[1]}> : {ti}"),
        ("m", f"muli {n}_io, {n}_a : {ti}"),
        ("s", f"addi {n}_m, {n}_c : {ti}"),
    ]
    if o.padding is None:  # a scatter (stores have no padding): wrapped into the tile
        steps += [("t", f"constant <i32: {t - 1}> : {ti}"), ("w", f"andi {n}_s, {n}_t : {ti}")]
    if o.sparse < 2:  # the tile block's own rows: + b*t, b = bx along dim 0, by along dim 1
        last = steps[-1][0]
        steps += [
            ("bt", f"constant <i32: {t}> : tile<i32>"),
            ("b0", f"muli {('%bx', '%by')[o.sparse]}, {n}_bt : tile<i32>"),
            ("b1", f"reshape {n}_b0 : tile<i32> -> tile<1xi32>"),
            ("b", f"broadcast {n}_b1 : tile<1xi32> -> {ti}"),
            ("o", f"addi {n}_{last}, {n}_b : {ti}"),
        ]
    lines = [f"{n}_{name} = {expr}" for name, expr in steps]
    lines[-1] = f"{n} = {steps[-1][1]}"  # the last one is the index tile
    for i in _scaled_dims(o):  # a scatter's tile block b starts at row b*t of a dense dim
        lines += [
            f"%{o.name}_d{i}t = constant <i32: {o.tile[i]}> : tile<i32>",
            f"%{o.name}_d{i} = muli {('%bx', '%by')[i]}, %{o.name}_d{i}t : tile<i32>",
        ]
    return lines


def _scaled_dims(o: Operand) -> list[int]:
    """The dense dims (x, y) of a scatter whose index is the tile block times the tile: its
    index there is an element offset, and blocks b, b+1 storing at rows b.. and b+1.. would
    overlap and race on a GPU (the interpreters run the blocks in turn and agree anyway). A
    gather's blocks may overlap (loads do not race): it takes the block number itself."""
    if o.kind != "gather" or o.padding is not None:
        return []
    return [i for i in range(min(2, len(o.tile))) if i != o.sparse and o.tile[i] > 1]


def _indices(o: Operand) -> tuple[str, str]:
    """The index operands of a load or store of `o`'s tile block %bx, and their types."""
    idx, types = [], []
    scaled = _scaled_dims(o)
    for i, t in enumerate(o.tile):
        if o.kind == "gather" and i == o.sparse:
            idx.append(f"%{o.name}_ix")
            types.append(f"tile<{t}xi32>")
        elif i in scaled:
            idx.append(f"%{o.name}_d{i}")
            types.append("tile<i32>")
        else:
            idx.append(("%bx", "%by")[i] if i < 2 else "%zero")
            types.append("tile<i32>")
    return ", ".join(idx), ", ".join(types)


def _ordering(rng: random.Random, elem: str, store: bool, asm: bool = False) -> str:
    """A view access's memory ordering: mostly weak; relaxed, or for a store release, where
    Triton's interpreter runs it too: loads as volatile ones, stores of 32/64-bit elements as
    plain stores (inline PTX st.relaxed on the GPU, after a fence for release; atomic
    exchanges, which the interpreter ran as such, when these draws were made), of f4E2M1FN as
    relaxed compare-and-swaps (after a fence for release).
    With `asm`, also acquire loads and stores of 8/16-bit elements (inline PTX on the GPU;
    volatile loads and plain stores under the interpreter), at every scope: drawn only there,
    so that earlier seeds keep their kernels."""
    x = rng.random()
    if asm:
        sem = rng.choice(["relaxed", "release" if store else "acquire"])
        return f"{sem} {rng.choice(['tl_blk', 'device', 'sys'])}" if x < 0.35 else "weak"
    if not store:
        return "relaxed device" if x < 0.15 else "weak"
    if elem in F4 or elem in ("i32", "i64", "f32", "f64"):
        return "relaxed device" if x < 0.1 else "release device" if x < 0.2 else "weak"
    return "weak"


def _entry_hints(rng: random.Random) -> str:
    """Random `optimization_hints` of the entry for sm_80, sm_90 and sm_100: warps per CTA (1
    to 16), clusters (sm_90 and sm_100: 1, 2 or 4 CTAs; lower/build.py compiles without them
    where Triton cannot) and occupancy (a register cap: up to 8 CTAs of 16 warps, 24 registers).
    They change how Triton compiles the kernel, never what it computes."""
    entries = []
    for arch in ("sm_80", "sm_90", "sm_100"):
        hints = []
        if rng.random() < 0.7:
            hints.append(f"num_worker_warps_per_cta = {rng.choice([1, 2, 4, 8, 16])}")
        if arch != "sm_80" and rng.random() < 0.6:
            hints.append(f"num_cta_in_cga = {rng.choice([1, 2, 4])}")
        if rng.random() < 0.3:
            hints.append(f"occupancy = {rng.choice([1, 2, 4, 8])}")
        if hints:
            entries.append(f"{arch} = {{{', '.join(hints)}}}")
    return f" optimization_hints=<{', '.join(entries)}>" if entries else ""


def _access_hints(rng: random.Random | None) -> str:
    """A view access's hints, sometimes: no TMA on sm_90 or sm_100, a latency."""
    if rng is None or rng.random() < 0.6:
        return ""
    arch = rng.choice(["sm_90", "sm_100"])
    hints = ["allow_tma = false"] if rng.random() < 0.7 else []
    hints += [f"latency = {rng.randint(1, 10)}"] if rng.random() < 0.5 or not hints else []
    return f" optimization_hints = <{arch} = {{{', '.join(hints)}}}>"


# The kinds of op of a --large kernel: those that compute element by element (and broadcasts
# of scalars into them), the chains that the lowering strip-mines (compiler/lower/stripmine.py).
ELEMENTWISE_KINDS = ("int_binary", "int_unary", "float_op", "compare", "select", "convert", "broadcast", "math")


def kernel(
    seed: int,
    ops: int | None = None,
    weights: dict[str, float] | None = None,
    hints: bool = False,
    asm: bool = False,
    large: bool = False,
) -> Case:
    """The random kernel of `seed` (the same text for the same seed and `weights`: kinds of op
    of Gen.OPS drawn more or less often than their defaults, for a campaign aimed at some).
    `hints`: with random optimization hints on the entry and view accesses (drawn apart: the
    same kernel otherwise). `asm`: also what Triton's interpreter cannot run (inline PTX,
    libdevice, prints: Gen.asm), for campaigns that only compile (another kernel per seed).
    `large`: tiles of 2^13 or 2^14 elements and only ELEMENTWISE_KINDS of op (other kernels),
    which the lowering computes a slice at a time."""
    r = random.Random(seed)
    grid = (r.choice([1, 2, 3]), r.choice([1, 1, 2]))
    g = Gen(r.randrange(2**32), grid)
    g.asm = asm
    g.weights.update(Gen.OPS_ASM if asm else {})
    if large:
        g.weights = {k: (w if k in ELEMENTWISE_KINDS else 0) for k, w in g.weights.items()}
    g.weights.update(weights or {})
    rank = r.choice([1, 2, 2, 3])
    if large:
        shape = None
        while shape is None:
            shape = g.shape_of(2 ** r.randint(13, 14), r.choice([2, 3]))
    else:
        shape = g.shape_of(2 ** r.randint(0, 9), rank) or (16,)
    elems = [r.choice(INTS + FLOATS + (r.choice(F8 + F4),)) for _ in range(r.randint(2, 3))]
    elems = [e if allowed(shape, e) else "f32" for e in elems]
    inputs = [_operand(r, f"x{i}", shape, e, grid, load=True) for i, e in enumerate(elems)]
    for o in inputs:
        g.pool.append(Value(f"%{o.name}", shape, o.elem))
        g.views.append((o.name, *_view_types(o), len(o.extents)))
    g.pool += [Value("%bx", (), "i32"), Value("%by", (), "i32")]
    count = r.randint(6, 18)
    count = count if ops is None else ops  # a prefix of the same ops (for shrinking a failure)
    names, drawn = zip(*g.weights.items(), strict=True)
    done = 0
    for _ in range(count * 10):
        if done == count:
            break
        if getattr(g, r.choices(names, drawn)[0])():
            done += 1
    # Store what nothing consumed (the ends of the chains), the newest first, up to four.
    ends = [v for v in reversed(g.pool) if v.name not in g.used and not v.name.startswith(("%x", "%bx", "%by"))]
    ends = [v for v in ends if v.elem != "i4"]  # (no pointers to i4)
    results = ends[:4]
    if not results:  # every value made was used: store the newest (or make one)
        made = [v for v in reversed(g.pool) if not v.name.startswith(("%x", "%bx", "%by")) and v.elem != "i4"]
        if not made:
            made = [g.fresh((), "i32")]
            g.emit(f"{made[0].name} = addi %bx, %bx : tile<i32>", made[0])
        results = made[:1]
    # What is stored: a 0-d value as one element; with tile blocks along y, every value with a
    # dimension for y (else the blocks of a row would store to one place and race).
    least = 2 if grid[1] > 1 else 1
    stored = [(*v.shape, *[1] * (least - len(v.shape))) for v in results]
    outputs = [_operand(r, f"o{i}", sh, v.elem, grid, load=False)
               for i, (v, sh) in enumerate(zip(results, stored, strict=True))]  # fmt: skip
    inexact = {o.name for o, v in zip(outputs, results, strict=True) if v.name in g.inexact}
    lines = ["%tok = make_token : token", "%zero = constant <i32: 0> : tile<i32>",
             "%bx, %by, %bz = get_tile_block_id : tile<i32>"]  # fmt: skip
    views = {}
    for o in inputs + outputs:
        views[o.name], made = _view_lines(o, r)
        lines += made
    orderings = random.Random(f"orderings {seed}")  # (its own: the seeds' kernels stay as they were)
    hinting = random.Random(f"hints {seed}") if hints else None
    for o in inputs:
        idx, types = _indices(o)
        lines.append(
            f"%{o.name}, %{o.name}_t = load_view_tko {_ordering(orderings, o.elem, False, asm)} %{o.name}_pv[{idx}] "
            f"token = %tok{_access_hints(hinting)} : {views[o.name]}, "
            f"{types} -> {tile(shape, o.elem)}, token"
        )
    body = "\n".join(g.lines)
    stores = []
    for o, v in zip(outputs, results, strict=True):
        name = f"%{o.name}_r"
        body = re.sub(re.escape(v.name) + r"\b", name, body)
        if o.tile != v.shape:
            stores.append(f"%{o.name}_r1 = reshape {name} : {v.type} -> {tile(o.tile, v.elem)}")
            name = f"%{o.name}_r1"
        idx, types = _indices(o)
        stores.append(
            f"%{o.name}_st = store_view_tko {_ordering(orderings, o.elem, True, asm)} {name}, %{o.name}_pv[{idx}] "
            f"token = %tok{_access_hints(hinting)} : {tile(o.tile, o.elem)}, {views[o.name]}, {types} -> token"
        )
    inputs += [b for b in g.buffers if b.name.startswith("g")]
    outputs += [b for b in g.buffers if b.name.startswith(("s", "a"))]
    params = ", ".join(p for o in inputs + outputs for p in o.params())
    text = "\n".join("    " + line for line in lines + body.split("\n") + stores)
    module_lines = "".join(f"  {line}\n" for line in g.globals)
    entry_hints = _entry_hints(hinting) if hinting else ""
    text = f"cuda_tile.module @m {{\n{module_lines}  entry @k({params}){entry_hints} {{\n{text}\n    return\n  }}\n}}\n"
    return Case(seed, text, inputs, outputs, grid, g.ops, inexact)


def _dtype(elem: str) -> np.dtype:
    from compiler.interp.dtypes import DTYPE_BY_NAME

    return DTYPE_BY_NAME[elem]


def _values(rng: np.random.Generator, elem: str, n: int) -> np.ndarray:
    dt = _dtype(elem)
    if elem == "i1":
        return rng.random(n) < 0.5
    if elem in F8:  # any bit pattern
        return rng.integers(0, 256, size=n, dtype=np.uint8).view(dt)
    if elem in F4:  # any of the 16 codes
        values = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)
        return (values[rng.integers(0, 8, size=n)] * rng.choice([1.0, -1.0], size=n)).astype(dt)
    if elem in WIDTH:
        info = np.iinfo(dt)
        edges = np.array([0, 1, -1, 2, info.min, info.max, info.min + 1, info.max - 1], dtype=np.int64).astype(dt)
        x = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        x = np.where(rng.random(n) < 0.4, rng.integers(-8, 8, size=n).astype(dt), x)
    else:
        edges = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40, 6.5e4, 0.5]).astype(dt)
        x = (rng.standard_normal(n) * rng.choice([1.0, 100.0, 1e-3], size=n)).astype(dt)
    x = np.where(rng.random(n) < 0.15, edges[rng.integers(0, len(edges), size=n)], x).astype(dt)
    if elem in SIGNALING_NAN:  # a few signaling NaNs, positive and negative (made by their bits)
        where = rng.random(n) < 0.02
        x.view(f"u{dt.itemsize}")[where] = np.array(SIGNALING_NAN[elem], dtype=f"u{dt.itemsize}")[
            rng.integers(0, 2, size=int(where.sum()))
        ]
    return x


def arguments(case: Case) -> list[np.ndarray | int]:
    """Each parameter's flat buffer (inputs with edge values among random ones, outputs filled
    with random values too: what a masked store must leave) and its dynamic extents and strides."""
    rng = np.random.default_rng(case.seed)
    # (4-bit arrays hold whole bytes: an odd size gets one more element)
    sizes = [o.size + (o.size % 2 if o.elem in F4 else 0) for o in case.inputs + case.outputs]
    return [
        a
        for o, n in zip(case.inputs + case.outputs, sizes, strict=True)
        for a in [_values(rng, o.elem, n), *(v for _, v in o.scalars())]
    ]


def ulp_bounds(case: Case) -> dict[int, int]:
    """run_both's bound for each argument (by its index) holding `math` results: test_math's
    (the interpreters', or a GPU's); every other argument is compared bitwise."""
    from tests.lower.harness import ON_GPU
    from tests.lower.test_math import GPU_ULP, ULP

    bounds, index = {}, 0
    for o in case.inputs + case.outputs:
        if o.name in case.inexact:
            bounds[index] = (GPU_ULP if ON_GPU else ULP)[o.elem]
        index += 1 + len(o.scalars())
    return bounds


def check(case: Case, arch: str | None = None) -> tuple[float, int]:
    """The case on the CPU interpreter and under Triton's interpreter, bitwise (`math` results
    within ulp_bounds); with `arch`, also compiled to a cubin for it. Returns the compile's
    seconds and spilled bytes (zeros without `arch`)."""
    from tests.lower.harness import run_both

    run_both(case.text, "k", case.grid, arguments(case), ulp=ulp_bounds(case))
    return _compile(case, arch) if arch else (0.0, 0)


def _compile(case: Case, arch: str) -> tuple[float, int]:
    """The case compiled to a cubin for `arch` (in a forked child: a compile that never ends
    is killed at its limit); the compile's seconds and the bytes a thread spills."""
    from tests.lower.harness import compile_for

    start = time.monotonic()
    (k,) = compile_for(case.text, "k", arches=(arch,), isolate=True)
    return time.monotonic() - start, k.spills or 0


def check_compiles(case: Case, arch: str) -> tuple[float, int]:
    """An `asm` case (which Triton's interpreter cannot run) on the CPU interpreter, which
    must run it (its prints kept apart), and compiled to a cubin for `arch`. Returns the
    compile's seconds and spilled bytes."""
    import io

    from compiler.interp.machine import RunOptions
    from compiler.runtime import launch

    launch(case.text, "k", case.grid, arguments(case), backend="cpu", options=RunOptions(stdout=io.StringIO()))
    return _compile(case, arch)


def check_bytecode(case: Case) -> None:
    """Our bytecode writer on the case against NVIDIA's tileirdisasm: it prints our bytes as our
    printer prints the module, and our reader reads them back to that text too."""
    from compiler.bytecode import oldest_version, read_bytecode, write_bytecode
    from compiler.runtime import load_module
    from tests.bytecode.util import comparable, disasm_text, expected_text, run_tileirdisasm

    module = load_module(case.text)
    version = oldest_version(module)  # 13.4 for its ops (`--weight fpowi=2`, ...)
    data = write_bytecode(module, version)
    ours = comparable(expected_text(module, version))
    assert comparable(expected_text(read_bytecode(data), version)) == ours, "our reader reads our bytes differently"
    nvidia = run_tileirdisasm(data)
    assert nvidia.ok, f"tileirdisasm rejects our bytes: {nvidia.stderr.strip()}"
    assert disasm_text(nvidia.stdout) == ours, "tileirdisasm prints our bytes differently"


# What NVIDIA's tileiras refuses, rightly, in a kernel the verifier accepts: a type the target
# lacks ("Incompatibility with architecture 'sm_90': unsupported type 'f4E2M1FN'"; tileiras
# 13.5 has f8 from sm_89, f4E2M1FN and the f8E8M0FNU scales of mmaf_scaled from sm_100). Our
# lowering takes exact slower paths there.
TILEIRAS_TYPES_FROM = {"f8E4M3FN": 89, "f8E5M2": 89, "f4E2M1FN": 100, "f8E8M0FNU": 100}
_UNSUPPORTED_TYPE = re.compile(r"Incompatibility with architecture 'sm_(\d+)': unsupported type '(\w+)'")
# And an op: a bf16 atomic add before sm_90, which has no atom.add.bf16 ("atomicRMW ADDF with
# bf16 is not supported"; our lowering takes a compare-and-swap loop there).
_UNSUPPORTED_BF16_ADD = re.compile(r"Incompatibility with architecture 'sm_(\d+)': atomicRMW ADDF with bf16")
_BF16_ADD = re.compile(r"atomic_rmw_tko .*, addf, .*tile<[^>]*bf16>")
# A defect of tileiras' (13.5) that its own tests pin (tests/bytecode/test_fuzz_kernels.py,
# f4_*_odd_rows): on sm_100 it writes invalid LLVM for f4E2M1FN rows that start mid-byte,
# a pointer-and-nibble pair where a pointer belongs, in a plain load or store ("Load/Store
# operand must be a pointer") or an ordered one (NVVM's st.ext intrinsic). A campaign counts
# these apart so that only new failures are failures.
_F4_MID_BYTE = re.compile(
    r"(?:Load|Store) operand must be a pointer"
    r"|expected any pointer or pointer vector, but got \{ ptr addrspace\(1\), i8 \}"
)
# And one it fails on without a word (f4_scatter_partial_rows there): a gather/scatter view of
# f4E2M1FN whose dense dimension has an odd extent (1 there; 5 in seed 400868, cut down: a 2x1
# scatter into a 5x2 tensor of strides [1, ?]), where a partition view compiles; a gather's
# view with a padding value too (seed 523480, an acquire load).
_F4_SCATTER_VIEW = re.compile(
    r"gather_scatter_view<tile=\([^)]*\),(?: padding_value = \w+,)? tensor_view<[^>]*xf4E2M1FN"
)

# And f4E2M1FN tiles of three dimensions packed along the first, in a kernel with a cluster
# (f4_cluster_leading_packing there; fuzz seed 530950).
_F4_CLUSTER = re.compile(r"sub-byte element type: no statically-known contiguous dimension")


def _scan_reshaped(text: str) -> bool:
    """Whether a scan's result is reshaped: tileiras fails on a 1-D scan of at most 64 elements
    reshaped to more dimensions without a word, or aborts (scan_then_reshape and
    scan_then_reshape_3d there; fuzz seeds 390452, 395595 and 400973 met them too); or
    compared and packed, `pack` reshaping the compare's bits (scan_compared_packed there;
    fuzz seed 523273)."""
    scanned = set(re.findall(r"(%[\w.]+) = scan ", text))
    if any(operand in scanned for operand in re.findall(r"= reshape (%[\w.]+) ", text)):
        return True
    compares = re.findall(r"(%[\w.]+) = cmp[if] \w+(?: \w+)? (%[\w.]+), (%[\w.]+)", text)
    compared = {result for result, a, b in compares if a in scanned or b in scanned}
    return any(operand in compared for operand in re.findall(r"= pack (%[\w.]+) ", text))


class KnownDefect(Exception):
    """tileiras failed on the kernel in a way it is known to (`_F4_MID_BYTE`, `_F4_SCATTER_VIEW`,
    `_F4_CLUSTER`, `_scan_reshaped`)."""


def check_tileiras(case: Case, arch: str) -> bool:
    """NVIDIA's tileiras compiles the case (our bytecode, 13.3 or 13.4) for `arch`: a kernel our
    verifier accepts that tileiras refuses is a gap in our verifier or a defect of tileiras'.
    Returns False when tileiras refuses it for a type the target lacks (expected: only for a
    type of TILEIRAS_TYPES_FROM that the kernel holds and `arch` predates), for a bf16
    atomic add before sm_90, or for the registers it would need (its RegisterPressure error:
    a limit of the target and the kernel's hints, where our lowering warns and raises the
    warps; e.g. seed 523503 of an sm_100 --asm --hints campaign, two 128x128 f32 products at
    one warp). Raises KnownDefect where it fails as it is known to."""
    from compiler.modules import LaunchError
    from compiler.runtime import load_module
    from compiler.runtime.tileiras import compile_tileiras

    try:
        compile_tileiras(load_module(case.text), arch, use_cache=False)
    except LaunchError as e:
        m = _UNSUPPORTED_TYPE.search(str(e))
        sm = int(arch.removeprefix("sm_"))
        if m and m[2] in case.text and sm < TILEIRAS_TYPES_FROM.get(m[2], 0):
            return False
        if _UNSUPPORTED_BF16_ADD.search(str(e)) and sm < 90 and _BF16_ADD.search(case.text):
            return False
        if "name: RegisterPressure" in str(e):
            return False
        if _F4_MID_BYTE.search(str(e)) and sm == 100 and "f4E2M1FN" in case.text:
            raise KnownDefect(f"{arch}: f4E2M1FN rows that start mid-byte") from e
        if _F4_CLUSTER.search(str(e)) and sm == 100 and "num_cta_in_cga" in case.text and "f4E2M1FN" in case.text:
            raise KnownDefect(f"{arch}: f4E2M1FN packed along a leading dimension, in a cluster") from e
        silent = "failed to compile Tile IR program (" in str(e)
        if silent and sm == 100 and _F4_SCATTER_VIEW.search(case.text):
            raise KnownDefect(f"{arch}: a gather/scatter view of f4E2M1FN, without a word") from e
        if (silent or "tileiras crashed (SIGABRT)" in str(e)) and _scan_reshaped(case.text):
            raise KnownDefect(f"{arch}: a scan's result reshaped or packed, without a word") from e
        raise
    return True


def parse_weights(items: list[str]) -> dict[str, float]:
    """`--weight KIND=W` arguments as kernel()'s weights; ValueError names a wrong one."""
    weights = {}
    for item in items:
        kind, _, value = item.partition("=")
        try:
            weights[kind] = float(value)
        except ValueError:
            raise ValueError(f"--weight {item}: give KIND=W with a number W") from None
        if kind not in Gen.OPS or weights[kind] < 0:
            raise ValueError(f"--weight {item}: KIND is one of {', '.join(Gen.OPS)}, W a number >= 0")
    return weights


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.lower.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0:100", help="START:END (default 0:100)")
    p.add_argument("--compile", metavar="ARCH", help="also compile each kernel to a cubin for ARCH")
    p.add_argument(
        "--bytecode",
        action="store_true",
        help="instead: the kernels through our bytecode writer and NVIDIA's tileirdisasm",
    )
    p.add_argument(
        "--tileiras",
        metavar="ARCH[,ARCH]",
        help="instead: NVIDIA's tileiras compiles each kernel (our bytecode) for each ARCH",
    )
    p.add_argument("--keep", metavar="DIR", default="fuzz-failures", help="where failing kernels are written")
    p.add_argument(
        "--weight",
        metavar="KIND=W",
        action="append",
        default=[],
        help="the weight W with which a kind of op is drawn (defaults: "
        + ", ".join(f"{k}={v:g}" for k, v in Gen.OPS.items())
        + "), to aim a campaign at some ops; the seeds then name other kernels",
    )
    p.add_argument(
        "--hints",
        action="store_true",
        help="with random optimization hints (warps, clusters, occupancy, allow_tma, latency): the seeds' kernels "
        "otherwise the same",
    )
    p.add_argument(
        "--asm",
        action="store_true",
        help="also draw what Triton's interpreter cannot run (inline PTX, libdevice, prints; other kernels): "
        "with --compile ARCH, --bytecode or --tileiras, which then only compile",
    )
    p.add_argument(
        "--large",
        action="store_true",
        help="tiles of 2^13 or 2^14 elements and elementwise ops only (other kernels), which the lowering strip-mines",
    )
    p.add_argument("--print", action="store_true", help="print each seed's kernel and stop")
    a = p.parse_args(argv)
    try:
        weights = parse_weights(a.weight)
    except ValueError as e:
        p.error(str(e))
    if a.asm and not (a.compile or a.bytecode or a.tileiras or a.print):
        p.error("--asm kernels do not run under Triton's interpreter: give --compile ARCH, --bytecode or --tileiras")
    start, _, end = a.seeds.partition(":")
    seeds = range(int(start), int(end or int(start) + 1))
    if a.tileiras and not a.print:
        from compiler.runtime import find_tileiras
        from compiler.runtime.tileiras import INSTALL_TILEIRAS

        if find_tileiras() is None:
            print(f"--tileiras needs NVIDIA's tileiras, which was not found ({INSTALL_TILEIRAS})", file=sys.stderr)
            return 2
    if a.print:
        for s in seeds:
            print(f"// seed {s}\n{kernel(s, weights=weights, hints=a.hints, asm=a.asm, large=a.large).text}")
        return 0
    import atexit
    import os
    import shutil
    import tempfile
    import warnings

    warnings.simplefilter("ignore", RuntimeWarning)  # numpy's, for the NaNs and infs the kernels make

    if not os.environ.get("TILEIR_CACHE_DIR"):  # a cache of its own (~100 MB for 1,000 seeds), removed at the end
        os.environ["TILEIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tileir-fuzz-")
        atexit.register(shutil.rmtree, os.environ["TILEIR_CACHE_DIR"], ignore_errors=True)
    keep = Path(a.keep)
    failed = known = 0
    t0 = time.monotonic()
    aimed = f" (--weight {' --weight '.join(a.weight)})" if a.weight else ""
    aimed += (" --hints" if a.hints else "") + (" --asm" if a.asm else "")  # (tests/lower/reduce.py reads them)
    aimed += " --large" if a.large else ""
    slowest = (0.0, -1)  # (seconds, seed) of the slowest --compile
    spilled: list[str] = []  # seeds whose cubin spills (a layout gone wrong, as often as registers running out)
    for i, s in enumerate(seeds):
        case = kernel(s, weights=weights, hints=a.hints, asm=a.asm, large=a.large)
        try:
            if a.bytecode:
                check_bytecode(case)
            elif a.tileiras:
                for arch in a.tileiras.split(","):
                    check_tileiras(case, arch)  # its message names the architecture
            else:
                seconds, spills = check_compiles(case, a.compile) if a.asm else check(case, a.compile)
                slowest = max(slowest, (seconds, s))
                if spills:
                    spilled.append(f"{s} ({spills} B)")
        except KnownDefect as e:
            known += 1
            print(f"seed {s}: a known defect of tileiras' ({e}), not counted", flush=True)
        except BaseException as e:  # noqa: BLE001 - a campaign reports every failure and goes on
            if isinstance(e, KeyboardInterrupt):
                raise
            failed += 1
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"seed{s}.tileir").write_text(f"// seed {s}{aimed}: {type(e).__name__}: {e}\n{case.text}")
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            print(f"seed {s}: {type(e).__name__}: {first[:300]}", flush=True)
        if (i + 1) % 25 == 0:
            print(f"  {i + 1} seeds, {failed} failed, {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    # A compile far slower than the others is a Triton pathology in the making (one that never
    # ended is a failure: $TILEIR_COMPILE_TIMEOUT).
    slow = f"; slowest compile: seed {slowest[1]}, {slowest[0]:.1f} s" if slowest[0] else ""
    slow += f"; spilling: seed {', '.join(spilled)}" if spilled else ""
    also = f", {known} met a known defect of tileiras'" if known else ""
    print(f"{len(seeds)} seeds, {failed} failed{also} ({time.monotonic() - t0:.0f} s{slow})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
