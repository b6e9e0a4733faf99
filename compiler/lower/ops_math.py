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
the interpreter cannot run) remain for tan, sinh, cosh, tanh, pow and atan2. f32 exp2 is
the one instruction libdevice ends in, written as inline PTX (`ops_float.ptx_unary`: linking
libdevice costs a compile ~55 ms), `tl.exp2` under Triton's interpreter.

The lowering per op, with its GPU bound in ulps against the CPU interpreter as (f32 | f64);
f16 and bf16 take the f32 path:

    exp    f32: pure Triton (3): n = round(x log2(e)) read off the bits of an fma with a
                shifter, clamped to f32's normal exponents; f = x log2(e) - n from two
                fmas on a head/tail split of log2(e) (f's error below 2^-24); exp2(f)
                (ex2.approx, CUDA's 2 ulp) times 2^n (exact; a subnormal result rounds
                once). 9 instructions (it was 20 with a Cody-Waite reduction and two
                scale factors: 18% of examples/softmax's compile time, measured). It runs
                in Triton's interpreter through ops_float.fma_f32's exact path (1 ulp
                there, measured on 4096 values across the range).
           f32 rounding<approx>: tl.exp = ex2.approx(x * log2(e)) (3 + |x|: the rounding
                of that product is amplified by |x|).
           f64: tl.exp (2).
    exp2   f32: ex2.approx.f32 (3); f64: tl.exp2 (2).
    log    tl.log (2 | 2)        log2   tl.log2 (2 | 3)
    sin    tl.sin (3 | 3)        cos    tl.cos (3 | 3)
    tan    libdevice.tan (5 | 3)       sinh   libdevice.sinh (4 | 4)
    cosh   libdevice.cosh (3 | 3)      tanh   libdevice.tanh, approx too (3 | 3)
    pow    libdevice.pow (5 | 3)       atan2  libdevice.atan2(x, y) = atan(x / y) (4 | 3)
    rsqrt  f32: rsqrt.approx.f32 (3): one MUFU.RSQ, as tileiras and CUDA's rsqrtf (2 ulp).
           Under Triton's interpreter tl.rsqrt, 1 / sqrt in f32 (two correct roundings).
           Until 2026-12-03 the GPU computed those two roundings too (div.rn of sqrt.rn,
           bitwise equal to Triton's interpreter): 201 SASS instructions for a 256-element
           rsqrt on sm_90 against tileiras' 49 (200 against 27 on sm_80).
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
from .ops_float import down32, fence, flush, flushes_subnormals, fma_f32, ptx_unary, up32
from .registry import emitter

# e^x = 2^n 2^f with n = round(x log2 e) and f = x log2 e - n. The fma that adds the shifter
# 1.5 * 2^23 + 127 rounds x log2 e to an integer and leaves n + 127 in the low bits of its
# result (every f32 in [2^23, 2^24) is an integer, one apart); clamped to [1, 254] that is
# the exponent field of the normal number 2^n, and bits shifted by 23 are 2^n itself (the
# shifter's own low 9 bits are 0). f is x log2 e - n from two fmas on a head/tail split of
# log2 e (|f| <= 1/2 + 2^-24 where n is not clamped), so 2^f costs one ex2.approx; where
# n is clamped, f carries the rest: ex2 of f > 1 overflows to inf, and 2^f 2^-126 rounds
# once into the subnormals or to 0.
_EXP_F32 = """@triton.jit
def {name}(x):
    # e^x in f32 (ops_math): 2^f times 2^n, n = round(x log2 e) from the bits of a shifted fma.
    log2e_hi = tl.full((), 1.4426950216293335, tl.float32)
    log2e_lo = tl.full((), 1.925963033500011e-08, tl.float32)
    shifter = tl.full((), 12583039.0, tl.float32)
    p = {fma}(x, log2e_hi, shifter)
    p = tl.minimum(tl.maximum(p, 12582913.0), 12583166.0)
    n = p - shifter
    f = {fma}(x, log2e_hi, -n)
    f = {fma}(x, log2e_lo, f)
    scale = (p.to(tl.int32, bitcast=True) << 23).to(tl.float32, bitcast=True)
    return {exp2}(f) * scale
"""


def _type(e: OpEmit) -> str:
    t = float_name(e, e.result_types[0])
    if t not in ("f16", "bf16", "f32", "f64"):
        raise e.error(f"{e.op.mnemonic} on {t} tiles is not supported")
    return t


# The f32 functions that are one PTX instruction (ops_float.ptx_unary), .ftz for flush_to_zero.
_ONE_INSTRUCTION = ("exp2", "rsqrt")


def _f32_expr(e: OpEmit, op: str, args: list[str]) -> str:
    """The f32 implementation of `op` on f32 arguments (module doc)."""
    x = args[0]
    if op == "exp":
        mode = e.keyword("rounding_mode", "full") or "full"
        if mode == "approx":
            return f"tl.exp({x})"
        source = _EXP_F32.replace("{fma}", fma_f32(e)).replace("{exp2}", ptx_unary(e, "exp2", "f32"))
        return f"{e.helper('_fm_exp_f32', source)}({x})"
    if op in ("log", "log2", "sin", "cos"):
        return f"tl.{op}({x})"
    if op in _ONE_INSTRUCTION:
        return f"{ptx_unary(e, op, 'f32')}({x})"
    return f"libdevice.{op}({', '.join(args)})"


def _f64_expr(op: str, args: list[str]) -> str:
    x = args[0]
    if op in ("exp", "exp2", "log", "log2", "sin", "cos"):
        return f"tl.{op}({x})"
    if op == "rsqrt":
        return f"1.0 / tl.sqrt({x})"
    return f"libdevice.{op}({', '.join(args)})"


# Triton 3.6 and 3.9 crash (SIGSEGV in LLVM's PTX code generation, for sm_80, sm_90 and sm_100)
# on libdevice's sinf, cosf, tanf and powf of a constant subnormal f32 (a bitcast of a small
# integer, say): their inlined code keeps __nvvm_reflect calls that nothing resolves then
# (tests/lower/fuzz.py seed 526414: a shape query's 8 bitcast to f32, its cos). Their f32
# operands pass a move no compiler stage sees through (ptxas removes it), so that nothing
# folds them; f64 and the other functions compiled (probed with subnormal, zero, normal,
# infinite and NaN constants).
_NO_CONSTANT = ("sin", "cos", "tan", "pow")


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
    if ftz and op in _ONE_INSTRUCTION:
        # (cuTile's softmax and attention use exp2's) the instruction's .ftz form
        e.assign(f"{ptx_unary(e, op, 'f32', ftz=True)}({wide[0]})")
        return
    if ftz:
        wide = [flush(e, a) for a in wide]
    if op in _NO_CONSTANT:
        wide = [fence(e, a, "tl.float32", 32, pure=True) for a in wide]
    expr = _f32_expr(e, op, wide)
    if ftz:
        expr = flush(e, expr)
    e.assign(down32(e, expr, t))
