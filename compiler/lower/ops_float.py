"""Floating-point arithmetic, comparison, min/max: absf addf subf mulf divf sqrt fma negf ceil
floor remf cmpf maxf minf.

Exactness: every op here is bitwise equal to the CPU interpreter (`compiler/interp/
ops_float.py`, `rounding.py`: correctly rounded in every mode) on the GPU, with three
exceptions that only Triton 3.6's *interpreter* cannot reproduce (the GPU result is exact):
`fma` on f64 in round-to-nearest (a real fused `tl.fma`; the interpreter computes x*y+z
with two roundings, and f64 has no wider type to do better: f32 takes the exact f64 TwoSum
path there, `fma_f32`), f64 in a directed rounding mode (inline PTX), and `remf` on f64
(libdevice's fmod). NaN payloads are not specified (the interpreter's are NumPy's);
maxf/minf give the canonical NaN as the interpreter does.

Round to nearest even (the default, and `approx`/`full`, which the interpreter computes
exactly too, but for f32 `divf` `approx` with 2^126 < |rhs|: 0, as the op reference says):

    f32, f64    `+ - *` (add.rn / sub.rn / mul.rn; the build disables FMA contraction),
                `tl.div_rn` / `tl.sqrt_rn` for f32 (Triton's `/` and `tl.sqrt` on f32 are
                approximate), `/` and `tl.sqrt` on f64 (div.rn.f64 / sqrt.rn.f64), `tl.fma`.
    f16         `+ - *` natively (add.rn.f16 ...; NumPy float16 in the interpreter, both
                correctly rounded); `/` and sqrt in f32 with div_rn / sqrt_rn, rounded to
                f16: innocuous double rounding, f32 has 24 >= 2*11+2 bits (Figueroa).
                fma: (a*b + c) in f64 rounded to f16: the product is exact, and the f64 sum
                is either exact or so lopsided that it cannot reach an f16 midpoint (the
                f16 exponent range is narrow), so a single rounding happens in effect;
                on the GPU fma.rn.f16.
    bf16        computed in f32 and rounded to bf16 (ops_conversion): innocuous double
                rounding for + - * / sqrt (24 >= 2*8+2). Triton 3.6's interpreter computes
                bf16 arithmetic on the raw bits, so it runs that formulation; on the GPU
                `+ - *` are Triton's own bf16 operations (`_bf16_native`: add/sub/mul.rn.bf16
                from sm_90, fma.rn.bf16 on sm_80), correctly rounded too. fma: the f64
                TwoSum path below, in nearest mode; on the GPU fma.rn.bf16.

Directed rounding (`rounding<zero|negative_inf|positive_inf>`):

    f16, bf16,  pure Triton, exact, runs in the interpreter: the operation in f64 gives the
    f32         float nearest to the exact result plus the sign of the rest, and
                `ops_conversion.round_helper` rounds that into the format. Sums (add, sub,
                fma) carry a TwoSum residual (exact in f64 for these inputs, no overflow);
                products are exact in f64; an f64 quotient or square root of 24-bit inputs
                is never a 24-bit grid point unless exact (53 >= 2*24+2), so it needs none.
                An exact zero sum is -0 toward negative infinity (IEEE 754), +0 otherwise
                unless both addends are -0. That is Triton's interpreter's path; on the GPU
                f32 is PTX's `{op}.{rz,rm,rp}.f32` and f16/bf16 that, then `cvt` in the mode
                (`_arith`).
    f64         inline PTX `{add,sub,mul,div,sqrt,fma}.{rz,rm,rp}.f64`: exact by the
                instruction's definition; the interpreter cannot run it (e.uses_inline_asm).

`flush_to_zero` (f32 only): subnormal inputs become zeros of their sign, and a result below
the smallest normal after rounding is flushed (interp/rounding.py's order), in pure Triton.

absf, negf  clear / flip the sign bit (Triton's `-x` is 0 - x: wrong for zeros, and the 3.6
            interpreter gets it wrong too).
ceil floor  cvt.rpi / cvt.rmi on f32 and f64 (tl.ceil / tl.floor under Triton's interpreter: see
            `ptx_unary`); f16 and bf16 through f32
            (the result is representable in the source format: exact).
remf        C's fmod, exact. On the GPU libdevice.fmod (fmodf: exact; f16/bf16 through f32).
            Under Triton's interpreter f16, bf16, f32: integer long division on the significands,
            (mx * 2^(ex-ey)) mod my, shifting in chunks that keep the int64 product exact
            (f16 one step, bf16 five, f32 seven, unrolled); the remainder times 2^ey is
            representable, so the final conversion is exact. f64: libdevice.fmod (exact;
            not runnable in Triton's interpreter). Triton's `%` is x - trunc(x/y)*y, not exact.
cmpf        ordered predicates are IEEE's (false with NaN); not_equal ordered is
            `(a < b) | (a > b)`; unordered predicates are the negation of the opposite ordered
            one (true with NaN). bf16 is compared in f32.
maxf minf   written with `tl.where` (PTX max.f32 and the 3.6 interpreter's np.maximum differ
            on NaN): a number beats NaN, equal values take (max) the AND / (min) the OR of
            the two bit patterns (+0 beats -0), NaN results are the canonical NaN (all NaN
            inputs, or any NaN with `propagate_nan`); on the GPU f32/f16/bf16 PTX's max/min,
            which is that rule (`_minmax_source`).
"""

from __future__ import annotations

from . import tltypes
from .codegen import GPU_ONLY, OpEmit
from .ops_conversion import (
    BITS_OF,
    CANONICAL_NAN,
    bf16_to_f32,
    f32_to_bf16,
    float_name,
    from_f32_rn,
    mode_of,
    residual_sign,
    rounded,
    to_f32,
    to_f64,
)
from .ops_integer import i1_result
from .ptx import REGISTERS, inline_ptx
from .registry import emitter

_DTYPE = {"f16": "tl.float16", "bf16": "tl.bfloat16", "f32": "tl.float32", "f64": "tl.float64"}
_UBITS = {16: "tl.uint16", 32: "tl.uint32", 64: "tl.uint64"}

_FLUSH_F32 = """@triton.jit
def {name}(x):
    # flush_to_zero: an f32 subnormal becomes a zero of its sign.
    b = x.to(tl.uint32, bitcast=True)
    return tl.where((b & 0x7F800000) == 0, b & 0x80000000, b).to(tl.float32, bitcast=True)
"""


def flush_helper(e: OpEmit) -> str:
    """The name of the f32 flush_to_zero helper (defined once per module)."""
    return e.helper("_fa_flush_f32", _FLUSH_F32)


def flush(e: OpEmit, x: str) -> str:
    return f"{flush_helper(e)}({x})"


# One PTX instruction on the GPU where `tl` would reach it through libdevice: Triton links
# libdevice into any module that calls one of its functions and optimises the whole of it,
# which costs ~55 ms of every such compile (measured: a 1024-element tl.floor kernel 150 ms,
# the same without libdevice 95 ms) for the one instruction `tl.floor` / `tl.exp2` end in.
_PTX_UNARY = {
    ("floor", "f32"): "cvt.rmi.f32.f32",
    ("ceil", "f32"): "cvt.rpi.f32.f32",
    ("floor", "f64"): "cvt.rmi.f64.f64",
    ("ceil", "f64"): "cvt.rpi.f64.f64",
    ("exp2", "f32"): "ex2.approx.f32",
    ("rsqrt", "f32"): "rsqrt.approx.f32",
}
# PTX has no 8-bit registers: an i8 helper's instruction works on four bytes in a 32-bit one.
_PACK = {"i8": 4}


def gpu_instruction(e: OpEmit, name: str, instruction: str, interpreted: str, t: str, pure: bool = True) -> str:
    """The name of a helper that is one PTX `instruction` on `t` (f32/f64/i8/i16/i32/i64) on
    the GPU and `interpreted` (an expression of `x`) under Triton's interpreter, which has no
    inline PTX. `pure=False`: an instruction Triton may not move, merge or look through."""
    asm = f"{inline_ptx(f'{instruction} $0, $1;', t, [t], ['x'], pure, _PACK.get(t, 1))}  {GPU_ONLY}"
    return e.split_helper(name, interpreted, asm, note=f"{instruction} on the GPU")


def fence(e: OpEmit, x: str, dtype: str, bits: int, pure: bool = False) -> str:
    """`x` (of Triton type `dtype`, `bits` wide) through a register move Triton may not move,
    merge or look through: a layout or a conversion stops there (ops_mma's f64 operands and
    i8 batch items, ops_memory's atomic results). Values pass as their bits; the identity
    under Triton's interpreter. `pure`: a move that may be moved and merged, which only hides
    the value (from constant folding: ops_math)."""
    ity = REGISTERS[f"i{bits}"][1]
    move = "mov.b32" if bits == 8 else f"mov.b{bits}"  # (bytes: four in one register, _PACK)
    name = f"_opaque{bits}" if pure else f"_fence{bits}"
    helper = gpu_instruction(e, name, move, "x", f"i{bits}", pure=pure)
    if dtype == ity:
        return f"{helper}({x})"
    return f"{helper}({x}.to({ity}, bitcast=True)).to({dtype}, bitcast=True)"


def fma_f32(e: OpEmit) -> str:
    """The helper of a fused f32 multiply-add in round-to-nearest: `tl.fma` (fma.rn.f32) on
    the GPU; under Triton's interpreter, which computes `tl.fma` as x*y+z with two roundings,
    the exact f64 TwoSum path of the directed modes (module doc), rounded to nearest."""
    exact = _directed_helper(e, "fma", "f32", "rn", False)
    return e.split_helper(
        "_fp_fma_f32", f"{exact}(x, y, z)", "tl.fma(x, y, z)", note="fma.rn.f32 on the GPU", params="x, y, z"
    )


def ptx_unary(e: OpEmit, fn: str, t: str, ftz: bool = False) -> str:
    """The helper computing `tl.<fn>` on `t` (f32/f64) without libdevice (`_PTX_UNARY`);
    `ftz`: the instruction's .ftz form, which flushes its subnormal input and result (one MUFU
    for ex2 and rsqrt), the flushes spelled out under Triton's interpreter."""
    if not ftz:
        return gpu_instruction(e, f"_fp_{fn}_{t}", _PTX_UNARY[fn, t], f"tl.{fn}(x)", t)
    instruction = _PTX_UNARY[fn, t].replace(f".{t}", f".ftz.{t}")
    f = flush_helper(e)
    return gpu_instruction(e, f"_fp_{fn}_ftz_{t}", instruction, f"{f}(tl.{fn}({f}(x)))", t)


def up32(e: OpEmit, x: str, t: str) -> str:
    """An f16/bf16/f32 operand as f32 (exact)."""
    if t == "f32":
        return x
    return f"{x}.to(tl.float32)" if t == "f16" else bf16_to_f32(e, x)


def down32(e: OpEmit, x: str, t: str) -> str:
    """An f32 value rounded to nearest even into f16/bf16 (identity for f32)."""
    if t == "f32":
        return x
    return f"{x}.to(tl.float16)" if t == "f16" else f32_to_bf16(e, x)


def flushes_subnormals(e: OpEmit, t: str) -> bool:
    """Whether the op flushes subnormals (its `flush_to_zero` flag, which only f32 takes)."""
    if not e.flag("flush_to_zero"):
        return False
    if t != "f32":
        raise e.error(f"flush_to_zero applies to f32 only, not {t}")
    return True


def _type(e: OpEmit) -> str:
    t = float_name(e, e.result_types[0])
    if t not in _DTYPE:
        raise e.error(f"{e.op.mnemonic} on {t} tiles is not supported")
    return t


# -- arithmetic -----------------------------------------------------------------------------

_ARITY = {"addf": 2, "subf": 2, "mulf": 2, "divf": 2, "sqrt": 1, "fma": 3}
_NATIVE = {"addf": "{0} + {1}", "subf": "{0} - {1}", "mulf": "{0} * {1}"}
_PTX = {"addf": "add", "subf": "sub", "mulf": "mul", "divf": "div", "sqrt": "sqrt", "fma": "fma"}


@emitter("addf", "subf", "mulf", "divf", "sqrt", "fma")
def _arith(e: OpEmit) -> None:
    op = e.op.mnemonic
    t = _type(e)
    mode = mode_of(e)
    ftz = flushes_subnormals(e, t)
    args = e.operands[: _ARITY[op]]
    if t == "f64":
        if mode == "rn":
            e.assign(_nearest(e, op, args, t))
        else:
            e.uses_inline_asm()
            e.assign(_ptx_arith(e, op, t, mode, args))
        return
    if ftz:
        args = [flush(e, a) for a in args]
    if mode == "rn" and not (op == "fma" and t == "bf16"):
        expr = _nearest(e, op, args, t)
        if op == "divf" and t == "f32" and e.keyword("rounding_mode") == "approx":
            # The documented result for 2^126 < |rhs| (compiler/interp/ops_float.py,
            # approx_beyond_2_126): lhs times a zero of rhs's sign.
            lhs, rhs = args
            beyond = f"(tl.abs({rhs}) > 8.507059173023462e+37) & (tl.abs({rhs}) <= 3.4028234663852886e+38)"
            # (The zero's sign is set on the bits: Triton folds a literal -0.0 to +0.0.)
            zero = (
                f"(({lhs} * 0.0).to(tl.uint32, bitcast=True) ^ ({rhs}.to(tl.uint32, bitcast=True) & 0x80000000))"
                ".to(tl.float32, bitcast=True)"
            )
            expr = f"tl.where({beyond}, {zero}, {expr})"
        e.assign(flush(e, expr) if ftz else expr)
        return
    # On the GPU the instruction itself, the f64 path with its residual (~40 instructions)
    # under Triton's interpreter: PTX's f32 add/sub/mul/div/sqrt/fma round in every IEEE
    # mode, and fma.rn.bf16 (sm_80 and newer) is one rounding of the exact a*b+c (tileiras
    # uses the instructions too). Not PTX's .ftz: it flushes before rounding (tileiras' FTZ
    # instructions flush 2^-126 - 2^-150 to 0 on an H200, test_float's
    # test_flush_to_zero_f32), where the op rounds first; the inputs come flushed, the result
    # is flushed after. (Reached only in a directed mode, or for bf16 fma: rn returned above.)
    params = ["a", "b", "c"][: _ARITY[op]]
    result = _ptx_arith(e, op, t, mode, params)
    gpu = f"{flush(e, result) if ftz else result}  {GPU_ONLY}"
    interpreted = f"{_directed_helper(e, op, t, mode, ftz)}({', '.join(params)})"
    note = f"{op} of {t} rounded {mode}{' ftz' if ftz else ''}: PTX's on the GPU"
    fn = e.split_helper(f"_fa_{op}_{t}_{mode}{'_ftz' if ftz else ''}_gpu", interpreted, gpu, note, ", ".join(params))
    e.assign(f"{fn}({', '.join(args)})")


def _ptx_arith(e: OpEmit, op: str, t: str, mode: str, args: list[str]) -> str:
    """Inline PTX computing `op` on `t` rounded `mode` (rn, rz, rm, rp) of `args`. f16 and
    bf16 in a directed mode: the f32 instruction in that mode on the widened operands, then
    cvt in the same mode, one rounding in effect (their values are f32 values: rounding
    toward a side onto the f32 grid, then onto the coarser grid within it, rounds toward that
    side once; products of the operands are exact in f32)."""
    regs = ", ".join(f"${i + 1}" for i in range(len(args)))
    if t in ("f16", "bf16") and mode != "rn":
        asm = f"{{ .reg .f32 r; {_PTX[op]}.{mode}.f32 r, {regs}; cvt.{mode}.{t}.f32 $0, r; }}"
        args, inputs = [up32(e, a, t) for a in args], "f32"
    else:
        asm, inputs = f"{_PTX[op]}.{mode}.{t} $0, {regs};", t
    return inline_ptx(asm, t, [inputs] * len(args), args)


def _nearest(e: OpEmit, op: str, args: list[str], t: str) -> str:
    """Round-to-nearest-even `op` (module doc)."""
    if op == "fma":
        if t == "f16":
            # On the GPU one fma.rn.f16 (HFMA2), the f64 formulation under Triton's interpreter
            wide = "(a.to(tl.float64) * b.to(tl.float64) + c.to(tl.float64)).to(tl.float16)"
            fn = e.split_helper("_fa_fma_f16", wide, "tl.fma(a, b, c)", "fma of f16: fma.rn.f16 on the GPU", "a, b, c")
            return f"{fn}({', '.join(args)})"
        if t == "f32":
            return f"{fma_f32(e)}({', '.join(args)})"
        return f"tl.fma({', '.join(args)})"
    if t in ("f32", "f64") or (t == "f16" and op in _NATIVE):
        if op in _NATIVE:
            return _NATIVE[op].format(*args)
        if t == "f64":
            return f"{args[0]} / {args[1]}" if op == "divf" else f"tl.sqrt({args[0]})"
        return f"tl.div_rn({args[0]}, {args[1]})" if op == "divf" else f"tl.sqrt_rn({args[0]})"
    if t == "bf16" and op in _NATIVE:
        return f"{_bf16_native(e, op)}({', '.join(args)})"
    wide = [up32(e, a, t) for a in args]
    if op in _NATIVE:
        expr = _NATIVE[op].format(*wide)
    elif op == "divf":
        expr = f"tl.div_rn({wide[0]}, {wide[1]})"
    else:
        expr = f"tl.sqrt_rn({wide[0]})"
    return down32(e, expr, t)


def _bf16_native(e: OpEmit, op: str) -> str:
    """The helper of a bf16 `+ - *` (nearest even): on the GPU Triton's own bf16 operation,
    one correctly rounded instruction for two values (add/sub/mul.rn.bf16x2 from sm_90,
    fma.rn.bf16x2 on sm_80: HADD2/HMUL2/HFMA2.BF16) where the f32 formulation takes a shift
    per operand, the f32 operation and a conversion back; both are the correctly rounded
    result (module doc: innocuous double rounding). Under Triton's interpreter, which
    computes bf16 arithmetic on the raw bits, the f32 formulation."""
    portable = down32(e, _NATIVE[op].format(up32(e, "a", "bf16"), up32(e, "b", "bf16")), "bf16")
    native = _NATIVE[op].format("a", "b")
    return e.split_helper(f"_fa_{op}_bf16", portable, native, f"{op} of bf16: Triton's on the GPU", "a, b")


def _directed_helper(e: OpEmit, op: str, t: str, mode: str, ftz: bool) -> str:
    """A jitted helper computing `op` in f64 and rounding the result (with its residual)
    into `t` (module doc)."""
    name = f"_fa_{op}_{t}_{mode}{'_ftz' if ftz else ''}"
    params = ["a", "b", "c"][: _ARITY[op]]
    lines = ["@triton.jit", f"def {{name}}({', '.join(params)}):"]
    lines.append(f"    # {op} on {t} rounded {mode}: f64 value + residual sign, then exact rounding.")
    x = [f"x{i}" for i in range(len(params))]
    for xi, p in zip(x, params, strict=True):
        lines.append(f"    {xi} = {to_f64(e, p, t)}")
    residual = None
    if op in ("addf", "subf", "fma"):
        if op == "subf":  # x0 - x1 = x0 + (-x1), the sign flipped on the bits (exact)
            lines.append("    x1 = (x1.to(tl.uint64, bitcast=True) ^ 0x8000000000000000).to(tl.float64, bitcast=True)")
        if op == "fma":
            lines.append("    p = x0 * x1  # exact: at most 48 significant bits")
            u, v = "p", "x2"
        else:
            u, v = "x0", "x1"
        lines += [
            f"    s = {u} + {v}",
            f"    z = s - {u}",
            f"    err = ({u} - (s - z)) + ({v} - z)  # TwoSum: s + err is the exact sum",
            f"    r = {residual_sign('err')}",
        ]
        if mode == "rm":
            lines.append(
                f"    both_pos_zero = ({u}.to(tl.uint64, bitcast=True) | {v}.to(tl.uint64, bitcast=True)) == 0"
            )
            lines.append("    neg_zero = tl.full((), 0x8000000000000000, tl.uint64).to(tl.float64, bitcast=True)")
            lines.append("    s = tl.where((s == 0) & (r == 0) & ~both_pos_zero, neg_zero, s)  # exact zero: -0")
        residual = "r"
    elif op == "mulf":
        lines.append("    s = x0 * x1  # exact")
    elif op == "divf":
        lines.append("    s = x0 / x1  # never a grid point of the format unless exact")
    else:
        lines.append("    s = tl.sqrt(x0)  # never a grid point of the format unless exact")
    lines.append(f"    return {rounded(e, 's', 64, t, mode, residual, ftz)}")
    return e.helper(name, "\n".join(lines) + "\n")


# -- sign, rounding to integers -------------------------------------------------------------


@emitter("absf", "negf")
def _sign_bit(e: OpEmit) -> None:
    (x,) = e.operands
    t = _type(e)
    bits = BITS_OF[t]
    sign = 1 << (bits - 1)
    op = f"& {sign - 1}" if e.op.mnemonic == "absf" else f"^ {sign}"
    e.assign(f"({x}.to({_UBITS[bits]}, bitcast=True) {op}).to({_DTYPE[t]}, bitcast=True)")


@emitter("ceil", "floor")
def _ceil_floor(e: OpEmit) -> None:
    (x,) = e.operands
    t = _type(e)
    if t in ("f32", "f64"):
        e.assign(f"{ptx_unary(e, e.op.mnemonic, t)}({x})")
    else:  # exact: an integral value of the format is representable in it
        e.assign(down32(e, f"{ptx_unary(e, e.op.mnemonic, 'f32')}({up32(e, x, t)})", t))


# -- remf -----------------------------------------------------------------------------------

# (bits, mantissa bits, exponent field mask) of the formats remf computes with integers.
_REM_FORMATS = {"f16": (16, 10, 0x1F), "bf16": (16, 7, 0xFF), "f32": (32, 23, 0xFF)}


def _rem_source(t: str) -> str:
    bits, mw, emask = _REM_FORMATS[t]
    u = _UBITS[bits]
    sign = 1 << (bits - 1)
    chunk = 62 - mw  # r < 2^(mw+1): r << chunk stays below 2^63
    steps = max(1, -(-(emask - 2) // chunk))  # exponent differences up to emask - 2
    bias = emask >> 1
    if t == "f32":
        back = "v.to(tl.float32).to(tl.uint32, bitcast=True)"
    elif t == "f16":
        back = "v.to(tl.float16).to(tl.uint16, bitcast=True)"
    else:  # exact in f32, and the low 16 bits are zero
        back = "(v.to(tl.float32).to(tl.uint32, bitcast=True) >> 16).to(tl.uint16)"
    return f"""@triton.jit
def {{name}}(x, y):
    # fmod for {t}, exact: (mx * 2^(ex - ey)) mod my by integer long division.
    bx = x.to({u}, bitcast=True)
    by = y.to({u}, bitcast=True)
    ax = bx & {sign - 1}
    ay = by & {sign - 1}
    ex = tl.maximum((ax >> {mw}).to(tl.int64), 1)
    ey = tl.maximum((ay >> {mw}).to(tl.int64), 1)
    mx = (ax & {(1 << mw) - 1}).to(tl.int64) + tl.where((ax >> {mw}) != 0, {1 << mw}, 0).to(tl.int64)
    my = (ay & {(1 << mw) - 1}).to(tl.int64) + tl.where((ay >> {mw}) != 0, {1 << mw}, 0).to(tl.int64)
    my = tl.where(my == 0, 1, my)
    d = tl.maximum(ex - ey, 0)
    r = mx % my
    for _ in tl.static_range({steps}):
        k = tl.minimum(d, {chunk})
        r = (r << k) % my
        d = d - k
    # r * 2^(ey - bias - mw) is representable in {t}: build it exactly in f64
    v = r.to(tl.float64) * ((ey - {bias + mw} + 1023) << 52).to(tl.float64, bitcast=True)
    out = {back} | (bx & {sign})
    out = tl.where(ax < ay, bx, out)  # |x| < |y| (an infinite y included): x
    nan = (ax > {emask << mw}) | (ay > {emask << mw}) | (ax == {emask << mw}) | (ay == 0)
    out = tl.where(nan, tl.full((), {CANONICAL_NAN[t]}, {u}), out)
    return out.to({_DTYPE[t]}, bitcast=True)
"""


@emitter("remf")
def _remf(e: OpEmit) -> None:
    a, b = e.operands[:2]
    t = _type(e)
    if t == "f64":
        e.assign(f"libdevice.fmod({a}, {b})")
        return
    fn = e.helper(f"_fa_rem_{t}", _rem_source(t))
    # On the GPU libdevice's fmodf (exact, as every fmod is; f16 and bf16 widened to f32 and
    # back, both exact): a division with a correction, and a loop of them only for quotients
    # past 2^23, where the integer long division takes 64-bit remainders (a software routine
    # each): a 256-element f32 remf on sm_90 was 696 SASS instructions (tileiras' 168).
    x, y = up32(e, "x", t), up32(e, "y", t)
    gpu = f"{down32(e, f'libdevice.fmod({x}, {y})', t)}  {GPU_ONLY}"
    fn = e.split_helper(f"_fa_fmod_{t}", f"{fn}(x, y)", gpu, f"fmod of {t}: libdevice's on the GPU", "x, y")
    e.assign(f"{fn}({a}, {b})")


# -- comparisons ----------------------------------------------------------------------------

_ORDERED = {
    "equal": "{a} == {b}",
    "not_equal": "({a} < {b}) | ({a} > {b})",
    "less_than": "{a} < {b}",
    "less_than_or_equal": "{a} <= {b}",
    "greater_than": "{a} > {b}",
    "greater_than_or_equal": "{a} >= {b}",
}
_OPPOSITE = {
    "equal": "not_equal",
    "not_equal": "equal",
    "less_than": "greater_than_or_equal",
    "less_than_or_equal": "greater_than",
    "greater_than": "less_than_or_equal",
    "greater_than_or_equal": "less_than",
}


@emitter("cmpf")
def _cmpf(e: OpEmit) -> None:
    a, b = e.operands[:2]
    t = float_name(e, e.operand_types[0])
    if t == "bf16":
        # On the GPU the bf16 values themselves: setp.bf16 from sm_90 (two shifts an element
        # fewer), Triton's exact widening before sm_90. Triton's interpreter compares them in
        # f32 (it cannot convert bf16): the same answers, as widening is exact.
        gpu = f"x  {GPU_ONLY}"
        wide = e.split_helper("_fc_bf16_compared", up32(e, "x", t), gpu, "bf16 compared as itself on the GPU")
        a, b = f"{wide}({a})", f"{wide}({b})"
    pred = e.keyword("comparison_predicate", "equal") or "equal"
    ordered = (e.keyword("comparison_ordering", "ordered") or "ordered") == "ordered"
    if pred not in _ORDERED:
        raise e.error(f"unknown comparison predicate '{pred}'")
    if ordered:
        e.assign(i1_result(e, _ORDERED[pred].format(a=a, b=b)))
    else:
        e.assign(i1_result(e, f"~({_ORDERED[_OPPOSITE[pred]].format(a=a, b=b)})"))


# -- maxf, minf -----------------------------------------------------------------------------


def _minmax_source(t: str, is_max: bool, propagate: bool) -> str:
    u = _UBITS[BITS_OF[t]]
    pick, join = (">", "&") if is_max else ("<", "|")
    nan = "(a != a) | (b != b)" if propagate else "(a != a) & (b != b)"
    if t == "bf16":
        # compared in f32, selected on the bf16 bits
        head = [
            "    ab = x.to(tl.uint16, bitcast=True)",
            "    bb = y.to(tl.uint16, bitcast=True)",
            "    a = (ab.to(tl.uint32) << 16).to(tl.float32, bitcast=True)",
            "    b = (bb.to(tl.uint32) << 16).to(tl.float32, bitcast=True)",
        ]
    else:
        head = [
            "    a = x",
            "    b = y",
            f"    ab = a.to({u}, bitcast=True)",
            f"    bb = b.to({u}, bitcast=True)",
        ]
    body = [
        f"    r = tl.where(a {pick} b, ab, bb)",
        "    r = tl.where(b != b, ab, r)  # a number beats NaN",
        f"    r = tl.where(a == b, ab {join} bb, r)  # equal values: {'+0 beats -0' if is_max else '-0 beats +0'}",
        f"    r = tl.where({nan}, tl.full((), {CANONICAL_NAN[t]}, {u}), r)",
        f"    out = r.to({_DTYPE[t]}, bitcast=True)",
    ]
    what = ("max" if is_max else "min") + (" propagating NaN" if propagate else " (NaN loses)")
    if t == "f64":
        lines = ["@triton.jit", "def {name}(x, y):", f"    # {what} of {t}", *head, *body, "    return out"]
        return "\n".join(lines) + "\n"
    # f32, f16, bf16 on the GPU: PTX max/min (.NaN with propagate_nan) is this op exactly (a
    # number beats NaN, -0 < +0, NaN results canonical: tileiras' FMNMX / HMNMX2 results
    # matched the interpreter's bit for bit on an H200, test_float's test_maxf_minf), one
    # instruction (two 16-bit values an HMNMX2) instead of a dozen. f64 has none (DSETP).
    nan_mode = ", propagate_nan=tl.PropagateNan.ALL" if propagate else ""
    native = f"tl.{'maximum' if is_max else 'minimum'}(x, y{nan_mode})"
    if t == "bf16":  # (Triton's maximum/minimum widen bf16 to f32: the instruction itself)
        # (one value an asm: a reduction's combiner sees one element; ptxas pairs them)
        native = inline_ptx(
            f"{'max' if is_max else 'min'}{'.NaN' if propagate else ''}.bf16 $0, $1, $2;", t, [t, t], ["x", "y"]
        )
    return "\n".join([
        "@triton.jit",
        "def {name}(x, y):",
        f"    # {what} of {t}",
        "    if INTERPRETED:",
        *("    " + line for line in head + body),
        "    else:",
        f"        out = {native}  {GPU_ONLY}",
        "    return out",
    ]) + "\n"  # fmt: skip


@emitter("maxf", "minf")
def _maxf_minf(e: OpEmit) -> None:
    a, b = e.operands[:2]
    t = _type(e)
    is_max = e.op.mnemonic == "maxf"
    propagate = e.flag("propagate_nan")
    if flushes_subnormals(e, t):
        a, b = flush(e, a), flush(e, b)
    name = f"_fa_{'max' if is_max else 'min'}_{t}{'_nan' if propagate else ''}"
    fn = e.helper(name, _minmax_source(t, is_max, propagate))
    e.assign(f"{fn}({a}, {b})")


@emitter("fpowi")
def _fpowi(e: OpEmit) -> None:
    """tileiras' repeated squaring (see the op's doc; the interpreter does the same): a loop
    over the exponent's bits with the product and the square carried, in f32 (f64 for f64),
    each multiply rounded to nearest; a negative exponent takes the correctly rounded
    reciprocal (tl.div_rn in f32; `/` is IEEE division in f64)."""
    x, n = e.operands
    t = _type(e)
    n_el = tltypes.element_of(e.operand_types[1])
    width = n_el.width  # i1, i8, i16 or i32 (the op's constraint)
    wide = "f64" if t == "f64" else "f32"
    recip = "1.0 / r" if t == "f64" else "tl.div_rn(tl.full((), 1.0, tl.float32), r)"
    sign = "-(n.to(tl.int32))" if width == 1 else "n.to(tl.int32)"
    loop = (
        [
            f"    for _ in range({width - 1}):",
            "        a = a * a",
            "        r = tl.where((m & 1) != 0, r * a, r)",
            "        m = m >> 1",
        ]
        if width > 1
        else []
    )
    fn = e.helper(
        f"_fpowi_{wide}_i{width}",
        "\n".join([
            "@triton.jit",
            "def {name}(x, n):",
            f"    # x ** n for {wide} x and i{width} n, by repeated squaring (tileiras' order)",
            "    a = x",
            f"    k = {sign}",
            "    m = tl.abs(k).to(tl.uint32, bitcast=True)",
            "    r = tl.where((m & 1) != 0, a, tl.full((), 1.0, a.dtype))",
            "    m = m >> 1",
            *loop,
            f"    r = tl.where(k < 0, {recip}, r)",
            "    return r",
        ]) + "\n",
    )  # fmt: skip
    # f16 and bf16 in f32, rounded once at the end (the exact conversions: Triton 3.6's
    # interpreter truncates f32 -> bf16)
    if t == wide:
        e.assign(f"{fn}({x}, {n})")
    else:
        e.assign(from_f32_rn(e, f"{fn}({to_f32(e, x, t)}, {n})", t))
