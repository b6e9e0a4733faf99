"""Math functions: exp exp2 log log2 sin cos tan sinh cosh tanh rsqrt pow atan2.

The CPU interpreter evaluates them in f64 with NumPy and rounds once (f16/bf16/f32 results
within about half an ulp of the exact value, f64 ones within glibc's 1-2 ulp). The GPU
cannot afford that, so these are not bitwise equal: the bounds below are ulp distances to
the CPU interpreter's result, on the GPU. f16 and bf16 are evaluated in f32 and rounded to
nearest (the op reference says so too), which stays within 1 ulp of the interpreter's
f16/bf16 result: the f32 error is far below half an f16/bf16 ulp.

Triton 3.6 compiles `tl.log`, `tl.log2`, `tl.sin`, `tl.cos`, `tl.exp2` (f32 and f64) and
`tl.exp` (f64) to exactly the PTX of the matching libdevice functions (checked: identical
instruction streams), and its interpreter runs them with NumPy. Those are used wherever they
are accurate, so the kernels also run under Triton's interpreter. libdevice calls (which
the interpreter cannot run) remain for tan, sinh, cosh, tanh, pow and atan2. f32 exp2 and
the floor inside exp are the one instruction libdevice ends in, written as inline PTX
(`ops_float.ptx_unary`: linking libdevice costs a compile ~55 ms), `tl.*` under Triton's
interpreter.

The lowering per op, with its GPU bound in ulps against the CPU interpreter as (f32 | f64);
f16 and bf16 take the f32 path:

    exp    f32: pure Triton, runs in the interpreter (4): n = floor(x log2(e) + 1/2),
                r = x - n ln2_hi - n ln2_lo, where ln2_hi has 15 significant bits so that
                n ln2_hi and the first subtraction are exact (Cody-Waite); then
                exp2(r log2(e)) (ex2.approx, CUDA's 2 ulp) times 2^n as two exact
                power-of-two factors (subnormal results round once).
           f32 rounding<approx>: tl.exp = ex2.approx(x * log2(e)) (3 + |x|: the rounding
                of that product is amplified by |x|).
           f64: tl.exp (2).
    exp2   f32: ex2.approx.f32 (3); f64: tl.exp2 (2).
    log    tl.log (2 | 2)        log2   tl.log2 (2 | 3)
    sin    tl.sin (3 | 3)        cos    tl.cos (3 | 3)
    tan    libdevice.tan (5 | 3)       sinh   libdevice.sinh (4 | 4)
    cosh   libdevice.cosh (3 | 3)      tanh   libdevice.tanh, approx too (3 | 3)
    pow    libdevice.pow (5 | 3)       atan2  libdevice.atan2(x, y) = atan(x / y) (4 | 3)
    rsqrt  f32: tl.div_rn(1, tl.sqrt_rn(x)), two correctly rounded steps (1; rsqrt.approx
           would be 2), bitwise equal between the GPU and Triton's interpreter.
           f64: 1.0 / tl.sqrt(x) (div.rn, sqrt.rn): the interpreter's own two steps, bitwise.

The f32 bounds are CUDA's documented maximum ulp errors (CUDA C Programming Guide,
mathematical functions appendix; NVIDIA derives them from extensive, not exhaustive, tests)
plus 1 for the interpreter's own rounding; f64 adds glibc's documented error to CUDA's.
Special values (inf, NaN, signed zeros, poles) follow C99 in libdevice, NumPy and glibc
alike. Under Triton's interpreter, `tl.*` runs NumPy in the tile's own type (NumPy's float32
exp and log are up to 2-3 ulp off, measured), so there the interpreter-runnable ops agree
with the CPU interpreter within 4 ulp (f32), 1 ulp (f16, bf16) and bitwise (f64: the same
NumPy functions): tests/lower/test_math.py.

`flush_to_zero` (exp2, rsqrt; f32 only) flushes subnormal inputs and results (pure Triton).
`rounding<approx>` of tanh uses the full-precision function (allowed: approx permits less
accuracy; tanh.approx.f32 would cost ~2^-11 relative error).
"""

from __future__ import annotations

from .codegen import OpEmit
from .ops_conversion import float_name
from .ops_float import down32, flush, flush_helper, flushes_subnormals, gpu_instruction, ptx_unary, up32
from .registry import emitter

# Cody-Waite split of ln 2: LN2_HI has 15 significant bits, so n * LN2_HI is exact in f32 for
# |n| <= 256 and x - n * LN2_HI is exact (Sterbenz) for the n nearest to x / ln 2.
_EXP_F32 = """@triton.jit
def {name}(x):
    # e^x in f32 (ops_math): exact reduction to r in [-ln2/2, ln2/2], then 2^(r log2 e) 2^n.
    n = {floor}(x * 1.4426950408889634 + 0.5)
    n = tl.where(n > 200.0, 200.0, tl.where(n < -200.0, -200.0, n))
    n = tl.where(n != n, 0.0, n)
    r = x - n * 0.693145751953125
    r = r - n * 1.428606765330187e-06
    y = {exp2}(r * 1.4426950408889634)
    k = n.to(tl.int32)
    k1 = k >> 1
    s1 = ((k1 + 127) << 23).to(tl.float32, bitcast=True)
    s2 = ((k - k1 + 127) << 23).to(tl.float32, bitcast=True)
    return (y * s1) * s2
"""


def _type(e: OpEmit) -> str:
    t = float_name(e, e.result_types[0])
    if t not in ("f16", "bf16", "f32", "f64"):
        raise e.error(f"{e.op.mnemonic} on {t} tiles is not supported")
    return t


def _f32_expr(e: OpEmit, op: str, args: list[str]) -> str:
    """The f32 implementation of `op` on f32 arguments (module doc)."""
    x = args[0]
    if op == "exp":
        mode = e.keyword("rounding_mode", "full") or "full"
        if mode == "approx":
            return f"tl.exp({x})"
        source = _EXP_F32.replace("{floor}", ptx_unary(e, "floor", "f32")).replace(
            "{exp2}", ptx_unary(e, "exp2", "f32")
        )
        return f"{e.helper('_fm_exp_f32', source)}({x})"
    if op == "exp2":
        return f"{ptx_unary(e, 'exp2', 'f32')}({x})"
    if op in ("log", "log2", "sin", "cos"):
        return f"tl.{op}({x})"
    if op == "rsqrt":
        return f"tl.div_rn(tl.full((), 1.0, tl.float32), tl.sqrt_rn({x}))"
    return f"libdevice.{op}({', '.join(args)})"


def _f64_expr(op: str, args: list[str]) -> str:
    x = args[0]
    if op in ("exp", "exp2", "log", "log2", "sin", "cos"):
        return f"tl.{op}({x})"
    if op == "rsqrt":
        return f"1.0 / tl.sqrt({x})"
    return f"libdevice.{op}({', '.join(args)})"


@emitter("exp", "exp2", "log", "log2", "sin", "cos", "tan", "sinh", "cosh", "tanh", "rsqrt", "pow", "atan2")
def _math(e: OpEmit) -> None:
    op = e.op.mnemonic
    t = _type(e)
    args = e.operands[: 2 if op in ("pow", "atan2") else 1]
    if t == "f64":
        e.assign(_f64_expr(op, args))
        return
    ftz = flushes_subnormals(e, t)
    wide = [up32(e, a, t) for a in args]
    if ftz and op == "exp2":
        # (cuTile's softmax and attention use it) one MUFU.EX2, which flushes anyway; under
        # Triton's interpreter the flushes around tl.exp2 spelled out.
        flush_ = flush_helper(e)
        helper = gpu_instruction(e, "_fm_exp2_ftz_f32", "ex2.approx.ftz.f32", f"{flush_}(tl.exp2({flush_}(x)))", "f32")
        e.assign(f"{helper}({wide[0]})")
        return
    if ftz:
        wide = [flush(e, a) for a in wide]
    expr = _f32_expr(e, op, wide)
    if ftz:
        expr = flush(e, expr)
    e.assign(down32(e, expr, t))
