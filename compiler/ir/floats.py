"""Exact float encoding, decoding and printing for the element formats of Tile IR.

Everything here works on raw bit patterns held in Python ints, with integer arithmetic
only (no NumPy, no ml_dtypes, no `fractions`), so importing it costs next to nothing.

The rules follow LLVM's APFloat, which `cuda-tile-opt` uses to parse and print:

* Encoding rounds to nearest, ties to even, with exact subnormals.
* Overflow (after rounding) gives +-inf in formats with infinities (f16, bf16, f32,
  tf32, f64, f8E5M2); NaN in the NaN-only formats (f8E4M3FN keeps the sign: 0x7F or
  0xFF; f8E8M0FNU: 0xFF); the largest finite value in f4E2M1FN, which has neither
  (APFloat's `handleOverflow` for `fltNonfiniteBehavior::FiniteOnly`).  In f8E4M3FN
  the all-ones pattern is NaN, so anything that rounds to 480 overflows to NaN while
  464 (a tie) rounds to 448.
* f8E8M0FNU has no zero and no sign: zero and values that underflow encode as 0x00
  (2^-127, APFloat's `makeSmallestNormalized`); a negative non-zero value, which the
  format cannot hold, encodes as NaN (0xFF, as ml_dtypes does; APFloat keeps a sign
  bit it cannot print).
* NaN encodes as the format's canonical quiet NaN (f32 0x7FC00000, f16 0x7E00, bf16
  0x7FC0, f64 0x7FF8000000000000, tf32 0x3FE00, f8E4M3FN 0x7F, f8E5M2 0x7E,
  f8E8M0FNU 0xFF).  f4E2M1FN has no NaN: NaN encodes as 0x8 and +-inf saturates to
  +-6.0, as ml_dtypes does (APFloat has no answer for those).

tf32 values are 19-bit patterns (1 sign, 8 exponent, 10 mantissa bits), as APFloat's
`FloatTF32` semantics and MLIR's `bitcastToAPInt` have them; f4E2M1FN values are 4-bit
patterns.

`format_float` reproduces MLIR's `printFloatValue` (mlir/lib/IR/AsmPrinter.cpp):

1. Infinities and NaNs print as their bit pattern in hex: `0x` and upper-case digits,
   not zero-padded (`APInt::toString(.., 16, /*Signed=*/false, /*C literal=*/true)`):
   `0x7C00`, `0xFF800000`, `0x7FF0000000000000`, tf32 +inf `0x3FC00`.
2. A finite value is formatted with `APFloat::toString(str, 6, 0, false)`: six
   significant digits (rounded half-up on the decimal digits), padded with zeros to six
   digits after the point, lower-case `e`, a signed exponent of at least two digits:
   `1.000000e+00`, `-3.140630e+00` (f16 -3.140625), `-0.000000e+00`.  If that string
   parses back (directly into the format, correctly rounded) to the same bits, it is
   the answer.
3. Otherwise `APFloat::toString(str)` with its defaults (precision 2 + p*59/196
   digits, i.e. 17 for f64 and 9 for f32, max padding 3, upper-case `E`):
   `2.7182818284590451`, `0.100000001`, `1.23456789E-10`.  If that text has a `.` it
   is printed as is.
4. Otherwise (an integer-valued number printed without a point, e.g. f32 16777215 or
   f64 1234567.0) the value prints as hex bits, like a NaN: `0x4B7FFFFF`.

`parse_float_token` mirrors how `cuda-tile-opt` reads a float element
(`Parser::parseFloatFromLiteral`): a decimal literal is first read as an f64 (correctly
rounded, overflow to inf) and then converted to the format (so it rounds twice, exactly
as MLIR does); a hex literal `0x...` gives the raw bits and must fit the format's bit
width; a decimal integer is an error.
"""

from __future__ import annotations

import math
import re
import struct

from .types import FLOAT_FORMATS

__all__ = [
    "DECIMAL_INT_FOR_FLOAT",
    "DECIMAL_INT_FOR_FLOAT_NOTE",
    "bits_to_float",
    "canonical_nan",
    "float_to_bits",
    "format_float",
    "integer_in_range",
    "is_inf",
    "is_nan",
    "parse_float_literal",
    "parse_float_token",
    "parse_integer_literal",
    "wrap_signed",
    "wrap_unsigned",
]

# MLIR's diagnostics for float literals (mlir/lib/AsmParser/Parser.cpp).
DECIMAL_INT_FOR_FLOAT = "unexpected decimal integer literal for a floating point value"
DECIMAL_INT_FOR_FLOAT_NOTE = "add a trailing dot to make the literal a float"
HEX_FLOAT_LEADING_MINUS = "hexadecimal float literal should not have a leading minus"
HEX_FLOAT_OUT_OF_RANGE = "hexadecimal float constant out of range for type"
EXPECTED_FLOAT_LITERAL = "expected floating point literal"


class _Spec:
    """The derived constants of one format (APFloat's fltSemantics, in bits)."""

    __slots__ = (
        "name",
        "width",
        "ebits",
        "mbits",
        "bias",
        "precision",
        "emin",
        "emax",
        "sign_bit",
        "emask",
        "mmask",
        "has_sign",
        "has_inf",
        "nan",
        "all_ones_top",
        "inf_bits",
        "nan_bits",
        "max_bits",
    )

    def __init__(self, name: str) -> None:
        f = FLOAT_FORMATS[name]
        self.name = name
        self.width = f.width
        self.ebits = f.exponent_bits
        self.mbits = f.mantissa_bits
        self.bias = f.bias
        self.precision = f.mantissa_bits + 1
        self.has_sign = f.has_sign
        self.has_inf = f.has_infinity
        self.nan = f.nan
        self.sign_bit = (1 << (f.width - 1)) if f.has_sign else 0
        self.emask = (1 << f.exponent_bits) - 1
        self.mmask = (1 << f.mantissa_bits) - 1
        top = self.emask  # the all-ones biased exponent
        # With no mantissa bits (f8E8M0FNU) biased exponent 0 is a normal number.
        self.emin = -f.bias if f.mantissa_bits == 0 else 1 - f.bias
        if f.nan == "ieee" or (f.nan == "all_ones" and f.mantissa_bits == 0):
            self.emax = top - 1 - f.bias  # the all-ones exponent is inf/NaN only
        else:
            self.emax = top - f.bias  # f8E4M3FN, f4E2M1FN use the top binade
        # f8E4M3FN: the all-ones mantissa in the top binade is the NaN.
        self.all_ones_top = f.nan == "all_ones" and f.mantissa_bits > 0
        self.inf_bits = (top << f.mantissa_bits) if f.has_infinity else None
        if f.nan == "ieee":
            self.nan_bits: int = (top << f.mantissa_bits) | (1 << (f.mantissa_bits - 1))
        elif f.nan == "all_ones":
            self.nan_bits = (1 << (f.width - 1 if f.has_sign else f.width)) - 1
        else:
            self.nan_bits = self.sign_bit  # no NaN: -0, as ml_dtypes does
        self.max_bits = (
            ((top << f.mantissa_bits) | self.mmask)
            if f.nan == "none"
            else ((top << f.mantissa_bits) | (self.mmask - 1))
            if self.all_ones_top
            else ((top - 1) << f.mantissa_bits) | self.mmask
        )


_SPECS: dict[str, _Spec] = {}


def _spec(fmt_name: str) -> _Spec:
    s = _SPECS.get(fmt_name)
    if s is None:
        if fmt_name not in FLOAT_FORMATS:
            raise ValueError(f"unknown float format {fmt_name!r}")
        s = _SPECS[fmt_name] = _Spec(fmt_name)
    return s


# ---- encoding ---------------------------------------------------------------------


def _zero(neg: bool, s: _Spec) -> int:
    if s.mbits == 0:  # f8E8M0FNU has no zero: APFloat makes the smallest normal
        return 0
    return s.sign_bit if neg else 0


def _overflow(neg: bool, s: _Spec) -> int:
    sign = s.sign_bit if neg else 0
    if s.inf_bits is not None:
        return s.inf_bits | sign
    if s.nan == "all_ones":
        return s.nan_bits | sign
    return s.max_bits | sign  # finite-only: saturate


def _encode_ratio(neg: bool, num: int, den: int, s: _Spec) -> int:
    """Round the positive rational num/den (with sign `neg`) into format `s`."""
    if not s.has_sign and neg:
        return s.nan_bits
    p = s.precision
    # e = floor(log2(num / den))
    e = num.bit_length() - den.bit_length()
    if e >= 0:
        if num < (den << e):
            e -= 1
    elif (num << -e) < den:
        e -= 1
    if e < s.emin:
        e = s.emin
    shift = p - 1 - e  # the significand is num/den * 2^shift
    if shift >= 0:
        d = den
        q, r = divmod(num << shift, d)
    else:
        d = den << -shift
        q, r = divmod(num, d)
    r2 = r << 1
    if r2 > d or (r2 == d and q & 1):
        q += 1
        if q >> p:  # carried into a new binade
            q >>= 1
            e += 1
    if e > s.emax or (s.all_ones_top and e == s.emax and q == (1 << p) - 1):
        return _overflow(neg, s)
    if q == 0:
        return _zero(neg, s)
    if q >> (p - 1):
        bits = ((e + s.bias) << s.mbits) | (q & s.mmask)
    else:  # subnormal (e == emin)
        bits = q
    return (s.sign_bit | bits) if neg else bits


def _encode_float(x: float, s: _Spec) -> int:
    if x != x:
        return s.nan_bits
    neg = math.copysign(1.0, x) < 0
    if x == 0.0:
        return _zero(neg, s)
    if math.isinf(x):
        if not s.has_sign and neg:
            return s.nan_bits
        return _overflow(neg, s)
    m, e = math.frexp(abs(x))
    sig = int(m * 9007199254740992.0)  # m * 2^53, exact
    e -= 53
    if e >= 0:
        return _encode_ratio(neg, sig << e, 1, s)
    return _encode_ratio(neg, sig, 1 << -e, s)


_F64 = struct.Struct("<d")
_U64 = struct.Struct("<Q")


def float_to_bits(value: float | str, fmt_name: str) -> int:
    """The bits of `value` in format `fmt_name`, rounded to nearest, ties to even.

    A string is read as a decimal number the way MLIR reads a float literal: first as
    an f64 (Python's `float`), then converted.  A Python int converts exactly, with one
    rounding.  Hex bit patterns are not accepted here (see `parse_float_literal`).
    Raises ValueError for a malformed string or an unknown format.
    """
    s = _spec(fmt_name)
    if isinstance(value, int):  # exact, one rounding (APFloat's convertFromAPInt)
        if value == 0:
            return 0  # +0 (f8E8M0FNU: its smallest value, also 0x00)
        return _encode_ratio(value < 0, abs(value), 1, s)
    if isinstance(value, str):
        text = value.strip()
        if not _LENIENT_DECIMAL_RE.fullmatch(text):
            raise ValueError(f"not a decimal float literal: {value!r}")
        value = float(text)
    x = float(value)
    if s.width == 64:
        if x != x:
            return s.nan_bits
        return _U64.unpack(_F64.pack(x))[0]
    return _encode_float(x, s)


def canonical_nan(fmt_name: str) -> int:
    """The format's canonical quiet NaN (for f4E2M1FN, which has none, 0x8)."""
    return _spec(fmt_name).nan_bits


# The padding values of a view (spec 003) as bits, for the formats that cannot encode all
# of them: those without an infinity saturate to their largest finite value; f8E8M0FNU has
# neither a sign nor a zero (0x00 is its smallest value, 2^-127).
_SPECIAL_PADDING: dict[str, dict[str, int]] = {
    "f8E4M3FN": {"zero": 0x00, "neg_zero": 0x80, "nan": 0x7F, "pos_inf": 0x7E, "neg_inf": 0xFE},
    "f8E8M0FNU": {"zero": 0x00, "neg_zero": 0x00, "nan": 0xFF, "pos_inf": 0xFE, "neg_inf": 0x00},
    "f4E2M1FN": {"zero": 0x0, "neg_zero": 0x8, "nan": 0x7, "pos_inf": 0x7, "neg_inf": 0xF},
}


def padding_bits(keyword: str | None, fmt_name: str | None) -> int:
    """The bits, as the element lies in memory, of what a load yields outside the tensor:
    the padding keyword's value (`zero`, `neg_zero`, `nan`, `pos_inf`, `neg_inf`) in float
    format `fmt_name`, or 0 with no padding or for an integer element (`fmt_name` None).
    NaN is the format's canonical quiet NaN; tf32 lies in memory as an f32."""
    if keyword is None or keyword == "zero" or fmt_name is None:
        return 0
    special = _SPECIAL_PADDING.get(fmt_name)
    if special is not None:
        return special[keyword]
    s = _spec("f32" if fmt_name == "tf32" else fmt_name)
    if keyword == "nan":
        return s.nan_bits
    if keyword == "neg_zero":
        return s.sign_bit
    inf = s.inf_bits if s.inf_bits is not None else s.max_bits
    return inf | (s.sign_bit if keyword == "neg_inf" else 0)


# ---- decoding ---------------------------------------------------------------------

# Kinds returned by _decompose.
_ZERO, _FINITE, _INF, _NAN = range(4)


def _decompose(bits: int, s: _Spec) -> tuple[int, bool, int, int]:
    """(kind, negative, significand, exponent): value = significand * 2^exponent."""
    bits &= (1 << s.width) - 1
    neg = bool(bits & s.sign_bit)
    biased = (bits >> s.mbits) & s.emask
    mant = bits & s.mmask
    if biased == s.emask:
        if s.nan == "ieee":
            return (_NAN if mant else _INF), neg, 0, 0
        if s.nan == "all_ones" and mant == s.mmask:
            return _NAN, neg, 0, 0
    if s.mbits == 0:  # f8E8M0FNU: 2^(e - bias), no zero
        return _FINITE, False, 1, biased - s.bias
    if biased == 0:
        if mant == 0:
            return _ZERO, neg, 0, 0
        return _FINITE, neg, mant, s.emin - s.mbits
    return _FINITE, neg, mant | (1 << s.mbits), biased - s.bias - s.mbits


def bits_to_float(bits: int, fmt_name: str) -> float:
    """The exact value of a bit pattern as a Python float (every format fits in f64)."""
    s = _spec(fmt_name)
    if s.width == 64:
        return _F64.unpack(_U64.pack(bits & 0xFFFFFFFFFFFFFFFF))[0]
    kind, neg, sig, exp = _decompose(bits, s)
    if kind == _FINITE:
        x = math.ldexp(float(sig), exp)
    elif kind == _ZERO:
        x = 0.0
    elif kind == _INF:
        x = math.inf
    else:
        x = math.nan
    return -x if neg else x


def is_nan(bits: int, fmt_name: str) -> bool:
    return _decompose(bits, _spec(fmt_name))[0] == _NAN


def is_inf(bits: int, fmt_name: str) -> bool:
    return _decompose(bits, _spec(fmt_name))[0] == _INF


# ---- printing (APFloat::toString and MLIR's printFloatValue) ------------------------


def _apfloat_to_string(
    neg: bool,
    sig: int,
    exp: int,
    sem_precision: int,
    precision: int,
    max_padding: int,
    truncate_zero: bool,
) -> str:
    """A port of APFloat's toStringImpl for a finite non-zero sig * 2^exp."""
    out = "-" if neg else ""
    if precision == 0:
        precision = 2 + sem_precision * 59 // 196
    tz = (sig & -sig).bit_length() - 1  # drop trailing binary zeros
    sig >>= tz
    exp += tz
    if exp > 0:
        sig <<= exp
        exp = 0
    elif exp < 0:
        sig *= 5**-exp
    # AdjustToPrecision on the integer: drop (truncate) digits known to be surplus.
    bits = sig.bit_length()
    bits_required = (precision * 196 + 58) // 59
    if bits > bits_required:
        tens = (bits - bits_required) * 59 // 196
        if tens:
            exp += tens
            sig //= 10**tens
    digits = str(sig)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    digits = stripped
    # AdjustToPrecision on the digits: round half up to `precision` digits.
    n = len(digits)
    if n > precision:
        if digits[precision] < "5":
            kept = digits[:precision].rstrip("0")
            exp += n - len(kept)
            digits = kept
        else:
            i = precision - 1
            while i >= 0 and digits[i] == "9":
                i -= 1
            if i < 0:
                exp += n
                digits = "1"
            else:
                exp += n - (i + 1)
                digits = digits[:i] + chr(ord(digits[i]) + 1)
    nd = len(digits)
    if max_padding == 0:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or nd + exp > precision
    else:
        msd = exp + nd - 1
        scientific = msd < 0 and -msd > max_padding
    if scientific:
        exp += nd - 1
        text = digits[0] + "."
        if nd == 1 and truncate_zero:
            text += "0"
        else:
            text += digits[1:]
        if not truncate_zero and precision > nd - 1:
            text += "0" * (precision - nd + 1)
        text += "E" if truncate_zero else "e"
        text += "+" if exp >= 0 else "-"
        exp_text = str(abs(exp))
        if not truncate_zero and len(exp_text) < 2:
            exp_text = "0" + exp_text
        return out + text + exp_text
    if exp >= 0:
        return out + digits + "0" * exp
    whole = exp + nd
    if whole > 0:
        return out + digits[:whole] + "." + digits[whole:]
    return out + "0." + "0" * -whole + digits


_DECIMAL_RE = re.compile(r"([-+]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([-+]?[0-9]+))?")


def _decimal_to_bits(text: str, s: _Spec) -> int | None:
    """Parse a decimal string directly into the format, correctly rounded (APFloat's
    convertFromString), with integer arithmetic.  For the printer's round-trip test."""
    m = _DECIMAL_RE.fullmatch(text)
    if not m or not (m.group(2) or m.group(3)):
        return None
    neg = m.group(1) == "-"
    frac = m.group(3) or ""
    mantissa = int((m.group(2) or "") + frac or "0")
    exp10 = int(m.group(4) or 0) - len(frac)
    if mantissa == 0:
        return _zero(neg, s)
    if exp10 >= 0:
        return _encode_ratio(neg, mantissa * 10**exp10, 1, s)
    return _encode_ratio(neg, mantissa, 10**-exp10, s)


def _hex(bits: int, s: _Spec) -> str:
    return f"0x{bits & ((1 << s.width) - 1):X}"


def format_float(bits: int, fmt_name: str) -> str:
    """A float value as MLIR prints it (see the module docstring for the rules)."""
    s = _spec(fmt_name)
    bits &= (1 << s.width) - 1
    kind, neg, sig, exp = _decompose(bits, s)
    if kind == _ZERO:
        return "-0.000000e+00" if neg else "0.000000e+00"
    if kind != _FINITE:
        return _hex(bits, s)
    text = _apfloat_to_string(neg, sig, exp, s.precision, 6, 0, False)
    if _decimal_to_bits(text, s) == bits:
        return text
    text = _apfloat_to_string(neg, sig, exp, s.precision, 0, 3, True)
    if "." in text:
        return text
    return _hex(bits, s)


# ---- parsing ----------------------------------------------------------------------

# MLIR's float literal token: [0-9]+ '.' [0-9]* ([eE] [-+]? [0-9]+)?
_MLIR_FLOAT_RE = re.compile(r"[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?")
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+")
_DEC_INT_RE = re.compile(r"[0-9]+")
_LENIENT_DECIMAL_RE = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _split_minus(text: str) -> tuple[bool, str]:
    text = text.strip()
    if text.startswith("-"):
        return True, text[1:].lstrip()
    return False, text


def parse_float_token(text: str, fmt_name: str) -> tuple[int | None, str | None]:
    """Read one float element as `cuda-tile-opt` does: (bits, None) or (None, error).

    Accepted: an optional `-` and an MLIR float literal (`1.5`, `2.`, `-2.0e-3`), read
    as f64 then rounded to the format; or a hex literal `0x3C00` giving the raw bits.
    The error texts are MLIR's: a decimal integer gives DECIMAL_INT_FOR_FLOAT (MLIR
    attaches the note DECIMAL_INT_FOR_FLOAT_NOTE), `-0x..` a leading-minus error, hex
    wider than the format "hexadecimal float constant out of range for type", anything
    else "expected floating point literal".
    """
    s = _spec(fmt_name)
    neg, body = _split_minus(text)
    if _MLIR_FLOAT_RE.fullmatch(body):
        x = float(body)
        return float_to_bits(-x if neg else x, fmt_name), None
    if _HEX_RE.fullmatch(body):
        if neg:
            return None, HEX_FLOAT_LEADING_MINUS
        value = int(body[2:], 16)
        if value.bit_length() > s.width:
            return None, HEX_FLOAT_OUT_OF_RANGE
        return value, None
    if _DEC_INT_RE.fullmatch(body):
        return None, DECIMAL_INT_FOR_FLOAT
    return None, EXPECTED_FLOAT_LITERAL


def parse_float_literal(text: str, fmt_name: str) -> int | None:
    """Bits of a float written in text, or None if malformed or too wide.

    Lenient: besides what MLIR accepts (`1.5`, `-2.0e-3`, hex bits `0x7C00`) this takes
    decimal forms MLIR rejects (`2`, `1e10`, `+1.5`, `.5`).  Use `parse_float_token` to
    get MLIR's verdict and error message.
    """
    s = _spec(fmt_name)
    neg, body = _split_minus(text)
    if _HEX_RE.fullmatch(body):
        if neg:
            return None
        value = int(body[2:], 16)
        return value if value.bit_length() <= s.width else None
    if not _LENIENT_DECIMAL_RE.fullmatch(body) or (neg and body[0] in "+-"):
        return None
    x = float(body)
    return float_to_bits(-x if neg else x, fmt_name)


_INT_RE = re.compile(r"(-?)\s*(0x[0-9a-fA-F]+|[0-9]+)")


# Decimal digits past which no type's value lies (i128's bounds have 39). Python refuses
# int(str) past 4300 digits (its guard against quadratic conversion), so longer literals get
# a stand-in value that is out of every range just the same.
_LONGEST_DECIMAL = 400


def decimal_value(digits: str) -> int:
    """The value of a string of decimal digits (leading zeros allowed), or, for one too long
    to be any type's value, 10^400: out of range wherever it is checked, like the literal."""
    if len(digits) > _LONGEST_DECIMAL:
        digits = digits.lstrip("0") or "0"
        if len(digits) > _LONGEST_DECIMAL:
            return 10**_LONGEST_DECIMAL
    return int(digits, 10)


def parse_integer_literal(text: str) -> int | None:
    """An MLIR integer literal: decimal or `0x` hex, an optional `-`; `true`/`false`
    read as 1/0 (as `parseInteger` does).  None if malformed."""
    text = text.strip()
    if text == "true":
        return 1
    if text == "false":
        return 0
    m = _INT_RE.fullmatch(text)
    if not m:
        return None
    digits = m.group(2)
    value = int(digits[2:], 16) if digits.startswith("0x") else decimal_value(digits)
    return -value if m.group(1) else value


def integer_in_range(value: int, width: int) -> bool:
    """Whether `value` fits a signless iN, read as signed or as unsigned:
    -2^(N-1) <= value <= 2^N - 1 (so `0xFFFF` and `-1` are both an i16 -1; i1 takes
    -1, 0 and 1)."""
    return -(1 << (width - 1)) <= value <= (1 << width) - 1


def wrap_signed(value: int, width: int) -> int:
    """`value` modulo 2^width, as a signed integer (i8 255 -> -1; i1 1 -> -1)."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def wrap_unsigned(value: int, width: int) -> int:
    """`value` modulo 2^width, as an unsigned integer (i8 -1 -> 255)."""
    return value & ((1 << width) - 1)
