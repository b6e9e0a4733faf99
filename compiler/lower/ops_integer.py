"""Integer arithmetic, bitwise ops, shifts and comparisons. Every op is exact (bitwise equal
to the CPU interpreter, `compiler/interp/ops_integer.py`) on every width, i1 included, in
Triton's compiler and in Triton 3.6's interpreter alike.

Representation. A signless iN tile is a Triton tensor of tl.intN holding the two's-complement
pattern (i1: tl.int1). Ops that read their operands as unsigned reinterpret them with
`.to(tl.uintN, bitcast=True)` (free) and reinterpret the result back. Operands of one op always
have one Triton type (Tile IR requires it), so Triton's integer promotion never widens; Python
literals in arithmetic and comparisons take the tensor's type, and where a `tl` function would
not do that (`tl.minimum`), the constant is a typed `tl.full`.

    addi subi muli  `a + b`, `a - b`, `a * b`: wrap modulo 2**N (no nsw/nuw flags reach LLVM:
                    the build disables Triton's overflow sanitizer). The overflow flags are
                    promises to the compiler, so wrapping is a correct reading of them.
    mulhii          unsigned high half. i8/i16: the product of the zero-extended operands in
                    uint32, shifted. i32/i64: `tl.umulhi` on the uint reinterpretation
                    (mul.hi.u32 / mul.hi.u64). Triton 3.6's interpreter gets umulhi wrong for
                    *signed* operands (it sign-extends); the unsigned operands avoid that.
    divi            Triton's `//` on integers is C's truncating division (arith.divsi/divui;
                    the 3.6 interpreter computes (a - fmod(a, b)) // b, also truncating).
                    rounding<negative_inf>/<positive_inf> correct the truncated quotient q by
                    one where the remainder r = a - q*b is nonzero and (floor) the signs of r
                    and b differ / (ceil) agree; unsigned: ceil adds (r != 0), floor = trunc.
    remi            signed: `a % b` (LLVM srem = C's truncated remainder = the interpreter's
                    fmod), with b = -1 replaced by 1: x rem -1 is 0 in Tile IR while srem of
                    MIN by -1 is undefined in LLVM. Unsigned: `%` on the uint reading.
    absi negi       `tl.where(a < 0, -a, a)` and `-a` (= 0 - a): |MIN| and -MIN wrap to MIN.
                    Not tl.abs: LLVM may read its llvm.abs as "MIN is poison"; the select is
                    recognised as llvm.abs(x, false) anyway (abs.s32 in the PTX).
    maxi mini       tl.maximum/tl.minimum on the signed or the uint reading.
    andi ori xori   `&`, `|`, `^`.
    shli shri       the amount is read as unsigned. Amounts >= N are not defined by the op
                    reference; the interpreter follows the hardware's clamping shifts (shli and
                    unsigned shri give 0, signed shri fills with the sign), and so does this
                    lowering: LLVM makes a shift by >= N poison, so the amount is clamped to
                    N-1 (tl.minimum on the uint reading) and the lanes whose amount was >= N
                    are zeroed with `tl.where` (signed shri needs no where: a shift by N-1
                    already fills every bit with the sign). shli and unsigned shri shift the
                    uint reading (`>>` on tl.uintN is logical); signed shri is `>>` on tl.intN
                    (arithmetic). PTX: min.u32, shl.b32/shr.u32/shr.s32, selp.
    cmpi            `==`/`!=` directly; ordered predicates on the signed or uint reading.
                    Its result (and cmpf's) passes `i1_result`: Triton 3.6's interpreter
                    types a comparison's result as its operands (a uint32 tensor of bools
                    after an unsigned compare), and an op joining two such results of
                    different types (`tl.join` for a cat, `tl.where` for a select) fails
                    there; a select of True/False makes it an int1, which the GPU compiler
                    folds away.

i1. Triton's arithmetic on tl.int1 is LLVM's i1 arithmetic on the GPU but NumPy's bool
arithmetic in the interpreter (`True + True` is True there), so i1 ops are written as logic:
addi/subi = xor, muli = and, mulhii = 0, divi = lhs (the divisor must be 1 / -1 and
MIN / -1 is undefined), remi = 0, absi = negi = identity, signed max = and / min = or
(true is -1), unsigned max = or / min = and, shli and unsigned shri = lhs & ~rhs (any
nonzero amount shifts the bit out), signed shri = lhs, and ordered comparisons compare the
0/1 readings in int8 (signed: operands swapped, since true is -1 < 0).

Division by zero and signed MIN / -1 are undefined in Tile IR: whatever the GPU computes (not
tested). Neither Triton's compiler nor its interpreter needs a known-defect workaround here
beyond the unsigned umulhi operands and the i1 logic above.
"""

from __future__ import annotations

from . import tltypes
from .codegen import OpEmit
from .registry import emitter


def _width(e: OpEmit) -> int:
    return tltypes.int_width(e.result_types[0] if e.result_types else e.operand_types[0])


def _signed(e: OpEmit) -> bool:
    return e.keyword("signedness") == "signed"


def _hint(e: OpEmit, suffix: str) -> str:
    return e.tmp(f"{e.op.results[0].name or 'v'}_{suffix}")


def _unsigned(e: OpEmit, x: str) -> str:
    """The uint reinterpretation of an operand of the op's integer type."""
    return f"{x}.to({tltypes.unsigned_dtype(e.operand_types[0])}, bitcast=True)"


def _zeros(e: OpEmit) -> str:
    """A tile of zeros of the result type (not tl.zeros_like: Triton 3.6's interpreter cannot
    call the jitted helpers of triton.language.standard)."""
    t = e.result_types[0]
    shape = e.shape(t)
    text = f"({shape[0]},)" if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"
    return f"tl.full({text}, 0, {e.dtype(t)})"


def _atom(x: str) -> str:
    """`x` parenthesized unless it has no operator outside parentheses (a name, a call, a
    method chain), so that a method applied to it applies to all of it."""
    depth = 0
    for ch in x:
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and not (ch.isalnum() or ch in "_.()"):
            return f"({x})"
    return x


def _back(e: OpEmit, x: str) -> str:
    """A uint result reinterpreted as the op's (signed-held) result type."""
    return f"{_atom(x)}.to({e.dtype(e.result_types[0])}, bitcast=True)"


# -- add, sub, mul ---------------------------------------------------------------------------


@emitter("addi", "subi")
def _addi_subi(e: OpEmit) -> None:
    a, b = e.operands
    if _width(e) == 1:
        e.assign(f"{a} ^ {b}")  # modulo 2, a + b = a - b = a xor b
    else:
        e.assign(f"{a} {'+' if e.op.mnemonic == 'addi' else '-'} {b}")


@emitter("muli")
def _muli(e: OpEmit) -> None:
    a, b = e.operands
    e.assign(f"{a} & {b}" if _width(e) == 1 else f"{a} * {b}")


@emitter("mulhii")
def _mulhii(e: OpEmit) -> None:
    a, b = e.operands
    w = _width(e)
    if w == 1:
        e.assign(_zeros(e))  # the product of two bits has no high bit
    elif w < 32:
        ua = f"{_unsigned(e, a)}.to(tl.uint32)"
        ub = f"{_unsigned(e, b)}.to(tl.uint32)"
        e.assign(_back(e, f"(({ua} * {ub}) >> {w}).to({tltypes.unsigned_dtype(e.result_types[0])})"))
    else:
        e.assign(_back(e, f"tl.umulhi({_unsigned(e, a)}, {_unsigned(e, b)})"))


# -- division --------------------------------------------------------------------------------


@emitter("divi")
def _divi(e: OpEmit) -> None:
    a, b = e.operands
    if _width(e) == 1:
        e.alias(a)  # the only defined divisor is 1 (unsigned) / -1 with a = 0 (signed)
        return
    mode = e.keyword("rounding", "zero") or "zero"
    dt = e.dtype(e.result_types[0])
    if _signed(e):
        if mode == "zero":
            e.assign(f"{a} // {b}")
            return
        q = _hint(e, "q")
        r = _hint(e, "r")
        e.line(f"{q} = {a} // {b}")
        e.line(f"{r} = {a} - {q} * {b}")
        # r has the sign of a: floor steps down where a/b < 0 is inexact, ceil up where a/b > 0 is.
        if mode == "negative_inf":
            e.assign(f"{q} - (({r} != 0) & (({r} ^ {b}) < 0)).to({dt})")
        else:
            e.assign(f"{q} + (({r} != 0) & (({r} ^ {b}) >= 0)).to({dt})")
        return
    udt = tltypes.unsigned_dtype(e.result_types[0])
    ua, ub = _unsigned(e, a), _unsigned(e, b)
    if mode != "positive_inf":  # floor and truncation agree on unsigned values
        e.assign(_back(e, f"{ua} // {ub}"))
        return
    xa, xb, q = _hint(e, "ua"), _hint(e, "ub"), _hint(e, "q")
    e.line(f"{xa} = {ua}")
    e.line(f"{xb} = {ub}")
    e.line(f"{q} = {xa} // {xb}")
    e.assign(_back(e, f"{q} + (({xa} - {q} * {xb}) != 0).to({udt})"))


@emitter("remi")
def _remi(e: OpEmit) -> None:
    a, b = e.operands
    if _width(e) == 1:
        e.assign(_zeros(e))  # x rem 1 = x rem -1 = 0
    elif _signed(e):
        e.assign(f"{a} % tl.where({b} == -1, 1, {b})")
    else:
        e.assign(_back(e, f"{_unsigned(e, a)} % {_unsigned(e, b)}"))


# -- bitwise and shifts ----------------------------------------------------------------------


@emitter("andi", "ori", "xori")
def _bitwise(e: OpEmit) -> None:
    a, b = e.operands
    e.assign(f"{a} {dict(andi='&', ori='|', xori='^')[e.op.mnemonic]} {b}")


def _clamped_amount(e: OpEmit, b: str, w: int) -> tuple[str, str]:
    """(the amount read as uint, that amount clamped to w - 1), as names of uint tensors."""
    udt = tltypes.unsigned_dtype(e.operand_types[1])
    s = _hint(e, "amount")
    c = _hint(e, "clamped")
    e.line(f"{s} = {b}.to({udt}, bitcast=True)")
    e.line(f"{c} = tl.minimum({s}, tl.full((), {w - 1}, {udt}))")
    return s, c


def _shift_in_32_bits(e: OpEmit, a: str, b: str, op: str) -> None:
    """An 8- or 16-bit shift done on 32 bits: `a` (read as the op's uint, or int for an
    arithmetic shift) widened, shifted by the amount clamped to 31 (an amount of 32 or more is
    undefined in LLVM) and cut back. Past the width it has shifted every bit out (or in, the
    sign), as Tile IR says, with no compare and select: two instructions an element (IMNMX,
    SHF), where the width-long form took seven on sm_80 (LLVM widens an i8 shift to 16 bits and
    clamps the amount again)."""
    udt = tltypes.unsigned_dtype(e.operand_types[1])
    amount = f"tl.minimum({b}.to({udt}, bitcast=True).to(tl.uint32), tl.full((), 31, tl.uint32))"
    if op == ">>" and _signed(e):
        e.assign(f"({a}.to(tl.int32) >> {amount}.to(tl.int32)).to({e.dtype(e.result_types[0])})")
    else:
        e.assign(_back(e, f"({_unsigned(e, a)}.to(tl.uint32) {op} {amount}).to({udt})"))


@emitter("shli")
def _shli(e: OpEmit) -> None:
    a, b = e.operands
    w = _width(e)
    if w == 1:
        e.assign(f"{a} & ~{b}")  # a shift by 1 (the only nonzero amount) moves the bit out
        return
    if w in (8, 16):
        _shift_in_32_bits(e, a, b, "<<")
        return
    s, c = _clamped_amount(e, b, w)
    e.assign(_back(e, f"tl.where({s} < {w}, {_unsigned(e, a)} << {c}, 0)"))


@emitter("shri")
def _shri(e: OpEmit) -> None:
    a, b = e.operands
    w = _width(e)
    signed = _signed(e)
    if w == 1:
        if signed:
            e.alias(a)  # the amount is clamped to 0
        else:
            e.assign(f"{a} & ~{b}")
        return
    if w in (8, 16):
        _shift_in_32_bits(e, a, b, ">>")
        return
    s, c = _clamped_amount(e, b, w)
    if signed:
        # Arithmetic (a signed left operand); by w - 1 it already gives 0 or -1.
        e.assign(f"{a} >> {c}.to({e.dtype(e.result_types[0])}, bitcast=True)")
    else:
        e.assign(_back(e, f"tl.where({s} < {w}, {_unsigned(e, a)} >> {c}, 0)"))


# -- max, min, neg, abs, cmp -----------------------------------------------------------------


@emitter("maxi", "mini")
def _max_min(e: OpEmit) -> None:
    a, b = e.operands
    is_max = e.op.mnemonic == "maxi"
    signed = _signed(e)
    if _width(e) == 1:
        # Signed, true (-1) is the smaller value; unsigned, true (1) is the larger.
        e.assign(f"{a} {'&' if is_max == signed else '|'} {b}")
        return
    fn = "tl.maximum" if is_max else "tl.minimum"
    if signed:
        e.assign(f"{fn}({a}, {b})")
    else:
        e.assign(_back(e, f"{fn}({_unsigned(e, a)}, {_unsigned(e, b)})"))


@emitter("negi")
def _negi(e: OpEmit) -> None:
    (a,) = e.operands
    if _width(e) == 1:
        e.alias(a)  # -x = x modulo 2
    else:
        e.assign(f"-{a}")


@emitter("absi")
def _absi(e: OpEmit) -> None:
    (a,) = e.operands
    if _width(e) == 1:
        e.alias(a)
    else:
        # Not tl.abs: LLVM's llvm.abs may treat |MIN| as poison; here it wraps to MIN, as in Tile IR.
        e.assign(f"tl.where({a} < 0, -{a}, {a})")


_CMP = {
    "equal": "==",
    "not_equal": "!=",
    "less_than": "<",
    "less_than_or_equal": "<=",
    "greater_than": ">",
    "greater_than_or_equal": ">=",
}


def i1_result(e: OpEmit, expr: str) -> str:
    """A comparison's result as a true int1 under Triton's interpreter (module doc)."""
    return f"{e.split_helper('_predicate', 'tl.where(x, True, False)')}({expr})"


@emitter("cmpi")
def _cmpi(e: OpEmit) -> None:
    a, b = e.operands
    predicate = e.keyword("comparison_predicate") or ""
    op = _CMP.get(predicate)
    if op is None:
        raise e.error(f"unknown comparison predicate {predicate!r}")
    w = tltypes.int_width(e.operand_types[0])
    if op in ("==", "!="):
        expr = f"{a} {op} {b}"
    elif w == 1:
        # The 0/1 readings in int8 are the unsigned values; signed, true is -1, which
        # reverses the order: compare with the operands swapped.
        x, y = (b, a) if _signed(e) else (a, b)
        expr = f"{x}.to(tl.int8) {op} {y}.to(tl.int8)"
    elif _signed(e):
        expr = f"{a} {op} {b}"
    else:
        expr = f"{_unsigned(e, a)} {op} {_unsigned(e, b)}"
    e.assign(i1_result(e, expr))
