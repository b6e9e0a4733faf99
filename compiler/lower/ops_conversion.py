"""Numeric conversions `ftof`, `ftoi`, `itof`, and the exact float-format code that the float
and math emitters share (rounding into a narrower format, bf16 and f8 bits).

Every conversion is exact: bitwise equal to the CPU interpreter (`compiler/interp/
ops_conversion.py`, `rounding.py`), in Triton's compiler and in Triton 3.6's interpreter alike
(it runs the same source: no libdevice here, and the GPU's own instructions below only where
the interpreter takes the integer code beside them; a NaN's payload may then differ).

Representation (tltypes): f16/f32/f64 are Triton floats, tf32 is an f32 holding a tf32 value,
bf16 is tl.bfloat16, and f8E4M3FN / f8E5M2 / f8E8M0FNU are tl.uint8 bit patterns, f4E2M1FN a
tl.uint8 holding its 4-bit code.

Why not Triton's own conversions everywhere: Triton 3.6's interpreter stores bf16 as raw
uint16 and converts f32 -> bf16 by truncation (its `_convert_float`), and int/f64 -> bf16 by
a NumPy cast of the raw bits (garbage); `.to(fp8)` does not saturate as Tile IR does; sm_80
has no fp8e4nv; Triton has no e8m0. So:

    f16 <-> f32 <-> f64, int -> f32, int -> f16, f64 -> f16, f64 -> f32
                    Triton's `.to(...)`: IEEE round to nearest even on the GPU (cvt.rn.*) and
                    NumPy's correctly rounded casts in the interpreter. int -> f16 goes through
                    f32 (exact below 2^24; above, both roundings give inf).
    bf16 -> f32     the bits shifted left by 16 (exact).
    f32 -> bf16     on the GPU cvt.rn.bf16.f32 (Triton's `.to()`: F2FP, tileiras' own); under
                    Triton's interpreter integer round to nearest even on the f32 bits:
                    (b + 0x7FFF + lsb) >> 16 (overflow carries into the exponent: inf, as IEEE
                    says); NaN: quiet, sign kept.
    f32 -> f8E4M3FN, f8E5M2 (nearest even) on sm_89 and newer GPUs: cvt.rn.satfinite (Triton's
                    `.to()` of fp8, F2FP.SATFINITE, tileiras' own: saturating, NaN -> 0x7F as
                    `round_helper`); elsewhere `round_helper`.
    i32, i64 -> bf16 on sm_90 and newer GPUs: cvt.rn.bf16.<int> (inline PTX, `_native_bf16`).
    f8 -> f32       integer decoding: E5M2 is the top byte of an f16; E4M3FN's 7 value bits
                    shifted left by 20 are an f32 that is the value times 2^-120 (normal and
                    subnormal alike); E8M0 is 2^(s - 127) (s = 0: the f32 subnormal 2^-127).
                    0x7F/0xFF (E4M3FN), 0x7D-0x7F (E5M2), 0xFF (E8M0) are NaN. f4E2M1FN's 3
                    value bits shifted left by 22 are the value times 2^-126.
    the rest        `round_helper` (f64 -> bf16 / tf32 / f8, f32 -> tf32 / f8, i32 and i64 ->
                    bf16 / tf32, every directed mode): exact rounding of a float (f32 or f64
                    bits) plus the sign of a residual (exact value minus that float) into a
                    narrower format, in integer code. The significand is shifted to the
                    target's quantum at its binade (subnormals included); the dropped bits and
                    the residual decide the rounding (ties to even, toward zero, toward
                    +-inf), and a carry simply moves on to the next binade or to the infinity
                    code (a format's codes are monotone in its values). Overflow, infinities
                    and NaN follow the spec's table as interp/rounding.py does: f16, bf16, f32,
                    tf32 overflow to inf or max by direction; f8E4M3FN and f8E5M2 saturate to
                    +-max (infinities too), NaN -> 0x7F for f8E4M3FN (as tileiras and the
                    hardware give, not the table's +max); f4E2M1FN saturates to +-6 and
                    takes NaN to +6 (it has neither); f8E8M0FNU rounds the
                    magnitude into [2^-127, 2^127] (zero -> 2^-127), NaN -> 0xFF. `ftz`
                    flushes results below the smallest normal after rounding (as the
                    interpreter does).

ftof   every rounding mode the verifier admits (tileiras 13.5's: nearest_even, zero, the directed
       modes where exact, to f64 and f64 -> f32, zero / positive_inf toward f8E8M0FNU) by
       `round_helper`; f32 -> tf32 (nearest_even, zero, nearest_away: the only inexact pair
       nearest_away is admitted for) by an add on the bits, as tileiras; widening is exact
       (f8 -> f16/bf16/f32/f64 decode; E8M0 -> f16 rounds: 2^-127 -> 0, 2^127 -> inf).
ftoi   truncation toward zero with the interpreter's saturation: NaN -> 0, values beyond the
       range -> its nearest end (signed [-2^(N-1), 2^(N-1)-1], unsigned [0, 2^N-1]); i1:
       x != 0, signed or unsigned (NVIDIA's tools; NaN true). The compare uses the exact powers of two
       2^(N-1) / 2^N of the source type, the in-range value is converted by `.to(int)`
       (cvt.rzi; NumPy truncation) after out-of-range lanes were replaced by 0 (no poison,
       no NumPy warnings), under Triton's interpreter; on the GPU one cvt.rzi to the integer
       type, which saturates and makes NaN 0 itself (`_ftoi_helper`). The result is held
       signed (unsigned results reinterpreted).
itof   the integer (signed or unsigned reading; i1 signed true = -1) rounded to nearest even:
       f32/f64: `.to(...)` of the int (cvt.rn.f32.s64 and NumPy round correctly); f16 via f32;
       f8 via f32 then `round_helper` (f8 saturates far below 2^24, so the f32 step is
       harmless); bf16/tf32: widths <= 16 via f32 (exact), i32 via f64 (exact), i64 as the
       exact sum hi + lo of its 32-bit halves in f64 with a TwoSum residual, then
       `round_helper`; on sm_90 and newer i32/i64 -> bf16 is cvt.rn.bf16.<int> on the GPU
       (`_native_bf16`).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import tltypes
from .codegen import GPU_ONLY, OpEmit
from .ptx import REGISTERS, inline_ptx
from .registry import emitter

# -- float formats ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fmt:
    """A target of `round_helper`: its codes are the bit patterns without the sign, in value
    order (IEEE layout: exponent field above `mt` mantissa bits), `max_code` the largest
    finite one, `inf_code` the infinity (None: none)."""

    name: str
    bits: int  # width of the Triton representation (uint8 / uint16 / uint32)
    mt: int  # stored mantissa bits
    emin: int  # exponent of the smallest normal
    max_code: int
    inf_code: int | None
    saturate: bool  # conversions clamp to +-max (infinities too)
    nan_bits: int
    signed: bool = True
    no_zero: bool = False  # f8E8M0FNU: codes 1..255 of the IEEE-like layout, stored minus one
    shift: int = 0  # tf32: the code sits 13 bits up in an f32
    sign_bit: int | None = None  # where the sign is (None: the top bit of `bits`)

    @property
    def limit(self) -> int:
        """The code an overflow rounding away from zero gives."""
        return self.inf_code if self.inf_code is not None and not self.saturate else self.max_code


FORMATS = {
    "f32": Fmt("f32", 32, 23, -126, 0x7F7FFFFF, 0x7F800000, False, 0x7FC00000),
    "tf32": Fmt("tf32", 32, 10, -126, 0x3FBFF, 0x3FC00, False, 0x7FC00000, shift=13),
    "bf16": Fmt("bf16", 16, 7, -126, 0x7F7F, 0x7F80, False, 0x7FC0),
    "f16": Fmt("f16", 16, 10, -14, 0x7BFF, 0x7C00, False, 0x7E00),
    "f8E5M2": Fmt("f8E5M2", 8, 2, -14, 0x7B, 0x7C, True, 0x7E),
    # NaN -> 0x7F (NaN, whatever its sign), as tileiras and cvt.rn.satfinite.e4m3x2 give.
    "f8E4M3FN": Fmt("f8E4M3FN", 8, 3, -6, 0x7E, None, True, 0x7F),
    # Virtual layout with a zero code below 2^-127: code = exponent + 128, stored code - 1.
    "f8E8M0FNU": Fmt("f8E8M0FNU", 8, 0, -127, 255, None, True, 0xFF, signed=False, no_zero=True),
    # A 4-bit code in a uint8: saturates to +-6, and NaN (it has none) becomes +6.
    "f4E2M1FN": Fmt("f4E2M1FN", 8, 1, 0, 0x7, None, True, 0x7, sign_bit=3),
}
_UINT = {8: "tl.uint8", 16: "tl.uint16", 32: "tl.uint32", 64: "tl.uint64"}
_INT = {8: "tl.int8", 16: "tl.int16", 32: "tl.int32", 64: "tl.int64"}
MODES = {
    "nearest_even": "rn",
    "zero": "rz",
    "negative_inf": "rm",
    "positive_inf": "rp",
    "approx": "rn",
    "full": "rn",
    "nearest_away": "rna",  # bytecode 13.4; ftof f32 -> tf32 only (the verifier), `_F32_TO_TF32`
}
F8 = ("f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")  # the formats held as uint8 codes
# Canonical NaN bit patterns (NVIDIA's: positive, every payload bit set), by Triton dtype.
CANONICAL_NAN = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "tf32": 0x7FFFE000, "f64": 0x7FFFFFFFFFFFFFFF}
BITS_OF = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "f64": 64}


def mode_of(e: OpEmit) -> str:
    """The op's rounding mode as rn / rz / rm / rp / rna (approx and full give the exact result)."""
    mode = e.keyword("rounding_mode", "nearest_even") or "nearest_even"
    if mode not in MODES:
        raise e.error(f"rounding mode '{mode}' does not apply to a float result")
    return MODES[mode]


def float_name(e: OpEmit, t) -> str:
    name = tltypes.float_name(t)
    if name not in BITS_OF and name not in F8:
        raise e.error(f"the Triton lowering has no representation of {name} tiles")
    return name


# -- helper sources ----------------------------------------------------------------------------

_BF16_TO_F32 = """@triton.jit
def {name}(x):
    # bf16 -> f32, exact: the bits shifted up (Triton 3.6's interpreter cannot convert bf16).
    return (x.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
"""

_F32_TO_BF16 = """@triton.jit
def {name}(x):
    # f32 -> bf16, round to nearest even: on the GPU cvt.rn.bf16(x2).f32 (F2FP, as tileiras'
    # cubins); under Triton's interpreter, whose conversion truncates, on the bits (overflow
    # carries to inf; a NaN keeps its sign and top payload bits, made quiet: a conversion's NaN
    # payload is left open, and the f32 NaNs GPU arithmetic makes give 0x7fff either way).
    if INTERPRETED:
        b = x.to(tl.uint32, bitcast=True)
        r = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        r = tl.where((b & 0x7FFFFFFF) > 0x7F800000, (b >> 16) | 0x40, r)
        out = r.to(tl.uint16).to(tl.bfloat16, bitcast=True)
    else:
        out = x.to(tl.bfloat16)
    return out
"""

_F8_TO_F32 = {
    "f8E5M2": """@triton.jit
def {name}(bits):
    # f8E5M2 bits -> f32, exact: they are the top byte of an f16.
    return (bits.to(tl.uint16) << 8).to(tl.float16, bitcast=True).to(tl.float32)
""",
    "f8E4M3FN": """@triton.jit
def {name}(bits):
    # f8E4M3FN bits -> f32, exact: the 7 value bits shifted left by 20 are an f32 equal to the
    # value times 2^-120 (for normal and subnormal e4m3 alike); 0x7F / 0xFF are NaN.
    b = bits.to(tl.uint32)
    mag = ((b & 0x7F) << 20).to(tl.float32, bitcast=True) * 1.329227995784916e36
    out = mag.to(tl.uint32, bitcast=True) | ((b & 0x80) << 24)
    out = tl.where((b & 0x7F) == 0x7F, tl.full((), 0x7FC00000, tl.uint32), out)
    return out.to(tl.float32, bitcast=True)
""",
    "f8E8M0FNU": """@triton.jit
def {name}(bits):
    # f8E8M0FNU bits -> f32: 2^(s - 127), exact (s = 0 is the f32 subnormal 2^-127); 0xFF is NaN.
    s = bits.to(tl.uint32)
    out = tl.where(s == 0, tl.full((), 0x00400000, tl.uint32), s << 23)
    out = tl.where(s == 0xFF, tl.full((), 0x7FC00000, tl.uint32), out)
    return out.to(tl.float32, bitcast=True)
""",
    "f4E2M1FN": """@triton.jit
def {name}(bits):
    # f4E2M1FN code -> f32, exact: its 3 value bits shifted left by 22 are an f32 equal to the
    # value times 2^-126 (0.5 and 1.5 x 2^-126 for the subnormal, the normals alike).
    b = bits.to(tl.uint32)
    mag = ((b & 0x7) << 22).to(tl.float32, bitcast=True) * 8.507059173023462e37
    return (mag.to(tl.uint32, bitcast=True) | ((b & 0x8) << 28)).to(tl.float32, bitcast=True)
""",
}


# f32 -> tf32 in the modes ftof takes for it, as integer adds on the bits (what tileiras makes of
# rounding<nearest_away>: add half a quantum, clear the 13 low bits). Exact for every value,
# subnormals included (tf32 keeps f32's exponent range); a carry moves on to the next binade
# or to inf, and inf stays inf (0x1FFF never reaches bit 13 from an all-zero field).
_F32_TO_TF32 = """@triton.jit
def {name}(x):
    # f32 -> tf32 ({mode}) on the bits; a NaN becomes the canonical one.
    b = x.to(tl.uint32, bitcast=True)
    r = ({add}) & 0xFFFFE000
    r = tl.where((b & 0x7FFFFFFF) > 0x7F800000, 0x7FC00000, r)
    return r.to(tl.float32, bitcast=True)
"""
_TF32_ADD = {"rn": "b + 0xFFF + ((b >> 13) & 1)", "rna": "b + 0x1000", "rz": "b"}


def bf16_to_f32(e: OpEmit, x: str) -> str:
    return f"{e.helper('_fc_bf16_to_f32', _BF16_TO_F32)}({x})"


def f32_to_bf16(e: OpEmit, x: str) -> str:
    return f"{e.helper('_fc_f32_to_bf16', _F32_TO_BF16)}({x})"


def to_f32(e: OpEmit, x: str, name: str) -> str:
    """A value of format `name` (not f64) as an f32, exactly."""
    if name in ("f32", "tf32"):
        return x
    if name == "f16":
        return f"{x}.to(tl.float32)"
    if name == "bf16":
        return bf16_to_f32(e, x)
    if name in F8:
        return f"{e.helper('_fc_' + name + '_to_f32', _F8_TO_F32[name])}({x})"
    raise e.error(f"the Triton lowering cannot convert {name} values")


def to_f64(e: OpEmit, x: str, name: str) -> str:
    """A value of format `name` as an f64, exactly."""
    if name == "f64":
        return x
    if name in ("f16", "f32", "tf32"):
        return f"{x}.to(tl.float64)"
    return f"{to_f32(e, x, name)}.to(tl.float64)"


def from_f32_rn(e: OpEmit, x: str, name: str) -> str:
    """An f32 value rounded to nearest even into format `name` (its Triton representation)."""
    if name == "f32":
        return x
    if name == "f16":
        return f"{x}.to(tl.float16)"
    if name == "bf16":
        return f32_to_bf16(e, x)
    if name == "f64":
        return f"{x}.to(tl.float64)"
    return rounded(e, x, 32, name, "rn")


def rounded(e: OpEmit, x: str, width: int, name: str, mode: str, residual: str | None = None, ftz: bool = False) -> str:
    """`x` (an f32 or f64 value, `width`) plus the sign of `residual` (an int32 -1/0/1 tile:
    exact value minus x; None: x is exact) rounded into format `name` as `mode` says: an
    expression of the format's Triton type (floats bitcast back, f8 bits as uint8)."""
    if width == 32 and FORMATS[name].emin < -126:
        # f8E8M0FNU reaches below f32's normals: round from the (exact) f64 instead.
        x, width = f"{x}.to(tl.float64)", 64
    fn = round_helper(e, width, name, mode, residual is not None, ftz)
    call = f"{fn}({x}, {residual})" if residual is not None else f"{fn}({x})"
    if name in ("f32", "tf32"):
        return f"{call}.to(tl.float32, bitcast=True)"
    if name == "f16":
        return f"{call}.to(tl.float16, bitcast=True)"
    if name == "bf16":
        return f"{call}.to(tl.bfloat16, bitcast=True)"
    return call


def round_helper(e: OpEmit, width: int, name: str, mode: str, residual: bool, ftz: bool = False) -> str:
    """The jitted helper rounding an f32/f64 (`width`) into the bits of format `name`."""
    fmt = FORMATS[name]
    fn = f"_fc_round_f{width}_{name}_{mode}{'_r' if residual else ''}{'_ftz' if ftz else ''}"
    return e.helper(fn, _round_source(width, fmt, mode, residual, ftz))


def _round_source(width: int, f: Fmt, mode: str, residual: bool, ftz: bool) -> str:
    u, i = _UINT[width], _INT[width]
    mw, bias = (52, 1023) if width == 64 else (23, 127)
    sign, infw = 1 << (width - 1), ((1 << (width - mw - 1)) - 1) << mw
    # From f32: lead is the binade of normal values only, so the target's normals must start at
    # or above f32's (subnormal sources then all lie below its emin), and its codes fit int32.
    assert width == 64 or (f.mt <= 10 and f.emin >= -126), "round from f64 instead"
    lines = [
        "@triton.jit",
        "def {name}(x, r):" if residual else "def {name}(x):",
        f"    # f{width} value{' + residual sign r' if residual else ''} -> {f.name} bits, {mode}, exact: the",
        "    # significand M is cut at the target's quantum; code = exponent and kept bits (monotone).",
        f"    b = x.to({u}, bitcast=True)",
        f"    a = b & {sign - 1:#x}",
        f"    neg = (b >> {width - 1}) != 0",
        f"    nan = a > {infw:#x}",
        f"    E = (a >> {mw}).to({i})",
        f"    M = (a & {(1 << mw) - 1:#x}).to({i}) + tl.where(E != 0, {1 << mw:#x}, 0).to({i})",
        f"    lead = tl.maximum(E, 1) - {bias}",
        f"    el = tl.maximum(lead, {f.emin})",
        f"    shift = tl.minimum(el - lead + {mw - f.mt}, {mw + 2})",
        f"    one = tl.full((), 1, {i})",
        "    kept = M >> shift",
        "    rem = M & ((one << shift) - 1)",
        "    half = (one << shift) >> 1",
        f"    code = ((el + {-f.emin}) << {f.mt}) + kept",
    ]
    if residual:
        lines += [
            "    # a zero standing for a tiny non-zero value takes the residual's sign",
            "    neg = tl.where((a == 0) & (r != 0), r < 0, neg)",
            "    rr = tl.where(neg, -r, r)  # residual relative to the magnitude",
        ]
        up, down, odd_tie = "(rr > 0)", "(rr < 0)", "((rr == 0) & ((kept & 1) != 0))"
        true_inf = f"(a == {infw:#x}) & (r == 0)"
    else:
        up, down, odd_tie = None, None, "((kept & 1) != 0)"
        true_inf = f"a == {infw:#x}"
    # The directed modes round the magnitude away from zero (`away`) or toward it (`toward`,
    # the complement), depending on the sign; a magnitude-only format rounds |x| as if positive.
    if mode == "rn":
        tie = f"({odd_tie} | {up})" if up else odd_tie
        lines.append(f"    code = code + ((rem > half) | ((rem == half) & (half != 0) & {tie})).to({i})")
        toward = "False"
    else:
        away = {"rz": "False", "rp": "~neg" if f.signed else "True", "rm": "neg" if f.signed else "False"}[mode]
        toward = {"False": "True", "True": "False", "~neg": "neg", "neg": "~neg"}[away]
        step_up = f"((rem != 0) | {up})" if up else "(rem != 0)"
        if away != "False":
            cond = step_up if away == "True" else f"{away} & {step_up}"
            lines.append(f"    code = code + ({cond}).to({i})")
        if down and toward != "False":
            cond = f"(rem == 0) & {down}" if toward == "True" else f"{toward} & (rem == 0) & {down}"
            lines.append(f"    code = code - ({cond}).to({i})  # just below a grid point")
    # Beyond the largest finite code: rounding toward zero gives max, away the limit (inf or,
    # for saturating formats, max); a true infinity stays at the limit.
    if f.limit == f.max_code or toward == "False":
        over = f"{f.limit:#x}"
    else:
        lines.append(f"    true_inf = {true_inf}")
        if toward == "True":
            over = f"tl.where(true_inf, {f.limit:#x}, {f.max_code:#x})"
        else:
            over = f"tl.where({toward} & ~true_inf, {f.max_code:#x}, {f.limit:#x})"
    lines.append(f"    code = tl.where(code > {f.max_code:#x}, {over}, code)")
    if ftz:
        lines.append(f"    code = tl.where(code < {1 << f.mt:#x}, 0, code)  # flush to zero after rounding")
    if f.no_zero:
        lines.append("    code = tl.maximum(code, 1) - 1  # no zero: the smallest power of two")
    ou = _UINT[f.bits]
    lines.append(f"    out = code.to({ou})")
    if f.shift:
        lines.append(f"    out = out << {f.shift}")
    if f.signed:
        sign_bit = f.bits - 1 if f.sign_bit is None else f.sign_bit
        lines.append(f"    out = out | tl.where(neg, {1 << sign_bit:#x}, 0).to({ou})")
    lines.append(f"    return tl.where(nan, tl.full((), {f.nan_bits:#x}, {ou}), out)")
    return "\n".join(lines) + "\n"


def residual_sign(x: str) -> str:
    """-1 / 0 / 1 (int32) for the sign of an error term (NaN gives 0)."""
    return f"({x} > 0).to(tl.int32) - ({x} < 0).to(tl.int32)"


# -- ftof ------------------------------------------------------------------------------------


def convert(e: OpEmit, x: str, src: str, dst: str, mode: str = "rn") -> str:
    """An expression converting `x` from format `src` to `dst`, rounded as `mode` says."""
    if src == dst or (src == "tf32" and dst == "f32"):
        return x
    if dst == "f64":
        return to_f64(e, x, src)
    if src == "f64":
        if mode == "rn" and dst in ("f32", "f16"):
            return f"{x}.to({'tl.float32' if dst == 'f32' else 'tl.float16'})"
        return rounded(e, x, 64, dst, mode)
    wide = to_f32(e, x, src)  # exact: every value of these formats is an f32
    if dst == "f32" or (dst == "tf32" and src != "f32"):
        return wide  # exact: f16, bf16 and the f8 values are tf32 values too
    if mode == "rn" and dst in ("f16", "bf16"):
        return from_f32_rn(e, wide, dst)
    if dst == "tf32" and mode in _TF32_ADD:
        source = _F32_TO_TF32.replace("{mode}", mode).replace("{add}", _TF32_ADD[mode])
        return f"{e.helper('_fc_f32_to_tf32_' + mode, source)}({wide})"
    if mode == "rn" and dst in tltypes.TRITON_FP8 and e.target.cc >= 89:
        # sm_89 and newer convert f32 to f8E4M3FN / f8E5M2 themselves: Triton's .to() is
        # cvt.rn.satfinite.e4m3x2 / e5m2x2.f32 (F2FP.SATFINITE, tileiras' own), which saturate
        # and give NaN 0x7F as the interpreter's rounding does; Triton's interpreter runs the
        # portable rounding, inside the helper so that the GPU's compile never builds it.
        gpu = f"x.to({tltypes.TRITON_FP8[dst]}).to(tl.uint8, bitcast=True)"
        exact = rounded(e, "x", 32, dst, mode)
        return f"{e.split_helper(f'_fc_f32_to_{dst}', exact, gpu, f'cvt.rn.satfinite of {dst} on the GPU')}({wide})"
    return rounded(e, wide, 32, dst, mode)


@emitter("ftof")
def _ftof(e: OpEmit) -> None:
    (x,) = e.operands
    src = float_name(e, e.operand_types[0])
    dst = float_name(e, e.result_types[0])
    if src == dst:
        e.alias(x)
        return
    e.assign(convert(e, x, src, dst, mode_of(e)))


# -- ftoi ------------------------------------------------------------------------------------


@emitter("ftoi")
def _ftoi(e: OpEmit) -> None:
    (x,) = e.operands
    src = float_name(e, e.operand_types[0])
    width = tltypes.int_width(e.result_types[0])
    signed = (e.keyword("signedness", "signed") or "signed") == "signed"
    v = x if src == "f64" else to_f32(e, x, src)
    if src != "f64" and src not in ("f32", "tf32"):
        t = e.tmp("wide")
        e.line(f"{t} = {v}")
        v = t
    if width == 1:
        e.assign(f"{v} != 0.0")  # `x != 0`, NaN true, as NVIDIA's tools (compiler/interp/ops_conversion.py)
        return
    e.assign(f"{_ftoi_helper(e, 'f64' if src == 'f64' else 'f32', width, signed)}({v})")


def _ftoi_helper(e: OpEmit, src: str, width: int, signed: bool) -> str:
    """The helper converting an f32 / f64 tile to a `width`-bit integer held signed (an
    unsigned result reinterpreted), toward zero, NaN -> 0, beyond the range its nearest end:
    on the GPU one cvt.rzi (F2I; PTX clamps a float-to-integer conversion to the destination
    type's range and converts NaN to 0, the interpreter's rule), where the portable code took
    ~8 instructions an element; under Triton's interpreter spelled out."""
    kind = f"{'s' if signed else 'u'}{width}"
    result = f"tl.int{width}"
    if signed:
        bound = float(2 ** (width - 1))
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        low, high = f"x <= {-bound!r}", f"x >= {bound!r}"
        conv = "tl.int64" if width == 64 else "tl.int32"
    else:
        bound = float(2**width)
        lo, hi = 0, (1 << width) - 1
        low, high = "x < 0.0", f"x >= {bound!r}"
        conv = "tl.uint64" if width == 64 else "tl.int64"
    if conv == "tl.uint64":  # (the result is held signed)
        held = f"t.to({result}, bitcast=True)"
    else:
        held = "t" if conv == result else f"t.to({result})"
    # (cvt may write a sub-word integer to a 32-bit register: PTX widens it)
    out = "i64" if width == 64 else "i32"
    asm = inline_ptx(f"cvt.rzi.{kind}.{src} $0, $1;", out, [src], ["x"])
    gpu = asm if REGISTERS[out][1] == result else f"{asm}.to({result})"
    source = f"""@triton.jit
def {{name}}(x):
    # {src} -> {kind} toward zero, saturating, NaN -> 0: cvt.rzi.{kind}.{src} on the GPU
    if INTERPRETED:
        # Out-of-range and NaN lanes convert 0.0 (no poison, no NumPy warning), then take the ends.
        t = tl.where(({low}) | ({high}) | (x != x), 0.0, x).to({conv})
        t = tl.where({high}, tl.full((), {hi}, {conv}), tl.where({low}, tl.full((), {lo}, {conv}), t))
        out = {held}
    else:
        out = {gpu}  {GPU_ONLY}
    return out
"""
    return e.helper(f"_fc_{src}_to_{kind}", source)


# -- itof ------------------------------------------------------------------------------------


@emitter("itof")
def _itof(e: OpEmit) -> None:
    (x,) = e.operands
    width = tltypes.int_width(e.operand_types[0])
    dst = float_name(e, e.result_types[0])
    signed = (e.keyword("signedness", "signed") or "signed") == "signed"
    mode = mode_of(e)
    if width == 1:
        one = "-1.0" if signed else "1.0"
        f = e.tmp("as_f32")
        e.line(f"{f} = tl.where({x}, {one}, 0.0).to(tl.float32)")
        e.assign(convert(e, f, "f32", dst, mode))
        return
    src = x if signed else f"{x}.to({tltypes.unsigned_dtype(e.operand_types[0])}, bitcast=True)"
    if dst == "f64":
        e.assign(f"{src}.to(tl.float64)")
        return
    if mode == "rn" and (dst in ("f32", "f16") or dst in F8):
        # int -> f32 rounds correctly (cvt.rn / NumPy); f16 and the f8 formats overflow or
        # saturate far below 2^24, where f32 is still exact, so a second rounding is harmless.
        f = f"{src}.to(tl.float32)"
        e.assign(f if dst == "f32" else convert(e, f, "f32", dst, mode))
        return
    if width <= 16 and mode == "rn":
        e.assign(convert(e, f"{src}.to(tl.float32)", "f32", dst, mode))
        return
    if width <= 32:
        e.assign(_native_bf16(e, src, width, signed, dst, rounded(e, f"{src}.to(tl.float64)", 64, dst, mode)))
        return
    # 64 bits: hi + lo of the 32-bit halves, each exact in f64, summed with a TwoSum residual.
    u = e.tmp("bits")
    e.line(f"{u} = {x}.to(tl.uint64, bitcast=True)")
    hi, lo = e.tmp("hi"), e.tmp("lo")
    if signed:
        e.line(f"{hi} = ({u} & 0xFFFFFFFF00000000).to(tl.int64, bitcast=True).to(tl.float64)")
    else:
        e.line(f"{hi} = ({u} & 0xFFFFFFFF00000000).to(tl.float64)")
    e.line(f"{lo} = ({u} & 0xFFFFFFFF).to(tl.float64)")
    s, err = e.tmp("sum"), e.tmp("err")
    e.line(f"{s} = {hi} + {lo}")
    e.line(f"{err} = {hi} - {s} + {lo}")  # exact: |hi| >= |lo| or hi == 0 (Fast2Sum)
    r = e.tmp("residual")
    e.line(f"{r} = {residual_sign(err)}")
    e.assign(_native_bf16(e, src, width, signed, dst, rounded(e, s, 64, dst, mode, r)))


def _native_bf16(e: OpEmit, src: str, width: int, signed: bool, dst: str, exact: str) -> str:
    """`exact` (the portable conversion of the integer `src` to `dst`, nearest-even), or
    where sm_90 and newer convert it themselves (32 and 64 bits to bf16: cvt.rn.bf16.<int>,
    one I2F.BF16 where the portable path rounds an f64 sum, ~40 SASS instructions for i32 and
    ~100 for i64, as tileiras does on sm_90; sm_80 has no such cvt, and tileiras converts
    through f32 there, rounding twice) that instruction on the GPU and `exact` under Triton's
    interpreter, whose arguments the GPU's code then drops."""
    if dst != "bf16" or width not in (32, 64) or e.target.cc < 90:
        return exact
    t = f"{'s' if signed else 'u'}{width}"
    bits = inline_ptx(f"cvt.rn.bf16.{t} $0, $1;", "i16", [f"i{width}"], ["x"])
    asm = f"{bits}.to(tl.bfloat16, bitcast=True)  {GPU_ONLY}"
    helper = e.split_helper(f"_fc_{t}_bf16", "exact", asm, f"cvt.rn.bf16.{t} on the GPU", "x, exact")
    return f"{helper}({src}, {exact})"
