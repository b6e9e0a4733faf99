"""Kernel arguments written on the command line (`tileir run --arg SPEC`), the summary
printed after a run, and `--check` (a Python expression, NumPy at hand, the result must match;
evaluated with the user's rights: it is no sandbox).

SPEC is one of:

    FILE.npy                 an array saved by NumPy (`--save` writes these)
    FILE.npy:DTYPE           ... converted to DTYPE (raw-byte files, as NumPy saves bf16 and
                             the f8 types, are reinterpreted as DTYPE instead)
    zeros:SHAPE:DTYPE        zeros
    ones:SHAPE:DTYPE         ones
    rand:SHAPE:DTYPE         random: floats uniform in [-1, 1), integers uniform in
                             [-100, 100), i1 0 or 1, f8E8M0FNU powers of two 2^-4..2^4
                             (seeded by --seed)
    arange:SHAPE:DTYPE       0, 1, 2, ... in row-major order, converted to DTYPE (integers
                             wrap to the width, floats round)
    42, -7, 0x10, 1.5, inf   a scalar (typed by the kernel parameter it goes to); true/false

SHAPE is `1024` or `64x64` (any rank); DTYPE is spelled as in the IR: f16 f32 f64 bf16
f8E4M3FN f8E5M2 f8E8M0FNU f4E2M1FN i1 i8 i16 i32 i64.
"""

from __future__ import annotations

import builtins
import math
import os
import re
import stat
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib import format as npy_format

from ..interp import dtypes

GENERATORS = ("zeros", "ones", "rand", "arange")


class SpecError(ValueError):
    """A SPEC (or --check expression) that cannot be used; `str()` is the one-line reason."""


@dataclass(frozen=True, slots=True)
class ArgSpec:
    text: str
    kind: str  # "npy", one of GENERATORS, "scalar"
    shape: tuple[int, ...] = ()
    dtype_name: str | None = None
    path: str | None = None
    value: int | float | bool | None = None

    @property
    def is_array(self) -> bool:
        return self.kind != "scalar"

    def make(self, rng: np.random.Generator) -> np.ndarray | int | float | bool:
        """The argument: a fresh array (or the scalar)."""
        if self.kind == "scalar":
            assert self.value is not None
            return self.value
        if self.kind == "npy":
            return self._load()
        dtype = _dtype(self.dtype_name or "")
        n = math.prod(self.shape)
        try:
            if self.kind == "zeros":
                return np.zeros(self.shape, dtype)
            if self.kind == "ones":
                return np.ones(self.shape, dtype)
            if self.kind == "arange":
                return _arange(self.shape, dtype)
            return _random(rng, self.shape, dtype)
        except MemoryError:
            raise SpecError(f"--arg '{self.text}': not enough memory for {n} elements") from None

    def placeholder(self) -> np.ndarray | int | float | bool:
        """What `make` gives, as far as a kernel's signature can tell: an array of the same
        shape and dtype that takes no memory (every element is one zero), or the scalar. A
        .npy file's header is read (and checked against the file's size), not its data. So
        the arguments can be checked against the kernel before gigabytes are made."""
        if self.kind == "scalar":
            assert self.value is not None
            return self.value
        if self.kind == "npy":
            shape, dtype = self._header()
            if self.dtype_name is not None:
                dtype = _dtype(self.dtype_name)
        else:
            shape, dtype = self.shape, _dtype(self.dtype_name or "")
        return np.broadcast_to(np.zeros((), dtype), shape)

    def _header(self) -> tuple[tuple[int, ...], np.dtype]:
        """(shape, dtype) of the .npy file, from its header; a SpecError when the file is not
        a regular .npy file, holds no numbers, or is shorter than its header says."""
        assert self.path is not None
        try:
            with open(self.path, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    # A device or a pipe: /dev/zero would never end, a FIFO could not be read twice.
                    raise SpecError(f"cannot read '{self.path}': not a regular file")
                size = os.fstat(f.fileno()).st_size
                version = npy_format.read_magic(f)
                if version == (1, 0):
                    shape, fortran, dtype = npy_format.read_array_header_1_0(f)
                else:
                    shape, fortran, dtype = npy_format.read_array_header_2_0(f)
                data_bytes = size - f.tell()
        except SpecError:
            raise
        except FileNotFoundError:
            raise SpecError(f"cannot read '{self.path}': No such file or directory") from None
        except IsADirectoryError:
            raise SpecError(f"cannot read '{self.path}': is a directory") from None
        except OSError as e:
            raise SpecError(f"cannot read '{self.path}': {e.strerror or e}") from None
        except (ValueError, EOFError, SyntaxError, TypeError) as e:
            raise SpecError(f"cannot read '{self.path}' as a .npy array: {_one_line(e)}") from None
        self._check_numbers(dtype)
        need = math.prod(shape) * dtype.itemsize
        if need > data_bytes:
            text = "x".join(str(d) for d in shape) or "scalar"
            raise SpecError(
                f"cannot read '{self.path}' as a .npy array: its header declares {text} {dtype} elements "
                f"({need} bytes) but only {max(data_bytes, 0)} bytes follow it"
            )
        return tuple(shape), dtype

    def _check_numbers(self, dtype: np.dtype) -> None:
        # Strings, dates, complex numbers, records: nothing a kernel parameter can take, and
        # converting them would fail (or silently drop an imaginary part).
        if dtype.kind not in "biuf" and not (dtype.kind == "V" and dtype.names is None):
            raise SpecError(f"'{self.path}' holds {dtype} elements, not real numbers a kernel can take")

    def _load(self) -> np.ndarray:
        assert self.path is not None
        self._header()  # before any allocation: a header may declare more than the file holds
        try:
            array = np.load(self.path, allow_pickle=False)
        except FileNotFoundError:
            raise SpecError(f"cannot read '{self.path}': No such file or directory") from None
        except IsADirectoryError:
            raise SpecError(f"cannot read '{self.path}': is a directory") from None
        except MemoryError:
            raise SpecError(f"cannot read '{self.path}': not enough memory for its array") from None
        except (OSError, ValueError, EOFError) as e:
            raise SpecError(f"cannot read '{self.path}' as a .npy array: {_one_line(e)}") from None
        if not isinstance(array, np.ndarray):
            raise SpecError(f"'{self.path}' holds several arrays (an .npz?); give one .npy file")
        self._check_numbers(array.dtype)
        if self.dtype_name is None:
            return array
        dtype = _dtype(self.dtype_name)
        if array.dtype.kind == "V":
            if array.dtype.itemsize != dtype.itemsize:
                raise SpecError(f"'{self.path}' holds {array.dtype.itemsize}-byte raw elements, not {self.dtype_name}")
            return array.view(dtype)
        try:
            return _convert(array, dtype)
        except MemoryError:
            raise SpecError(f"cannot convert '{self.path}' to {self.dtype_name}: not enough memory") from None


def _dtype(name: str) -> np.dtype:
    try:
        return dtypes.DTYPE_BY_NAME[name]
    except KeyError:
        known = " ".join(dtypes.DTYPE_BY_NAME)
        raise SpecError(f"unknown dtype '{name}' (one of: {known})") from None


def _convert(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        if dtype == np.bool_:
            return (values % 2).astype(np.bool_) if values.dtype.kind in "iu" else values.astype(np.bool_)
        if dtype.kind in "iu" and values.dtype.kind in "iu":
            return values.astype(dtype)  # wraps
        return values.astype(np.float64).astype(dtype) if dtype.kind not in "iu" else values.astype(dtype)


# Arrays are generated this many elements at a time, straight into an array of the target
# dtype: `rand:300000000:i8` must take 300 MB, not the 2.4 GB of an int64 or float64 draw.
_CHUNK = 1 << 18


def _chunked(shape: tuple[int, ...], dtype: np.dtype, fill: Any) -> np.ndarray:
    """An array of `shape` and `dtype` whose flat elements [a, b) are `fill(a, b)`, chunk by chunk."""
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)  # a view: `out` is contiguous
    for start in range(0, flat.size, _CHUNK):
        stop = min(start + _CHUNK, flat.size)
        flat[start:stop] = fill(start, stop)
    return out


def _arange(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _chunked(shape, dtype, lambda a, b: _convert(np.arange(a, b, dtype=np.int64), dtype))


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_ or dtype.kind in "iu":
        low, high = (0, 2) if dtype == np.bool_ else (-100, 100)
        return rng.integers(low, high, size=shape, dtype=dtype)  # drawn in the dtype itself
    if dtype.name == "float8_e8m0fnu":  # powers of two only: no zero, no sign
        return _chunked(shape, dtype, lambda a, b: np.exp2(rng.integers(-4, 5, size=b - a).astype(np.float32)))
    if dtype == np.float64:
        return _chunked(shape, dtype, lambda a, b: rng.uniform(-1.0, 1.0, size=b - a))

    def uniform(a: int, b: int) -> np.ndarray:
        # 2x - 1 of a float32 in [0, 1) is exact, so the values are uniform in [-1, 1).
        x = rng.random(b - a, dtype=np.float32)
        x *= 2
        x -= 1
        return x

    return _chunked(shape, dtype, uniform)


_SHAPE = re.compile(r"^\d+(x\d+)*$")
# The most bytes one generated argument may take (64 GiB): a bigger SHAPE is a typo, and is
# refused when the SPEC is read rather than when the allocation fails.
MAX_ARG_BYTES = 1 << 36


def _shape(text: str, spec: str) -> tuple[int, ...]:
    if not _SHAPE.match(text):
        raise SpecError(f"--arg '{spec}': bad shape '{text}' (write it like 1024 or 64x64)")
    digits = [d.lstrip("0") or "0" for d in text.split("x")]
    if any(len(d) > 12 for d in digits):  # past any size, and before int() meets a 5000-digit string
        raise SpecError(f"--arg '{_short(spec)}': shape '{_short(text)}' is too large")
    return tuple(int(d) for d in digits)


def _check_size(spec: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
    # Zero extents are left out: NumPy refuses 0x10^20 too (its size check skips zeros).
    nbytes = math.prod(d for d in shape if d) * max(dtype.itemsize, 1)
    if nbytes > MAX_ARG_BYTES:
        raise SpecError(
            f"--arg '{spec}': {nbytes} bytes is too large (an argument may take at most {MAX_ARG_BYTES >> 30} GiB)"
        )


def _short(text: str) -> str:
    return text if len(text) <= 60 else f"{text[:40]}...({len(text)} characters)"


def parse_spec(text: str) -> ArgSpec:
    """One --arg value; raises SpecError with a one-line reason."""
    s = text.strip()
    if not s:
        raise SpecError("--arg '': empty argument")
    head, sep, rest = s.partition(":")
    if sep and head in GENERATORS:
        parts = rest.split(":")
        if len(parts) != 2:
            raise SpecError(f"--arg '{text}': expected {head}:SHAPE:DTYPE, e.g. {head}:1024:f32")
        shape = _shape(parts[0], text)
        _check_size(text, shape, _dtype(parts[1]))
        return ArgSpec(text, head, shape, parts[1])
    m = re.match(r"^(.*\.npy)(?::([A-Za-z0-9]+))?$", s, re.IGNORECASE)
    if m:
        if m.group(2) is not None:
            _dtype(m.group(2))
        return ArgSpec(text, "npy", path=m.group(1), dtype_name=m.group(2))
    lowered = s.lower()
    if lowered in ("true", "false"):
        return ArgSpec(text, "scalar", value=lowered == "true")
    try:
        # 0x.., 0o.., 0b.. and decimals; a decimal with leading zeros (`007`) is decimal.
        value = int(s, 10) if re.fullmatch(r"[+-]?\d+", s) else int(s, 0)
        return ArgSpec(text, "scalar", value=value)
    except ValueError:
        pass
    try:
        return ArgSpec(text, "scalar", value=float(s))
    except ValueError:
        pass
    raise SpecError(f"--arg '{text}': expected a .npy file, zeros|ones|rand|arange:SHAPE:DTYPE, or a number")


def parse_grid(text: str) -> tuple[int, ...]:
    """`--grid 8`, `8,4`, `8,4,2` (or `8x4x2`)."""
    parts = re.split(r"[,x]", text.strip())
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        raise SpecError(f"--grid '{text}': expected X[,Y[,Z]] with positive integers") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise SpecError(f"--grid '{text}': expected 1 to 3 positive integers, X[,Y[,Z]]")
    return dims


# --------------------------------------------------------------------------------------------
# The summary after a run


def dtype_label(dtype: np.dtype) -> str:
    name = dtypes.ir_name_of_dtype(dtype)
    return name if name is not None else str(dtype)


def summarize(array: np.ndarray) -> str:
    """`f32[64x64]  min -0.99 max 0.98 mean 0.0012 sum 4.9  crc32 1a2b3c4d` (NaNs counted apart)."""
    shape = "x".join(str(n) for n in array.shape) or "scalar"
    text = f"{dtype_label(array.dtype)}[{shape}]"
    if array.size:
        values = array.astype(np.float64) if array.dtype.kind not in "iub" else array.astype(np.int64)
        finite = values[np.isfinite(values)] if values.dtype.kind == "f" else values.reshape(-1)
        nans = int(np.isnan(values).sum()) if values.dtype.kind == "f" else 0
        if finite.size:
            text += (
                f"  min {_num(finite.min())}  max {_num(finite.max())}"
                f"  mean {_num(finite.mean())}  sum {_num(finite.sum())}"
            )
        infs = int(np.isinf(values).sum()) if values.dtype.kind == "f" else 0
        if nans:
            text += f"  nan {nans}"
        if infs:
            text += f"  inf {infs}"
    crc = zlib.crc32(np.ascontiguousarray(array).view(np.uint8).reshape(-1).data) if array.size else 0
    return text + f"  crc32 {crc:08x}"


def _num(v: Any) -> str:
    if isinstance(v, (np.integer, int)):
        return str(int(v))
    return f"{float(v):.6g}"


# --------------------------------------------------------------------------------------------
# --check


# Default tolerances by result dtype (rtol, atol): a few units in the last place of the
# type, so that a different but correct order of rounding (a sum, a matmul) passes.
TOLERANCES: dict[str, tuple[float, float]] = {
    "f64": (1e-12, 1e-14),
    "f32": (1e-5, 1e-6),
    "f16": (2e-3, 1e-3),
    "bf16": (1.6e-2, 1e-2),
    "f8E4M3FN": (0.25, 0.05),
    "f8E5M2": (0.5, 0.1),
    "f8E8M0FNU": (1.0, 0.0),
    "f4E2M1FN": (0.5, 0.5),
}


def default_tolerance(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing a result of `dtype` (integers and i1: exact)."""
    return TOLERANCES.get(dtype_label(dtype), (0.0, 0.0))


@dataclass(frozen=True, slots=True)
class Check:
    text: str
    target: int  # the --arg index whose value after the run is checked
    expression: str


def parse_check(text: str) -> Check:
    """`arg2 = arg0 + arg1`: argument 2 after the run must equal the expression, evaluated
    with NumPy on the arguments as they were before the run. The expression is compiled
    here, so that a syntax error is reported before the kernel runs."""
    m = re.match(r"^\s*arg(\d+)\s*==?\s*(.+?)\s*$", text, re.DOTALL)
    if not m:
        raise SpecError(f"--check '{text}': expected 'argN = EXPRESSION', e.g. 'arg2 = arg0 + arg1'")
    check = Check(text, int(m.group(1)), m.group(2))
    _compile(check)
    return check


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _compile(check: Check) -> Any:
    try:
        return compile(check.expression, "<--check>", "eval")
    except SyntaxError as e:
        where = f" (column {e.offset} of the expression)" if e.offset else ""
        raise SpecError(f"--check '{_one_line(check.text)}': not a Python expression: {e.msg}{where}") from None
    except ValueError as e:  # a NUL byte in the text
        raise SpecError(f"--check '{_one_line(check.text)}': not a Python expression: {_one_line(e)}") from None


@dataclass(slots=True)
class CheckResult:
    ok: bool
    message: str
    # What the expression gave, broadcast to the result's shape (the notebook draws it beside
    # the result); None when the comparison did not get that far.
    expected: np.ndarray | None = None


def run_check(check: Check, before: list[Any], after: list[Any], rtol: float | None, atol: float | None) -> CheckResult:
    """Compare `after[check.target]` with the expression evaluated on `before`."""
    what = f"--check '{_one_line(check.text)}'"
    if not 0 <= check.target < len(after):
        raise SpecError(f"{what}: there is no arg{check.target} (there are {len(after)} --arg values)")
    actual = after[check.target]
    if not isinstance(actual, np.ndarray):
        raise SpecError(f"{what}: arg{check.target} is a scalar; only arrays change in a run")
    import ml_dtypes

    code = _compile(check)
    # The expression is Python, evaluated with the rights of whoever runs it (as a notebook
    # cell is): this is no sandbox and does not pretend to be one. One namespace serves as
    # both globals and locals, so that lambdas and comprehensions see argN and np.
    namespace: dict[str, Any] = {"__builtins__": builtins, "np": np, "numpy": np, "ml_dtypes": ml_dtypes}
    namespace.update((f"arg{i}", v) for i, v in enumerate(before))
    try:
        with np.errstate(all="ignore"):
            expected = eval(code, namespace)  # noqa: S307 - the user's own expression, documented as Python
        expected = np.asarray(expected)
        if expected.dtype.kind in "OUSMmc":  # objects, text, dates, complex: nothing to compare with
            first = expected.reshape(-1)[0] if expected.size else None
            kind = "complex numbers" if expected.dtype.kind == "c" else f"a {type(first).__name__}"
            raise TypeError(f"it gives {kind}, not real numbers")
        expected = np.broadcast_to(expected, actual.shape)
    except Exception as e:  # noqa: BLE001 - any failure of the user's expression is reported in one line
        raise SpecError(f"{what}: cannot evaluate the expression: {type(e).__name__}: {_one_line(e)}") from None
    default_rtol, default_atol = default_tolerance(actual.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    exact = actual.dtype.kind in "iub"
    if exact:
        a = actual.astype(np.int64)
        e = expected.astype(np.int64) if expected.dtype.kind in "iub" else expected.astype(np.float64)
        bad = a != e
        err_abs = np.abs(a.astype(np.float64) - e.astype(np.float64))
    else:
        a = actual.astype(np.float64)
        with np.errstate(all="ignore"):
            e = expected.astype(np.float64)
            err_abs = np.abs(a - e)
            same_special = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & (a == e))
            bad = ~(same_special | (err_abs <= atol + rtol * np.abs(e)))
    count = int(bad.sum())
    finite = err_abs[np.isfinite(err_abs)]
    worst = float(finite.max()) if finite.size else 0.0
    tol = "exact" if exact else f"rtol {rtol:g}, atol {atol:g}"
    if not exact:  # the largest error is over finite differences: say what it leaves out
        one_nan = int((bad & (np.isnan(a) != np.isnan(e))).sum())
        if one_nan:
            tol += f"; {one_nan} of them NaN on one side only"
    name = f"arg{check.target}"
    if not count:
        return CheckResult(
            True,
            f"check {name} = {check.expression}: ok ({actual.size} elements, max abs error {worst:.3g}; {tol})",
            expected,
        )
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    index = first if len(first) != 1 else first[0]
    return CheckResult(
        False,
        f"check {name} = {check.expression}: FAILED: {count} of {actual.size} elements differ ({tol}); "
        f"first at {name}[{index}]: got {_num(a[first])}, expected {_num(e[first])}; max abs error {worst:.3g}",
        expected,
    )


__all__ = [
    "ArgSpec",
    "Check",
    "CheckResult",
    "SpecError",
    "default_tolerance",
    "parse_check",
    "parse_grid",
    "parse_spec",
    "run_check",
    "summarize",
]
